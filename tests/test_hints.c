/* Compute hints (analyzer/hints.c) on hand-built timelines: fp32 math kernels by the libraries'
 * names (real names from the H200 traces of GPU run 25), a kernel storm, pageable copies against
 * pinned ones, and what must not trigger a hint. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hints.h"

static int checks, failed;
#define CHECK(c, ...)                                                                              \
  do {                                                                                             \
    checks++;                                                                                      \
    if (!(c)) {                                                                                    \
      failed++;                                                                                    \
      printf("%s:%d: %s: ", __FILE__, __LINE__, #c);                                               \
      printf(__VA_ARGS__);                                                                         \
      printf("\n");                                                                                \
    }                                                                                              \
  } while (0)

#define MAXS 64
static const char *names[MAXS];
static size_t nnames = 1;
static uint32_t S(const char *s) {
  for (size_t i = 1; i < nnames; i++)
    if (!strcmp(names[i], s)) return (uint32_t)i;
  names[nnames] = s;
  return (uint32_t)nnames++;
}
static const char *name_of(const void *ctx, size_t f, uint32_t id) {
  (void)ctx, (void)f;
  return id && id < nnames ? names[id] : "?";
}

static void kernel(struct trace_data *td, uint64_t s, uint64_t d, const char *n) {
  struct slk_record r = {.kind = SLK_KERNEL, .start = s, .end = s + d, .name = S(n)};
  trace_data_add(td, &r);
}
static void copy(struct trace_data *td, uint64_t s, uint64_t d, uint64_t bytes, int pinned) {
  struct slk_record r = {.kind = SLK_MEMCPY,
                         .start = s,
                         .end = s + d,
                         .bytes = bytes,
                         .copy_kind = 1,
                         .src_kind = (uint8_t)(pinned ? 2 : 1),
                         .dst_kind = 3};
  trace_data_add(td, &r);
}

static struct hints run(struct trace_data *td, const char *dev, uint64_t steps, uint64_t lo) {
  trace_data_sort(td);
  const struct trace_data *tds[1] = {td};
  const char *hosts[1] = {"h"};
  struct hints_input in = {.td = tds,
                           .name = name_of,
                           .hosts = hosts,
                           .n = 1,
                           .host = "h",
                           .device = 0,
                           .device_name = dev,
                           .t0 = 0,
                           .t1 = UINT64_MAX,
                           .steps = steps,
                           .launch_per_step_ns = lo};
  struct hints h;
  CHECK(hints_compute(&in, &h) == 0, "hints_compute failed");
  return h;
}

static const struct hint *find(const struct hints *h, const char *kind) {
  for (size_t i = 0; i < h->n; i++)
    if (!strcmp(h->v[i].kind, kind)) return &h->v[i];
  return NULL;
}

static void test_names(void) {
  /* fp32 without tensor cores (H200, GPU run 25: ResNet-50 with TF32 off; the eager MLP) */
  static const char *const fp32[] = {
      "sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw_tilesize128x128x8",
      "_ZN5cudnn6detail12dgrad_engineIfLi512ELi6ELi5ELi3ELi3ELi3ELb0EEEviiiPKT_iS4_iPS2_18kernel_"
      "grad_paramsyiyifiii",
      "_Z17wgrad_alg0_engineIfLi128ELi5ELi5ELi3ELi3ELi3ELb0ELi512EEviiiPKT_iPS0_S2_18kernel_"
      "grad_paramsyifiiii",
      "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma",
      "_Z23implicit_convolve_sgemmIffLi1024ELi5ELi5ELi3ELi3ELi3ELi1ELb0ELb0ELb1EEviiiPKT_iPT0_S2_"
      "18kernel_conv_paramsyiffiPKS3_S7_bbii",
      "ampere_sgemm_128x64_tn"};
  for (size_t i = 0; i < sizeof fp32 / sizeof fp32[0]; i++)
    CHECK(hints_is_fp32_math(fp32[i]), "%s not seen as fp32 math", fp32[i]);
  /* tensor cores already, or not math (the same step under bf16 autocast) */
  static const char *const not [] = {
      "sm90_xmma_wgrad_indexed_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x64",
      "_ZN7cutlass7Kernel2I63cutlass_80_tensorop_bf16_s16816gemm_bf16_256x128_64x3_nn_align2EE",
      "sm80_xmma_gemm_tf32f32_tf32f32_f32_nn_n_tilesize128x128x16",
      "_ZN2at6native26batch_norm_backward_kernelIN3c108BFloat16EffiEEvN5torch10headeronly6d",
      "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIfffNS0_15MulFunctor"};
  for (size_t i = 0; i < sizeof not / sizeof not [0]; i++)
    CHECK(!hints_is_fp32_math(not [i]), "%s seen as fp32 math", not [i]);
  CHECK(hints_is_elementwise(not [4]), "elementwise not seen");
  CHECK(!hints_is_elementwise(fp32[0]), "a GEMM seen as elementwise");
}

/* 10 steps of 100 us: 60 us fp32 conv, 30 us bf16 gemm, 10 us elementwise */
static void test_fp32(void) {
  struct trace_data td = {0};
  for (int s = 0; s < 10; s++) {
    uint64_t t = (uint64_t)s * 100000;
    kernel(&td, t, 60000, "sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw_x");
    kernel(&td, t + 60000, 30000, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n");
    kernel(&td, t + 90000, 10000, "vectorized_elementwise_kernel<4, MulFunctor>");
  }
  struct hints h = run(&td, "NVIDIA H200", 10, 0);
  const struct hint *f = find(&h, "fp32_math");
  CHECK(f != NULL, "no fp32_math hint");
  if (f) {
    CHECK(f->per_step_ns == 60000, "per step %llu", (unsigned long long)f->per_step_ns);
    /* the H200's measured ratio (13.5): 60 us -> 4.4 us */
    CHECK(f->gain_ns > 55000 && f->gain_ns < 56000, "gain %llu", (unsigned long long)f->gain_ns);
    CHECK(strstr(f->evidence, "on this GPU") != NULL, "%s", f->evidence);
  }
  CHECK(!find(&h, "kernel_storm"), "storm from 3 kernels per step");
  /* another GPU: the default ratio, and said so */
  h = run(&td, "NVIDIA A10", 10, 0);
  f = find(&h, "fp32_math");
  CHECK(f && strstr(f->evidence, "not measured on this GPU"), "default not said");
  trace_data_free(&td);
}

/* bf16 only: no fp32 hint */
static void test_no_fp32(void) {
  struct trace_data td = {0};
  for (int s = 0; s < 10; s++)
    kernel(&td, (uint64_t)s * 100000, 90000, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n");
  struct hints h = run(&td, "NVIDIA H200", 10, 0);
  CHECK(h.n == 0, "%zu hints on a bf16 step", h.n);
  trace_data_free(&td);
}

/* 300 kernels per step of 2 us, 2/3 elementwise, with 1 ms of launch overhead per step */
static void test_storm(void) {
  struct trace_data td = {0};
  for (int s = 0; s < 5; s++)
    for (int k = 0; k < 300; k++)
      kernel(&td, (uint64_t)s * 2000000 + (uint64_t)k * 6000, 2000,
             k % 3 ? "vectorized_elementwise_kernel<4, AddFunctor>" : "layer_norm_kernel");
  /* 0.2 ms of launch overhead per step against 0.4 ms of elementwise kernels: fusion */
  struct hints h = run(&td, "NVIDIA H200", 5, 200000);
  const struct hint *st = find(&h, "kernel_storm");
  CHECK(st != NULL, "no kernel_storm hint");
  if (st) {
    /* 0.2 ms x (1 - 1/3.31) + 0.4 ms x (1 - 1/3.57) */
    CHECK(st->gain_ns > 425000 && st->gain_ns < 430000, "gain %llu",
          (unsigned long long)st->gain_ns);
    CHECK(strstr(st->evidence, "300 kernels per step") != NULL, "%s", st->evidence);
    CHECK(!strncmp(st->suggestion, "fuse: torch.compile", 19), "%s", st->suggestion);
  }
  /* 1 ms of launch overhead per step: the launches are the cost, a CUDA graph takes them off */
  h = run(&td, "NVIDIA H200", 5, 1000000);
  st = find(&h, "kernel_storm");
  CHECK(st != NULL, "no kernel_storm hint");
  if (st) {
    CHECK(st->gain_ns == 1000000, "gain %llu", (unsigned long long)st->gain_ns);
    CHECK(!strncmp(st->suggestion, "capture the step as a CUDA graph", 32), "%s", st->suggestion);
  }
  trace_data_free(&td);
}

/* The same storm inside CUDA graphs: capture is done, the hint says fusion alone. */
static void test_storm_in_graphs(void) {
  struct trace_data td = {0};
  for (int s = 0; s < 5; s++)
    for (int k = 0; k < 300; k++) {
      struct slk_record r = {
          .kind = SLK_KERNEL,
          .start = (uint64_t)s * 2000000 + (uint64_t)k * 6000,
          .end = (uint64_t)s * 2000000 + (uint64_t)k * 6000 + 2000,
          .name = S(k % 3 ? "vectorized_elementwise_kernel<4, AddFunctor>" : "layer_norm_kernel"),
          .graph_id = 1 + (uint32_t)s};
      trace_data_add(&td, &r);
    }
  struct hints h = run(&td, "NVIDIA H200", 5, 0);
  const struct hint *st = find(&h, "kernel_storm");
  CHECK(st != NULL, "no kernel_storm hint");
  if (st) CHECK(strstr(st->suggestion, "already run in CUDA graphs") != NULL, "%s", st->suggestion);
  trace_data_free(&td);
}

/* 64 MB pageable copies at 8 GB/s, pinned ones at 32 GB/s */
static void test_copies(void) {
  struct trace_data td = {0};
  for (int s = 0; s < 4; s++) {
    copy(&td, (uint64_t)s * 20000000, 8000000, 64000000, 0);
    copy(&td, (uint64_t)s * 20000000 + 9000000, 2000000, 64000000, 1);
  }
  struct hints h = run(&td, "NVIDIA H200", 4, 0);
  const struct hint *c = find(&h, "copy_bandwidth");
  CHECK(c != NULL, "no copy_bandwidth hint");
  if (c) {
    CHECK(c->per_step_ns == 8000000, "per step %llu", (unsigned long long)c->per_step_ns);
    CHECK(c->gain_ns == 6000000, "gain %llu", (unsigned long long)c->gain_ns);
    CHECK(strstr(c->evidence, "8.0 GB/s") && strstr(c->evidence, "32.0 GB/s"), "%s", c->evidence);
  }
  trace_data_free(&td);
}

int main(void) {
  test_names();
  test_fp32();
  test_no_fp32();
  test_storm();
  test_storm_in_graphs();
  test_copies();
  printf("test_hints: %d checks, %d failed\n", checks, failed);
  return failed != 0;
}

/* Compute-side hints from kernel and copy records (hints.h). */
#include "hints.h"

#include "frames.h"
#include "radix.h"
#include "u64map.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a sum of two savings as uint64_t: past 2^64 (times near it, damaged traces) it saturates */
static uint64_t gain_of(double x) { return x >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)x; }

/* Ratios measured on a GPU, by the device name's part (GPU runs 25 and 26 agree within 2%,
 * scripts/gpu-compute.sh;
 * docs/ACCURACY.md, "Compute hints"): `amp` the fp32 GEMM/convolution kernels' time over the
 * GEMM/convolution kernels' time of the same training step under bf16 autocast (ResNet-50,
 * batch 64: 55.9 over 4.1 ms per step); `fuse_n` kernels per step eager over torch.compile and
 * `fuse_t` the elementwise kernels' time eager over compiled (an elementwise-heavy MLP: 546 over
 * 165 kernels, 0.87 over 0.24 ms). Elsewhere the defaults, said as not measured there. */
static const struct {
  const char *gpu;
  double amp, fuse_n, fuse_t;
} measured[] = {
    {"H200", 13.5, 3.31, 3.57},
};
#define AMP_DEFAULT 4.0
#define FUSE_N_DEFAULT 2.0
#define FUSE_T_DEFAULT 2.0

static double ratio(const char *dev, int which, int *measured_here);

static int has(const char *s, const char *needle) { return strstr(s, needle) != NULL; }

/* lower-cased copy of the first 200 characters */
static void lower(const char *s, char *out, size_t cap) {
  size_t i = 0;
  for (; s[i] && i + 1 < cap; i++)
    out[i] = (char)tolower((unsigned char)s[i]);
  out[i] = '\0';
}

int hints_is_fp32_math(const char *name) {
  char n[256];
  char *dm = slack_demangle(name); /* "dgrad_engine<float, 512, ...>": the template says fp32 */
  lower(dm ? dm : name, n, sizeof n);
  free(dm);
  int math = has(n, "gemm") || has(n, "conv") || has(n, "fprop") || has(n, "dgrad") ||
             has(n, "wgrad") || has(n, "winograd");
  if (!math) return 0;
  /* already on tensor cores, or not fp32 */
  static const char *const tc[] = {"tf32", "f16",   "bf16",   "h884", "h1688",    "h16816",
                                   "s884", "s1688", "s16816", "hmma", "tensorop", "i8816",
                                   "int8", "fp16",  "half",   "e4m3", "e5m2",     "fp8"};
  for (size_t i = 0; i < sizeof tc / sizeof tc[0]; i++)
    if (has(n, tc[i])) return 0;
  /* fp32 by the libraries' naming: cuBLAS sgemm / xmma f32f32, cuDNN's implicit sgemm and
   * fp32 engines (f32f32, scudnn), cutlass simt sgemm */
  return has(n, "sgemm") || has(n, "f32f32") || has(n, "scudnn") || has(n, "_f32_") ||
         has(n, "simt") || has(n, "<float") || has(n, "(float");
}

int hints_is_elementwise(const char *name) {
  char n[256];
  lower(name, n, sizeof n);
  return has(n, "elementwise") || has(n, "reduce_kernel") || has(n, "unrolled_elementwise") ||
         has(n, "vectorized_elementwise") || has(n, "index_elementwise") ||
         has(n, "distribution_elementwise") || has(n, "triton_poi") || has(n, "triton_red");
}

static uint64_t dur(const struct slk_record *r) {
  return r->end > r->start ? r->end - r->start : 0;
}

static int in_span(const struct hints_input *in, const struct slk_record *r) {
  return r->start >= in->t0 && r->start < in->t1;
}

static int mine(const struct hints_input *in, size_t i, const struct slk_record *r) {
  return r->device == in->device && !strcmp(in->hosts[i] ? in->hosts[i] : "", in->host);
}

static void add(struct hints *out, const struct hint *h) {
  if (out->n < HINTS_MAX) out->v[out->n++] = *h;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int cmp_gain(const void *pa, const void *pb) {
  const struct hint *a = pa, *b = pb;
  return a->gain_ns > b->gain_ns ? -1 : a->gain_ns < b->gain_ns;
}

/* fp32_math and kernel_storm, from the kernels in the span */
static int kernel_hints(const struct hints_input *in, struct hints *out) {
  uint64_t steps = in->steps ? in->steps : 1;
  uint64_t n = 0, fp32_ns = 0, fp32_n = 0, ew_n = 0, ew_ns = 0, all_ns = 0, graph_n = 0,
           eager_ew_ns = 0;
  size_t cap = 0;
  for (size_t i = 0; i < in->n; i++)
    cap += in->td[i]->kind[SLK_KERNEL].n;
  uint64_t *d = malloc((cap ? cap : 1) * sizeof *d);
  if (!d) return -1;
  char top[128] = "";
  uint64_t top_ns = 0;
  struct u64map seen;
  memset(&seen, 0, sizeof seen);
  for (size_t i = 0; i < in->n; i++) {
    const struct trace_array *ka = &in->td[i]->kind[SLK_KERNEL];
    for (size_t k = 0; k < ka->n; k++) {
      const struct slk_record *r = &ka->v[k];
      if (!mine(in, i, r) || !in_span(in, r)) continue;
      const char *name = in->name(in->ctx, i, r->name);
      uint64_t t = dur(r);
      d[n++] = t;
      all_ns += t;
      graph_n += r->graph_id != 0;
      /* the tests per distinct name (demangling is costly), by the name's address: one string
       * per id of one trace. Bit 0: fp32 math, bit 1: elementwise, bit 2: known, bit 3: made by
       * a compiler's fusion already (Triton's, torch.compile's) */
      uint64_t kind = 0;
      if (!u64map_get(&seen, (uint64_t)(uintptr_t)name, &kind)) {
        kind = 4u | (uint64_t)hints_is_fp32_math(name) | (uint64_t)hints_is_elementwise(name) << 1 |
               (uint64_t)(strncmp(name, "triton_", 7) == 0) << 3;
        size_t slot = u64map_add(&seen, (uint64_t)(uintptr_t)name);
        if (slot != (size_t)-1) seen.val[slot] = kind;
      }
      if (kind & 1) {
        fp32_ns += t;
        fp32_n++;
        if (t > top_ns) {
          top_ns = t;
          char *dm = slack_demangle(name);
          snprintf(top, sizeof top, "%.100s", dm ? dm : name);
          free(dm);
        }
      }
      if (kind & 2) {
        ew_n++;
        ew_ns += t;
        if (!(kind & 8)) eager_ew_ns += t;
      }
    }
  }
  if (n && fp32_ns * 10 >= all_ns) { /* at least a tenth of the kernel time */
    int here;
    double s = ratio(in->device_name, 0, &here);
    struct hint h = {.kind = "fp32_math",
                     .per_step_ns = fp32_ns / steps,
                     .gain_ns = (uint64_t)((double)(fp32_ns / steps) * (1.0 - 1.0 / s)),
                     .suggestion =
                         "mixed precision: torch.autocast(\"cuda\", dtype=torch.bfloat16) "
                         "around the forward pass (or TF32: torch.backends.cuda.matmul."
                         "allow_tf32 = torch.backends.cudnn.allow_tf32 = True)"};
    snprintf(h.evidence, sizeof h.evidence,
             "%llu fp32 GEMM/convolution kernels per step without tensor cores, %.0f%% of the "
             "kernel time (e.g. %.60s); bf16 ran such kernels %.1fx faster %s",
             (unsigned long long)(fp32_n / steps), 100.0 * (double)fp32_ns / (double)all_ns, top, s,
             here ? "on this GPU" : "(a default: not measured on this GPU)");
    add(out, &h);
  }
  u64map_free(&seen);
  if (n) {
    if (radix_sort_u64(d, n)) qsort(d, n, sizeof *d, cmp_u64);
    uint64_t med = d[n / 2], per = n / steps;
    /* many short kernels, a good part of them elementwise: fusion territory. The saving: the
     * launches fusion removes (of the launch overhead the classifier found) and the elementwise
     * kernels' own time, by the ratios measured for fusion */
    /* (or kernels of any length where eager elementwise and reduction kernels hold half the
     * kernel time: memory-bound passes that fusion merges, whatever their length; a diffusion
     * UNet's GroupNorm and SiLU at 64x64, median 22.8 us, 74% of the kernel time: torch.compile
     * took its step from 57.27 to 30.20 ms, GPU run 116, where the storm's ratios say 28.1 on
     * the same step with 336 tiny kernels more, median 6.8 us, GPU run 112) */
    if (per >= 200 && ew_n * 10 >= n * 3 && (med < 20000 || eager_ew_ns * 2 >= all_ns)) {
      int here_n, here_t;
      double fn = ratio(in->device_name, 1, &here_n), ft = ratio(in->device_name, 2, &here_t);
      uint64_t ew = ew_ns / steps, lo = in->launch_per_step_ns;
      /* Where the launch gaps outweigh the elementwise kernels' own time, the launches are the
       * cost and one launch per step is the fix, whatever fusion would do: a CUDA graph saved
       * 17.05 ms of a 20.69 ms MobileNet step whose launch overhead read 18.40 (GPU run 58),
       * while torch.compile's fusion left it at 715 kernels per step against 685 and 4 ms slower
       * (run 60; on a transformer it ran 3.3x fewer kernels, run 26). Kernels already in CUDA
       * graphs (run 58's captured step): fusion is what is left. */
      int in_graphs = graph_n * 2 >= n, launches = !in_graphs && lo > ew;
      struct hint h = {
          .kind = "kernel_storm",
          .per_step_ns = ew + lo,
          .gain_ns = launches
                         ? lo
                         : gain_of((double)lo * (1.0 - 1.0 / fn) + (double)ew * (1.0 - 1.0 / ft)),
          .suggestion = in_graphs ? "fuse: torch.compile(model) (the kernels already run in CUDA "
                                    "graphs: fewer, larger kernels is what is left)"
                        : launches
                            ? "capture the step as a CUDA graph (torch.cuda.graphs, or "
                              "torch.compile(mode=\"reduce-overhead\")): the launches, not the "
                              "kernels, are the cost, and fusion alone may not cut them (it "
                              "depends on the model)"
                            : "fuse: torch.compile(model) (or capture the step as a CUDA graph "
                              "when the launches, not the kernels, are the cost)"};
      char shorter[64] = "";
      if (in->kernels_joined && graph_n * 2 < n) /* of the kernels launched one by one */
        snprintf(shorter, sizeof shorter, ", %.0f%% of them shorter than their launch call",
                 100.0 * (double)in->kernels_short / (double)in->kernels_joined);
      snprintf(h.evidence, sizeof h.evidence,
               "%llu kernels per step, median %.1f us, %.0f%% of them elementwise or reductions "
               "(%.2f ms of GPU time per step)%s, %.2f ms of launch overhead per step%s; fusion "
               "ran %.1fx fewer kernels and their elementwise work %.1fx faster %s",
               (unsigned long long)per, (double)med / 1e3, 100.0 * (double)ew_n / (double)n,
               (double)ew / 1e6, shorter, (double)lo / 1e6,
               in->launch_is_bound && lo ? " (at most: no untraced tail, SLACK_TAIL_MS)" : "", fn,
               ft, here_n && here_t ? "on this GPU" : "(defaults: not measured on this GPU)");
      add(out, &h);
    }
  }
  free(d);
  return 0;
}

/* copy_bandwidth: host<->device copies of 1 MB or more, per direction, against the best pinned
 * rate this trace shows for that direction */
static void copy_hints(const struct hints_input *in, struct hints *out) {
  uint64_t steps = in->steps ? in->steps : 1;
  for (int dir = 1; dir <= 2; dir++) { /* CUPTI memcpy kinds: 1 HtoD, 2 DtoH */
    uint64_t pg_bytes = 0, pg_ns = 0, best_bps = 0;
    for (size_t i = 0; i < in->n; i++) {
      const struct trace_array *ma = &in->td[i]->kind[SLK_MEMCPY];
      for (size_t k = 0; k < ma->n; k++) {
        const struct slk_record *r = &ma->v[k];
        if (!mine(in, i, r) || r->copy_kind != dir || r->bytes < (1u << 20) || !dur(r)) continue;
        int host_kind = dir == 1 ? r->src_kind : r->dst_kind; /* 1 pageable, 2 pinned */
        uint64_t bps = r->bytes * 1000000000ull / dur(r);
        if (host_kind == 2 && bps > best_bps) best_bps = bps;
        if (host_kind == 1 && in_span(in, r)) {
          pg_bytes += r->bytes;
          pg_ns += dur(r);
        }
      }
    }
    if (!pg_ns || pg_ns / steps < 100000) continue; /* under 0.1 ms per step: not worth a hint */
    uint64_t pg_bps = pg_bytes * 1000000000ull / pg_ns;
    struct hint h = {.kind = "copy_bandwidth",
                     .per_step_ns = pg_ns / steps,
                     .suggestion = "pinned host memory (DataLoader pin_memory=True, "
                                   "tensor.pin_memory()) and non_blocking copies"};
    h.gain_ns =
        best_bps > pg_bps
            ? (uint64_t)((double)(pg_ns / steps) * (1.0 - (double)pg_bps / (double)best_bps))
            : 0;
    if (best_bps)
      snprintf(h.evidence, sizeof h.evidence,
               "%s copies from pageable memory: %.1f MB per step at %.1f GB/s; pinned copies in "
               "this trace reached %.1f GB/s",
               dir == 1 ? "host-to-device" : "device-to-host", (double)(pg_bytes / steps) / 1e6,
               (double)pg_bps / 1e9, (double)best_bps / 1e9);
    else /* no pinned copy to compare with: the saving is not known */
      snprintf(h.evidence, sizeof h.evidence,
               "%s copies from pageable memory: %.1f MB per step at %.1f GB/s (no pinned copy in "
               "the trace to compare)",
               dir == 1 ? "host-to-device" : "device-to-host", (double)(pg_bytes / steps) / 1e6,
               (double)pg_bps / 1e9);
    add(out, &h);
  }
}

int hints_compute(const struct hints_input *in, struct hints *out) {
  out->n = 0;
  if (kernel_hints(in, out)) return -1;
  copy_hints(in, out);
  qsort(out->v, out->n, sizeof out->v[0], cmp_gain);
  return 0;
}

static double ratio(const char *dev, int which, int *here) {
  static const double dflt[] = {AMP_DEFAULT, FUSE_N_DEFAULT, FUSE_T_DEFAULT};
  *here = 0;
  for (size_t i = 0; dev && i < sizeof measured / sizeof measured[0]; i++) {
    if (!strstr(dev, measured[i].gpu)) continue;
    *here = 1;
    return which == 0 ? measured[i].amp : which == 1 ? measured[i].fuse_n : measured[i].fuse_t;
  }
  return dflt[which];
}

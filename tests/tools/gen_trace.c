/* gen_trace: writes a synthetic slack trace with format/trace_file.c, for the tests and the
 * benchmark of `slack timeline` (tests/issue6.mk):
 *
 *   gen_trace OUT.slk [--events N] [--threads T] [--devices D] [--streams S] [--batch B]
 *                     [--step L] [--loop K]
 *
 * A training-loop-like pattern: T host threads, each launching kernels (HOST cudaLaunchKernel
 * record, the CUPTI API record inside it, the KERNEL record with the same correlation id) onto
 * S streams of D GPUs, an input copy (cudaMemcpyAsync HtoD, MEMCPY) every 16 launches, a memset
 * every 64, a cudaStreamSynchronize every 128 and an NVTX "step" range around every L launches of
 * a thread (default 256; 0: none). --loop K: each thread's kernels are named by their place in
 * a loop of K launches ("loop_kernel_<i>", i = launch mod K) instead of drawn at random, with
 * one copy, one memset and one wait a loop, so that without NVTX ranges the work repeats every K
 * launches
 * (iterations of about 3 K records: a long trace whose windows hold a few of them,
 * tests/test_report_window.sh).
 * N counts the records written, strings, threads and devices aside (default 100000); about three
 * per launch. GPU records are held back and written in batches of B (default 4096) after the host
 * records, like CUPTI buffers reach slack's writer, so the file is not in time order. The same
 * arguments always give the same file. Prints what it wrote as one JSON object on stdout. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format.h"

#define CBID_LAUNCH 211      /* CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 */
#define CBID_MEMCPY_ASYNC 41 /* CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020 */
#define CBID_MEMSET_ASYNC 51 /* CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020 */

static const char *const kernel_names[] = {
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_"
    "T1_",
    "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_kernel",
    "void reduce_kernel<512, 1>(float const*, float*, int)",
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    "kernel \"with\" quotes\\and\tcontrol and caf\xc3\xa9",
};
#define NKERNEL_NAMES (sizeof kernel_names / sizeof kernel_names[0])

static struct slk_file *out;
static uint64_t written[SLK_KIND_MAX], total;

static void add(const struct slk_record *r) {
  if (slk_file_add(out, r)) {
    fprintf(stderr, "gen_trace: write failed: %s\n", strerror(errno));
    exit(1);
  }
  written[r->kind]++;
  if (r->kind != SLK_STRING && r->kind != SLK_THREAD && r->kind != SLK_DEVICE) total++;
}

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint32_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}

/* GPU records wait here until a batch is full. */
static struct slk_record *pending;
static size_t npending, batch = 4096;

static void gpu(const struct slk_record *r) {
  pending[npending++] = *r;
  if (npending == batch) {
    for (size_t i = 0; i < npending; i++)
      add(&pending[i]);
    npending = 0;
  }
}

static long arg_long(const char *opt, const char *v, long min) {
  char *end;
  long n = strtol(v, &end, 10);
  if (*end || n < min) {
    fprintf(stderr, "gen_trace: %s needs a number >= %ld\n", opt, min);
    exit(2);
  }
  return n;
}

int main(int argc, char **argv) {
  const char *path = NULL;
  long events = 100000, threads = 2, devices = 1, streams = 2, step = 256, loop = 0;
  for (int i = 1; i < argc; i++) {
    if (i + 1 < argc && !strcmp(argv[i], "--events")) {
      events = arg_long(argv[i], argv[i + 1], 1);
      i++;
    } else if (i + 1 < argc && !strcmp(argv[i], "--threads")) {
      threads = arg_long(argv[i], argv[i + 1], 1);
      i++;
    } else if (i + 1 < argc && !strcmp(argv[i], "--devices")) {
      devices = arg_long(argv[i], argv[i + 1], 1);
      i++;
    } else if (i + 1 < argc && !strcmp(argv[i], "--streams")) {
      streams = arg_long(argv[i], argv[i + 1], 1);
      i++;
    } else if (i + 1 < argc && !strcmp(argv[i], "--step")) {
      step = arg_long(argv[i], argv[i + 1], 0);
      i++;
    } else if (i + 1 < argc && !strcmp(argv[i], "--loop")) {
      loop = arg_long(argv[i], argv[i + 1], 0);
      i++;
    } else if (i + 1 < argc && !strcmp(argv[i], "--batch")) {
      batch = (size_t)arg_long(argv[i], argv[i + 1], 1);
      i++;
    } else if (argv[i][0] != '-' && !path)
      path = argv[i];
    else {
      fprintf(stderr, "usage: gen_trace OUT.slk [--events N] [--threads T] [--devices D] "
                      "[--streams S] [--batch B] [--step L] [--loop K]\n");
      return 2;
    }
  }
  if (!path) {
    fprintf(stderr, "gen_trace: no output file\n");
    return 2;
  }
  pending = malloc(batch * sizeof *pending);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || !pending) {
    fprintf(stderr, "gen_trace: cannot write %s: %s\n", path, strerror(errno));
    return 1;
  }
  out = slk_file_open(fd,
                      "host=gen\npid=4242\nrank=\ncmdline=gen_trace synthetic\n"
                      "slack_version=gen_trace\nclock=CLOCK_MONOTONIC\ngpu_records=on\n",
                      3, 1 << 20);
  if (!out) {
    fprintf(stderr, "gen_trace: cannot write %s: %s\n", path, strerror(errno));
    return 1;
  }
  uint32_t knames[NKERNEL_NAMES];
  for (size_t k = 0; k < NKERNEL_NAMES; k++)
    knames[k] = slk_file_intern(out, kernel_names[k], strlen(kernel_names[k]));
  uint32_t *lnames = loop ? malloc((size_t)loop * sizeof *lnames) : NULL;
  for (long k = 0; k < loop && lnames; k++) {
    char name[48];
    int len = snprintf(name, sizeof name, "loop_kernel_%ld", k);
    lnames[k] = slk_file_intern(out, name, (size_t)len);
  }
  if (loop && !lnames) return 1;
  uint32_t step_name = slk_file_intern(out, "step", 4);
  uint32_t site = slk_file_intern(out, "train.py:42 step", 16);
  for (long d = 0; d < devices; d++) {
    char name[48];
    snprintf(name, sizeof name, "Synthetic GPU %ld", d);
    add(&(struct slk_record){.kind = SLK_DEVICE,
                             .device = (uint32_t)d,
                             .name = slk_file_intern(out, name, strlen(name)),
                             .regs = 132,
                             .bytes = 150ull << 30});
  }
  for (long t = 0; t < threads; t++) {
    char name[48];
    snprintf(name, sizeof name, t ? "worker-%ld" : "python3", t);
    add(&(struct slk_record){.kind = SLK_THREAD,
                             .tid = 4242 + (uint64_t)t,
                             .name = slk_file_intern(out, name, strlen(name))});
  }

  /* per (device, stream): when its last GPU work ends; per thread: its clock */
  uint64_t *stream_free = calloc((size_t)(devices * streams), sizeof *stream_free);
  uint64_t *clock = malloc((size_t)threads * sizeof *clock);
  uint64_t *step_start = malloc((size_t)threads * sizeof *step_start);
  if (!stream_free || !clock || !step_start) return 1;
  for (long t = 0; t < threads; t++)
    clock[t] = step_start[t] = 1000000000ull + (uint64_t)t * 1000;
  uint32_t corr = 0;
  uint64_t launches = 0;
  while ((long)total < events) {
    long t = (long)(launches % (uint64_t)threads);
    uint64_t tid = 4242 + (uint64_t)t, n = launches / (uint64_t)threads;
    uint32_t dev = (uint32_t)((launches / 7) % (uint64_t)devices);
    uint64_t stream = 7 + (uint64_t)((launches / 3) % (uint64_t)streams) * 6;
    uint64_t *sfree = &stream_free[dev * streams + (stream - 7) / 6];
    uint64_t now = clock[t];
    uint64_t lp = loop ? (uint64_t)loop : 0; /* --loop: a copy, a memset and a wait a loop */
    int copy = lp ? n % lp == 0 : n % 16 == 0, memset_ = lp ? n % lp == 5 : n % 64 == 5;
    uint32_t fn = copy ? SLK_FN_MEMCPY_ASYNC : memset_ ? SLK_FN_MEMSET_ASYNC : SLK_FN_LAUNCH;
    uint32_t cbid = copy ? CBID_MEMCPY_ASYNC : memset_ ? CBID_MEMSET_ASYNC : CBID_LAUNCH;
    uint64_t call = 3000 + next_rand() % 4000, bytes = copy ? 1u << 20 : memset_ ? 4096 : 0;
    corr++;
    add(&(struct slk_record){.kind = SLK_HOST,
                             .tid = tid,
                             .start = now,
                             .end = now + call,
                             .fn = fn,
                             .stream = 0x5000 + stream,
                             .bytes = bytes,
                             .copy_kind = copy ? 1 : 0,
                             .callsite = site});
    add(&(struct slk_record){.kind = SLK_API,
                             .tid = tid,
                             .start = now + 500,
                             .end = now + call - 300,
                             .corr = corr,
                             .fn = cbid});
    uint64_t gstart = now + call + 2000 + next_rand() % 3000;
    if (gstart < *sfree) gstart = *sfree;
    uint64_t gdur = copy ? 80000 : 2000 + next_rand() % 60000;
    struct slk_record g = {.device = dev,
                           .stream = stream,
                           .start = gstart,
                           .end = gstart + gdur,
                           .corr = corr,
                           .bytes = bytes};
    if (copy) {
      g.kind = SLK_MEMCPY;
      g.copy_kind = 1;
      g.src_kind = 1; /* pageable */
      g.dst_kind = 3;
    } else if (memset_) {
      g.kind = SLK_MEMSET;
      g.dst_kind = 3;
    } else {
      g.kind = SLK_KERNEL;
      g.name = loop ? lnames[n % (uint64_t)loop] : knames[next_rand() % NKERNEL_NAMES];
      g.grid[0] = 1024;
      g.grid[1] = g.grid[2] = 1;
      g.block[0] = 256;
      g.block[1] = g.block[2] = 1;
      g.regs = 32;
    }
    gpu(&g);
    *sfree = g.end;
    now += call + 1000 + next_rand() % 20000;
    if (n % (lp ? lp : 128) == (lp ? lp : 128) - 1) { /* the host waits for the stream */
      uint64_t wait_end = *sfree > now ? *sfree + 3000 : now + 3000;
      add(&(struct slk_record){.kind = SLK_HOST,
                               .tid = tid,
                               .start = now,
                               .end = wait_end,
                               .fn = SLK_FN_STREAM_SYNC,
                               .stream = 0x5000 + stream,
                               .flags = SLK_HOST_SYNCHRONOUS,
                               .callsite = site});
      now = wait_end + 1000;
    }
    if (step && n % (uint64_t)step == (uint64_t)step - 1) {
      add(&(struct slk_record){
          .kind = SLK_MARKER, .tid = tid, .start = step_start[t], .end = now, .name = step_name});
      step_start[t] = now + 1;
      now += 200000; /* the data loader: the GPU idles */
    }
    clock[t] = now;
    launches++;
  }
  for (size_t i = 0; i < npending; i++)
    add(&pending[i]);
  if (slk_file_close(out) || close(fd)) {
    fprintf(stderr, "gen_trace: write failed: %s\n", strerror(errno));
    return 1;
  }
  printf("{\"records\": %llu, \"kernels\": %llu, \"memcpys\": %llu, \"memsets\": %llu, "
         "\"host\": %llu, \"api\": %llu, \"markers\": %llu, \"threads\": %ld, \"devices\": %ld, "
         "\"streams\": %ld}\n",
         (unsigned long long)total, (unsigned long long)written[SLK_KERNEL],
         (unsigned long long)written[SLK_MEMCPY], (unsigned long long)written[SLK_MEMSET],
         (unsigned long long)written[SLK_HOST], (unsigned long long)written[SLK_API],
         (unsigned long long)written[SLK_MARKER], threads, devices, streams);
  free(pending);
  free(stream_free);
  free(clock);
  free(step_start);
  return 0;
}

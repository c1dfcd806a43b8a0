/* gen_ranks: writes the traces of a synthetic data-parallel job, one per rank, with
 * format/trace_file.c, for the multi-rank tests of `slack report` (tests/test_ranks.sh):
 *
 *   gen_ranks OUTDIR [--ranks N] [--hosts H] [--steps K] [--skew-ns S] [--ntp-ns E]
 *                    [--slow-rank R --slow-ns D] [--missing R] [--job ID]
 *
 * Every rank runs the same step on one GPU: its data loader (the host outside CUDA, 300-340 us),
 * an input copy (cudaMemcpyAsync HtoD, 80 us on the GPU), 8 compute kernels of 100 us, an
 * all-reduce (ncclDevKernel_AllReduce...) launched on a communication stream after the fourth
 * (it overlaps the last four) and another after the eighth, then cudaStreamSynchronize on the
 * communication stream; an NVTX range "step" around it all. A collective kernel starts when its
 * rank arrives (its launch, the compute before it, the collective before it on its stream) and
 * ends, on every rank, the collective's duration after the last rank arrived (plus 0-2 us).
 * --slow-rank R --slow-ns D: rank R's loader takes D longer in every step (a starved rank: the
 * others wait inside the collectives). Ranks are spread over H hosts (node0, node1...; ranks
 * host-major, local ranks 0..); host h's clock reads h x S ns ahead of node0's, and its header's
 * realtime start is off by h x E ns more (NTP's error: slack must align on the collectives, not
 * on the headers). --missing R: rank R runs but its file is not written. Files:
 * OUTDIR/slack-nodeH-rankR-PID.slk, header keys as libslack writes them (job_id: --job, default
 * "gen-job"). The same arguments always give the same files. Prints one JSON object: what the
 * report must find (the last rank to arrive, the others' mean wait per all-reduce). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format.h"

#define CBID_LAUNCH 211
#define CBID_MEMCPY_ASYNC 41
#define CBID_STREAM_SYNC 131
#define MAXR 64
#define NKERN 8
#define COMPUTE_STREAM 7
#define COMM_STREAM 13

static const char *const kname[] = {
    "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_kernel",
    "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>(int)",
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"};

struct rank {
  struct slk_file *f;
  int fd, host;
  uint64_t off; /* this host's clock minus node0's */
  uint32_t names[3], site, step;
  uint64_t tid, t, sfree[2]; /* host clock (global time); stream free times */
  uint32_t corr;
};

static struct rank R[MAXR];
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)((rng >> 16) % n);
}

static void add(struct rank *r, struct slk_record rec) {
  if (!r->f) return; /* a missing rank: simulated, not written */
  if (rec.kind != SLK_STRING && rec.kind != SLK_THREAD && rec.kind != SLK_DEVICE) {
    rec.start += r->off;
    rec.end += r->off;
  }
  if (slk_file_add(r->f, &rec)) {
    fprintf(stderr, "gen_ranks: write failed: %s\n", strerror(errno));
    exit(1);
  }
}

/* A host call of fn at r->t lasting call ns, its API record and (gkind) its GPU record on stream
 * s starting no earlier than ready; returns the GPU record's start. */
static uint64_t submit(struct rank *r, uint32_t fn, uint32_t cbid, uint64_t call, int gkind, int s,
                       uint64_t ready, uint64_t gdur, uint32_t name) {
  r->corr++;
  uint64_t t = r->t;
  add(r, (struct slk_record){.kind = SLK_HOST,
                             .tid = r->tid,
                             .start = t,
                             .end = t + call,
                             .fn = fn,
                             .stream = 0x5000 + (uint64_t)s,
                             .bytes = gkind == SLK_MEMCPY ? 1u << 22 : 0,
                             .copy_kind = gkind == SLK_MEMCPY,
                             .callsite = r->site});
  add(r, (struct slk_record){.kind = SLK_API,
                             .tid = r->tid,
                             .start = t + 500,
                             .end = t + call - 300,
                             .corr = r->corr,
                             .fn = cbid});
  uint64_t *sf = &r->sfree[s == COMM_STREAM];
  uint64_t g = t + call + 3000;
  if (g < ready) g = ready;
  if (g < *sf) g = *sf;
  struct slk_record rec = {.kind = (uint8_t)gkind,
                           .device = 0,
                           .stream = (uint64_t)s,
                           .start = g,
                           .end = g + gdur,
                           .corr = r->corr,
                           .name = name};
  if (gkind == SLK_MEMCPY) {
    rec.bytes = 1u << 22;
    rec.copy_kind = 1;
    rec.src_kind = 2; /* pinned */
    rec.dst_kind = 3;
  } else {
    rec.grid[0] = 1024;
    rec.grid[1] = rec.grid[2] = 1;
    rec.block[0] = 256;
    rec.block[1] = rec.block[2] = 1;
    rec.regs = 32;
  }
  if (gdur) { /* a collective's record is written once its end is known */
    add(r, rec);
    *sf = rec.end;
  }
  r->t = t + call + 2000;
  return g;
}

static void collective_end(struct rank *r, uint32_t corr, uint64_t start, uint64_t end) {
  add(r, (struct slk_record){.kind = SLK_KERNEL,
                             .device = 0,
                             .stream = COMM_STREAM,
                             .start = start,
                             .end = end,
                             .corr = corr,
                             .name = r->names[2],
                             .grid = {2, 1, 1},
                             .block = {512, 1, 1},
                             .regs = 64});
  r->sfree[1] = end;
}

static long arg(int argc, char **argv, int *i, long min) {
  char *end;
  if (*i + 1 >= argc) exit(2);
  long n = strtol(argv[++*i], &end, 10);
  if (*end || n < min) {
    fprintf(stderr, "gen_ranks: %s needs a number >= %ld\n", argv[*i - 1], min);
    exit(2);
  }
  return n;
}

int main(int argc, char **argv) {
  const char *dir = NULL, *job = "gen-job";
  long nr = 2, hosts = 1, steps = 30, skew = 0, ntp = 0, slow = -1, slow_ns = 0, missing = -1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--ranks"))
      nr = arg(argc, argv, &i, 1);
    else if (!strcmp(argv[i], "--hosts"))
      hosts = arg(argc, argv, &i, 1);
    else if (!strcmp(argv[i], "--steps"))
      steps = arg(argc, argv, &i, 1);
    else if (!strcmp(argv[i], "--skew-ns"))
      skew = arg(argc, argv, &i, 0);
    else if (!strcmp(argv[i], "--ntp-ns"))
      ntp = arg(argc, argv, &i, 0);
    else if (!strcmp(argv[i], "--slow-rank"))
      slow = arg(argc, argv, &i, 0);
    else if (!strcmp(argv[i], "--slow-ns"))
      slow_ns = arg(argc, argv, &i, 0);
    else if (!strcmp(argv[i], "--missing"))
      missing = arg(argc, argv, &i, 0);
    else if (!strcmp(argv[i], "--job") && i + 1 < argc)
      job = argv[++i];
    else if (argv[i][0] != '-' && !dir)
      dir = argv[i];
    else {
      fprintf(stderr, "usage: gen_ranks OUTDIR [--ranks N] [--hosts H] [--steps K] [--skew-ns S] "
                      "[--ntp-ns E] [--slow-rank R --slow-ns D] [--missing R] [--job ID]\n");
      return 2;
    }
  }
  if (!dir || nr > MAXR || hosts > nr || nr % hosts) {
    fprintf(stderr, "gen_ranks: OUTDIR, at most %d ranks, a whole number of ranks per host\n",
            MAXR);
    return 2;
  }
  long per_host = nr / hosts;
  const uint64_t base = 5000000000ull;
  for (long k = 0; k < nr; k++) {
    struct rank *r = &R[k];
    r->host = (int)(k / per_host);
    r->off = (uint64_t)r->host * (uint64_t)skew;
    r->tid = 1000 + (uint64_t)k;
    r->t = base + (uint64_t)k * 7000;
    r->fd = -1;
    if (k == missing) continue;
    char path[4096], header[1024];
    snprintf(path, sizeof path, "%s/slack-node%d-rank%ld-%ld.slk", dir, r->host, k, 1000 + k);
    r->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    uint64_t mono = base - 1000000 + r->off;
    uint64_t real = 1700000000000000000ull + base - 1000000 + (uint64_t)r->host * (uint64_t)ntp;
    snprintf(header, sizeof header,
             "host=node%d\npid=%ld\nppid=999\nrank=%ld\nlocal_rank=%ld\nworld_size=%ld\n"
             "job_id=%s\ncmdline=python3 train.py\nslack_version=gen_ranks\n"
             "clock=CLOCK_MONOTONIC\nstart_monotonic_ns=%llu\nstart_realtime_ns=%llu\n"
             "cupti_version=0\ngpu_records=on\n",
             r->host, 1000 + k, k, k % per_host, nr, job, (unsigned long long)mono,
             (unsigned long long)real);
    if (r->fd < 0 || !(r->f = slk_file_open(r->fd, header, 3, 1 << 16))) {
      fprintf(stderr, "gen_ranks: cannot write %s: %s\n", path, strerror(errno));
      return 1;
    }
    for (int n = 0; n < 3; n++)
      r->names[n] = slk_file_intern(r->f, kname[n], strlen(kname[n]));
    r->site = slk_file_intern(r->f, "train.py:57 train_step", 22);
    r->step = slk_file_intern(r->f, "step", 4);
    add(r, (struct slk_record){.kind = SLK_DEVICE,
                               .device = 0,
                               .name = slk_file_intern(r->f, "Synthetic H200", 14),
                               .regs = 132,
                               .bytes = 140ull << 30});
    add(r, (struct slk_record){
               .kind = SLK_THREAD, .tid = r->tid, .name = slk_file_intern(r->f, "python3", 7)});
  }
  const uint64_t dur[2] = {150000, 200000}; /* the two all-reduces */
  uint64_t waited = 0, nwait = 0, last_count[MAXR] = {0};
  for (long s = 0; s < steps; s++) {
    uint64_t step_start[MAXR], arrive[MAXR], kend[MAXR];
    uint32_t corr[MAXR];
    for (long k = 0; k < nr; k++) {
      struct rank *r = &R[k];
      step_start[k] = r->t;
      r->t += 300000 + rnd(40000) + (k == slow ? (uint64_t)slow_ns : 0); /* the loader */
      submit(r, SLK_FN_MEMCPY_ASYNC, CBID_MEMCPY_ASYNC, 12000, SLK_MEMCPY, COMPUTE_STREAM, 0, 80000,
             0);
    }
    for (int c = 0; c < 2; c++) {
      uint64_t last = 0;
      long last_rank = 0;
      for (long k = 0; k < nr; k++) {
        struct rank *r = &R[k];
        for (int n = 0; n < NKERN / 2; n++)
          submit(r, SLK_FN_LAUNCH, CBID_LAUNCH, 5000, SLK_KERNEL, COMPUTE_STREAM, 0,
                 100000 + rnd(3000), r->names[n % 2]);
        kend[k] = r->sfree[0]; /* the all-reduce waits for the compute before it (an event) */
        arrive[k] = submit(r, SLK_FN_LAUNCH, CBID_LAUNCH, 6000, SLK_KERNEL, COMM_STREAM, kend[k], 0,
                           r->names[2]);
        corr[k] = r->corr;
        if (arrive[k] > last) last = arrive[k], last_rank = k;
      }
      last_count[last_rank]++;
      for (long k = 0; k < nr; k++) {
        if (k != last_rank && k != missing) {
          waited += last - arrive[k];
          nwait++;
        }
        collective_end(&R[k], corr[k], arrive[k], last + dur[c] + rnd(2000));
      }
    }
    for (long k = 0; k < nr; k++) { /* the host waits for the second all-reduce */
      struct rank *r = &R[k];
      uint64_t e = r->sfree[1] + 8000;
      add(r, (struct slk_record){.kind = SLK_HOST,
                                 .tid = r->tid,
                                 .start = r->t,
                                 .end = e,
                                 .fn = SLK_FN_STREAM_SYNC,
                                 .stream = 0x5000 + COMM_STREAM,
                                 .flags = SLK_HOST_SYNCHRONOUS,
                                 .callsite = r->site});
      add(r, (struct slk_record){.kind = SLK_MARKER,
                                 .tid = r->tid,
                                 .start = step_start[k],
                                 .end = e,
                                 .name = r->step});
      r->t = e + 2000;
    }
  }
  for (long k = 0; k < nr; k++)
    if (R[k].f && (slk_file_close(R[k].f) || close(R[k].fd))) {
      fprintf(stderr, "gen_ranks: write failed: %s\n", strerror(errno));
      return 1;
    }
  long most = 0;
  for (long k = 0; k < nr; k++)
    if (last_count[k] > last_count[most]) most = k;
  printf("{\"ranks\": %ld, \"hosts\": %ld, \"steps\": %ld, \"collectives\": %ld, "
         "\"last_rank\": %ld, \"last_count\": %llu, \"mean_wait_ns\": %llu, \"skew_ns\": %ld}\n",
         nr, hosts, steps, 2 * steps, most, (unsigned long long)last_count[most],
         (unsigned long long)(nwait ? waited / nwait : 0), skew);
  return 0;
}

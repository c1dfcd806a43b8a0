/* gen_join: writes a random slack trace that makes the launch join and the summary tables work
 * hard, for the tests of `slack info` and `slack stats` in bounded memory
 * (tests/test_bounded.sh):
 *
 *   gen_join OUT.slk [--seed S] [--launches N] [--threads T] [--chunk BYTES] [--huge]
 *
 * Host calls on T threads, some overlapping the call before or holding the next ones (which a
 * real trace never has), some of zero length; their CUPTI API records inside them, outside them, on
 * another thread, missing, or many to one correlation id (up to 12); host calls that carry their id
 * (the direct join); kernels by the id (none, one or several, in a graph or not, some with id 0 or
 * with the id of another launch), copies and memsets; ids mostly increasing, with jumps up to 2^32
 * - 1. Durations from 0 to about 2^40 ns, many repeated. Records reach the file through queues
 * flushed at random (a thread's calls, CUPTI's buffers), and some runs of records shuffled, so
 * neither the file nor a thread's calls are in time order; chunks of BYTES raw bytes (default
 * 2048). --huge: some times past 2^62 ns. The same arguments always give the same file. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format.h"

static struct slk_file *out;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static uint64_t below(uint64_t n) { return n ? rnd() % n : 0; }
static int chance(unsigned pct) { return below(100) < pct; }

/* a queue of records written when flushed */
struct queue {
  struct slk_record *v;
  size_t n, cap;
};

static void add(const struct slk_record *r) {
  if (slk_file_add(out, r)) {
    fprintf(stderr, "gen_join: write failed: %s\n", strerror(errno));
    exit(1);
  }
}

static void push(struct queue *q, const struct slk_record *r) {
  if (q->n == q->cap) {
    q->cap = q->cap ? 2 * q->cap : 256;
    q->v = realloc(q->v, q->cap * sizeof *q->v);
    if (!q->v) exit(1);
  }
  q->v[q->n++] = *r;
}

/* the queue's records written, some runs of them shuffled first */
static void flush(struct queue *q) {
  if (chance(20))
    for (size_t i = q->n; i > 1; i--) {
      size_t j = below(i);
      if (j + 8 < i) continue; /* only near neighbours swap */
      struct slk_record t = q->v[i - 1];
      q->v[i - 1] = q->v[j];
      q->v[j] = t;
    }
  for (size_t i = 0; i < q->n; i++)
    add(&q->v[i]);
  q->n = 0;
}

/* a duration: mostly small and repeated, sometimes anything up to about 2^40 */
static uint64_t duration(void) {
  unsigned p = (unsigned)below(100);
  if (p < 50) return 1000 + below(64) * 100;
  if (p < 80) return below(20000);
  if (p < 95) return below(5000000);
  if (p < 98) return 0;
  return below((uint64_t)1 << 40);
}

static long arg_long(const char *opt, const char *v, long min) {
  char *end;
  long n = strtol(v, &end, 10);
  if (*end || n < min) {
    fprintf(stderr, "gen_join: %s needs a number >= %ld\n", opt, min);
    exit(2);
  }
  return n;
}

int main(int argc, char **argv) {
  const char *path = NULL;
  long launches = 20000, threads = 5, chunk = 2048, seed = 1;
  int huge = 0;
  for (int i = 1; i < argc; i++) {
    if (i + 1 < argc && !strcmp(argv[i], "--seed")) {
      seed = arg_long(argv[i], argv[i + 1], 0);
      i++;
    } else if (i + 1 < argc && !strcmp(argv[i], "--launches")) {
      launches = arg_long(argv[i], argv[i + 1], 1);
      i++;
    } else if (i + 1 < argc && !strcmp(argv[i], "--threads")) {
      threads = arg_long(argv[i], argv[i + 1], 1);
      i++;
    } else if (i + 1 < argc && !strcmp(argv[i], "--chunk")) {
      chunk = arg_long(argv[i], argv[i + 1], 64);
      i++;
    } else if (!strcmp(argv[i], "--huge"))
      huge = 1;
    else if (argv[i][0] != '-' && !path)
      path = argv[i];
    else {
      fprintf(stderr, "usage: gen_join OUT.slk [--seed S] [--launches N] [--threads T] "
                      "[--chunk BYTES] [--huge]\n");
      return 2;
    }
  }
  if (!path) {
    fprintf(stderr, "gen_join: no output file\n");
    return 2;
  }
  rng ^= (uint64_t)seed * 0xbf58476d1ce4e5b9ull;
  for (int i = 0; i < 16; i++)
    rnd();
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    fprintf(stderr, "gen_join: cannot write %s: %s\n", path, strerror(errno));
    return 1;
  }
  out = slk_file_open(fd,
                      "host=gen\npid=4242\ncmdline=gen_join\nslack_version=gen_join\n"
                      "clock=CLOCK_MONOTONIC\ngpu_records=on\n",
                      1, (size_t)chunk);
  if (!out) return 1;
  static const char *const names[] = {"k_alpha", "k_beta", "_Z5gammaPfi", "k_delta"};
  uint32_t kname[4];
  for (int k = 0; k < 4; k++)
    kname[k] = slk_file_intern(out, names[k], strlen(names[k]));
  add(&(struct slk_record){.kind = SLK_DEVICE,
                           .device = 0,
                           .name = slk_file_intern(out, "GPU", 3),
                           .regs = 132,
                           .bytes = 1ull << 34});
  uint64_t *clock = calloc((size_t)threads, sizeof *clock), *tid = calloc((size_t)threads, 8);
  uint64_t *last_end = calloc((size_t)threads, sizeof *last_end);
  struct queue *ring = calloc((size_t)threads, sizeof *ring), cupti = {0}, gpu = {0};
  if (!clock || !tid || !last_end || !ring) return 1;
  uint64_t base = huge ? ((uint64_t)1 << 62) - 50000000ull : 1000000000ull + below(1000000000);
  for (long t = 0; t < threads; t++) {
    clock[t] = base + (uint64_t)t * 777;
    tid[t] = chance(50) ? 100 + (uint64_t)t : rnd();
  }
  uint32_t corr = (uint32_t)below(1000) + 1;
  for (long n = 0; n < launches; n++) {
    long t = (long)below((uint64_t)threads);
    /* the id: mostly the next one, sometimes a jump (rarely to the top of the range) */
    unsigned p = (unsigned)below(1000);
    corr = p < 990 ? corr + 1 : p < 997 ? corr + (uint32_t)below(100000) : (uint32_t)rnd();
    if (!corr) corr = 1;
    uint64_t start = clock[t] + below(3000);
    if (chance(3) && last_end[t] > base + 5000) start = last_end[t] - below(5000); /* overlaps */
    uint64_t hd = chance(5) ? 0 : chance(3) ? below(2000000) : 500 + below(8000);
    uint64_t end = start + hd;
    struct slk_record h = {.kind = SLK_HOST,
                           .tid = tid[t],
                           .start = start,
                           .end = end,
                           .fn = (uint32_t)below(SLK_FN_COUNT),
                           .corr = chance(20)  ? corr
                                   : chance(2) ? (uint32_t)rnd()
                                               : 0};
    if (!chance(4)) push(&ring[t], &h);
    /* its API records */
    unsigned na = chance(10) ? 0 : chance(85) ? 1 : chance(70) ? 2 : 3 + (unsigned)below(10);
    for (unsigned a = 0; a < na; a++) {
      uint64_t as = start + below(hd + 1), ae = as + below(end - as + 1);
      unsigned where = (unsigned)below(100);
      if (where < 8) { /* around or across the host call */
        as = start > 3000 ? start - below(3000) : start;
        ae = end + below(4000);
      } else if (where < 12) { /* far away */
        as = start + below(10000000);
        ae = as + below(10000);
      }
      struct slk_record r = {.kind = SLK_API,
                             .tid =
                                 where >= 12 && where < 16 ? tid[below((uint64_t)threads)] : tid[t],
                             .start = as,
                             .end = ae,
                             .corr = chance(1) ? 0 : corr,
                             .fn = 211 + (uint32_t)below(3),
                             .result = 0};
      push(&cupti, &r);
    }
    /* its GPU work */
    unsigned nk = chance(10) ? 0 : chance(90) ? 1 : 2 + (unsigned)below(12);
    uint32_t graph = chance(10) ? (uint32_t)below(50) + 1 : 0;
    for (unsigned k = 0; k < nk; k++) {
      uint64_t gs = end + below(100000);
      struct slk_record g = {.kind = SLK_KERNEL,
                             .device = 0,
                             .stream = 7 + below(3),
                             .start = gs,
                             .end = gs + duration(),
                             .corr = chance(2)   ? 0
                                     : chance(2) ? corr - (uint32_t)below(50)
                                                 : corr,
                             .name = kname[below(4)],
                             .graph_id = chance(3) ? (uint32_t)below(3) : graph};
      unsigned what = (unsigned)below(100);
      if (what < 10) {
        g.kind = SLK_MEMCPY;
        g.copy_kind = (uint8_t)(1 + below(10));
        g.bytes = chance(50) ? 1u << 20 : below((uint64_t)1 << 32);
        g.name = 0;
        g.graph_id = 0;
      } else if (what < 15) {
        g.kind = SLK_MEMSET;
        g.bytes = chance(50) ? 4096 : below((uint64_t)1 << 28);
        g.name = 0;
        g.graph_id = 0;
      }
      push(&gpu, &g);
    }
    last_end[t] = end > last_end[t] ? end : last_end[t];
    clock[t] = end + below(20000);
    if (hd > 100000 && chance(30)) clock[t] = start + below(hd); /* the next calls inside it */
    if (chance(2)) clock[t] += below(50000000);
    if (huge && chance(1)) clock[t] += (uint64_t)1 << 50;
    /* the queues reach the file at random */
    if (chance(3)) flush(&ring[t]);
    if (chance(1)) flush(&cupti);
    if (chance(1)) flush(&gpu);
  }
  for (long t = 0; t < threads; t++)
    flush(&ring[t]);
  flush(&cupti);
  flush(&gpu);
  if (slk_file_close(out) || close(fd)) {
    fprintf(stderr, "gen_join: write failed: %s\n", strerror(errno));
    return 1;
  }
  return 0;
}

/* slack report on a long trace, window by window (report.h, docs/slack-report.md "Long
 * traces"): memory depends on the window, not on the trace's length.
 *
 * A first pass reads the file once, decoding only the records' times: an index of its chunks
 * (offset, the time span of their records) and the records that carry no time (devices,
 * threads, the probe, drops). The time from the first to the last event is then cut into windows
 * of about `window_records` records each; each window loads the records that overlap it from
 * the chunks that overlap it (clipped to it), is classified on its own (cls_run with its bounds
 * forced) and folded into running totals, then freed. The kernels summed by name and the host
 * calls by function and thread (exact, as the whole-trace report) are summed by the windows, each
 * record in the window its start falls in. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __SSE2__
#include <emmintrin.h> /* _mm_stream_si128 */
#endif
#ifdef __GLIBC__
#include <malloc.h> /* mallopt */
#include <sys/mman.h>
#endif

#include "classify.h"
#include "join.h"
#include "ranks.h"
#include "report.h"
#include "slack.h"
#include "u64map.h"

struct chunk_ix {
  uint64_t off;
  uint64_t s0, s1, e1; /* its timed records: first and last start, last end */
  uint32_t n;          /* timed records */
};

struct ksum { /* a kernel name (string id) on a device */
  uint32_t device, name;
  uint64_t count, total_ns;
};

/* a GPU's running sums that are means weighted by steps */
/* The windows' steps of one kind (source and detail: "NVTX range step", "126 GPU operations
 * per step, starting at ..."): windows can find different steps (a phase of tiny operations, then
 * the training loop); the kind whose steps cover the most GPU busy time is the report's, as the
 * pattern rule picks on the whole trace (steps.h). */
struct stepgrp {
  char key[160];
  size_t period; /* pattern steps: the first window's operations per step (step_key) */
  double busy;   /* steps x their busy time per step */
  double steps, step, per[CLS_COUNT], shared[CLS_COUNT], lc, lf, ch, cp, oh, sk, ll, rt, gw, su, lb,
      lbusy, pwait, lbnone, tr, rstep, cstep;
  double stn, stns; /* copy stall's staged copies (classify.h copy_stall_copies): count, GPU time */
  double ltail, ltstep, ltlo, lthi,
      ltail_steps;             /* the windows with an untraced tail (launch overhead's point) */
  double wi[CLS_COUNT + 3][4]; /* the classes', then copy_both, all, host (classify.h) */
  size_t best_steps; /* the window with the most steps gives the detail and the candidates */
  /* the last window folded here (rp->windows' count then, 0: none): the end of its last step, its
   * mean step, whether it ran in cycles (edge_steps) */
  size_t last_win;
  uint64_t last_end, last_step;
  int last_cycle;
  int ptraced; /* a window's producer submitted GPU work (cls_steps.producer_traced) */
  size_t edge; /* steps counted at the windows' edges (in out.steps.count) */
  int replay_bad;
  struct cls_gpu out; /* steps, whatif*, replay_* */
};

struct acc {
  struct stepgrp *grp;
  size_t ngrp;
  size_t marks[2]; /* the windows' per-iteration marks (cls_steps.marks), summed */
  uint64_t comm_ns;
  struct u64map site_at[CLS_COUNT]; /* hash of the site text -> index in sites */
  size_t site_cap[CLS_COUNT];
};

static const char *file_str(const void *ctx, uint32_t id) {
  return trace_reader_string((const struct trace_reader *)ctx, id);
}

static int timed_kind(int k) {
  return k == SLK_KERNEL || k == SLK_MEMCPY || k == SLK_MEMSET || k == SLK_API || k == SLK_HOST ||
         k == SLK_MARKER || k == SLK_OVERHEAD || k == SLK_SAMPLE;
}

static uint64_t rec_end(const struct slk_record *r) {
  return r->end > r->start ? r->end : r->start;
}

static uint64_t dur(const struct slk_record *r) {
  return r->end > r->start ? r->end - r->start : 0;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t fnv(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (uint8_t)*s) * 1099511628211ull;
  return h ? h : 1;
}

/* ---- the first pass ---- */

struct pass1 {
  struct chunk_ix *ix;
  size_t nix, cap;
  struct trace_data meta;   /* DEVICE, PROBE, THREAD, DROPS, WINDOW */
  uint64_t records, t0, t1; /* timed records; first start and last end of GPU work and calls */
  struct trace_data all;    /* everything report_load keeps, while the trace is short */
  int short_so_far;
  uint64_t whole;               /* more timed records than this: long, read in windows */
  int times;                    /* trace_reader_set_times' mode once the trace is known long */
  uint64_t ops[256][3];         /* kernels, copies, memsets per device (a window counts those that
                                   cross its edges twice) */
  uint64_t kinds[SLK_KIND_MAX]; /* timed records per kind */
};

/* Record r of the first pass. Inlined in its loop: called once a record, its registers saved and
 * restored cost a fifth of its instructions. */
static inline __attribute__((always_inline)) int
pass1_record(struct pass1 *p, struct trace_reader *rd, const struct slk_record *r) {
  int k = r->kind;
  if (p->short_so_far && (REPORT_LOAD_MASK & TRACE_KIND_BIT(k)) && trace_data_add(&p->all, r))
    return -1;
  if (k == SLK_DEVICE || k == SLK_PROBE || k == SLK_THREAD || k == SLK_DROPS || k == SLK_WINDOW ||
      k == SLK_TAKEN || k == SLK_STREAM)
    return trace_data_add(&p->meta, r);
  if (!timed_kind(k)) return 0;
  uint64_t off = trace_reader_chunk_offset(rd);
  if (!p->nix || p->ix[p->nix - 1].off != off) {
    if (p->nix == p->cap) {
      size_t c = p->cap ? p->cap * 2 : 1024;
      struct chunk_ix *v = realloc(p->ix, c * sizeof *v);
      if (!v) return -1;
      p->ix = v;
      p->cap = c;
    }
    p->ix[p->nix++] = (struct chunk_ix){off, UINT64_MAX, 0, 0, 0};
  }
  struct chunk_ix *c = &p->ix[p->nix - 1];
  if (r->start < c->s0) c->s0 = r->start;
  if (r->start > c->s1) c->s1 = r->start;
  if (rec_end(r) > c->e1) c->e1 = rec_end(r);
  c->n++;
  p->kinds[k]++;
  if (++p->records > p->whole && p->short_so_far) { /* long: windows */
    trace_data_free(&p->all);
    p->short_so_far = 0;
    /* from here on only the fields read above and below: the times, kind, device and thread
     * (the records without time are still decoded whole) */
    trace_reader_set_times(rd, p->times);
  }
  if ((k == SLK_KERNEL || k == SLK_MEMCPY || k == SLK_MEMSET) && r->device < 256)
    p->ops[r->device][k - SLK_KERNEL]++;
  if (k == SLK_KERNEL || k == SLK_MEMCPY || k == SLK_MEMSET || k == SLK_HOST) {
    if (!p->t1 || r->start < p->t0) p->t0 = r->start;
    if (rec_end(r) > p->t1) p->t1 = rec_end(r);
  }
  return 0;
}

/* The kernels summed by name and the host calls by function and thread over the whole trace,
 * by the windows: each record in the window its start falls in, before it is clipped (the first
 * pass decodes only the times, the windows decode the kernels and calls whole anyway). */
struct sums {
  struct report *rp; /* the host calls' sums: rp->fn, rp->threads, host_calls, host_blocked_ns */
  struct ksum *ks;
  size_t nks, kcap;
  struct u64map ks_at, th_at;
  size_t threads_cap;
  /* the maps' answers found last, by a few bits of the key (most records hit: a trace has few
   * kernel names and threads): key + 1 (0: none) and its place */
  uint64_t ks_near[64], th_near[16];
  size_t ks_near_at[64], th_near_at[16];
};

/* Kernel r summed by name id per device. -1 when out of memory. */
static int sums_kernel(struct sums *S, const struct slk_record *r) {
  uint64_t key = (uint64_t)r->device << 32 | r->name, at;
  size_t kn = (r->name * 7u + r->device) % 64;
  int near = S->ks_near[kn] == key + 1;
  if (near) at = S->ks_near_at[kn];
  if (near || u64map_get(&S->ks_at, key, &at)) {
    S->ks_near[kn] = key + 1;
    S->ks_near_at[kn] = at;
    S->ks[at].count++;
    S->ks[at].total_ns += dur(r);
    return 0;
  }
  if (S->nks == S->kcap) {
    size_t n = S->kcap ? S->kcap * 2 : 256;
    struct ksum *v = realloc(S->ks, n * sizeof *v);
    if (!v) return -1;
    S->ks = v;
    S->kcap = n;
  }
  size_t slot = u64map_add(&S->ks_at, key);
  if (slot == (size_t)-1) return -1;
  S->ks_at.val[slot] = S->nks;
  S->ks[S->nks++] = (struct ksum){r->device, r->name, 1, dur(r)};
  return 0;
}

/* Host call r summed by function and thread, as host_compute (report.c) sums them. -1 when out
 * of memory. */
static int sums_host(struct sums *S, const struct slk_record *r) {
  struct report *rp = S->rp;
  struct fn_sum *f = &rp->fn[r->fn < SLK_FN_COUNT ? r->fn : SLK_FN_COUNT];
  int blocking = slk_host_blocks(r->fn, r->flags);
  f->calls++;
  f->total_ns += dur(r);
  if (blocking) f->blocked_ns += dur(r);
  rp->host_calls++;
  if (blocking) rp->host_blocked_ns += dur(r);
  uint64_t at;
  size_t tn = r->tid % 16;
  int near = S->th_near[tn] == r->tid + 1;
  if (near) at = S->th_near_at[tn];
  if (near || u64map_get(&S->th_at, r->tid, &at)) {
    S->th_near[tn] = r->tid + 1;
    S->th_near_at[tn] = at;
    rp->threads[at].calls++;
    rp->threads[at].busy_ns += dur(r);
    rp->threads[at].blocked_ns += blocking ? dur(r) : 0;
    return 0;
  }
  if (rp->nthreads == S->threads_cap) {
    size_t n = S->threads_cap ? S->threads_cap * 2 : 64;
    struct thread_sum *v = realloc(rp->threads, n * sizeof *v);
    if (!v) return -1;
    rp->threads = v;
    S->threads_cap = n;
  }
  size_t slot = u64map_add(&S->th_at, r->tid);
  if (slot == (size_t)-1) return -1;
  S->th_at.val[slot] = rp->nthreads;
  rp->threads[rp->nthreads++] = (struct thread_sum){0, r->tid, 0, 1, dur(r), blocking ? dur(r) : 0};
  return 0;
}

static void sums_free(struct sums *S) {
  free(S->ks);
  u64map_free(&S->ks_at);
  u64map_free(&S->th_at);
}

static int cmp_thread(const void *pa, const void *pb) {
  const struct thread_sum *a = pa, *b = pb;
  return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static void host_finish(struct report *rp, const struct trace_data *meta) {
  qsort(rp->threads, rp->nthreads, sizeof *rp->threads, cmp_thread);
  report_order_fns(rp);
  const struct trace_array *ta = &meta->kind[SLK_THREAD];
  for (size_t k = 0; k < ta->n; k++)
    for (size_t t = 0; t < rp->nthreads; t++)
      if (rp->threads[t].tid == ta->v[k].tid) rp->threads[t].name = ta->v[k].name;
}

/* ---- windows ---- */

/* Timed records that start before t, the chunks' records taken as spread evenly over their
 * starts. */
static double starts_before(const void *ctx, uint64_t t) {
  const struct pass1 *p = ctx;
  double n = 0;
  for (size_t i = 0; i < p->nix; i++) {
    const struct chunk_ix *c = &p->ix[i];
    if (t <= c->s0) continue;
    if (t > c->s1 || c->s1 == c->s0)
      n += c->n;
    else
      n += (double)c->n * (double)(t - c->s0) / (double)(c->s1 - c->s0);
  }
  return n;
}

/* Per GPU of cr (the window's: one file, one host), the time its communication kernels ran
 * (their union), as ranks_comm_kernel_ns sums it: in one pass over the window's kernels, which
 * are in start order (the union is made as they come). NULL when out of memory. */
static uint64_t *window_comm(const struct cls_gpu_rec *kv, size_t nk, const struct cls_result *cr,
                             const struct trace_reader *rd) {
  size_t ng = cr->ngpus;
  uint64_t *total = calloc(ng ? ng : 1, sizeof *total), *a = calloc(ng ? ng : 1, sizeof *a);
  uint64_t *b = calloc(ng ? ng : 1, sizeof *b);
  uint8_t *any = calloc(ng ? ng : 1, 1);
  if (!total || !a || !b || !any) {
    free(total);
    free(a);
    free(b);
    free(any);
    return NULL;
  }
  struct cls_comm_memo cm;
  memset(&cm, 0, sizeof cm);
  size_t gi = 0;
  for (size_t j = 0; j < nk; j++) {
    const struct cls_gpu_rec *r = &kv[j];
    if (r->end <= r->start) continue;
    if (gi >= ng || cr->gpus[gi].device != r->device) /* the last one found first */
      for (gi = 0; gi < ng && cr->gpus[gi].device != r->device; gi++)
        ;
    if (gi == ng) continue;
    int c;
    if (!cls_comm_memo_get(&cm, r->name, &c))
      c = cls_comm_memo_put(&cm, r->name, cls_is_comm_kernel(trace_reader_string(rd, r->name)));
    if (!c) continue;
    if (any[gi] && r->start <= b[gi]) {
      if (r->end > b[gi]) b[gi] = r->end;
      continue;
    }
    total[gi] += b[gi] - a[gi];
    a[gi] = r->start;
    b[gi] = r->end;
    any[gi] = 1;
  }
  for (gi = 0; gi < ng; gi++)
    total[gi] += b[gi] - a[gi];
  free(a);
  free(b);
  free(any);
  return total;
}

/* The window's records, sorted as they are decoded: they arrive nearly in order (each stream's
 * and thread's in order, the streams and threads interleaved), so each timed kind's records
 * wait in a small ring, in L1/L2, queued per stream (GPU work) or thread (the rest), and the
 * least of the queues' heads goes to its array (its final place) when the ring is full: a
 * merge. The order is trace_array_sort's: (start, end, corr), ties in the order the records
 * came. Where that does not hold (a queue's record less than the one before it, more streams or
 * threads than a ring has queues, a record less than one already out), the kind's array is
 * sorted again at the end; the records equal in (start, end, corr) still went out in the order
 * they came (each queue is in order, and after a queue's disorder the rest go out as they
 * come), so the stable sort gives the same order. */
enum { WRING = 1024, WSRC = 32 }; /* records a kind's ring holds (a power of 2); queues */
#define WNONE 0xffffffffu

struct wring {
  struct slk_record *rec;          /* WRING slots (the GPU kinds: grec instead) */
  struct cls_gpu_rec *grec;        /* the GPU kinds' slots: a record as it goes out (48 bytes) */
  uint64_t *start;                 /* per slot: its record's start */
  uint32_t *seq, *next;            /* the order it came in; the next slot in its queue */
  uint64_t src[WSRC];              /* per queue: its stream or thread */
  uint32_t head[WSRC], tail[WSRC]; /* slots, head WNONE: empty */
  uint64_t hstart[WSRC];           /* the start of each queue's head; UINT64_MAX: empty */
  /* per few bits of a stream's or thread's key, its queue found last + 1 (0: none; checked
   * against src): the streams and threads come interleaved, a search each would miss its exit */
  uint8_t src_at[64];
  uint32_t nsrc, seqn, fresh, spare; /* fresh: slots not used yet; spare: a free one */
  size_t n;                          /* records waiting */
  int unsorted, append;        /* append: the records go out as they come (sorted at the end) */
  int outs;                    /* records gone out to the array */
  struct wcomm *comm;          /* the kernels' ring: their communication sums */
  struct wgpu *gpu;            /* the GPU records' rings: they go out as cls_gpu_rec */
  struct whost *host;          /* the host calls' ring: they go out as cls_host_rec */
  uint64_t out_start, out_end; /* the last one's key */
  uint32_t out_corr;
};

/* The window's API records as the launch join's spans (cls_input.api): the classifier reads
 * nothing else of them, and a span is a quarter of a record (fewer bytes written here and read
 * there). In the order they come (no ring): the join orders them by id, then start, end and the
 * order they came (join_set_build), which is the order it gave them when they came sorted by
 * (start, end, id) with ties in the order they came. */
struct wspans {
  struct join_span *v;
  size_t n, cap;
};

/* The window's kernels, copies or memsets as the classifier reads them (cls_input.gpu), in the
 * order the records would have in their array: a record's 128 bytes written and read again
 * where 48 do. */
struct wgpu {
  struct cls_gpu_rec *v;
  size_t n, cap;
};

/* The window's host calls as the classifier reads them (cls_input.hcall), in the order the
 * records would have in their array: 64 bytes a call where a record takes 128. */
struct whost {
  struct cls_host_rec *v;
  size_t n, cap;
};

/* The window's communication kernels per device (window_comm's sums), made as the kernels go
 * out of their ring in order: no pass over the kernels' array. ok 0: not made this way (a
 * device past 256, kernels sorted again at the end): window_comm then. */
struct wcomm {
  int ok;
  const struct trace_reader *rd;
  struct cls_comm_memo cm;
  uint64_t a[256], b[256], total[256];
  uint8_t any[256];
};

/* The records a window decoded from the chunks the next window reads too (a window's edge cuts
 * through a chunk's starts: 23 of the 10 M bench trace's 167 chunks, 1.4 M records), that the
 * next window would keep: its records starting at or after the window's end b, or ending after
 * it, as decoded (not clipped), in the order they came. The next window takes them from here in
 * place of seeking and decoding those chunks again; a chunk cut by two edges is carried on.
 * Kept compact (wcarry_put): each record its kind's byte, then the fields its decode fills (the
 * API records' and kernels' of slk_decode_light, which is all the window reads of them), or the
 * whole record for the rarer kinds: 29-66 bytes a record in place of 128, fresh memory a run
 * touches. In blocks of bs bytes (WC_BLOCK; SLACK_REPORT_CARRY_BLOCK, for the tests) kept from
 * window to window, a record never across two (WC_NEXT where the rest of a block is left), not
 * one array grown by doubling: each growth took a block twice as large from fresh memory, which a
 * carry larger than any before (a later window's) touched again; the blocks a window uses are
 * those a window before it used. */
#define WC_BLOCK (256u << 10)
#define WC_NEXT 0xff /* in place of a kind's byte: the next record at the next block's start */
struct wcarry {
  uint8_t **blk;     /* the records, wcarry_put's forms one after the other, in blocks */
  size_t nblk, cblk; /* blocks (room for cblk) */
  size_t bs;         /* a block's bytes */
  size_t n;          /* bytes, counted over the blocks (byte n at blk[n / bs]) */
  uint8_t *at;       /* byte n, in block bi (NULL: none yet), with left bytes of it after it: */
  size_t bi, left;   /* a record's place without a division (three a record: a third of a put) */
  struct wcarried {  /* per chunk carried, in the chunks' order: its index and records (bytes) */
    size_t chunk, from, to;
  } * c;
  size_t nc, ccap;
  uint64_t b; /* the window's end: the next window's start */
  int made;   /* 1: made by the window before (its end b) */
};

/* the carry's forms: an API record's fields of slk_decode_light, a GPU record's (a kernel's of
 * slk_decode_light: its bytes, flags and memory kinds zero), a host call's of slk_decode */
struct __attribute__((packed)) wc_api {
  uint64_t tid, start, end;
  uint32_t corr;
};
struct __attribute__((packed)) wc_gpu {
  uint64_t start, end, stream, bytes;
  uint32_t device, corr, name, flags, graph_id;
  uint8_t copy_kind, src_kind, dst_kind;
};
struct __attribute__((packed)) wc_host {
  uint64_t tid, start, end, stream, bytes;
  uint32_t fn, flags, result, callsite, corr, pystack;
  uint8_t copy_kind;
};

struct wrings {
  struct wcarry carry[2]; /* the one being made, the one made by the window before */
  struct wring r[SLK_KIND_MAX];
  struct wcomm comm;
  struct wspans api;
  struct wgpu gpu[3]; /* kernels, copies, memsets */
  struct whost host;
};

/* Byte n of carry w. */
static inline uint8_t *wcarry_at(const struct wcarry *w, size_t n) {
  return w->blk[n / w->bs] + n % w->bs;
}

/* Record r, of chunk i, to the end of carry w. -1 when out of memory. */
static int wcarry_put(struct wcarry *w, size_t i, const struct slk_record *r) {
  if (w->left < 1 + sizeof *r) { /* the rest of this block left: the next one */
    if (w->at) {
      if (w->left) *w->at = WC_NEXT;
      w->n += w->left;
      w->bi++;
    } else {
      w->bi = 0; /* n is 0 */
    }
    if (w->bi == w->nblk) {
      if (w->nblk == w->cblk) {
        size_t cap = w->cblk ? w->cblk * 2 : 16;
        uint8_t **v = realloc(w->blk, cap * sizeof *v);
        if (!v) return -1;
        w->blk = v;
        w->cblk = cap;
      }
      if (!(w->blk[w->nblk] = malloc(w->bs))) return -1;
      w->nblk++;
    }
    w->at = w->blk[w->bi];
    w->left = w->bs;
  }
  if (!w->nc || w->c[w->nc - 1].chunk != i) {
    if (w->nc == w->ccap) {
      size_t cap = w->ccap ? w->ccap * 2 : 16;
      struct wcarried *c = realloc(w->c, cap * sizeof *c);
      if (!c) return -1;
      w->c = c;
      w->ccap = cap;
    }
    w->c[w->nc++] = (struct wcarried){i, w->n, w->n};
  }
  uint8_t *p0 = w->at, *p = p0;
  *p++ = r->kind;
  switch (r->kind) {
  case SLK_API: {
    struct wc_api c = {r->tid, r->start, r->end, r->corr};
    memcpy(p, &c, sizeof c);
    p += sizeof c;
    break;
  }
  case SLK_KERNEL:
  case SLK_MEMCPY:
  case SLK_MEMSET: {
    struct wc_gpu c = {r->start, r->end,   r->stream,   r->bytes,     r->device,   r->corr,
                       r->name,  r->flags, r->graph_id, r->copy_kind, r->src_kind, r->dst_kind};
    memcpy(p, &c, sizeof c);
    p += sizeof c;
    break;
  }
  case SLK_HOST: {
    struct wc_host c = {r->tid,   r->start,  r->end,      r->stream, r->bytes,   r->fn,
                        r->flags, r->result, r->callsite, r->corr,   r->pystack, r->copy_kind};
    memcpy(p, &c, sizeof c);
    p += sizeof c;
    break;
  }
  default: memcpy(p, r, sizeof *r); p += sizeof *r;
  }
  w->n += (size_t)(p - p0);
  w->at = p;
  w->left -= (size_t)(p - p0);
  w->c[w->nc - 1].to = w->n;
  return 0;
}

/* The record at p of a carry to r, as its decode left it (an API record or kernel: the fields
 * slk_decode_light fills, the others as they were); the bytes it took. */
static size_t wcarry_get(const uint8_t *p, struct slk_record *r) {
  static const struct slk_record zero;
  int k = p[0];
  switch (k) {
  case SLK_API: {
    struct wc_api c;
    memcpy(&c, p + 1, sizeof c);
    r->device = 0;
    r->stream = r->bytes = 0;
    r->name = r->fn = r->flags = r->result = r->callsite = r->graph_id = 0;
    r->copy_kind = r->src_kind = r->dst_kind = 0;
    r->kind = (uint8_t)k;
    r->tid = c.tid;
    r->start = c.start;
    r->end = c.end;
    r->corr = c.corr;
    return 1 + sizeof c;
  }
  case SLK_KERNEL:
  case SLK_MEMCPY:
  case SLK_MEMSET: {
    struct wc_gpu c;
    memcpy(&c, p + 1, sizeof c);
    if (k == SLK_KERNEL) {
      r->tid = 0;
      r->fn = r->result = r->callsite = 0;
    } else {
      *r = zero;
    }
    r->kind = (uint8_t)k;
    r->start = c.start;
    r->end = c.end;
    r->stream = c.stream;
    r->bytes = c.bytes;
    r->device = c.device;
    r->corr = c.corr;
    r->name = c.name;
    r->flags = c.flags;
    r->graph_id = c.graph_id;
    r->copy_kind = c.copy_kind;
    r->src_kind = c.src_kind;
    r->dst_kind = c.dst_kind;
    return 1 + sizeof c;
  }
  case SLK_HOST: {
    struct wc_host c;
    memcpy(&c, p + 1, sizeof c);
    *r = zero;
    r->kind = (uint8_t)k;
    r->tid = c.tid;
    r->start = c.start;
    r->end = c.end;
    r->stream = c.stream;
    r->bytes = c.bytes;
    r->fn = c.fn;
    r->flags = c.flags;
    r->result = c.result;
    r->callsite = c.callsite;
    r->corr = c.corr;
    r->pystack = c.pystack;
    r->copy_kind = c.copy_kind;
    return 1 + sizeof c;
  }
  default: memcpy(r, p + 1, sizeof *r); return 1 + sizeof *r;
  }
}

static void wcomm_add(struct wcomm *c, const struct cls_gpu_rec *r) {
  if (r->end <= r->start) return;
  if (r->device >= 256) {
    c->ok = 0;
    return;
  }
  int m;
  if (!cls_comm_memo_get(&c->cm, r->name, &m))
    m = cls_comm_memo_put(&c->cm, r->name, cls_is_comm_kernel(trace_reader_string(c->rd, r->name)));
  if (!m) return;
  uint32_t d = r->device;
  if (c->any[d] && r->start <= c->b[d]) {
    if (r->end > c->b[d]) c->b[d] = r->end;
    return;
  }
  c->total[d] += c->b[d] - c->a[d];
  c->a[d] = r->start;
  c->b[d] = r->end;
  c->any[d] = 1;
}

/* the record in slot a before the one in slot b, in the sort's order */
static inline int wslot_before(const struct wring *g, uint32_t a, uint32_t b) {
  if (g->start[a] != g->start[b]) return g->start[a] < g->start[b];
  uint64_t xe, ye;
  uint32_t xc, yc;
  if (g->grec) {
    xe = g->grec[a].end, ye = g->grec[b].end, xc = g->grec[a].corr, yc = g->grec[b].corr;
  } else {
    xe = g->rec[a].end, ye = g->rec[b].end, xc = g->rec[a].corr, yc = g->rec[b].corr;
  }
  if (xe != ye) return xe < ye;
  if (xc != yc) return xc < yc;
  return g->seq[a] < g->seq[b];
}

/* ta's records twice as many, on a cache line (a record's first 64 bytes in one line): the
 * arrays a window's records go to. -1 when out of memory. */
static int warray_grow(struct trace_array *ta) {
  size_t cap = ta->cap ? ta->cap * 2 : 1024;
  void *v;
  if (posix_memalign(&v, 64, cap * sizeof *ta->v)) return -1;
  if (ta->n) memcpy(v, ta->v, ta->n * sizeof *ta->v);
  free(ta->v);
  ta->v = v;
  ta->cap = cap;
  return 0;
}

static int wput(struct trace_array *ta, const struct slk_record *r) {
  if (ta->n == ta->cap && warray_grow(ta)) return -1;
  struct slk_record *d = &ta->v[ta->n++];
#ifdef __SSE2__
  /* into an array larger than the caches: stored past them (no read of the line first, which
   * made the copy cost three times as much); the classifier reads the array from memory anyway */
  if (ta->cap * sizeof *d >= (4u << 20) && !((uintptr_t)d & 15) && sizeof *d % 16 == 0) {
    const __m128i *from = (const __m128i *)(const void *)r;
    __m128i *to = (__m128i *)(void *)d;
    for (size_t i = 0; i < sizeof *d / 16; i++)
      _mm_stream_si128(to + i, _mm_loadu_si128(from + i));
    return 0;
  }
#endif
  *d = *r;
  return 0;
}

/* The record in g's slot to the end of g's output: its kind's array, or its GPU records'. -1
 * when out of memory. */
static int wout(struct wring *g, struct trace_array *ta, uint32_t slot) {
  struct wgpu *q = g->gpu;
  if (q) {
    if (q->n == q->cap) {
      size_t cap = q->cap ? q->cap * 2 : 1024;
      struct cls_gpu_rec *v = realloc(q->v, cap * sizeof *v);
      if (!v) return -1;
      q->v = v;
      q->cap = cap;
    }
    q->v[q->n++] = g->grec[slot];
    return 0;
  }
  struct whost *h = g->host;
  if (h) {
    if (h->n == h->cap) {
      size_t cap = h->cap ? h->cap * 2 : 1024;
      struct cls_host_rec *v = realloc(h->v, cap * sizeof *v);
      if (!v) return -1;
      h->v = v;
      h->cap = cap;
    }
    h->v[h->n++] = cls_host_rec_of(&g->rec[slot]);
    return 0;
  }
  return wput(ta, &g->rec[slot]);
}

/* GPU record r as the classifier reads it (scratch 0) */
static inline void wgpu_rec(struct cls_gpu_rec *d, const struct slk_record *r) {
  *d = (struct cls_gpu_rec){r->start,  r->end,  r->stream,    r->corr,     r->name,     r->graph_id,
                            r->device, r->kind, r->copy_kind, r->src_kind, r->dst_kind, 0};
}

/* API record r to the end of s as a span. -1 when out of memory. */
static int wspan_add(struct wspans *s, const struct slk_record *r) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 1024;
    struct join_span *v = realloc(s->v, cap * sizeof *v);
    if (!v) return -1;
    s->v = v;
    s->cap = cap;
  }
  /* as join_set_add makes it (the window's records end at or after their start) */
  s->v[s->n++] =
      (struct join_span){r->tid, r->start, r->end > r->start ? r->end : r->start, r->corr, 0};
  return 0;
}

static int cmp_gpu_rec(const void *pa, const void *pb) {
  const struct cls_gpu_rec *a = pa, *b = pb;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  if (a->end != b->end) return a->end < b->end ? -1 : 1;
  if (a->corr != b->corr) return a->corr < b->corr ? -1 : 1;
  return a->scratch < b->scratch ? -1 : a->scratch > b->scratch;
}

/* The GPU records sorted as trace_array_sort sorts them: by (start, end, corr), stably (scratch
 * the place they came in). */
static void wgpu_sort(struct wgpu *q) {
  for (size_t i = 0; i < q->n; i++)
    q->v[i].scratch = (uint32_t)i;
  qsort(q->v, q->n, sizeof *q->v, cmp_gpu_rec);
  for (size_t i = 0; i < q->n; i++)
    q->v[i].scratch = 0;
}

static int cmp_host_rec(const void *pa, const void *pb) {
  const struct cls_host_rec *a = pa, *b = pb;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  if (a->end != b->end) return a->end < b->end ? -1 : 1;
  if (a->corr != b->corr) return a->corr < b->corr ? -1 : 1;
  return a->scratch < b->scratch ? -1 : a->scratch > b->scratch;
}

/* The host calls sorted as trace_array_sort sorts their records: by (start, end, corr), stably
 * (scratch the place they came in). */
static void whost_sort(struct whost *q) {
  for (size_t i = 0; i < q->n; i++)
    q->v[i].scratch = (uint32_t)i;
  qsort(q->v, q->n, sizeof *q->v, cmp_host_rec);
  for (size_t i = 0; i < q->n; i++)
    q->v[i].scratch = 0;
}

/* The least of the queues' heads to the end of ta; its slot. -1 when out of memory. */
static int64_t wring_pop(struct wring *g, struct trace_array *ta) {
  uint64_t m = UINT64_MAX;
  uint32_t bs = 0, ties = 0;
  for (uint32_t s = 0; s < g->nsrc; s++) /* the least start (no branch) */
    if (g->hstart[s] < m) m = g->hstart[s], bs = s;
  for (uint32_t s = 0; s < g->nsrc; s++)
    ties += g->hstart[s] == m;
  if (ties > 1 || m == UINT64_MAX) { /* heads of equal starts (or an empty queue's mark) */
    uint32_t best = WNONE;
    for (uint32_t s = 0; s < g->nsrc; s++) {
      uint32_t h = g->head[s];
      if (h != WNONE && (best == WNONE || wslot_before(g, h, best))) best = h, bs = s;
    }
  }
  uint32_t best = g->head[bs], nx = g->next[best];
  if (wout(g, ta, best)) return -1;
  if (g->grec) {
    const struct cls_gpu_rec *r = &g->grec[best];
    if (g->comm) wcomm_add(g->comm, r);
    g->out_end = r->end;
    g->out_corr = r->corr;
  } else {
    g->out_end = g->rec[best].end;
    g->out_corr = g->rec[best].corr;
  }
  g->outs = 1;
  g->out_start = g->start[best];
  g->head[bs] = nx;
  g->hstart[bs] = nx == WNONE ? UINT64_MAX : g->start[nx];
  g->n--;
  return best;
}

/* A free slot of g's ring (the least waiting record goes out when it is full): g->spare. -1 when
 * out of memory. The GPU kinds' rings (g->gpu set) have slots in grec, the others in rec. */
static int wring_slot(struct wring *g, struct trace_array *ta) {
  if (g->spare == WNONE) {
    if (!g->start) {
      if (g->gpu)
        g->grec = malloc(WRING * sizeof *g->grec);
      else
        g->rec = malloc(WRING * sizeof *g->rec);
      g->start = malloc(WRING * sizeof *g->start);
      g->seq = malloc(WRING * sizeof *g->seq);
      g->next = malloc(WRING * sizeof *g->next);
      if ((!g->rec && !g->grec) || !g->start || !g->seq || !g->next) return -1;
    }
    if (g->fresh < WRING) {
      g->spare = g->fresh++;
    } else {
      int64_t s = wring_pop(g, ta);
      if (s < 0) return -1;
      g->spare = (uint32_t)s;
    }
  }
  return 0;
}

/* The record in g's spare slot waits for its place. -1 when out of memory. */
static int wring_add(struct wring *g, struct trace_array *ta) {
  uint32_t slot = g->spare;
  if (g->append) return wout(g, ta, slot); /* the slot stays spare */
  uint64_t start, end, key;
  uint32_t corr;
  if (g->grec) {
    const struct cls_gpu_rec *r = &g->grec[slot];
    start = r->start, end = r->end, corr = r->corr;
    key = (uint64_t)r->device << 48 ^ r->stream;
  } else {
    const struct slk_record *r = &g->rec[slot];
    start = r->start, end = r->end, corr = r->corr;
    key = r->tid;
  }
  g->spare = WNONE;
  g->start[slot] = start;
  g->seq[slot] = g->seqn++;
  g->next[slot] = WNONE;
  if (!g->unsorted && g->outs) { /* after the last one out? (not read back from ta: see wput) */
    if (start != g->out_start ? start < g->out_start
        : end != g->out_end   ? end < g->out_end
                              : corr < g->out_corr)
      g->unsorted = 1;
  }
  uint32_t at = (uint32_t)((key ^ key >> 32) * 0x9e3779b97f4a7c15ull >> 58);
  uint32_t s = g->src_at[at] - 1u; /* none: past nsrc */
  if (s >= g->nsrc || g->src[s] != key) {
    for (s = 0; s < g->nsrc && g->src[s] != key; s++)
      ;
    if (s == WSRC) goto out_of_order;
    if (s == g->nsrc) {
      g->src[s] = key;
      g->head[s] = WNONE;
      g->hstart[s] = UINT64_MAX;
      g->nsrc++;
    }
    g->src_at[at] = (uint8_t)(s + 1);
  }
  if (g->head[s] == WNONE) {
    g->head[s] = slot;
    g->hstart[s] = start;
  } else {
    if (wslot_before(g, slot, g->tail[s])) goto out_of_order;
    g->next[g->tail[s]] = slot;
  }
  g->tail[s] = slot;
  g->n++;
  return 0;
out_of_order: /* the waiting ones go out in order, then every record as it comes */
  while (g->n)
    if (wring_pop(g, ta) < 0) return -1;
  g->append = g->unsorted = 1;
  g->spare = slot;
  return wout(g, ta, slot);
}

/* Every waiting record to its array, sorted again where they came too far out of order. */
static int wring_drain(struct wring *g, struct trace_array *ta) {
  while (g->n)
    if (wring_pop(g, ta) < 0) return -1;
#ifdef __SSE2__
  _mm_sfence(); /* wput's stores */
#endif
  if (g->unsorted && g->gpu) wgpu_sort(g->gpu);
  if (g->unsorted && g->host) whost_sort(g->host);
  if (g->unsorted && !g->gpu && !g->host) trace_array_sort(ta, NULL);
  g->nsrc = g->seqn = g->fresh = 0;
  memset(g->src_at, 0, sizeof g->src_at);
  g->spare = WNONE;
  g->unsorted = g->append = g->outs = 0;
  return 0;
}

/* The window's records: what overlaps [a, b) (the first window: all that starts before b; the
 * last: all that ends after a), clipped to it, plus the devices, the probe, TAKEN
 * and stream map records.
 * td's arrays are the previous window's, emptied: their memory is reused, not allocated again. */
static int window_load(struct trace_reader *rd, const struct pass1 *p, uint64_t a, uint64_t b,
                       int first, int last, struct trace_data *td, struct wrings *wr,
                       struct sums *S) {
  for (int k = 0; k < SLK_KIND_MAX; k++) {
    td->kind[k].n = 0;
    wr->r[k].spare = WNONE;
  }
  memset(&td->dev, 0, sizeof td->dev); /* counted below as the records are kept */
  struct wcomm *cm = &wr->comm;        /* its memo of names kept from window to window */
  cm->ok = 1;
  cm->rd = rd;
  memset(cm->a, 0, sizeof cm->a);
  memset(cm->b, 0, sizeof cm->b);
  memset(cm->total, 0, sizeof cm->total);
  memset(cm->any, 0, sizeof cm->any);
  wr->r[SLK_KERNEL].comm = cm;
  wr->api.n = 0; /* the API records as spans (cls_input.api): their array stays empty */
  for (int k = SLK_KERNEL; k <= SLK_MEMSET; k++) { /* cls_input.gpu: theirs too */
    wr->gpu[k - SLK_KERNEL].n = 0;
    wr->r[k].gpu = &wr->gpu[k - SLK_KERNEL];
  }
  wr->host.n = 0; /* cls_input.hcall: the host calls' array stays empty too */
  wr->r[SLK_HOST].host = &wr->host;
  /* every stream map record: a window's calls take the latest one before them (cls_order.c) */
  static const int meta[] = {SLK_DEVICE, SLK_PROBE, SLK_TAKEN, SLK_STREAM};
  for (size_t m = 0; m < sizeof meta / sizeof meta[0]; m++)
    for (size_t i = 0; i < p->meta.kind[meta[m]].n; i++)
      if (trace_data_add(td, &p->meta.kind[meta[m]].v[i])) return -1;
  /* the carry made by the window before (when it ended where this one starts), and this one's */
  struct wcarry swap = wr->carry[0];
  wr->carry[0] = wr->carry[1];
  wr->carry[1] = swap;
  struct wcarry *from = &wr->carry[1], *to = &wr->carry[0];
  if (first || !from->made || from->b != a) from->nc = 0;
  size_t fc = 0; /* from's next chunk */
  to->n = to->nc = to->left = 0;
  to->at = NULL;
  to->b = b;
  to->made = !last;
  for (size_t i = 0; i < p->nix; i++) {
    const struct chunk_ix *c = &p->ix[i];
    if ((!last && c->s0 >= b) || (!first && c->e1 <= a && c->s1 < a)) continue;
    /* carried from the window before: its records from there, not decoded again */
    const struct wcarried *cc = fc < from->nc && from->c[fc].chunk == i ? &from->c[fc++] : NULL;
    size_t ci = cc ? cc->from : 0;
    /* ci's byte, with cl bytes of its block from there (one division a chunk, not a record) */
    const uint8_t *cp = cc ? wcarry_at(from, ci) : NULL;
    size_t cl = cc ? from->bs - ci % from->bs : 0;
    int carry = !last && (c->e1 > b || c->s1 >= b); /* the next window reads it too */
    if (!cc && trace_reader_seek_chunk(rd, c->off)) return -1;
    struct slk_record tmp;
    for (int k;;) {
      if (cc ? ci == cc->to : (k = trace_reader_peek_kind(rd)) < 0) break;
      if (cc) {
        if (!cl || *cp == WC_NEXT) { /* at the next block (the rest of this one left) */
          ci += cl;
          cp = wcarry_at(from, ci);
          cl = from->bs;
        }
        k = *cp;
      }
      /* a timed record of a kind kept whole is decoded in a free slot of its kind's ring (kept
       * there when it belongs to the window); the GPU records and API records on the side (as
       * the classifier reads them), the kernels and API records without the fields it does not
       * read (a kernel's launch shape) */
      struct slk_record *r = &tmp;
      int gk = k == SLK_KERNEL || k == SLK_MEMCPY || k == SLK_MEMSET;
      if (timed_kind(k) && k != SLK_API && !gk) {
        if (wring_slot(&wr->r[k], &td->kind[k])) return -1;
        r = &wr->r[k].rec[wr->r[k].spare];
      }
      if (cc) {
        size_t m = wcarry_get(cp, r);
        ci += m;
        cp += m;
        cl -= m;
      } else if (!(k == SLK_API || k == SLK_KERNEL ? trace_reader_next_in_chunk_light(rd, r)
                                                   : trace_reader_next_in_chunk(rd, r)))
        break;
      if (!timed_kind(r->kind)) continue;
      uint64_t e = rec_end(r);
      if (carry && (r->start >= b || e > b) && wcarry_put(to, i, r)) return -1;
      if (!last && r->start >= b) continue;
      if (!first && r->start < a && e <= a) continue;
      if (first || r->start >= a) { /* it starts in the window: summed here, as it is */
        if (r->kind == SLK_KERNEL && sums_kernel(S, r)) return -1;
        if (r->kind == SLK_HOST && sums_host(S, r)) return -1;
      }
      if (r->kind == SLK_MARKER) { /* whole, in the window it starts in: one step, counted once */
        if (!first && r->start < a) continue;
      } else {
        if (!first && r->start < a) r->start = a;
        if (!last && r->end > b) r->end = b;
      }
      if (r->end < r->start) r->end = r->start;
      int rk = r->kind;
      if (rk == SLK_API) { /* as a span, as it comes (no ring) */
        if (wspan_add(&wr->api, r)) return -1;
        continue;
      }
      struct wring *g = &wr->r[rk];
      if (rk == SLK_KERNEL || rk == SLK_MEMCPY || rk == SLK_MEMSET) {
        trace_devices_count(&td->dev, r->device);
        if (wring_slot(g, &td->kind[rk])) return -1;
        wgpu_rec(&g->grec[g->spare], r);
      } else if (r == &tmp) { /* after a record of an unknown kind */
        if (wring_slot(g, &td->kind[rk])) return -1;
        g->rec[g->spare] = tmp;
      }
      if (wring_add(g, &td->kind[rk])) return -1;
    }
  }
  for (int k = 0; k < SLK_KIND_MAX; k++)
    if (timed_kind(k)) {
      if (k == SLK_KERNEL && wr->r[k].unsorted) cm->ok = 0; /* sorted again: window_comm */
      if (wring_drain(&wr->r[k], &td->kind[k])) return -1;
    } else {
      trace_array_sort(&td->kind[k], NULL);
    }
  return 0;
}

static void wrings_free(struct wrings *wr) {
  for (int i = 0; i < 2; i++) {
    for (size_t q = 0; q < wr->carry[i].nblk; q++)
      free(wr->carry[i].blk[q]);
    free(wr->carry[i].blk);
    free(wr->carry[i].c);
  }
  for (int k = 0; k < SLK_KIND_MAX; k++) {
    free(wr->r[k].rec);
    free(wr->r[k].grec);
    free(wr->r[k].start);
    free(wr->r[k].seq);
    free(wr->r[k].next);
  }
  free(wr->api.v);
  for (int k = 0; k < 3; k++)
    free(wr->gpu[k].v);
  free(wr->host.v);
  free(wr);
}

static void wmean_add(double *sum, uint64_t v, double w) { *sum += (double)v * w; }

static uint64_t wmean(double sum, double w) { return w > 0 ? (uint64_t)(sum / w + 0.5) : 0; }

static int fold_sites(struct cls_gpu *G, struct acc *A, struct cls_gpu *g) {
  for (int c = 0; c < CLS_COUNT; c++) {
    for (size_t k = 0; k < g->nsites[c]; k++) {
      struct cls_site *s = &g->sites[c][k];
      uint64_t h = fnv(s->site), at;
      size_t found = (size_t)-1;
      if (u64map_get(&A->site_at[c], h, &at) && !strcmp(G->sites[c][at].site, s->site))
        found = at;
      else if (u64map_get(&A->site_at[c], h, &at)) /* a collision: look the slow way */
        for (size_t x = 0; x < G->nsites[c] && found == (size_t)-1; x++)
          if (!strcmp(G->sites[c][x].site, s->site)) found = x;
      if (found != (size_t)-1) {
        struct cls_site *d = &G->sites[c][found];
        d->ns += s->ns;
        d->steps_ns += s->steps_ns;
        if (!d->stack) d->stack = s->stack, s->stack = NULL;
        if (!d->python) d->python = s->python, s->python = NULL;
        continue;
      }
      if (G->nsites[c] == A->site_cap[c]) {
        size_t n = A->site_cap[c] ? A->site_cap[c] * 2 : 16;
        struct cls_site *v = realloc(G->sites[c], n * sizeof *v);
        if (!v) return -1;
        G->sites[c] = v;
        A->site_cap[c] = n;
      }
      if (!u64map_get(&A->site_at[c], h, &at)) {
        size_t slot = u64map_add(&A->site_at[c], h);
        if (slot == (size_t)-1) return -1;
        A->site_at[c].val[slot] = G->nsites[c];
      }
      G->sites[c][G->nsites[c]++] = *s;
      memset(s, 0, sizeof *s); /* taken */
    }
  }
  return 0;
}

static void whatif_add(double *w4, const struct cls_whatif *wi, double n) {
  wmean_add(&w4[0], wi->bound_ns, n);
  wmean_add(&w4[1], wi->replay_ns, n);
  wmean_add(&w4[2], wi->replay_corrected_ns, n);
  wmean_add(&w4[3], wi->best_ns, n);
}

static void whatif_get(struct cls_whatif *wi, const double *w4, double n) {
  wi->bound_ns = wmean(w4[0], n);
  wi->replay_ns = wmean(w4[1], n);
  wi->replay_corrected_ns = wmean(w4[2], n);
  wi->best_ns = wmean(w4[3], n);
}

/* The steps lost at the edge between two windows whose steps are of one kind: the window
 * before's last step ends at `end` (its last_ns: the start of the operation after it), the next
 * window's first step starts at `first` (its first_ns); step0 and step1 their mean steps. The
 * step the edge cuts is found by neither window (NVTX ranges: a range's step ends where the
 * next range's begins, and that one starts in the next window; a pattern: its operations are
 * in both), nor is the window before's trailing iteration or the next one's leading warm-up:
 * they lie between, as whole steps. That stretch in steps (the two windows' mean), rounded,
 * where it holds EDGE_STEPS_MIN to EDGE_STEPS_MAX of them; none where it is shorter (the edge
 * fell between two steps, or the windows' steps start at another of the step's operations) or
 * longer (a pause at the edge: not steps). Measured on the windows of tests/data's traces cut
 * in 4 and 8 (584 edges): 40 held under 0.5 steps, 458 0.5-1.5 (405 of them 0.8-1.2), 43
 * 1.5-3.5, 43 more. */
#define EDGE_STEPS_MIN 0.5
#define EDGE_STEPS_MAX 3.5
static size_t edge_steps(uint64_t end, uint64_t step0, uint64_t first, uint64_t step1) {
  if (first <= end || !step0 || !step1) return 0;
  double x = (double)(first - end) * 2.0 / ((double)step0 + (double)step1);
  return x >= EDGE_STEPS_MIN && x < EDGE_STEPS_MAX ? (size_t)(x + 0.5) : 0;
}

/* The kind of a window's steps, as the windows' groups are keyed: the source and, for NVTX steps,
 * the detail up to the first ';' (the range's name; warm-up and cycles are the window's own). For
 * pattern steps the source alone, the count of operations a step holds given apart in *period:
 * the windows of one loop can find its steps by different rules ("255 GPU operations per step,
 * between synchronizing calls", "about 256 ..., from the end of each optimizer step") and start
 * them at different operations ("starting at" the window's own anchor), with a period (the median
 * of the window's steps) that moves by an operation or two; what tells one loop's steps from
 * another's is the period and the step's time (periods_alike, steps_alike). */
static void step_key(char *key, size_t len, const struct cls_steps *s, size_t *period) {
  const char *d = s->detail;
  *period = 0;
  if (!strcmp(s->source, "pattern")) {
    const char *q = !strncmp(d, "about ", 6) ? d + 6 : d;
    if (*q >= '0' && *q <= '9') {
      unsigned long long v = strtoull(q, NULL, 10);
      *period = v ? (size_t)v : 1;
      snprintf(key, len, "%s", s->source);
      return;
    }
  }
  snprintf(key, len, "%s: %.*s", s->source, (int)strcspn(d, ";"), d);
}

/* Two windows' pattern steps are one loop's where their periods are within a tenth of each other
 * (a period that differs more is another loop: a phase of other work, or its steps counted in
 * half or double) */
static int periods_alike(size_t a, size_t b) {
  if (!a || !b) return a == b;
  return (double)(a > b ? a - b : b - a) <= 0.1 * (double)(a > b ? a : b);
}

/* and where their steps' times are within 1.5 times of each other (the larger over the smaller:
 * step_ratio), the factor that tells a warm-up step from the steady state within a window (steps.c
 * trim_warmup): a window of the loop's warm-up (steps 3 times as long: GPU run 71's first 44 decode
 * steps) is not its steady state. A window joins the group whose step is nearest its own. */
static double step_ratio(uint64_t a, uint64_t b) {
  if (!a || !b) return 1.0;
  return a > b ? (double)a / (double)b : (double)b / (double)a;
}

/* Adds window GPU g to the totals G (a GPU seen first: G is all zero); win: the window's number
 * (from 1, in time order). */
static int fold_gpu(struct cls_gpu *G, struct acc *A, struct cls_gpu *g, size_t win) {
  if (!G->host) {
    G->host = g->host;
    G->device = g->device;
    G->steps.source = "none";
  }
  if (!G->name) G->name = g->name;
  if (g->processes > G->processes) G->processes = g->processes;
  G->window_ns += g->window_ns;
  G->busy_ns += g->busy_ns;
  G->idle_ns += g->idle_ns;
  G->kernels += g->kernels;
  G->memcpys += g->memcpys;
  G->memsets += g->memsets;
  G->kernel_ns += g->kernel_ns;
  for (int c = 0; c < CLS_COUNT; c++)
    G->time_ns[c] += g->time_ns[c];
  for (int w = 0; w < CLS_WHY_COUNT; w++)
    G->other_ns[w] += g->other_ns[w];
  G->launch_corrected_ns += g->launch_corrected_ns;
  G->launch_floor_ns += g->launch_floor_ns;
  G->lost_lead_ns += g->lost_lead_ns;
  G->gaps += g->gaps;
  G->kernels_joined += g->kernels_joined;
  G->kernels_shorter_than_launch += g->kernels_shorter_than_launch;
  G->launches_joined += g->launches_joined;
  G->launches_waited += g->launches_waited;
  G->launch_blocking |= g->launch_blocking;
  if (fold_sites(G, A, g)) return -1;

  const struct cls_steps *s = &g->steps;
  if (s->count) {
    char key[160];
    size_t period = 0;
    step_key(key, sizeof key, s, &period);
    struct stepgrp *P = NULL; /* the group of this kind whose step is nearest this window's */
    double near = 0;
    for (size_t i = 0; i < A->ngrp; i++) {
      const struct stepgrp *q = &A->grp[i];
      if (strcmp(q->key, key) || !periods_alike(q->period, period)) continue;
      double r = step_ratio(q->out.steps.step_ns, s->step_ns);
      if (period && r > 1.5) continue;
      if (!P || r < near) {
        P = &A->grp[i];
        near = r;
      }
    }
    if (!P) {
      struct stepgrp *v = realloc(A->grp, (A->ngrp + 1) * sizeof *v);
      if (!v) return -1;
      A->grp = v;
      P = &A->grp[A->ngrp++];
      memset(P, 0, sizeof *P);
      memcpy(P->key, key, sizeof key);
      P->period = period;
    }
    struct cls_gpu *O = &P->out;
    struct cls_steps *S = &O->steps;
    double n = (double)s->count;
    for (int c = 0; c < CLS_FIRST_IDLE; c++)
      P->busy += n * (double)s->per_step_ns[c];
    if (!P->steps || s->first_ns < S->first_ns) S->first_ns = s->first_ns;
    if (s->last_ns > S->last_ns) S->last_ns = s->last_ns;
    if (!S->count) S->warmup = s->warmup; /* the first window's warm-up only */
    S->count += s->count;
    /* the steps lost at the edge with the window before, where it found steps of this kind too:
     * from the end of its last counted iteration to the start of this one's first (the span_*
     * times: where either window's steps are cycles, its iterations outside the whole cycles at
     * its ends are counted already, as uncycled, and the edge's iterations join them, counted,
     * not timed; before session 23 such edges were not stitched: GPU run 89's epoch loop read 164
     * of its 170 iterations in windows of 100 k) */
    if (P->last_win && P->last_win + 1 == win) {
      size_t e = edge_steps(P->last_end, P->last_step, s->span_first_ns, s->step_ns);
      if (P->last_cycle || s->cycle) {
        S->uncycled += e;
      } else {
        S->count += e;
        P->edge += e;
      }
    }
    P->last_win = win;
    P->last_end = s->span_last_ns;
    P->last_step = s->step_ns;
    P->last_cycle = s->cycle != 0;
    S->trailing = s->trailing; /* the last window's */
    S->paused += s->paused;
    S->uncycled += s->uncycled;
    P->stn += (double)s->copy_stall_copies;
    P->stns += (double)s->copy_stall_copies * (double)s->copy_stall_copy_ns;
    if (s->cycle) S->cycle = s->cycle;
    P->steps += n;
    wmean_add(&P->step, s->step_ns, n);
    for (int c = 0; c < CLS_COUNT; c++) {
      wmean_add(&P->per[c], s->per_step_ns[c], n);
      wmean_add(&P->shared[c], s->per_step_shared_ns[c], n);
    }
    wmean_add(&P->lc, s->launch_corrected_per_step_ns, n);
    wmean_add(&P->lf, s->launch_floor_per_step_ns, n);
    wmean_add(&P->ch, s->copy_host_per_step_ns, n);
    wmean_add(&P->cp, s->copy_pageable_per_step_ns, n);
    wmean_add(&P->oh, s->other_host_per_step_ns, n);
    wmean_add(&P->sk, s->stacks_per_step_ns, n);
    wmean_add(&P->ll, s->lost_lead_per_step_ns, n);
    wmean_add(&P->rt, s->roundtrip_per_step_ns, n);
    wmean_add(&P->gw, s->loader_wait_per_step_ns, n);
    /* (a window not paced by its producer: its traced wait) */
    wmean_add(&P->su,
              s->starved_untraced_per_step_ns ? s->starved_untraced_per_step_ns
                                              : s->per_step_ns[CLS_DATA_STARVATION] +
                                                    s->per_step_shared_ns[CLS_DATA_STARVATION],
              n);
    wmean_add(&P->lb, s->loader_bound_ns, n);
    P->lbusy += s->loader_busy * n;
    P->pwait += s->producer_wait * n;
    P->ptraced |= s->producer_traced;
    if (!s->loader_bound_ns) P->lbnone += n;
    wmean_add(&P->tr, s->tracer_per_step_ns, n);
    for (int c = 0; c < CLS_COUNT; c++)
      whatif_add(P->wi[c], &g->whatif[c], n);
    whatif_add(P->wi[CLS_COUNT], &g->whatif_copy_both, n);
    whatif_add(P->wi[CLS_COUNT + 1], &g->whatif_all, n);
    whatif_add(P->wi[CLS_COUNT + 2], &g->whatif_host, n);
    if (!g->replay_ok) P->replay_bad = 1;
    wmean_add(&P->rstep, g->replay_step_ns, n);
    wmean_add(&P->cstep, g->corrected_step_ns, n);
    if (s->launch_tail_ok) { /* the windows with an untraced tail (their own, or the trace's:
                                tail_prepass) */
      S->launch_tail_ok = 1;
      S->launch_tail_assumed = s->launch_tail_assumed; /* every window's alike: the trace's */
      wmean_add(&P->ltail, s->launch_tail_per_step_ns, n);
      wmean_add(&P->ltstep, s->launch_tail_step_ns, n);
      wmean_add(&P->ltlo, s->launch_assumed_lo_per_step_ns, n);
      wmean_add(&P->lthi, s->launch_assumed_hi_per_step_ns, n);
      P->ltail_steps += n;
      S->launch_tail_per_step_ns = wmean(P->ltail, P->ltail_steps);
      S->launch_tail_step_ns = wmean(P->ltstep, P->ltail_steps);
      S->launch_assumed_lo_per_step_ns = wmean(P->ltlo, P->ltail_steps);
      S->launch_assumed_hi_per_step_ns = wmean(P->lthi, P->ltail_steps);
    }
    if (s->count > P->best_steps) {
      P->best_steps = s->count;
      S->source = s->source;
      memcpy(S->detail, s->detail, sizeof S->detail);
      memcpy(S->cand, s->cand, sizeof S->cand);
      S->ncand = s->ncand;
    }
    S->step_ns = wmean(P->step, P->steps);
    for (int c = 0; c < CLS_COUNT; c++) {
      S->per_step_ns[c] = wmean(P->per[c], P->steps);
      S->per_step_shared_ns[c] = wmean(P->shared[c], P->steps);
    }
    S->launch_corrected_per_step_ns = wmean(P->lc, P->steps);
    S->launch_floor_per_step_ns = wmean(P->lf, P->steps);
    S->copy_host_per_step_ns = wmean(P->ch, P->steps);
    S->copy_pageable_per_step_ns = wmean(P->cp, P->steps);
    S->other_host_per_step_ns = wmean(P->oh, P->steps);
    S->stacks_per_step_ns = wmean(P->sk, P->steps);
    S->lost_lead_per_step_ns = wmean(P->ll, P->steps);
    S->roundtrip_per_step_ns = wmean(P->rt, P->steps);
    S->loader_wait_per_step_ns = wmean(P->gw, P->steps);
    S->copy_stall_copies = (size_t)P->stn;
    S->copy_stall_copy_ns = P->stn > 0 ? (uint64_t)(P->stns / P->stn) : 0;
    /* the loader's bound where every window had one (a window without it had room) */
    S->loader_bound_ns = P->lbnone ? 0 : wmean(P->lb, P->steps);
    /* the untraced wait where every window ran at its producer's pace, as the bound */
    S->starved_untraced_per_step_ns = P->lbnone ? 0 : wmean(P->su, P->steps);
    S->loader_busy = P->lbnone ? 0 : P->lbusy / P->steps;
    S->producer_wait = P->lbnone ? 0 : P->pwait / P->steps;
    S->producer_traced = P->lbnone ? 0 : P->ptraced;
    S->tracer_per_step_ns = wmean(P->tr, P->steps);
    for (int c = 0; c < CLS_COUNT; c++)
      whatif_get(&O->whatif[c], P->wi[c], P->steps);
    whatif_get(&O->whatif_copy_both, P->wi[CLS_COUNT], P->steps);
    whatif_get(&O->whatif_all, P->wi[CLS_COUNT + 1], P->steps);
    whatif_get(&O->whatif_host, P->wi[CLS_COUNT + 2], P->steps);
    O->replay_ok = !P->replay_bad;
    O->replay_step_ns = wmean(P->rstep, P->steps);
    O->corrected_step_ns = wmean(P->cstep, P->steps);
    O->replay_error =
        S->step_ns ? ((double)O->replay_step_ns - (double)S->step_ns) / (double)S->step_ns : 0.0;
  }

  struct cls_tracer *T = &G->tracer;
  const struct cls_tracer *t = &g->tracer;
  T->calls += t->calls;
  T->hook_ns += t->hook_ns;
  T->cupti_calls += t->cupti_calls;
  T->cupti_ns += t->cupti_ns;
  if (!T->cupti_source) T->cupti_source = t->cupti_source;
  if (!T->probe_launches && t->probe_launches) {
    T->probe_on_ns = t->probe_on_ns;
    T->probe_off_ns = t->probe_off_ns;
    T->probe_launches = t->probe_launches;
    T->probe_detached = t->probe_detached;
    T->probe_hooked_ns = t->probe_hooked_ns;
    T->probe_api_off_ns = t->probe_api_off_ns;
    T->hook_launch_ns = t->hook_launch_ns;
    T->api_launch_ns = t->api_launch_ns;
  }
  T->records_ns += t->records_ns;
  T->loading_ns += t->loading_ns;
  T->total_ns += t->total_ns;
  T->in_idle_ns += t->in_idle_ns;
  T->lead_ns += t->lead_ns;
  if (!T->pace_assumed && t->pace_assumed) { /* no tail: each window assumed it of its calls */
    T->pace_assumed = t->pace_assumed;
    T->pace_traced_ns = t->pace_traced_ns;
    T->pace_ntraced = t->pace_ntraced;
    T->pace_given = t->pace_given;
  }
  T->tail_ignored |= t->tail_ignored; /* the window that held the tail (--no-tail) */
  /* the loop's iterations matched in the tail (cls_pace.c): the window that matched the most
   * traced ones says them (each window fitted its own replay) */
  const struct cls_tracer *it = T->iter_ntraced >= t->iter_ntraced ? T : t;
  struct cls_tracer iter = *it;
  if (t->tail_calls) { /* a window with the tail (the last: every window with tail_prepass's) */
    uint64_t lead = T->lead_ns;
    *T = (struct cls_tracer){.calls = T->calls,
                             .hook_ns = T->hook_ns,
                             .cupti_calls = T->cupti_calls,
                             .cupti_ns = T->cupti_ns,
                             .cupti_source = T->cupti_source,
                             .probe_on_ns = T->probe_on_ns,
                             .probe_off_ns = T->probe_off_ns,
                             .probe_launches = T->probe_launches,
                             .probe_detached = T->probe_detached,
                             .probe_hooked_ns = T->probe_hooked_ns,
                             .probe_api_off_ns = T->probe_api_off_ns,
                             .hook_launch_ns = T->hook_launch_ns,
                             .api_launch_ns = T->api_launch_ns,
                             .records_ns = T->records_ns,
                             .loading_ns = T->loading_ns,
                             .total_ns = T->total_ns,
                             .in_idle_ns = T->in_idle_ns,
                             .tail_calls = t->tail_calls,
                             .tail_taken = t->tail_taken,
                             .tail_mid = t->tail_mid,
                             .tail_ns = t->tail_ns,
                             .tail_traced_ns = t->tail_traced_ns,
                             .tail_untraced_ns = t->tail_untraced_ns,
                             .tail_ntraced = t->tail_ntraced,
                             .tail_nuntraced = t->tail_nuntraced,
                             .tail_factor = t->tail_factor,
                             .tail_long_traced_ns = t->tail_long_traced_ns,
                             .tail_long_untraced_ns = t->tail_long_untraced_ns,
                             .tail_nlong_traced = t->tail_nlong_traced,
                             .tail_nlong_untraced = t->tail_nlong_untraced,
                             .tail_factor_long = t->tail_factor_long,
                             .tail_nthreads = t->tail_nthreads,
                             .lead_ns = lead,
                             .pace_assumed = T->pace_assumed,
                             .pace_traced_ns = T->pace_traced_ns,
                             .pace_ntraced = T->pace_ntraced,
                             .pace_given = T->pace_given,
                             .tail_ignored = T->tail_ignored};
    memcpy(T->tail_threads, t->tail_threads, sizeof T->tail_threads);
  }
  T->iter_traced_ns = iter.iter_traced_ns;
  T->iter_untraced_ns = iter.iter_untraced_ns;
  T->iter_ntraced = iter.iter_ntraced;
  T->iter_nuntraced = iter.iter_nuntraced;
  T->iter_calls = iter.iter_calls;
  T->iter_untraced_lo_ns = iter.iter_untraced_lo_ns;
  T->iter_untraced_hi_ns = iter.iter_untraced_hi_ns;
  T->iter_fn = iter.iter_fn;
  T->iter_replayed_ns = iter.iter_replayed_ns;
  T->iter_reach_ns = iter.iter_reach_ns;
  T->gain = iter.gain;
  T->gain_fit = iter.gain_fit;
  return 0;
}

static int cmp_site(const void *pa, const void *pb) {
  const struct cls_site *a = pa, *b = pb;
  if (a->steps_ns != b->steps_ns) return a->steps_ns > b->steps_ns ? -1 : 1;
  if (a->ns != b->ns) return a->ns > b->ns ? -1 : 1;
  return strcmp(a->site, b->site);
}

/* GPU gi's kernels by total time from the windows' sums (as report.c's top_kernels). */
static int top_kernels(struct report *rp, const struct sums *p, size_t gi) {
  const struct cls_gpu *g = &rp->cr.gpus[gi];
  struct kernel_sum *ks = malloc((p->nks ? p->nks : 1) * sizeof *ks);
  if (!ks) return -1;
  size_t n = 0;
  for (size_t i = 0; i < p->nks; i++)
    if (p->ks[i].device == g->device)
      ks[n++] = (struct kernel_sum){trace_reader_string(rp->f[0].rd, p->ks[i].name), p->ks[i].count,
                                    p->ks[i].total_ns};
  report_top_set(rp, gi, ks, n);
  return 0;
}

static void pass1_free(struct pass1 *p) {
  free(p->ix);
  trace_data_free(&p->meta);
  trace_data_free(&p->all);
}

/* Records whose host calls time the traced pace of a long trace's tail (below): as many as a trace
 * read whole holds (cmd_report.c's default --window-records), so that a trace just longer than
 * that gets the pace it would have read whole. 250,000 were tried first: GPU run 88's AMP loop
 * (539 k records) then ran 33.35 ms a step without the tracer where read whole it ran 35.33 and
 * its untraced rounds 35.41; with 500,000, 35.37 (peak RSS 51 -> 60 MB; the calls decoded light,
 * 0.49 -> 0.50 CPU s) */
#define TAIL_TRACED_RECORDS 500000

/* The trace's untraced tail (tail.h), found before the windows are classified: the windows before
 * the one that holds it have none, and without its pace their replay without the tracer kept
 * CUPTI's slowdown of the host (GPU run 87: a step without the tracer of 17.64 ms from the windows
 * where the whole trace said 13.95 and the tail's rounds ran 14.12). The tail starts at the
 * PROBE record that detached CUPTI (or a TAKEN record), which the first pass kept; the host calls
 * of the last TAIL_TRACED_RECORDS records or more before it (in whole windows) and the tail's are
 * read again (decoded light) and timed as tail_find times a whole trace's (a trace of up to
 * about that many records: the same calls): at most that many calls held, 64 bytes each, freed
 * before the windows.
 * nwin windows as run_windows cuts them. 0, with ti->t UINT64_MAX where the trace has no tail (or
 * one with no untraced pace: another CUPTI client took the records); -1 when out of memory or the
 * file fails. */
static int tail_prepass(struct trace_reader *rd, const struct pass1 *p, size_t nwin, double assume,
                        struct tail_info *ti) {
  *ti = (struct tail_info){.t = UINT64_MAX, .factor = 1.0, .factor_long = 1.0};
  int taken;
  uint64_t t = tail_start(&p->meta, &taken), g0, g1 = UINT64_MAX, off;
  if (taken) return 0; /* no untraced pace in it */
  /* SLACK_PACE_PROBE's stretch mid-run (where no tail follows the exit probe): the calls from
   * TAIL_TRACED_RECORDS' worth before it to as many after it (tail_find takes the traced pace
   * either side) */
  int mid = tail_gap(&p->meta, &g0, &g1, &off);
  if (mid && (t == UINT64_MAX || t >= g1)) t = g0; /* (the exit probe's detach: nothing after) */
  if (t == UINT64_MAX) return 0;                   /* no tail */
  /* the windows' starts, as run_windows cuts them; the calls read from the start of the window
   * TAIL_TRACED_RECORDS' worth of windows before the one that holds t (its traced pace from that
   * many records, as a whole trace of up to that many has it) */
  uint64_t *st = malloc(nwin * sizeof *st);
  if (!st) return -1;
  size_t ns = 0, j = 0;
  st[ns++] = p->t0;
  for (size_t w = 0; w + 1 < nwin; w++) {
    double want = (double)p->records * (double)(w + 1) / (double)nwin;
    uint64_t b = slack_window_end(st[ns - 1], p->t1, want, starts_before, p);
    if (b <= st[ns - 1]) continue;
    if (b <= t) j = ns;
    st[ns++] = b;
  }
  uint64_t per = p->records / nwin ? p->records / nwin : 1;
  size_t back = (size_t)((TAIL_TRACED_RECORDS + per - 1) / per);
  uint64_t from = st[j > back ? j - back : 0];
  /* mid-run: up to the start of the window as many after the stretch (else the trace's end) */
  uint64_t until = UINT64_MAX;
  if (mid && t == g0) {
    size_t k = j + 1;
    while (k < ns && st[k] < g1)
      k++;
    if (k + back < ns) until = st[k + back];
  }
  free(st);
  struct cls_host_rec *v = NULL;
  size_t n = 0, cap = 0;
  int rc = 0;
  for (size_t i = 0; i < p->nix && !rc; i++) {
    const struct chunk_ix *c = &p->ix[i];
    if (c->e1 <= from && c->s1 < from) continue;
    if (trace_reader_seek_chunk(rd, c->off)) {
      rc = -1;
      break;
    }
    struct slk_record r; /* light: a host call's times, thread, function, flags and site */
    memset(&r, 0, sizeof r);
    for (int k; (k = trace_reader_peek_kind(rd)) >= 0;) {
      if (!trace_reader_next_in_chunk_light(rd, &r)) break;
      if (k != SLK_HOST || r.kind != SLK_HOST || r.start < from || r.start >= until) continue;
      if (n == cap) {
        size_t nc = cap ? cap * 2 : 4096;
        struct cls_host_rec *x = realloc(v, nc * sizeof *x);
        if (!x) {
          rc = -1;
          break;
        }
        v = x;
        cap = nc;
      }
      v[n] = cls_host_rec_of(&r);
      v[n].scratch = (uint32_t)n;
      n++;
    }
  }
  if (!rc) {
    qsort(v, n, sizeof *v, cmp_host_rec);
    struct cls_hosts h = {.c = v, .n = n};
    rc = tail_find(&p->meta, &h, assume, 0, ti);
  }
  free(v);
  return rc;
}

/* A first window of small records (load_windowed) is kept where each of its GPUs found at least
 * this many steps from NVTX ranges or the pattern rule: the steps' count does not suffer from
 * windows of a few steps (an edge's step is counted by edge_steps; the windows' pattern steps of
 * one loop are counted together however each window found them: step_key). Measured on tests/data's
 * traces of 40-1,000 pattern steps cut into windows of 10, 20 and 40 steps: the count within 5% of
 * the whole trace's in 47, 45 and 48 of 50 (docs/PERFORMANCE.md) */
#define WINDOW_SMALL_STEPS 20

/* The windows, classified and folded into rp. probe: should the first window's GPUs not each find
 * WINDOW_SMALL_STEPS steps (NVTX ranges or the pattern rule), 1 at once, nothing folded (the caller
 * reads the windows again, larger; the first window's sums are in S and rp's host sums). */
static int run_windows(struct report *rp, struct pass1 *p, struct sums *S,
                       const struct cls_options *opt, uint64_t per_window, int probe,
                       struct acc **accp) {
  struct rfile *f = &rp->f[0];
  const char *host = trace_reader_header(f->rd, "host");
  const char *gpu = trace_reader_header(f->rd, "gpu_records");
  const char *pid = trace_reader_header(f->rd, "pid");
  snprintf(f->label, sizeof f->label, "pid %s", pid && *pid ? pid : "?");
  size_t nwin = (size_t)((p->records + per_window - 1) / per_window);
  if (nwin < 2) nwin = 2;
  /* the trace's untraced tail, for the windows without it (--no-tail: none; each window then
   * assumes its pace, the tail's calls left out by the last) */
  struct tail_info tail = {.t = UINT64_MAX, .factor = 1.0, .factor_long = 1.0};
  if (!opt->ignore_tail && tail_prepass(f->rd, p, nwin, opt->host_slowdown, &tail)) {
    tail_free(&tail);
    return -1;
  }
  int tty, shown = 0; /* a progress line, as the reader's (SLACK_PROGRESS) */
  uint64_t every = (uint64_t)slack_progress_ms(&tty) * 1000000ull, next = now_ns() + every;
  struct acc *A = NULL;
  size_t cap = 0;
  uint64_t a = p->t0;
  int rc = 0;
  struct trace_data td; /* the window's records, its arrays reused from window to window */
  memset(&td, 0, sizeof td);
  struct wrings *wr = calloc(1, sizeof *wr);
  if (!wr) {
    tail_free(&tail);
    return -1;
  }
  /* the carries' blocks: SLACK_REPORT_CARRY_BLOCK bytes where it is a count of at least 256 (the
   * tests: records across many blocks), else WC_BLOCK */
  const char *cb = getenv("SLACK_REPORT_CARRY_BLOCK");
  char *end = NULL;
  unsigned long long bs = cb && *cb ? strtoull(cb, &end, 10) : 0;
  wr->carry[0].bs = wr->carry[1].bs = end && !*end && bs >= 256 && bs <= (1u << 30) ? bs : WC_BLOCK;
  /* each kind's array sized once for a window's share and a quarter more (grown by doubling,
   * each growth a copy, where a window holds more) */
  for (int k = 0; k < SLK_KIND_MAX; k++) {
    size_t want = (size_t)(p->kinds[k] / nwin + p->kinds[k] / nwin / 4);
    if (!want) continue;
    if (k == SLK_API) { /* as spans (grown by wspan_add) */
      wr->api.v = malloc(want * sizeof *wr->api.v);
      wr->api.cap = wr->api.v ? want : 0;
      continue;
    }
    if (k >= SLK_KERNEL && k <= SLK_MEMSET) { /* as cls_gpu_rec (grown by wout) */
      struct wgpu *q = &wr->gpu[k - SLK_KERNEL];
      q->v = malloc(want * sizeof *q->v);
      q->cap = q->v ? want : 0;
      continue;
    }
    if (k == SLK_HOST) { /* as cls_host_rec (grown by wout) */
      wr->host.v = malloc(want * sizeof *wr->host.v);
      wr->host.cap = wr->host.v ? want : 0;
      continue;
    }
    void *v;
    if (posix_memalign(&v, 64, want * sizeof(struct slk_record))) continue; /* grown by wput */
    td.kind[k].v = v;
    td.kind[k].cap = want;
  }
  /* SLACK_PACE_PROBE's cut: no window holds its stretch (nor the records-off time before it):
   * one ends where the records went off, the next begins at the attach */
  uint64_t g_off = 0, g_s, g_e = 0;
  int gap = tail_gap(&p->meta, &g_s, &g_e, &g_off);
  for (size_t w = 0; w < nwin && !rc; w++) {
    uint64_t b = p->t1;
    if (w + 1 < nwin) { /* the time before which (w + 1) windows' records start */
      double want = (double)p->records * (double)(w + 1) / (double)nwin;
      b = slack_window_end(a, p->t1, want, starts_before, p);
    }
    if (gap && a < g_off && b > g_off) b = g_off;
    if (b <= a && w + 1 < nwin) continue;
    int first = w == 0, last = w + 1 == nwin;
    rp->windows++;
    if (window_load(f->rd, p, a, b, first, last, &td, wr, S)) {
      trace_data_free(&td);
      wrings_free(wr);
      tail_free(&tail);
      return -1;
    }
    struct launch_join lj; /* counted by the classifier's own join */
    memset(&lj, 0, sizeof lj);
    struct cls_input in = {.td = &td,
                           .host = host ? host : "",
                           .cupti = gpu && !strcmp(gpu, "on"),
                           .str = file_str,
                           .str_ctx = f->rd,
                           .lj = &lj,
                           .api = wr->api.v,
                           .napi = wr->api.n,
                           .api_lent = 1}; /* refilled by the next window */
    for (int k = 0; k < 3; k++) {
      in.gpu[k] = wr->gpu[k].v;
      in.ngpu[k] = wr->gpu[k].n;
    }
    in.env = report_env(f->rd);
    in.hcall = wr->host.v; /* NULL (none yet): td's, as empty */
    in.nhcall = wr->host.n;
    struct cls_options o = *opt;
    o.t0 = first ? 0 : a;
    o.t1 = last ? 0 : b;
    o.tail = tail.t != UINT64_MAX ? &tail : NULL;
    struct cls_result cr;
    rc = cls_run(&in, 1, &o, &cr);
    if (!rc && probe && rp->windows == 1) { /* the first window classified */
      int small = cr.ngpus > 0;
      for (size_t gi = 0; gi < cr.ngpus; gi++) {
        const struct cls_steps *st = &cr.gpus[gi].steps;
        if (!st->source || !strcmp(st->source, "none") || st->count < WINDOW_SMALL_STEPS) small = 0;
      }
      if (!small) {
        cls_result_free(&cr);
        trace_data_free(&td);
        wrings_free(wr);
        tail_free(&tail);
        return 1;
      }
    }
    if (!rc) {
      rp->lj.kernels += lj.kernels;
      rp->lj.joined += lj.joined;
      rp->lj.no_api += lj.no_api;
      rp->lj.no_host += lj.no_host;
      rp->lj.graph_kernels += lj.graph_kernels;
      rp->lj.graph_joined += lj.graph_joined;
      rp->lj.by_order += lj.by_order;
      if (first) rp->cr.t0 = cr.t0;
      rp->cr.t1 = cr.t1;
      /* the window's GPUs: the communication kernels as the window has them */
      uint64_t *comm = wr->comm.ok ? calloc(cr.ngpus ? cr.ngpus : 1, sizeof *comm)
                                   : window_comm(wr->gpu[0].v, wr->gpu[0].n, &cr, f->rd);
      for (size_t gi = 0; comm && wr->comm.ok && gi < cr.ngpus; gi++) {
        uint32_t d = cr.gpus[gi].device; /* under 256: the window's kernels' devices */
        if (d < 256) comm[gi] = wr->comm.total[d] + (wr->comm.b[d] - wr->comm.a[d]);
      }
      if (!comm) rc = -1;
      for (size_t gi = 0; gi < cr.ngpus && !rc; gi++) {
        struct cls_gpu *g = &cr.gpus[gi];
        size_t G = 0;
        while (G < rp->cr.ngpus && rp->cr.gpus[G].device != g->device)
          G++;
        if (G == rp->cr.ngpus) {
          if (G == cap) {
            size_t c = cap ? cap * 2 : 8;
            struct cls_gpu *v = realloc(rp->cr.gpus, c * sizeof *v);
            struct acc *x = realloc(A, c * sizeof *x);
            if (v) rp->cr.gpus = v;
            if (x) A = x;
            if (!v || !x) {
              rc = -1;
              break;
            }
            cap = c;
          }
          memset(&rp->cr.gpus[G], 0, sizeof rp->cr.gpus[G]);
          memset(&A[G], 0, sizeof A[G]);
          rp->cr.ngpus++;
        }
        A[G].comm_ns += comm[gi];
        A[G].marks[0] += g->steps.marks[0];
        A[G].marks[1] += g->steps.marks[1];
        rc = fold_gpu(&rp->cr.gpus[G], &A[G], g, rp->windows);
      }
      free(comm);
      cls_result_free(&cr);
    }
    a = b;
    if (gap && a >= g_off && a < g_e) a = g_e;
    if (every && now_ns() >= next) {
      next = now_ns() + every;
      fprintf(stderr, "%sslack report: window %zu of %zu classified%s", tty ? "\r" : "", w + 1,
              nwin, tty ? "\033[K" : "\n");
      shown = 1;
    }
  }
  trace_data_free(&td);
  wrings_free(wr);
  tail_free(&tail);
  if (shown && tty) fputs("\r\033[K", stderr);
  *accp = A;
  return rc;
}

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
/* The heap the windows' arrays (or a short trace's) come from, in huge pages where the kernel
 * has them free (trace_huge_page_size): grown at once by `bytes` (a block allocated and freed:
 * glibc's heap keeps it as its top, not trimmed here, and carves the arrays from it in order),
 * the room asked for in huge pages before any of it is touched. A window's arrays are reused from
 * window to window, so all their first touches are the first window's: on the dev machine's VM a
 * 4 KiB page's first touch cost 6-12 us, 14,000 of them 0.1-0.15 s of a 1 M record report's
 * ~0.37 s. What is taken beyond `bytes` comes in pages of 4 KiB, as before. */
static void heap_huge(size_t bytes) {
  if (bytes < (4u << 20)) return; /* a huge page at most: not worth the look at /proc */
  size_t hp = trace_huge_page_size(bytes);
  char *q = hp ? malloc(bytes) : NULL;
  if (!q) return;
  uintptr_t a = ((uintptr_t)q + hp - 1) & ~(uintptr_t)(hp - 1);
  uintptr_t b = ((uintptr_t)q + bytes) & ~(uintptr_t)(hp - 1);
  if (b > a) (void)madvise((void *)a, b - a, MADV_HUGEPAGE);
  free(q);
}
#endif

/* The heap a window takes, about, per record of the window: 220-226 bytes in the 1 and 10 M
 * bench traces (500 k-record windows), asked with a margin */
#define WINDOW_HEAP_PER_RECORD 320
/* and a short trace read whole, per record: 320-330 bytes in the bench traces of 0.1-0.5 M
 * records, 480 and 560 in two of tests/data's H200 traces (holdout_amp-fixed, probe-h200) */
#define WHOLE_HEAP_PER_RECORD 512

/* whole: a trace of up to this many timed records is read whole, a longer one in windows of
 * about per_window records (whole at least per_window). hint: the chunk headers may tell the
 * trace long before it is read (see below); checked: each chunk checked before its records are
 * read (else as they are decoded, see below) */
static int load_windowed(struct report *rp, const char *cmd, const char *path,
                         const struct cls_options *opt, uint64_t whole, uint64_t per_window,
                         uint64_t small, int hint, int checked) {
  memset(rp, 0, sizeof *rp);
#ifdef __GLIBC__
  /* the first pass: large arrays (the records kept while the trace may be short) from mmap,
   * which grow by mremap without a copy and go back when freed (a trace announced short: from
   * the heap in huge pages instead, below) */
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
#endif
  rp->f = calloc(1, sizeof *rp->f);
  if (!rp->f) {
    fprintf(stderr, "slack %s: out of memory\n", cmd);
    return EXIT_ERROR;
  }
  struct rfile *f = &rp->f[0];
  f->path = path;
  f->rd = slack_open_trace(cmd, path);
  if (!f->rd) {
    free(rp->f);
    rp->f = NULL;
    return EXIT_ERROR;
  }
  rp->nf = 1;
  struct pass1 p;
  memset(&p, 0, sizeof p);
  p.whole = whole;
  p.short_so_far = 1;
  /* the reading of the times checks each chunk's records as it decodes them (one pass over their
   * bytes, not two): should one be malformed, the records of its chunk before it were counted;
   * then the whole first pass is made again with the chunks checked first (as rare as a damaged
   * chunk; the same report as if they had been checked first) */
  p.times = checked ? 1 : 2;
  /* a trace whose chunk headers announce more records (every kind) than a window's is long: its
   * records are not kept while it might be short (copying and faulting in a window's worth of
   * records: a tenth of the 1 M-record bench trace's report, half of a 600 k one's), and only
   * its times are decoded from the start. Should fewer timed records come (records without time,
   * STRING and THREAD ones, are a few hundred in a trace; or a damaged chunk stops the reading
   * early), read again, without the hint: the same as if it had not been given */
  uint64_t announced = trace_reader_records_hint(f->rd, whole);
  if (hint && announced > whole) {
    p.short_so_far = 0;
    trace_reader_set_times(f->rd, p.times);
  } else {
    /* short (announced so, or found so by the reading before): its records kept whole and
     * classified whole, in the heap (no trimming) in huge pages (heap_huge): in pages of 4 KiB
     * from mmap, their first touches were half of a short trace's report on the dev VM (35,800
     * of them, 0.3-0.4 of 0.7 CPU s for 450 k records). */
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    uint64_t want = (announced < whole ? announced : whole) * WHOLE_HEAP_PER_RECORD;
    heap_huge((size_t)(want < (512u << 20) ? want : (512u << 20)));
#endif
  }
  /* The chunks decompressed here are not kept for the windows (trace_reader_keep_chunks): each
   * window reads, checks and decompresses its chunks again. Keeping them (128 MB, round 9 of
   * docs/PERFORMANCE.md) saved ~0.8 ms of decompression a MB, but every kept MB is fresh memory
   * the kernel zeroes: on the dev VM, whose free memory goes back to the host within seconds,
   * 2.5-3 ms a MB (the host backs each huge page again), 0.2-0.3 of a 10 M report's ~2 CPU s
   * (round 15). */
  struct slk_record r;
  int rc = 0;
  while (!rc && trace_reader_next(f->rd, &r))
    rc = pass1_record(&p, f->rd, &r);
  trace_reader_set_times(f->rd, 0);
  if (!rc && trace_reader_stats(f->rd)->partial_chunks) {
    pass1_free(&p);
    report_unload(rp);
    return load_windowed(rp, cmd, path, opt, whole, per_window, small, hint, 1);
  }
  if (!rc && !p.short_so_far && p.records <= whole) {
    pass1_free(&p);
    report_unload(rp);
    return load_windowed(rp, cmd, path, opt, whole, per_window, small, 0, checked);
  }
  size_t nprod = 0; /* production windows' records (SLACK_PACE_PROBE's cut is read in windows) */
  for (size_t k = 0; k < p.meta.kind[SLK_WINDOW].n; k++)
    nprod += p.meta.kind[SLK_WINDOW].v[k].fn != SLK_WINDOW_PACE;
  if (!rc && (p.short_so_far || nprod)) {
    /* short (its records are loaded: the usual way), or production windows (they need the
     * whole trace's segments: read again, whole) */
    if (p.short_so_far) {
      trace_data_sort(&p.all);
      f->td = p.all;
      memset(&p.all, 0, sizeof p.all);
      pass1_free(&p);
      return report_classify(rp, cmd, opt);
    }
    pass1_free(&p);
    report_unload(rp);
    return report_load(rp, cmd, (char *const *)&path, 1, opt);
  }
  struct acc *A = NULL;
  struct sums S;
  memset(&S, 0, sizeof S);
  S.rp = rp;
  if (!rc) {
    const struct trace_array *dr = &p.meta.kind[SLK_DROPS];
    for (size_t k = 0; k < dr->n; k++)
      rp->dropped += dr->v[k].count;
    rp->truncated = trace_reader_stats(f->rd)->tail_bytes;
#ifdef __GLIBC__
    /* each window's arrays from the heap, kept there when freed (no trimming): the next window
     * reuses the same pages instead of faulting in fresh ones from mmap (page faults and munmap
     * were a fifth of the time). The windows are about the same size, so the heap stays about
     * one window's size */
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#ifndef __SANITIZE_ADDRESS__
    uint64_t nwin = (p.records + per_window - 1) / per_window; /* as run_windows cuts them */
    uint64_t want = p.records / (nwin < 2 ? 2 : nwin) * WINDOW_HEAP_PER_RECORD;
    heap_huge((size_t)(want < (512u << 20) ? want : (512u << 20)));
#endif
#endif
    /* Windows of `small` records first: a window's arrays are reused from window to window, so
     * the first window's memory is what the run touches fresh (at 1 M records 25-27 MB in
     * windows of 100 k, 42-45 MB in windows of 250 k); kept where the first window's GPUs each
     * found WINDOW_SMALL_STEPS steps (NVTX ranges or the pattern rule), else the windows read
     * again from the start in windows of per_window (the first pass kept: one small window's
     * work more) */
    if (small && small < per_window) {
      rc = run_windows(rp, &p, &S, opt, small, 1, &A);
      if (rc == 1) { /* the first window's sums undone */
        rp->windows = 0;
        memset(rp->fn, 0, sizeof rp->fn);
        rp->host_calls = rp->host_blocked_ns = 0;
        rp->nthreads = 0;
        S.nks = 0;
        u64map_free(&S.ks_at);
        u64map_free(&S.th_at);
        memset(&S.ks_at, 0, sizeof S.ks_at);
        memset(&S.th_at, 0, sizeof S.th_at);
        memset(S.ks_near, 0, sizeof S.ks_near);
        memset(S.th_near, 0, sizeof S.th_near);
        rc = run_windows(rp, &p, &S, opt, per_window, 0, &A);
      }
    } else {
      rc = run_windows(rp, &p, &S, opt, per_window, 0, &A);
    }
    if (!rc) host_finish(rp, &p.meta);
    rp->lj.kernels = 0; /* the windows count a kernel that crosses an edge twice */
    for (size_t d = 0; d < 256; d++)
      rp->lj.kernels += p.ops[d][0];
  }
  if (!rc) {
    size_t ng = rp->cr.ngpus;
    rp->top = calloc(ng ? ng : 1, sizeof *rp->top);
    rp->ntop = calloc(ng ? ng : 1, sizeof *rp->ntop);
    rp->comm_ns = calloc(ng ? ng : 1, sizeof *rp->comm_ns);
    if (!rp->top || !rp->ntop || !rp->comm_ns) rc = -1;
    uint64_t span = rp->cr.t1 - rp->cr.t0;
    for (size_t gi = 0; gi < ng && !rc; gi++) {
      struct cls_gpu *g = &rp->cr.gpus[gi];
      rp->comm_ns[gi] = A[gi].comm_ns;
      const struct stepgrp *P = NULL; /* the steps: the kind that covers the most busy time */
      for (size_t i = 0; i < A[gi].ngrp; i++)
        if (!P || A[gi].grp[i].busy > P->busy) P = &A[gi].grp[i];
      if (P) {
        g->steps = P->out.steps;
        memcpy(g->whatif, P->out.whatif, sizeof g->whatif);
        g->whatif_copy_both = P->out.whatif_copy_both;
        g->whatif_all = P->out.whatif_all;
        g->whatif_host = P->out.whatif_host;
        g->replay_ok = P->out.replay_ok;
        g->replay_step_ns = P->out.replay_step_ns;
        g->corrected_step_ns = P->out.corrected_step_ns;
        g->replay_error = P->out.replay_error;
      }
      if (g->device < 256) {
        g->kernels = p.ops[g->device][0];
        g->memcpys = p.ops[g->device][1];
        g->memsets = p.ops[g->device][2];
      }
      /* fewer than 2 steps a window found by the windows themselves (those counted at their
       * edges aside) */
      if (g->kernels + g->memcpys + g->memsets &&
          g->steps.count - (P ? P->edge : 0) < 2 * rp->windows)
        rp->few_steps = 1;
      /* Windows too short for the loop's iterations: each window finds its steps alone, and
       * where it holds one or two iterations the pattern's repeat is inside them (GPU run 108: a
       * detector's 68 k operations an iteration, cuDNN's FFT convolutions running one small GEMM
       * after another, read in windows of 250 k records as 763 k steps of one GEMM where the
       * whole trace holds 12 iterations). The marks each iteration leaves in the GPU's work (the
       * optimizer step's end, the batch's first copy) say so: more than twice as many steps as
       * marks, with fewer than 3 marks a window. Windows of 12 marks' records would hold them
       * (of 6, 3 windows of 4 iterations each found 7 of its 12: each window's first step a
       * warm-up, one window's steps half an iteration; read whole, 12 of 12); the whole trace
       * where that is over half of it or the trace is no longer than REPORT_COARSE_WHOLE. */
      const struct cls_steps *st = &g->steps;
      for (int src = 0; src < 2; src++) {
        size_t m = A[gi].marks[src];
        if (m < 3 || (src == 1 && A[gi].marks[0] >= 3)) continue; /* the optimizer's decide */
        if (st->count <= 2 * m || m >= 3 * rp->windows) break;
        uint64_t want = p.records / m * 12 + 1;
        /* two windows lose steps at their edge; and the marks are not always the iterations
         * (gradient accumulation without a multi-tensor optimizer: a copy per micro-batch), which
         * the whole trace's rules tell apart (tests/data's holdout_accum `wn` in windows of 12
         * copies: 38 steps for 12 iterations; whole, 12) */
        if (want > p.records / 2 || p.records <= REPORT_COARSE_WHOLE) want = p.records;
        if (want > rp->coarse_records) {
          rp->coarse_records = want;
          rp->coarse_steps = st->count;
          rp->coarse_few = 0;
          rp->coarse_marks = m;
          rp->coarse_src = src;
          rp->coarse_whole = want == p.records;
        }
        break;
      }
      /* Windows of a few iterations each find them, but lose some at their edges (a window's
       * first and last iterations are its warm-up and its trailing one, the stitch between two
       * windows rounds): a loop's pattern steps, fewer than 12 iterations a window, in a trace
       * no longer than REPORT_COARSE_WHOLE, are read whole where the windows are the default's
       * (cmd_report.c: a size given is kept; in windows of 20,000 records run 109's detector,
       * 2.4 iterations each, counted 19 to 21 of 24, the trainer's `l` of run 75 52 of 40, run
       * 79's PPO iterations 94 of 20). The marks cannot say it: a GAN's two optimizers, an AMP
       * step's scaler, clipping and optimizer apart, PPO's minibatches. NVTX steps are whole
       * ranges (counted alike in windows of a few steps, docs/slack-report.md). */
      size_t its = st->count + st->warmup + st->trailing + st->paused + st->uncycled;
      if (!rp->coarse_records && st->count && st->source && !strcmp(st->source, "pattern") &&
          its < 12 * rp->windows && p.records <= REPORT_COARSE_WHOLE) {
        rp->coarse_records = p.records;
        rp->coarse_steps = its;
        rp->coarse_few = 1;
        rp->coarse_whole = 1;
      }
      for (int c = 0; c < CLS_COUNT; c++)
        if (g->nsites[c]) qsort(g->sites[c], g->nsites[c], sizeof *g->sites[c], cmp_site);
      if (g->window_ns < span) { /* windows without this GPU's work: idle, by the edge */
        uint64_t d = span - g->window_ns;
        g->window_ns += d;
        g->idle_ns += d;
        g->time_ns[CLS_OTHER] += d;
        g->other_ns[CLS_WHY_EDGE] += d;
      }
      rc = top_kernels(rp, &S, gi);
    }
  }
  for (size_t gi = 0; A && gi < rp->cr.ngpus; gi++) {
    for (int c = 0; c < CLS_COUNT; c++)
      u64map_free(&A[gi].site_at[c]);
    free(A[gi].grp);
  }
  free(A);
  /* the records without time stay for the report (threads, devices, drops) */
  f->td = p.meta;
  memset(&p.meta, 0, sizeof p.meta);
  pass1_free(&p);
  sums_free(&S);
  if (rc) {
    fprintf(stderr, "slack %s: %s: out of memory\n", cmd, path);
    report_unload(rp);
    return EXIT_ERROR;
  }
  return EXIT_OK;
}

int report_load_windowed(struct report *rp, const char *cmd, const char *path,
                         const struct cls_options *opt, uint64_t whole, uint64_t per_window,
                         uint64_t small) {
  if (!per_window) per_window = 1;
  return load_windowed(rp, cmd, path, opt, whole > per_window ? whole : per_window, per_window,
                       small, 1, 0);
}

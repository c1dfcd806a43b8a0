/* The classifier (classify.h; docs/CLASSIFICATION.md is the specification of every rule here).
 *
 * Order of work:
 *   1. the world: every host call of every input (with its thread, its category: synchronizing,
 *      staging a host-to-device copy, or other), every GPU operation with the call that
 *      submitted it (launch join), GPUs keyed by (host, device);
 *   2. per GPU: steps (NVTX ranges or the repeating pattern), then one sweep over the window
 *      that tiles it into busy stretches (compute, communication, copy) and idle gaps, each gap
 *      classified from the evidence of the thread that launched the work ending it;
 *   3. sums, call sites and per-step times;
 *   4. the what-if: the dependency graph of the recorded run (host order per thread, FIFO per
 *      stream, launch -> operation, operation -> return of the call that waited for it, waits
 *      between streams, hand-overs between threads) replayed with each class's time taken out.
 */
#include "classify.h"
#include "radix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "join.h"
#include "steps.h"
#include "tail.h"
#include "u64map.h"

#define NONE ((size_t)-1)
#define TOL_NS 2000             /* clock tolerance between host and CUPTI stamps */
#define HANDOFF_NS 1000000      /* a thread resuming this soon after another went quiet */
#define WAIT_SLACK_NS 5000      /* an operation this much later than explained waited */
#define EVENT_WINDOW_NS 50000   /* ... for an operation on another stream ending this close */
#define STAGING_BASE_NS 10000   /* a pinned asynchronous copy call, when none was seen */
#define DEFAULT_BASE_NS 5000    /* a synchronizing call that did not wait, when none was seen */
#define DEFAULT_LAT_START 8000  /* call start -> its operation's start, when none was seen */
#define DEFAULT_LAT_END 2000    /* call end -> its operation's start */
#define DEFAULT_STREAM_GAP 1000 /* back-to-back operations on one stream */
#define GRAPH_GAP_NS 100        /* between kernels of one CUDA graph (H200: median 95 ns) */
#define LONG_GAP_STEPS 8        /* host phases longer than this many steps are `other` */
#define HOOK_NS                                                                                    \
  50 /* a hook's cost where the trace cannot show it (format 1.1                                   \
        keeps no API record to measure against; make bench-cpu                                     \
        measures 15-50 ns) */

/* CUPTI overhead kinds (CUpti_ActivityOverheadKind) */
#define OVH_COMPILER 1u
#define OVH_BUFFER_FLUSH (1u << 16)
#define OVH_INSTRUMENTATION (2u << 16)
#define OVH_RESOURCE (3u << 16)
#define OVH_MODULE_LOADING (4u << 16)
#define OVH_LAZY_LOADING (5u << 16)
#define OVH_BUFFER_REQUEST (7u << 16)

/* CUPTI memcpy and memory kinds */
#define CPY_HTOD 1
#define CPY_DTOH 2
#define MEM_PAGEABLE 1

enum { CAT_CALL = 0, CAT_SYNC, CAT_STAGING };
enum { OPK_KERNEL = 0, OPK_COMM, OPK_COPY };
enum { EL_NONE = 0, EL_PIECE, EL_CALL, EL_OP };

static const char *const class_names[CLS_COUNT] = {
    "compute",         "communication",   "copy", "serialization", "copy_stall",
    "data_starvation", "launch_overhead", "other"};

static const char *const class_fixes[CLS_COUNT] = {
    "the GPU is working: make the kernels faster (mixed precision, fused kernels, larger "
    "batches) only once the stalls below are gone",
    "overlap collectives with compute (DDP buckets, FSDP prefetch), compress or shrink what is "
    "exchanged",
    "pinned memory with non_blocking copies on a side stream, so copies overlap compute; keep "
    "data on the GPU between steps",
    "move reads of GPU values (.item(), .cpu(), .tolist(), printing a tensor, "
    "torch.cuda.synchronize) out of the step: accumulate on the GPU and read every N steps",
    "pin the host memory (DataLoader pin_memory=True, tensor.pin_memory()) and copy with "
    "non_blocking=True on a side stream, prefetching the next batch",
    "more DataLoader workers (num_workers, persistent_workers, prefetch_factor) with "
    "pin_memory=True; move per-sample CPU work out of the main process or onto the GPU",
    "fewer, larger kernels: CUDA graphs (torch.cuda.graphs, torch.compile "
    "mode=\"reduce-overhead\") or torch.compile fusion for storms of tiny kernels",
    "see the reasons: work queued behind a wait slack cannot see, host work outside CUDA, "
    "start-up, module loading"};

static const char *const reason_names[CLS_WHY_COUNT] = {
    "none",          "window_edge",       "no_launch_record",
    "queued",        "host_outside_cuda", "long_host_phase",
    "module_loading"};

static const char *const reason_texts[CLS_WHY_COUNT] = {
    "",
    "before the GPU's first or after its last work",
    "the launch of the work that ended the gap was not recorded",
    "work already submitted waited for something slack does not see",
    "the launching thread was busy outside CUDA",
    "a long host phase (start-up, evaluation, checkpointing)",
    "CUDA module or function loading"};

const char *cls_name(int c) { return c >= 0 && c < CLS_COUNT ? class_names[c] : "?"; }
const char *cls_fix(int c) { return c >= 0 && c < CLS_COUNT ? class_fixes[c] : ""; }
const char *cls_reason_name(int w) { return w >= 0 && w < CLS_WHY_COUNT ? reason_names[w] : "?"; }
const char *cls_reason_text(int w) { return w >= 0 && w < CLS_WHY_COUNT ? reason_texts[w] : "?"; }

int cls_is_comm_kernel(const char *name) { return name && !strncasecmp(name, "nccl", 4); }

void cls_options_default(struct cls_options *o) {
  o->launch_gap_ns = 500000;
  o->long_gap_ns = 1000000000;
  o->cupti_call_ns = CLS_CUPTI_CALL_NS;
  o->cupti_call_given = 0;
  o->replay = 1;
  o->steps_want = 0;
  o->step_kernel = NULL;
  o->t0 = o->t1 = 0;
}

/* ------------------------------------------------------------------------------------------ */
/* the world                                                                                  */

struct call {
  const struct slk_record *r;
  uint32_t in;
  uint32_t thread;
  size_t prev, next; /* on its thread */
  size_t pos;        /* index in its thread's call list */
  uint8_t cat;       /* CAT_* */
  uint8_t h2d;       /* a host-to-device copy */
  uint8_t submits;   /* launches, copies, memsets */
  uint64_t hook_ns;  /* measured hook cost */
  uint64_t cost_ns;  /* the tracer's cost estimate for this call */
  size_t own_op;     /* the last-ending operation it submitted */
  size_t awaited;    /* blocking calls: the operation whose end released it */
  uint64_t base_ns;  /* blocking calls: duration without the wait */
  size_t handoff;    /* a call of another thread this call's start waited for */
  uint64_t own_ns;   /* with a handoff: the thread's own work before it */
};

struct op {
  const struct slk_record *r;
  uint32_t in, gpu;
  size_t call;
  uint8_t kind; /* OPK_* */
  uint8_t h2d, src_pageable, dst_pageable;
  uint32_t sym;
  size_t prev_stream, ev_dep;
};

struct thread {
  uint32_t in;
  uint64_t tid;
  size_t *calls; /* global call indices by start */
  size_t n;
  /* data-loading NVTX ranges of this thread */
  uint64_t *load_s, *load_e;
  size_t nload;
  /* CUPTI overhead records of this thread: the tracer's (t_*) and module loading (l_*) */
  uint64_t *t_s, *t_e, *l_s, *l_e;
  size_t nt, nl;
};

struct gpu_ix {
  const char *host;
  uint32_t device;
  size_t lo, hi; /* its operations: ops[lo..hi) */
};

struct world {
  const struct cls_input *in;
  size_t nin;
  struct cls_options opt;
  size_t *call_base;
  struct call *calls;
  size_t ncalls;
  struct thread *threads;
  size_t nthreads;
  size_t *thread_store;
  struct op *ops;
  size_t nops;
  struct gpu_ix *g;
  size_t ng;
  uint64_t t0, t1;
  uint64_t lat_start, lat_end, stream_gap;
  uint64_t *cupti_ns;     /* per input: CUPTI's cost per call that submits work (input_cupti) */
  struct tail_info *tail; /* per input: its untraced tail (tail.h), kept out of the window */
};

/* CUPTI's cost per call of input i: what its exit probe measured (runtime/probe.c: an empty
 * kernel's launch call with CUPTI on minus the same with CUPTI detached, or with its records
 * disabled where the probe could not detach), unless --cupti-call-ns was given or the trace has
 * no probe; then the option's. *probe: the PROBE record, or NULL. */
static uint64_t input_cupti(const struct world *w, size_t i, const struct slk_record **probe) {
  const struct trace_array *p = &w->in[i].td->kind[SLK_PROBE];
  *probe = p->n ? &p->v[p->n - 1] : NULL;
  if (w->opt.cupti_call_given || !*probe) return w->opt.cupti_call_ns;
  return (*probe)->bytes > (*probe)->result ? (*probe)->bytes - (*probe)->result : 0;
}

static uint64_t rdur(const struct slk_record *r) {
  return r->end > r->start ? r->end - r->start : 0;
}
static uint64_t rend(const struct slk_record *r) { return r->end > r->start ? r->end : r->start; }

static int fn_is_copy(uint32_t fn) {
  switch (fn) {
  case SLK_FN_MEMCPY:
  case SLK_FN_MEMCPY_ASYNC:
  case SLK_FN_MEMCPY_2D:
  case SLK_FN_MEMCPY_2D_ASYNC:
  case SLK_FN_MEMCPY_3D:
  case SLK_FN_MEMCPY_3D_ASYNC:
  case SLK_FN_MEMCPY_PEER:
  case SLK_FN_MEMCPY_PEER_ASYNC:
  case SLK_FN_MEMCPY_TO_SYMBOL:
  case SLK_FN_MEMCPY_FROM_SYMBOL:
  case SLK_FN_MEMCPY_TO_SYMBOL_ASYNC:
  case SLK_FN_MEMCPY_FROM_SYMBOL_ASYNC:
  case SLK_FN_MEMCPY_BATCH_ASYNC:
  case SLK_FN_CU_MEMCPY:
  case SLK_FN_CU_MEMCPY_ASYNC:
  case SLK_FN_CU_MEMCPY_HTOD:
  case SLK_FN_CU_MEMCPY_HTOD_ASYNC:
  case SLK_FN_CU_MEMCPY_DTOH:
  case SLK_FN_CU_MEMCPY_DTOH_ASYNC:
  case SLK_FN_CU_MEMCPY_DTOD:
  case SLK_FN_CU_MEMCPY_DTOD_ASYNC:
  case SLK_FN_CU_MEMCPY_2D:
  case SLK_FN_CU_MEMCPY_2D_ASYNC:
  case SLK_FN_CU_MEMCPY_3D:
  case SLK_FN_CU_MEMCPY_3D_ASYNC:
  case SLK_FN_CU_MEMCPY_PEER:
  case SLK_FN_CU_MEMCPY_PEER_ASYNC:
  case SLK_FN_CU_MEMCPY_BATCH_ASYNC: return 1;
  default: return 0;
  }
}

static int fn_is_wait(uint32_t fn) {
  switch (fn) {
  case SLK_FN_DEVICE_SYNC:
  case SLK_FN_STREAM_SYNC:
  case SLK_FN_EVENT_SYNC:
  case SLK_FN_CU_CTX_SYNC:
  case SLK_FN_CU_STREAM_SYNC:
  case SLK_FN_CU_EVENT_SYNC: return 1;
  default: return 0;
  }
}

static int fn_submits(uint32_t fn) {
  switch (fn) {
  case SLK_FN_LAUNCH:
  case SLK_FN_LAUNCH_EX:
  case SLK_FN_LAUNCH_COOP:
  case SLK_FN_LAUNCH_HOSTFUNC:
  case SLK_FN_GRAPH_LAUNCH:
  case SLK_FN_CU_LAUNCH:
  case SLK_FN_CU_LAUNCH_EX:
  case SLK_FN_CU_LAUNCH_COOP:
  case SLK_FN_CU_LAUNCH_HOSTFUNC:
  case SLK_FN_CU_GRAPH_LAUNCH:
  case SLK_FN_MEMSET:
  case SLK_FN_MEMSET_ASYNC:
  case SLK_FN_MEMSET_2D:
  case SLK_FN_MEMSET_2D_ASYNC:
  case SLK_FN_CU_MEMSET_D8:
  case SLK_FN_CU_MEMSET_D8_ASYNC:
  case SLK_FN_CU_MEMSET_D16:
  case SLK_FN_CU_MEMSET_D16_ASYNC:
  case SLK_FN_CU_MEMSET_D32:
  case SLK_FN_CU_MEMSET_D32_ASYNC:
  case SLK_FN_CU_MEMSET_D2D8:
  case SLK_FN_CU_MEMSET_D2D8_ASYNC:
  case SLK_FN_CU_MEMSET_D2D16:
  case SLK_FN_CU_MEMSET_D2D16_ASYNC:
  case SLK_FN_CU_MEMSET_D2D32:
  case SLK_FN_CU_MEMSET_D2D32_ASYNC: return 1;
  default: return fn_is_copy(fn);
  }
}

/* Direction of a copy call from the hook alone: CPY_HTOD, CPY_DTOH or 0. */
static int fn_copy_dir(const struct slk_record *r) {
  switch (r->fn) {
  case SLK_FN_CU_MEMCPY_HTOD:
  case SLK_FN_CU_MEMCPY_HTOD_ASYNC: return CPY_HTOD;
  case SLK_FN_CU_MEMCPY_DTOH:
  case SLK_FN_CU_MEMCPY_DTOH_ASYNC: return CPY_DTOH;
  case SLK_FN_MEMCPY_TO_SYMBOL:
  case SLK_FN_MEMCPY_TO_SYMBOL_ASYNC: return r->copy_kind == 1 || r->copy_kind == 0 ? CPY_HTOD : 0;
  case SLK_FN_MEMCPY_FROM_SYMBOL:
  case SLK_FN_MEMCPY_FROM_SYMBOL_ASYNC:
    return r->copy_kind == 2 || r->copy_kind == 0 ? CPY_DTOH : 0;
  default:
    if (!fn_is_copy(r->fn)) return 0;
    return r->copy_kind == 1 ? CPY_HTOD : r->copy_kind == 2 ? CPY_DTOH : 0;
  }
}

static struct world *sort_world; /* qsort has no context argument */

static int cmp_thread_call(const void *pa, const void *pb) {
  const struct call *a = &sort_world->calls[*(const size_t *)pa];
  const struct call *b = &sort_world->calls[*(const size_t *)pb];
  if (a->in != b->in) return a->in < b->in ? -1 : 1;
  if (a->r->tid != b->r->tid) return a->r->tid < b->r->tid ? -1 : 1;
  if (a->r->start != b->r->start) return a->r->start < b->r->start ? -1 : 1;
  return *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
}

static int cmp_op(const void *pa, const void *pb) {
  const struct op *a = pa, *b = pb;
  if (a->gpu != b->gpu) return a->gpu < b->gpu ? -1 : 1;
  if (a->r->start != b->r->start) return a->r->start < b->r->start ? -1 : 1;
  if (rend(a->r) != rend(b->r)) return rend(a->r) < rend(b->r) ? -1 : 1;
  if (a->in != b->in) return a->in < b->in ? -1 : 1;
  return a->r < b->r ? -1 : a->r > b->r;
}

static int cmp_stream(const void *pa, const void *pb) {
  const struct op *a = &sort_world->ops[*(const size_t *)pa];
  const struct op *b = &sort_world->ops[*(const size_t *)pb];
  if (a->gpu != b->gpu) return a->gpu < b->gpu ? -1 : 1;
  if (a->in != b->in) return a->in < b->in ? -1 : 1;
  if (a->r->stream != b->r->stream) return a->r->stream < b->r->stream ? -1 : 1;
  return *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
}

static int cmp_op_end(const void *pa, const void *pb) {
  const struct op *a = &sort_world->ops[*(const size_t *)pa];
  const struct op *b = &sort_world->ops[*(const size_t *)pb];
  if (a->in != b->in) return a->in < b->in ? -1 : 1;
  if (rend(a->r) != rend(b->r)) return rend(a->r) < rend(b->r) ? -1 : 1;
  return *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
}

/* The same orders as radix keys (radix.h); the index tie-break is the radix sort's stability. */
static uint64_t key_thread_call(const void *ctx, size_t i, int word) {
  const struct call *c = &((const struct world *)ctx)->calls[i];
  return word == 0 ? c->in : word == 1 ? c->r->tid : c->r->start;
}
static uint64_t key_op(const void *ctx, size_t i, int word) {
  const struct op *o = &((const struct world *)ctx)->ops[i];
  return word == 0 ? o->gpu : o->r->start;
}
static int cmp_op_ix(const void *pa, const void *pb) {
  return cmp_op(&sort_world->ops[*(const size_t *)pa], &sort_world->ops[*(const size_t *)pb]);
}
static uint64_t key_stream(const void *ctx, size_t i, int word) {
  const struct op *o = &((const struct world *)ctx)->ops[i];
  return word == 0 ? o->gpu : word == 1 ? o->in : o->r->stream;
}
static uint64_t key_op_end(const void *ctx, size_t i, int word) {
  const struct op *o = &((const struct world *)ctx)->ops[i];
  return word == 0 ? o->in : rend(o->r);
}

/* ix[0..n) = 0..n-1 sorted by key, or by cmp when the radix sort has no memory. */
static void sort_ix(struct world *w, size_t *ix, size_t n, int nw, radix_key_fn key,
                    int (*cmp)(const void *, const void *)) {
  for (size_t j = 0; j < n; j++)
    ix[j] = j;
  if (!radix_sort_ix(ix, n, nw, key, w)) return;
  sort_world = w;
  qsort(ix, n, sizeof *ix, cmp);
  sort_world = NULL;
}

static int cmp_u64(const void *pa, const void *pb) {
  uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
  return a < b ? -1 : a > b;
}

/* Median of v[0..n) (sorts v); dflt when n is 0. */
static uint64_t median(uint64_t *v, size_t n, uint64_t dflt) {
  if (!n) return dflt;
  if (radix_sort_u64(v, n)) qsort(v, n, sizeof *v, cmp_u64);
  return v[n / 2];
}

static const char *in_str(const struct world *w, uint32_t in, uint32_t id) {
  const struct cls_input *x = &w->in[in];
  return x->str ? x->str(x->str_ctx, id) : "?";
}

static void world_free(struct world *w) {
  for (size_t t = 0; t < w->nthreads; t++) {
    free(w->threads[t].load_s);
    free(w->threads[t].load_e);
    free(w->threads[t].t_s);
    free(w->threads[t].t_e);
    free(w->threads[t].l_s);
    free(w->threads[t].l_e);
  }
  free(w->cupti_ns);
  free(w->tail);
  free(w->call_base);
  free(w->calls);
  free(w->threads);
  free(w->thread_store);
  free(w->ops);
  free(w->g);
}

static size_t thread_find(const struct world *w, uint32_t in, uint64_t tid) {
  size_t lo = 0, hi = w->nthreads;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const struct thread *t = &w->threads[mid];
    if (t->in < in || (t->in == in && t->tid < tid))
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < w->nthreads && w->threads[lo].in == in && w->threads[lo].tid == tid) return lo;
  return NONE;
}

static int push_iv(uint64_t **s, uint64_t **e, size_t *n, uint64_t a, uint64_t b) {
  uint64_t *ns = realloc(*s, (*n + 1) * sizeof *ns);
  if (!ns) return -1;
  *s = ns;
  uint64_t *ne = realloc(*e, (*n + 1) * sizeof *ne);
  if (!ne) return -1;
  *e = ne;
  (*s)[*n] = a;
  (*e)[*n] = b;
  (*n)++;
  return 0;
}

static int name_has(const char *s, const char *const *words) {
  for (; *words; words++) {
    size_t k = strlen(*words);
    for (const char *p = s; *p; p++)
      if (!strncasecmp(p, *words, k)) return 1;
  }
  return 0;
}

static const char *const loader_words[] = {"data", "load", "fetch", NULL};

/* Calls, threads and their side tables. */
static int world_calls(struct world *w) {
  w->call_base = calloc(w->nin + 1, sizeof *w->call_base);
  w->cupti_ns = calloc(w->nin + 1, sizeof *w->cupti_ns);
  w->tail = calloc(w->nin + 1, sizeof *w->tail);
  if (!w->call_base || !w->cupti_ns || !w->tail) return -1;
  for (size_t i = 0; i < w->nin; i++) {
    const struct slk_record *probe;
    w->cupti_ns[i] = input_cupti(w, i, &probe);
    if (tail_find(w->in[i].td, &w->tail[i])) return -1;
  }
  for (size_t i = 0; i < w->nin; i++) {
    w->call_base[i] = w->ncalls;
    w->ncalls += w->tail[i].nhost; /* the untraced tail's calls stay out */
  }
  w->call_base[w->nin] = w->ncalls;
  w->calls = calloc(w->ncalls ? w->ncalls : 1, sizeof *w->calls);
  w->thread_store = malloc((w->ncalls ? w->ncalls : 1) * sizeof *w->thread_store);
  if (!w->calls || !w->thread_store) return -1;
  for (size_t i = 0; i < w->nin; i++) {
    const struct trace_array *h = &w->in[i].td->kind[SLK_HOST];
    for (size_t k = 0; k < w->tail[i].nhost; k++) {
      struct call *c = &w->calls[w->call_base[i] + k];
      c->r = &h->v[k];
      c->in = (uint32_t)i;
      c->prev = c->next = c->own_op = c->awaited = c->handoff = NONE;
      c->submits = (uint8_t)fn_submits(c->r->fn);
    }
  }
  sort_ix(w, w->thread_store, w->ncalls, 3, key_thread_call, cmp_thread_call);
  size_t nt = 0;
  for (size_t k = 0; k < w->ncalls; k++) {
    const struct call *c = &w->calls[w->thread_store[k]];
    const struct call *p = k ? &w->calls[w->thread_store[k - 1]] : NULL;
    if (!p || p->in != c->in || p->r->tid != c->r->tid) nt++;
  }
  w->threads = calloc(nt + 1, sizeof *w->threads);
  if (!w->threads) return -1;
  for (size_t k = 0; k < w->ncalls; k++) {
    size_t ci = w->thread_store[k];
    struct call *c = &w->calls[ci];
    const struct call *p = k ? &w->calls[w->thread_store[k - 1]] : NULL;
    if (!p || p->in != c->in || p->r->tid != c->r->tid) {
      struct thread *t = &w->threads[w->nthreads++];
      t->in = c->in;
      t->tid = c->r->tid;
      t->calls = &w->thread_store[k];
    }
    struct thread *t = &w->threads[w->nthreads - 1];
    c->thread = (uint32_t)(w->nthreads - 1);
    c->pos = t->n;
    if (t->n) {
      c->prev = t->calls[t->n - 1];
      w->calls[c->prev].next = ci;
    }
    t->n++;
  }
  /* NVTX data-loading ranges and CUPTI overhead records, per thread with calls */
  for (size_t i = 0; i < w->nin; i++) {
    const struct cls_input *x = &w->in[i];
    const struct trace_array *m = &x->td->kind[SLK_MARKER];
    for (size_t k = 0; k < m->n; k++) {
      size_t t = thread_find(w, (uint32_t)i, m->v[k].tid);
      if (t == NONE || m->v[k].start >= w->tail[i].t ||
          !name_has(in_str(w, (uint32_t)i, m->v[k].name), loader_words))
        continue;
      struct thread *th = &w->threads[t];
      if (push_iv(&th->load_s, &th->load_e, &th->nload, m->v[k].start, rend(&m->v[k]))) return -1;
    }
    const struct trace_array *o = &x->td->kind[SLK_OVERHEAD];
    for (size_t k = 0; k < o->n; k++) {
      const struct slk_record *r = &o->v[k];
      size_t t = thread_find(w, (uint32_t)i, r->tid);
      if (t == NONE || !rdur(r)) continue;
      struct thread *th = &w->threads[t];
      int rc = 0;
      if (r->fn == OVH_BUFFER_FLUSH || r->fn == OVH_INSTRUMENTATION || r->fn == OVH_RESOURCE ||
          r->fn == OVH_BUFFER_REQUEST)
        rc = push_iv(&th->t_s, &th->t_e, &th->nt, r->start, rend(r));
      else if (r->fn == OVH_MODULE_LOADING || r->fn == OVH_LAZY_LOADING || r->fn == OVH_COMPILER)
        rc = push_iv(&th->l_s, &th->l_e, &th->nl, r->start, rend(r));
      if (rc) return -1;
    }
  }
  return 0;
}

static size_t gpu_index(struct world *w, const char *host, uint32_t device) {
  /* the last one found first: operations come in long runs of one GPU */
  static __thread size_t last;
  if (last < w->ng && w->g[last].device == device && w->g[last].host == host) return last;
  for (size_t i = 0; i < w->ng; i++)
    if (w->g[i].device == device && !strcmp(w->g[i].host, host)) return last = i;
  struct gpu_ix *g = realloc(w->g, (w->ng + 1) * sizeof *g);
  if (!g) return NONE;
  w->g = g;
  w->g[w->ng] = (struct gpu_ix){host, device, 0, 0};
  return last = w->ng++;
}

static int cmp_gpu_ix(const void *pa, const void *pb) {
  const struct gpu_ix *a = pa, *b = pb;
  int c = strcmp(a->host, b->host);
  if (c) return c;
  return a->device < b->device ? -1 : a->device > b->device;
}

/* GPU operations, joined to their calls; GPUs. */
static int world_ops(struct world *w) {
  for (size_t i = 0; i < w->nin; i++)
    for (int k = SLK_KERNEL; k <= SLK_MEMSET; k++)
      w->nops += w->in[i].td->kind[k].n;
  w->ops = calloc(w->nops ? w->nops : 1, sizeof *w->ops);
  if (!w->ops) return -1;
  /* GPUs first (sorted, so the report lists them in order), from operations and DEVICE */
  for (size_t i = 0; i < w->nin; i++) {
    const char *host = w->in[i].host ? w->in[i].host : "";
    for (int k = SLK_KERNEL; k <= SLK_MEMSET; k++)
      for (size_t j = 0; j < w->in[i].td->kind[k].n; j++)
        if (gpu_index(w, host, w->in[i].td->kind[k].v[j].device) == NONE) return -1;
  }
  if (w->ng > 1) qsort(w->g, w->ng, sizeof *w->g, cmp_gpu_ix);
  size_t n = 0;
  for (size_t i = 0; i < w->nin; i++) {
    const struct cls_input *x = &w->in[i];
    const char *host = x->host ? x->host : "";
    struct join_set js;
    memset(&js, 0, sizeof js);
    for (int kind = SLK_API; kind <= SLK_HOST; kind++)
      for (size_t j = 0; j < x->td->kind[kind].n; j++)
        if (join_set_add(&js, &x->td->kind[kind].v[j])) {
          join_set_free(&js);
          return -1;
        }
    join_set_build(&js);
    for (int k = SLK_KERNEL; k <= SLK_MEMSET; k++)
      for (size_t j = 0; j < x->td->kind[k].n; j++) {
        struct op *o = &w->ops[n++];
        const struct slk_record *r = &x->td->kind[k].v[j];
        o->r = r;
        o->in = (uint32_t)i;
        o->gpu = (uint32_t)gpu_index(w, host, r->device);
        o->prev_stream = o->ev_dep = NONE;
        long long h = r->corr ? join_host_of(&js, r->corr) : JOIN_NO_API;
        o->call = h >= 0 ? w->call_base[i] + (size_t)h : NONE;
        if (k == SLK_KERNEL) {
          o->kind = cls_is_comm_kernel(in_str(w, (uint32_t)i, r->name)) ? OPK_COMM : OPK_KERNEL;
          o->sym = r->name;
        } else if (k == SLK_MEMCPY) {
          o->kind = OPK_COPY;
          o->h2d = r->copy_kind == CPY_HTOD;
          o->src_pageable = r->src_kind == MEM_PAGEABLE;
          o->dst_pageable = r->dst_kind == MEM_PAGEABLE;
          o->sym = 0xf0000000u | r->copy_kind;
        } else {
          o->kind = OPK_COPY;
          o->sym = 0xf1000000u;
        }
      }
    /* hook cost: host call span minus the widest CUPTI API span it holds */
    const struct trace_array *api = &x->td->kind[SLK_API];
    for (size_t j = 0; j < api->n; j++) {
      const struct slk_record *a = &api->v[j];
      long long h = a->corr ? join_host_of(&js, a->corr) : JOIN_NO_API;
      if (h < 0) continue;
      struct call *c = &w->calls[w->call_base[i] + (size_t)h];
      if (a->start + TOL_NS < c->r->start || rend(a) > rend(c->r) + TOL_NS) continue;
      /* the widest API span the call holds (a runtime call holds its driver call) */
      uint64_t ad = rdur(a), hd = rdur(c->r);
      if (ad > hd) continue;
      if (!c->hook_ns || hd - ad < c->hook_ns) c->hook_ns = hd - ad ? hd - ad : 1;
    }
    join_set_free(&js);
  }
  /* sorted through an index, then moved in place along the permutation's cycles */
  size_t *ix = malloc((w->nops ? w->nops : 1) * sizeof *ix);
  for (size_t j = 0; ix && j < w->nops; j++)
    ix[j] = j;
  if (ix && radix_sort_ix(ix, w->nops, 2, key_op, w)) {
    free(ix);
    ix = NULL;
  }
  /* by GPU and start above; the rare runs of equal starts by the rest of cmp_op's key */
  sort_world = w;
  for (size_t j = 0; ix && j < w->nops;) {
    size_t q = j + 1;
    const struct op *a = &w->ops[ix[j]];
    while (q < w->nops && w->ops[ix[q]].gpu == a->gpu && w->ops[ix[q]].r->start == a->r->start)
      q++;
    if (q - j > 1) qsort(ix + j, q - j, sizeof *ix, cmp_op_ix);
    j = q;
  }
  sort_world = NULL;
  if (ix) {
    for (size_t j = 0; j < w->nops; j++) {
      if (ix[j] == j) continue;
      struct op tmp = w->ops[j];
      size_t q = j;
      while (ix[q] != j) {
        size_t k = ix[q];
        w->ops[q] = w->ops[k];
        ix[q] = q;
        q = k;
      }
      w->ops[q] = tmp;
      ix[q] = q;
    }
    free(ix);
  } else {
    qsort(w->ops, w->nops, sizeof *w->ops, cmp_op);
  }
  for (size_t g = 0; g < w->ng; g++)
    w->g[g].lo = w->g[g].hi = 0;
  for (size_t j = 0; j < w->nops; j++) {
    struct gpu_ix *g = &w->g[w->ops[j].gpu];
    if (!g->hi) g->lo = j;
    g->hi = j + 1;
  }
  return 0;
}

/* Categories, own operations, tracer cost per call. */
static void world_categories(struct world *w) {
  for (size_t j = 0; j < w->nops; j++) {
    size_t c = w->ops[j].call;
    if (c == NONE) continue;
    size_t prev = w->calls[c].own_op;
    if (prev == NONE || rend(w->ops[prev].r) <= rend(w->ops[j].r)) w->calls[c].own_op = j;
  }
  for (size_t k = 0; k < w->ncalls; k++) {
    struct call *c = &w->calls[k];
    const struct slk_record *r = c->r;
    const struct op *o = c->own_op != NONE ? &w->ops[c->own_op] : NULL;
    int sync_by_contract = slk_fn_is_sync(r->fn) || (r->flags & SLK_HOST_SYNCHRONOUS);
    c->cat = CAT_CALL;
    if (fn_is_wait(r->fn)) {
      c->cat = CAT_SYNC;
    } else if (fn_is_copy(r->fn)) {
      int dir = o && o->r->kind == SLK_MEMCPY ? o->r->copy_kind : fn_copy_dir(r);
      if (dir == CPY_HTOD) {
        c->h2d = 1;
        int overlaps = o && o->r->start < rend(r) && rdur(r) * 2 >= rdur(o->r) && rdur(o->r);
        if (sync_by_contract || (o && o->src_pageable) || overlaps) c->cat = CAT_STAGING;
      } else if (dir == CPY_DTOH) {
        if (sync_by_contract || (o && o->dst_pageable)) c->cat = CAT_SYNC;
      } else if (sync_by_contract) {
        c->cat = CAT_SYNC;
      }
    } else if (r->flags & SLK_HOST_SYNCHRONOUS) {
      c->cat = CAT_SYNC;
    }
    if (!c->hook_ns && !w->in[c->in].td->kind[SLK_API].n) c->hook_ns = HOOK_NS;
    c->cost_ns = c->hook_ns;
    if (w->in[c->in].cupti && c->submits) c->cost_ns += w->cupti_ns[c->in];
  }
}

/* Previous operation on the same stream; latency estimates; waits between streams. */
static int world_streams(struct world *w) {
  size_t *ix = malloc((w->nops ? w->nops : 1) * sizeof *ix);
  uint64_t *v = malloc((w->nops ? w->nops : 1) * sizeof *v);
  if (!ix || !v) {
    free(ix);
    free(v);
    return -1;
  }
  sort_ix(w, ix, w->nops, 3, key_stream, cmp_stream);
  for (size_t k = 1; k < w->nops; k++) {
    struct op *a = &w->ops[ix[k - 1]], *b = &w->ops[ix[k]];
    if (a->gpu == b->gpu && a->in == b->in && a->r->stream == b->r->stream)
      b->prev_stream = ix[k - 1];
  }
  /* launch latency: operations whose stream was idle when their call started */
  size_t n = 0;
  for (size_t j = 0; j < w->nops; j++) {
    const struct op *o = &w->ops[j];
    if (o->call == NONE) continue;
    const struct slk_record *c = w->calls[o->call].r;
    if (o->prev_stream != NONE && rend(w->ops[o->prev_stream].r) + TOL_NS > c->start) continue;
    if (o->r->start >= c->start) v[n++] = o->r->start - c->start;
  }
  w->lat_start = median(v, n, DEFAULT_LAT_START);
  n = 0;
  for (size_t j = 0; j < w->nops; j++) {
    const struct op *o = &w->ops[j];
    if (o->call == NONE) continue;
    const struct slk_record *c = w->calls[o->call].r;
    if (o->prev_stream != NONE && rend(w->ops[o->prev_stream].r) + TOL_NS > c->start) continue;
    v[n++] = o->r->start > rend(c) ? o->r->start - rend(c) : 0;
  }
  w->lat_end = median(v, n, DEFAULT_LAT_END);
  if (w->lat_end > 50000) w->lat_end = 50000;
  n = 0;
  for (size_t j = 0; j < w->nops; j++) {
    const struct op *o = &w->ops[j];
    if (o->prev_stream == NONE || o->call == NONE) continue;
    uint64_t pe = rend(w->ops[o->prev_stream].r);
    if (rend(w->calls[o->call].r) + TOL_NS < pe && o->r->start >= pe) v[n++] = o->r->start - pe;
  }
  w->stream_gap = median(v, n, DEFAULT_STREAM_GAP);
  if (w->stream_gap > 20000) w->stream_gap = 20000;
  /* waits between streams: an operation that started later than its launch and its stream
   * explain, right after an operation of another stream (same process) ended */
  sort_ix(w, ix, w->nops, 2, key_op_end, cmp_op_end);
  for (size_t j = 0; j < w->nops; j++) {
    struct op *o = &w->ops[j];
    uint64_t explained = 0;
    if (o->call != NONE) explained = w->calls[o->call].r->start + w->lat_start;
    if (o->prev_stream != NONE) {
      uint64_t pe = rend(w->ops[o->prev_stream].r) + w->stream_gap;
      if (pe > explained) explained = pe;
    }
    if (o->call == NONE && o->prev_stream == NONE) continue;
    if (o->r->start < explained + WAIT_SLACK_NS) continue;
    /* last operation of this input ending at or before o's start */
    size_t lo = 0, hi = w->nops;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      const struct op *m = &w->ops[ix[mid]];
      if (m->in < o->in || (m->in == o->in && rend(m->r) <= o->r->start))
        lo = mid + 1;
      else
        hi = mid;
    }
    for (size_t k = lo, tries = 0; k > 0 && tries < 16; k--, tries++) {
      const struct op *m = &w->ops[ix[k - 1]];
      if (m->in != o->in || rend(m->r) + EVENT_WINDOW_NS < o->r->start) break;
      if (ix[k - 1] == j || (m->gpu == o->gpu && m->r->stream == o->r->stream)) continue;
      if (rend(m->r) <= explained) break;
      o->ev_dep = ix[k - 1];
      break;
    }
  }
  free(ix);
  free(v);
  return 0;
}

/* Blocking calls: which operation's end released each, and its duration without the wait. */
static int world_waits(struct world *w) {
  size_t *ix = malloc((w->nops ? w->nops : 1) * sizeof *ix);
  uint64_t *v = malloc((w->ncalls ? w->ncalls : 1) * sizeof *v);
  if (!ix || !v) {
    free(ix);
    free(v);
    return -1;
  }
  sort_ix(w, ix, w->nops, 2, key_op_end, cmp_op_end);
  for (size_t k = 0; k < w->ncalls; k++) {
    struct call *c = &w->calls[k];
    if (c->cat == CAT_STAGING) {
      c->awaited = c->own_op;
      continue;
    }
    if (c->cat != CAT_SYNC) continue;
    uint64_t lim = rend(c->r) + TOL_NS;
    size_t lo = 0, hi = w->nops;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      const struct op *m = &w->ops[ix[mid]];
      if (m->in < c->in || (m->in == c->in && rend(m->r) <= lim))
        lo = mid + 1;
      else
        hi = mid;
    }
    for (size_t q = lo, tries = 0; q > 0 && tries < 64; q--, tries++) {
      const struct op *m = &w->ops[ix[q - 1]];
      if (m->in != c->in || rend(m->r) <= c->r->start) break;
      if (m->call == NONE || w->calls[m->call].r->start > c->r->start) continue;
      c->awaited = ix[q - 1];
      break;
    }
  }
  /* a synchronizing call that waited for a host-to-device copy (PyTorch syncs after every copy
   * from pageable memory) is part of that copy: it stalls on the copy, not on compute */
  for (size_t k = 0; k < w->ncalls; k++) {
    struct call *c = &w->calls[k];
    if (c->cat == CAT_SYNC && c->awaited != NONE && w->ops[c->awaited].h2d) c->cat = CAT_STAGING;
  }
  /* base durations: per function, the median of its calls that did not wait. The blocking
   * calls grouped by function first (in call order), so that each function's pass visits only
   * its own calls: ix is free again and as long as the calls of one kind need */
  size_t *byfn = malloc((w->ncalls ? w->ncalls : 1) * sizeof *byfn);
  if (!byfn) {
    free(ix);
    free(v);
    return -1;
  }
  size_t first[SLK_FN_COUNT + 1];
  memset(first, 0, sizeof first);
  for (size_t k = 0; k < w->ncalls; k++) {
    const struct call *c = &w->calls[k];
    if (c->r->fn < SLK_FN_COUNT && c->cat != CAT_CALL) first[c->r->fn + 1]++;
  }
  for (uint32_t fn = 0; fn < SLK_FN_COUNT; fn++)
    first[fn + 1] += first[fn];
  size_t fill[SLK_FN_COUNT];
  memcpy(fill, first, sizeof fill);
  for (size_t k = 0; k < w->ncalls; k++) {
    const struct call *c = &w->calls[k];
    if (c->r->fn < SLK_FN_COUNT && c->cat != CAT_CALL) byfn[fill[c->r->fn]++] = k;
  }
  for (uint32_t fn = 0; fn < SLK_FN_COUNT; fn++) {
    if (first[fn] == first[fn + 1]) continue;
    size_t n = 0;
    for (size_t q = first[fn]; q < first[fn + 1]; q++) {
      const struct call *c = &w->calls[byfn[q]];
      if (c->awaited == NONE) v[n++] = rdur(c->r);
    }
    uint64_t base = median(v, n, DEFAULT_BASE_NS);
    for (size_t q = first[fn]; q < first[fn + 1]; q++) {
      struct call *c = &w->calls[byfn[q]];
      c->base_ns = c->cat == CAT_STAGING ? STAGING_BASE_NS : base;
      if (c->base_ns > rdur(c->r)) c->base_ns = rdur(c->r);
    }
  }
  free(byfn);
  free(ix);
  free(v);
  return 0;
}

/* Hand-overs between threads of one process: a thread that resumes right after another thread
 * went quiet (PyTorch's main thread and its autograd thread) resumed because of it. */
static void world_handoffs(struct world *w) {
  for (size_t i = 0; i < w->nin; i++) {
    size_t lo = w->call_base[i], hi = w->call_base[i + 1];
    for (size_t k = lo; k < hi; k++) {
      struct call *c = &w->calls[k];
      uint64_t from = c->prev != NONE ? rend(w->calls[c->prev].r) : 0;
      if (c->r->start <= from) continue;
      /* calls of this input are sorted by start: look back from c */
      size_t best = NONE;
      uint64_t best_end = 0, first_other = c->r->start;
      for (size_t q = k, tries = 0; q > lo && tries < 32; q--, tries++) {
        const struct call *o = &w->calls[q - 1];
        if (o->r->tid == c->r->tid) break; /* c's own previous call: nothing before matters */
        if (o->r->start > from && o->r->start < first_other) first_other = o->r->start;
        uint64_t e = rend(o->r);
        if (e > c->r->start || e <= from || e + HANDOFF_NS < c->r->start) continue;
        /* the other thread went quiet: its next call starts after c starts */
        if (o->next != NONE && w->calls[o->next].r->start < c->r->start) continue;
        if (best == NONE || e > best_end) {
          best = q - 1;
          best_end = e;
        }
      }
      if (best == NONE) continue;
      /* the first call of another thread after `from`: the look-back above sees only the last
       * 32 calls, and a forward pass launches hundreds */
      size_t a = lo, b = k;
      while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (w->calls[mid].r->start <= from)
          a = mid + 1;
        else
          b = mid;
      }
      for (; a < k; a++)
        if (w->calls[a].r->tid != c->r->tid) {
          if (w->calls[a].r->start < first_other) first_other = w->calls[a].r->start;
          break;
        }
      c->handoff = best;
      c->own_ns = first_other > from ? first_other - from : 0;
      if (c->own_ns > c->r->start - from) c->own_ns = c->r->start - from;
    }
  }
}

static int world_build(struct world *w) {
  if (world_calls(w) || world_ops(w)) return -1;
  world_categories(w);
  if (world_streams(w) || world_waits(w)) return -1;
  world_handoffs(w);
  /* the window: first to last GPU operation or host call of all inputs */
  int any = 0;
  for (size_t i = 0; i < w->nin; i++)
    for (int k = SLK_KERNEL; k <= SLK_HOST; k++) {
      if (k == SLK_SYNC || k == SLK_API) continue;
      const struct trace_array *a = &w->in[i].td->kind[k];
      size_t n = k == SLK_HOST ? w->tail[i].nhost : a->n;
      for (size_t j = 0; j < n; j++) {
        if (!any || a->v[j].start < w->t0) w->t0 = a->v[j].start;
        if (!any || rend(&a->v[j]) > w->t1) w->t1 = rend(&a->v[j]);
        any = 1;
      }
    }
  /* a window of a longer trace (report_window.c) */
  if (w->opt.t0) w->t0 = w->opt.t0;
  if (w->opt.t1) w->t1 = w->opt.t1;
  if (w->t1 < w->t0) w->t1 = w->t0;
  return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* one GPU: the sweep and the gaps                                                            */

struct seg {
  uint64_t a, b;
  uint8_t cls, why, el;
  size_t x;        /* EL_PIECE: the call after the piece; EL_CALL: the call; EL_OP: the op */
  size_t site;     /* the call that names the site, NONE */
  uint64_t tracer; /* the tracer's cost credited to this stretch */
};

struct part {
  uint64_t a, b;
  uint8_t kind; /* P_* */
  size_t x;
};
enum { P_OUT = 0, P_CALL, P_LAUNCH };

struct gstate {
  struct world *w;
  size_t gi;
  struct seg *s;
  size_t n, cap;
  struct part *p;
  size_t np, pcap;
  struct seg *tmp;
  size_t ntmp, tcap;
  uint64_t long_gap;
  uint64_t hb_ge;   /* the end of the last gap in which the GPU waited for a host thread */
  uint64_t lead_ns; /* serialization added for the tracer's slowing of the host's lead */
};

static int seg_push(struct seg **v, size_t *n, size_t *cap, struct seg s) {
  if (s.b <= s.a) return 0;
  if (*n == *cap) {
    size_t c = *cap ? *cap * 2 : 256;
    struct seg *nv = realloc(*v, c * sizeof *nv);
    if (!nv) return -1;
    *v = nv;
    *cap = c;
  }
  (*v)[(*n)++] = s;
  return 0;
}

static int part_push(struct gstate *st, uint64_t a, uint64_t b, uint8_t kind, size_t x) {
  if (b <= a) return 0;
  if (st->np == st->pcap) {
    size_t c = st->pcap ? st->pcap * 2 : 64;
    struct part *nv = realloc(st->p, c * sizeof *nv);
    if (!nv) return -1;
    st->p = nv;
    st->pcap = c;
  }
  st->p[st->np++] = (struct part){a, b, kind, x};
  return 0;
}

static int add(struct gstate *st, uint64_t a, uint64_t b, int cls, int why, int el, size_t x,
               size_t site) {
  struct seg s = {a, b, (uint8_t)cls, (uint8_t)why, (uint8_t)el, x, site, 0};
  return seg_push(&st->s, &st->n, &st->cap, s);
}

static uint64_t overlap(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  uint64_t s = a > c ? a : c, e = b < d ? b : d;
  return e > s ? e - s : 0;
}

/* First position in t's calls whose call ends after time x. */
static size_t thread_pos_after(const struct world *w, const struct thread *t, uint64_t x) {
  size_t lo = 0, hi = t->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (w->calls[t->calls[mid]].r->start <= x)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo && rend(w->calls[t->calls[lo - 1]].r) > x) lo--;
  return lo;
}

/* Classifies the idle gap [gs, ge) that the operation e ends (docs/CLASSIFICATION.md). */
static int gap(struct gstate *st, uint64_t gs, uint64_t ge, size_t e, int edge) {
  struct world *w = st->w;
  if (edge || e == NONE) return add(st, gs, ge, CLS_OTHER, CLS_WHY_EDGE, EL_NONE, NONE, NONE);
  const struct op *E = &w->ops[e];
  size_t L = E->call;
  if (L == NONE) return add(st, gs, ge, CLS_OTHER, CLS_WHY_NO_LAUNCH, EL_OP, e, NONE);
  const struct call *Lc = &w->calls[L];
  if (rend(Lc->r) + w->lat_end < gs) return add(st, gs, ge, CLS_OTHER, CLS_WHY_QUEUED, EL_OP, e, L);
  const struct thread *T = &w->threads[Lc->thread];
  /* the host ran ahead of the GPU from the end of the last gap that waited for it */
  uint64_t ahead_from = st->hb_ge > w->t0 ? st->hb_ge : w->t0;
  st->hb_ge = ge;

  /* the launching thread's time in the gap: outside CUDA, in calls, then the submission */
  st->np = 0;
  uint64_t t = gs;
  for (size_t k = thread_pos_after(w, T, gs); k < T->n; k++) {
    size_t ci = T->calls[k];
    const struct call *c = &w->calls[ci];
    if (ci == L || c->r->start >= ge || c->r->start >= Lc->r->start) break;
    if (c->r->start > t) {
      if (part_push(st, t, c->r->start, P_OUT, ci)) return -1;
      t = c->r->start;
    }
    uint64_t e2 = rend(c->r) < ge ? rend(c->r) : ge;
    if (e2 > t) {
      if (part_push(st, t, e2, P_CALL, ci)) return -1;
      t = e2;
    }
  }
  if (t < ge && Lc->r->start > t) {
    uint64_t e2 = Lc->r->start < ge ? Lc->r->start : ge;
    if (part_push(st, t, e2, P_OUT, L)) return -1;
    t = e2;
  }
  if (t < ge && part_push(st, t, ge, P_LAUNCH, L)) return -1;

  /* the evidence */
  /* the state of the launching thread when the GPU went idle: inside a call that started before
   * and had not returned (a call returning at that very instant was waiting for it too) */
  int began = CAT_CALL;
  size_t began_call = NONE;
  {
    size_t k = thread_pos_after(w, T, gs);
    if (k > 0 && rend(w->calls[T->calls[k - 1]].r) == gs) k--;
    if (k < T->n && T->calls[k] != L && w->calls[T->calls[k]].r->start < gs &&
        w->calls[T->calls[k]].cat != CAT_CALL) {
      began_call = T->calls[k];
      began = w->calls[began_call].cat;
    }
  }
  int h2d = E->h2d;
  size_t h2d_call = E->h2d ? L : NONE;
  uint64_t out_ns = 0, call_ns = 0, loader_ns = 0;
  for (size_t k = 0; k < st->np; k++) {
    const struct part *p = &st->p[k];
    if (p->kind == P_OUT) {
      out_ns += p->b - p->a;
      for (size_t q = 0; q < T->nload; q++)
        loader_ns += overlap(p->a, p->b, T->load_s[q], T->load_e[q]);
    } else {
      const struct call *c = &w->calls[p->x];
      if (c->h2d && !h2d) {
        h2d = 1;
        h2d_call = p->x;
      }
      if (p->kind == P_CALL && c->cat == CAT_CALL) call_ns += p->b - p->a;
    }
  }
  int cls, why = CLS_WHY_NONE;
  size_t site = L;
  /* chained causes: a sync, then host work that prepares the next batch. The wait only cost
   * the gap what it kept the host from working ahead: the time the thread sat in the sync
   * before the GPU drained (less the call's own duration when it does not wait). That much of
   * the host work after it is serialization; the rest is the batch's (data starvation). */
  /* Likewise a pageable copy that was staging when the GPU went idle: the copy stall is the
   * staging call's own time (the P_CALL stretches below); the host work after it that ends in
   * the next batch's copy is the batch's. */
  uint64_t ser_ns = 0;
  int chained = (began == CAT_SYNC || began == CAT_STAGING) && (h2d || loader_ns) &&
                out_ns > w->opt.launch_gap_ns && out_ns <= st->long_gap;
  if (chained && began == CAT_SYNC) {
    const struct call *sc = &w->calls[began_call];
    uint64_t waited = gs > sc->r->start ? gs - sc->r->start : 0;
    ser_ns = waited > sc->base_ns ? waited - sc->base_ns : 0;
    /* Untraced, the host would have reached the sync sooner: its calls ahead of the GPU ran
     * `factor` times slower traced than in the trace's untraced tail (tail.h), so it would have
     * waited that much longer, and worked ahead that much more. */
    double f = w->tail[sc->in].factor;
    if (f > 1.0 && sc->r->start > ahead_from) {
      uint64_t more = (uint64_t)((double)(sc->r->start - ahead_from) * (1.0 - 1.0 / f));
      uint64_t room = out_ns > ser_ns ? out_ns - ser_ns : 0; /* only host work after it */
      if (more > room) more = room;
      ser_ns += more;
      st->lead_ns += more;
    }
  }
  if (out_ns > st->long_gap) {
    cls = CLS_OTHER;
    why = CLS_WHY_LONG;
  } else if (chained) {
    cls = CLS_DATA_STARVATION;
    if (h2d_call != NONE) site = h2d_call;
  } else if (began == CAT_SYNC) {
    cls = CLS_SERIALIZATION;
    site = began_call;
  } else if (began == CAT_STAGING) {
    cls = CLS_COPY_STALL;
    site = began_call;
  } else if (h2d || loader_ns) {
    cls = CLS_DATA_STARVATION;
    if (h2d_call != NONE) site = h2d_call;
  } else if (out_ns + call_ns <= w->opt.launch_gap_ns) {
    cls = CLS_LAUNCH_OVERHEAD;
  } else {
    cls = CLS_OTHER;
    why = CLS_WHY_HOST;
  }

  /* the stretches of the gap, into tmp */
  st->ntmp = 0;
  for (size_t k = 0; k < st->np; k++) {
    const struct part *p = &st->p[k];
    struct seg s = {p->a, p->b, (uint8_t)cls, (uint8_t)why, EL_CALL, p->x, site, 0};
    const struct call *c = &w->calls[p->x];
    if (p->kind == P_OUT) {
      s.el = EL_PIECE;
      if (ser_ns) { /* the first ser_ns of host work after the sync: serialization */
        struct seg head = s;
        head.b = p->b - p->a > ser_ns ? p->a + ser_ns : p->b;
        head.cls = CLS_SERIALIZATION;
        head.site = began_call;
        ser_ns -= head.b - head.a;
        if (seg_push(&st->tmp, &st->ntmp, &st->tcap, head)) return -1;
        s.a = head.b;
        if (s.b <= s.a) continue;
      }
    } else if (c->cat == CAT_STAGING) {
      s.cls = CLS_COPY_STALL;
      s.why = CLS_WHY_NONE;
      s.site = p->x;
    } else if (p->kind == P_CALL && c->cat == CAT_SYNC) {
      s.cls = CLS_SERIALIZATION;
      s.why = CLS_WHY_NONE;
      s.site = p->x;
    }
    if (seg_push(&st->tmp, &st->ntmp, &st->tcap, s)) return -1;
  }
  /* module and function loading on the launching thread: `other` */
  for (size_t q = 0; q < T->nl; q++) {
    uint64_t la = T->l_s[q] > gs ? T->l_s[q] : gs, lb = T->l_e[q] < ge ? T->l_e[q] : ge;
    if (lb <= la) continue;
    size_t n0 = st->ntmp;
    for (size_t k = 0; k < n0; k++) {
      struct seg s = st->tmp[k];
      if (s.b <= la || s.a >= lb) continue;
      struct seg mid = s, right = s;
      mid.a = s.a > la ? s.a : la;
      mid.b = s.b < lb ? s.b : lb;
      mid.cls = CLS_OTHER;
      mid.why = CLS_WHY_LOADING;
      right.a = mid.b;
      st->tmp[k].b = mid.a; /* the left part stays in place (may become empty) */
      if (seg_push(&st->tmp, &st->ntmp, &st->tcap, mid) ||
          seg_push(&st->tmp, &st->ntmp, &st->tcap, right))
        return -1;
    }
  }
  /* the tracer's cost on this host cycle: calls since the gap began, the submitting call, and
   * CUPTI's overhead records, credited to the stretches from the last backwards */
  uint64_t cost = Lc->cost_ns;
  for (size_t k = thread_pos_after(w, T, gs); k < T->n; k++) {
    size_t ci = T->calls[k];
    const struct call *c = &w->calls[ci];
    if (ci == L || c->r->start >= Lc->r->start) break;
    if (c->r->start >= gs) cost += c->cost_ns;
  }
  for (size_t q = 0; q < T->nt; q++)
    cost += overlap(gs, ge, T->t_s[q], T->t_e[q]);
  /* tmp may be out of order after the loading split: order it by start */
  for (size_t k = 1; k < st->ntmp; k++) {
    struct seg s = st->tmp[k];
    size_t q = k;
    while (q && st->tmp[q - 1].a > s.a) {
      st->tmp[q] = st->tmp[q - 1];
      q--;
    }
    st->tmp[q] = s;
  }
  for (size_t k = st->ntmp; k > 0 && cost; k--) {
    struct seg *s = &st->tmp[k - 1];
    uint64_t len = s->b > s->a ? s->b - s->a : 0;
    s->tracer = cost < len ? cost : len;
    cost -= s->tracer;
  }
  for (size_t k = 0; k < st->ntmp; k++)
    if (seg_push(&st->s, &st->n, &st->cap, st->tmp[k])) return -1;
  return 0;
}

/* Of the operations starting at ops[i].start, the one whose call started first. */
static size_t pick_ending(const struct world *w, size_t i, size_t hi) {
  size_t best = i;
  for (size_t j = i; j < hi && w->ops[j].r->start == w->ops[i].r->start; j++) {
    if (w->ops[j].call == NONE) continue;
    if (w->ops[best].call == NONE ||
        w->calls[w->ops[j].call].r->start < w->calls[w->ops[best].call].r->start)
      best = j;
  }
  return best;
}

/* Tiles the window of GPU gi into busy stretches and classified gaps. */
static int sweep(struct gstate *st) {
  struct world *w = st->w;
  const struct gpu_ix *g = &w->g[st->gi];
  size_t *act = NULL, nact = 0, cap = 0;
  uint64_t t = w->t0;
  size_t idx = g->lo;
  int seen = 0, rc = 0;
  for (;;) {
    if (!nact) {
      if (idx >= g->hi) {
        if (t < w->t1) rc = gap(st, t, w->t1, NONE, 1);
        break;
      }
      uint64_t ns = w->ops[idx].r->start;
      if (ns > t) {
        if (gap(st, t, ns, pick_ending(w, idx, g->hi), !seen)) {
          rc = -1;
          break;
        }
        t = ns;
      }
    }
    while (idx < g->hi && w->ops[idx].r->start <= t) {
      if (nact == cap) {
        size_t c = cap ? cap * 2 : 16;
        size_t *na = realloc(act, c * sizeof *na);
        if (!na) {
          free(act);
          return -1;
        }
        act = na;
        cap = c;
      }
      act[nact++] = idx++;
      seen = 1;
    }
    uint64_t next = idx < g->hi ? w->ops[idx].r->start : UINT64_MAX;
    int has[3] = {0, 0, 0};
    size_t latest[3] = {NONE, NONE, NONE};
    for (size_t k = 0; k < nact; k++) {
      const struct op *o = &w->ops[act[k]];
      if (rend(o->r) < next) next = rend(o->r);
      has[o->kind] = 1;
      if (latest[o->kind] == NONE || w->ops[latest[o->kind]].r->start <= o->r->start)
        latest[o->kind] = act[k];
    }
    if (nact && next > t) {
      int kind = has[OPK_KERNEL] ? OPK_KERNEL : has[OPK_COMM] ? OPK_COMM : OPK_COPY;
      int cls = kind == OPK_KERNEL ? CLS_COMPUTE : kind == OPK_COMM ? CLS_COMMUNICATION : CLS_COPY;
      size_t o = latest[kind];
      size_t site = w->ops[o].call;
      if (add(st, t, next, cls, site == NONE ? CLS_WHY_NO_LAUNCH : CLS_WHY_NONE, EL_OP, o, site)) {
        rc = -1;
        break;
      }
      t = next;
    }
    size_t m = 0;
    for (size_t k = 0; k < nact; k++)
      if (rend(w->ops[act[k]].r) > t) act[m++] = act[k];
    nact = m;
  }
  free(act);
  return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* the replay: the recorded run as a dependency graph                                          */

enum {
  EK_WORK = 0, /* previous call's end -> call start: the thread's work outside CUDA */
  EK_OWN,      /* the same, when the start also waited for another thread (own part only) */
  EK_HANDOFF,  /* another thread's call end -> call start */
  EK_DUR,      /* call start -> end */
  EK_BASE,     /* call start -> end of a blocking call, without its wait */
  EK_WAKE,     /* end of the awaited operation -> end of the blocking call */
  EK_LAUNCH,   /* call start -> operation start */
  EK_STREAM,   /* previous operation's end on the stream -> operation start */
  EK_EVENT,    /* another stream's operation end -> operation start */
  EK_OPDUR     /* operation start -> end */
};

/* 32 bytes: node and element numbers fit 32 bits (graph_build refuses a graph that does not) */
struct edge {
  uint32_t from, to, el;
  uint8_t kind;
  int64_t w, wmin;
};

struct graph {
  size_t nn, ne;
  struct edge *e;  /* sorted by to */
  uint32_t *in_lo; /* in-edges of node v: e[in_lo[v]..in_lo[v+1]) */
  uint32_t *order; /* topological */
  int64_t *obs, *t;
  int ok;
};

struct edits {
  uint8_t *piece_cut, *call_cut, *nowait; /* per call */
  uint8_t *op_zero, *op_min, *op_graph;   /* per op */
  int corrected;
};

#define CS(i) (2 * (i))
#define CE(i) (2 * (i) + 1)
#define OS(j) (2 * w->ncalls + 2 * (j))
#define OE(j) (2 * w->ncalls + 2 * (j) + 1)

/* Times in the graph are signed (edge weights may be negative). A damaged trace's timestamps at
 * or past 2^63 would overflow them: times are clamped into int64_t and sums saturate instead. */
static int64_t i64_of(uint64_t v) { return v > INT64_MAX ? INT64_MAX : (int64_t)v; }
static int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? INT64_MAX : INT64_MIN;
}
static int64_t sat_sub(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_sub_overflow(a, b, &r)) return r;
  return b < 0 ? INT64_MAX : INT64_MIN;
}

static void graph_free(struct graph *gr) {
  free(gr->e);
  free(gr->in_lo);
  free(gr->order);
  free(gr->obs);
  free(gr->t);
  memset(gr, 0, sizeof *gr);
}

/* Where graph_build's edges go: counted (pass 0) or placed (pass 1). */
struct sink {
  int pass;
  struct graph *gr;
  uint32_t *outlo, *out, *indeg;
};

static int emit(struct sink *k, struct edge e) {
  if (k->pass == 0) {
    k->gr->in_lo[e.to + 1]++;
    k->outlo[e.from + 1]++;
    k->indeg[e.to]++;
  } else {
    /* in_lo and outlo serve as cursors here, shifted back after the pass */
    k->gr->e[k->gr->in_lo[e.to]++] = e;
    k->out[k->outlo[e.from]++] = e.to;
  }
  return 0;
}

static int graph_build(const struct world *w, struct graph *gr) {
  memset(gr, 0, sizeof *gr);
  gr->nn = 2 * w->ncalls + 2 * w->nops;
  /* at most 3 edges per node: nodes and edges are numbered in 32 bits */
  if (gr->nn >= UINT32_MAX / 4) return -1;
  size_t nn = gr->nn ? gr->nn : 1;
  gr->obs = malloc(nn * sizeof *gr->obs);
  gr->t = malloc(nn * sizeof *gr->t);
  gr->in_lo = calloc(nn + 1, sizeof *gr->in_lo);
  gr->order = malloc(nn * sizeof *gr->order);
  /* Edges are made twice: the first pass counts them per target and source, the second puts
   * each in its place (grouped by target, in the order made): no list of all edges besides the
   * graph's own */
  struct sink sk = {0, gr, NULL, NULL, NULL};
  uint32_t *outlo = calloc(nn + 1, sizeof *outlo), *out = NULL;
  uint32_t *indeg = calloc(nn, sizeof *indeg);
  int rc = -1;
  if (!gr->obs || !gr->t || !gr->in_lo || !gr->order || !outlo || !indeg) goto done;
  sk.outlo = outlo;
  sk.indeg = indeg;
  for (sk.pass = 0; sk.pass < 2; sk.pass++) {
    if (sk.pass == 1) {
      for (size_t v = 0; v < gr->nn; v++) {
        gr->in_lo[v + 1] += gr->in_lo[v];
        outlo[v + 1] += outlo[v];
      }
      gr->ne = gr->in_lo[gr->nn];
      gr->e = malloc((gr->ne ? gr->ne : 1) * sizeof *gr->e);
      out = malloc((gr->ne ? gr->ne : 1) * sizeof *out);
      if (!gr->e || !out) goto done;
      sk.out = out;
    }
    for (size_t i = 0; i < w->ncalls; i++) {
      const struct call *c = &w->calls[i];
      gr->obs[CS(i)] = i64_of(c->r->start);
      gr->obs[CE(i)] = i64_of(rend(c->r));
      int64_t s = i64_of(c->r->start);
      if (c->handoff != NONE) {
        int64_t he = i64_of(rend(w->calls[c->handoff].r));
        if (emit(&sk, (struct edge){CE(c->handoff), CS(i), i, EK_HANDOFF, sat_sub(s, he), 0}))
          goto done;
        if (c->prev != NONE &&
            emit(&sk, (struct edge){CE(c->prev), CS(i), i, EK_OWN, i64_of(c->own_ns), 0}))
          goto done;
      } else if (c->prev != NONE) {
        int64_t pe = i64_of(rend(w->calls[c->prev].r));
        if (emit(&sk, (struct edge){CE(c->prev), CS(i), i, EK_WORK, sat_sub(s, pe), 0})) goto done;
      }
      int64_t d = i64_of(rdur(c->r));
      if (c->awaited != NONE && c->cat != CAT_CALL) {
        int64_t ae = i64_of(rend(w->ops[c->awaited].r));
        if (emit(&sk, (struct edge){CS(i), CE(i), i, EK_BASE, i64_of(c->base_ns), 0}) ||
            emit(&sk,
                 (struct edge){OE(c->awaited), CE(i), i, EK_WAKE, sat_sub(sat_add(s, d), ae), 0}))
          goto done;
      } else if (emit(&sk, (struct edge){CS(i), CE(i), i, EK_DUR, d, 0})) {
        goto done;
      }
    }
    for (size_t j = 0; j < w->nops; j++) {
      const struct op *o = &w->ops[j];
      int64_t os = i64_of(o->r->start);
      gr->obs[OS(j)] = os;
      gr->obs[OE(j)] = i64_of(rend(o->r));
      struct {
        size_t from;
        int64_t t, min;
        uint8_t kind;
      } pr[3];
      int np = 0;
      if (o->call != NONE)
        pr[np++] = (typeof(pr[0])){CS(o->call), i64_of(w->calls[o->call].r->start),
                                   i64_of(w->lat_start), EK_LAUNCH};
      if (o->prev_stream != NONE)
        pr[np++] = (typeof(pr[0])){OE(o->prev_stream), i64_of(rend(w->ops[o->prev_stream].r)),
                                   i64_of(w->stream_gap), EK_STREAM};
      if (o->ev_dep != NONE)
        pr[np++] = (typeof(pr[0])){OE(o->ev_dep), i64_of(rend(w->ops[o->ev_dep].r)), 0, EK_EVENT};
      int b = 0;
      for (int k = 1; k < np; k++)
        if (sat_add(pr[k].t, pr[k].min) > sat_add(pr[b].t, pr[b].min)) b = k;
      for (int k = 0; k < np; k++) {
        int64_t exact = sat_sub(os, pr[k].t);
        int64_t wmin = pr[k].min < exact ? pr[k].min : exact;
        struct edge e = {pr[k].from, OS(j), j, pr[k].kind, k == b ? exact : wmin, wmin};
        if (emit(&sk, e)) goto done;
      }
      if (emit(&sk, (struct edge){OS(j), OE(j), j, EK_OPDUR, i64_of(rdur(o->r)), 0})) goto done;
    }
  }
  /* the cursors ended where the next node's edges begin: back to the beginnings */
  for (size_t v = gr->nn; v > 0; v--) {
    gr->in_lo[v] = gr->in_lo[v - 1];
    outlo[v] = outlo[v - 1];
  }
  gr->in_lo[0] = outlo[0] = 0;
  size_t head = 0, tail = 0;
  for (size_t v = 0; v < gr->nn; v++)
    if (!indeg[v]) gr->order[tail++] = v;
  while (head < tail) {
    size_t v = gr->order[head++];
    for (size_t k = outlo[v]; k < outlo[v + 1]; k++)
      if (!--indeg[out[k]]) gr->order[tail++] = out[k];
  }
  gr->ok = tail == gr->nn;
  rc = 0;
done:
  free(outlo);
  free(out);
  free(indeg);
  if (rc) graph_free(gr);
  return rc;
}

/* A stretch of host work outside CUDA as the untraced tail timed such stretches (tail.h): short
 * ones (between the calls of a run of launches) at the calls' pace, long ones (loading a batch)
 * at the long stretches' pace. Unchanged without a tail. */
static int64_t untraced(const struct tail_info *ti, int64_t wt) {
  double f = wt >= TAIL_GAP_NS ? ti->factor_long : ti->factor;
  return f > 1.0 ? (int64_t)((double)wt / f) : wt;
}

static void replay(const struct world *w, struct graph *gr, const struct edits *ed) {
  for (size_t k = 0; k < gr->nn; k++) {
    size_t v = gr->order[k];
    size_t lo = gr->in_lo[v], hi = gr->in_lo[v + 1];
    if (lo == hi) {
      gr->t[v] = gr->obs[v];
      continue;
    }
    int64_t best = INT64_MIN;
    for (size_t q = lo; q < hi; q++) {
      const struct edge *e = &gr->e[q];
      int64_t wt = e->w;
      switch (e->kind) {
      case EK_WORK:
      case EK_OWN:
        if (ed && ed->piece_cut[e->el] && wt > 0)
          wt = 0;
        else if (ed && ed->corrected && wt > 0) /* the host as fast as in the untraced tail */
          wt = untraced(&w->tail[w->calls[e->el].in], wt);
        break;
      case EK_DUR:
      case EK_BASE:
        if (ed && ed->call_cut[e->el]) {
          wt = 0;
        } else if (ed && ed->corrected) {
          const struct tail_info *ti = &w->tail[w->calls[e->el].in];
          int64_t c = i64_of(w->calls[e->el].cost_ns);
          if (e->kind == EK_DUR && ti->factor > 1.0 && wt > 0)
            wt = (int64_t)((double)wt / ti->factor); /* its cost is in the tail's factor */
          else
            wt = wt > c ? wt - c : (wt > 0 ? 0 : wt);
        }
        break;
      case EK_WAKE:
        if (ed && ed->nowait[e->el]) continue;
        break;
      case EK_LAUNCH:
      case EK_STREAM:
      case EK_EVENT:
        if (ed && ed->op_min[e->el]) wt = e->wmin;
        /* launches taken out as by a CUDA graph: back to back at a graph's pace */
        if (ed && ed->op_graph[e->el] && e->kind == EK_STREAM && wt > GRAPH_GAP_NS)
          wt = e->w < GRAPH_GAP_NS ? e->w : GRAPH_GAP_NS;
        break;
      case EK_OPDUR:
        if (ed && ed->op_zero[e->el]) wt = 0;
        break;
      default: break;
      }
      int64_t x = sat_add(gr->t[e->from], wt);
      if (x > best) best = x;
    }
    gr->t[v] = best == INT64_MIN ? gr->obs[v] : best;
  }
}

/* Mean step time of the last replay, over the steps of one GPU (op indices are global). */
static uint64_t replay_step(const struct world *w, const struct graph *gr, const size_t *first,
                            const size_t *next, size_t n) {
  int64_t sum = 0;
  for (size_t k = 0; k < n; k++)
    sum = sat_add(sum, sat_sub(gr->t[OS(next[k])], gr->t[OS(first[k])]));
  return n && sum > 0 ? (uint64_t)(sum / (int64_t)n) : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* per GPU: steps, sums, sites, what-if                                                       */

struct site_acc {
  uint64_t key, key2, ns, steady; /* steady: the part inside the steps */
  size_t call;
  uint8_t why;
  const char *sampled; /* data starvation: the sampled Python stack the host was in, or NULL */
};

static int cmp_site_key(const void *pa, const void *pb) {
  const struct site_acc *a = pa, *b = pb;
  return a->key < b->key ? -1 : a->key > b->key;
}
/* by the Python line's group, then the largest native site first (the group's representative) */
static int cmp_site_key2(const void *pa, const void *pb) {
  const struct site_acc *a = pa, *b = pb;
  if (a->key2 != b->key2) return a->key2 < b->key2 ? -1 : 1;
  if (a->ns != b->ns) return a->ns > b->ns ? -1 : 1;
  return a->key < b->key ? -1 : a->key > b->key;
}
/* the steady state first (start-up copies must not name a step's stall), then the whole */
static int cmp_site_ns(const void *pa, const void *pb) {
  const struct site_acc *a = pa, *b = pb;
  if (a->steady != b->steady) return a->steady > b->steady ? -1 : 1;
  if (a->ns != b->ns) return a->ns > b->ns ? -1 : 1;
  return a->key < b->key ? -1 : a->key > b->key;
}

static uint64_t mix64(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

/* The call's Python stack ("" when it has none). */
static const char *call_py(const struct world *w, size_t call) {
  if (call == NONE) return "";
  const struct call *c = &w->calls[call];
  return c->r->pystack ? in_str(w, c->in, c->r->pystack) : "";
}

static char *site_text(const struct world *w, size_t call, int why, int cls) {
  char buf[768];
  const char *prefix = "";
  char pre[80] = "";
  if (cls == CLS_OTHER && why != CLS_WHY_NONE) {
    snprintf(pre, sizeof pre, "%s: ", cls_reason_name(why));
    prefix = pre;
  }
  if (call == NONE) {
    if (cls == CLS_OTHER)
      snprintf(buf, sizeof buf, "%s: %s", cls_reason_name(why), cls_reason_text(why));
    else
      snprintf(buf, sizeof buf, "(launch not recorded)");
  } else {
    const struct call *c = &w->calls[call];
    const struct cls_input *x = &w->in[c->in];
    const char *cs = c->r->callsite ? in_str(w, c->in, c->r->callsite) : "unknown call site";
    const char *py = call_py(w, call);
    char pyl[320] = ""; /* the user's own line first: "train.py:87 train_step: " */
    if (*py && pyframes_user_short(py, pyl, sizeof pyl - 2)) strcat(pyl, ": ");
    /* the call site's first line: its immediate caller (the stack follows, site_stack) */
    char *first = frame_demangle(cs, strcspn(cs, "\n"));
    snprintf(buf, sizeof buf, "%s%s%s%s%s @ %s", prefix, x->label ? x->label : "",
             x->label ? ": " : "", pyl, slk_fn_name(c->r->fn), first ? first : cs);
    free(first);
  }
  return strdup(buf);
}

/* A data-starvation site found by sampling: "train.py:75 step: host work (sampled), then
 * cudaMemcpyAsync @ ...": the line the thread was sampled on, and the call that ended the gap. */
static char *sampled_text(const struct world *w, size_t call, const char *py) {
  char buf[768], pyl[320];
  if (!pyframes_user_short(py, pyl, sizeof pyl)) snprintf(pyl, sizeof pyl, "?");
  const struct call *c = &w->calls[call];
  const struct cls_input *x = &w->in[c->in];
  snprintf(buf, sizeof buf, "%s%s%s: host work (sampled), then %s", x->label ? x->label : "",
           x->label ? ": " : "", pyl, slk_fn_name(c->r->fn));
  return strdup(buf);
}

/* The frames of the call site's stack after its immediate caller ("a\nb\n...", demangled), or
 * NULL. */
static char *site_stack(const struct world *w, size_t call) {
  if (call == NONE) return NULL;
  const struct call *c = &w->calls[call];
  const char *cs = c->r->callsite ? in_str(w, c->in, c->r->callsite) : "";
  const char *nl = strchr(cs, '\n');
  return nl && nl[1] ? frames_demangle(nl + 1) : NULL;
}

/* The group of a site: its Python line when the call has Python frames (every native path from
 * one line of the user's code is one site), else the native site itself. */
static uint64_t site_group(const struct world *w, size_t call, uint64_t why, uint64_t key) {
  const char *py = call_py(w, call);
  if (!*py) return key;
  size_t off, len;
  pyframes_user(py, &off, &len);
  uint64_t h = mix64(why + 1, w->calls[call].in);
  for (size_t k = 0; k < len; k++)
    h = mix64(h, (unsigned char)py[off + k]);
  return h | 1;
}

/* The writer's samples of Python stacks (SLK_SAMPLE, runtime/pyframes.c) that thread `tid` of
 * input `in` took in [a, b): *first, and how many (they are sorted by start). */
static size_t samples_in(const struct world *w, uint32_t in, uint64_t a, uint64_t b,
                         size_t *first) {
  const struct trace_array *sa = &w->in[in].td->kind[SLK_SAMPLE];
  size_t lo = 0, hi = sa->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (sa->v[mid].start < a)
      lo = mid + 1;
    else
      hi = mid;
  }
  *first = lo;
  size_t n = 0;
  while (lo + n < sa->n && sa->v[lo + n].start < b)
    n++;
  return n;
}

/* Data starvation: the gap's host time split over the Python lines the thread was sampled on
 * (the user's own line of each sample; equal shares per sample). Appends to v; the number of
 * entries added, 0 when the thread has no sample in the gap. */
static size_t starvation_by_sample(const struct world *w, const struct seg *s, uint64_t steady,
                                   struct site_acc *v) {
  const struct call *c = &w->calls[s->site];
  size_t first, n = samples_in(w, c->in, s->a, s->b, &first);
  const struct trace_array *sa = &w->in[c->in].td->kind[SLK_SAMPLE];
  size_t m = 0, mine = 0;
  for (size_t k = 0; k < n; k++)
    if (sa->v[first + k].tid == c->r->tid && sa->v[first + k].pystack) mine++;
  if (!mine) return 0;
  uint64_t share = (s->b - s->a) / mine, left = (s->b - s->a) - share * mine;
  for (size_t k = 0; k < n; k++) {
    const struct slk_record *r = &sa->v[first + k];
    if (r->tid != c->r->tid || !r->pystack) continue;
    const char *py = in_str(w, c->in, r->pystack);
    size_t off, len;
    pyframes_user(py, &off, &len);
    uint64_t h = mix64(0x5a3c0ffee, c->in);
    for (size_t q = 0; q < len; q++)
      h = mix64(h, (unsigned char)py[off + q]);
    uint64_t ns = share + (m ? 0 : left);
    uint64_t st = (uint64_t)((double)ns * (double)steady / (double)(s->b - s->a));
    v[m] = (struct site_acc){h & ~(1ull << 63), 0, ns, st, s->site, 0, py};
    m++;
  }
  return m;
}

static int gpu_sites(const struct world *w, const struct gstate *st, uint64_t w0, uint64_t w1,
                     struct cls_gpu *out) {
  size_t nsamples = 0;
  for (size_t i = 0; i < w->nin; i++)
    nsamples += w->in[i].td->kind[SLK_SAMPLE].n;
  struct site_acc *v = malloc((st->n + nsamples + 1) * sizeof *v);
  if (!v) return -1;
  for (int cls = 0; cls < CLS_COUNT; cls++) {
    size_t n = 0;
    for (size_t k = 0; k < st->n; k++) {
      const struct seg *s = &st->s[k];
      if (s->cls != cls) continue;
      uint64_t why = cls == CLS_OTHER ? s->why : 0;
      uint64_t key, steady = overlap(s->a, s->b, w0, w1);
      if (cls == CLS_DATA_STARVATION && s->site != NONE && nsamples) {
        size_t m = starvation_by_sample(w, s, steady, v + n);
        n += m;
        if (m) continue;
      }
      if (s->site == NONE) {
        key = (1ull << 63) | (why << 56) | (s->why == CLS_WHY_NO_LAUNCH);
      } else {
        const struct call *c = &w->calls[s->site];
        key = (why << 56) | ((uint64_t)(c->in & 0xffff) << 40) |
              ((uint64_t)(c->r->fn & 0xff) << 32) | c->r->callsite;
        if (c->r->pystack) key = mix64(key, c->r->pystack) & ~(1ull << 63);
      }
      v[n++] = (struct site_acc){key, 0, s->b - s->a, steady, s->site, (uint8_t)s->why, NULL};
    }
    qsort(v, n, sizeof *v, cmp_site_key);
    size_t u = 0;
    for (size_t k = 0; k < n; k++) {
      if (u && v[u - 1].key == v[k].key) {
        v[u - 1].ns += v[k].ns;
        v[u - 1].steady += v[k].steady;
      } else {
        v[u++] = v[k];
      }
    }
    /* one site per Python line: the native site with the most time represents it */
    for (size_t k = 0; k < u; k++)
      v[k].key2 = v[k].call == NONE || v[k].sampled ? v[k].key
                                                    : site_group(w, v[k].call, v[k].why, v[k].key);
    qsort(v, u, sizeof *v, cmp_site_key2);
    size_t g = 0;
    for (size_t k = 0; k < u; k++) {
      if (g && v[g - 1].key2 == v[k].key2) {
        v[g - 1].ns += v[k].ns;
        v[g - 1].steady += v[k].steady;
      } else {
        v[g++] = v[k];
      }
    }
    u = g;
    qsort(v, u, sizeof *v, cmp_site_ns);
    out->sites[cls] = calloc(u ? u : 1, sizeof *out->sites[cls]);
    if (!out->sites[cls]) {
      free(v);
      return -1;
    }
    for (size_t k = 0; k < u; k++) {
      struct cls_site *o = &out->sites[cls][k];
      o->site = v[k].sampled ? sampled_text(w, v[k].call, v[k].sampled)
                             : site_text(w, v[k].call, v[k].why, cls);
      o->stack = site_stack(w, v[k].call);
      const char *py = v[k].sampled ? v[k].sampled : call_py(w, v[k].call);
      o->python = *py ? strdup(py) : NULL;
      o->ns = v[k].ns;
      o->steps_ns = v[k].steady;
      if (!o->site) {
        free(v);
        return -1;
      }
      out->nsites[cls]++;
    }
  }
  free(v);
  return 0;
}

/* The marker name whose ranges (on one thread) best look like steps; fills rs/re. */
struct mk {
  uint32_t in, name;
  uint64_t tid, s, e;
};
static const struct world *mk_world;
static int cmp_mk(const void *pa, const void *pb) {
  const struct mk *a = pa, *b = pb;
  if (a->in != b->in) return a->in < b->in ? -1 : 1;
  int c = strcmp(in_str(mk_world, a->in, a->name), in_str(mk_world, b->in, b->name));
  if (c) return c;
  if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
  return a->s < b->s ? -1 : a->s > b->s;
}

static const char *const step_words[] = {"step", "iter", "batch", NULL};

static int marker_steps(const struct world *w, size_t gi, struct step_set *ss, char *detail,
                        size_t dlen) {
  const struct gpu_ix *g = &w->g[gi];
  size_t nm = 0;
  for (size_t i = 0; i < w->nin; i++)
    nm += w->in[i].td->kind[SLK_MARKER].n;
  memset(ss, 0, sizeof *ss);
  if (nm < 3) return 0;
  struct mk *m = malloc(nm * sizeof *m);
  uint64_t *rs = malloc(nm * sizeof *rs), *re = malloc(nm * sizeof *re);
  uint64_t *launch = malloc((g->hi - g->lo + 1) * sizeof *launch);
  uint64_t *ostart = malloc((g->hi - g->lo + 1) * sizeof *ostart);
  int rc = -1;
  if (!m || !rs || !re || !launch || !ostart) goto out;
  nm = 0;
  for (size_t i = 0; i < w->nin; i++) {
    const struct trace_array *a = &w->in[i].td->kind[SLK_MARKER];
    for (size_t k = 0; k < a->n; k++)
      if (rend(&a->v[k]) > a->v[k].start && a->v[k].start < w->tail[i].t)
        m[nm++] =
            (struct mk){(uint32_t)i, a->v[k].name, a->v[k].tid, a->v[k].start, rend(&a->v[k])};
  }
  mk_world = w;
  qsort(m, nm, sizeof *m, cmp_mk);
  mk_world = NULL;
  size_t best_lo = 0, best_hi = 0;
  uint64_t best_cover = 0;
  int best_word = -1;
  for (size_t lo = 0; lo < nm;) {
    size_t hi = lo;
    while (hi < nm && m[hi].in == m[lo].in && m[hi].tid == m[lo].tid &&
           !strcmp(in_str(w, m[hi].in, m[hi].name), in_str(w, m[lo].in, m[lo].name)))
      hi++;
    uint64_t cover = 0, last_end = 0;
    size_t kept = 0;
    for (size_t k = lo; k < hi; k++)
      if (m[k].s >= last_end) {
        cover += m[k].e - m[k].s;
        last_end = m[k].e;
        kept++;
      }
    int word = name_has(in_str(w, m[lo].in, m[lo].name), step_words);
    /* a name without a step word must look like steps: ranges that fill at least half of the
     * time from the first one's start to the last one's end (a library's ranges around each
     * collective or kernel, NCCL's say, are short and far apart) */
    int tiles = word > 0 || cover * 2 >= last_end - m[lo].s;
    if (kept >= 3 && tiles && (word > best_word || (word == best_word && cover > best_cover))) {
      best_word = word;
      best_cover = cover;
      best_lo = lo;
      best_hi = hi;
    }
    lo = hi;
  }
  rc = 0;
  if (best_hi > best_lo) {
    size_t nr = 0;
    uint64_t last_end = 0;
    for (size_t k = best_lo; k < best_hi; k++)
      if (m[k].s >= last_end) {
        rs[nr] = m[k].s;
        re[nr++] = m[k].e;
        last_end = m[k].e;
      }
    for (size_t j = g->lo; j < g->hi; j++) {
      const struct op *o = &w->ops[j];
      launch[j - g->lo] =
          o->call != NONE && o->in == m[best_lo].in ? w->calls[o->call].r->start : UINT64_MAX;
      ostart[j - g->lo] = o->r->start;
    }
    rc = steps_from_ranges(rs, re, nr, launch, ostart, g->hi - g->lo, ss);
    if (!rc && ss->count) {
      char warm[48] = "";
      if (ss->warmup)
        snprintf(warm, sizeof warm, "; %zu warm-up step%s left out", ss->warmup,
                 ss->warmup == 1 ? "" : "s");
      snprintf(detail, dlen, "NVTX range \"%.60s\"%s", in_str(w, m[best_lo].in, m[best_lo].name),
               warm);
    }
  }
out:
  free(m);
  free(rs);
  free(re);
  free(launch);
  free(ostart);
  return rc;
}

/* The training loop's iteration is often longer than the repeat of its GPU work (identical
 * layers, a loop of tiny ops): where the thread that launched most of this GPU's work makes a
 * synchronizing call once per iteration (`.item()`, `synchronize()`), those calls bound the
 * steps. They replace the pattern's steps when they are regular (steps_from_anchors) and longer
 * than the pattern's period. *anchored: 1 when they did. */
static int sync_steps(const struct world *w, size_t gi, const uint64_t *start, struct step_set *ss,
                      int *anchored) {
  const struct gpu_ix *g = &w->g[gi];
  size_t n = g->hi - g->lo;
  *anchored = 0;
  size_t *cnt = calloc(w->nthreads ? w->nthreads : 1, sizeof *cnt);
  if (!cnt) return -1;
  size_t top = NONE;
  for (size_t j = g->lo; j < g->hi; j++) {
    size_t c = w->ops[j].call;
    if (c == NONE) continue;
    size_t t = w->calls[c].thread;
    cnt[t]++;
    if (top == NONE || cnt[t] > cnt[top]) top = t;
  }
  free(cnt);
  if (top == NONE) return 0;
  const struct thread *T = &w->threads[top];
  size_t *anchor = malloc((T->n ? T->n : 1) * sizeof *anchor);
  if (!anchor) return -1;
  size_t na = 0, k = 0;
  for (size_t i = 0; i < n; i++) {
    size_t c = w->ops[g->lo + i].call;
    if (c == NONE || w->calls[c].thread != top) continue;
    uint64_t launched = w->calls[c].r->start;
    while (k < T->n) {
      const struct call *sc = &w->calls[T->calls[k]];
      if (sc->cat != CAT_SYNC) {
        k++;
        continue;
      }
      if (rend(sc->r) > launched) break;
      if (!na || anchor[na - 1] != i) anchor[na++] = i;
      k++;
    }
  }
  struct step_set hs;
  int rc = steps_from_anchors(anchor, na, start, n, &hs);
  free(anchor);
  if (rc) return -1;
  if (hs.count >= 3 && (!ss->count || hs.period > ss->period)) {
    step_set_free(ss);
    *ss = hs;
    *anchored = 1;
  } else {
    step_set_free(&hs);
  }
  return 0;
}

static int pattern_steps(const struct world *w, size_t gi, struct step_set *ss, char *detail,
                         size_t dlen) {
  const struct gpu_ix *g = &w->g[gi];
  size_t n = g->hi - g->lo;
  uint32_t *sym = malloc((n ? n : 1) * sizeof *sym);
  uint64_t *start = malloc((n ? n : 1) * sizeof *start);
  uint64_t *gapb = malloc((n ? n : 1) * sizeof *gapb);
  uint8_t *h2d = malloc(n ? n : 1);
  int rc = -1;
  if (!sym || !start || !gapb || !h2d) goto out;
  uint64_t frontier = w->t0;
  for (size_t i = 0; i < n; i++) {
    const struct op *o = &w->ops[g->lo + i];
    /* a kernel a graph launched is not the same step's operation as the kernel launched alone
     * (a graph's eager warm-up before its capture) */
    sym[i] = o->sym ^ (o->r->graph_id ? 0x08000000u : 0); /* ids stay far below 2^27 */
    start[i] = o->r->start;
    gapb[i] = o->r->start > frontier ? o->r->start - frontier : 0;
    if (rend(o->r) > frontier) frontier = rend(o->r);
    h2d[i] = o->h2d;
  }
  rc = steps_from_pattern(sym, start, gapb, h2d, n, ss);
  int anchored = 0;
  if (!rc) rc = sync_steps(w, gi, start, ss, &anchored);
  if (!rc && ss->count && anchored) {
    char warm[48] = "";
    if (ss->warmup)
      snprintf(warm, sizeof warm, "; %zu warm-up step%s left out", ss->warmup,
               ss->warmup == 1 ? "" : "s");
    snprintf(detail, dlen,
             "%zu GPU operations per step, between synchronizing calls of the launching "
             "thread%s",
             ss->period, warm);
  } else if (!rc && ss->count) {
    const struct op *o = &w->ops[g->lo + ss->first_op[0]];
    const char *what = o->r->kind == SLK_KERNEL      ? in_str(w, o->in, o->r->name)
                       : o->r->kind == SLK_MEMSET    ? "memset"
                       : o->h2d                      ? "memcpy HtoD"
                       : o->r->copy_kind == CPY_DTOH ? "memcpy DtoH"
                                                     : "memcpy";
    char warm[48] = "";
    if (ss->warmup)
      snprintf(warm, sizeof warm, "; %zu warm-up step%s left out", ss->warmup,
               ss->warmup == 1 ? "" : "s");
    char *dm = slack_demangle(what);
    snprintf(detail, dlen, "%zu GPU operations per step, starting at %.60s%s", ss->period,
             dm ? dm : what, warm);
    free(dm);
  }
out:
  free(sym);
  free(start);
  free(gapb);
  free(h2d);
  return rc;
}

/* Step candidates: what each rule finds, kept for the report (cls_steps.cand), and the user's
 * overrides: --step-kernel NAME (steps start at each kernel whose name contains NAME) and
 * --steps N (of every candidate, and of every kernel that runs about N times, the one whose
 * count is closest to N). */
static uint64_t set_step_ns(const struct world *w, size_t gi, const struct step_set *ss) {
  if (!ss->count) return 0;
  const struct gpu_ix *g = &w->g[gi];
  uint64_t a = w->ops[g->lo + ss->first_op[0]].r->start;
  uint64_t b = w->ops[g->lo + ss->next_op[ss->count - 1]].r->start;
  return b > a ? (b - a) / ss->count : 0;
}

static void cand_add(const struct world *w, size_t gi, struct cls_steps *sp, const char *rule,
                     const struct step_set *ss, const char *what) {
  if (sp->ncand >= sizeof sp->cand / sizeof sp->cand[0] || !ss->count) return;
  sp->cand[sp->ncand].rule = rule;
  sp->cand[sp->ncand].count = ss->count;
  sp->cand[sp->ncand].step_ns = set_step_ns(w, gi, ss);
  char *dm = slack_demangle(what);
  snprintf(sp->cand[sp->ncand].what, sizeof sp->cand[0].what, "%s", dm ? dm : what);
  free(dm);
  sp->ncand++;
}

/* Steps anchored at the kernels of sym (sym != UINT32_MAX) or whose name contains `match`. */
static int kernel_steps(const struct world *w, size_t gi, uint32_t sym, const char *match,
                        struct step_set *ss) {
  const struct gpu_ix *g = &w->g[gi];
  size_t n = g->hi - g->lo, na = 0;
  size_t *anchor = malloc((n ? n : 1) * sizeof *anchor);
  uint64_t *start = malloc((n ? n : 1) * sizeof *start);
  if (!anchor || !start) {
    free(anchor);
    free(start);
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    const struct op *o = &w->ops[g->lo + i];
    start[i] = o->r->start;
    if (o->r->kind != SLK_KERNEL) continue;
    int hit = sym != UINT32_MAX ? o->sym == sym : strstr(in_str(w, o->in, o->r->name), match) != 0;
    if (hit) anchor[na++] = i;
  }
  int rc = steps_from_anchors(anchor, na, start, n, ss);
  free(anchor);
  free(start);
  return rc;
}

/* --steps N: every kernel symbol that runs N-1 to N+2 times, anchored; the closest count wins
 * over *best (whose distance is *dist). */
static int kernels_near(const struct world *w, size_t gi, uint64_t want, struct step_set *best,
                        uint64_t *dist, char *what, size_t wlen) {
  const struct gpu_ix *g = &w->g[gi];
  struct u64map cnt = {0};
  int rc = 0;
  for (size_t j = g->lo; j < g->hi && !rc; j++) {
    if (w->ops[j].r->kind != SLK_KERNEL) continue;
    size_t sl = u64map_add(&cnt, w->ops[j].sym + 1);
    if (sl == (size_t)-1)
      rc = -1;
    else
      cnt.val[sl]++;
  }
  for (size_t k = 0; k < cnt.cap && !rc; k++) {
    if (!cnt.used[k] || cnt.val[k] + 1 < want || cnt.val[k] > want + 2) continue;
    struct step_set ks;
    if (kernel_steps(w, gi, (uint32_t)(cnt.key[k] - 1), NULL, &ks)) {
      rc = -1;
      break;
    }
    uint64_t d = ks.count > want ? ks.count - want : want - ks.count;
    if (ks.count && d < *dist) {
      step_set_free(best);
      *best = ks;
      *dist = d;
      const struct op *o = &w->ops[g->lo + ks.first_op[0]];
      snprintf(what, wlen, "%s", in_str(w, o->in, o->r->name));
    } else {
      step_set_free(&ks);
    }
  }
  u64map_free(&cnt);
  return rc;
}

/* Sum of segment time per class inside [a, b), from segment index *k on (segments and steps are
 * both in time order). */
static void seg_sum(const struct gstate *st, size_t *k, uint64_t a, uint64_t b, uint64_t *sum,
                    uint64_t *lcorr, uint64_t *lfloor, uint64_t *tracer) {
  while (*k < st->n && st->s[*k].b <= a)
    (*k)++;
  for (size_t q = *k; q < st->n && st->s[q].a < b; q++) {
    const struct seg *s = &st->s[q];
    uint64_t ov = overlap(s->a, s->b, a, b);
    if (!ov) continue;
    sum[s->cls] += ov;
    uint64_t len = s->b - s->a;
    uint64_t tr = len ? (uint64_t)((double)s->tracer * ov / len) : 0;
    if (s->cls >= CLS_FIRST_IDLE) *tracer += tr;
    if (s->cls == CLS_LAUNCH_OVERHEAD) *lcorr += ov - tr;
    if (s->cls == CLS_LAUNCH_OVERHEAD && s->el != EL_CALL) *lfloor += ov;
  }
}

/* Marks what removing class cls takes out of the graph, inside the steps' span [lo, hi) only:
 * time removed before the first step would move the first step's start, not shorten steps. */
static void edits_apply(const struct world *w, const struct gstate *st, int cls, uint64_t lo,
                        uint64_t hi, struct edits *ed) {
  const struct gpu_ix *g = &w->g[st->gi];
  if (cls <= CLS_COPY) {
    int kind = cls == CLS_COMPUTE ? OPK_KERNEL : cls == CLS_COMMUNICATION ? OPK_COMM : OPK_COPY;
    for (size_t j = g->lo; j < g->hi; j++)
      if (w->ops[j].kind == kind && w->ops[j].r->start >= lo && w->ops[j].r->start < hi)
        ed->op_zero[j] = 1;
    return;
  }
  for (size_t k = 0; k < st->n; k++) {
    const struct seg *s = &st->s[k];
    if (s->cls != cls || s->a < lo || s->b > hi) continue;
    switch (cls) {
    case CLS_SERIALIZATION:
      if (s->el == EL_CALL && w->calls[s->x].cat == CAT_SYNC) ed->nowait[s->x] = 1;
      /* host work after a sync, charged to it (chained causes): the sync stops waiting */
      if (s->el == EL_PIECE && s->site != NONE && w->calls[s->site].cat == CAT_SYNC)
        ed->nowait[s->site] = 1;
      break;
    case CLS_COPY_STALL:
      if (s->el == EL_CALL) ed->nowait[s->x] = 1;
      break;
    case CLS_DATA_STARVATION:
      if (s->el == EL_PIECE) ed->piece_cut[s->x] = 1;
      break;
    case CLS_LAUNCH_OVERHEAD:
    case CLS_OTHER:
      if (s->el == EL_PIECE) ed->piece_cut[s->x] = 1;
      if (s->el == EL_CALL && w->calls[s->x].cat == CAT_CALL) ed->call_cut[s->x] = 1;
      if (s->el == EL_OP) ed->op_min[s->x] = 1;
      break;
    default: break;
    }
  }
  if (cls == CLS_LAUNCH_OVERHEAD)
    for (size_t j = g->lo; j < g->hi; j++) {
      size_t c = w->ops[j].call;
      if (c != NONE && (ed->call_cut[c] || ed->piece_cut[c])) ed->op_graph[j] = 1;
    }
}

static void edits_clear(const struct world *w, struct edits *ed) {
  memset(ed->piece_cut, 0, w->ncalls ? w->ncalls : 1);
  memset(ed->call_cut, 0, w->ncalls ? w->ncalls : 1);
  memset(ed->nowait, 0, w->ncalls ? w->ncalls : 1);
  memset(ed->op_zero, 0, w->nops ? w->nops : 1);
  memset(ed->op_min, 0, w->nops ? w->nops : 1);
  memset(ed->op_graph, 0, w->nops ? w->nops : 1);
  ed->corrected = 0;
}

/* The what-if of class c; CLS_COUNT: copy and copy stall together; CLS_COUNT + 1: every stall. */
static struct cls_whatif *whatif_of(struct cls_gpu *g, int c) {
  return c < CLS_COUNT ? &g->whatif[c] : c == CLS_COUNT ? &g->whatif_copy_both : &g->whatif_all;
}

static void gpu_whatif(const struct world *w, struct graph *gr, struct edits *ed,
                       const struct gstate *st, const struct step_set *ss, struct cls_gpu *out) {
  struct cls_steps *sp = &out->steps;
  size_t *first = malloc(ss->count * sizeof *first), *next = malloc(ss->count * sizeof *next);
  uint64_t step_corr =
      sp->step_ns > sp->tracer_per_step_ns ? sp->step_ns - sp->tracer_per_step_ns : 0;
  for (int c = 0; c <= CLS_COUNT + 1; c++) {
    struct cls_whatif *wi = whatif_of(out, c);
    uint64_t per = c < CLS_COUNT ? sp->per_step_ns[c]
                                 : sp->per_step_ns[CLS_COPY] + sp->per_step_ns[CLS_COPY_STALL];
    if (c == CLS_COUNT + 1)
      per += sp->per_step_ns[CLS_SERIALIZATION] + sp->per_step_ns[CLS_DATA_STARVATION] +
             sp->launch_corrected_per_step_ns;
    uint64_t per_corr = c == CLS_LAUNCH_OVERHEAD ? sp->launch_corrected_per_step_ns : per;
    wi->bound_ns = sp->step_ns > per ? sp->step_ns - per : 0;
    wi->best_ns = step_corr > per_corr ? step_corr - per_corr : 0;
  }
  if (!first || !next || !gr || !gr->ok || !ss->count) {
    free(first);
    free(next);
    return;
  }
  const struct gpu_ix *g = &w->g[st->gi];
  for (size_t k = 0; k < ss->count; k++) {
    first[k] = g->lo + ss->first_op[k];
    next[k] = g->lo + ss->next_op[k];
  }
  replay(w, gr, NULL);
  out->replay_step_ns = replay_step(w, gr, first, next, ss->count);
  out->replay_error =
      sp->step_ns ? ((double)out->replay_step_ns - (double)sp->step_ns) / (double)sp->step_ns : 0;
  edits_clear(w, ed);
  ed->corrected = 1;
  replay(w, gr, ed);
  out->corrected_step_ns = replay_step(w, gr, first, next, ss->count);
  for (int c = 0; c <= CLS_COUNT + 1; c++) {
    struct cls_whatif *wi = whatif_of(out, c);
    for (int corr = 0; corr < 2; corr++) {
      edits_clear(w, ed);
      if (c < CLS_COUNT) {
        edits_apply(w, st, c, sp->first_ns, sp->last_ns, ed);
      } else {
        edits_apply(w, st, CLS_COPY, sp->first_ns, sp->last_ns, ed);
        edits_apply(w, st, CLS_COPY_STALL, sp->first_ns, sp->last_ns, ed);
      }
      if (c == CLS_COUNT + 1) {
        edits_apply(w, st, CLS_SERIALIZATION, sp->first_ns, sp->last_ns, ed);
        edits_apply(w, st, CLS_DATA_STARVATION, sp->first_ns, sp->last_ns, ed);
        edits_apply(w, st, CLS_LAUNCH_OVERHEAD, sp->first_ns, sp->last_ns, ed);
      }
      ed->corrected = corr;
      replay(w, gr, ed);
      uint64_t v = replay_step(w, gr, first, next, ss->count);
      if (corr)
        wi->replay_corrected_ns = v;
      else
        wi->replay_ns = v;
    }
    wi->best_ns = wi->replay_corrected_ns;
  }
  out->replay_ok = 1;
  free(first);
  free(next);
}

static int gpu_run(struct world *w, size_t gi, struct graph *gr, struct edits *ed,
                   struct cls_gpu *out) {
  const struct gpu_ix *g = &w->g[gi];
  struct gstate st;
  memset(&st, 0, sizeof st);
  st.w = w;
  st.gi = gi;
  out->host = g->host;
  out->device = g->device;
  out->window_ns = w->t1 - w->t0;
  /* name, processes, counts */
  uint8_t *seen_in = calloc(w->nin ? w->nin : 1, 1);
  uint8_t *seen_cupti = calloc(w->nin ? w->nin : 1, 1);
  uint8_t *seen_thread = calloc(w->nthreads ? w->nthreads : 1, 1);
  if (!seen_in || !seen_cupti || !seen_thread) {
    free(seen_in);
    free(seen_cupti);
    free(seen_thread);
    return -1;
  }
  for (size_t j = g->lo; j < g->hi; j++) {
    const struct op *o = &w->ops[j];
    seen_in[o->in] = 1;
    if (o->call != NONE) seen_thread[w->calls[o->call].thread] = 1;
    if (o->r->kind == SLK_KERNEL) {
      out->kernels++;
      out->kernel_ns += rdur(o->r);
      if (o->call != NONE) {
        out->kernels_joined++;
        if (rdur(o->r) < rdur(w->calls[o->call].r)) out->kernels_shorter_than_launch++;
      }
    } else if (o->r->kind == SLK_MEMCPY) {
      out->memcpys++;
    } else {
      out->memsets++;
    }
  }
  out->tracer.tail_factor = out->tracer.tail_factor_long = 1.0;
  for (size_t i = 0; i < w->nin; i++) {
    out->processes += seen_in[i];
    const struct tail_info *ti = &w->tail[i];
    if (seen_in[i] && ti->calls && !out->tracer.tail_calls) {
      out->tracer.tail_calls = ti->calls;
      out->tracer.tail_ns = ti->span_ns;
      out->tracer.tail_traced_ns = ti->traced_ns;
      out->tracer.tail_untraced_ns = ti->untraced_ns;
      out->tracer.tail_ntraced = ti->ntraced;
      out->tracer.tail_nuntraced = ti->nuntraced;
      out->tracer.tail_factor = ti->factor;
      out->tracer.tail_long_traced_ns = ti->long_traced_ns;
      out->tracer.tail_long_untraced_ns = ti->long_untraced_ns;
      out->tracer.tail_nlong_traced = ti->nlong_traced;
      out->tracer.tail_nlong_untraced = ti->nlong_untraced;
      out->tracer.tail_factor_long = ti->factor_long;
    }
    const struct trace_array *dv = &w->in[i].td->kind[SLK_DEVICE];
    for (size_t k = 0; k < dv->n && !out->name; k++)
      if (dv->v[k].device == g->device && !strcmp(w->in[i].host ? w->in[i].host : "", g->host) &&
          dv->v[k].name)
        out->name = in_str(w, (uint32_t)i, dv->v[k].name);
  }
  /* the tracer's cost on the threads that launched work here */
  for (size_t t = 0; t < w->nthreads; t++) {
    if (!seen_thread[t]) continue;
    const struct thread *th = &w->threads[t];
    for (size_t k = 0; k < th->n; k++) {
      const struct call *c = &w->calls[th->calls[k]];
      out->tracer.calls++;
      out->tracer.hook_ns += c->hook_ns;
      if (w->in[c->in].cupti && c->submits) {
        out->tracer.cupti_calls++;
        out->tracer.cupti_ns += w->cupti_ns[c->in];
        seen_cupti[c->in] = 1;
      }
    }
    for (size_t q = 0; q < th->nt; q++)
      out->tracer.records_ns += th->t_e[q] - th->t_s[q];
    for (size_t q = 0; q < th->nl; q++)
      out->tracer.loading_ns += th->l_e[q] - th->l_s[q];
  }
  out->tracer.total_ns = out->tracer.hook_ns + out->tracer.cupti_ns + out->tracer.records_ns;
  /* where the cost per call came from */
  size_t measured = 0, other = 0;
  for (size_t i = 0; i < w->nin; i++) {
    if (!seen_cupti[i]) continue;
    const struct slk_record *probe;
    input_cupti(w, i, &probe);
    if (probe && !w->opt.cupti_call_given) {
      if (!measured++) {
        out->tracer.probe_on_ns = probe->bytes;
        out->tracer.probe_off_ns = probe->result;
        out->tracer.probe_launches = probe->count;
        out->tracer.probe_detached = (probe->flags & SLK_PROBE_DETACHED) != 0;
      }
    } else {
      other++;
    }
  }
  out->tracer.cupti_source = w->opt.cupti_call_given ? "given"
                             : !measured             ? "assumed"
                             : other                 ? "mixed"
                                                     : "measured";
  free(seen_cupti);
  free(seen_in);
  free(seen_thread);

  /* steps */
  struct step_set ss;
  struct cls_steps *sp = &out->steps;
  sp->source = "none";
  if (w->opt.step_kernel) {
    if (kernel_steps(w, gi, UINT32_MAX, w->opt.step_kernel, &ss)) return -1;
    if (ss.count) {
      sp->source = "kernel";
      snprintf(sp->detail, sizeof sp->detail,
               "steps start at each kernel named *%.60s* "
               "(--step-kernel)",
               w->opt.step_kernel);
      cand_add(w, gi, sp, "kernel", &ss, w->opt.step_kernel);
    }
  } else if (marker_steps(w, gi, &ss, sp->detail, sizeof sp->detail)) {
    return -1;
  }
  if (sp->source[0] == 'k') {
    /* the user's kernel */
  } else if (ss.count >= 2) {
    sp->source = "nvtx";
    cand_add(w, gi, sp, "nvtx", &ss, sp->detail);
  } else {
    step_set_free(&ss);
    if (pattern_steps(w, gi, &ss, sp->detail, sizeof sp->detail)) return -1;
    if (ss.count) {
      sp->source = "pattern";
      cand_add(w, gi, sp, strstr(sp->detail, "synchronizing") ? "sync" : "pattern", &ss,
               sp->detail);
    }
    if (w->opt.steps_want) {
      uint64_t want = w->opt.steps_want;
      uint64_t dist = ss.count ? (ss.count > want ? ss.count - want : want - ss.count) : UINT64_MAX;
      char what[160] = "";
      struct step_set ks = {0};
      uint64_t kd = UINT64_MAX;
      if (kernels_near(w, gi, want, &ks, &kd, what, sizeof what)) return -1;
      if (ks.count) cand_add(w, gi, sp, "kernel", &ks, what);
      if (ks.count && kd < dist) {
        step_set_free(&ss);
        ss = ks;
        sp->source = "kernel";
        char *dm = slack_demangle(what);
        snprintf(sp->detail, sizeof sp->detail,
                 "--steps %llu: steps start at %.60s, which runs once per step",
                 (unsigned long long)want, dm ? dm : what);
        free(dm);
      } else {
        step_set_free(&ks);
      }
    }
  }
  sp->count = ss.count;
  sp->warmup = ss.count ? ss.warmup : 0;
  sp->trailing = ss.count ? ss.trailing : 0;
  st.long_gap = w->opt.long_gap_ns;
  if (ss.count) {
    uint64_t *d = malloc(ss.count * sizeof *d);
    if (!d) {
      step_set_free(&ss);
      return -1;
    }
    for (size_t k = 0; k < ss.count; k++)
      d[k] = w->ops[g->lo + ss.next_op[k]].r->start - w->ops[g->lo + ss.first_op[k]].r->start;
    uint64_t med = median(d, ss.count, 0);
    free(d);
    if (med && med * LONG_GAP_STEPS < st.long_gap) st.long_gap = med * LONG_GAP_STEPS;
  }

  /* the sweep and the sums */
  int rc = sweep(&st);
  out->tracer.lead_ns = st.lead_ns;
  for (size_t k = 0; k < st.n && !rc; k++) {
    const struct seg *s = &st.s[k];
    uint64_t len = s->b - s->a;
    out->time_ns[s->cls] += len;
    if (s->cls == CLS_OTHER) out->other_ns[s->why] += len;
    if (s->cls >= CLS_FIRST_IDLE) {
      out->tracer.in_idle_ns += s->tracer;
      if (k == 0 || st.s[k - 1].cls < CLS_FIRST_IDLE) out->gaps++;
    }
    if (s->cls == CLS_LAUNCH_OVERHEAD) out->launch_corrected_ns += len - s->tracer;
    /* the floor: what stays of launch overhead if every call in it cost nothing untraced */
    if (s->cls == CLS_LAUNCH_OVERHEAD && s->el != EL_CALL) out->launch_floor_ns += len;
  }
  if (!rc) {
    for (int c = 0; c < CLS_COUNT; c++)
      if (c < CLS_FIRST_IDLE)
        out->busy_ns += out->time_ns[c];
      else
        out->idle_ns += out->time_ns[c];
  }
  if (!rc && ss.count) {
    size_t k = 0;
    uint64_t sum[CLS_COUNT] = {0}, lcorr = 0, lfloor = 0, tracer = 0, total = 0;
    for (size_t q = 0; q < ss.count; q++) {
      uint64_t a = w->ops[g->lo + ss.first_op[q]].r->start;
      uint64_t b = w->ops[g->lo + ss.next_op[q]].r->start;
      total += b - a;
      seg_sum(&st, &k, a, b, sum, &lcorr, &lfloor, &tracer);
      if (!q) sp->first_ns = a;
      sp->last_ns = b;
    }
    sp->step_ns = total / ss.count;
    for (int c = 0; c < CLS_COUNT; c++)
      sp->per_step_ns[c] = sum[c] / ss.count;
    sp->launch_corrected_per_step_ns = lcorr / ss.count;
    sp->launch_floor_per_step_ns = lfloor / ss.count;
    sp->tracer_per_step_ns = tracer / ss.count;
    gpu_whatif(w, gr, ed, &st, &ss, out);
  }
  if (!rc)
    rc = gpu_sites(w, &st, ss.count ? sp->first_ns : 0, ss.count ? sp->last_ns : UINT64_MAX, out);
  /* the tiling, merged where neighbours agree */
  if (!rc) {
    out->seg = malloc((st.n ? st.n : 1) * sizeof *out->seg);
    if (!out->seg) rc = -1;
    for (size_t k = 0; k < st.n && !rc; k++) {
      const struct seg *s = &st.s[k];
      struct cls_segment *p = out->nseg ? &out->seg[out->nseg - 1] : NULL;
      if (p && p->cls == s->cls && p->why == s->why && p->end == s->a)
        p->end = s->b;
      else
        out->seg[out->nseg++] = (struct cls_segment){s->a, s->b, s->cls, s->why};
    }
  }
  step_set_free(&ss);
  free(st.s);
  free(st.p);
  free(st.tmp);
  return rc;
}

void cls_result_free(struct cls_result *res) {
  for (size_t i = 0; i < res->ngpus; i++) {
    struct cls_gpu *g = &res->gpus[i];
    for (int c = 0; c < CLS_COUNT; c++) {
      for (size_t k = 0; k < g->nsites[c]; k++) {
        free(g->sites[c][k].stack);
        free(g->sites[c][k].python);
        free(g->sites[c][k].site);
      }
      free(g->sites[c]);
    }
    free(g->seg);
  }
  free(res->gpus);
  memset(res, 0, sizeof *res);
}

int cls_run(const struct cls_input *in, size_t nin, const struct cls_options *opt,
            struct cls_result *res) {
  struct world w;
  memset(&w, 0, sizeof w);
  memset(res, 0, sizeof *res);
  w.in = in;
  w.nin = nin;
  if (opt)
    w.opt = *opt;
  else
    cls_options_default(&w.opt);
  struct graph gr;
  struct edits ed;
  memset(&gr, 0, sizeof gr);
  memset(&ed, 0, sizeof ed);
  int rc = world_build(&w);
  if (!rc && w.opt.replay) {
    rc = graph_build(&w, &gr);
    size_t nc = w.ncalls ? w.ncalls : 1, no = w.nops ? w.nops : 1;
    ed.piece_cut = malloc(nc);
    ed.call_cut = malloc(nc);
    ed.nowait = malloc(nc);
    ed.op_zero = malloc(no);
    ed.op_min = malloc(no);
    ed.op_graph = malloc(no);
    if (!ed.piece_cut || !ed.call_cut || !ed.nowait || !ed.op_zero || !ed.op_min || !ed.op_graph)
      rc = -1;
  }
  if (!rc) {
    res->t0 = w.t0;
    res->t1 = w.t1;
    res->gpus = calloc(w.ng ? w.ng : 1, sizeof *res->gpus);
    if (!res->gpus) rc = -1;
    for (size_t i = 0; i < w.ng && !rc; i++) {
      res->ngpus++;
      rc = gpu_run(&w, i, w.opt.replay ? &gr : NULL, &ed, &res->gpus[i]);
    }
  }
  free(ed.piece_cut);
  free(ed.call_cut);
  free(ed.nowait);
  free(ed.op_zero);
  free(ed.op_min);
  free(ed.op_graph);
  graph_free(&gr);
  world_free(&w);
  if (rc) cls_result_free(res);
  return rc;
}

/* The world (cls_internal.h): every host call of every input with its thread and category, every
 * GPU operation with the call that submitted it, streams, waits between streams, hand-overs
 * between threads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cls_internal.h"
#include "frames.h"
#include "join.h"
#include "radix.h"
#include "u64map.h"

/* CUPTI's cost per call of input i: what its exit probe measured (runtime/probe.c: an empty
 * kernel's launch call with CUPTI on minus the same with CUPTI detached, or with its records
 * disabled where the probe could not detach), unless --cupti-call-ns was given or the trace has
 * no probe; then the option's. *probe: the PROBE record, or NULL. */
uint64_t probe_hook_ns(const struct slk_record *probe) {
  return probe->shmem > probe->bytes ? probe->shmem - probe->bytes : 0;
}

uint64_t probe_api_ns(const struct slk_record *probe) {
  return probe->regs && probe->bytes > probe->regs ? probe->bytes - probe->regs : 0;
}

uint64_t input_cupti(const struct world *w, size_t i, const struct slk_record **probe) {
  const struct trace_array *p = &w->in[i].td->kind[SLK_PROBE];
  *probe = p->n ? &p->v[p->n - 1] : NULL;
  if (w->opt.cupti_call_given || !*probe) return w->opt.cupti_call_ns;
  return (*probe)->bytes > (*probe)->result ? (*probe)->bytes - (*probe)->result : 0;
}

static int fn_submits(uint32_t fn) { return slk_fnc_submits(slk_fn_cat(fn)); }

/* Direction of a copy call from the hook alone: CPY_HTOD, CPY_DTOH or 0. */
static int fn_copy_dir(const struct cls_host_rec *r) {
  switch (slk_fn_cat(r->fn)) {
  case SLK_FNC_COPY_HTOD: return CPY_HTOD;
  case SLK_FNC_COPY_DTOH: return CPY_DTOH;
  case SLK_FNC_COPY_TO_SYMBOL: return r->copy_kind == 1 || r->copy_kind == 0 ? CPY_HTOD : 0;
  case SLK_FNC_COPY_FROM_SYMBOL: return r->copy_kind == 2 || r->copy_kind == 0 ? CPY_DTOH : 0;
  case SLK_FNC_COPY: return r->copy_kind == 1 ? CPY_HTOD : r->copy_kind == 2 ? CPY_DTOH : 0;
  default: return 0;
  }
}

static struct world *sort_world; /* qsort has no context argument */

static int cmp_thread_call(const void *pa, const void *pb) {
  const struct call *a = &sort_world->calls[*(const size_t *)pa];
  const struct call *b = &sort_world->calls[*(const size_t *)pb];
  uint64_t at = call_tid(sort_world, *(const size_t *)pa);
  uint64_t bt = call_tid(sort_world, *(const size_t *)pb);
  if (a->in != b->in) return a->in < b->in ? -1 : 1;
  if (at != bt) return at < bt ? -1 : 1;
  if (a->s != b->s) return a->s < b->s ? -1 : 1;
  return *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
}

static int cmp_op(const void *pa, const void *pb) {
  const struct op *a = pa, *b = pb;
  if (a->gpu != b->gpu) return a->gpu < b->gpu ? -1 : 1;
  if (a->s != b->s) return a->s < b->s ? -1 : 1;
  if (a->e != b->e) return a->e < b->e ? -1 : 1;
  if (a->in != b->in) return a->in < b->in ? -1 : 1;
  /* records of one kind lie in one array, in order: their addresses order them; of two kinds,
   * the kind does (not where the arrays were allocated) */
  if (a->rkind != b->rkind) return a->rkind < b->rkind ? -1 : 1;
  return a->r < b->r ? -1 : a->r > b->r;
}

static int cmp_stream(const void *pa, const void *pb) {
  const struct op *a = &sort_world->ops[*(const size_t *)pa];
  const struct op *b = &sort_world->ops[*(const size_t *)pb];
  if (a->gpu != b->gpu) return a->gpu < b->gpu ? -1 : 1;
  if (a->in != b->in) return a->in < b->in ? -1 : 1;
  if (a->stream != b->stream) return a->stream < b->stream ? -1 : 1;
  return *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
}

static int cmp_op_end(const void *pa, const void *pb) {
  const struct op *a = &sort_world->ops[*(const size_t *)pa];
  const struct op *b = &sort_world->ops[*(const size_t *)pb];
  if (a->in != b->in) return a->in < b->in ? -1 : 1;
  if (a->e != b->e) return a->e < b->e ? -1 : 1;
  return *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
}

/* The same orders as radix keys (radix.h); the index tie-break is the radix sort's stability. */
static uint64_t key_thread_call(const void *ctx, size_t i, int word) {
  const struct world *w = ctx;
  const struct call *c = &w->calls[i];
  return word == 0 ? c->in : word == 1 ? call_tid(w, i) : c->s;
}
static uint64_t key_op(const void *ctx, size_t i, int word) {
  const struct op *o = &((const struct world *)ctx)->ops[i];
  return word == 0 ? o->gpu : o->s;
}
static uint64_t key_stream(const void *ctx, size_t i, int word) {
  const struct op *o = &((const struct world *)ctx)->ops[i];
  return word == 0 ? o->gpu : word == 1 ? o->in : o->stream;
}
static uint64_t key_op_end(const void *ctx, size_t i, int word) {
  const struct op *o = &((const struct world *)ctx)->ops[i];
  return word == 0 ? o->in : o->e;
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

/* Median of v[0..n) (v[n / 2] of v sorted; v is reordered); dflt when n is 0. Found by
 * quickselect (a median of three for pivot), the rest sorted when it takes too many rounds. */
uint64_t median(uint64_t *v, size_t n, uint64_t dflt) {
  if (!n) return dflt;
  size_t want = n / 2, lo = 0, hi = n; /* v[want] of the sorted v lies in v[lo..hi) */
  for (int round = 0; hi - lo > 16 && round < 64; round++) {
    uint64_t a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi - 1];
    uint64_t pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
    /* three ways: [lo, lt) below the pivot, [lt, i) equal, [gt, hi) above */
    size_t lt = lo, i = lo, gt = hi;
    while (i < gt) {
      uint64_t x = v[i];
      if (x < pivot) {
        v[i++] = v[lt];
        v[lt++] = x;
      } else if (x > pivot) {
        v[i] = v[--gt];
        v[gt] = x;
      } else {
        i++;
      }
    }
    if (want < lt)
      hi = lt;
    else if (want >= gt)
      lo = gt;
    else
      return pivot;
  }
  if (radix_sort_u64(v + lo, hi - lo)) qsort(v + lo, hi - lo, sizeof *v, cmp_u64);
  return v[want];
}

void world_free(struct world *w) {
  for (size_t t = 0; t < w->nthreads; t++) {
    free(w->threads[t].load_s);
    free(w->threads[t].load_e);
    free(w->threads[t].t_s);
    free(w->threads[t].t_e);
    free(w->threads[t].l_s);
    free(w->threads[t].l_e);
    free(w->threads[t].l_c);
  }
  u64map_free(&w->loading);
  free(w->cupti_ns);
  free(w->host_corr);
  free(w->launch_blocking);
  free(w->hook_ns);
  free(w->host_marked);
  for (size_t i = 0; w->tail && i < w->nin; i++)
    tail_free(&w->tail[i]);
  free(w->tail);
  free(w->call_base);
  free(w->calls_mem);
  free(w->callx);
  free(w->site_key0);
  free(w->call_stream);
  free(w->threads);
  free(w->thread_store);
  free(w->host_spans);
  free(w->gpu_thread);
  free(w->gpu_input);
  free(w->gpu_queue);
  free(w->op_call_s);
  free(w->ops_mem);
  free(w->g);
  free(w->frees);
  free(w->allocs);
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

int name_has(const char *s, const char *const *words) {
  for (; *words; words++) {
    size_t k = strlen(*words);
    for (const char *p = s; *p; p++)
      if (!strncasecmp(p, *words, k)) return 1;
  }
  return 0;
}

static const char *const loader_words[] = {"data", "load", "fetch", NULL};

enum { FEW_THREADS = 32 };
struct few_thread {
  uint32_t in;
  uint64_t tid;
  size_t n, first; /* its calls, the first's place in thread_store */
  uint32_t rank;   /* its number among the threads by input and tid */
  uint32_t last;   /* its last call so far */
};
struct few_threads {
  struct few_thread g[FEW_THREADS];
  size_t ng, hit; /* groups; the last one found */
  int over;       /* more than FEW_THREADS */
};

/* Call k (input in, thread tid) into its group of ft (its number in c->thread and grp[k] until
 * the groups are ranked), linked after the group's last call (prev and next: the calls come in
 * start order; the sort's pass links them again where they do not), as the calls are made: no
 * pass over them for it. */
static inline void few_add(struct few_threads *ft, struct call *calls, uint8_t *grp, size_t k,
                           uint32_t in, uint64_t tid) {
  struct call *c = &calls[k];
  size_t hit = ft->hit;
  if (!ft->ng || ft->g[hit].in != in || ft->g[hit].tid != tid) {
    hit = 0;
    while (hit < ft->ng && (ft->g[hit].in != in || ft->g[hit].tid != tid))
      hit++;
    if (hit == ft->ng) {
      if (ft->ng == FEW_THREADS) {
        ft->over = 1;
        return;
      }
      ft->g[ft->ng++] = (struct few_thread){in, tid, 0, 0, 0, NIL};
    }
    ft->hit = hit;
  }
  struct few_thread *x = &ft->g[hit];
  x->n++;
  c->thread = (uint32_t)hit;
  grp[k] = (uint8_t)hit;
  if (x->last != NIL) {
    c->prev = x->last;
    calls[x->last].next = (uint32_t)k;
  }
  x->last = (uint32_t)k;
}

/* The threads of calls that come in start order within each input, where there are few: what
 * the stable sort by input and thread and the pass over the calls in that order below give
 * (threads by input and tid, each one's calls in order, prev and next), from the groups counted
 * as the calls were made (ft) and one pass over the calls in their own order (the pass in thread
 * order reads the calls scattered). 0, 1 when there are too many threads (the sort does it), -1
 * when out of memory. */
static int threads_by_counting(struct world *w, struct few_threads *ft, const uint8_t *grp) {
  if (ft->over) return 1;
  struct few_thread *g = ft->g;
  size_t ng = ft->ng;
  /* ranked by input and tid (insertion: few), their calls' places in that order */
  uint32_t by[FEW_THREADS];
  for (size_t a = 0; a < ng; a++) {
    size_t q = a;
    while (q && (g[by[q - 1]].in > g[a].in ||
                 (g[by[q - 1]].in == g[a].in && g[by[q - 1]].tid > g[a].tid))) {
      by[q] = by[q - 1];
      q--;
    }
    by[q] = (uint32_t)a;
  }
  w->threads = calloc(ng + 1, sizeof *w->threads); /* zeroed, one more, as the sort's pass */
  if (!w->threads) return -1;
  w->nthreads = ng;
  size_t at = 0, fill[FEW_THREADS];
  int same = 1; /* every group's rank its number: the calls' thread numbers stay */
  for (size_t r = 0; r < ng; r++) {
    g[by[r]].rank = (uint32_t)r;
    same &= by[r] == r;
    fill[by[r]] = at;
    struct thread *t = &w->threads[r];
    t->in = g[by[r]].in;
    t->tid = g[by[r]].tid;
    t->calls = &w->thread_store[at];
    t->n = g[by[r]].n;
    at += g[by[r]].n;
  }
  /* the join's host spans too, at the same places (world_ops: where the input's calls are all
   * its host records and none carries a correlation id), while the call's line is at hand: not
   * gathered in a pass over the calls again there. Out of memory: not made (world_ops then does) */
  int spans = 0;
  uint8_t want[FEW_THREADS];
  size_t base[FEW_THREADS];
  for (size_t h = 0; h < ng; h++) {
    const struct cls_input *x = &w->in[g[h].in];
    want[h] = w->tail[g[h].in].nhost == cls_input_hosts(x).n && !w->host_corr[g[h].in];
    base[h] = w->call_base[g[h].in];
    spans |= want[h];
  }
  struct join_span *hs = spans ? malloc(w->ncalls * sizeof *hs) : NULL;
  w->host_spans = hs;
  /* each call's place in thread_store from its group's byte (its 64-byte call written only
   * where its group's rank is not its number, read only for its span) */
  for (size_t k = 0; k < w->ncalls; k++) {
    uint8_t h = grp[k];
    if (!same) w->calls[k].thread = g[h].rank;
    size_t at = fill[h]++;
    w->thread_store[at] = k;
    if (hs && want[h])
      hs[at] =
          (struct join_span){g[h].tid, w->calls[k].s, w->calls[k].e, 0, (uint32_t)(k - base[h])};
  }
  return 0;
}

/* Module loading inside a call (CUDA's lazy loading, the default since CUDA 12: a launch loads
 * its kernel's module the first time). Loading may need a context synchronization, so the call
 * first waits for the device to finish its work: the seed's `l` form (GPU run 20) had a launch
 * of the optimizer's first foreach kernel block 46.2 ms, the load's record its last 70 us, and
 * its other launches of 0.4-6 ms ended in a load but those a CUPTI buffer request held (GPU run
 * 96's `l`: 48.2 ms, 48 us; docs/CLASSIFICATION.md rule 5). The wait and the load are one-time
 * work: the steady state never pays them again. Each thread's loading interval starts at its
 * call's start (l_c: the GPU idle in the wait is the load's), and w->loading keeps, per call,
 * the time to the load's end (the replay without the tracer takes it off: cls_replay.c). */
static int world_loading(struct world *w) {
  for (size_t t = 0; t < w->nthreads; t++) {
    struct thread *T = &w->threads[t];
    if (!T->nl) continue;
    T->l_c = malloc(T->nl * sizeof *T->l_c);
    if (!T->l_c) return -1;
    for (size_t q = 0; q < T->nl; q++) {
      T->l_c[q] = T->l_s[q];
      size_t lo = 0, hi = T->n; /* the thread's last call starting at or before the record */
      while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->calls[T->calls[mid]].s <= T->l_s[q])
          lo = mid + 1;
        else
          hi = mid;
      }
      if (!lo) continue;
      size_t ci = T->calls[lo - 1];
      const struct call *c = &w->calls[ci];
      if (c->e <= T->l_s[q]) continue; /* not inside a call */
      T->l_c[q] = c->s;
      uint64_t held = (T->l_e[q] < c->e ? T->l_e[q] : c->e) - c->s, had = 0;
      if (u64map_get(&w->loading, ci, &had) && had >= held) continue;
      size_t slot = u64map_add(&w->loading, ci);
      if (slot == (size_t)-1) return -1;
      w->loading.val[slot] = held;
    }
  }
  return 0;
}

/* Calls, threads and their side tables. */
static int world_calls(struct world *w) {
  w->call_base = calloc(w->nin + 1, sizeof *w->call_base);
  w->cupti_ns = calloc(w->nin + 1, sizeof *w->cupti_ns);
  w->hook_ns = calloc(w->nin + 1, sizeof *w->hook_ns);
  w->tail = calloc(w->nin + 1, sizeof *w->tail);
  w->host_corr = calloc(w->nin + 1, 1);
  w->launch_blocking = calloc(w->nin + 1, 1);
  w->host_marked = calloc(w->nin + 1, 1);
  if (!w->call_base || !w->cupti_ns || !w->hook_ns || !w->tail || !w->host_corr ||
      !w->host_marked || !w->launch_blocking)
    return -1;
  for (size_t i = 0; i < w->nin; i++) {
    const struct slk_record *probe;
    w->cupti_ns[i] = input_cupti(w, i, &probe);
    /* where no API record shows a hook's cost: the exit probe's, else the assumed one */
    w->hook_ns[i] = probe && probe_hook_ns(probe) ? probe_hook_ns(probe) : HOOK_NS;
    const struct cls_hosts h = cls_input_hosts(&w->in[i]);
    if (tail_find(w->in[i].td, &h, w->opt.host_slowdown, w->opt.ignore_tail, &w->tail[i]))
      return -1;
  }
  for (size_t i = 0; i < w->nin; i++) {
    w->call_base[i] = w->ncalls;
    w->ncalls += w->tail[i].nhost; /* the untraced tail's calls stay out */
  }
  w->call_base[w->nin] = w->ncalls;
  if (w->ncalls >= NIL) return -1; /* links are 32-bit (cls_internal.h) */
  /* every field of a call is set below; aligned so that a call is one cache line */
  w->calls = line_alloc((w->ncalls ? w->ncalls : 1) * sizeof *w->calls, &w->calls_mem);
  w->callx = malloc((w->ncalls ? w->ncalls : 1) * sizeof *w->callx);
  w->site_key0 = malloc((w->ncalls ? w->ncalls : 1) * sizeof *w->site_key0);
  w->call_stream = malloc((w->ncalls ? w->ncalls : 1) * sizeof *w->call_stream);
  w->thread_store = malloc((w->ncalls ? w->ncalls : 1) * sizeof *w->thread_store);
  if (!w->calls || !w->callx || !w->site_key0 || !w->call_stream || !w->thread_store) return -1;
  uint8_t *grp = malloc(w->ncalls ? w->ncalls : 1); /* each call's group (few_add) */
  if (!grp) return -1;
  /* each input's calls come sorted by start (a sorted trace_data): then a stable sort by input
   * and thread alone gives the whole order (start, then position, within a thread). Seen as they
   * are made (the inputs' calls follow each other in input order) */
  int by_start = 1, span_any = w->span_any;
  uint64_t span_s = w->span_s, span_e = w->span_e;
  struct few_threads ft; /* each call's thread where few (threads_by_counting) */
  ft.ng = ft.hit = 0;
  ft.over = 0;
  for (size_t i = 0; i < w->nin; i++) {
    const struct cls_hosts h = cls_input_hosts(&w->in[i]);
    for (size_t k = 0; k < w->tail[i].nhost; k++) {
      struct call *c = &w->calls[w->call_base[i] + k];
      struct callx *x = &w->callx[w->call_base[i] + k];
      const struct cls_host_rec hr = cls_hosts_get(&h, k), *r = &hr;
      memset(c, 0, sizeof *c);
      memset(x, 0, sizeof *x);
      x->r = h.c ? (const void *)&h.c[k] : (const void *)&h.v[k];
      c->s = r->start;
      if (k && c->s < c[-1].s) by_start = 0;
      w->host_corr[i] |= r->corr != 0;
      w->host_marked[i] |= (r->flags & SLK_HOST_CUPTI_ON) != 0;
      c->e = r->end > r->start ? r->end : r->start;
      if (!span_any || c->s < span_s) span_s = c->s;
      if (!span_any || c->e > span_e) span_e = c->e;
      span_any = 1;
      c->in = (uint32_t)i;
      w->call_stream[w->call_base[i] + k] = r->stream;
      uint64_t key = site_key_of(c, r);
      w->site_key0[w->call_base[i] + k] = r->pystack ? mix64(key, r->pystack) & ~(1ull << 63) : key;
      c->prev = c->next = c->own_op = c->awaited = c->handoff = NIL;
      c->submits = (uint8_t)fn_submits(r->fn);
      c->fcat = (uint8_t)slk_fn_cat(r->fn);
      c->sync = (uint8_t)((slk_fn_is_sync(r->fn) ? SYNC_BY_FN : 0) |
                          (r->flags & SLK_HOST_SYNCHRONOUS ? SYNC_BY_FLAG : 0));
      c->polled = (r->flags & SLK_HOST_POLLED) && !r->result && slk_fn_is_query(r->fn);
      c->fn = (uint16_t)(r->fn < SLK_FN_COUNT ? r->fn : FN_OTHER);
      if (!ft.over) few_add(&ft, w->calls, grp, w->call_base[i] + k, (uint32_t)i, r->tid);
    }
  }
  w->span_any = span_any;
  w->span_s = span_s;
  w->span_e = span_e;
  w->calls_by_start = by_start;
  int rc = by_start ? threads_by_counting(w, &ft, grp) : 1;
  free(grp);
  if (rc < 0) return -1;
  if (rc)
    sort_ix(w, w->thread_store, w->ncalls, by_start ? 2 : 3, key_thread_call, cmp_thread_call);
  /* the threads as they come (one pass over the calls in thread order), zeroed, one more */
  size_t cap = 16;
  if (rc) w->threads = calloc(cap, sizeof *w->threads);
  if (rc && !w->threads) return -1;
  for (size_t k = 0; rc && k < w->ncalls; k++) {
    size_t ci = w->thread_store[k];
    struct call *c = &w->calls[ci];
    uint64_t tid = call_tid(w, ci);
    const struct thread *p = w->nthreads ? &w->threads[w->nthreads - 1] : NULL;
    if (!p || p->in != c->in || p->tid != tid) {
      if (w->nthreads + 1 == cap) {
        struct thread *v = realloc(w->threads, 2 * cap * sizeof *v);
        if (!v) return -1;
        memset(v + cap, 0, cap * sizeof *v);
        w->threads = v;
        cap *= 2;
      }
      struct thread *t = &w->threads[w->nthreads++];
      t->in = c->in;
      t->tid = tid;
      t->calls = &w->thread_store[k];
    }
    struct thread *t = &w->threads[w->nthreads - 1];
    c->thread = (uint32_t)(w->nthreads - 1);
    /* linked here (again where few_add linked the calls as they came) */
    c->prev = c->next = NIL;
    if (t->n) {
      c->prev = (uint32_t)t->calls[t->n - 1];
      w->calls[c->prev].next = (uint32_t)ci;
    }
    t->n++;
  }
  for (size_t t = 0; t < w->nthreads; t++) { /* each thread at its own pace in the tail */
    const struct tail_info *ti = world_tail_pace(w, w->threads[t].in);
    w->threads[t].tail_factor = tail_factor_of(ti, w->threads[t].tid);
    w->threads[t].tail_added_ns = tail_added_of(ti, w->threads[t].tid);
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
  return world_loading(w);
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

/* An input's GPU records of one kind: its cls_gpu_rec (c) where it has them, else td's records
 * (v); n of them. */
struct gpu_arr {
  const struct slk_record *v;
  const struct cls_gpu_rec *c;
  size_t n;
};

static struct gpu_arr gpu_arr(const struct cls_input *x, int k) {
  const struct cls_gpu_rec *c = x->gpu[k - SLK_KERNEL];
  return (struct gpu_arr){x->td->kind[k].v, c, c ? x->ngpu[k - SLK_KERNEL] : x->td->kind[k].n};
}

static inline uint64_t ga_start(const struct gpu_arr *a, size_t j) {
  return a->c ? a->c[j].start : a->v[j].start;
}

static inline uint32_t ga_device(const struct gpu_arr *a, size_t j) {
  return a->c ? a->c[j].device : a->v[j].device;
}

/* Record j of a as a cls_gpu_rec (the record's fields); its address in *at. */
static inline struct cls_gpu_rec ga_get(const struct gpu_arr *a, size_t j, const void **at) {
  if (a->c) {
    *at = &a->c[j];
    return a->c[j];
  }
  const struct slk_record *r = &a->v[j];
  *at = r;
  return (struct cls_gpu_rec){r->start,     r->end,      r->stream,   r->corr,
                              r->name,      r->graph_id, r->device,   r->kind,
                              r->copy_kind, r->src_kind, r->dst_kind, 0};
}

/* Input x's GPU records counted per device by its loader (trace_data_devices; with cls_gpu_rec,
 * td->dev counts those), or NULL. */
static const struct trace_devices *input_devices(const struct cls_input *x) {
  if (!x->gpu[0] && !x->gpu[1] && !x->gpu[2]) return trace_data_devices(x->td);
  const struct trace_devices *d = &x->td->dev;
  size_t sum = 0, n = 0;
  for (uint32_t q = 0; q < d->n; q++)
    sum += d->count[q];
  for (int k = SLK_KERNEL; k <= SLK_MEMSET; k++)
    n += gpu_arr(x, k).n;
  return !d->over && sum == n ? d : NULL;
}

/* The operation of record r (kind k, at address ra) of input i on GPU gi, at o. */
static void op_make(struct world *w, struct op *o, const struct cls_gpu_rec *r, const void *ra,
                    int k, size_t i, uint32_t gi, struct cls_comm_memo *cm) {
  memset(o, 0, sizeof *o);
  o->r = ra;
  o->stream = r->stream;
  o->s = r->start;
  o->e = r->end > r->start ? r->end : r->start;
  o->in = (uint32_t)i;
  o->gpu = gi;
  o->rkind = (uint8_t)k;
  o->flags = r->graph_id ? OPF_GRAPH : 0;
  o->prev_stream = o->ev_dep = NIL;
  if (k == SLK_KERNEL) {
    int comm;
    if (!cls_comm_memo_get(cm, r->name, &comm))
      comm = cls_comm_memo_put(cm, r->name, cls_is_comm_kernel(in_str(w, (uint32_t)i, r->name)));
    o->kind = comm ? OPK_COMM : OPK_KERNEL;
    o->sym = r->name;
  } else if (k == SLK_MEMCPY) {
    o->kind = OPK_COPY;
    o->h2d = r->copy_kind == CPY_HTOD;
    o->flags |= (r->src_kind == MEM_PAGEABLE ? OPF_SRC_PAGEABLE : 0) |
                (r->dst_kind == MEM_PAGEABLE ? OPF_DST_PAGEABLE : 0) |
                (r->src_kind == MEM_PINNED ? OPF_SRC_PINNED : 0);
    /* CUPTI's memcpy kinds 1-4: host to device, device to host, host to array, array to host */
    if (r->copy_kind >= 1 && r->copy_kind <= 4) o->flags |= OPF_HOST_XFER;
    o->sym = 0xf0000000u | r->copy_kind;
  } else {
    o->kind = OPK_COPY;
    o->sym = 0xf1000000u;
  }
}

/* GPU operations, joined to their calls; GPUs. The operations are wanted by GPU and start
 * (cmp_op): each input's kernels, copies and memsets come each in start order (a sorted
 * trace_data), so they are made in their places, each GPU's by a merge of the three kinds (no
 * sort, no permutation of 64-byte operations); where that does not give the order (inputs
 * sharing a GPU, arrays out of order), they are sorted after. */
static int world_ops(struct world *w) {
  for (size_t i = 0; i < w->nin; i++)
    for (int k = SLK_KERNEL; k <= SLK_MEMSET; k++)
      w->nops += gpu_arr(&w->in[i], k).n;
  if (w->nops >= NIL) return -1; /* links are 32-bit (cls_internal.h) */
  w->ops = line_alloc((w->nops ? w->nops : 1) * sizeof *w->ops, &w->ops_mem); /* a line each */
  /* each operation's GPU, then its place, in the inputs' kinds' order */
  uint32_t *gof = malloc((w->nops ? w->nops : 1) * sizeof *gof);
  uint32_t *at = malloc((w->nops ? w->nops : 1) * sizeof *at);
  if (!w->ops || !gof || !at) {
    free(gof);
    free(at);
    return -1;
  }
  /* where every input's loader counted its GPU records per device (trace_data_devices), the
   * GPUs and their counts come from those counts, and each operation's GPU is looked up as it is
   * made (its record is read then anyway): no pass over the 128-byte records here */
  int counted = 1;
  for (size_t i = 0; i < w->nin && counted; i++)
    counted = input_devices(&w->in[i]) != NULL;
  size_t n = 0;
  for (size_t i = 0; i < w->nin; i++) {
    const char *host = w->in[i].host ? w->in[i].host : "";
    const struct trace_devices *d = counted ? input_devices(&w->in[i]) : NULL;
    for (uint32_t q = 0; d && q < d->n; q++) {
      size_t gi = gpu_index(w, host, d->device[q]);
      if (gi == NONE) {
        free(gof);
        free(at);
        return -1;
      }
      w->g[gi].hi += d->count[q]; /* in order of appearance: renumbered below */
    }
    for (int k = SLK_KERNEL; !counted && k <= SLK_MEMSET; k++) {
      struct gpu_arr a = gpu_arr(&w->in[i], k);
      for (size_t j = 0; j < a.n; j++) {
        size_t gi = gpu_index(w, host, ga_device(&a, j));
        if (gi == NONE) {
          free(gof);
          free(at);
          return -1;
        }
        gof[n++] = (uint32_t)gi; /* in order of appearance: renumbered below */
      }
    }
  }
  /* the GPUs sorted (the report lists them in order), the operations' numbers with them; each
   * GPU's first place (in lo) and the last start placed there (in hi), while they are made */
  uint32_t *to = malloc((w->ng ? w->ng : 1) * sizeof *to);
  if (!to) {
    free(gof);
    free(at);
    return -1;
  }
  for (size_t g = 0; g < w->ng; g++)
    w->g[g].lo = g; /* its number before sorting */
  if (w->ng > 1) qsort(w->g, w->ng, sizeof *w->g, cmp_gpu_ix);
  for (size_t g = 0; g < w->ng; g++) {
    to[w->g[g].lo] = (uint32_t)g;
    w->g[g].lo = 0;
    if (!counted) w->g[g].hi = 0; /* else the count already */
  }
  for (size_t q = 0; !counted && q < w->nops; q++) {
    gof[q] = to[gof[q]];
    w->g[gof[q]].hi++;
  }
  free(to);
  for (size_t g = 0, first = 0; g < w->ng; g++) { /* hi: the count, then the last start */
    size_t c = w->g[g].hi;
    w->g[g].lo = first;
    w->g[g].hi = 0;
    first += c;
  }
  int in_order = 1;
  /* the places of the operations made right after one of their GPU's at the same start (also a
   * GPU's first at a start of 0: a look for nothing); all: too many to keep, look everywhere */
  uint32_t *tie = NULL;
  size_t ntie = 0, tie_cap = 0;
  int tie_all = 0, span_any = w->span_any;
  uint64_t span_s = w->span_s, span_e = w->span_e;
  /* per thread: the place of its next call's host span (below) */
  size_t *cur = malloc((w->nthreads ? w->nthreads : 1) * sizeof *cur);
  if (!cur) goto oom;
  n = 0;
  for (size_t i = 0; i < w->nin; i++) {
    const struct cls_input *x = &w->in[i];
    struct join_set js;
    memset(&js, 0, sizeof js);
    js.memoize = 1;
    struct cls_comm_memo cm; /* this input's kernel names */
    memset(&cm, 0, sizeof cm);
    /* the host spans in the join's order (by thread and start, ties by index) from the threads
     * made of the calls, where the calls are all the input's host records and none carries a
     * correlation id (no direct join): not from the 128-byte records, and not sorted again */
    const struct cls_hosts hosts = cls_input_hosts(x);
    int from_threads = w->tail[i].nhost == hosts.n && !w->host_corr[i];
    size_t lo = w->call_base[i], hi = w->call_base[i + 1];
    /* made by world_calls (threads_by_counting) for every call of the world: handed to the
     * join, not copied */
    int hand = from_threads && w->host_spans && lo == 0 && hi == w->ncalls && hi;
    /* the API spans lent where the input lends them (a window's: not copied) */
    int lend = x->api_lent && x->napi && !x->td->kind[SLK_API].n;
    if (lend) join_set_lend_api(&js, (struct join_span *)(uintptr_t)x->api, x->napi);
    if (join_set_reserve(&js, lend ? 0 : x->td->kind[SLK_API].n + x->napi, hand ? 0 : hosts.n) ||
        (!lend && join_set_add_spans(&js, x->api, x->napi))) {
      join_set_free(&js);
      goto oom;
    }
    for (int kind = SLK_API; kind <= (from_threads || hosts.c ? SLK_API : SLK_HOST); kind++)
      for (size_t j = 0; j < x->td->kind[kind].n; j++)
        if (join_set_add(&js, &x->td->kind[kind].v[j])) {
          join_set_free(&js);
          goto oom;
        }
    for (size_t j = 0; !from_threads && j < hosts.n && hosts.c; j++) /* the same, from those */
      if (join_set_add_host(&js, hosts.c[j].tid, hosts.c[j].start, hosts.c[j].end,
                            hosts.c[j].corr)) {
        join_set_free(&js);
        goto oom;
      }
    if (hand) {
      js.host = w->host_spans;
      js.chost = js.nhost = hi - lo;
      js.host_sorted = 1;
      w->host_spans = NULL;
    } else if (from_threads && w->host_spans && hi > lo) { /* made by world_calls, copied */
      memcpy(js.host, w->host_spans + lo, (hi - lo) * sizeof *js.host);
      js.nhost = hi - lo;
      js.host_sorted = 1;
    } else if (from_threads && w->calls_by_start && w->tail[i].nhost) {
      /* the calls in their own order (not thread by thread: reads of the calls by index), each
       * put at its place in the threads' order: a thread's calls are in call order there (the
       * calls came by start, ties in index order), and the input's threads' calls lie at
       * thread_store[call_base[i]..call_base[i + 1]). What join_set_add_host_sorted of each,
       * thread by thread, gives (join.h: the host spans, in order) */
      for (size_t t = 0; t < w->nthreads; t++)
        if (w->threads[t].in == i) cur[t] = (size_t)(w->threads[t].calls - w->thread_store) - lo;
      for (size_t k = lo; k < hi; k++) {
        const struct call *c = &w->calls[k];
        js.host[cur[c->thread]++] =
            (struct join_span){w->threads[c->thread].tid, c->s, c->e, 0, (uint32_t)(k - lo)};
      }
      js.nhost = hi - lo;
      js.host_sorted = 1;
    } else {
      for (size_t t = 0; from_threads && t < w->nthreads; t++) {
        const struct thread *th = &w->threads[t];
        if (th->in != i) continue;
        for (size_t q = 0; q < th->n; q++) {
          const struct call *c = &w->calls[th->calls[q]];
          join_set_add_host_sorted(&js, th->tid, c->s, c->e,
                                   (uint32_t)(th->calls[q] - w->call_base[i]));
        }
      }
    }
    join_set_build(&js);
    size_t n0 = n, nin = 0;
    struct gpu_arr ka[3];
    size_t base[3], next[3] = {0, 0, 0};
    for (int k = SLK_KERNEL; k <= SLK_MEMSET; k++) {
      ka[k - SLK_KERNEL] = gpu_arr(x, k);
      base[k - SLK_KERNEL] = nin;
      nin += ka[k - SLK_KERNEL].n;
    }
    /* where CUPTI was attached again (each window's start but the first: production windows,
     * SLACK_PACE_PROBE): its correlation ids start again there, and a later operation's id may
     * be an earlier call's (GPU run 168: 4 kernels after the pace probe joined calls of the
     * set-up, and the order join then paired every later kernel with a call 4 too early) */
    uint64_t *att = NULL;
    size_t natt = 0;
    {
      const struct trace_data *one = x->td;
      struct cls_window *cw = NULL;
      size_t m = cls_windows(&one, 1, &cw);
      if (m != (size_t)-1 && m > 1 && (att = malloc((m - 1) * sizeof *att)))
        for (size_t k = 1; k < m; k++)
          att[natt++] = cw[k].start;
      free(cw);
    }
    /* each operation's join_host_of answer, then the order join's (cls_order.c) */
    long long *hs = malloc((nin ? nin : 1) * sizeof *hs);
    /* each operation's stream and OQ_* flags, for the order join and the tally below (not read
     * from the operations by their places again) */
    uint64_t *ostream = malloc((nin ? nin : 1) * sizeof *ostream);
    uint8_t *oq = malloc(nin ? nin : 1);
    if (!hs || !ostream || !oq) {
      free(hs);
      free(att);
      free(ostream);
      free(oq);
      join_set_free(&js);
      goto oom;
    }
    /* counted: each of the input's devices' GPU, by the device's place in its counts */
    const struct trace_devices *d = counted ? input_devices(x) : NULL;
    uint32_t dg[TRACE_DEVICES];
    for (uint32_t q = 0; d && q < d->n; q++) {
      size_t gi = NONE;
      for (size_t g = 0; g < w->ng && gi == NONE; g++)
        if (w->g[g].device == d->device[q] && !strcmp(w->g[g].host, x->host ? x->host : "")) gi = g;
      dg[q] = (uint32_t)gi; /* made above: always found */
    }
    for (size_t m = 0; m < nin; m++) { /* the least start of the three kinds' next ones */
      int k = -1;
      uint64_t least = 0;
      for (int c = 0; c < 3; c++)
        if (next[c] < ka[c].n && (k < 0 || ga_start(&ka[c], next[c]) < least)) {
          k = c;
          least = ga_start(&ka[c], next[c]);
        }
      size_t q = base[k] + next[k];
      const void *ra;
      const struct cls_gpu_rec rec = ga_get(&ka[k], next[k]++, &ra), *r = &rec;
      uint32_t gi;
      if (d) {
        uint32_t u = 0;
        while (u < d->n && d->device[u] != r->device)
          u++;
        if (u == d->n) { /* counts not the arrays' (trace_data_devices): never so */
          free(hs);
          free(att);
          free(ostream);
          free(oq);
          join_set_free(&js);
          goto oom;
        }
        gi = dg[u];
      } else {
        gi = gof[n0 + q];
      }
      struct gpu_ix *g = &w->g[gi];
      if (r->start < g->hi) in_order = 0;
      if (r->start == g->hi && !tie_all) {
        if (ntie == tie_cap) {
          size_t c = tie_cap ? tie_cap * 2 : 256;
          uint32_t *v = realloc(tie, c * sizeof *v);
          if (v) tie = v, tie_cap = c;
          tie_all = !v;
        }
        if (!tie_all) tie[ntie++] = (uint32_t)g->lo;
      }
      g->hi = r->start;
      at[n0 + q] = (uint32_t)g->lo;
      struct op *o = &w->ops[g->lo++];
      op_make(w, o, r, ra, SLK_KERNEL + k, i, gi, &cm);
      if (!span_any || o->s < span_s) span_s = o->s;
      if (!span_any || o->e > span_e) span_e = o->e;
      span_any = 1;
      long long h = r->corr ? join_host_of(&js, r->corr) : JOIN_NO_API;
      if (h >= 0 && natt) { /* no call before the attach the operation came after */
        size_t lo2 = 0, hi2 = natt;
        while (lo2 < hi2) {
          size_t mid = lo2 + (hi2 - lo2) / 2;
          if (att[mid] <= r->start)
            lo2 = mid + 1;
          else
            hi2 = mid;
        }
        if (lo2 && cls_hosts_start(&hosts, (size_t)h) < att[lo2 - 1]) h = JOIN_NO_API;
      }
      hs[q] = h;
      ostream[q] = r->stream;
      oq[q] = (uint8_t)((r->graph_id ? OQ_GRAPH : 0) | (h == JOIN_NO_API ? OQ_NO_API : 0));
      /* a call of the untraced tail (tail.h) is no call of the world's: a damaged trace's probe
       * may put every call there while its work still joins them (the commands fuzzer). Set
       * here, while the operation is at hand; the order join may give one to those without */
      o->call =
          h >= 0 && (size_t)h < w->tail[i].nhost ? (uint32_t)(w->call_base[i] + (size_t)h) : NIL;
    }
    n += nin;
    size_t by_order = 0;
    if (cls_order_join(x->td, &hosts, w->tail[i].nhost, w->host_marked[i], w->ops, at + n0, hs, nin,
                       w->call_stream + w->call_base[i], ostream, oq, &by_order)) {
      free(hs);
      free(att);
      free(ostream);
      free(oq);
      join_set_free(&js);
      goto oom;
    }
    for (size_t q = 0; q < nin; q++) {
      long long h = hs[q];
      if ((oq[q] & OQ_NO_API) && h >= 0 && (size_t)h < w->tail[i].nhost) /* the order's */
        w->ops[at[n0 + q]].call = (uint32_t)(w->call_base[i] + (size_t)h);
      if (q < ka[0].n && x->lj) {                      /* the kernels come first */
        launch_join_tally(x->lj, h, oq[q] & OQ_GRAPH); /* its record's graph id, kept in oq */
        if (x->lj->host_of) x->lj->host_of[q] = h;
      }
    }
    if (x->lj) x->lj->by_order += by_order;
    free(hs);
    free(att);
    free(ostream);
    free(oq);
    /* hook cost: host call span minus the widest CUPTI API span it holds. From the join's API
     * spans (start, rend; by id), not the 128-byte records: each call's least difference does
     * not depend on the order its API spans come in */
    long long ahead[16]; /* the answers for the spans 16 on, each asked once (in order) */
    size_t first = 0;
    for (size_t j = 0; j < js.napi && j < 16; j++)
      ahead[j] = join_host_of_api(&js, j, &first);
    for (size_t j = 0; j < js.napi; j++) {
      const struct join_span *a = &js.api[j];
      long long h = ahead[j % 16];
      if (j + 16 < js.napi) { /* the call of the span 16 on, read by index */
        long long h16 = join_host_of_api(&js, j + 16, &first);
        ahead[j % 16] = h16;
        if (h16 >= 0) __builtin_prefetch(&w->calls[w->call_base[i] + (size_t)h16], 1);
      }
      if (h < 0) continue;
      /* kept in the call's cost_ns until call_category (the call's line, read here anyway) */
      struct call *c = &w->calls[w->call_base[i] + (size_t)h];
      if (a->start + TOL_NS < c->s || a->end > c->e + TOL_NS) continue;
      /* the widest API span the call holds (a runtime call holds its driver call) */
      uint64_t ad = a->end - a->start, hd = (c->e - c->s);
      if (ad > hd) continue;
      if (!c->cost_ns || hd - ad < c->cost_ns) c->cost_ns = hd - ad ? hd - ad : 1;
    }
    join_set_free(&js);
  }
  w->span_any = span_any;
  w->span_s = span_s;
  w->span_e = span_e;
  free(w->host_spans); /* where copied (several inputs) */
  w->host_spans = NULL;
  free(gof);
  free(at);
  free(cur);
  gof = at = NULL;
  cur = NULL;
  if (!in_order) { /* sorted through an index, moved in place along the permutation's cycles */
    size_t *ix = malloc((w->nops ? w->nops : 1) * sizeof *ix);
    for (size_t j = 0; ix && j < w->nops; j++)
      ix[j] = j;
    if (ix && radix_sort_ix(ix, w->nops, 2, key_op, w)) {
      free(ix);
      ix = NULL;
    }
    if (!ix) {
      qsort(w->ops, w->nops, sizeof *w->ops, cmp_op);
    } else {
      for (size_t j = 0; j < w->nops; j++) {
        if (ix[j] == j) continue;
        struct op tmp = w->ops[j];
        size_t q = j;
        while (ix[q] != j) {
          size_t k = ix[q];
          __builtin_prefetch(&w->ops[ix[k]]); /* the next of the cycle, while this one moves */
          w->ops[q] = w->ops[k];
          ix[q] = q;
          q = k;
        }
        w->ops[q] = tmp;
        ix[q] = q;
      }
      free(ix);
    }
  }
  /* by GPU and start now; the rare runs of equal starts by the rest of cmp_op's key (a total
   * order: the same result as sorting by it). Made in their places: only the runs around the
   * places noted (a run sorted again where it holds several: a few operations), not a pass over
   * every operation */
  for (size_t j = 0; (tie_all || !in_order) && j < w->nops;) {
    size_t q = j + 1;
    while (q < w->nops && w->ops[q].gpu == w->ops[j].gpu && w->ops[q].s == w->ops[j].s)
      q++;
    if (q - j > 1) qsort(&w->ops[j], q - j, sizeof *w->ops, cmp_op);
    j = q;
  }
  for (size_t t = 0; !tie_all && in_order && t < ntie; t++) {
    size_t p = tie[t], j = p, q = p + 1;
    while (j && w->ops[j - 1].gpu == w->ops[p].gpu && w->ops[j - 1].s == w->ops[p].s)
      j--;
    while (q < w->nops && w->ops[q].gpu == w->ops[p].gpu && w->ops[q].s == w->ops[p].s)
      q++;
    if (q - j > 1) qsort(&w->ops[j], q - j, sizeof *w->ops, cmp_op);
  }
  free(tie);
  /* each GPU's operations: where they were placed (in order or sorted after, the same places:
   * lo ended past the last), each GPU's after the one before */
  for (size_t g = 0; g < w->ng; g++) {
    w->g[g].hi = w->g[g].lo;
    w->g[g].lo = g ? w->g[g - 1].hi : 0;
  }
  return 0;
oom:
  free(gof);
  free(at);
  free(cur);
  free(tie);
  return -1;
}

/* Call k's category and tracer cost (the own operations found by world_streams), in
 * world_waits' pass over the calls. */
static inline void call_category(struct world *w, size_t k) {
  struct call *c = &w->calls[k];
  /* the own operation of the call 16 on, read by index */
  if (k + 16 < w->ncalls && c[16].own_op != NIL) __builtin_prefetch(&w->ops[c[16].own_op]);
  const struct op *o = c->own_op != NIL ? &w->ops[c->own_op] : NULL;
  int sync_by_contract = c->sync != 0;
  c->cat = CAT_CALL;
  if (c->fcat == SLK_FNC_WAIT) {
    c->cat = CAT_SYNC;
  } else if (slk_fnc_is_copy(c->fcat)) {
    /* sym: its copy kind; the record read only without one */
    struct cls_host_rec hr;
    int dir =
        o && o->rkind == SLK_MEMCPY ? (uint8_t)o->sym : (hr = call_rec(w, k), fn_copy_dir(&hr));
    if (dir == CPY_HTOD) {
      c->h2d = 1;
      /* c->e is rend of its record, c->e - c->s its rdur (no read of the record). A call that
       * lasted half its copy and overlapped it held the host, unless CUPTI says the source was
       * pinned: an asynchronous copy from pinned memory never stages (a 4 MB batch's traced
       * call took 56 us of its 78 us copy, GPU run 45: read as staging, each step's what-if
       * waited for the GPU) */
      int overlaps = o && !(o->flags & OPF_SRC_PINNED) && o->s < c->e &&
                     (c->e - c->s) * 2 >= (o->e - o->s) && (o->e - o->s);
      if (sync_by_contract || (o && (o->flags & OPF_SRC_PAGEABLE)) || overlaps)
        c->cat = CAT_STAGING;
    } else if (dir == CPY_DTOH) {
      if (sync_by_contract || (o && (o->flags & OPF_DST_PAGEABLE))) c->cat = CAT_SYNC;
    } else if (sync_by_contract) {
      c->cat = CAT_SYNC;
    }
  } else if ((c->sync & SYNC_BY_FLAG) || c->polled) {
    c->cat = CAT_SYNC; /* a wait by polling until world_waits finds otherwise (poll_waited) */
  } else if ((c->fcat == SLK_FNC_LAUNCH || c->fcat == SLK_FNC_GRAPH) && w->launch_blocking[c->in] &&
             o && c->e >= o->e) {
    /* a launch that returned after its kernel ended, or a graph's after its last node
     * (launch_blocking: the driver runs both synchronously) */
    c->cat = CAT_SYNC;
  }
  uint64_t hook = c->cost_ns; /* the measured hook cost (world_ops) */
  if (!hook && !w->in[c->in].td->kind[SLK_API].n && !w->in[c->in].napi) hook = w->hook_ns[c->in];
  c->cost_ns = hook;
  if (w->in[c->in].cupti && c->submits) c->cost_ns += w->cupti_ns[c->in];
  /* per thread: each GPU's tracer cost sums its launching threads' (gpu_run) */
  w->threads[c->thread].hook_ns += hook;
  w->threads[c->thread].submits += c->submits;
}

/* The operations by input and end, ties by index (sort_ix by key_op_end gives that order), where
 * there is one input and few GPUs: each GPU's operations come by start, so nearly by end (only
 * operations overlapping on other streams are out of place), each GPU's put in order by insertion
 * as world_streams' first pass reads them, and the GPUs' runs merged; sort_ix where there are
 * more inputs or GPUs, or the insertions move more than MOVES_PER_OP places per operation. */
enum { FEW_GPUS = 8, MOVES_PER_OP = 8 };
struct oe {
  uint64_t e;
  size_t j;
};

/* Operation j (end e) into v[lo..j], its GPU's run so far; the places moved added to *moves. */
static inline void oe_insert(struct oe *v, size_t lo, size_t j, uint64_t e, size_t *moves) {
  size_t q = j;
  while (q > lo && v[q - 1].e > e) { /* ties stay in index order */
    v[q] = v[q - 1];
    q--;
  }
  *moves += j - q;
  v[q] = (struct oe){e, j};
}

/* The GPUs' runs of v merged into ix: the least (end, index) of their heads each time. */
static void oe_merge(const struct world *w, const struct oe *v, size_t *ix) {
  size_t at[FEW_GPUS];
  for (size_t g = 0; g < w->ng; g++)
    at[g] = w->g[g].lo;
  for (size_t k = 0; k < w->nops; k++) {
    size_t best = NONE;
    for (size_t g = 0; g < w->ng; g++) {
      if (at[g] == w->g[g].hi) continue;
      const struct oe *a = &v[at[g]];
      if (best == NONE || a->e < v[at[best]].e || (a->e == v[at[best]].e && a->j < v[at[best]].j))
        best = g;
    }
    ix[k] = v[at[best]++].j;
  }
}

/* What world_streams gathers of the operations' launches: the latencies (v from the call's
 * start, v2 from its end, v3 the gaps of streams that waited for nothing else; n, n2, n3 of
 * each). */
struct launch_lat {
  uint64_t *v, *v2, *v3;
  size_t n, n2, n3;
};

/* Operation j's share of the launch latencies, with what the pass reads of its call: its start
 * (w->op_call_s), the call's own operation (its last-ending one, the later of equal ends) and
 * gpu_run's counts that read the call (where the call is read anyway, not in passes of their
 * own). Needs j's prev_stream;
 * the operations in order. Inlined into both of its loops (the first is the hot one). */
static inline __attribute__((always_inline)) void op_launch(struct world *w, size_t j,
                                                            struct launch_lat *l) {
  const struct op *o = &w->ops[j];
  /* the call 16 operations on, read by index (a cache miss per operation without it) */
  if (j + 16 < w->nops && o[16].call != NIL) __builtin_prefetch(&w->calls[o[16].call], 1);
  if (o->call == NIL) {
    w->op_call_s[j] = UINT64_MAX;
    return;
  }
  struct call *c = &w->calls[o->call];
  w->op_call_s[j] = c->s;
  if (c->own_op == NIL || w->ops[c->own_op].e <= o->e) c->own_op = (uint32_t)j;
  w->gpu_thread[o->gpu * w->nthreads + c->thread] = 1;
  if (o->s > c->e) { /* gpu_run's queue_ns */
    uint64_t *q = &w->gpu_queue[o->gpu * w->nin + c->in];
    if (o->s - c->e > *q) *q = o->s - c->e;
  }
  /* the kernels launched one per call (a graph's kernels share its cudaGraphLaunch: no call of
   * their own to be shorter than, GPU run 58) */
  if (o->rkind == SLK_KERNEL && !(o->flags & OPF_GRAPH)) {
    w->g[o->gpu].kernels_joined++;
    if ((o->e - o->s) < (c->e - c->s)) w->g[o->gpu].kernels_shorter++;
  }
  /* operations whose stream was idle when their call started (from the call's start and from
   * its end); the gap between operations of a stream that waited for nothing else */
  uint64_t pe = o->prev_stream != NIL ? w->ops[o->prev_stream].e : 0;
  if (o->prev_stream == NIL || pe + TOL_NS <= c->s) {
    if (o->s >= c->s) l->v[l->n++] = o->s - c->s;
    l->v2[l->n2++] = o->s > c->e ? o->s - c->e : 0;
  }
  if (o->prev_stream != NIL && c->e + TOL_NS < pe && o->s >= pe) l->v3[l->n3++] = o->s - pe;
}

/* Previous operation on the same stream; latency estimates; waits between streams; each call's
 * own operation (its last-ending one). by_end: made here, the operations by input and end
 * (key_op_end's order). */
static int world_streams(struct world *w, size_t *by_end) {
  size_t no = w->nops ? w->nops : 1, nth = w->nthreads;
  struct launch_lat l = {
      malloc(no * sizeof *l.v), malloc(no * sizeof *l.v2), malloc(no * sizeof *l.v3), 0, 0, 0};
  w->op_call_s = malloc(no * sizeof *w->op_call_s);
  /* with gpu_run's counts that read only the operation (here, not a pass per GPU) */
  w->gpu_input = calloc(w->ng && w->nin ? w->ng * w->nin : 1, 1);
  w->gpu_thread = calloc(w->ng && nth ? w->ng * nth : 1, 1);
  w->gpu_queue = calloc(w->ng && w->nin ? w->ng * w->nin : 1, sizeof *w->gpu_queue);
  if (!l.v || !l.v2 || !l.v3 || !w->op_call_s || !w->gpu_input || !w->gpu_thread || !w->gpu_queue) {
    free(l.v);
    free(l.v2);
    free(l.v3);
    return -1;
  }
  struct oe *oev = w->nin == 1 && w->ng <= FEW_GPUS && w->nops >= 2
                       ? malloc(w->nops * sizeof *oev)
                       : NULL; /* by_end's insertions (NULL: sort_ix) */
  size_t moves = 0, budget = MOVES_PER_OP * w->nops;
  /* each operation's predecessor on its stream (GPU, input, stream): the operation before it in
   * their order (by GPU and start) with the same stream, found with the last one of each stream
   * of the GPU at hand, where a GPU has few streams (what a stable sort by stream and a pass over
   * its neighbours gives); else by that sort, after. With it known, each operation's launch
   * (op_launch) in the same pass: one pass over the operations for the counts, the order by end,
   * the streams and the launches (from lat_from on, after the sort where the streams are many) */
  enum { FEW_STREAMS = 64 };
  struct {
    uint32_t in;
    uint64_t stream;
    uint32_t last;
  } ls[FEW_STREAMS];
  size_t nls = 0, lat_from = w->nops;
  int few = 1;
  for (size_t j = 0; j < w->nops; j++) {
    struct op *o = &w->ops[j];
    struct gpu_ix *g = &w->g[o->gpu];
    if (oev) {
      oe_insert(oev, g->lo, j, o->e, &moves);
      if (moves > budget) {
        free(oev);
        oev = NULL;
      }
    }
    w->gpu_input[o->gpu * w->nin + o->in] = 1;
    if (o->rkind == SLK_KERNEL) {
      g->kernels++;
      g->kernel_ns += o->e - o->s;
    } else if (o->rkind == SLK_MEMCPY) {
      g->memcpys++;
    } else {
      g->memsets++;
    }
    if (!few) continue;
    if (j && o->gpu != o[-1].gpu) nls = 0;
    size_t q = 0;
    while (q < nls && (ls[q].stream != o->stream || ls[q].in != o->in))
      q++;
    if (q == nls) {
      if (nls == FEW_STREAMS) {
        few = 0;
        lat_from = j;
        continue;
      }
      ls[nls++] = (typeof(ls[0])){o->in, o->stream, NIL};
    }
    o->prev_stream = ls[q].last;
    ls[q].last = (uint32_t)j;
    op_launch(w, j, &l);
  }
  if (oev)
    oe_merge(w, oev, by_end);
  else
    sort_ix(w, by_end, w->nops, 2, key_op_end, cmp_op_end);
  free(oev);
  if (!few) {
    size_t *ix = malloc(no * sizeof *ix);
    if (!ix) {
      free(l.v);
      free(l.v2);
      free(l.v3);
      return -1;
    }
    for (size_t j = 0; j < w->nops; j++)
      w->ops[j].prev_stream = NIL;
    sort_ix(w, ix, w->nops, 3, key_stream, cmp_stream);
    for (size_t k = 1; k < w->nops; k++) {
      struct op *a = &w->ops[ix[k - 1]], *b = &w->ops[ix[k]];
      if (a->gpu == b->gpu && a->in == b->in && a->stream == b->stream)
        b->prev_stream = (uint32_t)ix[k - 1];
    }
    free(ix);
    for (size_t j = lat_from; j < w->nops; j++) /* the same predecessors as before lat_from */
      op_launch(w, j, &l);
  }
  w->lat_start = median(l.v, l.n, DEFAULT_LAT_START);
  w->lat_end = median(l.v2, l.n2, DEFAULT_LAT_END);
  if (w->lat_end > 50000) w->lat_end = 50000;
  w->stream_gap = median(l.v3, l.n3, DEFAULT_STREAM_GAP);
  free(l.v2);
  free(l.v3);
  if (w->stream_gap > 20000) w->stream_gap = 20000;
  /* waits between streams: an operation that started later than its launch and its stream
   * explain, right after an operation of another stream (same process) ended */
  for (size_t j = 0; j < w->nops; j++) {
    struct op *o = &w->ops[j];
    uint64_t explained = 0;
    if (o->call != NIL) explained = w->op_call_s[j] + w->lat_start;
    if (o->prev_stream != NIL) {
      uint64_t pe = w->ops[o->prev_stream].e + w->stream_gap;
      if (pe > explained) explained = pe;
    }
    if (o->call == NIL && o->prev_stream == NIL) continue;
    if (o->s < explained + WAIT_SLACK_NS) continue;
    /* last operation of this input ending at or before o's start */
    size_t lo = 0, hi = w->nops;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      const struct op *m = &w->ops[by_end[mid]];
      if (m->in < o->in || (m->in == o->in && m->e <= o->s))
        lo = mid + 1;
      else
        hi = mid;
    }
    for (size_t k = lo, tries = 0; k > 0 && tries < 16; k--, tries++) {
      const struct op *m = &w->ops[by_end[k - 1]];
      if (m->in != o->in || m->e + EVENT_WINDOW_NS < o->s) break;
      if (by_end[k - 1] == j || (m->gpu == o->gpu && m->stream == o->stream)) continue;
      if (m->e <= explained) break;
      o->ev_dep = (uint32_t)by_end[k - 1];
      break;
    }
  }
  free(l.v);
  return 0;
}

static int push_u32(uint32_t **v, size_t *n, size_t *cap, uint32_t x) {
  if (*n == *cap) {
    size_t c = *cap ? *cap * 2 : 64;
    uint32_t *nv = realloc(*v, c * sizeof *nv);
    if (!nv) return 1;
    *v = nv;
    *cap = c;
  }
  (*v)[(*n)++] = x;
  return 0;
}

struct call_at {
  uint64_t s;
  uint32_t in, k;
};

static int cmp_call_at(const void *pa, const void *pb) {
  const struct call_at *a = pa, *b = pb;
  if (a->in != b->in) return a->in < b->in ? -1 : 1;
  if (a->s != b->s) return a->s < b->s ? -1 : 1;
  return a->k < b->k ? -1 : a->k > b->k;
}

/* v[0..n), call indices, by input and start. 0, or -1 when out of memory. */
static int sort_calls_at(const struct world *w, uint32_t *v, size_t n) {
  struct call_at *t = malloc((n ? n : 1) * sizeof *t);
  if (!t) return -1;
  for (size_t q = 0; q < n; q++)
    t[q] = (struct call_at){w->calls[v[q]].s, w->calls[v[q]].in, v[q]};
  qsort(t, n, sizeof *t, cmp_call_at);
  for (size_t q = 0; q < n; q++)
    v[q] = t[q].k;
  free(t);
  return 0;
}

/* Whether call c's thread launches GPU work (it has so far, or c does). Such a thread hands the
 * step to another launching thread and back (PyTorch's main thread and its autograd thread):
 * where one of those and a thread that submits nothing both went quiet just before c, the
 * launching one's call is c's hand-over, the other's end however close. */
static int launcher(const struct world *w, const struct call *c) {
  return c->submits || w->threads[c->thread].submits;
}

/* Whether a thread that submits nothing (a DataLoader's pin-memory thread, asking for its pinned
 * blocks' events as it pins a batch) may hand call c its start. Not where c's thread launches
 * GPU work and runs no Python (its samples all without frames: autograd's device thread): such
 * a thread takes its work from the launching threads' calls, and neither a helper's queue nor
 * the GIL stands between them. In GPU run 129 the pin thread's queries fell between the
 * autograd thread's launches of a backward pass, 34 us apart; read as their hand-over they
 * chained the pin thread's wait for the workers (446 ms, its own work by its Python frames)
 * into that step of the loader's what-if: 470 ms against 29, that what-if +70% against the
 * measured step with 12 workers. A thread with Python frames may wait for a helper (a queue
 * the loop reads, the GIL), and a trace without samples keeps the look as it was. */
static int helpers_hand(const struct world *w, const struct call *c) {
  return !launcher(w, c) || w->threads[c->thread].python != 1;
}

/* Each thread's samples read for Python frames (struct thread.python). */
static void thread_python(struct world *w) {
  for (size_t t = 0, a = 0; t < w->nthreads; t = a) {
    uint32_t in = w->threads[t].in;
    for (a = t; a < w->nthreads && w->threads[a].in == in; a++)
      ;
    const struct trace_array *sa = &w->in[in].td->kind[SLK_SAMPLE];
    for (size_t q = 0; q < sa->n; q++)
      for (size_t u = t; u < a; u++)
        if (w->threads[u].tid == sa->v[q].tid) {
          uint8_t py = sa->v[q].pystack ? 2 : 1;
          if (py > w->threads[u].python) w->threads[u].python = py;
          break;
        }
  }
}

/* The call of another thread of c's input (calls lo..k-1 before c = calls[k]) that c resumed
 * after: it ended after `from` (c's previous call's end) and at most `soon` before c started,
 * and its thread went quiet then (its next call starts after c). The latest such; NONE if none.
 * *first_other: lowered to the first start after `from` of another thread among those seen. */
static size_t handoff_from(const struct world *w, size_t k, size_t lo, uint64_t from, uint64_t soon,
                           uint64_t *first_other) {
  const struct call *c = &w->calls[k];
  size_t best = NONE;
  uint64_t best_end = 0;
  int want = launcher(w, c), best_sub = -1, helpers = helpers_hand(w, c);
  for (size_t q = k, tries = 0; q > lo && tries < 32; q--, tries++) {
    const struct call *o = &w->calls[q - 1];
    /* c's own previous call: nothing before matters (one input's: a thread is its tid) */
    if (o->thread == c->thread) break;
    if (o->s > from && o->s < *first_other) *first_other = o->s;
    uint64_t e = o->e;
    if (e > c->s || e <= from || e + soon < c->s) continue;
    /* the other thread went quiet: its next call starts after c starts */
    if (o->next != NIL && w->calls[o->next].s < c->s) continue;
    int sub = w->threads[o->thread].submits != 0;
    if (!sub && !helpers) continue;
    if ((want && sub > best_sub) || ((!want || sub == best_sub) && e > best_end)) {
      best = q - 1;
      best_end = e;
      best_sub = sub;
    }
  }
  return best;
}

/* The first start after `from` of a thread other than c's (c = calls[k], input calls from lo):
 * the look-back of handoff_from sees only the last 32 calls, and a forward pass launches
 * hundreds. After c's previous call (it starts before `from`, its end), which is nearby. */
static uint64_t first_other_after(const struct world *w, size_t k, size_t lo, uint64_t from,
                                  uint64_t first_other) {
  const struct call *c = &w->calls[k];
  size_t a = c->prev != NIL && c->prev >= lo && c->prev < k ? c->prev + 1 : lo, b = k;
  while (a < b) {
    size_t mid = a + (b - a) / 2;
    if (w->calls[mid].s <= from)
      a = mid + 1;
    else
      b = mid;
  }
  for (; a < k; a++)
    if (w->calls[a].thread != c->thread) {
      if (w->calls[a].s < first_other) first_other = w->calls[a].s;
      break;
    }
  return first_other;
}

/* Each thread's last call so far (the hand-overs' pass over one input's calls in order): its place
 * and end (0 and 0 before its first), and the start of the first call after it (of another
 * thread) that starts after that end, UINT64_MAX while none: first_other_after's answer for the
 * thread's next call, kept up as the calls come (one look per thread), not searched. */
struct last_call {
  uint32_t k;
  uint64_t e, after;
};

/* handoff_from's answer from the table of each thread's last call before c (threads tlo..thi-1
 * of c's input, c = calls[k]), one look per thread, not the look-back over the calls: where the
 * input's calls come by start and c's start is not the start of the call before it. Then the
 * calls the look-back may pick are each other thread's last before c: an earlier one's next call
 * starts before c (after it in index, at least c's start: ties of starts need a call before c at
 * c's start). The look-back's bounds kept: after c's previous call (c's thread's entry is that
 * call: out of bounds), at most 32 calls back, in the input; among equal ends the later call
 * (the look-back's first seen). Without branches: which thread's last call fits is data, as
 * likely one way as the other (the look-back's branches were its cost). */
static size_t handoff_last(const struct world *w, size_t k, size_t lo, uint64_t from, uint64_t soon,
                           const struct last_call *last, size_t tlo, size_t thi) {
  const struct call *c = &w->calls[k];
  size_t wlo = k >= 32 ? k - 32 : 0;
  if (wlo < lo) wlo = lo;
  if (c->prev != NIL && c->prev + 1 > wlo) wlo = c->prev + 1;
  size_t best = NONE;
  uint64_t best_end = 0, cs = c->s;
  int want = launcher(w, c), best_sub = -1, helpers = helpers_hand(w, c);
  for (size_t t = tlo; t < thi; t++) {
    size_t j = last[t].k;
    uint64_t e = last[t].e;
    int sub = w->threads[t].submits != 0;
    /* e > from >= 0: an entry with no call (end 0) never fits, and the first that fits is
     * better than best_end 0 (best NONE) and than best_sub -1 */
    int fit = (j >= wlo) & (e <= cs) & (e > from) & (e + soon >= cs) & (sub | helpers);
    int later = (e > best_end) | ((e == best_end) & (j > best));
    int better = fit & ((want & (sub > best_sub)) | ((!want | (sub == best_sub)) & later));
    best = better ? j : best;
    best_end = better ? e : best_end;
    best_sub = better ? sub : best_sub;
  }
  return best;
}

/* Call k's hand-over (handoff_call), from the table of each thread's last call where last is
 * not NULL (handoff_last), else by the look-back. after: first_other_after's answer where the
 * table holds it (last not NULL: struct last_call), else 0. */
static void handoff_one(struct world *w, size_t k, size_t lo, const struct last_call *last,
                        size_t tlo, size_t thi, uint64_t after) {
  struct call *c = &w->calls[k];
  uint64_t from = c->prev != NIL ? w->calls[c->prev].e : 0;
  if (c->s <= from) return;
  /* the look-back where a call before c starts at c's start (handoff_last) */
  if (k > lo && c[-1].s == c->s) last = NULL;
  uint64_t first_other = c->s;
  /* first_other_after's answer: the first start after `from` (before c's start, the calls come
   * by start) where there is one, else first_other as it is (c's start, or lowered by the
   * look-back to no lower than that first start) */
  uint64_t first_after = after == UINT64_MAX ? c->s : after;
  /* how soon after: HANDOFF_NS, or for a thread that had been quiet long, a 16th of that
   * (the autograd thread quiet for a 400 ms step resumed 1.5 ms after the main thread's last
   * call in 2 of 26 steps, GPU run 40; quiet for 65 ms, 2.3 ms after it in 1 of 23 steps,
   * GPU run 45: missed at a 64th, that step's what-if kept the loading), at most
   * HANDOFF_MAX_NS */
  uint64_t quiet = c->s - from, soon = quiet / 16;
  soon = soon < HANDOFF_NS ? HANDOFF_NS : soon > HANDOFF_MAX_NS ? HANDOFF_MAX_NS : soon;
  /* the table's answer leaves first_other as it is: first_other_after's lowers it as far (the
   * calls come by start: the first one after `from` of another thread is before any the
   * look-back sees) */
  size_t best = last ? handoff_last(w, k, lo, from, soon, last, tlo, thi)
                     : handoff_from(w, k, lo, from, soon, &first_other);
  if (best == NONE && quiet > HANDOFF_NS) {
    /* Both ends seen: another thread began within `soon` of c's thread going quiet (woken
     * by it: the main thread's backward() starts the autograd thread) and went quiet
     * before c. Then c waited for it however slowly it came back, up to a quarter of the
     * quiet: the main thread returns from backward() through the optimizer's Python to
     * its next call, 0.75 ms after the autograd thread's last launch in a 7.6 ms backward
     * on one H200 machine, 1.03 ms (up to 3.7) in a 10.1 ms one on a slower one (GPU runs
     * 55, 56), where the step's critical path then held the main thread's whole wait as
     * its own host work, kept as traced (the step without the tracer +24%). */
    first_other = after ? first_after : first_other_after(w, k, lo, from, first_other);
    uint64_t wide = quiet / 4 > HANDOFF_MAX_NS ? HANDOFF_MAX_NS : quiet / 4;
    if (first_other < c->s && first_other - from <= soon && wide > soon)
      best = last ? handoff_last(w, k, lo, from, wide, last, tlo, thi)
                  : handoff_from(w, k, lo, from, wide, &first_other);
  }
  if (best == NONE) return;
  first_other = after ? first_after : first_other_after(w, k, lo, from, first_other);
  c->handoff = (uint32_t)best;
  uint64_t own = first_other > from ? first_other - from : 0;
  w->callx[k].own_ns = own > c->s - from ? c->s - from : own;
}

/* Hand-overs between threads of one process: a thread that resumes right after another thread
 * went quiet (PyTorch's main thread and its autograd thread) resumed because of it. Found call by
 * call in world_waits' pass over the calls (handoff_call): that pass reads each call's line
 * anyway; a pass of their own read every call again (from L3: 0.15 s of the 10 M bench, most of
 * it waiting on the calls, not the look-back). */
struct handoff_pass {
  struct last_call *last;     /* each thread's last call (handoff_last); NULL: the look-back */
  size_t i, lo, hi, tlo, thi; /* the input at hand, its calls and its threads */
  int table;                  /* its hand-overs from last */
};

/* The pass at input h->i (its threads follow h->thi's: threads are by input, then tid). */
static void handoff_input(const struct world *w, struct handoff_pass *h) {
  h->lo = w->call_base[h->i];
  h->hi = w->call_base[h->i + 1];
  h->tlo = h->thi;
  while (h->thi < w->nthreads && w->threads[h->thi].in == h->i)
    h->thi++;
  /* few threads: a look at each costs less than the look-back's few calls (4 on the bench
   * trace); many, the look-back, which stops at c's own previous call */
  h->table = h->last && h->thi - h->tlo <= 8;
  for (size_t t = h->tlo; h->table && t < h->thi; t++) /* no call: end 0 never fits */
    h->last[t] = (struct last_call){0, 0, UINT64_MAX};
}

/* 0, or -1 when out of memory. */
static int handoff_start(const struct world *w, struct handoff_pass *h) {
  memset(h, 0, sizeof *h);
  /* each thread's last call, where the calls come by start (handoff_last); else the look-back */
  if (w->calls_by_start && !(h->last = malloc((w->nthreads ? w->nthreads : 1) * sizeof *h->last)))
    return -1;
  if (w->nin) handoff_input(w, h);
  return 0;
}

/* Call k's hand-over; the calls in order (k = 0, 1, 2...). */
static void handoff_call(struct world *w, struct handoff_pass *h, size_t k) {
  while (k >= h->hi) { /* the next input with calls */
    h->i++;
    handoff_input(w, h);
  }
  if (!h->table) {
    handoff_one(w, k, h->lo, NULL, h->tlo, h->thi, 0);
    return;
  }
  struct last_call *last = h->last;
  const struct call *c = &w->calls[k];
  /* the first start after the end of c's previous call (of the calls between them) */
  uint64_t after = last[c->thread].after;
  /* c the first after each thread's last call to start after its end, where none was */
  for (size_t t = h->tlo; t < h->thi; t++)
    last[t].after = last[t].after == UINT64_MAX && c->s > last[t].e ? c->s : last[t].after;
  handoff_one(w, k, h->lo, last, h->tlo, h->thi, after);
  last[c->thread] = (struct last_call){(uint32_t)k, c->e, UINT64_MAX}; /* its last now */
}

/* The samples of one input with CPU time (format 2.7), by thread and start: handoff_own_cpu's. */
static int own_cmp_tid(const void *pa, const void *pb, void *ctx) {
  const struct slk_record *v = ctx;
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  if (v[a].tid != v[b].tid) return v[a].tid < v[b].tid ? -1 : 1;
  if (v[a].start != v[b].start) return v[a].start < v[b].start ? -1 : 1;
  return (a > b) - (a < b);
}

/* A hand-over's own work is the time from the thread's previous call to the first call of another
 * thread after it (handoff_one): what the thread did before the other took over. A thread that
 * runs no Python (autograd's device thread: its SAMPLE records carry CPU time and no stack) and
 * sat off the CPU through that time did no work of its own there: it waited for work. Between
 * gradient accumulation's micro-batches the main thread returns from backward() and loads the
 * next batch without a CUDA call, no optimizer launched in between: the time to its copy read as
 * the autograd thread's own work, and the loader's what-if kept it (session 40). Its own work is
 * then at most the CPU time it ran between its samples around it (those samples all without a
 * stack); a thread with Python frames (its wait may be its own sleep or read) and a trace without
 * CPU time keep the time as it is. 0, or -1 when out of memory. */
static int handoff_own_cpu(struct world *w) {
  for (size_t i = 0; i < w->nin; i++) {
    const struct trace_array *sa = &w->in[i].td->kind[SLK_SAMPLE];
    size_t lo = w->call_base[i], hi = w->call_base[i + 1], any = 0;
    for (size_t k = lo; k < hi && !any; k++)
      any = w->calls[k].handoff != NIL && w->calls[k].prev != NIL &&
            w->callx[k].own_ns > OWN_CPU_MIN_NS;
    if (!any || !sa->n || sa->n > UINT32_MAX) continue;
    uint32_t *ix = malloc(sa->n * sizeof *ix);
    if (!ix) return -1;
    size_t n = 0;
    for (size_t q = 0; q < sa->n; q++)
      if (sa->v[q].count) ix[n++] = (uint32_t)q;
    qsort_r(ix, n, sizeof *ix, own_cmp_tid, (void *)sa->v);
    const struct slk_record *v = sa->v;
    for (size_t k = lo; k < hi; k++) {
      const struct call *c = &w->calls[k];
      uint64_t own = w->callx[k].own_ns;
      if (c->handoff == NIL || c->prev == NIL || own <= OWN_CPU_MIN_NS) continue;
      uint64_t tid = call_tid(w, k), from = w->calls[c->prev].e, to = from + own;
      /* the thread's last sample at or before `from` (p), its first at or after `to` (q) */
      size_t a = 0, b = n;
      while (a < b) {
        size_t mid = a + (b - a) / 2;
        const struct slk_record *m = &v[ix[mid]];
        if (m->tid < tid || (m->tid == tid && m->start <= from))
          a = mid + 1;
        else
          b = mid;
      }
      if (!a || v[ix[a - 1]].tid != tid) continue;
      size_t p = a - 1, q = p;
      int stackless = 1;
      while (q + 1 < n && v[ix[q + 1]].tid == tid && v[ix[q]].start < to && stackless)
        stackless = !v[ix[++q]].pystack;
      stackless &= !v[ix[p]].pystack;
      if (!stackless || v[ix[q]].start < to || v[ix[q]].count < v[ix[p]].count) continue;
      uint64_t cpu = v[ix[q]].count - v[ix[p]].count;
      if (cpu < own) w->callx[k].own_ns = cpu;
    }
    free(ix);
  }
  return 0;
}

/* Whether call k, a run of queries that ended in "done" (c->polled, its awaited operation found
 * as a blocking call's), is a wait by polling: the trace shows the thread waited for the GPU.
 * The operation that released it ended while the thread asked (after the run's start), nothing
 * else ran on that GPU from then to the answer (nothing started in that stretch ran on past the
 * released operation, and nothing started before it: the GPU waited for this thread), and the
 * thread's next call that is not another query or event call puts work on the GPU (the answer
 * let that work go). A caching allocator asks too (torch queries its blocks' events as it
 * allocates: runs of up to 6 not-ready answers on the H200's traces under tests/data, tens of
 * microseconds, in the middle of a busy stream), and a pinning thread asks and submits nothing:
 * neither waited for an idle GPU. */
static int poll_waited(const struct world *w, size_t k) {
  const struct call *c = &w->calls[k];
  if (c->awaited == NIL) return 0;
  const struct op *a = &w->ops[c->awaited];
  if (a->e <= c->s) return 0;
  for (size_t q = c->awaited + 1, n = 0; q < w->nops && n < 64; q++, n++) {
    const struct op *o = &w->ops[q];
    if (o->gpu != a->gpu || o->s >= c->e) break;
    if (o->e > a->e + TOL_NS) return 0;
  }
  for (size_t q = c->awaited, n = 0; q > 0 && n < 64; q--, n++) {
    const struct op *o = &w->ops[q - 1];
    if (o->gpu != a->gpu) break;
    if (o->e > a->e + TOL_NS) return 0;
  }
  for (uint32_t q = c->next, n = 0; q != NIL && n < 16; q = w->calls[q].next, n++) {
    const struct call *x = &w->calls[q];
    if (x->submits) return 1;
    if (x->fcat != SLK_FNC_OTHER || x->sync) return 0;
  }
  return 0;
}

/* w->async_alloc_med_ns: the median duration of the cudaMallocAsync calls. 0, or -1 (memory). */
static int async_alloc_median(struct world *w) {
  size_t n = 0;
  for (size_t q = 0; q < w->nallocs; q++)
    n += w->calls[w->allocs[q]].fn == SLK_FN_MALLOC_ASYNC;
  w->async_alloc_med_ns = 0;
  if (!n) return 0;
  uint64_t *d = malloc(n * sizeof *d);
  if (!d) return -1;
  n = 0;
  for (size_t q = 0; q < w->nallocs; q++) {
    const struct call *c = &w->calls[w->allocs[q]];
    if (c->fn == SLK_FN_MALLOC_ASYNC) d[n++] = c->e > c->s ? c->e - c->s : 0;
  }
  qsort(d, n, sizeof *d, cmp_u64);
  w->async_alloc_med_ns = d[n / 2];
  free(d);
  return 0;
}

/* Categories (call_category); blocking calls: which operation's end released each, and its
 * duration without the wait. by_end: the operations by input and end (key_op_end). One pass over
 * the calls makes each one's category, its wait and its place among the blocking calls by
 * function (each step reads only the call at hand, and other calls' starts). */
/* Whether each input's launches waited for their kernels (w->launch_blocking), and each GPU's
 * count of them: under CUDA_LAUNCH_BLOCKING=1 the driver returns from a launch only once its
 * kernel has run (GPU runs 185 and 186: 15,456 of 15,456 and 34,682 of 34,682 launches returned
 * after their kernel's end, against 57 of 15,456 and 104 of 34,682 without it, tiny kernels
 * launched onto an idle GPU). An input is taken to run so where at least LB_MIN_LAUNCHES of its
 * launches have a kernel (one of their own, not a graph's) and LB_SHARE of them returned after
 * it ended. */
enum { LB_MIN_LAUNCHES = 100 };
#define LB_SHARE 0.9
static int world_launch_blocking(struct world *w) {
  size_t *n = calloc(2 * w->nin + 2, sizeof *n);
  if (!n) return -1;
  for (size_t k = 0; k < w->ncalls; k++) {
    const struct call *c = &w->calls[k];
    if (c->fcat != SLK_FNC_LAUNCH || c->own_op == NIL) continue;
    const struct op *o = &w->ops[c->own_op];
    if (o->rkind != SLK_KERNEL || (o->flags & OPF_GRAPH)) continue;
    int after = c->e >= o->e;
    n[2 * c->in]++;
    n[2 * c->in + 1] += after;
    w->g[o->gpu].launches_joined++;
    w->g[o->gpu].launches_waited += after;
  }
  for (size_t i = 0; i < w->nin; i++)
    w->launch_blocking[i] =
        n[2 * i] >= LB_MIN_LAUNCHES && (double)n[2 * i + 1] >= LB_SHARE * (double)n[2 * i];
  free(n);
  return 0;
}

static int world_waits(struct world *w, const size_t *ix) {
  uint64_t *v = malloc((w->ncalls ? w->ncalls : 1) * sizeof *v);
  /* the blocking calls with a function below SLK_FN_COUNT, in call order */
  size_t *blk = malloc((w->ncalls ? w->ncalls : 1) * sizeof *blk), nblk = 0;
  size_t first[SLK_FN_COUNT + 1];
  memset(first, 0, sizeof first);
  if (!v || !blk) {
    free(v);
    free(blk);
    return -1;
  }
  size_t fcap = 0, acap = 0;
  int mem_fail = 0;
  struct handoff_pass hp;
  if (world_launch_blocking(w)) {
    free(v);
    free(blk);
    return -1;
  }
  thread_python(w);
  if (handoff_start(w, &hp)) {
    free(v);
    free(blk);
    return -1;
  }
  for (size_t k = 0; k < w->ncalls; k++) {
    struct call *c = &w->calls[k];
    handoff_call(w, &hp, k);
    call_category(w, k);
    if (mem_free_kind(c->fn))
      mem_fail |= push_u32(&w->frees, &w->nfrees, &fcap, (uint32_t)k);
    else if (mem_alloc_kind(c->fn))
      mem_fail |= push_u32(&w->allocs, &w->nallocs, &acap, (uint32_t)k);
    if (c->cat == CAT_CALL) continue;
    if (c->cat == CAT_STAGING) {
      c->awaited = c->own_op;
      if (c->fn != FN_OTHER) {
        first[c->fn + 1]++;
        blk[nblk++] = k;
      }
      continue;
    }
    uint64_t lim = c->e + TOL_NS;
    size_t lo = 0, hi = w->nops;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      const struct op *m = &w->ops[ix[mid]];
      if (m->in < c->in || (m->in == c->in && m->e <= lim))
        lo = mid + 1;
      else
        hi = mid;
    }
    for (size_t q = lo, tries = 0; q > 0 && tries < 64; q--, tries++) {
      const struct op *m = &w->ops[ix[q - 1]];
      if (m->in != c->in || m->e <= c->s) break;
      if (m->call == NIL || w->calls[m->call].s > c->s) continue;
      c->awaited = (uint32_t)ix[q - 1];
      break;
    }
    if (c->polled && !poll_waited(w, k)) { /* a query as any other */
      c->cat = CAT_CALL;
      c->awaited = NIL;
      continue;
    }
    if (c->fn != FN_OTHER) {
      first[c->fn + 1]++;
      blk[nblk++] = k;
    }
    /* a synchronizing call that waited for a host-to-device copy (PyTorch syncs after every copy
     * from pageable memory) is part of that copy: it stalls on the copy, not on compute */
    if (c->awaited != NIL && w->ops[c->awaited].h2d) c->cat = CAT_STAGING;
  }
  /* base durations: per function, the median of its calls that did not wait. The blocking
   * calls grouped by function (in call order), so that each function's pass visits only its own
   * calls */
  free(hp.last);
  size_t *byfn = malloc((nblk ? nblk : 1) * sizeof *byfn);
  if (!byfn) {
    free(v);
    free(blk);
    return -1;
  }
  for (uint32_t fn = 0; fn < SLK_FN_COUNT; fn++)
    first[fn + 1] += first[fn];
  size_t fill[SLK_FN_COUNT];
  memcpy(fill, first, sizeof fill);
  for (size_t q = 0; q < nblk; q++)
    byfn[fill[w->calls[blk[q]].fn]++] = blk[q];
  free(blk);
  for (uint32_t fn = 0; fn < SLK_FN_COUNT; fn++) {
    if (first[fn] == first[fn + 1]) continue;
    size_t n = 0;
    for (size_t q = first[fn]; q < first[fn + 1]; q++) {
      const struct call *c = &w->calls[byfn[q]];
      if (c->awaited == NIL) v[n++] = (c->e - c->s);
    }
    uint64_t base = median(v, n, DEFAULT_BASE_NS);
    for (size_t q = first[fn]; q < first[fn + 1]; q++) {
      struct call *c = &w->calls[byfn[q]];
      c->base_ns = c->cat == CAT_STAGING ? STAGING_BASE_NS : base;
      if (c->base_ns > (c->e - c->s)) c->base_ns = (c->e - c->s);
    }
  }
  free(byfn);
  free(v);
  if (mem_fail || handoff_own_cpu(w)) return -1;
  /* by input and start: an input's calls come by start unless its trace was out of order */
  if (!w->calls_by_start &&
      (sort_calls_at(w, w->frees, w->nfrees) || sort_calls_at(w, w->allocs, w->nallocs)))
    return -1;
  return async_alloc_median(w);
}

/* The free that call ci (an allocation) re-allocates after: the last free of its input and of its
 * memory (device, or page-locked host: mem_alloc_kind) that started before it and at lo or later
 * (the loop's: lo is the first step's start), NONE if none. A caching allocator allocates from
 * the device in a steady loop only what was given back (torch.cuda.empty_cache(), GPU runs 55
 * and 56); a program that frees and allocates by itself each step (a staging buffer of pinned
 * memory) has the same fix: keep the memory. */
size_t realloc_free(const struct world *w, size_t ci, uint64_t lo) {
  const struct call *c = &w->calls[ci];
  if (!alloc_maps(w, c)) return NONE; /* a pool's hit: no memory mapped again */
  int kind = mem_alloc_kind(c->fn);
  size_t a = 0, b = w->nfrees; /* the first free at or after c by (input, start) */
  while (a < b) {
    size_t m = a + (b - a) / 2;
    const struct call *f = &w->calls[w->frees[m]];
    if (f->in < c->in || (f->in == c->in && f->s < c->s))
      a = m + 1;
    else
      b = m;
  }
  for (; a > 0; a--) { /* back to the last of its kind, inside the loop */
    const struct call *f = &w->calls[w->frees[a - 1]];
    if (f->in != c->in || f->s < lo) return NONE;
    if (mem_free_kind(f->fn) == kind) return w->frees[a - 1];
  }
  return NONE;
}

int world_build(struct world *w) {
  if (world_calls(w) || world_ops(w)) return -1;
  /* the operations by input and end: the streams' waits and the blocking calls look them up */
  size_t *by_end = malloc((w->nops ? w->nops : 1) * sizeof *by_end);
  if (!by_end) return -1;
  int rc = world_streams(w, by_end); /* by_end and the calls' own operations too */
  rc = rc || world_waits(w, by_end); /* the categories and hand-overs too */
  free(by_end);
  if (rc) return -1;
  /* the window: first to last GPU operation or host call of all inputs (the calls' and
   * operations' span, kept as they were made: no pass over the records again) */
  if (w->span_any) {
    w->t0 = w->span_s;
    w->t1 = w->span_e;
  }
  /* a window of a longer trace (report_window.c) */
  if (w->opt.t0) w->t0 = w->opt.t0;
  if (w->opt.t1) w->t1 = w->opt.t1;
  if (w->t1 < w->t0) w->t1 = w->t0;
  return 0;
}

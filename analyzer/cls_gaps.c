/* One GPU's sweep (cls_internal.h): the window tiled into busy stretches and idle gaps, each gap
 * classified from the evidence of the thread that launched the work ending it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cls_internal.h"
#include "frames.h"
#include "join.h"
#include "radix.h"
#include "u64map.h"

/* Room for one more stretch in *v. 0, or -1 when out of memory. */
static inline int seg_room(struct seg **v, size_t n, size_t *cap) {
  if (n < *cap) return 0;
  size_t c = *cap ? *cap * 2 : 256;
  struct seg *nv = realloc(*v, c * sizeof *nv);
  if (!nv) return -1;
  *v = nv;
  *cap = c;
  return 0;
}

static int seg_push(struct seg **v, size_t *n, size_t *cap, const struct seg *s) {
  if (s->b <= s->a) return 0;
  if (seg_room(v, *n, cap)) return -1;
  (*v)[(*n)++] = *s;
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
  /* made in its place, field by field: a stretch made on the stack and copied whole was read
   * back in 16-byte moves over its 8-byte stores (a stalled store forwarding per stretch) */
  if (b <= a) return 0;
  if (seg_room(&st->s, st->n, &st->cap)) return -1;
  struct seg *s = &st->s[st->n++];
  s->a = a;
  s->b = b;
  s->cls = (uint8_t)cls;
  s->why = (uint8_t)why;
  s->el = (uint8_t)el;
  s->copy_path = 0;
  s->x = x;
  s->site = site;
  s->tracer = 0;
  s->shared = 0;
  s->lead = 0;
  s->roundtrip = 0;
  s->gil = 0;
  return 0;
}

/* The Python samples of call c's thread in the out-of-CUDA parts of the gap: how many, and how
 * many were at the user's line of c's own Python frames (still inside the statement that made
 * c). */
static void samples_at_call(const struct world *w, const struct gstate *st, size_t ci, size_t *n,
                            size_t *same) {
  *n = *same = 0;
  const struct call *c = &w->calls[ci];
  const struct cls_host_rec cx = call_rec(w, ci), *cr = &cx;
  const char *py = cr->pystack ? in_str(w, c->in, cr->pystack) : "";
  size_t off = 0, len = 0;
  if (*py) pyframes_user(py, &off, &len);
  const struct trace_array *sa = &w->in[c->in].td->kind[SLK_SAMPLE];
  for (size_t k = 0; k < st->np; k++) {
    if (st->p[k].kind != P_OUT) continue;
    size_t first, m = samples_in(w, c->in, st->p[k].a, st->p[k].b, &first);
    for (size_t q = 0; q < m; q++) {
      const struct slk_record *r = &sa->v[first + q];
      if (r->tid != cr->tid || !r->pystack) continue;
      (*n)++;
      const char *sp = in_str(w, c->in, r->pystack);
      size_t so, sl;
      pyframes_user(sp, &so, &sl);
      if (len && sl == len && !memcmp(sp + so, py + off, len)) (*same)++;
    }
  }
}

/* 1 when a Python frame line and the frame line f (file fl, function fn of length nl) are the
 * same function */
static int same_fn(const char *line, size_t len, const char *f, size_t fl, const char *fn,
                   size_t nl) {
  const char *file, *fun;
  size_t l1, l2;
  long lineno;
  return pyframe_parse(line, len, &file, &l1, &lineno, &fun, &l2) && l1 == fl && l2 == nl &&
         !memcmp(file, f, fl) && !memcmp(fun, fn, nl);
}

/* Whether the host work after the syncs made at sync call ci's Python site processes what they
 * read: of the thread's Python samples between each sync of that site (the same stack) and the
 * thread's next CUDA call, more than half run in the syncing function itself (their innermost
 * frame: a loop over the values read, or a CPU op called from the statement that read them),
 * inside the statement that synced (one of their frames is the sync's first frame in the
 * user's code, line and all: a library call that reads and then processes, as torch.save copies
 * each tensor to the host and writes it, GPU run 74; an environment stepped on the actions
 * read, `env.step(action.cpu().numpy())`), or in a library called straight from the syncing
 * function that is no data loading (their innermost user frame is in the syncing function:
 * the optimizer's step on the CPU over the gradients just read, GPU run 78), two at least. A
 * loader's work runs in the DataLoader's and the transforms' frames (pyframes_loading, from
 * whatever line), a tokenizer in its own functions: the next batch's. Kept per site (st->own).
 * 1, 0, or -1 (memory). */
static int sync_roundtrip(struct gstate *st, size_t ci) {
  struct world *w = st->w;
  const struct call *c = &w->calls[ci];
  const struct cls_host_rec cr = call_rec(w, ci);
  /* a launch that waited for its kernel, or a graph's for its nodes (world_launch_blocking),
   * read nothing back */
  if (!cr.pystack || c->fcat == SLK_FNC_LAUNCH || c->fcat == SLK_FNC_GRAPH) return 0;
  uint64_t key = (uint64_t)c->in << 32 | cr.pystack, v;
  if (!st->own && !(st->own = calloc(1, sizeof *st->own))) return -1;
  if (u64map_get(st->own, key, &v)) return (int)v - 1;
  const char *py = in_str(w, c->in, cr.pystack), *file, *fn;
  size_t off, len, fl, nl;
  long lineno;
  pyframes_user(py, &off, &len);
  size_t n = 0, own = 0;
  if (pyframe_parse(py + off, len, &file, &fl, &lineno, &fn, &nl)) {
    const struct thread *T = &w->threads[c->thread];
    const struct trace_array *sa = &w->in[c->in].td->kind[SLK_SAMPLE];
    for (size_t k = 0; k + 1 < T->n; k++) {
      const struct call *x = &w->calls[T->calls[k]];
      if (x->cat != CAT_SYNC || call_rec(w, T->calls[k]).pystack != cr.pystack) continue;
      uint64_t b = w->calls[T->calls[k + 1]].s;
      size_t first, m = x->e < b ? samples_in(w, c->in, x->e, b, &first) : 0;
      for (size_t q = 0; q < m; q++) {
        const struct slk_record *r = &sa->v[first + q];
        if (r->tid != cr.tid || !r->pystack) continue;
        const char *sp = in_str(w, c->in, r->pystack);
        size_t so, sl;
        pyframes_user(sp, &so, &sl);
        n++;
        const char *uf, *un;
        size_t ufl, unl;
        long ul;
        own += same_fn(sp, strcspn(sp, "\n"), file, fl, fn, nl) ||
               pyframes_has(sp, py + off, len) ||
               (pyframe_parse(sp + so, sl, &uf, &ufl, &ul, &un, &unl) && ufl == fl && unl == nl &&
                !memcmp(uf, file, fl) && !memcmp(un, fn, nl) && !pyframes_loading(sp, so));
      }
    }
  }
  int yes = n >= 2 && own * 2 > n;
  size_t slot = u64map_add(st->own, key);
  if (slot == (size_t)-1) return -1;
  st->own->val[slot] = 1 + (uint64_t)yes;
  return yes;
}

/* Whether call ci, a copy to the device, was made by autograd's backward pass: its innermost
 * Python frame in torch/autograd/ (a tensor's backward() run by the engine). A gradient computed
 * on the host flowing back to the device (a loss computed by CPU ops on what a sync read, GPU
 * runs 171, 173 and 174's holdout_cpuloss `cpu`): never a batch's copy. */
static int copy_in_backward(const struct world *w, size_t ci) {
  const struct cls_host_rec r = call_rec(w, ci);
  if (!r.pystack) return 0;
  const char *py = in_str(w, w->calls[ci].in, r.pystack), *file, *fn;
  size_t fl, nl;
  long line;
  return pyframe_parse(py, strcspn(py, "\n"), &file, &fl, &line, &fn, &nl) &&
         memmem(file, fl, "/torch/autograd/", 16);
}

/* The lead-in of a round trip: host work outside CUDA, longer than a launch gap, that ends in a
 * sync L of a round-trip site (sync_roundtrip) and runs inside L's own statement (most of the
 * thread's samples in it at L's first frame in the user's code, two at least): the statement
 * that reads and processes did it before its first read (torch.save opening its file and
 * pickling before it copies the first tensor: 75 ms a save in GPU run 75's trainer). Its fix
 * (the work on the GPU, or in a background thread) takes it off the step with the rest of the
 * round trip: serialization, cut in its what-if. 1, 0, or -1 (memory). */
static int lead_in(struct gstate *st, size_t L, uint64_t out_ns) {
  struct world *w = st->w;
  if (out_ns <= w->opt.launch_gap_ns || w->calls[L].cat != CAT_SYNC) return 0;
  size_t n, same;
  samples_at_call(w, st, L, &n, &same);
  if (n < 2 || same * 2 <= n) return 0;
  return sync_roundtrip(st, L);
}

/* ---- the launching thread's waits while its process's loader threads ran (the GIL) ---- */

static int samp_cmp_tid(const void *pa, const void *pb, void *ctx) {
  const struct slk_record *v = ctx;
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  if (v[a].tid != v[b].tid) return v[a].tid < v[b].tid ? -1 : 1;
  return (a > b) - (a < b); /* start order within a thread */
}

/* Input in's samples by thread (struct samp_ix), built once per sweep; NULL when out of memory
 * or when none carries CPU time (a trace before format 2.7). */
static const struct samp_ix *samp_get(struct gstate *st, uint32_t in) {
  struct world *w = st->w;
  if (!st->samp && !(st->samp = calloc(w->nin ? w->nin : 1, sizeof *st->samp))) return NULL;
  struct samp_ix *x = &st->samp[in];
  if (x->built) return x->n ? x : NULL;
  x->built = 1;
  const struct trace_array *sa = &w->in[in].td->kind[SLK_SAMPLE];
  size_t n = 0;
  for (size_t i = 0; i < sa->n; i++)
    n += sa->v[i].count != 0;
  if (!n || sa->n > UINT32_MAX) return NULL;
  x->ix = malloc(n * sizeof *x->ix);
  x->runs = malloc((n + 1) * sizeof *x->runs);
  x->loading = calloc(sa->n, 1);
  x->waits = calloc(sa->n, 1);
  x->capture = calloc(sa->n, 1);
  if (!x->ix || !x->runs || !x->loading || !x->waits || !x->capture) {
    free(x->ix), free(x->runs), free(x->loading), free(x->waits), free(x->capture);
    x->ix = x->runs = NULL;
    x->loading = x->waits = x->capture = NULL;
    return NULL;
  }
  /* each stack's reading once: the samples of idle threads repeat a few stacks thousands of
   * times (48 threads 20 calls deep: 38,040 samples, 1.4 s of `slack report` in string
   * searches, GPU run 133); an open-addressed table of stack id -> reading, 2 bits + 1 */
  size_t cap = 64;
  while (cap < 2 * n)
    cap *= 2;
  /* id << 8 | 4 | loading | waits << 1 | capture << 3; 0: free */
  uint64_t *memo = calloc(cap, sizeof *memo);
  for (size_t i = 0; i < sa->n; i++) {
    if (!sa->v[i].count) continue;
    x->ix[x->n++] = (uint32_t)i;
    uint32_t id = sa->v[i].pystack;
    uint64_t *m = NULL;
    if (memo && id) {
      size_t h = (size_t)(((uint64_t)id * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
      while (memo[h] && memo[h] >> 8 != id)
        h = (h + 1) & (cap - 1);
      m = &memo[h];
      if (*m) {
        x->loading[i] = (uint8_t)(*m & 1);
        x->waits[i] = (uint8_t)(*m >> 1 & 1);
        x->capture[i] = (uint8_t)(*m >> 3 & 1);
        continue;
      }
    }
    /* (a thread without Python frames, its CPU time only: loads nothing seen) */
    const char *py = id ? in_str(w, in, id) : "";
    /* a DataLoader's pin-memory thread hands over what its worker processes made: the loader
     * is out of the process already */
    x->loading[i] =
        (uint8_t)(pyframes_loading(py, strlen(py)) && !strstr(py, "/data/_utils/pin_memory.py"));
    x->waits[i] = (uint8_t)pyframes_waits(py);
    x->capture[i] = (uint8_t)pyframes_capture(py);
    if (m)
      *m = (uint64_t)id << 8 | 4 | x->loading[i] | (uint64_t)x->waits[i] << 1 |
           (uint64_t)x->capture[i] << 3;
  }
  free(memo);
  qsort_r(x->ix, x->n, sizeof *x->ix, samp_cmp_tid, (void *)sa->v);
  for (size_t i = 0; i < x->n; i++)
    if (!i || sa->v[x->ix[i]].tid != sa->v[x->ix[i - 1]].tid) x->runs[x->nruns++] = (uint32_t)i;
  x->runs[x->nruns] = (uint32_t)x->n;
  return x;
}

void samp_free(struct gstate *st) {
  if (!st->samp) return;
  for (size_t i = 0; i < st->w->nin; i++) {
    free(st->samp[i].ix);
    free(st->samp[i].runs);
    free(st->samp[i].loading);
    free(st->samp[i].waits);
    free(st->samp[i].capture);
  }
  free(st->samp);
  st->samp = NULL;
}

/* The share of [p, q) a thread ran: its CPU time between two of its samples over the time
 * between them (a sample's count: 1 + the thread's CPU ns, format 2.7), at most 1; -1 unknown. */
static double ran(const struct slk_record *p, const struct slk_record *q) {
  if (!p->count || !q->count || q->start <= p->start || q->count < p->count) return -1;
  double f = (double)(q->count - p->count) / (double)(q->start - p->start);
  return f > 1 ? 1 : f;
}

/* The first place in a thread's run [r0, r1) of x->ix whose sample starts after t, less one
 * (the last at or before t), r0 at least. */
static size_t run_at(const struct samp_ix *x, const struct slk_record *v, size_t r0, size_t r1,
                     uint64_t t) {
  size_t lo = r0, hi = r1;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v[x->ix[mid]].start <= t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo > r0 ? lo - 1 : r0;
}

/* Thread tid's run of input in's samples (x its index, v its samples): its place in x->runs, or
 * x->nruns where the thread has no samples or the input more than the writer samples. */
static size_t samp_run_of(const struct samp_ix *x, const struct slk_record *v, uint64_t tid) {
  /* bounded work per stretch: the writer samples 64 threads of a process at most (pyframes.c
   * SAMPLE_THREADS); more is no trace of slack's */
  if (x->nruns > 64) return x->nruns;
  for (size_t r = 0; r < x->nruns; r++)
    if (v[x->ix[x->runs[r]]].tid == tid) return r;
  return x->nruns;
}

/* Thread tid's samples of input in: the index *x, the samples *v and the thread's run *me in
 * x->runs; 0 where it has none (or no sample carries CPU time). */
static int thread_samples(struct gstate *st, uint32_t in, uint64_t tid, const struct samp_ix **x,
                          const struct slk_record **v, size_t *me) {
  if (!(*x = samp_get(st, in))) return 0;
  *v = st->w->in[in].td->kind[SLK_SAMPLE].v;
  *me = samp_run_of(*x, *v, tid);
  return *me < (*x)->nruns;
}

/* The time in [a, b) that thread tid of input in spent off the CPU while that process's other
 * threads ran in a data-loading library (their samples' stacks: pyframes_loading). Between two
 * of tid's samples (at most SLACK_PY_SAMPLE_MS apart) it ran a share r of the time; the loader
 * threads, sampled in loading frames, ran a share l there (summed over them: up to their count).
 * Off the CPU, outside CUDA, it waited: for the GIL that the loader's Python held (threads of a
 * hand-written prefetcher: GPU run 82), or for a CPU the loader's threads took. The wait the
 * loader explains is min(1 - r, l) of the overlap with [a, b); the rest of its time off the
 * CPU (a sleep, I/O, a lock) stays as it was. */
uint64_t loader_wait(struct gstate *st, uint32_t in, uint64_t tid, uint64_t a, uint64_t b) {
  if (b <= a) return 0;
  const struct samp_ix *x;
  const struct slk_record *v;
  size_t me;
  if (!thread_samples(st, in, tid, &x, &v, &me)) return 0;
  size_t r0 = x->runs[me], r1 = x->runs[me + 1];
  double wait = 0;
  for (size_t k = run_at(x, v, r0, r1, a); k + 1 < r1; k++) {
    const struct slk_record *p = &v[x->ix[k]], *q = &v[x->ix[k + 1]];
    if (p->start >= b) break;
    uint64_t ov = overlap(p->start, q->start, a, b);
    double on = ran(p, q);
    if (!ov || on < 0 || on >= 1) continue;
    double l = 0; /* the loader threads' running time in [p, q) over its length */
    for (size_t r = 0; r < x->nruns; r++) {
      if (r == me) continue;
      size_t o1 = x->runs[r + 1];
      for (size_t j = run_at(x, v, x->runs[r], o1, p->start); j + 1 < o1; j++) {
        const struct slk_record *u = &v[x->ix[j]], *z = &v[x->ix[j + 1]];
        if (u->start >= q->start) break;
        double f = ran(u, z);
        uint64_t o = overlap(u->start, z->start, p->start, q->start);
        if (f > 0 && o && (x->loading[x->ix[j]] || x->loading[x->ix[j + 1]]))
          l += f * (double)o / (double)(q->start - p->start);
      }
    }
    double off = 1 - on;
    wait += (double)ov * (l < off ? l : off);
  }
  return u64_of(wait);
}

/* The share of [a, b) that input in's loader threads were building batches: of the samples in
 * [a, b) of each thread that submits no GPU work and was sampled in a data-loading library's
 * frames there (pyframes_loading; not a DataLoader's pin-memory thread), the share in those
 * frames (the rest: waiting to hand a batch over, or for the next index). *n: those samples;
 * -1 where no thread was so sampled or the samples carry no CPU time (before format 2.7). */
double loader_busy(struct gstate *st, uint32_t in, uint64_t a, uint64_t b, size_t *n) {
  struct world *w = st->w;
  *n = 0;
  const struct samp_ix *x = samp_get(st, in);
  if (!x || x->nruns > 64 || b <= a) return -1;
  const struct slk_record *v = w->in[in].td->kind[SLK_SAMPLE].v;
  size_t busy = 0, all = 0;
  for (size_t r = 0; r < x->nruns; r++) {
    uint64_t tid = v[x->ix[x->runs[r]]].tid;
    int submits = 0;
    for (size_t t = 0; t < w->nthreads && !submits; t++) {
      const struct thread *T = &w->threads[t];
      submits = T->in == in && T->submits && T->tid == tid;
    }
    if (submits) continue;
    size_t nb = 0, na = 0;
    for (size_t k = run_at(x, v, x->runs[r], x->runs[r + 1], a); k < x->runs[r + 1]; k++) {
      const struct slk_record *p = &v[x->ix[k]];
      if (p->start >= b) break;
      if (p->start < a) continue;
      na++;
      nb += x->loading[x->ix[k]];
    }
    if (!nb) continue;
    busy += nb;
    all += na;
  }
  *n = all;
  return all ? (double)busy / (double)all : -1;
}

/* The producer's pace (docs/CLASSIFICATION.md, "The producer's pace"): the time in [a, b) that
 * thread tid of input in waited, off the CPU, in a hand-over primitive (a Future's result, a
 * queue's get, a multiprocessing queue: pyframes_waits), for work another thread or process does
 * for it: from such a sample to the thread's next, where it ran under half of that interval. */
uint64_t producer_wait(struct gstate *st, uint32_t in, uint64_t tid, uint64_t a, uint64_t b) {
  if (b <= a) return 0;
  const struct samp_ix *x;
  const struct slk_record *v;
  size_t me;
  if (!thread_samples(st, in, tid, &x, &v, &me)) return 0;
  size_t r0 = x->runs[me], r1 = x->runs[me + 1];
  uint64_t wait = 0;
  for (size_t k = run_at(x, v, r0, r1, a); k + 1 < r1; k++) {
    const struct slk_record *p = &v[x->ix[k]], *q = &v[x->ix[k + 1]];
    if (p->start >= b) break;
    double on = ran(p, q);
    if (x->waits[x->ix[k]] && on >= 0 && on < 0.5) wait += overlap(p->start, q->start, a, b);
  }
  return wait;
}

/* The time in [a, b) that loader thread tid of input in spent off the CPU outside a hand-over
 * wait: between two of its samples it ran a share r of the time, and where neither sample is in
 * a hand-over primitive (pyframes_waits: a full queue's put, the next index's get) the rest, 1 - r,
 * it waited for the GIL its process's other threads held, or for a CPU they took. In worker
 * processes (the usual fix of a loader in threads) it would have run then. */
uint64_t loader_self_wait(struct gstate *st, uint32_t in, uint64_t tid, uint64_t a, uint64_t b) {
  if (b <= a) return 0;
  const struct samp_ix *x;
  const struct slk_record *v;
  size_t me;
  if (!thread_samples(st, in, tid, &x, &v, &me)) return 0;
  size_t r0 = x->runs[me], r1 = x->runs[me + 1];
  double wait = 0;
  for (size_t k = run_at(x, v, r0, r1, a); k + 1 < r1; k++) {
    const struct slk_record *p = &v[x->ix[k]], *q = &v[x->ix[k + 1]];
    if (p->start >= b) break;
    if (x->waits[x->ix[k]] || x->waits[x->ix[k + 1]]) continue;
    double on = ran(p, q);
    uint64_t ov = overlap(p->start, q->start, a, b);
    if (ov && on >= 0 && on < 1) wait += (double)ov * (1 - on);
  }
  return u64_of(wait);
}

/* Stack capture (docs/CLASSIFICATION.md, "Stacks captured between launches"): thread t's
 * samples in its host work [a, b) of a launch gap, and those capturing a Python stack
 * (pyframes_capture), counted into st->cap_n and st->cap_k. */
static int capture_count(struct gstate *st, uint32_t in, size_t t, uint64_t tid, uint64_t a,
                         uint64_t b) {
  const struct samp_ix *x;
  const struct slk_record *v;
  size_t me;
  if (b <= a || !thread_samples(st, in, tid, &x, &v, &me)) return 0;
  if (!st->cap_n) {
    size_t n = st->w->nthreads ? st->w->nthreads : 1;
    st->cap_n = calloc(n, sizeof *st->cap_n);
    st->cap_k = calloc(n, sizeof *st->cap_k);
    if (!st->cap_n || !st->cap_k) return -1;
  }
  size_t r0 = x->runs[me], r1 = x->runs[me + 1];
  for (size_t k = run_at(x, v, r0, r1, a); k < r1; k++) {
    const struct slk_record *p = &v[x->ix[k]];
    if (p->start >= b) break;
    if (p->start < a) continue;
    st->cap_n[t]++;
    st->cap_k[t] += x->capture[x->ix[k]];
  }
  return 0;
}

/* The launch gaps' host work that a thread spent capturing Python stacks: where at least
 * CAPTURE_MIN_SAMPLES of its samples fell in that work and CAPTURE_MIN_HITS of them were
 * capturing, that share of each of its launch gaps' host stretches is `other`, reason
 * stack_capture, not launch overhead: the GPU waited on host work that is no launch's (a
 * debugging switch's: autograd's anomaly detection stores each forward operation's stack, GPU
 * run 166's holdout_anomaly `trace`: 21 of its main thread's 30 samples in that work in the
 * traceback module)
 * and whose fix is the switch, not a CUDA graph. The share is the thread's, spread evenly: one
 * gap holds too few samples to tell. The stretch's tail is the capture's, its tracer's cost
 * split in proportion. */
enum { CAPTURE_MIN_SAMPLES = 8, CAPTURE_MIN_HITS = 2 };
static int capture_split(struct gstate *st) {
  struct world *w = st->w;
  if (!st->cap_n) return 0;
  size_t more = 0;
  for (size_t k = 0; k < st->n; k++) {
    const struct seg *s = &st->s[k];
    if (s->cls != CLS_LAUNCH_OVERHEAD || s->el != EL_PIECE || s->lead || s->b <= s->a) continue;
    size_t t = w->calls[s->x].thread;
    more += st->cap_n[t] >= CAPTURE_MIN_SAMPLES && st->cap_k[t] >= CAPTURE_MIN_HITS;
  }
  if (!more) return 0;
  struct seg *v = malloc((st->n + more) * sizeof *v);
  if (!v) return -1;
  size_t m = 0;
  for (size_t k = 0; k < st->n; k++) {
    struct seg s = st->s[k];
    size_t t = s.el == EL_PIECE ? w->calls[s.x].thread : 0;
    if (s.cls != CLS_LAUNCH_OVERHEAD || s.el != EL_PIECE || s.lead || s.b <= s.a ||
        st->cap_n[t] < CAPTURE_MIN_SAMPLES || st->cap_k[t] < CAPTURE_MIN_HITS) {
      v[m++] = s;
      continue;
    }
    double f = (double)st->cap_k[t] / (double)st->cap_n[t];
    uint64_t len = s.b - s.a, cut = u64_of((double)len * f);
    if (cut > len) cut = len;
    struct seg head = s, tail = s;
    head.b = tail.a = s.b - cut;
    tail.cls = CLS_OTHER;
    tail.why = CLS_WHY_STACKS;
    tail.shared = 0;
    tail.tracer = u64_of((double)s.tracer * (double)cut / (double)len);
    if (tail.tracer > s.tracer) tail.tracer = s.tracer;
    head.tracer = s.tracer - tail.tracer;
    if (head.b > head.a) v[m++] = head;
    if (tail.b > tail.a) v[m++] = tail;
  }
  free(st->s);
  st->s = v;
  st->n = m;
  st->cap = st->n + more;
  return 0;
}

/* First position in t's calls whose call ends after time x. */
static size_t thread_pos_after(const struct world *w, const struct thread *t, uint64_t x) {
  size_t lo = 0, hi = t->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (w->calls[t->calls[mid]].s <= x)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo && w->calls[t->calls[lo - 1]].e > x) lo--;
  return lo;
}

/* Classifies the idle gap [gs, ge) that the operation e ends (docs/CLASSIFICATION.md). */
static int gap(struct gstate *st, uint64_t gs, uint64_t ge, size_t e, int edge) {
  struct world *w = st->w;
  if (edge || e == NONE) return add(st, gs, ge, CLS_OTHER, CLS_WHY_EDGE, EL_NONE, NONE, NONE);
  const struct op *E = &w->ops[e];
  size_t L = nix(E->call);
  if (L == NONE) return add(st, gs, ge, CLS_OTHER, CLS_WHY_NO_LAUNCH, EL_OP, e, NONE);
  const struct call *Lc = &w->calls[L];
  if (Lc->e + w->lat_end < gs) return add(st, gs, ge, CLS_OTHER, CLS_WHY_QUEUED, EL_OP, e, L);
  /* Between two nodes of one CUDA graph launch, the later was queued with the earlier: the gap
   * is the GPU's own pace between a graph's nodes (GRAPH_GAP_NS), not the host's,
   * though the launch call may still be running (it would read as launch overhead, whose fix is
   * "a CUDA graph"). The gap before a launch's first node stays the host's. */
  if ((E->flags & OPF_GRAPH) && st->busy_op && w->ops[st->busy_op - 1].call == E->call &&
      (w->ops[st->busy_op - 1].flags & OPF_GRAPH))
    return add(st, gs, ge, CLS_OTHER, CLS_WHY_QUEUED, EL_OP, e, L);
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
    if (ci == L || c->s >= ge || c->s >= Lc->s) break;
    if (c->s > t) {
      if (part_push(st, t, c->s, P_OUT, ci)) return -1;
      t = c->s;
    }
    uint64_t e2 = c->e < ge ? c->e : ge;
    if (e2 > t) {
      if (part_push(st, t, e2, P_CALL, ci)) return -1;
      t = e2;
    }
  }
  if (t < ge && Lc->s > t) {
    uint64_t e2 = Lc->s < ge ? Lc->s : ge;
    if (part_push(st, t, e2, P_OUT, L)) return -1;
    t = e2;
  }
  if (t < ge && part_push(st, t, ge, P_LAUNCH, L)) return -1;

  /* the evidence */
  /* the state of the launching thread when the GPU went idle: inside a call that started before
   * and had not returned (a call returning at that very instant was waiting for it too). A
   * blocking call cannot return before the work it waits for ends, yet host and CUPTI stamps
   * disagree by a few us (4 us seen on the H200): a sync or staging call that returned less
   * than BLOCK_SKEW_NS before the gap, the thread's last call, waited for it. */
  int began = CAT_CALL;
  size_t began_call = NONE;
  {
    size_t k = thread_pos_after(w, T, gs);
    if (k > 0 && w->calls[T->calls[k - 1]].e + BLOCK_SKEW_NS >= gs &&
        w->calls[T->calls[k - 1]].cat != CAT_CALL)
      k--;
    if (k < T->n && T->calls[k] != L && w->calls[T->calls[k]].s < gs &&
        w->calls[T->calls[k]].cat != CAT_CALL) {
      began_call = T->calls[k];
      began = w->calls[began_call].cat;
    }
  }
  int h2d = E->h2d;
  size_t h2d_call = E->h2d ? L : NONE;
  uint64_t out_ns = 0, call_ns = 0, loader_ns = 0, alloc_ns = 0;
  size_t alloc_call = NONE;
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
      if (p->kind == P_CALL && c->cat == CAT_CALL) {
        call_ns += p->b - p->a;
        uint32_t fn = c->fn; /* FN_OTHER past SLK_FN_COUNT */
        if (mem_alloc_kind(fn) && alloc_maps(w, c)) {
          alloc_ns += p->b - p->a;
          if (alloc_call == NONE) alloc_call = p->x;
        }
      }
    }
  }
  int cls, why = CLS_WHY_NONE, lead = 0;
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
  /* unless the host work after the sync is the processing of what it read, on its way back to
   * the GPU (tokens sampled on the CPU from the probabilities read, then copied in; a metric
   * counted in Python over predictions read): the GPU waited on the host's round trip, the
   * sync's (serialization), not on a batch (GPU run 71) */
  int roundtrip = 0;
  if (chained && began == CAT_SYNC && !loader_ns) {
    /* the copy that ended it a gradient's, made by autograd's backward pass: the loss computed
     * on the host from what the sync read, its gradient back (no batch), whatever the samples */
    roundtrip =
        h2d_call != NONE && copy_in_backward(w, h2d_call) ? 1 : sync_roundtrip(st, began_call);
    if (roundtrip < 0) return -1;
    if (roundtrip) { /* it ended in a copy to the device */
      chained = 0;
      roundtrip = RT_TO_GPU;
    }
  } else if (!chained && began == CAT_SYNC && out_ns && out_ns <= st->long_gap) {
    /* the same host work before a submission that is not a batch's (the next tensor's copy to
     * the host): serialization either way; the round trip's host work leaves the step with the
     * usual fix (sampled on the GPU, counted on the GPU, saved by a background thread), so the
     * what-if takes it off (classify.c) */
    roundtrip = sync_roundtrip(st, began_call);
    if (roundtrip < 0) return -1;
    if (roundtrip) roundtrip = h2d ? RT_TO_GPU : RT_ON_HOST;
  }
  if (chained && began == CAT_SYNC) {
    const struct call *sc = &w->calls[began_call];
    uint64_t waited = gs > sc->s ? gs - sc->s : 0;
    ser_ns = waited > sc->base_ns ? waited - sc->base_ns : 0;
    /* Untraced, the host would have reached the sync sooner: its calls ahead of the GPU ran
     * `factor` times slower traced than in the trace's untraced tail (tail.h), so it would have
     * waited that much longer, and worked ahead that much more. */
    double f = w->tail[sc->in].factor; /* the work ahead spans the process's threads */
    if (f > 1.0 && sc->s > ahead_from) {
      uint64_t more = u64_of((double)(sc->s - ahead_from) * (1.0 - 1.0 / f));
      uint64_t room = out_ns > ser_ns ? out_ns - ser_ns : 0; /* only host work after it */
      if (more > room) more = room;
      ser_ns += more;
      st->lead_ns += more;
    }
  }
  /* A pageable copy staging when the GPU went idle, and the gap ending in another host-to-device
   * copy with no launch between them and no loading seen: the two copies are one batch's (x,
   * then y). The batch was ready before the first; the host work between them is that copy's
   * own path (a pageable copy's return through the framework: the thread's Python samples there
   * sit on the copy's own line), its copy stall, not loading. Samples elsewhere (the loader's
   * code) say it was the batch after all. */
  int same_batch =
      chained && began == CAT_STAGING && w->calls[began_call].h2d && h2d_call != NONE && !loader_ns;
  for (size_t k = 0; same_batch && k < st->np; k++) {
    const struct part *p = &st->p[k];
    if (p->kind == P_OUT) continue;
    int fc = slk_fn_cat(call_rec(w, p->x).fn);
    if (fc == SLK_FNC_LAUNCH || fc == SLK_FNC_GRAPH || fc == SLK_FNC_HOSTFUNC) same_batch = 0;
  }
  if (same_batch) {
    size_t ns, at;
    samples_at_call(w, st, began_call, &ns, &at);
    if (ns && 2 * at <= ns) same_batch = 0;
  }
  if (out_ns > st->long_gap) {
    cls = CLS_OTHER;
    why = CLS_WHY_LONG;
  } else if (same_batch) {
    cls = CLS_COPY_STALL;
    site = began_call;
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
  } else if ((lead = lead_in(st, L, out_ns)) != 0) {
    if (lead < 0) return -1;
    cls = CLS_SERIALIZATION;
    roundtrip = RT_ON_HOST; /* no copy to the device in the gap (the branches above) */
  } else if (alloc_ns && alloc_ns * 2 >= out_ns + call_ns) {
    /* most of the thread's time in the gap went to allocating device memory (a caching
     * allocator growing again after an empty_cache(): GPU run 55) */
    cls = CLS_OTHER;
    why = CLS_WHY_ALLOC;
    site = alloc_call;
  } else if (out_ns + call_ns <= w->opt.launch_gap_ns) {
    cls = CLS_LAUNCH_OVERHEAD;
  } else {
    cls = CLS_OTHER;
    why = CLS_WHY_HOST;
  }

  /* the launching thread's samples in its host work, and those capturing a stack */
  if (cls == CLS_LAUNCH_OVERHEAD)
    for (size_t k = 0; k < st->np; k++)
      if (st->p[k].kind == P_OUT &&
          capture_count(st, Lc->in, Lc->thread, call_tid(w, L), st->p[k].a, st->p[k].b))
        return -1;

  /* the stretches of the gap, into tmp */
  st->ntmp = 0;
  for (size_t k = 0; k < st->np; k++) {
    const struct part *p = &st->p[k];
    struct seg s = {p->a, p->b, (uint8_t)cls, (uint8_t)why, EL_CALL, 0, p->x, site, 0};
    const struct call *c = &w->calls[p->x];
    if (p->kind == P_OUT) {
      s.el = EL_PIECE;
      s.copy_path = (uint8_t)same_batch;
      s.roundtrip = (uint8_t)(cls == CLS_SERIALIZATION ? roundtrip : 0);
      /* launch gaps and host work that no cause explains, where the thread was off the CPU
       * while its process's loader threads ran: the loader's (loader_wait), data starvation */
      uint64_t lw = 0;
      if (!ser_ns && (cls == CLS_LAUNCH_OVERHEAD || (cls == CLS_OTHER && why == CLS_WHY_HOST)))
        lw = loader_wait(st, Lc->in, call_tid(w, L), p->a, p->b);
      if (lw) {
        struct seg head = s;
        head.b = p->a + lw;
        head.cls = CLS_DATA_STARVATION;
        head.why = CLS_WHY_NONE;
        head.gil = 1;
        if (seg_push(&st->tmp, &st->ntmp, &st->tcap, &head)) return -1;
        st->ngil++;
        s.a = head.b;
        if (s.b <= s.a) continue;
      }
      if (ser_ns) { /* the first ser_ns of host work after the sync: serialization */
        struct seg head = s;
        head.b = p->b - p->a > ser_ns ? p->a + ser_ns : p->b;
        head.cls = CLS_SERIALIZATION;
        head.site = began_call;
        /* the same stretch is the next batch's host work: the loader's fix takes it off too
         * (a chained gap after a sync is the batch's unless it is a long host phase) */
        if (cls == CLS_DATA_STARVATION) head.shared = CLS_DATA_STARVATION + 1;
        ser_ns -= head.b - head.a;
        if (seg_push(&st->tmp, &st->ntmp, &st->tcap, &head)) return -1;
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
    } else if (p->kind == P_CALL && st->steps_lo && mem_alloc_kind(c->fn)) {
      /* allocating again in the loop what a free gave back (device or page-locked host memory):
       * the free's cost (its fix, keeping the memory, takes both off), at the free's site */
      size_t f = realloc_free(w, p->x, st->steps_lo);
      if (f != NONE) {
        s.cls = CLS_SERIALIZATION;
        s.why = CLS_WHY_NONE;
        s.site = f;
      }
    }
    if (seg_push(&st->tmp, &st->ntmp, &st->tcap, &s)) return -1;
  }
  /* module and function loading on the launching thread, from the start of the call that held
   * it (world_loading): `other` */
  for (size_t q = 0; q < T->nl; q++) {
    uint64_t la = T->l_c[q] > gs ? T->l_c[q] : gs, lb = T->l_e[q] < ge ? T->l_e[q] : ge;
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
      if (seg_push(&st->tmp, &st->ntmp, &st->tcap, &mid) ||
          seg_push(&st->tmp, &st->ntmp, &st->tcap, &right))
        return -1;
    }
  }
  /* the tracer's cost on this host cycle: calls since the gap began, the submitting call, and
   * CUPTI's overhead records, credited to the stretches from the last backwards */
  uint64_t cost = Lc->cost_ns;
  for (size_t k = thread_pos_after(w, T, gs); k < T->n; k++) {
    size_t ci = T->calls[k];
    const struct call *c = &w->calls[ci];
    if (ci == L || c->s >= Lc->s) break;
    if (c->s >= gs) cost += c->cost_ns;
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
  /* The lost lead (docs/CLASSIFICATION.md, rule 4's "The lost lead"). A sync that waited
   * for the GPU to drain held its host back by the wait: without it the host would have gone on
   * that much ahead of the GPU, and the gaps the GPU then waited on that process's host would
   * have been covered by the work queued meanwhile, until the lead was used up. The gap after
   * the sync uses it first (its own serialization, or the next batch's work); what is left of it
   * is serialization in the next gaps of the process (also their own class's: shared, launch
   * overhead's fix takes them off too). The sizes are the host's untraced pace: the wait and
   * the gaps as the replay without the tracer has them (st->rt), where there is one. The lead
   * never exceeds the farthest the process's host got ahead of this GPU (the launch queue's
   * depth, st->queue_ns), and as the host gets ahead again the lead lost is regained. */
  int own = began == CAT_SYNC && out_ns <= st->long_gap;
  /* A blocking copy (a staging call, or a sync that waited for a copy to the device) loses the
   * lead the same way where its copy was queued behind work on its stream when the host began
   * to wait (a small tensor made on the device from a Python list after the forward pass: the
   * host waits for the whole forward, session 24's holdout_tensors); its lost lead is the copy
   * stall's. A copy on a stream of its own, staged while the compute ran on (a side-stream
   * prefetcher's pageable batch, GPU run 59), took no lead: its stall is its own time. */
  /* A wait for a pinned copy that the GPU ran alone, no kernel running from its start to the
   * gap, on the stream of the work that ends the gap (a launch-bound host behind the GPU, its
   * batch pinned and copied without non_blocking: GPU run 162's holdout_wide `b`), held the host
   * back by the copy's own time too: copied asynchronously, the host would have launched the
   * next kernels while it ran, queued behind it. Its lead is the copy stall's, kept beyond the
   * queue's depth by the copy's length (the host of such a loop never gets ahead otherwise). A
   * pageable copy's call is the host's own staging work, not a wait (charged so, holdout_gnn
   * `n`'s small pageable copies read +95% and +877% of their truth), and a copy on a stream of
   * its own gates no work behind it (holdout_streams' prefetch, GPU runs 59 and 141). */
  uint64_t alone = 0;
  if (began == CAT_STAGING && out_ns <= st->long_gap) {
    const struct call *sc = &w->calls[began_call];
    size_t o = sc->awaited != NIL ? sc->awaited : nix(sc->own_op);
    size_t pv = o != NONE ? nix(w->ops[o].prev_stream) : NONE;
    own = pv != NONE && w->ops[pv].e > sc->s;
    if (o != NONE && w->ops[o].kind == OPK_COPY && w->ops[o].flags & OPF_SRC_PINNED &&
        w->ops[o].stream == w->ops[e].stream && st->kernel_end <= w->ops[o].s &&
        w->ops[o].e > w->ops[o].s && w->ops[o].e <= gs) {
      alone = w->ops[o].e - w->ops[o].s;
      own = 1;
    }
  }
  if (st->carry_site != NONE) {
    uint64_t ahead = 0; /* how far ahead the host got since the last gap */
    for (size_t j = st->lead_op; j < e; j++) {
      size_t c = nix(w->ops[j].call);
      if (c == NONE || w->calls[c].in != st->carry_in || w->ops[j].s <= w->calls[c].e) continue;
      if (w->ops[j].s - w->calls[c].e > ahead) ahead = w->ops[j].s - w->calls[c].e;
    }
    uint64_t q = st->queue_ns[st->carry_in];
    if (st->carry_cap > q) q = st->carry_cap;
    uint64_t room = q > ahead ? q - ahead : 0;
    if (st->carry_ns > room) st->carry_ns = room;
  }
  st->lead_op = e;
  uint64_t ridle = ge - gs; /* the gap at the untraced pace */
  if (st->rt) {
    for (; st->rop < e; st->rop++)
      if (st->rt[OE(st->rop)] > st->rend) st->rend = st->rt[OE(st->rop)];
    /* less the GPU's own spacing of back-to-back work, which no lead covers */
    int64_t r = sat_sub(sat_sub(st->rt[OS(e)], st->rend), (int64_t)w->stream_gap);
    ridle = r > 0 ? (uint64_t)r : 0;
  }
  int carrying = st->carry_site != NONE && Lc->in == st->carry_in && !own;
  if (carrying && out_ns > st->long_gap) { /* a long host phase: the lead went into it */
    carrying = 0;
    st->carry_site = NONE;
  }
  uint64_t room = ridle; /* what of this gap the lead can cover */
  for (size_t k = 0; k < st->ntmp; k++) {
    struct seg s = st->tmp[k];
    if (carrying && st->carry_ns && room) {
      uint64_t len = s.b - s.a, u = len > s.tracer ? len - s.tracer : 0;
      uint64_t take = u < st->carry_ns ? u : st->carry_ns;
      if (take > room) take = room;
      st->carry_ns -= take;
      room -= take;
      /* launch gaps and the next batch's work; other host work (unexplained, a long phase)
       * uses the lead up without being charged to it: what it waited for is not known */
      if (take && (s.cls == CLS_LAUNCH_OVERHEAD || s.cls == CLS_DATA_STARVATION ||
                   (s.cls == CLS_OTHER && s.why == CLS_WHY_HOST && Lc->handoff != NIL &&
                    w->calls[Lc->handoff].in == st->carry_in))) {
        struct seg head = s;
        head.b = s.a + take;
        head.cls = st->carry_cls;
        head.why = CLS_WHY_NONE;
        head.site = st->carry_site;
        head.tracer = 0;
        head.shared = (uint8_t)(s.cls + 1);
        head.copy_path = 0;
        head.lead = 1;
        if (st->carry_cls == CLS_SERIALIZATION) st->lost_lead_ns += take;
        if (seg_push(&st->s, &st->n, &st->cap, &head)) return -1;
        s.a = head.b;
        if (s.b <= s.a) continue;
      }
    }
    if (seg_push(&st->s, &st->n, &st->cap, &s)) return -1;
  }
  if (own) { /* this sync's lead (with what is left of an earlier one's), less this gap */
    const struct call *sc = &w->calls[began_call];
    uint64_t held = sc->e > sc->s ? sc->e - sc->s : 0;
    if (st->rt) {
      int64_t r = sat_sub(st->rt[CE(began_call)], st->rt[CS(began_call)]);
      held = r > 0 ? (uint64_t)r : 0;
    }
    uint64_t lead = held > sc->base_ns ? held - sc->base_ns : 0;
    uint64_t old = st->carry_site != NONE && st->carry_in == sc->in ? st->carry_ns : 0;
    if (lead >= old) { /* named by the larger part */
      st->carry_site = began_call;
      st->carry_cls = began == CAT_STAGING ? CLS_COPY_STALL : CLS_SERIALIZATION;
    }
    uint64_t cap = st->queue_ns[sc->in] + alone;
    if (st->carry_site != NONE && st->carry_in == sc->in && st->carry_cap > cap)
      cap = st->carry_cap;
    st->carry_in = sc->in;
    st->carry_cap = cap;
    lead += old;
    if (lead > cap) lead = cap;
    st->carry_ns = lead > ridle ? lead - ridle : 0;
  }
  return 0;
}

/* The lost lead's copies (docs/CLASSIFICATION.md, rule 4's "The lost lead"): a copy the GPU ran
 * with no kernel alongside, [a, b) of operation o, issued by the host that a sync held back.
 * With the lead the host would have issued it that much sooner; where its stream (and the event
 * it waited for) had been free for that long, it would have run under the compute the sync
 * drained (a prefetch of the next batch on a side stream, issued after a `loss.item()`: GPU run
 * 65). The head of the stretch that the lead and the kernels before it cover stays a copy (the
 * GPU was busy: the partition's idle is the GPU's) and is serialization's too (shared): the
 * sync's cost. A copy behind the compute on its own stream (a batch copied on the compute
 * stream) could not have run under it and stays a copy alone. *taken: the length taken. */
static int lead_copy(struct gstate *st, size_t o, uint64_t a, uint64_t b, size_t site,
                     uint64_t *taken) {
  const struct world *w = st->w;
  const struct op *op = &w->ops[o];
  *taken = 0;
  if (st->carry_site == NONE || !st->carry_ns || op->in != st->carry_in) return 0;
  uint64_t ready = 0; /* when its stream and the event it waited for let it run */
  if (op->prev_stream != NIL) ready = w->ops[op->prev_stream].e + w->stream_gap;
  if (op->ev_dep != NIL && w->ops[op->ev_dep].e > ready) ready = w->ops[op->ev_dep].e;
  /* issued sooner, it would have run under the kernels that ran before it from when it was
   * ready: none where its stream was busy with them until they ended */
  uint64_t under = st->kernel_end > ready ? st->kernel_end - ready : 0;
  uint64_t take = b - a;
  if (take > st->carry_ns) take = st->carry_ns;
  if (take > under) take = under;
  if (!take) return 0;
  if (add(st, a, a + take, CLS_COPY, site == NONE ? CLS_WHY_NO_LAUNCH : CLS_WHY_NONE, EL_OP, o,
          site))
    return -1;
  st->s[st->n - 1].shared = (uint8_t)(st->carry_cls + 1);
  st->s[st->n - 1].lead = 1;
  st->carry_ns -= take;
  if (st->carry_cls == CLS_SERIALIZATION) st->lost_lead_ns += take;
  *taken = take;
  return 0;
}

/* Of the operations starting at ops[i].start, the one whose call started first. */
static size_t pick_ending(const struct world *w, size_t i, size_t hi) {
  size_t best = i;
  for (size_t j = i; j < hi && w->ops[j].s == w->ops[i].s; j++) {
    if (w->ops[j].call == NIL) continue;
    if (w->ops[best].call == NIL || w->calls[w->ops[j].call].s < w->calls[w->ops[best].call].s)
      best = j;
  }
  return best;
}

/* An operation the sweep holds active: what it reads of it at each event (its end and kind),
 * taken when it starts, and its place. */
struct act_op {
  uint64_t e;
  uint32_t op;   /* in w->ops (32-bit, as the links) */
  uint32_t kind; /* OPK_* */
};

/* Tiles the window of GPU gi into busy stretches and classified gaps. */
int sweep(struct gstate *st) {
  struct world *w = st->w;
  const struct gpu_ix *g = &w->g[st->gi];
  /* in the operations' order (they come by start, are appended and kept in order) */
  struct act_op *act = NULL;
  size_t nact = 0, cap = 0;
  uint64_t t = w->t0;
  size_t idx = g->lo;
  int seen = 0, rc = 0;
  for (;;) {
    if (!nact) {
      if (idx >= g->hi) {
        if (t < w->t1) rc = gap(st, t, w->t1, NONE, 1);
        break;
      }
      uint64_t ns = w->ops[idx].s;
      if (ns > t) {
        if (gap(st, t, ns, pick_ending(w, idx, g->hi), !seen)) {
          rc = -1;
          break;
        }
        t = ns;
      }
    }
    while (idx < g->hi && w->ops[idx].s <= t) {
      if (nact == cap) {
        size_t c = cap ? cap * 2 : 16;
        struct act_op *na = realloc(act, c * sizeof *na);
        if (!na) {
          free(act);
          return -1;
        }
        act = na;
        cap = c;
      }
      const struct op *o = &w->ops[idx];
      act[nact++] = (struct act_op){o->e, (uint32_t)idx, o->kind};
      idx++;
      seen = 1;
    }
    uint64_t next = idx < g->hi ? w->ops[idx].s : UINT64_MAX;
    unsigned has = 0; /* 1 << OPK_* of each kind active */
    for (size_t k = 0; k < nact; k++) {
      if (act[k].e < next) next = act[k].e;
      has |= 1u << act[k].kind;
    }
    if (nact && next > t) {
      int kind = has & 1u << OPK_KERNEL ? OPK_KERNEL : has & 1u << OPK_COMM ? OPK_COMM : OPK_COPY;
      int cls = kind == OPK_KERNEL ? CLS_COMPUTE : kind == OPK_COMM ? CLS_COMMUNICATION : CLS_COPY;
      /* the latest-starting active operation of that kind (of equal starts, the later one): the
       * last of that kind in act, which is in the operations' order */
      size_t q = nact - 1;
      while (act[q].kind != (uint32_t)kind)
        q--;
      size_t o = act[q].op;
      st->busy_op = o + 1;
      size_t site = nix(w->ops[o].call);
      uint64_t taken = 0;
      if (cls != CLS_COPY) st->kernel_end = next;
      if (cls == CLS_COPY && lead_copy(st, o, t, next, site, &taken)) {
        rc = -1;
        break;
      }
      if (add(st, t + taken, next, cls, site == NONE ? CLS_WHY_NO_LAUNCH : CLS_WHY_NONE, EL_OP, o,
              site)) {
        rc = -1;
        break;
      }
      t = next;
    }
    size_t m = 0;
    for (size_t k = 0; k < nact; k++) { /* the ended dropped without a branch (unpredictable) */
      act[m] = act[k];
      m += act[k].e > t;
    }
    nact = m;
  }
  free(act);
  if (!rc) rc = capture_split(st);
  return rc;
}

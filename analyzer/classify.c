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
 * Each stage has its file (cls_internal.h lists them); this one runs them per GPU and sums.
 */
#include "classify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cls_internal.h"
#include "frames.h"
#include "join.h"
#include "radix.h"
#include "u64map.h"

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
    "mode=\"reduce-overhead\") or torch.compile fusion for storms of tiny kernels; work done "
    "item by item in a Python loop done once on the whole batch",
    "see the reasons: work queued behind a wait slack cannot see, host work outside CUDA, "
    "start-up, module loading, device memory allocation"};

static const char *const reason_names[CLS_WHY_COUNT] = {
    "none",           "window_edge",       "no_launch_record",
    "queued",         "host_outside_cuda", "long_host_phase",
    "module_loading", "allocation",        "stack_capture"};

static const char *const reason_texts[CLS_WHY_COUNT] = {
    "",
    "before the GPU's first or after its last work",
    "the launch of the work that ended the gap was not recorded",
    "work already submitted waited for something slack does not see",
    "the launching thread was busy outside CUDA",
    "a long host phase (start-up, evaluation, checkpointing)",
    "CUDA module or function loading",
    ("the launching thread was allocating device memory (cudaMalloc): keep memory allocated "
     "across steps (no torch.cuda.empty_cache() in the loop)"),
    ("the launching thread was capturing Python stacks between its launches (the traceback "
     "module; autograd's anomaly detection records each forward operation's stack so): turn the "
     "debugging switch off")};

const char *cls_name(int c) { return c >= 0 && c < CLS_COUNT ? class_names[c] : "?"; }
const char *cls_fix(int c) { return c >= 0 && c < CLS_COUNT ? class_fixes[c] : ""; }
const char *cls_reason_name(int w) { return w >= 0 && w < CLS_WHY_COUNT ? reason_names[w] : "?"; }
const char *cls_reason_text(int w) { return w >= 0 && w < CLS_WHY_COUNT ? reason_texts[w] : "?"; }

int cls_is_comm_kernel(const char *name) { return name && !strncasecmp(name, "nccl", 4); }

static int cmp_window(const void *pa, const void *pb) {
  const struct cls_window *a = pa, *b = pb;
  return a->start < b->start ? -1 : a->start > b->start ? 1 : (a->end > b->end) - (a->end < b->end);
}

size_t cls_windows(const struct trace_data *const *td, size_t n, struct cls_window **out) {
  size_t cap = 0, k = 0;
  *out = NULL;
  for (size_t f = 0; f < n; f++)
    cap += td[f]->kind[SLK_WINDOW].n;
  if (!cap) return 0;
  struct cls_window *v = calloc(cap, sizeof *v);
  if (!v) return (size_t)-1;
  for (size_t f = 0; f < n; f++) {
    const struct trace_array *a = &td[f]->kind[SLK_WINDOW];
    for (size_t i = 0; i < a->n; i++) {
      const struct slk_record *r = &a->v[i];
      if (r->flags & SLK_WINDOW_UNTRACED) continue; /* SLACK_PACE_PROBE's stretch: no window */
      int open = (r->flags & SLK_WINDOW_OPEN) != 0, closed = 0;
      for (size_t q = 0; open && q < a->n && !closed; q++)
        closed = !(a->v[q].flags & SLK_WINDOW_OPEN) && a->v[q].start == r->start;
      if (closed) continue;
      v[k++] = (struct cls_window){r->start, open ? UINT64_MAX : r->end, r->fn, open};
    }
  }
  qsort(v, k, sizeof *v, cmp_window);
  size_t m = 0;
  for (size_t i = 0; i < k; i++) {
    if (m && v[i].start <= v[m - 1].end) {
      if (v[i].end > v[m - 1].end) v[m - 1].end = v[i].end;
      v[m - 1].why |= v[i].why;
      v[m - 1].open |= v[i].open;
    } else {
      v[m++] = v[i];
    }
  }
  *out = v;
  return m;
}

void cls_options_default(struct cls_options *o) {
  memset(o, 0, sizeof *o); /* every option not set below: off */
  o->launch_gap_ns = 500000;
  o->long_gap_ns = 1000000000;
  o->cupti_call_ns = CLS_CUPTI_CALL_NS;
  o->cupti_call_given = 0;
  o->replay = 1;
  o->steps_want = 0;
  o->step_kernel = NULL;
  o->t0 = o->t1 = 0;
  o->host_slowdown = TAIL_ASSUMED_FACTOR;
}

/* The loader's head start (docs/CLASSIFICATION.md, "Prefetched batches"): leading steps in
 * which the GPU waited for no batch (data starvation under 5% of each), before a steady state
 * that waits for its loader (data starvation a quarter or more of those steps' time, and
 * steps at least 1.5 times as long on average). A DataLoader's workers start building batches
 * when its iterator is made (num_workers x prefetch_factor of them), often while the model is
 * built or its first step autotunes: the first steps take those and run at the GPU's pace, the
 * rest at the loader's. Such a run of steps is a third of the steps at most and
 * PREFETCH_MAX_STEPS at most (what a loader holds ready: 16 workers x prefetch_factor 4; a
 * longer run of fed steps in a long trace is the loop's own pace, which then changed), with 4
 * steps after it at least; not with periodic work (steps.cycle), whose cycles are timed whole, nor
 * in a window of a long trace read in windows (the first window's steps are the loop's start, but
 * each window is classified alone, and another's leading steps are not). GPU run 84:
 * two workers, 3 steps of 41-50 ms before 25 that waited 0-562 ms each (224 ms on average, in
 * steps of 259), the loop's pace untraced 296 ms a step. Returns how many. */
#define PREFETCH_MAX_STEPS 64
static size_t prefetched_steps(const struct world *w, const struct gstate *st,
                               const struct gpu_ix *g, const struct step_set *ss) {
  /* (a window of a long trace read in windows, report_window.c, starts inside the loop) */
  if (ss->cycle || ss->count < 7 || w->opt.t0) return 0;
  size_t n = ss->count, m = 0, k = 0;
  uint64_t lead_ns = 0, rest_ns = 0, rest_ds = 0;
  for (size_t q = 0; q < n; q++) {
    uint64_t a = w->ops[g->lo + ss->first_op[q]].s, b = w->ops[g->lo + ss->next_op[q]].s, ds = 0;
    while (k < st->n && st->s[k].b <= a)
      k++;
    for (size_t j = k; j < st->n && st->s[j].a < b; j++)
      if (st->s[j].cls == CLS_DATA_STARVATION) ds += overlap(st->s[j].a, st->s[j].b, a, b);
    if (m == q && ds * 20 < b - a) {
      m++;
      lead_ns += b - a;
      continue;
    }
    rest_ns += b - a;
    rest_ds += ds;
  }
  if (!m || m * 3 > n || n - m < 4 || m > PREFETCH_MAX_STEPS) return 0;
  /* the rest waits for its loader, and its steps are longer: mean over mean, 1.5x at least */
  if (rest_ds * 4 < rest_ns || rest_ns * 2 * m < lead_ns * 3 * (n - m)) return 0;
  return m;
}

/* Steps on an input shape seen for the first time (docs/CLASSIFICATION.md, "Steps on a new
 * shape"): a loop whose batches come in a bounded set of shapes (variable-length text, images of
 * a few sizes, in no set order) pays once per shape for what the libraries do on the host the
 * first time they meet it (cuDNN building a plan, cuBLASLt's heuristics, an autotuner's trials,
 * a kernel's module loaded), in steps scattered through the loop's start, not only at its head.
 * A step is on a new shape when one of its kernels ran with a name and grid that no kernel before
 * it in the trace had (the shape picks the grids); where such steps are fewer than two thirds of
 * the steps, the others (a repeat of shapes already met) number 5 or more, the new ones take 1.5
 * times the others' mean at least, and more of them fall in the first half of the steps than in
 * the second (the set of shapes runs out), they are left out of the steady state as warm-up,
 * counted as iterations: the loop's steps are the repeats. A loop meeting a new shape in most
 * steps (1,089 sizes: GPU run 118's autotuner) keeps them all: there the cost is the loop's own.
 * GPU run 151 (holdout_alloc, 14 lengths drawn at random): 13 iterations of 150-270 ms against
 * 25-40, cuDNN's attention building a plan per length, the verdict `other` with "cuDNN works on
 * the host for each new input shape" where untraced rounds, every length met, ran 30 ms a step
 * with nothing to fix; 20 of its 37 steps left out (the pattern's steps start mid-iteration, so
 * a new length's forward and backward fall in two). keep[q] says which stay. Returns how many
 * are left out. */
static size_t shape_warmup_steps(const struct world *w, const struct gpu_ix *g,
                                 const struct step_set *ss, uint8_t *keep) {
  size_t n = ss->count;
  if (n < 8 || ss->cycle || w->opt.t0) return 0;
  struct u64map seen = {0};
  size_t q = 0, nnew = 0, first_half = 0;
  for (size_t q2 = 0; q2 < n; q2++)
    keep[q2] = 1;
  for (size_t j = g->lo; j < g->hi && q < n; j++) {
    const struct op *o = &w->ops[j];
    while (q < n && j - g->lo >= ss->next_op[q])
      q++;
    if (o->kind != OPK_KERNEL) continue;
    uint64_t key = mix64(0x5eed, o->sym);
    const struct cls_input *x = &w->in[o->in];
    if (o->rkind == SLK_KERNEL && !x->gpu[0] && !x->gpu[1] && !x->gpu[2]) {
      const struct slk_record *r = o->r;
      for (int d = 0; d < 3; d++)
        key = mix64(key, (uint32_t)r->grid[d]);
    }
    uint64_t one;
    if (u64map_get(&seen, key, &one)) continue;
    if (u64map_add(&seen, key) == (size_t)-1) {
      u64map_free(&seen);
      return 0;
    }
    /* (the ops before the first step and between steps are met, not judged) */
    if (q < n && j - g->lo >= ss->first_op[q] && keep[q]) {
      keep[q] = 0;
      nnew++;
      first_half += q < n / 2;
    }
  }
  u64map_free(&seen);
  size_t nrep = n - nnew;
  if (nnew < 2 || nrep < 5 || nnew * 3 > n * 2 || first_half * 2 <= nnew) return 0;
  uint64_t tnew = 0, trep = 0;
  for (size_t k = 0; k < n; k++) {
    uint64_t d = w->ops[g->lo + ss->next_op[k]].s - w->ops[g->lo + ss->first_op[k]].s;
    if (keep[k])
      trep += d;
    else
      tnew += d;
  }
  /* mean over mean, 1.5x at least */
  if (tnew * 2 * nrep < trep * 3 * nnew) return 0;
  return nnew;
}

static void seg_sum(const struct gstate *st, size_t *k, uint64_t a, uint64_t b, uint64_t *sum,
                    uint64_t *shared, uint64_t *lcorr, uint64_t *lfloor, uint64_t *tracer,
                    uint64_t *copy_host, uint64_t *copy_pageable, uint64_t *other_host,
                    uint64_t *lead, uint64_t *rtrip, uint64_t *gil, uint64_t *stacks) {
  while (*k < st->n && st->s[*k].b <= a)
    (*k)++;
  for (size_t q = *k; q < st->n && st->s[q].a < b; q++) {
    const struct seg *s = &st->s[q];
    uint64_t ov = overlap(s->a, s->b, a, b);
    if (!ov) continue;
    sum[s->cls] += ov;
    if (s->shared) shared[s->shared - 1] += ov;
    /* (a sync's lost lead: a blocking copy's is the copy stall's alone, cls_gaps.c) */
    if (s->lead && (s->cls == CLS_SERIALIZATION || s->shared == CLS_SERIALIZATION + 1)) *lead += ov;
    if (s->cls == CLS_SERIALIZATION && s->roundtrip) *rtrip += ov;
    if (s->cls == CLS_DATA_STARVATION && s->gil) *gil += ov;
    if (s->cls == CLS_OTHER && s->why == CLS_WHY_HOST) *other_host += ov;
    if (s->cls == CLS_OTHER && s->why == CLS_WHY_STACKS) *stacks += ov;
    uint64_t len = s->b - s->a;
    uint64_t tr = len ? u64_of((double)s->tracer * ov / len) : 0;
    if (s->cls >= CLS_FIRST_IDLE) *tracer += tr;
    if (s->cls == CLS_LAUNCH_OVERHEAD) *lcorr += ov - tr;
    if (s->cls == CLS_LAUNCH_OVERHEAD && s->el != EL_CALL) *lfloor += ov;
    /* (a lost lead's copy is the sync's: its stream's copies already overlap) */
    if (s->cls == CLS_COPY && s->el == EL_OP && !s->lead &&
        (st->w->ops[s->x].flags & OPF_HOST_XFER)) {
      *copy_host += ov;
      if (st->w->ops[s->x].flags & (OPF_SRC_PAGEABLE | OPF_DST_PAGEABLE)) *copy_pageable += ov;
    }
  }
}

/* The copies that copy stall's staging calls in [a, b) waited for (a blocking copy's own, a
 * sync's awaited one): how many distinct ones, and their GPU time, into *n and *ns. A copy stall
 * on copies of a few bytes (a Python scalar assigned into a CUDA tensor, torch.tensor(list,
 * device="cuda")) is the waits' cost, not the bandwidth's (report_fix). */
static void staged_copies(const struct gstate *st, uint64_t a, uint64_t b, size_t *n,
                          uint64_t *ns) {
  const struct world *w = st->w;
  size_t last = NONE;
  for (size_t q = 0; q < st->n; q++) {
    const struct seg *s = &st->s[q];
    if (s->b <= a || s->a >= b || s->cls != CLS_COPY_STALL || s->el != EL_CALL) continue;
    const struct call *c = &w->calls[s->x];
    size_t j = nix(c->awaited);
    if (j == NONE || w->ops[j].kind != OPK_COPY || !w->ops[j].h2d) j = nix(c->own_op);
    if (j == NONE || w->ops[j].kind != OPK_COPY || !w->ops[j].h2d || j == last) continue;
    last = j;
    (*n)++;
    *ns += w->ops[j].e - w->ops[j].s;
  }
}

static void mark(struct edits *ed, uint8_t *flag) {
  *flag = 1;
  ed->marked++;
}

/* Whether call c (of thread order) submitted a copy between host and device memory on the GPU
 * at hand, to the device (h2d 1) or from it (0): its operation, else NONE */
static size_t xfer_op(const struct world *w, const struct gpu_ix *g, size_t c, int h2d) {
  size_t j = nix(w->calls[c].own_op);
  if (j == NONE || j < g->lo || j >= g->hi) return NONE;
  const struct op *o = &w->ops[j];
  return o->kind == OPK_COPY && (o->flags & OPF_HOST_XFER) && o->h2d == h2d ? j : NONE;
}

/* The round trip's copies: its fix does the host's work on the GPU (or off the critical path,
 * its copies on a side stream), so what the sync read and what the host sent back leave the
 * step with it (GPU run 79: an optimizer stepped on the CPU, 134 MB of gradients read and of
 * weights sent back each step, 5 ms of exposed copies the what-if had kept). Those are the
 * copies from device to host that the sync's thread submitted right before it (the sync itself
 * where it is one: a pageable copy), back to its previous submission that is no such copy, and
 * the copies to the device it submitted from `after` (the call that ends the round trip's host
 * work) up to its next submission that is no such copy; inside [lo, hi). */
static void roundtrip_copies(const struct world *w, const struct gpu_ix *g, size_t sync,
                             size_t after, uint64_t lo, uint64_t hi, struct edits *ed) {
  for (int dir = 0; dir < 2; dir++) {
    size_t c = dir ? after : sync;
    for (int n = 0; c != NONE && n < 4096; n++) {
      const struct call *x = &w->calls[c];
      if (x->s < lo || x->s >= hi) break;
      if (x->submits) {
        size_t j = xfer_op(w, g, c, dir);
        if (j == NONE) break;
        if (!ed->op_zero[j]) mark(ed, &ed->op_zero[j]);
      }
      c = nix(dir ? x->next : x->prev);
    }
  }
}

/* The memory a serialization site gives back (mem_free_kind): a free's own, or, for a sync whose
 * thread's next call gives device memory back without waiting itself, the device's:
 * torch.cuda.empty_cache() under PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync (a device
 * synchronize, then cudaMemPoolTrimTo) or expandable_segments:True (a stream synchronize, then
 * cuMemUnmap and cuMemRelease for each of the segment's pages). */
static int sync_free_kind(const struct world *w, size_t site) {
  const struct call *c = &w->calls[site];
  int k = mem_free_kind(c->fn);
  if (k || c->cat != CAT_SYNC || c->next == NIL) return k;
  uint32_t fn = w->calls[c->next].fn;
  return fn == SLK_FN_MEM_POOL_TRIM_TO || fn == SLK_FN_CU_MEM_UNMAP || fn == SLK_FN_CU_MEM_RELEASE
             ? 1
             : 0;
}

/* A round trip's site: its sync's input and Python stack (the statement that read). */
static uint64_t rt_site_key(const struct world *w, size_t sync) {
  return (uint64_t)w->calls[sync].in << 32 | call_rec(w, sync).pystack;
}

/* Marks what removing class cls takes out of the graph, inside the steps' span [lo, hi) only:
 * time removed before the first step would move the first step's start, not shorten steps. */
#define EDIT_XFER CLS_COUNT /* edits_apply: the copies between host and device only */

static void edits_apply(const struct world *w, const struct gstate *st, int cls, uint64_t lo,
                        uint64_t hi, struct edits *ed) {
  const struct gpu_ix *g = &w->g[st->gi];
  if (cls <= CLS_COPY || cls == EDIT_XFER) {
    int kind = cls == CLS_COMPUTE ? OPK_KERNEL : cls == CLS_COMMUNICATION ? OPK_COMM : OPK_COPY;
    uint8_t need = cls == EDIT_XFER ? OPF_HOST_XFER : 0;
    for (size_t j = g->lo; j < g->hi; j++)
      if (w->ops[j].kind == kind && (w->ops[j].flags & need) == need && w->ops[j].s >= lo &&
          w->ops[j].s < hi)
        mark(ed, &ed->op_zero[j]);
    return;
  }
  int frees = 0; /* frees among the class's sites: bit 0 device memory's, bit 1 pinned host's */
  int gil = 0;   /* a launching thread waited while its process's loader threads ran */
  for (size_t k = 0; k < st->n; k++) {
    const struct seg *s = &st->s[k];
    /* the launch gaps a sync's lost lead took (serialization, cls_gaps.c) are the launches'
     * too: a CUDA graph takes them off as well */
    int mine = s->cls == cls || (cls == CLS_LAUNCH_OVERHEAD && s->shared == cls + 1);
    if (!mine || s->a < lo || s->b > hi) continue;
    switch (cls) {
    case CLS_SERIALIZATION:
      if (s->el == EL_CALL && w->calls[s->x].cat == CAT_SYNC) mark(ed, &ed->nowait[s->x]);
      /* host work after a sync, charged to it (chained causes): the sync stops waiting */
      if (s->el == EL_PIECE && s->site != NONE && w->calls[s->site].cat == CAT_SYNC)
        mark(ed, &ed->nowait[s->site]);
      /* the host's work on what the sync read: done on the GPU, and the copies out and back
       * with it; for the host's bound, the work whose result stayed on the host stays on its
       * thread (gpu_whatif) */
      uint64_t one;
      if (s->el == EL_PIECE && s->roundtrip == RT_ON_HOST && ed->keep_on_host && s->site != NONE &&
          u64map_get(&ed->keep_site, rt_site_key(w, s->site), &one)) {
        ed->host_thread[w->calls[s->x].thread] = 1;
        ed->marked++;
      } else if (s->el == EL_PIECE && s->roundtrip) {
        mark(ed, &ed->piece_cut[s->x]);
        if (s->site != NONE) roundtrip_copies(w, g, s->site, s->x, lo, hi, ed);
      }
      int fk = s->site != NONE ? sync_free_kind(w, s->site) : 0;
      if (fk) frees |= 1 << (fk - 1);
      break;
    case CLS_COPY_STALL:
      if (s->el == EL_CALL) mark(ed, &ed->nowait[s->x]);
      /* the pageable copy's own return path between one batch's copies (freeing the pageable
       * batch, the framework's bookkeeping): gone with pinned asynchronous copies */
      if (s->el == EL_PIECE && s->copy_path) mark(ed, &ed->piece_cut[s->x]);
      break;
    case CLS_DATA_STARVATION:
      if (s->el == EL_PIECE && !s->gil) mark(ed, &ed->piece_cut[s->x]);
      if (s->gil) gil = 1;

      break;
    case CLS_LAUNCH_OVERHEAD:
    case CLS_OTHER:
      /* host work split with a stack capture's (cls_gaps.c capture_split): a CUDA graph would
       * take the launches' share of the host's stretch off, the capture stays with its switch */
      if (s->el == EL_PIECE && cls == CLS_LAUNCH_OVERHEAD && k + 1 < st->n &&
          st->s[k + 1].x == s->x && st->s[k + 1].el == EL_PIECE && st->s[k + 1].cls == CLS_OTHER &&
          st->s[k + 1].why == CLS_WHY_STACKS && w->calls[s->x].prev != NIL) {
        const struct call *c = &w->calls[s->x];
        uint64_t pe = w->calls[c->prev].e, len = c->s > pe ? c->s - pe : 0;
        uint64_t head = s->b - s->a, tail = st->s[k + 1].b - st->s[k + 1].a;
        size_t slot = u64map_add(&ed->less, s->x);
        if (slot != (size_t)-1 && !(ed->piece_cut[s->x] & PIECE_CUT)) {
          ed->less.val[slot] = u64_of((double)len * (double)head / (double)(head + tail));
          ed->piece_cut[s->x] |= PIECE_LESS;
          ed->marked++;
          break;
        }
      }
      if (s->el == EL_PIECE) mark(ed, &ed->piece_cut[s->x]);
      if (s->el == EL_CALL && w->calls[s->x].cat == CAT_CALL) mark(ed, &ed->call_cut[s->x]);
      if (s->el == EL_OP) mark(ed, &ed->op_min[s->x]);
      break;
    default: break;
    }
  }
  /* The loader keeps up: a thread of the GPU's processes that submits no GPU work (a
   * DataLoader's pin-memory thread, handing each batch over as the workers deliver it) waits
   * between two calls less by the GPU's data starvation in that wait, down to its pace
   * (graph.pace) at most (GPU run 66: 3 workers; the main thread's waits cut, the pin thread's
   * hand-overs held the replay to the workers' pace: 42 of 122 ms saved per step, and the
   * verdict launch overhead). Where the loader kept up, the GPU did not starve in its waits.
   * The same where another stall's fix lets the loop consume sooner: such a thread that waited
   * for its producer (off the CPU in a hand-over primitive: producer_wait) while the GPU stalled
   * for that cause waited for the loop, whose consumption sends the producer its next work (a
   * DataLoader's indices go out as batches are taken), so its wait shrinks by that stall's time
   * in it, down to its pace, and no more than it was idle: a loader's thread building batches
   * itself (a hand-written prefetcher's) keeps its work (GPU run 90: a trainer's checkpoint
   * cut from the loop, the pin-memory thread idle through it kept the next steps at the traced
   * pace, the what-if +25.4% against the measured step without the checkpoint, now -4.8%). */
  if (cls >= CLS_SERIALIZATION && cls <= CLS_LAUNCH_OVERHEAD && ed->marked)
    for (size_t t = 0; t < w->nthreads; t++) {
      const struct thread *T = &w->threads[t];
      if (T->submits || !w->gpu_input[st->gi * w->nin + T->in]) continue;
      size_t k = 0;
      for (size_t q = 0; q < T->n; q++) {
        const struct call *c = &w->calls[T->calls[q]];
        if (c->s < lo || c->s >= hi) continue;
        /* its first call (GPU run 81: a pin-memory thread's first call came with the epoch's
         * first batch, 217 ms into a step that waited for it, and the main thread took the
         * batch from it after: the step's wait stayed whole in the what-if): its wait from the
         * call that started the thread (its hand-off, else graph.first_from: the main thread's
         * last call before it, which made the epoch's iterator), else from the steps' start */
        int first = c->prev == NIL;
        uint64_t a = first ? lo : w->calls[c->prev].e, b = c->s, starved = 0, from;
        if (first && c->handoff != NIL)
          a = w->calls[c->handoff].e; /* from the call that started it */
        else if (first && ed->first_from && u64map_get(ed->first_from, T->calls[q], &from))
          a = w->calls[from].e; /* (graph.first_from) */
        while (k < st->n && st->s[k].b <= a)
          k++;
        for (size_t j = k; j < st->n && st->s[j].a < b; j++)
          if (st->s[j].cls == cls) starved += overlap(st->s[j].a, st->s[j].b, a, b);
        if (starved && cls != CLS_DATA_STARVATION) {
          /* (the samples' index is built by the sweep; st is the sweep's own state) */
          uint64_t idle = producer_wait((struct gstate *)st, T->in, call_tid(w, T->calls[q]), a, b);
          if (starved > idle) starved = idle;
        }
        if (!starved) continue;
        size_t slot = u64map_add(&ed->fed, T->calls[q]);
        if (slot == (size_t)-1) continue; /* out of memory: this wait as traced */
        ed->fed.val[slot] += starved;
        if (first) {
          ed->first_lo = lo;
          ed->piece_cut[T->calls[q]] |= PIECE_FIRST;
          continue;
        }
        ed->piece_cut[T->calls[q]] |= PIECE_PACE;
      }
    }
  /* The loader's threads out of the process (worker processes, the usual fix) take their
   * Python off the GIL: every submitting thread of the GPU's processes works between its calls
   * without the waits loader_wait finds there, whether the GPU was idle then or not; and the
   * loader's threads themselves (those that submit nothing) run where they waited for the GIL
   * (or a CPU) the process's other threads held, their hand-over waits kept (loader_self_wait) */
  if (gil && cls == CLS_DATA_STARVATION)
    for (size_t t = 0; t < w->nthreads; t++) {
      const struct thread *T = &w->threads[t];
      if (!w->gpu_input[st->gi * w->nin + T->in]) continue;
      uint64_t (*waited)(struct gstate *, uint32_t, uint64_t, uint64_t, uint64_t) =
          T->submits ? loader_wait : loader_self_wait;
      uint64_t tid = call_tid(w, T->calls[0]);
      for (size_t q = 1; q < T->n; q++) {
        const struct call *c = &w->calls[T->calls[q]];
        if (c->s < lo || c->s >= hi) continue;
        uint64_t pe = w->calls[T->calls[q - 1]].e;
        /* (the samples' index is built by the sweep; st is the sweep's own state) */
        uint64_t lw = pe < c->s ? waited((struct gstate *)st, c->in, tid, pe, c->s) : 0;
        if (!lw) continue;
        size_t slot = u64map_add(&ed->less, T->calls[q]);
        if (slot == (size_t)-1) continue; /* out of memory: this piece as traced */
        ed->less.val[slot] = lw;
        ed->piece_cut[T->calls[q]] |= PIECE_LESS;
        ed->marked++;
      }
    }
  /* Launches that wait (CUDA_LAUNCH_BLOCKING=1, world_launch_blocking): the switch's fix takes
   * every such wait off, also those whose kernel left no gap that serialization holds (a launch
   * whose kernel ran while the host's next work waited behind the call) */
  if (cls == CLS_SERIALIZATION)
    for (size_t k = 0; k < w->ncalls; k++) {
      const struct call *c = &w->calls[k];
      if (c->cat == CAT_SYNC && w->launch_blocking[c->in] && c->s >= lo && c->s < hi &&
          (c->fcat == SLK_FNC_LAUNCH || c->fcat == SLK_FNC_GRAPH) && !ed->nowait[k])
        mark(ed, &ed->nowait[k]);
    }
  /* Keeping the memory allocated (report_fix: device memory, or page-locked host buffers) takes
   * the loop's frees of that memory off, waits and all, and the allocations that took it back,
   * also those made while the GPU was busy (a host that is the step's critical path pays them
   * too) */
  const uint8_t *on_gpu = &w->gpu_input[st->gi * w->nin];
  for (size_t q = 0; frees && q < w->nfrees; q++) {
    size_t f = w->frees[q];
    if (w->calls[f].s < lo || w->calls[f].s >= hi || !on_gpu[w->calls[f].in] ||
        !(frees & 1 << (mem_free_kind(w->calls[f].fn) - 1)))
      continue;
    mark(ed, &ed->nowait[f]);
    mark(ed, &ed->call_cut[f]);
  }
  for (size_t q = 0; frees && q < w->nallocs; q++) {
    size_t a = w->allocs[q];
    if (w->calls[a].s < lo || w->calls[a].s >= hi || !on_gpu[w->calls[a].in] ||
        !(frees & 1 << (mem_alloc_kind(w->calls[a].fn) - 1)))
      continue;
    if (realloc_free(w, a, st->steps_lo) != NONE) mark(ed, &ed->call_cut[a]);
  }
  if (cls == CLS_LAUNCH_OVERHEAD)
    for (size_t j = g->lo; j < g->hi; j++) {
      size_t c = nix(w->ops[j].call);
      if (c != NONE && (ed->call_cut[c] || ed->piece_cut[c])) mark(ed, &ed->op_graph[j]);
    }
}

static void edits_clear(const struct world *w, struct edits *ed) {
  ed->corrected = 0;
  ed->keep_on_host = 0;
  u64map_free(&ed->keep_site);
  if (ed->host_thread) memset(ed->host_thread, 0, w->nthreads ? w->nthreads : 1);
  u64map_free(&ed->fed);
  u64map_free(&ed->less);
  if (!ed->marked) return; /* nothing set since the last clear */
  ed->marked = 0;
  memset(ed->piece_cut, 0, w->ncalls ? w->ncalls : 1);
  memset(ed->call_cut, 0, w->ncalls ? w->ncalls : 1);
  memset(ed->nowait, 0, w->ncalls ? w->ncalls : 1);
  memset(ed->op_zero, 0, w->nops ? w->nops : 1);
  memset(ed->op_min, 0, w->nops ? w->nops : 1);
  memset(ed->op_graph, 0, w->nops ? w->nops : 1);
}

/* The what-if of class c; WI_COPY_BOTH: copy and copy stall together; WI_ALL: every stall;
 * WI_HOST: every stall but launch overhead. */
enum { WI_COPY_BOTH = CLS_COUNT, WI_ALL, WI_HOST, WI_COUNT };
static struct cls_whatif *whatif_of(struct cls_gpu *g, int c) {
  return c < CLS_COUNT       ? &g->whatif[c]
         : c == WI_COPY_BOTH ? &g->whatif_copy_both
         : c == WI_ALL       ? &g->whatif_all
                             : &g->whatif_host;
}

/* The edits of what-if c (whatif_of) over the steps' span. */
static void whatif_edits(const struct world *w, const struct gstate *st, int c,
                         const struct cls_steps *sp, struct edits *ed) {
  if (c < CLS_COUNT) {
    edits_apply(w, st, c, sp->first_ns, sp->last_ns, ed);
  } else {
    /* the transfers overlap compute (pinned, asynchronous, on a side stream); copies on the
     * device and memsets stay, as no such fix moves them */
    edits_apply(w, st, EDIT_XFER, sp->first_ns, sp->last_ns, ed);
    edits_apply(w, st, CLS_COPY_STALL, sp->first_ns, sp->last_ns, ed);
  }
  if (c == WI_ALL || c == WI_HOST) {
    edits_apply(w, st, CLS_SERIALIZATION, sp->first_ns, sp->last_ns, ed);
    edits_apply(w, st, CLS_DATA_STARVATION, sp->first_ns, sp->last_ns, ed);
  }
  if (c == WI_ALL) edits_apply(w, st, CLS_LAUNCH_OVERHEAD, sp->first_ns, sp->last_ns, ed);
}

struct rt_piece {
  uint64_t site, step, ns;
};

static int rt_piece_cmp(const void *a, const void *b) {
  const struct rt_piece *x = a, *y = b;
  if (x->site != y->site) return x->site < y->site ? -1 : 1;
  return x->step < y->step ? -1 : x->step > y->step;
}

/* The host's bound on what-if c: a round trip whose result stayed on the host (records written,
 * predictions post-processed in Python: seg.roundtrip RT_ON_HOST) is taken off the GPU's path by
 * its usual fixes (the work one step behind, in a background thread, on the GPU), but the first
 * two still do it on the host: the step is then no shorter than the host's own work. So the
 * same edits again with that work kept on its thread and the thread waiting on none of its syncs
 * (it never waits for the GPU: the fastest its work allows). GPU run 100: ResNet-18 inference
 * whose top-5 are written as JSON records each step, fixed one step behind from pinned memory:
 * the host-bound fixed form ran 10.27 ms a step, the what-if that took the work off 6.77. 0
 * where no such round trip is in the steps. */
static uint64_t host_bound(const struct world *w, struct graph *gr, struct edits *ed,
                           const struct gstate *st, int c, const struct cls_steps *sp,
                           const size_t *first, const size_t *next, size_t count) {
  edits_clear(w, ed);
  /* only a round trip that recurs: its site's work in half the steps or more, each of them
   * holding at least half its mean per step. One that comes every 10th step (a checkpoint saved)
   * a background thread spreads over the steps between, where the host has room (GPU run 100's
   * trainer: its checkpoint kept on the host read +17.4% against the step without it, cut
   * +5.2%); its tiny pieces in the other steps (the same sync's site, no work after it) do not
   * make it recur. */
  struct rt_piece *v = NULL;
  size_t nv = 0, cap = 0, k = 0;
  int nomem = 0;
  for (size_t q = 0; q < st->n; q++) {
    const struct seg *s = &st->s[q];
    if (s->el != EL_PIECE || s->roundtrip != RT_ON_HOST || s->site == NONE ||
        s->cls != CLS_SERIALIZATION || s->a < sp->first_ns || s->b > sp->last_ns)
      continue;
    while (k + 1 < count && w->ops[first[k + 1]].s <= s->a)
      k++;
    if (nv == cap) {
      struct rt_piece *nvv = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof *v);
      if (!nvv) {
        nomem = 1;
        break;
      }
      v = nvv;
    }
    v[nv++] = (struct rt_piece){rt_site_key(w, s->site), k, s->b - s->a};
  }
  if (!nomem && nv) qsort(v, nv, sizeof *v, rt_piece_cmp);
  for (size_t a = 0, b; a < nv && !nomem; a = b) {
    uint64_t total = 0;
    for (b = a; b < nv && v[b].site == v[a].site; b++)
      total += v[b].ns;
    size_t held = 0;
    for (size_t x = a, y; x < b; x = y) { /* one step of the site's pieces */
      uint64_t in_step = 0;
      for (y = x; y < b && v[y].step == v[x].step; y++)
        in_step += v[y].ns;
      if ((double)in_step * 2.0 * (double)count >= (double)total) held++;
    }
    if (held * 2 < count) continue;
    size_t slot = u64map_add(&ed->keep_site, v[a].site);
    if (slot == (size_t)-1)
      nomem = 1;
    else
      ed->keep_site.val[slot] = 1;
  }
  free(v);
  if (nomem || !ed->keep_site.n) return 0;
  ed->keep_on_host = 1;
  whatif_edits(w, st, c, sp, ed);
  int any = 0;
  for (size_t t = 0; t < w->nthreads; t++) {
    if (!ed->host_thread[t]) continue;
    any = 1;
    const struct thread *T = &w->threads[t];
    for (size_t m = 0; m < T->n; m++) {
      const struct call *x = &w->calls[T->calls[m]];
      if (x->cat == CAT_SYNC && x->s >= sp->first_ns && x->s < sp->last_ns)
        mark(ed, &ed->nowait[T->calls[m]]);
    }
  }
  if (!any) return 0;
  ed->corrected = 1;
  replay(w, gr, ed);
  return replay_step(w, gr, first, next, count);
}

/* The loader's pace (docs/CLASSIFICATION.md, "The loader's pace"). Where a process's loader
 * threads (threads of its own that submit no GPU work, sampled in a data-loading library's
 * frames) were building batches in most of their samples through the steps (waiting to hand one
 * over in the rest), they made a batch in that share of a step: the step without the tracer,
 * scaled by their busy share, is the least step any fix outside the loader can reach. Every
 * what-if but data starvation's and every stall's keeps the loader: none ends below that (GPU
 * runs 84 and 90: a hand-written prefetcher of 4 Python threads, busy in 96% of their samples,
 * slowed the ResNet-50 step's own threads to half their pace, and launch overhead's replay,
 * which keeps the loader's work as traced yet runs the launches at once, said 48 ms against
 * the loop's 92: the verdict launch overhead where the loader's fix measured 3x). */
/* (a loader busy half its time or less: its bound lies at half the step or below, where the
 * fixes' own replays already are) */
#define LOADER_BUSY_MIN 0.5
/* A launching thread that waits for its batches from other threads or processes (a Future's
 * result, a queue's get: cls_gaps.c producer_wait) in this share of each half of the steps or
 * more runs at the pace they come: the loop is theirs, and no fix but the loader's makes the step
 * shorter than it is without the tracer (holdout_io `t`, GPU run 125: a pool of 2 threads
 * fetching samples from a store with 2 ms of latency each, sampled in no frame of a loading
 * library; the main thread waited on their Futures off the CPU, data starvation 36% of the step,
 * and launch overhead's replay, the waits kept as traced, said 35 ms a step against the loop's
 * 78: the verdict launch overhead). Under this share the waits are a queue's jitter. */
#define PRODUCER_WAIT_MIN 0.05
/* Whether a thread of input in other than tid submitted GPU work (a launch, a copy, a memset)
 * in [a, b): by each thread's calls in start order. */
static int others_submitted(const struct world *w, uint32_t in, uint64_t tid, uint64_t a,
                            uint64_t b) {
  for (size_t t = 0; t < w->nthreads; t++) {
    const struct thread *T = &w->threads[t];
    if (T->in != in || T->tid == tid || !T->submits) continue;
    size_t lo = 0, hi = T->n;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (w->calls[T->calls[mid]].s < a)
        lo = mid + 1;
      else
        hi = mid;
    }
    for (; lo < T->n && w->calls[T->calls[lo]].s < b; lo++)
      if (w->calls[T->calls[lo]].submits) return 1;
  }
  return 0;
}

static void loader_bound(const struct world *w, const struct gstate *st, const struct step_set *ss,
                         const size_t *first, const size_t *next, struct cls_gpu *out) {
  struct cls_steps *sp = &out->steps;
  double busy = -1, waited = 0;
  for (uint32_t in = 0; in < w->nin; in++) {
    if (!w->gpu_input[st->gi * w->nin + in]) continue;
    size_t n = 0;
    /* (the samples' index is built by the sweep; st is the sweep's own state) */
    double b = loader_busy((struct gstate *)st, in, sp->first_ns, sp->last_ns, &n);
    /* two samples a step at least, ten in all: a share the samples can tell */
    if (b > busy && n >= 10 && n >= 2 * ss->count) busy = b;
  }
  /* the launching threads' waits for a producer in the GPU's data starvation, by half */
  uint64_t a = sp->first_ns, z = sp->last_ns, m = a + (z - a) / 2, half[2] = {0, 0};
  size_t waits = 0, at = 0, marked = SIZE_MAX; /* steps with such a wait; the last counted */
  int traced = 0; /* another thread of the process submitted GPU work in such a wait */
  for (size_t k = 0; z > a + 1 && k < st->n; k++) {
    const struct seg *g = &st->s[k];
    if (g->cls != CLS_DATA_STARVATION || g->el != EL_PIECE || g->b <= a || g->a >= z) continue;
    const struct call *c = &w->calls[g->x];
    uint64_t tid = call_tid(w, g->x), got = 0;
    for (int h = 0; h < 2; h++) {
      uint64_t lo = h ? m : a, hi = h ? z : m;
      lo = g->a > lo ? g->a : lo, hi = g->b < hi ? g->b : hi;
      uint64_t v = hi > lo ? producer_wait((struct gstate *)st, c->in, tid, lo, hi) : 0;
      half[h] += v, got += v;
    }
    /* over the launching thread's whole stretch outside CUDA before the call (a prefetcher's
     * copy splits the GPU's gap, its piece then ends at that copy) */
    if (got && !traced)
      traced = others_submitted(w, c->in, tid, c->prev != NIL ? w->calls[c->prev].e : g->a, c->s);
    /* the step the piece ends in (the pieces come in time order), each step counted once */
    while (at < ss->count && w->ops[next[at]].s < g->b)
      at++;
    if (got && at < ss->count && w->ops[first[at]].s < g->b && at != marked) waits++, marked = at;
  }
  /* a producer that starts on demand (a DataLoader's workers started again at each epoch, GPU
   * runs 86 and 89: waits sampled in 2 of 24 steps) paces its waits alone, not the loop, which
   * runs at the consumer's pace in between; a steady producer keeps the loop waiting in most
   * steps, of which the samples (SLACK_PY_SAMPLE_MS apart) catch a part: 10 of 27 to 18 of 28
   * steps in GPU runs 84, 125 and 126 */
  if (4 * waits < ss->count)
    waited = 0;
  else if (z > a + 1) {
    double s0 = (double)half[0] / (double)(m - a), s1 = (double)half[1] / (double)(z - m);
    waited = s0 < s1 ? s0 : s1;
  }
  if (waited >= PRODUCER_WAIT_MIN) sp->producer_wait = waited, sp->producer_traced = traced;
  if (busy < LOADER_BUSY_MIN && !sp->producer_wait) return;
  if (busy >= LOADER_BUSY_MIN) sp->loader_busy = busy;
  if (sp->producer_wait) busy = 1;
  sp->loader_bound_ns = (uint64_t)((double)out->corrected_step_ns * busy);
  /* the producer's pace is the loop's traced one: the work it waits for was done off the CPU or
   * by other processes, which the tracer does not slow, and the tracer's cost on the launching
   * thread only lengthened its waits (gpu_whatif raises the step without the tracer to it); not
   * where a thread of the process submitted GPU work in those waits (a prefetcher's thread
   * copying the next batch: the tracer slows its calls too), whose pace the replay keeps */
  if (sp->producer_wait && !sp->producer_traced && sp->step_ns > sp->loader_bound_ns)
    sp->loader_bound_ns = sp->step_ns;
  for (int c = 0; c <= CLS_COUNT; c++) {
    struct cls_whatif *wi = whatif_of(out, c);
    if (c == CLS_DATA_STARVATION || wi->best_ns >= sp->loader_bound_ns) continue;
    wi->loader_bound_ns = sp->loader_bound_ns;
    wi->best_ns = sp->loader_bound_ns;
  }
}

static void gpu_whatif(const struct world *w, struct graph *gr, struct edits *ed,
                       const struct gstate *st, const struct step_set *ss, const struct pace *pc,
                       struct cls_gpu *out) {
  struct cls_steps *sp = &out->steps;
  size_t *first = malloc(ss->count * sizeof *first), *next = malloc(ss->count * sizeof *next);
  uint64_t step_corr =
      sp->step_ns > sp->tracer_per_step_ns ? sp->step_ns - sp->tracer_per_step_ns : 0;
  for (int c = 0; c < WI_COUNT; c++) {
    struct cls_whatif *wi = whatif_of(out, c);
    /* a cause's own time and the time it shares with another (chained causes): what its fix
     * alone takes off; every stall together: the partition, nothing twice */
    uint64_t per = c < CLS_COUNT ? sp->per_step_ns[c] + sp->per_step_shared_ns[c]
                                 : sp->copy_host_per_step_ns + sp->per_step_ns[CLS_COPY_STALL] +
                                       sp->per_step_shared_ns[CLS_COPY_STALL];
    if (c == WI_ALL || c == WI_HOST) {
      per = sp->copy_host_per_step_ns + sp->per_step_ns[CLS_COPY_STALL];
      per += sp->per_step_ns[CLS_SERIALIZATION] + sp->per_step_ns[CLS_DATA_STARVATION];
      if (c == WI_ALL) per += sp->launch_corrected_per_step_ns;
    }
    uint64_t per_corr = c == CLS_LAUNCH_OVERHEAD ? sp->launch_corrected_per_step_ns +
                                                       sp->per_step_shared_ns[CLS_LAUNCH_OVERHEAD]
                                                 : per;
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
  gr->gain = 1.0;
  replay(w, gr, NULL);
  out->replay_step_ns = replay_step(w, gr, first, next, ss->count);
  out->replay_error =
      sp->step_ns ? ((double)out->replay_step_ns - (double)sp->step_ns) / (double)sp->step_ns : 0;
  edits_clear(w, ed);
  ed->first_from = &gr->first_from;
  ed->corrected = 1;
  /* the steady state: the steps' one-time module loads taken off (world_loading); those
   * before the steps stay, or the steps' first launches would move against their GPU work */
  ed->loads_lo = sp->first_ns;
  ed->loads_hi = sp->last_ns;
  replay(w, gr, ed);
  out->corrected_step_ns = replay_step(w, gr, first, next, ss->count);
  /* the host's pace fitted to the loop's iterations in the untraced tail (cls_pace.c) */
  pace_fit(w, gr, ed, pc, out);
  if (gr->gain != 1.0) {
    replay(w, gr, ed);
    out->corrected_step_ns = replay_step(w, gr, first, next, ss->count);
  }
  for (int c = 0; c < WI_COUNT; c++) {
    struct cls_whatif *wi = whatif_of(out, c);
    edits_clear(w, ed);
    whatif_edits(w, st, c, sp, ed);
    if (!ed->marked) { /* nothing of the class in the steps: the replays without edits */
      wi->replay_ns = out->replay_step_ns;
      wi->replay_corrected_ns = out->corrected_step_ns;
    }
    for (int corr = 0; corr < 2 && ed->marked; corr++) { /* the same edits, both ways */
      ed->corrected = corr;
      replay(w, gr, ed);
      uint64_t v = replay_step(w, gr, first, next, ss->count);
      if (corr)
        wi->replay_corrected_ns = v;
      else
        wi->replay_ns = v;
    }
    wi->best_ns = wi->replay_corrected_ns;
    if (c == CLS_SERIALIZATION || c == WI_ALL || c == WI_HOST) {
      wi->host_bound_ns = host_bound(w, gr, ed, st, c, sp, first, next, ss->count);
      if (wi->host_bound_ns > wi->best_ns) wi->best_ns = wi->host_bound_ns;
    }
  }
  out->replay_ok = 1;
  loader_bound(w, st, ss, first, next, out);
  /* with an untraced tail the corrected replay runs the host at its untraced pace: the launch
   * overhead it keeps is the untraced one (docs/CLASSIFICATION.md, "The untraced tail"). Also
   * where the tail timed the host as fast traced as untraced (its factor 1: the replay runs the
   * host as traced, which is its untraced pace): GPU run 81's epoch loop without a cause, a tail
   * of 24,291 calls 18.6 us apart traced and 19.0 untraced, read as "at most, no tail" */
  const struct cls_whatif *lw = whatif_of(out, CLS_LAUNCH_OVERHEAD);
  const struct cls_tracer *tr = &out->tracer;
  if (tr->tail_factor > 1.0 || tr->pace_assumed > 1.0 ||
      (tr->tail_calls && !tr->tail_taken && tr->tail_ntraced >= TAIL_MIN_INTERVALS &&
       tr->tail_nuntraced >= TAIL_MIN_INTERVALS && tr->tail_untraced_ns)) {
    sp->launch_tail_ok = 1;
    sp->launch_tail_assumed = !(tr->tail_factor > 1.0) && tr->pace_assumed > 1.0;
    sp->launch_tail_step_ns = out->corrected_step_ns;
    if (out->corrected_step_ns > lw->replay_corrected_ns)
      sp->launch_tail_per_step_ns = out->corrected_step_ns - lw->replay_corrected_ns;
    /* Launch overhead is idle time: no more than the step without the tracer leaves idle (the
     * GPU's busy time per step as traced: the tracer does not slow the GPU). The replay without
     * the launch gaps can end below the GPU's busy time where kernels on several streams run
     * side by side once nothing spaces their launches (GPU run 122's speech model: a packed
     * bidirectional LSTM on two pairs of streams, 9% overlapped in the trace; the replay's
     * saving 84 ms a step where 54 were idle without the tracer and 42 measured untraced);
     * its what-if keeps that, the class's time does not. */
    uint64_t busy = sp->per_step_ns[CLS_COMPUTE] + sp->per_step_ns[CLS_COMMUNICATION] +
                    sp->per_step_ns[CLS_COPY];
    uint64_t idle = out->corrected_step_ns > busy ? out->corrected_step_ns - busy : 0;
    if (sp->launch_tail_per_step_ns > idle) sp->launch_tail_per_step_ns = idle;
  }
  /* an assumed pace is a guess at the host's own: the point again at the measured tails' 5th and
   * 95th percentiles, the replay's host that much faster or slower (gr->gain on the assumed
   * factor) */
  if (sp->launch_tail_assumed && !tr->pace_given && gr->gain == 1.0) {
    const double q[2] = {TAIL_ASSUMED_P95, TAIL_ASSUMED_P05};
    uint64_t v[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
      gr->gain = q[k] / tr->pace_assumed;
      edits_clear(w, ed);
      ed->corrected = 1;
      replay(w, gr, ed);
      uint64_t base = replay_step(w, gr, first, next, ss->count);
      edits_apply(w, st, CLS_LAUNCH_OVERHEAD, sp->first_ns, sp->last_ns, ed);
      replay(w, gr, ed);
      uint64_t lo = replay_step(w, gr, first, next, ss->count);
      v[k] = base > lo ? base - lo : 0;
      /* (idle time at that pace at most, as the point) */
      uint64_t busy = sp->per_step_ns[CLS_COMPUTE] + sp->per_step_ns[CLS_COMMUNICATION] +
                      sp->per_step_ns[CLS_COPY];
      if (v[k] > (base > busy ? base - busy : 0)) v[k] = base > busy ? base - busy : 0;
    }
    gr->gain = 1.0;
    /* around the point, and no higher than the recorded gaps less CUPTI's measured cost (the
     * range's top without the tracer): where the host barely matters (a GPU-bound step) the
     * replays differ by their own jitter */
    uint64_t pt = sp->launch_tail_per_step_ns, lo = v[0] < v[1] ? v[0] : v[1],
             hi = v[0] < v[1] ? v[1] : v[0], top = sp->launch_corrected_per_step_ns;
    if (top < pt) top = pt;
    sp->launch_assumed_lo_per_step_ns = lo < pt ? lo : pt;
    sp->launch_assumed_hi_per_step_ns = hi < pt ? pt : hi > top ? top : hi;
  }
  /* a loop at its producer's pace runs at that pace without the tracer too (loader_bound); the
   * launch gaps' point above keeps the replay's own step: it is the gaps' untraced time */
  if (sp->producer_wait > 0 && !sp->producer_traced && sp->loader_bound_ns > out->corrected_step_ns)
    out->corrected_step_ns = sp->loader_bound_ns;
  /* (docs/CLASSIFICATION.md, "The producer's pace") the waits of such a loop without the
   * tracer: its pace is the producer's, traced or not, and the tracer's cost on the launches
   * between the batches comes out of the wait for the next one; so the wait untraced is that
   * pace less the step without the waits (data starvation's what-if). GPU run 127's holdout_io
   * `w` (2 worker processes, a launch-bound step): 25.8 ms a step traced, 37.5 by the pace, 39.1
   * measured untraced (run 126's: 32.0, 37.6, 40.7) */
  if (sp->producer_wait > 0 && !sp->producer_traced && out->replay_ok) {
    uint64_t fed = whatif_of(out, CLS_DATA_STARVATION)->best_ns,
             own = sp->per_step_ns[CLS_DATA_STARVATION];
    uint64_t w = out->corrected_step_ns > fed ? out->corrected_step_ns - fed : 0;
    sp->starved_untraced_per_step_ns = w > own ? w : own;
  }
  ed->loads_lo = ed->loads_hi = 0;
  free(first);
  free(next);
}

/* The CLS_TAIL_THREADS threads of ti with the most traced intervals, by that count (ties by tid).
 */
static void tail_threads_top(const struct tail_info *ti, struct tail_thread *v, size_t *n) {
  *n = 0;
  for (size_t k = 0; k < ti->nthreads; k++) {
    const struct tail_thread *t = &ti->threads[k];
    size_t at = *n;
    while (at > 0 && v[at - 1].ntraced < t->ntraced)
      at--;
    if (at >= CLS_TAIL_THREADS) continue;
    size_t last = *n < CLS_TAIL_THREADS ? *n : CLS_TAIL_THREADS - 1;
    memmove(&v[at + 1], &v[at], (last - at) * sizeof *v);
    v[at] = *t;
    if (*n < CLS_TAIL_THREADS) (*n)++;
  }
}

static int gpu_run(struct world *w, size_t gi, struct graph *gr, struct edits *ed,
                   struct cls_gpu *out) {
  const struct gpu_ix *g = &w->g[gi];
  struct gstate st;
  memset(&st, 0, sizeof st);
  st.carry_site = NONE;
  st.w = w;
  st.gi = gi;
  out->host = g->host;
  out->device = g->device;
  out->window_ns = w->t1 - w->t0;
  /* name, processes, counts. The inputs and threads with work here and the counts were made by
   * world_streams' passes over the operations (the threads, the kernels joined and those shorter
   * than their call where each operation's call is read): no pass per GPU here */
  const uint8_t *seen_in = &w->gpu_input[gi * w->nin];
  const uint8_t *seen_thread = &w->gpu_thread[gi * w->nthreads];
  uint8_t *seen_cupti = calloc(w->nin ? w->nin : 1, 1);
  if (!seen_cupti) return -1;
  out->kernels_joined = g->kernels_joined;
  out->kernels_shorter_than_launch = g->kernels_shorter;
  out->launches_joined = g->launches_joined;
  out->launches_waited = g->launches_waited;
  for (size_t i = 0; i < w->nin; i++) {
    out->launch_blocking |= seen_in[i] && w->launch_blocking[i];
    if (seen_in[i]) out->env |= w->in[i].env;
  }
  out->kernels = g->kernels;
  out->kernel_ns = g->kernel_ns;
  out->memcpys = g->memcpys;
  out->memsets = g->memsets;
  out->tracer.tail_factor = out->tracer.tail_factor_long = 1.0;
  for (size_t i = 0; i < w->nin; i++) {
    out->processes += seen_in[i];
    const struct tail_info *ti = world_tail_pace(w, i);
    if (seen_in[i] && ti->calls && !ti->ignored && !out->tracer.tail_calls) {
      out->tracer.tail_calls = ti->calls;
      out->tracer.tail_taken = ti->taken;
      out->tracer.tail_mid = ti->mid;
      out->tracer.tail_ns = ti->span_ns;
      out->tracer.tail_traced_ns = ti->traced_ns;
      out->tracer.tail_untraced_ns = ti->untraced_ns;
      out->tracer.tail_ntraced = ti->ntraced;
      out->tracer.tail_nuntraced = ti->nuntraced;
      out->tracer.tail_factor = ti->assumed ? 1.0 : ti->factor; /* taken: no pace measured */
      out->tracer.tail_long_traced_ns = ti->long_traced_ns;
      out->tracer.tail_long_untraced_ns = ti->long_untraced_ns;
      out->tracer.tail_nlong_traced = ti->nlong_traced;
      out->tracer.tail_nlong_untraced = ti->nlong_untraced;
      out->tracer.tail_factor_long = ti->factor_long;
      if (!ti->assumed) tail_threads_top(ti, out->tracer.tail_threads, &out->tracer.tail_nthreads);
    }
    if (seen_in[i] && ti->assumed && !out->tracer.pace_assumed &&
        (!out->tracer.tail_calls || out->tracer.tail_taken)) {
      out->tracer.pace_assumed = ti->factor;
      out->tracer.pace_traced_ns = ti->traced_ns;
      out->tracer.pace_ntraced = ti->ntraced;
      out->tracer.pace_given = w->opt.host_slowdown_given;
      out->tracer.tail_ignored = ti->ignored;
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
    const struct thread *th = &w->threads[t]; /* its calls summed by call_category */
    out->tracer.calls += th->n;
    out->tracer.hook_ns += th->hook_ns;
    if (w->in[th->in].cupti && th->submits) {
      out->tracer.cupti_calls += th->submits;
      out->tracer.cupti_ns += th->submits * w->cupti_ns[th->in];
      seen_cupti[th->in] = 1;
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
        out->tracer.probe_hooked_ns = probe->shmem;
        out->tracer.probe_api_off_ns = probe->regs;
        out->tracer.hook_launch_ns = probe_hook_ns(probe);
        out->tracer.api_launch_ns = probe_api_ns(probe);
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
    if (pattern_steps(w, gi, &ss, sp->detail, sizeof sp->detail, sp->marks)) return -1;
    if (ss.count) {
      sp->source = "pattern";
      cand_add(w, gi, sp,
               strstr(sp->detail, "synchronizing")           ? "sync"
               : strstr(sp->detail, "end of each optimizer") ? "optimizer"
               : strstr(sp->detail, "host-to-device copies") ? "copies"
                                                             : "pattern",
               &ss, sp->detail);
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
        kd = dist;
      }
      /* no kernel runs once an iteration: the steps found, grouped by k where the loop's
       * iterations hold k of them */
      uint64_t tol = want / 10 ? want / 10 : 1;
      size_t gk = 0;
      struct step_set gs = {0};
      /* (a window of a longer trace holds its share of the N: not grouped) */
      int windowed = w->opt.t0 || w->opt.t1;
      if (kd > tol && !windowed && steps_grouped(w, gi, &ss, want, &gs, &gk)) return -1;
      uint64_t gd = gs.count > want ? gs.count - want : want - gs.count;
      if (gs.count && gd < kd) {
        cand_add(w, gi, sp, "grouped", &gs, sp->detail);
        step_set_free(&ss);
        ss = gs;
        sp->source = "grouped";
        char was[sizeof sp->detail];
        snprintf(was, sizeof was, "%s", sp->detail);
        snprintf(sp->detail, sizeof sp->detail,
                 "--steps %llu: every %zu steps of the pattern as one, from where the GPU waits "
                 "longest before them (%.80s)",
                 (unsigned long long)want, gk, was);
      } else {
        step_set_free(&gs);
      }
    }
  }
  sp->count = ss.count;
  sp->warmup = ss.count ? ss.warmup : 0;
  sp->trailing = ss.count ? ss.trailing : 0;
  sp->paused = ss.count ? ss.paused : 0;
  sp->cycle = ss.count ? ss.cycle : 0;
  sp->uncycled = ss.count ? ss.uncycled : 0;
  st.long_gap = w->opt.long_gap_ns;
  if (ss.count) {
    uint64_t *d = malloc(ss.count * sizeof *d);
    if (!d) {
      step_set_free(&ss);
      return -1;
    }
    for (size_t k = 0; k < ss.count; k++)
      d[k] = w->ops[g->lo + ss.next_op[k]].s - w->ops[g->lo + ss.first_op[k]].s;
    uint64_t med = median(d, ss.count, 0);
    /* a loop whose pace is bimodal (a quarter of its steps over 4 times the median: a
     * DataLoader's workers finishing their batches together, each second step waiting 590 ms
     * against 35, GPU run 129) waits for its batches in its long steps: the third quartile, so
     * that those waits are classified as any gap, not as host phases (steps.c step_max) */
    size_t over = 0;
    for (size_t k = 0; k < ss.count; k++)
      over += d[k] > 4 * med;
    if (4 * over >= ss.count) med = select_u64(d, ss.count, (3 * ss.count) / 4);
    free(d);
    /* with periodic work (steps.cycle) a phase is longer than that many cycles: the loop's
     * periodic wait (a loader's epoch start, 600 ms against 25 ms steps in GPU run 80) is the
     * loop's own, classified as any gap */
    if (ss.cycle) med *= ss.cycle;
    if (med && med * LONG_GAP_STEPS < st.long_gap) st.long_gap = med * LONG_GAP_STEPS;
  }

  /* the sweep and the sums */
  /* the loop's frees: from the iteration before the first step on (its warm-up iteration frees
   * what the first step allocates again) */
  if (ss.count) {
    uint64_t a = w->ops[g->lo + ss.first_op[0]].s, b = w->ops[g->lo + ss.next_op[0]].s;
    st.steps_lo = a > b - a ? a - (b - a) : 1;
  }
  /* per input, the longest an operation here waited from its call's end (world_streams) */
  st.queue_ns = &w->gpu_queue[gi * w->nin];
  st.lead_op = g->lo;
  st.rop = g->lo;
  st.rend = INT64_MIN;
  uint64_t *rqueue = NULL;
  if (gr && gr->ok) { /* the sweep reads the replay without the tracer (the lost lead) */
    edits_clear(w, ed);
    ed->corrected = 1;
    replay(w, gr, ed); /* (ed->loads_lo = loads_hi = 0: the recorded one-time loads too) */
    st.rt = gr->t;
    /* and the queue's depth there: a host the tracer slowed got less far ahead than it would
     * have (GPU run 67's ViT step, launch-bound traced, the host 1.76x slower) */
    rqueue = malloc((w->nin ? w->nin : 1) * sizeof *rqueue);
    if (rqueue) {
      memcpy(rqueue, st.queue_ns, w->nin * sizeof *rqueue);
      for (size_t j = g->lo; j < g->hi; j++) {
        size_t c = nix(w->ops[j].call);
        if (c == NONE) continue;
        int64_t d = sat_sub(gr->t[OS(j)], gr->t[CE(c)]);
        if (d > 0 && (uint64_t)d > rqueue[w->ops[j].in]) rqueue[w->ops[j].in] = (uint64_t)d;
      }
      st.queue_ns = rqueue;
    }
  }
  int rc = sweep(&st);
  free(rqueue);
  size_t pre = !rc && ss.count ? prefetched_steps(w, &st, g, &ss) : 0;
  if (pre) {
    memmove(ss.first_op, ss.first_op + pre, (ss.count - pre) * sizeof *ss.first_op);
    memmove(ss.next_op, ss.next_op + pre, (ss.count - pre) * sizeof *ss.next_op);
    ss.count -= pre;
    ss.warmup += pre;
    sp->count = ss.count;
    sp->warmup = ss.warmup;
    sp->prefetched = pre;
    size_t len = strlen(sp->detail);
    snprintf(sp->detail + len, sizeof sp->detail - len,
             "; %zu step%s on batches the loader had ready before the loop left out", pre,
             pre == 1 ? "" : "s");
  }
  uint8_t *keep = !rc && ss.count ? malloc(ss.count) : NULL;
  size_t fresh = keep ? shape_warmup_steps(w, g, &ss, keep) : 0;
  if (fresh) {
    uint64_t tnew = 0, trep = 0;
    size_t m = 0;
    for (size_t q = 0; q < ss.count; q++) {
      uint64_t d = w->ops[g->lo + ss.next_op[q]].s - w->ops[g->lo + ss.first_op[q]].s;
      if (!keep[q]) {
        tnew += d;
        continue;
      }
      trep += d;
      ss.first_op[m] = ss.first_op[q];
      ss.next_op[m++] = ss.next_op[q];
    }
    sp->shape_new = fresh;
    sp->shape_new_step_ns = tnew / fresh;
    ss.count = m;
    sp->count = m;
    size_t len = strlen(sp->detail);
    snprintf(sp->detail + len, sizeof sp->detail - len,
             "; %zu step%s on an input shape met for the first time left out (%.1f ms each "
             "against %.1f)",
             fresh, fresh == 1 ? "" : "s", (double)tnew / (double)fresh / 1e6,
             (double)trep / (double)m / 1e6);
  }
  free(keep);
  out->tracer.lead_ns = st.lead_ns;
  out->lost_lead_ns = st.lost_lead_ns;
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
    uint64_t sum[CLS_COUNT] = {0}, shared[CLS_COUNT] = {0}, lcorr = 0, lfloor = 0, tracer = 0,
             total = 0, copy_host = 0, copy_pageable = 0, other_host = 0, lead = 0, rtrip = 0,
             gil = 0, stacks = 0;
    for (size_t q = 0; q < ss.count; q++) {
      uint64_t a = w->ops[g->lo + ss.first_op[q]].s;
      uint64_t b = w->ops[g->lo + ss.next_op[q]].s;
      total += b - a;
      seg_sum(&st, &k, a, b, sum, shared, &lcorr, &lfloor, &tracer, &copy_host, &copy_pageable,
              &other_host, &lead, &rtrip, &gil, &stacks);
      if (!q) sp->first_ns = a;
      sp->last_ns = b;
    }
    sp->span_first_ns = sp->first_ns;
    sp->span_last_ns = sp->last_ns;
    if (ss.cycle && ss.span_hi > ss.span_lo && g->lo + ss.span_hi < g->hi) {
      sp->span_first_ns = w->ops[g->lo + ss.span_lo].s;
      sp->span_last_ns = w->ops[g->lo + ss.span_hi].s;
    }
    sp->step_ns = total / ss.count;
    for (int c = 0; c < CLS_COUNT; c++) {
      sp->per_step_ns[c] = sum[c] / ss.count;
      sp->per_step_shared_ns[c] = shared[c] / ss.count;
    }
    sp->launch_corrected_per_step_ns = lcorr / ss.count;
    sp->launch_floor_per_step_ns = lfloor / ss.count;
    sp->copy_host_per_step_ns = copy_host / ss.count;
    sp->copy_pageable_per_step_ns = copy_pageable / ss.count;
    if (sum[CLS_COPY_STALL]) {
      size_t nst = 0;
      uint64_t stns = 0;
      staged_copies(&st, sp->first_ns, sp->last_ns, &nst, &stns);
      sp->copy_stall_copies = nst;
      sp->copy_stall_copy_ns = nst ? stns / nst : 0;
    }
    sp->other_host_per_step_ns = other_host / ss.count;
    sp->stacks_per_step_ns = stacks / ss.count;
    sp->lost_lead_per_step_ns = lead / ss.count;
    sp->roundtrip_per_step_ns = rtrip / ss.count;
    sp->loader_wait_per_step_ns = gil / ss.count;
    sp->tracer_per_step_ns = tracer / ss.count;
    struct pace pc;
    if (pace_iterations(w, gi, &ss, &out->tracer, &pc)) rc = -1;
    gpu_whatif(w, gr, ed, &st, &ss, &pc, out);
    pace_free(&pc);
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
  samp_free(&st);
  free(st.cap_n);
  free(st.cap_k);
  if (st.own) u64map_free(st.own);
  free(st.own);
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
  for (size_t i = 0; i < nin; i++) /* the inputs' host calls in one form (classify.h) */
    w.hcall |= in[i].hcall != NULL;
  for (size_t i = 0; i < nin && w.hcall; i++)
    if (!in[i].hcall && in[i].td->kind[SLK_HOST].n) return -1;
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
    ed.host_thread = calloc(w.nthreads ? w.nthreads : 1, 1);
    if (!ed.piece_cut || !ed.call_cut || !ed.nowait || !ed.op_zero || !ed.op_min || !ed.op_graph ||
        !ed.host_thread)
      rc = -1;
    ed.marked = 1; /* not cleared yet */
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
  u64map_free(&ed.fed);
  u64map_free(&ed.less);
  free(ed.piece_cut);
  free(ed.call_cut);
  free(ed.nowait);
  free(ed.op_zero);
  free(ed.op_min);
  free(ed.op_graph);
  free(ed.host_thread);
  u64map_free(&ed.keep_site);
  graph_free(&gr);
  world_free(&w);
  if (rc) cls_result_free(res);
  return rc;
}

/* Steps from the repeating pattern of GPU work or from NVTX ranges (steps.h). */
#include "steps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "radix.h"

void step_set_free(struct step_set *s) {
  free(s->first_op);
  free(s->next_op);
  memset(s, 0, sizeof *s);
}

struct occ {
  uint32_t sym;
  size_t i;
};

static int cmp_occ(const void *pa, const void *pb) {
  const struct occ *a = pa, *b = pb;
  if (a->sym != b->sym) return a->sym < b->sym ? -1 : 1;
  return a->i < b->i ? -1 : a->i > b->i;
}

static int cmp_size(const void *pa, const void *pb) {
  size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
  return a < b ? -1 : a > b;
}

/* v[0..n) ascending: a radix sort where there are many (qsort and its comparisons were a fifth
 * of `slack report` on a long trace whose steps the pattern rule finds), else qsort */
static void sort_sizes(size_t *v, size_t n) {
  _Static_assert(sizeof(size_t) == sizeof(uint64_t), "size_t is 64 bits");
  if (n < 64) { /* an insertion sort: most symbols occur a few times, each a qsort call */
    for (size_t i = 1; i < n; i++) {
      size_t x = v[i], j = i;
      for (; j && v[j - 1] > x; j--)
        v[j] = v[j - 1];
      v[j] = x;
    }
    return;
  }
  if (radix_sort_u64((uint64_t *)v, n)) qsort(v, n, sizeof *v, cmp_size);
}

struct cand {
  uint32_t sym;
  size_t lo, hi;   /* its occurrences: occ[lo..hi) */
  size_t period;   /* most common distance */
  size_t accepted; /* distances within tolerance */
  uint64_t cover;  /* GPU time of the accepted steps */
  uint64_t gap;    /* median idle gap before its accepted occurrences */
  uint64_t dmax;   /* longest accepted step (4 times the median) */
  uint64_t t_lo;   /* start of its first accepted step */
  uint64_t t_hi;   /* end of its last accepted step */
  int h2d;
  int in; /* covers enough of the loop to be its step (steps_from_pattern) */
};

static int within(size_t d, size_t p) {
  size_t tol = p / 20;
  return d + tol >= p && d <= p + tol;
}

/* The longest time a step may take (a "step" across a long pause is not one): 4 times the median
 * of v (n steps' times, reordered). Where a quarter of them or more take longer, the loop's own
 * pace is bimodal, not paused: a DataLoader's 2 workers finishing their batches together, a step
 * with a batch ready and the next waiting for both (GPU run 129, recorded whole: 35 and 590 ms
 * in turn, 13 of 28 iterations read as pauses and the loop as launch-bound): 4 times the third
 * quartile. */
static uint64_t step_max(uint64_t *v, size_t n) {
  uint64_t m = select_u64(v, n, n / 2) * 4 + 1;
  size_t over = 0;
  for (size_t k = 0; k < n; k++)
    over += v[k] > m;
  if (over * 4 >= n) m = select_u64(v, n, (3 * n) / 4) * 4 + 1;
  return m;
}

/* Period, accepted steps and coverage of one symbol's occurrences o[0..c). dist: scratch. */
static void measure(struct cand *cd, const struct occ *o, size_t c, const uint64_t *start,
                    const uint64_t *gap_before, size_t *dist, uint64_t *gaps) {
  size_t nd = c - 1;
  for (size_t k = 0; k < nd; k++)
    dist[k] = o[k + 1].i - o[k].i;
  sort_sizes(dist, nd);
  size_t best = 0, best_n = 0;
  for (size_t k = 0; k < nd;) {
    size_t j = k;
    while (j < nd && dist[j] == dist[k])
      j++;
    if (j - k >= best_n) { /* ties: the longer distance */
      best_n = j - k;
      best = dist[k];
    }
    k = j;
  }
  cd->period = best;
  cd->dmax = 0;
  cd->accepted = 0;
  cd->cover = 0;
  cd->t_lo = cd->t_hi = 0;
  /* steps also last about as long as each other: a "step" across a long pause is not one */
  size_t ng = 0;
  for (size_t k = 0; k < nd; k++)
    if (within(o[k + 1].i - o[k].i, best)) gaps[ng++] = start[o[k + 1].i] - start[o[k].i];
  if (!ng) return;
  cd->dmax = select_u64(gaps, ng, ng / 2) * 4 + 1;
  ng = 0;
  for (size_t k = 0; k < nd; k++) {
    size_t d = o[k + 1].i - o[k].i;
    if (!within(d, best) || start[o[k + 1].i] - start[o[k].i] > cd->dmax) continue;
    if (!cd->accepted++) cd->t_lo = start[o[k].i];
    cd->t_hi = start[o[k + 1].i];
    cd->cover += start[o[k + 1].i] - start[o[k].i];
    gaps[ng++] = gap_before ? gap_before[o[k].i] : 0;
  }
  if (ng) {
    cd->gap = select_u64(gaps, ng, ng / 2);
  } else {
    cd->gap = 0;
  }
}

/* warm-up: leading steps much longer than the median step (lazy loading, autotuning, allocator
 * growth) are not the steady state. The median is the smaller of all the steps' and the last
 * half's: a loop whose batches change shape warms up once per new shape (kernel selection,
 * cuDNN's runtime-compiled attention), and the first pass over 12 lengths was half of the steps
 * of GPU run 68's trace, 150-560 ms each against 20-28 ms after it. `tmp` holds out->count
 * values. */
static void trim_warmup(struct step_set *out, const uint64_t *start, uint64_t *tmp) {
  if (out->count < 3) return;
  size_t half = out->count / 2;
  for (size_t k = half; k < out->count; k++)
    tmp[k - half] = start[out->next_op[k]] - start[out->first_op[k]];
  uint64_t med_tail = select_u64(tmp, out->count - half, (out->count - half) / 2);
  for (size_t k = 0; k < out->count; k++)
    tmp[k] = start[out->next_op[k]] - start[out->first_op[k]];
  uint64_t med = select_u64(tmp, out->count, out->count / 2);
  if (med_tail < med) med = med_tail;
  size_t skip = 0;
  while (skip + 2 < out->count &&
         (start[out->next_op[skip]] - start[out->first_op[skip]]) * 2 > med * 3)
    skip++;
  if (!skip) return;
  memmove(out->first_op, out->first_op + skip, (out->count - skip) * sizeof *out->first_op);
  memmove(out->next_op, out->next_op + skip, (out->count - skip) * sizeof *out->next_op);
  out->count -= skip;
  out->warmup = skip;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

/* An iteration before the anchor's first occurrence f whose anchor was another kernel (the
 * first optimizer step creates its state with other kernels): 1 when the trace holds one.
 * Where an iteration starts relative to its anchor comes from the last one: the operations from
 * the last occurrence to the end of the trace (fewer than a step: the loop ended the trace) are
 * the part of an iteration from its anchor on, so an iteration's part before its anchor is the
 * rest of the period, and the iteration of the anchor at f began that much earlier, at e. The
 * operations before e are an iteration when they run nine in ten of the kernels and copies
 * that the step from f runs (an iteration may hold more operations than a step: the kernels
 * that create the optimizer's state), looking back at most two periods; a model's
 * initialisation (parameter copies, random fills) before the loop does not. */
static int first_iteration(const uint32_t *sym, size_t n, size_t f, size_t last, size_t period) {
  size_t tail = n - last; /* the last anchor and what follows it */
  if (!period || tail > period || f + period > n) return 0;
  size_t pre = period - tail;
  if (f < pre + period - period / 10) return 0;
  size_t e = f - pre, b = e > 2 * period ? e - 2 * period : 0;
  uint32_t *step = malloc(period * sizeof *step);
  unsigned char *seen = calloc(period, 1);
  if (!step || !seen) {
    free(step);
    free(seen);
    return 0;
  }
  memcpy(step, sym + f, period * sizeof *step);
  qsort(step, period, sizeof *step, cmp_u32);
  size_t nd = 0; /* the step's distinct symbols */
  for (size_t i = 0; i < period; i++)
    if (!nd || step[i] != step[nd - 1]) step[nd++] = step[i];
  for (size_t i = b; i < e; i++) {
    const uint32_t *h = bsearch(&sym[i], step, nd, sizeof *step, cmp_u32);
    if (h) seen[h - step] = 1;
  }
  size_t got = 0;
  for (size_t k = 0; k < nd; k++)
    got += seen[k];
  free(step);
  free(seen);
  /* the anchor itself never occurs before f */
  return nd > 1 && got * 10 >= (nd - 1) * 9;
}

/* The loop's iteration when the longest period is a multiple of it (docs/CLASSIFICATION.md,
 * "Steps"): a log line read every 10th iteration (GPU run 54: a .item() copy once per 10
 * iterations made steps of 10), batches whose shapes cycle through 4 (kernels that differ with
 * the shapes made steps of 4). A shorter period p, the most common among the symbols covering
 * at least 80% of the best coverage with period / p about a whole number k >= 2, is the
 * iteration when nine in ten of the distinct symbols of one step of `period` operations occur
 * in every block of p operations of it (one miss allowed at the blocks' edges). An inner loop
 * within an iteration fails it: 300 blocks of 4 tiny ops and, once per iteration, the batch's
 * copy and an add are 4 symbols of 6 (the ops1200 probe), an LSTM's time steps leave the
 * iteration's embedding and head out (on the H200 traces: the hidden-sync loop's 51 of 52
 * and 65 of 66 symbols, the LSTM's 5 of 7, ops1200's 3 of 5, the launch storm's 1 of 5). A
 * block of fewer than LOOP_MIN_OPS operations is an inner loop's body, not an iteration of a
 * loop that trains or serves a model (forward, backward, optimizer: 332 and 360 operations
 * there). Returns p, or 0 to keep `period`. */
#define LOOP_MIN_OPS 16
static size_t loop_period(const struct cand *cd, size_t nc, const struct occ *o,
                          const uint32_t *sym, const uint8_t *flags, size_t n, size_t period) {
  size_t sub = 0, votes = 0, i0 = SIZE_MAX, np = 0;
  uint64_t i0_cover = 0;
  size_t *per = malloc((nc ? nc : 1) * sizeof *per); /* the whole divisors, one per symbol */
  if (!per) return 0;
  for (size_t k = 0; k < nc; k++) {
    const struct cand *c = &cd[k];
    if (!c->in) continue;
    if (c->period == period && c->cover > i0_cover) { /* a step to look into */
      i0_cover = c->cover;
      i0 = o[c->lo].i;
    }
    /* (a block shorter than LOOP_MIN_OPS is no iteration: one layer's kernels, voted by each of
     * them, would outvote the iteration inside a period of two) */
    if (c->period < LOOP_MIN_OPS || c->period >= period) continue;
    size_t r = (period + c->period / 2) / c->period;
    if (r >= 2 && within(c->period * r, period)) per[np++] = c->period;
  }
  sort_sizes(per, np);
  for (size_t k = 0; k < np;) { /* the most common; ties: the longer (sorted: the later) */
    size_t j = k;
    while (j < np && per[j] == per[k])
      j++;
    if (j - k >= votes) {
      votes = j - k;
      sub = per[k];
    }
    k = j;
  }
  free(per);
  if (sub < LOOP_MIN_OPS || i0 == SIZE_MAX || i0 + period > n) return 0;
  size_t blocks = period / sub;
  uint32_t *u = malloc(period * sizeof *u);
  if (!u) return 0;
  memcpy(u, sym + i0, period * sizeof *u);
  qsort(u, period, sizeof *u, cmp_u32);
  size_t nd = 0;
  for (size_t i = 0; i < period; i++)
    if (!nd || u[i] != u[nd - 1]) u[nd++] = u[i];
  size_t *in = calloc(nd, sizeof *in), *last = malloc(nd * sizeof *last);
  size_t every = 0, opt_blocks = SIZE_MAX; /* the fewest blocks an optimizer's kernel ran in */
  if (in && last) {
    for (size_t k = 0; k < nd; k++)
      last[k] = SIZE_MAX;
    for (size_t i = 0; i < blocks * sub; i++) {
      const uint32_t *h = bsearch(&sym[i0 + i], u, nd, sizeof *u, cmp_u32);
      size_t k = (size_t)(h - u), b = i / sub;
      if (last[k] != b) {
        last[k] = b;
        in[k]++;
      }
    }
    for (size_t k = 0; k < nd; k++)
      if (in[k] + (blocks >= 4) >= blocks) every++;
    /* the blocks each optimizer kernel ran in, over the whole step (the operations past the
     * last whole block are the last block's); in and last reused */
    for (size_t k = 0; flags && k < nd; k++) {
      in[k] = 0;
      last[k] = SIZE_MAX;
    }
    for (size_t i = 0; flags && i < period; i++) {
      if (!(flags[i0 + i] & STEP_OP_OPTIMIZER)) continue;
      size_t k = (size_t)((const uint32_t *)bsearch(&sym[i0 + i], u, nd, sizeof *u, cmp_u32) - u);
      size_t b = i / sub < blocks ? i / sub : blocks - 1;
      if (last[k] != b) in[k]++;
      last[k] = b;
    }
    for (size_t k = 0; flags && k < nd; k++)
      if (in[k] && in[k] < opt_blocks) opt_blocks = in[k];
  }
  free(in);
  free(last);
  free(u);
  /* Gradient accumulation: the micro-batches repeat every kernel of the forward and backward
   * passes, and the optimizer's step (multi-tensor kernels: torch's foreach and fused
   * optimizers, Apex's) runs once per iteration. Where an optimizer kernel ran in at most half
   * the blocks, the blocks are micro-batches and the longest period is the loop's iteration
   * (CPU test test_steps_accumulation). A log line every 10th iteration or batches whose shapes
   * cycle leave the optimizer in every block. Where no symbol runs once per iteration (GPU run
   * 66's ResNet-50), the longest period is the micro-batch: cls_steps.c's optimizer_steps. */
  if (opt_blocks != SIZE_MAX && opt_blocks * 2 <= blocks) return 0;
  return nd && every * 10 >= nd * 9 ? sub : 0;
}

/* Which candidates cover enough of the loop to be its step (cand.in): those covering at least
 * 80% of the best coverage, and a longer period that recurs fewer times where, between its
 * first accepted step and the end of its last, it covers at least 80% of what the best symbol
 * covers there, and that stretch holds at least half of the best coverage, and four in five of
 * its occurrences' distances are its steps. A loop of a few
 * long iterations loses a whole iteration at each end of the trace against a symbol that
 * recurs within them: the last one, which nothing after it ends, and a first one that ran
 * more than 4 times as long (warm-up) and was not accepted; with 12 requests of 48 tokens
 * (GPU run 72's generation loop, the first request 4.9 times the others) the requests covered
 * 73% of what the tokens did, 100% over their own stretch. Returns -1 when out of memory. */
static int mark_in(struct cand *cd, size_t nc, const struct occ *o, const uint64_t *start,
                   uint64_t best_cover) {
  const struct cand *b = NULL;
  for (size_t k = 0; k < nc; k++) {
    cd[k].in = cd[k].cover * 5 >= best_cover * 4;
    if (cd[k].cover == best_cover && !b) b = &cd[k];
  }
  /* the best symbol's accepted steps: their starts, and the coverage before each */
  uint64_t *ts = malloc((b->accepted + 1) * sizeof *ts);
  uint64_t *cum = malloc((b->accepted + 1) * sizeof *cum);
  if (!ts || !cum) {
    free(ts);
    free(cum);
    return -1;
  }
  size_t na = 0;
  uint64_t sum = 0;
  for (size_t k = b->lo; k + 1 < b->hi; k++) {
    uint64_t dt = start[o[k + 1].i] - start[o[k].i];
    if (!within(o[k + 1].i - o[k].i, b->period) || dt > b->dmax || na == b->accepted) continue;
    ts[na] = start[o[k].i];
    cum[na++] = sum;
    sum += dt;
  }
  cum[na] = sum;
  for (size_t k = 0; k < nc; k++) {
    struct cand *c = &cd[k];
    if (c->in || c->period <= b->period || c->cover * 2 < best_cover) continue;
    /* a symbol that only some iterations run (a kernel a batch of another shape adds), whose
     * occurrences happen to fall a few iterations apart a few times, is no iteration: four in
     * five of its occurrences' distances make its steps (tests/test_steps_random.c: 3 steps of
     * 370 operations, 5 iterations each, beside 21 of 74, and the loop cut into blocks of 64) */
    if (c->accepted * 5 < (c->hi - c->lo - 1) * 4) continue;
    /* the best symbol's steps starting in [t_lo, t_hi) */
    size_t lo = 0, hi = na;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (ts[mid] < c->t_lo)
        lo = mid + 1;
      else
        hi = mid;
    }
    size_t a = lo;
    hi = na;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (ts[mid] < c->t_hi)
        lo = mid + 1;
      else
        hi = mid;
    }
    uint64_t there = cum[lo] - cum[a];
    c->in = c->cover * 5 >= there * 4;
  }
  free(ts);
  free(cum);
  return 0;
}

int steps_from_pattern(const uint32_t *sym, const uint64_t *start, const uint64_t *gap_before,
                       const uint8_t *flags, size_t n, struct step_set *out) {
  memset(out, 0, sizeof *out);
  if (n < 4) return 0;
  struct occ *o = malloc(n * sizeof *o);
  size_t *dist = malloc(n * sizeof *dist);
  uint64_t *gaps = malloc(n * sizeof *gaps);
  struct cand *cd = malloc(n * sizeof *cd);
  if (!o || !dist || !gaps || !cd) {
    free(o);
    free(dist);
    free(gaps);
    free(cd);
    return -1;
  }
  /* by symbol, then place: as (symbol << 32 | place) radix-sorted where places fit 32 bits */
  uint64_t *ky = n < (1ull << 32) ? malloc(n * sizeof *ky) : NULL;
  if (ky) {
    for (size_t i = 0; i < n; i++)
      ky[i] = (uint64_t)sym[i] << 32 | i;
  }
  if (ky && !radix_sort_u64(ky, n)) {
    for (size_t i = 0; i < n; i++)
      o[i] = (struct occ){(uint32_t)(ky[i] >> 32), (size_t)(ky[i] & 0xffffffffu)};
  } else {
    for (size_t i = 0; i < n; i++)
      o[i] = (struct occ){sym[i], i};
    qsort(o, n, sizeof *o, cmp_occ);
  }
  free(ky);
  size_t nc = 0;
  uint64_t best_cover = 0;
  for (size_t lo = 0; lo < n;) {
    size_t hi = lo;
    while (hi < n && o[hi].sym == o[lo].sym)
      hi++;
    if (hi - lo >= 4) {
      struct cand *c = &cd[nc];
      c->sym = o[lo].sym;
      c->lo = lo;
      c->hi = hi;
      c->h2d = flags ? flags[o[lo].i] & STEP_OP_H2D : 0;
      measure(c, o + lo, hi - lo, start, gap_before, dist, gaps);
      if (c->accepted >= 3 && c->period >= 1) {
        if (c->cover > best_cover) best_cover = c->cover;
        nc++;
      }
    }
    lo = hi;
  }
  int rc = 0;
  if (nc && best_cover && mark_in(cd, nc, o, start, best_cover)) rc = -1;
  if (!rc && nc && best_cover) {
    /* the longest period among the symbols that cover enough of the loop (mark_in) */
    size_t period = 0;
    for (size_t k = 0; k < nc; k++)
      if (cd[k].in && cd[k].period > period) period = cd[k].period;
    size_t sub = loop_period(cd, nc, o, sym, flags, n, period);
    size_t looped = sub ? period : 0;
    if (sub) period = sub;
    /* the step's first operation: longest gap before it; a host-to-device copy if its gap is
     * at least half the longest */
    const struct cand *pick = NULL, *pick_h2d = NULL;
    uint64_t max_gap = 0;
    for (size_t k = 0; k < nc; k++) {
      const struct cand *c = &cd[k];
      if (!c->in || c->period != period) continue;
      if (!pick || c->gap > pick->gap || (c->gap == pick->gap && c->cover > pick->cover)) pick = c;
      if (c->h2d && (!pick_h2d || c->gap > pick_h2d->gap ||
                     (c->gap == pick_h2d->gap && c->cover > pick_h2d->cover)))
        pick_h2d = c;
      if (c->gap > max_gap) max_gap = c->gap;
    }
    if (pick_h2d && pick_h2d->gap * 2 >= max_gap) pick = pick_h2d;
    if (pick) {
      /* room for every step of the period: more than the pattern accepted where the loop's pace
       * is bimodal (step_max below) */
      size_t room = pick->hi > pick->lo ? pick->hi - pick->lo : 1;
      out->first_op = malloc(room * sizeof *out->first_op);
      out->next_op = malloc(room * sizeof *out->next_op);
      if (!out->first_op || !out->next_op) {
        step_set_free(out);
        rc = -1;
      } else {
        /* the longest step: the pattern's (4 times the median), or where a quarter of the
         * steps take longer, the bimodal loop's (step_max) */
        uint64_t dmax = pick->dmax;
        size_t ns = 0;
        for (size_t k = pick->lo; k + 1 < pick->hi; k++)
          if (within(o[k + 1].i - o[k].i, pick->period)) ns++;
        uint64_t *dts = ns ? malloc(ns * sizeof *dts) : NULL;
        if (dts) {
          ns = 0;
          for (size_t k = pick->lo; k + 1 < pick->hi; k++)
            if (within(o[k + 1].i - o[k].i, pick->period))
              dts[ns++] = start[o[k + 1].i] - start[o[k].i];
          dmax = step_max(dts, ns);
          free(dts);
        }
        for (size_t k = pick->lo; k + 1 < pick->hi; k++) {
          size_t d = o[k + 1].i - o[k].i;
          if (!within(d, pick->period)) continue;
          uint64_t dt = start[o[k + 1].i] - start[o[k].i];
          if (dt > dmax) {
            /* a step's operations with a pause in their time (the host late for one launch):
             * an iteration, not a step. Not when the pause is more than 4 times the longest
             * step (16 median ones): time outside production windows, not recorded, where
             * any number of iterations ran; a long checkpoint is not counted either */
            if (out->count && dt / 4 <= dmax) out->paused++;
            continue;
          }
          out->first_op[out->count] = o[k].i;
          out->next_op[out->count] = o[k + 1].i;
          out->count++;
        }
        out->period = pick->period;
        out->looped = looped;
        out->anchor = pick->sym;
        /* leading iterations that did more (first-step allocations, autotuning): the anchor's
         * occurrences before the first step, each one to two steps' worth of operations before
         * the next, are warm-up iterations too */
        size_t lead = 0, f = out->count ? out->first_op[0] : 0;
        for (size_t k = pick->hi; out->count && k > pick->lo;) {
          size_t a = o[--k].i; /* the anchor's occurrences before the first step, latest first */
          if (a >= f) continue;
          if ((f - a) * 20 < pick->period * 19 || f - a > pick->period * 2) break;
          lead++;
          f = a;
        }
        if (out->count && first_iteration(sym, n, f, o[pick->hi - 1].i, pick->period)) lead++;
        trim_warmup(out, start, gaps);
        out->warmup += lead;
        /* each occurrence of the anchor in the loop is one iteration: the steps between them
         * are one fewer; the last one's iteration is counted, not timed (nothing after it marks
         * its end) */
        if (out->count) out->trailing = 1;
      }
    }
  }
  free(o);
  free(dist);
  free(gaps);
  free(cd);
  return rc;
}

int steps_from_ranges(const uint64_t *rs, const uint64_t *re, size_t nr, const uint64_t *launch,
                      const uint64_t *start, size_t n, struct step_set *out) {
  memset(out, 0, sizeof *out);
  if (nr < 2) return 0;
  size_t *first = malloc(nr * sizeof *first);
  if (!first) return -1;
  for (size_t k = 0; k < nr; k++)
    first[k] = (size_t)-1;
  size_t lo = 0; /* the ranges starting at or before the last launch: a cursor, since the
                  * launches come nearly in time order (the operations' order) */
  for (size_t i = 0; i < n; i++) {
    uint64_t t = launch[i];
    if (t == UINT64_MAX) continue;
    /* the last range starting at or before t: lo of them start at or before it (rs ascends),
     * walked to from the last launch's where near, else searched */
    int steps = 0;
    while (lo < nr && rs[lo] <= t && steps < 8)
      lo++, steps++;
    while (lo > 0 && rs[lo - 1] > t && steps < 8)
      lo--, steps++;
    if ((lo < nr && rs[lo] <= t) || (lo > 0 && rs[lo - 1] > t)) {
      size_t hi = nr;
      lo = 0;
      while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rs[mid] <= t)
          lo = mid + 1;
        else
          hi = mid;
      }
    }
    if (!lo) continue;
    size_t k = lo - 1;
    if (t >= re[k]) continue;
    if (first[k] == (size_t)-1 || i < first[k]) first[k] = i;
  }
  out->first_op = malloc(nr * sizeof *out->first_op);
  out->next_op = malloc(nr * sizeof *out->next_op);
  if (!out->first_op || !out->next_op) {
    free(first);
    step_set_free(out);
    return -1;
  }
  size_t prev = (size_t)-1;
  for (size_t k = 0; k < nr; k++) {
    if (first[k] == (size_t)-1) continue;
    out->range_used++;
    if (prev != (size_t)-1 && first[k] > prev) {
      out->first_op[out->count] = prev;
      out->next_op[out->count] = first[k];
      out->count++;
    }
    prev = first[k];
  }
  free(first);
  uint64_t *tmp = malloc((out->count ? out->count : 1) * sizeof *tmp);
  if (!tmp) {
    step_set_free(out);
    return -1;
  }
  trim_warmup(out, start, tmp);
  free(tmp);
  return 0;
}

/* loose: within a third of the median either way (anchors that mark iterations whose batches
 * change shape: the kernels the libraries pick, and so their number, change with the shape) */
static int near(size_t d, size_t p, int loose) {
  return loose ? d * 3 >= p * 2 && d * 2 <= p * 3 : within(d, p);
}

int steps_from_anchors(const size_t *anchor, size_t na, const uint64_t *start, size_t n, int how,
                       struct step_set *out) {
  memset(out, 0, sizeof *out);
  int loose = how & STEPS_LOOSE;
  if (na < 4) return 0;
  size_t *d = malloc((na - 1) * sizeof *d);
  if (!d) return -1;
  size_t nd = 0;
  for (size_t k = 0; k + 1 < na; k++)
    if (anchor[k + 1] > anchor[k] && anchor[k + 1] < n) d[nd++] = anchor[k + 1] - anchor[k];
  if (nd < 3) {
    free(d);
    return 0;
  }
  sort_sizes(d, nd);
  size_t med = d[nd / 2];
  free(d);
  /* steps also last about as long as each other: not one across a pause (the loop's end and an
   * exit's copy 4.8 s later, 693 operations on: resnet_seed-c.slk); 4 times the median time of
   * the steps whose counts agree, as the pattern's measure() */
  uint64_t *dt = malloc(na * sizeof *dt);
  if (!dt) return -1;
  size_t nt = 0;
  for (size_t k = 0; k + 1 < na; k++)
    if (anchor[k + 1] > anchor[k] && anchor[k + 1] < n &&
        near(anchor[k + 1] - anchor[k], med, loose))
      dt[nt++] = start[anchor[k + 1]] - start[anchor[k]];
  uint64_t tmax = UINT64_MAX;
  if (nt) tmax = step_max(dt, nt);
  free(dt);
  out->first_op = malloc(na * sizeof *out->first_op);
  out->next_op = malloc(na * sizeof *out->next_op);
  uint64_t *tmp = malloc(na * sizeof *tmp);
  if (!out->first_op || !out->next_op || !tmp) {
    free(tmp);
    step_set_free(out);
    return -1;
  }
  /* the loop's first iteration has no anchor before it (nothing synchronized yet): the
   * operations before the first anchor are a step when they are as many as a step's */
  int timed = 0; /* a step of the steady state taken (none yet: leading ones are warm-up) */
  if (anchor[0] > 0 && !(how & STEPS_STARTS) && near(anchor[0], med, loose)) {
    out->first_op[0] = 0;
    out->next_op[0] = anchor[0];
    out->count = 1;
    timed = start[anchor[0]] - start[0] <= tmax;
  }
  for (size_t k = 0; k + 1 < na; k++) {
    if (anchor[k + 1] <= anchor[k] || anchor[k + 1] >= n) continue;
    if (!near(anchor[k + 1] - anchor[k], med, loose)) continue;
    /* a longer one is an iteration with a pause in its time, counted and not timed, unless
     * over 4 times as long (time outside the loop), as in steps_from_pattern; the leading ones
     * before the first step within it are the warm-up's (trim_warmup below) */
    uint64_t dt = start[anchor[k + 1]] - start[anchor[k]];
    if (timed && dt > tmax) {
      if (dt / 4 <= tmax) out->paused++;
      continue;
    }
    if (dt <= tmax) timed = 1;
    out->first_op[out->count] = anchor[k];
    out->next_op[out->count] = anchor[k + 1];
    out->count++;
  }
  /* four in five of the intervals are steps, or iterations with a pause (counted: a loop of a
   * few shapes met for the first time all through its start, each 5x its step in a library's
   * set-up, GPU run 157's; their marks had found no steps) */
  if (out->count < 3 || (out->count + out->paused) * 5 < nd * 4) {
    free(tmp);
    step_set_free(out);
    return 0;
  }
  out->period = med;
  trim_warmup(out, start, tmp);
  free(tmp);
  /* the last anchor starts the loop's last iteration when a step's worth of operations follow */
  size_t last = anchor[na - 1];
  if (out->count && out->next_op[out->count - 1] == last && last < n &&
      ((how & STEPS_STARTS) || near(n - last, med, loose)))
    out->trailing = 1; /* (an anchor that starts each iteration starts the last one too) */
  return 0;
}

/* 1 when nine in ten of the distinct symbols of sym[b0..b1) occur in sym[a0..a1); -1 (memory) */
static int holds(const uint32_t *sym, size_t a0, size_t a1, size_t b0, size_t b1) {
  size_t na = a1 - a0, nb = b1 - b0;
  uint32_t *u = malloc((na + nb) * sizeof *u + 1);
  if (!u) return -1;
  uint32_t *v = u + na;
  memcpy(u, sym + a0, na * sizeof *u);
  memcpy(v, sym + b0, nb * sizeof *v);
  qsort(u, na, sizeof *u, cmp_u32);
  qsort(v, nb, sizeof *v, cmp_u32);
  size_t nd = 0, got = 0;
  for (size_t i = 0; i < nb; i++) {
    if (i && v[i] == v[i - 1]) continue;
    nd++;
    got += bsearch(&v[i], u, na, sizeof *u, cmp_u32) != NULL;
  }
  free(u);
  return got * 10 >= nd * 9;
}

int steps_time_cycles(const uint32_t *sym, const uint64_t *start, size_t n, struct step_set *ss) {
  if (ss->count < 3 || ss->cycle || ss->anchor == UINT32_MAX || !ss->period) return 0;
  size_t f = ss->first_op[0], m = 0;
  for (size_t i = f; i < n; i++)
    m += sym[i] == ss->anchor;
  if (m < 6) return 0;
  size_t *at = malloc(m * sizeof *at);
  uint64_t *dt = malloc(m * sizeof *dt), *srt = malloc(m * sizeof *srt);
  int rc = 0;
  if (!at || !dt || !srt) {
    rc = -1;
    goto out;
  }
  m = 0;
  for (size_t i = f; i < n; i++)
    if (sym[i] == ss->anchor) at[m++] = i;
  /* the iterations from the first timed step on, while each holds a step's operations */
  size_t np = 0;
  while (np + 1 < m && within(at[np + 1] - at[np], ss->period)) {
    dt[np] = start[at[np + 1]] - start[at[np]];
    srt[np] = dt[np];
    np++;
  }
  if (np < 6) goto out;
  uint64_t med = select_u64(srt, np, np / 2), lmin = UINT64_MAX, lmax = 0;
  /* the long ones (over 4 median steps, the pattern's pause) at every kc-th place exactly */
  size_t nl = 0, first = 0, last = 0, kc = 0;
  for (size_t j = 0; j < np; j++) {
    if (dt[j] <= med * 4) continue;
    if (nl == 1)
      kc = j - last;
    else if (nl > 1 && j - last != kc)
      goto out;
    if (!nl) first = j;
    last = j;
    nl++;
    if (dt[j] < lmin) lmin = dt[j];
    if (dt[j] > lmax) lmax = dt[j];
  }
  /* two at least, none missing before the first or after the last, alike (the same work each
   * time: within 4x of each other) */
  if (nl < 2 || kc < 2 || first >= kc || last + kc < np || lmax > lmin * 4) goto out;
  size_t a0 = first + 1 >= kc ? first + 1 - kc : 0, b = last + kc < np ? last + kc : np;
  size_t mm = (b - a0) / kc;
  if (mm < 2) goto out;
  size_t a = b - mm * kc;
  size_t *fo = malloc(mm * kc * sizeof *fo), *no = malloc(mm * kc * sizeof *no);
  if (!fo || !no) {
    free(fo);
    free(no);
    rc = -1;
    goto out;
  }
  for (size_t j = a; j < b; j++) {
    fo[j - a] = at[j];
    no[j - a] = at[j + 1];
  }
  /* the iterations the pattern had counted past the contiguous run stay counted, untimed */
  size_t beyond = 0, hi = at[np];
  for (size_t q = 0; q < ss->count; q++)
    if (ss->first_op[q] >= at[np]) {
      beyond++;
      if (ss->next_op[q] > hi) hi = ss->next_op[q];
    }
  free(ss->first_op);
  free(ss->next_op);
  ss->first_op = fo;
  ss->next_op = no;
  ss->count = mm * kc;
  ss->cycle = kc;
  ss->paused = 0;
  ss->uncycled = a + (np - b) + beyond;
  ss->span_lo = at[0];
  ss->span_hi = hi;
out:
  free(at);
  free(dt);
  free(srt);
  return rc;
}

static int periodic_from(const size_t *anchor, size_t na, const uint32_t *sym,
                         const uint64_t *start, size_t n, struct step_set *out);

/* The first iteration's pieces: marks closer than an iteration at the loop's start (the first
 * optimizer step makes its state, AdamW's moments with foreach kernels of their own: runs of 80
 * and 41 operations before iterations of 418 in GPU run 122's nanoGPT loop, which read as "not
 * one mark per iteration" and left its evaluation every 5th iteration out of the steps). Up to
 * PERIODIC_LEAD of them are left out: the loop is looked at from the first mark after them,
 * the operations before it the first iteration's. */
#define PERIODIC_LEAD 4
int steps_periodic(const size_t *anchor, size_t na, const uint32_t *sym, const uint64_t *start,
                   size_t n, struct step_set *out) {
  memset(out, 0, sizeof *out);
  if (na < 6) return 0;
  int rc = periodic_from(anchor, na, sym, start, n, out);
  if (rc || out->count) return rc;
  size_t *d = malloc((na - 1) * sizeof *d);
  if (!d) return -1;
  for (size_t j = 0; j + 1 < na; j++)
    d[j] = anchor[j + 1] > anchor[j] ? anchor[j + 1] - anchor[j] : 0;
  sort_sizes(d, na - 1);
  size_t med = d[(na - 1) / 2], lead = 0;
  free(d);
  while (lead < na - 1 && lead <= PERIODIC_LEAD && anchor[lead + 1] > anchor[lead] &&
         (anchor[lead + 1] - anchor[lead]) * 3 < med * 2)
    lead++;
  if (!lead || lead > PERIODIC_LEAD || na - lead < 6) return 0;
  return periodic_from(anchor + lead, na - lead, sym, start, n, out);
}

static int periodic_from(const size_t *anchor, size_t na, const uint32_t *sym,
                         const uint64_t *start, size_t n, struct step_set *out) {
  memset(out, 0, sizeof *out);
  size_t nd = na - 1;
  for (size_t j = 0; j < nd; j++)
    if (anchor[j + 1] <= anchor[j] || anchor[j + 1] >= n) return 0;
  size_t *d = malloc(nd * sizeof *d);
  if (!d) return -1;
  for (size_t j = 0; j < nd; j++)
    d[j] = anchor[j + 1] - anchor[j];
  sort_sizes(d, nd);
  size_t med = d[nd / 2];
  free(d);
  /* the long intervals' places: every k-th exactly */
  size_t nl = 0, first = 0, lastl = 0, k = 0;
  for (size_t j = 0; j < nd; j++) {
    size_t dj = anchor[j + 1] - anchor[j];
    if (dj * 3 < med * 2) return 0; /* shorter than an iteration: not one mark per iteration */
    if (dj * 2 <= med * 3) continue;
    if (!nl)
      first = j;
    else if (nl == 1)
      k = j - lastl;
    else if (j - lastl != k)
      return 0;
    lastl = j;
    nl++;
  }
  /* and from the first interval to the last: none missing after the last, nor before the first
   * but in the loop's first cycle, whose iterations may run before the periodic work's first
   * (an evaluation at every 5th iteration but the 0th) or be warm-up iterations (a CUDA graph's
   * capture runs the step 3 times eagerly first: GPU run 137's nanoGPT graph form, 7 plain
   * intervals before its first evaluation); they are left out of the whole cycles */
  if (nl < 2 || k < 2 || first >= 2 * k || lastl + k < nd) return 0;
  /* each long one is an iteration and more: it runs the kernels of the iteration before it, and
   * the short ones are alike (a mixed-precision step whose scaler, clipping and optimizer runs
   * split one iteration into a long stretch and short ones is not: GPU run 58's CUDA-graph
   * form, 815 and twice 145 operations); looked at in the first few cycles */
  for (size_t j = first, c = 0; j <= lastl && c < 4; j += k, c++) {
    size_t p = j ? j - 1 : j + 1; /* a short one beside it */
    int h = holds(sym, anchor[j], anchor[j + 1], anchor[p], anchor[p + 1]);
    if (h > 0 && k > 2 && j + 3 < na) /* the two short ones after it */
      h = holds(sym, anchor[j + 1], anchor[j + 2], anchor[j + 2], anchor[j + 3]);
    if (h <= 0) return h;
  }
  out->first_op = malloc(nd * sizeof *out->first_op);
  out->next_op = malloc(nd * sizeof *out->next_op);
  uint64_t *tmp = malloc(nd * sizeof *tmp);
  if (!out->first_op || !out->next_op || !tmp) {
    free(tmp);
    step_set_free(out);
    return -1;
  }
  for (size_t j = 0; j < nd; j++) {
    out->first_op[j] = anchor[j];
    out->next_op[j] = anchor[j + 1];
  }
  out->count = nd;
  trim_warmup(out, start, tmp);
  free(tmp);
  size_t skip = out->warmup;
  /* k consecutive intervals from a hold one long one when first - (k - 1) <= a <= lastl */
  size_t a0 = first + 1 >= k ? first + 1 - k : 0;
  if (a0 < skip) a0 = skip;
  size_t b = lastl + k < nd ? lastl + k : nd;
  size_t m = b > a0 ? (b - a0) / k : 0;
  if (!m || m * k < 3) {
    step_set_free(out);
    return 0;
  }
  size_t a = b - m * k;
  /* a leading cycle over 1.5 times the median cycle is warm-up too (the first validation pass
   * selects its kernels for new shapes and starts its loader: 700 ms against 300 after it in
   * GPU run 71), while more than two cycles are left */
  uint64_t *ct = malloc(m * sizeof *ct), med_c = 0;
  if (!ct) {
    step_set_free(out);
    return -1;
  }
  for (size_t i = 0; i < m; i++) {
    size_t f = a + i * k - skip, l = a + (i + 1) * k - 1 - skip;
    ct[i] = start[out->next_op[l]] - start[out->first_op[f]];
  }
  uint64_t first_c = ct[0];
  med_c = select_u64(ct, m, m / 2);
  free(ct);
  while (m > 2 && first_c * 2 > med_c * 3) {
    out->warmup += k;
    a += k;
    m--;
    first_c = start[out->next_op[a + k - 1 - skip]] - start[out->first_op[a - skip]];
  }
  memmove(out->first_op, out->first_op + (a - skip), m * k * sizeof *out->first_op);
  memmove(out->next_op, out->next_op + (a - skip), m * k * sizeof *out->next_op);
  out->count = m * k;
  out->uncycled = (a - skip - (out->warmup - skip)) + (nd - b);
  out->span_lo = anchor[out->warmup]; /* the iterations after the warm-up's, uncycled ones too */
  out->span_hi = anchor[nd];
  out->cycle = k;
  out->period = med;
  /* the loop's first iteration ends at the first mark (its start unmarked: the set-up before
   * it): counted with the warm-up where a step's worth of operations ran before it */
  if (anchor[0] * 10 >= med * 9) out->warmup++;
  return 0;
}

/* Steps per GPU (cls_internal.h; the rules in docs/CLASSIFICATION.md "Steps"): NVTX ranges, the
 * repeating pattern (steps.c), synchronizing calls, and the user's --steps / --step-kernel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cls_internal.h"
#include "frames.h"
#include "join.h"
#include "radix.h"
#include "u64map.h"

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

int marker_steps(const struct world *w, size_t gi, struct step_set *ss, char *detail, size_t dlen) {
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
    for (size_t j = g->lo; j < g->hi; j++) { /* the calls' starts from the dense array */
      const struct op *o = &w->ops[j];
      launch[j - g->lo] = o->in == m[best_lo].in ? w->op_call_s[j] : UINT64_MAX;
      ostart[j - g->lo] = o->s;
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

/* Steps anchored at per-iteration marks against the pattern's: the same unit (periods within
 * 10%) found more often, by a tenth (the pattern keeps only the steps whose operations it counts
 * within 5%: a loop whose batches change shape runs other kernels, and other numbers of them,
 * in each; GPU run 68's encoder on 12 lengths kept 18 of 24 iterations). Counted with their
 * warm-up steps. */
static int same_unit_more(const struct step_set *a, const struct step_set *p) {
  return a->period * 10 >= p->period * 9 && a->period * 10 <= p->period * 11 &&
         (a->count + a->warmup) * 10 > (p->count + p->warmup) * 11;
}

/* GPU time the steps of ss span (their first operations' starts to their ends') */
static uint64_t set_cover(const struct step_set *ss, const uint64_t *start) {
  uint64_t c = 0;
  for (size_t k = 0; k < ss->count; k++)
    c += start[ss->next_op[k]] - start[ss->first_op[k]];
  return c;
}

/* The pattern's own anchor, loosely: each occurrence of the symbol that starts the pattern's
 * steps bounds an iteration, whatever the operations between two of them number, within a third
 * of their median (steps_from_anchors, loose). The pattern keeps only the steps whose operations
 * it counts within 5% of its period: a loop whose batches change shape, and with them the
 * kernels a library picks, runs a kernel more or less in some iterations (a model of 25
 * operations an iteration with one more or fewer in a third of them: 13 of 17 iterations
 * counted, tests/test_steps_random.c), and those iterations were neither counted nor timed.
 * They replace the pattern's steps when they are the same unit found a tenth more often
 * (same_unit_more). */
static int anchor_steps(const uint32_t *sym, const uint64_t *start, size_t n, struct step_set *ss,
                        int *loosely) {
  *loosely = 0;
  if (!ss->count || ss->anchor == UINT32_MAX) return 0;
  size_t *anchor = malloc((n ? n : 1) * sizeof *anchor);
  if (!anchor) return -1;
  size_t na = 0;
  for (size_t i = 0; i < n; i++)
    if (sym[i] == ss->anchor) anchor[na++] = i;
  struct step_set hs;
  int rc = steps_from_anchors(anchor, na, start, n, STEPS_LOOSE | STEPS_STARTS, &hs);
  free(anchor);
  if (rc) return -1;
  if (hs.count >= 3 && same_unit_more(&hs, ss)) {
    hs.anchor = ss->anchor;
    hs.looped = ss->looped; /* (the iteration found inside a longer period: still so) */
    step_set_free(ss);
    *ss = hs;
    *loosely = 1;
  } else {
    step_set_free(&hs);
  }
  return 0;
}

static size_t mark_anchors(const uint8_t *flags, size_t n, int src, size_t *anchor, int cut);

/* Whether the optimizer's steps say the synchronizing calls' steps hs are not the loop's
 * iterations: where the optimizer's marks (mark_anchors) are 3 or more, an iteration trains
 * once. A read every k-th iteration (an evaluation's loss, a log line) holds k marks, a tenth of
 * the steps or more holding two or more says so (the first iteration's optimizer step in pieces
 * holds a few); an evaluation between two reads holds none, twice says so
 * (tests/test_steps_random.c: steps of an evaluation and 5 iterations, or evaluations taken as
 * iterations). The marks' rules then find the iterations (mark_steps, steps_periodic). -1: out
 * of memory. */
static int not_iterations(const uint8_t *flags, size_t n, const struct step_set *hs) {
  size_t nm = mark_anchors(flags, n, 0, NULL, 0);
  if (nm < 3 || !hs->count) return 0;
  size_t *m = malloc(nm * sizeof *m);
  if (!m) return -1;
  mark_anchors(flags, n, 0, m, 0);
  size_t none = 0, more = 0, j = 0;
  for (size_t k = 0; k < hs->count; k++) {
    while (j < nm && m[j] < hs->first_op[k])
      j++;
    size_t c = 0;
    for (size_t q = j; q < nm && m[q] < hs->next_op[k]; q++)
      c++;
    none += c == 0;
    more += c > 1;
  }
  free(m);
  return none >= 2 || more * 10 >= hs->count;
}

/* The training loop's iteration is often longer than the repeat of its GPU work (identical
 * layers, a loop of tiny ops): where the thread that launched most of this GPU's work makes a
 * synchronizing call once per iteration (`.item()`, `synchronize()`), those calls bound the
 * steps. They replace the pattern's steps when they are regular (steps_from_anchors) and longer
 * than the pattern's period (or span 10/6 of its time), unless the optimizer's steps say they are
 * not the iterations (not_iterations). *anchored: 1 when they did. */
static int sync_steps(const struct world *w, size_t gi, const uint64_t *start, const uint8_t *flags,
                      struct step_set *ss, int *anchored) {
  const struct gpu_ix *g = &w->g[gi];
  size_t n = g->hi - g->lo;
  *anchored = 0;
  size_t *cnt = calloc(w->nthreads ? w->nthreads : 1, sizeof *cnt);
  /* each operation's launching thread (UINT32_MAX: none) and its call's start, read once (the
   * calls are read out of order: a cache miss each) */
  uint32_t *th = malloc((n ? n : 1) * sizeof *th);
  uint64_t *ls = malloc((n ? n : 1) * sizeof *ls);
  if (!cnt || !th || !ls) {
    free(cnt);
    free(th);
    free(ls);
    return -1;
  }
  size_t top = NONE;
  for (size_t i = 0; i < n; i++) {
    size_t c = nix(w->ops[g->lo + i].call);
    th[i] = UINT32_MAX;
    if (c == NONE) continue;
    const struct call *oc = &w->calls[c];
    size_t t = oc->thread;
    th[i] = oc->thread;
    ls[i] = oc->s;
    cnt[t]++;
    if (top == NONE || cnt[t] > cnt[top]) top = t;
  }
  free(cnt);
  if (top == NONE) {
    free(th);
    free(ls);
    return 0;
  }
  const struct thread *T = &w->threads[top];
  size_t *anchor = malloc((T->n ? T->n : 1) * sizeof *anchor);
  if (!anchor) {
    free(th);
    free(ls);
    return -1;
  }
  size_t na = 0, k = 0;
  for (size_t i = 0; i < n; i++) {
    if (th[i] != top) continue;
    uint64_t launched = ls[i];
    while (k < T->n) {
      const struct call *sc = &w->calls[T->calls[k]];
      if (sc->cat != CAT_SYNC) {
        k++;
        continue;
      }
      if (sc->e > launched) break;
      if (!na || anchor[na - 1] != i) anchor[na++] = i;
      k++;
    }
  }
  free(th);
  free(ls);
  struct step_set hs;
  int rc = steps_from_anchors(anchor, na, start, n, STEPS_LOOSE, &hs);
  free(anchor);
  if (rc) return -1;
  /* not a sync every k-th iteration where the pattern found the iteration inside its longer
   * period (the log line read every 10th step, made by the thread that launches most) */
  size_t m = ss->period ? (hs.period + ss->period / 2) / ss->period : 0;
  int every_kth = ss->count && ss->looped && m >= 2 && hs.period * 20 >= m * ss->period * 19 &&
                  hs.period * 20 <= m * ss->period * 21;
  /* or shorter than the pattern's but spanning 10/6 of its time, as mark_steps takes marks: the
   * pattern's period a repeat of a few iterations that only some of them make (a kernel that a
   * batch of another shape adds, its occurrences three iterations apart four times: 4 steps of
   * 112 operations against 31 of 37 between the reads, tests/test_steps_random.c) */
  uint64_t cp = ss->count ? set_cover(ss, start) : 0;
  int wider = ss->count && set_cover(&hs, start) * 6 > cp * 10;
  int other = hs.count >= 3 ? not_iterations(flags, n, &hs) : 0;
  if (other < 0) {
    step_set_free(&hs);
    return -1;
  }
  if (hs.count >= 3 && (!ss->count || hs.period > ss->period || same_unit_more(&hs, ss) || wider) &&
      !every_kth && !other) {
    step_set_free(ss);
    *ss = hs;
    *anchored = 1;
  } else {
    step_set_free(&hs);
  }
  return 0;
}

/* A run of fewer operations than this is an inner loop's body or a library's handful, not one
 * of a training loop's blocks (steps.c's LOOP_MIN_OPS) */
#define MARK_MIN_OPS 16

static int cmp_sz(const void *pa, const void *pb) {
  size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
  return a < b ? -1 : a > b;
}

/* Gradient accumulation whose optimizer runs no multi-tensor kernel (foreach=False: a few
 * elementwise kernels per parameter, GPU run 68's SGD; the pattern's steps were the 48
 * micro-batches of 12 iterations): the operation counts between the pattern anchor's
 * occurrences repeat every k (2 to 16) of them, not every one, and one count in each cycle,
 * the micro-batch that ends with the optimizer's step, is the longest by at least a tenth of
 * the median count and MARK_MIN_OPS, and only one in the cycle is that long; looked for from
 * the pattern's first step (`from`) on, past the model's set-up. The iteration starts at the
 * occurrence after it: anchor[] gets those (the micro-batch anchors' indices in the
 * operations), *runs their number, *occ the occurrences'; returns the number written. A
 * loop whose batch shapes cycle repeats every k counts too, but its counts differ throughout
 * the cycle (GPU run 68's encoder on 12 lengths: 495 to 655 operations, the longest twice). */
static size_t cycle_anchors(const uint32_t *sym, size_t from, size_t n, uint32_t a, size_t *anchor,
                            size_t *runs, size_t *occ) {
  *runs = *occ = 0;
  size_t m = 0;
  for (size_t i = from; i < n; i++)
    if (sym[i] == a) anchor[m++] = i;
  *occ = m;
  if (m < 8) return 0;
  size_t nd = m - 1, k = 0;
  size_t *d = malloc(nd * sizeof *d), *srt = malloc(nd * sizeof *srt);
  if (!d || !srt) goto none;
  for (size_t j = 0; j < nd; j++)
    srt[j] = d[j] = anchor[j + 1] - anchor[j];
  qsort(srt, nd, sizeof *srt, cmp_sz);
  size_t med = srt[nd / 2];
  for (size_t kk = 1; kk <= 16 && !k; kk++) {
    if (nd < kk * 3) break;
    size_t ok = 0;
    for (size_t j = 0; j + kk < nd; j++) {
      size_t x = d[j], y = d[j + kk], tol = x / 50 > 2 ? x / 50 : 2;
      if (x + tol >= y && x <= y + tol) ok++;
    }
    if (ok * 10 < (nd - kk) * 9) continue;
    if (kk == 1) goto none; /* every micro-batch alike: no cycle */
    k = kk;
  }
  if (!k) goto none;
  /* each place in the cycle by its median count (the first optimizer step, which creates the
   * optimizer's state, differs from the later ones: 1,250 operations against 1,411 there); the
   * longest place ends the iteration */
  size_t at = 0, best = 0, second = 0;
  for (size_t p = 0; p < k; p++) {
    size_t c = 0;
    for (size_t j = p; j < nd; j += k)
      srt[c++] = d[j];
    qsort(srt, c, sizeof *srt, cmp_sz);
    size_t v = srt[c / 2];
    if (v > best) {
      second = best;
      best = v;
      at = p;
    } else if (v > second) {
      second = v;
    }
  }
  if (best < med + med / 10 || best < med + MARK_MIN_OPS || best < second + MARK_MIN_OPS) goto none;
  size_t w = 0;
  for (size_t j = at; j < nd; j += k) /* the occurrence after each long count */
    anchor[w++] = anchor[j + 1];
  free(d);
  free(srt);
  *runs = w;
  return w;
none:
  free(d);
  free(srt);
  return 0;
}

/* Gradient accumulation: each iteration runs the forward and backward passes on k
 * micro-batches, then the optimizer's step once. The pattern repeats every micro-batch, and
 * the optimizer's kernels (flags STEP_OP_OPTIMIZER) run after one in k of its steps. Where they
 * ran after at most half of the pattern's anchors, the loop's iteration starts at the pattern's
 * first anchor after each optimizer step, and those anchors bound the steps when they are
 * regular (steps_from_anchors) and longer than the pattern's period (GPU run 66: a ResNet-50
 * accumulating 4 micro-batches of 1,085 operations each; the pattern's steps were the
 * micro-batches). *done: 1 when they replaced the pattern's. */
static int optimizer_steps(const uint32_t *sym, const uint8_t *flags, const uint64_t *start,
                           size_t n, struct step_set *ss, int *done) {
  *done = 0;
  if (!ss->count) return 0;
  size_t *anchor = malloc((n ? n : 1) * sizeof *anchor);
  if (!anchor) return -1;
  size_t na = 0, occ = 0, runs = 0;
  int pending = 0;
  for (size_t i = 0; i < n; i++) {
    if (flags[i] & STEP_OP_OPTIMIZER) {
      if (!pending) runs++;
      pending = 1;
    } else if (sym[i] == ss->anchor) {
      occ++;
      if (pending) anchor[na++] = i;
      pending = 0;
    }
  }
  if (!runs) na = cycle_anchors(sym, ss->first_op[0], n, ss->anchor, anchor, &runs, &occ);
  struct step_set hs = {0};
  int rc = runs && runs * 2 <= occ ? steps_from_anchors(anchor, na, start, n, STEPS_LOOSE, &hs) : 0;
  /* the first optimizer step ended the loop's first iteration, whose start no anchor marks (a
   * model's set-up runs before it): counted, not timed, where a step's worth of operations
   * ran before the first anchor and more than steps_from_anchors takes as a step of its own */
  if (hs.count && anchor[0] * 10 >= hs.period * 9 && anchor[0] * 2 > hs.period * 3) hs.warmup++;
  free(anchor);
  if (rc) return -1;
  if (hs.count >= 3 && hs.period > ss->period) {
    hs.anchor = ss->anchor;
    step_set_free(ss);
    *ss = hs;
    *done = 1;
  } else {
    step_set_free(&hs);
  }
  return 0;
}

/* The marks of src (0: the first operation after each optimizer run; 1: the first copy of each
 * run of batch copies) in the n operations' flags, into anchor (n at most; NULL: counted only).
 * cut: the operations start at a window's edge, where a copy with fewer than MARK_MIN_OPS
 * operations before it is no mark (it may continue a run the window before holds: copies every
 * 16 launches made a mark of each window's first). Returns their count. */
static size_t mark_anchors(const uint8_t *flags, size_t n, int src, size_t *anchor, int cut) {
  size_t na = 0, since = src && !cut ? SIZE_MAX : 0;
  int in_run = 0;
  for (size_t i = 0; i < n; i++) {
    size_t at = SIZE_MAX;
    if (src == 0) { /* the first operation after each optimizer run */
      /* one run: multi-tensor kernels with fewer than MARK_MIN_OPS others between them (the
       * AMP scaler's unscale, gradient clipping's norms, then the optimizer's step, with a few
       * kernels between them, end one iteration) */
      if (flags[i] & STEP_OP_OPTIMIZER) {
        in_run = 1;
        since = 0;
      } else if (in_run && ++since == MARK_MIN_OPS) {
        at = i + 1 - MARK_MIN_OPS;
        in_run = 0;
      }
    } else if (flags[i] & STEP_OP_H2D) { /* the first copy of each run of batch copies */
      if (since >= MARK_MIN_OPS) at = i;
      since = 0;
    } else if (since != SIZE_MAX) {
      since++;
    }
    if (at != SIZE_MAX) {
      if (anchor) anchor[na] = at;
      na++;
    }
  }
  if (src == 0 && in_run && since) { /* the last run, and what little the loop did after it */
    if (anchor) anchor[na] = n - since;
    na++;
  }
  return na;
}

/* Whether the iterations of periodic work (steps.c steps_periodic) each take a batch from the
 * host: nine in ten of them hold a host-to-device copy. An iteration with an evaluation or a
 * checkpoint after every k-th is a data loop's; an on-policy RL trainer's update, 8 optimizer
 * steps on minibatches of the rollout already on the GPU after each rollout, is the same
 * pattern of marks (one long interval in 8) but its iteration is the rollout and the update
 * (GPU runs 79 and 82's `holdout_rl`: 20 iterations, not 160). */
static int take_batches(const uint8_t *flags, const struct step_set *hs) {
  size_t with = 0;
  for (size_t q = 0; q < hs->count; q++)
    for (size_t i = hs->first_op[q]; i < hs->next_op[q]; i++)
      if (flags[i] & STEP_OP_H2D) {
        with++;
        break;
      }
  return with * 10 >= hs->count * 9;
}

/* Iterations marked in the GPU's work, where the pattern's steps are few or weak: the end of
 * each optimizer step (the first operation after each run of multi-tensor kernels, those fewer
 * than MARK_MIN_OPS operations apart one run), else the
 * start of each batch's copies (the first of each run of host-to-device copies with at least
 * MARK_MIN_OPS other operations since the last copy). A loop whose batches change shape (text
 * padded to each batch's longest, GPU run 68) runs other kernels in each iteration: the
 * pattern finds a kernel sequence inside one (29 operations where an iteration has 495-655) or
 * keeps the iterations whose counts agree. The marks' steps (loose: within a third of their
 * median) replace the pattern's when they span 10/6 of the pattern's GPU time, or are the
 * same unit found a tenth more often (same_unit_more), or are at least twice as long and span
 * 80% of its time (the pattern found a repeat inside the iteration: identical layers, whose
 * count does not change with the shape). Constant shapes: the pattern's steps are the marks'.
 * *done: 1 when they replaced them. */
static int mark_steps(const uint32_t *sym, const uint8_t *flags, const uint64_t *start, size_t n,
                      int periodic_only, struct step_set *ss, int *done) {
  *done = 0;
  size_t *anchor = malloc((n ? n : 1) * sizeof *anchor);
  if (!anchor) return -1;
  for (int src = 0; src < (periodic_only ? 1 : 2) && !*done; src++) {
    size_t na = mark_anchors(flags, n, src, anchor, 0);
    struct step_set hs;
    uint64_t cp = set_cover(ss, start);
    if (src == 0) { /* periodic work between some iterations (steps.c steps_periodic) */
      if (steps_periodic(anchor, na, sym, start, n, &hs)) {
        free(anchor);
        return -1;
      }
      if (hs.count && (!ss->count || set_cover(&hs, start) * 10 >= cp * 8) &&
          take_batches(flags, &hs)) {
        /* the loop's last iteration after the last mark: its optimizer's kernels ran (a mark
         * follows each run that anything follows) */
        for (size_t i = na ? anchor[na - 1] : n; i < n && !hs.trailing; i++)
          hs.trailing = (flags[i] & STEP_OP_OPTIMIZER) != 0;
        hs.anchor = UINT32_MAX;
        step_set_free(ss);
        *ss = hs;
        *done = 1;
        break;
      }
      step_set_free(&hs);
    }
    if (periodic_only) break;
    if (steps_from_anchors(anchor, na, start, n, STEPS_LOOSE, &hs)) {
      free(anchor);
      return -1;
    }
    uint64_t ch = set_cover(&hs, start);
    /* (or a pattern of fewer than 5 steps against 3 times as many marked iterations: a pattern
     * found in a long irregular start, GPU run 120's cuDNN autotuner on 4 new shapes, 15 s of
     * trial kernels, then 26 iterations of 13 ms: 3 steps of 1.75 s of one trial's kernels) */
    int few = ss->count && ss->count + ss->warmup < 5 &&
              hs.count + hs.warmup >= 3 * (ss->count + ss->warmup);
    if (hs.count >= 3 && hs.period >= MARK_MIN_OPS &&
        (!ss->count || cp * 10 < ch * 6 || same_unit_more(&hs, ss) || few ||
         (hs.period >= ss->period * 2 && ch * 10 >= cp * 8))) {
      hs.anchor = UINT32_MAX;
      /* the optimizer's last run marked by what little followed it (mark_anchors: the loop's
       * end, then whatever the program did next, e.g. a synchronize and a read of the losses):
       * the loop's last iteration is counted, not timed, as the pattern's last one (GPU run
       * 121's side-stream prefetcher: its last step held the harness's closing sync, 181 us a
       * step of serialization over 39 steps, a verdict of 2% where the loop had none) */
      if (src == 0 && na && n - anchor[na - 1] < MARK_MIN_OPS && hs.count > 3 &&
          hs.next_op[hs.count - 1] == anchor[na - 1]) {
        hs.count--;
        hs.trailing = 1;
      }
      step_set_free(ss);
      *ss = hs;
      *done = 1 + src;
    } else {
      step_set_free(&hs);
    }
  }
  free(anchor);
  return 0;
}

/* An optimizer step's kernel, by its (mangled or demangled) name: the multi-tensor kernels of
 * torch's foreach and fused optimizers and of Apex (also gradient clipping's and the AMP
 * scaler's foreach kernels, which run once per step too), torch.compile's horizontally fused
 * foreach kernels. */
static int optimizer_kernel(const char *name) {
  return name && (strstr(name, "multi_tensor_apply") || strstr(name, "triton_for_fused"));
}

int pattern_steps(const struct world *w, size_t gi, struct step_set *ss, char *detail, size_t dlen,
                  size_t marks[2]) {
  marks[0] = marks[1] = 0;
  const struct gpu_ix *g = &w->g[gi];
  size_t n = g->hi - g->lo;
  uint32_t *sym = malloc((n ? n : 1) * sizeof *sym);
  uint64_t *start = malloc((n ? n : 1) * sizeof *start);
  uint64_t *gapb = malloc((n ? n : 1) * sizeof *gapb);
  uint8_t *flags = malloc(n ? n : 1);
  struct u64map opt = {0}; /* (input, kernel name id) -> 1 + whether an optimizer's kernel */
  int rc = -1;
  if (!sym || !start || !gapb || !flags) goto out;
  uint64_t frontier = w->t0;
  for (size_t i = 0; i < n; i++) {
    const struct op *o = &w->ops[g->lo + i];
    /* a kernel a graph launched is not the same step's operation as the kernel launched alone
     * (a graph's eager warm-up before its capture) */
    sym[i] = o->sym ^ (o->flags & OPF_GRAPH ? 0x08000000u : 0); /* ids stay far below 2^27 */
    start[i] = o->s;
    gapb[i] = o->s > frontier ? o->s - frontier : 0;
    if (o->e > frontier) frontier = o->e;
    flags[i] = o->h2d ? STEP_OP_H2D : 0;
    if (o->rkind == SLK_KERNEL) {
      uint64_t key = (uint64_t)o->in << 32 | o->sym, v;
      if (!u64map_get(&opt, key, &v)) {
        size_t slot = u64map_add(&opt, key);
        if (slot == (size_t)-1) goto out;
        v = 1 + optimizer_kernel(in_str(w, o->in, o->sym));
        opt.val[slot] = v;
      }
      if (v == 2) flags[i] |= STEP_OP_OPTIMIZER;
    }
  }
  marks[0] = mark_anchors(flags, n, 0, NULL, 1);
  marks[1] = mark_anchors(flags, n, 1, NULL, 1);
  rc = steps_from_pattern(sym, start, gapb, flags, n, ss);
  int loosely = 0;
  if (!rc) rc = anchor_steps(sym, start, n, ss, &loosely);
  int anchored = 0, accumulated = 0;
  if (!rc) rc = sync_steps(w, gi, start, flags, ss, &anchored);
  if (!rc && !anchored) rc = optimizer_steps(sym, flags, start, n, ss, &accumulated);
  int marked = 0;
  if (!rc && !anchored && !accumulated) rc = mark_steps(sym, flags, start, n, 0, ss, &marked);
  /* micro-batches with periodic work between some iterations (an evaluation every k-th optimizer
   * step): the iterations from the optimizer's marks in whole cycles, as without micro-batches
   * (tests/test_steps_random.c: those iterations left neither counted nor timed) */
  else if (!rc && accumulated)
    rc = mark_steps(sym, flags, start, n, 1, ss, &marked);
  /* the pattern's own steps: periodic waits of the loop's that run no operations (steps.h) */
  int windowed = 0;
  for (size_t i = 0; i < w->nin; i++)
    windowed |= w->in[i].td->kind[SLK_WINDOW].n > 2; /* more than one window: gaps between */
  if (!rc && !anchored && !accumulated && !marked && !windowed)
    rc = steps_time_cycles(sym, start, n, ss);
  if (!rc && ss->count && marked) {
    char warm[48] = "";
    if (ss->warmup)
      snprintf(warm, sizeof warm, "; %zu warm-up step%s left out", ss->warmup,
               ss->warmup == 1 ? "" : "s");
    char cyc[128] = "";
    if (ss->cycle)
      snprintf(cyc, sizeof cyc,
               "; every %zu iterations one runs more (periodic work: an evaluation, a "
               "checkpoint), timed in %zu whole cycles",
               ss->cycle, ss->count / ss->cycle);
    snprintf(detail, dlen, "about %zu GPU operations per step, %s%s%s", ss->period,
             marked == 1 ? "from the end of each optimizer step"
                         : "from each batch's host-to-device copies",
             cyc, warm);
  } else if (!rc && ss->count && (accumulated || anchored)) {
    char warm[48] = "";
    if (ss->warmup)
      snprintf(warm, sizeof warm, "; %zu warm-up step%s left out", ss->warmup,
               ss->warmup == 1 ? "" : "s");
    snprintf(detail, dlen, "%zu GPU operations per step, %s%s", ss->period,
             accumulated ? "from the first micro-batch after each optimizer step"
                         : "between synchronizing calls of the launching thread",
             warm);
  } else if (!rc && ss->count) {
    const struct op *o = &w->ops[g->lo + ss->first_op[0]];
    char cyc[128] = "";
    if (ss->cycle)
      snprintf(cyc, sizeof cyc,
               "; one iteration in %zu waits over 4 steps (periodic), %zu whole cycles timed",
               ss->cycle, ss->count / ss->cycle);
    /* a kernel's sym is its name, a copy's holds its copy kind in its low byte (op_make) */
    const char *what = o->rkind == SLK_KERNEL                 ? in_str(w, o->in, o->sym)
                       : o->rkind == SLK_MEMSET               ? "memset"
                       : o->h2d                               ? "memcpy HtoD"
                       : (uint8_t)(o->sym & 0xff) == CPY_DTOH ? "memcpy DtoH"
                                                              : "memcpy";
    char warm[48] = "";
    if (ss->warmup)
      snprintf(warm, sizeof warm, "; %zu warm-up step%s left out", ss->warmup,
               ss->warmup == 1 ? "" : "s");
    char *dm = slack_demangle(what);
    snprintf(detail, dlen, "%s%zu GPU operations per step, starting at %.60s%s%s",
             loosely ? "about " : "", ss->period, dm ? dm : what, cyc, warm);
    free(dm);
  }
out:
  free(sym);
  free(start);
  free(gapb);
  free(flags);
  u64map_free(&opt);
  return rc;
}

/* Step candidates: what each rule finds, kept for the report (cls_steps.cand), and the user's
 * overrides: --step-kernel NAME (steps start at each kernel whose name contains NAME) and
 * --steps N (of every candidate, and of every kernel that runs about N times, the one whose
 * count is closest to N). */
static uint64_t set_step_ns(const struct world *w, size_t gi, const struct step_set *ss) {
  if (!ss->count) return 0;
  const struct gpu_ix *g = &w->g[gi];
  uint64_t a = w->ops[g->lo + ss->first_op[0]].s;
  uint64_t b = w->ops[g->lo + ss->next_op[ss->count - 1]].s;
  return b > a ? (b - a) / ss->count : 0;
}

void cand_add(const struct world *w, size_t gi, struct cls_steps *sp, const char *rule,
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
int kernel_steps(const struct world *w, size_t gi, uint32_t sym, const char *match,
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
    start[i] = o->s;
    if (o->rkind != SLK_KERNEL) continue;
    int hit = sym != UINT32_MAX ? o->sym == sym : strstr(in_str(w, o->in, o->sym), match) != 0;
    if (hit) anchor[na++] = i;
  }
  int rc = steps_from_anchors(anchor, na, start, n, STEPS_LOOSE, ss);
  free(anchor);
  free(start);
  return rc;
}

/* --steps N: every kernel symbol that runs N-1 to N+2 times, anchored; the closest count wins
 * over *best (whose distance is *dist). */
int kernels_near(const struct world *w, size_t gi, uint64_t want, struct step_set *best,
                 uint64_t *dist, char *what, size_t wlen) {
  const struct gpu_ix *g = &w->g[gi];
  struct u64map cnt = {0};
  int rc = 0;
  for (size_t j = g->lo; j < g->hi && !rc; j++) {
    if (w->ops[j].rkind != SLK_KERNEL) continue;
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
      snprintf(what, wlen, "%s", in_str(w, o->in, o->sym)); /* a kernel: sym is its name */
    } else {
      step_set_free(&ks);
    }
  }
  u64map_free(&cnt);
  return rc;
}

/* --steps N where the steps found are k times as many (k >= 2: PPO's update holds 16 optimizer
 * steps, each the pattern's step, GPU run 166): every k consecutive steps as one, their phase
 * the one whose first operations wait longest on the GPU (the median idle before them: the loop's
 * own work between its iterations, a read of what the iteration made, falls there), anchored as
 * any host-anchored steps (warm-up, the last iteration); only where the iterations found are k
 * times N within one of N's. *k: the k used (0: none applies). */
int steps_grouped(const struct world *w, size_t gi, const struct step_set *ss, uint64_t want,
                  struct step_set *out, size_t *kout) {
  memset(out, 0, sizeof *out);
  *kout = 0;
  if (!want || ss->count < 2 * want) return 0;
  size_t k = (size_t)((ss->count + want / 2) / want);
  if (k < 2 || ss->count / k < 3) return 0;
  /* the iterations found are k times N, give or take one of N's (a count off by one): else N
   * is not a multiple of them, and grouping would cut the loop's iterations apart */
  size_t found = ss->count + ss->warmup + ss->trailing + ss->paused + ss->uncycled;
  size_t kn = k * (size_t)want;
  if ((found > kn ? found - kn : kn - found) > k) return 0;
  const struct gpu_ix *g = &w->g[gi];
  size_t n = g->hi - g->lo, per = ss->count / k + 1;
  uint64_t *gap = malloc(per * sizeof *gap), *start = malloc((n ? n : 1) * sizeof *start);
  size_t *anchor = malloc(per * sizeof *anchor);
  if (!gap || !start || !anchor) {
    free(gap);
    free(start);
    free(anchor);
    return -1;
  }
  for (size_t i = 0; i < n; i++)
    start[i] = w->ops[g->lo + i].s;
  size_t best = 0;
  uint64_t bestv = 0;
  for (size_t p = 0; p < k; p++) {
    size_t m = 0;
    for (size_t j = p; j < ss->count; j += k) {
      size_t f = ss->first_op[j];
      if (!f) continue;
      uint64_t end = 0; /* the GPU's last work before it ended */
      for (size_t q = f; q > 0 && q + 64 > f; q--)
        if (w->ops[g->lo + q - 1].e > end) end = w->ops[g->lo + q - 1].e;
      gap[m++] = start[f] > end ? start[f] - end : 0;
    }
    uint64_t v = m ? select_u64(gap, m, m / 2) : 0;
    if (v > bestv) bestv = v, best = p;
  }
  size_t na = 0;
  for (size_t j = best; j < ss->count; j += k)
    anchor[na++] = ss->first_op[j];
  int rc = steps_from_anchors(anchor, na, start, n, STEPS_LOOSE | STEPS_STARTS, out);
  free(gap);
  free(start);
  free(anchor);
  if (!rc && out->count) *kout = k;
  return rc;
}

/* Sum of segment time per class inside [a, b), from segment index *k on (segments and steps are
 * both in time order). */

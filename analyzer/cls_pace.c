/* The loop's iterations in the untraced tail, and the replay's host pace fitted to them
 * (docs/CLASSIFICATION.md, "The untraced tail": "The loop's own iterations").
 *
 * The tail's pace per thread is a median of the times between calls: the usual cycle of a run of
 * launches. An iteration is a sum of such cycles and longer ones, which the tracer slows by more
 * than the median (GPU run 75's trainer, launch-bound: its main thread's calls came 1.22x slower
 * traced by their median, 1.35x by their mean; its step 110.22 ms traced against 65.89 in the
 * tail's own round, where the replay at the medians' pace said 94.46). The tail holds whole
 * iterations of the loop at the untraced pace: they are found here by the calls each traced step
 * makes once, and where the same iterations replayed without the tracer come out slower than the
 * tail's middle half, the replay's calls and short host work run faster (graph.gain) until their
 * median is the tail's. Only faster: the tracer does not make a host faster, and a tail slower
 * than the replay is the machine's drift or something the model misses, which a fitted pace
 * would carry into every what-if. Long stretches stay as traced (cls_replay.c `untraced`). */
#include <math.h>
#include <string.h>

#include "cls_internal.h"
#include "radix.h"

/* iterations matched on each side, at least */
#define PACE_MIN_ITERS 3
/* a key made once in this share of the steps (and of an iteration's keys) */
#define PACE_ONCE_SHARE 0.9
/* an iteration's calls within this share of the steps' median */
#define PACE_CALLS_TOL 0.1
/* the keys an iteration is told by, at most */
#define PACE_MAX_KEYS 512
/* no fit where the replay is this near the iterations' pace */
#define PACE_NEAR 0.02
/* the tail's run of iterations ends at one this many times its median, */
#define PACE_PAUSE 3.0
/* or at PACE_SHIFT_N in a row this far off it */
#define PACE_SHIFT 1.4
#define PACE_SHIFT_N 3
/* the run's median is of its first iterations up to this many */
#define PACE_REF_ITERS 64

struct kstep {
  uint64_t key;
  uint32_t step;
};

static int cmp_kstep(const void *pa, const void *pb) {
  const struct kstep *a = pa, *b = pb;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  return a->step < b->step ? -1 : a->step > b->step;
}

static uint64_t median_u64(uint64_t *v, size_t n) { return select_u64(v, n, n / 2); }

/* The keys' index in a sorted list, NONE where not in it */
static size_t key_at(const uint64_t *keys, size_t n, uint64_t k) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (keys[mid] < k)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && keys[lo] == k ? lo : NONE;
}

/* One side's sequence of calls (the anchor thread's keys and starts): the times between
 * consecutive anchors into d, ok[k] set where that iteration holds the steps' calls (within
 * PACE_CALLS_TOL of `calls` when it is set, and PACE_ONCE_SHARE of the keys once), its calls
 * into ncalls where given; how many. cnt: nkeys counters. */
static size_t iters(const uint64_t *key, const uint64_t *start, size_t n, uint64_t anchor,
                    const uint64_t *keys, size_t nkeys, uint32_t *cnt, uint64_t calls, uint64_t *d,
                    uint8_t *ok, uint64_t *ncalls, size_t *pa) {
  size_t nd = 0, prev = NONE;
  for (size_t k = 0; k < n; k++) {
    if (key[k] != anchor) continue;
    if (prev != NONE) {
      memset(cnt, 0, nkeys * sizeof *cnt);
      size_t once = 0;
      for (size_t q = prev; q < k; q++) {
        size_t at = key_at(keys, nkeys, key[q]);
        if (at != NONE) cnt[at]++;
      }
      for (size_t q = 0; q < nkeys; q++)
        once += cnt[q] == 1;
      uint64_t m = k - prev;
      ok[nd] = (double)once >= PACE_ONCE_SHARE * (double)nkeys &&
               (!calls || fabs((double)m - (double)calls) <= PACE_CALLS_TOL * (double)calls);
      if (ncalls) ncalls[nd] = m;
      if (pa) pa[nd] = prev;
      d[nd++] = start[k] - start[prev];
    }
    prev = k;
  }
  return nd;
}

/* The iterations of d (nd, ok as iters gives them) that hold the steps' calls, moved to its
 * front; how many. */
static size_t keep_ok(uint64_t *d, const uint8_t *ok, size_t nd) {
  size_t m = 0;
  for (size_t k = 0; k < nd; k++)
    if (ok[k]) d[m++] = d[k];
  return m;
}

static uint64_t median_of(const uint64_t *d, size_t n, uint64_t *tmp) {
  memcpy(tmp, d, n * sizeof *d);
  return median_u64(tmp, n);
}

/* The tail's iterations that continue the traced loop, moved to d's front; how many. From the
 * tail's first iteration that holds the steps' calls, while the loop goes on as it was: an
 * iteration that does not hold them alone is passed over (periodic work: an evaluation, a
 * checkpoint), two in a row end the run (the program moved to other work), as does a pause
 * (an iteration PACE_PAUSE times the run's median: a sync, a print, a rebuild) and a change of
 * pace (PACE_SHIFT_N iterations in a row off the run's median by PACE_SHIFT: another phase
 * that makes the same calls, GPU run 49's GPT loop went from 18 to 33-44 ms an iteration
 * where its untraced rounds moved to the next form). tmp: nd values. */
static size_t tail_run(uint64_t *d, const uint8_t *ok, size_t nd, uint64_t *tmp) {
  size_t k = 0, m = 0, off = 0;
  double med = 0;
  while (k < nd && !ok[k])
    k++;
  for (; k < nd; k++) {
    if (!ok[k]) {
      if (k + 1 < nd && ok[k + 1]) continue;
      break;
    }
    if (m >= PACE_MIN_ITERS) {
      /* the run's median (of its first PACE_REF_ITERS: a tail of many short iterations is not
       * sorted again at each) */
      if (m <= PACE_REF_ITERS) med = (double)median_of(d, m, tmp);
      if ((double)d[k] > PACE_PAUSE * med) break;
      if ((double)d[k] > PACE_SHIFT * med || (double)d[k] * PACE_SHIFT < med) {
        if (++off >= PACE_SHIFT_N) {
          m -= off - 1; /* the shifted ones before it */
          break;
        }
      } else
        off = 0;
    }
    d[m++] = d[k];
  }
  return m;
}

void pace_free(struct pace *pc) {
  free(pc->ia);
  free(pc->ib);
  memset(pc, 0, sizeof *pc);
}

int pace_iterations(const struct world *w, size_t gi, const struct step_set *ss,
                    struct cls_tracer *tr, struct pace *pc) {
  memset(pc, 0, sizeof *pc);
  /* a long trace's windows are not fitted (pace_fit): the iterations are said by the last,
   * which holds the tail and the traced iterations nearest it */
  if (w->opt.tail && w->opt.t1) return 0;
  size_t n = ss->count;
  if (n < PACE_MIN_ITERS + 1) return 0;
  const struct gpu_ix *g = &w->g[gi];
  /* the thread that launched the steps' first operations (most of them) */
  size_t *first_call = malloc(n * sizeof *first_call);
  if (!first_call) return -1;
  size_t thread = NONE, votes = 0; /* the majority's, by Boyer and Moore's vote */
  for (size_t k = 0; k < n; k++) {
    first_call[k] = nix(w->ops[g->lo + ss->first_op[k]].call);
    if (first_call[k] == NONE) continue;
    size_t t = w->calls[first_call[k]].thread;
    if (!votes)
      thread = t, votes = 1;
    else if (t == thread)
      votes++;
    else
      votes--;
  }
  size_t same = 0;
  for (size_t k = 0; k < n; k++)
    same += first_call[k] != NONE && w->calls[first_call[k]].thread == thread;
  const struct thread *th = thread != NONE ? &w->threads[thread] : NULL;
  const struct tail_info *ti = th ? world_tail_pace(w, th->in) : NULL;
  if (!th || (double)same < PACE_ONCE_SHARE * (double)n || !ti || !ti->ntc) {
    free(first_call);
    return 0;
  }
  /* the thread's calls in the steps: each step from its first operation's call to its next
   * step's first operation's call */
  int rc = 0;
  size_t cap = th->n > ti->ntc ? th->n : ti->ntc;
  uint64_t *key = malloc(cap * sizeof *key), *start = malloc(cap * sizeof *start);
  struct kstep *ks = malloc(th->n * sizeof *ks);
  size_t *ci = malloc(th->n * sizeof *ci), *pa = malloc(cap * sizeof *pa);
  uint64_t *keys = NULL, *d = NULL, *dm = NULL;
  uint32_t *cnt = NULL;
  uint8_t *ok = NULL;
  size_t m = 0, nks = 0, nkeys = 0;
  if (!key || !start || !ks || !ci || !pa) goto oom;
  size_t q = 0;
  for (size_t k = 0; k < n; k++) {
    size_t a = first_call[k], bop = g->lo + ss->next_op[k];
    size_t b = bop < g->hi ? nix(w->ops[bop].call) : NONE;
    if (a == NONE || b == NONE || w->calls[b].thread != thread) continue;
    uint64_t s0 = w->calls[a].s, s1 = w->calls[b].s;
    while (q < th->n && w->calls[th->calls[q]].s < s0)
      q++;
    for (size_t r = q; r < th->n && w->calls[th->calls[r]].s < s1; r++) {
      const struct cls_host_rec x = call_rec(w, th->calls[r]);
      ks[nks++] = (struct kstep){(uint64_t)x.fn << 32 | x.callsite, (uint32_t)k};
    }
  }
  /* the thread's calls from the first step's start on, in order (the anchors' side traced) */
  for (size_t r = 0; r < th->n; r++) {
    size_t c = th->calls[r];
    if (first_call[0] == NONE || w->calls[c].s < w->calls[first_call[0]].s) continue;
    const struct cls_host_rec x = call_rec(w, c);
    key[m] = (uint64_t)x.fn << 32 | x.callsite;
    ci[m] = c;
    start[m++] = w->calls[c].s;
  }
  /* the keys made exactly once in PACE_ONCE_SHARE of the steps */
  qsort(ks, nks, sizeof *ks, cmp_kstep);
  keys = malloc((nks ? nks : 1) * sizeof *keys);
  if (!keys) goto oom;
  for (size_t a = 0, b; a < nks; a = b) {
    size_t once = 0;
    for (b = a; b < nks && ks[b].key == ks[a].key;) {
      size_t e = b;
      while (e < nks && ks[e].key == ks[a].key && ks[e].step == ks[b].step)
        e++;
      once += e - b == 1;
      b = e;
    }
    if ((double)once >= PACE_ONCE_SHARE * (double)n && nkeys < PACE_MAX_KEYS)
      keys[nkeys++] = ks[a].key;
  }
  if (!nkeys) goto out;
  /* the anchor: the first steps' first call where it is such a key, else the one of those keys
   * the first whole step makes first */
  uint64_t anchor = 0;
  int have = 0;
  {
    const struct cls_host_rec x = call_rec(w, first_call[0]);
    anchor = (uint64_t)x.fn << 32 | x.callsite;
    have = key_at(keys, nkeys, anchor) != NONE;
  }
  for (size_t k = 0; k < m && !have; k++)
    if (key_at(keys, nkeys, key[k]) != NONE) anchor = key[k], have = 1;
  cnt = malloc(nkeys * sizeof *cnt);
  d = malloc((cap + 1) * sizeof *d);
  dm = malloc((cap + 1) * sizeof *dm);
  ok = malloc(cap + 1);
  if (!cnt || !d || !dm || !ok) goto oom;
  /* traced: the iterations' calls, then their times among those of the usual length */
  size_t nd = iters(key, start, m, anchor, keys, nkeys, cnt, 0, d, ok, dm, NULL);
  size_t nok = 0;
  for (size_t k = 0; k < nd; k++)
    if (ok[k]) dm[nok++] = dm[k];
  if (nok < PACE_MIN_ITERS) goto out;
  uint64_t calls = median_u64(dm, nok);
  nd = iters(key, start, m, anchor, keys, nkeys, cnt, calls, d, ok, NULL, pa);
  /* the traced iterations as calls (the replay times them as it times these) */
  pc->ia = malloc((nd ? nd : 1) * sizeof *pc->ia);
  pc->ib = malloc((nd ? nd : 1) * sizeof *pc->ib);
  if (!pc->ia || !pc->ib) goto oom;
  for (size_t k = 0; k < nd; k++) { /* iteration k: from anchor pa[k] to the next one */
    size_t b = pa[k] + 1;
    while (b < m && key[b] != anchor)
      b++;
    if (ok[k] && b < m) {
      pc->ia[pc->n] = ci[pa[k]];
      pc->ib[pc->n++] = ci[b];
    }
  }
  nd = keep_ok(d, ok, nd);
  if (nd < PACE_MIN_ITERS) goto out;
  uint64_t traced = median_u64(d, nd);
  size_t ntr = nd;
  /* the tail: the thread's calls there (ti->tc by thread and start) */
  size_t lo = 0, hi = ti->ntc;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (ti->tc[mid].tid < th->tid)
      lo = mid + 1;
    else
      hi = mid;
  }
  size_t nt = 0;
  for (size_t k = lo; k < ti->ntc && ti->tc[k].tid == th->tid; k++) {
    key[nt] = ti->tc[k].key;
    start[nt++] = ti->tc[k].start;
  }
  nd = iters(key, start, nt, anchor, keys, nkeys, cnt, calls, d, ok, NULL, NULL);
  nd = tail_run(d, ok, nd, dm);
  if (nd < PACE_MIN_ITERS) goto out;
  tr->iter_traced_ns = traced;
  tr->iter_untraced_ns = median_u64(d, nd);
  tr->iter_untraced_lo_ns = select_u64(d, nd, nd / 4);
  tr->iter_untraced_hi_ns = select_u64(d, nd, (3 * nd) / 4);
  pc->untraced_ns = tr->iter_untraced_ns;
  pc->lo_ns = tr->iter_untraced_lo_ns;
  pc->hi_ns = tr->iter_untraced_hi_ns;
  tr->iter_ntraced = ntr;
  tr->iter_nuntraced = nd;
  tr->iter_calls = calls;
  tr->iter_fn = (uint32_t)(anchor >> 32);
  goto out;
oom:
  rc = -1;
out:
  free(first_call);
  free(key);
  free(start);
  free(ks);
  free(keys);
  free(cnt);
  free(d);
  free(dm);
  free(ok);
  free(ci);
  free(pa);
  if (rc || !tr->iter_untraced_ns) pace_free(pc);
  return rc;
}

/* The median time of the traced iterations pc holds in the last replay (its calls' starts) */
static double pace_measure(const struct graph *gr, const struct pace *pc, uint64_t *tmp) {
  size_t n = 0;
  for (size_t k = 0; k < pc->n; k++) {
    int64_t x = sat_sub(gr->t[CS(pc->ib[k])], gr->t[CS(pc->ia[k])]);
    tmp[n++] = x > 0 ? (uint64_t)x : 0;
  }
  return n ? (double)median_u64(tmp, n) : 0;
}

void pace_fit(const struct world *w, struct graph *gr, struct edits *ed, const struct pace *pc,
              struct cls_gpu *out) {
  struct cls_tracer *tr = &out->tracer;
  gr->gain = 1.0;
  tr->gain = 1.0;
  if (!pc->n || !pc->untraced_ns || !out->corrected_step_ns) return;
  uint64_t *tmp = malloc(pc->n * sizeof *tmp);
  if (!tmp) return; /* out of memory: the medians' pace */
  double target = (double)pc->untraced_ns;
  double c1 = pace_measure(gr, pc, tmp); /* the corrected replay's, just run */
  tr->iter_replayed_ns = (uint64_t)c1;
  if (w->opt.tail) {
    /* a window of a long trace (report_window.c): each window would fit its own traced pace to
     * the one tail, and only ever faster; the windows' pace drifts, and so fitted they took GPU
     * run 88's AMP loop to 34.79 ms a step where the trace read whole, not fitted, said 35.33 */
    tr->gain_fit = 3;
    free(tmp);
    return;
  }
  if (w->opt.no_pace_fit) {
    tr->gain_fit = 4;
    free(tmp);
    return;
  }
  if (fabs(c1 - target) <= PACE_NEAR * target ||
      (c1 >= (double)pc->lo_ns && c1 <= (double)pc->hi_ns)) {
    tr->gain_fit = 1; /* the medians' pace gives iterations within the tail's middle half */
    free(tmp);
    return;
  }
  if (c1 < target) {
    /* the tail's iterations slower than the replay's without the tracer: not the tracer's (it
     * does not make a host faster), but the machine's drift or what the model misses (GPU run
     * 56's hidden frees: the replay fitted to them kept the slowness in the frees' what-if,
     * +16% where it was +1.4%) */
    tr->gain_fit = -2;
    free(tmp);
    return;
  }
  /* the replay's iterations are not longer with a faster host */
  double hi = CLS_PACE_GAIN_MAX;
  ed->corrected = 1;
  gr->gain = hi;
  replay(w, gr, ed);
  double end = pace_measure(gr, pc, tmp);
  if (end > target) {
    gr->gain = 1.0; /* out of reach by the host's pace: the model misses something else */
    tr->gain_fit = -1;
    tr->iter_reach_ns = (uint64_t)end;
    free(tmp);
    return;
  }
  /* the false position on the gain's logarithm, Illinois' way (a side kept twice halves its
   * weight): a few replays where bisection took up to 16 */
  double best = gr->gain, bestd = fabs(end - target);
  double xa = 0, fa = c1 - target, xb = log(hi), fb = end - target;
  int side = 0;
  for (int it = 0; it < 16 && bestd > 0.005 * target && fa != fb; it++) {
    double x = xb - fb * (xb - xa) / (fb - fa);
    if (!(x > xa && x < xb)) x = (xa + xb) / 2; /* (rounding) */
    gr->gain = exp(x);
    replay(w, gr, ed);
    double v = pace_measure(gr, pc, tmp), fv = v - target;
    if (fabs(fv) < bestd) best = gr->gain, bestd = fabs(fv);
    if ((fv > 0) == (fa > 0)) { /* the root is above x */
      xa = x, fa = fv;
      if (side == -1) fb /= 2;
      side = -1;
    } else {
      xb = x, fb = fv;
      if (side == 1) fa /= 2;
      side = 1;
    }
  }
  gr->gain = best;
  tr->gain = best;
  tr->gain_fit = 2;
  free(tmp);
}

/* The untraced tail (tail.h). */
#include "tail.h"

#include "hostcalls.h"

#include <math.h>
#include <stdlib.h>

struct tcall {
  uint64_t tid, start, end;
  uint64_t key; /* the call's function and call site: long stretches are compared by it */
  int blocking;
};

struct stretch {
  uint64_t key, ns;
  int tail;
};

static int cmp_stretch(const void *pa, const void *pb) {
  const struct stretch *a = pa, *b = pb;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  if (a->tail != b->tail) return a->tail < b->tail ? -1 : 1;
  return a->ns < b->ns ? -1 : a->ns > b->ns;
}

static int cmp_tcall(const void *pa, const void *pb) {
  const struct tcall *a = pa, *b = pb;
  if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
  return a->start < b->start ? -1 : a->start > b->start;
}

static int cmp_tail_call(const void *pa, const void *pb) {
  const struct tail_call *a = pa, *b = pb;
  if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
  return a->start < b->start ? -1 : a->start > b->start;
}

static int cmp_u64(const void *pa, const void *pb) {
  uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
  return a < b ? -1 : a > b;
}

size_t tail_prefix(const struct cls_hosts *a, uint64_t t) {
  size_t lo = 0, hi = a->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (cls_hosts_start(a, mid) < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* One thread's median interval on one side. */
struct tmed {
  uint64_t tid, ns;
  size_t n;
};

/* The median time between the starts of consecutive non-blocking calls of one thread in
 * h[lo..hi) but h[s0..s1) (closer than TAIL_GAP_NS), over every thread and per thread (*per, by
 * tid, *nper of them: the threads with TAIL_MIN_INTERVALS); the long stretches from a call's end
 * to the thread's next call appended to *st (marked tail). */
static int intervals(const struct cls_hosts *h, size_t lo, size_t hi, size_t s0, size_t s1,
                     int tail, uint64_t *median, size_t *n, struct stretch *st, size_t *nst,
                     struct tmed **per, size_t *nper) {
  *median = 0;
  *n = 0;
  *per = NULL;
  *nper = 0;
  if (hi - lo < 2) return 0;
  struct tcall *c = malloc((hi - lo) * sizeof *c);
  uint64_t *d = malloc((hi - lo) * sizeof *d);
  if (!c || !d) {
    free(c);
    free(d);
    return -1;
  }
  size_t nc = 0;
  for (size_t k = lo; k < hi; k++) {
    if (k >= s0 && k < s1) continue;
    const struct cls_host_rec x = cls_hosts_get(h, k), *r = &x;
    c[nc++] = (struct tcall){r->tid, r->start, r->end > r->start ? r->end : r->start,
                             (uint64_t)r->fn << 32 | r->callsite, slk_host_blocks(r->fn, r->flags)};
  }
  qsort(c, nc, sizeof *c, cmp_tcall);
  size_t m = 0, m0 = 0;
  for (size_t k = 1; k <= nc; k++) {
    if (k == nc || c[k].tid != c[k - 1].tid) { /* the end of thread c[k - 1].tid's calls */
      if (m - m0 >= TAIL_MIN_INTERVALS) {
        struct tmed *v = realloc(*per, (*nper + 1) * sizeof *v);
        if (!v) {
          free(c);
          free(d);
          return -1;
        }
        *per = v;
        qsort(d + m0, m - m0, sizeof *d, cmp_u64);
        v[(*nper)++] = (struct tmed){c[k - 1].tid, d[m0 + (m - m0) / 2], m - m0};
      }
      m0 = m;
      continue;
    }
    if (c[k].start > c[k - 1].end) {
      uint64_t out = c[k].start - c[k - 1].end;
      if (out >= TAIL_GAP_NS && out < TAIL_LONG_MAX_NS)
        st[(*nst)++] = (struct stretch){c[k].key, out, tail};
    }
    if (c[k].blocking || c[k - 1].blocking) continue;
    uint64_t dt = c[k].start - c[k - 1].start;
    if (dt < TAIL_GAP_NS) d[m++] = dt;
  }
  if (m) {
    qsort(d, m, sizeof *d, cmp_u64);
    *median = d[m / 2];
  }
  *n = m;
  free(c);
  free(d);
  return 0;
}

/* The long stretches compared where they end in the same call (function and call site) on both
 * sides, TAIL_MIN_LONG or more of each. A call can end stretches of different kinds (the batch's
 * copy ends the loading of a batch and, at start-up, the building of the model), in other
 * proportions in the tail than in the window, so medians would compare one kind with another.
 * Instead each tail stretch meets the traced stretch at its own rank (the same quantile of that
 * call's stretches): the slowdown is the weighted median of those ratios (each call weighted by
 * its traced count), which a few pairs across kinds do not move; the means of the pairs' two
 * sides are kept to show. 0, or -1 when out of memory. */
struct pair {
  double lr, w; /* log(traced / untraced), weight */
};

static int cmp_pair(const void *pa, const void *pb) {
  const struct pair *a = pa, *b = pb;
  return a->lr < b->lr ? -1 : a->lr > b->lr;
}

static int long_factor(struct stretch *st, size_t n, struct tail_info *ti) {
  qsort(st, n, sizeof *st, cmp_stretch);
  struct pair *pr = malloc((n ? n : 1) * sizeof *pr);
  if (!pr) return -1;
  size_t np = 0;
  double wsum = 0, sum0 = 0, sum1 = 0;
  for (size_t a = 0; a < n;) {
    size_t b = a, m = a;
    while (b < n && st[b].key == st[a].key)
      b++;
    while (m < b && !st[m].tail)
      m++;
    size_t n0 = m - a, n1 = b - m;
    if (n0 >= TAIL_MIN_LONG && n1 >= TAIL_MIN_LONG) {
      double w = (double)n0 / (double)n1;
      for (size_t i = 0; i < n1; i++) {
        size_t j = (size_t)(((double)i + 0.5) * (double)n0 / (double)n1);
        double t0 = (double)st[a + (j < n0 ? j : n0 - 1)].ns, t1 = (double)st[m + i].ns;
        pr[np++] = (struct pair){log(t0 / t1), w};
        wsum += w;
        sum0 += w * t0;
        sum1 += w * t1;
      }
      ti->nlong_traced += n0;
      ti->nlong_untraced += n1;
    }
    a = b;
  }
  if (np) {
    ti->long_traced_ns = (uint64_t)(sum0 / wsum);
    ti->long_untraced_ns = (uint64_t)(sum1 / wsum);
    qsort(pr, np, sizeof *pr, cmp_pair);
    double acc = 0;
    size_t k = 0;
    while (k + 1 < np && acc + pr[k].w < wsum / 2)
      acc += pr[k++].w;
    if (pr[k].lr > 0) ti->factor_long = exp(pr[k].lr);
  }
  free(pr);
  return 0;
}

uint64_t tail_start(const struct trace_data *td, int *taken) {
  const struct trace_array *p = &td->kind[SLK_PROBE];
  uint64_t t = UINT64_MAX;
  *taken = 0;
  for (size_t k = 0; k < p->n; k++)
    if ((p->v[k].flags & SLK_PROBE_DETACHED) && p->v[k].end < t) t = p->v[k].end;
  const struct trace_array *tk = &td->kind[SLK_TAKEN];
  for (size_t k = 0; k < tk->n; k++)
    if (tk->v[k].start < t) {
      t = tk->v[k].start;
      /* how (SLK_TAKEN_*): another client (1), or slack's own CUPTI call stuck (2) */
      *taken = tk->v[k].flags & SLK_TAKEN_STUCK ? (int)SLK_TAKEN_STUCK : (int)SLK_TAKEN_CALLBACKS;
    }
  return t;
}

/* No tail timed the untraced pace: the traced pace of h's first n calls (process and threads, as
 * tail_find times a window's) over the assumed slowdown. Only where TAIL_MIN_INTERVALS intervals
 * time it, as a tail's factor needs on both sides. 0, or -1 when out of memory. */
static int assume_pace(const struct cls_hosts *h, size_t n, double assume, struct tail_info *ti) {
  if (!(assume > 1.0) || n < 2) return 0;
  struct stretch *st = malloc(n * sizeof *st); /* intervals() appends the long ones: unused here */
  size_t nst = 0, np = 0;
  struct tmed *p = NULL;
  uint64_t med;
  size_t nmed;
  if (!st || intervals(h, 0, n, 0, 0, 0, &med, &nmed, st, &nst, &p, &np)) {
    free(st);
    free(p);
    return -1;
  }
  free(st);
  if (nmed < TAIL_MIN_INTERVALS || !med) {
    free(p);
    return 0;
  }
  ti->threads = np ? malloc(np * sizeof *ti->threads) : NULL;
  if (np && !ti->threads) {
    free(p);
    return -1;
  }
  ti->assumed = 1;
  ti->traced_ns = med;
  ti->ntraced = nmed;
  ti->untraced_ns = (uint64_t)((double)med / assume);
  ti->factor = assume;
  for (size_t k = 0; k < np; k++)
    ti->threads[ti->nthreads++] = (struct tail_thread){
        p[k].tid, p[k].ns, (uint64_t)((double)p[k].ns / assume), p[k].n, 0, assume};
  free(p);
  return 0;
}

int tail_gap(const struct trace_data *td, uint64_t *g0, uint64_t *g1, uint64_t *off) {
  const struct trace_array *a = &td->kind[SLK_WINDOW];
  int found = 0;
  *off = 0;
  for (size_t k = 0; k < a->n; k++) {
    const struct slk_record *r = &a->v[k];
    if (!(r->fn & SLK_WINDOW_PACE)) continue;
    if ((r->flags & SLK_WINDOW_UNTRACED) && r->end > r->start && !found) {
      *g0 = r->start, *g1 = r->end;
      found = 1;
    } else if (!r->flags && r->end > *off) {
      *off = r->end; /* the window before it ends where CUPTI's records went off */
    }
  }
  if (found && (!*off || *off > *g0)) *off = *g0;
  return found;
}

int tail_find(const struct trace_data *td, const struct cls_hosts *h, double assume, int ignore,
              struct tail_info *ti) {
  *ti = (struct tail_info){.t = UINT64_MAX, .nhost = h->n, .factor = 1.0, .factor_long = 1.0};
  ti->t = tail_start(td, &ti->taken);
  /* the untraced calls h[tlo..thi), the traced ones whose pace is set against theirs h[0..trn)
   * (mid-run: and those after the stretch, h[thi..n): the loop may begin only near it) */
  size_t tlo = h->n, thi = h->n, trn = h->n;
  if (ti->t != UINT64_MAX) {
    ti->nhost = tail_prefix(h, ti->t);
    ti->calls = h->n - ti->nhost;
    tlo = trn = ti->nhost;
    if (!ti->calls) ti->t = UINT64_MAX; /* a probe at exit: nothing came after it */
  }
  uint64_t g0, g1, off;
  if (ti->t == UINT64_MAX && !ti->taken && tail_gap(td, &g0, &g1, &off)) {
    /* SLACK_PACE_PROBE's stretch, mid-run: its calls stay in the world (outside the windows
     * classified), the pace of those either side (but from CUPTI's records going off to the
     * stretch's start) set against theirs */
    ti->t = g0;
    ti->mid = 1;
    ti->nhost = h->n;
    tlo = tail_prefix(h, g0);
    thi = tail_prefix(h, g1);
    trn = tail_prefix(h, off);
    ti->calls = thi - tlo;
    if (!ti->calls) {
      ti->t = UINT64_MAX;
      ti->mid = 0;
    }
  }
  if (ti->t == UINT64_MAX) return assume_pace(h, h->n, assume, ti);
  for (size_t k = tlo; k < thi; k++) {
    const struct cls_host_rec r = cls_hosts_get(h, k);
    uint64_t e = r.end > r.start ? r.end : r.start;
    if (e - ti->t > ti->span_ns) ti->span_ns = e - ti->t;
  }
  /* another client traced those calls: no untraced pace */
  if (ti->taken) return assume_pace(h, trn, assume, ti);
  if (ignore) { /* its calls out of the window all the same */
    ti->ignored = 1;
    return assume_pace(h, trn, assume, ti);
  }
  ti->tc = malloc(ti->calls * sizeof *ti->tc);
  if (!ti->tc) return -1;
  for (size_t k = tlo; k < thi; k++) {
    const struct cls_host_rec r = cls_hosts_get(h, k);
    ti->tc[ti->ntc++] = (struct tail_call){r.tid, r.start, (uint64_t)r.fn << 32 | r.callsite};
  }
  qsort(ti->tc, ti->ntc, sizeof *ti->tc, cmp_tail_call);
  struct stretch *st = malloc(h->n * sizeof *st);
  size_t nst = 0, n0 = 0, n1 = 0;
  struct tmed *p0 = NULL, *p1 = NULL;
  if (!st ||
      intervals(h, 0, ti->mid ? h->n : trn, trn, thi, 0, &ti->traced_ns, &ti->ntraced, st, &nst,
                &p0, &n0) ||
      intervals(h, tlo, thi, 0, 0, 1, &ti->untraced_ns, &ti->nuntraced, st, &nst, &p1, &n1)) {
    free(st);
    free(p0);
    free(p1);
    return -1;
  }
  if (ti->ntraced >= TAIL_MIN_INTERVALS && ti->nuntraced >= TAIL_MIN_INTERVALS && ti->untraced_ns &&
      ti->traced_ns > ti->untraced_ns)
    ti->factor = (double)ti->traced_ns / (double)ti->untraced_ns;
  /* the threads with a pace on both sides (both lists by tid) */
  size_t most = n0 < n1 ? n0 : n1;
  ti->threads = most ? malloc(most * sizeof *ti->threads) : NULL;
  if (most && !ti->threads) {
    free(st);
    free(p0);
    free(p1);
    return -1;
  }
  for (size_t a = 0, b = 0; a < n0 && b < n1;) {
    if (p0[a].tid != p1[b].tid) {
      if (p0[a].tid < p1[b].tid)
        a++;
      else
        b++;
      continue;
    }
    struct tail_thread *t = &ti->threads[ti->nthreads++];
    *t = (struct tail_thread){p0[a].tid, p0[a].ns, p1[b].ns, p0[a].n, p1[b].n, 1.0};
    if (t->untraced_ns && t->traced_ns > t->untraced_ns)
      t->factor = (double)t->traced_ns / (double)t->untraced_ns;
    a++;
    b++;
  }
  free(p0);
  free(p1);
  int rc = long_factor(st, nst, ti);
  free(st);
  return rc;
}

static const struct tail_thread *thread_of(const struct tail_info *ti, uint64_t tid) {
  size_t lo = 0, hi = ti->nthreads;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (ti->threads[mid].tid < tid)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < ti->nthreads && ti->threads[lo].tid == tid ? &ti->threads[lo] : NULL;
}

double tail_factor_of(const struct tail_info *ti, uint64_t tid) {
  const struct tail_thread *t = thread_of(ti, tid);
  return t ? t->factor : ti->factor;
}

uint64_t tail_added_of(const struct tail_info *ti, uint64_t tid) {
  const struct tail_thread *t = thread_of(ti, tid);
  uint64_t tr = t ? t->traced_ns : ti->traced_ns, un = t ? t->untraced_ns : ti->untraced_ns;
  return (t ? t->factor : ti->factor) > 1.0 && tr > un ? tr - un : 0;
}

void tail_free(struct tail_info *ti) {
  free(ti->threads);
  ti->threads = NULL;
  ti->nthreads = 0;
  free(ti->tc);
  ti->tc = NULL;
  ti->ntc = 0;
}

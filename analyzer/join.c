/* The launch join (join.h). */
#include "join.h"
#include "radix.h"

#include <stdlib.h>
#include <string.h>

static int push(struct join_span **v, size_t *n, size_t *cap, struct join_span s) {
  if (*n == *cap) {
    size_t c = *cap ? *cap * 2 : 1024;
    struct join_span *p = realloc(*v, c * sizeof *p);
    if (!p) return -1;
    *v = p;
    *cap = c;
  }
  (*v)[(*n)++] = s;
  return 0;
}

static int reserve(struct join_span **v, size_t *cap, size_t want) {
  if (want <= *cap) return 0;
  struct join_span *p = realloc(*v, want * sizeof *p);
  if (!p) return -1;
  *v = p;
  *cap = want;
  return 0;
}

int join_set_reserve(struct join_set *js, size_t napi, size_t nhost) {
  return reserve(&js->api, &js->capi, napi) || reserve(&js->host, &js->chost, nhost);
}

int join_set_add_host(struct join_set *js, uint64_t tid, uint64_t start, uint64_t end,
                      uint32_t corr) {
  struct join_span s = {tid, start, end > start ? end : start, corr, (uint32_t)js->nhost};
  if (corr && push(&js->direct, &js->ndirect, &js->cdirect, s)) return -1;
  s.corr = 0;
  return push(&js->host, &js->nhost, &js->chost, s);
}

int join_set_add(struct join_set *js, const struct slk_record *r) {
  if (r->kind == SLK_HOST) return join_set_add_host(js, r->tid, r->start, r->end, r->corr);
  struct join_span s = {r->tid, r->start, r->end > r->start ? r->end : r->start, r->corr, 0};
  if (r->kind == SLK_API) return push(&js->api, &js->napi, &js->capi, s);
  return 0;
}

void join_set_lend_api(struct join_set *js, struct join_span *v, size_t n) {
  js->api = v;
  js->napi = js->capi = n;
  js->api_lent = 1;
}

int join_set_add_spans(struct join_set *js, const struct join_span *v, size_t n) {
  if (!n) return 0;
  if (js->napi + n > js->capi) {
    size_t cap = js->capi ? js->capi : 1024;
    while (cap < js->napi + n)
      cap *= 2;
    if (reserve(&js->api, &js->capi, cap)) return -1;
  }
  memcpy(js->api + js->napi, v, n * sizeof *v);
  js->napi += n;
  return 0;
}

void join_set_add_host_sorted(struct join_set *js, uint64_t tid, uint64_t start, uint64_t end,
                              uint32_t index) {
  js->host_sorted = 1;
  js->host[js->nhost++] = (struct join_span){tid, start, end, 0, index};
}

static int cmp_api(const void *pa, const void *pb) {
  const struct join_span *a = pa, *b = pb;
  if (a->corr != b->corr) return a->corr < b->corr ? -1 : 1;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  return a->end < b->end ? -1 : a->end > b->end;
}

static int cmp_host(const void *pa, const void *pb) {
  const struct join_span *a = pa, *b = pb;
  if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

/* API spans: by corr (the radix sort), then equal ids by start and end (cmp_tie); host spans:
 * by tid and start, their ties already in index order (the order they were added in) */
static uint64_t key_api(const void *ctx, size_t i, int w) {
  (void)w;
  return ((const struct join_span *)ctx)[i].corr;
}
static uint64_t key_host(const void *ctx, size_t i, int w) {
  const struct join_span *a = &((const struct join_span *)ctx)[i];
  return w == 0 ? a->tid : a->start;
}
static const struct join_span *tie_v;
static int (*tie_cmp)(const void *, const void *);
static int cmp_tie(const void *pa, const void *pb) {
  size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
  int c = tie_cmp(&tie_v[a], &tie_v[b]);
  return c ? c : (a < b ? -1 : a > b);
}

/* v[0..n) in the order of cmp (a stable one: equal spans keep their order), by radix keys and a
 * permutation in place; qsort when there is no memory for the keys. ties_in_order: spans equal in
 * the radix key are already in cmp's order (no pass over the runs of equal keys). */
static void sort_spans(struct join_span *v, size_t n, int (*cmp)(const void *, const void *),
                       radix_key_fn key, int nw, int ties_in_order) {
  size_t i = 1;
  while (i < n && cmp(&v[i - 1], &v[i]) <= 0)
    i++;
  if (i >= n) return;
  size_t *ix = malloc(n * sizeof *ix);
  for (i = 0; ix && i < n; i++)
    ix[i] = i;
  if (!ix || radix_sort_ix(ix, n, nw, key, v)) {
    free(ix);
    qsort(v, n, sizeof *v, cmp);
    return;
  }
  /* runs equal in the radix key: by the whole of cmp, then position (stable) */
  tie_v = v;
  tie_cmp = cmp;
  for (i = 0; i < n && !ties_in_order;) {
    size_t j = i + 1;
    int same = 1;
    while (j < n && same) {
      same = 1;
      for (int w = 0; w < nw && same; w++)
        same = key(v, ix[j], w) == key(v, ix[i], w);
      if (same) j++;
    }
    if (j - i > 1) qsort(ix + i, j - i, sizeof *ix, cmp_tie);
    i = j;
  }
  for (i = 0; i < n; i++) {
    if (ix[i] == i) continue;
    struct join_span tmp = v[i];
    size_t j = i;
    while (ix[j] != i) {
      size_t k = ix[j];
      v[j] = v[k];
      ix[j] = j;
      j = k;
    }
    v[j] = tmp;
    ix[j] = j;
  }
  free(ix);
}

/* The first position of each id of v[0..n) (sorted by corr), indexed by id - *lo; NULL when the
 * ids are too sparse for it (or no memory: lookups then search). */
static uint32_t *corr_index(const struct join_span *v, size_t n, uint32_t *lo, size_t *range) {
  *range = 0;
  if (!n || n >= UINT32_MAX) return NULL;
  *lo = v[0].corr;
  size_t r = (size_t)(v[n - 1].corr - v[0].corr) + 1;
  if (r / 4 > n) return NULL;
  uint32_t *at = malloc(r * sizeof *at);
  if (!at) return NULL;
  memset(at, 0xff, r * sizeof *at);
  for (size_t i = n; i-- > 0;)
    at[v[i].corr - *lo] = (uint32_t)i;
  *range = r;
  return at;
}

/* The end of the run of host spans of js->host[lo].tid that starts at lo (host sorted by tid):
 * by galloping, then halving (a few threads over many spans: not a pass over them). */
static size_t host_run_end(const struct join_set *js, size_t lo) {
  uint64_t tid = js->host[lo].tid;
  size_t a = lo, step = 1; /* host[a] is of tid */
  while (step < js->nhost - a && js->host[a + step].tid == tid) {
    a += step;
    step *= 2;
  }
  size_t b = step < js->nhost - a ? a + step : js->nhost; /* host[b] is not (or the end) */
  for (a++; a < b;) {
    size_t mid = a + (b - a) / 2;
    if (js->host[mid].tid == tid)
      a = mid + 1;
    else
      b = mid;
  }
  return a;
}

/* js->ht for host (sorted by tid, then start), and js->hb where buckets (the memoized join walks
 * from a cursor instead: memo_fill); left NULL when out of memory. */
static void host_buckets(struct join_set *js, int buckets) {
  if (!js->nhost || js->nhost > UINT32_MAX) return;
  js->hb = buckets ? malloc(js->nhost * sizeof *js->hb) : NULL;
  if (buckets && !js->hb) return;
  size_t cap = 0;
  for (size_t lo = 0; lo < js->nhost;) {
    size_t hi = host_run_end(js, lo);
    if (js->nht == cap) {
      size_t c = cap ? 2 * cap : 16;
      struct join_thread *v = realloc(js->ht, c * sizeof *v);
      if (!v) break;
      js->ht = v;
      cap = c;
    }
    struct join_thread *t = &js->ht[js->nht++];
    t->tid = js->host[lo].tid;
    t->lo = lo;
    t->hi = hi;
    t->b0 = lo;
    t->t0 = js->host[lo].start;
    /* the last start in the last one; a power of 2 (a shift, not a division, per lookup) where
     * the buckets' starts stay below 2^64 (shift 64: not) */
    uint64_t span = js->host[hi - 1].start - t->t0;
    t->w = span / (hi - lo) + 1;
    t->shift = 64;
    if (span < 1ull << 62) {
      t->shift = 0;
      while ((1ull << t->shift) < t->w)
        t->shift++;
      t->w = 1ull << t->shift;
    }
    size_t k = lo;
    for (size_t b = 0; js->hb && b < hi - lo; b++) {
      uint64_t from = t->t0 + b * t->w;
      while (k < hi && js->host[k].start < from)
        k++;
      js->hb[lo + b] = (uint32_t)k;
    }
    lo = hi;
  }
  if (!js->nht || js->ht[js->nht - 1].hi != js->nhost) { /* out of memory on the way */
    free(js->ht);
    free(js->hb);
    js->ht = NULL;
    js->hb = NULL;
    js->nht = 0;
  }
}

/* A run of spans of one id (a runtime call and the driver call under it) in cmp_api's order,
 * stably: those equal in it stay in the order they came. */
static int cmp_api_ix(const void *pa, const void *pb) {
  const struct join_span *a = pa, *b = pb;
  int c = cmp_api(a, b);
  return c ? c : a->index < b->index ? -1 : a->index > b->index;
}
static void sort_run(struct join_span *v, size_t n) {
  if (n <= 8) { /* insertion: stable */
    for (size_t i = 1; i < n; i++) {
      struct join_span x = v[i];
      size_t q = i;
      for (; q && cmp_api(&v[q - 1], &x) > 0; q--)
        v[q] = v[q - 1];
      v[q] = x;
    }
    return;
  }
  for (size_t i = 0; i < n; i++) /* API spans' index is 0: the place they came in, for now */
    v[i].index = (uint32_t)i;
  qsort(v, n, sizeof *v, cmp_api_ix);
  for (size_t i = 0; i < n; i++)
    v[i].index = 0;
}

/* js->api in cmp_api's order. API spans added in start order (a sorted trace_data: what the
 * classifier joins) have their ties of corr in cmp_api's order already: then a stable sort by
 * corr alone, by counting where the ids are dense (one pass to count, one to place); spans added
 * in another order (a long trace's window gives them as they come), each run of one id then
 * sorted by the rest of cmp_api, stably. */
static void sort_api(struct join_set *js) {
  struct join_span *v = js->api;
  size_t n = js->napi, i = 1;
  while (i < n && cmp_api(&v[i - 1], &v[i]) <= 0)
    i++;
  if (i >= n) return;
  int by_start = 1;
  uint32_t lo = v[0].corr, hi = v[0].corr;
  for (i = 0; i < n; i++) {
    if (i && by_start)
      by_start =
          v[i - 1].start < v[i].start || (v[i - 1].start == v[i].start && v[i - 1].end <= v[i].end);
    if (v[i].corr < lo) lo = v[i].corr;
    if (v[i].corr > hi) hi = v[i].corr;
  }
  size_t range = (size_t)(hi - lo) + 1;
  uint32_t *at = range / 4 <= n && n < UINT32_MAX ? calloc(range + 1, sizeof *at) : NULL;
  struct join_span *out = at ? malloc(n * sizeof *out) : NULL;
  if (!out) {
    free(at);
    sort_spans(v, n, cmp_api, key_api, 1, by_start);
    return;
  }
  for (i = 0; i < n; i++)
    at[v[i].corr - lo + 1]++;
  for (size_t k = 0; k < range; k++)
    at[k + 1] += at[k];
  for (i = 0; i < n; i++)
    out[at[v[i].corr - lo]++] = v[i];
  free(at);
  for (i = 0; i < n && !by_start;) { /* runs of one id: in the order they came */
    size_t j = i + 1;
    while (j < n && out[j].corr == out[i].corr)
      j++;
    if (j - i > 1) sort_run(out + i, j - i);
    i = j;
  }
  if (!js->api_lent) free(js->api);
  js->api = out;
  js->capi = n;
  js->api_lent = 0;
}

/* js->host (in cmp_host's order but for the tid) sorted stably by tid where it has few threads:
 * by counting, into a new array (one pass to count, one to place; the radix sort's permutation
 * in place read the spans scattered). 0, 1 when there are too many threads or no memory. */
static int sort_host_by_tid(struct join_set *js) {
  enum { FEW = 64 };
  uint64_t tid[FEW];
  size_t cnt[FEW], nt = 0, hit = 0;
  for (size_t i = 0; i < js->nhost; i++) {
    uint64_t t = js->host[i].tid;
    if (!nt || tid[hit] != t) {
      for (hit = 0; hit < nt && tid[hit] != t; hit++)
        ;
      if (hit == nt) {
        if (nt == FEW) return 1;
        tid[nt] = t;
        cnt[nt++] = 0;
      }
    }
    cnt[hit]++;
  }
  int sorted = 1;
  for (size_t i = 1; i < nt && sorted; i++)
    sorted = tid[i - 1] < tid[i];
  if (sorted && nt <= 1) return 0; /* in order already: one thread */
  struct join_span *out = malloc(js->nhost * sizeof *out);
  if (!out) return 1;
  size_t at[FEW]; /* each thread's place: by tid (insertion: few) */
  for (size_t r = 0; r < nt; r++) {
    size_t first = 0; /* the spans of threads of lower tid */
    for (size_t q = 0; q < nt; q++)
      if (tid[q] < tid[r]) first += cnt[q];
    at[r] = first;
  }
  hit = 0;
  for (size_t i = 0; i < js->nhost; i++) {
    uint64_t t = js->host[i].tid;
    if (tid[hit] != t)
      for (hit = 0; tid[hit] != t; hit++)
        ;
    out[at[hit]++] = js->host[i];
  }
  free(js->host);
  js->host = out;
  js->chost = js->nhost;
  return 0;
}

static void memo_fill(struct join_set *js);

void join_set_build(struct join_set *js) {
  sort_api(js);
  /* host spans added in start order (a sorted trace_data: what the classifier joins) are in
   * (start, index) order: sorted stably by tid alone, they are in cmp_host's */
  int by_start = !js->host_sorted;
  for (size_t i = 1; i < js->nhost && by_start; i++)
    by_start =
        js->host[i - 1].start < js->host[i].start ||
        (js->host[i - 1].start == js->host[i].start && js->host[i - 1].index < js->host[i].index);
  if (!js->host_sorted && (!by_start || sort_host_by_tid(js))) /* else in order as added */
    sort_spans(js->host, js->nhost, cmp_host, key_host, by_start ? 1 : 2, by_start);
  sort_spans(js->direct, js->ndirect, cmp_api, key_api, 1, 0);
  js->api_at = corr_index(js->api, js->napi, &js->api_lo, &js->api_range);
  if (js->memoize && js->napi && (js->memo = malloc(js->napi * sizeof *js->memo)))
    memset(js->memo, 0xff, js->napi * sizeof *js->memo);
  js->direct_at = corr_index(js->direct, js->ndirect, &js->direct_lo, &js->direct_range);
  host_buckets(js, !js->memo);
  if (js->memo) memo_fill(js);
}

/* The first position of corr in v[0..n) (sorted by corr), or n. */
static size_t corr_find(const struct join_span *v, size_t n, const uint32_t *at, uint32_t lo,
                        size_t range, uint32_t corr) {
  if (at) {
    if (corr < lo || (size_t)(corr - lo) >= range) return n;
    uint32_t i = at[corr - lo];
    return i == UINT32_MAX ? n : i;
  }
  size_t a = 0, b = n;
  while (a < b) {
    size_t mid = a + (b - a) / 2;
    if (v[mid].corr < corr)
      a = mid + 1;
    else
      b = mid;
  }
  return a < n && v[a].corr == corr ? a : n;
}

void join_set_free(struct join_set *js) {
  if (!js->api_lent) free(js->api);
  free(js->host);
  free(js->direct);
  free(js->api_at);
  free(js->direct_at);
  free(js->memo);
  free(js->ht);
  free(js->hb);
  memset(js, 0, sizeof *js);
}

#define MEMO_UNKNOWN UINT32_MAX
#define MEMO_NO_HOST (UINT32_MAX - 1)

/* The thread of tid in js->ht, or NULL. */
static const struct join_thread *host_thread(const struct join_set *js, uint64_t tid) {
  size_t ta = 0, tb = js->nht;
  while (ta < tb) {
    size_t mid = ta + (tb - ta) / 2;
    if (js->ht[mid].tid < tid)
      ta = mid + 1;
    else
      tb = mid;
  }
  return ta < js->nht && js->ht[ta].tid == tid ? &js->ht[ta] : NULL;
}

/* The first position of thread t's spans whose start is past limit (t->hi: none), from its
 * bucket of limit (searched where there are no buckets). */
static size_t host_past_bucket(const struct join_set *js, const struct join_thread *t,
                               uint64_t limit) {
  if (limit < t->t0) return t->lo; /* every call of its thread starts after it */
  size_t lo = t->lo, hi = t->hi;
  if (!js->hb) { /* no buckets (memo_fill's join): searched */
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (js->host[mid].start <= limit)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }
  uint64_t b = t->shift < 64 ? (limit - t->t0) >> t->shift : (limit - t->t0) / t->w;
  lo = b >= t->hi - t->lo ? t->hi : js->hb[t->b0 + b];
  while (lo < t->hi && js->host[lo].start <= limit)
    lo++;
  return lo;
}

/* Of the host spans before position lo, those on a->tid: the one around API span a that overlaps
 * it most, or -1. */
static long long host_best(const struct join_set *js, size_t lo, const struct join_span *a) {
  long long best = -1;
  uint64_t best_overlap = 0;
  /* Host calls of one thread do not nest (the hooks record the outermost call only), so the
   * candidates are the ones that start before the API call ends and end after it begins. */
  for (size_t k = 0; lo > k; k++) {
    const struct join_span *c = &js->host[lo - 1 - k];
    if (c->tid != a->tid) break;
    /* calls of one thread follow each other: once one ended before the API call began (give or
     * take the tolerance), every earlier one did too */
    if (c->end + JOIN_TOLERANCE_NS < a->start) break;
    if (!slk_join_falls_on(c->start, c->end, a->start, a->end)) continue;
    uint64_t s = c->start > a->start ? c->start : a->start;
    uint64_t e = c->end < a->end ? c->end : a->end;
    uint64_t overlap = e >= s ? e - s + 1 : 1; /* within the tolerance only: weakest match */
    if (overlap > best_overlap) {
      best_overlap = overlap;
      best = c->index;
    }
  }
  return best;
}

/* The host call on a->tid around API span a, or -1. */
static long long host_around(const struct join_set *js, const struct join_span *a) {
  /* first position whose (tid, start) is past (a->tid, a->end + tolerance): the host call may
   * hold the API call (a hooked runtime call over CUPTI's record of it), or sit inside it (a
   * library's statically linked cudart, which no hook sees, calling a hooked driver function:
   * cuDNN and cuBLASLt do this) */
  uint64_t limit = a->end + JOIN_TOLERANCE_NS;
  if (js->ht) { /* a->tid's spans, then its bucket of limit, then on to the first one past */
    const struct join_thread *t = host_thread(js, a->tid);
    return t ? host_best(js, host_past_bucket(js, t, limit), a) : -1;
  }
  size_t lo = 0, hi = js->nhost;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const struct join_span *m = &js->host[mid];
    if (m->tid < a->tid || (m->tid == a->tid && m->start <= limit))
      lo = mid + 1;
    else
      hi = mid;
  }
  return host_best(js, lo, a);
}

int join_span_has_host(const struct join_set *js, const struct join_span *a) {
  return host_around(js, a) >= 0;
}

/* The first position of thread t's spans whose start is past limit, walked to from *cur (the
 * position found last on that thread) where that is near, else from its bucket; *cur set to it.
 * The same position as host_past_bucket's: the thread's starts are sorted. */
static size_t host_past_cursor(const struct join_set *js, const struct join_thread *t, size_t *cur,
                               uint64_t limit) {
  size_t p = *cur;
  int steps = 0;
  while (p > t->lo && js->host[p - 1].start > limit && steps < 16)
    p--, steps++;
  while (p < t->hi && js->host[p].start <= limit && steps < 16)
    p++, steps++;
  if ((p > t->lo && js->host[p - 1].start > limit) || (p < t->hi && js->host[p].start <= limit))
    p = host_past_bucket(js, t, limit);
  return *cur = p;
}

/* js->memo filled for every id of js->api at once: host_of_at's answer from the API spans (the
 * direct join is looked at before the memo). The ids come in call order, so each thread's API
 * spans come in time order: a cursor per thread finds each one's host span a step or two from
 * the last one's (no thread search, no bucket, a stream of reads per thread). Left as it is when
 * out of memory (lookups then fill it as they come). */
static void memo_fill(struct join_set *js) {
  if (!js->ht || !js->napi) return;
  size_t *cur = malloc(js->nht * sizeof *cur);
  if (!cur) return;
  for (size_t t = 0; t < js->nht; t++)
    cur[t] = js->ht[t].lo;
  /* the thread found last per 4 low bits of the tid (its place plus 1; 0: none): the threads
   * interleave, and few collide */
  uint32_t near[16] = {0};
  for (size_t lo = 0, hi; lo < js->napi; lo = hi) {
    uint32_t corr = js->api[lo].corr;
    for (hi = lo + 1; hi < js->napi && js->api[hi].corr == corr;)
      hi++;
    if (!corr) continue; /* JOIN_NO_API before the memo */
    /* as host_of_at: the first of at most 8 spans of the id that finds a host call */
    long long h = -1;
    for (size_t i = lo; i < hi && i < lo + 8 && h < 0; i++) {
      const struct join_span *a = &js->api[i];
      uint32_t *nt = &near[a->tid & 15];
      const struct join_thread *t =
          *nt && js->ht[*nt - 1].tid == a->tid ? &js->ht[*nt - 1] : host_thread(js, a->tid);
      if (!t) continue; /* no call on its thread */
      *nt = (uint32_t)(t - js->ht) + 1;
      size_t p = host_past_cursor(js, t, &cur[t - js->ht], a->end + JOIN_TOLERANCE_NS);
      h = host_best(js, p, a);
    }
    if (h < (long long)MEMO_NO_HOST) js->memo[lo] = h < 0 ? MEMO_NO_HOST : (uint32_t)h;
  }
  free(cur);
}

/* join_host_of where lo is corr's first position in js->api (napi: none) */
static long long host_of_at(const struct join_set *js, uint32_t corr, size_t lo) {
  if (!corr) return JOIN_NO_API;
  size_t d =
      corr_find(js->direct, js->ndirect, js->direct_at, js->direct_lo, js->direct_range, corr);
  if (d < js->ndirect) return js->direct[d].index;
  if (lo == js->napi) return JOIN_NO_API;
  if (js->memo && js->memo[lo] != MEMO_UNKNOWN)
    return js->memo[lo] == MEMO_NO_HOST ? JOIN_NO_HOST : (long long)js->memo[lo];
  /* a few API records may share an id (a runtime call and the driver call under it) */
  long long h = JOIN_NO_HOST;
  for (size_t i = lo; i < js->napi && i < lo + 8 && js->api[i].corr == corr && h < 0; i++)
    h = host_around(js, &js->api[i]);
  if (h < 0) h = JOIN_NO_HOST;
  /* host calls are numbered in 32 bits (join_span.index): below the two markers */
  if (js->memo && h < (long long)MEMO_NO_HOST)
    js->memo[lo] = h == JOIN_NO_HOST ? MEMO_NO_HOST : (uint32_t)h;
  return h;
}

long long join_host_of(const struct join_set *js, uint32_t corr) {
  if (!corr) return JOIN_NO_API;
  return host_of_at(js, corr,
                    corr_find(js->api, js->napi, js->api_at, js->api_lo, js->api_range, corr));
}

long long join_host_of_api(const struct join_set *js, size_t j, size_t *first) {
  uint32_t corr = js->api[j].corr;
  /* the first of its id (a few API records may share one): the last one's where it shares it */
  if (!j || js->api[j - 1].corr != corr) *first = j;
  return host_of_at(js, corr, *first);
}

void launch_join_tally(struct launch_join *lj, long long h, uint32_t graph_id) {
  int in_graph = graph_id != 0;
  lj->kernels++;
  lj->graph_kernels += in_graph;
  if (h >= 0) {
    lj->joined++;
    lj->graph_joined += in_graph;
  } else if (h == JOIN_NO_API) {
    lj->no_api++;
  } else {
    lj->no_host++;
  }
}

long long launch_join_count(struct launch_join *lj, const struct join_set *js, uint32_t corr,
                            uint32_t graph_id) {
  long long h = join_host_of(js, corr);
  launch_join_tally(lj, h, graph_id);
  return h;
}

int launch_join_compute(const struct trace_data *td, struct launch_join *lj) {
  const struct trace_array *k = &td->kind[SLK_KERNEL];
  struct join_set js;
  memset(lj, 0, sizeof *lj);
  memset(&js, 0, sizeof js);
  lj->host_of = malloc((k->n ? k->n : 1) * sizeof *lj->host_of);
  int oom = !lj->host_of;
  /* HOST spans in td order, so each span's index is its position in td->kind[SLK_HOST] */
  for (int kind = SLK_API; kind <= SLK_HOST && !oom; kind++)
    for (size_t i = 0; i < td->kind[kind].n && !oom; i++)
      oom = join_set_add(&js, &td->kind[kind].v[i]) != 0;
  if (oom) {
    join_set_free(&js);
    launch_join_free(lj);
    return -1;
  }
  join_set_build(&js);
  for (size_t i = 0; i < k->n; i++)
    lj->host_of[i] = launch_join_count(lj, &js, k->v[i].corr, k->v[i].graph_id);
  join_set_free(&js);
  return 0;
}

void launch_join_free(struct launch_join *lj) {
  free(lj->host_of);
  lj->host_of = NULL;
}

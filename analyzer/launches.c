/* The launch join counted in bounded memory (launches.h).
 *
 * What launch_join_count says of a kernel with correlation id c (join.c, host_of_at): joined when
 * c is not 0 and a host call carries c (the direct join), or when one of the first 8 API records
 * of c (in order of start, end, then file order) falls on a host call of its thread: among the
 * thread's calls (in order of start, then file order) that start by the API record's end plus
 * the tolerance, from the last one back while they end (plus the tolerance) at or after its
 * start (host_best). Only whether a kernel joins is counted here, so per id one byte says it all:
 *
 *   bits 0-3  the API records of c already looked at (0-8), or ST_JOINED
 *   bits 4-6  kernels with c (0-6), or K_OVER: counted in the overflow map
 *   bit 7     c's kernels are in a CUDA graph
 *
 * The time join by windows. Window w takes the API records that start in [a, b) (the windows in
 * order of time, from a = 0 to the last, open at the end) of the ids still to join, and the host
 * calls whose end plus the tolerance ("etol") is at least a and whose start is at most HB (b - 1
 * plus the longest API record of the chunks it reads, plus the tolerance): every call that the
 * look back from one of its API records can reach, but those that ended before a. In their
 * place, per thread, P: the last call (by start, then file order) of those with etol < a. The
 * look back over the window's calls then visits what it visits over all of them: the calls it
 * visits over all of them have etol >= the API record's start >= a (so are in the window); past
 * them it stops at the first call with etol < the start, which is P or a call after P (after P
 * every call has etol >= a, and one that starts by HB is in the window): the window has it. Each
 * window sees every call whose etol is in [a, b) (their starts are before b), so P is kept up to
 * date from the windows. Times at or past 2^62 (where end + tolerance could wrap) make it one
 * window: the whole trace at once, as the plain join. */
#include "launches.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h> /* mallopt */
#endif

#include "slack.h"
#include "u64map.h"

#define TOL SLK_JOIN_TOLERANCE_NS
#define ST_JOINED 15u
#define K_OVER 7u
#define PAGE_BITS 12
#define PAGE ((size_t)1 << PAGE_BITS)
#define DEFAULT_WINDOW_SPANS 500000
#define DEFAULT_SLICE ((uint64_t)1 << 27)
#define TIME_LIMIT ((uint64_t)1 << 62)

struct lchunk {
  uint64_t off;
  uint64_t a_s0, a_s1, a_dur;          /* its API records: least and greatest start, longest */
  uint64_t h_s0, h_s1, h_e1;           /* its host calls: least and greatest start, greatest end */
  uint64_t h_ord;                      /* the ordinal (in file order) of its first host call */
  uint32_t napi, nhost, nkern, nhcorr; /* nhcorr: host calls with a correlation id */
};

struct kover {
  uint64_t corr, k, gk; /* kernels and those in a graph */
};

/* the ids base .. base + size - 1, a page of PAGE bytes each, allocated when first written */
struct ctab {
  uint64_t base, size;
  uint8_t **page;
  size_t npage;
  struct u64map over; /* id -> its place in ov (K_OVER) */
  struct kover *ov;
  size_t nov, cov;
};

struct hspan {
  uint64_t tid, start, end, ord;
};

struct launches {
  struct lchunk *ix;
  size_t nix, cix;
  uint64_t hosts, napi, nhost, tmax;
  uint64_t kernels, graph_kernels;
  uint64_t next_base; /* the least kernel id past the slice; UINT64_MAX: none */
  struct ctab t;
  int oom;
  uint64_t per_window, slice;
  /* the windows' arrays, reused from window to window */
  struct join_span *wapi;
  size_t nwapi, cwapi;
  struct hspan *wh, *tmp;
  size_t nwh, cwh, ctmp;
  struct join_span *jh; /* the join set's calls */
  size_t cjh;
  /* P per thread: tid -> place in pv */
  struct u64map pat;
  struct hspan *pv;
  size_t npv, cpv;
};

static uint64_t env_count(const char *name, uint64_t def) {
  const char *e = getenv(name);
  if (!e || !*e) return def;
  char *end;
  unsigned long long v = strtoull(e, &end, 10);
  if (*end || !v || e[0] == '-') {
    fprintf(stderr, "slack info: %s=%s is not a count above 0; ignored\n", name, e);
    return def;
  }
  return (uint64_t)v;
}

static int grow(void **v, size_t *cap, size_t want, size_t size) {
  if (want <= *cap) return 0;
  size_t c = *cap ? *cap : 1024;
  while (c < want)
    c *= 2;
  void *p = realloc(*v, c * size);
  if (!p) return -1;
  *v = p;
  *cap = c;
  return 0;
}

/* ---- the table of ids ---- */

static int ctab_init(struct ctab *t, uint64_t base, uint64_t size) {
  t->base = base;
  t->size = size;
  t->npage = (size_t)((size + PAGE - 1) / PAGE);
  t->page = calloc(t->npage, sizeof *t->page);
  return t->page ? 0 : -1;
}

static void ctab_free(struct ctab *t) {
  for (size_t p = 0; t->page && p < t->npage; p++)
    free(t->page[p]);
  free(t->page);
  u64map_free(&t->over);
  free(t->ov);
  memset(t, 0, sizeof *t);
}

/* c's byte (c in the slice), its page allocated when new; NULL when out of memory */
static uint8_t *ctab_at(struct ctab *t, uint64_t c) {
  uint64_t i = c - t->base;
  uint8_t **pg = &t->page[i >> PAGE_BITS];
  if (!*pg && !(*pg = calloc(PAGE, 1))) return NULL;
  return &(*pg)[i & (PAGE - 1)];
}

/* c's byte, 0 where its page was never written */
static uint8_t ctab_get(const struct ctab *t, uint64_t c) {
  uint64_t i = c - t->base;
  const uint8_t *pg = t->page[i >> PAGE_BITS];
  return pg ? pg[i & (PAGE - 1)] : 0;
}

static int in_slice(const struct launches *L, uint64_t c) {
  return c >= L->t.base && c - L->t.base < L->t.size;
}

/* A kernel with id c (not 0), in a graph or not. */
static int kernel_add(struct launches *L, uint64_t c, unsigned graph) {
  if (!in_slice(L, c)) {
    if (c > L->t.base && c < L->next_base) L->next_base = c;
    return 0;
  }
  uint8_t *b = ctab_at(&L->t, c);
  if (!b) return -1;
  unsigned k = (*b >> 4) & 7u, g = *b >> 7;
  if (k == 0) {
    *b = (uint8_t)((*b & 15u) | 1u << 4 | graph << 7);
    return 0;
  }
  if (k < K_OVER - 1 && g == graph) {
    *b = (uint8_t)(*b + (1u << 4));
    return 0;
  }
  struct ctab *t = &L->t;
  if (k == K_OVER) {
    uint64_t at = 0;
    u64map_get(&t->over, c, &at);
    t->ov[at].k++;
    t->ov[at].gk += graph;
    return 0;
  }
  if (grow((void **)&t->ov, &t->cov, t->nov + 1, sizeof *t->ov)) return -1;
  size_t slot = u64map_add(&t->over, c);
  if (slot == (size_t)-1) return -1;
  t->over.val[slot] = t->nov;
  t->ov[t->nov++] = (struct kover){c, k + 1, (g ? k : 0) + graph};
  *b = (uint8_t)((*b & 15u) | K_OVER << 4);
  return 0;
}

/* A host call that carries id c (not 0): its kernels join directly. */
static int direct_add(struct launches *L, uint64_t c) {
  if (!in_slice(L, c)) return 0;
  uint8_t *b = ctab_at(&L->t, c);
  if (!b) return -1;
  *b = (uint8_t)(*b | ST_JOINED);
  return 0;
}

/* The kernels of the slice (all, and in graphs) whose ids are joined (joined 1) or not yet. */
static void ctab_kernels(const struct ctab *t, int joined, uint64_t *k, uint64_t *gk) {
  *k = *gk = 0;
  for (size_t p = 0; p < t->npage; p++) {
    const uint8_t *pg = t->page[p];
    for (size_t i = 0; pg && i < PAGE; i++) {
      unsigned b = pg[i], n = (b >> 4) & 7u;
      if (!n || n == K_OVER || ((b & 15u) == ST_JOINED) != joined) continue;
      *k += n;
      *gk += b >> 7 ? n : 0;
    }
  }
  for (size_t i = 0; i < t->nov; i++)
    if (((ctab_get(t, t->ov[i].corr) & 15u) == ST_JOINED) == joined) {
      *k += t->ov[i].k;
      *gk += t->ov[i].gk;
    }
}

/* ---- the first pass ---- */

struct launches *launches_new(void) {
  struct launches *L = calloc(1, sizeof *L);
  if (!L) return NULL;
  L->per_window = env_count("SLACK_INFO_WINDOW_SPANS", DEFAULT_WINDOW_SPANS);
  L->slice = env_count("SLACK_INFO_CORR_SLICE", DEFAULT_SLICE);
  L->next_base = UINT64_MAX;
  if (ctab_init(&L->t, 0, L->slice)) {
    free(L);
    return NULL;
  }
  return L;
}

void launches_free(struct launches *L) {
  if (!L) return;
  ctab_free(&L->t);
  free(L->ix);
  free(L->wapi);
  free(L->wh);
  free(L->tmp);
  free(L->jh);
  u64map_free(&L->pat);
  free(L->pv);
  free(L);
}

static uint64_t rend(const struct slk_record *r) { return r->end > r->start ? r->end : r->start; }

int launches_record(struct launches *L, const struct trace_reader *rd, const struct slk_record *r) {
  int k = r->kind;
  if (L->oom) return -1;
  if (k != SLK_KERNEL && k != SLK_API && k != SLK_HOST) return 0;
  uint64_t off = trace_reader_chunk_offset(rd);
  if (!L->nix || L->ix[L->nix - 1].off != off) {
    if (grow((void **)&L->ix, &L->cix, L->nix + 1, sizeof *L->ix)) return L->oom = -1;
    L->ix[L->nix++] = (struct lchunk){.off = off};
  }
  struct lchunk *c = &L->ix[L->nix - 1];
  if (k == SLK_KERNEL) {
    c->nkern++;
    L->kernels++;
    L->graph_kernels += r->graph_id != 0;
    if (r->corr && kernel_add(L, r->corr, r->graph_id != 0)) return L->oom = -1;
    return 0;
  }
  uint64_t end = rend(r);
  if (end > L->tmax) L->tmax = end;
  if (k == SLK_API) {
    if (!c->napi++) {
      c->a_s0 = c->a_s1 = r->start;
    } else {
      if (r->start < c->a_s0) c->a_s0 = r->start;
      if (r->start > c->a_s1) c->a_s1 = r->start;
    }
    if (end - r->start > c->a_dur) c->a_dur = end - r->start;
    L->napi++;
    return 0;
  }
  if (!c->nhost++) {
    c->h_ord = L->hosts;
    c->h_s0 = c->h_s1 = r->start;
    c->h_e1 = end;
  } else {
    if (r->start < c->h_s0) c->h_s0 = r->start;
    if (r->start > c->h_s1) c->h_s1 = r->start;
    if (end > c->h_e1) c->h_e1 = end;
  }
  L->hosts++;
  L->nhost++;
  if (r->corr) {
    c->nhcorr++;
    if (direct_add(L, r->corr)) return L->oom = -1;
  }
  return 0;
}

/* ---- the windows ---- */

/* The API records and host calls that start before t, by the chunks' spans of starts (as if
 * evenly spread over them). */
static double starts_before(const void *ctx, uint64_t t) {
  const struct launches *L = ctx;
  double n = 0;
  for (size_t i = 0; i < L->nix; i++) {
    const struct lchunk *c = &L->ix[i];
    const uint64_t s0[2] = {c->a_s0, c->h_s0}, s1[2] = {c->a_s1, c->h_s1};
    const uint32_t cnt[2] = {c->napi, c->nhost};
    for (int j = 0; j < 2; j++) {
      if (!cnt[j] || t <= s0[j]) continue;
      if (t > s1[j] || s1[j] == s0[j])
        n += cnt[j];
      else
        n += (double)cnt[j] * (double)(t - s0[j]) / (double)(s1[j] - s0[j]);
    }
  }
  return n;
}

static int cmp_hspan(const void *pa, const void *pb) {
  const struct hspan *a = pa, *b = pb;
  if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  return a->ord < b->ord ? -1 : a->ord > b->ord;
}
static int cmp_hspan_time(const void *pa, const void *pb) {
  const struct hspan *a = pa, *b = pb;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  return a->ord < b->ord ? -1 : a->ord > b->ord;
}

/* The calls p[0..np) then v[0..nv) in cmp_hspan's order, into out (room for np + nv): by thread
 * (counting, stable, where few), then each thread's run, in order already but where it is not
 * (the file gives each thread's calls in order, and its P before them) */
static void sort_hosts(const struct hspan *p, size_t np, const struct hspan *v, size_t nv,
                       struct hspan *out) {
  enum { FEW = 64 };
  uint64_t tid[FEW];
  size_t cnt[FEW], at[FEW], nt = 0, hit = 0, n = np + nv;
  for (size_t i = 0; i < n; i++) {
    const struct hspan *h = i < np ? &p[i] : &v[i - np];
    if (!nt || tid[hit] != h->tid) {
      for (hit = 0; hit < nt && tid[hit] != h->tid; hit++)
        ;
      if (hit == nt) {
        if (nt == FEW) { /* many threads: sorted whole */
          memcpy(out, p, np * sizeof *p);
          memcpy(out + np, v, nv * sizeof *v);
          qsort(out, n, sizeof *out, cmp_hspan);
          return;
        }
        tid[nt] = h->tid;
        cnt[nt++] = 0;
      }
    }
    cnt[hit]++;
  }
  for (size_t r = 0; r < nt; r++) {
    at[r] = 0;
    for (size_t q = 0; q < nt; q++)
      if (tid[q] < tid[r]) at[r] += cnt[q];
  }
  hit = 0;
  for (size_t i = 0; i < n; i++) {
    const struct hspan *h = i < np ? &p[i] : &v[i - np];
    if (tid[hit] != h->tid)
      for (hit = 0; tid[hit] != h->tid; hit++)
        ;
    out[at[hit]++] = *h;
  }
  for (size_t lo = 0, hi; lo < n; lo = hi) {
    int sorted = 1;
    for (hi = lo + 1; hi < n && out[hi].tid == out[lo].tid; hi++)
      sorted &= cmp_hspan_time(&out[hi - 1], &out[hi]) <= 0;
    if (!sorted) qsort(out + lo, hi - lo, sizeof *out, cmp_hspan_time);
  }
}

/* The window's join: its API spans (L->wapi) against its host calls (L->wh) and each thread's P;
 * each id's state in the table updated. The join set works in the window's arrays (its API
 * spans', the calls') and hands them back: they are reused from window to window. 0, or -1 when
 * out of memory. */
static int window_join(struct launches *L) {
  size_t nh = L->npv + L->nwh;
  if (grow((void **)&L->tmp, &L->ctmp, nh, sizeof *L->tmp) ||
      grow((void **)&L->jh, &L->cjh, nh, sizeof *L->jh))
    return -1;
  sort_hosts(L->pv, L->npv, L->wh, L->nwh, L->tmp);
  struct join_set js;
  memset(&js, 0, sizeof js);
  js.api = L->wapi;
  js.napi = L->nwapi;
  js.capi = L->cwapi;
  js.host = L->jh;
  js.chost = L->cjh;
  for (size_t i = 0; i < nh; i++)
    join_set_add_host_sorted(&js, L->tmp[i].tid, L->tmp[i].start, L->tmp[i].end, (uint32_t)i);
  join_set_build(&js);
  int rc = 0;
  for (size_t lo = 0, hi; lo < js.napi; lo = hi) {
    uint32_t c = js.api[lo].corr;
    for (hi = lo + 1; hi < js.napi && js.api[hi].corr == c;)
      hi++;
    uint8_t *b = ctab_at(&L->t, c);
    if (!b) {
      rc = -1;
      break;
    }
    unsigned seen = *b & 15u;
    if (seen == ST_JOINED) continue;
    int joined = 0;
    for (size_t i = lo; i < hi && i < lo + (8 - seen) && !joined; i++)
      joined = join_span_has_host(&js, &js.api[i]);
    size_t now = seen + (hi - lo);
    *b = (uint8_t)((*b & ~15u) | (joined ? ST_JOINED : now > 8 ? 8u : (unsigned)now));
  }
  /* the arrays back (the API spans' sorted into a new one, the old freed) */
  L->wapi = js.api;
  L->cwapi = js.capi;
  L->jh = js.host;
  L->cjh = js.chost;
  js.api = js.host = NULL;
  join_set_free(&js);
  return rc;
}

/* Each thread's P from the window's calls whose etol is before b. */
static int p_update(struct launches *L, uint64_t b) {
  for (size_t i = 0; i < L->nwh; i++) {
    const struct hspan *h = &L->wh[i];
    if (h->end + TOL >= b) continue;
    uint64_t at;
    if (u64map_get(&L->pat, h->tid, &at)) {
      if (cmp_hspan_time(&L->pv[at], h) < 0) L->pv[at] = *h;
      continue;
    }
    if (grow((void **)&L->pv, &L->cpv, L->npv + 1, sizeof *L->pv)) return -1;
    size_t slot = u64map_add(&L->pat, h->tid);
    if (slot == (size_t)-1) return -1;
    L->pat.val[slot] = L->npv;
    L->pv[L->npv++] = *h;
  }
  return 0;
}

/* Window [a, b) (last: [a, end)). */
static int window(struct launches *L, struct trace_reader *rd, uint64_t a, uint64_t b, int last) {
  uint64_t dur = 0;
  for (size_t i = 0; i < L->nix; i++) {
    const struct lchunk *c = &L->ix[i];
    if (c->napi && c->a_s1 >= a && (last || c->a_s0 < b) && c->a_dur > dur) dur = c->a_dur;
  }
  uint64_t hb = last ? UINT64_MAX : b - 1 + dur + TOL;
  L->nwapi = L->nwh = 0;
  for (size_t i = 0; i < L->nix; i++) {
    const struct lchunk *c = &L->ix[i];
    int api_in = c->napi && c->a_s1 >= a && (last || c->a_s0 < b);
    int host_in = c->nhost && c->h_e1 + TOL >= a && c->h_s0 <= hb;
    if (!api_in && !host_in) continue;
    if (trace_reader_seek_chunk(rd, c->off)) return -2;
    uint64_t ord = c->h_ord;
    struct slk_record r;
    memset(&r, 0, sizeof r);
    while (trace_reader_next_in_chunk_light(rd, &r)) {
      if (r.kind == SLK_HOST) {
        uint64_t o = ord++, end = rend(&r);
        if (!host_in || end + TOL < a || r.start > hb) continue;
        if (grow((void **)&L->wh, &L->cwh, L->nwh + 1, sizeof *L->wh)) return -1;
        L->wh[L->nwh++] = (struct hspan){r.tid, r.start, end, o};
      } else if (r.kind == SLK_API && api_in) {
        if (r.start < a || (!last && r.start >= b) || !r.corr || !in_slice(L, r.corr)) continue;
        uint8_t s = ctab_get(&L->t, r.corr);
        if (!((s >> 4) & 7u) || (s & 15u) == ST_JOINED) continue; /* no kernel, or joined */
        if (grow((void **)&L->wapi, &L->cwapi, L->nwapi + 1, sizeof *L->wapi)) return -1;
        L->wapi[L->nwapi++] = (struct join_span){r.tid, r.start, rend(&r), r.corr, 0};
      }
    }
  }
  if (L->nwapi && window_join(L)) return -1;
  return last ? 0 : p_update(L, b);
}

/* The time join of the slice's ids whose kernels are not joined yet. */
static int windows(struct launches *L, struct trace_reader *rd) {
  uint64_t k, gk;
  ctab_kernels(&L->t, 0, &k, &gk);
  if (!L->napi || !k) return 0;
  u64map_free(&L->pat);
  L->npv = 0;
#ifdef __GLIBC__
  /* the windows' arrays from the heap, kept there when freed: the next window's (about the same
   * size) reuse the same pages instead of faulting in fresh ones from mmap */
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  uint64_t total = L->napi + L->nhost;
  size_t nwin = L->tmax >= TIME_LIMIT ? 1 : (size_t)((total + L->per_window - 1) / L->per_window);
  if (!nwin) nwin = 1;
  uint64_t a = 0;
  for (size_t w = 0; w < nwin; w++) {
    int last = w + 1 == nwin;
    uint64_t b = UINT64_MAX;
    if (!last) { /* the time before which (w + 1) windows' records start */
      double want = (double)total * (double)(w + 1) / (double)nwin;
      b = slack_window_end(a, L->tmax + 1, want, starts_before, L);
      if (b <= a) continue;
    }
    int rc = window(L, rd, a, b, last);
    if (rc) return rc;
    a = b;
  }
  return 0;
}

/* A further slice's kernels and direct joins, read again from the chunks that hold them. */
static int corr_pass(struct launches *L, struct trace_reader *rd) {
  for (size_t i = 0; i < L->nix; i++) {
    const struct lchunk *c = &L->ix[i];
    if (!c->nkern && !c->nhcorr) continue;
    if (trace_reader_seek_chunk(rd, c->off)) return -2;
    struct slk_record r;
    memset(&r, 0, sizeof r);
    while (trace_reader_next_in_chunk_light(rd, &r)) {
      if (r.kind == SLK_KERNEL && r.corr && kernel_add(L, r.corr, r.graph_id != 0)) return -1;
      if (r.kind == SLK_HOST && r.corr && direct_add(L, r.corr)) return -1;
    }
  }
  return 0;
}

int launches_finish(struct launches *L, struct trace_reader *rd, struct launch_join *lj) {
  memset(lj, 0, sizeof *lj);
  lj->kernels = L->kernels;
  lj->graph_kernels = L->graph_kernels;
  if (L->oom) return -1;
  for (;;) {
    int rc = windows(L, rd);
    if (rc) return rc;
    uint64_t k, gk;
    ctab_kernels(&L->t, 1, &k, &gk);
    lj->joined += k;
    lj->graph_joined += gk;
    if (L->next_base == UINT64_MAX) return 0;
    uint64_t base = L->next_base;
    ctab_free(&L->t);
    if (ctab_init(&L->t, base, L->slice)) return -1;
    L->next_base = UINT64_MAX;
    if ((rc = corr_pass(L, rd))) return rc;
  }
}

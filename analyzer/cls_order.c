/* The classifier's order join: GPU work that no API record joins, matched to the host calls that
 * submitted it by each stream's order (docs/CLASSIFICATION.md, "The order join").
 *
 * CUPTI attached again after a cuptiFinalize (production windows with SLACK_WINDOW_DETACH=1)
 * records the kernels, copies and memsets but no API call (CUPTI 13.0 on the H200, GPU run 38),
 * and with SLACK_API_RECORDS=0 there is no API record at all: their correlation ids match
 * nothing. A stream runs its work in the order it was submitted, so the n-th kernel of a stream
 * that nothing joined is the n-th launch call on that stream that nothing joined either, once the
 * hooks' stream handles are known as CUPTI's stream ids. Since format 2.5 libslack names each
 * handle with CUPTI's stream id itself (SLK_STREAM records, runtime/streams.c): a call takes the
 * latest such record of its handle at or before it (of its own thread for the handles 0, 1 and 2,
 * which name a stream per context and thread). A handle without one (older traces) is learned
 * from the work that did join (a first window that kept its API records): it takes the stream id
 * its joined work ran on most. Per (stream id, kind of work), first in, first out, a call never
 * after the work it submitted; work on a stream whose handle is neither named nor learned stays
 * unjoined. Learned only, against the correlation join on every H200 trace under tests/data
 * (scripts/order_join_check.py, the handles learned from the first fifth): 98.5% of the later
 * work right overall, 100% on 50 of the 53 traces whose streams were all seen. */
#include <stdlib.h>
#include <string.h>

#include "cls_internal.h"
#include "join.h"

enum { W_KERNEL = 0, W_COPY, W_MEMSET, W_NONE };

static int work_of_fn(uint32_t fn) {
  int c = slk_fn_cat(fn);
  if (c == SLK_FNC_LAUNCH) return W_KERNEL;
  if (slk_fnc_is_copy(c)) return W_COPY;
  if (c == SLK_FNC_MEMSET) return W_MEMSET;
  return W_NONE; /* graph launches (many kernels each), host functions, the rest */
}

static int work_of_kind(int k) {
  return k == SLK_KERNEL ? W_KERNEL : k == SLK_MEMCPY ? W_COPY : W_MEMSET;
}

struct item {
  uint64_t stream; /* CUPTI's stream id (the calls': their handle's, once learned) */
  uint64_t start;
  uint32_t work; /* W_* */
  uint32_t ix;   /* the call (in the input's HOST records) or the operation (in hs) */
};

static int cmp_item(const void *pa, const void *pb) {
  const struct item *a = pa, *b = pb;
  if (a->stream != b->stream) return a->stream < b->stream ? -1 : 1;
  if (a->work != b->work) return a->work < b->work ? -1 : 1;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  return a->ix < b->ix ? -1 : a->ix > b->ix;
}

struct vote {
  uint64_t handle, stream;
};

static int cmp_vote(const void *pa, const void *pb) {
  const struct vote *a = pa, *b = pb;
  if (a->handle != b->handle) return a->handle < b->handle ? -1 : 1;
  return a->stream < b->stream ? -1 : a->stream > b->stream;
}

/* handle -> stream id by sorting every vote (learn's fallback) */
static size_t learn_sorted(struct vote *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_vote);
  size_t m = 0;
  for (size_t a = 0; a < n;) {
    size_t b = a, best = a, best_n = 0;
    while (b < n && v[b].handle == v[a].handle) {
      size_t r = b;
      while (r < n && v[r].handle == v[b].handle && v[r].stream == v[b].stream)
        r++;
      if (r - b > best_n) {
        best_n = r - b;
        best = b;
      }
      b = r;
    }
    v[m++] = v[best];
    a = b;
  }
  return m;
}

/* A stream map record (SLK_STREAM): handle -> CUPTI stream id from `start` on (tid 0 for the
 * handles of created streams, which name one stream whichever thread uses them). */
struct named {
  uint64_t handle, tid, start, stream;
};

static uint64_t named_tid(uint64_t handle, uint64_t tid) { return handle <= 2 ? tid : 0; }

static int cmp_named(const void *pa, const void *pb) {
  const struct named *a = pa, *b = pb;
  if (a->handle != b->handle) return a->handle < b->handle ? -1 : 1;
  if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
  return a->start < b->start ? -1 : a->start > b->start;
}

/* The stream id of a call on handle (its thread tid, at start): the latest record of the handle
 * (and thread) at or before start, else its first one after (a call made before CUPTI named
 * it). 1 with *stream, or 0. */
static int named_stream(const struct named *m, size_t n, uint64_t handle, uint64_t tid,
                        uint64_t start, uint64_t *stream) {
  struct named key = {handle, named_tid(handle, tid), start, 0};
  size_t lo = 0, hi = n; /* the first record past key */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (cmp_named(&m[mid], &key) <= 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo > 0 && m[lo - 1].handle == key.handle && m[lo - 1].tid == key.tid) {
    *stream = m[lo - 1].stream;
    return 1;
  }
  if (lo < n && m[lo].handle == key.handle && m[lo].tid == key.tid) {
    *stream = m[lo].stream;
    return 1;
  }
  return 0;
}

static size_t vote_slot(const struct vote *v, size_t cap) {
  uint64_t h = (v->handle * 0x9e3779b97f4a7c15ull ^ v->stream) * 0xbf58476d1ce4e5b9ull;
  return (size_t)(h >> 40) & (cap - 1);
}

/* handle -> stream id: the stream that the most votes of each handle name (the longest run of
 * the handle's votes sorted by (handle, stream); of equal runs the first, the lowest stream), as
 * (handle, stream) pairs sorted by handle. A window has a vote per joined operation (~150 k in
 * the bench's windows, whose sort was 8% of `slack report`) but few distinct pairs (one per
 * stream a handle ran on): they are counted as they come in a small open-addressing table (the
 * votes not kept: 16 bytes each of fresh memory) and only those are sorted; learn_sorted of
 * every vote where there are more than it holds. */
enum { LEARN_CAP = 1024, LEARN_PAIRS = LEARN_CAP / 2 };
struct learner {
  struct {
    struct vote p;
    uint64_t n; /* 0: empty */
  } t[LEARN_CAP];
  size_t np, last;
};

static void learn_init(struct learner *L) {
  memset(L->t, 0, sizeof L->t);
  L->np = 0;
  L->last = LEARN_CAP;
}

/* Vote v counted. -1 where it is a pair past the LEARN_PAIRS the table holds (nothing counted). */
static int learn_add(struct learner *L, const struct vote *v) {
  /* votes come in runs of one stream: the pair of the vote before, first */
  size_t last = L->last;
  if (last < LEARN_CAP && L->t[last].p.handle == v->handle && L->t[last].p.stream == v->stream) {
    L->t[last].n++;
    return 0;
  }
  size_t i = vote_slot(v, LEARN_CAP);
  while (L->t[i].n && (L->t[i].p.handle != v->handle || L->t[i].p.stream != v->stream))
    i = (i + 1) & (LEARN_CAP - 1);
  if (!L->t[i].n) {
    if (L->np == LEARN_PAIRS) return -1;
    L->t[i].p = *v;
    L->np++;
  }
  L->t[i].n++;
  L->last = i;
  return 0;
}

/* The handles' streams learned, to out (room for LEARN_PAIRS); their count. */
static size_t learn_end(const struct learner *L, struct vote *out) {
  /* the distinct pairs sorted, each with its count (the run it would make in the sorted votes) */
  struct vote p[LEARN_PAIRS];
  uint64_t c[LEARN_PAIRS];
  size_t m = 0;
  for (size_t i = 0; i < LEARN_CAP; i++)
    if (L->t[i].n) p[m++] = L->t[i].p;
  qsort(p, m, sizeof *p, cmp_vote);
  for (size_t k = 0; k < m; k++) {
    size_t i = vote_slot(&p[k], LEARN_CAP);
    while (L->t[i].p.handle != p[k].handle || L->t[i].p.stream != p[k].stream)
      i = (i + 1) & (LEARN_CAP - 1);
    c[k] = L->t[i].n;
  }
  size_t n = 0;
  for (size_t a = 0; a < m;) {
    size_t best = a, b = a + 1;
    for (; b < m && p[b].handle == p[a].handle; b++)
      if (c[b] > c[best]) best = b;
    out[n++] = p[best];
    a = b;
  }
  return n;
}

/* Operation j's vote: its call's handle, its stream id. */
static inline struct vote vote_of(const struct cls_hosts *H, size_t nhost, const long long *hs,
                                  const uint64_t *hstream, const uint64_t *ostream, size_t j) {
  uint64_t hst = (size_t)hs[j] < nhost ? hstream[hs[j]] : cls_hosts_get(H, (size_t)hs[j]).stream;
  return (struct vote){hst, ostream[j]};
}

static int cmp_handle(const void *pa, const void *pb) {
  const struct vote *a = pa, *b = pb;
  return a->handle < b->handle ? -1 : a->handle > b->handle;
}

int cls_order_join(const struct trace_data *td, const struct cls_hosts *H, size_t nhost, int marked,
                   const struct op *ops, const uint32_t *at, long long *hs, size_t n,
                   const uint64_t *hstream, const uint64_t *ostream, const uint8_t *oq,
                   size_t *joined) {
  *joined = 0;
  size_t todo = 0, nj = 0;
  for (size_t j = 0; j < n; j++) {
    todo += hs[j] == JOIN_NO_API && !(oq[j] & OQ_GRAPH);
    nj += hs[j] >= 0;
  }
  const struct trace_array *S = &td->kind[SLK_STREAM];
  if (!todo || (!nj && !S->n) || !H->n) return 0;
  int rc = -1;
  uint8_t *claimed = calloc(H->n, 1);
  struct learner *L = malloc(sizeof *L);
  struct vote *v = NULL;
  struct named *m = malloc((S->n ? S->n : 1) * sizeof *m);
  /* the calls that may take work: grown as they come (most calls are claimed or carry an id) */
  size_t ccap = H->n < 1024 ? H->n : 1024;
  struct item *calls = malloc(ccap * sizeof *calls), *work = malloc(todo * sizeof *work);
  if (!claimed || !L || !m || !calls || !work) goto done;
  for (size_t i = 0; i < S->n; i++) {
    const struct slk_record *r = &S->v[i];
    m[i] = (struct named){r->stream, named_tid(r->stream, r->tid), r->start, r->count};
  }
  qsort(m, S->n, sizeof *m, cmp_named);
  size_t nv = 0;
  int over = 0; /* more pairs than the learner holds: every vote sorted (learn_sorted) */
  learn_init(L);
  for (size_t j = 0; j < n; j++)
    if (hs[j] >= 0) {
      claimed[hs[j]] = 1;
      struct vote x = vote_of(H, nhost, hs, hstream, ostream, j);
      if (!over) over = learn_add(L, &x) != 0;
    }
  if (!(v = malloc((over ? nj : LEARN_PAIRS) * sizeof *v))) goto done;
  if (over) {
    for (size_t j = 0; j < n; j++)
      if (hs[j] >= 0) v[nv++] = vote_of(H, nhost, hs, hstream, ostream, j);
    nv = learn_sorted(v, nv);
  } else {
    nv = learn_end(L, v);
  }
  size_t nc = 0, no = 0;
  /* where the writer marks the calls CUPTI recorded the work of (SLK_HOST_CUPTI_ON), the others
   * (made while CUPTI attached again at a window's start, 5-14 ms on the H200) have no work to
   * join: left out, or each later kernel of the window would pair with a call that many early */
  for (size_t h = 0; h < nhost && h < H->n; h++) { /* not the untraced tail's (tail.h) */
    if (claimed[h]) continue; /* before its record is read: most calls with work are claimed */
    const struct cls_host_rec x = cls_hosts_get(H, h), *r = &x;
    int wk = work_of_fn(r->fn);
    /* a call with a correlation id had its API record: its work, if any, joined by it */
    if (r->corr || wk == W_NONE || r->result) continue;
    if (marked && !(r->flags & SLK_HOST_CUPTI_ON)) continue;
    uint64_t stream;
    const struct vote key = {r->stream, 0};
    const struct vote *l = NULL;
    if (named_stream(m, S->n, r->stream, r->tid, r->start, &stream) ||
        (l = bsearch(&key, v, nv, sizeof *v, cmp_handle)) != NULL) {
      if (nc == ccap) {
        size_t c = ccap * 2 < H->n ? ccap * 2 : H->n;
        struct item *q = realloc(calls, c * sizeof *q);
        if (!q) goto done;
        calls = q;
        ccap = c;
      }
      calls[nc++] = (struct item){l ? l->stream : stream, r->start, (uint32_t)wk, (uint32_t)h};
    }
  }
  for (size_t j = 0; j < n; j++)
    if (hs[j] == JOIN_NO_API && !(oq[j] & OQ_GRAPH))
      work[no++] = (struct item){ostream[j], ops[at[j]].s, (uint32_t)work_of_kind(ops[at[j]].rkind),
                                 (uint32_t)j};
  qsort(calls, nc, sizeof *calls, cmp_item);
  qsort(work, no, sizeof *work, cmp_item);
  size_t a = 0;
  for (size_t j = 0; j < no; j++) {
    const struct item *o = &work[j];
    while (a < nc && (calls[a].stream < o->stream ||
                      (calls[a].stream == o->stream && calls[a].work < o->work)))
      a++;
    /* the next call of this stream and kind, if it came before the work started */
    if (a < nc && calls[a].stream == o->stream && calls[a].work == o->work &&
        calls[a].start <= o->start) {
      hs[o->ix] = calls[a++].ix;
      *joined += ops[at[o->ix]].rkind == SLK_KERNEL;
    }
  }
  rc = 0;
done:
  free(claimed);
  free(L);
  free(v);
  free(m);
  free(calls);
  free(work);
  return rc;
}

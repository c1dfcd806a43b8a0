/* The multi-rank report (ranks.h; docs/slack-report.md, "Several ranks"). */
#include "ranks.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "json.h"
#include "reader.h"
#include "report.h"
#include "slack.h"

/* ---- arguments ---- */

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

void ranks_free_paths(char **paths, size_t n) {
  for (size_t i = 0; paths && i < n; i++)
    free(paths[i]);
  free(paths);
}

static int push(char ***v, size_t *n, size_t *cap, char *s) {
  if (!s) return -1;
  if (*n + 2 > *cap) {
    size_t c = *cap ? *cap * 2 : 16;
    char **p = realloc(*v, c * sizeof *p);
    if (!p) {
      free(s);
      return -1;
    }
    *v = p;
    *cap = c;
  }
  (*v)[(*n)++] = s;
  (*v)[*n] = NULL;
  return 0;
}

int ranks_expand(const char *cmd, char *const *args, size_t n, char ***out, size_t *nout) {
  char **v = NULL;
  size_t nv = 0, cap = 0;
  for (size_t i = 0; i < n; i++) {
    struct stat st;
    if (stat(args[i], &st) || !S_ISDIR(st.st_mode)) {
      if (push(&v, &nv, &cap, strdup(args[i]))) goto oom;
      continue;
    }
    DIR *d = opendir(args[i]);
    if (!d) {
      fprintf(stderr, "slack %s: %s: %s\n", cmd, args[i], strerror(errno));
      ranks_free_paths(v, nv);
      return EXIT_ERROR;
    }
    size_t first = nv;
    for (struct dirent *e; (e = readdir(d));) {
      size_t len = strlen(e->d_name);
      if (len < 5 || strcmp(e->d_name + len - 4, ".slk") || e->d_name[0] == '.') continue;
      size_t plen = strlen(args[i]);
      char *p = malloc(plen + len + 2);
      if (p)
        snprintf(p, plen + len + 2, "%s%s%s", args[i], args[i][plen - 1] == '/' ? "" : "/",
                 e->d_name);
      if (push(&v, &nv, &cap, p)) {
        closedir(d);
        goto oom;
      }
    }
    closedir(d);
    if (nv == first) {
      fprintf(stderr, "slack %s: %s: a directory without traces (*.slk)\n", cmd, args[i]);
      ranks_free_paths(v, nv);
      return EXIT_ERROR;
    }
    qsort(v + first, nv - first, sizeof *v, cmp_str);
  }
  *out = v;
  *nout = nv;
  return EXIT_OK;
oom:
  fprintf(stderr, "slack %s: out of memory\n", cmd);
  ranks_free_paths(v, nv);
  return EXIT_ERROR;
}

int ranks_detect(char *const *paths, size_t n) {
  char first[64] = "";
  for (size_t i = 0; i < n; i++) {
    char err[256];
    struct trace_reader *rd = trace_reader_open(paths[i], err, sizeof err);
    if (!rd) return 0;
    const char *r = trace_reader_header(rd, "rank");
    int other = r && *r && first[0] && strcmp(r, first);
    if (r && *r && !first[0]) snprintf(first, sizeof first, "%s", r);
    trace_reader_close(rd);
    if (other) return 1;
  }
  return 0;
}

/* ---- exposed communication ---- */

struct span {
  uint64_t a, b;
};
static int cmp_span(const void *x, const void *y) {
  const struct span *p = x, *q = y;
  return p->a < q->a ? -1 : p->a > q->a;
}

uint64_t ranks_comm_kernel_ns(const struct report *rp, size_t gi) {
  if (rp->comm_ns) return rp->comm_ns[gi]; /* summed over the windows (report_window.c) */
  const struct cls_gpu *g = &rp->cr.gpus[gi];
  struct span *v = NULL;
  size_t n = 0, cap = 0;
  for (size_t i = 0; i < rp->nf; i++) {
    const char *host = trace_reader_header(rp->f[i].rd, "host");
    if (strcmp(host ? host : "", g->host ? g->host : "")) continue;
    const struct trace_array *k = &rp->f[i].td.kind[SLK_KERNEL];
    struct cls_comm_memo cm;
    memset(&cm, 0, sizeof cm);
    for (size_t j = 0; j < k->n; j++) {
      const struct slk_record *r = &k->v[j];
      if (r->device != g->device || r->end <= r->start) continue;
      int comm;
      if (!cls_comm_memo_get(&cm, r->name, &comm))
        comm = cls_comm_memo_put(&cm, r->name,
                                 cls_is_comm_kernel(trace_reader_string(rp->f[i].rd, r->name)));
      if (!comm) continue;
      if (n == cap) {
        size_t c = cap ? cap * 2 : 256;
        struct span *p = realloc(v, c * sizeof *p);
        if (!p) {
          free(v);
          return 0;
        }
        v = p;
        cap = c;
      }
      v[n++] = (struct span){r->start, r->end};
    }
  }
  /* kernels of one sorted trace come in start order: sorted already (the union's length does not
   * depend on the order of equal starts) */
  size_t in_order = 1;
  while (in_order < n && v[in_order - 1].a <= v[in_order].a)
    in_order++;
  if (in_order < n) qsort(v, n, sizeof *v, cmp_span);
  uint64_t total = 0, a = 0, b = 0;
  for (size_t i = 0; i < n; i++) {
    if (i && v[i].a <= b) {
      if (v[i].b > b) b = v[i].b;
      continue;
    }
    total += b - a;
    a = v[i].a;
    b = v[i].b;
  }
  total += b - a;
  free(v);
  return total;
}

/* ---- the ranks ---- */

/* One collective of one rank: 96 bytes. */
struct coll {
  uint32_t stream, name, occ, pad; /* the key: stream ordinal, name, occurrence on the stream */
  uint64_t start, end;             /* the rank's own clock */
  uint64_t cls[CLS_COUNT];         /* its GPU's time by class since its previous collective */
};

struct rank {
  const char *path;
  char rank[32], local[32], world[32], host[128], job[160], pid[32];
  long num;
  size_t hi;           /* host index (0: the reference clock) */
  long long rt_mono;   /* start_realtime_ns - start_monotonic_ns */
  int has_rt, has_gpu; /* has_gpu: a GPU with work */
  uint32_t device;
  char gpu[64];
  uint64_t window_ns, idle_ns, time_ns[CLS_COUNT], comm_ns;
  size_t steps;
  uint64_t step_ns, verdict_per;
  int verdict;
  struct coll *c;
  size_t nc, pos;
  /* across ranks */
  uint64_t last_in, waited_ns, caused_ns, max_wait_ns, stall[CLS_COUNT];
  int64_t excess[CLS_COUNT];
  uint64_t *caused_to; /* as a straggler: the wait of each rank it caused */
};

static char **names; /* collective names, across ranks */
static size_t nnames;
static uint32_t intern(const char *s) {
  for (size_t i = 0; i < nnames; i++)
    if (!strcmp(names[i], s)) return (uint32_t)i;
  char **p = realloc(names, (nnames + 1) * sizeof *p);
  if (!p) return UINT32_MAX;
  names = p;
  if (!(names[nnames] = strdup(s))) return UINT32_MAX;
  return (uint32_t)nnames++;
}

static int cmp_key(const struct coll *a, const struct coll *b) {
  if (a->stream != b->stream) return a->stream < b->stream ? -1 : 1;
  if (a->name != b->name) return a->name < b->name ? -1 : 1;
  return a->occ < b->occ ? -1 : a->occ > b->occ;
}
static int cmp_coll(const void *a, const void *b) { return cmp_key(a, b); }

static void header(struct trace_reader *rd, const char *key, char *out, size_t cap) {
  const char *v = trace_reader_header(rd, key);
  snprintf(out, cap, "%s", v ? v : "");
}

/* Loads rank r's trace, classifies it and keeps its summary and its collectives. */
static int load_rank(struct rank *r, const struct cls_options *opt) {
  struct report rp;
  char *const paths[1] = {(char *)r->path};
  int rc = report_load(&rp, "report", paths, 1, opt);
  if (rc != EXIT_OK) return rc;
  report_warn_tails(&rp, "report");
  const struct trace_array *k = &rp.f[0].td.kind[SLK_KERNEL];
  struct trace_reader *rd = rp.f[0].rd;
  /* the GPU: the one with the most collectives, else the first */
  size_t gi = 0, best = 0;
  for (size_t g = 0; g < rp.cr.ngpus; g++) {
    size_t cnt = 0;
    for (size_t j = 0; j < k->n; j++)
      cnt += k->v[j].device == rp.cr.gpus[g].device &&
             cls_is_comm_kernel(trace_reader_string(rd, k->v[j].name));
    if (cnt > best) best = cnt, gi = g;
  }
  rc = EXIT_OK;
  if (rp.cr.ngpus) {
    const struct cls_gpu *g = &rp.cr.gpus[gi];
    r->has_gpu = 1;
    r->device = g->device;
    snprintf(r->gpu, sizeof r->gpu, "%s", g->name ? g->name : "");
    r->window_ns = g->window_ns;
    r->idle_ns = g->idle_ns;
    memcpy(r->time_ns, g->time_ns, sizeof r->time_ns);
    r->comm_ns = ranks_comm_kernel_ns(&rp, gi);
    r->steps = g->steps.count;
    r->step_ns = g->steps.step_ns;
    r->verdict = report_verdict(g, &r->verdict_per);
    uint64_t streams[64];
    size_t nstreams = 0;
    struct {
      uint32_t stream, name, n;
    } occ[256];
    size_t nocc = 0;
    uint64_t prev = g->nseg ? g->seg[0].start : 0;
    size_t si = 0, cap = 0;
    for (size_t j = 0; j < k->n && rc == EXIT_OK; j++) {
      const struct slk_record *x = &k->v[j];
      if (x->device != g->device || !cls_is_comm_kernel(trace_reader_string(rd, x->name))) continue;
      uint32_t s = 0;
      while (s < nstreams && streams[s] != x->stream)
        s++;
      if (s == nstreams && nstreams < 64) streams[nstreams++] = x->stream;
      uint32_t nm = intern(trace_reader_string(rd, x->name));
      size_t o = 0;
      while (o < nocc && (occ[o].stream != s || occ[o].name != nm))
        o++;
      if (nm == UINT32_MAX) {
        rc = EXIT_ERROR;
        break;
      }
      if (o == 256) continue; /* past 256 (stream, name) pairs: not matched */
      if (o == nocc) occ[nocc++].n = 0, occ[o].stream = s, occ[o].name = nm;
      if (r->nc == cap) {
        cap = cap ? cap * 2 : 256;
        struct coll *p = realloc(r->c, cap * sizeof *p);
        if (!p) {
          rc = EXIT_ERROR;
          break;
        }
        r->c = p;
      }
      struct coll *c = &r->c[r->nc++];
      memset(c, 0, sizeof *c);
      c->stream = s;
      c->name = nm;
      c->occ = occ[o].n++;
      c->start = x->start;
      c->end = x->end;
      /* the rank's time by class from its previous collective's end to this one's start */
      while (si < g->nseg && g->seg[si].end <= prev)
        si++;
      for (size_t q = si; q < g->nseg && g->seg[q].start < x->start; q++) {
        uint64_t a = g->seg[q].start > prev ? g->seg[q].start : prev;
        uint64_t b = g->seg[q].end < x->start ? g->seg[q].end : x->start;
        if (b > a) c->cls[g->seg[q].cls] += b - a;
      }
      if (x->end > prev) prev = x->end;
    }
    if (rc != EXIT_OK) fprintf(stderr, "slack report: %s: out of memory\n", r->path);
  }
  report_unload(&rp);
  if (rc == EXIT_OK && r->nc) qsort(r->c, r->nc, sizeof *r->c, cmp_coll);
  return rc;
}

/* ---- matching ---- */

/* The next collective key present on some rank: the ranks holding it (indices into R) in m[],
 * their collectives at R[m[i]].c[R[m[i]].pos]; advances past it. 0 when none is left. */
static size_t next_group(struct rank *R, size_t nr, size_t *m) {
  const struct coll *min = NULL;
  for (size_t i = 0; i < nr; i++)
    if (R[i].pos < R[i].nc && (!min || cmp_key(&R[i].c[R[i].pos], min) < 0))
      min = &R[i].c[R[i].pos];
  if (!min) return 0;
  struct coll key = *min;
  size_t n = 0;
  for (size_t i = 0; i < nr; i++)
    if (R[i].pos < R[i].nc && !cmp_key(&R[i].c[R[i].pos], &key)) m[n++] = i;
  return n;
}
static void advance(struct rank *R, const size_t *m, size_t n) {
  for (size_t i = 0; i < n; i++)
    R[m[i]].pos++;
}
static const struct coll *at(const struct rank *R, size_t i) { return &R[i].c[R[i].pos]; }

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}
/* Out of line on purpose: inlined twice into align(), GCC 12.2 at -O2 gave the second call the
 * first one's v[n / 2] (the residual skew came out as minus the offset; the skew case of
 * tests/test_ranks.sh checks it). */
__attribute__((noinline)) static int64_t median(int64_t *v, size_t n) {
  if (!n) return 0;
  qsort(v, n, sizeof *v, cmp_i64);
  return v[n / 2];
}

struct hostclk {
  const char *name;
  int64_t off;        /* added to this host's times: the reference host's clock */
  const char *source; /* "shared", "collective_ends", "realtime", "none" */
  size_t n;           /* collectives it was aligned on */
  uint64_t resid_median, resid_max;
  int has_rt;
  int64_t rt_off; /* what the realtime headers said */
  size_t first_rank, nranks;
};

struct top {
  size_t key_stream, key_name, key_occ, last;
  uint64_t max_wait, t;
  uint64_t cls[CLS_COUNT];
  int cause;
  uint64_t *waits; /* per rank index */
};

struct job {
  struct rank *R;
  size_t nr;
  struct hostclk *H;
  size_t nh;
  char job[160];
  long world;
  long *missing;
  size_t nmissing;
  size_t matched, incomplete, balanced, counted, nstreams;
  uint64_t thr, spread_median, spread_max, t0;
  struct top *top;
  size_t ntop, maxtop;
};

static int64_t aligned(const struct job *J, size_t i, uint64_t t) {
  return (int64_t)t + J->H[J->R[i].hi].off;
}

/* The clocks: one per host; each host's offset to the reference host (the lowest rank's) from
 * the ends of the collectives both ran (a collective ends at about the same instant everywhere),
 * else from the realtime headers. */
static int align(struct job *J, size_t *m) {
  size_t nh = J->nh;
  int64_t **d = calloc(nh, sizeof *d);
  size_t *nd = calloc(nh, sizeof *nd), *cap = calloc(nh, sizeof *cap);
  int64_t *sp = NULL;
  size_t nsp = 0, capsp = 0;
  int rc = -1;
  if (!d || !nd || !cap) goto out;
  for (size_t i = 0; i < J->nr; i++)
    J->R[i].pos = 0;
  for (size_t n; (n = next_group(J->R, J->nr, m)); advance(J->R, m, n)) {
    size_t ref = SIZE_MAX;
    for (size_t i = 0; i < n && ref == SIZE_MAX; i++)
      if (J->R[m[i]].hi == 0) ref = m[i];
    for (size_t h = 1; h < nh && ref != SIZE_MAX; h++)
      for (size_t i = 0; i < n; i++)
        if (J->R[m[i]].hi == h) {
          if (nd[h] == cap[h]) {
            cap[h] = cap[h] ? cap[h] * 2 : 256;
            int64_t *p = realloc(d[h], cap[h] * sizeof *p);
            if (!p) goto out;
            d[h] = p;
          }
          d[h][nd[h]++] = (int64_t)at(J->R, ref)->end - (int64_t)at(J->R, m[i])->end;
          break;
        }
  }
  for (size_t h = 0; h < nh; h++) {
    struct hostclk *c = &J->H[h];
    const struct rank *r0 = &J->R[0], *rh = &J->R[c->first_rank];
    c->has_rt = r0->has_rt && rh->has_rt;
    c->rt_off = c->has_rt ? rh->rt_mono - r0->rt_mono : 0;
    if (h == 0) {
      c->source = "shared";
      continue;
    }
    if (nd[h]) {
      c->n = nd[h];
      c->off = median(d[h], nd[h]);
      c->source = "collective_ends";
      for (size_t k = 0; k < nd[h]; k++)
        d[h][k] = d[h][k] > c->off ? d[h][k] - c->off : c->off - d[h][k];
      c->resid_median = (uint64_t)median(d[h], nd[h]);
      c->resid_max = (uint64_t)d[h][nd[h] - 1];
    } else {
      c->off = c->rt_off;
      c->source = c->has_rt ? "realtime" : "none";
    }
  }
  /* the residual skew over all ranks: the spread of each collective's aligned ends */
  for (size_t i = 0; i < J->nr; i++)
    J->R[i].pos = 0;
  for (size_t n; (n = next_group(J->R, J->nr, m)); advance(J->R, m, n)) {
    if (n < 2) continue;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
      int64_t e = aligned(J, m[i], at(J->R, m[i])->end);
      if (e < lo) lo = e;
      if (e > hi) hi = e;
    }
    if (nsp == capsp) {
      capsp = capsp ? capsp * 2 : 256;
      int64_t *p = realloc(sp, capsp * sizeof *p);
      if (!p) goto out;
      sp = p;
    }
    sp[nsp++] = hi - lo;
  }
  J->spread_median = (uint64_t)median(sp, nsp);
  J->spread_max = nsp ? (uint64_t)sp[nsp - 1] : 0;
  rc = 0;
out:
  for (size_t h = 0; d && h < nh; h++)
    free(d[h]);
  free(d);
  free(nd);
  free(cap);
  free(sp);
  return rc;
}

/* The class behind a straggler's lateness: the one where it spent the most more than the
 * others' median (communication aside: that is the waiting itself); -1 when none. */
static int cause_of(const int64_t *excess) {
  int best = -1;
  for (int c = 0; c < CLS_COUNT; c++)
    if (c != CLS_COMMUNICATION && excess[c] > 0 && (best < 0 || excess[c] > excess[best])) best = c;
  return best;
}

static int stragglers(struct job *J, size_t *m) {
  uint64_t *med = malloc(J->nr * sizeof *med);
  int64_t *tmp = malloc(J->nr * sizeof *tmp);
  int64_t *s = malloc(J->nr * sizeof *s);
  int rc = -1;
  if (!med || !tmp || !s) goto out;
  J->thr = 50000 + 4 * J->spread_median;
  J->t0 = UINT64_MAX;
  for (size_t i = 0; i < J->nr; i++) {
    J->R[i].pos = 0;
    if (J->R[i].nc && (uint64_t)aligned(J, i, J->R[i].c[0].start) < J->t0)
      J->t0 = (uint64_t)aligned(J, i, J->R[i].c[0].start);
  }
  uint32_t streams = 0;
  for (size_t n; (n = next_group(J->R, J->nr, m)); advance(J->R, m, n)) {
    const struct coll *k0 = at(J->R, m[0]);
    if (k0->stream + 1 > streams) streams = k0->stream + 1;
    if (n < J->nr) {
      J->incomplete++;
      continue;
    }
    J->matched++;
    size_t last = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
      s[i] = aligned(J, m[i], at(J->R, m[i])->start);
      if (s[i] > s[last]) last = i;
      if (s[i] < s[first]) first = i;
    }
    uint64_t maxw = (uint64_t)(s[last] - s[first]);
    if (maxw < J->thr) {
      J->balanced++;
      continue;
    }
    J->counted++;
    struct rank *L = &J->R[m[last]];
    const struct coll *lc = at(J->R, m[last]);
    if (!L->caused_to && !(L->caused_to = calloc(J->nr, sizeof *L->caused_to))) goto out;
    L->last_in++;
    if (maxw > L->max_wait_ns) L->max_wait_ns = maxw;
    for (size_t i = 0; i < n; i++) {
      if (i == last) continue;
      uint64_t w = (uint64_t)(s[last] - s[i]);
      J->R[m[i]].waited_ns += w;
      L->caused_to[m[i]] += w;
      L->caused_ns += w;
    }
    int64_t ex[CLS_COUNT];
    for (int c = 0; c < CLS_COUNT; c++) {
      size_t q = 0;
      for (size_t i = 0; i < n; i++)
        if (i != last) tmp[q++] = (int64_t)at(J->R, m[i])->cls[c];
      ex[c] = (int64_t)lc->cls[c] - median(tmp, q);
      L->stall[c] += lc->cls[c];
      L->excess[c] += ex[c];
    }
    /* the longest waits, kept sorted */
    size_t pos = J->ntop;
    while (pos > 0 && J->top[pos - 1].max_wait < maxw)
      pos--;
    if (pos >= J->maxtop) continue;
    if (J->ntop == J->maxtop) {
      free(J->top[J->ntop - 1].waits);
      J->ntop--;
    }
    memmove(&J->top[pos + 1], &J->top[pos], (J->ntop - pos) * sizeof *J->top);
    J->ntop++;
    struct top *t = &J->top[pos];
    *t = (struct top){lc->stream, lc->name,     lc->occ,
                      m[last],    maxw,         (uint64_t)s[last] - J->t0,
                      {0},        cause_of(ex), calloc(J->nr, sizeof *t->waits)};
    if (!t->waits) goto out;
    memcpy(t->cls, lc->cls, sizeof t->cls);
    for (size_t i = 0; i < n; i++)
      t->waits[m[i]] = (uint64_t)(s[last] - s[i]);
  }
  J->nstreams = streams;
  rc = 0;
out:
  free(med);
  free(tmp);
  free(s);
  return rc;
}

/* ---- output ---- */

/* The median spread of a collective's ends across ranks beyond which the files do not look like
 * one run (NCCL's ranks leave a collective within a few microseconds of each other). */
#define ENDS_AGREE_NS 100000

static void json_cls(struct json *j, const char *key, const uint64_t *v) {
  json_obj(j, key);
  for (int c = 0; c < CLS_COUNT; c++)
    json_u64(j, cls_name(c), v[c]);
  json_obj_end(j);
}

static const char *rank_label(const struct rank *r) { return r->rank; }

static void print_json(const struct job *J) {
  struct json j;
  json_begin(&j, stdout);
  json_obj(&j, NULL);
  json_arr(&j, "files");
  for (size_t i = 0; i < J->nr; i++)
    json_str(&j, NULL, J->R[i].path);
  json_arr_end(&j);
  json_str(&j, "job_id", J->job);
  if (J->world > 0)
    json_u64(&j, "world_size", (uint64_t)J->world);
  else
    json_null(&j, "world_size");
  json_arr(&j, "missing_ranks");
  for (size_t i = 0; i < J->nmissing; i++)
    json_u64(&j, NULL, (uint64_t)J->missing[i]);
  json_arr_end(&j);
  json_arr(&j, "ranks");
  for (size_t i = 0; i < J->nr; i++) {
    const struct rank *r = &J->R[i];
    json_obj(&j, NULL);
    json_u64(&j, "rank", (uint64_t)r->num);
    json_str(&j, "local_rank", r->local);
    json_str(&j, "host", r->host);
    json_str(&j, "pid", r->pid);
    json_str(&j, "file", r->path);
    if (r->has_gpu) {
      json_u64(&j, "device", r->device);
      json_str(&j, "gpu", r->gpu);
    } else {
      json_null(&j, "device");
      json_null(&j, "gpu");
    }
    json_u64(&j, "window_ns", r->window_ns);
    json_u64(&j, "idle_ns", r->idle_ns);
    json_cls(&j, "time_ns", r->time_ns);
    json_obj(&j, "communication");
    json_u64(&j, "kernel_ns", r->comm_ns);
    json_u64(&j, "exposed_ns", r->time_ns[CLS_COMMUNICATION]);
    json_u64(&j, "overlapped_ns",
             r->comm_ns > r->time_ns[CLS_COMMUNICATION] ? r->comm_ns - r->time_ns[CLS_COMMUNICATION]
                                                        : 0);
    json_obj_end(&j);
    json_u64(&j, "steps", r->steps);
    json_u64(&j, "step_ns", r->step_ns);
    json_str(&j, "verdict", r->verdict < 0 ? "none" : cls_name(r->verdict));
    json_u64(&j, "verdict_per_step_ns", r->verdict < 0 ? 0 : r->verdict_per);
    json_u64(&j, "collectives", r->nc);
    json_u64(&j, "last_to_arrive", r->last_in);
    json_u64(&j, "waited_in_collectives_ns", r->waited_ns);
    json_obj_end(&j);
  }
  json_arr_end(&j);
  json_obj(&j, "clocks");
  json_str(&j, "reference_host", J->H[0].name);
  json_u64(&j, "end_spread_median_ns", J->spread_median);
  json_u64(&j, "end_spread_max_ns", J->spread_max);
  json_bool(&j, "ends_agree", J->spread_median <= ENDS_AGREE_NS);
  json_arr(&j, "hosts");
  for (size_t h = 0; h < J->nh; h++) {
    const struct hostclk *c = &J->H[h];
    json_obj(&j, NULL);
    json_str(&j, "host", c->name);
    json_u64(&j, "ranks", c->nranks);
    json_str(&j, "source", c->source);
    json_i64(&j, "offset_ns", c->off);
    json_u64(&j, "collectives", c->n);
    json_u64(&j, "residual_skew_median_ns", c->resid_median);
    json_u64(&j, "residual_skew_max_ns", c->resid_max);
    if (c->has_rt)
      json_i64(&j, "realtime_offset_ns", c->rt_off);
    else
      json_null(&j, "realtime_offset_ns");
    json_obj_end(&j);
  }
  json_arr_end(&j);
  json_obj_end(&j);
  json_obj(&j, "collectives");
  json_u64(&j, "matched", J->matched);
  json_u64(&j, "incomplete", J->incomplete);
  json_u64(&j, "streams", J->nstreams);
  json_u64(&j, "threshold_ns", J->thr);
  json_u64(&j, "balanced", J->balanced);
  json_u64(&j, "with_straggler", J->counted);
  json_arr(&j, "names");
  for (size_t k = 0; k < nnames; k++)
    json_str(&j, NULL, names[k]);
  json_arr_end(&j);
  json_obj_end(&j);
  json_arr(&j, "stragglers");
  for (size_t i = 0; i < J->nr; i++) {
    const struct rank *r = &J->R[i];
    if (!r->last_in) continue;
    json_obj(&j, NULL);
    json_u64(&j, "rank", (uint64_t)r->num);
    json_str(&j, "host", r->host);
    json_u64(&j, "collectives", r->last_in);
    json_u64(&j, "of", J->matched);
    json_u64(&j, "others_waited_ns", r->caused_ns);
    json_u64(&j, "mean_wait_ns", r->caused_ns / (r->last_in * (J->nr - 1)));
    json_u64(&j, "max_wait_ns", r->max_wait_ns);
    json_arr(&j, "waits");
    for (size_t k = 0; k < J->nr; k++)
      if (k != i) {
        json_obj(&j, NULL);
        json_u64(&j, "rank", (uint64_t)J->R[k].num);
        json_u64(&j, "ns", r->caused_to[k]);
        json_obj_end(&j);
      }
    json_arr_end(&j);
    int cause = cause_of(r->excess);
    json_str(&j, "cause", cause < 0 ? "none" : cls_name(cause));
    json_u64(&j, "cause_excess_ns", cause < 0 ? 0 : (uint64_t)r->excess[cause]);
    json_str(&j, "fix", cause < 0 ? NULL : cls_fix(cause));
    json_cls(&j, "stall_ns", r->stall);
    json_obj(&j, "excess_ns");
    for (int c = 0; c < CLS_COUNT; c++)
      json_i64(&j, cls_name(c), r->excess[c]);
    json_obj_end(&j);
    json_obj_end(&j);
  }
  json_arr_end(&j);
  json_arr(&j, "longest_waits");
  for (size_t t = 0; t < J->ntop; t++) {
    const struct top *x = &J->top[t];
    json_obj(&j, NULL);
    json_str(&j, "name", names[x->key_name]);
    json_u64(&j, "stream", x->key_stream);
    json_u64(&j, "occurrence", x->key_occ);
    json_u64(&j, "at_ns", x->t);
    json_u64(&j, "last_rank", (uint64_t)J->R[x->last].num);
    json_u64(&j, "max_wait_ns", x->max_wait);
    json_arr(&j, "waits");
    for (size_t k = 0; k < J->nr; k++) {
      json_obj(&j, NULL);
      json_u64(&j, "rank", (uint64_t)J->R[k].num);
      json_u64(&j, "ns", x->waits[k]);
      json_obj_end(&j);
    }
    json_arr_end(&j);
    json_cls(&j, "straggler_ns", x->cls);
    json_str(&j, "cause", x->cause < 0 ? "none" : cls_name(x->cause));
    json_obj_end(&j);
  }
  json_arr_end(&j);
  json_obj_end(&j);
  json_end(&j);
}

static void print_text(const struct job *J) {
  char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
  printf("slack report: %zu ranks of job %s", J->nr, J->job[0] ? J->job : "(no job id)");
  if (J->world > 0) printf(" (world size %ld)", J->world);
  printf("\n");
  for (size_t i = 0; i < J->nr; i++)
    printf("  rank %-4s %s, local rank %s, pid %s: %s\n", rank_label(&J->R[i]), J->R[i].host,
           J->R[i].local[0] ? J->R[i].local : "?", J->R[i].pid, J->R[i].path);
  if (J->nmissing) {
    printf("missing ranks (no trace given):");
    for (size_t i = 0; i < J->nmissing; i++)
      printf(" %ld", J->missing[i]);
    printf("; collectives are matched over the ranks given, and a missing rank may be the one "
           "the others wait for\n");
  }
  printf("\nper rank (its GPU; communication: NCCL kernels, exposed when no compute kernel runs "
         "alongside):\n");
  printf("  %-5s %-10s %3s %10s %10s %10s %10s %10s %6s %10s  %s\n", "rank", "host", "gpu",
         "window", "compute", "comm", "exposed", "idle", "steps", "step", "verdict");
  for (size_t i = 0; i < J->nr; i++) {
    const struct rank *r = &J->R[i];
    if (!r->has_gpu) {
      printf("  %-5s %-10s   - (no GPU work)\n", r->rank, r->host);
      continue;
    }
    printf("  %-5s %-10s %3u %10s %10s %10s %10s %10s %6zu %10s  ", r->rank, r->host, r->device,
           slack_fmt_ns(b1, sizeof b1, r->window_ns),
           slack_fmt_ns(b2, sizeof b2, r->time_ns[CLS_COMPUTE]),
           slack_fmt_ns(b3, sizeof b3, r->comm_ns),
           slack_fmt_ns(b4, sizeof b4, r->time_ns[CLS_COMMUNICATION]),
           slack_fmt_ns(b5, sizeof b5, r->idle_ns), r->steps,
           r->steps ? slack_fmt_ns(b6, sizeof b6, r->step_ns) : "-");
    if (r->verdict < 0)
      printf("none\n");
    else
      printf("%s, %s per step\n", report_verdict_label(r->verdict),
             slack_fmt_ns(b2, sizeof b2, r->verdict_per));
  }
  printf("\nclocks: %s is the reference", J->H[0].name);
  printf(J->nh == 1 ? " (one host: its ranks share its clock)\n" : "\n");
  for (size_t h = 1; h < J->nh; h++) {
    const struct hostclk *c = &J->H[h];
    printf("  %s: its clock reads %s %s %s's, ", c->name,
           slack_fmt_ns(b1, sizeof b1, (uint64_t)(c->off < 0 ? -c->off : c->off)),
           c->off <= 0 ? "ahead of" : "behind", J->H[0].name);
    if (!strcmp(c->source, "collective_ends"))
      printf("from the ends of %zu collectives, residual skew %s median, %s max", c->n,
             slack_fmt_ns(b2, sizeof b2, c->resid_median),
             slack_fmt_ns(b3, sizeof b3, c->resid_max));
    else
      printf("from %s", !strcmp(c->source, "realtime") ? "the realtime clocks in the headers "
                                                         "(no collective in common)"
                                                       : "nothing (not aligned)");
    if (c->has_rt && strcmp(c->source, "realtime"))
      printf("; the headers' realtime clocks said %s %s",
             slack_fmt_ns(b4, sizeof b4, (uint64_t)(c->rt_off < 0 ? -c->rt_off : c->rt_off)),
             c->rt_off <= 0 ? "ahead" : "behind");
    printf("\n");
  }
  printf("  collectives' ends after alignment: within %s of each other (median), %s at most\n",
         slack_fmt_ns(b1, sizeof b1, J->spread_median), slack_fmt_ns(b2, sizeof b2, J->spread_max));
  if (J->spread_median > ENDS_AGREE_NS)
    printf("  warning: a collective ends at about the same instant on every rank, and these do "
           "not (%s apart): the traces may not be one run of one job\n",
           slack_fmt_ns(b1, sizeof b1, J->spread_median));
  printf("\ncollectives: %zu matched on every rank (%zu stream%s, by name and order), %zu "
         "incomplete; %zu with a rank %s or more later than the first\n",
         J->matched, J->nstreams, J->nstreams == 1 ? "" : "s", J->incomplete, J->counted,
         slack_fmt_ns(b1, sizeof b1, J->thr));
  int any = 0;
  for (size_t i = 0; i < J->nr; i++) {
    const struct rank *r = &J->R[i];
    if (!r->last_in) continue;
    if (!any)
      printf("\nstragglers (the last rank to arrive at a collective; the others wait "
             "inside it):\n");
    any = 1;
    printf("  rank %s (%s): last in %llu of %zu collectives; the others waited %s in all, %s per "
           "rank per collective (max %s)\n",
           r->rank, r->host, (unsigned long long)r->last_in, J->matched,
           slack_fmt_ns(b1, sizeof b1, r->caused_ns),
           slack_fmt_ns(b2, sizeof b2, r->caused_ns / (r->last_in * (J->nr - 1))),
           slack_fmt_ns(b3, sizeof b3, r->max_wait_ns));
    printf("    waited:");
    for (size_t k = 0; k < J->nr; k++)
      if (k != i)
        printf(" rank %s %s;", J->R[k].rank, slack_fmt_ns(b1, sizeof b1, r->caused_to[k]));
    printf("\n");
    int cause = cause_of(r->excess);
    if (cause >= 0) {
      printf("    cause: %s: %s before those collectives, %s more than the others' median (%s "
             "per collective)\n",
             report_class_label[cause], slack_fmt_ns(b1, sizeof b1, r->stall[cause]),
             slack_fmt_ns(b2, sizeof b2, (uint64_t)r->excess[cause]),
             slack_fmt_ns(b3, sizeof b3, (uint64_t)r->excess[cause] / r->last_in));
      printf("    fix: %s\n", cls_fix(cause));
    } else
      printf("    cause: none of its classes exceeds the others' (a wait slack cannot see)\n");
    printf("    its GPU between its previous collective and those, in all:");
    for (int c = 0; c < CLS_COUNT; c++)
      if (r->stall[c] && c != CLS_COMMUNICATION)
        printf(" %s %s;", report_class_label[c], slack_fmt_ns(b1, sizeof b1, r->stall[c]));
    printf("\n");
  }
  if (!any)
    printf("\nstragglers: none (no rank arrived %s or more after the first)\n",
           slack_fmt_ns(b1, sizeof b1, J->thr));
  if (J->ntop) {
    printf("\nlongest waits (at: since the first collective):\n");
    printf("  %10s %-6s %10s  %-32s %s\n", "at", "last", "wait", "collective", "its cause");
    for (size_t t = 0; t < J->ntop; t++) {
      const struct top *x = &J->top[t];
      char nm[64];
      snprintf(nm, sizeof nm, "%.24s #%zu", names[x->key_name], x->key_occ);
      printf("  %10s %-6s %10s  %-32s %s", slack_fmt_ns(b1, sizeof b1, x->t), J->R[x->last].rank,
             slack_fmt_ns(b2, sizeof b2, x->max_wait), nm,
             x->cause < 0 ? "-" : report_class_label[x->cause]);
      if (x->cause >= 0) printf(" %s", slack_fmt_ns(b3, sizeof b3, x->cls[x->cause]));
      printf("\n");
    }
  }
  printf("\nper-rank detail: slack report FILE on one rank's trace\n");
}

static int cmp_rank(const void *a, const void *b) {
  const struct rank *x = a, *y = b;
  return x->num < y->num ? -1 : x->num > y->num;
}

int ranks_report(char *const *paths, size_t n, const struct cls_options *opt, int as_json,
                 int merge_ok, size_t top) {
  struct job J = {0};
  int rc = EXIT_ERROR;
  size_t *m = NULL;
  J.R = calloc(n, sizeof *J.R);
  J.H = calloc(n, sizeof *J.H);
  J.missing = NULL;
  J.maxtop = top;
  J.top = calloc(top + 1, sizeof *J.top);
  m = calloc(n, sizeof *m);
  if (!J.R || !J.H || !J.top || !m) goto oom;
  for (size_t i = 0; i < n; i++) {
    char err[256];
    struct trace_reader *rd = trace_reader_open(paths[i], err, sizeof err);
    if (!rd) {
      fprintf(stderr, "slack report: %s: %s\n", paths[i], err);
      goto out;
    }
    struct rank *r = &J.R[J.nr];
    r->path = paths[i];
    header(rd, "rank", r->rank, sizeof r->rank);
    header(rd, "local_rank", r->local, sizeof r->local);
    header(rd, "world_size", r->world, sizeof r->world);
    header(rd, "host", r->host, sizeof r->host);
    header(rd, "job_id", r->job, sizeof r->job);
    header(rd, "pid", r->pid, sizeof r->pid);
    const char *rt = trace_reader_header(rd, "start_realtime_ns"),
               *mono = trace_reader_header(rd, "start_monotonic_ns");
    r->has_rt = rt && mono && *rt && *mono;
    if (r->has_rt) r->rt_mono = strtoll(rt, NULL, 10) - strtoll(mono, NULL, 10);
    trace_reader_close(rd);
    char *end;
    r->num = strtol(r->rank, &end, 10);
    if (!r->rank[0] || *end || r->num < 0) {
      fprintf(stderr,
              "slack report: %s: no rank in its header: left out of the report across "
              "ranks (report it alone)\n",
              paths[i]);
      continue;
    }
    for (size_t k = 0; k < J.nr; k++) {
      int same;
      if (J.R[k].num == r->num) {
        fprintf(stderr,
                "slack report: %s and %s are both rank %ld: two runs, or one process "
                "given twice; give one trace per rank\n",
                J.R[k].path, r->path, r->num);
        rc = EXIT_USAGE;
        goto out;
      }
      if (!merge_ok && report_same_job(J.R[k].job, r->job, &same)) {
        fprintf(stderr,
                "slack report: %s (job %s) and %s (job %s) are ranks of different jobs; "
                "report one job at a time (or pass --merge to take them as one)\n",
                J.R[k].path, J.R[k].job, r->path, r->job);
        rc = EXIT_USAGE;
        goto out;
      }
    }
    long w = strtol(r->world, NULL, 10);
    if (w > J.world) J.world = w;
    if (!J.job[0]) snprintf(J.job, sizeof J.job, "%s", r->job);
    J.nr++;
  }
  if (J.nr < 2) {
    fprintf(stderr, "slack report: fewer than two ranks to report across\n");
    rc = EXIT_USAGE;
    goto out;
  }
  qsort(J.R, J.nr, sizeof *J.R, cmp_rank);
  for (size_t i = 0; i < J.nr; i++) {
    size_t h = 0;
    while (h < J.nh && strcmp(J.H[h].name, J.R[i].host))
      h++;
    if (h == J.nh) J.H[J.nh++] = (struct hostclk){.name = J.R[i].host, .first_rank = i};
    J.R[i].hi = h;
    J.H[h].nranks++;
  }
  for (long k = 0; k < J.world; k++) {
    size_t i = 0;
    while (i < J.nr && J.R[i].num != k)
      i++;
    if (i < J.nr) continue;
    long *p = realloc(J.missing, (J.nmissing + 1) * sizeof *p);
    if (!p) goto oom;
    J.missing = p;
    J.missing[J.nmissing++] = k;
  }
  /* one rank at a time: its trace is freed before the next is read */
  for (size_t i = 0; i < J.nr; i++)
    if ((rc = load_rank(&J.R[i], opt)) != EXIT_OK) goto out;
  rc = EXIT_ERROR;
  if (align(&J, m) || stragglers(&J, m)) goto oom;
  if (as_json)
    print_json(&J);
  else
    print_text(&J);
  rc = EXIT_OK;
  goto out;
oom:
  fprintf(stderr, "slack report: out of memory\n");
  rc = EXIT_ERROR;
out:
  for (size_t i = 0; J.R && i < n; i++) {
    free(J.R[i].c);
    free(J.R[i].caused_to);
  }
  for (size_t t = 0; J.top && t < J.ntop; t++)
    free(J.top[t].waits);
  for (size_t k = 0; k < nnames; k++)
    free(names[k]);
  free(names);
  names = NULL;
  nnames = 0;
  free(J.top);
  free(J.R);
  free(J.H);
  free(J.missing);
  free(m);
  return rc;
}

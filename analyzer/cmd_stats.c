/* slack stats: the summary tables of `nsys stats`, from a slack trace (docs/slack-stats.md).
 *
 * Same report names, same columns in the same order, same units and the same rounding as the
 * reports of Nsight Systems 2025.3, so the numbers can be held side by side:
 *
 *   cuda_api_sum           CUDA API calls by function
 *   cuda_gpu_kern_sum      kernels by name
 *   cuda_gpu_mem_time_sum  copies (by kind) and memsets, by time
 *   cuda_gpu_mem_size_sum  the same, by bytes (MB = 10^6 bytes)
 *
 * As nsys computes them: Time (%) is the row's share of the table's total, rounded to 0.1;
 * Avg, Med and StdDev are rounded to 0.1 ns (half away from zero, like SQLite's round());
 * Med is the middle value, or the mean of the two middle ones; StdDev is the sample standard
 * deviation (n - 1), 0 for a single instance. Rows by total, largest first.
 *
 * The trace is read once, streaming; each group keeps its distinct values and their counts (the
 * median and the standard deviation come from them exactly), all groups together at most
 * SLACK_STATS_VALUES of them: past that, the values above a bound are read again later. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "nsys_names.h"
#include "slack.h"
#include "u64map.h"

static const char usage[] =
    "usage: slack stats [--report NAME] [--format table|csv] [--output PREFIX] [--mangled] FILE\n"
    "  --report NAME    a report to print (repeat, or separate with commas); default: all of\n"
    "                   cuda_api_sum, cuda_gpu_kern_sum, cuda_gpu_mem_time_sum,\n"
    "                   cuda_gpu_mem_size_sum\n"
    "  --format FMT     table (default) or csv\n"
    "  --output PREFIX  write each report to PREFIX_NAME.txt (table) or PREFIX_NAME.csv\n"
    "                   instead of standard output\n"
    "  --mangled        kernel names as recorded (default: C++ names demangled)\n";

/* ---- groups: values (durations or sizes) collected under a 64-bit key ----
 *
 * A group keeps its values as distinct value -> count (what the median and the standard
 * deviation of nsys's reports need, computed over them in order exactly as over the sorted
 * values: the same sums, in the same order), and n, total, min and max as they come. All groups
 * together hold at most `budget` distinct values (SLACK_STATS_VALUES, docs/ENVIRONMENT.md): past
 * it the group with the most gives up its upper half (it keeps the values below a bound, hi) and
 * the trace is read again for the values from there on, as many times as it takes. */

struct vent {
  uint64_t v, c; /* a value and how many times it came; c 0: an empty slot */
};

struct vmap {
  struct vent *e;
  size_t n, cap;  /* cap a power of 2, at most 3/4 full */
  unsigned shift; /* 64 - log2(cap) */
};

#define VHASH(v, shift) ((size_t)(((v)*0x9e3779b97f4a7c15ull) >> (shift)))

static void vmap_free(struct vmap *m) {
  free(m->e);
  memset(m, 0, sizeof *m);
}

/* m emptied into room for n values. 0, or -1 when out of memory. */
static int vmap_reset(struct vmap *m, size_t n) {
  size_t cap = 16;
  unsigned bits = 4;
  while (4 * n > 3 * cap) {
    cap *= 2;
    bits++;
  }
  struct vent *e = calloc(cap, sizeof *e);
  if (!e) return -1;
  free(m->e);
  m->e = e;
  m->n = 0;
  m->cap = cap;
  m->shift = 64 - bits;
  return 0;
}

/* Adds c times value v: 1 when v is new, 0 when it was there, -1 when out of memory. */
static int vmap_add(struct vmap *m, uint64_t v, uint64_t c) {
  if (m->cap) {
    size_t i = VHASH(v, m->shift);
    for (;; i = (i + 1) & (m->cap - 1)) {
      if (!m->e[i].c) break;
      if (m->e[i].v == v) {
        m->e[i].c += c;
        return 0;
      }
    }
    if (4 * (m->n + 1) <= 3 * m->cap) {
      m->e[i] = (struct vent){v, c};
      m->n++;
      return 1;
    }
  }
  struct vmap g = {0};
  if (vmap_reset(&g, m->n + 1)) return -1;
  for (size_t k = 0; k < m->cap; k++)
    if (m->e[k].c) {
      size_t i = VHASH(m->e[k].v, g.shift);
      while (g.e[i].c)
        i = (i + 1) & (g.cap - 1);
      g.e[i] = m->e[k];
    }
  g.n = m->n;
  free(m->e);
  *m = g;
  return vmap_add(m, v, c);
}

/* m's values moved to m->e[0 .. m->n), in no order: m is then a list, no longer a map. */
static void vmap_list(struct vmap *m) {
  size_t o = 0;
  for (size_t i = 0; i < m->cap && o < m->n; i++)
    if (m->e[i].c) m->e[o++] = m->e[i];
}

/* m as the map of its listed values e[0 .. n) (vmap_list). 0, or -1 when out of memory. */
static int vmap_unlist(struct vmap *m, size_t n) {
  struct vmap g = {0};
  if (vmap_reset(&g, n)) return -1;
  for (size_t k = 0; k < n; k++)
    vmap_add(&g, m->e[k].v, m->e[k].c); /* room made: cannot fail */
  free(m->e);
  *m = g;
  return 0;
}

/* e[0 .. n) (distinct values) partitioned about its k-th smallest value: it at e[k], the smaller
 * ones before it. */
static void vent_select(struct vent *e, size_t n, size_t k) {
  size_t lo = 0, hi = n - 1;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2, s = lo;
    struct vent t = e[mid];
    e[mid] = e[hi];
    e[hi] = t;
    for (size_t i = lo; i < hi; i++)
      if (e[i].v < e[hi].v) {
        t = e[i];
        e[i] = e[s];
        e[s++] = t;
      }
    t = e[s];
    e[s] = e[hi];
    e[hi] = t;
    if (k == s) return;
    if (k < s)
      hi = s - 1;
    else
      lo = s + 1;
  }
}

static int cmp_vent(const void *pa, const void *pb) {
  const struct vent *a = pa, *b = pb;
  return a->v < b->v ? -1 : a->v > b->v;
}

struct group {
  uint64_t key;
  const char *name;            /* set once the trace is read */
  uint64_t n, total, min, max; /* every value */
  struct vmap m;               /* the values in [lo, hi) (hi only where capped) */
  uint64_t lo, hi;
  int capped, active;         /* active: its values are being collected */
  uint64_t cum, med_a, med_b; /* the values looked at so far, their count; the median's */
  double ss;                  /* the sum of squared differences from the mean, so far */
};

struct gtab {
  struct group *g;
  size_t n, cap;
  size_t *slot; /* open addressing: index + 1, 0 = empty */
  size_t nslots;
  int collect; /* its groups keep their values (a report wants them) */
};

/* The groups' distinct values held, against the budget; and the values on their way to their
 * groups' maps: each map's slot for a value is fetched from memory (a prefetch) PENDING values
 * before the value is added (a kernel name's map outgrows the caches: a miss per value). */
#define PENDING 16
struct vbudget {
  size_t held, max;
  struct gtab *tabs[5];
  struct { /* a group by its table and place: a table's array moves as it grows */
    struct gtab *t;
    size_t i;
    uint64_t v;
  } pend[PENDING];
  unsigned npend, next;
};

static uint64_t mix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return k;
}

static int gtab_rehash(struct gtab *t, size_t nslots) {
  size_t *s = calloc(nslots, sizeof *s);
  if (!s) return -1;
  for (size_t i = 0; i < t->n; i++) {
    size_t h = mix(t->g[i].key) & (nslots - 1);
    while (s[h])
      h = (h + 1) & (nslots - 1);
    s[h] = i + 1;
  }
  free(t->slot);
  t->slot = s;
  t->nslots = nslots;
  return 0;
}

static struct group *gtab_get(struct gtab *t, uint64_t key) {
  if (t->nslots) {
    size_t h = mix(key) & (t->nslots - 1);
    for (; t->slot[h]; h = (h + 1) & (t->nslots - 1))
      if (t->g[t->slot[h] - 1].key == key) return &t->g[t->slot[h] - 1];
  }
  if (2 * (t->n + 1) > t->nslots && gtab_rehash(t, t->nslots ? 2 * t->nslots : 64)) return NULL;
  if (t->n == t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 16;
    struct group *g = realloc(t->g, cap * sizeof *g);
    if (!g) return NULL;
    t->g = g;
    t->cap = cap;
  }
  struct group *g = &t->g[t->n++];
  memset(g, 0, sizeof *g);
  g->key = key;
  g->active = t->collect;
  size_t h = mix(key) & (t->nslots - 1);
  while (t->slot[h])
    h = (h + 1) & (t->nslots - 1);
  t->slot[h] = t->n;
  return g;
}

/* Over the budget: the active group with the most values held keeps the lower half of them
 * (capped below the least of the others), the others dropped. 0, or -1 when out of memory. */
static int budget_cut(struct vbudget *b) {
  struct group *big = NULL;
  for (int t = 0; t < 5; t++)
    for (size_t i = 0; b->tabs[t] && i < b->tabs[t]->n; i++) {
      struct group *g = &b->tabs[t]->g[i];
      if (g->active && (!big || g->m.n > big->m.n)) big = g;
    }
  if (!big || big->m.n < 2) return 0; /* nothing to halve: over the budget by a few */
  struct vmap *m = &big->m;
  size_t n = m->n, k = n / 2;
  vmap_list(m);
  vent_select(m->e, n, k);
  big->hi = m->e[k].v; /* the k values below it stay */
  big->capped = 1;
  b->held -= n - k;
  return vmap_unlist(m, k);
}

/* Value v of group g, held where in g's range. 0, or -1 when out of memory. */
static int group_hold(struct vbudget *b, struct group *g, uint64_t v) {
  if (!g->active || v < g->lo || (g->capped && v >= g->hi)) return 0;
  int added = vmap_add(&g->m, v, 1);
  if (added < 0) return -1;
  if (added && ++b->held > b->max) return budget_cut(b);
  return 0;
}

/* Value v of group i of table t: counted (first: the first reading) and, PENDING values later,
 * held where in the group's range (group_hold). 0, or -1 when out of memory. */
static int group_value(struct vbudget *b, struct gtab *t, size_t i, uint64_t v, int first) {
  struct group *g = &t->g[i];
  if (first) {
    if (!g->n || v < g->min) g->min = v;
    if (!g->n || v > g->max) g->max = v;
    g->n++;
    g->total += v;
  }
  if (!g->active) return 0;
  if (g->m.cap) __builtin_prefetch(&g->m.e[VHASH(v, g->m.shift)], 1);
  unsigned at = b->next;
  b->next = (b->next + 1) % PENDING;
  int rc = 0;
  if (b->npend == PENDING)
    rc = group_hold(b, &b->pend[at].t->g[b->pend[at].i], b->pend[at].v);
  else
    b->npend++;
  b->pend[at].t = t;
  b->pend[at].i = i;
  b->pend[at].v = v;
  return rc;
}

/* The values on their way held. 0, or -1 when out of memory. */
static int group_drain(struct vbudget *b) {
  int rc = 0;
  for (unsigned k = 0; k < b->npend; k++) {
    unsigned at = (b->next + PENDING - b->npend + k) % PENDING;
    if (!rc) rc = group_hold(b, &b->pend[at].t->g[b->pend[at].i], b->pend[at].v);
  }
  b->npend = 0;
  return rc;
}

static int gtab_add(struct vbudget *b, struct gtab *t, uint64_t key, uint64_t value) {
  struct group *g = gtab_get(t, key);
  return g ? group_value(b, t, (size_t)(g - t->g), value, 1) : -1;
}

static uint64_t gtab_values(const struct gtab *t) {
  uint64_t n = 0;
  for (size_t i = 0; i < t->n; i++)
    n += t->g[i].n;
  return n;
}

static void gtab_free(struct gtab *t) {
  for (size_t i = 0; i < t->n; i++)
    vmap_free(&t->g[i].m);
  free(t->g);
  free(t->slot);
  memset(t, 0, sizeof *t);
}

/* The values g holds (its range), in order, taken into the running sums: the count so far, the
 * median's values, the squared differences from the mean (each value's term added as many times
 * as it came: the sum over the sorted values, in their order). The range then done. */
static void group_take(struct vbudget *b, struct group *g) {
  struct vmap *m = &g->m;
  size_t n = m->n;
  vmap_list(m);
  qsort(m->e, n, sizeof *m->e, cmp_vent);
  double avg = (double)g->total / (double)g->n;
  uint64_t ra = g->n % 2 ? g->n / 2 : g->n / 2 - 1, rb = g->n / 2;
  for (size_t i = 0; i < n; i++) {
    uint64_t v = m->e[i].v, c = m->e[i].c;
    if (ra >= g->cum && ra - g->cum < c) g->med_a = v;
    if (rb >= g->cum && rb - g->cum < c) g->med_b = v;
    double d = (double)v - avg;
    for (uint64_t k = 0; k < c; k++)
      g->ss += d * d;
    g->cum += c;
  }
  b->held -= n;
  vmap_free(m);
  g->active = g->capped; /* the values from hi on still to come */
  g->lo = g->hi;
  g->capped = 0;
}

/* ---- rows ---- */

struct row {
  const char *name;
  uint64_t n, total, min, max;
  double avg, med, sd, pct;
};

/* SQLite's round(x, 1): half away from zero. */
static double round1(double x) {
  return x < 0 ? -floor(-x * 10 + 0.5) / 10 : floor(x * 10 + 0.5) / 10;
}

/* A group's row, once every value has been taken (group_take). */
static void row_compute(struct row *r, const struct group *g) {
  r->name = g->name;
  r->n = g->n;
  r->total = g->total;
  r->min = g->min;
  r->max = g->max;
  r->avg = (double)r->total / (double)g->n;
  r->med = g->n % 2 ? (double)g->med_b : ((double)g->med_a + (double)g->med_b) / 2.0;
  r->sd = g->n > 1 ? sqrt(g->ss / (double)(g->n - 1)) : 0.0;
}

enum order { BY_TOTAL, BY_TOTAL_COUNT_NAME };
static enum order sort_order;

static int cmp_row(const void *pa, const void *pb) {
  const struct row *a = pa, *b = pb;
  if (a->total != b->total) return a->total > b->total ? -1 : 1;
  if (sort_order == BY_TOTAL_COUNT_NAME && a->n != b->n) return a->n < b->n ? -1 : 1;
  return strcmp(a->name, b->name);
}

static int cmp_group_name(const void *pa, const void *pb) {
  const struct group *a = pa, *b = pb;
  return strcmp(a->name, b->name);
}

/* A table's groups in order of name, merged by name when merge (kernels: nsys groups them by
 * name, and two string ids may carry one name; API calls stay one group per function id, as nsys
 * keeps one per name id): a merged group's values are those below the least bound of its parts.
 * *at maps each key to its group from here on. 0, or -1 when out of memory. */
static int groups_merge(struct vbudget *b, struct gtab *t, int merge, struct u64map *at) {
  if (!t->n) return 0;
  qsort(t->g, t->n, sizeof *t->g, cmp_group_name);
  /* the hash slots are stale from here on: *at maps the keys */
  size_t u = 0;
  for (size_t i = 0, j; i < t->n; i = j) {
    for (j = i + 1; merge && j < t->n && !strcmp(t->g[i].name, t->g[j].name);)
      j++;
    struct group *d = &t->g[i];
    for (size_t k = i; k < j; k++) {
      size_t slot = u64map_add(at, t->g[k].key);
      if (slot == (size_t)-1) return -1;
      at->val[slot] = u;
    }
    for (size_t k = i + 1; k < j; k++) { /* the least bound of them all */
      const struct group *s = &t->g[k];
      if (s->capped && (!d->capped || s->hi < d->hi)) {
        d->hi = s->hi;
        d->capped = 1;
      }
    }
    for (size_t k = i; k < j && j - i > 1; k++) { /* their values below it, into d */
      struct group *s = &t->g[k];
      vmap_list(&s->m);
      size_t keep = 0, n = s->m.n;
      for (size_t q = 0; q < n; q++)
        if (!d->capped || s->m.e[q].v < d->hi) s->m.e[keep++] = s->m.e[q];
      b->held -= n - keep;
      if (k == i) {
        if (vmap_unlist(&s->m, keep)) return -1;
        continue;
      }
      for (size_t q = 0; q < keep; q++) {
        int added = vmap_add(&d->m, s->m.e[q].v, s->m.e[q].c);
        if (added < 0) return -1;
        if (!added) b->held--;
      }
      vmap_free(&s->m);
      if (s->min < d->min) d->min = s->min;
      if (s->max > d->max) d->max = s->max;
      d->n += s->n;
      d->total += s->total;
    }
    if (u != i) {
      t->g[u] = *d;
      memset(d, 0, sizeof *d);
    }
    u++;
  }
  for (size_t k = u; k < t->n; k++)
    vmap_free(&t->g[k].m);
  t->n = u;
  return 0;
}

/* The rows of a table whose groups have taken all their values: computed, sorted. Returns the
 * row count, or -1 when out of memory. */
static long rows_make(const struct gtab *t, enum order order, struct row **out) {
  *out = NULL;
  if (!t->n) return 0;
  struct row *rows = calloc(t->n, sizeof *rows);
  if (!rows) return -1;
  uint64_t grand = 0;
  for (size_t i = 0; i < t->n; i++) {
    row_compute(&rows[i], &t->g[i]);
    grand += rows[i].total;
  }
  for (size_t i = 0; i < t->n; i++)
    rows[i].pct = grand ? round1((double)rows[i].total * 100.0 / (double)grand) : 0.0;
  sort_order = order;
  qsort(rows, t->n, sizeof *rows, cmp_row);
  *out = rows;
  return (long)t->n;
}

/* ---- output: nsys's table and CSV layouts ---- */

enum cell { C_PCT, C_INT, C_NS1, C_MB, C_TEXT };

struct column {
  const char *head;
  enum cell type;
  int field; /* which row value */
};
enum { F_PCT, F_TOTAL, F_N, F_AVG, F_MED, F_MIN, F_MAX, F_SD, F_NAME };

struct report_def {
  const char *name, *title;
  const char *skipped; /* what the trace lacks when the report is empty */
  const struct column *cols;
  int ncols;
};

#define TIME_COLS(count)                                                                           \
  {"Time (%)", C_PCT, F_PCT}, {"Total Time (ns)", C_INT, F_TOTAL}, {count, C_INT, F_N},            \
      {"Avg (ns)", C_NS1, F_AVG}, {"Med (ns)", C_NS1, F_MED}, {"Min (ns)", C_INT, F_MIN},          \
      {"Max (ns)", C_INT, F_MAX}, {                                                                \
    "StdDev (ns)", C_NS1, F_SD                                                                     \
  }

static const struct column api_cols[] = {TIME_COLS("Num Calls"), {"Name", C_TEXT, F_NAME}};
static const struct column kern_cols[] = {TIME_COLS("Instances"), {"Name", C_TEXT, F_NAME}};
static const struct column memt_cols[] = {TIME_COLS("Count"), {"Operation", C_TEXT, F_NAME}};
static const struct column mems_cols[] = {
    {"Total (MB)", C_MB, F_TOTAL}, {"Count", C_INT, F_N},        {"Avg (MB)", C_MB, F_AVG},
    {"Med (MB)", C_MB, F_MED},     {"Min (MB)", C_MB, F_MIN},    {"Max (MB)", C_MB, F_MAX},
    {"StdDev (MB)", C_MB, F_SD},   {"Operation", C_TEXT, F_NAME}};

enum { R_API, R_KERN, R_MEMT, R_MEMS, NREPORTS };
static const struct report_def reports[NREPORTS] = {
    [R_API] = {"cuda_api_sum", "CUDA API Summary", "CUDA trace data", api_cols, 9},
    [R_KERN] = {"cuda_gpu_kern_sum", "CUDA GPU Kernel Summary", "CUDA kernel data", kern_cols, 9},
    [R_MEMT] = {"cuda_gpu_mem_time_sum", "CUDA GPU MemOps Summary (by Time)", "GPU memory data",
                memt_cols, 9},
    [R_MEMS] = {"cuda_gpu_mem_size_sum", "CUDA GPU MemOps Summary (by Size)", "GPU memory data",
                mems_cols, 8},
};

static double row_value(const struct row *r, int field) {
  switch (field) {
  case F_PCT: return r->pct;
  case F_TOTAL: return (double)r->total;
  case F_N: return (double)r->n;
  case F_AVG: return r->avg;
  case F_MED: return r->med;
  case F_MIN: return (double)r->min;
  case F_MAX: return (double)r->max;
  case F_SD: return r->sd;
  }
  return 0;
}

static uint64_t row_int(const struct row *r, int field) {
  switch (field) {
  case F_TOTAL: return r->total;
  case F_N: return r->n;
  case F_MIN: return r->min;
  case F_MAX: return r->max;
  }
  return 0;
}

/* Inserts thousands separators into the integer part of the number in s (in place; s has room
 * for 64 bytes). */
static void group_digits(char *s) {
  char tmp[64];
  const char *p = s;
  size_t o = 0;
  if (*p == '-') tmp[o++] = *p++;
  size_t digits = strspn(p, "0123456789");
  for (size_t i = 0; i < digits; i++) {
    if (i && (digits - i) % 3 == 0) tmp[o++] = ',';
    tmp[o++] = p[i];
  }
  snprintf(tmp + o, sizeof tmp - o, "%s", p + digits);
  memcpy(s, tmp, strlen(tmp) + 1);
}

/* One cell as text into buf (64 bytes), or a pointer to the row's name. */
static const char *cell_text(const struct row *r, const struct column *c, int table, char *buf) {
  switch (c->type) {
  case C_TEXT: return r->name;
  case C_PCT: snprintf(buf, 64, "%.1f", r->pct); return buf;
  case C_INT: snprintf(buf, 64, "%llu", (unsigned long long)row_int(r, c->field)); break;
  case C_NS1: snprintf(buf, 64, "%.1f", round1(row_value(r, c->field))); break;
  case C_MB: snprintf(buf, 64, "%.3f", row_value(r, c->field) / 1e6); break;
  }
  if (table) group_digits(buf);
  return buf;
}

static void put_csv_field(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\n\r")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

/* Characters of a UTF-8 string (its bytes but continuation bytes): the width nsys pads to. */
static size_t text_width(const char *s) {
  size_t n = 0;
  for (; *s; s++)
    n += ((unsigned char)*s & 0xc0) != 0x80;
  return n;
}

/* s padded to width characters: align -1 left, 0 centered (the extra space right), 1 right. */
static void put_padded(FILE *f, const char *s, size_t width, int align) {
  size_t len = text_width(s), pad = width > len ? width - len : 0;
  size_t left = align > 0 ? pad : align == 0 ? pad / 2 : 0;
  fprintf(f, "%*s%s%*s", (int)left, "", s, (int)(pad - left), "");
}

static void print_table(FILE *f, const struct report_def *d, const struct row *rows, long n,
                        int csv) {
  char buf[64];
  if (csv) {
    for (int c = 0; c < d->ncols; c++) {
      if (c) fputc(',', f);
      put_csv_field(f, d->cols[c].head);
    }
    fputc('\n', f);
    for (long i = 0; i < n; i++) {
      for (int c = 0; c < d->ncols; c++) {
        if (c) fputc(',', f);
        put_csv_field(f, cell_text(&rows[i], &d->cols[c], 0, buf));
      }
      fputc('\n', f);
    }
    return;
  }
  /* the table: a column is as wide as its widest cell or header; headers centered, numbers
   * right-aligned, text left-aligned; a space in front and two between columns */
  size_t width[16];
  for (int c = 0; c < d->ncols; c++) {
    width[c] = text_width(d->cols[c].head);
    for (long i = 0; i < n; i++) {
      size_t w = text_width(cell_text(&rows[i], &d->cols[c], 1, buf));
      if (w > width[c]) width[c] = w;
    }
  }
  for (int c = 0; c < d->ncols; c++) {
    fputs(c ? "  " : " ", f);
    put_padded(f, d->cols[c].head, width[c], 0);
  }
  fputc('\n', f);
  for (int c = 0; c < d->ncols; c++) {
    fputs(c ? "  " : " ", f);
    for (size_t k = 0; k < width[c]; k++)
      fputc('-', f);
  }
  fputc('\n', f);
  for (long i = 0; i < n; i++) {
    for (int c = 0; c < d->ncols; c++) {
      fputs(c ? "  " : " ", f);
      put_padded(f, cell_text(&rows[i], &d->cols[c], 1, buf), width[c],
                 d->cols[c].type == C_TEXT ? -1 : 1);
    }
    fputc('\n', f);
  }
}

/* ---- reading the trace ---- */

/* The tables in the order of vbudget.tabs. */
enum { T_KERN, T_MEMT, T_MEMS, T_HOST, T_API, NTABS };

struct stats {
  struct gtab kern, memt, mems, host, api;
  struct vbudget b;
  int api_from_cupti; /* cuda_api_sum from API records (else HOST records) */
  uint64_t *chunks;   /* the chunks that hold the tables' records (to read them again) */
  size_t nchunks, cchunks;
  struct u64map at[NTABS]; /* after groups_merge: each key's group */
};

#define MEMSET_KEY 256 /* memsets; copies are keyed by their copy kind (0..255) */
/* distinct values held at once, all groups together (SLACK_STATS_VALUES): 16-32 bytes each */
#define DEFAULT_VALUES ((size_t)1 << 22)

static uint64_t dur(const struct slk_record *r) {
  return r->end > r->start ? r->end - r->start : 0;
}

static int stats_add(struct stats *s, const struct slk_record *r) {
  struct vbudget *b = &s->b;
  switch (r->kind) {
  case SLK_KERNEL: return gtab_add(b, &s->kern, r->name, dur(r));
  case SLK_MEMCPY:
    return gtab_add(b, &s->memt, r->copy_kind, dur(r)) ||
           gtab_add(b, &s->mems, r->copy_kind, r->bytes);
  case SLK_MEMSET:
    return gtab_add(b, &s->memt, MEMSET_KEY, dur(r)) || gtab_add(b, &s->mems, MEMSET_KEY, r->bytes);
  case SLK_HOST: return gtab_add(b, &s->host, r->fn, dur(r));
  case SLK_API: return gtab_add(b, &s->api, r->fn, dur(r));
  }
  return 0;
}

/* Value v of key in table t, read again: to its group where that still collects. */
static int again_value(struct stats *s, int t, uint64_t key, uint64_t v) {
  uint64_t gi;
  if (!s->b.tabs[t]->collect || !u64map_get(&s->at[t], key, &gi)) return 0;
  return group_value(&s->b, s->b.tabs[t], (size_t)gi, v, 0);
}

static int stats_again(struct stats *s, const struct slk_record *r) {
  switch (r->kind) {
  case SLK_KERNEL: return again_value(s, T_KERN, r->name, dur(r));
  case SLK_MEMCPY:
    return again_value(s, T_MEMT, r->copy_kind, dur(r)) ||
           again_value(s, T_MEMS, r->copy_kind, r->bytes);
  case SLK_MEMSET:
    return again_value(s, T_MEMT, MEMSET_KEY, dur(r)) ||
           again_value(s, T_MEMS, MEMSET_KEY, r->bytes);
  case SLK_HOST: return again_value(s, T_HOST, r->fn, dur(r));
  case SLK_API: return again_value(s, T_API, r->fn, dur(r));
  }
  return 0;
}

/* The groups of the wanted tables take the values they hold, then, while some have values
 * still to come (past their bound), the chunks are read again for those. 0, -1 when out of
 * memory, -2 when a chunk could not be read again. */
static int groups_finish(struct stats *s, struct trace_reader *rd) {
  for (;;) {
    int more = 0;
    for (int t = 0; t < NTABS; t++)
      for (size_t i = 0; s->b.tabs[t]->collect && i < s->b.tabs[t]->n; i++) {
        struct group *g = &s->b.tabs[t]->g[i];
        if (!g->active) continue;
        group_take(&s->b, g);
        more |= g->active;
      }
    if (!more) return 0;
    for (size_t c = 0; c < s->nchunks; c++) {
      if (trace_reader_seek_chunk(rd, s->chunks[c])) return -2;
      struct slk_record r;
      while (trace_reader_next_in_chunk(rd, &r))
        if (stats_again(s, &r)) return -1;
    }
    if (group_drain(&s->b)) return -1;
  }
}

/* Names of the groups, once every STRING record has been read. Names made here (demangled
 * kernels, API names) are owned by names[0..*nnames), freed by the caller. */
static int name_groups(struct stats *s, const struct trace_reader *rd, int mangled, char ***names,
                       size_t *nnames) {
  *nnames = 0;
  *names = calloc(s->kern.n + s->api.n + 1, sizeof **names);
  if (!*names) return -1;
  for (size_t i = 0; i < s->kern.n; i++) {
    const char *raw = trace_reader_string(rd, (uint32_t)s->kern.g[i].key);
    char *d = mangled ? NULL : slack_demangle(raw);
    if (d) (*names)[(*nnames)++] = d;
    s->kern.g[i].name = d ? d : raw;
  }
  struct gtab *mem[] = {&s->memt, &s->mems};
  for (int m = 0; m < 2; m++)
    for (size_t i = 0; i < mem[m]->n; i++)
      mem[m]->g[i].name = mem[m]->g[i].key == MEMSET_KEY
                              ? NSYS_MEMSET_LABEL
                              : nsys_memcpy_label((uint8_t)mem[m]->g[i].key);
  for (size_t i = 0; i < s->host.n; i++)
    s->host.g[i].name = slk_fn_name((uint32_t)s->host.g[i].key);
  for (size_t i = 0; i < s->api.n; i++) {
    uint32_t fn = (uint32_t)s->api.g[i].key;
    const char *full = nsys_api_name(fn);
    char buf[256];
    if (full)
      nsys_api_base_name(full, buf, sizeof buf);
    else
      snprintf(buf, sizeof buf, "[unknown %s cbid %u]", fn & SLK_API_DRIVER ? "driver" : "runtime",
               fn & ~SLK_API_DRIVER);
    if (!(s->api.g[i].name = (*names)[(*nnames)++] = strdup(buf))) return -1;
  }
  return 0;
}

static int parse_reports(const char *arg, int *want) {
  char *copy = strdup(arg), *save = NULL;
  if (!copy) return -1;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int found = 0;
    for (int r = 0; r < NREPORTS; r++)
      if (!strcmp(tok, reports[r].name)) {
        want[r] = ++found;
        break;
      }
    if (!found) {
      fprintf(stderr,
              "slack stats: unknown report '%s' (reports: cuda_api_sum, cuda_gpu_kern_sum, "
              "cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum)\n",
              tok);
      free(copy);
      return -1;
    }
  }
  free(copy);
  return 0;
}

int cmd_stats(int argc, char **argv) {
  if (slack_wants_help(argc, argv)) {
    fputs(usage, stdout);
    return EXIT_OK;
  }
  int want[NREPORTS] = {0}, any = 0, csv = 0, mangled = 0;
  const char *path = NULL, *prefix = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = NULL;
    int is_report = !strcmp(a, "--report") || !strncmp(a, "--report=", 9);
    int is_format = !strcmp(a, "--format") || !strncmp(a, "--format=", 9);
    int is_output = !strcmp(a, "--output") || !strncmp(a, "--output=", 9) || !strcmp(a, "-o");
    if (is_report || is_format || is_output) {
      const char *eq = strchr(a, '=');
      if (eq && a[1] == '-')
        val = eq + 1;
      else if (i + 1 < argc)
        val = argv[++i];
      else {
        fprintf(stderr, "slack stats: %s needs a value\n", a);
        fputs(usage, stderr);
        return EXIT_USAGE;
      }
      if (is_report) {
        if (parse_reports(val, want)) return EXIT_USAGE;
        any = 1;
      } else if (is_format) {
        if (!strcmp(val, "csv"))
          csv = 1;
        else if (!strcmp(val, "table"))
          csv = 0;
        else {
          fprintf(stderr, "slack stats: unknown format '%s' (table or csv)\n", val);
          return EXIT_USAGE;
        }
      } else {
        prefix = val;
      }
    } else if (!strcmp(a, "--mangled")) {
      mangled = 1;
    } else if (a[0] == '-' && a[1]) {
      return slack_bad_option("stats", usage, a);
    } else if (path) {
      return slack_usage_error("stats", usage, "one trace file at a time");
    } else {
      path = a;
    }
  }
  if (!path) return slack_usage_error("stats", usage, "no trace file given");
  if (!any)
    for (int r = 0; r < NREPORTS; r++)
      want[r] = 1;

  struct trace_reader *rd = slack_open_trace("stats", path);
  if (!rd) return EXIT_ERROR;
  struct stats s;
  memset(&s, 0, sizeof s);
  struct gtab *tabs[NTABS] = {&s.kern, &s.memt, &s.mems, &s.host, &s.api};
  memcpy(s.b.tabs, tabs, sizeof tabs);
  s.b.max = DEFAULT_VALUES;
  const char *ve = getenv("SLACK_STATS_VALUES");
  if (ve && *ve) {
    char *end;
    unsigned long long v = strtoull(ve, &end, 10);
    if (*end || !v || ve[0] == '-')
      fprintf(stderr, "slack stats: SLACK_STATS_VALUES=%s is not a count above 0; ignored\n", ve);
    else
      s.b.max = (size_t)v;
  }
  s.kern.collect = want[R_KERN];
  s.memt.collect = want[R_MEMT];
  s.mems.collect = want[R_MEMS];
  s.host.collect = s.api.collect = want[R_API];
  struct slk_record rec;
  int oom = 0;
  while (!oom && trace_reader_next(rd, &rec)) {
    if (rec.kind < SLK_KERNEL ||
        (rec.kind > SLK_MEMSET && rec.kind != SLK_API && rec.kind != SLK_HOST))
      continue;
    uint64_t off = trace_reader_chunk_offset(rd);
    if (!s.nchunks || s.chunks[s.nchunks - 1] != off) {
      if (s.nchunks == s.cchunks) {
        size_t c = s.cchunks ? 2 * s.cchunks : 256;
        uint64_t *v = realloc(s.chunks, c * sizeof *v);
        if (!v) {
          oom = 1;
          break;
        }
        s.chunks = v;
        s.cchunks = c;
      }
      s.chunks[s.nchunks++] = off;
    }
    oom = stats_add(&s, &rec) != 0;
  }
  if (!oom) oom = group_drain(&s.b) != 0;
  slack_warn_tail(stderr, "stats", path, rd);

  char **api_names = NULL;
  size_t napi_names = 0;
  struct row *rows[NREPORTS] = {0};
  long nrows[NREPORTS] = {0};
  int rc = EXIT_OK;
  if (!oom) oom = name_groups(&s, rd, mangled, &api_names, &napi_names) != 0;

  /* cuda_api_sum: nsys counts every runtime and driver call CUPTI saw. A slack trace keeps CUPTI
   * API records only for launches and copies (to join GPU work to threads), so its complete list
   * of CUDA calls is the HOST records of the hooks; an nsys import carries every call as an API
   * record. */
  const char *source = trace_reader_header(rd, "source");
  uint64_t nhost = gtab_values(&s.host), napi = gtab_values(&s.api);
  s.api_from_cupti = napi && ((source && !strcmp(source, "nsys-sqlite")) || !nhost);
  if (want[R_API] && (nhost || napi)) {
    if (s.api_from_cupti)
      fprintf(stderr, "slack stats: note: cuda_api_sum from %llu CUPTI API records%s\n",
              (unsigned long long)napi,
              nhost ? " (imported from nsys: every runtime and driver call it recorded)"
                    : " (the trace has no host calls from slack's hooks)");
    else
      fprintf(stderr,
              "slack stats: note: cuda_api_sum from %llu host calls seen by slack's hooks%s\n",
              (unsigned long long)nhost,
              napi ? " (CUPTI API records, kept only for launches and copies, are not used)" : "");
  }

  /* the table cuda_api_sum does not use collects no more */
  struct gtab *unused = s.api_from_cupti ? &s.host : &s.api;
  for (size_t i = 0; i < unused->n; i++) {
    s.b.held -= unused->g[i].m.n;
    vmap_free(&unused->g[i].m);
    unused->g[i].active = 0;
  }
  unused->collect = 0;
  struct gtab *src[NREPORTS] = {s.api_from_cupti ? &s.api : &s.host, &s.kern, &s.memt, &s.mems};
  const int src_tab[NREPORTS] = {s.api_from_cupti ? T_API : T_HOST, T_KERN, T_MEMT, T_MEMS};
  for (int r = 0; !oom && r < NREPORTS; r++)
    if (want[r] && groups_merge(&s.b, src[r], r != R_API || !s.api_from_cupti, &s.at[src_tab[r]]))
      oom = 1;
  int again = oom ? 0 : groups_finish(&s, rd);
  if (again == -2) {
    fprintf(stderr, "slack stats: %s: a chunk could not be read again\n", path);
    rc = EXIT_ERROR;
  }
  oom |= again == -1;
  for (int r = 0; !oom && rc == EXIT_OK && r < NREPORTS; r++)
    if (want[r] &&
        (nrows[r] = rows_make(src[r], r == R_KERN ? BY_TOTAL_COUNT_NAME : BY_TOTAL, &rows[r])) < 0)
      oom = 1;
  if (oom) {
    fprintf(stderr, "slack stats: out of memory reading %s\n", path);
    rc = EXIT_ERROR;
  }

  for (int r = 0; rc == EXIT_OK && r < NREPORTS; r++) {
    if (!want[r]) continue;
    const struct report_def *d = &reports[r];
    FILE *f = stdout;
    char *out_path = NULL;
    if (prefix) {
      if (asprintf(&out_path, "%s_%s.%s", prefix, d->name, csv ? "csv" : "txt") < 0 ||
          !(f = fopen(out_path, "w"))) {
        fprintf(stderr, "slack stats: cannot write %s: %s\n", out_path ? out_path : prefix,
                strerror(errno));
        free(out_path);
        rc = EXIT_ERROR;
        break;
      }
    } else if (!csv) {
      printf("\n ** %s (%s):\n\n", d->title, d->name);
    } else if (r > 0) {
      putchar('\n'); /* CSV on stdout: the tables alone, a blank line between them */
    }
    if (nrows[r])
      print_table(f, d, rows[r], nrows[r], csv);
    else
      fprintf(prefix ? stderr : f, "SKIPPED: %s does not contain %s.\n", path, d->skipped);
    if (f != stdout && fclose(f)) {
      fprintf(stderr, "slack stats: cannot write %s: %s\n", out_path, strerror(errno));
      rc = EXIT_ERROR;
    }
    free(out_path);
  }
  if (rc == EXIT_OK && !prefix && !csv) putchar('\n');
  if (fflush(stdout) && rc == EXIT_OK) {
    fprintf(stderr, "slack stats: cannot write the output: %s\n", strerror(errno));
    rc = EXIT_ERROR;
  }

  for (int r = 0; r < NREPORTS; r++)
    free(rows[r]);
  for (size_t i = 0; i < napi_names; i++)
    free(api_names[i]);
  free(api_names);
  gtab_free(&s.kern);
  gtab_free(&s.memt);
  gtab_free(&s.mems);
  gtab_free(&s.host);
  gtab_free(&s.api);
  for (int t = 0; t < NTABS; t++)
    u64map_free(&s.at[t]);
  free(s.chunks);
  trace_reader_close(rd);
  return rc;
}

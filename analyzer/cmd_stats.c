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
 * The trace is read once, streaming; each group keeps its durations for the median, so memory
 * is 8 bytes per kernel, copy, memset and call. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "nsys_names.h"
#include "slack.h"

static const char usage[] =
    "usage: slack stats [--report NAME] [--format table|csv] [--output PREFIX] [--mangled] FILE\n"
    "  --report NAME    a report to print (repeat, or separate with commas); default: all of\n"
    "                   cuda_api_sum, cuda_gpu_kern_sum, cuda_gpu_mem_time_sum,\n"
    "                   cuda_gpu_mem_size_sum\n"
    "  --format FMT     table (default) or csv\n"
    "  --output PREFIX  write each report to PREFIX_NAME.txt (table) or PREFIX_NAME.csv\n"
    "                   instead of standard output\n"
    "  --mangled        kernel names as recorded (default: C++ names demangled)\n";

/* ---- groups: values (durations or sizes) collected under a 64-bit key ---- */

struct group {
  uint64_t key;
  const char *name; /* set once the trace is read */
  uint64_t *v;
  size_t n, cap;
};

struct gtab {
  struct group *g;
  size_t n, cap;
  size_t *slot; /* open addressing: index + 1, 0 = empty */
  size_t nslots;
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
  size_t h = mix(key) & (t->nslots - 1);
  while (t->slot[h])
    h = (h + 1) & (t->nslots - 1);
  t->slot[h] = t->n;
  return g;
}

static int gtab_add(struct gtab *t, uint64_t key, uint64_t value) {
  struct group *g = gtab_get(t, key);
  if (!g) return -1;
  if (g->n == g->cap) {
    size_t cap = g->cap ? 2 * g->cap : 8;
    uint64_t *v = realloc(g->v, cap * sizeof *v);
    if (!v) return -1;
    g->v = v;
    g->cap = cap;
  }
  g->v[g->n++] = value;
  return 0;
}

static uint64_t gtab_values(const struct gtab *t) {
  uint64_t n = 0;
  for (size_t i = 0; i < t->n; i++)
    n += t->g[i].n;
  return n;
}

static void gtab_free(struct gtab *t) {
  for (size_t i = 0; i < t->n; i++)
    free(t->g[i].v);
  free(t->g);
  free(t->slot);
  memset(t, 0, sizeof *t);
}

/* ---- rows ---- */

struct row {
  const char *name;
  uint64_t n, total, min, max;
  double avg, med, sd, pct;
};

static int cmp_u64(const void *pa, const void *pb) {
  uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
  return a < b ? -1 : a > b;
}

/* SQLite's round(x, 1): half away from zero. */
static double round1(double x) {
  return x < 0 ? -floor(-x * 10 + 0.5) / 10 : floor(x * 10 + 0.5) / 10;
}

static void row_compute(struct row *r, struct group *g) {
  qsort(g->v, g->n, sizeof *g->v, cmp_u64);
  r->name = g->name;
  r->n = g->n;
  r->total = 0;
  for (size_t i = 0; i < g->n; i++)
    r->total += g->v[i];
  r->min = g->v[0];
  r->max = g->v[g->n - 1];
  r->avg = (double)r->total / (double)g->n;
  r->med = g->n % 2 ? (double)g->v[g->n / 2]
                    : ((double)g->v[g->n / 2 - 1] + (double)g->v[g->n / 2]) / 2.0;
  double ss = 0;
  for (size_t i = 0; i < g->n; i++) {
    double d = (double)g->v[i] - r->avg;
    ss += d * d;
  }
  r->sd = g->n > 1 ? sqrt(ss / (double)(g->n - 1)) : 0.0;
}

enum order { BY_TOTAL, BY_TOTAL_COUNT_NAME };
static enum order sort_order;

static int cmp_row(const void *pa, const void *pb) {
  const struct row *a = pa, *b = pb;
  if (a->total != b->total) return a->total > b->total ? -1 : 1;
  if (sort_order == BY_TOTAL_COUNT_NAME && a->n != b->n) return a->n < b->n ? -1 : 1;
  return strcmp(a->name, b->name);
}

/* Rows of a group table: merged by name when merge (kernels: nsys groups them by name, and two
 * string ids may carry one name; API calls stay one row per function id, as nsys keeps one per
 * name id), computed, sorted. Returns the row count, or -1 when out of memory. */
static int cmp_group_name(const void *pa, const void *pb) {
  const struct group *a = pa, *b = pb;
  return strcmp(a->name, b->name);
}

static long rows_make(struct gtab *t, int merge, enum order order, struct row **out) {
  *out = NULL;
  if (!t->n) return 0;
  qsort(t->g, t->n, sizeof *t->g, cmp_group_name);
  /* the hash slots are stale from here on: the table is only read */
  size_t u = 0;
  for (size_t i = 0; i < t->n; i++) {
    if (merge && u && !strcmp(t->g[u - 1].name, t->g[i].name)) {
      struct group *d = &t->g[u - 1], *s = &t->g[i];
      uint64_t *v = realloc(d->v, (d->n + s->n) * sizeof *v);
      if (!v) return -1;
      memcpy(v + d->n, s->v, s->n * sizeof *v);
      d->v = v;
      d->n += s->n;
      d->cap = d->n;
      free(s->v);
      s->v = NULL;
      s->n = 0;
    } else {
      if (u != i) {
        t->g[u] = t->g[i];
        t->g[i].v = NULL;
        t->g[i].n = 0;
      }
      u++;
    }
  }
  t->n = u;
  struct row *rows = calloc(u, sizeof *rows);
  if (!rows) return -1;
  uint64_t grand = 0;
  for (size_t i = 0; i < u; i++) {
    row_compute(&rows[i], &t->g[i]);
    grand += rows[i].total;
  }
  for (size_t i = 0; i < u; i++)
    rows[i].pct = grand ? round1((double)rows[i].total * 100.0 / (double)grand) : 0.0;
  sort_order = order;
  qsort(rows, u, sizeof *rows, cmp_row);
  *out = rows;
  return (long)u;
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

struct stats {
  struct gtab kern, memt, mems, host, api;
  uint64_t host_calls, api_calls;
  int api_from_cupti; /* cuda_api_sum from API records (else HOST records) */
};

#define MEMSET_KEY 256 /* memsets; copies are keyed by their copy kind (0..255) */

static uint64_t dur(const struct slk_record *r) {
  return r->end > r->start ? r->end - r->start : 0;
}

static int stats_add(struct stats *s, const struct slk_record *r) {
  switch (r->kind) {
  case SLK_KERNEL: return gtab_add(&s->kern, r->name, dur(r));
  case SLK_MEMCPY:
    return gtab_add(&s->memt, r->copy_kind, dur(r)) || gtab_add(&s->mems, r->copy_kind, r->bytes);
  case SLK_MEMSET:
    return gtab_add(&s->memt, MEMSET_KEY, dur(r)) || gtab_add(&s->mems, MEMSET_KEY, r->bytes);
  case SLK_HOST: return gtab_add(&s->host, r->fn, dur(r));
  case SLK_API: return gtab_add(&s->api, r->fn, dur(r));
  }
  return 0;
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
  struct slk_record rec;
  int oom = 0;
  while (!oom && trace_reader_next(rd, &rec))
    oom = stats_add(&s, &rec) != 0;
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

  struct gtab *src[NREPORTS] = {s.api_from_cupti ? &s.api : &s.host, &s.kern, &s.memt, &s.mems};
  for (int r = 0; !oom && r < NREPORTS; r++)
    if (want[r] &&
        (nrows[r] = rows_make(src[r], r != R_API || !s.api_from_cupti,
                              r == R_KERN ? BY_TOTAL_COUNT_NAME : BY_TOTAL, &rows[r])) < 0)
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
  trace_reader_close(rd);
  return rc;
}

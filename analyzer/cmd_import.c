/* slack import nsys: an Nsight Systems SQLite export (`nsys export --type sqlite`, schema of
 * nsys 2025.3) into a slack trace, so report, stats and timeline run on nsys captures
 * (docs/slack-import.md).
 *
 *   CUPTI_ACTIVITY_KIND_KERNEL           -> KERNEL (demangled name)
 *   CUPTI_ACTIVITY_KIND_MEMCPY / MEMSET  -> MEMCPY / MEMSET (memory kinds renumbered to CUPTI's)
 *   CUPTI_ACTIVITY_KIND_SYNCHRONIZATION  -> SYNC
 *   CUPTI_ACTIVITY_KIND_RUNTIME          -> API (every row; cbid from the function name) and
 *                                           HOST (rows whose function slack hooks)
 *   NVTX_EVENTS (push/pop, start/end)    -> MARKER
 *   TARGET_INFO_GPU, ThreadNames         -> DEVICE, THREAD
 *
 * Times stay nsys's: ns since the start of the capture session (header clock=nsys-session). The
 * activity tables are read in start order and merged, so the trace comes out sorted by start.
 * nsys leaves out the tables of kinds it saw nothing of: a missing table is a note; a table
 * without a column slack needs is an error (a schema this slack does not know). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsys_names.h"
#include "slack.h"
#include "u64map.h"

static const char usage[] = "usage: slack import nsys FILE.sqlite -o OUT.slk [--pid PID]\n"
                            "  -o, --output OUT  the slack trace to write (required)\n"
                            "  --pid PID         import only the process PID (default: all)\n"
                            "FILE.sqlite is an Nsight Systems export: nsys export --type sqlite\n";

#ifndef SLACK_HAVE_SQLITE

int cmd_import(int argc, char **argv) {
  if (slack_wants_help(argc, argv)) {
    fputs(usage, stdout);
    return EXIT_OK;
  }
  fputs("slack import: built without SQLite support (install libsqlite3-dev and rebuild; "
        "'slack --version --build-options' shows what this build has)\n",
        stderr);
  return EXIT_ERROR;
}

#else

#include <sqlite3.h>

/* nsys ids (int64) map to slack ids through u64map (keys cast to uint64). */
static int imap_put(struct u64map *m, int64_t key, uint64_t val) {
  size_t slot = u64map_add(m, (uint64_t)key);
  if (slot == (size_t)-1) return -1;
  m->val[slot] = val;
  return 0;
}

/* ---- the import ---- */

/* What a host call's GPU work says about it (nsys exports no cudaStream_t or copy arguments):
 * from the first kernel, copy or memset with the call's correlation id. */
struct corr_info {
  int64_t pid; /* globalPid: correlation ids are per process */
  uint32_t corr;
  uint8_t copy_kind; /* cudaMemcpyKind */
  uint64_t stream, bytes;
};

struct imp {
  sqlite3 *db;
  const char *path;
  struct slk_file *out;
  int64_t pid;                 /* --pid, or -1 */
  struct u64map strings;       /* nsys StringIds id -> slack string id */
  struct u64map names;         /* runtime nameId -> api fn | host fn << 32 */
  sqlite3_stmt *string_lookup; /* SELECT value FROM StringIds WHERE id = ? */
  struct corr_info *corr;
  size_t ncorr;
  uint64_t count[SLK_KIND_MAX];
  uint64_t bad_rows, unknown_api_rows;
  char unknown_names[256]; /* the first few runtime names without a CUPTI cbid */
  int failed;              /* a write or memory failure: stop */
};

static void sql_error(struct imp *im, const char *what) {
  fprintf(stderr, "slack import: %s: %s: %s\n", im->path, what, sqlite3_errmsg(im->db));
}

static sqlite3_stmt *prepare(struct imp *im, const char *sql) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(im->db, sql, -1, &st, NULL) != SQLITE_OK) {
    sql_error(im, "query failed");
    fprintf(stderr, "  query: %s\n", sql);
    return NULL;
  }
  return st;
}

static int has_table(struct imp *im, const char *table) {
  sqlite3_stmt *st = NULL;
  int found = 0;
  if (sqlite3_prepare_v2(im->db,
                         "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?",
                         -1, &st, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    found = 1;
  else if (rc != SQLITE_DONE)
    found = -1;
  sqlite3_finalize(st);
  return found;
}

static int has_column(struct imp *im, const char *table, const char *col) {
  char sql[256];
  sqlite3_stmt *st = NULL;
  int found = 0;
  snprintf(sql, sizeof sql, "PRAGMA table_info(\"%s\")", table);
  if (sqlite3_prepare_v2(im->db, sql, -1, &st, NULL) != SQLITE_OK) return 0;
  while (!found && sqlite3_step(st) == SQLITE_ROW) {
    const unsigned char *name = sqlite3_column_text(st, 1);
    found = name && !strcmp((const char *)name, col);
  }
  sqlite3_finalize(st);
  return found;
}

/* Slack string id for nsys string id sid (0 for NULL/absent). */
static uint32_t map_string(struct imp *im, int64_t sid) {
  uint64_t v;
  if (u64map_get(&im->strings, (uint64_t)sid, &v)) return (uint32_t)v;
  char fallback[48];
  const char *s = NULL;
  int len = 0;
  if (im->string_lookup) {
    sqlite3_reset(im->string_lookup);
    sqlite3_bind_int64(im->string_lookup, 1, sid);
    if (sqlite3_step(im->string_lookup) == SQLITE_ROW) {
      s = (const char *)sqlite3_column_text(im->string_lookup, 0);
      len = sqlite3_column_bytes(im->string_lookup, 0);
    }
  }
  if (!s) {
    len = snprintf(fallback, sizeof fallback, "[nsys string %lld]", (long long)sid);
    s = fallback;
  }
  uint32_t id = slk_file_intern(im->out, s, (size_t)len);
  if (!id || imap_put(&im->strings, sid, id)) im->failed = 1;
  return id;
}

static void add(struct imp *im, const struct slk_record *r) {
  if (slk_file_add(im->out, r)) {
    if (!im->failed) fprintf(stderr, "slack import: cannot write the trace: %s\n", strerror(errno));
    im->failed = 1;
    return;
  }
  im->count[r->kind]++;
}

/* CUpti_ActivityMemoryKind of an nsys ENUM_CUDA_MEM_KIND id (nsys counts from Pageable = 0 and
 * puts Unknown last; CUPTI starts with Unknown = 0). */
static uint8_t mem_kind(int64_t nsys_kind, int is_null) {
  if (is_null || nsys_kind < 0 || nsys_kind >= 7) return 0;
  return (uint8_t)(nsys_kind + 1);
}

/* cudaMemcpyKind of a CUPTI memcpy kind. */
static uint8_t host_copy_kind(int64_t cupti_kind) {
  switch (cupti_kind) {
  case 1: return 1; /* HtoD */
  case 2: return 2; /* DtoH */
  case 8:
  case 10: return 3; /* DtoD, peer */
  case 9: return 0;  /* HtoH */
  }
  return 4; /* cudaMemcpyDefault */
}

/* ---- sources: one statement per activity table, read in start order and merged ---- */

enum src_kind { S_KERNEL, S_MEMCPY, S_MEMSET, S_SYNC, S_RUNTIME, S_NVTX, NSRC };

struct col {
  const char *name;
  int required;
  const char *alt; /* another column to use when this one is absent, or NULL */
};

struct source {
  const char *table, *what;
  const struct col *cols;
  int ncols;
  sqlite3_stmt *st;
  int has_row;
};

#define COLS(...)                                                                                  \
  (const struct col[]){__VA_ARGS__}, sizeof((const struct col[]){__VA_ARGS__}) / sizeof(struct col)

/* Column order is the order the converters read them in. */
static struct source sources[NSRC] = {
    [S_KERNEL] = {"CUPTI_ACTIVITY_KIND_KERNEL", "kernels",
                  COLS({"start", 1, NULL}, {"end", 1, NULL}, {"deviceId", 1, NULL},
                       {"streamId", 1, NULL}, {"correlationId", 0, NULL},
                       {"demangledName", 1, "shortName"}, {"gridX", 0, NULL}, {"gridY", 0, NULL},
                       {"gridZ", 0, NULL}, {"blockX", 0, NULL}, {"blockY", 0, NULL},
                       {"blockZ", 0, NULL}, {"staticSharedMemory", 0, NULL},
                       {"dynamicSharedMemory", 0, NULL}, {"registersPerThread", 0, NULL},
                       {"graphId", 0, NULL}, {"graphNodeId", 0, NULL}, {"globalPid", 0, NULL}),
                  NULL, 0},
    [S_MEMCPY] = {"CUPTI_ACTIVITY_KIND_MEMCPY", "memcpys",
                  COLS({"start", 1, NULL}, {"end", 1, NULL}, {"deviceId", 1, NULL},
                       {"streamId", 1, NULL}, {"correlationId", 0, NULL}, {"bytes", 1, NULL},
                       {"copyKind", 1, NULL}, {"srcKind", 0, NULL}, {"dstKind", 0, NULL},
                       {"graphId", 0, NULL}, {"graphNodeId", 0, NULL}, {"globalPid", 0, NULL}),
                  NULL, 0},
    [S_MEMSET] = {"CUPTI_ACTIVITY_KIND_MEMSET", "memsets",
                  COLS({"start", 1, NULL}, {"end", 1, NULL}, {"deviceId", 1, NULL},
                       {"streamId", 1, NULL}, {"correlationId", 0, NULL}, {"bytes", 1, NULL},
                       {"memKind", 0, NULL}, {"graphId", 0, NULL}, {"graphNodeId", 0, NULL},
                       {"globalPid", 0, NULL}),
                  NULL, 0},
    [S_SYNC] = {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "synchronizations",
                COLS({"start", 1, NULL}, {"end", 1, NULL}, {"deviceId", 0, NULL},
                     {"streamId", 0, NULL}, {"correlationId", 0, NULL},
                     {"syncType", 0, "deprecatedSyncType"}, {"eventId", 0, NULL},
                     {"globalPid", 0, NULL}),
                NULL, 0},
    [S_RUNTIME] = {"CUPTI_ACTIVITY_KIND_RUNTIME", "CUDA API calls",
                   COLS({"start", 1, NULL}, {"end", 1, NULL}, {"globalTid", 1, NULL},
                        {"correlationId", 0, NULL}, {"nameId", 1, NULL}, {"returnValue", 0, NULL},
                        {"eventClass", 0, NULL}),
                   NULL, 0},
    [S_NVTX] = {"NVTX_EVENTS", "NVTX ranges",
                COLS({"start", 1, NULL}, {"end", 1, NULL}, {"globalTid", 0, NULL},
                     {"text", 0, NULL}, {"textId", 0, NULL}, {"eventType", 0, NULL}),
                NULL, 0},
};

/* Prepares src's statement: 1 when the table is there, 0 when absent (a note), -1 on a
 * schema this slack does not know (an error, said here). */
static int source_open(struct imp *im, struct source *src) {
  int t = has_table(im, src->table);
  if (t < 0) {
    sql_error(im, "cannot read the table list");
    return -1;
  }
  if (!t) {
    fprintf(stderr, "slack import: note: %s has no %s table: no %s imported\n", im->path,
            src->table, src->what);
    return 0;
  }
  char sql[2048];
  size_t o = (size_t)snprintf(sql, sizeof sql, "SELECT ");
  for (int c = 0; c < src->ncols; c++) {
    const struct col *col = &src->cols[c];
    const char *use = NULL;
    if (has_column(im, src->table, col->name))
      use = col->name;
    else if (col->alt && has_column(im, src->table, col->alt))
      use = col->alt;
    else if (col->required) {
      fprintf(stderr,
              "slack import: %s: table %s has no column '%s': an nsys schema this slack does not "
              "know (it reads the exports of nsys 2025.3)\n",
              im->path, src->table, col->name);
      return -1;
    }
    if (use)
      o += (size_t)snprintf(sql + o, sizeof sql - o, "%s\"%s\"", c ? ", " : "", use);
    else
      o += (size_t)snprintf(sql + o, sizeof sql - o, "%sNULL", c ? ", " : "");
  }
  o +=
      (size_t)snprintf(sql + o, sizeof sql - o, " FROM \"%s\" WHERE start IS NOT NULL", src->table);
  if (src == &sources[S_NVTX]) {
    /* ranges only (marks and domain events have no end) */
    o += (size_t)snprintf(sql + o, sizeof sql - o, " AND \"end\" IS NOT NULL");
    if (has_column(im, src->table, "eventType"))
      o += (size_t)snprintf(sql + o, sizeof sql - o, " AND eventType IN (59, 60, 70, 71)");
  }
  snprintf(sql + o, sizeof sql - o, " ORDER BY start");
  if (!(src->st = prepare(im, sql))) return -1;
  return 1;
}

/* Steps src to its next row; src->has_row says whether there is one. -1 on an SQLite error. */
static int source_step(struct imp *im, struct source *src) {
  int rc = sqlite3_step(src->st);
  src->has_row = rc == SQLITE_ROW;
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    sql_error(im, src->table);
    return -1;
  }
  return 0;
}

static int64_t col_i64(sqlite3_stmt *st, int c) { return sqlite3_column_int64(st, c); }
static int col_null(sqlite3_stmt *st, int c) { return sqlite3_column_type(st, c) == SQLITE_NULL; }

/* start and end of the current row (columns 0 and 1); 0 when the row is unusable. */
static int row_times(struct imp *im, sqlite3_stmt *st, struct slk_record *r) {
  int64_t s = col_i64(st, 0), e = col_i64(st, 1);
  if (col_null(st, 0) || s < 0) {
    im->bad_rows++;
    return 0;
  }
  r->start = (uint64_t)s;
  r->end = e > s ? (uint64_t)e : (uint64_t)s;
  return 1;
}

/* graph id: nsys 2025.3 exports the node id of graph work, not the graph's id; slack keeps a
 * non-zero marker derived from it ("ran inside a graph"). */
static uint32_t graph_marker(sqlite3_stmt *st, int graph_id_col) {
  if (!col_null(st, graph_id_col)) return (uint32_t)col_i64(st, graph_id_col);
  if (col_null(st, graph_id_col + 1)) return 0;
  uint64_t node = (uint64_t)col_i64(st, graph_id_col + 1);
  if (!node) return 0;
  uint32_t m = (uint32_t)(node ^ (node >> 32));
  return m ? m : 1;
}

/* --pid: globalPid and globalTid both carry the process id in bits 24..47. */
static int pid_skipped(const struct imp *im, sqlite3_stmt *st, int col) {
  if (im->pid < 0 || col_null(st, col)) return 0;
  int64_t g = col_i64(st, col);
  return ((g >> 24) & 0xffffff) != im->pid;
}

/* Static + dynamic shared memory of a kernel row, in bytes: each read as 0..UINT32_MAX (a
 * damaged row holds any int64; their plain sum could overflow) and the sum saturated. */
static uint32_t shmem_sum(int64_t a, int64_t b) {
  uint64_t x = a < 0 ? 0 : a > UINT32_MAX ? UINT32_MAX : (uint64_t)a;
  uint64_t y = b < 0 ? 0 : b > UINT32_MAX ? UINT32_MAX : (uint64_t)b;
  return x + y > UINT32_MAX ? UINT32_MAX : (uint32_t)(x + y);
}

static void convert_gpu(struct imp *im, enum src_kind k, sqlite3_stmt *st) {
  struct slk_record r;
  memset(&r, 0, sizeof r);
  if (!row_times(im, st, &r)) return;
  r.device = (uint32_t)col_i64(st, 2);
  r.stream = (uint64_t)col_i64(st, 3);
  r.corr = (uint32_t)col_i64(st, 4);
  switch (k) {
  case S_KERNEL:
    if (pid_skipped(im, st, 17)) return;
    r.kind = SLK_KERNEL;
    r.name = map_string(im, col_i64(st, 5));
    for (int i = 0; i < 3; i++) {
      r.grid[i] = (int32_t)col_i64(st, 6 + i);
      r.block[i] = (int32_t)col_i64(st, 9 + i);
    }
    r.shmem = shmem_sum(col_i64(st, 12), col_i64(st, 13));
    r.regs = (uint32_t)col_i64(st, 14);
    r.graph_id = graph_marker(st, 15);
    break;
  case S_MEMCPY:
    if (pid_skipped(im, st, 11)) return;
    r.kind = SLK_MEMCPY;
    r.bytes = (uint64_t)col_i64(st, 5);
    r.copy_kind = (uint8_t)col_i64(st, 6);
    r.src_kind = mem_kind(col_i64(st, 7), col_null(st, 7));
    r.dst_kind = mem_kind(col_i64(st, 8), col_null(st, 8));
    r.graph_id = graph_marker(st, 9);
    break;
  case S_MEMSET:
    if (pid_skipped(im, st, 9)) return;
    r.kind = SLK_MEMSET;
    r.bytes = (uint64_t)col_i64(st, 5);
    r.dst_kind = mem_kind(col_i64(st, 6), col_null(st, 6));
    r.graph_id = graph_marker(st, 7);
    break;
  case S_SYNC:
    if (pid_skipped(im, st, 7)) return;
    r.kind = SLK_SYNC;
    r.fn = (uint32_t)col_i64(st, 5);
    r.count = (uint64_t)col_i64(st, 6);
    break;
  default: return;
  }
  add(im, &r);
}

static int cmp_corr(const void *pa, const void *pb) {
  const struct corr_info *a = pa, *b = pb;
  if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
  return a->corr < b->corr ? -1 : a->corr > b->corr;
}

static const struct corr_info *corr_find(const struct imp *im, int64_t pid, uint32_t corr) {
  size_t lo = 0, hi = im->ncorr;
  struct corr_info key = {.pid = pid, .corr = corr};
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (cmp_corr(&im->corr[mid], &key) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < im->ncorr && !cmp_corr(&im->corr[lo], &key) ? &im->corr[lo] : NULL;
}

/* Stream, bytes and copy kind of each correlation id's GPU work, for the HOST records. */
static int load_corr(struct imp *im) {
  static const struct {
    enum src_kind k;
    const char *sql;
  } q[] = {
      {S_MEMCPY, "SELECT globalPid, correlationId, streamId, bytes, copyKind FROM "
                 "CUPTI_ACTIVITY_KIND_MEMCPY WHERE correlationId IS NOT NULL"},
      {S_MEMSET, "SELECT globalPid, correlationId, streamId, bytes, -1 FROM "
                 "CUPTI_ACTIVITY_KIND_MEMSET WHERE correlationId IS NOT NULL"},
      {S_KERNEL, "SELECT globalPid, correlationId, streamId, 0, -2 FROM "
                 "CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId IS NOT NULL"},
  };
  size_t cap = 0;
  for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
    if (!sources[q[i].k].st || !has_column(im, sources[q[i].k].table, "globalPid") ||
        !has_column(im, sources[q[i].k].table, "correlationId"))
      continue;
    sqlite3_stmt *st = prepare(im, q[i].sql);
    if (!st) return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      if (im->ncorr == cap) {
        cap = cap ? 2 * cap : 4096;
        struct corr_info *c = realloc(im->corr, cap * sizeof *c);
        if (!c) {
          sqlite3_finalize(st);
          return -1;
        }
        im->corr = c;
      }
      int64_t kind = col_i64(st, 4);
      im->corr[im->ncorr++] = (struct corr_info){
          .pid = col_i64(st, 0),
          .corr = (uint32_t)col_i64(st, 1),
          .stream = (uint64_t)col_i64(st, 2),
          .bytes = (uint64_t)col_i64(st, 3),
          .copy_kind = kind >= 0 ? host_copy_kind(kind) : 0,
      };
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
      sql_error(im, "reading correlation ids");
      return -1;
    }
  }
  /* stable for equal keys is not needed: any GPU record of the call describes it (and no
   * qsort of a NULL array when there were none) */
  if (im->ncorr > 1) qsort(im->corr, im->ncorr, sizeof *im->corr, cmp_corr);
  return 0;
}

/* API fn and host fn of a runtime row's function name (cached per nsys string id). */
static void runtime_names(struct imp *im, int64_t name_id, int64_t event_class, uint32_t *api_fn,
                          uint32_t *host_fn) {
  uint64_t v;
  if (!u64map_get(&im->names, (uint64_t)name_id, &v)) {
    const char *s = NULL;
    if (im->string_lookup) {
      sqlite3_reset(im->string_lookup);
      sqlite3_bind_int64(im->string_lookup, 1, name_id);
      if (sqlite3_step(im->string_lookup) == SQLITE_ROW)
        s = (const char *)sqlite3_column_text(im->string_lookup, 0);
    }
    char missing[48];
    if (!s) {
      snprintf(missing, sizeof missing, "[nsys string %lld]", (long long)name_id);
      s = missing;
    }
    int domain = event_class == 1   ? NSYS_DOMAIN_DRIVER
                 : event_class == 0 ? NSYS_DOMAIN_RUNTIME
                                    : NSYS_DOMAIN_ANY;
    uint32_t a = nsys_api_lookup(s, domain), h = nsys_fn_of_name(s);
    if (!a) a = nsys_api_lookup(s, NSYS_DOMAIN_ANY);
    if (!a) { /* the first few, for the note at the end */
      size_t used = strlen(im->unknown_names);
      if (used + strlen(s) + 3 < sizeof im->unknown_names)
        snprintf(im->unknown_names + used, sizeof im->unknown_names - used, "%s%s",
                 used ? ", " : "", s);
    }
    v = a | (uint64_t)h << 32;
    if (imap_put(&im->names, name_id, v)) im->failed = 1;
  }
  *api_fn = (uint32_t)v;
  *host_fn = (uint32_t)(v >> 32);
}

static void convert_runtime(struct imp *im, sqlite3_stmt *st) {
  struct slk_record r;
  memset(&r, 0, sizeof r);
  if (!row_times(im, st, &r)) return;
  if (pid_skipped(im, st, 2)) return;
  int64_t gtid = col_i64(st, 2), event_class = col_null(st, 6) ? -1 : col_i64(st, 6);
  uint32_t api_fn, host_fn;
  runtime_names(im, col_i64(st, 4), event_class, &api_fn, &host_fn);
  if (!api_fn) im->unknown_api_rows++;
  r.kind = SLK_API;
  r.tid = (uint64_t)(gtid & 0xffffff);
  r.corr = (uint32_t)col_i64(st, 3);
  r.fn = api_fn;
  r.result = (uint32_t)col_i64(st, 5);
  add(im, &r);
  if (host_fn == SLK_FN_UNKNOWN) return;
  /* the same call as slack's hook would have seen it, as far as nsys tells */
  struct slk_record h;
  memset(&h, 0, sizeof h);
  h.kind = SLK_HOST;
  h.tid = r.tid;
  h.start = r.start;
  h.end = r.end;
  h.fn = host_fn;
  h.result = r.result;
  h.flags = (slk_fn_is_sync(host_fn) ? SLK_HOST_SYNCHRONOUS : 0) |
            (event_class == 1 ? SLK_HOST_DRIVER : 0);
  const struct corr_info *c = r.corr ? corr_find(im, gtid & ~(int64_t)0xffffff, r.corr) : NULL;
  if (c) {
    h.stream = c->stream;
    h.bytes = c->bytes;
    h.copy_kind = c->copy_kind;
  }
  add(im, &h);
}

static void convert_nvtx(struct imp *im, sqlite3_stmt *st) {
  struct slk_record r;
  memset(&r, 0, sizeof r);
  if (!row_times(im, st, &r)) return;
  if (pid_skipped(im, st, 2)) return;
  r.kind = SLK_MARKER;
  r.tid = (uint64_t)(col_i64(st, 2) & 0xffffff);
  if (!col_null(st, 3)) {
    const char *s = (const char *)sqlite3_column_text(st, 3);
    r.name = slk_file_intern(im->out, s ? s : "", (size_t)sqlite3_column_bytes(st, 3));
  } else if (!col_null(st, 4)) {
    r.name = map_string(im, col_i64(st, 4));
  }
  add(im, &r);
}

/* DEVICE and THREAD records. */
static int import_devices_threads(struct imp *im) {
  if (has_table(im, "TARGET_INFO_GPU") == 1) {
    int sm = has_column(im, "TARGET_INFO_GPU", "smCount"),
        mem = has_column(im, "TARGET_INFO_GPU", "totalMemory"),
        name = has_column(im, "TARGET_INFO_GPU", "name");
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT id, %s, %s, %s FROM TARGET_INFO_GPU ORDER BY id",
             name ? "name" : "NULL", sm ? "smCount" : "0", mem ? "totalMemory" : "0");
    if (has_column(im, "TARGET_INFO_GPU", "id")) {
      sqlite3_stmt *st = prepare(im, sql);
      if (!st) return -1;
      while (sqlite3_step(st) == SQLITE_ROW) {
        struct slk_record r;
        memset(&r, 0, sizeof r);
        r.kind = SLK_DEVICE;
        r.device = (uint32_t)col_i64(st, 0);
        const char *s = (const char *)sqlite3_column_text(st, 1);
        if (s) r.name = slk_file_intern(im->out, s, (size_t)sqlite3_column_bytes(st, 1));
        r.regs = (uint32_t)col_i64(st, 2);
        r.bytes = (uint64_t)col_i64(st, 3);
        add(im, &r);
      }
      sqlite3_finalize(st);
    }
  } else {
    fprintf(stderr, "slack import: note: %s has no TARGET_INFO_GPU table: no device names\n",
            im->path);
  }
  if (has_table(im, "ThreadNames") == 1 && has_column(im, "ThreadNames", "globalTid") &&
      has_column(im, "ThreadNames", "nameId")) {
    /* the threads of the processes that made CUDA calls (the table names every thread of the
     * machine nsys saw) */
    int rt = sources[S_RUNTIME].st != NULL;
    sqlite3_stmt *st = prepare(
        im, rt ? "SELECT globalTid, nameId FROM ThreadNames WHERE globalTid IS NOT NULL AND "
                 "(globalTid >> 24) & 16777215 IN (SELECT DISTINCT (globalTid >> 24) & 16777215 "
                 "FROM CUPTI_ACTIVITY_KIND_RUNTIME) ORDER BY globalTid"
               : "SELECT globalTid, nameId FROM ThreadNames WHERE globalTid IS NOT NULL ORDER BY "
                 "globalTid");
    if (!st) return -1;
    int64_t last = -1;
    while (sqlite3_step(st) == SQLITE_ROW) {
      if (pid_skipped(im, st, 0)) continue;
      int64_t g = col_i64(st, 0);
      if (g == last) continue; /* the first name of a thread */
      last = g;
      struct slk_record r;
      memset(&r, 0, sizeof r);
      r.kind = SLK_THREAD;
      r.tid = (uint64_t)(g & 0xffffff);
      r.name = map_string(im, col_i64(st, 1));
      add(im, &r);
    }
    sqlite3_finalize(st);
  }
  return 0;
}

/* ---- the header ---- */

struct text {
  char *s;
  size_t n, cap;
};

static void text_add(struct text *t, const char *key, const char *value) {
  size_t need = strlen(key) + strlen(value) + 3;
  if (t->n + need + 1 > t->cap) {
    size_t cap = (t->cap + need) * 2;
    char *s = realloc(t->s, cap);
    if (!s) return;
    t->s = s;
    t->cap = cap;
  }
  t->n += (size_t)sprintf(t->s + t->n, "%s=", key);
  for (const char *p = value; *p; p++) /* one line per key: newlines become spaces */
    t->s[t->n++] = *p == '\n' || *p == '\r' ? ' ' : *p;
  t->s[t->n++] = '\n';
  t->s[t->n] = 0;
}

/* The first column of the first row of sql as text into buf ("" when none). */
static const char *query_text(struct imp *im, const char *sql, char *buf, size_t len) {
  sqlite3_stmt *st = NULL;
  buf[0] = 0;
  if (sqlite3_prepare_v2(im->db, sql, -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
    snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  return buf;
}

static char *make_header(struct imp *im, int64_t *main_pid, int64_t *nprocesses) {
  struct text t = {0};
  char buf[4096], path[4096];
  text_add(&t, "source", "nsys-sqlite");
  text_add(&t, "source_file", realpath(im->path, path) ? path : im->path);
  text_add(&t, "slack_version", SLACK_VERSION);
  text_add(&t, "nsys_version",
           query_text(im,
                      "SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_PRODUCT_VERSION'",
                      buf, sizeof buf));
  text_add(&t, "nsys_schema",
           query_text(im, "SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_SCHEMA_VERSION'",
                      buf, sizeof buf));
  text_add(&t, "clock", "nsys-session");
  text_add(&t, "start_monotonic_ns", "0");
  text_add(
      &t, "start_realtime_ns",
      query_text(im, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME", buf, sizeof buf));
  if (!query_text(im, "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'", buf,
                  sizeof buf)[0])
    query_text(im, "SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_HOST'", buf,
               sizeof buf);
  text_add(&t, "host", buf);
  /* the process with the most CUDA calls (or the one asked for) */
  *main_pid = im->pid;
  *nprocesses = 0;
  if (sources[S_RUNTIME].st) {
    query_text(im,
               "SELECT (globalTid >> 24) & 16777215 FROM CUPTI_ACTIVITY_KIND_RUNTIME "
               "GROUP BY 1 ORDER BY count(*) DESC LIMIT 1",
               buf, sizeof buf);
    if (im->pid < 0 && buf[0]) *main_pid = strtoll(buf, NULL, 10);
    query_text(im,
               "SELECT count(DISTINCT (globalTid >> 24) & 16777215) FROM "
               "CUPTI_ACTIVITY_KIND_RUNTIME",
               buf, sizeof buf);
    *nprocesses = strtoll(buf, NULL, 10);
  }
  snprintf(buf, sizeof buf, "%lld", (long long)(*main_pid >= 0 ? *main_pid : 0));
  text_add(&t, "pid", buf);
  text_add(&t, "rank", "");
  /* the command nsys launched: PROCESS_0:COMMAND and its PROCESS_0:ARGUMENT_n */
  sqlite3_stmt *st = NULL;
  size_t o = 0;
  buf[0] = 0;
  if (sqlite3_prepare_v2(im->db,
                         "SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:COMMAND' "
                         "UNION ALL SELECT value FROM (SELECT value FROM META_DATA_CAPTURE WHERE "
                         "name LIKE 'PROCESS_0:ARGUMENT_%' ORDER BY "
                         "CAST(substr(name, 20) AS INTEGER))",
                         -1, &st, NULL) == SQLITE_OK)
    while (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) && o < sizeof buf - 1)
      o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", o ? " " : "",
                            (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  text_add(&t, "cmdline", buf);
  text_add(&t, "cupti_version", "0");
  text_add(&t, "gpu_records", "on");
  return t.s;
}

/* ---- the command ---- */

static int run_import(struct imp *im, int fd, const char *out_path) {
  int rc = EXIT_ERROR, present = 0;
  for (int k = 0; k < NSRC; k++) {
    sources[k].st = NULL;
    sources[k].has_row = 0;
  }
  int t = has_table(im, "StringIds");
  if (t < 0) {
    sql_error(im, "cannot read it as an SQLite database");
    return EXIT_ERROR;
  }
  if (t)
    im->string_lookup = prepare(im, "SELECT value FROM StringIds WHERE id = ?");
  else
    fprintf(stderr,
            "slack import: note: %s has no StringIds table: names become "
            "[nsys string N]\n",
            im->path);
  for (int k = 0; k < NSRC; k++) {
    int r = source_open(im, &sources[k]);
    if (r < 0) goto out;
    present += r > 0 && k != S_NVTX;
  }
  if (!present) {
    fprintf(stderr,
            "slack import: %s: no CUDA activity tables (CUPTI_ACTIVITY_KIND_*): not an nsys "
            "export of a capture with CUDA trace (nsys profile --trace=cuda)\n",
            im->path);
    goto out;
  }
  int64_t main_pid, nprocesses;
  char *header = make_header(im, &main_pid, &nprocesses);
  if (!header) {
    fprintf(stderr, "slack import: out of memory\n");
    goto out;
  }
  if (nprocesses > 1 && im->pid < 0)
    fprintf(stderr,
            "slack import: note: %lld processes made CUDA calls; their correlation ids may "
            "repeat: --pid PID imports one (pid=%lld made the most calls)\n",
            (long long)nprocesses, (long long)main_pid);
  im->out = slk_file_open(fd, header, 3, 1 << 20);
  free(header);
  if (!im->out) {
    fprintf(stderr, "slack import: cannot write %s: %s\n", out_path, strerror(errno));
    goto out;
  }
  if (load_corr(im) || import_devices_threads(im)) goto out;

  for (int k = 0; k < NSRC; k++)
    if (sources[k].st && source_step(im, &sources[k])) goto out;
  while (!im->failed) {
    int best = -1;
    int64_t best_start = 0;
    for (int k = 0; k < NSRC; k++)
      if (sources[k].has_row) {
        int64_t s = col_i64(sources[k].st, 0);
        if (best < 0 || s < best_start) {
          best = k;
          best_start = s;
        }
      }
    if (best < 0) break;
    sqlite3_stmt *st = sources[best].st;
    if (best == S_RUNTIME)
      convert_runtime(im, st);
    else if (best == S_NVTX)
      convert_nvtx(im, st);
    else
      convert_gpu(im, (enum src_kind)best, st);
    if (source_step(im, &sources[best])) goto out;
  }
  if (im->failed) goto out;
  rc = EXIT_OK;
out:
  for (int k = 0; k < NSRC; k++) {
    sqlite3_finalize(sources[k].st);
    sources[k].st = NULL;
  }
  sqlite3_finalize(im->string_lookup);
  im->string_lookup = NULL;
  if (im->out && slk_file_close(im->out) && rc == EXIT_OK) {
    fprintf(stderr, "slack import: cannot write %s: %s\n", out_path, strerror(errno));
    rc = EXIT_ERROR;
  }
  im->out = NULL;
  return rc;
}

int cmd_import(int argc, char **argv) {
  if (slack_wants_help(argc, argv)) {
    fputs(usage, stdout);
    return EXIT_OK;
  }
  const char *format = NULL, *in = NULL, *out = NULL;
  long long pid = -1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "--pid")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "slack import: %s needs a value\n", a);
        fputs(usage, stderr);
        return EXIT_USAGE;
      }
      if (a[2] == 'p') {
        char *end;
        pid = strtoll(argv[++i], &end, 10);
        if (*end || pid < 0) return slack_usage_error("import", usage, "--pid needs a process id");
      } else {
        out = argv[++i];
      }
    } else if (!strncmp(a, "--output=", 9)) {
      out = a + 9;
    } else if (a[0] == '-' && a[1]) {
      return slack_bad_option("import", usage, a);
    } else if (!format) {
      format = a;
    } else if (!in) {
      in = a;
    } else {
      return slack_usage_error("import", usage, "one input file at a time");
    }
  }
  if (!format) return slack_usage_error("import", usage, "what to import? (slack import nsys ...)");
  if (strcmp(format, "nsys")) {
    fprintf(stderr, "slack import: unknown format '%s' (this slack imports: nsys)\n", format);
    return EXIT_USAGE;
  }
  if (!in) return slack_usage_error("import", usage, "no input file given");
  if (!out) return slack_usage_error("import", usage, "no output file given (-o OUT.slk)");
  if (access(in, R_OK)) {
    fprintf(stderr, "slack import: cannot open %s: %s\n", in, strerror(errno));
    return EXIT_ERROR;
  }
  /* SQLite opens the path as given: a FIFO would block it until a writer comes, forever, and a
   * device is no export either */
  struct stat in_sb;
  if (stat(in, &in_sb) == 0 && !S_ISREG(in_sb.st_mode)) {
    fprintf(stderr, "slack import: cannot open %s: %s\n", in,
            S_ISDIR(in_sb.st_mode) ? strerror(EISDIR) : "not a regular file");
    return EXIT_ERROR;
  }

  struct imp im;
  memset(&im, 0, sizeof im);
  im.path = in;
  im.pid = pid;
  if (sqlite3_open_v2(in, &im.db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    fprintf(stderr, "slack import: cannot open %s: %s\n", in,
            im.db ? sqlite3_errmsg(im.db) : "out of memory");
    sqlite3_close(im.db);
    return EXIT_ERROR;
  }
  /* Written beside the output under a fresh name and renamed at the end: a failed import leaves
   * no partial file. mkostemp creates the name with O_CREAT|O_EXCL, so a file or a symbolic link
   * planted at a predictable OUT.tmp is never followed, overwritten or truncated. */
  char *tmp = NULL;
  if (asprintf(&tmp, "%s.tmp.XXXXXX", out) < 0) {
    sqlite3_close(im.db);
    return EXIT_ERROR;
  }
  int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0) {
    fprintf(stderr, "slack import: cannot write %s: %s\n", out, strerror(errno));
    free(tmp);
    sqlite3_close(im.db);
    return EXIT_ERROR;
  }
  /* mkostemp makes it 0600, as libslack makes its traces: a trace holds command lines, host
   * names and symbols, the user's own data (chmod to share it) */
  int rc = run_import(&im, fd, out);
  struct stat sb;
  uint64_t bytes = fstat(fd, &sb) ? 0 : (uint64_t)sb.st_size;
  if (close(fd) && rc == EXIT_OK) {
    fprintf(stderr, "slack import: cannot write %s: %s\n", out, strerror(errno));
    rc = EXIT_ERROR;
  }
  if (rc == EXIT_OK && rename(tmp, out)) {
    fprintf(stderr, "slack import: cannot rename %s to %s: %s\n", tmp, out, strerror(errno));
    rc = EXIT_ERROR;
  }
  if (rc != EXIT_OK) unlink(tmp);
  free(tmp);
  sqlite3_close(im.db);

  if (rc == EXIT_OK) {
    if (im.bad_rows)
      fprintf(stderr, "slack import: note: %llu rows without a start time skipped\n",
              (unsigned long long)im.bad_rows);
    if (im.unknown_api_rows)
      fprintf(stderr,
              "slack import: note: %llu API calls name functions this slack has no CUPTI id for "
              "(%s): their API records carry cbid 0\n",
              (unsigned long long)im.unknown_api_rows, im.unknown_names);
    printf("slack import: %s -> %s: %llu kernels, %llu memcpys, %llu memsets, %llu syncs, %llu "
           "API calls (%llu host calls), %llu NVTX ranges, %llu devices, %llu threads; %llu "
           "bytes\n",
           in, out, (unsigned long long)im.count[SLK_KERNEL],
           (unsigned long long)im.count[SLK_MEMCPY], (unsigned long long)im.count[SLK_MEMSET],
           (unsigned long long)im.count[SLK_SYNC], (unsigned long long)im.count[SLK_API],
           (unsigned long long)im.count[SLK_HOST], (unsigned long long)im.count[SLK_MARKER],
           (unsigned long long)im.count[SLK_DEVICE], (unsigned long long)im.count[SLK_THREAD],
           (unsigned long long)bytes);
  }
  u64map_free(&im.strings);
  u64map_free(&im.names);
  free(im.corr);
  return rc;
}

#endif

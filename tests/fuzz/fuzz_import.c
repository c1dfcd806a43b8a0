/* Fuzz target "import": `slack import nsys` (analyzer/cmd_import.c) on generated SQLite files.
 *
 * Mutating SQLite files byte by byte mostly fuzzes SQLite's page checks; instead the input
 * describes a database with the tables and columns of an nsys export (the ones the importer
 * reads), which the harness writes and imports:
 *
 *   bytes 0-1  tables left out (bit t: table t of `tables` below is absent)
 *   bytes 2-5  two columns left out: table byte[2] % NT loses its column byte[3] % (its
 *              columns), and table byte[4] its column byte[5]; a pair of zeros drops nothing
 *   byte 6     --pid: 0 none, else byte - 1
 *   then rows: a table byte (% NT), then per column a type byte and its value: NULL, integers
 *              of 1, 2, 4 or 8 bytes, a real, a text or a blob (length byte, then the bytes)
 *
 * Values are stored untyped (no constraints), so any column can hold NULL, text, a huge or a
 * negative number, as a damaged or foreign export could.
 * Checks: import exits 0 or 1 (never a usage error); on 0 the trace reads back to the end with no
 * damaged tail; on either it leaves nothing but its output behind in the output's folder. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "fuzz.h"
#include "slack.h"

struct table {
  const char *name;
  const char *cols[20];
};

static const struct table tables[] = {
    {"CUPTI_ACTIVITY_KIND_KERNEL",
     {"start", "end", "deviceId", "streamId", "correlationId", "globalPid", "demangledName",
      "shortName", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ", "staticSharedMemory",
      "dynamicSharedMemory", "registersPerThread", "graphId", "graphNodeId"}},
    {"CUPTI_ACTIVITY_KIND_MEMCPY",
     {"start", "end", "deviceId", "streamId", "correlationId", "globalPid", "bytes", "copyKind",
      "srcKind", "dstKind", "graphId", "graphNodeId"}},
    {"CUPTI_ACTIVITY_KIND_MEMSET",
     {"start", "end", "deviceId", "streamId", "correlationId", "globalPid", "bytes", "memKind",
      "graphId", "graphNodeId"}},
    {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
     {"start", "end", "deviceId", "streamId", "correlationId", "globalPid", "syncType",
      "deprecatedSyncType", "eventId"}},
    {"CUPTI_ACTIVITY_KIND_RUNTIME",
     {"start", "end", "eventClass", "globalTid", "correlationId", "nameId", "returnValue"}},
    {"NVTX_EVENTS", {"start", "end", "globalTid", "text", "textId", "eventType"}},
    {"StringIds", {"id", "value"}},
    {"TARGET_INFO_GPU", {"id", "name", "smCount", "totalMemory"}},
    {"ThreadNames", {"nameId", "priority", "globalTid"}},
    {"META_DATA_EXPORT", {"name", "value"}},
    {"META_DATA_CAPTURE", {"name", "value"}},
    {"TARGET_INFO_SESSION_START_TIME", {"utcEpochNs"}},
    {"TARGET_INFO_SYSTEM_ENV", {"name", "value"}},
};
#define NT (sizeof tables / sizeof tables[0])

static int ncols(size_t t) {
  int n = 0;
  while (n < 20 && tables[t].cols[n])
    n++;
  return n;
}

static char dir[256], db_path[300], out_path[300];

static void remove_dir(void) {
  char p[600];
  const char *const files[] = {"in.sqlite", "out.slk"};
  for (size_t i = 0; i < 2; i++) {
    snprintf(p, sizeof p, "%s/%s", dir, files[i]);
    unlink(p);
  }
  rmdir(dir);
}

static void setup(void) {
  if (dir[0]) return;
  fuzz_quiet();
  const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  snprintf(dir, sizeof dir, "%s/slack-fuzz-import-%d", base, (int)getpid());
  mkdir(dir, 0700);
  snprintf(db_path, sizeof db_path, "%s/in.sqlite", dir);
  snprintf(out_path, sizeof out_path, "%s/out.slk", dir);
  atexit(remove_dir);
}

/* Removes everything in dir; returns how many entries there were besides the database and, when
 * keep_out, the output. */
static int clean_dir(int keep_out) {
  int stray = 0;
  DIR *d = opendir(dir);
  FUZZ_CHECK(d);
  struct dirent *e;
  char p[600];
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    if (strcmp(e->d_name, "in.sqlite") && !(keep_out && !strcmp(e->d_name, "out.slk"))) stray++;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    unlink(p);
  }
  closedir(d);
  return stray;
}

struct in {
  const uint8_t *p, *e;
};

static uint64_t take(struct in *in, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n && in->p < in->e; i++)
    v |= (uint64_t)*in->p++ << (8 * i);
  return v;
}

static void bind_value(sqlite3_stmt *st, int col, struct in *in) {
  if (in->p >= in->e) {
    sqlite3_bind_null(st, col);
    return;
  }
  uint8_t type = *in->p++;
  switch (type & 7) {
  case 0: sqlite3_bind_null(st, col); break;
  case 1: sqlite3_bind_int64(st, col, (int8_t)take(in, 1)); break;
  case 2: sqlite3_bind_int64(st, col, (int16_t)take(in, 2)); break;
  case 3: sqlite3_bind_int64(st, col, (int32_t)take(in, 4)); break;
  case 4: sqlite3_bind_int64(st, col, (int64_t)take(in, 8)); break;
  case 5: {
    uint64_t bits = take(in, 8);
    double d;
    memcpy(&d, &bits, sizeof d);
    sqlite3_bind_double(st, col, d);
    break;
  }
  case 6:
  case 7: {
    size_t len = (size_t)take(in, 1);
    if (len > (size_t)(in->e - in->p)) len = (size_t)(in->e - in->p);
    if (type & 1)
      sqlite3_bind_blob(st, col, in->p, (int)len, SQLITE_TRANSIENT);
    else
      sqlite3_bind_text(st, col, (const char *)in->p, (int)len, SQLITE_TRANSIENT);
    in->p += len;
    break;
  }
  }
}

/* Writes the database the input describes; 0, or -1 when SQLite fails (not a finding). */
static int make_db(const uint8_t *data, size_t size) {
  struct in in = {data, data + size};
  uint32_t absent = (uint32_t)take(&in, 2);
  uint8_t d[4];
  for (int i = 0; i < 4; i++)
    d[i] = (uint8_t)take(&in, 1);
  in.p = size > 7 ? data + 7 : data + size;
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
      SQLITE_OK) {
    sqlite3_close(db);
    return -1;
  }
  int rc = -1;
  sqlite3_stmt *ins[NT] = {0};
  char sql[1024];
  if (sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN", NULL, NULL,
                   NULL) != SQLITE_OK)
    goto out;
  for (size_t t = 0; t < NT; t++) {
    if (absent & (1u << t)) continue;
    int n = ncols(t), o = snprintf(sql, sizeof sql, "CREATE TABLE \"%s\" (", tables[t].name);
    int drop1 = (d[0] || d[1]) && d[0] % NT == t ? d[1] % n : -1;
    int drop2 = (d[2] || d[3]) && d[2] % NT == t ? d[3] % n : -1;
    int kept = 0;
    for (int c = 0; c < n; c++) {
      if (c == drop1 || c == drop2) continue;
      o += snprintf(sql + o, sizeof sql - (size_t)o, "%s\"%s\"", kept++ ? ", " : "",
                    tables[t].cols[c]);
    }
    if (!kept) continue; /* a table without columns is not SQL */
    snprintf(sql + o, sizeof sql - (size_t)o, ")");
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) goto out;
    o = snprintf(sql, sizeof sql, "INSERT INTO \"%s\" VALUES (", tables[t].name);
    for (int c = 0; c < kept; c++)
      o += snprintf(sql + o, sizeof sql - (size_t)o, "%s?", c ? ", " : "");
    snprintf(sql + o, sizeof sql - (size_t)o, ")");
    if (sqlite3_prepare_v2(db, sql, -1, &ins[t], NULL) != SQLITE_OK) goto out;
  }
  while (in.p < in.e) {
    size_t t = *in.p++ % NT;
    if (!ins[t]) continue;
    int n = sqlite3_bind_parameter_count(ins[t]);
    for (int c = 1; c <= n; c++)
      bind_value(ins[t], c, &in);
    if (sqlite3_step(ins[t]) != SQLITE_DONE) goto out;
    sqlite3_reset(ins[t]);
  }
  if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) goto out;
  rc = 0;
out:
  for (size_t t = 0; t < NT; t++)
    sqlite3_finalize(ins[t]);
  sqlite3_close(db);
  return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  setup();
  clean_dir(0);
  if (make_db(data, size)) return 0;
  char pid[24];
  const char *argv[10] = {"import", "nsys", db_path, "-o", out_path};
  int argc = 5;
  if (size > 6 && data[6]) {
    snprintf(pid, sizeof pid, "%d", data[6] - 1);
    argv[argc++] = "--pid";
    argv[argc++] = pid;
  }
  argv[argc] = NULL;
  int rc = cmd_import(argc, (char **)argv);
  FUZZ_CHECK(rc == EXIT_OK || rc == EXIT_ERROR);
  if (rc == EXIT_OK) { /* what import writes reads back whole */
    char err[256];
    struct trace_reader *rd = trace_reader_open(out_path, err, sizeof err);
    FUZZ_CHECK(rd);
    struct slk_record r;
    while (trace_reader_next(rd, &r)) {
    }
    FUZZ_CHECK(trace_reader_stats(rd)->tail == TRACE_TAIL_NONE);
    trace_reader_close(rd);
  }
  FUZZ_CHECK(clean_dir(rc == EXIT_OK) == 0); /* no temporary file left behind */
  return 0;
}

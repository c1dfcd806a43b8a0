/* format/reader.c and analyzer/join.c on files written by format/trace_file.c (slk_file_*):
 * records and strings read back as written; a file cut at every byte offset, or damaged in its
 * chunks, never crashes the reader, which returns every complete chunk and reports the unreadable
 * tail and why; header parsing and versions; the launch join.
 *
 *   test_reader                      run the tests (exit 0 when all pass)
 *   test_reader --write-sample FILE  write the small deterministic trace of tests/golden/
 *   test_reader --malform IN BAD CRC  copies of trace IN whose middle chunk holds a malformed
 *                                    record (its 100th; checksum right) in BAD, a bad checksum
 *                                    in CRC: read, both stop at that chunk
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "format.h"
#include "join.h"
#include "reader.h"

static int failures, checks;
#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    checks++;                                                                                      \
    if (!(cond)) {                                                                                 \
      failures++;                                                                                  \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);                     \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fputc('\n', stderr);                                                                         \
      if (failures > 20) exit(1);                                                                  \
    }                                                                                              \
  } while (0)

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545f4914f6cdd1dull;
}

static char tmpdir[] = "/tmp/slack-test-reader-XXXXXX";
static char path_buf[4096];
static const char *tmp_path(const char *name) {
  snprintf(path_buf, sizeof path_buf, "%s/%s", tmpdir, name);
  return path_buf;
}

static uint8_t *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *p = malloc((size_t)n + 1);
  *len = fread(p, 1, (size_t)n, f);
  fclose(f);
  return p;
}

static void write_bytes(const char *path, const void *p, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(p, 1, len, f) != len) {
    fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
    exit(2);
  }
  fclose(f);
}

/* ---- a random trace written with slk_file_* ---- */

#define NREC 3000
static struct slk_record written[NREC]; /* non-STRING records in the order added */
static size_t nwritten;
static char names[16][32];

static const char header_body[] = "host=testhost\npid=4242\ncmdline=python3 train.py --lr=0.1\n"
                                  "no equals sign here\n=no key\nsetting.SLACK_OUTPUT=/tmp/x\n"
                                  "device=0 H200\ndevice=1 H200\n";

static struct slk_record rnd_gpu(struct slk_file *f, uint64_t *t) {
  struct slk_record r;
  memset(&r, 0, sizeof r);
  r.kind = (uint8_t)(rnd() % 2 ? SLK_KERNEL : SLK_MEMCPY);
  r.device = (uint32_t)(rnd() % 2);
  r.stream = 7 + rnd() % 5;
  *t += rnd() % 5000;
  r.start = *t - rnd() % 3000; /* not in order: as CUPTI buffers come */
  r.end = r.start + rnd() % 100000;
  r.corr = (uint32_t)(rnd() % 100000);
  if (r.kind == SLK_KERNEL) {
    const char *n = names[rnd() % 16];
    r.name = slk_file_intern(f, n, strlen(n));
    r.grid[0] = (int32_t)(rnd() % 1024);
    r.block[0] = 256;
  } else {
    r.bytes = rnd() % (1 << 24);
    r.copy_kind = 1;
  }
  return r;
}

/* Writes nrec (<= NREC) records to path in chunks of chunk_bytes raw bytes; returns the file
 * size. */
static size_t write_trace(const char *path, size_t chunk_bytes, size_t nrec) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  struct slk_file *f = slk_file_open(fd, header_body, 3, chunk_bytes);
  if (!f) {
    fprintf(stderr, "slk_file_open: %s\n", strerror(errno));
    exit(2);
  }
  for (int i = 0; i < 16; i++)
    snprintf(names[i], sizeof names[i], "kernel_%d<float>", i);
  uint64_t t = 1000000000ull;
  nwritten = 0;
  for (size_t i = 0; i < nrec; i++) {
    struct slk_record r;
    if (i % 3 == 0) {
      memset(&r, 0, sizeof r);
      r.kind = SLK_HOST;
      r.tid = 100 + rnd() % 3;
      r.start = t + rnd() % 1000;
      r.end = r.start + rnd() % 20000;
      r.fn = (uint32_t)(rnd() % SLK_FN_COUNT);
      r.stream = rnd();
      char site[64];
      snprintf(site, sizeof site, "train.py:%u step", (unsigned)(rnd() % 40));
      r.callsite = slk_file_intern(f, site, strlen(site));
    } else {
      r = rnd_gpu(f, &t);
    }
    written[nwritten++] = r;
    if (slk_file_add(f, &r)) {
      fprintf(stderr, "slk_file_add: %s\n", strerror(errno));
      exit(2);
    }
  }
  slk_file_close(f);
  close(fd);
  struct stat sb;
  stat(path, &sb);
  return (size_t)sb.st_size;
}

static int same(const struct slk_record *a, const struct slk_record *b) {
  return a->kind == b->kind && a->device == b->device && a->stream == b->stream &&
         a->tid == b->tid && a->start == b->start && a->end == b->end && a->corr == b->corr &&
         a->name == b->name && a->fn == b->fn && a->callsite == b->callsite &&
         a->bytes == b->bytes && a->copy_kind == b->copy_kind && a->grid[0] == b->grid[0] &&
         a->block[0] == b->block[0];
}

/* Chunk boundaries of a file: offsets[i] where chunk i begins, recs[i] its record count. */
struct layout {
  size_t n, header_end;
  size_t off[4096];
  uint32_t recs[4096];
};

static void file_layout(const uint8_t *p, size_t len, struct layout *l) {
  l->n = 0;
  l->header_end = SLK_FILE_HEADER_FIXED + slk_get_u32(p + 12);
  size_t off = l->header_end;
  while (off + SLK_CHUNK_HEADER_SIZE <= len && l->n < 4096) {
    size_t plen = slk_get_u32(p + off + 4);
    if (off + SLK_CHUNK_HEADER_SIZE + plen > len) break;
    l->off[l->n] = off;
    l->recs[l->n++] = slk_get_u32(p + off + 12);
    off += SLK_CHUNK_HEADER_SIZE + plen;
  }
  l->off[l->n] = off; /* end of the last complete chunk */
}

static void test_round_trip(void) {
  const char *path = tmp_path("rt.slk");
  size_t size = write_trace(path, 4096, NREC);
  char err[256] = "";
  struct trace_reader *rd = trace_reader_open(path, err, sizeof err);
  CHECK(rd != NULL, "open: %s", err);
  if (!rd) return;
  unsigned major, minor;
  trace_reader_version(rd, &major, &minor);
  CHECK(major == SLK_VERSION_MAJOR && minor == SLK_VERSION_MINOR, "version %u.%u", major, minor);
  CHECK(!strcmp(trace_reader_header(rd, "host"), "testhost"), "host");
  CHECK(!strcmp(trace_reader_header(rd, "cmdline"), "python3 train.py --lr=0.1"), "'=' in value");
  CHECK(!strcmp(trace_reader_header(rd, "setting.SLACK_OUTPUT"), "/tmp/x"), "setting key");
  CHECK(!strcmp(trace_reader_header(rd, "device"), "0 H200"), "first of a repeated key");
  CHECK(trace_reader_header(rd, "nope") == NULL, "absent key");
  CHECK(trace_reader_header_count(rd) == 6, "6 key=value lines, got %zu",
        trace_reader_header_count(rd));
  struct slk_record r;
  size_t i = 0, strings = 0;
  while (trace_reader_next(rd, &r)) {
    if (r.kind == SLK_STRING) {
      strings++;
      CHECK(r.id == strings, "string ids count up from 1: %u", r.id);
      CHECK(!strcmp(trace_reader_string(rd, r.id), "?") ||
                strlen(trace_reader_string(rd, r.id)) == r.str_len,
            "string table entry");
      continue;
    }
    CHECK(i < nwritten && same(&r, &written[i]), "record %zu differs", i);
    if (r.kind == SLK_KERNEL)
      CHECK(!strncmp(trace_reader_string(rd, r.name), "kernel_", 7), "kernel name resolves");
    if (r.kind == SLK_HOST)
      CHECK(!strncmp(trace_reader_string(rd, r.callsite), "train.py:", 9), "callsite resolves");
    i++;
  }
  const struct trace_reader_stats *st = trace_reader_stats(rd);
  CHECK(i == nwritten, "read %zu of %zu records", i, nwritten);
  CHECK(strings >= 16 && strings <= 56, "%zu strings", strings);
  CHECK(st->tail == TRACE_TAIL_NONE && st->tail_bytes == 0, "clean end: %s",
        trace_tail_reason(st->tail));
  CHECK(st->chunks > 5, "several chunks: %llu", (unsigned long long)st->chunks);
  CHECK(st->file_bytes == size, "file bytes");
  CHECK(st->count_mismatch == 0, "record counts match chunk headers");
  CHECK(st->records == nwritten + strings, "stats.records");
  CHECK(!strcmp(trace_reader_string(rd, 0), "?") && !strcmp(trace_reader_string(rd, 99999), "?"),
        "unknown ids read ?");
  CHECK(trace_reader_next(rd, &r) == 0, "next after the end stays 0");
  trace_reader_close(rd);
}

/* Cuts a file of nrec records at every byte offset from `from` (negative: the start of that many
 * chunks before the end) to its end: open fails cleanly inside the file header; otherwise every
 * complete chunk reads back and the tail is reported exactly. The cuts go from the end down, each
 * an ftruncate of the same file. */
static void test_truncate(const char *what, size_t nrec, int last_chunks) {
  const char *path = tmp_path("cut.slk");
  write_trace(path, 4096, nrec);
  size_t len;
  uint8_t *p = read_all(path, &len);
  static struct layout l;
  file_layout(p, len, &l);
  CHECK(l.off[l.n] == len && l.n >= 3, "%s: layout: %zu chunks end at %zu of %zu", what, l.n,
        l.off[l.n], len);
  size_t from = last_chunks > 0 && (size_t)last_chunks < l.n ? l.off[l.n - (size_t)last_chunks] : 0;
  int fd = open(path, O_WRONLY);
  size_t opened = 0;
  for (size_t cut = len + 1; cut-- > from;) {
    if (ftruncate(fd, (off_t)cut) != 0) {
      perror("ftruncate");
      exit(2);
    }
    char err[256] = "";
    struct trace_reader *rd = trace_reader_open(path, err, sizeof err);
    if (cut < l.header_end) {
      CHECK(rd == NULL && err[0], "%s: cut %zu inside the file header opened", what, cut);
      trace_reader_close(rd);
      continue;
    }
    CHECK(rd != NULL, "%s: cut %zu: open: %s", what, cut, err);
    if (!rd) continue;
    opened++;
    size_t complete = 0, want = 0;
    while (complete < l.n && l.off[complete + 1] <= cut)
      want += l.recs[complete++];
    struct slk_record r;
    size_t got = 0;
    while (trace_reader_next(rd, &r))
      got++;
    const struct trace_reader_stats *st = trace_reader_stats(rd);
    size_t rest = cut - l.off[complete];
    enum trace_tail why = rest == 0                      ? TRACE_TAIL_NONE
                          : rest < SLK_CHUNK_HEADER_SIZE ? TRACE_TAIL_SHORT_HEADER
                                                         : TRACE_TAIL_SHORT_PAYLOAD;
    CHECK(got == want, "%s: cut %zu: %zu records, want %zu", what, cut, got, want);
    CHECK(st->chunks == complete, "%s: cut %zu: %llu chunks, want %zu", what, cut,
          (unsigned long long)st->chunks, complete);
    CHECK(st->tail == why, "%s: cut %zu: tail %s, want %s", what, cut, trace_tail_reason(st->tail),
          trace_tail_reason(why));
    CHECK(st->tail_bytes == rest, "%s: cut %zu: tail %llu bytes, want %zu", what, cut,
          (unsigned long long)st->tail_bytes, rest);
    CHECK(rest == 0 || st->tail_offset == l.off[complete], "%s: cut %zu: tail offset", what, cut);
    trace_reader_close(rd);
  }
  close(fd);
  CHECK(opened == len + 1 - (from > l.header_end ? from : l.header_end),
        "%s: every cut past the header opened", what);
  free(p);
}

/* Reads path to the end; returns the records read, *st_out the final stats. */
static size_t read_count(const char *path, struct trace_reader_stats *st_out) {
  char err[256];
  struct trace_reader *rd = trace_reader_open(path, err, sizeof err);
  if (!rd) return (size_t)-1;
  struct slk_record r;
  size_t n = 0;
  while (trace_reader_next(rd, &r))
    n++;
  *st_out = *trace_reader_stats(rd);
  trace_reader_close(rd);
  return n;
}

static void test_damage(void) {
  const char *path = tmp_path("dmg-src.slk");
  write_trace(path, 4096, NREC);
  size_t len;
  uint8_t *p = read_all(path, &len);
  static struct layout l;
  file_layout(p, len, &l);
  uint8_t *q = malloc(len);
  const char *dpath = tmp_path("dmg.slk");
  struct trace_reader_stats st;
  size_t before = 0; /* records in chunks 0..2 */
  for (int c = 0; c < 3; c++)
    before += l.recs[c];
  size_t c3 = l.off[3];

  struct {
    const char *what;
    size_t at;  /* byte to change */
    uint8_t xr; /* xor with */
    int set32;  /* or: set the u32 at `at` to val */
    uint32_t val;
    enum trace_tail want;
  } cases[] = {
      {"payload byte", c3 + SLK_CHUNK_HEADER_SIZE + 5, 0x40, 0, 0, TRACE_TAIL_BAD_CRC},
      {"last payload byte", l.off[4] - 1, 0x01, 0, 0, TRACE_TAIL_BAD_CRC},
      {"chunk magic", c3 + 1, 0x20, 0, 0, TRACE_TAIL_BAD_MAGIC},
      {"crc field", c3 + 32, 0x01, 0, 0, TRACE_TAIL_BAD_CRC},
      {"payload_len huge", c3 + 4, 0, 1, 0xfffffff0u, TRACE_TAIL_BAD_LENGTH},
      {"payload_len zero", c3 + 4, 0, 1, 0, TRACE_TAIL_BAD_LENGTH},
      {"payload_len past end", c3 + 4, 0, 1, (uint32_t)len, TRACE_TAIL_SHORT_PAYLOAD},
      {"raw_len +1", c3 + 8, 0, 1, slk_get_u32(p + c3 + 8) + 1, TRACE_TAIL_BAD_FRAME},
      {"raw_len huge", c3 + 8, 0, 1, 0xffffffffu, TRACE_TAIL_BAD_LENGTH},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    memcpy(q, p, len);
    if (cases[k].set32)
      slk_put_u32(q + cases[k].at, cases[k].val);
    else
      q[cases[k].at] ^= cases[k].xr;
    write_bytes(dpath, q, len);
    size_t n = read_count(dpath, &st);
    CHECK(n == before, "%s: %zu records, want the %zu of the chunks before", cases[k].what, n,
          before);
    CHECK(st.tail == cases[k].want, "%s: tail %s, want %s", cases[k].what,
          trace_tail_reason(st.tail), trace_tail_reason(cases[k].want));
    CHECK(st.tail_offset == c3 && st.tail_bytes == len - c3, "%s: tail at %llu (%llu bytes)",
          cases[k].what, (unsigned long long)st.tail_offset, (unsigned long long)st.tail_bytes);
  }

  /* t_min/t_max and record count are outside the checksum: damage there is not fatal */
  memcpy(q, p, len);
  q[c3 + 17] ^= 0xff;
  slk_put_u32(q + c3 + 12, 1);
  write_bytes(dpath, q, len);
  size_t all = 0;
  for (size_t c = 0; c < l.n; c++)
    all += l.recs[c];
  CHECK(read_count(dpath, &st) == all && st.tail == TRACE_TAIL_NONE && st.count_mismatch == 1,
        "damaged record count only counted: %llu mismatches",
        (unsigned long long)st.count_mismatch);

  /* random damage anywhere: never a crash, never more records than the file holds */
  for (int rep = 0; rep < 1500; rep++) {
    memcpy(q, p, len);
    int flips = 1 + (int)(rnd() % 4);
    for (int k = 0; k < flips; k++)
      q[rnd() % len] ^= (uint8_t)(1 + rnd() % 255);
    size_t cut = rnd() % 4 ? len : rnd() % len;
    write_bytes(dpath, q, cut);
    size_t n = read_count(dpath, &st);
    CHECK(n == (size_t)-1 || n <= all, "random damage: %zu records of %zu", n, all);
  }
  free(q);
  free(p);
}

/* Files that are not traces, or of another version. */
static void test_open_errors(void) {
  char err[256];
  const char *path = tmp_path("hdr.slk");
  CHECK(!trace_reader_open(tmp_path("missing.slk"), err, sizeof err) && strstr(err, "No such file"),
        "missing file: %s", err);
  CHECK(!trace_reader_open(tmpdir, err, sizeof err) && strstr(err, "directory"), "directory: %s",
        err);
  write_bytes(path, "", 0);
  CHECK(!trace_reader_open(path, err, sizeof err) && strstr(err, "empty"), "empty: %s", err);
  write_bytes(path, "hello world, not a trace at all", 31);
  CHECK(!trace_reader_open(path, err, sizeof err) && strstr(err, "not a slack trace"),
        "not a trace: %s", err);

  uint8_t h[64];
  memcpy(h, SLK_MAGIC, 8);
  h[8] = SLK_VERSION_MAJOR + 1, h[9] = 0, h[10] = 0, h[11] = 0;
  slk_put_u32(h + 12, 0);
  write_bytes(path, h, 16);
  char want[32];
  snprintf(want, sizeof want, "format %d.0", SLK_VERSION_MAJOR + 1);
  CHECK(!trace_reader_open(path, err, sizeof err) && strstr(err, want), "newer major: %s", err);
  h[8] = 0;
  write_bytes(path, h, 16);
  CHECK(!trace_reader_open(path, err, sizeof err) && strstr(err, "format 0.0"), "major 0: %s", err);
  h[8] = SLK_VERSION_MAJOR, h[10] = 9;
  slk_put_u32(h + 12, 6);
  memcpy(h + 16, "a=b\nc=", 6);
  write_bytes(path, h, 22);
  struct trace_reader *rd = trace_reader_open(path, err, sizeof err);
  CHECK(rd != NULL, "minor 9 opens: %s", err);
  if (rd) {
    unsigned major, minor;
    trace_reader_version(rd, &major, &minor);
    CHECK(major == SLK_VERSION_MAJOR && minor == 9, "newer minor");
    CHECK(!strcmp(trace_reader_header(rd, "a"), "b") && !strcmp(trace_reader_header(rd, "c"), ""),
          "header without a final newline");
    struct slk_record r;
    CHECK(trace_reader_next(rd, &r) == 0 && trace_reader_stats(rd)->tail == TRACE_TAIL_NONE,
          "no chunks");
    trace_reader_close(rd);
  }
  write_bytes(path, h, 20);
  CHECK(!trace_reader_open(path, err, sizeof err) && strstr(err, "truncated file header"),
        "cut in the header body: %s", err);
  slk_put_u32(h + 12, 0xffffffffu);
  write_bytes(path, h, 22);
  CHECK(!trace_reader_open(path, err, sizeof err) && strstr(err, "damaged file header"),
        "huge body_len: %s", err);
}

/* ---- hand-made chunks: what slk_file_* never writes ---- */

static size_t put_chunk(uint8_t *out, const uint8_t *raw, size_t raw_len, uint32_t records) {
  size_t n =
      ZSTD_compress(out + SLK_CHUNK_HEADER_SIZE, ZSTD_compressBound(raw_len), raw, raw_len, 1);
  slk_put_u32(out, SLK_CHUNK_MAGIC);
  slk_put_u32(out + 4, (uint32_t)n);
  slk_put_u32(out + 8, (uint32_t)raw_len);
  slk_put_u32(out + 12, records);
  slk_put_u64(out + 16, 0);
  slk_put_u64(out + 24, 0);
  slk_put_u32(out + 32, slk_crc32c(out + SLK_CHUNK_HEADER_SIZE, n));
  slk_put_u32(out + 36, 0);
  return SLK_CHUNK_HEADER_SIZE + n;
}

static void test_handmade_chunks(void) {
  static uint8_t file[1 << 16];
  size_t n = 0;
  memcpy(file, SLK_MAGIC, 8);
  file[8] = 1, file[9] = 0, file[10] = 3, file[11] = 0; /* a newer minor */
  slk_put_u32(file + 12, 0);
  n = 16;
  /* chunk 1: string, an unknown kind, a DROPS with two trailing fields of a newer minor,
   * the same string id redefined, a string holding a NUL */
  uint8_t raw1[] = {SLK_STRING, 5, 1, 3, 'a', 'b', 'c', /* id 1 = "abc" */
                    77,         2, 9, 9,                /* unknown kind 77 */
                    SLK_DROPS,  5, 8, 3, 1,   4,   4,   /* tid 8 count 3 cupti */
                    SLK_STRING, 4, 1, 2, 'x', 'y',      /* id 1 = "xy" */
                    SLK_STRING, 5, 2, 3, 'p', 0,   'q'};
  n += put_chunk(file + n, raw1, sizeof raw1, 5);
  /* chunk 2: a checksummed chunk with a malformed record: reading stops before it */
  uint8_t raw2[] = {SLK_DROPS, 3, 8, 1, 0, SLK_DROPS, 9, 8};
  size_t c2 = n;
  n += put_chunk(file + n, raw2, sizeof raw2, 2);
  const char *path = tmp_path("hand.slk");
  write_bytes(path, file, n);
  char err[256];
  /* times 2: chunk 2's first record comes before its second fails; the counters as with 0 */
  for (int times = 0; times <= 2; times += 2) {
    struct trace_reader *rd = trace_reader_open(path, err, sizeof err);
    CHECK(rd != NULL, "open: %s", err);
    if (!rd) return;
    trace_reader_set_times(rd, times);
    struct slk_record r;
    int got = 0, drops = 0;
    while (trace_reader_next(rd, &r)) {
      got++;
      if (r.kind == SLK_DROPS && ++drops == 1) /* chunk 1's (times 2: chunk 2's first after) */
        CHECK(r.tid == 8 && r.count == 3 && r.flags == SLK_DROP_CUPTI, "drops fields");
      CHECK(r.kind != 77, "unknown kind returned");
    }
    const struct trace_reader_stats *st = trace_reader_stats(rd);
    CHECK(got == (times ? 5 : 4) && drops == (times ? 2 : 1), "times %d: %d records, %d drops",
          times, got, drops);
    CHECK(st->partial_chunks == (times ? 1u : 0u) && st->records == 4,
          "times %d: %llu partial chunks, %llu records counted", times,
          (unsigned long long)st->partial_chunks, (unsigned long long)st->records);
    CHECK(st->unknown_records == 1, "unknown kinds counted");
    CHECK(!strcmp(trace_reader_string(rd, 1), "xy"), "redefined string: %s",
          trace_reader_string(rd, 1));
    CHECK(!memcmp(trace_reader_string(rd, 2), "p\0q", 4), "string with NUL");
    CHECK(st->tail == TRACE_TAIL_BAD_RECORD && st->tail_offset == c2 && st->tail_bytes == n - c2,
          "malformed record: %s", trace_tail_reason(st->tail));
    CHECK(st->chunks == 1, "one chunk read");
    trace_reader_close(rd);
  }
}

/* test_reader --malform IN BAD CRC (see the top). 0, or 1 when IN has no chunk of 200 records. */
static int malform(const char *in, const char *bad, const char *crc) {
  FILE *f = fopen(in, "rb");
  if (!f) return 1;
  static uint8_t file[64 << 20];
  size_t n = fread(file, 1, sizeof file, f);
  fclose(f);
  if (n < SLK_FILE_HEADER_FIXED || n == sizeof file) return 1;
  /* the chunks' offsets */
  size_t off[4096], nc = 0, at = SLK_FILE_HEADER_FIXED + slk_get_u32(file + 12);
  while (at + SLK_CHUNK_HEADER_SIZE <= n && nc < 4096) {
    off[nc++] = at;
    at += SLK_CHUNK_HEADER_SIZE + slk_get_u32(file + at + 4);
  }
  if (!nc) return 1;
  size_t c = off[nc / 2], plen = slk_get_u32(file + c + 4), rlen = slk_get_u32(file + c + 8);
  uint8_t *raw = malloc(rlen), *out = malloc(ZSTD_compressBound(rlen) + SLK_CHUNK_HEADER_SIZE);
  if (!raw || !out || ZSTD_decompress(raw, rlen, file + c + SLK_CHUNK_HEADER_SIZE, plen) != rlen) {
    free(raw);
    free(out);
    return 1;
  }
  /* the 100th record on whose body ends a varint: its last byte made to continue it */
  size_t pos = 0, k = 0;
  int done = 0;
  while (pos < rlen && !done) {
    size_t used = slk_skip(raw + pos, rlen - pos);
    if (!used) break;
    if (++k >= 100 && raw[pos] != SLK_STRING && used > 2 && raw[pos + 1] < 0x80 &&
        raw[pos + 1] == used - 2) {
      raw[pos + used - 1] |= 0x80;
      done = 1;
    }
    pos += used;
  }
  size_t records = slk_get_u32(file + c + 12);
  size_t len = done ? put_chunk(out, raw, rlen, (uint32_t)records) : 0;
  FILE *b = done ? fopen(bad, "wb") : NULL;
  int rc = !b || fwrite(file, 1, c, b) != c || fwrite(out, 1, len, b) != len;
  size_t rest = c + SLK_CHUNK_HEADER_SIZE + plen;
  rc |= b && fwrite(file + rest, 1, n - rest, b) != n - rest;
  if (b) rc |= fclose(b) != 0;
  file[c + SLK_CHUNK_HEADER_SIZE + plen / 2] ^= 0xff; /* the checksum no longer matches */
  FILE *x = rc ? NULL : fopen(crc, "wb");
  rc |= !x || fwrite(file, 1, n, x) != n;
  if (x) rc |= fclose(x) != 0;
  free(raw);
  free(out);
  return rc;
}

/* ---- trace_data and the launch join ---- */

static struct slk_record mk(uint8_t kind, uint64_t tid_or_dev, uint64_t s, uint64_t e,
                            uint32_t corr) {
  struct slk_record r;
  memset(&r, 0, sizeof r);
  r.kind = kind;
  if (kind == SLK_KERNEL || kind == SLK_MEMCPY || kind == SLK_MEMSET)
    r.device = (uint32_t)tid_or_dev;
  else
    r.tid = tid_or_dev;
  r.start = s;
  r.end = e;
  r.corr = corr;
  return r;
}

/* API spans given in any order (a long trace's window gives them as they come) end up in the
 * join's order as if they had come sorted by (start, end, id), ties in the order they came: by
 * id, then start and end, then that order (runs of one id short and long, dense and sparse ids);
 * the same where the spans are lent (join_set_lend_api: sorted in place or into the set's own
 * array, the lent one left to its owner). */
static int cmp_span_seq(const void *pa, const void *pb) {
  const struct join_span *a = pa, *b = pb;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  if (a->end != b->end) return a->end < b->end ? -1 : 1;
  if (a->corr != b->corr) return a->corr < b->corr ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index; /* the order they came */
}

static void test_join_api_order(void) {
  for (int round = 0; round < 24; round++) {
    size_t n = 50 + rnd() % 3000, ids = 1 + n / (1 + rnd() % (round % 3 == 2 ? 40 : 3));
    uint32_t spread = round % 4 == 3 ? 1000 : 1; /* sparse ids: not the counting sort */
    struct join_span *v = malloc(n * sizeof *v), *w = malloc(n * sizeof *w),
                     *l = malloc(n * sizeof *l);
    for (size_t i = 0; i < n; i++) {
      uint64_t s = 1000 + rnd() % 500; /* few starts and ends: ties of both */
      v[i] = (struct join_span){1 + rnd() % 3, s, s + rnd() % 4,
                                (uint32_t)(1 + (rnd() % ids) * spread), (uint32_t)i};
    }
    memcpy(w, v, n * sizeof *w);
    qsort(w, n, sizeof *w, cmp_span_seq);
    for (size_t i = 0; i < n; i++)
      v[i].index = w[i].index = 0; /* as join_set_add leaves an API span's */
    memcpy(l, v, n * sizeof *l);
    struct join_set a, b, c;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(&c, 0, sizeof c);
    CHECK(!join_set_add_spans(&a, w, n) && !join_set_add_spans(&b, v, n), "spans added");
    join_set_lend_api(&c, l, n);
    join_set_build(&a);
    join_set_build(&b);
    join_set_build(&c);
    size_t same = 0, lent = 0;
    for (size_t i = 0; i < n; i++) { /* the index is 0: tell spans apart by their place in w */
      same += a.api[i].corr == b.api[i].corr && a.api[i].start == b.api[i].start &&
              a.api[i].end == b.api[i].end && a.api[i].tid == b.api[i].tid && !b.api[i].index;
      lent += a.api[i].corr == c.api[i].corr && a.api[i].start == c.api[i].start &&
              a.api[i].end == c.api[i].end && a.api[i].tid == c.api[i].tid && !c.api[i].index;
    }
    CHECK(a.napi == n && b.napi == n && same == n, "round %d: %zu of %zu spans in place", round,
          same, n);
    CHECK(c.napi == n && lent == n, "round %d: %zu of %zu lent spans in place", round, lent, n);
    join_set_free(&a);
    join_set_free(&b);
    join_set_free(&c); /* l is still this test's */
    free(v);
    free(w);
    free(l);
  }
}

static void test_join(void) {
  struct trace_data td;
  memset(&td, 0, sizeof td);
  struct slk_record in[] = {
      mk(SLK_KERNEL, 0, 3000, 4000, 5), /* launched by the LAUNCH below */
      mk(SLK_HOST, 1, 1000, 2000, 0),   /* cudaLaunchKernel */
      mk(SLK_API, 1, 1100, 1900, 5),    /* inside it */
      mk(SLK_HOST, 1, 5000, 6000, 0),   /* cudaGraphLaunch */
      mk(SLK_API, 1, 5100, 5900, 6),    /* inside it */
      mk(SLK_KERNEL, 0, 7000, 8000, 6), /* graph kernels */
      mk(SLK_KERNEL, 0, 8000, 9000, 6), /*   (graph_id set below) */
      mk(SLK_API, 2, 7000, 7100, 7),    /* API on a thread without host records */
      mk(SLK_KERNEL, 1, 9000, 9500, 7), /*   -> no host */
      mk(SLK_KERNEL, 1, 9500, 9600, 8), /* no API record */
      mk(SLK_KERNEL, 1, 9600, 9700, 0), /* no correlation id */
      mk(SLK_API, 1, 2500, 2600, 9),    /* just after the launch: must not join to it */
      mk(SLK_KERNEL, 0, 9700, 9800, 9), /*   -> no host */
      mk(SLK_HOST, 3, 10000, 10100, 0), /* host stamps a little inside CUPTI's (clock */
      mk(SLK_API, 3, 9990, 10110, 10),  /*   mapping): joins within the tolerance */
      mk(SLK_KERNEL, 0, 11000, 11100, 10),
  };
  in[1].fn = SLK_FN_LAUNCH;
  in[3].fn = SLK_FN_GRAPH_LAUNCH;
  in[5].graph_id = in[6].graph_id = 4;
  for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
    trace_data_add(&td, &in[i]);
  trace_data_sort(&td);
  const struct trace_array *k = &td.kind[SLK_KERNEL], *h = &td.kind[SLK_HOST];
  for (size_t i = 1; i < k->n; i++)
    CHECK(k->v[i - 1].start <= k->v[i].start, "sorted by start");
  struct launch_join lj;
  CHECK(launch_join_compute(&td, &lj) == 0, "join runs");
  CHECK(lj.kernels == 8, "%llu kernels", (unsigned long long)lj.kernels);
  CHECK(lj.joined == 4, "%llu joined", (unsigned long long)lj.joined);
  CHECK(lj.graph_kernels == 2 && lj.graph_joined == 2, "graph kernels %llu/%llu",
        (unsigned long long)lj.graph_joined, (unsigned long long)lj.graph_kernels);
  CHECK(lj.no_api == 2 && lj.no_host == 2, "no api %llu, no host %llu",
        (unsigned long long)lj.no_api, (unsigned long long)lj.no_host);
  for (size_t i = 0; i < k->n; i++) {
    long long hi = lj.host_of[i];
    if (k->v[i].corr == 5) CHECK(hi >= 0 && h->v[hi].fn == SLK_FN_LAUNCH, "kernel 5 -> launch");
    if (k->v[i].corr == 6)
      CHECK(hi >= 0 && h->v[hi].fn == SLK_FN_GRAPH_LAUNCH, "graph kernel -> graph launch");
    if (k->v[i].corr == 10) CHECK(hi >= 0 && h->v[hi].tid == 3, "tolerance join");
    if (k->v[i].corr == 9) CHECK(hi == JOIN_NO_HOST, "no join to a neighbouring call");
  }
  launch_join_free(&lj);
  trace_data_free(&td);
}

/* CUPTI attached again between production windows (runtime/window.c) sees no runtime API call:
 * kernels then carry the correlation id of the driver call cudart made inside the hooked runtime
 * call, on the same thread, within its span. The join takes them to that host call, whether it
 * carries another id (a driver call before the launch, met first by the writer) or none. */
static void test_join_driver(void) {
  struct trace_data td;
  memset(&td, 0, sizeof td);
  struct slk_record in[] = {
      mk(SLK_HOST, 1, 20000, 21000, 20), /* cudaLaunchKernel, with another call's id */
      mk(SLK_API, 1, 20300, 20800, 21),  /* cuLaunchKernel inside it (driver) */
      mk(SLK_KERNEL, 0, 22000, 23000, 21),
      mk(SLK_HOST, 1, 24000, 25000, 0), /* cudaLaunchKernel, no id of its own */
      mk(SLK_API, 1, 24100, 24900, 22), /* cuLaunchKernelEx inside it (driver) */
      mk(SLK_KERNEL, 0, 26000, 27000, 22),
      mk(SLK_API, 2, 24100, 24900, 23), /* the same span on another thread: not joined */
      mk(SLK_KERNEL, 0, 27000, 28000, 23),
  };
  in[0].fn = in[3].fn = SLK_FN_LAUNCH;
  in[1].fn = SLK_API_DRIVER | 307u;            /* cuLaunchKernel */
  in[4].fn = in[6].fn = SLK_API_DRIVER | 652u; /* cuLaunchKernelEx */
  for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
    trace_data_add(&td, &in[i]);
  trace_data_sort(&td);
  struct launch_join lj;
  CHECK(launch_join_compute(&td, &lj) == 0, "join runs");
  CHECK(lj.kernels == 3 && lj.joined == 2 && lj.no_host == 1, "driver join: %llu of %llu",
        (unsigned long long)lj.joined, (unsigned long long)lj.kernels);
  const struct trace_array *k = &td.kind[SLK_KERNEL], *h = &td.kind[SLK_HOST];
  for (size_t i = 0; i < k->n; i++) {
    long long hi = lj.host_of[i];
    if (k->v[i].corr == 21) CHECK(hi >= 0 && h->v[hi].start == 20000, "kernel 21 -> its launch");
    if (k->v[i].corr == 22) CHECK(hi >= 0 && h->v[hi].start == 24000, "kernel 22 -> its launch");
  }
  launch_join_free(&lj);
  trace_data_free(&td);
}

/* ---- the sample trace of tests/golden (numbers worked out in tests/golden/README.md) ---- */

static int write_sample(const char *path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    fprintf(stderr, "test_reader: cannot create %s: %s\n", path, strerror(errno));
    return 2;
  }
  struct slk_file *f = slk_file_open(fd,
                                     "host=testhost\npid=4242\nrank=\ncmdline=python3 train.py\n"
                                     "slack_version=test\nclock=CLOCK_MONOTONIC\n"
                                     "setting.SLACK_OUTPUT=/tmp/x\n",
                                     3, 1 << 16);
  const uint64_t B = 1000000;
#define S(s) slk_file_intern(f, s, strlen(s))
  uint32_t gemm = S("gemm_kernel"), relu = S("relu_kernel"), nccl = S("ncclAllReduce_kernel");
  uint32_t site = S("train.py:12 load_batch");
  struct slk_record r[40];
  int n = 0;
#define ADD(...) r[n++] = (struct slk_record){__VA_ARGS__}
  ADD(.kind = SLK_THREAD, .tid = 100, .name = S("main"));
  ADD(.kind = SLK_THREAD, .tid = 200, .name = S("nccl \"proxy\""));
  ADD(.kind = SLK_DEVICE, .device = 0, .name = S("Stub GPU 0"), .regs = 132, .bytes = 150ull << 30);
  ADD(.kind = SLK_DEVICE, .device = 1, .name = S("Stub GPU 1"), .regs = 132, .bytes = 150ull << 30);
  ADD(.kind = SLK_MARKER, .tid = 100, .start = B, .end = B + 150000, .name = S("step 1"));
  ADD(.kind = SLK_HOST, .tid = 100, .start = B, .end = B + 10000, .fn = SLK_FN_MEMCPY_ASYNC,
      .stream = 7, .bytes = 4096, .copy_kind = 1, .callsite = site);
  ADD(.kind = SLK_API, .tid = 100, .start = B + 1000, .end = B + 9000, .corr = 1, .fn = 41);
  ADD(.kind = SLK_HOST, .tid = 100, .start = B + 12000, .end = B + 15000, .fn = SLK_FN_LAUNCH,
      .stream = 7);
  ADD(.kind = SLK_API, .tid = 100, .start = B + 12500, .end = B + 14500, .corr = 2, .fn = 211);
  ADD(.kind = SLK_HOST, .tid = 100, .start = B + 16000, .end = B + 18000, .fn = SLK_FN_LAUNCH,
      .stream = 13);
  ADD(.kind = SLK_API, .tid = 100, .start = B + 16500, .end = B + 17500, .corr = 3, .fn = 211);
  ADD(.kind = SLK_HOST, .tid = 100, .start = B + 19000, .end = B + 19500, .fn = SLK_FN_MEMSET_ASYNC,
      .stream = 13, .bytes = 1024);
  ADD(.kind = SLK_API, .tid = 100, .start = B + 19100, .end = B + 19400, .corr = 4, .fn = 51);
  ADD(.kind = SLK_HOST, .tid = 100, .start = B + 20000, .end = B + 110000, .fn = SLK_FN_STREAM_SYNC,
      .stream = 13, .flags = SLK_HOST_SYNCHRONOUS);
  ADD(.kind = SLK_HOST, .tid = 100, .start = B + 120000, .end = B + 125000,
      .fn = SLK_FN_GRAPH_LAUNCH, .stream = 7);
  ADD(.kind = SLK_API, .tid = 100, .start = B + 120500, .end = B + 124500, .corr = 5, .fn = 311);
  ADD(.kind = SLK_HOST, .tid = 100, .start = B + 125000, .end = B + 150000,
      .fn = SLK_FN_DEVICE_SYNC, .flags = SLK_HOST_SYNCHRONOUS);
  ADD(.kind = SLK_API, .tid = 200, .start = B + 40000, .end = B + 41000, .corr = 6,
      .fn = SLK_API_DRIVER | 307);
  ADD(.kind = SLK_OVERHEAD, .tid = 100, .start = B + 100, .end = B + 200, .fn = 1);
  ADD(.kind = SLK_DROPS, .tid = 100, .count = 3, .flags = SLK_DROP_RING);
  for (int i = 0; i < n; i++)
    slk_file_add(f, &r[i]);
  slk_file_flush(f); /* GPU records in a second chunk, as CUPTI buffers arrive later */
  n = 0;
  ADD(.kind = SLK_MEMCPY, .device = 0, .stream = 7, .start = B + 20000, .end = B + 30000, .corr = 1,
      .bytes = 4096, .copy_kind = 1, .src_kind = 2, .dst_kind = 3);
  ADD(.kind = SLK_KERNEL, .device = 0, .stream = 7, .start = B + 30000, .end = B + 80000, .corr = 2,
      .name = gemm, .grid = {128, 1, 1}, .block = {256, 1, 1}, .shmem = 4096, .regs = 64);
  ADD(.kind = SLK_KERNEL, .device = 0, .stream = 13, .start = B + 60000, .end = B + 100000,
      .corr = 3, .name = relu, .grid = {64, 1, 1}, .block = {128, 1, 1}, .regs = 16);
  ADD(.kind = SLK_MEMSET, .device = 0, .stream = 13, .start = B + 100000, .end = B + 110000,
      .corr = 4, .bytes = 1024, .dst_kind = 3);
  ADD(.kind = SLK_SYNC, .device = 0, .stream = 13, .start = B + 20000, .end = B + 110000, .fn = 3,
      .count = 77);
  ADD(.kind = SLK_KERNEL, .device = 0, .stream = 7, .start = B + 130000, .end = B + 140000,
      .corr = 5, .name = gemm, .grid = {128, 1, 1}, .block = {256, 1, 1}, .graph_id = 9);
  ADD(.kind = SLK_KERNEL, .device = 0, .stream = 7, .start = B + 140000, .end = B + 150000,
      .corr = 5, .name = relu, .grid = {64, 1, 1}, .block = {128, 1, 1}, .graph_id = 9);
  ADD(.kind = SLK_GRAPH, .device = 0, .stream = 7, .start = B + 130000, .end = B + 150000,
      .corr = 5, .graph_id = 9);
  ADD(.kind = SLK_KERNEL, .device = 1, .stream = 21, .start = B + 50000, .end = B + 70000,
      .corr = 6, .name = nccl, .grid = {8, 1, 1}, .block = {512, 1, 1});
  ADD(.kind = SLK_DROPS, .tid = 0, .count = 2, .flags = SLK_DROP_CUPTI);
#undef ADD
#undef S
  for (int i = 0; i < n; i++)
    slk_file_add(f, &r[i]);
  int rc = slk_file_close(f);
  close(fd);
  return rc ? 1 : 0;
}

/* Two readers of one file, the one under test and a reference: 0, or -1 (checked, none open). */
static int open_pair(const char *path, struct trace_reader **rd, struct trace_reader **ref) {
  char err[256] = "";
  *rd = trace_reader_open(path, err, sizeof err);
  *ref = trace_reader_open(path, err, sizeof err);
  CHECK(*rd && *ref, "open: %s", err);
  if (*rd && *ref) return 0;
  trace_reader_close(*rd);
  trace_reader_close(*ref);
  return -1;
}

/* Chunks kept as they are read (trace_reader_keep_chunks) come back through
 * trace_reader_seek_chunk as the chunks read again from the file do: the same records, in any
 * order of seeks, whether kept, dropped or past the budget, with light 2 reading first. */
static void test_kept_chunks(void) {
  const char *path = tmp_path("keep.slk");
  write_trace(path, 4096, NREC);
  struct trace_reader *rd, *ref;
  if (open_pair(path, &rd, &ref)) return;
  uint64_t offs[256];
  size_t n = 0, raw = 0;
  struct slk_record r, q;
  trace_reader_keep_chunks(rd, 1);        /* budget for none ... */
  trace_reader_keep_chunks(rd, 3 * 4096); /* ... then the first few */
  trace_reader_set_times(rd, 2);
  while (trace_reader_next(rd, &r)) {
    uint64_t o = trace_reader_chunk_offset(rd);
    if ((!n || offs[n - 1] != o) && n < 256) offs[n++] = o;
  }
  raw = trace_reader_stats(rd)->raw_bytes;
  trace_reader_set_times(rd, 0);
  CHECK(n > 5 && raw > 3 * 4096, "%zu chunks, %zu raw bytes", n, raw);
  for (size_t round = 0; round < 3; round++)
    for (size_t k = 0; k < n; k++) {
      size_t c = round == 1 ? n - 1 - k : round == 2 ? (k * 7) % n : k;
      if (round == 2 && k == n / 2) trace_reader_drop_chunk(rd, offs[0]);
      if (round == 2 && k == n / 2 + 1) trace_reader_drop_chunk(rd, offs[c]); /* delivered */
      CHECK(trace_reader_seek_chunk(rd, offs[c]) == 0 && trace_reader_seek_chunk(ref, offs[c]) == 0,
            "seek chunk %zu", c);
      size_t m = 0;
      int a, b;
      while ((a = trace_reader_next_in_chunk(rd, &r)) & (b = trace_reader_next_in_chunk(ref, &q))) {
        CHECK(r.kind == SLK_STRING ? q.kind == SLK_STRING : same(&r, &q),
              "chunk %zu record %zu differs", c, m);
        m++;
      }
      CHECK(a == b && m > 0, "chunk %zu: %zu records, ends %d %d", c, m, a, b);
    }
  trace_reader_keep_chunks(rd, 0);
  CHECK(trace_reader_seek_chunk(rd, offs[1]) == 0 && trace_reader_next_in_chunk(rd, &r),
        "seek after the kept chunks were freed");
  trace_reader_close(rd);
  trace_reader_close(ref);
}

/* The kept chunks' arena over several huge pages (taken where trace_huge_page_size says the
 * kernel has them free; else pages of 4 KiB, the same checks): chunks of about 700 kB dropped
 * so that some huge pages lose their last live chunk (given back whole) and others keep one;
 * every chunk kept reads back as the file's, every dropped one is read again from the file. */
static void test_kept_chunks_huge(void) {
  const char *path = tmp_path("keep-huge.slk");
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  struct slk_file *f = slk_file_open(fd, header_body, 1, 700 << 10);
  CHECK(f != NULL, "slk_file_open");
  if (!f) return;
  uint64_t t = 1000000000ull;
  for (size_t i = 0; i < 500000; i++) {
    struct slk_record r;
    memset(&r, 0, sizeof r);
    r.kind = SLK_HOST;
    r.tid = 100 + i % 3;
    r.start = t += 1000 + rnd() % 1000;
    r.end = r.start + rnd() % 20000;
    r.fn = (uint32_t)(rnd() % SLK_FN_COUNT);
    slk_file_add(f, &r);
  }
  CHECK(slk_file_close(f) == 0, "slk_file_close");
  close(fd);
  struct trace_reader *rd, *ref;
  if (open_pair(path, &rd, &ref)) return;
  uint64_t offs[256];
  size_t n = 0;
  struct slk_record r, q;
  trace_reader_keep_chunks(rd, 64 << 20);
  while (trace_reader_next(rd, &r)) {
    uint64_t o = trace_reader_chunk_offset(rd);
    if ((!n || offs[n - 1] != o) && n < 256) offs[n++] = o;
  }
  size_t raw = trace_reader_stats(rd)->raw_bytes;
  CHECK(n >= 8 && raw > (6u << 20), "%zu chunks, %zu raw bytes", n, raw);
  for (size_t c = 0; c < n; c++) /* the first three, then three of every four */
    if (c < 3 || c % 4) trace_reader_drop_chunk(rd, offs[c]);
  for (size_t k = 0; k < n; k++) {
    size_t c = n - 1 - k;
    CHECK(trace_reader_seek_chunk(rd, offs[c]) == 0 && trace_reader_seek_chunk(ref, offs[c]) == 0,
          "seek chunk %zu", c);
    size_t m = 0;
    int a, b;
    while ((a = trace_reader_next_in_chunk(rd, &r)) & (b = trace_reader_next_in_chunk(ref, &q))) {
      CHECK(same(&r, &q), "chunk %zu record %zu differs", c, m);
      m++;
    }
    CHECK(a == b && m > 0, "chunk %zu: %zu records, ends %d %d", c, m, a, b);
  }
  trace_reader_keep_chunks(rd, 0);
  trace_reader_close(rd);
  trace_reader_close(ref);
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--write-sample")) return write_sample(argv[2]);
  if (argc == 5 && !strcmp(argv[1], "--malform")) return malform(argv[2], argv[3], argv[4]);
  if (argc != 1) {
    fprintf(stderr, "usage: test_reader [--write-sample FILE | --malform IN BAD CRC]\n");
    return 2;
  }
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 2;
  }
  test_round_trip();
  test_truncate("small trace, every byte", 400, 0);
  test_truncate("large trace, last two chunks", NREC, 2);
  test_damage();
  test_kept_chunks();
  test_kept_chunks_huge();
  test_open_errors();
  test_handmade_chunks();
  test_join();
  test_join_api_order();
  test_join_driver();
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  if (system(cmd) != 0) fprintf(stderr, "test_reader: could not remove %s\n", tmpdir);
  printf("test_reader: %d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}

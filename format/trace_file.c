/* slk_file_*: turns records into the chunked file of docs/FORMAT.md. One owner thread. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "format.h"

#define INTERN_SLOTS_MIN 1024

struct intern_slot {
  uint64_t hash;
  uint32_t id;
  uint32_t len;
  char *str;
};

struct slk_file {
  int fd;
  int failed;
  int level;
  size_t cap;      /* raw buffer capacity (chunk size) */
  size_t used;     /* raw bytes buffered */
  uint8_t *raw;    /* records of the chunk being built */
  uint8_t *packed; /* compressed payload, header in front */
  size_t packed_cap;
  uint32_t records; /* in the current chunk */
  uint64_t t_min, t_max;
  struct slk_delta delta;
  ZSTD_CCtx *zc;
  uint64_t bytes_out, records_total;
  uint64_t compress_ns;
  /* automatic level (slk_file_auto_level): 0 = fixed level */
  int auto_max, auto_pct;
  uint64_t last_chunk_ns; /* CLOCK_MONOTONIC of the previous chunk (or of the open) */
  double slowness;        /* measured / table compression time, smoothed */
  /* string intern table: open addressing on an FNV-1a hash, grows at 50% load */
  struct intern_slot *slots;
  size_t nslots, nstrings;
};

int slk_write_all(int fd, const void *buf, size_t len) {
  const char *p = buf;
  while (len) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return -1;
    }
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

struct slk_file *slk_file_open(int fd, const char *header_body, int zstd_level,
                               size_t chunk_bytes) {
  struct slk_file *f = calloc(1, sizeof *f);
  if (!f) return NULL;
  if (chunk_bytes < 4096) chunk_bytes = 4096;
  f->fd = fd;
  f->level = zstd_level;
  f->cap = chunk_bytes;
  f->raw = malloc(chunk_bytes);
  f->packed_cap = SLK_CHUNK_HEADER_SIZE + ZSTD_compressBound(chunk_bytes);
  f->packed = malloc(f->packed_cap);
  f->zc = ZSTD_createCCtx();
  f->nslots = INTERN_SLOTS_MIN;
  f->slots = calloc(f->nslots, sizeof *f->slots);
  if (!f->raw || !f->packed || !f->zc || !f->slots) goto fail;
  /* a checksum inside the frame too: the reader learns a damaged frame from zstd as well */
  ZSTD_CCtx_setParameter(f->zc, ZSTD_c_compressionLevel, zstd_level);
  ZSTD_CCtx_setParameter(f->zc, ZSTD_c_checksumFlag, 0);
  slk_delta_reset(&f->delta);

  size_t body = header_body ? strlen(header_body) : 0;
  uint8_t fixed[SLK_FILE_HEADER_FIXED];
  memcpy(fixed, SLK_MAGIC, 8); /* includes the NUL */
  fixed[8] = SLK_VERSION_MAJOR & 0xff;
  fixed[9] = SLK_VERSION_MAJOR >> 8;
  fixed[10] = SLK_VERSION_MINOR & 0xff;
  fixed[11] = SLK_VERSION_MINOR >> 8;
  slk_put_u32(fixed + 12, (uint32_t)body);
  if (slk_write_all(fd, fixed, sizeof fixed) || (body && slk_write_all(fd, header_body, body)))
    goto fail;
  f->bytes_out = sizeof fixed + body;
  return f;
fail : {
  int e = errno;
  ZSTD_freeCCtx(f->zc);
  free(f->raw);
  free(f->packed);
  free(f->slots);
  free(f);
  errno = e ? e : ENOMEM;
  return NULL;
}
}

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* zstd's speed on trace records, MB/s: the recompression of the H200 probe trace (1.14 MB of
 * records, 1 MB chunks) on the 2-core dev machine measured about 380 (level 3), 47 (9), 33 (12),
 * 16 (15) and 3.8 (19); the table takes lower figures to stay on the safe side, and levels 1
 * and 6 are interpolated. `slowness` scales it to the machine at hand as chunks go by. */
static const struct {
  int level;
  double mb_s;
} level_speed[] = {{19, 3}, {15, 10}, {12, 20}, {9, 40}, {6, 80}, {3, 250}, {1, 400}};

/* The highest level (up to auto_max) whose predicted time for `raw` bytes stays within auto_pct
 * of the wall time since the previous chunk: slow traces get small files, bursts stay cheap,
 * and the choice is made per chunk, so a burst never meets a stale slow level. */
static int pick_level(const struct slk_file *f, size_t raw, uint64_t elapsed_ns) {
  double budget_ns = (double)elapsed_ns * f->auto_pct / 100.0;
  for (size_t i = 0; i < sizeof level_speed / sizeof level_speed[0]; i++) {
    if (level_speed[i].level > f->auto_max) continue;
    double predicted_ns = (double)raw / (level_speed[i].mb_s * 1e6) * 1e9 * f->slowness;
    if (predicted_ns <= budget_ns) return level_speed[i].level;
  }
  return 1;
}

static double table_speed(int level) {
  for (size_t i = 0; i < sizeof level_speed / sizeof level_speed[0]; i++)
    if (level_speed[i].level <= level) return level_speed[i].mb_s;
  return 400;
}

void slk_file_auto_level(struct slk_file *f, int max_level, int budget_pct) {
  f->auto_max = max_level;
  f->auto_pct = budget_pct;
  f->slowness = 1.0;
  f->last_chunk_ns = mono_ns();
}

void slk_chunk_header_put(uint8_t *h, const void *payload, uint32_t payload_len, uint32_t raw_len,
                          uint32_t records, uint64_t t_min, uint64_t t_max) {
  slk_put_u32(h + 0, SLK_CHUNK_MAGIC);
  slk_put_u32(h + 4, payload_len);
  slk_put_u32(h + 8, raw_len);
  slk_put_u32(h + 12, records);
  slk_put_u64(h + 16, t_min);
  slk_put_u64(h + 24, t_max);
  slk_put_u32(h + 32, slk_crc32c(payload, payload_len));
  slk_put_u32(h + 36, 0);
}

int slk_file_flush(struct slk_file *f) {
  if (f->failed) return -1;
  if (!f->used) return 0;
  if (f->auto_max) {
    uint64_t now = mono_ns();
    int level = pick_level(f, f->used, now - f->last_chunk_ns);
    f->last_chunk_ns = now;
    if (level != f->level) slk_file_set_level(f, level);
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
  size_t n = ZSTD_compress2(f->zc, f->packed + SLK_CHUNK_HEADER_SIZE,
                            f->packed_cap - SLK_CHUNK_HEADER_SIZE, f->raw, f->used);
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
  uint64_t spent = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ull + (uint64_t)t1.tv_nsec -
                   (uint64_t)t0.tv_nsec;
  f->compress_ns += spent;
  if (f->auto_max && f->used >= 16384) { /* small chunks time too coarsely to learn from */
    double table_ns = (double)f->used / (table_speed(f->level) * 1e6) * 1e9;
    double r = (double)spent / table_ns;
    r = r < 0.25 ? 0.25 : r > 8 ? 8 : r;
    f->slowness = 0.7 * f->slowness + 0.3 * r;
  }
  if (ZSTD_isError(n)) {
    f->failed = 1;
    errno = EIO;
    return -1;
  }
  uint8_t *h = f->packed;
  slk_chunk_header_put(h, h + SLK_CHUNK_HEADER_SIZE, (uint32_t)n, (uint32_t)f->used, f->records,
                       f->t_min, f->t_max);
  /* one write() per chunk: a reader of a file cut at any byte sees whole chunks, then a tail */
  if (slk_write_all(f->fd, h, SLK_CHUNK_HEADER_SIZE + n)) {
    f->failed = 1;
    return -1;
  }
  f->bytes_out += SLK_CHUNK_HEADER_SIZE + n;
  f->used = 0;
  f->records = 0;
  f->t_min = f->t_max = 0;
  slk_delta_reset(&f->delta);
  return 0;
}

int slk_file_add(struct slk_file *f, const struct slk_record *r) {
  uint8_t tmp[SLK_MAX_RECORD + 16];
  if (f->failed) return -1;
  for (int attempt = 0; attempt < 2; attempt++) {
    /* encode into a scratch copy of the delta state: if the record does not fit we flush and
     * re-encode against the next chunk's fresh state */
    size_t n = slk_encode(&f->delta, r, tmp, sizeof tmp);
    if (!n) return 0; /* unencodable (bad kind): skipped */
    if (f->used + n <= f->cap) {
      memcpy(f->raw + f->used, tmp, n);
      f->used += n;
      f->records++;
      f->records_total++;
      if (r->start) {
        if (!f->t_min || r->start < f->t_min) f->t_min = r->start;
        uint64_t e = r->end > r->start ? r->end : r->start;
        if (e > f->t_max) f->t_max = e;
      }
      return 0;
    }
    /* the encode above advanced delta state for a record that was not kept; the flush resets
     * the state, so the retry encodes against a clean chunk */
    if (slk_file_flush(f)) return -1;
  }
  return 0;
}

static uint64_t fnv1a(const char *s, size_t len) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < len; i++)
    h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
  return h | 1; /* 0 marks an empty slot */
}

static int intern_grow(struct slk_file *f) {
  size_t n = f->nslots * 2;
  struct intern_slot *s = calloc(n, sizeof *s);
  if (!s) return -1;
  for (size_t i = 0; i < f->nslots; i++) {
    if (!f->slots[i].hash) continue;
    size_t j = f->slots[i].hash & (n - 1);
    while (s[j].hash)
      j = (j + 1) & (n - 1);
    s[j] = f->slots[i];
  }
  free(f->slots);
  f->slots = s;
  f->nslots = n;
  return 0;
}

uint32_t slk_file_intern(struct slk_file *f, const char *s, size_t len) {
  if (len > SLK_MAX_RECORD - 64) len = SLK_MAX_RECORD - 64;
  if (2 * (f->nstrings + 1) > f->nslots && intern_grow(f)) return 0;
  uint64_t h = fnv1a(s, len);
  size_t i = h & (f->nslots - 1);
  while (f->slots[i].hash) {
    struct intern_slot *e = &f->slots[i];
    if (e->hash == h && e->len == len && !memcmp(e->str, s, len)) return e->id;
    i = (i + 1) & (f->nslots - 1);
  }
  char *copy = malloc(len ? len : 1);
  if (!copy) return 0;
  memcpy(copy, s, len);
  uint32_t id = (uint32_t)++f->nstrings;
  f->slots[i] = (struct intern_slot){h, id, (uint32_t)len, copy};
  struct slk_record r = {.kind = SLK_STRING, .id = id, .str = s, .str_len = (uint32_t)len};
  if (slk_file_add(f, &r)) return 0;
  return id;
}

int slk_file_close(struct slk_file *f) {
  if (!f) return 0;
  int rc = slk_file_flush(f);
  for (size_t i = 0; i < f->nslots; i++)
    free(f->slots[i].str);
  free(f->slots);
  ZSTD_freeCCtx(f->zc);
  free(f->raw);
  free(f->packed);
  free(f);
  return rc;
}

void slk_file_set_level(struct slk_file *f, int level) {
  f->level = level;
  ZSTD_CCtx_setParameter(f->zc, ZSTD_c_compressionLevel, level);
}
uint64_t slk_file_compress_ns(const struct slk_file *f) { return f->compress_ns; }
uint64_t slk_file_bytes(const struct slk_file *f) { return f->bytes_out; }
uint64_t slk_file_records(const struct slk_file *f) { return f->records_total; }

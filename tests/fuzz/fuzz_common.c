/* The fuzz targets' shared part (fuzz.h): synthetic traces, memory files, quiet stdio. */
#include "fuzz.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "format.h"

struct buf {
  uint8_t *p;
  size_t n, cap;
  int failed;
};

static void put(struct buf *b, const void *p, size_t len) {
  if (b->failed || !len) return;
  if (b->n + len > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + len)
      cap *= 2;
    uint8_t *q = realloc(b->p, cap);
    if (!q) {
      b->failed = 1;
      return;
    }
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->n, p, len);
  b->n += len;
}

/* Records in raw[0..len): kind, varint length, body; stops at the first that does not parse
 * (the count only feeds the chunk header's "records" field, which readers only compare). */
static uint32_t count_records(const uint8_t *raw, size_t len) {
  uint32_t n = 0;
  size_t pos = 0;
  while (pos + 2 <= len) {
    uint64_t v = 0;
    size_t i = pos + 1;
    int shift = 0;
    while (i < len && shift < 64) {
      v |= (uint64_t)(raw[i] & 0x7f) << shift;
      shift += 7;
      if (!(raw[i++] & 0x80)) break;
    }
    if (v > len - i) break;
    pos = i + (size_t)v;
    n++;
  }
  return n;
}

/* Appends one chunk of raw records, damaged as flags say. Returns 0 to go on, 1 when the file
 * ends here (FUZZ_CF_CUT). */
static int put_chunk(struct buf *b, uint8_t flags, const uint8_t *raw, size_t raw_len) {
  static ZSTD_CCtx *cctx;
  static uint8_t *frame;
  static size_t frame_cap;
  const uint8_t *payload = raw;
  size_t payload_len = raw_len;
  if (!(flags & FUZZ_CF_NOT_ZSTD)) {
    size_t need = ZSTD_compressBound(raw_len);
    if (need > frame_cap) {
      uint8_t *f = realloc(frame, need);
      if (!f) {
        b->failed = 1;
        return 1;
      }
      frame = f;
      frame_cap = need;
    }
    if (!cctx && !(cctx = ZSTD_createCCtx())) {
      b->failed = 1;
      return 1;
    }
    /* level 1: the frame's content does not matter, only that it is valid, and fast */
    size_t z = ZSTD_compressCCtx(cctx, frame, frame_cap, raw, raw_len, 1);
    if (ZSTD_isError(z)) {
      b->failed = 1;
      return 1;
    }
    payload = frame;
    payload_len = z;
  }
  uint8_t h[SLK_CHUNK_HEADER_SIZE];
  slk_put_u32(h, (flags & FUZZ_CF_BAD_MAGIC) ? 0x434b4c54u : SLK_CHUNK_MAGIC);
  slk_put_u32(h + 4, (uint32_t)payload_len + ((flags & FUZZ_CF_HUGE_LEN) ? (1u << 29) : 0));
  slk_put_u32(h + 8, (uint32_t)raw_len + ((flags & FUZZ_CF_RAW_LEN) ? 1 : 0));
  slk_put_u32(h + 12, count_records(raw, raw_len) + ((flags & FUZZ_CF_COUNT) ? 1 : 0));
  slk_put_u64(h + 16, (flags & FUZZ_CF_EXTREME_T) ? UINT64_MAX - 15 : 0);
  slk_put_u64(h + 24, (flags & FUZZ_CF_EXTREME_T) ? UINT64_MAX : 0);
  slk_put_u32(h + 32, slk_crc32c(payload, payload_len) ^ ((flags & FUZZ_CF_BAD_CRC) ? 1 : 0));
  slk_put_u32(h + 36, 0);
  put(b, h, sizeof h);
  if (flags & FUZZ_CF_CUT) {
    put(b, payload, payload_len / 2);
    return 1;
  }
  put(b, payload, payload_len);
  return 0;
}

int fuzz_trace_build(const uint8_t *data, size_t size, uint8_t **out, size_t *outlen) {
  struct buf b = {0};
  *out = NULL;
  *outlen = 0;
  if (size >= 8 && !memcmp(data, SLK_MAGIC, 8)) { /* a whole file */
    put(&b, data, size);
  } else {
    uint8_t v = size ? data[0] : 0;
    uint8_t fixed[SLK_FILE_HEADER_FIXED];
    memcpy(fixed, SLK_MAGIC, 8);
    unsigned major = (v & 1) ? 1 : 2, minor = (v >> 1) & 3;
    fixed[8] = (uint8_t)major;
    fixed[9] = 0;
    fixed[10] = (uint8_t)minor;
    fixed[11] = 0;
    const uint8_t *p = size ? data + 1 : data, *end = data + size;
    const uint8_t *nul = memchr(p, 0, (size_t)(end - p));
    const uint8_t *body_end = nul ? nul : end;
    slk_put_u32(fixed + 12, (uint32_t)(body_end - p));
    put(&b, fixed, sizeof fixed);
    put(&b, p, (size_t)(body_end - p));
    p = nul ? nul + 1 : end;
    while (p < end && !b.failed) {
      const uint8_t *sep = memmem(p, (size_t)(end - p), FUZZ_CHUNK_SEP, FUZZ_CHUNK_SEP_LEN);
      const uint8_t *ce = sep ? sep : end;
      if (ce > p && put_chunk(&b, p[0], p + 1, (size_t)(ce - p - 1))) break; /* empty: none */
      p = sep ? sep + FUZZ_CHUNK_SEP_LEN : end;
    }
  }
  if (b.failed) {
    free(b.p);
    return -1;
  }
  *out = b.p;
  *outlen = b.n;
  return 0;
}

const char *fuzz_memfile_at(int slot, const uint8_t *bytes, size_t len) {
  static int fd[2] = {-1, -1};
  static char path[2][64];
  if (slot < 0 || slot > 1) return NULL;
  if (fd[slot] < 0) {
    fd[slot] = memfd_create("slack-fuzz", MFD_CLOEXEC);
    if (fd[slot] < 0) return NULL;
    snprintf(path[slot], sizeof path[slot], "/proc/self/fd/%d", fd[slot]);
  }
  if (ftruncate(fd[slot], 0)) return NULL;
  size_t done = 0;
  while (done < len) {
    ssize_t w = pwrite(fd[slot], bytes + done, len - done, (off_t)done);
    if (w <= 0) return NULL;
    done += (size_t)w;
  }
  return path[slot];
}

const char *fuzz_memfile(const uint8_t *bytes, size_t len) {
  return fuzz_memfile_at(0, bytes, len);
}

int fuzz_trace_other_process(const uint8_t *file, size_t len, uint8_t **out, size_t *outlen) {
  static const char line[] = "pid=4000000001\n";
  const size_t n = sizeof line - 1;
  *out = malloc(len + n);
  if (!*out) return -1;
  *outlen = len;
  if (len < SLK_FILE_HEADER_FIXED || memcmp(file, SLK_MAGIC, 8)) { /* no header to change */
    memcpy(*out, file, len);
    return 0;
  }
  uint32_t body = slk_get_u32(file + 12);
  memcpy(*out, file, SLK_FILE_HEADER_FIXED);
  slk_put_u32(*out + 12, body + (uint32_t)n);
  memcpy(*out + SLK_FILE_HEADER_FIXED, line, n);
  memcpy(*out + SLK_FILE_HEADER_FIXED + n, file + SLK_FILE_HEADER_FIXED,
         len - SLK_FILE_HEADER_FIXED);
  *outlen = len + n;
  return 0;
}

void fuzz_fail(const char *what, const char *file, int line) {
  char msg[512];
  int n = snprintf(msg, sizeof msg, "%s:%d: check failed: %s\n", file, line, what);
  if (n > 0 && write(STDERR_FILENO, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1)) {
  }
  abort();
}

void fuzz_quiet(void) {
  static int done;
  if (done) return;
  done = 1;
  fflush(stdout);
  int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (fd >= 0) {
    dup2(fd, STDOUT_FILENO);
    close(fd);
  }
  FILE *null = fopen("/dev/null", "w");
  if (null) stderr = null;
}

/* slk_recompress: rewrites .slk traces in place with every chunk's zstd frame compressed again at
 * a higher level, to keep the recorded traces of tests/data small (tests/issue6.mk builds it as
 * build/tools/slk_recompress):
 *
 *   slk_recompress [-l LEVEL] [-n] [-t] FILE.slk...
 *     -l LEVEL  zstd level, 1-22 (default 19; 20-22 are zstd's "ultra" levels)
 *     -n        dry run: print what each file would become, write nothing
 *     -t        copy an unreadable tail (a cut or damaged chunk and what follows) as it is;
 *               without it such a file is refused
 *
 * What changes is only each chunk's payload (one zstd frame, no long-distance matching, no frame
 * checksum, the content size in the frame, as format/trace_file.c writes it) and its header's
 * payload_len and CRC-32C, both filled by slk_chunk_header_put, the writer's own; the file header,
 * each chunk's raw bytes, record count and t_min/t_max stay as they were. A chunk whose new frame
 * is not smaller keeps its old one, byte for byte; a file that would not shrink is not written.
 * The file is read whole by format/reader.c first (which says where its readable part ends), and
 * refused when it does not read cleanly to its end (without -t), is not a regular file (a
 * symbolic link) or has other hard links. The new file is written next to the old one
 * (FILE.recompress-XXXXXX, same mode), read back and compared chunk by chunk (raw bytes, header
 * fields, the reader's counts) before it is renamed over the old one.
 * Exit status: 0, 1 when any file was refused or failed (the others are still done), 2 usage. */
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
#include "reader.h"

struct buf {
  uint8_t *p;
  size_t n, cap;
};

static int put(struct buf *b, const void *p, size_t len) {
  if (b->n + len > b->cap) {
    size_t cap = b->cap ? b->cap : 1 << 20;
    while (cap < b->n + len)
      cap *= 2;
    uint8_t *q = realloc(b->p, cap);
    if (!q) return -1;
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->n, p, len);
  b->n += len;
  return 0;
}

static int read_whole(int fd, size_t size, struct buf *b) {
  b->p = malloc(size ? size : 1);
  b->cap = size ? size : 1;
  b->n = 0;
  if (!b->p) return -1;
  while (b->n < size) {
    ssize_t n = read(fd, b->p + b->n, size - b->n);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO; /* the file shrank while we read it */
      return -1;
    }
    b->n += (size_t)n;
  }
  return 0;
}

/* The reader's view of a file: where its readable part ends and what it held. */
static int read_stats(const char *path, struct trace_reader_stats *st, char *err, size_t errlen) {
  struct trace_reader *rd = trace_reader_open(path, err, errlen);
  if (!rd) return -1;
  struct slk_record r;
  while (trace_reader_next(rd, &r))
    ;
  *st = *trace_reader_stats(rd);
  trace_reader_close(rd);
  return 0;
}

struct chunk {
  const uint8_t *h, *payload;
  uint32_t payload_len, raw_len;
};

/* The chunk at off of the file in b, checked as the reader checks it (magic, lengths, CRC); 0, or
 * -1 with why in err. */
static int chunk_at(const struct buf *b, size_t off, struct chunk *c, const char **err) {
  if (b->n - off < SLK_CHUNK_HEADER_SIZE) return *err = "short chunk header", -1;
  c->h = b->p + off;
  if (slk_get_u32(c->h) != SLK_CHUNK_MAGIC) return *err = "bad chunk magic", -1;
  c->payload_len = slk_get_u32(c->h + 4);
  c->raw_len = slk_get_u32(c->h + 8);
  if (b->n - off - SLK_CHUNK_HEADER_SIZE < c->payload_len) return *err = "short payload", -1;
  c->payload = c->h + SLK_CHUNK_HEADER_SIZE;
  if (slk_crc32c(c->payload, c->payload_len) != slk_get_u32(c->h + 32)) return *err = "bad crc", -1;
  if (slk_get_u32(c->h + 36)) return *err = "chunk flags not 0 (reserved)", -1;
  return 0;
}

static ZSTD_DCtx *zd;
static ZSTD_CCtx *zc;
static uint8_t *raw, *raw2, *packed;
static size_t raw_cap, packed_cap;

static int decompress(const struct chunk *c, uint8_t *out) {
  size_t got = ZSTD_decompressDCtx(zd, out, c->raw_len, c->payload, c->payload_len);
  return ZSTD_isError(got) || got != c->raw_len ? -1 : 0;
}

static int grow_buffers(size_t raw_len) {
  if (raw_len <= raw_cap) return 0;
  size_t pcap = ZSTD_compressBound(raw_len);
  uint8_t *a = realloc(raw, raw_len), *b2 = a ? realloc(raw2, raw_len) : NULL;
  if (a) raw = a;
  if (b2) raw2 = b2;
  uint8_t *p = b2 ? realloc(packed, pcap) : NULL;
  if (!p) return -1;
  packed = p;
  raw_cap = raw_len;
  packed_cap = pcap;
  return 0;
}

/* The header and the chunks of old up to end, each chunk's frame compressed again (or kept when
 * not smaller), then old's bytes from end on as they are. */
static int rewrite(const struct buf *old, size_t header_end, size_t end, struct buf *out,
                   uint64_t *kept, const char **err) {
  if (put(out, old->p, header_end)) return *err = "out of memory", -1;
  size_t off = header_end;
  while (off < end) {
    struct chunk c;
    if (chunk_at(old, off, &c, err)) return -1;
    if (grow_buffers(c.raw_len ? c.raw_len : 1)) return *err = "out of memory", -1;
    if (decompress(&c, raw)) return *err = "a frame that does not decompress", -1;
    size_t n = ZSTD_compress2(zc, packed, packed_cap, raw, c.raw_len);
    if (ZSTD_isError(n)) return *err = ZSTD_getErrorName(n), -1;
    if (n < c.payload_len) {
      /* the new frame must give the same bytes back before it replaces the old one */
      size_t got = ZSTD_decompressDCtx(zd, raw2, c.raw_len, packed, n);
      if (ZSTD_isError(got) || got != c.raw_len || memcmp(raw, raw2, c.raw_len))
        return *err = "the new frame does not decompress to the chunk's bytes", -1;
      uint8_t h[SLK_CHUNK_HEADER_SIZE];
      slk_chunk_header_put(h, packed, (uint32_t)n, c.raw_len, slk_get_u32(c.h + 12),
                           slk_get_u64(c.h + 16), slk_get_u64(c.h + 24));
      if (put(out, h, sizeof h) || put(out, packed, n)) return *err = "out of memory", -1;
    } else {
      if (put(out, c.h, SLK_CHUNK_HEADER_SIZE + c.payload_len)) return *err = "out of memory", -1;
      (*kept)++;
    }
    off += SLK_CHUNK_HEADER_SIZE + c.payload_len;
  }
  if (off != end) return *err = "the chunks do not end where the reader stopped", -1;
  if (put(out, old->p + end, old->n - end)) return *err = "out of memory", -1;
  return 0;
}

/* new against old: the same header, then chunk by chunk the same raw bytes, record count and
 * times, then the same tail. */
static int same_records(const struct buf *old, const struct buf *new, size_t header_end,
                        size_t old_end, const char **err) {
  size_t a = header_end, b = header_end;
  if (new->n < header_end || memcmp(old->p, new->p, header_end)) return *err = "header differs", -1;
  while (a < old_end) {
    struct chunk ca, cb;
    if (chunk_at(old, a, &ca, err) || chunk_at(new, b, &cb, err)) return -1;
    if (ca.raw_len != cb.raw_len || memcmp(ca.h + 12, cb.h + 12, 20))
      return *err = "a chunk header differs", -1;
    if (decompress(&ca, raw) || decompress(&cb, raw2) || memcmp(raw, raw2, ca.raw_len))
      return *err = "a chunk's records differ", -1;
    a += SLK_CHUNK_HEADER_SIZE + ca.payload_len;
    b += SLK_CHUNK_HEADER_SIZE + cb.payload_len;
  }
  if (old->n - a != new->n - b || memcmp(old->p + a, new->p + b, old->n - a))
    return *err = "the tail differs", -1;
  return 0;
}

static int same_stats(const struct trace_reader_stats *x, const struct trace_reader_stats *y) {
  return x->header_bytes == y->header_bytes && x->chunks == y->chunks && x->records == y->records &&
         x->unknown_records == y->unknown_records && x->raw_bytes == y->raw_bytes &&
         x->count_mismatch == y->count_mismatch && x->strings_redefined == y->strings_redefined &&
         x->t_min == y->t_min && x->t_max == y->t_max && x->tail == y->tail &&
         x->tail_bytes == y->tail_bytes;
}

static int level = 19, dry_run, keep_tail;
static uint64_t total_before, total_after;

static int recompress(const char *path) {
  struct stat ls, st;
  if (lstat(path, &ls)) return fprintf(stderr, "%s: %s\n", path, strerror(errno)), 1;
  if (S_ISLNK(ls.st_mode))
    return fprintf(stderr, "%s: refused: a symbolic link (name the file itself)\n", path), 1;
  if (!S_ISREG(ls.st_mode)) return fprintf(stderr, "%s: refused: not a regular file\n", path), 1;
  if (ls.st_nlink > 1)
    return fprintf(stderr, "%s: refused: %lu hard links (the others would keep the old bytes)\n",
                   path, (unsigned long)ls.st_nlink),
           1;
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return fprintf(stderr, "%s: %s\n", path, strerror(errno)), 1;
  struct buf old = {0}, new = {0};
  char rerr[256], tmp[4096] = "";
  const char *err = NULL;
  int rc = 1, tfd = -1;
  struct trace_reader_stats before, after;
  if (fstat(fd, &st) || st.st_ino != ls.st_ino || st.st_dev != ls.st_dev) {
    fprintf(stderr, "%s: refused: the file changed while opened\n", path);
    goto out;
  }
  if (read_whole(fd, (size_t)st.st_size, &old)) {
    fprintf(stderr, "%s: %s\n", path, strerror(errno));
    goto out;
  }
  if (read_stats(path, &before, rerr, sizeof rerr)) {
    fprintf(stderr, "%s: refused: %s\n", path, rerr);
    goto out;
  }
  if (before.file_bytes != old.n) {
    fprintf(stderr, "%s: refused: the file changed while read\n", path);
    goto out;
  }
  size_t header_end = (size_t)before.header_bytes;
  size_t end = before.tail == TRACE_TAIL_NONE ? old.n : (size_t)before.tail_offset;
  if (before.tail != TRACE_TAIL_NONE && !keep_tail) {
    fprintf(stderr,
            "%s: refused: it does not read cleanly to its end (%s at byte %llu, %llu bytes "
            "unreadable); -t copies such a tail as it is\n",
            path, trace_tail_reason(before.tail), (unsigned long long)before.tail_offset,
            (unsigned long long)before.tail_bytes);
    goto out;
  }
  uint64_t kept = 0;
  if (rewrite(&old, header_end, end, &new, &kept, &err) ||
      same_records(&old, &new, header_end, end, &err)) {
    fprintf(stderr, "%s: refused: %s\n", path, err);
    goto out;
  }
  printf("%s: %llu chunks (%llu kept as they were), %zu -> %zu bytes (%+.1f%%)%s%s\n", path,
         (unsigned long long)before.chunks, (unsigned long long)kept, old.n, new.n,
         old.n ? 100.0 * ((double)new.n - (double)old.n) / (double)old.n : 0.0,
         before.tail != TRACE_TAIL_NONE ? ", unreadable tail copied as it is" : "",
         new.n >= old.n ? ", not written (no smaller)"
         : dry_run      ? ", not written (-n)"
                        : "");
  total_before += old.n;
  total_after += new.n < old.n ? new.n : old.n;
  if (dry_run || new.n >= old.n) {
    rc = 0;
    goto out;
  }
  if (snprintf(tmp, sizeof tmp, "%s.recompress-XXXXXX", path) >= (int)sizeof tmp) {
    fprintf(stderr, "%s: path too long\n", path);
    tmp[0] = 0;
    goto out;
  }
  tfd = mkstemp(tmp);
  if (tfd < 0) {
    fprintf(stderr, "%s: cannot create %s: %s\n", path, tmp, strerror(errno));
    tmp[0] = 0;
    goto out;
  }
  if (fchmod(tfd, st.st_mode & 07777) || slk_write_all(tfd, new.p, new.n) || fsync(tfd)) {
    fprintf(stderr, "%s: cannot write %s: %s\n", path, tmp, strerror(errno));
    goto out;
  }
  /* the file as written, read back: the reader must see what it saw in the old one */
  if (read_stats(tmp, &after, rerr, sizeof rerr) || !same_stats(&before, &after)) {
    fprintf(stderr, "%s: refused: the new file does not read as the old one\n", path);
    goto out;
  }
  if (rename(tmp, path)) {
    fprintf(stderr, "%s: cannot rename %s over it: %s\n", path, tmp, strerror(errno));
    goto out;
  }
  tmp[0] = 0;
  rc = 0;
out:
  if (tfd >= 0) close(tfd);
  if (tmp[0]) unlink(tmp);
  close(fd);
  free(old.p);
  free(new.p);
  return rc;
}

int main(int argc, char **argv) {
  int opt;
  while ((opt = getopt(argc, argv, "l:nt")) != -1) {
    switch (opt) {
    case 'l': {
      char *e;
      long v = strtol(optarg, &e, 10);
      if (*e || v < 1 || v > ZSTD_maxCLevel()) {
        fprintf(stderr, "slk_recompress: -l wants a level 1-%d\n", ZSTD_maxCLevel());
        return 2;
      }
      level = (int)v;
      break;
    }
    case 'n': dry_run = 1; break;
    case 't': keep_tail = 1; break;
    default: fprintf(stderr, "usage: slk_recompress [-l LEVEL] [-n] [-t] FILE.slk...\n"); return 2;
    }
  }
  if (optind >= argc) {
    fprintf(stderr, "usage: slk_recompress [-l LEVEL] [-n] [-t] FILE.slk...\n");
    return 2;
  }
  zd = ZSTD_createDCtx();
  zc = ZSTD_createCCtx();
  if (!zd || !zc) return fprintf(stderr, "slk_recompress: out of memory\n"), 1;
  /* the writer's frame settings (format/trace_file.c), at another level */
  ZSTD_CCtx_setParameter(zc, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(zc, ZSTD_c_checksumFlag, 0);
  ZSTD_CCtx_setParameter(zc, ZSTD_c_contentSizeFlag, 1);
  ZSTD_CCtx_setParameter(zc, ZSTD_c_enableLongDistanceMatching, 0);
  int rc = 0;
  for (int i = optind; i < argc; i++)
    if (recompress(argv[i])) rc = 1;
  if (argc - optind > 1)
    printf("total: %llu -> %llu bytes (%+.1f%%) at level %d\n", (unsigned long long)total_before,
           (unsigned long long)total_after,
           total_before ? 100.0 * ((double)total_after - (double)total_before) / total_before : 0.0,
           level);
  ZSTD_freeDCtx(zd);
  ZSTD_freeCCtx(zc);
  free(raw);
  free(raw2);
  free(packed);
  return rc;
}

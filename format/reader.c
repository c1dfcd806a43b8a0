/* Trace reader (reader.h): file header, chunks, records, string table, whole-trace arrays. */
#include "reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_decompressBound (exported by libzstd 1.4+) */
#include <zstd.h>

/* Sanity bounds: a length past these in a header is corruption, not a big trace. They keep a
 * damaged header from making the reader allocate gigabytes. */
#define MAX_HEADER_BODY (16u << 20)
#define MAX_CHUNK_BYTES (1u << 30)

struct header_line {
  char *key, *value;
};

struct string_slot {
  uint32_t id; /* 0: empty */
  char *s;
};

/* A decompressed chunk kept for trace_reader_seek_chunk (trace_reader_keep_chunks). */
struct kept_chunk {
  uint64_t off, next; /* its offset and the next chunk's */
  uint8_t *raw;       /* NULL: dropped */
  size_t len;
};

struct trace_reader {
  int fd;
  unsigned major, minor;
  uint64_t off;       /* file offset of the next chunk */
  uint64_t chunk_off; /* file offset of the chunk being delivered */
  int keep_strings;   /* 1: a STRING record leaves an id already defined as it is */
  int revisit; /* 1: chunk_load of a chunk delivered before (seek): its records not checked again */
  int times;   /* 1: trace_reader_next decodes with slk_decode_times; 2: the same, each chunk's
                  records checked as they are decoded (slk_decode_times_checked) */
  /* times 2: the chunk being delivered was not checked before its first record went out; its
   * records are checked as they are decoded, counted (against the header's count) and, should
   * one fail, the chunk's place in the counters taken back */
  int unchecked;
  uint32_t chunk_records, chunk_count; /* its header's count; records decoded so far */
  struct trace_reader_stats st_before; /* the counters before it */
  char *body;                          /* header body, split in place into lines */
  struct header_line *lines;
  size_t nlines;

  uint8_t *payload; /* compressed chunk, reused */
  size_t payload_cap;
  uint8_t *raw; /* the decompressed chunk: in buf, or a kept one's in the arena */
  uint8_t *buf; /* reused for the chunks not kept */
  size_t buf_cap, raw_len, pos;
  int raw_ok;                 /* 1: raw holds the chunk at raw_off, whole and checked */
  uint64_t raw_off, raw_next; /* and the offset of the chunk after it */
  int in_chunk;               /* raw[pos..raw_len) holds records still to return */
  int done;
  struct slk_delta delta; /* delivery */
  ZSTD_DCtx *zd;          /* reused: creating one per chunk costs more than small chunks */

  struct string_slot *strings; /* open addressing on id */
  size_t nstrings, string_slots;

  struct trace_reader_stats st;

  /* decompressed chunks kept (trace_reader_keep_chunks): in file order, one after the other in
   * an arena of keep_budget bytes (its pages given back as the chunks are dropped) */
  struct kept_chunk *kept;
  size_t nkept, kept_cap, keep_budget, arena_used;
  uint8_t *arena;
  /* the arena in huge pages (trace_huge_page_size): their size, and per huge page the kept
   * chunks in it not dropped yet (a huge page goes back whole, once its last chunk is dropped:
   * part of one given back would split it and keep its memory until the kernel reclaims it) */
  size_t arena_hp;
  uint32_t *hp_live;

  /* progress line (trace_reader_progress) */
  const char *progress_label;
  uint64_t progress_every_ns, progress_next_ns;
  int progress_tty, progress_shown;
};

const char *trace_tail_reason(enum trace_tail reason) {
  switch (reason) {
  case TRACE_TAIL_NONE: return "none";
  case TRACE_TAIL_SHORT_HEADER: return "truncated chunk header";
  case TRACE_TAIL_SHORT_PAYLOAD: return "truncated chunk payload";
  case TRACE_TAIL_BAD_MAGIC: return "bad chunk magic";
  case TRACE_TAIL_BAD_LENGTH: return "implausible chunk length";
  case TRACE_TAIL_BAD_CRC: return "bad crc";
  case TRACE_TAIL_BAD_FRAME: return "bad zstd frame";
  case TRACE_TAIL_BAD_RECORD: return "malformed record";
  case TRACE_TAIL_READ_ERROR: return "read error";
  case TRACE_TAIL_NO_MEMORY: return "out of memory";
  }
  return "unknown";
}

/* Reads up to len bytes at the current position; returns bytes read (short only at end of file),
 * or -1 on a read error. */
static ssize_t read_full(int fd, void *buf, size_t len) {
  size_t got = 0;
  while (got < len) {
    ssize_t n = read(fd, (char *)buf + got, len - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    got += (size_t)n;
  }
  return (ssize_t)got;
}

static int parse_header_body(struct trace_reader *rd, size_t len) {
  size_t cap = 1;
  for (size_t i = 0; i < len; i++)
    cap += rd->body[i] == '\n';
  rd->lines = calloc(cap, sizeof *rd->lines);
  if (!rd->lines) return -1;
  char *p = rd->body, *end = rd->body + len;
  while (p < end) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    char *line_end = nl ? nl : end;
    *line_end = '\0';
    char *eq = strchr(p, '=');
    if (eq && eq != p) { /* lines without a key are ignored, like unknown keys */
      *eq = '\0';
      rd->lines[rd->nlines].key = p;
      rd->lines[rd->nlines].value = eq + 1;
      rd->nlines++;
    }
    p = line_end + 1;
  }
  return 0;
}

struct trace_reader *trace_reader_open(const char *path, char *err, size_t errlen) {
  uint8_t fixed[SLK_FILE_HEADER_FIXED];
  struct stat sb;
  struct trace_reader *rd = calloc(1, sizeof *rd);
  if (!rd) {
    snprintf(err, errlen, "%s", strerror(ENOMEM));
    return NULL;
  }
  /* O_NONBLOCK: opening a FIFO would otherwise wait for a writer, forever */
  rd->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (rd->fd < 0 || fstat(rd->fd, &sb) != 0) {
    snprintf(err, errlen, "%s", strerror(errno));
    goto fail;
  }
  if (S_ISDIR(sb.st_mode)) {
    snprintf(err, errlen, "%s", strerror(EISDIR));
    goto fail;
  }
  /* the reader seeks, and checks chunk lengths against the file's size */
  if (!S_ISREG(sb.st_mode)) {
    snprintf(err, errlen, "not a regular file");
    goto fail;
  }
  int fl = fcntl(rd->fd, F_GETFL);
  if (fl < 0 || fcntl(rd->fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
    snprintf(err, errlen, "%s", strerror(errno));
    goto fail;
  }
  rd->st.file_bytes = (uint64_t)sb.st_size;
  ssize_t n = read_full(rd->fd, fixed, sizeof fixed);
  if (n < 0) {
    snprintf(err, errlen, "%s", strerror(errno));
    goto fail;
  }
  if (n == 0) {
    snprintf(err, errlen, "empty file, not a slack trace");
    goto fail;
  }
  if ((size_t)n < sizeof fixed || memcmp(fixed, SLK_MAGIC, 8) != 0) {
    snprintf(err, errlen, "not a slack trace (no \"%s\" file header)", SLK_MAGIC);
    goto fail;
  }
  rd->major = (unsigned)fixed[8] | (unsigned)fixed[9] << 8;
  rd->minor = (unsigned)fixed[10] | (unsigned)fixed[11] << 8;
  rd->delta.v1 = rd->major == 1; /* 1.x coded starts against starts */
  if (rd->major > SLK_VERSION_MAJOR || rd->major < SLK_VERSION_MAJOR_MIN) {
    snprintf(err, errlen, "trace format %u.%u; this slack reads formats %u.x to %u.x", rd->major,
             rd->minor, SLK_VERSION_MAJOR_MIN, SLK_VERSION_MAJOR);
    goto fail;
  }
  uint32_t body_len = slk_get_u32(fixed + 12);
  if (body_len > MAX_HEADER_BODY) {
    snprintf(err, errlen, "damaged file header (body length %u)", body_len);
    goto fail;
  }
  rd->body = malloc((size_t)body_len + 1);
  if (!rd->body) {
    snprintf(err, errlen, "%s", strerror(ENOMEM));
    goto fail;
  }
  n = read_full(rd->fd, rd->body, body_len);
  if (n < 0) {
    snprintf(err, errlen, "%s", strerror(errno));
    goto fail;
  }
  if ((size_t)n < body_len) {
    snprintf(err, errlen, "truncated file header (%zd of %u body bytes)", n, body_len);
    goto fail;
  }
  rd->body[body_len] = '\0';
  if (parse_header_body(rd, body_len)) {
    snprintf(err, errlen, "%s", strerror(ENOMEM));
    goto fail;
  }
  rd->st.header_bytes = sizeof fixed + (uint64_t)body_len;
  rd->off = rd->st.header_bytes;
  return rd;
fail:
  trace_reader_close(rd);
  return NULL;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void trace_reader_progress(struct trace_reader *rd, const char *label, unsigned every_ms, int tty) {
  rd->progress_label = label;
  rd->progress_every_ns = (uint64_t)every_ms * 1000000ull;
  rd->progress_next_ns = now_ns() + rd->progress_every_ns;
  rd->progress_tty = tty;
}

static void progress_end(struct trace_reader *rd) {
  if (rd->progress_shown && rd->progress_tty) fputs("\r\033[K", stderr);
  rd->progress_shown = 0;
  rd->progress_label = NULL;
}

static void progress_tick(struct trace_reader *rd) {
  if (!rd->progress_label) return;
  uint64_t t = now_ns();
  if (t < rd->progress_next_ns) return;
  rd->progress_next_ns = t + rd->progress_every_ns;
  double pct = rd->st.file_bytes ? 100.0 * (double)rd->off / (double)rd->st.file_bytes : 0;
  fprintf(stderr, "%s%s: %.0f%% read, %.1f M records%s", rd->progress_tty ? "\r" : "",
          rd->progress_label, pct > 100 ? 100 : pct, (double)rd->st.records / 1e6,
          rd->progress_tty ? "\033[K" : "\n");
  rd->progress_shown = 1;
}

void trace_reader_close(struct trace_reader *rd) {
  if (!rd) return;
  progress_end(rd);
  if (rd->fd >= 0) close(rd->fd);
  for (size_t i = 0; i < rd->string_slots; i++)
    free(rd->strings[i].s);
  free(rd->strings);
  ZSTD_freeDCtx(rd->zd);
  free(rd->payload);
  trace_reader_keep_chunks(rd, 0);
  free(rd->buf);
  free(rd->lines);
  free(rd->body);
  free(rd);
}

void trace_reader_version(const struct trace_reader *rd, unsigned *major, unsigned *minor) {
  *major = rd->major;
  *minor = rd->minor;
}

const char *trace_reader_header(const struct trace_reader *rd, const char *key) {
  for (size_t i = 0; i < rd->nlines; i++)
    if (!strcmp(rd->lines[i].key, key)) return rd->lines[i].value;
  return NULL;
}

size_t trace_reader_header_count(const struct trace_reader *rd) { return rd->nlines; }

void trace_reader_header_at(const struct trace_reader *rd, size_t i, const char **key,
                            const char **value) {
  *key = i < rd->nlines ? rd->lines[i].key : NULL;
  *value = i < rd->nlines ? rd->lines[i].value : NULL;
}

const struct trace_reader_stats *trace_reader_stats(const struct trace_reader *rd) {
  return &rd->st;
}

/* ---- string table ---- */

static size_t string_home(uint32_t id, size_t slots) {
  return (size_t)((id * 0x9e3779b97f4a7c15ull) >> 20) & (slots - 1);
}

static int strings_grow(struct trace_reader *rd) {
  size_t n = rd->string_slots ? rd->string_slots * 2 : 1024;
  struct string_slot *s = calloc(n, sizeof *s);
  if (!s) return -1;
  for (size_t i = 0; i < rd->string_slots; i++) {
    if (!rd->strings[i].id) continue;
    size_t j = string_home(rd->strings[i].id, n);
    while (s[j].id)
      j = (j + 1) & (n - 1);
    s[j] = rd->strings[i];
  }
  free(rd->strings);
  rd->strings = s;
  rd->string_slots = n;
  return 0;
}

/* Remembers a STRING record. A redefinition of an id replaces the old text. Out of memory only
 * loses the name (it reads "?"), never the trace. */
static void strings_define(struct trace_reader *rd, uint32_t id, const char *s, uint32_t len) {
  if (!id) return;
  if (2 * (rd->nstrings + 1) > rd->string_slots && strings_grow(rd)) return;
  char *copy = malloc((size_t)len + 1);
  if (!copy) return;
  if (len) memcpy(copy, s, len); /* a STRING record without its bytes has s == NULL */
  copy[len] = '\0';
  size_t i = string_home(id, rd->string_slots);
  while (rd->strings[i].id && rd->strings[i].id != id)
    i = (i + 1) & (rd->string_slots - 1);
  if (rd->strings[i].id && rd->keep_strings) {
    free(copy);
    return;
  }
  if (rd->strings[i].id) {
    free(rd->strings[i].s);
    rd->st.strings_redefined++;
  } else {
    rd->strings[i].id = id;
    rd->nstrings++;
  }
  rd->strings[i].s = copy;
}

const char *trace_reader_string(const struct trace_reader *rd, uint32_t id) {
  if (!id || !rd->string_slots) return "?";
  size_t i = string_home(id, rd->string_slots);
  while (rd->strings[i].id) {
    if (rd->strings[i].id == id) return rd->strings[i].s;
    i = (i + 1) & (rd->string_slots - 1);
  }
  return "?";
}

int trace_reader_has_string(const struct trace_reader *rd, uint32_t id) {
  if (!id || !rd->string_slots) return 0;
  size_t i = string_home(id, rd->string_slots);
  while (rd->strings[i].id) {
    if (rd->strings[i].id == id) return 1;
    i = (i + 1) & (rd->string_slots - 1);
  }
  return 0;
}

/* ---- chunks ---- */

static int grow(uint8_t **buf, size_t *cap, size_t need) {
  if (need <= *cap) return 0;
  uint8_t *p = realloc(*buf, need);
  if (!p) return -1;
  *buf = p;
  *cap = need;
  return 0;
}

/* Stops reading at the chunk that begins at rd->off. */
static int stop(struct trace_reader *rd, enum trace_tail why) {
  rd->done = 1;
  rd->st.tail = why;
  rd->st.tail_offset = rd->off;
  rd->st.tail_bytes = rd->st.file_bytes > rd->off ? rd->st.file_bytes - rd->off : 0;
  return 0;
}

/* The chunk in raw (checked whole, read for the first time) kept where chunk_load decompressed
 * it into the arena's free room (trace_reader_keep_chunks). */
static void keep_chunk(struct trace_reader *rd) {
  if (!rd->arena || rd->raw != rd->arena + rd->arena_used) return;
  if (rd->nkept == rd->kept_cap) {
    size_t cap = rd->kept_cap ? rd->kept_cap * 2 : 256;
    struct kept_chunk *v = realloc(rd->kept, cap * sizeof *v);
    if (!v) return;
    rd->kept = v;
    rd->kept_cap = cap;
  }
  rd->kept[rd->nkept++] = (struct kept_chunk){rd->raw_off, rd->raw_next, rd->raw, rd->raw_len};
  if (rd->arena_hp && rd->raw_len)
    for (size_t i = rd->arena_used / rd->arena_hp;
         i <= (rd->arena_used + rd->raw_len - 1) / rd->arena_hp; i++)
      rd->hp_live[i]++;
  rd->arena_used += rd->raw_len;
}

static struct kept_chunk *kept_find(struct trace_reader *rd, uint64_t off) {
  size_t lo = 0, hi = rd->nkept;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (rd->kept[mid].off < off)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < rd->nkept && rd->kept[lo].off == off && rd->kept[lo].raw ? &rd->kept[lo] : NULL;
}

void trace_reader_drop_chunk(struct trace_reader *rd, uint64_t off) {
  struct kept_chunk *k = kept_find(rd, off);
  if (!k) return;
  if (rd->raw == k->raw) { /* the chunk loaded last: loaded again if sought */
    rd->raw_ok = 0;
    rd->in_chunk = 0;
  }
  if (rd->arena_hp) { /* the huge pages that held its last live bytes given back */
    size_t hp = rd->arena_hp, at = (size_t)(k->raw - rd->arena);
    for (size_t i = at / hp; k->len && i <= (at + k->len - 1) / hp; i++)
      if (!--rd->hp_live[i])
        madvise(rd->arena + i * hp, rd->keep_budget - i * hp < hp ? rd->keep_budget - i * hp : hp,
                MADV_DONTNEED);
  } else { /* the whole pages inside it given back */
    uintptr_t a = ((uintptr_t)k->raw + 4095) & ~(uintptr_t)4095;
    uintptr_t b = ((uintptr_t)k->raw + k->len) & ~(uintptr_t)4095;
    if (b > a) madvise((void *)a, b - a, MADV_DONTNEED);
  }
  k->raw = NULL;
}

/* The arena's pages for [p, p + len) faulted in by one call before zstd writes them: a page
 * fault per 4 KiB page cost ~7 us on the dev machine's VM (0.36 of a 10 M report's 2.0 CPU s
 * were the kernel's); asked at once they cost half. A kernel without MADV_POPULATE_WRITE
 * (before 5.14) answers EINVAL and the pages fault as before. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
static void populate(const uint8_t *p, size_t len) {
  uintptr_t a = (uintptr_t)p & ~(uintptr_t)4095;
  uintptr_t b = ((uintptr_t)p + len + 4095) & ~(uintptr_t)4095;
  if (b > a) (void)madvise((void *)a, b - a, MADV_POPULATE_WRITE);
}

void trace_reader_keep_chunks(struct trace_reader *rd, size_t bytes) {
  if (rd->arena) {
    if (rd->raw >= rd->arena && rd->raw < rd->arena + rd->keep_budget) {
      rd->raw_ok = 0;
      rd->in_chunk = 0;
    }
    munmap(rd->arena, rd->keep_budget);
  }
  free(rd->kept);
  free(rd->hp_live);
  rd->kept = NULL;
  rd->hp_live = NULL;
  rd->arena = NULL;
  rd->nkept = rd->kept_cap = rd->arena_used = rd->keep_budget = rd->arena_hp = 0;
  if (!bytes) return;
  /* in huge pages where the kernel has them free: the arena aligned on one, the mapping's ends
   * beyond it given back */
  size_t hp = trace_huge_page_size(bytes), len = bytes + hp;
  if (hp && !(rd->hp_live = calloc((bytes + hp - 1) / hp, sizeof *rd->hp_live)))
    hp = 0, len = bytes;
  void *m =
      mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) { /* nothing kept */
    free(rd->hp_live);
    rd->hp_live = NULL;
    return;
  }
  uint8_t *a = m;
  if (hp) {
    a = (uint8_t *)(((uintptr_t)m + hp - 1) & ~(uintptr_t)(hp - 1));
    if (a > (uint8_t *)m) munmap(m, (size_t)(a - (uint8_t *)m));
    if ((uint8_t *)m + len > a + bytes) munmap(a + bytes, (size_t)((uint8_t *)m + len - a - bytes));
    if (madvise(a, bytes, MADV_HUGEPAGE)) { /* pages of 4 KiB: given back by the chunk */
      free(rd->hp_live);
      rd->hp_live = NULL;
      hp = 0;
    }
  }
  rd->arena = a;
  rd->keep_budget = bytes;
  rd->arena_hp = hp;
}

/* The bracketed choice of a sysfs file such as "always [madvise] never" into out; -1 when none. */
static int sys_choice(const char *path, char *out, size_t n) {
  char line[256];
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char *got = fgets(line, sizeof line, f);
  fclose(f);
  char *a = got ? strchr(line, '[') : NULL, *b = a ? strchr(a, ']') : NULL;
  if (!b || (size_t)(b - a - 1) >= n) return -1;
  memcpy(out, a + 1, (size_t)(b - a - 1));
  out[b - a - 1] = 0;
  return 0;
}

size_t trace_huge_page_size(size_t bytes) {
  const char *e = getenv("SLACK_HUGEPAGES");
  if (e && !strcmp(e, "0")) return 0;
  char mode[32];
  if (sys_choice("/sys/kernel/mm/transparent_hugepage/enabled", mode, sizeof mode) ||
      (strcmp(mode, "always") && strcmp(mode, "madvise")))
    return 0;
  unsigned long long hp = 0;
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
  if (!f) return 0;
  if (fscanf(f, "%llu", &hp) != 1) hp = 0;
  fclose(f);
  long pg = sysconf(_SC_PAGESIZE);
  /* a power of two, of at most 32 MiB (a kernel of 64 KiB pages has 512 MiB ones: not those) */
  if (pg <= 0 || hp <= (unsigned long long)pg || hp > (32ull << 20) || (hp & (hp - 1))) return 0;
  /* no compaction where a huge page is faulted in (defer: in the background; never: none) */
  char defrag[32];
  if (!sys_choice("/sys/kernel/mm/transparent_hugepage/defrag", defrag, sizeof defrag) &&
      (!strcmp(defrag, "defer") || !strcmp(defrag, "never")))
    return (size_t)hp;
  /* else the kernel may compact memory first, where it has no free block of that size (round 9
   * of docs/PERFORMANCE.md: 1 s for 128 MB): only with blocks enough free (zones but DMA's) */
  int order = 0;
  while (((unsigned long long)pg << order) < hp)
    order++;
  f = fopen("/proc/buddyinfo", "r");
  if (!f) return 0;
  char line[512];
  unsigned long long blocks = 0;
  while (fgets(line, sizeof line, f)) {
    char zone[32];
    int at = 0;
    if (sscanf(line, "Node %*d, zone %31s%n", zone, &at) != 1 || !strcmp(zone, "DMA")) continue;
    char *p = line + at;
    for (int o = 0;; o++) {
      char *end;
      unsigned long long n = strtoull(p, &end, 10);
      if (end == p) break;
      if (o >= order && o - order < 32) blocks += n << (o - order);
      p = end;
    }
  }
  fclose(f);
  return blocks * hp >= 2 * (unsigned long long)bytes + (256ull << 20) ? (size_t)hp : 0;
}

/* Loads, checks and decompresses the chunk at rd->off. 1 when a chunk is ready to deliver,
 * 0 when reading has stopped (end of file or an unreadable chunk). */
static int chunk_load(struct trace_reader *rd) {
  uint8_t h[SLK_CHUNK_HEADER_SIZE];
  rd->raw_ok = 0;
  if (lseek(rd->fd, (off_t)rd->off, SEEK_SET) < 0) return stop(rd, TRACE_TAIL_READ_ERROR);
  ssize_t n = read_full(rd->fd, h, sizeof h);
  if (n < 0) return stop(rd, TRACE_TAIL_READ_ERROR);
  if (n == 0) {
    stop(rd, TRACE_TAIL_NONE);
    rd->st.tail_bytes = 0; /* the file may have grown since open: what we read ended cleanly */
    return 0;
  }
  if ((size_t)n < sizeof h) return stop(rd, TRACE_TAIL_SHORT_HEADER);
  if (slk_get_u32(h) != SLK_CHUNK_MAGIC) return stop(rd, TRACE_TAIL_BAD_MAGIC);
  uint32_t payload_len = slk_get_u32(h + 4), raw_len = slk_get_u32(h + 8);
  uint32_t records = slk_get_u32(h + 12);
  uint64_t t_min = slk_get_u64(h + 16), t_max = slk_get_u64(h + 24);
  uint32_t crc = slk_get_u32(h + 32);
  if (!payload_len || payload_len > MAX_CHUNK_BYTES || raw_len > MAX_CHUNK_BYTES)
    return stop(rd, TRACE_TAIL_BAD_LENGTH);
  /* No buffer for more payload than the file holds: a damaged length would otherwise reserve up
   * to MAX_CHUNK_BYTES for a file of a few bytes. The size now, not at open: a trace being
   * written grows. */
  struct stat sb;
  if (fstat(rd->fd, &sb) != 0) return stop(rd, TRACE_TAIL_READ_ERROR);
  if ((uint64_t)sb.st_size < rd->off + sizeof h ||
      (uint64_t)sb.st_size - rd->off - sizeof h < payload_len)
    return stop(rd, TRACE_TAIL_SHORT_PAYLOAD);
  if (grow(&rd->payload, &rd->payload_cap, payload_len)) return stop(rd, TRACE_TAIL_NO_MEMORY);
  n = read_full(rd->fd, rd->payload, payload_len);
  if (n < 0) return stop(rd, TRACE_TAIL_READ_ERROR);
  if ((size_t)n < payload_len) return stop(rd, TRACE_TAIL_SHORT_PAYLOAD);
  if (slk_crc32c(rd->payload, payload_len) != crc) return stop(rd, TRACE_TAIL_BAD_CRC);
  /* raw_len is outside the checksum; the frame's own content size (inside it) must agree */
  unsigned long long fcs = ZSTD_getFrameContentSize(rd->payload, payload_len);
  if (fcs == ZSTD_CONTENTSIZE_ERROR || (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs != raw_len))
    return stop(rd, TRACE_TAIL_BAD_FRAME);
  /* nor a raw buffer larger than the frame can decompress to (frames without a content size) */
  unsigned long long bound = ZSTD_decompressBound(rd->payload, payload_len);
  if (bound == ZSTD_CONTENTSIZE_ERROR || bound < raw_len) return stop(rd, TRACE_TAIL_BAD_FRAME);
  if (rd->arena && !rd->revisit && rd->keep_budget - rd->arena_used >= raw_len && raw_len) {
    rd->raw = rd->arena + rd->arena_used; /* kept once checked whole (keep_chunk) */
    populate(rd->raw, raw_len);
  } else {
    if (grow(&rd->buf, &rd->buf_cap, raw_len ? raw_len : 1)) return stop(rd, TRACE_TAIL_NO_MEMORY);
    rd->raw = rd->buf;
  }
  if (!rd->zd && !(rd->zd = ZSTD_createDCtx())) return stop(rd, TRACE_TAIL_NO_MEMORY);
  size_t got = ZSTD_decompressDCtx(rd->zd, rd->raw, raw_len, rd->payload, payload_len);
  if (ZSTD_isError(got) || got != raw_len) return stop(rd, TRACE_TAIL_BAD_FRAME);

  /* Validate every record before returning any: a chunk is delivered whole or not at all
   * (times 2: as they are decoded, chunk_record). slk_skip makes slk_decode's checks without
   * decoding the fields. A chunk loaded again by trace_reader_seek_chunk was validated when first
   * read, and its checksum still matches: not again (a tenth of a windowed report's time). */
  rd->unchecked = rd->times == 2 && !rd->revisit && raw_len; /* checked as decoded */
  uint64_t count = 0;
  for (size_t pos = 0; pos < raw_len && !rd->revisit && !rd->unchecked; count++) {
    size_t used = slk_skip(rd->raw + pos, raw_len - pos);
    if (!used) return stop(rd, TRACE_TAIL_BAD_RECORD);
    pos += used;
  }
  if (count != records && !rd->revisit && !rd->unchecked) rd->st.count_mismatch++;
  rd->chunk_records = records;
  rd->chunk_count = 0;
  if (rd->unchecked) rd->st_before = rd->st;

  rd->chunk_off = rd->off;
  rd->off += sizeof h + payload_len;
  rd->st.chunks++;
  rd->st.raw_bytes += raw_len;
  if (t_min && (!rd->st.t_min || t_min < rd->st.t_min)) rd->st.t_min = t_min;
  if (t_max > rd->st.t_max) rd->st.t_max = t_max;
  rd->raw_len = raw_len;
  rd->pos = 0;
  rd->in_chunk = 1;
  rd->raw_ok = !rd->unchecked; /* once its last record is checked */
  rd->raw_off = rd->chunk_off;
  rd->raw_next = rd->off;
  slk_delta_reset(&rd->delta);
  if (rd->raw_ok && !rd->revisit) keep_chunk(rd);
  return 1;
}

void trace_reader_set_times(struct trace_reader *rd, int times) { rd->times = times; }

/* A record of the chunk being delivered was decoded (used bytes; 0: it is malformed). Where the
 * chunk was not checked before (times 2), counts it, and takes the chunk back when it fails: the
 * reading stops at the chunk, as it would have before any of its records went out. 0 when the
 * reading stopped. */
static int chunk_record(struct trace_reader *rd, size_t used) {
  if (!rd->unchecked) return used != 0;
  if (!used) {
    uint64_t partial = rd->st.partial_chunks + 1;
    rd->unchecked = 0;
    rd->st = rd->st_before;
    rd->st.partial_chunks = partial;
    rd->in_chunk = 0;
    rd->off = rd->chunk_off;
    return stop(rd, TRACE_TAIL_BAD_RECORD);
  }
  rd->chunk_count++;
  if (rd->pos + used == rd->raw_len) { /* its last record: the chunk checked whole */
    rd->unchecked = 0;
    rd->raw_ok = 1;
    if (rd->chunk_count != rd->chunk_records) rd->st.count_mismatch++;
    keep_chunk(rd);
  }
  return 1;
}

uint64_t trace_reader_records_hint(const struct trace_reader *rd, uint64_t enough) {
  uint64_t off = rd->off, n = 0;
  uint8_t h[SLK_CHUNK_HEADER_SIZE];
  while (n <= enough && !rd->done) {
    if (pread(rd->fd, h, sizeof h, (off_t)off) != (ssize_t)sizeof h) break;
    if (slk_get_u32(h) != SLK_CHUNK_MAGIC) break;
    uint32_t payload_len = slk_get_u32(h + 4);
    if (!payload_len || payload_len > MAX_CHUNK_BYTES) break;
    n += slk_get_u32(h + 12);
    off += sizeof h + payload_len;
  }
  return n;
}

int trace_reader_next(struct trace_reader *rd, struct slk_record *rec) {
  for (;;) {
    if (rd->in_chunk && rd->pos < rd->raw_len) {
      const uint8_t *at = rd->raw + rd->pos;
      size_t left = rd->raw_len - rd->pos;
      size_t used = !rd->times      ? slk_decode(&rd->delta, at, left, rec)
                    : rd->unchecked ? slk_decode_times_checked(&rd->delta, at, left, rec)
                                    : slk_decode_times(&rd->delta, at, left, rec);
      /* fails only in a chunk not checked before (times 2): the bytes were checked in
       * chunk_load otherwise, with the same delta state */
      if (!chunk_record(rd, used)) {
        if (rd->done) {
          progress_end(rd);
          return 0;
        }
        rd->in_chunk = 0;
        continue;
      }
      rd->pos += used;
      if (rec->kind == 0 || rec->kind >= SLK_KIND_MAX) {
        rd->st.unknown_records++;
        continue;
      }
      if (rec->kind == SLK_STRING) strings_define(rd, rec->id, rec->str, rec->str_len);
      rd->st.records++;
      return 1;
    }
    rd->in_chunk = 0;
    if (rd->done || !chunk_load(rd)) {
      progress_end(rd);
      return 0;
    }
    progress_tick(rd);
  }
}

uint64_t trace_reader_chunk_offset(const struct trace_reader *rd) { return rd->chunk_off; }

int trace_reader_seek_chunk(struct trace_reader *rd, uint64_t off) {
  if (off < rd->st.header_bytes || off >= rd->st.file_bytes) return -1;
  rd->off = off;
  rd->in_chunk = 0;
  rd->done = 0;
  rd->keep_strings = 1;
  if (rd->raw_ok && rd->raw_off == off) { /* the chunk loaded last (a window's edge): as it is */
    rd->chunk_off = off;
    rd->off = rd->raw_next;
    rd->pos = 0;
    rd->in_chunk = 1;
    slk_delta_reset(&rd->delta);
    return 0;
  }
  struct kept_chunk *k = kept_find(rd, off);
  if (k) { /* kept: not read, checked or decompressed again */
    rd->raw = k->raw;
    rd->raw_len = k->len;
    rd->raw_ok = 1;
    rd->unchecked = 0;
    rd->raw_off = rd->chunk_off = off;
    rd->raw_next = rd->off = k->next;
    rd->pos = 0;
    rd->in_chunk = 1;
    slk_delta_reset(&rd->delta);
    return 0;
  }
  struct trace_reader_stats st = rd->st; /* the counters stay the first reading's */
  rd->revisit = 1;
  int ok = chunk_load(rd);
  rd->revisit = 0;
  rd->st = st;
  return ok ? 0 : -1;
}

static inline __attribute__((always_inline)) int next_in_chunk(struct trace_reader *rd,
                                                               struct slk_record *rec, int light) {
  while (rd->in_chunk && rd->pos < rd->raw_len) {
    const uint8_t *at = rd->raw + rd->pos;
    size_t left = rd->raw_len - rd->pos;
    /* light: the chunk was checked whole when first delivered (a chunk being checked as it is
     * decoded, times 2, is decoded whole) */
    size_t used = light && !rd->unchecked ? slk_decode_light(&rd->delta, at, left, rec)
                                          : slk_decode(&rd->delta, at, left, rec);
    if (!chunk_record(rd, used)) break;
    rd->pos += used;
    if (rec->kind == 0 || rec->kind >= SLK_KIND_MAX) continue;
    if (rec->kind == SLK_STRING) strings_define(rd, rec->id, rec->str, rec->str_len);
    return 1;
  }
  rd->in_chunk = 0;
  return 0;
}

int trace_reader_next_in_chunk(struct trace_reader *rd, struct slk_record *rec) {
  return next_in_chunk(rd, rec, 0);
}

int trace_reader_next_in_chunk_light(struct trace_reader *rd, struct slk_record *rec) {
  return next_in_chunk(rd, rec, 1);
}

int trace_reader_peek_kind(const struct trace_reader *rd) {
  return rd->in_chunk && rd->pos < rd->raw_len ? rd->raw[rd->pos] : -1;
}

/* ---- whole-trace arrays ---- */

int trace_data_add(struct trace_data *td, const struct slk_record *rec) {
  if (rec->kind == SLK_STRING || rec->kind == 0 || rec->kind >= SLK_KIND_MAX) return 0;
  struct trace_array *a = &td->kind[rec->kind];
  if (a->n == a->cap) {
    size_t cap = a->cap ? a->cap * 2 : 1024;
    struct slk_record *v = realloc(a->v, cap * sizeof *v);
    if (!v) return -1;
    a->v = v;
    a->cap = cap;
  }
  a->v[a->n] = *rec;
  a->n++;
  if (rec->kind == SLK_KERNEL || rec->kind == SLK_MEMCPY || rec->kind == SLK_MEMSET)
    trace_devices_count(&td->dev, rec->device);
  return 0;
}

const struct trace_devices *trace_data_devices(const struct trace_data *td) {
  if (td->dev.over) return NULL;
  size_t sum = 0;
  for (uint32_t i = 0; i < td->dev.n; i++)
    sum += td->dev.count[i];
  size_t n = td->kind[SLK_KERNEL].n + td->kind[SLK_MEMCPY].n + td->kind[SLK_MEMSET].n;
  return sum == n ? &td->dev : NULL;
}

static int cmp_start(const void *pa, const void *pb) {
  const struct slk_record *a = pa, *b = pb;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  if (a->end != b->end) return a->end < b->end ? -1 : 1;
  if (a->corr != b->corr) return a->corr < b->corr ? -1 : 1;
  return 0;
}

struct sort_key {
  uint64_t start;
  size_t ix; /* the record's index before sorting */
};

/* Ties of start: by end, corr, then the index, which keeps equal records in file order. */
static const struct slk_record *tie_v;
static int cmp_tie(const void *pa, const void *pb) {
  const struct sort_key *a = pa, *b = pb;
  int c = cmp_start(&tie_v[a->ix], &tie_v[b->ix]);
  if (c) return c;
  return a->ix < b->ix ? -1 : a->ix > b->ix;
}

/* Sorts v[0..n) by (start, end, corr), stably: what a stable qsort by cmp_start gives, without
 * moving 128-byte records through a merge sort. Keys (start, index) go through an LSD radix sort
 * (8 bits a pass, passes whose byte never varies skipped), runs of equal starts are ordered by
 * the rest of the key, then the records are permuted in place. -1 when the keys do not fit in
 * memory (v is then untouched). */
/* Ties of start in a packed key (sort_packed): by end, corr, then the index. */
static uint64_t tie_mask;
static int cmp_tie_packed(const void *pa, const void *pb) {
  uint64_t a = *(const uint64_t *)pa & tie_mask, b = *(const uint64_t *)pb & tie_mask;
  int c = cmp_start(&tie_v[a], &tie_v[b]);
  if (c) return c;
  return a < b ? -1 : a > b;
}

/* v[i] goes to position j where a[j] (masked by mask) is i: follow each cycle once. */
static void permute_records(struct slk_record *v, size_t n, uint64_t *a, uint64_t mask) {
  for (size_t i = 0; i < n; i++) {
    if ((a[i] & mask) == i) continue;
    struct slk_record tmp = v[i];
    size_t j = i;
    while ((a[j] & mask) != i) {
      size_t k = (size_t)(a[j] & mask);
      /* the record after this one in the cycle: fetched while this one moves */
      const char *p = (const char *)&v[a[k] & mask];
      __builtin_prefetch(p);
      __builtin_prefetch(p + 64);
      __builtin_prefetch(p + sizeof *v - 1);
      v[j] = v[k];
      a[j] = j;
      j = k;
    }
    v[j] = tmp;
    a[j] = j;
  }
}

/* sort_records where the starts' range and the index fit one 64-bit word together (what a
 * trace's arrays, and a window's, are): (start - first) above the index, sorted by the start's
 * bits only, 11 at a time (fewer passes over half the bytes; stable, so equal starts stay in
 * index order). 1 when done, 0 when it does not fit, -1 when out of memory. */
static int sort_packed(struct slk_record *v, size_t n, uint64_t *starts) {
  /* starts (the caller's, its records' starts): the keys' room, no pass over the records */
  uint64_t *a = starts ? starts : malloc(n * sizeof *a);
  if (!a) return -1;
  uint64_t lo = starts ? a[0] : v[0].start, hi = lo;
  for (size_t i = 0; i < n; i++) { /* the one pass over the records */
    if (!starts) a[i] = v[i].start;
    if (a[i] < lo) lo = a[i];
    if (a[i] > hi) hi = a[i];
  }
  int ib = 64 - __builtin_clzll((uint64_t)n), sb = hi > lo ? 64 - __builtin_clzll(hi - lo) : 0;
  uint64_t *b = ib + sb <= 64 ? malloc(n * sizeof *b) : NULL;
  if (!b) {
    if (!starts) free(a);
    return ib + sb <= 64 ? -1 : 0;
  }
  enum { DIGIT = 11, DIGITS = (64 + DIGIT - 1) / DIGIT };
  /* the keys made and every digit counted in one pass */
  int nd = (sb + DIGIT - 1) / DIGIT;
  size_t counts[DIGITS][1 << DIGIT];
  memset(counts, 0, (size_t)nd * sizeof counts[0]);
  for (size_t i = 0; i < n; i++) {
    a[i] = (a[i] - lo) << ib | i;
    for (int d = 0; d < nd; d++)
      counts[d][(a[i] >> (ib + DIGIT * d)) & ((1u << DIGIT) - 1)]++;
  }
  for (int sh = ib; sh < ib + sb; sh += DIGIT) {
    size_t *count = counts[(sh - ib) / DIGIT];
    size_t sum = 0;
    for (size_t k = 0; k < (1u << DIGIT); k++) {
      size_t c = count[k];
      count[k] = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; i++)
      b[count[(a[i] >> sh) & ((1u << DIGIT) - 1)]++] = a[i];
    uint64_t *t = a;
    a = b;
    b = t;
  }
  uint64_t mask = ib < 64 ? (1ull << ib) - 1 : ~0ull;
  tie_v = v;
  tie_mask = mask;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && a[j] >> ib == a[i] >> ib)
      j++;
    if (j - i > 1) qsort(a + i, j - i, sizeof *a, cmp_tie_packed);
    i = j;
  }
  permute_records(v, n, a, mask);
  if (starts) { /* a and b are the caller's starts and this sort's scratch, in either order */
    free(a == starts ? b : a);
  } else {
    free(a);
    free(b);
  }
  return 1;
}

static int sort_records(struct slk_record *v, size_t n, uint64_t *starts) {
  size_t i = 1;
  while (i < n && cmp_start(&v[i - 1], &v[i]) <= 0)
    i++;
  if (i >= n) return 0; /* already in order: what most arrays of a trace are */
  int packed = sort_packed(v, n, starts);
  if (packed) return packed < 0 ? -1 : 0;
  struct sort_key *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  size_t(*count)[256] = calloc(8, sizeof *count);
  if (!a || !b || !count) {
    free(a);
    free(b);
    free(count);
    return -1;
  }
  for (i = 0; i < n; i++) {
    a[i].start = v[i].start;
    a[i].ix = i;
    for (int d = 0; d < 8; d++)
      count[d][(v[i].start >> (8 * d)) & 0xff]++;
  }
  for (int d = 0; d < 8; d++) {
    if (count[d][(a[0].start >> (8 * d)) & 0xff] == n) continue; /* one value: nothing to do */
    size_t sum = 0;
    for (int k = 0; k < 256; k++) {
      size_t c = count[d][k];
      count[d][k] = sum;
      sum += c;
    }
    for (i = 0; i < n; i++)
      b[count[d][(a[i].start >> (8 * d)) & 0xff]++] = a[i];
    struct sort_key *t = a;
    a = b;
    b = t;
  }
  tie_v = v;
  for (i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && a[j].start == a[i].start)
      j++;
    if (j - i > 1) qsort(a + i, j - i, sizeof *a, cmp_tie);
    i = j;
  }
  /* position i takes the record at a[i].ix: follow each cycle once */
  for (i = 0; i < n; i++) {
    if (a[i].ix == i) continue;
    struct slk_record tmp = v[i];
    size_t j = i;
    while (a[j].ix != i) {
      size_t k = a[j].ix;
      v[j] = v[k];
      a[j].ix = j;
      j = k;
    }
    v[j] = tmp;
    a[j].ix = j;
  }
  free(a);
  free(b);
  free(count);
  return 0;
}

void trace_array_sort(struct trace_array *a, uint64_t *starts) {
  if (a->n > 1 && sort_records(a->v, a->n, starts))
    qsort(a->v, a->n, sizeof(struct slk_record), cmp_start);
}

void trace_data_sort(struct trace_data *td) {
  for (int k = 0; k < SLK_KIND_MAX; k++)
    trace_array_sort(&td->kind[k], NULL);
}

int trace_data_load(struct trace_reader *rd, uint32_t mask, struct trace_data *td) {
  struct slk_record r;
  int rc = 0;
  while (trace_reader_next(rd, &r))
    if ((mask & TRACE_KIND_BIT(r.kind)) && trace_data_add(td, &r)) {
      rc = -1;
      break;
    }
  trace_data_sort(td);
  return rc;
}

void trace_data_free(struct trace_data *td) {
  for (int k = 0; k < SLK_KIND_MAX; k++)
    free(td->kind[k].v);
  memset(td, 0, sizeof *td);
}

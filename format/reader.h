/* Trace reader: the one way the analyzer reads a .slk file (docs/FORMAT.md).
 *
 * Reading streams: one chunk is held at a time (compressed and raw buffers reused), so memory
 * does not grow with the trace except for the string table. A damaged or cut-off file is never
 * an error: the reader returns every record of every complete, checksummed chunk, stops at the
 * first chunk it cannot read and says how many bytes of the tail it skipped and why.
 *
 * For analysis that needs the whole trace at once, trace_data holds the records of chosen kinds
 * in arrays sorted by start (memory proportional to the trace).
 */
#ifndef SLACK_READER_H
#define SLACK_READER_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"

/* Why reading stopped before the end of the file. */
enum trace_tail {
  TRACE_TAIL_NONE = 0,      /* the file ends right after a complete chunk */
  TRACE_TAIL_SHORT_HEADER,  /* fewer bytes left than a chunk header */
  TRACE_TAIL_SHORT_PAYLOAD, /* the chunk header promises more payload than the file holds */
  TRACE_TAIL_BAD_MAGIC,     /* no "SLKC" where a chunk should begin */
  TRACE_TAIL_BAD_LENGTH,    /* implausible payload or raw length in a chunk header */
  TRACE_TAIL_BAD_CRC,       /* payload checksum mismatch */
  TRACE_TAIL_BAD_FRAME,     /* the zstd frame does not decompress to the promised length */
  TRACE_TAIL_BAD_RECORD,    /* a checksummed chunk holds a malformed record (a writer bug) */
  TRACE_TAIL_READ_ERROR,    /* read(2) failed */
  TRACE_TAIL_NO_MEMORY      /* a buffer for the chunk could not be allocated */
};

/* A phrase for reason ("truncated chunk header", "bad crc"...). */
const char *trace_tail_reason(enum trace_tail reason);

struct trace_reader_stats {
  uint64_t file_bytes;        /* size of the file when it was opened */
  uint64_t header_bytes;      /* fixed file header + body */
  uint64_t chunks;            /* complete chunks read so far */
  uint64_t records;           /* records returned so far (all kinds) */
  uint64_t unknown_records;   /* records of kinds this reader does not know (skipped) */
  uint64_t raw_bytes;         /* decompressed record bytes so far */
  uint64_t count_mismatch;    /* chunks whose record count differs from their header's */
  uint64_t partial_chunks;    /* times 2: chunks that failed their checks after some of their
                                 records were returned (trace_reader_set_times) */
  uint64_t strings_redefined; /* STRING records that gave an already defined id new text */
  uint64_t t_min, t_max;      /* over the chunk headers read (0 when none had times) */
  enum trace_tail tail;       /* why reading stopped; meaningful once trace_reader_next gave 0 */
  uint64_t tail_offset;       /* file offset of the first unreadable byte */
  uint64_t tail_bytes;        /* bytes from tail_offset to the end of the file */
};

struct trace_reader;

/* Opens path and reads its file header. Returns NULL when the file cannot be opened or is not a
 * slack trace this reader can read (another major version); then err (errlen bytes) holds the
 * reason, e.g. "No such file or directory" or "trace format 2.0, this slack reads 1.x". A newer
 * minor version opens: records and fields it does not know are skipped. */
struct trace_reader *trace_reader_open(const char *path, char *err, size_t errlen);

/* Closes the file and frees everything, string table included. NULL is allowed. */
void trace_reader_close(struct trace_reader *rd);

/* Format version of the file. */
void trace_reader_version(const struct trace_reader *rd, unsigned *major, unsigned *minor);

/* Value of the first header line "key=value" with this key, or NULL. */
const char *trace_reader_header(const struct trace_reader *rd, const char *key);
/* Header lines in file order: count, and the i-th key and value (i < count). */
size_t trace_reader_header_count(const struct trace_reader *rd);
void trace_reader_header_at(const struct trace_reader *rd, size_t i, const char **key,
                            const char **value);

/* Next record of the file into *rec: 1, or 0 at the end of the readable part (then see
 * trace_reader_stats()->tail). STRING records are returned too, and remembered: their rec->str
 * points into the reader's buffer and stays valid only until the next call. Records of unknown
 * kinds are skipped (counted in unknown_records). */
int trace_reader_next(struct trace_reader *rd, struct slk_record *rec);
/* 1: trace_reader_next fills only the fields slk_decode_times names (format.h), for a reading
 * that wants only the records' times (and kinds, devices, streams and threads); 0 (the
 * default): whole records. 2: as 1, with each chunk's records checked as they are decoded
 * (slk_decode_times_checked: one pass over the bytes) instead of all of them before the first is
 * returned: should one be malformed, the reading stops at its chunk as with 1 (the counters as if
 * none of its records had come), but the chunk's records before it were returned
 * (partial_chunks counts it): a caller that needs whole chunks reads again with 1. Set back to 0
 * only where the chunk being delivered has no record left (its records' correlation ids are
 * decoded in order: slk_decode_times skips them). */
void trace_reader_set_times(struct trace_reader *rd, int times);

/* The records the file's chunk headers announce from the reader's position on (every kind,
 * STRING records too), counted until more than `enough` (then a number past it): without
 * decompressing or checking anything but the headers' magic and lengths, so only a hint of what
 * trace_reader_next will deliver (a damaged chunk stops it earlier). Reads with pread: the
 * reader's position does not move. */
uint64_t trace_reader_records_hint(const struct trace_reader *rd, uint64_t enough);

/* The string defined for id by a STRING record read so far: NUL-terminated, valid until the
 * reader is closed; "?" when id is 0 or not (yet) defined. */
const char *trace_reader_string(const struct trace_reader *rd, uint32_t id);
/* 1 when a STRING record read so far defines id (its text is then trace_reader_string's). The
 * strings held are at most one per STRING record read: what caches keyed by id can be bounded
 * by. */
int trace_reader_has_string(const struct trace_reader *rd, uint32_t id);

/* Turns on a progress line on stderr: "LABEL: 42% read, 3.1 M records", first after every_ms
 * of reading and then every every_ms, at chunk boundaries. tty: rewritten in place ("\r") and
 * erased when reading ends; else one line each time. The only thing the reader prints. */
void trace_reader_progress(struct trace_reader *rd, const char *label, unsigned every_ms, int tty);

/* Random access by chunk, for an analysis that reads a long trace window by window
 * (report_window.c): the file offset of the chunk whose records trace_reader_next is
 * delivering; trace_reader_seek_chunk loads the chunk at such an offset again (0, or -1 when it
 * cannot: then reading has stopped; the chunk loaded last is kept, not read again), and
 * trace_reader_next_in_chunk returns its records, 0 at its end (its records are not validated
 * again: they were when first delivered, and its checksum must still match). After a seek, STRING
 * records no longer redefine ids already defined (the strings handed out stay valid).
 * trace_reader_stats keeps the counters of the reading in file order. */
uint64_t trace_reader_chunk_offset(const struct trace_reader *rd);
int trace_reader_seek_chunk(struct trace_reader *rd, uint64_t off);
int trace_reader_next_in_chunk(struct trace_reader *rd, struct slk_record *rec);
/* trace_reader_next_in_chunk with the next record decoded as slk_decode_light decodes it (the
 * fields it leaves are left as they were in *rec). */
int trace_reader_next_in_chunk_light(struct trace_reader *rd, struct slk_record *rec);
/* The kind byte of the record trace_reader_next_in_chunk decodes next (a kind of 0 or past
 * SLK_KIND_MAX is skipped by it: the record it returns is then a later one), -1 at the chunk's
 * end. Lets a caller decode a record in its place in an array. */
int trace_reader_peek_kind(const struct trace_reader *rd);

/* Keeps the decompressed chunks read from here on (whole and checked, in file order) while they
 * fit in `bytes` in all: trace_reader_seek_chunk then gives a kept one again without reading,
 * checking or decompressing it (a windowed report reads each chunk once more). 0 frees those
 * kept and keeps no more; trace_reader_drop_chunk frees one (the chunk at that offset). */
void trace_reader_keep_chunks(struct trace_reader *rd, size_t bytes);
void trace_reader_drop_chunk(struct trace_reader *rd, uint64_t off);

/* The size of a transparent huge page when `bytes` of fresh anonymous memory can be asked for
 * in huge pages (madvise(MADV_HUGEPAGE)) now without the kernel compacting memory to make them,
 * else 0: huge pages on (`always` or `madvise` in /sys/kernel/mm/transparent_hugepage/enabled),
 * and either no compaction in the fault path (`defer` or `never` in its defrag) or twice `bytes`
 * and 256 MiB more free in blocks of a huge page's order (/proc/buddyinfo). SLACK_HUGEPAGES=0
 * (docs/ENVIRONMENT.md): 0. The kept chunks' arena takes huge pages where it says so, and so does
 * the heap of `slack report` on one trace (report_window.c): on the dev machine's VM a 4 KiB
 * page's first touch cost 6-12 us, a huge page's 2-10 times less per byte (more where the host
 * must back it first). */
size_t trace_huge_page_size(size_t bytes);

/* Counters so far; after trace_reader_next returned 0, the final ones. */
const struct trace_reader_stats *trace_reader_stats(const struct trace_reader *rd);

/* ---- whole-trace arrays for analysis ---- */

struct trace_array {
  struct slk_record *v;
  size_t n, cap;
};

/* The GPU records (kernels, copies, memsets) counted per device as trace_data_add adds them (the
 * first TRACE_DEVICES devices in order of appearance; over when there were more): a reader of the
 * arrays learns their devices without a pass over the records. Valid only where
 * trace_data_devices says so: arrays filled or emptied by hand leave the counts stale. */
enum { TRACE_DEVICES = 16 };
struct trace_devices {
  uint32_t n, over;
  uint32_t device[TRACE_DEVICES];
  size_t count[TRACE_DEVICES];
};

/* Counts one GPU record of device dev in d. */
static inline void trace_devices_count(struct trace_devices *d, uint32_t dev) {
  uint32_t i = 0;
  while (i < d->n && d->device[i] != dev)
    i++;
  if (i == d->n) {
    if (i == TRACE_DEVICES) {
      d->over = 1;
      return;
    }
    d->device[d->n++] = dev;
    d->count[i] = 0;
  }
  d->count[i]++;
}

/* Records by kind. STRING records are not kept here (the reader's string table holds them) and
 * their str pointers would not outlive the chunk anyway. */
struct trace_data {
  struct trace_array kind[SLK_KIND_MAX];
  struct trace_devices dev; /* the GPU records' devices (see trace_data_devices) */
};

#define TRACE_KIND_BIT(k) (1u << (k))
#define TRACE_KINDS_ALL (~0u)

/* Appends rec to td->kind[rec->kind] (STRING and unknown kinds ignored).
 * 0, or -1 when out of memory. */
int trace_data_add(struct trace_data *td, const struct slk_record *rec);
/* td's per-device counts of its GPU records (td->dev), or NULL where they may not be every GPU
 * record's: more than TRACE_DEVICES devices, or counts that do not sum to the arrays' records
 * (arrays filled or emptied other than by trace_data_add). */
const struct trace_devices *trace_data_devices(const struct trace_data *td);
/* Sorts every array by (start, end, corr). */
void trace_data_sort(struct trace_data *td);
/* Sorts one array as trace_data_sort does. starts, when not NULL: the caller's a->v[i].start for
 * every i (room that the sort then uses and leaves clobbered; the records need not be read for
 * their keys) */
void trace_array_sort(struct trace_array *a, uint64_t *starts);
/* Reads the rest of rd, keeping the kinds whose TRACE_KIND_BIT is in mask, then sorts.
 * 0, or -1 when out of memory (td holds what was read). */
int trace_data_load(struct trace_reader *rd, uint32_t mask, struct trace_data *td);
void trace_data_free(struct trace_data *td);

#endif

/* What the fuzz targets of tests/fuzz share (docs/RELIABILITY.md).
 *
 * Every target defines LLVMFuzzerTestOneInput. Built with clang -fsanitize=fuzzer it is a
 * libFuzzer binary (make fuzz); built with the normal CC and tests/fuzz/replay.c it is a replay
 * driver that feeds it every file of the committed corpora and regression inputs (make test).
 *
 * Trace inputs (targets reader and commands) come in two forms:
 *   - a whole .slk file, when the input begins with the file magic "SLACKTR\0": fed as is, so
 *     that a trace that misbehaves in the field is a regression input by itself;
 *   - otherwise a "synthetic" trace, which the harness turns into a file with valid chunks
 *     (zstd frames, CRCs, lengths), so that the fuzzer mutates records and not checksums:
 *
 *       byte 0        version: major 1 + !(b & 1) (2 when bit 0 is clear, else 1); minor
 *                     (b >> 1) & 3
 *       bytes 1..NUL  the header body ("key=value\n" lines); no NUL: the whole input
 *       then chunks, separated by FUZZ_CHUNK_SEP; each starts with a flags byte (FUZZ_CF_*)
 *       that damages it on purpose, then the raw record bytes of the chunk.
 */
#ifndef SLACK_FUZZ_H
#define SLACK_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FUZZ_CHUNK_SEP "CHNK"
#define FUZZ_CHUNK_SEP_LEN 4

/* Chunk flags of a synthetic trace: each makes the chunk damaged in one way. */
#define FUZZ_CF_BAD_CRC 0x01   /* CRC off by one bit */
#define FUZZ_CF_RAW_LEN 0x02   /* raw_len one more than the frame's */
#define FUZZ_CF_HUGE_LEN 0x04  /* payload_len 512 MiB more than the payload */
#define FUZZ_CF_NOT_ZSTD 0x08  /* the payload is the raw bytes, not a zstd frame */
#define FUZZ_CF_CUT 0x10       /* the file ends halfway through this chunk's payload */
#define FUZZ_CF_COUNT 0x20     /* the record count in the header is one too many */
#define FUZZ_CF_BAD_MAGIC 0x40 /* no "SLKC" */
#define FUZZ_CF_EXTREME_T 0x80 /* t_min/t_max near 2^64 */

/* A property the code under test broke: says which on fd 2 (stdio may be quieted) and aborts,
 * which libFuzzer reports as a crash. */
void fuzz_fail(const char *what, const char *file, int line) __attribute__((noreturn));
#define FUZZ_CHECK(c)                                                                              \
  do {                                                                                             \
    if (!(c)) fuzz_fail(#c, __FILE__, __LINE__);                                                   \
  } while (0)

/* The trace file of a fuzz input (either form above) into a malloc'ed buffer. 0, or -1 when out
 * of memory. */
int fuzz_trace_build(const uint8_t *data, size_t size, uint8_t **out, size_t *outlen);

/* A path that reads back bytes[0..len): a memory file (memfd) reached through /proc/self/fd,
 * rewritten on every call (the same path every time). NULL on failure. */
const char *fuzz_memfile(const uint8_t *bytes, size_t len);
/* The same with a second memory file (slot 1) next to the first (slot 0). */
const char *fuzz_memfile_at(int slot, const uint8_t *bytes, size_t len);

/* The trace file as another process of the same job would have it: a first header line
 * "pid=4000000001" (the first line of a key is the one read), so that commands that refuse one
 * trace given twice take the pair. A copy when it has no file header. 0, or -1 out of memory. */
int fuzz_trace_other_process(const uint8_t *file, size_t len, uint8_t **out, size_t *outlen);

/* Makes stdout and stderr of the code under test go to /dev/null: stdout by dup2 (the commands
 * print with printf/puts/fwrite), stderr by replacing the stdio stream only, so that sanitizer
 * reports (written to fd 2) still show. Idempotent. */
void fuzz_quiet(void);

#endif

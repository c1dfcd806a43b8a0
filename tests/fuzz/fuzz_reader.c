/* Fuzz target "reader": format/reader.c on any file (fuzz.h says how an input becomes one).
 *
 * Opens the trace, reads the header lines, walks every record (looking up each string id a
 * record names), reads it again decoding only the times, then into whole-trace arrays
 * (trace_data_load sorts them), and checks what the reader promises: its counters agree with
 * what it returned (the reading of the times stops where the whole reading stops), the
 * unreadable tail lies inside the file, and a string lookup never returns NULL. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "reader.h"

static void walk(const char *path, size_t file_len) {
  char err[256];
  struct trace_reader *rd = trace_reader_open(path, err, sizeof err);
  if (!rd) {
    FUZZ_CHECK(err[0]);
    return;
  }
  unsigned major, minor;
  trace_reader_version(rd, &major, &minor);
  size_t nh = trace_reader_header_count(rd);
  for (size_t i = 0; i < nh; i++) {
    const char *k, *v;
    trace_reader_header_at(rd, i, &k, &v);
    FUZZ_CHECK(k && v && *k);
    FUZZ_CHECK(trace_reader_header(rd, k) != NULL);
  }
  struct slk_record r;
  uint64_t n = 0, len = 0;
  while (trace_reader_next(rd, &r)) {
    n++;
    FUZZ_CHECK(r.kind > 0 && r.kind < SLK_KIND_MAX);
    if (r.kind == SLK_STRING) {
      const char *s = trace_reader_string(rd, r.id);
      FUZZ_CHECK(s);
      len += strlen(s);
    }
    const uint32_t ids[] = {r.name, r.callsite, r.pystack, r.id};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
      FUZZ_CHECK(trace_reader_string(rd, ids[i]) != NULL);
  }
  FUZZ_CHECK(!trace_reader_next(rd, &r)); /* stays at the end */
  const struct trace_reader_stats *st = trace_reader_stats(rd);
  FUZZ_CHECK(st->records == n);
  FUZZ_CHECK(st->file_bytes == file_len);
  FUZZ_CHECK(st->tail_offset <= file_len || st->tail == TRACE_TAIL_NONE);
  FUZZ_CHECK(st->tail_offset + st->tail_bytes <= file_len);
  FUZZ_CHECK(trace_tail_reason(st->tail) != NULL);
  (void)len;
  struct trace_reader_stats whole = *st;
  trace_reader_close(rd);

  /* the reading of the times, each chunk checked as it is decoded and kept within a small budget
   * (report_window.c's first pass): it stops where the whole reading stops, with the same
   * counters; then each chunk it delivered whole is read again by its offset (the windows'
   * reading), whole and light: the same records, the same times */
  rd = trace_reader_open(path, err, sizeof err);
  FUZZ_CHECK(rd);
  trace_reader_set_times(rd, 2);
  trace_reader_keep_chunks(rd, 4096);
  enum { CHUNKS = 64 };
  uint64_t off[CHUNKS], cnt[CHUNKS];
  size_t nc = 0;
  while (trace_reader_next(rd, &r)) {
    FUZZ_CHECK(r.kind > 0 && r.kind < SLK_KIND_MAX);
    uint64_t o = trace_reader_chunk_offset(rd);
    if ((!nc || off[nc - 1] != o) && nc < CHUNKS) off[nc] = o, cnt[nc++] = 0;
    if (off[nc - 1] == o) cnt[nc - 1]++;
  }
  st = trace_reader_stats(rd);
  FUZZ_CHECK(st->records == whole.records && st->chunks == whole.chunks);
  FUZZ_CHECK(st->tail == whole.tail && st->tail_offset == whole.tail_offset);
  trace_reader_set_times(rd, 0);
  if (nc && st->partial_chunks) nc--; /* the last one failed its checks */
  for (size_t i = nc; i-- > 0;) {     /* backwards: a kept chunk, then one read again */
    uint64_t m[2] = {0, 0}, sum[2] = {0, 0};
    for (int light = 0; light < 2; light++) {
      FUZZ_CHECK(trace_reader_seek_chunk(rd, off[i]) == 0);
      while (light ? trace_reader_next_in_chunk_light(rd, &r)
                   : trace_reader_next_in_chunk(rd, &r)) {
        FUZZ_CHECK(r.kind > 0 && r.kind < SLK_KIND_MAX);
        m[light]++;
        sum[light] = sum[light] * 31 + r.kind + r.start * 7 + r.end;
      }
    }
    FUZZ_CHECK(m[0] == cnt[i] && m[1] == cnt[i] && sum[0] == sum[1]);
  }
  trace_reader_close(rd);

  rd = trace_reader_open(path, err, sizeof err);
  FUZZ_CHECK(rd); /* opened once, opens again */
  struct trace_data td;
  memset(&td, 0, sizeof td);
  FUZZ_CHECK(trace_data_load(rd, TRACE_KINDS_ALL, &td) == 0);
  uint64_t kept = 0;
  for (int k = 0; k < SLK_KIND_MAX; k++) {
    kept += td.kind[k].n;
    for (size_t i = 1; i < td.kind[k].n; i++)
      FUZZ_CHECK(td.kind[k].v[i - 1].start <= td.kind[k].v[i].start);
  }
  FUZZ_CHECK(kept <= n);
  trace_data_free(&td);
  trace_reader_close(rd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *file;
  size_t len;
  if (fuzz_trace_build(data, size, &file, &len)) return 0;
  const char *path = fuzz_memfile(file, len);
  if (path) walk(path, len);
  free(file);
  return 0;
}

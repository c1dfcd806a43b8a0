/* Seed inputs of the trace fuzz targets from recorded traces (make fuzz-seeds).
 *
 *   seeds-tool OUTDIR TRACE.slk...
 *   seeds-tool --file INPUT OUT.slk   the trace file a fuzz input stands for (fuzz.h): how a
 *                                     synthetic finding becomes a .slk for the slack command
 *
 * For each trace, a few windows of consecutive records (in start order: a launch with its kernel,
 * the NVTX ranges around them, the threads and devices, and the strings they name) re-encoded
 * into one chunk of a synthetic input (fuzz.h): OUTDIR/commands/ gets windows of 200 records,
 * OUTDIR/reader/ windows of 40 and, for the first window of each trace, the whole file the
 * synthetic input becomes (the fuzzer then mutates chunk headers too). Seeds are then minimized
 * into tests/fuzz/corpus by `make fuzz-merge`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format.h"
#include "fuzz.h"
#include "reader.h"

#define MAX_STR 512 /* longer strings (deep call stacks) are cut: seeds stay small */

struct out {
  uint8_t *p;
  size_t n, cap;
};

static void put(struct out *o, const void *p, size_t len) {
  if (o->n + len > o->cap) {
    size_t cap = o->cap ? o->cap : 65536;
    while (cap < o->n + len)
      cap *= 2;
    o->p = realloc(o->p, cap);
    if (!o->p) {
      perror("seeds");
      exit(1);
    }
    o->cap = cap;
  }
  memcpy(o->p + o->n, p, len);
  o->n += len;
}

static void put_record(struct out *o, struct slk_delta *d, const struct slk_record *r) {
  static uint8_t buf[SLK_MAX_RECORD + 16];
  size_t n = slk_encode(d, r, buf, sizeof buf);
  if (n) put(o, buf, n);
}

static int cmp_ptr_start(const void *pa, const void *pb) {
  const struct slk_record *a = *(const struct slk_record *const *)pa,
                          *b = *(const struct slk_record *const *)pb;
  return a->start < b->start ? -1 : a->start > b->start;
}

static void write_file(const char *dir, const char *sub, const char *name, const uint8_t *p,
                       size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, sub);
  mkdir(path, 0755);
  snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
    fprintf(stderr, "seeds: cannot write %s: %s\n", path, strerror(errno));
    exit(1);
  }
}

static int timed(uint8_t k) {
  return k != SLK_STRING && k != SLK_DEVICE && k != SLK_THREAD && k != SLK_DROPS;
}

/* One synthetic input: header, NUL, one chunk of the window's records. */
static void seed(const struct trace_reader *rd, struct slk_record **tv, size_t nt, size_t from,
                 size_t len, const struct trace_data *td, struct out *o) {
  o->n = 0;
  unsigned major, minor;
  trace_reader_version(rd, &major, &minor);
  uint8_t v = (uint8_t)(((minor & 3) << 1) | (major == 1));
  put(o, &v, 1);
  for (size_t i = 0; i < trace_reader_header_count(rd); i++) {
    const char *k, *val;
    trace_reader_header_at(rd, i, &k, &val);
    put(o, k, strlen(k));
    put(o, "=", 1);
    put(o, val, strlen(val) < 200 ? strlen(val) : 200);
    put(o, "\n", 1);
  }
  put(o, "", 1);
  uint8_t flags = 0;
  put(o, &flags, 1);
  struct slk_delta *d = calloc(1, sizeof *d);
  d->v1 = major == 1;
  slk_delta_reset(d);
  /* the window, then the untimed records; strings first */
  struct slk_record **w = calloc(len + 64, sizeof *w);
  size_t nw = 0;
  for (size_t i = from; i < from + len && i < nt; i++)
    w[nw++] = tv[i];
  static const uint8_t untimed[] = {SLK_DEVICE, SLK_THREAD, SLK_DROPS};
  for (size_t u = 0; u < sizeof untimed; u++)
    for (size_t i = 0; i < td->kind[untimed[u]].n && i < 16; i++)
      w[nw++] = &td->kind[untimed[u]].v[i];
  uint32_t *ids = calloc(4 * nw + 1, sizeof *ids);
  size_t nids = 0;
  for (size_t i = 0; i < nw; i++) {
    const uint32_t refs[] = {w[i]->name, w[i]->callsite, w[i]->pystack};
    for (int k = 0; k < 3; k++) {
      if (!refs[k]) continue;
      size_t j = 0;
      while (j < nids && ids[j] != refs[k])
        j++;
      if (j == nids) ids[nids++] = refs[k];
    }
  }
  for (size_t j = 0; j < nids; j++) {
    const char *s = trace_reader_string(rd, ids[j]);
    struct slk_record r = {.kind = SLK_STRING, .id = ids[j], .str = s};
    r.str_len = (uint32_t)(strlen(s) < MAX_STR ? strlen(s) : MAX_STR);
    put_record(o, d, &r);
  }
  for (size_t i = 0; i < nw; i++)
    put_record(o, d, w[i]);
  free(ids);
  free(w);
  free(d);
}

/* --file: the input's trace file. */
static int to_file(const char *in, const char *outp) {
  FILE *f = fopen(in, "rb");
  struct out o = {0};
  uint8_t b[65536];
  size_t n;
  if (!f) {
    fprintf(stderr, "seeds: cannot read %s: %s\n", in, strerror(errno));
    return 1;
  }
  while ((n = fread(b, 1, sizeof b, f)) > 0)
    put(&o, b, n);
  fclose(f);
  uint8_t *file;
  size_t len;
  if (fuzz_trace_build(o.p, o.n, &file, &len)) return 1;
  f = fopen(outp, "wb");
  if (!f || fwrite(file, 1, len, f) != len || fclose(f)) {
    fprintf(stderr, "seeds: cannot write %s: %s\n", outp, strerror(errno));
    return 1;
  }
  free(file);
  free(o.p);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 4 && !strcmp(argv[1], "--file")) return to_file(argv[2], argv[3]);
  if (argc < 3) {
    fprintf(stderr,
            "usage: seeds-tool OUTDIR TRACE.slk...\n       seeds-tool --file INPUT OUT.slk\n");
    return 2;
  }
  const char *dir = argv[1];
  mkdir(dir, 0755);
  struct out o = {0};
  for (int a = 2; a < argc; a++) {
    char err[256];
    struct trace_reader *rd = trace_reader_open(argv[a], err, sizeof err);
    if (!rd) {
      fprintf(stderr, "seeds: %s: %s\n", argv[a], err);
      continue;
    }
    struct trace_data td;
    memset(&td, 0, sizeof td);
    if (trace_data_load(rd, TRACE_KINDS_ALL, &td)) {
      fprintf(stderr, "seeds: %s: out of memory\n", argv[a]);
      return 1;
    }
    size_t nt = 0;
    for (int k = 0; k < SLK_KIND_MAX; k++)
      if (timed((uint8_t)k)) nt += td.kind[k].n;
    struct slk_record **tv = calloc(nt + 1, sizeof *tv);
    nt = 0;
    for (int k = 0; k < SLK_KIND_MAX; k++)
      if (timed((uint8_t)k))
        for (size_t i = 0; i < td.kind[k].n; i++)
          tv[nt++] = &td.kind[k].v[i];
    qsort(tv, nt, sizeof *tv, cmp_ptr_start);
    const char *base = strrchr(argv[a], '/') ? strrchr(argv[a], '/') + 1 : argv[a];
    static const double at[] = {0.0, 0.45, 0.9};
    for (size_t w = 0; w < sizeof at / sizeof at[0]; w++) {
      char name[512];
      size_t from = (size_t)(at[w] * (double)nt);
      seed(rd, tv, nt, from, 200, &td, &o);
      snprintf(name, sizeof name, "%s-%zu", base, w);
      write_file(dir, "commands", name, o.p, o.n);
      seed(rd, tv, nt, from, 40, &td, &o);
      write_file(dir, "reader", name, o.p, o.n);
      if (w == 0) {
        uint8_t *file;
        size_t len;
        if (fuzz_trace_build(o.p, o.n, &file, &len) == 0) {
          snprintf(name, sizeof name, "%s-file", base);
          write_file(dir, "reader", name, file, len);
          free(file);
        }
      }
    }
    free(tv);
    trace_data_free(&td);
    trace_reader_close(rd);
  }
  free(o.p);
  return 0;
}

/* make bench: what each zstd level costs on real trace records. Reads a .slk (docs/FORMAT.md),
 * decompresses its chunks back into the raw record stream, then compresses that stream again
 * in chunks of each size given, at each level, and prints CPU ns per raw byte, MB/s and the
 * ratio. The writer compresses each chunk on its one thread, between two drains of the rings:
 * the ms per chunk is how long the rings go undrained. CPU only; never shipped.
 * Usage: zstd_levels TRACE.slk [chunk_kb ...]   (default 256 1024) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

static uint32_t u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: zstd_levels TRACE.slk [chunk_kb ...]\n");
    return 2;
  }
  FILE *f = fopen(argv[1], "rb");
  if (!f) return perror(argv[1]), 1;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *in = malloc((size_t)n);
  if (!in || fread(in, 1, (size_t)n, f) != (size_t)n) return 1;
  fclose(f);
  size_t off = 16 + u32(in + 12), raw_len = 0, raw_cap = 1 << 20;
  uint8_t *raw = malloc(raw_cap);
  while (off + 40 <= (size_t)n && u32(in + off) == 0x434b4c53u) {
    uint32_t packed = u32(in + off + 4), rawn = u32(in + off + 8);
    if (off + 40 + packed > (size_t)n) break;
    while (raw_len + rawn > raw_cap)
      raw = realloc(raw, raw_cap *= 2);
    size_t got = ZSTD_decompress(raw + raw_len, rawn, in + off + 40, packed);
    if (ZSTD_isError(got)) break;
    raw_len += got;
    off += 40 + packed;
  }
  printf("%s: %zu raw bytes of records\n", argv[1], raw_len);
  printf("%8s %6s %10s %9s %8s %12s\n", "chunk_kb", "level", "ns/rawB", "MB/s", "ratio",
         "ms/chunk");
  int levels[] = {1, 2, 3, 5, 7, 9, 12, 15, 19};
  int nchunks = argc > 2 ? argc - 2 : 2;
  for (int c = 0; c < nchunks; c++) {
    size_t chunk = (size_t)(argc > 2 ? atol(argv[2 + c]) : (c ? 1024 : 256)) * 1024;
    uint8_t *out = malloc(ZSTD_compressBound(chunk));
    for (size_t li = 0; li < sizeof levels / sizeof levels[0]; li++) {
      ZSTD_CCtx *z = ZSTD_createCCtx();
      ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, levels[li]);
      size_t total = 0, chunks = 0;
      double t0 = cpu_s(), t1;
      int rounds = 0;
      do { /* whole passes until at least 0.2 s of CPU */
        total = 0;
        chunks = 0;
        for (size_t p = 0; p < raw_len; p += chunk) {
          size_t len = raw_len - p < chunk ? raw_len - p : chunk;
          total += ZSTD_compress2(z, out, ZSTD_compressBound(chunk), raw + p, len);
          chunks++;
        }
        rounds++;
        t1 = cpu_s();
      } while (t1 - t0 < 0.2);
      double per = (t1 - t0) / rounds;
      printf("%8zu %6d %10.2f %9.1f %8.2f %12.2f\n", chunk / 1024, levels[li],
             per * 1e9 / (double)raw_len, (double)raw_len / per / 1e6,
             (double)raw_len / (double)total, per * 1e3 / (double)chunks);
      ZSTD_freeCCtx(z);
    }
    free(out);
  }
  return 0;
}

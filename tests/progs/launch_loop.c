/* A launch storm for `make bench-cpu`: LOOP_N (default 100000) launches of a 1 ns kernel
 * through __cudaLaunchKernel on one stream, then one stream synchronization. Writes the wall time
 * of the loop to PROG_REPORT as {"launches":N,"loop_ns":T}; stdout gets one fixed line. Through
 * the stub this measures host-side cost only (the stub's, and slack's when traced): never a GPU
 * number.
 */
#include <time.h>

#include "progs.h"
#include "stub_api.h"

static unsigned long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(void) {
  long n = 100000;
  const char *e = getenv("LOOP_N");
  if (e && atol(e) > 0) n = atol(e);
  cudaKernel_t k = stubRegisterKernel(NULL, "empty_kernel", 1);
  if (!k) DIE("no stub device");
  cudaStream_t s;
  if (cudaStreamCreate(&s)) DIE("cudaStreamCreate failed");
  dim3 g = {1, 1, 1}, b = {32, 1, 1};
  /* warm up: the first launch starts slack and CUPTI */
  if (__cudaLaunchKernel(k, g, b, NULL, 0, s) || cudaStreamSynchronize(s)) DIE("warm-up failed");
  unsigned long long t0 = now_ns();
  for (long i = 0; i < n; i++)
    if (__cudaLaunchKernel(k, g, b, NULL, 0, s)) DIE("launch %ld failed", i);
  unsigned long long t1 = now_ns();
  if (cudaStreamSynchronize(s)) DIE("cudaStreamSynchronize failed");
  const char *p = getenv("PROG_REPORT");
  FILE *f = p && *p ? fopen(p, "w") : NULL;
  if (f) {
    fprintf(f, "{\"launches\":%ld,\"loop_ns\":%llu}\n", n, t1 - t0);
    fclose(f);
  }
  printf("launch_loop: %ld launches\n", n);
  return 0;
}

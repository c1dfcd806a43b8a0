/* A paced launch loop for the writer's flush (docs/PERFORMANCE.md, "CUPTI's buffers"):
 * one thread launches a kernel after SPIN_US (default 20) of host work, for SECS (default 5)
 * seconds, and times each iteration (the work and the launch). stdout: per 100 ms of the run that
 * held an iteration over 1 ms, its longest ("bucket 1.0 s: 2.73 ms"), then the count. Under slack
 * a flush once a second (SLACK_FLUSH_MS) shows as one such bucket a second where the program's
 * thread pays for it. Not part of the e2e suite (timings on a shared 2-core machine): run by hand,
 *   SECS=5 LD_PRELOAD=build/libslack.so SLACK_OUTPUT=/tmp/p build/progs/paced */
#include <time.h>

#include "progs.h"
#include "stub_api.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(void) {
  double secs = getenv("SECS") ? atof(getenv("SECS")) : 5;
  double spin = (getenv("SPIN_US") ? atof(getenv("SPIN_US")) : 20) * 1e-6;
  if (secs <= 0 || secs > 100) secs = 5;
  cudaKernel_t k = stubRegisterKernel(NULL, "paced_kernel", 1);
  if (!k) DIE("no stub device");
  cudaStream_t s;
  if (cudaStreamCreate(&s)) DIE("cudaStreamCreate failed");
  dim3 g = {1, 1, 1}, b = {32, 1, 1};
  static double worst[1000];
  double t0 = now(), last = t0;
  long n = 0;
  while (now() - t0 < secs) {
    double a = now();
    while (now() - a < spin)
      ;
    if (__cudaLaunchKernel(k, g, b, NULL, 0, s)) DIE("launch failed");
    double t = now();
    int bk = (int)((t - t0) * 10);
    if (bk < 1000 && t - last > worst[bk]) worst[bk] = t - last;
    last = t;
    n++;
  }
  if (cudaStreamSynchronize(s)) DIE("cudaStreamSynchronize failed");
  int over = 0;
  for (int i = 0; i < 1000 && i < (int)(secs * 10); i++)
    if (worst[i] > 1e-3) {
      printf("bucket %.1f s: %.2f ms\n", i / 10.0, worst[i] * 1e3);
      over++;
    }
  printf("%ld iterations, %d buckets with an iteration over 1 ms\n", n, over);
  return 0;
}

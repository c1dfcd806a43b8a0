/* A process killed while tracing: launches, copies and memsets on one stream, a stream
 * synchronization, then a pause of KILLED_PAUSE_MS (default 1500) and SIGKILL on itself: no exit
 * handler runs. Everything done before the pause should be in the trace (written within
 * SLACK_FLUSH_MS), GPU records included. What it did goes to PROG_REPORT (progs.h), closed
 * before the pause; stdout gets one fixed line, flushed before the pause.
 */
#include <signal.h>
#include <time.h>

#include "progs.h"
#include "stub_api.h"

#define CHECK(call)                                                                                \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess)                                                                         \
      DIE("%s:%d: %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(e_));                     \
  } while (0)

#define LAUNCHES 20
#define BYTES (16u << 10)

int main(void) {
  report_open();
  cudaKernel_t k = stubRegisterKernel(NULL, "before_kill", 20000);
  if (!k) DIE("no stub device");
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  void *pinned, *dev;
  report_call("cudaMallocHost", NULL, BYTES); /* hooked since session 38 */
  CHECK(cudaMallocHost(&pinned, BYTES));
  report_call("cudaMalloc", NULL, BYTES); /* hooked since session 13 */
  CHECK(cudaMalloc(&dev, BYTES));
  void *pooled; /* CUDA's stream-ordered allocator, hooked since session 49 (format 2.11) */
  report_call("cudaMallocAsync", s, BYTES);
  CHECK(cudaMallocAsync(&pooled, BYTES, s));
  report_call("cudaMemPoolTrimTo", NULL, 0);
  CHECK(cudaMemPoolTrimTo(NULL, 0));
  dim3 g = {2, 1, 1}, b = {64, 1, 1};
  for (int i = 0; i < LAUNCHES; i++) {
    unsigned seq = report_call("__cudaLaunchKernel", s, 0);
    CHECK(__cudaLaunchKernel(k, g, b, NULL, 0, s));
    report_kernel(seq, "before_kill");
    if (i % 5 == 0) {
      seq = report_call("cudaMemcpyAsync", s, BYTES);
      CHECK(cudaMemcpyAsync(dev, pinned, BYTES, cudaMemcpyHostToDevice, s));
      report_memcpy(seq, "HTOD", BYTES);
      seq = report_call("cudaMemsetAsync", s, BYTES);
      CHECK(cudaMemsetAsync(dev, 0, BYTES, s));
      report_memset(seq, BYTES);
    }
  }
  unsigned seq = report_call("cudaStreamSynchronize", s, 0);
  CHECK(cudaStreamSynchronize(s));
  report_sync(seq, "STREAM_SYNCHRONIZE");
  report_close();
  printf("killed: %d launches, then SIGKILL\n", LAUNCHES);
  fflush(stdout);
  long ms = 1500;
  const char *e = getenv("KILLED_PAUSE_MS");
  if (e && atol(e) >= 0) ms = atol(e);
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
  raise(SIGKILL);
  return 0;
}

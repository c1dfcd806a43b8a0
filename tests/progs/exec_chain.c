/* exec() under tracing: does some CUDA work (launches, a copy, a stream synchronization), then
 * replaces itself with build/progs/workload (WORKLOAD_ITERS=2), whose report goes to
 * PROG_REPORT.exec. Each program image must get its own complete trace file. What this image did
 * goes to PROG_REPORT (progs.h); stdout gets one fixed line before the exec.
 */
#include <libgen.h>
#include <limits.h>

#include "progs.h"
#include "stub_api.h"

#define CHECK(call)                                                                                \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess)                                                                         \
      DIE("%s:%d: %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(e_));                     \
  } while (0)

#define LAUNCHES 5
#define BYTES (32u << 10)

int main(void) {
  report_open();
  cudaKernel_t k = stubRegisterKernel(NULL, "before_exec", 50000);
  if (!k) DIE("no stub device");
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  void *pinned, *dev;
  report_call("cudaMallocHost", NULL, BYTES); /* hooked since session 38 */
  CHECK(cudaMallocHost(&pinned, BYTES));
  report_call("cudaMalloc", NULL, BYTES); /* hooked since session 13 */
  CHECK(cudaMalloc(&dev, BYTES));
  memset(pinned, 5, BYTES);
  dim3 g = {4, 1, 1}, b = {128, 1, 1};
  for (int i = 0; i < LAUNCHES; i++) {
    unsigned seq = report_call("__cudaLaunchKernel", s, 0);
    CHECK(__cudaLaunchKernel(k, g, b, NULL, 0, s));
    report_kernel(seq, "before_exec");
  }
  unsigned seq = report_call("cudaMemcpyAsync", s, BYTES);
  CHECK(cudaMemcpyAsync(dev, pinned, BYTES, cudaMemcpyHostToDevice, s));
  report_memcpy(seq, "HTOD", BYTES);
  seq = report_call("cudaStreamSynchronize", s, 0);
  CHECK(cudaStreamSynchronize(s));
  report_sync(seq, "STREAM_SYNCHRONIZE");
  report_close();

  char self[PATH_MAX], next[PATH_MAX + 16];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) DIE("readlink /proc/self/exe failed");
  self[n] = 0;
  snprintf(next, sizeof next, "%s/workload", dirname(self));
  const char *rep = getenv("PROG_REPORT");
  if (rep && *rep) {
    char r2[PATH_MAX];
    snprintf(r2, sizeof r2, "%s.exec", rep);
    setenv("PROG_REPORT", r2, 1);
  }
  setenv("WORKLOAD_ITERS", "2", 1);
  printf("exec_chain: %d launches, exec %s\n", LAUNCHES, "workload");
  fflush(stdout);
  char *const argv[] = {next, NULL};
  execv(next, argv);
  DIE("execv %s failed", next);
}

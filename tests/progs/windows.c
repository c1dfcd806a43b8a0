/* Phases of GPU work for the production-window tests (tests/e2e/windows.py). WIN_PHASES phases
 * (default 6), each WIN_LAUNCHES launches (default 50) of a 1 us kernel on a stream, then a
 * synchronization of that stream, then a pause of WIN_PAUSE_MS (default 50).
 *
 * WIN_MODE says what marks the odd phases (1, 3, ...): "nvtx" a push/pop range "capture" around
 * the phase (the even ones get a range "other"), "profiler" cudaProfilerStart before the phase and
 * cudaProfilerStop after it, anything else nothing.
 * WIN_TOUCH=PATH (a trigger file) or WIN_RAISE=N (a signal number): before phase WIN_AT (default
 * 1) the program touches the file or raises the signal (only where the test set it: untraced,
 * the signal's default action would end the program), then waits WIN_WAIT_MS (default 600) for
 * slack's writer to see it.
 *
 * WIN_LONG_NS=N: each odd phase ends with one more kernel, "long_kernel" of N ns, launched after
 * the synchronization and not waited for: it runs past the end of the phase (and of its window).
 *
 * stdout: "windows: P phases, L launches each" (the same traced and untraced).
 */
#include <cuda_profiler_api.h>
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>

#include "progs.h"
#include "stub_api.h"

#define CHECK(call)                                                                                \
  do {                                                                                             \
    if ((call) != cudaSuccess) DIE("%s failed", #call);                                            \
  } while (0)

static long env_long(const char *name, long def) {
  const char *e = getenv(name);
  return e && *e ? atol(e) : def;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0)
    ;
}

int main(void) {
  long phases = env_long("WIN_PHASES", 6), launches = env_long("WIN_LAUNCHES", 50);
  long pause_ms = env_long("WIN_PAUSE_MS", 50), at = env_long("WIN_AT", 1);
  long wait_ms = env_long("WIN_WAIT_MS", 600), raise_sig = env_long("WIN_RAISE", 0);
  long long_ns = env_long("WIN_LONG_NS", 0);
  const char *mode = getenv("WIN_MODE"), *touch = getenv("WIN_TOUCH");
  int nvtx = mode && !strcmp(mode, "nvtx"), prof = mode && !strcmp(mode, "profiler");

  cudaKernel_t k = stubRegisterKernel(NULL, "window_kernel", 1000);
  if (!k) DIE("no stub device");
  cudaKernel_t lk = long_ns > 0 ? stubRegisterKernel(NULL, "long_kernel", (uint64_t)long_ns) : NULL;
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  dim3 g = {1, 1, 1}, b = {32, 1, 1};
  for (long p = 0; p < phases; p++) {
    if (p == at && touch && *touch) {
      int fd = open(touch, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
      if (fd < 0) DIE("cannot create %s", touch);
      futimens(fd, NULL);
      close(fd);
      sleep_ms(wait_ms);
    }
    if (p == at && raise_sig > 0) {
      raise((int)raise_sig);
      sleep_ms(wait_ms);
    }
    if (nvtx) nvtxRangePushA(p % 2 ? "capture" : "other");
    if (prof && p % 2) CHECK(cudaProfilerStart());
    for (long i = 0; i < launches; i++)
      CHECK(__cudaLaunchKernel(k, g, b, NULL, 0, s));
    CHECK(cudaStreamSynchronize(s));
    if (lk && p % 2) CHECK(__cudaLaunchKernel(lk, g, b, NULL, 0, s));
    if (prof && p % 2) CHECK(cudaProfilerStop());
    if (nvtx) nvtxRangePop();
    sleep_ms(pause_ms);
  }
  CHECK(cudaStreamDestroy(s));
  printf("windows: %ld phases, %ld launches each\n", phases, launches);
  return 0;
}

/* A loop that waits for the GPU by asking (tests/test_poll.sh): each of POLL_STEPS steps
 * (default 60) launches POLL_KERNELS kernels (default 4) of POLL_KERNEL_US each (default 2000)
 * on a stream of its own and records an event after them, then, by mode (argv[1]):
 *
 *   sleep  asks cudaEventQuery until the event is done, sleeping POLL_SLEEP_US (default 100)
 *          between questions, then works on the host POLL_HOST_US (default 1500) before the next
 *          step: the GPU idles behind the wait and the host's work (serialization);
 *   spin   the same with no sleep between questions (a million a second: slack must fold them);
 *   stream the same as sleep with cudaStreamQuery on the stream;
 *   ahead  the same questions about the step before's event (two events in turn): the host waits
 *          as long, but step k's kernels are queued behind the event it asks about, so the GPU
 *          never idles (no stall: a thread that polled while the GPU had work is no wait).
 *
 * stdout gets one line: "poll: MODE, S steps, Q questions, N not ready".
 */
#include <time.h>
#include <unistd.h>

#include "progs.h"
#include "stub_api.h"

static void busy_us(long us) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do {
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static long env_long(const char *name, long dflt) {
  const char *v = getenv(name);
  return v && *v ? atol(v) : dflt;
}

static void step_kernel(void) {}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "sleep";
  long steps = env_long("POLL_STEPS", 60), kernels = env_long("POLL_KERNELS", 4);
  long kernel_us = env_long("POLL_KERNEL_US", 2000), sleep_us = env_long("POLL_SLEEP_US", 100);
  long host_us = env_long("POLL_HOST_US", 1500);
  int spin = !strcmp(mode, "spin"), by_stream = !strcmp(mode, "stream");
  int ahead = !strcmp(mode, "ahead");
  if (!spin && !by_stream && !ahead && strcmp(mode, "sleep"))
    DIE("mode: sleep, spin, stream or ahead");
  cudaKernel_t k = stubRegisterKernel((const void *)step_kernel, "poll_step_kernel",
                                      (unsigned long long)kernel_us * 1000ull);
  if (!k) DIE("no stub device");
  cudaStream_t s;
  cudaEvent_t evs[2];
  if (cudaStreamCreate(&s) || cudaEventCreate(&evs[0]) || cudaEventCreate(&evs[1]))
    DIE("stream or event creation failed");
  dim3 g = {1, 1, 1}, b = {32, 1, 1};
  long questions = 0, not_ready = 0;
  for (long i = 0; i < steps; i++) {
    for (long j = 0; j < kernels; j++)
      if (__cudaLaunchKernel(k, g, b, NULL, 0, s)) DIE("launch failed");
    if (cudaEventRecord(evs[i & 1], s)) DIE("cudaEventRecord failed");
    /* ahead: the step before's event (none before the first step) */
    cudaEvent_t ev = ahead ? evs[(i + 1) & 1] : evs[i & 1];
    for (; !ahead || i;) {
      cudaError_t r = by_stream ? cudaStreamQuery(s) : cudaEventQuery(ev);
      questions++;
      if (r == cudaSuccess) break;
      if (r != cudaErrorNotReady) DIE("query failed: %d", (int)r);
      not_ready++;
      if (!spin) usleep((useconds_t)sleep_us);
    }
    busy_us(host_us);
  }
  if (cudaStreamSynchronize(s)) DIE("final sync failed");
  printf("poll: %s, %ld steps, %ld questions, %ld not ready\n", mode, steps, questions, not_ready);
  return 0;
}

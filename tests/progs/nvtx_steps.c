/* NVTX ranges around a training-like loop, for the NVTX test of tests/e2e/e2e.py. The program
 * uses NVTX as PyTorch does: the header-only nvtx3 compiled in, which loads the tool named by
 * NVTX_INJECTION64_PATH at the first NVTX call.
 *
 * NVTX_STEPS (default 8) steps, each a push/pop range "train_step" holding a nested "forward"
 * (three kernel launches) and a start/end range "data" (host work, 2 ms), then a stream
 * synchronization. Once: a wide-character range "wide", a domain range with a registered string
 * "registered_range", and a start/end range "async_range" started on another thread and ended on
 * the main one. Pushes and pops also happen before the first CUDA call ("before_cuda"): tracing
 * has not started then, so they are not recorded. Last, 600 start/end ranges "open" are all
 * started, then all ended: libslack keeps 512 open ranges, so the last 512 are recorded.
 *
 * stdout: what NVTX returned (the values must be the same traced and untraced) and the counts.
 */
#include <nvtx3/nvToolsExt.h>
#include <time.h>
#include <wchar.h>

#include "progs.h"
#include "stub_api.h"

#define CHECK(call)                                                                                \
  do {                                                                                             \
    if ((call) != cudaSuccess) DIE("%s failed", #call);                                            \
  } while (0)

static nvtxRangeId_t async_id;

static void *starter(void *arg) {
  (void)arg;
  async_id = nvtxRangeStartA("async_range");
  return NULL;
}

static void sleep_ms(long ms) {
  struct timespec ts = {0, ms * 1000000L};
  nanosleep(&ts, NULL);
}

int main(void) {
  int steps = 8;
  const char *e = getenv("NVTX_STEPS");
  if (e && atoi(e) > 0) steps = atoi(e);
  int r_push0 = nvtxRangePushA("before_cuda"); /* NVTX starts here; tracing has not */
  int r_pop0 = nvtxRangePop();

  cudaKernel_t k = stubRegisterKernel(NULL, "step_kernel", 300000);
  if (!k) DIE("no stub device");
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  dim3 g = {1, 1, 1}, b = {32, 1, 1};
  int r_push = 0, r_pop = 0, nested_push = 0;
  unsigned long long launches = 0;
  for (int i = 0; i < steps; i++) {
    r_push = nvtxRangePushA("train_step");
    nested_push = nvtxRangePushA("forward");
    for (int j = 0; j < 3; j++, launches++)
      CHECK(__cudaLaunchKernel(k, g, b, NULL, 0, s));
    nvtxRangePop();
    nvtxRangeId_t d = nvtxRangeStartA("data");
    sleep_ms(2);
    nvtxRangeEnd(d);
    CHECK(cudaStreamSynchronize(s));
    r_pop = nvtxRangePop();
  }
  nvtxRangePushW(L"wide");
  nvtxRangePop();
  nvtxDomainHandle_t dom = nvtxDomainCreateA("slack_test");
  nvtxStringHandle_t reg = nvtxDomainRegisterStringA(dom, "registered_range");
  nvtxEventAttributes_t a;
  memset(&a, 0, sizeof a);
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = reg;
  int r_dpush = nvtxDomainRangePushEx(dom, &a);
  int r_dpop = nvtxDomainRangePop(dom);
  nvtxDomainDestroy(dom);
  pthread_t th;
  if (pthread_create(&th, NULL, starter, NULL)) DIE("pthread_create failed");
  pthread_join(th, NULL);
  nvtxRangeEnd(async_id);
  int r_extra_pop = nvtxRangePop(); /* a pop without a push */
  static nvtxRangeId_t open[600];
  for (int i = 0; i < 600; i++)
    open[i] = nvtxRangeStartA("open");
  for (int i = 0; i < 600; i++)
    nvtxRangeEnd(open[i]);
  CHECK(cudaStreamDestroy(s));
  printf("nvtx returns: push %d pop %d nested %d before %d/%d domain %d/%d extra pop %d\n", r_push,
         r_pop, nested_push, r_push0, r_pop0, r_dpush, r_dpop, r_extra_pop);
  printf("nvtx_steps: %d steps, %llu launches\n", steps, launches);
  return 0;
}

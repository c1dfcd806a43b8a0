/* A second CUPTI client in the program, as torch.profiler's Kineto is (tests/e2e/e2e.py
 * e2e_second_cupti_client): SECOND_EARLY launches and a sync, then the program registers its own
 * activity buffer callbacks (linked against libcupti, as Kineto is), enables kernel records,
 * makes SECOND_LATE more launches, flushes and counts the kernel records its callbacks got.
 * SECOND_FIRST=1: it registers and enables before its first CUDA call instead (every launch
 * after it). SECOND_PAUSE_MS=n: it sleeps that long before it registers (libslack's writer may
 * detach CUPTI meanwhile, between production windows). stdout: the counts, which must be the same
 * with libslack as without it.
 */
#include <cupti.h>

#include "progs.h"
#include "stub_api.h"

static unsigned long long got; /* kernel records the program's own client received */

static void CUPTIAPI requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  *size = 64 << 10;
  *buffer = aligned_alloc(8, *size);
  *max_records = 0;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                               size_t valid) {
  (void)ctx;
  (void)stream;
  (void)size;
  CUpti_Activity *r = NULL;
  while (valid && cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS)
    if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
      __atomic_add_fetch(&got, 1, __ATOMIC_RELAXED);
  free(buffer);
}

static void launch(cudaKernel_t k, long n) {
  dim3 g = {1, 1, 1}, b = {32, 1, 1};
  for (long i = 0; i < n; i++)
    if (__cudaLaunchKernel(k, g, b, NULL, 0, 0)) DIE("launch %ld failed", i);
  if (cudaStreamSynchronize(0)) DIE("cudaStreamSynchronize failed");
}

int main(void) {
  const char *e;
  long early = (e = getenv("SECOND_EARLY")) && atol(e) > 0 ? atol(e) : 40;
  long late = (e = getenv("SECOND_LATE")) && atol(e) > 0 ? atol(e) : 60;
  int first = (e = getenv("SECOND_FIRST")) && atoi(e) == 1;
  if (first) {
    if (cuptiActivityRegisterCallbacks(requested, completed) != CUPTI_SUCCESS)
      DIE("cuptiActivityRegisterCallbacks failed");
    if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS)
      DIE("cuptiActivityEnable failed");
  }
  cudaKernel_t k = stubRegisterKernel(NULL, "second_client_kernel", 1);
  if (!k) DIE("no stub device");
  launch(k, early);
  long pause_ms = (e = getenv("SECOND_PAUSE_MS")) && atol(e) > 0 ? atol(e) : 0;
  struct timespec ts = {pause_ms / 1000, (pause_ms % 1000) * 1000000L};
  while (pause_ms && nanosleep(&ts, &ts) != 0)
    ;
  if (!first) {
    if (cuptiActivityRegisterCallbacks(requested, completed) != CUPTI_SUCCESS)
      DIE("cuptiActivityRegisterCallbacks failed");
    if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS)
      DIE("cuptiActivityEnable failed");
  } else {
    late += early;
  }
  launch(k, first ? late - early : late);
  if (cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != CUPTI_SUCCESS)
    DIE("cuptiActivityFlushAll failed");
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  printf("second client: %llu kernel records of %ld launches after it registered\n",
         __atomic_load_n(&got, __ATOMIC_RELAXED), late);
  return 0;
}

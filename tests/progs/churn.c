/* Continuous CUDA work for the crash tests (tests/e2e/robust.py): CHURN_THREADS threads (default
 * 2), each on its own stream, loop for CHURN_MS milliseconds (default 600): 8 launches of a 2 us
 * kernel, an asynchronous pinned host-to-device copy, a memset and a stream synchronization, so
 * the trace grows steadily and chunks are cut all along.
 *
 * Progress goes to the file named by CHURN_COUNTER (a shared mapping of 4 u64, updated with
 * atomics; the test reads it while the program runs): [0] hooked calls started (counted before
 * each call: the trace can never hold more), [1] launches started, [2] loop iterations done,
 * [3] 1 once the threads are joined.
 *
 * The end, CHURN_END: "exit" (default: return from main), "_exit" (no atexit handler, no
 * destructor), "abort" (SIGABRT), "kill" (SIGKILL on itself). stdout gets one fixed line, flushed
 * before the end. Every CUDA call is checked (exit status 1 on failure).
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>

#include "progs.h"
#include "stub_api.h"

#define CHECK(call)                                                                                \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess)                                                                         \
      DIE("%s:%d: %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(e_));                     \
  } while (0)

#define LAUNCHES_PER_ITER 8
#define BYTES (4u << 10)

static uint64_t *counter; /* [4], shared with the test; a private array when not asked for */
static uint64_t private_counter[4];
static cudaKernel_t kern;
static unsigned long long run_ns = 600ull * 1000000ull;

static unsigned long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void started(int launch) {
  __atomic_add_fetch(&counter[0], 1, __ATOMIC_SEQ_CST);
  if (launch) __atomic_add_fetch(&counter[1], 1, __ATOMIC_SEQ_CST);
}

static void *worker(void *arg) {
  (void)arg;
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  void *pinned, *dev;
  started(0); /* cudaMallocHost and cudaFreeHost are hooked since session 38 */
  CHECK(cudaMallocHost(&pinned, BYTES));
  started(0); /* cudaMalloc and cudaFree are hooked since session 13 */
  CHECK(cudaMalloc(&dev, BYTES));
  memset(pinned, 3, BYTES);
  dim3 g = {4, 1, 1}, b = {128, 1, 1};
  unsigned long long end = now_ns() + run_ns;
  while (now_ns() < end) {
    for (int i = 0; i < LAUNCHES_PER_ITER; i++) {
      started(1);
      CHECK(__cudaLaunchKernel(kern, g, b, NULL, 0, s));
    }
    started(0);
    CHECK(cudaMemcpyAsync(dev, pinned, BYTES, cudaMemcpyHostToDevice, s));
    started(0);
    CHECK(cudaMemsetAsync(dev, 0, BYTES, s));
    started(0);
    CHECK(cudaStreamSynchronize(s));
    __atomic_add_fetch(&counter[2], 1, __ATOMIC_SEQ_CST);
  }
  CHECK(cudaStreamDestroy(s));
  started(0);
  CHECK(cudaFree(dev));
  started(0);
  CHECK(cudaFreeHost(pinned));
  return NULL;
}

int main(void) {
  int threads = 2;
  const char *e = getenv("CHURN_THREADS");
  if (e && atoi(e) > 0 && atoi(e) <= 64) threads = atoi(e);
  if ((e = getenv("CHURN_MS")) && atol(e) >= 0) run_ns = (unsigned long long)atol(e) * 1000000ull;
  const char *how = getenv("CHURN_END");
  if (!how || !*how) how = "exit";
  counter = private_counter;
  const char *cpath = getenv("CHURN_COUNTER");
  if (cpath && *cpath) {
    int fd = open(cpath, O_RDWR | O_CREAT, 0644);
    if (fd < 0 || ftruncate(fd, 4096)) DIE("cannot create %s", cpath);
    void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) DIE("cannot map %s", cpath);
    close(fd);
    counter = m;
  }
  kern = stubRegisterKernel(NULL, "churn_kernel", 2000);
  if (!kern) DIE("no stub device");
  pthread_t th[64];
  for (int t = 0; t < threads; t++)
    if (pthread_create(&th[t], NULL, worker, NULL)) DIE("pthread_create failed");
  for (int t = 0; t < threads; t++)
    pthread_join(th[t], NULL);
  __atomic_store_n(&counter[3], 1, __ATOMIC_SEQ_CST);
  printf("churn: %d threads, end by %s\n", threads, how);
  fflush(stdout);
  if (!strcmp(how, "_exit")) _exit(0);
  if (!strcmp(how, "abort")) abort();
  if (!strcmp(how, "kill")) raise(SIGKILL);
  return 0;
}

/* A launch storm for the exact-accounting test (tests/e2e/robust.py): STORM_THREADS threads
 * (default 16), released together by a barrier, each make STORM_LAUNCHES launches (default
 * 100000) of a 1 ns kernel through __cudaLaunchKernel on their own stream, then one stream
 * synchronization. STORM_COLD=1: no CUDA call before the threads start (cudart initializes and
 * slack starts under 16 threads at once); otherwise main registers the kernel first.
 *
 * stdout gets the calls made, counted from their return values (a failing call ends the program
 * with exit status 1):
 *   storm: T threads, L launches, S stream synchronizations
 * Only __cudaLaunchKernel and cudaStreamSynchronize of these calls are hooked by slack
 * (cudaStreamCreate/Destroy are not), so L + S is what slack must account for: recorded + dropped.
 *
 * STORM_EARLY=N (with STORM_PAUSE_MS=P): before the threads start, main makes N launches and one
 * synchronization on the legacy stream, then sleeps P ms (the SLACK_DELAY_MS test: those calls
 * come before tracing starts). They are counted apart: "early: N launches, 1 synchronization".
 */
#include "progs.h"
#include "stub_api.h"

static long launches = 100000;
static int cold;
static cudaKernel_t kern;
static pthread_barrier_t barrier;
static unsigned long long made_launches, made_syncs;

static void *worker(void *arg) {
  (void)arg;
  pthread_barrier_wait(&barrier);
  if (cold) {
    /* every thread asks: registration of the same name gives each its own handle, all fine */
    cudaKernel_t k = stubRegisterKernel(NULL, "storm_kernel", 1);
    if (!k) DIE("no stub device");
    __atomic_store_n(&kern, k, __ATOMIC_RELEASE);
  }
  cudaKernel_t k = __atomic_load_n(&kern, __ATOMIC_ACQUIRE);
  cudaStream_t s;
  if (cudaStreamCreate(&s)) DIE("cudaStreamCreate failed");
  dim3 g = {1, 1, 1}, b = {32, 1, 1};
  unsigned long long n = 0;
  for (long i = 0; i < launches; i++) {
    if (__cudaLaunchKernel(k, g, b, NULL, 0, s)) DIE("launch %ld failed", i);
    n++;
  }
  __atomic_add_fetch(&made_launches, n, __ATOMIC_RELAXED);
  if (cudaStreamSynchronize(s)) DIE("cudaStreamSynchronize failed");
  __atomic_add_fetch(&made_syncs, 1, __ATOMIC_RELAXED);
  if (cudaStreamDestroy(s)) DIE("cudaStreamDestroy failed");
  return NULL;
}

int main(void) {
  int threads = 16;
  const char *e = getenv("STORM_THREADS");
  if (e && atoi(e) > 0 && atoi(e) <= 256) threads = atoi(e);
  if ((e = getenv("STORM_LAUNCHES")) && atol(e) > 0) launches = atol(e);
  cold = (e = getenv("STORM_COLD")) && atoi(e) == 1;
  if (!cold && !(kern = stubRegisterKernel(NULL, "storm_kernel", 1))) DIE("no stub device");
  long early = (e = getenv("STORM_EARLY")) ? atol(e) : 0;
  if (early > 0) {
    if (!kern) DIE("STORM_EARLY needs the kernel registered (not STORM_COLD)");
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    for (long i = 0; i < early; i++)
      if (__cudaLaunchKernel(kern, g, b, NULL, 0, 0)) DIE("early launch %ld failed", i);
    if (cudaStreamSynchronize(0)) DIE("cudaStreamSynchronize failed");
    long ms = (e = getenv("STORM_PAUSE_MS")) ? atol(e) : 0;
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    printf("early: %ld launches, 1 synchronization\n", early);
  }
  pthread_barrier_init(&barrier, NULL, (unsigned)threads);
  pthread_t th[256];
  for (int t = 0; t < threads; t++)
    if (pthread_create(&th[t], NULL, worker, NULL)) DIE("pthread_create failed");
  for (int t = 0; t < threads; t++)
    pthread_join(th[t], NULL);
  printf("storm: %d threads, %llu launches, %llu stream synchronizations\n", threads, made_launches,
         made_syncs);
  return 0;
}

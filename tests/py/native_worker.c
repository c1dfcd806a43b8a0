/* A thread without Python in a Python process, for tests/test_callsites.sh: as autograd's worker
 * threads launch a model's backward kernels, it makes hooked CUDA calls from native code.
 * native_worker(call, n) starts a pthread that makes n calls of call (a cudaDeviceSynchronize
 * that the test hands over through ctypes: slack's hook), each followed by 5 ms asleep and 5 ms
 * of busy work, and waits for it. 0, or -1 when the thread could not start. */
#include <pthread.h>
#include <stdint.h>
#include <time.h>

struct job {
  int (*call)(void);
  int n;
};

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *work(void *arg) {
  const struct job *j = arg;
  volatile uint64_t spin = 0;
  for (int i = 0; i < j->n; i++) {
    j->call();
    struct timespec nap = {0, 5000000};
    nanosleep(&nap, NULL);
    for (uint64_t end = now_ns() + 5000000; now_ns() < end;)
      spin++;
  }
  return NULL;
}

int native_worker(int (*call)(void), int n) {
  struct job j = {call, n};
  pthread_t t;
  if (pthread_create(&t, NULL, work, &j)) return -1;
  pthread_join(t, NULL);
  return 0;
}

/* runtime/clock.c: slack_now against clock_gettime(CLOCK_MONOTONIC), on several threads, with
 * pauses that outlast an anchor (the TSC path renews it) and a SLACK_TSC=0 run (the exact path).
 * Every reading must lie between the clock_gettime calls around it, within TOL_NS, and never go
 * back on its thread by more than TOL_NS. Prints the largest error seen. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "config.h"
#include "hook.h"

#define TOL_NS 500
#define THREADS 4
#define RUN_NS 600000000ull

struct result {
  int64_t worst, back;
  uint64_t reads;
};

static void *run(void *arg) {
  struct result *r = arg;
  uint64_t end = slack_clock_gettime_ns() + RUN_NS, prev = 0, x = (uint64_t)(uintptr_t)arg;
  while (slack_clock_gettime_ns() < end) {
    for (int i = 0; i < 2000; i++) {
      uint64_t a = slack_clock_gettime_ns();
      uint64_t s = slack_now();
      uint64_t b = slack_clock_gettime_ns();
      int64_t e = (int64_t)a - (int64_t)s;
      if ((int64_t)s - (int64_t)b > e) e = (int64_t)s - (int64_t)b;
      if (e > r->worst) r->worst = e;
      if (prev && (int64_t)prev - (int64_t)s > r->back) r->back = (int64_t)prev - (int64_t)s;
      prev = s;
      r->reads++;
    }
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    struct timespec ts = {0, (long)((x >> 33) % 3000000)}; /* 0-3 ms: anchors go stale */
    nanosleep(&ts, NULL);
  }
  return NULL;
}

static int check(const char *what) {
  pthread_t t[THREADS];
  struct result r[THREADS] = {{0}};
  for (int i = 0; i < THREADS; i++)
    if (pthread_create(&t[i], NULL, run, &r[i])) return 1;
  int64_t worst = 0, back = 0;
  uint64_t reads = 0;
  for (int i = 0; i < THREADS; i++) {
    pthread_join(t[i], NULL);
    if (r[i].worst > worst) worst = r[i].worst;
    if (r[i].back > back) back = r[i].back;
    reads += r[i].reads;
  }
  printf("%s: %llu reads, worst error %lld ns outside the clock_gettime pair, worst step back "
         "%lld ns\n",
         what, (unsigned long long)reads, (long long)worst, (long long)back);
  return worst > TOL_NS || back > TOL_NS;
}

int main(void) {
  config_read();
  slack_cfg.tsc = 0;
  slack_clock_init();
  int fail = check("SLACK_TSC=0 (clock_gettime)");
  if (slack_clock_uses_tsc()) fail = 1, puts("FAIL: the TSC is used with SLACK_TSC=0");
  slack_cfg.tsc = 1;
  slack_clock_init();
  fail |= check("SLACK_TSC=1");
  printf("TSC %s\n",
         slack_clock_uses_tsc() ? "used" : "not used (the kernel's clocksource is not tsc)");
  return fail;
}

/* The trace clock (hook.h slack_now): CLOCK_MONOTONIC in ns, read cheaply.
 *
 * A recorded call reads the clock twice, and clock_gettime(CLOCK_MONOTONIC) through the vDSO
 * orders its TSC read (lfence/rdtscp): on the bench machine those two reads were 30 of the hot
 * path's 46 ns (docs/PERFORMANCE.md). When the kernel itself keeps time on the TSC (its current
 * clocksource is "tsc", which it picks only when the TSC is invariant and synchronized across
 * CPUs), slack_now reads the TSC unordered and converts it with
 *   - a per-thread anchor: an exact clock_gettime and the TSC at that moment, renewed once the
 *     anchor is SPAN_NS old (and whenever the TSC reads below it: a CPU whose TSC lags);
 *   - a rate (ns per tick) measured against CLOCK_MONOTONIC from the first anchor on, so that
 *     it sharpens as the run goes on, and follows NTP's slewing averaged over the run.
 * Between two anchors the error is the rate's error times at most SPAN_NS: well under the
 * microsecond that separates a host call's ends from the API record CUPTI takes inside it.
 * Elsewhere (another clocksource, another architecture, SLACK_TSC=0) slack_now is
 * clock_gettime, as before.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "hook.h"

#define SPAN_NS 1000000ull       /* how long an anchor serves */
#define FIRST_RATE_NS 2000000ull /* baseline of the first rate estimate */
#define ANCHOR_TIGHT_TICKS 200   /* a clock_gettime framed this closely needs no second try */

__thread struct slack_clock_anchor slack_clock_anchor;
uint64_t slack_tsc_mult;
uint64_t slack_tsc_span;

static int tsc_on;
static uint64_t base_tsc, base_ns; /* the process's first anchor: the rate's baseline */

uint64_t slack_clock_gettime_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
static int kernel_clock_is_tsc(void) {
  char buf[32] = "";
  int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  return n > 0 && !strncmp(buf, "tsc\n", 4);
}
#endif

/* clock_gettime between two TSC reads, paired with their midpoint: the tightest of a few tries,
 * so that a pair split by an interrupt or a preempted vCPU does not become the reference. */
static void anchor(uint64_t *tsc, uint64_t *ns) {
  uint64_t best = ~0ull;
  for (int i = 0; i < 4; i++) {
    uint64_t a = __builtin_ia32_rdtsc();
    uint64_t n = slack_clock_gettime_ns();
    uint64_t b = __builtin_ia32_rdtsc();
    if (b - a < best) {
      best = b - a;
      *tsc = a + (b - a) / 2;
      *ns = n;
    }
    if (best < ANCHOR_TIGHT_TICKS) break;
  }
}

/* From slack_start, on one thread, before tracing begins. */
void slack_clock_init(void) {
#if defined(__x86_64__)
  if (!slack_cfg.tsc || !kernel_clock_is_tsc() || __atomic_load_n(&tsc_on, __ATOMIC_RELAXED))
    return;
  anchor(&base_tsc, &base_ns);
  __atomic_store_n(&tsc_on, 1, __ATOMIC_RELEASE);
#endif
}

int slack_clock_uses_tsc(void) { return __atomic_load_n(&slack_tsc_mult, __ATOMIC_RELAXED) != 0; }

uint64_t slack_now_slow(void) {
#if defined(__x86_64__)
  if (__atomic_load_n(&tsc_on, __ATOMIC_ACQUIRE)) {
    uint64_t t, ns;
    anchor(&t, &ns);
    slack_clock_anchor.tsc = t;
    slack_clock_anchor.ns = ns;
    if (t > base_tsc && ns > base_ns + FIRST_RATE_NS) {
      uint64_t mult = (uint64_t)(((unsigned __int128)(ns - base_ns) << 32) / (t - base_tsc));
      if (mult) {
        /* span before mult: a reader that sees the new rate sees its span (hook.h) */
        __atomic_store_n(&slack_tsc_span, (uint64_t)(((unsigned __int128)SPAN_NS << 32) / mult),
                         __ATOMIC_RELAXED);
        __atomic_store_n(&slack_tsc_mult, mult, __ATOMIC_RELEASE);
      }
    }
    return ns;
  }
#endif
  return slack_clock_gettime_ns();
}

/* 1 + the CPU time thread `tid` (of this process) has run, in ns, or 0 where it cannot be read:
 * Linux's per-thread CPU clock of another thread of the same process (the clock id glibc's
 * pthread_getcpuclockid makes from a thread's kernel id: CPUCLOCK_SCHED | CPUCLOCK_PERTHREAD),
 * one system call. With a sample's time it says how much of the time between two samples the
 * thread ran: a thread off the CPU while outside CUDA waited (for the GIL, a lock, a queue). */
uint64_t slack_thread_cpu_ns(uint64_t tid) {
  struct timespec ts;
  clockid_t id = (clockid_t)(((unsigned)~(unsigned)tid << 3) | 6u); /* CPUCLOCK_SCHED, thread */
  if (!tid || tid > 0x1fffffff || clock_gettime(id, &ts)) return 0;
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + 1;
}

/* The small API that interpose/ calls into: everything a wrapper needs, nothing more.
 * Every wrapper follows the same shape (see interpose/cudart.c):
 *
 *   cudaError_t cudaFoo(args) {
 *     REAL(cudaFoo)                           // resolves the real function once
 *     uint64_t t0;
 *     if (!hook_begin(&t0)) return real_cudaFoo(args);   // nested or tracing off: pass through
 *     cudaError_t r = real_cudaFoo(args);
 *     hook_end(SLK_FN_FOO, t0, stream, bytes, kind, flags, r, __builtin_return_address(0));
 *     return r;                               // hook_end keeps errno as the real call left it
 *   }
 */
#ifndef SLACK_HOOK_H
#define SLACK_HOOK_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "format.h"
#include "realsym.h" /* the real dlsym and the real definitions of shadowed symbols */

#define SLACK_HIDDEN __attribute__((visibility("hidden")))

/* >0 while this thread is inside a recorded call (so the driver calls cudart makes underneath
 * are not recorded twice) or inside slack's own code (so CUPTI's and slack's own CUDA calls are
 * never recorded). initial-exec: no allocation, no lock, on first touch. */
extern __thread int slack_tls_busy __attribute__((tls_model("initial-exec"))) SLACK_HIDDEN;

/* Calls that should have been recorded but had nowhere to go (a thread's ring could not be
 * allocated, or the call came while another thread was starting slack). The writer reports
 * them as drops (thread 0). */
extern uint64_t slack_lost SLACK_HIDDEN;

/* 0 not started, 1 starting, 2 tracing, 3 stopped (disabled, failed, or after exit),
 * SLACK_STATE_PAUSED (4) tracing but between production windows (runtime/window.c): the file
 * and the writer are there, calls pass through unrecorded. */
extern int slack_state SLACK_HIDDEN;
#define SLACK_STATE_PAUSED 4

/* The process that owns the trace (a vfork child shares our memory), and an event onto this
 * thread's ring (a thread without one counts it lost): state.c. */
extern pid_t slack_trace_pid SLACK_HIDDEN;
struct slack_event;
void slack_push_event(const struct slack_event *ev) SLACK_HIDDEN;
/* A detached thread running fn(arg) with every signal blocked (the program's signals are not its
 * business), for a call that must not hold its caller up for good (cupti_client.c's bounded
 * CUPTI calls, probe.c's kernel load): 0, or -1 when none could be made. state.c. */
int slack_spawn_detached(void *(*fn)(void *), void *arg) SLACK_HIDDEN;
/* an event that must not be lost silently (the stream map): 0 when the ring is full, nothing
 * counted as dropped; the caller tries again later */
int slack_try_push_event(const struct slack_event *ev) SLACK_HIDDEN;

/* Starts tracing on the first CUDA activity of the process (idempotent, never waits on another
 * thread: a thread that finds it starting passes its call through unrecorded). */
void slack_start(void) SLACK_HIDDEN;

/* runtime/clock.c: the trace clock. A thread's anchor (an exact clock_gettime and the TSC at
 * that moment), the TSC rate in ns per tick as 32.32 fixed point (0: the TSC is not used), and
 * the ticks an anchor serves. */
struct slack_clock_anchor {
  uint64_t tsc, ns;
};
extern __thread struct slack_clock_anchor slack_clock_anchor
    __attribute__((tls_model("initial-exec"))) SLACK_HIDDEN;
extern uint64_t slack_tsc_mult SLACK_HIDDEN;
extern uint64_t slack_tsc_span SLACK_HIDDEN;
uint64_t slack_now_slow(void) SLACK_HIDDEN;         /* renews this thread's anchor */
uint64_t slack_clock_gettime_ns(void) SLACK_HIDDEN; /* CLOCK_MONOTONIC, always exact */
void slack_clock_init(void) SLACK_HIDDEN;
int slack_clock_uses_tsc(void) SLACK_HIDDEN;
uint64_t slack_thread_cpu_ns(uint64_t tid) SLACK_HIDDEN; /* + 1; 0: not ours */

/* CLOCK_MONOTONIC in ns: the clock of every timestamp in the trace. From the TSC and this
 * thread's anchor where the kernel keeps time on the TSC, else clock_gettime (clock.c). */
static inline uint64_t slack_now(void) {
#if defined(__x86_64__)
  uint64_t mult = __atomic_load_n(&slack_tsc_mult, __ATOMIC_ACQUIRE);
  if (__builtin_expect(mult != 0, 1)) {
    uint64_t d = __builtin_ia32_rdtsc() - slack_clock_anchor.tsc;
    if (__builtin_expect(d < __atomic_load_n(&slack_tsc_span, __ATOMIC_RELAXED), 1))
      return slack_clock_anchor.ns + ((d * mult) >> 32);
  }
#endif
  return slack_now_slow();
}

/* Returns 1 and stamps *t0 when the caller should record this call; 0 to pass it through.
 * SLACK_NOP (build/libslack-nop.so, scripts/bench): every call passes through, nothing starts;
 * the baseline that the cost of the hooks is measured against. */
#ifdef SLACK_NOP
static inline int hook_begin(uint64_t *t0) {
  (void)t0;
  return 0;
}
#else
static inline int hook_begin(uint64_t *t0) {
  int st = __atomic_load_n(&slack_state, __ATOMIC_RELAXED);
  if (__builtin_expect(st != 2, 0)) {
    if (st == 1 && !slack_tls_busy) /* another thread is starting slack: lost, but counted */
      __atomic_add_fetch(&slack_lost, 1, __ATOMIC_RELAXED);
    if (st != 0 || slack_tls_busy) return 0;
    slack_start();
    if (__atomic_load_n(&slack_state, __ATOMIC_ACQUIRE) != 2) return 0;
  }
  if (slack_tls_busy) return 0;
  slack_tls_busy = 1;
  *t0 = slack_now();
  return 1;
}
#endif

/* Records the call [t0, now] on this thread's ring (never blocks: a full ring counts a drop),
 * then clears the nesting mark. errno is preserved. */
void hook_end(uint32_t fn, uint64_t t0, uint64_t stream, uint64_t bytes, uint8_t copy_kind,
              uint32_t flags, uint32_t result, void *caller) SLACK_HIDDEN;

/* interpose/nvtx.c: an NVTX range [t0, t1] of this thread named `name` (a string that lives as
 * long as the process), recorded while tracing runs; never starts tracing, never blocks. It
 * travels the ring as an event with fn SLACK_EV_MARKER and the name's address in `site`. */
#define SLACK_EV_MARKER 0xffff0001u
void slack_marker(uint64_t t0, uint64_t t1, const char *name) SLACK_HIDDEN;
/* Whether libslack is this process's NVTX tool (SLACK_NVTX, and not disabled). */
int slack_nvtx_wanted(void) SLACK_HIDDEN;

/* runtime/stacks.c: a call site's native stack, taken by the calling thread the first time the
 * site records a call (slack_stack_note, from hook_end); the writer reads it (slack_stack_of:
 * n frames from the site outward, or NULL). slack_stack_warm loads the unwinder at start. */
void slack_stack_note(uint64_t site) SLACK_HIDDEN;
const uint64_t *slack_stack_of(uint64_t site, size_t *n) SLACK_HIDDEN;
void slack_stack_warm(void) SLACK_HIDDEN;
const char *slack_stack_unwinder(void) SLACK_HIDDEN; /* "libunwind", "backtrace" or "off" */

/* runtime/pyframes.c: in a CPython process, the calling thread's Python stack as a key (0: none,
 * or not a Python thread); the first call with a new key publishes its text ("file:line
 * function" per line, innermost first), which the writer reads with slack_py_text. */
void slack_py_init(void) SLACK_HIDDEN; /* from slack_start: finds the interpreter, once */
uint64_t slack_py_key(void) SLACK_HIDDEN;
const char *slack_py_text(uint64_t key) SLACK_HIDDEN;
/* The writer's sample of the Python threads the hooks have seen, then of the interpreter's other
 * threads: up to max (thread id, stack key, 1 + CPU ns) triples; 0 where Python frames are off
 * or cannot be read safely. Threads without Python
 * that made hooked calls in a Python process, and threads with no Python frame at the sample
 * (autograd's workers: torch gives them a thread state, never a frame), come with key 0: their
 * CPU time is sampled. */
int slack_py_sample(uint64_t *tids, uint64_t *keys, uint64_t *cpu, int max) SLACK_HIDDEN;
/* Whether slack_py_sample can sample now: an interpreter of 3.11 or later found and its frame
 * layout checked (the writer wakes at normal priority only then: writer.c sample_sched). */
int slack_py_sampling(void) SLACK_HIDDEN;
/* In a fork child: forget the parent's sampled threads (only the forking thread exists here). */
void slack_py_forget(void) SLACK_HIDDEN;

/* runtime/probe.c: the tracer's cost per launch, measured at exit in this process. The writer
 * arms it (slack_probe_arm) when it first sees a launch; it runs from an atexit handler, then
 * hands its medians over as an event with fn SLACK_EV_PROBE (slack_probe_event: t0, t1, the
 * median launch call with CUPTI on in `bytes`, off in `stream`, with its records disabled in
 * `copy_kind`, through slack's hook in `site`, with CUPTI's API records off in `py`, launches per
 * state in `result`, 1 in `flags` when off was CUPTI detached). While it runs, slack_probe_win
 * says which thread and span are the probe's: the writer drops CUPTI records, host calls and
 * stream map records of them (slack_probe_owns) and kernels named SLACK_PROBE_KERNEL. */
#define SLACK_EV_PROBE 0xffff0002u
/* Another CUPTI client in the process registered its activity buffer callbacks
 * (interpose/cupti.c): slack_cupti_taken steps back and pushes an event with this fn (t0 the
 * time) that the writer turns into a TAKEN record. */
#define SLACK_EV_TAKEN 0xffff0003u
void slack_cupti_taken(void) SLACK_HIDDEN;
/* runtime/streams.c: after a successful launch, copy or memset call `fn` on stream `handle`
 * (started at t0), the first such call on that handle since CUPTI was attached (per thread and
 * context for handles 0, 1, 2) asks CUPTI for the handle's stream id and pushes an event with
 * this fn (t0, the handle in `stream`, the stream id in `bytes`, the device in `result`) that the
 * writer turns into an SLK_STREAM record. Never waits. */
#define SLACK_EV_STREAM 0xffff0004u
void slack_stream_note(uint32_t fn, uint64_t handle, uint64_t t0) SLACK_HIDDEN;
void slack_streams_forget(void) SLACK_HIDDEN; /* in a fork child */
/* interpose/dl.c: `name` as code at `caller` would find it were libslack absent (the caller's
 * own search: its object, then its dependencies; else the objects after libslack). */
void *slack_real_for_caller(const char *name, void *caller) SLACK_HIDDEN;
#define SLACK_PROBE_KERNEL "slack_probe_empty"
struct slack_probe_window {
  uint64_t tid, t0, t1; /* t0 0: no probe yet; t1 UINT64_MAX while it runs */
};
extern struct slack_probe_window slack_probe_win SLACK_HIDDEN;
void slack_probe_arm(void) SLACK_HIDDEN;
void slack_probe_now(void) SLACK_HIDDEN;
void slack_probe_forget(void) SLACK_HIDDEN; /* in a fork child */
int slack_detach_cupti(void) SLACK_HIDDEN;  /* the writer takes every buffer, then CUPTI goes */
int slack_probe_owns(uint64_t tid, uint64_t start) SLACK_HIDDEN;
struct slack_probe_result {
  uint32_t on_ns;          /* median launch call, CUPTI recording as for the program */
  uint32_t off_ns;         /* ... CUPTI detached, else records_off_ns again */
  uint32_t records_off_ns; /* ... CUPTI attached, its per-call records disabled */
  uint32_t hooked_ns;      /* ... through slack's own hook, CUPTI on (0: not measured) */
  uint32_t api_off_ns;     /* ... CUPTI's API records off, its other records on (0: not measured) */
  uint32_t n;              /* launches timed per state */
  int detached;            /* off_ns was measured with CUPTI detached */
};
void slack_probe_event(uint64_t t0, uint64_t t1, const struct slack_probe_result *p) SLACK_HIDDEN;
/* 1 in the process that owns the trace (not in a fork or vfork child). */
int slack_probe_ours(void) SLACK_HIDDEN;

/* SLACK_DURATION_MS: the slack_now() time after which the next recorded call ends tracing
 * (slack_stop: the probe, CUPTI detached, the trace finished); 0 for no limit. */
extern uint64_t slack_stop_at SLACK_HIDDEN;
void slack_stop(void) SLACK_HIDDEN;
/* 1 in the untraced tail after the window (SLACK_TAIL_MS): calls keep their times only. */
extern int slack_tail SLACK_HIDDEN;
/* slack_now() when tracing started (slack_start): SLACK_PACE_PROBE counts from here. */
extern uint64_t slack_start_ns SLACK_HIDDEN;
/* 1 once the probe recorded its PROBE record with CUPTI detached (the tail's start mark). */
int slack_probe_detached(void) SLACK_HIDDEN;

/* Flushes what is recorded so far with a bounded wait (before exec, at exit). */
void slack_flush(int final) SLACK_HIDDEN;

/* interpose/driver.c: a wrapper for driver function `name` whose real address is `real`
 * (as returned by cuGetProcAddress or dlsym), or `real` itself when slack does not hook it or
 * has no wrapper slot left. `flags` are cuGetProcAddress's flags (per-thread default stream). */
void *slack_wrap_driver(const char *name, void *real, int cuda_version,
                        uint64_t flags) SLACK_HIDDEN;
/* libslack's export of cuLaunchKernel (its hook, as a program linked with -lcuda calls it:
 * hook_begin, the real function, hook_end), set by interpose/driver.c at load (state.c; NULL
 * before). The exit probe times launches through it (runtime/probe.c). */
extern void *slack_launch_hook SLACK_HIDDEN;

#endif

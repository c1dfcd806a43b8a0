/* The tracer's own cost per launch, measured in the traced process.
 *
 * A CUPTI tracer lengthens every launch: CUPTI's kernel record and API record are made inside
 * the launch call. How much depends on the host, and host speed differs from process to process
 * by more than the effect (docs/ACCURACY.md), so a figure measured elsewhere cannot correct this
 * process's launch gaps. So the process measures it itself, once, at its exit: the thread that
 * exits launches an empty kernel on a stream of its own and times each launch call: first in
 * alternating windows (one order, then the reverse: drift cancels) with CUPTI's per-call records
 * on, disabled, on with the launch made through slack's own hook (what slack adds on top of
 * CUPTI: timestamps, ring push, stack and Python frame key, stream map), and with only CUPTI's
 * API records off (what they cost); then, after handing every record over, with CUPTI detached
 * from the process (cuptiFinalize; SLACK_PROBE_DETACH). Disabling the records does not take all
 * of CUPTI's cost out of a launch (H200: 0.4-1.1 us of it), detaching does. The medians go into
 * the trace as one PROBE record; `slack report` takes on - off (off: detached where it could) as
 * CUPTI's cost per launch of this process, hooked - on as its hooks' and on - api_off as the API
 * records'. The probe's own kernels, API records, host calls and stream map records never reach
 * the trace (the writer drops them, slack_probe_owns). A probe that runs from atexit finds the
 * Python interpreter finalized: its hooked launches then walk no Python frames (the end of a
 * SLACK_DURATION_MS window, in a program's call, does).
 *
 * When: from an atexit handler that the writer registers when it first sees a launch (so after
 * cudart registered its own teardown, which then runs after the probe, with the context still
 * there); in a program that exits before the writer has seen a launch, from slack's own exit
 * handler; with SLACK_DURATION_MS, when the window ends (slack_probe_now, from the hook of the
 * first call after it). Once. Bounded: SLACK_PROBE launches per state (0: no probe), at most
 * PROBE_BUDGET_NS in all; a stream that does not drain within PROBE_DRAIN_NS (the GPU busy with the
 * program's work) ends it. Nothing is waited on but the probe's own stream. The program's GPU work
 * has ended, or is left alone: a kernel of another thread that launches while records are off goes
 * unrecorded (the report counts the probe's window as the trace's end).
 */
#include <cuda.h>
#include <dlfcn.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "cupti_client.h"
#include "hook.h"
#include "ring.h"
#include "writer.h"

#define PROBE_BUDGET_NS 300000000ull /* the whole probe, launches and waits */
#define PROBE_DRAIN_NS 100000000ull  /* one window's kernels to finish */
#define PROBE_WINDOW 64              /* launches per window */

/* An empty kernel, JIT-compiled by the driver for whatever GPU the context has. */
static const char probe_ptx[] = ".version 7.8\n"
                                ".target sm_75\n"
                                ".address_size 64\n"
                                ".visible .entry " SLACK_PROBE_KERNEL "()\n"
                                "{\n"
                                "\tret;\n"
                                "}\n";

static int armed, ran; /* the atexit handler is registered; the probe ran (or was skipped) */

static struct {
  CUresult (*ctx_get_current)(CUcontext *);
  CUresult (*ctx_set_current)(CUcontext);
  CUresult (*device_get_count)(int *);
  CUresult (*primary_state)(CUdevice, unsigned *, int *);
  CUresult (*primary_retain)(CUcontext *, CUdevice);
  CUresult (*primary_release)(CUdevice);
  CUresult (*module_load_data)(CUmodule *, const void *);
  CUresult (*module_get_function)(CUfunction *, CUmodule, const char *);
  CUresult (*module_unload)(CUmodule);
  CUresult (*stream_create)(CUstream *, unsigned);
  CUresult (*stream_destroy)(CUstream);
  CUresult (*stream_query)(CUstream);
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                     unsigned, CUstream, void **, void **);
} D;

static int load_driver(void) {
  void *h = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
  if (!h) return -1;
#define GET(field, name) *(void **)&D.field = slack_real_dlsym(h, name)
  GET(ctx_get_current, "cuCtxGetCurrent");
  GET(ctx_set_current, "cuCtxSetCurrent");
  GET(device_get_count, "cuDeviceGetCount");
  GET(primary_state, "cuDevicePrimaryCtxGetState");
  GET(primary_retain, "cuDevicePrimaryCtxRetain");
  GET(primary_release, "cuDevicePrimaryCtxRelease_v2");
  GET(module_load_data, "cuModuleLoadData");
  GET(module_get_function, "cuModuleGetFunction");
  GET(module_unload, "cuModuleUnload");
  GET(stream_create, "cuStreamCreate");
  GET(stream_destroy, "cuStreamDestroy_v2");
  GET(stream_query, "cuStreamQuery");
  GET(launch, "cuLaunchKernel");
#undef GET
  dlclose(h);
  return D.ctx_get_current && D.ctx_set_current && D.device_get_count && D.primary_state &&
                 D.primary_retain && D.primary_release && D.module_load_data &&
                 D.module_get_function && D.module_unload && D.stream_create && D.stream_destroy &&
                 D.stream_query && D.launch
             ? 0
             : -1;
}

/* Waits for the probe's stream; 0 when it drained in time. */
static int drain(CUstream s) {
  uint64_t until = slack_now() + PROBE_DRAIN_NS;
  for (;;) {
    CUresult r = D.stream_query(s);
    if (r == CUDA_SUCCESS) return 0;
    if (r != CUDA_ERROR_NOT_READY || slack_now() > until) return -1;
    sched_yield();
  }
}

/* The exiting thread's context, else the first device's primary context that is in use (retained
 * here: *borrowed gets the device, to release and unset after); -1 when there is none. */
static int context(CUcontext *ctx, int *borrowed) {
  *borrowed = -1;
  if (D.ctx_get_current(ctx) == CUDA_SUCCESS && *ctx) return 0;
  int n = 0;
  if (D.device_get_count(&n) != CUDA_SUCCESS) return -1;
  for (int d = 0; d < n; d++) {
    unsigned flags = 0;
    int active = 0;
    if (D.primary_state(d, &flags, &active) != CUDA_SUCCESS || !active) continue;
    if (D.primary_retain(ctx, d) != CUDA_SUCCESS) return -1;
    if (D.ctx_set_current(*ctx) != CUDA_SUCCESS) {
      D.primary_release(d);
      return -1;
    }
    *borrowed = d;
    return 0;
  }
  return -1;
}

/* The probe's kernel, loaded on a thread of its own while the caller waits at most
 * SLACK_EXIT_TIMEOUT_MS (500 ms at least). At exit it can wait for good: GPU run 101 caught the
 * process of GPU runs 98 and 99 that never exited with its main thread in exit -> probe_at_exit
 * -> cuModuleLoadData -> __cuda_CallJitEntryPoint -> pthread_mutex_lock, every other thread idle
 * (1 process of 3 with that build; 2 of 3 with CUDA_CACHE_DISABLE=1 in run 102, where this bound
 * let 3 of 3 exit, one of them saying so). The kernel compiled ahead of time for the GPU (a
 * fatbin, no PTX to compile) did not avoid it: 1 of 4 in run 103. A load that has not returned in
 * time is left to itself (it unloads what it loaded if it ever returns), said once, and there is
 * no probe. */
enum { LOAD_PENDING, LOAD_DONE, LOAD_LEFT };
static struct {
  CUcontext ctx;
  CUmodule mod;
  CUfunction f;
  CUresult rc;
  int state; /* atomic: LOAD_* */
} L;

static void load_module(void) {
  L.mod = NULL;
  L.f = NULL;
  L.rc = D.module_load_data(&L.mod, probe_ptx);
  if (L.rc == CUDA_SUCCESS) {
    L.rc = D.module_get_function(&L.f, L.mod, SLACK_PROBE_KERNEL);
    if (L.rc != CUDA_SUCCESS) {
      D.module_unload(L.mod);
      L.mod = NULL;
    }
  }
}

static void *load_main(void *arg) {
  (void)arg;
  slack_tls_busy = 1; /* the driver calls below pass through every hook */
  if (D.ctx_set_current(L.ctx) == CUDA_SUCCESS)
    load_module();
  else
    L.rc = CUDA_ERROR_INVALID_CONTEXT;
  int pending = LOAD_PENDING;
  if (!__atomic_compare_exchange_n(&L.state, &pending, LOAD_DONE, 0, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE) &&
      L.mod) /* left: nobody will use it */
    D.module_unload(L.mod);
  D.ctx_set_current(NULL);
  return NULL;
}

/* The probe's module and kernel in context ctx: 0, or -1 (not loaded, or not in time). */
static int load_bounded(CUcontext ctx, CUmodule *mod, CUfunction *f) {
  L.ctx = ctx;
  __atomic_store_n(&L.state, LOAD_PENDING, __ATOMIC_RELEASE);
  if (slack_spawn_detached(load_main, NULL)) { /* on this thread, unbounded, as before */
    load_module();
    __atomic_store_n(&L.state, LOAD_DONE, __ATOMIC_RELEASE);
  }
  long ms = slack_cfg.exit_timeout_ms > 500 ? slack_cfg.exit_timeout_ms : 500;
  uint64_t t0 = slack_now(), limit = (uint64_t)ms * 1000000ull;
  struct timespec nap = {0, 200000};
  while (__atomic_load_n(&L.state, __ATOMIC_ACQUIRE) == LOAD_PENDING) {
    if (slack_now() - t0 >= limit) {
      int pending = LOAD_PENDING;
      if (__atomic_compare_exchange_n(&L.state, &pending, LOAD_LEFT, 0, __ATOMIC_ACQ_REL,
                                      __ATOMIC_ACQUIRE)) {
        fprintf(stderr,
                "slack: the probe's kernel load (cuModuleLoadData) did not return within %ld ms "
                "(SLACK_EXIT_TIMEOUT_MS); no probe in this trace, and the program goes on\n",
                ms);
        return -1;
      }
      break; /* done just now */
    }
    nanosleep(&nap, NULL);
    if (nap.tv_nsec < 2000000) nap.tv_nsec *= 2;
  }
  if (L.rc != CUDA_SUCCESS) return -1;
  *mod = L.mod;
  *f = L.f;
  return 0;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

static uint32_t median(uint32_t *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_u32);
  return n ? v[n / 2] : 0;
}

/* The states of the probe's windows:
 *  RECORDS_OFF  CUPTI attached, its per-call records disabled;
 *  ON           CUPTI recording as for the program, the launch made on the real driver function;
 *  HOOKED       the same, the launch made through slack's own hook of cuLaunchKernel (the export
 *               that a program linked with -lcuda calls): hook_begin, the real call, hook_end with
 *               its ring push, stack and Python frame key (per SLACK_STACKS) and stream map lookup.
 *               HOOKED - ON is what slack adds per launch on top of CUPTI;
 *  API_OFF      CUPTI's API records off, its other records on (only where API records are on in
 *               this process): ON - API_OFF is what the API records cost per launch;
 *  DETACHED     CUPTI gone (one way: last). */
enum { RECORDS_OFF = 0, ON = 1, HOOKED = 2, API_OFF = 3, NSTATES = 4, DETACHED = 5 };

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);
static launch_fn hooked; /* slack's export of cuLaunchKernel; NULL: no HOOKED state */

/* CUPTI as state `st` wants it: 0, or -1 when CUPTI refused. */
static int set_state(int st) {
  if (st == DETACHED) return 0;
  if (cupti_probe_records(st != RECORDS_OFF)) return -1;
  return st == API_OFF ? cupti_probe_api_records(0) : 0;
}

/* One launch timed. A HOOKED one goes through the hook as the program's would: the probe's mark
 * that keeps its calls out of every hook is lifted around it (the hook sets its own and clears
 * it), and the writer drops what the hook records (slack_probe_owns). */
static CUresult launch_once(CUfunction f, CUstream s, int st, uint32_t *ns) {
  uint64_t t0, t1;
  CUresult r;
  if (st == HOOKED) {
    int busy = slack_tls_busy;
    slack_tls_busy = 0;
    t0 = slack_now();
    r = hooked(f, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL);
    t1 = slack_now();
    slack_tls_busy = busy;
  } else {
    t0 = slack_now();
    r = D.launch(f, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL);
    t1 = slack_now();
  }
  *ns = t1 - t0 > UINT32_MAX ? UINT32_MAX : (uint32_t)(t1 - t0);
  return r;
}

/* Room in this thread's ring for a HOOKED window's events (its calls, a stream map record), the
 * writer asked to drain it once where there is not: the probe's calls must never count as drops.
 * 0 when there is room; -1 when not, or when the ring is too small to hold two windows
 * (SLACK_RING_EVENTS), where the probe measures no HOOKED state. */
static int ring_room(void) {
  struct ring *r = ring_self();
  if (!r || r->mask + 1 < 2 * (PROBE_WINDOW + 2)) return -1;
  for (int tries = 0;; tries++) {
    uint64_t used = r->head - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
    if (r->mask + 1 - used >= PROBE_WINDOW + 2) return 0;
    if (tries) return -1;
    writer_flush(0, slack_cfg.exit_timeout_ms);
  }
}

/* One window: n launches in state `st`, each call's duration appended to v. */
static int window(CUfunction f, CUstream s, int st, uint32_t *v, size_t n) {
  if (st == HOOKED && ring_room()) return -1;
  if (set_state(st)) return -1;
  for (size_t i = 0; i < n; i++)
    if (launch_once(f, s, st, &v[i]) != CUDA_SUCCESS) return -1;
  return drain(s);
}

/* Times the launches: a window of each state in turn, in one order and then the reverse (off on
 * hooked api_off, api_off hooked on off, ...: linear drift cancels), HOOKED and API_OFF only where
 * they apply (use[st]); then, with SLACK_PROBE_DETACH, CUPTI detached and DETACHED windows (that
 * state is one way). v[st]: each state's durations. Returns the rounds done; *det_rounds those of
 * the detached windows. */
static size_t measure(CUfunction f, CUstream s, size_t rounds, uint32_t *v[NSTATES],
                      const int use[NSTATES], uint32_t *det, size_t *det_rounds, uint64_t t0) {
  size_t done = 0;
  *det_rounds = 0;
  int order[NSTATES], k = 0;
  for (int st = 0; st < NSTATES; st++)
    if (use[st]) order[k++] = st;
  /* first windows, not counted: the kernel's first launches load it; the hook's first call takes
   * its call site's stack and names the probe's stream */
  if (window(f, s, ON, v[ON], PROBE_WINDOW)) return 0;
  if (use[HOOKED] && window(f, s, HOOKED, v[HOOKED], PROBE_WINDOW)) return 0;
  for (; done < rounds; done++) {
    int ok = 1;
    for (int j = 0; j < k && ok; j++) {
      int st = order[done & 1 ? k - 1 - j : j];
      ok = !window(f, s, st, v[st] + done * PROBE_WINDOW, PROBE_WINDOW);
    }
    if (!ok) break;
    if (slack_now() - t0 > PROBE_BUDGET_NS) {
      done++;
      break;
    }
  }
  if (cupti_probe_records(1) || !done || !slack_cfg.probe_detach) return done;
  if (slack_detach_cupti()) return done;
  size_t d = 0;
  while (d < done && !window(f, s, DETACHED, det + d * PROBE_WINDOW, PROBE_WINDOW) &&
         slack_now() - t0 <= PROBE_BUDGET_NS * 2)
    d++;
  *det_rounds = d;
  return done;
}

static void probe_at_exit(void) {
  long per_state = slack_cfg.probe_launches;
  if (per_state <= 0 || __atomic_load_n(&slack_state, __ATOMIC_ACQUIRE) != 2) return;
  if (__atomic_exchange_n(&ran, 1, __ATOMIC_ACQ_REL)) return;
  if (!cupti_kernel_records_on() || !slack_probe_ours()) return;
  slack_tls_busy++; /* the driver calls below pass through every hook */
  CUcontext ctx = NULL;
  CUmodule mod = NULL;
  CUstream s = NULL;
  CUfunction f = NULL;
  size_t rounds = ((size_t)per_state + PROBE_WINDOW - 1) / PROBE_WINDOW, det_rounds = 0;
  size_t cap = rounds * PROBE_WINDOW;
  uint32_t *v[NSTATES], *det = malloc(cap * sizeof *det);
  int use[NSTATES] = {1, 1, 0, 0}, nomem = !det;
  for (int st = 0; st < NSTATES; st++)
    nomem |= !(v[st] = malloc(cap * sizeof *v[st]));
  /* the window's end must not come in a hooked call of the probe (slack_stop would detach CUPTI
   * under it): held off while it runs */
  uint64_t stop_at = __atomic_exchange_n(&slack_stop_at, 0, __ATOMIC_RELAXED);
  int borrowed = -1;
  if (nomem || load_driver() || context(&ctx, &borrowed)) goto out;
  if (load_bounded(ctx, &mod, &f)) goto out;
  if (D.stream_create(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) goto out;
  hooked = (launch_fn)__atomic_load_n(&slack_launch_hook, __ATOMIC_ACQUIRE);
  use[HOOKED] = hooked != NULL && !ring_room();
  use[API_OFF] = cupti_api_records_on();
  uint64_t t0 = slack_now();
  slack_probe_win.tid = (uint64_t)syscall(SYS_gettid);
  __atomic_store_n(&slack_probe_win.t1, UINT64_MAX, __ATOMIC_RELAXED);
  __atomic_store_n(&slack_probe_win.t0, t0, __ATOMIC_RELEASE);
  size_t done = measure(f, s, rounds, v, use, det, &det_rounds, t0);
  uint64_t t1 = slack_now();
  __atomic_store_n(&slack_probe_win.t1, t1, __ATOMIC_RELEASE);
  if (done) {
    size_t n = done * PROBE_WINDOW;
    struct slack_probe_result p = {.on_ns = median(v[ON], n),
                                   .records_off_ns = median(v[RECORDS_OFF], n),
                                   .hooked_ns = use[HOOKED] ? median(v[HOOKED], n) : 0,
                                   .api_off_ns = use[API_OFF] ? median(v[API_OFF], n) : 0,
                                   .n = (uint32_t)n,
                                   .detached = det_rounds > 0};
    p.off_ns = det_rounds ? median(det, det_rounds * PROBE_WINDOW) : p.records_off_ns;
    slack_probe_event(t0, t1, &p);
  }
  /* a stream still busy is destroyed all the same (its work completes first), but the module
   * of its queued kernels stays loaded */
  if (drain(s)) mod = NULL;
  D.stream_destroy(s);
out:
  if (mod) D.module_unload(mod);
  if (borrowed >= 0) {
    D.ctx_set_current(NULL);
    D.primary_release(borrowed);
  }
  for (int st = 0; st < NSTATES; st++)
    free(v[st]);
  free(det);
  uint64_t none = 0;
  if (stop_at)
    __atomic_compare_exchange_n(&slack_stop_at, &none, stop_at, 0, __ATOMIC_RELAXED,
                                __ATOMIC_RELAXED);
  slack_tls_busy--;
}

/* CUPTI detached once the writer has decoded every buffer CUPTI held: the writer reads records
 * with CUPTI's own cuptiActivityGetNextRecord, and a CUPTI call after cuptiFinalize may attach it
 * again. Records made between the flush and the detach (the probe's own, if any) are lost. */
int slack_detach_cupti(void) {
  if (!cupti_kernel_records_on()) return -1;
  cupti_flush(1);
  writer_flush(0, slack_cfg.exit_timeout_ms);
  return cupti_detach();
}

static int probe_detached; /* a PROBE record with CUPTI detached was pushed */

int slack_probe_detached(void) { return __atomic_load_n(&probe_detached, __ATOMIC_ACQUIRE); }

void slack_probe_event(uint64_t t0, uint64_t t1, const struct slack_probe_result *p) {
  struct slack_event ev = {.t0 = t0,
                           .t1 = t1,
                           .stream = p->off_ns,
                           .bytes = p->on_ns,
                           .site = p->hooked_ns,
                           .py = p->api_off_ns,
                           .fn = SLACK_EV_PROBE,
                           .result = p->n,
                           .flags = p->detached ? 1u : 0u,
                           .copy_kind = p->records_off_ns};
  slack_push_event(&ev);
  if (p->detached) __atomic_store_n(&probe_detached, 1, __ATOMIC_RELEASE);
}

void slack_probe_forget(void) {
  probe_detached = 0;
  /* a fork child: the parent's handler stays registered (and finds no CUPTI in the child) */
  ran = 0;
  __atomic_store_n(&slack_probe_win.t0, 0, __ATOMIC_RELAXED);
}

void slack_probe_arm(void) {
  if (slack_cfg.probe_launches <= 0 || __atomic_exchange_n(&armed, 1, __ATOMIC_ACQ_REL)) return;
  atexit(probe_at_exit);
}

/* slack's own exit handler (a program that ended before the writer saw its first launch gets its
 * probe there, after cudart's teardown: the probe finds the context gone, or not), and the end of
 * a SLACK_DURATION_MS window. Once. */
void slack_probe_now(void) { probe_at_exit(); }

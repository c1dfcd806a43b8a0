/* The tracer's own cost per launch, measured in the traced process.
 *
 * A CUPTI tracer lengthens every launch: CUPTI's kernel record and API record are made inside
 * the launch call. How much depends on the host, and host speed differs from process to process
 * by more than the effect (docs/ACCURACY.md), so a figure measured elsewhere cannot correct this
 * process's launch gaps. So the process measures it itself, once, at its exit: the thread that
 * exits launches an empty kernel on a stream of its own and times each launch call: first in
 * alternating windows with CUPTI's per-call records on and disabled (off on, on off, ...: drift
 * cancels), then, after handing every record over, with CUPTI detached from the process
 * (cuptiFinalize; SLACK_PROBE_DETACH). Disabling the records does not take all of CUPTI's cost
 * out of a launch (H200: 0.4-1.1 us of it), detaching does. The medians go into the trace as one
 * PROBE record; `slack report` takes on - off (off: detached where it could) as CUPTI's cost per
 * launch of this process. The probe's own kernels and API records never reach the trace (the
 * writer drops them, slack_probe_owns).
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
#include <stdlib.h>
#include <sys/syscall.h>
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

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

static uint32_t median(uint32_t *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_u32);
  return n ? v[n / 2] : 0;
}

/* One window: n launches in state `st` (ON, RECORDS_OFF: CUPTI attached, its per-call records
 * disabled; DETACHED: CUPTI gone), each call's duration appended to v. */
enum { RECORDS_OFF = 0, ON = 1, DETACHED = 2 };
static int window(CUfunction f, CUstream s, int st, uint32_t *v, size_t n) {
  if (st != DETACHED && cupti_probe_records(st == ON)) return -1;
  for (size_t i = 0; i < n; i++) {
    uint64_t t0 = slack_now();
    CUresult r = D.launch(f, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL);
    uint64_t t1 = slack_now();
    if (r != CUDA_SUCCESS) return -1;
    v[i] = t1 - t0 > UINT32_MAX ? UINT32_MAX : (uint32_t)(t1 - t0);
  }
  return drain(s);
}

/* Times the launches: ON and RECORDS_OFF windows in turn (off on, on off, ...: drift cancels),
 * then, with SLACK_PROBE_DETACH, CUPTI detached and DETACHED windows (that state is one way).
 * Returns the rounds done; *det_rounds those of the detached windows. */
static size_t measure(CUfunction f, CUstream s, size_t rounds, uint32_t *on, uint32_t *off,
                      uint32_t *det, size_t *det_rounds, uint64_t t0) {
  size_t done = 0;
  *det_rounds = 0;
  /* a first window, not counted: the kernel's first launches load it */
  if (window(f, s, ON, on, PROBE_WINDOW)) return 0;
  for (; done < rounds; done++) {
    int first = done & 1 ? ON : RECORDS_OFF;
    uint32_t *a = first == ON ? on : off, *b = first == ON ? off : on;
    if (window(f, s, first, a + done * PROBE_WINDOW, PROBE_WINDOW)) break;
    if (window(f, s, first == ON ? RECORDS_OFF : ON, b + done * PROBE_WINDOW, PROBE_WINDOW)) break;
    if (slack_now() - t0 > PROBE_BUDGET_NS) {
      done++;
      break;
    }
  }
  if (cupti_probe_records(1) || !done || !slack_cfg.probe_detach) return done;
  if (slack_detach_cupti()) return done;
  size_t k = 0;
  while (k < done && !window(f, s, DETACHED, det + k * PROBE_WINDOW, PROBE_WINDOW) &&
         slack_now() - t0 <= PROBE_BUDGET_NS * 2)
    k++;
  *det_rounds = k;
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
  uint32_t *on = malloc(cap * sizeof *on), *off = malloc(cap * sizeof *off);
  uint32_t *det = malloc(cap * sizeof *det);
  int borrowed = -1;
  if (!on || !off || !det || load_driver() || context(&ctx, &borrowed)) goto out;
  if (D.module_load_data(&mod, probe_ptx) != CUDA_SUCCESS) goto out;
  if (D.module_get_function(&f, mod, SLACK_PROBE_KERNEL) != CUDA_SUCCESS) goto out;
  if (D.stream_create(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) goto out;
  uint64_t t0 = slack_now();
  slack_probe_win.tid = (uint64_t)syscall(SYS_gettid);
  __atomic_store_n(&slack_probe_win.t1, UINT64_MAX, __ATOMIC_RELAXED);
  __atomic_store_n(&slack_probe_win.t0, t0, __ATOMIC_RELEASE);
  size_t done = measure(f, s, rounds, on, off, det, &det_rounds, t0);
  uint64_t t1 = slack_now();
  __atomic_store_n(&slack_probe_win.t1, t1, __ATOMIC_RELEASE);
  if (done) {
    size_t n = done * PROBE_WINDOW;
    uint32_t on_ns = median(on, n), records_off_ns = median(off, n);
    uint32_t off_ns = det_rounds ? median(det, det_rounds * PROBE_WINDOW) : records_off_ns;
    slack_probe_event(t0, t1, on_ns, off_ns, records_off_ns, (uint32_t)n, det_rounds > 0);
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
  free(on);
  free(off);
  free(det);
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

void slack_probe_event(uint64_t t0, uint64_t t1, uint32_t on_ns, uint32_t off_ns,
                       uint32_t records_off_ns, uint32_t n, int detached) {
  struct slack_event ev = {.t0 = t0,
                           .t1 = t1,
                           .stream = off_ns,
                           .bytes = on_ns,
                           .fn = SLACK_EV_PROBE,
                           .result = n,
                           .flags = detached ? 1u : 0u,
                           .copy_kind = records_off_ns};
  slack_push_event(&ev);
  if (detached) __atomic_store_n(&probe_detached, 1, __ATOMIC_RELEASE);
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

/* scripts/bench: the floor under any CUPTI-based tracer. A preload library that enables, from
 * its constructor, the activity kinds and API records slack enables (runtime/cupti_client.c:
 * CONCURRENT_KERNEL, MEMCPY, MEMCPY2, MEMSET, SYNCHRONIZATION, DEVICE, CONTEXT, OVERHEAD, and
 * API records for the runtime and driver calls whose names start like a launch, copy, memset
 * or graph launch), with 4 MB buffers and system thread ids, and then throws every buffer away
 * after counting its records. No hooks, no writer, no file: what CUPTI itself costs.
 *
 * Built by scripts/bench/run.sh on the GPU machine:
 *   gcc -O2 -shared -fPIC -I/usr/local/cuda/include -o libbare_cupti.so bare_cupti.c -ldl
 * Which libcupti: BARE_CUPTI_LIB if set (run.sh points it at torch's own copy for Python
 * workloads, the one slack would find there), else libcupti.so.13 by the loader's search, else
 * the CUDA toolkit's. BARE_CUPTI_TS=1 also registers a CLOCK_MONOTONIC timestamp callback, as
 * slack does. BARE_CUPTI_API=0 enables no API record (kernels, copies, memsets... only: what
 * slack enables with SLACK_API_RECORDS=0). At exit, one line on stderr:
 *   bare_cupti: kernel=N memcpy=N memset=N sync=N api=N overhead=N other=N dropped=N buffers=N
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <cupti.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CUPTI_FUNCS(X)                                                                             \
  X(cuptiActivityRegisterCallbacks,                                                                \
    (CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc))                         \
  X(cuptiActivityRegisterTimestampCallback, (CUpti_TimestampCallbackFunc))                         \
  X(cuptiActivityEnable, (CUpti_ActivityKind))                                                     \
  X(cuptiActivityEnableRuntimeApi, (CUpti_CallbackId, uint8_t))                                    \
  X(cuptiActivityEnableDriverApi, (CUpti_CallbackId, uint8_t))                                     \
  X(cuptiGetCallbackName, (CUpti_CallbackDomain, uint32_t, const char **))                         \
  X(cuptiActivityGetNextRecord, (uint8_t *, size_t, CUpti_Activity **))                            \
  X(cuptiActivityGetNumDroppedRecords, (CUcontext, uint32_t, size_t *))                            \
  X(cuptiActivityFlushAll, (uint32_t))                                                             \
  X(cuptiSetThreadIdType, (CUpti_ActivityThreadIdType))

static struct {
#define DECL(name, args) CUptiResult(*name) args;
  CUPTI_FUNCS(DECL)
#undef DECL
} C;

enum { N_KERNEL, N_MEMCPY, N_MEMSET, N_SYNC, N_API, N_OVERHEAD, N_OTHER, N_DROPPED, N_BUFFERS, N_ };
static unsigned long long counts[N_];
static int enabled;

#define BUF_BYTES (4u << 20) /* slack's SLACK_CUPTI_BUFFER_KB default */

static void CUPTIAPI requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  void *p = NULL;
  if (posix_memalign(&p, 8, BUF_BYTES)) p = NULL;
  *buffer = p;
  *size = p ? BUF_BYTES : 0;
  *max_records = 0;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                               size_t valid) {
  (void)size;
  CUpti_Activity *r = NULL;
  while (valid && C.cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
    int k;
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: k = N_KERNEL; break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
    case CUPTI_ACTIVITY_KIND_MEMCPY2: k = N_MEMCPY; break;
    case CUPTI_ACTIVITY_KIND_MEMSET: k = N_MEMSET; break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: k = N_SYNC; break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: k = N_API; break;
    case CUPTI_ACTIVITY_KIND_OVERHEAD: k = N_OVERHEAD; break;
    default: k = N_OTHER;
    }
    __atomic_add_fetch(&counts[k], 1, __ATOMIC_RELAXED);
  }
  size_t lost = 0;
  if (C.cuptiActivityGetNumDroppedRecords(ctx, stream, &lost) == CUPTI_SUCCESS && lost)
    __atomic_add_fetch(&counts[N_DROPPED], lost, __ATOMIC_RELAXED);
  __atomic_add_fetch(&counts[N_BUFFERS], 1, __ATOMIC_RELAXED);
  free(buffer);
}

static uint64_t CUPTIAPI timestamp(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void at_exit(void) {
  if (!enabled) return;
  C.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  fprintf(stderr,
          "bare_cupti: kernel=%llu memcpy=%llu memset=%llu sync=%llu api=%llu overhead=%llu "
          "other=%llu dropped=%llu buffers=%llu\n",
          counts[N_KERNEL], counts[N_MEMCPY], counts[N_MEMSET], counts[N_SYNC], counts[N_API],
          counts[N_OVERHEAD], counts[N_OTHER], counts[N_DROPPED], counts[N_BUFFERS]);
}

static int has_prefix(const char *name, const char *const *prefixes, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!strncmp(name, prefixes[i], strlen(prefixes[i]))) return 1;
  return 0;
}

__attribute__((constructor)) static void bare_cupti_start(void) {
  const char *lib = getenv("BARE_CUPTI_LIB");
  void *h = lib && *lib ? dlopen(lib, RTLD_NOW | RTLD_GLOBAL) : NULL;
  static const char *const fallback[] = {"libcupti.so.13",
                                         "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
                                         "/usr/local/cuda/lib64/libcupti.so.13",
                                         "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13"};
  for (size_t i = 0; !h && i < sizeof fallback / sizeof fallback[0]; i++)
    h = dlopen(fallback[i], RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    fprintf(stderr, "bare_cupti: no libcupti.so.13: %s\n", dlerror());
    return;
  }
#define LOAD(name, args)                                                                           \
  if (!(C.name = (CUptiResult(*) args)dlsym(h, #name))) {                                          \
    fprintf(stderr, "bare_cupti: libcupti has no %s\n", #name);                                    \
    return;                                                                                        \
  }
  CUPTI_FUNCS(LOAD)
#undef LOAD
  C.cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  const char *ts = getenv("BARE_CUPTI_TS");
  if (ts && *ts == '1') C.cuptiActivityRegisterTimestampCallback(timestamp);
  if (C.cuptiActivityRegisterCallbacks(requested, completed) != CUPTI_SUCCESS) {
    fprintf(stderr, "bare_cupti: CUPTI refused the buffer callbacks\n");
    return;
  }
  static const CUpti_ActivityKind kinds[] = {
      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
      CUPTI_ACTIVITY_KIND_MEMCPY2,           CUPTI_ACTIVITY_KIND_MEMSET,
      CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,   CUPTI_ACTIVITY_KIND_DEVICE,
      CUPTI_ACTIVITY_KIND_CONTEXT,           CUPTI_ACTIVITY_KIND_OVERHEAD};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (C.cuptiActivityEnable(kinds[i]) != CUPTI_SUCCESS && i == 0) {
      fprintf(stderr, "bare_cupti: CUPTI could not enable kernel records\n");
      return;
    }
  const char *api = getenv("BARE_CUPTI_API");
  if (api && *api == '0') {
    enabled = 1;
    atexit(at_exit);
    return;
  }
  static const char *const rt[] = {"cudaLaunch", "cudaMemcpy", "cudaMemset", "cudaGraphLaunch",
                                   "__cudaLaunch"};
  static const char *const drv[] = {"cuLaunch", "cuMemcpy", "cuMemset", "cuGraphLaunch"};
  for (uint32_t id = 1; id < CUPTI_RUNTIME_TRACE_CBID_SIZE; id++) {
    const char *name = NULL;
    if (C.cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, id, &name) == CUPTI_SUCCESS && name &&
        has_prefix(name, rt, sizeof rt / sizeof rt[0]))
      C.cuptiActivityEnableRuntimeApi(id, 1);
  }
  for (uint32_t id = 1; id < CUPTI_DRIVER_TRACE_CBID_SIZE; id++) {
    const char *name = NULL;
    if (C.cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, id, &name) == CUPTI_SUCCESS && name &&
        has_prefix(name, drv, sizeof drv / sizeof drv[0]))
      C.cuptiActivityEnableDriverApi(id, 1);
  }
  enabled = 1;
  atexit(at_exit);
}

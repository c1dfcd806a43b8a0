/* CUPTI activity API through dlopen. Which libcupti: the copy already in the process, else the
 * one beside the loaded libcudart (torch ships its own pair), else the system's. */
#include "cupti_client.h"

#include <cupti.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "hook.h"

void (*cupti_on_buffer)(void);
void (*cupti_on_stuck)(uint64_t t0);

#define CUPTI_FUNCS(X)                                                                             \
  X(cuptiGetVersion, (uint32_t *))                                                                 \
  X(cuptiGetResultString, (CUptiResult, const char **))                                            \
  X(cuptiSubscribe, (CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *))                        \
  X(cuptiUnsubscribe, (CUpti_SubscriberHandle))                                                    \
  X(cuptiActivityRegisterTimestampCallback, (CUpti_TimestampCallbackFunc))                         \
  X(cuptiActivityRegisterCallbacks,                                                                \
    (CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc))                         \
  X(cuptiActivityEnable, (CUpti_ActivityKind))                                                     \
  X(cuptiActivityDisable, (CUpti_ActivityKind))                                                    \
  X(cuptiActivityEnableRuntimeApi, (CUpti_CallbackId, uint8_t))                                    \
  X(cuptiActivityEnableDriverApi, (CUpti_CallbackId, uint8_t))                                     \
  X(cuptiGetCallbackName, (CUpti_CallbackDomain, uint32_t, const char **))                         \
  X(cuptiActivityGetNextRecord, (uint8_t *, size_t, CUpti_Activity **))                            \
  X(cuptiActivityGetNumDroppedRecords, (CUcontext, uint32_t, size_t *))                            \
  X(cuptiActivityFlushAll, (uint32_t))                                                             \
  X(cuptiSetThreadIdType, (CUpti_ActivityThreadIdType))                                            \
  X(cuptiFinalize, (void))

static struct {
#define DECL(name, args) CUptiResult(*name) args;
  CUPTI_FUNCS(DECL)
#undef DECL
  /* optional (cupti_stream_id): a CUPTI without them records all the same */
  CUptiResult (*cuptiGetStreamIdEx)(CUcontext, CUstream, uint8_t, uint32_t *);
  CUptiResult (*cuptiGetDeviceId)(CUcontext, uint32_t *);
} C;

static int taken;   /* atomic: another client registered activity callbacks (cupti_yield) */
static int enabled; /* atomic: the writer stops CUPTI (write failure) while exit flushes it */
static int api_on;  /* atomic: read by the writer, cleared by exit, the probe or a failed write */
static int parked;  /* atomic: detached between production windows (cupti_park), to attach again */
/* atomic: kernel records on, set once they are enabled and cleared before they go off;
 * the hooks mark the calls made while it is set (SLK_HOST_CUPTI_ON): those have GPU records */
static int gpu_live;
/* slack_now() when gpu_live was last set: a call that began before it (a launch waiting on
 * CUPTI's attach, 0.7 ms in GPU run 168) launched its work before the records were on, and its
 * work has none */
static uint64_t live_since;

static void set_live(void) {
  __atomic_store_n(&live_since, slack_now_slow(), __ATOMIC_RELEASE);
  __atomic_store_n(&gpu_live, 1, __ATOMIC_RELEASE);
}

/* enabled -> 0 (the previous value): CUPTI is being stopped, detached or parked */
static int cupti_off(void) {
  __atomic_store_n(&gpu_live, 0, __ATOMIC_RELEASE);
  return __atomic_exchange_n(&enabled, 0, __ATOMIC_ACQ_REL);
}
/* atomic: bumped (never 0) under `life` at each attach that enables the kinds: the stream map
 * (streams.c) names each handle again after it */
static uint32_t attach_epoch;
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER; /* guards q_head/q_tail only */
/* Held across every CUPTI call that flushes, turns kinds on or off, detaches or attaches after
 * tracing started: with windows the writer detaches CUPTI (cupti_park) while the program's
 * threads may flush it (exit, exec), run the exit probe or hand it to another client; CUPTI must
 * not be flushed or enabled while it is being finalized. Never held while calling out of here. */
static pthread_mutex_t life = PTHREAD_MUTEX_INITIALIZER;
static struct cupti_buf *q_head, *q_tail;

/* atomic: a CUPTI call of a detach or a forced flush did not return within SLACK_EXIT_TIMEOUT_MS
 * (bounded_locked): CUPTI is left as it is, no CUPTI call is made from here on, and GPU records
 * stop; the program goes on (docs/RELIABILITY.md, "A CUPTI call that does not return"). */
static int wedged;

/* `life`, or -1 once CUPTI is wedged: a thread that waits for it looks again every 50 ms, so that
 * none waits for good behind a call that never returns (the writer, the program's threads). */
static int life_lock(void) {
  for (;;) {
    if (__atomic_load_n(&wedged, __ATOMIC_ACQUIRE)) return -1;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 50000000L;
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    int r = pthread_mutex_timedlock(&life, &ts);
    if (r == 0) {
      if (!__atomic_load_n(&wedged, __ATOMIC_ACQUIRE)) return 0;
      pthread_mutex_unlock(&life);
      return -1;
    }
    if (r != ETIMEDOUT) return -1;
  }
}

static const char *result_string(CUptiResult r) {
  const char *s = NULL;
  if (C.cuptiGetResultString && C.cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s) return s;
  return "unknown CUPTI error";
}

static uint64_t CUPTIAPI timestamp_monotonic(void) { return slack_now(); }

/* Called by CUPTI (any thread) when it needs a buffer. */
static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  size_t n = (size_t)slack_cfg.cupti_buffer_kb * 1024;
  void *p = NULL;
  if (posix_memalign(&p, 8, n)) p = NULL;
  *buffer = p;
  *size = p ? n : 0;
  *max_records = 0;
}

/* Called by CUPTI with a filled buffer: only queue it (the writer thread decodes it). */
static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid) {
  (void)size;
  struct cupti_buf *b = malloc(sizeof *b);
  if (!b) {
    free(buffer);
    return;
  }
  size_t lost = 0;
  if (C.cuptiActivityGetNumDroppedRecords) C.cuptiActivityGetNumDroppedRecords(ctx, stream, &lost);
  *b = (struct cupti_buf){NULL, buffer, valid, lost};
  pthread_mutex_lock(&q_lock);
  if (q_tail)
    q_tail->next = b;
  else
    q_head = b;
  q_tail = b;
  pthread_mutex_unlock(&q_lock);
  if (cupti_on_buffer) cupti_on_buffer();
}

struct cupti_buf *cupti_take(void) {
  pthread_mutex_lock(&q_lock);
  struct cupti_buf *b = q_head;
  q_head = q_tail = NULL;
  pthread_mutex_unlock(&q_lock);
  return b;
}

void cupti_buf_free(struct cupti_buf *b) {
  free(b->data);
  free(b);
}

int cupti_next(struct cupti_buf *b, void **rec) {
  CUpti_Activity *r = *rec;
  if (!b->valid || C.cuptiActivityGetNextRecord(b->data, b->valid, &r) != CUPTI_SUCCESS) return 0;
  *rec = r;
  return 1;
}

/* Set in a fork child whose parent had loaded CUPTI: CUPTI's state came along (its locks, maybe
 * held by a parent thread at the fork, and buffers of the parent's records). CUDA itself refuses
 * a child forked after cuInit, and CUPTI there can hang the child or hand it the parent's GPU
 * records: such a child records host calls only. */
static int forked_from_cupti;
static int prepared; /* cupti_prepare: 0 not yet, 1 in progress, 2 done */

void cupti_forget_all(void) {
  /* the mutex may have been held by a parent thread at fork: start over with a fresh one */
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  q_lock = fresh;
  life = fresh;
  q_head = q_tail = NULL;
  enabled = 0;
  __atomic_store_n(&api_on, 0, __ATOMIC_RELAXED);
  prepared = 0; /* a child that starts a trace asks again, and hears why it cannot */
  parked = 0;
  if (C.cuptiGetVersion) forked_from_cupti = 1;
}

static void *open_beside_cudart(void) {
  void *rt = dlopen("libcudart.so.13", RTLD_NOLOAD | RTLD_LAZY);
  if (!rt) return NULL;
  struct link_map *lm = NULL;
  void *h = NULL;
  if (dlinfo(rt, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && strchr(lm->l_name, '/')) {
    char path[4096];
    snprintf(path, sizeof path, "%s", lm->l_name);
    char *slash = strrchr(path, '/');
    snprintf(slash + 1, sizeof path - (size_t)(slash + 1 - path), "libcupti.so.13");
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  }
  dlclose(rt);
  return h;
}

static void *open_cupti(void) {
  void *h = dlopen("libcupti.so.13", RTLD_NOLOAD | RTLD_NOW);
  if (!h) h = open_beside_cudart();
  if (!h) h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
  static const char *const fallback[] = {"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
                                         "/usr/local/cuda/lib64/libcupti.so.13",
                                         "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13"};
  for (size_t i = 0; !h && i < sizeof fallback / sizeof fallback[0]; i++)
    h = dlopen(fallback[i], RTLD_NOW | RTLD_LOCAL);
  return h;
}

static void CUPTIAPI noop_callback(void *u, CUpti_CallbackDomain d, CUpti_CallbackId id,
                                   const void *data) {
  (void)u, (void)d, (void)id, (void)data;
}

/* Enables API records only for the calls that put work on the GPU, so each kernel, copy and
 * memset can be joined to its host thread by correlation id (GPU-NOTES: cheaper than pushing an
 * external correlation id per launch). Names decide, so new cbids of later CUDA versions that
 * launch or copy are included without a table here. */
static void enable_api_records(void) {
  static const char *const rt_prefix[] = {"cudaLaunch", "cudaMemcpy", "cudaMemset",
                                          "cudaGraphLaunch", "__cudaLaunch"};
  static const char *const drv_prefix[] = {"cuLaunch", "cuMemcpy", "cuMemset", "cuGraphLaunch"};
  for (uint32_t id = 1; id < CUPTI_RUNTIME_TRACE_CBID_SIZE; id++) {
    const char *name = NULL;
    if (C.cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, id, &name) != CUPTI_SUCCESS || !name)
      continue;
    for (size_t i = 0; i < sizeof rt_prefix / sizeof rt_prefix[0]; i++)
      if (!strncmp(name, rt_prefix[i], strlen(rt_prefix[i])))
        C.cuptiActivityEnableRuntimeApi(id, 1);
  }
  for (uint32_t id = 1; id < CUPTI_DRIVER_TRACE_CBID_SIZE; id++) {
    const char *name = NULL;
    if (C.cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, id, &name) != CUPTI_SUCCESS || !name)
      continue;
    for (size_t i = 0; i < sizeof drv_prefix / sizeof drv_prefix[0]; i++)
      if (!strncmp(name, drv_prefix[i], strlen(drv_prefix[i])))
        C.cuptiActivityEnableDriverApi(id, 1);
  }
}

/* Loads CUPTI and attaches it (callbacks, clock, thread ids) without enabling a kind: what must
 * happen before cudart initializes for CUPTI to see runtime API calls. Once: later calls return
 * the first one's answer (why and version kept). */
/* 1, and why, when another client took CUPTI's activity records (cupti_yield). */
static int taken_why(char *why, size_t why_len) {
  if (!__atomic_load_n(&taken, __ATOMIC_ACQUIRE)) return 0;
  snprintf(why, why_len,
           "CUPTI's activity records are taken by another client in this process "
           "(torch.profiler?): recording host calls only");
  return 1;
}

/* The activity kinds (and API records) of a recording CUPTI: 0, or -1 with why. */
static int enable_kinds(char *why, size_t why_len) {
  /* CONCURRENT_KERNEL, never KERNEL (which serializes every kernel). */
  static const CUpti_ActivityKind kinds[] = {
      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
      CUPTI_ACTIVITY_KIND_MEMCPY2,           CUPTI_ACTIVITY_KIND_MEMSET,
      CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,   CUPTI_ACTIVITY_KIND_DEVICE,
      CUPTI_ACTIVITY_KIND_CONTEXT,           CUPTI_ACTIVITY_KIND_OVERHEAD};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    CUptiResult r = C.cuptiActivityEnable(kinds[i]);
    /* once kernel records are on: the call that enables them may first attach (5-14 ms) */
    if (i == 0 && r == CUPTI_SUCCESS) set_live();
    if (r != CUPTI_SUCCESS && i == 0) {
      snprintf(why, why_len, "CUPTI could not enable kernel records (%s)", result_string(r));
      return -1;
    }
  }
  /* API records of the calls that put work on the GPU, runtime and driver. Attached again after
   * cudart started (cupti_reattach), CUPTI sees no runtime call (GPU run 18), and CUPTI 13.0
   * gives no record of the driver calls cudart makes either (GPU run 38): the work of those
   * windows then joins no host call (SLACK_WINDOW_DETACH stays opt-in for that). */
  if (slack_cfg.api_records) {
    enable_api_records();
    __atomic_store_n(&api_on, 1, __ATOMIC_RELAXED);
  }
  return 0;
}

/* CUPTI's callbacks, clock and thread ids: what an attach needs before any kind is enabled (at
 * the first attach, and at each attach after a cuptiFinalize). 0, or -1 with why. */
static int register_client(char *why, size_t why_len) {
  CUptiResult r;
  /* API records must name threads by system tid (gettid), as the host hooks do; CUPTI's default
   * is pthread_self(), which nothing else in the trace uses. */
  if ((r = C.cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)) != CUPTI_SUCCESS) {
    snprintf(why, why_len, "CUPTI refused system thread ids (%s)", result_string(r));
    return -1;
  }
  /* CUPTI's own clock is CLOCK_REALTIME; put it on CLOCK_MONOTONIC like the host events. This
   * must come before any kind is enabled. */
  if ((r = C.cuptiActivityRegisterTimestampCallback(timestamp_monotonic)) != CUPTI_SUCCESS) {
    snprintf(why, why_len, "CUPTI refused the timestamp callback (%s)", result_string(r));
    return -1;
  }
  if ((r = C.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed)) != CUPTI_SUCCESS) {
    snprintf(why, why_len, "CUPTI refused the buffer callbacks (%s)", result_string(r));
    return -1;
  }
  return 0;
}

/* Under `life`: a new attach epoch, never 0 in its low SLACK_EPOCH_BITS (streams.c keeps that
 * many). */
static void bump_epoch(void) {
  uint32_t e = __atomic_load_n(&attach_epoch, __ATOMIC_RELAXED) + 1;
  if (!(e & SLACK_EPOCH_MASK)) e++;
  __atomic_store_n(&attach_epoch, e, __ATOMIC_RELEASE);
}

static int prepare_rc;
static char prepare_why[256];
static uint32_t prepare_version;
static int prepare(char *why, size_t why_len, uint32_t *version_out);

int cupti_prepare(void) {
  int expect = 0;
  if (!__atomic_compare_exchange_n(&prepared, &expect, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return expect == 2 ? prepare_rc : -1;
  prepare_rc = prepare(prepare_why, sizeof prepare_why, &prepare_version);
  __atomic_store_n(&prepared, 2, __ATOMIC_RELEASE);
  return prepare_rc;
}

int cupti_start(char *why, size_t why_len, uint32_t *version_out) {
  int st = __atomic_load_n(&prepared, __ATOMIC_ACQUIRE);
  if (st == 1) { /* another thread is attaching CUPTI right now (SLACK_DELAY_MS) */
    snprintf(why, why_len, "CUPTI was being attached by another thread: recording host calls only");
    *version_out = 0;
    return -1;
  }
  int rc = st == 2 ? prepare_rc : cupti_prepare();
  snprintf(why, why_len, "%s", prepare_why);
  *version_out = prepare_version;
  if (rc) return -1;
  if (taken_why(why, why_len)) return -1; /* it registered after our prepare (a delay) */
  if (enable_kinds(why, why_len)) return -1;
  pthread_mutex_lock(&life);
  bump_epoch();
  __atomic_store_n(&enabled, 1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&life);
  return 0;
}

static int prepare(char *why, size_t why_len, uint32_t *version_out) {
  *version_out = 0;
  if (forked_from_cupti) {
    snprintf(why, why_len,
             "CUPTI was started before fork() (by the parent process), a child "
             "cannot use it: recording host calls only");
    return -1;
  }
  void *h = open_cupti();
  if (!h) {
    snprintf(why, why_len, "libcupti.so.13 not found: recording host calls only");
    return -1;
  }
#define LOAD(name, args)                                                                           \
  C.name = (CUptiResult(*) args)slack_real_dlsym(h, #name);                                        \
  if (!C.name) {                                                                                   \
    snprintf(why, why_len, "libcupti has no %s: recording host calls only", #name);                \
    return -1;                                                                                     \
  }
  CUPTI_FUNCS(LOAD)
#undef LOAD
  *(void **)&C.cuptiGetStreamIdEx = slack_real_dlsym(h, "cuptiGetStreamIdEx");
  *(void **)&C.cuptiGetDeviceId = slack_real_dlsym(h, "cuptiGetDeviceId");
  uint32_t v = 0;
  C.cuptiGetVersion(&v);
  *version_out = v;
  /* Record layouts are those of CUPTI 13 (API version 130001): older ones differ. Later 13.x
   * versions only append fields, which this client never reads. */
  if (v < CUPTI_API_VERSION) {
    snprintf(why, why_len, "CUPTI API version %u is older than %u: recording host calls only", v,
             (unsigned)CUPTI_API_VERSION);
    return -1;
  }
  /* One subscriber per process until CUDA 13.3: if nsys, torch.profiler or another tool holds
   * CUPTI, step back rather than fight it. The same if another client in the process already
   * took the activity records (cupti_yield): registering ours would take them back from it. */
  if (taken_why(why, why_len)) return -1;
  CUpti_SubscriberHandle sub;
  CUptiResult r = C.cuptiSubscribe(&sub, noop_callback, NULL);
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    snprintf(why, why_len,
             "CUPTI is in use by another tool (nsys, torch.profiler?): recording host "
             "calls only");
    return -1;
  }
  if (r == CUPTI_SUCCESS) C.cuptiUnsubscribe(sub);
  return register_client(why, why_len);
}

/* CUPTI calls that detach it or flush it by force, made on a thread of their own while the caller
 * (holding `life`) waits at most SLACK_EXIT_TIMEOUT_MS: GPU run 98's process never exited after a
 * detach at its exit (docs/RELIABILITY.md). One at a time (under `life`); none after a wedge. */
enum { JOB_FINALIZE, JOB_FLUSH_FORCED };
static int job_done; /* atomic */
static CUptiResult job_rc;

static void job_run(int job) {
  job_rc = job == JOB_FINALIZE ? C.cuptiFinalize()
                               : C.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  __atomic_store_n(&job_done, 1, __ATOMIC_RELEASE);
}

static void *job_main(void *arg) {
  slack_tls_busy = 1; /* CUPTI's own CUDA calls are not the program's */
  job_run((int)(intptr_t)arg);
  return NULL;
}

/* Under `life`: CUPTI call `job`; its result, or CUPTI_ERROR_UNKNOWN with CUPTI wedged (said
 * once) when it did not return in time. Where no thread can be started, the call is made on the
 * caller's thread, unbounded. */
static CUptiResult bounded_locked(int job) {
  static const char *const names[] = {"cuptiFinalize", "cuptiActivityFlushAll"};
  __atomic_store_n(&job_done, 0, __ATOMIC_RELAXED);
  if (slack_spawn_detached(job_main, (void *)(intptr_t)job)) { /* here, unbounded, as before */
    job_run(job);
    return job_rc;
  }
  /* at least 0.5 s: SLACK_EXIT_TIMEOUT_MS=0 (no wait for the writer) must not wedge a detach that
   * takes its usual milliseconds */
  long ms = slack_cfg.exit_timeout_ms > 500 ? slack_cfg.exit_timeout_ms : 500;
  uint64_t limit = (uint64_t)ms * 1000000ull;
  uint64_t t0 = slack_now();
  struct timespec nap = {0, 200000}; /* 0.2 ms: a detach takes milliseconds */
  while (!__atomic_load_n(&job_done, __ATOMIC_ACQUIRE)) {
    if (slack_now() - t0 >= limit) {
      __atomic_store_n(&wedged, 1, __ATOMIC_RELEASE);
      __atomic_store_n(&api_on, 0, __ATOMIC_RELAXED);
      cupti_off();
      if (cupti_on_stuck) cupti_on_stuck(t0); /* a TAKEN record: the report stops there */
      fprintf(stderr,
              "slack: CUPTI's %s did not return within %ld ms (SLACK_EXIT_TIMEOUT_MS); slack "
              "leaves CUPTI as it is and records host calls only from here on\n",
              names[job], ms);
      return CUPTI_ERROR_UNKNOWN;
    }
    nanosleep(&nap, NULL);
    if (nap.tv_nsec < 2000000) nap.tv_nsec *= 2;
  }
  return job_rc;
}

int cupti_wedged(void) { return __atomic_load_n(&wedged, __ATOMIC_ACQUIRE); }

static void stop_locked(void);

int cupti_yield(void) {
  __atomic_store_n(&taken, 1, __ATOMIC_RELEASE);
  if (life_lock()) return 0;
  int rc = 1;
  /* detached between windows: nothing to take home, but the windows to come lose their GPU
   * records all the same (cupti_reattach steps back) */
  if (__atomic_exchange_n(&parked, 0, __ATOMIC_ACQ_REL)) {
  } else if (!__atomic_load_n(&enabled, __ATOMIC_ACQUIRE)) {
    rc = 0;
  } else if (bounded_locked(JOB_FLUSH_FORCED) == CUPTI_SUCCESS || !cupti_wedged()) {
    stop_locked();
  }
  pthread_mutex_unlock(&life);
  return rc;
}

void cupti_flush(int forced) {
  if (life_lock()) return;
  if (__atomic_load_n(&enabled, __ATOMIC_ACQUIRE)) {
    if (forced)
      bounded_locked(JOB_FLUSH_FORCED); /* at exit, a detach, a window's end: rare */
    else
      C.cuptiActivityFlushAll(0); /* the writer's, each poll */
  }
  pthread_mutex_unlock(&life);
}

int cupti_api_records_on(void) { return __atomic_load_n(&api_on, __ATOMIC_RELAXED); }

int cupti_gpu_records_live(uint64_t t0) {
  return __atomic_load_n(&gpu_live, __ATOMIC_ACQUIRE) &&
         t0 >= __atomic_load_n(&live_since, __ATOMIC_ACQUIRE);
}

int cupti_kernel_records_on(void) { return __atomic_load_n(&enabled, __ATOMIC_ACQUIRE); }

uint32_t cupti_attach_epoch(void) {
  if (!__atomic_load_n(&enabled, __ATOMIC_RELAXED)) return 0;
  return __atomic_load_n(&attach_epoch, __ATOMIC_ACQUIRE);
}

int cupti_stream_id(void *ctx, uint64_t handle, uint32_t epoch, uint32_t *sid, uint32_t *dev) {
  if (!C.cuptiGetStreamIdEx) return -1;
  /* never wait: the writer may be detaching CUPTI (cupti_park) or flushing it; a call that finds
   * it busy tries again on the handle's next call */
  if (cupti_wedged() || pthread_mutex_trylock(&life)) return 1;
  int rc = 1;
  CUptiResult r = CUPTI_SUCCESS;
  if (__atomic_load_n(&enabled, __ATOMIC_ACQUIRE) &&
      __atomic_load_n(&attach_epoch, __ATOMIC_RELAXED) == epoch) {
    /* the handles that name a stream per context or per thread: CUPTI is given the current
     * context and a null stream, with the per-thread flag for CU_STREAM_PER_THREAD (2); a
     * stream of its own needs no context (CUPTI's header: "typically ... null") */
    int special = handle <= SLACK_STREAM_HANDLE_PER_THREAD;
    CUstream s = special ? NULL : (CUstream)(uintptr_t)handle;
    uint8_t per_thread = handle == SLACK_STREAM_HANDLE_PER_THREAD;
    r = C.cuptiGetStreamIdEx(special ? (CUcontext)ctx : NULL, s, per_thread, sid);
    rc = r == CUPTI_SUCCESS ? 0 : -1;
    *dev = 0;
    uint32_t d = 0;
    if (!rc && ctx && C.cuptiGetDeviceId && C.cuptiGetDeviceId((CUcontext)ctx, &d) == CUPTI_SUCCESS)
      *dev = d;
  }
  pthread_mutex_unlock(&life);
  static int said;
  if (rc < 0 && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
    fprintf(stderr,
            "slack: CUPTI could not name a stream (cuptiGetStreamIdEx: %s); work on such streams "
            "joins its launch by correlation id or by the learned stream order only\n",
            result_string(r));
  return rc;
}

/* The kinds that put a record on the calls of a traced program (cupti_start enables them with
 * DEVICE and CONTEXT, which cost nothing per call). */
static const CUpti_ActivityKind call_kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2,           CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,   CUPTI_ACTIVITY_KIND_OVERHEAD};

static int probe_records_locked(int on) {
  if (!__atomic_load_n(&enabled, __ATOMIC_ACQUIRE)) return -1;
  CUptiResult r = CUPTI_SUCCESS;
  if (!on) __atomic_store_n(&gpu_live, 0, __ATOMIC_RELEASE);
  for (size_t i = 0; i < sizeof call_kinds / sizeof call_kinds[0]; i++) {
    CUptiResult k =
        on ? C.cuptiActivityEnable(call_kinds[i]) : C.cuptiActivityDisable(call_kinds[i]);
    if (i == 0) r = k;
  }
  if (__atomic_load_n(&api_on, __ATOMIC_RELAXED)) {
    if (on) {
      enable_api_records();
    } else {
      C.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
      C.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
    }
  }
  if (on && r == CUPTI_SUCCESS) set_live();
  return r == CUPTI_SUCCESS ? 0 : -1;
}

int cupti_probe_records(int on) {
  if (life_lock()) return -1;
  int rc = probe_records_locked(on);
  pthread_mutex_unlock(&life);
  return rc;
}

int cupti_probe_api_records(int on) {
  if (life_lock()) return -1;
  int rc = -1;
  if (__atomic_load_n(&enabled, __ATOMIC_ACQUIRE) && __atomic_load_n(&api_on, __ATOMIC_RELAXED)) {
    rc = 0;
    if (on) {
      enable_api_records();
    } else {
      /* the kinds, as probe_records_locked turns them off: that clears every callback id's
       * setting (enable_api_records sets them again) */
      if (C.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME) != CUPTI_SUCCESS) rc = -1;
      if (C.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER) != CUPTI_SUCCESS) rc = -1;
    }
  }
  pthread_mutex_unlock(&life);
  return rc;
}

int cupti_detach(void) {
  if (life_lock()) return -1;
  int rc = -1;
  if (cupti_off()) {
    __atomic_store_n(&api_on, 0, __ATOMIC_RELAXED);
    rc = bounded_locked(JOB_FINALIZE) == CUPTI_SUCCESS ? 0 : -1;
  }
  pthread_mutex_unlock(&life);
  return rc;
}

int cupti_park(void) {
  if (life_lock()) return -1;
  int rc = -1;
  if (cupti_off()) {
    __atomic_store_n(&api_on, 0, __ATOMIC_RELAXED);
    rc = bounded_locked(JOB_FINALIZE) == CUPTI_SUCCESS ? 0 : -1;
    if (!rc) __atomic_store_n(&parked, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&life);
  return rc;
}

int cupti_parked(void) { return __atomic_load_n(&parked, __ATOMIC_ACQUIRE); }

int cupti_reattach(char *why, size_t why_len) {
  if (life_lock()) {
    snprintf(why, why_len, "an earlier CUPTI call did not return");
    return -1;
  }
  int rc = 0;
  if (!__atomic_exchange_n(&parked, 0, __ATOMIC_ACQ_REL)) {
    snprintf(why, why_len, "CUPTI is not detached");
    rc = -1;
  } else if (taken_why(why, why_len)) {
    rc = 1;
  } else if (register_client(why, why_len) || enable_kinds(why, why_len)) {
    /* whatever part attached: nothing of it stays on the program's calls */
    bounded_locked(JOB_FINALIZE);
    __atomic_store_n(&gpu_live, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&api_on, 0, __ATOMIC_RELAXED);
    rc = -1;
  } else {
    bump_epoch();
    __atomic_store_n(&enabled, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&life);
  return rc;
}

void cupti_stop(void) {
  if (life_lock()) return;
  stop_locked();
  pthread_mutex_unlock(&life);
}

static void stop_locked(void) {
  /* one caller disables: the writer thread (stop_writing) and the program's thread (exit, a
   * failed start) may both get here; a plain int here was a data race (make test-tsan) */
  if (!cupti_off()) return;
  __atomic_store_n(&api_on, 0, __ATOMIC_RELAXED);
  static const CUpti_ActivityKind kinds[] = {
      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
      CUPTI_ACTIVITY_KIND_MEMCPY2,           CUPTI_ACTIVITY_KIND_MEMSET,
      CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,   CUPTI_ACTIVITY_KIND_OVERHEAD,
      CUPTI_ACTIVITY_KIND_RUNTIME,           CUPTI_ACTIVITY_KIND_DRIVER};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    C.cuptiActivityDisable(kinds[i]);
}

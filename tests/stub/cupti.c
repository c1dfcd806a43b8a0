/* Test-only stand-in for CUPTI 13.0 (build/stub/libcupti.so.13): the activity API as slack's
 * client uses it, with records in the real CUPTI 13.0 layouts delivered through the client's
 * buffer callbacks. Never installed or shipped.
 *
 * Delivery follows the real library: records go into buffers from the client's bufferRequested
 * callback (zeroed here unless CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER says the client does
 * it); a full buffer is handed back through bufferCompleted from CUPTI's own worker thread; the
 * thread calling cuptiActivityFlushAll gets every buffer of completed records (forced: also the
 * records of GPU work still running, with CUPTI_TIMESTAMP_UNKNOWN times, and the empty current
 * buffer). A GPU record is complete once the simulated GPU work has ended; its GPU times are put
 * on CUPTI's clock at delivery, calling the timestamp callback from the delivering thread (real
 * CUPTI converts GPU timestamps in post-processing). CPU-side records (API, synchronization) use
 * the clock when they happen. The clock: the registered timestamp callback, else CLOCK_REALTIME.
 *
 * Environment: STUB_CUPTI_TAKEN=1 makes cuptiSubscribe and cuptiActivityRegisterCallbacks fail
 * with CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, as when nsys or torch.profiler holds
 * CUPTI. STUB_CUPTI_VERSION=n overrides cuptiGetVersion's answer. STUB_CUPTI_LOG=PATH appends a
 * line per attach ("attach T N": CLOCK_MONOTONIC ns, the Nth attach) and per cuptiFinalize
 * ("finalize T LOST": GPU records of work still running that the detach lost, and records left in
 * CUPTI's buffers unflushed), for the production-window tests (tests/e2e/windows.py).
 * STUB_CUPTI_ATTACH_MS=n: each attach after the first takes n ms more (the H200's re-attach).
 * STUB_CUPTI_FINALIZE_MS=n: cuptiFinalize first waits n ms, blocking nothing else of CUPTI (a
 * large n: a detach that never returns, the likeliest reading of GPU run 98's hung exit).
 *
 * cuptiFinalize detaches as the real one does: every kind and callback forgotten, records not
 * yet handed over lost; any later CUPTI call attaches again. Attached again, CUPTI sees no runtime
 * API call (the H200 in GPU runs 18 and 38): no RUNTIME records, and no DRIVER record of the
 * driver calls cudart makes (tests/stub/cuda.c): their work joins nothing.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cbid_names.h"
#include "stub_internal.h"

#define ALIGN8(x) (((x) + 7u) & ~(size_t)7u)

struct ready {
  struct ready *next;
  uint8_t *buf;
  size_t size, valid;
};

/* A record waiting for its simulated GPU work to end. */
struct pending {
  uint64_t done;
  uint32_t size;
  uint8_t gpu_times;
  union {
    CUpti_Activity a;
    CUpti_ActivityKernel10 k;
    CUpti_ActivityMemcpy6 m;
    CUpti_ActivityMemset4 s;
    CUpti_ActivityGraphTrace2 g;
    uint8_t bytes[256];
  } rec;
};

static pthread_mutex_t M = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER;  /* wakes the worker */
static pthread_cond_t state_cv = PTHREAD_COND_INITIALIZER; /* buffer request / delivery done */
static CUpti_BuffersCallbackRequestFunc buf_request;
static CUpti_BuffersCallbackCompleteFunc buf_complete;
static CUpti_TimestampCallbackFunc ts_callback;
static uint8_t kinds[CUPTI_ACTIVITY_KIND_COUNT];
static uint8_t rt_api[CUPTI_RUNTIME_TRACE_CBID_SIZE];
static uint8_t drv_api[CUPTI_DRIVER_TRACE_CBID_SIZE];
static int subscribed;
static CUpti_ActivityThreadIdType tid_type = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
static uint8_t zeroed_by_client;
static uint32_t flush_period_ms;
static uint8_t *cur;
static size_t cur_size, cur_used, cur_max, cur_count;
static int requesting;
static struct ready *ready_head, *ready_tail;
static struct pending *pend;
static size_t npend, cap_pend;
static size_t dropped;
static int in_delivery;
static int worker_started;
static int attached;
static int finalized; /* cuptiFinalize ran: attached again, CUPTI sees no runtime API call */
static int attaches;
static const struct stub_cupti_table *driver;
static int warned_kernel_kind;

static uint64_t clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t cupti_now(void) {
  CUpti_TimestampCallbackFunc cb = __atomic_load_n(&ts_callback, __ATOMIC_ACQUIRE);
  return cb ? cb() : clock_ns(CLOCK_REALTIME);
}

/* CUPTI clock minus CLOCK_MONOTONIC, from the tightest of a few bracketed readings. */
static int64_t clock_offset(void) {
  int64_t best = 0;
  uint64_t width = UINT64_MAX;
  for (int i = 0; i < 5; i++) {
    uint64_t a = clock_ns(CLOCK_MONOTONIC), c = cupti_now(), b = clock_ns(CLOCK_MONOTONIC);
    if (b - a < width) {
      width = b - a;
      best = (int64_t)c - (int64_t)(a + (b - a) / 2);
    }
  }
  return best;
}

static int taken(void) {
  const char *e = getenv("STUB_CUPTI_TAKEN");
  return e && *e && strcmp(e, "0") != 0;
}

static size_t record_size(CUpti_ActivityKind kind) {
  switch (kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
  case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
  case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
  case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
  case CUPTI_ACTIVITY_KIND_RUNTIME:
  case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
  case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
  case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
  case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(CUpti_ActivityContext3);
  case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
  case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: return sizeof(CUpti_ActivityGraphTrace2);
  default: return 0;
  }
}

/* ---------------------------------------------------------------- buffers (M held) */

static void retire_current(void) {
  if (!cur) return;
  struct ready *r = malloc(sizeof *r);
  if (!r) return; /* keep filling it: nothing lost */
  *r = (struct ready){NULL, cur, cur_size, cur_used};
  if (ready_tail)
    ready_tail->next = r;
  else
    ready_head = r;
  ready_tail = r;
  cur = NULL;
  pthread_cond_signal(&work_cv);
}

static void emit_overhead(uint64_t t0, uint64_t t1);

/* Makes room for a record of size bytes in the current buffer; 0 when there is none (the record
 * is dropped). May release M while the client's bufferRequested runs. */
static int make_room(size_t size) {
  for (;;) {
    if (cur && ALIGN8(cur_used) + size <= cur_size && (!cur_max || cur_count < cur_max)) return 1;
    if (cur && cur_count) retire_current();
    if (cur) return 0; /* an empty buffer too small for the record */
    if (requesting) {
      pthread_cond_wait(&state_cv, &M);
      continue;
    }
    /* the callback as it is now, under M: cuptiFinalize on another thread may clear it while
     * M is released below (read again there, it once was NULL: a SIGSEGV in CI, session 27) */
    CUpti_BuffersCallbackRequestFunc request = buf_request;
    if (!request) return 0;
    requesting = 1;
    pthread_mutex_unlock(&M);
    uint8_t *b = NULL;
    size_t sz = 0, maxr = 0;
    uint64_t t0 = cupti_now();
    request(&b, &sz, &maxr);
    uint64_t t1 = cupti_now();
    pthread_mutex_lock(&M);
    requesting = 0;
    pthread_cond_broadcast(&state_cv);
    if (!b || sz < 64) return 0; /* real CUPTI drops records when the client gives nothing */
    uint8_t *aligned = (uint8_t *)ALIGN8((uintptr_t)b);
    if (!zeroed_by_client) memset(b, 0, sz);
    cur = b;
    cur_size = sz;
    cur_used = (size_t)(aligned - b);
    cur_max = maxr;
    cur_count = 0;
    emit_overhead(t0, t1);
  }
}

static void put_record(const void *rec, size_t size) {
  if (!make_room(size)) {
    dropped++;
    return;
  }
  cur_used = ALIGN8(cur_used);
  memcpy(cur + cur_used, rec, size);
  cur_used += size;
  cur_count++;
}

static void emit_overhead(uint64_t t0, uint64_t t1) {
  if (!kinds[CUPTI_ACTIVITY_KIND_OVERHEAD]) return;
  CUpti_ActivityOverhead3 o;
  memset(&o, 0, sizeof o);
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST;
  o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  o.objectId.pt.processId = (uint32_t)getpid();
  o.objectId.pt.threadId = (uint32_t)syscall(SYS_gettid);
  o.start = t0;
  o.end = t1;
  /* straight into the new buffer (room is certain: it is empty and at least 64 bytes) */
  if (ALIGN8(cur_used) + sizeof o <= cur_size) {
    cur_used = ALIGN8(cur_used);
    memcpy(cur + cur_used, &o, sizeof o);
    cur_used += sizeof o;
    cur_count++;
  }
}

static void convert_times(struct pending *p, int64_t off, int complete) {
  if (!p->gpu_times) return;
#define CONV(field)                                                                                \
  p->rec.field = complete && p->rec.field ? (uint64_t)((int64_t)p->rec.field + off) : 0
  switch (p->rec.a.kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    CONV(k.start);
    CONV(k.end);
    CONV(k.completed);
    break;
  case CUPTI_ACTIVITY_KIND_MEMCPY:
    CONV(m.start);
    CONV(m.end);
    break;
  case CUPTI_ACTIVITY_KIND_MEMSET:
    CONV(s.start);
    CONV(s.end);
    break;
  case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
    CONV(g.start);
    CONV(g.end);
    break;
  default: break;
  }
#undef CONV
}

/* Moves the pending records whose GPU work has ended (forced: all) into buffers. They are taken
 * out of pend[] first: put_record may release M, and another thread may emit or move meanwhile. */
static void move_pending(int forced) {
  if (!npend) return;
  struct pending *out = malloc(npend * sizeof *out);
  if (!out) return; /* try again at the next tick */
  uint64_t now = clock_ns(CLOCK_MONOTONIC);
  size_t keep = 0, nout = 0;
  for (size_t i = 0; i < npend; i++) {
    if (pend[i].done <= now || forced)
      out[nout++] = pend[i];
    else
      pend[keep++] = pend[i];
  }
  npend = keep;
  int64_t off = clock_offset();
  for (size_t i = 0; i < nout; i++) {
    convert_times(&out[i], off, out[i].done <= now);
    put_record(&out[i].rec, out[i].size);
  }
  free(out);
}

/* ---------------------------------------------------------------- delivery */

/* The ready buffers and, in *complete, the callback to hand them to (read under M). */
static struct ready *take_ready(CUpti_BuffersCallbackCompleteFunc *complete) {
  struct ready *r = ready_head;
  ready_head = ready_tail = NULL;
  if (r) in_delivery++;
  *complete = buf_complete;
  return r;
}

static void deliver(struct ready *r, CUpti_BuffersCallbackCompleteFunc complete) {
  if (!r) return;
  while (r) {
    struct ready *next = r->next;
    if (complete) complete(NULL, 0, r->buf, r->size, r->valid);
    free(r);
    r = next;
  }
  pthread_mutex_lock(&M);
  in_delivery--;
  pthread_cond_broadcast(&state_cv);
  pthread_mutex_unlock(&M);
}

/* CUPTI's worker: completes GPU records as the simulated work ends, hands full buffers back. */
static void *worker(void *arg) {
  (void)arg;
  pthread_mutex_lock(&M);
  for (;;) {
    uint32_t ms = flush_period_ms ? flush_period_ms : 10;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    ts.tv_sec += ms / 1000 + ts.tv_nsec / 1000000000L;
    ts.tv_nsec %= 1000000000L;
    pthread_cond_timedwait(&work_cv, &M, &ts);
    move_pending(0);
    CUpti_BuffersCallbackCompleteFunc complete;
    struct ready *r = take_ready(&complete);
    pthread_mutex_unlock(&M);
    deliver(r, complete);
    pthread_mutex_lock(&M);
  }
  return NULL;
}

static void start_worker(void) {
  if (worker_started) return;
  pthread_t t;
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  /* the worker must not take signals meant for the application */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  if (pthread_create(&t, &at, worker, NULL) == 0) worker_started = 1;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_attr_destroy(&at);
}

/* ---------------------------------------------------------------- the driver's view */

static int client_api_enabled(CUpti_CallbackDomain d, uint32_t cbid) {
  if (d == CUPTI_CB_DOMAIN_RUNTIME_API)
    return cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE && __atomic_load_n(&rt_api[cbid], __ATOMIC_RELAXED);
  if (d == CUPTI_CB_DOMAIN_DRIVER_API)
    return cbid < CUPTI_DRIVER_TRACE_CBID_SIZE && __atomic_load_n(&drv_api[cbid], __ATOMIC_RELAXED);
  return 0;
}

static int client_kind_enabled(CUpti_ActivityKind k) {
  return (unsigned)k < CUPTI_ACTIVITY_KIND_COUNT && __atomic_load_n(&kinds[k], __ATOMIC_RELAXED);
}

static uint32_t client_thread_id(void) {
  if (tid_type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) return (uint32_t)syscall(SYS_gettid);
  return (uint32_t)pthread_self();
}

static void client_emit(const void *rec, size_t size, uint64_t done, int gpu_times) {
  if (size > sizeof(((struct pending *)0)->rec)) return;
  pthread_mutex_lock(&M);
  if (!done && !gpu_times) {
    put_record(rec, size);
  } else {
    if (npend == cap_pend) {
      size_t nc = cap_pend ? cap_pend * 2 : 256;
      struct pending *np = realloc(pend, nc * sizeof *np);
      if (!np) {
        dropped++;
        pthread_mutex_unlock(&M);
        return;
      }
      pend = np;
      cap_pend = nc;
    }
    struct pending *p = &pend[npend++];
    p->done = done;
    p->size = (uint32_t)size;
    p->gpu_times = (uint8_t)gpu_times;
    memcpy(&p->rec, rec, size);
  }
  pthread_mutex_unlock(&M);
}

static int client_runtime_visible(void) { return !__atomic_load_n(&finalized, __ATOMIC_RELAXED); }

static const struct stub_cupti_client client = {sizeof(struct stub_cupti_client),
                                                client_api_enabled,
                                                client_kind_enabled,
                                                cupti_now,
                                                client_thread_id,
                                                client_emit,
                                                client_runtime_visible};

/* STUB_CUPTI_LOG: one line appended (O_APPEND: a fork child's lines too). */
static void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_line(const char *fmt, ...) {
  const char *path = getenv("STUB_CUPTI_LOG");
  if (!path || !*path) return;
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n <= 0 || (size_t)n >= sizeof buf) return;
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;
  ssize_t w = write(fd, buf, (size_t)n);
  (void)w;
  close(fd);
}

/* Attaches to the (stub) driver the way real CUPTI reaches it: dlopen + cuGetExportTable. */
static CUptiResult attach(void) {
  pthread_mutex_lock(&M);
  int done = attached;
  pthread_mutex_unlock(&M);
  if (done) return driver ? CUPTI_SUCCESS : CUPTI_ERROR_NOT_INITIALIZED;
  const struct stub_cupti_table *t = NULL;
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h) {
    CUresult (*get)(const void **, const CUuuid *) =
        (CUresult(*)(const void **, const CUuuid *))dlsym(h, "cuGetExportTable");
    const void *p = NULL;
    if (get && get(&p, &STUB_CUPTI_TABLE_ID) == CUDA_SUCCESS) t = p;
  }
  pthread_mutex_lock(&M);
  int now_attached = 0;
  if (!attached) {
    attached = 1;
    driver = t;
    if (t) t->attach(&client);
    now_attached = ++attaches;
  }
  pthread_mutex_unlock(&M);
  if (now_attached)
    log_line("attach %llu %d\n", (unsigned long long)clock_ns(CLOCK_MONOTONIC), now_attached);
  /* an attach after a cuptiFinalize takes its time, as the H200's 5.6-13.5 ms (GPU run 38) */
  const char *slow = getenv("STUB_CUPTI_ATTACH_MS");
  if (now_attached > 1 && slow && atoi(slow) > 0) {
    struct timespec ts = {atoi(slow) / 1000, (long)(atoi(slow) % 1000) * 1000000L};
    nanosleep(&ts, NULL);
  }
  return driver ? CUPTI_SUCCESS : CUPTI_ERROR_NOT_INITIALIZED;
}

/* ---------------------------------------------------------------- the CUPTI API */

CUptiResult cuptiGetVersion(uint32_t *version) {
  if (!version) return CUPTI_ERROR_INVALID_PARAMETER;
  const char *e = getenv("STUB_CUPTI_VERSION");
  *version = e && *e ? (uint32_t)strtoul(e, NULL, 10) : CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult result, const char **str) {
  if (!str) return CUPTI_ERROR_INVALID_PARAMETER;
  switch (result) {
#define R(x)                                                                                       \
  case x: *str = #x; break;
    R(CUPTI_SUCCESS)
    R(CUPTI_ERROR_INVALID_PARAMETER)
    R(CUPTI_ERROR_INVALID_DEVICE)
    R(CUPTI_ERROR_INVALID_CONTEXT)
    R(CUPTI_ERROR_INVALID_KIND)
    R(CUPTI_ERROR_MAX_LIMIT_REACHED)
    R(CUPTI_ERROR_NOT_INITIALIZED)
    R(CUPTI_ERROR_INVALID_OPERATION)
    R(CUPTI_ERROR_NOT_COMPATIBLE)
    R(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
    R(CUPTI_ERROR_UNKNOWN)
#undef R
  default: *str = "CUPTI_ERROR_UNKNOWN"; return CUPTI_ERROR_INVALID_PARAMETER;
  }
  return CUPTI_SUCCESS;
}

struct CUpti_Subscriber_st {
  CUpti_CallbackFunc cb;
  void *userdata;
};

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                           void *userdata) {
  if (!subscriber) return CUPTI_ERROR_INVALID_PARAMETER;
  if (taken()) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  pthread_mutex_lock(&M);
  if (subscribed) {
    pthread_mutex_unlock(&M);
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  struct CUpti_Subscriber_st *s = malloc(sizeof *s);
  if (!s) {
    pthread_mutex_unlock(&M);
    return CUPTI_ERROR_OUT_OF_MEMORY;
  }
  s->cb = callback;
  s->userdata = userdata;
  subscribed = 1;
  pthread_mutex_unlock(&M);
  *subscriber = s;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
  if (!subscriber) return CUPTI_ERROR_INVALID_PARAMETER;
  pthread_mutex_lock(&M);
  subscribed = 0;
  pthread_mutex_unlock(&M);
  free(subscriber);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f) {
  if (!f) return CUPTI_ERROR_INVALID_PARAMETER;
  __atomic_store_n(&ts_callback, f, __ATOMIC_RELEASE);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                           CUpti_BuffersCallbackCompleteFunc done) {
  if (!req || !done) return CUPTI_ERROR_INVALID_PARAMETER;
  if (taken()) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  CUptiResult r = attach();
  if (r) return r;
  pthread_mutex_lock(&M);
  buf_request = req;
  buf_complete = done;
  start_worker();
  pthread_mutex_unlock(&M);
  return CUPTI_SUCCESS;
}

static CUptiResult set_kind(CUpti_ActivityKind kind, uint8_t on) {
  if ((unsigned)kind >= CUPTI_ACTIVITY_KIND_COUNT || kind == CUPTI_ACTIVITY_KIND_INVALID)
    return CUPTI_ERROR_INVALID_KIND;
  if (on && taken()) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  CUptiResult r = attach();
  if (r) return r;
  pthread_mutex_lock(&M);
  __atomic_store_n(&kinds[kind], on, __ATOMIC_RELAXED);
  /* the kind RUNTIME/DRIVER overrides the per-cbid settings made before it */
  if (kind == CUPTI_ACTIVITY_KIND_RUNTIME) memset(rt_api, on, sizeof rt_api);
  if (kind == CUPTI_ACTIVITY_KIND_DRIVER) memset(drv_api, on, sizeof drv_api);
  int warn = on && kind == CUPTI_ACTIVITY_KIND_KERNEL && !warned_kernel_kind;
  if (warn) warned_kernel_kind = 1;
  pthread_mutex_unlock(&M);
  if (warn)
    fprintf(stderr, "stub CUPTI: CUPTI_ACTIVITY_KIND_KERNEL enabled: real CUPTI serializes every "
                    "kernel with it\n");
  if (on && (kind == CUPTI_ACTIVITY_KIND_DEVICE || kind == CUPTI_ACTIVITY_KIND_CONTEXT))
    driver->kind_enabled(kind);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) { return set_kind(kind, 1); }
CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) { return set_kind(kind, 0); }

CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) {
  CUptiResult r = attach();
  if (r) return r;
  if (cbid >= CUPTI_RUNTIME_TRACE_CBID_SIZE) return CUPTI_ERROR_INVALID_PARAMETER;
  __atomic_store_n(&rt_api[cbid], enable ? 1 : 0, __ATOMIC_RELAXED);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) {
  CUptiResult r = attach();
  if (r) return r;
  if (cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE) return CUPTI_ERROR_INVALID_PARAMETER;
  __atomic_store_n(&drv_api[cbid], enable ? 1 : 0, __ATOMIC_RELAXED);
  return CUPTI_SUCCESS;
}

/* Names as real CUPTI gives them: the cbid enumerator without its prefix ("cudaLaunchKernel_v7000",
 * "cuLaunchKernel"), from the real cupti_*_cbid.h (build/stub/cbid_names.h is generated). */
CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char **name) {
  if (!name) return CUPTI_ERROR_INVALID_PARAMETER;
  const char *n = NULL;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (cbid) {
#define X(id, s)                                                                                   \
  case id: n = s; break;
      STUB_RUNTIME_CBID_NAMES(X)
#undef X
    default: break;
    }
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    switch (cbid) {
#define X(id, s)                                                                                   \
  case id: n = s; break;
      STUB_DRIVER_CBID_NAMES(X)
#undef X
    default: break;
    }
  }
  if (!n) return CUPTI_ERROR_INVALID_PARAMETER;
  *name = n;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record) {
  if (!buffer || !record) return CUPTI_ERROR_INVALID_PARAMETER;
  uint8_t *base = (uint8_t *)ALIGN8((uintptr_t)buffer), *end = buffer + valid, *p;
  if (!*record) {
    p = base;
  } else {
    size_t sz = record_size((*record)->kind);
    if (!sz) return CUPTI_ERROR_INVALID_KIND;
    p = (uint8_t *)ALIGN8((uintptr_t)((uint8_t *)*record + sz));
  }
  if (p >= end || (size_t)(end - p) < sizeof(CUpti_Activity)) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  size_t sz = record_size(((CUpti_Activity *)p)->kind);
  if (!sz || (size_t)(end - p) < sz) return CUPTI_ERROR_INVALID_KIND;
  *record = (CUpti_Activity *)p;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId, size_t *out) {
  (void)context, (void)streamId;
  if (!out) return CUPTI_ERROR_INVALID_PARAMETER;
  pthread_mutex_lock(&M);
  *out = dropped;
  dropped = 0;
  pthread_mutex_unlock(&M);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushAll(uint32_t flag) {
  pthread_mutex_lock(&M);
  if (!buf_complete) {
    pthread_mutex_unlock(&M);
    return CUPTI_ERROR_INVALID_OPERATION;
  }
  int forced = (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0;
  move_pending(forced);
  while (requesting)
    pthread_cond_wait(&state_cv, &M);
  if (cur && (cur_count || forced)) retire_current();
  CUpti_BuffersCallbackCompleteFunc complete;
  struct ready *r = take_ready(&complete);
  pthread_mutex_unlock(&M);
  deliver(r, complete);
  /* blocking: every buffer the worker is handing over is delivered before returning */
  pthread_mutex_lock(&M);
  while (in_delivery)
    pthread_cond_wait(&state_cv, &M);
  pthread_mutex_unlock(&M);
  return CUPTI_SUCCESS;
}

/* Detaches from the driver: no record and no per-call cost from here on. Real CUPTI expects the
 * client to have flushed first: records not handed over (GPU work still running, the current
 * buffer) are lost, counted in STUB_CUPTI_LOG. The callbacks, the clock and the thread id type
 * are forgotten; the next CUPTI call attaches again, seeing no runtime API call from then on. */
CUptiResult cuptiFinalize(void) {
  const char *slow = getenv("STUB_CUPTI_FINALIZE_MS");
  if (slow && atol(slow) > 0) {
    struct timespec ts = {atol(slow) / 1000, (atol(slow) % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
      ;
  }
  pthread_mutex_lock(&M);
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
    __atomic_store_n(&kinds[k], 0, __ATOMIC_RELAXED);
  memset(rt_api, 0, sizeof rt_api);
  memset(drv_api, 0, sizeof drv_api);
  const struct stub_cupti_table *t = driver;
  int was = attached;
  size_t lost = npend + (cur ? cur_count : 0);
  for (struct ready *r = ready_head; r; r = r->next)
    lost++; /* a whole buffer, counted once */
  npend = 0;
  cur = NULL; /* the client's memory: left to it, as real CUPTI would */
  ready_head = ready_tail = NULL;
  attached = 0;
  __atomic_store_n(&finalized, 1, __ATOMIC_RELAXED);
  buf_request = NULL;
  buf_complete = NULL;
  __atomic_store_n(&ts_callback, NULL, __ATOMIC_RELEASE);
  tid_type = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
  pthread_mutex_unlock(&M);
  if (t) t->attach(NULL);
  if (was) log_line("finalize %llu %zu\n", (unsigned long long)clock_ns(CLOCK_MONOTONIC), lost);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushPeriod(uint32_t time) {
  pthread_mutex_lock(&M);
  flush_period_ms = time;
  pthread_cond_signal(&work_cv);
  pthread_mutex_unlock(&M);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t *size, void *value) {
  if (!size || !value) return CUPTI_ERROR_INVALID_PARAMETER;
  if (attr == CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER) {
    if (*size < sizeof(uint8_t)) return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&M);
    zeroed_by_client = *(uint8_t *)value ? 1 : 0;
    pthread_mutex_unlock(&M);
  }
  return CUPTI_SUCCESS; /* other attributes are accepted and have no effect here */
}

CUptiResult cuptiActivityGetAttribute(CUpti_ActivityAttribute attr, size_t *size, void *value) {
  if (!size || !value) return CUPTI_ERROR_INVALID_PARAMETER;
  if (attr == CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER) {
    if (*size < sizeof(uint8_t)) return CUPTI_ERROR_INVALID_PARAMETER;
    *(uint8_t *)value = zeroed_by_client;
    *size = sizeof(uint8_t);
    return CUPTI_SUCCESS;
  }
  return CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type) {
  if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT && type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
    return CUPTI_ERROR_INVALID_PARAMETER;
  /* as the real CUPTI 13 answers on a machine without a GPU (the issue that asked slack to say
   * "no CUDA device" plainly saw this): STUB_NO_GPU makes the stand-in do the same */
  const char *ng = getenv("STUB_NO_GPU");
  if (ng && *ng && strcmp(ng, "0")) return CUPTI_ERROR_UNKNOWN;
  tid_type = type;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetThreadIdType(CUpti_ActivityThreadIdType *type) {
  if (!type) return CUPTI_ERROR_INVALID_PARAMETER;
  *type = tid_type;
  return CUPTI_SUCCESS;
}

/* Through the driver (stub_cupti_table.stream_id): the id the stream's activity records carry.
 * As the real one's header says: a non-null context must be the stream's; the null stream is the
 * legacy one of the context (here the calling thread's current one when context is NULL), or
 * the thread's per-thread stream with perThreadStream. */
CUptiResult cuptiGetStreamIdEx(CUcontext context, CUstream stream, uint8_t perThreadStream,
                               uint32_t *streamId) {
  if (!streamId) return CUPTI_ERROR_INVALID_PARAMETER;
  CUptiResult r = attach();
  if (r != CUPTI_SUCCESS) return r;
  CUresult d = driver->stream_id(context, stream, perThreadStream, streamId);
  if (d == CUDA_ERROR_INVALID_CONTEXT) return CUPTI_ERROR_INVALID_CONTEXT;
  return d == CUDA_SUCCESS ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_STREAM;
}

CUptiResult cuptiGetDeviceId(CUcontext context, uint32_t *deviceId) {
  if (!deviceId) return CUPTI_ERROR_INVALID_PARAMETER;
  CUptiResult r = attach();
  if (r != CUPTI_SUCCESS) return r;
  return driver->ctx_device(context, deviceId) == CUDA_SUCCESS ? CUPTI_SUCCESS
                                                               : CUPTI_ERROR_INVALID_CONTEXT;
}

CUptiResult cuptiGetTimestamp(uint64_t *timestamp) {
  if (!timestamp) return CUPTI_ERROR_INVALID_PARAMETER;
  *timestamp = cupti_now();
  return CUPTI_SUCCESS;
}

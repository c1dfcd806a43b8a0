/* Test-only stand-in for the CUDA driver (build/stub/libcuda.so.1): a GPU simulated on the CPU.
 * Never installed or shipped; its timings are never GPU measurements.
 *
 * - Exports the real driver symbol names (cuda.h's macros give the _v2 names) with the real
 *   prototypes, and hands every one out through cuGetProcAddress(_v2) by base name, version and
 *   per-thread-stream flag, as the real driver does.
 * - Each stream has a virtual clock: work starts at max(now + launch latency, the stream's last
 *   end, the legacy stream's implicit dependencies) and lasts the kernel's duration or
 *   bytes / bandwidth. Synchronizing calls wait (sleep, then spin) until the simulated end, so the
 *   host really waits. Copies and memsets really move the bytes (device memory is host memory).
 * - When the stub CUPTI is attached, emits CUPTI 13.0 records in the real struct layouts:
 *   CUpti_ActivityKernel10, Memcpy6, Memset4, Synchronization2 (never for cuCtxSynchronize, as
 *   CUPTI 13.0 GA), GraphTrace2, Device5, Context3 and CUpti_ActivityAPI for the runtime and
 *   driver calls CUPTI asked for. A kernel, copy or memset carries the correlation id of the API
 *   call that submitted it (the runtime call when made through cudart, whose driver calls are
 *   internal and get no record of their own; once CUPTI was detached and attached again, no
 *   runtime record and no driver record either: the work of cudart's calls carries a
 *   correlation id that no API record has, as CUPTI 13.0 did on the H200 in GPU run 38).
 *
 * Environment: STUB_NO_GPU=1 (cuInit fails with CUDA_ERROR_NO_DEVICE), STUB_DEVICES=n (1..8),
 * STUB_KERNEL_NS (duration of kernels that name none), STUB_CUPTI_LAUNCH_NS (host time a kernel
 * launch spends while CUPTI records kernels: the cost of real CUPTI's kernel record),
 * STUB_CUPTI_API_NS (host time a driver call made by the program spends while CUPTI records its
 * API record), STUB_PTX_LOAD_MS (cuModuleLoadData of a PTX image, the JIT compiler's work, first
 * waits that long: a large n, the load that never returned at exit in GPU run 101).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cudaProfiler.h>

#include "stub_internal.h"

#define MAGIC_CTX 0x43545831u
#define MAGIC_STREAM 0x53545231u
#define MAGIC_EVENT 0x45564e31u
#define MAGIC_FUNC 0x46554e31u
#define MAGIC_MOD 0x4d4f4431u
#define MAGIC_GRAPH 0x47524131u
#define MAGIC_EXEC 0x47455831u
#define MAX_DEVICES 8

/* Bandwidths in bytes per ns (= GB/s) and fixed costs of the simulated engines. */
#define BW_PINNED 50u
#define BW_PAGEABLE 10u
#define BW_DEVICE 1000u
#define COPY_FIXED_NS 1500u
#define MEMSET_FIXED_NS 1000u

struct CUctx_st {
  uint32_t magic, id;
  int device;
  int refs;
  struct CUstream_st *legacy;
  uint64_t last_end; /* latest simulated end of any work in this context */
};

struct CUstream_st {
  uint32_t magic, id;
  struct CUctx_st *ctx;
  unsigned flags;
  int legacy;
  int alive;
  uint64_t last_end;
  struct CUgraph_st *capture; /* non-NULL while capturing */
  struct CUstream_st *next;   /* all streams ever created */
};

struct CUevent_st {
  uint32_t magic, id;
  unsigned flags;
  int recorded;
  uint64_t time; /* simulated completion */
  uint32_t stream_id;
  struct CUctx_st *ctx;
};

struct CUfunc_st {
  uint32_t magic;
  char *name;
  uint64_t ns;
};

struct CUmod_st {
  uint32_t magic;
  size_t n;
  struct CUfunc_st **fn;
};

enum op_kind { OP_KERNEL = 1, OP_COPY, OP_SET };

/* One unit of GPU work: submitted directly or stored as a graph node. */
struct op {
  int kind;
  uint64_t node_id;
  /* kernel */
  struct CUfunc_st *f;
  unsigned grid[3], block[3], smem, cluster[3];
  uint8_t launch_type;
  /* copy */
  uint8_t copy_kind, src_kind, dst_kind;
  void *dst;
  const void *src;
  size_t width, height, spitch, dpitch; /* bytes = width * height */
  /* memset */
  uint32_t value;
  unsigned elem;
  int async;
};

struct CUgraph_st {
  uint32_t magic, id;
  struct op *v;
  size_t n, cap;
};

struct CUgraphExec_st {
  uint32_t magic, id;
  struct CUgraph_st *g;
};

struct alloc {
  uintptr_t base;
  size_t size;
  uint8_t kind; /* CUPTI_ACTIVITY_MEMORY_KIND_DEVICE or _PINNED */
};

static pthread_mutex_t G = PTHREAD_MUTEX_INITIALIZER; /* all simulated GPU state */
static int initialized;                               /* cuInit succeeded */
static int ndev = 1;
static uint64_t default_kernel_ns = STUB_DEFAULT_KERNEL_NS;
static uint64_t cupti_launch_ns; /* STUB_CUPTI_LAUNCH_NS */
static uint64_t cupti_api_ns;    /* STUB_CUPTI_API_NS */
static struct CUctx_st *primary[MAX_DEVICES];
static struct CUstream_st *streams;
static uint32_t next_stream_id = STUB_FIRST_STREAM_ID;
static uint32_t next_event_id = 1, next_graph_id = 1, next_ctx_id = 1;
static uint64_t next_node_id = 1;
static int64_t next_grid_id = 1;
static struct alloc *allocs;
static size_t nallocs, cap_allocs;
static int device_records_sent;
static uint32_t corr_counter;
static const struct stub_cupti_client *cupti;

static __thread struct {
  struct CUctx_st *ctx;
  struct CUstream_st *ptds[MAX_DEVICES];
  int rt_depth;
  uint32_t rt_cbid, rt_corr, rt_result;
  uint8_t rt_record;
  uint64_t rt_t0;
} T;

/* ---------------------------------------------------------------- time */

static uint64_t mono(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The host waits for the simulated GPU: sleep most of the way, spin the rest. */
static void wait_until(uint64_t t) {
  for (;;) {
    uint64_t n = mono();
    if (n >= t) return;
    uint64_t d = t - n;
    if (d > 200000) {
      d -= 100000;
      struct timespec ts = {(time_t)(d / 1000000000ull), (long)(d % 1000000000ull)};
      nanosleep(&ts, NULL);
    } else {
      sched_yield();
    }
  }
}

/* ---------------------------------------------------------------- CUPTI glue */

static const struct stub_cupti_client *client(void) {
  return __atomic_load_n(&cupti, __ATOMIC_ACQUIRE);
}

static int kind_on(CUpti_ActivityKind k) {
  const struct stub_cupti_client *c = client();
  return c && c->kind_enabled(k);
}

static uint32_t next_corr(void) { return __atomic_add_fetch(&corr_counter, 1, __ATOMIC_RELAXED); }

static void emit_api(CUpti_ActivityKind kind, uint32_t cbid, uint64_t t0, uint32_t corr,
                     uint32_t result) {
  const struct stub_cupti_client *c = client();
  if (!c) return;
  CUpti_ActivityAPI a;
  memset(&a, 0, sizeof a);
  a.kind = kind;
  a.cbid = cbid;
  a.start = t0;
  a.end = c->now();
  a.processId = (uint32_t)getpid();
  a.threadId = c->thread_id();
  a.correlationId = corr;
  a.returnValue = result;
  c->emit(&a, sizeof a, 0, 0);
}

/* A driver API call: its correlation id, and whether CUPTI wants its record. */
struct api {
  uint32_t cbid, corr, rt_corr;
  uint8_t record;
  uint64_t t0;
};

static int runtime_visible(void) {
  const struct stub_cupti_client *c = client();
  return !c || c->runtime_visible();
}

static void api_begin(struct api *a, uint32_t cbid) {
  a->cbid = cbid;
  a->record = 0;
  if (T.rt_depth && runtime_visible()) { /* made by cudart inside a runtime call: internal */
    a->corr = T.rt_corr;
    a->rt_corr = T.rt_corr;
    return;
  }
  if (T.rt_depth) { /* CUPTI attached again after cuptiFinalize: cudart's driver calls get a
                     * correlation id of their own and no record, runtime or driver (CUPTI 13.0
                     * on the H200, GPU run 38: only cuKernelGetName came as a driver record) */
    a->corr = next_corr();
    a->rt_corr = 0;
    return;
  }
  a->corr = next_corr();
  a->rt_corr = 0;
  const struct stub_cupti_client *c = client();
  if (c && c->api_enabled(CUPTI_CB_DOMAIN_DRIVER_API, cbid)) {
    a->record = 1;
    a->t0 = c->now();
    uint64_t until = mono() + cupti_api_ns; /* what CUPTI's API record costs a call */
    while (cupti_api_ns && mono() < until) {
    }
  }
}

static CUresult api_end(struct api *a, CUresult r) {
  if (a->record) emit_api(CUPTI_ACTIVITY_KIND_DRIVER, a->cbid, a->t0, a->corr, (uint32_t)r);
  return r;
}

#define API(cbid_name)                                                                             \
  struct api A_;                                                                                   \
  api_begin(&A_, CUPTI_DRIVER_TRACE_CBID_##cbid_name)
#define RET(r) return api_end(&A_, (r))

static void rt_api_enter(uint32_t cbid) {
  if (T.rt_depth++) return;
  T.rt_cbid = cbid;
  T.rt_corr = next_corr();
  T.rt_record = 0;
  const struct stub_cupti_client *c = client();
  if (c && c->runtime_visible() && c->api_enabled(CUPTI_CB_DOMAIN_RUNTIME_API, cbid)) {
    T.rt_record = 1;
    T.rt_t0 = c->now();
  }
}

static void rt_api_exit(uint32_t result) {
  if (T.rt_depth <= 0 || --T.rt_depth) return;
  if (T.rt_record) emit_api(CUPTI_ACTIVITY_KIND_RUNTIME, T.rt_cbid, T.rt_t0, T.rt_corr, result);
}

static void emit_device_record(int dev) {
  const struct stub_cupti_client *c = client();
  if (!c) return;
  static const char *names[MAX_DEVICES] = {
      "Stub GPU 0 (CPU simulation)", "Stub GPU 1 (CPU simulation)", "Stub GPU 2 (CPU simulation)",
      "Stub GPU 3 (CPU simulation)", "Stub GPU 4 (CPU simulation)", "Stub GPU 5 (CPU simulation)",
      "Stub GPU 6 (CPU simulation)", "Stub GPU 7 (CPU simulation)"};
  CUpti_ActivityDevice5 d;
  memset(&d, 0, sizeof d);
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.globalMemoryBandwidth = 4800000000ull; /* KB/s */
  d.globalMemorySize = 141ull << 30;
  d.constantMemorySize = 65536;
  d.l2CacheSize = 50u << 20;
  d.numThreadsPerWarp = 32;
  d.coreClockRate = 1980000;
  d.numMemcpyEngines = 7;
  d.numMultiprocessors = 132;
  d.maxIPC = 4;
  d.maxWarpsPerMultiprocessor = 64;
  d.maxBlocksPerMultiprocessor = 32;
  d.maxSharedMemoryPerMultiprocessor = 233472;
  d.maxRegistersPerMultiprocessor = 65536;
  d.maxRegistersPerBlock = 65536;
  d.maxSharedMemoryPerBlock = 49152;
  d.maxThreadsPerBlock = 1024;
  d.maxBlockDimX = 1024;
  d.maxBlockDimY = 1024;
  d.maxBlockDimZ = 64;
  d.maxGridDimX = 2147483647u;
  d.maxGridDimY = 65535;
  d.maxGridDimZ = 65535;
  d.computeCapabilityMajor = 9;
  d.computeCapabilityMinor = 0;
  d.id = (uint32_t)dev;
  d.uuid.bytes[0] = 's';
  d.uuid.bytes[15] = (char)dev;
  d.name = names[dev];
  d.isCudaVisible = 1;
  d.numaId = (uint32_t)-1;
  c->emit(&d, sizeof d, 0, 0);
}

static void emit_context_record(const struct CUctx_st *ctx) {
  const struct stub_cupti_client *c = client();
  if (!c) return;
  CUpti_ActivityContext3 r;
  memset(&r, 0, sizeof r);
  r.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  r.contextId = ctx->id;
  r.deviceId = (uint32_t)ctx->device;
  r.computeApiKind = CUPTI_ACTIVITY_COMPUTE_API_CUDA;
  r.nullStreamId = (uint16_t)STUB_LEGACY_STREAM_ID;
  r.numMultiprocessors = 132;
  r.cigMode = CUPTI_CONTEXT_CIG_MODE_NONE;
  c->emit(&r, sizeof r, 0, 0);
}

/* CUPTI just enabled kind: report what already exists (real CUPTI does the same). */
static void cupti_kind_enabled(CUpti_ActivityKind kind) {
  pthread_mutex_lock(&G);
  int init = initialized;
  struct CUctx_st *ctxs[MAX_DEVICES];
  memcpy(ctxs, primary, sizeof ctxs);
  if (kind == CUPTI_ACTIVITY_KIND_DEVICE && init) device_records_sent = 1;
  pthread_mutex_unlock(&G);
  if (!init) return;
  for (int d = 0; d < ndev; d++) {
    if (kind == CUPTI_ACTIVITY_KIND_DEVICE) emit_device_record(d);
    if (kind == CUPTI_ACTIVITY_KIND_CONTEXT && ctxs[d]) emit_context_record(ctxs[d]);
  }
}

static void cupti_attach(const struct stub_cupti_client *c) {
  __atomic_store_n(&cupti, c, __ATOMIC_RELEASE);
}

static CUfunction kernel_create(const char *name, uint64_t ns);
static CUresult cupti_stream_id(CUcontext ctx, CUstream h, int per_thread, uint32_t *id);
static CUresult cupti_ctx_device(CUcontext ctx, uint32_t *device);

static const struct stub_rt_table rt_table = {sizeof(struct stub_rt_table), rt_api_enter,
                                              rt_api_exit, kernel_create};
static const struct stub_cupti_table cupti_table = {sizeof(struct stub_cupti_table), cupti_attach,
                                                    cupti_kind_enabled, cupti_stream_id,
                                                    cupti_ctx_device};

/* ---------------------------------------------------------------- memory registry */

static void alloc_add(void *p, size_t size, uint8_t kind) {
  pthread_mutex_lock(&G);
  if (nallocs == cap_allocs) {
    size_t nc = cap_allocs ? cap_allocs * 2 : 64;
    struct alloc *na = realloc(allocs, nc * sizeof *na);
    if (!na) {
      pthread_mutex_unlock(&G);
      return;
    }
    allocs = na;
    cap_allocs = nc;
  }
  allocs[nallocs++] = (struct alloc){(uintptr_t)p, size, kind};
  pthread_mutex_unlock(&G);
}

/* Removes the allocation starting at p; 1 if it was there with this kind. */
static int alloc_remove(void *p, uint8_t kind) {
  int found = 0;
  pthread_mutex_lock(&G);
  for (size_t i = 0; i < nallocs; i++)
    if (allocs[i].base == (uintptr_t)p && allocs[i].kind == kind) {
      allocs[i] = allocs[--nallocs];
      found = 1;
      break;
    }
  pthread_mutex_unlock(&G);
  return found;
}

/* CUPTI memory kind of [p, p+n): DEVICE or PINNED when inside an allocation, else PAGEABLE. */
static uint8_t mem_kind(const void *p, size_t n) {
  uintptr_t a = (uintptr_t)p;
  uint8_t k = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  pthread_mutex_lock(&G);
  for (size_t i = 0; i < nallocs; i++)
    if (a >= allocs[i].base && a + n <= allocs[i].base + allocs[i].size) {
      k = allocs[i].kind;
      break;
    }
  pthread_mutex_unlock(&G);
  return k;
}

static int is_device(const void *p, size_t n) {
  return mem_kind(p, n) == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
}

/* ---------------------------------------------------------------- contexts and streams */

static struct CUstream_st *stream_new(struct CUctx_st *ctx, unsigned flags, int legacy) {
  struct CUstream_st *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->magic = MAGIC_STREAM;
  s->ctx = ctx;
  s->flags = flags;
  s->legacy = legacy;
  s->alive = 1;
  pthread_mutex_lock(&G);
  s->id = legacy ? STUB_LEGACY_STREAM_ID : next_stream_id++;
  s->next = streams;
  streams = s;
  pthread_mutex_unlock(&G);
  return s;
}

static struct CUctx_st *primary_ctx(int dev) {
  pthread_mutex_lock(&G);
  struct CUctx_st *c = primary[dev];
  pthread_mutex_unlock(&G);
  if (c) return c;
  struct CUctx_st *n = calloc(1, sizeof *n);
  if (!n) return NULL;
  n->magic = MAGIC_CTX;
  n->device = dev;
  pthread_mutex_lock(&G);
  if (primary[dev]) { /* another thread won */
    c = primary[dev];
    pthread_mutex_unlock(&G);
    free(n);
    return c;
  }
  n->id = next_ctx_id++;
  primary[dev] = n;
  pthread_mutex_unlock(&G);
  n->legacy = stream_new(n, 0, 1);
  if (kind_on(CUPTI_ACTIVITY_KIND_CONTEXT)) emit_context_record(n);
  return n;
}

static int valid_stream(const struct CUstream_st *s) {
  return s && s->magic == MAGIC_STREAM && s->alive;
}

/* The stream a handle names; NULL is the legacy stream, or the per-thread one for _ptsz calls. */
static CUresult resolve_stream(CUstream h, int ptsz, struct CUstream_st **out) {
  if (h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
    struct CUctx_st *ctx = T.ctx;
    if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
    if (h == CU_STREAM_PER_THREAD || (h == NULL && ptsz)) {
      if (!T.ptds[ctx->device]) T.ptds[ctx->device] = stream_new(ctx, 0, 0);
      *out = T.ptds[ctx->device];
    } else {
      *out = ctx->legacy;
    }
    return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (!valid_stream(h)) return CUDA_ERROR_INVALID_HANDLE;
  *out = h;
  return CUDA_SUCCESS;
}

/* CUPTI asks (stub_cupti_table.stream_id): the id the records of h's stream carry. */
static CUresult cupti_stream_id(CUcontext ctx, CUstream h, int per_thread, uint32_t *id) {
  if (!id) return CUDA_ERROR_INVALID_VALUE;
  if (ctx && ctx->magic != MAGIC_CTX) return CUDA_ERROR_INVALID_CONTEXT;
  struct CUstream_st *s;
  if (h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
    struct CUctx_st *c = ctx ? ctx : T.ctx;
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    if (h == CU_STREAM_PER_THREAD || (h == NULL && per_thread)) {
      if (!T.ptds[c->device]) T.ptds[c->device] = stream_new(c, 0, 0);
      s = T.ptds[c->device];
    } else {
      s = c->legacy;
    }
    if (!s) return CUDA_ERROR_OUT_OF_MEMORY;
  } else {
    if (!valid_stream(h)) return CUDA_ERROR_INVALID_HANDLE;
    if (ctx && h->ctx != ctx) return CUDA_ERROR_INVALID_CONTEXT;
    s = h;
  }
  *id = s->id;
  return CUDA_SUCCESS;
}

static CUresult cupti_ctx_device(CUcontext ctx, uint32_t *device) {
  if (!ctx || ctx->magic != MAGIC_CTX) return CUDA_ERROR_INVALID_CONTEXT;
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  *device = (uint32_t)ctx->device;
  return CUDA_SUCCESS;
}

/* Simulated start and end of dur ns of work on s that cannot start before earliest (legacy
 * stream semantics: the legacy stream waits for every blocking stream of its context and they
 * wait for it). */
static uint64_t schedule(struct CUstream_st *s, uint64_t dur, uint64_t earliest, uint64_t *start) {
  pthread_mutex_lock(&G);
  uint64_t t = earliest;
  if (s->last_end > t) t = s->last_end;
  if (s->legacy) {
    for (struct CUstream_st *x = streams; x; x = x->next)
      if (x->ctx == s->ctx && x->alive && !(x->flags & CU_STREAM_NON_BLOCKING) && x->last_end > t)
        t = x->last_end;
  } else if (!(s->flags & CU_STREAM_NON_BLOCKING) && s->ctx->legacy->last_end > t) {
    t = s->ctx->legacy->last_end;
  }
  s->last_end = t + dur;
  if (s->last_end > s->ctx->last_end) s->ctx->last_end = s->last_end;
  pthread_mutex_unlock(&G);
  *start = t;
  return t + dur;
}

static uint64_t stream_end(const struct CUstream_st *s) {
  pthread_mutex_lock(&G);
  uint64_t e = s->last_end;
  pthread_mutex_unlock(&G);
  return e;
}

/* ---------------------------------------------------------------- executing work */

static uint64_t op_bytes(const struct op *o) { return (uint64_t)o->width * o->height; }

static uint64_t op_duration(const struct op *o) {
  if (o->kind == OP_KERNEL) return o->f->ns;
  uint64_t bytes = op_bytes(o);
  if (o->kind == OP_SET) return MEMSET_FIXED_NS + bytes / BW_DEVICE;
  unsigned bw = BW_DEVICE;
  if (o->src_kind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE ||
      o->dst_kind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE)
    bw = BW_PAGEABLE;
  else if (o->src_kind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED ||
           o->dst_kind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED)
    bw = BW_PINNED;
  return COPY_FIXED_NS + bytes / bw;
}

/* The data effect of a copy or memset (done at submission: device memory is host memory). */
static void op_apply(const struct op *o) {
  if (o->kind == OP_COPY) {
    for (size_t r = 0; r < o->height; r++)
      memmove((char *)o->dst + r * o->dpitch, (const char *)o->src + r * o->spitch, o->width);
  } else if (o->kind == OP_SET) {
    for (size_t r = 0; r < o->height; r++) {
      char *row = (char *)o->dst + r * o->dpitch;
      size_t n = o->width / o->elem;
      if (o->elem == 1) {
        memset(row, (int)(o->value & 0xff), n);
      } else if (o->elem == 2) {
        uint16_t v = (uint16_t)o->value;
        for (size_t i = 0; i < n; i++)
          memcpy(row + 2 * i, &v, 2);
      } else {
        for (size_t i = 0; i < n; i++)
          memcpy(row + 4 * i, &o->value, 4);
      }
    }
  }
}

static void emit_op(const struct op *o, const struct CUstream_st *s, uint64_t start, uint64_t end,
                    uint32_t corr, uint32_t rt_corr, uint32_t graph_id) {
  const struct stub_cupti_client *c = client();
  if (!c) return;
  if (o->kind == OP_KERNEL) {
    int conc = c->kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (!conc && !c->kind_enabled(CUPTI_ACTIVITY_KIND_KERNEL)) return;
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = conc ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL : CUPTI_ACTIVITY_KIND_KERNEL;
    k.sharedMemoryConfig = 1;
    k.registersPerThread = 32;
    k.start = start;
    k.end = end;
    k.completed = end;
    k.deviceId = (uint32_t)s->ctx->device;
    k.contextId = s->ctx->id;
    k.streamId = s->id;
    k.gridX = (int32_t)o->grid[0];
    k.gridY = (int32_t)o->grid[1];
    k.gridZ = (int32_t)o->grid[2];
    k.blockX = (int32_t)o->block[0];
    k.blockY = (int32_t)o->block[1];
    k.blockZ = (int32_t)o->block[2];
    k.dynamicSharedMemory = (int32_t)o->smem;
    k.correlationId = corr;
    pthread_mutex_lock(&G);
    k.gridId = next_grid_id++;
    pthread_mutex_unlock(&G);
    k.name = o->f->name;
    k.queued = CUPTI_TIMESTAMP_UNKNOWN;
    k.submitted = CUPTI_TIMESTAMP_UNKNOWN;
    k.launchType = o->launch_type;
    k.sharedMemoryExecuted = o->smem;
    k.graphNodeId = graph_id ? o->node_id : 0;
    k.shmemLimitConfig = CUPTI_FUNC_SHMEM_LIMIT_DEFAULT;
    k.graphId = graph_id;
    k.channelID = 1;
    k.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
    k.clusterX = o->cluster[0];
    k.clusterY = o->cluster[1];
    k.clusterZ = o->cluster[2];
    c->emit(&k, sizeof k, end, 1);
  } else if (o->kind == OP_COPY) {
    if (!c->kind_enabled(CUPTI_ACTIVITY_KIND_MEMCPY)) return;
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = o->copy_kind;
    m.srcKind = o->src_kind;
    m.dstKind = o->dst_kind;
    m.flags = o->async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
    m.bytes = op_bytes(o);
    m.start = start;
    m.end = end;
    m.deviceId = (uint32_t)s->ctx->device;
    m.contextId = s->ctx->id;
    m.streamId = s->id;
    m.correlationId = corr;
    m.runtimeCorrelationId = rt_corr;
    m.graphNodeId = graph_id ? o->node_id : 0;
    m.graphId = graph_id;
    m.channelID = 2;
    m.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
    m.copyCount = 1;
    c->emit(&m, sizeof m, end, 1);
  } else {
    if (!c->kind_enabled(CUPTI_ACTIVITY_KIND_MEMSET)) return;
    CUpti_ActivityMemset4 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.value = o->value;
    m.bytes = op_bytes(o);
    m.start = start;
    m.end = end;
    m.deviceId = (uint32_t)s->ctx->device;
    m.contextId = s->ctx->id;
    m.streamId = s->id;
    m.correlationId = corr;
    m.flags = o->async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.graphNodeId = graph_id ? o->node_id : 0;
    m.graphId = graph_id;
    m.channelID = 1;
    m.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
    c->emit(&m, sizeof m, end, 1);
  }
}

static CUresult graph_append(struct CUgraph_st *g, const struct op *o) {
  pthread_mutex_lock(&G);
  if (g->n == g->cap) {
    size_t nc = g->cap ? 2 * g->cap : 16;
    struct op *nv = realloc(g->v, nc * sizeof *nv);
    if (!nv) {
      pthread_mutex_unlock(&G);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    g->v = nv;
    g->cap = nc;
  }
  g->v[g->n] = *o;
  g->v[g->n].node_id = next_node_id++;
  g->n++;
  pthread_mutex_unlock(&G);
  return CUDA_SUCCESS;
}

/* Submits o on s (or captures it into s's graph). Returns the simulated end in *end_out. */
static CUresult submit(struct op *o, struct CUstream_st *s, const struct api *a,
                       uint64_t *end_out) {
  if (s->capture) return graph_append(s->capture, o);
  op_apply(o);
  uint64_t start, end = schedule(s, op_duration(o), mono() + STUB_LAUNCH_LATENCY_NS, &start);
  emit_op(o, s, start, end, a->corr, a->rt_corr, 0);
  if (end_out) *end_out = end;
  return CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- init, devices, contexts */

static void read_env(void) {
  const char *e = getenv("STUB_DEVICES");
  if (e && atoi(e) >= 1) ndev = atoi(e) > MAX_DEVICES ? MAX_DEVICES : atoi(e);
  e = getenv("STUB_KERNEL_NS");
  if (e && *e) default_kernel_ns = strtoull(e, NULL, 10);
  e = getenv("STUB_CUPTI_LAUNCH_NS");
  if (e && *e) cupti_launch_ns = strtoull(e, NULL, 10);
  e = getenv("STUB_CUPTI_API_NS");
  if (e && *e) cupti_api_ns = strtoull(e, NULL, 10);
}

static int no_gpu(void) {
  const char *e = getenv("STUB_NO_GPU");
  return e && *e && strcmp(e, "0") != 0;
}

CUresult cuInit(unsigned int flags) {
  API(cuInit);
  (void)flags;
  if (no_gpu()) RET(CUDA_ERROR_NO_DEVICE);
  pthread_mutex_lock(&G);
  int first = !initialized;
  if (first) {
    read_env();
    initialized = 1;
  }
  pthread_mutex_unlock(&G);
  if (first && kind_on(CUPTI_ACTIVITY_KIND_DEVICE)) {
    pthread_mutex_lock(&G);
    int sent = device_records_sent;
    device_records_sent = 1;
    pthread_mutex_unlock(&G);
    if (!sent)
      for (int d = 0; d < ndev; d++)
        emit_device_record(d);
  }
  RET(CUDA_SUCCESS);
}

#define NEED_INIT()                                                                                \
  do {                                                                                             \
    if (!initialized) RET(CUDA_ERROR_NOT_INITIALIZED);                                             \
  } while (0)
#define NEED_CTX()                                                                                 \
  do {                                                                                             \
    if (!initialized) RET(CUDA_ERROR_NOT_INITIALIZED);                                             \
    if (!T.ctx) RET(CUDA_ERROR_INVALID_CONTEXT);                                                   \
  } while (0)

CUresult cuDriverGetVersion(int *v) {
  if (!v) return CUDA_ERROR_INVALID_VALUE;
  *v = 13000;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count) {
  API(cuDeviceGetCount);
  NEED_INIT();
  if (!count) RET(CUDA_ERROR_INVALID_VALUE);
  *count = ndev;
  RET(CUDA_SUCCESS);
}

CUresult cuDeviceGet(CUdevice *dev, int ordinal) {
  API(cuDeviceGet);
  NEED_INIT();
  if (!dev || ordinal < 0 || ordinal >= ndev) RET(CUDA_ERROR_INVALID_DEVICE);
  *dev = ordinal;
  RET(CUDA_SUCCESS);
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev) {
  API(cuDeviceGetName);
  NEED_INIT();
  if (!name || len <= 0 || dev < 0 || dev >= ndev) RET(CUDA_ERROR_INVALID_VALUE);
  snprintf(name, (size_t)len, "Stub GPU %d (CPU simulation)", dev);
  RET(CUDA_SUCCESS);
}

CUresult cuDeviceTotalMem(size_t *bytes, CUdevice dev) {
  API(cuDeviceTotalMem_v2);
  NEED_INIT();
  if (!bytes || dev < 0 || dev >= ndev) RET(CUDA_ERROR_INVALID_VALUE);
  *bytes = 141ull << 30;
  RET(CUDA_SUCCESS);
}

CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute attrib, CUdevice dev) {
  API(cuDeviceGetAttribute);
  NEED_INIT();
  if (!v || dev < 0 || dev >= ndev) RET(CUDA_ERROR_INVALID_VALUE);
  switch (attrib) {
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
  case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *v = 0x18 + dev; break;
  default: *v = 0; break;
  }
  RET(CUDA_SUCCESS);
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) {
  API(cuDevicePrimaryCtxRetain);
  NEED_INIT();
  if (!pctx || dev < 0 || dev >= ndev) RET(CUDA_ERROR_INVALID_VALUE);
  struct CUctx_st *c = primary_ctx(dev);
  if (!c) RET(CUDA_ERROR_OUT_OF_MEMORY);
  pthread_mutex_lock(&G);
  c->refs++;
  pthread_mutex_unlock(&G);
  *pctx = c;
  RET(CUDA_SUCCESS);
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
  API(cuDevicePrimaryCtxRelease_v2);
  NEED_INIT();
  if (dev < 0 || dev >= ndev) RET(CUDA_ERROR_INVALID_DEVICE);
  pthread_mutex_lock(&G);
  if (primary[dev] && primary[dev]->refs > 0) primary[dev]->refs--;
  pthread_mutex_unlock(&G);
  RET(CUDA_SUCCESS);
}

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active) {
  API(cuDevicePrimaryCtxGetState);
  NEED_INIT();
  if (!flags || !active) RET(CUDA_ERROR_INVALID_VALUE);
  if (dev < 0 || dev >= ndev) RET(CUDA_ERROR_INVALID_DEVICE);
  pthread_mutex_lock(&G);
  *flags = 0;
  *active = primary[dev] && primary[dev]->refs > 0;
  pthread_mutex_unlock(&G);
  RET(CUDA_SUCCESS);
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
  API(cuCtxSetCurrent);
  NEED_INIT();
  if (ctx && ctx->magic != MAGIC_CTX) RET(CUDA_ERROR_INVALID_CONTEXT);
  T.ctx = ctx;
  RET(CUDA_SUCCESS);
}

CUresult cuCtxGetCurrent(CUcontext *pctx) {
  API(cuCtxGetCurrent);
  NEED_INIT();
  if (!pctx) RET(CUDA_ERROR_INVALID_VALUE);
  *pctx = T.ctx;
  RET(CUDA_SUCCESS);
}

CUresult cuCtxGetDevice(CUdevice *dev) {
  API(cuCtxGetDevice);
  NEED_CTX();
  if (!dev) RET(CUDA_ERROR_INVALID_VALUE);
  *dev = T.ctx->device;
  RET(CUDA_SUCCESS);
}

/* No SYNCHRONIZATION record: CUPTI 13.0 GA emits none for cuCtxSynchronize. */
CUresult cuCtxSynchronize(void) {
  API(cuCtxSynchronize);
  NEED_CTX();
  pthread_mutex_lock(&G);
  uint64_t e = T.ctx->last_end;
  pthread_mutex_unlock(&G);
  wait_until(e);
  RET(CUDA_SUCCESS);
}

/* ---------------------------------------------------------------- modules and kernels */

static CUfunction kernel_create(const char *name, uint64_t ns) {
  struct CUfunc_st *f = calloc(1, sizeof *f);
  if (!f) return NULL;
  f->magic = MAGIC_FUNC;
  f->name = strdup(name ? name : "kernel");
  f->ns = ns ? ns : default_kernel_ns;
  return f;
}

/* A stub module image is text: one kernel per line, "name duration_ns"; or PTX text, whose
 * ".entry NAME(" kernels last STUB_KERNEL_NS. */
CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  API(cuModuleLoadData);
  NEED_CTX();
  if (!module || !image) RET(CUDA_ERROR_INVALID_VALUE);
  struct CUmod_st *m = calloc(1, sizeof *m);
  if (!m) RET(CUDA_ERROR_OUT_OF_MEMORY);
  m->magic = MAGIC_MOD;
  const char *p = image;
  int ptx = strstr(p, ".entry ") != NULL;
  const char *slow = ptx ? getenv("STUB_PTX_LOAD_MS") : NULL;
  if (slow && atol(slow) > 0) {
    struct timespec ts = {atol(slow) / 1000, (atol(slow) % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
      ;
  }
  for (const char *e = strstr(p, ".entry "); e; e = strstr(e + 1, ".entry ")) {
    char name[256];
    if (sscanf(e + 7, "%255[A-Za-z0-9_$]", name) != 1) continue;
    struct CUfunc_st **nf = realloc(m->fn, (m->n + 1) * sizeof *nf);
    if (!nf) RET(CUDA_ERROR_OUT_OF_MEMORY);
    m->fn = nf;
    m->fn[m->n++] = kernel_create(name, 0);
  }
  while (!ptx && *p) {
    char name[256];
    unsigned long long ns = 0;
    int used = 0;
    if (sscanf(p, "%255s %llu%n", name, &ns, &used) < 1) break;
    struct CUfunc_st **nf = realloc(m->fn, (m->n + 1) * sizeof *nf);
    if (!nf) RET(CUDA_ERROR_OUT_OF_MEMORY);
    m->fn = nf;
    m->fn[m->n++] = kernel_create(name, ns);
    const char *nl = strchr(p, '\n');
    if (!nl) break;
    p = nl + 1;
  }
  if (!m->n) {
    free(m);
    RET(CUDA_ERROR_INVALID_IMAGE);
  }
  *module = m;
  RET(CUDA_SUCCESS);
}

CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  API(cuModuleGetFunction);
  NEED_CTX();
  if (!f || !m || m->magic != MAGIC_MOD || !name) RET(CUDA_ERROR_INVALID_VALUE);
  for (size_t i = 0; i < m->n; i++)
    if (m->fn[i] && !strcmp(m->fn[i]->name, name)) {
      *f = m->fn[i];
      RET(CUDA_SUCCESS);
    }
  RET(CUDA_ERROR_NOT_FOUND);
}

CUresult cuModuleUnload(CUmodule m) {
  API(cuModuleUnload);
  if (!m || m->magic != MAGIC_MOD) RET(CUDA_ERROR_INVALID_HANDLE);
  m->magic = 0; /* functions stay: CUPTI records point at their names */
  RET(CUDA_SUCCESS);
}

static CUresult launch(struct api *a, CUfunction f, const unsigned grid[3], const unsigned block[3],
                       unsigned smem, CUstream h, int ptsz, const CUlaunchAttribute *attrs,
                       unsigned nattrs) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!T.ctx) return CUDA_ERROR_INVALID_CONTEXT;
  if (!f || f->magic != MAGIC_FUNC) return CUDA_ERROR_INVALID_HANDLE;
  for (int i = 0; i < 3; i++)
    if (!grid[i] || !block[i]) return CUDA_ERROR_INVALID_VALUE;
  if ((uint64_t)block[0] * block[1] * block[2] > 1024) return CUDA_ERROR_INVALID_VALUE;
  struct CUstream_st *s;
  CUresult r = resolve_stream(h, ptsz, &s);
  if (r) return r;
  if (cupti_launch_ns && kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) {
    uint64_t until = mono() + cupti_launch_ns; /* what CUPTI's kernel record costs a launch */
    while (mono() < until) {
    }
  }
  struct op o;
  memset(&o, 0, sizeof o);
  o.kind = OP_KERNEL;
  o.f = f;
  memcpy(o.grid, grid, sizeof o.grid);
  memcpy(o.block, block, sizeof o.block);
  o.smem = smem;
  o.async = 1;
  for (unsigned i = 0; attrs && i < nattrs; i++) {
    if (attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      o.cluster[0] = attrs[i].value.clusterDim.x;
      o.cluster[1] = attrs[i].value.clusterDim.y;
      o.cluster[2] = attrs[i].value.clusterDim.z;
    } else if (attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && attrs[i].value.cooperative) {
      o.launch_type = CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE;
    }
  }
  return submit(&o, s, a, NULL);
}

static CUresult launch_kernel(uint32_t cbid, int ptsz, CUfunction f, unsigned gx, unsigned gy,
                              unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned smem,
                              CUstream h, void **params, void **extra) {
  struct api a;
  api_begin(&a, cbid);
  (void)params, (void)extra;
  unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  return api_end(&a, launch(&a, f, grid, block, smem, h, ptsz, NULL, 0));
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned smem, CUstream h, void **params,
                        void **extra) {
  return launch_kernel(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 0, f, gx, gy, gz, bx, by, bz, smem,
                       h, params, extra);
}

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                             unsigned by, unsigned bz, unsigned smem, CUstream h, void **params,
                             void **extra) {
  return launch_kernel(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, 1, f, gx, gy, gz, bx, by, bz,
                       smem, h, params, extra);
}

static CUresult launch_kernel_ex(uint32_t cbid, int ptsz, const CUlaunchConfig *cfg, CUfunction f,
                                 void **params, void **extra) {
  struct api a;
  api_begin(&a, cbid);
  (void)params, (void)extra;
  if (!cfg) return api_end(&a, CUDA_ERROR_INVALID_VALUE);
  unsigned grid[3] = {cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ};
  unsigned block[3] = {cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ};
  return api_end(&a, launch(&a, f, grid, block, cfg->sharedMemBytes, cfg->hStream, ptsz, cfg->attrs,
                            cfg->numAttrs));
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra) {
  return launch_kernel_ex(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 0, cfg, f, params, extra);
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *cfg, CUfunction f, void **params,
                               void **extra) {
  return launch_kernel_ex(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, 1, cfg, f, params, extra);
}

/* ---------------------------------------------------------------- memory */

CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytes) {
  API(cuMemAlloc_v2);
  NEED_CTX();
  if (!dptr || !bytes) RET(CUDA_ERROR_INVALID_VALUE);
  void *p = NULL;
  if (posix_memalign(&p, 256, bytes)) RET(CUDA_ERROR_OUT_OF_MEMORY);
  alloc_add(p, bytes, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  *dptr = (CUdeviceptr)(uintptr_t)p;
  RET(CUDA_SUCCESS);
}

CUresult cuMemFree(CUdeviceptr dptr) {
  API(cuMemFree_v2);
  NEED_CTX();
  if (!dptr) RET(CUDA_SUCCESS);
  void *p = (void *)(uintptr_t)dptr;
  if (!alloc_remove(p, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE)) RET(CUDA_ERROR_INVALID_VALUE);
  /* the real driver waits for work using the memory; wait for the context to drain */
  pthread_mutex_lock(&G);
  uint64_t e = T.ctx->last_end;
  pthread_mutex_unlock(&G);
  wait_until(e);
  free(p);
  RET(CUDA_SUCCESS);
}

static CUresult host_alloc(void **pp, size_t bytes) {
  if (!pp || !bytes) return CUDA_ERROR_INVALID_VALUE;
  void *p = NULL;
  if (posix_memalign(&p, 4096, bytes)) return CUDA_ERROR_OUT_OF_MEMORY;
  alloc_add(p, bytes, CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
  *pp = p;
  return CUDA_SUCCESS;
}

CUresult cuMemAllocHost(void **pp, size_t bytes) {
  API(cuMemAllocHost_v2);
  NEED_CTX();
  RET(host_alloc(pp, bytes));
}

CUresult cuMemHostAlloc(void **pp, size_t bytes, unsigned int flags) {
  API(cuMemHostAlloc);
  NEED_CTX();
  (void)flags;
  RET(host_alloc(pp, bytes));
}

CUresult cuMemFreeHost(void *p) {
  API(cuMemFreeHost);
  NEED_CTX();
  if (!p) RET(CUDA_SUCCESS);
  if (!alloc_remove(p, CUPTI_ACTIVITY_MEMORY_KIND_PINNED)) RET(CUDA_ERROR_INVALID_VALUE);
  free(p);
  RET(CUDA_SUCCESS);
}

/* The driver's virtual memory management (PyTorch's expandable segments): an address range
 * reserved, physical memory created (a handle: the stub's own block), mapped into the range and
 * made accessible, later unmapped and released. The stub keeps no page tables: a mapping only
 * checks its arguments. */
CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t align, CUdeviceptr addr,
                             unsigned long long flags) {
  API(cuMemAddressReserve);
  NEED_CTX();
  (void)align, (void)addr, (void)flags;
  if (!ptr || !size) RET(CUDA_ERROR_INVALID_VALUE);
  void *p = NULL;
  if (posix_memalign(&p, 4096, size)) RET(CUDA_ERROR_OUT_OF_MEMORY);
  *ptr = (CUdeviceptr)(uintptr_t)p;
  RET(CUDA_SUCCESS);
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  API(cuMemAddressFree);
  NEED_CTX();
  if (!ptr || !size) RET(CUDA_ERROR_INVALID_VALUE);
  free((void *)(uintptr_t)ptr);
  RET(CUDA_SUCCESS);
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                     const CUmemAllocationProp *prop, unsigned long long flags) {
  API(cuMemCreate);
  NEED_CTX();
  (void)flags;
  if (!handle || !size || !prop) RET(CUDA_ERROR_INVALID_VALUE);
  void *p = malloc(1);
  if (!p) RET(CUDA_ERROR_OUT_OF_MEMORY);
  *handle = (CUmemGenericAllocationHandle)(uintptr_t)p;
  RET(CUDA_SUCCESS);
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  API(cuMemRelease);
  NEED_CTX();
  if (!handle) RET(CUDA_ERROR_INVALID_VALUE);
  free((void *)(uintptr_t)handle);
  RET(CUDA_SUCCESS);
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags) {
  API(cuMemMap);
  NEED_CTX();
  (void)offset, (void)flags;
  RET(ptr && size && handle ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  API(cuMemUnmap);
  NEED_CTX();
  RET(ptr && size ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count) {
  API(cuMemSetAccess);
  NEED_CTX();
  RET(ptr && size && desc && count ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

enum side { HOST, DEVICE, ANY };

/* A 1D or 2D copy. sync: the host waits for the copy (synchronous API); async copies with
 * pageable memory wait too (the real driver stages them through a bounce buffer). */
static CUresult copy(struct api *a, void *dst, enum side ds, const void *src, enum side ss,
                     size_t width, size_t height, size_t dpitch, size_t spitch, CUstream h,
                     int ptsz, int sync) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!T.ctx) return CUDA_ERROR_INVALID_CONTEXT;
  if (!width || !height) return CUDA_SUCCESS;
  if (!dst || !src) return CUDA_ERROR_INVALID_VALUE;
  size_t dspan = dpitch * (height - 1) + width, sspan = spitch * (height - 1) + width;
  struct op o;
  memset(&o, 0, sizeof o);
  o.kind = OP_COPY;
  o.dst_kind = mem_kind(dst, dspan);
  o.src_kind = mem_kind(src, sspan);
  int dd = o.dst_kind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  int sd = o.src_kind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  if ((ds == DEVICE && !dd) || (ss == DEVICE && !sd)) return CUDA_ERROR_INVALID_VALUE;
  if ((ds == HOST && dd) || (ss == HOST && sd)) return CUDA_ERROR_INVALID_VALUE;
  o.copy_kind = sd ? (dd ? CUPTI_ACTIVITY_MEMCPY_KIND_DTOD : CUPTI_ACTIVITY_MEMCPY_KIND_DTOH)
                   : (dd ? CUPTI_ACTIVITY_MEMCPY_KIND_HTOD : CUPTI_ACTIVITY_MEMCPY_KIND_HTOH);
  o.dst = dst;
  o.src = src;
  o.width = width;
  o.height = height;
  o.dpitch = dpitch;
  o.spitch = spitch;
  o.async = !sync;
  struct CUstream_st *s;
  CUresult r = resolve_stream(h, ptsz, &s);
  if (r) return r;
  if (s->capture && sync) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  uint64_t end = 0;
  r = submit(&o, s, a, &end);
  if (r || s->capture) return r;
  if (sync || o.src_kind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE ||
      o.dst_kind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE)
    wait_until(end);
  return CUDA_SUCCESS;
}

#define DPTR(x) ((void *)(uintptr_t)(x))

#define COPY1(sym, cbid, ptsz, dsttype, ds, srctype, ss, sync)                                     \
  CUresult sym(dsttype dst, srctype src, size_t n) {                                               \
    struct api a;                                                                                  \
    api_begin(&a, CUPTI_DRIVER_TRACE_CBID_##cbid);                                                 \
    return api_end(&a, copy(&a, (void *)(uintptr_t)dst, ds, (const void *)(uintptr_t)src, ss, n,   \
                            1, n, n, NULL, ptsz, sync));                                           \
  }
#define COPY1A(sym, cbid, ptsz, dsttype, ds, srctype, ss)                                          \
  CUresult sym(dsttype dst, srctype src, size_t n, CUstream h) {                                   \
    struct api a;                                                                                  \
    api_begin(&a, CUPTI_DRIVER_TRACE_CBID_##cbid);                                                 \
    return api_end(&a, copy(&a, (void *)(uintptr_t)dst, ds, (const void *)(uintptr_t)src, ss, n,   \
                            1, n, n, h, ptsz, 0));                                                 \
  }

COPY1(cuMemcpy, cuMemcpy, 0, CUdeviceptr, ANY, CUdeviceptr, ANY, 1)
COPY1(cuMemcpy_ptds, cuMemcpy_ptds, 1, CUdeviceptr, ANY, CUdeviceptr, ANY, 1)
COPY1(cuMemcpyHtoD_v2, cuMemcpyHtoD_v2, 0, CUdeviceptr, DEVICE, const void *, HOST, 1)
COPY1(cuMemcpyHtoD_v2_ptds, cuMemcpyHtoD_v2_ptds, 1, CUdeviceptr, DEVICE, const void *, HOST, 1)
COPY1(cuMemcpyDtoH_v2, cuMemcpyDtoH_v2, 0, void *, HOST, CUdeviceptr, DEVICE, 1)
COPY1(cuMemcpyDtoH_v2_ptds, cuMemcpyDtoH_v2_ptds, 1, void *, HOST, CUdeviceptr, DEVICE, 1)
/* device-to-device copies do not block the host (driver API contract) */
COPY1(cuMemcpyDtoD_v2, cuMemcpyDtoD_v2, 0, CUdeviceptr, DEVICE, CUdeviceptr, DEVICE, 0)
COPY1(cuMemcpyDtoD_v2_ptds, cuMemcpyDtoD_v2_ptds, 1, CUdeviceptr, DEVICE, CUdeviceptr, DEVICE, 0)
COPY1A(cuMemcpyAsync, cuMemcpyAsync, 0, CUdeviceptr, ANY, CUdeviceptr, ANY)
COPY1A(cuMemcpyAsync_ptsz, cuMemcpyAsync_ptsz, 1, CUdeviceptr, ANY, CUdeviceptr, ANY)
COPY1A(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2, 0, CUdeviceptr, DEVICE, const void *, HOST)
COPY1A(cuMemcpyHtoDAsync_v2_ptsz, cuMemcpyHtoDAsync_v2_ptsz, 1, CUdeviceptr, DEVICE, const void *,
       HOST)
COPY1A(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2, 0, void *, HOST, CUdeviceptr, DEVICE)
COPY1A(cuMemcpyDtoHAsync_v2_ptsz, cuMemcpyDtoHAsync_v2_ptsz, 1, void *, HOST, CUdeviceptr, DEVICE)
COPY1A(cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2, 0, CUdeviceptr, DEVICE, CUdeviceptr, DEVICE)
COPY1A(cuMemcpyDtoDAsync_v2_ptsz, cuMemcpyDtoDAsync_v2_ptsz, 1, CUdeviceptr, DEVICE, CUdeviceptr,
       DEVICE)

static CUresult copy2d(struct api *a, const CUDA_MEMCPY2D *p, CUstream h, int ptsz, int sync) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  if (p->srcMemoryType == CU_MEMORYTYPE_ARRAY || p->dstMemoryType == CU_MEMORYTYPE_ARRAY)
    return CUDA_ERROR_NOT_SUPPORTED;
  const char *src = p->srcMemoryType == CU_MEMORYTYPE_HOST ? (const char *)p->srcHost
                                                           : (const char *)DPTR(p->srcDevice);
  char *dst =
      p->dstMemoryType == CU_MEMORYTYPE_HOST ? (char *)p->dstHost : (char *)DPTR(p->dstDevice);
  if (!src || !dst) return CUDA_ERROR_INVALID_VALUE;
  src += p->srcY * p->srcPitch + p->srcXInBytes;
  dst += p->dstY * p->dstPitch + p->dstXInBytes;
  enum side ss = p->srcMemoryType == CU_MEMORYTYPE_HOST     ? HOST
                 : p->srcMemoryType == CU_MEMORYTYPE_DEVICE ? DEVICE
                                                            : ANY;
  enum side ds = p->dstMemoryType == CU_MEMORYTYPE_HOST     ? HOST
                 : p->dstMemoryType == CU_MEMORYTYPE_DEVICE ? DEVICE
                                                            : ANY;
  size_t sp = p->srcPitch ? p->srcPitch : p->WidthInBytes;
  size_t dp = p->dstPitch ? p->dstPitch : p->WidthInBytes;
  if (sp < p->WidthInBytes || dp < p->WidthInBytes) return CUDA_ERROR_INVALID_VALUE;
  return copy(a, dst, ds, src, ss, p->WidthInBytes, p->Height, dp, sp, h, ptsz, sync);
}

CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *p) {
  API(cuMemcpy2D_v2);
  RET(copy2d(&A_, p, NULL, 0, 1));
}
CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *p) {
  API(cuMemcpy2DUnaligned_v2);
  RET(copy2d(&A_, p, NULL, 0, 1));
}
CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *p) {
  API(cuMemcpy2D_v2_ptds);
  RET(copy2d(&A_, p, NULL, 1, 1));
}
CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *p, CUstream h) {
  API(cuMemcpy2DAsync_v2);
  RET(copy2d(&A_, p, h, 0, 0));
}
CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *p, CUstream h) {
  API(cuMemcpy2DAsync_v2_ptsz);
  RET(copy2d(&A_, p, h, 1, 0));
}

static CUresult memset_op(struct api *a, CUdeviceptr d, size_t pitch, uint32_t value, unsigned elem,
                          size_t width_elems, size_t height, CUstream h, int ptsz, int async) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!T.ctx) return CUDA_ERROR_INVALID_CONTEXT;
  size_t width = width_elems * elem;
  if (!width || !height) return CUDA_SUCCESS;
  if (!pitch) pitch = width;
  if (!is_device(DPTR(d), pitch * (height - 1) + width)) return CUDA_ERROR_INVALID_VALUE;
  struct op o;
  memset(&o, 0, sizeof o);
  o.kind = OP_SET;
  o.dst = DPTR(d);
  o.value = value;
  o.elem = elem;
  o.width = width;
  o.height = height;
  o.dpitch = pitch;
  o.async = async;
  struct CUstream_st *s;
  CUresult r = resolve_stream(h, ptsz, &s);
  if (r) return r;
  return submit(&o, s, a, NULL);
}

#define SET1(sym, cbid, ptsz, vtype, elem)                                                         \
  CUresult sym(CUdeviceptr d, vtype v, size_t n) {                                                 \
    struct api a;                                                                                  \
    api_begin(&a, CUPTI_DRIVER_TRACE_CBID_##cbid);                                                 \
    return api_end(&a, memset_op(&a, d, 0, (uint32_t)v, elem, n, 1, NULL, ptsz, 0));               \
  }
#define SET1A(sym, cbid, ptsz, vtype, elem)                                                        \
  CUresult sym(CUdeviceptr d, vtype v, size_t n, CUstream h) {                                     \
    struct api a;                                                                                  \
    api_begin(&a, CUPTI_DRIVER_TRACE_CBID_##cbid);                                                 \
    return api_end(&a, memset_op(&a, d, 0, (uint32_t)v, elem, n, 1, h, ptsz, 1));                  \
  }

SET1(cuMemsetD8_v2, cuMemsetD8_v2, 0, unsigned char, 1)
SET1(cuMemsetD8_v2_ptds, cuMemsetD8_v2_ptds, 1, unsigned char, 1)
SET1(cuMemsetD16_v2, cuMemsetD16_v2, 0, unsigned short, 2)
SET1(cuMemsetD16_v2_ptds, cuMemsetD16_v2_ptds, 1, unsigned short, 2)
SET1(cuMemsetD32_v2, cuMemsetD32_v2, 0, unsigned int, 4)
SET1(cuMemsetD32_v2_ptds, cuMemsetD32_v2_ptds, 1, unsigned int, 4)
SET1A(cuMemsetD8Async, cuMemsetD8Async, 0, unsigned char, 1)
SET1A(cuMemsetD8Async_ptsz, cuMemsetD8Async_ptsz, 1, unsigned char, 1)
SET1A(cuMemsetD16Async, cuMemsetD16Async, 0, unsigned short, 2)
SET1A(cuMemsetD16Async_ptsz, cuMemsetD16Async_ptsz, 1, unsigned short, 2)
SET1A(cuMemsetD32Async, cuMemsetD32Async, 0, unsigned int, 4)
SET1A(cuMemsetD32Async_ptsz, cuMemsetD32Async_ptsz, 1, unsigned int, 4)

CUresult cuMemsetD2D8_v2(CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h) {
  API(cuMemsetD2D8_v2);
  RET(memset_op(&A_, d, pitch, v, 1, w, h, NULL, 0, 0));
}
CUresult cuMemsetD2D8Async(CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h,
                           CUstream s) {
  API(cuMemsetD2D8Async);
  RET(memset_op(&A_, d, pitch, v, 1, w, h, s, 0, 1));
}

/* ---------------------------------------------------------------- streams and events */

CUresult cuStreamCreate(CUstream *ph, unsigned int flags) {
  API(cuStreamCreate);
  NEED_CTX();
  if (!ph) RET(CUDA_ERROR_INVALID_VALUE);
  struct CUstream_st *s = stream_new(T.ctx, flags, 0);
  if (!s) RET(CUDA_ERROR_OUT_OF_MEMORY);
  *ph = s;
  RET(CUDA_SUCCESS);
}

CUresult cuStreamCreateWithPriority(CUstream *ph, unsigned int flags, int priority) {
  API(cuStreamCreateWithPriority);
  NEED_CTX();
  (void)priority;
  if (!ph) RET(CUDA_ERROR_INVALID_VALUE);
  struct CUstream_st *s = stream_new(T.ctx, flags, 0);
  if (!s) RET(CUDA_ERROR_OUT_OF_MEMORY);
  *ph = s;
  RET(CUDA_SUCCESS);
}

/* Destroying a stream with work pending is legal: the work completes, the handle dies. */
CUresult cuStreamDestroy_v2(CUstream h) {
  API(cuStreamDestroy_v2);
  NEED_CTX();
  if (!valid_stream(h) || h->legacy) RET(CUDA_ERROR_INVALID_HANDLE);
  pthread_mutex_lock(&G);
  h->alive = 0; /* kept on the list (never freed): stale handles stay detectable */
  pthread_mutex_unlock(&G);
  RET(CUDA_SUCCESS);
}

CUresult cuStreamGetId(CUstream h, unsigned long long *id) {
  API(cuStreamGetId);
  NEED_CTX();
  struct CUstream_st *s;
  CUresult r = resolve_stream(h, 0, &s);
  if (r) RET(r);
  if (!id) RET(CUDA_ERROR_INVALID_VALUE);
  *id = s->id;
  RET(CUDA_SUCCESS);
}

static void emit_sync(uint32_t type, uint64_t t0, uint32_t corr, const struct CUctx_st *ctx,
                      uint32_t stream_id, uint32_t event_id, CUresult r) {
  const struct stub_cupti_client *c = client();
  if (!c || !c->kind_enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)) return;
  CUpti_ActivitySynchronization2 y;
  memset(&y, 0, sizeof y);
  y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  y.type = (CUpti_ActivitySynchronizationType)type;
  y.start = t0;
  y.end = c->now();
  y.correlationId = corr;
  y.contextId = ctx ? ctx->id : CUPTI_INVALID_CONTEXT_ID;
  y.streamId = stream_id;
  y.cudaEventId = event_id;
  y.cudaEventSyncId = event_id == CUPTI_SYNCHRONIZATION_INVALID_VALUE
                          ? CUPTI_SYNCHRONIZATION_INVALID_VALUE
                          : ((uint64_t)event_id << 32 | corr);
  y.returnValue = (uint32_t)r;
  c->emit(&y, sizeof y, 0, 0);
}

static uint64_t sync_t0(void) {
  const struct stub_cupti_client *c = client();
  return c && c->kind_enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) ? c->now() : 0;
}

static CUresult stream_sync(uint32_t cbid, CUstream h, int ptsz) {
  struct api a;
  api_begin(&a, cbid);
  if (!initialized) return api_end(&a, CUDA_ERROR_NOT_INITIALIZED);
  uint64_t t0 = sync_t0();
  struct CUstream_st *s;
  CUresult r = resolve_stream(h, ptsz, &s);
  if (r) return api_end(&a, r);
  if (s->capture) return api_end(&a, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  uint64_t end = stream_end(s);
  if (s->legacy) { /* the legacy stream also waits for every blocking stream */
    pthread_mutex_lock(&G);
    for (struct CUstream_st *x = streams; x; x = x->next)
      if (x->ctx == s->ctx && x->alive && !(x->flags & CU_STREAM_NON_BLOCKING) && x->last_end > end)
        end = x->last_end;
    pthread_mutex_unlock(&G);
  }
  wait_until(end);
  emit_sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, t0, a.corr, s->ctx, s->id,
            CUPTI_SYNCHRONIZATION_INVALID_VALUE, CUDA_SUCCESS);
  return api_end(&a, CUDA_SUCCESS);
}

CUresult cuStreamSynchronize(CUstream h) {
  return stream_sync(CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, h, 0);
}
CUresult cuStreamSynchronize_ptsz(CUstream h) {
  return stream_sync(CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz, h, 1);
}

/* CUPTI 13.0 writes a synchronization record of type STREAM_SYNCHRONIZE for every stream query
 * (GPU run 106: 849 for a Python loop's 60 waits by asking torch's stream.query()) */
static CUresult stream_query(uint32_t cbid, CUstream h, int ptsz) {
  struct api a;
  api_begin(&a, cbid);
  if (!initialized) return api_end(&a, CUDA_ERROR_NOT_INITIALIZED);
  uint64_t t0 = sync_t0();
  struct CUstream_st *s;
  CUresult r = resolve_stream(h, ptsz, &s);
  if (r) return api_end(&a, r);
  r = mono() >= stream_end(s) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
  emit_sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, t0, a.corr, s->ctx, s->id,
            CUPTI_SYNCHRONIZATION_INVALID_VALUE, r);
  return api_end(&a, r);
}

CUresult cuStreamQuery(CUstream h) {
  return stream_query(CUPTI_DRIVER_TRACE_CBID_cuStreamQuery, h, 0);
}
CUresult cuStreamQuery_ptsz(CUstream h) {
  return stream_query(CUPTI_DRIVER_TRACE_CBID_cuStreamQuery_ptsz, h, 1);
}

CUresult cuEventCreate(CUevent *pe, unsigned int flags) {
  API(cuEventCreate);
  NEED_CTX();
  if (!pe) RET(CUDA_ERROR_INVALID_VALUE);
  struct CUevent_st *e = calloc(1, sizeof *e);
  if (!e) RET(CUDA_ERROR_OUT_OF_MEMORY);
  e->magic = MAGIC_EVENT;
  e->flags = flags;
  e->ctx = T.ctx;
  pthread_mutex_lock(&G);
  e->id = next_event_id++;
  pthread_mutex_unlock(&G);
  *pe = e;
  RET(CUDA_SUCCESS);
}

CUresult cuEventDestroy_v2(CUevent e) {
  API(cuEventDestroy_v2);
  NEED_INIT();
  if (!e || e->magic != MAGIC_EVENT) RET(CUDA_ERROR_INVALID_HANDLE);
  e->magic = 0;
  free(e);
  RET(CUDA_SUCCESS);
}

static CUresult event_record(uint32_t cbid, CUevent e, CUstream h, int ptsz) {
  struct api a;
  api_begin(&a, cbid);
  if (!initialized) return api_end(&a, CUDA_ERROR_NOT_INITIALIZED);
  if (!e || e->magic != MAGIC_EVENT) return api_end(&a, CUDA_ERROR_INVALID_HANDLE);
  struct CUstream_st *s;
  CUresult r = resolve_stream(h, ptsz, &s);
  if (r) return api_end(&a, r);
  if (s->capture) return api_end(&a, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  uint64_t now = mono(), end = stream_end(s);
  pthread_mutex_lock(&G);
  e->time = end > now ? end : now;
  e->recorded = 1;
  e->stream_id = s->id;
  pthread_mutex_unlock(&G);
  return api_end(&a, CUDA_SUCCESS);
}

CUresult cuEventRecord(CUevent e, CUstream h) {
  return event_record(CUPTI_DRIVER_TRACE_CBID_cuEventRecord, e, h, 0);
}
CUresult cuEventRecord_ptsz(CUevent e, CUstream h) {
  return event_record(CUPTI_DRIVER_TRACE_CBID_cuEventRecord_ptsz, e, h, 1);
}

CUresult cuEventSynchronize(CUevent e) {
  API(cuEventSynchronize);
  NEED_INIT();
  uint64_t t0 = sync_t0();
  if (!e || e->magic != MAGIC_EVENT) RET(CUDA_ERROR_INVALID_HANDLE);
  pthread_mutex_lock(&G);
  uint64_t t = e->recorded ? e->time : 0;
  uint32_t sid = e->recorded ? e->stream_id : CUPTI_INVALID_STREAM_ID;
  pthread_mutex_unlock(&G);
  wait_until(t);
  emit_sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, t0, A_.corr, e->ctx, sid, e->id,
            CUDA_SUCCESS);
  RET(CUDA_SUCCESS);
}

/* CUPTI 13.0 writes a synchronization record of type EVENT_SYNCHRONIZE for every query of a
 * recorded event, ready or not (GPU run 105: 155,290 for a Python loop's questions) */
CUresult cuEventQuery(CUevent e) {
  API(cuEventQuery);
  NEED_INIT();
  uint64_t t0 = sync_t0();
  if (!e || e->magic != MAGIC_EVENT) RET(CUDA_ERROR_INVALID_HANDLE);
  pthread_mutex_lock(&G);
  uint64_t t = e->recorded ? e->time : 0;
  uint32_t sid = e->recorded ? e->stream_id : CUPTI_INVALID_STREAM_ID;
  int recorded = e->recorded;
  pthread_mutex_unlock(&G);
  CUresult r = mono() >= t ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
  if (recorded)
    emit_sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, t0, A_.corr, e->ctx, sid,
              e->id, r);
  RET(r);
}

CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b) {
  API(cuEventElapsedTime_v2);
  NEED_INIT();
  if (!ms || !a || !b || a->magic != MAGIC_EVENT || b->magic != MAGIC_EVENT)
    RET(CUDA_ERROR_INVALID_HANDLE);
  if (!a->recorded || !b->recorded) RET(CUDA_ERROR_INVALID_HANDLE);
  uint64_t n = mono();
  if (n < a->time || n < b->time) RET(CUDA_ERROR_NOT_READY);
  *ms = (float)((double)((int64_t)b->time - (int64_t)a->time) / 1e6);
  RET(CUDA_SUCCESS);
}

static CUresult stream_wait_event(uint32_t cbid, CUstream h, CUevent e, unsigned flags, int ptsz) {
  struct api a;
  api_begin(&a, cbid);
  (void)flags;
  if (!initialized) return api_end(&a, CUDA_ERROR_NOT_INITIALIZED);
  uint64_t t0 = sync_t0();
  if (!e || e->magic != MAGIC_EVENT) return api_end(&a, CUDA_ERROR_INVALID_HANDLE);
  struct CUstream_st *s;
  CUresult r = resolve_stream(h, ptsz, &s);
  if (r) return api_end(&a, r);
  pthread_mutex_lock(&G);
  if (e->recorded && e->time > s->last_end) s->last_end = e->time;
  pthread_mutex_unlock(&G);
  emit_sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, t0, a.corr, s->ctx, s->id, e->id,
            CUDA_SUCCESS);
  return api_end(&a, CUDA_SUCCESS);
}

CUresult cuStreamWaitEvent(CUstream h, CUevent e, unsigned int flags) {
  return stream_wait_event(CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent, h, e, flags, 0);
}
CUresult cuStreamWaitEvent_ptsz(CUstream h, CUevent e, unsigned int flags) {
  return stream_wait_event(CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz, h, e, flags, 1);
}

/* ---------------------------------------------------------------- graphs (stream capture) */

CUresult cuStreamBeginCapture_v2(CUstream h, CUstreamCaptureMode mode) {
  API(cuStreamBeginCapture_v2);
  NEED_CTX();
  (void)mode;
  struct CUstream_st *s;
  CUresult r = resolve_stream(h, 0, &s);
  if (r) RET(r);
  if (s->legacy) RET(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  if (s->capture) RET(CUDA_ERROR_ILLEGAL_STATE);
  struct CUgraph_st *g = calloc(1, sizeof *g);
  if (!g) RET(CUDA_ERROR_OUT_OF_MEMORY);
  g->magic = MAGIC_GRAPH;
  pthread_mutex_lock(&G);
  g->id = next_graph_id++;
  s->capture = g;
  pthread_mutex_unlock(&G);
  RET(CUDA_SUCCESS);
}

CUresult cuStreamEndCapture(CUstream h, CUgraph *pg) {
  API(cuStreamEndCapture);
  NEED_CTX();
  struct CUstream_st *s;
  CUresult r = resolve_stream(h, 0, &s);
  if (r) RET(r);
  if (!pg) RET(CUDA_ERROR_INVALID_VALUE);
  if (!s->capture) RET(CUDA_ERROR_ILLEGAL_STATE);
  pthread_mutex_lock(&G);
  *pg = s->capture;
  s->capture = NULL;
  pthread_mutex_unlock(&G);
  RET(CUDA_SUCCESS);
}

CUresult cuStreamIsCapturing(CUstream h, CUstreamCaptureStatus *st) {
  API(cuStreamIsCapturing);
  NEED_CTX();
  struct CUstream_st *s;
  CUresult r = resolve_stream(h, 0, &s);
  if (r) RET(r);
  if (!st) RET(CUDA_ERROR_INVALID_VALUE);
  *st = s->capture ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  RET(CUDA_SUCCESS);
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *pe, CUgraph g, unsigned long long flags) {
  API(cuGraphInstantiateWithFlags);
  NEED_CTX();
  (void)flags;
  if (!pe || !g || g->magic != MAGIC_GRAPH) RET(CUDA_ERROR_INVALID_VALUE);
  struct CUgraphExec_st *x = calloc(1, sizeof *x);
  if (!x) RET(CUDA_ERROR_OUT_OF_MEMORY);
  x->magic = MAGIC_EXEC;
  x->g = g;
  pthread_mutex_lock(&G);
  x->id = next_graph_id++;
  pthread_mutex_unlock(&G);
  *pe = x;
  RET(CUDA_SUCCESS);
}

CUresult cuGraphDestroy(CUgraph g) {
  API(cuGraphDestroy);
  if (!g || g->magic != MAGIC_GRAPH) RET(CUDA_ERROR_INVALID_VALUE);
  g->magic = 0; /* executable graphs keep their nodes: never freed */
  RET(CUDA_SUCCESS);
}

CUresult cuGraphExecDestroy(CUgraphExec x) {
  API(cuGraphExecDestroy);
  if (!x || x->magic != MAGIC_EXEC) RET(CUDA_ERROR_INVALID_VALUE);
  x->magic = 0;
  free(x);
  RET(CUDA_SUCCESS);
}

/* Runs the graph's nodes in capture order on the stream. Every node's record carries the graph
 * launch's correlation id, graphId and graphNodeId (as real CUPTI). */
static CUresult graph_launch(uint32_t cbid, CUgraphExec x, CUstream h, int ptsz) {
  struct api a;
  api_begin(&a, cbid);
  if (!initialized) return api_end(&a, CUDA_ERROR_NOT_INITIALIZED);
  if (!T.ctx) return api_end(&a, CUDA_ERROR_INVALID_CONTEXT);
  if (!x || x->magic != MAGIC_EXEC) return api_end(&a, CUDA_ERROR_INVALID_VALUE);
  struct CUstream_st *s;
  CUresult r = resolve_stream(h, ptsz, &s);
  if (r) return api_end(&a, r);
  if (s->capture) return api_end(&a, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  /* the nodes run back to back once the launch reaches the GPU */
  uint64_t first = 0, last = 0, earliest = mono() + STUB_LAUNCH_LATENCY_NS;
  for (size_t i = 0; i < x->g->n; i++) {
    const struct op *o = &x->g->v[i];
    op_apply(o);
    uint64_t start, end = schedule(s, op_duration(o), earliest, &start);
    earliest = end;
    if (!i) first = start;
    last = end;
    emit_op(o, s, start, end, a.corr, a.rt_corr, x->id);
  }
  const struct stub_cupti_client *c = client();
  if (x->g->n && c && c->kind_enabled(CUPTI_ACTIVITY_KIND_GRAPH_TRACE)) {
    CUpti_ActivityGraphTrace2 gt;
    memset(&gt, 0, sizeof gt);
    gt.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
    gt.correlationId = a.corr;
    gt.start = first;
    gt.end = last;
    gt.deviceId = (uint32_t)s->ctx->device;
    gt.graphId = x->id;
    gt.contextId = s->ctx->id;
    gt.streamId = s->id;
    gt.endDeviceId = gt.deviceId;
    gt.endContextId = gt.contextId;
    c->emit(&gt, sizeof gt, last, 1);
  }
  return api_end(&a, CUDA_SUCCESS);
}

CUresult cuGraphLaunch(CUgraphExec x, CUstream h) {
  return graph_launch(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, x, h, 0);
}
CUresult cuGraphLaunch_ptsz(CUgraphExec x, CUstream h) {
  return graph_launch(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz, x, h, 1);
}

/* ---------------------------------------------------------------- profiler range, errors */

CUresult cuProfilerStart(void) { return CUDA_SUCCESS; }
CUresult cuProfilerStop(void) { return CUDA_SUCCESS; }

CUresult cuGetErrorString(CUresult r, const char **s) {
  if (!s) return CUDA_ERROR_INVALID_VALUE;
  switch (r) {
  case CUDA_SUCCESS: *s = "no error"; break;
  case CUDA_ERROR_INVALID_VALUE: *s = "invalid argument"; break;
  case CUDA_ERROR_OUT_OF_MEMORY: *s = "out of memory"; break;
  case CUDA_ERROR_NOT_INITIALIZED: *s = "initialization error"; break;
  case CUDA_ERROR_NO_DEVICE: *s = "no CUDA-capable device is detected"; break;
  case CUDA_ERROR_INVALID_CONTEXT: *s = "invalid device context"; break;
  case CUDA_ERROR_INVALID_HANDLE: *s = "invalid resource handle"; break;
  case CUDA_ERROR_NOT_FOUND: *s = "named symbol not found"; break;
  case CUDA_ERROR_NOT_READY: *s = "device not ready"; break;
  default: *s = "unknown error"; return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult r, const char **s) {
  if (!s) return CUDA_ERROR_INVALID_VALUE;
  switch (r) {
  case CUDA_SUCCESS: *s = "CUDA_SUCCESS"; break;
  case CUDA_ERROR_INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; break;
  case CUDA_ERROR_OUT_OF_MEMORY: *s = "CUDA_ERROR_OUT_OF_MEMORY"; break;
  case CUDA_ERROR_NOT_INITIALIZED: *s = "CUDA_ERROR_NOT_INITIALIZED"; break;
  case CUDA_ERROR_NO_DEVICE: *s = "CUDA_ERROR_NO_DEVICE"; break;
  case CUDA_ERROR_INVALID_CONTEXT: *s = "CUDA_ERROR_INVALID_CONTEXT"; break;
  case CUDA_ERROR_INVALID_HANDLE: *s = "CUDA_ERROR_INVALID_HANDLE"; break;
  case CUDA_ERROR_NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; break;
  case CUDA_ERROR_NOT_READY: *s = "CUDA_ERROR_NOT_READY"; break;
  default: *s = "CUDA_ERROR_UNKNOWN"; return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- export tables, proc address */

CUresult cuGetExportTable(const void **table, const CUuuid *id) {
  if (!table || !id) return CUDA_ERROR_INVALID_VALUE;
  if (!memcmp(id, &STUB_RT_TABLE_ID, sizeof *id)) {
    *table = &rt_table;
    return CUDA_SUCCESS;
  }
  if (!memcmp(id, &STUB_CUPTI_TABLE_ID, sizeof *id)) {
    *table = &cupti_table;
    return CUDA_SUCCESS;
  }
  *table = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status);

/* name, minimum CUDA version, default-stream function, per-thread-stream function (or NULL). */
struct proc {
  const char *name;
  int version;
  void *fn, *ptsz;
};

#define P(name, ver, fn, pt)                                                                       \
  { name, ver, (void *)(fn), (void *)(pt) }
static const struct proc procs[] = {
    P("cuInit", 2000, cuInit, NULL),
    P("cuDriverGetVersion", 2020, cuDriverGetVersion, NULL),
    P("cuDeviceGet", 2000, cuDeviceGet, NULL),
    P("cuDeviceGetCount", 2000, cuDeviceGetCount, NULL),
    P("cuDeviceGetName", 2000, cuDeviceGetName, NULL),
    P("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2, NULL),
    P("cuDeviceGetAttribute", 2000, cuDeviceGetAttribute, NULL),
    P("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain, NULL),
    P("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2, NULL),
    P("cuCtxSetCurrent", 4000, cuCtxSetCurrent, NULL),
    P("cuDevicePrimaryCtxGetState", 7000, cuDevicePrimaryCtxGetState, NULL),
    P("cuCtxGetCurrent", 4000, cuCtxGetCurrent, NULL),
    P("cuCtxGetDevice", 2000, cuCtxGetDevice, NULL),
    P("cuCtxSynchronize", 2000, cuCtxSynchronize, NULL),
    P("cuModuleLoadData", 2000, cuModuleLoadData, NULL),
    P("cuModuleGetFunction", 2000, cuModuleGetFunction, NULL),
    P("cuModuleUnload", 2000, cuModuleUnload, NULL),
    P("cuLaunchKernel", 4000, cuLaunchKernel, cuLaunchKernel_ptsz),
    P("cuLaunchKernelEx", 11060, cuLaunchKernelEx, cuLaunchKernelEx_ptsz),
    P("cuMemAlloc", 3020, cuMemAlloc, NULL),
    P("cuMemFree", 3020, cuMemFree, NULL),
    P("cuMemAllocHost", 3020, cuMemAllocHost, NULL),
    P("cuMemHostAlloc", 2020, cuMemHostAlloc, NULL),
    P("cuMemFreeHost", 2000, cuMemFreeHost, NULL),
    P("cuMemAddressReserve", 10020, cuMemAddressReserve, NULL),
    P("cuMemAddressFree", 10020, cuMemAddressFree, NULL),
    P("cuMemCreate", 10020, cuMemCreate, NULL),
    P("cuMemRelease", 10020, cuMemRelease, NULL),
    P("cuMemMap", 10020, cuMemMap, NULL),
    P("cuMemUnmap", 10020, cuMemUnmap, NULL),
    P("cuMemSetAccess", 10020, cuMemSetAccess, NULL),
    P("cuMemcpy", 4000, cuMemcpy, cuMemcpy_ptds),
    P("cuMemcpyAsync", 4000, cuMemcpyAsync, cuMemcpyAsync_ptsz),
    P("cuMemcpyHtoD", 3020, cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds),
    P("cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds),
    P("cuMemcpyDtoD", 3020, cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds),
    P("cuMemcpyHtoDAsync", 3020, cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz),
    P("cuMemcpyDtoHAsync", 3020, cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz),
    P("cuMemcpyDtoDAsync", 3020, cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz),
    P("cuMemcpy2D", 3020, cuMemcpy2D_v2, cuMemcpy2D_v2_ptds),
    P("cuMemcpy2DUnaligned", 3020, cuMemcpy2DUnaligned_v2, NULL),
    P("cuMemcpy2DAsync", 3020, cuMemcpy2DAsync_v2, cuMemcpy2DAsync_v2_ptsz),
    P("cuMemsetD8", 3020, cuMemsetD8_v2, cuMemsetD8_v2_ptds),
    P("cuMemsetD16", 3020, cuMemsetD16_v2, cuMemsetD16_v2_ptds),
    P("cuMemsetD32", 3020, cuMemsetD32_v2, cuMemsetD32_v2_ptds),
    P("cuMemsetD8Async", 3020, cuMemsetD8Async, cuMemsetD8Async_ptsz),
    P("cuMemsetD16Async", 3020, cuMemsetD16Async, cuMemsetD16Async_ptsz),
    P("cuMemsetD32Async", 3020, cuMemsetD32Async, cuMemsetD32Async_ptsz),
    P("cuMemsetD2D8", 3020, cuMemsetD2D8_v2, NULL),
    P("cuMemsetD2D8Async", 3020, cuMemsetD2D8Async, NULL),
    P("cuStreamCreate", 2000, cuStreamCreate, NULL),
    P("cuStreamCreateWithPriority", 5050, cuStreamCreateWithPriority, NULL),
    P("cuStreamDestroy", 4000, cuStreamDestroy_v2, NULL),
    P("cuStreamGetId", 12000, cuStreamGetId, NULL),
    P("cuStreamSynchronize", 2000, cuStreamSynchronize, cuStreamSynchronize_ptsz),
    P("cuStreamQuery", 2000, cuStreamQuery, cuStreamQuery_ptsz),
    P("cuStreamWaitEvent", 3020, cuStreamWaitEvent, cuStreamWaitEvent_ptsz),
    P("cuStreamBeginCapture", 10010, cuStreamBeginCapture_v2, NULL),
    P("cuStreamEndCapture", 10000, cuStreamEndCapture, NULL),
    P("cuStreamIsCapturing", 10000, cuStreamIsCapturing, NULL),
    P("cuEventCreate", 2000, cuEventCreate, NULL),
    P("cuEventDestroy", 4000, cuEventDestroy_v2, NULL),
    P("cuEventRecord", 2000, cuEventRecord, cuEventRecord_ptsz),
    P("cuEventSynchronize", 2000, cuEventSynchronize, NULL),
    P("cuEventQuery", 2000, cuEventQuery, NULL),
    P("cuEventElapsedTime", 12080, cuEventElapsedTime_v2, NULL),
    P("cuGraphInstantiate", 11000, cuGraphInstantiateWithFlags, NULL),
    P("cuGraphInstantiateWithFlags", 11040, cuGraphInstantiateWithFlags, NULL),
    P("cuGraphDestroy", 10000, cuGraphDestroy, NULL),
    P("cuGraphExecDestroy", 10000, cuGraphExecDestroy, NULL),
    P("cuGraphLaunch", 10000, cuGraphLaunch, cuGraphLaunch_ptsz),
    P("cuProfilerStart", 4000, cuProfilerStart, NULL),
    P("cuProfilerStop", 4000, cuProfilerStop, NULL),
    P("cuGetErrorString", 6000, cuGetErrorString, NULL),
    P("cuGetErrorName", 6000, cuGetErrorName, NULL),
    P("cuGetExportTable", 3000, cuGetExportTable, NULL),
    P("cuGetProcAddress", 12000, cuGetProcAddress_v2, NULL),
};
#undef P

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status) {
  API(cuGetProcAddress_v2);
  if (status) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (!symbol || !pfn) RET(CUDA_ERROR_INVALID_VALUE);
  *pfn = NULL;
  for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++) {
    if (strcmp(procs[i].name, symbol)) continue;
    if (cudaVersion < procs[i].version) {
      if (status) *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
      RET(CUDA_ERROR_NOT_FOUND);
    }
    *pfn = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && procs[i].ptsz ? procs[i].ptsz
                                                                                    : procs[i].fn;
    if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
    RET(CUDA_SUCCESS);
  }
  RET(CUDA_ERROR_NOT_FOUND);
}

/* The CUDA 11.3 signature, still exported by the real driver (cuda.h maps the name to _v2). */
#undef cuGetProcAddress
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags) {
  return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}

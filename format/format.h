/* slack trace format: the one definition shared by the writer (runtime/) and the reader
 * (analyzer/). docs/FORMAT.md is the prose spec of exactly what this file and format.c encode.
 *
 * File  = file header, then chunks until end of file.
 * File header (little endian):  magic "SLACKTR\0" (8) | u16 major | u16 minor | u32 body_len |
 *                               body: "key=value\n" lines (UTF-8), unknown keys are ignored.
 * Chunk = chunk header (40 bytes) | payload (one zstd frame of raw_len bytes of records).
 * Chunk header: u32 magic "SLKC" | u32 payload_len | u32 raw_len | u32 records |
 *               u64 t_min | u64 t_max | u32 crc32c(payload) | u32 flags.
 * Record = u8 kind | varint len | len bytes of fields (varints). A reader skips unknown kinds
 * and ignores trailing fields it does not know (that is how a minor version grows a record).
 */
#ifndef SLACK_FORMAT_H
#define SLACK_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define SLK_MAGIC "SLACKTR"      /* 7 chars + NUL = 8 bytes */
#define SLK_VERSION_MAJOR 2      /* a reader refuses a major it does not know */
#define SLK_VERSION_MAJOR_MIN 1  /* the oldest major this reader still reads */
#define SLK_VERSION_MINOR 12     /* a reader reads a newer minor, skipping what it does not know */
#define SLK_FILE_HEADER_FIXED 16 /* magic + major + minor + body_len */
#define SLK_CHUNK_MAGIC 0x434b4c53u /* "SLKC" little endian */
#define SLK_CHUNK_HEADER_SIZE 40
#define SLK_MAX_RECORD 65536 /* no record is longer; a longer len means corruption */

enum slk_kind {
  SLK_STRING = 1,    /* id, bytes: defines string id (kernel name, call site, marker...) */
  SLK_KERNEL = 2,    /* GPU kernel (CUPTI CONCURRENT_KERNEL) */
  SLK_MEMCPY = 3,    /* GPU copy (CUPTI MEMCPY and MEMCPY2/peer) */
  SLK_MEMSET = 4,    /* GPU memset */
  SLK_SYNC = 5,      /* CUPTI SYNCHRONIZATION record */
  SLK_API = 6,       /* CUPTI RUNTIME/DRIVER API record: joins GPU work to a host thread */
  SLK_HOST = 7,      /* a call seen by a slack hook (interpose/) */
  SLK_MARKER = 8,    /* NVTX range */
  SLK_GRAPH = 9,     /* CUPTI GRAPH_TRACE: one graph launch's span on the GPU */
  SLK_DROPS = 10,    /* events lost: tid, count (cumulative delta since the last DROPS of tid) */
  SLK_DEVICE = 11,   /* device id, name string, SM count, memory */
  SLK_OVERHEAD = 12, /* CUPTI overhead record */
  SLK_THREAD = 13,   /* tid, name string */
  SLK_PROBE = 14,    /* the exit probe of CUPTI's cost per launch (runtime/probe.c), since 2.1 */
  SLK_SAMPLE = 15,   /* a Python thread's stack sampled by the writer (pyframes.c), since 2.2 */
  SLK_WINDOW = 16,   /* a production window (runtime/window.c): start, end, sources, since 2.3 */
  SLK_TAKEN = 17,    /* another CUPTI client took the activity records at `start`, since 2.4 */
  SLK_STREAM = 18,   /* a stream handle's CUPTI stream id, resolved by libslack, since 2.5 */
  SLK_KIND_MAX = 19
};

/* SLK_API.fn domain bit: set for driver API cbids, clear for runtime API cbids. */
#define SLK_API_DRIVER 0x80000000u

/* SLK_DROPS.flags: where the loss happened. */
enum slk_drop_where { SLK_DROP_RING = 0, SLK_DROP_CUPTI = 1, SLK_DROP_WRITER = 2 };

/* SLK_PROBE.flags: `result` (off) was measured with CUPTI detached (cuptiFinalize), not only
 * with its records disabled. */
#define SLK_PROBE_DETACHED 0x1u

/* SLK_TAKEN.flags: how another CUPTI client in the process took CUPTI's activity records from
 * libslack (after `start` they are the other client's: the file holds only those CUPTI had
 * already buffered for libslack; host calls go on). */
#define SLK_TAKEN_CALLBACKS 0x1u /* it registered its own activity buffer callbacks */
/* not another client: a CUPTI call of libslack's own (cuptiFinalize, a forced flush) did not
 * return within SLACK_EXIT_TIMEOUT_MS at `start`, and libslack left CUPTI alone from then on */
#define SLK_TAKEN_STUCK 0x2u

/* SLK_STREAM: thread `tid` made the first call on stream handle `stream` (a HOST record's
 * stream value) at `start` since CUPTI was attached (or since the thread's current context
 * changed, for the handles 0, 1 and 2, which name a stream per context or per thread); CUPTI
 * names that stream `count` on device `device` (the stream id of its GPU records). The latest
 * such record at or before a call (of the same thread for handles 0, 1, 2) maps the call's
 * handle. */

/* SLK_WINDOW.fn: the sources that held the window open (any of them, at some time in it). */
#define SLK_WINDOW_DUTY 0x1u     /* SLACK_WINDOW's duty cycle */
#define SLK_WINDOW_NVTX 0x2u     /* SLACK_CAPTURE_RANGE=nvtx:NAME */
#define SLK_WINDOW_PROFILER 0x4u /* SLACK_CAPTURE_RANGE=cudaProfilerApi */
#define SLK_WINDOW_TRIGGER 0x8u  /* SLACK_TRIGGER_FILE or SLACK_TRIGGER_SIGNAL */
/* SLACK_PACE_PROBE (since 2.10): the trace of a whole process is cut once: a window from tracing's
 * start to where CUPTI's records went off, the untraced stretch (flags SLK_WINDOW_UNTRACED) from
 * CUPTI's detach to its attaching again, in which the hooks time the program's calls and nothing
 * else, and a window from there to the end */
#define SLK_WINDOW_PACE 0x10u
/* SLK_WINDOW.flags: written when the window opened (end = start); the record written when it
 * closes (same start, no flag) supersedes it. A window with only this record was still open
 * when the trace ended (a killed process): it lasts to the trace's last record. */
#define SLK_WINDOW_OPEN 0x1u
/* not a window: the stretch [start, end) in which CUPTI was detached and the hooks timed the
 * program's calls, times only (SLK_WINDOW_PACE) */
#define SLK_WINDOW_UNTRACED 0x2u

/* SLK_HOST.flags */
#define SLK_HOST_SYNCHRONOUS 0x1u /* the call blocks the host until the GPU work completes */
#define SLK_HOST_DRIVER 0x2u      /* seen at driver level (cuGetProcAddress / dlsym wrapper) */
/* CUPTI was attached with its records on when the call began and returned (since session 48;
 * before, when it returned): its GPU work has records. A
 * call without it (a window's first calls while CUPTI attaches again) has none: the order join
 * leaves it out, in traces where any call has the flag (writers since GPU run 43) */
#define SLK_HOST_CUPTI_ON 0x4u
/* A query (cudaEventQuery, cudaStreamQuery and the driver's) that stands for a run of them: the
 * thread asked about one event or stream again and again with no other recorded call between.
 * A query record's `bytes` is how many answers "not ready" it stands for (since 2.8; every one
 * the program got is in some record). With `result` 0 the run ended in the answer "done", and
 * the record spans the first question's start to that answer's end: a wait by polling. Without
 * it the run was left before the GPU was done (its span the not-ready questions'); a lone
 * "not ready" has `bytes` 1 and no flag. */
#define SLK_HOST_POLLED 0x8u

/* One decoded record. Fields a kind does not use stay zero. 128 bytes, laid out so that the
 * fields most stages read come first (the first 64 bytes: one cache line where the array is
 * aligned to one); a STRING record's bytes share their place with a kernel's launch shape. */
struct slk_record {
  uint8_t kind;
  uint8_t copy_kind; /* CUpti_ActivityMemcpyKind (MEMCPY) or enum cudaMemcpyKind (HOST) */
  uint8_t src_kind;  /* CUpti_ActivityMemoryKind */
  uint8_t dst_kind;
  uint32_t device;   /* GPU records, DEVICE */
  uint64_t stream;   /* CUPTI streamId for GPU records; the cudaStream_t value for HOST */
  uint64_t tid;      /* host system thread id (HOST, API, MARKER, DROPS, THREAD, OVERHEAD) */
  uint64_t start;    /* ns, CLOCK_MONOTONIC of the traced host */
  uint64_t end;      /* ns, >= start */
  uint32_t corr;     /* CUPTI correlation id (HOST: of the API call it made; 0: none) */
  uint32_t name;     /* string id: kernel name, marker name, device name, thread name */
  uint32_t fn;       /* HOST: enum slk_fn; API: cbid | SLK_API_DRIVER; SYNC: type; OVERHEAD: kind;
                        PROBE: median launch call with CUPTI attached, its records disabled */
  uint32_t flags;    /* MEMCPY/MEMSET: CUPTI flags; HOST: SLK_HOST_*; DROPS: slk_drop_where;
                        PROBE: SLK_PROBE_DETACHED */
  uint32_t callsite; /* HOST: string id of the call site (0 = unknown) */
  uint32_t pystack;  /* HOST: string id of the calling thread's Python frames (0 = none) */
  uint64_t bytes;    /* copies, memsets; DEVICE: global memory; PROBE: median launch call with
                        CUPTI's per-launch records on (ns) */
  uint32_t result;   /* HOST/API: return value; PROBE: median launch call with them off (ns) */
  uint32_t graph_id; /* GPU records launched from a graph; GRAPH */
  uint32_t shmem;    /* KERNEL: static + dynamic shared memory per block; PROBE (since
                        2.6): median launch call through slack's own hook, CUPTI on (ns;
                        0: not measured) */
  uint32_t regs;     /* KERNEL: registers per thread; DEVICE: SM count; PROBE (since 2.6):
                        median launch call with CUPTI's API records off, its other
                        records on (ns; 0: not measured) */
  uint64_t count;    /* DROPS: events lost; SYNC: CUPTI event id; PROBE: launches timed
                        per state */
  union {
    struct {
      int32_t grid[3], block[3]; /* KERNEL */
    };
    struct {
      const char *str; /* STRING: bytes (not NUL-terminated in the buffer); valid until next
                          read */
      uint32_t str_len;
      uint32_t id; /* STRING: the id it defines */
    };
  };
  uint64_t unused; /* zero: the record is 128 bytes, two cache lines */
};
_Static_assert(sizeof(struct slk_record) == 128, "a record is two cache lines");

/* Host functions seen by hooks: id, name, 1 when synchronous by contract, category (enum
 * slk_fn_cat: what the call submits or waits for; the copies' categories name a direction where
 * the function does). The numbering is part of the format: append only. */
/* clang-format off */
#define SLK_FN_LIST(X) \
  X(UNKNOWN, "unknown", 0, OTHER) \
  X(LAUNCH, "cudaLaunchKernel", 0, LAUNCH) \
  X(LAUNCH_EX, "cudaLaunchKernelExC", 0, LAUNCH) \
  X(LAUNCH_COOP, "cudaLaunchCooperativeKernel", 0, LAUNCH) \
  X(LAUNCH_HOSTFUNC, "cudaLaunchHostFunc", 0, HOSTFUNC) \
  X(GRAPH_LAUNCH, "cudaGraphLaunch", 0, GRAPH) \
  X(MEMCPY, "cudaMemcpy", 1, COPY) \
  X(MEMCPY_ASYNC, "cudaMemcpyAsync", 0, COPY) \
  X(MEMCPY_2D, "cudaMemcpy2D", 1, COPY) \
  X(MEMCPY_2D_ASYNC, "cudaMemcpy2DAsync", 0, COPY) \
  X(MEMCPY_3D, "cudaMemcpy3D", 1, COPY) \
  X(MEMCPY_3D_ASYNC, "cudaMemcpy3DAsync", 0, COPY) \
  X(MEMCPY_PEER, "cudaMemcpyPeer", 1, COPY) \
  X(MEMCPY_PEER_ASYNC, "cudaMemcpyPeerAsync", 0, COPY) \
  X(MEMCPY_TO_SYMBOL, "cudaMemcpyToSymbol", 1, COPY_TO_SYMBOL) \
  X(MEMCPY_FROM_SYMBOL, "cudaMemcpyFromSymbol", 1, COPY_FROM_SYMBOL) \
  X(MEMSET, "cudaMemset", 0, MEMSET) \
  X(MEMSET_ASYNC, "cudaMemsetAsync", 0, MEMSET) \
  X(MEMSET_2D, "cudaMemset2D", 0, MEMSET) \
  X(MEMSET_2D_ASYNC, "cudaMemset2DAsync", 0, MEMSET) \
  X(DEVICE_SYNC, "cudaDeviceSynchronize", 1, WAIT) \
  X(STREAM_SYNC, "cudaStreamSynchronize", 1, WAIT) \
  X(EVENT_SYNC, "cudaEventSynchronize", 1, WAIT) \
  X(STREAM_WAIT_EVENT, "cudaStreamWaitEvent", 0, OTHER) \
  X(EVENT_RECORD, "cudaEventRecord", 0, OTHER) \
  X(STREAM_QUERY, "cudaStreamQuery", 0, OTHER) \
  X(EVENT_QUERY, "cudaEventQuery", 0, OTHER) \
  X(CU_LAUNCH, "cuLaunchKernel", 0, LAUNCH) \
  X(CU_LAUNCH_EX, "cuLaunchKernelEx", 0, LAUNCH) \
  X(CU_LAUNCH_COOP, "cuLaunchCooperativeKernel", 0, LAUNCH) \
  X(CU_LAUNCH_HOSTFUNC, "cuLaunchHostFunc", 0, HOSTFUNC) \
  X(CU_GRAPH_LAUNCH, "cuGraphLaunch", 0, GRAPH) \
  X(CU_MEMCPY, "cuMemcpy", 1, COPY) \
  X(CU_MEMCPY_ASYNC, "cuMemcpyAsync", 0, COPY) \
  X(CU_MEMCPY_HTOD, "cuMemcpyHtoD", 1, COPY_HTOD) \
  X(CU_MEMCPY_HTOD_ASYNC, "cuMemcpyHtoDAsync", 0, COPY_HTOD) \
  X(CU_MEMCPY_DTOH, "cuMemcpyDtoH", 1, COPY_DTOH) \
  X(CU_MEMCPY_DTOH_ASYNC, "cuMemcpyDtoHAsync", 0, COPY_DTOH) \
  X(CU_MEMCPY_DTOD, "cuMemcpyDtoD", 0, COPY_DTOD) \
  X(CU_MEMCPY_DTOD_ASYNC, "cuMemcpyDtoDAsync", 0, COPY_DTOD) \
  X(CU_MEMCPY_2D, "cuMemcpy2D", 1, COPY) \
  X(CU_MEMCPY_2D_ASYNC, "cuMemcpy2DAsync", 0, COPY) \
  X(CU_MEMCPY_3D, "cuMemcpy3D", 1, COPY) \
  X(CU_MEMCPY_3D_ASYNC, "cuMemcpy3DAsync", 0, COPY) \
  X(CU_MEMCPY_PEER, "cuMemcpyPeer", 1, COPY) \
  X(CU_MEMCPY_PEER_ASYNC, "cuMemcpyPeerAsync", 0, COPY) \
  X(CU_MEMSET_D8, "cuMemsetD8", 0, MEMSET) \
  X(CU_MEMSET_D8_ASYNC, "cuMemsetD8Async", 0, MEMSET) \
  X(CU_MEMSET_D16, "cuMemsetD16", 0, MEMSET) \
  X(CU_MEMSET_D16_ASYNC, "cuMemsetD16Async", 0, MEMSET) \
  X(CU_MEMSET_D32, "cuMemsetD32", 0, MEMSET) \
  X(CU_MEMSET_D32_ASYNC, "cuMemsetD32Async", 0, MEMSET) \
  X(CU_MEMSET_D2D8, "cuMemsetD2D8", 0, MEMSET) \
  X(CU_MEMSET_D2D8_ASYNC, "cuMemsetD2D8Async", 0, MEMSET) \
  X(CU_MEMSET_D2D32, "cuMemsetD2D32", 0, MEMSET) \
  X(CU_MEMSET_D2D32_ASYNC, "cuMemsetD2D32Async", 0, MEMSET) \
  X(CU_CTX_SYNC, "cuCtxSynchronize", 1, WAIT) \
  X(CU_STREAM_SYNC, "cuStreamSynchronize", 1, WAIT) \
  X(CU_EVENT_SYNC, "cuEventSynchronize", 1, WAIT) \
  X(CU_STREAM_WAIT_EVENT, "cuStreamWaitEvent", 0, OTHER) \
  X(CU_EVENT_RECORD, "cuEventRecord", 0, OTHER) \
  X(CU_STREAM_QUERY, "cuStreamQuery", 0, OTHER) \
  X(CU_EVENT_QUERY, "cuEventQuery", 0, OTHER) \
  X(MEMCPY_BATCH_ASYNC, "cudaMemcpyBatchAsync", 0, COPY) \
  X(CU_MEMCPY_BATCH_ASYNC, "cuMemcpyBatchAsync", 0, COPY) \
  X(MEMCPY_TO_SYMBOL_ASYNC, "cudaMemcpyToSymbolAsync", 0, COPY_TO_SYMBOL) \
  X(MEMCPY_FROM_SYMBOL_ASYNC, "cudaMemcpyFromSymbolAsync", 0, COPY_FROM_SYMBOL) \
  X(CU_MEMSET_D2D16, "cuMemsetD2D16", 0, MEMSET) \
  X(CU_MEMSET_D2D16_ASYNC, "cuMemsetD2D16Async", 0, MEMSET) \
  X(FREE, "cudaFree", 1, WAIT) \
  X(CU_MEM_FREE, "cuMemFree", 1, WAIT) \
  X(MALLOC, "cudaMalloc", 0, OTHER) \
  X(CU_MEM_ALLOC, "cuMemAlloc", 0, OTHER) \
  X(MALLOC_HOST, "cudaMallocHost", 0, OTHER) \
  X(HOST_ALLOC, "cudaHostAlloc", 0, OTHER) \
  X(FREE_HOST, "cudaFreeHost", 1, WAIT) \
  X(CU_MEM_ALLOC_HOST, "cuMemAllocHost", 0, OTHER) \
  X(CU_MEM_HOST_ALLOC, "cuMemHostAlloc", 0, OTHER) \
  X(CU_MEM_FREE_HOST, "cuMemFreeHost", 1, WAIT) \
  X(MALLOC_ASYNC, "cudaMallocAsync", 0, OTHER) \
  X(MEM_POOL_TRIM_TO, "cudaMemPoolTrimTo", 0, OTHER) \
  X(CU_MEM_CREATE, "cuMemCreate", 0, OTHER) \
  X(CU_MEM_RELEASE, "cuMemRelease", 0, OTHER) \
  X(CU_MEM_MAP, "cuMemMap", 0, OTHER) \
  X(CU_MEM_UNMAP, "cuMemUnmap", 0, OTHER) \
  X(CU_MEM_SET_ACCESS, "cuMemSetAccess", 0, OTHER)
/* clang-format on */

enum slk_fn {
#define SLK_FN_ENUM(id, name, sync, cat) SLK_FN_##id,
  SLK_FN_LIST(SLK_FN_ENUM)
#undef SLK_FN_ENUM
      SLK_FN_COUNT
};

enum slk_fn_cat {
  SLK_FNC_OTHER = 0,        /* event records, queries, waits between streams, unknown */
  SLK_FNC_LAUNCH,           /* a kernel launch */
  SLK_FNC_HOSTFUNC,         /* a host function launched on a stream */
  SLK_FNC_GRAPH,            /* a graph launch */
  SLK_FNC_COPY,             /* a copy whose direction is its kind argument */
  SLK_FNC_COPY_HTOD,        /* host to device by the function */
  SLK_FNC_COPY_DTOH,        /* device to host by the function */
  SLK_FNC_COPY_DTOD,        /* device to device by the function */
  SLK_FNC_COPY_TO_SYMBOL,   /* to a symbol: host to device unless its kind says otherwise */
  SLK_FNC_COPY_FROM_SYMBOL, /* from a symbol: device to host unless its kind says otherwise */
  SLK_FNC_MEMSET,
  SLK_FNC_WAIT /* the host waits for the GPU: device, stream, event and context synchronize */
};
/* The category of fn (SLK_FNC_OTHER for ids this version does not know). */
int slk_fn_cat(uint32_t fn);
static inline int slk_fnc_is_copy(int c) {
  return c >= SLK_FNC_COPY && c <= SLK_FNC_COPY_FROM_SYMBOL;
}
/* launches, copies, memsets: the calls that put work on the GPU */
static inline int slk_fnc_submits(int c) {
  return c == SLK_FNC_LAUNCH || c == SLK_FNC_HOSTFUNC || c == SLK_FNC_GRAPH ||
         c == SLK_FNC_MEMSET || slk_fnc_is_copy(c);
}

/* The join of a CUPTI API record [api_start, api_end] with a hooked host call [t0, t1] of the
 * same thread, used by the writer (to give the host call its correlation id) and by the reader
 * (for API records the writer kept). The call falls on the API record when it holds it, give or
 * take SLK_JOIN_TOLERANCE_NS (the hook and CUPTI stamp at different depths of one call) and they
 * overlap; or when it sits strictly inside it (a library's static cudart, which no hook sees,
 * calling a hooked driver function: cuDNN and cuBLASLt do this). */
#define SLK_JOIN_TOLERANCE_NS 2000
static inline int slk_join_falls_on(uint64_t t0, uint64_t t1, uint64_t api_start,
                                    uint64_t api_end) {
  int overlaps = t0 < api_end && t1 > api_start;
  int holds =
      overlaps && t0 <= api_start + SLK_JOIN_TOLERANCE_NS && t1 + SLK_JOIN_TOLERANCE_NS >= api_end;
  int inside = t0 >= api_start && t1 <= api_end;
  return holds || inside;
}

/* Name of a host function id ("unknown" when out of range). */
const char *slk_fn_name(uint32_t fn);
/* 1 when the host function blocks until GPU work completes (by its API contract). */
int slk_fn_is_sync(uint32_t fn);
/* 1 for the queries that ask whether GPU work is done without waiting for it (event and stream,
 * runtime and driver): a loop of them is a wait by polling (SLK_HOST_POLLED). */
static inline int slk_fn_is_query(uint32_t fn) {
  return fn == SLK_FN_STREAM_QUERY || fn == SLK_FN_EVENT_QUERY || fn == SLK_FN_CU_STREAM_QUERY ||
         fn == SLK_FN_CU_EVENT_QUERY;
}
/* The answer "not ready" of a query: cudaErrorNotReady and CUDA_ERROR_NOT_READY are both 600. */
#define SLK_NOT_READY 600u
/* 1 when a HOST record (function fn, flags) held its thread on the GPU: a blocking call, or a run
 * of queries (SLK_HOST_POLLED): what the host summaries count as blocked time and the untraced
 * tail's pace leaves out. */
static inline int slk_host_blocks(uint32_t fn, uint32_t flags) {
  return (flags & (SLK_HOST_SYNCHRONOUS | SLK_HOST_POLLED)) || slk_fn_is_sync(fn);
}
/* Name of a record kind ("kind17" style for unknown kinds; buffer is static). */
const char *slk_kind_name(uint8_t kind);

/* ---- record codec: both sides keep the same per-chunk delta state ---- */

#define SLK_DELTA_SLOTS 4096
#define SLK_DELTA_NEAR 16
struct slk_delta {
  int v1; /* 1: format 1.x rules (a start is coded against the previous start of its key); 0:
             format 2 (against the previous end, the gap: smaller for back-to-back work) */
  uint64_t key[SLK_DELTA_SLOTS];
  uint64_t last[SLK_DELTA_SLOTS];
  uint8_t used[SLK_DELTA_SLOTS];
  uint32_t memo; /* the slot found last (0: none): consecutive records of one stream or thread */
  /* per few low bits of a key, the slot found for it last (0: none; checked against key and
   * used before it is taken) */
  uint32_t near[SLK_DELTA_NEAR];
};
/* Reset at the start of every chunk (chunks stand alone). Keeps v1. */
void slk_delta_reset(struct slk_delta *d);

/* Encode r into out (capacity cap). Returns bytes written, 0 if cap is too small. */
size_t slk_encode(struct slk_delta *d, const struct slk_record *r, uint8_t *out, size_t cap);
/* Decode one record from in[0..len). Returns bytes consumed, 0 at a malformed record.
 * Unknown kinds are consumed and returned with r->kind set to that kind, no fields decoded. */
size_t slk_decode(struct slk_delta *d, const uint8_t *in, size_t len, struct slk_record *r);
/* slk_decode for a record already checked (slk_skip) where only its times and what identifies it
 * are wanted: of kernels, copies, memsets, API records, host calls and markers it fills kind,
 * device, stream, tid, start, end, corr, name (kernels, markers), graph_id (kernels: all but
 * their launch shape), and of host calls fn, bytes, copy_kind, flags, result and callsite too,
 * as slk_decode does; their other fields are left as they were. Other kinds are decoded whole.
 * The delta state ends as slk_decode leaves it. */
size_t slk_decode_light(struct slk_delta *d, const uint8_t *in, size_t len, struct slk_record *r);
/* slk_decode for a record already checked (slk_skip) where only its times are wanted: of
 * kernels, copies, memsets, API records, host calls and markers it fills kind, device and stream
 * (GPU records) or tid (the others), start and end, the fields that come first and key the
 * times' delta coding; their other fields are left as they were. Other kinds are decoded whole.
 * The correlation ids, delta-coded too, are skipped: after it, the chunk's later records are
 * to be decoded by it as well (their correlation ids would be wrong). */
size_t slk_decode_times(struct slk_delta *d, const uint8_t *in, size_t len, struct slk_record *r);
/* slk_decode_times for a record not checked before: the fields it leaves are checked as slk_skip
 * checks them, and it returns 0 wherever slk_decode would (one pass over the bytes, not two). */
size_t slk_decode_times_checked(struct slk_delta *d, const uint8_t *in, size_t len,
                                struct slk_record *r);

/* The length of the record at in[0..len) when slk_decode would decode it (the same checks), 0
 * where slk_decode would fail; no field is decoded and no delta state is needed. The reader
 * checks a chunk with it before delivering any record. */
size_t slk_skip(const uint8_t *in, size_t len);

/* CRC-32C (Castagnoli) of buf: with the SSE4.2 instruction where the CPU has it. */
uint32_t slk_crc32c(const void *buf, size_t len);
/* The same by tables only (what a CPU without SSE4.2 runs; the tests compare the two). */
uint32_t slk_crc32c_software(const void *buf, size_t len);

/* Fills the 40-byte chunk header h (layout at the top of this file) for the payload_len bytes
 * of zstd frame at payload: magic, the lengths, records, t_min, t_max, the payload's CRC-32C
 * and flags 0. What slk_file_flush writes, and what tests/tools/slk_recompress.c rewrites. */
void slk_chunk_header_put(uint8_t *h, const void *payload, uint32_t payload_len, uint32_t raw_len,
                          uint32_t records, uint64_t t_min, uint64_t t_max);

/* Writes len bytes to fd whole (again after EINTR and short writes). 0, or -1 with errno (EIO
 * for a write of 0 bytes). */
int slk_write_all(int fd, const void *buf, size_t len);

/* ---- file writer (format/trace_file.c): used by the in-process writer thread and by
 * `slack import`. Not thread-safe: one owner thread. ---- */
struct slk_file;
/* Writes the file header to fd (body: "key=value\n" lines) and returns a writer, NULL on
 * allocation or write failure (errno set). chunk_bytes: raw record bytes per chunk. */
struct slk_file *slk_file_open(int fd, const char *header_body, int zstd_level, size_t chunk_bytes);
/* Adds one record; writes a chunk when the raw buffer is full. 0, or -1 on a write error
 * (errno set; the writer is then failed and drops everything after). */
int slk_file_add(struct slk_file *f, const struct slk_record *r);
/* The string id for s (defining it with a STRING record in the current chunk the first time). 0
 * is never a valid id ("none"). */
uint32_t slk_file_intern(struct slk_file *f, const char *s, size_t len);
/* Writes the records buffered so far as one chunk (nothing if none). 0 or -1 as above. */
int slk_file_flush(struct slk_file *f);
/* Flushes, frees the writer; the fd stays open (the caller owns it). Returns flush's result. */
int slk_file_close(struct slk_file *f);
/* Lets the writer pick each chunk's level: the highest up to max_level whose compression is
 * predicted to take at most budget_pct of the wall time since the previous chunk. */
void slk_file_auto_level(struct slk_file *f, int max_level, int budget_pct);
/* Changes the zstd level from the next chunk on. */
void slk_file_set_level(struct slk_file *f, int level);
/* Thread CPU time spent compressing so far, in ns. */
uint64_t slk_file_compress_ns(const struct slk_file *f);
/* Bytes written to fd so far, and records added so far. */
uint64_t slk_file_bytes(const struct slk_file *f);
uint64_t slk_file_records(const struct slk_file *f);

/* Little-endian helpers for the fixed headers. */
static inline void slk_put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}
static inline void slk_put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint32_t slk_get_u32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++)
    v |= (uint32_t)p[i] << (8 * i);
  return v;
}
static inline uint64_t slk_get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

#endif

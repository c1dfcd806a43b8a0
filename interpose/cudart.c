/* CUDA runtime API wrappers, exported under the runtime's own names so that the preload
 * overrides libcudart.so.13's definitions (its versioned symbols, cudaMemcpy@@libcudart.so.13,
 * still yield to an unversioned preloaded one).
 *
 * The names are those libcudart.so.13 exports (nm -D): the legacy-stream function, and where
 * it exists its per-thread-default-stream twin, which code built with --default-stream
 * per-thread calls instead: _ptds for the synchronous calls, _ptsz for those taking a stream.
 * cudaMemcpyPeer(Async), cudaDeviceSynchronize, cudaEventSynchronize and cudaEventQuery have no
 * twin. `<<<>>>` compiles to __cudaLaunchKernel(_ptsz) in CUDA 13, not to cudaLaunchKernel.
 *
 * cuda_runtime_api.h is included without CUDA_API_PER_THREAD_DEFAULT_STREAM, so it does not
 * rename anything; the twins are defined under their explicit names.
 *
 * Not wrapped: cudaMemcpyBatchAsync. Its signature changed in CUDA 13.0 (the failIdx argument
 * went away) and an unversioned preloaded definition would also capture a CUDA 12 program's
 * calls, passing them on with the wrong arguments. The driver call underneath
 * (cuMemcpyBatchAsync, whose versions cuGetProcAddress tells apart) is recorded instead.
 */
#include <cuda_runtime_api.h>
#include <stddef.h>

#include "interpose.h"

#define LIBCUDART "libcudart.so.13"

/* Declared for C++ only (crt/device_functions.h). */
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
                               size_t shmem, cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
                                    size_t shmem, cudaStream_t stream);

/* ---- what each wrapper records ---- */

static uint64_t bytes_3d(const struct cudaMemcpy3DParms *p) {
  /* The extent is in bytes unless a CUDA array takes part; then in its elements, whose size the
   * wrapper does not know (asking would be a CUDA call): recorded as elements then. */
  return p != NULL ? (uint64_t)p->extent.width * p->extent.height * p->extent.depth : 0;
}
static uint8_t kind_3d(const struct cudaMemcpy3DParms *p) {
  return p != NULL ? (uint8_t)p->kind : 0;
}
static cudaStream_t config_stream(const cudaLaunchConfig_t *config) {
  return config != NULL ? config->stream : NULL;
}

#define SYNC_COPY(id, kind) slack_copy_sync(SLACK_SYNC(id), (unsigned)(kind))

/* One exported wrapper. `pt`: a null stream means the per-thread default stream (the _ptsz and
 * _ptds twins). The expressions may use the parameters and nothing else. If libcudart cannot be
 * found the program cannot have reached this function through it; the call fails as a missing
 * symbol would. */
#define RT_WRAP(name, pt, fn, params, args, stream, bytes, kind, sync)                             \
  SLACK_EXPORT cudaError_t name params {                                                           \
    static void *real_p;                                                                           \
    __typeof__(&name) real = (__typeof__(&name))slack_resolve(&real_p, #name, LIBCUDART);          \
    if (real == NULL) return cudaErrorSharedObjectSymbolNotFound;                                  \
    uint64_t t0;                                                                                   \
    if (!hook_begin(&t0)) return real args;                                                        \
    cudaError_t r = real args;                                                                     \
    hook_end(SLK_FN_##fn, t0, slack_stream((stream), (pt)), (bytes), (uint8_t)(kind), (sync),      \
             (uint32_t)r, __builtin_return_address(0));                                            \
    return r;                                                                                      \
  }
/* The legacy function and its per-thread twin. */
#define RT_SZ(name, ...) RT_WRAP(name, 0, __VA_ARGS__) RT_WRAP(name##_ptsz, 1, __VA_ARGS__)
#define RT_DS(name, ...) RT_WRAP(name, 0, __VA_ARGS__) RT_WRAP(name##_ptds, 1, __VA_ARGS__)

/* ---- launches ---- */

RT_SZ(__cudaLaunchKernel, LAUNCH,
      (cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t shmem, cudaStream_t stream),
      (kernel, grid, block, args, shmem, stream), stream, 0, 0, SLACK_SYNC(LAUNCH))
RT_SZ(cudaLaunchKernel, LAUNCH,
      (const void *func, dim3 grid, dim3 block, void **args, size_t shmem, cudaStream_t stream),
      (func, grid, block, args, shmem, stream), stream, 0, 0, SLACK_SYNC(LAUNCH))
RT_SZ(cudaLaunchKernelExC, LAUNCH_EX,
      (const cudaLaunchConfig_t *config, const void *func, void **args), (config, func, args),
      config_stream(config), 0, 0, SLACK_SYNC(LAUNCH_EX))
RT_SZ(cudaLaunchCooperativeKernel, LAUNCH_COOP,
      (const void *func, dim3 grid, dim3 block, void **args, size_t shmem, cudaStream_t stream),
      (func, grid, block, args, shmem, stream), stream, 0, 0, SLACK_SYNC(LAUNCH_COOP))
RT_SZ(cudaLaunchHostFunc, LAUNCH_HOSTFUNC, (cudaStream_t stream, cudaHostFn_t fn, void *data),
      (stream, fn, data), stream, 0, 0, SLACK_SYNC(LAUNCH_HOSTFUNC))
RT_SZ(cudaGraphLaunch, GRAPH_LAUNCH, (cudaGraphExec_t exec, cudaStream_t stream), (exec, stream),
      stream, 0, 0, SLACK_SYNC(GRAPH_LAUNCH))

/* ---- copies ---- */

RT_DS(cudaMemcpy, MEMCPY, (void *dst, const void *src, size_t n, enum cudaMemcpyKind kind),
      (dst, src, n, kind), NULL, n, kind, SYNC_COPY(MEMCPY, kind))
RT_SZ(cudaMemcpyAsync, MEMCPY_ASYNC,
      (void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t stream),
      (dst, src, n, kind, stream), stream, n, kind, SLACK_SYNC(MEMCPY_ASYNC))
RT_DS(cudaMemcpy2D, MEMCPY_2D,
      (void *dst, size_t dpitch, const void *src, size_t spitch, size_t w, size_t h,
       enum cudaMemcpyKind kind),
      (dst, dpitch, src, spitch, w, h, kind), NULL, (uint64_t)w *h, kind,
      SYNC_COPY(MEMCPY_2D, kind))
RT_SZ(cudaMemcpy2DAsync, MEMCPY_2D_ASYNC,
      (void *dst, size_t dpitch, const void *src, size_t spitch, size_t w, size_t h,
       enum cudaMemcpyKind kind, cudaStream_t stream),
      (dst, dpitch, src, spitch, w, h, kind, stream), stream, (uint64_t)w *h, kind,
      SLACK_SYNC(MEMCPY_2D_ASYNC))
RT_DS(cudaMemcpy3D, MEMCPY_3D, (const struct cudaMemcpy3DParms *p), (p), NULL, bytes_3d(p),
      kind_3d(p), SYNC_COPY(MEMCPY_3D, kind_3d(p)))
RT_SZ(cudaMemcpy3DAsync, MEMCPY_3D_ASYNC, (const struct cudaMemcpy3DParms *p, cudaStream_t stream),
      (p, stream), stream, bytes_3d(p), kind_3d(p), SLACK_SYNC(MEMCPY_3D_ASYNC))
RT_WRAP(cudaMemcpyPeer, 0, MEMCPY_PEER,
        (void *dst, int dst_device, const void *src, int src_device, size_t n),
        (dst, dst_device, src, src_device, n), NULL, n, SLACK_COPY_DTOD, SLACK_SYNC(MEMCPY_PEER))
RT_WRAP(cudaMemcpyPeerAsync, 0, MEMCPY_PEER_ASYNC,
        (void *dst, int dst_device, const void *src, int src_device, size_t n, cudaStream_t stream),
        (dst, dst_device, src, src_device, n, stream), stream, n, SLACK_COPY_DTOD,
        SLACK_SYNC(MEMCPY_PEER_ASYNC))
RT_DS(cudaMemcpyToSymbol, MEMCPY_TO_SYMBOL,
      (const void *symbol, const void *src, size_t n, size_t offset, enum cudaMemcpyKind kind),
      (symbol, src, n, offset, kind), NULL, n, kind, SYNC_COPY(MEMCPY_TO_SYMBOL, kind))
RT_DS(cudaMemcpyFromSymbol, MEMCPY_FROM_SYMBOL,
      (void *dst, const void *symbol, size_t n, size_t offset, enum cudaMemcpyKind kind),
      (dst, symbol, n, offset, kind), NULL, n, kind, SYNC_COPY(MEMCPY_FROM_SYMBOL, kind))
RT_SZ(cudaMemcpyToSymbolAsync, MEMCPY_TO_SYMBOL_ASYNC,
      (const void *symbol, const void *src, size_t n, size_t offset, enum cudaMemcpyKind kind,
       cudaStream_t stream),
      (symbol, src, n, offset, kind, stream), stream, n, kind, SLACK_SYNC(MEMCPY_TO_SYMBOL_ASYNC))
RT_SZ(cudaMemcpyFromSymbolAsync, MEMCPY_FROM_SYMBOL_ASYNC,
      (void *dst, const void *symbol, size_t n, size_t offset, enum cudaMemcpyKind kind,
       cudaStream_t stream),
      (dst, symbol, n, offset, kind, stream), stream, n, kind, SLACK_SYNC(MEMCPY_FROM_SYMBOL_ASYNC))

/* ---- memsets ---- */

RT_DS(cudaMemset, MEMSET, (void *dst, int value, size_t n), (dst, value, n), NULL, n, 0,
      SLACK_SYNC(MEMSET))
RT_SZ(cudaMemsetAsync, MEMSET_ASYNC, (void *dst, int value, size_t n, cudaStream_t stream),
      (dst, value, n, stream), stream, n, 0, SLACK_SYNC(MEMSET_ASYNC))
RT_DS(cudaMemset2D, MEMSET_2D, (void *dst, size_t pitch, int value, size_t w, size_t h),
      (dst, pitch, value, w, h), NULL, (uint64_t)w *h, 0, SLACK_SYNC(MEMSET_2D))
RT_SZ(cudaMemset2DAsync, MEMSET_2D_ASYNC,
      (void *dst, size_t pitch, int value, size_t w, size_t h, cudaStream_t stream),
      (dst, pitch, value, w, h, stream), stream, (uint64_t)w *h, 0, SLACK_SYNC(MEMSET_2D_ASYNC))

/* ---- synchronization, events, queries ---- */

RT_WRAP(cudaDeviceSynchronize, 0, DEVICE_SYNC, (void), (), NULL, 0, 0, SLACK_SYNC(DEVICE_SYNC))
RT_SZ(cudaStreamSynchronize, STREAM_SYNC, (cudaStream_t stream), (stream), stream, 0, 0,
      SLACK_SYNC(STREAM_SYNC))
RT_WRAP(cudaEventSynchronize, 0, EVENT_SYNC, (cudaEvent_t event), (event), NULL, 0, 0,
        SLACK_SYNC(EVENT_SYNC))
RT_SZ(cudaStreamWaitEvent, STREAM_WAIT_EVENT,
      (cudaStream_t stream, cudaEvent_t event, unsigned int flags), (stream, event, flags), stream,
      0, 0, SLACK_SYNC(STREAM_WAIT_EVENT))
RT_SZ(cudaEventRecord, EVENT_RECORD, (cudaEvent_t event, cudaStream_t stream), (event, stream),
      stream, 0, 0, SLACK_SYNC(EVENT_RECORD))
RT_SZ(cudaEventRecordWithFlags, EVENT_RECORD,
      (cudaEvent_t event, cudaStream_t stream, unsigned int flags), (event, stream, flags), stream,
      0, 0, SLACK_SYNC(EVENT_RECORD))
RT_SZ(cudaStreamQuery, STREAM_QUERY, (cudaStream_t stream), (stream), stream, 0, 0,
      SLACK_SYNC(STREAM_QUERY))
/* the event handle in `bytes`: hook_end folds a thread's run of queries of one handle (a polling
 * loop) into one record, and writes no bytes for a query */
RT_WRAP(cudaEventQuery, 0, EVENT_QUERY, (cudaEvent_t event), (event), NULL,
        (uint64_t)(uintptr_t)event, 0, SLACK_SYNC(EVENT_QUERY))
/* cudaFree waits for the whole device before it frees (a caching allocator's empty_cache() in
 * a training loop: GPU run 54's holdout_hidden `free`); cudaFreeAsync does not and is not
 * wrapped */
RT_WRAP(cudaFree, 0, FREE, (void *ptr), (ptr), NULL, 0, 0, SLACK_SYNC(FREE))
/* cudaMalloc: the host time a caching allocator spends growing (after an empty_cache(), at the
 * first steps) */
RT_WRAP(cudaMalloc, 0, MALLOC, (void **ptr, size_t size), (ptr, size), NULL, size, 0,
        SLACK_SYNC(MALLOC))
/* CUDA's stream-ordered allocator (PyTorch's PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync,
 * RAPIDS' pools): every tensor's allocation is a cudaMallocAsync, a few microseconds from the
 * pool's memory, longer where the pool maps memory again after a trim; empty_cache() there is a
 * device synchronize and a cudaMemPoolTrimTo, which gives the pool's memory back (GPU run 178:
 * that host work read as host work outside CUDA). cudaFreeAsync is not wrapped (it only queues
 * the free). */
RT_SZ(cudaMallocAsync, MALLOC_ASYNC, (void **ptr, size_t size, cudaStream_t stream),
      (ptr, size, stream), stream, size, 0, SLACK_SYNC(MALLOC_ASYNC))
RT_WRAP(cudaMemPoolTrimTo, 0, MEM_POOL_TRIM_TO, (cudaMemPool_t pool, size_t keep), (pool, keep),
        NULL, keep, 0, SLACK_SYNC(MEM_POOL_TRIM_TO))
/* Page-locked host memory (code that pins a staging buffer and frees it each step, with no
 * pinned pool): its allocation locks and maps the pages for the device, host work in a driver
 * call, and cudaFreeHost is recorded as synchronizing, as cudaFree is (the CUDA guide lists
 * page-locked host allocation among the operations that synchronize the device; not yet timed on
 * the H200: scripts/gpu-hostalloc.sh) */
RT_WRAP(cudaMallocHost, 0, MALLOC_HOST, (void **ptr, size_t size), (ptr, size), NULL, size, 0,
        SLACK_SYNC(MALLOC_HOST))
RT_WRAP(cudaHostAlloc, 0, HOST_ALLOC, (void **ptr, size_t size, unsigned int flags),
        (ptr, size, flags), NULL, size, 0, SLACK_SYNC(HOST_ALLOC))
RT_WRAP(cudaFreeHost, 0, FREE_HOST, (void *ptr), (ptr), NULL, 0, 0, SLACK_SYNC(FREE_HOST))

/* ---- SLACK_CAPTURE_RANGE=cudaProfilerApi (runtime/window.c) ---- */

/* Not recorded as calls: cudaProfilerStart opens a production window when the capture range is
 * the profiler API, cudaProfilerStop closes it (with no such capture range both only pass
 * through). The window opens after the call and closes before it, so that what it does is not
 * in the window. */
SLACK_EXPORT cudaError_t cudaProfilerStart(void) {
  static void *real_p;
  cudaError_t (*real)(void) =
      (cudaError_t(*)(void))slack_resolve(&real_p, "cudaProfilerStart", LIBCUDART);
  if (real == NULL) return cudaErrorSharedObjectSymbolNotFound;
  cudaError_t r = real();
  if (r == cudaSuccess) slack_window_profiler(1);
  return r;
}

SLACK_EXPORT cudaError_t cudaProfilerStop(void) {
  static void *real_p;
  cudaError_t (*real)(void) =
      (cudaError_t(*)(void))slack_resolve(&real_p, "cudaProfilerStop", LIBCUDART);
  if (real == NULL) return cudaErrorSharedObjectSymbolNotFound;
  slack_window_profiler(0);
  return real();
}

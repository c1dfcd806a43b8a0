/* Driver API wrappers: what cudart, cuBLAS, cuDNN, NCCL and Triton call underneath.
 *
 * Those libraries do not link libcuda: they fetch driver functions at run time, through
 * cuGetProcAddress (by base name, a CUDA version and a per-thread-stream flag) or through dlsym
 * (by export name). slack_wrap_driver turns such a real pointer into a wrapper that records the
 * call; the dlsym hook (dl.c) and the cuGetProcAddress wrappers below apply it to every pointer
 * handed out. Programs linked with -lcuda call the exports directly: libslack defines those
 * export names too, each finding its real function in libcuda by name.
 *
 * One base name stands for several functions:
 *  - ABI versions: "cuMemcpyHtoD" asked for with cudaVersion 3000 is the 32-bit cuMemcpyHtoD,
 *    with 3020 or later cuMemcpyHtoD_v2; cuCtxSynchronize gained a context argument in 13.0.
 *    A wrapper has one signature, so each hook below is one ABI: its PFN_xxx_vNNNN typedef
 *    from cudaTypedefs.h, checked at compile time. A lookup whose version selects an ABI not
 *    listed here (older, or newer than these headers) gets the real pointer back, unwrapped.
 *  - per-thread default stream variants (_ptsz, _ptds): same signature, but a null stream means
 *    the thread's default stream. They are hooks of their own, so the wrapper knows it.
 * And one hook may be handed different real pointers for the same ABI (a second driver copy,
 * another tool's wrapper reached through RTLD_NEXT). A wrapper cannot carry state of its own
 * (the caller holds a bare function pointer), so each hook owns NSLOTS distinct wrapper
 * functions, each bound to one static real-pointer slot, claimed by compare-and-swap on first
 * sight of a new real pointer. When all are taken the real pointer goes out unwrapped and
 * slack_driver_unwrapped() counts it: a missing record is better than a wrong call.
 *
 * cuGetExportTable (the private interface between NVIDIA's libraries) is never wrapped: it is
 * simply not in the table.
 */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "interpose.h"

/* cuda.h renames these to their newest version (cuGetProcAddress_v2, cuMemcpyBatchAsync_v2);
 * slack defines every export under its own name, the older ones included. */
#undef cuGetProcAddress
#undef cuMemcpyBatchAsync

/* The newest CUDA version whose ABIs this file knows: the headers it is compiled against. */
#define KNOWN_CUDA_VERSION CUDA_VERSION

/* cuGetProcAddress hands out per-thread-stream variants (_ptsz/_ptds) only for CUDA 7.0+. */
#define PER_THREAD_SINCE 7000

#define LIBCUDA "libcuda.so.1"

#define NSLOTS 4

/* ---- what each hook records ---- */

/* enum cudaMemcpyKind from the memory types of a 2D/3D copy. */
static uint8_t copy_kind(CUmemorytype src, CUmemorytype dst) {
  if (src == CU_MEMORYTYPE_UNIFIED || dst == CU_MEMORYTYPE_UNIFIED) return SLACK_COPY_DEFAULT;
  int src_host = src == CU_MEMORYTYPE_HOST, dst_host = dst == CU_MEMORYTYPE_HOST;
  if (src_host) return dst_host ? SLACK_COPY_HTOH : SLACK_COPY_HTOD;
  return dst_host ? SLACK_COPY_DTOH : SLACK_COPY_DTOD; /* device and array memory alike */
}
static uint8_t kind_2d(const CUDA_MEMCPY2D_v2 *p) {
  return p != NULL ? copy_kind(p->srcMemoryType, p->dstMemoryType) : 0;
}
static uint64_t bytes_2d(const CUDA_MEMCPY2D_v2 *p) {
  return p != NULL ? (uint64_t)p->WidthInBytes * p->Height : 0;
}
static uint8_t kind_3d(const CUDA_MEMCPY3D_v2 *p) {
  return p != NULL ? copy_kind(p->srcMemoryType, p->dstMemoryType) : 0;
}
static uint64_t bytes_3d(const CUDA_MEMCPY3D_v2 *p) {
  return p != NULL ? (uint64_t)p->WidthInBytes * p->Height * p->Depth : 0;
}
/* Read only after the call succeeded: the driver has validated the array by then. */
static uint64_t bytes_batch(CUresult r, const size_t *sizes, size_t count) {
  uint64_t sum = 0;
  if (r != CUDA_SUCCESS || sizes == NULL) return 0;
  for (size_t i = 0; i < count; i++)
    sum += sizes[i];
  return sum;
}
static CUstream config_stream(const CUlaunchConfig *config) {
  return config != NULL ? config->hStream : NULL;
}

/* ---- signatures: parameter lists and the matching argument lists ---- */

#define P_LAUNCH                                                                                   \
  (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,               \
   unsigned int by, unsigned int bz, unsigned int shmem, CUstream hStream, void **params,          \
   void **extra)
#define A_LAUNCH (f, gx, gy, gz, bx, by, bz, shmem, hStream, params, extra)
#define P_LAUNCH_EX (const CUlaunchConfig *config, CUfunction f, void **params, void **extra)
#define A_LAUNCH_EX (config, f, params, extra)
#define P_COOP                                                                                     \
  (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,               \
   unsigned int by, unsigned int bz, unsigned int shmem, CUstream hStream, void **params)
#define A_COOP (f, gx, gy, gz, bx, by, bz, shmem, hStream, params)
#define P_HOSTFUNC (CUstream hStream, CUhostFn fn, void *data)
#define A_HOSTFUNC (hStream, fn, data)
#define P_GRAPH (CUgraphExec exec, CUstream hStream)
#define A_GRAPH (exec, hStream)
#define P_DD (CUdeviceptr_v2 dst, CUdeviceptr_v2 src, size_t n)
#define P_DD_ASYNC (CUdeviceptr_v2 dst, CUdeviceptr_v2 src, size_t n, CUstream hStream)
#define P_HD (CUdeviceptr_v2 dst, const void *src, size_t n)
#define P_HD_ASYNC (CUdeviceptr_v2 dst, const void *src, size_t n, CUstream hStream)
#define P_DH (void *dst, CUdeviceptr_v2 src, size_t n)
#define P_DH_ASYNC (void *dst, CUdeviceptr_v2 src, size_t n, CUstream hStream)
#define A_COPY (dst, src, n)
#define A_COPY_ASYNC (dst, src, n, hStream)
#define P_2D (const CUDA_MEMCPY2D_v2 *p)
#define P_2D_ASYNC (const CUDA_MEMCPY2D_v2 *p, CUstream hStream)
#define P_3D (const CUDA_MEMCPY3D_v2 *p)
#define P_3D_ASYNC (const CUDA_MEMCPY3D_v2 *p, CUstream hStream)
#define A_P (p)
#define A_P_ASYNC (p, hStream)
#define P_PEER                                                                                     \
  (CUdeviceptr_v2 dst, CUcontext dst_ctx, CUdeviceptr_v2 src, CUcontext src_ctx, size_t n)
#define P_PEER_ASYNC                                                                               \
  (CUdeviceptr_v2 dst, CUcontext dst_ctx, CUdeviceptr_v2 src, CUcontext src_ctx, size_t n,         \
   CUstream hStream)
#define A_PEER (dst, dst_ctx, src, src_ctx, n)
#define A_PEER_ASYNC (dst, dst_ctx, src, src_ctx, n, hStream)
#define P_SET(T) (CUdeviceptr_v2 dst, T v, size_t n)
#define P_SET_ASYNC(T) (CUdeviceptr_v2 dst, T v, size_t n, CUstream hStream)
#define A_SET (dst, v, n)
#define A_SET_ASYNC (dst, v, n, hStream)
#define P_SET2D(T) (CUdeviceptr_v2 dst, size_t pitch, T v, size_t w, size_t h)
#define P_SET2D_ASYNC(T)                                                                           \
  (CUdeviceptr_v2 dst, size_t pitch, T v, size_t w, size_t h, CUstream hStream)
#define A_SET2D (dst, pitch, v, w, h)
#define A_SET2D_ASYNC (dst, pitch, v, w, h, hStream)
#define P_BATCH_12080                                                                              \
  (CUdeviceptr_v2 * dsts, CUdeviceptr_v2 * srcs, size_t * sizes, size_t count,                     \
   CUmemcpyAttributes_v1 * attrs, size_t * attr_idxs, size_t num_attrs, size_t * fail_idx,         \
   CUstream hStream)
#define A_BATCH_12080 (dsts, srcs, sizes, count, attrs, attr_idxs, num_attrs, fail_idx, hStream)
#define P_BATCH_13000                                                                              \
  (CUdeviceptr_v2 * dsts, CUdeviceptr_v2 * srcs, size_t * sizes, size_t count,                     \
   CUmemcpyAttributes_v1 * attrs, size_t * attr_idxs, size_t num_attrs, CUstream hStream)
#define A_BATCH_13000 (dsts, srcs, sizes, count, attrs, attr_idxs, num_attrs, hStream)

/* ---- the hooks ----
 * X(export name, base name, since, per_thread, PFN type, SLK_FN id, (params), (args),
 *   stream, bytes, copy kind, sync flag)
 * `since`: the cudaVersion from which cuGetProcAddress(base) returns this ABI. The expressions
 * may use the parameters, `r` (the result) and nothing else. SZ/DS add the per-thread twin
 * (export name + _ptsz / _ptds); ONE has none. Every ABI of a base name from the oldest listed
 * one up to KNOWN_CUDA_VERSION must be listed, or the version selection below would pick an
 * older ABI for a newer one. */
#define SZ(X, name, ...) X(name, 0, __VA_ARGS__) X(name##_ptsz, 1, __VA_ARGS__)
#define DS(X, name, ...) X(name, 0, __VA_ARGS__) X(name##_ptds, 1, __VA_ARGS__)
#define ONE(X, name, ...) X(name, 0, __VA_ARGS__)

#define SYNC_COPY(id, kind) slack_copy_sync(SLACK_SYNC(id), (kind))

// clang-format off
#define DRIVER_HOOKS(X)                                                                         \
  SZ(X, cuLaunchKernel, "cuLaunchKernel", 4000, PFN_cuLaunchKernel_v4000, CU_LAUNCH,            \
     P_LAUNCH, A_LAUNCH, hStream, 0, 0, SLACK_SYNC(CU_LAUNCH))                                  \
  SZ(X, cuLaunchKernelEx, "cuLaunchKernelEx", 11060, PFN_cuLaunchKernelEx_v11060, CU_LAUNCH_EX, \
     P_LAUNCH_EX, A_LAUNCH_EX, config_stream(config), 0, 0, SLACK_SYNC(CU_LAUNCH_EX))           \
  SZ(X, cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel", 9000,                           \
     PFN_cuLaunchCooperativeKernel_v9000, CU_LAUNCH_COOP, P_COOP, A_COOP, hStream, 0, 0,        \
     SLACK_SYNC(CU_LAUNCH_COOP))                                                                \
  SZ(X, cuLaunchHostFunc, "cuLaunchHostFunc", 10000, PFN_cuLaunchHostFunc_v10000,               \
     CU_LAUNCH_HOSTFUNC, P_HOSTFUNC, A_HOSTFUNC, hStream, 0, 0, SLACK_SYNC(CU_LAUNCH_HOSTFUNC))  \
  SZ(X, cuGraphLaunch, "cuGraphLaunch", 10000, PFN_cuGraphLaunch_v10000, CU_GRAPH_LAUNCH,       \
     P_GRAPH, A_GRAPH, hStream, 0, 0, SLACK_SYNC(CU_GRAPH_LAUNCH))                              \
  DS(X, cuMemcpy, "cuMemcpy", 4000, PFN_cuMemcpy_v4000, CU_MEMCPY, P_DD, A_COPY, NULL, n,       \
     SLACK_COPY_DEFAULT, SLACK_SYNC(CU_MEMCPY))                                                 \
  SZ(X, cuMemcpyAsync, "cuMemcpyAsync", 4000, PFN_cuMemcpyAsync_v4000, CU_MEMCPY_ASYNC,         \
     P_DD_ASYNC, A_COPY_ASYNC, hStream, n, SLACK_COPY_DEFAULT, SLACK_SYNC(CU_MEMCPY_ASYNC))     \
  DS(X, cuMemcpyHtoD_v2, "cuMemcpyHtoD", 3020, PFN_cuMemcpyHtoD_v3020, CU_MEMCPY_HTOD, P_HD,    \
     A_COPY, NULL, n, SLACK_COPY_HTOD, SLACK_SYNC(CU_MEMCPY_HTOD))                              \
  SZ(X, cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync", 3020, PFN_cuMemcpyHtoDAsync_v3020,           \
     CU_MEMCPY_HTOD_ASYNC, P_HD_ASYNC, A_COPY_ASYNC, hStream, n, SLACK_COPY_HTOD,               \
     SLACK_SYNC(CU_MEMCPY_HTOD_ASYNC))                                                          \
  DS(X, cuMemcpyDtoH_v2, "cuMemcpyDtoH", 3020, PFN_cuMemcpyDtoH_v3020, CU_MEMCPY_DTOH, P_DH,    \
     A_COPY, NULL, n, SLACK_COPY_DTOH, SLACK_SYNC(CU_MEMCPY_DTOH))                              \
  SZ(X, cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync", 3020, PFN_cuMemcpyDtoHAsync_v3020,           \
     CU_MEMCPY_DTOH_ASYNC, P_DH_ASYNC, A_COPY_ASYNC, hStream, n, SLACK_COPY_DTOH,               \
     SLACK_SYNC(CU_MEMCPY_DTOH_ASYNC))                                                          \
  DS(X, cuMemcpyDtoD_v2, "cuMemcpyDtoD", 3020, PFN_cuMemcpyDtoD_v3020, CU_MEMCPY_DTOD, P_DD,    \
     A_COPY, NULL, n, SLACK_COPY_DTOD, SLACK_SYNC(CU_MEMCPY_DTOD))                              \
  SZ(X, cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync", 3020, PFN_cuMemcpyDtoDAsync_v3020,           \
     CU_MEMCPY_DTOD_ASYNC, P_DD_ASYNC, A_COPY_ASYNC, hStream, n, SLACK_COPY_DTOD,               \
     SLACK_SYNC(CU_MEMCPY_DTOD_ASYNC))                                                          \
  DS(X, cuMemcpy2D_v2, "cuMemcpy2D", 3020, PFN_cuMemcpy2D_v3020, CU_MEMCPY_2D, P_2D, A_P,       \
     NULL, bytes_2d(p), kind_2d(p), SYNC_COPY(CU_MEMCPY_2D, kind_2d(p)))                        \
  DS(X, cuMemcpy2DUnaligned_v2, "cuMemcpy2DUnaligned", 3020, PFN_cuMemcpy2DUnaligned_v3020,     \
     CU_MEMCPY_2D, P_2D, A_P, NULL, bytes_2d(p), kind_2d(p),                                    \
     SYNC_COPY(CU_MEMCPY_2D, kind_2d(p)))                                                       \
  SZ(X, cuMemcpy2DAsync_v2, "cuMemcpy2DAsync", 3020, PFN_cuMemcpy2DAsync_v3020,                 \
     CU_MEMCPY_2D_ASYNC, P_2D_ASYNC, A_P_ASYNC, hStream, bytes_2d(p), kind_2d(p),               \
     SLACK_SYNC(CU_MEMCPY_2D_ASYNC))                                                            \
  DS(X, cuMemcpy3D_v2, "cuMemcpy3D", 3020, PFN_cuMemcpy3D_v3020, CU_MEMCPY_3D, P_3D, A_P,       \
     NULL, bytes_3d(p), kind_3d(p), SYNC_COPY(CU_MEMCPY_3D, kind_3d(p)))                        \
  SZ(X, cuMemcpy3DAsync_v2, "cuMemcpy3DAsync", 3020, PFN_cuMemcpy3DAsync_v3020,                 \
     CU_MEMCPY_3D_ASYNC, P_3D_ASYNC, A_P_ASYNC, hStream, bytes_3d(p), kind_3d(p),               \
     SLACK_SYNC(CU_MEMCPY_3D_ASYNC))                                                            \
  DS(X, cuMemcpyPeer, "cuMemcpyPeer", 4000, PFN_cuMemcpyPeer_v4000, CU_MEMCPY_PEER, P_PEER,     \
     A_PEER, NULL, n, SLACK_COPY_DTOD, SLACK_SYNC(CU_MEMCPY_PEER))                              \
  SZ(X, cuMemcpyPeerAsync, "cuMemcpyPeerAsync", 4000, PFN_cuMemcpyPeerAsync_v4000,              \
     CU_MEMCPY_PEER_ASYNC, P_PEER_ASYNC, A_PEER_ASYNC, hStream, n, SLACK_COPY_DTOD,             \
     SLACK_SYNC(CU_MEMCPY_PEER_ASYNC))                                                          \
  DS(X, cuMemsetD8_v2, "cuMemsetD8", 3020, PFN_cuMemsetD8_v3020, CU_MEMSET_D8,                  \
     P_SET(unsigned char), A_SET, NULL, n, 0, SLACK_SYNC(CU_MEMSET_D8))                         \
  SZ(X, cuMemsetD8Async, "cuMemsetD8Async", 3020, PFN_cuMemsetD8Async_v3020,                    \
     CU_MEMSET_D8_ASYNC, P_SET_ASYNC(unsigned char), A_SET_ASYNC, hStream, n, 0,                \
     SLACK_SYNC(CU_MEMSET_D8_ASYNC))                                                            \
  DS(X, cuMemsetD16_v2, "cuMemsetD16", 3020, PFN_cuMemsetD16_v3020, CU_MEMSET_D16,              \
     P_SET(unsigned short), A_SET, NULL, (uint64_t)n * 2, 0, SLACK_SYNC(CU_MEMSET_D16))         \
  SZ(X, cuMemsetD16Async, "cuMemsetD16Async", 3020, PFN_cuMemsetD16Async_v3020,                 \
     CU_MEMSET_D16_ASYNC, P_SET_ASYNC(unsigned short), A_SET_ASYNC, hStream, (uint64_t)n * 2,   \
     0, SLACK_SYNC(CU_MEMSET_D16_ASYNC))                                                        \
  DS(X, cuMemsetD32_v2, "cuMemsetD32", 3020, PFN_cuMemsetD32_v3020, CU_MEMSET_D32,              \
     P_SET(unsigned int), A_SET, NULL, (uint64_t)n * 4, 0, SLACK_SYNC(CU_MEMSET_D32))           \
  SZ(X, cuMemsetD32Async, "cuMemsetD32Async", 3020, PFN_cuMemsetD32Async_v3020,                 \
     CU_MEMSET_D32_ASYNC, P_SET_ASYNC(unsigned int), A_SET_ASYNC, hStream, (uint64_t)n * 4, 0,  \
     SLACK_SYNC(CU_MEMSET_D32_ASYNC))                                                           \
  DS(X, cuMemsetD2D8_v2, "cuMemsetD2D8", 3020, PFN_cuMemsetD2D8_v3020, CU_MEMSET_D2D8,          \
     P_SET2D(unsigned char), A_SET2D, NULL, (uint64_t)w * h, 0, SLACK_SYNC(CU_MEMSET_D2D8))     \
  SZ(X, cuMemsetD2D8Async, "cuMemsetD2D8Async", 3020, PFN_cuMemsetD2D8Async_v3020,              \
     CU_MEMSET_D2D8_ASYNC, P_SET2D_ASYNC(unsigned char), A_SET2D_ASYNC, hStream,                \
     (uint64_t)w * h, 0, SLACK_SYNC(CU_MEMSET_D2D8_ASYNC))                                      \
  DS(X, cuMemsetD2D16_v2, "cuMemsetD2D16", 3020, PFN_cuMemsetD2D16_v3020, CU_MEMSET_D2D16,      \
     P_SET2D(unsigned short), A_SET2D, NULL, (uint64_t)w * h * 2, 0,                            \
     SLACK_SYNC(CU_MEMSET_D2D16))                                                               \
  SZ(X, cuMemsetD2D16Async, "cuMemsetD2D16Async", 3020, PFN_cuMemsetD2D16Async_v3020,           \
     CU_MEMSET_D2D16_ASYNC, P_SET2D_ASYNC(unsigned short), A_SET2D_ASYNC, hStream,              \
     (uint64_t)w * h * 2, 0, SLACK_SYNC(CU_MEMSET_D2D16_ASYNC))                                 \
  DS(X, cuMemsetD2D32_v2, "cuMemsetD2D32", 3020, PFN_cuMemsetD2D32_v3020, CU_MEMSET_D2D32,      \
     P_SET2D(unsigned int), A_SET2D, NULL, (uint64_t)w * h * 4, 0,                              \
     SLACK_SYNC(CU_MEMSET_D2D32))                                                               \
  SZ(X, cuMemsetD2D32Async, "cuMemsetD2D32Async", 3020, PFN_cuMemsetD2D32Async_v3020,           \
     CU_MEMSET_D2D32_ASYNC, P_SET2D_ASYNC(unsigned int), A_SET2D_ASYNC, hStream,                \
     (uint64_t)w * h * 4, 0, SLACK_SYNC(CU_MEMSET_D2D32_ASYNC))                                 \
  ONE(X, cuCtxSynchronize, "cuCtxSynchronize", 2000, PFN_cuCtxSynchronize_v2000, CU_CTX_SYNC,   \
      (void), (), NULL, 0, 0, SLACK_SYNC(CU_CTX_SYNC))                                          \
  ONE(X, cuCtxSynchronize_v2, "cuCtxSynchronize", 13000, PFN_cuCtxSynchronize_v13000,           \
      CU_CTX_SYNC, (CUcontext ctx), (ctx), NULL, 0, 0, SLACK_SYNC(CU_CTX_SYNC))                 \
  SZ(X, cuStreamSynchronize, "cuStreamSynchronize", 2000, PFN_cuStreamSynchronize_v2000,        \
     CU_STREAM_SYNC, (CUstream hStream), (hStream), hStream, 0, 0, SLACK_SYNC(CU_STREAM_SYNC))  \
  ONE(X, cuEventSynchronize, "cuEventSynchronize", 2000, PFN_cuEventSynchronize_v2000,          \
      CU_EVENT_SYNC, (CUevent ev), (ev), NULL, 0, 0, SLACK_SYNC(CU_EVENT_SYNC))                 \
  SZ(X, cuStreamWaitEvent, "cuStreamWaitEvent", 3020, PFN_cuStreamWaitEvent_v3020,              \
     CU_STREAM_WAIT_EVENT, (CUstream hStream, CUevent ev, unsigned int flags),                  \
     (hStream, ev, flags), hStream, 0, 0, SLACK_SYNC(CU_STREAM_WAIT_EVENT))                     \
  SZ(X, cuEventRecord, "cuEventRecord", 2000, PFN_cuEventRecord_v2000, CU_EVENT_RECORD,         \
     (CUevent ev, CUstream hStream), (ev, hStream), hStream, 0, 0, SLACK_SYNC(CU_EVENT_RECORD)) \
  SZ(X, cuEventRecordWithFlags, "cuEventRecordWithFlags", 11010,                                \
     PFN_cuEventRecordWithFlags_v11010, CU_EVENT_RECORD,                                        \
     (CUevent ev, CUstream hStream, unsigned int flags), (ev, hStream, flags), hStream, 0, 0,   \
     SLACK_SYNC(CU_EVENT_RECORD))                                                               \
  SZ(X, cuStreamQuery, "cuStreamQuery", 2000, PFN_cuStreamQuery_v2000, CU_STREAM_QUERY,         \
     (CUstream hStream), (hStream), hStream, 0, 0, SLACK_SYNC(CU_STREAM_QUERY))                 \
  ONE(X, cuEventQuery, "cuEventQuery", 2000, PFN_cuEventQuery_v2000, CU_EVENT_QUERY,            \
      (CUevent ev), (ev), NULL, (uint64_t)(uintptr_t)ev, 0, SLACK_SYNC(CU_EVENT_QUERY))         \
  ONE(X, cuMemFree_v2, "cuMemFree", 3020, PFN_cuMemFree_v3020, CU_MEM_FREE, (CUdeviceptr dptr), \
      (dptr), NULL, 0, 0, SLACK_SYNC(CU_MEM_FREE))                                              \
  ONE(X, cuMemAlloc_v2, "cuMemAlloc", 3020, PFN_cuMemAlloc_v3020, CU_MEM_ALLOC,                 \
      (CUdeviceptr * dptr, size_t bytesize), (dptr, bytesize), NULL, bytesize, 0,               \
      SLACK_SYNC(CU_MEM_ALLOC))                                                                 \
  ONE(X, cuMemAllocHost_v2, "cuMemAllocHost", 3020, PFN_cuMemAllocHost_v3020,                   \
      CU_MEM_ALLOC_HOST, (void **pp, size_t bytesize), (pp, bytesize), NULL, bytesize, 0,       \
      SLACK_SYNC(CU_MEM_ALLOC_HOST))                                                            \
  ONE(X, cuMemHostAlloc, "cuMemHostAlloc", 2020, PFN_cuMemHostAlloc_v2020, CU_MEM_HOST_ALLOC,   \
      (void **pp, size_t bytesize, unsigned int flags), (pp, bytesize, flags), NULL, bytesize,  \
      0, SLACK_SYNC(CU_MEM_HOST_ALLOC))                                                         \
  ONE(X, cuMemFreeHost, "cuMemFreeHost", 2000, PFN_cuMemFreeHost_v2000, CU_MEM_FREE_HOST,       \
      (void *p), (p), NULL, 0, 0, SLACK_SYNC(CU_MEM_FREE_HOST))                                 \
  ONE(X, cuMemCreate, "cuMemCreate", 10020, PFN_cuMemCreate_v10020, CU_MEM_CREATE,             \
      (CUmemGenericAllocationHandle * handle, size_t size, const CUmemAllocationProp *prop,     \
       unsigned long long flags),                                                               \
      (handle, size, prop, flags), NULL, size, 0, SLACK_SYNC(CU_MEM_CREATE))                    \
  ONE(X, cuMemRelease, "cuMemRelease", 10020, PFN_cuMemRelease_v10020, CU_MEM_RELEASE,          \
      (CUmemGenericAllocationHandle handle), (handle), NULL, 0, 0, SLACK_SYNC(CU_MEM_RELEASE))  \
  ONE(X, cuMemMap, "cuMemMap", 10020, PFN_cuMemMap_v10020, CU_MEM_MAP,                          \
      (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,        \
       unsigned long long flags),                                                               \
      (ptr, size, offset, handle, flags), NULL, size, 0, SLACK_SYNC(CU_MEM_MAP))                \
  ONE(X, cuMemUnmap, "cuMemUnmap", 10020, PFN_cuMemUnmap_v10020, CU_MEM_UNMAP,                  \
      (CUdeviceptr ptr, size_t size), (ptr, size), NULL, size, 0, SLACK_SYNC(CU_MEM_UNMAP))     \
  ONE(X, cuMemSetAccess, "cuMemSetAccess", 10020, PFN_cuMemSetAccess_v10020, CU_MEM_SET_ACCESS, \
      (CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count),                \
      (ptr, size, desc, count), NULL, size, 0, SLACK_SYNC(CU_MEM_SET_ACCESS))                   \
  SZ(X, cuMemcpyBatchAsync, "cuMemcpyBatchAsync", 12080, PFN_cuMemcpyBatchAsync_v12080,         \
     CU_MEMCPY_BATCH_ASYNC, P_BATCH_12080, A_BATCH_12080, hStream,                              \
     bytes_batch(r, sizes, count), SLACK_COPY_DEFAULT, SLACK_SYNC(CU_MEMCPY_BATCH_ASYNC))       \
  SZ(X, cuMemcpyBatchAsync_v2, "cuMemcpyBatchAsync", 13000, PFN_cuMemcpyBatchAsync_v13000,      \
     CU_MEMCPY_BATCH_ASYNC, P_BATCH_13000, A_BATCH_13000, hStream,                              \
     bytes_batch(r, sizes, count), SLACK_COPY_DEFAULT, SLACK_SYNC(CU_MEMCPY_BATCH_ASYNC))
// clang-format on

/* The body every wrapper shares: `real` is the real function (PFN type), `pt` whether a null
 * stream means the per-thread one. Records nothing when hook_begin says so (tracing off, or a
 * call made from inside another recorded call or from slack itself). */
#define DRIVER_BODY(pfn, real, pt, fn, args, stream, bytes, kind, sync)                            \
  {                                                                                                \
    pfn real_ = (pfn)(real);                                                                       \
    uint64_t t0;                                                                                   \
    if (!hook_begin(&t0)) return real_ args;                                                       \
    CUresult r = real_ args;                                                                       \
    hook_end(SLK_FN_##fn, t0, slack_stream((stream), (pt)), (bytes), (uint8_t)(kind),              \
             SLK_HOST_DRIVER | (sync), (uint32_t)r, __builtin_return_address(0));                  \
    return r;                                                                                      \
  }

/* Per hook: NSLOTS real-pointer slots and one wrapper function bound to each. The
 * _Static_assert holds the wrapper to the PFN typedef of the ABI it claims to wrap. */
#define SLOT_WRAPPER(name, pt, pfn, fn, params, args, stream, bytes, kind, sync, i)                \
  static CUresult w_##name##_##i params DRIVER_BODY(                                               \
      pfn, __atomic_load_n(&slots_##name[i], __ATOMIC_RELAXED), pt, fn, args, stream, bytes, kind, \
      sync)
#define DEFINE_SLOTS(name, pt, base, since, pfn, fn, params, args, stream, bytes, kind, sync)      \
  static void *slots_##name[NSLOTS];                                                               \
  SLOT_WRAPPER(name, pt, pfn, fn, params, args, stream, bytes, kind, sync, 0)                      \
  SLOT_WRAPPER(name, pt, pfn, fn, params, args, stream, bytes, kind, sync, 1)                      \
  SLOT_WRAPPER(name, pt, pfn, fn, params, args, stream, bytes, kind, sync, 2)                      \
  SLOT_WRAPPER(name, pt, pfn, fn, params, args, stream, bytes, kind, sync, 3)                      \
  _Static_assert(__builtin_types_compatible_p(__typeof__(&w_##name##_0), pfn),                     \
                 #name ": wrapper signature differs from " #pfn);                                  \
  static void *const wrappers_##name[NSLOTS] = {(void *)w_##name##_0, (void *)w_##name##_1,        \
                                                (void *)w_##name##_2, (void *)w_##name##_3};

/* The export under the real name, for programs that link libcuda: its real function is the
 * libcuda definition the preload shadows. */
#define DEFINE_EXPORT(name, pt, base, since, pfn, fn, params, args, stream, bytes, kind, sync)     \
  SLACK_EXPORT CUresult name params {                                                              \
    static void *real_p;                                                                           \
    void *real = slack_resolve(&real_p, #name, LIBCUDA);                                           \
    if (real == NULL) return CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND;                            \
    DRIVER_BODY(pfn, real, pt, fn, args, stream, bytes, kind, sync)                                \
  }

struct driver_hook {
  const char *name; /* export name: what dlsym is asked for */
  const char *base; /* what cuGetProcAddress is asked for */
  int since;        /* first cudaVersion for which cuGetProcAddress(base) returns this ABI */
  int per_thread;   /* the _ptsz/_ptds variant */
  void **slots;
  void *const *wrappers;
  void *self; /* the export of the same name */
};
#define DEFINE_ENTRY(name, pt, base, since, pfn, fn, params, args, stream, bytes, kind, sync)      \
  {#name, base, since, pt, slots_##name, wrappers_##name, (void *)&name},

DRIVER_HOOKS(DEFINE_SLOTS)
DRIVER_HOOKS(DEFINE_EXPORT)
static const struct driver_hook hooks[] = {DRIVER_HOOKS(DEFINE_ENTRY)};
#define NHOOKS (sizeof hooks / sizeof hooks[0])

static uint64_t unwrapped;

uint64_t slack_driver_unwrapped(void) { return __atomic_load_n(&unwrapped, __ATOMIC_RELAXED); }

/* ---- lookups ---- */

SLACK_NO_SANITIZE static const struct driver_hook *find_by_name(const char *name) {
  for (size_t i = 0; i < NHOOKS; i++)
    if (strcmp(hooks[i].name, name) == 0) return &hooks[i];
  return NULL;
}

static int is_base(const char *name) {
  for (size_t i = 0; i < NHOOKS; i++)
    if (strcmp(hooks[i].base, name) == 0) return 1;
  return 0;
}

/* What cuGetProcAddress(base, version, flags) returns: the newest listed ABI not newer than
 * `version`, in the per-thread variant when asked for and one exists. NULL when `version` is
 * older than every listed ABI (an unlisted older one, such as the 32-bit cuMemcpyHtoD). */
static const struct driver_hook *find_by_base(const char *base, int version, int per_thread) {
  int has_per_thread = 0;
  for (size_t i = 0; i < NHOOKS; i++)
    if (hooks[i].per_thread && strcmp(hooks[i].base, base) == 0) has_per_thread = 1;
  per_thread = per_thread && has_per_thread;
  const struct driver_hook *best = NULL;
  for (size_t i = 0; i < NHOOKS; i++) {
    const struct driver_hook *h = &hooks[i];
    if (h->per_thread != per_thread || h->since > version || strcmp(h->base, base) != 0) continue;
    if (best == NULL || h->since > best->since) best = h;
  }
  return best;
}

/* The wrapper bound to `real` in h's slots, binding a free slot on first sight. A `real` that
 * is one of slack's own functions (the export of that name, found by a lookup that libslack
 * shadows) is handed back as it is: it records already. */
static void *bind_slot(const struct driver_hook *h, void *real) {
  if (real == h->self) return real;
  for (int i = 0; i < NSLOTS; i++)
    if (real == h->wrappers[i]) return real;
  for (int i = 0; i < NSLOTS; i++) {
    void *cur = __atomic_load_n(&h->slots[i], __ATOMIC_RELAXED);
    if (cur == NULL && __atomic_compare_exchange_n(&h->slots[i], &cur, real, 0, __ATOMIC_RELAXED,
                                                   __ATOMIC_RELAXED))
      return h->wrappers[i];
    if (cur == real) return h->wrappers[i]; /* bound before, or by a racing thread just now */
  }
  __atomic_add_fetch(&unwrapped, 1, __ATOMIC_RELAXED);
  return real;
}

/* ---- cuGetProcAddress ---- */

static void *real_gpa_v1; /* cuGetProcAddress: the CUDA 11.3 ABI, four arguments */
static void *real_gpa_v2; /* cuGetProcAddress_v2: CUDA 12.0, with symbolStatus */

/* The real cuGetProcAddress of one ABI: the first one seen, whether through dlsym (dl.c) or by
 * resolving the export. Compare-and-swap, so that both paths agree on a single pointer. */
static void *gpa_real(void **slot, const char *name) {
  void *p = __atomic_load_n(slot, __ATOMIC_RELAXED);
  if (p == NULL) {
    void *found = slack_real_symbol(name, LIBCUDA);
    if (found == NULL) return NULL;
    __atomic_compare_exchange_n(slot, &p, found, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    p = __atomic_load_n(slot, __ATOMIC_RELAXED);
  }
  return p;
}

/* Replaces *pfn, just returned by the real cuGetProcAddress of either ABI for (symbol,
 * version, flags), with its wrapper. Past the versions this file knows, an ABI may have
 * changed: the pointer is wrapped only when the driver returns the very same function for
 * KNOWN_CUDA_VERSION (requery). errno is left as the real call left it. */
static void wrap_result(const char *symbol, void **pfn, int version, cuuint64_t flags,
                        CUresult (*requery)(void *gpa, const char *, void **, int, cuuint64_t),
                        void *gpa) {
  if (symbol == NULL || pfn == NULL || *pfn == NULL || version <= 0) return;
  int saved = errno;
  if (version > KNOWN_CUDA_VERSION &&
      (is_base(symbol) || strncmp(symbol, "cuGetProcAddress", 16) == 0)) {
    void *known = NULL;
    if (requery(gpa, symbol, &known, KNOWN_CUDA_VERSION, flags) != CUDA_SUCCESS || known != *pfn) {
      errno = saved;
      return;
    }
    version = KNOWN_CUDA_VERSION;
  }
  *pfn = slack_wrap_driver(symbol, *pfn, version, flags);
  errno = saved;
}

static CUresult requery_v1(void *gpa, const char *symbol, void **pfn, int version,
                           cuuint64_t flags) {
  return ((PFN_cuGetProcAddress_v11030)gpa)(symbol, pfn, version, flags);
}
static CUresult requery_v2(void *gpa, const char *symbol, void **pfn, int version,
                           cuuint64_t flags) {
  CUdriverProcAddressQueryResult status;
  return ((PFN_cuGetProcAddress_v12000)gpa)(symbol, pfn, version, flags, &status);
}

SLACK_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                       cuuint64_t flags) {
  void *real = gpa_real(&real_gpa_v1, "cuGetProcAddress");
  if (real == NULL) return CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND;
  CUresult r = ((PFN_cuGetProcAddress_v11030)real)(symbol, pfn, cudaVersion, flags);
  if (r == CUDA_SUCCESS) wrap_result(symbol, pfn, cudaVersion, flags, requery_v1, real);
  return r;
}

SLACK_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                          cuuint64_t flags,
                                          CUdriverProcAddressQueryResult *symbolStatus) {
  void *real = gpa_real(&real_gpa_v2, "cuGetProcAddress_v2");
  if (real == NULL) return CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND;
  CUresult r = ((PFN_cuGetProcAddress_v12000)real)(symbol, pfn, cudaVersion, flags, symbolStatus);
  if (r == CUDA_SUCCESS) wrap_result(symbol, pfn, cudaVersion, flags, requery_v2, real);
  return r;
}

_Static_assert(__builtin_types_compatible_p(__typeof__(&cuGetProcAddress),
                                            PFN_cuGetProcAddress_v11030),
               "cuGetProcAddress signature");
_Static_assert(__builtin_types_compatible_p(__typeof__(&cuGetProcAddress_v2),
                                            PFN_cuGetProcAddress_v12000),
               "cuGetProcAddress_v2 signature");

/* cuGetProcAddress found as `name` (an export name when version is 0, else the base name
 * looked up with that version): our wrapper of the same ABI, the real pointer kept for it.
 * NULL when name is not cuGetProcAddress. */
static void *wrap_gpa(const char *name, void *real, int version) {
  int v2;
  if (strcmp(name, "cuGetProcAddress_v2") == 0)
    v2 = 1;
  else if (strcmp(name, "cuGetProcAddress") != 0)
    return NULL;
  else if (version == 0) /* the export name: the CUDA 11.3 ABI */
    v2 = 0;
  else if (version >= 12000)
    v2 = 1;
  else if (version >= 11030)
    v2 = 0;
  else
    return real; /* a version before cuGetProcAddress existed: not ours to judge */
  void **slot = v2 ? &real_gpa_v2 : &real_gpa_v1;
  void *ours = v2 ? (void *)&cuGetProcAddress_v2 : (void *)&cuGetProcAddress;
  if (real == (void *)&cuGetProcAddress_v2 || real == (void *)&cuGetProcAddress) return real;
  void *cur = NULL;
  if (__atomic_compare_exchange_n(slot, &cur, real, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED) ||
      cur == real)
    return ours;
  /* A second, different cuGetProcAddress (another driver copy, another tool's wrapper): handed
   * out as it is, since our wrapper can only forward to the first. */
  return real;
}

/* ---- the interface of hook.h and interpose.h ---- */

void *slack_wrap_driver(const char *name, void *real, int cuda_version, uint64_t flags) {
  if (name == NULL || real == NULL || cuda_version < 0 || cuda_version > KNOWN_CUDA_VERSION)
    return real;
  void *gpa = wrap_gpa(name, real, cuda_version);
  if (gpa != NULL) return gpa;
  const struct driver_hook *h;
  if (cuda_version > 0 && is_base(name)) {
    int per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0 &&
                     cuda_version >= PER_THREAD_SINCE;
    h = find_by_base(name, cuda_version, per_thread);
  } else {
    h = find_by_name(name); /* dlsym, or cuGetProcAddress asked for a versioned export name */
  }
  return h != NULL ? bind_slot(h, real) : real;
}

/* The exit probe (runtime/probe.c) times launches through the hook a program linked with -lcuda
 * calls: published here, so that the runtime needs nothing of interpose/. */
__attribute__((constructor)) static void publish_launch_hook(void) {
  __atomic_store_n(&slack_launch_hook, (void *)&cuLaunchKernel, __ATOMIC_RELEASE);
}

SLACK_NO_SANITIZE int slack_driver_hooks_name(const char *name) {
  if (name[0] != 'c' || name[1] != 'u') return 0;
  return strcmp(name, "cuGetProcAddress") == 0 || strcmp(name, "cuGetProcAddress_v2") == 0 ||
         find_by_name(name) != NULL;
}

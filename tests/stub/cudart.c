/* Test-only stand-in for the CUDA runtime (build/stub/libcudart.so.13). Never installed or
 * shipped.
 *
 * Built like the real one where slack cares: on first use it dlopens "libcuda.so.1", looks up
 * only cuGetProcAddress_v2 with dlsym, and obtains every driver function through it (CUDA 13.0,
 * default-stream flags; the _ptsz entry points get the per-thread-stream variants). Its private
 * link to the driver goes through cuGetExportTable. Each runtime call is bracketed for the stub
 * CUPTI (runtime API record, one correlation id for the call and the work it submits) and calls
 * the driver function a real cudart would. The runtime prototypes are the real ones from
 * cuda_runtime_api.h.
 */
#include <cuda.h>
#include <cudaProfiler.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "stub_api.h"
#include "stub_internal.h"

#define DRIVER_FUNCS(X)                                                                            \
  X(cuInit)                                                                                        \
  X(cuDeviceGetCount)                                                                              \
  X(cuDevicePrimaryCtxRetain)                                                                      \
  X(cuCtxSetCurrent)                                                                               \
  X(cuCtxSynchronize)                                                                              \
  X(cuLaunchKernel)                                                                                \
  X(cuLaunchKernelEx)                                                                              \
  X(cuMemAlloc)                                                                                    \
  X(cuMemFree)                                                                                     \
  X(cuMemAllocHost)                                                                                \
  X(cuMemHostAlloc)                                                                                \
  X(cuMemFreeHost)                                                                                 \
  X(cuMemcpy)                                                                                      \
  X(cuMemcpyAsync)                                                                                 \
  X(cuMemcpyHtoD)                                                                                  \
  X(cuMemcpyDtoH)                                                                                  \
  X(cuMemcpyDtoD)                                                                                  \
  X(cuMemcpyHtoDAsync)                                                                             \
  X(cuMemcpyDtoHAsync)                                                                             \
  X(cuMemcpyDtoDAsync)                                                                             \
  X(cuMemcpy2D)                                                                                    \
  X(cuMemcpy2DAsync)                                                                               \
  X(cuMemsetD8)                                                                                    \
  X(cuMemsetD8Async)                                                                               \
  X(cuStreamCreate)                                                                                \
  X(cuStreamDestroy)                                                                               \
  X(cuStreamSynchronize)                                                                           \
  X(cuStreamQuery)                                                                                 \
  X(cuStreamWaitEvent)                                                                             \
  X(cuStreamBeginCapture)                                                                          \
  X(cuStreamEndCapture)                                                                            \
  X(cuStreamIsCapturing)                                                                           \
  X(cuEventCreate)                                                                                 \
  X(cuEventDestroy)                                                                                \
  X(cuEventRecord)                                                                                 \
  X(cuEventSynchronize)                                                                            \
  X(cuEventQuery)                                                                                  \
  X(cuEventElapsedTime)                                                                            \
  X(cuGraphInstantiateWithFlags)                                                                   \
  X(cuGraphDestroy)                                                                                \
  X(cuGraphExecDestroy)                                                                            \
  X(cuGraphLaunch)                                                                                 \
  X(cuProfilerStart)                                                                               \
  X(cuProfilerStop)                                                                                \
  X(cuGetExportTable)

/* The per-thread-default-stream variants the _ptsz runtime entry points use. */
#define DRIVER_FUNCS_PTSZ(X) X(cuLaunchKernel) X(cuLaunchKernelEx)

/* Member names go through cuda.h's macros (cuMemAlloc -> cuMemAlloc_v2) like every use below;
 * #name is the base name that cuGetProcAddress takes. */
static struct {
#define DECL(name) __typeof__(&name) name;
  DRIVER_FUNCS(DECL)
#undef DECL
} D;
static struct {
#define DECL(name) __typeof__(&name) name;
  DRIVER_FUNCS_PTSZ(DECL)
#undef DECL
} DP;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static cudaError_t init_error = cudaErrorInitializationError;
static const struct stub_rt_table *tbl;
static int ndev;
static pthread_mutex_t L = PTHREAD_MUTEX_INITIALIZER;
static CUcontext primary[8];

struct kreg {
  const void *host;
  CUfunction f;
};
static struct kreg *kernels;
static size_t nkernels, cap_kernels;

static __thread struct {
  int dev;
  CUcontext ctx;
  cudaError_t last_error;
} T;

static void init(void) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    init_error = cudaErrorInsufficientDriver;
    return;
  }
  CUresult (*gpa)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *) =
      (CUresult(*)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *))dlsym(
          h, "cuGetProcAddress_v2");
  if (!gpa) {
    init_error = cudaErrorInsufficientDriver;
    return;
  }
  CUdriverProcAddressQueryResult st;
#define GET(name)                                                                                  \
  if (gpa(#name, (void **)&D.name, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &st) || !D.name) {          \
    init_error = cudaErrorInsufficientDriver;                                                      \
    return;                                                                                        \
  }
  DRIVER_FUNCS(GET)
#undef GET
#define GET(name)                                                                                  \
  if (gpa(#name, (void **)&DP.name, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st) ||  \
      !DP.name) {                                                                                  \
    init_error = cudaErrorInsufficientDriver;                                                      \
    return;                                                                                        \
  }
  DRIVER_FUNCS_PTSZ(GET)
#undef GET
  const void *t = NULL;
  if (D.cuGetExportTable(&t, &STUB_RT_TABLE_ID) || !t) {
    init_error = cudaErrorInsufficientDriver;
    return;
  }
  tbl = t;
  CUresult r = D.cuInit(0);
  if (r == CUDA_ERROR_NO_DEVICE) {
    init_error = cudaErrorNoDevice;
    return;
  }
  if (r || D.cuDeviceGetCount(&ndev) || ndev < 1) {
    init_error = cudaErrorNoDevice;
    return;
  }
  if (ndev > 8) ndev = 8;
  init_error = cudaSuccess;
}

static cudaError_t set_error(cudaError_t e) {
  if (e != cudaSuccess) T.last_error = e;
  return e;
}

static cudaError_t map(CUresult r) {
  switch (r) {
  case CUDA_SUCCESS: return cudaSuccess;
  case CUDA_ERROR_INVALID_VALUE: return cudaErrorInvalidValue;
  case CUDA_ERROR_OUT_OF_MEMORY: return cudaErrorMemoryAllocation;
  case CUDA_ERROR_NOT_INITIALIZED: return cudaErrorInitializationError;
  case CUDA_ERROR_NO_DEVICE: return cudaErrorNoDevice;
  case CUDA_ERROR_INVALID_DEVICE: return cudaErrorInvalidDevice;
  case CUDA_ERROR_INVALID_CONTEXT: return cudaErrorDeviceUninitialized;
  case CUDA_ERROR_INVALID_HANDLE: return cudaErrorInvalidResourceHandle;
  case CUDA_ERROR_NOT_READY: return cudaErrorNotReady;
  case CUDA_ERROR_NOT_FOUND: return cudaErrorSymbolNotFound;
  case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: return cudaErrorStreamCaptureUnsupported;
  case CUDA_ERROR_ILLEGAL_STATE: return cudaErrorIllegalState;
  case CUDA_ERROR_NOT_SUPPORTED: return cudaErrorNotSupported;
  case CUDA_ERROR_INVALID_IMAGE: return cudaErrorInvalidKernelImage;
  default: return cudaErrorUnknown;
  }
}

/* Makes the current device's primary context current on this thread (lazily, as cudart does). */
static cudaError_t ensure_ctx(void) {
  if (T.ctx) return cudaSuccess;
  pthread_mutex_lock(&L);
  CUcontext c = primary[T.dev];
  if (!c) {
    CUresult r = D.cuDevicePrimaryCtxRetain(&c, T.dev);
    if (r) {
      pthread_mutex_unlock(&L);
      return map(r);
    }
    primary[T.dev] = c;
  }
  pthread_mutex_unlock(&L);
  CUresult r = D.cuCtxSetCurrent(c);
  if (r) return map(r);
  T.ctx = c;
  return cudaSuccess;
}

static cudaError_t start(void) {
  pthread_once(&once, init);
  return init_error;
}

/* Every runtime entry point: start, bracket for CUPTI, make the context current. */
#define BEGIN(cbid)                                                                                \
  do {                                                                                             \
    cudaError_t e_ = start();                                                                      \
    if (e_) return set_error(e_);                                                                  \
    tbl->api_enter(CUPTI_RUNTIME_TRACE_CBID_##cbid);                                               \
    e_ = ensure_ctx();                                                                             \
    if (e_) {                                                                                      \
      tbl->api_exit(e_);                                                                           \
      return set_error(e_);                                                                        \
    }                                                                                              \
  } while (0)
#define END(expr)                                                                                  \
  do {                                                                                             \
    cudaError_t e_ = (expr);                                                                       \
    tbl->api_exit(e_);                                                                             \
    return set_error(e_);                                                                          \
  } while (0)

/* ---------------------------------------------------------------- device, errors, versions */

cudaError_t cudaGetDeviceCount(int *count) {
  if (!count) return set_error(cudaErrorInvalidValue);
  cudaError_t e = start();
  if (e) {
    *count = 0;
    return set_error(e);
  }
  tbl->api_enter(CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020);
  *count = ndev;
  END(cudaSuccess);
}

cudaError_t cudaSetDevice(int dev) {
  cudaError_t e = start();
  if (e) return set_error(e);
  tbl->api_enter(CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020);
  if (dev < 0 || dev >= ndev) END(cudaErrorInvalidDevice);
  if (dev != T.dev) {
    T.dev = dev;
    T.ctx = NULL;
  }
  END(ensure_ctx());
}

cudaError_t cudaGetDevice(int *dev) {
  if (!dev) return set_error(cudaErrorInvalidValue);
  BEGIN(cudaGetDevice_v3020);
  *dev = T.dev;
  END(cudaSuccess);
}

cudaError_t cudaDeviceSynchronize(void) {
  BEGIN(cudaDeviceSynchronize_v3020);
  END(map(D.cuCtxSynchronize()));
}

cudaError_t cudaGetLastError(void) {
  cudaError_t e = T.last_error;
  T.last_error = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError(void) { return T.last_error; }

const char *cudaGetErrorName(cudaError_t e) {
  switch (e) {
  case cudaSuccess: return "cudaSuccess";
  case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
  case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
  case cudaErrorInitializationError: return "cudaErrorInitializationError";
  case cudaErrorInsufficientDriver: return "cudaErrorInsufficientDriver";
  case cudaErrorNoDevice: return "cudaErrorNoDevice";
  case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
  case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
  case cudaErrorInvalidDeviceFunction: return "cudaErrorInvalidDeviceFunction";
  case cudaErrorNotReady: return "cudaErrorNotReady";
  default: return "cudaErrorUnknown";
  }
}

const char *cudaGetErrorString(cudaError_t e) {
  switch (e) {
  case cudaSuccess: return "no error";
  case cudaErrorInvalidValue: return "invalid argument";
  case cudaErrorMemoryAllocation: return "out of memory";
  case cudaErrorInitializationError: return "initialization error";
  case cudaErrorInsufficientDriver:
    return "CUDA driver version is insufficient for CUDA runtime version";
  case cudaErrorNoDevice: return "no CUDA-capable device is detected";
  case cudaErrorInvalidDevice: return "invalid device ordinal";
  case cudaErrorInvalidResourceHandle: return "invalid resource handle";
  case cudaErrorInvalidDeviceFunction: return "invalid device function";
  case cudaErrorNotReady: return "device not ready";
  default: return "unknown error";
  }
}

cudaError_t cudaDriverGetVersion(int *v) {
  if (!v) return set_error(cudaErrorInvalidValue);
  *v = start() == cudaErrorInsufficientDriver ? 0 : 13000;
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v) {
  if (!v) return set_error(cudaErrorInvalidValue);
  *v = 13000;
  return cudaSuccess;
}

cudaError_t cudaProfilerStart(void) {
  BEGIN(cudaProfilerStart_v4000);
  END(map(D.cuProfilerStart()));
}

cudaError_t cudaProfilerStop(void) {
  BEGIN(cudaProfilerStop_v4000);
  END(map(D.cuProfilerStop()));
}

/* ---------------------------------------------------------------- memory */

cudaError_t cudaMalloc(void **p, size_t n) {
  BEGIN(cudaMalloc_v3020);
  if (!p) END(cudaErrorInvalidValue);
  CUdeviceptr d = 0;
  CUresult r = D.cuMemAlloc(&d, n);
  *p = r ? NULL : (void *)(uintptr_t)d;
  END(map(r));
}

cudaError_t cudaFree(void *p) {
  BEGIN(cudaFree_v3020);
  END(map(D.cuMemFree((CUdeviceptr)(uintptr_t)p)));
}

/* CUDA's stream-ordered allocator: an allocation of 1 GiB or more stands for one that maps memory
 * again after a trim (50 us of the host's time); smaller ones come from the pool at once */
static cudaError_t malloc_async(void **p, size_t n) {
  if (!p) return cudaErrorInvalidValue;
  CUdeviceptr d = 0;
  CUresult r = D.cuMemAlloc(&d, n >= (1ull << 30) ? 1 : n);
  if (n >= (1ull << 30)) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
      clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 50000);
  }
  *p = r ? NULL : (void *)(uintptr_t)d;
  return map(r);
}

cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t stream) {
  (void)stream;
  BEGIN(cudaMallocAsync_v11020);
  END(malloc_async(p, n));
}

cudaError_t cudaMallocAsync_ptsz(void **p, size_t n, cudaStream_t stream) {
  (void)stream;
  BEGIN(cudaMallocAsync_ptsz_v11020);
  END(malloc_async(p, n));
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep) {
  (void)pool;
  (void)keep;
  BEGIN(cudaMemPoolTrimTo_v11020);
  END(cudaSuccess);
}

cudaError_t cudaMallocHost(void **p, size_t n) {
  BEGIN(cudaMallocHost_v3020);
  END(map(D.cuMemAllocHost(p, n)));
}

cudaError_t cudaHostAlloc(void **p, size_t n, unsigned int flags) {
  BEGIN(cudaHostAlloc_v3020);
  END(map(D.cuMemHostAlloc(p, n, flags)));
}

cudaError_t cudaFreeHost(void *p) {
  BEGIN(cudaFreeHost_v3020);
  END(map(D.cuMemFreeHost(p)));
}

#define DP_(p) ((CUdeviceptr)(uintptr_t)(p))

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind) {
  BEGIN(cudaMemcpy_v3020);
  switch (kind) {
  case cudaMemcpyHostToDevice: END(map(D.cuMemcpyHtoD(DP_(dst), src, n)));
  case cudaMemcpyDeviceToHost: END(map(D.cuMemcpyDtoH(dst, DP_(src), n)));
  case cudaMemcpyDeviceToDevice: END(map(D.cuMemcpyDtoD(DP_(dst), DP_(src), n)));
  case cudaMemcpyHostToHost:
  case cudaMemcpyDefault: END(map(D.cuMemcpy(DP_(dst), DP_(src), n)));
  default: END(cudaErrorInvalidMemcpyDirection);
  }
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                            cudaStream_t s) {
  BEGIN(cudaMemcpyAsync_v3020);
  switch (kind) {
  case cudaMemcpyHostToDevice: END(map(D.cuMemcpyHtoDAsync(DP_(dst), src, n, s)));
  case cudaMemcpyDeviceToHost: END(map(D.cuMemcpyDtoHAsync(dst, DP_(src), n, s)));
  case cudaMemcpyDeviceToDevice: END(map(D.cuMemcpyDtoDAsync(DP_(dst), DP_(src), n, s)));
  case cudaMemcpyHostToHost:
  case cudaMemcpyDefault: END(map(D.cuMemcpyAsync(DP_(dst), DP_(src), n, s)));
  default: END(cudaErrorInvalidMemcpyDirection);
  }
}

static int fill2d(CUDA_MEMCPY2D *p, void *dst, size_t dpitch, const void *src, size_t spitch,
                  size_t width, size_t height, enum cudaMemcpyKind kind) {
  memset(p, 0, sizeof *p);
  CUmemorytype st, dt;
  switch (kind) {
  case cudaMemcpyHostToHost: st = dt = CU_MEMORYTYPE_HOST; break;
  case cudaMemcpyHostToDevice: st = CU_MEMORYTYPE_HOST, dt = CU_MEMORYTYPE_DEVICE; break;
  case cudaMemcpyDeviceToHost: st = CU_MEMORYTYPE_DEVICE, dt = CU_MEMORYTYPE_HOST; break;
  case cudaMemcpyDeviceToDevice: st = dt = CU_MEMORYTYPE_DEVICE; break;
  case cudaMemcpyDefault: st = dt = CU_MEMORYTYPE_UNIFIED; break;
  default: return 0;
  }
  p->srcMemoryType = st;
  p->dstMemoryType = dt;
  if (st == CU_MEMORYTYPE_HOST)
    p->srcHost = src;
  else
    p->srcDevice = DP_(src);
  if (dt == CU_MEMORYTYPE_HOST)
    p->dstHost = dst;
  else
    p->dstDevice = DP_(dst);
  p->srcPitch = spitch;
  p->dstPitch = dpitch;
  p->WidthInBytes = width;
  p->Height = height;
  return 1;
}

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                         size_t height, enum cudaMemcpyKind kind) {
  BEGIN(cudaMemcpy2D_v3020);
  CUDA_MEMCPY2D p;
  if (!fill2d(&p, dst, dpitch, src, spitch, width, height, kind))
    END(cudaErrorInvalidMemcpyDirection);
  END(map(D.cuMemcpy2D(&p)));
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                              size_t width, size_t height, enum cudaMemcpyKind kind,
                              cudaStream_t s) {
  BEGIN(cudaMemcpy2DAsync_v3020);
  CUDA_MEMCPY2D p;
  if (!fill2d(&p, dst, dpitch, src, spitch, width, height, kind))
    END(cudaErrorInvalidMemcpyDirection);
  END(map(D.cuMemcpy2DAsync(&p, s)));
}

cudaError_t cudaMemset(void *p, int value, size_t n) {
  BEGIN(cudaMemset_v3020);
  END(map(D.cuMemsetD8(DP_(p), (unsigned char)value, n)));
}

cudaError_t cudaMemsetAsync(void *p, int value, size_t n, cudaStream_t s) {
  BEGIN(cudaMemsetAsync_v3020);
  END(map(D.cuMemsetD8Async(DP_(p), (unsigned char)value, n, s)));
}

/* ---------------------------------------------------------------- streams and events */

cudaError_t cudaStreamCreate(cudaStream_t *s) {
  BEGIN(cudaStreamCreate_v3020);
  END(map(D.cuStreamCreate(s, CU_STREAM_DEFAULT)));
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags) {
  BEGIN(cudaStreamCreateWithFlags_v5000);
  END(map(D.cuStreamCreate(s, flags)));
}

cudaError_t cudaStreamDestroy(cudaStream_t s) {
  BEGIN(cudaStreamDestroy_v5050);
  END(map(D.cuStreamDestroy(s)));
}

cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  BEGIN(cudaStreamSynchronize_v3020);
  END(map(D.cuStreamSynchronize(s)));
}

cudaError_t cudaStreamQuery(cudaStream_t s) {
  BEGIN(cudaStreamQuery_v3020);
  END(map(D.cuStreamQuery(s)));
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags) {
  BEGIN(cudaStreamWaitEvent_v3020);
  END(map(D.cuStreamWaitEvent(s, e, flags)));
}

cudaError_t cudaEventCreate(cudaEvent_t *e) {
  BEGIN(cudaEventCreate_v3020);
  END(map(D.cuEventCreate(e, CU_EVENT_DEFAULT)));
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags) {
  BEGIN(cudaEventCreateWithFlags_v3020);
  END(map(D.cuEventCreate(e, flags)));
}

cudaError_t cudaEventDestroy(cudaEvent_t e) {
  BEGIN(cudaEventDestroy_v3020);
  END(map(D.cuEventDestroy(e)));
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  BEGIN(cudaEventRecord_v3020);
  END(map(D.cuEventRecord(e, s)));
}

cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  BEGIN(cudaEventSynchronize_v3020);
  END(map(D.cuEventSynchronize(e)));
}

cudaError_t cudaEventQuery(cudaEvent_t e) {
  BEGIN(cudaEventQuery_v3020);
  END(map(D.cuEventQuery(e)));
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) {
  BEGIN(cudaEventElapsedTime_v12080);
  END(map(D.cuEventElapsedTime(ms, a, b)));
}

/* ---------------------------------------------------------------- kernels */

cudaKernel_t stubRegisterKernel(const void *host, const char *name, unsigned long long ns) {
  if (start()) return NULL;
  CUfunction f = tbl->kernel_create(name, ns);
  if (!f) return NULL;
  if (host) {
    pthread_mutex_lock(&L);
    if (nkernels == cap_kernels) {
      size_t nc = cap_kernels ? 2 * cap_kernels : 32;
      struct kreg *nk = realloc(kernels, nc * sizeof *nk);
      if (!nk) {
        pthread_mutex_unlock(&L);
        return NULL;
      }
      kernels = nk;
      cap_kernels = nc;
    }
    kernels[nkernels++] = (struct kreg){host, f};
    pthread_mutex_unlock(&L);
  }
  return (cudaKernel_t)f;
}

static CUfunction lookup(const void *host) {
  CUfunction f = NULL;
  pthread_mutex_lock(&L);
  for (size_t i = nkernels; i-- > 0;)
    if (kernels[i].host == host) {
      f = kernels[i].f;
      break;
    }
  pthread_mutex_unlock(&L);
  return f;
}

cudaError_t __cudaGetKernel(cudaKernel_t *k, const void *host) {
  if (!k) return set_error(cudaErrorInvalidValue);
  CUfunction f = lookup(host);
  if (!f) return set_error(cudaErrorInvalidDeviceFunction);
  *k = (cudaKernel_t)f;
  return cudaSuccess;
}

static cudaError_t launch(int ptsz, CUfunction f, dim3 g, dim3 b, void **args, size_t smem,
                          cudaStream_t s) {
  if (!f) return cudaErrorInvalidDeviceFunction;
  __typeof__(D.cuLaunchKernel) fn = ptsz ? DP.cuLaunchKernel : D.cuLaunchKernel;
  return map(fn(f, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)smem, s, args, NULL));
}

cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 g, dim3 b, void **args, size_t smem,
                               cudaStream_t s) {
  BEGIN(__cudaLaunchKernel_v13000);
  END(launch(0, (CUfunction)k, g, b, args, smem, s));
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t k, dim3 g, dim3 b, void **args, size_t smem,
                                    cudaStream_t s) {
  BEGIN(__cudaLaunchKernel_ptsz_v13000);
  END(launch(1, (CUfunction)k, g, b, args, smem, s));
}

cudaError_t cudaLaunchKernel(const void *func, dim3 g, dim3 b, void **args, size_t smem,
                             cudaStream_t s) {
  BEGIN(cudaLaunchKernel_v7000);
  END(launch(0, lookup(func), g, b, args, smem, s));
}

cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 g, dim3 b, void **args, size_t smem,
                                  cudaStream_t s) {
  BEGIN(cudaLaunchKernel_ptsz_v7000);
  END(launch(1, lookup(func), g, b, args, smem, s));
}

static cudaError_t launch_ex(int ptsz, const cudaLaunchConfig_t *c, const void *func, void **args) {
  if (!c) return cudaErrorInvalidValue;
  CUfunction f = lookup(func);
  if (!f) return cudaErrorInvalidDeviceFunction;
  /* cudaLaunchAttribute and CUlaunchAttribute share their layout (id, pad, 64-byte value) */
  _Static_assert(sizeof(cudaLaunchAttribute) == sizeof(CUlaunchAttribute), "launch attribute");
  CUlaunchConfig lc;
  memset(&lc, 0, sizeof lc);
  lc.gridDimX = c->gridDim.x;
  lc.gridDimY = c->gridDim.y;
  lc.gridDimZ = c->gridDim.z;
  lc.blockDimX = c->blockDim.x;
  lc.blockDimY = c->blockDim.y;
  lc.blockDimZ = c->blockDim.z;
  lc.sharedMemBytes = (unsigned)c->dynamicSmemBytes;
  lc.hStream = c->stream;
  lc.attrs = (CUlaunchAttribute *)c->attrs;
  lc.numAttrs = c->numAttrs;
  __typeof__(D.cuLaunchKernelEx) fn = ptsz ? DP.cuLaunchKernelEx : D.cuLaunchKernelEx;
  return map(fn(&lc, f, args, NULL));
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *c, const void *func, void **args) {
  BEGIN(cudaLaunchKernelExC_v11060);
  END(launch_ex(0, c, func, args));
}

cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *c, const void *func, void **args) {
  BEGIN(cudaLaunchKernelExC_ptsz_v11060);
  END(launch_ex(1, c, func, args));
}

/* ---------------------------------------------------------------- graphs */

cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode mode) {
  BEGIN(cudaStreamBeginCapture_v10000);
  END(map(D.cuStreamBeginCapture(s, (CUstreamCaptureMode)mode)));
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g) {
  BEGIN(cudaStreamEndCapture_v10000);
  END(map(D.cuStreamEndCapture(s, g)));
}

cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *st) {
  BEGIN(cudaStreamIsCapturing_v10000);
  CUstreamCaptureStatus cs;
  CUresult r = D.cuStreamIsCapturing(s, &cs);
  if (!r && st) *st = (enum cudaStreamCaptureStatus)cs;
  END(map(r));
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *x, cudaGraph_t g, unsigned long long flags) {
  BEGIN(cudaGraphInstantiate_v12000);
  END(map(D.cuGraphInstantiateWithFlags(x, g, flags)));
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t s) {
  BEGIN(cudaGraphLaunch_v10000);
  END(map(D.cuGraphLaunch(x, s)));
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t x) {
  BEGIN(cudaGraphExecDestroy_v10000);
  END(map(D.cuGraphExecDestroy(x)));
}

cudaError_t cudaGraphDestroy(cudaGraph_t g) {
  BEGIN(cudaGraphDestroy_v10000);
  END(map(D.cuGraphDestroy(g)));
}

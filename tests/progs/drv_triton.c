/* Reaches the driver the way Triton's launcher does: no cudart linked; dlopen("libcuda.so.1"),
 * dlsym of cuGetProcAddress_v2 and of cuLaunchKernelEx, everything else through
 * cuGetProcAddress. Loads a (stub) module, launches from two threads on their own streams
 * (cuLaunchKernel and cuLaunchKernelEx), copies and memsets with driver calls, synchronizes.
 * What it did goes to PROG_REPORT (progs.h); stdout gets one fixed line.
 */
#include <cuda.h>
#include <dlfcn.h>

#include "progs.h"

#define CHECK(call)                                                                                \
  do {                                                                                             \
    CUresult r_ = (call);                                                                          \
    if (r_ != CUDA_SUCCESS) DIE("%s:%d: %s: error %d", __FILE__, __LINE__, #call, (int)r_);        \
  } while (0)

#define LAUNCHES 10
#define BYTES (64u << 10)

/* A stub module image: "kernel_name duration_ns" per line. */
static const char module_image[] = "triton_add_kernel 20000\ntriton_mul_kernel 5000\n";

static struct {
  CUresult (*init)(unsigned);
  CUresult (*device_get)(CUdevice *, int);
  CUresult (*primary_retain)(CUcontext *, CUdevice);
  CUresult (*ctx_set)(CUcontext);
  CUresult (*module_load)(CUmodule *, const void *);
  CUresult (*module_fn)(CUfunction *, CUmodule, const char *);
  CUresult (*stream_create)(CUstream *, unsigned);
  CUresult (*stream_destroy)(CUstream);
  CUresult (*stream_sync)(CUstream);
  CUresult (*ctx_sync)(void);
  CUresult (*mem_alloc)(CUdeviceptr *, size_t);
  CUresult (*mem_free)(CUdeviceptr);
  CUresult (*host_alloc)(void **, size_t, unsigned);
  CUresult (*alloc_host)(void **, size_t);
  CUresult (*free_host)(void *);
  CUresult (*va_reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
  CUresult (*va_free)(CUdeviceptr, size_t);
  CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                     unsigned long long);
  CUresult (*release)(CUmemGenericAllocationHandle);
  CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
  CUresult (*unmap)(CUdeviceptr, size_t);
  CUresult (*set_access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
  CUresult (*htod_async)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*dtoh)(void *, CUdeviceptr, size_t);
  CUresult (*memset32_async)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                     unsigned, CUstream, void **, void **);
  CUresult (*launch_ex)(const CUlaunchConfig *, CUfunction, void **, void **);
} cu;

static CUcontext ctx;
static CUfunction add_fn, mul_fn;

static void *worker(void *arg) {
  int t = (int)(intptr_t)arg;
  CHECK(cu.ctx_set(ctx));
  CUstream s;
  CHECK(cu.stream_create(&s, CU_STREAM_NON_BLOCKING));
  CUdeviceptr d;
  report_call("cuMemAlloc", NULL, BYTES);
  CHECK(cu.mem_alloc(&d, BYTES));
  unsigned *host = malloc(BYTES);
  if (!host) DIE("out of memory");
  for (unsigned i = 0; i < BYTES / 4; i++)
    host[i] = i + (unsigned)t;
  unsigned seq = report_call("cuMemcpyHtoDAsync", s, BYTES);
  CHECK(cu.htod_async(d, host, BYTES, s));
  report_memcpy(seq, "HTOD", BYTES);
  void *params[] = {&d};
  for (int i = 0; i < LAUNCHES; i++) {
    seq = report_call("cuLaunchKernel", s, 0);
    CHECK(cu.launch(add_fn, 32, 1, 1, 128, 1, 1, 0, s, params, NULL));
    report_kernel(seq, "triton_add_kernel");
    if (i % 2 == 0) {
      CUlaunchConfig cfg;
      memset(&cfg, 0, sizeof cfg);
      cfg.gridDimX = 4;
      cfg.gridDimY = cfg.gridDimZ = 1;
      cfg.blockDimX = 64;
      cfg.blockDimY = cfg.blockDimZ = 1;
      cfg.sharedMemBytes = 2048;
      cfg.hStream = s;
      seq = report_call("cuLaunchKernelEx", s, 0);
      CHECK(cu.launch_ex(&cfg, mul_fn, params, NULL));
      report_kernel(seq, "triton_mul_kernel");
    }
  }
  seq = report_call("cuMemsetD32Async", s, BYTES);
  CHECK(cu.memset32_async(d, 7u, BYTES / 4, s));
  report_memset(seq, BYTES);
  seq = report_call("cuStreamSynchronize", s, 0);
  CHECK(cu.stream_sync(s));
  report_sync(seq, "STREAM_SYNCHRONIZE");
  seq = report_call("cuMemcpyDtoH", NULL, BYTES);
  CHECK(cu.dtoh(host, d, BYTES));
  report_memcpy(seq, "DTOH", BYTES);
  for (unsigned i = 0; i < BYTES / 4; i++)
    if (host[i] != 7u) DIE("thread %d: memset result differs at %u", t, i);
  report_call("cuMemFree", NULL, 0);
  CHECK(cu.mem_free(d));
  /* a page-locked staging buffer, pinned and freed (hooked since session 38), by either call */
  void *pinned;
  report_call(t % 2 ? "cuMemAllocHost" : "cuMemHostAlloc", NULL, BYTES);
  CHECK(t % 2 ? cu.alloc_host(&pinned, BYTES) : cu.host_alloc(&pinned, BYTES, 0));
  report_call("cuMemFreeHost", NULL, 0);
  CHECK(cu.free_host(pinned));
  CHECK(cu.stream_destroy(s));
  free(host);
  return NULL;
}

/* An expandable segment as PyTorch's allocator grows and gives back one
 * (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True): a page of physical memory created, mapped
 * into a reserved range and made accessible, then unmapped and released. */
static void expandable_segment(CUdevice dev) {
  const size_t page = 2u << 20;
  CUdeviceptr va;
  CHECK(cu.va_reserve(&va, 4 * page, 0, 0, 0));
  CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                              .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev}};
  CUmemAccessDesc acc = {.location = prop.location, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  CUmemGenericAllocationHandle mh;
  report_call("cuMemCreate", NULL, page);
  CHECK(cu.create(&mh, page, &prop, 0));
  report_call("cuMemMap", NULL, page);
  CHECK(cu.map(va, page, 0, mh, 0));
  report_call("cuMemSetAccess", NULL, page);
  CHECK(cu.set_access(va, page, &acc, 1));
  report_call("cuMemUnmap", NULL, page);
  CHECK(cu.unmap(va, page));
  report_call("cuMemRelease", NULL, 0);
  CHECK(cu.release(mh));
  CHECK(cu.va_free(va, 4 * page));
}

int main(void) {
  report_open();
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) DIE("dlopen libcuda.so.1: %s", dlerror());
  CUresult (*gpa)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *) =
      (CUresult(*)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *))dlsym(
          h, "cuGetProcAddress_v2");
  if (!gpa) DIE("no cuGetProcAddress_v2");
  CUdriverProcAddressQueryResult st;
#define GET(field, name)                                                                           \
  do {                                                                                             \
    CHECK(gpa(name, (void **)&cu.field, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &st));                 \
    if (!cu.field || st != CU_GET_PROC_ADDRESS_SUCCESS) DIE("no %s", name);                        \
  } while (0)
  GET(init, "cuInit");
  GET(device_get, "cuDeviceGet");
  GET(primary_retain, "cuDevicePrimaryCtxRetain");
  GET(ctx_set, "cuCtxSetCurrent");
  GET(module_load, "cuModuleLoadData");
  GET(module_fn, "cuModuleGetFunction");
  GET(stream_create, "cuStreamCreate");
  GET(stream_destroy, "cuStreamDestroy");
  GET(stream_sync, "cuStreamSynchronize");
  GET(ctx_sync, "cuCtxSynchronize");
  GET(mem_alloc, "cuMemAlloc");
  GET(mem_free, "cuMemFree");
  GET(host_alloc, "cuMemHostAlloc");
  GET(alloc_host, "cuMemAllocHost");
  GET(free_host, "cuMemFreeHost");
  GET(va_reserve, "cuMemAddressReserve");
  GET(va_free, "cuMemAddressFree");
  GET(create, "cuMemCreate");
  GET(release, "cuMemRelease");
  GET(map, "cuMemMap");
  GET(unmap, "cuMemUnmap");
  GET(set_access, "cuMemSetAccess");
  GET(htod_async, "cuMemcpyHtoDAsync");
  GET(dtoh, "cuMemcpyDtoH");
  GET(memset32_async, "cuMemsetD32Async");
  GET(launch, "cuLaunchKernel");
#undef GET
  /* Triton's launcher takes cuLaunchKernelEx straight from the library */
  cu.launch_ex = (CUresult(*)(const CUlaunchConfig *, CUfunction, void **, void **))dlsym(
      h, "cuLaunchKernelEx");
  if (!cu.launch_ex) DIE("no cuLaunchKernelEx");

  CHECK(cu.init(0));
  CUdevice dev;
  CHECK(cu.device_get(&dev, 0));
  CHECK(cu.primary_retain(&ctx, dev));
  CHECK(cu.ctx_set(ctx));
  CUmodule mod;
  CHECK(cu.module_load(&mod, module_image));
  CHECK(cu.module_fn(&add_fn, mod, "triton_add_kernel"));
  CHECK(cu.module_fn(&mul_fn, mod, "triton_mul_kernel"));
  pthread_t th[2];
  for (int t = 0; t < 2; t++)
    if (pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t)) DIE("pthread_create failed");
  for (int t = 0; t < 2; t++)
    pthread_join(th[t], NULL);
  expandable_segment(dev);
  report_call("cuCtxSynchronize", NULL, 0); /* CUPTI 13.0: no sync record for it */
  CHECK(cu.ctx_sync());
  report_close();
  printf("drv_triton: %d launches per thread, data verified\n", LAUNCHES + LAUNCHES / 2);
  return 0;
}

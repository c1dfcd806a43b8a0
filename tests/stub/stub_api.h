/* What a test program may call beyond the CUDA runtime API, when linked against the stub cudart
 * (build/stub/libcudart.so.13). Test-only: never installed or shipped. */
#ifndef SLACK_STUB_API_H
#define SLACK_STUB_API_H

#include <cuda_runtime_api.h>

/* Declared for C++ only in crt/device_functions.h: what CUDA 13 compiles <<<>>> launches to. */
extern cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                      size_t sharedMem, cudaStream_t stream);
extern cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                           void **args, size_t sharedMem, cudaStream_t stream);
extern cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun);

/* Stub only (stands for nvcc's registration of a kernel): makes hostFun, any host address, a
 * kernel named name that runs ns nanoseconds on the simulated GPU (0: STUB_KERNEL_NS or 10 us),
 * so that cudaLaunchKernel(hostFun, ...) launches it. Returns its cudaKernel_t for
 * __cudaLaunchKernel, or NULL when the stub cannot start (no driver, no device). */
extern cudaKernel_t stubRegisterKernel(const void *hostFun, const char *name,
                                       unsigned long long ns);

#endif

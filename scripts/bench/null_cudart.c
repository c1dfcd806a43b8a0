/* make bench: a "libcudart.so.13" whose functions return at once (CPU only, never shipped).
 * Through it, the loop of cpu_loop.c measures libslack's own cost per call and nothing else:
 * no stand-in GPU, no lock, no CUPTI. Only what cpu_loop calls is defined. */
#include <cuda_runtime_api.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 g, dim3 b, void **args, size_t smem,
                                      cudaStream_t s) {
  (void)k, (void)g, (void)b, (void)args, (void)smem, (void)s;
  __asm__ volatile("" ::: "memory"); /* a real call, not folded away */
  return cudaSuccess;
}

EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  (void)s;
  return cudaSuccess;
}

/* End-to-end workload through the CUDA runtime: two threads, each with its own stream, make a
 * known number of launches (__cudaLaunchKernel as <<<>>> compiles to, cudaLaunchKernel,
 * cudaLaunchKernelExC), host-to-device and device-to-host copies (synchronous, asynchronous,
 * pinned, pageable, 2D), memsets, and stream, event and device synchronizations, with a
 * cross-stream event wait; the main thread then captures and replays a CUDA graph. A forked child
 * exits without touching CUDA (like a DataLoader worker). Data really round-trips: the program
 * checks it. What it did goes to PROG_REPORT (progs.h); stdout gets one fixed line.
 *
 * WORKLOAD_ITERS (default 12) scales the loop.
 */
#include <sys/wait.h>

#include "progs.h"
#include "stub_api.h"

#define CHECK(call)                                                                                \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess)                                                                         \
      DIE("%s:%d: %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(e_));                     \
  } while (0)

#define PINNED_BYTES (256u << 10)
#define PAGEABLE_BYTES (128u << 10)
#define SET_BYTES (64u << 10)
#define ROWS 64
#define ROW_BYTES 1000u
#define PITCH 1024u

/* Host functions standing for __global__ kernels (cudaLaunchKernel takes their address). */
static void vector_add(void) {}
static void ex_kernel(void) {}

static cudaKernel_t k_scale, k_reduce, k_graph1, k_graph2;
static int iters = 12;
static cudaEvent_t done_ev[2];
static pthread_barrier_t barrier;

static void launch_kernel(cudaKernel_t k, const char *name, cudaStream_t s, unsigned grid) {
  dim3 g = {grid, 1, 1}, b = {256, 1, 1};
  float x = 1.0f;
  void *args[] = {&x};
  unsigned seq = report_call("__cudaLaunchKernel", s, 0);
  CHECK(__cudaLaunchKernel(k, g, b, args, 0, s));
  report_kernel(seq, name);
}

static void launch_fn(const void *fn, const char *name, cudaStream_t s) {
  dim3 g = {128, 2, 1}, b = {128, 1, 1};
  int n = 1;
  void *args[] = {&n};
  unsigned seq = report_call("cudaLaunchKernel", s, 0);
  CHECK(cudaLaunchKernel(fn, g, b, args, 1024, s));
  report_kernel(seq, name);
}

static void copy_async(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                       cudaStream_t s) {
  unsigned seq = report_call("cudaMemcpyAsync", s, n);
  CHECK(cudaMemcpyAsync(dst, src, n, kind, s));
  report_memcpy(seq, kind == cudaMemcpyHostToDevice ? "HTOD" : "DTOH", n);
}

static void copy_sync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind) {
  unsigned seq = report_call("cudaMemcpy", NULL, n);
  CHECK(cudaMemcpy(dst, src, n, kind));
  report_memcpy(seq, kind == cudaMemcpyHostToDevice ? "HTOD" : "DTOH", n);
}

static void stream_sync(cudaStream_t s) {
  unsigned seq = report_call("cudaStreamSynchronize", s, 0);
  CHECK(cudaStreamSynchronize(s));
  report_sync(seq, "STREAM_SYNCHRONIZE");
}

static void *worker(void *arg) {
  int t = (int)(intptr_t)arg;
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  unsigned char *pinned, *dev, *dev2, *pageable = malloc(PAGEABLE_BYTES);
  unsigned char *back = malloc(PAGEABLE_BYTES);
  if (!pageable || !back) DIE("out of memory");
  report_call("cudaMallocHost", NULL, PINNED_BYTES); /* hooked since session 38 */
  CHECK(cudaMallocHost((void **)&pinned, PINNED_BYTES));
  report_call("cudaMalloc", NULL, PINNED_BYTES); /* hooked since session 13 */
  CHECK(cudaMalloc((void **)&dev, PINNED_BYTES));
  report_call("cudaMalloc", NULL, ROWS * PITCH); /* hooked since session 13 */
  CHECK(cudaMalloc((void **)&dev2, ROWS * PITCH));
  for (unsigned i = 0; i < PINNED_BYTES; i++)
    pinned[i] = (unsigned char)(i * 7 + t);
  for (unsigned i = 0; i < PAGEABLE_BYTES; i++)
    pageable[i] = (unsigned char)(i * 13 + t);

  for (int it = 0; it < iters; it++) {
    copy_async(dev, pinned, PINNED_BYTES, cudaMemcpyHostToDevice, s);
    launch_kernel(k_scale, "_Z5scalePfi", s, 64);
    launch_fn((const void *)vector_add, "vector_add", s);
    unsigned seq = report_call("cudaMemsetAsync", s, SET_BYTES);
    CHECK(cudaMemsetAsync(dev + PINNED_BYTES - SET_BYTES, 0, SET_BYTES, s));
    report_memset(seq, SET_BYTES);
    if (it % 4 == 3) {
      copy_async(pinned, dev, PINNED_BYTES, cudaMemcpyDeviceToHost, s);
      stream_sync(s);
      for (unsigned i = 0; i < PINNED_BYTES - SET_BYTES; i++)
        if (pinned[i] != (unsigned char)(i * 7 + t))
          DIE("thread %d: pinned data differs at %u", t, i);
    }
    if (it % 6 == 5) { /* pageable round trip on the legacy stream */
      copy_sync(dev, pageable, PAGEABLE_BYTES, cudaMemcpyHostToDevice);
      copy_sync(back, dev, PAGEABLE_BYTES, cudaMemcpyDeviceToHost);
      if (memcmp(back, pageable, PAGEABLE_BYTES)) DIE("thread %d: pageable data differs", t);
    }
  }

  /* per-thread default stream: <<<>>> built with --default-stream per-thread calls the _ptsz
   * entry with a null stream (recorded as cudaStreamPerThread, the handle that means it) */
  for (int i = 0; i < 2; i++) {
    dim3 g = {32, 1, 1}, b = {128, 1, 1};
    unsigned pseq = report_call("__cudaLaunchKernel_ptsz", cudaStreamPerThread, 0);
    CHECK(__cudaLaunchKernel_ptsz(k_scale, g, b, NULL, 0, NULL));
    report_kernel(pseq, "_Z5scalePfi");
  }
  stream_sync(cudaStreamPerThread);

  /* 2D copies: a pitched device image */
  unsigned seq = report_call("cudaMemcpy2DAsync", s, ROWS * ROW_BYTES);
  CHECK(cudaMemcpy2DAsync(dev2, PITCH, pageable, ROW_BYTES, ROW_BYTES, ROWS, cudaMemcpyHostToDevice,
                          s));
  report_memcpy(seq, "HTOD", ROWS * ROW_BYTES);
  stream_sync(s);
  seq = report_call("cudaMemcpy2D", NULL, ROWS * ROW_BYTES);
  CHECK(cudaMemcpy2D(back, ROW_BYTES, dev2, PITCH, ROW_BYTES, ROWS, cudaMemcpyDeviceToHost));
  report_memcpy(seq, "DTOH", ROWS * ROW_BYTES);
  if (memcmp(back, pageable, ROWS * ROW_BYTES)) DIE("thread %d: 2D data differs", t);

  /* cudaLaunchKernelExC with a cluster attribute (thread 0) or none (thread 1) */
  cudaLaunchConfig_t cfg;
  cudaLaunchAttribute attr;
  memset(&cfg, 0, sizeof cfg);
  memset(&attr, 0, sizeof attr);
  cfg.gridDim = (dim3){16, 1, 1};
  cfg.blockDim = (dim3){64, 1, 1};
  cfg.stream = s;
  if (t == 0) {
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = 2;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
  }
  int three = 3;
  void *ex_args[] = {&three};
  seq = report_call("cudaLaunchKernelExC", s, 0);
  CHECK(cudaLaunchKernelExC(&cfg, (const void *)ex_kernel, ex_args));
  report_kernel(seq, "ex_kernel");

  /* cross-stream dependency: each thread's stream waits for the other's last work */
  seq = report_call("cudaEventRecord", s, 0);
  CHECK(cudaEventRecord(done_ev[t], s));
  pthread_barrier_wait(&barrier);
  seq = report_call("cudaStreamWaitEvent", s, 0);
  CHECK(cudaStreamWaitEvent(s, done_ev[1 - t], 0));
  report_sync(seq, "STREAM_WAIT_EVENT");
  pthread_barrier_wait(&barrier); /* nobody re-records an event the other still waits on */
  launch_kernel(k_reduce, "reduce_sum", s, 1);
  seq = report_call("cudaEventRecord", s, 0);
  CHECK(cudaEventRecord(done_ev[t], s));
  seq = report_call("cudaEventSynchronize", NULL, 0);
  CHECK(cudaEventSynchronize(done_ev[t]));
  report_sync(seq, "EVENT_SYNCHRONIZE");

  /* a memset on the legacy stream, then a synchronous device-wide drain */
  seq = report_call("cudaMemset", NULL, SET_BYTES);
  CHECK(cudaMemset(dev, 0xff, SET_BYTES));
  report_memset(seq, SET_BYTES);
  stream_sync(s);
  CHECK(cudaStreamDestroy(s));
  report_call("cudaFree", NULL, 0);
  CHECK(cudaFree(dev2));
  report_call("cudaFree", NULL, 0);
  CHECK(cudaFree(dev));
  report_call("cudaFreeHost", NULL, 0);
  CHECK(cudaFreeHost(pinned));
  free(pageable);
  free(back);
  return NULL;
}

static void graph_part(void) {
  cudaStream_t gs;
  CHECK(cudaStreamCreate(&gs));
  unsigned char *buf;
  report_call("cudaMalloc", NULL, SET_BYTES); /* hooked since session 13 */
  CHECK(cudaMalloc((void **)&buf, SET_BYTES));
  cudaGraph_t g;
  cudaGraphExec_t x;
  CHECK(cudaStreamBeginCapture(gs, cudaStreamCaptureModeGlobal));
  /* captured calls put nothing on the GPU yet: report them as calls only */
  dim3 grid = {8, 1, 1}, block = {32, 1, 1};
  report_call("__cudaLaunchKernel", gs, 0);
  CHECK(__cudaLaunchKernel(k_graph1, grid, block, NULL, 0, gs));
  report_call("cudaMemsetAsync", gs, SET_BYTES);
  CHECK(cudaMemsetAsync(buf, 1, SET_BYTES, gs));
  report_call("__cudaLaunchKernel", gs, 0);
  CHECK(__cudaLaunchKernel(k_graph2, grid, block, NULL, 0, gs));
  CHECK(cudaStreamEndCapture(gs, &g));
  CHECK(cudaGraphInstantiate(&x, g, 0));
  for (int i = 0; i < 3; i++) {
    unsigned seq = report_call("cudaGraphLaunch", gs, 0);
    CHECK(cudaGraphLaunch(x, gs));
    report_kernel(seq, "graph_kernel_1");
    report_memset(seq, SET_BYTES);
    report_kernel(seq, "graph_kernel_2");
  }
  stream_sync(gs);
  unsigned char probe[16];
  copy_sync(probe, buf, sizeof probe, cudaMemcpyDeviceToHost);
  for (unsigned i = 0; i < sizeof probe; i++)
    if (probe[i] != 1) DIE("graph memset did not run");
  CHECK(cudaGraphExecDestroy(x));
  CHECK(cudaGraphDestroy(g));
  report_call("cudaFree", NULL, 0);
  CHECK(cudaFree(buf));
  CHECK(cudaStreamDestroy(gs));
}

int main(void) {
  const char *e = getenv("WORKLOAD_ITERS");
  if (e && atoi(e) > 0) iters = atoi(e);
  report_open();
  int n = 0;
  cudaError_t e0 = cudaGetDeviceCount(&n);
  if (e0 == cudaErrorNoDevice || e0 == cudaErrorInsufficientDriver) { /* a CPU-only machine */
    report_close();
    printf("workload: no CUDA device (%s)\n", cudaGetErrorName(e0));
    return 0;
  }
  CHECK(e0);
  CHECK(cudaSetDevice(0));
  k_scale = stubRegisterKernel(NULL, "_Z5scalePfi", 20000);
  k_reduce = stubRegisterKernel(NULL, "reduce_sum", 15000);
  k_graph1 = stubRegisterKernel(NULL, "graph_kernel_1", 8000);
  k_graph2 = stubRegisterKernel(NULL, "graph_kernel_2", 12000);
  if (!stubRegisterKernel((const void *)vector_add, "vector_add", 30000) ||
      !stubRegisterKernel((const void *)ex_kernel, "ex_kernel", 10000) || !k_scale || !k_reduce ||
      !k_graph1 || !k_graph2)
    DIE("kernel registration failed");

  /* a forked child that never touches CUDA and leaves with _exit, like a DataLoader worker */
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  if (pid < 0) DIE("fork failed");
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) DIE("child failed");

  for (int t = 0; t < 2; t++)
    CHECK(cudaEventCreate(&done_ev[t]));
  pthread_barrier_init(&barrier, NULL, 2);
  pthread_t th[2];
  for (int t = 0; t < 2; t++)
    if (pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t)) DIE("pthread_create failed");
  for (int t = 0; t < 2; t++)
    pthread_join(th[t], NULL);
  graph_part();
  unsigned seq = report_call("cudaDeviceSynchronize", NULL, 0);
  (void)seq; /* CUPTI 13.0 emits no sync record for it */
  CHECK(cudaDeviceSynchronize());
  for (int t = 0; t < 2; t++)
    CHECK(cudaEventDestroy(done_ev[t]));
  CHECK(cudaGetLastError());
  report_close();
  printf("workload: %d devices, %d iterations per thread, data verified\n", n, iters);
  return 0;
}

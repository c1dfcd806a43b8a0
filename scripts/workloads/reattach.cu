// What CUPTI 13 delivers after cuptiFinalize and a second attach (issue 13, production windows
// with SLACK_WINDOW_DETACH): a bare CUPTI client, no libslack. Window 1: CUPTI attached before
// cudart started (runtime and driver API records per callback id, as libslack enables them); then
// a 200 ms kernel in flight while the records are turned off (is it flushed with its times?);
// then detached and attached again three times: windows 2 and 3 enable driver API records per
// callback id (cuLaunch*, cuMemcpy*, cuMemset*, cuGraphLaunch*), window 4 the whole DRIVER kind.
// Per window: RUNTIME and DRIVER records, kernels, kernels whose correlation id is an API
// record's, the driver cbids seen, and whether the driver records nest in runtime ones; the
// median launch call attached with records on, with them off, and detached; attach and detach
// times. Built and run by scripts/gpu-windows.sh (nvcc -arch=sm_90 ... -lcupti -lcudart -lcuda).
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <vector>
#include <algorithm>

__global__ void tiny(int *p) { if (p) p[0] = 1; }
__global__ void slow(long long ns) { long long t0 = clock64(); while (clock64() - t0 < ns * 2) {} }

static uint64_t now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000ull + t.tv_nsec; }
static uint64_t CUPTIAPI ts() { return now(); }

struct Rec { int kind; uint32_t cbid, corr, tid; uint64_t s, e; };
static std::vector<Rec> recs;
static void CUPTIAPI req(uint8_t **b, size_t *sz, size_t *mx) { *sz = 8 << 20; posix_memalign((void **)b, 8, *sz); *mx = 0; }
static void CUPTIAPI done(CUcontext, uint32_t, uint8_t *buf, size_t, size_t valid) {
  CUpti_Activity *r = NULL;
  while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS) {
    Rec x = {(int)r->kind, 0, 0, 0, 0, 0};
    if (r->kind == CUPTI_ACTIVITY_KIND_RUNTIME || r->kind == CUPTI_ACTIVITY_KIND_DRIVER) {
      CUpti_ActivityAPI *a = (CUpti_ActivityAPI *)r; x.cbid = a->cbid; x.corr = a->correlationId; x.tid = a->threadId; x.s = a->start; x.e = a->end;
    } else if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)r; x.corr = k->correlationId; x.s = k->start; x.e = k->end;
    } else continue;
    recs.push_back(x);
  }
  free(buf);
}
#define CK(x) do { CUptiResult r_ = (x); if (r_) { const char *s; cuptiGetResultString(r_, &s); printf("%s: %s\n", #x, s); } } while (0)

static void enable_api(int rt, int drv_mode) {  // drv_mode 0 none, 1 per-cbid, 2 whole kind
  const char *rp[] = {"cudaLaunch", "cudaMemcpy", "cudaMemset", "cudaGraphLaunch", "__cudaLaunch"};
  const char *dp[] = {"cuLaunch", "cuMemcpy", "cuMemset", "cuGraphLaunch"};
  if (rt) for (uint32_t id = 1; id < CUPTI_RUNTIME_TRACE_CBID_SIZE; id++) { const char *n = 0;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, id, &n) || !n) continue;
    for (auto p : rp) if (!strncmp(n, p, strlen(p))) cuptiActivityEnableRuntimeApi(id, 1); }
  if (drv_mode == 1) for (uint32_t id = 1; id < CUPTI_DRIVER_TRACE_CBID_SIZE; id++) { const char *n = 0;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, id, &n) || !n) continue;
    for (auto p : dp) if (!strncmp(n, p, strlen(p))) cuptiActivityEnableDriverApi(id, 1); }
  if (drv_mode == 2) CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
}
static CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_OVERHEAD};
static void attach(int drv_mode) {
  uint64_t t0 = now();
  CK(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM));
  CK(cuptiActivityRegisterTimestampCallback(ts));
  CK(cuptiActivityRegisterCallbacks(req, done));
  for (auto k : kinds) CK(cuptiActivityEnable(k));
  enable_api(1, drv_mode);
  printf("  attach took %.3f ms\n", (now() - t0) / 1e6);
}
static void records(int on) { for (auto k : kinds) on ? cuptiActivityEnable(k) : cuptiActivityDisable(k);
  if (!on) { cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME); cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER); } }
static void detach() { uint64_t t0 = now(); CK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)); uint64_t t1 = now(); CK(cuptiFinalize());
  printf("  flush %.3f ms, finalize %.3f ms\n", (t1 - t0) / 1e6, (now() - t1) / 1e6); }

static double launches(int n, int *p) {  // median launch ns
  std::vector<uint64_t> v;
  for (int i = 0; i < n; i++) { uint64_t a = now(); tiny<<<1, 1>>>(p); v.push_back(now() - a); if (i % 256 == 255) cudaDeviceSynchronize(); }
  cudaDeviceSynchronize(); std::sort(v.begin(), v.end()); return v[v.size() / 2];
}
static void phase(const char *name, size_t from, std::vector<uint32_t> &kcorr) {
  int rt = 0, drv = 0, k = 0, kj = 0; std::vector<uint32_t> apic;
  for (size_t i = from; i < recs.size(); i++) { Rec &r = recs[i];
    if (r.kind == CUPTI_ACTIVITY_KIND_RUNTIME) { rt++; apic.push_back(r.corr); }
    if (r.kind == CUPTI_ACTIVITY_KIND_DRIVER) { drv++; apic.push_back(r.corr); } }
  std::sort(apic.begin(), apic.end());
  int drvcb[4] = {0}; uint32_t cbs[4] = {0};
  for (size_t i = from; i < recs.size(); i++) { Rec &r = recs[i];
    if (r.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) { k++; if (std::binary_search(apic.begin(), apic.end(), r.corr)) kj++; if (r.s == 0) printf("   kernel with zero start corr %u\n", r.corr); }
    if (r.kind == CUPTI_ACTIVITY_KIND_DRIVER) { for (int j = 0; j < 4; j++) if (!cbs[j] || cbs[j] == r.cbid) { cbs[j] = r.cbid; drvcb[j]++; break; } } }
  printf("%s: runtime %d driver %d kernels %d joined-by-corr %d; driver cbids:", name, rt, drv, k, kj);
  for (int j = 0; j < 4 && cbs[j]; j++) { const char *n = "?"; cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbs[j], &n); printf(" %s=%d", n, drvcb[j]); }
  // nesting: for a driver record, is there a runtime record on the same tid around it?
  int nested = 0, samecorr = 0;
  for (size_t i = from; i < recs.size(); i++) if (recs[i].kind == CUPTI_ACTIVITY_KIND_DRIVER)
    for (size_t j = from; j < recs.size(); j++) if (recs[j].kind == CUPTI_ACTIVITY_KIND_RUNTIME && recs[j].tid == recs[i].tid && recs[j].s <= recs[i].s && recs[j].e >= recs[i].e) { nested++; samecorr += recs[j].corr == recs[i].corr; break; }
  printf(" | driver nested in runtime %d (same corr %d)\n", nested, samecorr);
  (void)kcorr;
}

int main(int argc, char **argv) {
  int drv_mode_after = argc > 1 ? atoi(argv[1]) : 1;
  int n = 2000; int *p; std::vector<uint32_t> kc;
  printf("== start: attach before cudart (drv per-cbid)\n");
  attach(1);
  cudaMalloc(&p, 4);
  size_t f = recs.size();
  double on1 = launches(n, p); cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  phase("window1 (attached at start)", f, kc);
  records(0); double off = launches(n, p); records(1);
  // a long kernel launched inside the window that completes after detach is asked
  f = recs.size();
  slow<<<1, 1>>>(200000000ll); // ~200 ms
  printf("== detach with a slow kernel in flight (non-forced flush first, then wait+flush)\n");
  records(0);
  { size_t a = recs.size(); cuptiActivityFlushAll(0); size_t b = recs.size();
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); size_t c = recs.size();
    printf("  right after records(0): flush(0) gave %zu records, forced %zu more\n", b - a, c - b);
    usleep(400000); size_t d = recs.size(); cuptiActivityFlushAll(0); cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    printf("  400 ms later: %zu more\n", recs.size() - d); }
  cudaDeviceSynchronize();
  detach();
  phase("tail (slow kernel, synced before detach)", f, kc);
  double det = launches(n, p);
  for (int w = 2; w <= 4; w++) {
    int mode = w == 4 ? 2 : drv_mode_after;
    printf("== re-attach %d (driver mode %d)\n", w, mode);
    attach(mode);
    f = recs.size();
    double on = launches(n, p);
    float *d; cudaMalloc(&d, 1 << 20); cudaMemsetAsync(d, 0, 1 << 20); cudaMemcpy(d, d + 1024, 4096, cudaMemcpyDeviceToDevice); cudaFree(d);
    cudaDeviceSynchronize();
    detach();
    char nm[64]; snprintf(nm, sizeof nm, "window%d", w); phase(nm, f, kc);
    printf("  median launch ns: on %.0f\n", on);
    double d2 = launches(n, p); printf("  detached after: %.0f\n", d2);
  }
  printf("median launch ns: window1 on %.0f, records off %.0f, detached %.0f\n", on1, off, det);
  // finally: no-CUPTI-ever baseline can't be had in this process
  return 0;
}

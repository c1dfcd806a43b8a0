/* Test-only CPU stand-in for cudart, the driver and CUPTI: the private interface between the
 * three stub libraries (build/stub/libcudart.so.13, libcuda.so.1, libcupti.so.13). Never
 * installed or shipped; nothing here is a GPU measurement.
 *
 * Like the real libraries, the stub cudart and the stub CUPTI reach private driver entry points
 * through cuGetExportTable(table, uuid), the one driver function slack must never wrap:
 *   - cudart gets STUB_RT_TABLE_ID: it brackets each runtime API call (so the driver can emit a
 *     CUPTI runtime API record and give the driver work under it the same correlation id) and
 *     registers kernels;
 *   - CUPTI gets STUB_CUPTI_TABLE_ID and attaches itself: from then on the driver asks it which
 *     records are wanted, reads its clock and hands it records to deliver.
 */
#ifndef SLACK_STUB_INTERNAL_H
#define SLACK_STUB_INTERNAL_H

#include <cuda.h>
#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

static const CUuuid STUB_RT_TABLE_ID = {
    {'s', 'l', 'k', '-', 's', 't', 'u', 'b', '-', 'c', 'u', 'd', 'a', 'r', 't', '1'}};
static const CUuuid STUB_CUPTI_TABLE_ID = {
    {'s', 'l', 'k', '-', 's', 't', 'u', 'b', '-', 'c', 'u', 'p', 't', 'i', '-', '1'}};

/* Driver -> stub cudart. */
struct stub_rt_table {
  size_t size;
  /* A runtime API call with CUPTI runtime callback id cbid begins / ends on this thread. Driver
   * calls in between are internal: no driver API record, the runtime call's correlation id. */
  void (*api_enter)(uint32_t cbid);
  void (*api_exit)(uint32_t result);
  /* A kernel called name that runs ns nanoseconds on the simulated GPU (never freed). */
  CUfunction (*kernel_create)(const char *name, uint64_t ns);
};

/* Stub CUPTI -> driver: what the driver asks CUPTI while it runs. */
struct stub_cupti_client {
  size_t size;
  /* 1 when an API record for this call is wanted (kind RUNTIME/DRIVER or per-cbid enables). */
  int (*api_enabled)(CUpti_CallbackDomain domain, uint32_t cbid);
  int (*kind_enabled)(CUpti_ActivityKind kind);
  /* CUPTI's clock: the registered timestamp callback, else CLOCK_REALTIME (as real CUPTI). */
  uint64_t (*now)(void);
  /* threadId for API records, per cuptiSetThreadIdType (default: pthread_self, as real CUPTI) */
  uint32_t (*thread_id)(void);
  /* Queues one record (copied). done_mono: CLOCK_MONOTONIC time at which the record is
   * complete (the simulated GPU end; 0 = complete now). gpu_times: its start/end fields are
   * simulated GPU times on CLOCK_MONOTONIC, converted to CUPTI's clock at delivery (as real
   * CUPTI converts GPU timestamps in post-processing); otherwise they are already CUPTI time. */
  void (*emit)(const void *rec, size_t size, uint64_t done_mono, int gpu_times);
  /* 1 when CUPTI sees runtime API calls: attached before the first cuptiFinalize. Attached
   * again after one (as on the H200, GPU run 18), CUPTI gets no runtime API call from cudart:
   * the driver calls cudart makes are then ordinary driver calls, each with its own correlation
   * id (the one its GPU work carries) and a DRIVER record when CUPTI asked for it. */
  int (*runtime_visible)(void);
};

/* Driver -> stub CUPTI. */
struct stub_cupti_table {
  size_t size;
  /* CUPTI attaches; NULL detaches (cuptiFinalize; a later CUPTI call attaches again). */
  void (*attach)(const struct stub_cupti_client *client);
  /* A kind was just enabled: the driver emits the DEVICE / CONTEXT records of what exists. */
  void (*kind_enabled)(CUpti_ActivityKind kind);
  /* cuptiGetStreamIdEx: the stream id the activity records of stream h carry. A null h is the
   * legacy stream of ctx (the calling thread's current context when ctx is NULL), or with
   * per_thread the calling thread's per-thread stream there; CU_STREAM_LEGACY and
   * CU_STREAM_PER_THREAD name those too. A non-null ctx must be h's own. */
  CUresult (*stream_id)(CUcontext ctx, CUstream h, int per_thread, uint32_t *id);
  /* cuptiGetDeviceId: the device of ctx (CUPTI's device id, the driver's ordinal here). */
  CUresult (*ctx_device)(CUcontext ctx, uint32_t *device);
};

/* Default and limits of the simulation (tests/stub/README.md). */
#define STUB_LAUNCH_LATENCY_NS 2000ull /* submission to earliest GPU start */
#define STUB_DEFAULT_KERNEL_NS 10000ull
#define STUB_LEGACY_STREAM_ID 7u
#define STUB_FIRST_STREAM_ID 13u

#endif

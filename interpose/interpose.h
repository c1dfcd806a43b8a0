/* Helpers shared by the exported wrappers of interpose/ (never included by runtime/ or analyzer/).
 *
 * A wrapper resolves its real function once (slack_resolve), asks hook_begin whether to record,
 * calls the real function, hands what it saw to hook_end and returns the real result untouched.
 * Nothing here allocates, locks or prints. */
#ifndef SLACK_INTERPOSE_H
#define SLACK_INTERPOSE_H

#include <stdint.h>

#include "hook.h"
#include "window.h" /* production windows: the capture range's calls (cudart.c, nvtx.c) */

/* Exported from libslack.so (the Makefile builds with -fvisibility=hidden, and
 * interpose/exports.map must list every symbol so marked: tests/test_exports.sh checks both). */
#define SLACK_EXPORT __attribute__((visibility("default")))

/* The real function behind a wrapper: resolved on first use and kept in *slot. Relaxed atomics
 * suffice: the pointer leads to code of an already loaded object, nothing else is published
 * through it, and two threads racing here both find the same address (the second store is
 * harmless). NULL when the library is absent; then nothing is stored and the next call looks
 * again (only a program that cannot be calling through that library pays for it). */
static inline void *slack_resolve(void **slot, const char *name, const char *lib) {
  void *p = __atomic_load_n(slot, __ATOMIC_RELAXED);
  if (__builtin_expect(p == NULL, 0)) {
    p = slack_real_symbol(name, lib);
    if (p != NULL) __atomic_store_n(slot, p, __ATOMIC_RELAXED);
  }
  return p;
}

/* The stream value recorded for a call. In the per-thread-default-stream variants (_ptsz, _ptds,
 * or a driver function fetched with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) a null
 * stream means the calling thread's default stream, whose handle is 0x2 (cudaStreamPerThread,
 * CU_STREAM_PER_THREAD); in the others it means the legacy default stream, 0. */
#define SLACK_STREAM_PER_THREAD 0x2u
static inline uint64_t slack_stream(const void *stream, int per_thread) {
  if (stream == NULL && per_thread) return SLACK_STREAM_PER_THREAD;
  return (uint64_t)(uintptr_t)stream;
}

/* SLK_HOST_SYNCHRONOUS when the function blocks the host by its API contract: the sync column of
 * SLK_FN_LIST in format.h, as a compile-time constant (SLACK_SYNC_CU_CTX_SYNC...). */
enum {
#define SLACK_SYNC_ENUM(id, name, sync, cat) SLACK_SYNC_##id = (sync) ? SLK_HOST_SYNCHRONOUS : 0,
  SLK_FN_LIST(SLACK_SYNC_ENUM)
#undef SLACK_SYNC_ENUM
};
#define SLACK_SYNC(id) ((uint32_t)SLACK_SYNC_##id)

/* enum cudaMemcpyKind numbering, which HOST records use for copy_kind (format.h). */
enum {
  SLACK_COPY_HTOH = 0,
  SLACK_COPY_HTOD = 1,
  SLACK_COPY_DTOH = 2,
  SLACK_COPY_DTOD = 3,
  SLACK_COPY_DEFAULT = 4 /* unified addressing: the direction follows from the pointers */
};

/* A "synchronous" copy from device to device does not block the host (CUDA's API
 * synchronization behavior: "for transfers from device memory to device memory, no host-side
 * synchronization is performed"), so it is not flagged as blocking even when its function is. */
static inline uint32_t slack_copy_sync(uint32_t fn_sync, unsigned copy_kind) {
  return copy_kind == SLACK_COPY_DTOD ? 0u : fn_sync;
}

/* Code on the path of every dlsym call (the exported dlsym, its routing, the hooked-name test)
 * runs inside a sanitizer runtime's own start-up when slack is built with SAN= and preloaded
 * after libasan/libtsan: their interceptors resolve the real libc functions with dlsym before
 * the shadow memory exists, so an instrumented load there faults. That path is left
 * uninstrumented (it only reads constant tables and the name it is given). */
#define SLACK_NO_SANITIZE __attribute__((no_sanitize("address", "undefined", "thread")))

/* interpose/driver.c: 1 when slack wraps driver functions looked up under export name `name`
 * (or it is cuGetProcAddress/_v2): dl.c then post-processes the dlsym result. */
int slack_driver_hooks_name(const char *name) SLACK_HIDDEN SLACK_NO_SANITIZE;

/* interpose/driver.c: driver functions handed out unwrapped because every wrapper slot of their
 * kind was taken (for the runtime's end-of-run summary). */
uint64_t slack_driver_unwrapped(void) SLACK_HIDDEN;

#endif

/* The stream map: each stream handle the hooks see, named once by CUPTI's stream id (the one its
 * kernel, copy and memset records carry), as SLK_STREAM records (docs/FORMAT.md). With them the
 * analyzer joins GPU work to the call that submitted it by each stream's order
 * (docs/CLASSIFICATION.md, "The order join") where no API record joins it: with
 * SLACK_API_RECORDS=0 (CUPTI's API records cost ~1 us per launch on the H200), and after CUPTI
 * was detached and attached again (SLACK_WINDOW_DETACH=1: CUPTI 13.0 gives no API record then).
 *
 * Off the fast path: after the real call returned, one lookup in a cache of the handles named
 * since CUPTI was last attached; only a miss asks CUPTI (cuptiGetStreamIdEx, never waiting:
 * cupti_stream_id). Two caches:
 *  - handles of streams the program created: one table for the process, open addressing,
 *    claimed by compare-and-swap (a handle names one stream of one context, whichever thread
 *    uses it);
 *  - handles 0 (legacy), 1 (CU_STREAM_LEGACY) and 2 (CU_STREAM_PER_THREAD), which name a stream
 *    of the calling thread's current context (and, for 2, of the thread): per thread, with the
 *    context they were named in (cuCtxGetCurrent, the real driver's, each such call). A thread
 *    that changes context names them again; the analyzer takes the thread's latest record.
 * Entries are tagged with CUPTI's attach epoch: an attach (a production window with
 * SLACK_WINDOW_DETACH=1) names every handle again. A stream destroyed and its handle reused by a
 * new stream within one attach keeps the first name (cuStreamDestroy is not hooked). */
#include <cuda.h>
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#include "cupti_client.h"
#include "hook.h"
#include "ring.h"

#define MAP_SLOTS 4096 /* power of two */
#define MAP_PROBES 32
/* a slot's value: CUPTI's stream id (bits 0-31), the device (32-39), the epoch (40-62), and bit
 * 63 when CUPTI could not name it (not asked again in that epoch); 0 while being filled */
#define V_FAILED (1ull << 63)
#define V_EPOCH(v) ((uint32_t)((v) >> 40) & SLACK_EPOCH_MASK)

struct map_slot {
  uint64_t handle; /* 0: empty; claimed once by CAS, never freed */
  uint64_t val;
};
static struct map_slot map[MAP_SLOTS];

/* the handles of the current context, per thread: 0, 1, 2 */
struct special {
  void *ctx;
  uint32_t epoch;
};
static __thread struct special specials[3] __attribute__((tls_model("initial-exec")));

static CUresult (*ctx_get_current)(CUcontext *);
static int ctx_looked_up; /* atomic: 0 not yet, 1 done (ctx_get_current may be NULL) */

static void *current_ctx(void) {
  if (!__atomic_load_n(&ctx_looked_up, __ATOMIC_ACQUIRE)) {
    void *h = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
    void *f = h ? slack_real_dlsym(h, "cuCtxGetCurrent") : NULL;
    if (h) dlclose(h);
    __atomic_store_n((void **)&ctx_get_current, f, __ATOMIC_RELAXED);
    __atomic_store_n(&ctx_looked_up, 1, __ATOMIC_RELEASE);
  }
  CUresult (*get)(CUcontext *) = __atomic_load_n(&ctx_get_current, __ATOMIC_RELAXED);
  CUcontext c = NULL;
  if (!get || get(&c) != CUDA_SUCCESS) return NULL;
  return c;
}

/* 0 when the thread's ring is full: the handle is named again at its next call */
static int emit(uint64_t t0, uint64_t handle, uint32_t sid, uint32_t dev) {
  struct slack_event ev = {
      .t0 = t0, .t1 = t0, .stream = handle, .bytes = sid, .fn = SLACK_EV_STREAM, .result = dev};
  return slack_try_push_event(&ev);
}

/* Names `handle` in `epoch` and records it: 0 named (or CUPTI cannot name it), 1 ask again
 * later. */
static int name_handle(void *ctx, uint64_t handle, uint32_t epoch, uint64_t t0, uint64_t *val) {
  uint32_t sid = 0, dev = 0;
  int rc = cupti_stream_id(ctx, handle, epoch, &sid, &dev);
  if (rc > 0) return 1;
  if (!rc && !emit(t0, handle, sid, dev)) return 1;
  *val = (uint64_t)(epoch & SLACK_EPOCH_MASK) << 40 | (rc ? V_FAILED : 0) |
         (uint64_t)(dev & 0xff) << 32 | sid;
  return 0;
}

static void note_special(uint64_t handle, uint32_t epoch, uint64_t t0) {
  void *ctx = current_ctx();
  if (!ctx) return;
  struct special *s = &specials[handle];
  if (s->ctx == ctx && s->epoch == epoch) return;
  uint64_t val;
  if (name_handle(ctx, handle, epoch, t0, &val)) return;
  s->ctx = ctx;
  s->epoch = epoch;
}

void slack_stream_note(uint32_t fn, uint64_t handle, uint64_t t0) {
  int cat = slk_fn_cat(fn);
  if (cat != SLK_FNC_LAUNCH && !slk_fnc_is_copy(cat) && cat != SLK_FNC_MEMSET) return;
  uint32_t epoch = cupti_attach_epoch();
  if (!epoch) return;
  if (handle <= SLACK_STREAM_HANDLE_PER_THREAD) {
    note_special(handle, epoch, t0);
    return;
  }
  size_t i = (size_t)((handle * 0x9e3779b97f4a7c15ull) >> 52) & (MAP_SLOTS - 1);
  for (int p = 0; p < MAP_PROBES; p++, i = (i + 1) & (MAP_SLOTS - 1)) {
    struct map_slot *m = &map[i];
    uint64_t h = __atomic_load_n(&m->handle, __ATOMIC_ACQUIRE);
    if (h == 0) {
      uint64_t expect = 0;
      if (!__atomic_compare_exchange_n(&m->handle, &expect, handle, 0, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE)) {
        if (expect != handle) continue; /* another handle took it: probe on */
      }
      h = handle;
    }
    if (h != handle) continue;
    uint64_t v = __atomic_load_n(&m->val, __ATOMIC_ACQUIRE);
    if (v && V_EPOCH(v) == (epoch & SLACK_EPOCH_MASK)) return; /* named in this attach */
    /* two threads that miss together both name it: two records of the same map, harmless */
    uint64_t nv;
    if (!name_handle(current_ctx(), handle, epoch, t0, &nv))
      __atomic_store_n(&m->val, nv, __ATOMIC_RELEASE);
    return;
  }
  /* no slot within MAP_PROBES: the analyzer maps this handle by the learned order */
}

void slack_streams_forget(void) {
  memset(map, 0, sizeof map);
  memset(specials, 0, sizeof specials);
}

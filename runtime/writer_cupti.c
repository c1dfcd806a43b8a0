/* CUPTI's activity records as trace records (writer_int.h). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_client.h"
#include "writer_int.h"

/* CUPTI context id -> device id, from CONTEXT records (sync records carry only the context) */
#define MAX_CTX 64
static uint32_t ctx_ids[MAX_CTX], ctx_dev[MAX_CTX];
static int nctx;

static uint32_t ctx_device(uint32_t ctx) {
  for (int i = 0; i < nctx; i++)
    if (ctx_ids[i] == ctx) return ctx_dev[i];
  return 0;
}

static int ctx_known(uint32_t ctx) {
  for (int i = 0; i < nctx; i++)
    if (ctx_ids[i] == ctx) return 1;
  return 0;
}

/* DEVICE records written (ids below 64): CUPTI attached again (window.c) reports every device
 * again, the trace keeps one record of each. */
static uint64_t devices_written;

/* ---- the GPU work not yet home (SLACK_WINDOW_DETACH): an open-addressing set of correlation
 * ids, each WAITING (its host call met its API record first) or HOME (the GPU record came
 * first: CUPTI hands buffers over in no set order). Emptied at each detach. */
enum { GPU_EMPTY = 0, GPU_WAITING = 1, GPU_HOME = 2 };
struct gpu_slot {
  uint32_t corr;
  uint32_t state;
};
int wr_gpu_track;
static struct gpu_slot *gset;
static size_t gcap, gused, gwaiting; /* gused counts slots that are not empty */
static size_t gunjoined; /* host calls that submitted work and have not met their API record */

/* A host call whose GPU work is waited for: one that puts work on the GPU and did not fail. */
static int submits(const struct slack_event *e) {
  int cat = slk_fn_cat(e->fn);
  return slk_fnc_submits(cat) && cat != SLK_FNC_HOSTFUNC && !e->result;
}

void wr_gpu_submitted(const struct slack_event *e) {
  if (wr_gpu_track && cupti_api_records_on() && submits(e)) gunjoined++;
}

static struct gpu_slot *gpu_slot(uint32_t corr) {
  size_t i = (corr * 2654435761u) & (gcap - 1);
  while (gset[i].state != GPU_EMPTY && gset[i].corr != corr)
    i = (i + 1) & (gcap - 1);
  return &gset[i];
}

static int gpu_grow(void) {
  if (gcap && (gused + 1) * 2 <= gcap) return 0;
  size_t ncap = gcap ? gcap : 1024; /* the same size once the HOME slots go, else twice */
  while (ncap < 1024 || (gwaiting + 1) * 4 > ncap)
    ncap *= 2;
  struct gpu_slot *old = gset, *n = calloc(ncap, sizeof *n);
  if (!n) return -1;
  size_t ocap = gcap;
  /* HOME slots matter only for a host call's API record still to come (rare): when they
   * outnumber the WAITING ones, they go, so that the set stays the size of the work in flight
   * however long a window lasts (a graph's later kernels and unhooked launches leave HOME slots) */
  int keep_home = gused - gwaiting <= gwaiting;
  gset = n;
  gcap = ncap;
  gused = 0;
  for (size_t i = 0; i < ocap; i++)
    if (old[i].state == GPU_WAITING || (keep_home && old[i].state == GPU_HOME)) {
      *gpu_slot(old[i].corr) = old[i];
      gused++;
    }
  free(old);
  return 0;
}

/* A host call with this id submitted GPU work (waiting) or a GPU record with it came (home).
 * A HOME slot stays HOME (a graph's kernels share their launch's id); one WAITING goes HOME. */
static void gpu_note(uint32_t corr, int home) {
  if (!wr_gpu_track || !corr || gpu_grow()) return;
  struct gpu_slot *g = gpu_slot(corr);
  if (g->state == GPU_EMPTY) {
    *g = (struct gpu_slot){corr, home ? GPU_HOME : GPU_WAITING};
    gused++;
    gwaiting += !home;
  } else if (g->state == GPU_WAITING && home) {
    g->state = GPU_HOME;
    gwaiting--;
  } /* HOME, and its host call's API record came after: nothing waits */
}

size_t wr_gpu_outstanding(void) { return gwaiting + gunjoined; }

void wr_gpu_forget(void) {
  free(gset);
  gset = NULL;
  gcap = gused = gwaiting = gunjoined = 0;
}

/* CUPTI writes a synchronization record for each cudaEventQuery too (type EVENT_SYNCHRONIZE,
 * CUPTI 13.0 on the H200: 155,290 of them for 60 steps of a Python loop asking until its batch
 * was done, 88% of the trace's records, GPU run 105). Back-to-back ones of the same kind, stream
 * and event (the next starting within SYNC_FOLD_GAP_NS of the last one's end: a polling loop's
 * questions, which hook_end folds into one HOST record too) are written as one, from the first
 * start to the last end; the record held is written once the next one does not fold into it and
 * at the end of each CUPTI buffer (wr_sync_flush). The analyzer reads no SYNC record; slack dump
 * and slack info show them. */
#define SYNC_FOLD_GAP_NS 20000
static struct slk_record sync_held;
static int sync_holding;

void wr_sync_flush(void) {
  if (sync_holding) wr_add(&sync_held);
  sync_holding = 0;
}

static void sync_fold(const struct slk_record *r) {
  struct slk_record *h = &sync_held;
  if (sync_holding && h->device == r->device && h->stream == r->stream && h->fn == r->fn &&
      h->count == r->count && r->start >= h->start && r->start <= h->end + SYNC_FOLD_GAP_NS) {
    if (r->end > h->end) h->end = r->end;
    return;
  }
  wr_sync_flush();
  *h = *r;
  sync_holding = 1;
}

void wr_encode_cupti(const CUpti_Activity *a) {
  struct slk_record r = {0};
  switch (a->kind) {
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
  case CUPTI_ACTIVITY_KIND_KERNEL: {
    const CUpti_ActivityKernel10 *k = (const void *)a;
    if (__atomic_load_n(&slack_probe_win.t0, __ATOMIC_ACQUIRE) && k->name &&
        !strcmp(k->name, SLACK_PROBE_KERNEL))
      return; /* the exit probe's (probe.c) */
    r = (struct slk_record){.kind = SLK_KERNEL,
                            .device = k->deviceId,
                            .stream = k->streamId,
                            .start = k->start,
                            .end = k->end,
                            .corr = k->correlationId,
                            .grid = {k->gridX, k->gridY, k->gridZ},
                            .block = {k->blockX, k->blockY, k->blockZ},
                            .shmem = (uint32_t)(k->staticSharedMemory + k->dynamicSharedMemory),
                            .regs = k->registersPerThread,
                            .graph_id = k->graphId};
    r.name = wr_intern(k->name ? k->name : "?");
    break;
  }
  /* the two copy records differ in layout but name these fields alike */
#define COPY_RECORD(m)                                                                             \
  (struct slk_record) {                                                                            \
    .kind = SLK_MEMCPY, .device = (m)->deviceId, .stream = (m)->streamId, .start = (m)->start,     \
    .end = (m)->end, .corr = (m)->correlationId, .bytes = (m)->bytes, .copy_kind = (m)->copyKind,  \
    .src_kind = (m)->srcKind, .dst_kind = (m)->dstKind, .flags = (m)->flags,                       \
    .graph_id = (m)->graphId                                                                       \
  }
  case CUPTI_ACTIVITY_KIND_MEMCPY:
    r = COPY_RECORD((const CUpti_ActivityMemcpy6 *)(const void *)a);
    break;
  case CUPTI_ACTIVITY_KIND_MEMCPY2:
    r = COPY_RECORD((const CUpti_ActivityMemcpyPtoP4 *)(const void *)a);
    break;
#undef COPY_RECORD
  case CUPTI_ACTIVITY_KIND_MEMSET: {
    const CUpti_ActivityMemset4 *m = (const void *)a;
    r = (struct slk_record){.kind = SLK_MEMSET,
                            .device = m->deviceId,
                            .stream = m->streamId,
                            .start = m->start,
                            .end = m->end,
                            .corr = m->correlationId,
                            .bytes = m->bytes,
                            .dst_kind = (uint8_t)m->memoryKind,
                            .flags = m->flags,
                            .graph_id = m->graphId};
    break;
  }
  case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
    const CUpti_ActivitySynchronization2 *s = (const void *)a;
    r = (struct slk_record){.kind = SLK_SYNC,
                            .device = ctx_device(s->contextId),
                            .stream = s->streamId,
                            .start = s->start,
                            .end = s->end,
                            .corr = s->correlationId,
                            .fn = (uint32_t)s->type,
                            .count = s->cudaEventId};
    /* the exit probe's own: it asks its stream (cuStreamQuery) until its kernels are done, and
     * CUPTI writes a record for each question (probe.c) */
    uint64_t p0 = __atomic_load_n(&slack_probe_win.t0, __ATOMIC_ACQUIRE);
    if (p0 && r.start >= p0 && r.start <= __atomic_load_n(&slack_probe_win.t1, __ATOMIC_ACQUIRE))
      return;
    sync_fold(&r);
    return;
  }
  case CUPTI_ACTIVITY_KIND_RUNTIME:
  case CUPTI_ACTIVITY_KIND_DRIVER: {
    const CUpti_ActivityAPI *p = (const void *)a;
    if (slack_probe_owns(p->threadId, p->start)) return;
    struct pend *host = wr_pend_find(p->threadId, p->start, p->end);
    if (host) { /* the host call carries the id; the API record adds nothing else we use */
      host->corr = p->correlationId;
      if (wr_gpu_track && submits(&host->e)) {
        if (gunjoined) gunjoined--;
        gpu_note(p->correlationId, 0);
      }
      return;
    }
    r = (struct slk_record){.kind = SLK_API,
                            .tid = p->threadId,
                            .start = p->start,
                            .end = p->end,
                            .corr = p->correlationId,
                            .fn = p->cbid |
                                  (a->kind == CUPTI_ACTIVITY_KIND_DRIVER ? SLK_API_DRIVER : 0),
                            .result = p->returnValue};
    break;
  }
  case CUPTI_ACTIVITY_KIND_OVERHEAD: {
    const CUpti_ActivityOverhead3 *o = (const void *)a;
    r = (struct slk_record){
        .kind = SLK_OVERHEAD, .start = o->start, .end = o->end, .fn = (uint32_t)o->overheadKind};
    if (o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD) r.tid = o->objectId.pt.threadId;
    if (r.tid && slack_probe_owns(r.tid, r.start)) return;
    break;
  }
  case CUPTI_ACTIVITY_KIND_CONTEXT: {
    const CUpti_ActivityContext3 *c = (const void *)a;
    if (nctx < MAX_CTX && !ctx_known(c->contextId)) {
      ctx_ids[nctx] = c->contextId;
      ctx_dev[nctx++] = c->deviceId;
    }
    return;
  }
  case CUPTI_ACTIVITY_KIND_DEVICE: {
    const CUpti_ActivityDevice5 *d = (const void *)a;
    if (d->id < 64 && (devices_written >> d->id & 1)) return;
    if (d->id < 64) devices_written |= 1ull << d->id;
    r = (struct slk_record){.kind = SLK_DEVICE,
                            .device = d->id,
                            .regs = d->numMultiprocessors,
                            .bytes = d->globalMemorySize};
    r.name = wr_intern(d->name ? d->name : "?");
    break;
  }
  default: return;
  }
  if (r.kind == SLK_KERNEL || r.kind == SLK_MEMCPY || r.kind == SLK_MEMSET) gpu_note(r.corr, 1);
  wr_add(&r);
}

void wr_cupti_forget(void) {
  sync_holding = 0;
  nctx = 0;
  devices_written = 0;
  wr_gpu_forget();
}

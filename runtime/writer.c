/* The writer thread. Locks: w_lock guards the request flags and generation counters below and
 * nothing else; it is never held while encoding or writing. The trace file and all encoder
 * state belong to the writer thread alone. */
#include "writer.h"

#include <cupti.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "cupti_client.h"
#include "format.h"
#include "hook.h"
#include "ring.h"
#include "window.h"

static pthread_mutex_t w_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t w_wake; /* writer waits here for work (CLOCK_MONOTONIC) */
static pthread_cond_t w_done; /* flushers wait here for done_gen to pass their request */
static int wake_pending;
static uint64_t flush_gen, done_gen;
static int final_req, finished;

static struct slk_file *file;
static int file_fd = -1;
static int failed; /* file write failed or size cap: records are discarded */
static uint64_t last_chunk_ns;
static uint64_t bytes_written;

/* string-id caches (writer thread only): a call site's return address, a Python stack's key
 * (runtime/pyframes.c) -> the string id that names it */
struct idmap_slot {
  uint64_t key;
  uint32_t id;
};
struct idmap {
  struct idmap_slot *v;
  size_t cap, n;
};
static struct idmap sites, pystacks;

/* CUPTI context id -> device id, from CONTEXT records (sync records carry only the context) */
#define MAX_CTX 64
static uint32_t ctx_ids[MAX_CTX], ctx_dev[MAX_CTX];
static int nctx;

/* Host events wait here, per thread, until the CUPTI API records of their time have arrived:
 * an API record that falls on a host call gives the call its correlation id and is not written
 * (the HOST record then joins GPU work by itself; the pair would cost twice the bytes). Writer
 * thread only. Events are in time order per thread (one ring, one producer). */
struct pend {
  struct slack_event e;
  uint32_t corr;
};
struct pend_q {
  uint64_t tid;
  struct pend *v;
  size_t head, n, cap; /* live entries are v[head..n) */
};
#define PEND_MAX ((size_t)1 << 20) /* per thread; past it the oldest are written unjoined */
static struct pend_q *pq;
static size_t npq, pq_cap;
static uint64_t pend_horizon; /* host events ending before this have met their API records */
static struct pend *pend_find(uint64_t tid, uint64_t start, uint64_t end);

static void wake_writer(void) {
  pthread_mutex_lock(&w_lock);
  wake_pending = 1;
  pthread_cond_signal(&w_wake);
  pthread_mutex_unlock(&w_lock);
}

static void stop_writing(const char *why, int err) {
  if (failed) return;
  failed = 1;
  if (err)
    fprintf(stderr, "slack: %s: %s; tracing stopped, the program continues\n", why, strerror(err));
  else
    fprintf(stderr, "slack: %s; tracing stopped, the program continues\n", why);
  __atomic_store_n(&slack_state, 3, __ATOMIC_RELEASE);
  cupti_stop();
}

/* The production window open now (window.c), as the writer has seen it: its WINDOW record
 * with the SLK_WINDOW_OPEN flag is written, the closing one not yet. */
static int win_open;
static uint64_t win_t0;
static uint32_t win_why;

static void close_window(uint64_t t);

static void add(const struct slk_record *r) {
  if (failed) return;
  if (slk_file_add(file, r)) {
    stop_writing("cannot write the trace", errno);
    return;
  }
  uint64_t b = slk_file_bytes(file);
  if (b != __atomic_load_n(&bytes_written, __ATOMIC_RELAXED)) /* a chunk went out: progress */
    __atomic_store_n(&bytes_written, b, __ATOMIC_RELAXED);
  if (slack_cfg.max_mb && b > (uint64_t)slack_cfg.max_mb << 20) {
    /* the window open now ends here: its record is the last one (this add stops writing; the
     * chunk that holds it goes out when the file is closed, slk_file_close) */
    if (win_open) close_window(r->end > r->start ? r->end : r->start);
    stop_writing("trace reached SLACK_MAX_MB", 0);
  }
}

static void close_window(uint64_t t) {
  if (!win_open) return;
  win_open = 0;
  struct slk_record w = {
      .kind = SLK_WINDOW, .start = win_t0, .end = t > win_t0 ? t : win_t0, .fn = win_why};
  add(&w);
}

/* The windows opened and closed since the last look (window.c), as WINDOW records. */
static void write_windows(void) {
  struct window_ev ev;
  while (window_take(&ev)) {
    if (ev.open) {
      close_window(ev.t); /* cannot happen: opens and closes alternate */
      win_open = 1;
      win_t0 = ev.t;
      win_why = ev.why;
      struct slk_record w = {
          .kind = SLK_WINDOW, .start = ev.t, .end = ev.t, .fn = ev.why, .flags = SLK_WINDOW_OPEN};
      add(&w);
    } else {
      win_why |= ev.why;
      close_window(ev.t);
    }
  }
}

static uint32_t intern(const char *s) {
  if (failed || !s) return 0;
  return slk_file_intern(file, s, strlen(s));
}

/* "symbol+0xoff (lib)", "lib+0xoff" or "0xaddr" into buf; its length (cut to cap - 1). */
static size_t fmt_addr(char *buf, size_t cap, uint64_t addr) {
  Dl_info di;
  int w;
  if (dladdr((void *)(uintptr_t)addr, &di) && di.dli_fname) {
    const char *lib = strrchr(di.dli_fname, '/');
    lib = lib ? lib + 1 : di.dli_fname;
    if (!*lib) lib = "exe";
    if (di.dli_sname)
      w = snprintf(buf, cap, "%s+0x%lx (%s)", di.dli_sname,
                   (unsigned long)(addr - (uint64_t)(uintptr_t)di.dli_saddr), lib);
    else
      w = snprintf(buf, cap, "%s+0x%lx", lib,
                   (unsigned long)(addr - (uint64_t)(uintptr_t)di.dli_fbase));
  } else {
    w = snprintf(buf, cap, "0x%lx", (unsigned long)addr);
  }
  return w < 0 ? 0 : (size_t)w < cap ? (size_t)w : cap - 1;
}

/* The slot of key in m (its id 0 when absent), or NULL when the map cannot grow. */
static struct idmap_slot *idmap_find(struct idmap *m, uint64_t key) {
  if (2 * (m->n + 1) > m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 1024;
    struct idmap_slot *n = calloc(cap, sizeof *n);
    if (!n) return NULL;
    for (size_t i = 0; i < m->cap; i++) {
      if (!m->v[i].key) continue;
      size_t j = (m->v[i].key * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);
      while (n[j].key)
        j = (j + 1) & (cap - 1);
      n[j] = m->v[i];
    }
    free(m->v);
    m->v = n;
    m->cap = cap;
  }
  size_t i = (key * 0x9e3779b97f4a7c15ull >> 20) & (m->cap - 1);
  while (m->v[i].key && m->v[i].key != key)
    i = (i + 1) & (m->cap - 1);
  if (!m->v[i].key) {
    m->v[i].key = key;
    m->v[i].id = 0;
    m->n++;
  }
  return &m->v[i];
}

static uint32_t site_id(uint64_t addr) {
  if (!addr || failed) return 0;
  struct idmap_slot *sl = idmap_find(&sites, addr);
  if (!sl) return 0;
  if (sl->id) return sl->id;
  /* the immediate caller of the CUDA call, then, one per line, the frames of its stack that
   * runtime/stacks.c took (FORMAT.md: HOST callsite) */
  char buf[4096];
  size_t len = fmt_addr(buf, sizeof buf, addr);
  size_t nf = 0;
  const uint64_t *fr = slack_stack_of(addr, &nf);
  for (size_t k = 1; fr && k < nf && len + 2 < sizeof buf; k++) {
    buf[len++] = '\n';
    len += fmt_addr(buf + len, sizeof buf - len, fr[k]);
  }
  sl->id = intern(buf);
  return sl->id;
}

/* The Python frames of the call (runtime/pyframes.c), named once per stack. A stack whose text
 * is not published (its table was full) is named 0 and asked again next time. */
static uint32_t pystack_id(uint64_t key) {
  if (!key || failed) return 0;
  struct idmap_slot *sl = idmap_find(&pystacks, key);
  if (!sl) return 0;
  if (!sl->id) sl->id = intern(slack_py_text(key));
  return sl->id;
}

static uint32_t ctx_device(uint32_t ctx) {
  for (int i = 0; i < nctx; i++)
    if (ctx_ids[i] == ctx) return ctx_dev[i];
  return 0;
}

static void drop_record(uint64_t tid, uint64_t n, uint32_t where) {
  struct slk_record d = {.kind = SLK_DROPS, .tid = tid, .count = n, .flags = where};
  add(&d);
}

static void encode_cupti(const CUpti_Activity *a) {
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
    r.name = intern(k->name ? k->name : "?");
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
    break;
  }
  case CUPTI_ACTIVITY_KIND_RUNTIME:
  case CUPTI_ACTIVITY_KIND_DRIVER: {
    const CUpti_ActivityAPI *p = (const void *)a;
    if (slack_probe_owns(p->threadId, p->start)) return;
    struct pend *host = pend_find(p->threadId, p->start, p->end);
    if (host) { /* the host call carries the id; the API record adds nothing else we use */
      host->corr = p->correlationId;
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
    if (nctx < MAX_CTX) {
      ctx_ids[nctx] = c->contextId;
      ctx_dev[nctx++] = c->deviceId;
    }
    return;
  }
  case CUPTI_ACTIVITY_KIND_DEVICE: {
    const CUpti_ActivityDevice5 *d = (const void *)a;
    r = (struct slk_record){.kind = SLK_DEVICE,
                            .device = d->id,
                            .regs = d->numMultiprocessors,
                            .bytes = d->globalMemorySize};
    r.name = intern(d->name ? d->name : "?");
    break;
  }
  default: return;
  }
  add(&r);
}

static struct pend_q *pend_queue(uint64_t tid, int create) {
  for (size_t i = 0; i < npq; i++)
    if (pq[i].tid == tid) return &pq[i];
  if (!create) return NULL;
  if (npq == pq_cap) {
    size_t cap = pq_cap ? pq_cap * 2 : 16;
    struct pend_q *n = realloc(pq, cap * sizeof *n);
    if (!n) return NULL;
    pq = n;
    pq_cap = cap;
  }
  pq[npq] = (struct pend_q){.tid = tid};
  return &pq[npq++];
}

static void encode_host(uint64_t tid, const struct slack_event *e, uint32_t corr) {
  struct slk_record h = {.kind = SLK_HOST,
                         .tid = tid,
                         .start = e->t0,
                         .end = e->t1,
                         .fn = e->fn,
                         .stream = e->stream,
                         .bytes = e->bytes,
                         .copy_kind = (uint8_t)e->copy_kind,
                         .flags = e->flags,
                         .result = e->result,
                         .corr = corr};
  h.callsite = site_id(e->site);
  h.pystack = pystack_id(e->py);
  add(&h);
}

/* An NVTX range (interpose/nvtx.c): needs no join, written as it comes. */
static void encode_marker(uint64_t tid, const struct slack_event *e) {
  struct slk_record m = {.kind = SLK_MARKER, .tid = tid, .start = e->t0, .end = e->t1};
  m.name = intern((const char *)(uintptr_t)e->site);
  add(&m);
}

/* The exit probe's result (probe.c). */
static void encode_probe(uint64_t tid, const struct slack_event *e) {
  struct slk_record p = {.kind = SLK_PROBE,
                         .tid = tid,
                         .start = e->t0,
                         .end = e->t1,
                         .count = e->result,
                         .bytes = e->bytes,
                         .result = (uint32_t)e->stream,
                         .flags = e->flags,
                         .fn = e->copy_kind};
  add(&p);
}

/* A launch: the program has a context, and cudart (if any) its teardown registered. */
static int fn_launches(uint32_t fn) { return slk_fn_cat(fn) == SLK_FNC_LAUNCH; }

/* Writes the pending host events of every thread that ended before `until`. */
static void pend_write(uint64_t until) {
  for (size_t i = 0; i < npq; i++) {
    struct pend_q *q = &pq[i];
    while (q->head < q->n && q->v[q->head].e.t1 < until) {
      encode_host(q->tid, &q->v[q->head].e, q->v[q->head].corr);
      q->head++;
    }
    if (q->head == q->n) q->head = q->n = 0;
  }
}

static void pend_push(uint64_t tid, const struct slack_event *e) {
  struct pend_q *q = pend_queue(tid, 1);
  if (q && q->n - q->head >= PEND_MAX) {
    encode_host(q->tid, &q->v[q->head].e, q->v[q->head].corr);
    q->head++;
  }
  if (q && q->n == q->cap && q->head > 0) { /* slide the live part to the front */
    memmove(q->v, q->v + q->head, (q->n - q->head) * sizeof *q->v);
    q->n -= q->head;
    q->head = 0;
  }
  if (q && q->n == q->cap) {
    size_t cap = q->cap ? q->cap * 2 : 4096;
    struct pend *n = realloc(q->v, cap * sizeof *n);
    if (n) {
      q->v = n;
      q->cap = cap;
    }
  }
  if (!q || q->n == q->cap) { /* no memory to hold it: write it now, unjoined */
    encode_host(tid, e, 0);
    return;
  }
  q->v[q->n++] = (struct pend){*e, 0};
}

/* The pending host call of API record (tid, start, end): one that holds it (give or take a
 * tolerance for the two clocks' stamping depths), or one strictly inside it (a static cudart in
 * cuDNN calling a hooked driver function): slk_join_falls_on, the rule the reader uses too. */
static struct pend *pend_find(uint64_t tid, uint64_t start, uint64_t end) {
  struct pend_q *q = pend_queue(tid, 0);
  if (!q || q->head == q->n) return NULL;
  size_t lo = q->head, hi = q->n; /* first entry starting after end + tolerance */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (q->v[mid].e.t0 <= end + SLK_JOIN_TOLERANCE_NS)
      lo = mid + 1;
    else
      hi = mid;
  }
  /* back from there while a call can still reach the record: a thread's calls do not overlap,
   * so once one ended before start - tolerance, every earlier one did too (a fixed number of
   * entries missed the right call when calls came less than tolerance/4 apart) */
  for (size_t k = lo; k > q->head; k--) {
    struct pend *c = &q->v[k - 1];
    if (c->e.t1 + SLK_JOIN_TOLERANCE_NS < start) break;
    if (slk_join_falls_on(c->e.t0, c->e.t1, start, end) && !c->corr) return c;
  }
  return NULL;
}

static void drain_cupti(void) {
  struct cupti_buf *b = cupti_take();
  while (b) {
    struct cupti_buf *next = b->next;
    void *rec = NULL;
    while (cupti_next(b, &rec))
      encode_cupti(rec);
    if (b->lost) drop_record(0, b->lost, SLK_DROP_CUPTI);
    cupti_buf_free(b);
    b = next;
  }
}

static int probe_armed;

static void drain_ring(struct ring *r) {
  int state = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE); /* before head: see the last push */
  uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
  uint64_t tail = r->tail;
  if (head != tail && !__atomic_load_n(&r->named, __ATOMIC_ACQUIRE)) {
    struct slk_record t = {.kind = SLK_THREAD, .tid = (uint64_t)r->tid};
    t.name = intern(r->name);
    add(&t);
    __atomic_store_n(&r->named, 1, __ATOMIC_RELEASE);
  }
  for (; tail != head; tail++) {
    const struct slack_event *e = &r->ev[tail & r->mask];
    if (e->fn == SLACK_EV_MARKER) {
      encode_marker((uint64_t)r->tid, e);
    } else if (e->fn == SLACK_EV_PROBE) {
      encode_probe((uint64_t)r->tid, e);
    } else {
      if (!probe_armed && fn_launches(e->fn)) {
        probe_armed = 1;
        if (writer_on_first_launch) writer_on_first_launch();
      }
      pend_push((uint64_t)r->tid, e);
    }
  }
  __atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
  uint64_t drops = __atomic_load_n(&r->drops, __ATOMIC_RELAXED);
  if (drops != r->drops_reported) {
    drop_record((uint64_t)r->tid, drops - r->drops_reported, SLK_DROP_RING);
    r->drops_reported = drops;
  }
  if (state == RING_DEAD) __atomic_store_n(&r->state, RING_FREE, __ATOMIC_RELEASE);
}

/* Rings first, then CUPTI: an API record's host call must be pending when the record comes. */
static uint64_t lost_reported;

static void drain_all(void) {
  uint64_t lost = __atomic_load_n(&slack_lost, __ATOMIC_RELAXED);
  if (lost != lost_reported) {
    drop_record(0, lost - lost_reported, SLK_DROP_RING);
    lost_reported = lost;
  }
  for (struct ring *r = __atomic_load_n(&ring_list, __ATOMIC_ACQUIRE); r; r = r->next)
    drain_ring(r);
  drain_cupti();
}

/* SLACK_PY_SAMPLE_MS: the Python threads' stacks, sampled from here (pyframes.c). */
static uint64_t last_sample_ns;
static void sample_python(uint64_t now) {
  if (slack_cfg.py_sample_ms <= 0 || slack_cfg.stacks == SLACK_STACKS_OFF || failed) return;
  if (__atomic_load_n(&slack_state, __ATOMIC_RELAXED) == SLACK_STATE_PAUSED) return;
  if (now - last_sample_ns < (uint64_t)slack_cfg.py_sample_ms * 1000000ull) return;
  last_sample_ns = now;
  uint64_t tids[64], keys[64];
  int n = slack_py_sample(tids, keys, 64);
  uint64_t t1 = slack_now();
  for (int i = 0; i < n; i++) {
    struct slk_record r = {.kind = SLK_SAMPLE, .tid = tids[i], .start = now, .end = t1};
    r.pystack = pystack_id(keys[i]);
    if (r.pystack) add(&r);
  }
}

static void *writer_main(void *arg) {
  (void)arg;
  slack_tls_busy = 1; /* nothing this thread does is the program's CUDA work */
  /* named, so that top -H and scripts/bench (per-thread CPU from /proc) can tell it apart */
  prctl(PR_SET_NAME, "slack-writer", 0, 0, 0);
  for (;;) {
    pthread_mutex_lock(&w_lock);
    if (!wake_pending && flush_gen == done_gen && !final_req) {
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      ts.tv_nsec += slack_cfg.poll_ms * 1000000L;
      ts.tv_sec += ts.tv_nsec / 1000000000L;
      ts.tv_nsec %= 1000000000L;
      pthread_cond_timedwait(&w_wake, &w_lock, &ts);
    }
    wake_pending = 0;
    uint64_t want = flush_gen;
    int final = final_req;
    pthread_mutex_unlock(&w_lock);
    /* at exit the program waits for us: the last chunks at zstd's fastest level, so that a
     * loaded machine still finishes within SLACK_EXIT_TIMEOUT_MS (a few bytes more per event) */
    if (final && file && !failed) slk_file_auto_level(file, 1, 100);

    uint64_t now = slack_now();
    int due = now - last_chunk_ns >= (uint64_t)slack_cfg.flush_ms * 1000000ull;
    /* GPU records sit in CUPTI's partly filled buffers until asked for: ask once per flush
     * period, so a killed process loses at most SLACK_FLUSH_MS of GPU records too. The
     * completed buffers come back through buffer_completed (on this thread or CUPTI's). */
    int flushing = want != done_gen || final;
    if (due && !failed && !final) {
      uint64_t asked = slack_now();
      cupti_flush(0);
      /* every API record that ended before `asked` has been handed over by now; a host call
       * ends after its API record, so those ending a little before `asked` are complete */
      pend_horizon = asked - 1000000;
    }
    if (!final) window_poll(now);
    drain_all();
    write_windows();
    if (final) close_window(slack_now()); /* the window open at exit ends there */
    if (!final) sample_python(now);
    /* no API records to wait for (CUPTI off), or everything must go out now */
    pend_write(flushing || !cupti_api_records_on() ? UINT64_MAX : pend_horizon);
    if (!failed && (want != done_gen || final || due)) {
      if (slk_file_flush(file)) stop_writing("cannot write the trace", errno);
      last_chunk_ns = now;
    }
    if (final) {
      if (file) {
        /* the last chunk goes out first and the size is read then: slk_file_close frees `file`
         * (reading it after the close was a use after free, found by make test-asan) */
        if (!failed && slk_file_flush(file)) stop_writing("cannot write the trace", errno);
        __atomic_store_n(&bytes_written, failed ? 0 : slk_file_bytes(file), __ATOMIC_RELAXED);
        slk_file_close(file); /* flushed above (or stopped): this only frees */
      }
      file = NULL;
      close(file_fd);
      file_fd = -1;
    } else if (file) {
      __atomic_store_n(&bytes_written, slk_file_bytes(file), __ATOMIC_RELAXED);
    }
    pthread_mutex_lock(&w_lock);
    done_gen = want;
    if (final) finished = 1;
    pthread_cond_broadcast(&w_done);
    pthread_mutex_unlock(&w_lock);
    if (final) return NULL;
  }
}

void (*writer_on_first_launch)(void);

int writer_start(int fd, const char *header_body) {
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&w_wake, &ca);
  pthread_cond_init(&w_done, &ca);
  pthread_condattr_destroy(&ca);
  file = slk_file_open(fd, header_body, slack_cfg.zstd_level, (size_t)slack_cfg.chunk_kb * 1024);
  if (!file) return -1;
  file_fd = fd;
  last_chunk_ns = slack_now();
  /* compression may take SLACK_ZSTD_CPU_PCT (10) percent of a core: level 19 for a trace of a
   * few hundred KB/s, lower for bursts (format.h: slk_file_auto_level) */
  slk_file_auto_level(file, slack_cfg.zstd_level, slack_cfg.zstd_cpu_pct);
  cupti_on_buffer = wake_writer;
  /* the thread starts with every signal blocked: the program's handlers never run on it */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED); /* never joined: exit never waits */
  pthread_t t;
  int rc = pthread_create(&t, &at, writer_main, NULL);
  pthread_attr_destroy(&at);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc) {
    slk_file_close(file);
    file = NULL;
    errno = rc;
    return -1;
  }
  return 0;
}

/* The wait of the program's exit for the writer: SLACK_EXIT_TIMEOUT_MS without progress, and as
 * long as the writer keeps writing (a loaded machine), up to 10 times that in all: never a hang,
 * and no records lost to a slow but working writer. */
static void deadline_in(struct timespec *ts, long ms) {
  clock_gettime(CLOCK_MONOTONIC, ts);
  ts->tv_sec += ms / 1000;
  ts->tv_nsec += (ms % 1000) * 1000000L;
  ts->tv_sec += ts->tv_nsec / 1000000000L;
  ts->tv_nsec %= 1000000000L;
}

int writer_flush(int final, long timeout_ms) {
  struct timespec ts;
  deadline_in(&ts, timeout_ms);
  int rc = 0, extensions = 0;
  uint64_t seen = __atomic_load_n(&bytes_written, __ATOMIC_RELAXED);
  pthread_mutex_lock(&w_lock);
  if (finished) {
    pthread_mutex_unlock(&w_lock);
    return 0;
  }
  uint64_t mine = ++flush_gen;
  if (final) final_req = 1;
  pthread_cond_signal(&w_wake);
  while (final ? !finished : done_gen < mine) {
    if (pthread_cond_timedwait(&w_done, &w_lock, &ts) == ETIMEDOUT) {
      uint64_t now_bytes = __atomic_load_n(&bytes_written, __ATOMIC_RELAXED);
      if (final && now_bytes != seen && ++extensions < 10) {
        seen = now_bytes;
        deadline_in(&ts, timeout_ms);
        continue;
      }
      rc = -1;
      break;
    }
  }
  pthread_mutex_unlock(&w_lock);
  return rc;
}

void writer_forget(void) {
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  w_lock = m;
  lost_reported = 0;
  /* the parent's chunk buffers leak here; the child never writes the parent's file */
  file = NULL;
  if (file_fd >= 0) close(file_fd);
  file_fd = -1;
  failed = 0;
  wake_pending = 0;
  flush_gen = done_gen = 0;
  final_req = finished = 0;
  sites = (struct idmap){0};
  pystacks = (struct idmap){0};
  nctx = 0;
  bytes_written = 0;
  /* the parent's host events waiting for their API records: a child that starts its own trace
   * must not write them (it did, as records of the parent's threads) */
  pq = NULL;
  npq = pq_cap = 0;
  pend_horizon = 0;
  win_open = 0;
}

uint64_t writer_bytes(void) { return __atomic_load_n(&bytes_written, __ATOMIC_RELAXED); }

/* Host calls waiting for their CUPTI API records (writer_int.h): an API record that falls on a
 * host call gives the call its correlation id and is not written; then the call is written. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer_int.h"

/* Host events wait here, per thread, until the CUPTI API records of their time have arrived:
 * an API record that falls on a host call gives the call its correlation id and is not written
 * (the HOST record then joins GPU work by itself; the pair would cost twice the bytes). Writer
 * thread only. Events are in time order per thread (one ring, one producer). */
#define PEND_MAX ((size_t)1 << 20) /* per thread; past it the oldest are written unjoined */
static struct pend_q *pq;
static size_t npq, pq_cap;
uint64_t wr_pend_horizon; /* host events ending before this have met their API records */

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
  h.callsite = wr_site_id(e->site);
  h.pystack = wr_pystack_id(e->py);
  wr_add(&h);
}

/* An NVTX range (interpose/nvtx.c): needs no join, written as it comes. */
void wr_encode_marker(uint64_t tid, const struct slack_event *e) {
  struct slk_record m = {.kind = SLK_MARKER, .tid = tid, .start = e->t0, .end = e->t1};
  m.name = wr_intern((const char *)(uintptr_t)e->site);
  wr_add(&m);
}

/* The exit probe's result (probe.c). */
void wr_encode_probe(uint64_t tid, const struct slack_event *e) {
  struct slk_record p = {.kind = SLK_PROBE,
                         .tid = tid,
                         .start = e->t0,
                         .end = e->t1,
                         .count = e->result,
                         .bytes = e->bytes,
                         .result = (uint32_t)e->stream,
                         .flags = e->flags,
                         .fn = e->copy_kind,
                         .shmem = (uint32_t)e->site,
                         .regs = (uint32_t)e->py};
  wr_add(&p);
}

/* Writes the pending host events of every thread that ended before `until`. */
void wr_pend_write(uint64_t until) {
  for (size_t i = 0; i < npq; i++) {
    struct pend_q *q = &pq[i];
    while (q->head < q->n && q->v[q->head].e.t1 < until) {
      encode_host(q->tid, &q->v[q->head].e, q->v[q->head].corr);
      q->head++;
    }
    if (q->head == q->n) q->head = q->n = 0;
  }
}

void wr_pend_push(uint64_t tid, const struct slack_event *e) {
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
  wr_gpu_submitted(e);
}

/* The pending host call of API record (tid, start, end): one that holds it (give or take a
 * tolerance for the two clocks' stamping depths), or one strictly inside it (a static cudart in
 * cuDNN calling a hooked driver function): slk_join_falls_on, the rule the reader uses too. */
struct pend *wr_pend_find(uint64_t tid, uint64_t start, uint64_t end) {
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

void wr_join_forget(void) {
  /* the parent's host events waiting for their API records: a child that starts its own trace
   * must not write them (it did, as records of the parent's threads) */
  pq = NULL;
  npq = pq_cap = 0;
  wr_pend_horizon = 0;
}

/* The host calls (HOST records) as the classifier reads them: a whole trace's records, or the
 * compact form a long trace's window keeps (analyzer/report_window.c, docs/PERFORMANCE.md round
 * 16). Its own header so that tail.c (below the classifier) reads them too. */
#ifndef SLACK_HOSTCALLS_H
#define SLACK_HOSTCALLS_H

#include <stddef.h>
#include <stdint.h>

#include "reader.h"

/* A host call as the classifier reads it: what a long trace's window keeps of them (64 bytes,
 * not a record's 128). */
struct cls_host_rec {
  uint64_t tid, start, end, stream;
  uint32_t corr, fn, flags, result, callsite, pystack;
  uint8_t copy_kind;
  uint32_t scratch; /* the loader's, while it sorts them */
};
_Static_assert(sizeof(struct cls_host_rec) == 64, "a host call is one cache line");

/* HOST record r as a cls_host_rec (scratch 0) */
static inline struct cls_host_rec cls_host_rec_of(const struct slk_record *r) {
  return (struct cls_host_rec){r->tid,   r->start,  r->end,      r->stream,  r->corr,      r->fn,
                               r->flags, r->result, r->callsite, r->pystack, r->copy_kind, 0};
}

/* An input's host calls: its cls_host_rec (c) where it has them, else td's HOST records (v); n
 * of them, sorted by start */
struct cls_hosts {
  const struct slk_record *v;
  const struct cls_host_rec *c;
  size_t n;
};

static inline uint64_t cls_hosts_start(const struct cls_hosts *h, size_t k) {
  return h->c ? h->c[k].start : h->v[k].start;
}

static inline struct cls_host_rec cls_hosts_get(const struct cls_hosts *h, size_t k) {
  return h->c ? h->c[k] : cls_host_rec_of(&h->v[k]);
}

#endif

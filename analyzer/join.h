/* The launch join: from GPU work to the host call that submitted it.
 *
 *   GPU record.corr --> SLK_API record with the same correlation id (CUPTI: tid, start, end)
 *                   --> the SLK_HOST record on that tid whose [start, end] contains the API
 *                       record's span (the call as slack's hook saw it, with its call site).
 *
 * Kernels launched by a CUDA graph carry the correlation id of the cudaGraphLaunch call, so the
 * same join leads them to their graph launch. The hooks and CUPTI stamp times on one clock
 * (CLOCK_MONOTONIC), but the two stamps of one call are taken at different depths of the call:
 * either the host call holds the API call (JOIN_TOLERANCE_NS either side, and they overlap), or
 * the API call holds the host call strictly (a static cudart inside cuDNN calling a hooked driver
 * function); the host call that overlaps most wins.
 *
 * The join keeps only spans (32 bytes per API record or host call), so `slack info` can join a
 * large trace while streaming it, without holding whole records.
 */
#ifndef SLACK_JOIN_H
#define SLACK_JOIN_H

#include <stddef.h>
#include <stdint.h>

#include "reader.h"

#define JOIN_TOLERANCE_NS SLK_JOIN_TOLERANCE_NS

struct join_span {
  uint64_t tid, start, end;
  uint32_t corr;  /* API records */
  uint32_t index; /* HOST: the n-th host call added (its index in a sorted trace_data) */
};

struct join_set {
  struct join_span *api, *host;
  size_t napi, nhost, capi, chost;
  int api_lent; /* api is the caller's (join_set_lend_api): reordered in place, never freed */
  struct join_span *direct; /* HOST records that carry their API call's correlation id (1.1) */
  size_t ndirect, cdirect;
  /* after join_set_build, where the ids are dense enough (a range of at most 4 per span): the
   * first position of each id in api and direct (UINT32_MAX: none), from its id minus *_lo.
   * NULL: lookups search. */
  uint32_t *api_at, *direct_at;
  uint32_t api_lo, direct_lo;
  size_t api_range, direct_range;
  /* set before join_set_build to remember each API id's answer (4 bytes per API record): the
   * classifier asks for every id twice (its operations', then its API records' hook cost).
   * join_set_build then answers every id at once, in id order (a cursor per thread) */
  int memoize;
  uint32_t *memo; /* per position in api: its id's answer, MEMO_* or the host call */
  /* after join_set_build: host's threads (runs of one tid), each with buckets of equal time
   * over its starts (as many as its spans): the first span of each bucket, in hb (not where
   * memoized: hb NULL, each thread's spans searched). NULL: lookups search */
  struct join_thread *ht;
  size_t nht;
  uint32_t *hb;
  int host_sorted; /* join_set_add_host_sorted added the host spans, in order */
};

struct join_thread {
  uint64_t tid, t0, w; /* bucket b: starts from t0 + b * w */
  unsigned shift;      /* w is 1 << shift (64: not a power of 2) */
  size_t lo, hi;       /* its spans in host */
  size_t b0;           /* its buckets: hb[b0 .. b0 + hi - lo) */
};

/* Room for napi API and nhost HOST records before adding them (when the counts are known: no
 * growing copies). 0, or -1 when out of memory. */
int join_set_reserve(struct join_set *js, size_t napi, size_t nhost);
/* Adds an API or HOST record (other kinds are ignored). 0, or -1 when out of memory. */
int join_set_add(struct join_set *js, const struct slk_record *r);
/* Adds a HOST record of those fields, as join_set_add of the record would. 0, or -1 when out of
 * memory. */
int join_set_add_host(struct join_set *js, uint64_t tid, uint64_t start, uint64_t end,
                      uint32_t corr);
/* The n API spans at v (as join_set_add_spans takes them) as the set's own, not copied: on an
 * empty set, before anything else is added; the set reorders them in place and never frees them
 * (the caller's array, in an order of its own after). */
void join_set_lend_api(struct join_set *js, struct join_span *v, size_t n);
/* Adds n API records' spans, each as join_set_add makes it (corr set, index 0), in order: as
 * join_set_add of each record would. 0, or -1 when out of memory. */
int join_set_add_spans(struct join_set *js, const struct join_span *v, size_t n);
/* Adds a HOST record's span (tid, start, end as rend, its index among the HOST records; no
 * correlation id) where the caller has every HOST span, in the order join_set_build would sort
 * them (by tid, start, index) and reserved: instead of join_set_add for the HOST records (never
 * both). */
void join_set_add_host_sorted(struct join_set *js, uint64_t tid, uint64_t start, uint64_t end,
                              uint32_t index);
/* Sorts the spans for lookups; call once after the last add. */
void join_set_build(struct join_set *js);
void join_set_free(struct join_set *js);

/* Since format 1.1 libslack writes the correlation id into the HOST record itself and drops the
 * API record it matched; those join directly. API records that matched no host call (and
 * traces of 1.0 or from `slack import`) join through the API record's span as described above. */
#define JOIN_NO_API (-1)  /* no API record with that correlation id (or corr is 0) */
#define JOIN_NO_HOST (-2) /* an API record, but no host call recorded around it */
/* The index of the host call that made the API call with this correlation id, or JOIN_NO_API /
 * JOIN_NO_HOST. */
long long join_host_of(const struct join_set *js, uint32_t corr);
/* 1 when API span a falls on a host call of js (the time join of join_host_of for one of an id's
 * API spans: the host calls on a->tid that start before a ends, back to the first that ended
 * before it began), after join_set_build; 0 when none. */
int join_span_has_host(const struct join_set *js, const struct join_span *a);
/* join_host_of(js, js->api[j].corr) after join_set_build, for each API span in turn (j = 0, 1,
 * 2... : *first carries the first span of the last one's id, any value for j = 0): without looking
 * the id up, nor back to its first span. */
long long join_host_of_api(const struct join_set *js, size_t j, size_t *first);

struct launch_join {
  uint64_t kernels;       /* KERNEL records */
  uint64_t joined;        /* kernels whose launching host call was found */
  uint64_t no_api;        /* no API record for the kernel's correlation id */
  uint64_t no_host;       /* an API record, but no host call recorded around it */
  uint64_t graph_kernels; /* kernels launched by a CUDA graph (graph id set) */
  uint64_t graph_joined;  /* of those, joined to their graph launch */
  uint64_t by_order;      /* of the joined, joined by their stream's order, without an API
                             record (the classifier's order join, cls_order.c) */
  long long *host_of;     /* launch_join_compute only: per kernel (td order), the index in
                             td->kind[SLK_HOST] or JOIN_NO_API / JOIN_NO_HOST */
};

/* Counts into lj one kernel whose join_host_of was h. */
void launch_join_tally(struct launch_join *lj, long long h, uint32_t graph_id);
/* Counts one kernel into lj; returns what join_host_of said. */
long long launch_join_count(struct launch_join *lj, const struct join_set *js, uint32_t corr,
                            uint32_t graph_id);
/* Joins every kernel of a loaded, sorted trace and fills host_of. 0, or -1 when out of memory. */
int launch_join_compute(const struct trace_data *td, struct launch_join *lj);
void launch_join_free(struct launch_join *lj);

#endif

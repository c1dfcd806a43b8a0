/* The untraced tail of a trace (SLACK_TAIL_MS, runtime/slack.c): after a SLACK_DURATION_MS
 * window the exit probe detaches CUPTI, and the hooks go on timing the program's calls, with no
 * GPU record, no stack and no Python frame, for SLACK_TAIL_MS more. The same program's host
 * time between calls, traced and not, says how much CUPTI slowed the host (docs/CLASSIFICATION.md,
 * "The untraced tail"). The classifier keeps the tail out of the window it classifies. */
#ifndef SLACK_TAIL_H
#define SLACK_TAIL_H

#include <stddef.h>
#include <stdint.h>

#include "reader.h"

#define TAIL_GAP_NS 1000000 /* calls this close on one thread are one run of calls */
#define TAIL_MIN_INTERVALS 100
#define TAIL_LONG_MAX_NS 10000000000ull /* longer: the program waited for something else */
#define TAIL_MIN_LONG 5

/* A trace without an untraced tail has no pace of its own untraced: its calls' slowdown is then
 * assumed, the median host slowdown (traced / untraced median time between calls, per process)
 * of the 135 processes with a tail that the H200 traced in GPU runs 49 to 92 (tests/data/holdout,
 * 27 workloads: launch-, host- and loader-bound loops; scripts/host_slowdown.py --until 92): 1.45,
 * its quartiles 1.28 and 1.62, any one workload left out 1.447 to 1.455. A tail measured in the run
 * always wins; `slack report --host-slowdown F` sets it (1: none). docs/CLASSIFICATION.md, "The
 * untraced tail". */
#define TAIL_ASSUMED_FACTOR 1.45
/* the range launch overhead's point at the assumed pace is given with: the same processes' 5th and
 * 95th percentiles (until session 28 their quartiles, 1.28 and 1.62, which left out most
 * launch-bound loops' truth; docs/ACCURACY.md, "The assumed pace's range") */
#define TAIL_ASSUMED_P05 1.10
#define TAIL_ASSUMED_P95 1.85

/* One thread's pace on both sides (TAIL_MIN_INTERVALS of each). The tracer does not slow every
 * thread alike: in a GPT training step (GPU run 48) the autograd thread's calls came 2.2x slower
 * traced than in the tail and the main thread's 1.36x, while the pooled medians said 1.96x. */
struct tail_thread {
  uint64_t tid;
  uint64_t traced_ns, untraced_ns; /* its median time between calls, as traced_ns/untraced_ns */
  size_t ntraced, nuntraced;
  double factor; /* traced_ns / untraced_ns, at least 1 */
};

/* A call in the tail as the iterations are matched by (cls_pace.c): its thread, start and
 * function and call site (fn << 32 | call site string id). */
struct tail_call {
  uint64_t tid, start, key;
};

struct tail_info {
  uint64_t t;                /* the tail's start: the end of the PROBE record that detached CUPTI,
                                or the TAKEN record's time if earlier; UINT64_MAX when the trace
                                has no tail */
  int taken;                 /* t is where the GPU records end (TAKEN): 0 no, else its how,
                                SLK_TAKEN_CALLBACKS (another CUPTI client took them) or
                                SLK_TAKEN_STUCK (slack's own CUPTI call did not return); the
                                calls after it are out of the window but not untraced (no pace) */
  size_t nhost;              /* HOST records that start before t (the arrays are sorted by start) */
  size_t calls;              /* HOST records in the tail */
  uint64_t span_ns;          /* from t to the last call's end */
  uint64_t traced_ns;        /* median time between the starts of consecutive non-blocking calls of
                                one thread (closer than TAIL_GAP_NS), before t */
  uint64_t untraced_ns;      /* the same in the tail */
  size_t ntraced, nuntraced; /* the intervals of each median */
  double factor;             /* traced_ns / untraced_ns when both medians have TAIL_MIN_INTERVALS,
                                at least 1 (a host the tracer did not slow); else 1 */
  /* the long stretches outside CUDA (a call's end to the thread's next call, TAIL_GAP_NS to
   * TAIL_LONG_MAX_NS: loading a batch, host work between steps), compared where they end in the
   * same call (function and call site) with TAIL_MIN_LONG of each on both sides, each tail
   * stretch against the traced one of the same rank (quantile) of its call: the means of those
   * pairs' two sides, weighted by the calls' traced counts */
  uint64_t long_traced_ns, long_untraced_ns;
  size_t nlong_traced, nlong_untraced; /* the stretches so compared */
  double
      factor_long; /* the weighted median of the pairs' ratios, at least 1; 1 when none compare */
  struct tail_thread *threads; /* by tid: the threads with a pace on both sides */
  size_t nthreads;
  struct tail_call *tc; /* the tail's calls by thread and start (not where taken) */
  size_t ntc;
  int assumed; /* no tail timed the pace (none, or another client's): factor and the threads'
                  are the assumed slowdown over the traced pace (tail_find's assume), the
                  untraced medians the traced ones over it; no tail calls */
  int ignored; /* the tail was there but ignored (tail_find's ignore: its calls stay out of the
                  window, its pace is assumed) */
  int mid;     /* the untraced stretch is SLACK_PACE_PROBE's, mid-run (tail_gap): t its start,
                  span_ns its length; its calls stay in the world (nhost: all), outside the
                  windows classified; the traced pace from the calls before CUPTI's records went
                  off */
};

/* Finds td's tail and times its calls. 0, or -1 when out of memory. */
struct cls_hosts; /* hostcalls.h */

/* td's probe and TAKEN records; h: its host calls. assume: where no tail times the untraced pace,
 * the slowdown assumed for the traced calls (TAIL_ASSUMED_FACTOR; at most 1: none, factor 1);
 * ignore: a tail's pace is not used (slack report --no-tail), as if it had none. */
int tail_find(const struct trace_data *td, const struct cls_hosts *h, double assume, int ignore,
              struct tail_info *ti);
/* SLACK_PACE_PROBE's untraced stretch [*g0, *g1) in td (its WINDOW record, format.h
 * SLK_WINDOW_UNTRACED) and *off, where the window before it ended (CUPTI's records off); 0 where
 * td has none. */
int tail_gap(const struct trace_data *td, uint64_t *g0, uint64_t *g1, uint64_t *off);
/* Where td's tail starts (tail_info.t, from its PROBE and TAKEN records alone; *taken as
 * tail_info.taken), UINT64_MAX where it has none */
uint64_t tail_start(const struct trace_data *td, int *taken);
/* The calls' slowdown on thread tid: its own where it has a pace on both sides, else the
 * process's (factor). */
double tail_factor_of(const struct tail_info *ti, uint64_t tid);
/* What the tracer added to thread tid's median time between calls (traced less untraced, the same
 * sides as tail_factor_of's); 0 where it did not slow it. */
uint64_t tail_added_of(const struct tail_info *ti, uint64_t tid);
void tail_free(struct tail_info *ti);
/* Records of a (sorted by start) that start before t. */
size_t tail_prefix(const struct cls_hosts *a, uint64_t t);

#endif

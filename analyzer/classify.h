/* The classifier: where each GPU's time went and why it was idle (docs/CLASSIFICATION.md is the
 * specification of every rule here; docs/DESIGN.md "The classification" is the summary).
 *
 * Per GPU, the window (first to last event of all the traces given) is cut into exclusive
 * stretches that sum to the window:
 *
 *   compute          a non-communication kernel runs
 *   communication    only collective kernels (names starting "nccl", any case) run
 *   copy             only copies and memsets run
 *   serialization    idle; the launching thread was blocked in a synchronizing call when the GPU
 *                    drained (and everything it did until its next submission reached the GPU)
 *   copy_stall       idle; the launching thread was staging a host-to-device copy
 *   data_starvation  idle; the launching thread was outside CUDA and the gap ended with an input
 *                    (host-to-device) copy, or the thread was in a data-loading NVTX range
 *   launch_overhead  idle; the launching thread was launching or briefly outside CUDA
 *   other            idle, and none of the above can be shown (always with a reason)
 *
 * "The launching thread" of a gap is the host thread whose call submitted the GPU work that ended
 * the gap (the launch join of join.h). Steps come from NVTX ranges or from the repeating pattern
 * of GPU work (steps.h); the what-if of each class replays the recorded dependency graph with
 * that class's time taken out.
 *
 * Memory is proportional to the traces; nothing here prints.
 */
#ifndef SLACK_CLASSIFY_H
#define SLACK_CLASSIFY_H

#include <stddef.h>
#include <stdint.h>

#include "hostcalls.h"
#include "reader.h"
#include "tail.h"

/* The fitted host pace's bound (cls_pace.c): a replay's host at most this much faster than the
 * threads' tail factors say */
#define CLS_PACE_GAIN_MAX 4.0

enum cls_class {
  CLS_COMPUTE = 0,
  CLS_COMMUNICATION,
  CLS_COPY,
  CLS_SERIALIZATION,
  CLS_COPY_STALL,
  CLS_DATA_STARVATION,
  CLS_LAUNCH_OVERHEAD,
  CLS_OTHER,
  CLS_COUNT
};
#define CLS_FIRST_IDLE CLS_SERIALIZATION

/* Why an idle stretch is `other`. */
enum cls_reason {
  CLS_WHY_NONE = 0,
  CLS_WHY_EDGE,      /* before the GPU's first or after its last work in the window */
  CLS_WHY_NO_LAUNCH, /* the call that submitted the work ending the gap was not recorded */
  CLS_WHY_QUEUED,    /* that work was submitted before the GPU went idle: a wait slack cannot see
                        (an event on another device, another process on the GPU, GPU latency) */
  CLS_WHY_HOST,      /* the launching thread was outside CUDA longer than a launch gap, and the
                        gap did not end with an input copy */
  CLS_WHY_LONG,      /* a host phase longer than the long-gap limit (start-up, evaluation...) */
  CLS_WHY_LOADING,   /* CUDA module or function loading, JIT compilation (CUPTI overhead records) */
  CLS_WHY_ALLOC,  /* the launching thread was allocating device memory (cudaMalloc, cuMemAlloc) */
  CLS_WHY_STACKS, /* the launching thread was capturing Python stacks between its launches */
  CLS_WHY_COUNT
};

/* One trace file (one process). */
struct launch_join; /* join.h */

/* A GPU record (kernel, copy, memset) as the classifier reads it: what a long trace's window keeps
 * of them (48 bytes, not a record's 128). */
struct cls_gpu_rec {
  uint64_t start, end, stream;
  uint32_t corr, name, graph_id, device;
  uint8_t kind, copy_kind, src_kind, dst_kind;
  uint32_t scratch; /* the loader's, while it sorts them */
};

struct cls_input {
  const struct trace_data *td; /* loaded and sorted (trace_data_load) */
  const char *host;            /* header "host": GPUs of different hosts are different GPUs */
  const char *label;           /* how call sites of this process are prefixed when there are
                                  several inputs ("pid 123"); NULL for none */
  int cupti;                   /* 1 when CUPTI recorded (its per-call cost then applies) */
  const char *(*str)(const void *ctx, uint32_t id); /* string table of this file */
  const void *str_ctx;
  struct launch_join *lj; /* optional: the classifier's launch join of this input's kernels
                             counted here (launch_join_tally) and, where host_of is allocated
                             (td's kernels), each kernel's answer stored, as
                             launch_join_compute makes them: no second join */
  /* optional: the input's API records as the launch join's spans (join.h; as join_set_add makes
   * them), in td's order, where td->kind[SLK_API] is empty: the classifier reads the API records
   * only for those (a long trace's window keeps them so: 32 bytes each, not a record's 128) */
  const struct join_span *api;
  size_t napi;
  int api_lent; /* 1: api's array the classifier's to reorder in place (not copied; its order
                   after is unspecified) */
  /* optional: the kernels, copies and memsets (gpu[0], [1], [2]) as cls_gpu_rec, each in td's
   * order, where td's arrays of those kinds are empty; td->dev counts them per device */
  const struct cls_gpu_rec *gpu[3];
  size_t ngpu[3];
  /* optional: the host calls as cls_host_rec, in td's order, where td->kind[SLK_HOST] is empty;
   * given for every input of a classification or for none */
  const struct cls_host_rec *hcall;
  size_t nhcall;
  unsigned env; /* CLS_ENV_* bits: what the trace's header says of its environment (env.NAME) */
};

/* cls_input.env: PyTorch's caching allocator turned off (PYTORCH_NO_CUDA_MEMORY_CACHING set) */
enum { CLS_ENV_NO_CACHING = 1 };

/* Input x's host calls. */
static inline struct cls_hosts cls_input_hosts(const struct cls_input *x) {
  const struct trace_array *h = &x->td->kind[SLK_HOST];
  return x->hcall ? (struct cls_hosts){NULL, x->hcall, x->nhcall}
                  : (struct cls_hosts){h->v, NULL, h->n};
}

struct cls_options {
  uint64_t launch_gap_ns;  /* host time outside CUDA in one gap up to which the gap is launch
                              overhead (default 500 us) */
  uint64_t long_gap_ns;    /* host phases longer than this are `other` (default 1 s; with steps,
                              4 step periods when that is shorter) */
  uint64_t cupti_call_ns;  /* CUPTI's own cost per traced call that submits GPU work, for traces
                              without a PROBE record (default CLS_CUPTI_CALL_NS); 0 turns the
                              estimate off */
  int cupti_call_given;    /* 1: cupti_call_ns applies to every trace, PROBE record or not */
  int replay;              /* 1: replay the dependency graph for the what-if (default) */
  uint64_t steps_want;     /* the user's loop iterations (slack report --steps N): the candidate
                              whose count is closest wins; 0: slack's own rule */
  const char *step_kernel; /* steps start at each kernel whose name contains this (--step-kernel) */
  uint64_t t0, t1;         /* not 0: the window starts at t0, ends at t1, instead of the first
                              and last event (a window of a long trace whose records are
                              clipped to it: report_window.c) */
  const struct tail_info *tail; /* not NULL: the untraced tail of the trace this window is of,
                                   timed before its windows (report_window.c): its pace is every
                                   window's (one input) */
  int no_pace_fit;         /* 1: the replay without the tracer at the threads' tail paces only, not
                              fitted to the loop's iterations in the tail (--no-tail-fit, cls_pace.c) */
  double host_slowdown;    /* a trace without an untraced tail: its calls' slowdown by the tracer,
                              assumed (default TAIL_ASSUMED_FACTOR; at most 1: none, the replay
                              without the tracer then takes out CUPTI's cost per call only) */
  int host_slowdown_given; /* 1: set by the user (--host-slowdown) */
  int ignore_tail;         /* 1: an untraced tail's pace is not used (--no-tail): what the report
                              says of the trace recorded without one */
};
#define CLS_CUPTI_CALL_NS 3300

void cls_options_default(struct cls_options *o);

/* A production window (WINDOW records, docs/FORMAT.md) of one or more traces. */
struct cls_window {
  uint64_t start, end; /* UINT64_MAX: still open when the trace ended (a killed process) */
  uint32_t why;        /* SLK_WINDOW_* sources (several traces: any of theirs) */
  int open;            /* still open when the trace ended */
};

/* The production windows of n loaded traces: a closing record (flags 0) stands for its window;
 * an opening one (SLK_WINDOW_OPEN) only where no closing record of its trace has its start.
 * Sorted, overlapping or touching ones merged, into *out (free it). Their count: 0 when the
 * traces have none (all of them is recorded time), (size_t)-1 when out of memory. */
size_t cls_windows(const struct trace_data *const *td, size_t n, struct cls_window **out);

struct cls_site {
  char *site;   /* "cudaStreamSynchronize @ libtorch_cuda.so+0x17abd5e", or a reason */
  char *stack;  /* the call site's callers outward, demangled, one per line, or NULL */
  char *python; /* the call's Python frames, "file:line function" per line, innermost first */
  uint64_t ns;
  uint64_t steps_ns; /* the part of ns inside the steps (all of it when no steps were found) */
};

/* A classified stretch of one GPU's window (they tile the window, in time order). */
struct cls_segment {
  uint64_t start, end;
  uint8_t cls, why;
};

struct cls_whatif {
  uint64_t bound_ns;            /* step time minus this class's time per step: the bound */
  uint64_t replay_ns;           /* the recorded graph replayed without this class (0: no replay) */
  uint64_t replay_corrected_ns; /* the same with the tracer's cost taken out too */
  uint64_t best_ns; /* step_ns_if_removed: replay_corrected_ns, or the corrected bound; at least
                       host_bound_ns */
  uint64_t loader_bound_ns; /* where the loader's pace bounds this fix (classify.c loader_bound):
                              that pace, and best_ns is it; 0: it does not */
  uint64_t host_bound_ns;   /* serialization and every stall: the same fix with the host's work on
                               what a sync read that stays on the host kept on its thread (classify.c
                               host_bound); 0: none such, or read in windows */
};

struct cls_steps {
  size_t count;      /* steps found and timed (0: none) */
  size_t warmup;     /* leading steps left out as warm-up (steps.h) */
  size_t prefetched; /* of those, the steps that ran on batches the loader had ready before the
                        loop, ahead of the loader-bound steady state (classify.c
                        prefetched_steps) */
  size_t shape_new;  /* steps on an input shape met for the first time, scattered through the
                        loop's start, left out of the steady state (classify.c
                        shape_warmup_steps): counted as iterations, not timed */
  uint64_t shape_new_step_ns; /* their mean length */
  size_t trailing;    /* 1: the loop's last iteration follows the last step, counted, not timed */
  size_t paused;      /* iterations with a pause in them (steps.h), counted, not timed */
  size_t cycle;       /* every cycle-th iteration runs periodic work (steps.h); 0: none */
  size_t uncycled;    /* iterations outside the timed whole cycles (steps.h), counted */
  const char *source; /* "nvtx", "pattern" or "none" */
  char detail[224];   /* how: marker name, or ops per step and the first op */
  uint64_t step_ns;   /* mean measured step time */
  uint64_t per_step_ns[CLS_COUNT];        /* the partition: each stretch of a step in one class */
  uint64_t per_step_shared_ns[CLS_COUNT]; /* per step, time counted in another class that is this
                                             class's work too (chained causes, cls_gaps.c: the
                                             host work after a sync that prepared the next batch,
                                             serialization's in the partition, is the loader's
                                             as well): this class's fix alone takes
                                             per_step_ns + per_step_shared_ns off a step */
  uint64_t launch_corrected_per_step_ns;  /* launch overhead per step without the tracer's cost */
  uint64_t launch_floor_per_step_ns;      /* its floor: the launch gaps' time outside CUDA calls */
  uint64_t roundtrip_per_step_ns;         /* of serialization, the host's work on what a sync read
                                             before its next submission (cls_gaps.c, "the round
                                             trip"): its fix does that work on the GPU or off the
                                             critical path, not fewer reads (report_fix) */
  double loader_busy;       /* the share of their samples in which the process's loader threads
                               were building batches, where it bounds the loop (classify.c
                               loader_bound: LOADER_BUSY_MIN or more); 0: not */
  int producer_traced;      /* with producer_wait: another thread of the process submitted GPU
                               work during those waits (a CUDA prefetcher's thread), which the
                               tracer slows too: the step without the tracer is not raised */
  double producer_wait;     /* the share of the steps a launching thread waited off the CPU
                               for another thread or process to hand it work (cls_gaps.c
                               producer_wait), where it bounds the loop (PRODUCER_WAIT_MIN or
                               more in each half of the steps); 0: not */
  uint64_t loader_bound_ns; /* the step without the tracer at that share: no fix but the
                               loader's goes below it; 0: none */
  uint64_t starved_untraced_per_step_ns; /* data starvation without the tracer, where the loop
                                           runs at its producer's pace (producer_wait, not
                                           producer_traced): that pace less the step without
                                           the waits (its what-if), at least the traced figure;
                                           0: not such a loop (classify.c gpu_whatif) */
  uint64_t loader_wait_per_step_ns;      /* of data starvation, the launching thread's waits
                                            off the CPU while its process's loader threads ran
                                            (cls_gaps.c loader_wait: the GIL of a loader in
                                            threads) */
  uint64_t lost_lead_per_step_ns;        /* of serialization, the launch and host gaps after a
                                            sync that its wait's lead would have covered
                                            (cls_gaps.c, "lost lead") */
  uint64_t copy_host_per_step_ns;        /* of the copy class, the time a copy between host and
                                            device ran (not device-to-device copies or memsets,
                                            which no pinning or overlap of a transfer removes) */
  uint64_t other_host_per_step_ns;       /* of `other`, the launching thread's work outside CUDA
                                            (reason host_outside_cuda): a verdict of its own
                                            where it is most of the step (report_verdict) */
  uint64_t stacks_per_step_ns;           /* of `other`, the launching threads capturing Python
                                            stacks between launches (reason stack_capture,
                                            cls_gaps.c capture_split) */
  uint64_t copy_pageable_per_step_ns;    /* of those, the copies whose host memory is pageable
                                            (the rest pinned: only a side stream overlaps them;
                                            report_fix) */
  size_t copy_stall_copies;    /* the distinct host-to-device copies copy stall's calls waited for
                                  in the steps (classify.c staged_copies) */
  uint64_t copy_stall_copy_ns; /* their mean GPU time: a few us, copies of a few bytes (a Python
                                  value made a CUDA tensor in the step), not a batch's */
  uint64_t launch_tail_per_step_ns; /* with an untraced tail (tail.h): the replay at the
                                       host's untraced pace less the same without the launch
                                       gaps; 0 without a tail */
  uint64_t launch_tail_step_ns;     /* the step that point is of: the replay without the tracer */
  int launch_tail_ok;               /* the point was computed (a tail that timed the host slower) */
  int launch_tail_assumed;          /* ... at the assumed pace (no tail: tracer.pace_assumed) */
  uint64_t launch_assumed_lo_per_step_ns,
      launch_assumed_hi_per_step_ns;    /* the same point at
  the tails' 5th and 95th percentiles (TAIL_ASSUMED_P95, P05: a host slowed more
  keeps less launch overhead); 0 when not assumed or given */
  uint64_t tracer_per_step_ns;          /* the tracer's cost in idle gaps, per step */
  uint64_t first_ns, last_ns;           /* span of the steps */
  uint64_t span_first_ns, span_last_ns; /* of the counted iterations after the warm-up: the
                                           steps' span, and with cycles the uncycled ones' too
                                           (report_window.c stitches windows' edges by it) */
  struct {
    const char *rule; /* "pattern", "sync", "kernel", "nvtx" */
    size_t count;
    uint64_t step_ns;
    char what[80]; /* the anchor: first operation, kernel name, marker */
  } cand[6];       /* the step candidates considered; the chosen one is `source` */
  size_t ncand;
  size_t marks[2]; /* per-iteration marks in the GPU's work (cls_steps.c mark_anchors): the
                      optimizer steps' ends and the batches' first copies; 0 where the steps
                      came from NVTX ranges or a kernel given. A long trace's windows too short
                      for the loop find steps inside its iterations, far more than these
                      (report_window.c reads it again in windows that hold them) */
};

#define CLS_TAIL_THREADS 8

struct cls_tracer {
  uint64_t calls;           /* hooked calls on the threads that launched work on this GPU */
  uint64_t hook_ns;         /* measured: host call span minus the CUPTI API span inside it */
  uint64_t cupti_calls;     /* calls that submit GPU work, under CUPTI */
  uint64_t cupti_ns;        /* cupti_calls x the cost per call of their process */
  const char *cupti_source; /* of the cost per call: "measured" (every process with calls here
                               has a PROBE record), "given" (--cupti-call-ns), "assumed" (the
                               default), "mixed" (some processes measured, some assumed) */
  uint64_t probe_on_ns, probe_off_ns, probe_launches; /* the PROBE record (first process's) */
  int probe_detached; /* its off state was CUPTI detached (else: records disabled) */
  uint64_t probe_hooked_ns, probe_api_off_ns; /* the same PROBE record's launch call through
                                                 slack's hook and with CUPTI's API records off
                                                 (format 2.6; 0: not measured) */
  uint64_t hook_launch_ns; /* measured: slack's hooks per launch (probe hooked - on; 0: not
                              measured, or none seen) */
  uint64_t api_launch_ns;  /* measured: CUPTI's API records per launch (probe on - api_off) */
  uint64_t records_ns;     /* measured: CUPTI overhead records (buffers, instrumentation) */
  uint64_t loading_ns;     /* driver module/function loading records (not the tracer's cost) */
  uint64_t total_ns;       /* hook_ns + cupti_ns + records_ns */
  uint64_t in_idle_ns;     /* the part of it that sat in this GPU's idle gaps */
  /* the untraced tail (SLACK_TAIL_MS, tail.h) of the first process on this GPU that has one */
  uint64_t tail_calls, tail_ns; /* its calls, its span */
  int tail_taken; /* the "tail" began where the GPU records end (TAKEN): another CUPTI client
                     took them (SLK_TAKEN_CALLBACKS) or slack's own CUPTI call did not return
                     (SLK_TAKEN_STUCK); its calls are out of the window, with no pace to compare */
  uint64_t tail_traced_ns, tail_untraced_ns; /* median time between calls, traced and not */
  uint64_t tail_ntraced, tail_nuntraced;     /* of so many intervals */
  double tail_factor;                        /* their ratio (1: not known, or not slower) */
  uint64_t tail_long_traced_ns, tail_long_untraced_ns; /* long stretches outside CUDA (tail.h) */
  uint64_t tail_nlong_traced, tail_nlong_untraced;
  double tail_factor_long;
  /* the threads with their own pace on both sides (tail.h: the replay runs each thread at its
   * own), the CLS_TAIL_THREADS with the most traced intervals, by that count */
  struct tail_thread tail_threads[CLS_TAIL_THREADS];
  size_t tail_nthreads;
  /* the loop's iterations in the tail (cls_pace.c): the median time between one call the steps
   * make once (function iter_fn and a call site), traced and in the tail, over iterations that
   * hold the steps' calls (iter_calls of the thread's, within 10%); 0: none matched */
  uint64_t iter_traced_ns, iter_untraced_ns, iter_ntraced, iter_nuntraced, iter_calls;
  uint64_t iter_untraced_lo_ns, iter_untraced_hi_ns; /* the tail's quartiles */
  uint32_t iter_fn;
  uint64_t iter_replayed_ns; /* the same iterations' median in the replay without the tracer, at
                                the threads' tail factors (before the fit) */
  uint64_t iter_reach_ns;    /* gain_fit -1: the nearest the replay came (at CLS_PACE_GAIN_MAX) */
  double gain;      /* the replay's host pace beyond the threads' tail factors, fitted to it */
  int gain_fit;     /* 0 none; 1 not needed (within the tail's quartiles); 2 fitted; -1 out of
                       reach (gain 1); -2 the tail's slower (gain 1) */
  uint64_t lead_ns; /* serialization that the tracer's slowing of the host ahead of the GPU
                       hid: the host would have waited that much longer untraced */
  /* no tail timed the first process on this GPU untraced: the slowdown assumed for its calls
   * (tail.h TAIL_ASSUMED_FACTOR or --host-slowdown; 0: none assumed), its traced median time
   * between calls and of how many intervals, and whether the user gave it */
  double pace_assumed;
  uint64_t pace_traced_ns, pace_ntraced;
  int pace_given;
  int tail_ignored; /* the trace had a tail, ignored (--no-tail) */
  int tail_mid;     /* the untraced calls are SLACK_PACE_PROBE's stretch, mid-run */
};

struct cls_gpu {
  const char *host; /* points into the inputs' header strings */
  uint32_t device;
  const char *name; /* from a DEVICE record, or NULL */
  size_t processes; /* inputs with work on this GPU */
  uint64_t window_ns, busy_ns, idle_ns;
  uint64_t kernels, memcpys, memsets, kernel_ns;
  uint64_t time_ns[CLS_COUNT];
  uint64_t other_ns[CLS_WHY_COUNT];
  uint64_t launch_corrected_ns; /* launch overhead without the tracer's cost (an upper bound:
                                   the tracer's cost per launch is measured only inside the
                                   launch call, docs/CLASSIFICATION.md) */
  uint64_t launch_floor_ns;     /* its lower bound: the time outside CUDA calls in launch gaps,
                                   what stays if every call cost nothing untraced */
  uint64_t lost_lead_ns;        /* serialization in the gaps after a sync's own (its lead) */
  uint64_t gaps;                /* idle gaps */
  uint64_t kernels_joined, kernels_shorter_than_launch;
  /* launch calls with a kernel of their own, and those that returned only after their kernel
   * ended: every one where the driver runs launches synchronously (CUDA_LAUNCH_BLOCKING=1);
   * launch_blocking 1 where the process that launched on this GPU ran so (each such launch a
   * wait: serialization) */
  uint64_t launches_joined, launches_waited;
  int launch_blocking;
  unsigned env;                      /* the CLS_ENV_* bits of the inputs that ran on this GPU */
  struct cls_site *sites[CLS_COUNT]; /* every site, by steps_ns then ns, descending */
  size_t nsites[CLS_COUNT];
  struct cls_steps steps;
  struct cls_whatif whatif[CLS_COUNT];
  struct cls_whatif whatif_copy_both; /* copy and copy_stall removed together */
  struct cls_whatif whatif_all;       /* every stall fixed at once: serialization, copy and copy
                                         stall, data starvation, launch overhead */
  struct cls_whatif whatif_host;      /* every stall but launch overhead: the fixes of the data
                                         path and the syncs, the launches kept (no graph capture) */
  int replay_ok;                      /* 1 when the replay ran */
  uint64_t replay_step_ns;            /* unedited replay's mean step (must equal step_ns) */
  double replay_error;                /* (replay_step_ns - step_ns) / step_ns */
  uint64_t corrected_step_ns;         /* replay without the tracer's cost: the untraced step */
  struct cls_tracer tracer;
  struct cls_segment *seg; /* the window, tiled */
  size_t nseg;
};

struct cls_result {
  uint64_t t0, t1; /* the window */
  struct cls_gpu *gpus;
  size_t ngpus;
};

/* Classifies every GPU of the inputs. 0, or -1 when out of memory (res then holds nothing). */
int cls_run(const struct cls_input *in, size_t nin, const struct cls_options *opt,
            struct cls_result *res);
void cls_result_free(struct cls_result *res);

/* "compute", "copy_stall"...: the JSON keys. */
const char *cls_name(int c);
/* The fix that usually removes the class (one sentence). */
const char *cls_fix(int c);
/* "window_edge", "queued"...: the JSON keys of other_ns; and a phrase for the text report. */
const char *cls_reason_name(int why);
const char *cls_reason_text(int why);
/* 1 when a kernel of this name is a collective (communication). */
int cls_is_comm_kernel(const char *name);

/* cls_is_comm_kernel by string id, remembered: a trace's kernels use a few names, and each look-up
 * of the name and comparison costs more than this. Zeroed before use (one per string table). */
struct cls_comm_memo {
  uint32_t id[64];
  uint8_t state[64]; /* 0: empty; 1: not a collective; 2: a collective */
};
static inline int cls_comm_memo_get(const struct cls_comm_memo *m, uint32_t id, int *comm) {
  if (!m->state[id & 63] || m->id[id & 63] != id) return 0;
  *comm = m->state[id & 63] == 2;
  return 1;
}
static inline int cls_comm_memo_put(struct cls_comm_memo *m, uint32_t id, int comm) {
  m->id[id & 63] = id;
  m->state[id & 63] = comm ? 2 : 1;
  return comm;
}

#endif

/* The classifier's stages (classify.c runs them; docs/CLASSIFICATION.md specifies the rules):
 *
 *   cls_world.c   the world: host calls by thread and category, GPU operations joined to the calls
 *                 that submitted them, streams, waits, hand-overs between threads
 *   cls_steps.c   steps per GPU: NVTX ranges, the repeating pattern, synchronizing calls, the
 *                 user's --steps / --step-kernel
 *   cls_gaps.c    one GPU's sweep: busy stretches and idle gaps, each gap classified from the
 *                 launching thread's evidence
 *   cls_sites.c   call sites per class
 *   cls_replay.c  the recorded run as a dependency graph, replayed with edits (the what-if)
 *   classify.c    per GPU: the stages in order, sums, per-step figures, what-ifs; cls_run
 *
 * Internal to the classifier: nothing outside these files includes this header. */
#ifndef SLACK_CLS_INTERNAL_H
#define SLACK_CLS_INTERNAL_H

#include <stdint.h>
#include <stdlib.h>

#include "classify.h"
#include "join.h"
#include "steps.h"
#include "tail.h"
#include "u64map.h"

#define NONE ((size_t)-1)
#define TOL_NS 2000             /* clock tolerance between host and CUPTI stamps */
#define BLOCK_SKEW_NS 20000     /* a blocking call's return against the GPU work it waited for */
#define HANDOFF_NS 1000000      /* a thread resuming this soon after another went quiet */
#define HANDOFF_MAX_NS 10000000 /* ... or up to this soon after a long quiet (cls_world.c) */
#define OWN_CPU_MIN_NS 1000000  /* a hand-over's own work checked against its CPU time above */
#define WAIT_SLACK_NS 5000      /* an operation this much later than explained waited */
#define EVENT_WINDOW_NS 50000   /* ... for an operation on another stream ending this close */
#define STAGING_BASE_NS 10000   /* a pinned asynchronous copy call, when none was seen */
#define DEFAULT_BASE_NS 5000    /* a synchronizing call that did not wait, when none was seen */
#define DEFAULT_LAT_START 8000  /* call start -> its operation's start, when none was seen */
#define DEFAULT_LAT_END 2000    /* call end -> its operation's start */
#define DEFAULT_STREAM_GAP 1000 /* back-to-back operations on one stream */
/* Between kernels of one CUDA graph, in the replay of launches "as by a graph". Graphs differ:
 * traced node gaps in GPU runs 58, 80 and 137's graph forms have a median of 416 ns, and their
 * untraced steps put 290-420 ns a node; the graph forms of holdout_rnn and compute_pairs, against
 * their eager forms' busy time, 180-310 ns. 400 was tried on every holdout trace (session 46):
 * as many what-ifs within 15%, amp's and augment's nearer, rnn's and compute_pairs' further; no
 * eager trace tells which a loop's graph would get (its queued kernels 1.0-1.2 us apart in all). */
#define GRAPH_GAP_NS 100
#define LONG_GAP_STEPS 8 /* host phases longer than this many steps are `other` */
#define HOOK_NS                                                                                    \
  50 /* a hook's cost where the trace cannot show it (format 1.1                                   \
        keeps no API record to measure against; make bench-cpu                                     \
        measures 15-50 ns) */

/* CUPTI overhead kinds (CUpti_ActivityOverheadKind) */
#define OVH_COMPILER 1u
#define OVH_BUFFER_FLUSH (1u << 16)
#define OVH_INSTRUMENTATION (2u << 16)
#define OVH_RESOURCE (3u << 16)
#define OVH_MODULE_LOADING (4u << 16)
#define OVH_LAZY_LOADING (5u << 16)
#define OVH_BUFFER_REQUEST (7u << 16)

/* CUPTI memcpy and memory kinds */
#define CPY_HTOD 1
#define CPY_DTOH 2
#define MEM_PAGEABLE 1
#define MEM_PINNED 2

enum { CAT_CALL = 0, CAT_SYNC, CAT_STAGING };
enum { OPK_KERNEL = 0, OPK_COMM, OPK_COPY };
enum { EL_NONE = 0, EL_PIECE, EL_CALL, EL_OP };

/* ---- the world (cls_world.c) ---- */

/* Calls and operations carry their record's start and end (e: the end, or the start when the
 * end is earlier, as rend) beside the pointer: the stages read them for every neighbour they
 * look at, and the 128-byte record is a cache miss each time.
 *
 * A call is what the stages read of it by index (a predecessor, an awaited operation's call, a
 * hand-off, an operation's call): 64 bytes, one cache line (w->calls is aligned to 64). Links
 * are 32-bit (NIL: none; world_build refuses a window of 2^32 - 1 calls or operations, which the
 * replay graph's 32-bit node numbers refuse anyway). What is read only in order or for a few
 * calls (formatting a site, the categories' pass) is in w->callx, the same index. */
#define NIL UINT32_MAX
static inline size_t nix(uint32_t v) { return v == NIL ? NONE : v; } /* a link as an index */

struct call {
  uint64_t s, e;
  uint64_t cost_ns; /* the tracer's cost estimate for this call (until call_category: its
                       measured hook cost, world_ops) */
  uint64_t base_ns; /* blocking calls: duration without the wait */
  uint32_t in;
  uint32_t thread;
  uint32_t prev, next; /* on its thread */
  uint32_t own_op;     /* the last-ending operation it submitted */
  uint32_t awaited;    /* blocking calls: the operation whose end released it */
  uint32_t handoff;    /* a call of another thread this call's start waited for */
  uint8_t cat : 2;     /* CAT_* */
  uint8_t h2d : 1;     /* a host-to-device copy */
  uint8_t submits : 1; /* launches, copies, memsets */
  uint8_t sync : 2;    /* SYNC_BY_FN: slk_fn_is_sync of its function; SYNC_BY_FLAG: the record's
                          SLK_HOST_SYNCHRONOUS */
  uint8_t polled : 1;  /* a query that ended a run of them with "done" (SLK_HOST_POLLED) */
  uint8_t fcat;        /* the record's function's slk_fn_cat */
  uint16_t fn;         /* the record's function, FN_OTHER when not below SLK_FN_COUNT */
};
_Static_assert(sizeof(struct call) == 64, "a call is one cache line");

struct callx {
  /* its record: a cls_host_rec where the inputs give them (world.hcall), else a slk_record; its
   * tid, pystack and call site read there (a few calls: call_rec, call_tid) */
  const void *r;
  uint64_t own_ns; /* with a handoff: the thread's own work before it */
};

/* Call c's site as gpu_sites keys it (input, function, call site; r its record) */
static inline uint64_t site_key_of(const struct call *c, const struct cls_host_rec *r) {
  return (uint64_t)(c->in & 0xffff) << 40 | (uint64_t)(r->fn & 0xff) << 32 | r->callsite;
}

enum { SYNC_BY_FN = 1, SYNC_BY_FLAG = 2, FN_OTHER = 0xffff };
enum {
  OPF_SRC_PAGEABLE = 1,
  OPF_DST_PAGEABLE = 2,
  OPF_GRAPH = 4,
  OPF_SRC_PINNED = 8,
  OPF_HOST_XFER = 16 /* a copy between host and device memory (not device to device) */
};                   /* op.flags */
_Static_assert((int)SLK_FN_COUNT < (int)FN_OTHER, "a call's function fits 16 bits");

/* 64 bytes, one cache line (w->ops is aligned to 64); links are 32-bit, NIL for none, as a
 * call's */
struct op {
  const void *r;   /* its record (struct slk_record or cls_gpu_rec): only its address is read, the
                      last tiebreak of cmp_op */
  uint64_t s, e;   /* as a call's */
  uint64_t stream; /* the record's (the streams' pass compares it for neighbours) */
  uint32_t in, gpu;
  uint32_t call;
  uint32_t prev_stream, ev_dep;
  uint32_t sym;
  uint8_t kind; /* OPK_* */
  uint8_t h2d;
  uint8_t rkind; /* the record's kind (SLK_KERNEL, SLK_MEMCPY, SLK_MEMSET) */
  uint8_t flags; /* OPF_*: what the stages read of the record, kept here (no cache miss) */
};
_Static_assert(sizeof(struct op) == 64, "an operation is one cache line");

struct thread {
  uint32_t in;
  uint64_t tid;
  size_t *calls; /* global call indices by start */
  size_t n;
  uint64_t hook_ns;   /* its calls' hook costs, summed */
  size_t submits;     /* its calls that submit GPU work */
  double tail_factor; /* its calls' slowdown by the untraced tail (tail_factor_of), at least 1 */
  uint64_t tail_added_ns; /* what the tracer added to its median time between calls */
  /* data-loading NVTX ranges of this thread */
  uint64_t *load_s, *load_e;
  size_t nload;
  /* CUPTI overhead records of this thread: the tracer's (t_*) and module loading (l_*); l_c, a
   * loading record's start or, where a call of the thread holds it, that call's (the load's
   * wait: world_loading) */
  uint64_t *t_s, *t_e, *l_s, *l_e, *l_c;
  size_t nt, nl;
  /* its samples (format 2.7): 0 none, 1 all without Python frames (autograd's device thread), 2
   * some with Python frames (cls_world.c thread_python) */
  uint8_t python;
};

struct gpu_ix {
  const char *host;
  uint32_t device;
  size_t lo, hi; /* its operations: ops[lo..hi) */
  /* its kernels joined to a call, and those shorter than their call (world_streams, where each
   * operation's call is read) */
  size_t kernels_joined, kernels_shorter;
  /* its kernels' launch calls, and those that returned after their kernel ended (world_waits:
   * every one, where the driver runs launches synchronously) */
  size_t launches_joined, launches_waited;
  /* its kernels, their time, its copies and memsets (world_streams' first pass) */
  size_t kernels, memcpys, memsets;
  uint64_t kernel_ns;
};

struct world {
  const struct cls_input *in;
  size_t nin;
  int hcall; /* 1: the inputs' host calls are their cls_host_rec (cls_input.hcall), 0: td's */
  struct cls_options opt;
  size_t *call_base;
  struct call *calls;    /* aligned to 64 (in calls_mem: line_alloc) */
  struct callx *callx;   /* the calls' cold fields */
  uint64_t *site_key0;   /* per call: gpu_sites' key of its site for a stretch of why 0 (site_key
                            mixed with pystack; a dense array: the sites read it by index) */
  uint64_t *call_stream; /* per call: its record's stream (the order join's votes read it by
                            index) */
  size_t ncalls;
  struct thread *threads;
  size_t nthreads;
  size_t *thread_store;
  struct join_span *host_spans; /* world_calls to world_ops, where threads_by_counting made them:
                                   the join's host spans (join.h), each input's at call_base, in
                                   thread_store's order; NULL else */
  uint8_t *gpu_thread; /* [gpu * nthreads + thread]: 1 where the thread launched work on the GPU
                          (world_streams) */
  int calls_by_start;  /* each input's calls came in start order (world_calls) */
  uint8_t *gpu_input;  /* [gpu * nin + input]: 1 where the input has work on the GPU */
  uint64_t *gpu_queue; /* [gpu * nin + input]: the longest an operation of the GPU waited from
                          its call's end (of the input) to its start (world_streams, where each
                          operation's call is read: gpu_run's queue_ns without a pass) */
  struct op *ops;      /* aligned to 64 (in ops_mem) */
  size_t nops;
  uint64_t *op_call_s; /* per operation: its call's start, UINT64_MAX without one (world_streams,
                          where each operation's call is read: the steps read it densely) */
  void *calls_mem, *ops_mem;
  struct gpu_ix *g;
  size_t ng;
  uint64_t t0, t1;
  uint64_t span_s, span_e; /* the least start and the greatest end of the calls and operations, */
  int span_any;            /* as they are made (span_any: any made) */
  uint64_t lat_start, lat_end, stream_gap;
  uint64_t *cupti_ns;     /* per input: CUPTI's cost per call that submits work (input_cupti) */
  uint64_t *hook_ns;      /* per input: a hook's cost where no API record shows it (the exit
                             probe's hooked - on, else HOOK_NS) */
  struct tail_info *tail; /* per input: its untraced tail (tail.h), kept out of the window */
  uint8_t *host_corr;     /* per input: 1 when a call's record carries a correlation id (1.1) */
  uint8_t *host_marked;   /* per input: 1 when a call's record has SLK_HOST_CUPTI_ON */
  /* per input: 1 when its launches returned after their kernels ended, nearly all of them
   * (launch_blocking): the driver runs every launch synchronously (CUDA_LAUNCH_BLOCKING=1), and
   * each such launch is a wait for the GPU (CAT_SYNC) */
  uint8_t *launch_blocking;
  /* the device frees (cudaFree, cuMemFree) and allocations (cudaMalloc, cuMemAlloc), call indices
   * by input and start (world_waits): a caching allocator calls them at start-up and, in the
   * loop, only after memory was given back (realloc_free) */
  uint32_t *frees, *allocs;
  size_t nfrees, nallocs;
  /* the median duration of the cudaMallocAsync calls (0: none): a stream-ordered pool serves
   * every tensor's allocation, and only those well over it mapped memory again (world_waits) */
  uint64_t async_alloc_med_ns;
  /* call index -> the time from its start to the end of the module loading it held (CUDA's lazy
   * loading: the load waits for the device first), world_loading; one-time work */
  struct u64map loading;
};

/* Input i's untraced tail as its pace is read (the tracer's slowdown of its threads): its own, or
 * the trace's that the caller timed over more of its calls (cls_options.tail: a long trace's
 * windows, report_window.c; the window that holds the tail takes it too, so that every window
 * runs at one pace). The tail's calls stay out of the window by its own (w->tail). */
static inline const struct tail_info *world_tail_pace(const struct world *w, size_t i) {
  return w->nin == 1 && w->opt.tail ? w->opt.tail : &w->tail[i];
}

/* ---- one GPU's sweep (cls_gaps.c) ---- */

struct seg {
  uint64_t a, b;
  uint8_t cls, why, el;
  uint8_t copy_path; /* EL_PIECE charged to a copy stall as the pageable copy's own return path
                        (one batch's two copies, cls_gaps.c): the copy's fix takes it out too */
  size_t x;          /* EL_PIECE: the call after the piece; EL_CALL: the call; EL_OP: the op */
  size_t site;       /* the call that names the site, NONE */
  uint64_t tracer;   /* the tracer's cost credited to this stretch */
  uint8_t shared;    /* 1 + the class this stretch is also the work of, 0: none (chained causes:
                        the host work after a sync that prepared the next batch is serialization,
                        and the loader's too: fixing either takes it off the step) */
  uint8_t lead;      /* serialization for the lead a sync took from its host (cls_gaps.c) */
  uint8_t roundtrip; /* EL_PIECE of serialization: the host's work on what the sync read
                        (cls_gaps.c): the usual fix, the work on the GPU or off the critical
                        path, takes it out too. RT_TO_GPU: its result went back to the GPU (a
                        copy to the device ended it); RT_ON_HOST: it stayed on the host (records
                        written, a metric logged, a file saved), where the fix that keeps the
                        work on the host (one step behind, a background thread) still pays it
                        on the host (classify.c, the host's bound) */
  uint8_t gil;       /* EL_PIECE of data starvation: the launching thread off the CPU while its
                        process's loader threads ran (cls_gaps.c loader_wait: the GIL) */
};

/* A window's Python samples of one input by thread (cls_gaps.c samp_build): ix, the samples'
 * indices in (tid, start) order; loading[i], sample i's stack runs in a data-loading library
 * (pyframes_loading); runs, the first place in ix of each thread's samples, and nruns. */
struct samp_ix {
  int built;
  size_t n, nruns;
  uint32_t *ix, *runs;
  uint8_t *loading;
  uint8_t *waits;   /* per sample: its innermost frame a hand-over primitive's (pyframes_waits) */
  uint8_t *capture; /* per sample: capturing a Python stack (pyframes_capture) */
};

struct part {
  uint64_t a, b;
  uint8_t kind; /* P_* */
  size_t x;
};
enum { P_OUT = 0, P_CALL, P_LAUNCH };

struct gstate {
  struct world *w;
  size_t gi;
  struct seg *s;
  size_t n, cap;
  struct part *p;
  size_t np, pcap;
  struct seg *tmp;
  size_t ntmp, tcap;
  uint64_t long_gap;
  uint64_t hb_ge;      /* the end of the last gap in which the GPU waited for a host thread */
  uint64_t lead_ns;    /* serialization added for the tracer's slowing of the host's lead */
  size_t busy_op;      /* the last busy stretch's operation (sweep), plus one; 0: none yet */
  uint64_t kernel_end; /* the end of the last stretch with a kernel running (sweep) */
  uint64_t steps_lo;   /* the first step's start (0: no steps): frees from here on are the loop's */
  /* the lead a sync took from its process's host (cls_gaps.c, "lost lead"): what of the sync's
   * wait the gap after it did not use up, charged to the next gaps of that process until it is
   * used up or the host blocks again */
  uint64_t carry_ns;
  uint32_t carry_in;     /* the sync's input */
  size_t carry_site;     /* the sync (NONE: no carry) */
  uint8_t carry_cls;     /* whose the lead is: CLS_SERIALIZATION (a sync's), CLS_COPY_STALL (a
                            blocking copy's: a staging call, or a sync that waited for a copy) */
  uint64_t carry_cap;    /* the deepest the lead may stay: its input's queue_ns, plus the copy's
                            own time where the GPU ran the blocking copy alone (cls_gaps.c) */
  uint64_t lost_lead_ns; /* serialization charged so (cls_gpu.lost_lead_ns) */
  uint64_t *queue_ns;    /* per input: the farthest its host got ahead of this GPU (the greatest
                            time from a launch call's end to its operation's start) */
  size_t lead_op;        /* the operations from here to a gap's show how far ahead the host got */
  const int64_t *rt;     /* the replay without the tracer's times (graph.t), NULL: none */
  size_t rop;            /* the operations before this one folded into rend */
  int64_t rend;          /* their latest end in that replay */
  struct u64map *own;    /* per sync site (input << 32 | Python stack id): 1 + whether the host
                            work after its syncs runs in the syncing function (cls_gaps.c) */
  struct samp_ix *samp;  /* per input, built at first use (loader_wait); NULL: none yet */
  size_t ngil;           /* stretches with seg.gil */
  /* per thread (w->threads): the samples of its Python stack in its launch gaps' host work, and
   * those capturing a stack (pyframes_capture); NULL: none counted yet (cls_gaps.c) */
  uint32_t *cap_n, *cap_k;
};

/* ---- the replay (cls_replay.c) ---- */

enum {
  EK_WORK = 0, /* previous call's end -> call start: the thread's work outside CUDA */
  EK_OWN,      /* the same, when the start also waited for another thread (own part only) */
  EK_HANDOFF,  /* another thread's call end -> call start */
  EK_DUR,      /* call start -> end */
  EK_BASE,     /* call start -> end of a blocking call, without its wait */
  EK_WAKE,     /* end of the awaited operation -> end of the blocking call */
  EK_LAUNCH,   /* call start -> operation start */
  EK_STREAM,   /* previous operation's end on the stream -> operation start */
  EK_EVENT,    /* another stream's operation end -> operation start */
  EK_OPDUR     /* operation start -> end */
};

/* 32 bytes: node and element numbers fit 32 bits (graph_build refuses a graph that does not) */
struct edge {
  uint32_t from, to, el;
  uint8_t kind;
  int64_t w, wmin;
};

struct graph {
  size_t nn, ne;
  struct edge *e;  /* sorted by to */
  uint32_t *in_lo; /* in-edges of node v: e[in_lo[v]..in_lo[v+1]) */
  uint32_t *order; /* topological */
  int64_t *obs, *t;
  int64_t *pace; /* per thread that submits no GPU work (a DataLoader's pin-memory thread): the
                    first quartile of its times between calls, its pace when its input was ready;
                    0: none (graph_build; edits PIECE_PACE) */
  /* such a thread's first call, when nothing else holds it (no hand-off): the call of its
   * process's GPU-submitting threads that ended last before it, which started the loader (a
   * DataLoader's iterator, made at an epoch's start, starts its pin-memory thread): an edge
   * from it of the traced time between them (EK_HANDOFF; edits PIECE_FIRST) */
  struct u64map first_from;
  int ok;
  double gain; /* the host's pace in the replay without the tracer, beyond its threads' tail
                  factors (cls_pace.c pace_fit; 1: none) */
};

/* piece_cut[i]: PIECE_CUT, the host's work before call i is taken out; PIECE_PACE, call i's
 * thread submits no GPU work (a loader's) and waits less before it: by fed[i], down to its
 * pace (graph.pace) at most (data starvation's what-if); PIECE_FIRST, the same for such a
 * thread's first call, its wait counted from the call that started it (graph.first_from) or,
 * without one, from the steps' start (first_lo) */
#define PIECE_CUT 1
#define PIECE_PACE 2
#define PIECE_FIRST 4
#define PIECE_LESS 8                    /* call i's host work before it is shorter by less[i] */
enum { RT_TO_GPU = 1, RT_ON_HOST = 2 }; /* seg.roundtrip */

struct edits {
  uint8_t *piece_cut, *call_cut, *nowait; /* per call */
  /* the host's bound (classify.c host_bound): the RT_ON_HOST pieces of the sites in keep_site
   * stay, and their threads get 1 in host_thread */
  int keep_on_host;
  struct u64map keep_site; /* site_key -> 1 */
  uint8_t *host_thread;    /* per thread, with keep_on_host */
  struct u64map fed;       /* call -> ns (PIECE_PACE, PIECE_FIRST) */
  struct u64map less;      /* call -> ns (PIECE_LESS) */
  uint64_t first_lo;       /* PIECE_FIRST without graph.first_from: the steps' start, its wait's */
  const struct u64map *first_from;      /* the graph's (graph.first_from) */
  uint8_t *op_zero, *op_min, *op_graph; /* per op */
  int corrected;
  /* with corrected: the module loads (world_loading) of the calls that start in [loads_lo,
   * loads_hi) taken off, one-time work the steady state does not pay (the what-ifs set the
   * steps' span; 0, 0: every load as recorded, as the lost lead's sweep reads them) */
  uint64_t loads_lo, loads_hi;

  size_t marked; /* flags set since the arrays were last cleared (0: all clear) */
};

/* (size_t: the links are 32-bit, their doubles may not be) */
#define CS(i) (2 * (size_t)(i))
#define CE(i) (2 * (size_t)(i) + 1)
#define OS(j) (2 * w->ncalls + 2 * (size_t)(j))
#define OE(j) (2 * w->ncalls + 2 * (size_t)(j) + 1)

/* Times in the graph are signed (edge weights may be negative). A damaged trace's timestamps at
 * or past 2^63 would overflow them: times are clamped into int64_t and sums saturate instead. */

/* ---- small helpers ---- */

/* n bytes aligned to a cache line, in *mem (what free takes). Not aligned_alloc: glibc gives
 * the space before the aligned block back to the heap, and the windows' heap fragmented (8 MB
 * more at the peak of the 1 M-record bench trace). */
static inline void *line_alloc(size_t n, void **mem) {
  *mem = malloc(n + 63);
  return *mem ? (void *)(((uintptr_t)*mem + 63) & ~(uintptr_t)63) : NULL;
}

static inline uint64_t rdur(const struct slk_record *r) {
  return r->end > r->start ? r->end - r->start : 0;
}

static inline uint64_t mix64(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

static inline uint64_t rend(const struct slk_record *r) {
  return r->end > r->start ? r->end : r->start;
}

static inline int cmp_u64(const void *pa, const void *pb) {
  uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
  return a < b ? -1 : a > b;
}

static inline const char *in_str(const struct world *w, uint32_t in, uint32_t id) {
  const struct cls_input *x = &w->in[in];
  return x->str ? x->str(x->str_ctx, id) : "?";
}
/* cls_sites.c: the writer's samples of Python stacks (SLK_SAMPLE) of input `in` in [a, b):
 * *first, and how many (every thread's; they are sorted by start). */
size_t samples_in(const struct world *w, uint32_t in, uint64_t a, uint64_t b, size_t *first);
/* The time in [a, b) that thread tid of input in spent off the CPU while that process's threads
 * sampled in a data-loading library ran (cls_gaps.c); 0 without samples that carry CPU time. */
uint64_t loader_wait(struct gstate *st, uint32_t in, uint64_t tid, uint64_t a, uint64_t b);
/* The share of [a, b) that input in's loader threads (sampled in a data-loading library, no GPU
 * work of their own) were building batches, by their samples' frames; *n the samples; -1: none
 * such (cls_gaps.c). */
double loader_busy(struct gstate *st, uint32_t in, uint64_t a, uint64_t b, size_t *n);
/* The time in [a, b) that thread tid of input in waited, off the CPU, in a hand-over primitive
 * (pyframes_waits): for another thread or process to hand it work (cls_gaps.c); 0 without
 * samples that carry CPU time. */
uint64_t producer_wait(struct gstate *st, uint32_t in, uint64_t tid, uint64_t a, uint64_t b);
/* (cls_gaps.c) A loader thread's time off the CPU in [a, b) outside its hand-over waits. */
uint64_t loader_self_wait(struct gstate *st, uint32_t in, uint64_t tid, uint64_t a, uint64_t b);
void samp_free(struct gstate *st);

/* Call ci's record's fields (its input's cls_host_rec, or its HOST record) */
static inline struct cls_host_rec call_rec(const struct world *w, size_t ci) {
  const void *r = w->callx[ci].r;
  return w->hcall ? *(const struct cls_host_rec *)r : cls_host_rec_of((const struct slk_record *)r);
}

static inline uint64_t call_tid(const struct world *w, size_t ci) {
  const void *r = w->callx[ci].r;
  return w->hcall ? ((const struct cls_host_rec *)r)->tid : ((const struct slk_record *)r)->tid;
}

static inline uint64_t overlap(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  uint64_t s = a > c ? a : c, e = b < d ? b : d;
  return e > s ? e - s : 0;
}

static inline int64_t i64_of(uint64_t v) { return v > INT64_MAX ? INT64_MAX : (int64_t)v; }
/* a double as uint64_t, 0 and UINT64_MAX at its ends: a time near 2^64 rounds up to 2^64 as a
 * double, which no uint64_t holds (report_html.c's col_at, docs/RELIABILITY.md finding 13) */
static inline uint64_t u64_of(double x) {
  return x >= 18446744073709551615.0 ? UINT64_MAX : x > 0 ? (uint64_t)x : 0;
}

static inline int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

static inline int64_t sat_sub(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_sub_overflow(a, b, &r)) return r;
  return b < 0 ? INT64_MAX : INT64_MIN;
}

/* cls_world.c */
uint64_t input_cupti(const struct world *w, size_t i, const struct slk_record **probe);
/* From a PROBE record (format 2.6): slack's hooks per launch (the launch call through slack's
 * hook less the same on the real driver function, both with CUPTI on) and CUPTI's API records per
 * launch (on less API records off); 0 where not measured (or not more). */
uint64_t probe_hook_ns(const struct slk_record *probe);
uint64_t probe_api_ns(const struct slk_record *probe);
uint64_t median(uint64_t *v, size_t n, uint64_t dflt);
void world_free(struct world *w);
int name_has(const char *s, const char *const *words);
int world_build(struct world *w);

/* cls_steps.c */
int marker_steps(const struct world *w, size_t gi, struct step_set *ss, char *detail, size_t dlen);
int pattern_steps(const struct world *w, size_t gi, struct step_set *ss, char *detail, size_t dlen,
                  size_t marks[2]);
void cand_add(const struct world *w, size_t gi, struct cls_steps *sp, const char *rule,
              const struct step_set *ss, const char *what);
int kernel_steps(const struct world *w, size_t gi, uint32_t sym, const char *match,
                 struct step_set *ss);
int kernels_near(const struct world *w, size_t gi, uint64_t want, struct step_set *best,
                 uint64_t *dist, char *what, size_t wlen);
int steps_grouped(const struct world *w, size_t gi, const struct step_set *ss, uint64_t want,
                  struct step_set *out, size_t *k);

/* cls_gaps.c */
int sweep(struct gstate *st);
size_t realloc_free(const struct world *w, size_t ci, uint64_t lo);

/* Memory calls (cls_world.c's frees and allocs): 1 a device free or allocation (cudaFree,
 * cuMemFree, a stream-ordered pool's trim, the driver's unmapping and release of physical
 * memory; cudaMalloc, cuMemAlloc, cudaMallocAsync, the driver's creation, mapping and access of
 * physical memory: PyTorch's expandable segments), 2 a page-locked host one (cudaFreeHost,
 * cuMemFreeHost, cudaMallocHost, cudaHostAlloc, cuMemAllocHost, cuMemHostAlloc), 0 neither. */
static inline int mem_free_kind(uint32_t fn) {
  return fn == SLK_FN_FREE || fn == SLK_FN_CU_MEM_FREE || fn == SLK_FN_MEM_POOL_TRIM_TO ||
                 fn == SLK_FN_CU_MEM_UNMAP || fn == SLK_FN_CU_MEM_RELEASE
             ? 1
         : fn == SLK_FN_FREE_HOST || fn == SLK_FN_CU_MEM_FREE_HOST ? 2
                                                                   : 0;
}
static inline int mem_alloc_kind(uint32_t fn) {
  return fn == SLK_FN_MALLOC || fn == SLK_FN_CU_MEM_ALLOC || fn == SLK_FN_MALLOC_ASYNC ||
                 fn == SLK_FN_CU_MEM_CREATE || fn == SLK_FN_CU_MEM_MAP ||
                 fn == SLK_FN_CU_MEM_SET_ACCESS
             ? 1
         : fn == SLK_FN_MALLOC_HOST || fn == SLK_FN_HOST_ALLOC || fn == SLK_FN_CU_MEM_ALLOC_HOST ||
                 fn == SLK_FN_CU_MEM_HOST_ALLOC
             ? 2
             : 0;
}

/* Whether call c allocates memory from the device or the host (mem_alloc_kind), not a
 * stream-ordered pool's allocation served from its memory (a cudaMallocAsync no longer than
 * twice the trace's median one: world.async_alloc_med_ns) */
static inline int alloc_maps(const struct world *w, const struct call *c) {
  return mem_alloc_kind(c->fn) &&
         !(c->fn == SLK_FN_MALLOC_ASYNC && c->e - c->s <= 2 * w->async_alloc_med_ns);
}

/* cls_sites.c */
int gpu_sites(const struct world *w, const struct gstate *st, uint64_t w0, uint64_t w1,
              struct cls_gpu *out);

/* cls_pace.c: the loop's iterations in the untraced tail (into tr->iter_*), for the steps ss of
 * GPU gi; and the replay's host pace fitted to them (gr->gain, tr->gain; first/next/n as
 * replay_step's, ed cleared) */
struct pace {
  size_t *ia, *ib; /* the traced iterations matched, as the calls that start and end each */
  size_t n;
  uint64_t untraced_ns;  /* the tail's iterations' median: what the replay's are fitted to */
  uint64_t lo_ns, hi_ns; /* their quartiles: no fit where the replay's lie between */
};
int pace_iterations(const struct world *w, size_t gi, const struct step_set *ss,
                    struct cls_tracer *tr, struct pace *pc);
void pace_fit(const struct world *w, struct graph *gr, struct edits *ed, const struct pace *pc,
              struct cls_gpu *out);
void pace_free(struct pace *pc);

/* cls_replay.c */
void graph_free(struct graph *gr);
int graph_build(const struct world *w, struct graph *gr);
void replay(const struct world *w, struct graph *gr, const struct edits *ed);
uint64_t replay_step(const struct world *w, const struct graph *gr, const size_t *first,
                     const size_t *next, size_t n);

/* ---- the order join (cls_order.c) ---- */

enum { OQ_GRAPH = 1, OQ_NO_API = 2 }; /* oq[j] below: in a CUDA graph; join_host_of found none */

/* GPU work of one input that no API record joined (hs[j] == JOIN_NO_API, not in a graph), given
 * the host call that submitted it by each stream's order (the handles named by td's SLK_STREAM
 * records, else learned from the work that joined): ops[at[j]] the n operations of the input
 * (its kernels, copies and memsets in their arrays' order), hs[j] their join_host_of answers
 * (host call indices in H, the input's host calls (td's HOST records or their cls_host_rec), of
 * which the first nhost are the classified window's), rewritten where the order finds one of
 * those calls; marked: whether one of those nhost records has SLK_HOST_CUPTI_ON (the world's
 * host_marked, known without a pass over them); *joined counts the kernels so joined. Read from
 * dense arrays, not the records or operations by index: hstream[h] the stream of host record
 * h < nhost (the world's calls'), ostream[j] and oq[j] (OQ_*) operation j's stream and flags.
 * 0, or -1 when out of memory. */
int cls_order_join(const struct trace_data *td, const struct cls_hosts *H, size_t nhost, int marked,
                   const struct op *ops, const uint32_t *at, long long *hs, size_t n,
                   const uint64_t *hstream, const uint64_t *ostream, const uint8_t *oq,
                   size_t *joined);

#endif

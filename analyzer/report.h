/* The report model: what `slack report` computes from a set of traces, shared by its text, JSON
 * and HTML outputs (cmd_report.c, report_html.c), by `slack diff` (cmd_diff.c) and by the stall
 * track of `slack timeline`. One trace per process; they are classified together (classify.h),
 * the kernels summed by name per GPU and the host calls by function and thread. */
#ifndef SLACK_REPORT_H
#define SLACK_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "classify.h"
#include "join.h"
#include "slack.h"

struct kernel_sum {
  const char *name;
  uint64_t count, total_ns;
};

struct fn_sum {
  uint64_t calls, total_ns, blocked_ns;
};

struct thread_sum {
  size_t file;
  uint64_t tid;
  uint32_t name;
  uint64_t calls, busy_ns, blocked_ns;
};

struct rfile {
  const char *path;
  struct trace_reader *rd;
  struct trace_data td;
  struct launch_join lj;
  char label[32];
};

/* production windows (windows.h) */
struct report_window {
  uint64_t start, end; /* the window, clipped to the report's first and last event */
  uint32_t why;        /* SLK_WINDOW_* sources (several files: any of theirs) */
  int open;            /* still open when the trace ended (a killed process) */
};

struct report_windows {
  struct report_window *v; /* in time order, not overlapping (several files: their union) */
  size_t n;
  uint64_t *gpu_ns; /* [window][gpu][class]: the GPU's time of each class in the window */
};

struct report {
  struct rfile *f;
  size_t nf;
  struct cls_result cr;
  struct kernel_sum **top; /* per GPU: all kernel names by total time */
  size_t *ntop;
  uint32_t fn_order[SLK_FN_COUNT + 1];
  struct fn_sum fn[SLK_FN_COUNT + 1]; /* last: ids this slack does not know */
  struct thread_sum *threads;
  size_t nthreads;
  uint64_t host_calls, host_blocked_ns, dropped, truncated;
  struct launch_join lj;     /* summed over files (host_of unused) */
  struct report_windows win; /* production windows (windows.h); none: n 0 */
  size_t windows;            /* report_load_windowed: the analysis windows (0: the whole trace at
                                once) */
  uint64_t *comm_ns;         /* report_load_windowed: per GPU, the collectives' time (else NULL:
                                ranks_comm_kernel_ns computes it from the records) */
  int few_steps;             /* report_load_windowed: on some GPU with GPU work the windows found
                                fewer than 2 steps each (the steps counted at their edges aside) */
  uint64_t coarse_records;   /* report_load_windowed: windows of this many records would hold the
                                loop's iterations, where on some GPU the windows found more than
                                twice as many steps as the trace has per-iteration marks and held
                                fewer than 3 marks each; or the whole trace, where its pattern steps
                                were fewer than 12 iterations a window (0: none such) */
  size_t coarse_steps, coarse_marks; /* ... on that GPU: the steps found and the marks */
  int coarse_src;                    /* ... the marks' kind: 0 optimizer steps, 1 batch copies */
  int coarse_whole;                  /* ... coarse_records is the whole trace */
  int coarse_few; /* ... the windows held fewer than 12 iterations each (coarse_steps: their
                     iterations; else steps inside the iterations, against coarse_marks) */
};

/* 1: report_load classifies several traces together even when they did not run at the same time
 * (slack report --merge); 0 (the default): that is refused. */
extern int report_merge_ok;

/* Opens the n traces paths[0..n), loads them, classifies them together with opt and sums their
 * kernels and host calls. Errors go to stderr as "slack CMD: ..."; returns EXIT_OK, or
 * EXIT_ERROR with nothing left to free. */
int report_load(struct report *rp, const char *cmd, char *const *paths, size_t n,
                const struct cls_options *opt);
/* The kinds report_load keeps. */
#define REPORT_LOAD_MASK                                                                           \
  (TRACE_KIND_BIT(SLK_KERNEL) | TRACE_KIND_BIT(SLK_MEMCPY) | TRACE_KIND_BIT(SLK_MEMSET) |          \
   TRACE_KIND_BIT(SLK_API) | TRACE_KIND_BIT(SLK_HOST) | TRACE_KIND_BIT(SLK_DEVICE) |               \
   TRACE_KIND_BIT(SLK_DROPS) | TRACE_KIND_BIT(SLK_THREAD) | TRACE_KIND_BIT(SLK_MARKER) |           \
   TRACE_KIND_BIT(SLK_OVERHEAD) | TRACE_KIND_BIT(SLK_PROBE) | TRACE_KIND_BIT(SLK_SAMPLE) |         \
   TRACE_KIND_BIT(SLK_WINDOW) | TRACE_KIND_BIT(SLK_TAKEN) | TRACE_KIND_BIT(SLK_STREAM))
/* report_load's second half: rp->f[0..nf) opened and loaded (REPORT_LOAD_MASK, sorted); checks
 * that several traces belong together, classifies and sums. On an error (said on stderr), rp is
 * unloaded. */
int report_classify(struct report *rp, const char *cmd, const struct cls_options *opt);
/* report_load for one long trace with bounded memory (report_window.c, docs/slack-report.md
 * "Long traces"): a trace of more than `whole` timed records (per_window where that is more) is
 * classified in windows of about per_window records, and their figures are summed (steps and
 * what-ifs: averaged, weighted by steps; the steps lost at the windows' edges counted). A
 * shorter trace, or one with production windows, is loaded whole by report_load. The records
 * stay unloaded: rp->f[0].td holds only devices, threads, drops and the probe, so the compute
 * hints (report_gpu_hints) find nothing. */
#define REPORT_WINDOW_RECORDS 500000 /* slack report's default: longer traces in windows */
#define REPORT_WINDOW_SIZE 250000    /* and their windows' size (--window-records N: N both) */
/* windows too short for the loop's iterations are read again in windows of up to this many
 * records (slack report's retry: report.coarse_records) */
#define REPORT_COARSE_MOST 3000000
#define REPORT_COARSE_WHOLE 2000000 /* ... and a trace of up to this many read whole (~800 MB) */
/* small: windows of `small` records first (0: none), kept where the first one found 20 steps
 * from NVTX ranges on each of its GPUs, else read again in windows of per_window */
#define REPORT_WINDOW_SMALL 100000 /* slack report's default small windows (none where N given) */
int report_load_windowed(struct report *rp, const char *cmd, const char *path,
                         const struct cls_options *opt, uint64_t whole, uint64_t per_window,
                         uint64_t small);
/* Frees what report_load made. */
void report_unload(struct report *rp);
/* Says on stderr which files had an unreadable tail ("slack CMD: PATH: last N bytes..."). */
void report_warn_tails(const struct report *rp, const char *cmd);

/* Production windows (windows.h prints them): From the WINDOW records of rp's files, once cls_run
 * has run: the windows, their per-GPU figures, and every GPU's totals (window, busy, idle, classes,
 * other's reasons) clipped to them. Nothing changes when the files have no WINDOW record. 0, or -1
 * when out of memory. */
int report_windows_apply(struct report *rp);
/* rp->fn_order: the host functions by total time, longest first (ties by function number). */
void report_order_fns(struct report *rp);
void report_windows_free(struct report *rp);

/* 0 when two traces' job ids (header "job_id") allow them in one report: the same non-empty id
 * (then *same is 1), or either one empty; -1 when they differ. */
int report_same_job(const char *a, const char *b, int *same);

/* The CLS_ENV_* bits of a trace, from its header's env.NAME keys (docs/FORMAT.md). */
struct trace_reader;
unsigned report_env(const struct trace_reader *rd);

/* ks[0..n) (malloc'd) merged by kernel name and sorted by total time: GPU gi's top kernels,
 * owned by rp from here. */
void report_top_set(struct report *rp, size_t gi, struct kernel_sum *ks, size_t n);

/* "copy stall", "data starvation"...: the classes as the text and HTML outputs name them. */
extern const char *const report_class_label[CLS_COUNT];

/* The verdict of one GPU: the stall class with the most time per step (copy stall counts its
 * exposed copies too; launch overhead without the tracer's cost), its time per step in *per;
 * -1 when there are no steps or no stall reaches 2% of the step. */
int report_verdict(const struct cls_gpu *g, uint64_t *per);
/* The stall after the verdict's class top whose fix alone saves 2% of the step or more, its
 * time per step in *per; -1 where none. */
int report_verdict_next(const struct cls_gpu *g, int top, uint64_t *per);
/* The "then:" line's note where the verdict's class top is fixed by a CUDA graph and the next is
 * a host's wait in the step; "" otherwise. */
const char *report_then_note(int top, int next);
/* Launch overhead per step without the tracer (report.c), whether that is the point at the
 * untraced tail's pace, and the step a verdict of class c is a share of. */
uint64_t report_launch_untraced(const struct cls_gpu *g);
int report_launch_at_tail(const struct cls_gpu *g);
uint64_t report_verdict_step(const struct cls_gpu *g, int c);
/* The verdict's note on how its figure (`per`, report_verdict's) was taken, "" for the traced
 * partition's: launch overhead without the tracer, data starvation at the producer's pace */
const char *report_verdict_note(const struct cls_gpu *g, int c, uint64_t per);
/* What fixing the verdict's class c is predicted to give (copy stall: with its copies). */
const struct cls_whatif *report_verdict_whatif(const struct cls_gpu *g, int c);
/* The steps' total time (count x step) where fewer than 20 of them add up to under 2% of a
 * window of a second or more (a window of start-up with a few iterations in it: the figures per
 * step stand for little of it); 0 otherwise. */
uint64_t report_steps_sliver(const struct cls_gpu *g);
/* Every stall fixed but launch overhead (whatif_host) where it is 5% above every stall fixed:
 * what the text, the HTML page and slack diff give beside it; 0 where the two are alike. */
uint64_t report_whatif_launches_kept(const struct cls_gpu *g);

/* The verdict's site for class c: its largest call site, or the Python function whose sampled
 * lines together hold at least half of the class's time in the steps and 1.5 times the largest
 * site (a tokenizer in the main thread sampled at 3 of its lines), named in buf (cap bytes);
 * NULL when the class has no site. */
const char *report_verdict_site(const struct cls_gpu *g, int c, char *buf, size_t cap);
/* The usual fix of class c on g (the allocator's where c's top site frees device memory). */
const char *report_fix(const struct cls_gpu *g, int c);
const char *report_verdict_fix(const struct cls_gpu *g, int c);
/* The verdict's name of class c: the class's, or "host work outside CUDA" for `other` (the
 * launching threads' own work outside CUDA, report_verdict) */
const char *report_verdict_label(int c);
/* What fixing class c saves per step: the step without the tracer less its what-if. */
uint64_t report_verdict_saves(const struct cls_gpu *g, int c);
/* The step without the tracer (the replay without its cost, else the step less its measured
 * cost): what every step_ns_if_fixed is set against, the speedups' numerator. */
uint64_t report_step_untraced(const struct cls_gpu *g);
/* step / fixed, 0 when fixed is 0. */
double report_speedup(uint64_t step, uint64_t fixed);
/* Where CUPTI's cost per call came from, as a phrase. */
const char *report_cupti_source_text(const char *src);

/* report_html.c: the whole report as one self-contained HTML page (docs/slack-report.md,
 * "--html"). nsites: call sites listed per class. 0, or -1 when out of memory. */
int report_html(FILE *f, const struct report *rp, size_t nsites);

/* GPU gi's compute hints (analyzer/hints.c) over its steps. 0, or -1 (memory; h->n is 0). */
struct hints;
int report_gpu_hints(const struct report *rp, size_t gi, struct hints *h);

#endif

/* The report's shared layer (report.h): loading and classifying the traces, summing kernels and
 * host calls, the verdict and the compute hints, the classes' labels. Kept apart from
 * cmd_report.c so that the HTML page, the report across ranks, `slack diff` and `slack timeline`
 * need not call back into the command that calls them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "frames.h"
#include "hints.h"
#include "join.h"
#include "report.h"
#include "slack.h"
#include "u64map.h"

const char *const report_class_label[CLS_COUNT] = {
    "compute",         "communication",   "copy", "serialization", "copy stall",
    "data starvation", "launch overhead", "other"};

static uint64_t dur(const struct slk_record *r) {
  return r->end > r->start ? r->end - r->start : 0;
}

static const char *file_str(const void *ctx, uint32_t id) {
  return trace_reader_string((const struct trace_reader *)ctx, id);
}

static int cmp_kname(const void *pa, const void *pb) {
  const struct kernel_sum *a = pa, *b = pb;
  return strcmp(a->name, b->name);
}

static int cmp_total(const void *pa, const void *pb) {
  const struct kernel_sum *a = pa, *b = pb;
  if (a->total_ns != b->total_ns) return a->total_ns > b->total_ns ? -1 : 1;
  return strcmp(a->name, b->name);
}

/* One entry per kernel name on GPU g, by total time. */
static int top_kernels(struct report *rp, size_t gi) {
  const struct cls_gpu *g = &rp->cr.gpus[gi];
  size_t n = 0;
  for (size_t i = 0; i < rp->nf; i++)
    n += rp->f[i].td.kind[SLK_KERNEL].n;
  struct kernel_sum *ks = malloc((n ? n : 1) * sizeof *ks);
  if (!ks) return -1;
  n = 0;
  /* summed per name string first (one per string id of a file), so that the sort by name
   * below sorts names, not kernels; names of different ids that read the same merge there */
  struct u64map by_name;
  memset(&by_name, 0, sizeof by_name);
  for (size_t i = 0; i < rp->nf; i++) {
    const char *host = trace_reader_header(rp->f[i].rd, "host");
    if (strcmp(host ? host : "", g->host)) continue;
    const struct trace_array *ka = &rp->f[i].td.kind[SLK_KERNEL];
    for (size_t k = 0; k < ka->n; k++) {
      if (ka->v[k].device != g->device) continue;
      const char *name = trace_reader_string(rp->f[i].rd, ka->v[k].name);
      uint64_t at;
      if (u64map_get(&by_name, (uint64_t)(uintptr_t)name, &at)) {
        ks[at].count++;
        ks[at].total_ns += dur(&ka->v[k]);
        continue;
      }
      size_t slot = u64map_add(&by_name, (uint64_t)(uintptr_t)name);
      if (slot != (size_t)-1) by_name.val[slot] = n;
      ks[n++] = (struct kernel_sum){name, 1, dur(&ka->v[k])};
    }
  }
  u64map_free(&by_name);
  report_top_set(rp, gi, ks, n);
  return 0;
}

void report_top_set(struct report *rp, size_t gi, struct kernel_sum *ks, size_t n) {
  qsort(ks, n, sizeof *ks, cmp_kname);
  size_t u = 0;
  for (size_t i = 0; i < n; i++) {
    if (u && !strcmp(ks[u - 1].name, ks[i].name)) {
      ks[u - 1].count += ks[i].count;
      ks[u - 1].total_ns += ks[i].total_ns;
    } else {
      ks[u++] = ks[i];
    }
  }
  qsort(ks, u, sizeof *ks, cmp_total);
  rp->top[gi] = ks;
  rp->ntop[gi] = u;
}

static int cmp_thread(const void *pa, const void *pb) {
  const struct thread_sum *a = pa, *b = pb;
  if (a->file != b->file) return a->file < b->file ? -1 : 1;
  return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static const struct report *fn_sort_rp; /* qsort has no context argument */
static int cmp_fn_total(const void *pa, const void *pb) {
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  const struct fn_sum *fa = &fn_sort_rp->fn[a], *fb = &fn_sort_rp->fn[b];
  if (fa->total_ns != fb->total_ns) return fa->total_ns > fb->total_ns ? -1 : 1;
  return a < b ? -1 : a > b;
}

void report_order_fns(struct report *rp) {
  for (uint32_t f = 0; f <= SLK_FN_COUNT; f++)
    rp->fn_order[f] = f;
  fn_sort_rp = rp;
  qsort(rp->fn_order, SLK_FN_COUNT + 1, sizeof rp->fn_order[0], cmp_fn_total);
  fn_sort_rp = NULL;
}

static int host_compute(struct report *rp) {
  size_t n = 0;
  for (size_t i = 0; i < rp->nf; i++)
    n += rp->f[i].td.kind[SLK_HOST].n;
  rp->threads = malloc((n ? n : 1) * sizeof *rp->threads);
  if (!rp->threads) return -1;
  n = 0;
  for (size_t i = 0; i < rp->nf; i++) {
    const struct trace_array *h = &rp->f[i].td.kind[SLK_HOST];
    /* summed per thread as they come (the sort below then sorts threads, not calls) */
    struct u64map by_tid;
    memset(&by_tid, 0, sizeof by_tid);
    for (size_t k = 0; k < h->n; k++) {
      const struct slk_record *r = &h->v[k];
      struct fn_sum *f = &rp->fn[r->fn < SLK_FN_COUNT ? r->fn : SLK_FN_COUNT];
      int blocking = slk_host_blocks(r->fn, r->flags);
      f->calls++;
      f->total_ns += dur(r);
      if (blocking) f->blocked_ns += dur(r);
      rp->host_calls++;
      if (blocking) rp->host_blocked_ns += dur(r);
      uint64_t at;
      if (u64map_get(&by_tid, r->tid, &at)) {
        rp->threads[at].calls++;
        rp->threads[at].busy_ns += dur(r);
        rp->threads[at].blocked_ns += blocking ? dur(r) : 0;
        continue;
      }
      size_t slot = u64map_add(&by_tid, r->tid);
      if (slot != (size_t)-1) by_tid.val[slot] = n;
      rp->threads[n++] = (struct thread_sum){i, r->tid, 0, 1, dur(r), blocking ? dur(r) : 0};
    }
    u64map_free(&by_tid);
  }
  qsort(rp->threads, n, sizeof *rp->threads, cmp_thread);
  size_t u = 0;
  for (size_t i = 0; i < n; i++) {
    struct thread_sum *t = &rp->threads[i];
    if (u && rp->threads[u - 1].tid == t->tid && rp->threads[u - 1].file == t->file) {
      rp->threads[u - 1].calls += t->calls;
      rp->threads[u - 1].busy_ns += t->busy_ns;
      rp->threads[u - 1].blocked_ns += t->blocked_ns;
    } else {
      rp->threads[u++] = *t;
    }
  }
  rp->nthreads = u;
  report_order_fns(rp);
  for (size_t i = 0; i < rp->nf; i++) {
    const struct trace_array *ta = &rp->f[i].td.kind[SLK_THREAD];
    for (size_t k = 0; k < ta->n; k++)
      for (size_t t = 0; t < u; t++)
        if (rp->threads[t].file == i && rp->threads[t].tid == ta->v[k].tid)
          rp->threads[t].name = ta->v[k].name;
  }
  return 0;
}

const char *report_cupti_source_text(const char *src) {
  if (!src || !strcmp(src, "assumed")) return "assumed (no exit probe in the trace)";
  if (!strcmp(src, "given")) return "given (--cupti-call-ns)";
  if (!strcmp(src, "mixed")) return "measured where a trace has its exit probe, else assumed";
  return "measured in the run (exit probe)";
}

static int report_compute(struct report *rp, const struct cls_options *opt) {
  struct cls_input *in = calloc(rp->nf, sizeof *in);
  if (!in) return -1;
  for (size_t i = 0; i < rp->nf; i++) {
    struct rfile *f = &rp->f[i];
    const char *host = trace_reader_header(f->rd, "host");
    const char *gpu = trace_reader_header(f->rd, "gpu_records");
    const char *pid = trace_reader_header(f->rd, "pid");
    snprintf(f->label, sizeof f->label, "pid %s", pid && *pid ? pid : "?");
    /* the launch join: the classifier's own, counted and stored into f->lj */
    memset(&f->lj, 0, sizeof f->lj);
    size_t nk = f->td.kind[SLK_KERNEL].n;
    f->lj.host_of = malloc((nk ? nk : 1) * sizeof *f->lj.host_of);
    if (!f->lj.host_of) {
      free(in);
      return -1;
    }
    in[i] = (struct cls_input){&f->td,
                               host ? host : "",
                               rp->nf > 1 ? f->label : NULL,
                               gpu && !strcmp(gpu, "on"),
                               file_str,
                               f->rd,
                               &f->lj};
    in[i].env = report_env(f->rd);
    const struct trace_array *dr = &f->td.kind[SLK_DROPS];
    for (size_t k = 0; k < dr->n; k++)
      rp->dropped += dr->v[k].count;
    rp->truncated += trace_reader_stats(f->rd)->tail_bytes;
  }
  int rc = cls_run(in, rp->nf, opt, &rp->cr);
  free(in);
  for (size_t i = 0; i < rp->nf && !rc; i++) {
    const struct rfile *f = &rp->f[i];
    rp->lj.kernels += f->lj.kernels;
    rp->lj.joined += f->lj.joined;
    rp->lj.no_api += f->lj.no_api;
    rp->lj.no_host += f->lj.no_host;
    rp->lj.graph_kernels += f->lj.graph_kernels;
    rp->lj.graph_joined += f->lj.graph_joined;
    rp->lj.by_order += f->lj.by_order;
  }
  if (rc || report_windows_apply(rp)) return -1;
  rp->top = calloc(rp->cr.ngpus ? rp->cr.ngpus : 1, sizeof *rp->top);
  rp->ntop = calloc(rp->cr.ngpus ? rp->cr.ngpus : 1, sizeof *rp->ntop);
  if (!rp->top || !rp->ntop) return -1;
  for (size_t g = 0; g < rp->cr.ngpus; g++)
    if (top_kernels(rp, g)) return -1;
  return host_compute(rp);
}

static void report_free(struct report *rp) {
  for (size_t g = 0; rp->top && g < rp->cr.ngpus; g++)
    free(rp->top[g]);
  free(rp->top);
  free(rp->ntop);
  free(rp->threads);
  free(rp->comm_ns);
  report_windows_free(rp);
  cls_result_free(&rp->cr);
  for (size_t i = 0; i < rp->nf; i++)
    launch_join_free(&rp->f[i].lj);
}

void report_unload(struct report *rp) {
  report_free(rp);
  for (size_t i = 0; rp->f && i < rp->nf; i++) {
    trace_data_free(&rp->f[i].td);
    trace_reader_close(rp->f[i].rd);
  }
  free(rp->f);
  memset(rp, 0, sizeof *rp);
}

void report_warn_tails(const struct report *rp, const char *cmd) {
  for (size_t i = 0; i < rp->nf; i++)
    slack_warn_tail(stderr, cmd, rp->f[i].path, rp->f[i].rd);
}

/* Several traces are the processes of one job only when they ran at the same time: two runs
 * of a program (traces/slack-*.slk after two runs), or one file given twice, would merge into
 * one window mostly idle. 0 when they belong together (or --merge says they do). */
int report_merge_ok; /* slack report --merge (report.h) */
static void file_span(const struct trace_data *td, uint64_t *a, uint64_t *b) {
  static const int kinds[] = {SLK_KERNEL, SLK_MEMCPY, SLK_MEMSET, SLK_HOST};
  *a = UINT64_MAX;
  *b = 0;
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    const struct trace_array *ta = &td->kind[kinds[k]];
    if (!ta->n) continue;
    if (ta->v[0].start < *a) *a = ta->v[0].start; /* sorted by start */
    for (size_t i = 0; i < ta->n; i++)
      if (ta->v[i].end > *b) *b = ta->v[i].end;
  }
}

static int check_related(const struct report *rp, const char *cmd) {
  for (size_t i = 0; i < rp->nf; i++)
    for (size_t j = i + 1; j < rp->nf; j++) {
      const struct rfile *x = &rp->f[i], *y = &rp->f[j];
      const char *keys[] = {"host", "pid", "start_realtime_ns"};
      int same = 1;
      for (size_t k = 0; k < 3 && same; k++) {
        const char *p = trace_reader_header(x->rd, keys[k]),
                   *q = trace_reader_header(y->rd, keys[k]);
        same = p && q && !strcmp(p, q);
      }
      if (same) {
        fprintf(stderr,
                "slack %s: %s and %s are the same trace (host, pid and start agree); "
                "give it once\n",
                cmd, x->path, y->path);
        return -1;
      }
      int same_job; /* the same job id: one job; different ones: two (ranks.h) */
      if (report_same_job(trace_reader_header(x->rd, "job_id"),
                          trace_reader_header(y->rd, "job_id"), &same_job) &&
          !report_merge_ok) {
        fprintf(stderr,
                "slack %s: %s and %s are traces of different jobs (job_id differs); report them "
                "one at a time (or pass --merge to classify them together)\n",
                cmd, x->path, y->path);
        return -1;
      }
      if (same_job) continue;
      uint64_t a0, a1, b0, b1;
      file_span(&x->td, &a0, &a1);
      file_span(&y->td, &b0, &b1);
      const char *hx = trace_reader_header(x->rd, "host"), *hy = trace_reader_header(y->rd, "host");
      int same_host = hx && hy && !strcmp(hx, hy);
      /* one host's clock is shared by its processes: spans that do not overlap are two runs */
      if (report_merge_ok || !same_host || a1 < a0 || b1 < b0 || (a0 <= b1 && b0 <= a1)) continue;
      double gap = (double)(a1 < b0 ? b0 - a1 : a0 - b1) / 1e9;
      fprintf(stderr,
              "slack %s: %s and %s did not run at the same time (%.1f s apart): they are "
              "two runs, not the processes of one job; report them one at a time (or "
              "pass --merge to classify them together)\n",
              cmd, x->path, y->path, gap);
      return -1;
    }
  return 0;
}

int report_classify(struct report *rp, const char *cmd, const struct cls_options *opt) {
  if (rp->nf > 1 && check_related(rp, cmd)) {
    report_unload(rp);
    return EXIT_USAGE;
  }
  if (report_compute(rp, opt)) {
    fprintf(stderr, "slack %s: out of memory\n", cmd);
    report_unload(rp);
    return EXIT_ERROR;
  }
  return EXIT_OK;
}

int report_load(struct report *rp, const char *cmd, char *const *paths, size_t n,
                const struct cls_options *opt) {
  memset(rp, 0, sizeof *rp);
  rp->f = calloc(n ? n : 1, sizeof *rp->f);
  if (!rp->f) {
    fprintf(stderr, "slack %s: out of memory\n", cmd);
    return EXIT_ERROR;
  }
  /* nf counts the files opened so far: report_unload closes exactly those */
  for (; rp->nf < n; rp->nf++) {
    struct rfile *f = &rp->f[rp->nf];
    f->path = paths[rp->nf];
    f->rd = slack_open_trace(cmd, f->path);
    if (!f->rd) {
      report_unload(rp);
      return EXIT_ERROR;
    }
    if (trace_data_load(f->rd, REPORT_LOAD_MASK, &f->td)) {
      fprintf(stderr, "slack %s: %s: out of memory\n", cmd, f->path);
      rp->nf++;
      report_unload(rp);
      return EXIT_ERROR;
    }
  }
  return report_classify(rp, cmd, opt);
}

static int top_site_library_read(const struct cls_gpu *g, int c);

/* The stall whose fix saves most (report_verdict), class `skip` left out; -1 where none is a
 * candidate. */
static int verdict_pick(const struct cls_gpu *g, int skip, uint64_t *per) {
  const struct cls_steps *sp = &g->steps;
  int best = -1, ser_candidate = 0;
  uint64_t best_gain = 0;
  *per = 0;
  if (!sp->count) return -1;
  /* Candidates: the stalls of at least 2% of the step, each with its own time and the time it
   * shares with another (chained causes: the host work after a sync that prepared the next batch
   * is the sync's and the loader's). Of them, the one whose fix saves most by its what-if (the
   * replay without it; the step less its time where there is no replay): shared time counts
   * for both, so only the what-if tells a sync that stole 50 ms from a 100 ms loader (the
   * loader's fix saves 100) from a 2 ms sync before 0.3 ms of host work (the sync's fix saves
   * more). */
  static const int stalls[] = {CLS_SERIALIZATION, CLS_COPY_STALL, CLS_DATA_STARVATION,
                               CLS_LAUNCH_OVERHEAD};
  for (size_t k = 0; k < sizeof stalls / sizeof *stalls; k++) {
    int c = stalls[k];
    if (c == skip) continue;
    uint64_t v = c == CLS_COPY_STALL        ? sp->per_step_ns[c] + sp->copy_host_per_step_ns
                 : c == CLS_LAUNCH_OVERHEAD ? report_launch_untraced(g)
                                            : sp->per_step_ns[c];
    /* (launch overhead at the tail's pace is a replay's saving: with its shared gaps in it) */
    if (c != CLS_LAUNCH_OVERHEAD || !report_launch_at_tail(g)) v += sp->per_step_shared_ns[c];
    /* a loop at its producer's pace waits longer without the tracer: what the tracer cost the
     * launches between its batches (classify.c, steps.starved_untraced_per_step_ns) */
    if (c == CLS_DATA_STARVATION && sp->starved_untraced_per_step_ns > v)
      v = sp->starved_untraced_per_step_ns;
    /* or a fix that saves 2%: a sync in the middle of a step whose idle after it is mostly
     * launch gaps (the host catching up, slowed by the tracer) attributes little and saves
     * more (GPU run 54's mask indexing: 0.11 ms attributed, the replay without the sync 0.91,
     * 0.90 measured) */
    uint64_t saves = report_verdict_saves(g, c);
    /* 2% of the step as the program runs untraced, where the replay knows it (a host the
     * tracer slowed 1.76x made GPU run 67's ViT step 64 ms traced against 48 measured, and its
     * sync's 1.2 ms a 1.8% share) */
    uint64_t of = report_verdict_step(g, c), un = report_step_untraced(g);
    if (un && un < of) of = un;
    if (v * 50 < of && saves * 50 < un) continue;
    uint64_t fixed = report_verdict_whatif(g, c)->best_ns;
    uint64_t gain = sp->step_ns > fixed ? sp->step_ns - fixed : 0;
    /* The sync first: the launch gaps that a sync's lost lead exposed (serialization's, shared
     * with launch overhead) are taken off by either fix, but a CUDA graph cannot capture a step
     * that waits on the host, and without the sync the host stays ahead of them. Where
     * serialization is a candidate too, launch overhead's fix is weighed without them (GPU run
     * 62's mask indexing: launch overhead saved 1.72 ms by the replay, 1.02 of it such gaps;
     * removing the sync saved 1.62, measured 1.18 to 2.44). */
    if (c == CLS_LAUNCH_OVERHEAD && ser_candidate)
      gain = gain > sp->per_step_shared_ns[c] ? gain - sp->per_step_shared_ns[c] : 0;
    /* (and a blocking copy's, whose lead is lost the same way: session 24's holdout_tensors,
     * small tensors made on the device from Python lists mid-step) */
    if (c == CLS_SERIALIZATION || c == CLS_COPY_STALL) ser_candidate = 1;
    /* A debugging switch the trace shows comes first: autograd's anomaly detection (its NaN
     * checks read on autograd's thread, top_site_library_read 1). Turning it off takes off its
     * reads, its stacks (`other`, stack_capture) and more host work in every operation that
     * records for autograd than the trace sets apart (GPU run 198: nanoGPT 54.93 against 12.37
     * ms a step untraced, launch overhead's what-if 39.13), and with its reads in the step no
     * CUDA graph captures it */
    if (c == CLS_SERIALIZATION && top_site_library_read(g, c) == 1) {
      best = c;
      best_gain = UINT64_MAX;
      *per = v;
      continue;
    }
    if (best < 0 || gain > best_gain || (gain == best_gain && v > *per)) {
      best = c;
      best_gain = gain;
      *per = v;
    }
  }
  return best;
}

/* The verdict of one GPU: the stall class with the most time per step (copy stall counts its
 * exposed copies too: one cause, one fix), or -1 when no stall reaches 2% of the step. */
int report_verdict(const struct cls_gpu *g, uint64_t *per) {
  const struct cls_steps *sp = &g->steps;
  int best = verdict_pick(g, -1, per);
  /* The launching threads' own work outside CUDA (`other`, reason host_outside_cuda) where it is
   * half the step or more and more than the stall chosen: no stall class is its cause, and "no
   * stall" would hide a GPU that mostly waits (GPU run 118: cuDNN's autotuner on a new input
   * shape every step, 2.31 s of a 2.40 s step on the host in cuDNN's plan building, read "no
   * stall above 2%") */
  uint64_t oh = sp->other_host_per_step_ns;
  if (oh * 2 >= sp->step_ns && oh > *per) {
    best = CLS_OTHER;
    *per = oh;
  }
  return best;
}

/* The stall after the verdict's, where its fix alone saves 2% of the step or more: -1 where
 * there is none. A loop can hold two causes whose fixes differ in cost (a CUDA graph against a
 * save moved to a background thread: GPU run 90's trainer, launch overhead 45 ms a step by
 * slack's figure, then a checkpoint saved in the loop, its step fixed alone 72.4 ms where the
 * loop without it measured 76.0); the report names both. */
int report_verdict_next(const struct cls_gpu *g, int top, uint64_t *per) {
  *per = 0;
  if (top < 0) return -1;
  int c = verdict_pick(g, top, per);
  if (c < 0) return -1;
  uint64_t un = report_step_untraced(g);
  if (report_verdict_saves(g, c) * 50 < un) {
    *per = 0;
    return -1;
  }
  return c;
}

/* What the "then:" line adds where the verdict's fix is a CUDA graph and the next stall is a wait
 * of the host's in the step: a graph captures no step that waits on the host (its sync, its
 * blocking copy), so that fix comes first, or the graphs take the parts between. "" otherwise. */
const char *report_then_note(int top, int next) {
  return top == CLS_LAUNCH_OVERHEAD && (next == CLS_SERIALIZATION || next == CLS_COPY_STALL)
             ? "; a CUDA graph captures no step that waits on the host: this fix first, or "
               "graphs of the parts between the waits"
             : "";
}

const char *report_verdict_label(int c) {
  return c == CLS_OTHER ? "host work outside CUDA" : report_class_label[c];
}

/* Whether class c's top call site on GPU g is a call to a function named with `a` or `b` ("X @"
 * in the site's name). */
static int top_site_is(const struct cls_gpu *g, int c, const char *a, const char *b) {
  const char *s = g->nsites[c] ? g->sites[c][0].site : NULL;
  return s && (strstr(s, a) || strstr(s, b));
}

static const struct cls_site *other_host_site(const struct cls_gpu *g, int *cudnn);

/* Whether a copy stall's verdict weighed mostly the copies that ran with nothing beside them in
 * the steps (the copy class's transfers) rather than the host's blocked waits: what it names is
 * then those copies (report_verdict_site) and, where they were pinned already, a side stream
 * (report_fix). GPU run 114's fixed GNN loop, pinned batches copied with non_blocking=True on the
 * compute stream: 0.33 ms a step of copies alone, no copy stall in its steps; the copy stall's
 * top site was the model's upload at start-up. */
static int copy_stall_is_copies(const struct cls_gpu *g) {
  const struct cls_steps *sp = &g->steps;
  return sp->copy_host_per_step_ns >
         sp->per_step_ns[CLS_COPY_STALL] + sp->per_step_shared_ns[CLS_COPY_STALL];
}

/* A host-to-device copy this short on the GPU moves 250 KB at most (at 25 GB/s; a Python value's
 * copy takes about 1 us: GPU runs 91 and 155) */
#define SMALL_COPY_NS 10000

/* Of data starvation's time in the steps charged to the launching thread's sampled lines ("host
 * work (sampled)": the writer's Python samples), the part whose stacks run in a data-loading
 * library (pyframes_loading: the DataLoader, torchvision's datasets and transforms, PIL,
 * tokenizers, ...) or wait for another thread or process to hand a batch over (pyframes_waits: a
 * queue, a Future: a loader of threads or processes), and the part with neither: the host's own
 * work before the batch's copy, which may be the script's own loader or not a loader at all. */
static void starved_samples(const struct cls_gpu *g, uint64_t *lib, uint64_t *own) {
  *lib = *own = 0;
  for (size_t k = 0; k < g->nsites[CLS_DATA_STARVATION]; k++) {
    const struct cls_site *s = &g->sites[CLS_DATA_STARVATION][k];
    if (!s->python || !strstr(s->site, ": host work (sampled), then ")) continue;
    if (pyframes_loading(s->python, strlen(s->python)) || pyframes_waits(s->python))
      *lib += s->steps_ns;
    else
      *own += s->steps_ns;
  }
}

/* Whether a call's Python stack reads inside an nn.Module hook: its innermost user frame is no
 * `forward` and is called by torch.nn's `Module._call_impl` (which calls the forward pre-hooks and
 * forward hooks, and the module's forward; a read in a forward names the forward): a per-layer
 * timer's `torch.cuda.synchronize()`, a statistics hook's `.item()`, run for every hooked module
 * in every step (GPU run 175's holdout_hooks: 24 synchronizes a forward pass). */
static int in_module_hook(const char *py) {
  size_t off, len;
  pyframes_user(py, &off, &len);
  if (!len || !py[off + len]) return 0;
  const char *file, *fn;
  size_t fl, nl;
  long lineno;
  if (!pyframe_parse(py + off, len, &file, &fl, &lineno, &fn, &nl)) return 0;
  if (nl >= 7 && !memcmp(fn + nl - 7, "forward", 7)) return 0;
  const char *caller = py + off + len + 1;
  size_t cl = strcspn(caller, "\n");
  const char *cf, *cn;
  size_t cfl, cnl;
  return pyframe_parse(caller, cl, &cf, &cfl, &lineno, &cn, &cnl) && cfl >= 27 &&
         !memcmp(cf + cfl - 27, "/torch/nn/modules/module.py", 27) && cnl >= 17 &&
         !memcmp(cn, "Module._call_impl", 17);
}

/* Whether class c's top call site on GPU g is a host read that a library makes on its own, not
 * the script: 1 where its native callers are autograd's engine reading a bool (anomaly
 * detection's check of each backward function's outputs for NaN: `Engine::evaluate_function`
 * calling `Tensor::item<bool>` itself, GPU run 166's holdout_anomaly), 2 where its innermost
 * Python frame is torch.distributions' (a distribution's argument check, `if not
 * valid.all()`, in its constructor or log_prob: GPU run 166's holdout_ppo), 3 where the read is
 * in an nn.Module hook (in_module_hook: GPU run 175), 4 where its innermost Python frame is a
 * learning-rate scheduler's (ReduceLROnPlateau.step's `float(metrics)`), 5 where it is
 * clip_grad_norm_'s check of the norm (error_if_nonfinite=True; both GPU run 182's
 * holdout_libread), 6 where it is one of torch's functional ops (torch/functional.py,
 * torch/nn/functional.py: torch.unique's output size, GPU runs 147 and 148's holdout_recsys;
 * cross_entropy with class weights and label smoothing, which indexes with a mask, run 171's
 * holdout_cpuloss `fixed`); else 0. */
static int top_site_library_read(const struct cls_gpu *g, int c) {
  const struct cls_site *s = g->nsites[c] ? &g->sites[c][0] : NULL;
  if (!s) return 0;
  if (s->stack) {
    const char *item = strstr(s->stack, "::item<bool>() const");
    const char *nl = item ? strchr(item, '\n') : NULL;
    if (nl && !strncmp(nl + 1, "torch::autograd::Engine::evaluate_function(", 43)) return 1;
  }
  if (s->python) {
    size_t l = strcspn(s->python, "\n"); /* the innermost frame */
    if (memmem(s->python, l, "/torch/distributions/", 21)) return 2;
    if (in_module_hook(s->python)) return 3;
    if (memmem(s->python, l, "/torch/optim/lr_scheduler.py:", 29)) return 4;
    if (memmem(s->python, l, "/torch/nn/utils/clip_grad.py:", 29)) return 5;
    if (memmem(s->python, l, "/torch/functional.py:", 21) ||
        memmem(s->python, l, "/torch/nn/functional.py:", 24))
      return 6;
  }
  return 0;
}

/* The usual fix of class c on GPU g: the class's, or, where c's top call site is a cudaFree or
 * cuMemFree or torch.cuda.empty_cache()'s wait (serialization: a caching allocator giving memory
 * back in the loop, GPU runs 55 and 177),
 * the allocator's (a cudaFreeHost or cuMemFreeHost: pinned staging buffers freed in the loop), or
 * where most of serialization is the host's round trip, that one's, or where its top site is a wait
 * by polling, that one's. */
/* Whether class c's top call site on GPU g was made by torch.cuda.empty_cache() (its innermost
 * Python frame in torch/cuda/memory.py's empty_cache): under PyTorch's native allocator the wait
 * is cudaFree's, under CUDA's stream-ordered one (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync)
 * a cudaDeviceSynchronize before the pool is trimmed (GPU run 177's holdout_asyncalloc, whose fix
 * read as a round trip's: the trim's host work ran inside the statement that synchronized), under
 * expandable segments (expandable_segments:True) a cudaStreamSynchronize before the segment's
 * pages are unmapped and released (cuMemUnmap, cuMemRelease). */
static int top_site_empty_cache(const struct cls_gpu *g, int c) {
  const struct cls_site *s = g->nsites[c] ? &g->sites[c][0] : NULL;
  if (!s || !s->python) return 0;
  size_t l = strcspn(s->python, "\n");
  return memmem(s->python, l, "/torch/cuda/memory.py:", 22) && l >= 12 &&
         !memcmp(s->python + l - 12, " empty_cache", 12);
}

unsigned report_env(const struct trace_reader *rd) {
  /* PyTorch takes the variable as set unless it says 0 or false */
  const char *nc = trace_reader_header(rd, "env.PYTORCH_NO_CUDA_MEMORY_CACHING");
  int off = nc && *nc && strcmp(nc, "0") && strcasecmp(nc, "false");
  return off ? CLS_ENV_NO_CACHING : 0;
}

const char *report_fix(const struct cls_gpu *g, int c) {
  if (c == CLS_SERIALIZATION && (g->env & CLS_ENV_NO_CACHING) &&
      top_site_is(g, c, "cudaFree @", "cuMemFree @"))
    return "PyTorch's caching allocator is off (PYTORCH_NO_CUDA_MEMORY_CACHING in the "
           "environment, a debugging switch): every tensor's memory is allocated with cudaMalloc "
           "and given back with cudaFree, each free waiting for the GPU; unset it";
  if (c == CLS_SERIALIZATION && g->launch_blocking)
    return "every kernel launch returned only after its kernel ended: the driver runs the "
           "launches synchronously, as CUDA_LAUNCH_BLOCKING=1 (a debugging switch) asks; unset "
           "it, and the host queues its launches ahead of the GPU again";
  if (c == CLS_SERIALIZATION &&
      (top_site_is(g, c, "cudaFree @", "cuMemFree @") || top_site_empty_cache(g, c)))
    return "keep device memory allocated across steps: drop torch.cuda.empty_cache() (and other "
           "frees) from the loop; each release waits for the GPU (cudaFree, or a synchronize "
           "before a stream-ordered pool is trimmed or expandable segments are unmapped) and the "
           "next step allocates again (against fragmentation: "
           "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, which needs no empty_cache())";
  if (c == CLS_SERIALIZATION && top_site_is(g, c, "cudaFreeHost @", "cuMemFreeHost @"))
    return "keep page-locked host buffers across steps: allocate the staging buffers once (or "
           "from a pool: torch's pin_memory() caches them) instead of freeing them in the loop; "
           "each cudaFreeHost waits for the whole GPU and the next step pins the memory again";
  /* a read the library makes: the script has no .item() to move, the switch that asks for it
   * is the fix */
  int lib = c == CLS_SERIALIZATION ? top_site_library_read(g, c) : 0;
  if (lib == 1)
    return "autograd's anomaly detection is on (torch.autograd.detect_anomaly(), "
           "set_detect_anomaly(True)): the backward pass reads every function's outputs on the "
           "host to look for NaN, and the forward pass records each operation's Python stack; "
           "turn it off outside debugging (or check_nan=False), and look for NaN in the loss "
           "every N steps instead";
  if (lib == 3)
    return "the read is in an nn.Module hook (register_forward_hook, register_forward_pre_hook) "
           "that runs for every hooked module in each step, a per-layer timer or statistics "
           "left on: record CUDA events (torch.cuda.Event(enable_timing=True)) or keep the "
           "statistics on the GPU and read them every N steps, or remove the hooks outside "
           "debugging";
  if (lib == 4)
    return "a learning-rate scheduler reads the metric it is stepped on as a Python number "
           "(ReduceLROnPlateau.step(loss) with the loss tensor): step it once an epoch, or every "
           "N steps on a mean kept on the GPU";
  if (lib == 5)
    return "clip_grad_norm_(..., error_if_nonfinite=True) reads whether the norm is finite in "
           "every step: leave the check off (the default; the clip itself needs no read), or "
           "look for NaN in the loss every N steps";
  if (lib == 6) {
    /* the functional op's own frame, from its package on ("torch/functional.py:1092
     * _unique_impl"); printed at once by every caller (one buffer) */
    static char buf[768];
    const char *py = g->sites[c][0].python;
    size_t l = strcspn(py, "\n"); /* the innermost frame, where top_site_library_read found it */
    const char *at = memmem(py, l, "/torch/nn/functional.py:", 24);
    if (!at) at = memmem(py, l, "/torch/functional.py:", 21);
    int n = (int)strcspn(at + 1, "\n");
    snprintf(buf, sizeof buf,
             "the read is made inside torch's own %.*s, not by the script: an op whose output "
             "size depends on the values (torch.unique, nonzero, masked_select, indexing with a "
             "mask) or that checks them waits for the GPU's answer; keep a mask instead of "
             "selecting, give the op a fixed size where it takes one, or look for the argument "
             "or variant that does not read",
             n > 120 ? 120 : n, at + 1);
    return buf;
  }
  if (lib == 2)
    return "torch.distributions checks a distribution's arguments by default and reads each "
           "check on the host (building it, log_prob): pass validate_args=False (or "
           "torch.distributions.Distribution.set_default_validate_args(False), or run python "
           "-O) once the code is known to be right";
  /* most of serialization is the host's round trip (tokens sampled on the CPU, a metric
   * counted in Python, torch.save writing each tensor it read): the work, not the read, is
   * what the GPU waits for */
  if (c == CLS_SERIALIZATION && g->steps.roundtrip_per_step_ns * 2 > g->steps.per_step_ns[c])
    return "the host works on what it read from the GPU before the next step can go on: do "
           "that work on the GPU (sampling, metrics, top-k) or off the critical path (a "
           "background thread that saves a checkpoint from pinned copies, or writes the log), "
           "and read only what the host needs";
  /* a wait by polling (SLK_HOST_POLLED: event.query() or stream.query() asked until done) */
  if (c == CLS_SERIALIZATION && top_site_is(g, c, "EventQuery @", "StreamQuery @"))
    return "the loop asks whether the GPU is done (event.query(), stream.query()) and queues its "
           "next work only then: queue the next step first and ask about the step before's event "
           "(two events in turn), or let the GPU wait for the event (stream.wait_event) instead "
           "of the host";
  /* a copy stall on copies of a few bytes each (their mean GPU time under SMALL_COPY_NS): a
   * Python value made a CUDA tensor where the step needs it, each copy from pageable memory
   * and waited for; pinning a batch is not the fix (GPU runs 91 and 154) */
  if (c == CLS_COPY_STALL && g->steps.copy_stall_copies &&
      g->steps.copy_stall_copy_ns < SMALL_COPY_NS)
    return "small tensors made from Python values in the step (torch.tensor(list, "
           "device=\"cuda\"), a Python number assigned into a CUDA tensor by index, .to(\"cuda\") "
           "of a few values): each is copied from pageable memory and the host waits for the GPU "
           "first; make them once on the device (a constant kept as a CUDA tensor), or build them "
           "ahead on the host and copy them pinned with non_blocking=True";
  /* most of data starvation is the launching thread waiting while the loader's threads in its
   * own process ran (their Python holds the GIL): threads, not too few of them, are the cause */
  if (c == CLS_DATA_STARVATION && g->steps.loader_wait_per_step_ns * 2 > g->steps.per_step_ns[c])
    return "the loader runs in threads of the training process, and the launching thread waits "
           "while their Python holds the GIL: load in worker processes instead (a DataLoader "
           "with num_workers > 0, persistent_workers=True, pin_memory=True) or move the "
           "per-sample work onto the GPU";
  /* most of it sampled on the launching thread's own lines, none of them in a data-loading
   * library: work of the user's own before the batch's copy, which may build the batch (a
   * tokenizer or sampler written in the script) or not (gc.collect(), bookkeeping) */
  if (c == CLS_DATA_STARVATION) {
    uint64_t lib, own;
    starved_samples(g, &lib, &own);
    if (own > 4 * lib && own * 2 > g->steps.per_step_ns[c] * g->steps.count)
      return "the launching thread's own code runs before each batch's copy (the lines named, "
             "sampled outside any data-loading library): if it builds the batch (a "
             "tokenizer, a sampler, feature code of the script's own), run it in DataLoader "
             "workers (a Dataset or collate_fn, num_workers > 0, persistent_workers=True, "
             "pin_memory=True) or on the GPU; if it is other work (gc.collect(), bookkeeping, "
             "a log), take it off the step or out of the loop";
  }
  return cls_fix(c);
}

/* Whether the copies that ran with nothing beside them in the steps are mostly autograd's saved
 * tensors offloaded to the host: of the copy class's call sites, those whose Python frames run in
 * torch.autograd.graph's save_on_cpu hooks (pack_to_cpu in the forward pass, unpack_from_cpu in
 * the backward pass) hold more than half of its time in the steps (GPU run 171's holdout_offact:
 * 16 MB activations and 32 MB weights copied out at each save and back at each use). */
static int copies_offloaded(const struct cls_gpu *g) {
  uint64_t all = 0, saved = 0;
  for (size_t k = 0; k < g->nsites[CLS_COPY]; k++) {
    const struct cls_site *s = &g->sites[CLS_COPY][k];
    all += s->steps_ns;
    if (s->python && strstr(s->python, "/torch/autograd/graph.py:") &&
        (strstr(s->python, " pack_to_cpu") || strstr(s->python, " unpack_from_cpu") ||
         strstr(s->python, "save_on_cpu")))
      saved += s->steps_ns;
  }
  return all && saved * 2 > all;
}

/* The verdict's fix: the class's (report_fix), or, where a copy stall's verdict weighed copies
 * that were pinned already (the call sites' own fix stays the class's: their blocked copies are
 * the pageable ones), issuing them ahead on a stream of their own. */
const char *report_verdict_fix(const struct cls_gpu *g, int c) {
  int cudnn = 0;
  if (c == CLS_OTHER && other_host_site(g, &cudnn) && cudnn)
    return "cuDNN works on the host for each new input shape (it builds a plan for every "
           "convolution and, with torch.backends.cudnn.benchmark = True, times each candidate on "
           "the GPU): keep the input shapes few (pad or bucket them to a handful of sizes), or "
           "set torch.backends.cudnn.benchmark = False where they must vary";
  if (c == CLS_OTHER)
    return "the launching thread's own work between its CUDA calls (its Python, a library's CPU "
           "work) keeps the GPU waiting: find it from the call site's Python frames (or py-spy, "
           "perf), and move it off that thread, onto the GPU, or out of the loop";
  if (c == CLS_COPY_STALL && copy_stall_is_copies(g) && copies_offloaded(g))
    return g->steps.copy_pageable_per_step_ns * 2 >= g->steps.copy_host_per_step_ns
               ? "autograd's saved tensors are offloaded to pageable host memory "
                 "(torch.autograd.graph.save_on_cpu(pin_memory=False), or saved-tensor hooks "
                 "like it): each is copied out as the forward pass saves it and back when the "
                 "backward pass uses it, the host waiting for each copy; pin them "
                 "(save_on_cpu(pin_memory=True)) at least, and keep them on the GPU where memory "
                 "allows or recompute instead of copying (torch.utils.checkpoint)"
               : "autograd's saved tensors are offloaded to the host "
                 "(torch.autograd.graph.save_on_cpu, or saved-tensor hooks like it): each is "
                 "copied out as the forward pass saves it (the host waiting for the GPU at each "
                 "save) and back when the backward pass uses it, with no kernel beside the "
                 "copies; keep them on the GPU where memory allows, recompute instead of copying "
                 "(torch.utils.checkpoint), or offload only the largest tensors";
  if (c == CLS_COPY_STALL && copy_stall_is_copies(g) &&
      g->steps.copy_pageable_per_step_ns * 2 < g->steps.copy_host_per_step_ns)
    return "the copies are pinned already but run on the compute stream with nothing beside "
           "them: issue the next batch's copy on a side stream one step ahead (a prefetcher with "
           "torch.cuda.Stream and wait_stream/record_stream), so that it overlaps the kernels";
  return report_fix(g, c);
}

/* What fixing class c saves per step: the step without the tracer less its what-if (the replay
 * without the class, at the host's untraced pace where the trace has a tail); 0 without steps. */
uint64_t report_verdict_saves(const struct cls_gpu *g, int c) {
  if (!g->steps.count) return 0;
  uint64_t base = report_step_untraced(g), fixed = report_verdict_whatif(g, c)->best_ns;
  return base > fixed ? base - fixed : 0;
}

/* Launch overhead per step without the tracer: with an untraced tail, the point at the tail's
 * pace (the replay at the host's untraced pace less the same without the launch gaps: GPU run 49's
 * eager GPT step 5.66 ms against 5.65 idle untraced, where the range's top read 11.49); else the
 * top of the range without the tracer's measured cost (an upper bound). */
uint64_t report_launch_untraced(const struct cls_gpu *g) {
  return report_launch_at_tail(g) ? g->steps.launch_tail_per_step_ns
                                  : g->steps.launch_corrected_per_step_ns;
}

int report_launch_at_tail(const struct cls_gpu *g) {
  return g->steps.launch_tail_ok && g->replay_ok && g->steps.launch_tail_step_ns;
}

/* The step a verdict's figure is of: launch overhead at the tail's pace is of the step without
 * the tracer, the rest of the step as traced. */
const char *report_verdict_note(const struct cls_gpu *g, int c, uint64_t per) {
  if (c == CLS_LAUNCH_OVERHEAD)
    return !report_launch_at_tail(g)      ? "; without the tracer's measured cost: at most"
           : g->steps.launch_tail_assumed ? "; without the tracer, at the assumed untraced pace"
                                          : "; without the tracer, at the untraced tail's pace";
  if (c == CLS_DATA_STARVATION && per && per == g->steps.starved_untraced_per_step_ns &&
      per > g->steps.per_step_ns[c] + g->steps.per_step_shared_ns[c])
    return "; without the tracer: the loop runs at its producer's pace, and what the tracer cost "
           "the launches between batches is waiting";
  return "";
}

uint64_t report_verdict_step(const struct cls_gpu *g, int c) {
  return c == CLS_LAUNCH_OVERHEAD && report_launch_at_tail(g) ? g->steps.launch_tail_step_ns
                                                              : g->steps.step_ns;
}

/* What fixing class c is predicted to give: copy stall is fixed with its copies. */
const struct cls_whatif *report_verdict_whatif(const struct cls_gpu *g, int c) {
  return c == CLS_COPY_STALL ? &g->whatif_copy_both : &g->whatif[c];
}

uint64_t report_steps_sliver(const struct cls_gpu *g) {
  const struct cls_steps *sp = &g->steps;
  uint64_t timed = sp->count * sp->step_ns;
  return sp->count && sp->count < 20 && g->window_ns >= 1000000000ull && timed * 50 < g->window_ns
             ? timed
             : 0;
}

uint64_t report_whatif_launches_kept(const struct cls_gpu *g) {
  uint64_t h = g->whatif_host.best_ns, a = g->whatif_all.best_ns;
  return h > a + a / 20 ? h : 0;
}

uint64_t report_step_untraced(const struct cls_gpu *g) {
  const struct cls_steps *sp = &g->steps;
  if (g->replay_ok && g->corrected_step_ns) return g->corrected_step_ns;
  return sp->step_ns > sp->tracer_per_step_ns ? sp->step_ns - sp->tracer_per_step_ns : sp->step_ns;
}

double report_speedup(uint64_t step, uint64_t fixed) {
  return fixed ? (double)step / (double)fixed : 0.0;
}

/* The compute hints of GPU gi (analyzer/hints.c) over its steps (the whole window without). */
static const char *hint_name(const void *ctx, size_t file, uint32_t id) {
  const struct report *rp = ctx;
  return trace_reader_string(rp->f[file].rd, id);
}

int report_gpu_hints(const struct report *rp, size_t gi, struct hints *h) {
  const struct cls_gpu *g = &rp->cr.gpus[gi];
  const struct cls_steps *sp = &g->steps;
  const struct trace_data **td = calloc(rp->nf, sizeof *td);
  const char **hosts = calloc(rp->nf, sizeof *hosts);
  int rc = -1;
  if (td && hosts) {
    for (size_t i = 0; i < rp->nf; i++) {
      td[i] = &rp->f[i].td;
      hosts[i] = trace_reader_header(rp->f[i].rd, "host");
    }
    struct hints_input in = {.td = td,
                             .name = hint_name,
                             .ctx = rp,
                             .hosts = hosts,
                             .n = rp->nf,
                             .host = g->host,
                             .device = g->device,
                             .device_name = g->name,
                             .t0 = sp->count ? sp->first_ns : 0,
                             .t1 = sp->count ? sp->last_ns : UINT64_MAX,
                             .steps = sp->count,
                             .launch_per_step_ns = report_launch_untraced(g),
                             .launch_is_bound = !report_launch_at_tail(g),
                             .kernels_joined = g->kernels_joined,
                             .kernels_short = g->kernels_shorter_than_launch};
    rc = hints_compute(&in, h);
    /* a loader that bounds the loop (classify.c loader_bound) bounds the GPU's own fixes too */
    uint64_t base = report_step_untraced(g);
    for (size_t k = 0; !rc && sp->loader_bound_ns && k < h->n; k++) {
      uint64_t cap = base > sp->loader_bound_ns ? base - sp->loader_bound_ns : 0;
      if (h->v[k].gain_ns > cap) h->v[k].gain_ns = cap;
    }
  }
  free(td);
  free(hosts);
  if (rc) h->n = 0;
  return rc;
}

/* ---- production windows (windows.h prints them) ---- */

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1) {
  uint64_t s = a0 > b0 ? a0 : b0, e = a1 < b1 ? a1 : b1;
  return e > s ? e - s : 0;
}

/* The windows of every file (cls_windows: sorted, overlaps merged; an opening record without
 * its closing one lasts to the report's last event), clipped to the classifier's span. */
static int collect(struct report *rp) {
  const struct trace_data **td = malloc((rp->nf ? rp->nf : 1) * sizeof *td);
  if (!td) return -1;
  for (size_t f = 0; f < rp->nf; f++)
    td[f] = &rp->f[f].td;
  struct cls_window *cw;
  size_t m = cls_windows(td, rp->nf, &cw);
  free(td);
  if (m == (size_t)-1) return -1;
  if (!m) return 0;
  struct report_window *v = calloc(m, sizeof *v);
  if (!v) {
    free(cw);
    return -1;
  }
  for (size_t i = 0; i < m; i++) { /* the classifier's span is what its segments tile */
    v[i] = (struct report_window){cw[i].start, cw[i].end, cw[i].why, cw[i].open};
    if (v[i].start < rp->cr.t0) v[i].start = rp->cr.t0;
    if (v[i].end > rp->cr.t1) v[i].end = rp->cr.t1;
    if (v[i].end < v[i].start) v[i].end = v[i].start;
  }
  free(cw);
  rp->win.v = v;
  rp->win.n = m;
  return 0;
}

int report_windows_apply(struct report *rp) {
  if (collect(rp)) return -1;
  struct report_windows *w = &rp->win;
  if (!w->n) return 0;
  size_t ng = rp->cr.ngpus;
  w->gpu_ns = calloc(w->n * (ng ? ng : 1) * CLS_COUNT, sizeof *w->gpu_ns);
  if (!w->gpu_ns) return -1;
  for (size_t gi = 0; gi < ng; gi++) {
    struct cls_gpu *g = &rp->cr.gpus[gi];
    uint64_t time_ns[CLS_COUNT] = {0}, other_ns[CLS_WHY_COUNT] = {0};
    /* segments and windows are both in time order: one pass */
    size_t wi = 0;
    for (size_t s = 0; s < g->nseg; s++) {
      const struct cls_segment *sg = &g->seg[s];
      while (wi < w->n && w->v[wi].end <= sg->start)
        wi++;
      for (size_t k = wi; k < w->n && w->v[k].start < sg->end; k++) {
        uint64_t o = overlap(sg->start, sg->end, w->v[k].start, w->v[k].end);
        time_ns[sg->cls] += o;
        if (sg->cls == CLS_OTHER) other_ns[sg->why] += o;
        w->gpu_ns[(k * ng + gi) * CLS_COUNT + sg->cls] += o;
      }
    }
    /* the GPU's totals count the windows only: time outside them was not recorded, and is
     * neither busy nor idle */
    memcpy(g->time_ns, time_ns, sizeof time_ns);
    memcpy(g->other_ns, other_ns, sizeof other_ns);
    g->busy_ns = g->idle_ns = 0;
    for (int c = 0; c < CLS_COUNT; c++)
      *(c >= CLS_FIRST_IDLE ? &g->idle_ns : &g->busy_ns) += time_ns[c];
    g->window_ns = g->busy_ns + g->idle_ns;
  }
  return 0;
}

void report_windows_free(struct report *rp) {
  free(rp->win.v);
  free(rp->win.gpu_ns);
  memset(&rp->win, 0, sizeof rp->win);
}

int report_same_job(const char *a, const char *b, int *same) {
  *same = a && b && *a && *b && !strcmp(a, b);
  return a && b && *a && *b && !*same ? -1 : 0;
}

/* one Python function's share of a class's sampled host work, or of its launches
 * (report_verdict_site) */
struct vframe {
  const char *file, *fn;
  size_t file_len, fn_len;
  size_t lines; /* sampled sites (lines) it is on the stack of */
  size_t first; /* the largest of them */
  size_t last;  /* the last one counted (a recursive function counts once a site) */
  uint64_t ns;
  int on_top; /* on the stack of the class's largest site: 1, its innermost user function 2 */
};

/* Of `other`'s call sites, the largest in the steps whose gaps were the launching thread's work
 * outside CUDA (site_text names them "host_outside_cuda: ..."), or NULL; *cudnn: whether the
 * calls that ended most of that time were cuDNN's (its libraries: "@ libcudnn") */
#define HOST_SITE "host_outside_cuda: "
static const struct cls_site *other_host_site(const struct cls_gpu *g, int *cudnn) {
  const struct cls_site *top = NULL;
  uint64_t all = 0, dnn = 0;
  for (size_t k = 0; k < g->nsites[CLS_OTHER]; k++) {
    const struct cls_site *st = &g->sites[CLS_OTHER][k];
    if (strncmp(st->site, HOST_SITE, strlen(HOST_SITE)) || !st->steps_ns) continue;
    if (!top) top = st;
    all += st->steps_ns;
    if (strstr(st->site, "@ libcudnn")) dnn += st->steps_ns;
  }
  if (cudnn) *cudnn = all && dnn * 2 > all;
  return top;
}

const char *report_verdict_site(const struct cls_gpu *g, int c, char *buf, size_t cap) {
  if (c == CLS_COPY_STALL && copy_stall_is_copies(g) && g->nsites[CLS_COPY] &&
      g->sites[CLS_COPY][0].steps_ns)
    c = CLS_COPY;
  if (c == CLS_OTHER && g->nsites[c]) { /* (else its top site: one the steps did not hold) */
    const struct cls_site *st = other_host_site(g, NULL);
    return st ? st->site + strlen(HOST_SITE) : g->sites[c][0].site;
  }
  if (c < 0 || !g->nsites[c]) return NULL;
  const struct cls_site *st = g->sites[c];
  uint64_t tot = 0, top = st[0].steps_ns;
  enum { MAXF = 64 };
  struct vframe f[MAXF];
  size_t nf = 0;
  /* launch overhead: the launches' own sites too (a Python loop that launches a few kernels per
   * item, one sample at a time: its lines each launch less than the model's forward line, and
   * together more, GPU run 142) */
  int launches = c == CLS_LAUNCH_OVERHEAD;
  for (size_t k = 0; k < g->nsites[c]; k++) {
    tot += st[k].steps_ns;
    if (!st[k].python || (!launches && !strstr(st[k].site, "(sampled)"))) continue;
    int inner = 1; /* the site's innermost user frame still to come */
    for (const char *p = st[k].python; *p;) {
      size_t l = strcspn(p, "\n"), fl, nl;
      const char *file, *fn;
      long line;
      if (pyframe_parse(p, l, &file, &fl, &line, &fn, &nl) && pyframe_is_user(file, fl)) {
        size_t j = 0;
        while (j < nf && !(f[j].file_len == fl && f[j].fn_len == nl &&
                           !memcmp(f[j].file, file, fl) && !memcmp(f[j].fn, fn, nl)))
          j++;
        if (j == nf && nf < MAXF) f[nf++] = (struct vframe){file, fn, fl, nl, 0, k, SIZE_MAX, 0, 0};
        if (j < nf && !k && !f[j].on_top) f[j].on_top = 1 + inner;
        inner = 0;
        if (j < nf && f[j].last != k) {
          f[j].ns += st[k].steps_ns;
          f[j].lines++;
          f[j].last = k;
        }
      }
      p += l;
      if (*p == '\n') p++;
    }
  }
  /* launches: the function off the largest site's stack that launched most, where that is half
   * as much again as the largest site (a per-sample loop of a few kernels an item beside the
   * model's forward line, which launches the most of any one line: GPU run 142) */
  const struct vframe *best = NULL;
  for (size_t j = 0; launches && j < nf; j++)
    if (!f[j].on_top && f[j].lines >= 2 && f[j].ns * 2 > top * 3 && (!best || f[j].ns > best->ns))
      best = &f[j];
  /* else the most specific function (the least time) that holds half of the class's time; for
   * launches, the largest site's own function (a model's block whose lines each launch a
   * little) and not its callers (the loop's step function holds every launch of the step) */
  int off_top = best != NULL;
  for (size_t j = 0; !off_top && j < nf; j++)
    if (f[j].lines >= 2 && f[j].ns * 2 >= tot && f[j].ns * 2 > top * 3 &&
        (!launches || f[j].on_top != 1) && (!best || f[j].ns < best->ns))
      best = &f[j];
  if (!best) return st[0].site;
  const char *base = best->file;
  for (size_t k = 0; k < best->file_len; k++)
    if (best->file[k] == '/') base = best->file + k + 1;
  if (launches) { /* the function, its lines that launched, and its largest */
    snprintf(buf, cap, "%.*s %.*s: the launches of %zu of its lines (the most at %s)",
             (int)(best->file_len - (size_t)(base - best->file)), base, (int)best->fn_len, best->fn,
             best->lines, st[best->first].site);
    return buf;
  }
  /* what the sampled work ended in ("then cudaMemcpyAsync"), from its largest site */
  const char *then = strstr(st[best->first].site, "(sampled)") + strlen("(sampled)");
  snprintf(buf, cap, "%.*s %.*s: host work (sampled at %zu of its lines)%s",
           (int)(best->file_len - (size_t)(base - best->file)), base, (int)best->fn_len, best->fn,
           best->lines, then);
  return buf;
}

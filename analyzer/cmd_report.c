/* slack report: where each GPU's time went and why it was idle (docs/slack-report.md).
 *
 * Loads every trace given (one per process), runs the classifier (classify.h) over them together
 * and prints, per GPU: the time per class, steps and per-step time per class, the what-if of each
 * class, the tracer's own cost, the top call sites per class with the usual fix, the top kernels;
 * then the host calls and the launch join over all files. With --html, the same as one
 * self-contained page with charts (report_html.c). The model itself is report.h (report.c loads
 * and classifies; report_window.c reads one long trace by windows, --window-records). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "frames.h"
#include "hints.h"
#include "join.h"
#include "json.h"
#include "ranks.h"
#include "report.h"
#include "slack.h"
#include "tail.h"
#include "windows.h"

static const char usage[] =
    "usage: slack report [--json | --html OUT.html] [--top N] [--sites N] [--site TEXT]\n"
    "                    [--cupti-call-ns NS] FILE...\n"
    "  --json              one JSON object instead of text\n"
    "  --html OUT.html     one self-contained HTML page with charts ('-': standard output)\n"
    "  --top N             kernels listed per GPU (default 10)\n"
    "  --sites N           call sites listed per class (default 5)\n"
    "  --site TEXT         the time of the call sites that TEXT names (a Python line such as\n"
    "                      train.py:87, a function, a library) in each class, per GPU\n"
    "  --cupti-call-ns NS  CUPTI's own cost per traced launch, copy or memset (default 3300)\n"
    "  --steps N           the loop ran N iterations in the trace: of slack's step candidates\n"
    "                      (and the kernels that run about N times) the closest count wins;\n"
    "                      else, where they found k times N, every k of them make one\n"
    "  --step-kernel NAME  steps start at each kernel whose name contains NAME\n"
    "  --merge             classify several traces together even when they did not run at the\n"
    "                      same time (by default that is refused: two runs are not one job)\n"
    "  --window-records N  a trace of more timed records than N is classified in windows of\n"
    "                      about N records, with memory bounded by the window (default: over\n"
    "                      500000, in windows of 250000, of 100000 where the first holds 20\n"
    "                      steps; or SLACK_REPORT_WINDOW_RECORDS; 0: the whole trace at\n"
    "                      once); while they hold fewer than 2 steps each,\n"
    "                      read again in windows of 500000 (N: twice as large, up to 500000);\n"
    "                      where they found steps inside the loop's iterations (more than\n"
    "                      twice the optimizer steps or batch copies), read again whole (a\n"
    "                      trace of up to 2000000 records) or in windows of 12 iterations;\n"
    "                      the default's windows of fewer than 12 iterations each: whole\n"
    "  --no-tail-fit       with an untraced tail (SLACK_TAIL_MS): the replay without the tracer\n"
    "                      at each thread's pace in the tail only, not fitted to the loop's\n"
    "                      iterations there (a trace read in windows is not fitted either)\n"
    "  --no-tail           an untraced tail's pace is not used: the report of the trace as if\n"
    "                      recorded without one (its calls stay out of the window)\n"
    "  --host-slowdown F   a trace without an untraced tail: the tracer slowed its host's calls\n"
    "                      F times (default 1.45, the median of the H200's measured tails;\n"
    "                      1: not at all, only CUPTI's cost per call is taken out)\n";

static const char *fn_label(size_t f) {
  return f < SLK_FN_COUNT ? slk_fn_name((uint32_t)f) : "other";
}

/* ---- JSON ---- */

/* --site TEXT: the sites whose name, Python frames or native stack contain TEXT. */
static const char *site_query;
static int site_matches(const struct cls_site *s, const char *q) {
  return strstr(s->site, q) || (s->python && strstr(s->python, q)) ||
         (s->stack && strstr(s->stack, q));
}
static uint64_t site_query_ns(const struct cls_gpu *g, int c, size_t *nmatch) {
  uint64_t ns = 0;
  for (size_t k = 0; k < g->nsites[c]; k++)
    if (site_matches(&g->sites[c][k], site_query)) {
      ns += g->sites[c][k].ns;
      (*nmatch)++;
    }
  return ns;
}

static void json_classes(struct json *j, const char *key, const uint64_t *v) {
  json_obj(j, key);
  for (int c = 0; c < CLS_COUNT; c++)
    json_u64(j, cls_name(c), v[c]);
  json_obj_end(j);
}

static void json_whatif(struct json *j, const char *key, const struct cls_whatif *wi, int replay,
                        uint64_t step_ns) {
  json_obj(j, key);
  json_u64(j, "step_ns_if_fixed", wi->best_ns);
  json_double(j, "speedup", report_speedup(step_ns, wi->best_ns));
  json_u64(j, "step_ns_if_removed", wi->best_ns);
  json_u64(j, "bound_ns", wi->bound_ns);
  if (wi->host_bound_ns) json_u64(j, "host_bound_ns", wi->host_bound_ns);
  if (wi->loader_bound_ns) json_u64(j, "loader_bound_ns", wi->loader_bound_ns);
  if (replay) {
    json_u64(j, "replay_ns", wi->replay_ns);
    json_u64(j, "replay_corrected_ns", wi->replay_corrected_ns);
  } else {
    json_null(j, "replay_ns");
    json_null(j, "replay_corrected_ns");
  }
  json_obj_end(j);
}

/* The GPU's own work can be the larger saving (GPU run 108: a detector in strict fp32, cuDNN's
 * FFT convolutions 92% of the kernel time; the verdict launch overhead, 1.35x, where mixed
 * precision's hint said about 900 of 1,150 ms): the index in *h of GPU gi's fp32_math hint when
 * it saves more than the fix of verdict class vc, else -1; said next to the verdict, which is of
 * the stalls only. The other hints are stalls seen from the kernels (kernel_storm: the launch
 * gaps, launch overhead's own time; copy_bandwidth: pageable copies), which the verdict weighs
 * already (GPU run 109's detector: a storm's 8.6 ms beside a serialization verdict). */
static int larger_hint(const struct report *rp, size_t gi, int vc, struct hints *h) {
  const struct cls_gpu *g = &rp->cr.gpus[gi];
  const struct cls_whatif *wi = report_verdict_whatif(g, vc);
  uint64_t base = report_step_untraced(g);
  if (!g->steps.count || base <= wi->best_ns || report_gpu_hints(rp, gi, h)) return -1;
  for (size_t k = 0; k < h->n; k++)
    if (!strcmp(h->v[k].kind, "fp32_math") && h->v[k].gain_ns > base - wi->best_ns) return (int)k;
  return -1;
}

static void print_hints(const struct report *rp, size_t gi) {
  const struct cls_gpu *g = &rp->cr.gpus[gi];
  struct hints h;
  char b1[32], b2[32], b3[32];
  if (report_gpu_hints(rp, gi, &h) || !h.n) return;
  printf("  compute hints (from the kernels and copies; the saving is an estimate):\n");
  for (size_t k = 0; k < h.n; k++) {
    const struct hint *x = &h.v[k];
    /* the savings are of the program without the tracer (the launch overhead's part at the
     * untraced pace): against the step without it, as the verdict's predictions */
    uint64_t step = g->steps.count ? report_step_untraced(g) : 0;
    if (!x->gain_ns)
      printf("    %-14s %s per step; the saving is not known from this trace\n", x->kind,
             slack_fmt_ns(b1, sizeof b1, x->per_step_ns));
    else
      printf("    %-14s %s per step; saves about %s%s%s%s\n", x->kind,
             slack_fmt_ns(b1, sizeof b1, x->per_step_ns), slack_fmt_ns(b2, sizeof b2, x->gain_ns),
             step ? " (step " : "",
             step && step > x->gain_ns ? slack_fmt_ns(b3, sizeof b3, step - x->gain_ns) : "",
             step ? ")" : "");
    printf("      evidence: %s\n      fix: %s\n", x->evidence, x->suggestion);
  }
}

static void json_hints(struct json *j, const struct report *rp, size_t gi) {
  const struct cls_gpu *g = &rp->cr.gpus[gi];
  struct hints h;
  json_arr(j, "compute_hints");
  if (!report_gpu_hints(rp, gi, &h))
    for (size_t k = 0; k < h.n; k++) {
      const struct hint *x = &h.v[k];
      json_obj(j, NULL);
      json_str(j, "kind", x->kind);
      json_u64(j, "per_step_ns", x->per_step_ns);
      json_u64(j, "gain_ns", x->gain_ns);
      uint64_t step = g->steps.count ? report_step_untraced(g) : 0;
      if (step > x->gain_ns) json_u64(j, "step_ns_if_taken", step - x->gain_ns);
      json_str(j, "evidence", x->evidence);
      json_str(j, "fix", x->suggestion);
      json_obj_end(j);
    }
  json_arr_end(j);
}

static void json_gpu(struct json *j, const struct report *rp, size_t gi, size_t top,
                     size_t nsites) {
  const struct cls_gpu *g = &rp->cr.gpus[gi];
  const struct cls_steps *sp = &g->steps;
  json_obj(j, NULL);
  json_u64(j, "device", g->device);
  json_str(j, "host", g->host);
  json_str(j, "name", g->name);
  json_u64(j, "processes", g->processes);
  json_u64(j, "window_ns", g->window_ns);
  json_u64(j, "busy_ns", g->busy_ns);
  json_u64(j, "idle_ns", g->idle_ns);
  json_u64(j, "kernels", g->kernels);
  json_u64(j, "memcpys", g->memcpys);
  json_u64(j, "memsets", g->memsets);
  json_u64(j, "kernel_ns", g->kernel_ns);
  json_u64(j, "idle_gaps", g->gaps);
  json_classes(j, "time_ns", g->time_ns);
  uint64_t comm = ranks_comm_kernel_ns(rp, gi); /* only where collectives ran */
  if (comm) {
    json_obj(j, "communication");
    json_u64(j, "kernel_ns", comm);
    json_u64(j, "exposed_ns", g->time_ns[CLS_COMMUNICATION]);
    json_u64(j, "overlapped_ns",
             comm > g->time_ns[CLS_COMMUNICATION] ? comm - g->time_ns[CLS_COMMUNICATION] : 0);
    json_obj_end(j);
  }
  json_u64(j, "launch_overhead_corrected_ns", g->launch_corrected_ns);
  json_u64(j, "launch_overhead_floor_ns", g->launch_floor_ns);
  json_u64(j, "serialization_lost_lead_ns", g->lost_lead_ns);
  json_obj(j, "other_ns");
  for (int w = 1; w < CLS_WHY_COUNT; w++)
    json_u64(j, cls_reason_name(w), g->other_ns[w]);
  json_obj_end(j);
  json_obj(j, "launch_evidence");
  json_u64(j, "kernels_joined", g->kernels_joined);
  json_u64(j, "kernels_shorter_than_launch", g->kernels_shorter_than_launch);
  json_u64(j, "launches_joined", g->launches_joined);
  json_u64(j, "launches_returned_after_kernel", g->launches_waited);
  json_bool(j, "launch_blocking", g->launch_blocking);
  json_obj_end(j);

  json_obj(j, "steps");
  json_u64(j, "count", sp->count);
  json_u64(j, "warmup", sp->warmup);
  json_u64(j, "prefetched", sp->prefetched);
  json_u64(j, "shape_new", sp->shape_new);
  json_u64(j, "shape_new_step_ns", sp->shape_new_step_ns);
  json_u64(j, "trailing", sp->trailing);
  json_u64(j, "paused", sp->paused);
  json_u64(j, "cycle", sp->cycle);
  json_u64(j, "uncycled", sp->uncycled);
  json_u64(j, "iterations",
           sp->count
               ? sp->warmup + sp->count + sp->shape_new + sp->paused + sp->trailing + sp->uncycled
               : 0);
  json_str(j, "source", sp->source);
  json_str(j, "detail", sp->count ? sp->detail : NULL);
  json_u64(j, "step_ns", sp->step_ns);
  /* the text's note: the steps add up to a sliver of the window (report_steps_sliver) */
  json_bool(j, "window_sliver", report_steps_sliver(g) != 0);
  json_classes(j, "per_step_ns", sp->per_step_ns);
  json_classes(j, "per_step_shared_ns", sp->per_step_shared_ns);
  json_u64(j, "launch_overhead_corrected_per_step_ns", sp->launch_corrected_per_step_ns);
  json_u64(j, "launch_overhead_floor_per_step_ns", sp->launch_floor_per_step_ns);
  json_u64(j, "copy_host_transfer_per_step_ns", sp->copy_host_per_step_ns);
  json_u64(j, "copy_host_pageable_per_step_ns", sp->copy_pageable_per_step_ns);
  json_u64(j, "copy_stall_copies", sp->copy_stall_copies);
  json_u64(j, "copy_stall_copy_ns", sp->copy_stall_copy_ns);
  json_u64(j, "other_host_per_step_ns", sp->other_host_per_step_ns);
  json_u64(j, "stack_capture_per_step_ns", sp->stacks_per_step_ns);
  json_u64(j, "serialization_lost_lead_per_step_ns", sp->lost_lead_per_step_ns);
  json_u64(j, "serialization_roundtrip_per_step_ns", sp->roundtrip_per_step_ns);
  json_u64(j, "data_starvation_loader_wait_per_step_ns", sp->loader_wait_per_step_ns);
  json_u64(j, "data_starvation_untraced_per_step_ns", sp->starved_untraced_per_step_ns);
  if (sp->loader_bound_ns) {
    if (sp->loader_busy > 0) json_double(j, "loader_busy_share", sp->loader_busy);
    if (sp->producer_wait > 0) json_double(j, "producer_wait_share", sp->producer_wait);
    if (sp->producer_wait > 0) json_bool(j, "producer_traced", sp->producer_traced);
    json_u64(j, "loader_bound_ns", sp->loader_bound_ns);
  }
  if (sp->launch_tail_per_step_ns)
    json_u64(j,
             sp->launch_tail_assumed ? "launch_overhead_assumed_pace_per_step_ns"
                                     : "launch_overhead_untraced_tail_per_step_ns",
             sp->launch_tail_per_step_ns);
  if (sp->launch_assumed_hi_per_step_ns) {
    json_u64(j, "launch_overhead_assumed_pace_low_per_step_ns", sp->launch_assumed_lo_per_step_ns);
    json_u64(j, "launch_overhead_assumed_pace_high_per_step_ns", sp->launch_assumed_hi_per_step_ns);
  }
  json_u64(j, "tracer_per_step_ns", sp->tracer_per_step_ns);
  json_arr(j, "candidates");
  for (size_t k = 0; k < sp->ncand; k++) {
    json_obj(j, NULL);
    json_str(j, "rule", sp->cand[k].rule);
    json_u64(j, "count", sp->cand[k].count);
    json_u64(j, "step_ns", sp->cand[k].step_ns);
    json_str(j, "anchor", sp->cand[k].what);
    json_obj_end(j);
  }
  json_arr_end(j);
  json_obj_end(j);

  json_obj(j, "callsites");
  for (int c = 0; c < CLS_COUNT; c++) {
    json_arr(j, cls_name(c));
    for (size_t k = 0; k < g->nsites[c] && k < nsites; k++) {
      json_obj(j, NULL);
      json_str(j, "site", g->sites[c][k].site);
      json_u64(j, "ns", g->sites[c][k].ns);
      json_u64(j, "in_steps_ns", g->sites[c][k].steps_ns);
      if (g->sites[c][k].python) {
        json_arr(j, "python");
        for (const char *p = g->sites[c][k].python; *p;) {
          size_t len = strcspn(p, "\n");
          const char *file, *fn;
          size_t fl, nl;
          long line;
          if (pyframe_parse(p, len, &file, &fl, &line, &fn, &nl)) {
            char fb[512], nb[256];
            snprintf(fb, sizeof fb, "%.*s", (int)fl, file);
            snprintf(nb, sizeof nb, "%.*s", (int)nl, fn);
            json_obj(j, NULL);
            json_str(j, "file", fb);
            json_u64(j, "line", line > 0 ? (uint64_t)line : 0);
            json_str(j, "function", nb);
            json_bool(j, "user", pyframe_is_user(file, fl));
            json_obj_end(j);
          }
          p += len;
          if (*p == '\n') p++;
        }
        json_arr_end(j);
      }
      if (g->sites[c][k].stack) {
        json_arr(j, "stack");
        char *dup = strdup(g->sites[c][k].stack);
        for (char *save = NULL, *f = dup ? strtok_r(dup, "\n", &save) : NULL; f;
             f = strtok_r(NULL, "\n", &save))
          json_str(j, NULL, f);
        free(dup);
        json_arr_end(j);
      }
      json_obj_end(j);
    }
    json_arr_end(j);
  }
  json_obj_end(j);
  if (site_query) {
    size_t nm = 0;
    json_obj(j, "site_query");
    json_str(j, "text", site_query);
    json_obj(j, "time_ns");
    for (int c = 0; c < CLS_COUNT; c++)
      json_u64(j, cls_name(c), site_query_ns(g, c, &nm));
    json_obj_end(j);
    json_u64(j, "sites", nm);
    json_obj_end(j);
  }
  json_hints(j, rp, gi);
  json_obj(j, "fixes");
  for (int c = 0; c < CLS_COUNT; c++)
    json_str(j, cls_name(c), cls_fix(c));
  json_obj_end(j);

  json_obj(j, "whatif");
  if (sp->count) {
    for (int c = 0; c < CLS_COUNT; c++)
      json_whatif(j, cls_name(c), &g->whatif[c], g->replay_ok, report_step_untraced(g));
    json_whatif(j, "copy_and_copy_stall", &g->whatif_copy_both, g->replay_ok,
                report_step_untraced(g));
    json_whatif(j, "all_stalls", &g->whatif_all, g->replay_ok, report_step_untraced(g));
    json_whatif(j, "all_but_launch_overhead", &g->whatif_host, g->replay_ok,
                report_step_untraced(g));
  }
  json_obj_end(j);
  {
    uint64_t per;
    int vc = report_verdict(g, &per);
    json_obj(j, "verdict");
    json_str(j, "class", vc < 0 ? "none" : cls_name(vc));
    if (vc == CLS_OTHER) json_str(j, "reason", "host_outside_cuda");
    if (vc >= 0) {
      const struct cls_whatif *wi = report_verdict_whatif(g, vc);
      json_u64(j, "per_step_ns", per); /* its own time and what it shares (chained causes) */
      json_u64(j, "shared_per_step_ns", sp->per_step_shared_ns[vc]);
      json_u64(j, "saves_per_step_ns", report_verdict_saves(g, vc));
      uint64_t of = report_verdict_step(g, vc);
      json_double(j, "share", of ? (double)per / (double)of : 0.0);
      if (vc == CLS_LAUNCH_OVERHEAD) /* which figure per_step_ns is */
        json_str(j, "basis",
                 !report_launch_at_tail(g)      ? "without_tracer_cost_max"
                 : g->steps.launch_tail_assumed ? "assumed_pace"
                                                : "untraced_tail");
      char vs[320];
      json_str(j, "site", report_verdict_site(g, vc, vs, sizeof vs));
      json_str(j, "fix", report_verdict_fix(g, vc));
      json_u64(j, "step_ns_if_fixed", wi->best_ns);
      json_double(j, "speedup", report_speedup(report_step_untraced(g), wi->best_ns));
      struct hints h;
      int lh = larger_hint(rp, gi, vc, &h);
      if (lh >= 0) { /* the GPU's own work saves more (the text: "larger:") */
        json_obj(j, "larger_compute_hint");
        json_str(j, "kind", h.v[lh].kind);
        json_u64(j, "gain_per_step_ns", h.v[lh].gain_ns);
        json_obj_end(j);
      }
      uint64_t nper;
      int nc = report_verdict_next(g, vc, &nper);
      if (nc >= 0) { /* the stall after it (the text: "then:") */
        uint64_t nof = report_verdict_step(g, nc);
        json_obj(j, "next");
        json_str(j, "class", cls_name(nc));
        json_u64(j, "per_step_ns", nper);
        json_double(j, "share", nof ? (double)nper / (double)nof : 0.0);
        json_str(j, "site", report_verdict_site(g, nc, vs, sizeof vs));
        json_u64(j, "step_ns_if_fixed", report_verdict_whatif(g, nc)->best_ns);
        json_double(j, "speedup",
                    report_speedup(report_step_untraced(g), report_verdict_whatif(g, nc)->best_ns));
        json_obj_end(j);
      }
    }
    if (sp->count) {
      json_u64(j, "all_stalls_step_ns_if_fixed", g->whatif_all.best_ns);
      json_double(j, "all_stalls_speedup",
                  report_speedup(report_step_untraced(g), g->whatif_all.best_ns));
      json_u64(j, "all_but_launch_overhead_step_ns_if_fixed", g->whatif_host.best_ns);
    }
    json_obj_end(j);
  }
  json_obj(j, "replay");
  json_bool(j, "ok", g->replay_ok);
  json_u64(j, "measured_step_ns", sp->step_ns);
  json_u64(j, "replayed_step_ns", g->replay_step_ns);
  json_double(j, "error", g->replay_error);
  json_u64(j, "corrected_step_ns", g->corrected_step_ns);
  json_obj_end(j);

  json_u64(j, "tracer_overhead_ns", g->tracer.total_ns);
  json_obj(j, "tracer");
  json_u64(j, "calls", g->tracer.calls);
  json_u64(j, "hook_ns", g->tracer.hook_ns);
  json_u64(j, "cupti_calls", g->tracer.cupti_calls);
  json_u64(j, "cupti_ns", g->tracer.cupti_ns);
  json_str(j, "cupti_call_source", g->tracer.cupti_source ? g->tracer.cupti_source : "assumed");
  if (g->tracer.probe_launches) {
    json_obj(j, "probe");
    json_u64(j, "launches", g->tracer.probe_launches);
    json_u64(j, "launch_call_on_ns", g->tracer.probe_on_ns);
    json_u64(j, "launch_call_off_ns", g->tracer.probe_off_ns);
    json_str(j, "off", g->tracer.probe_detached ? "detached" : "records_disabled");
    if (g->tracer.probe_hooked_ns) /* format 2.6 */
      json_u64(j, "launch_call_hooked_ns", g->tracer.probe_hooked_ns);
    if (g->tracer.probe_api_off_ns)
      json_u64(j, "launch_call_api_off_ns", g->tracer.probe_api_off_ns);
    json_obj_end(j);
    /* per launch, measured in the run: slack's hooks, CUPTI's API records (part of CUPTI's cost,
     * whose per-call figure is cupti_ns / cupti_calls) */
    if (g->tracer.probe_hooked_ns) json_u64(j, "hook_per_launch_ns", g->tracer.hook_launch_ns);
    if (g->tracer.probe_api_off_ns)
      json_u64(j, "api_records_per_launch_ns", g->tracer.api_launch_ns);
  }
  json_u64(j, "records_ns", g->tracer.records_ns);
  json_u64(j, "in_idle_ns", g->tracer.in_idle_ns);
  json_u64(j, "module_loading_ns", g->tracer.loading_ns);
  if (g->tracer.pace_assumed > 1.0) {
    json_obj(j, "assumed_pace"); /* no tail timed the host untraced (tail.h) */
    json_double(j, "host_slowdown", g->tracer.pace_assumed);
    json_str(j, "source", g->tracer.pace_given ? "given" : "assumed");
    if (g->tracer.tail_ignored) json_bool(j, "tail_ignored", 1);
    json_u64(j, "call_interval_traced_ns", g->tracer.pace_traced_ns);
    json_u64(j, "intervals_traced", g->tracer.pace_ntraced);
    json_obj_end(j);
  }
  if (g->tracer.tail_calls && g->tracer.tail_taken) {
    json_obj(j, "cupti_taken");
    json_u64(j, "calls_after", g->tracer.tail_calls);
    json_u64(j, "span_after_ns", g->tracer.tail_ns);
    json_str(j, "how", g->tracer.tail_taken == SLK_TAKEN_STUCK ? "stuck" : "other_client");
    json_obj_end(j);
  } else if (g->tracer.tail_calls) {
    json_obj(j, "untraced_tail");
    json_u64(j, "calls", g->tracer.tail_calls);
    if (g->tracer.tail_mid) json_str(j, "where", "mid-run (SLACK_PACE_PROBE)");
    json_u64(j, "span_ns", g->tracer.tail_ns);
    json_u64(j, "call_interval_traced_ns", g->tracer.tail_traced_ns);
    json_u64(j, "call_interval_untraced_ns", g->tracer.tail_untraced_ns);
    json_u64(j, "intervals_traced", g->tracer.tail_ntraced);
    json_u64(j, "intervals_untraced", g->tracer.tail_nuntraced);
    json_double(j, "host_slowdown", g->tracer.tail_factor);
    json_u64(j, "long_stretch_traced_ns", g->tracer.tail_long_traced_ns);
    json_u64(j, "long_stretch_untraced_ns", g->tracer.tail_long_untraced_ns);
    json_u64(j, "long_stretches_traced", g->tracer.tail_nlong_traced);
    json_u64(j, "long_stretches_untraced", g->tracer.tail_nlong_untraced);
    json_double(j, "long_stretch_slowdown", g->tracer.tail_factor_long);
    json_arr(j, "threads");
    for (size_t k = 0; k < g->tracer.tail_nthreads; k++) {
      const struct tail_thread *t = &g->tracer.tail_threads[k];
      json_obj(j, NULL);
      json_u64(j, "tid", t->tid);
      json_u64(j, "call_interval_traced_ns", t->traced_ns);
      json_u64(j, "call_interval_untraced_ns", t->untraced_ns);
      json_u64(j, "intervals_traced", t->ntraced);
      json_u64(j, "intervals_untraced", t->nuntraced);
      json_double(j, "host_slowdown", t->factor);
      json_obj_end(j);
    }
    json_arr_end(j);
    json_u64(j, "serialization_lead_ns", g->tracer.lead_ns);
    if (g->tracer.iter_untraced_ns) {
      json_obj(j, "iterations");
      json_str(j, "anchor", slk_fn_name(g->tracer.iter_fn));
      json_u64(j, "calls", g->tracer.iter_calls);
      json_u64(j, "traced", g->tracer.iter_ntraced);
      json_u64(j, "traced_ns", g->tracer.iter_traced_ns);
      json_u64(j, "untraced", g->tracer.iter_nuntraced);
      json_u64(j, "untraced_ns", g->tracer.iter_untraced_ns);
      json_u64(j, "untraced_q1_ns", g->tracer.iter_untraced_lo_ns);
      json_u64(j, "untraced_q3_ns", g->tracer.iter_untraced_hi_ns);
      json_u64(j, "replayed_ns", g->tracer.iter_replayed_ns);
      json_str(j, "fit",
               g->tracer.gain_fit == 2    ? "fitted"
               : g->tracer.gain_fit == 1  ? "within the quartiles"
               : g->tracer.gain_fit == -1 ? "out of reach"
               : g->tracer.gain_fit == -2 ? "tail slower"
               : g->tracer.gain_fit == 3  ? "not in windows"
               : g->tracer.gain_fit == 4  ? "off"
                                          : "none");
      json_double(j, "host_pace_gain", g->tracer.gain);
      if (g->tracer.gain_fit == -1) json_u64(j, "nearest_ns", g->tracer.iter_reach_ns);
      json_obj_end(j);
    }
    json_obj_end(j);
  }
  json_obj_end(j);

  json_arr(j, "top_kernels");
  for (size_t t = 0; t < rp->ntop[gi] && t < top; t++) {
    const struct kernel_sum *k = &rp->top[gi][t];
    json_obj(j, NULL);
    json_str(j, "name", k->name);
    json_u64(j, "count", k->count);
    json_u64(j, "total_ns", k->total_ns);
    json_u64(j, "avg_ns", k->total_ns / k->count);
    json_double(j, "share", g->kernel_ns ? (double)k->total_ns / (double)g->kernel_ns : 0.0);
    json_obj_end(j);
  }
  json_arr_end(j);
  json_obj_end(j);
}

static void print_json(const struct report *rp, size_t top, size_t nsites) {
  struct json j;
  json_begin(&j, stdout);
  json_obj(&j, NULL);
  json_str(&j, "file", rp->f[0].path);
  json_arr(&j, "files");
  for (size_t i = 0; i < rp->nf; i++)
    json_str(&j, NULL, rp->f[i].path);
  json_arr_end(&j);
  json_u64(&j, "start_ns", rp->cr.t0);
  json_u64(&j, "end_ns", rp->cr.t1);
  json_u64(&j, "window_ns", rp->cr.t1 - rp->cr.t0);
  report_windows_json(&j, rp);
  if (rp->windows) json_u64(&j, "analysis_windows", rp->windows);
  json_arr(&j, "gpus");
  for (size_t i = 0; i < rp->cr.ngpus; i++)
    json_gpu(&j, rp, i, top, nsites);
  json_arr_end(&j);

  json_obj(&j, "host");
  json_u64(&j, "calls", rp->host_calls);
  json_u64(&j, "sync_blocked_ns", rp->host_blocked_ns);
  json_arr(&j, "functions");
  for (size_t o = 0; o <= SLK_FN_COUNT; o++) {
    size_t f = rp->fn_order[o];
    if (!rp->fn[f].calls) continue;
    json_obj(&j, NULL);
    json_str(&j, "fn", fn_label(f));
    json_u64(&j, "calls", rp->fn[f].calls);
    json_u64(&j, "total_ns", rp->fn[f].total_ns);
    json_u64(&j, "sync_blocked_ns", rp->fn[f].blocked_ns);
    json_obj_end(&j);
  }
  json_arr_end(&j);
  json_arr(&j, "threads");
  for (size_t t = 0; t < rp->nthreads; t++) {
    const struct thread_sum *th = &rp->threads[t];
    json_obj(&j, NULL);
    if (rp->nf > 1) json_str(&j, "process", rp->f[th->file].label);
    json_u64(&j, "tid", th->tid);
    json_str(&j, "name", th->name ? trace_reader_string(rp->f[th->file].rd, th->name) : NULL);
    json_u64(&j, "calls", th->calls);
    json_u64(&j, "in_calls_ns", th->busy_ns);
    json_u64(&j, "sync_blocked_ns", th->blocked_ns);
    json_obj_end(&j);
  }
  json_arr_end(&j);
  json_obj_end(&j);

  json_obj(&j, "launch_join");
  json_u64(&j, "kernels", rp->lj.kernels);
  json_u64(&j, "with_launch", rp->lj.joined);
  json_u64(&j, "no_api_record", rp->lj.no_api);
  json_u64(&j, "no_host_record", rp->lj.no_host);
  json_u64(&j, "in_graphs", rp->lj.graph_kernels);
  json_u64(&j, "in_graphs_with_launch", rp->lj.graph_joined);
  json_u64(&j, "with_launch_by_order", rp->lj.by_order);
  json_obj_end(&j);

  json_u64(&j, "dropped", rp->dropped);
  json_u64(&j, "truncated_bytes", rp->truncated);
  json_obj_end(&j);
  json_end(&j);
}

/* ---- text ---- */

/* Kernel names and call sites can be long: the text shows the first width bytes. */
static void print_name(const char *s, int width) {
  int len = (int)strlen(s);
  if (len <= width)
    printf("%s", s);
  else
    printf("%.*s...", width - 3, s);
}

/* A call site's callers, one per line under it, the first STACK_LINES of them. */
#define STACK_LINES 6
static void print_stack(const char *stack) {
  int n = 0;
  for (const char *p = stack; p && *p && n < STACK_LINES; n++) {
    size_t len = strcspn(p, "\n");
    printf("%24s< %.*s%s\n", "", (int)(len > 96 ? 93 : len), p, len > 96 ? "..." : "");
    p += len;
    if (*p == '\n') p++;
  }
}

/* A call site's Python frames under it: the user's own frames (innermost first, at most 3),
 * then how many library frames (torch, the standard library) were folded. */
static void print_python(const char *py) {
  if (!py) return;
  int shown = 0, folded = 0;
  for (const char *p = py; *p;) {
    size_t len = strcspn(p, "\n");
    const char *file, *fn;
    size_t fl, nl;
    long line;
    if (pyframe_parse(p, len, &file, &fl, &line, &fn, &nl) && pyframe_is_user(file, fl) &&
        shown < 3) {
      printf("%24spy %.*s\n", "", (int)(len > 96 ? 96 : len), p);
      shown++;
    } else {
      folded++;
    }
    p += len;
    if (*p == '\n') p++;
  }
  if (folded) printf("%24spy (%d library frame%s folded)\n", "", folded, folded == 1 ? "" : "s");
}

/* A windowed report whose windows found fewer than 2 steps each on some GPU with GPU work (the
 * steps counted at the windows' edges aside: report_window.c). */
static int windows_short(const struct report *rp) { return rp->few_steps; }

/* What class c's shared time is and whose (cls_gaps.c: chained causes, the lost lead), and what
 * takes it off */
static const char *shared_what(int c) {
  return c == CLS_LAUNCH_OVERHEAD
             ? "launch gaps after a sync or a blocking copy that the lead its wait took from the "
               "host would have covered"
         : c == CLS_SERIALIZATION
             ? "copies the GPU ran alone after a sync, which with the lead its wait took from the "
               "host would have run under the kernels before it"
         : c == CLS_COPY_STALL
             ? "copies the GPU ran alone after a blocking copy, which with the lead its wait took "
               "from the host would have run under the kernels before it"
             : "host work after a sync or a blocking copy that prepared the next batch: the wait "
               "kept it from overlapping the GPU";
}

static const char *shared_with(int c) {
  return c == CLS_SERIALIZATION || c == CLS_COPY_STALL ? "copy" : "serialization or copy stall";
}

/* --steps N, as given (0: not given): the text says where no reading of the steps came near it */
static uint64_t steps_given;

static void print_gpu(const struct report *rp, size_t gi, size_t top, size_t nsites) {
  const struct cls_gpu *g = &rp->cr.gpus[gi];
  const struct cls_steps *sp = &g->steps;
  char b1[32], b2[32], b3[32], b4[32];
  uint64_t window = g->window_ns;
  printf("\nGPU %u%s%s%s%s", g->device, g->name ? "  " : "", g->name ? g->name : "",
         rp->nf > 1 && *g->host ? "  on " : "", rp->nf > 1 ? g->host : "");
  if (g->processes > 1) printf("  (shared by %zu processes)", g->processes);
  printf("\n");
  if (g->tracer.tail_calls && g->tracer.tail_taken) /* said first: the verdict is of less */
    printf("  (the GPU records cover only the first %s: then %s, see below)\n",
           slack_fmt_ns(b1, sizeof b1, window),
           g->tracer.tail_taken == SLK_TAKEN_STUCK
               ? "a CUPTI call of slack's did not return"
               : "another CUPTI client in the process took them");
  {
    uint64_t per;
    int vc = report_verdict(g, &per);
    char vs[320];
    if (vc >= 0) {
      const struct cls_whatif *wi = report_verdict_whatif(g, vc);
      uint64_t of = report_verdict_step(g, vc);
      printf("  verdict: %s, %s of a %s step (%.0f%%%s)%s%s\n", report_verdict_label(vc),
             slack_fmt_ns(b1, sizeof b1, per), slack_fmt_ns(b2, sizeof b2, of), slack_pct(per, of),
             report_verdict_note(g, vc, per), g->nsites[vc] ? ", at " : "",
             g->nsites[vc] ? report_verdict_site(g, vc, vs, sizeof vs) : "");
      /* said here too: a verdict of a few steps in a window of start-up reads as the job's */
      uint64_t sliver = report_steps_sliver(g);
      if (sliver)
        printf("    (of %zu timed steps, %.1f%% of the window: the trace holds little of the "
               "loop's steady state; see the note on the steps)\n",
               sp->count, slack_pct(sliver, window));
      uint64_t saves = report_verdict_saves(g, vc);
      if (saves > per + per / 4) /* the fix closes more than the class's own gaps */
        printf("    fixing it saves %s per step by the replay without it: more than its own "
               "time, as work that waited behind it starts sooner\n",
               slack_fmt_ns(b1, sizeof b1, saves));
      if (sp->per_step_shared_ns[vc])
        printf("    of it %s shared with %s (%s; %s)\n",
               slack_fmt_ns(b1, sizeof b1, sp->per_step_shared_ns[vc]), shared_with(vc),
               shared_what(vc),
               vc == CLS_SERIALIZATION ? "removing the sync takes it off"
               : vc == CLS_COPY_STALL  ? "pinned asynchronous copies take it off"
                                       : "either fix takes it off");
      printf("    fix: %s\n", report_verdict_fix(g, vc));
      uint64_t base = report_step_untraced(g);
      printf("    predicted step if fixed: %s (%.2fx the %s step without the tracer)",
             slack_fmt_ns(b1, sizeof b1, wi->best_ns), report_speedup(base, wi->best_ns),
             slack_fmt_ns(b3, sizeof b3, base));
      /* (the host's own work is no stall: every stall fixed leaves it, and says nothing more) */
      if (vc != CLS_OTHER) {
        printf("; with every stall fixed: %s (%.2fx",
               slack_fmt_ns(b2, sizeof b2, g->whatif_all.best_ns),
               report_speedup(base, g->whatif_all.best_ns));
        /* the launches' fix (graph capture) is the one a dynamic loop may not take: the rest's
         * figure too where it differs */
        uint64_t h = report_whatif_launches_kept(g);
        if (h) printf("; %s with the launches left as they are", slack_fmt_ns(b2, sizeof b2, h));
        printf(")");
      }
      printf("\n");
      /* the threads' fix (report_fix): the replay keeps the launching threads' own CPU time as
       * traced, which their GIL hand-overs to the loader's threads inflate (GPU runs 160, 161:
       * the main thread's CPU a step 1.6x beside 4 loader threads, untraced) */
      if (vc == CLS_DATA_STARVATION && sp->loader_wait_per_step_ns * 2 > sp->per_step_ns[vc])
        printf("    (at most: the launching threads' own work, kept as traced, ran beside the "
               "loader's threads, which took the GIL each time a launch gave it up; the trace "
               "holds that work's CPU time, not what the hand-overs added to it: in worker "
               "processes the step may be shorter still)\n");
      if (wi->host_bound_ns && wi->host_bound_ns > wi->replay_corrected_ns)
        printf("    (the host's own work bounds it: its work on what it read, in most steps, stays "
               "on the host when done one step behind or in a background thread; done on the "
               "GPU instead: %s)\n",
               slack_fmt_ns(b1, sizeof b1, wi->replay_corrected_ns));
      struct hints h;
      int lh = larger_hint(rp, gi, vc, &h);
      if (lh >= 0)
        printf("    larger: the GPU's own work, %s, about %s per step to save (compute hints "
               "below): %s\n",
               h.v[lh].kind, slack_fmt_ns(b1, sizeof b1, h.v[lh].gain_ns), h.v[lh].suggestion);
      uint64_t nper;
      int nc = report_verdict_next(g, vc, &nper);
      if (nc >= 0) {
        uint64_t nof = report_verdict_step(g, nc), nfixed = report_verdict_whatif(g, nc)->best_ns;
        printf("    then: %s, %s of the step (%.0f%%)%s%s; fixed alone: %s (%.2fx)%s\n",
               report_verdict_label(nc), slack_fmt_ns(b1, sizeof b1, nper), slack_pct(nper, nof),
               g->nsites[nc] ? ", at " : "",
               g->nsites[nc] ? report_verdict_site(g, nc, vs, sizeof vs) : "",
               slack_fmt_ns(b2, sizeof b2, nfixed), report_speedup(base, nfixed),
               report_then_note(vc, nc));
      }
    } else if (sp->count) {
      printf("  verdict: no stall above 2%% of the %s step\n",
             slack_fmt_ns(b1, sizeof b1, sp->step_ns));
      struct hints h; /* the GPU is busy: the kernels are where the time goes */
      if (!report_gpu_hints(rp, gi, &h) && h.n && h.v[0].gain_ns * 20 >= sp->step_ns)
        printf("    compute: %s, about %s per step to save (%s): %s\n", h.v[0].kind,
               slack_fmt_ns(b2, sizeof b2, h.v[0].gain_ns),
               slack_fmt_ns(b3, sizeof b3, sp->step_ns - h.v[0].gain_ns), h.v[0].suggestion);
    }
  }
  char paused[64] = "";
  if (sp->paused)
    snprintf(paused, sizeof paused, ", %zu with a pause in it (not timed)", sp->paused);
  char uncycled[96] = "";
  if (sp->uncycled)
    snprintf(uncycled, sizeof uncycled, ", %zu outside the whole cycles of %zu (not timed)",
             sp->uncycled, sp->cycle);
  size_t iters = sp->warmup + sp->count + sp->shape_new + sp->paused + sp->trailing + sp->uncycled;
  if (sp->count && sp->trailing)
    printf("  %zu steps of %s (%s: %s); %zu iterations with the last, which nothing ends (not "
           "timed)%s%s\n",
           sp->count, slack_fmt_ns(b1, sizeof b1, sp->step_ns), sp->source, sp->detail, iters,
           paused, uncycled);
  else if (sp->count && sp->uncycled)
    printf("  %zu steps of %s (%s: %s); %zu iterations%s%s\n", sp->count,
           slack_fmt_ns(b1, sizeof b1, sp->step_ns), sp->source, sp->detail, iters, paused,
           uncycled);
  else if (sp->count)
    printf("  %zu steps of %s (%s: %s)\n", sp->count, slack_fmt_ns(b1, sizeof b1, sp->step_ns),
           sp->source, sp->detail);
  else
    printf("  steps: none found (no NVTX ranges and no repeating pattern of GPU work)\n");
  if (steps_given && (iters * 10 < steps_given * 9 || iters * 10 > steps_given * 11))
    printf("    note: --steps %llu: no step candidate, no kernel and no grouping of the steps "
           "found came near %llu iterations (%zu counted); --step-kernel NAME starts a step at "
           "each kernel whose name holds NAME\n",
           (unsigned long long)steps_given, (unsigned long long)steps_given, iters);
  /* steps that add up to a sliver of the window stand for little of it: a window of start-up
   * with a few iterations at its end (GPU run 68's text model: 4 steps of 0.96 ms in 9.15 s, the
   * rest building the model and the loader's first batches; its fixed form 14 steps of 2.10 ms,
   * an inner pattern of warm-up iterations) */
  uint64_t timed = report_steps_sliver(g);
  if (timed)
    printf("    note: the %zu timed steps add up to %s of the %s window (%.1f%%): the rest is not "
           "the loop's steady state (start-up, long host phases), and the figures per step "
           "stand for those steps only; record more of the loop (slack record --delay MS "
           "--duration MS)\n",
           sp->count, slack_fmt_ns(b1, sizeof b1, timed), slack_fmt_ns(b2, sizeof b2, window),
           slack_pct(timed, window));
  if (sp->count)
    printf("    %-18s %12s %7s %12s %24s\n", "class", "total", "share", "per step",
           "step if removed");
  else
    printf("    %-18s %12s %7s\n", "class", "total", "share");
  for (int c = 0; c < CLS_COUNT; c++) {
    if (c == CLS_FIRST_IDLE)
      printf("    %-18s %12s %6.1f%%\n", "idle", slack_fmt_ns(b1, sizeof b1, g->idle_ns),
             slack_pct(g->idle_ns, window));
    printf("    %s%-*s %12s %6.1f%%", c >= CLS_FIRST_IDLE ? "  " : "",
           c >= CLS_FIRST_IDLE ? 16 : 18, report_class_label[c],
           slack_fmt_ns(b1, sizeof b1, g->time_ns[c]), slack_pct(g->time_ns[c], window));
    if (sp->count) {
      const struct cls_whatif *wi = &g->whatif[c];
      printf(" %12s %24s", slack_fmt_ns(b2, sizeof b2, sp->per_step_ns[c]),
             slack_fmt_ns(b3, sizeof b3, wi->best_ns));
    }
    printf("\n");
  }
  if (sp->count)
    printf("    (step if removed: the recorded dependency graph replayed without the class and "
           "without the tracer's cost)\n");
  if (sp->count && sp->stacks_per_step_ns * 50 >= sp->step_ns)
    printf("    (of other, %s per step the launching thread spent capturing Python stacks "
           "between its launches (in the traceback module, as autograd's anomaly detection does "
           "for each forward operation, torch.autograd.set_detect_anomaly(True)): debugging "
           "work, which no stall's fix takes off; turning it off does)\n",
           slack_fmt_ns(b1, sizeof b1, sp->stacks_per_step_ns));
  if (sp->count && sp->loader_bound_ns && sp->producer_wait > 0)
    printf("    (the launching thread waited for another thread or process to hand it work (a "
           "Future's result, a queue) in %.0f%% of the steps' time at least, with the GPU idle: "
           "the loop runs at the pace that work comes, and no fix but the loader's makes the "
           "step shorter than %s; the step if removed of the others, and the compute hints' "
           "savings, stop there)\n",
           100 * sp->producer_wait, slack_fmt_ns(b1, sizeof b1, sp->loader_bound_ns));
  else if (sp->count && sp->loader_bound_ns)
    printf("    (the process's loader threads were building batches in %.0f%% of their samples: "
           "at the pace they made them, no fix but the loader's makes the step shorter than %s; "
           "the step if removed of the others, and the compute hints' savings, stop there)\n",
           100 * sp->loader_busy, slack_fmt_ns(b1, sizeof b1, sp->loader_bound_ns));
  for (int c = CLS_FIRST_IDLE; sp->count && c < CLS_COUNT; c++)
    if (sp->per_step_shared_ns[c])
      printf("    %s also did %s per step counted as %s (%s): fixing it alone saves "
             "%s per step by attribution\n",
             report_class_label[c], slack_fmt_ns(b1, sizeof b1, sp->per_step_shared_ns[c]),
             shared_with(c), shared_what(c),
             slack_fmt_ns(b2, sizeof b2, sp->per_step_ns[c] + sp->per_step_shared_ns[c]));
  uint64_t comm = ranks_comm_kernel_ns(rp, gi); /* exposed: the class communication */
  if (comm)
    printf("  collective kernels (NCCL) ran %s: %s exposed (no compute kernel alongside), %s "
           "overlapped with compute\n",
           slack_fmt_ns(b1, sizeof b1, comm),
           slack_fmt_ns(b2, sizeof b2, g->time_ns[CLS_COMMUNICATION]),
           slack_fmt_ns(b3, sizeof b3,
                        comm > g->time_ns[CLS_COMMUNICATION] ? comm - g->time_ns[CLS_COMMUNICATION]
                                                             : 0));
  print_hints(rp, gi);
  if (g->time_ns[CLS_LAUNCH_OVERHEAD]) {
    /* a range: the upper end takes out the tracer's cost measured inside launch calls; the
     * floor takes out every call's whole time (what a Python launch loop pays CUPTI around the
     * call is not measured: docs/CLASSIFICATION.md, "The tracer's own cost") */
    printf("  launch overhead without the tracer's own cost: %s to %s",
           slack_fmt_ns(b1, sizeof b1, g->launch_floor_ns),
           slack_fmt_ns(b2, sizeof b2, g->launch_corrected_ns));
    if (sp->count)
      printf(" (%s to %s per step)", slack_fmt_ns(b3, sizeof b3, sp->launch_floor_per_step_ns),
             slack_fmt_ns(b4, sizeof b4, sp->launch_corrected_per_step_ns));
    if (sp->launch_tail_per_step_ns)
      printf("; at the %s pace: %s per step",
             sp->launch_tail_assumed ? "assumed untraced" : "untraced tail's",
             slack_fmt_ns(b3, sizeof b3, sp->launch_tail_per_step_ns));
    if (sp->launch_assumed_hi_per_step_ns)
      printf(" (%s to %s at 90%% of the tails' paces, %.2fx to %.2fx)",
             slack_fmt_ns(b3, sizeof b3, sp->launch_assumed_lo_per_step_ns),
             slack_fmt_ns(b4, sizeof b4, sp->launch_assumed_hi_per_step_ns), TAIL_ASSUMED_P95,
             TAIL_ASSUMED_P05);
    printf("; kernels shorter than their launch call: %llu of %llu\n",
           (unsigned long long)g->kernels_shorter_than_launch,
           (unsigned long long)g->kernels_joined);
  }
  if (g->time_ns[CLS_OTHER]) {
    printf("  other, by reason:");
    for (int w = 1; w < CLS_WHY_COUNT; w++)
      if (g->other_ns[w])
        printf(" %s %s;", cls_reason_name(w), slack_fmt_ns(b1, sizeof b1, g->other_ns[w]));
    printf("\n");
  }
  if (sp->count) {
    if (g->replay_ok)
      printf("  replay of the recorded dependency graph: %s per step (measured %s, error "
             "%+.2f%%); without the tracer's cost: %s\n",
             slack_fmt_ns(b1, sizeof b1, g->replay_step_ns),
             slack_fmt_ns(b2, sizeof b2, sp->step_ns), 100.0 * g->replay_error,
             slack_fmt_ns(b3, sizeof b3, g->corrected_step_ns));
    else
      printf("  replay: not available (the graph has a cycle); step if removed is the bound\n");
  }
  char b5[32], b6[32];
  printf("  tracer's own cost: %s (hooks %s", slack_fmt_ns(b1, sizeof b1, g->tracer.total_ns),
         slack_fmt_ns(b2, sizeof b2, g->tracer.hook_ns));
  if (g->tracer.probe_hooked_ns) /* the exit probe's, format 2.6 */
    printf(", slack's hooks %s per launch by the exit probe",
           slack_fmt_ns(b3, sizeof b3, g->tracer.hook_launch_ns));
  if (g->tracer.cupti_calls)
    printf(", CUPTI %s for %llu launches/copies at %s each, %s",
           slack_fmt_ns(b3, sizeof b3, g->tracer.cupti_ns),
           (unsigned long long)g->tracer.cupti_calls,
           slack_fmt_ns(b4, sizeof b4, g->tracer.cupti_ns / g->tracer.cupti_calls),
           report_cupti_source_text(g->tracer.cupti_source));
  if (g->tracer.probe_api_off_ns)
    printf(", its API records %s per launch by the exit probe",
           slack_fmt_ns(b3, sizeof b3, g->tracer.api_launch_ns));
  if (g->tracer.records_ns)
    printf(", CUPTI overhead records %s", slack_fmt_ns(b5, sizeof b5, g->tracer.records_ns));
  printf("); %s of it in this GPU's idle time\n",
         slack_fmt_ns(b6, sizeof b6, g->tracer.in_idle_ns));
  {
    char why[200] = "--host-slowdown";
    if (!g->tracer.pace_given)
      snprintf(why, sizeof why,
               "the median of the H200's measured tails, 90%% of them %.2fx to %.2fx; slack record "
               "--duration MS measures it (its untraced tail, 3 s by default), --host-slowdown "
               "sets it",
               TAIL_ASSUMED_P05, TAIL_ASSUMED_P95);
    if (g->tracer.pace_assumed > 1.0)
      printf("  host pace without the tracer: %s %.2fx slower traced (%s; %s); the what-ifs and "
             "the step without the tracer run the calls and the host work between them "
             "(stretches under 1 ms, %s apart traced) that much faster\n",
             g->tracer.pace_given ? "given as" : "assumed", g->tracer.pace_assumed,
             g->tracer.tail_ignored ? "its untraced tail ignored: --no-tail"
                                    : "no untraced tail timed it",
             why, slack_fmt_ns(b1, sizeof b1, g->tracer.pace_traced_ns));
  }
  if (g->tracer.tail_calls && g->tracer.tail_taken) {
    printf("  GPU records end early: %s; the %llu host calls over %s after that are not "
           "classified\n",
           g->tracer.tail_taken == SLK_TAKEN_STUCK
               ? "CUPTI did not return from a detach or flush of slack's within "
                 "SLACK_EXIT_TIMEOUT_MS, and slack left it alone"
               : "another CUPTI client in the process (torch.profiler?) took them",
           (unsigned long long)g->tracer.tail_calls,
           slack_fmt_ns(b1, sizeof b1, g->tracer.tail_ns));
  } else if (g->tracer.tail_calls) {
    printf("  %s: %llu host calls over %s %s; time between calls %s traced, %s untraced",
           g->tracer.tail_mid ? "untraced stretch (SLACK_PACE_PROBE)" : "untraced tail",
           (unsigned long long)g->tracer.tail_calls, slack_fmt_ns(b1, sizeof b1, g->tracer.tail_ns),
           g->tracer.tail_mid ? "with CUPTI detached mid-run" : "after CUPTI was detached",
           slack_fmt_ns(b2, sizeof b2, g->tracer.tail_traced_ns),
           slack_fmt_ns(b3, sizeof b3, g->tracer.tail_untraced_ns));
    if (g->tracer.tail_factor > 1.0) {
      printf(" (the tracer slowed the host %.2fx", g->tracer.tail_factor);
      if (g->tracer.tail_nthreads > 1) { /* the replay runs each thread at its own pace */
        printf("; by thread:");
        for (size_t k = 0; k < g->tracer.tail_nthreads; k++)
          printf("%s %llu %.2fx", k ? "," : "", (unsigned long long)g->tracer.tail_threads[k].tid,
                 g->tracer.tail_threads[k].factor);
      }
      printf("); serialization includes %s the host would have waited longer untraced\n",
             slack_fmt_ns(b4, sizeof b4, g->tracer.lead_ns));
    } else
      printf(" (%s)\n", g->tracer.tail_ntraced < TAIL_MIN_INTERVALS ||
                                g->tracer.tail_nuntraced < TAIL_MIN_INTERVALS
                            ? "too few calls to compare"
                            : "the tracer did not slow the host's calls");
    if (g->tracer.iter_untraced_ns) {
      printf("  the loop's iterations (from one %s call to the next, %llu calls each): %s traced "
             "(%llu), %s in the tail (%llu, quartiles %s to %s), %s replayed without the tracer",
             slk_fn_name(g->tracer.iter_fn), (unsigned long long)g->tracer.iter_calls,
             slack_fmt_ns(b1, sizeof b1, g->tracer.iter_traced_ns),
             (unsigned long long)g->tracer.iter_ntraced,
             slack_fmt_ns(b2, sizeof b2, g->tracer.iter_untraced_ns),
             (unsigned long long)g->tracer.iter_nuntraced,
             slack_fmt_ns(b3, sizeof b3, g->tracer.iter_untraced_lo_ns),
             slack_fmt_ns(b4, sizeof b4, g->tracer.iter_untraced_hi_ns),
             slack_fmt_ns(b5, sizeof b5, g->tracer.iter_replayed_ns));
      if (g->tracer.gain_fit == 2)
        printf(": the replay's host fitted to the tail's (its calls and short host work %.2fx "
               "faster than the threads' paces say)\n",
               g->tracer.gain);
      else if (g->tracer.gain_fit == 1)
        printf(" (within the tail's quartiles: kept)\n");
      else if (g->tracer.gain_fit == -2)
        printf(" (the tail ran slower than that: not the tracer's cost; kept)\n");
      else if (g->tracer.gain_fit == 3)
        printf(" (read in windows: not fitted)\n");
      else if (g->tracer.gain_fit == 4)
        printf(" (not fitted: --no-tail-fit)\n");
      else if (g->tracer.gain_fit == -1)
        printf(" (the host's pace alone does not reach the tail's: %s at %.0fx; kept)\n",
               slack_fmt_ns(b1, sizeof b1, g->tracer.iter_reach_ns), CLS_PACE_GAIN_MAX);
      else
        printf("\n");
    }
    if (g->tracer.tail_nlong_traced && g->tracer.tail_nlong_untraced)
      printf("  host work outside CUDA (stretches of 1 ms to 10 s, %llu traced and %llu in the "
             "tail compared): %s traced, %s untraced (%.2fx); kept as traced in the what-ifs: "
             "seconds of tail cannot tell the tracer's cost from the machine's own drift\n",
             (unsigned long long)g->tracer.tail_nlong_traced,
             (unsigned long long)g->tracer.tail_nlong_untraced,
             slack_fmt_ns(b2, sizeof b2, g->tracer.tail_long_traced_ns),
             slack_fmt_ns(b3, sizeof b3, g->tracer.tail_long_untraced_ns),
             g->tracer.tail_factor_long);
  }
  printf("  where the time comes from (call sites: the user's Python line where there is one, the "
         "hooked call and its native caller; 'py' its Python frames, '<' the native callers) and "
         "the usual fix:\n");
  int gpu_py = 0; /* some site has Python frames: the others came from threads without */
  for (int c = 0; c < CLS_COUNT && !gpu_py; c++)
    for (size_t k = 0; k < g->nsites[c] && !gpu_py; k++)
      gpu_py = g->sites[c][k].python != NULL;
  for (int c = 0; c < CLS_COUNT; c++) {
    if (!g->time_ns[c] || !g->nsites[c]) continue;
    printf("    %s  %s\n", report_class_label[c], slack_fmt_ns(b1, sizeof b1, g->time_ns[c]));
    for (size_t k = 0; k < g->nsites[c] && k < nsites; k++) {
      printf("      %12s  ", slack_fmt_ns(b1, sizeof b1, g->sites[c][k].ns));
      print_name(g->sites[c][k].site, 100);
      printf("\n");
      print_python(g->sites[c][k].python);
      if (gpu_py && !g->sites[c][k].python && g->sites[c][k].stack)
        printf("%24spy (none: a thread that runs no Python, such as autograd's backward)\n", "");
      print_stack(g->sites[c][k].stack);
    }
    if (c != CLS_OTHER || g->time_ns[c] > window / 50) printf("      fix: %s\n", report_fix(g, c));
  }
  if (site_query) {
    size_t nm = 0;
    uint64_t per[CLS_COUNT];
    for (int c = 0; c < CLS_COUNT; c++)
      per[c] = site_query_ns(g, c, &nm);
    printf("  call sites matching \"%s\": %zu\n", site_query, nm);
    for (int c = 0; c < CLS_COUNT; c++)
      if (per[c])
        printf("    %-18s %12s  %5.1f%% of the class\n", report_class_label[c],
               slack_fmt_ns(b1, sizeof b1, per[c]), slack_pct(per[c], g->time_ns[c]));
  }
  printf("  kernels %llu, memcpys %llu, memsets %llu\n", (unsigned long long)g->kernels,
         (unsigned long long)g->memcpys, (unsigned long long)g->memsets);
  if (!rp->ntop[gi] || !top) return;
  printf("  top kernels by total time (share of kernel time):\n");
  printf("    %12s %9s %12s %6s  %s\n", "total", "count", "avg", "share", "name");
  for (size_t t = 0; t < rp->ntop[gi] && t < top; t++) {
    const struct kernel_sum *k = &rp->top[gi][t];
    printf("    %12s %9llu %12s %5.1f%%  ", slack_fmt_ns(b1, sizeof b1, k->total_ns),
           (unsigned long long)k->count, slack_fmt_ns(b2, sizeof b2, k->total_ns / k->count),
           slack_pct(k->total_ns, g->kernel_ns));
    print_name(k->name, 80);
    printf("\n");
  }
}

static void print_text(const struct report *rp, size_t top, size_t nsites) {
  uint64_t window = rp->cr.t1 - rp->cr.t0;
  char b1[32], b2[32], b3[32];
  printf("slack report:");
  for (size_t i = 0; i < rp->nf; i++)
    printf(" %s", rp->f[i].path);
  printf("\n");
  if (!window && !rp->cr.ngpus && !rp->host_calls) {
    printf("no GPU work and no host calls in this trace\n");
    return;
  }
  printf("window: %s (first to last GPU or host event)\n", slack_fmt_ns(b1, sizeof b1, window));
  report_windows_text(rp);
  if (rp->windows)
    printf("read in %zu windows (a long trace: memory bounded by the window; steps, what-ifs and "
           "the replay are per window, averaged by steps; no compute hints)\n",
           rp->windows);
  for (size_t i = 0; i < rp->cr.ngpus; i++)
    print_gpu(rp, i, top, nsites);
  printf("\nhost calls seen by slack's hooks: %llu\n", (unsigned long long)rp->host_calls);
  if (rp->host_calls) {
    printf("    %-28s %9s %12s %12s\n", "function", "calls", "total", "blocked");
    for (size_t o = 0; o <= SLK_FN_COUNT; o++) {
      size_t f = rp->fn_order[o];
      if (!rp->fn[f].calls) continue;
      printf("    %-28s %9llu %12s %12s\n", fn_label(f), (unsigned long long)rp->fn[f].calls,
             slack_fmt_ns(b1, sizeof b1, rp->fn[f].total_ns),
             rp->fn[f].blocked_ns ? slack_fmt_ns(b2, sizeof b2, rp->fn[f].blocked_ns) : "-");
    }
    printf("  time blocked in synchronizing calls: %s (%.1f%% of the window, all threads)\n",
           slack_fmt_ns(b3, sizeof b3, rp->host_blocked_ns),
           slack_pct(rp->host_blocked_ns, window));
  }
  printf("\nkernels whose launching host call was recorded: %llu of %llu (%llu in CUDA graphs, "
         "joined to their graph launch)\n",
         (unsigned long long)rp->lj.joined, (unsigned long long)rp->lj.kernels,
         (unsigned long long)rp->lj.graph_joined);
  if (rp->lj.by_order)
    printf("  %llu of them joined by their stream's order: CUPTI gave no API record for them "
           "(attached again after a detach: SLACK_WINDOW_DETACH)\n",
           (unsigned long long)rp->lj.by_order);
  int py = 0;
  for (size_t i = 0; i < rp->cr.ngpus && !py; i++)
    for (int c = 0; c < CLS_COUNT && !py; c++)
      for (size_t k = 0; k < rp->cr.gpus[i].nsites[c] && !py; k++)
        py = rp->cr.gpus[i].sites[c][k].python != NULL;
  if (py)
    printf("call sites name the user's own Python line first (py: its frames, library frames "
           "folded), then the CUDA call and its native callers ('<'); a site without py lines "
           "came from a thread that runs no Python (e.g. autograd's backward workers)\n");
  else
    printf("call sites are native (the caller of the CUDA call, and its callers where the trace "
           "has them); this trace has no Python frames\n");
  if (rp->dropped)
    printf("warning: %llu events were dropped while recording: the times above undercount\n",
           (unsigned long long)rp->dropped);
}

static int parse_count(const char *s, uint64_t *v) {
  char *end;
  long long x = strtoll(s, &end, 10);
  if (!*s || *end || x < 0) return -1;
  *v = (uint64_t)x;
  return 0;
}

/* The HTML page into path ("-": stdout); a line on stderr says where it went and its size. */
static int write_html(const struct report *rp, const char *path, size_t nsites) {
  FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
  if (!f) {
    fprintf(stderr, "slack report: cannot write %s: %s\n", path, strerror(errno));
    return EXIT_ERROR;
  }
  int bad = report_html(f, rp, nsites);
  long size = f == stdout ? -1 : ftell(f);
  if (ferror(f) | (f == stdout ? fflush(f) : fclose(f)) || bad) {
    fprintf(stderr, "slack report: cannot write %s: %s\n", path,
            bad < 0 ? "out of memory" : strerror(errno));
    return EXIT_ERROR;
  }
  if (size >= 0) fprintf(stderr, "slack report: wrote %s (%ld bytes)\n", path, size);
  return EXIT_OK;
}

int cmd_report(int argc, char **argv) {
  static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                       {"html", required_argument, NULL, 'H'},
                                       {"top", required_argument, NULL, 't'},
                                       {"sites", required_argument, NULL, 's'},
                                       {"cupti-call-ns", required_argument, NULL, 'c'},
                                       {"site", required_argument, NULL, 'S'},
                                       {"steps", required_argument, NULL, 'N'},
                                       {"step-kernel", required_argument, NULL, 'K'},
                                       {"merge", no_argument, NULL, 'M'},
                                       {"window-records", required_argument, NULL, 'W'},
                                       {"no-tail-fit", no_argument, NULL, 'F'},
                                       {"host-slowdown", required_argument, NULL, 'D'},
                                       {"no-tail", no_argument, NULL, 'T'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  int as_json = 0, c;
  /* traces of more than window_records timed records in windows: of window_size records by
   * default, of window_records where it is given (--window-records, SLACK_REPORT_WINDOW_RECORDS) */
  uint64_t window_records = REPORT_WINDOW_RECORDS, window_size = REPORT_WINDOW_SIZE;
  int window_given = 0;
  const char *we = getenv("SLACK_REPORT_WINDOW_RECORDS");
  if (we && *we && parse_count(we, &window_records)) {
    fprintf(stderr, "slack report: SLACK_REPORT_WINDOW_RECORDS=%s is not a count; ignored\n", we);
    window_records = REPORT_WINDOW_RECORDS;
  } else if (we && *we) {
    window_given = 1;
  }
  const char *html_path = NULL;
  uint64_t top = 10, nsites = 5;
  struct cls_options opt;
  cls_options_default(&opt);
  optind = 0;
  site_query = NULL;
  report_merge_ok = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
    case 'j': as_json = 1; break;
    case 'H': html_path = optarg; break;
    case 't':
      if (parse_count(optarg, &top))
        return slack_usage_error("report", usage, "--top wants a count");
      break;
    case 's':
      if (parse_count(optarg, &nsites))
        return slack_usage_error("report", usage, "--sites wants a count");
      break;
    case 'c':
      if (parse_count(optarg, &opt.cupti_call_ns))
        return slack_usage_error("report", usage, "--cupti-call-ns wants a count of ns");
      opt.cupti_call_given = 1;
      break;
    case 'S':
      if (!*optarg) return slack_usage_error("report", usage, "--site wants a text to match");
      site_query = optarg;
      break;
    case 'N':
      if (parse_count(optarg, &opt.steps_want) || !opt.steps_want)
        return slack_usage_error("report", usage, "--steps wants a count of loop iterations");
      steps_given = opt.steps_want;
      break;
    case 'K':
      if (!*optarg) return slack_usage_error("report", usage, "--step-kernel wants a kernel name");
      opt.step_kernel = optarg;
      break;
    case 'M': report_merge_ok = 1; break;
    case 'F': opt.no_pace_fit = 1; break;
    case 'T': opt.ignore_tail = 1; break;
    case 'D': {
      char *end = NULL;
      errno = 0;
      double f = strtod(optarg, &end);
      if (errno || end == optarg || *end || !(f >= 1.0 && f <= 10.0))
        return slack_usage_error("report", usage, "--host-slowdown wants a factor from 1 to 10");
      opt.host_slowdown = f;
      opt.host_slowdown_given = 1;
      break;
    }
    case 'W':
      if (parse_count(optarg, &window_records))
        return slack_usage_error("report", usage, "--window-records wants a count");
      window_given = 1;
      break;
    case 'h': fputs(usage, stdout); return EXIT_OK;
    case ':': return slack_missing_value("report", usage, argv[optind - 1]);
    default: return slack_bad_option("report", usage, argv[optind - 1]);
    }
  }
  if (optind >= argc) return slack_usage_error("report", usage, "expects FILE...");
  if (as_json && html_path)
    return slack_usage_error("report", usage, "--json and --html: one at a time");
  char **paths; /* a directory stands for its traces; the ranks of a job: ranks.h */
  size_t npaths;
  int rc = ranks_expand("report", argv + optind, (size_t)(argc - optind), &paths, &npaths);
  if (rc != EXIT_OK) return rc;
  if (!html_path && npaths > 1 && ranks_detect(paths, npaths)) {
    rc = ranks_report(paths, npaths, &opt, as_json, report_merge_ok, (size_t)top);
    ranks_free_paths(paths, npaths);
    return rc;
  }
  struct report rp;
  /* --steps N counts the whole trace's iterations: a trace of up to REPORT_COARSE_WHOLE records
   * is read whole for it (each window would find its own share of them) */
  if (opt.steps_want && !window_given && window_records && window_records < REPORT_COARSE_WHOLE)
    window_records = REPORT_COARSE_WHOLE;
  /* one long trace: by windows (the HTML page draws every segment: the whole trace) */
  if (npaths == 1 && !html_path && window_records) {
    if (window_given) window_size = window_records;
    rc = report_load_windowed(&rp, "report", paths[0], &opt, window_records, window_size,
                              window_given ? 0 : REPORT_WINDOW_SMALL);
    /* Windows too small for the loop: each window finds its steps alone, and a step longer than
     * half a window is never found (the seed's 430 ms step in windows of 3,000 records read as
     * 3 steps of 52 ms and no stall). Read again in larger windows while fewer than 2 steps per
     * window came: the default's in windows of REPORT_WINDOW_RECORDS at once (what the report
     * was before its windows were made smaller: one more reading at most), a given size's in
     * windows twice as large, up to REPORT_WINDOW_RECORDS (at 10 M records peak RSS is 48-50 MB
     * in windows of 250 k records, 31-33 MB in windows of 125 k, 84-88 MB in windows of 500 k, 141
     * MB in windows of a million: the memory bound holds up to 500 k, not beyond). A trace is
     * windowed past window_records, or past the window where that is more (--window-records N: past
     * N, then 2 N...). */
    uint64_t most = REPORT_WINDOW_RECORDS;
    int coarse_read = 0;
    for (;;) {
      if (rc != EXIT_OK || rp.windows <= 1) break;
      uint64_t next = window_given ? window_size * 2 : most;
      if (windows_short(&rp) && next <= most && next > window_size) {
        report_unload(&rp);
        fprintf(stderr,
                "slack report: windows of %llu records held fewer than 2 steps each; reading "
                "again in windows of %llu\n",
                (unsigned long long)window_size, (unsigned long long)next);
      } else if (rp.coarse_records > window_size && !coarse_read &&
                 !(rp.coarse_few && window_given)) { /* a given size's few steps: its own */
        /* Windows too short for the loop's iterations (report_window.c): read once more in
         * windows that hold about 12 of them, whole where that is the trace, up to
         * REPORT_COARSE_MOST records a window (memory grows with the window: some 140 MB a
         * million records in windows; read whole, 580-720 MB for GPU runs 108 and 110's 1.4-1.8 M
         * records); past that, said */
        coarse_read = 1;
        const char *what = rp.coarse_src ? "batch copies" : "optimizer steps";
        char found[192];
        if (rp.coarse_few)
          snprintf(found, sizeof found,
                   "the windows of %llu records held %zu iterations in %zu (fewer than 12 each: "
                   "too few to count at their edges)",
                   (unsigned long long)window_size, rp.coarse_steps, rp.windows);
        else
          snprintf(found, sizeof found,
                   "the windows found %zu steps where the trace has %zu %s (the loop's "
                   "iterations are longer than a window of %llu records)",
                   rp.coarse_steps, rp.coarse_marks, what, (unsigned long long)window_size);
        if (rp.coarse_records > REPORT_COARSE_MOST) {
          fprintf(stderr,
                  "slack report: %s; --window-records %llu reads windows that hold them "
                  "(memory grows with the window), --steps %zu names the count\n",
                  found, (unsigned long long)rp.coarse_records, rp.coarse_marks);
          break;
        }
        next = rp.coarse_records;
        char again[64] = "whole";
        if (!rp.coarse_whole)
          snprintf(again, sizeof again, "in windows of %llu", (unsigned long long)next);
        fprintf(stderr, "slack report: %s; reading it again %s\n", found, again);
        report_unload(&rp);
        if (window_records < next) window_records = next;
      } else {
        break;
      }
      window_size = next;
      rc = report_load_windowed(&rp, "report", paths[0], &opt, window_records, window_size, 0);
    }
  } else
    rc = report_load(&rp, "report", paths, npaths, &opt);
  if (rc != EXIT_OK) {
    ranks_free_paths(paths, npaths);
    return rc;
  }
  if (html_path) {
    rc = write_html(&rp, html_path, (size_t)nsites);
  } else if (as_json) {
    print_json(&rp, (size_t)top, (size_t)nsites);
  } else {
    print_text(&rp, (size_t)top, (size_t)nsites);
  }
  fflush(stdout);
  report_warn_tails(&rp, "report");
  report_unload(&rp);
  ranks_free_paths(paths, npaths);
  return rc;
}

/* Production windows in `slack report` (windows.h). */
#include "windows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static const char *why_text(uint32_t why, char *buf, size_t len) {
  static const char *const names[] = {"duty cycle", "nvtx range", "cudaProfilerStart", "trigger",
                                      "SLACK_PACE_PROBE"};
  size_t n = 0;
  buf[0] = '\0';
  for (int b = 0; b < 5; b++)
    if (why & (1u << b)) {
      int w = snprintf(buf + n, len - n, "%s%s", n ? "+" : "", names[b]);
      if (w < 0 || (size_t)w >= len - n) break;
      n += (size_t)w;
    }
  return n ? buf : "?";
}

static uint64_t recorded_ns(const struct report_windows *w) {
  uint64_t t = 0;
  for (size_t i = 0; i < w->n; i++)
    t += w->v[i].end - w->v[i].start;
  return t;
}

#define TEXT_MAX 50 /* windows listed one per line in the text; the JSON has them all */

void report_windows_text(const struct report *rp) {
  const struct report_windows *w = &rp->win;
  if (!w->n) return;
  char b1[32], b2[32], b3[32], b4[32];
  size_t ng = rp->cr.ngpus;
  uint32_t any = 0;
  for (size_t i = 0; i < w->n; i++)
    any |= w->v[i].why;
  if (any == SLK_WINDOW_PACE) /* the pace probe's cut alone: no window the user asked for */
    printf("pace probe (SLACK_PACE_PROBE): %s of that span classified, either side of the "
           "stretch in which the host's calls were timed without CUPTI (no GPU record there)\n",
           slack_fmt_ns(b1, sizeof b1, recorded_ns(w)));
  else
    printf("production windows: %zu, %s recorded of that span (%.1f%%); time outside them is "
           "not counted, busy or idle\n",
           w->n, slack_fmt_ns(b1, sizeof b1, recorded_ns(w)),
           slack_pct(recorded_ns(w), rp->cr.t1 - rp->cr.t0));
  for (size_t i = 0; i < w->n && i < TEXT_MAX; i++) {
    const struct report_window *x = &w->v[i];
    if (x->end == x->start) { /* outside the span of the events (a window open at start-up,
                                 before the program's first CUDA call), or after the span
                                 classified (the GPU records ended early: a TAKEN record) */
      printf("  window %zu  (%s): %s\n", i + 1, why_text(x->why, b3, sizeof b3),
             x->start > rp->cr.t0 && x->start >= rp->cr.t1
                 ? "after the span classified, not counted"
                 : "no GPU or host event in it");
      continue;
    }
    printf("  window %zu  +%s  %s  (%s%s)\n", i + 1,
           slack_fmt_ns(b1, sizeof b1, x->start - rp->cr.t0),
           slack_fmt_ns(b2, sizeof b2, x->end - x->start), why_text(x->why, b3, sizeof b3),
           x->open ? ", open at the end of the trace" : "");
    for (size_t gi = 0; gi < ng; gi++) {
      const uint64_t *t = &w->gpu_ns[(i * ng + gi) * CLS_COUNT];
      uint64_t busy = 0, idle = 0;
      for (int c = 0; c < CLS_COUNT; c++)
        *(c >= CLS_FIRST_IDLE ? &idle : &busy) += t[c];
      printf("    GPU %u  busy %s (%.1f%%)  idle %s", rp->cr.gpus[gi].device,
             slack_fmt_ns(b1, sizeof b1, busy), slack_pct(busy, busy + idle),
             slack_fmt_ns(b4, sizeof b4, idle));
      for (int c = CLS_FIRST_IDLE; c < CLS_COUNT; c++)
        if (t[c]) printf("  %s %s", report_class_label[c], slack_fmt_ns(b2, sizeof b2, t[c]));
      printf("\n");
    }
  }
  if (w->n > TEXT_MAX) printf("  ... %zu more windows (--json lists them all)\n", w->n - TEXT_MAX);
}

void report_windows_json(struct json *j, const struct report *rp) {
  const struct report_windows *w = &rp->win;
  if (!w->n) return;
  size_t ng = rp->cr.ngpus;
  json_u64(j, "recorded_ns", recorded_ns(w));
  json_arr(j, "windows");
  for (size_t i = 0; i < w->n; i++) {
    const struct report_window *x = &w->v[i];
    json_obj(j, NULL);
    json_u64(j, "start_ns", x->start);
    json_u64(j, "end_ns", x->end);
    json_u64(j, "span_ns", x->end - x->start);
    json_arr(j, "sources");
    static const char *const key[] = {"duty_cycle", "nvtx", "cuda_profiler_api", "trigger",
                                      "pace_probe"};
    for (int b = 0; b < 5; b++)
      if (x->why & (1u << b)) json_str(j, NULL, key[b]);
    json_arr_end(j);
    json_bool(j, "open_at_end", x->open);
    json_arr(j, "gpus");
    for (size_t gi = 0; gi < ng; gi++) {
      const uint64_t *t = &w->gpu_ns[(i * ng + gi) * CLS_COUNT];
      uint64_t busy = 0, idle = 0;
      for (int c = 0; c < CLS_COUNT; c++)
        *(c >= CLS_FIRST_IDLE ? &idle : &busy) += t[c];
      json_obj(j, NULL);
      json_u64(j, "device", rp->cr.gpus[gi].device);
      json_u64(j, "busy_ns", busy);
      json_u64(j, "idle_ns", idle);
      json_obj(j, "classes_ns");
      for (int c = 0; c < CLS_COUNT; c++)
        json_u64(j, cls_name(c), t[c]);
      json_obj_end(j);
      json_obj_end(j);
    }
    json_arr_end(j);
    json_obj_end(j);
  }
  json_arr_end(j);
}

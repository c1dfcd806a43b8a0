/* Production windows in `slack report` (windows.h). */
#include "windows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static int cmp_win(const void *pa, const void *pb) {
  const struct report_window *a = pa, *b = pb;
  return a->start < b->start   ? -1
         : a->start > b->start ? 1
         : a->end < b->end     ? -1
                               : a->end > b->end;
}

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1) {
  uint64_t s = a0 > b0 ? a0 : b0, e = a1 < b1 ? a1 : b1;
  return e > s ? e - s : 0;
}

/* The windows of every file: a closing record (flags 0) stands for its window; an opening one
 * (SLK_WINDOW_OPEN) only where no closing record has its start (the process ended inside it:
 * it lasts to the report's last event). Sorted, overlaps merged. */
static int collect(struct report *rp) {
  size_t cap = 0;
  for (size_t f = 0; f < rp->nf; f++)
    cap += rp->f[f].td.kind[SLK_WINDOW].n;
  if (!cap) return 0;
  struct report_window *v = calloc(cap, sizeof *v);
  if (!v) return -1;
  size_t n = 0;
  for (size_t f = 0; f < rp->nf; f++) {
    const struct trace_array *a = &rp->f[f].td.kind[SLK_WINDOW];
    for (size_t i = 0; i < a->n; i++) {
      const struct slk_record *r = &a->v[i];
      int open = (r->flags & SLK_WINDOW_OPEN) != 0;
      if (open) {
        int closed = 0;
        for (size_t k = 0; k < a->n && !closed; k++)
          closed = !(a->v[k].flags & SLK_WINDOW_OPEN) && a->v[k].start == r->start;
        if (closed) continue;
      }
      v[n++] = (struct report_window){r->start, open ? rp->cr.t1 : r->end, r->fn, open};
    }
  }
  qsort(v, n, sizeof *v, cmp_win);
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    if (m && v[i].start <= v[m - 1].end) {
      if (v[i].end > v[m - 1].end) v[m - 1].end = v[i].end;
      v[m - 1].why |= v[i].why;
      v[m - 1].open |= v[i].open;
    } else {
      v[m++] = v[i];
    }
  }
  for (size_t i = 0; i < m; i++) { /* the classifier's span is what its segments tile */
    if (v[i].start < rp->cr.t0) v[i].start = rp->cr.t0;
    if (v[i].end > rp->cr.t1) v[i].end = rp->cr.t1;
    if (v[i].end < v[i].start) v[i].end = v[i].start;
  }
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

static const char *why_text(uint32_t why, char *buf, size_t len) {
  static const char *const names[] = {"duty cycle", "nvtx range", "cudaProfilerStart", "trigger"};
  size_t n = 0;
  buf[0] = '\0';
  for (int b = 0; b < 4; b++)
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
  printf("production windows: %zu, %s recorded of that span (%.1f%%); time outside them is not "
         "counted, busy or idle\n",
         w->n, slack_fmt_ns(b1, sizeof b1, recorded_ns(w)),
         slack_pct(recorded_ns(w), rp->cr.t1 - rp->cr.t0));
  for (size_t i = 0; i < w->n && i < TEXT_MAX; i++) {
    const struct report_window *x = &w->v[i];
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
    static const char *const key[] = {"duty_cycle", "nvtx", "cuda_profiler_api", "trigger"};
    for (int b = 0; b < 4; b++)
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

/* slack report --html: the report as one self-contained page (docs/slack-report.md, "--html").
 *
 * Sections, in order: the verdict per GPU; the ranks (one row per GPU); the per-step breakdown
 * per GPU as stacked bars; per GPU a timeline strip of one typical step (the GPU's time by class,
 * each stream's work, the launching thread's calls) and the whole window by class, zoomable; the
 * step times across the run; the call sites per class with their Python lines and the fix; the
 * what-if bars; the tracer's own cost.
 *
 * Size is bounded whatever the trace: the strip draws one step, merging what falls into one
 * unit of its width; the window is drawn as 800 columns of class shares, and the page carries
 * the classified stretches for zooming only up to ZOOM_PIECES (beyond, the stretches are cut to
 * a grid of that many cells, each keeping its largest class); at most STEP_BARS step bars (more
 * steps are averaged in groups). A 100,000-event trace gives a few hundred kB. */
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "hints.h"
#include "html.h"
#include "report.h"
#include "slack.h"

#define VIEW_W 1000.0     /* width of every chart in SVG units */
#define LABEL_W 150.0     /* left column of row labels */
#define ZOOM_COLS 800     /* columns of the window chart */
#define ZOOM_PIECES 60000 /* classified stretches carried for zooming, all GPUs together */
#define STEP_BARS 300     /* bars of the step chart at most */
#define STRIP_OPS 2000    /* operations in the strip when there are no steps */
#define ALL_CLASSES ((1u << CLS_COUNT) - 1)

/* One GPU operation: a record of one of the files, by its position in its kind's array. */
struct gop {
  uint64_t start, end, stream;
  uint32_t file;
  uint8_t kind, comm;
  size_t rec;
};

struct tid_key {
  size_t file;
  uint64_t tid;
  size_t n; /* kernels it launched in the strip */
};

#define STRIP_THREADS 3 /* launching threads drawn in the strip */

/* What the page draws of one GPU beyond the classifier's result. */
struct gview {
  struct gop *ops; /* the GPU's kernels, copies and memsets by start */
  size_t nops;
  uint64_t *bound; /* step k is [bound[k], bound[k + 1]) */
  size_t nsteps;
  int exact;                       /* 1: the bounds are the classifier's steps; 0: equal windows */
  uint64_t (*step_cls)[CLS_COUNT]; /* per step: time by class */
  size_t typical;                  /* the step shown in the strip */
  uint64_t a, b;                   /* the strip's span (0, 0: nothing to draw) */
  struct tid_key thr[STRIP_THREADS]; /* the threads that launched the strip's kernels, most */
  size_t nthr;                       /* kernels first */
};

static const struct slk_record *gop_rec(const struct report *rp, const struct gop *o) {
  return &rp->f[o->file].td.kind[o->kind].v[o->rec];
}

static const char *gop_name(const struct report *rp, const struct gop *o) {
  return trace_reader_string(rp->f[o->file].rd, gop_rec(rp, o)->name);
}

static int file_on_host(const struct report *rp, size_t i, const char *host) {
  const char *h = trace_reader_header(rp->f[i].rd, "host");
  return !strcmp(h ? h : "", host);
}

static int cmp_gop(const void *pa, const void *pb) {
  const struct gop *a = pa, *b = pb;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  return a->end < b->end ? -1 : a->end > b->end;
}

static int gv_ops(const struct report *rp, const struct cls_gpu *g, struct gview *v) {
  static const uint8_t kinds[] = {SLK_KERNEL, SLK_MEMCPY, SLK_MEMSET};
  size_t n = 0;
  for (size_t i = 0; i < rp->nf; i++)
    for (size_t k = 0; k < 3; k++)
      n += file_on_host(rp, i, g->host) ? rp->f[i].td.kind[kinds[k]].n : 0;
  v->ops = malloc((n ? n : 1) * sizeof *v->ops);
  if (!v->ops) return -1;
  for (size_t i = 0; i < rp->nf; i++) {
    if (!file_on_host(rp, i, g->host)) continue;
    for (size_t k = 0; k < 3; k++) {
      const struct trace_array *ta = &rp->f[i].td.kind[kinds[k]];
      for (size_t r = 0; r < ta->n; r++) {
        const struct slk_record *x = &ta->v[r];
        if (x->device != g->device) continue;
        int comm =
            kinds[k] == SLK_KERNEL && cls_is_comm_kernel(trace_reader_string(rp->f[i].rd, x->name));
        v->ops[v->nops++] = (struct gop){x->start,  x->end > x->start ? x->end : x->start,
                                         x->stream, (uint32_t)i,
                                         kinds[k],  (uint8_t)comm,
                                         r};
      }
    }
  }
  qsort(v->ops, v->nops, sizeof *v->ops, cmp_gop);
  return 0;
}

/* The same kind of operation: the symbol the pattern of steps is made of. */
static int same_symbol(const struct report *rp, const struct gop *x, const struct gop *y) {
  if (x->kind != y->kind) return 0;
  if (x->kind == SLK_KERNEL) return !strcmp(gop_name(rp, x), gop_name(rp, y));
  if (x->kind == SLK_MEMCPY) return gop_rec(rp, x)->copy_kind == gop_rec(rp, y)->copy_kind;
  return 1;
}

static size_t first_at(const struct gview *v, uint64_t t) {
  size_t lo = 0, hi = v->nops;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (v->ops[mid].start < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The classifier gives the steps' count and span, not each step's bounds. Every step starts
 * with the same operation in all three ways it finds steps (the pattern's symbol, the first
 * operation of an NVTX range, the first after a synchronizing call, which are the same code
 * every step), so the bounds are that operation's occurrences; they are the classifier's steps
 * when there are exactly count + 1 of them from the first step's start to the last step's end
 * and the steps are contiguous (their mean is the span over the count). Else the span is cut
 * into count equal windows, and the page says so. */
static void gv_bounds(const struct report *rp, const struct cls_steps *sp, struct gview *v) {
  uint64_t span = sp->last_ns - sp->first_ns;
  int contiguous = span / sp->count == sp->step_ns;
  for (size_t i = first_at(v, sp->first_ns);
       contiguous && !v->exact && i < v->nops && v->ops[i].start == sp->first_ns; i++) {
    size_t k = 0;
    for (size_t j = i; j < v->nops && v->ops[j].start <= sp->last_ns && k <= sp->count + 1; j++)
      if (same_symbol(rp, &v->ops[i], &v->ops[j])) {
        if (k <= sp->count) v->bound[k] = v->ops[j].start;
        k++;
      }
    v->exact = k == sp->count + 1 && v->bound[sp->count] == sp->last_ns;
  }
  if (!v->exact)
    for (size_t k = 0; k <= sp->count; k++)
      v->bound[k] = sp->first_ns + (uint64_t)((double)span * (double)k / (double)sp->count);
}

/* Sums the classes of g's segments over [a, b) into out; *k is a cursor for calls in order. */
static void seg_sum(const struct cls_gpu *g, size_t *k, uint64_t a, uint64_t b, uint64_t *out) {
  memset(out, 0, CLS_COUNT * sizeof *out);
  while (*k < g->nseg && g->seg[*k].end <= a)
    (*k)++;
  for (size_t i = *k; i < g->nseg && g->seg[i].start < b; i++) {
    uint64_t s = g->seg[i].start > a ? g->seg[i].start : a;
    uint64_t e = g->seg[i].end < b ? g->seg[i].end : b;
    if (e > s) out[g->seg[i].cls] += e - s;
  }
}

static int cmp_u64(const void *pa, const void *pb) {
  uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
  return a < b ? -1 : a > b;
}

/* The typical step: the one closest to the median step (the first such). */
static int gv_typical(struct gview *v) {
  uint64_t *d = malloc(v->nsteps * sizeof *d);
  if (!d) return -1;
  for (size_t k = 0; k < v->nsteps; k++)
    d[k] = v->bound[k + 1] - v->bound[k];
  qsort(d, v->nsteps, sizeof *d, cmp_u64);
  uint64_t med = d[v->nsteps / 2], best = UINT64_MAX;
  free(d);
  for (size_t k = 0; k < v->nsteps; k++) {
    uint64_t len = v->bound[k + 1] - v->bound[k];
    uint64_t off = len > med ? len - med : med - len;
    if (off < best) {
      best = off;
      v->typical = k;
    }
  }
  v->a = v->bound[v->typical];
  v->b = v->bound[v->typical + 1];
  return 0;
}

static int cmp_tid_key(const void *pa, const void *pb) {
  const struct tid_key *a = pa, *b = pb;
  if (a->file != b->file) return a->file < b->file ? -1 : 1;
  return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* The threads that launched most of the strip's kernels (the launch join's host calls'): a
 * PyTorch step has two, the main thread (forward) and the autograd thread (backward). */
static int gv_threads(const struct report *rp, struct gview *v) {
  size_t lo = first_at(v, v->a), hi = first_at(v, v->b), n = 0;
  struct tid_key *t = malloc((hi > lo ? hi - lo : 1) * sizeof *t);
  if (!t) return -1;
  for (size_t i = lo; i < hi; i++) {
    const struct gop *o = &v->ops[i];
    const struct rfile *f = &rp->f[o->file];
    if (o->kind == SLK_KERNEL && f->lj.host_of && f->lj.host_of[o->rec] >= 0)
      t[n++] = (struct tid_key){o->file, f->td.kind[SLK_HOST].v[f->lj.host_of[o->rec]].tid, 1};
  }
  qsort(t, n, sizeof *t, cmp_tid_key);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && !cmp_tid_key(&t[i], &t[j]))
      j++;
    struct tid_key k = {t[i].file, t[i].tid, j - i};
    size_t at = v->nthr < STRIP_THREADS ? v->nthr++ : STRIP_THREADS - 1;
    if (at < STRIP_THREADS - 1 || k.n > v->thr[at].n) {
      for (; at > 0 && v->thr[at - 1].n < k.n; at--)
        v->thr[at] = v->thr[at - 1];
      v->thr[at] = k;
    }
    i = j;
  }
  free(t);
  return 0;
}

static void gv_free(struct gview *v) {
  free(v->ops);
  free(v->bound);
  free(v->step_cls);
  memset(v, 0, sizeof *v);
}

static int gv_build(const struct report *rp, size_t gi, struct gview *v) {
  const struct cls_gpu *g = &rp->cr.gpus[gi];
  const struct cls_steps *sp = &g->steps;
  memset(v, 0, sizeof *v);
  if (gv_ops(rp, g, v)) return -1;
  if (sp->count && sp->last_ns > sp->first_ns) {
    v->nsteps = sp->count;
    v->bound = malloc((sp->count + 1) * sizeof *v->bound);
    v->step_cls = malloc(sp->count * sizeof *v->step_cls);
    if (!v->bound || !v->step_cls) return -1;
    gv_bounds(rp, sp, v);
    size_t k = 0;
    for (size_t s = 0; s < v->nsteps; s++)
      seg_sum(g, &k, v->bound[s], v->bound[s + 1], v->step_cls[s]);
    if (gv_typical(v)) return -1;
  } else if (v->nops) {
    size_t mid = v->nops / 2, half = STRIP_OPS / 2;
    size_t lo = mid > half ? mid - half : 0, hi = mid + half < v->nops ? mid + half : v->nops - 1;
    v->a = v->ops[lo].start;
    v->b = v->ops[hi].end > v->a ? v->ops[hi].end : v->a + 1;
  }
  return v->b > v->a ? gv_threads(rp, v) : 0;
}

/* ---- text helpers ---- */

static const char *ns(char *b, uint64_t v) { return slack_fmt_ns(b, 32, v); }

static void gpu_title(FILE *f, const struct report *rp, const struct cls_gpu *g) {
  fprintf(f, "GPU %u", g->device);
  if (g->name) {
    fputs(" ", f);
    html_text(f, g->name);
  }
  if (rp->nf > 1 && *g->host) {
    fputs(" on ", f);
    html_text(f, g->host);
  }
}

/* ---- the verdict ---- */

static void section_verdict(FILE *f, const struct report *rp) {
  char b1[32], b2[32], b3[32];
  fputs("<section id=\"verdict\">\n<h2>Verdict</h2>\n", f);
  if (!rp->cr.ngpus) fputs("<p class=\"verdict ok\">No GPU work in the traces.</p>\n", f);
  for (size_t i = 0; i < rp->cr.ngpus; i++) {
    const struct cls_gpu *g = &rp->cr.gpus[i];
    const struct cls_steps *sp = &g->steps;
    uint64_t per;
    int vc = report_verdict(g, &per);
    fprintf(f, "<p class=\"verdict%s\"><b>", vc < 0 ? " ok" : "");
    gpu_title(f, rp, g);
    fputs(":</b> ", f);
    if (vc >= 0) {
      const struct cls_whatif *wi = report_verdict_whatif(g, vc);
      uint64_t of = report_verdict_step(g, vc);
      fprintf(f,
              "<i class=\"sw\" style=\"background:%s\"></i><b>%s</b>, %s of a %s step (%.0f%%%s)",
              html_class_color(vc), report_verdict_label(vc), ns(b1, per), ns(b2, of),
              slack_pct(per, of), report_verdict_note(g, vc, per));
      if (g->nsites[vc]) {
        char vs[320];
        fputs(", at <code>", f);
        html_text(f, report_verdict_site(g, vc, vs, sizeof vs));
        fputs("</code>", f);
      }
      uint64_t saves = report_verdict_saves(g, vc);
      if (saves > per + per / 4)
        fprintf(f,
                ".<br>Fixing it saves %s per step by the replay without it: more than its own "
                "time, as work that waited behind it starts sooner",
                ns(b1, saves));
      fprintf(f, ".<br>Predicted step if fixed: <b>%s</b> (%.2fx)", ns(b1, wi->best_ns),
              report_speedup(report_step_untraced(g), wi->best_ns));
      if (vc != CLS_OTHER) {
        fprintf(f, "; with every stall fixed: %s (%.2fx", ns(b3, g->whatif_all.best_ns),
                report_speedup(report_step_untraced(g), g->whatif_all.best_ns));
        uint64_t h = report_whatif_launches_kept(g);
        if (h) fprintf(f, "; %s with the launches left as they are", ns(b3, h));
        fputs(")", f);
      }
      fputs(".<br>Fix: ", f);
      html_text(f, report_verdict_fix(g, vc));
      uint64_t nper;
      int nc = report_verdict_next(g, vc, &nper);
      if (nc >= 0) {
        uint64_t nof = report_verdict_step(g, nc), nfixed = report_verdict_whatif(g, nc)->best_ns;
        fprintf(f,
                "<br>Then: <i class=\"sw\" style=\"background:%s\"></i>%s, %s of the step (%.0f%%)",
                html_class_color(nc), report_verdict_label(nc), ns(b1, nper), slack_pct(nper, nof));
        if (g->nsites[nc]) {
          char vs[320];
          fputs(", at <code>", f);
          html_text(f, report_verdict_site(g, nc, vs, sizeof vs));
          fputs("</code>", f);
        }
        fprintf(f, "; fixed alone: %s (%.2fx)", ns(b2, nfixed),
                report_speedup(report_step_untraced(g), nfixed));
        html_text(f, report_then_note(vc, nc));
      }
    } else if (sp->count) {
      fprintf(f, "no stall above 2%% of the %s step.", ns(b1, sp->step_ns));
    } else {
      fputs("no steps found (no NVTX ranges and no repeating pattern of GPU work): the charts "
            "show the whole window.",
            f);
    }
    uint64_t timed = report_steps_sliver(g);
    if (timed)
      fprintf(f,
              "<br><span class=\"muted\">Note: the %zu timed steps add up to %s of the %s window "
              "(%.1f%%): the rest is not the loop's steady state, and the figures per step stand "
              "for those steps only; record more of the loop.</span>",
              sp->count, ns(b1, timed), ns(b2, g->window_ns), slack_pct(timed, g->window_ns));
    fputs("</p>\n", f);
  }
  fputs("</section>\n", f);
}

/* ---- ranks and the per-step breakdown ---- */

/* The per-step time by class of a GPU (its steps; without steps, the whole window). */
static const uint64_t *gpu_per_step(const struct cls_gpu *g, uint64_t *full) {
  *full = g->steps.count ? g->steps.step_ns : g->window_ns;
  return g->steps.count ? g->steps.per_step_ns : g->time_ns;
}

static uint64_t busy_of(const uint64_t *v) {
  return v[CLS_COMPUTE] + v[CLS_COMMUNICATION] + v[CLS_COPY];
}

/* The processes with work on a GPU: "rank R" where the trace's header has one, else "pid P". */
static void gpu_procs(FILE *f, const struct report *rp, const struct gview *v) {
  char *seen = calloc(rp->nf ? rp->nf : 1, 1);
  size_t shown = 0, more = 0;
  for (size_t i = 0; seen && i < v->nops; i++) {
    size_t k = v->ops[i].file;
    if (seen[k]) continue;
    seen[k] = 1;
    if (shown == 4) {
      more++;
      continue;
    }
    const char *rank = trace_reader_header(rp->f[k].rd, "rank");
    const char *pid = trace_reader_header(rp->f[k].rd, "pid");
    fputs(shown++ ? ", " : "", f);
    if (rank && *rank) {
      fputs("rank ", f);
      html_text(f, rank);
    } else {
      fputs("pid ", f);
      html_text(f, pid && *pid ? pid : "?");
    }
  }
  if (more) fprintf(f, " and %zu more", more);
  free(seen);
}

static void section_ranks(FILE *f, const struct report *rp, const struct gview *views) {
  char b1[32], b2[32], b3[32];
  fputs("<section id=\"ranks\">\n<h2>GPUs and ranks</h2>\n<p class=\"muted\">One row per GPU "
        "(a rank, or the processes that share a GPU): its step, how much of the step the GPU "
        "worked, and its largest stall.</p>\n<table>\n<tr><th>GPU</th><th>processes</th>"
        "<th class=\"n\">steps</th><th class=\"n\">step</th><th class=\"n\">GPU busy</th>"
        "<th>largest stall</th><th class=\"n\">step if fixed</th><th class=\"n\">every stall "
        "fixed</th></tr>\n",
        f);
  for (size_t i = 0; i < rp->cr.ngpus; i++) {
    const struct cls_gpu *g = &rp->cr.gpus[i];
    uint64_t full, per;
    const uint64_t *v = gpu_per_step(g, &full);
    int vc = report_verdict(g, &per);
    fputs("<tr><td>", f);
    gpu_title(f, rp, g);
    fputs("</td><td>", f);
    gpu_procs(f, rp, &views[i]);
    fprintf(f,
            "</td><td class=\"n\">%zu</td><td class=\"n\">%s</td><td class=\"n\">%.1f%%</td>"
            "<td>",
            g->steps.count, g->steps.count ? ns(b1, g->steps.step_ns) : "-",
            slack_pct(busy_of(v), full));
    if (vc >= 0)
      fprintf(f,
              "<i class=\"sw\" style=\"background:%s\"></i>%s, %s (%.0f%%)</td>"
              "<td class=\"n\">%s</td>",
              html_class_color(vc), report_verdict_label(vc), ns(b2, per),
              slack_pct(per, g->steps.step_ns), ns(b3, report_verdict_whatif(g, vc)->best_ns));
    else
      fputs(g->steps.count ? "none above 2% of the step</td><td class=\"n\">-</td>"
                           : "no steps found</td><td class=\"n\">-</td>",
            f);
    fprintf(f, "<td class=\"n\">%s</td></tr>\n",
            g->steps.count ? ns(b1, g->whatif_all.best_ns) : "-");
  }
  fputs("</table>\n</section>\n", f);
}

static void section_breakdown(FILE *f, const struct report *rp) {
  char b1[32], b2[32], desc[512];
  uint64_t longest = 0;
  for (size_t i = 0; i < rp->cr.ngpus; i++) {
    uint64_t full;
    gpu_per_step(&rp->cr.gpus[i], &full);
    if (full > longest) longest = full;
  }
  double rowh = 26, h = 26.0 * (double)rp->cr.ngpus + 34;
  fputs("<section id=\"breakdown\">\n<h2>Where each step goes</h2>\n", f);
  if (!longest) {
    fputs("<p>No GPU work in the traces.</p>\n</section>\n", f);
    return;
  }
  fputs("<figure>\n", f);
  html_legend(f, ALL_CLASSES);
  snprintf(desc, sizeof desc,
           "One bar per GPU, the length of its step (the longest is %s), cut into the time of "
           "each class per step; the table below gives the numbers.",
           ns(b1, longest));
  html_svg_begin(f, "breakdown-chart", VIEW_W, h, "Per-step time by class, per GPU", desc);
  for (size_t i = 0; i < rp->cr.ngpus; i++) {
    const struct cls_gpu *g = &rp->cr.gpus[i];
    uint64_t full;
    const uint64_t *v = gpu_per_step(g, &full);
    double y = 4 + rowh * (double)i, w = (VIEW_W - LABEL_W - 90) * (double)full / (double)longest;
    fprintf(f, "<text x=\"0\" y=\"%s\">GPU %u%s</text>\n", html_num(b1, 32, y + 15), g->device,
            g->steps.count ? "" : " (window)");
    html_stack_row(f, v, full, LABEL_W, y, w, 20);
    fprintf(f, "<text x=\"%s\" y=\"%s\">%s</text>\n", html_num(b1, 32, LABEL_W + w + 6),
            html_num(b2, 32, y + 15), ns(desc, full));
  }
  html_time_axis(f, LABEL_W, VIEW_W - 90, rowh * (double)rp->cr.ngpus + 6, longest);
  html_svg_end(f);
  fputs("<figcaption>Per-step time of each GPU by class (a GPU without steps: its whole window). "
        "Hover a piece for its time.</figcaption>\n",
        f);
  fputs("<table>\n<tr><th>GPU</th><th class=\"n\">step</th>", f);
  for (int c = 0; c < CLS_COUNT; c++)
    fprintf(f, "<th class=\"n\"><i class=\"sw\" style=\"background:%s\"></i>%s</th>",
            html_class_color(c), report_class_label[c]);
  fputs("</tr>\n", f);
  for (size_t i = 0; i < rp->cr.ngpus; i++) {
    const struct cls_gpu *g = &rp->cr.gpus[i];
    uint64_t full;
    const uint64_t *v = gpu_per_step(g, &full);
    fprintf(f, "<tr><td>GPU %u</td><td class=\"n\">%s</td>", g->device, ns(b1, full));
    for (int c = 0; c < CLS_COUNT; c++)
      fprintf(f, "<td class=\"n\">%s<br><span class=\"muted\">%.1f%%</span></td>", ns(b1, v[c]),
              slack_pct(v[c], full));
    fputs("</tr>\n", f);
  }
  fputs("</table>\n</figure>\n</section>\n", f);
}

/* ---- the strip: one step in full ---- */

/* A row of pieces. A piece under one unit wide that starts where an open one under one unit
 * ends is merged into it (the color of the widest, a count for a tooltip), so a row holds at
 * most about two pieces per unit of width whatever the number of operations. */
struct painter {
  FILE *f;
  double y, h;
  int open;
  double x0, x1, widest;
  const char *color;
  size_t count;
  char title[320];
};

static void paint_flush(struct painter *p) {
  char b[4][32];
  if (!p->open) return;
  fprintf(p->f, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"%s\"><title>",
          html_num(b[0], 32, p->x0), html_num(b[1], 32, p->y), html_num(b[2], 32, p->x1 - p->x0),
          html_num(b[3], 32, p->h), p->color);
  if (p->count > 1)
    fprintf(p->f, "%zu short pieces (zoom the window below to see them)", p->count);
  else
    html_text(p->f, p->title);
  fputs("</title></rect>\n", p->f);
  p->open = 0;
}

static void paint(struct painter *p, double x0, double x1, const char *color, const char *title) {
  if (x1 - x0 < 0.3) x1 = x0 + 0.3; /* visible however short */
  if (p->open && x0 <= p->x1 + 0.5 && x1 - x0 < 1 && p->x1 - p->x0 < 1) {
    if (x1 - x0 > p->widest) {
      p->widest = x1 - x0;
      p->color = color;
    }
    if (x1 > p->x1) p->x1 = x1;
    p->count++;
    return;
  }
  paint_flush(p);
  *p = (struct painter){p->f, p->y, p->h, 1, x0, x1, x1 - x0, color, 1, ""};
  snprintf(p->title, sizeof p->title, "%s", title);
}

struct strip {
  uint64_t a, b;
  double x0, x1; /* where a and b are drawn */
};

static double sx(const struct strip *s, uint64_t t) {
  if (t < s->a) t = s->a;
  if (t > s->b) t = s->b;
  return s->x0 + (s->x1 - s->x0) * (double)(t - s->a) / (double)(s->b - s->a);
}

static size_t seg_at(const struct cls_gpu *g, uint64_t t) {
  size_t lo = 0, hi = g->nseg;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (g->seg[mid].end <= t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static void strip_classes(FILE *f, const struct cls_gpu *g, const struct strip *s, double y) {
  char b1[32], t[160];
  struct painter p = {f, y, 14, 0, 0, 0, 0, NULL, 0, ""};
  for (size_t i = seg_at(g, s->a); i < g->nseg && g->seg[i].start < s->b; i++) {
    const struct cls_segment *sg = &g->seg[i];
    uint64_t a = sg->start > s->a ? sg->start : s->a, b = sg->end < s->b ? sg->end : s->b;
    snprintf(t, sizeof t, "%s%s%s: %s", report_class_label[sg->cls],
             sg->cls == CLS_OTHER ? ", " : "", sg->cls == CLS_OTHER ? cls_reason_name(sg->why) : "",
             ns(b1, b - a));
    paint(&p, sx(s, a), sx(s, b), html_class_color(sg->cls), t);
  }
  paint_flush(&p);
}

/* A kernel's name as a person reads it, at most 100 bytes. */
static void op_title(const struct report *rp, const struct gop *o, char *t, size_t len) {
  char b1[32];
  const struct slk_record *r = gop_rec(rp, o);
  if (o->kind == SLK_KERNEL) {
    const char *raw = gop_name(rp, o);
    char *d = slack_demangle(raw);
    const char *name = d ? d : raw;
    snprintf(t, len, "%.100s%s: %s", name, strlen(name) > 100 ? "..." : "",
             ns(b1, o->end - o->start));
    free(d);
  } else {
    snprintf(t, len, "%s %s (%llu bytes)", o->kind == SLK_MEMCPY ? "copy" : "memset",
             ns(b1, o->end - o->start), (unsigned long long)r->bytes);
  }
}

static int cmp_u64v(const void *pa, const void *pb) { return cmp_u64(pa, pb); }

static void strip_stream(FILE *f, const struct report *rp, const struct gview *v,
                         const struct strip *s, uint64_t stream, double y) {
  char t[320];
  struct painter p = {f, y, 14, 0, 0, 0, 0, NULL, 0, ""};
  for (size_t i = first_at(v, s->a); i < v->nops && v->ops[i].start < s->b; i++) {
    const struct gop *o = &v->ops[i];
    if (o->stream != stream) continue;
    op_title(rp, o, t, sizeof t);
    int c = o->kind != SLK_KERNEL ? CLS_COPY : o->comm ? CLS_COMMUNICATION : CLS_COMPUTE;
    paint(&p, sx(s, o->start), sx(s, o->end), html_class_color(c), t);
  }
  paint_flush(&p);
}

/* The launching thread's calls: waits dark, copies green, launches blue-grey, the rest light;
 * blank where the thread is outside CUDA (Python, data loading). */
#define HOST_SYNC "#4d4d4d"
#define HOST_LAUNCH "#9aa9bd"
#define HOST_OTHER "#d4d4d4"

static const char *host_color(const struct slk_record *r) {
  const char *name = slk_fn_name(r->fn);
  if (slk_host_blocks(r->fn, r->flags)) return HOST_SYNC;
  if (strstr(name, "Memcpy")) return html_class_color(CLS_COPY);
  if (strstr(name, "Launch")) return HOST_LAUNCH;
  return HOST_OTHER;
}

static void strip_host(FILE *f, const struct report *rp, const struct tid_key *th,
                       const struct strip *s, double y) {
  char b1[32], t[320];
  const struct rfile *rf = &rp->f[th->file];
  const struct trace_array *h = &rf->td.kind[SLK_HOST];
  struct painter p = {f, y, 14, 0, 0, 0, 0, NULL, 0, ""};
  for (size_t i = 0; i < h->n && h->v[i].start < s->b; i++) {
    const struct slk_record *r = &h->v[i];
    if (r->tid != th->tid || r->end <= s->a) continue;
    int n = snprintf(t, sizeof t, "%s: %s", slk_fn_name(r->fn), ns(b1, r->end - r->start));
    if (r->pystack) {
      const char *py = trace_reader_string(rf->rd, r->pystack);
      size_t off, len;
      pyframes_user(py, &off, &len);
      snprintf(t + n, sizeof t - (size_t)n, ", from %.*s", (int)(len > 200 ? 200 : len), py + off);
    }
    paint(&p, sx(s, r->start), sx(s, r->end), host_color(r), t);
  }
  paint_flush(&p);
}

static const char *thread_label(const struct report *rp, const struct tid_key *th, char *buf,
                                size_t len) {
  const struct trace_array *ta = &rp->f[th->file].td.kind[SLK_THREAD];
  for (size_t k = 0; k < ta->n; k++)
    if (ta->v[k].tid == th->tid && ta->v[k].name) {
      snprintf(buf, len, "%.20s %llu", trace_reader_string(rp->f[th->file].rd, ta->v[k].name),
               (unsigned long long)th->tid);
      return buf;
    }
  snprintf(buf, len, "thread %llu", (unsigned long long)th->tid);
  return buf;
}

/* The streams with work in the strip, sorted, at most max of them (*more set when there were
 * others: the page says they are not drawn). */
static size_t strip_streams(const struct gview *v, const struct strip *s, uint64_t *out, size_t max,
                            int *more) {
  size_t n = 0;
  *more = 0;
  for (size_t i = first_at(v, s->a); i < v->nops && v->ops[i].start < s->b; i++) {
    size_t k = 0;
    while (k < n && out[k] != v->ops[i].stream)
      k++;
    if (k == n && n < max)
      out[n++] = v->ops[i].stream;
    else if (k == n)
      *more = 1;
  }
  qsort(out, n, sizeof *out, cmp_u64v);
  return n;
}

static uint64_t clipped_len(const struct cls_segment *sg, const struct strip *s) {
  uint64_t a = sg->start > s->a ? sg->start : s->a, b = sg->end < s->b ? sg->end : s->b;
  return b > a ? b - a : 0;
}

/* The text alternative of the strip: the step's time by class and its longest idle stretches. */
static void strip_table(FILE *f, const struct cls_gpu *g, const struct strip *s) {
  char b1[32], b2[32];
  uint64_t v[CLS_COUNT];
  size_t k = 0, top[5], ntop = 0;
  seg_sum(g, &k, s->a, s->b, v);
  for (size_t i = seg_at(g, s->a); i < g->nseg && g->seg[i].start < s->b; i++) {
    if (g->seg[i].cls < CLS_FIRST_IDLE) continue;
    uint64_t len = clipped_len(&g->seg[i], s);
    size_t j;
    if (ntop < 5)
      j = ntop++;
    else if (len > clipped_len(&g->seg[top[4]], s))
      j = 4;
    else
      continue;
    for (; j > 0 && clipped_len(&g->seg[top[j - 1]], s) < len; j--)
      top[j] = top[j - 1];
    top[j] = i;
  }
  fputs("<details><summary>The numbers of this step</summary>\n<table>\n<tr><th>class</th>"
        "<th class=\"n\">time in the step</th><th class=\"n\">share</th></tr>\n",
        f);
  for (int c = 0; c < CLS_COUNT; c++)
    if (v[c])
      fprintf(f,
              "<tr><td><i class=\"sw\" style=\"background:%s\"></i>%s</td><td class=\"n\">%s"
              "</td><td class=\"n\">%.1f%%</td></tr>\n",
              html_class_color(c), report_class_label[c], ns(b1, v[c]),
              slack_pct(v[c], s->b - s->a));
  fputs("</table>\n<table>\n<tr><th class=\"n\">idle stretch at</th><th class=\"n\">length</th>"
        "<th>class</th></tr>\n",
        f);
  for (size_t i = 0; i < ntop; i++) {
    const struct cls_segment *sg = &g->seg[top[i]];
    uint64_t a = sg->start > s->a ? sg->start : s->a;
    fprintf(f, "<tr><td class=\"n\">+%s</td><td class=\"n\">%s</td><td>%s%s%s</td></tr>\n",
            ns(b1, a - s->a), ns(b2, clipped_len(sg, s)), report_class_label[sg->cls],
            sg->cls == CLS_OTHER ? ": " : "", sg->cls == CLS_OTHER ? cls_reason_name(sg->why) : "");
  }
  fputs("</table>\n</details>\n", f);
}

#define MAX_STREAM_ROWS 24

static void strip_figure(FILE *f, const struct report *rp, size_t gi, const struct gview *v) {
  const struct cls_gpu *g = &rp->cr.gpus[gi];
  char b1[32], b2[32], b3[32], id[32], title[160], desc[600], tl[64];
  struct strip s = {v->a, v->b, LABEL_W, VIEW_W - 10};
  uint64_t streams[MAX_STREAM_ROWS], cls[CLS_COUNT];
  int more;
  size_t nst = strip_streams(v, &s, streams, MAX_STREAM_ROWS, &more), k = 0;
  int rows = 1 + (int)nst + (int)v->nthr;
  double h = 20.0 * rows + 30;
  seg_sum(g, &k, s.a, s.b, cls);
  uint64_t idle = 0;
  for (int c = CLS_FIRST_IDLE; c < CLS_COUNT; c++)
    idle += cls[c];
  if (v->nsteps)
    snprintf(title, sizeof title, "GPU %u, step %zu of %zu (%s)", g->device, v->typical + 1,
             v->nsteps, ns(b1, s.b - s.a));
  else
    snprintf(title, sizeof title, "GPU %u, %s of its work (no steps found)", g->device,
             ns(b1, s.b - s.a));
  int n = snprintf(desc, sizeof desc,
                   "Rows: the GPU's time by class, then each stream's kernels and copies%s. "
                   "In this span the GPU is busy %s and idle %s",
                   v->nthr ? ", then the CUDA calls of the threads that launched them" : "",
                   ns(b2, s.b - s.a - idle), ns(b3, idle));
  for (int c = CLS_FIRST_IDLE; c < CLS_COUNT && n < (int)sizeof desc - 80; c++)
    if (cls[c])
      n += snprintf(desc + n, sizeof desc - (size_t)n, "%s %s %s", c == CLS_FIRST_IDLE ? ":" : ",",
                    report_class_label[c], ns(b1, cls[c]));
  snprintf(desc + n, sizeof desc - (size_t)n, ".");
  snprintf(id, sizeof id, "strip-%zu", gi);
  fputs("<figure>\n", f);
  html_svg_begin(f, id, VIEW_W, h, title, desc);
  double y = 4;
  fprintf(f, "<text x=\"0\" y=\"%s\">GPU: by class</text>\n", html_num(b1, 32, y + 11));
  strip_classes(f, g, &s, y);
  for (size_t i = 0; i < nst; i++) {
    y += 20;
    fprintf(f, "<text x=\"0\" y=\"%s\">stream %llu</text>\n", html_num(b1, 32, y + 11),
            (unsigned long long)streams[i]);
    strip_stream(f, rp, v, &s, streams[i], y);
  }
  for (size_t i = 0; i < v->nthr; i++) {
    y += 20;
    fprintf(f, "<text x=\"0\" y=\"%s\">", html_num(b1, 32, y + 11));
    html_text(f, thread_label(rp, &v->thr[i], tl, sizeof tl));
    fputs("</text>\n", f);
    strip_host(f, rp, &v->thr[i], &s, y);
  }
  html_time_axis(f, s.x0, s.x1, y + 20, s.b - s.a);
  html_svg_end(f);
  fprintf(f, "<figcaption>");
  html_text(f, title);
  if (v->nsteps)
    fprintf(f, ", the step closest to the median, %s into the window%s.", ns(b1, s.a - rp->cr.t0),
            v->exact ? ""
                     : " (the steps' span cut into equal windows: each step's bounds were not "
                       "found)");
  else
    fprintf(f, ", %s into the window.", ns(b1, s.a - rp->cr.t0));
  fputs(" GPU rows colored by class; the launching threads' rows: <i class=\"sw\" "
        "style=\"background:" HOST_SYNC "\"></i>synchronizing call <i class=\"sw\" "
        "style=\"background:#009E73\"></i>copy <i class=\"sw\" style=\"background:" HOST_LAUNCH
        "\"></i>launch <i class=\"sw\" style=\"background:" HOST_OTHER "\"></i>other CUDA call, "
        "blank: outside CUDA (Python, data loading). Hover a piece for its name and time.",
        f);
  if (more) fprintf(f, " Only the first %d streams are drawn.", MAX_STREAM_ROWS);
  fputs("</figcaption>\n", f);
  strip_table(f, g, &s);
  fputs("</figure>\n", f);
}

/* ---- the whole window by class, zoomable ---- */

#define WIN_H 60.0 /* height of the columns */

/* j / ZOOM_COLS of span, never past it: a span near 2^64 rounds up to 2^64 as a double, which no
 * uint64_t holds (UBSan, the commands fuzzer) */
static uint64_t col_at(uint64_t span, size_t j) {
  double x = (double)span * (double)j / ZOOM_COLS;
  return x >= (double)span ? span : (uint64_t)x;
}

/* Each column's share of each class over [a, b). */
static void window_columns(const struct cls_gpu *g, uint64_t a, uint64_t b,
                           float (*col)[CLS_COUNT]) {
  size_t k = 0;
  uint64_t v[CLS_COUNT];
  for (size_t j = 0; j < ZOOM_COLS; j++) {
    uint64_t ta = a + col_at(b - a, j);
    uint64_t tb = a + col_at(b - a, j + 1);
    if (tb <= ta) tb = ta + 1;
    seg_sum(g, &k, ta, tb, v);
    for (int c = 0; c < CLS_COUNT; c++)
      col[j][c] = (float)((double)v[c] / (double)(tb - ta));
  }
}

/* One path per class, the columns stacked in class order from the bottom; neighbouring columns
 * with the same piece are one rectangle. The page's script draws zoomed views the same way. */
static void window_paths(FILE *f, const float (*col)[CLS_COUNT], double x0, double x1, double y) {
  char b[4][32];
  double cw = (x1 - x0) / ZOOM_COLS;
  fputs("<g class=\"cols\">\n", f);
  for (int c = 0; c < CLS_COUNT; c++) {
    fprintf(f, "<path fill=\"%s\" d=\"", html_class_color(c));
    for (size_t j = 0; j < ZOOM_COLS;) {
      double below = 0;
      for (int d = 0; d < c; d++)
        below += col[j][d];
      double top = y + WIN_H * (1 - below - col[j][c]), h = WIN_H * col[j][c];
      size_t e = j + 1;
      while (e < ZOOM_COLS && col[e][c] == col[j][c]) {
        double be = 0;
        for (int d = 0; d < c; d++)
          be += col[e][d];
        if (be != below) break;
        e++;
      }
      if (h >= 0.05)
        fprintf(f, "M%s %sh%sv%sh-%sz", html_num(b[0], 32, x0 + cw * (double)j),
                html_num(b[1], 32, top), html_num(b[2], 32, cw * (double)(e - j)),
                html_num(b[3], 32, h), b[2]);
      j = e;
    }
    fputs("\"/>\n", f);
  }
  fputs("</g>\n", f);
}

static void window_figure(FILE *f, const struct report *rp, size_t gi, const struct gview *v) {
  const struct cls_gpu *g = &rp->cr.gpus[gi];
  uint64_t a = rp->cr.t0, b = rp->cr.t1 > a ? rp->cr.t1 : a + 1;
  char b1[32], b2[32], id[32], title[96], desc[640];
  float(*col)[CLS_COUNT] = malloc(ZOOM_COLS * sizeof *col);
  if (!col) return;
  window_columns(g, a, b, col);
  snprintf(id, sizeof id, "zoom-%zu", gi);
  snprintf(title, sizeof title, "GPU %u, the whole window (%s) by class", g->device, ns(b1, b - a));
  int n = snprintf(desc, sizeof desc,
                   "%d columns across the window, each stacked by the share of each class in its "
                   "time. Over the window:",
                   ZOOM_COLS);
  for (int c = 0; c < CLS_COUNT && n < (int)sizeof desc - 60; c++)
    if (g->time_ns[c])
      n += snprintf(desc + n, sizeof desc - (size_t)n, " %s %.1f%%;", report_class_label[c],
                    slack_pct(g->time_ns[c], g->window_ns));
  fprintf(f,
          "<figure class=\"zoom\" data-gpu=\"%zu\">\n<div class=\"tools\" data-gpu=\"%zu\">"
          "<button data-act=\"all\">Whole window</button>%s<button data-act=\"in\">Zoom in"
          "</button><button data-act=\"out\">Zoom out</button><button data-act=\"left\" "
          "aria-label=\"earlier\">&#9664;</button><button data-act=\"right\" "
          "aria-label=\"later\">&#9654;</button> <span class=\"muted\" id=\"zoom-range-%zu\">"
          "the whole window</span></div>\n",
          gi, gi, v->nsteps ? "<button data-act=\"step\">Typical step</button>" : "", gi);
  html_svg_begin(f, id, VIEW_W, WIN_H + 30, title, desc);
  fprintf(f,
          "<text x=\"0\" y=\"%s\">GPU %u</text><text x=\"0\" y=\"%s\" class=\"muted\">"
          "share by class</text>\n",
          html_num(b1, 32, WIN_H / 2), g->device, html_num(b2, 32, WIN_H / 2 + 14));
  window_paths(f, (const float(*)[CLS_COUNT])col, LABEL_W, VIEW_W - 10, 2);
  fputs("<g class=\"ax\">\n", f);
  html_time_axis(f, LABEL_W, VIEW_W - 10, WIN_H + 4, b - a);
  fprintf(f,
          "</g>\n<rect class=\"sel\" x=\"0\" y=\"2\" width=\"0\" height=\"%s\" "
          "fill=\"#0003\" pointer-events=\"none\"/>\n",
          html_num(b1, 32, WIN_H));
  html_svg_end(f);
  free(col);
  fputs("<figcaption>The whole window by class: drag across it to zoom into a stretch, or use the "
        "buttons (or the mouse wheel); click a bar of the step chart below to see that step. The "
        "table gives the window's time by class.</figcaption>\n",
        f);
  fputs("<details><summary>The window's time by class</summary>\n<table>\n<tr><th>class</th>"
        "<th class=\"n\">time</th><th class=\"n\">share</th></tr>\n",
        f);
  for (int c = 0; c < CLS_COUNT; c++)
    if (g->time_ns[c]) {
      fprintf(f, "<tr><td><i class=\"sw\" style=\"background:%s\"></i>%s", html_class_color(c),
              report_class_label[c]);
      for (int w = 1; c == CLS_OTHER && w < CLS_WHY_COUNT; w++)
        if (g->other_ns[w])
          fprintf(f, "<br><span class=\"muted\">%s %s</span>", cls_reason_name(w),
                  ns(b1, g->other_ns[w]));
      fprintf(f, "</td><td class=\"n\">%s</td><td class=\"n\">%.1f%%</td></tr>\n",
              ns(b1, g->time_ns[c]), slack_pct(g->time_ns[c], g->window_ns));
    }
  fputs("</table>\n</details>\n</figure>\n", f);
}

/* The stretches for zooming, as lengths and classes ('9': not classified); at most max of them:
 * beyond, the window is cut into max cells that each keep their largest class. *cell is the
 * cell's length, 0 when the stretches are exact. */
static void zoom_data(FILE *f, const struct report *rp, const struct cls_gpu *g, size_t max,
                      uint64_t *cell) {
  uint64_t t = rp->cr.t0, end = rp->cr.t1;
  *cell = 0;
  fputs("\"len\":[", f);
  int first = 1;
  char *cls = malloc(2 * (g->nseg < max ? g->nseg : max) + 2);
  size_t n = 0;
  if (!cls) {
    fputs("],\"cls\":\"\"", f);
    return;
  }
  if (g->nseg <= max) {
    for (size_t i = 0; i < g->nseg; i++) {
      if (g->seg[i].start > t) { /* not expected (the segments tile the window): kept apart */
        fprintf(f, "%s%llu", first ? "" : ",", (unsigned long long)(g->seg[i].start - t));
        first = 0;
        cls[n++] = '9';
      }
      uint64_t s = g->seg[i].start > t ? g->seg[i].start : t;
      if (g->seg[i].end <= s) continue;
      fprintf(f, "%s%llu", first ? "" : ",", (unsigned long long)(g->seg[i].end - s));
      first = 0;
      cls[n++] = (char)('0' + g->seg[i].cls);
      t = g->seg[i].end;
    }
  } else {
    uint64_t step = (end - t + max - 1) / max, v[CLS_COUNT], run = 0;
    size_t k = 0;
    int last = -1;
    *cell = step;
    for (uint64_t a = t; a < end; a += step) {
      uint64_t b = a + step < end ? a + step : end;
      seg_sum(g, &k, a, b, v);
      int best = 0;
      for (int c = 1; c < CLS_COUNT; c++)
        if (v[c] > v[best]) best = c;
      if (best != last && run) {
        fprintf(f, "%s%llu", first ? "" : ",", (unsigned long long)run);
        first = 0;
        cls[n++] = (char)('0' + last);
        run = 0;
      }
      last = best;
      run += b - a;
    }
    if (run) {
      fprintf(f, "%s%llu", first ? "" : ",", (unsigned long long)run);
      cls[n++] = (char)('0' + last);
    }
  }
  cls[n] = 0;
  fprintf(f, "],\"cls\":\"%s\"", cls);
  free(cls);
}

/* ---- the steps across the run ---- */

struct bar {
  size_t first, n; /* steps first .. first + n - 1 */
  uint64_t a, b;   /* their span */
  uint64_t len;    /* mean step */
  uint64_t cls[CLS_COUNT];
};

/* Bar i of nbars: a step, or a group of steps averaged when there are more than STEP_BARS. */
static struct bar step_bar(const struct gview *v, size_t i, size_t group) {
  struct bar r = {i * group, 0, 0, 0, 0, {0}};
  r.n = r.first + group <= v->nsteps ? group : v->nsteps - r.first;
  r.a = v->bound[r.first];
  r.b = v->bound[r.first + r.n];
  r.len = (r.b - r.a) / r.n;
  for (size_t k = r.first; k < r.first + r.n; k++)
    for (int c = 0; c < CLS_COUNT; c++)
      r.cls[c] += v->step_cls[k][c];
  for (int c = 0; c < CLS_COUNT; c++)
    r.cls[c] /= r.n;
  return r;
}

static void bar_label(char *buf, size_t len, const struct bar *r) {
  if (r->n == 1)
    snprintf(buf, len, "step %zu", r->first + 1);
  else
    snprintf(buf, len, "steps %zu-%zu", r->first + 1, r->first + r->n);
}

static void steps_bars(FILE *f, const struct report *rp, size_t gi, const struct gview *v,
                       size_t group, size_t nbars, uint64_t ymax) {
  char b[5][32], lab[48];
  const double x0 = 70, x1 = VIEW_W - 10, y0 = 10, ph = 160;
  double bw = (x1 - x0) / (double)nbars, gap = bw > 3 ? bw * 0.15 : 0;
  uint64_t tick = html_tick_step(ymax);
  for (uint64_t t = tick; t <= ymax; t += tick) { /* grid lines and their labels */
    double y = y0 + ph - ph * (double)t / (double)ymax;
    fprintf(f,
            "<path class=\"grid\" d=\"M%s %sH%s\"/><text x=\"%s\" y=\"%s\" "
            "text-anchor=\"end\">%s</text>\n",
            html_num(b[0], 32, x0), html_num(b[1], 32, y), html_num(b[2], 32, x1),
            html_num(b[3], 32, x0 - 4), html_num(b[4], 32, y + 4),
            html_tick_label(lab, sizeof lab, t, tick));
  }
  for (int c = 0; c < CLS_COUNT; c++) {
    fprintf(f, "<path fill=\"%s\" d=\"", html_class_color(c));
    for (size_t i = 0; i < nbars; i++) {
      struct bar r = step_bar(v, i, group);
      uint64_t below = 0;
      for (int d = 0; d < c; d++)
        below += r.cls[d];
      double h = ph * (double)r.cls[c] / (double)ymax;
      double top = y0 + ph - ph * (double)(below + r.cls[c]) / (double)ymax;
      if (h >= 0.05)
        fprintf(f, "M%s %sh%sv%sh-%sz", html_num(b[0], 32, x0 + bw * (double)i),
                html_num(b[1], 32, top), html_num(b[2], 32, bw - gap), html_num(b[3], 32, h), b[2]);
    }
    fputs("\"/>\n", f);
  }
  for (size_t i = 0; i < nbars; i++) {
    struct bar r = step_bar(v, i, group);
    bar_label(lab, sizeof lab, &r);
    fprintf(f,
            "<rect class=\"hit\" data-gpu=\"%zu\" data-a=\"%llu\" data-b=\"%llu\" x=\"%s\" "
            "y=\"%s\" width=\"%s\" height=\"%s\"><title>%s: %s",
            gi, (unsigned long long)(r.a - rp->cr.t0), (unsigned long long)(r.b - rp->cr.t0),
            html_num(b[0], 32, x0 + bw * (double)i), html_num(b[1], 32, y0), html_num(b[2], 32, bw),
            html_num(b[3], 32, ph), lab, ns(b[4], r.len));
    for (int c = 0; c < CLS_COUNT; c++)
      if (r.cls[c] * 100 >= r.len) /* the classes of 1% or more */
        fprintf(f, "; %s %s", report_class_label[c], ns(b[4], r.cls[c]));
    fputs(" (click: zoom the window to it)</title></rect>\n", f);
  }
  fprintf(f, "<path class=\"axis\" d=\"M%s %sH%s\"/>\n", html_num(b[0], 32, x0),
          html_num(b[1], 32, y0 + ph), html_num(b[2], 32, x1));
  fprintf(f,
          "<text x=\"%s\" y=\"%s\">step 1</text><text x=\"%s\" y=\"%s\" "
          "text-anchor=\"end\">step %zu</text>\n",
          html_num(b[0], 32, x0), html_num(b[1], 32, y0 + ph + 16), html_num(b[2], 32, x1), b[1],
          v->nsteps);
}

static void steps_table(FILE *f, const struct report *rp, const struct gview *v, size_t group,
                        size_t nbars) {
  char b1[32], lab[48];
  fprintf(f,
          "<details><summary>Every %s</summary>\n<table>\n<tr><th>step</th>"
          "<th class=\"n\">starts at</th><th class=\"n\">%s</th>",
          group > 1 ? "group of steps (means)" : "step", group > 1 ? "mean step" : "length");
  for (int c = 0; c < CLS_COUNT; c++)
    fprintf(f, "<th class=\"n\">%s</th>", report_class_label[c]);
  fputs("</tr>\n", f);
  for (size_t i = 0; i < nbars; i++) {
    struct bar r = step_bar(v, i, group);
    bar_label(lab, sizeof lab, &r);
    fprintf(f, "<tr><td>%s</td><td class=\"n\">%s</td>", lab, ns(b1, r.a - rp->cr.t0));
    fprintf(f, "<td class=\"n\">%s</td>", ns(b1, r.len));
    for (int c = 0; c < CLS_COUNT; c++)
      fprintf(f, "<td class=\"n\">%s</td>", r.cls[c] ? ns(b1, r.cls[c]) : "-");
    fputs("</tr>\n", f);
  }
  fputs("</table>\n</details>\n", f);
}

static void steps_figure(FILE *f, const struct report *rp, size_t gi, const struct gview *v) {
  const struct cls_gpu *g = &rp->cr.gpus[gi];
  char b1[32], b2[32], b3[32], id[32], title[96], desc[400];
  if (!v->nsteps) {
    fprintf(f,
            "<p>GPU %u: no steps found (no NVTX ranges and no repeating pattern of GPU "
            "work).</p>\n",
            g->device);
    return;
  }
  size_t group = (v->nsteps + STEP_BARS - 1) / STEP_BARS, nbars = (v->nsteps + group - 1) / group;
  size_t fast = 0, slow = 0;
  uint64_t ymax = 0;
  for (size_t k = 0; k < v->nsteps; k++) {
    uint64_t len = v->bound[k + 1] - v->bound[k];
    if (len < v->bound[fast + 1] - v->bound[fast]) fast = k;
    if (len > v->bound[slow + 1] - v->bound[slow]) slow = k;
  }
  for (size_t i = 0; i < nbars; i++) {
    struct bar r = step_bar(v, i, group);
    if (r.len > ymax) ymax = r.len;
  }
  uint64_t tick = html_tick_step(ymax + ymax / 20 + 1); /* headroom, then whole ticks */
  ymax = (ymax / tick + 1) * tick;
  snprintf(id, sizeof id, "steps-%zu", gi);
  snprintf(title, sizeof title, "GPU %u, every step's time by class", g->device);
  snprintf(desc, sizeof desc,
           "%zu steps (%s), mean %s; fastest step %zu (%s), slowest step %zu (%s). Each bar is "
           "%s stacked by class.",
           v->nsteps, g->steps.source, ns(b1, g->steps.step_ns), fast + 1,
           ns(b2, v->bound[fast + 1] - v->bound[fast]), slow + 1,
           ns(b3, v->bound[slow + 1] - v->bound[slow]),
           group > 1 ? "the mean of a group of steps" : "one step");
  fputs("<figure>\n", f);
  html_svg_begin(f, id, VIEW_W, 196, title, desc);
  steps_bars(f, rp, gi, v, group, nbars, ymax);
  html_svg_end(f);
  fprintf(f, "<figcaption>");
  html_text(f, desc);
  fprintf(f, " Steps from %s (", g->steps.source);
  html_text(f, g->steps.detail);
  fprintf(f, ").%s</figcaption>\n",
          v->exact ? ""
                   : " Each step's bounds were not found: the bars cut the steps' span into "
                     "equal windows.");
  steps_table(f, rp, v, group, nbars);
  fputs("</figure>\n", f);
}

/* ---- call sites and fixes ---- */

/* A site's Python frames: the user's own (innermost first, at most 3), then how many library
 * frames were folded. */
static void site_python(FILE *f, const char *py) {
  int shown = 0, folded = 0;
  for (const char *p = py; p && *p;) {
    size_t len = strcspn(p, "\n");
    const char *file, *fn;
    size_t fl, nl;
    long line;
    if (pyframe_parse(p, len, &file, &fl, &line, &fn, &nl) && pyframe_is_user(file, fl) &&
        shown < 3) {
      fputs("<br><code class=\"py\">py ", f);
      html_textn(f, p, len > 200 ? 200 : len);
      fputs("</code>", f);
      shown++;
    } else {
      folded++;
    }
    p += len;
    if (*p == '\n') p++;
  }
  if (folded)
    fprintf(f, "<br><span class=\"muted\">(%d library frame%s folded)</span>", folded,
            folded == 1 ? "" : "s");
}

static void site_stack(FILE *f, const char *stack) {
  if (!stack) return;
  fputs("<details><summary>native callers</summary><code class=\"stack\">", f);
  int n = 0;
  for (const char *p = stack; *p && n < 8; n++) {
    size_t len = strcspn(p, "\n");
    fputs("&lt; ", f);
    html_textn(f, p, len > 160 ? 160 : len);
    fputs("<br>", f);
    p += len;
    if (*p == '\n') p++;
  }
  fputs("</code></details>", f);
}

/* The classes of a GPU in the order the page lists them: the most time per step first. */
static void class_order(const struct cls_gpu *g, int *order) {
  uint64_t full;
  const uint64_t *v = gpu_per_step(g, &full);
  for (int c = 0; c < CLS_COUNT; c++)
    order[c] = c;
  for (int i = 1; i < CLS_COUNT; i++)
    for (int j = i; j > 0 && v[order[j]] > v[order[j - 1]]; j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
}

static void sites_gpu(FILE *f, const struct report *rp, size_t gi, size_t nsites) {
  const struct cls_gpu *g = &rp->cr.gpus[gi];
  char b1[32], b2[32];
  int order[CLS_COUNT];
  uint64_t full;
  const uint64_t *v = gpu_per_step(g, &full);
  class_order(g, order);
  for (int k = 0; k < CLS_COUNT; k++) {
    int c = order[k];
    if (!g->time_ns[c] || !g->nsites[c]) continue;
    fprintf(f, "<h3><i class=\"sw\" style=\"background:%s\"></i>%s: %s %s (%.1f%%)</h3>\n",
            html_class_color(c), report_class_label[c], ns(b1, v[c]),
            g->steps.count ? "per step" : "in the window", slack_pct(v[c], full));
    fputs("<p class=\"fix\">Fix: ", f);
    html_text(f, report_fix(g, c));
    fprintf(f,
            "</p>\n<table>\n<tr>%s<th class=\"n\">total</th><th class=\"n\">share</th>"
            "<th>call site</th></tr>\n",
            g->steps.count ? "<th class=\"n\">per step</th>" : "");
    for (size_t s = 0; s < g->nsites[c] && s < nsites; s++) {
      const struct cls_site *st = &g->sites[c][s];
      fputs("<tr>", f);
      if (g->steps.count)
        fprintf(f, "<td class=\"n\">%s</td>", ns(b1, st->steps_ns / g->steps.count));
      fprintf(f, "<td class=\"n\">%s</td><td class=\"n\">%.1f%%</td><td><code>", ns(b2, st->ns),
              slack_pct(st->ns, g->time_ns[c]));
      html_text(f, st->site);
      fputs("</code>", f);
      site_python(f, st->python);
      site_stack(f, st->stack);
      fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
  }
}

/* ---- what-if ---- */

struct wrow {
  const char *label;
  uint64_t ns;
  const char *color;
  int bold;
};

static size_t whatif_rows(const struct cls_gpu *g, struct wrow *r) {
  static const int stalls[] = {CLS_SERIALIZATION, CLS_COPY_STALL, CLS_DATA_STARVATION,
                               CLS_LAUNCH_OVERHEAD, CLS_OTHER};
  static const char *const fixed[] = {"serialization fixed", "copy stall and copies fixed",
                                      "data starvation fixed", "launch overhead fixed",
                                      "other idle time removed"};
  const struct cls_steps *sp = &g->steps;
  uint64_t per;
  int vc = report_verdict(g, &per);
  size_t n = 0;
  r[n++] = (struct wrow){"now (measured)", sp->step_ns, "#6b6b6b", 0};
  if (g->corrected_step_ns)
    r[n++] = (struct wrow){"without the tracer's cost", g->corrected_step_ns, "#999", 0};
  for (size_t k = 0; k < sizeof stalls / sizeof stalls[0]; k++) {
    int c = stalls[k];
    uint64_t t = sp->per_step_ns[c] + (c == CLS_COPY_STALL ? sp->copy_host_per_step_ns : 0);
    if (t * 100 < sp->step_ns) continue; /* under 1% of the step: nothing to win */
    r[n++] =
        (struct wrow){fixed[k], report_verdict_whatif(g, c)->best_ns, html_class_color(c), c == vc};
  }
  uint64_t h = report_whatif_launches_kept(g);
  if (h) r[n++] = (struct wrow){"every stall but launch overhead", h, "#444", 0};
  r[n++] = (struct wrow){"every stall fixed", g->whatif_all.best_ns, "#1f1f1f", 0};
  return n;
}

static void whatif_gpu(FILE *f, const struct report *rp, size_t gi) {
  const struct cls_gpu *g = &rp->cr.gpus[gi];
  const struct cls_steps *sp = &g->steps;
  char b[4][32], id[32], title[96], desc[600];
  struct wrow r[10]; /* now, untraced, 5 stalls, every stall but launches, every stall */
  if (!sp->count) {
    fprintf(f, "<p>GPU %u: no steps, no what-if.</p>\n", g->device);
    return;
  }
  size_t n = whatif_rows(g, r);
  uint64_t max = 1;
  for (size_t i = 0; i < n; i++)
    if (r[i].ns > max) max = r[i].ns;
  int len = snprintf(desc, sizeof desc, "Predicted step time:");
  for (size_t i = 0; i < n && len < (int)sizeof desc - 80; i++)
    len += snprintf(desc + len, sizeof desc - (size_t)len, " %s %s (%.2fx);", r[i].label,
                    ns(b[0], r[i].ns), report_speedup(report_step_untraced(g), r[i].ns));
  snprintf(id, sizeof id, "whatif-%zu", gi);
  snprintf(title, sizeof title, "GPU %u, the step now and if each stall were fixed", g->device);
  fputs("<figure>\n", f);
  html_svg_begin(f, id, VIEW_W, 24.0 * (double)n + 8, title, desc);
  for (size_t i = 0; i < n; i++) {
    double y = 4 + 24.0 * (double)i, w = 560.0 * (double)r[i].ns / (double)max;
    fprintf(f,
            "<text x=\"0\" y=\"%s\"%s>%s</text><rect x=\"220\" y=\"%s\" width=\"%s\" "
            "height=\"18\" fill=\"%s\"/>",
            html_num(b[0], 32, y + 13), r[i].bold ? " class=\"b\"" : "", r[i].label,
            html_num(b[1], 32, y), html_num(b[2], 32, w < .5 ? .5 : w), r[i].color);
    fprintf(f, "<text x=\"%s\" y=\"%s\">%s", html_num(b[0], 32, 226 + w),
            html_num(b[1], 32, y + 13), ns(b[3], r[i].ns));
    if (i) fprintf(f, " (%.2fx)", report_speedup(report_step_untraced(g), r[i].ns));
    fputs("</text>\n", f);
  }
  html_svg_end(f);
  fputs("<figcaption>", f);
  html_text(f, desc);
  fputs(" The what-if replays the recorded dependency graph without the class and without the "
        "tracer's cost (docs/CLASSIFICATION.md).</figcaption>\n</figure>\n",
        f);
}

/* ---- the tracer's own cost ---- */

/* One bar of parts, scaled to full, with a label at its left and a text at its right. */
static void tracer_bar(FILE *f, double y, const char *label, const uint64_t *v,
                       const char *const *colors, const char *const *names, int n, uint64_t full,
                       const char *right) {
  char b[5][32];
  double x = 220, w = 560;
  fprintf(f, "<text x=\"0\" y=\"%s\">%s</text>\n", html_num(b[0], 32, y + 13), label);
  for (int i = 0; i < n && full; i++) {
    double pw = w * (double)v[i] / (double)full;
    if (pw <= 0) continue;
    fprintf(f,
            "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"18\" fill=\"%s\"><title>%s: %s"
            "</title></rect>\n",
            html_num(b[0], 32, x), html_num(b[1], 32, y), html_num(b[2], 32, pw < .5 ? .5 : pw),
            colors[i], names[i], ns(b[3], v[i]));
    x += pw;
  }
  fprintf(f, "<text x=\"%s\" y=\"%s\">", html_num(b[0], 32, 226 + w), html_num(b[1], 32, y + 13));
  html_text(f, right);
  fputs("</text>\n", f);
}

/* The cost by part, and in a step the part that sat in idle time. */
static void tracer_chart(FILE *f, size_t gi, const struct cls_gpu *g) {
  static const char *const colors[] = {"#8a8a8a", "#4d4d4d", "#c4c4c4"};
  static const char *const parts[] = {"hooks", "CUPTI per call", "CUPTI overhead records"};
  static const char *const step_colors[] = {"#4d4d4d", "#e3e3e3"};
  static const char *const step_parts[] = {"the tracer's cost in idle time",
                                           "the rest of the step"};
  const struct cls_tracer *t = &g->tracer;
  const struct cls_steps *sp = &g->steps;
  char id[32], desc[400], right[96], b1[32], b2[32], b3[32];
  uint64_t v[3] = {t->hook_ns, t->cupti_ns, t->records_ns};
  int steps = sp->count && sp->step_ns;
  snprintf(desc, sizeof desc,
           "The tracer cost %s: hooks %s, CUPTI per call %s, CUPTI overhead records %s.%s",
           ns(b1, t->total_ns), ns(b2, t->hook_ns), ns(b3, t->cupti_ns), ns(right, t->records_ns),
           steps ? " The second bar is one step, with the tracer's cost in its idle time." : "");
  snprintf(id, sizeof id, "tracer-%zu", gi);
  html_svg_begin(f, id, VIEW_W, steps ? 56 : 30, "The tracer's own cost", desc);
  tracer_bar(f, 4, "cost by part", v, colors, parts, 3, t->total_ns, ns(right, t->total_ns));
  if (steps) {
    uint64_t w[2] = {sp->tracer_per_step_ns, sp->step_ns > sp->tracer_per_step_ns
                                                 ? sp->step_ns - sp->tracer_per_step_ns
                                                 : 0};
    snprintf(right, sizeof right, "%s of a %s step (%.1f%%)", ns(b1, sp->tracer_per_step_ns),
             ns(b2, sp->step_ns), slack_pct(sp->tracer_per_step_ns, sp->step_ns));
    tracer_bar(f, 30, "in a step", w, step_colors, step_parts, 2, sp->step_ns, right);
  }
  html_svg_end(f);
}

static void tracer_gpu(FILE *f, const struct report *rp, size_t gi) {
  const struct cls_gpu *g = &rp->cr.gpus[gi];
  const struct cls_tracer *t = &g->tracer;
  char b1[32], b2[32], b3[32];
  fprintf(f, "<h3>GPU %u</h3>\n<figure>\n", g->device);
  if (t->total_ns) tracer_chart(f, gi, g); /* nothing to draw of a trace without its cost */
  fputs("<table>\n", f);
  fprintf(f,
          "<tr><td>total</td><td class=\"n\">%s</td><td>on the threads that launched work "
          "on this GPU</td></tr>\n",
          ns(b1, t->total_ns));
  fprintf(f,
          "<tr><td><i class=\"sw\" style=\"background:#8a8a8a\"></i>hooks</td><td "
          "class=\"n\">%s</td><td>%llu calls</td></tr>\n",
          ns(b1, t->hook_ns), (unsigned long long)t->calls);
  fprintf(f,
          "<tr><td><i class=\"sw\" style=\"background:#4d4d4d\"></i>CUPTI per call</td><td "
          "class=\"n\">%s</td><td>%llu launches/copies at %s "
          "each, ",
          ns(b1, t->cupti_ns), (unsigned long long)t->cupti_calls,
          ns(b2, t->cupti_calls ? t->cupti_ns / t->cupti_calls : 0));
  html_text(f, report_cupti_source_text(t->cupti_source));
  if (t->probe_launches)
    fprintf(f, " (probe: a launch takes %s with CUPTI, %s %s)", ns(b1, t->probe_on_ns),
            ns(b3, t->probe_off_ns), t->probe_detached ? "detached" : "with records off");
  if (t->probe_hooked_ns) /* format 2.6 */
    fprintf(f, "; slack's hooks %s per launch", ns(b1, t->hook_launch_ns));
  if (t->probe_api_off_ns)
    fprintf(f, "; CUPTI's API records %s per launch", ns(b1, t->api_launch_ns));
  fputs("</td></tr>\n", f);
  fprintf(f,
          "<tr><td><i class=\"sw\" style=\"background:#c4c4c4\"></i>CUPTI overhead "
          "records</td><td class=\"n\">%s</td><td>buffers, "
          "instrumentation</td></tr>\n",
          ns(b1, t->records_ns));
  fprintf(f,
          "<tr><td>in this GPU's idle time</td><td class=\"n\">%s</td><td>what the what-ifs "
          "take out</td></tr>\n",
          ns(b1, t->in_idle_ns));
  if (g->steps.count)
    fprintf(f,
            "<tr><td>per step, in idle time</td><td class=\"n\">%s</td><td>%.1f%% of the "
            "step</td></tr>\n",
            ns(b1, g->steps.tracer_per_step_ns),
            slack_pct(g->steps.tracer_per_step_ns, g->steps.step_ns));
  fprintf(f,
          "<tr><td>module loading</td><td class=\"n\">%s</td><td>the driver's, not the "
          "tracer's</td></tr>\n</table>\n</figure>\n",
          ns(b1, t->loading_ns));
}

/* ---- the page ---- */

/* Zooming the window charts: the stretches of each GPU are in the page's data; a view counts
 * each column's share of each class over the stretches it shows and redraws the paths, the way
 * window_paths drew the whole window. Drag, the wheel and the buttons zoom; a step bar's click
 * shows that step. window.slackZoom(gpu, from_ns, to_ns) does the same for the page's test. */
static const char script[] =
    "(function () {\n"
    "  'use strict';\n"
    "  var el = document.getElementById('slack-data');\n"
    "  if (!el) return;\n"
    "  var D = JSON.parse(el.textContent), NC = D.cols, X0 = D.x0, X1 = D.x1;\n"
    "  function fmt(v) {\n"
    "    if (v < 1e3) return Math.round(v) + ' ns';\n"
    "    if (v < 1e6) return (v / 1e3).toFixed(1) + ' us';\n"
    "    if (v < 1e9) return (v / 1e6).toFixed(2) + ' ms';\n"
    "    return (v / 1e9).toFixed(3) + ' s';\n"
    "  }\n"
    "  function num(v) { var r = Math.round(v * 10) / 10; return String(r === 0 ? 0 : r); }\n"
    "  function tickStep(span) {\n"
    "    var s = 1;\n"
    "    while (span / s > 8) {\n"
    "      if (span / (s * 2) <= 8) return s * 2;\n"
    "      if (span / (s * 5) <= 8) return s * 5;\n"
    "      s *= 10;\n"
    "    }\n"
    "    return s;\n"
    "  }\n"
    "  function tickLabel(t, step) {\n"
    "    if (!t) return '0';\n"
    "    if (t >= 1e9 && step < 1e9)\n"
    "      return (t / 1e9).toFixed(Math.max(0, Math.round(Math.log10(1e9 / step)))) + ' s';\n"
    "    var u = step >= 1e9 ? [1e9, 's'] : step >= 1e6 ? [1e6, 'ms'] : step >= 1e3 ? [1e3, 'us']"
    " : [1, 'ns'];\n"
    "    return Math.round(t / u[0]) + ' ' + u[1];\n"
    "  }\n"
    "  function View(i, g) {\n"
    "    var n = g.len.length, t = 0, k;\n"
    "    this.i = i; this.g = g; this.st = new Float64Array(n + 1);\n"
    "    for (k = 0; k < n; k++) { this.st[k] = t; t += g.len[k]; }\n"
    "    this.st[n] = t;\n"
    "    this.svg = document.getElementById('zoom-' + i);\n"
    "    this.cols = this.svg.querySelector('.cols');\n"
    "    this.ax = this.svg.querySelector('.ax');\n"
    "    this.sel = this.svg.querySelector('.sel');\n"
    "    this.label = document.getElementById('zoom-range-' + i);\n"
    "    this.a = 0; this.b = D.span;\n"
    "    this.bind();\n"
    "  }\n"
    "  View.prototype.first = function (t) {\n"
    "    var lo = 0, hi = this.g.cls.length;\n"
    "    while (lo < hi) { var m = (lo + hi) >> 1; if (this.st[m + 1] <= t) lo = m + 1; else hi = "
    "m; }\n"
    "    return lo;\n"
    "  };\n"
    "  View.prototype.columns = function (a, b) {\n"
    "    var col = new Float64Array(NC * 8), w = (b - a) / NC, cls = this.g.cls, k, j;\n"
    "    for (k = this.first(a); k < cls.length && this.st[k] < b; k++) {\n"
    "      var c = cls.charCodeAt(k) - 48;\n"
    "      if (c > 7) continue;\n"
    "      var s = Math.max(this.st[k], a), e = Math.min(this.st[k + 1], b);\n"
    "      var je = Math.min(NC - 1, Math.floor((e - a) / w));\n"
    "      for (j = Math.max(0, Math.floor((s - a) / w)); j <= je; j++) {\n"
    "        var o = Math.min(e, a + (j + 1) * w) - Math.max(s, a + j * w);\n"
    "        if (o > 0) col[j * 8 + c] += o / w;\n"
    "      }\n"
    "    }\n"
    "    return col;\n"
    "  };\n"
    "  View.prototype.render = function (a, b) {\n"
    "    var span = D.span, c, j, q;\n"
    "    if (b - a < 1000) { var m = (a + b) / 2; a = m - 500; b = m + 500; }\n"
    "    if (a < 0) { b -= a; a = 0; }\n"
    "    if (b > span) { a = Math.max(0, a - (b - span)); b = span; }\n"
    "    this.a = a; this.b = b;\n"
    "    var col = this.columns(a, b), paths = this.cols.querySelectorAll('path');\n"
    "    var cw = (X1 - X0) / NC;\n"
    "    for (c = 0; c < 8; c++) {\n"
    "      var d = [];\n"
    "      for (j = 0; j < NC;) {\n"
    "        var below = 0, f = col[j * 8 + c], en = j + 1;\n"
    "        for (q = 0; q < c; q++) below += col[j * 8 + q];\n"
    "        while (en < NC && col[en * 8 + c] === f) {\n"
    "          var be = 0;\n"
    "          for (q = 0; q < c; q++) be += col[en * 8 + q];\n"
    "          if (be !== below) break;\n"
    "          en++;\n"
    "        }\n"
    "        if (D.h * f >= 0.05) {\n"
    "          var ww = num(cw * (en - j));\n"
    "          d.push('M' + num(X0 + cw * j) + ' ' + num(D.y + D.h * (1 - below - f)) + 'h' + ww"
    " +\n"
    "                 'v' + num(D.h * f) + 'h-' + ww + 'z');\n"
    "        }\n"
    "        j = en;\n"
    "      }\n"
    "      paths[c].setAttribute('d', d.join(''));\n"
    "    }\n"
    "    this.axis(a, b);\n"
    "    this.label.textContent = a === 0 && b === span ? 'the whole window' :\n"
    "      'from ' + fmt(a) + ' to ' + fmt(b) + ' (' + fmt(b - a) + ')' +\n"
    "      (this.g.cell ? '; drawn in cells of ' + fmt(this.g.cell) : '');\n"
    "  };\n"
    "  View.prototype.axis = function (a, b) {\n"
    "    var step = tickStep(b - a), y = D.ay, out = [];\n"
    "    out.push('<path class=\"axis\" d=\"M' + X0 + ' ' + y + 'H' + X1 + '\"/>');\n"
    "    for (var t = Math.ceil(a / step) * step; t <= b; t += step) {\n"
    "      var x = X0 + (X1 - X0) * (t - a) / (b - a);\n"
    "      out.push('<path class=\"axis\" d=\"M' + num(x) + ' ' + y + 'v4\"/><text x=\"' + "
    "num(x) +\n"
    "               '\" y=\"' + (y + 15) + '\" text-anchor=\"' + (x - X0 < 20 ? 'start' : "
    "'middle') +\n"
    "               '\">' + tickLabel(t, step) + '</text>');\n"
    "    }\n"
    "    this.ax.innerHTML = out.join('');\n"
    "  };\n"
    "  View.prototype.at = function (ev) {\n"
    "    var r = this.svg.getBoundingClientRect(), x = (ev.clientX - r.left) / r.width * D.w;\n"
    "    return Math.min(Math.max(x, X0), X1);\n"
    "  };\n"
    "  View.prototype.time = function (x) { return this.a + (x - X0) / (X1 - X0) * (this.b - "
    "this.a); };\n"
    "  View.prototype.zoom = function (f, t) {\n"
    "    if (t === undefined) t = (this.a + this.b) / 2;\n"
    "    this.render(t - (t - this.a) * f, t + (this.b - t) * f);\n"
    "  };\n"
    "  View.prototype.bind = function () {\n"
    "    var v = this, from = null;\n"
    "    this.svg.style.touchAction = 'none';\n"
    "    this.svg.addEventListener('pointerdown', function (ev) {\n"
    "      from = v.at(ev);\n"
    "      v.svg.setPointerCapture(ev.pointerId);\n"
    "    });\n"
    "    this.svg.addEventListener('pointermove', function (ev) {\n"
    "      if (from === null) return;\n"
    "      var x = v.at(ev);\n"
    "      v.sel.setAttribute('x', num(Math.min(x, from)));\n"
    "      v.sel.setAttribute('width', num(Math.abs(x - from)));\n"
    "    });\n"
    "    this.svg.addEventListener('pointerup', function (ev) {\n"
    "      var x = v.at(ev);\n"
    "      if (from !== null && Math.abs(x - from) > 3)\n"
    "        v.render(v.time(Math.min(x, from)), v.time(Math.max(x, from)));\n"
    "      from = null;\n"
    "      v.sel.setAttribute('width', '0');\n"
    "    });\n"
    "    this.svg.addEventListener('wheel', function (ev) {\n"
    "      ev.preventDefault();\n"
    "      v.zoom(ev.deltaY < 0 ? 0.8 : 1.25, v.time(v.at(ev)));\n"
    "    }, { passive: false });\n"
    "  };\n"
    "  var views = D.gpus.map(function (g, i) { return new View(i, g); });\n"
    "  document.querySelectorAll('.tools button').forEach(function (btn) {\n"
    "    btn.addEventListener('click', function () {\n"
    "      var v = views[+btn.parentNode.getAttribute('data-gpu')], s = v.b - v.a;\n"
    "      var act = btn.getAttribute('data-act');\n"
    "      if (act === 'all') v.render(0, D.span);\n"
    "      else if (act === 'step') v.render(v.g.typ[0], v.g.typ[1]);\n"
    "      else if (act === 'in') v.zoom(0.25);\n"
    "      else if (act === 'out') v.zoom(4);\n"
    "      else if (act === 'left') v.render(v.a - s / 2, v.b - s / 2);\n"
    "      else if (act === 'right') v.render(v.a + s / 2, v.b + s / 2);\n"
    "    });\n"
    "  });\n"
    "  document.querySelectorAll('rect.hit').forEach(function (r) {\n"
    "    r.addEventListener('click', function () {\n"
    "      var v = views[+r.getAttribute('data-gpu')];\n"
    "      v.render(+r.getAttribute('data-a'), +r.getAttribute('data-b'));\n"
    "      v.svg.scrollIntoView({ block: 'center' });\n"
    "    });\n"
    "  });\n"
    "  window.addEventListener('beforeprint', function () {\n"
    "    document.querySelectorAll('details').forEach(function (d) { d.open = true; });\n"
    "  });\n"
    "  window.slackZoom = function (i, a, b) {\n"
    "    views[i].render(a, b);\n"
    "    return views[i].label.textContent;\n"
    "  };\n"
    "})();\n";

static void page_data(FILE *f, const struct report *rp, const struct gview *v) {
  char b1[32], b2[32], b3[32], b4[32], b5[32];
  size_t total = 0, ng = rp->cr.ngpus;
  for (size_t i = 0; i < ng; i++)
    total += rp->cr.gpus[i].nseg;
  size_t max = total <= ZOOM_PIECES || !ng ? total + 1 : ZOOM_PIECES / ng;
  fprintf(f,
          "<script type=\"application/json\" id=\"slack-data\">{\"w\":%s,\"x0\":%s,\"x1\":%s,"
          "\"y\":2,\"h\":%s,\"ay\":%s,\"cols\":%d,\"span\":%llu,\"gpus\":[",
          html_num(b1, 32, VIEW_W), html_num(b2, 32, LABEL_W), html_num(b3, 32, VIEW_W - 10),
          html_num(b4, 32, WIN_H), html_num(b5, 32, WIN_H + 4), ZOOM_COLS,
          (unsigned long long)(rp->cr.t1 - rp->cr.t0));
  for (size_t i = 0; i < ng; i++) {
    uint64_t cell;
    fputs(i ? ",{" : "{", f);
    zoom_data(f, rp, &rp->cr.gpus[i], max, &cell);
    uint64_t a = v[i].b > v[i].a ? v[i].a - rp->cr.t0 : 0,
             b = v[i].b > v[i].a ? v[i].b - rp->cr.t0 : 0;
    fprintf(f, ",\"typ\":[%llu,%llu],\"cell\":%llu}", (unsigned long long)a, (unsigned long long)b,
            (unsigned long long)cell);
  }
  fputs("]}</script>\n", f);
}

static void page_head(FILE *f, const struct report *rp) {
  char b1[32];
  fputs("<header>\n<h1>slack report</h1>\n<p>", f);
  for (size_t i = 0; i < rp->nf; i++) {
    const char *cmd = trace_reader_header(rp->f[i].rd, "cmdline");
    const char *pid = trace_reader_header(rp->f[i].rd, "pid");
    fputs(i ? "<br>" : "", f);
    fputs("<code>", f);
    html_text(f, rp->f[i].path);
    fputs("</code>", f);
    if (cmd && *cmd) {
      fputs(": <code>", f);
      html_textn(f, cmd, 200);
      fputs("</code>", f);
    }
    if (pid && *pid) {
      fputs(" (pid ", f);
      html_text(f, pid);
      fputs(")", f);
    }
  }
  fprintf(f,
          "</p>\n<p class=\"muted\">Window: %s, from the first to the last GPU or host event; "
          "%zu GPU%s. Each GPU's time is cut into classes: busy (compute, communication, copy) "
          "and idle for a reason (serialization, copy stall, data starvation, launch overhead, "
          "other); docs/CLASSIFICATION.md has the rules.</p>\n",
          ns(b1, rp->cr.t1 - rp->cr.t0), rp->cr.ngpus, rp->cr.ngpus == 1 ? "" : "s");
  if (rp->dropped)
    fprintf(f,
            "<p class=\"verdict\">Warning: %llu events were dropped while recording: the times "
            "undercount.</p>\n",
            (unsigned long long)rp->dropped);
  fputs("</header>\n", f);
}

/* The compute hints of GPU gi: a table (kind, time per step, saving, evidence, fix). */
static void hints_gpu(FILE *f, const struct report *rp, size_t gi) {
  struct hints h;
  char b1[32], b2[32];
  fputs("<div class=\"gpu\"><h3>", f);
  gpu_title(f, rp, &rp->cr.gpus[gi]);
  fputs("</h3>\n", f);
  if (report_gpu_hints(rp, gi, &h) || !h.n) {
    fputs("<p>No compute hint: no fp32 matrix kernels without tensor cores, no storm of short "
          "kernels, no pageable copies worth a hint.</p></div>\n",
          f);
    return;
  }
  fputs("<table><caption>Compute hints, largest saving first</caption>\n<tr><th>hint</th>"
        "<th>per step</th><th>saves about</th><th>evidence</th><th>fix</th></tr>\n",
        f);
  for (size_t k = 0; k < h.n; k++) {
    fputs("<tr><td>", f);
    html_text(f, h.v[k].kind);
    fprintf(f, "</td><td>%s</td><td>%s</td><td>", slack_fmt_ns(b1, sizeof b1, h.v[k].per_step_ns),
            h.v[k].gain_ns ? slack_fmt_ns(b2, sizeof b2, h.v[k].gain_ns) : "not known");
    html_text(f, h.v[k].evidence);
    fputs("</td><td>", f);
    html_text(f, h.v[k].suggestion);
    fputs("</td></tr>\n", f);
  }
  fputs("</table></div>\n", f);
}

static void page_body(FILE *f, const struct report *rp, const struct gview *v, size_t nsites) {
  size_t ng = rp->cr.ngpus;
  section_verdict(f, rp);
  section_ranks(f, rp, v);
  section_breakdown(f, rp);
  fputs("<section id=\"timeline\">\n<h2>Timeline</h2>\n", f);
  for (size_t i = 0; i < ng; i++) {
    fputs("<div class=\"gpu\"><h3>", f);
    gpu_title(f, rp, &rp->cr.gpus[i]);
    fputs("</h3>\n", f);
    if (v[i].b > v[i].a) strip_figure(f, rp, i, &v[i]);
    window_figure(f, rp, i, &v[i]);
    fputs("</div>\n", f);
  }
  fputs("</section>\n<section id=\"steps\">\n<h2>Steps across the run</h2>\n", f);
  for (size_t i = 0; i < ng; i++)
    steps_figure(f, rp, i, &v[i]);
  fputs("</section>\n<section id=\"sites\">\n<h2>Where the time comes from, and the fix</h2>\n"
        "<p class=\"muted\">Per class, its call sites by time: the user's Python line where there "
        "is one, the CUDA call and its native caller; under it the Python frames (py) and the "
        "native callers.</p>\n",
        f);
  for (size_t i = 0; i < ng; i++) {
    fputs("<div class=\"gpu\"><h3>", f);
    gpu_title(f, rp, &rp->cr.gpus[i]);
    fputs("</h3>\n", f);
    sites_gpu(f, rp, i, nsites);
    fputs("</div>\n", f);
  }
  fputs("</section>\n<section id=\"hints\">\n<h2>Compute hints</h2>\n<p class=\"muted\">When "
        "the kernels are the time: what the kernel and copy records suggest, with the evidence "
        "and an estimated saving per step.</p>\n",
        f);
  for (size_t i = 0; i < ng; i++)
    hints_gpu(f, rp, i);
  fputs("</section>\n<section id=\"whatif\">\n<h2>What if it were fixed</h2>\n", f);
  for (size_t i = 0; i < ng; i++)
    whatif_gpu(f, rp, i);
  fputs("</section>\n<section id=\"tracer\">\n<h2>The tracer's own cost</h2>\n<p class=\"muted\">"
        "What recording cost the traced program: slack's hooks, CUPTI's work inside each launch "
        "and its own buffers. The what-ifs take the part in idle time out.</p>\n",
        f);
  for (size_t i = 0; i < ng; i++)
    tracer_gpu(f, rp, i);
  fputs("</section>\n", f);
}

int report_html(FILE *f, const struct report *rp, size_t nsites) {
  size_t ng = rp->cr.ngpus;
  struct gview *v = calloc(ng ? ng : 1, sizeof *v);
  int rc = v ? 0 : -1;
  for (size_t i = 0; i < ng && !rc; i++)
    rc = gv_build(rp, i, &v[i]);
  if (!rc) {
    html_begin(f, "slack report");
    page_head(f, rp);
    page_body(f, rp, v, nsites);
    fprintf(f,
            "<footer><p class=\"muted\">slack %s. Colors: the Okabe-Ito palette, readable "
            "with color-blindness; every chart has its numbers in a table.</p></footer>\n",
            SLACK_VERSION);
    page_data(f, rp, v);
    html_end(f, script);
  }
  for (size_t i = 0; v && i < ng; i++)
    gv_free(&v[i]);
  free(v);
  return rc;
}

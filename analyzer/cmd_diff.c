/* slack diff: a run before a fix against the run after it (docs/slack-diff.md).
 *
 * Both traces are loaded and classified as `slack report` does (report.h); their GPUs are paired
 * (the same device id, else in order) and each pair is compared row by row: the step, the step
 * without the tracer's cost, the throughput (samples per second when the step's sample count is
 * given, steps per second always), the GPU's busy share of the step, each class's time per step,
 * kernels, copies and memsets per step, the tracer's cost per step; then the verdicts and what the
 * before run's what-ifs predicted against the after run's step. Text, JSON or one HTML page. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "json.h"
#include "report.h"
#include "slack.h"

static const char usage[] =
    "usage: slack diff [--json | --html OUT.html] [--samples N[,M]] [--cupti-call-ns NS] BEFORE "
    "AFTER\n"
    "  --json             one JSON object instead of text\n"
    "  --html OUT.html    one self-contained HTML page ('-': standard output)\n"
    "  --samples N[,M]    samples (images, sequences, tokens) per step, for the throughput in\n"
    "                     samples/s; N,M when BEFORE's steps hold N and AFTER's M\n"
    "  --cupti-call-ns NS CUPTI's own cost per traced launch, copy or memset, for both traces\n"
    "BEFORE and AFTER are traces (.slk) of the same program before and after a change.\n";

/* How a row's values read and which way is better. */
enum unit {
  U_NS,    /* a time per step: lower is better */
  U_RATE,  /* per second: higher is better */
  U_SHARE, /* a share of the step, 0..1: higher is better (the GPU busy) */
  U_COUNT  /* operations per step: neither */
};

struct row {
  const char *key, *label;
  enum unit unit;
  int indent;
  int cls;  /* the class of a per-class row, else -1 */
  int have; /* both values known */
  double before, after;
};

#define MAX_ROWS 24

struct pair {
  const struct cls_gpu *b, *a; /* before, after */
  int steps;                   /* both have steps: rows per step; else over the whole windows */
  struct row rows[MAX_ROWS];
  size_t nrows;
};

struct diff {
  struct report before, after;
  const char *path_b, *path_a;
  uint64_t samples_b, samples_a; /* 0: not given */
  struct pair *pairs;
  size_t npairs;
  size_t only_b, only_a; /* GPUs without a partner */
};

/* The step without the tracer at its lowest: launch overhead as its floor (the launch gaps'
 * time outside CUDA calls, as if every call cost nothing untraced; docs/CLASSIFICATION.md, "The
 * tracer's own cost"). The step without the tracer's cost (the replay) is the highest. */
static uint64_t floor_step(const struct cls_gpu *g) {
  const struct cls_steps *s = &g->steps;
  uint64_t lo = s->per_step_ns[CLS_LAUNCH_OVERHEAD] > s->launch_floor_per_step_ns
                    ? s->per_step_ns[CLS_LAUNCH_OVERHEAD] - s->launch_floor_per_step_ns
                    : 0;
  return s->step_ns > lo ? s->step_ns - lo : s->step_ns;
}

static uint64_t high_step(const struct cls_gpu *g) {
  uint64_t c = g->corrected_step_ns ? g->corrected_step_ns : g->steps.step_ns;
  uint64_t f = floor_step(g);
  return c > f ? c : f;
}

/* Operations of one kind on g that start inside its steps, per step. */
static double ops_per_step(const struct report *rp, const struct cls_gpu *g, int kind) {
  const struct cls_steps *sp = &g->steps;
  uint64_t n = 0;
  if (!sp->count) return 0;
  for (size_t i = 0; i < rp->nf; i++) {
    const char *host = trace_reader_header(rp->f[i].rd, "host");
    if (strcmp(host ? host : "", g->host)) continue;
    const struct trace_array *ta = &rp->f[i].td.kind[kind];
    for (size_t k = 0; k < ta->n; k++)
      n += ta->v[k].device == g->device && ta->v[k].start >= sp->first_ns &&
           ta->v[k].start < sp->last_ns;
  }
  return (double)n / (double)sp->count;
}

static double busy_share(const struct cls_gpu *g) {
  const uint64_t *v = g->steps.per_step_ns;
  if (!g->steps.step_ns) return NAN;
  return (double)(v[CLS_COMPUTE] + v[CLS_COMMUNICATION] + v[CLS_COPY]) / (double)g->steps.step_ns;
}

static void add_row(struct pair *p, const char *key, const char *label, enum unit u, int indent,
                    int have, double b, double a) {
  if (p->nrows < MAX_ROWS)
    p->rows[p->nrows++] = (struct row){key, label, u, indent, -1, have, b, a};
}

/* Without steps on both sides there is nothing per step: the two windows are compared whole. */
static void window_rows(struct pair *p) {
  static const char *const keys[CLS_COUNT] = {
      "time_ns.compute",         "time_ns.communication", "time_ns.copy",
      "time_ns.serialization",   "time_ns.copy_stall",    "time_ns.data_starvation",
      "time_ns.launch_overhead", "time_ns.other"};
  const struct cls_gpu *b = p->b, *a = p->a;
  add_row(p, "window_ns", "window", U_NS, 0, 1, (double)b->window_ns, (double)a->window_ns);
  add_row(p, "busy_share", "GPU busy share of the window", U_SHARE, 0, b->window_ns && a->window_ns,
          b->window_ns ? (double)b->busy_ns / (double)b->window_ns : 0,
          a->window_ns ? (double)a->busy_ns / (double)a->window_ns : 0);
  for (int c = 0; c < CLS_COUNT; c++) {
    add_row(p, keys[c], report_class_label[c], U_NS, 1, 1, (double)b->time_ns[c],
            (double)a->time_ns[c]);
    p->rows[p->nrows - 1].cls = c;
  }
  add_row(p, "kernels", "kernels", U_COUNT, 0, 1, (double)b->kernels, (double)a->kernels);
  add_row(p, "memcpys", "copies", U_COUNT, 0, 1, (double)b->memcpys, (double)a->memcpys);
  add_row(p, "memsets", "memsets", U_COUNT, 0, 1, (double)b->memsets, (double)a->memsets);
  add_row(p, "tracer_ns", "tracer's cost", U_NS, 0, 1, (double)b->tracer.total_ns,
          (double)a->tracer.total_ns);
}

static void pair_rows(struct diff *d, struct pair *p) {
  static const char *const keys[CLS_COUNT] = {
      "per_step_ns.compute",         "per_step_ns.communication", "per_step_ns.copy",
      "per_step_ns.serialization",   "per_step_ns.copy_stall",    "per_step_ns.data_starvation",
      "per_step_ns.launch_overhead", "per_step_ns.other"};
  const struct cls_gpu *b = p->b, *a = p->a;
  int steps = p->steps = b->steps.count && a->steps.count && b->steps.step_ns && a->steps.step_ns;
  if (!steps) {
    window_rows(p);
    return;
  }
  double sb = (double)b->steps.step_ns, sa = (double)a->steps.step_ns;
  add_row(p, "step_ns", "step (measured)", U_NS, 0, steps, sb, sa);
  add_row(p, "corrected_step_ns", "step without the tracer's cost", U_NS, 0,
          steps && b->corrected_step_ns && a->corrected_step_ns, (double)b->corrected_step_ns,
          (double)a->corrected_step_ns);
  add_row(p, "floor_step_ns", "step without the tracer, lowest", U_NS, 0, steps,
          (double)floor_step(b), (double)floor_step(a));
  if (d->samples_b)
    add_row(p, "samples_per_s", "throughput, samples/s", U_RATE, 0, steps,
            steps ? (double)d->samples_b * 1e9 / sb : 0,
            steps ? (double)d->samples_a * 1e9 / sa : 0);
  add_row(p, "steps_per_s", "steps/s", U_RATE, 0, steps, steps ? 1e9 / sb : 0,
          steps ? 1e9 / sa : 0);
  add_row(p, "busy_share", "GPU busy share of the step", U_SHARE, 0, steps, busy_share(b),
          busy_share(a));
  for (int c = 0; c < CLS_COUNT; c++) {
    add_row(p, keys[c], report_class_label[c], U_NS, 1, steps, (double)b->steps.per_step_ns[c],
            (double)a->steps.per_step_ns[c]);
    p->rows[p->nrows - 1].cls = c;
  }
  add_row(p, "kernels_per_step", "kernels per step", U_COUNT, 0, steps,
          ops_per_step(&d->before, b, SLK_KERNEL), ops_per_step(&d->after, a, SLK_KERNEL));
  add_row(p, "memcpys_per_step", "copies per step", U_COUNT, 0, steps,
          ops_per_step(&d->before, b, SLK_MEMCPY), ops_per_step(&d->after, a, SLK_MEMCPY));
  add_row(p, "memsets_per_step", "memsets per step", U_COUNT, 0, steps,
          ops_per_step(&d->before, b, SLK_MEMSET), ops_per_step(&d->after, a, SLK_MEMSET));
  add_row(p, "tracer_per_step_ns", "tracer's cost per step (in idle time)", U_NS, 0, steps,
          (double)b->steps.tracer_per_step_ns, (double)a->steps.tracer_per_step_ns);
}

/* Pairs the GPUs: the same device id first (the same host preferred), then the rest in order. */
static int pair_gpus(struct diff *d) {
  const struct cls_result *rb = &d->before.cr, *ra = &d->after.cr;
  char *used = calloc(ra->ngpus + 1, 1);
  d->pairs = calloc(rb->ngpus + 1, sizeof *d->pairs);
  if (!used || !d->pairs) {
    free(used);
    return -1;
  }
  for (int pass = 0; pass < 3; pass++)
    for (size_t i = 0; i < rb->ngpus; i++) {
      const struct cls_gpu *g = &rb->gpus[i];
      int taken = 0;
      for (size_t k = 0; k < d->npairs && !taken; k++)
        taken = d->pairs[k].b == g;
      for (size_t j = 0; j < ra->ngpus && !taken; j++) {
        const struct cls_gpu *h = &ra->gpus[j];
        int fits =
            pass == 2 || (h->device == g->device && (pass == 1 || !strcmp(h->host, g->host)));
        if (used[j] || !fits) continue;
        used[j] = 1;
        taken = 1;
        d->pairs[d->npairs++].b = g;
        d->pairs[d->npairs - 1].a = h;
      }
    }
  d->only_b = rb->ngpus - d->npairs;
  d->only_a = ra->ngpus - d->npairs;
  free(used);
  for (size_t k = 0; k < d->npairs; k++)
    pair_rows(d, &d->pairs[k]);
  return 0;
}

/* ---- formatting ---- */

static const char *fmt_value(char *buf, size_t len, enum unit u, double v) {
  switch (u) {
  case U_NS: return slack_fmt_ns(buf, len, (uint64_t)llround(v > 0 ? v : 0));
  case U_RATE: snprintf(buf, len, "%.*f/s", v >= 100 ? 1 : v >= 10 ? 2 : 3, v); break;
  case U_SHARE: snprintf(buf, len, "%.1f%%", 100 * v); break;
  case U_COUNT: snprintf(buf, len, "%.*f", v == floor(v) ? 0 : 1, v); break;
  }
  return buf;
}

/* "-227.81 ms -74.4%", "+607.0/s +290.4%", "+71.1 pts", "+0.0": after minus before. */
static const char *fmt_change(char *buf, size_t len, const struct row *r) {
  char b[32];
  double d = r->after - r->before;
  if (!r->have) return "-";
  switch (r->unit) {
  case U_NS:
    slack_fmt_ns(b, sizeof b, (uint64_t)llround(fabs(d)));
    snprintf(buf, len, "%s%s", d < 0 ? "-" : "+", b);
    break;
  case U_RATE: snprintf(buf, len, "%+.*f/s", fabs(d) >= 100 ? 1 : fabs(d) >= 10 ? 2 : 3, d); break;
  case U_SHARE: snprintf(buf, len, "%+.1f pts", 100 * d); return buf;
  case U_COUNT: snprintf(buf, len, "%+.*f", d == floor(d) ? 0 : 1, d); break;
  }
  if (r->before != 0) {
    size_t n = strlen(buf);
    snprintf(buf + n, len - n, " %+.1f%%", 100 * d / r->before);
  }
  return buf;
}

/* -1 when the change is for the better, 1 for the worse, 0 neither (or too small to say). */
static int judge(const struct row *r) {
  double d = r->after - r->before;
  if (!r->have || r->unit == U_COUNT) return 0;
  if (r->unit == U_SHARE) return fabs(d) < 0.005 ? 0 : d > 0 ? -1 : 1;
  if (fabs(d) <= 0.01 * fabs(r->before)) return 0; /* under 1%: noise */
  return (r->unit == U_RATE) == (d > 0) ? -1 : 1;
}

static double ratio(const struct pair *p) {
  return p->a->steps.step_ns && p->b->steps.count && p->a->steps.count
             ? (double)p->b->steps.step_ns / (double)p->a->steps.step_ns
             : 0;
}

/* The speedup without the tracer: from the before's lowest over the after's highest step to
 * its highest over the after's lowest. 0 without steps on both sides. */
static void ratio_untraced(const struct pair *p, double *lo, double *hi) {
  *lo = *hi = 0;
  if (!ratio(p) || !floor_step(p->a) || !high_step(p->a)) return;
  *lo = (double)floor_step(p->b) / (double)high_step(p->a);
  *hi = (double)high_step(p->b) / (double)floor_step(p->a);
}

/* The speedup without the tracer as a point, where the before run has an untraced tail
(SLACK_TAIL_MS): its step replayed at the host's untraced pace over the after's step without the
tracer's cost (at its own tail's pace when it has one). 0 otherwise. */
static double ratio_tail(const struct pair *p) {
  const struct cls_tracer *t = &p->b->tracer;
  if (!ratio(p) || !t->tail_calls || t->tail_taken || !p->b->corrected_step_ns) return 0;
  uint64_t a = p->a->corrected_step_ns ? p->a->corrected_step_ns : p->a->steps.step_ns;
  return a ? (double)p->b->corrected_step_ns / (double)a : 0;
}

static void verdict_text(char *buf, size_t len, const struct cls_gpu *g) {
  char b1[32];
  uint64_t per;
  int vc = report_verdict(g, &per);
  if (vc >= 0)
    snprintf(buf, len, "%s, %s per step (%.0f%%)", report_verdict_label(vc),
             slack_fmt_ns(b1, sizeof b1, per), slack_pct(per, g->steps.step_ns));
  else if (g->steps.count)
    snprintf(buf, len, "no stall above 2%% of the step");
  else
    snprintf(buf, len, "no steps found");
}

/* The tracer's cost above 5% of a step makes traced steps overstate untraced ones. */
static double tracer_share(const struct cls_gpu *g) {
  return g->steps.step_ns ? (double)g->steps.tracer_per_step_ns / (double)g->steps.step_ns : 0;
}

/* ---- text ---- */

static void text_pair(const struct pair *p) {
  char b1[48], b2[48], b3[64], vb[128], va[128];
  printf("\nGPU %u", p->b->device);
  if (p->b->name) printf("  %s", p->b->name);
  if (p->a->device != p->b->device) printf("  (after: GPU %u)", p->a->device);
  printf("\n  steps: %zu before (%s), %zu after (%s)%s\n", p->b->steps.count, p->b->steps.source,
         p->a->steps.count, p->a->steps.source,
         p->steps ? "" : ": not on both sides, the whole windows compared");
  printf("    %-38s %14s %14s   %s\n", "", "before", "after", "change");
  for (size_t i = 0; i < p->nrows; i++) {
    const struct row *r = &p->rows[i];
    if (r->indent && (!i || !p->rows[i - 1].indent))
      printf("    %s:\n", p->steps ? "time per step by class" : "time in the window by class");
    printf("    %*s%-*s %14s %14s   %s", 2 * r->indent, "", 38 - 2 * r->indent, r->label,
           r->have ? fmt_value(b1, sizeof b1, r->unit, r->before) : "-",
           r->have ? fmt_value(b2, sizeof b2, r->unit, r->after) : "-",
           fmt_change(b3, sizeof b3, r));
    if (i == 0 && ratio(p) > 0)
      printf("   (%.2fx %s)", ratio(p) >= 1 ? ratio(p) : 1 / ratio(p),
             ratio(p) >= 1 ? "faster" : "slower");
    printf("\n");
  }
  verdict_text(vb, sizeof vb, p->b);
  verdict_text(va, sizeof va, p->a);
  printf("  verdict before: %s\n  verdict after:  %s\n", vb, va);
  if (p->b->steps.count && p->a->steps.count) {
    uint64_t per;
    int vc = report_verdict(p->b, &per);
    uint64_t after = p->a->steps.step_ns;
    if (vc >= 0) {
      uint64_t pred = report_verdict_whatif(p->b, vc)->best_ns;
      printf("  before's what-if, %s fixed: %s; after: %s (%+.1f%%)\n", report_verdict_label(vc),
             slack_fmt_ns(b1, sizeof b1, pred), slack_fmt_ns(b2, sizeof b2, after),
             pred ? 100.0 * ((double)after - (double)pred) / (double)pred : 0.0);
    }
    uint64_t all = p->b->whatif_all.best_ns;
    printf("  before's what-if, every stall fixed: %s; after: %s (%+.1f%%)\n",
           slack_fmt_ns(b1, sizeof b1, all), slack_fmt_ns(b2, sizeof b2, after),
           all ? 100.0 * ((double)after - (double)all) / (double)all : 0.0);
    /* an after run that fixed the data path and the syncs but kept its launches (no graph
     * captured) is that what-if's to compare with, where it differs (as the report's verdict) */
    uint64_t host = report_whatif_launches_kept(p->b);
    if (host)
      printf("  before's what-if, every stall but launch overhead fixed: %s; after: %s (%+.1f%%)\n",
             slack_fmt_ns(b1, sizeof b1, host), slack_fmt_ns(b2, sizeof b2, after),
             100.0 * ((double)after - (double)host) / (double)host);
  }
  int noted = 0;
  for (int side = 0; side < 2; side++) {
    const struct cls_gpu *g = side ? p->a : p->b;
    if (tracer_share(g) > 0.05) {
      printf("  note: the tracer's own cost is %.1f%% of the %s step: the traced step overstates "
             "the untraced one; see the step without the tracer's cost (docs/slack-diff.md)\n",
             100 * tracer_share(g), side ? "after" : "before");
      noted = 1;
    }
  }
  double lo, hi;
  ratio_untraced(p, &lo, &hi);
  if (noted && lo > 0)
    printf("  without the tracer: %.2fx to %.2fx %s (each step from its launch overhead's floor to "
           "the replay without the tracer's cost)\n",
           lo >= 1 ? lo : 1 / hi, lo >= 1 ? hi : 1 / lo, lo >= 1 ? "faster" : "slower");
  double pt = ratio_tail(p);
  if (noted && pt > 0)
    printf("  without the tracer, the host at its untraced tail's pace: %.2fx %s\n",
           pt >= 1 ? pt : 1 / pt, pt >= 1 ? "faster" : "slower");
}

static void print_text(const struct diff *d) {
  printf("slack diff: before %s\n            after  %s\n", d->path_b, d->path_a);
  if (d->samples_b)
    printf("samples per step: %llu before, %llu after\n", (unsigned long long)d->samples_b,
           (unsigned long long)d->samples_a);
  for (size_t k = 0; k < d->npairs; k++)
    text_pair(&d->pairs[k]);
  if (!d->npairs)
    printf("\nno GPU to compare: %s\n", d->before.cr.ngpus ? "AFTER has none" : "BEFORE has none");
  if (d->only_b || d->only_a)
    printf("\nGPUs without a partner: %zu only before, %zu only after\n", d->only_b, d->only_a);
}

/* ---- JSON ---- */

static void json_value(struct json *j, const char *key, const struct row *r, double v) {
  if (!r->have)
    json_null(j, key);
  else if (r->unit == U_NS)
    json_u64(j, key, (uint64_t)llround(v > 0 ? v : 0));
  else
    json_double(j, key, v);
}

static void json_row(struct json *j, const struct row *r) {
  json_obj(j, r->key);
  json_value(j, "before", r, r->before);
  json_value(j, "after", r, r->after);
  if (!r->have)
    json_null(j, "change");
  else if (r->unit == U_NS)
    json_i64(j, "change", (int64_t)llround(r->after) - (int64_t)llround(r->before));
  else
    json_double(j, "change", r->after - r->before);
  if (r->have && r->before != 0)
    json_double(j, "relative", (r->after - r->before) / r->before);
  else
    json_null(j, "relative");
  json_obj_end(j);
}

static void json_side(struct json *j, const char *key, const struct cls_gpu *g) {
  uint64_t per;
  int vc = report_verdict(g, &per);
  json_obj(j, key);
  json_u64(j, "device", g->device);
  json_str(j, "host", g->host);
  json_u64(j, "steps", g->steps.count);
  json_str(j, "source", g->steps.source);
  json_str(j, "verdict", vc < 0 ? "none" : cls_name(vc));
  if (vc >= 0) {
    json_u64(j, "verdict_per_step_ns", per);
    json_u64(j, "verdict_step_ns_if_fixed", report_verdict_whatif(g, vc)->best_ns);
  }
  json_u64(j, "all_stalls_step_ns_if_fixed", g->steps.count ? g->whatif_all.best_ns : 0);
  json_u64(j, "all_but_launch_overhead_step_ns_if_fixed",
           g->steps.count ? g->whatif_host.best_ns : 0);
  json_double(j, "tracer_share", tracer_share(g));
  json_obj_end(j);
}

static void print_json(const struct diff *d) {
  struct json j;
  json_begin(&j, stdout);
  json_obj(&j, NULL);
  json_str(&j, "before", d->path_b);
  json_str(&j, "after", d->path_a);
  json_obj(&j, "samples_per_step");
  if (d->samples_b) {
    json_u64(&j, "before", d->samples_b);
    json_u64(&j, "after", d->samples_a);
  } else {
    json_null(&j, "before");
    json_null(&j, "after");
  }
  json_obj_end(&j);
  json_arr(&j, "gpus");
  for (size_t k = 0; k < d->npairs; k++) {
    const struct pair *p = &d->pairs[k];
    json_obj(&j, NULL);
    json_u64(&j, "device", p->b->device);
    json_str(&j, "name", p->b->name);
    json_double(&j, "speedup", ratio(p));
    double lo, hi;
    ratio_untraced(p, &lo, &hi);
    json_double(&j, "speedup_untraced_low", lo);
    json_double(&j, "speedup_untraced_high", hi);
    json_double(&j, "speedup_untraced", ratio_tail(p));
    json_str(&j, "basis", p->steps ? "steps" : "window");
    json_side(&j, "before_gpu", p->b);
    json_side(&j, "after_gpu", p->a);
    json_obj(&j, "rows");
    for (size_t i = 0; i < p->nrows; i++)
      json_row(&j, &p->rows[i]);
    json_obj_end(&j);
    json_obj_end(&j);
  }
  json_arr_end(&j);
  json_u64(&j, "gpus_only_before", d->only_b);
  json_u64(&j, "gpus_only_after", d->only_a);
  json_obj_end(&j);
  json_end(&j);
}

/* ---- HTML ---- */

/* Two bars, before and after, of one value (a time or a rate), scaled to the larger. */
static void html_pair_bars(FILE *f, const char *id, const char *what, const struct row *r) {
  char b[4][32], v1[32], v2[32], desc[200];
  double max = r->before > r->after ? r->before : r->after;
  snprintf(desc, sizeof desc, "%s: before %s, after %s.", what,
           fmt_value(v1, sizeof v1, r->unit, r->before),
           fmt_value(v2, sizeof v2, r->unit, r->after));
  html_svg_begin(f, id, 1000, 56, what, desc);
  for (int i = 0; i < 2; i++) {
    double v = i ? r->after : r->before, w = max > 0 ? 600 * v / max : 0, y = 4 + 26.0 * i;
    fprintf(f,
            "<text x=\"0\" y=\"%s\">%s</text><rect x=\"150\" y=\"%s\" width=\"%s\" "
            "height=\"20\" fill=\"%s\"/><text x=\"%s\" y=\"%s\">%s</text>\n",
            html_num(b[0], 32, y + 14), i ? "after" : "before", html_num(b[1], 32, y),
            html_num(b[2], 32, w < .5 ? .5 : w), i ? "#0072B2" : "#6b6b6b",
            html_num(b[3], 32, 156 + w), b[0], i ? v2 : v1);
  }
  html_svg_end(f);
}

static void html_summary(FILE *f, const struct diff *d) {
  char id[48];
  fputs("<section id=\"summary\">\n<h2>Before and after</h2>\n", f);
  for (size_t k = 0; k < d->npairs; k++) {
    const struct pair *p = &d->pairs[k];
    double r = ratio(p);
    fprintf(f, "<p class=\"verdict%s\"><b>GPU %u", r >= 1 ? " ok" : "", p->b->device);
    if (p->b->name) {
      fputs(" ", f);
      html_text(f, p->b->name);
    }
    if (r > 0)
      fprintf(f, ":</b> the step is <b>%.2fx %s</b> after.</p>\n", r >= 1 ? r : 1 / r,
              r >= 1 ? "faster" : "slower");
    else
      fputs(":</b> no steps on one side: nothing to compare per step.</p>\n", f);
    for (size_t i = 0; i < p->nrows; i++) {
      const struct row *rw = &p->rows[i];
      int show = rw->have && (!strcmp(rw->key, "step_ns") || !strcmp(rw->key, "samples_per_s"));
      if (!show) continue;
      snprintf(id, sizeof id, "diff-%s-%zu", rw->key, k);
      const char *what = rw->unit == U_NS ? "Step time" : "Throughput (samples/s)";
      fputs("<figure>\n", f);
      html_pair_bars(f, id, what, rw);
      fprintf(f, "<figcaption>%s, before and after.</figcaption>\n</figure>\n", what);
    }
  }
  fputs("</section>\n", f);
}

static void html_breakdown(FILE *f, const struct diff *d) {
  char b1[32], b2[32], id[48], desc[512];
  fputs("<section id=\"breakdown\">\n<h2>Where each step goes</h2>\n", f);
  html_legend(f, (1u << CLS_COUNT) - 1);
  for (size_t k = 0; k < d->npairs; k++) {
    const struct pair *p = &d->pairs[k];
    const char *what = p->steps ? "step" : "window";
    uint64_t full[2] = {p->steps ? p->b->steps.step_ns : p->b->window_ns,
                        p->steps ? p->a->steps.step_ns : p->a->window_ns};
    uint64_t max = full[0] > full[1] ? full[0] : full[1];
    if (!max) continue;
    snprintf(id, sizeof id, "diff-breakdown-%zu", k);
    snprintf(desc, sizeof desc,
             "GPU %u: the %s before (%s) and after (%s), each cut into the time of each class; "
             "the table below gives the numbers.",
             p->b->device, what, slack_fmt_ns(b1, sizeof b1, full[0]),
             slack_fmt_ns(b2, sizeof b2, full[1]));
    fputs("<figure>\n", f);
    html_svg_begin(f, id, 1000, 82,
                   p->steps ? "Per-step time by class, before and after"
                            : "The window's time by class, before and after",
                   desc);
    for (int i = 0; i < 2; i++) {
      const struct cls_gpu *g = i ? p->a : p->b;
      double w = 760.0 * (double)full[i] / (double)max, y = 4 + 26.0 * i;
      fprintf(f, "<text x=\"0\" y=\"%s\">%s</text>\n", html_num(b1, 32, y + 14),
              i ? "after" : "before");
      html_stack_row(f, p->steps ? g->steps.per_step_ns : g->time_ns, full[i], 150, y, w, 20);
      fprintf(f, "<text x=\"%s\" y=\"%s\">%s</text>\n", html_num(b1, 32, 156 + w),
              html_num(b2, 32, y + 14), slack_fmt_ns(desc, 32, full[i]));
    }
    html_time_axis(f, 150, 910, 58, max);
    html_svg_end(f);
    fprintf(f, "<figcaption>GPU %u: hover a piece for its time.</figcaption>\n</figure>\n",
            p->b->device);
  }
  fputs("</section>\n", f);
}

static void html_changes(FILE *f, const struct diff *d) {
  char b1[48], b2[48], b3[64];
  fputs("<section id=\"changes\">\n<h2>Every figure, before and after</h2>\n", f);
  for (size_t k = 0; k < d->npairs; k++) {
    const struct pair *p = &d->pairs[k];
    fprintf(f,
            "<h3>GPU %u</h3>\n<table>\n<tr><th></th><th class=\"n\">before</th><th class=\"n\">"
            "after</th><th class=\"n\">change</th></tr>\n",
            p->b->device);
    for (size_t i = 0; i < p->nrows; i++) {
      const struct row *r = &p->rows[i];
      int j = judge(r);
      fputs("<tr><td>", f);
      if (r->cls >= 0)
        fprintf(f, "&#8195;<i class=\"sw\" style=\"background:%s\"></i>", html_class_color(r->cls));
      html_text(f, r->label);
      fprintf(f,
              "</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n%s\">%s</td>"
              "</tr>\n",
              r->have ? fmt_value(b1, sizeof b1, r->unit, r->before) : "-",
              r->have ? fmt_value(b2, sizeof b2, r->unit, r->after) : "-",
              j < 0   ? " better"
              : j > 0 ? " worse"
                      : "",
              fmt_change(b3, sizeof b3, r));
    }
    fputs("</table>\n", f);
  }
  fputs("</section>\n", f);
}

static void html_verdicts(FILE *f, const struct diff *d) {
  char vb[128], va[128], b1[32], b2[32];
  fputs("<section id=\"verdict\">\n<h2>Verdicts and predictions</h2>\n", f);
  for (size_t k = 0; k < d->npairs; k++) {
    const struct pair *p = &d->pairs[k];
    verdict_text(vb, sizeof vb, p->b);
    verdict_text(va, sizeof va, p->a);
    fprintf(f, "<p><b>GPU %u</b>: before, ", p->b->device);
    html_text(f, vb);
    fputs("; after, ", f);
    html_text(f, va);
    fputs(".</p>\n", f);
    if (p->b->steps.count && p->a->steps.count) {
      uint64_t all = p->b->whatif_all.best_ns, after = p->a->steps.step_ns;
      fprintf(f,
              "<p>Before's what-if with every stall fixed: %s; measured after: %s (%+.1f%%).</p>\n",
              slack_fmt_ns(b1, sizeof b1, all), slack_fmt_ns(b2, sizeof b2, after),
              all ? 100.0 * ((double)after - (double)all) / (double)all : 0.0);
    }
    int noted = 0;
    for (int side = 0; side < 2; side++) {
      const struct cls_gpu *g = side ? p->a : p->b;
      if (tracer_share(g) > 0.05) {
        fprintf(f,
                "<p class=\"muted\">Note: the tracer's own cost is %.1f%% of the %s step: the "
                "traced step overstates the untraced one.</p>\n",
                100 * tracer_share(g), side ? "after" : "before");
        noted = 1;
      }
    }
    double lo, hi;
    ratio_untraced(p, &lo, &hi);
    if (noted && lo > 0)
      fprintf(f, "<p class=\"muted\">Without the tracer: %.2fx to %.2fx %s.</p>\n",
              lo >= 1 ? lo : 1 / hi, lo >= 1 ? hi : 1 / lo, lo >= 1 ? "faster" : "slower");
    double pt = ratio_tail(p);
    if (noted && pt > 0)
      fprintf(f,
              "<p class=\"muted\">Without the tracer, the host at its untraced tail's pace: "
              "%.2fx %s.</p>\n",
              pt >= 1 ? pt : 1 / pt, pt >= 1 ? "faster" : "slower");
  }
  fputs("</section>\n", f);
}

static int write_html(const struct diff *d, const char *path) {
  FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
  if (!f) {
    fprintf(stderr, "slack diff: cannot write %s: %s\n", path, strerror(errno));
    return EXIT_ERROR;
  }
  html_begin(f, "slack diff");
  fputs("<header>\n<h1>slack diff</h1>\n<p>before: <code>", f);
  html_text(f, d->path_b);
  fputs("</code><br>after: <code>", f);
  html_text(f, d->path_a);
  fputs("</code></p>\n", f);
  if (d->samples_b)
    fprintf(f, "<p class=\"muted\">Samples per step: %llu before, %llu after.</p>\n",
            (unsigned long long)d->samples_b, (unsigned long long)d->samples_a);
  fputs("</header>\n", f);
  html_summary(f, d);
  html_breakdown(f, d);
  html_changes(f, d);
  html_verdicts(f, d);
  fprintf(f, "<footer><p class=\"muted\">slack %s.</p></footer>\n", SLACK_VERSION);
  html_end(f, NULL);
  long size = f == stdout ? -1 : ftell(f);
  if (ferror(f) | (f == stdout ? fflush(f) : fclose(f))) {
    fprintf(stderr, "slack diff: cannot write %s: %s\n", path, strerror(errno));
    return EXIT_ERROR;
  }
  if (size >= 0) fprintf(stderr, "slack diff: wrote %s (%ld bytes)\n", path, size);
  return EXIT_OK;
}

/* ---- the command ---- */

static int parse_samples(const char *s, uint64_t *b, uint64_t *a) {
  char *end;
  errno = 0;
  unsigned long long x = strtoull(s, &end, 10), y = x;
  if (*end == ',') y = strtoull(end + 1, &end, 10);
  if (errno || *end || !x || !y || *s == '-' || strchr(s, '-')) return -1;
  *b = x;
  *a = y;
  return 0;
}

static int parse_ns(const char *s, uint64_t *v) {
  char *end;
  errno = 0;
  unsigned long long x = strtoull(s, &end, 10);
  if (errno || !*s || *end || *s == '-') return -1;
  *v = x;
  return 0;
}

int cmd_diff(int argc, char **argv) {
  static const struct option opts[] = {
      {"json", no_argument, NULL, 'j'},          {"html", required_argument, NULL, 'H'},
      {"samples", required_argument, NULL, 's'}, {"cupti-call-ns", required_argument, NULL, 'c'},
      {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
  struct diff d;
  struct cls_options opt;
  const char *html_path = NULL;
  int as_json = 0, c;
  memset(&d, 0, sizeof d);
  cls_options_default(&opt);
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
    case 'j': as_json = 1; break;
    case 'H': html_path = optarg; break;
    case 's':
      if (parse_samples(optarg, &d.samples_b, &d.samples_a))
        return slack_usage_error("diff", usage, "--samples wants N or N,M (samples per step)");
      break;
    case 'c':
      if (parse_ns(optarg, &opt.cupti_call_ns))
        return slack_usage_error("diff", usage, "--cupti-call-ns wants a count of ns");
      opt.cupti_call_given = 1;
      break;
    case 'h': fputs(usage, stdout); return EXIT_OK;
    case ':': return slack_missing_value("diff", usage, argv[optind - 1]);
    default: return slack_bad_option("diff", usage, argv[optind - 1]);
    }
  }
  if (argc - optind != 2) return slack_usage_error("diff", usage, "expects BEFORE and AFTER");
  if (as_json && html_path)
    return slack_usage_error("diff", usage, "--json and --html: one at a time");
  d.path_b = argv[optind];
  d.path_a = argv[optind + 1];
  int rc = report_load(&d.before, "diff", argv + optind, 1, &opt);
  if (rc == EXIT_OK) {
    rc = report_load(&d.after, "diff", argv + optind + 1, 1, &opt);
    if (rc != EXIT_OK) report_unload(&d.before);
  }
  if (rc != EXIT_OK) return rc;
  if (pair_gpus(&d)) {
    fprintf(stderr, "slack diff: out of memory\n");
    rc = EXIT_ERROR;
  } else if (html_path) {
    rc = write_html(&d, html_path);
  } else if (as_json) {
    print_json(&d);
  } else {
    print_text(&d);
  }
  fflush(stdout);
  report_warn_tails(&d.before, "diff");
  report_warn_tails(&d.after, "diff");
  free(d.pairs);
  report_unload(&d.before);
  report_unload(&d.after);
  return rc;
}

/* slack report: where each GPU's time went, first version (docs/slack-report.md).
 *
 * Per GPU the window (first to last GPU or host event of the trace) is cut into busy time (the
 * union over all streams of kernels, copies and memsets) and idle time; busy time into compute
 * (a kernel runs) and copies only. Idle time is not classified yet: the stall classifier is
 * another piece of work, and this report says so rather than guessing. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "join.h"
#include "json.h"
#include "slack.h"

static const char usage[] = "usage: slack report [--json] [--top N] FILE\n"
                            "  --json    one JSON object instead of text\n"
                            "  --top N   kernels listed per GPU (default 10)\n";

#define CLASSIFICATION_NOTE                                                                        \
  "stall classification (why each GPU is idle) is not in this version: idle time is unclassified"

struct iv {
  uint64_t s, e;
};

struct kernel_sum {
  uint32_t name;
  uint64_t count, total_ns;
};

struct gpu {
  uint32_t device;
  uint32_t name; /* string id from the DEVICE record, 0 if none */
  uint64_t busy_ns, compute_ns, copy_ns, idle_ns;
  uint64_t kernels, memcpys, memsets, kernel_ns;
  struct kernel_sum *top; /* all kernel names, by total time descending */
  size_t ntop;
};

struct fn_sum {
  uint64_t calls, total_ns, blocked_ns;
};

struct thread_sum {
  uint64_t tid;
  uint32_t name;
  uint64_t calls, busy_ns, blocked_ns;
};

struct report {
  uint64_t t0, t1;                     /* window */
  uint32_t fn_order[SLK_FN_COUNT + 1]; /* fn ids by total time, descending */
  struct gpu *gpus;
  size_t ngpus;
  struct fn_sum fn[SLK_FN_COUNT + 1]; /* last: ids this slack does not know */
  struct thread_sum *threads;
  size_t nthreads;
  uint64_t host_calls, host_blocked_ns;
  uint64_t dropped;
  struct launch_join lj;
  int join_ok;
};

static int gpu_kind(uint8_t k) { return k == SLK_KERNEL || k == SLK_MEMCPY || k == SLK_MEMSET; }

static uint64_t dur(const struct slk_record *r) {
  return r->end > r->start ? r->end - r->start : 0;
}

static int cmp_iv(const void *pa, const void *pb) {
  const struct iv *a = pa, *b = pb;
  if (a->s != b->s) return a->s < b->s ? -1 : 1;
  return a->e < b->e ? -1 : a->e > b->e;
}

/* Length of the union of v[0..n) (sorted here). */
static uint64_t union_ns(struct iv *v, size_t n) {
  uint64_t total = 0, cs = 0, ce = 0;
  int open = 0;
  qsort(v, n, sizeof *v, cmp_iv);
  for (size_t i = 0; i < n; i++) {
    if (open && v[i].s <= ce) {
      if (v[i].e > ce) ce = v[i].e;
      continue;
    }
    if (open) total += ce - cs;
    cs = v[i].s;
    ce = v[i].e;
    open = 1;
  }
  if (open) total += ce - cs;
  return total;
}

static struct gpu *gpu_get(struct report *rp, uint32_t device) {
  for (size_t i = 0; i < rp->ngpus; i++)
    if (rp->gpus[i].device == device) return &rp->gpus[i];
  struct gpu *g = realloc(rp->gpus, (rp->ngpus + 1) * sizeof *g);
  if (!g) return NULL;
  rp->gpus = g;
  g = &rp->gpus[rp->ngpus++];
  memset(g, 0, sizeof *g);
  g->device = device;
  return g;
}

static int cmp_gpu(const void *pa, const void *pb) {
  const struct gpu *a = pa, *b = pb;
  return a->device < b->device ? -1 : a->device > b->device;
}

static int cmp_name(const void *pa, const void *pb) {
  const struct kernel_sum *a = pa, *b = pb;
  return a->name < b->name ? -1 : a->name > b->name;
}

static int cmp_total(const void *pa, const void *pb) {
  const struct kernel_sum *a = pa, *b = pb;
  if (a->total_ns != b->total_ns) return a->total_ns > b->total_ns ? -1 : 1;
  return a->name < b->name ? -1 : a->name > b->name;
}

/* Busy, compute and copy time and the kernel table of one GPU. */
static int gpu_compute(struct report *rp, const struct trace_data *td, struct gpu *g) {
  const struct trace_array *ka = &td->kind[SLK_KERNEL];
  size_t n = 0, nk = 0;
  for (int k = SLK_KERNEL; k <= SLK_MEMSET; k++)
    for (size_t i = 0; i < td->kind[k].n; i++)
      n += td->kind[k].v[i].device == g->device;
  struct iv *v = malloc((n ? n : 1) * sizeof *v);
  struct kernel_sum *ks = malloc((n ? n : 1) * sizeof *ks);
  if (!v || !ks) {
    free(v);
    free(ks);
    return -1;
  }
  /* kernels first: v[0..nk) are the kernels, v[0..n) everything */
  for (size_t i = 0; i < ka->n; i++) {
    const struct slk_record *r = &ka->v[i];
    if (r->device != g->device) continue;
    v[nk] = (struct iv){r->start, r->end > r->start ? r->end : r->start};
    ks[nk] = (struct kernel_sum){r->name, 1, dur(r)};
    g->kernel_ns += dur(r);
    nk++;
  }
  size_t m = nk;
  for (int k = SLK_MEMCPY; k <= SLK_MEMSET; k++)
    for (size_t i = 0; i < td->kind[k].n; i++) {
      const struct slk_record *r = &td->kind[k].v[i];
      if (r->device != g->device) continue;
      v[m++] = (struct iv){r->start, r->end > r->start ? r->end : r->start};
      if (k == SLK_MEMCPY)
        g->memcpys++;
      else
        g->memsets++;
    }
  g->kernels = nk;
  g->compute_ns = union_ns(v, nk);
  g->busy_ns = union_ns(v, m);
  g->copy_ns = g->busy_ns - g->compute_ns;
  uint64_t window = rp->t1 - rp->t0;
  g->idle_ns = window > g->busy_ns ? window - g->busy_ns : 0;
  free(v);

  /* one entry per kernel name, by total time */
  qsort(ks, nk, sizeof *ks, cmp_name);
  size_t u = 0;
  for (size_t i = 0; i < nk; i++) {
    if (u && ks[u - 1].name == ks[i].name) {
      ks[u - 1].count++;
      ks[u - 1].total_ns += ks[i].total_ns;
    } else {
      ks[u++] = ks[i];
    }
  }
  qsort(ks, u, sizeof *ks, cmp_total);
  g->top = ks;
  g->ntop = u;
  return 0;
}

static int cmp_thread(const void *pa, const void *pb) {
  const struct thread_sum *a = pa, *b = pb;
  return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static const struct report *fn_sort_rp; /* qsort has no context argument */
static int cmp_fn_total(const void *pa, const void *pb) {
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  const struct fn_sum *fa = &fn_sort_rp->fn[a], *fb = &fn_sort_rp->fn[b];
  if (fa->total_ns != fb->total_ns) return fa->total_ns > fb->total_ns ? -1 : 1;
  return a < b ? -1 : a > b;
}

static int host_compute(struct report *rp, const struct trace_data *td) {
  const struct trace_array *h = &td->kind[SLK_HOST];
  rp->threads = malloc((h->n ? h->n : 1) * sizeof *rp->threads);
  if (!rp->threads) return -1;
  for (size_t i = 0; i < h->n; i++) {
    const struct slk_record *r = &h->v[i];
    struct fn_sum *f = &rp->fn[r->fn < SLK_FN_COUNT ? r->fn : SLK_FN_COUNT];
    int blocking = (r->flags & SLK_HOST_SYNCHRONOUS) || slk_fn_is_sync(r->fn);
    f->calls++;
    f->total_ns += dur(r);
    if (blocking) f->blocked_ns += dur(r);
    rp->host_calls++;
    if (blocking) rp->host_blocked_ns += dur(r);
    rp->threads[i] = (struct thread_sum){r->tid, 0, 1, dur(r), blocking ? dur(r) : 0};
  }
  qsort(rp->threads, h->n, sizeof *rp->threads, cmp_thread);
  size_t u = 0;
  for (size_t i = 0; i < h->n; i++) {
    struct thread_sum *t = &rp->threads[i];
    if (u && rp->threads[u - 1].tid == t->tid) {
      rp->threads[u - 1].calls++;
      rp->threads[u - 1].busy_ns += t->busy_ns;
      rp->threads[u - 1].blocked_ns += t->blocked_ns;
    } else {
      rp->threads[u++] = *t;
    }
  }
  rp->nthreads = u;
  for (uint32_t f = 0; f <= SLK_FN_COUNT; f++)
    rp->fn_order[f] = f;
  fn_sort_rp = rp;
  qsort(rp->fn_order, SLK_FN_COUNT + 1, sizeof rp->fn_order[0], cmp_fn_total);
  fn_sort_rp = NULL;
  const struct trace_array *ta = &td->kind[SLK_THREAD];
  for (size_t i = 0; i < ta->n; i++)
    for (size_t t = 0; t < u; t++)
      if (rp->threads[t].tid == ta->v[i].tid) rp->threads[t].name = ta->v[i].name;
  return 0;
}

static int report_compute(struct report *rp, const struct trace_data *td) {
  for (int k = SLK_KERNEL; k <= SLK_HOST; k++) {
    if (!gpu_kind((uint8_t)k) && k != SLK_HOST) continue;
    for (size_t i = 0; i < td->kind[k].n; i++) {
      const struct slk_record *r = &td->kind[k].v[i];
      uint64_t e = r->end > r->start ? r->end : r->start;
      if (!rp->t0 || r->start < rp->t0) rp->t0 = r->start;
      if (e > rp->t1) rp->t1 = e;
      if (gpu_kind(r->kind) && !gpu_get(rp, r->device)) return -1;
    }
  }
  const struct trace_array *dv = &td->kind[SLK_DEVICE];
  for (size_t i = 0; i < dv->n; i++) {
    struct gpu *g = gpu_get(rp, dv->v[i].device);
    if (!g) return -1;
    g->name = dv->v[i].name;
  }
  if (rp->ngpus > 1) qsort(rp->gpus, rp->ngpus, sizeof *rp->gpus, cmp_gpu);
  for (size_t i = 0; i < rp->ngpus; i++)
    if (gpu_compute(rp, td, &rp->gpus[i])) return -1;
  const struct trace_array *dr = &td->kind[SLK_DROPS];
  for (size_t i = 0; i < dr->n; i++)
    rp->dropped += dr->v[i].count;
  if (host_compute(rp, td)) return -1;
  rp->join_ok = launch_join_compute(td, &rp->lj) == 0;
  return rp->join_ok ? 0 : -1;
}

static void report_free(struct report *rp) {
  for (size_t i = 0; i < rp->ngpus; i++)
    free(rp->gpus[i].top);
  free(rp->gpus);
  free(rp->threads);
  launch_join_free(&rp->lj);
}

static const char *fn_label(size_t f) {
  return f < SLK_FN_COUNT ? slk_fn_name((uint32_t)f) : "other";
}

static void print_json(const char *path, const struct trace_reader *rd, const struct report *rp,
                       size_t top) {
  const struct trace_reader_stats *st = trace_reader_stats(rd);
  uint64_t window = rp->t1 - rp->t0;
  struct json j;
  json_begin(&j, stdout);
  json_obj(&j, NULL);
  json_str(&j, "file", path);
  json_u64(&j, "start_ns", rp->t0);
  json_u64(&j, "end_ns", rp->t1);
  json_u64(&j, "window_ns", window);
  json_arr(&j, "gpus");
  for (size_t i = 0; i < rp->ngpus; i++) {
    const struct gpu *g = &rp->gpus[i];
    json_obj(&j, NULL);
    json_u64(&j, "device", g->device);
    json_str(&j, "name", g->name ? trace_reader_string(rd, g->name) : NULL);
    json_u64(&j, "window_ns", window);
    json_u64(&j, "busy_ns", g->busy_ns);
    json_u64(&j, "compute_ns", g->compute_ns);
    json_u64(&j, "copy_ns", g->copy_ns);
    json_u64(&j, "idle_ns", g->idle_ns);
    json_u64(&j, "kernels", g->kernels);
    json_u64(&j, "memcpys", g->memcpys);
    json_u64(&j, "memsets", g->memsets);
    json_u64(&j, "kernel_ns", g->kernel_ns);
    json_arr(&j, "top_kernels");
    for (size_t t = 0; t < g->ntop && t < top; t++) {
      const struct kernel_sum *k = &g->top[t];
      json_obj(&j, NULL);
      json_str(&j, "name", trace_reader_string(rd, k->name));
      json_u64(&j, "count", k->count);
      json_u64(&j, "total_ns", k->total_ns);
      json_u64(&j, "avg_ns", k->total_ns / k->count);
      json_double(&j, "share", g->kernel_ns ? (double)k->total_ns / (double)g->kernel_ns : 0.0);
      json_obj_end(&j);
    }
    json_arr_end(&j);
    json_obj_end(&j);
  }
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
    json_obj(&j, NULL);
    json_u64(&j, "tid", rp->threads[t].tid);
    json_str(&j, "name", rp->threads[t].name ? trace_reader_string(rd, rp->threads[t].name) : NULL);
    json_u64(&j, "calls", rp->threads[t].calls);
    json_u64(&j, "in_calls_ns", rp->threads[t].busy_ns);
    json_u64(&j, "sync_blocked_ns", rp->threads[t].blocked_ns);
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
  json_obj_end(&j);

  json_u64(&j, "dropped", rp->dropped);
  json_u64(&j, "truncated_bytes", st->tail_bytes);
  json_null(&j, "classification");
  json_str(&j, "note", CLASSIFICATION_NOTE);
  json_obj_end(&j);
  json_end(&j);
}

/* Kernel names can be long C++ signatures: the text table shows the first width bytes. */
static void print_name(const char *s, int width) {
  int len = (int)strlen(s);
  if (len <= width)
    printf("%s", s);
  else
    printf("%.*s...", width - 3, s);
}

static void print_text(const char *path, const struct trace_reader *rd, const struct report *rp,
                       size_t top) {
  uint64_t window = rp->t1 - rp->t0;
  char b1[32], b2[32], b3[32];
  printf("slack report: %s\n", path);
  if (!window && !rp->ngpus && !rp->host_calls) {
    printf("no GPU work and no host calls in this trace\n");
    return;
  }
  printf("window: %s (first to last GPU or host event)\n", slack_fmt_ns(b1, sizeof b1, window));
  for (size_t i = 0; i < rp->ngpus; i++) {
    const struct gpu *g = &rp->gpus[i];
    printf("\nGPU %u%s%s\n", g->device, g->name ? "  " : "",
           g->name ? trace_reader_string(rd, g->name) : "");
    printf("  busy         %12s  %5.1f%%\n", slack_fmt_ns(b1, sizeof b1, g->busy_ns),
           slack_pct(g->busy_ns, window));
    printf("    compute    %12s  %5.1f%%  (a kernel runs)\n",
           slack_fmt_ns(b1, sizeof b1, g->compute_ns), slack_pct(g->compute_ns, window));
    printf("    copy only  %12s  %5.1f%%  (only copies or memsets run)\n",
           slack_fmt_ns(b1, sizeof b1, g->copy_ns), slack_pct(g->copy_ns, window));
    printf("  idle         %12s  %5.1f%%  (unclassified)\n",
           slack_fmt_ns(b1, sizeof b1, g->idle_ns), slack_pct(g->idle_ns, window));
    printf("  kernels %llu, memcpys %llu, memsets %llu\n", (unsigned long long)g->kernels,
           (unsigned long long)g->memcpys, (unsigned long long)g->memsets);
    if (!g->ntop) continue;
    printf("  top kernels by total time (share of kernel time):\n");
    printf("    %12s %9s %12s %6s  %s\n", "total", "count", "avg", "share", "name");
    for (size_t t = 0; t < g->ntop && t < top; t++) {
      const struct kernel_sum *k = &g->top[t];
      printf("    %12s %9llu %12s %5.1f%%  ", slack_fmt_ns(b1, sizeof b1, k->total_ns),
             (unsigned long long)k->count, slack_fmt_ns(b2, sizeof b2, k->total_ns / k->count),
             slack_pct(k->total_ns, g->kernel_ns));
      print_name(trace_reader_string(rd, k->name), 80);
      printf("\n");
    }
  }
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
  if (rp->dropped)
    printf("warning: %llu events were dropped while recording: the times above undercount\n",
           (unsigned long long)rp->dropped);
  printf("\n%s.\n", CLASSIFICATION_NOTE);
}

int cmd_report(int argc, char **argv) {
  static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                       {"top", required_argument, NULL, 't'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  int as_json = 0, c;
  size_t top = 10;
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
    case 'j': as_json = 1; break;
    case 't': {
      char *end;
      long v = strtol(optarg, &end, 10);
      if (*end || v < 0) return slack_usage_error("report", usage, "--top wants a count");
      top = (size_t)v;
      break;
    }
    case 'h': fputs(usage, stdout); return EXIT_OK;
    default: return slack_bad_option("report", usage, argv[optind - 1]);
    }
  }
  if (optind != argc - 1) return slack_usage_error("report", usage, "expects one FILE");
  const char *path = argv[optind];
  struct trace_reader *rd = slack_open_trace("report", path);
  if (!rd) return EXIT_ERROR;
  const uint32_t mask = TRACE_KIND_BIT(SLK_KERNEL) | TRACE_KIND_BIT(SLK_MEMCPY) |
                        TRACE_KIND_BIT(SLK_MEMSET) | TRACE_KIND_BIT(SLK_API) |
                        TRACE_KIND_BIT(SLK_HOST) | TRACE_KIND_BIT(SLK_DEVICE) |
                        TRACE_KIND_BIT(SLK_DROPS) | TRACE_KIND_BIT(SLK_THREAD);
  struct trace_data td;
  struct report rp;
  memset(&td, 0, sizeof td);
  memset(&rp, 0, sizeof rp);
  int rc = EXIT_OK;
  if (trace_data_load(rd, mask, &td) || report_compute(&rp, &td)) {
    fprintf(stderr, "slack report: %s: out of memory\n", path);
    rc = EXIT_ERROR;
  } else if (as_json) {
    print_json(path, rd, &rp, top);
  } else {
    print_text(path, rd, &rp, top);
  }
  fflush(stdout);
  slack_warn_tail(stderr, "report", path, rd);
  report_free(&rp);
  trace_data_free(&td);
  trace_reader_close(rd);
  return rc;
}

/* slack info: what a trace file holds, in one screen (docs/slack-info.md). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "launches.h"
#include "slack.h"

static const char usage[] = "usage: slack info [--json] FILE\n"
                            "  --json   one JSON object instead of text\n";

/* JSON key and text label of each record kind's count. */
static const char *const kind_key[SLK_KIND_MAX] = {
    [SLK_STRING] = "strings",
    [SLK_KERNEL] = "kernels",
    [SLK_MEMCPY] = "memcpys",
    [SLK_MEMSET] = "memsets",
    [SLK_SYNC] = "syncs",
    [SLK_API] = "cupti_api_records",
    [SLK_HOST] = "api_calls",
    [SLK_MARKER] = "markers",
    [SLK_GRAPH] = "graphs",
    [SLK_DROPS] = "drop_records",
    [SLK_DEVICE] = "devices",
    [SLK_OVERHEAD] = "overhead_records",
    [SLK_THREAD] = "threads",
    [SLK_PROBE] = "probes",
    [SLK_SAMPLE] = "python_samples",
    [SLK_WINDOW] = "window_records",
    [SLK_TAKEN] = "taken_records",
    [SLK_STREAM] = "stream_map_records",
};
static const char *const kind_note[SLK_KIND_MAX] = {
    [SLK_HOST] = "calls seen by slack's hooks",
    [SLK_API] = "CUPTI runtime/driver API records",
    [SLK_GRAPH] = "CUDA graph launches on the GPU",
    [SLK_PROBE] = "the exit probe of CUPTI's cost per launch",
    [SLK_SAMPLE] = "the writer's samples of Python threads' stacks",
    [SLK_WINDOW] = "production windows: one when each opens, one when it closes",
    [SLK_TAKEN] = "the GPU records end here: another CUPTI client took them (how 1) or a CUPTI "
                  "call of slack's did not return (how 2)",
    [SLK_STREAM] = "stream handles named by CUPTI's stream ids, for the order join",
};

#define DROP_WHERE 4 /* ring, cupti, writer, other */
static const char *const drop_key[DROP_WHERE] = {"ring", "cupti", "writer", "other"};

struct info {
  uint64_t count[SLK_KIND_MAX];
  uint64_t dropped, dropped_by[DROP_WHERE];
  uint64_t t_first, t_last;
  struct trace_data td; /* DEVICE records only */
  /* the launch join, in bounded memory: info streams traces of any length (launches.h) */
  struct launches *ln;
  struct launch_join lj;
  int join_ok;
  struct slk_record probe; /* the exit probe's PROBE record (kind 0: none) */
};

static void info_collect(const char *path, struct trace_reader *rd, struct info *in) {
  struct slk_record r;
  int oom = !(in->ln = launches_new());
  while (trace_reader_next(rd, &r)) {
    in->count[r.kind]++;
    if (r.kind == SLK_DROPS) {
      in->dropped += r.count;
      in->dropped_by[r.flags < DROP_WHERE - 1 ? r.flags : DROP_WHERE - 1] += r.count;
    }
    if (r.kind == SLK_PROBE) in->probe = r; /* not the program's time: out of the span */
    if (r.start && r.kind != SLK_PROBE) {
      uint64_t end = r.end > r.start ? r.end : r.start;
      if (!in->t_first || r.start < in->t_first) in->t_first = r.start;
      if (end > in->t_last) in->t_last = end;
    }
    if (r.kind == SLK_DEVICE) oom |= trace_data_add(&in->td, &r) != 0;
    if (oom) continue;
    oom = launches_record(in->ln, rd, &r) != 0;
  }
  trace_data_sort(&in->td);
  if (!oom) oom = launches_finish(in->ln, rd, &in->lj);
  in->join_ok = !oom;
  if (oom == -2)
    fprintf(stderr, "slack info: %s: a chunk could not be read again: launch join skipped\n", path);
  else if (oom)
    fprintf(stderr, "slack info: out of memory: launch join skipped\n");
}

static uint64_t gpu_events(const struct info *in) {
  return in->count[SLK_KERNEL] + in->count[SLK_MEMCPY] + in->count[SLK_MEMSET];
}

static void header_json(struct json *j, const struct trace_reader *rd) {
  size_t n = trace_reader_header_count(rd);
  json_obj(j, "header");
  for (size_t i = 0; i < n; i++) {
    const char *k, *v, *k2, *v2;
    size_t same = 0, seen = 0;
    trace_reader_header_at(rd, i, &k, &v);
    for (size_t p = 0; p < n; p++) {
      trace_reader_header_at(rd, p, &k2, &v2);
      if (strcmp(k, k2)) continue;
      if (p < i) seen = 1;
      same++;
    }
    if (seen) continue;
    if (same == 1) {
      json_str(j, k, v);
      continue;
    }
    json_arr(j, k); /* a key given more than once: all its values, in file order */
    for (size_t p = i; p < n; p++) {
      trace_reader_header_at(rd, p, &k2, &v2);
      if (!strcmp(k, k2)) json_str(j, NULL, v2);
    }
    json_arr_end(j);
  }
  json_obj_end(j);
}

static void print_json(const char *path, const struct trace_reader *rd, const struct info *in) {
  const struct trace_reader_stats *st = trace_reader_stats(rd);
  unsigned major, minor;
  struct json j;
  trace_reader_version(rd, &major, &minor);
  json_begin(&j, stdout);
  json_obj(&j, NULL);
  json_str(&j, "file", path);
  json_obj(&j, "format");
  json_u64(&j, "major", major);
  json_u64(&j, "minor", minor);
  json_obj_end(&j);
  header_json(&j, rd);
  json_u64(&j, "records", st->records);
  for (int k = 1; k < SLK_KIND_MAX; k++)
    /* a trace without windows or stream map records reads as it did */
    if ((k != SLK_WINDOW && k != SLK_STREAM) || in->count[k])
      json_u64(&j, kind_key[k], in->count[k]);
  json_u64(&j, "unknown_records", st->unknown_records);
  json_u64(&j, "dropped", in->dropped);
  json_obj(&j, "dropped_by");
  for (int w = 0; w < DROP_WHERE; w++)
    json_u64(&j, drop_key[w], in->dropped_by[w]);
  json_obj_end(&j);
  json_u64(&j, "chunks", st->chunks);
  json_u64(&j, "file_bytes", st->file_bytes);
  json_u64(&j, "header_bytes", st->header_bytes);
  json_u64(&j, "raw_bytes", st->raw_bytes);
  if (gpu_events(in))
    json_double(&j, "bytes_per_gpu_event", (double)st->file_bytes / (double)gpu_events(in));
  else
    json_null(&j, "bytes_per_gpu_event");
  json_u64(&j, "start_ns", in->t_first);
  json_u64(&j, "end_ns", in->t_last);
  json_u64(&j, "span_ns", in->t_last - in->t_first);
  json_u64(&j, "truncated_bytes", st->tail_bytes);
  if (st->tail == TRACE_TAIL_NONE)
    json_null(&j, "truncated_reason");
  else
    json_str(&j, "truncated_reason", trace_tail_reason(st->tail));
  json_u64(&j, "count_mismatch_chunks", st->count_mismatch);
  if (in->join_ok) {
    json_u64(&j, "kernels_with_launch", in->lj.joined);
    json_u64(&j, "kernels_in_graphs", in->lj.graph_kernels);
    json_u64(&j, "kernels_in_graphs_with_launch", in->lj.graph_joined);
  } else {
    json_null(&j, "kernels_with_launch");
    json_null(&j, "kernels_in_graphs");
    json_null(&j, "kernels_in_graphs_with_launch");
  }
  if (in->probe.kind) {
    json_obj(&j, "probe");
    json_u64(&j, "launches", in->probe.count);
    json_u64(&j, "launch_call_on_ns", in->probe.bytes);
    json_u64(&j, "launch_call_off_ns", in->probe.result);
    json_str(&j, "off", in->probe.flags & SLK_PROBE_DETACHED ? "detached" : "records_disabled");
    if (in->probe.shmem) json_u64(&j, "launch_call_hooked_ns", in->probe.shmem); /* 2.6 */
    if (in->probe.regs) json_u64(&j, "launch_call_api_off_ns", in->probe.regs);
    json_obj_end(&j);
  } else {
    json_null(&j, "probe");
  }
  json_arr(&j, "device_list");
  const struct trace_array *dv = &in->td.kind[SLK_DEVICE];
  for (size_t i = 0; i < dv->n; i++) {
    json_obj(&j, NULL);
    json_u64(&j, "device", dv->v[i].device);
    json_str(&j, "name", dv->v[i].name ? trace_reader_string(rd, dv->v[i].name) : NULL);
    json_u64(&j, "sms", dv->v[i].regs);
    json_u64(&j, "memory_bytes", dv->v[i].bytes);
    json_obj_end(&j);
  }
  json_arr_end(&j);
  json_obj_end(&j);
  json_end(&j);
}

static void print_text(const char *path, const struct trace_reader *rd, const struct info *in) {
  const struct trace_reader_stats *st = trace_reader_stats(rd);
  unsigned major, minor;
  char b1[32];
  trace_reader_version(rd, &major, &minor);
  printf("file        %s\n", path);
  printf("format      %u.%u%s\n", major, minor,
         minor > SLK_VERSION_MINOR ? " (newer than this slack: unknown fields skipped)" : "");
  size_t n = trace_reader_header_count(rd);
  if (n) printf("header\n");
  for (size_t i = 0; i < n; i++) {
    const char *k, *v;
    trace_reader_header_at(rd, i, &k, &v);
    if (*v)
      printf("  %-18s %s\n", k, v);
    else
      printf("  %s\n", k); /* no trailing blanks for an empty value */
  }
  printf("records     %llu in %llu chunk%s\n", (unsigned long long)st->records,
         (unsigned long long)st->chunks, st->chunks == 1 ? "" : "s");
  for (int k = 1; k < SLK_KIND_MAX; k++) {
    if (!in->count[k] && k != SLK_KERNEL && k != SLK_MEMCPY && k != SLK_MEMSET && k != SLK_HOST)
      continue;
    printf("  %-18s %llu%s%s%s\n", kind_key[k], (unsigned long long)in->count[k],
           kind_note[k] ? "  (" : "", kind_note[k] ? kind_note[k] : "", kind_note[k] ? ")" : "");
  }
  if (st->unknown_records)
    printf("  %-18s %llu  (kinds this slack does not know, skipped)\n", "unknown",
           (unsigned long long)st->unknown_records);
  printf("dropped     %llu", (unsigned long long)in->dropped);
  if (in->dropped) {
    printf("  (");
    const char *sep = "";
    for (int w = 0; w < DROP_WHERE; w++)
      if (in->dropped_by[w]) {
        printf("%s%s %llu", sep, drop_key[w], (unsigned long long)in->dropped_by[w]);
        sep = ", ";
      }
    printf(")");
  }
  printf("\n");
  printf("size        %llu bytes", (unsigned long long)st->file_bytes);
  if (gpu_events(in))
    printf(", %.2f bytes per GPU event (kernels + memcpys + memsets)",
           (double)st->file_bytes / (double)gpu_events(in));
  printf("\n");
  if (in->t_first)
    printf("time span   %s  (%llu .. %llu ns)\n",
           slack_fmt_ns(b1, sizeof b1, in->t_last - in->t_first), (unsigned long long)in->t_first,
           (unsigned long long)in->t_last);
  const struct trace_array *dv = &in->td.kind[SLK_DEVICE];
  for (size_t i = 0; i < dv->n; i++)
    printf("device %-4u %s, %u SMs, %.1f GiB\n", dv->v[i].device,
           trace_reader_string(rd, dv->v[i].name), dv->v[i].regs,
           (double)dv->v[i].bytes / (1024.0 * 1024 * 1024));
  if (in->join_ok)
    printf("launches    kernels whose launching host call was recorded: %llu of %llu (%llu in CUDA "
           "graphs, joined to their graph launch)\n",
           (unsigned long long)in->lj.joined, (unsigned long long)in->lj.kernels,
           (unsigned long long)in->lj.graph_joined);
  if (in->probe.kind) {
    char b1[32], b2[32], b3[32];
    uint64_t on = in->probe.bytes, off = in->probe.result;
    printf("probe       CUPTI's cost per launch, measured at exit: %s (an empty kernel's launch "
           "call %s with CUPTI, %s %s; %llu launches each)\n",
           slack_fmt_ns(b1, sizeof b1, on > off ? on - off : 0), slack_fmt_ns(b2, sizeof b2, on),
           slack_fmt_ns(b3, sizeof b3, off),
           in->probe.flags & SLK_PROBE_DETACHED ? "detached" : "with its records disabled",
           (unsigned long long)in->probe.count);
    uint64_t hooked = in->probe.shmem, api_off = in->probe.regs; /* format 2.6 */
    if (hooked)
      printf("probe       slack's hooks per launch, measured at exit: %s (the same launch through "
             "slack's hook %s, CUPTI on)\n",
             slack_fmt_ns(b1, sizeof b1, hooked > on ? hooked - on : 0),
             slack_fmt_ns(b2, sizeof b2, hooked));
    if (api_off)
      printf("probe       CUPTI's API records per launch, measured at exit: %s (the launch call %s "
             "with them off, CUPTI's other records on)\n",
             slack_fmt_ns(b1, sizeof b1, on > api_off ? on - api_off : 0),
             slack_fmt_ns(b2, sizeof b2, api_off));
  }
  if (st->tail == TRACE_TAIL_NONE)
    printf("tail        complete\n");
  else
    printf("tail        last %llu bytes unreadable (%s at offset %llu)\n",
           (unsigned long long)st->tail_bytes, trace_tail_reason(st->tail),
           (unsigned long long)st->tail_offset);
  if (st->count_mismatch)
    printf("warning     %llu chunks hold another number of records than their header says\n",
           (unsigned long long)st->count_mismatch);
}

int cmd_info(int argc, char **argv) {
  static const struct option opts[] = {
      {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
  int as_json = 0, c;
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
    case 'j': as_json = 1; break;
    case 'h': fputs(usage, stdout); return EXIT_OK;
    case ':': return slack_missing_value("info", usage, argv[optind - 1]);
    default: return slack_bad_option("info", usage, argv[optind - 1]);
    }
  }
  if (optind != argc - 1) return slack_usage_error("info", usage, "expects one FILE");
  const char *path = argv[optind];
  struct trace_reader *rd = slack_open_trace("info", path);
  if (!rd) return EXIT_ERROR;
  struct info in;
  memset(&in, 0, sizeof in);
  info_collect(path, rd, &in);
  if (as_json)
    print_json(path, rd, &in);
  else
    print_text(path, rd, &in);
  launches_free(in.ln);
  trace_data_free(&in.td);
  trace_reader_close(rd);
  return EXIT_OK;
}

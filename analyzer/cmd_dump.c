/* slack dump: every record, one per line (docs/slack-dump.md). Streams: memory does not grow
 * with the trace beyond the reader's string table. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "slack.h"

static const char usage[] =
    "usage: slack dump [--kind K[,K...]] FILE\n"
    "  --kind K   only records of these kinds (repeatable): string kernel memcpy memset sync\n"
    "             api host marker graph drops device overhead thread\n";

static const char *const drop_where[] = {"ring", "cupti", "writer"};

static void put_name(FILE *f, const struct trace_reader *rd, const char *key, uint32_t id) {
  if (!id) return;
  const char *s = trace_reader_string(rd, id);
  if (!strcmp(s, "?")) { /* not defined (yet): show the id, not a made-up name */
    fprintf(f, " %s=#%u", key, id);
    return;
  }
  fputc_unlocked(' ', f);
  fputs_unlocked(key, f);
  fputc_unlocked('=', f);
  json_write_string(f, s, strlen(s));
}

/* " key=v" (nothing for 0), formatted by hand: printf was most of dump's time */
static void put_kv(FILE *f, const char *key, uint64_t v) {
  char b[24];
  int i = sizeof b;
  do {
    b[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  fputc_unlocked(' ', f);
  fputs_unlocked(key, f);
  fputc_unlocked('=', f);
  fwrite_unlocked(b + i, 1, sizeof b - (size_t)i, f);
}

static void put_u64(FILE *f, const char *key, uint64_t v) {
  if (v) put_kv(f, key, v);
}

static void put_dim(FILE *f, const char *key, const int32_t d[3]) {
  if (d[0] || d[1] || d[2]) fprintf(f, " %s=%d,%d,%d", key, d[0], d[1], d[2]);
}

static int has_device(uint8_t k) {
  return k == SLK_KERNEL || k == SLK_MEMCPY || k == SLK_MEMSET || k == SLK_SYNC || k == SLK_GRAPH ||
         k == SLK_DEVICE;
}

/* Field names are those of docs/FORMAT.md's table of kinds. */
static void dump_record(FILE *f, const struct trace_reader *rd, const struct slk_record *r) {
  uint8_t k = r->kind;
  fputs_unlocked(slk_kind_name(k), f);
  if (k == SLK_STRING) {
    fprintf(f, " id=%u str=", r->id);
    json_write_string(f, r->str, r->str_len);
    fputc('\n', f);
    return;
  }
  if (k == SLK_PROBE) {
    fprintf(f,
            " tid=%llu start=%llu end=%llu launches=%llu on_ns=%llu off_ns=%u off=%s "
            "records_off_ns=%u",
            (unsigned long long)r->tid, (unsigned long long)r->start, (unsigned long long)r->end,
            (unsigned long long)r->count, (unsigned long long)r->bytes, r->result,
            r->flags & SLK_PROBE_DETACHED ? "detached" : "records_disabled", r->fn);
    /* since 2.6; 0: not measured (and older files), not shown */
    if (r->shmem) fprintf(f, " hooked_ns=%u", r->shmem);
    if (r->regs) fprintf(f, " api_off_ns=%u", r->regs);
    fputc('\n', f);
    return;
  }
  put_u64(f, "tid", r->tid);
  if (has_device(k)) put_kv(f, "device", r->device); /* device 0 is a device too */
  put_u64(f, "stream", r->stream);
  put_u64(f, "start", r->start);
  put_u64(f, "end", r->end);
  put_u64(f, "corr", r->corr);
  put_name(f, rd, "name", r->name);
  if (r->fn) {
    if (k == SLK_HOST && r->fn < SLK_FN_COUNT) {
      fputs_unlocked(" fn=", f);
      fputs_unlocked(slk_fn_name(r->fn), f);
    } else if (k == SLK_HOST) {
      fprintf(f, " fn=#%u", r->fn);
    } else if (k == SLK_API)
      fprintf(f, " cbid=%s:%u", r->fn & SLK_API_DRIVER ? "driver" : "runtime",
              r->fn & ~SLK_API_DRIVER);
    else
      fprintf(f, " %s=%u",
              k == SLK_SYNC       ? "type"
              : k == SLK_OVERHEAD ? "overhead_kind"
                                  : "fn",
              r->fn);
  }
  put_name(f, rd, "callsite", r->callsite);
  put_name(f, rd, "pystack", r->pystack);
  put_u64(f, k == SLK_DEVICE ? "memory_bytes" : "bytes", r->bytes);
  put_u64(f, "copy_kind", r->copy_kind);
  put_u64(f, "src_kind", r->src_kind);
  put_u64(f, k == SLK_MEMSET ? "memory_kind" : "dst_kind", r->dst_kind);
  if (k == SLK_DROPS && r->flags < 3)
    fprintf(f, " where=%s", drop_where[r->flags]);
  else if (k == SLK_DROPS)
    fprintf(f, " where=%u", r->flags);
  else if (r->flags)
    fprintf(f, " flags=0x%x", r->flags);
  put_u64(f, "result", r->result);
  put_u64(f, "graph_id", r->graph_id);
  put_dim(f, "grid", r->grid);
  put_dim(f, "block", r->block);
  put_u64(f, "shmem", r->shmem);
  put_u64(f, k == SLK_DEVICE ? "sm_count" : "regs", r->regs);
  put_u64(f,
          k == SLK_SYNC     ? "event_id"
          : k == SLK_STREAM ? "stream_id"
          : k == SLK_SAMPLE ? "cpu_ns"
                            : "count",
          r->count);
  fputc_unlocked('\n', f);
}

/* Adds the kinds named in a comma-separated list to *mask; 0, or -1 at an unknown name. */
static int parse_kinds(const char *list, uint32_t *mask) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    int k = 1;
    while (k < SLK_KIND_MAX && strcmp(slk_kind_name((uint8_t)k), t))
      k++;
    if (k == SLK_KIND_MAX) return -1;
    *mask |= TRACE_KIND_BIT(k);
  }
  return 0;
}

int cmd_dump(int argc, char **argv) {
  static const struct option opts[] = {
      {"kind", required_argument, NULL, 'k'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
  uint32_t mask = 0;
  int c;
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":hk:", opts, NULL)) != -1) {
    switch (c) {
    case 'k':
      if (parse_kinds(optarg, &mask)) {
        fprintf(stderr, "slack dump: unknown record kind in '%s'\n", optarg);
        fputs(usage, stderr);
        return EXIT_USAGE;
      }
      break;
    case 'h': fputs(usage, stdout); return EXIT_OK;
    case ':': return slack_missing_value("dump", usage, argv[optind - 1]);
    default: return slack_bad_option("dump", usage, argv[optind - 1]);
    }
  }
  if (optind != argc - 1) return slack_usage_error("dump", usage, "expects one FILE");
  const char *path = argv[optind];
  struct trace_reader *rd = slack_open_trace("dump", path);
  if (!rd) return EXIT_ERROR;
  if (!mask) mask = TRACE_KINDS_ALL;
  struct slk_record r;
  while (trace_reader_next(rd, &r))
    if (mask & TRACE_KIND_BIT(r.kind)) dump_record(stdout, rd, &r);
  fflush(stdout);
  slack_warn_tail(stderr, "dump", path, rd);
  trace_reader_close(rd);
  return EXIT_OK;
}

/* Helpers shared by the subcommands (slack.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "slack.h"

unsigned slack_progress_ms(int *tty) {
  /* on a terminal after a second, or every SLACK_PROGRESS ms whatever stderr is (0: never) */
  const char *e = getenv("SLACK_PROGRESS");
  char *end = NULL;
  long ms = e && *e ? strtol(e, &end, 10) : -1;
  if (e && *e && (*end || ms < 0)) ms = -1;
  *tty = isatty(STDERR_FILENO);
  if (ms > 0) return (unsigned)(ms > 600000 ? 600000 : ms);
  return ms < 0 && *tty ? 1000 : 0;
}

struct trace_reader *slack_open_trace(const char *cmd, const char *path) {
  char err[256];
  struct trace_reader *rd = trace_reader_open(path, err, sizeof err);
  if (!rd) {
    fprintf(stderr, "slack %s: cannot open %s: %s\n", cmd, path, err);
    return NULL;
  }
  int tty;
  unsigned ms = slack_progress_ms(&tty);
  if (ms) {
    static char label[160];
    snprintf(label, sizeof label, "slack %s", cmd);
    trace_reader_progress(rd, label, ms, tty);
  }
  return rd;
}

int slack_warn_tail(FILE *f, const char *cmd, const char *path, const struct trace_reader *rd) {
  const struct trace_reader_stats *st = trace_reader_stats(rd);
  if (st->tail == TRACE_TAIL_NONE) return 0;
  fprintf(f,
          "slack %s: %s: last %llu bytes unreadable (%s at offset %llu); %llu complete chunks "
          "read\n",
          cmd, path, (unsigned long long)st->tail_bytes, trace_tail_reason(st->tail),
          (unsigned long long)st->tail_offset, (unsigned long long)st->chunks);
  return 1;
}

int slack_usage_error(const char *cmd, const char *usage, const char *msg) {
  if (msg) fprintf(stderr, "slack %s: %s\n", cmd, msg);
  fputs(usage, stderr);
  return EXIT_USAGE;
}

int slack_bad_option(const char *cmd, const char *usage, const char *arg) {
  fprintf(stderr, "slack %s: unknown option '%s'\n", cmd, arg);
  fputs(usage, stderr);
  return EXIT_USAGE;
}

int slack_missing_value(const char *cmd, const char *usage, const char *arg) {
  fprintf(stderr, "slack %s: option '%s' wants a value\n", cmd, arg);
  fputs(usage, stderr);
  return EXIT_USAGE;
}

int slack_wants_help(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--")) break;
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
  }
  return 0;
}

const char *slack_fmt_ns(char *buf, size_t len, uint64_t ns) {
  if (ns < 1000)
    snprintf(buf, len, "%llu ns", (unsigned long long)ns);
  else if (ns < 1000000)
    snprintf(buf, len, "%.1f us", ns / 1e3);
  else if (ns < 1000000000)
    snprintf(buf, len, "%.2f ms", ns / 1e6);
  else
    snprintf(buf, len, "%.3f s", ns / 1e9);
  return buf;
}

double slack_pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * part / whole : 0.0; }

uint64_t slack_window_end(uint64_t lo, uint64_t hi, double want,
                          double (*before)(const void *ctx, uint64_t t), const void *ctx) {
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (before(ctx, mid) < want)
      lo = mid;
    else
      hi = mid;
  }
  return hi;
}

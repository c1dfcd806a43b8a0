/* The slack command: the subcommand table's entries and what the subcommands share. */
#ifndef SLACK_SLACK_H
#define SLACK_SLACK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "reader.h"

#ifndef SLACK_VERSION
#define SLACK_VERSION "0.1.0"
#endif

/* Exit codes of every subcommand. */
#define EXIT_OK 0
#define EXIT_ERROR 1 /* could not do the work: unreadable file, failed exec... */
#define EXIT_USAGE 2 /* bad command line */

/* One subcommand: argv[0] is its name; "--help" anywhere prints its usage to stdout and
 * returns 0. Returns the process exit code. */
struct slack_cmd {
  const char *name;
  int (*fn)(int argc, char **argv);
  const char *help; /* one line for `slack --help` */
};

int cmd_info(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_diff(int argc, char **argv);

/* ---- shared helpers (util.c) ---- */

/* Opens a trace for subcommand cmd; on failure says "slack CMD: cannot open PATH: reason" on
 * stderr and returns NULL. */
struct trace_reader *slack_open_trace(const char *cmd, const char *path);
/* How often a progress line goes to stderr, in ms (0: never): SLACK_PROGRESS, else once a second
 * on a terminal (docs/ENVIRONMENT.md); *tty: stderr is a terminal (rewrite the line in place). */
unsigned slack_progress_ms(int *tty);
/* After reading: when the file had an unreadable tail, says so on f ("slack CMD: PATH: last N
 * bytes unreadable (reason); M complete chunks read"). Returns 1 when it did. */
int slack_warn_tail(FILE *f, const char *cmd, const char *path, const struct trace_reader *rd);
/* Prints the usage text and returns EXIT_USAGE, with "slack CMD: msg" first when msg. */
int slack_usage_error(const char *cmd, const char *usage, const char *msg);
/* "slack CMD: unknown option 'ARG'" and the usage text; returns EXIT_USAGE. */
int slack_bad_option(const char *cmd, const char *usage, const char *arg);
/* The same for a known option given without its value (getopt_long's ':' with a ':' optstring). */
int slack_missing_value(const char *cmd, const char *usage, const char *arg);
/* 1 when "--help" or "-h" is among argv[1..argc). */
int slack_wants_help(int argc, char **argv);

/* Human duration: "812 ns", "12.4 us", "3.25 ms", "1.204 s". buf of at least 32 bytes. */
const char *slack_fmt_ns(char *buf, size_t len, uint64_t ns);
/* part / whole as a percentage, 0 when whole is 0. */
double slack_pct(uint64_t part, uint64_t whole);

/* The end of a window of a long trace read by windows (`report`, `info`'s launch join): the
 * least t in (lo, hi] with before(ctx, t) >= want, by bisection, before(ctx, t) being the
 * records that start before t (nondecreasing in t, estimated from an index of the chunks); hi
 * when no t below it reaches want. */
uint64_t slack_window_end(uint64_t lo, uint64_t hi, double want,
                          double (*before)(const void *ctx, uint64_t t), const void *ctx);

#endif

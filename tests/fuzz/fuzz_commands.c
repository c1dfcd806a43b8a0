/* Fuzz target "commands": every analysis of the slack command on a fuzzed trace (fuzz.h says
 * how an input becomes one), in process, as `slack CMD ARGS` would run it: info (text and
 * --json), dump, stats, report (text and --json), timeline, and when they are there diff (the
 * trace against itself) and the HTML pages; the input's last byte picks some more options (csv,
 * two files, --mangled, a window, HTML, the report in windows of 40 records), a whole .slk file
 * runs them all. Checks: no command fails
 * with a usage error on a valid command line, every JSON output (info --json, report --json,
 * diff --json, the timeline) is valid JSON, UTF-8 included, and info and stats print the same in
 * their smallest windows and value budgets as in one piece. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "fuzz_json.h"
#include "slack.h"

static int cap_fd = -1;   /* stdout of the commands */
static char cap_path[64]; /* the same memory file by path (timeline -o) */

/* Commands and options still being written when this target was (slack diff, the HTML pages) are
 * fuzzed once they are there: cmd_diff is weak, so that the target links without it, and an
 * option is used when the command's usage names it. */
int cmd_diff(int argc, char **argv);
#pragma weak cmd_diff
static int has_report_html, has_report_merge, has_diff_html;

static int usage_has(int (*cmd)(int, char **), const char *name, const char *what);

static void capture_init(void) {
  if (cap_fd >= 0) return;
  fuzz_quiet();
  cap_fd = memfd_create("slack-fuzz-out", MFD_CLOEXEC);
  FUZZ_CHECK(cap_fd >= 0);
  snprintf(cap_path, sizeof cap_path, "/proc/self/fd/%d", cap_fd);
  FUZZ_CHECK(dup2(cap_fd, STDOUT_FILENO) == STDOUT_FILENO);
  /* SLACK_FUZZ_NO_HTML=1: not the HTML pages (to fuzz past an open finding there) */
  int no_html = getenv("SLACK_FUZZ_NO_HTML") && *getenv("SLACK_FUZZ_NO_HTML") == '1';
  has_report_html = !no_html && usage_has(cmd_report, "report", "--html");
  has_report_merge = usage_has(cmd_report, "report", "--merge");
  has_diff_html = !no_html && cmd_diff && usage_has(cmd_diff, "diff", "--html");
}

static void capture_reset(void) {
  fflush(stdout);
  FUZZ_CHECK(ftruncate(cap_fd, 0) == 0);
  FUZZ_CHECK(lseek(cap_fd, 0, SEEK_SET) == 0);
}

/* The captured bytes must be one JSON value. */
static void capture_check_json(const char *what) {
  fflush(stdout);
  struct stat sb;
  FUZZ_CHECK(fstat(cap_fd, &sb) == 0);
  size_t len = (size_t)sb.st_size;
  if (!len) return; /* the command failed before writing (unreadable trace) */
  char *text = malloc(len);
  FUZZ_CHECK(text);
  FUZZ_CHECK(pread(cap_fd, text, len, 0) == (ssize_t)len);
  size_t bad = fuzz_json_check(text, len);
  if (bad) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s wrote invalid JSON (at byte %zu of %zu)", what, bad - 1, len);
    fuzz_fail(msg, __FILE__, __LINE__);
  }
  free(text);
}

/* The captured bytes (malloc'd; the caller frees), *len of them. */
static char *capture_take(size_t *len) {
  fflush(stdout);
  struct stat sb;
  FUZZ_CHECK(fstat(cap_fd, &sb) == 0);
  *len = (size_t)sb.st_size;
  char *text = malloc(*len + 1);
  FUZZ_CHECK(text);
  FUZZ_CHECK(pread(cap_fd, text, *len, 0) == (ssize_t)*len);
  return text;
}

/* Runs cmd with the NULL-terminated arguments (argv[0] is the command's name, as main.c passes
 * it). getopt_long permutes argv: a fresh copy each time. files_refusable: exit 2 allowed too,
 * for the refusals the files themselves cause (two traces of one rank, one of them without a
 * rank beside another with one: docs/slack-report.md, "Exit status"). */
static int run_as(int (*cmd)(int, char **), const char *const *args, int files_refusable) {
  char *argv[16];
  int argc = 0;
  while (args[argc] && argc < 15) {
    argv[argc] = (char *)args[argc];
    argc++;
  }
  argv[argc] = NULL;
  int rc = cmd(argc, argv);
  if (rc != EXIT_OK && rc != EXIT_ERROR && !(files_refusable && rc == EXIT_USAGE)) {
    /* never a usage error otherwise: the line is valid */
    char msg[256];
    int n = snprintf(msg, sizeof msg, "exit %d (not 0 or 1) of slack", rc);
    for (int i = 0; i < argc && n > 0 && (size_t)n < sizeof msg; i++)
      n += snprintf(msg + n, sizeof msg - (size_t)n, " %s", argv[i]);
    fuzz_fail(msg, __FILE__, __LINE__);
  }
  return rc;
}

static int run(int (*cmd)(int, char **), const char *const *args) { return run_as(cmd, args, 0); }

/* cmd's output with the bounds of info's windows and slices of ids and of stats' values at their
 * smallest (a window of a few spans, every few values read again) is its output in one piece
 * (analyzer/launches.c, analyzer/cmd_stats.c). */
static void bounded_same(int (*cmd)(int, char **), const char *const *args, const char *what) {
  static const char *const small[][2] = {{"SLACK_INFO_WINDOW_SPANS", "5"},
                                         {"SLACK_INFO_CORR_SLICE", "64"},
                                         {"SLACK_STATS_VALUES", "8"}};
  size_t na, nb;
  capture_reset();
  int ra = run(cmd, args);
  char *a = capture_take(&na);
  for (size_t i = 0; i < sizeof small / sizeof small[0]; i++)
    FUZZ_CHECK(setenv(small[i][0], small[i][1], 1) == 0);
  capture_reset();
  int rb = run(cmd, args);
  char *b = capture_take(&nb);
  for (size_t i = 0; i < sizeof small / sizeof small[0]; i++)
    unsetenv(small[i][0]);
  if (ra != rb || na != nb || memcmp(a, b, na)) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s in the smallest windows and budgets: another output", what);
    fuzz_fail(msg, __FILE__, __LINE__);
  }
  free(a);
  free(b);
}

/* Whether `slack NAME --help` mentions what (read through the capture file). */
static int usage_has(int (*cmd)(int, char **), const char *name, const char *what) {
  capture_reset();
  char *argv[] = {(char *)name, "--help", NULL};
  cmd(2, argv);
  fflush(stdout);
  char text[8192];
  ssize_t n = pread(cap_fd, text, sizeof text - 1, 0);
  text[n > 0 ? n : 0] = '\0';
  return strstr(text, what) != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *file;
  size_t len;
  capture_init();
  if (fuzz_trace_build(data, size, &file, &len)) return 0;
  const char *path = fuzz_memfile(file, len);
  uint8_t *other;
  size_t other_len;
  const char *path2 = NULL; /* the trace as a second process of the same job */
  if (path && !fuzz_trace_other_process(file, len, &other, &other_len)) {
    path2 = fuzz_memfile_at(1, other, other_len);
    free(other);
  }
  free(file);
  if (!path || !path2) return 0;
  /* the options of this run: the input's last byte; a whole .slk file (a regression input as
   * the slack command opens it) runs them all */
  uint8_t sel = size >= 8 && !memcmp(data, "SLACKTR", 8) ? 0xff : size ? data[size - 1] : 0;

  capture_reset();
  run(cmd_info, (const char *[]){"info", path, NULL});
  capture_reset();
  run(cmd_info, (const char *[]){"info", "--json", path, NULL});
  capture_check_json("info --json");
  capture_reset();
  run(cmd_dump, (const char *[]){"dump", path, NULL});
  if (sel & 1) run(cmd_dump, (const char *[]){"dump", "--kind", "kernel,host,string", path, NULL});
  capture_reset();
  if (sel & 2)
    run(cmd_stats, (const char *[]){"stats", "--format", "csv", "--mangled", path, NULL});
  else
    run(cmd_stats, (const char *[]){"stats", path, NULL});
  bounded_same(cmd_info, (const char *[]){"info", "--json", path, NULL}, "info --json");
  bounded_same(cmd_stats, (const char *[]){"stats", "--format", "csv", path, NULL}, "stats");
  capture_reset();
  run(cmd_report, (const char *[]){"report", path, NULL});
  capture_reset();
  int refused = 0;
  if ((sel & 4) && has_report_merge) /* two processes: the classifier joins them */
    refused =
        run_as(cmd_report,
               (const char *[]){"report", "--json", "--top", "3", "--merge", path, path2, NULL},
               1) == EXIT_USAGE;
  else if (sel & 4)
    refused =
        run_as(cmd_report, (const char *[]){"report", "--json", "--top", "3", path, path2, NULL},
               1) == EXIT_USAGE;
  else
    run(cmd_report, (const char *[]){"report", "--json", path, NULL});
  if (!refused) capture_check_json("report --json");
  if (sel & 64) { /* in windows of a few records: the windows' loading, carries and folds */
    capture_reset();
    run(cmd_report, (const char *[]){"report", "--json", "--window-records", "40", path, NULL});
    capture_check_json("report --json --window-records 40");
  }
  capture_reset();
  if (sel & 8)
    run(cmd_timeline, (const char *[]){"timeline", path, "-o", cap_path, "--mangled", "--from",
                                       "0.001", "--to", "50", "--min-idle", "100", NULL});
  else
    run(cmd_timeline, (const char *[]){"timeline", path, "-o", cap_path, NULL});
  capture_check_json("timeline");
  if (has_report_html && (sel & 16)) {
    capture_reset();
    run(cmd_report, (const char *[]){"report", "--html", cap_path, path, NULL});
  }
  if (cmd_diff) { /* the trace against itself (as another process) */
    capture_reset();
    run(cmd_diff, (const char *[]){"diff", path, path2, NULL});
    capture_reset();
    run(cmd_diff, (const char *[]){"diff", "--json", "--samples", "64,32", path, path2, NULL});
    capture_check_json("diff --json");
    if (has_diff_html && (sel & 32)) {
      capture_reset();
      run(cmd_diff, (const char *[]){"diff", "--html", cap_path, path, path2, NULL});
    }
  }
  return 0;
}

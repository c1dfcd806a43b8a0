/* slack record: run a command with libslack.so preloaded (docs/slack-record.md). Nothing more
 * than the environment a user would set by hand; the traced program then replaces this
 * process, so its exit status is the command's. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "slack.h"

static const char usage[] =
    "usage: slack record [-o DIR] [OPTIONS] [--] COMMAND [ARGS...]\n"
    "  -o, --output DIR          directory for the trace (made if missing; sets SLACK_OUTPUT)\n"
    "production windows (docs/ENVIRONMENT.md; libslack checks the values and says once when one\n"
    "is ignored):\n"
    "  --window W/P              record W of every P, e.g. 2s/20s (SLACK_WINDOW)\n"
    "  --capture-range SPEC      nvtx:NAME or cudaProfilerApi (SLACK_CAPTURE_RANGE)\n"
    "  --trigger-file PATH       touching PATH opens a window (SLACK_TRIGGER_FILE)\n"
    "  --trigger-signal SIG      USR1, USR2, HUP, WINCH or RTMIN+N opens a window\n"
    "                            (SLACK_TRIGGER_SIGNAL)\n"
    "  --trigger-ms N            length of a triggered window (SLACK_TRIGGER_MS)\n"
    "  --max-mb N                stop recording past N MB of trace (SLACK_MAX_MB)\n"
    "a window from the start (docs/ENVIRONMENT.md):\n"
    "  --delay MS                start tracing MS after load (SLACK_DELAY_MS)\n"
    "  --duration MS             stop tracing MS after it started (SLACK_DURATION_MS)\n"
    "  --tail MS                 then time the host's calls MS more without CUPTI\n"
    "                            (SLACK_TAIL_MS, default 3000, 0: none): slack report takes\n"
    "                            the tracer's slowing of the host out at the pace it\n"
    "                            measures, not an assumed one\n"
    "the whole process (no window, no --duration):\n"
    "  --pace-probe LEN/AT       time the host's calls LEN without CUPTI mid-run, not before\n"
    "                            AT and once the launches are steady (SLACK_PACE_PROBE,\n"
    "                            default 2s/20s, 0: none): the same measure as --tail's\n";

/* The options that set one SLACK_* variable each (runtime/config.c reads and checks them). */
static const struct {
  const char *opt, *var;
} env_opts[] = {
    {"--window", "SLACK_WINDOW"},
    {"--capture-range", "SLACK_CAPTURE_RANGE"},
    {"--trigger-file", "SLACK_TRIGGER_FILE"},
    {"--trigger-signal", "SLACK_TRIGGER_SIGNAL"},
    {"--trigger-ms", "SLACK_TRIGGER_MS"},
    {"--max-mb", "SLACK_MAX_MB"},
    {"--delay", "SLACK_DELAY_MS"},
    {"--duration", "SLACK_DURATION_MS"},
    {"--tail", "SLACK_TAIL_MS"},
    {"--pace-probe", "SLACK_PACE_PROBE"},
};

/* argv[*i] is one of env_opts ("--opt VALUE" or "--opt=VALUE"): sets its variable. 1 when it
 * was one, 0 when not, -1 after a usage error. */
static int env_opt(int argc, char **argv, int *i) {
  const char *a = argv[*i];
  for (size_t k = 0; k < sizeof env_opts / sizeof env_opts[0]; k++) {
    size_t n = strlen(env_opts[k].opt);
    if (strncmp(a, env_opts[k].opt, n) || (a[n] != '\0' && a[n] != '=')) continue;
    const char *v = a[n] == '=' ? a + n + 1 : NULL;
    if (!v) {
      if (*i + 1 >= argc) {
        slack_missing_value("record", usage, a);
        return -1;
      }
      v = argv[++*i];
    }
    if (setenv(env_opts[k].var, v, 1)) {
      fprintf(stderr, "slack record: cannot set the environment: %s\n", strerror(errno));
      return -1;
    }
    return 1;
  }
  return 0;
}

/* libslack.so beside this executable (a build tree) or in ../lib (an installed copy, make
 * install): its path into buf; 0, or -1 with a message on stderr. */
static int find_lib(char *buf, size_t len) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n < 0) {
    fprintf(stderr, "slack record: cannot find the slack binary: /proc/self/exe: %s\n",
            strerror(errno));
    return -1;
  }
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (slash) *slash = '\0';
  const char *dir = slash ? exe : ".";
  static const char *const where[] = {"%s/libslack.so", "%s/../lib/libslack.so"};
  for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    if ((size_t)snprintf(buf, len, where[i], dir) >= len) {
#pragma GCC diagnostic pop
      fprintf(stderr, "slack record: path of libslack.so too long\n");
      return -1;
    }
    if (access(buf, R_OK) == 0) return 0;
  }
  fprintf(stderr,
          "slack record: cannot find libslack.so beside %s/slack or in %s/../lib (it is built "
          "beside the slack binary; make install puts it in PREFIX/lib)\n",
          dir, dir);
  return -1;
}

int cmd_record(int argc, char **argv) {
  const char *out = NULL;
  int i = 1, r;
  /* options end at the first word that is not one: what follows belongs to the command */
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--")) {
      i++;
      break;
    }
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      fputs(usage, stdout);
      return EXIT_OK;
    }
    if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      if (i + 1 >= argc) return slack_usage_error("record", usage, "-o wants a DIR");
      out = argv[++i];
    } else if (!strncmp(a, "--output=", 9)) {
      out = a + 9;
    } else if (!strncmp(a, "-o", 2)) {
      out = a + 2;
    } else if (!strncmp(a, "--", 2) && (r = env_opt(argc, argv, &i)) != 0) {
      if (r < 0) return EXIT_USAGE;
    } else if (a[0] == '-' && a[1]) {
      return slack_bad_option("record", usage, a);
    } else {
      break;
    }
  }
  if (i >= argc) return slack_usage_error("record", usage, "no command to run");
  if (out && !*out) return slack_usage_error("record", usage, "-o wants a DIR");

  char lib[PATH_MAX + 32];
  if (find_lib(lib, sizeof lib)) return EXIT_ERROR;
  /* SLACK_OUTPUT names a directory: libslack makes it (docs/ENVIRONMENT.md), or says once why
   * it could not, and the program runs on */
  const char *old = getenv("LD_PRELOAD");
  size_t len = strlen(lib) + (old ? strlen(old) + 1 : 0) + 1;
  char *preload = malloc(len);
  if (!preload) {
    fprintf(stderr, "slack record: out of memory\n");
    return EXIT_ERROR;
  }
  if (old && *old)
    snprintf(preload, len, "%s:%s", lib, old);
  else
    snprintf(preload, len, "%s", lib);
  if (setenv("LD_PRELOAD", preload, 1) || (out && setenv("SLACK_OUTPUT", out, 1))) {
    fprintf(stderr, "slack record: cannot set the environment: %s\n", strerror(errno));
    free(preload);
    return EXIT_ERROR;
  }
  free(preload);
  fflush(NULL);
  execvp(argv[i], argv + i);
  int e = errno;
  fprintf(stderr, "slack record: cannot run %s: %s\n", argv[i], strerror(e));
  return e == ENOENT ? 127 : 126;
}

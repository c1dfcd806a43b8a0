/* slack: the command table and the top-level options. Adding a command is one file
 * (cmd_<name>.c), one line in this table and one page (docs/slack-<name>.md). */
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "slack.h"

static const struct slack_cmd commands[] = {
    {"record", cmd_record, "run a program with libslack.so preloaded, writing a trace"},
    {"info", cmd_info, "summarize a trace file: header, record counts, drops, size"},
    {"report", cmd_report, "why each GPU waited: time per stall class and step, what-if"},
    {"diff", cmd_diff, "a run before a fix against the run after it: step, throughput, classes"},
    {"dump", cmd_dump, "print every record of a trace, one per line"},
    {"stats", cmd_stats, "the tables of nsys stats: kernels, memory operations, CUDA API calls"},
    {"import", cmd_import, "convert an Nsight Systems SQLite export into a slack trace"},
    {"timeline", cmd_timeline, "export a trace as Chrome trace JSON for Perfetto UI"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const struct slack_cmd *find_command(const char *name) {
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (!strcmp(commands[i].name, name)) return &commands[i];
  return NULL;
}

static void print_help(FILE *f) {
  fputs("usage: slack [--version] [--help] COMMAND [ARGS]\n\n"
        "slack finds the time a GPU spends waiting, and says why.\n\n"
        "commands:\n",
        f);
  for (size_t i = 0; i < NCOMMANDS; i++)
    fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
  fputs("\n'slack help COMMAND' or 'slack COMMAND --help' shows a command's options;\n"
        "docs/slack-COMMAND.md has its page.\n",
        f);
}

static int print_version(int build_options) {
  printf("slack %s (trace format %d.%d)\n", SLACK_VERSION, SLK_VERSION_MAJOR, SLK_VERSION_MINOR);
  if (build_options) {
#ifdef SLACK_HAVE_SQLITE
    puts("  sqlite: yes");
#else
    puts("  sqlite: no");
#endif
  }
  return EXIT_OK;
}

static int unknown_command(const char *name) {
  fprintf(stderr, "slack: '%s' is not a slack command. See 'slack --help'.\n", name);
  return EXIT_USAGE;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    print_help(stderr);
    return EXIT_USAGE;
  }
  const char *name = argv[1];
  if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
    print_help(stdout);
    return EXIT_OK;
  }
  if (!strcmp(name, "--version") || !strcmp(name, "version"))
    return print_version(argc > 2 && !strcmp(argv[2], "--build-options"));
  if (!strcmp(name, "help")) {
    if (argc < 3) {
      print_help(stdout);
      return EXIT_OK;
    }
    const struct slack_cmd *c = find_command(argv[2]);
    if (!c) return unknown_command(argv[2]);
    char *help_argv[] = {(char *)c->name, "--help", NULL};
    return c->fn(2, help_argv);
  }
  if (name[0] == '-') {
    fprintf(stderr, "slack: unknown option '%s'\n", name);
    print_help(stderr);
    return EXIT_USAGE;
  }
  const struct slack_cmd *c = find_command(name);
  if (!c) return unknown_command(name);
  return c->fn(argc - 1, argv + 1);
}

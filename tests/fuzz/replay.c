/* Replay driver of a fuzz target, built with the normal compiler (no clang, no libFuzzer): feeds
 * every file named, or found in the folders named, to the target's LLVMFuzzerTestOneInput, as
 * libFuzzer does with a corpus. `make test` runs it over tests/fuzz/corpus/TARGET and
 * tests/fuzz/regressions/TARGET (tests/fuzz.mk). A crash or failed check ends the process the way
 * it ends the fuzzer. Exit 0 after the last file.
 *
 *   replay-TARGET [-v] PATH...    -v: name each file on stderr before running it (to find the
 *                                 one that crashes) */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *out; /* the driver's own stdout: the targets send theirs to /dev/null */
static int verbose;
static unsigned long files;

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_file(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb)) {
    fprintf(out, "replay: cannot read %s\n", path);
    if (fd >= 0) close(fd);
    return -1;
  }
  size_t len = (size_t)sb.st_size;
  uint8_t *buf = malloc(len ? len : 1);
  size_t got = 0;
  while (buf && got < len) {
    ssize_t n = read(fd, buf + got, len - got);
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(fd);
  if (!buf || got != len) {
    fprintf(out, "replay: cannot read %s\n", path);
    free(buf);
    return -1;
  }
  if (verbose) { /* said before running (unbuffered), so that a crash names its input */
    char msg[4200];
    int m = snprintf(msg, sizeof msg, "replay: %s\n", path);
    if (m > 0 && write(STDERR_FILENO, msg, (size_t)m) < 0) return -1;
  }
  LLVMFuzzerTestOneInput(buf, len);
  free(buf);
  files++;
  return 0;
}

static int run_path(const char *path) {
  struct stat sb;
  if (stat(path, &sb)) {
    fprintf(out, "replay: no such file or folder: %s\n", path);
    return -1;
  }
  if (!S_ISDIR(sb.st_mode)) return run_file(path);
  DIR *d = opendir(path);
  if (!d) return -1;
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue; /* ., .., and hidden files such as .gitkeep */
    if (n == cap) {
      cap = cap ? 2 * cap : 64;
      char **v = realloc(names, cap * sizeof *v);
      if (!v) break;
      names = v;
    }
    if (asprintf(&names[n], "%s/%s", path, e->d_name) < 0) break;
    n++;
  }
  closedir(d);
  if (n) qsort(names, n, sizeof *names, cmp_str); /* the same order every run */
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    if (run_path(names[i])) rc = -1;
    free(names[i]);
  }
  free(names);
  return rc;
}

int main(int argc, char **argv) {
  int fd = dup(STDOUT_FILENO);
  out = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!out) out = stderr;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int rc = 0, paths = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-v")) {
      verbose = 1;
      continue;
    }
    paths++;
    if (run_path(argv[i])) rc = 1;
  }
  if (!paths) {
    fprintf(out, "usage: %s [-v] FILE_OR_FOLDER...\n", argv[0]);
    return 2;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  fprintf(out, "replay %s: %lu inputs in %.2f s%s\n", argv[0], files,
          (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
          rc ? " (some could not be read)" : "");
  fclose(out);
  return rc;
}

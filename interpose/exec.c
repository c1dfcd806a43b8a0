/* exec: the new image replaces this one without running atexit handlers or destructors, so
 * whatever slack has recorded and not yet written would be lost. Each exec function first
 * flushes (bounded: slack_flush never waits long), then calls the real one. The environment,
 * and with it LD_PRELOAD, passes on: the new program starts its own trace.
 *
 * The list-argument forms (execl, execle, execlp) cannot forward their variable arguments: like
 * glibc itself they build the argument vector on the stack and call the vector form (the real
 * one, so the flush happens once). posix_spawn and fexecve are not hooked. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#include "interpose.h"

#define LIBC "libc.so.6"

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);

static void *real_execve_p, *real_execv_p, *real_execvp_p, *real_execvpe_p;

/* Flushes the trace if this process is tracing. errno is left as the program had it. */
static void flush_before_exec(void) {
  int st = __atomic_load_n(&slack_state, __ATOMIC_ACQUIRE);
  if (st != 2 && st != SLACK_STATE_PAUSED) return;
  int saved = errno;
  slack_flush(0);
  errno = saved;
}

/* The real function, or NULL with errno set (libc without it: cannot happen with glibc). */
static void *real_exec(void **slot, const char *name) {
  void *p = slack_resolve(slot, name, LIBC);
  if (p == NULL) errno = ENOSYS;
  return p;
}

SLACK_EXPORT int execve(const char *path, char *const argv[], char *const envp[]) {
  flush_before_exec();
  execve_fn real = (execve_fn)real_exec(&real_execve_p, "execve");
  return real != NULL ? real(path, argv, envp) : -1;
}

SLACK_EXPORT int execv(const char *path, char *const argv[]) {
  flush_before_exec();
  execv_fn real = (execv_fn)real_exec(&real_execv_p, "execv");
  return real != NULL ? real(path, argv) : -1;
}

SLACK_EXPORT int execvp(const char *file, char *const argv[]) {
  flush_before_exec();
  execv_fn real = (execv_fn)real_exec(&real_execvp_p, "execvp");
  return real != NULL ? real(file, argv) : -1;
}

SLACK_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]) {
  flush_before_exec();
  execve_fn real = (execve_fn)real_exec(&real_execvpe_p, "execvpe");
  return real != NULL ? real(file, argv, envp) : -1;
}

/* Number of arguments from arg0 up to the terminating NULL (as glibc counts them), or -1 with
 * errno E2BIG when absurdly many. */
static ptrdiff_t count_args(va_list ap) {
  ptrdiff_t argc = 1;
  while (va_arg(ap, const char *) != NULL) {
    if (argc == INT_MAX) {
      errno = E2BIG;
      return -1;
    }
    argc++;
  }
  return argc;
}

/* Fills argv[0..argc] from arg0 and the variable arguments (argv[argc] = NULL). */
static void fill_args(char **argv, ptrdiff_t argc, const char *arg0, va_list ap) {
  argv[0] = (char *)arg0;
  for (ptrdiff_t i = 1; i <= argc; i++)
    argv[i] = va_arg(ap, char *); /* the last one read is the terminating NULL */
}

SLACK_EXPORT int execl(const char *path, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  ptrdiff_t argc = count_args(ap);
  va_end(ap);
  if (argc < 0) return -1;
  char *argv[argc + 1];
  va_start(ap, arg);
  fill_args(argv, argc, arg, ap);
  va_end(ap);
  flush_before_exec();
  execv_fn real = (execv_fn)real_exec(&real_execv_p, "execv");
  return real != NULL ? real(path, argv) : -1;
}

SLACK_EXPORT int execlp(const char *file, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  ptrdiff_t argc = count_args(ap);
  va_end(ap);
  if (argc < 0) return -1;
  char *argv[argc + 1];
  va_start(ap, arg);
  fill_args(argv, argc, arg, ap);
  va_end(ap);
  flush_before_exec();
  execv_fn real = (execv_fn)real_exec(&real_execvp_p, "execvp");
  return real != NULL ? real(file, argv) : -1;
}

/* execle(path, arg0, ..., NULL, envp) */
SLACK_EXPORT int execle(const char *path, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  ptrdiff_t argc = count_args(ap);
  va_end(ap);
  if (argc < 0) return -1;
  char *argv[argc + 1];
  va_start(ap, arg);
  fill_args(argv, argc, arg, ap);
  char *const *envp = va_arg(ap, char *const *);
  va_end(ap);
  flush_before_exec();
  execve_fn real = (execve_fn)real_exec(&real_execve_p, "execve");
  return real != NULL ? real(path, argv, envp) : -1;
}

/* Process life of the tracer: load, lazy start on the first CUDA activity, the per-call record,
 * flush before exec, bounded flush at exit, and a clean slate in fork children. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "cupti_client.h"
#include "hook.h"
#include "ring.h"
#include "writer.h"

#ifndef SLACK_VERSION
#define SLACK_VERSION "0.1.0"
#endif

__thread int slack_tls_busy __attribute__((tls_model("initial-exec")));
int slack_state;
static char trace_path[PATH_MAX];
static pid_t trace_pid;       /* the process that owns the trace: a vfork child shares our memory */
static uint64_t lost_no_ring; /* events dropped because a thread's ring could not be allocated */

void hook_end(uint32_t fn, uint64_t t0, uint64_t stream, uint64_t bytes, uint8_t copy_kind,
              uint32_t flags, uint32_t result, void *caller) {
  int saved = errno;
  struct slack_event ev = {t0, slack_now(), stream, bytes,    (uint64_t)(uintptr_t)caller,
                           fn, result,      flags,  copy_kind};
  struct ring *r = ring_self();
  if (__builtin_expect(r != NULL, 1))
    ring_push(r, &ev);
  else
    __atomic_add_fetch(&lost_no_ring, 1, __ATOMIC_RELAXED);
  slack_tls_busy = 0;
  errno = saved;
}

/* "a b c" from /proc/self/cmdline, quotes and newlines dropped (it is one header line). */
static void read_cmdline(char *out, size_t cap) {
  out[0] = '\0';
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n = read(fd, out, cap - 1);
  close(fd);
  if (n <= 0) return;
  out[n] = '\0';
  for (ssize_t i = 0; i < n; i++)
    if (out[i] == '\0' || out[i] == '\n') out[i] = ' ';
  while (n > 0 && out[n - 1] == ' ')
    out[--n] = '\0';
}

/* Creates <dir>/slack-<host>-<pid>.slk, or -N.slk if that exists (an exec'd program keeps its
 * pid and must not overwrite its predecessor's trace). */
static int create_trace(char *path, size_t cap, const char *host) {
  for (int n = 0; n < 1000; n++) {
    int w;
    if (n == 0)
      w = snprintf(path, cap, "%s/slack-%s-%d.slk", slack_cfg.output, host, (int)getpid());
    else
      w = snprintf(path, cap, "%s/slack-%s-%d-%d.slk", slack_cfg.output, host, (int)getpid(), n);
    if (w < 0 || (size_t)w >= cap) {
      errno = ENAMETOOLONG;
      return -1;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

static void slack_atexit(void) { slack_flush(1); }

void slack_start(void) {
#ifdef SLACK_NOP
  return; /* the nop build (hook.h): interpose/dl.c's cuGetProcAddress path must not start it */
#endif
  int expect = 0;
  if (!__atomic_compare_exchange_n(&slack_state, &expect, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
    return;
  int saved_errno = errno; /* called from hooks before the real call: leave errno as it was */
  slack_tls_busy++;        /* CUPTI's and our own calls below pass through every hook */
  trace_pid = getpid();
  ring_init(slack_cfg.ring_events);

  char why[256] = "";
  uint32_t cupti_version = 0;
  int cupti_ok = 0;
  if (!slack_cfg.cupti)
    snprintf(why, sizeof why, "SLACK_CUPTI=0: recording host calls only");
  else
    cupti_ok = cupti_start(why, sizeof why, &cupti_version) == 0;

  char host[256] = "host";
  gethostname(host, sizeof host - 1);
  host[sizeof host - 1] = '\0';
  for (char *p = host; *p; p++)
    if (*p == '/' || *p == ' ') *p = '_';
  int fd = create_trace(trace_path, sizeof trace_path, host);
  if (fd < 0) {
    fprintf(stderr, "slack: cannot create a trace in %s: %s; not tracing, the program continues\n",
            slack_cfg.output, strerror(errno));
    cupti_stop();
    __atomic_store_n(&slack_state, 3, __ATOMIC_RELEASE);
    slack_tls_busy--;
    errno = saved_errno;
    return;
  }

  static char header[16384];
  char cmd[8192];
  read_cmdline(cmd, sizeof cmd);
  struct timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  uint64_t mono = slack_now();
  int n = snprintf(header, sizeof header,
                   "host=%s\npid=%d\nppid=%d\nrank=%s\ncmdline=%s\nslack_version=%s\n"
                   "clock=CLOCK_MONOTONIC\nstart_monotonic_ns=%llu\nstart_realtime_ns=%llu\n"
                   "cupti_version=%u\ngpu_records=%s\n",
                   host, (int)getpid(), (int)getppid(), slack_cfg.rank, cmd, SLACK_VERSION,
                   (unsigned long long)mono,
                   (unsigned long long)rt.tv_sec * 1000000000ull + (unsigned long long)rt.tv_nsec,
                   cupti_version, cupti_ok ? "on" : why);
  if (n > 0 && (size_t)n < sizeof header) config_describe(header + n, sizeof header - (size_t)n);

  if (writer_start(fd, header)) {
    fprintf(stderr, "slack: cannot write %s: %s; not tracing, the program continues\n", trace_path,
            strerror(errno));
    close(fd);
    unlink(trace_path);
    cupti_stop();
    __atomic_store_n(&slack_state, 3, __ATOMIC_RELEASE);
    slack_tls_busy--;
    errno = saved_errno;
    return;
  }
  if (!slack_cfg.quiet) fprintf(stderr, "slack: tracing to %s\n", trace_path);
  if (!cupti_ok) fprintf(stderr, "slack: %s\n", why);
  atexit(slack_atexit);
  __atomic_store_n(&slack_state, 2, __ATOMIC_RELEASE);
  slack_tls_busy--;
  errno = saved_errno;
}

void slack_flush(int final) {
  /* A vfork child (Python's subprocess execs through vfork) shares our memory and runs no
   * fork handlers: it must neither wait on our writer nor stop our trace. */
  if (getpid() != trace_pid) return;
  int st = __atomic_load_n(&slack_state, __ATOMIC_ACQUIRE);
  if (final) {
    /* only the first final flush does the work; later ones (destructor after atexit) return */
    int expect = 2;
    if (!__atomic_compare_exchange_n(&slack_state, &expect, 3, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED)) {
      if (expect != 3) return;
      /* stopped by a write failure: still close the file */
    }
  } else if (st != 2) {
    return;
  }
  slack_tls_busy++;
  cupti_flush(1);
  if (writer_flush(final, slack_cfg.exit_timeout_ms) && final)
    fprintf(stderr,
            "slack: the trace writer did not finish within %ld ms; %s may lack its last "
            "events\n",
            slack_cfg.exit_timeout_ms, trace_path);
  slack_tls_busy--;
}

/* The fork child starts with no tracing state: no writer thread exists here, the parent's rings
 * and buffers are not ours. If the child uses CUDA itself, it starts its own trace. */
static void on_fork_child(void) {
  ring_forget_all();
  cupti_forget_all();
  writer_forget();
  slack_tls_busy = 0;
  __atomic_store_n(&slack_state, slack_cfg.disable ? 3 : 0, __ATOMIC_RELEASE);
}

__attribute__((constructor)) static void slack_load(void) {
  config_read();
  if (slack_cfg.disable) __atomic_store_n(&slack_state, 3, __ATOMIC_RELEASE);
  pthread_atfork(NULL, NULL, on_fork_child);
}

__attribute__((destructor)) static void slack_unload(void) {
  if (__atomic_load_n(&slack_state, __ATOMIC_ACQUIRE) == 2) slack_flush(1);
}

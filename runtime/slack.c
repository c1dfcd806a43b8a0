/* Process life of the tracer: load, lazy start on the first CUDA activity, the per-call record,
 * flush before exec, bounded flush at exit, and a clean slate in fork children. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "cupti_client.h"
#include "format.h"
#include "hook.h"
#include "ring.h"
#include "window.h"
#include "writer.h"

#ifndef SLACK_VERSION
#define SLACK_VERSION "0.1.0"
#endif

static char trace_path[PATH_MAX];
#define trace_pid slack_trace_pid /* state.c */

/* Onto this thread's ring (a ring that cannot be had counts the event lost). */
static inline void push_event(const struct slack_event *ev) {
  struct ring *r = ring_self();
  if (__builtin_expect(r != NULL, 1))
    ring_push(r, ev);
  else
    __atomic_add_fetch(&slack_lost, 1, __ATOMIC_RELAXED);
}

#ifdef SLACK_PY_COST
/* A measuring build (make BUILD=build-pycost OPT="-O2 -DSLACK_PY_COST", scripts/gpu-callsites.sh):
 * the time of each Python walk (slack_py_key) in the hooks, the median and p90 said at exit. */
#define PY_COST_N (1u << 20)
static uint32_t py_cost[PY_COST_N];
static uint32_t py_cost_n;
static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}
__attribute__((destructor)) static void py_cost_say(void) {
  uint32_t n = __atomic_load_n(&py_cost_n, __ATOMIC_RELAXED);
  if (n > PY_COST_N) n = PY_COST_N;
  if (!n) return;
  qsort(py_cost, n, sizeof *py_cost, cmp_u32);
  fprintf(stderr, "slack pycost: walks=%u median_ns=%u p90_ns=%u max_ns=%u\n", n, py_cost[n / 2],
          py_cost[n * 9 / 10], py_cost[n - 1]);
}
static inline uint64_t py_key_timed(void) {
  uint64_t a = slack_now(), k = slack_py_key(), b = slack_now();
  uint32_t i = __atomic_fetch_add(&py_cost_n, 1, __ATOMIC_RELAXED);
  if (i < PY_COST_N) py_cost[i] = (uint32_t)(b - a);
  return k;
}
#define slack_py_key py_key_timed
#endif

/* A run of queries (slk_fn_is_query) the calling thread has made of one event or stream, each
 * answered "not ready", with no other recorded call since: a loop asking until the GPU is done.
 * It is held here, not pushed, query by query (a loop without a sleep asks a million times a
 * second, which no ring holds); the answer "done" ends it as one record from the first query's
 * start (SLK_HOST_POLLED, `bytes` the not-ready answers: the thread waited by polling), and any
 * other recorded call of the thread, or a query of another handle, pushes it as it stands
 * first. A run the thread leaves unfinished at its exit is lost: queries that waited for nothing.
 */
struct poll_run {
  uint64_t key, stream, t0, t1, site, py;
  uint32_t fn, n, flags;
};
static __thread struct poll_run poll_run __attribute__((tls_model("initial-exec")));

static void poll_push(struct poll_run *p, uint64_t t1, uint32_t result) {
  struct slack_event ev = {p->t0, t1,      p->stream,
                           p->n,  p->site, p->py,
                           p->fn, result,  p->flags | (p->n > 1 || !result ? SLK_HOST_POLLED : 0)};
  push_event(&ev);
  p->n = 0;
}

/* The query's record held or pushed (returns 1 when held: nothing more to record). key: the event
 * handle (passed in `bytes` by the event queries' wrappers), else the stream. */
static inline int poll_fold(uint32_t fn, uint64_t t0, uint64_t t1, uint64_t stream, uint64_t key,
                            uint32_t flags, uint32_t result, uint64_t site) {
  struct poll_run *p = &poll_run;
  if (p->n && (p->fn != fn || p->key != key)) poll_push(p, p->t1, SLK_NOT_READY);
  if (result == SLK_NOT_READY) {
    if (p->n) {
      p->t1 = t1;
      p->n++;
      return 1;
    }
    uint64_t py = 0;
    if (__builtin_expect(!__atomic_load_n(&slack_tail, __ATOMIC_RELAXED), 1)) {
      slack_stack_note(site);
      if (slack_cfg.stacks == SLACK_STACKS_ALL) py = slack_py_key();
    }
    *p = (struct poll_run){key, stream, t0, t1, site, py, fn, 1, flags};
    return 1;
  }
  if (p->n && !result) {
    p->flags |= flags;
    /* a wait: its Python frames where only waits carry them */
    if (!p->py && slack_cfg.stacks == SLACK_STACKS_SYNC &&
        !__atomic_load_n(&slack_tail, __ATOMIC_RELAXED))
      p->py = slack_py_key();
    poll_push(p, t1, 0);
    return 1;
  }
  if (p->n) poll_push(p, p->t1, SLK_NOT_READY);
  return 0;
}

/* A cudaMallocAsync shorter than this was served from the pool's memory (1-5 us on the H100, GPU
 * runs 179 and 180; one that maps memory again after a trim takes tens of us or more) */
#define POOL_HIT_NS 20000

void hook_end(uint32_t fn, uint64_t t0, uint64_t stream, uint64_t bytes, uint8_t copy_kind,
              uint32_t flags, uint32_t result, void *caller) {
  int saved = errno;
  if (cupti_gpu_records_live(t0)) flags |= SLK_HOST_CUPTI_ON; /* its work has records */
  uint64_t t1 = slack_now();
  int held = 0;
  if (__builtin_expect(slk_fn_is_query(fn), 0)) {
    held = poll_fold(fn, t0, t1, stream, bytes ? bytes : stream, flags, result,
                     (uint64_t)(uintptr_t)caller);
    bytes = 0;
  } else if (__builtin_expect(poll_run.n != 0, 0)) {
    poll_push(&poll_run, poll_run.t1, SLK_NOT_READY);
  }
  if (__builtin_expect(!held, 1)) {
    struct slack_event ev = {t0, t1, stream, bytes, (uint64_t)(uintptr_t)caller,
                             0,  fn, result, flags, copy_kind};
    /* in the tail the call's times only: no stacks, no Python frames (their cost would be
     * timed) */
    if (__builtin_expect(!__atomic_load_n(&slack_tail, __ATOMIC_RELAXED), 1)) {
      slack_stack_note(ev.site); /* before the push: the writer finds the stack with the event */
      /* (a stream-ordered pool's allocation served from its memory, every tensor's under
       * PyTorch's cudaMallocAsync backend: no Python frames, whose walk would cost more than
       * the call; one that mapped memory again keeps them) */
      int pool_hit = fn == SLK_FN_MALLOC_ASYNC && t1 - t0 < POOL_HIT_NS;
      if (!pool_hit && (slack_cfg.stacks == SLACK_STACKS_ALL ||
                        (slack_cfg.stacks == SLACK_STACKS_SYNC && (flags & SLK_HOST_SYNCHRONOUS))))
        ev.py = slack_py_key();
    }
    push_event(&ev);
    /* still marked busy: CUPTI's and the driver's calls made naming the stream are not
     * recorded */
    if (!result) slack_stream_note(fn, stream, t0);
  }
  slack_tls_busy = 0;
  if (__builtin_expect(__atomic_load_n(&slack_stop_at, __ATOMIC_RELAXED) != 0, 0) &&
      t1 >= __atomic_load_n(&slack_stop_at, __ATOMIC_RELAXED))
    slack_stop();
  errno = saved;
}

/* The end of a SLACK_DURATION_MS window, from the hook of the first call after it (an API exit:
 * where CUPTI may be detached safely): the exit probe (which detaches CUPTI), CUPTI detached if
 * it is not yet, the trace finished. Later calls pass straight through. Once.
 * With SLACK_TAIL_MS, and a probe that detached CUPTI (its PROBE record marks the instant), the
 * trace goes on for that long with host calls only, untraced but for the hooks: the analyzer
 * times the same program's calls without CUPTI there (docs/CLASSIFICATION.md, "The untraced
 * tail"). The first call after the tail finishes the trace. */
static int stopped; /* 0: tracing; 1: in the tail; 2: stopped (reset in a fork child) */

void slack_stop(void) {
  int expect = 1;
  if (__atomic_compare_exchange_n(&stopped, &expect, 2, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
    __atomic_store_n(&slack_stop_at, 0, __ATOMIC_RELAXED);
    slack_flush(1);
    return;
  }
  expect = 0;
  if (!__atomic_compare_exchange_n(&stopped, &expect, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
    return;
  __atomic_store_n(&slack_stop_at, 0, __ATOMIC_RELAXED);
  slack_probe_now();
  slack_tls_busy++;
  slack_detach_cupti();
  slack_tls_busy--;
  if (slack_cfg.tail_ms > 0 && slack_probe_detached()) {
    __atomic_store_n(&slack_tail, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&slack_stop_at, slack_now() + (uint64_t)slack_cfg.tail_ms * 1000000ull,
                     __ATOMIC_RELAXED);
    if (!slack_cfg.quiet)
      fprintf(stderr,
              "slack: tracing stopped after %ld ms (SLACK_DURATION_MS); host calls are timed "
              "%ld ms more without CUPTI (SLACK_TAIL_MS), then the trace is complete\n",
              slack_cfg.duration_ms, slack_cfg.tail_ms);
    return;
  }
  if (slack_cfg.tail_ms > 0 && !slack_cfg.quiet)
    fprintf(stderr,
            "slack: tracing stopped after %ld ms (SLACK_DURATION_MS); the trace is complete "
            "(no untraced tail: the exit probe did not detach CUPTI)\n",
            slack_cfg.duration_ms);
  else if (!slack_cfg.quiet)
    fprintf(stderr,
            "slack: tracing stopped after %ld ms (SLACK_DURATION_MS); the trace is complete\n",
            slack_cfg.duration_ms);
  __atomic_store_n(&stopped, 2, __ATOMIC_RELEASE);
  slack_flush(1);
}

void slack_marker(uint64_t t0, uint64_t t1, const char *name) {
  if (__atomic_load_n(&slack_state, __ATOMIC_ACQUIRE) != 2 || slack_tls_busy) return;
  int saved = errno;
  slack_tls_busy = 1;
  struct slack_event ev = {
      .t0 = t0, .t1 = t1, .site = (uint64_t)(uintptr_t)name, .fn = SLACK_EV_MARKER};
  push_event(&ev);
  slack_tls_busy = 0;
  errno = saved;
}

/* Another CUPTI client in the process (torch.profiler's Kineto, a tool) registered its activity
 * buffer callbacks: CUPTI hands it every record from now on. slack steps back rather than take
 * them back (the other client's results stay as they would be without slack), says so once,
 * marks the time in the trace (a TAKEN record: no GPU record after it) and goes on recording host
 * calls. Called from any thread, possibly inside a hooked call. */
void slack_cupti_taken(void) {
  int saved = errno;
  int was_recording = cupti_yield();
  static int said;
  int st = __atomic_load_n(&slack_state, __ATOMIC_ACQUIRE);
  if (was_recording && (st == 2 || st == SLACK_STATE_PAUSED)) { /* tracing, in a window or not */
    struct slack_event ev = {
        .t0 = slack_now_slow(), .fn = SLACK_EV_TAKEN, .flags = SLK_TAKEN_CALLBACKS};
    ev.t1 = ev.t0;
    int busy = slack_tls_busy;
    slack_tls_busy = 1;
    push_event(&ev);
    slack_tls_busy = busy;
    if (!__atomic_exchange_n(&said, 1, __ATOMIC_ACQ_REL))
      fprintf(stderr, "slack: another CUPTI client in this process (torch.profiler?) took CUPTI's "
                      "activity records; the trace has no GPU records from here on, host calls "
                      "go on\n");
  }
  errno = saved;
}

/* cupti_client.c (cupti_on_stuck): a CUPTI call of slack's made at t0 did not return in time
 * (CUPTI is wedged): a TAKEN event of how SLK_TAKEN_STUCK, while tracing. Any thread. */
static void slack_cupti_stuck(uint64_t t0) {
  int st = __atomic_load_n(&slack_state, __ATOMIC_ACQUIRE);
  if (st != 2 && st != SLACK_STATE_PAUSED && st != 3) return; /* 3: at exit, the writer still on */
  struct slack_event ev = {.t0 = t0, .t1 = t0, .fn = SLACK_EV_TAKEN, .flags = SLK_TAKEN_STUCK};
  int busy = slack_tls_busy;
  slack_tls_busy = 1;
  push_event(&ev);
  slack_tls_busy = busy;
}

int slack_nvtx_wanted(void) { return slack_cfg.nvtx && !slack_cfg.disable; }

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

/* <dir>/slack-<host>-<pid>.slk, or -N.slk for n > 0 (an exec'd program keeps its pid and must
 * not overwrite its predecessor's trace); a distributed rank (digits only) is in the name too:
 * slack-<host>-rank<R>-<pid>.slk. 0, or -1 with errno ENAMETOOLONG. */
static int trace_name(char *path, size_t cap, const char *host, int n) {
  const char *r = slack_cfg.rank;
  int digits = r[0] && strspn(r, "0123456789") == strlen(r);
  char tag[48] = "";
  if (digits) snprintf(tag, sizeof tag, "rank%s-", r);
  int w;
  if (n == 0)
    w = snprintf(path, cap, "%s/slack-%s-%s%d.slk", slack_cfg.output, host, tag, (int)getpid());
  else
    w = snprintf(path, cap, "%s/slack-%s-%s%d-%d.slk", slack_cfg.output, host, tag, (int)getpid(),
                 n);
  if (w < 0 || (size_t)w >= cap) {
    errno = ENAMETOOLONG;
    return -1;
  }
  return 0;
}

/* Creates the first free trace name (when the filesystem has no O_TMPFILE). */
static int create_trace(char *path, size_t cap, const char *host) {
  for (int n = 0; n < 1000; n++) {
    if (trace_name(path, cap, host, n)) return -1;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

/* Gives the unnamed file fd (O_TMPFILE, its header already written) the first free trace name.
 * A process killed before this leaves no file; after it, a file that opens (never an empty or
 * half-written header, which a reader refuses). */
static int link_trace(int fd, char *path, size_t cap, const char *host) {
  char self[64];
  snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
  for (int n = 0; n < 1000; n++) {
    if (trace_name(path, cap, host, n)) return -1;
    if (linkat(AT_FDCWD, self, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0) return 0;
    if (errno != EEXIST) return -1;
  }
  errno = EEXIST;
  return -1;
}

/* Past RLIMIT_FSIZE a write fails with EFBIG and the kernel sends SIGXFSZ to the writing thread,
 * whose default action ends the process. The writer thread blocks every signal, but the header
 * is written from the program's thread here: SIGXFSZ is held blocked around it, and one that our
 * write raised is taken back, so the program never dies of slack's file. */
static void xfsz_hold(sigset_t *old, int *was_pending) {
  sigset_t set, pending;
  sigemptyset(&set);
  sigaddset(&set, SIGXFSZ);
  pthread_sigmask(SIG_BLOCK, &set, old);
  *was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ);
}

static void xfsz_release(const sigset_t *old, int was_pending) {
  sigset_t set, pending;
  sigemptyset(&set);
  sigaddset(&set, SIGXFSZ);
  if (!was_pending && sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ)) {
    struct timespec zero = {0, 0};
    sigtimedwait(&set, NULL, &zero);
  }
  pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* 1 with why filled when the driver sees no GPU (cuInit fails, or no device): said plainly,
 * instead of whatever CUPTI would fail with on such a machine ("CUPTI refused system thread ids
 * (CUPTI_ERROR_UNKNOWN)"). 0 when there is a device, or when the driver cannot be asked (CUPTI
 * then says what it can). cuInit is idempotent: the program's own first call would make it. */
static int no_device(char *why, size_t len) {
  void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!h) h = dlopen("libcuda.so.1", RTLD_LAZY);
  if (!h) return 0; /* cudart may find it where we cannot (its RUNPATH): CUPTI will say */
  int (*init)(unsigned) = NULL, (*count)(int *) = NULL;
  *(void **)&init = slack_real_dlsym(h, "cuInit");
  *(void **)&count = slack_real_dlsym(h, "cuDeviceGetCount");
  if (!init || !count) return 0;
  int n = 0, r = init(0);
  if (r == 0 && count(&n) == 0 && n > 0) return 0;
  snprintf(why, len,
           "no CUDA device (cuInit returned %d%s, %d devices): no GPU records; recording host "
           "calls only",
           r, r == 100 ? ", CUDA_ERROR_NO_DEVICE" : "", n);
  return 1;
}

/* mkdir -p SLACK_OUTPUT (as `slack record -o` does): 0, or -1 with errno set. Directories made
 * here are the user's own (0700 under the umask): traces hold command lines and symbols. */
static int make_output_dir(const char *dir) {
  char buf[PATH_MAX];
  if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf) {
    errno = ENAMETOOLONG;
    return -1;
  }
  for (char *p = buf + 1;; p++) {
    if (*p != '/' && *p != '\0') continue;
    char c = *p;
    *p = '\0';
    if (mkdir(buf, 0700) != 0 && errno != EEXIST) return -1;
    *p = c;
    if (!c) break;
  }
  return 0;
}

/* Creates the trace file, writes its header and starts the writer. 0, or -1 with errno set and
 * no file left behind; *failed_op says what failed ("create" or "write"). The file is born
 * unnamed (O_TMPFILE) and linked under its name once the header is in it; where the filesystem
 * has no O_TMPFILE (or /proc is absent) it is created by name, then written. */
static int open_trace(const char *host, const char *header, const char **failed_op) {
  *failed_op = "create";
  int fd = -1;
  if (make_output_dir(slack_cfg.output)) return -1;
  if (access("/proc/self/fd", X_OK) == 0) {
    fd = open(slack_cfg.output, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
      return -1; /* the directory is the problem (ENOENT, ENOTDIR, EROFS, EACCES...) */
  }
  if (fd >= 0) {
    *failed_op = "write";
    writer_on_first_launch = slack_probe_arm;
    if (writer_start(fd, header)) {
      int e = errno;
      close(fd); /* unnamed: nothing remains */
      errno = e;
      return -1;
    }
    if (link_trace(fd, trace_path, sizeof trace_path, host) == 0) return 0;
    int e = errno;
    writer_flush(1, slack_cfg.exit_timeout_ms); /* the writer closes the file and ends */
    *failed_op = "create";
    errno = e;
    return -1;
  }
  fd = create_trace(trace_path, sizeof trace_path, host);
  if (fd < 0) return -1;
  *failed_op = "write";
  writer_on_first_launch = slack_probe_arm;
  if (writer_start(fd, header)) {
    int e = errno;
    close(fd);
    unlink(trace_path);
    errno = e;
    return -1;
  }
  return 0;
}

static void slack_atexit(void) {
  slack_probe_now();
  slack_flush(1);
}

static uint64_t load_ns; /* CLOCK_MONOTONIC at load: SLACK_DELAY_MS counts from here */

void slack_start(void) {
#ifdef SLACK_NOP
  return; /* the nop build (hook.h): interpose/dl.c's cuGetProcAddress path must not start it */
#endif
  /* SLACK_DELAY_MS: calls before it pass through unrecorded (the state stays 0, so the first
   * call after it starts tracing). CUPTI is attached at the first call all the same, with no kind
   * enabled: attached after cudart started, it would see no runtime API call (GPU run 18). */
  if (slack_cfg.delay_ms > 0 &&
      slack_clock_gettime_ns() - load_ns < (uint64_t)slack_cfg.delay_ms * 1000000ull) {
    if (slack_cfg.cupti) {
      int saved = errno;
      slack_tls_busy++;
      cupti_prepare();
      slack_tls_busy--;
      errno = saved;
    }
    return;
  }
  int expect = 0;
  if (!__atomic_compare_exchange_n(&slack_state, &expect, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
    return;
  int saved_errno = errno; /* called from hooks before the real call: leave errno as it was */
  slack_tls_busy++;        /* CUPTI's and our own calls below pass through every hook */
  trace_pid = getpid();
  slack_clock_init();
  ring_init(slack_cfg.ring_events);
  slack_stack_warm();
  slack_py_init(); /* before tracing starts: no call finds Python frames half looked at */

  char why[256] = "";
  uint32_t cupti_version = 0;
  int cupti_ok = 0;
  cupti_on_stuck = slack_cupti_stuck;
  if (!slack_cfg.cupti)
    snprintf(why, sizeof why, "SLACK_CUPTI=0: recording host calls only");
  else if (!(cupti_ok = cupti_start(why, sizeof why, &cupti_version) == 0))
    no_device(why, sizeof why); /* after CUPTI, never before: an early cuInit costs CUPTI its
                                   DEVICE records (GPU run 25) */

  char host[256] = "host";
  gethostname(host, sizeof host - 1);
  host[sizeof host - 1] = '\0';
  for (char *p = host; *p; p++)
    if (*p == '/' || *p == ' ' || (unsigned char)*p < 0x20) *p = '_';

  static char header[16384];
  char cmd[8192];
  read_cmdline(cmd, sizeof cmd);
  struct timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  uint64_t mono = slack_now();
  slack_start_ns = mono;
  int n =
      snprintf(header, sizeof header,
               "host=%s\npid=%d\nppid=%d\nrank=%s\nlocal_rank=%s\nworld_size=%s\njob_id=%s\n"
               "cmdline=%s\nslack_version=%s\n"
               "clock=CLOCK_MONOTONIC\nstart_monotonic_ns=%llu\nstart_realtime_ns=%llu\n"
               "cupti_version=%u\ngpu_records=%s\nstack_unwinder=%s\n",
               host, (int)getpid(), (int)getppid(), slack_cfg.rank, slack_cfg.local_rank,
               slack_cfg.world_size, slack_cfg.job_id, cmd, SLACK_VERSION, (unsigned long long)mono,
               (unsigned long long)rt.tv_sec * 1000000000ull + (unsigned long long)rt.tv_nsec,
               cupti_version, cupti_ok ? "on" : why, slack_stack_unwinder());
  if (n > 0 && (size_t)n < sizeof header)
    n += config_describe(header + n, sizeof header - (size_t)n);
  if (n > 0 && (size_t)n < sizeof header)
    config_describe_env(header + n, sizeof header - (size_t)n);

  sigset_t old_mask;
  int xfsz_was_pending;
  xfsz_hold(&old_mask, &xfsz_was_pending);
  const char *failed_op = "create";
  int rc = open_trace(host, header, &failed_op);
  int e = errno;
  xfsz_release(&old_mask, xfsz_was_pending);
  if (rc) {
    fprintf(stderr, "slack: cannot %s a trace in %s: %s; not tracing, the program continues\n",
            failed_op, slack_cfg.output, strerror(e));
    cupti_stop();
    __atomic_store_n(&slack_state, 3, __ATOMIC_RELEASE);
    slack_tls_busy--;
    errno = saved_errno;
    return;
  }
  if (!slack_cfg.quiet) fprintf(stderr, "slack: tracing to %s\n", trace_path);
  if (!cupti_ok) fprintf(stderr, "slack: %s\n", why);
  atexit(slack_atexit);
  if (slack_cfg.duration_ms > 0)
    __atomic_store_n(&slack_stop_at, slack_now() + (uint64_t)slack_cfg.duration_ms * 1000000ull,
                     __ATOMIC_RELAXED);
  if (config_windowed()) {
    /* production windows (window.c): recording starts paused unless a window is open now */
    __atomic_store_n(&slack_state, window_start(slack_now()), __ATOMIC_RELEASE);
    window_started();
  } else {
    __atomic_store_n(&slack_state, 2, __ATOMIC_RELEASE);
  }
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
                                     __ATOMIC_RELAXED) &&
        (expect != SLACK_STATE_PAUSED ||
         !__atomic_compare_exchange_n(&slack_state, &expect, 3, 0, __ATOMIC_ACQ_REL,
                                      __ATOMIC_RELAXED))) {
      if (expect != 3) return;
      /* stopped by a write failure: still close the file */
    }
  } else if (st != 2 && st != SLACK_STATE_PAUSED) {
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
  poll_run.n = 0; /* the parent's */
  slack_lost = 0;
  stopped = 0;
  slack_tail = 0;
  slack_stop_at = 0;
  slack_probe_forget();
  ring_forget_all();
  cupti_forget_all();
  slack_streams_forget();
  writer_forget();
  slack_py_forget();
  window_forget();
  slack_tls_busy = 0;
  __atomic_store_n(&slack_state, slack_cfg.disable ? 3 : 0, __ATOMIC_RELEASE);
}

/* Makes libslack the program's NVTX tool (interpose/nvtx.c): NVTX loads the library named by
 * NVTX_INJECTION64_PATH at the first NVTX call, which finds this one already loaded. Left alone
 * when another tool is named there (it keeps the ranges; the trace then has none). */
static void nvtx_claim(void) {
#ifndef SLACK_NOP
  if (slack_cfg.capture.kind == SLACK_CAPTURE_NVTX && !slack_cfg.disable &&
      (!slack_cfg.nvtx || getenv("NVTX_INJECTION64_PATH")))
    fprintf(stderr,
            "slack: SLACK_CAPTURE_RANGE=nvtx:%s needs libslack as the NVTX tool (%s); no window "
            "will open\n",
            slack_cfg.capture.nvtx,
            slack_cfg.nvtx ? "NVTX_INJECTION64_PATH names another tool" : "SLACK_NVTX=0");
  if (!slack_nvtx_wanted() || getenv("NVTX_INJECTION64_PATH")) return;
  Dl_info di;
  char path[PATH_MAX];
  if (!dladdr((void *)&slack_nvtx_wanted, &di) || !di.dli_fname) return;
  if (!realpath(di.dli_fname, path)) return; /* absolute: the program may chdir before NVTX */
  setenv("NVTX_INJECTION64_PATH", path, 0);
#endif
}

__attribute__((constructor)) static void slack_load(void) {
  load_ns = slack_clock_gettime_ns();
  config_read();
  if (slack_cfg.disable) __atomic_store_n(&slack_state, 3, __ATOMIC_RELEASE);
#ifndef SLACK_NOP
  if (!slack_cfg.disable) window_load();
#endif
  nvtx_claim();
  pthread_atfork(NULL, NULL, on_fork_child);
}

__attribute__((destructor)) static void slack_unload(void) {
  int st = __atomic_load_n(&slack_state, __ATOMIC_ACQUIRE);
  if (st == 2 || st == SLACK_STATE_PAUSED) slack_flush(1);
}

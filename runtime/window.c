/* Production windows (docs/ENVIRONMENT.md): with SLACK_WINDOW, SLACK_CAPTURE_RANGE,
 * SLACK_TRIGGER_FILE or SLACK_TRIGGER_SIGNAL set, tracing records inside windows only.
 *
 * A window is open while any of its sources wants it: the duty cycle (W of every P from the
 * start of tracing), a capture range (an NVTX range of the named message is open on some thread,
 * or cudaProfilerStart was called and cudaProfilerStop not yet), a trigger (SLACK_TRIGGER_MS from
 * the last touch of the trigger file or the last trigger signal). Between windows slack_state is
 * SLACK_STATE_PAUSED: every hook passes its call straight through after the one relaxed load of
 * slack_state it makes anyway (hook.h), and CUPTI's per-call records are disabled
 * (cupti_probe_records(0)). With SLACK_WINDOW_DETACH=1 (not the default yet) CUPTI is then detached
 * (cuptiFinalize) by the writer thread, once the GPU work of the window has come home or
 * DETACH_WAIT_NS has passed (writer.c park_cupti, below), and attached again by whichever thread
 * opens the next window (cupti_reattach: no runtime API records then; the driver API records of
 * the launches were to join the GPU work to the host calls, but on the H200 a re-attached CUPTI
 * 13 gives none, GPU run 38, so those windows' kernels stay unjoined). With
 * SLACK_WINDOW_DETACH=0, the default, CUPTI stays attached, its records disabled.
 *
 * The program's threads (NVTX, cudaProfilerStart/Stop) and the writer thread (duty cycle,
 * triggers) open and close windows; a transition takes a spin lock held for a few stores, never
 * across a call, and appends to a log the writer turns into WINDOW records (FORMAT.md). The
 * signal handler only sets a flag. */
#include "window.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "cupti_client.h"
#include "format.h"
#include "hook.h"

static int wlock;         /* the spin lock of the state below */
static int started;       /* window_start ran: transitions may change slack_state */
static uint64_t start_ns; /* tracing started: the duty cycle counts from here */
static int duty_on, profiler_on, capture_depth;
static uint64_t trigger_until; /* a trigger's window lasts until then */
static int is_open;
static uint32_t open_why; /* SLK_WINDOW_* sources that held the open window */

#define LOG 4096 /* transitions waiting for the writer; one that finds it full does not happen */
static struct window_ev wlog[LOG];
static uint64_t log_head, log_tail; /* writer reads [head, tail); producers append under wlock */

static void lock(void) {
  while (__atomic_exchange_n(&wlock, 1, __ATOMIC_ACQUIRE))
    while (__atomic_load_n(&wlock, __ATOMIC_RELAXED)) {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    }
}
static void unlock(void) { __atomic_store_n(&wlock, 0, __ATOMIC_RELEASE); }

static uint32_t wanted(uint64_t now) {
  return (duty_on ? SLK_WINDOW_DUTY : 0) | (capture_depth > 0 ? SLK_WINDOW_NVTX : 0) |
         (profiler_on ? SLK_WINDOW_PROFILER : 0) | (now < trigger_until ? SLK_WINDOW_TRIGGER : 0);
}

/* CUPTI's records follow the window: one applier at a time reads the latest state, so the last
 * one leaves CUPTI as the window is. */
static pthread_mutex_t cupti_mu = PTHREAD_MUTEX_INITIALIZER;
static int cupti_records = 1;
static int detach_wanted;     /* atomic, set under cupti_mu: records off, CUPTI to be detached */
static uint64_t detach_since; /* under cupti_mu: when the window closed */
static int reattach_said;

/* How long the writer waits for the GPU work of a closed window before it detaches CUPTI all
 * the same (records of work still running then come with unknown times, or not at all). */
#define DETACH_WAIT_NS 1000000000ull

static void apply_cupti(void) {
  if (!slack_cfg.cupti) return;
  int saved = errno;
  slack_tls_busy++; /* CUPTI's own CUDA calls are not the program's */
  pthread_mutex_lock(&cupti_mu);
  int want = __atomic_load_n(&slack_state, __ATOMIC_ACQUIRE) == 2;
  if (want && cupti_parked()) {
    char why[256] = "";
    int rc = cupti_reattach(why, sizeof why);
    if (rc == 0) cupti_records = 1;
    /* taken by another client (1): slack.c said so; a wedged CUPTI: cupti_client.c did */
    else if (rc < 0 && !cupti_wedged() && !reattach_said++)
      fprintf(stderr,
              "slack: CUPTI could not be attached again for a window (%s); the windows from "
              "here on hold host calls only\n",
              why);
  } else if (want != cupti_records && cupti_probe_records(want) == 0) {
    cupti_records = want;
  }
  int detach = !want && !cupti_records && slack_cfg.window_detach && cupti_kernel_records_on();
  if (detach && !__atomic_load_n(&detach_wanted, __ATOMIC_RELAXED)) detach_since = slack_now();
  __atomic_store_n(&detach_wanted, detach, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&cupti_mu);
  slack_tls_busy--;
  errno = saved;
}

int window_detach_wanted(void) { return __atomic_load_n(&detach_wanted, __ATOMIC_ACQUIRE); }

int window_detach_overdue(uint64_t now) {
  pthread_mutex_lock(&cupti_mu);
  int due = detach_wanted && now - detach_since >= DETACH_WAIT_NS;
  pthread_mutex_unlock(&cupti_mu);
  return due;
}

int window_detach_begin(void) {
  pthread_mutex_lock(&cupti_mu);
  if (__atomic_load_n(&detach_wanted, __ATOMIC_RELAXED) &&
      __atomic_load_n(&slack_state, __ATOMIC_ACQUIRE) == SLACK_STATE_PAUSED && !cupti_records)
    return 1;
  pthread_mutex_unlock(&cupti_mu);
  return 0;
}

void window_detach_end(void) {
  __atomic_store_n(&detach_wanted, 0, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&cupti_mu);
}

/* Under the lock: opens or closes the window as the sources want. 1 when it changed. */
static int update(uint64_t now) {
  uint32_t why = wanted(now);
  if (!started) return 0;
  if (why && !is_open) {
    int expect = SLACK_STATE_PAUSED;
    if (log_tail - __atomic_load_n(&log_head, __ATOMIC_ACQUIRE) >= LOG) return 0;
    if (!__atomic_compare_exchange_n(&slack_state, &expect, 2, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED))
      return 0; /* stopped (exit, a write failure, the size cap) */
    is_open = 1;
    open_why = why;
    wlog[log_tail % LOG] = (struct window_ev){now, why, 1};
    __atomic_store_n(&log_tail, log_tail + 1, __ATOMIC_RELEASE);
    return 1;
  }
  if (is_open) open_why |= why;
  if (!why && is_open) {
    int expect = 2;
    if (log_tail - __atomic_load_n(&log_head, __ATOMIC_ACQUIRE) >= LOG) return 0;
    if (!__atomic_compare_exchange_n(&slack_state, &expect, SLACK_STATE_PAUSED, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED))
      return 0;
    is_open = 0;
    wlog[log_tail % LOG] = (struct window_ev){now, open_why, 0};
    __atomic_store_n(&log_tail, log_tail + 1, __ATOMIC_RELEASE);
    return 1;
  }
  return 0;
}

static void change(void (*what)(void *), void *arg) {
  uint64_t now = slack_now();
  lock();
  what(arg);
  int changed = update(now);
  unlock();
  if (changed) apply_cupti();
}

static void capture_delta(void *arg) { capture_depth += *(int *)arg; }
static void profiler_set(void *arg) { profiler_on = *(int *)arg; }

void slack_window_capture(int delta) {
  if (slack_cfg.capture.kind == SLACK_CAPTURE_NVTX) change(capture_delta, &delta);
}

void slack_window_profiler(int on) {
  if (slack_cfg.capture.kind == SLACK_CAPTURE_PROFILER) change(profiler_set, &on);
}

const char *slack_window_nvtx_name(void) {
  return slack_cfg.capture.kind == SLACK_CAPTURE_NVTX ? slack_cfg.capture.nvtx : NULL;
}

/* ---- triggers: the writer looks at them every poll ---- */

/* set by the handler (on whichever thread the signal lands), taken by the writer: atomics, not
 * volatile (another thread reads it), and an exchange, so that a signal between the look and
 * the clear is not lost */
static int sig_pending;
static struct timespec file_mtime;
static int file_seen;
static uint64_t last_file_check, last_sig_check;
static int sig_lost_said;
static int sig_ok; /* the trigger signal's handler is ours (window_load installed it) */

static void on_trigger_signal(int sig) {
  (void)sig;
  __atomic_store_n(&sig_pending, 1, __ATOMIC_RELEASE);
}

/* The trigger signal's handler, from the constructor: only where the program (or whoever
 * started it: nohup ignores SIGHUP) has not already said what the signal does. */
void window_load(void) {
  int sig = slack_cfg.trigger_signal;
  if (!sig) return;
  struct sigaction old, sa;
  if (sigaction(sig, NULL, &old) == 0 && old.sa_handler != SIG_DFL) {
    fprintf(stderr,
            "slack: SLACK_TRIGGER_SIGNAL=%d is %s in this process; left alone: no window opens "
            "on it\n",
            sig, old.sa_handler == SIG_IGN ? "ignored" : "handled");
    return;
  }
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_trigger_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sig_ok = sigaction(sig, &sa, NULL) == 0;
}

static int file_stamp(struct timespec *t) {
  struct stat st;
  if (stat(slack_cfg.trigger_file, &st)) return 0;
  *t = st.st_mtim;
  return 1;
}

static void duty_set(void *arg) { duty_on = *(int *)arg; }
static void trigger_set(void *arg) { trigger_until = *(uint64_t *)arg; }
static void trigger_expire(void *arg) {
  if (*(uint64_t *)arg >= trigger_until) trigger_until = 0;
}

/* Said once at start: a trigger file whose directory is missing cannot appear (until someone
 * makes the directory). */
static void check_trigger_dir(void) {
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", slack_cfg.trigger_file);
  char *slash = strrchr(dir, '/');
  if (!slash) return;
  if (slash == dir)
    slash[1] = '\0';
  else
    *slash = '\0';
  struct stat st;
  if (stat(dir, &st) || !S_ISDIR(st.st_mode))
    fprintf(stderr,
            "slack: SLACK_TRIGGER_FILE=%s: %s is not a directory (yet); no window opens until "
            "the file appears\n",
            slack_cfg.trigger_file, dir);
}

int window_start(uint64_t now) {
  if (slack_cfg.trigger_file[0]) {
    file_seen = file_stamp(&file_mtime);
    check_trigger_dir();
  }
  lock();
  start_ns = now;
  duty_on = slack_cfg.window.p_ms > 0;
  __atomic_store_n(&started, 1, __ATOMIC_RELEASE); /* after start_ns: window_poll reads it */
  uint32_t why = wanted(now);
  if (why) {
    is_open = 1;
    open_why = why;
    wlog[log_tail % LOG] = (struct window_ev){now, why, 1};
    __atomic_store_n(&log_tail, log_tail + 1, __ATOMIC_RELEASE);
  }
  unlock();
  return why ? 2 : SLACK_STATE_PAUSED;
}

/* From slack_start once the state is set: CUPTI's records as the first window wants them. */
void window_started(void) { apply_cupti(); }

void window_poll(uint64_t now) {
  if (!__atomic_load_n(&started, __ATOMIC_ACQUIRE)) return;
  if (slack_cfg.window.p_ms > 0) {
    uint64_t p = (uint64_t)slack_cfg.window.p_ms * 1000000ull;
    int on = (now - start_ns) % p < (uint64_t)slack_cfg.window.w_ms * 1000000ull;
    if (on != __atomic_load_n(&duty_on, __ATOMIC_RELAXED)) change(duty_set, &on);
  }
  uint64_t until = now + (uint64_t)slack_cfg.trigger_ms * 1000000ull;
  if (slack_cfg.trigger_file[0] && now - last_file_check >= 100000000ull) {
    last_file_check = now;
    struct timespec t;
    int seen = file_stamp(&t);
    if (seen && (!file_seen || t.tv_sec != file_mtime.tv_sec || t.tv_nsec != file_mtime.tv_nsec))
      change(trigger_set, &until);
    file_seen = seen;
    if (seen) file_mtime = t;
  }
  if (sig_ok) {
    if (__atomic_exchange_n(&sig_pending, 0, __ATOMIC_ACQ_REL)) change(trigger_set, &until);
    if (now - last_sig_check >= 1000000000ull && !sig_lost_said) {
      last_sig_check = now;
      struct sigaction cur;
      if (sigaction(slack_cfg.trigger_signal, NULL, &cur) == 0 &&
          cur.sa_handler != on_trigger_signal) {
        sig_lost_said = 1;
        fprintf(stderr,
                "slack: the program took over signal %d; SLACK_TRIGGER_SIGNAL no longer opens "
                "windows\n",
                slack_cfg.trigger_signal);
      }
    }
  }
  /* a trigger's window ends by time alone */
  if (__atomic_load_n(&trigger_until, __ATOMIC_RELAXED) &&
      now >= __atomic_load_n(&trigger_until, __ATOMIC_RELAXED))
    change(trigger_expire, &now);
}

int window_take(struct window_ev *ev) {
  uint64_t h = __atomic_load_n(&log_head, __ATOMIC_RELAXED);
  if (h == __atomic_load_n(&log_tail, __ATOMIC_ACQUIRE)) return 0;
  *ev = wlog[h % LOG];
  __atomic_store_n(&log_head, h + 1, __ATOMIC_RELEASE);
  return 1;
}

void window_forget(void) {
  wlock = 0;
  started = 0;
  duty_on = profiler_on = capture_depth = 0;
  trigger_until = 0;
  is_open = 0;
  open_why = 0;
  log_head = log_tail = 0;
  cupti_records = 1;
  detach_wanted = 0;
  detach_since = 0;
  reattach_said = 0;
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  cupti_mu = m;
  __atomic_store_n(&sig_pending, 0, __ATOMIC_RELAXED); /* the handler stays: a fork child keeps
                                                          the parent's dispositions */
}

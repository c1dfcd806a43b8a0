/* The tracer's shared state (hook.h): what the wrappers, the writer, the probe and the windows
 * read and the process life (slack.c) sets. Defined here, below all of them, so that none of
 * them calls up into slack.c. */
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "hook.h"
#include "ring.h"

__thread int slack_tls_busy __attribute__((tls_model("initial-exec")));
int slack_state;
pid_t slack_trace_pid;
uint64_t slack_lost;
uint64_t slack_stop_at;
int slack_tail;
uint64_t slack_start_ns;

int slack_probe_ours(void) { return getpid() == slack_trace_pid; }

void slack_push_event(const struct slack_event *ev) {
  struct ring *r = ring_self();
  if (__builtin_expect(r != NULL, 1))
    ring_push(r, ev);
  else
    __atomic_add_fetch(&slack_lost, 1, __ATOMIC_RELAXED);
}

int slack_spawn_detached(void *(*fn)(void *), void *arg) {
  pthread_attr_t at;
  pthread_t t;
  sigset_t all, old;
  sigfillset(&all);
  int made = 0;
  if (pthread_attr_init(&at) == 0) {
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    made = pthread_create(&t, &at, fn, arg) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&at);
  }
  return made ? 0 : -1;
}

int slack_try_push_event(const struct slack_event *ev) {
  struct ring *r = ring_self();
  return r != NULL && ring_try_push(r, ev);
}

void *slack_launch_hook;

/* the exit probe's window (probe.c sets it): the writer drops the probe's own calls */
struct slack_probe_window slack_probe_win;

int slack_probe_owns(uint64_t tid, uint64_t start) {
  uint64_t t0 = __atomic_load_n(&slack_probe_win.t0, __ATOMIC_ACQUIRE);
  return t0 && tid == slack_probe_win.tid && start >= t0 &&
         start <= __atomic_load_n(&slack_probe_win.t1, __ATOMIC_ACQUIRE);
}

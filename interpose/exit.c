/* _exit: a process that leaves by _exit runs no atexit handler and no destructor, so whatever
 * slack had recorded and not yet written (up to SLACK_FLUSH_MS of events, and the file's last
 * chunk) would be lost. Python's os._exit is one: multiprocessing's fork children end with it,
 * and training scripts call it to skip a teardown that hangs. Each hook first writes the trace
 * out, as exit does (bounded: CUPTI's flush and the writer each wait SLACK_EXIT_TIMEOUT_MS at
 * most), then calls the real one. No exit probe (runtime/probe.c) runs here: it launches work on
 * the GPU, which a process leaving this way may be escaping; the report then takes CUPTI's cost
 * per launch as assumed.
 *
 * It does not when this thread is inside slack or inside a hooked call (slack_tls_busy): _exit is
 * async-signal-safe and a signal handler may call it, on a thread that a signal stopped while it
 * held a lock the flush takes. A process that is not tracing (a fork child that never called CUDA,
 * a vfork child: slack_flush checks the pid), or that exit() already flushed, passes straight on.
 * glibc's exit() reaches _exit inside libc, not through these. */
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose.h"

#define LIBC "libc.so.6"

typedef void (*exit_fn)(int);

static void *real_exit_p, *real_Exit_p;

static void flush_before_exit(void) {
  int st = __atomic_load_n(&slack_state, __ATOMIC_ACQUIRE);
  if ((st != 2 && st != SLACK_STATE_PAUSED) || slack_tls_busy) return;
  slack_flush(1);
}

/* The real function; were it missing (not with glibc), the exit system call itself. */
static __attribute__((noreturn)) void leave(void **slot, const char *name, int status) {
  exit_fn real = (exit_fn)slack_resolve(slot, name, LIBC);
  if (real != NULL) real(status);
  for (;;)
    syscall(SYS_exit_group, status);
}

/* resolved at load: a signal handler's _exit must not be the first to ask the dynamic linker */
__attribute__((constructor)) static void resolve_exits(void) {
  (void)slack_resolve(&real_exit_p, "_exit", LIBC);
  (void)slack_resolve(&real_Exit_p, "_Exit", LIBC);
}

SLACK_EXPORT void _exit(int status) {
  flush_before_exit();
  leave(&real_exit_p, "_exit", status);
}

SLACK_EXPORT void _Exit(int status) {
  flush_before_exit();
  leave(&real_Exit_p, "_Exit", status);
}

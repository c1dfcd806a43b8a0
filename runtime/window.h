/* Production windows (runtime/window.c, docs/ENVIRONMENT.md): tracing records inside windows
 * only; between them slack_state is SLACK_STATE_PAUSED and every hook passes its call through. */
#ifndef SLACK_WINDOW_H
#define SLACK_WINDOW_H

#include <stdint.h>

#define SLACK_WINDOW_HIDDEN __attribute__((visibility("hidden")))

/* A window opened (open 1) or closed at t; why: the SLK_WINDOW_* sources that held it. */
struct window_ev {
  uint64_t t;
  uint32_t why;
  int open;
};

/* The constructor: installs the trigger signal's handler (SLACK_TRIGGER_SIGNAL). */
void window_load(void) SLACK_WINDOW_HIDDEN;
/* slack_start: the state tracing starts in (2 in a window, SLACK_STATE_PAUSED between), then,
 * once it is set, window_started makes CUPTI's records follow it. */
int window_start(uint64_t now) SLACK_WINDOW_HIDDEN;
void window_started(void) SLACK_WINDOW_HIDDEN;
/* The writer, every poll: the duty cycle, the trigger file and signal. */
void window_poll(uint64_t now) SLACK_WINDOW_HIDDEN;
/* The writer: the next transition, oldest first; 0 when none is waiting. */
int window_take(struct window_ev *ev) SLACK_WINDOW_HIDDEN;
/* In a fork child. */
void window_forget(void) SLACK_WINDOW_HIDDEN;

/* SLACK_WINDOW_DETACH, for the writer (writer.c park_cupti): 1 while a closed window's CUPTI is
 * to be detached; overdue once it has waited long enough for the window's GPU work. The writer
 * detaches between window_detach_begin (1: still wanted, held so that no window opens meanwhile)
 * and window_detach_end. */
int window_detach_wanted(void) SLACK_WINDOW_HIDDEN;
int window_detach_overdue(uint64_t now) SLACK_WINDOW_HIDDEN;
int window_detach_begin(void) SLACK_WINDOW_HIDDEN;
void window_detach_end(void) SLACK_WINDOW_HIDDEN;

/* interpose/nvtx.c: a range named slack_window_nvtx_name() (NULL: no such capture range) began
 * (+1) or ended (-1); interpose/cudart.c: cudaProfilerStart (1) or cudaProfilerStop (0). */
void slack_window_capture(int delta) SLACK_WINDOW_HIDDEN;
void slack_window_profiler(int on) SLACK_WINDOW_HIDDEN;
const char *slack_window_nvtx_name(void) SLACK_WINDOW_HIDDEN;

#endif

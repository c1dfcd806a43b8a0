/* The writer thread: drains the thread rings and CUPTI's completed buffers, encodes records,
 * writes chunks. The only code that touches the trace file. */
#ifndef SLACK_WRITER_H
#define SLACK_WRITER_H

#include <stdint.h>

#define WRITER_HIDDEN __attribute__((visibility("hidden")))

/* Starts the thread on an open trace file (fd is owned by the writer from here on). 0, or -1
 * with errno set. */
int writer_start(int fd, const char *header_body) WRITER_HIDDEN;
/* Called once on the writer thread when it first sees a launch (slack.c arms the exit probe
 * there); NULL: nothing. */
extern void (*writer_on_first_launch)(void) WRITER_HIDDEN;
/* Asks the writer to write everything recorded so far and waits for it, at most timeout_ms.
 * final: the writer then closes the file and its thread ends. 0 when done in time, -1 if not. */
int writer_flush(int final, long timeout_ms) WRITER_HIDDEN;
/* In a fork child: forget the parent's writer (no thread here; never write the parent's file). */
void writer_forget(void) WRITER_HIDDEN;
/* Bytes written and records written so far (for the exit line). */
uint64_t writer_bytes(void) WRITER_HIDDEN;

#endif

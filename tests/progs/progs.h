/* Shared by the end-to-end test programs: each program writes what it did, one JSON object per
 * line, to the file named by PROG_REPORT (never to stdout, which the test compares between the
 * untraced and the traced run). tests/e2e/check_trace.py reads it:
 *
 *   {"call":"cudaMemcpyAsync","seq":N,"tid":T,"stream":S,"bytes":B}   a call the program made
 *   {"gpu":"kernel","seq":N,"name":"..."}             GPU work that call N put on the GPU
 *   {"gpu":"memcpy","seq":N,"copy":"HTOD","bytes":B}  (copy: HTOD DTOH DTOD HTOH)
 *   {"gpu":"memset","seq":N,"bytes":B}
 *   {"sync":"STREAM_SYNCHRONIZE","seq":N}             a CUPTI synchronization record call N makes
 *   {"summary":...}                                   totals, last line
 *
 * Every call is checked: a failing CUDA call ends the program with exit status 1.
 */
#ifndef SLACK_TEST_PROGS_H
#define SLACK_TEST_PROGS_H

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static FILE *report_file;
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned report_seq;
static unsigned long long n_calls, n_kernels, n_memcpys, n_memsets, n_syncs, copy_bytes;

static inline unsigned long long tid_now(void) { return (unsigned long long)syscall(SYS_gettid); }

static inline void report_open(void) {
  const char *p = getenv("PROG_REPORT");
  if (p && *p && !(report_file = fopen(p, "w"))) {
    fprintf(stderr, "cannot write %s\n", p);
    exit(2);
  }
}

static inline void report_line(const char *fmt, ...) {
  if (!report_file) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(report_file, fmt, ap);
  va_end(ap);
  fputc('\n', report_file);
}

/* A call made: returns its sequence number (for the GPU work and sync records it causes). */
static inline unsigned report_call(const char *fn, const void *stream, unsigned long long bytes) {
  pthread_mutex_lock(&report_lock);
  unsigned seq = ++report_seq;
  n_calls++;
  report_line("{\"call\":\"%s\",\"seq\":%u,\"tid\":%llu,\"stream\":%llu,\"bytes\":%llu}", fn, seq,
              tid_now(), (unsigned long long)(uintptr_t)stream, bytes);
  pthread_mutex_unlock(&report_lock);
  return seq;
}

static inline void report_kernel(unsigned seq, const char *name) {
  pthread_mutex_lock(&report_lock);
  n_kernels++;
  report_line("{\"gpu\":\"kernel\",\"seq\":%u,\"name\":\"%s\"}", seq, name);
  pthread_mutex_unlock(&report_lock);
}

static inline void report_memcpy(unsigned seq, const char *copy, unsigned long long bytes) {
  pthread_mutex_lock(&report_lock);
  n_memcpys++;
  copy_bytes += bytes;
  report_line("{\"gpu\":\"memcpy\",\"seq\":%u,\"copy\":\"%s\",\"bytes\":%llu}", seq, copy, bytes);
  pthread_mutex_unlock(&report_lock);
}

static inline void report_memset(unsigned seq, unsigned long long bytes) {
  pthread_mutex_lock(&report_lock);
  n_memsets++;
  report_line("{\"gpu\":\"memset\",\"seq\":%u,\"bytes\":%llu}", seq, bytes);
  pthread_mutex_unlock(&report_lock);
}

static inline void report_sync(unsigned seq, const char *type) {
  pthread_mutex_lock(&report_lock);
  n_syncs++;
  report_line("{\"sync\":\"%s\",\"seq\":%u}", type, seq);
  pthread_mutex_unlock(&report_lock);
}

static inline void report_close(void) {
  if (!report_file) return;
  report_line("{\"summary\":{\"calls\":%llu,\"kernels\":%llu,\"memcpys\":%llu,\"memsets\":%llu,"
              "\"sync_records\":%llu,\"copy_bytes\":%llu}}",
              n_calls, n_kernels, n_memcpys, n_memsets, n_syncs, copy_bytes);
  fclose(report_file);
  report_file = NULL;
}

#define DIE(...)                                                                                   \
  do {                                                                                             \
    fprintf(stderr, __VA_ARGS__);                                                                  \
    fputc('\n', stderr);                                                                           \
    exit(1);                                                                                       \
  } while (0)

#endif

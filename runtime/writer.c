/* The writer thread (the trace file, the windows, the drains and the loop; its other parts are
 * writer_names.c, writer_join.c and writer_cupti.c: writer_int.h). Locks: w_lock guards the request
 * flags and generation counters below and nothing else; it is never held while encoding or writing.
 * The trace file and all encoder state belong to the writer thread alone. */
#include "writer.h"

#include <cupti.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "cupti_client.h"
#include "format.h"
#include "hook.h"
#include "ring.h"
#include "window.h"
#include "writer_int.h"

static pthread_mutex_t w_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t w_wake; /* writer waits here for work (CLOCK_MONOTONIC) */
static pthread_cond_t w_done; /* flushers wait here for done_gen to pass their request */
static int wake_pending;
static uint64_t flush_gen, done_gen;
static int final_req, finished;

static struct slk_file *file;
static int file_fd = -1;
int wr_failed; /* a file write failed, or the size cap: records are discarded */
static uint64_t last_chunk_ns;
static uint64_t bytes_written;

static void wake_writer(void) {
  pthread_mutex_lock(&w_lock);
  wake_pending = 1;
  pthread_cond_signal(&w_wake);
  pthread_mutex_unlock(&w_lock);
}

static void stop_writing(const char *why, int err) {
  if (wr_failed) return;
  wr_failed = 1;
  if (err)
    fprintf(stderr, "slack: %s: %s; tracing stopped, the program continues\n", why, strerror(err));
  else
    fprintf(stderr, "slack: %s; tracing stopped, the program continues\n", why);
  __atomic_store_n(&slack_state, 3, __ATOMIC_RELEASE);
  cupti_stop();
}

/* The production window open now (window.c), as the writer has seen it: its WINDOW record
 * with the SLK_WINDOW_OPEN flag is written, the closing one not yet. */
static int win_open;
static uint64_t win_t0;
static uint32_t win_why;

static void close_window(uint64_t t);

uint32_t wr_intern(const char *s) {
  if (wr_failed || !s) return 0;
  return slk_file_intern(file, s, strlen(s));
}

void wr_add(const struct slk_record *r) {
  if (wr_failed) return;
  if (slk_file_add(file, r)) {
    stop_writing("cannot write the trace", errno);
    return;
  }
  uint64_t b = slk_file_bytes(file);
  if (b != __atomic_load_n(&bytes_written, __ATOMIC_RELAXED)) /* a chunk went out: progress */
    __atomic_store_n(&bytes_written, b, __ATOMIC_RELAXED);
  if (slack_cfg.max_mb && b > (uint64_t)slack_cfg.max_mb << 20) {
    /* the window open now ends here: its record is the last one (this add stops writing; the
     * chunk that holds it goes out when the file is closed, slk_file_close) */
    if (win_open) close_window(r->end > r->start ? r->end : r->start);
    stop_writing("trace reached SLACK_MAX_MB", 0);
  }
}

static void close_window(uint64_t t) {
  if (!win_open) return;
  win_open = 0;
  struct slk_record w = {
      .kind = SLK_WINDOW, .start = win_t0, .end = t > win_t0 ? t : win_t0, .fn = win_why};
  wr_add(&w);
}

/* The windows opened and closed since the last look (window.c), as WINDOW records. */
static void write_windows(void) {
  struct window_ev ev;
  while (window_take(&ev)) {
    if (ev.open) {
      close_window(ev.t); /* cannot happen: opens and closes alternate */
      win_open = 1;
      win_t0 = ev.t;
      win_why = ev.why;
      struct slk_record w = {
          .kind = SLK_WINDOW, .start = ev.t, .end = ev.t, .fn = ev.why, .flags = SLK_WINDOW_OPEN};
      wr_add(&w);
    } else {
      win_why |= ev.why;
      close_window(ev.t);
    }
  }
}

void wr_drop_record(uint64_t tid, uint64_t n, uint32_t where) {
  struct slk_record d = {.kind = SLK_DROPS, .tid = tid, .count = n, .flags = where};
  wr_add(&d);
}

/* A launch: the program has a context, and cudart (if any) its teardown registered. */
static int fn_launches(uint32_t fn) { return slk_fn_cat(fn) == SLK_FNC_LAUNCH; }

static void drain_cupti(void) {
  struct cupti_buf *b = cupti_take();
  while (b) {
    struct cupti_buf *next = b->next;
    void *rec = NULL;
    while (cupti_next(b, &rec))
      wr_encode_cupti(rec);
    wr_sync_flush();
    if (b->lost) wr_drop_record(0, b->lost, SLK_DROP_CUPTI);
    cupti_buf_free(b);
    b = next;
  }
}

static int probe_armed;
static uint64_t pace_launches; /* launches drained (SLACK_PACE_PROBE's steadiness) */

static void drain_ring(struct ring *r) {
  int state = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE); /* before head: see the last push */
  uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
  uint64_t tail = r->tail;
  if (head != tail && !__atomic_load_n(&r->named, __ATOMIC_ACQUIRE)) {
    struct slk_record t = {.kind = SLK_THREAD, .tid = (uint64_t)r->tid};
    t.name = wr_intern(r->name);
    wr_add(&t);
    __atomic_store_n(&r->named, 1, __ATOMIC_RELEASE);
  }
  for (; tail != head; tail++) {
    const struct slack_event *e = &r->ev[tail & r->mask];
    if (e->fn == SLACK_EV_MARKER) {
      wr_encode_marker((uint64_t)r->tid, e);
    } else if (e->fn == SLACK_EV_PROBE) {
      wr_encode_probe((uint64_t)r->tid, e);
    } else if (e->fn == SLACK_EV_TAKEN) {
      struct slk_record k = {
          .kind = SLK_TAKEN, .tid = (uint64_t)r->tid, .start = e->t0, .flags = e->flags};
      wr_add(&k);
    } else if (slack_probe_owns((uint64_t)r->tid, e->t0)) {
      /* the exit probe's launches through slack's hook (probe.c) and their stream map record */
    } else if (e->fn == SLACK_EV_STREAM) { /* streams.c: needs no join */
      struct slk_record m = {.kind = SLK_STREAM,
                             .tid = (uint64_t)r->tid,
                             .start = e->t0,
                             .stream = e->stream,
                             .device = e->result,
                             .count = e->bytes};
      wr_add(&m);
    } else {
      if (fn_launches(e->fn)) pace_launches++;
      if (!probe_armed && fn_launches(e->fn)) {
        probe_armed = 1;
        if (writer_on_first_launch) writer_on_first_launch();
      }
      wr_pend_push((uint64_t)r->tid, e);
    }
  }
  __atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
  uint64_t drops = __atomic_load_n(&r->drops, __ATOMIC_RELAXED);
  if (drops != r->drops_reported) {
    wr_drop_record((uint64_t)r->tid, drops - r->drops_reported, SLK_DROP_RING);
    r->drops_reported = drops;
  }
  if (state == RING_DEAD) __atomic_store_n(&r->state, RING_FREE, __ATOMIC_RELEASE);
}

/* Rings first, then CUPTI: an API record's host call must be pending when the record comes. */
static uint64_t lost_reported;

static void drain_all(void) {
  uint64_t lost = __atomic_load_n(&slack_lost, __ATOMIC_RELAXED);
  if (lost != lost_reported) {
    wr_drop_record(0, lost - lost_reported, SLK_DROP_RING);
    lost_reported = lost;
  }
  for (struct ring *r = __atomic_load_n(&ring_list, __ATOMIC_ACQUIRE); r; r = r->next)
    drain_ring(r);
  drain_cupti();
}

/* SLACK_WINDOW_DETACH: a window closed (window.c turned CUPTI's records off): CUPTI is detached
 * once the window's GPU work has come home (a flush without force each poll until then, at most
 * DETACH_WAIT_NS): every host call of the window that submitted work has met its API record, and
 * the GPU record of each has come (writer_cupti.c), so that a kernel launched in the window and
 * still running when it closed keeps its record. Every buffer is then taken and decoded here,
 * before cuptiFinalize (the records are read with CUPTI's own cuptiActivityGetNextRecord). Never on
 * the program's threads. */
static void park_cupti(uint64_t now) {
  if (!window_detach_wanted() || wr_failed) return;
  cupti_flush(0); /* the window's API records, and the GPU records of the work that has ended */
  drain_all();
  if (wr_gpu_outstanding() && !window_detach_overdue(now)) return;
  cupti_flush(1);
  drain_all();
  if (!window_detach_begin()) return; /* a window opened meanwhile */
  cupti_flush(1);                     /* what came since: little or nothing */
  drain_all();
  cupti_park();
  wr_gpu_forget();
  window_detach_end();
}

/* SLACK_PACE_PROBE=LEN/AT (docs/ENVIRONMENT.md): in a trace of the whole process (no window, no
 * SLACK_DURATION_MS), once AT has passed since tracing started and the program's launches have
 * come at a steady rate (pace_steady), CUPTI's records go off; once the GPU work
 * recorded so far has come home (as park_cupti waits, at most DETACH_WAIT_NS) CUPTI is detached and
 * the hooks time the program's calls without it (slack_tail: times only) for LEN; then CUPTI is
 * attached again (its runtime API records do not come back on CUDA 13: the analyzer joins the
 * later GPU work to its calls by each stream's order). The analyzer times the same program's
 * calls traced and untraced there (the untraced tail's pace, mid-run). Three WINDOW records say
 * where (format.h SLK_WINDOW_PACE). Never on the program's threads. */
#define PACE_WAIT_NS 1000000000ull /* window.c's DETACH_WAIT_NS */
static int pace_phase;             /* 0 before, 1 records off, 2 detached, 3 done */
static uint64_t pace_off, pace_t1;
/* Steady: over the last 3 windows of B seconds (B 1, 2, 4 or 8: a loop of long steps has few of
 * them a second, and a second's count then moves by a whole step), each window's launches
 * PACE_MIN_RATE a second or more, the most at most PACE_SPREAD times the fewest: the program is
 * in its loop, not in its set-up (a model built on the GPU launches little, then the loop a
 * great deal: holdout_wide's first 9.5 s in GPU run 168, where a probe at 8 s timed the set-up's
 * calls). Counted per second from AT on. */
#define PACE_HISTORY 24 /* seconds: 3 windows of the longest B */
#define PACE_MIN_RATE 50
#define PACE_SPREAD 1.3
static uint64_t pace_sec_t, pace_sec_n, pace_rate[PACE_HISTORY];
static int pace_nrate;

static int pace_steady(uint64_t now) {
  if (!pace_sec_t) {
    pace_sec_t = now, pace_sec_n = pace_launches;
    return 0;
  }
  if (now - pace_sec_t < 1000000000ull) return 0;
  memmove(pace_rate, pace_rate + 1, (PACE_HISTORY - 1) * sizeof *pace_rate);
  pace_rate[PACE_HISTORY - 1] = pace_launches - pace_sec_n;
  pace_sec_t = now, pace_sec_n = pace_launches;
  if (pace_nrate < PACE_HISTORY) pace_nrate++;
  for (int b = 1; b <= PACE_HISTORY / 3 && 3 * b <= pace_nrate; b *= 2) {
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int k = 0; k < 3; k++) {
      uint64_t n = 0;
      for (int q = 0; q < b; q++)
        n += pace_rate[PACE_HISTORY - 1 - k * b - q];
      if (n < lo) lo = n;
      if (n > hi) hi = n;
    }
    if (lo >= (uint64_t)PACE_MIN_RATE * (uint64_t)b && (double)hi <= PACE_SPREAD * (double)lo)
      return 1;
  }
  return 0;
}

/* The window after the probe's cut opens at t (closed at exit by close_window) */
static void pace_window_open(uint64_t t) {
  struct slk_record o = {
      .kind = SLK_WINDOW, .start = t, .end = t, .fn = SLK_WINDOW_PACE, .flags = SLK_WINDOW_OPEN};
  wr_add(&o);
  win_open = 1, win_t0 = t, win_why = SLK_WINDOW_PACE;
}

static void pace_probe(uint64_t now) {
  if (pace_phase == 3 || !slack_cfg.pace.p_ms || wr_failed) return;
  if (__atomic_load_n(&slack_state, __ATOMIC_ACQUIRE) != 2) return;
  if (pace_phase == 0) {
    if (now < slack_start_ns + (uint64_t)slack_cfg.pace.p_ms * 1000000ull) return;
    if (config_windowed() || slack_cfg.duration_ms > 0) {
      pace_phase = 3;
      return;
    }
    if (!pace_steady(now)) return;
    pace_phase = 3;
    if (!cupti_kernel_records_on()) return;
    if (cupti_probe_records(0)) return;
    pace_off = slack_now();
    pace_phase = 1;
    return;
  }
  if (pace_phase == 1) {
    cupti_flush(0);
    drain_all();
    if (wr_gpu_outstanding() && now - pace_off < PACE_WAIT_NS) return;
    cupti_flush(1);
    drain_all();
    struct slk_record w = {
        .kind = SLK_WINDOW, .start = slack_start_ns, .end = pace_off, .fn = SLK_WINDOW_PACE};
    wr_add(&w);
    if (cupti_park()) { /* not detached: its records back on, no stretch untraced */
      cupti_probe_records(1);
      pace_window_open(slack_now());
      pace_phase = 3;
      return;
    }
    wr_gpu_forget();
    __atomic_store_n(&slack_tail, 1, __ATOMIC_RELEASE);
    pace_t1 = slack_now();
    pace_phase = 2;
    return;
  }
  if (now < pace_t1 + (uint64_t)slack_cfg.pace.w_ms * 1000000ull) return;
  uint64_t t2 = slack_now();
  char why[256] = "";
  int rc = cupti_reattach(why, sizeof why);
  __atomic_store_n(&slack_tail, 0, __ATOMIC_RELEASE);
  struct slk_record u = {.kind = SLK_WINDOW,
                         .start = pace_t1,
                         .end = t2,
                         .fn = SLK_WINDOW_PACE,
                         .flags = SLK_WINDOW_UNTRACED};
  wr_add(&u);
  pace_phase = 3;
  if (rc) { /* the rest of the run holds host calls only, in no window */
    if (rc < 0 && !cupti_wedged())
      fprintf(stderr,
              "slack: CUPTI could not be attached again after SLACK_PACE_PROBE (%s); the trace "
              "holds host calls only from here on\n",
              why);
    return;
  }
  /* from the attach's start: the kernels launched while it went on have records, the calls
   * before its records were on none (and no SLK_HOST_CUPTI_ON: the order join leaves them out) */
  pace_window_open(t2);
}

/* At exit: a probe under way still says where it cut the trace (the records went off; the
 * stretch untraced to the end) */
static void pace_final(uint64_t now) {
  if (pace_phase == 1 || pace_phase == 2) {
    struct slk_record w = {
        .kind = SLK_WINDOW, .start = slack_start_ns, .end = pace_off, .fn = SLK_WINDOW_PACE};
    if (pace_phase == 1) wr_add(&w);
    if (pace_phase == 2) {
      struct slk_record u = {.kind = SLK_WINDOW,
                             .start = pace_t1,
                             .end = now > pace_t1 ? now : pace_t1 + 1,
                             .fn = SLK_WINDOW_PACE,
                             .flags = SLK_WINDOW_UNTRACED};
      wr_add(&u);
    }
  }
  pace_phase = 3;
}

/* SLACK_PY_SAMPLE_MS: the Python threads' stacks, sampled from here (pyframes.c). */
static uint64_t last_sample_ns;
static void sample_python(uint64_t now) {
  if (slack_cfg.py_sample_ms <= 0 || slack_cfg.stacks == SLACK_STACKS_OFF || wr_failed) return;
  if (__atomic_load_n(&slack_state, __ATOMIC_RELAXED) == SLACK_STATE_PAUSED) return;
  if (now - last_sample_ns < (uint64_t)slack_cfg.py_sample_ms * 1000000ull) return;
  last_sample_ns = now;
  uint64_t tids[64], keys[64], cpu[64];
  int n = slack_py_sample(tids, keys, cpu, 64);
  uint64_t t1 = slack_now();
  for (int i = 0; i < n; i++) {
    struct slk_record r = {.kind = SLK_SAMPLE, .tid = tids[i], .start = now, .end = t1};
    /* a thread without Python frames (key 0) is sampled for its CPU time alone */
    r.pystack = keys[i] ? wr_pystack_id(keys[i]) : 0;
    r.count = cpu[i];
    if (keys[i] ? r.pystack != 0 : r.count != 0) wr_add(&r);
  }
}

/* SLACK_WRITER_SCHED (config.h): the writer's compression and Python samples run next to the
 * program's threads; woken every SLACK_POLL_MS, a normal thread preempts one of them (an OpenMP
 * worker of a host-bound loader, whose parallel region then waits for it). SCHED_BATCH only
 * takes a CPU at the next scheduling point or where one is idle. At exit the program waits for
 * the last flush: the writer goes back to normal first (allowed without privilege from BATCH
 * at an unchanged nice; a nice of 19 comes back only where RLIMIT_NICE or CAP_SYS_NICE allows). */
static void writer_sched(int final) {
  if (slack_cfg.writer_sched == SLACK_WRITER_NORMAL) return;
  struct sched_param sp = {0};
  pid_t tid = (pid_t)syscall(SYS_gettid);
  if (final) {
    if (slack_cfg.writer_sched == SLACK_WRITER_LOW) setpriority(PRIO_PROCESS, (id_t)tid, 0);
    pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
    return;
  }
  pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
  if (slack_cfg.writer_sched == SLACK_WRITER_LOW) setpriority(PRIO_PROCESS, (id_t)tid, 19);
}

/* SLACK_WRITER_SCHED=batch: the writer sleeps, wakes and samples the Python stacks as a normal
 * thread, and drains and compresses as SCHED_BATCH. A writer woken as BATCH waited for a free
 * CPU, and a program whose CPU work took every CPU (torch's CPU ops, which use all of them by
 * default) was never sampled in it: GPU run 173's loss on the CPU, 2.5 ms of 16 threads a step,
 * no sample in 38 steps, the samples before and after 12-15 ms apart instead of 10. The sample
 * itself takes 10-80 us. batch-all keeps the whole loop SCHED_BATCH (the samples then skip such
 * work). *on: whether the writer is a normal thread now. */
static void sample_sched(int normal, int *on) {
  if (slack_cfg.writer_sched != SLACK_WRITER_BATCH || normal == *on) return;
  struct sched_param sp = {0};
  if (!pthread_setschedparam(pthread_self(), normal ? SCHED_OTHER : SCHED_BATCH, &sp)) *on = normal;
}

/* Whether the writer samples the Python stacks (sample_python's settings, and a Python of 3.11
 * or later whose frames it can read) */
static int samples_on(void) {
  return slack_cfg.py_sample_ms > 0 && slack_cfg.stacks != SLACK_STACKS_OFF && !wr_failed &&
         slack_py_sampling();
}

static void *writer_main(void *arg) {
  (void)arg;
  writer_sched(0);
  int normal = 0;     /* sample_sched: the writer is a normal thread now */
  slack_tls_busy = 1; /* nothing this thread does is the program's CUDA work */
  /* named, so that top -H and scripts/bench (per-thread CPU from /proc) can tell it apart */
  prctl(PR_SET_NAME, "slack-writer", 0, 0, 0);
  for (;;) {
    /* the next wake a normal thread's, where samples are taken (sample_sched) */
    sample_sched(samples_on() &&
                     __atomic_load_n(&slack_state, __ATOMIC_RELAXED) != SLACK_STATE_PAUSED,
                 &normal);
    pthread_mutex_lock(&w_lock);
    if (!wake_pending && flush_gen == done_gen && !final_req) {
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      ts.tv_nsec += slack_cfg.poll_ms * 1000000L;
      ts.tv_sec += ts.tv_nsec / 1000000000L;
      ts.tv_nsec %= 1000000000L;
      pthread_cond_timedwait(&w_wake, &w_lock, &ts);
    }
    wake_pending = 0;
    uint64_t want = flush_gen;
    int final = final_req;
    pthread_mutex_unlock(&w_lock);
    /* at exit the program waits for us: the last chunks at zstd's fastest level, so that a
     * loaded machine still finishes within SLACK_EXIT_TIMEOUT_MS (a few bytes more per event) */
    if (final && file && !wr_failed) slk_file_auto_level(file, 1, 100);
    if (final) writer_sched(1);

    uint64_t now = slack_now();
    if (!final) { /* the samples first, at the wake's priority; the rest as SCHED_BATCH */
      sample_python(now);
      sample_sched(0, &normal);
    }
    int due = now - last_chunk_ns >= (uint64_t)slack_cfg.flush_ms * 1000000ull;
    /* GPU records sit in CUPTI's partly filled buffers until asked for: ask once per flush
     * period, so a killed process loses at most SLACK_FLUSH_MS of GPU records too. The
     * completed buffers come back through buffer_completed (on this thread or CUPTI's). */
    int flushing = want != done_gen || final;
    if (due && !wr_failed && !final) {
      uint64_t asked = slack_now();
      cupti_flush(0);
      /* every API record that ended before `asked` has been handed over by now; a host call
       * ends after its API record, so those ending a little before `asked` are complete */
      wr_pend_horizon = asked - 1000000;
    }
    if (!final) window_poll(now);
    if (!final) park_cupti(now);
    if (!final) pace_probe(now);
    drain_all();
    write_windows();
    if (final) close_window(slack_now()); /* the window open at exit ends there */
    if (final) pace_final(slack_now());
    /* no API records to wait for (CUPTI off), or everything must go out now */
    wr_pend_write(flushing || !cupti_api_records_on() ? UINT64_MAX : wr_pend_horizon);
    if (!wr_failed && (want != done_gen || final || due)) {
      if (slk_file_flush(file)) stop_writing("cannot write the trace", errno);
      last_chunk_ns = now;
    }
    if (final) {
      if (file) {
        /* the last chunk goes out first and the size is read then: slk_file_close frees `file`
         * (reading it after the close was a use after free, found by make test-asan) */
        if (!wr_failed && slk_file_flush(file)) stop_writing("cannot write the trace", errno);
        __atomic_store_n(&bytes_written, wr_failed ? 0 : slk_file_bytes(file), __ATOMIC_RELAXED);
        slk_file_close(file); /* flushed above (or stopped): this only frees */
      }
      file = NULL;
      close(file_fd);
      file_fd = -1;
    } else if (file) {
      __atomic_store_n(&bytes_written, slk_file_bytes(file), __ATOMIC_RELAXED);
    }
    pthread_mutex_lock(&w_lock);
    done_gen = want;
    if (final) finished = 1;
    pthread_cond_broadcast(&w_done);
    pthread_mutex_unlock(&w_lock);
    if (final) return NULL;
  }
}

void (*writer_on_first_launch)(void);

int writer_start(int fd, const char *header_body) {
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&w_wake, &ca);
  pthread_cond_init(&w_done, &ca);
  pthread_condattr_destroy(&ca);
  file = slk_file_open(fd, header_body, slack_cfg.zstd_level, (size_t)slack_cfg.chunk_kb * 1024);
  if (!file) return -1;
  file_fd = fd;
  last_chunk_ns = slack_now();
  /* compression may take SLACK_ZSTD_CPU_PCT (10) percent of a core: level 19 for a trace of a
   * few hundred KB/s, lower for bursts (format.h: slk_file_auto_level) */
  slk_file_auto_level(file, slack_cfg.zstd_level, slack_cfg.zstd_cpu_pct);
  cupti_on_buffer = wake_writer;
  wr_gpu_track = slack_cfg.cupti && slack_cfg.window_detach && config_windowed();
  /* the thread starts with every signal blocked: the program's handlers never run on it */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED); /* never joined: exit never waits */
  pthread_t t;
  int rc = pthread_create(&t, &at, writer_main, NULL);
  pthread_attr_destroy(&at);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc) {
    slk_file_close(file);
    file = NULL;
    errno = rc;
    return -1;
  }
  return 0;
}

/* The wait of the program's exit for the writer: SLACK_EXIT_TIMEOUT_MS without progress, and as
 * long as the writer keeps writing (a loaded machine), up to 10 times that in all: never a hang,
 * and no records lost to a slow but working writer. */
static void deadline_in(struct timespec *ts, long ms) {
  clock_gettime(CLOCK_MONOTONIC, ts);
  ts->tv_sec += ms / 1000;
  ts->tv_nsec += (ms % 1000) * 1000000L;
  ts->tv_sec += ts->tv_nsec / 1000000000L;
  ts->tv_nsec %= 1000000000L;
}

int writer_flush(int final, long timeout_ms) {
  struct timespec ts;
  deadline_in(&ts, timeout_ms);
  int rc = 0, extensions = 0;
  uint64_t seen = __atomic_load_n(&bytes_written, __ATOMIC_RELAXED);
  pthread_mutex_lock(&w_lock);
  if (finished) {
    pthread_mutex_unlock(&w_lock);
    return 0;
  }
  uint64_t mine = ++flush_gen;
  if (final) final_req = 1;
  pthread_cond_signal(&w_wake);
  while (final ? !finished : done_gen < mine) {
    if (pthread_cond_timedwait(&w_done, &w_lock, &ts) == ETIMEDOUT) {
      uint64_t now_bytes = __atomic_load_n(&bytes_written, __ATOMIC_RELAXED);
      if (final && now_bytes != seen && ++extensions < 10) {
        seen = now_bytes;
        deadline_in(&ts, timeout_ms);
        continue;
      }
      rc = -1;
      break;
    }
  }
  pthread_mutex_unlock(&w_lock);
  return rc;
}

void writer_forget(void) {
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  w_lock = m;
  lost_reported = 0;
  /* the parent's chunk buffers leak here; the child never writes the parent's file */
  file = NULL;
  if (file_fd >= 0) close(file_fd);
  file_fd = -1;
  wr_failed = 0;
  wake_pending = 0;
  flush_gen = done_gen = 0;
  final_req = finished = 0;
  wr_names_forget();
  wr_cupti_forget();
  bytes_written = 0;
  /* the parent's host events waiting for their API records: a child that starts its own trace
   * must not write them (it did, as records of the parent's threads) */
  wr_join_forget();
  win_open = 0;
  pace_phase = 0;
  pace_launches = pace_sec_t = pace_sec_n = 0;
  pace_nrate = 0;
}

uint64_t writer_bytes(void) { return __atomic_load_n(&bytes_written, __ATOMIC_RELAXED); }

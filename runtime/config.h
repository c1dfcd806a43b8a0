/* The SLACK_* environment: one table (config.c), read once at load, documented in
 * docs/ENVIRONMENT.md. Nothing else in slack calls getenv. */
#ifndef SLACK_CONFIG_H
#define SLACK_CONFIG_H

#include <limits.h>
#include <stddef.h>

struct slack_config {
  char output[PATH_MAX]; /* directory of the trace file */
  int disable;           /* 1: load, pass every call through, record nothing */
  long ring_events;      /* events per thread ring (rounded up to a power of two) */
  int cupti;             /* 0: host hooks only, no GPU records */
  int api_records;       /* CUPTI API records for launch/copy/memset calls (joins GPU to host) */
  long chunk_kb;         /* raw record bytes per chunk */
  int zstd_level;
  int zstd_cpu_pct;     /* the share of a core the writer may spend compressing (picks levels) */
  long flush_ms;        /* longest time a record waits in memory before its chunk is written */
  long poll_ms;         /* how often the writer drains the rings */
  long exit_timeout_ms; /* bounded wait for the last flush at exit or exec */
  long cupti_buffer_kb; /* size of one CUPTI activity buffer */
  long max_mb;          /* stop writing past this file size (0: no cap) */
  int quiet;            /* 1: no start line on stderr (problems are still said) */
  int tsc;              /* 0: timestamps from clock_gettime only, never from the TSC */
  int nvtx;             /* 1: libslack is the NVTX tool (interpose/nvtx.c) unless another is set */
  int stack_depth;      /* frames of a call site's stack, taken once per site (0: none) */
  int stacks;           /* enum slack_stacks: which calls carry stacks */
  long py_sample_ms;    /* period of the writer's samples of Python threads' stacks (0: none) */
  int writer_sched;     /* enum slack_writer_sched: the writer thread's scheduling */
  long probe_launches;  /* launches per state of the exit probe of CUPTI's cost (0: none) */
  int probe_detach;     /* 1: the exit probe detaches CUPTI (cuptiFinalize) for its last state */
  long duration_ms;     /* tracing stops this long after it started (0: at exit) */
  long tail_ms;         /* after a duration_ms window: host calls timed this long, CUPTI gone */
  long delay_ms;        /* calls in the first delay_ms after load pass through unrecorded */
  struct slack_duty {
    long w_ms, p_ms; /* SLACK_WINDOW=W/P: record w_ms every p_ms (0/0: no duty cycle) */
  } window;
  struct slack_capture {
    int kind;       /* enum slack_capture_kind */
    char nvtx[256]; /* SLACK_CAPTURE_RANGE=nvtx:NAME: the range's message */
  } capture;
  char trigger_file[PATH_MAX]; /* SLACK_TRIGGER_FILE: touching it opens a window ("": none) */
  int trigger_signal;          /* SLACK_TRIGGER_SIGNAL: its number (0: none) */
  long trigger_ms;             /* SLACK_TRIGGER_MS: length of a triggered window */
  int window_detach;      /* SLACK_WINDOW_DETACH: 1: CUPTI detached between windows (window.c) */
  struct slack_duty pace; /* SLACK_PACE_PROBE=LEN/AT: host calls timed without CUPTI for w_ms,
                             p_ms after tracing started, in a trace of the whole process
                             (writer.c pace_probe); 0/0: none */
  char rank[32];          /* distributed rank from RANK / OMPI_COMM_WORLD_RANK / SLURM_PROCID */
  char local_rank[32];    /* LOCAL_RANK / OMPI_COMM_WORLD_LOCAL_RANK / SLURM_LOCALID */
  char world_size[32];    /* WORLD_SIZE / OMPI_COMM_WORLD_SIZE / SLURM_NTASKS */
  char job_id[160]; /* TORCHELASTIC_RUN_ID, SLURM_JOB_ID[.SLURM_STEP_ID], OMPI_MCA_ess_base_jobid,
                       else MASTER_ADDR:MASTER_PORT: what the ranks of one job share */
};

/* SLACK_STACKS: off: the immediate caller only; sync: Python frames on calls that block the host
 * (native stacks once per site); all: Python frames on every call (the default). */
enum slack_stacks { SLACK_STACKS_OFF, SLACK_STACKS_SYNC, SLACK_STACKS_ALL };

/* SLACK_WRITER_SCHED: how the writer thread yields the CPUs to the program's threads. normal:
 * as any thread; batch: SCHED_BATCH (never preempts a running thread when it wakes, the same
 * share of the CPU), back to normal for the exit's last flush; low: SCHED_BATCH at nice 19 (a
 * small share under contention; the exit's flush raises it back where the system allows). */
enum slack_writer_sched {
  SLACK_WRITER_NORMAL,
  SLACK_WRITER_BATCH,
  SLACK_WRITER_LOW,
  SLACK_WRITER_BATCH_ALL
};

/* SLACK_CAPTURE_RANGE: none, an NVTX range of a given message, cudaProfilerStart/Stop. */
enum slack_capture_kind { SLACK_CAPTURE_NONE, SLACK_CAPTURE_NVTX, SLACK_CAPTURE_PROFILER };

/* 1 when any production window variable is set: tracing then records inside windows only
 * (runtime/window.c). */
int config_windowed(void) __attribute__((visibility("hidden")));

extern struct slack_config slack_cfg __attribute__((visibility("hidden")));

/* Fills slack_cfg from the environment; idempotent. */
void config_read(void) __attribute__((visibility("hidden")));

/* Appends the settings as "setting.NAME=value\n" lines; returns bytes written. */
int config_describe(char *buf, size_t cap) __attribute__((visibility("hidden")));
/* env.NAME=value lines for the variables of the environment that change how CUDA or PyTorch run
 * the program (those set only); bytes written */
int config_describe_env(char *buf, size_t cap) __attribute__((visibility("hidden")));

#endif

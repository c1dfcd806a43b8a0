/* The one table of SLACK_* variables. Read once, from the constructor (single-threaded). */
#include "config.h"

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct slack_config slack_cfg;

enum var_type { V_BOOL, V_INT, V_LONG, V_PATH, V_CHOICE, V_DUTY, V_CAPTURE, V_SIGNAL };
/* V_BOOL, V_INT: an int field; V_LONG: long; V_CHOICE: an int field, the index of the value in
 * `choices` ("a|b|c"); V_DUTY: struct slack_duty from "W/P" (durations); V_CAPTURE: struct
 * slack_capture from "nvtx:NAME" or "cudaProfilerApi"; V_SIGNAL: an int, a signal's number from
 * its name ("USR2", "SIGUSR2", "RTMIN+3") or number, among those a user may name (below) */
struct var {
  const char *name;
  enum var_type type;
  size_t offset;
  const char *def;
  long min, max;
  const char *choices;
};

#define OFF(f) offsetof(struct slack_config, f)
/* Keep in step with docs/ENVIRONMENT.md. */
static const struct var vars[] = {
    {"SLACK_OUTPUT", V_PATH, OFF(output), ".", 0, 0},
    {"SLACK_DISABLE", V_BOOL, OFF(disable), "0", 0, 1},
    {"SLACK_RING_EVENTS", V_LONG, OFF(ring_events), "32768", 64, 1 << 24},
    {"SLACK_CUPTI", V_BOOL, OFF(cupti), "1", 0, 1},
    {"SLACK_API_RECORDS", V_BOOL, OFF(api_records), "1", 0, 1},
    {"SLACK_CHUNK_KB", V_LONG, OFF(chunk_kb), "256", 16, 65536},
    {"SLACK_ZSTD_LEVEL", V_INT, OFF(zstd_level), "19", 1, 19},
    {"SLACK_ZSTD_CPU_PCT", V_INT, OFF(zstd_cpu_pct), "10", 1, 100},
    {"SLACK_FLUSH_MS", V_LONG, OFF(flush_ms), "1000", 10, 600000},
    {"SLACK_POLL_MS", V_LONG, OFF(poll_ms), "10", 1, 1000},
    {"SLACK_EXIT_TIMEOUT_MS", V_LONG, OFF(exit_timeout_ms), "3000", 0, 600000},
    {"SLACK_CUPTI_BUFFER_KB", V_LONG, OFF(cupti_buffer_kb), "4096", 64, 262144},
    {"SLACK_MAX_MB", V_LONG, OFF(max_mb), "0", 0, 1L << 30},
    {"SLACK_QUIET", V_BOOL, OFF(quiet), "0", 0, 1},
    {"SLACK_TSC", V_BOOL, OFF(tsc), "1", 0, 1},
    {"SLACK_NVTX", V_BOOL, OFF(nvtx), "1", 0, 1},
    {"SLACK_STACK_DEPTH", V_INT, OFF(stack_depth), "12", 0, 32},
    {"SLACK_STACKS", V_CHOICE, OFF(stacks), "all", 0, 0, "off|sync|all"},
    {"SLACK_PY_SAMPLE_MS", V_LONG, OFF(py_sample_ms), "10", 0, 60000},
    {"SLACK_WRITER_SCHED", V_CHOICE, OFF(writer_sched), "batch", 0, 0,
     "normal|batch|low|batch-all"},
    {"SLACK_PROBE", V_LONG, OFF(probe_launches), "512", 0, 65536},
    {"SLACK_PROBE_DETACH", V_BOOL, OFF(probe_detach), "1", 0, 1},
    {"SLACK_DELAY_MS", V_LONG, OFF(delay_ms), "0", 0, 86400000L},
    {"SLACK_DURATION_MS", V_LONG, OFF(duration_ms), "0", 0, 86400000L},
    {"SLACK_TAIL_MS", V_LONG, OFF(tail_ms), "3000", 0, 600000L},
    {"SLACK_WINDOW", V_DUTY, OFF(window), "0", 0, 86400000L},
    {"SLACK_CAPTURE_RANGE", V_CAPTURE, OFF(capture), "none", 0, 0},
    {"SLACK_TRIGGER_FILE", V_PATH, OFF(trigger_file), "", 0, 0},
    {"SLACK_TRIGGER_SIGNAL", V_SIGNAL, OFF(trigger_signal), "0", 0, 0},
    {"SLACK_TRIGGER_MS", V_LONG, OFF(trigger_ms), "10000", 1, 86400000L},
    {"SLACK_WINDOW_DETACH", V_BOOL, OFF(window_detach), "1", 0, 1},
    {"SLACK_PACE_PROBE", V_DUTY, OFF(pace), "2s/20s", 0, 86400000L},
};

/* "250", "250ms", "2s", "1m": ms into *ms; 0, or -1 when it does not parse. */
static int duration_ms(const char *s, const char *e, long *ms) {
  char *end;
  long x = strtol(s, &end, 10);
  if (end == s || x < 0 || x > 86400000L) return -1;
  size_t u = (size_t)(e - end);
  long mult = u == 0 || (u == 2 && !strncmp(end, "ms", 2)) ? 1
              : u == 1 && *end == 's'                      ? 1000
              : u == 1 && *end == 'm'                      ? 60000
                                                           : 0;
  if (!mult || x > 86400000L / mult) return -1;
  *ms = x * mult;
  return 0;
}

/* SLACK_WINDOW "W/P": 0, or -1 (W and P durations, 0 < W <= P, P at most a day). "0": none. */
static int parse_duty(const char *s, struct slack_duty *d) {
  if (!strcmp(s, "0")) {
    d->w_ms = d->p_ms = 0;
    return 0;
  }
  const char *slash = strchr(s, '/');
  long w, p;
  if (!slash || duration_ms(s, slash, &w) || duration_ms(slash + 1, slash + strlen(slash), &p))
    return -1;
  if (w <= 0 || p < w) return -1;
  d->w_ms = w;
  d->p_ms = p;
  return 0;
}

/* SLACK_CAPTURE_RANGE: "none", "cudaProfilerApi", "nvtx:NAME" (NAME 1..255 bytes). */
static int parse_capture(const char *s, struct slack_capture *c) {
  if (!strcmp(s, "none")) {
    c->kind = SLACK_CAPTURE_NONE;
    c->nvtx[0] = '\0';
  } else if (!strcmp(s, "cudaProfilerApi")) {
    c->kind = SLACK_CAPTURE_PROFILER;
    c->nvtx[0] = '\0';
  } else if (!strncmp(s, "nvtx:", 5) && s[5] && strlen(s + 5) < sizeof c->nvtx) {
    for (const char *q = s + 5; *q; q++) /* a name must fit its header line */
      if ((unsigned char)*q < 0x20 || *q == 0x7f) return -1;
    c->kind = SLACK_CAPTURE_NVTX;
    snprintf(c->nvtx, sizeof c->nvtx, "%s", s + 5);
  } else {
    return -1;
  }
  return 0;
}

/* The signals a user may name for SLACK_TRIGGER_SIGNAL: none whose default action or usual
 * meaning a program relies on (SIGINT, SIGTERM, SIGCHLD, SIGSEGV...). */
static int parse_signal(const char *s, int *sig) {
  if (!strcmp(s, "0")) {
    *sig = 0;
    return 0;
  }
  if (!strncmp(s, "SIG", 3)) s += 3;
  static const struct {
    const char *name;
    int sig;
  } named[] = {{"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"HUP", SIGHUP}, {"WINCH", SIGWINCH}};
  char *end;
  long x = -1;
  for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
    if (!strcmp(s, named[i].name)) x = named[i].sig;
  if (x < 0 && !strncmp(s, "RTMIN+", 6)) {
    x = strtol(s + 6, &end, 10);
    x = end != s + 6 && !*end && x >= 0 && x <= SIGRTMAX - SIGRTMIN ? SIGRTMIN + x : -1;
  } else if (x < 0 && *s >= '0' && *s <= '9') {
    x = strtol(s, &end, 10);
    if (*end) x = -1;
  }
  int ok = x == SIGUSR1 || x == SIGUSR2 || x == SIGHUP || x == SIGWINCH ||
           (x >= SIGRTMIN && x <= SIGRTMAX);
  if (!ok) return -1;
  *sig = (int)x;
  return 0;
}

static void set(const struct var *v, const char *s, int from_env) {
  char *base = (char *)&slack_cfg + v->offset;
  if (v->type == V_PATH) {
    /* a relative trigger file is the one in the directory the program started in: the writer
     * looks for it after the program may have changed directory */
    char cwd[PATH_MAX];
    if (from_env && *s != '/' && v->offset == OFF(trigger_file) && getcwd(cwd, sizeof cwd) &&
        strlen(cwd) + strlen(s) + 2 <= PATH_MAX) {
      size_t lc = strlen(cwd);
      memcpy(base, cwd, lc);
      base[lc] = '/';
      memcpy(base + lc + 1, s, strlen(s) + 1);
    } else
      snprintf(base, PATH_MAX, "%s", s);
    return;
  }
  if (v->type == V_DUTY || v->type == V_CAPTURE || v->type == V_SIGNAL) {
    static const char *const want[] = {
        [V_DUTY] = "W/P, durations such as 2s/20s or 500ms/10s with 0 < W <= P <= 1 day",
        [V_CAPTURE] = "nvtx:NAME or cudaProfilerApi",
        [V_SIGNAL] = "USR1, USR2, HUP, WINCH or RTMIN+N"};
    int bad = v->type == V_DUTY      ? parse_duty(s, (struct slack_duty *)(void *)base)
              : v->type == V_CAPTURE ? parse_capture(s, (struct slack_capture *)(void *)base)
                                     : parse_signal(s, (int *)(void *)base);
    if (bad) {
      if (from_env)
        fprintf(stderr, "slack: ignoring %s=%s (want %s); using %s\n", v->name, s, want[v->type],
                v->def);
      set(v, v->def, 0);
    }
    return;
  }
  if (v->type == V_CHOICE) {
    size_t n = strlen(s);
    int k = 0;
    for (const char *c = v->choices; c; c = strchr(c, '|'), k++) {
      if (*c == '|') c++;
      if (strncmp(c, s, n) == 0 && (c[n] == '|' || c[n] == '\0')) {
        *(int *)base = k;
        return;
      }
    }
    if (from_env)
      fprintf(stderr, "slack: ignoring %s=%s (want one of %s); using %s\n", v->name, s, v->choices,
              v->def);
    set(v, v->def, 0);
    return;
  }
  char *end;
  long x = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || x < v->min || x > v->max) {
    if (from_env)
      fprintf(stderr, "slack: ignoring %s=%s (want an integer in %ld..%ld); using %s\n", v->name, s,
              v->min, v->max, v->def);
    x = strtol(v->def, NULL, 10);
  }
  if (v->type == V_BOOL || v->type == V_INT)
    *(int *)base = (int)x;
  else
    *(long *)base = x;
}

/* The header is "key=value" lines: a value must not carry a line break (RANK="0\nhost=x" would
 * forge a key). Control characters become '?'. */
static void one_line(char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
}

/* The first of the variables names[] set and not empty into out, as one header line. */
static void first_of(const char *const *names, char *out, size_t cap) {
  out[0] = '\0';
  for (; *names; names++) {
    const char *e = getenv(*names);
    if (e && *e) {
      snprintf(out, cap, "%s", e);
      one_line(out);
      return;
    }
  }
}

void config_read(void) {
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *e = getenv(vars[i].name);
    set(&vars[i], vars[i].def, 0);
    if (e && *e) set(&vars[i], e, 1);
  }
  /* not ours, but read here so that this file stays the one place that reads the environment:
   * the distributed identity, from torchrun (RANK...), Open MPI or Slurm, the first one set */
  static const char *const rank_vars[] = {"RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", NULL};
  static const char *const local_vars[] = {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                                           "SLURM_LOCALID", NULL};
  static const char *const world_vars[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS",
                                           NULL};
  /* the job: torchrun's run id, Slurm's job (and step), Open MPI's job id, else the rendezvous
   * address that every rank of a torchrun or torch.distributed job shares */
  static const char *const job_vars[] = {"TORCHELASTIC_RUN_ID", "SLURM_JOB_ID",
                                         "OMPI_MCA_ess_base_jobid", NULL};
  first_of(rank_vars, slack_cfg.rank, sizeof slack_cfg.rank);
  first_of(local_vars, slack_cfg.local_rank, sizeof slack_cfg.local_rank);
  first_of(world_vars, slack_cfg.world_size, sizeof slack_cfg.world_size);
  first_of(job_vars, slack_cfg.job_id, sizeof slack_cfg.job_id);
  if (!strcmp(slack_cfg.job_id, "none")) slack_cfg.job_id[0] = '\0'; /* torchrun's default */
  const char *slurm = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
  const char *addr = getenv("MASTER_ADDR"), *port = getenv("MASTER_PORT");
  size_t n = strlen(slack_cfg.job_id);
  if (slurm && step && *step && !strcmp(slack_cfg.job_id, slurm)) /* each srun step: a job */
    snprintf(slack_cfg.job_id + n, sizeof slack_cfg.job_id - n, ".%s", step);
  else if (!n && addr && *addr && port && *port)
    snprintf(slack_cfg.job_id, sizeof slack_cfg.job_id, "%s:%s", addr, port);
  one_line(slack_cfg.job_id);
}

/* Settings as "key=value" header lines, for the trace header (the reader shows them). */
int config_describe(char *buf, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < sizeof vars / sizeof vars[0] && n < cap; i++) {
    const char *base = (const char *)&slack_cfg + vars[i].offset;
    int w;
    if (vars[i].type == V_PATH) {
      char line[PATH_MAX];
      snprintf(line, sizeof line, "%s", base);
      one_line(line); /* the path itself stays as given: only its header line is cleaned */
      w = snprintf(buf + n, cap - n, "setting.%s=%s\n", vars[i].name, line);
    } else if (vars[i].type == V_BOOL || vars[i].type == V_INT)
      w = snprintf(buf + n, cap - n, "setting.%s=%d\n", vars[i].name, *(const int *)base);
    else if (vars[i].type == V_CHOICE) {
      const char *c = vars[i].choices;
      for (int k = *(const int *)base; k > 0 && c; k--)
        c = strchr(c, '|') ? strchr(c, '|') + 1 : NULL;
      w = snprintf(buf + n, cap - n, "setting.%s=%.*s\n", vars[i].name,
                   c ? (int)strcspn(c, "|") : 1, c ? c : "?");
    } else if (vars[i].type == V_DUTY) {
      const struct slack_duty *d = (const void *)base;
      if (d->p_ms)
        w = snprintf(buf + n, cap - n, "setting.%s=%ldms/%ldms\n", vars[i].name, d->w_ms, d->p_ms);
      else
        w = snprintf(buf + n, cap - n, "setting.%s=0\n", vars[i].name);
    } else if (vars[i].type == V_CAPTURE) {
      const struct slack_capture *c = (const void *)base;
      char name[sizeof c->nvtx];
      snprintf(name, sizeof name, "%s", c->nvtx);
      one_line(name);
      w = snprintf(buf + n, cap - n, "setting.%s=%s%s\n", vars[i].name,
                   c->kind == SLACK_CAPTURE_NVTX       ? "nvtx:"
                   : c->kind == SLACK_CAPTURE_PROFILER ? "cudaProfilerApi"
                                                       : "none",
                   c->kind == SLACK_CAPTURE_NVTX ? name : "");
    } else if (vars[i].type == V_SIGNAL) {
      w = snprintf(buf + n, cap - n, "setting.%s=%d\n", vars[i].name, *(const int *)base);
    } else
      w = snprintf(buf + n, cap - n, "setting.%s=%ld\n", vars[i].name, *(const long *)base);
    if (w < 0) break;
    n += (size_t)w;
  }
  return (int)(n < cap ? n : cap);
}

/* Variables of the environment that change how CUDA or PyTorch run the program (every launch
 * made synchronous, the allocator's segments, module loading, the hardware queues), written to
 * the header as env.NAME=value when set: the report reads the first two. */
static const char *const env_vars[] = {
    "CUDA_LAUNCH_BLOCKING",           "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF",
    "PYTORCH_NO_CUDA_MEMORY_CACHING", "CUDA_MODULE_LOADING",     "CUDA_DEVICE_MAX_CONNECTIONS",
    "CUDA_VISIBLE_DEVICES",           "OMP_NUM_THREADS",
};

int config_describe_env(char *buf, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < sizeof env_vars / sizeof env_vars[0] && n < cap; i++) {
    const char *v = getenv(env_vars[i]);
    if (!v) continue;
    char line[1024];
    snprintf(line, sizeof line, "%s", v);
    one_line(line);
    int w = snprintf(buf + n, cap - n, "env.%s=%s\n", env_vars[i], line);
    if (w < 0) break;
    n += (size_t)w;
  }
  return (int)(n < cap ? n : cap);
}

int config_windowed(void) {
  return slack_cfg.window.p_ms > 0 || slack_cfg.capture.kind != SLACK_CAPTURE_NONE ||
         slack_cfg.trigger_file[0] || slack_cfg.trigger_signal;
}

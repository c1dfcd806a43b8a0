/* The one table of SLACK_* variables. Read once, from the constructor (single-threaded). */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct slack_config slack_cfg;

enum var_type { V_BOOL, V_INT, V_LONG, V_PATH, V_CHOICE };
/* V_BOOL, V_INT: an int field; V_LONG: long; V_CHOICE: an int field, the index of the value in
 * `choices` ("a|b|c") */
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
    {"SLACK_PROBE", V_LONG, OFF(probe_launches), "512", 0, 65536},
    {"SLACK_PROBE_DETACH", V_BOOL, OFF(probe_detach), "1", 0, 1},
    {"SLACK_DELAY_MS", V_LONG, OFF(delay_ms), "0", 0, 86400000L},
    {"SLACK_DURATION_MS", V_LONG, OFF(duration_ms), "0", 0, 86400000L},
    {"SLACK_TAIL_MS", V_LONG, OFF(tail_ms), "0", 0, 600000L},
};

static void set(const struct var *v, const char *s, int from_env) {
  char *base = (char *)&slack_cfg + v->offset;
  if (v->type == V_PATH) {
    snprintf(base, PATH_MAX, "%s", s);
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
    } else
      w = snprintf(buf + n, cap - n, "setting.%s=%ld\n", vars[i].name, *(const long *)base);
    if (w < 0) break;
    n += (size_t)w;
  }
  return (int)(n < cap ? n : cap);
}

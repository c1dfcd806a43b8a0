/* Fuzz target "config": the SLACK_* parser (runtime/config.c, linked as is) on any environment.
 *
 * Input: lines; a line's first byte picks a variable (modulo the list below, which holds every
 * SLACK_* name of docs/ENVIRONMENT.md, the rank, job and world variables and a name slack does not
 * know), the rest of the line is its value. Each run starts from an environment without them.
 * Checks: config_read is idempotent; config_describe never writes past the size it is given, says
 * how much it wrote, and writes one "setting.NAME=value" line per setting whatever the values (a
 * value with a line break must not forge a header key); and its output read back as an
 * environment gives the same settings (every value it accepted is one it describes faithfully,
 * but for a path's control characters, which its header line shows as '?'). */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz.h"

static const char *const names[] = {
    "SLACK_OUTPUT",
    "SLACK_DISABLE",
    "SLACK_RING_EVENTS",
    "SLACK_CUPTI",
    "SLACK_API_RECORDS",
    "SLACK_CHUNK_KB",
    "SLACK_ZSTD_LEVEL",
    "SLACK_ZSTD_CPU_PCT",
    "SLACK_FLUSH_MS",
    "SLACK_POLL_MS",
    "SLACK_EXIT_TIMEOUT_MS",
    "SLACK_CUPTI_BUFFER_KB",
    "SLACK_MAX_MB",
    "SLACK_QUIET",
    "SLACK_TSC",
    "SLACK_NVTX",
    "SLACK_STACK_DEPTH",
    "SLACK_STACKS",
    "SLACK_PY_SAMPLE_MS",
    "SLACK_PROBE",
    "SLACK_PROBE_DETACH",
    "SLACK_DELAY_MS",
    "SLACK_DURATION_MS",
    "SLACK_WINDOW_DETACH",
    "SLACK_PACE_PROBE",
    "RANK",
    "OMPI_COMM_WORLD_RANK",
    "SLURM_PROCID",
    "SLACK_UNKNOWN",
    /* the rest of the distributed identity (config.c: local rank, world size, job id) */
    "LOCAL_RANK",
    "OMPI_COMM_WORLD_LOCAL_RANK",
    "SLURM_LOCALID",
    "WORLD_SIZE",
    "OMPI_COMM_WORLD_SIZE",
    "SLURM_NTASKS",
    "TORCHELASTIC_RUN_ID",
    "SLURM_JOB_ID",
    "SLURM_STEP_ID",
    "OMPI_MCA_ess_base_jobid",
    "MASTER_ADDR",
    "MASTER_PORT",
    "SLACK_WINDOW",
    "SLACK_CAPTURE_RANGE",
    "SLACK_TRIGGER_FILE",
    "SLACK_TRIGGER_SIGNAL",
    "SLACK_TRIGGER_MS",
    "SLACK_TAIL_MS",
};
#define NNAMES (sizeof names / sizeof names[0])

/* setenv copies and never frees (getenv's pointers must stay valid): over millions of runs that
 * is gigabytes. putenv with strings of our own, freed once unset, keeps the fuzzer's memory
 * flat. */
static char *owned[64];
static size_t nowned;

static void clear_env(void) {
  for (size_t i = 0; i < NNAMES; i++)
    unsetenv(names[i]);
  for (size_t i = 0; i < nowned; i++)
    free(owned[i]);
  nowned = 0;
}

static int set_env(const char *name, const char *value, size_t vlen) {
  if (nowned == sizeof owned / sizeof owned[0]) return -1;
  unsetenv(name);
  size_t nlen = strlen(name);
  char *kv = malloc(nlen + 1 + vlen + 1);
  if (!kv) return -1;
  memcpy(kv, name, nlen);
  kv[nlen] = '=';
  memcpy(kv + nlen + 1, value, vlen);
  kv[nlen + 1 + vlen] = '\0';
  owned[nowned++] = kv;
  return putenv(kv);
}

/* Sets the environment from describe's lines; 0, or -1 when a line is not "setting.NAME=...". */
static int env_from_describe(char *text) {
  clear_env();
  for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save)) {
    if (strncmp(line, "setting.", 8)) return -1;
    char *eq = strchr(line + 8, '=');
    if (!eq) return -1;
    *eq = '\0';
    if (set_env(line + 8, eq + 1, strlen(eq + 1))) return -1;
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_quiet(); /* config.c says on stderr which values it ignores */
  clear_env();
  const uint8_t *p = data, *end = data + size;
  while (p < end) {
    const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
    const uint8_t *le = nl ? nl : end;
    if (le == p) { /* an empty line names nothing */
      p = le + 1;
      continue;
    }
    const char *name = names[p[0] % NNAMES];
    size_t vlen = (size_t)(le - p - 1);
    if (!memchr(p + 1, '\0', vlen)) set_env(name, (const char *)p + 1, vlen); /* no NUL in one */
    p = nl ? nl + 1 : end;
  }
  config_read();
  struct slack_config first = slack_cfg;
  config_read(); /* idempotent */
  FUZZ_CHECK(!memcmp(&first, &slack_cfg, sizeof first));
  /* the identity goes into header lines as is: one line each, NUL-terminated in its field */
  const char *ids[] = {first.rank, first.local_rank, first.world_size, first.job_id};
  const size_t idcap[] = {sizeof first.rank, sizeof first.local_rank, sizeof first.world_size,
                          sizeof first.job_id};
  for (size_t k = 0; k < 4; k++) {
    FUZZ_CHECK(memchr(ids[k], '\0', idcap[k]));
    for (const char *q = ids[k]; *q; q++)
      FUZZ_CHECK((unsigned char)*q >= 0x20 && *q != 0x7f);
  }

  /* sizes around the full length and some the input picks, each an exact-size heap buffer (ASan
   * sees a write one byte too far) */
  static char full[1 << 16];
  int n = config_describe(full, sizeof full);
  FUZZ_CHECK(n > 0 && (size_t)n < sizeof full);
  size_t caps[10] = {0, 1, 2, (size_t)n - 1, (size_t)n, (size_t)n + 1, 0, 0, 0, 0};
  for (size_t k = 6; k < 10; k++)
    caps[k] = size > k ? (size_t)(data[k] * 131u + data[size - 1 - k]) % ((size_t)n + 2) : 7 * k;
  for (size_t k = 0; k < 10; k++) {
    size_t cap = caps[k];
    char *b = malloc(cap ? cap : 1);
    FUZZ_CHECK(b);
    int m = config_describe(b, cap);
    FUZZ_CHECK(m >= 0 && (size_t)m <= cap);
    if (cap > (size_t)n) FUZZ_CHECK(m == n && !memcmp(b, full, (size_t)n + 1));
    if (cap && cap <= (size_t)n)
      FUZZ_CHECK(!memcmp(b, full, (size_t)m < cap ? (size_t)m : cap - 1));
    free(b);
  }

  /* one line per setting, whatever the values: as many as with no SLACK_* set at all */
  static int expect_lines = -1;
  int lines = 0;
  for (const char *q = full; *q; q++)
    lines += *q == '\n';
  if (expect_lines < 0) {
    clear_env();
    config_read();
    char dflt[1 << 16];
    config_describe(dflt, sizeof dflt);
    expect_lines = 0;
    for (const char *q = dflt; *q; q++)
      expect_lines += *q == '\n';
    slack_cfg = first;
  }
  FUZZ_CHECK(lines == expect_lines);

  /* read back: the settings the description gives are the settings described */
  char *copy = strdup(full);
  FUZZ_CHECK(copy);
  if (env_from_describe(copy) == 0) {
    config_read();
    /* the path's header line has its control characters as '?' (a line break would forge a
     * key): read back, that is the path */
    char want[sizeof first.output];
    memcpy(want, first.output, sizeof want);
    for (char *q = want; *q; q++)
      if ((unsigned char)*q < 0x20 || *q == 0x7f) *q = '?';
    FUZZ_CHECK(!strcmp(want, slack_cfg.output));
    memcpy(want, first.trigger_file, sizeof want); /* the same for the trigger file's path */
    for (char *q = want; *q; q++)
      if ((unsigned char)*q < 0x20 || *q == 0x7f) *q = '?';
    FUZZ_CHECK(!strcmp(want, slack_cfg.trigger_file));
    struct slack_config a = first, b = slack_cfg;
    memset(a.trigger_file, 0, sizeof a.trigger_file);
    memset(b.trigger_file, 0, sizeof b.trigger_file);
    /* the path compared as a string (the bytes after its NUL are an earlier value's); the rank
     * not at all: it is not described (it has its own header key) */
    memset(a.output, 0, sizeof a.output);
    memset(b.output, 0, sizeof b.output);
    memset(a.rank, 0, sizeof a.rank);
    memset(b.rank, 0, sizeof b.rank);
    memset(a.local_rank, 0, sizeof a.local_rank); /* nor the rest of the identity */
    memset(b.local_rank, 0, sizeof b.local_rank);
    memset(a.world_size, 0, sizeof a.world_size);
    memset(b.world_size, 0, sizeof b.world_size);
    memset(a.job_id, 0, sizeof a.job_id);
    memset(b.job_id, 0, sizeof b.job_id);
    FUZZ_CHECK(!memcmp(&a, &b, sizeof a));
  } else {
    fuzz_fail("config_describe wrote a line that is not setting.NAME=value", __FILE__, __LINE__);
  }
  free(copy);
  clear_env();
  return 0;
}

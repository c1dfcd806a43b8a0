/* make bench: a launch loop for the CPU benchmark (scripts/bench/cpu_bench.py).
 *
 * Calls __cudaLaunchKernel (what <<<>>> compiles to in CUDA 13) in BENCH_BLOCKS blocks of
 * BENCH_BLOCK calls, sleeping BENCH_GAP_MS between blocks so that slack's writer (which drains
 * the per-thread rings every SLACK_POLL_MS, 10 ms) empties the ring: no event is dropped, and
 * each block times the hot path as it is when the ring has room. Runs against whichever
 * libcudart.so.13 the loader finds: scripts/bench/null_cudart.c (returns at once: the time is
 * libslack's alone) or tests/stub (a stand-in GPU and CUPTI).
 *
 * Writes one JSON line to BENCH_REPORT at exit, after slack's own exit flush (our atexit
 * handler is registered before the first CUDA call, slack's during it, and they run in reverse):
 *   ns: per-block ns per call; main_cpu_ns: this thread's CPU time; proc_cpu_ns: the process's,
 *   so proc - main is the background threads' (slack's writer, the stand-in CUPTI's thread);
 *   maxrss_kb (VmHWM).
 * BENCH_SPIN_NS busy-waits that long before each call (launches as far apart as a real
 * program's; the per-call figure then includes it).
 * BENCH_PRINT=1 prints instead the lines of scripts/bench/empty_launch.cu (RESULT, THREADS,
 * EXIT), so that scripts/bench/gpu_bench.py can be tried on the CPU (BENCH_DRYRUN=1).
 */
#include <cuda_runtime_api.h>
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
                                      size_t shmem, cudaStream_t stream);

static long blocks = 20, block = 8192, gap_ms = 15, spin_ns = 0;
static double *ns;

static unsigned long long clk(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* BENCH_SPIN_NS: busy time before each call, as a program does between launches */
static void spin(long ns) {
  if (ns <= 0) return;
  unsigned long long end = clk(CLOCK_MONOTONIC) + (unsigned long long)ns;
  while (clk(CLOCK_MONOTONIC) < end) {
  }
}

static long env_long(const char *name, long def) {
  const char *e = getenv(name);
  return e && atol(e) > 0 ? atol(e) : def;
}

static void report(void) {
  unsigned long long main_cpu = clk(CLOCK_THREAD_CPUTIME_ID), proc = clk(CLOCK_PROCESS_CPUTIME_ID);
  /* VmHWM, not getrusage's ru_maxrss: that one keeps the parent's peak across fork + exec */
  long hwm = -1;
  FILE *st = fopen("/proc/self/status", "r");
  char line[256];
  while (st && fgets(line, sizeof line, st))
    if (!strncmp(line, "VmHWM:", 6)) hwm = atol(line + 6);
  if (st) fclose(st);
  const char *pr = getenv("BENCH_PRINT");
  if (pr && *pr == '1') {
    printf("EXIT proc_cpu_ns=%llu main_cpu_ns=%llu hwm_kb=%ld\n", proc, main_cpu, hwm);
    fflush(stdout);
    return;
  }
  const char *p = getenv("BENCH_REPORT");
  FILE *f = p && *p ? fopen(p, "w") : NULL;
  if (!f) return;
  fprintf(f, "{\"calls\":%ld,\"ns\":[", blocks * block);
  for (long i = 0; i < blocks; i++)
    fprintf(f, "%s%.2f", i ? "," : "", ns[i]);
  fprintf(f, "],\"main_cpu_ns\":%llu,\"proc_cpu_ns\":%llu,\"maxrss_kb\":%ld}\n", main_cpu, proc,
          hwm);
  fclose(f);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* BENCH_PRINT: the RESULT and THREADS lines of empty_launch.cu (CPU ns per thread name). */
static void print_lines(void) {
  double *s = malloc((size_t)blocks * sizeof *s);
  if (!s) return;
  for (long i = 0; i < blocks; i++)
    s[i] = ns[i];
  qsort(s, (size_t)blocks, sizeof *s, cmp_double);
  double m = blocks % 2 ? s[blocks / 2] : (s[blocks / 2 - 1] + s[blocks / 2]) / 2;
  free(s);
  printf("RESULT workload=empty_launch us_per_launch=%.4f launches=%ld\n", m / 1e3, blocks * block);
  printf("THREADS");
  DIR *d = opendir("/proc/self/task");
  struct dirent *e;
  int first = 1;
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[300], name[64] = "?";
    unsigned long long t = 0;
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (f) {
      if (fgets(name, sizeof name, f)) name[strcspn(name, "\n")] = 0;
      fclose(f);
    }
    snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
    f = fopen(path, "r");
    if (f) {
      if (fscanf(f, "%llu", &t) != 1) t = 0;
      fclose(f);
    }
    if (atoi(e->d_name) == getpid()) snprintf(name, sizeof name, "main");
    printf("%s%s=%llu", first ? " " : ",", name, t);
    first = 0;
  }
  if (d) closedir(d);
  printf("\n");
  fflush(stdout);
}

int main(void) {
  blocks = env_long("BENCH_BLOCKS", blocks);
  block = env_long("BENCH_BLOCK", block);
  gap_ms = env_long("BENCH_GAP_MS", gap_ms);
  spin_ns = env_long("BENCH_SPIN_NS", spin_ns);
  ns = calloc((size_t)blocks, sizeof *ns);
  if (!ns) return 1;
  atexit(report);
  /* the stand-in needs a registered kernel; the null cudart takes any handle */
  cudaKernel_t (*reg)(const void *, const char *, unsigned long long) =
      (cudaKernel_t(*)(const void *, const char *, unsigned long long))dlsym(RTLD_DEFAULT,
                                                                             "stubRegisterKernel");
  cudaKernel_t k = reg ? reg(NULL, "empty_kernel", 1) : (cudaKernel_t)&ns;
  if (!k) {
    fprintf(stderr, "cpu_loop: no kernel\n");
    return 1;
  }
  dim3 g = {1, 1, 1}, b = {32, 1, 1};
  struct timespec gap = {gap_ms / 1000, (gap_ms % 1000) * 1000000L};
  /* warm-up: the first call starts slack (and CUPTI) */
  for (int i = 0; i < 64; i++)
    if (__cudaLaunchKernel(k, g, b, NULL, 0, NULL)) return 1;
  if (cudaStreamSynchronize(NULL)) return 1;
  nanosleep(&gap, NULL);
  for (long j = 0; j < blocks; j++) {
    unsigned long long t0 = clk(CLOCK_MONOTONIC);
    for (long i = 0; i < block; i++)
      if (spin(spin_ns), __cudaLaunchKernel(k, g, b, NULL, 0, NULL)) {
        fprintf(stderr, "cpu_loop: launch failed\n");
        return 1;
      }
    unsigned long long t1 = clk(CLOCK_MONOTONIC);
    ns[j] = (double)(t1 - t0) / (double)block;
    if (cudaStreamSynchronize(NULL)) return 1;
    nanosleep(&gap, NULL);
  }
  const char *pr = getenv("BENCH_PRINT");
  if (pr && *pr == '1') print_lines();
  return 0;
}

// scripts/bench: an empty-kernel launch loop, the launch-bound extreme.
// Built by scripts/bench/run.sh with
//   nvcc -O2 -cudart shared -arch=sm_90 -o empty_launch empty_launch.cu
// (-cudart shared: its runtime calls go through libcudart.so, where a preload can see them).
//
// After a warm-up, BENCH_BLOCKS (10) blocks of BENCH_LAUNCHES (10,000) launches on one stream,
// each block timed on the host around the launch loop alone (the empty kernels run faster than
// they are launched, so the queue never fills and the loop measures the host's cost per
// launch), with a stream synchronization after each block. Prints
//   RESULT workload=empty_launch us_per_launch=<median block> blocks=<each block's us>
//   THREADS <name>=<cpu ns>,...    per-thread CPU time by thread name, before exit
//   EXIT proc_cpu_ns=... main_cpu_ns=... hwm_kb=...   (atexit: after slack's exit flush)
// Every CUDA call is checked; a failure exits 1.
#include <cuda_runtime.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

__global__ void empty_kernel() {}

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "empty_launch: %s failed: %s\n", #x, cudaGetErrorString(e_));               \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static unsigned long long clk(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static long env_long(const char *name, long def) {
  const char *e = getenv(name);
  return e && atol(e) > 0 ? atol(e) : def;
}

// CPU time of every thread of this process, summed by thread name (schedstat: ns; else stat).
static void print_threads(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return;
  std::vector<std::pair<std::string, unsigned long long>> by;
  long tck = sysconf(_SC_CLK_TCK);
  while (struct dirent *e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    char path[256], name[64] = "?";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    if (FILE *f = fopen(path, "r")) {
      if (fgets(name, sizeof name, f)) name[strcspn(name, "\n")] = 0;
      fclose(f);
    }
    for (char *p = name; *p; p++)
      if (*p == ' ' || *p == ',' || *p == '=') *p = '_';
    unsigned long long ns = 0;
    snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f || fscanf(f, "%llu", &ns) != 1) {
      if (f) fclose(f);
      snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
      f = fopen(path, "r");
      char buf[1024];
      if (f && fgets(buf, sizeof buf, f)) {
        const char *q = strrchr(buf, ')');
        unsigned long long ut = 0, st = 0;
        if (q && sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
                        &st) == 2)
          ns = (ut + st) * 1000000000ull / (unsigned long long)tck;
      }
    }
    if (f) fclose(f);
    if (atoi(e->d_name) == getpid()) snprintf(name, sizeof name, "main");
    auto it = std::find_if(by.begin(), by.end(), [&](auto &x) { return x.first == name; });
    if (it == by.end())
      by.push_back({name, ns});
    else
      it->second += ns;
  }
  closedir(d);
  printf("THREADS");
  for (size_t i = 0; i < by.size(); i++)
    printf("%s%s=%llu", i ? "," : " ", by[i].first.c_str(), by[i].second);
  printf("\n");
  fflush(stdout);
}

static void at_exit(void) {
  long hwm = -1;
  if (FILE *f = fopen("/proc/self/status", "r")) {
    char line[256];
    while (fgets(line, sizeof line, f))
      if (!strncmp(line, "VmHWM:", 6)) hwm = atol(line + 6);
    fclose(f);
  }
  printf("EXIT proc_cpu_ns=%llu main_cpu_ns=%llu hwm_kb=%ld\n", clk(CLOCK_PROCESS_CPUTIME_ID),
         clk(CLOCK_THREAD_CPUTIME_ID), hwm);
  fflush(stdout);
}

int main() {
  long blocks = env_long("BENCH_BLOCKS", 10), n = env_long("BENCH_LAUNCHES", 10000);
  atexit(at_exit); // before the first CUDA call: runs after slack's and cudart's exit handlers
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  for (int i = 0; i < 2000; i++) {
    empty_kernel<<<1, 32, 0, s>>>();
    CHECK(cudaGetLastError());
  }
  CHECK(cudaStreamSynchronize(s));
  std::vector<double> us;
  for (long b = 0; b < blocks; b++) {
    unsigned long long t0 = clk(CLOCK_MONOTONIC);
    for (long i = 0; i < n; i++)
      empty_kernel<<<1, 32, 0, s>>>();
    unsigned long long t1 = clk(CLOCK_MONOTONIC);
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(s));
    us.push_back((double)(t1 - t0) / 1e3 / (double)n);
  }
  std::vector<double> sorted = us;
  std::sort(sorted.begin(), sorted.end());
  double med = sorted.size() % 2 ? sorted[sorted.size() / 2]
                                 : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  printf("RESULT workload=empty_launch us_per_launch=%.4f launches=%ld blocks=", med, blocks * n);
  for (size_t i = 0; i < us.size(); i++)
    printf("%s%.4f", i ? "," : "", us[i]);
  printf("\n");
  fflush(stdout);
  print_threads();
  CHECK(cudaStreamDestroy(s));
  return 0;
}

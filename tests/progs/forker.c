/* fork() and exec() under tracing (tests/e2e/robust.py). FORKER_CHILDREN children (default 20).
 *
 * FORKER_MODE=cold (default): the parent forks every child before it touches CUDA. Even children
 *   use CUDA (CHILD_LAUNCHES launches, one async copy, one stream synchronization); children with
 *   i % 4 == 0 leave with exit(0), i % 4 == 2 with _exit(0) right after their synchronization.
 *   Odd children never touch CUDA and leave with _exit(0) (i % 4 == 1, as a DataLoader worker
 *   does) or exit(0) (i % 4 == 3). The parent waits for all, then does the same work itself.
 * FORKER_MODE=warm: the parent uses CUDA first (tracing runs), and a second thread keeps
 *   launching while the main thread forks children that never touch CUDA: i % 3 == 0 leave with
 *   _exit(0) at once, i % 3 == 1 with exit(0), i % 3 == 2 sleep 60 ms (longer than the flush
 *   period the test sets), then _exit(0).
 * FORKER_MODE=exec: the parent uses CUDA, then forks two children: one execs build/progs/workload
 *   (WORKLOAD_ITERS=2, its report in PROG_REPORT.child), the other execs /bin/true.
 * FORKER_MODE=warm_cuda: the parent uses CUDA, a second thread makes 3000 launches (host events
 *   the writer still holds when the children are forked), the parent synchronizes, then forks
 *   children that use CUDA themselves and leave with exit(0). Real CUDA refuses CUDA calls in a
 *   child forked after cuInit; the stub lets them through (the child's slack finds the stub's
 *   CUPTI still subscribed by the parent and records host calls only). What is checked is that a
 *   child's trace holds nothing of the parent.
 *
 * What each process did goes to PROG_REPORT, one JSON object per line, written by the parent:
 *   {"proc":"parent"|"child","i":I,"pid":P,"cuda":0|1,"launches":N,"copies":N,"syncs":N,
 *    "end":"exit"|"_exit"|"exec"}
 * (a child's line is written when it has been reaped with exit status 0). stdout: one fixed line.
 */
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <sys/wait.h>
#include <time.h>

#include "progs.h"
#include "stub_api.h"

#define CHECK(call)                                                                                \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess)                                                                         \
      DIE("%s:%d: %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(e_));                     \
  } while (0)

#define BYTES (8u << 10)
#define MAX_CHILDREN 64

static int child_launches = 10;

/* launches, one copy, one stream synchronization: the work each CUDA process does */
static void cuda_work(const char *kname, int launches) {
  cudaKernel_t k = stubRegisterKernel(NULL, kname, 3000);
  if (!k) DIE("no stub device");
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  void *pinned, *dev;
  CHECK(cudaMallocHost(&pinned, BYTES));
  CHECK(cudaMalloc(&dev, BYTES));
  dim3 g = {2, 1, 1}, b = {64, 1, 1};
  for (int i = 0; i < launches; i++)
    CHECK(__cudaLaunchKernel(k, g, b, NULL, 0, s));
  CHECK(cudaMemcpyAsync(dev, pinned, BYTES, cudaMemcpyHostToDevice, s));
  CHECK(cudaStreamSynchronize(s));
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static volatile int stop_spinner;
static unsigned long long spinner_launches;
static cudaKernel_t spin_kernel;
static cudaStream_t spin_stream;

static void *spinner(void *arg) {
  (void)arg;
  dim3 g = {1, 1, 1}, b = {32, 1, 1};
  while (!__atomic_load_n(&stop_spinner, __ATOMIC_ACQUIRE)) {
    CHECK(__cudaLaunchKernel(spin_kernel, g, b, NULL, 0, spin_stream));
    spinner_launches++;
    if (spinner_launches % 64 == 0) sleep_ms(1);
  }
  return NULL;
}

static void reap(pid_t pid) {
  int st = 0;
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
    DIE("child %d failed (status 0x%x)", (int)pid, st);
}

static int mode_cold(int n) {
  pid_t pids[MAX_CHILDREN];
  for (int i = 0; i < n; i++) {
    pid_t p = fork();
    if (p < 0) DIE("fork failed");
    if (p == 0) {
      report_file = NULL; /* the parent's stream: never flushed from here */
      if (i % 2 == 0) {
        cuda_work("child_kernel", child_launches);
        if (i % 4 == 2) _exit(0);
        exit(0);
      }
      volatile unsigned x = 0; /* some CPU work, no CUDA */
      for (unsigned j = 0; j < 100000; j++)
        x += j;
      if (i % 4 == 1) _exit(0);
      exit(0);
    }
    pids[i] = p;
  }
  for (int i = 0; i < n; i++) {
    reap(pids[i]);
    int cuda = i % 2 == 0;
    report_line("{\"proc\":\"child\",\"i\":%d,\"pid\":%d,\"cuda\":%d,\"launches\":%d,"
                "\"copies\":%d,\"syncs\":%d,\"end\":\"%s\"}",
                i, (int)pids[i], cuda, cuda ? child_launches : 0, cuda, cuda,
                (i % 4 == 0 || i % 4 == 3) ? "exit" : "_exit");
  }
  cuda_work("parent_kernel", child_launches);
  report_line("{\"proc\":\"parent\",\"i\":-1,\"pid\":%d,\"cuda\":1,\"launches\":%d,\"copies\":1,"
              "\"syncs\":1,\"end\":\"exit\"}",
              (int)getpid(), child_launches);
  return 0;
}

static int mode_warm(int n) {
  cuda_work("parent_kernel", child_launches);
  spin_kernel = stubRegisterKernel(NULL, "spin_kernel", 1000);
  if (!spin_kernel) DIE("no stub device");
  CHECK(cudaStreamCreate(&spin_stream));
  pthread_t th;
  if (pthread_create(&th, NULL, spinner, NULL)) DIE("pthread_create failed");
  pid_t pids[MAX_CHILDREN];
  for (int i = 0; i < n; i++) {
    sleep_ms(5);
    pid_t p = fork();
    if (p < 0) DIE("fork failed");
    if (p == 0) {
      report_file = NULL;
      if (i % 3 == 0) _exit(0);
      if (i % 3 == 1) exit(0);
      sleep_ms(60);
      _exit(0);
    }
    pids[i] = p;
  }
  for (int i = 0; i < n; i++) {
    reap(pids[i]);
    report_line("{\"proc\":\"child\",\"i\":%d,\"pid\":%d,\"cuda\":0,\"launches\":0,\"copies\":0,"
                "\"syncs\":0,\"end\":\"%s\"}",
                i, (int)pids[i], i % 3 == 1 ? "exit" : "_exit");
  }
  __atomic_store_n(&stop_spinner, 1, __ATOMIC_RELEASE);
  pthread_join(th, NULL);
  CHECK(cudaStreamSynchronize(spin_stream));
  report_line("{\"proc\":\"parent\",\"i\":-1,\"pid\":%d,\"cuda\":1,\"launches\":%llu,"
              "\"copies\":1,\"syncs\":2,\"end\":\"exit\"}",
              (int)getpid(), child_launches + spinner_launches);
  return 0;
}

static int mode_warm_cuda(int n) {
  cuda_work("parent_kernel", child_launches);
  spin_kernel = stubRegisterKernel(NULL, "spin_kernel", 1000);
  if (!spin_kernel) DIE("no stub device");
  CHECK(cudaStreamCreate(&spin_stream));
  dim3 g = {1, 1, 1}, b = {32, 1, 1};
  for (int i = 0; i < 3000; i++)
    CHECK(__cudaLaunchKernel(spin_kernel, g, b, NULL, 0, spin_stream));
  CHECK(cudaStreamSynchronize(spin_stream));
  sleep_ms(20); /* the stub's CUPTI worker idle: its lock is free when we fork */
  pid_t pids[MAX_CHILDREN];
  for (int i = 0; i < n; i++) {
    pid_t p = fork();
    if (p < 0) DIE("fork failed");
    if (p == 0) {
      report_file = NULL;
      cuda_work("child_kernel", child_launches);
      exit(0);
    }
    reap(p); /* one at a time: a child's stub state is the parent's at fork */
    pids[i] = p;
  }
  for (int i = 0; i < n; i++)
    report_line("{\"proc\":\"child\",\"i\":%d,\"pid\":%d,\"cuda\":1,\"launches\":%d,"
                "\"copies\":1,\"syncs\":1,\"end\":\"exit\"}",
                i, (int)pids[i], child_launches);
  report_line("{\"proc\":\"parent\",\"i\":-1,\"pid\":%d,\"cuda\":1,\"launches\":%d,"
              "\"copies\":1,\"syncs\":2,\"end\":\"exit\"}",
              (int)getpid(), child_launches + 3000);
  return 0;
}

static int mode_exec(void) {
  cuda_work("parent_kernel", child_launches);
  char self[PATH_MAX], workload[PATH_MAX + 16], rep[PATH_MAX + 16] = "";
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) DIE("readlink /proc/self/exe failed");
  self[len] = 0;
  snprintf(workload, sizeof workload, "%s/workload", dirname(self));
  const char *r = getenv("PROG_REPORT");
  if (r && *r) snprintf(rep, sizeof rep, "%s.child", r);
  pid_t a = fork();
  if (a < 0) DIE("fork failed");
  if (a == 0) {
    report_file = NULL;
    setenv("PROG_REPORT", rep, 1);
    setenv("WORKLOAD_ITERS", "2", 1);
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, 1); /* the workload's stdout line is not ours */
    char *const argv[] = {workload, NULL};
    execv(workload, argv);
    _exit(127);
  }
  pid_t b = fork();
  if (b < 0) DIE("fork failed");
  if (b == 0) {
    execl("/bin/true", "true", (char *)NULL);
    _exit(127);
  }
  reap(a);
  reap(b);
  report_line("{\"proc\":\"child\",\"i\":0,\"pid\":%d,\"cuda\":1,\"launches\":-1,\"copies\":-1,"
              "\"syncs\":-1,\"end\":\"exec\"}",
              (int)a);
  report_line("{\"proc\":\"child\",\"i\":1,\"pid\":%d,\"cuda\":0,\"launches\":0,\"copies\":0,"
              "\"syncs\":0,\"end\":\"exec\"}",
              (int)b);
  report_line("{\"proc\":\"parent\",\"i\":-1,\"pid\":%d,\"cuda\":1,\"launches\":%d,\"copies\":1,"
              "\"syncs\":1,\"end\":\"exit\"}",
              (int)getpid(), child_launches);
  return 0;
}

int main(void) {
  int n = 20;
  const char *e = getenv("FORKER_CHILDREN");
  if (e && atoi(e) > 0 && atoi(e) <= MAX_CHILDREN) n = atoi(e);
  if ((e = getenv("CHILD_LAUNCHES")) && atoi(e) > 0) child_launches = atoi(e);
  const char *mode = getenv("FORKER_MODE");
  if (!mode || !*mode) mode = "cold";
  report_open();
  if (report_file) setvbuf(report_file, NULL, _IOLBF, 0);
  int rc;
  if (!strcmp(mode, "cold"))
    rc = mode_cold(n);
  else if (!strcmp(mode, "warm"))
    rc = mode_warm(n);
  else if (!strcmp(mode, "exec"))
    rc = mode_exec();
  else if (!strcmp(mode, "warm_cuda"))
    rc = mode_warm_cuda(n);
  else
    DIE("unknown FORKER_MODE %s", mode);
  if (report_file) fclose(report_file);
  printf("forker: %s mode, done\n", mode);
  return rc;
}

/* Unit tests of the classifier (analyzer/classify.c, steps.c) on hand-built timelines: one test
 * per rule of docs/CLASSIFICATION.md and per edge case (streams, threads, graphs, window edges,
 * a GPU shared by two processes, module loading, the tracer's cost, steps, the replay).
 * Times are written in microseconds (U(x) = x * 1000 ns). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "frames.h"
#include "join.h"
#include "steps.h"
#include "tb.h"

#define U(x) ((uint64_t)(x)*1000)

static int failures, checks;

#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    checks++;                                                                                      \
    if (!(cond)) {                                                                                 \
      failures++;                                                                                  \
      fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond);                                   \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fprintf(stderr, "\n");                                                                       \
    }                                                                                              \
  } while (0)
#define EQ(a, b)                                                                                   \
  CHECK((uint64_t)(a) == (uint64_t)(b), "%llu != %llu", (unsigned long long)(a),                   \
        (unsigned long long)(b))
#define NEAR(a, b, tol)                                                                            \
  CHECK((double)(a) - (double)(b) <= (double)(tol) && (double)(b) - (double)(a) <= (double)(tol),  \
        "%llu not within %llu of %llu", (unsigned long long)(a), (unsigned long long)(tol),        \
        (unsigned long long)(b))

/* ---- a hand-built trace (tests/tb.h) ---- */

static void kernel(struct tb *t, uint32_t corr, uint32_t device, uint64_t stream, double s,
                   double e, const char *name, uint32_t graph) {
  add(t, (struct slk_record){.kind = SLK_KERNEL,
                             .device = device,
                             .stream = stream,
                             .start = (uint64_t)(s * 1000),
                             .end = (uint64_t)(e * 1000),
                             .corr = corr,
                             .name = S(t, name),
                             .graph_id = graph});
}

static void memcpy_rec(struct tb *t, uint32_t corr, uint64_t stream, double s, double e,
                       uint8_t kind, uint8_t src) {
  add(t, (struct slk_record){.kind = SLK_MEMCPY,
                             .device = 0,
                             .stream = stream,
                             .start = (uint64_t)(s * 1000),
                             .end = (uint64_t)(e * 1000),
                             .corr = corr,
                             .bytes = 1 << 20,
                             .copy_kind = kind,
                             .src_kind = src,
                             .dst_kind = 3});
}

/* launch call [s, s + 2] us on tid, its kernel [ks, ke] on stream 7 of device 0 */
static void launch(struct tb *t, uint64_t tid, double s, double ks, double ke, const char *name) {
  uint32_t c = call(t, tid, s, s + 2, SLK_FN_LAUNCH, 1, 0, "launch_site");
  kernel(t, c, 0, 7, ks, ke, name, 0);
}

/* The exit probe of thread 1, from at + 100 to at + 200 us, CUPTI detached after it: the
 * untraced tail starts there (4 us a launch with CUPTI, 3 without) */
static void probe_detached(struct tb *t, double at) {
  add(t, (struct slk_record){.kind = SLK_PROBE,
                             .tid = 1,
                             .start = U(at + 100),
                             .end = U(at + 200),
                             .count = 512,
                             .bytes = 4000,
                             .result = 3000,
                             .flags = SLK_PROBE_DETACHED});
}

static struct cls_input input(struct tb *t, int cupti) {
  trace_data_sort(&t->td);
  return (struct cls_input){&t->td, "host", NULL, cupti, tb_str, t};
}

static void run(struct cls_input *in, size_t n, const struct cls_options *opt,
                struct cls_result *res) {
  /* the hand-built timelines test their own rules: no host slowdown assumed for them where they
   * have no tail (test_assumed_pace tests that) */
  struct cls_options plain;
  if (!opt) {
    cls_options_default(&plain);
    plain.host_slowdown = 1.0;
    opt = &plain;
  }
  if (cls_run(in, n, opt, res)) {
    fprintf(stderr, "cls_run failed\n");
    exit(2);
  }
  /* every GPU: the classes tile the window, and so do the segments */
  for (size_t i = 0; i < res->ngpus; i++) {
    const struct cls_gpu *g = &res->gpus[i];
    uint64_t sum = 0, other = 0, segs = 0;
    for (int c = 0; c < CLS_COUNT; c++)
      sum += g->time_ns[c];
    for (int w = 0; w < CLS_WHY_COUNT; w++)
      other += g->other_ns[w];
    EQ(sum, g->window_ns);
    EQ(other, g->time_ns[CLS_OTHER]);
    EQ(g->busy_ns + g->idle_ns, g->window_ns);
    for (size_t k = 0; k < g->nseg; k++) {
      segs += g->seg[k].end - g->seg[k].start;
      if (k) EQ(g->seg[k].start, g->seg[k - 1].end);
    }
    EQ(segs, g->window_ns);
    if (g->nseg) {
      EQ(g->seg[0].start, res->t0);
      EQ(g->seg[g->nseg - 1].end, res->t1);
    }
  }
}

static int has_site(const struct cls_gpu *g, int cls, const char *needle) {
  for (size_t k = 0; k < g->nsites[cls]; k++)
    if (strstr(g->sites[cls][k].site, needle)) return 1;
  return 0;
}

/* ---- the busy classes ---- */

static void test_busy_classes(void) {
  struct tb t = {0};
  uint32_t c1 = call(&t, 1, 0, 2, SLK_FN_LAUNCH, 1, 0, "a");
  uint32_t c2 = call(&t, 1, 3, 5, SLK_FN_LAUNCH, 1, 0, "b");
  uint32_t c3 = call(&t, 1, 6, 8, SLK_FN_MEMCPY_ASYNC, 1, 3, "c");
  kernel(&t, c1, 0, 7, 10, 50, "gemm", 0);
  kernel(&t, c2, 0, 9, 30, 70, "ncclDevKernel_AllReduce", 0); /* another stream, overlapping */
  memcpy_rec(&t, c3, 11, 60, 90, 8, 3);
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  EQ(r.ngpus, 1);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->window_ns, U(90));
  EQ(g->time_ns[CLS_COMPUTE], U(40));
  EQ(g->time_ns[CLS_COMMUNICATION], U(20));
  EQ(g->time_ns[CLS_COPY], U(20));
  EQ(g->other_ns[CLS_WHY_EDGE], U(10)); /* before the first GPU work */
  EQ(g->kernels, 2);
  EQ(g->memcpys, 1);
  CHECK(has_site(g, CLS_COMPUTE, "cudaLaunchKernel @ a"), "compute site");
  CHECK(has_site(g, CLS_COMMUNICATION, "@ b"), "communication site");
  CHECK(cls_is_comm_kernel("NCCLkernel") && !cls_is_comm_kernel("gemm"), "nccl names");
  cls_result_free(&r);
  tb_free(&t);
}

/* ---- idle: serialization ---- */

static void test_serialization(void) {
  struct tb t = {0};
  launch(&t, 1, 0, 10, 50, "k1");
  call(&t, 1, 6, 55, SLK_FN_STREAM_SYNC, 0, 0, "sync_site");
  launch(&t, 1, 100, 108, 150, "k2"); /* after 45 us of host work */
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->time_ns[CLS_SERIALIZATION], U(58)); /* 50..108: the sync, the host work, the launch */
  EQ(g->time_ns[CLS_COMPUTE], U(82));
  EQ(g->gaps, 2);
  CHECK(has_site(g, CLS_SERIALIZATION, "cudaStreamSynchronize @ sync_site"), "site");
  cls_result_free(&r);
  tb_free(&t);
}

/* --steps N over a loop whose iteration holds 4 optimizer steps (PPO's update: GPU run 166): 12
 * iterations of 4 minibatches (3 kernels each, a check read after the forward: the distribution's),
 * each iteration ended by a read of its statistics (a sync, then 300 us of host work). The
 * pattern's steps are the minibatches; --steps 12 groups every 4, from the phase after the read;
 * --steps 20 (48 minibatches are no 2 x 20, give or take a group) does not */
static void loop_of_minibatches(struct tb *t) {
  double b = 0;
  for (int it = 0; it < 12; it++) {
    for (int mb = 0; mb < 4; mb++) { /* each with a check read after its forward */
      launch(t, 1, b, b + 10, b + 100, "fwd");
      call(t, 1, b + 12, b + 101, SLK_FN_STREAM_SYNC, 0, 0, "check_site");
      launch(t, 1, b + 103, b + 110, b + 200, "bwd");
      launch(t, 1, b + 106, b + 200, b + 250, "opt");
      b += 250;
    }
    call(t, 1, b - 230, b, SLK_FN_STREAM_SYNC, 0, 0, "read_site");
    b += 300; /* the host's work on what it read */
  }
}

static void test_steps_grouped(void) {
  struct tb t = {0};
  loop_of_minibatches(&t);
  struct cls_input in = input(&t, 0);
  struct cls_options opt;
  cls_options_default(&opt);
  opt.host_slowdown = 1.0;
  struct cls_result r;
  run(&in, 1, &opt, &r);
  const struct cls_steps *sp = &r.gpus[0].steps;
  CHECK(strcmp(sp->source, "grouped") != 0, "no --steps: not grouped");
  size_t found = sp->count + sp->warmup + sp->trailing;
  CHECK(found >= 44, "the minibatches are the pattern's steps");
  cls_result_free(&r);
  opt.steps_want = 12;
  run(&in, 1, &opt, &r);
  sp = &r.gpus[0].steps;
  CHECK(!strcmp(sp->source, "grouped"), "--steps 12: grouped");
  found = sp->count + sp->warmup + sp->trailing;
  CHECK(found >= 11 && found <= 12, "--steps 12: 12 iterations");
  /* each step an iteration: 4 minibatches and the read's 300 us */
  CHECK(sp->step_ns >= U(1250) && sp->step_ns <= U(1350), "--steps 12: a step is an iteration");
  cls_result_free(&r);
  opt.steps_want = 20; /* 48 minibatches: no 2 x 20 (nor 3 x 20) within a group of it */
  run(&in, 1, &opt, &r);
  CHECK(strcmp(r.gpus[0].steps.source, "grouped") != 0, "--steps 20: not grouped");
  cls_result_free(&r);
  tb_free(&t);
}

/* torch.compile's generated code (Inductor's cache) is not the user's line: the frame that called
 * the compiled model is (GPU run 107) */
static void test_user_frame_inductor(void) {
  const char *stack =
      "/tmp/torchinductor_root/d3/cd3aukzupvxlu.py:15540 Runner.call\n"
      "/opt/v/lib/python3.12/site-packages/torch/_inductor/output_code.py:613 __call__\n"
      "/work/train.py:120 Run.step\n"
      "/work/train.py:200 <module>";
  size_t off, len;
  pyframes_user(stack, &off, &len);
  CHECK(len == strlen("/work/train.py:120 Run.step") &&
            !strncmp(stack + off, "/work/train.py:120 Run.step", len),
        "the caller of the compiled model is the user's line");
  /* the compiled backward on autograd's thread has no user frame: the generated code's line,
   * not the library's innermost */
  const char *bwd = "/opt/v/lib/python3.12/site-packages/torch/_ops.py:865 OpOverload.__call__\n"
                    "/tmp/torchinductor_root/x7/cx7.py:900 Runner.call\n"
                    "/opt/v/lib/python3.12/site-packages/torch/autograd/function.py:315 apply";
  pyframes_user(bwd, &off, &len);
  CHECK(!strncmp(bwd + off, "/tmp/torchinductor_root/x7/cx7.py:900 Runner.call", len) &&
            len == strlen("/tmp/torchinductor_root/x7/cx7.py:900 Runner.call"),
        "the generated code's line where no frame is the user's");
  CHECK(!pyframe_is_user("/home/u/.cache/torchinductor/ab/cab.py", 37), "a cache elsewhere");
  CHECK(pyframe_is_user("/work/train.py", 14), "the user's file");
}

/* The hand-over primitives a launching thread waits in for its producer (frames.c
 * pyframes_waits): a Future's result, a queue's get, a DataLoader's multiprocessing queue (a
 * selector's poll under multiprocessing/connection.py, GPU run 126); not the user's own wait (a
 * sleep or a request in the user's frame), not a wait deeper than 3 library frames, not a
 * socket's own poll. */
static void test_pyframes_waits(void) {
  static const struct {
    const char *stack;
    int waits;
  } cases[] = {
      {"/usr/lib/python3.12/threading.py:355 Condition.wait\n"
       "/usr/lib/python3.12/concurrent/futures/_base.py:451 Future.result\nloader.py:99 next",
       1},
      {"/usr/lib/python3.12/threading.py:355 Condition.wait\n"
       "/usr/lib/python3.12/queue.py:171 Queue.get\n"
       "/opt/v/lib/python3.12/site-packages/torch/utils/data/dataloader.py:1133 _try_get_data",
       1},
      {"/usr/lib/python3.12/selectors.py:415 _PollLikeSelector.select\n"
       "/usr/lib/python3.12/multiprocessing/connection.py:1136 wait\n"
       "/usr/lib/python3.12/multiprocessing/connection.py:440 Connection._poll\ntrain.py:70 step",
       1},
      {"loader.py:77 fetch\n/usr/lib/python3.12/threading.py:355 Condition.wait", 0},
      {"/usr/lib/python3.12/selectors.py:415 _PollLikeSelector.select\n"
       "/usr/lib/python3.12/socket.py:720 SocketIO.readinto\n"
       "/usr/lib/python3.12/http/client.py:292 HTTPResponse._read_status\nstore.py:40 get",
       0},
      {"/opt/v/lib/python3.12/site-packages/a.py:1 f\n/opt/v/lib/python3.12/site-packages/b.py:2 "
       "g\n"
       "/opt/v/lib/python3.12/site-packages/c.py:3 h\n/usr/lib/python3.12/queue.py:171 Queue.get",
       0},
      {"", 0},
      {"not a frame", 0},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
    CHECK(pyframes_waits(cases[k].stack) == cases[k].waits, "case %zu: %d", k,
          pyframes_waits(cases[k].stack));
}

/* A wait by polling (SLK_HOST_POLLED): a run of cudaEventQuery on thread tid over [s, e] us that
 * ended in "done" after 40 answers "not ready", as libslack folds it. */
static void poll_run(struct tb *t, uint64_t tid, double s, double e) {
  add(t, (struct slk_record){.kind = SLK_HOST,
                             .tid = tid,
                             .start = U(s),
                             .end = U(e),
                             .fn = SLK_FN_EVENT_QUERY,
                             .bytes = 40,
                             .callsite = S(t, "poll_site"),
                             .flags = SLK_HOST_POLLED});
}

/* The thread asked until the GPU was done, then worked 45 us before its next launch: the same
 * serialization as a stream synchronization (test_serialization), at the query's site. Asked
 * while the GPU still had the next kernel queued, or by a thread that then submits nothing (a
 * pinning thread; a caching allocator between two launches): no wait. */
static void test_poll_wait(void) {
  struct tb t = {0};
  launch(&t, 1, 0, 10, 50, "k1");
  poll_run(&t, 1, 6, 55);
  launch(&t, 1, 100, 108, 150, "k2");
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->time_ns[CLS_SERIALIZATION], U(58));
  CHECK(has_site(g, CLS_SERIALIZATION, "cudaEventQuery @ poll_site"), "the poll's site");
  cls_result_free(&r);
  tb_free(&t);

  /* asked about a long kernel until it was done, while the next one ran (queued before the
   * answer): the GPU never waited for this thread, so no wait, and no lead lost to it either
   * (as a wait it would charge the launch gaps after it to serialization: test_lost_lead) */
  struct tb q = {0};
  launch(&q, 1, 0, 10, 410, "long_a");
  launch(&q, 1, 20, 410, 450, "queued");
  poll_run(&q, 1, 30, 415);
  for (int k = 0; k < 5; k++)
    launch(&q, 1, 460 + 20 * k, 470 + 20 * k, 475 + 20 * k, "tiny");
  in = input(&q, 0);
  run(&in, 1, NULL, &r);
  g = &r.gpus[0];
  EQ(g->time_ns[CLS_SERIALIZATION], 0);
  EQ(g->lost_lead_ns, 0);
  CHECK(!has_site(g, CLS_SERIALIZATION, "poll_site"), "no wait with the GPU busy");
  cls_result_free(&r);
  tb_free(&q);

  /* a loop whose steps ask about their first kernel while the second runs, launch a third, and
   * end in a stream synchronization: the steps are the loop's (19 between its 20
   * synchronizations), and its serialization is the synchronization's */
  struct tb l = {0};
  for (int i = 0; i < 20; i++) {
    double b = i * 300;
    launch(&l, 1, b, b + 10, b + 50, "k1");
    launch(&l, 1, b + 3, b + 50, b + 90, "k2");
    poll_run(&l, 1, b + 6, b + 55);
    launch(&l, 1, b + 60, b + 90, b + 100, "k3");
    call(&l, 1, b + 62, b + 105, SLK_FN_STREAM_SYNC, 0, 0, "sync_site");
  }
  in = input(&l, 0);
  run(&in, 1, NULL, &r);
  g = &r.gpus[0];
  EQ(g->steps.count, 19);
  CHECK(has_site(g, CLS_SERIALIZATION, "sync_site"), "the loop's wait is its synchronization");
  CHECK(!has_site(g, CLS_SERIALIZATION, "poll_site"), "not its questions");
  cls_result_free(&r);
  tb_free(&l);

  struct tb o = {0}; /* another thread polled, and launches nothing */
  launch(&o, 1, 0, 10, 50, "k1");
  poll_run(&o, 2, 6, 55);
  launch(&o, 1, 100, 108, 150, "k2");
  in = input(&o, 0);
  run(&in, 1, NULL, &r);
  g = &r.gpus[0];
  CHECK(!has_site(g, CLS_SERIALIZATION, "poll_site"), "no wait on a thread that submits nothing");
  EQ(g->time_ns[CLS_SERIALIZATION], 0);
  cls_result_free(&r);
  tb_free(&o);
}

/* The lost lead (docs/CLASSIFICATION.md): a sync that waited for 400 us of queued work held the
 * host back by as much; the launch gaps after its own gap would have been covered by that lead:
 * serialization (shared with launch overhead), up to the gap's time at the replay's untraced
 * pace (less the GPU's own spacing). Once the host is as far ahead again as it ever got (the
 * queue's depth), the lead is regained: the launch gaps after that stay launch overhead. */
static void test_lost_lead(void) {
  struct tb t = {0};
  launch(&t, 1, 0, 10, 410, "long_a"); /* the host queues work 400 us ahead */
  launch(&t, 1, 20, 410, 450, "queued");
  call(&t, 1, 30, 455, SLK_FN_STREAM_SYNC, 0, 0, "item"); /* waits 420 us */
  for (int k = 0; k < 5; k++) /* a launch-bound phase: 20 us cycles, 5 us kernels */
    launch(&t, 1, 460 + 20 * k, 470 + 20 * k, 475 + 20 * k, "tiny");
  /* the host gets ahead by 500 us again, past the 400 us it had: the lead is regained */
  launch(&t, 1, 560, 570, 1100, "long_b");
  launch(&t, 1, 580, 1100, 1110, "queued_b");
  for (int k = 0; k < 3; k++) /* launch gaps that are launch overhead again */
    launch(&t, 1, 1115 + 20 * k, 1125 + 20 * k, 1130 + 20 * k, "tiny_b");
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  /* the sync's own gap (450..470) and the five launch gaps after it (475..490, ..., 555..570),
   * each at the replay's untraced pace (the hooks' cost off: a few ns less) */
  NEAR(g->time_ns[CLS_SERIALIZATION], U(20) + 5 * U(15), U(1));
  NEAR(g->lost_lead_ns, 5 * U(15), U(1));
  CHECK(has_site(g, CLS_SERIALIZATION, "cudaStreamSynchronize @ item"), "the sync's site");
  /* launch overhead: the three gaps after the host got ahead again (1110..1125, 1130..1145,
   * 1150..1165), and what the replay left of the five */
  NEAR(g->time_ns[CLS_LAUNCH_OVERHEAD], 3 * U(15), U(1));
  EQ(g->time_ns[CLS_SERIALIZATION] + g->time_ns[CLS_LAUNCH_OVERHEAD], U(20) + 8 * U(15));
  cls_result_free(&r);
  tb_free(&t);
}

/* A blocking copy's lost lead (session 24's holdout_tensors: a small tensor made on the device
 * from a Python list after the forward pass). Its pageable copy goes on the compute stream
 * behind 400 us of queued work, and the stream sync after it (a sync that waited for a copy to
 * the device: part of the copy) holds the host for all of it: the launch gaps after its own gap
 * would have been covered by that lead, the copy stall's (shared with launch overhead), not
 * serialization's. The same copy on a stream of its own, staged for as long while the compute
 * ran on and waited for alone, was queued behind nothing: no lead, and the launch gaps after
 * the compute are the launches' (launch overhead). */
static void test_lost_lead_blocking_copy(void) {
  for (int side = 0; side < 2; side++) {
    struct tb t = {0};
    launch(&t, 1, 0, 10, 410, "long_a"); /* the host queues work 400 us ahead */
    launch(&t, 1, 20, 410, 450, "queued");
    uint32_t c = call(&t, 1, 30, 32, SLK_FN_MEMCPY_ASYNC, 1, 1, "tensor");
    memcpy_rec(&t, c, side ? 9 : 7, side ? 440 : 450, side ? 441 : 451, 1, 1);
    call(&t, 1, 33, side ? 442 : 455, SLK_FN_STREAM_SYNC, 0, 0, "tensor"); /* waits for it */
    for (int k = 0; k < 5; k++) /* a launch-bound phase: 20 us cycles, 5 us kernels */
      launch(&t, 1, 460 + 20 * k, 470 + 20 * k, 475 + 20 * k, "tiny");
    struct cls_input in = input(&t, 0);
    struct cls_result r;
    run(&in, 1, NULL, &r);
    const struct cls_gpu *g = &r.gpus[0];
    EQ(g->lost_lead_ns, 0); /* (serialization's) */
    if (!side) {
      /* the copy's own gap (451..470) and the four launch gaps after it (475..490, ...,
       * 535..550), at the replay's pace */
      NEAR(g->time_ns[CLS_COPY_STALL], U(19) + 4 * U(15), U(2));
      CHECK(g->time_ns[CLS_LAUNCH_OVERHEAD] < U(2), "launch overhead %llu",
            (unsigned long long)g->time_ns[CLS_LAUNCH_OVERHEAD]);
    } else {
      /* its sync returned just before the gap (450..470: the copy's as before), but nothing it
       * waited for was queued ahead: the four launch gaps stay the launches' */
      NEAR(g->time_ns[CLS_COPY_STALL], U(20), U(1));
      NEAR(g->time_ns[CLS_LAUNCH_OVERHEAD], 4 * U(15), U(1));
    }
    cls_result_free(&r);
    tb_free(&t);
  }
}

/* A blocking copy the GPU ran alone (GPU run 162's holdout_wide `b`: a launch-bound host behind
 * the GPU copies its pinned batch with `.cuda()` and waits for it): nothing was queued ahead, but
 * copied asynchronously the host would have launched the next kernels while the copy ran, queued
 * behind it. So the copy's time is a lead, kept beyond the queue's depth (the host never got more
 * than 15 us ahead) by the copy's length: the launch gaps after it are the copy stall's, shared.
 * With a kernel running beside the copy (`busy`: a side-stream batch staged while the compute ran
 * on, GPU run 59) the host's wait took no lead. */
static void test_lost_lead_copy_alone(void) {
  for (int busy = 0; busy < 2; busy++) {
    struct tb t = {0};
    launch(&t, 1, 0, 8, busy ? 90 : 12, "last"); /* the host behind: launched, run at once */
    uint32_t c = call(&t, 1, 20, 22, SLK_FN_MEMCPY_ASYNC, 1, 1, "batch");
    memcpy_rec(&t, c, busy ? 9 : 7, 25, 85, 1, 2);          /* 60 us, pinned */
    call(&t, 1, 23, 87, SLK_FN_STREAM_SYNC, 0, 0, "batch"); /* waits for it */
    for (int k = 0; k < 6; k++) /* a launch-bound phase: 20 us cycles, 5 us kernels */
      launch(&t, 1, 95 + 20 * k, 105 + 20 * k, 110 + 20 * k, "tiny");
    struct cls_input in = input(&t, 0);
    struct cls_result r;
    run(&in, 1, NULL, &r);
    const struct cls_gpu *g = &r.gpus[0];
    uint64_t after = g->time_ns[CLS_COPY_STALL];
    if (!busy) /* the copy's own gap (85..105) and the launch gaps after it up to its 60 us */
      CHECK(after >= U(55) && after <= U(80), "copy stall %llu", (unsigned long long)after);
    else /* its own gap (90..105) only: the launch gaps stay the launches' */
      CHECK(after <= U(20) && g->time_ns[CLS_LAUNCH_OVERHEAD] >= 5 * U(14), "copy stall %llu",
            (unsigned long long)after);
    cls_result_free(&r);
    tb_free(&t);
  }
}

/* The lost lead's copies (GPU run 65's `loss.item()` before a side-stream prefetch): the sync
 * waited for 520 us of queued work; the next batch's pinned copy, issued after it on a stream
 * free since the last batch's copy, ran with no kernel alongside. With the lead the host would
 * have issued it under the kernels the sync drained: a copy that is serialization's too
 * (shared). The same copy on the compute stream could not have run sooner (its stream was busy
 * until the sync's gap): a copy alone. */
static void test_lost_lead_copy(void) {
  for (int side = 0; side < 2; side++) {
    uint64_t cs = side ? 9 : 7; /* the copies' stream */
    struct tb t = {0};
    uint32_t c = call(&t, 1, 0, 2, SLK_FN_MEMCPY_ASYNC, 1, 1, "prefetch");
    memcpy_rec(&t, c, cs, 5, 105, 1, 2);   /* the first batch, pinned, before any kernel */
    launch(&t, 1, 10, 105, 505, "long_a"); /* the host queues work 400 us ahead */
    launch(&t, 1, 20, 505, 545, "queued");
    call(&t, 1, 30, 550, SLK_FN_STREAM_SYNC, 0, 0, "item");           /* waits 520 us */
    c = call(&t, 1, 560, 562, SLK_FN_MEMCPY_ASYNC, 1, 1, "prefetch"); /* the next batch */
    memcpy_rec(&t, c, cs, 565, 665, 1, 2);
    launch(&t, 1, 570, 665, 900, "forward"); /* waits for the copy */
    struct cls_input in = input(&t, 0);
    struct cls_result r;
    run(&in, 1, NULL, &r);
    const struct cls_gpu *g = &r.gpus[0];
    /* the GPU ran both copies (the partition's busy time); the sync's own gap (545..565, at
     * the untraced pace) is serialization */
    NEAR(g->time_ns[CLS_COPY], U(200), U(1));
    NEAR(g->time_ns[CLS_SERIALIZATION], U(20), U(1));
    if (side) /* the second copy is the sync's too (shared with copy) */
      NEAR(g->lost_lead_ns, U(100), U(1));
    else
      EQ(g->lost_lead_ns, 0);
    cls_result_free(&r);
    tb_free(&t);
  }
}

/* The lost lead and a hand-over (GPU run 65's accuracy read between the forward and the
 * backward pass): after the sync the main thread calls backward(), and the autograd thread,
 * quiet since the last step, starts launching 565 us after the GPU ran dry. That gap ends with a
 * thread woken by the sync's process (a hand-over), not with unexplained host work: with the lead
 * its start would have been under the queued work, so it is the sync's serialization too. */
static void test_lost_lead_handoff(void) {
  struct tb t = {0};
  launch(&t, 2, 0, 5, 8, "last_backward"); /* the autograd thread, long before */
  for (int k = 0; k < 3; k++)              /* the host queues 1.5 ms of work, 1 ms ahead */
    launch(&t, 1, 10 + 4 * k, 20 + 500 * k, 520 + 500 * k, "forward");
  call(&t, 1, 30, 1525, SLK_FN_STREAM_SYNC, 0, 0, "accuracy"); /* waits 1.5 ms */
  launch(&t, 1, 1530, 1535, 1540, "zero_grad");
  call(&t, 1, 1700, 1702, SLK_FN_EVENT_RECORD, 0, 0, "backward_call"); /* hands over */
  launch(&t, 2, 2100, 2105, 2200, "backward"); /* outside CUDA for the whole 565 us gap */
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  /* the sync's own gap (1520..1535) and the hand-over's gap (1540..2105) */
  NEAR(g->time_ns[CLS_SERIALIZATION], U(15) + U(565), U(5));
  NEAR(g->lost_lead_ns, U(565), U(5));
  cls_result_free(&r);
  tb_free(&t);
}

/* A DataLoader with too few workers (GPU run 66): its pin-memory thread (event queries, no GPU
 * work) hands each batch over to the main thread as the workers deliver it, every 500 us; the
 * main thread copies it and launches 75 us of work, and the GPU starves for the rest. The
 * data-starvation what-if cuts the main thread's waits, and the pin thread's waits shrink by
 * the starvation they overlapped, down to its pace (its quick turns, 28 us): the step becomes
 * the GPU's and the main thread's work, not the workers' pace. */
static void test_loader_thread_fed(void) {
  struct tb t = {0};
  for (int k = 0; k < 14; k++) {
    double b = 500.0 * k;
    call(&t, 2, b, b + 2, SLK_FN_EVENT_QUERY, 0, 0, "pin");       /* the batch pinned */
    call(&t, 2, b + 30, b + 32, SLK_FN_EVENT_QUERY, 0, 0, "pin"); /* the next one's buffer */
    uint32_t c = call(&t, 1, b + 10, b + 12, SLK_FN_MEMCPY_ASYNC, 1, 1, "batch");
    memcpy_rec(&t, c, 7, b + 13, b + 20, 1, 2);
    launch(&t, 1, b + 22, b + 25, b + 100, "train");
  }
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  NEAR(g->steps.step_ns, U(500), U(1));
  CHECK(g->steps.per_step_ns[CLS_DATA_STARVATION] > U(350), "data starvation %llu",
        (unsigned long long)g->steps.per_step_ns[CLS_DATA_STARVATION]);
  CHECK(g->whatif[CLS_DATA_STARVATION].replay_ns < U(150), "without it %llu",
        (unsigned long long)g->whatif[CLS_DATA_STARVATION].replay_ns);
  cls_result_free(&r);
  tb_free(&t);
}

/* The same loader's thread whose first call comes late (GPU run 81: a pin-memory thread's first
 * recorded call came with an epoch's first batch, inside the steps): 30 iterations of 100 us,
 * every 6th waiting 1 ms more for its batch (an epoch start, timed in whole cycles); the pin
 * thread hands each batch over from iteration 6 on, 8 us before the main thread's copy. Nothing
 * before its first call holds it in the replay: its wait counted from the steps' start shrinks by
 * the starvation in it as the later waits do, else the first epoch's wait stayed in the
 * data-starvation what-if (one 1 ms wait over the steps). */
static void test_loader_thread_first_call(void) {
  struct tb t = {0};
  double b = 1000;
  for (int k = 0; k < 30; k++) {
    if (k && k % 6 == 0) b += 1000; /* the epoch's first batch */
    if (k >= 6) call(&t, 2, b - 8, b - 6, SLK_FN_EVENT_QUERY, 0, 0, "pin");
    uint32_t c = call(&t, 1, b, b + 2, SLK_FN_MEMCPY_ASYNC, 1, 1, "batch");
    memcpy_rec(&t, c, 7, b + 3, b + 10, 1, 2);
    for (int j = 0; j < 4; j++)
      launch(&t, 1, b + 12 + j * 3, b + 15 + j * 18, b + 33 + j * 18, "train");
    b += 100;
  }
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->steps.cycle, 6);
  CHECK(g->steps.per_step_ns[CLS_DATA_STARVATION] > U(120), "data starvation %llu",
        (unsigned long long)g->steps.per_step_ns[CLS_DATA_STARVATION]);
  CHECK(g->whatif[CLS_DATA_STARVATION].replay_ns < U(115), "without it %llu",
        (unsigned long long)g->whatif[CLS_DATA_STARVATION].replay_ns);
  cls_result_free(&r);
  tb_free(&t);
}

/* A loader's thread for each epoch (GPU run 81's default DataLoader: each epoch's iterator
 * starts its own pin-memory thread, and its workers): 30 iterations of 100 us, every 6th
 * waiting 1 ms more for its batch (then all 40x: a 40 ms wait); epoch n's pin thread (tid
 * 10 + n) makes its first call 48 us before the epoch's first copy, then one 8 us before each
 * copy. Its first call is held by the main thread's last call before it, which made the
 * iterator: the thread's hand-off where it came up soon enough after it (the 1 ms wait), else
 * graph.first_from (the 40 ms wait, past HANDOFF_MAX_NS: nothing else holds the call). Its wait
 * from there shrinks by the starvation in it as its later waits do: the what-if is the step
 * without the waits (99.5 us; 40x: 3.51 ms). Before, the hand-off kept each later epoch's wait
 * whole (220 us a step). Without one the wait was counted from the steps' start, less the
 * starvation before it: the same here (3.40 ms), not where the replay outruns the traced time
 * less the starvation (run 81: the host at its untraced tail's pace, 1.5x faster; the epoch
 * loop's what-if went from +28.5% to +10.5%). */
static void test_loader_thread_per_epoch(void) {
  for (int v = 0; v < 2; v++) {
    struct tb t = {0};
    double f = v ? 40 : 1, b = 1000 * f; /* the second: every time 40x */
    for (int k = 0; k < 30; k++) {
      int tid = 10 + k / 6;
      if (k % 6 == 0) {
        if (k) b += 1000 * f;
        call(&t, tid, b - 48 * f, b - 46 * f, SLK_FN_EVENT_QUERY, 0, 0, "pin"); /* the first */
      }
      call(&t, tid, b - 8 * f, b - 6 * f, SLK_FN_EVENT_QUERY, 0, 0, "pin");
      uint32_t c = call(&t, 1, b, b + 2 * f, SLK_FN_MEMCPY_ASYNC, 1, 1, "batch");
      memcpy_rec(&t, c, 7, b + 3 * f, b + 10 * f, 1, 2);
      for (int j = 0; j < 4; j++)
        launch(&t, 1, b + (12 + j * 3) * f, b + (15 + j * 18) * f, b + (33 + j * 18) * f, "train");
      b += 100 * f;
    }
    /* the second traced under CUPTI: 40 us of each 120 us launch call is its cost, which the
     * what-ifs take off */
    struct cls_input in = input(&t, v);
    struct cls_options opt;
    cls_options_default(&opt);
    opt.cupti_call_ns = 40000;
    opt.cupti_call_given = 1;
    struct cls_result r;
    run(&in, 1, &opt, &r);
    const struct cls_gpu *g = &r.gpus[0];
    EQ(g->steps.cycle, 6);
    CHECK(g->steps.per_step_ns[CLS_DATA_STARVATION] > (uint64_t)(U(150) * f),
          "%d: data starvation %llu", v,
          (unsigned long long)g->steps.per_step_ns[CLS_DATA_STARVATION]);
    CHECK(g->whatif[CLS_DATA_STARVATION].replay_ns < (uint64_t)(U(110) * f), "%d: without it %llu",
          v, (unsigned long long)g->whatif[CLS_DATA_STARVATION].replay_ns);
    cls_result_free(&r);
    tb_free(&t);
  }
}

/* A sync's what-if where the host then runs ahead of the GPU (GPU run 36's mixed job without its
 * copy stall): each step copies its batch on a stream of its own (pinned, asynchronous: the
 * step's first operation), launches 100 us of kernels on the compute stream and waits for them;
 * then 10 us of host work. Without the sync nothing holds the host: the copies start every
 * 15 us while the kernels queue behind one another, 100 us each. The step is the GPU's 100 us
 * (the backlog the replay leaves behind the steps counted), not the copies' 15 us. */
static void test_sync_removed_runahead(void) {
  struct tb t = {0};
  for (int k = 0; k < 20; k++) {
    double b = 1000 + 130.0 * k;
    uint32_t c = call(&t, 1, b, b + 2, SLK_FN_MEMCPY_ASYNC, 1, 1, "batch");
    memcpy_rec(&t, c, 9, b + 3, b + 6, 1, 2);
    launch(&t, 1, b + 3, b + 7, b + 107, "train");
    call(&t, 1, b + 6, b + 110, SLK_FN_STREAM_SYNC, 0, 0, "item");
  }
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  NEAR(g->steps.step_ns, U(130), U(1));
  CHECK(g->steps.per_step_ns[CLS_SERIALIZATION] > U(15), "serialization %llu",
        (unsigned long long)g->steps.per_step_ns[CLS_SERIALIZATION]);
  NEAR(g->whatif[CLS_SERIALIZATION].replay_ns, U(100), U(5));
  cls_result_free(&r);
  tb_free(&t);
}

/* empty_cache() in a loop (GPU run 55): cudaFree waits for the GPU (serialization, at the
 * free), then the next step allocates again: a gap in which the thread was mostly in cudaMalloc
 * is `other`, reason allocation, with the cudaMalloc as its site; a gap of a launch alone stays
 * launch overhead. */
static void test_free_then_malloc(void) {
  struct tb t = {0};
  launch(&t, 1, 0, 10, 50, "k1");
  call(&t, 1, 6, 55, SLK_FN_FREE, 0, 0, "free_site");
  call(&t, 1, 60, 90, SLK_FN_MALLOC, 0, 0, "malloc_a");
  launch(&t, 1, 92, 100, 140, "k2"); /* 50..100: the free's gap */
  call(&t, 1, 141, 171, SLK_FN_MALLOC, 0, 0, "malloc_b");
  launch(&t, 1, 173, 180, 220, "k3"); /* 140..180: mostly cudaMalloc */
  launch(&t, 1, 221, 228, 260, "k4"); /* 220..228: the launch alone */
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->time_ns[CLS_SERIALIZATION], U(50));
  CHECK(has_site(g, CLS_SERIALIZATION, "cudaFree @ free_site"), "free site");
  EQ(g->other_ns[CLS_WHY_ALLOC], U(40));
  CHECK(has_site(g, CLS_OTHER, "cudaMalloc @ malloc_b"), "malloc site");
  EQ(g->time_ns[CLS_LAUNCH_OVERHEAD], U(8));
  CHECK(!strcmp(cls_reason_name(CLS_WHY_ALLOC), "allocation"), "reason name");
  cls_result_free(&r);
  tb_free(&t);
}

/* A loop that gives device memory back each step (torch.cuda.empty_cache()) and allocates it
 * again in the next: the re-allocation is the free's cost, and keeping the memory (no free, no
 * allocation) is the what-if. Each 400 us step: kA (50 us of GPU), a cudaMalloc of 80 us on the
 * host while the GPU idles after kA, kB (100 us), then a cudaFree that waits for kB and frees for
 * 60 us, a second that frees for 40 us, and 100 us of host work before the next step. */
/* (page-locked host memory: the same loop with cudaMallocHost and cudaFreeHost, hooked since
 * session 38: a staging buffer pinned and freed each step, whose free waits for the device;
 * `other_free`: a device free of 1 us before each re-allocation, which a pinned allocation does
 * not take back: the allocation stays the pinned free's) */
static void free_realloc_loop(uint32_t free_fn, uint32_t alloc_fn, const char *free_site,
                              const char *alloc_site, int other_free) {
  struct tb t = {0};
  for (int s = 0; s < 8; s++) {
    double b = 1000 + s * 400.0;
    launch(&t, 1, b, b + 10, b + 60, "kA");
    if (other_free) call(&t, 1, b + 4, b + 5, SLK_FN_FREE, 0, 0, "device_free");
    call(&t, 1, b + 6, b + 86, alloc_fn, 0, 0, "realloc");
    launch(&t, 1, b + 88, b + 100, b + 200, "kB");
    call(&t, 1, b + 150, b + 260, free_fn, 0, 0, "empty_cache");
    call(&t, 1, b + 260, b + 300, free_fn, 0, 0, "empty_cache");
  }
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  const struct cls_steps *sp = &g->steps;
  EQ(sp->count, 7);
  EQ(sp->step_ns, U(400));
  /* 200..410 after the frees, and 60..86 in the cudaMalloc of the 6 steps after a free (the
   * first iteration's allocation is the first: `other`, allocation) */
  EQ(sp->per_step_ns[CLS_SERIALIZATION], (7 * U(210) + 6 * U(26)) / 7);
  CHECK(has_site(g, CLS_SERIALIZATION, free_site), "the free's site");
  CHECK(!has_site(g, CLS_SERIALIZATION, alloc_site), "not the allocation's");
  CHECK(!has_site(g, CLS_SERIALIZATION, "cudaFree @ device_free"), "not another memory's free");
  /* the rest of kA's gap: the launch of kB (and the first allocation) */
  EQ(sp->per_step_ns[CLS_OTHER], (7 * U(14) + U(26)) / 7);
  /* without the frees and the allocations after them the host's cycle is the step: 5 + 1 + 2 + 5
   * + 57 + 100 = 170 us of launches and host work (the GPU's 150 us and its latencies fit in
   * it); the first step keeps its first allocation (80 us) */
  NEAR(g->whatif[CLS_SERIALIZATION].replay_ns, (7 * U(170) + U(80)) / 7, U(3));
  cls_result_free(&r);
  tb_free(&t);
}

static void test_free_realloc_loop(void) {
  free_realloc_loop(SLK_FN_FREE, SLK_FN_MALLOC, "cudaFree @ empty_cache", "cudaMalloc @ realloc",
                    0);
  free_realloc_loop(SLK_FN_FREE_HOST, SLK_FN_MALLOC_HOST, "cudaFreeHost @ empty_cache",
                    "cudaMallocHost @ realloc", 1);
  free_realloc_loop(SLK_FN_CU_MEM_FREE_HOST, SLK_FN_CU_MEM_HOST_ALLOC,
                    "cuMemFreeHost @ empty_cache", "cuMemHostAlloc @ realloc", 0);
}

/* empty_cache() under CUDA's stream-ordered allocator (GPU runs 177 and 178): a device synchronize
 * that waits for kB, then cudaMemPoolTrimTo gives the pool's memory back for 60 us (trim 1) or
 * the host works 60 us outside CUDA instead (trim 0); every step allocates 20 times from the pool
 * (cudaMallocAsync, 2 us each) and once for 60 us (the memory mapped again). Keeping the memory
 * takes off the trim and that one allocation, not the pool's ordinary ones: the serialization
 * what-if is 120 us a step shorter with the trim than with the host work, not 160 (the first
 * timed step's allocation follows no trim inside the steps and is kept: 111.4 us). */
static uint64_t pool_trim_loop(int trim) {
  struct tb t = {0};
  for (int s = 0; s < 8; s++) {
    double b = 1000 + s * 500.0;
    launch(&t, 1, b, b + 10, b + 60, "kA");
    for (int k = 0; k < 20; k++)
      call(&t, 1, b + 4 + 3 * k, b + 6 + 3 * k, SLK_FN_MALLOC_ASYNC, 0, 0, "pool_alloc");
    call(&t, 1, b + 66, b + 126, SLK_FN_MALLOC_ASYNC, 0, 0, "pool_map");
    launch(&t, 1, b + 128, b + 140, b + 300, "kB");
    call(&t, 1, b + 150, b + 300, SLK_FN_DEVICE_SYNC, 0, 0, "empty_cache");
    if (trim) call(&t, 1, b + 300, b + 360, SLK_FN_MEM_POOL_TRIM_TO, 0, 0, "pool_trim");
  }
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->steps.count, 7);
  EQ(g->steps.step_ns, U(500));
  CHECK(has_site(g, CLS_SERIALIZATION, "cudaDeviceSynchronize @ empty_cache"), "the sync's site");
  uint64_t v = g->whatif[CLS_SERIALIZATION].replay_ns;
  cls_result_free(&r);
  tb_free(&t);
  return v;
}

static void test_pool_trim(void) {
  uint64_t with = pool_trim_loop(1), without = pool_trim_loop(0);
  CHECK(without > with, "the trim's what-if is shorter");
  /* (the first timed step's 60 us allocation follows no trim inside the steps: kept) */
  NEAR(without - with, (7 * U(120) - U(60)) / 7, U(3));
}

/* empty_cache() under PyTorch's expandable segments (PYTORCH_CUDA_ALLOC_CONF=
 * expandable_segments:True): a stream synchronize that waits for kB, then the segment's page
 * unmapped and released (cuMemUnmap, cuMemRelease: 15 us each; unmap 1) or the host works 30 us
 * outside CUDA instead (unmap 0); every step maps a page again while kA runs (cuMemCreate 20 us,
 * cuMemMap 10, cuMemSetAccess 20: no gap of the GPU's holds it, so only the sync's next call
 * tells that the sync gave memory back). Keeping the memory takes off the unmapping and the
 * mapping after it: the serialization what-if is 80 us a step shorter with the unmapping than
 * without (the first timed step's mapping follows no unmapping inside the steps and is kept: 72.9
 * us). */
static uint64_t expandable_loop(int unmap) {
  struct tb t = {0};
  for (int s = 0; s < 8; s++) {
    double b = 1000 + s * 500.0;
    launch(&t, 1, b, b + 10, b + 100, "kA");
    call(&t, 1, b + 12, b + 32, SLK_FN_CU_MEM_CREATE, 0, 0, "segment_map");
    call(&t, 1, b + 32, b + 42, SLK_FN_CU_MEM_MAP, 0, 0, "segment_map");
    call(&t, 1, b + 42, b + 62, SLK_FN_CU_MEM_SET_ACCESS, 0, 0, "segment_map");
    launch(&t, 1, b + 128, b + 140, b + 300, "kB");
    call(&t, 1, b + 150, b + 300, SLK_FN_STREAM_SYNC, 0, 0, "empty_cache");
    if (unmap) {
      call(&t, 1, b + 300, b + 315, SLK_FN_CU_MEM_UNMAP, 0, 0, "segment_unmap");
      call(&t, 1, b + 315, b + 330, SLK_FN_CU_MEM_RELEASE, 0, 0, "segment_unmap");
    }
  }
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->steps.count, 7);
  EQ(g->steps.step_ns, U(500));
  CHECK(has_site(g, CLS_SERIALIZATION, "cudaStreamSynchronize @ empty_cache"), "the sync's site");
  uint64_t v = g->whatif[CLS_SERIALIZATION].replay_ns;
  cls_result_free(&r);
  tb_free(&t);
  return v;
}

static void test_expandable_unmap(void) {
  uint64_t with = expandable_loop(1), without = expandable_loop(0);
  CHECK(without > with, "the unmapping's what-if is shorter");
  NEAR(without - with, (7 * U(80) - U(50)) / 7, U(3));
}

/* A loop of 20 kernels of 30 us a step (the last a CUDA graph's two nodes), each launched 10 us
 * of the host's own work after the last returned. Under CUDA_LAUNCH_BLOCKING=1 (blocking 1) every
 * launch returns 3 us after its kernel ends, the GPU idle from there to the next kernel: each
 * launch a wait for the GPU (serialization), whose fix (the launches queued ahead) leaves the GPU's
 * 600 us a step. Without it (blocking 0) the launches return after 2 us and the host runs ahead:
 * nothing waits. */
static void launch_blocking_loop(int blocking) {
  struct tb t = {0};
  double h = 1000;
  for (int s = 0; s < 8; s++)
    for (int k = 0; k < 20; k++) {
      double g = blocking ? h + 6 : 1000 + (s * 20 + k) * 30.0 + 6;
      double e = blocking ? g + 33 : h + 2;
      if (!blocking && g < h + 6) g = h + 6;
      /* the step's last launch a CUDA graph's: two nodes of 15 us */
      uint32_t c = call(&t, 1, h, e, k == 19 ? SLK_FN_GRAPH_LAUNCH : SLK_FN_LAUNCH, 1, 0,
                        k == 19 ? "graph_site"
                        : k     ? "launch_site"
                                : "step_launch");
      if (k == 19) {
        kernel(&t, c, 0, 7, g, g + 15, "g1", 3);
        kernel(&t, c, 0, 7, g + 15, g + 30, "g2", 3);
      } else {
        kernel(&t, c, 0, 7, g, g + 30, k ? "kB" : "kA", 0);
      }
      h = e + 10;
    }
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->launches_joined, 152); /* a graph's nodes are not its launch's own kernel */
  EQ(g->launches_waited, blocking ? 152 : 0);
  EQ(g->launch_blocking, blocking);
  EQ(g->steps.count, 7);
  if (blocking) {
    /* the step: 20 x (6 + 30 + 3 + 10) us; every gap the launches' wait's */
    NEAR(g->steps.step_ns, 20 * U(49), U(1));
    CHECK(g->steps.per_step_ns[CLS_SERIALIZATION] >= 20 * U(18), "the gaps are serialization");
    EQ(g->steps.per_step_ns[CLS_LAUNCH_OVERHEAD], 0);
    /* without the waits the host (5 + 10 us a launch) runs ahead of the GPU (30 us a kernel) */
    NEAR(g->whatif[CLS_SERIALIZATION].replay_ns, 20 * U(30), U(30));
  } else {
    EQ(g->steps.per_step_ns[CLS_SERIALIZATION], 0);
  }
  cls_result_free(&r);
  tb_free(&t);
}

/* Two threads under CUDA_LAUNCH_BLOCKING=1, each launching 20 kernels of 30 us a step on its own
 * stream, 10 us of host work between a launch's return and the next: their kernels overlap, so
 * the GPU is idle only where both threads are between kernels, and most waits leave no gap that
 * serialization holds. The switch's fix takes every launch's wait off (classify.c edits_apply):
 * each stream's kernels back to back, 600 us a step, where the waits kept 20 x 49 us. */
static void test_launch_blocking_two_threads(void) {
  struct tb t = {0};
  for (uint64_t tid = 1; tid <= 2; tid++) {
    double h = 1000 + (tid - 1) * 15.0;
    for (int s = 0; s < 8; s++)
      for (int k = 0; k < 20; k++) {
        double g = h + 6, e = g + 33;
        uint32_t c = call(&t, tid, h, e, SLK_FN_LAUNCH, 1, 0, tid == 1 ? "main" : "side");
        kernel(&t, c, 0, tid == 1 ? 7 : 8, g, g + 30, tid == 2 ? "kS" : k ? "kB" : "kA", 0);
        h = e + 10;
      }
  }
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->launch_blocking, 1);
  EQ(g->steps.count, 7);
  NEAR(g->steps.step_ns, 20 * U(49), U(1));
  NEAR(g->whatif[CLS_SERIALIZATION].replay_ns, 20 * U(30), U(40));
  cls_result_free(&r);
  tb_free(&t);
}

static void test_launch_blocking(void) {
  launch_blocking_loop(1);
  launch_blocking_loop(0);
  test_launch_blocking_two_threads();
}

/* A GPU-bound loop whose steps copy a batch from the host (pinned, asynchronous) and then copy it
 * on the device into a static buffer (as a CUDA-graph step's inputs are): only the transfer is
 * what the copies' fix (overlap on a side stream) takes off; the device-to-device copy stays. */
static void copy_host_transfer(int src_kind) {
  struct tb t = {0};
  for (int s = 0; s < 8; s++) {
    double h = 1000 + s * 20.0, g = 2000 + s * 140.0;
    uint32_t c = call(&t, 1, h, h + 2, SLK_FN_MEMCPY_ASYNC, 1, 1, "batch_copy");
    memcpy_rec(&t, c, 7, g, g + 20, 1, (uint8_t)src_kind); /* host to device */
    c = call(&t, 1, h + 3, h + 5, SLK_FN_MEMCPY_ASYNC, 1, 8, "static_copy");
    memcpy_rec(&t, c, 7, g + 20, g + 40, 8, 3); /* device to device */
    c = call(&t, 1, h + 6, h + 8, SLK_FN_LAUNCH, 1, 0, "launch_site");
    kernel(&t, c, 0, 7, g + 40, g + 140, "step_kernel", 0);
  }
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  const struct cls_steps *sp = &g->steps;
  EQ(sp->count, 7);
  EQ(sp->step_ns, U(140));
  EQ(sp->per_step_ns[CLS_COPY], U(40));
  EQ(sp->copy_host_per_step_ns, U(20));
  /* of which from pageable memory: none where the batch was pinned (the verdict's fix is then a
   * side stream, report_verdict_fix), all of it where it was not */
  EQ(sp->copy_pageable_per_step_ns, src_kind == 1 ? U(20) : 0);
  NEAR(g->whatif_copy_both.replay_ns, U(120), U(1)); /* the transfer overlapped */
  NEAR(g->whatif[CLS_COPY].replay_ns, U(100), U(1)); /* the class removed: every copy */
  cls_result_free(&r);
  tb_free(&t);
}

static void test_copy_host_transfer(void) {
  copy_host_transfer(2); /* pinned */
  copy_host_transfer(1); /* pageable */
}

/* The launching thread decides: another thread's sync does not make a gap serialization. */
static void test_other_thread(void) {
  struct tb t = {0};
  launch(&t, 1, 0, 5, 10, "k1");
  call(&t, 1, 3, 200, SLK_FN_DEVICE_SYNC, 0, 0, "sync_a");
  launch(&t, 2, 100, 105, 110, "k2"); /* thread 2 was outside CUDA from 10 to 100 */
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->time_ns[CLS_SERIALIZATION], 0);
  EQ(g->time_ns[CLS_LAUNCH_OVERHEAD], U(95));
  EQ(g->other_ns[CLS_WHY_EDGE], U(5) + U(90)); /* before k1; after k2 until the sync returns */
  cls_result_free(&r);
  tb_free(&t);
}

/* ---- idle: copy stall ---- */

static void test_copy_stall_pageable(void) {
  struct tb t = {0};
  launch(&t, 1, 0, 5, 10, "k0");
  uint32_t c = call(&t, 1, 3, 61, SLK_FN_MEMCPY_ASYNC, 1, 1, "copy_site"); /* pageable */
  memcpy_rec(&t, c, 7, 20, 60, 1, 1);
  launch(&t, 1, 63, 70, 100, "k1");
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->time_ns[CLS_COPY], U(40));
  EQ(g->time_ns[CLS_COPY_STALL], U(20)); /* 10..20 staging; 60..70 after it */
  EQ(g->time_ns[CLS_COMPUTE], U(35));
  CHECK(has_site(g, CLS_COPY_STALL, "cudaMemcpyAsync @ copy_site"), "site");
  cls_result_free(&r);
  tb_free(&t);
}

/* The copies a copy stall waited for (classify.c staged_copies): 20 steps of a kernel, a copy
 * from pageable memory of `copy_us` on the GPU that PyTorch waits for (the copy, then a
 * synchronize), then a kernel. Their mean GPU time says whether the stall is a batch's bandwidth
 * or the waits on a few bytes (report.c SMALL_COPY_NS: the small tensors' fix). */
static void staged_loop(double copy_us, size_t *n, uint64_t *ns) {
  struct tb t = {0};
  double h = 0;
  for (int k = 0; k < 20; k++) {
    launch(&t, 1, h, h + 5, h + 105, "k0");
    uint32_t c = call(&t, 1, h + 8, h + 12, SLK_FN_MEMCPY_ASYNC, 1, 1, "copy_site");
    memcpy_rec(&t, c, 7, h + 106, h + 106 + copy_us, 1, 1);
    call(&t, 1, h + 12, h + 108 + copy_us, SLK_FN_STREAM_SYNC, 0, 0, "sync_site");
    launch(&t, 1, h + 110 + copy_us, h + 120 + copy_us, h + 220 + copy_us, "k1");
    h += 230 + copy_us;
  }
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_steps *sp = &r.gpus[0].steps;
  CHECK(sp->per_step_ns[CLS_COPY_STALL] > U(5), "copy stall %llu per step",
        (unsigned long long)sp->per_step_ns[CLS_COPY_STALL]);
  *n = sp->copy_stall_copies;
  *ns = sp->copy_stall_copy_ns;
  cls_result_free(&r);
  tb_free(&t);
}

static void test_copy_stall_small(void) {
  size_t n;
  uint64_t ns;
  staged_loop(2, &n, &ns); /* a Python value made a CUDA tensor: 2 us */
  CHECK(n >= 15, "%zu copies", n);
  NEAR(ns, U(2), U(0.5));
  staged_loop(300, &n, &ns); /* a batch: 300 us */
  CHECK(n >= 15, "%zu copies", n);
  NEAR(ns, U(300), U(1));
}

/* A synchronize that waited for a host-to-device copy is part of the copy (PyTorch syncs after
 * every copy from pageable memory). */
static void test_sync_on_copy(void) {
  struct tb t = {0};
  launch(&t, 1, 0, 5, 10, "k0");
  uint32_t c = call(&t, 1, 11, 13, SLK_FN_MEMCPY_ASYNC, 1, 1, "copy_site"); /* pinned, async */
  memcpy_rec(&t, c, 7, 15, 40, 1, 2);
  call(&t, 1, 14, 42, SLK_FN_STREAM_SYNC, 0, 0, "sync_site");
  launch(&t, 1, 60, 65, 90, "k1");
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->time_ns[CLS_SERIALIZATION], 0);
  EQ(g->time_ns[CLS_COPY_STALL], U(25));     /* 40..65 */
  EQ(g->time_ns[CLS_DATA_STARVATION], U(5)); /* 10..15: ended by the input copy */
  CHECK(has_site(g, CLS_COPY_STALL, "cudaStreamSynchronize"), "site");
  cls_result_free(&r);
  tb_free(&t);
}

/* ---- idle: data starvation ---- */

static void test_data_starvation(void) {
  struct tb t = {0};
  launch(&t, 1, 0, 10, 20, "k1");
  uint32_t c = call(&t, 1, 200, 205, SLK_FN_MEMCPY_ASYNC, 1, 1, "input_copy"); /* pinned */
  memcpy_rec(&t, c, 7, 207, 220, 1, 2);
  launch(&t, 1, 221, 226, 250, "k2");
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->time_ns[CLS_DATA_STARVATION], U(187));
  EQ(g->time_ns[CLS_LAUNCH_OVERHEAD], U(6));
  EQ(g->time_ns[CLS_COPY], U(13));
  CHECK(has_site(g, CLS_DATA_STARVATION, "cudaMemcpyAsync @ input_copy"), "site");
  cls_result_free(&r);
  tb_free(&t);
}

/* Chained causes: a sync (the host waited 40 us while the GPU ran), then 600 us of loading that
 * ends in the next batch's copy. Only what the wait kept the host from working ahead (its 40 us
 * less the 5 us of a sync that does not wait) is serialization; the rest is data starvation. */
static void test_sync_then_loader(void) {
  struct tb t = {0};
  launch(&t, 1, 0, 10, 50, "k1");
  call(&t, 1, 10, 51, SLK_FN_STREAM_SYNC, 0, 0, "item_site");
  uint32_t c = call(&t, 1, 651, 656, SLK_FN_MEMCPY_ASYNC, 1, 1, "input_copy"); /* pinned */
  memcpy_rec(&t, c, 7, 658, 668, 1, 2);
  launch(&t, 1, 669, 672, 700, "k2");
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  /* the sync's own last 1 us in the gap, then 35 us of the host work after it */
  EQ(g->time_ns[CLS_SERIALIZATION], U(36));
  EQ(g->time_ns[CLS_DATA_STARVATION], U(600) - U(35) + U(7)); /* + the copy call, its latency */
  EQ(g->time_ns[CLS_LAUNCH_OVERHEAD], U(4));
  CHECK(g->time_ns[CLS_DATA_STARVATION] > g->time_ns[CLS_SERIALIZATION], "headline");
  CHECK(has_site(g, CLS_DATA_STARVATION, "cudaMemcpyAsync @ input_copy"), "site");
  CHECK(has_site(g, CLS_SERIALIZATION, "cudaStreamSynchronize @ item_site"), "sync site");
  cls_result_free(&r);
  tb_free(&t);
}

/* The seed's chain (lcs): a sync that waits 40 us, 700 us of loading, then the batch's copy
 * from pageable memory: serialization the wait's share of the host work after it, the rest
 * the batch's, the copy's staging its copy stall. */
static void test_sync_loader_pageable(void) {
  struct tb t = {0};
  launch(&t, 1, 0, 10, 50, "k1");
  call(&t, 1, 10, 51, SLK_FN_STREAM_SYNC, 0, 0, "item_site");
  uint32_t c = call(&t, 1, 751, 770, SLK_FN_MEMCPY_ASYNC, 1, 1, "batch_copy"); /* pageable */
  memcpy_rec(&t, c, 7, 755, 768, 1, 1);
  launch(&t, 1, 771, 774, 800, "k2");
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->time_ns[CLS_SERIALIZATION], U(36)); /* 40 us waited less the sync's 5, and 50..51 */
  EQ(g->time_ns[CLS_DATA_STARVATION], U(700) - U(35));
  EQ(g->time_ns[CLS_COPY_STALL], U(4) + U(6)); /* 751..755 staging, 768..774 after the copy */
  EQ(g->time_ns[CLS_COPY], U(13));
  CHECK(has_site(g, CLS_SERIALIZATION, "cudaStreamSynchronize @ item_site"), "sync site");
  CHECK(has_site(g, CLS_COPY_STALL, "cudaMemcpyAsync @ batch_copy"), "copy site");
  cls_result_free(&r);
  tb_free(&t);
}

/* Chained, with an untraced tail (SLACK_TAIL_MS): the host ran ahead of the GPU for 300 us of
 * launches before the sync; the tail shows its calls twice as fast without the tracer, so
 * untraced it would have reached the sync 150 us sooner and waited 150 us longer: that much more
 * of the host work after the sync is serialization. The tail itself is not classified. */
static void tail_loop(struct tb *t, int with_tail) {
  static char names[150][8];      /* all different: one step, not 150 of one kernel */
  for (int i = 0; i < 150; i++) { /* launches every 2 us, their kernels back to back */
    snprintf(names[i], sizeof names[i], "k%d", i);
    uint32_t c = call(t, 1, i * 2, i * 2 + 1, SLK_FN_LAUNCH, 1, 0, "fwd");
    kernel(t, c, 0, 7, 10 + i * 3, 10 + (i + 1) * 3, names[i], 0);
  }
  call(t, 1, 300, 461, SLK_FN_STREAM_SYNC, 0, 0, "item_site"); /* the GPU drains at 460 */
  uint32_t c = call(t, 1, 1061, 1066, SLK_FN_MEMCPY_ASYNC, 1, 1, "input_copy");
  memcpy_rec(t, c, 7, 1068, 1078, 1, 2);
  launch(t, 1, 1079, 1082, 1100, "k2");
  if (!with_tail) return;
  add(t, (struct slk_record){.kind = SLK_PROBE,
                             .tid = 1,
                             .start = U(1200),
                             .end = U(1300),
                             .count = 512,
                             .bytes = 4000,
                             .result = 3000,
                             .flags = SLK_PROBE_DETACHED});
  for (int i = 0; i < 150; i++) /* the tail: the same launches, every 1 us, no GPU record */
    call(t, 1, 1400 + i, 1400 + i + 0.5, SLK_FN_LAUNCH, 1, 0, "fwd");
}

static void test_sync_then_loader_tail(void) {
  uint64_t ser[2], starve[2];
  for (int with_tail = 0; with_tail < 2; with_tail++) {
    struct tb t = {0};
    tail_loop(&t, with_tail);
    struct cls_input in = input(&t, 1);
    struct cls_result r;
    run(&in, 1, NULL, &r);
    const struct cls_gpu *g = &r.gpus[0];
    ser[with_tail] = g->time_ns[CLS_SERIALIZATION];
    starve[with_tail] = g->time_ns[CLS_DATA_STARVATION];
    EQ(g->window_ns, U(1100)); /* the probe and the tail stay out */
    EQ(g->tracer.tail_calls, with_tail ? 150 : 0);
    if (with_tail) {
      EQ(g->tracer.tail_traced_ns, U(2));
      EQ(g->tracer.tail_untraced_ns, U(1));
      CHECK(g->tracer.tail_factor > 1.99 && g->tracer.tail_factor < 2.01, "factor %f",
            g->tracer.tail_factor);
      EQ(g->tracer.lead_ns, U(150));
    }
    cls_result_free(&r);
    tb_free(&t);
  }
  /* waited 160 us less the sync's own 5 us, and its last 1 us in the gap */
  EQ(ser[0], U(156));
  EQ(ser[1], U(306));
  EQ(starve[0] - starve[1], U(150)); /* the gap's other part stays the batch's */
}

/* A launch-bound loop with an untraced tail: traced, a launch every 10 us (2 us in the call);
 * in the tail every 5 us. The replay at the tail's pace keeps half the host's time per launch, so
 * the launch overhead without the tracer is the step at that pace less its kernels. And a tail
 * at the traced pace (every 10 us: the tracer did not slow the host, factor 1, GPU run 81's epoch
 * loop without a cause): the point at that pace all the same, the step as traced less its
 * kernels, not the range's upper end with "no untraced tail". */
static void test_launch_storm_tail(void) {
  for (int same = 0; same < 2; same++) {
    struct tb t = {0};
    static const char *const names[4] = {"ka", "kb", "kc", "kd"};
    for (int i = 0; i < 200; i++) {
      uint32_t c = call(&t, 1, i * 10, i * 10 + 2, SLK_FN_LAUNCH, 1, 0, "loop");
      kernel(&t, c, 0, 7, i * 10 + 3, i * 10 + 4, names[i % 4], 0);
    }
    add(&t, (struct slk_record){.kind = SLK_PROBE,
                                .tid = 1,
                                .start = U(2100),
                                .end = U(2200),
                                .count = 512,
                                .bytes = 4000,
                                .result = 3000,
                                .flags = SLK_PROBE_DETACHED});
    double every = same ? 10 : 5;
    for (int i = 0; i < 200; i++)
      call(&t, 1, 2300 + i * every, 2300 + i * every + 1, SLK_FN_LAUNCH, 1, 0, "loop");
    struct cls_input in = input(&t, 1);
    struct cls_result r;
    run(&in, 1, NULL, &r);
    const struct cls_gpu *g = &r.gpus[0];
    const struct cls_steps *sp = &g->steps;
    double want = same ? 1.0 : 2.0;
    CHECK(g->tracer.tail_factor > want - 0.01 && g->tracer.tail_factor < want + 0.01,
          "%d: factor %f", same, g->tracer.tail_factor);
    EQ(sp->step_ns, U(40)); /* 4 launches of 10 us */
    CHECK(sp->launch_tail_ok, "%d: a point at the tail's pace", same);
    if (!same) {
      /* at the tail's pace a step is 4 x 5 us; without its launch gaps about its 4 kernels */
      NEAR(g->corrected_step_ns, U(20), U(1));
      CHECK(sp->launch_tail_per_step_ns >= U(14) && sp->launch_tail_per_step_ns <= U(17),
            "launch overhead at the tail's pace %llu",
            (unsigned long long)sp->launch_tail_per_step_ns);
      CHECK(sp->launch_tail_per_step_ns * 2 < sp->per_step_ns[CLS_LAUNCH_OVERHEAD], "not below");
    } else {
      /* the step as traced (the calls' 2 us less CUPTI's cost), less about its 4 kernels */
      CHECK(sp->launch_tail_per_step_ns >= U(30) &&
                sp->launch_tail_per_step_ns <= sp->per_step_ns[CLS_LAUNCH_OVERHEAD],
            "at the traced pace %llu of %llu", (unsigned long long)sp->launch_tail_per_step_ns,
            (unsigned long long)sp->per_step_ns[CLS_LAUNCH_OVERHEAD]);
    }
    cls_result_free(&r);
    tb_free(&t);
  }
}

/* The same launch-bound loop without a tail: its pace untraced is unknown, so the calls' slowdown
 * is assumed (TAIL_ASSUMED_FACTOR: the H200's tails' median), the replay without the tracer runs
 * them that much faster, and launch overhead has a point at that pace with the range the tails'
 * quartiles give it. A slowdown the user gives has no range; 1 assumes none (the replay then takes
 * out CUPTI's cost per call only, and launch overhead is the range's upper end). */
static void test_assumed_pace(void) {
  uint64_t step_at[3] = {0, 0, 0};
  for (int mode = 0; mode < 3; mode++) { /* 0: the default, 1: --host-slowdown 2, 2: 1 */
    struct tb t = {0};
    static const char *const names[4] = {"ka", "kb", "kc", "kd"};
    for (int i = 0; i < 200; i++) {
      uint32_t c = call(&t, 1, i * 10, i * 10 + 2, SLK_FN_LAUNCH, 1, 0, "loop");
      kernel(&t, c, 0, 7, i * 10 + 3, i * 10 + 4, names[i % 4], 0);
    }
    struct cls_input in = input(&t, 1);
    struct cls_options opt;
    cls_options_default(&opt);
    opt.cupti_call_ns = 0; /* the calls' time is the host's: the pace alone moves the replay */
    opt.cupti_call_given = 1;
    if (mode) {
      opt.host_slowdown = mode == 1 ? 2.0 : 1.0;
      opt.host_slowdown_given = 1;
    }
    struct cls_result r;
    run(&in, 1, &opt, &r);
    const struct cls_gpu *g = &r.gpus[0];
    const struct cls_steps *sp = &g->steps;
    EQ(sp->step_ns, U(40));
    EQ(g->tracer.tail_calls, 0);
    step_at[mode] = g->corrected_step_ns;
    if (mode == 2) {
      CHECK(g->tracer.pace_assumed == 0.0 && !sp->launch_tail_ok, "none assumed: %f",
            g->tracer.pace_assumed);
      NEAR(g->corrected_step_ns, U(40), U(1));
    } else {
      double f = mode ? 2.0 : TAIL_ASSUMED_FACTOR;
      CHECK(g->tracer.pace_assumed == f && g->tracer.pace_given == mode, "%d: assumed %f", mode,
            g->tracer.pace_assumed);
      EQ(g->tracer.pace_traced_ns, U(10));
      CHECK(sp->launch_tail_ok && sp->launch_tail_assumed, "%d: a point at the assumed pace", mode);
      /* each 10 us cycle that much faster: the step 40 / f, its launch overhead that less about
       * its 4 kernels */
      NEAR(g->corrected_step_ns, (uint64_t)(U(40) / f), U(1));
      CHECK(sp->launch_tail_per_step_ns + U(6) >= (uint64_t)(U(40) / f) &&
                sp->launch_tail_per_step_ns < (uint64_t)(U(40) / f),
            "%d: launch overhead at the assumed pace %llu", mode,
            (unsigned long long)sp->launch_tail_per_step_ns);
      if (!mode)
        CHECK(sp->launch_assumed_lo_per_step_ns < sp->launch_tail_per_step_ns &&
                  sp->launch_tail_per_step_ns < sp->launch_assumed_hi_per_step_ns,
              "the range %llu .. %llu around %llu",
              (unsigned long long)sp->launch_assumed_lo_per_step_ns,
              (unsigned long long)sp->launch_assumed_hi_per_step_ns,
              (unsigned long long)sp->launch_tail_per_step_ns);
      if (!mode) /* its ends: the same replay at the tails' 95th and 5th percentiles */
        CHECK(sp->launch_assumed_lo_per_step_ns + U(6) >= (uint64_t)(U(40) / TAIL_ASSUMED_P95) &&
                  sp->launch_assumed_lo_per_step_ns < (uint64_t)(U(40) / TAIL_ASSUMED_P95) &&
                  sp->launch_assumed_hi_per_step_ns + U(6) >=
                      (uint64_t)(U(40) / TAIL_ASSUMED_P05) &&
                  sp->launch_assumed_hi_per_step_ns < (uint64_t)(U(40) / TAIL_ASSUMED_P05),
              "the range's ends %llu .. %llu: at %.2fx and %.2fx",
              (unsigned long long)sp->launch_assumed_lo_per_step_ns,
              (unsigned long long)sp->launch_assumed_hi_per_step_ns, TAIL_ASSUMED_P95,
              TAIL_ASSUMED_P05);
      else
        EQ(sp->launch_assumed_hi_per_step_ns, 0); /* given: no range */
    }
    cls_result_free(&r);
    tb_free(&t);
  }
  CHECK(step_at[1] < step_at[0] && step_at[0] < step_at[2], "steps %llu %llu %llu",
        (unsigned long long)step_at[1], (unsigned long long)step_at[0],
        (unsigned long long)step_at[2]);
}

/* Each thread at its own pace in the tail (GPU run 48: a GPT step's autograd thread 2.2x slower
 * traced, its main thread 1.36x, the pooled medians 1.96x). Thread 1 runs the launch loop of
 * test_launch_storm_tail, at the same pace traced and in the tail (the tracer did not slow it);
 * thread 2 makes more calls, 5 us apart traced and 1.25 us in the tail. The pooled medians
 * say 4x; the loop's thread keeps its pace in the replay, so its step stays. */
static void test_tail_per_thread(void) {
  struct tb t = {0};
  static const char *const names[4] = {"ka", "kb", "kc", "kd"};
  for (int i = 0; i < 300; i++) /* thread 2 first: event records, no GPU work */
    call(&t, 2, i * 5, i * 5 + 0.5, SLK_FN_EVENT_RECORD, 0, 0, "bg");
  for (int i = 0; i < 200; i++) {
    uint32_t c = call(&t, 1, 2000 + i * 10, 2000 + i * 10 + 2, SLK_FN_LAUNCH, 1, 0, "loop");
    kernel(&t, c, 0, 7, 2000 + i * 10 + 3, 2000 + i * 10 + 4, names[i % 4], 0);
  }
  add(&t, (struct slk_record){.kind = SLK_PROBE,
                              .tid = 1,
                              .start = U(4100),
                              .end = U(4200),
                              .count = 512,
                              .bytes = 4000,
                              .result = 3000,
                              .flags = SLK_PROBE_DETACHED});
  for (int i = 0; i < 200; i++)
    call(&t, 1, 4300 + i * 10, 4300 + i * 10 + 2, SLK_FN_LAUNCH, 1, 0, "loop");
  for (int i = 0; i < 300; i++)
    call(&t, 2, 6400 + i * 1.25, 6400 + i * 1.25 + 0.5, SLK_FN_EVENT_RECORD, 0, 0, "bg");
  struct cls_input in = input(&t, 1);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  const struct cls_tracer *tr = &g->tracer;
  CHECK(tr->tail_factor > 3.9 && tr->tail_factor < 4.1, "pooled factor %f", tr->tail_factor);
  EQ(tr->tail_nthreads, 2);
  EQ(tr->tail_threads[0].tid, 2); /* the most traced intervals first */
  CHECK(tr->tail_threads[0].factor > 3.9 && tr->tail_threads[0].factor < 4.1, "thread 2 %f",
        tr->tail_threads[0].factor);
  EQ(tr->tail_threads[1].tid, 1);
  CHECK(tr->tail_threads[1].factor > 0.99 && tr->tail_threads[1].factor < 1.01, "thread 1 %f",
        tr->tail_threads[1].factor);
  EQ(g->steps.step_ns, U(40));
  /* the loop's thread at its own pace: its step without the tracer is 40 us less the 4 launches'
   * measured cost, 1.05 us each (the pooled 4x made it about 22 us) */
  NEAR(g->corrected_step_ns, 35800, 200);
  cls_result_free(&r);
  tb_free(&t);
}

/* The loop's own iterations in the tail (analyzer/cls_pace.c). 40 iterations of 8 launches
 * (sites s0..s7, 1 us kernels: a launch-bound loop) whose calls come 10 us apart but for two
 * stretches of 400 us of host work (860 us an iteration), then the exit probe and a tail of 40
 * more iterations, the short gaps `sh` and the long ones `lg`. The threads' pace is the median
 * time between calls (10 us traced), which says nothing of the 400 us stretches. */
static void tail_iter_loop(struct tb *t, double sh, double lg) {
  static const char *const site[8] = {"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"};
  static const char *const name[8] = {"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"};
  const double gap[8] = {10, 10, 10, 400, 10, 10, 400, 10};
  double at = 0;
  for (int i = 0; i < 40; i++)
    for (int j = 0; j < 8; j++) {
      uint32_t c = call(t, 1, at, at + 2, SLK_FN_LAUNCH, 1, 0, site[j]);
      kernel(t, c, 0, 7, at + 3, at + 4, name[j], 0);
      at += gap[j];
    }
  probe_detached(t, at);
  at += 300;
  for (int i = 0; i < 40; i++)
    for (int j = 0; j < 8; j++) {
      call(t, 1, at, at + 2, SLK_FN_LAUNCH, 1, 0, site[j]);
      at += gap[j] == 10 ? sh : lg;
    }
}

static void test_tail_iterations(void) {
  /* the tail: 8 us between calls (the threads' pace says 1.25x), 150 us stretches: 348 us an
   * iteration, where the replay at the pace's 1.25x says about 690: the replay's host is fitted
   * to the tail's iterations */
  struct tb t = {0};
  tail_iter_loop(&t, 8, 150);
  struct cls_input in = input(&t, 1);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  const struct cls_tracer *tr = &g->tracer;
  NEAR(g->steps.step_ns, U(860), U(5));
  NEAR(tr->iter_traced_ns, U(860), U(1));
  NEAR(tr->iter_untraced_ns, U(348), U(1));
  CHECK(tr->iter_nuntraced >= 30, "tail iterations %llu", (unsigned long long)tr->iter_nuntraced);
  EQ(tr->iter_calls, 8);
  CHECK(tr->iter_replayed_ns > U(600), "replayed at the pace %llu",
        (unsigned long long)tr->iter_replayed_ns);
  EQ(tr->gain_fit, 2);
  NEAR(g->corrected_step_ns, U(348), U(12));
  cls_result_free(&r);
  tb_free(&t);

  /* controls: the tail at the pace the medians say (8 and 320 us: 688 an iteration) is within
   * its own quartiles, no fit; a tail slower than the trace (12 and 500 us) is not the tracer's:
   * no fit, the step without the tracer as the threads' pace gives it (no slowdown: 860 less
   * the tracer's cost per launch) */
  const double sh[2] = {8, 12}, lg[2] = {320, 500};
  const int fit[2] = {1, -2};
  const double step[2] = {688, 860};
  for (int k = 0; k < 2; k++) {
    struct tb u = {0};
    tail_iter_loop(&u, sh[k], lg[k]);
    in = input(&u, 1);
    run(&in, 1, NULL, &r);
    g = &r.gpus[0];
    EQ(g->tracer.gain_fit, fit[k]);
    CHECK(g->tracer.gain == 1.0, "gain %f", g->tracer.gain);
    NEAR(g->corrected_step_ns, U(step[k]), U(step[k] * 0.03));
    cls_result_free(&r);
    tb_free(&u);
  }
}

/* A CUDA graph launch whose call lasts 20 us while its first nodes already run, 1 us apart: the
 * gaps between nodes of one launch were queued with them (other, queued), not launch overhead;
 * the gap before the launch's first node is the launch's. */
static void test_graph_nodes_queued(void) {
  struct tb t = {0};
  launch(&t, 1, 0, 3, 10, "k0");
  uint32_t c = call(&t, 1, 12, 32, SLK_FN_GRAPH_LAUNCH, 1, 0, "replay");
  static const char *const names[4] = {"g1", "g2", "g3", "g4"};
  for (int i = 0; i < 4; i++) /* 15-17, 18-20, 21-23, 24-26: 1 us gaps inside the call */
    kernel(&t, c, 0, 7, 15 + i * 3, 17 + i * 3, names[i], 5);
  launch(&t, 1, 33, 36, 40, "k5");
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->other_ns[CLS_WHY_QUEUED], U(3)); /* the three gaps between the graph's nodes */
  /* 10..15: the host in the graph's launch call; 26..36: after it, the next launch */
  EQ(g->time_ns[CLS_LAUNCH_OVERHEAD], U(5) + U(10));
  cls_result_free(&r);
  tb_free(&t);
}

/* The long stretches outside CUDA compared by rank: one call (the batch's copy) ends stretches
 * of two kinds, 6 short ones (2 ms: building the model) and 12 loads (300 ms) traced, 9 short
 * ones and 5 loads (250 ms) in the tail. Medians would compare a load with a short one (150x);
 * by rank the loads meet loads and the short ones short ones: the loads 1.2x slower traced. */
static void test_tail_long_mixture(void) {
  struct tb t = {0};
  double at = 0;
  for (int i = 0; i < 18; i++) { /* traced: short, short, load, load, load, ... */
    double gap = i % 3 == 0 ? 2000 : 300000;
    launch(&t, 1, at, at + 2, at + 3, "k");
    at += 10 + gap;
    uint32_t c = call(&t, 1, at, at + 5, SLK_FN_MEMCPY_ASYNC, 1, 0, "batch_copy");
    memcpy_rec(&t, c, 7, at + 1, at + 4, 1, 2);
    at += 10;
  }
  probe_detached(&t, at);
  at += 300;
  for (int i = 0; i < 14; i++) { /* the tail: 9 short ones, then 5 loads of 250 ms */
    call(&t, 1, at, at + 2, SLK_FN_LAUNCH, 1, 0, "k_site");
    at += 10 + (i < 9 ? 2000 : 250000);
    call(&t, 1, at, at + 5, SLK_FN_MEMCPY_ASYNC, 1, 0, "batch_copy");
    at += 10;
  }
  struct cls_input in = input(&t, 1);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_tracer *tr = &r.gpus[0].tracer;
  EQ(tr->tail_nlong_traced, 18);
  EQ(tr->tail_nlong_untraced, 14);
  CHECK(tr->tail_factor_long > 1.19 && tr->tail_factor_long < 1.21, "long factor %f",
        tr->tail_factor_long);
  /* reported, not applied: the replay without the tracer keeps the loads as traced (a few
   * seconds of tail cannot tell the tracer's cost from the machine's drift, GPU run 39) */
  const struct cls_gpu *g = &r.gpus[0];
  CHECK(g->steps.step_ns > 0 && (double)g->corrected_step_ns > 0.97 * (double)g->steps.step_ns,
        "corrected step %llu of a traced %llu", (unsigned long long)g->corrected_step_ns,
        (unsigned long long)g->steps.step_ns);
  cls_result_free(&r);
  tb_free(&t);
}

/* The last record added: its Python frames (a hooked call's pystack). */
static void with_py(struct tb *t, const char *frames) {
  struct trace_array *a = &t->td.kind[SLK_HOST];
  a->v[a->n - 1].pystack = S(t, frames);
}

/* A Python sample of thread tid at time us. */
static void sample(struct tb *t, uint64_t tid, double us, const char *frames) {
  add(t,
      (struct slk_record){
          .kind = SLK_SAMPLE, .tid = tid, .start = U(us), .end = U(us), .pystack = S(t, frames)});
}

/* Chained: a pageable host-to-device copy staging when the GPU ran dry, 800 us of host work,
 * then another host-to-device copy and the step's launches. `py`: 0 no Python frames or samples;
 * 1 the host work sampled on the loader's line; 2 sampled on the staging copy's own line. */
static void staging_then_copy(int py) {
  struct tb t = {0};
  launch(&t, 1, 0, 5, 10, "k0");
  uint32_t c = call(&t, 1, 6, 42, SLK_FN_MEMCPY_ASYNC, 1, 1, "stage_site"); /* pageable */
  if (py) with_py(&t, "train.py:77 step\nrun.py:5 <module>");
  memcpy_rec(&t, c, 7, 20, 40, 1, 1);
  if (py == 1) sample(&t, 1, 400, "train.py:75 step\nloader.py:12 __next__");
  if (py == 2) sample(&t, 1, 400, "train.py:77 step\nrun.py:5 <module>");
  uint32_t d = call(&t, 1, 842, 860, SLK_FN_MEMCPY_ASYNC, 1, 1, "batch_copy");
  memcpy_rec(&t, d, 7, 845, 858, 1, 1);
  launch(&t, 1, 861, 863, 900, "k1");
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  /* 10..20 and 40..42 staging, the second copy's own staging 842..845, and 858..863 after it
   * (as in test_copy_stall_pageable) */
  uint64_t staging = U(10) + U(2) + U(3) + U(5);
  if (py == 1) { /* the loader's code ran between them: the next batch, its copy after it */
    EQ(g->time_ns[CLS_COPY_STALL], staging);
    EQ(g->time_ns[CLS_DATA_STARVATION], U(800));
    CHECK(has_site(g, CLS_COPY_STALL, "cudaMemcpyAsync @ stage_site"), "copy site");
  } else { /* no launch between two host-to-device copies and nothing says loading (or the
            * samples sit on the copy's own line): one batch's copies, the work between them the
            * first copy's path */
    EQ(g->time_ns[CLS_COPY_STALL], staging + U(800));
    EQ(g->time_ns[CLS_DATA_STARVATION], 0);
    CHECK(has_site(g, CLS_COPY_STALL, "cudaMemcpyAsync @ stage_site"), "copy site");
  }
  cls_result_free(&r);
  tb_free(&t);
}

/* The same path in a loop with a per-step sync (resnet_seed's `cs` form, GPU runs 39-40): the
 * sync, then one batch's pageable copy (6 ms staging), 4 ms of the copy's own return path (the
 * pageable batch freed), the small second copy and the step's 70 ms kernel. Pinned asynchronous
 * copies take the staging and the path out: the copies' what-if is the kernel's step, not 4 ms
 * more (the path stayed in the replay before: +7.8% and +9.5% on `cs`). */
static void test_copy_path_whatif(void) {
  struct tb t = {0};
  for (int s = 0; s < 8; s++) {
    double b = 1000 + s * 80200.0;
    uint32_t c = call(&t, 1, b, b + 6000, SLK_FN_MEMCPY_ASYNC, 1, 1, "x_copy"); /* pageable */
    memcpy_rec(&t, c, 7, b + 100, b + 5900, 1, 1);
    uint32_t d = call(&t, 1, b + 10000, b + 10050, SLK_FN_MEMCPY_ASYNC, 1, 1, "y_copy");
    memcpy_rec(&t, d, 7, b + 10010, b + 10040, 1, 1);
    launch(&t, 1, b + 10060, b + 10070, b + 80070, "step_kernel");
    call(&t, 1, b + 10100, b + 80080, SLK_FN_DEVICE_SYNC, 0, 0, "item");
  }
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->steps.step_ns, U(80200));
  CHECK(g->steps.per_step_ns[CLS_COPY_STALL] >= U(3900), "copy stall per step %llu",
        (unsigned long long)g->steps.per_step_ns[CLS_COPY_STALL]);
  CHECK(g->whatif_copy_both.replay_ns <= U(71000), "copies' what-if %llu",
        (unsigned long long)g->whatif_copy_both.replay_ns);
  cls_result_free(&r);
  tb_free(&t);
}

static void test_staging_then_loader(void) {
  staging_then_copy(0);
  staging_then_copy(1);
  staging_then_copy(2);
}

/* A step's launches between the staging copy and the next copy: that copy is the next batch's,
 * the host work before it the batch's (data starvation). */
static void test_staging_launch_then_loader(void) {
  struct tb t = {0};
  launch(&t, 1, 0, 5, 10, "k0");
  uint32_t c = call(&t, 1, 6, 42, SLK_FN_MEMCPY_ASYNC, 1, 1, "stage_site"); /* pageable */
  memcpy_rec(&t, c, 7, 20, 40, 1, 1);
  launch(&t, 1, 43, 44, 45, "k_small"); /* the step's work, on the GPU at once */
  uint32_t d = call(&t, 1, 846, 860, SLK_FN_MEMCPY_ASYNC, 1, 1, "batch_copy");
  memcpy_rec(&t, d, 7, 848, 858, 1, 1);
  launch(&t, 1, 861, 863, 900, "k1");
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  CHECK(g->time_ns[CLS_DATA_STARVATION] >= U(790), "data starvation %llu",
        (unsigned long long)g->time_ns[CLS_DATA_STARVATION]);
  CHECK(has_site(g, CLS_DATA_STARVATION, "cudaMemcpyAsync @ batch_copy"), "site");
  cls_result_free(&r);
  tb_free(&t);
}

/* A data-loading NVTX range on the launching thread is evidence too. */
static void test_data_loading_range(void) {
  struct tb t = {0};
  launch(&t, 1, 0, 10, 20, "k1");
  add(&t, (struct slk_record){.kind = SLK_MARKER,
                              .tid = 1,
                              .start = U(30),
                              .end = U(150),
                              .name = S(&t, "DataLoader.__next__")});
  launch(&t, 1, 200, 205, 250, "k2");
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  EQ(r.gpus[0].time_ns[CLS_DATA_STARVATION], U(185));
  cls_result_free(&r);
  tb_free(&t);
}

/* ---- idle: launch overhead, and the tracer's cost ---- */

static void test_launch_storm(void) {
  struct tb t = {0};
  for (int i = 0; i < 10; i++)
    launch(&t, 1, i * 10, i * 10 + 5, i * 10 + 6, "tiny");
  struct cls_input in = input(&t, 1);
  struct cls_options opt;
  cls_options_default(&opt);
  opt.cupti_call_ns = 2000;
  struct cls_result r;
  run(&in, 1, &opt, &r);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->time_ns[CLS_LAUNCH_OVERHEAD], U(81));
  /* each gap's host cycle holds one launch: CUPTI's 2 us and the hook's 50 ns */
  EQ(g->launch_corrected_ns, U(81) - 9 * 2050);
  /* the floor: each gap's 4 us outside the launch call (kernel end to the next call's start) */
  EQ(g->launch_floor_ns, U(36));
  CHECK(g->launch_floor_ns <= g->launch_corrected_ns, "floor above the upper end");
  EQ(g->kernels_shorter_than_launch, 10);
  EQ(g->tracer.cupti_calls, 10);
  EQ(g->tracer.cupti_ns, 10 * 2000);
  EQ(g->tracer.hook_ns, 10 * 50);
  cls_result_free(&r);
  tb_free(&t);
}

/* The exit probe's PROBE record gives CUPTI's cost per call (on - off) unless --cupti-call-ns
 * is given; without a probe the option's default applies ("assumed"). */
static void test_probe_cost(void) {
  for (int mode = 0; mode < 3; mode++) { /* 0 probe, 1 probe and given, 2 no probe */
    struct tb t = {0};
    for (int i = 0; i < 10; i++)
      launch(&t, 1, i * 10, i * 10 + 5, i * 10 + 6, "tiny");
    if (mode != 2)
      add(&t, (struct slk_record){.kind = SLK_PROBE,
                                  .tid = 1,
                                  .start = U(500),
                                  .end = U(600),
                                  .count = 512,
                                  .bytes = 4700,
                                  .result = 1700});
    struct cls_input in = input(&t, 1);
    struct cls_options opt;
    cls_options_default(&opt);
    if (mode == 1) {
      opt.cupti_call_ns = 2000;
      opt.cupti_call_given = 1;
    }
    struct cls_result r;
    run(&in, 1, &opt, &r);
    const struct cls_gpu *g = &r.gpus[0];
    uint64_t per = mode == 0 ? 3000 : mode == 1 ? 2000 : CLS_CUPTI_CALL_NS;
    EQ(g->tracer.cupti_ns, 10 * per);
    CHECK(!strcmp(g->tracer.cupti_source, mode == 0   ? "measured"
                                          : mode == 1 ? "given"
                                                      : "assumed"),
          "source");
    EQ(g->tracer.probe_launches, mode == 0 ? 512 : 0);
    EQ(g->tracer.probe_detached, 0); /* the record's flags say records disabled */
    /* the probe is not work: the window ends with the last kernel */
    EQ(g->window_ns, U(96));
    EQ(g->launch_corrected_ns, U(81) - 9 * (per + 50));
    cls_result_free(&r);
    tb_free(&t);
  }
}

/* ---- idle: other, with its reasons ---- */

static void test_other_host(void) {
  struct tb t = {0};
  launch(&t, 1, 0, 5, 10, "k1");
  launch(&t, 1, 900, 905, 910, "k2"); /* 898 us outside CUDA: not a launch gap */
  add(&t, (struct slk_record){.kind = SLK_OVERHEAD,
                              .tid = 1,
                              .start = U(100),
                              .end = U(300),
                              .fn = 5u << 16}); /* lazy function loading */
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->other_ns[CLS_WHY_LOADING], U(200));
  EQ(g->other_ns[CLS_WHY_HOST], U(695));
  EQ(g->time_ns[CLS_LAUNCH_OVERHEAD], 0);
  EQ(g->tracer.loading_ns, U(200));
  cls_result_free(&r);
  tb_free(&t);
}

/* A loop whose launching thread works outside CUDA most of each 1 ms step (cuDNN building plans
 * for a new input shape each step, GPU run 118): kernel A (100 us), then 795 us of host work
 * before B's launch. The steps' share of it, `other_host_per_step_ns` (the GPU idle from A's end
 * to B's start: the gap whose thread was outside CUDA, its launch call with it), is what the
 * verdict names where it is half the step (report_verdict). */
static void test_other_host_steps(void) {
  struct tb t = {0};
  for (int s = 0; s < 10; s++) {
    double b = 1000 + s * 1000.0;
    launch(&t, 1, b, b + 5, b + 105, "kA");
    launch(&t, 1, b + 900, b + 905, b + 1000, "kB");
  }
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  const struct cls_steps *sp = &g->steps;
  EQ(sp->step_ns, U(1000));
  EQ(sp->other_host_per_step_ns, U(800));
  EQ(sp->per_step_ns[CLS_OTHER], U(800));
  CHECK(sp->other_host_per_step_ns * 2 >= sp->step_ns, "most of the step");
  cls_result_free(&r);
  tb_free(&t);
}

/* A launch that loads its kernel's module (CUDA's lazy loading) waits for the device first:
 * 12 steps of 100 us (kernel A 55 us, kernel B 30 us, each launch 2 us), and in step 6 the
 * launch of B holds a lazy-loading record at its end, the call 10..80 us into the step. The GPU
 * idle while that call waited and loaded is the load's (other, module loading), and the replay
 * without the tracer, the steady state, takes the wait and the load off: one-time work. Without
 * the record the same long call is kept as recorded. */
static void lazy_load_timeline(struct tb *t, int record) {
  for (int i = 0; i < 12; i++) {
    double s = 100.0 * i;
    launch(t, 1, s, s + 5, s + 60, "kA");
    if (i != 6) {
      launch(t, 1, s + 10, s + 60, s + 90, "kB");
      continue;
    }
    uint32_t c = call(t, 1, s + 10, s + 80, SLK_FN_LAUNCH, 1, 0, "launch_site");
    kernel(t, c, 0, 7, s + 82, s + 112, "kB", 0);
    if (record)
      add(t, (struct slk_record){.kind = SLK_OVERHEAD,
                                 .tid = 1,
                                 .start = U(s + 64),
                                 .end = U(s + 79),
                                 .fn = 5u << 16}); /* lazy function loading */
  }
}

static void test_lazy_load(void) {
  uint64_t corr[2] = {0, 0}, loading[2] = {0, 0}, launch_ns[2] = {0, 0}, step[2] = {0, 0};
  for (int record = 0; record < 2; record++) {
    struct tb t = {0};
    lazy_load_timeline(&t, record);
    struct cls_input in = input(&t, 0);
    struct cls_result r;
    run(&in, 1, NULL, &r);
    const struct cls_gpu *g = &r.gpus[0];
    CHECK(g->steps.count >= 9, "%d: %zu steps", record, (size_t)g->steps.count);
    corr[record] = g->corrected_step_ns;
    step[record] = g->steps.step_ns;
    loading[record] = g->other_ns[CLS_WHY_LOADING];
    launch_ns[record] = g->time_ns[CLS_LAUNCH_OVERHEAD];
    if (record) EQ(g->tracer.loading_ns, U(15)); /* the record's own time */
    cls_result_free(&r);
    tb_free(&t);
  }
  EQ(step[0], step[1]); /* the trace's steps are as recorded either way */
  /* the GPU's idle in the waiting launch, from kernel A's end (660) to the load's end (679):
   * the load's, not the launches' */
  EQ(loading[0], 0);
  EQ(loading[1], U(19));
  CHECK(launch_ns[0] >= launch_ns[1] + U(19), "launch overhead %llu -> %llu",
        (unsigned long long)launch_ns[0], (unsigned long long)launch_ns[1]);
  /* the steady state: step 6's call less its wait and load (10..79 us into the step): the host
   * 69 us ahead from there, the steps after it as far as the GPU's 15 us of idle a step lets
   * (99.9 -> 94.5 us a step) */
  CHECK(corr[1] < corr[0], "corrected %llu -> %llu", (unsigned long long)corr[0],
        (unsigned long long)corr[1]);
  CHECK(corr[1] <= U(101), "corrected step %llu with the load off", (unsigned long long)corr[1]);
  if (getenv("SLACK_TEST_VERBOSE"))
    fprintf(stderr, "lazy load: corrected step %llu -> %llu ns\n", (unsigned long long)corr[0],
            (unsigned long long)corr[1]);
}

static void test_long_phase(void) {
  struct tb t = {0};
  launch(&t, 1, 0, 5, 10, "k1");
  call(&t, 1, 3, 12, SLK_FN_DEVICE_SYNC, 0, 0, "sync");
  launch(&t, 1, 2e6, 2e6 + 5, 2e6 + 10, "k2"); /* 2 s later: start-up, evaluation... */
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->time_ns[CLS_SERIALIZATION], U(2)); /* 10..12, inside the sync */
  EQ(g->other_ns[CLS_WHY_LONG], U(2e6 + 5 - 12));
  cls_result_free(&r);
  tb_free(&t);
}

static void test_graph_queued(void) {
  struct tb t = {0};
  uint32_t c = call(&t, 1, 0, 5, SLK_FN_GRAPH_LAUNCH, 1, 0, "graph_site");
  kernel(&t, c, 0, 7, 10, 20, "g1", 3);
  kernel(&t, c, 0, 7, 25, 35, "g2", 3); /* same launch: queued behind GPU latency */
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->other_ns[CLS_WHY_QUEUED], U(5));
  EQ(g->other_ns[CLS_WHY_EDGE], U(10));
  EQ(g->time_ns[CLS_LAUNCH_OVERHEAD], 0);
  CHECK(has_site(g, CLS_OTHER, "queued: cudaGraphLaunch @ graph_site"), "site");
  /* both kernels are shorter than the cudaGraphLaunch, which launched neither one alone */
  EQ(g->kernels_joined, 0);
  EQ(g->kernels_shorter_than_launch, 0);
  cls_result_free(&r);
  tb_free(&t);
}

static void test_no_launch_and_edges(void) {
  struct tb t = {0};
  launch(&t, 1, 0, 10, 20, "k1");
  kernel(&t, 999, 0, 7, 30, 40, "orphan", 0); /* no host call has this correlation id */
  call(&t, 1, 3, 100, SLK_FN_DEVICE_SYNC, 0, 0, "final_sync");
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->other_ns[CLS_WHY_NO_LAUNCH], U(10));
  EQ(g->other_ns[CLS_WHY_EDGE], U(10) + U(60)); /* 0..10 and 40..100 */
  cls_result_free(&r);
  tb_free(&t);
}

/* ---- a GPU shared by two processes, and two GPUs ---- */

static void test_shared_gpu(void) {
  struct tb a = {0}, b = {0};
  launch(&a, 1, 0, 5, 50, "a1");
  launch(&a, 1, 140, 150, 160, "a2");
  uint32_t c = call(&b, 9, 40, 42, SLK_FN_LAUNCH, 1, 0, "b_site");
  kernel(&b, c, 0, 7, 50, 100, "b1", 0); /* fills process a's gap 50..100 */
  c = call(&b, 9, 41, 43, SLK_FN_LAUNCH, 1, 0, "b_site");
  kernel(&b, c, 1, 7, 60, 70, "b_other_gpu", 0); /* device 1: another GPU */
  struct cls_input in[2] = {input(&a, 0), input(&b, 0)};
  in[0].label = "pid 1";
  in[1].label = "pid 2";
  struct cls_result r;
  run(in, 2, NULL, &r);
  EQ(r.ngpus, 2);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->device, 0);
  EQ(g->processes, 2);
  EQ(g->time_ns[CLS_COMPUTE], U(95) + U(10));
  EQ(g->time_ns[CLS_LAUNCH_OVERHEAD], U(50)); /* 100..150: a's thread was outside CUDA */
  CHECK(has_site(g, CLS_COMPUTE, "pid 2: cudaLaunchKernel @ b_site"), "labelled site");
  EQ(r.gpus[1].device, 1);
  EQ(r.gpus[1].processes, 1);
  EQ(r.gpus[1].window_ns, U(160));
  cls_result_free(&r);
  tb_free(&a);
  tb_free(&b);
}

/* ---- steps ---- */

static void test_steps_pattern_unit(void) {
  /* per step: an input copy (9), then kernels 1 2 1 2 3; the copy follows the longest gap */
  uint32_t sym[60];
  uint64_t start[60], gap[60];
  uint8_t h2d[60];
  size_t n = 0;
  uint64_t t = 0;
  const uint32_t step[6] = {9, 1, 2, 1, 2, 3};
  for (int s = 0; s < 10; s++)
    for (int k = 0; k < 6; k++) {
      gap[n] = k == 0 ? 50 : 1;
      t += gap[n];
      sym[n] = step[k];
      h2d[n] = step[k] == 9;
      start[n++] = t;
      t += 10;
    }
  struct step_set ss;
  CHECK(steps_from_pattern(sym, start, gap, h2d, n, &ss) == 0, "pattern");
  EQ(ss.period, 6);
  EQ(ss.count, 9);
  EQ(ss.anchor, 9);
  EQ(ss.first_op[0], 0);
  EQ(ss.next_op[8], 54);
  step_set_free(&ss);
  /* a warm-up step three times longer is left out; so is a pause much longer than a step */
  for (size_t i = 1; i < n; i++)
    start[i] += i >= 6 ? 200 : 0;
  for (size_t i = 30; i < n; i++)
    start[i] += 600; /* 6 steps' time */
  CHECK(steps_from_pattern(sym, start, gap, h2d, n, &ss) == 0, "pattern");
  EQ(ss.count, 7); /* 9 intervals, the pause and the warm-up left out */
  EQ(ss.warmup, 1);
  EQ(ss.paused, 1); /* the iteration with the pause: counted, not timed */
  EQ(ss.trailing, 1);
  EQ(ss.warmup + ss.count + ss.paused + ss.trailing, 10);
  EQ(ss.first_op[0], 6);
  step_set_free(&ss);
  /* a pause of 1,600 steps' time: unrecorded time (outside production windows), no iteration */
  for (size_t i = 30; i < n; i++)
    start[i] += 100000;
  CHECK(steps_from_pattern(sym, start, gap, h2d, n, &ss) == 0, "pattern");
  EQ(ss.count, 7);
  EQ(ss.paused, 0);
  step_set_free(&ss);
  /* nothing repeats */
  for (size_t i = 0; i < n; i++)
    sym[i] = (uint32_t)i;
  CHECK(steps_from_pattern(sym, start, gap, h2d, n, &ss) == 0, "pattern");
  EQ(ss.count, 0);
  step_set_free(&ss);
}

/* The loop's iteration inside a longer period (GPU run 54): 50 iterations of 20 kernels
 * {100 101 ... 119}, 100 after the longest gap, with a .item() read (symbol 7, a copy) after
 * every 10th: the copy recurs every 201 operations, the longest period, but each block of 20
 * runs all the symbols but it (20 of 21): steps of 20, not of 201. An inner loop (ops1200's
 * shape): 30 iterations of an input copy (8), 50 x {1 2 3 4} and an add (6): blocks of 4 run 4
 * of the step's 6 symbols, the step stays 202 operations. */
/* Gradient accumulation (GPU run 66): each iteration runs 3 micro-batches (a batch copy and 20
 * kernels each, the same every time), then the optimizer's multi-tensor kernels once. The
 * pattern repeats every micro-batch; the steps are the iterations, from the first micro-batch
 * after each optimizer step: 6 iterations, 4 steps between the 5 anchors, the first counted
 * (the optimizer step that ended it) and the last (a step's worth after the last anchor). */
/* A loop accumulating `micro` micro-batches (the batch's copy and 20 kernels each) per
 * iteration, then nopt optimizer kernels (names a and b in turn); `setup`: 30 kernels of a
 * model's set-up first */
static void accum_loop(struct tb *t, int setup, int iters, int micro, int nopt, const char *a,
                       const char *b) {
  static const char *kn[20] = {"k0",  "k1",  "k2",  "k3",  "k4",  "k5",  "k6",
                               "k7",  "k8",  "k9",  "k10", "k11", "k12", "k13",
                               "k14", "k15", "k16", "k17", "k18", "k19"};
  double h = 0;
  for (int k = 0; setup && k < 30; k++, h += 5)
    launch(t, 1, h, h + 3, h + 4, k % 2 ? "init_a" : "init_b");
  for (int it = 0; it < iters; it++) {
    for (int m = 0; m < micro; m++) {
      h += 40; /* the next batch */
      uint32_t c = call(t, 1, h, h + 2, SLK_FN_MEMCPY_ASYNC, 1, 1, "batch");
      memcpy_rec(t, c, 7, h + 3, h + 6, 1, 2);
      for (int k = 0; k < 20; k++, h += 5)
        launch(t, 1, h + 3, h + 6, h + 8, kn[k]);
    }
    for (int k = 0; k < nopt; k++, h += 5)
      launch(t, 1, h, h + 3, h + 4, k % 2 ? a : b);
  }
}

static void test_steps_accumulation(void) {
  struct tb t = {0};
  accum_loop(&t, 1, 6, 3, 3, "multi_tensor_apply_kernel<SGDFunctor>",
             "multi_tensor_apply_kernel<SGDFunctor>");
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_steps *sp = &r.gpus[0].steps;
  /* 6 iterations: the first (with the set-up before it, 96 operations: a step of its own
   * within a third of 66), 4 between optimizer steps, the last one */
  EQ(sp->count + sp->warmup, 5);
  EQ(sp->trailing, 1);
  CHECK(strstr(sp->detail, "after each optimizer step") != NULL, "detail: %s", sp->detail);
  cls_result_free(&r);
  tb_free(&t);
  /* with a symbol once per iteration (a memset before the first micro-batch), the longest
   * period is the iteration, and the micro-batches inside it are not the loop's (the optimizer's
   * kernel, flagged, runs in one block of three): steps of 302 operations, not of 100 */
  enum { N = 20 * 302 };
  static uint32_t sym[N];
  static uint64_t start[N], gap[N];
  static uint8_t flags[N];
  size_t n = 0;
  uint64_t ts = 0;
  for (int it = 0; it < 20; it++) {
    for (int k = 0; k < 302; k++) {
      /* 0: the memset; 1..300: three micro-batches of 100; 301: the optimizer */
      gap[n] = k == 0 ? 50 : 1;
      ts += gap[n];
      sym[n] = k == 0 ? 7 : k == 301 ? 9 : 100 + (uint32_t)((k - 1) % 100);
      flags[n] = k == 301 ? STEP_OP_OPTIMIZER : 0;
      start[n++] = ts;
      ts += 10;
    }
  }
  struct step_set ss;
  CHECK(steps_from_pattern(sym, start, gap, flags, n, &ss) == 0, "pattern");
  EQ(ss.period, 302);
  EQ(ss.looped, 0);
  step_set_free(&ss);
}

/* Gradient accumulation with a per-parameter optimizer (foreach=False: no multi-tensor kernel,
 * GPU run 68): the micro-batches are the pattern, and every third one ends with 30 optimizer
 * kernels; the cycle of counts between the pattern's anchors (21, 21, 51) makes the iteration */
static void test_steps_accumulation_per_param(void) {
  struct tb t = {0};
  /* momentum, then the parameter, one at a time */
  accum_loop(&t, 1, 8, 3, 30, "elementwise_add", "elementwise_mul");
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_steps *sp = &r.gpus[0].steps;
  EQ(sp->warmup + sp->count + sp->paused + sp->trailing, 8);
  CHECK(strstr(sp->detail, "93 GPU operations per step") != NULL, "detail: %s", sp->detail);
  CHECK(strstr(sp->detail, "after each optimizer step") != NULL, "detail: %s", sp->detail);
  cls_result_free(&r);
  tb_free(&t);
  /* the same micro-batches with the optimizer's kernels after each one: no cycle, the
   * micro-batch (and its optimizer step) is the iteration */
  struct tb u = {0};
  accum_loop(&u, 0, 24, 1, 30, "elementwise_add", "elementwise_mul");
  in = input(&u, 0);
  run(&in, 1, NULL, &r);
  sp = &r.gpus[0].steps;
  EQ(sp->warmup + sp->count + sp->paused + sp->trailing, 24);
  CHECK(strstr(sp->detail, "51 GPU operations per step") != NULL, "detail: %s", sp->detail);
  cls_result_free(&r);
  tb_free(&u);
}

/* Training with a validation pass after every `every`-th of `iters` iterations (GPU run 71): an
 * iteration is the batch's copy, 20 kernels and the optimizer's 3 multi-tensor kernels; a pass
 * is 3 batches of a copy and 8 kernels, each after `host` us of the host's work (the loader).
 * The first pass's host work is `first` us a batch. mark[k]: the start of the first operation
 * after the k-th optimizer step (what ends each step). */
static void periodic_loop_x(struct tb *t, int iters, int every, double host, double first,
                            double *mark, int copies) {
  static const char *kn[20] = {"k0",  "k1",  "k2",  "k3",  "k4",  "k5",  "k6",
                               "k7",  "k8",  "k9",  "k10", "k11", "k12", "k13",
                               "k14", "k15", "k16", "k17", "k18", "k19"};
  static const char *en[8] = {"e0", "e1", "e2", "e3", "e4", "e5", "e6", "e7"};
  double h = 0;
  int passes = 0;
  for (int k = 0; k < 30; k++, h += 5)
    launch(t, 1, h, h + 3, h + 4, k % 2 ? "init_a" : "init_b");
  for (int it = 0; it < iters; it++) {
    h += 40;
    uint32_t c;
    if (copies) {
      c = call(t, 1, h, h + 2, SLK_FN_MEMCPY_ASYNC, 1, 1, "batch");
      memcpy_rec(t, c, 7, h + 3, h + 6, 1, 2);
    } else {
      launch(t, 1, h, h + 3, h + 6, "minibatch_index");
    }
    if (it && it % every) mark[it - 1] = h + 3;
    for (int k = 0; k < 20; k++, h += 5)
      launch(t, 1, h + 3, h + 6, h + 8, kn[k]);
    for (int k = 0; k < 3; k++, h += 5)
      launch(t, 1, h, h + 3, h + 4, "multi_tensor_apply_kernel<SGDFunctor>");
    if ((it + 1) % every) continue;
    for (int b = 0; b < 3; b++) {
      h += passes ? host : first;
      c = call(t, 1, h, h + 2, SLK_FN_MEMCPY_ASYNC, 1, 1, "val_batch");
      memcpy_rec(t, c, 7, h + 3, h + 6, 1, 2);
      if (!b) mark[it] = h + 3;
      for (int k = 0; k < 8; k++, h += 5)
        launch(t, 1, h + 3, h + 6, h + 8, en[k]);
    }
    passes++;
  }
}

static void periodic_loop(struct tb *t, int iters, int every, double host, double first,
                          double *mark) {
  periodic_loop_x(t, iters, every, host, first, mark, 1);
}

/* The iterations between the ends of the optimizer's steps, the validation passes inside every
 * 5th: 20 iterations, not 4 steps of 5 (the pattern's period) nor the 16 without a pass; the
 * timed steps whole cycles of 5, each with its pass once. */
static void test_steps_periodic(void) {
  double mark[20] = {0};
  struct tb t = {0};
  periodic_loop(&t, 20, 5, 300, 300, mark);
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_steps *sp = &r.gpus[0].steps;
  /* iteration 1 before the first mark (warm-up), 2-5 outside a whole cycle, 6-20 timed */
  EQ(sp->cycle, 5);
  EQ(sp->count, 15);
  EQ(sp->warmup, 1);
  EQ(sp->uncycled, 4);
  EQ(sp->trailing, 0);
  EQ(sp->warmup + sp->count + sp->paused + sp->trailing + sp->uncycled, 20);
  NEAR(sp->step_ns, (U(mark[19]) - U(mark[4])) / 15, U(1));
  CHECK(strstr(sp->detail, "every 5 iterations one runs more") != NULL, "detail: %s", sp->detail);
  cls_result_free(&r);
  tb_free(&t);
  /* the first pass 10 times slower (its loader starting, kernels picked for new shapes): its
   * cycle is warm-up too, the two after it timed */
  struct tb u = {0};
  periodic_loop(&u, 20, 5, 300, 3000, mark);
  in = input(&u, 0);
  run(&in, 1, NULL, &r);
  sp = &r.gpus[0].steps;
  EQ(sp->count, 10);
  EQ(sp->warmup, 6);
  EQ(sp->uncycled, 4);
  EQ(sp->warmup + sp->count + sp->paused + sp->trailing + sp->uncycled, 20);
  NEAR(sp->step_ns, (U(mark[19]) - U(mark[9])) / 10, U(1));
  cls_result_free(&r);
  tb_free(&u);
  /* no cycle: passes after the 5th and the 7th iterations only, none after the 9th or the 11th
   * (steps_periodic declines) */
  size_t anchor[12];
  uint64_t start[400];
  uint32_t sym[400];
  for (size_t i = 0; i < 400; i++) {
    start[i] = i * 10;
    sym[i] = (uint32_t)(i % 24);
  }
  size_t at = 0;
  for (int k = 0; k < 12; k++) {
    anchor[k] = at;
    at += (k == 4 || k == 6) ? 60 : 24;
  }
  struct step_set ss;
  CHECK(steps_periodic(anchor, 12, sym, start, 400, &ss) == 0, "periodic");
  EQ(ss.count, 0);
  step_set_free(&ss);
  /* every 3rd: a cycle */
  at = 0;
  for (int k = 0; k < 12; k++) {
    anchor[k] = at;
    at += k % 3 == 2 ? 60 : 24;
  }
  CHECK(steps_periodic(anchor, 12, sym, start, 400, &ss) == 0, "periodic");
  EQ(ss.cycle, 3);
  EQ(ss.count % 3, 0);
  CHECK(ss.count >= 9, "count %zu", ss.count);
  step_set_free(&ss);
}

/* The first optimizer step in pieces (GPU run 122's nanoGPT loop: AdamW making its state, runs
 * of 80 and 41 operations before iterations of 418): up to 4 such marks at the start are the
 * first iteration's, and the cycle is found after them; 5 are not a start. And an RL trainer's
 * update (GPU runs 79 and 82: minibatches of the rollout already on the GPU, one long interval
 * in 8) takes no batch from the host in its short intervals: no periodic work, its
 * iterations the pattern's. */
static void test_steps_periodic_lead(void) {
  size_t anchor[20];
  uint64_t start[1000];
  uint32_t sym[1000];
  for (size_t i = 0; i < 1000; i++) {
    start[i] = i * 10;
    sym[i] = (uint32_t)(i % 24);
  }
  for (int lead = 0; lead <= 5; lead++) {
    size_t at = 0;
    for (int k = 0; k < 20; k++) {
      anchor[k] = at;
      at += k < lead ? 10 : (k - lead) % 3 == 2 ? 60 : 24;
    }
    struct step_set ss;
    CHECK(steps_periodic(anchor, 20, sym, start, 1000, &ss) == 0, "periodic");
    if (lead <= 4) {
      EQ(ss.cycle, 3);
      CHECK(ss.count >= 9 && ss.first_op[0] >= anchor[lead], "lead %d: count %zu", lead, ss.count);
    } else {
      EQ(ss.count, 0);
    }
    step_set_free(&ss);
  }
  /* plain iterations before the periodic work's first (GPU run 137's nanoGPT graph form: the
   * capture's 3 eager warm-up steps, then 4 iterations before the first evaluation): up to a
   * cycle more than one cycle's worth of them leaves the cycles after them found, the whole
   * cycles starting one cycle before the first long interval; two cycles' worth is no cycle */
  for (int extra = 0; extra <= 4; extra++) {
    size_t at = 0;
    for (int k = 0; k < 20; k++) {
      anchor[k] = at;
      at += k >= extra && (k - extra) % 3 == 2 ? 60 : 24;
    }
    struct step_set ss;
    CHECK(steps_periodic(anchor, 20, sym, start, 1000, &ss) == 0, "periodic");
    if (extra <= 3) {
      EQ(ss.cycle, 3);
      CHECK(ss.count >= 9 && ss.count % 3 == 0 && ss.first_op[0] >= anchor[extra],
            "extra %d: count %zu", extra, ss.count);
    } else {
      EQ(ss.count, 0);
    }
    step_set_free(&ss);
  }
  double mark[20] = {0};
  for (int copies = 0; copies < 2; copies++) {
    struct tb t = {0};
    periodic_loop_x(&t, 20, 5, 300, 300, mark, copies);
    struct cls_input in = input(&t, 0);
    struct cls_result r;
    run(&in, 1, NULL, &r);
    EQ(r.gpus[0].steps.cycle, copies ? 5u : 0u);
    cls_result_free(&r);
    tb_free(&t);
  }
}

/* A loop whose pace is bimodal (GPU run 129: a DataLoader's 2 workers finishing their batches
 * together, every second iteration waiting 590 ms for both against 35): 30 iterations of a
 * batch's copy and 10 launches 30 us apart, 11 of them after 5 ms outside CUDA, in no period. Its
 * steps are every iteration, the waits data starvation: before, the median step (the short one)
 * made the long ones pauses (not timed) and their waits host phases longer than 8 steps (`other`).
 */
static void test_steps_bimodal(void) {
  /* the long ones in no period (the workers' turns drift): 11 of 30 */
  static const int slow[30] = {0, 0, 0, 1, 0, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0,
                               1, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0, 0, 0, 1, 0};
  struct tb t = {0};
  char name[16];
  double at = 1000;
  for (int k = 0; k < 30; k++) {
    if (slow[k]) at += 5000;
    uint32_t c = call(&t, 1, at, at + 2, SLK_FN_MEMCPY_ASYNC, 1, 1, "batch");
    memcpy_rec(&t, c, 7, at + 3, at + 10, 1, 2);
    for (int j = 0; j < 10; j++) {
      snprintf(name, sizeof name, "k%d", j);
      launch(&t, 1, at + 12 + 30 * j, at + 16 + 30 * j, at + 40 + 30 * j, name);
    }
    at += 420;
  }
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  CHECK(g->steps.count >= 27, "steps %zu", g->steps.count);
  EQ(g->steps.paused, 0);
  /* 5 ms in 11 of 29 steps and the 98 us before each copy: about 2 ms a step, none of it a
   * host phase */
  NEAR(g->steps.per_step_ns[CLS_DATA_STARVATION], U(2000), U(100));
  CHECK(g->steps.per_step_ns[CLS_OTHER] < U(100), "other %llu",
        (unsigned long long)g->steps.per_step_ns[CLS_OTHER]);
  cls_result_free(&r);
  tb_free(&t);
}

/* Batches whose shapes change (text padded to each batch's longest, GPU run 68): each
 * iteration runs other kernels and another number of them (40 to 68 here, a cycle of 5
 * lengths), so no count repeats within 5%; the end of each optimizer step marks the
 * iteration, or, with no multi-tensor kernel, each batch's copy (the pattern alone: steps of
 * 10 operations, the layer kernels' cycle). The first iterations warm up (a new length each:
 * 3 ms of host work before each), a third of the steps, and are left out by the median of the
 * later half. */
static void test_steps_shapes_change(void) {
  static char names[5][10][24];
  static const char *nm[5][10];
  for (int L = 0; L < 5; L++)
    for (int k = 0; k < 10; k++) {
      snprintf(names[L][k], sizeof names[L][k], k < 4 ? "gemm_len%d_%d" : "layer_%d%d",
               k < 4 ? L : 0, k);
      nm[L][k] = names[L][k];
    }
  for (int opt = 1; opt >= 0; opt--) {
    struct tb t = {0};
    double h = 0;
    for (int it = 0; it < 15; it++) {
      int L = (it * 3) % 5;
      h += it < 5 ? 3000 : 40; /* the next batch; a new length's first pass warms up */
      uint32_t c = call(&t, 1, h, h + 2, SLK_FN_MEMCPY_ASYNC, 1, 1, "batch");
      memcpy_rec(&t, c, 7, h + 3, h + 6, 1, 2);
      for (int k = 0; k < 40 + 7 * L; k++, h += 5)
        launch(&t, 1, h + 3, h + 6, h + 8, nm[L][k % 10]);
      for (int k = 0; k < 7; k++, h += 5) /* the scaler's unscale, 3 kernels, the step */
        launch(&t, 1, h, h + 3, h + 4,
               !opt     ? "adam_elementwise"
               : k == 0 ? "multi_tensor_apply_kernel<UnscaleFunctor>"
               : k < 4  ? (k % 2 ? "found_inf_sum" : "scale_update")
                        : "multi_tensor_apply_kernel<AdamFunctor>");
    }
    struct cls_input in = input(&t, 0);
    struct cls_result r;
    run(&in, 1, NULL, &r);
    const struct cls_steps *sp = &r.gpus[0].steps;
    EQ(sp->warmup + sp->count + sp->paused + sp->trailing, 15);
    /* the 3 ms before iterations 1 to 4 end the first four steps (iteration 0's comes before
     * its first operation) */
    CHECK(sp->warmup >= 4, "warm-up %zu of 15", sp->warmup);
    CHECK(sp->count >= 9, "%zu steps", sp->count);
    /* with the multi-tensor kernels, the pattern's anchor (a layer kernel, several per
     * iteration) after each optimizer step: optimizer_steps' rule, the same iterations */
    CHECK(strstr(sp->detail, opt ? "optimizer step" : "host-to-device copies") != NULL,
          "detail: %s", sp->detail);
    cls_result_free(&r);
    tb_free(&t);
  }
}

/* A loop whose first 4 iterations each tune a new input shape (cuDNN's autotuner, GPU run 120):
 * the same 72 trial kernels of 5 ms each run before the step's own 40 kernels, then 26 plain
 * iterations of 40 kernels and the optimizer's multi-tensor kernel. A pattern found in the trials
 * covers far more GPU time than the plain iterations; the optimizer's marks, 3 times as many
 * steps against a pattern of fewer than 5, are the loop's iterations (cls_steps.c mark_steps). */
static void test_steps_long_start(void) {
  static char trial[72][16];
  for (int k = 0; k < 72; k++)
    snprintf(trial[k], sizeof trial[k], "trial_%d", k);
  struct tb t = {0};
  double h = 0;
  for (int it = 0; it < 30; it++) {
    if (it < 4)
      for (int k = 0; k < 72; k++, h += 5010)
        launch(&t, 1, h, h + 3, h + 5003, trial[k]);
    for (int k = 0; k < 40; k++, h += 6)
      launch(&t, 1, h, h + 3, h + 5, k % 2 ? "layer_a" : "layer_b");
    launch(&t, 1, h, h + 3, h + 8, "multi_tensor_apply_kernel<SgdFunctor>");
    h += 60;
  }
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_steps *sp = &r.gpus[0].steps;
  CHECK(sp->count >= 24 && sp->count <= 26, "%zu steps", sp->count);
  CHECK(sp->step_ns < U(1000), "step %llu ns", (unsigned long long)sp->step_ns);
  CHECK(strstr(sp->detail, "optimizer step") != NULL, "detail: %s", sp->detail);
  cls_result_free(&r);
  tb_free(&t);
}

/* A loop of changing shapes (steps from the optimizer's runs), then, after the loop, a
 * synchronize of 5 ms and a read of the losses (2 operations): the last iteration is counted, not
 * timed, and the closing sync's wait is in no step. (Here optimizer_steps' rule decides; GPU run
 * 121's trace, where mark_steps' did and timed it, is checked in tests/test_h200_holdout.sh.) */
static void test_steps_marked_end(void) {
  struct tb t = {0};
  double h = 0;
  for (int it = 0; it < 12; it++) {
    for (int k = 0; k < 40 + 7 * (it % 5); k++, h += 6)
      launch(&t, 1, h, h + 3, h + 5, k % 2 ? "layer_a" : "layer_b");
    launch(&t, 1, h, h + 3, h + 8, "multi_tensor_apply_kernel<AdamFunctor>");
    h += 60;
  }
  call(&t, 1, h, h + 5000, SLK_FN_DEVICE_SYNC, 0, 0, "closing_sync");
  launch(&t, 1, h + 5002, h + 5005, h + 5008, "stack");
  launch(&t, 1, h + 5010, h + 5013, h + 5016, "read");
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_steps *sp = &r.gpus[0].steps;
  EQ(sp->warmup + sp->count + sp->paused + sp->trailing, 12);
  EQ(sp->trailing, 1);
  CHECK(sp->step_ns < U(500), "step %llu ns", (unsigned long long)sp->step_ns);
  EQ(sp->per_step_ns[CLS_SERIALIZATION], 0);
  cls_result_free(&r);
  tb_free(&t);
}

static void test_steps_loop_period(void) {
  enum { N = 6100 };
  uint32_t *sym = malloc(N * sizeof *sym);
  uint64_t *start = malloc(N * sizeof *start), *gap = malloc(N * sizeof *gap);
  uint8_t *h2d = malloc(N);
  CHECK(sym && start && gap && h2d, "alloc");
  if (!sym || !start || !gap || !h2d) return;
  size_t n = 0;
  uint64_t t = 0;
  for (int i = 0; i < 50; i++) {
    for (int k = 0; k < 20; k++) {
      gap[n] = k == 0 ? 50 : 1;
      t += gap[n];
      sym[n] = 100 + (uint32_t)k;
      h2d[n] = 0;
      start[n++] = t;
      t += 10;
    }
    if (i % 10 == 9) {
      gap[n] = 1;
      t += 1;
      sym[n] = 7;
      h2d[n] = 0;
      start[n++] = t;
      t += 2;
    }
  }
  struct step_set ss;
  CHECK(steps_from_pattern(sym, start, gap, h2d, n, &ss) == 0, "pattern");
  EQ(ss.period, 20);
  EQ(ss.looped, 201);
  EQ(ss.anchor, 100);
  EQ(ss.warmup + ss.count + ss.paused + ss.trailing, 50);
  step_set_free(&ss);
  n = 0;
  t = 0;
  for (int i = 0; i < 30; i++) {
    gap[n] = 50;
    t += 50;
    sym[n] = 8;
    h2d[n] = 1;
    start[n++] = t;
    t += 10;
    for (int k = 0; k < 200; k++) {
      gap[n] = 1;
      t += 1;
      sym[n] = 1 + (uint32_t)(k % 4);
      h2d[n] = 0;
      start[n++] = t;
      t += 2;
    }
    gap[n] = 1;
    t += 1;
    sym[n] = 6;
    h2d[n] = 0;
    start[n++] = t;
    t += 2;
  }
  CHECK(steps_from_pattern(sym, start, gap, h2d, n, &ss) == 0, "pattern");
  EQ(ss.period, 202);
  EQ(ss.looped, 0);
  EQ(ss.anchor, 8);
  step_set_free(&ss);
  free(sym);
  free(start);
  free(gap);
  free(h2d);
}

/* A loop of few long iterations with an inner loop (a generation loop: a request is a prefill,
 * symbols 50-59, then 40 tokens of 20 operations, symbols 1-20, each after a sync's idle gap).
 * The first request waits 5 requests' time after its prefill (warm-up: autotuning); its
 * tokens run at the usual pace. The requests cover 6 of the 8 requests' time, the tokens all 8
 * (75%): the requests are the steps, as over their own stretch they cover all the tokens do
 * (GPU run 72). With the prefill in only the first 7 of 20 requests, the tokens stay the
 * steps: the requests' stretch holds less than half the loop. */
static size_t gen_loop(uint32_t *sym, uint64_t *start, uint64_t *gap, uint8_t *h2d, int requests,
                       int prefilled) {
  size_t n = 0;
  uint64_t t = 0;
  for (int r = 0; r < requests; r++) {
    for (int k = 0; r < prefilled && k < 10; k++) {
      gap[n] = k == 0 ? 100 : 1;
      t += gap[n];
      sym[n] = 50 + (uint32_t)k;
      h2d[n] = k == 0;
      start[n++] = t;
      t += 10;
    }
    if (r == 0) t += 5 * 40 * 20 * 13;
    for (int i = 0; i < 40; i++)
      for (int k = 0; k < 20; k++) {
        gap[n] = k == 0 ? 30 : 1;
        t += gap[n];
        sym[n] = 1 + (uint32_t)k;
        h2d[n] = 0;
        start[n++] = t;
        t += 12;
      }
  }
  return n;
}

/* A periodic wait that runs no operations (GPU run 80: a DataLoader's workers started again at
 * each epoch's first batch, 600 ms against 25 ms steps every 12th iteration): 40 iterations of
 * 6 operations, 1 ms each, every 8th (from the 6th on) 20 ms. The pattern leaves the long ones
 * out (a pause over 16 steps: not counted); steps_time_cycles takes whole cycles of 8 with them
 * in, every iteration counted. Long ones off the beat, or unlike each other, are pauses still. */
static void test_steps_time_cycles(void) {
  enum { N = 40 * 6 };
  uint32_t sym[N];
  uint64_t start[N], gap[N];
  uint8_t h2d[N];
  for (int mode = 0; mode < 3; mode++) {
    uint64_t t = 0;
    size_t n = 0;
    for (int s = 0; s < 40; s++) {
      int lng = mode == 1 ? s == 5 || s == 13 || s == 24 : s % 8 == 5;
      uint64_t wait = !lng ? 0 : mode == 2 && s == 13 ? 100000 : 19000;
      for (int k = 0; k < 6; k++) {
        gap[n] = k == 0 ? 50 + wait : 1;
        t += gap[n];
        sym[n] = 20 + (uint32_t)k;
        h2d[n] = k == 0;
        start[n++] = t;
        t += 1000 / 6;
      }
    }
    struct step_set ss;
    CHECK(steps_from_pattern(sym, start, gap, h2d, n, &ss) == 0, "pattern");
    size_t before = ss.warmup + ss.count + ss.paused + ss.trailing + ss.uncycled;
    CHECK(steps_time_cycles(sym, start, n, &ss) == 0, "time cycles");
    if (mode == 0) {
      EQ(ss.cycle, 8);
      EQ(ss.count % 8, 0);
      CHECK(ss.count >= 32, "whole cycles: %zu steps", ss.count);
      EQ(ss.paused, 0);
      EQ(ss.warmup + ss.count + ss.paused + ss.trailing + ss.uncycled, 40);
      size_t longs = 0;
      for (size_t q = 0; q < ss.count; q++)
        longs += start[ss.next_op[q]] - start[ss.first_op[q]] > 10000;
      EQ(longs, ss.count / 8);
    } else { /* off the beat, or one of them far longer: as the pattern had them */
      EQ(ss.cycle, 0);
      EQ(ss.warmup + ss.count + ss.paused + ss.trailing + ss.uncycled, before);
    }
    step_set_free(&ss);
  }
}

static void test_steps_few_long(void) {
  enum { N = 20 * 810 };
  uint32_t *sym = malloc(N * sizeof *sym);
  uint64_t *start = malloc(N * sizeof *start), *gap = malloc(N * sizeof *gap);
  uint8_t *h2d = malloc(N);
  CHECK(sym && start && gap && h2d, "alloc");
  if (!sym || !start || !gap || !h2d) return;
  size_t n = gen_loop(sym, start, gap, h2d, 8, 8);
  struct step_set ss;
  CHECK(steps_from_pattern(sym, start, gap, h2d, n, &ss) == 0, "pattern");
  EQ(ss.period, 810);
  EQ(ss.looped, 0);
  EQ(ss.anchor, 50);
  EQ(ss.warmup + ss.count + ss.paused + ss.trailing, 8);
  CHECK(ss.count >= 5, "the steady requests timed");
  step_set_free(&ss);
  n = gen_loop(sym, start, gap, h2d, 20, 7);
  CHECK(steps_from_pattern(sym, start, gap, h2d, n, &ss) == 0, "pattern");
  EQ(ss.period, 20);
  step_set_free(&ss);
  free(sym);
  free(start);
  free(gap);
  free(h2d);
}

/* The loop's first iteration ran other kernels where later ones run the step's anchor (an
 * optimizer creating its state): 10 iterations of {1 2 1 2 3 9} (9, the optimizer, after the
 * longest gap), the first one {1 2 1 2 3 8 8}, after a model's start-up (copies 5, fills 6). */
static void test_steps_first_iteration(void) {
  uint32_t sym[100];
  uint64_t start[100], gap[100];
  uint8_t h2d[100];
  size_t n = 0;
  uint64_t t = 0;
  const uint32_t init[8] = {5, 5, 5, 6, 6, 5, 6, 5}, first[7] = {1, 2, 1, 2, 3, 8, 8},
                 step[6] = {1, 2, 1, 2, 3, 9};
  int with_init = 1;
again:
  n = 0;
  t = 0;
  for (int k = 0; with_init && k < 8; k++) {
    gap[n] = 1;
    t += 1;
    sym[n] = init[k];
    h2d[n] = init[k] == 5;
    start[n++] = t;
    t += 10;
  }
  for (int it = 0; it < 10; it++) {
    int len = it ? 6 : 7;
    for (int k = 0; k < len; k++) {
      uint32_t s = it ? step[k] : first[k];
      gap[n] = s == 9 ? 40 : 1;
      t += gap[n];
      sym[n] = s;
      h2d[n] = 0;
      start[n++] = t;
      t += 10;
    }
  }
  struct step_set ss;
  CHECK(steps_from_pattern(sym, start, gap, h2d, n, &ss) == 0, "pattern");
  EQ(ss.anchor, 9);
  EQ(ss.period, 6);
  EQ(ss.count, 8);
  EQ(ss.trailing, 1);
  EQ(ss.warmup + ss.count + ss.paused + ss.trailing, 10); /* the first iteration counted */
  step_set_free(&ss);
  if (with_init--) goto again;
  /* start-up alone before the anchor's first iteration is no iteration: 9 iterations of the
   * step after 13 operations of copies and fills */
  n = 0;
  t = 0;
  for (int k = 0; k < 13; k++) {
    gap[n] = 1;
    t += 1;
    sym[n] = init[k % 8];
    h2d[n] = 0;
    start[n++] = t;
    t += 10;
  }
  for (int it = 0; it < 9; it++)
    for (int k = 0; k < 6; k++) {
      gap[n] = step[k] == 9 ? 40 : 1;
      t += gap[n];
      sym[n] = step[k];
      h2d[n] = 0;
      start[n++] = t;
      t += 10;
    }
  CHECK(steps_from_pattern(sym, start, gap, h2d, n, &ss) == 0, "pattern");
  EQ(ss.anchor, 9);
  EQ(ss.warmup + ss.count + ss.paused + ss.trailing, 9);
  step_set_free(&ss);
}

static void test_steps_ranges_unit(void) {
  uint64_t rs[4] = {0, 100, 200, 300}, re[4] = {90, 190, 290, 390};
  uint64_t launch[8] = {5, 10, UINT64_MAX, 105, 150, 205, 305, 95};
  uint64_t start[8] = {20, 30, 40, 120, 160, 220, 320, 330};
  struct step_set ss;
  CHECK(steps_from_ranges(rs, re, 4, launch, start, 8, &ss) == 0, "ranges");
  EQ(ss.count, 3);
  EQ(ss.range_used, 4);
  EQ(ss.first_op[0], 0);
  EQ(ss.next_op[0], 3);
  EQ(ss.first_op[2], 5);
  EQ(ss.next_op[2], 6);
  EQ(ss.warmup, 0);
  step_set_free(&ss);
  /* a first step 3 times as long as the others is warm-up, left out like the pattern's */
  uint64_t rs2[5] = {0, 300, 400, 500, 600}, re2[5] = {290, 390, 490, 590, 690};
  uint64_t launch2[5] = {5, 305, 405, 505, 605}, start2[5] = {10, 310, 410, 510, 610};
  CHECK(steps_from_ranges(rs2, re2, 5, launch2, start2, 5, &ss) == 0, "ranges");
  EQ(ss.count, 3);
  EQ(ss.warmup, 1);
  EQ(ss.first_op[0], 1);
  step_set_free(&ss);
}

/* Steps in a trace, per-step times, and the replay: a loop that reads a value every step. */
static void serial_loop(struct tb *t, int steps) {
  for (int s = 0; s < steps; s++) {
    double b = 1000 + s * 100.0;
    launch(t, 1, b, b + 10, b + 50, "step_kernel");
    call(t, 1, b + 6, b + 55, SLK_FN_STREAM_SYNC, 0, 0, "item_site");
  }
  call(t, 1, 10, 12, SLK_FN_DEVICE_SYNC, 0, 0, "start"); /* start of the window */
}

/* A loop whose GPU work repeats within the iteration (12 identical kernels) and whose only
 * per-iteration mark is a synchronize(): the steps are the iterations, not one kernel each. */
static void test_steps_sync_anchored(void) {
  struct tb t = {0};
  for (int s = 0; s < 8; s++) {
    double b = 1000 + s * 200.0;
    for (int i = 0; i < 12; i++)
      launch(&t, 1, b + i * 10, b + i * 10 + 5, b + i * 10 + 8, "tiny");
    call(&t, 1, b + 120, b + 125, SLK_FN_DEVICE_SYNC, 0, 0, "sync_site");
  }
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_steps *sp = &r.gpus[0].steps;
  /* 8 iterations: the first (before any sync) and the 6 between syncs; the last has no end mark */
  EQ(sp->count, 7);
  EQ(sp->step_ns, U(200));
  CHECK(strstr(sp->detail, "12 GPU operations per step, between synchronizing calls") != NULL,
        "detail %s", sp->detail);
  cls_result_free(&r);
  tb_free(&t);
}

/* the same with batches of changing shape (an inference loop whose results are read each
 * iteration): 10 to 14 kernels between the syncs, not within 5% of each other; the syncs still
 * bound the iterations (loosely: within a third of the median count) */
static void test_steps_sync_anchored_shapes(void) {
  struct tb t = {0};
  static const int nk[10] = {12, 10, 14, 11, 13, 12, 10, 14, 11, 13};
  double b = 1000;
  for (int s = 0; s < 10; s++) {
    for (int i = 0; i < nk[s]; i++)
      launch(&t, 1, b + i * 10, b + i * 10 + 5, b + i * 10 + 8, i % 2 ? "tiny" : "small");
    call(&t, 1, b + nk[s] * 10, b + nk[s] * 10 + 5, SLK_FN_DEVICE_SYNC, 0, 0, "sync_site");
    b += nk[s] * 10 + 40;
  }
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_steps *sp = &r.gpus[0].steps;
  EQ(sp->warmup + sp->count + sp->paused + sp->trailing, 10);
  CHECK(strstr(sp->detail, "between synchronizing calls") != NULL, "detail %s", sp->detail);
  cls_result_free(&r);
  tb_free(&t);
}

static void test_steps_and_replay_serialization(void) {
  struct tb t = {0};
  serial_loop(&t, 8);
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  const struct cls_steps *sp = &g->steps;
  CHECK(!strcmp(sp->source, "pattern"), "source %s", sp->source);
  EQ(sp->count, 7);
  EQ(sp->step_ns, U(100));
  EQ(sp->per_step_ns[CLS_COMPUTE], U(40));
  EQ(sp->per_step_ns[CLS_SERIALIZATION], U(60));
  EQ(g->whatif[CLS_SERIALIZATION].bound_ns, U(40));
  CHECK(g->replay_ok, "replay");
  EQ(g->replay_step_ns, U(100));
  CHECK(g->replay_error == 0, "replay error %g", g->replay_error);
  /* without the wait, the host's cycle is the step: launch 2 + 4 + sync 5 (median of syncs that
   * did not wait: none, so 5 us) + 45 of host work = 56 us */
  NEAR(g->whatif[CLS_SERIALIZATION].replay_ns, U(56), U(1));
  /* removing compute does nothing here: the host is the bottleneck once the sync waits */
  NEAR(g->whatif[CLS_COMPUTE].replay_ns, U(100) - U(40), U(6));
  EQ(g->whatif[CLS_COMMUNICATION].replay_ns, U(100));
  cls_result_free(&r);
  tb_free(&t);
}

/* A loader in the main thread: the what-if of data starvation is the GPU-bound step. */
/* The loader's head start (classify.c prefetched_steps): a DataLoader's workers built the first
 * batches before the loop, so its first iterations copy a batch 10 us after the last launch;
 * from the fifth on the main thread waits 400 us for each. The steps whose GPU waited for no
 * batch are left out of the steady state (counted as iterations), and the per-step figures are
 * the loader-bound loop's: about 400 us of data starvation in steps of about 520 us. */
/* n iterations of a batch's copy and a 100 us kernel; those before `ready` (and not `slow`)
 * find their batch ready: the host copies it while the previous kernel still runs. The others
 * wait 400 us for it after the previous kernel ended. */
static void prefetch_loop(struct tb *t, int n, int ready, int slow) {
  double h = 1000, gpu = 1000; /* the host's time, the GPU's (its last kernel's end) */
  for (int k = 0; k < n; k++) {
    h = k < ready && k != slow ? (h > gpu - 40 ? h : gpu - 40) : gpu + 400;
    uint32_t c = call(t, 1, h, h + 5, SLK_FN_MEMCPY_ASYNC, 1, 1, "input_copy");
    double cs = h + 7 > gpu ? h + 7 : gpu;
    memcpy_rec(t, c, 7, cs, cs + 10, 1, 2);
    launch(t, 1, h + 6, cs + 10, cs + 110, "step_kernel");
    gpu = cs + 110;
    h += 8;
  }
}

static void test_steps_prefetched(void) {
  struct tb t = {0};
  prefetch_loop(&t, 13, 4, -1);
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_steps *sp = &r.gpus[0].steps;
  EQ(sp->prefetched, 3);
  EQ(sp->count, 9);
  CHECK(sp->warmup >= 3, "warm-up %zu", sp->warmup);
  NEAR(sp->step_ns, U(517), U(5));
  NEAR(sp->per_step_ns[CLS_DATA_STARVATION], U(400), U(10));
  cls_result_free(&r);
  tb_free(&t);

  /* a loader that keeps up after a slow first batch has no head start to leave out */
  struct tb u = {0};
  prefetch_loop(&u, 13, 13, 6);
  in = input(&u, 0);
  run(&in, 1, NULL, &r);
  EQ(r.gpus[0].steps.prefetched, 0);
  cls_result_free(&r);
  tb_free(&u);

  /* nor a long trace whose loop ran 69 steps fed before its loader fell behind (more than any
   * loader holds ready: the loop's own pace, which changed); 64 at most is a head start */
  for (int ready = 65; ready <= 70; ready += 5) {
    struct tb v = {0};
    prefetch_loop(&v, 240, ready, -1);
    in = input(&v, 0);
    run(&in, 1, NULL, &r);
    EQ(r.gpus[0].steps.prefetched, ready == 65 ? 64 : 0);
    cls_result_free(&r);
    tb_free(&v);
  }
}

/* Steps on a new shape (classify.c shape_warmup_steps): n iterations of 4 kernels (75 us each,
 * the host launching at the GPU's pace) whose grids follow the iteration's length, one of `lens`
 * lengths (6 at most, first met at iterations 0, 3, 6, 10, 15 and 21; `lens` >= n: a new one
 * every iteration); the first time the host meets a length it works
 * outside CUDA (700 us) before the third launch (a library building a plan for the shape), and
 * where `slow_every` is set every such iteration does so too (periodic host work: a step's own
 * cost, with no new grid). */
static void shape_loop(struct tb *t, int n, int lens, int slow_every) {
  static const char *names[4] = {"embed", "gemm", "attn", "opt"};
  double h = 1000, gpu = 0;
  /* where each length is first met (lens 6): spread through the start, as a random draw is */
  static const int first[6] = {0, 3, 6, 10, 15, 21};
  int nmet = 0;
  for (int k = 0; k < n; k++) {
    int len = k % (nmet ? nmet : 1), fresh = 0;
    if (lens >= n || (nmet < lens && nmet < 6 && k == first[nmet])) {
      len = lens >= n ? k : nmet;
      nmet++;
      fresh = 1;
    }
    fresh |= slow_every && k % slow_every == slow_every - 1;
    for (int q = 0; q < 4; q++) {
      if (q == 2 && fresh) h += 700;
      uint32_t c = call(t, 1, h, h + 2, SLK_FN_LAUNCH, 1, 0, "launch_site");
      double ks = h + 5 > gpu ? h + 5 : gpu;
      add(t, (struct slk_record){.kind = SLK_KERNEL,
                                 .device = 0,
                                 .stream = 7,
                                 .start = U(ks),
                                 .end = U(ks + 70),
                                 .corr = c,
                                 .name = S(t, names[q]),
                                 .grid = {64 + 16 * len, 1, 1}});
      gpu = ks + 70;
      h += 75;
    }
  }
}

static void test_steps_shape_new(void) {
  /* 40 iterations over 6 lengths: the first meetings after the warm-up (and the steps the
   * pattern's anchor makes of them) are left out; the steady state is the 300 us iterations with
   * nothing to fix */
  struct tb t = {0};
  shape_loop(&t, 40, 6, 0);
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_steps *sp = &r.gpus[0].steps;
  CHECK(sp->shape_new >= 4 && sp->shape_new <= 12, "shape_new %zu", sp->shape_new);
  CHECK(sp->shape_new_step_ns > U(450), "their step %llu",
        (unsigned long long)sp->shape_new_step_ns);
  NEAR(sp->step_ns, U(300), U(15));
  CHECK(sp->per_step_ns[CLS_OTHER] < U(20), "other %llu per step",
        (unsigned long long)sp->per_step_ns[CLS_OTHER]);
  size_t iters = sp->warmup + sp->count + sp->shape_new + sp->paused + sp->trailing;
  NEAR(iters, 40, 2);
  CHECK(strstr(sp->detail, "met for the first time") != NULL, "detail: %s", sp->detail);
  cls_result_free(&r);
  tb_free(&t);

  /* a new length in every iteration: the cost is the loop's own, nothing is left out */
  struct tb u = {0};
  shape_loop(&u, 40, 40, 0);
  in = input(&u, 0);
  run(&in, 1, NULL, &r);
  EQ(r.gpus[0].steps.shape_new, 0);
  CHECK(r.gpus[0].steps.per_step_ns[CLS_OTHER] > U(500), "other %llu per step",
        (unsigned long long)r.gpus[0].steps.per_step_ns[CLS_OTHER]);
  cls_result_free(&r);
  tb_free(&u);

  /* one shape, and every 4th iteration works 700 us on the host (periodic work, no new grid):
   * kept, the steps timed whole */
  struct tb v = {0};
  shape_loop(&v, 40, 1, 4);
  in = input(&v, 0);
  run(&in, 1, NULL, &r);
  EQ(r.gpus[0].steps.shape_new, 0);
  CHECK(r.gpus[0].steps.per_step_ns[CLS_OTHER] > U(100), "other %llu per step",
        (unsigned long long)r.gpus[0].steps.per_step_ns[CLS_OTHER]);
  cls_result_free(&r);
  tb_free(&v);
}

static void test_replay_data_starvation(void) {
  struct tb t = {0};
  for (int s = 0; s < 8; s++) {
    double b = 1000 + s * 300.0;
    uint32_t c = call(&t, 1, b, b + 5, SLK_FN_MEMCPY_ASYNC, 1, 1, "input_copy");
    memcpy_rec(&t, c, 7, b + 7, b + 17, 1, 2);
    launch(&t, 1, b + 6, b + 17, b + 117, "step_kernel");
    /* then 300 - 8 us of loading the next batch */
  }
  call(&t, 1, 10, 12, SLK_FN_DEVICE_SYNC, 0, 0, "start");
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  const struct cls_steps *sp = &g->steps;
  EQ(sp->count, 7);
  EQ(sp->step_ns, U(300));
  EQ(sp->per_step_ns[CLS_DATA_STARVATION], U(190));
  EQ(g->replay_step_ns, U(300));
  /* without the loading, the step is the GPU's: copy 10 + kernel 100, and the launch latency */
  CHECK(g->whatif[CLS_DATA_STARVATION].replay_ns <= U(120) &&
            g->whatif[CLS_DATA_STARVATION].replay_ns >= U(110),
        "data starvation what-if %llu",
        (unsigned long long)g->whatif[CLS_DATA_STARVATION].replay_ns);
  EQ(g->whatif[CLS_DATA_STARVATION].bound_ns, U(110));
  /* every stall fixed at once: at most what fixing the loading alone gives, and the GPU's work */
  CHECK(g->whatif_all.replay_ns <= g->whatif[CLS_DATA_STARVATION].replay_ns &&
            g->whatif_all.replay_ns >= U(100),
        "all stalls what-if %llu", (unsigned long long)g->whatif_all.replay_ns);
  cls_result_free(&r);
  tb_free(&t);
}

/* Chained causes in a loop (the seed's ls form): each step copies its batch, runs 1 ms of GPU
 * work, syncs on it (.item()), then the host works `load` us outside CUDA until the next step's
 * copy. The sync's wait kept the host from loading ahead: that head of the loading is
 * serialization in the partition and the loader's work too (per_step_shared_ns); the loader's
 * fix alone takes its own time and the shared time off, the sync's fix the shared time. */
static void chain_loop(struct tb *t, double load) {
  double period = 1180 + load;
  for (int s = 0; s < 8; s++) {
    double b = 1000 + s * period;
    uint32_t c = call(t, 1, b, b + 50, SLK_FN_MEMCPY_ASYNC, 1, 1, "input_copy"); /* pinned */
    memcpy_rec(t, c, 7, b + 70, b + 170, 1, 2);
    launch(t, 1, b + 60, b + 170, b + 1170, "step_kernel");
    call(t, 1, b + 200, b + 1180, SLK_FN_STREAM_SYNC, 0, 0, "item_site");
  }
  call(t, 1, 10, 12, SLK_FN_DEVICE_SYNC, 0, 0, "start");
}

static uint64_t gain(const struct cls_gpu *g, int c) {
  return g->steps.step_ns > g->whatif[c].best_ns ? g->steps.step_ns - g->whatif[c].best_ns : 0;
}

static void test_chain_shared(void) {
  struct tb t = {0};
  chain_loop(&t, 1500); /* a loader longer than the GPU's step */
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  const struct cls_steps *sp = &g->steps;
  EQ(sp->count, 7);
  EQ(sp->step_ns, U(2680));
  /* the head the wait stole: 970 us waited (1170 - 200) less the sync's own 5 (no sync that
   * did not wait: the default), shared; the sync's last 10 us in the gap are its alone */
  NEAR(sp->per_step_shared_ns[CLS_DATA_STARVATION], U(965), U(2));
  NEAR(sp->per_step_ns[CLS_SERIALIZATION], U(975), U(2));
  EQ(sp->per_step_shared_ns[CLS_SERIALIZATION], 0);
  /* the loader's own and shared time: the whole 1.5 ms of loading and the copy call */
  NEAR(sp->per_step_ns[CLS_DATA_STARVATION] + sp->per_step_shared_ns[CLS_DATA_STARVATION],
       U(1500) + U(70), U(5));
  /* nothing twice in the partition */
  uint64_t sum = 0;
  for (int c = 0; c < CLS_COUNT; c++)
    sum += sp->per_step_ns[c];
  NEAR(sum, sp->step_ns, U(1));
  /* the bound of the loader's fix takes both off; every stall together the partition */
  EQ(g->whatif[CLS_DATA_STARVATION].bound_ns, sp->step_ns - sp->per_step_ns[CLS_DATA_STARVATION] -
                                                  sp->per_step_shared_ns[CLS_DATA_STARVATION]);
  /* the replays agree with the attribution: the loader's fix saves about its 1.5 ms, the
   * sync's about the 0.97 ms the loading then overlaps the GPU */
  CHECK(g->replay_ok, "replay");
  NEAR(gain(g, CLS_DATA_STARVATION), U(1500), U(100));
  NEAR(gain(g, CLS_SERIALIZATION), U(965), U(100));
  CHECK(gain(g, CLS_DATA_STARVATION) > gain(g, CLS_SERIALIZATION), "the loader's fix first");
  cls_result_free(&r);
  tb_free(&t);

  /* the seed's s form: the same sync, then 600 us of host work before the next copy (chained:
   * over the 500 us launch gap): the sync's fix saves more than the host work's */
  struct tb u = {0};
  chain_loop(&u, 600);
  in = input(&u, 0);
  run(&in, 1, NULL, &r);
  g = &r.gpus[0];
  sp = &g->steps;
  EQ(sp->count, 7);
  NEAR(sp->per_step_shared_ns[CLS_DATA_STARVATION], U(600), U(2)); /* all of it after the wait */
  CHECK(gain(g, CLS_SERIALIZATION) > gain(g, CLS_DATA_STARVATION) + U(200),
        "the sync's fix first: %llu against %llu", (unsigned long long)gain(g, CLS_SERIALIZATION),
        (unsigned long long)gain(g, CLS_DATA_STARVATION));
  cls_result_free(&r);
  tb_free(&u);
}

/* The round trip (GPU run 71): the sync reads what the host then processes for `load` us and
 * sends back with the next copy (tokens sampled on the CPU, a metric counted in Python). `own`:
 * 1, the host work's Python samples run in the syncing function (gen.py step, another line);
 * 2, in a library called from that function that loads no data (GPU run 78: Adam on the CPU
 * over the gradients read, `opt.step()` on the next line); else in a loader's frames called
 * from that function (the seed's loader after `.item()`): 0, the user's own loader; 3,
 * PyTorch's DataLoader (site-packages/torch/utils/data). */
static void test_chain_roundtrip(void) {
  const char *const work[] = {
      "loader.py:12 __next__\ngen.py:43 step\nrun.py:5 <module>",
      "gen.py:41 step\nrun.py:5 <module>",
      "/opt/v/lib/python3.12/site-packages/torch/optim/adam.py:480 _multi_tensor_adam\n"
      "/opt/v/lib/python3.12/site-packages/torch/optim/optimizer.py:516 wrapper\n"
      "gen.py:43 step\nrun.py:5 <module>",
      "/opt/v/lib/python3.12/site-packages/torch/utils/data/dataloader.py:733 __next__\n"
      "gen.py:43 step\nrun.py:5 <module>"};
  /* 4: no samples, the copy that ends the host work made by autograd's backward pass (a loss
   * computed by CPU ops on what the sync read, its gradient sent back: GPU run 173's
   * holdout_cpuloss, whose samples missed those stretches); 5: no samples, the copy the user's
   * (the next batch's, as the chained rule reads it) */
  for (int mode = 0; mode < 6; mode++) {
    int own = mode == 1 || mode == 2 || mode == 4;
    struct tb t = {0};
    double load = 1500, period = 1180 + load;
    for (int s = 0; s < 8; s++) {
      double b = 1000 + s * period;
      uint32_t c = call(&t, 1, b, b + 50, SLK_FN_MEMCPY_ASYNC, 1, 1, "input_copy");
      with_py(&t, mode == 4 ? "/opt/v/lib/python3.12/site-packages/torch/autograd/graph.py:869 "
                              "_engine_run_backward\n/opt/v/lib/python3.12/site-packages/torch/"
                              "_tensor.py:648 backward\ngen.py:44 step\nrun.py:5 <module>"
                            : "gen.py:44 step\nrun.py:5 <module>");
      memcpy_rec(&t, c, 7, b + 70, b + 170, 1, 2);
      launch(&t, 1, b + 60, b + 170, b + 1170, "step_kernel");
      call(&t, 1, b + 200, b + 1180, SLK_FN_STREAM_SYNC, 0, 0, "read_site");
      with_py(&t, "gen.py:40 step\nrun.py:5 <module>");
      for (double q = b + 1400; mode < 4 && q < b + 1180 + load; q += 500)
        sample(&t, 1, q, work[mode]);
    }
    call(&t, 1, 10, 12, SLK_FN_DEVICE_SYNC, 0, 0, "start");
    struct cls_input in = input(&t, 0);
    struct cls_result r;
    run(&in, 1, NULL, &r);
    const struct cls_steps *sp = &r.gpus[0].steps;
    EQ(sp->count, 7);
    uint64_t v = r.gpus[0].whatif[CLS_SERIALIZATION].best_ns;
    if (own) { /* the GPU waited on the round trip, the sync's: its whole idle time (the last
                * 10 us of the sync, the host work, the copy's call and its start) */
      NEAR(sp->per_step_ns[CLS_SERIALIZATION], U(1580), U(2));
      /* its fix: the work on the GPU, the copy of what the host sent back with it (the step
       * is its kernel's 1 ms, not that and the 100 us copy) */
      CHECK(v <= U(1050), "round trip: what-if %llu", (unsigned long long)v);
      EQ(sp->per_step_ns[CLS_DATA_STARVATION], 0);
      EQ(sp->per_step_shared_ns[CLS_DATA_STARVATION], 0);
    } else { /* the next batch's loading, its head shared with the sync (test_chain_shared) */
      NEAR(sp->per_step_shared_ns[CLS_DATA_STARVATION], U(965), U(2));
      CHECK(sp->per_step_ns[CLS_DATA_STARVATION] > U(500), "data starvation %llu",
            (unsigned long long)sp->per_step_ns[CLS_DATA_STARVATION]);
    }
    cls_result_free(&r);
    tb_free(&t);
  }
}

/* A round trip whose result stays on the host (GPU run 100: ResNet-18 inference whose top-5 are
 * read each step and written as JSON records in Python): 1 ms of GPU work a step, read back by a
 * sync at eval.py:64, then 1.5 ms of the host's work on it (samples in postprocess, under the
 * sync's statement), no copy back to the device. mode 0: every step; its fix keeps the work on
 * the host (one step behind), so the step is the host's 1.5 ms, not the GPU's 1 ms (the what-if
 * that cut the work said 1 ms where the fixed job ran host-bound). mode 1: every 4th step (a
 * periodic save: a background thread spreads it over the steps between): no host bound. */
static void test_roundtrip_on_host(void) {
  for (int mode = 0; mode < 2; mode++) {
    struct tb t = {0};
    double at = 1000;
    for (int s = 0; s < 16; s++) {
      double post = mode == 0 || s % 4 == 0 ? 1500 : 0;
      launch(&t, 1, at, at + 10, at + 1010, "fwd");
      call(&t, 1, at + 20, at + 1012, SLK_FN_STREAM_SYNC, 0, 0, "read_site");
      with_py(&t, "eval.py:64 step\nrun.py:5 <module>");
      for (double q = at + 1050; q < at + 1012 + post; q += 100)
        sample(&t, 1, q, "eval.py:30 postprocess\neval.py:64 step\nrun.py:5 <module>");
      at += 1020 + post;
    }
    struct cls_input in = input(&t, 1);
    struct cls_options opt;
    cls_options_default(&opt);
    opt.host_slowdown = 1.0; /* the host's pace as traced: the work's length alone sets the bound */
    opt.host_slowdown_given = 1;
    opt.cupti_call_ns = 0;
    opt.cupti_call_given = 1;
    struct cls_result r;
    run(&in, 1, &opt, &r);
    const struct cls_gpu *g = &r.gpus[0];
    const struct cls_whatif *wi = &g->whatif[CLS_SERIALIZATION];
    CHECK(g->steps.count >= 12, "steps %zu", g->steps.count);
    CHECK(g->steps.roundtrip_per_step_ns > U(mode ? 300 : 1400), "%d: round trip %llu", mode,
          (unsigned long long)g->steps.roundtrip_per_step_ns);
    /* the work cut: the GPU's 1 ms a step */
    CHECK(wi->replay_corrected_ns < U(1100), "%d: cut %llu", mode,
          (unsigned long long)wi->replay_corrected_ns);
    if (mode == 0) {
      CHECK(wi->host_bound_ns >= U(1480) && wi->host_bound_ns < U(1600) &&
                wi->best_ns == wi->host_bound_ns,
            "host bound %llu, what-if %llu", (unsigned long long)wi->host_bound_ns,
            (unsigned long long)wi->best_ns);
      CHECK(g->whatif_all.best_ns >= U(1480), "every stall %llu",
            (unsigned long long)g->whatif_all.best_ns);
    } else {
      EQ(wi->host_bound_ns, 0);
      EQ(wi->best_ns, wi->replay_corrected_ns);
    }
    cls_result_free(&r);
    tb_free(&t);
  }
}

/* A loader in threads of the training process (GPU run 82: a hand-written prefetcher of 4
 * Python threads): their Python holds the GIL between the main thread's launches, and the main
 * thread's time outside CUDA between them is mostly waiting. 12 steps of 20 launches, each
 * followed by 300 us outside CUDA (under the 500 us launch gap: launch overhead as traced); the
 * main thread's samples every 100 us say it ran 30% of the time (format 2.7's cpu_ns), a second
 * thread's samples in torchvision's frames that it ran 90%. mode 0: that; 1: the second thread
 * in frames of no data-loading library (a logging thread: not the loader's); 2: the main thread
 * running all the time (its own Python: nothing waited). */
static void loader_threads(int mode, uint64_t *ds, uint64_t *wait, uint64_t *step,
                           uint64_t *if_fixed) {
  struct tb t = {0};
  double at = 1000, gap = 300;
  char name[16];
  for (int s = 0; s < 12; s++)
    for (int k = 0; k < 20; k++) {
      snprintf(name, sizeof name, "k%d", k);
      launch(&t, 1, at, at + 5, at + 15, name);
      at += 2 + gap;
    }
  const char *mine = "model.py:40 forward\ntrain.py:88 step\ntrain.py:120 <module>";
  const char *other =
      mode == 1 ? "/usr/lib/python3.12/logging/__init__.py:1160 emit\nlog.py:12 run\n"
                  "/usr/lib/python3.12/threading.py:1010 run"
                : "/opt/v/lib/python3.12/site-packages/torchvision/transforms/functional.py:176 "
                  "to_tensor\nloader.py:53 run\n/usr/lib/python3.12/threading.py:1010 run";
  double on = mode == 2 ? 1.0 : 0.3;
  for (double q = 900; q < at + 200; q += 100) {
    sample(&t, 1, q, mine);
    t.td.kind[SLK_SAMPLE].v[t.td.kind[SLK_SAMPLE].n - 1].count = 1 + U(q * on);
    sample(&t, 2, q + 50, other);
    t.td.kind[SLK_SAMPLE].v[t.td.kind[SLK_SAMPLE].n - 1].count = 1 + U((q + 50) * 0.9);
  }
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  *ds = g->steps.per_step_ns[CLS_DATA_STARVATION];
  *wait = g->steps.loader_wait_per_step_ns;
  *step = g->steps.step_ns;
  *if_fixed = g->whatif[CLS_DATA_STARVATION].best_ns;
  /* named by the loader's line (its samples), not by the main thread's */
  if (!mode)
    CHECK(has_site(g, CLS_DATA_STARVATION, "loader.py:53 run") &&
              !has_site(g, CLS_DATA_STARVATION, "model.py"),
          "data starvation's sites: %s",
          g->nsites[CLS_DATA_STARVATION] ? g->sites[CLS_DATA_STARVATION][0].site : "none");
  cls_result_free(&r);
  tb_free(&t);
}

static void test_loader_threads_gil(void) {
  uint64_t ds, wait, step, fixed;
  loader_threads(0, &ds, &wait, &step, &fixed);
  /* each step's 20 x 300 us outside CUDA (less the 3 us before each kernel starts, the
   * submission's): 70% of it off the CPU while the loader's thread ran */
  CHECK(step > 0 && ds > 0.65 * 297 / 302 * step && ds < 0.75 * 297 / 302 * step,
        "data starvation %llu of a %llu step", (unsigned long long)ds, (unsigned long long)step);
  EQ(wait, ds);
  /* the loader out of the process: each 300 us between launches back to the 90 the main
   * thread ran */
  CHECK(fixed < 0.4 * step, "data starvation's what-if %llu of a %llu step",
        (unsigned long long)fixed, (unsigned long long)step);
  for (int mode = 1; mode <= 2; mode++) {
    loader_threads(mode, &ds, &wait, &step, &fixed);
    EQ(ds, 0);
    EQ(wait, 0);
    CHECK(fixed + U(2) > step, "mode %d: data starvation's what-if %llu of a %llu step", mode,
          (unsigned long long)fixed, (unsigned long long)step);
  }
}

/* A loader in threads that never waited (docs/CLASSIFICATION.md, "The loader's pace"; GPU runs
 * 84 and 90): 12 launch-bound steps of 20 launches 300 us apart, the main thread on the CPU
 * throughout (launch overhead, no loader wait), and a second thread sampled every 100 us in
 * torchvision's transforms (busy: building a batch) or in queue.put (waiting to hand one over).
 * busy 1: every sample builds; 0: one in five. Launch overhead's replay runs the launches at
 * once; with a loader that never waited no fix but the loader's goes below the loop's step. */
static void test_loader_bound(void) {
  for (int busy = 0; busy < 2; busy++) {
    struct tb t = {0};
    double at = 1000;
    char name[16];
    for (int s = 0; s < 12; s++)
      for (int k = 0; k < 20; k++) {
        snprintf(name, sizeof name, "k%d", k);
        launch(&t, 1, at, at + 5, at + 15, name);
        at += 302;
      }
    const char *build = "/opt/v/lib/python3.12/site-packages/torchvision/transforms/"
                        "functional.py:176 to_tensor\nloader.py:53 run\n"
                        "/usr/lib/python3.12/threading.py:1010 run";
    const char *put = "/usr/lib/python3.12/threading.py:359 Condition.wait\n"
                      "/usr/lib/python3.12/queue.py:140 Queue.put\nloader.py:58 run\n"
                      "/usr/lib/python3.12/threading.py:1010 run";
    int k = 0;
    for (double q = 900; q < at + 200; q += 100, k++) {
      sample(&t, 1, q, "model.py:40 forward\ntrain.py:88 step");
      t.td.kind[SLK_SAMPLE].v[t.td.kind[SLK_SAMPLE].n - 1].count = 1 + U(q);
      sample(&t, 2, q + 50, busy || k % 5 == 0 ? build : put);
      t.td.kind[SLK_SAMPLE].v[t.td.kind[SLK_SAMPLE].n - 1].count = 1 + U((q + 50) * 0.9);
    }
    struct cls_input in = input(&t, 0);
    struct cls_result r;
    run(&in, 1, NULL, &r);
    const struct cls_gpu *g = &r.gpus[0];
    const struct cls_whatif *lw = &g->whatif[CLS_LAUNCH_OVERHEAD];
    CHECK(g->steps.count >= 10, "steps %zu", g->steps.count);
    EQ(g->steps.per_step_ns[CLS_DATA_STARVATION], 0);
    CHECK(lw->replay_corrected_ns < g->corrected_step_ns / 2, "launch overhead's replay %llu",
          (unsigned long long)lw->replay_corrected_ns);
    if (busy) {
      CHECK(g->steps.loader_busy > 0.99, "busy %.3f", g->steps.loader_busy);
      CHECK(g->steps.loader_bound_ns + U(1) >= g->corrected_step_ns * 99 / 100,
            "bound %llu of %llu", (unsigned long long)g->steps.loader_bound_ns,
            (unsigned long long)g->corrected_step_ns);
      EQ(lw->best_ns, g->steps.loader_bound_ns);
      EQ(lw->loader_bound_ns, g->steps.loader_bound_ns);
      CHECK(g->whatif[CLS_SERIALIZATION].best_ns >= g->steps.loader_bound_ns, "serialization %llu",
            (unsigned long long)g->whatif[CLS_SERIALIZATION].best_ns);
      /* the loader's own fix and every stall's are not bounded by it */
      EQ(g->whatif[CLS_DATA_STARVATION].loader_bound_ns, 0);
      EQ(g->whatif_all.loader_bound_ns, 0);
      EQ(g->whatif_all.best_ns, g->whatif_all.replay_corrected_ns);
    } else {
      /* busy one sample in five: room for a faster loop */
      EQ(g->steps.loader_bound_ns, 0);
      CHECK(g->steps.loader_busy == 0, "busy %.3f", g->steps.loader_busy);
      EQ(lw->best_ns, lw->replay_corrected_ns);
    }
    cls_result_free(&r);
    tb_free(&t);
  }
}

/* The loader keeps up with another stall's fix (GPU run 90: a checkpoint saved in the loop kept
 * a DataLoader's pin-memory thread idle in its queue's get, no batch asked for, and the what-if
 * that cut the save met the next hand-over at its traced time). 12 iterations of 3 ms: the pin
 * thread (tid 2, no GPU work) hands each batch over 5 us before the main thread's copy, having
 * taken its buffer just before (its pace: 4 us turns); the main thread then launches 44 tiny
 * kernels 20 us apart (launch overhead, 0.86 ms) and goes on in Python for 2.1 ms. Launch
 * overhead's what-if takes the launch gaps off: mode 0, the pin thread sampled idle through its
 * wait (a multiprocessing queue's get, its CPU time not moving): its wait shrinks by the launch
 * overhead in it, down to its pace, and the step with it, to the main thread's own 2.1 ms and
 * the launches; mode 1, sampled building the batch in its own frames (a hand-written loader's
 * thread, its CPU time moving): its wait is its work, and the step stays at its pace, 3 ms.
 * Before, both kept 3 ms. */
static void test_loader_thread_idle(void) {
  const char *get = "/usr/lib/python3.12/selectors.py:415 _PollLikeSelector.select\n"
                    "/usr/lib/python3.12/multiprocessing/connection.py:1136 wait\n"
                    "/usr/lib/python3.12/multiprocessing/queues.py:113 Queue.get\n"
                    "loader.py:30 pin_loop";
  const char *build = "loader.py:77 build_batch\nloader.py:30 pin_loop";
  uint64_t step[2] = {0, 0};
  for (int mode = 0; mode < 2; mode++) {
    struct tb t = {0};
    for (int k = 0; k < 12; k++) {
      double b = 3000.0 + 3000.0 * k;
      call(&t, 2, b - 10, b - 8, SLK_FN_EVENT_QUERY, 0, 0, "pin"); /* the batch pinned */
      call(&t, 2, b - 6, b - 5, SLK_FN_EVENT_QUERY, 0, 0, "pin");  /* the next one's buffer */
      uint32_t c = call(&t, 1, b, b + 2, SLK_FN_MEMCPY_ASYNC, 1, 1, "batch");
      memcpy_rec(&t, c, 7, b + 3, b + 10, 1, 2);
      for (int j = 0; j < 44; j++)
        launch(&t, 1, b + 12 + 20 * j, b + 15 + 20 * j, b + 17 + 20 * j, "tiny");
      for (int q = 0; q < 29; q++) { /* the pin thread's wait, sampled every 100 us */
        sample(&t, 2, b + 80 + 100 * q, mode ? build : get);
        t.td.kind[SLK_SAMPLE].v[t.td.kind[SLK_SAMPLE].n - 1].count =
            1 + (mode ? U(3000.0 * k + 100.0 * q) : U(10.0 * k));
      }
    }
    struct cls_input in = input(&t, 0);
    struct cls_result r;
    run(&in, 1, NULL, &r);
    const struct cls_gpu *g = &r.gpus[0];
    NEAR(g->steps.step_ns, U(3000), U(5));
    CHECK(g->steps.per_step_ns[CLS_LAUNCH_OVERHEAD] > U(700), "mode %d: launch overhead %llu", mode,
          (unsigned long long)g->steps.per_step_ns[CLS_LAUNCH_OVERHEAD]);
    step[mode] = g->whatif[CLS_LAUNCH_OVERHEAD].replay_ns;
    cls_result_free(&r);
    tb_free(&t);
  }
  CHECK(step[0] < U(2400), "idle loader: launch overhead's what-if %llu",
        (unsigned long long)step[0]);
  CHECK(step[1] > U(2950), "busy loader: launch overhead's what-if %llu",
        (unsigned long long)step[1]);
}

/* A launching thread that waits for its batches from a producer (docs/CLASSIFICATION.md, "The
 * loader's pace"; GPU runs 125 and 126: a pool of threads fetching from a store, a DataLoader's
 * worker processes): 12 steps of 1 ms, each 600 us outside CUDA, then the batch's copy and 20
 * launches 15 us apart (5 us kernels). The main thread is sampled every 100 us: in the wait on
 * the CPU not at all, in the launches throughout. mode 0: the wait in a Future's result
 * (threading's Condition.wait), every step: the loop runs at the producer's pace, no fix but the
 * loader's goes below it, and the step without the tracer is the traced one. 1: the same time in
 * the user's own frame (a request made by the thread itself: a sleep, a socket): no producer. 2:
 * the Future's wait in 1 step of 12 (an epoch's workers started again), the other steps' 600 us
 * in the user's frame: the producer paces that wait alone. 3: mode 0 with a second thread
 * copying the next batch in each wait (a prefetcher's thread): bounded, but its pace is the
 * tracer's too, so the step without the tracer stays the replay's. */
static void test_producer_wait(void) {
  const char *future = "/usr/lib/python3.12/threading.py:355 Condition.wait\n"
                       "/usr/lib/python3.12/concurrent/futures/_base.py:451 Future.result\n"
                       "loader.py:99 next\ntrain.py:80 step";
  const char *own = "loader.py:77 fetch\nloader.py:99 next\ntrain.py:80 step";
  char name[16];
  for (int mode = 0; mode < 4; mode++) {
    struct tb t = {0};
    for (int k = 0; k < 12; k++) {
      double b = 1000.0 * k;
      if (mode == 3) {
        uint32_t p = call(&t, 2, b + 300, b + 302, SLK_FN_MEMCPY_ASYNC, 1, 1, "prefetch");
        memcpy_rec(&t, p, 8, b + 303, b + 306, 1, 2);
      }
      uint32_t c = call(&t, 1, b + 600, b + 602, SLK_FN_MEMCPY_ASYNC, 1, 1, "batch");
      memcpy_rec(&t, c, 7, b + 603, b + 610, 1, 2);
      for (int j = 0; j < 20; j++) {
        snprintf(name, sizeof name, "k%d", j);
        launch(&t, 1, b + 612 + 15 * j, b + 616 + 15 * j, b + 621 + 15 * j, name);
      }
      uint64_t cpu = U(400.0 * k); /* the thread's CPU time: 400 us a step, in its launches */
      for (int q = 0; q < 10; q++) {
        int waiting = q < 6;
        const char *py = !waiting ? "model.py:40 forward\ntrain.py:81 step"
                         : mode == 0 || mode == 3 || (mode == 2 && k == 5) ? future
                                                                           : own;
        sample(&t, 1, b + 100 * q, py);
        t.td.kind[SLK_SAMPLE].v[t.td.kind[SLK_SAMPLE].n - 1].count =
            1 + cpu + (waiting ? 0 : U(100.0 * (q - 6)));
      }
    }
    struct cls_input in = input(&t, 0);
    struct cls_result r;
    run(&in, 1, NULL, &r);
    const struct cls_gpu *g = &r.gpus[0];
    const struct cls_whatif *lw = &g->whatif[CLS_LAUNCH_OVERHEAD];
    CHECK(g->steps.count >= 10, "mode %d: steps %zu", mode, g->steps.count);
    CHECK(g->steps.per_step_ns[CLS_DATA_STARVATION] > U(500), "mode %d: data starvation %llu", mode,
          (unsigned long long)g->steps.per_step_ns[CLS_DATA_STARVATION]);
    CHECK(lw->replay_corrected_ns + U(200) < g->corrected_step_ns || mode == 0 || mode == 3,
          "mode %d: launch overhead's replay %llu of %llu", mode,
          (unsigned long long)lw->replay_corrected_ns, (unsigned long long)g->corrected_step_ns);
    if (mode == 3) {
      /* (the wait before the prefetcher's copy is the piece that copy ends: 300 of 600 us) */
      CHECK(g->steps.producer_wait > 0.2, "waited %.3f", g->steps.producer_wait);
      EQ(g->steps.producer_traced, 1);
      CHECK(g->corrected_step_ns < g->steps.step_ns, "step without the tracer %llu of %llu",
            (unsigned long long)g->corrected_step_ns, (unsigned long long)g->steps.step_ns);
      EQ(g->steps.loader_bound_ns, g->corrected_step_ns);
      EQ(lw->best_ns, g->steps.loader_bound_ns);
    } else if (mode == 0) {
      EQ(g->steps.producer_traced, 0);
      CHECK(g->steps.producer_wait > 0.5, "waited %.3f", g->steps.producer_wait);
      EQ(g->steps.loader_busy, 0);
      CHECK(g->steps.loader_bound_ns >= g->steps.step_ns, "bound %llu of a %llu step",
            (unsigned long long)g->steps.loader_bound_ns, (unsigned long long)g->steps.step_ns);
      EQ(g->corrected_step_ns, g->steps.loader_bound_ns);
      EQ(lw->best_ns, g->steps.loader_bound_ns);
      EQ(lw->loader_bound_ns, g->steps.loader_bound_ns);
      /* the loader's own fix is not bounded by it */
      EQ(g->whatif[CLS_DATA_STARVATION].loader_bound_ns, 0);
      CHECK(g->whatif[CLS_DATA_STARVATION].best_ns < U(500), "data starvation's what-if %llu",
            (unsigned long long)g->whatif[CLS_DATA_STARVATION].best_ns);
      /* the wait without the tracer: the producer's pace less the step without the waits, more
       * than the traced wait (the tracer's cost on the launches between batches is waiting) */
      EQ(g->steps.starved_untraced_per_step_ns,
         g->corrected_step_ns - g->whatif[CLS_DATA_STARVATION].best_ns);
      CHECK(g->steps.starved_untraced_per_step_ns > g->steps.per_step_ns[CLS_DATA_STARVATION],
            "untraced %llu, traced %llu", (unsigned long long)g->steps.starved_untraced_per_step_ns,
            (unsigned long long)g->steps.per_step_ns[CLS_DATA_STARVATION]);
    } else {
      CHECK(g->steps.producer_wait == 0, "mode %d: waited %.3f", mode, g->steps.producer_wait);
      EQ(g->steps.loader_bound_ns, 0);
      EQ(lw->best_ns, lw->replay_corrected_ns);
    }
    if (mode != 0) EQ(g->steps.starved_untraced_per_step_ns, 0); /* no such pace, or traced */
    cls_result_free(&r);
    tb_free(&t);
  }
}

/* Stacks captured between launches (cls_gaps.c capture_split): a launch-bound loop, 200
 * launches 40 us apart of 5 us kernels, the launching thread sampled in every other launch gap's
 * host work. `capture`: 1 half of those samples in Python's traceback module (autograd's anomaly
 * detection storing each forward operation's stack through torch.fx's traceback), 2 all of them
 * there but one (too few hits: the rule needs 2), 0 none (all in the model's forward). Returns the
 * launch overhead what-if's replayed step, *lo the class's time, *stacks other's stack_capture
 * time. */
static uint64_t capture_loop(int capture, uint64_t *lo, uint64_t *stacks) {
  struct tb t = {0};
  char name[16];
  const char *tb = "/usr/lib/python3.12/traceback.py:398 StackSummary._extract_from_extended_"
                   "frame_gen\n/usr/lib/python3.12/traceback.py:232 extract_stack\n/opt/v/lib/"
                   "python3.12/site-packages/torch/fx/traceback.py:159 format_stack\nmodel.py:40 "
                   "forward\ntrain.py:88 step";
  const char *lc = "/usr/lib/python3.12/linecache.py:64 checkcache\n/usr/lib/python3.12/"
                   "traceback.py:318 line\nmodel.py:40 forward\ntrain.py:88 step";
  const char *fw = "/opt/v/lib/python3.12/site-packages/torch/nn/modules/conv.py:548 "
                   "_conv_forward\nmodel.py:40 forward\ntrain.py:88 step";
  for (int k = 0; k < 200; k++) {
    double s = 1000 + 40.0 * k;
    snprintf(name, sizeof name, "k%d", k % 8);
    launch(&t, 1, s, s + 3, s + 8, name);
    if (k % 2) continue;
    int hit = capture == 1 ? k % 4 == 0 : capture == 2 ? k == 0 : 0;
    sample(&t, 1, s + 20, hit ? (k % 8 ? tb : lc) : fw);
    t.td.kind[SLK_SAMPLE].v[t.td.kind[SLK_SAMPLE].n - 1].count = 1 + U(s + 20);
  }
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  *lo = g->time_ns[CLS_LAUNCH_OVERHEAD];
  *stacks = g->other_ns[CLS_WHY_STACKS];
  uint64_t step = g->whatif[CLS_LAUNCH_OVERHEAD].replay_ns;
  cls_result_free(&r);
  tb_free(&t);
  return step;
}

static void test_stack_capture(void) {
  uint64_t lo0, st0, lo1, st1, lo2, st2;
  uint64_t w0 = capture_loop(0, &lo0, &st0), w1 = capture_loop(1, &lo1, &st1);
  uint64_t w2 = capture_loop(2, &lo2, &st2);
  CHECK(lo0 > U(5000), "launch overhead %llu", (unsigned long long)lo0);
  EQ(st0, 0);
  EQ(st2, 0); /* one capturing sample says nothing */
  EQ(lo2, lo0);
  /* half the samples capturing: half the host work of each launch gap is the capture's */
  CHECK(st1 > lo0 * 4 / 10 && st1 < lo0 * 6 / 10, "stack capture %llu of %llu",
        (unsigned long long)st1, (unsigned long long)lo0);
  CHECK(lo1 + st1 <= lo0 + 200 && lo1 + st1 + 200 >= lo0, "split %llu + %llu of %llu",
        (unsigned long long)lo1, (unsigned long long)st1, (unsigned long long)lo0);
  /* a CUDA graph takes the launches' share of the host work off, the capture stays */
  CHECK(w1 > w0 + U(100), "what-if %llu with capture, %llu without", (unsigned long long)w1,
        (unsigned long long)w0);
  EQ(w2, w0);
}

/* Samples whose CPU time cannot be read as a share (a hostile or damaged trace): the main
 * thread's clock going backwards, two samples at one instant, a loader's clock of 0 (not
 * measured), a count near 2^64: no waits found, nothing overflows (UBSan builds). */
static void test_loader_threads_bad_samples(void) {
  struct tb t = {0};
  char name[16];
  double at = 1000;
  for (int k = 0; k < 40; k++) {
    snprintf(name, sizeof name, "k%d", k % 8);
    launch(&t, 1, at, at + 5, at + 15, name);
    at += 302;
  }
  const char *lib = "/opt/v/lib/python3.12/site-packages/torchvision/transforms/functional.py:176 "
                    "to_tensor\nloader.py:53 run";
  for (double q = 900; q < at; q += 100) {
    sample(&t, 1, q, "model.py:40 forward");
    t.td.kind[SLK_SAMPLE].v[t.td.kind[SLK_SAMPLE].n - 1].count = 1 + U(100000 - q); /* back */
    sample(&t, 1, q, "model.py:40 forward"); /* the same instant */
    t.td.kind[SLK_SAMPLE].v[t.td.kind[SLK_SAMPLE].n - 1].count = UINT64_MAX - 5;
    sample(&t, 2, q + 50, lib);
    t.td.kind[SLK_SAMPLE].v[t.td.kind[SLK_SAMPLE].n - 1].count = (int)q % 300 ? 0 : UINT64_MAX;
  }
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  EQ(r.gpus[0].time_ns[CLS_DATA_STARVATION], 0);
  cls_result_free(&r);
  tb_free(&t);
}

/* A round trip inside a library call (GPU run 74: torch.save copies each CUDA tensor to the
 * host, waits, and writes it before the next): 8 steps of a 1 ms kernel, then 4 tensors, each a
 * device-to-host copy and a stream sync called from the torch's frames under the user's line
 * ckpt.py:92, then `write` us of host work before the next copy. `own`: the host work's samples
 * run in torch's frames under that same line (the statement that synced: its writing); else
 * in another function of the user's code (a summary written after the save, called from
 * another line; a library called straight from the syncing function would be its processing of
 * what it read, test_chain_roundtrip). The gaps between
 * the copies are serialization either way (the next submission is no batch's copy); the
 * what-if takes the host work off only for the round trip. Returns the serialization what-if's
 * step with that work cut; *bound its host bound (a save in every step recurs: the host's own
 * work, test_roundtrip_on_host), 0 without one. */
static uint64_t save_loop(int own, double write, double lead, uint64_t *step, uint64_t *bound) {
  struct tb t = {0};
  const char *lib = "/opt/v/lib/python3.12/site-packages/torch/";
  char sync_py[256], work_py[256];
  snprintf(sync_py, sizeof sync_py,
           "%sstorage.py:264 cpu\n%sserialization.py:1311 _save\n%sserialization.py:1004 "
           "save\nckpt.py:92 save_sync\nrun.py:5 <module>",
           lib, lib, lib);
  if (own)
    snprintf(work_py, sizeof work_py,
             "%sserialization.py:1313 _save\n%sserialization.py:1004 save\nckpt.py:92 "
             "save_sync\nrun.py:5 <module>",
             lib, lib);
  else
    snprintf(work_py, sizeof work_py,
             "%slogging/__init__.py:1160 emit\nckpt.py:120 write_summary\nckpt.py:95 "
             "save_sync\nrun.py:5 <module>",
             "/usr/lib/python3.12/");
  char lead_py[256];
  snprintf(lead_py, sizeof lead_py, "%sserialization.py:829 __init__\n%s", lib,
           strstr(work_py, own ? "ckpt.py:92" : "ckpt.py:120"));
  double period = 1200 + lead + 4 * (30 + write);
  for (int s = 0; s < 8; s++) {
    double b = 1000 + s * period;
    launch(&t, 1, b, b + 5, b + 1005, "step_kernel");
    /* the statement's lead-in: opening the file, pickling, past the step's kernel */
    for (double q = b + 1100; q < b + 1005 + lead; q += 100)
      sample(&t, 1, q, lead_py);
    double h = b + 1005 + lead, g = b + 1005; /* the host's time, the GPU's */
    for (int j = 0; j < 4; j++) { /* into pageable memory: the call returns with the copy */
      double ms = g > h + 3 ? g : h + 3;
      uint32_t c = call(&t, 1, h, ms + 11, SLK_FN_MEMCPY_ASYNC, 1, 2, "save_copy");
      with_py(&t, sync_py);
      memcpy_rec(&t, c, 7, ms, ms + 10, 2, 3);
      t.td.kind[SLK_MEMCPY].v[t.td.kind[SLK_MEMCPY].n - 1].dst_kind = 1;
      call(&t, 1, ms + 11.5, ms + 12, SLK_FN_STREAM_SYNC, 0, 0, "save_sync");
      with_py(&t, sync_py);
      for (double q = ms + 12 + 40; q < ms + 12 + write; q += 100)
        sample(&t, 1, q, work_py);
      h = ms + 12 + write;
      g = 0;
    }
  }
  call(&t, 1, 10, 12, SLK_FN_DEVICE_SYNC, 0, 0, "start");
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->steps.count, 7);
  CHECK(g->steps.per_step_ns[CLS_SERIALIZATION] >= U(4 * write + (own ? lead : 0)),
        "serialization %llu", (unsigned long long)g->steps.per_step_ns[CLS_SERIALIZATION]);
  /* the round trip's part of serialization (its fix: the work off the critical path) */
  if (own)
    CHECK(g->steps.roundtrip_per_step_ns >= U(4 * write + lead), "round trip %llu",
          (unsigned long long)g->steps.roundtrip_per_step_ns);
  else
    EQ(g->steps.roundtrip_per_step_ns, 0);
  if (!own && lead) /* host work of another statement before the save's first read */
    CHECK(g->steps.per_step_ns[CLS_OTHER] >= U(lead - 100), "other %llu",
          (unsigned long long)g->steps.per_step_ns[CLS_OTHER]);
  EQ(g->steps.per_step_ns[CLS_DATA_STARVATION], 0);
  CHECK(g->replay_ok, "replay");
  *step = g->steps.step_ns;
  const struct cls_whatif *wi = &g->whatif[CLS_SERIALIZATION];
  uint64_t v = wi->replay_corrected_ns;
  *bound = wi->host_bound_ns;
  CHECK(wi->best_ns == (v > *bound ? v : *bound), "what-if %llu: the cut %llu or the bound %llu",
        (unsigned long long)wi->best_ns, (unsigned long long)v, (unsigned long long)*bound);
  cls_result_free(&r);
  tb_free(&t);
  return v;
}

static void test_roundtrip_in_library(void) {
  uint64_t step, bound, v = save_loop(1, 600, 0, &step, &bound);
  /* a save in every step is the host's own work each step: the fix that keeps it on the host
   * (a writer one step behind) is bound by it, 4 x 600 us */
  CHECK(bound >= U(2300) && bound < step, "host bound %llu", (unsigned long long)bound);
  /* the writes (4 x 600 us) leave the step with the usual fix (a background writer) */
  CHECK(v + U(2200) <= step && v >= U(1000), "round trip: what-if %llu of a %llu step",
        (unsigned long long)v, (unsigned long long)step);
  /* and the statement's lead-in before its first read (GPU run 75: torch.save opening its
   * file), 800 us past the step's kernel: serialization, cut with the rest */
  v = save_loop(1, 600, 900, &step, &bound);
  CHECK(v + U(2200 + 700) <= step && v >= U(1000), "lead-in: what-if %llu of a %llu step",
        (unsigned long long)v, (unsigned long long)step);
  v = save_loop(0, 600, 900, &step, &bound);
  EQ(bound, 0); /* no round trip */
  CHECK(v >= U(2400), "other work with a lead-in: what-if %llu", (unsigned long long)v);
  v = save_loop(0, 600, 0, &step, &bound);
  /* host work of another statement stays on the host's path (it overlaps the next step's
   * kernel once the waits are gone, no more) */
  CHECK(v >= U(2400) && v < step, "other work: what-if %llu of a %llu step", (unsigned long long)v,
        (unsigned long long)step);
}

/* PyTorch's backward runs on another thread: 8 steps of `period` us, each the batch's copy, a
 * forward kernel of `op` us launched by the main thread (thread 1) at +6, the backward (`op`)
 * launched by the autograd thread (thread 2) at +bwd, the optimizer (op / 5) by the main
 * thread at +opt; then the main thread loads the next batch until the step's end. Returns the
 * data starvation what-if's replayed step. */
static uint64_t handoff_loop(double period, double op, double bwd, double opt) {
  struct tb t = {0};
  for (int s = 0; s < 8; s++) {
    double b = 1000 + s * period, k = b + 17;
    uint32_t c = call(&t, 1, b, b + 5, SLK_FN_MEMCPY_ASYNC, 1, 1, "input_copy");
    memcpy_rec(&t, c, 7, b + 7, k, 1, 2);
    launch(&t, 1, b + 6, k, k + op, "forward");
    launch(&t, 2, b + bwd, k + op, k + 2 * op, "backward"); /* autograd thread */
    launch(&t, 1, b + opt, k + 2 * op, k + 2.2 * op, "optimizer");
  }
  call(&t, 1, 10, 12, SLK_FN_DEVICE_SYNC, 0, 0, "start");
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->steps.step_ns, U(period));
  EQ(g->replay_step_ns, U(period));
  uint64_t v = g->whatif[CLS_DATA_STARVATION].replay_ns;
  cls_result_free(&r);
  tb_free(&t);
  return v;
}

/* A hand-over from the main thread to the autograd thread and back (the autograd thread's first
 * launch 12 us after the main thread's last call): removing the main thread's loading moves
 * both. */
static void test_replay_handoff(void) {
  uint64_t v = handoff_loop(400, 50, 20, 30);
  CHECK(v <= U(135), "data starvation what-if %llu", (unsigned long long)v);
}

/* The same hand-over, slow: the autograd thread's first launch comes 1.5 ms after the main
 * thread's last call (GPU run 40: the traced lcs form had two such steps of 26; Python between
 * the loss and backward()), in 400 ms steps of which the main thread loads the batch for 290.
 * Still a hand-over: the autograd thread's 400 ms without a call were a wait for the main thread,
 * so moving the loading out moves its launches too. */
static void test_replay_handoff_slow(void) {
  uint64_t v = handoff_loop(400000, 50000, 1508, 3000);
  CHECK(v <= U(115000), "data starvation what-if %llu", (unsigned long long)v);
}

/* The hand-over after a short quiet (GPU run 45: the autograd thread quiet for 65 ms resumed
 * 2.3 ms after the main thread's last call in 1 of 23 steps): 65 ms steps, the main thread
 * loading for 58 of them. A 64th of the quiet (1 ms) missed it and that step's what-if kept the
 * loading; a 16th finds it. */
static void test_replay_handoff_short_quiet(void) {
  uint64_t v = handoff_loop(65000, 2000, 2308, 5000);
  CHECK(v <= U(8000), "data starvation what-if %llu", (unsigned long long)v);
}

/* A helper's call between the autograd thread's launches (GPU run 129: a DataLoader's pin-memory
 * thread asking for its pinned blocks' events while the backward pass was being launched, its
 * query 0.1 us before one launch and after another 34 us earlier). 8 steps of 100 ms: the main
 * thread (tid 1) copies the batch and launches the forward pass, the autograd thread (tid 3) the
 * backward pass in three launches, the last 32 us after the one before, the main thread the
 * optimizer, then it loads the next batch until the step's end (data starvation). The pin
 * thread (tid 2, no GPU work, sampled in its own Python) asks at +2 ms, during the loading, and
 * at +62 us, just before the backward's last launch: read as that launch's hand-over, the
 * query's wait since +2 ms of the step before (98 ms in which only the loading main thread ran:
 * its own work by its frames) held the backward, and the step, in the loader's what-if. mode 0:
 * the autograd thread sampled without Python frames, and the query is no hand-over to it; mode
 * 1: sampled in Python frames (a thread that may wait on a helper's queue or the GIL), and mode
 * 2: that thread not sampled (nothing says it runs no Python): the look as before. */
static void test_helper_between_launches(void) {
  uint64_t v[3];
  for (int mode = 0; mode < 3; mode++) {
    struct tb t = {0};
    call(&t, 1, 10, 12, SLK_FN_DEVICE_SYNC, 0, 0, "start");
    for (int s = 0; s < 8; s++) {
      double b = 1000 + s * 100000.0, k = b + 17;
      uint32_t c = call(&t, 1, b, b + 5, SLK_FN_MEMCPY_ASYNC, 1, 1, "input_copy");
      memcpy_rec(&t, c, 7, b + 7, k, 1, 2);
      launch(&t, 1, b + 6, k, k + 20, "forward");
      launch(&t, 3, b + 20, k + 20, k + 30, "backward1");
      launch(&t, 3, b + 30, k + 30, k + 40, "backward2");
      call(&t, 2, b + 62, b + 63, SLK_FN_EVENT_QUERY, 0, 0, "pin");
      launch(&t, 3, b + 64, k + 64, k + 74, "backward3");
      launch(&t, 1, b + 95, k + 95, k + 100, "optimizer");
      call(&t, 2, b + 2000, b + 2001, SLK_FN_EVENT_QUERY, 0, 0, "pin");
      sample(&t, 1, b + 50000, "train.py:40 step\nloader.py:12 __next__");
      sample(&t, 2, b + 3000, "pin_loop.py:30 pin_loop");
      if (mode == 1)
        sample(&t, 3, b + 50, "train.py:44 step");
      else if (mode == 0) /* (a sample without frames: no stack, pystack 0) */
        add(&t, (struct slk_record){
                    .kind = SLK_SAMPLE, .tid = 3, .start = U(b + 50), .end = U(b + 50)});
    }
    struct cls_input in = input(&t, 0);
    struct cls_result r;
    run(&in, 1, NULL, &r);
    const struct cls_gpu *g = &r.gpus[0];
    EQ(g->steps.step_ns, U(100000));
    CHECK(g->steps.per_step_ns[CLS_DATA_STARVATION] > U(99000), "mode %d: data starvation %llu",
          mode, (unsigned long long)g->steps.per_step_ns[CLS_DATA_STARVATION]);
    v[mode] = g->whatif[CLS_DATA_STARVATION].replay_ns;
    cls_result_free(&r);
    tb_free(&t);
  }
  CHECK(v[0] <= U(1000), "no hand-over from the query: data starvation what-if %llu",
        (unsigned long long)v[0]);
  CHECK(v[1] > U(50000), "a thread with Python frames: the query's hand-over held it, %llu",
        (unsigned long long)v[1]);
  CHECK(v[2] > U(50000), "no samples: the query's hand-over held it, %llu",
        (unsigned long long)v[2]);
}

/* A slow hand-back (GPU run 56): the main thread goes quiet in backward() right after its forward
 * launch, the autograd thread starts 18 us later and launches for 5 ms (one call every 20 us),
 * and the main thread's next call (the optimizer) comes 1.1 ms after the autograd thread's last:
 * over the 1 ms a hand-over allowed after a 6 ms quiet. The autograd thread began right after the
 * main thread went quiet and went quiet before it resumed: the main thread waited for it. With an
 * untraced tail where calls come twice as fast, the step without the tracer shortens with the
 * autograd thread's launches (the main thread's 6 ms wait kept as its own host work held it at
 * the traced 8 ms). */
static void test_replay_handoff_slow_return(void) {
  struct tb t = {0};
  const double P = 8000;
  for (int s = 0; s < 12; s++) {
    double b = 1000 + s * P, gpu = b + 3;
    launch(&t, 1, b, gpu, gpu + 500, "forward");
    gpu += 500;
    for (int j = 0; j < 250; j++) {
      double c0 = b + 20 + j * 20;
      uint32_t c = call(&t, 2, c0, c0 + 2, SLK_FN_LAUNCH, 1, 0, "backward");
      double ks = c0 + 3 > gpu ? c0 + 3 : gpu;
      kernel(&t, c, 0, 7, ks, ks + 10, "bwd", 0);
      gpu = ks + 10;
    }
    launch(&t, 1, b + 5002 + 1100, b + 6105, b + 6205, "optimizer");
  }
  add(&t, (struct slk_record){.kind = SLK_PROBE,
                              .tid = 1,
                              .start = U(98000),
                              .end = U(98100),
                              .count = 512,
                              .bytes = 4000,
                              .result = 3000,
                              .flags = SLK_PROBE_DETACHED});
  for (int i = 0; i < 200; i++) { /* the tail: the same calls, twice as fast */
    call(&t, 2, 98500 + i * 10, 98500 + i * 10 + 1, SLK_FN_LAUNCH, 1, 0, "backward");
    call(&t, 1, 98505 + i * 10, 98505 + i * 10 + 1, SLK_FN_LAUNCH, 1, 0, "forward");
  }
  struct cls_input in = input(&t, 1);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_gpu *g = &r.gpus[0];
  EQ(g->steps.step_ns, U(P));
  CHECK(g->tracer.tail_factor > 1.9 && g->tracer.tail_factor < 2.1, "tail factor %f",
        g->tracer.tail_factor);
  CHECK(g->corrected_step_ns < U(6500),
        "the step without the tracer %llu: the main thread's "
        "wait for the autograd thread kept as its own work",
        (unsigned long long)g->corrected_step_ns);
  cls_result_free(&r);
  tb_free(&t);
}

/* Gradient accumulation behind a loader in the main thread (cls_world.c handoff_own_cpu): each
 * micro-batch the main thread loads for 5 ms without a CUDA call, copies the batch in, launches
 * the forward pass, and calls backward(), whose kernels the autograd thread (tid 2) launches;
 * between micro-batches nothing is launched after backward() returns. The autograd thread's
 * next first launch hands over from the main thread's loss launch, and the time from its previous
 * call to the main thread's copy (the loading) reads as its own work. Its samples (CPU time, no
 * Python stack) show it off the CPU then: its own work is at most that CPU time, and the loader's
 * what-if is the GPU's own work (5.22 ms a step; 5.54 without the samples on this timeline, the
 * generator's loops in tests/test_steps_random.c kept most of the loading without them). */
static void test_handoff_accum_cpu(void) {
  uint64_t unsampled = 0; /* the loader's what-if without the samples */
  for (int sampled = 0; sampled <= 1; sampled++) {
    struct tb t = {0};
    double h = 1000, gpu = 0, bursts[2 * 24];
    int nb = 0;
    for (int it = 0; it < 12; it++) {
      for (int mb = 0; mb < 2; mb++) {
        h += 5000; /* the loader's work in the main thread */
        uint32_t c = call(&t, 1, h, h + 8, SLK_FN_MEMCPY_ASYNC, 1, 1, "batch_copy");
        double ks = gpu > h + 9 ? gpu : h + 9;
        memcpy_rec(&t, c, 7, ks, ks + 50, 1, 2);
        gpu = ks + 50;
        h += 12;
        for (int k = 0; k < 10; k++, h += 12) { /* the forward pass, then the loss */
          ks = gpu > h + 3 ? gpu : h + 3;
          launch(&t, 1, h, ks, ks + 100, k < 9 ? "fwd" : "loss");
          gpu = ks + 100;
        }
        double a = h + 20; /* backward(): the autograd thread launches, the main thread waits */
        bursts[2 * nb] = a;
        for (int k = 0; k < 10; k++, a += 12) {
          ks = gpu > a + 3 ? gpu : a + 3;
          launch(&t, 2, a, ks, ks + 150, "bwd");
          gpu = ks + 150;
        }
        bursts[2 * nb + 1] = a + 10;
        nb++;
        h = a + 30; /* backward() returns */
      }
      for (int k = 0; k < 3; k++, h += 12) { /* the optimizer's step */
        double ks = gpu > h + 3 ? gpu : h + 3;
        launch(&t, 1, h, ks, ks + 40, "multi_tensor_apply_kernel");
        gpu = ks + 40;
      }
    }
    /* the writer's samples of the autograd thread every 1 ms: its CPU time, no stack */
    for (double at = 1000, cpu = 0, done = 0; sampled && at < h + 2000; at += 1000) {
      for (int b = 0; b < nb; b++) {
        double lo = bursts[2 * b] > done ? bursts[2 * b] : done;
        double hi = bursts[2 * b + 1] < at ? bursts[2 * b + 1] : at;
        if (hi > lo) cpu += hi - lo;
      }
      done = at;
      add(&t, (struct slk_record){.kind = SLK_SAMPLE,
                                  .tid = 2,
                                  .start = U(at),
                                  .end = U(at) + 20000,
                                  .count = 1 + U(cpu)});
    }
    struct cls_input in = input(&t, 1);
    struct cls_result r;
    run(&in, 1, NULL, &r);
    const struct cls_gpu *g = &r.gpus[0];
    const struct cls_steps *sp = &g->steps;
    uint64_t busy = sp->per_step_ns[CLS_COMPUTE] + sp->per_step_ns[CLS_COPY];
    uint64_t fixed = g->whatif[CLS_DATA_STARVATION].best_ns;
    CHECK(sp->count >= 9 && sp->step_ns > U(10000), "%zu steps of %llu", sp->count,
          (unsigned long long)sp->step_ns);
    CHECK(sp->per_step_ns[CLS_DATA_STARVATION] > U(4000), "data starvation %llu a step",
          (unsigned long long)sp->per_step_ns[CLS_DATA_STARVATION]);
    if (sampled) { /* the loader's fix leaves the GPU's own work (the step's 10 ms of loading) */
      CHECK(fixed >= busy && fixed < busy + busy / 50,
            "the loader's what-if %llu against the GPU's %llu a step: the autograd thread's "
            "quiet kept as its own work",
            (unsigned long long)fixed, (unsigned long long)busy);
      CHECK(fixed <= unsampled, "%llu with the samples, %llu without", (unsigned long long)fixed,
            (unsigned long long)unsampled);
    }
    unsampled = fixed;
    cls_result_free(&r);
    tb_free(&t);
  }
}

/* A host-to-device copy call that lasted over half its copy and overlapped it held the host
 * (staging: a copy stall), unless CUPTI says the source was pinned: then it was asynchronous
 * (GPU run 45: a 4 MB batch's traced call 56 us of its 78 us copy). */
static void test_pinned_copy_not_staging(void) {
  for (int src = 0; src <= 2; src += 2) { /* 0: memory kind unknown, 2: pinned */
    struct tb t = {0};
    launch(&t, 1, 0, 5, 10, "k0");
    uint32_t c = call(&t, 1, 12, 40, SLK_FN_MEMCPY_ASYNC, 1, 1, "batch_copy");
    memcpy_rec(&t, c, 7, 20, 50, 1, (uint8_t)src);
    launch(&t, 1, 41, 51, 80, "k1");
    struct cls_input in = input(&t, 0);
    struct cls_result r;
    run(&in, 1, NULL, &r);
    const struct cls_gpu *g = &r.gpus[0];
    if (src == 2) {
      EQ(g->time_ns[CLS_COPY_STALL], 0);
      CHECK(!has_site(g, CLS_COPY_STALL, "batch_copy"), "pinned copy as a copy stall");
    } else {
      CHECK(g->time_ns[CLS_COPY_STALL] >= U(8), "unknown source: copy stall %llu",
            (unsigned long long)g->time_ns[CLS_COPY_STALL]);
    }
    cls_result_free(&r);
    tb_free(&t);
  }
}

/* A launch call [s, s + 2] us on tid on stream handle `handle`, its kernel [ks, ke] on CUPTI
 * stream `stream`; joined (the call carries the kernel's correlation id) or not (no API record:
 * the kernel's id matches nothing, as after CUPTI was attached again). */
static void launch_on(struct tb *t, uint64_t tid, uint64_t handle, uint64_t stream, double s,
                      double ks, double ke, int joined) {
  uint32_t corr = ++t->corr;
  add(t, (struct slk_record){.kind = SLK_HOST,
                             .tid = tid,
                             .start = (uint64_t)(s * 1000),
                             .end = (uint64_t)((s + 2) * 1000),
                             .fn = SLK_FN_LAUNCH,
                             .stream = handle,
                             .callsite = S(t, "launch_site"),
                             .corr = joined ? corr : 0});
  kernel(t, joined ? corr : corr + 1000000, 0, stream, ks, ke, "k", 0);
}

/* Launch overhead is idle time (classify.c, the point's cap; GPU run 122's speech model): a
 * launch-bound loop of 8 us kernels launched every 20 us, alternately on two streams (a
 * bidirectional LSTM's two directions): the replay without the launch gaps runs the streams side
 * by side, below the GPU's busy time, and saves more than the step without the tracer leaves
 * idle; the class's point is that idle time at most, the what-if keeps the replay. On one stream
 * the two agree. */
static void test_launch_idle_cap(void) {
  for (int streams = 1; streams <= 2; streams++) {
    struct tb t = {0};
    for (int i = 0; i < 400; i++) {
      int s2 = streams == 2 && i % 2;
      launch_on(&t, 1, s2 ? 0x200 : 0x100, s2 ? 8 : 7, i * 20, i * 20 + 3, i * 20 + 11, 1);
    }
    struct cls_input in = input(&t, 1);
    struct cls_options opt;
    cls_options_default(&opt);
    opt.cupti_call_ns = 0;
    opt.cupti_call_given = 1;
    struct cls_result r;
    run(&in, 1, &opt, &r);
    const struct cls_gpu *g = &r.gpus[0];
    const struct cls_steps *sp = &g->steps;
    uint64_t busy = sp->per_step_ns[CLS_COMPUTE] + sp->per_step_ns[CLS_COPY] +
                    sp->per_step_ns[CLS_COMMUNICATION];
    uint64_t idle = g->corrected_step_ns - busy;
    CHECK(sp->count >= 10 && sp->launch_tail_ok && busy * 2 < sp->step_ns, "steps %zu", sp->count);
    CHECK(sp->launch_tail_per_step_ns <= idle && sp->launch_tail_per_step_ns + U(1) >= idle,
          "%d: launch overhead %llu, idle %llu", streams,
          (unsigned long long)sp->launch_tail_per_step_ns, (unsigned long long)idle);
    uint64_t lw = g->whatif[CLS_LAUNCH_OVERHEAD].best_ns;
    if (streams == 2) /* the replay's saving, beyond the idle time: kept in the what-if */
      CHECK(lw < busy && g->corrected_step_ns - lw > idle + U(1), "what-if %llu, busy %llu",
            (unsigned long long)lw, (unsigned long long)busy);
    else
      CHECK(lw + U(1) >= busy, "one stream: what-if %llu, busy %llu", (unsigned long long)lw,
            (unsigned long long)busy);
    cls_result_free(&r);
    tb_free(&t);
  }
}

/* Classifies t with the launch join's answers kept (lj->host_of: one per kernel, freed by the
 * caller). */
static void run_join(struct tb *t, struct launch_join *lj, struct cls_result *r) {
  struct cls_input in = input(t, 0);
  memset(lj, 0, sizeof *lj);
  lj->host_of = malloc(t->td.kind[SLK_KERNEL].n * sizeof *lj->host_of);
  in.lj = lj;
  run(&in, 1, NULL, r);
}

/* The order join (analyzer/cls_order.c): two streams (handles 0 and 0xabc, CUPTI ids 7 and 13)
 * fed by two threads, interleaved; the first 4 launches of each joined by correlation id, the
 * next 8 of each not (CUPTI attached again gives no API record). Each unjoined kernel gets the
 * n-th unjoined launch of its own stream; a kernel on a stream whose handle never joined (id
 * 21) stays unjoined. */
static void test_order_join(void) {
  struct tb t = {0};
  for (int i = 0; i < 12; i++) {
    double b = 1000 + i * 100.0;
    launch_on(&t, 1, 0, 7, b, b + 30, b + 60, i < 4);
    launch_on(&t, 2, 0xabc, 13, b + 5, b + 40, b + 50, i < 4);
  }
  launch_on(&t, 2, 0xdef, 21, 2300, 2330, 2340, 0);
  struct launch_join lj;
  struct cls_result r;
  run_join(&t, &lj, &r);
  const struct trace_array *K = &t.td.kind[SLK_KERNEL], *H = &t.td.kind[SLK_HOST];
  EQ(lj.kernels, 25);
  EQ(lj.joined, 24);
  EQ(lj.by_order, 16);
  EQ(lj.no_api, 1);
  int right = 0;
  for (size_t k = 0; k < K->n; k++) {
    long long h = lj.host_of[k];
    if (K->v[k].stream == 21) {
      CHECK(h < 0, "the kernel of an unseen stream joined call %lld", h);
      continue;
    }
    /* the launch that made it: the same offset into the step (thread 1 at +0, thread 2 at +5) */
    uint64_t want_s = K->v[k].start - (K->v[k].stream == 7 ? 30000 : 35000);
    right += h >= 0 && H->v[h].start == want_s;
  }
  EQ(right, 24);
  free(lj.host_of);
  cls_result_free(&r);
  tb_free(&t);
}

/* The order join where the joined work names more (handle, stream) pairs than the learner's
 * table holds (600 streams, each its own handle): every vote sorted instead (learn_sorted, the
 * votes gathered again); each unjoined kernel still gets its own stream's unjoined launch. */
static void test_order_join_many(void) {
  struct tb t = {0};
  for (int pass = 0; pass < 2; pass++) /* joined by correlation id, then not */
    for (int i = 0; i < 600; i++) {
      double b = 1000 + pass * 100000.0 + i * 100.0;
      launch_on(&t, 1, 0x1000 + (uint64_t)i, 100 + (uint64_t)i, b, b + 30, b + 60, !pass);
    }
  struct launch_join lj;
  struct cls_result r;
  run_join(&t, &lj, &r);
  const struct trace_array *K = &t.td.kind[SLK_KERNEL], *H = &t.td.kind[SLK_HOST];
  EQ(lj.kernels, 1200);
  EQ(lj.by_order, 600);
  int right = 0;
  for (size_t k = 0; k < K->n; k++) {
    long long h = lj.host_of[k];
    right += h >= 0 && H->v[h].start == K->v[k].start - 30000 &&
             H->v[h].stream == K->v[k].stream + 0x1000 - 100;
  }
  EQ(right, 1200);
  free(lj.host_of);
  cls_result_free(&r);
  tb_free(&t);
}

/* libslack named stream handle `handle` as CUPTI stream `stream` at `at` us on thread tid (an
 * SLK_STREAM record, runtime/streams.c). */
static void stream_named(struct tb *t, uint64_t tid, uint64_t handle, uint64_t stream, double at) {
  add(t, (struct slk_record){.kind = SLK_STREAM,
                             .tid = tid,
                             .start = (uint64_t)(at * 1000),
                             .stream = handle,
                             .count = stream});
}

/* The order join with the handles named (SLK_STREAM records), nothing joined by correlation id
 * (SLACK_API_RECORDS=0, or CUPTI attached again): the legacy handle 0 names a stream per thread
 * and context (thread 1's is CUPTI stream 7, thread 3's 9), 0xabc is 13, and 0xdef is 21 until
 * its stream is destroyed and the handle reused, named again as 22 at 1608 us. Every kernel
 * joins the launch that made it; one on a handle never named (0x999) stays unjoined, there
 * being no joined work to learn it from. */
static void test_order_join_named(void) {
  struct tb t = {0};
  stream_named(&t, 1, 0, 7, 1000);
  stream_named(&t, 3, 0, 9, 1002);
  stream_named(&t, 2, 0xabc, 13, 1005);
  stream_named(&t, 2, 0xdef, 21, 1008);
  stream_named(&t, 2, 0xdef, 22, 1608);
  for (int i = 0; i < 12; i++) {
    double b = 1000 + i * 100.0;
    launch_on(&t, 1, 0, 7, b, b + 30, b + 60, 0);
    launch_on(&t, 3, 0, 9, b + 2, b + 31, b + 61, 0);
    launch_on(&t, 2, 0xabc, 13, b + 5, b + 40, b + 50, 0);
    launch_on(&t, 2, 0xdef, i < 6 ? 21 : 22, b + 8, b + 42, b + 52, 0);
  }
  launch_on(&t, 2, 0x999, 30, 2300, 2330, 2340, 0);
  struct launch_join lj;
  struct cls_result r;
  run_join(&t, &lj, &r);
  const struct trace_array *K = &t.td.kind[SLK_KERNEL], *H = &t.td.kind[SLK_HOST];
  EQ(lj.kernels, 49);
  EQ(lj.joined, 48);
  EQ(lj.by_order, 48);
  EQ(lj.no_api, 1);
  int right = 0;
  for (size_t k = 0; k < K->n; k++) {
    long long h = lj.host_of[k];
    uint64_t st = K->v[k].stream;
    if (st == 30) {
      CHECK(h < 0, "the kernel of a handle never named joined call %lld", h);
      continue;
    }
    /* the launch that made it: its thread, at its offset into the step */
    uint64_t off = st == 7 ? 30000 : st == 9 ? 29000 : st == 13 ? 35000 : 34000;
    uint64_t tid = st == 7 ? 1 : st == 9 ? 3 : 2;
    right += h >= 0 && H->v[h].start == K->v[k].start - off && H->v[h].tid == tid;
  }
  EQ(right, 48);
  free(lj.host_of);
  cls_result_free(&r);
  tb_free(&t);
}

/* The marks (SLK_HOST_CUPTI_ON): a window's first 3 launch calls were made while CUPTI attached
 * again (no mark, no kernel), the next 6 with kernel records on (marked, one kernel each). Each
 * kernel joins its own call, not one 3 calls early; unmarked calls join nothing. */
static void test_order_join_marks(void) {
  struct tb t = {0};
  stream_named(&t, 1, 0xabc, 13, 1000);
  for (int i = 0; i < 9; i++) {
    double b = 1000 + i * 100.0;
    add(&t, (struct slk_record){.kind = SLK_HOST,
                                .tid = 1,
                                .start = (uint64_t)(b * 1000),
                                .end = (uint64_t)((b + 2) * 1000),
                                .fn = SLK_FN_LAUNCH,
                                .stream = 0xabc,
                                .flags = i < 3 ? 0 : SLK_HOST_CUPTI_ON,
                                .callsite = S(&t, "launch_site")});
    if (i >= 3) kernel(&t, 2000000 + (uint32_t)i, 0, 13, b + 10, b + 20, "k", 0);
  }
  struct launch_join lj;
  struct cls_result r;
  run_join(&t, &lj, &r);
  const struct trace_array *K = &t.td.kind[SLK_KERNEL], *H = &t.td.kind[SLK_HOST];
  EQ(lj.kernels, 6);
  EQ(lj.by_order, 6);
  int right = 0;
  for (size_t k = 0; k < K->n; k++) {
    long long h = lj.host_of[k];
    right +=
        h >= 0 && H->v[h].start + 10000 == K->v[k].start && (H->v[h].flags & SLK_HOST_CUPTI_ON);
  }
  EQ(right, 6);
  free(lj.host_of);
  cls_result_free(&r);
  tb_free(&t);
}

/* SLACK_PACE_PROBE's cut (runtime/writer.c, format.h SLK_WINDOW_PACE): 60 launches 20 us apart
 * joined by correlation ids 1..60, CUPTI's records off at 1300 us, the stretch [1400, 3400) us
 * of 150 launches 10 us apart (times only: no mark, no kernel), then CUPTI attached again at
 * 3400 us and 100 launches 20 us apart, marked, their kernels' correlation ids starting again at
 * 1 (no API record to join them: GPU run 168). Every kernel after the attach joins its own call by
 * the stream's order, none a call before the attach by its id; the stretch times the host
 * untraced: 10 us between calls against 20 traced, either side. */
static void test_pace_probe(void) {
  struct tb t = {0};
  stream_named(&t, 1, 0xabc, 13, 1);
  for (int i = 0; i < 310; i++) {
    int side = i < 60 ? 0 : i < 210 ? 1 : 2;
    double b = side == 0   ? 10 + i * 20.0
               : side == 1 ? 1400 + (i - 60) * 10.0
                           : 3500 + (i - 210) * 20.0;
    uint32_t corr = side == 0 ? (uint32_t)i + 1 : 0;
    add(&t, (struct slk_record){.kind = SLK_HOST,
                                .tid = 1,
                                .start = (uint64_t)(b * 1000),
                                .end = (uint64_t)((b + 2) * 1000),
                                .fn = SLK_FN_LAUNCH,
                                .stream = 0xabc,
                                .corr = corr,
                                .flags = side == 1 ? 0 : SLK_HOST_CUPTI_ON,
                                .callsite = S(&t, "launch_site")});
    if (side != 1)
      kernel(&t, side == 0 ? corr : (uint32_t)(i - 210) + 1, 0, 13, b + 5, b + 8, "k", 0);
  }
  const struct slk_record w[] = {
      {.kind = SLK_WINDOW, .start = 1, .end = U(1300), .fn = SLK_WINDOW_PACE},
      {.kind = SLK_WINDOW,
       .start = U(1400),
       .end = U(3400),
       .fn = SLK_WINDOW_PACE,
       .flags = SLK_WINDOW_UNTRACED},
      {.kind = SLK_WINDOW,
       .start = U(3400),
       .end = U(3400),
       .fn = SLK_WINDOW_PACE,
       .flags = SLK_WINDOW_OPEN},
      {.kind = SLK_WINDOW, .start = U(3400), .end = U(6000), .fn = SLK_WINDOW_PACE}};
  for (size_t k = 0; k < sizeof w / sizeof *w; k++)
    add(&t, w[k]);
  struct launch_join lj;
  struct cls_result r;
  run_join(&t, &lj, &r);
  const struct trace_array *K = &t.td.kind[SLK_KERNEL], *H = &t.td.kind[SLK_HOST];
  EQ(lj.kernels, 160);
  EQ(lj.by_order, 100);
  int right = 0;
  for (size_t k = 0; k < K->n; k++) {
    long long h = lj.host_of[k];
    right += h >= 0 && H->v[h].start + 5000 == K->v[k].start;
  }
  EQ(right, 160);
  const struct cls_tracer *tr = &r.gpus[0].tracer;
  CHECK(tr->tail_mid && tr->tail_calls == 150 && tr->tail_factor > 1.9 && tr->tail_factor < 2.1,
        "the stretch: mid %d, %llu calls, the host %.2fx slower traced", tr->tail_mid,
        (unsigned long long)tr->tail_calls, tr->tail_factor);
  free(lj.host_of);
  cls_result_free(&r);
  tb_free(&t);
}

/* Six NVTX ranges `name` on thread 1, one per step of serial_loop, each `len` us long. */
static void step_ranges(struct tb *t, const char *name, int len) {
  for (int s = 0; s < 6; s++)
    add(t, (struct slk_record){.kind = SLK_MARKER,
                               .tid = 1,
                               .start = U(999 + s * 100),
                               .end = U(999 + len + s * 100),
                               .name = S(t, name)});
}

/* NVTX ranges named like steps are preferred over the pattern. */
static void test_steps_nvtx(void) {
  struct tb t = {0};
  serial_loop(&t, 6);
  step_ranges(&t, "train_step", 91);
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  const struct cls_steps *sp = &r.gpus[0].steps;
  CHECK(!strcmp(sp->source, "nvtx"), "source %s", sp->source);
  EQ(sp->count, 5);
  EQ(sp->step_ns, U(100));
  CHECK(strstr(sp->detail, "train_step") != NULL, "detail %s", sp->detail);
  cls_result_free(&r);
  tb_free(&t);
}

/* A library's short ranges far apart (NCCL's around each collective, say) are not steps, even
 * with no step-named range; ranges that fill the loop are, whatever their name. */
static void test_steps_nvtx_sparse(void) {
  for (int fill = 0; fill < 2; fill++) {
    struct tb t = {0};
    serial_loop(&t, 6);
    step_ranges(&t, fill ? "fwd_bwd" : "ncclAllReduce", fill ? 91 : 5);
    struct cls_input in = input(&t, 0);
    struct cls_result r;
    run(&in, 1, NULL, &r);
    const struct cls_steps *sp = &r.gpus[0].steps;
    CHECK(!strcmp(sp->source, fill ? "nvtx" : "pattern"), "fill %d: source %s", fill, sp->source);
    EQ(sp->step_ns, U(100));
    cls_result_free(&r);
    tb_free(&t);
  }
}

static void test_names(void) {
  CHECK(!strcmp(cls_name(CLS_COPY_STALL), "copy_stall"), "name");
  CHECK(!strcmp(cls_name(CLS_DATA_STARVATION), "data_starvation"), "name");
  CHECK(!strcmp(cls_reason_name(CLS_WHY_QUEUED), "queued"), "reason");
  for (int c = 0; c < CLS_COUNT; c++)
    CHECK(strlen(cls_fix(c)) > 20, "fix %d", c);
}

static void test_empty(void) {
  struct tb t = {0};
  call(&t, 1, 0, 5, SLK_FN_DEVICE_SYNC, 0, 0, "s");
  struct cls_input in = input(&t, 0);
  struct cls_result r;
  run(&in, 1, NULL, &r);
  EQ(r.ngpus, 0);
  cls_result_free(&r);
  tb_free(&t);
}

int main(void) {
  test_busy_classes();
  test_serialization();
  test_steps_grouped();
  test_poll_wait();
  test_user_frame_inductor();
  test_sync_then_loader();
  test_sync_then_loader_tail();
  test_tail_long_mixture();
  test_tail_per_thread();
  test_tail_iterations();
  test_graph_nodes_queued();
  test_sync_loader_pageable();
  test_launch_storm_tail();
  test_assumed_pace();
  test_launch_idle_cap();
  test_staging_then_loader();
  test_copy_path_whatif();
  test_staging_launch_then_loader();
  test_free_then_malloc();
  test_free_realloc_loop();
  test_pool_trim();
  test_expandable_unmap();
  test_launch_blocking();
  test_lost_lead();
  test_lost_lead_copy();
  test_lost_lead_blocking_copy();
  test_lost_lead_copy_alone();
  test_lost_lead_handoff();
  test_loader_thread_fed();
  test_loader_thread_idle();
  test_loader_thread_first_call();
  test_loader_thread_per_epoch();
  test_sync_removed_runahead();
  test_copy_host_transfer();
  test_other_host_steps();
  test_other_thread();
  test_copy_stall_pageable();
  test_sync_on_copy();
  test_data_starvation();
  test_data_loading_range();
  test_steps_nvtx_sparse();
  test_launch_storm();
  test_probe_cost();
  test_other_host();
  test_lazy_load();
  test_long_phase();
  test_graph_queued();
  test_no_launch_and_edges();
  test_shared_gpu();
  test_steps_pattern_unit();
  test_steps_first_iteration();
  test_steps_loop_period();
  test_steps_few_long();
  test_steps_time_cycles();
  test_steps_accumulation();
  test_steps_accumulation_per_param();
  test_steps_periodic();
  test_steps_periodic_lead();
  test_steps_bimodal();
  test_steps_marked_end();
  test_steps_long_start();
  test_steps_shapes_change();
  test_steps_ranges_unit();
  test_steps_and_replay_serialization();
  test_steps_sync_anchored();
  test_steps_sync_anchored_shapes();
  test_replay_data_starvation();
  test_steps_prefetched();
  test_steps_shape_new();
  test_copy_stall_small();
  test_chain_shared();
  test_chain_roundtrip();
  test_roundtrip_on_host();
  test_loader_threads_gil();
  test_loader_bound();
  test_producer_wait();
  test_pyframes_waits();
  test_loader_threads_bad_samples();
  test_stack_capture();
  test_roundtrip_in_library();
  test_replay_handoff();
  test_replay_handoff_slow();
  test_replay_handoff_short_quiet();
  test_helper_between_launches();
  test_replay_handoff_slow_return();
  test_handoff_accum_cpu();
  test_pinned_copy_not_staging();
  test_order_join();
  test_order_join_many();
  test_order_join_named();
  test_order_join_marks();
  test_pace_probe();
  test_steps_nvtx();
  test_names();
  test_empty();
  printf("test_classify: %d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}

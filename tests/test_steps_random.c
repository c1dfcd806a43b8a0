/* Steps and causes on training loops of random shapes (analyzer/steps.c, cls_steps.c, the gap
 * rules, through cls_run): the classifier is judged on loops it was never tuned on, so this test
 * draws them. Each case is a loop of N iterations built from a seeded generator: a model of
 * identical or distinct layers, kernels of random lengths, a backward pass (on the launching
 * thread or an autograd thread), an optimizer (multi-tensor, per parameter, or none: inference), a
 * batch copied in, a read of the loss, host work of random length before each batch, set-up
 * kernels and a slower first iteration. What must hold: the steps found are the loop's iterations,
 * not a repeat inside one (a layer, a micro-batch of kernels) nor several of them: the steps
 * counted with the warm-up, the paused and the trailing ones are the N iterations, within 2 (a
 * first and a last iteration that nothing bounds); at least half of them timed; and the step is
 * the iterations' mean period within 10%. Each loop is built again with one cause of idle time in
 * it, 1.5 to 4 times the GPU's work per iteration (the loader's host work before the batch's copy;
 * a read of the loss and host work on it; a batch staged from pageable memory; kernels of 1-3 us,
 * shorter than their launches; a read, then the loader's work: chained, the read's wait
 * serialization and the rest data starvation, both there and the read's share no more than the
 * GPU's queued work): that cause must be the largest stall per step and hold four fifths of the
 * GPU's idle time per step; its fix's what-if no slower than the step, no faster than the GPU's
 * busy time, the loader's and the launches' saving half the cause at least. And once more as a
 * trainer with torch's defaults (a multi-tensor optimizer, batches copied in) and, drawn, 2-6
 * micro-batches per optimizer step, an evaluation of 2-4 batches every 3-8 iterations (its loss
 * read), a kernel picked by the batch's shape: the same step checks, a miss allowed in 1% of them
 * (main). And as gradient accumulation behind the loader (2-6 micro-batches, the loader's work
 * built in, the autograd thread's CPU time sampled): its cause and what-if checks, its step checks
 * in the same 1%. SLACK_STEPS_RANDOM=N runs N cases (default 1000), seeds from SLACK_STEPS_SEED
 * (default 1, with the named ones below); a failing case prints its seed, its shape and the step
 * candidates (every case with SLACK_STEPS_VERBOSE set). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "tb.h"

static int failures, checks;
static long more_bad; /* extended loops that failed (a budget of 1%: see main) */

/* ---- the generator ---- */

static uint64_t rng;
static uint32_t rnd(void) { /* xorshift64* */
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (uint32_t)((rng * 0x2545f4914f6cdd1dull) >> 32);
}
static int between(int lo, int hi) { return lo + (int)(rnd() % (uint32_t)(hi - lo + 1)); }
static double uni(double lo, double hi) { return lo + (hi - lo) * (rnd() / 4294967296.0); }

/* the stall a loop is built with (cause): none; the loader's host work before each batch's copy
 * (data starvation); a read of the loss, then host work on it before the next launch
 * (serialization); each batch copied from pageable memory, the call staging it while the GPU
 * waits (copy stall); kernels shorter than their launches (launch overhead); a read of the loss,
 * then the loader's work before the next batch's copy (chained: the read's wait serialization,
 * the rest data starvation, docs/CLASSIFICATION.md rule 4) */
enum { C_NONE, C_LOADER, C_READ, C_PAGEABLE, C_LAUNCH, C_CHAIN, C_COUNT };
static const int cause_class[C_COUNT] = {-1,
                                         CLS_DATA_STARVATION,
                                         CLS_SERIALIZATION,
                                         CLS_COPY_STALL,
                                         CLS_LAUNCH_OVERHEAD,
                                         CLS_DATA_STARVATION};

struct shape {
  int iters, layers, per_layer, same_layers, backward, bwd_thread, opt, nparams, copy, read, loader,
      setup, shapes, cause, pageable;
  /* the extended loops (one() with `more`): micro-batches per optimizer step (0: none); an
   * evaluation of evalb batches every `every` iterations (0: none); a kernel picked by the
   * batch's shape (names) */
  int accum, every, evalb, names;
  double loader_us, host_us, stage_us; /* host_us: the host's work after the read */
};

/* the simulated program: a host thread's time, and the GPU's stream 7 */
struct sim {
  struct tb *t;
  double h[3]; /* per thread (1: main, 2: autograd) */
  double g;    /* the stream's last end */
  double *iter_gpu;
  int it;
  double *busy; /* the autograd thread's bursts of work, [start, end) pairs (its CPU time) */
  int nbusy;
};

static void op_launch(struct sim *m, int th, const char *name, double dur) {
  double s = m->h[th];
  uint32_t c = call(m->t, (uint64_t)th, s, s + 5, SLK_FN_LAUNCH, 1, 0, NULL);
  double ks = m->g > s + 7 ? m->g : s + 7;
  add(m->t, (struct slk_record){.kind = SLK_KERNEL,
                                .device = 0,
                                .stream = 7,
                                .start = (uint64_t)(ks * 1000),
                                .end = (uint64_t)((ks + dur) * 1000),
                                .corr = c,
                                .name = S(m->t, name)});
  if (m->iter_gpu[m->it] < 0) m->iter_gpu[m->it] = ks;
  m->g = ks + dur;
  m->h[th] = s + 5 + uni(3, 15);
}

/* A batch's copy to the device on the host's thread: pinned (src_kind 2), the call returning at
 * once, or pageable (1), the call staging it for `stage` us while the GPU waits, the copy at its
 * end */
static void op_copy(struct sim *m, double dur, uint8_t src_kind, double stage) {
  double s = m->h[1], ks, e;
  if (src_kind == 1) {
    ks = s + stage > m->g ? s + stage : m->g;
    e = ks + dur + 3;
  } else {
    ks = m->g > s + 9 ? m->g : s + 9;
    e = s + 8;
  }
  uint32_t c = call(m->t, 1, s, e, SLK_FN_MEMCPY_ASYNC, 1, 1, NULL);
  add(m->t, (struct slk_record){.kind = SLK_MEMCPY,
                                .device = 0,
                                .stream = 7,
                                .start = (uint64_t)(ks * 1000),
                                .end = (uint64_t)((ks + dur) * 1000),
                                .corr = c,
                                .bytes = 1 << 22,
                                .copy_kind = 1,
                                .src_kind = src_kind,
                                .dst_kind = 3});
  if (m->iter_gpu[m->it] < 0) m->iter_gpu[m->it] = ks;
  m->g = ks + dur;
  m->h[1] = e + uni(2, 6);
}

static void op_sync(struct sim *m, double after) {
  double s = m->h[1], e = m->g + 4 > s + 4 ? m->g + 4 : s + 4;
  call(m->t, 1, s, e, SLK_FN_STREAM_SYNC, 0, 0, NULL);
  m->h[1] = e + uni(5, 20) + after;
}

/* a kernel's length by its name's place: drawn once per case */
static double klen[64];

/* The autograd thread's samples, as the writer takes them every `period` us: no Python stack,
 * its CPU time so far (count: 1 + ns), on the CPU in its bursts only */
static void samples(struct sim *m, double period) {
  double cpu = 0, end = m->nbusy ? m->busy[2 * m->nbusy - 1] + period : 0;
  for (double at = period, done = 0; at < end; at += period) {
    for (int b = 0; b < m->nbusy; b++) {
      double s = m->busy[2 * b], e = m->busy[2 * b + 1];
      double lo = s > done ? s : done, hi = e < at ? e : at;
      if (hi > lo) cpu += hi - lo;
    }
    done = at;
    add(m->t, (struct slk_record){.kind = SLK_SAMPLE,
                                  .tid = 2,
                                  .start = (uint64_t)(at * 1000),
                                  .end = (uint64_t)(at * 1000) + 20000,
                                  .count = 1 + (uint64_t)(cpu * 1000)});
  }
}

static void build(struct tb *t, const struct shape *sh, double *iter_gpu, double period) {
  int bursts = sh->iters * (sh->accum ? sh->accum : 1);
  struct sim m = {t, {0, 100, 100}, 0, iter_gpu, 0, malloc(2 * (size_t)bursts * sizeof(double)), 0};
  if (!m.busy) exit(2);
  char name[48];
  for (int k = 0; sh->setup && k < 40; k++) { /* weights initialized, a warm-up of the kernels */
    snprintf(name, sizeof name, "init_%d", k % 5);
    op_launch(&m, 1, name, uni(2, 30));
  }
  m.h[1] += uni(1000, 20000);
  for (int it = 0; it < sh->iters; it++) {
    m.it = it;
    double slow = it == 0 ? 3.0 : 1.0; /* the first iteration: lazy loads, autotuning */
    for (int mb = 0; mb < (sh->accum ? sh->accum : 1); mb++) { /* the micro-batches */
      if (sh->loader) m.h[1] += sh->loader_us * uni(0.7, 1.3);
      if (sh->copy && sh->pageable) {
        double dur = uni(20, 60), stage = sh->stage_us * uni(0.9, 1.1);
        op_copy(&m, dur, 1, stage);
      } else if (sh->copy) {
        op_copy(&m, uni(20, 60), 2, 0);
      }
      int extra = sh->shapes ? between(-1, 1) : 0; /* batches of another shape: another kernel */
      /* or the same number of kernels, another of them picked for the shape (names) */
      int shape = sh->names ? between(0, 2) : 0;
      for (int l = 0; l < sh->layers; l++)
        for (int k = 0; k < sh->per_layer + (l == 0 ? extra : 0); k++) {
          int id = sh->same_layers ? k : l * sh->per_layer + k;
          if (sh->names && l == 0 && k == 0)
            snprintf(name, sizeof name, "gemm_shape%d", shape);
          else
            snprintf(name, sizeof name, "fwd_%d", id);
          op_launch(&m, 1, name, klen[id % 64] * slow);
        }
      snprintf(name, sizeof name, "loss_kernel");
      op_launch(&m, 1, name, 4);
      if (sh->backward) {
        int th = sh->bwd_thread ? 2 : 1;
        if (th == 2) m.h[2] = m.h[1] + 10;
        for (int l = sh->layers - 1; l >= 0; l--)
          for (int k = sh->per_layer - 1; k >= 0; k--) {
            int id = sh->same_layers ? k : l * sh->per_layer + k;
            snprintf(name, sizeof name, "bwd_%d", id);
            op_launch(&m, th, name, klen[(id + 17) % 64] * 1.8 * slow);
          }
        if (th == 2) { /* backward() returns; the autograd thread waits, off the CPU */
          m.busy[2 * m.nbusy] = m.h[1];
          m.busy[2 * m.nbusy + 1] = m.h[2] + 10;
          m.nbusy++;
          m.h[1] = m.h[2] + 10;
        }
      }
    }
    if (sh->opt == 1) /* a multi-tensor optimizer: a few fused kernels */
      for (int k = 0; k < 3; k++)
        op_launch(&m, 1, "multi_tensor_apply_kernel<AdamFunctor>", uni(20, 60));
    else if (sh->opt == 2) /* one parameter at a time */
      for (int p = 0; p < sh->nparams; p++) {
        op_launch(&m, 1, "elementwise_kernel<mul>", 3);
        op_launch(&m, 1, "elementwise_kernel<add>", 3);
      }
    if (sh->read) op_sync(&m, sh->host_us * uni(0.9, 1.1));
    if (sh->every && (it + 1) % sh->every == 0) { /* an evaluation: batches through the model */
      for (int v = 0; v < sh->evalb; v++) {
        if (sh->copy) op_copy(&m, uni(20, 60), 2, 0);
        for (int l = 0; l < sh->layers; l++)
          for (int k = 0; k < sh->per_layer; k++) {
            int id = sh->same_layers ? k : l * sh->per_layer + k;
            snprintf(name, sizeof name, "fwd_%d", id);
            op_launch(&m, 1, name, klen[id % 64]);
          }
        op_launch(&m, 1, "eval_metric_kernel", 4);
      }
      op_sync(&m, uni(50, 300)); /* the evaluation's loss read, logged */
    }
  }
  if (sh->bwd_thread) samples(&m, period);
  free(m.busy);
}

static void describe(const struct shape *sh, char *b, size_t n) {
  snprintf(b, n,
           "iters %d layers %d x %d%s, backward %d%s, optimizer %d (%d params), copy %d, read %d, "
           "loader %d (%.0f us), setup %d, shapes %d, accum %d, eval %d x %d, names %d",
           sh->iters, sh->layers, sh->per_layer, sh->same_layers ? " identical" : "", sh->backward,
           sh->bwd_thread ? " on its thread" : "", sh->opt, sh->nparams, sh->copy, sh->read,
           sh->loader, sh->loader_us, sh->setup, sh->shapes, sh->accum, sh->every, sh->evalb,
           sh->names);
}

static void one(uint64_t seed, int cause, int more) {
  rng = seed * 0x9e3779b97f4a7c15ull + 1;
  struct shape sh = {0};
  sh.iters = between(12, 50);
  do { /* a model's forward pass of 20 kernels at least (a training loop runs hundreds; one of
        * fewer than 16 operations is an inner loop's body to the pattern, steps.c) */
    sh.layers = between(2, 12);
    sh.per_layer = between(3, 10);
  } while (sh.layers * sh.per_layer < 20);
  sh.same_layers = rnd() % 2;
  sh.backward = rnd() % 5 != 0;
  sh.bwd_thread = sh.backward && rnd() % 2;
  sh.opt = sh.backward ? between(0, 2) : 0;
  /* a backward pass is followed by its optimizer's step, launched by the thread that called
   * backward() as soon as it returns (without one, that thread's next call is the next batch's
   * copy, and the autograd thread's quiet reads as its own work up to it: cls_world.c
   * handoff_one's own_ns) */
  if (sh.backward && !sh.opt) sh.opt = 1;
  sh.nparams = between(4, 40);
  sh.copy = rnd() % 10 < 7;
  sh.read = rnd() % 10 < 4;
  sh.loader = rnd() % 2;
  sh.loader_us = uni(100, 3000);
  sh.setup = rnd() % 2;
  sh.shapes = rnd() % 6 == 0;
  for (int k = 0; k < 64; k++)
    klen[k] = uni(2, 150);
  if (more) { /* drawn after the rest: the loops without them stay as they were */
    /* a trainer as torch's defaults make it: a multi-tensor optimizer (foreach), batches copied
     * from the host (a loop whose data sits on the GPU and that evaluates every k-th iteration
     * reads as an RL trainer's rollouts: steps.c take_batches) */
    sh.backward = 1;
    sh.opt = 1;
    sh.copy = 1;
    sh.accum = rnd() % 3 == 0 ? between(2, 6) : 0;
    sh.every = rnd() % 3 == 0 ? between(3, 8) : 0;
    sh.evalb = between(2, 4);
    sh.names = rnd() % 3 == 0;
    sh.iters = sh.every ? sh.every * between(4, 8) : sh.iters;
    if (more == 2) { /* gradient accumulation behind the loader (main: its cause built in) */
      sh.every = 0;
      sh.accum = between(2, 6);
    }
  }
  /* the cause, sized against the GPU's time per iteration (est) */
  sh.cause = cause;
  double est = 4;
  for (int l = 0; l < sh.layers; l++)
    for (int k = 0; k < sh.per_layer; k++) {
      int id = sh.same_layers ? k : l * sh.per_layer + k;
      est += klen[id % 64] + (sh.backward ? 1.8 * klen[(id + 17) % 64] : 0);
    }
  est += sh.opt == 1 ? 120 : sh.opt == 2 ? 6.0 * sh.nparams : 0;
  double injected = 0;
  if (cause == C_LOADER) {
    sh.copy = sh.loader = 1;
    sh.read = 0;
    injected = sh.loader_us = est * uni(1.5, 4);
  } else if (cause == C_READ) {
    sh.read = 1;
    sh.copy = sh.loader = 0;
    injected = sh.host_us = est * uni(1.5, 4);
  } else if (cause == C_PAGEABLE) {
    sh.copy = sh.pageable = 1;
    sh.read = sh.loader = 0;
    injected = sh.stage_us = est * uni(1.5, 4);
  } else if (cause == C_CHAIN) {
    sh.read = sh.copy = sh.loader = 1;
    sh.pageable = 0;
    injected = sh.loader_us = est * uni(1.5, 4);
  } else if (cause == C_LAUNCH) {
    sh.read = sh.loader = 0;
    for (int k = 0; k < 64; k++)
      klen[k] = uni(1, 3);
  }
  struct tb *t = calloc(1, sizeof *t);
  double *ig = malloc((size_t)sh.iters * sizeof *ig);
  if (!t || !ig) exit(2);
  for (int k = 0; k < sh.iters; k++)
    ig[k] = -1;
  /* the writer's samples, 10 ms apart against a step of tens to hundreds of ms on the H200's
   * traces: a fifth to a half of the GPU's work per (micro-)batch here, drawn from the seed (not
   * the generator's stream: the loops stay as they were drawn before the samples) */
  double frac = (double)((seed * 0x9e3779b97f4a7c15ull) >> 11) / 9007199254740992.0;
  build(t, &sh, ig, est * (0.2 + 0.3 * frac));
  trace_data_sort(&t->td);
  struct cls_input in = {&t->td, "host", NULL, 0, tb_str, t};
  struct cls_options opt;
  cls_options_default(&opt);
  opt.host_slowdown = 1.0;
  struct cls_result r;
  if (cls_run(&in, 1, &opt, &r)) {
    fprintf(stderr, "cls_run failed\n");
    exit(2);
  }
  const struct cls_steps *sp = &r.gpus[0].steps;
  /* the iterations' mean period over the loop's second half (its steady state: the first is
   * slower, and the GPU's backlog from it can hide the next batches' loading) */
  int h0 = sh.iters / 2;
  double period = (ig[sh.iters - 1] - ig[h0]) / (sh.iters - 1 - h0) * 1000;
  /* or over all but the first, where the steps timed start early (the steady state is not
   * always the second half alone: the first's backlog hides a few batches' loading) */
  double all = (ig[sh.iters - 1] - ig[1]) / (sh.iters - 2) * 1000;
  /* (prefetched: of warmup) */
  size_t seen = sp->count + sp->warmup + sp->paused + sp->trailing + sp->uncycled;
  int bad = 0;
  checks += 3;
  if (seen + 2 < (size_t)sh.iters || seen > (size_t)sh.iters + 1) bad |= 1;
  if (sp->count * 2 < (size_t)sh.iters) bad |= 2;
  double st = (double)sp->step_ns;
  if ((st < period * 0.9 || st > period * 1.1) && (st < all * 0.9 || st > all * 1.1)) bad |= 4;
  /* the cause built in is the largest stall (`other` competing) and holds four fifths of the GPU's
   * idle time per step at least (the host's work built in overlaps the GPU's queued work: the
   * idle is its excess, not all of it) */
  int top = -1;
  uint64_t got = 0;
  double idle = 0, wi_best = 0, base_ns = 0, busy_ns = 0;
  if (cause != C_NONE) {
    static const int stalls[] = {CLS_SERIALIZATION, CLS_COPY_STALL, CLS_DATA_STARVATION,
                                 CLS_LAUNCH_OVERHEAD, CLS_OTHER};
    for (size_t k = 0; k < sizeof stalls / sizeof stalls[0]; k++)
      if (top < 0 || sp->per_step_ns[stalls[k]] > sp->per_step_ns[top]) top = stalls[k];
    got = sp->per_step_ns[cause_class[cause]];
    checks += 2;
    uint64_t busy = sp->per_step_ns[CLS_COMPUTE] + sp->per_step_ns[CLS_COPY] +
                    sp->per_step_ns[CLS_COMMUNICATION];
    if (cause == C_CHAIN) {
      /* both, together the idle (below), the larger one on top; the read's share no more than
       * what it waited for, the GPU's queued work (the host ran ahead by at most a step) */
      uint64_t ser = sp->per_step_ns[CLS_SERIALIZATION];
      if (top != CLS_SERIALIZATION && top != CLS_DATA_STARVATION) bad |= 8;
      got += ser;
      if (!ser || !sp->per_step_ns[CLS_DATA_STARVATION] || ser > busy + busy / 10) bad |= 8;
    } else if (top != cause_class[cause]) {
      bad |= 8;
    }
    idle = sp->step_ns > busy ? (double)(sp->step_ns - busy) : 0;
    if ((double)got < 0.8 * idle) bad |= 16;
    /* its fix's what-if: no slower than the step, no faster than the GPU's own work, and where
     * the fix takes the host's waiting off (the loader's, the launches') half of the cause's time
     * saved at least (a read's host work stays on the host: the fix may leave it bounding) */
    const struct cls_gpu *g = &r.gpus[0];
    const struct cls_whatif *wi =
        cause == C_PAGEABLE ? &g->whatif_copy_both : &g->whatif[cause_class[cause]];
    uint64_t base = g->corrected_step_ns ? g->corrected_step_ns : sp->step_ns;
    checks++;
    if (!wi->best_ns || wi->best_ns > base + base / 50 || (double)wi->best_ns < 0.9 * (double)busy)
      bad |= 32;
    /* (the chain: the loader's fix takes off the read's share of the loading too) */
    if ((cause == C_LOADER || cause == C_LAUNCH || cause == C_CHAIN) &&
        base - wi->best_ns < got / 2)
      bad |= 32;
    wi_best = (double)wi->best_ns, base_ns = (double)base, busy_ns = (double)busy;
  }
  static int verbose = -1; /* SLACK_STEPS_VERBOSE: every loop said, not only the failing ones */
  if (verbose < 0) verbose = getenv("SLACK_STEPS_VERBOSE") != NULL;
  if (bad || verbose) {
    char d[256];
    describe(&sh, d, sizeof d);
    fprintf(
        stderr,
        "seed %llu cause %d%s: %s%s%s%s%s%s%s: %zu steps (+%zu warm-up, %zu trailing, %zu paused, "
        "%zu prefetched) of %.1f us against %d iterations of %.1f us; %s (%s)\n",
        (unsigned long long)seed, cause, more ? " more" : "", bad ? "" : "ok",
        bad & 1 ? "[count]" : "", bad & 2 ? "[too few]" : "", bad & 4 ? "[period]" : "",
        bad & 8 ? "[top]" : "", bad & 16 ? "[size]" : "", bad & 32 ? "[what-if]" : "", sp->count,
        sp->warmup, sp->trailing, sp->paused, sp->prefetched, st / 1000, sh.iters, period / 1000,
        sp->detail, d);
    if (cause != C_NONE)
      fprintf(stderr,
              "  built in %.1f us a step, idle %.1f; per step: serialization %.1f, copy stall "
              "%.1f, data starvation %.1f, launch overhead %.1f, other %.1f us (GPU est %.1f us)\n",
              injected, idle / 1e3, sp->per_step_ns[CLS_SERIALIZATION] / 1e3,
              sp->per_step_ns[CLS_COPY_STALL] / 1e3, sp->per_step_ns[CLS_DATA_STARVATION] / 1e3,
              sp->per_step_ns[CLS_LAUNCH_OVERHEAD] / 1e3, sp->per_step_ns[CLS_OTHER] / 1e3, est);
    if (bad & 32)
      fprintf(stderr,
              "  what-if %.1f us against the step %.1f, GPU busy %.1f (replay %.1f, corrected "
              "%.1f, bound %.1f, loader bound %.1f, host bound %.1f)\n",
              wi_best / 1e3, base_ns / 1e3, busy_ns / 1e3,
              r.gpus[0].whatif[cause_class[cause]].replay_ns / 1e3,
              r.gpus[0].whatif[cause_class[cause]].replay_corrected_ns / 1e3,
              r.gpus[0].whatif[cause_class[cause]].bound_ns / 1e3,
              r.gpus[0].whatif[cause_class[cause]].loader_bound_ns / 1e3,
              r.gpus[0].whatif[cause_class[cause]].host_bound_ns / 1e3);
    for (size_t k = 0; k < sp->ncand; k++)
      fprintf(stderr, "  candidate %s: %zu steps of %.1f us (%s)\n", sp->cand[k].rule,
              sp->cand[k].count, (double)sp->cand[k].step_ns / 1000, sp->cand[k].what);
    if (more == 1 || (more == 2 && !(bad & ~7))) /* the extended loops, or their steps alone */
      more_bad++;
    else
      failures += (bad & 1) + (bad >> 1 & 1) + (bad >> 2 & 1) + (bad >> 3 & 1) + (bad >> 4 & 1) +
                  (bad >> 5 & 1);
  }
  cls_result_free(&r);
  tb_free(t);
  free(t);
  free(ig);
}

/* Loops that failed before the rules they are named by (session 39), run first whatever the range:
 *   37     an iteration of 26 operations, a third of them one more or fewer (a batch of another
 *          shape): 13 of 17 counted (cls_steps.c anchor_steps)
 *   7627   the same with the pattern's anchor a kernel some iterations skip: 7 of 17
 *   164    a read of the loss each iteration against a pattern of 3 iterations that a rare
 *          kernel's occurrences made: 4 steps of 112 operations (cls_steps.c sync_steps, wider)
 *   11643  a rare kernel 5 iterations apart 3 times made the loop's period, cut into blocks of
 *          64 operations of 74 (steps.c mark_in)
 *   23728  two iterations the period, a layer's 10 kernels outvoting the iteration inside it
 *          (steps.c loop_period)
 *   21022  the set-up's kernels before the first batch copy taken as a step (steps.c
 *          STEPS_STARTS)
 * Known to fail still (not run), 6 of the first 40,000: an inference loop of identical layers of
 * a few kernels, its operation count changing with the batch, with nothing that marks each
 * iteration (no copy, no read, no optimizer; one kernel once per iteration): the layer is the step
 * (seeds 6564, 8029, 18757, 23678, 27700); the same with a read in each of its 12 iterations: a
 * repeat of 3 iterations that the shapes made by chance beats the reads (28415). */
static const uint64_t named[] = {37, 7627, 164, 11643, 23728, 21022};

int main(void) {
  const char *e = getenv("SLACK_STEPS_RANDOM"), *s = getenv("SLACK_STEPS_SEED");
  long n = e ? atol(e) : 1000;
  uint64_t seed = s ? strtoull(s, NULL, 10) : 1;
  if (!s)
    for (size_t k = 0; k < sizeof named / sizeof named[0]; k++)
      one(named[k], C_NONE, 0);
  /* each loop as drawn, then with one cause built in (their turn by the seed) */
  for (long k = 0; k < n; k++) {
    one(seed + (uint64_t)k, C_NONE, 0);
    one(seed + (uint64_t)k, 1 + (int)((seed + (uint64_t)k) % (C_COUNT - 1)), 0);
    one(seed + (uint64_t)k, C_NONE, 1);
    one(seed + (uint64_t)k, C_LOADER, 2);
  }
  /* the extended loops (micro-batches, evaluations, kernels picked by shape) may miss in 1% of
   * them: a model of a few distinct kernels (identical layers of 3) whose batches change shape,
   * with an evaluation every k-th iteration, leaves too few symbols for nine in ten to tell a
   * periodic pass from the iteration beside it (196 of the first 40,000 loops, 0.5%: session 39,
   * SLACK_STEPS_SEED=1 SLACK_STEPS_RANDOM=40000) */
  if (more_bad * 100 > n) failures++;
  printf("test_steps_random: %d checks, %d failed (%ld loops from seed %llu; %ld of the extended "
         "ones missed, 1%% allowed)\n",
         checks, failures, n, (unsigned long long)seed, more_bad);
  return failures ? 1 : 0;
}

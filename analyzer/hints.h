/* When the GPU is busy: compute-side hints from kernel and copy records alone (docs/
 * CLASSIFICATION.md, "Compute hints"). Each hint has its evidence (what was seen, per step) and an
 * estimated saving per step.
 *
 *   fp32_math      time in fp32 matrix kernels (GEMM, convolution) that have tensor-core
 *                  counterparts, by the libraries' kernel naming: AMP (bf16) or TF32
 *   kernel_storm   many short kernels per step (most of them elementwise or reductions): fusion
 *                  with torch.compile, or CUDA graphs
 *   copy_bandwidth host<->device copies well under the link's best rate in this trace, or from
 *                  pageable memory
 */
#ifndef SLACK_HINTS_H
#define SLACK_HINTS_H

#include <stddef.h>
#include <stdint.h>

#include "reader.h"

#define HINTS_MAX 4

struct hint {
  const char *kind;     /* "fp32_math", "kernel_storm", "copy_bandwidth" */
  uint64_t per_step_ns; /* the time the hint is about, per step */
  uint64_t gain_ns;     /* estimated saving per step if the suggestion is taken */
  char evidence[320];
  const char *suggestion;
};

struct hints {
  struct hint v[HINTS_MAX];
  size_t n;
};

/* One GPU's records: kernels and copies of `device` from every trace of one host. */
struct hints_input {
  const struct trace_data *const *td;
  const char *(*name)(const void *ctx, size_t file, uint32_t id); /* a string id's text */
  const void *ctx;
  const char *const *hosts; /* each trace's host */
  size_t n;
  const char *host;
  uint32_t device;
  const char *device_name;     /* the DEVICE record's name ("NVIDIA H200"), or NULL */
  uint64_t t0, t1;             /* the steady state (the steps' span), or the whole window */
  uint64_t steps;              /* steps in [t0, t1); 0: per-step figures are over the whole span */
  uint64_t launch_per_step_ns; /* the classifier's launch overhead per step, without the tracer
                                  (at the untraced tail's pace where the trace has a tail) */
  int launch_is_bound;         /* 1: that figure is an upper bound (no untraced tail) */
  uint64_t kernels_joined, kernels_short; /* kernels joined to their launch call; of them, those
                                             that ran shorter than the call (the classifier's) */
};

/* Fills out (by estimated gain, largest first). 0, or -1 when out of memory. */
int hints_compute(const struct hints_input *in, struct hints *out);

/* The kernel-name rule behind fp32_math, exposed for tests: 1 when name is an fp32 GEMM or
 * convolution kernel whose tensor-core (tf32/fp16/bf16) counterpart exists. */
int hints_is_fp32_math(const char *name);
/* 1 when name is an elementwise or reduction kernel (a fusion candidate). */
int hints_is_elementwise(const char *name);

#endif

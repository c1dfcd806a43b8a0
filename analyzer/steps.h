/* Steps: the repeating unit of a training or inference loop, found on one GPU's work.
 *
 * From NVTX ranges when the program has them (steps_from_ranges): each range's step begins with
 * the first GPU operation launched inside it. Otherwise from the repeating pattern of GPU work
 * (steps_from_pattern): every operation gets a symbol (kernel name, copy direction, memset); a
 * symbol that occurs once per step recurs every P operations, P the operations per step. For each
 * symbol the most common distance between its occurrences is its period; the distances within
 * 5% of it are its steps. The symbol whose steps cover the most GPU time wins; among symbols that
 * cover at least 80% of that time the longest period wins (a loop of identical layers repeats
 * within a step; the step is the longer period); among those with the same period, the step
 * starts at the operation that follows the longest idle gap (host-to-device copies preferred:
 * the next batch), since a step usually starts after the host's per-step work. Either way,
 * leading steps longer than 1.5 times the median step are warm-up and left out.
 * docs/CLASSIFICATION.md says more.
 */
#ifndef SLACK_STEPS_H
#define SLACK_STEPS_H

#include <stddef.h>
#include <stdint.h>

struct step_set {
  size_t count;      /* steps found */
  size_t *first_op;  /* per step: index of the operation that starts it */
  size_t *next_op;   /* per step: index of the operation that starts the step after it (the step
                        ends there) */
  size_t period;     /* pattern: operations per step */
  size_t looped;     /* pattern: the longest period when the step is the loop's iteration inside
                        it (steps.c loop_period: a log line every 10th iteration), else 0 */
  uint32_t anchor;   /* pattern: the symbol that starts each step */
  size_t range_used; /* ranges: ranges that launched GPU work */
  size_t warmup;     /* leading steps left out, each longer than 1.5 median steps */
  size_t trailing;   /* 1 when the operations after the last step are one more step's worth (the
                        loop's last iteration: nothing starts after it to end it); counted as an
                        iteration, not timed */
  size_t paused;     /* pattern: iterations between the first step and the last anchor whose
                        operations made a step but whose time held a pause (longer than the
                        longest step): counted as iterations, not timed */
  size_t cycle;      /* marks: every cycle-th iteration runs more operations (periodic work: a
                        validation pass, a checkpoint); 0 when none. The timed steps are then
                        whole cycles (steps_periodic) */
  size_t uncycled;   /* marks: iterations outside the whole cycles, counted, not timed */
  size_t span_lo, span_hi; /* cycles: the operation that starts the first counted iteration after
                              the warm-up, and the one that starts the iteration after the last
                              counted one (the uncycled ones inside); 0 and 0 without cycles */
};

/* What steps_from_pattern knows of an operation besides its symbol (flags[i], bits). */
enum {
  STEP_OP_H2D = 1,      /* a host-to-device copy */
  STEP_OP_OPTIMIZER = 2 /* an optimizer's multi-tensor kernel (steps.c, loop_period) */
};

/* Steps from the pattern of n operations in start order: sym[i] their symbols, start[i] their
 * start times, gap_before[i] the idle time of the GPU just before each, flags[i] STEP_OP_*
 * (NULL: none). 0 (count may be 0: no pattern), -1 when out of memory. */
int steps_from_pattern(const uint32_t *sym, const uint64_t *start, const uint64_t *gap_before,
                       const uint8_t *flags, size_t n, struct step_set *out);

/* Steps from nr ranges [rs[k], re[k]) sorted by start and not overlapping: step k begins with
 * the first operation (in start order) whose launching call started inside range k (launch[i],
 * UINT64_MAX when unknown), and ends where the next range's step begins; start[i] the
 * operations' start times (the warm-up rule). 0 or -1 (memory). */
int steps_from_ranges(const uint64_t *rs, const uint64_t *re, size_t nr, const uint64_t *launch,
                      const uint64_t *start, size_t n, struct step_set *out);

/* Steps anchored on the host: anchor[k] (increasing) is the first operation launched after the
 * k-th per-iteration host event (a synchronizing call of the launching thread), or of a
 * per-iteration mark in the GPU's work (the end of an optimizer's step, a batch's copies).
 * Consecutive anchors bound a step when the number of operations between them is within 5% of
 * the median number (STEPS_LOOSE: between 2/3 and 3/2 of it, for iterations whose shapes
 * change); at least 3 such steps and 80% of the intervals, else count is 0. The operations
 * before the first anchor are the loop's first iteration when as many as a step's (an event that
 * ends each iteration marks none before the first), not with STEPS_STARTS (an operation that
 * starts each iteration: what ran before it is set-up). start[i] the operations' start times
 * (the warm-up rule). 0 or -1 (memory). */
#define STEPS_LOOSE 1
#define STEPS_STARTS 2
int steps_from_anchors(const size_t *anchor, size_t na, const uint64_t *start, size_t n, int how,
                       struct step_set *out);

/* Periodic work that runs no operations of its own: in the pattern's steps (ss, from
 * steps_from_pattern: its anchor symbol and period), from its first timed step on, the
 * iterations that hold a step's operations but over 4 times the median step's time (the
 * pattern's pause: not timed, or not counted) come at every kc-th iteration exactly (kc >= 2,
 * two at least, none missing, within 4x of each other): the loop's own periodic wait (a
 * DataLoader's workers started again at each epoch, GPU run 80), not time outside it. The steps
 * become the whole cycles of kc iterations (ss->cycle), the rest counted as uncycled. 0, or -1
 * when out of memory. Not for traces with production windows (their pauses are the time
 * between windows). */
int steps_time_cycles(const uint32_t *sym, const uint64_t *start, size_t n, struct step_set *ss);

/* Steps between per-iteration marks (the ends of an optimizer's steps) when periodic work sits
 * between some of them: every interval between consecutive anchors is an iteration, and those
 * with more than 3/2 of the median number of operations recur every k-th interval exactly (k >=
 * 2, at least twice, from the first k intervals to the last k), none with fewer than 2/3 of it.
 * A leading cycle over 1.5 times the median cycle is warm-up while more than two are left. The
 * timed steps are the most whole cycles of k iterations that the intervals hold (each holds the
 * periodic work once: the loop's time over its iterations), after the warm-up; the others are
 * counted (`uncycled`). count is 0 where the marks show no such cycle. 0 or -1 (memory). */
int steps_periodic(const size_t *anchor, size_t na, const uint32_t *sym, const uint64_t *start,
                   size_t n, struct step_set *out);

void step_set_free(struct step_set *s);

#endif

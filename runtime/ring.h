/* Per-thread event rings: one producer (the application thread), one consumer (the writer).
 * The producer never blocks and never takes a lock: a full ring drops the event and counts it.
 *
 * Ownership: rings are allocated once and never freed while the process lives; they sit on a
 * push-only list (ring_list) that the writer walks without locks. A thread claims a FREE ring
 * (or allocates one) on its first recorded call; its exit marks the ring DEAD (thread-specific
 * destructor); the writer drains a DEAD ring, reports its drops, and marks it FREE for reuse.
 */
#ifndef SLACK_RING_H
#define SLACK_RING_H

#include <stdint.h>

struct slack_event {
  uint64_t t0, t1;
  uint64_t stream;
  uint64_t bytes;
  uint64_t site; /* return address of the hooked call: the call site */
  uint64_t py;   /* the calling thread's Python stack (runtime/pyframes.c key; 0: none) */
  uint32_t fn;
  uint32_t result;
  uint32_t flags;
  uint32_t copy_kind;
};

enum ring_state { RING_FREE = 0, RING_OWNED = 1, RING_DEAD = 2 };

struct ring {
  uint64_t head __attribute__((aligned(64))); /* written by the producer (release) */
  uint64_t drops;                             /* written by the producer (relaxed) */
  uint64_t tail __attribute__((aligned(64))); /* written by the consumer (release) */
  uint64_t drops_reported;                    /* consumer only */
  int state;                                  /* enum ring_state, CAS/atomics */
  int tid;
  int named;         /* consumer: THREAD record written for this owner */
  char name[16];     /* thread name at claim time */
  struct ring *next; /* immutable once published */
  uint64_t mask;
  struct slack_event ev[];
};

/* Head of the push-only ring list (acquire-load it, then follow next). */
extern struct ring *ring_list __attribute__((visibility("hidden")));

/* This thread's ring, claimed on first use; NULL when memory ran out (the caller drops). */
struct ring *ring_self(void) __attribute__((visibility("hidden")));

/* Pushes e, or counts a drop. Producer side only. */
#ifndef SLACK_RING_PREFETCH
#define SLACK_RING_PREFETCH 0 /* off: not shown to pay (scripts/bench/ab_hotpath.sh) */
#endif

/* One event into the thread's ring: 0 when the ring is full (nothing written, nothing counted:
 * the stream map's caller names the handle again at its next call). */
static inline int ring_try_push(struct ring *r, const struct slack_event *e) {
  uint64_t h = r->head;
  if (h - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) > r->mask) return 0;
  r->ev[h & r->mask] = *e;
#if SLACK_RING_PREFETCH
  /* the slot SLACK_RING_PREFETCH calls ahead: its line was last the writer's; asking for it now
   * takes that wait off the call that will fill it (scripts/bench/ab_hotpath.sh measures it) */
  __builtin_prefetch(&r->ev[(h + SLACK_RING_PREFETCH) & r->mask], 1, 3);
#endif
  __atomic_store_n(&r->head, h + 1, __ATOMIC_RELEASE);
  return 1;
}

/* A recorded call: a full ring drops it, counted (DROPS records). */
static inline void ring_push(struct ring *r, const struct slack_event *e) {
  if (__builtin_expect(!ring_try_push(r, e), 0))
    __atomic_store_n(&r->drops, r->drops + 1, __ATOMIC_RELAXED);
}

/* Module set-up (thread-exit key); safe to call more than once. */
void ring_init(long events) __attribute__((visibility("hidden")));
/* In a fork child: forget every ring (the parent's threads do not exist here). */
void ring_forget_all(void) __attribute__((visibility("hidden")));

#endif

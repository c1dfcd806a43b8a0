#include "ring.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

struct ring *ring_list;
static __thread struct ring *tls_ring __attribute__((tls_model("initial-exec")));
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static long ring_events = 32768;

/* Runs when a thread that owned a ring exits: hands the ring to the writer to finish. */
static void on_thread_exit(void *arg) {
  struct ring *r = arg;
  __atomic_store_n(&r->state, RING_DEAD, __ATOMIC_RELEASE);
}

static void make_key(void) {
  if (pthread_key_create(&exit_key, on_thread_exit)) exit_key = (pthread_key_t)-1;
}

void ring_init(long events) {
  long n = 64;
  while (n < events)
    n <<= 1;
  ring_events = n;
  pthread_once(&key_once, make_key);
}

static struct ring *claim(void) {
  /* reuse a ring whose thread is gone and that the writer has emptied */
  for (struct ring *r = __atomic_load_n(&ring_list, __ATOMIC_ACQUIRE); r; r = r->next) {
    int expect = RING_FREE;
    if (__atomic_load_n(&r->state, __ATOMIC_RELAXED) == RING_FREE &&
        __atomic_compare_exchange_n(&r->state, &expect, RING_OWNED, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED))
      return r;
  }
  struct ring *r = calloc(1, sizeof *r + (size_t)ring_events * sizeof(struct slack_event));
  if (!r) return NULL;
  r->mask = (uint64_t)ring_events - 1;
  r->state = RING_OWNED;
  struct ring *head = __atomic_load_n(&ring_list, __ATOMIC_RELAXED);
  do
    r->next = head;
  while (!__atomic_compare_exchange_n(&ring_list, &head, r, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
  return r;
}

struct ring *ring_self(void) {
  struct ring *r = tls_ring;
  if (__builtin_expect(r != NULL, 1)) return r;
  r = claim();
  if (!r) return NULL;
  /* identity of the new owner; the writer reads these after seeing state OWNED and events */
  r->tid = (int)syscall(SYS_gettid);
  memset(r->name, 0, sizeof r->name);
  prctl(PR_GET_NAME, r->name, 0, 0, 0);
  __atomic_store_n(&r->named, 0, __ATOMIC_RELEASE);
  tls_ring = r;
  if (exit_key != (pthread_key_t)-1) pthread_setspecific(exit_key, r);
  return r;
}

void ring_forget_all(void) {
  ring_list = NULL; /* the parent's rings leak in the child: a few MB at most, never touched */
  tls_ring = NULL;
  if (exit_key != (pthread_key_t)-1) pthread_setspecific(exit_key, NULL);
}

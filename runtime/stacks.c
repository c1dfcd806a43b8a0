/* Native stacks of call sites: the first time a call site (the return address a hook sees)
 * records a call, the calling thread takes its stack once with libunwind's unw_backtrace where
 * the machine has libunwind (dlopened at start: libslack never needs it to load), else with
 * glibc's backtrace() (the libgcc unwinder, always present), and publishes it here; the
 * trace's header says which (stack_unwinder=libunwind|backtrace|off); the writer names the
 * call site with that stack (writer.c site_id). Later calls from the same site cost one look into
 * a per-thread cache of the sites it has seen.
 *
 * One stack per call site, the first one seen: a site reached along several paths shows the
 * path of its first call. Bounded: SLACK_STACK_DEPTH frames (0: off), 4,096 sites (later sites
 * get no stack). Never blocks: the table is lock-free; a site whose stack another thread is
 * taking right now is passed by without one (and if the writer names that site before the
 * stack is published, the name stays without it).
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <stdlib.h>

#include "config.h"
#include "hook.h"

#define SITES 4096
#define MAX_DEPTH 32

struct stack_slot {
  uint64_t site;          /* 0: free; claimed by CAS */
  const uint64_t *frames; /* published last (release): [0] the count, then the frames */
};
static struct stack_slot table[SITES];

static __thread uint64_t seen[64]; /* this thread's recent sites: the cheap common case */

static size_t slot_of(uint64_t site) { return (size_t)(site * 0x9e3779b97f4a7c15ull >> 52); }

static int (*unw_bt)(void **, int); /* libunwind's unw_backtrace, or NULL */
static const char *unwinder = "off";

const char *slack_stack_unwinder(void) { return unwinder; }

static int take(void **pc, int n) { return unw_bt ? unw_bt(pc, n) : backtrace(pc, n); }

void slack_stack_warm(void) {
  void *pc[4];
  if (slack_cfg.stack_depth <= 0 || slack_cfg.stacks == SLACK_STACKS_OFF) return;
#ifdef __SANITIZE_THREAD__
  /* make test-tsan: libunwind frees its per-thread trace cache from a thread-specific-data
   * destructor that takes a mutex after ThreadSanitizer has let go of the exiting thread (a
   * crash at every thread's exit); that build unwinds with glibc's backtrace */
  void *h = NULL;
#else
  void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
#endif
  if (h) *(void **)&unw_bt = slack_real_dlsym(h, "unw_backtrace");
  unwinder = unw_bt ? "libunwind" : "backtrace";
  take(pc, 4); /* loads the unwinder's state now, not mid-run */
}

void slack_stack_note(uint64_t site) {
  uint64_t *c = &seen[(site >> 4) & 63];
  if (__builtin_expect(*c == site, 1) || !site || slack_cfg.stack_depth <= 0 ||
      slack_cfg.stacks == SLACK_STACKS_OFF)
    return;
  *c = site;
  size_t i = slot_of(site);
  for (size_t k = 0; k < SITES; k++, i = (i + 1) % SITES) {
    uint64_t cur = __atomic_load_n(&table[i].site, __ATOMIC_ACQUIRE);
    if (cur == site) return; /* taken by a thread before */
    if (cur) continue;
    if (__atomic_compare_exchange_n(&table[i].site, &cur, site, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
      break;
    if (cur == site) return;
  }
  if (__atomic_load_n(&table[i].site, __ATOMIC_RELAXED) != site) return; /* table full */
  int depth = (int)slack_cfg.stack_depth;
  void *pc[MAX_DEPTH + 8];
  int n = take(pc, depth + 8 < MAX_DEPTH + 8 ? depth + 8 : MAX_DEPTH + 8);
  /* the frames from the call site outward: the unwinder also sees this function, take, hook_end and
   * the wrapper, whose return into the program is `site` */
  int from = -1;
  for (int k = 0; k < n && from < 0; k++)
    if ((uint64_t)(uintptr_t)pc[k] == site) from = k;
  if (from < 0) return; /* not found (a tail call): the site keeps its one frame */
  int m = n - from < depth ? n - from : depth;
  uint64_t *f = malloc((size_t)(m + 1) * sizeof *f);
  if (!f) return;
  f[0] = (uint64_t)m;
  for (int k = 0; k < m; k++)
    f[k + 1] = (uint64_t)(uintptr_t)pc[from + k];
  __atomic_store_n(&table[i].frames, f, __ATOMIC_RELEASE);
}

const uint64_t *slack_stack_of(uint64_t site, size_t *n) {
  *n = 0;
  size_t i = slot_of(site);
  for (size_t k = 0; k < SITES; k++, i = (i + 1) % SITES) {
    uint64_t cur = __atomic_load_n(&table[i].site, __ATOMIC_ACQUIRE);
    if (!cur) return NULL;
    if (cur != site) continue;
    const uint64_t *f = __atomic_load_n(&table[i].frames, __ATOMIC_ACQUIRE);
    if (!f) return NULL;
    *n = (size_t)f[0];
    return f + 1;
  }
  return NULL;
}

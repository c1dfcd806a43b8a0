/* NVTX ranges: libslack is the program's NVTX tool.
 *
 * NVTX (the header-only nvtx3 that PyTorch and most CUDA libraries compile in) loads a tool from
 * the path in NVTX_INJECTION64_PATH at the program's first NVTX call and calls the tool's
 * InitializeInjectionNvtx2, which fills in the functions it implements. libslack's constructor
 * (runtime/slack.c) points that variable at libslack.so itself unless it is already set (another
 * tool's, e.g. nsys) or SLACK_NVTX=0; dlopen then finds the preloaded library.
 *
 * What is recorded: push/pop ranges (nvtxRangePush*, nvtxRangePop and the domain versions) and
 * start/end ranges (nvtxRangeStart*, nvtxRangeEnd), each as one MARKER record (thread, start,
 * end, message) when the range ends, while tracing runs. Marks (instants), categories, payloads,
 * colors and domain names are not recorded. The analyzer takes its steps from these ranges when
 * the program has them (docs/CLASSIFICATION.md).
 *
 * What the program sees: push and pop return NVTX_NO_PUSH_POP_TRACKING (-2), as they do with no
 * tool; a start/end range id and a registered string handle are opaque values the program only
 * hands back to NVTX (with no tool they are 0 and NULL). Nothing here blocks: messages are
 * interned once in a fixed table (lock-free; a message past its 1,024 names is recorded as
 * "(nvtx: too many names)"), a thread's push/pop stack holds 32 levels (deeper ranges are not
 * recorded), and open start/end ranges live in a table of 512 (a range whose slot was reused
 * before it ended is not recorded).
 */
#include <errno.h>
#include <nvtx3/nvToolsExt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "interpose.h"

#ifdef SLACK_NOP
/* The nop build records nothing: it is no NVTX tool (and never names itself one, slack.c). */
SLACK_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
  (void)get;
  return 0;
}
#else

/* ---- message interning ---- */

#define NAMES 1024
#define NAME_MAX_LEN 255

struct name_slot {
  uint64_t hash; /* 0: free; claimed by CAS, then `s` published (release) */
  const char *s;
};
static struct name_slot names[NAMES];
static const char too_many[] = "(nvtx: too many names)";

static uint64_t name_hash(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h ? h : 1;
}

/* A stable copy of message s (n bytes, already cut to NAME_MAX_LEN). */
static const char *intern_n(const char *s, size_t n) {
  uint64_t h = name_hash(s, n);
  for (size_t k = 0; k < NAMES; k++) {
    struct name_slot *e = &names[(h + k) % NAMES];
    uint64_t cur = __atomic_load_n(&e->hash, __ATOMIC_ACQUIRE);
    if (cur == 0) {
      if (!__atomic_compare_exchange_n(&e->hash, &cur, h, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        if (cur != h) continue; /* another name took it */
      } else {
        int saved = errno; /* a failed malloc sets it: the program's errno stays as it was */
        char *c = malloc(n + 1);
        errno = saved;
        if (!c) return too_many; /* the slot stays without a string: later lookups pass it */
        memcpy(c, s, n);
        c[n] = '\0';
        __atomic_store_n(&e->s, c, __ATOMIC_RELEASE);
        return c;
      }
    }
    if (cur != h) continue;
    const char *got = __atomic_load_n(&e->s, __ATOMIC_ACQUIRE);
    if (got && strlen(got) == n && !memcmp(got, s, n)) return got;
    /* a different name of the same hash, or one still being copied: look further */
  }
  return too_many;
}

static const char *intern_ascii(const char *s) {
  if (!s) return intern_n("", 0);
  return intern_n(s, strnlen(s, NAME_MAX_LEN));
}

static const char *intern_wide(const wchar_t *w) {
  char buf[NAME_MAX_LEN];
  size_t n = 0;
  for (; w && w[n] && n < sizeof buf; n++) /* ASCII kept, anything else as '?' */
    buf[n] = w[n] > 0 && w[n] < 128 ? (char)w[n] : '?';
  return intern_n(buf, n);
}

static const char *attr_name(const nvtxEventAttributes_t *a) {
  if (!a) return intern_n("", 0);
  switch (a->messageType) {
  case NVTX_MESSAGE_TYPE_ASCII: return intern_ascii(a->message.ascii);
  case NVTX_MESSAGE_TYPE_UNICODE: return intern_wide(a->message.unicode);
  case NVTX_MESSAGE_TYPE_REGISTERED: /* our handle is the interned name (RegisterString below) */
    return a->message.registered ? (const char *)a->message.registered : intern_n("", 0);
  default: return intern_n("", 0);
  }
}

/* ---- push/pop: a stack per thread ---- */

#define DEPTH 32
static __thread struct {
  uint64_t t0;
  const char *name;
} stack[DEPTH];
static __thread int depth;

/* SLACK_CAPTURE_RANGE=nvtx:NAME (runtime/window.c): NAME interned once, so that a range is
 * the capture range when its interned message is this very pointer */
static const char *capture;

static int is_capture(const char *name) {
  return __builtin_expect(name == __atomic_load_n(&capture, __ATOMIC_RELAXED), 0);
}

static int push(const char *name) {
  if (is_capture(name) && depth < DEPTH) slack_window_capture(1);
  if (depth < DEPTH) stack[depth] = (__typeof__(stack[0])){slack_now(), name};
  depth++;
  return NVTX_NO_PUSH_POP_TRACKING;
}

static int pop(void) {
  if (depth <= 0) return NVTX_NO_PUSH_POP_TRACKING; /* a pop without a push: nothing to end */
  depth--;
  if (depth < DEPTH) slack_marker(stack[depth].t0, slack_now(), stack[depth].name);
  if (depth < DEPTH && is_capture(stack[depth].name)) slack_window_capture(-1);
  return NVTX_NO_PUSH_POP_TRACKING;
}

static int NVTX_API push_a(const char *m) { return push(intern_ascii(m)); }
static int NVTX_API push_w(const wchar_t *m) { return push(intern_wide(m)); }
static int NVTX_API push_ex(const nvtxEventAttributes_t *a) { return push(attr_name(a)); }
static int NVTX_API pop_core(void) { return pop(); }
static int NVTX_API dom_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  (void)d;
  return push(attr_name(a));
}
static int NVTX_API dom_pop(nvtxDomainHandle_t d) {
  (void)d;
  return pop();
}

/* ---- start/end: ranges that may end on another thread ---- */

#define OPEN 512
static struct {
  uint64_t id; /* 0: free; published last (release) */
  uint64_t t0;
  const char *name;
} open_ranges[OPEN];
static uint64_t next_id;

static nvtxRangeId_t start(const char *name) {
  if (is_capture(name)) slack_window_capture(1);
  uint64_t id = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
  __typeof__(open_ranges[0]) *e = &open_ranges[id % OPEN];
  /* a sequence lock: the slot reads free while it is rewritten (an older range here is lost) */
  (void)__atomic_exchange_n(&e->id, 0, __ATOMIC_ACQ_REL); /* acquire: the stores below stay after */
  __atomic_store_n(&e->t0, slack_now(), __ATOMIC_RELAXED);
  __atomic_store_n(&e->name, name, __ATOMIC_RELAXED);
  __atomic_store_n(&e->id, id, __ATOMIC_RELEASE);
  return id;
}

static void end(nvtxRangeId_t id) {
  if (!id) return;
  __typeof__(open_ranges[0]) *e = &open_ranges[id % OPEN];
  uint64_t want = id;
  if (__atomic_load_n(&e->id, __ATOMIC_ACQUIRE) != id) return;
  uint64_t t0 = __atomic_load_n(&e->t0, __ATOMIC_RELAXED);
  const char *name = __atomic_load_n(&e->name, __ATOMIC_RELAXED);
  /* still this range's (not rewritten meanwhile), and ended once; release: the loads above stay
   * before it */
  if (__atomic_compare_exchange_n(&e->id, &want, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
    slack_marker(t0, slack_now(), name);
    if (is_capture(name)) slack_window_capture(-1);
  }
}

static nvtxRangeId_t NVTX_API start_a(const char *m) { return start(intern_ascii(m)); }
static nvtxRangeId_t NVTX_API start_w(const wchar_t *m) { return start(intern_wide(m)); }
static nvtxRangeId_t NVTX_API start_ex(const nvtxEventAttributes_t *a) {
  return start(attr_name(a));
}
static void NVTX_API end_core(nvtxRangeId_t id) { end(id); }
static nvtxRangeId_t NVTX_API dom_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  (void)d;
  return start(attr_name(a));
}
static void NVTX_API dom_end(nvtxDomainHandle_t d, nvtxRangeId_t id) {
  (void)d;
  end(id);
}
static nvtxStringHandle_t NVTX_API dom_register_a(nvtxDomainHandle_t d, const char *s) {
  (void)d;
  return (nvtxStringHandle_t)(uintptr_t)intern_ascii(s);
}
static nvtxStringHandle_t NVTX_API dom_register_w(nvtxDomainHandle_t d, const wchar_t *s) {
  (void)d;
  return (nvtxStringHandle_t)(uintptr_t)intern_wide(s);
}

/* ---- the tool's entry point ---- */

struct fill {
  unsigned id;
  NvtxFunctionPointer fn;
};

static int set_module(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module,
                      const struct fill *f, size_t n) {
  NvtxFunctionTable table = NULL;
  unsigned size = 0;
  if (!cb->GetModuleFunctionTable(module, &table, &size) || !table) return 0;
  /* `size` counts the table's entries; a smaller (older) table simply lacks the later ids */
  for (size_t i = 0; i < n; i++)
    if (f[i].id < size && table[f[i].id]) *table[f[i].id] = f[i].fn;
  return 1;
}

#define FN(x) ((NvtxFunctionPointer)(void (*)(void))(x))

SLACK_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
  if (!get || !slack_nvtx_wanted()) return 0;
  const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
  if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable) return 0;
  static const struct fill core[] = {
      {NVTX_CBID_CORE_RangePushA, FN(push_a)},     {NVTX_CBID_CORE_RangePushW, FN(push_w)},
      {NVTX_CBID_CORE_RangePushEx, FN(push_ex)},   {NVTX_CBID_CORE_RangePop, FN(pop_core)},
      {NVTX_CBID_CORE_RangeStartA, FN(start_a)},   {NVTX_CBID_CORE_RangeStartW, FN(start_w)},
      {NVTX_CBID_CORE_RangeStartEx, FN(start_ex)}, {NVTX_CBID_CORE_RangeEnd, FN(end_core)},
  };
  static const struct fill core2[] = {
      {NVTX_CBID_CORE2_DomainRangePushEx, FN(dom_push_ex)},
      {NVTX_CBID_CORE2_DomainRangePop, FN(dom_pop)},
      {NVTX_CBID_CORE2_DomainRangeStartEx, FN(dom_start_ex)},
      {NVTX_CBID_CORE2_DomainRangeEnd, FN(dom_end)},
      {NVTX_CBID_CORE2_DomainRegisterStringA, FN(dom_register_a)},
      {NVTX_CBID_CORE2_DomainRegisterStringW, FN(dom_register_w)},
  };
  const char *cap = slack_window_nvtx_name();
  if (cap) __atomic_store_n(&capture, intern_ascii(cap), __ATOMIC_RELEASE);
  if (!set_module(cb, NVTX_CB_MODULE_CORE, core, sizeof core / sizeof core[0])) return 0;
  set_module(cb, NVTX_CB_MODULE_CORE2, core2, sizeof core2 / sizeof core2[0]);
  return 1;
}
#endif

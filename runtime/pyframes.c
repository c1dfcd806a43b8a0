/* Python frames of a call site: in a CPython process, the thread that makes a hooked CUDA call
 * has a Python frame stack (the call came from Python through torch or ctypes). This file reads
 * that stack and names it, so that a call site leads to the line of the user's script.
 *
 * How, without linking libpython and without the GIL: the interpreter's functions are found with
 * dlsym in the process (a python executable exports them). PyGILState_GetThisThreadState gives
 * the calling thread's state whether or not it holds the GIL right now (torch releases the GIL
 * around its operators, ctypes around foreign calls). While the thread is inside the hooked call
 * it runs no Python, so its own frame chain cannot change under us: the walk reads it in place,
 * takes no reference, allocates nothing and calls nothing that could take a lock. The layouts of
 * the thread state and of a frame differ between CPython versions (3.10, 3.11, 3.12, 3.13 are
 * known here); the offsets of a code object's file and function names are found by looking (the
 * first two string members from a known start), and every object read is checked against its
 * type before it is trusted. A version or a layout that does not check out turns the feature off
 * with one line on stderr; native stacks stay.
 *
 * Cost: the walk hashes (code object, instruction) of up to PY_DEPTH innermost frames into a
 * 64-bit key. A key seen before costs one look into a per-thread cache or the shared table; only
 * a new key makes the thread format its frames ("file:line function", innermost first) and
 * publish the text here, where the writer finds it (slack_py_text). Bounded: PY_KEYS texts; later
 * new keys travel without text. Lock-free, like stacks.c.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "hook.h"

#define PY_DEPTH 32
#define PY_KEYS 8192

struct py_layout {
  int ver;           /* 310 .. 313 */
  size_t ts_frame;   /* thread state: 3.10 frame; 3.11/3.12 cframe; 3.13 current_frame */
  long cf_current;   /* _PyCFrame.current_frame (3.11, 3.12); -1: none */
  size_t fr_code;    /* frame: code object (3.13: f_executable) */
  size_t fr_back;    /* frame: the caller's frame */
  size_t fr_instr;   /* frame: last/current instruction pointer (3.10: f_lasti, an int) */
  long fr_owner;     /* frame: owner byte (-1: none) */
  size_t str_ascii;  /* sizeof(PyASCIIObject): where a compact ASCII string's bytes start */
  size_t code_units; /* 3.11: offset of co_code_adaptive (lines from PyCode_Addr2Line) */
};

/* Offsets for x86_64 and aarch64 (LP64) builds with the GIL. 3.11 checked against Debian's
 * python3.11-dev internal headers (tests/test_pyframes.sh prints them where they are present). */
static const struct py_layout layouts[] = {
    {310, 24, -1, 32, 24, 0, -1, 48, 0},   /* PyFrameObject: f_back 24, f_code 32, f_lasti */
    {311, 56, 8, 32, 48, 56, 69, 48, 184}, /* _PyInterpreterFrame via _PyCFrame */
    {312, 56, 0, 0, 8, 56, 70, 40, 0},     /* _PyInterpreterFrame via _PyCFrame */
    {313, 72, -1, 0, 8, 56, 70, 40, 0},    /* _PyInterpreterFrame, current_frame in tstate */
};

/* 3.10 keeps f_lasti at this offset of PyFrameObject (after f_back, f_code, f_builtins,
 * f_globals, f_locals, f_valuestack, f_trace, f_stackdepth, f_trace_lines/opcodes, f_gen). */
#define PY310_LASTI 96

static const struct py_layout *L;
static int state;               /* 0 not looked yet, 1 on, 2 off, 3 being looked at */
static size_t co_file, co_func; /* offsets in a code object, found by looking */
static void *code_type, *str_type;
static void *(*this_tstate)(void);
static int (*is_initialized)(void);
static int (*is_finalizing)(void);
static int (*frame_line)(void *);          /* 3.12+: PyUnstable_InterpreterFrame_GetLine */
static int (*code_addr2line)(void *, int); /* PyCode_Addr2Line */
static int (*frame_lineno)(void *);        /* 3.10: PyFrame_GetLineNumber */

static void say_off(const char *why, const char *ver) {
  fprintf(stderr, "slack: Python %s: %s; call sites keep native frames only\n", ver, why);
}

/* Once, from the first call that wants frames; a thread that comes while another looks records
 * its call without frames. */
static void look(void) {
  int zero = 0;
  if (!__atomic_compare_exchange_n(&state, &zero, 3, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return; /* another thread is looking (3) or has looked */
  const char *(*version)(void) =
      (const char *(*)(void))slack_real_dlsym(RTLD_DEFAULT, "Py_GetVersion");
  *(void **)&this_tstate = slack_real_dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
  *(void **)&is_initialized = slack_real_dlsym(RTLD_DEFAULT, "Py_IsInitialized");
  if (!version || !this_tstate || !is_initialized) {
    __atomic_store_n(&state, 2, __ATOMIC_RELEASE); /* not a Python process: silent */
    return;
  }
  const char *v = version();
  int major = 0, minor = 0;
  if (sscanf(v, "%d.%d", &major, &minor) != 2) major = 0;
  char ver[16];
  snprintf(ver, sizeof ver, "%d.%d", major, minor);
  for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
    if (layouts[i].ver == major * 100 + minor) L = &layouts[i];
#if !(defined(__x86_64__) || defined(__aarch64__))
  L = NULL;
#endif
  code_type = slack_real_dlsym(RTLD_DEFAULT, "PyCode_Type");
  str_type = slack_real_dlsym(RTLD_DEFAULT, "PyUnicode_Type");
  *(void **)&is_finalizing = slack_real_dlsym(
      RTLD_DEFAULT, major * 100 + minor >= 313 ? "Py_IsFinalizing" : "_Py_IsFinalizing");
  *(void **)&frame_line = slack_real_dlsym(RTLD_DEFAULT, "PyUnstable_InterpreterFrame_GetLine");
  *(void **)&code_addr2line = slack_real_dlsym(RTLD_DEFAULT, "PyCode_Addr2Line");
  *(void **)&frame_lineno = slack_real_dlsym(RTLD_DEFAULT, "PyFrame_GetLineNumber");
  int lines = L && (L->ver >= 312   ? frame_line != NULL
                    : L->ver == 311 ? code_addr2line != NULL
                                    : frame_lineno != NULL);
  if (!L || !code_type || !str_type || !lines) {
    say_off(L ? "the interpreter lacks a function slack reads frames with"
              : "this version's frame layout is not known to slack",
            ver);
    __atomic_store_n(&state, 2, __ATOMIC_RELEASE);
    return;
  }
  __atomic_store_n(&state, 1, __ATOMIC_RELEASE);
}

static inline void *ptr_at(const void *base, size_t off) {
  void *p;
  memcpy(&p, (const char *)base + off, sizeof p);
  return p;
}
static inline void *type_of(const void *obj) { return ptr_at(obj, 8); }

/* The code object's file and function-name members: the first two consecutive str members
 * from offset 96 (3.11-3.13: co_filename, co_name, then co_qualname; 3.10 starts lower). */
static int find_code_names(const void *code) {
  for (size_t off = L->ver == 310 ? 40 : 96; off + 8 <= 200; off += 8) {
    void *a = ptr_at(code, off), *b = ptr_at(code, off + 8);
    if (a && b && type_of(a) == str_type && type_of(b) == str_type) {
      void *c = ptr_at(code, off + 16);
      co_file = off;
      co_func = L->ver >= 311 && c && type_of(c) == str_type ? off + 16 : off + 8; /* qualname */
      return 1;
    }
  }
  return 0;
}

/* A str's UTF-8 bytes without touching the object: compact ASCII, or the cached UTF-8 form. */
static const char *str_bytes(const void *s, size_t *len) {
  if (!s || type_of(s) != str_type) return NULL;
  uint32_t st;
  memcpy(&st, (const char *)s + 32, sizeof st);
  int64_t n;
  memcpy(&n, (const char *)s + 16, sizeof n);
  if ((st >> 5 & 1) && (st >> 6 & 1)) { /* compact, ascii */
    *len = (size_t)n;
    return (const char *)s + L->str_ascii;
  }
  int64_t un;
  memcpy(&un, (const char *)s + L->str_ascii, sizeof un);
  const char *u = ptr_at(s, L->str_ascii + 8);
  if (!u || un < 0) return NULL;
  *len = (size_t)un;
  return u;
}

static void *first_frame(void *ts) {
  void *f = ptr_at(ts, L->ts_frame);
  if (f && L->cf_current >= 0) f = ptr_at(f, (size_t)L->cf_current);
  return f;
}

/* A frame's code object, or NULL for frames that are not a Python function's (3.12+: the C
 * entry shim, owner 3; 3.13: a frame whose executable is not code). */
static void *frame_code(const void *f) {
  if (L->fr_owner >= 0 && *((const char *)f + L->fr_owner) == 3) return NULL;
  void *c = ptr_at(f, L->fr_code);
  return c && type_of(c) == code_type ? c : NULL;
}

static int line_of(void *f, void *code) {
  if (L->ver >= 312) return frame_line(f);
  if (L->ver == 311) {
    const char *ip = ptr_at(f, L->fr_instr);
    long addr = ip - ((const char *)code + L->code_units);
    return addr >= 0 && addr < (1L << 30) ? code_addr2line(code, (int)addr) : -1;
  }
  return frame_lineno(f);
}

struct py_slot {
  uint64_t key;     /* 0: free; claimed by CAS */
  const char *text; /* published last (release) */
};
static struct py_slot table[PY_KEYS];
static __thread uint64_t seen[64];

static size_t slot_of(uint64_t key) { return (size_t)(key * 0x9e3779b97f4a7c15ull >> 51); }

static void publish(uint64_t key, void **frames, void **codes, int n) {
  size_t i = slot_of(key) % PY_KEYS;
  for (size_t k = 0; k < PY_KEYS; k++, i = (i + 1) % PY_KEYS) {
    uint64_t cur = __atomic_load_n(&table[i].key, __ATOMIC_ACQUIRE);
    if (cur == key) return;
    if (cur) continue;
    if (__atomic_compare_exchange_n(&table[i].key, &cur, key, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
      break;
    if (cur == key) return;
  }
  if (__atomic_load_n(&table[i].key, __ATOMIC_RELAXED) != key) return; /* full */
  if (!co_file && !find_code_names(codes[0])) {
    __atomic_store_n(&state, 2, __ATOMIC_RELEASE);
    say_off("the layout of its code objects is not known to slack", L->ver == 310   ? "3.10"
                                                                    : L->ver == 311 ? "3.11"
                                                                    : L->ver == 312 ? "3.12"
                                                                                    : "3.13");
    return;
  }
  size_t cap = 256 * (size_t)n + 1, len = 0;
  char *t = malloc(cap);
  if (!t) return;
  for (int k = 0; k < n; k++) {
    size_t fl = 0, nl = 0;
    const char *file = str_bytes(ptr_at(codes[k], co_file), &fl);
    const char *fn = str_bytes(ptr_at(codes[k], co_func), &nl);
    if (fl > 200) { /* keep the end of a long path */
      file += fl - 200;
      fl = 200;
    }
    int w =
        snprintf(t + len, cap - len, "%s%.*s:%d %.*s", k ? "\n" : "", (int)fl, file ? file : "?",
                 line_of(frames[k], codes[k]), (int)(nl > 40 ? 40 : nl), fn ? fn : "?");
    if (w < 0 || (size_t)w >= cap - len) break;
    len += (size_t)w;
  }
  t[len] = '\0';
  __atomic_store_n(&table[i].text, t, __ATOMIC_RELEASE);
}

uint64_t slack_py_key(void) {
  int st = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
  if (__builtin_expect(st == 0, 0)) {
    look();
    st = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
  }
  if (st != 1 || !is_initialized() || (is_finalizing && is_finalizing())) return 0;
  void *ts = this_tstate();
  if (!ts) return 0; /* a thread Python never saw (autograd's workers): native frames only */
  void *frames[PY_DEPTH], *codes[PY_DEPTH];
  int n = 0;
  uint64_t h = 0xcbf29ce484222325ull;
  for (void *f = first_frame(ts); f && n < PY_DEPTH; f = ptr_at(f, L->fr_back)) {
    void *c = frame_code(f);
    if (!c) continue;
    uint64_t ip = L->ver == 310 ? (uint64_t) * (const int *)((const char *)f + PY310_LASTI)
                                : (uint64_t)(uintptr_t)ptr_at(f, L->fr_instr);
    h = (h ^ (uint64_t)(uintptr_t)c) * 0x100000001b3ull;
    h = (h ^ ip) * 0x100000001b3ull;
    frames[n] = f;
    codes[n++] = c;
  }
  if (!n) return 0;
  if (!h) h = 1;
  uint64_t *c = &seen[(h >> 7) & 63];
  if (*c == h) return h;
  *c = h;
  publish(h, frames, codes, n);
  return __atomic_load_n(&state, __ATOMIC_RELAXED) == 1 ? h : 0;
}

const char *slack_py_text(uint64_t key) {
  if (!key) return NULL;
  size_t i = slot_of(key) % PY_KEYS;
  for (size_t k = 0; k < PY_KEYS; k++, i = (i + 1) % PY_KEYS) {
    uint64_t cur = __atomic_load_n(&table[i].key, __ATOMIC_ACQUIRE);
    if (!cur) return NULL;
    if (cur == key) return __atomic_load_n(&table[i].text, __ATOMIC_ACQUIRE);
  }
  return NULL;
}

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
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

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
/* the sampler's (below): a thread's registration, and the offsets it measures */
static __thread void *registered;
static __thread int cpu_registered; /* a thread without Python: sampled for its CPU time only */
static int calibrated;              /* 0 not yet, 1 ok, -1 gave up */
static void calibrate(void *f, void *code);
static void sampler_register(void *ts);
static int state;               /* 0 not looked yet, 1 on, 2 off, 3 being looked at */
static size_t co_file, co_func; /* offsets in a code object, found by looking */
static void *code_type, *str_type;
static void *(*this_tstate)(void);
static int (*is_initialized)(void);
static int (*is_finalizing)(void);
static int (*frame_line)(void *);           /* 3.12+: PyUnstable_InterpreterFrame_GetLine */
static int (*code_addr2line)(void *, int);  /* PyCode_Addr2Line */
static int (*frame_lineno)(void *);         /* 3.10: PyFrame_GetLineNumber */
static void *(*interp_main)(void);          /* PyInterpreterState_Main */
static void *(*interp_thread_head)(void *); /* PyInterpreterState_ThreadHead */

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
  *(void **)&interp_main = slack_real_dlsym(RTLD_DEFAULT, "PyInterpreterState_Main");
  *(void **)&interp_thread_head = slack_real_dlsym(RTLD_DEFAULT, "PyInterpreterState_ThreadHead");
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
static void *safe_ptr(const void *base, size_t off);
static int find_code_names(const void *code) {
  for (size_t off = L->ver == 310 ? 48 : 96; off + 8 <= 200; off += 8) {
    /* candidates are read through safe_ptr: an int member read as a pointer is not followed */
    void *a = safe_ptr(code, off), *b = safe_ptr(code, off + 8);
    if (a && b && safe_ptr(a, 8) == str_type && safe_ptr(b, 8) == str_type) {
      void *c = safe_ptr(code, off + 16);
      co_file = off;
      co_func = L->ver >= 311 && c && safe_ptr(c, 8) == str_type ? off + 16 : off + 8;
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
  if (!calibrated && L->ver >= 311) calibrate(frames[0], codes[0]);
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

/* ---- samples: where a Python thread is while it makes no CUDA call ------------------------
 *
 * The hooks see a thread only when it calls CUDA; the time a training loop's main thread spends
 * loading the next batch (a DataLoader without workers) has no call in it. The writer thread
 * therefore samples, every SLACK_PY_SAMPLE_MS, the Python stack of each thread that has made a
 * hooked call from Python, and of every other thread of the interpreter (below: a loader's
 * threads that never call CUDA), and writes it as a SAMPLE record: `slack report` names the data
 * starvation it finds after the line the thread was on (the `for` over the loader, `next(it)`),
 * and reads a loader's threads from theirs.
 *
 * The sampled thread runs on: its frames can change or be freed while they are read. Every read
 * of its memory is therefore a copy through process_vm_readv on this process (a bad address
 * fails with EFAULT instead of a fault; where the syscall is refused, a pipe write, which fails
 * alike), every object is checked against its type, and lines come from slack's own reading of
 * the code object's location table (copied too): nothing here calls the interpreter. 3.11+ only
 * (3.10's line table is another format); the offsets it needs beyond the frame layout are
 * measured once on a frame the hooks read (calibrate). */
#define SAMPLE_THREADS 64
static struct {
  uint64_t tid;
  void *ts;
} sthreads[SAMPLE_THREADS];
static int nsthreads;
static int calibrate_tries;
static size_t co_firstline, co_lines; /* offsets: co_firstlineno (int), co_linetable */
static long code_units_off;           /* instruction bytes from the code object's start */
static void *bytes_type;

static void sampler_register(void *ts) {
  registered = ts;
  uint64_t tid = (uint64_t)syscall(SYS_gettid);
  int n = __atomic_load_n(&nsthreads, __ATOMIC_ACQUIRE);
  for (int i = 0; i < n && i < SAMPLE_THREADS; i++)
    if (__atomic_load_n(&sthreads[i].tid, __ATOMIC_ACQUIRE) == tid) {
      __atomic_store_n(&sthreads[i].ts, ts, __ATOMIC_RELEASE);
      return;
    }
  int i = __atomic_fetch_add(&nsthreads, 1, __ATOMIC_ACQ_REL);
  if (i >= SAMPLE_THREADS) return;
  __atomic_store_n(&sthreads[i].ts, ts, __ATOMIC_RELEASE);
  __atomic_store_n(&sthreads[i].tid, tid, __ATOMIC_RELEASE);
}

/* The line of code unit `unit` from a 3.11+ location table (Objects/locations.md). */
static int table_line(const uint8_t *t, size_t n, int first, long unit) {
  int line = first;
  long at = 0;
  size_t i = 0;
  while (i < n) {
    uint8_t b = t[i++];
    if (!(b & 0x80)) return -1;
    int code = (b >> 3) & 15;
    long len = (b & 7) + 1;
    int delta = 0, has = 1;
    if (code == 15) {
      has = 0;
    } else if (code == 14 || code == 13) {
      unsigned v = 0, shift = 0;
      uint8_t r;
      do { /* signed varint: 6 bits per byte, 0x40 continues */
        if (i >= n) return -1;
        r = t[i++];
        v |= (unsigned)(r & 63) << shift;
        shift += 6;
      } while ((r & 64) && shift < 32);
      delta = (v & 1) ? -(int)(v >> 1) : (int)(v >> 1);
      if (code == 14)
        for (int k = 0; k < 3; k++) { /* end line, column, end column */
          do {
            if (i >= n) return -1;
            r = t[i++];
          } while (r & 64);
        }
    } else if (code >= 10) {
      delta = code - 10;
      i += 2;
    } else {
      i += 1;
    }
    line += delta;
    if (unit < at + len) return has ? line : -1;
    at += len;
  }
  return -1;
}

/* Measures, on a frame the hooks read (its thread is in the hooked call: stable), where the code
 * object keeps its first line, its location table and its instructions, by matching what the
 * interpreter itself says of that frame's line. */
static void calibrate(void *f, void *code) {
  int (*lasti_of)(void *) = NULL;
  *(void **)&lasti_of = slack_real_dlsym(RTLD_DEFAULT, "PyUnstable_InterpreterFrame_GetLasti");
  bytes_type = slack_real_dlsym(RTLD_DEFAULT, "PyBytes_Type");
  const char *ip = ptr_at(f, L->fr_instr);
  long lasti;
  if (L->ver == 311) {
    lasti = (ip - ((const char *)code + L->code_units)) / 2;
    code_units_off = (long)L->code_units;
  } else if (lasti_of) {
    lasti = lasti_of(f) / 2; /* the API answers in bytes, like frame.f_lasti */
    code_units_off = (ip - (const char *)code) - 2 * lasti;
  } else {
    calibrated = -1;
    return;
  }
  if (lasti < 0) return;
  int want = line_of(f, code);
  size_t lt = co_func + 8; /* co_linetable follows co_qualname (3.11-3.13) */
  const void *tab = ptr_at(code, lt);
  if (++calibrate_tries > 16) calibrated = -1; /* else tried again on the next new stack */
  if (!bytes_type || !tab || type_of(tab) != bytes_type || want <= 0) return;
  int64_t tn;
  memcpy(&tn, (const char *)tab + 16, sizeof tn);
  for (size_t off = 48; off <= 96; off += 4) {
    int first;
    memcpy(&first, (const char *)code + off, sizeof first);
    if (first > 0 && first <= want &&
        table_line((const uint8_t *)tab + 32, (size_t)tn, first, lasti) == want) {
      co_firstline = off;
      co_lines = lt;
      calibrated = 1;
      return;
    }
  }
}

static int vm_ok = 1; /* process_vm_readv works here */
static int pipe_fd[2] = {-1, -1};

/* Copies n bytes at addr into out without trusting addr: 0 ok, -1 not readable. */
static int safe_read(void *out, const void *addr, size_t n) {
  if (!addr) return -1;
  if (vm_ok) {
    struct iovec l = {out, n}, r = {(void *)(uintptr_t)addr, n};
    ssize_t got = syscall(SYS_process_vm_readv, getpid(), &l, 1, &r, 1, 0);
    if (got == (ssize_t)n) return 0;
    if (got >= 0 || errno == EFAULT) return -1;
    vm_ok = 0; /* refused (seccomp, EPERM): the pipe from now on */
  }
  if (pipe_fd[0] < 0 && pipe2(pipe_fd, O_CLOEXEC | O_NONBLOCK)) return -1;
  if (n > 4096) return -1;
  if (write(pipe_fd[1], addr, n) != (ssize_t)n) return -1;
  return read(pipe_fd[0], out, n) == (ssize_t)n ? 0 : -1;
}

static void *safe_ptr(const void *base, size_t off) {
  void *p = NULL;
  return safe_read(&p, (const char *)base + off, sizeof p) ? NULL : p;
}

/* A str's bytes copied into buf (compact ASCII only; "?" otherwise). */
static void safe_str(const void *s, char *buf, size_t cap) {
  snprintf(buf, cap, "?");
  unsigned char h[48];
  if (!s || safe_read(h, s, 40)) return;
  void *t;
  memcpy(&t, h + 8, sizeof t);
  if (t != str_type) return;
  int64_t n;
  uint32_t st;
  memcpy(&n, h + 16, sizeof n);
  memcpy(&st, h + 32, sizeof st);
  if (!((st >> 5 & 1) && (st >> 6 & 1)) || n < 0) return;
  size_t k = (size_t)n < cap - 1 ? (size_t)n : cap - 1;
  if (safe_read(buf, (const char *)s + L->str_ascii, k)) k = 0;
  buf[k] = '\0';
  if (!k) snprintf(buf, cap, "?");
}

/* Code objects the sampler has read (the writer thread only): names and location table. */
struct code_info {
  const void *code, *file_obj;
  char text[256]; /* "file:%d function" with %d for the line */
  uint8_t *table;
  size_t ntable;
  int first;
};
#define CODE_CACHE 1024
static struct code_info *code_cache;

static struct code_info *code_of(const void *code) {
  if (!code_cache && !(code_cache = calloc(CODE_CACHE, sizeof *code_cache))) return NULL;
  struct code_info *ci = &code_cache[((uintptr_t)code >> 4) % CODE_CACHE];
  const void *file = safe_ptr(code, co_file);
  if (ci->code == code && ci->file_obj == file && file) return ci;
  if (!file || safe_ptr(code, 8) != code_type) return NULL;
  free(ci->table);
  memset(ci, 0, sizeof *ci);
  char fb[200], nb[48];
  safe_str(file, fb, sizeof fb);
  safe_str(safe_ptr(code, co_func), nb, sizeof nb);
  for (char *p = fb; *p; p++) /* the line goes in with %d: no other conversion */
    if (*p == '%') *p = '_';
  for (char *p = nb; *p; p++)
    if (*p == '%') *p = '_';
  snprintf(ci->text, sizeof ci->text, "%s:%%d %s", fb, nb);
  if (safe_read(&ci->first, (const char *)code + co_firstline, sizeof ci->first)) return NULL;
  const void *tab = safe_ptr(code, co_lines);
  int64_t tn = 0;
  if (tab && safe_ptr(tab, 8) == bytes_type && !safe_read(&tn, (const char *)tab + 16, sizeof tn) &&
      tn > 0 && tn < 65536) {
    ci->table = malloc((size_t)tn);
    if (ci->table && !safe_read(ci->table, (const char *)tab + 32, (size_t)tn))
      ci->ntable = (size_t)tn;
  }
  ci->code = code;
  ci->file_obj = file;
  return ci;
}

/* The last sample of a thread (direct-mapped by its id; the writer thread only). A thread that
 * has not run since (its CPU clock stands still) cannot have moved: its key again, for no read
 * (an idle pool's threads, GPU run 132: 48 of them took 370 us a sample). One whose innermost two
 * frames sit where they sat, at the same instructions, is where it was (woken in a wait loop):
 * its key again, for three reads instead of a walk. */
#define PCACHE 128
static struct {
  uint64_t tid, key, cpu;
  void *f, *ip, *back, *back_ip;
} pcache[PCACHE];

/* Thread tid's key when it has not run since its last sample (cpu: 1 + its CPU ns now), else 0. */
static uint64_t still(uint64_t tid, uint64_t cpu) {
  size_t pc = (size_t)(tid % PCACHE);
  return cpu && pcache[pc].tid == tid && pcache[pc].cpu == cpu ? pcache[pc].key : 0;
}

/* After a sample of thread tid that read key k: the CPU time it had then, kept with the key it
 * stands for (a sample that read nothing keeps none: the next one reads again). */
static void ran_until(uint64_t tid, uint64_t cpu, uint64_t k) {
  size_t pc = (size_t)(tid % PCACHE);
  if (pcache[pc].tid == tid) pcache[pc].cpu = k && pcache[pc].key == k ? cpu : 0;
}

/* A frame's instruction and caller, copied; nonzero when it cannot be read. */
static int frame_at(void *f, void **ip, void **back) {
  unsigned char fr[80];
  if (!f || safe_read(fr, f, sizeof fr)) return -1;
  memcpy(ip, fr + L->fr_instr, sizeof *ip);
  memcpy(back, fr + L->fr_back, sizeof *back);
  return 0;
}

/* One sample of a thread (its id tid, its state ts): its stack's key (0: nothing readable). */
static uint64_t sample_at(void *f, uint64_t tid);
static uint64_t sample_one(void *ts, uint64_t tid) {
  return sample_at(safe_ptr(ts, L->ts_frame), tid);
}

/* The same from the state's frame member's value f (3.11, 3.12: its _PyCFrame). */
static uint64_t sample_at(void *f, uint64_t tid) {
  if (f && L->cf_current >= 0) f = safe_ptr(f, (size_t)L->cf_current);
  void *ip = NULL, *back = NULL, *bip = NULL, *bback;
  if (frame_at(f, &ip, &back)) return 0;
  if (back && frame_at(back, &bip, &bback)) back = NULL;
  size_t pc = (size_t)(tid % PCACHE);
  if (pcache[pc].tid == tid && pcache[pc].key && pcache[pc].f == f && pcache[pc].ip == ip &&
      pcache[pc].back == back && pcache[pc].back_ip == bip)
    return pcache[pc].key;
  pcache[pc].tid = tid;
  pcache[pc].key = pcache[pc].cpu = 0;
  pcache[pc].f = f;
  pcache[pc].ip = ip;
  pcache[pc].back = back;
  pcache[pc].back_ip = bip;
  struct code_info *ci[PY_DEPTH];
  int line[PY_DEPTH], n = 0;
  uint64_t h = 0x84222325cbf29ce4ull; /* not the hooks' keys: those hash instructions */
  for (int hops = 0; f && n < PY_DEPTH && hops < 4 * PY_DEPTH; hops++) {
    unsigned char fr[80];
    if (safe_read(fr, f, sizeof fr)) break;
    void *code, *ip, *back;
    memcpy(&code, fr + L->fr_code, sizeof code);
    memcpy(&ip, fr + L->fr_instr, sizeof ip);
    memcpy(&back, fr + L->fr_back, sizeof back);
    int owner = L->fr_owner >= 0 ? fr[L->fr_owner] : 0;
    f = back;
    if (owner == 3 || !code) continue;
    struct code_info *c = code_of(code);
    if (!c) continue;
    long unit = ((const char *)ip - (const char *)code - code_units_off) / 2;
    line[n] = c->ntable ? table_line(c->table, c->ntable, c->first, unit) : -1;
    ci[n] = c;
    h = (h ^ (uint64_t)(uintptr_t)code) * 0x100000001b3ull;
    h = (h ^ (uint64_t)(uint32_t)line[n]) * 0x100000001b3ull;
    n++;
  }
  if (!n) return 0;
  h |= 1;
  if (slack_py_text(h)) return pcache[pc].key = h;
  /* publish its text, as the hooks do */
  size_t i = slot_of(h) % PY_KEYS;
  for (size_t k = 0; k < PY_KEYS; k++, i = (i + 1) % PY_KEYS) {
    uint64_t cur = __atomic_load_n(&table[i].key, __ATOMIC_ACQUIRE);
    if (cur == h) return h;
    if (cur) continue;
    if (__atomic_compare_exchange_n(&table[i].key, &cur, h, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      break;
    if (cur == h) return h;
  }
  if (__atomic_load_n(&table[i].key, __ATOMIC_RELAXED) != h) return 0; /* full */
  size_t cap = 288 * (size_t)n + 1, len = 0;
  char *t = malloc(cap);
  if (!t) return 0;
  for (int k = 0; k < n; k++) {
    if (k) t[len++] = '\n';
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    int w = snprintf(t + len, cap - len, ci[k]->text, line[k]);
#pragma GCC diagnostic pop
    if (w < 0 || (size_t)w >= cap - len) break;
    len += (size_t)w;
  }
  t[len] = '\0';
  __atomic_store_n(&table[i].text, t, __ATOMIC_RELEASE);
  return pcache[pc].key = h;
}

/* ---- every Python thread, not only those that call CUDA ----------------------------------
 *
 * A loader's threads that never call CUDA (a pool decoding and transforming samples while the
 * main thread stacks, pins and copies) hold the GIL and the CPU that the launching thread waits
 * for; the analyzer's loader rules read them from their samples. The interpreter keeps its
 * thread states in a list (struct _ts: prev, next, interp first, 3.11 to 3.13). Its head's
 * place in the interpreter's state is found once, while the interpreter runs: the word equal
 * to what PyInterpreterState_ThreadHead answers; from then on the walk calls nothing and copies
 * every word it reads (the head, each state's `next`): an interpreter freed at exit, or a state
 * freed under the walk, reads as an error or as garbage, caught by a state's `interp` not being
 * the interpreter or by an id that is no thread of this process. A state's thread id
 * (native_thread_id) sits at an offset that differs between versions and builds: it is found on the
 * registered threads (the words of their states equal to their ids, narrowed by each registered
 * thread) and each id read is checked against the kernel (its CPU clock answers for threads of this
 * process only). */
#define TS_NEXT 8
#define TS_INTERP 16
#define TID_CANDS 8
static long tid_cand[TID_CANDS];
static long head_off = -1; /* threads.head in the interpreter's state; 0: not found (no walk) */
static int head_tries;     /* looks for it so far (a thread started under a look moves the head) */
/* The interpreter's threads as the last walk found them (the writer's only). Walked again when a
 * thread starts (the list's head or the next thread id moves) or after OLIST_AGE samples (a thread
 * ended and another took its place unseen); in between, a thread that has not run since its last
 * sample costs one read of its CPU clock, not a copy of its state. */
#define OLIST (4 * SAMPLE_THREADS)
#define OLIST_AGE 50
static struct {
  void *ts;
  uint64_t tid;
} olist[OLIST];
static int nolist, olist_age = OLIST_AGE;
static uint64_t olist_mark[2];
/* A state the walk found without a thread to read yet (its id still 0, or not one of this
 * process's threads: a thread starts, the list holds its state before the thread has bound it,
 * and on a loaded machine the thread may not run for a while) has the next samples walk again:
 * the next 8, then every 2nd for 8 walks, every 4th, ... every 32nd at most (a state that is
 * never bound must not make every sample a walk). Before, a loader's second thread, started
 * right after the first, went unsampled for OLIST_AGE samples (tests/test_callsites.sh `pool`:
 * 4 runs in 20 on a loaded machine). */
static int olist_unbound;  /* walks in a row that found such a state */
static int ntid_cand = -1; /* -1: not yet looked; 0: none found (the walk stays off) */
static int tid_checks;     /* registered threads' samples that confirmed the candidates */

/* Narrow the candidates for native_thread_id's offset on a registered thread (tid, ts). */
static void tid_calibrate(uint64_t tid, const void *ts) {
  if (ntid_cand < 0) { /* the state's first 1 KiB, 64 bytes at a time, up to what reads */
    uint64_t words[8];
    ntid_cand = 0;
    for (int k = 0; k < 128 && ntid_cand < TID_CANDS; k += 8) {
      if (safe_read(words, (const char *)ts + 8 * k, sizeof words)) break;
      for (int j = 0; j < 8 && ntid_cand < TID_CANDS; j++)
        if (k + j >= 3 && words[j] == tid) tid_cand[ntid_cand++] = 8L * (k + j);
    }
    return;
  }
  if (tid_checks >= 256) return; /* confirmed: no more reads for it */
  int kept = 0;
  for (int c = 0; c < ntid_cand; c++) {
    uint64_t v;
    if (!safe_read(&v, (const char *)ts + tid_cand[c], sizeof v) && v == tid)
      tid_cand[kept++] = tid_cand[c];
  }
  ntid_cand = kept;
  tid_checks++;
}

/* The state a registered thread tid sampled with (NULL: none, or no Python) */
static void *registered_ts(uint64_t tid) {
  int n = __atomic_load_n(&nsthreads, __ATOMIC_ACQUIRE);
  for (int i = 0; i < n && i < SAMPLE_THREADS; i++)
    if (__atomic_load_n(&sthreads[i].tid, __ATOMIC_ACQUIRE) == tid)
      return __atomic_load_n(&sthreads[i].ts, __ATOMIC_ACQUIRE);
  return NULL;
}

/* Samples of the interpreter's threads that are not registered (got of max filled), into tids,
 * keys and cpu from position got; the new count. Per thread one clock read; a walk copies each
 * state's head (its links, its frame and its id: the first 256 bytes or so), and between walks
 * a thread that ran has its head copied again (its frame now); then the frames, where it ran. */
static int sample_others(uint64_t *tids, uint64_t *keys, uint64_t *cpu, int got, int max) {
  if (ntid_cand <= 0 || !interp_main || !interp_thread_head || !head_off) return got;
  size_t head = (size_t)tid_cand[0] > L->ts_frame ? (size_t)tid_cand[0] : L->ts_frame;
  unsigned char hb[1032];
  if ((head += 8) > sizeof hb) return got;
  int reg = got;
  void *interp = interp_main(); /* a global's load: the runtime's state is never freed */
  if (!interp) return got;
  if (head_off < 0) { /* once, from a sample (not while finalizing: slack_py_sample) */
    void *h = interp_thread_head(interp);
    uint64_t words[8];
    /* within the first 32 KiB: 3.13 keeps its evaluation state (pending calls) before it */
    for (int k = 0; k < 4096 && h && head_off < 0; k += 8) {
      if (safe_read(words, (const char *)interp + 8 * k, sizeof words)) break;
      for (int j = 0; j < 8 && head_off < 0; j++)
        if (words[j] == (uint64_t)(uintptr_t)h) head_off = 8L * (k + j);
    }
    /* not found: the head moved under the look (threads starting and ending all the time: a
     * look over 3.13's state copies ~100 blocks) or there is none yet: another look at the
     * next sample, 16 in all */
    if (head_off < 0 && ++head_tries >= 16) head_off = 0;
    if (head_off <= 0) return got;
  }
  /* the list's head and, just before it, the interpreter's next thread id (struct pythreads,
   * 3.11 to 3.13): either moves when a thread starts */
  uint64_t mark[2] = {0, 0};
  if (head_off >= 8 ? safe_read(mark, (const char *)interp + head_off - 8, sizeof mark)
                    : safe_read(&mark[1], (const char *)interp + head_off, sizeof mark[1]))
    return got;
  int walk = olist_age >= OLIST_AGE || memcmp(mark, olist_mark, sizeof mark);
  if (walk) {
    nolist = olist_age = 0;
    memcpy(olist_mark, mark, sizeof mark);
  } else {
    olist_age++;
  }
  void *ts = (void *)(uintptr_t)mark[1], *next;
  int unbound = 0;
  for (int i = 0; got < max && (walk ? ts && i < OLIST : i < nolist); i++) {
    void *cur, *in, *f = NULL;
    uint64_t tid;
    if (walk) {
      if (safe_read(hb, ts, head)) break;
      memcpy(&next, hb + TS_NEXT, sizeof next);
      memcpy(&in, hb + TS_INTERP, sizeof in);
      memcpy(&f, hb + L->ts_frame, sizeof f);
      memcpy(&tid, hb + tid_cand[0], sizeof tid);
      if (in != interp) break;
      cur = ts;
      ts = next;
      olist[nolist].ts = cur;
      olist[nolist++].tid = tid;
    } else {
      cur = olist[i].ts;
      tid = olist[i].tid;
    }
    int known = 0;
    for (int r = 0; r < reg && !known; r++)
      known = tids[r] == tid;
    uint64_t c = known || !tid ? 0 : slack_thread_cpu_ns(tid);
    if (!c) { /* registered, ended, or not bound to its thread yet */
      /* 3.11 gives a state made for a new thread its maker's id until the thread binds it: a
       * registered thread's id on a state that is not that thread's own is such a one */
      unbound += walk && (!known || registered_ts(tid) != cur);
      continue;
    }
    uint64_t k = still(tid, c);
    if (!k) {
      if (!walk) { /* it ran: its state read now, still this thread's */
        uint64_t now;
        if (safe_read(hb, cur, head)) continue;
        memcpy(&in, hb + TS_INTERP, sizeof in);
        memcpy(&now, hb + tid_cand[0], sizeof now);
        if (in != interp || now != tid) continue;
        memcpy(&f, hb + L->ts_frame, sizeof f);
      }
      k = sample_at(f, tid);
      ran_until(tid, c, k);
    }
    tids[got] = tid;
    cpu[got] = c;
    keys[got++] = k;
  }
  if (walk) {
    olist_unbound = unbound ? olist_unbound + 1 : 0;
    int shift = (olist_unbound - 1) / 8 < 5 ? (olist_unbound - 1) / 8 : 5;
    if (unbound) olist_age = OLIST_AGE - ((1 << shift) - 1); /* the next walk that many later */
  }
  return got;
}

void slack_py_forget(void) {
  __atomic_store_n(&nsthreads, 0, __ATOMIC_RELEASE);
  memset(sthreads, 0, sizeof sthreads);
  memset(pcache, 0, sizeof pcache);
  nolist = 0, olist_age = OLIST_AGE, olist_unbound = 0; /* the child's list is walked afresh */
  registered = NULL; /* the forking thread registers again at its next call */
  cpu_registered = 0;
}

int slack_py_sampling(void) {
  return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == 1 && calibrated == 1 && L->ver >= 311;
}

int slack_py_sample(uint64_t *tids, uint64_t *keys, uint64_t *cpu, int max) {
  if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 1 || calibrated != 1 || L->ver < 311) return 0;
  if (!is_initialized() || (is_finalizing && is_finalizing())) return 0;
  int n = __atomic_load_n(&nsthreads, __ATOMIC_ACQUIRE), got = 0;
  for (int i = 0; i < n && i < SAMPLE_THREADS && got < max; i++) {
    uint64_t tid = __atomic_load_n(&sthreads[i].tid, __ATOMIC_ACQUIRE);
    void *ts = __atomic_load_n(&sthreads[i].ts, __ATOMIC_ACQUIRE);
    if (!tid) continue;
    /* a thread without Python, or with no Python frame now (autograd's workers, which torch
     * gives a thread state of their own but no frames): its CPU time only, key 0 */
    uint64_t c = slack_thread_cpu_ns(tid), k = 0;
    if (ts && !(k = still(tid, c))) {
      k = sample_one(ts, tid);
      ran_until(tid, c, k);
    }
    if (ts && ntid_cand) tid_calibrate(tid, ts);
    tids[got] = tid;
    cpu[got] = c;
    keys[got++] = k;
  }
  return sample_others(tids, keys, cpu, got, max);
}

void slack_py_init(void) {
  if (slack_cfg.stacks != SLACK_STACKS_OFF) look();
}

uint64_t slack_py_key(void) {
  int st = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
  if (__builtin_expect(st == 0, 0)) {
    look();
    st = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
  }
  if (st != 1 || !is_initialized() || (is_finalizing && is_finalizing())) return 0;
  void *ts = this_tstate();
  if (!ts) { /* a thread Python never saw (autograd's workers): native frames only */
    if (__builtin_expect(!cpu_registered, 0)) {
      cpu_registered = 1;
      sampler_register(NULL); /* its CPU time is sampled (writer.c sample_python) */
    }
    return 0;
  }
  if (__builtin_expect(registered != ts, 0)) sampler_register(ts);
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

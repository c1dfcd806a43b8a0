/* The dlsym hook, and how slack finds the real definitions of the symbols it shadows.
 *
 * cudart, cuBLAS, cuDNN, NCCL and Triton never link libcuda: they dlopen it and dlsym
 * cuGetProcAddress (or a driver function) from it, then fetch everything else through
 * cuGetProcAddress. Interposing on dlsym is the one place where slack sees those pointers and
 * can hand out its wrappers instead (interpose/driver.c).
 *
 * The hook must not change what dlsym means for anything else, and dlsym depends on who calls
 * it: RTLD_NEXT searches the objects after the caller's, RTLD_DEFAULT includes the caller's
 * local scope (a library dlopened with RTLD_LOCAL sees its own dependencies). glibc takes the
 * caller from dlsym's return address, so a C wrapper that forwards the call makes libslack the
 * caller. On x86-64 the exported dlsym is therefore a few instructions of assembly that ask
 * slack_dlsym_route where to go and then jump there with the program's return address still in
 * place: every name slack does not hook reaches glibc exactly as if slack were absent. Only the
 * driver names slack hooks take the C path, which reproduces RTLD_NEXT and RTLD_DEFAULT from
 * the caller's link map (those names are defined by libcuda and by libslack alone, where the
 * approximation is exact enough). Other architectures use the C path for every name.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <string.h>

#include "interpose.h"

typedef void *(*dlsym_fn)(void *, const char *);

/* The loaded object containing addr, NULL when none does (JIT code, a bad pointer). */
static struct link_map *map_of(const void *addr) {
  Dl_info info;
  struct link_map *map = NULL;
  if (dladdr1(addr, &info, (void **)&map, RTLD_DL_LINKMAP) == 0) return NULL;
  return map;
}

static struct link_map *own_map_cache;

/* libslack's own link map. */
static struct link_map *own_map(void) {
  struct link_map *m = __atomic_load_n(&own_map_cache, __ATOMIC_RELAXED);
  if (m == NULL) {
    m = map_of((const void *)&own_map);
    __atomic_store_n(&own_map_cache, m, __ATOMIC_RELAXED);
  }
  return m;
}

/* name as defined by object l itself. dlsym on a handle searches the object and then its
 * dependencies; a hit in a dependency is not l's and is skipped (the walk reaches that
 * dependency in its own turn if it comes after the caller). */
static void *lookup_in(struct link_map *l, const char *name, dlsym_fn real) {
  if (l->l_name == NULL || l->l_name[0] == '\0') return NULL; /* the main program, the vDSO */
  void *h = dlopen(l->l_name, RTLD_NOLOAD | RTLD_LAZY);
  if (h == NULL) return NULL;
  void *p = real(h, name);
  dlclose(h);
  return p != NULL && map_of(p) == l ? p : NULL;
}

/* dlsym(RTLD_NEXT, name) on behalf of code in object `from`: the first definition in the
 * objects that follow it in link-map order (load order, which for the objects loaded at start
 * is also the order of the global scope). glibc searches the scope of the object that loaded
 * the caller instead; for a caller dlopened late, dependencies loaded before it (libc) are not
 * after it in link-map order, so a miss falls back to the search after libslack, refusing an
 * answer in the caller itself (that would make an interposer call itself). The list is walked
 * without the loader's lock, which no public interface offers; a library being dlclosed by
 * another thread at this very moment is the risk, as in every link-map walker. */
static void *next_after(struct link_map *from, const char *name, dlsym_fn real) {
  for (struct link_map *l = from->l_next; l != NULL; l = l->l_next) {
    void *p = lookup_in(l, name, real);
    if (p != NULL) return p;
  }
  void *p = real(RTLD_NEXT, name);
  return p != NULL && map_of(p) != from ? p : NULL;
}

/* dlsym(RTLD_DEFAULT, name) on behalf of code in object `from`: the global scope, then the
 * caller's local scope (its handle searches it and its dependencies), as glibc does. */
static void *default_scope(struct link_map *from, const char *name, dlsym_fn real) {
  void *p = real(RTLD_DEFAULT, name);
  if (p == NULL && from != NULL && from->l_name != NULL && from->l_name[0] != '\0') {
    void *h = dlopen(from->l_name, RTLD_NOLOAD | RTLD_LAZY);
    if (h != NULL) {
      p = real(h, name);
      dlclose(h);
    }
  }
  return p;
}

/* dlsym as the caller at address `caller` would have seen it. A failed emulated lookup may
 * leave dlerror() empty (the dlclose that follows the last search clears it). */
static void *lookup_for(void *handle, const char *name, void *caller, dlsym_fn real) {
  if (handle == RTLD_NEXT) {
    struct link_map *from = map_of(caller);
    return from != NULL ? next_after(from, name, real) : real(RTLD_NEXT, name);
  }
  if (handle == RTLD_DEFAULT) return default_scope(map_of(caller), name, real);
  return real(handle, name); /* a real handle: the caller does not matter */
}

void *slack_real_for_caller(const char *name, void *caller) {
  dlsym_fn real = (dlsym_fn)slack_glibc_dlsym();
  struct link_map *own = own_map(), *from = map_of(caller);
  void *p = NULL;
  if (from != NULL && from != own && from->l_name != NULL && from->l_name[0] != '\0') {
    void *h = dlopen(from->l_name, RTLD_NOLOAD | RTLD_LAZY);
    if (h != NULL) {
      p = real(h, name);
      dlclose(h);
    }
  }
  if (p == NULL || map_of(p) == own) p = real(RTLD_NEXT, name); /* after libslack */
  return p != NULL && map_of(p) != own ? p : NULL;
}

static int is_get_proc_address(const char *name) {
  return strcmp(name, "cuGetProcAddress") == 0 || strcmp(name, "cuGetProcAddress_v2") == 0;
}

/* CUPTI's own lookups of driver functions get the real ones: some of its driver calls run on
 * its own threads, where slack_tls_busy cannot mark them, and must never be recorded as the
 * program's. */
static int is_cupti(const struct link_map *m) {
  if (m == NULL || m->l_name == NULL) return 0;
  const char *base = strrchr(m->l_name, '/');
  base = base != NULL ? base + 1 : m->l_name;
  return strncmp(base, "libcupti", 8) == 0;
}

/* A driver name slack hooks, found at p for code at `caller`: what to hand out instead. */
static void *adopt(const char *name, void *p, void *caller) {
  struct link_map *own = own_map(), *from = map_of(caller), *at = map_of(p);
  /* libslack's own exports (cuLaunchKernel... defined for programs linked with -lcuda, found
   * first by RTLD_DEFAULT) already record; slack's own code asks for the real thing. */
  if (own != NULL && (at == own || from == own)) return p;
  if (is_cupti(from)) return p;
  if (is_get_proc_address(name)) {
    /* cudart looks up cuGetProcAddress as it initializes, before it creates any context:
     * tracing (CUPTI) must start now to see the first context. Not from a thread inside slack
     * (slack_start is not reentrant), and only once. */
    if (__atomic_load_n(&slack_state, __ATOMIC_ACQUIRE) == 0 && slack_tls_busy == 0) slack_start();
    /* Wrapped even on a busy thread: cudart may initialize inside the first recorded runtime
     * call, and every driver function it fetches comes through this pointer. */
    return slack_wrap_driver(name, p, 0, 0);
  }
  if (slack_tls_busy != 0) return p;
  return slack_wrap_driver(name, p, 0, 0);
}

/* The lookup of a hooked driver name (or any name, without the assembly entry). errno is left
 * as the program had it. */
static void *dlsym_hooked(void *handle, const char *name, void *caller) {
  dlsym_fn real = (dlsym_fn)slack_glibc_dlsym();
  if (real == NULL) return NULL;
  int saved = errno;
  void *p = lookup_for(handle, name, caller, real);
  if (p != NULL && name != NULL && slack_driver_hooks_name(name)) p = adopt(name, p, caller);
  errno = saved;
  return p;
}

#if defined(__x86_64__) && !defined(SLACK_DLSYM_NO_ASM)

/* Where the exported dlsym continues: glibc's dlsym itself for every name slack does not hook
 * (reached by a jump, so glibc sees the program's return address), else dlsym_hooked, which
 * also receives that return address as its third argument. Called only from the stub below. */
void *slack_dlsym_route(void *handle, const char *name) SLACK_HIDDEN __attribute__((used));
SLACK_NO_SANITIZE void *slack_dlsym_route(void *handle, const char *name) {
  (void)handle;
  dlsym_fn real = (dlsym_fn)slack_glibc_dlsym();
  if (real != NULL && (name == NULL || !slack_driver_hooks_name(name))) return (void *)real;
  return (void *)&dlsym_hooked;
}

/* dlsym(handle, name): keep both arguments, ask slack_dlsym_route (the stack aligned to 16 for
 * the call), restore them, load the return address (the program's call site) into the third
 * argument register, and jump: the callee returns straight to the program. endbr64 when the
 * object is built for CET, so that indirect calls to dlsym stay valid under IBT. */
#if defined(__CET__) && (__CET__ & 1)
#define SLACK_ENDBR "endbr64\n\t"
#else
#define SLACK_ENDBR ""
#endif
__asm__(".pushsection .text\n\t"
        ".globl dlsym\n\t"
        ".type dlsym, @function\n\t"
        ".p2align 4\n"
        "dlsym:\n\t"
        ".cfi_startproc\n\t" SLACK_ENDBR "pushq %rdi\n\t"
        ".cfi_adjust_cfa_offset 8\n\t"
        "pushq %rsi\n\t"
        ".cfi_adjust_cfa_offset 8\n\t"
        "subq $8, %rsp\n\t"
        ".cfi_adjust_cfa_offset 8\n\t"
        "call slack_dlsym_route\n\t"
        "addq $8, %rsp\n\t"
        ".cfi_adjust_cfa_offset -8\n\t"
        "popq %rsi\n\t"
        ".cfi_adjust_cfa_offset -8\n\t"
        "popq %rdi\n\t"
        ".cfi_adjust_cfa_offset -8\n\t"
        "movq (%rsp), %rdx\n\t"
        "jmp *%rax\n\t"
        ".cfi_endproc\n\t"
        ".size dlsym, .-dlsym\n\t"
        ".popsection");

#else

/* Portable entry: every lookup goes through the emulation above, with libslack as glibc's
 * caller. RTLD_NEXT and RTLD_DEFAULT follow the caller's link map as closely as the public
 * interface allows. */
SLACK_EXPORT void *dlsym(void *handle, const char *name) {
  return dlsym_hooked(handle, name, __builtin_return_address(0));
}

#endif

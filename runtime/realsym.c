/* The real definitions of the symbols libslack shadows (realsym.h): glibc's dlsym, found once
 * with dlvsym, and the CUDA functions the preload interposes. The one place that looks them up:
 * the wrappers (interpose/) and the runtime's own lookups of cudart, the driver, CUPTI and
 * Python all come here. */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>

#include "realsym.h"

#define SLACK_NO_SANITIZE_RS __attribute__((no_sanitize("address", "undefined", "thread")))

typedef void *(*dlsym_fn)(void *, const char *);

/* glibc 2.34 moved dlsym into libc under version GLIBC_2.34; older glibc has it in libdl under
 * the architecture's base version (which 2.34+ keeps as a compatibility alias). */
#if defined(__x86_64__)
#define DLSYM_BASE_VERSION "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define DLSYM_BASE_VERSION "GLIBC_2.17"
#endif

static dlsym_fn real_dlsym_fn;

/* glibc's dlsym. Not found with dlsym(RTLD_NEXT, "dlsym"): inside libslack that name binds to
 * our own exported hook (the preload comes first in the global scope), so the lookup would
 * recurse. dlvsym is not hooked and names the version explicitly. Resolved once; a race that
 * resolves it twice stores the same pointer twice. */
SLACK_NO_SANITIZE_RS static dlsym_fn get_real_dlsym(void) {
  dlsym_fn f = __atomic_load_n(&real_dlsym_fn, __ATOMIC_RELAXED);
  if (__builtin_expect(f == NULL, 0)) {
    int saved = errno;
    f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
#ifdef DLSYM_BASE_VERSION
    if (f == NULL) f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", DLSYM_BASE_VERSION);
#endif
    errno = saved;
    if (f != NULL) __atomic_store_n(&real_dlsym_fn, f, __ATOMIC_RELAXED);
  }
  return f;
}

/* Called from inside libslack, so RTLD_NEXT means "after libslack", RTLD_DEFAULT the global
 * scope: what slack itself wants. */
void *slack_real_dlsym(void *handle, const char *name) {
  dlsym_fn f = get_real_dlsym();
  return f != NULL ? f(handle, name) : NULL;
}

/* RTLD_NEXT from libslack finds the definition the preload shadows when the library sits in the
 * global scope. A library loaded with RTLD_LOCAL (a Python extension's cudart, for one) is not
 * searched by RTLD_NEXT, but it is still loaded: dlopen(RTLD_NOLOAD) hands out its handle
 * without loading anything. Nothing is cached here; the wrappers keep what they resolve. */
void *slack_real_symbol(const char *name, const char *lib) {
  dlsym_fn f = get_real_dlsym();
  if (f == NULL) return NULL;
  int saved = errno;
  void *p = f(RTLD_NEXT, name);
  if (p == NULL && lib != NULL) {
    void *h = dlopen(lib, RTLD_NOLOAD | RTLD_LAZY);
    if (h != NULL) {
      p = f(h, name);
      dlclose(h);
    }
  }
  errno = saved;
  return p;
}

void *slack_glibc_dlsym(void) { return (void *)get_real_dlsym(); }

/* runtime/realsym.c: how slack finds what it shadows. */
#ifndef SLACK_REALSYM_H
#define SLACK_REALSYM_H

#define SLACK_RS_HIDDEN __attribute__((visibility("hidden")))

/* The real dlsym (never slack's hook), and the real definition of a CUDA symbol that the
 * preload shadows: dlsym(RTLD_NEXT), else dlopen(lib, RTLD_NOLOAD). NULL if absent. */
void *slack_real_dlsym(void *handle, const char *name) SLACK_RS_HIDDEN;
void *slack_real_symbol(const char *name, const char *lib) SLACK_RS_HIDDEN;
/* glibc's dlsym itself (a dlsym_fn), NULL when not found: for the dlsym hook's routing. */
void *slack_glibc_dlsym(void) SLACK_RS_HIDDEN;

#endif

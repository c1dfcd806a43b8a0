/* Call sites and Python stacks named once each, as string ids of the trace (writer_int.h). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer_int.h"

/* string-id caches (writer thread only): a call site's return address, a Python stack's key
 * (runtime/pyframes.c) -> the string id that names it */
struct idmap_slot {
  uint64_t key;
  uint32_t id;
};
struct idmap {
  struct idmap_slot *v;
  size_t cap, n;
};
static struct idmap sites, pystacks;

/* "symbol+0xoff (lib)", "lib+0xoff" or "0xaddr" into buf; its length (cut to cap - 1). */
static size_t fmt_addr(char *buf, size_t cap, uint64_t addr) {
  Dl_info di;
  int w;
  if (dladdr((void *)(uintptr_t)addr, &di) && di.dli_fname) {
    const char *lib = strrchr(di.dli_fname, '/');
    lib = lib ? lib + 1 : di.dli_fname;
    if (!*lib) lib = "exe";
    if (di.dli_sname)
      w = snprintf(buf, cap, "%s+0x%lx (%s)", di.dli_sname,
                   (unsigned long)(addr - (uint64_t)(uintptr_t)di.dli_saddr), lib);
    else
      w = snprintf(buf, cap, "%s+0x%lx", lib,
                   (unsigned long)(addr - (uint64_t)(uintptr_t)di.dli_fbase));
  } else {
    w = snprintf(buf, cap, "0x%lx", (unsigned long)addr);
  }
  return w < 0 ? 0 : (size_t)w < cap ? (size_t)w : cap - 1;
}

/* The slot of key in m (its id 0 when absent), or NULL when the map cannot grow. */
static struct idmap_slot *idmap_find(struct idmap *m, uint64_t key) {
  if (2 * (m->n + 1) > m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 1024;
    struct idmap_slot *n = calloc(cap, sizeof *n);
    if (!n) return NULL;
    for (size_t i = 0; i < m->cap; i++) {
      if (!m->v[i].key) continue;
      size_t j = (m->v[i].key * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);
      while (n[j].key)
        j = (j + 1) & (cap - 1);
      n[j] = m->v[i];
    }
    free(m->v);
    m->v = n;
    m->cap = cap;
  }
  size_t i = (key * 0x9e3779b97f4a7c15ull >> 20) & (m->cap - 1);
  while (m->v[i].key && m->v[i].key != key)
    i = (i + 1) & (m->cap - 1);
  if (!m->v[i].key) {
    m->v[i].key = key;
    m->v[i].id = 0;
    m->n++;
  }
  return &m->v[i];
}

uint32_t wr_site_id(uint64_t addr) {
  if (!addr || wr_failed) return 0;
  struct idmap_slot *sl = idmap_find(&sites, addr);
  if (!sl) return 0;
  if (sl->id) return sl->id;
  /* the immediate caller of the CUDA call, then, one per line, the frames of its stack that
   * runtime/stacks.c took (FORMAT.md: HOST callsite) */
  char buf[4096];
  size_t len = fmt_addr(buf, sizeof buf, addr);
  size_t nf = 0;
  const uint64_t *fr = slack_stack_of(addr, &nf);
  for (size_t k = 1; fr && k < nf && len + 2 < sizeof buf; k++) {
    buf[len++] = '\n';
    len += fmt_addr(buf + len, sizeof buf - len, fr[k]);
  }
  sl->id = wr_intern(buf);
  return sl->id;
}

/* The Python frames of the call (runtime/pyframes.c), named once per stack. A stack whose text
 * is not published (its table was full) is named 0 and asked again next time. */
uint32_t wr_pystack_id(uint64_t key) {
  if (!key || wr_failed) return 0;
  struct idmap_slot *sl = idmap_find(&pystacks, key);
  if (!sl) return 0;
  if (!sl->id) sl->id = wr_intern(slack_py_text(key));
  return sl->id;
}

void wr_names_forget(void) {
  sites = (struct idmap){0};
  pystacks = (struct idmap){0};
}

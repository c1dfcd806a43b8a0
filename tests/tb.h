/* A hand-built trace for the classifier's unit tests (tests/test_classify.c,
 * tests/test_steps_random.c): records added one by one, times in microseconds, strings interned
 * by copy (a name made in a buffer stays valid). */
#ifndef SLACK_TESTS_TB_H
#define SLACK_TESTS_TB_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "reader.h"

#define TB_STRINGS 512
#define TB_ARENA 65536

struct tb {
  struct trace_data td;
  const char *str[TB_STRINGS];
  uint32_t nstr;
  uint32_t corr;
  size_t used;
  char arena[TB_ARENA];
};

static inline const char *tb_str(const void *ctx, uint32_t id) {
  const struct tb *t = ctx;
  return id && id <= t->nstr ? t->str[id - 1] : "?";
}

/* s's string id in t (1-based), interned */
static inline uint32_t S(struct tb *t, const char *s) {
  for (uint32_t i = 0; i < t->nstr; i++)
    if (!strcmp(t->str[i], s)) return i + 1;
  size_t len = strlen(s) + 1;
  if (t->nstr >= TB_STRINGS || t->used + len > TB_ARENA) {
    fprintf(stderr, "tb: too many strings\n");
    exit(2);
  }
  memcpy(t->arena + t->used, s, len);
  t->str[t->nstr++] = t->arena + t->used;
  t->used += len;
  return t->nstr;
}

static inline void add(struct tb *t, struct slk_record r) {
  if (trace_data_add(&t->td, &r)) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
}

/* A host call on thread tid over [s, e] us; returns its correlation id (0 when !submits). */
static inline uint32_t call(struct tb *t, uint64_t tid, double s, double e, uint32_t fn,
                            int submits, uint8_t copy_kind, const char *site) {
  uint32_t corr = submits ? ++t->corr : 0;
  add(t, (struct slk_record){.kind = SLK_HOST,
                             .tid = tid,
                             .start = (uint64_t)(s * 1000),
                             .end = (uint64_t)(e * 1000),
                             .fn = fn,
                             .copy_kind = copy_kind,
                             .callsite = site ? S(t, site) : 0,
                             .corr = corr,
                             .flags = slk_fn_is_sync(fn) ? SLK_HOST_SYNCHRONOUS : 0});
  return corr;
}

static inline void tb_free(struct tb *t) { trace_data_free(&t->td); }

#endif

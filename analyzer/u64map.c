#include "u64map.h"

#include <stdlib.h>
#include <string.h>

size_t u64map_add(struct u64map *m, uint64_t key) {
  if (m->has_last && m->last == key) return m->last_slot;
  if (2 * (m->n + 1) > m->cap) {
    struct u64map g = {0};
    g.cap = m->cap ? 2 * m->cap : 64;
    g.key = malloc(g.cap * sizeof *g.key);
    g.val = malloc(g.cap * sizeof *g.val);
    g.used = calloc(g.cap, 1);
    if (!g.key || !g.val || !g.used) {
      free(g.key);
      free(g.val);
      free(g.used);
      return (size_t)-1;
    }
    for (size_t i = 0; i < m->cap; i++)
      if (m->used[i]) {
        size_t j = u64map_slot(&g, m->key[i]);
        g.used[j] = 1;
        g.key[j] = m->key[i];
        g.val[j] = m->val[i];
      }
    g.n = m->n;
    free(m->key);
    free(m->val);
    free(m->used);
    *m = g; /* the last-key cache is dropped with the old slots */
  }
  size_t i = u64map_slot(m, key);
  if (!m->used[i]) {
    m->used[i] = 1;
    m->key[i] = key;
    m->val[i] = 0;
    m->n++;
  }
  m->last = key;
  m->last_slot = i;
  m->has_last = 1;
  return i;
}

void u64map_free(struct u64map *m) {
  free(m->key);
  free(m->val);
  free(m->used);
  memset(m, 0, sizeof *m);
}

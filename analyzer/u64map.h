/* A hash map from 64-bit keys to 64-bit values (threads, devices, streams, string ids), open
 * addressing, grown at half load. One map per use; not thread-safe. */
#ifndef SLACK_U64MAP_H
#define SLACK_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct u64map {
  uint64_t *key;
  uint64_t *val;
  uint8_t *used;
  size_t n, cap;
  uint64_t last; /* the last key added: records come in runs of one thread or stream */
  size_t last_slot;
  int has_last;
};

/* The slot where key is or would go (cap must be non-zero); used[slot] says which. Inline, with
 * u64map_get: the analyzer's loops look up a key per record. */
static inline size_t u64map_slot(const struct u64map *m, uint64_t key) {
  size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 24) & (m->cap - 1);
  while (m->used[i] && m->key[i] != key)
    i = (i + 1) & (m->cap - 1);
  return i;
}
/* The slot of key, added with value 0 when new; (size_t)-1 when out of memory. */
size_t u64map_add(struct u64map *m, uint64_t key);
/* 1 and *val when key is present, else 0. */
static inline int u64map_get(const struct u64map *m, uint64_t key, uint64_t *val) {
  if (!m->cap) return 0;
  size_t i = u64map_slot(m, key);
  if (!m->used[i]) return 0;
  *val = m->val[i];
  return 1;
}
void u64map_free(struct u64map *m);

#endif

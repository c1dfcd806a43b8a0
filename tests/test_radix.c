/* analyzer/radix.c and the reader's trace_data_sort against the comparison sorts they replace:
 * random keys with many ties, several key words, and records with equal starts, ends and
 * correlation ids, where only stability decides the order. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "radix.h"
#include "reader.h"

static int failures, checks;
#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    checks++;                                                                                      \
    if (!(cond)) {                                                                                 \
      failures++;                                                                                  \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);                     \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fputc('\n', stderr);                                                                         \
      if (failures > 20) exit(1);                                                                  \
    }                                                                                              \
  } while (0)

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545f4914f6cdd1dull;
}

#define NW 3
static uint64_t (*keys)[NW];
static uint64_t key_of(const void *ctx, size_t i, int w) {
  (void)ctx;
  return keys[i][w];
}
static int cmp_ref(const void *pa, const void *pb) {
  size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
  for (int w = 0; w < NW; w++)
    if (keys[a][w] != keys[b][w]) return keys[a][w] < keys[b][w] ? -1 : 1;
  return a < b ? -1 : a > b;
}

/* keys whose words vary in few bytes, in all bytes, or not at all */
static uint64_t draw(int style) {
  switch (style) {
  case 0: return rnd() % 4;                               /* many ties */
  case 1: return 1700000000000000000ull + rnd() % 100000; /* timestamps: high bytes constant */
  case 2: return rnd();                                   /* every byte varies */
  default: return 42;                                     /* constant */
  }
}

static void test_ix(void) {
  for (int round = 0; round < 60; round++) {
    size_t n = round < 10 ? (size_t)round : 1 + rnd() % 20000;
    keys = malloc((n ? n : 1) * sizeof *keys);
    size_t *ix = malloc((n ? n : 1) * sizeof *ix), *ref = malloc((n ? n : 1) * sizeof *ref);
    int style[NW] = {(int)(rnd() % 4), (int)(rnd() % 4), (int)(rnd() % 4)};
    for (size_t i = 0; i < n; i++) {
      for (int w = 0; w < NW; w++)
        keys[i][w] = draw(style[w]);
      ix[i] = ref[i] = i;
    }
    int rc = radix_sort_ix(ix, n, NW, key_of, NULL);
    qsort(ref, n, sizeof *ref, cmp_ref);
    CHECK(rc == 0 && (n == 0 || !memcmp(ix, ref, n * sizeof *ix)),
          "round %d: %zu items (styles %d %d %d) in the order of a stable comparison sort", round,
          n, style[0], style[1], style[2]);
    free(keys);
    free(ix);
    free(ref);
  }
}

static int cmp_u64(const void *pa, const void *pb) {
  uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
  return a < b ? -1 : a > b;
}

static void test_u64(void) {
  for (int round = 0; round < 30; round++) {
    size_t n = 1 + rnd() % 30000;
    uint64_t *v = malloc(n * sizeof *v), *ref = malloc(n * sizeof *ref);
    for (size_t i = 0; i < n; i++)
      v[i] = ref[i] = draw(round % 4);
    radix_sort_u64(v, n);
    qsort(ref, n, sizeof *ref, cmp_u64);
    CHECK(!memcmp(v, ref, n * sizeof *v), "round %d: %zu values sorted", round, n);
    free(v);
    free(ref);
  }
}

/* select_u64: the value a sort puts at k, for every kind of input: small, ties, sorted and
 * reversed runs (a median-of-three's bad cases), an organ pipe, and k at both ends */
static void test_select(void) {
  for (int round = 0; round < 120; round++) {
    size_t n = round < 20 ? 1 + (size_t)round : 1 + rnd() % 40000;
    uint64_t *v = malloc(n * sizeof *v), *ref = malloc(n * sizeof *ref);
    int shape = round % 6;
    for (size_t i = 0; i < n; i++) {
      uint64_t x = shape == 4   ? (uint64_t)i                       /* sorted */
                   : shape == 5 ? (uint64_t)(i < n / 2 ? i : n - i) /* organ pipe */
                                : draw(shape);
      v[i] = ref[i] = round % 12 == 11 ? n - i : x; /* reversed */
    }
    qsort(ref, n, sizeof *ref, cmp_u64);
    size_t k = round % 3 == 0 ? n / 2 : round % 3 == 1 ? 0 : n - 1;
    uint64_t got = select_u64(v, n, k);
    /* nothing lost: v is still a permutation of the input */
    qsort(v, n, sizeof *v, cmp_u64);
    CHECK(got == ref[k] && !memcmp(v, ref, n * sizeof *v),
          "round %d: the %zu-th of %zu values (shape %d) is %llu, as sorted (got %llu)", round, k,
          n, shape, (unsigned long long)ref[k], (unsigned long long)got);
    free(v);
    free(ref);
  }
}

/* trace_data_sort: by (start, end, corr), equal records in the order they were added (the
 * order glibc's merge sort, which it replaced, gave); the records' tid says which was first */
static void test_trace_data(void) {
  for (int round = 0; round < 20; round++) {
    struct trace_data td;
    memset(&td, 0, sizeof td);
    size_t n = 1 + rnd() % 50000;
    int nearly = round % 2; /* nearly sorted (runs of host threads), or shuffled */
    int added = 1;
    for (size_t i = 0; i < n; i++) {
      struct slk_record r = {.kind = SLK_HOST, .tid = i};
      r.start = nearly ? i * 10 - rnd() % 30 * (i > 3) : rnd() % 1000;
      r.end = r.start + rnd() % 3;
      r.corr = (uint32_t)(rnd() % 2);
      added &= trace_data_add(&td, &r) == 0;
    }
    CHECK(added, "round %d: %zu records added", round, n);
    trace_data_sort(&td);
    const struct trace_array *a = &td.kind[SLK_HOST];
    int ordered = a->n == n;
    for (size_t i = 1; ordered && i < a->n; i++) {
      const struct slk_record *p = &a->v[i - 1], *q = &a->v[i];
      if (p->start != q->start)
        ordered = p->start < q->start;
      else if (p->end != q->end)
        ordered = p->end < q->end;
      else if (p->corr != q->corr)
        ordered = p->corr < q->corr;
      else
        ordered = p->tid < q->tid; /* stable */
    }
    /* nothing lost or doubled: the tids are a permutation of 0..n-1 */
    uint8_t *seen = calloc(n, 1);
    for (size_t i = 0; ordered && i < a->n; i++)
      ordered = a->v[i].tid < n && !seen[a->v[i].tid]++;
    free(seen);
    CHECK(ordered, "round %d: %zu records sorted stably by (start, end, corr)", round, n);
    trace_data_free(&td);
  }
}

int main(void) {
  test_ix();
  test_u64();
  test_select();
  test_trace_data();
  printf("test_radix: %d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}

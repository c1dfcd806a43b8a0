/* Stable LSD radix sorts (radix.h). */
#include "radix.h"

#include <stdlib.h>
#include <string.h>

struct rk {
  uint64_t key;
  size_t ix;
};

/* Sorts a[0..n) by key, stably, 8 bits a pass; passes whose byte is the same in every key are
 * skipped. b is scratch of n items. Returns the array that holds the result (a or b). */
static struct rk *radix_pass(struct rk *a, struct rk *b, size_t n) {
  size_t count[8][256];
  memset(count, 0, sizeof count);
  for (size_t i = 0; i < n; i++)
    for (int d = 0; d < 8; d++)
      count[d][(a[i].key >> (8 * d)) & 0xff]++;
  for (int d = 0; d < 8; d++) {
    if (count[d][(a[0].key >> (8 * d)) & 0xff] == n) continue;
    size_t sum = 0;
    for (int k = 0; k < 256; k++) {
      size_t c = count[d][k];
      count[d][k] = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; i++)
      b[count[d][(a[i].key >> (8 * d)) & 0xff]++] = a[i];
    struct rk *t = a;
    a = b;
    b = t;
  }
  return a;
}

static int bits_of(uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

int radix_sort_ix(size_t *ix, size_t n, int nw, radix_key_fn key, const void *ctx) {
  if (n < 2) return 0;
  struct rk *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  if (!a || !b) {
    free(a);
    free(b);
    return -1;
  }
  /* Words that vary little (an input, a GPU, a thread or stream id, times within a window) are
   * packed into one 64-bit key when their ranges fit: each word less its minimum, the first word
   * in the highest bits, compares as the words do in order; then one round of passes instead of
   * one per word. */
  uint64_t *kw = nw >= 1 && nw <= 4 ? malloc(n * (size_t)nw * sizeof *kw) : NULL;
  if (kw) {
    uint64_t lo[4], hi[4];
    for (int w = 0; w < nw; w++)
      lo[w] = hi[w] = key(ctx, ix[0], w);
    for (size_t i = 0; i < n; i++)
      for (int w = 0; w < nw; w++) {
        uint64_t k = kw[i * (size_t)nw + (size_t)w] = key(ctx, ix[i], w);
        if (k < lo[w]) lo[w] = k;
        if (k > hi[w]) hi[w] = k;
      }
    int bits[4], total = 0;
    for (int w = 0; w < nw; w++)
      total += bits[w] = bits_of(hi[w] - lo[w]);
    int ib = bits_of(n - 1);
    if (total + ib <= 64 && n <= UINT32_MAX) {
      /* the position in ix fits too: it goes below the key, and the passes move 8-byte words
       * by 11-bit digits of the key alone (stable: equal keys stay in position order) */
      uint64_t *p = (uint64_t *)a, *q = p + n; /* a holds 2n words */
      for (size_t i = 0; i < n; i++) {
        uint64_t k = 0;
        for (int w = 0; w < nw; w++)
          k = (bits[w] < 64 ? k << bits[w] : 0) | (kw[i * (size_t)nw + (size_t)w] - lo[w]);
        p[i] = (ib < 64 ? k << ib : 0) | i;
      }
      free(kw);
      enum { DIGIT = 11, DIGITS = (64 + DIGIT - 1) / DIGIT };
      const uint64_t dmask = (1u << DIGIT) - 1;
      int nd = (total + DIGIT - 1) / DIGIT;
      uint32_t count[DIGITS][1 << DIGIT]; /* 48 KiB */
      memset(count, 0, (size_t)nd * sizeof count[0]);
      for (size_t i = 0; i < n; i++)
        for (int d = 0; d < nd; d++)
          count[d][(p[i] >> (ib + DIGIT * d)) & dmask]++;
      for (int d = 0; d < nd; d++) {
        int sh = ib + DIGIT * d;
        if (count[d][(p[0] >> sh) & dmask] == n) continue; /* one value: nothing to do */
        uint32_t sum = 0;
        for (size_t k = 0; k <= dmask; k++) {
          uint32_t c = count[d][k];
          count[d][k] = sum;
          sum += c;
        }
        for (size_t i = 0; i < n; i++)
          q[count[d][(p[i] >> sh) & dmask]++] = p[i];
        uint64_t *t = p;
        p = q;
        q = t;
      }
      size_t *orig = (size_t *)b;
      memcpy(orig, ix, n * sizeof *orig);
      uint64_t imask = ib < 64 ? (1ull << ib) - 1 : ~0ull;
      for (size_t i = 0; i < n; i++)
        ix[i] = orig[p[i] & imask];
      free(a);
      free(b);
      return 0;
    }
    if (total <= 64) {
      for (size_t i = 0; i < n; i++) {
        uint64_t k = 0;
        for (int w = 0; w < nw; w++)
          k = (bits[w] < 64 ? k << bits[w] : 0) | (kw[i * (size_t)nw + (size_t)w] - lo[w]);
        a[i].key = k;
        a[i].ix = ix[i];
      }
      free(kw);
      struct rk *r = radix_pass(a, b, n);
      for (size_t i = 0; i < n; i++)
        ix[i] = r[i].ix;
      free(a);
      free(b);
      return 0;
    }
    free(kw);
  }
  /* least significant word first: each round is stable, so the last decides and earlier
   * rounds break its ties */
  for (int w = nw - 1; w >= 0; w--) {
    for (size_t i = 0; i < n; i++) {
      a[i].key = key(ctx, ix[i], w);
      a[i].ix = ix[i];
    }
    struct rk *r = radix_pass(a, b, n);
    for (size_t i = 0; i < n; i++)
      ix[i] = r[i].ix;
  }
  free(a);
  free(b);
  return 0;
}

int radix_sort_u64(uint64_t *v, size_t n) {
  if (n < 2) return 0;
  uint64_t *b = malloc(n * sizeof *b);
  if (!b) return -1;
  /* the values less their minimum, by 11-bit digits of the bits that vary: 8-byte words moved,
   * not 16-byte items */
  uint64_t lo = v[0], hi = v[0];
  for (size_t i = 0; i < n; i++) {
    if (v[i] < lo) lo = v[i];
    if (v[i] > hi) hi = v[i];
  }
  enum { DIGIT = 11 };
  const uint64_t dmask = (1u << DIGIT) - 1;
  int bits = bits_of(hi - lo);
  uint64_t *p = v, *q = b;
  for (int sh = 0; sh < bits; sh += DIGIT) {
    size_t count[1 << DIGIT];
    memset(count, 0, sizeof count);
    for (size_t i = 0; i < n; i++)
      count[((p[i] - lo) >> sh) & dmask]++;
    size_t sum = 0;
    for (size_t k = 0; k <= dmask; k++) {
      size_t c = count[k];
      count[k] = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; i++)
      q[count[((p[i] - lo) >> sh) & dmask]++] = p[i];
    uint64_t *t = p;
    p = q;
    q = t;
  }
  if (p != v) memcpy(v, p, n * sizeof *v);
  free(b);
  return 0;
}

static int cmp_u64_asc(const void *pa, const void *pb) {
  uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
  return (a > b) - (a < b);
}

/* Quickselect (Hoare's partition, the pivot a median of three); a range that has not shrunk
 * fast enough (2 log2 n rounds: input built against the pivot rule) is sorted instead, so the
 * worst case stays n log n. */
uint64_t select_u64(uint64_t *v, size_t n, size_t k) {
  size_t lo = 0, hi = n - 1, rounds = 0, limit = 2;
  for (size_t m = n; m > 1; m >>= 1)
    limit += 2;
  while (hi > lo) {
    if (hi - lo < 16 || ++rounds > limit) {
      size_t m = hi - lo + 1;
      if (m < 64 || radix_sort_u64(v + lo, m)) qsort(v + lo, m, sizeof *v, cmp_u64_asc);
      return v[k];
    }
    size_t mid = lo + (hi - lo) / 2;
    uint64_t a = v[lo], b = v[mid], c = v[hi];
    uint64_t pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
    size_t i = lo, j = hi;
    for (;;) {
      while (v[i] < pivot)
        i++;
      while (v[j] > pivot)
        j--;
      if (i >= j) break;
      uint64_t t = v[i];
      v[i] = v[j];
      v[j] = t;
      i++;
      j--;
    }
    /* v[lo..j] <= pivot <= v[j+1..hi] */
    if (k <= j)
      hi = j;
    else
      lo = j + 1;
  }
  return v[k];
}

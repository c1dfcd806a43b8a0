/* Stable LSD radix sorts for the analyzer's big arrays: the same order as a comparison sort
 * whose last tie-break is the original position, at a few passes over 16-byte keys instead of
 * n log n comparisons that chase pointers (qsort spent a quarter of `slack report`). */
#ifndef SLACK_RADIX_H
#define SLACK_RADIX_H

#include <stddef.h>
#include <stdint.h>

/* Word w (0 = the most significant) of the sort key of item i. */
typedef uint64_t (*radix_key_fn)(const void *ctx, size_t i, int w);

/* Sorts ix[0..n) (item numbers) by the words 0..nw-1 of their keys, stably: items with equal
 * keys keep their order in ix. 0, or -1 when out of memory (ix is then untouched). */
int radix_sort_ix(size_t *ix, size_t n, int nw, radix_key_fn key, const void *ctx);

/* Sorts v[0..n) ascending. 0, or -1 when out of memory (v is then untouched). */
int radix_sort_u64(uint64_t *v, size_t n);

/* The k-th smallest of v[0..n) (k < n; k = n / 2: the median the analyzer takes everywhere), the
 * value a sort would put at v[k], in linear time on average: v is reordered, not sorted. */
uint64_t select_u64(uint64_t *v, size_t n, size_t k);

#endif

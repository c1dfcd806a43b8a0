/* The launch join counted over a trace of any length in bounded memory (`slack info`): how many
 * kernels join to their launching host call, as launch_join_count over the whole trace counts
 * them (join.h), without holding a span per API record and host call.
 *
 * The first pass (the caller's reading of the file, record by record) keeps, per correlation id,
 * one byte: the kernels that carry it (and whether in a CUDA graph) and whether a host call
 * carries it (the direct join); and an index of the file's chunks (where their API records and
 * host calls start and end). Then the time join of the API records, only for ids whose kernels
 * are not joined yet: window by window over the API records' starts, each window reading the
 * chunks that overlap it, with the host calls that can fall on its API records and, per thread,
 * the last call that ended before it (what bounds the join's look back). Memory: the window's
 * spans, the chunk index and a byte per correlation id of a slice of ids (2^27 by default; the
 * ids past it in further rounds, each reading the file again). */
#ifndef SLACK_LAUNCHES_H
#define SLACK_LAUNCHES_H

#include "join.h"

struct launches;

/* A counter for one trace, with the sizes of SLACK_INFO_WINDOW_SPANS and SLACK_INFO_CORR_SLICE
 * (docs/ENVIRONMENT.md) where set; NULL when out of memory. */
struct launches *launches_new(void);
/* Each record of the first pass, whole, in file order, while rd delivers it. 0, or -1 when out
 * of memory (then launches_finish fails too). */
int launches_record(struct launches *L, const struct trace_reader *rd, const struct slk_record *r);
/* After the first pass: lj's kernels, joined, graph_kernels and graph_joined as launch_join_count
 * of every kernel over a join_set of every API record and host call would count them (no_api,
 * no_host and by_order stay 0). Reads rd again by chunks. 0, -1 when out of memory, -2 when a
 * chunk could not be read again. */
int launches_finish(struct launches *L, struct trace_reader *rd, struct launch_join *lj);
void launches_free(struct launches *L);

#endif

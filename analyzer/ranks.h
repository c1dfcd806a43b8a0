/* The multi-rank report (docs/slack-report.md, "Several ranks"): `slack report DIR`, or the
 * files of several ranks of one job, as one report across ranks.
 *
 * Streaming: one rank's trace is loaded and classified at a time (report_load on its file) and
 * reduced to a summary and one compact record per collective (NCCL kernel: its start, its end and
 * the rank's classified time since its previous collective); then the collectives are matched
 * across ranks (per communication stream, by name and order), the hosts' clocks aligned on the
 * collectives' ends, and for each collective the last rank to arrive and the others' wait are
 * found. Memory: one rank's trace, plus 96 bytes per collective per rank.
 */
#ifndef SLACK_RANKS_H
#define SLACK_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "classify.h"

struct report;

/* The arguments of `slack report` with every directory replaced by its *.slk files in name
 * order: *out (NULL-terminated, free with ranks_free_paths) and *nout. EXIT_OK, or EXIT_ERROR
 * (said on stderr as "slack CMD: ...": a directory without traces, no memory). */
int ranks_expand(const char *cmd, char *const *args, size_t n, char ***out, size_t *nout);
void ranks_free_paths(char **paths, size_t n);

/* 1 when paths are the traces of at least two distinct ranks (header "rank"), else 0 (a file
 * that does not open is 0: report_load says why). */
int ranks_detect(char *const *paths, size_t n);

/* The report across ranks on stdout, text or JSON (top: collectives listed with the longest
 * waits). merge_ok: --merge (files of different job ids are then taken as one job). Returns an
 * exit code: EXIT_OK, EXIT_USAGE (files of different jobs, a rank given twice), EXIT_ERROR. */
int ranks_report(char *const *paths, size_t n, const struct cls_options *opt, int as_json,
                 int merge_ok, size_t top);

/* GPU gi of rp: the time its collective kernels (NCCL) ran, as a union of intervals; the
 * classifier's `communication` is its exposed part (no compute kernel running alongside). */
uint64_t ranks_comm_kernel_ns(const struct report *rp, size_t gi);

#endif

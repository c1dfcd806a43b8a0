/* The writer's parts, all on the writer thread (writer.c owns the file and the loop):
 *   writer_names.c  call sites and Python stacks named once, as string ids
 *   writer_join.c   host calls waiting for their CUPTI API records (the join), then written
 *   writer_cupti.c  CUPTI's activity records as trace records */
#ifndef SLACK_WRITER_INT_H
#define SLACK_WRITER_INT_H

#include <cupti.h>
#include <stdint.h>

#include "format.h"
#include "hook.h"
#include "ring.h"

#define WR_HIDDEN __attribute__((visibility("hidden")))

/* writer.c */
extern int wr_failed WR_HIDDEN; /* a write failed or the size cap: records are discarded */
void wr_add(const struct slk_record *r) WR_HIDDEN;
uint32_t wr_intern(const char *s) WR_HIDDEN;
void wr_drop_record(uint64_t tid, uint64_t n, uint32_t where) WR_HIDDEN;

/* writer_names.c */
uint32_t wr_site_id(uint64_t addr) WR_HIDDEN;
uint32_t wr_pystack_id(uint64_t key) WR_HIDDEN;
void wr_names_forget(void) WR_HIDDEN;

/* writer_join.c: a host call waiting for its API record */
struct pend {
  struct slack_event e;
  uint32_t corr;
};
struct pend_q {
  uint64_t tid;
  struct pend *v;
  size_t head, n, cap; /* live entries are v[head..n) */
};
extern uint64_t wr_pend_horizon WR_HIDDEN; /* host calls ending before this met their API records */
void wr_pend_push(uint64_t tid, const struct slack_event *e) WR_HIDDEN;
void wr_pend_write(uint64_t until) WR_HIDDEN;
struct pend *wr_pend_find(uint64_t tid, uint64_t start, uint64_t end) WR_HIDDEN;
void wr_encode_marker(uint64_t tid, const struct slack_event *e) WR_HIDDEN;
void wr_encode_probe(uint64_t tid, const struct slack_event *e) WR_HIDDEN;
void wr_join_forget(void) WR_HIDDEN;

/* writer_cupti.c */
void wr_encode_cupti(const CUpti_Activity *a) WR_HIDDEN;
void wr_sync_flush(void) WR_HIDDEN; /* the SYNC record wr_encode_cupti holds, written */
void wr_cupti_forget(void) WR_HIDDEN;
/* SLACK_WINDOW_DETACH: the GPU work of the windows that has not come home, as correlation ids
 * (a host call that submitted work and met its API record, whose kernel, copy or memset record
 * has not come); wr_gpu_track turns the count on, wr_gpu_forget empties it (CUPTI detached). */
extern int wr_gpu_track WR_HIDDEN;
size_t wr_gpu_outstanding(void) WR_HIDDEN;
/* A host call waits for its API record (writer_join.c); counted when it submitted GPU work. */
void wr_gpu_submitted(const struct slack_event *e) WR_HIDDEN;
void wr_gpu_forget(void) WR_HIDDEN;

#endif

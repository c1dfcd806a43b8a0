/* The CUPTI client: dlopened at start (never linked), activity kinds enabled, completed buffers
 * handed to the writer. CUPTI's buffer-completed callback only queues the buffer. */
#ifndef SLACK_CUPTI_H
#define SLACK_CUPTI_H

#include <stddef.h>
#include <stdint.h>

#define SLACK_HIDDEN_ __attribute__((visibility("hidden")))

/* A completed activity buffer, owned by whoever took it from the queue. */
struct cupti_buf {
  struct cupti_buf *next;
  uint8_t *data;
  size_t valid;  /* bytes of records */
  uint64_t lost; /* records CUPTI dropped for this buffer's context/stream */
};

/* Loads CUPTI and attaches it without enabling any kind (once; cupti_start does it if nobody
 * did): SLACK_DELAY_MS calls it at the first CUDA call, so that CUPTI is there before cudart
 * initializes (CUPTI attached later sees no runtime API calls: no kernel joins its launch).
 * 0, or -1 when CUPTI cannot be used (cupti_start then says why). */
int cupti_prepare(void) SLACK_HIDDEN_;
/* Loads CUPTI (if cupti_prepare has not) and enables the activity kinds. 0 on success; otherwise -1
 * and `why` says what could not be recorded (the caller says it once on stderr). `version_out` gets
 * cuptiGetVersion()'s answer (0 if CUPTI was not found). */
int cupti_start(char *why, size_t why_len, uint32_t *version_out) SLACK_HIDDEN_;
/* Asks CUPTI to hand over every buffer (forced: also the ones still being filled). */
void cupti_flush(int forced) SLACK_HIDDEN_;
/* 1 while CUPTI API records are being collected (host events then wait for them). */
int cupti_api_records_on(void) SLACK_HIDDEN_;
/* 1 while CUPTI's kernel records are on and were when the call that began at t0 began: its GPU
 * work has records (SLK_HOST_CUPTI_ON) */
int cupti_gpu_records_live(uint64_t t0) SLACK_HIDDEN_;
/* The stream map (streams.c). The attach epoch: non-zero while CUPTI records (its low
 * SLACK_EPOCH_BITS never 0), a new one at each attach; 0 while it does not. */
#define SLACK_EPOCH_BITS 23
#define SLACK_EPOCH_MASK ((1u << SLACK_EPOCH_BITS) - 1)
uint32_t cupti_attach_epoch(void) SLACK_HIDDEN_;
/* Stream handles 0 (legacy), 1 (CU_STREAM_LEGACY), 2 (CU_STREAM_PER_THREAD) name a stream of the
 * current context (and thread). */
#define SLACK_STREAM_HANDLE_PER_THREAD 2u
/* CUPTI's stream id (*sid) and device (*dev, from ctx: the calling thread's current context) of
 * stream handle `handle` (as a HOST record carries it), asked of CUPTI (cuptiGetStreamIdEx)
 * while it is attached in `epoch`. Never waits. 0; 1 when CUPTI is busy, detached or attached
 * again since (ask later); -1 when CUPTI cannot say (said once on stderr). */
int cupti_stream_id(void *ctx, uint64_t handle, uint32_t epoch, uint32_t *sid,
                    uint32_t *dev) SLACK_HIDDEN_;
/* Disables the activity kinds (tracing stopped). */
void cupti_stop(void) SLACK_HIDDEN_;
/* 1 while CUPTI records kernels (started, not stopped). */
int cupti_kernel_records_on(void) SLACK_HIDDEN_;
/* runtime/probe.c: turns every per-call record of CUPTI (kernels, copies, memsets, syncs,
 * overhead, API records) off (0) or back on (1). 0, or -1 when CUPTI is not recording or
 * refused. */
int cupti_probe_records(int on) SLACK_HIDDEN_;
/* runtime/probe.c: turns CUPTI's API records (the RUNTIME and DRIVER kinds) off (0) or back on (1),
 * leaving every other record as it is: the probe's "API records off" state. 0, or -1 when CUPTI is
 * not recording, records no API call in this process (SLACK_API_RECORDS=0) or refused. */
int cupti_probe_api_records(int on) SLACK_HIDDEN_;
/* runtime/probe.c (slack_detach_cupti, which first has the writer take every buffer): detaches
 * CUPTI from the process (cuptiFinalize): no CUPTI code runs on any call after. 0 on success; -1
 * when CUPTI was not recording or refused (recording stops either way). */
int cupti_detach(void) SLACK_HIDDEN_;
/* Production windows (runtime/window.c, SLACK_WINDOW_DETACH): detaches CUPTI between windows
 * (cuptiFinalize) once the writer has taken every buffer, remembering to attach it again. 0, or
 * -1 when CUPTI was not recording or refused. */
int cupti_park(void) SLACK_HIDDEN_;
/* 1 once a detach or forced flush of CUPTI did not return within SLACK_EXIT_TIMEOUT_MS (said once
 * on stderr): no CUPTI call is made from then on, and the calls above return at once. */
int cupti_wedged(void) SLACK_HIDDEN_;
/* 1 while parked (detached by cupti_park, not attached again). */
int cupti_parked(void) SLACK_HIDDEN_;
/* Attaches a parked CUPTI again: callbacks, clock, thread ids and every kind cupti_start enables.
 * CUPTI attached after cudart started sees no runtime API call: the driver API records of the
 * launches, copies and memsets join the GPU work to its host calls then. 0; 1 when another
 * client took CUPTI meanwhile (cupti_yield: said there); -1 with why when CUPTI refused. Either
 * way the windows from then on record host calls only. */
int cupti_reattach(char *why, size_t why_len) SLACK_HIDDEN_;
/* Another CUPTI client registered its activity buffer callbacks (interpose/cupti.c): CUPTI
 * hands every record to it from now on. If slack was recording, its buffers are flushed home and
 * its kinds disabled (the other client enables its own), and 1 is returned; else 0. Either way a
 * later cupti_start steps back ("in use by another client"). */
int cupti_yield(void) SLACK_HIDDEN_;
/* Takes every completed buffer queued so far (oldest first). */
struct cupti_buf *cupti_take(void) SLACK_HIDDEN_;
/* Frees a taken buffer. */
void cupti_buf_free(struct cupti_buf *b) SLACK_HIDDEN_;
/* Iterates a buffer: *rec starts NULL; returns 1 with the next record, 0 at the end. */
int cupti_next(struct cupti_buf *b, void **rec) SLACK_HIDDEN_;
/* In a fork child: forget queued buffers (the parent owns them). */
void cupti_forget_all(void) SLACK_HIDDEN_;
/* The writer pokes this to wake itself when a buffer arrives (set by the writer). */
extern void (*cupti_on_buffer)(void) SLACK_HIDDEN_;
/* Called once, on the caller's thread, when a CUPTI call of slack's made at t0 did not return in
 * time (cupti_wedged): slack.c marks it in the trace (set by slack.c). */
extern void (*cupti_on_stuck)(uint64_t t0) SLACK_HIDDEN_;

#endif

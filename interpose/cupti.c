/* Another CUPTI client in the traced process.
 *
 * CUPTI hands activity records to one pair of buffer callbacks per process: the last registered.
 * When torch.profiler (Kineto) or a tool starts after libslack, its cuptiActivityRegisterCallbacks
 * silently takes every record from slack. libslack exports that function so it sees this happen:
 * it lets slack step back first (runtime/slack.c slack_cupti_taken: slack's buffers flushed home,
 * its kinds disabled, one line on stderr, a TAKEN record in the trace), then calls the real one,
 * found as the caller would have found it without libslack (interpose/dl.c). The other client's
 * results are those it gets without slack; slack's trace keeps the host calls.
 *
 * slack's own CUPTI client (runtime/cupti_client.c) calls CUPTI through pointers taken from its
 * handle on libcupti, never through this export.
 */
#include <cupti.h>

#include "interpose.h"

typedef CUptiResult (*register_fn)(CUpti_BuffersCallbackRequestFunc,
                                   CUpti_BuffersCallbackCompleteFunc);

SLACK_EXPORT CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(
    CUpti_BuffersCallbackRequestFunc requested, CUpti_BuffersCallbackCompleteFunc completed) {
  register_fn real = (register_fn)slack_real_for_caller("cuptiActivityRegisterCallbacks",
                                                        __builtin_return_address(0));
  if (real == NULL) return CUPTI_ERROR_NOT_INITIALIZED; /* no libcupti in the process */
#ifndef SLACK_NOP
  slack_cupti_taken();
#endif
  return real(requested, completed);
}

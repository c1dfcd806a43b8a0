/* Production windows in `slack report` (docs/slack-report.md): a trace recorded with
 * SLACK_WINDOW, SLACK_CAPTURE_RANGE or a trigger (runtime/window.c) holds WINDOW records, and
 * nothing was recorded between them. The report then counts time inside the windows only: each
 * GPU's class totals are clipped to the windows, and each window gets its own figures. A trace
 * without WINDOW records is reported exactly as before. */
#ifndef SLACK_WINDOWS_H
#define SLACK_WINDOWS_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "report.h" /* struct report, its report_windows */

/* The text report's lines and the JSON report's "windows" array (nothing without windows). */
void report_windows_text(const struct report *rp);
void report_windows_json(struct json *j, const struct report *rp);

#endif

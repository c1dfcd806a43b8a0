/* What the report's renderings share (report.h): the classes' labels. Kept apart from
 * cmd_report.c so that the HTML page and the report across ranks need not call back into the
 * command that calls them. */
#include "report.h"

const char *const report_class_label[CLS_COUNT] = {
    "compute",         "communication",   "copy", "serialization", "copy stall",
    "data starvation", "launch overhead", "other"};

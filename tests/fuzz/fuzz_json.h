/* A strict JSON checker for the fuzz targets (fuzz_json.c). */
#ifndef SLACK_FUZZ_JSON_H
#define SLACK_FUZZ_JSON_H

#include <stddef.h>

/* 0 when text[0..len) is exactly one JSON value (surrounding white space allowed, strings valid
 * UTF-8), else 1 + the offset where it stops being JSON. */
size_t fuzz_json_check(const char *text, size_t len);

#endif

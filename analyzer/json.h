/* A small JSON writer: the one place that knows about commas, nesting and string escapes, so
 * every command's --json output is valid JSON. Output is indented, two spaces per level.
 *
 *   struct json j;
 *   json_begin(&j, stdout);
 *   json_obj(&j, NULL);               // top-level object
 *   json_u64(&j, "kernels", 12);
 *   json_arr(&j, "gpus"); ... json_arr_end(&j);
 *   json_obj_end(&j);
 *   json_end(&j);                     // final newline
 *
 * key is the member name inside an object, NULL inside an array (or at the top).
 */
#ifndef SLACK_JSON_H
#define SLACK_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json {
  FILE *f;
  int depth;
  unsigned char empty[JSON_MAX_DEPTH]; /* 1 while the container at this depth has no member */
};

void json_begin(struct json *j, FILE *f);
void json_end(struct json *j);
void json_obj(struct json *j, const char *key);
void json_obj_end(struct json *j);
void json_arr(struct json *j, const char *key);
void json_arr_end(struct json *j);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
/* Finite values with up to 6 significant decimals; NaN and infinities become null. */
void json_double(struct json *j, const char *key, double v);
void json_bool(struct json *j, const char *key, int v);
void json_null(struct json *j, const char *key);
/* s NULL writes null. Bytes are escaped so any input gives valid JSON (invalid UTF-8 bytes are
 * written as \u00XX escapes of the byte). */
void json_str(struct json *j, const char *key, const char *s);
void json_strn(struct json *j, const char *key, const char *s, size_t len);

/* Writes s as a JSON string literal (quotes included) to f. */
void json_write_string(FILE *f, const char *s, size_t len);

#endif

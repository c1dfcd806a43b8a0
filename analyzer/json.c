/* JSON writer (json.h). */
#include "json.h"

#include <math.h>
#include <string.h>

void json_begin(struct json *j, FILE *f) {
  j->f = f;
  j->depth = 0;
  j->empty[0] = 1;
}

void json_end(struct json *j) { fputc('\n', j->f); }

static void indent(struct json *j) {
  fputc('\n', j->f);
  for (int i = 0; i < j->depth; i++)
    fputs("  ", j->f);
}

/* Comma, newline and key before a value at the current depth. */
static void member(struct json *j, const char *key) {
  if (j->depth > 0) {
    if (!j->empty[j->depth]) fputc(',', j->f);
    indent(j);
  }
  j->empty[j->depth] = 0;
  if (key) {
    json_write_string(j->f, key, strlen(key));
    fputs(": ", j->f);
  }
}

static void open_container(struct json *j, const char *key, char c) {
  member(j, key);
  fputc(c, j->f);
  if (j->depth + 1 < JSON_MAX_DEPTH) j->depth++;
  j->empty[j->depth] = 1;
}

static void close_container(struct json *j, char c) {
  int was_empty = j->empty[j->depth];
  if (j->depth > 0) j->depth--;
  if (!was_empty) indent(j);
  fputc(c, j->f);
}

void json_obj(struct json *j, const char *key) { open_container(j, key, '{'); }
void json_obj_end(struct json *j) { close_container(j, '}'); }
void json_arr(struct json *j, const char *key) { open_container(j, key, '['); }
void json_arr_end(struct json *j) { close_container(j, ']'); }

void json_u64(struct json *j, const char *key, uint64_t v) {
  member(j, key);
  fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_i64(struct json *j, const char *key, int64_t v) {
  member(j, key);
  fprintf(j->f, "%lld", (long long)v);
}

void json_double(struct json *j, const char *key, double v) {
  member(j, key);
  if (!isfinite(v))
    fputs("null", j->f);
  else
    fprintf(j->f, "%.6g", v);
}

void json_bool(struct json *j, const char *key, int v) {
  member(j, key);
  fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key) {
  member(j, key);
  fputs("null", j->f);
}

void json_str(struct json *j, const char *key, const char *s) {
  if (!s) {
    json_null(j, key);
    return;
  }
  json_strn(j, key, s, strlen(s));
}

void json_strn(struct json *j, const char *key, const char *s, size_t len) {
  member(j, key);
  json_write_string(j->f, s, len);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when the bytes there are not one. */
static size_t utf8_len(const unsigned char *s, size_t len) {
  size_t n;
  if (s[0] < 0x80) return 1;
  if (s[0] >= 0xc2 && s[0] <= 0xdf)
    n = 2;
  else if (s[0] >= 0xe0 && s[0] <= 0xef)
    n = 3;
  else if (s[0] >= 0xf0 && s[0] <= 0xf4)
    n = 4;
  else
    return 0;
  if (n > len) return 0;
  for (size_t i = 1; i < n; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  /* overlong 3/4-byte forms, surrogates and code points past U+10FFFF */
  if (n == 3 && s[0] == 0xe0 && s[1] < 0xa0) return 0;
  if (n == 3 && s[0] == 0xed && s[1] >= 0xa0) return 0;
  if (n == 4 && s[0] == 0xf0 && s[1] < 0x90) return 0;
  if (n == 4 && s[0] == 0xf4 && s[1] >= 0x90) return 0;
  return n;
}

void json_write_string(FILE *f, const char *str, size_t len) {
  const unsigned char *s = (const unsigned char *)str;
  fputc('"', f);
  for (size_t i = 0; i < len;) {
    /* a run of bytes that stand for themselves, written at once */
    size_t run = i;
    while (run < len && s[run] >= 0x20 && s[run] < 0x7f && s[run] != '"' && s[run] != '\\')
      run++;
    if (run > i) {
      fwrite(s + i, 1, run - i, f);
      i = run;
      continue;
    }
    unsigned char c = s[i];
    if (c == '"' || c == '\\') {
      fputc('\\', f);
      fputc(c, f);
      i++;
    } else if (c == '\n') {
      fputs("\\n", f);
      i++;
    } else if (c == '\t') {
      fputs("\\t", f);
      i++;
    } else if (c < 0x20 || c == 0x7f) {
      fprintf(f, "\\u%04x", c);
      i++;
    } else {
      size_t n = utf8_len(s + i, len - i);
      if (!n) {
        fprintf(f, "\\u%04x", c); /* not UTF-8: the byte as a Latin-1 character */
        i++;
      } else {
        fwrite(s + i, 1, n, f);
        i += n;
      }
    }
  }
  fputc('"', f);
}

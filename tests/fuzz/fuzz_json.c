/* A strict JSON checker (RFC 8259, UTF-8 included) for the fuzz targets: every --json output and
 * every timeline must parse, whatever bytes the trace's strings hold. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_json.h"

struct jp {
  const uint8_t *p, *e;
};

static void ws(struct jp *j) {
  while (j->p < j->e && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
    j->p++;
}

/* One UTF-8 sequence at j->p (first byte >= 0x80): shortest form, no surrogates, <= U+10FFFF. */
static int utf8(struct jp *j) {
  uint8_t c = *j->p;
  int n;
  uint32_t cp, min;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 1;
    cp = c & 0x1f;
    min = 0x80;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 2;
    cp = c & 0x0f;
    min = 0x800;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 3;
    cp = c & 0x07;
    min = 0x10000;
  } else {
    return 0;
  }
  if (j->e - j->p <= n) return 0;
  for (int i = 1; i <= n; i++) {
    if ((j->p[i] & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (j->p[i] & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  j->p += n + 1;
  return 1;
}

static int string(struct jp *j) {
  if (j->p >= j->e || *j->p != '"') return 0;
  j->p++;
  while (j->p < j->e) {
    uint8_t c = *j->p;
    if (c == '"') {
      j->p++;
      return 1;
    }
    if (c < 0x20) return 0;
    if (c == '\\') {
      if (++j->p >= j->e) return 0;
      c = *j->p++;
      if (c == 'u') {
        for (int i = 0; i < 4; i++, j->p++)
          if (j->p >= j->e || !strchr("0123456789abcdefABCDEF", *j->p) || !*j->p) return 0;
      } else if (!strchr("\"\\/bfnrt", c) || !c) {
        return 0;
      }
    } else if (c >= 0x80) {
      if (!utf8(j)) return 0;
    } else {
      j->p++;
    }
  }
  return 0;
}

static int digits(struct jp *j) {
  const uint8_t *s = j->p;
  while (j->p < j->e && *j->p >= '0' && *j->p <= '9')
    j->p++;
  return j->p > s;
}

static int number(struct jp *j) {
  if (j->p < j->e && *j->p == '-') j->p++;
  if (j->p < j->e && *j->p == '0')
    j->p++;
  else if (!digits(j))
    return 0;
  if (j->p < j->e && *j->p == '.') {
    j->p++;
    if (!digits(j)) return 0;
  }
  if (j->p < j->e && (*j->p == 'e' || *j->p == 'E')) {
    j->p++;
    if (j->p < j->e && (*j->p == '+' || *j->p == '-')) j->p++;
    if (!digits(j)) return 0;
  }
  return 1;
}

static int word(struct jp *j, const char *w) {
  size_t n = strlen(w);
  if ((size_t)(j->e - j->p) < n || memcmp(j->p, w, n)) return 0;
  j->p += n;
  return 1;
}

static int value(struct jp *j, int depth) {
  if (depth > 512) return 0;
  ws(j);
  if (j->p >= j->e) return 0;
  switch (*j->p) {
  case '{':
    j->p++;
    ws(j);
    if (j->p < j->e && *j->p == '}') {
      j->p++;
      return 1;
    }
    for (;;) {
      ws(j);
      if (!string(j)) return 0;
      ws(j);
      if (j->p >= j->e || *j->p++ != ':') return 0;
      if (!value(j, depth + 1)) return 0;
      ws(j);
      if (j->p >= j->e) return 0;
      if (*j->p == '}') {
        j->p++;
        return 1;
      }
      if (*j->p++ != ',') return 0;
    }
  case '[':
    j->p++;
    ws(j);
    if (j->p < j->e && *j->p == ']') {
      j->p++;
      return 1;
    }
    for (;;) {
      if (!value(j, depth + 1)) return 0;
      ws(j);
      if (j->p >= j->e) return 0;
      if (*j->p == ']') {
        j->p++;
        return 1;
      }
      if (*j->p++ != ',') return 0;
    }
  case '"': return string(j);
  case 't': return word(j, "true");
  case 'f': return word(j, "false");
  case 'n': return word(j, "null");
  default: return number(j);
  }
}

size_t fuzz_json_check(const char *text, size_t len) {
  struct jp j = {(const uint8_t *)text, (const uint8_t *)text + len};
  if (!value(&j, 0)) return (size_t)(j.p - (const uint8_t *)text) + 1;
  ws(&j);
  return j.p == j.e ? 0 : (size_t)(j.p - (const uint8_t *)text) + 1;
}

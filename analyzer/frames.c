/* Call-site frames as a person reads them (frames.h). */
#include "frames.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>

/* Weak: glibc before 2.34 keeps dlopen in libdl, which the slack command does not link; there
 * names stay mangled instead of the build failing. */
#pragma weak dlopen
#pragma weak dlsym

char *slack_demangle(const char *name) {
  typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
  static int tried;
  static demangle_fn demangle;
  if (strncmp(name, "_Z", 2)) return NULL;
  if (!tried) {
    tried = 1;
    void *h = dlopen ? dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL) : NULL;
    if (h) *(void **)&demangle = dlsym(h, "__cxa_demangle");
  }
  if (!demangle) return NULL;
  int status = -1;
  char *out = demangle(name, NULL, NULL, &status);
  if (status) {
    free(out);
    return NULL;
  }
  return out;
}

char *frame_demangle(const char *line, size_t len) {
  size_t sym = 0;
  while (sym < len && line[sym] != '+' && line[sym] != ' ')
    sym++;
  char *out = NULL;
  if (sym > 2 && line[0] == '_' && line[1] == 'Z') {
    char *name = strndup(line, sym);
    char *d = name ? slack_demangle(name) : NULL;
    free(name);
    if (d) {
      size_t dl = strlen(d);
      out = malloc(dl + (len - sym) + 1);
      if (out) {
        memcpy(out, d, dl);
        memcpy(out + dl, line + sym, len - sym);
        out[dl + len - sym] = '\0';
      }
      free(d);
      return out;
    }
  }
  return strndup(line, len);
}

char *frames_demangle(const char *stack) {
  if (!stack) return NULL;
  size_t cap = strlen(stack) * 2 + 64, n = 0;
  char *out = malloc(cap);
  if (!out) return NULL;
  for (const char *p = stack; *p;) {
    size_t len = strcspn(p, "\n");
    char *d = frame_demangle(p, len);
    if (!d) {
      free(out);
      return NULL;
    }
    size_t dl = strlen(d);
    if (n + dl + 2 > cap) {
      cap = (n + dl + 2) * 2;
      char *g = realloc(out, cap);
      if (!g) {
        free(d);
        free(out);
        return NULL;
      }
      out = g;
    }
    if (n) out[n++] = '\n';
    memcpy(out + n, d, dl);
    n += dl;
    free(d);
    p += len;
    if (*p == '\n') p++;
  }
  out[n] = '\0';
  return out;
}

int pyframe_parse(const char *line, size_t len, const char **file, size_t *file_len, long *lineno,
                  const char **fn, size_t *fn_len) {
  /* "file:line function": the last ':' before the first space after it */
  const char *sp = memchr(line, ' ', len);
  size_t head = sp ? (size_t)(sp - line) : len;
  while (sp && head < len) { /* a file name with spaces: the space that follows ":digits" */
    size_t c = head;
    while (c > 0 && line[c - 1] >= '0' && line[c - 1] <= '9')
      c--;
    if (c > 0 && c < head && line[c - 1] == ':') break;
    sp = memchr(line + head + 1, ' ', len - head - 1);
    head = sp ? (size_t)(sp - line) : len;
  }
  size_t colon = head;
  while (colon > 0 && line[colon - 1] != ':')
    colon--;
  if (colon < 2 || colon == head) return 0;
  *file = line;
  *file_len = colon - 1;
  *lineno = strtol(line + colon, NULL, 10);
  *fn = head < len ? line + head + 1 : line + len;
  *fn_len = head < len ? len - head - 1 : 0;
  return 1;
}

static int has(const char *s, size_t len, const char *needle) {
  size_t nl = strlen(needle);
  for (size_t i = 0; i + nl <= len; i++)
    if (!memcmp(s + i, needle, nl)) return 1;
  return 0;
}

int pyframe_is_user(const char *file, size_t len) {
  if (!len || file[0] == '<') return 0;
  if (has(file, len, "/site-packages/") || has(file, len, "/dist-packages/")) return 0;
  /* torch.compile's generated code, in Inductor's cache (/tmp/torchinductor_USER/ab/cab...py by
   * default; TORCHINDUCTOR_CACHE_DIR elsewhere keeps the name when the user does): the line that
   * called the compiled model is the user's (GPU run 107: the verdict's site was the generated
   * file's `Runner.call` line, a hash for a name) */
  if (has(file, len, "/torchinductor")) return 0;
  /* the standard library: .../lib/python3.X/... (site-packages excluded above) */
  if (has(file, len, "/lib/python3") || has(file, len, "/lib64/python3")) return 0;
  return 1;
}

void pyframes_user(const char *stack, size_t *off, size_t *len) {
  *off = 0;
  *len = strcspn(stack, "\n");
  int generated = 0; /* where no frame is the user's: the innermost of torch.compile's code */
  for (const char *p = stack; *p;) {
    size_t l = strcspn(p, "\n");
    const char *file, *fn;
    size_t fl, nl;
    long line;
    if (pyframe_parse(p, l, &file, &fl, &line, &fn, &nl) && pyframe_is_user(file, fl)) {
      *off = (size_t)(p - stack);
      *len = l;
      return;
    }
    if (!generated && pyframe_parse(p, l, &file, &fl, &line, &fn, &nl) &&
        has(file, fl, "/torchinductor")) {
      generated = 1;
      *off = (size_t)(p - stack);
      *len = l;
    }
    p += l;
    if (*p == '\n') p++;
  }
}

int pyframes_has(const char *stack, const char *frame, size_t len) {
  for (const char *p = stack; *p;) {
    size_t l = strcspn(p, "\n");
    if (l == len && !memcmp(p, frame, len)) return 1;
    p += l;
    if (*p == '\n') p++;
  }
  return 0;
}

int pyframes_waits(const char *stack) {
  static const char *const mods[] = {"/threading.py", "/queue.py", "/concurrent/futures/",
                                     "/multiprocessing/"};
  /* the library frames inside the innermost user frame, up to 3: a multiprocessing queue's wait
   * is a selector's poll called from multiprocessing/connection.py (GPU run 126) */
  int depth = 0;
  for (const char *p = stack; *p && depth < 3; depth++) {
    size_t l = strcspn(p, "\n");
    const char *file, *fn;
    size_t fl, nl;
    long line;
    if (!pyframe_parse(p, l, &file, &fl, &line, &fn, &nl) || pyframe_is_user(file, fl)) return 0;
    for (size_t k = 0; k < sizeof mods / sizeof *mods; k++)
      if (has(file, fl, mods[k])) return 1;
    p += l;
    if (*p == '\n') p++;
  }
  return 0;
}

int pyframes_capture(const char *stack) {
  /* the modules a capture runs through on its way in: reading the frames' source lines */
  static const char *const via[] = {"/linecache.py", "/tokenize.py", "/posixpath.py",
                                    "/genericpath.py", "/codecs.py"};
  for (int depth = 0; *stack && depth < 8; depth++) {
    size_t l = strcspn(stack, "\n");
    const char *file, *fn;
    size_t fl, nl;
    long line;
    if (!pyframe_parse(stack, l, &file, &fl, &line, &fn, &nl) || pyframe_is_user(file, fl))
      return 0;
    if (fl >= 13 && !memcmp(file + fl - 13, "/traceback.py", 13)) return 1;
    int on = 0;
    for (size_t k = 0; k < sizeof via / sizeof *via && !on; k++) {
      size_t vl = strlen(via[k]);
      on = fl >= vl && !memcmp(file + fl - vl, via[k], vl);
    }
    if (!on) return 0;
    stack += l;
    if (*stack == '\n') stack++;
  }
  return 0;
}

int pyframes_loading(const char *stack, size_t upto) {
  /* torchvision's loading parts only: its models and ops run a model's forward pass (the main
   * thread in a ResNet's forward read as a loader's, GPU run 85) */
  static const char *const libs[] = {"/torch/utils/data/",
                                     "/torchvision/datasets/",
                                     "/torchvision/transforms/",
                                     "/torchvision/io/",
                                     "/PIL/",
                                     "/datasets/",
                                     "/tokenizers/",
                                     "/transformers/tokeniz",
                                     "/webdataset/",
                                     "/nvidia/dali/",
                                     "/ffcv/"};
  for (const char *p = stack; *p && (size_t)(p - stack) < upto;) {
    size_t l = strcspn(p, "\n");
    const char *file, *fn;
    size_t fl, nl;
    long line;
    if (pyframe_parse(p, l, &file, &fl, &line, &fn, &nl))
      for (size_t k = 0; k < sizeof libs / sizeof *libs; k++)
        if (has(file, fl, libs[k])) return 1;
    p += l;
    if (*p == '\n') p++;
  }
  return 0;
}

int pyframes_user_short(const char *stack, char *buf, size_t cap) {
  size_t off, len;
  const char *file, *fn;
  size_t fl, nl;
  long line;
  buf[0] = '\0';
  pyframes_user(stack, &off, &len);
  if (!pyframe_parse(stack + off, len, &file, &fl, &line, &fn, &nl)) return 0;
  const char *base = file;
  for (size_t k = 0; k < fl; k++)
    if (file[k] == '/') base = file + k + 1;
  snprintf(buf, cap, "%.*s:%ld %.*s", (int)(fl - (size_t)(base - file)), base, line,
           (int)(nl > 60 ? 60 : nl), fn);
  return 1;
}

/* Call sites per class (cls_internal.h): where each class's time comes from, by Python line and
 * native site, data starvation by the sampled line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cls_internal.h"
#include "frames.h"
#include "join.h"
#include "radix.h"
#include "u64map.h"

struct site_acc {
  uint64_t key, key2, ns, steady; /* steady: the part inside the steps */
  size_t call;
  uint8_t why;
  const char *sampled; /* data starvation: the sampled Python stack the host was in, or NULL */
};

/* by the Python line's group, then the largest native site first (the group's representative) */
static int cmp_site_key2(const void *pa, const void *pb) {
  const struct site_acc *a = pa, *b = pb;
  if (a->key2 != b->key2) return a->key2 < b->key2 ? -1 : 1;
  if (a->ns != b->ns) return a->ns > b->ns ? -1 : 1;
  return a->key < b->key ? -1 : a->key > b->key;
}
/* the steady state first (start-up copies must not name a step's stall), then the whole */
static int cmp_site_ns(const void *pa, const void *pb) {
  const struct site_acc *a = pa, *b = pb;
  if (a->steady != b->steady) return a->steady > b->steady ? -1 : 1;
  if (a->ns != b->ns) return a->ns > b->ns ? -1 : 1;
  return a->key < b->key ? -1 : a->key > b->key;
}

/* The call's Python stack ("" when it has none). */
static const char *call_py(const struct world *w, size_t call) {
  if (call == NONE) return "";
  const struct cls_host_rec r = call_rec(w, call);
  return r.pystack ? in_str(w, w->calls[call].in, r.pystack) : "";
}

static char *site_text(const struct world *w, size_t call, int why, int cls) {
  char buf[768];
  const char *prefix = "";
  char pre[80] = "";
  if (cls == CLS_OTHER && why != CLS_WHY_NONE) {
    snprintf(pre, sizeof pre, "%s: ", cls_reason_name(why));
    prefix = pre;
  }
  if (call == NONE) {
    if (cls == CLS_OTHER)
      snprintf(buf, sizeof buf, "%s: %s", cls_reason_name(why), cls_reason_text(why));
    else
      snprintf(buf, sizeof buf, "(launch not recorded)");
  } else {
    const struct call *c = &w->calls[call];
    const struct cls_host_rec hr = call_rec(w, call), *r = &hr;
    const struct cls_input *x = &w->in[c->in];
    const char *cs = r->callsite ? in_str(w, c->in, r->callsite) : "unknown call site";
    const char *py = call_py(w, call);
    char pyl[320] = ""; /* the user's own line first: "train.py:87 train_step: " */
    if (*py && pyframes_user_short(py, pyl, sizeof pyl - 2)) strcat(pyl, ": ");
    /* the call site's first line: its immediate caller (the stack follows, site_stack) */
    char *first = frame_demangle(cs, strcspn(cs, "\n"));
    snprintf(buf, sizeof buf, "%s%s%s%s%s @ %s", prefix, x->label ? x->label : "",
             x->label ? ": " : "", pyl, slk_fn_name(r->fn), first ? first : cs);
    free(first);
  }
  return strdup(buf);
}

/* A data-starvation site found by sampling: "train.py:75 step: host work (sampled), then
 * cudaMemcpyAsync @ ...": the line the thread was sampled on, and the call that ended the gap. */
static char *sampled_text(const struct world *w, size_t call, const char *py) {
  char buf[768], pyl[320];
  if (!pyframes_user_short(py, pyl, sizeof pyl)) snprintf(pyl, sizeof pyl, "?");
  const struct cls_input *x = &w->in[w->calls[call].in];
  snprintf(buf, sizeof buf, "%s%s%s: host work (sampled), then %s", x->label ? x->label : "",
           x->label ? ": " : "", pyl, slk_fn_name(call_rec(w, call).fn));
  return strdup(buf);
}

/* The frames of the call site's stack after its immediate caller ("a\nb\n...", demangled), or
 * NULL. */
static char *site_stack(const struct world *w, size_t call) {
  if (call == NONE) return NULL;
  const struct cls_host_rec hr = call_rec(w, call), *r = &hr;
  const char *cs = r->callsite ? in_str(w, w->calls[call].in, r->callsite) : "";
  const char *nl = strchr(cs, '\n');
  return nl && nl[1] ? frames_demangle(nl + 1) : NULL;
}

/* The group of a site: its Python line when the call has Python frames (every native path from
 * one line of the user's code is one site), else the native site itself. */
static uint64_t site_group(const struct world *w, size_t call, uint64_t why, uint64_t key) {
  const char *py = call_py(w, call);
  if (!*py) return key;
  size_t off, len;
  pyframes_user(py, &off, &len);
  uint64_t h = mix64(why + 1, w->calls[call].in);
  for (size_t k = 0; k < len; k++)
    h = mix64(h, (unsigned char)py[off + k]);
  return h | 1;
}

/* The writer's samples of Python stacks (SLK_SAMPLE, runtime/pyframes.c) that thread `tid` of
 * input `in` took in [a, b): *first, and how many (they are sorted by start). */
size_t samples_in(const struct world *w, uint32_t in, uint64_t a, uint64_t b, size_t *first) {
  const struct trace_array *sa = &w->in[in].td->kind[SLK_SAMPLE];
  size_t lo = 0, hi = sa->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (sa->v[mid].start < a)
      lo = mid + 1;
    else
      hi = mid;
  }
  *first = lo;
  size_t n = 0;
  while (lo + n < sa->n && sa->v[lo + n].start < b)
    n++;
  return n;
}

/* Data starvation: the gap's host time split over the Python lines the thread was sampled on
 * (the user's own line of each sample; equal shares per sample). Appends to v; the number of
 * entries added, 0 when the thread has no sample in the gap. */
/* The launching thread's waits while its process's loader threads ran (seg.gil) are split over
 * those threads' samples in a data-loading library instead, taken within GIL_NAME_NS of the
 * stretch (a wait between two launches is shorter than the samples' period). */
#define GIL_NAME_NS 20000000ull

/* 1 when sample r counts for stretch s's names: the launching thread's own (tid), or, for a wait
 * while the loader's threads ran, another thread's in a data-loading library */
static int sample_names(const struct world *w, uint32_t in, const struct seg *s,
                        const struct slk_record *r, uint64_t tid) {
  if (!r->pystack) return 0;
  if (!s->gil) return r->tid == tid;
  if (r->tid == tid) return 0;
  const char *py = in_str(w, in, r->pystack);
  return pyframes_loading(py, strlen(py));
}

static size_t starvation_by_sample(const struct world *w, const struct seg *s, uint64_t steady,
                                   struct site_acc *v) {
  const struct call *c = &w->calls[s->site];
  uint64_t tid = call_tid(w, s->site);
  uint64_t a = s->a, b = s->b;
  if (s->gil) {
    a = a > GIL_NAME_NS ? a - GIL_NAME_NS : 0;
    b += GIL_NAME_NS;
  }
  size_t first, n = samples_in(w, c->in, a, b, &first);
  const struct trace_array *sa = &w->in[c->in].td->kind[SLK_SAMPLE];
  size_t m = 0, mine = 0;
  for (size_t k = 0; k < n; k++)
    mine += sample_names(w, c->in, s, &sa->v[first + k], tid);
  if (!mine) return 0;
  uint64_t share = (s->b - s->a) / mine, left = (s->b - s->a) - share * mine;
  for (size_t k = 0; k < n; k++) {
    const struct slk_record *r = &sa->v[first + k];
    if (!sample_names(w, c->in, s, r, tid)) continue;
    const char *py = in_str(w, c->in, r->pystack);
    size_t off, len;
    pyframes_user(py, &off, &len);
    uint64_t h = mix64(0x5a3c0ffee, c->in);
    for (size_t q = 0; q < len; q++)
      h = mix64(h, (unsigned char)py[off + q]);
    uint64_t ns = share + (m ? 0 : left);
    uint64_t st = u64_of((double)ns * (double)steady / (double)(s->b - s->a));
    v[m] = (struct site_acc){h & ~(1ull << 63), 0, ns, st, s->site, 0, py};
    m++;
  }
  return m;
}

/* The production windows of every input (cls_windows) as start/end pairs, in *out (2 per
 * window); their count, 0 when the trace has none, (size_t)-1 when out of memory. */
static size_t window_spans(const struct world *w, uint64_t **out) {
  *out = NULL;
  const struct trace_data **td = malloc((w->nin ? w->nin : 1) * sizeof *td);
  if (!td) return (size_t)-1;
  for (size_t i = 0; i < w->nin; i++)
    td[i] = w->in[i].td;
  struct cls_window *cw;
  size_t m = cls_windows(td, w->nin, &cw);
  free(td);
  if (!m || m == (size_t)-1) return m;
  uint64_t *v = malloc(2 * m * sizeof *v);
  for (size_t k = 0; v && k < m; k++) {
    v[2 * k] = cw[k].start;
    v[2 * k + 1] = cw[k].end;
  }
  free(cw);
  if (!v) return (size_t)-1;
  *out = v;
  return m;
}

/* Of [a, b), the time inside the windows (nw pairs, sorted; *at a cursor that only moves on as
 * the stretches come in time order within a class). */
static uint64_t in_windows(const uint64_t *win, size_t nw, size_t *at, uint64_t a, uint64_t b) {
  while (*at > 0 && win[2 * *at - 1] > a)
    (*at)--;
  while (*at < nw && win[2 * *at + 1] <= a)
    (*at)++;
  uint64_t t = 0;
  for (size_t k = *at; k < nw && win[2 * k] < b; k++)
    t += overlap(a, b, win[2 * k], win[2 * k + 1]);
  return t;
}

/* One class's sites as the stretches come: each key's sum (v[0..n), the key's first stretch its
 * representative), the key's place in v (at), the windows' cursor (wat). */
struct class_sites {
  struct site_acc *v;
  size_t n, cap;
  struct u64map at;
  size_t wat;
};

/* x summed into its key's site of cs, or added as the key's first. 0, or -1 when out of memory. */
static int site_sum(struct class_sites *cs, const struct site_acc *x) {
  uint64_t q;
  if (u64map_get(&cs->at, x->key, &q)) {
    cs->v[q].ns += x->ns;
    cs->v[q].steady += x->steady;
    return 0;
  }
  if (cs->n == cs->cap) {
    size_t c = cs->cap ? 2 * cs->cap : 64;
    struct site_acc *nv = realloc(cs->v, c * sizeof *nv);
    if (!nv) return -1;
    cs->v = nv;
    cs->cap = c;
  }
  size_t slot = u64map_add(&cs->at, x->key);
  if (slot == (size_t)-1) return -1;
  cs->at.val[slot] = cs->n;
  cs->v[cs->n++] = *x;
  return 0;
}

static void class_sites_free(struct class_sites *cs) {
  for (int c = 0; c < CLS_COUNT; c++) {
    free(cs[c].v);
    u64map_free(&cs[c].at);
  }
}

/* Each class's stretches summed by key as the sweep left them (one pass over them, each class's
 * in their order: a key's first stretch is the same one as in the class's own pass), into cs. 0,
 * or -1 when out of memory. */
static int sites_sum(const struct world *w, const struct gstate *st, uint64_t w0, uint64_t w1,
                     const uint64_t *win, size_t nw, struct class_sites *cs) {
  size_t nsamples = 0;
  for (size_t i = 0; i < w->nin; i++)
    nsamples += w->in[i].td->kind[SLK_SAMPLE].n;
  /* one stretch's share of the samples (data starvation) */
  struct site_acc *sv = nsamples ? malloc(nsamples * sizeof *sv) : NULL;
  if (nsamples && !sv) return -1;
  int rc = 0;
  for (size_t k = 0; k < st->n && !rc; k++) {
    const struct seg *s = &st->s[k];
    int cls = s->cls;
    if (cls >= CLS_COUNT) continue;
    struct class_sites *c = &cs[cls];
    uint64_t why = cls == CLS_OTHER ? s->why : 0;
    uint64_t key, steady = overlap(s->a, s->b, w0, w1), len = s->b - s->a;
    uint64_t inw = nw ? in_windows(win, nw, &c->wat, s->a, s->b) : len;
    if (!inw && len) continue;
    if (inw < len) /* the steps' part of it inside the windows, in proportion */
      steady = u64_of((double)steady * (double)inw / (double)len);
    if (cls == CLS_DATA_STARVATION && s->site != NONE && nsamples) {
      size_t m = starvation_by_sample(w, s, steady, sv);
      for (size_t q = 0; q < m && !rc; q++) {
        if (inw < len) sv[q].ns = u64_of((double)sv[q].ns * (double)inw / (double)len);
        rc = site_sum(c, &sv[q]);
      }
      if (m) continue;
    }
    if (s->site == NONE) {
      key = (1ull << 63) | (why << 56) | (s->why == CLS_WHY_NO_LAUNCH);
    } else {
      if (!why) {
        key = w->site_key0[s->site];
      } else {
        const struct cls_host_rec hr = call_rec(w, s->site), *r = &hr;
        key = why << 56 | site_key_of(&w->calls[s->site], r);
        if (r->pystack) key = mix64(key, r->pystack) & ~(1ull << 63);
      }
    }
    rc = site_sum(c, &(struct site_acc){key, 0, inw, steady, s->site, (uint8_t)s->why, NULL});
  }
  free(sv);
  return rc;
}

int gpu_sites(const struct world *w, const struct gstate *st, uint64_t w0, uint64_t w1,
              struct cls_gpu *out) {
  /* with production windows, a site counts only its time inside them (the class totals count
   * only that: report_windows_apply); the stretches between windows are not recorded time */
  uint64_t *win;
  size_t nw = window_spans(w, &win);
  if (nw == (size_t)-1) return -1;
  /* summed by key as they come, not written into an array per class and summed after: the
   * stretches are read once, in place (the keys are unique after, so their order does not
   * matter to the sorts below) */
  struct class_sites cs[CLS_COUNT];
  memset(cs, 0, sizeof cs);
  if (sites_sum(w, st, w0, w1, win, nw, cs)) {
    class_sites_free(cs);
    free(win);
    return -1;
  }
  free(win);
  for (int cls = 0; cls < CLS_COUNT; cls++) {
    struct site_acc *v = cs[cls].v;
    size_t u = cs[cls].n;
    /* one site per Python line: the native site with the most time represents it */
    for (size_t k = 0; k < u; k++)
      v[k].key2 = v[k].call == NONE || v[k].sampled ? v[k].key
                                                    : site_group(w, v[k].call, v[k].why, v[k].key);
    if (u > 1) qsort(v, u, sizeof *v, cmp_site_key2);
    size_t g = 0;
    for (size_t k = 0; k < u; k++) {
      if (g && v[g - 1].key2 == v[k].key2) {
        v[g - 1].ns += v[k].ns;
        v[g - 1].steady += v[k].steady;
      } else {
        v[g++] = v[k];
      }
    }
    u = g;
    if (u > 1) qsort(v, u, sizeof *v, cmp_site_ns);
    out->sites[cls] = calloc(u ? u : 1, sizeof *out->sites[cls]);
    if (!out->sites[cls]) {
      class_sites_free(cs);
      return -1;
    }
    for (size_t k = 0; k < u; k++) {
      struct cls_site *o = &out->sites[cls][k];
      o->site = v[k].sampled ? sampled_text(w, v[k].call, v[k].sampled)
                             : site_text(w, v[k].call, v[k].why, cls);
      o->stack = site_stack(w, v[k].call);
      const char *py = v[k].sampled ? v[k].sampled : call_py(w, v[k].call);
      o->python = *py ? strdup(py) : NULL;
      o->ns = v[k].ns;
      o->steps_ns = v[k].steady;
      if (!o->site) {
        class_sites_free(cs);
        return -1;
      }
      out->nsites[cls]++;
    }
  }
  class_sites_free(cs);
  return 0;
}

/* The marker name whose ranges (on one thread) best look like steps; fills rs/re. */

/* The record codec of docs/FORMAT.md. Shared by the writer and the reader, nothing else. */
#include "format.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h> /* _mm_movemask_epi8 */
#endif

static const char *const fn_names[] = {
#define SLK_FN_NAME(id, name, sync, cat) name,
    SLK_FN_LIST(SLK_FN_NAME)
#undef SLK_FN_NAME
};
static const unsigned char fn_sync[] = {
#define SLK_FN_SYNC(id, name, sync, cat) sync,
    SLK_FN_LIST(SLK_FN_SYNC)
#undef SLK_FN_SYNC
};
static const unsigned char fn_cat[] = {
#define SLK_FN_CAT(id, name, sync, cat) SLK_FNC_##cat,
    SLK_FN_LIST(SLK_FN_CAT)
#undef SLK_FN_CAT
};

const char *slk_fn_name(uint32_t fn) { return fn < SLK_FN_COUNT ? fn_names[fn] : "unknown"; }
int slk_fn_is_sync(uint32_t fn) { return fn < SLK_FN_COUNT ? fn_sync[fn] : 0; }
int slk_fn_cat(uint32_t fn) { return fn < SLK_FN_COUNT ? fn_cat[fn] : SLK_FNC_OTHER; }

const char *slk_kind_name(uint8_t kind) {
  static const char *const names[SLK_KIND_MAX] = {
      "none",  "string", "kernel", "memcpy", "memset", "sync",     "api",
      "host",  "marker", "graph",  "drops",  "device", "overhead", "thread",
      "probe", "sample", "window", "taken",  "stream"};
  static __thread char other[16];
  if (kind < SLK_KIND_MAX) return names[kind];
  snprintf(other, sizeof other, "kind%u", kind);
  return other;
}

/* Field ids; each kind is an ordered list of them (the order is the format). */
enum {
  F_END_OF_LIST,
  F_DEV,
  F_STREAM,
  F_TID,
  F_START,
  F_END,
  F_CORR,
  F_NAME,
  F_FN,
  F_CALLSITE,
  F_BYTES,
  F_COPYKIND,
  F_SRCKIND,
  F_DSTKIND,
  F_FLAGS,
  F_RESULT,
  F_GRAPH,
  F_GRID0,
  F_GRID1,
  F_GRID2,
  F_BLOCK0,
  F_BLOCK1,
  F_BLOCK2,
  F_SHMEM,
  F_REGS,
  F_COUNT,
  F_ID,
  F_STR,
  F_CORR0, /* optional correlation id: 0 none, else 1 + zigzag delta from the last one */
  F_PYSTACK
};

static const uint8_t kind_fields[SLK_KIND_MAX][24] = {
    [SLK_STRING] = {F_ID, F_STR},
    [SLK_KERNEL] = {F_DEV, F_STREAM, F_START, F_END, F_CORR, F_NAME, F_GRID0, F_GRID1, F_GRID2,
                    F_BLOCK0, F_BLOCK1, F_BLOCK2, F_SHMEM, F_REGS, F_GRAPH},
    [SLK_MEMCPY] = {F_DEV, F_STREAM, F_START, F_END, F_CORR, F_BYTES, F_COPYKIND, F_SRCKIND,
                    F_DSTKIND, F_FLAGS, F_GRAPH},
    [SLK_MEMSET] = {F_DEV, F_STREAM, F_START, F_END, F_CORR, F_BYTES, F_DSTKIND, F_FLAGS, F_GRAPH},
    [SLK_SYNC] = {F_DEV, F_STREAM, F_START, F_END, F_CORR, F_FN, F_COUNT},
    [SLK_API] = {F_TID, F_START, F_END, F_CORR, F_FN, F_RESULT},
    [SLK_HOST] = {F_TID, F_START, F_END, F_FN, F_STREAM, F_BYTES, F_COPYKIND, F_FLAGS, F_RESULT,
                  F_CALLSITE, F_CORR0 /* since 1.1 */, F_PYSTACK /* since 2.2 */},
    [SLK_MARKER] = {F_TID, F_START, F_END, F_NAME},
    [SLK_GRAPH] = {F_DEV, F_STREAM, F_START, F_END, F_CORR, F_GRAPH},
    [SLK_DROPS] = {F_TID, F_COUNT, F_FLAGS},
    [SLK_DEVICE] = {F_DEV, F_NAME, F_REGS, F_BYTES},
    [SLK_OVERHEAD] = {F_TID, F_START, F_END, F_FN},
    [SLK_THREAD] = {F_TID, F_NAME},
    [SLK_PROBE] = {F_TID, F_START, F_END, F_COUNT, F_BYTES, F_RESULT, F_FLAGS, F_FN,
                   F_SHMEM /* since 2.6 */, F_REGS /* since 2.6 */},
    [SLK_SAMPLE] = {F_TID, F_START, F_END, F_PYSTACK, F_COUNT /* since 2.7 */},
    [SLK_WINDOW] = {F_START, F_END, F_FN, F_FLAGS},
    [SLK_TAKEN] = {F_TID, F_START, F_FLAGS},
    [SLK_STREAM] = {F_TID, F_START, F_STREAM, F_DEV, F_COUNT},
};

static int kind_is_gpu(uint8_t k) {
  return k == SLK_KERNEL || k == SLK_MEMCPY || k == SLK_MEMSET || k == SLK_SYNC || k == SLK_GRAPH;
}

/* Delta key: per GPU stream for GPU records, per host thread for host records. */
static uint64_t delta_key(const struct slk_record *r) {
  if (kind_is_gpu(r->kind))
    return (1ull << 62) ^ ((uint64_t)r->device << 40) ^ (r->stream & 0xffffffffffull);
  return (2ull << 62) ^ r->tid;
}

void slk_delta_reset(struct slk_delta *d) {
  memset(d->used, 0, sizeof d->used);
  d->memo = 0;
  memset(d->near, 0, sizeof d->near);
  d->key[0] = 0; /* keeps static analyzers quiet; used[] is what counts */
}

/* Finds the slot of key; inserts it when absent and there is room. Deterministic, so the
 * writer and the reader agree on every base. Slot index 0 is reserved for "last correlation
 * id", which is delta-coded too. */
static uint64_t *delta_slot_find(struct slk_delta *d, uint64_t key);

static inline __attribute__((always_inline)) uint64_t *delta_slot(struct slk_delta *d,
                                                                  uint64_t key) {
  if (d->memo && d->key[d->memo] == key) return &d->last[d->memo]; /* used: memo is reset */
  /* the slot found last for a key of these low bits: the key's own slot when still in use and
   * holding it (a key has one slot per chunk) */
  uint32_t c = d->near[(key ^ key >> 40) & (SLK_DELTA_NEAR - 1)];
  if (c && d->used[c] && d->key[c] == key) {
    d->memo = c;
    return &d->last[c];
  }
  return delta_slot_find(d, key);
}

static uint64_t *delta_slot_find(struct slk_delta *d, uint64_t key) {
  uint64_t h = key * 0x9e3779b97f4a7c15ull;
  size_t i = (size_t)(h >> 52) % (SLK_DELTA_SLOTS - 1) + 1;
  for (size_t probes = 0; probes < 64; probes++) {
    if (!d->used[i]) {
      d->used[i] = 1;
      d->key[i] = key;
      d->last[i] = 0;
      d->memo = (uint32_t)i;
      d->near[(key ^ key >> 40) & (SLK_DELTA_NEAR - 1)] = (uint32_t)i;
      return &d->last[i];
    }
    if (d->key[i] == key) {
      d->memo = (uint32_t)i;
      d->near[(key ^ key >> 40) & (SLK_DELTA_NEAR - 1)] = (uint32_t)i;
      return &d->last[i];
    }
    i = i + 1 < SLK_DELTA_SLOTS ? i + 1 : 1;
  }
  return NULL; /* table crowded: full values, no delta */
}

static uint64_t *corr_slot(struct slk_delta *d) {
  if (!d->used[0]) {
    d->used[0] = 1;
    d->last[0] = 0;
  }
  return &d->last[0];
}

static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

static size_t put_varint(uint8_t *p, size_t cap, uint64_t v) {
  size_t n = 0;
  do {
    if (n >= cap) return 0;
    uint8_t b = v & 0x7f;
    v >>= 7;
    p[n++] = b | (v ? 0x80 : 0);
  } while (v);
  return n;
}

static size_t get_varint_long(const uint8_t *p, size_t len, uint64_t *v) {
  uint64_t x = 0;
  for (size_t n = 0; n < len && n < 10; n++) {
    x |= (uint64_t)(p[n] & 0x7f) << (7 * n);
    if (!(p[n] & 0x80)) {
      *v = x;
      return n + 1;
    }
  }
  return 0;
}

static inline __attribute__((always_inline)) size_t get_varint(const uint8_t *p, size_t len,
                                                               uint64_t *v) {
  if (len && p[0] < 0x80) { /* one byte: most fields */
    *v = p[0];
    return 1;
  }
  if (len >= 2 && p[1] < 0x80) { /* two: most durations and start deltas (no loop) */
    *v = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
    return 2;
  }
  return get_varint_long(p, len, v);
}

size_t slk_encode(struct slk_delta *d, const struct slk_record *r, uint8_t *out, size_t cap) {
  if (r->kind == 0 || r->kind >= SLK_KIND_MAX || cap < 4) return 0;
  uint8_t body[SLK_MAX_RECORD];
  size_t n = 0, w;
  uint64_t *base = NULL;
  for (const uint8_t *f = kind_fields[r->kind]; *f != F_END_OF_LIST; f++) {
    uint64_t v = 0;
    switch (*f) {
    case F_DEV: v = r->device; break;
    case F_STREAM: v = r->stream; break;
    case F_TID: v = r->tid; break;
    case F_START:
      base = delta_slot(d, delta_key(r));
      v = zigzag((int64_t)(r->start - (base ? *base : 0)));
      if (base) *base = r->start;
      break;
    case F_END:
      v = r->end > r->start ? r->end - r->start : 0;
      if (base && !d->v1) *base = r->start + v; /* format 2: the next start codes its gap */
      break;
    case F_CORR: {
      uint64_t *c = corr_slot(d);
      v = zigzag((int64_t)r->corr - (int64_t)*c);
      *c = r->corr;
      break;
    }
    case F_CORR0:
      if (r->corr) {
        uint64_t *c = corr_slot(d);
        v = zigzag((int64_t)r->corr - (int64_t)*c) + 1;
        *c = r->corr;
      }
      break;
    case F_NAME: v = r->name; break;
    case F_FN: v = r->fn; break;
    case F_CALLSITE: v = r->callsite; break;
    case F_PYSTACK: v = r->pystack; break;
    case F_BYTES: v = r->bytes; break;
    case F_COPYKIND: v = r->copy_kind; break;
    case F_SRCKIND: v = r->src_kind; break;
    case F_DSTKIND: v = r->dst_kind; break;
    case F_FLAGS: v = r->flags; break;
    case F_RESULT: v = r->result; break;
    case F_GRAPH: v = r->graph_id; break;
    case F_GRID0:
    case F_GRID1:
    case F_GRID2: v = zigzag(r->grid[*f - F_GRID0]); break;
    case F_BLOCK0:
    case F_BLOCK1:
    case F_BLOCK2: v = zigzag(r->block[*f - F_BLOCK0]); break;
    case F_SHMEM: v = r->shmem; break;
    case F_REGS: v = r->regs; break;
    case F_COUNT: v = r->count; break;
    case F_ID: v = r->id; break;
    case F_STR: {
      uint32_t len = r->str_len;
      if (len > SLK_MAX_RECORD - 32) len = SLK_MAX_RECORD - 32;
      w = put_varint(body + n, sizeof body - n, len);
      if (!w || sizeof body - n - w < len) return 0;
      n += w;
      memcpy(body + n, r->str, len);
      n += len;
      continue;
    }
    }
    w = put_varint(body + n, sizeof body - n, v);
    if (!w) return 0;
    n += w;
  }
  if (cap < 1) return 0;
  out[0] = r->kind;
  w = put_varint(out + 1, cap - 1, n);
  if (!w || cap - 1 - w < n) return 0;
  memcpy(out + 1 + w, body, n);
  return 1 + w + n;
}

/* 1 when every varint that starts in p[0..blen) ends inside it, at most 10 bytes long: the last
 * byte ends a varint and no 10 bytes in a row continue one (what most records' bodies are); 0
 * when not so or not known (blen 0 or past 64: then look field by field). room: the readable
 * bytes from p (the body and what follows). */
static inline int varints_end(const uint8_t *p, size_t blen, size_t room) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (!blen || blen > 64) return 0;
  /* the bytes that continue a varint as a mask, 8 at a time */
  uint64_t m = 0;
  for (size_t o = 0; o < blen; o += 8) {
    uint64_t v = 0;
    if (o + 8 <= room) { /* 8 bytes, those past the body masked off (a copy of fewer went
                            through the stack: a stall of a store forwarded to a wider load) */
      memcpy(&v, p + o, 8);
      if (blen - o < 8) v &= ~0ull >> (64 - 8 * (blen - o));
    } else {
      memcpy(&v, p + o, blen - o < 8 ? blen - o : 8);
    }
    m |= ((v & 0x8080808080808080ull) * 0x0002040810204081ull) >> 56 << o;
  }
  uint64_t run = m & m >> 1; /* runs of 2, then 4, 8 and 10 */
  run &= run >> 2;
  run &= run >> 4;
  run &= m >> 8 & m >> 9;
  return !(m >> (blen - 1) & 1) && !run;
#else
  (void)p, (void)blen, (void)room;
  return 0;
#endif
}

/* 1 when the fields f names (to its end) are what slk_decode reads from p[0..e): each a varint of
 * at most 10 bytes inside the body, a string's bytes after its length; fields past e are absent
 * (an older writer's shorter record), bytes past the fields are a newer minor's (not read). */
static int fields_end(const uint8_t *f, const uint8_t *p, const uint8_t *e) {
  for (; *f != F_END_OF_LIST && p != e; f++) {
    if (*f == F_STR) {
      uint64_t v;
      size_t n = get_varint(p, (size_t)(e - p), &v);
      if (!n || v > (uint64_t)(e - p - n)) return 0;
      p += n + v;
      continue;
    }
    size_t n = 0, room = (size_t)(e - p);
    while (n < room && n < 10 && (p[n] & 0x80))
      n++;
    if (n == room || n == 10) return 0;
    p += n + 1;
  }
  return 1;
}

/* One field of a record: f's varint at *pp, stored in r (base: the delta slot F_START found, for
 * F_END). 0 when the varint or a string does not fit. Inlined with a constant f, the switch goes.
 */
static inline __attribute__((always_inline)) int decode_field(struct slk_delta *d,
                                                              const uint8_t **pp, const uint8_t *e,
                                                              struct slk_record *r,
                                                              uint64_t **basep, int f) {
  uint64_t v;
  const uint8_t *p = *pp;
  size_t n = get_varint(p, (size_t)(e - p), &v);
  if (!n) return 0;
  p += n;
  uint64_t *base = *basep;
  switch (f) {
  case F_DEV: r->device = (uint32_t)v; break;
  case F_STREAM: r->stream = v; break;
  case F_TID: r->tid = v; break;
  case F_START:
    base = *basep = delta_slot(d, delta_key(r));
    r->start = (base ? *base : 0) + (uint64_t)unzigzag(v);
    if (base) *base = r->start;
    break;
  case F_END:
    r->end = r->start + v;
    if (base && !d->v1) *base = r->end;
    break;
  case F_CORR: {
    uint64_t *c = corr_slot(d);
    r->corr = (uint32_t)(*c + (uint64_t)unzigzag(v)); /* wraps: the id is 32 bits */
    *c = r->corr;
    break;
  }
  case F_CORR0:
    if (v) {
      uint64_t *c = corr_slot(d);
      r->corr = (uint32_t)(*c + (uint64_t)unzigzag(v - 1));
      *c = r->corr;
    }
    break;
  case F_NAME: r->name = (uint32_t)v; break;
  case F_FN: r->fn = (uint32_t)v; break;
  case F_CALLSITE: r->callsite = (uint32_t)v; break;
  case F_PYSTACK: r->pystack = (uint32_t)v; break;
  case F_BYTES: r->bytes = v; break;
  case F_COPYKIND: r->copy_kind = (uint8_t)v; break;
  case F_SRCKIND: r->src_kind = (uint8_t)v; break;
  case F_DSTKIND: r->dst_kind = (uint8_t)v; break;
  case F_FLAGS: r->flags = (uint32_t)v; break;
  case F_RESULT: r->result = (uint32_t)v; break;
  case F_GRAPH: r->graph_id = (uint32_t)v; break;
  case F_GRID0:
  case F_GRID1:
  case F_GRID2: r->grid[f - F_GRID0] = (int32_t)unzigzag(v); break;
  case F_BLOCK0:
  case F_BLOCK1:
  case F_BLOCK2: r->block[f - F_BLOCK0] = (int32_t)unzigzag(v); break;
  case F_SHMEM: r->shmem = (uint32_t)v; break;
  case F_REGS: r->regs = (uint32_t)v; break;
  case F_COUNT: r->count = v; break;
  case F_ID: r->id = (uint32_t)v; break;
  case F_STR:
    if (v > (uint64_t)(e - p)) return 0;
    r->str = (const char *)p;
    r->str_len = (uint32_t)v;
    p += v;
    break;
  }
  *pp = p;
  return 1;
}

/* The next field of the kinds decoded field by field below: an older writer's shorter record
 * ends early (the remaining fields stay zero). */
#define FIELD(f)                                                                                   \
  if (p == e) return total;                                                                        \
  if (!decode_field(d, &p, e, r, &base, f)) return 0

/* The end of a light decoding (LIGHT_END) or a decoding of the times (TIMES_END) after the
 * first i fields of kind k's list: the record checked before (slk_skip), or (check) the rest of
 * its fields checked here as slk_skip would. */
#define PART_END(i)                                                                                \
  return !check || rest_end(kind_fields[k] + (i), p, e, len - (size_t)(p - in)) ? total : 0
#define LIGHT_END(i)                                                                               \
  if (part == PART_LIGHT) PART_END(i)
#define TIMES_END(i)                                                                               \
  if (part == PART_TIMES) PART_END(i)

/* fields_end(f, p, e), first by the bytes' continuation bits (room: the bytes readable from p) */
static inline __attribute__((always_inline)) int rest_end(const uint8_t *f, const uint8_t *p,
                                                          const uint8_t *e, size_t room) {
  size_t n = (size_t)(e - p);
  if (!n || (n < 10 && !(e[-1] & 0x80))) return 1; /* the last byte ends every varint */
#ifdef __SSE2__
  if (n <= 16 && room >= 16) { /* varints_end on one 16-byte load */
    uint32_t m = (uint32_t)_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(const void *)p));
    m &= (1u << n) - 1;
    uint32_t run = m & m >> 1;
    run &= run >> 2;
    run &= run >> 4;
    run &= m >> 8 & m >> 9;
    if (!(m >> (n - 1) & 1) && !run) return 1;
  }
#endif
  return varints_end(p, n, room) || fields_end(f, p, e);
}

/* What decode fills of the most common kinds: every field, slk_decode_light's or
 * slk_decode_times'. */
enum { PART_WHOLE, PART_LIGHT, PART_TIMES };

/* slk_decode (PART_WHOLE), slk_decode_light (PART_LIGHT), slk_decode_times (PART_TIMES); check:
 * the fields not decoded checked as slk_skip checks them (slk_decode_times_checked). */
static inline __attribute__((always_inline)) size_t decode(struct slk_delta *d, const uint8_t *in,
                                                           size_t len, struct slk_record *r,
                                                           int part, int check) {
  uint64_t blen;
  if (len < 2) return 0;
  int k = in[0];
  int fast = k == SLK_KERNEL || k == SLK_MEMCPY || k == SLK_MEMSET || k == SLK_API ||
             k == SLK_HOST || k == SLK_MARKER;
  if (part == PART_TIMES && fast) { /* the fields decoded below, as a short record leaves them */
    r->device = r->tid = r->stream = r->start = r->end = 0;
  } else if (part == PART_LIGHT && fast) {
    r->device = r->tid = r->stream = r->start = r->end = r->bytes = 0;
    r->corr = r->name = r->fn = r->flags = r->result = r->callsite = r->graph_id = 0;
    r->copy_kind = r->src_kind = r->dst_kind = 0;
  } else {
    /* a copy of a zero record: 16-byte stores (memset's rep stos cost a fifth of the decode) */
    static const struct slk_record zero;
    *r = zero;
  }
  r->kind = (uint8_t)k;
  size_t w = get_varint(in + 1, len - 1, &blen);
  if (!w || blen > SLK_MAX_RECORD || blen > len - 1 - w) return 0;
  const uint8_t *p = in + 1 + w, *e = p + blen;
  size_t total = 1 + w + (size_t)blen;
  uint64_t *base = NULL;
  if (r->kind == 0 || r->kind >= SLK_KIND_MAX) return total; /* unknown: skipped */
  /* the most common kinds field by field (kind_fields' lists, unrolled); trailing fields of a
   * newer minor version are skipped; light: the rest of a record after the fields
   * slk_decode_light names (none of them delta-coded) */
  switch (r->kind) {
  case SLK_KERNEL:
    FIELD(F_DEV);
    FIELD(F_STREAM);
    FIELD(F_START);
    FIELD(F_END);
    TIMES_END(4);
    FIELD(F_CORR);
    FIELD(F_NAME);
    if (part == PART_LIGHT) { /* the launch shape's varints skipped (light is never checked) */
#ifdef __SSE2__
      /* eight varints' ends among the next 16 bytes of the body: past the eighth at once (the
       * byte loop's exit was mispredicted as the shapes' lengths vary) */
      int shape = 8; /* its varints left to skip */
      if (len - (size_t)(p - in) >= 16) {
        uint32_t m =
            ~(uint32_t)_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(const void *)p));
        m &= e - p < 16 ? (1u << (e - p)) - 1 : 0xffffu; /* the ends inside the body */
        for (int n = 0; n < 7; n++) /* the first seven ends cleared: the eighth left, if any */
          m &= m - 1;
        if (m) {
          p += __builtin_ctz(m) + 1;
          shape = 0;
        }
      }
#else
      int shape = 8;
#endif
      for (int n = shape; n && p != e; p++) /* else byte by byte */
        n -= !(*p & 0x80);
      FIELD(F_GRAPH);
      return total;
    }
    FIELD(F_GRID0);
    FIELD(F_GRID1);
    FIELD(F_GRID2);
    FIELD(F_BLOCK0);
    FIELD(F_BLOCK1);
    FIELD(F_BLOCK2);
    FIELD(F_SHMEM);
    FIELD(F_REGS);
    FIELD(F_GRAPH);
    return total;
  case SLK_MEMCPY:
    FIELD(F_DEV);
    FIELD(F_STREAM);
    FIELD(F_START);
    FIELD(F_END);
    TIMES_END(4);
    FIELD(F_CORR);
    LIGHT_END(5);
    FIELD(F_BYTES);
    FIELD(F_COPYKIND);
    FIELD(F_SRCKIND);
    FIELD(F_DSTKIND);
    FIELD(F_FLAGS);
    FIELD(F_GRAPH);
    return total;
  case SLK_MEMSET:
    FIELD(F_DEV);
    FIELD(F_STREAM);
    FIELD(F_START);
    FIELD(F_END);
    TIMES_END(4);
    FIELD(F_CORR);
    LIGHT_END(5);
    FIELD(F_BYTES);
    FIELD(F_DSTKIND);
    FIELD(F_FLAGS);
    FIELD(F_GRAPH);
    return total;
  case SLK_API:
    FIELD(F_TID);
    FIELD(F_START);
    FIELD(F_END);
    TIMES_END(3);
    FIELD(F_CORR);
    LIGHT_END(4);
    FIELD(F_FN);
    FIELD(F_RESULT);
    return total;
  case SLK_HOST:
    FIELD(F_TID);
    FIELD(F_START);
    FIELD(F_END);
    TIMES_END(3);
    FIELD(F_FN);
    FIELD(F_STREAM);
    FIELD(F_BYTES);
    FIELD(F_COPYKIND);
    FIELD(F_FLAGS);
    FIELD(F_RESULT);
    FIELD(F_CALLSITE);
    FIELD(F_CORR0);
    LIGHT_END(11);
    FIELD(F_PYSTACK);
    return total;
  case SLK_MARKER:
    FIELD(F_TID);
    FIELD(F_START);
    FIELD(F_END);
    TIMES_END(3);
    FIELD(F_NAME);
    return total;
  default: break;
  }
  for (const uint8_t *f = kind_fields[r->kind]; *f != F_END_OF_LIST; f++) {
    if (p == e) break; /* an older writer's shorter record: remaining fields stay zero */
    if (!decode_field(d, &p, e, r, &base, *f)) return 0;
  }
  return total; /* trailing fields of a newer minor version are skipped */
}

size_t slk_decode(struct slk_delta *d, const uint8_t *in, size_t len, struct slk_record *r) {
  return decode(d, in, len, r, PART_WHOLE, 0);
}

size_t slk_decode_light(struct slk_delta *d, const uint8_t *in, size_t len, struct slk_record *r) {
  return decode(d, in, len, r, PART_LIGHT, 0);
}

size_t slk_decode_times(struct slk_delta *d, const uint8_t *in, size_t len, struct slk_record *r) {
  return decode(d, in, len, r, PART_TIMES, 0);
}

size_t slk_decode_times_checked(struct slk_delta *d, const uint8_t *in, size_t len,
                                struct slk_record *r) {
  return decode(d, in, len, r, PART_TIMES, 1);
}
#undef FIELD
#undef PART_END
#undef LIGHT_END
#undef TIMES_END

size_t slk_skip(const uint8_t *in, size_t len) {
  uint64_t blen;
  if (len < 2) return 0;
  size_t w = get_varint(in + 1, len - 1, &blen);
  if (!w || blen > SLK_MAX_RECORD || blen > len - 1 - w) return 0;
  const uint8_t *p = in + 1 + w, *e = p + blen;
  size_t total = 1 + w + (size_t)blen;
  if (in[0] == 0 || in[0] >= SLK_KIND_MAX) return total;
  if (in[0] != SLK_STRING && varints_end(p, (size_t)blen, len - (size_t)(p - in))) return total;
  return fields_end(kind_fields[in[0]], p, e) ? total : 0;
}

/* CRC-32C: the SSE4.2 crc32 instruction where the CPU has it (the same polynomial), else
 * slicing-by-8 tables (8 bytes per step). The byte-at-a-time table cost as much as zstd's
 * decompression in the reader. */
static uint32_t crc_table[8][256];
static int crc_hw;
static void crc_table_init(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++)
      c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
    crc_table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int t = 1; t < 8; t++)
      crc_table[t][i] = crc_table[0][crc_table[t - 1][i] & 0xff] ^ (crc_table[t - 1][i] >> 8);
#if defined(__x86_64__) && !defined(SLACK_CRC_SOFTWARE)
  __builtin_cpu_init();
  crc_hw = __builtin_cpu_supports("sse4.2");
#endif
}

#if defined(__x86_64__) && !defined(SLACK_CRC_SOFTWARE)
__attribute__((target("sse4.2"))) static uint32_t crc_sse42(uint32_t crc, const uint8_t *p,
                                                            size_t len) {
  uint64_t c = crc;
  for (; len >= 8; p += 8, len -= 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    c = __builtin_ia32_crc32di(c, v);
  }
  uint32_t c32 = (uint32_t)c;
  while (len--)
    c32 = __builtin_ia32_crc32qi(c32, *p++);
  return c32;
}
#endif

static uint32_t crc_slice8(uint32_t crc, const uint8_t *p, size_t len) {
  const uint32_t(*t)[256] = (const uint32_t(*)[256])crc_table;
  for (; len >= 8; p += 8, len -= 8) {
    uint32_t lo =
        crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
    uint32_t hi =
        (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
    crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
          t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
  }
  while (len--)
    crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

uint32_t slk_crc32c(const void *buf, size_t len) {
  pthread_once(&crc_once, crc_table_init);
  uint32_t crc = 0xffffffffu;
#if defined(__x86_64__) && !defined(SLACK_CRC_SOFTWARE)
  if (crc_hw) return crc_sse42(crc, buf, len) ^ 0xffffffffu;
#endif
  return crc_slice8(crc, buf, len) ^ 0xffffffffu;
}

uint32_t slk_crc32c_software(const void *buf, size_t len) {
  pthread_once(&crc_once, crc_table_init);
  return crc_slice8(0xffffffffu, buf, len) ^ 0xffffffffu;
}

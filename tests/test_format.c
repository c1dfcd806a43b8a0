/* The record codec of format/format.c: every kind round-trips with random field values, the
 * delta state survives time going backwards, huge values and more streams than its table holds,
 * and decoding damaged or truncated input returns 0 instead of crashing. Run with no arguments;
 * exits 0 when every check passes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"

static int failures, checks;
#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    checks++;                                                                                      \
    if (!(cond)) {                                                                                 \
      failures++;                                                                                  \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);                     \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fputc('\n', stderr);                                                                         \
      if (failures > 20) exit(1);                                                                  \
    }                                                                                              \
  } while (0)

/* xorshift64*: deterministic, so a failure reproduces */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545f4914f6cdd1dull;
}
/* A value of random magnitude: small ones are common in traces, huge ones are the edge. */
static uint64_t rnd_val(void) {
  uint64_t shift;
  switch (rnd() % 5) {
  case 0: return 0;
  case 1: return rnd() % 128;
  case 2: return rnd() % 100000;
  case 3:
    shift = rnd() % 64; /* one call per statement: the sequence must not depend on the compiler */
    return rnd() >> shift;
  default: return rnd();
  }
}

static char strbuf[SLK_MAX_RECORD];

/* A record of kind k with random values in exactly the fields that kind encodes
 * (docs/FORMAT.md, the table of fields). end >= start, as the format requires. */
static struct slk_record rnd_record(uint8_t k) {
  struct slk_record r;
  memset(&r, 0, sizeof r);
  r.kind = k;
  int gpu =
      k == SLK_KERNEL || k == SLK_MEMCPY || k == SLK_MEMSET || k == SLK_SYNC || k == SLK_GRAPH;
  int timed = gpu || k == SLK_API || k == SLK_HOST || k == SLK_MARKER || k == SLK_OVERHEAD ||
              k == SLK_WINDOW;
  if (gpu || k == SLK_DEVICE || k == SLK_STREAM) r.device = (uint32_t)rnd_val();
  if (gpu || k == SLK_HOST || k == SLK_STREAM) r.stream = rnd_val();
  if (!gpu && k != SLK_STRING && k != SLK_DEVICE && k != SLK_WINDOW) r.tid = rnd_val();
  if (timed) {
    r.start = rnd_val();
    uint64_t d = rnd_val();
    r.end = r.start + d < r.start ? UINT64_MAX : r.start + d;
  }
  if (gpu || k == SLK_API) r.corr = (uint32_t)rnd_val();
  if (k == SLK_KERNEL || k == SLK_MARKER || k == SLK_DEVICE || k == SLK_THREAD)
    r.name = (uint32_t)rnd_val();
  if (k == SLK_SYNC || k == SLK_API || k == SLK_HOST || k == SLK_OVERHEAD || k == SLK_WINDOW)
    r.fn = (uint32_t)rnd_val();
  if (k == SLK_HOST) r.callsite = (uint32_t)rnd_val();
  if (k == SLK_MEMCPY || k == SLK_MEMSET || k == SLK_HOST || k == SLK_DEVICE) r.bytes = rnd_val();
  if (k == SLK_MEMCPY || k == SLK_HOST) r.copy_kind = (uint8_t)rnd();
  if (k == SLK_MEMCPY) r.src_kind = (uint8_t)rnd();
  if (k == SLK_MEMCPY || k == SLK_MEMSET) r.dst_kind = (uint8_t)rnd();
  if (k == SLK_MEMCPY || k == SLK_MEMSET || k == SLK_HOST || k == SLK_DROPS || k == SLK_WINDOW)
    r.flags = (uint32_t)rnd_val();
  if (k == SLK_API || k == SLK_HOST) r.result = (uint32_t)rnd_val();
  if (k == SLK_KERNEL || k == SLK_MEMCPY || k == SLK_MEMSET || k == SLK_GRAPH)
    r.graph_id = (uint32_t)rnd_val();
  if (k == SLK_KERNEL) {
    for (int i = 0; i < 3; i++) {
      r.grid[i] = (int32_t)rnd_val();
      r.block[i] = (int32_t)rnd_val();
    }
    r.shmem = (uint32_t)rnd_val();
  }
  if (k == SLK_KERNEL || k == SLK_DEVICE) r.regs = (uint32_t)rnd_val();
  if (k == SLK_SYNC || k == SLK_DROPS || k == SLK_STREAM) r.count = rnd_val();
  if (k == SLK_STREAM) r.start = rnd_val(); /* no end: the thread's delta base stays at start */
  if (k == SLK_STRING) {
    r.id = (uint32_t)rnd_val();
    r.str_len = (uint32_t)(rnd() % 4 == 0 ? rnd() % 5000 : rnd() % 64);
    for (uint32_t i = 0; i < r.str_len; i++)
      strbuf[i] = (char)rnd(); /* any bytes, NUL too */
    r.str = strbuf;
  }
  return r;
}

static int rec_equal(const struct slk_record *a, const struct slk_record *b) {
  return a->kind == b->kind && a->device == b->device && a->stream == b->stream &&
         a->tid == b->tid && a->start == b->start && a->end == b->end && a->corr == b->corr &&
         a->name == b->name && a->fn == b->fn && a->callsite == b->callsite &&
         a->bytes == b->bytes && a->copy_kind == b->copy_kind && a->src_kind == b->src_kind &&
         a->dst_kind == b->dst_kind && a->flags == b->flags && a->result == b->result &&
         a->graph_id == b->graph_id && a->shmem == b->shmem && a->regs == b->regs &&
         a->count == b->count &&
         /* a STRING's bytes share their place with a kernel's shape */
         (a->kind == SLK_STRING || (!memcmp(a->grid, b->grid, sizeof a->grid) &&
                                    !memcmp(a->block, b->block, sizeof a->block))) &&
         (a->kind != SLK_STRING || (a->id == b->id && a->str_len == b->str_len &&
                                    (!a->str_len || !memcmp(a->str, b->str, a->str_len))));
}

static void print_rec(const char *what, const struct slk_record *r) {
  fprintf(stderr,
          "  %s: kind=%u dev=%u stream=%llu tid=%llu start=%llu end=%llu corr=%u name=%u fn=%u "
          "bytes=%llu flags=%u graph=%u count=%llu id=%u str_len=%u\n",
          what, r->kind, r->device, (unsigned long long)r->stream, (unsigned long long)r->tid,
          (unsigned long long)r->start, (unsigned long long)r->end, r->corr, r->name, r->fn,
          (unsigned long long)r->bytes, r->flags, r->graph_id, (unsigned long long)r->count, r->id,
          r->str_len);
}

static struct slk_delta enc_d, dec_d;
static uint8_t buf[1 << 22];
static struct slk_record recs[20000];

/* Encodes recs[0..n) into one buffer with one delta state, decodes with another, compares. */
static void round_trip(const char *what, size_t n) {
  size_t len = 0;
  slk_delta_reset(&enc_d);
  slk_delta_reset(&dec_d);
  for (size_t i = 0; i < n; i++) {
    size_t w = slk_encode(&enc_d, &recs[i], buf + len, sizeof buf - len);
    CHECK(w > 0, "%s: record %zu (kind %u) did not encode", what, i, recs[i].kind);
    if (!w) return;
    len += w;
  }
  size_t pos = 0;
  for (size_t i = 0; i < n; i++) {
    struct slk_record out;
    size_t used = slk_decode(&dec_d, buf + pos, len - pos, &out);
    CHECK(used > 0, "%s: record %zu did not decode", what, i);
    if (!used) return;
    int eq = rec_equal(&recs[i], &out);
    CHECK(eq, "%s: record %zu (kind %s) differs after the round trip", what, i,
          slk_kind_name(recs[i].kind));
    if (!eq) {
      print_rec("wrote", &recs[i]);
      print_rec("read ", &out);
      return;
    }
    pos += used;
  }
  CHECK(pos == len, "%s: %zu bytes left after the last record", what, len - pos);
  /* slk_decode_light: the fields it names as slk_decode gives them, over a record full of other
   * values, and the same delta state after each record (the next record decodes the same) */
  struct slk_delta light_d;
  slk_delta_reset(&dec_d);
  slk_delta_reset(&light_d);
  pos = 0;
  for (size_t i = 0; i < n; i++) {
    struct slk_record full, lt;
    memset(&lt, 0xa5, sizeof lt);
    size_t used = slk_decode(&dec_d, buf + pos, len - pos, &full);
    size_t lused = slk_decode_light(&light_d, buf + pos, len - pos, &lt);
    int k = full.kind;
    int eq = used == lused && lt.kind == full.kind && lt.device == full.device &&
             lt.stream == full.stream && lt.tid == full.tid && lt.start == full.start &&
             lt.end == full.end && lt.corr == full.corr &&
             (k != SLK_STRING || lt.str_len == full.str_len) &&
             (k == SLK_API || lt.name == full.name) &&
             (k != SLK_KERNEL || lt.graph_id == full.graph_id) &&
             (k != SLK_HOST ||
              (lt.fn == full.fn && lt.bytes == full.bytes && lt.copy_kind == full.copy_kind &&
               lt.flags == full.flags && lt.result == full.result && lt.callsite == full.callsite));
    CHECK(eq, "%s: record %zu (kind %s): the light decoding differs", what, i,
          slk_kind_name((uint8_t)k));
    if (!eq || !used) return;
    pos += used;
  }
  /* slk_decode_times: the times and their keys as slk_decode gives them (the next record's
   * times decode the same), the whole record where its kind is not one it shortens (but for the
   * correlation id: their chain is skipped) */
  slk_delta_reset(&dec_d);
  slk_delta_reset(&light_d);
  pos = 0;
  for (size_t i = 0; i < n; i++) {
    struct slk_record full, tm;
    memset(&tm, 0xa5, sizeof tm);
    size_t used = slk_decode(&dec_d, buf + pos, len - pos, &full);
    size_t tused = slk_decode_times(&light_d, buf + pos, len - pos, &tm);
    int k = full.kind;
    int gpu = k == SLK_KERNEL || k == SLK_MEMCPY || k == SLK_MEMSET;
    int shortened = gpu || k == SLK_API || k == SLK_HOST || k == SLK_MARKER;
    if (!shortened) tm.corr = full.corr; /* the chain of correlation ids is skipped */
    int eq = used == tused && tm.kind == full.kind && tm.start == full.start &&
             tm.end == full.end &&
             (!gpu || (tm.device == full.device && tm.stream == full.stream)) &&
             (gpu || !shortened || tm.tid == full.tid) && (shortened || rec_equal(&tm, &full));
    CHECK(eq, "%s: record %zu (kind %s): the decoding of the times differs", what, i,
          slk_kind_name((uint8_t)k));
    if (!eq || !used) return;
    pos += used;
  }
}

static void test_every_kind_random(void) {
  for (int round = 0; round < 200; round++) {
    size_t n = 1 + rnd() % 300;
    for (size_t i = 0; i < n; i++)
      recs[i] = rnd_record((uint8_t)(1 + rnd() % (SLK_KIND_MAX - 1)));
    round_trip("random mix", n);
  }
  for (uint8_t k = 1; k < SLK_KIND_MAX; k++) {
    for (size_t i = 0; i < 500; i++)
      recs[i] = rnd_record(k);
    round_trip(slk_kind_name(k), 500);
  }
  /* STRING records hold their bytes in the shared strbuf: one string per round trip */
  for (int i = 0; i < 50; i++) {
    recs[0] = rnd_record(SLK_STRING);
    recs[1] = rnd_record(SLK_KERNEL);
    round_trip("string", 2);
  }
}

/* Few streams, start times jumping back and forth by huge amounts. */
static void test_time_backwards_and_huge(void) {
  static const uint64_t edges[] = {0,
                                   1,
                                   2,
                                   0x7fffffffffffffffull,
                                   0x8000000000000000ull,
                                   UINT64_MAX - 1,
                                   UINT64_MAX,
                                   1ull << 63 | 12345,
                                   1000000000};
  size_t ne = sizeof edges / sizeof edges[0], n = 0;
  for (size_t a = 0; a < ne; a++)
    for (size_t b = 0; b < ne; b++) {
      struct slk_record r = rnd_record(SLK_KERNEL);
      r.device = (uint32_t)(b % 2);
      r.stream = 7;
      r.start = edges[a];
      r.end = edges[a] + edges[b] < edges[a] ? UINT64_MAX : edges[a] + edges[b];
      r.corr = (uint32_t)edges[b];
      recs[n++] = r;
      struct slk_record h = rnd_record(SLK_HOST);
      h.tid = 42;
      h.start = edges[b];
      h.end = edges[b];
      recs[n++] = h;
    }
  round_trip("time backwards and huge values", n);

  /* strictly decreasing times on one stream */
  n = 0;
  for (uint64_t t = 5000; t > 7; t -= 7) {
    struct slk_record r = rnd_record(SLK_MEMCPY);
    r.device = 3;
    r.stream = 9;
    r.start = t * 1000003ull;
    r.end = r.start + t;
    recs[n++] = r;
  }
  round_trip("decreasing times", n);

  /* corr going down and wrapping around */
  n = 0;
  for (int i = 0; i < 100; i++) {
    struct slk_record r = rnd_record(SLK_API);
    r.corr = i % 2 ? UINT32_MAX - (uint32_t)i : (uint32_t)i;
    recs[n++] = r;
  }
  round_trip("corr wrapping", n);
}

/* More delta keys than the table's 4095 slots: the overflow is coded against 0. */
static void test_many_streams(void) {
  size_t n = 0;
  for (int pass = 0; pass < 2; pass++)
    for (uint64_t s = 0; s < 9000; s++) {
      struct slk_record r = rnd_record(s % 3 ? SLK_KERNEL : SLK_HOST);
      if (r.kind == SLK_KERNEL) r.device = (uint32_t)(s % 8); /* fields of the kind only */
      r.stream = s * 2654435761ull;
      if (r.kind == SLK_HOST) r.tid = s;
      r.start = 1700000000000000000ull + s * 1000 + (uint64_t)pass * 17 - (s % 5) * 3000;
      r.end = r.start + 500;
      recs[n++] = r;
    }
  round_trip("18000 records over 9000 delta keys", n);
}

/* Encoding into a buffer that is too small returns 0; an exact fit works. */
static void test_small_buffer(void) {
  struct slk_record r = rnd_record(SLK_KERNEL);
  uint8_t out[256];
  slk_delta_reset(&enc_d);
  size_t full = slk_encode(&enc_d, &r, out, sizeof out);
  CHECK(full > 0, "kernel does not encode");
  for (size_t cap = 0; cap < full; cap++) {
    slk_delta_reset(&enc_d);
    CHECK(slk_encode(&enc_d, &r, out, cap) == 0, "encode into %zu of %zu bytes succeeded", cap,
          full);
  }
  slk_delta_reset(&enc_d);
  CHECK(slk_encode(&enc_d, &r, out, full) == full, "exact-size buffer refused");
  struct slk_record bad = r;
  bad.kind = 0;
  CHECK(slk_encode(&enc_d, &bad, out, sizeof out) == 0, "kind 0 encoded");
  bad.kind = SLK_KIND_MAX;
  CHECK(slk_encode(&enc_d, &bad, out, sizeof out) == 0, "unknown kind encoded");
}

/* Every strict prefix of an encoded record decodes to 0; so does garbage, without crashing. */
static void test_truncated_and_garbage(void) {
  for (uint8_t k = 1; k < SLK_KIND_MAX; k++)
    for (int rep = 0; rep < 20; rep++) {
      struct slk_record r = rnd_record(k), out;
      uint8_t *enc = malloc(SLK_MAX_RECORD + 16);
      slk_delta_reset(&enc_d);
      size_t full = slk_encode(&enc_d, &r, enc, SLK_MAX_RECORD + 16);
      CHECK(full > 0, "kind %u does not encode", k);
      for (size_t cut = 0; cut < full; cut++) {
        /* a copy of exactly cut bytes: a read past it is caught by ASan */
        uint8_t *p = malloc(cut ? cut : 1);
        memcpy(p, enc, cut);
        slk_delta_reset(&dec_d);
        CHECK(slk_decode(&dec_d, p, cut, &out) == 0, "kind %u: %zu of %zu bytes decoded", k, cut,
              full);
        free(p);
      }
      slk_delta_reset(&dec_d);
      CHECK(slk_decode(&dec_d, enc, full, &out) == full, "kind %u: whole record refused", k);
      free(enc);
    }
  /* random bytes: any result is fine, as long as it stays inside the input */
  for (int rep = 0; rep < 20000; rep++) {
    size_t len = rnd() % 64;
    uint8_t *p = malloc(len ? len : 1);
    for (size_t i = 0; i < len; i++)
      p[i] = (uint8_t)rnd();
    if (len > 1 && rnd() % 2) p[0] = (uint8_t)(1 + rnd() % (SLK_KIND_MAX - 1));
    slk_delta_reset(&dec_d);
    struct slk_record out;
    size_t used = slk_decode(&dec_d, p, len, &out);
    CHECK(used <= len, "garbage decode consumed %zu of %zu bytes", used, len);
    free(p);
  }
  /* a length past SLK_MAX_RECORD is corruption */
  uint8_t big[16] = {SLK_KERNEL, 0x81, 0x80, 0x08}; /* len = 131073 */
  struct slk_record out;
  slk_delta_reset(&dec_d);
  CHECK(slk_decode(&dec_d, big, sizeof big, &out) == 0, "oversize length accepted");
  /* an over-long varint (11 bytes) is malformed */
  uint8_t longv[16] = {SLK_DROPS, 12,   0xff, 0xff, 0xff, 0xff, 0xff,
                       0xff,      0xff, 0xff, 0xff, 0xff, 0x01, 0};
  slk_delta_reset(&dec_d);
  CHECK(slk_decode(&dec_d, longv, 14, &out) == 0, "11-byte varint accepted");
}

/* Versions: unknown kinds are skipped whole; trailing fields of a newer minor are ignored; a
 * shorter record of an older writer leaves the missing fields 0. */
static void test_versions(void) {
  struct slk_record out;
  uint8_t unk[] = {200, 3, 1, 2, 3, SLK_DROPS, 3, 5, 6, 1};
  slk_delta_reset(&dec_d);
  CHECK(slk_decode(&dec_d, unk, sizeof unk, &out) == 5 && out.kind == 200, "unknown kind");
  CHECK(slk_decode(&dec_d, unk + 5, sizeof unk - 5, &out) == 5 && out.kind == SLK_DROPS &&
            out.tid == 5 && out.count == 6 && out.flags == 1,
        "record after an unknown kind");
  uint8_t newer[] = {SLK_DROPS, 6, 5, 6, 1, 0x80, 0x01, 9}; /* two extra fields */
  slk_delta_reset(&dec_d);
  CHECK(slk_decode(&dec_d, newer, sizeof newer, &out) == sizeof newer && out.tid == 5 &&
            out.count == 6 && out.flags == 1,
        "newer minor's trailing fields");
  uint8_t older[] = {SLK_DROPS, 1, 5}; /* tid only */
  slk_delta_reset(&dec_d);
  CHECK(slk_decode(&dec_d, older, sizeof older, &out) == sizeof older && out.tid == 5 &&
            out.count == 0 && out.flags == 0,
        "older writer's shorter record");
}

/* slk_skip and slk_decode_times_checked accept exactly what slk_decode accepts, with the same
 * length: records of every kind encoded, then cut and with bytes flipped. */
static void test_skip_matches_decode(void) {
  struct slk_delta enc, dec;
  memset(&enc, 0, sizeof enc);
  memset(&dec, 0, sizeof dec);
  uint8_t buf[256];
  uint32_t x = 99;
  int agree = 1;
  size_t tried = 0;
  for (int round = 0; round < 20000; round++) {
    struct slk_record r = {.kind = (uint8_t)(1 + round % (SLK_KIND_MAX - 1))};
    r.tid = (uint64_t)round * 977;
    r.start = 1000000ull * (uint64_t)round;
    r.end = r.start + (uint64_t)round % 5000;
    r.corr = (uint32_t)round;
    r.name = (uint32_t)round % 300;
    if (r.kind == SLK_STRING) { /* its bytes share their place with a kernel's shape */
      r.str = "kernel name";
      r.str_len = (uint32_t)(round % 12);
    } else {
      r.grid[0] = -round;
    }
    slk_delta_reset(&enc);
    size_t n = slk_encode(&enc, &r, buf, sizeof buf);
    if (!n) continue;
    for (int m = 0; m < 8; m++) {
      uint8_t t[256];
      memcpy(t, buf, n);
      x = x * 1103515245u + 12345u;
      size_t len = m == 0 ? n : (x >> 8) % (n + 1);
      if (m >= 2 && len) t[(x >> 20) % len] ^= (uint8_t)(1u << (x % 8));
      if (m >= 5 && len) t[(x >> 12) % len] |= 0x80;
      struct slk_record out;
      slk_delta_reset(&dec);
      size_t used = slk_decode(&dec, t, len, &out);
      agree &= slk_skip(t, len) == used;
      slk_delta_reset(&dec);
      agree &= slk_decode_times_checked(&dec, t, len, &out) == used;
      tried++;
    }
  }
  /* random bodies of every kind: bytes that continue a varint often, runs of them, lengths up
   * to past 64 */
  for (int round = 0; round < 200000; round++) {
    uint8_t t[96];
    x = x * 1103515245u + 12345u;
    size_t blen = (x >> 8) % 80;
    t[0] = (uint8_t)((x >> 16) % (SLK_KIND_MAX + 1));
    t[1] = (uint8_t)blen;
    int bias = (int)((x >> 4) % 4);
    for (size_t i = 0; i < blen; i++) {
      x = x * 1103515245u + 12345u;
      uint8_t b = (uint8_t)(x >> 16);
      if (bias == 1) b |= 0x80;                        /* long runs */
      if (bias == 2 && (x >> 28) % 3) b &= 0x7f;       /* short varints */
      if (bias == 3 && (x >> 26) % 16 == 0) b &= 0x7f; /* runs near 10 */
      if (bias == 3 && (x >> 26) % 16 != 0) b |= 0x80;
      t[2 + i] = b;
    }
    size_t len = 2 + blen;
    struct slk_record out;
    slk_delta_reset(&dec);
    size_t used = slk_decode(&dec, t, len, &out);
    agree &= slk_skip(t, len) == used;
    slk_delta_reset(&dec);
    agree &= slk_decode_times_checked(&dec, t, len, &out) == used;
    tried++;
  }
  CHECK(agree && tried > 300000,
        "slk_skip, slk_decode_times_checked and slk_decode agree on %zu inputs", tried);
}

static void test_names_and_crc(void) {
  CHECK(!strcmp(slk_fn_name(SLK_FN_LAUNCH), "cudaLaunchKernel"), "fn name");
  CHECK(!strcmp(slk_fn_name(100000), "unknown"), "fn name out of range");
  CHECK(slk_fn_is_sync(SLK_FN_DEVICE_SYNC) && !slk_fn_is_sync(SLK_FN_LAUNCH) &&
            !slk_fn_is_sync(100000),
        "fn sync");
  CHECK(!strcmp(slk_kind_name(SLK_KERNEL), "kernel") && !strcmp(slk_kind_name(99), "kind99"),
        "kind names");
  /* the CRC-32C check value */
  CHECK(slk_crc32c("123456789", 9) == 0xe3069283u, "crc32c(\"123456789\") = %08x",
        slk_crc32c("123456789", 9));
  CHECK(slk_crc32c("", 0) == 0, "crc32c of nothing");
  CHECK(slk_crc32c_software("123456789", 9) == 0xe3069283u, "table crc32c(\"123456789\") = %08x",
        slk_crc32c_software("123456789", 9));
  /* the instruction and the tables agree on every length and alignment */
  static uint8_t buf[4096 + 16];
  uint32_t x = 12345;
  for (size_t i = 0; i < sizeof buf; i++) {
    x = x * 1103515245u + 12345u;
    buf[i] = (uint8_t)(x >> 16);
  }
  int agree = 1;
  for (size_t off = 0; off < 9; off++)
    for (size_t len = 0; len < 4096; len += 1 + len / 7)
      agree &= slk_crc32c(buf + off, len) == slk_crc32c_software(buf + off, len);
  CHECK(agree, "crc32c: hardware and table results agree");
}

/* The function table's categories agree with the names, and with the sync column: every
 * cuda/cuMemcpy is a copy (the explicit directions by name), every Memset a memset, every
 * Launch a launch of its sort, every Synchronize a wait and synchronous by contract. */
static void test_fn_categories(void) {
  for (uint32_t fn = 1; fn < SLK_FN_COUNT; fn++) {
    const char *n = slk_fn_name(fn);
    int c = slk_fn_cat(fn);
    if (strstr(n, "Memcpy")) {
      CHECK(slk_fnc_is_copy(c), "%s: not a copy (%d)", n, c);
      if (strstr(n, "HtoD")) CHECK(c == SLK_FNC_COPY_HTOD, "%s: not host to device", n);
      if (strstr(n, "DtoH")) CHECK(c == SLK_FNC_COPY_DTOH, "%s: not device to host", n);
    } else if (strstr(n, "Memset")) {
      CHECK(c == SLK_FNC_MEMSET, "%s: not a memset (%d)", n, c);
    } else if (strstr(n, "GraphLaunch")) {
      CHECK(c == SLK_FNC_GRAPH, "%s: not a graph launch (%d)", n, c);
    } else if (strstr(n, "HostFunc")) {
      CHECK(c == SLK_FNC_HOSTFUNC, "%s: not a host function (%d)", n, c);
    } else if (strstr(n, "Launch")) {
      CHECK(c == SLK_FNC_LAUNCH, "%s: not a launch (%d)", n, c);
    } else if (strstr(n, "Synchronize") || !strcmp(n, "cudaFree") || !strcmp(n, "cuMemFree") ||
               !strcmp(n, "cudaFreeHost") || !strcmp(n, "cuMemFreeHost")) {
      /* a device free waits for the whole device (session 13), a page-locked host free too
       * (session 38) */
      CHECK(c == SLK_FNC_WAIT && slk_fn_is_sync(fn), "%s: not a synchronous wait (%d)", n, c);
    } else {
      CHECK(c == SLK_FNC_OTHER, "%s: category %d", n, c);
    }
    CHECK(slk_fnc_submits(c) == (c != SLK_FNC_WAIT && c != SLK_FNC_OTHER), "%s: submits", n);
  }
  CHECK(slk_fn_cat(SLK_FN_COUNT + 5) == SLK_FNC_OTHER, "an unknown id has a category");
}

int main(void) {
  test_fn_categories();
  test_every_kind_random();
  test_time_backwards_and_huge();
  test_many_streams();
  test_small_buffer();
  test_truncated_and_garbage();
  test_versions();
  test_names_and_crc();
  test_skip_matches_decode();
  printf("test_format: %d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}

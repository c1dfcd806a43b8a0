/* slack timeline: a trace as Chrome trace JSON, for Perfetto UI and chrome://tracing
 * (docs/slack-timeline.md).
 *
 *   host process (pid = the traced pid)
 *     one track per host thread: the calls slack's hooks saw (HOST records)
 *     "<thread>: CUDA API": CUPTI's API records (on the thread's own track when the trace has no
 *                           HOST records), each the tail of a flow arrow to its GPU work
 *     "<thread>: NVTX": NVTX ranges
 *   one process per GPU (pid = 0x40000000 + device)
 *     one track per stream: kernels, copies, memsets, each the head of a flow arrow; work that
 *       overlaps earlier work of its stream (programmatic dependent launch lets kernels of one
 *       stream overlap) goes to the stream's "overlap" tracks, as a track's slices must nest
 *     "idle": the gaps between GPU activity on the device
 *     "stalls": the classifier's idle stretches (classify.h), each named by its class
 *     "CUDA graph launches": graph spans
 *
 * Streaming: the trace is read twice and nothing grows with the number of events. The first pass
 * finds the start of the trace and the threads, devices and streams (to name their tracks); the
 * second writes one JSON event per record as it comes. Flow arrows need no index: the flow id is
 * the correlation id, written at the API record ("s") and at the GPU record ("f"). Idle gaps
 * need GPU activity in time order, which the file does not promise: each device keeps a sorted
 * window of at most IDLE_WINDOW busy intervals, writes the gaps of the older half when it fills,
 * and counts GPU records that arrive behind the written part (reported; they are drawn on their
 * stream but not taken out of the idle track). The stall track is the exception to streaming: it
 * needs the classification, which loads the trace in memory as `slack report` does (about 460
 * bytes per record), so it is drawn by default only up to STALLS_AUTO_MAX records (--stalls and
 * --no-stalls decide). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "json.h"
#include "nsys_names.h"
#include "report.h"
#include "slack.h"
#include "u64map.h"

static const char usage[] =
    "usage: slack timeline FILE -o OUT.json [--from MS] [--to MS] [--min-idle NS] [--mangled]\n"
    "                      [--stalls | --no-stalls]\n"
    "  -o, --output OUT  the JSON file to write ('-': standard output)\n"
    "  --from MS         leave out events that end before MS milliseconds after the trace start\n"
    "  --to MS           leave out events that start after MS milliseconds after the trace start\n"
    "  --min-idle NS     leave out idle gaps shorter than NS nanoseconds (default 0: all)\n"
    "  --mangled         kernel names as recorded (default: C++ names demangled)\n"
    "  --stalls          the stall track (each idle stretch named by its class) whatever the\n"
    "                    trace's size; by default up to 4 million records (it holds the trace\n"
    "                    in memory, as slack report does)\n"
    "  --no-stalls       no stall track\n"
    "Open OUT.json in https://ui.perfetto.dev or chrome://tracing.\n";

#define GPU_PID_BASE 0x40000000u
#define API_TID_BIT 0x40000000u  /* host thread's CUPTI API track */
#define NVTX_TID_BIT 0x20000000u /* host thread's NVTX track */
#define IDLE_TID 0x7ffffffeu
#define GRAPH_TID 0x7ffffffdu
#define STALL_TID 0x7fffffffu
/* records up to which the stall track is drawn by default */
#define STALLS_AUTO_MAX 4000000
#define IDLE_WINDOW 65536 /* busy intervals kept per device */
#define MAX_LANES 4       /* tracks per stream: the stream's own and its overlap tracks */
#define LANE_TID(stream, lane) ((uint32_t)(lane)*0x10000000u + ((uint32_t)(stream)&0x0fffffffu))

/* ---- output helpers: the hot path avoids printf ---- */

struct out {
  FILE *f;
  int first; /* no event written yet */
  uint64_t events;
  /* Caches per string id, in hash maps: a table indexed by id would be as large as the largest
   * id a record names (a damaged id of 0xfffffff0 made 4-32 GiB of them). Only ids the reader
   * holds a string for are cached, so they hold at most one entry per STRING record; a STRING
   * record that redefines an id empties them (cache_usable). */
  const struct trace_reader *rd; /* the reader whose ids they are (NULL: no caching) */
  uint64_t redefined;            /* its strings_redefined when they were last emptied */
  struct u64map plain;           /* string id -> 1 needs no escaping, 2 needs escaping */
  int mangled;                   /* kernel names as recorded */
  struct u64map demangled;       /* string id -> the demangled name (char *) or NO_DEMANGLING */
};

static char no_demangling[1];
#define NO_DEMANGLING no_demangling

static void put_u64(FILE *f, uint64_t v) {
  char b[24];
  int i = sizeof b;
  do {
    b[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  fwrite_unlocked(b + i, 1, sizeof b - (size_t)i, f);
}

/* ns as microseconds with three decimals: exact to the nanosecond. */
static void put_us(FILE *f, uint64_t ns) {
  char b[32];
  int i = sizeof b;
  uint64_t frac = ns % 1000, us = ns / 1000;
  for (int k = 0; k < 3; k++) {
    b[--i] = (char)('0' + frac % 10);
    frac /= 10;
  }
  b[--i] = '.';
  do {
    b[--i] = (char)('0' + us % 10);
    us /= 10;
  } while (us);
  fwrite_unlocked(b + i, 1, sizeof b - (size_t)i, f);
}

static void put_s(FILE *f, const char *s) { fputs_unlocked(s, f); }

static int plain_ascii(const char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f || *s == '"' || *s == '\\') return 0;
  return 1;
}

static void cache_clear(struct out *o) {
  for (size_t i = 0; i < o->demangled.cap; i++)
    if (o->demangled.used[i] && (char *)(uintptr_t)o->demangled.val[i] != NO_DEMANGLING)
      free((char *)(uintptr_t)o->demangled.val[i]);
  u64map_free(&o->demangled);
  u64map_free(&o->plain);
}

/* Whether the caches may hold id: it is defined (a cache hit implies it was when added), and
 * emptied first when a string was redefined since. */
static int cache_usable(struct out *o, uint32_t id) {
  if (!id || !o->rd) return 0;
  uint64_t redefined = trace_reader_stats(o->rd)->strings_redefined;
  if (redefined != o->redefined) {
    cache_clear(o);
    o->redefined = redefined;
  }
  return 1;
}

/* A JSON string literal of s; id (a string id, or 0) caches whether s needs escaping. */
static void put_str(struct out *o, const char *s, uint32_t id) {
  int plain;
  uint64_t v;
  if (cache_usable(o, id) && u64map_get(&o->plain, id, &v)) {
    plain = v == 1;
  } else {
    plain = plain_ascii(s);
    size_t slot;
    if (id && o->rd && trace_reader_has_string(o->rd, id) &&
        (slot = u64map_add(&o->plain, id)) != (size_t)-1)
      o->plain.val[slot] = plain ? 1 : 2;
  }
  if (plain) {
    putc_unlocked('"', o->f);
    fputs_unlocked(s, o->f);
    putc_unlocked('"', o->f);
  } else {
    json_write_string(o->f, s, strlen(s));
  }
}

/* A kernel name (or, with stack set, a call site's frames, one per line), demangled (cached per
 * string id: the same names come again and again). */
static void put_demangled(struct out *o, const struct trace_reader *rd, uint32_t id, int stack) {
  const char *raw = trace_reader_string(rd, id);
  if (o->mangled || !id) {
    put_str(o, raw, id);
    return;
  }
  uint64_t v;
  char *d;
  int cached = 0;
  if (cache_usable(o, id) && rd == o->rd && u64map_get(&o->demangled, id, &v)) {
    d = (char *)(uintptr_t)v;
    cached = 1;
  } else {
    d = stack ? frames_demangle(raw) : slack_demangle(raw);
    if (d && stack && !strcmp(d, raw)) {
      free(d);
      d = NULL;
    }
    if (!d) d = NO_DEMANGLING;
    size_t slot;
    if (rd == o->rd && o->rd && trace_reader_has_string(rd, id) &&
        (slot = u64map_add(&o->demangled, id)) != (size_t)-1) {
      o->demangled.val[slot] = (uint64_t)(uintptr_t)d;
      cached = 1;
    }
  }
  if (d == NO_DEMANGLING)
    put_str(o, raw, id);
  else
    json_write_string(o->f, d, strlen(d));
  if (!cached && d != NO_DEMANGLING) free(d);
}

static void put_kernel_name(struct out *o, const struct trace_reader *rd, uint32_t id) {
  put_demangled(o, rd, id, 0);
}

static void ev_start(struct out *o) {
  put_s(o->f, o->first ? "\n" : ",\n");
  o->first = 0;
  o->events++;
}

/* {"ph":"X","pid":P,"tid":T,"ts":..,"dur":..,"cat":"CAT","name":   (the caller writes the name
 * and "args", then closes the object) */
static void ev_x(struct out *o, uint32_t pid, uint32_t tid, uint64_t t0, uint64_t start,
                 uint64_t end, const char *cat) {
  ev_start(o);
  put_s(o->f, "{\"ph\":\"X\",\"pid\":");
  put_u64(o->f, pid);
  put_s(o->f, ",\"tid\":");
  put_u64(o->f, tid);
  put_s(o->f, ",\"ts\":");
  put_us(o->f, start - t0);
  put_s(o->f, ",\"dur\":");
  put_us(o->f, end > start ? end - start : 0);
  put_s(o->f, ",\"cat\":\"");
  put_s(o->f, cat);
  put_s(o->f, "\",\"name\":");
}

/* A flow event inside the slice [start, end] of track (pid, tid), so that it binds to that
 * slice: "s" just after the launching call begins (the GPU work cannot start before it), "f" at
 * the middle of the GPU work. */
static void ev_flow(struct out *o, char ph, uint32_t pid, uint32_t tid, uint64_t t0, uint64_t start,
                    uint64_t end, uint32_t id) {
  ev_start(o);
  put_s(o->f, ph == 's' ? "{\"ph\":\"s\"" : "{\"ph\":\"f\",\"bp\":\"e\"");
  put_s(o->f, ",\"cat\":\"launch\",\"name\":\"launch\",\"id\":");
  put_u64(o->f, id);
  put_s(o->f, ",\"pid\":");
  put_u64(o->f, pid);
  put_s(o->f, ",\"tid\":");
  put_u64(o->f, tid);
  put_s(o->f, ",\"ts\":");
  uint64_t d = end > start ? end - start : 0;
  put_us(o->f, start - t0 + (ph == 's' ? (d >= 2) : d / 2));
  put_s(o->f, "}");
}

static void ev_meta(struct out *o, const char *what, uint32_t pid, int has_tid, uint32_t tid,
                    const char *name, int64_t sort_index) {
  ev_start(o);
  put_s(o->f, "{\"ph\":\"M\",\"name\":\"");
  put_s(o->f, what);
  put_s(o->f, "\",\"pid\":");
  put_u64(o->f, pid);
  if (has_tid) {
    put_s(o->f, ",\"tid\":");
    put_u64(o->f, tid);
  }
  put_s(o->f, ",\"args\":{");
  if (name) {
    put_s(o->f, "\"name\":");
    put_str(o, name, 0);
  } else {
    put_s(o->f, "\"sort_index\":");
    fprintf(o->f, "%lld", (long long)sort_index);
  }
  put_s(o->f, "}}");
}

/* ---- idle gaps per device ---- */

struct iv {
  uint64_t s, e;
};

struct idle {
  uint32_t device;
  struct iv *v; /* disjoint, sorted busy intervals not yet written */
  size_t n;
  uint64_t watermark; /* gaps before this are written */
  int flushed;        /* watermark is set */
  uint64_t late;      /* GPU records that arrived behind the watermark */
};

struct timeline {
  const char *path;
  uint64_t t0, t1;            /* trace start and end (ns) */
  uint64_t from, to;          /* window (ns, absolute) */
  uint64_t min_idle;          /* ns */
  uint32_t host_pid;          /* pid of the host process in the JSON */
  int has_host;               /* HOST records in the trace: API records go to their own tracks */
  struct u64map threads;      /* tids with HOST, API or MARKER records */
  struct u64map thread_names; /* tid -> THREAD name string */
  struct u64map flow_fns;     /* API fn -> 1 + (whether its calls put work on the GPU) */
  struct u64map devices;      /* device -> index into idle[] */
  struct u64map streams;      /* (device << 40) ^ stream -> 1 */
  struct u64map api_threads;  /* tids with API records */
  struct u64map nvtx_threads;
  struct u64map graph_devices;
  struct u64map device_names; /* device -> DEVICE name string */
  struct idle *idle;
  size_t nidle;
  uint64_t (*lane_end)[MAX_LANES]; /* per stream (streams.val): when each lane's last slice ends */
  uint64_t overlapping;            /* slices drawn over another one (all lanes busy) */
  uint64_t count[SLK_KIND_MAX];
  uint64_t written[SLK_KIND_MAX];
  uint64_t gaps, idle_ns;
};

static int in_window(const struct timeline *tl, uint64_t start, uint64_t end) {
  return end >= tl->from && start <= tl->to;
}

static void idle_emit(struct timeline *tl, struct out *o, const struct idle *d, uint64_t s,
                      uint64_t e) {
  if (s < tl->from) s = tl->from;
  if (e > tl->to) e = tl->to;
  if (e <= s || e - s < tl->min_idle) return;
  ev_x(o, GPU_PID_BASE + d->device, IDLE_TID, tl->t0, s, e, "stall");
  put_s(o->f, "\"idle\",\"args\":{\"class\":\"unclassified\",\"ns\":");
  put_u64(o->f, e - s);
  put_s(o->f, "}}");
  tl->gaps++;
  tl->idle_ns += e - s;
}

/* Writes the gaps between v[0..k] (the first k+1 intervals) and drops v[0..k). */
static void idle_flush(struct timeline *tl, struct out *o, struct idle *d, size_t k) {
  for (size_t i = 0; i < k; i++)
    idle_emit(tl, o, d, d->v[i].e, d->v[i + 1].s);
  d->watermark = d->v[k].s;
  d->flushed = 1;
  memmove(d->v, d->v + k, (d->n - k) * sizeof *d->v);
  d->n -= k;
}

static void idle_add(struct timeline *tl, struct out *o, struct idle *d, uint64_t s, uint64_t e) {
  if (e < s) e = s;
  if (d->flushed && s < d->watermark) {
    if (e <= d->watermark) {
      d->late++;
      return;
    }
    s = d->watermark;
  }
  /* first interval that ends at or after s: the ends of disjoint sorted intervals are sorted */
  size_t lo = 0, hi = d->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (d->v[mid].e < s)
      lo = mid + 1;
    else
      hi = mid;
  }
  size_t j = lo;
  while (j < d->n && d->v[j].s <= e) {
    if (d->v[j].s < s) s = d->v[j].s;
    if (d->v[j].e > e) e = d->v[j].e;
    j++;
  }
  /* v[lo..j) merge into one interval at lo */
  if (j == lo) {
    memmove(d->v + lo + 1, d->v + lo, (d->n - lo) * sizeof *d->v);
    d->n++;
  } else if (j > lo + 1) {
    memmove(d->v + lo + 1, d->v + j, (d->n - j) * sizeof *d->v);
    d->n -= j - lo - 1;
  }
  d->v[lo] = (struct iv){s, e};
  if (d->n >= IDLE_WINDOW) idle_flush(tl, o, d, IDLE_WINDOW / 2);
}

/* ---- the two passes ---- */

static int has_time(uint8_t k) {
  return (k >= SLK_KERNEL && k <= SLK_MARKER) || k == SLK_GRAPH || k == SLK_OVERHEAD;
}

static int gpu_work(uint8_t k) { return k == SLK_KERNEL || k == SLK_MEMCPY || k == SLK_MEMSET; }

static uint64_t stream_key(uint32_t device, uint64_t stream) {
  return ((uint64_t)device << 40) ^ (stream & 0xffffffffffull);
}

/* Pass 1: window, threads, devices, streams. The reader stays open for the track names. */
static int scan(struct timeline *tl, struct trace_reader *rd) {
  struct slk_record r;
  int first = 1;
  while (trace_reader_next(rd, &r)) {
    tl->count[r.kind]++;
    if (has_time(r.kind)) {
      if (first || r.start < tl->t0) tl->t0 = r.start;
      if (first || r.end > tl->t1) tl->t1 = r.end > r.start ? r.end : r.start;
      first = 0;
    }
    size_t slot = 0;
    switch (r.kind) {
    case SLK_THREAD:
      slot = u64map_add(&tl->thread_names, r.tid);
      if (slot != (size_t)-1) tl->thread_names.val[slot] = r.name;
      break;
    case SLK_HOST: slot = u64map_add(&tl->threads, r.tid); break;
    case SLK_API:
      slot = u64map_add(&tl->threads, r.tid);
      if (slot != (size_t)-1) slot = u64map_add(&tl->api_threads, r.tid);
      break;
    case SLK_MARKER:
      slot = u64map_add(&tl->threads, r.tid);
      if (slot != (size_t)-1) slot = u64map_add(&tl->nvtx_threads, r.tid);
      break;
    case SLK_KERNEL:
    case SLK_MEMCPY:
    case SLK_MEMSET:
      slot = u64map_add(&tl->streams, stream_key(r.device, r.stream));
      if (slot != (size_t)-1) slot = u64map_add(&tl->devices, r.device);
      break;
    case SLK_GRAPH:
      slot = u64map_add(&tl->devices, r.device);
      if (slot != (size_t)-1) slot = u64map_add(&tl->graph_devices, r.device);
      break;
    case SLK_DEVICE:
      slot = u64map_add(&tl->devices, r.device);
      if (slot != (size_t)-1 && r.name &&
          (slot = u64map_add(&tl->device_names, r.device)) != (size_t)-1)
        tl->device_names.val[slot] = r.name;
      break;
    }
    if (slot == (size_t)-1) return -1;
  }
  tl->has_host = tl->count[SLK_HOST] > 0;
  return 0;
}

static const char *thread_name(const struct timeline *tl, const struct trace_reader *rd,
                               uint64_t tid, char *buf, size_t len) {
  size_t i = tl->thread_names.cap ? u64map_slot(&tl->thread_names, tid) : 0;
  uint32_t name = tl->thread_names.cap && tl->thread_names.used[i] ? tl->thread_names.val[i] : 0;
  if (name)
    snprintf(buf, len, "%s (%llu)", trace_reader_string(rd, name), (unsigned long long)tid);
  else
    snprintf(buf, len, "thread %llu", (unsigned long long)tid);
  return buf;
}

/* Process and track names, from what pass 1 found. */
static int write_metadata(struct timeline *tl, struct out *o, const struct trace_reader *rd) {
  char buf[512], name[600];
  const char *cmd = trace_reader_header(rd, "cmdline");
  const char *source = trace_reader_header(rd, "source");
  snprintf(buf, sizeof buf, "host: %s%s(pid %u)", cmd && *cmd ? cmd : "", cmd && *cmd ? " " : "",
           tl->host_pid);
  if (source && !strcmp(source, "nsys-sqlite")) {
    size_t n = strlen(buf);
    snprintf(buf + n, sizeof buf - n, " [imported from nsys]");
  }
  ev_meta(o, "process_name", tl->host_pid, 0, 0, buf, 0);
  ev_meta(o, "process_sort_index", tl->host_pid, 0, 0, NULL, 0);
  for (size_t i = 0; i < tl->threads.cap; i++) {
    if (!tl->threads.used[i]) continue;
    uint64_t tid = tl->threads.key[i];
    uint32_t t = (uint32_t)tid;
    thread_name(tl, rd, tid, buf, sizeof buf);
    ev_meta(o, "thread_name", tl->host_pid, 1, t, buf, 0);
    if (tl->has_host && tl->api_threads.cap) {
      size_t j = u64map_slot(&tl->api_threads, tid);
      if (tl->api_threads.used[j]) {
        snprintf(name, sizeof name, "%s: CUDA API (CUPTI)", buf);
        ev_meta(o, "thread_name", tl->host_pid, 1, API_TID_BIT | (t & (API_TID_BIT - 1)), name, 0);
      }
    }
    if (tl->nvtx_threads.cap) {
      size_t j = u64map_slot(&tl->nvtx_threads, tid);
      if (tl->nvtx_threads.used[j]) {
        snprintf(name, sizeof name, "%s: NVTX", buf);
        ev_meta(o, "thread_name", tl->host_pid, 1, NVTX_TID_BIT | (t & (NVTX_TID_BIT - 1)), name,
                0);
      }
    }
  }
  /* devices, named after their DEVICE records */
  tl->idle = calloc(tl->devices.n ? tl->devices.n : 1, sizeof *tl->idle);
  if (!tl->idle) return -1;
  for (size_t i = 0; i < tl->devices.cap; i++) {
    if (!tl->devices.used[i]) continue;
    struct idle *d = &tl->idle[tl->nidle];
    d->device = (uint32_t)tl->devices.key[i];
    d->v = malloc(IDLE_WINDOW * sizeof *d->v);
    if (!d->v) return -1;
    tl->devices.val[i] = (uint32_t)tl->nidle++;
    uint32_t pid = GPU_PID_BASE + d->device;
    size_t ns = tl->device_names.cap ? u64map_slot(&tl->device_names, d->device) : 0;
    if (tl->device_names.cap && tl->device_names.used[ns])
      snprintf(buf, sizeof buf, "GPU %u: %s", d->device,
               trace_reader_string(rd, tl->device_names.val[ns]));
    else
      snprintf(buf, sizeof buf, "GPU %u", d->device);
    ev_meta(o, "process_name", pid, 0, 0, buf, 0);
    ev_meta(o, "process_sort_index", pid, 0, 0, NULL, 1 + (int64_t)d->device);
    ev_meta(o, "thread_name", pid, 1, IDLE_TID, "idle gaps", 0);
    ev_meta(o, "thread_sort_index", pid, 1, IDLE_TID, NULL, -2);
    if (tl->graph_devices.cap &&
        tl->graph_devices.used[u64map_slot(&tl->graph_devices, d->device)]) {
      ev_meta(o, "thread_name", pid, 1, GRAPH_TID, "CUDA graph launches", 0);
      ev_meta(o, "thread_sort_index", pid, 1, GRAPH_TID, NULL, -1);
    }
  }
  size_t nstreams = 0;
  tl->lane_end = calloc(tl->streams.n ? tl->streams.n : 1, sizeof *tl->lane_end);
  if (!tl->lane_end) return -1;
  for (size_t i = 0; i < tl->streams.cap; i++) {
    if (!tl->streams.used[i]) continue;
    uint64_t k = tl->streams.key[i];
    uint32_t device = (uint32_t)(k >> 40), stream = (uint32_t)(k & 0xffffffffffull);
    tl->streams.val[i] = (uint32_t)(nstreams++);
    snprintf(buf, sizeof buf, "stream %u", stream);
    ev_meta(o, "thread_name", GPU_PID_BASE + device, 1, LANE_TID(stream, 0), buf, 0);
  }
  return 0;
}

/* The track of a GPU record: its stream's first lane whose last slice ends by the time it starts
 * (records of a stream come mostly in order), a new overlap track named on first use, or when all
 * MAX_LANES are busy the one that frees first (then slices cross: counted). */
static uint32_t lane_tid(struct timeline *tl, struct out *o, const struct slk_record *r) {
  size_t i = u64map_slot(&tl->streams, stream_key(r->device, r->stream));
  if (!tl->streams.used[i]) return LANE_TID(r->stream, 0);
  uint64_t *end = tl->lane_end[tl->streams.val[i]];
  int lane = 0;
  for (int k = 1; k < MAX_LANES && end[lane] > r->start; k++)
    if (end[k] <= r->start || end[k] < end[lane]) lane = k;
  if (end[lane] > r->start) tl->overlapping++;
  if (!end[lane] && lane) {
    char buf[64];
    snprintf(buf, sizeof buf, "stream %u (overlap %d)", (uint32_t)(r->stream & 0x0fffffffu), lane);
    ev_meta(o, "thread_name", GPU_PID_BASE + r->device, 1, LANE_TID(r->stream, lane), buf, 0);
  }
  if (r->end > end[lane]) end[lane] = r->end > r->start ? r->end : r->start + 1;
  return LANE_TID(r->stream, lane);
}

static struct idle *idle_of(struct timeline *tl, uint32_t device) {
  if (!tl->devices.cap) return NULL;
  size_t i = u64map_slot(&tl->devices, device);
  return tl->devices.used[i] ? &tl->idle[tl->devices.val[i]] : NULL;
}

/* Whether calls of the API function fn put work on the GPU (launches, copies, memsets, graph
 * launches: the calls whose correlation id a GPU record carries), so that a flow starts there.
 * Unknown ids count as yes. */
static int launches_work(struct timeline *tl, uint32_t fn) {
  static const char *const prefix[] = {"cudaLaunch",      "cudaMemcpy",   "cudaMemset",
                                       "cudaGraphLaunch", "__cudaLaunch", "cuLaunch",
                                       "cuMemcpy",        "cuMemset",     "cuGraphLaunch"};
  size_t slot = u64map_add(&tl->flow_fns, fn);
  if (slot == (size_t)-1) return 1;
  if (!tl->flow_fns.val[slot]) {
    const char *name = nsys_api_name(fn);
    int yes = !name;
    for (size_t i = 0; !yes && i < sizeof prefix / sizeof prefix[0]; i++)
      yes = !strncmp(name, prefix[i], strlen(prefix[i]));
    tl->flow_fns.val[slot] = 1 + (uint32_t)yes;
  }
  return tl->flow_fns.val[slot] == 2;
}

static void write_record(struct timeline *tl, struct out *o, const struct trace_reader *rd,
                         const struct slk_record *r) {
  FILE *f = o->f;
  char buf[256];
  if (!has_time(r->kind)) return;
  if (gpu_work(r->kind)) {
    struct idle *d = idle_of(tl, r->device);
    if (d) idle_add(tl, o, d, r->start, r->end);
  }
  if (!in_window(tl, r->start, r->end)) return;
  uint32_t gpu_pid = GPU_PID_BASE + r->device;
  uint32_t stream_tid = gpu_work(r->kind) ? lane_tid(tl, o, r) : 0;
  uint32_t tid = (uint32_t)r->tid;
  switch (r->kind) {
  case SLK_KERNEL:
    ev_x(o, gpu_pid, stream_tid, tl->t0, r->start, r->end, "kernel");
    put_kernel_name(o, rd, r->name);
    put_s(f, ",\"args\":{\"grid\":\"");
    fprintf(f, "%d,%d,%d\",\"block\":\"%d,%d,%d\",\"shmem\":%u,\"regs\":%u,\"corr\":%u", r->grid[0],
            r->grid[1], r->grid[2], r->block[0], r->block[1], r->block[2], r->shmem, r->regs,
            r->corr);
    if (r->graph_id) fprintf(f, ",\"graph\":%u", r->graph_id);
    put_s(f, "}}");
    break;
  case SLK_MEMCPY:
  case SLK_MEMSET:
    ev_x(o, gpu_pid, stream_tid, tl->t0, r->start, r->end,
         r->kind == SLK_MEMCPY ? "memcpy" : "memset");
    put_s(f, r->kind == SLK_MEMCPY ? "\"" : "\"" NSYS_MEMSET_LABEL);
    if (r->kind == SLK_MEMCPY) put_s(f, nsys_memcpy_label(r->copy_kind));
    put_s(f, "\",\"args\":{\"bytes\":");
    put_u64(f, r->bytes);
    put_s(f, ",\"corr\":");
    put_u64(f, r->corr);
    put_s(f, "}}");
    break;
  case SLK_GRAPH:
    ev_x(o, gpu_pid, GRAPH_TID, tl->t0, r->start, r->end, "graph");
    fprintf(f, "\"graph %u\",\"args\":{\"stream\":%llu,\"corr\":%u}}", r->graph_id,
            (unsigned long long)r->stream, r->corr);
    break;
  case SLK_HOST:
    ev_x(o, tl->host_pid, tid, tl->t0, r->start, r->end, "host");
    put_str(o, slk_fn_name(r->fn), 0);
    put_s(f, ",\"args\":{\"stream\":");
    put_u64(f, r->stream);
    if (r->bytes) { /* a query: how many answers "not ready" it stands for (format 2.8) */
      put_s(f, slk_fn_is_query(r->fn) ? ",\"not_ready\":" : ",\"bytes\":");
      put_u64(f, r->bytes);
    }
    if (r->flags & SLK_HOST_SYNCHRONOUS) put_s(f, ",\"blocking\":true");
    if ((r->flags & SLK_HOST_POLLED) && !r->result) put_s(f, ",\"polled_until_done\":true");
    if (r->pystack) {
      put_s(f, ",\"python\":");
      put_str(o, trace_reader_string(rd, r->pystack), r->pystack);
    }
    if (r->callsite) {
      put_s(f, ",\"callsite\":");
      put_demangled(o, rd, r->callsite, 1);
    }
    put_s(f, ",\"result\":");
    put_u64(f, r->result);
    if (r->corr) {
      put_s(f, ",\"corr\":");
      put_u64(f, r->corr);
    }
    put_s(f, "}}");
    /* format 1.1: the host call carries its API call's correlation id: the arrow starts here */
    if (r->corr) ev_flow(o, 's', tl->host_pid, tid, tl->t0, r->start, r->end, r->corr);
    break;
  case SLK_API: {
    uint32_t t = tl->has_host ? API_TID_BIT | (tid & (API_TID_BIT - 1)) : tid;
    const char *full = nsys_api_name(r->fn);
    ev_x(o, tl->host_pid, t, tl->t0, r->start, r->end, "cuda_api");
    if (full)
      put_str(o, nsys_api_base_name(full, buf, sizeof buf), 0);
    else
      fprintf(f, "\"%s cbid %u\"", r->fn & SLK_API_DRIVER ? "driver" : "runtime",
              r->fn & ~SLK_API_DRIVER);
    put_s(f, ",\"args\":{\"corr\":");
    put_u64(f, r->corr);
    put_s(f, ",\"result\":");
    put_u64(f, r->result);
    put_s(f, "}}");
    if (r->corr && launches_work(tl, r->fn))
      ev_flow(o, 's', tl->host_pid, t, tl->t0, r->start, r->end, r->corr);
    break;
  }
  case SLK_MARKER:
    ev_x(o, tl->host_pid, NVTX_TID_BIT | (tid & (NVTX_TID_BIT - 1)), tl->t0, r->start, r->end,
         "nvtx");
    put_str(o, r->name ? trace_reader_string(rd, r->name) : "", r->name);
    put_s(f, ",\"args\":{}}");
    break;
  default: return; /* SYNC, OVERHEAD: not drawn */
  }
  tl->written[r->kind]++;
  if (gpu_work(r->kind) && r->corr)
    ev_flow(o, 'f', gpu_pid, stream_tid, tl->t0, r->start, r->end, r->corr);
}

/* ---- the stall track: the classifier's idle stretches ---- */

/* Classifies the trace as `slack report` does and writes each GPU's idle stretches on its stall
 * track, above the idle gaps: a slice per stretch named by its class ("data starvation"; args:
 * the class's JSON key, and for `other` its reason), cut to --from/--to and --min-idle like the
 * gaps. Returns the slices written, or -1 when the trace could not be classified. */
static long long write_stalls(struct timeline *tl, struct out *o) {
  struct report rp;
  struct cls_options opt;
  char *paths[] = {(char *)tl->path};
  long long n = 0;
  cls_options_default(&opt);
  if (report_load(&rp, "timeline", paths, 1, &opt) != EXIT_OK) return -1;
  for (size_t i = 0; i < rp.cr.ngpus; i++) {
    const struct cls_gpu *g = &rp.cr.gpus[i];
    uint32_t pid = GPU_PID_BASE + g->device;
    ev_meta(o, "thread_name", pid, 1, STALL_TID, "stalls (slack's classes)", 0);
    ev_meta(o, "thread_sort_index", pid, 1, STALL_TID, NULL, -3);
    for (size_t k = 0; k < g->nseg; k++) {
      const struct cls_segment *sg = &g->seg[k];
      uint64_t s = sg->start > tl->from ? sg->start : tl->from;
      uint64_t e = sg->end < tl->to ? sg->end : tl->to;
      if (sg->cls < CLS_FIRST_IDLE || e <= s || e - s < tl->min_idle || s < tl->t0) continue;
      ev_x(o, pid, STALL_TID, tl->t0, s, e, "stall_class");
      put_str(o, report_class_label[sg->cls], 0);
      put_s(o->f, ",\"args\":{\"class\":\"");
      put_s(o->f, cls_name(sg->cls));
      if (sg->cls == CLS_OTHER) {
        put_s(o->f, "\",\"reason\":\"");
        put_s(o->f, cls_reason_name(sg->why));
      }
      put_s(o->f, "\",\"ns\":");
      put_u64(o->f, e - s);
      put_s(o->f, "}}");
      n++;
    }
  }
  report_unload(&rp);
  return n;
}

static int parse_ms(const char *s, double *ms) {
  char *end;
  errno = 0;
  *ms = strtod(s, &end);
  return errno || end == s || *end || *ms < 0;
}

int cmd_timeline(int argc, char **argv) {
  if (slack_wants_help(argc, argv)) {
    fputs(usage, stdout);
    return EXIT_OK;
  }
  const char *path = NULL, *out_path = NULL;
  double from_ms = -1, to_ms = -1, min_idle = 0;
  int mangled = 0, stalls = -1; /* -1: by the trace's size */
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "--from") || !strcmp(a, "--to") ||
        !strcmp(a, "--min-idle")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "slack timeline: %s needs a value\n", a);
        fputs(usage, stderr);
        return EXIT_USAGE;
      }
      const char *v = argv[++i];
      if (a[1] == 'o' || !strcmp(a, "--output"))
        out_path = v;
      else if (parse_ms(v, !strcmp(a, "--from") ? &from_ms
                           : !strcmp(a, "--to") ? &to_ms
                                                : &min_idle)) {
        fprintf(stderr, "slack timeline: %s needs a number >= 0, not '%s'\n", a, v);
        return EXIT_USAGE;
      }
    } else if (!strcmp(a, "--mangled")) {
      mangled = 1;
    } else if (!strcmp(a, "--no-stalls") || !strcmp(a, "--stalls")) {
      stalls = a[2] == 's';
    } else if (a[0] == '-' && a[1]) {
      return slack_bad_option("timeline", usage, a);
    } else if (path) {
      return slack_usage_error("timeline", usage, "one trace file at a time");
    } else {
      path = a;
    }
  }
  if (!path) return slack_usage_error("timeline", usage, "no trace file given");
  if (!out_path) return slack_usage_error("timeline", usage, "no output file given (-o OUT.json)");
  if (from_ms >= 0 && to_ms >= 0 && to_ms < from_ms)
    return slack_usage_error("timeline", usage, "--to is before --from");

  struct timeline tl;
  memset(&tl, 0, sizeof tl);
  tl.path = path;
  tl.min_idle = (uint64_t)min_idle;
  struct trace_reader *rd = slack_open_trace("timeline", path);
  if (!rd) return EXIT_ERROR;
  int rc = EXIT_ERROR;
  struct out o = {0};
  o.first = 1;
  o.mangled = mangled;
  struct trace_reader *rd2 = NULL;
  if (scan(&tl, rd)) {
    fprintf(stderr, "slack timeline: out of memory\n");
    goto done;
  }
  if (stalls < 0) {
    uint64_t records = 0;
    for (int k = 0; k < SLK_KIND_MAX; k++)
      records += tl.count[k];
    stalls = records <= STALLS_AUTO_MAX;
    if (!stalls)
      fprintf(stderr,
              "slack timeline: note: no stall track for %llu records (it holds the trace in "
              "memory, about 460 bytes a record); --stalls draws it\n",
              (unsigned long long)records);
  }
  const char *pid = trace_reader_header(rd, "pid");
  tl.host_pid = pid && *pid ? (uint32_t)strtoul(pid, NULL, 10) : 1;
  if (!tl.host_pid || tl.host_pid >= NVTX_TID_BIT) tl.host_pid = 1;
  tl.from = tl.t0 + (from_ms > 0 ? (uint64_t)(from_ms * 1e6) : 0);
  tl.to = to_ms >= 0 ? tl.t0 + (uint64_t)(to_ms * 1e6) : UINT64_MAX;

  if (!strcmp(out_path, "-")) {
    o.f = stdout;
  } else if (!(o.f = fopen(out_path, "w"))) {
    fprintf(stderr, "slack timeline: cannot write %s: %s\n", out_path, strerror(errno));
    goto done;
  }
  setvbuf(o.f, NULL, _IOFBF, 1 << 20);
  put_s(o.f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
  if (write_metadata(&tl, &o, rd)) {
    fprintf(stderr, "slack timeline: out of memory\n");
    goto done;
  }
  /* pass 2 */
  if (!(rd2 = slack_open_trace("timeline", path))) goto done;
  o.rd = rd2; /* the string ids of pass 2 are cached */
  struct slk_record r;
  while (trace_reader_next(rd2, &r))
    write_record(&tl, &o, rd2, &r);
  slack_warn_tail(stderr, "timeline", path, rd2);
  uint64_t late = 0;
  for (size_t i = 0; i < tl.nidle; i++) {
    struct idle *d = &tl.idle[i];
    if (d->n) idle_flush(&tl, &o, d, d->n - 1);
    late += d->late;
  }
  long long nstalls = stalls ? write_stalls(&tl, &o) : 0;
  if (nstalls < 0) goto done;
  put_s(o.f, "\n],\"otherData\":{\"generator\":\"slack timeline\",\"trace\":");
  put_str(&o, path, 0);
  fprintf(o.f,
          ",\"slack_version\":\"%s\",\"trace_start_ns\":%llu,\"trace_end_ns\":%llu,"
          "\"idle_gaps\":%llu,\"idle_ns\":%llu,\"idle_late_records\":%llu,"
          "\"stall_slices\":%lld}}\n",
          SLACK_VERSION, (unsigned long long)tl.t0, (unsigned long long)tl.t1,
          (unsigned long long)tl.gaps, (unsigned long long)tl.idle_ns, (unsigned long long)late,
          nstalls);
  if (ferror(o.f) || (o.f == stdout ? fflush(o.f) : fclose(o.f))) {
    o.f = NULL;
    fprintf(stderr, "slack timeline: cannot write %s: %s\n", out_path, strerror(errno));
    goto done;
  }
  o.f = NULL;
  if (tl.overlapping)
    fprintf(stderr,
            "slack timeline: note: %llu GPU slices overlap others of their stream on every one "
            "of its %d tracks\n",
            (unsigned long long)tl.overlapping, MAX_LANES);
  if (late)
    fprintf(stderr,
            "slack timeline: note: %llu GPU records arrived too far out of time order for the "
            "idle track (drawn on their streams, not taken out of the idle gaps)\n",
            (unsigned long long)late);
  fprintf(stderr,
          "slack timeline: %s: %llu events (%llu kernels, %llu copies, %llu memsets, %llu host "
          "calls, %llu API calls, %llu idle gaps, %lld stall slices)\n",
          strcmp(out_path, "-") ? out_path : "stdout", (unsigned long long)o.events,
          (unsigned long long)tl.written[SLK_KERNEL], (unsigned long long)tl.written[SLK_MEMCPY],
          (unsigned long long)tl.written[SLK_MEMSET], (unsigned long long)tl.written[SLK_HOST],
          (unsigned long long)tl.written[SLK_API], (unsigned long long)tl.gaps, nstalls);
  rc = EXIT_OK;
done:
  if (o.f && o.f != stdout) fclose(o.f);
  trace_reader_close(rd2);
  trace_reader_close(rd);
  for (size_t i = 0; i < tl.nidle; i++)
    free(tl.idle[i].v);
  free(tl.idle);
  free(tl.lane_end);
  cache_clear(&o);
  u64map_free(&tl.threads);
  u64map_free(&tl.thread_names);
  u64map_free(&tl.flow_fns);
  u64map_free(&tl.devices);
  u64map_free(&tl.streams);
  u64map_free(&tl.api_threads);
  u64map_free(&tl.nvtx_threads);
  u64map_free(&tl.graph_devices);
  u64map_free(&tl.device_names);
  return rc;
}

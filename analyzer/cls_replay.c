/* The what-if's replay (cls_internal.h): the recorded run as a dependency graph (host order per
 * thread, FIFO per stream, launch -> operation, operation -> return of the call that waited for it,
 * waits between streams, hand-overs between threads), replayed with edits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cls_internal.h"
#include "frames.h"
#include "join.h"
#include "radix.h"
#include "u64map.h"

void graph_free(struct graph *gr) {
  free(gr->pace);
  free(gr->e);
  free(gr->in_lo);
  free(gr->order);
  free(gr->obs);
  free(gr->t);
  u64map_free(&gr->first_from);
  memset(gr, 0, sizeof *gr);
}

/* Where graph_build's edges go: placed, grouped by target (in_lo serves as a cursor here, shifted
 * back after the pass). */
static void emit(struct graph *gr, struct edge e) { gr->e[gr->in_lo[e.to]++] = e; }

/* The sources of node v's in-edges (the edges graph_build makes into it, from the links of its
 * call or operation alone: every edge goes into the node of the call or operation whose link
 * makes it) into p; how many (at most 3). */
static inline int node_preds(const struct world *w, const struct graph *gr, size_t v,
                             uint32_t p[3]) {
  int n = 0;
  if (v < 2 * w->ncalls) {
    const struct call *c = &w->calls[v / 2];
    if (!(v & 1)) { /* CS: the hand-off, the previous call on the thread */
      if (c->handoff != NIL) p[n++] = (uint32_t)CE(c->handoff);
      if (c->prev != NIL) p[n++] = (uint32_t)CE(c->prev);
      uint64_t a;
      if (!n && gr->first_from.n && u64map_get(&gr->first_from, v / 2, &a))
        p[n++] = (uint32_t)CE(a); /* a loader's thread's first call: what started it */
    } else {                      /* CE: its start, the awaited operation's end */
      p[n++] = (uint32_t)(v - 1);
      if (c->awaited != NIL && c->cat != CAT_CALL) p[n++] = (uint32_t)OE(c->awaited);
    }
    return n;
  }
  size_t j = (v - 2 * w->ncalls) / 2;
  const struct op *o = &w->ops[j];
  if (!(v & 1)) { /* OS: its call's start, the stream's previous end, the awaited event's end */
    if (o->call != NIL) p[n++] = (uint32_t)CS(o->call);
    if (o->prev_stream != NIL) p[n++] = (uint32_t)OE(o->prev_stream);
    if (o->ev_dep != NIL) p[n++] = (uint32_t)OE(o->ev_dep);
  } else { /* OE: its start */
    p[n++] = (uint32_t)(v - 1);
  }
  return n;
}

/* A topological order of the graph into gr->order and each node's in-edge count into
 * gr->in_lo[v + 1], by a depth-first search over the in-edges from the nodes in their order (each
 * node after its sources; a node met again while its sources are searched closes a cycle). The
 * graph's edges are never listed by source: only the links are read. 1 without a cycle, 0 with
 * one (the search stops there), -1 when out of memory. Any topological order replays the same
 * times (each node's time is the greatest over its in-edges, all known before it). */
static int topo_order(const struct world *w, struct graph *gr) {
  size_t nn = gr->nn;
  uint8_t *state = calloc(nn ? nn : 1, 1); /* 0 not met, 1 on the search's path, 2 ordered */
  uint32_t *stack = malloc((nn ? nn : 1) * sizeof *stack); /* node << 2 | sources done */
  if (!state || !stack) {
    free(state);
    free(stack);
    return -1;
  }
  size_t n = 0, sp = 0;
  int ok = 1;
  for (size_t r = 0; r < nn && ok; r++) {
    if (state[r]) continue;
    state[r] = 1;
    stack[sp++] = (uint32_t)r << 2;
    while (sp) {
      uint32_t top = stack[sp - 1], v = top >> 2, k = top & 3, p[3];
      int np = node_preds(w, gr, v, p);
      while ((int)k < np && state[p[k]] == 2)
        k++;
      if ((int)k == np) {
        sp--;
        state[v] = 2;
        gr->order[n++] = v;
        gr->in_lo[v + 1] = (uint32_t)np;
        continue;
      }
      if (state[p[k]] == 1) {
        ok = 0;
        break;
      }
      stack[sp - 1] = v << 2 | (k + 1);
      state[p[k]] = 1;
      stack[sp++] = p[k] << 2;
    }
  }
  free(state);
  free(stack);
  return ok;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* The pace of each thread that submits no GPU work and makes 8 calls or more: the first
 * quartile of its times from a call's end to its next call's start. Such a thread in a training
 * process is a loader's (a DataLoader's pin-memory thread queries the events of the pinned
 * blocks it reuses as it pins each batch): between its calls it pins a batch and waits for the
 * workers' next; its quick turns are the pinning alone, when a batch was ready (GPU run 66: 3
 * workers, turns of a few ms and waits of 95 to 312 ms). Data starvation's what-if shortens
 * its waits down to that pace at most (edits: PIECE_PACE, fed). */
static int helper_pace(const struct world *w, struct graph *gr) {
  size_t nt = w->nthreads;
  gr->pace = calloc(nt ? nt : 1, sizeof *gr->pace);
  size_t *cnt = calloc(nt ? nt : 1, sizeof *cnt), *at = calloc(nt ? nt : 1, sizeof *at);
  int64_t *v = NULL;
  int rc = -1;
  if (!gr->pace || !cnt || !at) goto out;
  size_t helpers = 0;
  for (size_t t = 0; t < nt; t++)
    helpers += !w->threads[t].submits;
  rc = 0;
  if (!helpers) goto out; /* (most traces: no pass over the calls) */
  rc = -1;
  size_t total = 0;
  for (size_t i = 0; i < w->ncalls; i++) {
    const struct call *c = &w->calls[i];
    if (c->prev != NIL && !w->threads[c->thread].submits) cnt[c->thread]++, total++;
  }
  v = malloc((total ? total : 1) * sizeof *v);
  if (!v) goto out;
  for (size_t t = 0, o = 0; t < nt; t++) {
    at[t] = o;
    o += cnt[t];
  }
  for (size_t i = 0; i < w->ncalls; i++) {
    const struct call *c = &w->calls[i];
    if (c->prev == NIL || w->threads[c->thread].submits) continue;
    v[at[c->thread]++] = sat_sub(i64_of(c->s), i64_of(w->calls[c->prev].e));
  }
  for (size_t t = 0, o = 0; t < nt; t++) {
    if (cnt[t] >= 8) {
      qsort(v + o, cnt[t], sizeof *v, cmp_i64);
      gr->pace[t] = v[o + cnt[t] / 4] > 0 ? v[o + cnt[t] / 4] : 0;
    }
    o += cnt[t];
  }
  rc = 0;
out:
  free(cnt);
  free(at);
  free(v);
  return rc;
}

/* graph.first_from: for each thread that submits no GPU work, its first call, when it waits
 * for no other thread's: the call of its process's submitting threads that ended last before it
 * started (each such thread's calls are by start; the few before the first that starts after
 * it are looked at). -1 when out of memory. */
static int first_calls(const struct world *w, struct graph *gr) {
  for (size_t t = 0; t < w->nthreads; t++) {
    const struct thread *T = &w->threads[t];
    if (T->submits || !T->n) continue;
    size_t i = T->calls[0];
    const struct call *c = &w->calls[i];
    if (c->prev != NIL || c->handoff != NIL) continue;
    size_t best = NONE;
    for (size_t u = 0; u < w->nthreads; u++) {
      const struct thread *U = &w->threads[u];
      if (!U->submits || U->in != T->in) continue;
      size_t lo = 0, hi = U->n; /* the first of U's calls that starts after c */
      while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->calls[U->calls[mid]].s <= c->s)
          lo = mid + 1;
        else
          hi = mid;
      }
      for (size_t k = lo, seen = 0; k > 0 && seen < 64; k--, seen++) {
        size_t j = U->calls[k - 1];
        if (w->calls[j].e <= c->s && (best == NONE || w->calls[j].e > w->calls[best].e)) best = j;
      }
    }
    if (best == NONE) continue;
    size_t slot = u64map_add(&gr->first_from, i);
    if (slot == (size_t)-1) return -1;
    gr->first_from.val[slot] = best;
  }
  return 0;
}

int graph_build(const struct world *w, struct graph *gr) {
  memset(gr, 0, sizeof *gr);
  gr->nn = 2 * w->ncalls + 2 * w->nops;
  /* at most 3 edges per node: nodes and edges are numbered in 32 bits */
  if (gr->nn >= UINT32_MAX / 4) return -1;
  size_t nn = gr->nn ? gr->nn : 1;
  gr->in_lo = calloc(nn + 1, sizeof *gr->in_lo);
  gr->order = malloc(nn * sizeof *gr->order);
  /* The order and each node's in-edge count from the links alone; only a graph without a cycle
   * (one that can be replayed) is weighed: its edges made, each in its place (grouped by target,
   * in the order made), no list of all edges besides the graph's own */
  int rc = -1;
  if (!gr->in_lo || !gr->order || first_calls(w, gr)) goto done;
  int ok = topo_order(w, gr);
  if (ok < 0) goto done;
  gr->ok = ok;
  rc = 0;
  if (!gr->ok) goto done; /* never replayed */
  for (size_t v = 0; v < gr->nn; v++)
    gr->in_lo[v + 1] += gr->in_lo[v];
  gr->ne = gr->in_lo[gr->nn];
  gr->obs = malloc(nn * sizeof *gr->obs);
  gr->t = malloc(nn * sizeof *gr->t);
  gr->e = malloc((gr->ne ? gr->ne : 1) * sizeof *gr->e);
  if (!gr->obs || !gr->t || !gr->e) {
    rc = -1;
    goto done;
  }
  for (size_t i = 0; i < w->ncalls; i++) {
    const struct call *c = &w->calls[i];
    gr->obs[CS(i)] = i64_of(c->s);
    gr->obs[CE(i)] = i64_of(c->e);
    int64_t s = i64_of(c->s);
    if (c->handoff != NIL) {
      int64_t he = i64_of(w->calls[c->handoff].e);
      emit(gr, (struct edge){CE(c->handoff), CS(i), i, EK_HANDOFF, sat_sub(s, he), 0});
      if (c->prev != NIL)
        emit(gr, (struct edge){CE(c->prev), CS(i), i, EK_OWN, i64_of(w->callx[i].own_ns), 0});
    } else if (c->prev != NIL) {
      int64_t pe = i64_of(w->calls[c->prev].e);
      emit(gr, (struct edge){CE(c->prev), CS(i), i, EK_WORK, sat_sub(s, pe), 0});
    } else if (gr->first_from.n) {
      uint64_t a;
      if (u64map_get(&gr->first_from, i, &a))
        emit(gr, (struct edge){CE(a), CS(i), i, EK_HANDOFF, sat_sub(s, i64_of(w->calls[a].e)), 0});
    }
    int64_t d = i64_of(c->e - c->s);
    if (c->awaited != NIL && c->cat != CAT_CALL) {
      int64_t ae = i64_of(w->ops[c->awaited].e);
      emit(gr, (struct edge){CS(i), CE(i), i, EK_BASE, i64_of(c->base_ns), 0});
      emit(gr, (struct edge){OE(c->awaited), CE(i), i, EK_WAKE, sat_sub(sat_add(s, d), ae), 0});
    } else {
      uint64_t load = 0; /* a module load's wait and load in it (world_loading): wmin */
      u64map_get(&w->loading, i, &load);
      emit(gr, (struct edge){CS(i), CE(i), i, EK_DUR, d, i64_of(load)});
    }
  }
  for (size_t j = 0; j < w->nops; j++) {
    const struct op *o = &w->ops[j];
    int64_t os = i64_of(o->s);
    gr->obs[OS(j)] = os;
    gr->obs[OE(j)] = i64_of(o->e);
    struct {
      size_t from;
      int64_t t, min;
      uint8_t kind;
    } pr[3];
    int np = 0;
    if (o->call != NIL)
      pr[np++] = (typeof(pr[0])){CS(o->call), i64_of(w->calls[o->call].s), i64_of(w->lat_start),
                                 EK_LAUNCH};
    if (o->prev_stream != NIL)
      pr[np++] = (typeof(pr[0])){OE(o->prev_stream), i64_of(w->ops[o->prev_stream].e),
                                 i64_of(w->stream_gap), EK_STREAM};
    if (o->ev_dep != NIL)
      pr[np++] = (typeof(pr[0])){OE(o->ev_dep), i64_of(w->ops[o->ev_dep].e), 0, EK_EVENT};
    int b = 0;
    for (int k = 1; k < np; k++)
      if (sat_add(pr[k].t, pr[k].min) > sat_add(pr[b].t, pr[b].min)) b = k;
    for (int k = 0; k < np; k++) {
      int64_t exact = sat_sub(os, pr[k].t);
      int64_t wmin = pr[k].min < exact ? pr[k].min : exact;
      emit(gr, (struct edge){pr[k].from, OS(j), j, pr[k].kind, k == b ? exact : wmin, wmin});
    }
    emit(gr, (struct edge){OS(j), OE(j), j, EK_OPDUR, i64_of(o->e - o->s), 0});
  }
  for (size_t v = gr->nn; v > 0; v--)
    gr->in_lo[v] = gr->in_lo[v - 1];
  gr->in_lo[0] = 0;
  if (helper_pace(w, gr)) rc = -1;
  gr->gain = 1.0;
done:
  if (rc) graph_free(gr);
  return rc;
}

/* A stretch of host work outside CUDA as the untraced tail timed such stretches (tail.h): short
 * ones (between the calls of a run of launches) at the calls' pace. Long ones (loading a batch)
 * stay as traced: the tail's long-stretch ratio is reported, not applied, since a tail of a few
 * seconds cannot tell the tracer's cost from the machine's own drift (GPU run 39: the seed's
 * loader ran 1.00x, 1.02x, 1.15x and 1.37x slower traced than in its 3 s tail in four processes,
 * and its traced pace lay within the untraced truth process's own range every time; the H200
 * VM's CPU speed moves by +-25% for seconds with one thread busy, docs/ACCURACY.md). Unchanged
 * without a tail. */
static int64_t untraced(double factor, double gain, int64_t wt) {
  if (wt >= TAIL_GAP_NS) return wt;
  if (gain != 1.0) /* fitted to the tail's iterations (cls_pace.c) */
    return (int64_t)((double)wt / ((factor > 1.0 ? factor : 1.0) * gain));
  return factor > 1.0 ? (int64_t)((double)wt / factor) : wt;
}

/* A loader's thread's wait wt before call i, its input ready sooner (edits PIECE_PACE): less
 * by the GPU's data starvation in it, down to the thread's pace at most, that pace shortened by
 * the share f of the thread's wait that other edits left it (1: none). */
static int64_t fed_wait(const struct world *w, const struct graph *gr, const struct edits *ed,
                        size_t i, int64_t wt, double f) {
  int64_t p = gr->pace[w->calls[i].thread];
  if (f < 1.0) p = (int64_t)((double)p * f);
  uint64_t by = 0;
  u64map_get(&ed->fed, i, &by);
  int64_t less = sat_sub(wt, i64_of(by));
  return wt > p ? (less > p ? less : p) : wt;
}

void replay(const struct world *w, struct graph *gr, const struct edits *ed) {
  for (size_t k = 0; k < gr->nn; k++) {
    size_t v = gr->order[k];
    size_t lo = gr->in_lo[v], hi = gr->in_lo[v + 1];
    if (lo == hi) {
      gr->t[v] = gr->obs[v];
      /* a loader's thread's first call that nothing holds (edits PIECE_FIRST; one held by the
       * call that started it waits on that edge, EK_HANDOFF): its wait from the steps' start
       * shortened as fed_wait shortens the others' */
      if (ed && v < 2 * w->ncalls && !(v & 1) && (ed->piece_cut[v / 2] & PIECE_FIRST)) {
        int64_t wt = sat_sub(gr->obs[v], i64_of(ed->first_lo));
        if (wt > 0)
          gr->t[v] = sat_sub(gr->obs[v], sat_sub(wt, fed_wait(w, gr, ed, v / 2, wt, 1.0)));
      }
      continue;
    }
    int64_t best = INT64_MIN;
    for (size_t q = lo; q < hi; q++) {
      const struct edge *e = &gr->e[q];
      int64_t wt = e->w;
      switch (e->kind) {
      case EK_WORK:
      case EK_OWN:
        if (ed && (ed->piece_cut[e->el] & PIECE_CUT) && wt > 0) {
          wt = 0;
          break;
        }
        if (ed && (ed->piece_cut[e->el] & PIECE_LESS) && wt > 0) { /* waits taken off */
          uint64_t by = 0;
          u64map_get(&ed->less, e->el, &by);
          int64_t was = wt;
          wt = sat_sub(wt, i64_of(by));
          if (wt < 0) wt = 0;
          /* a loader's thread's own waits taken off, then fed as it would be at its pace
           * shortened alike */
          if ((ed->piece_cut[e->el] & PIECE_PACE) && e->kind == EK_WORK)
            wt = fed_wait(w, gr, ed, e->el, wt, (double)wt / (double)was);
        } else if (ed && (ed->piece_cut[e->el] & PIECE_PACE) && e->kind == EK_WORK) {
          wt = fed_wait(w, gr, ed, e->el, wt, 1.0);
        }
        if (ed && ed->corrected && wt > 0) /* the host as fast as in the untraced tail */
          wt = untraced(w->threads[w->calls[e->el].thread].tail_factor, gr->gain, wt);
        break;
      case EK_HANDOFF: /* a loader's thread's first call, from what started it */
        if (ed && (ed->piece_cut[e->el] & PIECE_FIRST) && w->calls[e->el].prev == NIL)
          wt = fed_wait(w, gr, ed, e->el, wt, 1.0);
        break;
      case EK_DUR:
      case EK_BASE:
        if (ed && ed->call_cut[e->el]) {
          wt = 0;
        } else if (ed && ed->corrected) {
          /* without the tracer the step is the steady state's: a module's load (and the wait
           * for the device before it) is one-time work, gone after the first use */
          if (e->kind == EK_DUR && e->wmin > 0 && w->calls[e->el].s >= ed->loads_lo &&
              w->calls[e->el].s < ed->loads_hi)
            wt = wt > e->wmin ? wt - e->wmin : 0;
          const struct thread *th = &w->threads[w->calls[e->el].thread];
          double f = th->tail_factor;
          int64_t c = i64_of(w->calls[e->el].cost_ns);
          if (e->kind == EK_DUR && f > 1.0 && wt > 0) {
            /* its cost is in the tail's factor, which is of the thread's usual cycle between
             * calls: a call longer than that lost no more than the tracer added to a cycle (a
             * cudaMalloc is the driver's own work: 125 us traced, 108 untraced in GPU run 57's
             * tail, where the thread's calls came 1.45x slower traced) */
            int64_t by_f = (int64_t)((double)wt / f), add = i64_of(th->tail_added_ns);
            wt = by_f > wt - add ? by_f : wt - add;
          } else {
            wt = wt > c ? wt - c : (wt > 0 ? 0 : wt);
          }
          if (e->kind == EK_DUR && gr->gain != 1.0 && wt > 0) wt = (int64_t)((double)wt / gr->gain);
        }
        break;
      case EK_WAKE:
        if (ed && ed->nowait[e->el]) continue;
        break;
      case EK_LAUNCH:
      case EK_STREAM:
      case EK_EVENT:
        if (ed && ed->op_min[e->el]) wt = e->wmin;
        /* launches taken out as by a CUDA graph: back to back at a graph's pace */
        if (ed && ed->op_graph[e->el] && e->kind == EK_STREAM && wt > GRAPH_GAP_NS)
          wt = e->w < GRAPH_GAP_NS ? e->w : GRAPH_GAP_NS;
        break;
      case EK_OPDUR:
        if (ed && ed->op_zero[e->el]) wt = 0;
        break;
      default: break;
      }
      int64_t x = sat_add(gr->t[e->from], wt);
      if (x > best) best = x;
    }
    gr->t[v] = best == INT64_MIN ? gr->obs[v] : best;
  }
}

/* Mean step time of the last replay, over the steps of one GPU (op indices are global): each
 * run of consecutive steps (one's next operation the next one's first) from its first step's
 * start to the start of the operation after its last step, and the backlog the replay left
 * behind that: the run's operations ending later after that start than they did traced. A
 * replay whose host runs ahead of the GPU (a sync removed, no other wait to hold it) starts
 * each step's first operation (a copy on a stream of its own) at the host's pace while the
 * kernels queue up behind it: GPU run 36's mixed job without its copy stall read 4.6-4.7 ms a
 * step without the sync, its kernels 8.3 ms, the backlog 2.5 ms more at every step. */
uint64_t replay_step(const struct world *w, const struct graph *gr, const size_t *first,
                     const size_t *next, size_t n) {
  int64_t sum = 0;
  for (size_t a = 0, b; a < n; a = b + 1) {
    b = a;
    while (b + 1 < n && next[b] == first[b + 1])
      b++;
    int64_t end = gr->t[OS(next[b])], end_obs = gr->obs[OS(next[b])];
    int64_t lag = 0, lag_obs = 0; /* the latest end of the run's operations past `end` */
    for (size_t j = first[a]; j < next[b]; j++) {
      int64_t x = sat_sub(gr->t[OE(j)], end), y = sat_sub(gr->obs[OE(j)], end_obs);
      if (x > lag) lag = x;
      if (y > lag_obs) lag_obs = y;
    }
    sum = sat_add(sum, sat_sub(end, gr->t[OS(first[a])]));
    if (lag > lag_obs) sum = sat_add(sum, lag - lag_obs);
  }
  return n && sum > 0 ? (uint64_t)(sum / (int64_t)n) : 0;
}

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
  free(gr->e);
  free(gr->in_lo);
  free(gr->order);
  free(gr->obs);
  free(gr->t);
  memset(gr, 0, sizeof *gr);
}

/* Where graph_build's edges go: placed, grouped by target (in_lo and outlo serve as cursors
 * here, shifted back after the pass). */
struct sink {
  struct graph *gr;
  uint32_t *outlo, *out;
};

static int emit(struct sink *k, struct edge e) {
  k->gr->e[k->gr->in_lo[e.to]++] = e;
  k->out[k->outlo[e.from]++] = e.to;
  return 0;
}

static void count_edge(struct graph *gr, uint32_t *outlo, size_t from, size_t to) {
  gr->in_lo[to + 1]++;
  outlo[from + 1]++;
}

/* The edges graph_build makes, counted per target and source: the same conditions as its loops,
 * from the links alone (no record is read, no weight computed). */
static void count_edges(const struct world *w, struct graph *gr, uint32_t *outlo) {
  for (size_t i = 0; i < w->ncalls; i++) {
    const struct call *c = &w->calls[i];
    if (c->handoff != NONE) {
      count_edge(gr, outlo, CE(c->handoff), CS(i));
      if (c->prev != NONE) count_edge(gr, outlo, CE(c->prev), CS(i));
    } else if (c->prev != NONE) {
      count_edge(gr, outlo, CE(c->prev), CS(i));
    }
    count_edge(gr, outlo, CS(i), CE(i));
    if (c->awaited != NONE && c->cat != CAT_CALL) count_edge(gr, outlo, OE(c->awaited), CE(i));
  }
  for (size_t j = 0; j < w->nops; j++) {
    const struct op *o = &w->ops[j];
    if (o->call != NONE) count_edge(gr, outlo, CS(o->call), OS(j));
    if (o->prev_stream != NONE) count_edge(gr, outlo, OE(o->prev_stream), OS(j));
    if (o->ev_dep != NONE) count_edge(gr, outlo, OE(o->ev_dep), OS(j));
    count_edge(gr, outlo, OS(j), OE(j));
  }
}

int graph_build(const struct world *w, struct graph *gr) {
  memset(gr, 0, sizeof *gr);
  gr->nn = 2 * w->ncalls + 2 * w->nops;
  /* at most 3 edges per node: nodes and edges are numbered in 32 bits */
  if (gr->nn >= UINT32_MAX / 4) return -1;
  size_t nn = gr->nn ? gr->nn : 1;
  gr->obs = malloc(nn * sizeof *gr->obs);
  gr->t = malloc(nn * sizeof *gr->t);
  gr->in_lo = calloc(nn + 1, sizeof *gr->in_lo);
  gr->order = malloc(nn * sizeof *gr->order);
  /* Edges are counted per target and source first (count_edges: from the links alone), then
   * made, each in its place (grouped by target, in the order made): no list of all edges besides
   * the graph's own */
  struct sink sk = {gr, NULL, NULL};
  uint32_t *outlo = calloc(nn + 1, sizeof *outlo), *out = NULL;
  uint32_t *indeg = malloc(nn * sizeof *indeg);
  int rc = -1;
  if (!gr->obs || !gr->t || !gr->in_lo || !gr->order || !outlo || !indeg) goto done;
  sk.outlo = outlo;
  count_edges(w, gr, outlo);
  for (size_t v = 0; v < gr->nn; v++) {
    indeg[v] = gr->in_lo[v + 1];
    gr->in_lo[v + 1] += gr->in_lo[v];
    outlo[v + 1] += outlo[v];
  }
  gr->ne = gr->in_lo[gr->nn];
  gr->e = malloc((gr->ne ? gr->ne : 1) * sizeof *gr->e);
  out = malloc((gr->ne ? gr->ne : 1) * sizeof *out);
  if (!gr->e || !out) goto done;
  sk.out = out;
  for (size_t i = 0; i < w->ncalls; i++) {
    const struct call *c = &w->calls[i];
    gr->obs[CS(i)] = i64_of(c->s);
    gr->obs[CE(i)] = i64_of(c->e);
    int64_t s = i64_of(c->s);
    if (c->handoff != NONE) {
      int64_t he = i64_of(w->calls[c->handoff].e);
      if (emit(&sk, (struct edge){CE(c->handoff), CS(i), i, EK_HANDOFF, sat_sub(s, he), 0}))
        goto done;
      if (c->prev != NONE &&
          emit(&sk, (struct edge){CE(c->prev), CS(i), i, EK_OWN, i64_of(c->own_ns), 0}))
        goto done;
    } else if (c->prev != NONE) {
      int64_t pe = i64_of(w->calls[c->prev].e);
      if (emit(&sk, (struct edge){CE(c->prev), CS(i), i, EK_WORK, sat_sub(s, pe), 0})) goto done;
    }
    int64_t d = i64_of(c->e - c->s);
    if (c->awaited != NONE && c->cat != CAT_CALL) {
      int64_t ae = i64_of(w->ops[c->awaited].e);
      if (emit(&sk, (struct edge){CS(i), CE(i), i, EK_BASE, i64_of(c->base_ns), 0}) ||
          emit(&sk,
               (struct edge){OE(c->awaited), CE(i), i, EK_WAKE, sat_sub(sat_add(s, d), ae), 0}))
        goto done;
    } else if (emit(&sk, (struct edge){CS(i), CE(i), i, EK_DUR, d, 0})) {
      goto done;
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
    if (o->call != NONE)
      pr[np++] = (typeof(pr[0])){CS(o->call), i64_of(w->calls[o->call].s), i64_of(w->lat_start),
                                 EK_LAUNCH};
    if (o->prev_stream != NONE)
      pr[np++] = (typeof(pr[0])){OE(o->prev_stream), i64_of(w->ops[o->prev_stream].e),
                                 i64_of(w->stream_gap), EK_STREAM};
    if (o->ev_dep != NONE)
      pr[np++] = (typeof(pr[0])){OE(o->ev_dep), i64_of(w->ops[o->ev_dep].e), 0, EK_EVENT};
    int b = 0;
    for (int k = 1; k < np; k++)
      if (sat_add(pr[k].t, pr[k].min) > sat_add(pr[b].t, pr[b].min)) b = k;
    for (int k = 0; k < np; k++) {
      int64_t exact = sat_sub(os, pr[k].t);
      int64_t wmin = pr[k].min < exact ? pr[k].min : exact;
      struct edge e = {pr[k].from, OS(j), j, pr[k].kind, k == b ? exact : wmin, wmin};
      if (emit(&sk, e)) goto done;
    }
    if (emit(&sk, (struct edge){OS(j), OE(j), j, EK_OPDUR, i64_of(o->e - o->s), 0})) goto done;
  }
  /* the cursors ended where the next node's edges begin: back to the beginnings */
  for (size_t v = gr->nn; v > 0; v--) {
    gr->in_lo[v] = gr->in_lo[v - 1];
    outlo[v] = outlo[v - 1];
  }
  gr->in_lo[0] = outlo[0] = 0;
  size_t head = 0, tail = 0;
  for (size_t v = 0; v < gr->nn; v++)
    if (!indeg[v]) gr->order[tail++] = v;
  while (head < tail) {
    size_t v = gr->order[head++];
    for (size_t k = outlo[v]; k < outlo[v + 1]; k++)
      if (!--indeg[out[k]]) gr->order[tail++] = out[k];
  }
  gr->ok = tail == gr->nn;
  rc = 0;
done:
  free(outlo);
  free(out);
  free(indeg);
  if (rc) graph_free(gr);
  return rc;
}

/* A stretch of host work outside CUDA as the untraced tail timed such stretches (tail.h): short
 * ones (between the calls of a run of launches) at the calls' pace, long ones (loading a batch)
 * at the long stretches' pace. Unchanged without a tail. */
static int64_t untraced(const struct tail_info *ti, int64_t wt) {
  double f = wt >= TAIL_GAP_NS ? ti->factor_long : ti->factor;
  return f > 1.0 ? (int64_t)((double)wt / f) : wt;
}

void replay(const struct world *w, struct graph *gr, const struct edits *ed) {
  for (size_t k = 0; k < gr->nn; k++) {
    size_t v = gr->order[k];
    size_t lo = gr->in_lo[v], hi = gr->in_lo[v + 1];
    if (lo == hi) {
      gr->t[v] = gr->obs[v];
      continue;
    }
    int64_t best = INT64_MIN;
    for (size_t q = lo; q < hi; q++) {
      const struct edge *e = &gr->e[q];
      int64_t wt = e->w;
      switch (e->kind) {
      case EK_WORK:
      case EK_OWN:
        if (ed && ed->piece_cut[e->el] && wt > 0)
          wt = 0;
        else if (ed && ed->corrected && wt > 0) /* the host as fast as in the untraced tail */
          wt = untraced(&w->tail[w->calls[e->el].in], wt);
        break;
      case EK_DUR:
      case EK_BASE:
        if (ed && ed->call_cut[e->el]) {
          wt = 0;
        } else if (ed && ed->corrected) {
          const struct tail_info *ti = &w->tail[w->calls[e->el].in];
          int64_t c = i64_of(w->calls[e->el].cost_ns);
          if (e->kind == EK_DUR && ti->factor > 1.0 && wt > 0)
            wt = (int64_t)((double)wt / ti->factor); /* its cost is in the tail's factor */
          else
            wt = wt > c ? wt - c : (wt > 0 ? 0 : wt);
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

/* Mean step time of the last replay, over the steps of one GPU (op indices are global). */
uint64_t replay_step(const struct world *w, const struct graph *gr, const size_t *first,
                     const size_t *next, size_t n) {
  int64_t sum = 0;
  for (size_t k = 0; k < n; k++)
    sum = sat_add(sum, sat_sub(gr->t[OS(next[k])], gr->t[OS(first[k])]));
  return n && sum > 0 ? (uint64_t)(sum / (int64_t)n) : 0;
}

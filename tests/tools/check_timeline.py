#!/usr/bin/env python3
"""Validates the Chrome trace JSON of `slack timeline`:

    check_timeline.py OUT.json [--expect KEY=N ...] [--window FROM_MS TO_MS]

Checks that the file is JSON (json.load) in the trace-event format that Perfetto UI and
chrome://tracing read: an object with a traceEvents array whose events each have a known phase
and the fields that phase needs, microsecond timestamps, integer pids and tids; that every track
with slices is named; that slices on a track nest (no partial overlap); that every flow end ("f")
has its start ("s") with the same id no later than it, and that both lie inside a slice of their
track (so they bind to the launching call and to the GPU work); that the idle slices of a GPU
never overlap its kernels, copies or memsets, and neither do the stall track's slices, each
named by a stall class with its JSON key in args.class; with --stalls-match-idle, a GPU's stall
slices other than the window edges add up to its idle gaps, to the nanosecond. --expect checks
counts: kernels, memcpys, memsets, host, api, flows, idle, stalls (slices of those categories;
flows = complete s/f pairs). --window checks
that every slice overlaps [FROM_MS, TO_MS] after the trace start (and allows flow ends whose
launch lies before the window). Prints a summary; exit 1 on
the first kind of failure, with examples.
"""
import bisect
import json
import sys
from collections import defaultdict

GPU_PID_BASE = 0x40000000
IDLE_TID = 0x7FFFFFFE
STALL_TID = 0x7FFFFFFF
STALL_CLASSES = {"serialization": "serialization", "copy stall": "copy_stall",
                 "data starvation": "data_starvation", "launch overhead": "launch_overhead",
                 "other": "other"}

errors = []


def fail(msg, examples=()):
    errors.append(msg)
    print("check_timeline: FAIL: " + msg, file=sys.stderr)
    for e in list(examples)[:5]:
        print("    " + json.dumps(e)[:300], file=sys.stderr)


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    path = args.pop(0)
    expect, window, match_idle = {}, None, False
    while args:
        a = args.pop(0)
        if a == "--expect":
            k, v = args.pop(0).split("=")
            expect[k] = int(v)
        elif a == "--stalls-match-idle":
            match_idle = True
        elif a == "--window":
            window = (float(args.pop(0)) * 1000, float(args.pop(0)) * 1000)
        else:
            sys.exit("unknown argument " + a)

    with open(path) as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("no traceEvents array")
        return 1
    events = doc["traceEvents"]

    bad = []
    slices = defaultdict(list)  # (pid, tid) -> [(ts, end, event)]
    flows = {"s": defaultdict(list), "f": defaultdict(list)}
    names = set()
    pnames = set()
    cats = defaultdict(int)
    for e in events:
        ph = e.get("ph")
        if ph not in ("X", "M", "s", "f"):
            bad.append(e)
            continue
        if not isinstance(e.get("pid"), int) or (ph != "M" or "tid" in e) and not isinstance(
                e.get("tid", 0), int):
            bad.append(e)
            continue
        if ph == "M":
            if e.get("name") == "thread_name":
                names.add((e["pid"], e["tid"]))
            elif e.get("name") == "process_name":
                pnames.add(e["pid"])
            if not isinstance(e.get("args"), dict):
                bad.append(e)
            continue
        ts = e.get("ts")
        if not isinstance(ts, (int, float)) or ts < 0 or not isinstance(e.get("name"), str):
            bad.append(e)
            continue
        if ph == "X":
            dur = e.get("dur")
            if not isinstance(dur, (int, float)) or dur < 0 or not isinstance(e.get("cat"), str):
                bad.append(e)
                continue
            slices[(e["pid"], e["tid"])].append((ts, ts + dur, e))
            cats[e["cat"]] += 1
        else:
            if not isinstance(e.get("id"), int) or (ph == "f" and e.get("bp") != "e"):
                bad.append(e)
                continue
            flows[ph][e["id"]].append(e)
    if bad:
        fail("%d events malformed" % len(bad), bad)

    unnamed = [k for k in slices if k not in names]
    if unnamed:
        fail("%d tracks with slices but no thread_name" % len(unnamed), unnamed)
    unnamed = {k[0] for k in slices if k[0] not in pnames}
    if unnamed:
        fail("%d processes without process_name" % len(unnamed), sorted(unnamed))

    # nesting per track: sorted by start, longer first; a slice that starts inside the open one
    # must end inside it (3 ns of slack for the microsecond decimals)
    crossing = []
    for key, v in slices.items():
        v.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for s, t, e in v:
            while stack and stack[-1][1] <= s + 1e-9:
                stack.pop()
            if stack and t > stack[-1][1] + 0.003:
                crossing.append((stack[-1][2], e))
            stack.append((s, t, e))
    if crossing:
        fail("%d slices overlap a slice of their track without nesting in it" % len(crossing),
             crossing)

    starts_of = {k: [x[0] for x in v] for k, v in slices.items()}  # sorted above

    def inside(e):  # within a slice of its track (one of the last few to start before it)
        k = (e["pid"], e["tid"])
        v = slices.get(k)
        if not v:
            return False
        i = bisect.bisect_right(starts_of[k], e["ts"])
        return any(v[j][0] <= e["ts"] <= v[j][1] for j in range(max(0, i - 8), i))

    pairs, unbound, late, orphan = 0, [], [], []
    for fid, ends in flows["f"].items():
        starts = flows["s"].get(fid)
        if not starts:
            orphan.extend(ends)
            continue
        pairs += len(ends)
        if min(s["ts"] for s in starts) > min(f["ts"] for f in ends) + 1e-9:
            late.append((starts[0], ends[0]))
    for ph in ("s", "f"):
        for evs in flows[ph].values():
            unbound.extend(e for e in evs if not inside(e))
    if orphan and not window:  # in a window, a launch before it leaves its GPU work's arrow open
        fail("%d flow ends without a flow start" % len(orphan), orphan)
    if late:
        fail("%d flows whose start is after their end" % len(late), late)
    if unbound:
        fail("%d flow events outside any slice of their track" % len(unbound), unbound)

    # idle gaps never overlap GPU work of the same device
    idle_overlap = []
    for (pid, tid), v in slices.items():
        if pid < GPU_PID_BASE or tid not in (IDLE_TID, STALL_TID):
            continue
        busy = sorted((s, t) for (p, _), w in slices.items() if p == pid and _ not in (IDLE_TID, STALL_TID)
                      for s, t, e in w if e["cat"] in ("kernel", "memcpy", "memset"))
        bs = [b[0] for b in busy]
        for s, t, e in v:
            i = bisect.bisect_left(bs, t)
            # any busy interval starting before the gap ends and ending after it starts
            j = i - 1
            while j >= 0 and i - j < 64:
                if busy[j][1] > s + 0.0005 and busy[j][0] < t - 0.0005:
                    idle_overlap.append(e)
                    break
                j -= 1
    if idle_overlap:
        fail("%d idle or stall slices overlap GPU work" % len(idle_overlap), idle_overlap)

    # the stall track: slices named by class; without the window edges they are the idle gaps
    misnamed = [e for (pid, tid), v in slices.items() if tid == STALL_TID for s, t, e in v
                if STALL_CLASSES.get(e["name"]) != e.get("args", {}).get("class")
                or e["cat"] != "stall_class"]
    if misnamed:
        fail("%d stall slices not named by their class" % len(misnamed), misnamed)
    if match_idle:
        pids = {pid for (pid, tid) in slices if tid in (IDLE_TID, STALL_TID)}
        for pid in sorted(pids):
            idle = sum(e["args"]["ns"] for s, t, e in slices.get((pid, IDLE_TID), []))
            stall = sum(e["args"]["ns"] for s, t, e in slices.get((pid, STALL_TID), [])
                        if e["args"].get("reason") != "window_edge")
            if idle != stall:
                fail("GPU pid %d: stall slices add up to %d ns, idle gaps to %d ns" %
                     (pid, stall, idle))

    if window:
        out = [e for v in slices.values() for s, t, e in v
               if e["cat"] != "stall" and (t < window[0] - 0.001 or s > window[1] + 0.001)]
        if out:
            fail("%d slices outside the window" % len(out), out)

    counts = {"kernels": cats["kernel"], "memcpys": cats["memcpy"], "memsets": cats["memset"],
              "host": cats["host"], "api": cats["cuda_api"], "nvtx": cats["nvtx"],
              "idle": cats["stall"], "stalls": cats["stall_class"], "flows": pairs,
              "events": len(events)}
    for k, v in expect.items():
        if counts.get(k) != v:
            fail("%s: expected %d, found %s" % (k, v, counts.get(k)))
    print("check_timeline: %s: %s" % (path, json.dumps(counts)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

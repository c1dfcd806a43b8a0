#!/usr/bin/env python3
"""make bench: slack's cost per event on the CPU, no GPU needed (never part of make test).

Runs build/bench/cpu_loop (blocks of __cudaLaunchKernel calls, paced so the writer keeps up and
no event is dropped) against two stand-ins for libcudart.so.13, with interleaved repeats
(A B C ... A B C ...), and prints medians with their spread:

  null  build/bench/null: every CUDA function returns at once, so the time per call is
        libslack's own. untraced / nop build / hooks (SLACK_CUPTI=0).
        hooks - nop is the hot path's cost per recorded call (target: <= 50 ns on the H200).
  stub  build/stub (tests/stub): a stand-in GPU and CUPTI. untraced / nop / hooks / full /
        bare (scripts/bench/bare_cupti.c: the same CUPTI kinds enabled, buffers thrown away).
        full and bare include the stand-in CUPTI's own cost of making and delivering records;
        full - bare is slack's own cost on top of it. (What real CUPTI costs is measured on the
        GPU: scripts/bench/run.sh.)

Per config: ns per call (median of the per-process medians of its blocks, min-max over
processes), added over the nop build, the background threads' CPU per call (the process's CPU
time minus the calling thread's, less the same for the nop build: slack's writer, and in the
stub set the stand-in CUPTI's delivery thread too), trace bytes per event, peak RSS
added over untraced, and any dropped event (a figure from a run that dropped is not valid).

Options: --repeats N (default 7, env REPEATS), --blocks N, --block N, --gap-ms N,
--sets null,stub, --set VAR=VALUE (a SLACK_* setting for the traced runs; repeatable),
--zstd (also print the zstd level sweep on the shipped H200 trace). stdlib only.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))

SETS = {
    "null": (os.path.join(BUILD, "bench", "null"), ["untraced", "nop", "hooks"]),
    "stub": (os.path.join(BUILD, "stub"), ["untraced", "nop", "hooks", "full", "bare"]),
}


def run_once(setname, config, tmp, tag, args, extra):
    libdir = SETS[setname][0]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLACK_", "STUB_", "BENCH_")) and k != "LD_PRELOAD"}
    env.update(LD_LIBRARY_PATH=libdir, BENCH_BLOCKS=str(args.blocks), BENCH_BLOCK=str(args.block),
               BENCH_GAP_MS=str(args.gap_ms))
    report = os.path.join(tmp, tag + ".json")
    env["BENCH_REPORT"] = report
    out = os.path.join(tmp, tag)
    os.makedirs(out)
    if config == "nop":
        env["LD_PRELOAD"] = os.path.join(BUILD, "libslack-nop.so")
    elif config == "bare":
        env["LD_PRELOAD"] = os.path.join(BUILD, "bench", "libbare_cupti.so")
        env["BARE_CUPTI_LIB"] = os.path.join(libdir, "libcupti.so.13")
    elif config in ("hooks", "full"):
        env["LD_PRELOAD"] = os.path.join(BUILD, "libslack.so")
        env.update(SLACK_OUTPUT=out, SLACK_QUIET="1")
        if config == "hooks":
            env["SLACK_CUPTI"] = "0"
        env.update(extra)
    p = subprocess.run([os.path.join(BUILD, "bench", "cpu_loop")], env=env, capture_output=True,
                       text=True, timeout=300)
    if p.returncode != 0:
        sys.exit("cpu_loop %s/%s failed (%d): %s" % (setname, config, p.returncode,
                                                     p.stderr.strip()))
    with open(report) as f:
        r = json.load(f)
    res = {
        "ns": statistics.median(r["ns"]),
        "bg_ns": r["proc_cpu_ns"] - r["main_cpu_ns"],
        "rss_kb": r["maxrss_kb"],
        "calls": r["calls"],
    }
    traces = [os.path.join(out, n) for n in os.listdir(out) if n.endswith(".slk")]
    if traces:
        q = subprocess.run([os.path.join(BUILD, "slack"), "info", "--json", traces[0]],
                           capture_output=True, text=True)
        if q.returncode == 0:
            i = json.loads(q.stdout)
            res.update(records=i.get("records", 0), bytes=i.get("file_bytes", 0),
                       dropped=i.get("dropped", 0), host=i.get("api_calls", 0),
                       kernels=i.get("kernels", 0))
        else:
            res["dropped"] = "slack info failed: " + q.stderr.strip()[:80]
    shutil.rmtree(out, ignore_errors=True)
    return res


def med(v):
    return statistics.median(v) if v else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=int(os.environ.get("REPEATS", "7")))
    ap.add_argument("--blocks", type=int, default=20)
    ap.add_argument("--block", type=int, default=8192)
    ap.add_argument("--gap-ms", type=int, default=15)
    ap.add_argument("--sets", default="null,stub")
    ap.add_argument("--set", action="append", default=[], metavar="VAR=VALUE")
    ap.add_argument("--zstd", action="store_true")
    args = ap.parse_args()
    extra = dict(s.split("=", 1) for s in args.set)
    sets = [s for s in args.sets.split(",") if s]
    jobs = [(s, c) for s in sets for c in SETS[s][1]]
    res = {j: [] for j in jobs}
    with tempfile.TemporaryDirectory(prefix="slack-bench-") as tmp:
        for r in range(args.repeats):
            for s, c in jobs:
                res[(s, c)].append(run_once(s, c, tmp, "%s-%s-%d" % (s, c, r), args, extra))
    n = args.blocks * args.block
    print("make bench: %d repeats interleaved, %d calls of __cudaLaunchKernel per process "
          "(%d blocks, %d ms apart); CPU only, not a GPU measurement%s" %
          (args.repeats, n, args.blocks, args.gap_ms,
           "; settings " + " ".join(args.set) if args.set else ""))
    bad = []
    for s in sets:
        rows = {c: res[(s, c)] for c in SETS[s][1]}
        base = med([x["ns"] for x in rows["untraced"]])
        nop = med([x["ns"] for x in rows["nop"]])
        nop_bg = med([x["bg_ns"] for x in rows["nop"]])
        rss0 = med([x["rss_kb"] for x in rows["untraced"]])
        print()
        print("%s: %s" % (s, "cudart returns at once: libslack's own cost" if s == "null" else
                          "tests/stub stand-in GPU + CUPTI (full: the stand-in CUPTI's cost "
                          "included)"))
        print("| config | ns/call median (min-max) | added vs nop | records/call | bytes/record"
              " | background CPU ns/call | RSS added KB | dropped |")
        print("|---|---|---|---|---|---|---|---|")
        for c, xs in rows.items():
            v = [x["ns"] for x in xs]
            m = med(v)
            added = "-" if c in ("untraced", "nop") else "%+.1f" % (m - nop)
            if c == "nop":
                added = "%+.1f vs untraced" % (m - base)
            recs = [x.get("records", 0) for x in xs]
            calls = xs[0]["calls"]
            rpc = "%.2f" % (med(recs) / calls) if med(recs) else "-"
            bpr = "%.2f" % med([x["bytes"] / x["records"] for x in xs if x.get("records")]) \
                if med(recs) else "-"
            wcpu = "%.0f" % ((med([x["bg_ns"] for x in xs]) - nop_bg) / calls) \
                if c in ("hooks", "full", "bare") else "-"
            rss = "%+.0f" % (med([x["rss_kb"] for x in xs]) - rss0) if c != "untraced" else "-"
            drops = [x.get("dropped", 0) for x in xs]
            dtxt = "0" if all(d == 0 for d in drops) else ",".join(str(d) for d in drops)
            if dtxt != "0":
                bad.append("%s/%s" % (s, c))
            print("| %s | %.1f (%.1f-%.1f) | %s | %s | %s | %s | %s | %s |" %
                  (c, m, min(v), max(v), added, rpc, bpr, wcpu, rss, dtxt))
        if s == "stub":
            f, b = med([x["ns"] for x in rows["full"]]), med([x["ns"] for x in rows["bare"]])
            print("full - bare: %+.1f ns per launch: slack's own cost (hooks, and the writer "
                  "where it competes for a core) over the stand-in CUPTI's" % (f - b))
        if s == "null":
            h = med([x["ns"] for x in rows["hooks"]])
            print("hot path (hooks - nop): %.1f ns per recorded call (target <= 50 ns on the H200);"
                  " the nop build's wrapper: %+.1f ns over no preload" % (h - nop, nop - base))
    if args.zstd:
        tool = os.path.join(BUILD, "bench", "zstd_levels")
        trace = os.path.join(ROOT, "tests", "data", "probe-h200.slk")
        if os.path.exists(tool) and os.path.exists(trace):
            print()
            sys.stdout.flush()
            subprocess.run([tool, trace, "256", "1024"])
    if bad:
        print("\nWARNING: events were dropped in %s: those figures are not valid (raise --gap-ms)"
              % ", ".join(bad))
    return 0


if __name__ == "__main__":
    sys.exit(main())

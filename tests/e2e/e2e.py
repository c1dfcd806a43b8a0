#!/usr/bin/env python3
"""End-to-end tests without a GPU: the test programs (tests/progs) run against the CPU stand-in
for cudart, the driver and CUPTI (tests/stub), untraced and traced through the real libslack.so,
and the trace is read back with `slack info --json` and `slack dump`.

Each scenario prints "PASS name" or "FAIL name" followed by indented reasons; the exit status is
the number of failed scenarios (0: all passed). stdlib only.

  python3 tests/e2e/e2e.py [-k SUBSTRING] [--keep]

Environment: BUILD (default build), CUDA_HOME (default /usr/local/cuda).
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
CUDA_HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda")
STUB = os.path.join(BUILD, "stub")
PROGS = os.path.join(BUILD, "progs")
LIBSLACK = os.path.join(BUILD, "libslack.so")
SLACK = os.path.join(BUILD, "slack")
TOL_NS = 2000  # clock-mapping slack allowed between host, API and GPU times
TIMEOUT_S = 120

COPY_KIND = {1: "HTOD", 2: "DTOH", 3: "HTOA", 4: "ATOH", 5: "ATOA", 6: "ATOD", 7: "DTOA", 8: "DTOD",
             9: "HTOH", 10: "PTOP"}
SYNC_TYPE = {1: "EVENT_SYNCHRONIZE", 2: "STREAM_WAIT_EVENT", 3: "STREAM_SYNCHRONIZE",
             4: "CONTEXT_SYNCHRONIZE"}
SLK_API_DRIVER = 0x80000000


# ------------------------------------------------------------------------- reference tables

def slack_functions():
    """{host function name: is_sync} from format/format.h's SLK_FN_LIST (what slack hooks)."""
    text = open(os.path.join(ROOT, "format", "format.h")).read().replace("\\\n", " ")
    m = re.search(r"#define SLK_FN_LIST\(X\)(.*?)\n", text)
    body = m.group(1) if m else text
    return {name: sync == "1" for _, name, sync in
            re.findall(r"X\(\s*(\w+)\s*,\s*\"(\w+)\"\s*,\s*([01])\s*,\s*\w+\s*\)", body)}


def cbid_names():
    """{('runtime'|'driver', cbid): name} from the real CUPTI headers."""
    names = {}
    for dom, hdr, pre in (("runtime", "cupti_runtime_cbid.h", "CUPTI_RUNTIME_TRACE_CBID_"),
                          ("driver", "cupti_driver_cbid.h", "CUPTI_DRIVER_TRACE_CBID_")):
        text = open(os.path.join(CUDA_HOME, "include", hdr)).read()
        for name, num in re.findall(r"\b" + pre + r"(\w+)\s*=\s*(\d+)", text):
            if name not in ("INVALID", "SIZE"):
                names[(dom, int(num))] = name
    return names


def norm_fn(name):
    """A call's base name: __cudaLaunchKernel_ptsz_v13000 -> cudaLaunchKernel,
    cuMemcpyHtoDAsync_v2 -> cuMemcpyHtoDAsync (slack records __cudaLaunchKernel as
    cudaLaunchKernel)."""
    n = re.sub(r"_v\d{4,5}$", "", name)
    n = re.sub(r"_(ptsz|ptds)$", "", n)
    n = re.sub(r"_v[23]$", "", n)
    n = re.sub(r"_(ptsz|ptds)$", "", n)
    return n[2:] if n.startswith("__") else n


# ------------------------------------------------------------------------- reading outputs

def parse_value(v):
    if v.startswith('"'):
        return json.loads(v)
    if re.fullmatch(r"-?\d+", v):
        return int(v)
    if re.fullmatch(r"0x[0-9a-fA-F]+", v):
        return int(v, 16)
    return v


def parse_dump(text):
    """`slack dump` lines -> list of dicts with 'kind' and every key=value (ints parsed)."""
    recs = []
    tok = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')
    for line in text.splitlines():
        if not line.strip():
            continue
        kind, _, rest = line.partition(" ")
        r = {"kind": kind}
        for k, v in tok.findall(rest):
            r[k] = parse_value(v)
        recs.append(r)
    return recs


def api_fn(rec):
    """('runtime'|'driver', cbid) of an api record, whatever spelling the dump uses."""
    v = rec.get("cbid", rec.get("fn"))
    if isinstance(v, str) and ":" in v:
        dom, num = v.split(":", 1)
        return dom, int(num)
    if isinstance(v, int):
        return ("driver" if v & SLK_API_DRIVER else "runtime"), v & ~SLK_API_DRIVER
    return None, None


def read_report(path):
    calls, gpu, syncs, summary = {}, [], [], None
    with open(path) as f:
        for line in f:
            o = json.loads(line)
            if "call" in o:
                calls[o["seq"]] = o
            elif "gpu" in o:
                gpu.append(o)
            elif "sync" in o:
                syncs.append(o)
            elif "summary" in o:
                summary = o["summary"]
    return calls, gpu, syncs, summary


# ------------------------------------------------------------------------- running

def sanitizer_preload():
    """Sanitizer runtimes libslack.so was linked with (make SAN=...): they must come first in
    LD_PRELOAD. Leak checking is left off (the stub and the programs keep what they allocate)."""
    try:
        out = subprocess.run(["ldd", LIBSLACK], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return [], {}
    libs = re.findall(r"^\s*(lib(?:asan|ubsan|tsan|lsan)\.so[.\d]*)\s*=>\s*(\S+)", out, re.M)
    env = {}
    if any(n.startswith(("libasan", "liblsan")) for n, _ in libs):
        env["ASAN_OPTIONS"] = os.environ.get("ASAN_OPTIONS", "detect_leaks=0")
    return [p for _, p in libs], env


SAN_PRELOAD, SAN_ENV = [], {}


class Run:
    def __init__(self, rc, out, err, files, report, outdir):
        self.rc, self.out, self.err, self.files, self.report, self.outdir = (
            rc, out, err, files, report, outdir)
        self.crash = None  # run_prog: a crashed program's stacks (crash_stacks)


def run_prog(prog, tmp, tag, traced, env_extra=None, outdir=None):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("SLACK_") or k.startswith("STUB_") or k in ("LD_PRELOAD", "PROG_REPORT"):
            del env[k]
    env["LD_LIBRARY_PATH"] = STUB + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH")
                                     else "")
    report = os.path.join(tmp, tag + ".report")
    env["PROG_REPORT"] = report
    if outdir is None:
        outdir = os.path.join(tmp, tag + ".out")
        os.makedirs(outdir, exist_ok=True)
    if traced:
        env["LD_PRELOAD"] = ":".join(SAN_PRELOAD + [LIBSLACK])
        env.update(SAN_ENV)
        env["SLACK_OUTPUT"] = outdir
    env.update(env_extra or {})
    for k in [k for k, v in env.items() if v is None]:  # None: unset
        del env[k]
    before = set(os.listdir(tmp))
    p = subprocess.run([os.path.join(PROGS, prog)], env=env, cwd=tmp, capture_output=True,
                       text=True, timeout=TIMEOUT_S, preexec_fn=allow_core)
    files = sorted(os.listdir(outdir)) if os.path.isdir(outdir) else []
    run = Run(p.returncode, p.stdout, p.stderr, files, report, outdir)
    if p.returncode < 0:
        run.crash = crash_stacks(os.path.join(PROGS, prog), tmp, before)
    return run


def allow_core():
    """In the program's process before exec: core files on (up to the hard limit), so that a
    program killed by a signal leaves its stacks (crash_stacks)."""
    try:
        import resource
        hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
        resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
    except (ImportError, ValueError, OSError):
        pass


def crash_stacks(exe, tmp, before):
    """Every thread's stack from the core file a crashed program left in tmp (a kernel whose
    core_pattern writes `core` or `core.PID` in the working directory), read with gdb where it
    is installed; a line saying what is missing otherwise. A crash once in a thousand runs (CI,
    session 27) is worth its stacks."""
    cores = [f for f in sorted(set(os.listdir(tmp)) - before) if f.startswith("core")]
    if not cores:
        return "no core file in %s (core_pattern %s)" % (tmp, read_first_line(
            "/proc/sys/kernel/core_pattern"))
    core = os.path.join(tmp, cores[0])
    if not shutil.which("gdb"):
        return "core file %s kept (no gdb here to read it)" % core
    try:
        p = subprocess.run(["gdb", "-q", "-batch", "-ex", "thread apply all bt 30", exe, core],
                           capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return "core file %s kept (gdb: %s)" % (core, e)
    return "core file %s:\n%s" % (core, p.stdout[-6000:])


def read_first_line(path):
    try:
        with open(path) as f:
            return f.readline().strip()
    except OSError:
        return "unreadable"


def slack_cmd(*args):
    p = subprocess.run([SLACK] + list(args), capture_output=True, text=True, timeout=TIMEOUT_S)
    return p.returncode, p.stdout, p.stderr


# ------------------------------------------------------------------------- checks

class Checks:
    def __init__(self):
        self.fails = []

    def ok(self, cond, msg):
        if not cond:
            self.fails.append(msg)
        return cond


def check_same_behavior(c, bare, traced, stderr_lines=(1, 1), rc=0):
    c.ok(bare.rc == rc, "untraced run exit status %d: %s" % (bare.rc, bare.err.strip()[-300:]))
    c.ok(traced.rc == bare.rc, "exit status %d traced, %d untraced%s" %
         (traced.rc, bare.rc, "\n" + traced.crash if getattr(traced, "crash", None) else ""))
    c.ok(traced.out == bare.out, "stdout differs: traced %r, untraced %r" % (traced.out, bare.out))
    c.ok(bare.err == "", "untraced stderr not empty: %r" % bare.err)
    lines = traced.err.splitlines()
    lo, hi = stderr_lines
    c.ok(lo <= len(lines) <= hi, "traced stderr has %d lines (expected %d..%d): %r" %
         (len(lines), lo, hi, traced.err))


def one_trace(c, run):
    slk = [f for f in run.files if f.endswith(".slk")]
    others = [f for f in run.files if not f.endswith(".slk")]
    c.ok(len(slk) == 1, "expected exactly one .slk file in the output directory, found %s" %
         run.files)
    c.ok(not others, "unexpected files left in the output directory: %s" % others)
    if len(slk) != 1:
        return None
    path = os.path.join(run.outdir, slk[0])
    said = [l for l in run.err.splitlines() if path in l or slk[0] in l]
    c.ok(len(said) == 1, "no stderr line names the trace file %s: %r" % (slk[0], run.err))
    return path


def traced_records(c, prog, tmp, env):
    """prog untraced and traced with env, its behaviour checked the same: (trace path, its
    records as `slack dump` gives them), or None (the check says why)."""
    bare = run_prog(prog, tmp, "bare", False, env)
    traced = run_prog(prog, tmp, "traced", True, env)
    check_same_behavior(c, bare, traced)
    path = one_trace(c, traced)
    if not path:
        return None
    rc, out, err = slack_cmd("dump", path)
    if not c.ok(rc == 0, "slack dump failed: %s" % err.strip()):
        return None
    return path, parse_dump(out)


def check_trace(c, path, report, fns, cbids, expect_gpu=True):
    """The trace read back against what the program reported doing."""
    calls, gpu_exp, sync_exp, summary = read_report(report)
    c.ok(summary is not None, "program report has no summary line")
    rc, out, err = slack_cmd("info", "--json", path)
    if not c.ok(rc == 0, "slack info --json failed (%d): %s" % (rc, err.strip())):
        return
    info = json.loads(out)
    rc, out, err = slack_cmd("dump", path)
    if not c.ok(rc == 0, "slack dump failed (%d): %s" % (rc, err.strip())):
        return
    c.ok(err.strip() == "", "slack dump warned: %s" % err.strip())
    recs = parse_dump(out)
    by = collections.defaultdict(list)
    for r in recs:
        by[r["kind"]].append(r)
    kernels, memcpys, memsets = by["kernel"], by["memcpy"], by["memset"]
    hosts, apis, syncs = by["host"], by["api"], by["sync"]

    # --- slack info --json: the documented counters
    n_k = len([g for g in gpu_exp if g["gpu"] == "kernel"])
    n_c = len([g for g in gpu_exp if g["gpu"] == "memcpy"])
    n_s = len([g for g in gpu_exp if g["gpu"] == "memset"])
    want = {"kernels": n_k, "memcpys": n_c, "memsets": n_s, "syncs": len(sync_exp)}
    if not expect_gpu:
        want = {k: 0 for k in want}
    for key, n in want.items():
        c.ok(info.get(key) == n, "info %s = %s, the program made %d" % (key, info.get(key), n))
    c.ok(info.get("dropped") == 0, "info dropped = %s" % info.get("dropped"))
    c.ok(info.get("api_calls") == len(hosts),
         "info api_calls = %s but dump has %d host records" % (info.get("api_calls"), len(hosts)))
    c.ok(not info.get("truncated_reason"), "trace truncated: %s" % info.get("truncated_reason"))
    for key, n in (("kernels", len(kernels)), ("memcpys", len(memcpys)),
                   ("memsets", len(memsets)), ("syncs", len(syncs))):
        c.ok(info.get(key) == n, "info %s = %s but dump has %d" % (key, info.get(key), n))

    # --- host records: every call slack hooks is there, once, with its thread, stream, bytes
    want_host = collections.Counter()
    for call in calls.values():
        fn = norm_fn(call["call"])
        if fn in fns:
            want_host[(fn, call["tid"], call["stream"], call["bytes"])] += 1
    got_host = collections.Counter((h.get("fn"), h.get("tid", 0), h.get("stream", 0),
                                    h.get("bytes", 0)) for h in hosts)
    missing = want_host - got_host
    extra = got_host - want_host
    c.ok(not missing, "calls with no host record (fn, tid, stream, bytes): %s" %
         sorted(missing.items())[:8])
    c.ok(not extra, "host records of no call the program made: %s" % sorted(extra.items())[:8])
    for h in hosts:
        fn = h.get("fn")
        if fn in fns:
            sync = bool(h.get("flags", 0) & 1)
            if sync != fns[fn]:
                c.ok(False, "host %s flags 0x%x: synchronous flag should be %d" %
                     (fn, h.get("flags", 0), fns[fn]))
                break
        if str(fn).startswith("cu") and not str(fn).startswith("cuda"):
            if not c.ok(h.get("flags", 0) & 2, "driver call %s lacks the driver flag" % fn):
                break
        if not c.ok(h.get("end", 0) >= h.get("start", 0) > 0, "host record times: %s" % h):
            break

    if not expect_gpu:
        c.ok(not kernels and not memcpys and not memsets and not apis and not syncs,
             "GPU or CUPTI records in a trace that should have none")
        return

    # --- GPU records: every kernel (by name), copy (by direction and size) and memset
    def gpu_key(kind, r):
        if kind == "kernel":
            return ("kernel", r.get("name"))
        if kind == "memcpy":
            return ("memcpy", COPY_KIND.get(r.get("copy_kind", 0), r.get("copy_kind")),
                    r.get("bytes", 0))
        return ("memset", r.get("bytes", 0))

    def exp_key(g):
        if g["gpu"] == "kernel":
            return ("kernel", g["name"])
        if g["gpu"] == "memcpy":
            return ("memcpy", g["copy"], g["bytes"])
        return ("memset", g["bytes"])

    want_gpu = collections.Counter(exp_key(g) for g in gpu_exp)
    got_gpu = collections.Counter([gpu_key("kernel", r) for r in kernels] +
                                  [gpu_key("memcpy", r) for r in memcpys] +
                                  [gpu_key("memset", r) for r in memsets])
    c.ok(want_gpu == got_gpu, "GPU records differ from the work submitted: missing %s, extra %s" %
         (sorted((want_gpu - got_gpu).items())[:6], sorted((got_gpu - want_gpu).items())[:6]))

    # --- join: GPU record -> CUPTI API record (correlation id) -> host record (same thread, the
    # API call inside the host call) -> the call that submitted the work
    api_by_corr = {}
    for a in apis:
        c.ok(a.get("corr") not in api_by_corr, "two API records with correlation id %s" %
             a.get("corr"))
        api_by_corr[a.get("corr")] = a
    tids = {call["tid"] for call in calls.values()}
    bad_tid = [a for a in apis if a.get("tid") not in tids]
    c.ok(not bad_tid, "%d of %d CUPTI API records carry a thread id that is no thread of the "
         "program (e.g. %s; the program's threads: %s): CUPTI's default thread id is "
         "pthread_self(), cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) gives the "
         "system tid" % (len(bad_tid), len(apis), bad_tid[0].get("tid") if bad_tid else None,
                         sorted(tids)))
    hosts_by_tid = collections.defaultdict(list)
    for h in hosts:
        hosts_by_tid[h.get("tid", 0)].append(h)

    def host_of(a):
        """The host call on the API record's thread that contains it (within TOL_NS)."""
        best, best_v = None, None
        for h in hosts_by_tid.get(a.get("tid"), ()):
            v = max(0, h["start"] - a.get("start", 0)) + max(0, a.get("end", 0) - h["end"])
            if best_v is None or v < best_v:
                best, best_v = h, v
        return best if best_v is not None and best_v <= TOL_NS else None

    want_join = collections.Counter()
    for g in gpu_exp:
        call = calls[g["seq"]]
        want_join[(norm_fn(call["call"]), call["tid"], call["stream"]) + exp_key(g)] += 1
    got_join = collections.Counter()
    unjoined, bad_fn, early, stream_map = [], [], [], collections.defaultdict(set)
    # Since format 1.1 the writer puts the API call's correlation id into the host record it
    # falls on and drops that API record: such host records join directly.
    host_by_corr = {}
    for h in hosts:
        if h.get("corr"):
            c.ok(h["corr"] not in host_by_corr and h["corr"] not in api_by_corr,
                 "correlation id %s on two records" % h["corr"])
            host_by_corr[h["corr"]] = h
    for kind, lst in (("kernel", kernels), ("memcpy", memcpys), ("memset", memsets)):
        for r in lst:
            h = host_by_corr.get(r.get("corr"))
            if h:
                if r.get("start", 0) + TOL_NS < h.get("start", 0):
                    early.append((kind, r.get("corr")))
                stream_map[h.get("stream", 0)].add(r.get("stream"))
                got_join[(h.get("fn"), h.get("tid", 0), h.get("stream", 0)) + gpu_key(kind, r)] += 1
                continue
            a = api_by_corr.get(r.get("corr"))
            if not a:
                unjoined.append((kind, r.get("corr")))
                continue
            name = cbids.get(api_fn(a))
            h = host_of(a)
            if not h:
                unjoined.append((kind, r.get("corr"), "no host call around API record"))
                continue
            if name is None or norm_fn(name) != h.get("fn"):
                bad_fn.append((name, h.get("fn")))
            if r.get("start", 0) + TOL_NS < a.get("start", 0):
                early.append((kind, r.get("corr")))
            stream_map[h.get("stream", 0)].add(r.get("stream"))
            got_join[(h.get("fn"), h.get("tid", 0), h.get("stream", 0)) + gpu_key(kind, r)] += 1
    c.ok(not unjoined, "%d GPU records not joined to their launching call: %s" %
         (len(unjoined), unjoined[:6]))
    c.ok(not bad_fn, "API record function differs from the host call around it: %s" % bad_fn[:6])
    c.ok(not early, "GPU work starting before its API call: %s" % early[:6])
    if not unjoined:
        c.ok(want_join == got_join, "joined GPU work differs per call: missing %s, extra %s" %
             (sorted((want_join - got_join).items())[:4],
              sorted((got_join - want_join).items())[:4]))
    # NULL, cudaStreamLegacy and cudaStreamPerThread name a different stream per thread or
    # context: several CUPTI ids are fine for them
    special = (0, 1, 2)
    for hs, ids in stream_map.items():
        if hs not in special:
            c.ok(len(ids) == 1, "host stream %#x maps to CUPTI streams %s" % (hs, sorted(ids)))
    named = [s for hs, ids in stream_map.items() if hs not in special for s in ids]
    c.ok(len(named) == len(set(named)), "two host streams share a CUPTI stream id")

    # --- synchronization records: one per stream/event sync and event wait, none for
    # cudaDeviceSynchronize / cuCtxSynchronize (CUPTI 13.0 GA emits none)
    want_sync = collections.Counter(s["sync"] for s in sync_exp)
    got_sync = collections.Counter(SYNC_TYPE.get(s.get("type", s.get("fn")), s.get("type"))
                                   for s in syncs)
    c.ok(want_sync == got_sync, "sync records %s, the program made %s" %
         (dict(got_sync), dict(want_sync)))
    # the host really waited: GPU work on a stream submitted before its stream sync ended first
    for s in syncs:
        if SYNC_TYPE.get(s.get("type")) != "STREAM_SYNCHRONIZE":
            continue
        late = [r for r in kernels + memcpys + memsets
                if r.get("stream") == s.get("stream") and r.get("corr", 0) < s.get("corr", 0) and
                r.get("graph_id", 0) == 0 and r.get("end", 0) > s.get("end", 0) + TOL_NS]
        if not c.ok(not late, "stream sync corr %s returned before work it waited for: %s" %
                    (s.get("corr"), late[:2])):
            break

    # --- graph work: carries a graph id; other work does not
    graph_seqs = {g["seq"] for g in gpu_exp if norm_fn(calls[g["seq"]]["call"]) in
                  ("cudaGraphLaunch", "cuGraphLaunch")}
    n_graph = len([g for g in gpu_exp if g["seq"] in graph_seqs])
    got_graph = len([r for r in kernels + memcpys + memsets if r.get("graph_id", 0)])
    c.ok(got_graph == n_graph, "%d GPU records carry a graph id, %d ran inside graph launches" %
         (got_graph, n_graph))

    # --- records of the device
    c.ok(any("Stub GPU" in str(d.get("name", "")) for d in by["device"]),
         "no device record for the stub GPU")
    c.ok(not by["drops"], "drop records: %s" % by["drops"][:3])
    if "kernels_with_launch" in info:
        c.ok(info["kernels_with_launch"] == len(kernels),
             "slack info joins %s of %d kernels to their launch" %
             (info["kernels_with_launch"], len(kernels)))


# ------------------------------------------------------------------------- scenarios

def scenario_traced(prog, expect_gpu=True, env_extra=None, stderr_lines=(1, 1), min_buffers=1,
                    stderr_says=None, rc=0, header=None):
    """header: keys the trace's header must hold with these values (None: must not hold)"""
    def run(tmp, fns, cbids):
        c = Checks()
        bare = run_prog(prog, tmp, "bare", False, env_extra)
        traced = run_prog(prog, tmp, "traced", True, env_extra)
        check_same_behavior(c, bare, traced, stderr_lines, rc)
        if stderr_says:
            c.ok(re.search(stderr_says, traced.err), "stderr does not say /%s/: %r" %
                 (stderr_says, traced.err))
        path = one_trace(c, traced)
        if path and traced.rc == rc:
            check_trace(c, path, traced.report, fns, cbids, expect_gpu)
            if header:
                irc, out, _ = slack_cmd("info", "--json", path)
                got = json.loads(out).get("header", {}) if irc == 0 else {}
                for k, v in header.items():
                    c.ok(got.get(k) == v, "header %s: %r, want %r" % (k, got.get(k), v))
            if min_buffers > 1:  # the stub CUPTI writes one overhead record per buffer request
                irc, out, _ = slack_cmd("info", "--json", path)
                n = json.loads(out).get("overhead_records", 0) if irc == 0 else 0
                c.ok(n >= min_buffers, "CUPTI filled %s buffers, the scenario needs %d" %
                     (n, min_buffers))
        return c
    return run


def scenario_no_gpu(tmp, fns, cbids):
    """No device: the program takes its CPU path; slack changes nothing."""
    c = Checks()
    env = {"STUB_NO_GPU": "1"}
    bare = run_prog("workload", tmp, "bare", False, env)
    traced = run_prog("workload", tmp, "traced", True, env)
    check_same_behavior(c, bare, traced, (0, 2))
    c.ok("no CUDA device" in bare.out, "the program did not see 'no device': %r" % bare.out)
    c.ok(len([f for f in traced.files if f.endswith(".slk")]) <= 1, "several trace files: %s" %
         traced.files)
    return c


def scenario_unwritable(tmp, fns, cbids):
    """Output directory that cannot be written: the program runs as if slack were absent, and
    slack says so (once)."""
    c = Checks()
    blocker = os.path.join(tmp, "not-a-dir")
    open(blocker, "w").close()
    outdir = os.path.join(blocker, "sub")
    bare = run_prog("workload", tmp, "bare", False)
    traced = run_prog("workload", tmp, "traced", True, outdir=outdir)
    check_same_behavior(c, bare, traced, (1, 1))
    c.ok(outdir in traced.err, "stderr does not name the output directory: %r" % traced.err)
    return c


def scenario_exec(tmp, fns, cbids):
    """exec() while tracing: each program image gets its own complete trace, and says where."""
    c = Checks()
    bare = run_prog("exec_chain", tmp, "bare", False)
    traced = run_prog("exec_chain", tmp, "traced", True)
    check_same_behavior(c, bare, traced, (2, 2))
    slk = [f for f in traced.files if f.endswith(".slk")]
    c.ok(len(slk) == 2, "expected two trace files (before and after exec), found %s" %
         traced.files)
    c.ok(len(slk) == len(traced.files), "unexpected files: %s" % traced.files)
    by_prog = {}
    for f in slk:
        path = os.path.join(traced.outdir, f)
        c.ok(sum(1 for l in traced.err.splitlines() if f in l) == 1,
             "stderr does not name %s once: %r" % (f, traced.err))
        rc, out, _ = slack_cmd("info", "--json", path)
        if c.ok(rc == 0, "slack info failed on %s" % f):
            cmd = str(json.loads(out).get("header", {}).get("cmdline", ""))
            by_prog["workload" if cmd.endswith("workload") else "exec_chain"] = path
    if not c.ok(sorted(by_prog) == ["exec_chain", "workload"],
                "cannot tell the two traces apart by their cmdline: %s" % by_prog):
        return c
    if traced.rc == 0:
        check_trace(c, by_prog["exec_chain"], traced.report, fns, cbids)
        check_trace(c, by_prog["workload"], traced.report + ".exec", fns, cbids)
    return c


def scenario_disabled(tmp, fns, cbids):
    """SLACK_DISABLE=1: loaded, records nothing, writes nothing, says nothing."""
    c = Checks()
    bare = run_prog("workload", tmp, "bare", False)
    traced = run_prog("workload", tmp, "traced", True, {"SLACK_DISABLE": "1"})
    check_same_behavior(c, bare, traced, (0, 0))
    c.ok(not traced.files, "files written while disabled: %s" % traced.files)
    return c


def scenario_exit_probe(mode):
    """The exit probe (runtime/probe.c): at exit libslack times empty-kernel launches with
    CUPTI's per-launch records off and on, in the traced process, and writes the medians as one
    PROBE record; `slack report` takes on - off as CUPTI's cost per launch. The stub's CUPTI
    costs a launch STUB_CUPTI_LAUNCH_NS (4 us) while kernel records are on, and a driver call
    STUB_CUPTI_API_NS (1.5 us) more while its API record is on. The probe also times the launch
    through slack's own hook (hooked - on: slack's cost per launch) and with only the API
    records off (on - api_off: their cost). The probe's own kernels, API records, host calls
    and stream map records stay out of the trace. The launches come from a thread of their
    own: the exiting thread has no current context, and the probe borrows the primary one.
    mode "off": SLACK_PROBE=0, no probe, the cost per launch is the assumed default.
    mode "noapi": SLACK_API_RECORDS=0, no API record to turn off: no api_off_ns; the hooks'
    measured cost stands in for the assumed one on every host call."""
    cost, api_cost = 4000, 1500
    env = {"STUB_CUPTI_LAUNCH_NS": str(cost), "STUB_CUPTI_API_NS": str(api_cost),
           "STORM_THREADS": "1", "STORM_LAUNCHES": "3000"}
    if mode == "off":
        env["SLACK_PROBE"] = "0"
    if mode == "noapi":
        env["SLACK_API_RECORDS"] = "0"
        api_cost = 0

    def run(tmp, fns, cbids):
        c = Checks()
        got = traced_records(c, "storm", tmp, env)
        if not got:
            return c
        path, recs = got
        probes = [r for r in recs if r["kind"] == "probe"]
        kernels = [r for r in recs if r["kind"] == "kernel"]
        c.ok(len(kernels) == 3000, "%d kernel records, the program launched 3000" % len(kernels))
        rc, out, err = slack_cmd("report", "--json", path)
        if not c.ok(rc == 0, "slack report --json failed: %s" % err.strip()):
            return c
        tr = json.loads(out)["gpus"][0]["tracer"]
        calls = tr["cupti_calls"]
        c.ok(calls == 3000, "cupti_calls %d, the program launched 3000" % calls)
        if mode == "off":
            c.ok(not probes, "SLACK_PROBE=0 wrote probe records: %s" % probes)
            c.ok(tr["cupti_call_source"] == "assumed", "source %s" % tr["cupti_call_source"])
            c.ok(tr["cupti_ns"] == calls * 3300, "cupti_ns %d, not the default 3300 per call" %
                 tr["cupti_ns"])
            return c
        if not c.ok(len(probes) == 1, "%d probe records" % len(probes)):
            return c
        p = probes[0]
        diff = p["on_ns"] - p.get("off_ns", 0)
        c.ok(p["launches"] == 512, "probe timed %d launches per state" % p["launches"])
        c.ok((cost + api_cost) * 0.9 <= diff <= (cost + api_cost) * 2,
             "probe on - off = %d ns (on %d, off %d); the stub's CUPTI costs %d" %
             (diff, p["on_ns"], p.get("off_ns", 0), cost + api_cost))
        c.ok(p.get("off_ns", 0) < cost, "off median %d ns: records were not off" % p.get("off_ns", 0))
        # slack's own hook path on top of CUPTI: tens of ns, less than the stub's CUPTI; on a
        # loaded machine the medians of the alternating windows move by more than that, so a
        # tenth of the launch either way (a run under `make test` beside other work: -35 ns)
        hooks = p.get("hooked_ns", 0) - p["on_ns"]
        c.ok("hooked_ns" in p and -p["on_ns"] // 10 < hooks < 50000,
             "probe hooked - on = %d ns (hooked %s, on %d): slack's hooks per launch" %
             (hooks, p.get("hooked_ns"), p["on_ns"]))
        if mode == "noapi":
            c.ok("api_off_ns" not in p, "API records off measured without API records: %s" % p)
        else:
            api = p["on_ns"] - p.get("api_off_ns", 0)
            c.ok("api_off_ns" in p and api_cost * 0.5 <= api <= api_cost * 3,
                 "probe on - api_off = %d ns (api_off %s); the stub's API records cost %d" %
                 (api, p.get("api_off_ns"), api_cost))
        inside = [r for r in recs if r["kind"] in ("api", "overhead", "host", "stream")
                  and r.get("tid") == p["tid"] and p["start"] <= r.get("start", 0) <= p["end"]]
        c.ok(not inside, "the probe's own records are in the trace: %s" % inside[:3])
        hosts = [r for r in recs if r["kind"] == "host"]
        c.ok(len(hosts) == 3000 + 1, "%d host records, the program made 3001 calls" % len(hosts))
        c.ok(not any("slack_probe" in str(r.get("name", "")) for r in kernels),
             "the probe's kernels are in the trace")
        c.ok(tr["cupti_call_source"] == "measured", "source %s" % tr["cupti_call_source"])
        c.ok(tr["cupti_ns"] == calls * diff, "cupti_ns %d != %d calls x %d" %
             (tr["cupti_ns"], calls, diff))
        c.ok(tr.get("probe", {}).get("launch_call_on_ns") == p["on_ns"], "report's probe %s" %
             tr.get("probe"))
        c.ok(tr.get("hook_per_launch_ns") == max(hooks, 0) and
             tr.get("probe", {}).get("launch_call_hooked_ns") == p.get("hooked_ns"),
             "report's hooks per launch %s, the probe's %d" % (tr.get("hook_per_launch_ns"), hooks))
        if mode != "noapi":
            c.ok(tr.get("api_records_per_launch_ns") == p["on_ns"] - p.get("api_off_ns", 0),
                 "report's API records per launch %s" % tr.get("api_records_per_launch_ns"))
        else:
            c.ok("api_records_per_launch_ns" not in tr, "API records per launch without them")
            c.ok(tr["hook_ns"] >= tr["calls"] * hooks,
                 "hook_ns %d: not the probe's %d ns for each of %d calls" %
                 (tr["hook_ns"], hooks, tr["calls"]))
        c.ok(p.get("off") == "detached" and tr.get("probe", {}).get("off") == "detached",
             "the probe's off state was not CUPTI detached: %s, %s" % (p.get("off"), tr.get("probe")))
        rc, out, err = slack_cmd("report", "--json", "--cupti-call-ns", "777", path)
        if c.ok(rc == 0, "slack report --cupti-call-ns failed: %s" % err.strip()):
            tr = json.loads(out)["gpus"][0]["tracer"]
            c.ok(tr["cupti_call_source"] == "given" and tr["cupti_ns"] == calls * 777,
                 "--cupti-call-ns 777 gave %s, %d" % (tr["cupti_call_source"], tr["cupti_ns"]))
        rc, out, err = slack_cmd("report", path)
        c.ok("measured in the run (exit probe)" in out, "the text report does not say the cost "
             "per launch was measured")
        c.ok("slack's hooks" in out and (mode == "noapi") != ("its API records" in out),
             "the text report does not give the hooks' and API records' cost per launch")
        c.notes = ["probe: on %d ns, off %d ns, hooked %s ns, api_off %s ns, %d launches each, "
                   "%.1f ms" % (p["on_ns"], p.get("off_ns", 0), p.get("hooked_ns"),
                                p.get("api_off_ns"), p["launches"], (p["end"] - p["start"]) / 1e6)]
        return c
    return run


def work_of_fn(fn):
    """'kernel', 'memcpy' or 'memset' for a host call that submits one such operation, else None
    (graph launches, host functions, waits), as analyzer/cls_order.c sorts them."""
    fn = str(fn)
    if "Graph" in fn or "HostFunc" in fn:
        return None
    for word, kind in (("Launch", "kernel"), ("Memcpy", "memcpy"), ("Memset", "memset")):
        if word in fn:
            return kind
    return None


def scenario_no_api_records(tmp, fns, cbids):
    """SLACK_API_RECORDS=0: CUPTI records the GPU work but no API call, so no kernel, copy or
    memset joins its host call by correlation id. libslack names every stream handle its hooks
    see by CUPTI's stream id (STREAM records, runtime/streams.c), and `slack report` joins the
    work by each stream's order (analyzer/cls_order.c): every kernel outside the graph with its
    launch, the launch sites in the report. Fails when the names are missing or wrong."""
    c = Checks()
    env = {"SLACK_API_RECORDS": "0"}
    got = traced_records(c, "workload", tmp, env)
    if not got:
        return c
    path, recs = got
    by = collections.defaultdict(list)
    for r in recs:
        by[r["kind"]].append(r)
    c.ok(not by["api"] and not [h for h in by["host"] if h.get("corr")],
         "%d API records, %d host calls with a correlation id: want none" %
         (len(by["api"]), len([h for h in by["host"] if h.get("corr")])))
    # the names: handle (and thread, for the handles of the current context) -> CUPTI stream id
    named = {}
    for r in sorted(by["stream"], key=lambda r: r.get("start", 0)):
        hs = r.get("stream", 0)
        named.setdefault((hs, r.get("tid") if hs <= 2 else 0), r.get("stream_id"))
    calls = collections.Counter()
    unnamed = set()
    for h in by["host"]:
        w = work_of_fn(h.get("fn"))
        if not w or h.get("result"):
            continue
        hs = h.get("stream", 0)
        key = (hs, h.get("tid") if hs <= 2 else 0)
        if key not in named:
            unnamed.add(key)
            continue
        calls[(named[key], w)] += 1
    c.ok(by["stream"] and not unnamed, "%d STREAM records; handles never named: %s" %
         (len(by["stream"]), sorted(unnamed)))
    ops = collections.Counter((r.get("stream"), k) for k in ("kernel", "memcpy", "memset")
                              for r in by[k] if not r.get("graph_id"))
    # (calls made while a stream captures a graph submit nothing: their work runs in the graph)
    c.ok(ops and all(calls[k] == n for k, n in ops.items()), "per (CUPTI stream, work): calls "
         "on the named handles %s, GPU work %s" % (sorted(calls.items()), sorted(ops.items())))
    n_k = len(by["kernel"])
    n_graph = len([k for k in by["kernel"] if k.get("graph_id")])
    rc, out, err = slack_cmd("report", "--json", path)
    if not c.ok(rc == 0, "slack report failed: %s" % err.strip()):
        return c
    rep = json.loads(out)
    lj = rep.get("launch_join", {})
    c.ok(lj.get("kernels") == n_k and lj.get("with_launch_by_order") == n_k - n_graph and
         lj.get("with_launch") == n_k - n_graph, "report launch_join %s: want every one of the "
         "%d kernels outside the graph (%d) joined by order" % (lj, n_k - n_graph, n_graph))
    sites = [x["site"] for g in rep.get("gpus", []) for x in g["callsites"]["launch_overhead"]]
    c.ok(any("workload" in s for s in sites), "no launch site of the program in the report's "
         "launch overhead: %s" % sites)
    return c


def scenario_delay(tmp, fns, cbids):
    """SLACK_DELAY_MS: calls in the first N ms after load pass through unrecorded; the first call
    after them starts tracing (CUPTI enabled mid-run). storm's main thread makes 500 launches and
    a sync before the delay ends, then its thread 1000 launches and a sync after: the trace has
    exactly the second phase. A delay longer than the program: no trace, nothing said."""
    c = Checks()
    env = {"STORM_EARLY": "500", "STORM_PAUSE_MS": "400", "STORM_THREADS": "1",
           "STORM_LAUNCHES": "1000", "SLACK_DELAY_MS": "150"}
    bare = run_prog("storm", tmp, "bare", False, env)
    traced = run_prog("storm", tmp, "traced", True, env)
    check_same_behavior(c, bare, traced)
    path = one_trace(c, traced)
    if path:
        rc, out, err = slack_cmd("info", "--json", path)
        if c.ok(rc == 0, "slack info failed: %s" % err.strip()):
            info = json.loads(out)
            got = {k: info.get(k) for k in ("kernels", "api_calls", "syncs", "dropped")}
            c.ok(got == {"kernels": 1000, "api_calls": 1001, "syncs": 1, "dropped": 0},
                 "after the delay the program made 1000 launches and 1 sync; the trace has %s" %
                 got)
    env_long = dict(env, SLACK_DELAY_MS="60000", STORM_PAUSE_MS="10")
    late = run_prog("storm", tmp, "late", True, env_long)
    check_same_behavior(c, bare, late, (0, 0))
    c.ok(not late.files, "a delay longer than the program left files: %s" % late.files)
    return c


def scenario_duration(tmp, fns, cbids):
    """SLACK_DURATION_MS: the first recorded call after the window ends it (the exit probe runs
    there, CUPTI is detached, the trace is finished and said complete); later calls pass
    through. storm's main thread makes 500 launches and a sync inside the window, then sleeps
    past it; its thread's first launch ends the window (and is recorded), the other 999 and the
    sync are not (SLACK_TAIL_MS=0: no untraced tail after it; scenario_tail has one)."""
    c = Checks()
    env = {"STORM_EARLY": "500", "STORM_PAUSE_MS": "400", "STORM_THREADS": "1",
           "STORM_LAUNCHES": "1000", "SLACK_DURATION_MS": "150", "STUB_CUPTI_LAUNCH_NS": "2000",
           "SLACK_TAIL_MS": "0"}
    bare = run_prog("storm", tmp, "bare", False, env)
    traced = run_prog("storm", tmp, "traced", True, env)
    check_same_behavior(c, bare, traced, (2, 2))
    c.ok("tracing stopped after 150 ms (SLACK_DURATION_MS)" in traced.err,
         "stderr does not say the window ended: %r" % traced.err)
    path = one_trace(c, traced)
    if path:
        rc, out, err = slack_cmd("info", "--json", path)
        if c.ok(rc == 0, "slack info failed: %s" % err.strip()):
            info = json.loads(out)
            got = {k: info.get(k) for k in ("kernels", "api_calls", "syncs", "dropped", "probes")}
            c.ok(got == {"kernels": 501, "api_calls": 502, "syncs": 1, "dropped": 0, "probes": 1},
                 "the window held 501 launches and 1 sync, and a probe; the trace has %s" % got)
            c.ok(not info.get("truncated_reason"), "trace not complete: %s" %
                 info.get("truncated_reason"))
    return c


def scenario_tail(tmp, fns, cbids):
    """SLACK_TAIL_MS after a SLACK_DURATION_MS window: the probe detaches CUPTI, then the hooks
    go on timing calls (no GPU record) for the tail; the report compares the host's time between
    calls traced and untraced. storm: 500 launches and a sync in the window, a pause past it,
    then 500 launches in the tail; the stand-in CUPTI costs 20 us per launch while attached."""
    c = Checks()
    env = {"STORM_EARLY": "500", "STORM_PAUSE_MS": "400", "STORM_THREADS": "1",
           "STORM_LAUNCHES": "1000", "SLACK_DURATION_MS": "150", "SLACK_TAIL_MS": "2000",
           "STUB_CUPTI_LAUNCH_NS": "20000"}
    bare = run_prog("storm", tmp, "bare", False, env)
    traced = run_prog("storm", tmp, "traced", True, env)
    check_same_behavior(c, bare, traced, (2, 2))
    c.ok("host calls are timed 2000 ms more without CUPTI (SLACK_TAIL_MS)" in traced.err,
         "stderr does not say the tail began: %r" % traced.err)
    path = one_trace(c, traced)
    if not path:
        return c
    rc, out, err = slack_cmd("info", "--json", path)
    if c.ok(rc == 0, "slack info failed: %s" % err.strip()):
        info = json.loads(out)
        got = {k: info.get(k) for k in ("kernels", "syncs", "probes")}
        c.ok(got == {"kernels": 501, "syncs": 1, "probes": 1},
             "the window held 501 launches and 1 sync, the tail no GPU record: %s" % got)
        c.ok(not info.get("truncated_reason"), "trace not complete")
    rc, out, err = slack_cmd("report", "--json", path)
    if c.ok(rc == 0, "slack report failed: %s" % err.strip()):
        g = json.loads(out)["gpus"][0]
        t = g["tracer"].get("untraced_tail")
        if c.ok(t is not None, "no untraced_tail in the report: %s" % g["tracer"]):
            c.ok(t["calls"] >= 499, "the tail holds %s calls, not the 499 launches after the "
                 "window's last" % t["calls"])
            c.ok(t["intervals_traced"] >= 100 and t["intervals_untraced"] >= 100,
                 "intervals: %s" % t)
            c.ok(t["call_interval_traced_ns"] >= 20000 > t["call_interval_untraced_ns"],
                 "the traced launches cost the stand-in's 20 us, the untraced ones less: %s" % t)
            c.ok(t["host_slowdown"] > 1.5, "host_slowdown %s" % t["host_slowdown"])
        # the tail is not classified: the window ends before the probe that began it
        _, dump, _ = slack_cmd("dump", path)
        starts = [int(m) for m in re.findall(r"^(?:host|kernel) .*?start=(\d+)", dump, re.M)]
        probe = re.search(r"^probe .*?start=(\d+)", dump, re.M)
        c.ok(probe and starts and g["window_ns"] <= int(probe.group(1)) - min(starts),
             "the classified window (%s ns) reaches into the tail" % g["window_ns"])
    rc, out, err = slack_cmd("report", path)
    c.ok(rc == 0 and "untraced tail: " in out and "the tracer slowed the host" in out,
         "the text report does not say what the tail measured")
    # unset, a window still gets a tail: 3 s by default
    env_default = {k: v for k, v in env.items() if k != "SLACK_TAIL_MS"}
    dflt = run_prog("storm", tmp, "default", True, env_default)
    c.ok(dflt.rc == 0 and dflt.out == bare.out, "the default tail changed the program")
    c.ok("host calls are timed 3000 ms more without CUPTI (SLACK_TAIL_MS)" in dflt.err,
         "no default tail of 3000 ms: %r" % dflt.err)
    # a bad value: said once, the default (a 3 s tail) kept, the program unchanged
    env_bad = dict(env, SLACK_TAIL_MS="-5")
    bad = run_prog("storm", tmp, "bad", True, env_bad)
    c.ok(bad.rc == 0 and bad.out == bare.out, "a bad SLACK_TAIL_MS changed the program")
    c.ok("SLACK_TAIL_MS" in bad.err and "host calls are timed 3000 ms more" in bad.err,
         "a bad SLACK_TAIL_MS is not said, or the default tail did not run: %r" % bad.err)
    return c


def scenario_second_client(tmp, fns, cbids):
    """Another CUPTI client in the program (tests/progs/second_client.c, as torch.profiler's
    Kineto): after 40 launches it registers its own activity buffer callbacks. slack steps back:
    the program's client gets every kernel record it gets without slack, stderr says so once, the
    trace keeps the 40 kernels before, marks the time (TAKEN) and keeps the host calls after, and
    the report classifies only the time before. Registered before the program's first CUDA call,
    the other client keeps CUPTI and slack records host calls only."""
    c = Checks()
    env = {"SECOND_EARLY": "40", "SECOND_LATE": "60"}
    bare = run_prog("second_client", tmp, "bare", False, env)
    traced = run_prog("second_client", tmp, "traced", True, env)
    check_same_behavior(c, bare, traced, (2, 2))
    c.ok("60 kernel records of 60 launches" in bare.out, "untraced: %r" % bare.out)
    said = [l for l in traced.err.splitlines() if "another CUPTI client" in l]
    c.ok(len(said) == 1, "stderr does not say once that another client took CUPTI: %r" %
         traced.err)
    path = one_trace(c, traced)
    if not path:
        return c
    rc, out, err = slack_cmd("info", "--json", path)
    if c.ok(rc == 0, "slack info failed: %s" % err.strip()):
        info = json.loads(out)
        got = {k: info.get(k) for k in ("kernels", "taken_records")}
        c.ok(got == {"kernels": 40, "taken_records": 1},
             "the trace should hold the 40 kernels before and one TAKEN record: %s" % got)
        c.ok(info.get("api_calls", 0) >= 102, "host calls after the takeover were not kept: %s"
             % info.get("api_calls"))
    rc, out, err = slack_cmd("report", "--json", path)
    if c.ok(rc == 0, "slack report failed: %s" % err.strip()):
        g = json.loads(out)["gpus"][0]
        t = g["tracer"].get("cupti_taken")
        c.ok(t is not None and t["calls_after"] >= 60 and "untraced_tail" not in g["tracer"],
             "the report does not keep the calls after the takeover apart: %s" % g["tracer"])
    rc, out, err = slack_cmd("report", path)
    c.ok(rc == 0 and "another CUPTI client in the process" in out,
         "the text report does not say the GPU records ended early")
    # the other order: the program's client registers before its first CUDA call, so before
    # libslack's CUPTI starts; libslack leaves CUPTI to it and records host calls only
    env_first = dict(env, SECOND_FIRST="1")
    bare = run_prog("second_client", tmp, "bare-first", False, env_first)
    traced = run_prog("second_client", tmp, "traced-first", True, env_first)
    check_same_behavior(c, bare, traced, (2, 2))
    c.ok("100 kernel records of 100 launches" in bare.out, "untraced, first: %r" % bare.out)
    said = [l for l in traced.err.splitlines() if "taken by another client" in l]
    c.ok(len(said) == 1, "stderr does not say once that CUPTI is another client's: %r" %
         traced.err)
    path = one_trace(c, traced)
    if path:
        rc, out, err = slack_cmd("info", "--json", path)
        if c.ok(rc == 0, "slack info failed: %s" % err.strip()):
            info = json.loads(out)
            c.ok(info.get("kernels") == 0 and info.get("api_calls", 0) >= 102 and
                 "another client" in info["header"].get("gpu_records", ""),
                 "host calls only, and the header saying why: %s" %
                 {k: info.get(k) for k in ("kernels", "api_calls", "header")})
    return c


def scenario_nvtx(mode):
    """NVTX ranges (tests/progs/nvtx_steps.c): libslack is the program's NVTX tool; every range
    that ends while tracing runs is one MARKER record, and `slack report` takes its steps from
    them; the launches' call sites carry their stacks. mode "off" (SLACK_NVTX=0, and
    SLACK_STACK_DEPTH=0) and "foreign" (NVTX_INJECTION64_PATH names another tool, here one that
    does not exist): no ranges recorded, the program unchanged."""
    env = {"off": {"SLACK_NVTX": "0", "SLACK_STACK_DEPTH": "0"},
           "foreign": {"NVTX_INJECTION64_PATH": "/nonexistent/libother-tool.so"}}.get(mode, {})

    def run(tmp, fns, cbids):
        c = Checks()
        bare = run_prog("nvtx_steps", tmp, "bare", False, env)
        traced = run_prog("nvtx_steps", tmp, "traced", True, env)
        check_same_behavior(c, bare, traced)
        c.ok("push -2 pop -2" in bare.out, "NVTX returned other than with no tool: %r" % bare.out)
        path = one_trace(c, traced)
        if not path:
            return c
        rc, out, err = slack_cmd("dump", path)
        if not c.ok(rc == 0, "slack dump failed (%d): %s" % (rc, err.strip())):
            return c
        recs = parse_dump(out)
        markers = [r for r in recs if r["kind"] == "marker"]
        got = collections.Counter(m.get("name") for m in markers)
        if mode != "on":
            c.ok(not markers, "%d ranges recorded with NVTX %s: %s" % (len(markers), mode, got))
            if mode == "off":  # SLACK_STACK_DEPTH=0 too: call sites are the caller alone
                multi = [r.get("callsite") for r in recs
                         if r["kind"] == "host" and "\n" in str(r.get("callsite", ""))]
                c.ok(not multi, "stacks taken with SLACK_STACK_DEPTH=0: %s" % multi[:2])
            return c
        # "open": 600 start/end ranges open at once, of which libslack keeps the last 512
        want = collections.Counter({"train_step": 8, "forward": 8, "data": 8, "wide": 1,
                                    "registered_range": 1, "async_range": 1, "open": 512})
        c.ok(got == want, "ranges recorded %s, the program made %s (before_cuda: not traced)" %
             (dict(got), dict(want)))
        c.ok(all(m["end"] >= m["start"] for m in markers), "a range ends before it starts")
        steps = sorted((m for m in markers if m.get("name") == "train_step"),
                       key=lambda m: m["start"])
        fwd = [m for m in markers if m.get("name") == "forward"]
        for st in steps:
            inner = [f for f in fwd if st["start"] <= f["start"] and f["end"] <= st["end"] and
                     f.get("tid") == st.get("tid")]
            c.ok(len(inner) == 1, "train_step at %d holds %d forward ranges" %
                 (st["start"], len(inner)))
        c.ok(all(a["end"] <= b["start"] for a, b in zip(steps, steps[1:])),
             "train_step ranges overlap")
        # each step range holds its three launches
        hosts = [r for r in recs if r["kind"] == "host" and "aunch" in str(r.get("fn"))]
        # the launches' call site carries its stack (runtime/stacks.c): the program's caller,
        # then its callers out to libc's start
        sites = {h.get("callsite", "") for h in hosts}
        c.ok(sites and all(s.count("\n") >= 2 and "__libc_start_main" in s for s in sites),
             "launch call sites without their stack: %s" % sorted(sites)[:2])
        for st in steps:
            n = len([h for h in hosts if st["start"] <= h["start"] and h["end"] <= st["end"]])
            c.ok(n == 3, "train_step at %d holds %d launches, the program made 3" % (st["start"], n))
        rc, out, err = slack_cmd("report", "--json", path)
        if c.ok(rc == 0, "slack report failed (%d): %s" % (rc, err.strip())):
            sp = json.loads(out)["gpus"][0]["steps"]
            c.ok(sp["source"] == "nvtx", "steps from %r, not from the NVTX ranges" % sp["source"])
            warm = sp.get("warmup", 0)  # the JSON's count (the detail says "1 warm-up step")
            c.ok(sp["count"] + warm == 7 and sp["count"] >= 5,
                 "%d steps (and %d warm-up) from 8 train_step ranges: %s" %
                 (sp["count"], warm, sp.get("detail")))
        return c
    return run


SCENARIOS = [
    ("e2e_workload_runtime", scenario_traced("workload")),
    ("e2e_nvtx_ranges", scenario_nvtx("on")),
    ("e2e_nvtx_off", scenario_nvtx("off")),
    ("e2e_nvtx_other_tool", scenario_nvtx("foreign")),
    # the environment's switches that change how CUDA and PyTorch run, in the header (set ones
    # only); the driver's virtual memory calls among the hooked ones
    ("e2e_driver_triton_style", scenario_traced("drv_triton", env_extra={
        "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True", "CUDA_LAUNCH_BLOCKING": None},
        header={"env.PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
                "env.CUDA_LAUNCH_BLOCKING": None})),
    ("e2e_no_api_records", scenario_no_api_records),
    # many small CUPTI buffers: full ones come back from CUPTI's worker thread mid-run
    ("e2e_cupti_buffer_rollover", scenario_traced("workload", min_buffers=3, env_extra={
        "WORKLOAD_ITERS": "600", "SLACK_CUPTI_BUFFER_KB": "64"})),
    # CUPTI unusable: the trace file line, and one line saying what is not recorded
    ("e2e_cupti_taken", scenario_traced("workload", expect_gpu=False,
                                        env_extra={"STUB_CUPTI_TAKEN": "1"},
                                        stderr_lines=(2, 2), stderr_says="CUPTI")),
    ("e2e_cupti_too_old", scenario_traced("workload", expect_gpu=False,
                                          env_extra={"STUB_CUPTI_VERSION": "120000"},
                                          stderr_lines=(2, 2), stderr_says="CUPTI")),
    ("e2e_exec", scenario_exec),
    # SIGKILL after a pause longer than SLACK_FLUSH_MS: what came before is on disk, GPU
    # records included (no exit handler runs)
    ("e2e_killed", scenario_traced("killed", rc=-9, env_extra={
        "SLACK_FLUSH_MS": "200", "KILLED_PAUSE_MS": "1500"})),
    ("e2e_disabled", scenario_disabled),
    ("e2e_exit_probe", scenario_exit_probe("on")),
    ("e2e_exit_probe_off", scenario_exit_probe("off")),
    ("e2e_exit_probe_noapi", scenario_exit_probe("noapi")),
    ("e2e_delay", scenario_delay),
    ("e2e_duration", scenario_duration),
    ("e2e_tail", scenario_tail),
    ("e2e_second_cupti_client", scenario_second_client),
    ("e2e_no_gpu", scenario_no_gpu),
    ("e2e_unwritable_output", scenario_unwritable),
]

# crashes, exact counts under a launch storm, fork/exec, disk full: tests/e2e/robust.py
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import robust  # noqa: E402

SCENARIOS += robust.scenarios(sys.modules[__name__])

# production windows, every SLACK_* variable of them with bad values: tests/e2e/windows.py
import windows  # noqa: E402

SCENARIOS += windows.scenarios(sys.modules[__name__])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-k", default="", help="run scenarios whose name contains this")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directories")
    args = ap.parse_args()
    missing = [p for p in (LIBSLACK, SLACK, os.path.join(STUB, "libcudart.so.13"))
               if not os.path.exists(p)]
    if missing:
        print("FAIL e2e_setup\n    missing %s (run make, make stub progs)" % missing)
        return 1
    fns, cbids = slack_functions(), cbid_names()
    global SAN_PRELOAD, SAN_ENV
    SAN_PRELOAD, SAN_ENV = sanitizer_preload()
    failed = 0
    for name, fn in SCENARIOS:
        if args.k not in name:
            continue
        tmp = tempfile.mkdtemp(prefix="slack-" + name + "-")
        try:
            c = fn(tmp, fns, cbids)
        except Exception as e:  # a crash in a scenario is its failure, not the runner's
            c = Checks()
            c.ok(False, "%s: %s" % (type(e).__name__, e))
        if c.fails:
            failed += 1
            print("FAIL %s    (files kept in %s)" % (name, tmp))
            for f in c.fails:
                print("    " + f)
        elif getattr(c, "skip", None):  # could not run here: neither passed nor failed
            print("SKIP %s    (%s)" % (name, c.skip))
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print("PASS %s" % name)
            if not args.keep:
                shutil.rmtree(tmp, ignore_errors=True)
        for note in getattr(c, "notes", []):
            print("    " + note)
        sys.stdout.flush()
    return failed


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""scripts/bench/run.sh: slack's overhead against no profiler, its own nop build, bare CUPTI,
torch.profiler and nsys, on the GPU machine, in one call. stdlib only.

Builds what it needs (libslack.so and libslack-nop.so, the slack command, empty_launch.cu with
nvcc -cudart shared, bare_cupti.c), then runs rounds of processes, A B C ... A B C ..., each
process one configuration of one process kind:

  c    empty_launch: an empty-kernel launch loop in C (us per launch)
  py   torch_suite.py: the conv net of scripts/workloads/probe_train.py (steps/s), a tiny-op
       loop (us per op) and a small transformer's training steps (steps/s), in one process
       (torch's start-up is paid once per process, not per workload)
  hb   resnet_seed.py --form l: ResNet-50 fed by a DataLoader in the main thread doing real CPU
       transforms (a host-bound step: ms per step; BENCH_HB_STEPS timed steps, default 20, after
       3 of warm-up: ~20 s a process on the H200). Configurations none, full, bare, windows,
       hooks only (nop, torch.profiler and nsys are not run on it)

and the configurations

  none    no profiler                       nop     libslack built with -DSLACK_NOP
  hooks   libslack, SLACK_CUPTI=0           full    libslack, full trace
  windows libslack, full trace inside production windows: SLACK_WINDOW=$BENCH_WINDOW, default
          500ms/5s (the issue's 2 s every 20 s of a 5-minute run, the same 10% duty cycle on
          these short processes; the first window opens at the first CUDA call); CUPTI stays
          attached between windows with its records disabled (SLACK_WINDOW_DETACH's default, 0):
          windows:SLACK_WINDOW_DETACH=1 measures CUPTI detached between windows beside it
  bare    bare CUPTI, same record kinds (bare_cupti.c: the floor)
  kineto  torch.profiler, CPU + CUDA (py)   nsys    nsys profile --trace=cuda,nvtx
  BASE:VAR=VALUE[:VAR=VALUE]   any of the above with SLACK_* settings, e.g. full:SLACK_API_RECORDS=0

Time budget: the jobs of the first round all run; after it, each round runs the priority-1 jobs
(kept to REPEATS rounds), and the priority-2 then -3 jobs only while the rest of the budget
still fits every remaining priority-1 round. So the table always comes, within BENCH_BUDGET_S
of BENCH_T0, and says how many repeats each cell got. With the three process kinds a round of
the priority-1 jobs takes about 3 minutes on the H200 (c ~6 s, py ~90 s, hb ~90 s), so the
default 570 s gets about 3 rounds, not 7: BENCH_PROCS=hb (or c,py) in a call of its own gets more.

Environment: OUT (results, default /tmp/slack-bench-out), BENCH_WORK (scratch, default
/tmp/slack-bench), BENCH_REPEATS (7), BENCH_BUDGET_S (570, from BENCH_T0 = run.sh's start),
BENCH_PROCS (c,py,hb), BENCH_CONFIGS (none,nop,hooks,full,windows,bare,kineto,nsys),
BENCH_WINDOW (500ms/5s: SLACK_WINDOW of the windows configuration), BENCH_HB_STEPS (20),
BENCH_NO_TRANSFORMER=1 (the py process without its transformer: shorter, more rounds),
BENCH_DRYRUN=1 (CPU only: tests/stub, a fake torch suite and a fake loader stand in, to test this
script).

Writes $OUT/results.csv (one row per process and workload), $OUT/summary.md (the tables,
printed last) and $OUT/bench-logs.tgz (every process's stdout/stderr, build logs, one slack
trace per process kind).
"""
import csv
import glob
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "scripts", "bench")
BUILD = os.path.join(ROOT, "build")
OUT = os.environ.get("OUT") or "/tmp/slack-bench-out"
WORK = os.environ.get("BENCH_WORK") or "/tmp/slack-bench"
T0 = float(os.environ.get("BENCH_T0") or time.time())
BUDGET = float(os.environ.get("BENCH_BUDGET_S") or 570)
REPEATS = int(os.environ.get("BENCH_REPEATS") or 7)
DRY = os.environ.get("BENCH_DRYRUN") == "1"
PROCS = [p for p in (os.environ.get("BENCH_PROCS") or "c,py,hb").split(",") if p]
CONFIGS = [c for c in (os.environ.get("BENCH_CONFIGS") or
                       "none,nop,hooks,full,windows,bare,kineto,nsys").split(",") if c]
# production windows: W of every P (runtime/config.c's SLACK_WINDOW syntax); the figure is
# 2s/20s over a 5-minute run, the same 10% duty cycle here on processes of 1-25 s
WINDOW = os.environ.get("BENCH_WINDOW") or "500ms/5s"
# the syntax runtime/config.c accepts (durations: a number, then ms, s, m or nothing for ms);
# slack would ignore another value and trace everything, so such a row is not run
_W = re.fullmatch(r"([0-9]+)(ms|s|m)?/([0-9]+)(ms|s|m)?", WINDOW)
_MS = {None: 1, "ms": 1, "s": 1000, "m": 60000}
_W_MS, _P_MS = (int(_W.group(1)) * _MS[_W.group(2)], int(_W.group(3)) * _MS[_W.group(4)]) \
    if _W else (0, 0)
WINDOW_OK = 0 < _W_MS <= _P_MS <= 86400000
# the period P in seconds (a process shorter than it does not see the duty cycle) and W/P in %
WINDOW_P_S = _P_MS / 1e3
WINDOW_DUTY = 100.0 * _W_MS / _P_MS if WINDOW_OK else 0
HB_STEPS = int(os.environ.get("BENCH_HB_STEPS") or 20)
# BENCH_NO_TRANSFORMER=1: the py process without its transformer (a shorter process, so that a
# call of 570 s holds 7 rounds of 6 configurations)
NO_TRANSFORMER = os.environ.get("BENCH_NO_TRANSFORMER") == "1"
NSYS = "/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys"
CUDA = "/usr/local/cuda"

LABEL = {
    "none": "no profiler",
    "nop": "libslack nop build",
    "hooks": "libslack hooks only (SLACK_CUPTI=0)",
    "full": "libslack full trace",
    "windows": "libslack production windows %s" % WINDOW,
    "bare": "bare CUPTI, same kinds (floor)",
    "kineto": "torch.profiler CPU+CUDA",
    "nsys": "nsys --trace=cuda,nvtx",
}
# priority per process kind: 1 gets REPEATS rounds; 2 and 3 what the budget leaves. A
# configuration missing from a kind's list is not run on that kind.
PRIO = {
    "c": {"none": 1, "nop": 1, "hooks": 1, "full": 1, "windows": 1, "bare": 1, "nsys": 2},
    "py": {"none": 1, "full": 1, "windows": 1, "bare": 1, "nsys": 1, "kineto": 1, "hooks": 3,
           "nop": 3},
    "hb": {"none": 1, "full": 1, "windows": 1, "bare": 3, "hooks": 2},
}
WORKLOADS = {"c": ["empty_launch"], "py": ["convnet", "tiny_ops", "transformer"],
             "hb": ["loader"]}
METRIC = {  # workload: (RESULT key, better, unit, per-launch loop?)
    "empty_launch": ("us_per_launch", "lower", "us/launch", True),
    "tiny_ops": ("us_per_op", "lower", "us/op", True),
    "convnet": ("steps_per_s", "higher", "steps/s", False),
    "transformer": ("steps_per_s", "higher", "steps/s", False),
    "loader": ("step_ms", "lower", "ms/step", False),
}
# RESULT lines of the accuracy scenarios (scripts/workloads/scenario_common.py) carry no
# workload=: their scenario and form name it
SCENARIO = {("resnet_seed", "l"): "loader"}
TIMEOUT = {"c": 60, "py": 150, "hb": 120}  # seconds; a hung process is killed (its group)
# seconds per process before any has run (guesses; hb: torch, torchvision and ResNet-50's start
# ~10 s, then 23 steps of ~300 ms)
PRIOR = {"c": 3.0, "py": 12.0, "hb": 20.0}
PRIOR_EXTRA = {"nsys": 10.0, "kineto": 10.0}
SLACK_CFG = ("hooks", "full", "windows")
if NO_TRANSFORMER:  # the py process then prints no transformer result, and is not missing one
    WORKLOADS["py"] = [w for w in WORKLOADS["py"] if w != "transformer"]

log_lines = []


def say(msg):
    line = "[%5.0fs] %s" % (time.time() - T0, msg)
    log_lines.append(line)
    print(line, flush=True)


def sh(cmd, log, timeout=600, env=None):
    with open(log, "a") as f:
        f.write("$ %s\n" % (cmd if isinstance(cmd, str) else " ".join(cmd)))
        f.flush()
        p = subprocess.run(cmd, shell=isinstance(cmd, str), stdout=f, stderr=subprocess.STDOUT,
                           timeout=timeout, cwd=ROOT, env=env)
    return p.returncode


def base_of(cfg):
    return cfg.split(":")[0]


def cfg_env(cfg):
    return dict(kv.split("=", 1) for kv in cfg.split(":")[1:])


# ---------------------------------------------------------------------------------- build


def build(env_info):
    blog = os.path.join(WORK, "build.log")
    t = time.time()
    tools = {}
    if sh(["make", "-j16", "build/libslack.so", "build/libslack-nop.so"], blog) != 0:
        sys.exit("build of libslack.so / libslack-nop.so failed: see %s" % blog)
    tools["slack"] = sh(["make", "-j16", "build/slack"], blog) == 0
    if DRY:
        if sh(["make", "-j16", "stub", "build/bench/cpu_loop"], blog) != 0:
            sys.exit("dry run: make stub build/bench/cpu_loop failed: see %s" % blog)
        tools["c_cmd"] = [os.path.join(BUILD, "bench", "cpu_loop")]
    else:
        exe = os.path.join(WORK, "empty_launch")
        rc = sh([CUDA + "/bin/nvcc", "-O2", "-cudart", "shared", "-arch=sm_90",
                 "-Xlinker", "-rpath=" + CUDA + "/lib64", "-o", exe,
                 os.path.join(HERE, "empty_launch.cu")], blog)
        tools["c_cmd"] = [exe] if rc == 0 else None
    bare = os.path.join(WORK, "libbare_cupti.so")
    rc = sh(["gcc", "-O2", "-shared", "-fPIC", "-I" + CUDA + "/include", "-o", bare,
             os.path.join(HERE, "bare_cupti.c"), "-ldl"], blog)
    tools["bare"] = bare if rc == 0 else None
    tools["nsys"] = NSYS if os.path.exists(NSYS) and not DRY else None
    # torch's own libcupti (the copy slack finds in a torch process), without importing torch
    cands = []
    for d in sys.path:
        cands += glob.glob(os.path.join(d, "nvidia", "*", "lib", "libcupti.so.13"))
    tools["torch_cupti"] = cands[0] if cands else ""
    say("build: %.0f s (libslack, nop%s%s%s)" % (
        time.time() - t, ", slack" if tools["slack"] else ", NO slack command",
        ", empty_launch" if tools["c_cmd"] else ", NO empty_launch",
        ", bare_cupti" if tools["bare"] else ", NO bare_cupti"))
    env_info["torch_cupti"] = tools["torch_cupti"] or "(not found: bare_cupti uses the loader's)"
    return tools


def machine_info():
    info = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "host": platform.node(), "kernel": platform.release()}
    try:
        info["gpu"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                                      "--format=csv,noheader"], capture_output=True, text=True,
                                     timeout=30).stdout.strip().replace("\n", "; ")
    except (OSError, subprocess.SubprocessError):
        info["gpu"] = "(nvidia-smi failed)"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                info["cpu"] = "%s x%d" % (line.split(":", 1)[1].strip(), os.cpu_count())
                break
    except OSError:
        pass
    try:
        info["clocksource"] = open(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource").read().strip()
    except OSError:
        info["clocksource"] = "?"
    try:
        info["commit"] = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                                        capture_output=True, text=True).stdout.strip()
    except OSError:
        info["commit"] = "?"
    return info


# ----------------------------------------------------------------------------------- jobs


class Job:
    def __init__(self, proc, cfg):
        self.proc, self.cfg, self.base = proc, cfg, base_of(cfg)
        self.prio = PRIO[proc].get(self.base, 1) if cfg == self.base else 1
        self.name = "%s-%s" % (proc, re.sub(r"[^A-Za-z0-9_.=-]", "_", cfg.replace(":", "+")))
        self.durations = []
        self.runs = []
        self.failures = 0
        self.skip = None  # why this job never runs

    def estimate(self, jobs=()):
        """Seconds this job takes: its own median; before its first run, the median of the runs
        of its process kind so far (or a prior), plus what its profiler adds."""
        if self.durations:
            return statistics.median(self.durations)
        same = [d for j in jobs if j.proc == self.proc and j.base in ("none", "nop", "hooks")
                for d in j.durations]
        base = statistics.median(same) if same else PRIOR[self.proc]
        return base * (1.3 if self.base in ("full", "bare") else 1) + PRIOR_EXTRA.get(self.base, 0)


def command(job, tools, rnd, tag):
    """argv, env, and files to collect afterwards."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLACK_", "BARE_CUPTI_", "BENCH_", "STUB_"))
           and k not in ("LD_PRELOAD", "OUT")}
    env["PYTHONUNBUFFERED"] = "1"
    extra = {}
    if job.proc == "c":
        argv = list(tools["c_cmd"])
        if DRY:
            env.update(LD_LIBRARY_PATH=os.path.join(BUILD, "stub"), BENCH_PRINT="1",
                       BENCH_BLOCKS="10", BENCH_GAP_MS="12")
    elif job.proc == "hb":
        # STEPS and WARMUP: scenario_common.main's own (set here, not inherited from py's STEPS)
        env.update(STEPS=str(HB_STEPS), WARMUP="3")
        if DRY:
            argv = [sys.executable, os.path.join(HERE, "dryrun_loader.py"), "--form", "l"]
        else:
            argv = [sys.executable, os.path.join(ROOT, "scripts", "workloads", "resnet_seed.py"),
                    "--form", "l"]
    else:
        if DRY:
            argv = [sys.executable, os.path.join(HERE, "dryrun_suite.py")]
        else:
            argv = [sys.executable, os.path.join(HERE, "torch_suite.py")]
            if NO_TRANSFORMER:
                argv.append("--no-transformer")
            env.setdefault("STEPS", "60")
    b = job.base
    trace_dir = None
    if b == "nop":
        env["LD_PRELOAD"] = os.path.join(BUILD, "libslack-nop.so")
    elif b in SLACK_CFG:
        trace_dir = os.path.join(WORK, "tr", tag)
        os.makedirs(trace_dir, exist_ok=True)
        env.update(LD_PRELOAD=os.path.join(BUILD, "libslack.so"), SLACK_OUTPUT=trace_dir)
        if b == "hooks":
            env["SLACK_CUPTI"] = "0"
        elif b == "windows":
            env["SLACK_WINDOW"] = WINDOW
    elif b == "bare":
        env["LD_PRELOAD"] = tools["bare"]
        if DRY:
            env["BARE_CUPTI_LIB"] = os.path.join(BUILD, "stub", "libcupti.so.13")
        elif job.proc in ("py", "hb") and tools["torch_cupti"]:
            env["BARE_CUPTI_LIB"] = tools["torch_cupti"]
    elif b == "kineto":
        argv.append("--kineto")
        if not any(r.get("kineto_bytes") for r in job.runs):
            extra["kineto_json"] = os.path.join(WORK, "kineto-%s.json" % tag)
            argv += ["--export", extra["kineto_json"]]
    elif b == "nsys":
        d = os.path.join(WORK, "nsys", tag)
        os.makedirs(d, exist_ok=True)
        extra["nsys_dir"] = d
        argv = [tools["nsys"], "profile", "--trace=cuda,nvtx", "--sample=none",
                "--cpuctxsw=none", "-o", os.path.join(d, "r")] + argv
    env.update(cfg_env(job.cfg))
    return argv, env, trace_dir, extra


def parse_out(text):
    r = {"metrics": {}, "threads": {}, "exit": {}}
    for line in text.splitlines():
        if line.startswith("RESULT "):
            kv = dict(x.split("=", 1) for x in line.split()[1:] if "=" in x)
            w = kv.get("workload") or SCENARIO.get((kv.get("scenario"), kv.get("form")))
            if w in METRIC and METRIC[w][0] in kv:
                r["metrics"][w] = float(kv[METRIC[w][0]])
            elif w is None and "steps_per_s" in kv:  # probe_train.py's own line
                r["metrics"].setdefault("convnet", float(kv["steps_per_s"]))
        elif line.startswith("THREADS "):
            for x in line.split(None, 1)[1].split(","):
                if "=" in x:
                    k, v = x.rsplit("=", 1)
                    r["threads"][k] = r["threads"].get(k, 0) + int(v)
        elif line.startswith("EXIT "):
            r["exit"] = {k: float(v) for k, v in (x.split("=", 1) for x in line.split()[1:])}
        elif line.startswith("KINETO "):
            kv = dict(x.split("=", 1) for x in line.split()[1:])
            r["kineto_bytes"] = int(kv.get("bytes", 0))
            r["kineto_post_s"] = float(kv.get("stop_s", 0)) + float(kv.get("export_s", 0))
    return r


def slack_info(tools, trace_dir):
    files = sorted(glob.glob(os.path.join(trace_dir, "*.slk")))
    if not files or not tools["slack"]:
        return {"trace_note": "no trace" if not files else "no slack command"}
    agg = {"trace_bytes": 0, "gpu_events": 0, "dropped": 0, "kernels": 0, "kernels_joined": 0,
           "records": 0, "files": len(files)}
    for f in files:
        p = subprocess.run([os.path.join(BUILD, "slack"), "info", "--json", f],
                           capture_output=True, text=True)
        if p.returncode != 0:
            return {"trace_note": "slack info failed: " + p.stderr.strip()[:100]}
        i = json.loads(p.stdout)
        agg["trace_bytes"] += i.get("file_bytes") or 0
        agg["gpu_events"] += (i.get("kernels") or 0) + (i.get("memcpys") or 0) + \
            (i.get("memsets") or 0)
        agg["dropped"] += i.get("dropped") or 0
        agg["kernels"] += i.get("kernels") or 0
        agg["kernels_joined"] += i.get("kernels_with_launch") or 0
        agg["records"] += i.get("records") or 0
        # the exit probe, in the process (runtime/probe.c): slack's hooks per launch (hooked -
        # on) and CUPTI's API records per launch (on - api_off), immune to the drift between
        # processes that the per-op rows carry
        p = subprocess.run([os.path.join(BUILD, "slack"), "dump", "--kind", "probe", f],
                           capture_output=True, text=True)
        for line in p.stdout.splitlines():
            kv = dict(re.findall(r"(\w+)=(\S+)", line))
            if "on_ns" in kv and "hooked_ns" in kv and "probe_hooks_ns" not in agg:
                agg["probe_hooks_ns"] = int(kv["hooked_ns"]) - int(kv["on_ns"])
                if "api_off_ns" in kv:
                    agg["probe_api_ns"] = int(kv["on_ns"]) - int(kv["api_off_ns"])
    return agg


def run_job(job, tools, rnd, deadline):
    tag = "%s-r%d" % (job.name, rnd)
    argv, env, trace_dir, extra = command(job, tools, rnd, tag)
    logd = os.path.join(WORK, "logs")
    out_p, err_p = os.path.join(logd, tag + ".out"), os.path.join(logd, tag + ".err")
    timeout = max(10.0, min(TIMEOUT[job.proc], deadline + 30 - time.time()))
    t = time.time()
    with open(out_p, "w") as fo, open(err_p, "w") as fe:
        p = subprocess.Popen(argv, stdout=fo, stderr=fe, env=env, cwd=WORK,
                             start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            rc = "timeout"
    wall = time.time() - t
    r = parse_out(open(out_p).read())
    err = open(err_p).read()
    r.update(round=rnd, rc=rc, wall_s=wall, tag=tag)
    m = re.search(r"bare_cupti: (.*)", err)
    if m:
        kv = dict(x.split("=", 1) for x in m.group(1).split())
        r["bare_counts"] = {k: int(v) for k, v in kv.items()}
    if trace_dir:
        r.update(slack_info(tools, trace_dir))
        keep = os.path.join(WORK, "keep")
        if not glob.glob(os.path.join(keep, job.name + "*")):
            os.makedirs(keep, exist_ok=True)
            for f in glob.glob(os.path.join(trace_dir, "*.slk"))[:1]:
                shutil.copy(f, os.path.join(keep, tag + ".slk"))
        shutil.rmtree(trace_dir, ignore_errors=True)
    if extra.get("nsys_dir"):
        files = glob.glob(os.path.join(extra["nsys_dir"], "r.*"))
        rep = [f for f in files if f.endswith(".nsys-rep")]
        q = [f for f in files if f.endswith(".qdstrm")]
        f = (rep or q or [None])[0]
        if f:
            r["nsys_bytes"], r["nsys_file"] = os.path.getsize(f), os.path.basename(f)
        shutil.rmtree(extra["nsys_dir"], ignore_errors=True)
    if extra.get("kineto_json") and os.path.exists(extra["kineto_json"]):
        os.unlink(extra["kineto_json"])
    # post-processing of the profilers (export, nsys import) is not what a run costs per round
    est = wall - r.get("kineto_post_s", 0) if r.get("kineto_bytes") else wall
    job.durations.append(est)
    # a run counts when every workload printed its figure; a non-zero exit status after that
    # (nsys when its optional import fails, a crash at exit) is kept in the CSV and said here
    ok = all(w in r["metrics"] for w in WORKLOADS[job.proc])
    if not ok:
        job.failures += 1
    if not ok or rc != 0:
        say("  %s: %s (rc %s; see logs/%s.err): %s" % (
            tag, "FAILED" if not ok else "figures kept, but", rc, tag,
            " | ".join(err.strip().splitlines()[-2:])[:300]))
    job.runs.append(r)
    short = " ".join("%s=%.3g" % (w, v) for w, v in r["metrics"].items())
    say("  %-24s %5.1fs  %s%s" % (tag, wall, short,
                                 "  dropped=%s" % r["dropped"] if r.get("dropped") else ""))
    return ok


def schedule(jobs, tools):
    deadline = T0 + BUDGET
    runnable = [j for j in jobs if not j.skip]
    for rnd in range(REPEATS):
        now = time.time()
        left_rounds = REPEATS - rnd
        s1 = sum(j.estimate(jobs) for j in runnable if j.prio == 1 and j.failures < 2)
        include = {1}
        if rnd == 0:
            include = {1, 2, 3}
        else:
            spare = deadline - now - s1 * left_rounds
            for pr in (2, 3):
                cost = sum(j.estimate(jobs) for j in runnable if j.prio == pr and j.failures < 2)
                if cost and spare >= cost:
                    include.add(pr)
                    spare -= cost
        todo = [j for j in runnable if j.prio in include and j.failures < 2]
        say("round %d/%d: %s" % (rnd + 1, REPEATS, " ".join(j.name for j in todo)))
        for j in todo:
            if time.time() + j.estimate(jobs) > deadline:
                say("  %s: skipped (budget: %.0f s left, needs ~%.0f s)" %
                    (j.name, deadline - time.time(), j.estimate(jobs)))
                continue
            run_job(j, tools, rnd, deadline)
        if time.time() >= deadline:
            say("budget reached after round %d" % (rnd + 1))
            break


# -------------------------------------------------------------------------------- summary


def med(v):
    return statistics.median(v) if v else None


def fmt(x, nd=2):
    return "-" if x is None else ("%.*f" % (nd, x))


def summarize(jobs, info, tools):
    by = {(j.proc, j.cfg): j for j in jobs}

    def vals(proc, cfg, w):
        j = by.get((proc, cfg))
        return [r["metrics"][w] for r in j.runs if w in r["metrics"]] if j else []

    def pvals(proc, cfg, fn):
        j = by.get((proc, cfg))
        out = []
        for r in (j.runs if j else []):
            try:
                x = fn(r)
            except (KeyError, TypeError, ZeroDivisionError):
                x = None
            if x is not None:
                out.append(x)
        return out

    L = []
    L.append("## slack overhead benchmark (scripts/bench/run.sh)")
    L.append("")
    L.append("- date: %s; machine: %s; GPU: %s; CPU: %s; kernel %s, clocksource %s" % (
        info["date"], info["host"], info.get("gpu"), info.get("cpu"), info["kernel"],
        info["clocksource"]))
    L.append("- commit %s; command: `bash scripts/bench/run.sh` (BENCH_REPEATS=%d, budget %.0f s)%s"
             % (info["commit"], REPEATS, BUDGET, "; DRY RUN on the CPU stand-in" if DRY else ""))
    L.append("- interleaved processes A B C ... per round; median (min-max) over n processes; "
             "slowdown against the no-profiler median of the same table")
    L.append("")
    L.append("| workload | config | n | median (min-max) | slowdown | added per launch |")
    L.append("|---|---|---|---|---|---|")
    slow = {}
    for proc in PROCS:
        for w in WORKLOADS[proc]:
            key, better, unit, per_launch = METRIC[w]
            base = med(vals(proc, "none", w))
            for cfg in CONFIGS:
                b = base_of(cfg)
                label = LABEL.get(b, b) + ("" if cfg == b else " " + " ".join(cfg.split(":")[1:]))
                j = by.get((proc, cfg))
                if j is None:
                    continue
                v = vals(proc, cfg, w)
                if not v:
                    L.append("| %s | %s | 0 | %s | - | - |" %
                             (w, label, j.skip or "no result (see logs)"))
                    continue
                m = med(v)
                s = None
                if base and cfg != "none":
                    s = (1 - m / base) * 100 if better == "higher" else (m / base - 1) * 100
                slow[(w, cfg)] = s
                add = "%+.3f us" % (m - base) if per_launch and base and cfg != "none" else "-"
                L.append("| %s | %s | %d | %.3f (%.3f-%.3f) %s | %s | %s |" % (
                    w, label, len(v), m, min(v), max(v), unit,
                    "-" if s is None else "%+.2f%%" % s, add))
    L.append("")
    for proc in PROCS:
        for cfg in CONFIGS:
            hk = pvals(proc, cfg, lambda r: r["probe_hooks_ns"])
            if not hk:
                continue
            api = pvals(proc, cfg, lambda r: r["probe_api_ns"])
            L.append("- exit probes of %s/%s (in each process, runtime/probe.c): slack's hooks per "
                     "launch (hooked - on) median %d ns over %d processes (%d..%d)%s" % (
                         proc, cfg, med(hk), len(hk), min(hk), max(hk),
                         "; CUPTI's API records per launch (on - api_off) median %d ns (%d..%d)"
                         % (med(api), min(api), max(api)) if api else ""))
    L.append("")
    L.append("Per process (the py process runs the conv net, the tiny ops and the transformer "
             "together: its trace, CPU and memory figures cover all three; hb, resnet_seed.py "
             "unchanged, prints no CPU or memory figures):")
    L.append("")
    L.append("| process | config | trace bytes per GPU event | GPU events | dropped | kernels "
             "joined to launch | writer CPU ms | process CPU added s | other threads CPU added s"
             " | peak RSS added MB |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    for proc in PROCS:
        cpu0 = med(pvals(proc, "none", lambda r: r["exit"]["proc_cpu_ns"] / 1e9))
        oth0 = med(pvals(proc, "none", lambda r: (r["exit"]["proc_cpu_ns"] -
                                                   r["threads"]["main"]) / 1e9))
        rss0 = med(pvals(proc, "none", lambda r: r["exit"]["hwm_kb"] / 1024))
        ev_full = med(pvals(proc, "full", lambda r: r["gpu_events"] or None))
        ev_bare = med(pvals(proc, "bare", lambda r: (r["bare_counts"]["kernel"] +
                                                     r["bare_counts"]["memcpy"] +
                                                     r["bare_counts"]["memset"]) or None))
        ev = ev_full or ev_bare
        for cfg in CONFIGS:
            b = base_of(cfg)
            j = by.get((proc, cfg))
            if j is None or not j.runs:
                continue
            bpe = "-"
            if b in SLACK_CFG:
                x = med(pvals(proc, cfg, lambda r: r["trace_bytes"] / r["gpu_events"]))
                bpe = fmt(x) if x else ("- (%s B per record)" % fmt(med(pvals(
                    proc, cfg, lambda r: r["trace_bytes"] / r["records"])))
                    if b == "hooks" else "-")
            elif b == "kineto" and ev:
                x = med(pvals(proc, cfg, lambda r: r["kineto_bytes"] / ev or None))
                bpe = "%s (JSON)" % fmt(x, 0) if x else "-"
            elif b == "nsys" and ev:
                x = med(pvals(proc, cfg, lambda r: r["nsys_bytes"] / ev))
                f = next((r.get("nsys_file") for r in j.runs if r.get("nsys_file")), "")
                bpe = "%s (%s)" % (fmt(x), f.split(".")[-1]) if x else "-"
            gev = med(pvals(proc, cfg, lambda r: r["gpu_events"])) if b in SLACK_CFG else (
                med(pvals(proc, cfg, lambda r: r["bare_counts"]["kernel"] +
                          r["bare_counts"]["memcpy"] + r["bare_counts"]["memset"]))
                if b == "bare" else None)
            drops = pvals(proc, cfg, lambda r: r["dropped"]) if b in SLACK_CFG else (
                pvals(proc, cfg, lambda r: r["bare_counts"]["dropped"]) if b == "bare" else [])
            joined = med(pvals(proc, cfg, lambda r: 100.0 * r["kernels_joined"] / r["kernels"]))
            wcpu = med(pvals(proc, cfg, lambda r: r["threads"]["slack-writer"] / 1e6))
            cpu = med(pvals(proc, cfg, lambda r: r["exit"]["proc_cpu_ns"] / 1e9))
            oth = med(pvals(proc, cfg, lambda r: (r["exit"]["proc_cpu_ns"] -
                                                   r["threads"]["main"]) / 1e9))
            rss = med(pvals(proc, cfg, lambda r: r["exit"]["hwm_kb"] / 1024))
            L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                proc, cfg, bpe, fmt(gev, 0), ("0" if drops and not any(drops) else
                                               ",".join(str(int(d)) for d in drops) or "-"),
                "%.1f%%" % joined if joined is not None and b == "full" else "-",
                fmt(wcpu, 1) if b in SLACK_CFG else "-",
                "%+.2f" % (cpu - cpu0) if cpu is not None and cpu0 is not None and cfg != "none"
                else fmt(cpu),
                "%+.2f" % (oth - oth0) if oth is not None and oth0 is not None and cfg != "none"
                else fmt(oth),
                "%+.0f" % (rss - rss0) if rss is not None and rss0 is not None and cfg != "none"
                else fmt(rss, 0)))
    L.append("")
    L.append("CPU and RSS are the traced program's own (all its threads, read inside it at its "
             "end): nsys's daemon is not counted, torch.profiler's includes its stop (and, in its "
             "first run, its export); writer CPU is slack's `slack-writer` thread; nsys bytes are "
             "its raw capture's (.qdstrm, its importer not run) over the GPU events slack counted "
             "in the same workload.")
    L.append("")
    L.append("Targets (docs/PERFORMANCE.md):")
    L.append("")
    # 1. hooks over nop, per recorded call, on the launch loop
    h = med(vals("c", "hooks", "empty_launch"))
    n = med(vals("c", "nop", "empty_launch"))
    if h is not None and n is not None:
        d = (h - n) * 1000
        nv = vals("c", "nop", "empty_launch")
        L.append("- hooks alone over the nop build, per recorded call (empty_launch: one recorded "
                 "call per launch): %.0f ns (target <= 50 ns): %s; the nop runs spread over "
                 "%.0f ns" % (d, "MET" if d <= 50 else "MISSED", (max(nv) - min(nv)) * 1000))
    noise = None
    cv = vals("py", "none", "convnet")
    if len(cv) > 1:
        noise = (max(cv) - min(cv)) / med(cv) * 100
    f = slow.get(("convnet", "full"))
    if f is not None:
        L.append("- full trace on the conv net: %+.2f%% (target <= 1.5%%): %s%s" % (
            f, "MET" if f <= 1.5 else "MISSED",
            "; the untraced runs alone spread over %.1f%%" % noise if noise is not None else ""))
        bs = slow.get(("convnet", "bare"))
        if bs is not None:
            L.append("- full minus bare CUPTI on the conv net: %+.2f pp (target <= 0.5 pp): %s" %
                     (f - bs, "MET" if f - bs <= 0.5 else "MISSED"))
        for other in ("nsys", "kineto"):
            o = slow.get(("convnet", other))
            if o is not None:
                L.append("- full against %s on the conv net: %+.2f%% vs %+.2f%% (target: at most "
                         "half of it): %s" % (LABEL[other], f, o,
                                              "MET" if f <= o / 2 else "MISSED"))
    # tiny op over bare CUPTI: the per-op rows are processes side by side (the VM's drift between
    # processes is several us); the figure is the exit probes' slack's hooks per launch, in each
    # full process, plus the Python frame walk a launch from a hot loop pays (56 ns, GPU runs
    # 23-24, docs/PERFORMANCE.md "Call sites"), and the API records' cost per launch
    hk = [r["probe_hooks_ns"] for j in jobs if j.proc == "py" and j.base == "full"
          for r in j.runs if r.get("probe_hooks_ns") is not None]
    if hk:
        api = [r["probe_api_ns"] for j in jobs if j.proc == "py" and j.base == "full"
               for r in j.runs if r.get("probe_api_ns") is not None]
        add = med(hk) + 56 + max(0, med(api) if api else 0)
        tf, tb = slow.get(("tiny_ops", "full")), slow.get(("tiny_ops", "bare"))
        L.append("- tiny op, what slack adds over bare CUPTI, in each process: hooks %d ns (median "
                 "of %d) + Python walk 56 ns%s = %.2f us (target <= 0.5 us): %s%s" % (
                     med(hk), len(hk), " + API records %d ns" % med(api) if api else "",
                     add / 1000, "MET" if add <= 500 else "MISSED",
                     "; between processes: full %+.2f%%, bare CUPTI %+.2f%% per op" % (tf, tb)
                     if tf is not None and tb is not None else ""))
    # 2. production windows against no profiler, per workload (the issue: <= 0.3% averaged).
    # The average takes the workloads of the processes that last at least one period: a shorter
    # one (c's ~1 s launch loop) lies mostly inside the first window, which opens at the first
    # CUDA call, and measures the full trace's cost rather than the duty cycle's
    ws, short = [], []
    for proc in PROCS:
        j = by.get((proc, "windows"))
        long_enough = j is not None and j.durations and med(j.durations) >= WINDOW_P_S
        for w in WORKLOADS[proc]:
            x = slow.get((w, "windows"))
            if x is not None:
                (ws if long_enough else short).append((w, x))
    if ws or short:
        avg = statistics.mean(x for _, x in ws) if ws else None
        L.append("- production windows against no profiler (SLACK_WINDOW=%s, a %.0f%% duty cycle: "
                 "the issue's figure is 2 s every 20 s of a 5-minute run, 10%%; this row is %s "
                 "duty cycle on the bench's short processes): %s%s" % (
                     WINDOW, WINDOW_DUTY, "the same" if abs(WINDOW_DUTY - 10) < 0.05 else "its",
                     "%s; averaged %+.2f%% (target <= 0.3%%): %s" % (
                         ", ".join("%s %+.2f%%" % (w, x) for w, x in ws), avg,
                         "MET" if avg <= 0.3 else "MISSED")
                     if ws else "no average (no process lasted a whole period)",
                     "; not averaged, their process shorter than the %g s period (mostly inside "
                     "the first window): %s" % (WINDOW_P_S, ", ".join(
                         "%s %+.2f%%" % (w, x) for w, x in short)) if short else ""))
    elif "windows" in CONFIGS:
        L.append("- production windows (SLACK_WINDOW=%s): no result" % WINDOW)
    # 3. the host-bound loader: slack's median within the untraced runs' spread
    hn = vals("hb", "none", "loader")
    hf = vals("hb", "full", "loader")
    if hn and hf:
        m, lo, hi = med(hf), min(hn), max(hn)
        L.append("- host-bound loader (resnet_seed l, ms/step): full %.1f vs none %.1f: %+.2f%%; "
                 "slack's median %s the untraced runs' spread (none: %.1f..%.1f, n=%d; target: "
                 "within it): %s%s" % (
                     m, med(hn), slow[("loader", "full")], "lies within" if lo <= m <= hi else
                     "lies outside", lo, hi, len(hn), "MET" if lo <= m <= hi else "MISSED",
                     "" if len(hn) > 2 else " (too few untraced runs to judge)"))
    L.append("")
    L.append("Runs: %s; wall %.0f s in all." % (
        ", ".join("%s %d" % (j.name, len(j.runs)) for j in jobs if j.runs),
        time.time() - T0))
    return "\n".join(L)


def write_csv(jobs):
    path = os.path.join(OUT, "results.csv")
    cols = ["round", "proc", "config", "workload", "metric", "value", "rc", "wall_s",
            "proc_cpu_s", "main_cpu_s", "writer_cpu_s", "hwm_mb", "trace_bytes", "gpu_events",
            "dropped", "kernels", "kernels_joined", "kineto_bytes", "nsys_bytes", "bare_counts"]
    with open(path, "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(cols)
        for j in jobs:
            for r in j.runs:
                ex, th = r.get("exit", {}), r.get("threads", {})
                for w in WORKLOADS[j.proc]:
                    wr.writerow([
                        r["round"] + 1, j.proc, j.cfg, w, METRIC[w][0], r["metrics"].get(w, ""),
                        r["rc"], "%.2f" % r["wall_s"],
                        "%.3f" % (ex["proc_cpu_ns"] / 1e9) if "proc_cpu_ns" in ex else "",
                        "%.3f" % (th["main"] / 1e9) if "main" in th else "",
                        "%.4f" % (th["slack-writer"] / 1e9) if "slack-writer" in th else "",
                        "%.1f" % (ex["hwm_kb"] / 1024) if "hwm_kb" in ex else "",
                        r.get("trace_bytes", ""), r.get("gpu_events", ""), r.get("dropped", ""),
                        r.get("kernels", ""), r.get("kernels_joined", ""),
                        r.get("kineto_bytes", ""), r.get("nsys_bytes", ""),
                        json.dumps(r["bare_counts"]) if r.get("bare_counts") else ""])
    return path


def main():
    for d in (OUT, WORK):
        os.makedirs(d, exist_ok=True)
    for d in ("logs", "tr", "nsys", "keep"):
        shutil.rmtree(os.path.join(WORK, d), ignore_errors=True)
        os.makedirs(os.path.join(WORK, d))
    info = machine_info()
    say("slack GPU bench: %s, GPU %s, commit %s, budget %.0f s, %d repeats%s" % (
        info["date"], info.get("gpu"), info["commit"], BUDGET, REPEATS,
        " (DRY RUN)" if DRY else ""))
    tools = build(info)
    for p in [p for p in PROCS if p not in WORKLOADS]:
        say("unknown process kind %s: ignored" % p)
        PROCS.remove(p)
    jobs = []
    for proc in PROCS:
        for cfg in CONFIGS:
            b = base_of(cfg)
            if b not in LABEL:
                if proc == PROCS[0]:
                    say("unknown configuration %s: ignored" % cfg)
                continue
            if b not in PRIO.get(proc, {}):  # not run on this kind (kineto on c, nsys on hb...)
                continue
            j = Job(proc, cfg)
            if proc == "c" and not tools["c_cmd"]:
                j.skip = "empty_launch did not build"
            elif b == "bare" and not tools["bare"]:
                j.skip = "bare_cupti did not build"
            elif b == "nsys" and not tools["nsys"]:
                j.skip = "nsys not found"
            elif b == "windows" and not WINDOW_OK:
                j.skip = "BENCH_WINDOW=%s is not W/P, 0 < W <= P <= 1 day" % WINDOW
            jobs.append(j)
    try:
        schedule(jobs, tools)
    finally:
        summary = summarize(jobs, info, tools)
        with open(os.path.join(OUT, "summary.md"), "w") as f:
            f.write(summary + "\n")
        write_csv(jobs)
        with open(os.path.join(WORK, "run.log"), "w") as f:
            f.write("\n".join(log_lines) + "\n\n" + summary + "\n")
        with open(os.path.join(WORK, "machine.json"), "w") as f:
            json.dump(info, f, indent=1)
        with tarfile.open(os.path.join(OUT, "bench-logs.tgz"), "w:gz") as t:
            for name in ("logs", "keep", "build.log", "run.log", "machine.json"):
                p = os.path.join(WORK, name)
                if os.path.exists(p):
                    t.add(p, arcname=name)
        print()
        print(summary, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""scripts/bench: the Python workloads of one benchmark process, run one after the other so
that each configuration pays torch's start-up (import, CUDA context, cuDNN) once:

  1. the conv-net training of scripts/workloads/probe_train.py (STEPS steps, default 60), run
     unchanged through runpy; it also times its own tiny-op loop;
  2. tiny_ops.py: the tiny-op loop, median of blocks;
  3. transformer_step.py: a small transformer's training steps (unless --no-transformer).

  python3 torch_suite.py [--kineto] [--export PATH] [--no-transformer]

--kineto wraps the whole run in torch.profiler.profile(activities=[CPU, CUDA]), as a user of
torch.profiler would; --export PATH also writes its Chrome trace there (timed). Prints
  RESULT workload=convnet steps_per_s=...      (and workload=probe_tiny us_per_op=...)
  RESULT workload=tiny_ops us_per_op=... blocks=...
  RESULT workload=transformer steps_per_s=...
  KINETO stop_s=... export_s=... bytes=...
  THREADS main=<cpu ns>,<thread name>=<cpu ns>,...   CPU time per thread name, at the end
  EXIT proc_cpu_ns=... main_cpu_ns=... hwm_kb=...
"""
import argparse
import os
import runpy
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(os.path.dirname(HERE), "workloads", "probe_train.py")
sys.path.insert(0, HERE)


def thread_cpu():
    """CPU ns per thread name (the main thread as "main"), from /proc/self/task."""
    by = {}
    tck = os.sysconf("SC_CLK_TCK")
    for tid in os.listdir("/proc/self/task"):
        base = "/proc/self/task/" + tid
        try:
            name = open(base + "/comm").read().strip() or "?"
        except OSError:
            continue
        ns = None
        try:
            ns = int(open(base + "/schedstat").read().split()[0])
        except (OSError, ValueError, IndexError):
            try:
                f = open(base + "/stat").read()
                rest = f[f.rindex(")") + 2:].split()
                ns = (int(rest[11]) + int(rest[12])) * 1000000000 // tck
            except (OSError, ValueError, IndexError):
                continue
        if int(tid) == os.getpid():
            name = "main"
        name = name.replace(" ", "_").replace(",", "_").replace("=", "_")
        by[name] = by.get(name, 0) + ns
    return by


def hwm_kb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return -1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kineto", action="store_true")
    ap.add_argument("--export", default="")
    ap.add_argument("--no-transformer", action="store_true")
    args = ap.parse_args()
    import torch  # noqa: F401  (before the profiler starts, as in any program)
    prof = None
    if args.kineto:
        from torch.profiler import ProfilerActivity, profile
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.start()

    argv = sys.argv
    sys.argv = [PROBE, "base"]
    try:
        g = runpy.run_path(PROBE, run_name="probe_train")
    finally:
        sys.argv = argv
    if "sps" in g and "us" in g:  # probe_train's own RESULT line is printed as well
        print("RESULT workload=convnet steps_per_s=%.3f" % g["sps"], flush=True)
        print("RESULT workload=probe_tiny us_per_op=%.3f" % g["us"], flush=True)
    del g

    import tiny_ops
    med, us = tiny_ops.run()
    print("RESULT workload=tiny_ops us_per_op=%.3f ops=%d blocks=%s" %
          (med, tiny_ops.BLOCKS * tiny_ops.OPS, ",".join("%.3f" % u for u in us)), flush=True)

    if not args.no_transformer:
        import transformer_step
        sps, loss = transformer_step.run()
        print("RESULT workload=transformer steps_per_s=%.3f loss=%.4f" % (sps, loss), flush=True)

    if prof is not None:
        t0 = time.perf_counter()
        prof.stop()
        t1 = time.perf_counter()
        size = 0
        if args.export:
            prof.export_chrome_trace(args.export)
            size = os.path.getsize(args.export)
        print("KINETO stop_s=%.2f export_s=%.2f bytes=%d" %
              (t1 - t0, time.perf_counter() - t1, size), flush=True)

    th = thread_cpu()
    print("THREADS " + ",".join("%s=%d" % kv for kv in sorted(th.items())), flush=True)
    print("EXIT proc_cpu_ns=%d main_cpu_ns=%d hwm_kb=%d" %
          (time.process_time_ns(), time.thread_time_ns(), hwm_kb()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

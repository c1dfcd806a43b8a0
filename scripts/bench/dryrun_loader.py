"""scripts/bench: a stand-in for scripts/workloads/resnet_seed.py --form l (the hb process of
gpu_bench.py) on a machine without a GPU or torch (BENCH_DRYRUN=1 bash scripts/bench/run.sh), so
that the orchestration, parsing and tables of gpu_bench.py can be tried anywhere. Each step is a
busy loop on the main thread (host-bound, as the real loader's transforms are) of a made-up
length, a little longer under LD_PRELOAD: the step times it prints are not measurements of
anything. Reads STEPS and WARMUP as scenario_common.main does and prints its line:
  RESULT scenario=resnet_seed form=l step_ms=... steps=N warmup=W"""
import argparse
import os
import random
import time

STEP_MS = float(os.environ.get("DRYRUN_STEP_MS", "10"))


def spin(ms):
    end = time.perf_counter() + ms / 1e3
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--form", default="l")
    a = ap.parse_args()
    steps = int(os.environ.get("STEPS", 8))
    warmup = int(os.environ.get("WARMUP", 2))
    slow = 1.0 + (0.01 if os.environ.get("LD_PRELOAD") else 0)
    for _ in range(warmup):
        spin(STEP_MS)
    t0 = time.perf_counter()
    for _ in range(steps):
        spin(STEP_MS * slow * random.uniform(0.95, 1.05))
    ms = (time.perf_counter() - t0) / steps * 1e3
    print(f"RESULT scenario=resnet_seed form={a.form} step_ms={ms:.4f} steps={steps} "
          f"warmup={warmup}", flush=True)


if __name__ == "__main__":
    main()

"""scripts/bench: a stand-in for torch_suite.py on a machine without a GPU or torch
(BENCH_DRYRUN=1 bash scripts/bench/run.sh), so that the orchestration, parsing and tables of
gpu_bench.py can be tried anywhere. Prints the lines torch_suite.py prints, with made-up
numbers that are not measurements of anything. Same arguments as torch_suite.py."""
import os
import random
import sys
import time

args = sys.argv[1:]
kineto = "--kineto" in args
slow = 1.0 + (0.02 if kineto else 0) + (0.01 if os.environ.get("LD_PRELOAD") else 0)
time.sleep(float(os.environ.get("DRYRUN_SLEEP_S", "0.2")) * (1.5 if kineto else 1))
print("RESULT mode=base steps_per_s=%.2f tiny_op_us=%.2f" %
      (113.0 / slow * random.uniform(0.99, 1.01), 8.3 * slow), flush=True)
print("RESULT workload=convnet steps_per_s=%.3f" % (113.0 / slow * random.uniform(0.99, 1.01)))
print("RESULT workload=tiny_ops us_per_op=%.3f" % (8.3 * slow * random.uniform(0.99, 1.01)))
print("RESULT workload=transformer steps_per_s=%.3f" % (40.0 / slow * random.uniform(0.99, 1.01)))
if kineto:
    size = 0
    if "--export" in args:
        path = args[args.index("--export") + 1]
        with open(path, "w") as f:
            f.write("{}" * 1000)
        size = os.path.getsize(path)
    print("KINETO stop_s=0.50 export_s=0.10 bytes=%d" % size)
print("THREADS main=%d,pt_autograd_0=%d" % (time.thread_time_ns(), 1000000))
print("EXIT proc_cpu_ns=%d main_cpu_ns=%d hwm_kb=%d" %
      (time.process_time_ns(), time.thread_time_ns(), 20000 + random.randint(0, 100)))

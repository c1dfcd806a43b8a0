"""Whether page-locked host allocation and its free hold the host while the GPU is busy (a question
for the hooks: runtime/ hooks cudaFree, which waits for the device, but not cudaMallocHost,
cudaHostAlloc or cudaFreeHost). A kernel that sleeps SLEEP_MS on the GPU is queued, then each
call is timed on the host: where a call's time is about the kernel's remaining time, it waited
for the device. Each call is timed with the GPU idle too. Prints one RESULT line per call."""
import ctypes
import os
import time

import torch

SLEEP_MS, MB, REPS = 50, 64, 5


def cudart():
    """The runtime's functions as a program that links them finds them: from the global scope
    first (libslack's wrappers where it is preloaded; a handle of libcudart's own would reach
    the library's definitions and bypass the hooks), else libcudart as loaded by torch"""
    torch.zeros(1, device="cuda")
    g = ctypes.CDLL(None)
    if hasattr(g, "cudaHostAlloc"):
        return g, "global"
    for line in open("/proc/self/maps"):
        path = line.split()[-1]
        if "libcudart.so" in os.path.basename(path):
            return ctypes.CDLL(path), "libcudart"
    raise SystemExit("no libcudart in the process")


def main():
    rt, via = cudart()
    n = 10_000_000  # the GPU's sleep: its cycles per ms, timed once (warmed up first)
    torch.cuda._sleep(1000)
    torch.cuda.synchronize()
    t = time.perf_counter()
    torch.cuda._sleep(n)
    torch.cuda.synchronize()
    cycles = int(n * SLEEP_MS / ((time.perf_counter() - t) * 1e3))
    p = ctypes.c_void_p()
    calls = {
        "cudaMallocHost": lambda: rt.cudaMallocHost(ctypes.byref(p), ctypes.c_size_t(MB << 20)),
        "cudaFreeHost": lambda: rt.cudaFreeHost(p),
        "cudaHostAlloc": lambda: rt.cudaHostAlloc(ctypes.byref(p), ctypes.c_size_t(MB << 20), 0),
        "cudaFreeHost(2)": lambda: rt.cudaFreeHost(p),
    }
    for busy in (0, 1):
        times = {k: [] for k in calls}
        for _ in range(REPS):
            torch.cuda.synchronize()
            for k, f in calls.items():
                if busy:
                    torch.cuda._sleep(cycles)
                t = time.perf_counter()
                rc = f()
                times[k].append((time.perf_counter() - t) * 1e3)
                if rc:
                    raise SystemExit(f"{k}: error {rc}")
                torch.cuda.synchronize()
        for k, v in times.items():
            v.sort()
            print(f"RESULT call={k} gpu={'busy' if busy else 'idle'} sleep_ms={SLEEP_MS if busy else 0} "
                  f"median_ms={v[len(v) // 2]:.3f} min_ms={v[0]:.3f} max_ms={v[-1]:.3f} via={via}",
                  flush=True)


if __name__ == "__main__":
    main()

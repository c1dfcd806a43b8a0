"""A Python program that calls the CPU stand-in for cudart through ctypes (tests/test_pyframes.sh).

Each CUDA call sits on a line marked with a tag in a comment; the test finds the tag's line
number and checks that slack's Python frames name this file, that line and the function.
argv: path to the stand-in libcudart.so, then the mode: plain | deep | signal | thread | loader |
pool | churn | sleeper | native (then the path to tests/py/native_worker.c's library).
"""
import ctypes
import signal
import sys
import threading
import time

rt = ctypes.CDLL(sys.argv[1])
mode = sys.argv[2] if len(sys.argv) > 2 else "plain"
churn_stop = threading.Event()


def spawner():
    """Short threads (no CUDA call), 8 at a time, until churn_stop (mode churn)"""
    while not churn_stop.is_set():
        short = [threading.Thread(target=sum, args=(range(1000),)) for _ in range(8)]
        for t in short:
            t.start()
        for t in short:
            t.join()


if mode == "churn":
    # threads starting and ending all the time from before the first CUDA call: the writer's
    # first looks at the interpreter's list of threads find its head moving
    spawners = [threading.Thread(target=spawner) for _ in range(4)]
    for t in spawners:
        t.start()
    time.sleep(0.05)
N = 1 << 16
dev = ctypes.c_void_p()
rt.cudaMalloc(ctypes.byref(dev), N)
host = ctypes.create_string_buffer(N)


def copy_in():
    rt.cudaMemcpy(dev, host, ctypes.c_size_t(N), 1)  # TAG:copy


def copy_async():
    rt.cudaMemcpyAsync(dev, host, ctypes.c_size_t(N), 1, None)  # TAG:async


def sync():
    rt.cudaDeviceSynchronize()  # TAG:sync


def deep(n):
    if n == 0:
        rt.cudaDeviceSynchronize()  # TAG:deep
        return 0
    return deep(n - 1) + 1


def load_batch():
    t0, x = time.perf_counter(), 0
    while time.perf_counter() - t0 < 0.03:  # TAG:load
        x += 1  # TAG:load2
    return x


def wait_batch():
    time.sleep(0.03)  # TAG:wait


def step():
    copy_in()
    copy_async()
    sync()


if mode == "deep":
    sys.setrecursionlimit(5000)
    for _ in range(3):
        deep(900)
elif mode == "signal":
    # a timer signal every 50 us while the hooks run: CPython's C handler interrupts the hook,
    # the Python handler runs later on the main thread
    hits = [0]
    signal.signal(signal.SIGALRM, lambda *a: hits.__setitem__(0, hits[0] + 1))
    signal.setitimer(signal.ITIMER_REAL, 0.00005, 0.00005)
    for _ in range(3000):
        step()
    signal.setitimer(signal.ITIMER_REAL, 0, 0)
    assert hits[0] > 0
elif mode == "thread":
    def worker():
        for _ in range(20):
            sync()
    ts = [threading.Thread(target=worker) for _ in range(4)]
    for t in ts:
        t.start()
    for _ in range(20):
        copy_in()
    for t in ts:
        t.join()
elif mode == "loader":
    # host work between the steps' CUDA calls: the writer's samples find its lines
    for _ in range(10):
        load_batch()  # TAG:loadcall
        step()
elif mode == "native":
    # a thread without Python making hooked calls (as autograd's workers do): sampled for its
    # CPU time alone, while the main thread waits for it
    nw = ctypes.CDLL(sys.argv[3])
    nw.native_worker.argtypes = [ctypes.c_void_p, ctypes.c_int]
    step()
    assert nw.native_worker(ctypes.cast(rt.cudaDeviceSynchronize, ctypes.c_void_p), 12) == 0
elif mode == "pool":
    # threads that never call CUDA (a loader's pool, the main thread waiting on it): sampled
    # too, one on the CPU in load_batch, one off it in wait_batch
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            load_batch()

    def idle():
        while not stop.is_set():
            wait_batch()

    pool = [threading.Thread(target=spin), threading.Thread(target=idle)]
    for t in pool:
        t.start()
    for _ in range(10):
        wait_batch()
        step()
    stop.set()
    for t in pool:
        t.join()
elif mode == "churn":
    # the spawners (above) run while the main thread syncs: nothing breaks, and they are
    # sampled though the head of the list moves under every look
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 2:
        wait_batch()
        sync()
    churn_stop.set()
    for t in spawners:
        t.join()
elif mode == "idle":
    # one step, then 2 s asleep: the writer's scheduling policy is looked at meanwhile (ps)
    step()
    time.sleep(2)
elif mode == "sleeper":
    # the same steps with a wait between them: off the CPU (the samples' cpu_ns stands still)
    for _ in range(10):
        wait_batch()
        step()
else:
    for _ in range(5):
        step()
print("done", mode)

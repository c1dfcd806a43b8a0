"""Robustness scenarios: what the traced process must never suffer (docs/DESIGN.md), checked
through the real libslack.so and the CPU stand-in for CUDA (tests/stub). Run by tests/e2e/e2e.py,
which imports this module and adds scenarios(...) to its own list; `make test` runs them all.

  robust_sigkill_random       SIGKILL at 50 random instants of a working run (seeded: the seed is
                              printed, ROBUST_SEED=n repeats it): every file reads back up to its
                              last complete chunk, a truncated tail is reported with its reason
  robust_kill_at_creation     SIGKILL the moment the trace file appears in the directory
  robust_exit_paths           exit, _exit and abort() leave readable files
  robust_probe_load_wedged    the exit probe's kernel load never returns: the exit goes on
  robust_cupti_wedged         CUPTI's detach at exit never returns: the exit waits
                              SLACK_EXIT_TIMEOUT_MS, no longer, said once; the trace is whole
  robust_storm_*              16 threads x 100,000 launches: recorded + reported dropped == made,
                              exactly (default ring, a 64-event ring, and a cold start)
  robust_fork_*, robust_exec_* fork 20 children (some using CUDA), exec: the right files, whole
  robust_fsize_*, robust_tmpfs_full, robust_unwritable_*
                              disk full (RLIMIT_FSIZE, a full tmpfs) and unwritable output: stdout
                              and exit status of an untraced run, one "slack:" problem line, no
                              hang
  robust_probe_bytes_per_gpu_event
                              the committed H200 probe trace costs at most 8 bytes per GPU event

A scenario that cannot run here (no permission to mount) prints SKIP, which counts as neither
passed nor failed. stdlib only.
"""
import collections
import ctypes
import json
import os
import random
import re
import resource
import select
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

FLUSH_MS = 50  # SLACK_FLUSH_MS of the crash scenarios: chunks are cut all along a run
PROBLEM = re.compile(r"^slack: (?!tracing to )")


class Result(object):
    def __init__(self, rc, out, err, wall, outdir):
        self.rc, self.out, self.err, self.wall, self.outdir = rc, out, err, wall, outdir

    @property
    def files(self):
        return sorted(os.listdir(self.outdir)) if os.path.isdir(self.outdir) else []

    @property
    def slk(self):
        return [os.path.join(self.outdir, f) for f in self.files if f.endswith(".slk")]


def make_env(h, traced, outdir, extra=None):
    """The environment of e2e.run_prog, without PROG_REPORT unless `extra` names one."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLACK_", "STUB_", "CHURN_", "STORM_", "FORKER_"))
           and k not in ("LD_PRELOAD", "PROG_REPORT")}
    env["LD_LIBRARY_PATH"] = h.STUB + (":" + env["LD_LIBRARY_PATH"]
                                       if env.get("LD_LIBRARY_PATH") else "")
    if traced:
        env["LD_PRELOAD"] = ":".join(h.SAN_PRELOAD + [h.LIBSLACK])
        env.update(h.SAN_ENV)
        env["SLACK_OUTPUT"] = outdir
    if traced:  # ROBUST_ENV="SLACK_X=1 SLACK_Y=2": settings for every traced run (debugging)
        env.update(kv.split("=", 1) for kv in os.environ.get("ROBUST_ENV", "").split() if "=" in kv)
    env.update(extra or {})
    return env


def run(h, prog, tmp, tag, traced, extra=None, outdir=None, preexec=None, timeout=120):
    if outdir is None:
        outdir = os.path.join(tmp, tag + ".out")
        os.makedirs(outdir, exist_ok=True)
    t0 = time.monotonic()
    try:
        p = subprocess.run([os.path.join(h.PROGS, prog)], env=make_env(h, traced, outdir, extra),
                           cwd=tmp, capture_output=True, text=True, timeout=timeout,
                           preexec_fn=preexec)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "timeout after %ds" % timeout, e.stdout or "", e.stderr or ""
        out = out.decode() if isinstance(out, bytes) else out
        err = err.decode() if isinstance(err, bytes) else err
    return Result(rc, out, err, time.monotonic() - t0, outdir)


def info(h, path):
    """(exit status, `slack info --json` as a dict or None, stderr)."""
    rc, out, err = h.slack_cmd("info", "--json", path)
    try:
        return rc, json.loads(out), err
    except ValueError:
        return rc, None, err


def host_counts(h, path, tids=None):
    """(exit status, Counter of host records by function, number of dump lines, stderr); `tids`,
    a Counter, gets the host records by thread."""
    p = subprocess.Popen([h.SLACK, "dump", "--kind", "host", path], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    fns, lines = collections.Counter(), 0
    tok, ttok = re.compile(r" fn=(\S+)"), re.compile(r" tid=(\d+)")
    for line in p.stdout:
        lines += 1
        m = tok.search(line)
        fns[m.group(1) if m else "?"] += 1
        if tids is not None:
            m = ttok.search(line)
            tids[int(m.group(1)) if m else 0] += 1
    err = p.stderr.read()
    return p.wait(), fns, lines, err


def dump_lines(h, path):
    """(exit status, records printed by `slack dump`)."""
    p = subprocess.Popen([h.SLACK, "dump", path], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    n = sum(1 for _ in p.stdout)
    return p.wait(), n


def problems(err):
    return [l for l in err.splitlines() if PROBLEM.match(l)]


def check_readable(h, c, path, what, whole=False):
    """The file opens, every complete chunk reads, the tail is accounted for. Returns info."""
    name = os.path.basename(path)
    rc, inf, err = info(h, path)
    if not c.ok(rc == 0 and inf is not None, "%s: slack info --json %s failed (%s): %s (%d bytes)"
                % (what, name, rc, err.strip(), os.path.getsize(path))):
        return None
    tb, reason = inf.get("truncated_bytes"), inf.get("truncated_reason")
    c.ok(isinstance(tb, int) and tb >= 0, "%s: %s truncated_bytes = %r" % (what, name, tb))
    if isinstance(tb, int) and tb > 0:
        c.ok(isinstance(reason, str) and reason, "%s: %s has a %d-byte tail but no reason" %
             (what, name, tb))
    else:
        c.ok(not reason, "%s: %s: reason %r for a complete file" % (what, name, reason))
    if whole:
        c.ok(tb == 0, "%s: %s is not whole: %s bytes cut (%s)" % (what, name, tb, reason))
    c.ok(inf.get("count_mismatch_chunks", 0) == 0, "%s: %s: chunks whose record count differs"
         % (what, name))
    drc, n = dump_lines(h, path)
    c.ok(drc == 0, "%s: slack dump %s failed (%d)" % (what, name, drc))
    c.ok(n == inf.get("records"), "%s: %s: info counts %s records, dump prints %d" %
         (what, name, inf.get("records"), n))
    return inf


def same_behavior(c, bare, traced, what=""):
    c.ok(traced.rc == bare.rc, "%sexit status %s traced, %s untraced" % (what, traced.rc, bare.rc))
    c.ok(traced.out == bare.out, "%sstdout differs: traced %r, untraced %r" %
         (what, traced.out, bare.out))
    c.ok(bare.err == "", "%suntraced stderr not empty: %r" % (what, bare.err[-300:]))


# ------------------------------------------------------------------------- 1: crashes

def read_counter(path):
    """churn's shared progress counters: calls started, launches started, iterations, done."""
    try:
        with open(path, "rb") as f:
            b = f.read(32)
    except OSError:
        return (0, 0, 0, 0)
    if len(b) < 32:
        return (0, 0, 0, 0)
    return tuple(int.from_bytes(b[i:i + 8], "little") for i in range(0, 32, 8))


CHUNK_MAGIC = 0x434B4C53


def layout(path):
    """(end of the header, [(end offset, records) of each complete chunk]) per docs/FORMAT.md."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 16:
        return None, []
    off = 16 + int.from_bytes(data[12:16], "little")
    head, chunks = off, []
    while off + 40 <= len(data) and int.from_bytes(data[off:off + 4], "little") == CHUNK_MAGIC:
        end = off + 40 + int.from_bytes(data[off + 4:off + 8], "little")
        if end > len(data):
            break
        chunks.append((end, int.from_bytes(data[off + 12:off + 16], "little")))
        off = end
    return head, chunks


def check_cut(h, c, path, rng, what):
    """A copy of the file cut at a random byte after its header (a crash of the machine, or a
    kill inside a chunk's write): the reader reads every chunk before the cut and reports the
    rest as the truncated tail, with its reason."""
    head, chunks = layout(path)
    size = os.path.getsize(path)
    if head is None or size <= head:
        return
    cut = rng.randrange(head, size)
    whole = [(e, n) for e, n in chunks if e <= cut]
    last = whole[-1][0] if whole else head
    cpath = path + ".cut"
    with open(path, "rb") as f, open(cpath, "wb") as g:
        g.write(f.read(cut))
    rc, inf, err = info(h, cpath)
    if c.ok(rc == 0 and inf, "%s, cut at byte %d of %d: slack info failed (%s): %s" %
            (what, cut, size, rc, err.strip())):
        got = (inf.get("chunks"), inf.get("records"), inf.get("truncated_bytes"))
        want = (len(whole), sum(n for _, n in whole), cut - last)
        c.ok(got == want, "%s, cut at byte %d of %d: chunks, records, truncated_bytes %s, want %s"
             % (what, cut, size, got, want))
        c.ok(bool(inf.get("truncated_reason")) == (cut > last),
             "%s, cut at byte %d: truncated_reason %r" % (what, cut, inf.get("truncated_reason")))
    os.unlink(cpath)


def scenario_sigkill_random(h):
    kills = int(os.environ.get("ROBUST_KILLS", "50"))
    run_ms = 700
    # calls started this long before the kill must be on disk (flush every 50 ms); sanitizer
    # runs (tests/robust.mk) give more
    lag_ms = int(os.environ.get("ROBUST_KILL_LAG_MS", "450"))

    def body(tmp, fns, cbids):
        c = h.Checks()
        seed = int(os.environ.get("ROBUST_SEED", "0")) or random.SystemRandom().randrange(1, 1 << 31)
        c.notes = ["seed %d (ROBUST_SEED=%d repeats these kill instants)" % (seed, seed)]
        rng = random.Random(seed)
        extra = {"SLACK_FLUSH_MS": str(FLUSH_MS), "CHURN_MS": str(run_ms), "CHURN_THREADS": "2"}
        # one whole run: how long a run lasts, and it reads back complete
        full = run(h, "churn", tmp, "whole", True, dict(extra, CHURN_COUNTER=os.path.join(
            tmp, "whole.cnt")))
        if not c.ok(full.rc == 0 and len(full.slk) == 1, "uncut run: exit %s, files %s: %s" %
                    (full.rc, full.files, full.err[-300:])):
            return c
        inf = check_readable(h, c, full.slk[0], "uncut run", whole=True)
        made = read_counter(os.path.join(tmp, "whole.cnt"))
        if inf:
            c.ok(inf.get("api_calls") == made[0] and inf.get("kernels") == made[1],
                 "uncut run: %s host records, %s kernels; the program made %d calls, %d launches" %
                 (inf.get("api_calls"), inf.get("kernels"), made[0], made[1]))
        span = full.wall
        instants = sorted(rng.uniform(0.0, span) for _ in range(kills))
        stats = collections.Counter()

        def one(i):
            cc = h.Checks()
            t_kill = instants[i]
            outdir = os.path.join(tmp, "k%02d" % i)
            os.makedirs(outdir)
            cnt = os.path.join(tmp, "k%02d.cnt" % i)
            env = make_env(h, True, outdir, dict(extra, CHURN_COUNTER=cnt))
            samples = []
            t0 = time.monotonic()
            p = subprocess.Popen([os.path.join(h.PROGS, "churn")], env=env, cwd=tmp,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            while True:
                now = time.monotonic() - t0
                if now >= t_kill:
                    break
                samples.append((now, read_counter(cnt)[0]))
                time.sleep(min(0.004, t_kill - now))
            t_kill = time.monotonic() - t0
            p.kill()
            err = p.communicate(timeout=60)[1].decode(errors="replace")
            what = "kill #%d at %.0f ms" % (i, t_kill * 1000)
            made = read_counter(cnt)
            before = max([n for t, n in samples if t <= t_kill - lag_ms / 1000.0] or [0])
            files = sorted(os.listdir(outdir))
            slk = [f for f in files if f.endswith(".slk")]
            cc.ok(len(slk) == len(files) and len(slk) <= 1, "%s: files %s" % (what, files))
            cc.ok(not problems(err), "%s: slack said %r" % (what, problems(err)))
            if before:
                cc.ok(slk, "%s: %d calls started %d ms before the kill, no trace file" %
                      (what, before, lag_ms))
            if len(slk) != 1:
                return cc, "no file", 0
            path = os.path.join(outdir, slk[0])
            inf = check_readable(h, cc, path, what)
            if not inf:
                return cc, "unreadable", 0
            hrc, byfn, nhost, _ = host_counts(h, path)
            cc.ok(hrc == 0, "%s: slack dump --kind host failed" % what)
            cc.ok(nhost <= made[0], "%s: %d host records, only %d calls were started" %
                  (what, nhost, made[0]))
            cc.ok(nhost >= before, "%s: %d host records, but %d calls had started %d ms before the "
                  "kill (SLACK_FLUSH_MS=%d)" % (what, nhost, before, lag_ms, FLUSH_MS))
            cc.ok(inf.get("kernels", 0) <= made[1], "%s: %s kernel records, %d launches" %
                  (what, inf.get("kernels"), made[1]))
            hd, chunks = layout(path)
            cc.ok(inf.get("chunks") == len(chunks) and
                  inf.get("records") == sum(n for _, n in chunks),
                  "%s: info reads %s chunks, %s records; the file has %d complete chunks of %d "
                  "records" % (what, inf.get("chunks"), inf.get("records"), len(chunks),
                               sum(n for _, n in chunks)))
            check_cut(h, cc, path, random.Random(seed * 1000 + i), what)
            return cc, ("cut tail" if inf.get("truncated_bytes") else "whole"), inf.get("records", 0)

        with ThreadPoolExecutor(max_workers=4) as ex:
            results = list(ex.map(one, range(kills)))
        records = 0
        for cc, kind, nrec in results:
            c.fails.extend(cc.fails)
            stats[kind] += 1
            records += nrec
        c.notes.append("%d kills over a %.0f ms run: %s; %d records read back" %
                       (kills, span * 1000, ", ".join("%d %s" % (n, k) for k, n in
                                                      sorted(stats.items())), records))
        return c
    return body


IN_CREATE, IN_MOVED_TO = 0x100, 0x80


def scenario_kill_at_creation(h):
    """SIGKILL as soon as the trace file shows up in the output directory (inotify): the file
    must already hold its whole header."""
    def body(tmp, fns, cbids):
        c = h.Checks()
        libc = ctypes.CDLL(None, use_errno=True)
        if not hasattr(libc, "inotify_init1"):
            c.skip = "no inotify"
            return c
        n_runs = int(os.environ.get("ROBUST_CREATION_KILLS", "20"))
        sizes = []
        for i in range(n_runs):
            outdir = os.path.join(tmp, "c%02d" % i)
            os.makedirs(outdir)
            fd = libc.inotify_init1(os.O_CLOEXEC)
            if fd < 0 or libc.inotify_add_watch(fd, outdir.encode(), IN_CREATE | IN_MOVED_TO) < 0:
                c.skip = "inotify unusable (errno %d)" % ctypes.get_errno()
                return c
            try:
                env = make_env(h, True, outdir, {"SLACK_FLUSH_MS": str(FLUSH_MS),
                                                 "CHURN_MS": "300"})
                p = subprocess.Popen([os.path.join(h.PROGS, "churn")], env=env, cwd=tmp,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                r, _, _ = select.select([fd], [], [], 30)
                p.kill()
                p.wait(timeout=60)
            finally:
                os.close(fd)
            files = sorted(os.listdir(outdir))
            if not c.ok(len(files) == 1 and files[0].endswith(".slk"),
                        "run %d: files %s" % (i, files)):
                continue
            path = os.path.join(outdir, files[0])
            sizes.append(os.path.getsize(path))
            check_readable(h, c, path, "killed at creation #%d" % i)
        c.notes = ["file sizes at the kill: %s bytes" % (sorted(set(sizes)) if sizes else "-")]
        return c
    return body


def scenario_exit_paths(h):
    """exit, _exit and abort(): the file reads; after exit() it holds every call."""
    def body(tmp, fns, cbids):
        c = h.Checks()
        for how in ("exit", "_exit", "abort"):
            extra = {"SLACK_FLUSH_MS": str(FLUSH_MS), "CHURN_MS": "300", "CHURN_END": how}
            bare = run(h, "churn", tmp, "bare-" + how, False, extra)
            cnt = os.path.join(tmp, how + ".cnt")
            traced = run(h, "churn", tmp, "traced-" + how, True, dict(extra, CHURN_COUNTER=cnt))
            same_behavior(c, bare, traced, how + ": ")
            c.ok(len(traced.slk) == 1 and len(traced.files) == 1, "%s: files %s" %
                 (how, traced.files))
            c.ok(not problems(traced.err), "%s: slack said %r" % (how, problems(traced.err)))
            if len(traced.slk) != 1:
                continue
            inf = check_readable(h, c, traced.slk[0], how, whole=(how == "exit"))
            made = read_counter(cnt)
            if not inf:
                continue
            if how == "exit":
                c.ok(inf.get("api_calls") == made[0] and inf.get("kernels") == made[1] and
                     inf.get("dropped") == 0,
                     "exit: %s host records, %s kernels, %s dropped; made %d calls, %d launches" %
                     (inf.get("api_calls"), inf.get("kernels"), inf.get("dropped"), made[0],
                      made[1]))
            else:
                c.ok(0 < inf.get("api_calls", 0) <= made[0],
                     "%s: %s host records of %d calls made (300 ms of work, flush every %d ms)" %
                     (how, inf.get("api_calls"), made[0], FLUSH_MS))
        return c
    return body


def wedged_exit(h, tmp, stub_env, line, what):
    """The churn program traced with a stand-in call that never returns (stub_env, 10 minutes)
    and SLACK_EXIT_TIMEOUT_MS=1000: it behaves as untraced, exits at most 8 s later than
    untraced, slack says one line holding every string of `line`, and the trace holds every call
    and kernel it made. Returns the checks and the trace's `slack info` (None: none to read)."""
    c = h.Checks()
    extra = {"CHURN_MS": "300", "CHURN_END": "exit"}
    bare = run(h, "churn", tmp, "bare", False, extra)
    cnt = os.path.join(tmp, "churn.cnt")
    traced = run(h, "churn", tmp, "traced", True,
                 dict(extra, CHURN_COUNTER=cnt, SLACK_EXIT_TIMEOUT_MS="1000", **stub_env),
                 timeout=60)
    same_behavior(c, bare, traced)
    said = problems(traced.err)
    c.ok(len(said) == 1 and all(x in said[0] for x in line),
         "slack said %r, want one line on %s" % (said, what))
    # the wait is bounded by SLACK_EXIT_TIMEOUT_MS (1 s here), not by the stuck call (600 s)
    c.ok(traced.wall < bare.wall + 8, "traced run took %.1f s, untraced %.1f s" %
         (traced.wall, bare.wall))
    if not c.ok(len(traced.slk) == 1, "files %s" % traced.files):
        return c, None
    inf = check_readable(h, c, traced.slk[0], what, whole=True)
    made = read_counter(cnt)
    if inf:
        c.ok(inf.get("api_calls") == made[0] and inf.get("kernels") == made[1] and
             inf.get("kernels_with_launch") == made[1],
             "%s host records, %s kernels (%s joined); made %d calls, %d launches" %
             (inf.get("api_calls"), inf.get("kernels"), inf.get("kernels_with_launch"),
              made[0], made[1]))
    return c, inf


def scenario_cupti_wedged(h):
    """CUPTI's detach at exit never returns (STUB_CUPTI_FINALIZE_MS; the likeliest reading of GPU
    run 98's hung exit until run 101 found the probe's kernel load instead, below): the program
    exits all the same, SLACK_EXIT_TIMEOUT_MS later, slack says so once, and the trace holds
    every call and kernel, and the probe (without its detached figure)."""
    def body(tmp, fns, cbids):
        c, inf = wedged_exit(h, tmp, {"STUB_CUPTI_FINALIZE_MS": "600000"},
                             ["cuptiFinalize did not return within 1000 ms"], "cuptiFinalize")
        if inf:
            probe = inf.get("probe") or {}
            c.ok(probe.get("launches", 0) > 0 and probe.get("off") == "records_disabled",
                 "probe %s: want its launches, off measured with records disabled" % probe)
            c.ok(inf.get("taken_records") == 1, "%s TAKEN records, want the one marking where "
                 "the GPU records end" % inf.get("taken_records"))
        return c
    return body


def scenario_probe_load_wedged(h):
    """The exit probe's kernel load never returns (STUB_PTX_LOAD_MS: GPU run 101 caught runs 98
    and 99's hung exit in the probe's cuModuleLoadData): the program exits all the same,
    SLACK_EXIT_TIMEOUT_MS later, slack says so once, and the trace holds every call and kernel
    and no probe."""
    def body(tmp, fns, cbids):
        c, inf = wedged_exit(h, tmp, {"STUB_PTX_LOAD_MS": "600000"},
                             ["kernel load (cuModuleLoadData", "within 1000 ms"],
                             "the probe's load")
        if inf:
            c.ok(not inf.get("probe"), "probe %s: want none" % inf.get("probe"))
        return c
    return body


# ------------------------------------------------------------------------- 2: exact counts

def scenario_storm(h, extra, want_drops):
    def body(tmp, fns, cbids):
        c = h.Checks()
        env = dict(extra)
        bare = run(h, "storm", tmp, "bare", False, env, timeout=300)
        traced = run(h, "storm", tmp, "traced", True, env, timeout=300)
        same_behavior(c, bare, traced)
        c.ok(len(traced.err.splitlines()) == 1 and not problems(traced.err),
             "traced stderr: %r" % traced.err[-400:])
        m = re.match(r"storm: (\d+) threads, (\d+) launches, (\d+) stream synchronizations",
                     traced.out)
        if not c.ok(m, "storm printed %r" % traced.out) or len(traced.slk) != 1:
            c.ok(len(traced.slk) == 1, "files %s" % traced.files)
            return c
        threads, launches, syncs = (int(x) for x in m.groups())
        made = launches + syncs
        inf = check_readable(h, c, traced.slk[0], "storm", whole=True)
        if not inf:
            return c
        hrc, byfn, nhost, herr = host_counts(h, traced.slk[0])
        c.ok(hrc == 0, "slack dump --kind host failed: %s" % herr.strip())
        drops = inf.get("dropped_by", {})
        ring, writer, cupti = drops.get("ring", 0), drops.get("writer", 0), drops.get("cupti", 0)
        rec_launch, rec_sync = byfn["cudaLaunchKernel"], byfn["cudaStreamSynchronize"]
        other = nhost - rec_launch - rec_sync
        c.notes = ["made %d launches + %d syncs = %d hooked calls; recorded %d + %d, dropped in "
                   "rings %d (writer %d): %d; kernels %d + CUPTI dropped %d = %d; %.1f s traced, "
                   "%.1f s untraced" % (launches, syncs, made, rec_launch, rec_sync, ring, writer,
                                        nhost + ring, inf.get("kernels", 0), cupti,
                                        inf.get("kernels", 0) + cupti, traced.wall, bare.wall)]
        c.ok(nhost == inf.get("api_calls"), "dump has %d host records, info api_calls %s" %
             (nhost, inf.get("api_calls")))
        c.ok(other == 0, "host records of calls the program did not make: %s" %
             dict((k, v) for k, v in byfn.items()
                  if k not in ("cudaLaunchKernel", "cudaStreamSynchronize")))
        c.ok(nhost + ring == made, "host: recorded %d + dropped %d = %d, made %d (off by %d)" %
             (nhost, ring, nhost + ring, made, nhost + ring - made))
        c.ok(writer == 0, "the writer dropped %d records" % writer)
        c.ok(rec_launch <= launches and rec_sync <= syncs, "more records than calls: %d/%d "
             "launches, %d/%d syncs" % (rec_launch, launches, rec_sync, syncs))
        c.ok(inf.get("kernels", 0) + cupti == launches,
             "GPU: %s kernel records + %d CUPTI drops = %d, made %d launches" %
             (inf.get("kernels"), cupti, inf.get("kernels", 0) + cupti, launches))
        if want_drops:
            c.ok(ring > 0, "SLACK_RING_EVENTS=%s forced no ring drops" %
                 extra.get("SLACK_RING_EVENTS"))
        return c
    return body


# ------------------------------------------------------------------------- 3: fork, exec

def trace_pid(inf):
    try:
        return int(inf.get("header", {}).get("pid"))
    except (TypeError, ValueError):
        return None


def read_procs(report):
    procs = []
    with open(report) as f:
        for line in f:
            procs.append(json.loads(line))
    return procs


def check_counts(h, c, path, p, exact, what, others, gpu=True):
    """Host and GPU records of one process against what it did (forker's report line); none of
    its host records may carry the thread id of another process of the run (`others`)."""
    tids = collections.Counter()
    rc, byfn, nhost, _ = host_counts(h, path, tids)
    rc2, inf, _ = info(h, path)
    if not c.ok(rc == 0 and rc2 == 0, "%s: cannot read %s" % (what, path)):
        return
    foreign = dict((t, n) for t, n in tids.items() if t in others)
    c.ok(not foreign, "%s: host records of other processes' threads {tid: records}: %s" %
         (what, foreign))
    if p["proc"] == "child":
        c.ok(set(tids) <= {p["pid"]}, "%s: host records of threads %s, the child is one thread %d"
             % (what, dict(tids), p["pid"]))
    if not gpu:  # host calls only: no GPU record at all
        p = dict(p, gpu_launches=0, gpu_copies=0)
    got = (byfn["cudaLaunchKernel"], byfn["cudaMemcpyAsync"], byfn["cudaStreamSynchronize"],
           inf.get("kernels"), inf.get("memcpys"))
    want = (p["launches"], p["copies"], p["syncs"], p.get("gpu_launches", p["launches"]),
            p.get("gpu_copies", p["copies"]))
    # device allocations (hooked since session 13) and pinned host ones (session 38): each
    # process that does CUDA work allocates its two buffers once (cuda_work); they are not among
    # the calls the report line counts
    allocs = byfn["cudaMalloc"] + byfn["cudaFree"]
    c.ok(allocs <= 1, "%s: %d cudaMalloc/cudaFree host records, the process allocates once" %
         (what, allocs))
    pinned = byfn["cudaMallocHost"] + byfn["cudaFreeHost"]
    c.ok(pinned <= 1, "%s: %d cudaMallocHost/cudaFreeHost host records, the process pins once" %
         (what, pinned))
    allocs += pinned
    extra = nhost - sum(got[:3]) - allocs
    if exact:
        c.ok(got == want and extra == 0, "%s: host launches/copies/syncs, kernels, memcpys %s, "
             "made %s; %d other host records" % (what, got, want, extra))
    else:
        c.ok(all(g <= w for g, w in zip(got, want)) and extra == 0,
             "%s: records %s exceed what it made %s (%d other)" % (what, got, want, extra))


def scenario_fork(h, mode, children=20, flush_ms=FLUSH_MS):
    def body(tmp, fns, cbids):
        c = h.Checks()
        extra = {"FORKER_MODE": mode, "SLACK_FLUSH_MS": str(flush_ms),
                 "FORKER_CHILDREN": str(children)}
        bare = run(h, "forker", tmp, "bare", False, dict(extra, PROG_REPORT=os.path.join(
            tmp, "bare.report")))
        report = os.path.join(tmp, "traced.report")
        traced = run(h, "forker", tmp, "traced", True, dict(extra, PROG_REPORT=report))
        same_behavior(c, bare, traced)
        if traced.rc != 0:
            return c
        procs = read_procs(report)
        want = {p["pid"]: p for p in procs if p["cuda"]}
        found = {}
        for path in traced.slk:
            m = re.search(r"-(\d+)\.slk$", path)
            p = want.get(int(m.group(1))) if m else None
            # a process gone by _exit wrote its trace out first (interpose/exit.c): whole too
            inf = check_readable(h, c, path, mode, whole=True)
            if inf:
                pid = trace_pid(inf)
                c.ok(os.path.basename(path).endswith("-%s.slk" % pid),
                     "%s: file %s holds pid %s" % (mode, os.path.basename(path), pid))
                found[pid] = path
        c.ok(len(traced.files) == len(traced.slk), "%s: other files %s" % (mode, traced.files))
        nocuda = sorted(p["pid"] for p in procs if not p["cuda"])
        c.ok(sorted(found) == sorted(want),
             "%s: trace files of pids %s; processes that used CUDA %s (not: %s)" %
             (mode, sorted(found), sorted(want), nocuda))
        said = [l for l in traced.err.splitlines() if l.startswith("slack: tracing to ")]
        # children of a tracing parent that use CUDA say once that they record host calls only
        n_cupti = len(want) - 1 if mode == "warm_cuda" else 0
        probs = problems(traced.err)
        c.ok(len(said) == len(traced.slk) and len(probs) == n_cupti and
             all("fork" in l for l in probs),
             "%s: stderr %r for %d files" % (mode, traced.err[-500:], len(traced.slk)))
        for pid, p in want.items():
            if pid not in found:
                continue
            what = "%s %s %d (%s)" % (mode, p["proc"], pid, p["end"])
            if p["end"] == "exec":  # the exec'd workload: the full e2e check on its own report
                h.check_trace(c, found[pid], report + ".child", fns, cbids)
            else:
                others = set(q["pid"] for q in procs if q["pid"] != pid)
                check_counts(h, c, found[pid], p, p["end"] in ("exit", "_exit"), what, others,
                             gpu=not (mode == "warm_cuda" and p["proc"] == "child"))
        c.notes = ["%d processes, %d used CUDA, %d trace files" % (len(procs) + (mode == "exec"),
                                                                  len(want), len(found))]
        return c
    return body


def scenario_exec_same_pid(h):
    """exec keeps the pid: the new program's file takes the -1 suffix, the first file is the
    program before exec, and both read back whole."""
    def body(tmp, fns, cbids):
        c = h.Checks()
        traced = h.run_prog("exec_chain", tmp, "traced", True)
        c.ok(traced.rc == 0, "exec_chain exit %s: %s" % (traced.rc, traced.err[-300:]))
        c.ok(len(traced.files) == 2, "files %s" % traced.files)
        names = {}
        for f in traced.files:
            path = os.path.join(traced.outdir, f)
            inf = check_readable(h, c, path, "exec", whole=True)
            if inf:
                cmd = str(inf.get("header", {}).get("cmdline", ""))
                names[os.path.basename(cmd.split(" ")[0])] = (f, trace_pid(inf), inf)
        if not c.ok(sorted(names) == ["exec_chain", "workload"], "cmdlines %s" % sorted(names)):
            return c
        f1, pid1, inf1 = names["exec_chain"]
        f2, pid2, _ = names["workload"]
        c.ok(pid1 == pid2, "exec changed the pid: %s, %s" % (pid1, pid2))
        c.ok(re.fullmatch(r"slack-.+-%d\.slk" % pid1, f1) is not None,
             "the program before exec wrote %s, not slack-<host>-%s.slk" % (f1, pid1))
        c.ok(re.fullmatch(r"slack-.+-%d-1\.slk" % pid2, f2) is not None,
             "the exec'd program wrote %s, not slack-<host>-%s-1.slk" % (f2, pid2))
        c.ok(inf1.get("kernels") == 5 and inf1.get("memcpys") == 1,
             "before exec: %s kernels, %s memcpys in %s (made 5, 1)" %
             (inf1.get("kernels"), inf1.get("memcpys"), f1))
        return c
    return body


# ------------------------------------------------------------------------- 4: full, unwritable

def limits(fsize, xfsz):
    def pre():
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        signal.signal(signal.SIGXFSZ, xfsz)
    return pre


def scenario_fsize(h, fsize, ignore, header_fits):
    """RLIMIT_FSIZE: writes past it fail with EFBIG (and raise SIGXFSZ, whose default action
    kills the process unless the writing thread blocks it or the program ignores it)."""
    def body(tmp, fns, cbids):
        c = h.Checks()
        disp = signal.SIG_IGN if ignore else signal.SIG_DFL
        extra = {"SLACK_FLUSH_MS": str(FLUSH_MS), "CHURN_MS": "400"}
        if h.SAN_PRELOAD:  # libtsan writes a 512 KiB file of its own as it starts
            env = dict(make_env(h, False, tmp, extra), LD_PRELOAD=":".join(h.SAN_PRELOAD))
            p = subprocess.run([os.path.join(h.PROGS, "churn")], env=env, cwd=tmp,
                               preexec_fn=limits(fsize, disp), capture_output=True, timeout=60)
            if p.returncode != 0:
                c.skip = "the sanitizer runtime alone (no libslack) ends the program under " \
                    "this limit (exit %d)" % p.returncode
                return c
        bare = run(h, "churn", tmp, "bare", False, extra, preexec=limits(fsize, disp), timeout=60)
        traced = run(h, "churn", tmp, "traced", True, extra, preexec=limits(fsize, disp),
                     timeout=60)
        same_behavior(c, bare, traced)
        probs = problems(traced.err)
        c.ok(len(probs) == 1, "want exactly one slack problem line, got %r" % traced.err[-500:])
        c.ok(any("File too large" in l for l in probs), "the problem line does not say why: %r" %
             probs)
        c.ok(traced.wall < bare.wall + 10, "traced run took %.1f s, untraced %.1f s" %
             (traced.wall, bare.wall))
        if header_fits:
            c.ok(len(traced.slk) == 1, "files %s" % traced.files)
            for path in traced.slk:
                c.ok(os.path.getsize(path) <= fsize, "%s is over the limit" % path)
                check_readable(h, c, path, "file at the size limit")
        else:
            c.ok(not traced.files, "a trace that could not hold its header was left: %s" %
                 traced.files)
        c.notes = ["limit %d bytes, SIGXFSZ %s: %s" % (fsize, "ignored" if ignore else "default",
                                                       probs[0] if probs else "-")]
        return c
    return body


def try_mount(args):
    try:
        p = subprocess.run(["mount"] + args, capture_output=True, text=True, timeout=30)
        return p.returncode == 0, p.stderr.strip()
    except OSError as e:
        return False, str(e)


def umount(path):
    subprocess.run(["umount", "-l", path], capture_output=True, timeout=30)


def scenario_tmpfs_full(h):
    def body(tmp, fns, cbids):
        c = h.Checks()
        mnt = os.path.join(tmp, "small")
        os.makedirs(mnt)
        ok, why = try_mount(["-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt])
        if not ok:
            c.skip = "cannot mount a tmpfs here: %s" % why
            return c
        try:
            extra = {"SLACK_FLUSH_MS": str(FLUSH_MS), "CHURN_MS": "400"}
            bare = run(h, "churn", tmp, "bare", False, extra, timeout=60)
            traced = run(h, "churn", tmp, "traced", True, extra, outdir=mnt, timeout=60)
            same_behavior(c, bare, traced)
            probs = problems(traced.err)
            c.ok(len(probs) == 1 and "No space left" in probs[0],
                 "want one problem line saying the disk is full: %r" % traced.err[-500:])
            for path in traced.slk:
                check_readable(h, c, path, "file on the full tmpfs")
        finally:
            umount(mnt)
        return c
    return body


def scenario_unwritable(h, kind):
    def body(tmp, fns, cbids):
        c = h.Checks()
        mnt = None
        if kind == "enotdir":
            open(os.path.join(tmp, "a-file"), "w").close()
            outdir = os.path.join(tmp, "a-file", "sub")
        elif kind == "missing":
            outdir = os.path.join(tmp, "no", "such", "dir")
        else:  # read-only: a read-only bind mount of an empty directory
            outdir = os.path.join(tmp, "ro")
            os.makedirs(outdir)
            ok, why = try_mount(["--bind", outdir, outdir])
            if ok:
                mnt = outdir
                ok, why = try_mount(["-o", "remount,bind,ro", outdir])
            if not ok:
                if mnt:
                    umount(mnt)
                c.skip = "cannot make a read-only mount here: %s" % why
                return c
        try:
            bare = run(h, "workload", tmp, "bare", False, timeout=60)
            traced = run(h, "workload", tmp, "traced", True, outdir=outdir, timeout=60)
            same_behavior(c, bare, traced)
            if kind == "missing":  # made, like `slack record -o` (and private: 0700)
                made = os.listdir(outdir) if os.path.isdir(outdir) else []
                c.ok(len(made) == 1 and made[0].endswith(".slk"),
                     "a missing SLACK_OUTPUT was not made with one trace in it: %s" % made)
                c.ok(os.path.isdir(outdir) and (os.stat(outdir).st_mode & 0o777) == 0o700,
                     "the made directory is not 0700")
                c.ok(not problems(traced.err), "problems said: %r" % traced.err[-400:])
                return c
            probs = problems(traced.err)
            c.ok(len(probs) == 1 and len(traced.err.splitlines()) == 1,
                 "want exactly one slack line (the problem): %r" % traced.err[-500:])
            c.ok(outdir in traced.err, "stderr does not name %s: %r" % (outdir, traced.err))
            c.ok(traced.wall < bare.wall + 10, "traced run took %.1f s, untraced %.1f s" %
                 (traced.wall, bare.wall))
            if os.path.isdir(outdir):
                c.ok(not os.listdir(outdir), "files in %s: %s" % (outdir, os.listdir(outdir)))
            c.notes = [probs[0] if probs else "-"]
        finally:
            if mnt:
                umount(mnt)
        return c
    return body


# ------------------------------------------------------------------------- 5: size

def scenario_probe_size(h):
    def body(tmp, fns, cbids):
        c = h.Checks()
        path = os.path.join(h.ROOT, "tests", "data", "probe-h200.slk")
        rc, out, err = h.slack_cmd("info", path)
        m = re.search(r"([\d.]+) bytes per GPU event", out)
        c.ok(rc == 0 and m, "slack info does not print bytes per GPU event: %s" % err.strip())
        rc, inf, err = info(h, path)
        v = inf.get("bytes_per_gpu_event") if inf else None
        if c.ok(isinstance(v, (int, float)), "slack info --json: bytes_per_gpu_event = %r" % v):
            c.notes = ["tests/data/probe-h200.slk: %.2f bytes per GPU event (%s bytes, %s GPU "
                       "records)" % (v, inf.get("file_bytes"), inf.get("kernels", 0) +
                                     inf.get("memcpys", 0) + inf.get("memsets", 0))]
            c.ok(v <= 8, "tests/data/probe-h200.slk costs %.2f bytes per GPU event, the target "
                 "is at most 8 (the committed H200 probe trace must be one written by the "
                 "current encoding)" % v)
        return c
    return body


def scenarios(h):
    """(name, function) pairs for e2e.py; `h` is the e2e module (its helpers and settings)."""
    return [
        ("robust_sigkill_random", scenario_sigkill_random(h)),
        ("robust_kill_at_creation", scenario_kill_at_creation(h)),
        ("robust_exit_paths", scenario_exit_paths(h)),
        ("robust_cupti_wedged", scenario_cupti_wedged(h)),
        ("robust_probe_load_wedged", scenario_probe_load_wedged(h)),
        ("robust_storm_default_ring", scenario_storm(h, {}, False)),
        ("robust_storm_small_ring", scenario_storm(h, {"SLACK_RING_EVENTS": "64"}, True)),
        ("robust_storm_cold_start", scenario_storm(h, {"STORM_COLD": "1"}, False)),
        ("robust_fork_cold", scenario_fork(h, "cold")),
        # no periodic flush in the children's lives: what an _exit child wrote, its hook did
        ("robust_fork_cold_exit_noflush", scenario_fork(h, "cold", 8, 10000)),
        ("robust_fork_warm", scenario_fork(h, "warm")),
        ("robust_fork_exec", scenario_fork(h, "exec")),
        # the writer holds 3000 host events of the parent (long flush period) when it forks
        ("robust_fork_warm_child_cuda", scenario_fork(h, "warm_cuda", 5, 10000)),
        ("robust_exec_same_pid", scenario_exec_same_pid(h)),
        ("robust_fsize_mid_run_sigxfsz_ignored", scenario_fsize(h, 16384, True, True)),
        ("robust_fsize_mid_run_sigxfsz_default", scenario_fsize(h, 16384, False, True)),
        ("robust_fsize_header_sigxfsz_ignored", scenario_fsize(h, 0, True, False)),
        ("robust_fsize_header_sigxfsz_default", scenario_fsize(h, 0, False, False)),
        ("robust_fsize_half_header_sigxfsz_default", scenario_fsize(h, 200, False, False)),
        ("robust_tmpfs_full", scenario_tmpfs_full(h)),
        ("robust_unwritable_enotdir", scenario_unwritable(h, "enotdir")),
        ("robust_output_made", scenario_unwritable(h, "missing")),
        ("robust_unwritable_readonly", scenario_unwritable(h, "readonly")),
        ("robust_probe_bytes_per_gpu_event", scenario_probe_size(h)),
    ]

#!/usr/bin/env bash
# Call sites, through the CPU stand-in for cudart. Native: a C program with known call chains
# (tests/progs/chain.c) gets its chain, innermost first, and a 20,000-deep recursion is cut at
# SLACK_STACK_DEPTH frames; the header names the unwinder (libunwind where the machine has it).
# Python frames (runtime/pyframes.c): a
# Python program (tests/py/pyframes_prog.py) calls it through ctypes under libslack, and every
# recorded call names the program's own line and function, innermost first; SLACK_STACKS picks
# which calls carry frames; deep recursion, a timer signal during the hooks and threads do not
# crash or confuse it; the report names the Python line and --site finds it; the writer's
# samples name the line a thread was on between its calls (SLACK_PY_SAMPLE_MS), and the data
# starvation that host work causes goes to that line. Run from the
# repository root; every python3 on the machine that differs (Debian's, a pyenv one) is tried.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
SLACK=$BUILD/slack
make -s BUILD="$BUILD" "$BUILD/libslack.so" "$SLACK" stub "$BUILD/progs/chain" "$BUILD/stub/libnative_worker.so" > /dev/null || exit 1
TEST_NAME=callsites
. tests/tools/harness.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
PROG=$PWD/tests/py/pyframes_prog.py
RT=$PWD/$BUILD/stub/libcudart.so.13

# ---- native: known chains, deep recursion, the unwinder ----
mkdir -p "$work/chain"
if ! out=$(SLACK_OUTPUT="$work/chain" LD_PRELOAD="$PWD/$BUILD/libslack.so" "$BUILD/progs/chain" 2> "$work/chain.err"); then
  bad "chain: the program failed: $(cat "$work/chain.err")"
else
  [ "$out" = "chain 2 0" ] && ok || bad "chain: stdout changed: $out"
  "$SLACK" dump "$work/chain"/*.slk > "$work/chain.dump"
  grep -q 'callsite="slack_chain_c+0x[0-9a-f]* (chain)\\nslack_chain_b+0x[0-9a-f]* (chain)\\nslack_chain_a+0x[0-9a-f]* (chain)\\n' "$work/chain.dump" && ok ||
    bad "chain: no c < b < a stack: $(grep -m1 -o 'callsite="[^"]*"' "$work/chain.dump")"
  deep=$(grep -o 'callsite="slack_chain_deep[^"]*"' "$work/chain.dump" | head -1)
  [ "$(grep -o 'slack_chain_deep+' <<< "$deep" | wc -l)" = 12 ] && ok || bad "chain: deep recursion not cut at 12 frames: ${deep:0:200}"
  want=backtrace
  for d in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib /usr/local/lib; do
    [ -e "$d/libunwind.so.8" ] && want=libunwind
  done
  "$SLACK" info "$work/chain"/*.slk | grep -qE "stack_unwinder +$want\$" && ok || bad "chain: header does not say stack_unwinder $want: $("$SLACK" info "$work/chain"/*.slk | grep unwinder)"
fi

# ---- Python ----
line_of() { grep -n "TAG:$1\$" "$PROG" | cut -d: -f1; }
L_COPY=$(line_of copy) L_ASYNC=$(line_of async) L_SYNC=$(line_of sync) L_DEEP=$(line_of deep)
L_LOAD=$(line_of load) L_LOAD2=$(line_of load2) L_LOADCALL=$(line_of loadcall) L_WAIT=$(line_of wait)

# run PY NAME MODE [VAR=VALUE...]: the program under libslack; its dump in $work/NAME.dump
run() {
  local py=$1 name=$2 mode=$3
  shift 3
  rm -rf "$work/$name" && mkdir -p "$work/$name"
  if ! env "$@" SLACK_OUTPUT="$work/$name" LD_PRELOAD="$PWD/$BUILD/libslack.so" \
      "$py" "$PROG" "$RT" "$mode" > "$work/$name.out" 2> "$work/$name.err"; then
    bad "$name: the program failed: $(tail -3 "$work/$name.err")"
    return 1
  fi
  grep -qx "done $mode" "$work/$name.out" || bad "$name: stdout changed: $(head -c 300 "$work/$name.out")"
  "$SLACK" dump "$work/$name"/*.slk > "$work/$name.dump" 2>&1 ||
    bad "$name: dump failed: $(tail -c 300 "$work/$name.dump"); files: $(ls -l "$work/$name" | tail -n +2 | tr '\n' ' '); stderr: $(tail -c 300 "$work/$name.err")"
}
# count NAME FN PATTERN: host records of FN whose pystack matches PATTERN (grep -E)
count() { grep -E "^host .*fn=$2 " "$work/$1.dump" | grep -cE -- "$3"; }

pys=()
# every CPython here: the default, Debian's, and pyenv's 3.10-3.13 where present
for py in python3 /usr/bin/python3 python3.10 python3.12 python3.13 /root/.pyenv/versions/3.1[0-3]*/bin/python3; do
  command -v "$py" > /dev/null 2>&1 || continue
  real=$("$py" -c 'import sys; print(sys.executable)' 2> /dev/null) || continue # not a shim
  [[ " ${pys[*]} " == *" $real "* ]] || pys+=("$real")
done
[ ${#pys[@]} -gt 0 ] || { echo "callsites: FAIL: no python3"; exit 1; }
for py in "${pys[@]}"; do
  v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  n="py$v-$(basename "$py")"
  echo "callsites: $py (Python $v)"
  run "$py" "$n-plain" plain || continue
  me="pyframes_prog.py"
  got=$(count "$n-plain" cuMemcpyHtoD "pystack=\"[^\"]*/$me:$L_COPY copy_in\\\\n[^\"]*/$me:[0-9]+ step\\\\n[^\"]*/$me:[0-9]+ <module>\"")
  [ "$got" = 5 ] && ok || bad "$n: 5 copies naming $me:$L_COPY copy_in < step < <module>, got $got: $(grep -m1 'fn=cuMemcpyHtoD ' "$work/$n-plain.dump" | grep -o 'pystack="[^"]*"')"
  got=$(count "$n-plain" cuCtxSynchronize "pystack=\"[^\"]*/$me:$L_SYNC sync\\\\n")
  [ "$got" = 5 ] && ok || bad "$n: 5 syncs naming $me:$L_SYNC sync, got $got"
  got=$(count "$n-plain" cuMemcpyHtoDAsync "pystack=\"[^\"]*/$me:$L_ASYNC copy_async\\\\n")
  [ "$got" = 5 ] && ok || bad "$n: 5 async copies naming $me:$L_ASYNC, got $got"
  grep -q "slack: Python" "$work/$n-plain.err" && bad "$n: said the layout is unknown: $(cat "$work/$n-plain.err")" || ok
  # the report: the user's line first, in the text and in JSON; --site finds its time
  expect "$n report names the line" 0 "$me:$L_COPY copy_in: cuMemcpyHtoD @ cudaMemcpy" -- "$SLACK" report "$work/$n-plain"/*.slk
  "$SLACK" report --json --site "$me:$L_SYNC" "$work/$n-plain"/*.slk > "$work/$n.json" || bad "$n: report --json failed"
  python3 - "$work/$n.json" "$L_COPY" "$L_SYNC" <<'PY' && ok || bad "$n: JSON python frames or --site wrong"
import json, sys
g = json.load(open(sys.argv[1]))["gpus"][0]
copy = [s for s in g["callsites"]["copy"] if s["python"][0]["function"] == "copy_in"][0]
py = copy["python"]
assert py[0]["file"].endswith("pyframes_prog.py") and py[0]["line"] == int(sys.argv[2]), py[0]
assert py[0]["function"] == "copy_in" and py[0]["user"] is True, py[0]
assert [f["function"] for f in py] == ["copy_in", "step", "<module>"], py
q = g["site_query"]
assert q["text"].endswith(sys.argv[3]) and q["sites"] >= 1, q
assert q["time_ns"]["copy"] == 0 and q["time_ns"]["copy_stall"] == 0, q
PY
  # SLACK_STACKS: sync: frames on blocking calls only; off: none, and no native stacks
  run "$py" "$n-sync" plain SLACK_STACKS=sync || continue
  [ "$(count "$n-sync" cuMemcpyHtoDAsync pystack=)" = 0 ] && [ "$(count "$n-sync" cuCtxSynchronize "$me:$L_SYNC")" = 5 ] && ok ||
    bad "$n: SLACK_STACKS=sync: async copies must carry no frames, syncs must"
  run "$py" "$n-off" plain SLACK_STACKS=off || continue
  if grep -q 'pystack=' "$work/$n-off.dump" || grep -E '^host ' "$work/$n-off.dump" | grep -q 'callsite="[^"]*\\n'; then
    bad "$n: SLACK_STACKS=off still recorded frames"
  else ok; fi
  # deep recursion: the 32 innermost frames, no crash
  run "$py" "$n-deep" deep || continue
  got=$(grep -E '^host .*fn=cuCtxSynchronize ' "$work/$n-deep.dump" | grep -m1 -o 'pystack="[^"]*"')
  frames=$(grep -o '\\n' <<< "$got" | wc -l)
  [[ "$got" == *"$me:$L_DEEP deep"* ]] && [ "$frames" = 31 ] && ok || bad "$n: deep recursion: want 32 frames from $me:$L_DEEP, got $((frames + 1)): ${got:0:200}"
  # a timer signal every 50 us while calls are hooked
  run "$py" "$n-signal" signal || continue
  [ "$(count "$n-signal" cuCtxSynchronize "$me:$L_SYNC sync")" = 3000 ] && ok || bad "$n: signal: not every sync named its line"
  # threads: each names its own frames (worker < run < _bootstrap_inner ...)
  run "$py" "$n-thread" thread || continue
  [ "$(count "$n-thread" cuCtxSynchronize "$me:$L_SYNC sync\\\\n[^\"]*/$me:[0-9]+ worker")" = 80 ] &&
    [ "$(count "$n-thread" cuMemcpyHtoD "$me:$L_COPY copy_in\\\\n[^\"]*<module>")" = 20 ] && ok ||
    bad "$n: threads: frames of the wrong thread: $(grep -E '^host .*fn=cuCtxSynchronize ' "$work/$n-thread.dump" | grep -o 'pystack="[^"]*"' | sort | uniq -c)"
  # the writer's samples: host work between the calls (a loader in the main thread) is named
  # by the line the thread was on; the data starvation it causes goes to that line
  if [ "${v#3.}" -ge 11 ] 2> /dev/null; then
    run "$py" "$n-loader" loader || continue
    got=$(grep -cE "^sample .*pystack=\"[^\"]*/$me:($L_LOAD|$L_LOAD2) load_batch\\\\n[^\"]*/$me:$L_LOADCALL <module>\"" "$work/$n-loader.dump")
    [ "$got" -ge 15 ] && ok || bad "$n: loader: $got samples in load_batch (10 x 30 ms, one per 10 ms): $(grep -m2 '^sample' "$work/$n-loader.dump")"
    "$SLACK" report --json "$work/$n-loader"/*.slk > "$work/$n-loader.json"
    python3 - "$work/$n-loader.json" "$L_LOAD" "$L_LOAD2" <<'PY' && ok || bad "$n: loader: data starvation not named by the sampled line"
import json, sys
g = json.load(open(sys.argv[1]))["gpus"][0]
ds = g["callsites"]["data_starvation"]
top = ds[0]
assert "load_batch: host work (sampled)" in top["site"], top["site"]
assert top["python"][0]["line"] in (int(sys.argv[2]), int(sys.argv[3])), top["python"][0]
assert sum(s["ns"] for s in ds) == g["time_ns"]["data_starvation"], ds
assert g["verdict"]["class"] == "data_starvation", g["verdict"]
PY
    # each sample's cpu_ns (format 2.7): the thread's CPU time, which runs with the wall clock
    # while it works (the loader's busy loop) and stands still while it sleeps
    run "$py" "$n-sleeper" sleeper || continue
    python3 - "$work/$n-loader.dump" "$me:$L_LOAD" "$me:$L_LOAD2" "$work/$n-sleeper.dump" "$me:$L_WAIT" <<'PY' && ok || bad "$n: samples' cpu_ns: running and sleeping threads not told apart"
import re, statistics, sys

def fractions(path, lines):
    # CPU time over wall time between consecutive samples of one thread both at those lines
    last, got = {}, []
    for l in open(path):
        if not l.startswith("sample ") or "pystack=" not in l:
            continue
        tid = re.search(r" tid=(\d+)", l).group(1)
        t = int(re.search(r" start=(\d+)", l).group(1))
        cpu = int(re.search(r" cpu_ns=(\d+)", l).group(1))
        inner = re.search(r'pystack="([^"\\]*)', l).group(1)
        at = any(inner.endswith(x + " " + fn) for x in lines for fn in ("load_batch", "wait_batch"))
        if at and tid in last and t > last[tid][0]:
            got.append((cpu - last[tid][1]) / (t - last[tid][0]))
        last[tid] = (t, cpu) if at else None
        if last[tid] is None:
            del last[tid]
    return got

run = fractions(sys.argv[1], sys.argv[2:4])
slept = fractions(sys.argv[4], sys.argv[5:6])
assert len(run) >= 5 and len(slept) >= 5, (len(run), len(slept))
# a busy loop runs (most of the time, even on a loaded machine); a sleep does not
assert statistics.median(run) > 0.3 and statistics.median(slept) < 0.1, (run, slept)
PY
    # threads that never call CUDA (a loader's pool): sampled from the interpreter's list of
    # threads, with their own lines and CPU time: one spinning in load_batch runs, one sleeping
    # in wait_batch does not; neither has a host record
    run "$py" "$n-pool" pool || continue
    python3 - "$work/$n-pool.dump" "$me:$L_LOAD" "$me:$L_LOAD2" "$me:$L_WAIT" <<'PY' && ok || bad "$n: pool: threads without CUDA calls not sampled: $(grep '^sample' "$work/$n-pool.dump" | grep -o ' tid=[0-9]*' | sort | uniq -c | tr '\n' ' ')"
import re, statistics, sys
lines = open(sys.argv[1]).read().splitlines()
calls = {re.search(r" tid=(\d+)", l).group(1) for l in lines if l.startswith("host ")}
by = {}
for l in lines:
    if l.startswith("sample "):
        tid = re.search(r" tid=(\d+)", l).group(1)
        m = re.search(r'pystack="([^"\\]*)', l)
        by.setdefault(tid, []).append((int(re.search(r" start=(\d+)", l).group(1)),
                                       int(re.search(r" cpu_ns=(\d+)", l).group(1)), m and m.group(1)))
others = {t: v for t, v in by.items() if t not in calls}
assert len(calls) == 1 and len(others) == 2, (calls, list(by))

def share(v):  # CPU over wall time between consecutive samples
    return statistics.median((c1 - c0) / (t1 - t0) for (t0, c0, _), (t1, c1, _) in zip(v, v[1:]))

spin = [v for v in others.values() if sum(1 for x in v if x[2] and x[2].split(" ")[0].endswith((sys.argv[2], sys.argv[3]))) >= 10]
idle = [v for v in others.values() if sum(1 for x in v if x[2] and x[2].endswith(sys.argv[4] + " wait_batch")) >= 10]
assert len(spin) == 1 and len(idle) == 1, [[x[2] for x in v[:3]] for v in others.values()]
assert share(spin[0]) > 0.3 and share(idle[0]) < 0.1, (share(spin[0]), share(idle[0]))
PY
    # threads starting and ending all the time under the walk (a sample every 1 ms): the
    # program runs to its end, the 4 spawners (no CUDA call) are sampled (3.13 lost the list's
    # head under a long look before it was looked for again)
    run "$py" "$n-churn" churn SLACK_PY_SAMPLE_MS=1 || continue
    python3 - "$work/$n-churn.dump" <<'PY' && ok || bad "$n: churn: the spawners not sampled: $(grep '^sample' "$work/$n-churn.dump" | grep -c spawner)"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
tids = {re.search(r" tid=(\d+)", l).group(1) for l in lines if l.startswith("sample ") and " spawner" in l}
assert len(tids) == 4, tids
PY
    # a thread without Python that makes hooked calls (autograd's workers): samples of its CPU
    # time alone (no pystack), which goes on as it works
    rm -rf "$work/$n-native" && mkdir -p "$work/$n-native"
    if SLACK_OUTPUT="$work/$n-native" LD_PRELOAD="$PWD/$BUILD/libslack.so" "$py" "$PROG" "$RT" native \
      "$PWD/$BUILD/stub/libnative_worker.so" > "$work/$n-native.out" 2> "$work/$n-native.err" &&
      "$SLACK" dump "$work/$n-native"/*.slk > "$work/$n-native.dump" 2>&1; then
      python3 - "$work/$n-native.dump" <<'PY' && ok || bad "$n: native thread: no samples of its CPU time"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
# the native thread: the one whose calls (cuCtxSynchronize, under the hooked cudart call) carry
# no Python frames
py = {re.search(r" tid=(\d+)", l).group(1) for l in lines if l.startswith("host ") and "pystack=" in l}
native = {re.search(r" tid=(\d+)", l).group(1) for l in lines
          if l.startswith("host ") and "Synchronize" in l and "pystack=" not in l} - py
assert len(native) == 1, native
tid = native.pop()
cpu = [int(re.search(r" cpu_ns=(\d+)", l).group(1)) for l in lines
       if l.startswith("sample ") and f" tid={tid} " in l]
bare = [l for l in lines if l.startswith("sample ") and f" tid={tid} " in l and "pystack=" in l]
# 12 x 10 ms, sampled every 10 ms from its first call's return: its CPU time, rising
assert len(cpu) >= 5 and not bare and cpu == sorted(cpu) and cpu[-1] > cpu[0], (cpu, bare)
PY
    else
      bad "$n: native thread: the program failed: $(tail -3 "$work/$n-native.err")"
    fi
    # SLACK_WRITER_SCHED=batch (the default): in a Python process whose frames slack reads the
    # writer sleeps and wakes as a normal thread (its samples are not held back by a program
    # that takes every CPU: GPU run 173), and is SCHED_BATCH while it works; batch-all, or no
    # samples, keep it SCHED_BATCH (ps: TS normal, B batch), the program's output unchanged
    wcls() { # VAR=VALUE...: the writer's policy in most of 5 looks during idle's sleep
      rm -rf "$work/$n-idle" && mkdir -p "$work/$n-idle"
      env "$@" SLACK_OUTPUT="$work/$n-idle" LD_PRELOAD="$PWD/$BUILD/libslack.so" \
        "$py" "$PROG" "$RT" idle > "$work/$n-idle.out" 2> "$work/$n-idle.err" &
      local pid=$! i seen=""
      sleep 0.6
      for i in 1 2 3 4 5; do
        seen+=" $(ps -L -o cls=,comm= -p "$pid" 2> /dev/null | awk '$2 == "slack-writer" {print $1}')"
        sleep 0.1
      done
      wait "$pid"
      grep -qx "done idle" "$work/$n-idle.out" || echo "output-changed"
      tr ' ' '\n' <<< "$seen" | grep . | sort | uniq -c | sort -rn | awk 'NR == 1 && $1 >= 3 {print $2}'
    }
    [ "$(wcls)" = TS ] && ok || bad "$n: default writer not a normal thread while it sleeps: $(wcls)"
    [ "$(wcls SLACK_WRITER_SCHED=batch-all)" = B ] && ok || bad "$n: batch-all writer not SCHED_BATCH: $(wcls SLACK_WRITER_SCHED=batch-all)"
    [ "$(wcls SLACK_PY_SAMPLE_MS=0)" = B ] && ok || bad "$n: writer without samples not SCHED_BATCH: $(wcls SLACK_PY_SAMPLE_MS=0)"
    run "$py" "$n-nosample" loader SLACK_PY_SAMPLE_MS=0 || continue
    [ "$(grep -c '^sample' "$work/$n-nosample.dump")" = 0 ] && ok || bad "$n: SLACK_PY_SAMPLE_MS=0 still sampled"
  fi
done
# a CPython whose layout slack does not know: said once, the program unchanged, no frames
for old in /root/.pyenv/versions/3.[6-9]*/bin/python3 $(command -v python3.9 python3.8 2> /dev/null); do
  [ -x "$old" ] || continue
  v=$("$old" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  run "$old" old plain || break
  [ "$(grep -c "slack: Python $v: this version's frame layout is not known to slack; call sites keep native frames only" "$work/old.err")" = 1 ] &&
    ! grep -q pystack= "$work/old.dump" && ok || bad "Python $v: not said once, or frames recorded: $(cat "$work/old.err")"
  break
done
# ---- the H200 traces (scripts/gpu-callsites.sh): each cause's top site names its line ----
if out=$(python3 scripts/callsites_check.py "$SLACK" tests/data/callsites 2>&1); then ok; else
  bad "H200 traces: a top site misses its line:"$'\n'"$out"
fi
"$SLACK" timeline -o "$work/tl.json" tests/data/callsites/serialization-broken.slk 2> /dev/null
python3 - "$work/tl.json" <<'PY' && ok || bad "timeline: host calls without their Python frames or with mangled call sites"
import json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
host = [e for e in ev if e.get("cat") == "host"]
py = [e for e in host if "serialization.py:" in e.get("args", {}).get("python", "")]
assert py, "no host call names serialization.py"
assert not any("_ZN" in e.get("args", {}).get("callsite", "") for e in host), "mangled"
PY
# bad value: said once, the default used
run "${pys[0]}" bad plain SLACK_STACKS=everything
[ "$(grep -c 'ignoring SLACK_STACKS=everything (want one of off|sync|all); using all' "$work/bad.err")" = 1 ] && ok || bad "SLACK_STACKS=everything not said once: $(cat "$work/bad.err")"
finish

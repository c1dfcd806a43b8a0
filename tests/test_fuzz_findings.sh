#!/usr/bin/env bash
# The findings of issue 18 and of the fuzzers (docs/RELIABILITY.md), each checked on the slack
# command as a user runs it:
#   - `slack timeline` on a trace whose kernel names string id 0xfffffff0 stays small (it
#     zero-filled id-indexed caches of 4-32 GiB) and writes valid JSON;
#   - the reader does not reserve a chunk's declared payload (up to 1 GiB) before checking the
#     file's length, nor a raw buffer larger than the frame can hold;
#   - `slack import nsys X -o OUT` never follows, overwrites or truncates a symbolic link planted
#     at OUT.tmp, whether the import succeeds or fails;
#   - `slack import` and the trace commands refuse a FIFO at once instead of blocking forever;
#   - the inputs that gave UBSan reports (classifier times past 2^63, a STRING record without
#     bytes, shared memory sizes that overflow, an import without GPU work) run clean: in a
#     sanitized build (make SAN=address,undefined test) any "runtime error" fails the test.
# Run from the repository root; BUILD = build folder.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
SLACK=$BUILD/slack
[ -x "$SLACK" ] || make -s BUILD="$BUILD" "$SLACK" > /dev/null || exit 1
command -v python3 > /dev/null || { echo "fuzz-findings: python3 not found"; exit 1; }
REG=tests/fuzz/regressions
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
TEST_NAME=fuzz-findings
. tests/tools/harness.sh
export UBSAN_OPTIONS=print_stacktrace=1:suppressions=$PWD/tests/fuzz/ubsan.supp

# run NAME MAX_RSS_MB CMD...: exit status of CMD; stdout and stderr in $work/NAME.{out,err}; the
# child's peak RSS in MB in $work/NAME.rss (getrusage: needs no /usr/bin/time)
run() {
  local name=$1 max=$2
  shift 2
  python3 - "$work/$name" "$@" << 'EOF'
import resource, subprocess, sys
base, cmd = sys.argv[1], sys.argv[2:]
with open(base + ".out", "wb") as o, open(base + ".err", "wb") as e:
    rc = subprocess.run(cmd, stdout=o, stderr=e, stdin=subprocess.DEVNULL, timeout=60).returncode
open(base + ".rss", "w").write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024))
sys.exit(rc if rc >= 0 else 128 - rc)
EOF
  local rc=$? rss
  rss=$(cat "$work/$name.rss" 2> /dev/null || echo 0)
  if [ "$rss" -gt "$max" ]; then bad "$name: peak RSS ${rss} MB, at most $max MB expected"; fi
  if grep -q "runtime error:" "$work/$name.err"; then
    bad "$name: $(grep -m1 'runtime error:' "$work/$name.err")"
  fi
  return $rc
}

valid_json() { # silent when FILE is valid JSON (UTF-8), else the reason, exit 1
  python3 -c '
import json, sys
try:
    json.load(open(sys.argv[1], encoding="utf-8"))
except Exception as e:
    sys.exit(str(e))' "$1" 2>&1
}

# ---- timeline: id-indexed caches bounded by the strings defined ----
t=$REG/commands/timeline-string-id-0xfffffff0.slk
if run tl-huge-id 200 "$SLACK" timeline "$t" -o "$work/huge-id.json"; then
  ok
  msg=$(valid_json "$work/huge-id.json") && ok || bad "timeline of $t: invalid JSON: $msg"
else
  bad "timeline of $t: exit $?: $(cat "$work/tl-huge-id.err")"
fi
t=$REG/commands/timeline-string-used-before-defined.slk
if run tl-before-defined 200 "$SLACK" timeline "$t" -o "$work/before.json"; then
  msg=$(valid_json "$work/before.json") && ok || bad "timeline of $t: invalid JSON: $msg"
else
  bad "timeline of $t: exit $?"
fi

# ---- reader: lengths checked before buffers are reserved ----
# Without a sanitizer, a limit on address space shows a reservation that would not be touched
# (and so would not show in the RSS): 1 GiB cannot be had under 512 MiB. ASan reserves terabytes
# of address space and cannot run under such a limit: there the RSS limit alone checks.
limit_as=""
if ! ldd "$SLACK" 2> /dev/null | grep -q 'lib[at]san'; then limit_as="ulimit -v 524288;"; fi
for pair in "payload-len-past-end-of-file:truncated chunk payload" \
  "raw-len-past-frame-bound:bad zstd frame"; do
  name=${pair%%:*} reason=${pair#*:}
  t=$REG/reader/$name.slk
  for cmd in info dump stats; do
    run "rd-$name-$cmd" 200 bash -c "$limit_as exec \"\$0\" $cmd \"\$1\"" "$SLACK" "$t"
    rc=$?
    if [ $rc -ne 0 ]; then
      bad "slack $cmd $t: exit $rc: $(head -c 300 "$work/rd-$name-$cmd.err")"
    elif ! cat "$work/rd-$name-$cmd".{out,err} | grep -q "($reason at offset"; then
      bad "slack $cmd $t: not '$reason': $(head -c 300 "$work/rd-$name-$cmd.err")"
    else
      ok
    fi
  done
done

# ---- UBSan findings: the inputs run clean (checked by run() in a sanitized build) ----
for t in $REG/commands/*.slk $REG/reader/*.slk; do
  n=$(basename "$t" .slk)
  run "ub-report-$n" 400 "$SLACK" report --json "$t" && ok || bad "slack report --json $t: exit $?"
  run "ub-report-text-$n" 400 "$SLACK" report "$t" && ok || bad "slack report $t: exit $?"
  run "ub-timeline-$n" 400 "$SLACK" timeline "$t" -o "$work/$n.json" && ok ||
    bad "slack timeline $t: exit $?"
done

# ---- a FIFO is refused at once ----
mkfifo "$work/fifo"
fifo_check() { # fifo_check ARGS...: `slack ARGS` ends at once with "not a regular file"
  local out rc
  out=$(timeout 10 "$SLACK" "$@" 2>&1)
  rc=$?
  if [ $rc -eq 124 ]; then
    bad "slack $1 on a FIFO blocked (killed after 10 s)"
  elif [ $rc -ne 1 ] || ! grep -q "not a regular file" <<< "$out"; then
    bad "slack $1 on a FIFO: exit $rc: $out"
  else
    ok
  fi
}
fifo_check info "$work/fifo"
fifo_check dump "$work/fifo"
fifo_check stats "$work/fifo"
fifo_check report "$work/fifo"
fifo_check timeline "$work/fifo" -o "$work/fifo.json"
if "$SLACK" --version --build-options | grep -q 'sqlite: yes'; then
  fifo_check import nsys "$work/fifo" -o "$work/fifo-out.slk"
fi

# ---- import: the temporary file is never a planted link ----
if "$SLACK" --version --build-options | grep -q 'sqlite: yes'; then
  FIXTURE=tests/data/nsys-small.sqlite
  echo "precious" > "$work/victim"
  ln -s "$work/victim" "$work/out.slk.tmp"
  "$SLACK" import nsys "$FIXTURE" -o "$work/out.slk" > /dev/null 2>&1 && ok ||
    bad "import with a link planted at OUT.tmp failed"
  [ "$(cat "$work/victim")" = precious ] && ok || bad "import wrote through the link at OUT.tmp"
  [ -L "$work/out.slk.tmp" ] && ok || bad "import removed or replaced the planted link"
  [ -f "$work/out.slk" ] && [ ! -L "$work/out.slk" ] && ok || bad "no trace at OUT"
  if ls "$work"/out.slk.tmp.* > /dev/null 2>&1; then
    bad "a temporary file was left behind"
  else
    ok
  fi
  # a failed import (not an SQLite file) neither truncates the link's target
  echo "not sqlite" > "$work/junk.sqlite"
  ln -s "$work/victim" "$work/out2.slk.tmp"
  "$SLACK" import nsys "$work/junk.sqlite" -o "$work/out2.slk" > /dev/null 2>&1 &&
    bad "import of a junk file succeeded" || ok
  [ "$(cat "$work/victim")" = precious ] && ok || bad "a failed import truncated the link's target"
  [ ! -e "$work/out2.slk" ] && ok || bad "a failed import left OUT"
  # OUT itself a link: replaced by the trace, its target untouched
  ln -s "$work/victim" "$work/out3.slk"
  "$SLACK" import nsys "$FIXTURE" -o "$work/out3.slk" > /dev/null 2>&1 && ok ||
    bad "import to a link"
  [ "$(cat "$work/victim")" = precious ] && [ -f "$work/out3.slk" ] && [ ! -L "$work/out3.slk" ] &&
    ok || bad "import wrote through a link at OUT"
  # private, as libslack's own traces (they hold command lines and symbols), whatever the umask
  mode=$(umask 022 && "$SLACK" import nsys "$FIXTURE" -o "$work/out4.slk" > /dev/null 2>&1 &&
    stat -c %a "$work/out4.slk")
  [ "$mode" = 600 ] && ok || bad "imported trace has mode $mode, 600 expected"

  # UBSan findings of the import: shared memory sizes that overflow, no GPU work at all
  python3 - "$work" << 'EOF' || bad "cannot write the import cases"
import sqlite3, sys
w = sys.argv[1]
db = sqlite3.connect(w + "/shmem.sqlite")
db.executescript("""
CREATE TABLE StringIds (id, value);
INSERT INTO StringIds VALUES (1, 'k'), (2, 'cudaLaunchKernel');
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId,
  nameId, returnValue);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (100, 200, 0, 16777221, 1, 2, 0);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid,
  demangledName, gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory,
  dynamicSharedMemory, registersPerThread);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (150, 300, 0, 7, 1, 16777216, 1, 1, 1, 1, 1, 1, 1,
  9223372036854775807, 9223372036854775807, 32);
""")
db.commit()
db = sqlite3.connect(w + "/nogpu.sqlite")
db.executescript("""
CREATE TABLE StringIds (id, value);
INSERT INTO StringIds VALUES (2, 'cudaDeviceSynchronize');
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId,
  nameId, returnValue);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (100, 200, 0, 16777221, 1, 2, 0);
""")
db.commit()
EOF
  if run imp-shmem 400 "$SLACK" import nsys "$work/shmem.sqlite" -o "$work/shmem.slk"; then
    "$SLACK" dump --kind kernel "$work/shmem.slk" 2> /dev/null | grep -q 'shmem=4294967295' && ok ||
      bad "shared memory past 4 GiB not saturated: $("$SLACK" dump --kind kernel "$work/shmem.slk")"
  else
    bad "import of overflowing shared memory sizes: exit $?: $(cat "$work/imp-shmem.err")"
  fi
  run imp-nogpu 400 "$SLACK" import nsys "$work/nogpu.sqlite" -o "$work/nogpu.slk" && ok ||
    bad "import without GPU work: exit $?: $(cat "$work/imp-nogpu.err")"
fi
finish

#!/usr/bin/env bash
# slack import nsys: the committed fixture tests/data/nsys-small.sqlite (cut from the shared nsys
# 2025.3 sample by tests/tools/make_nsys_fixture.py) is imported, and the trace holds what the
# SQLite holds: the counts, and `slack stats --format csv` totals equal to the SQLite's own sums
# (SELECT count(*), sum(end - start), sum(bytes)). Then the errors: missing, unknown and damaged
# tables and columns give a clear message and exit 1, never a crash, and leave no output file.
# A slack built without SQLite must say so. Run from the repository root; BUILD = build folder.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
SLACK=$BUILD/slack
[ -x "$SLACK" ] || make -s BUILD="$BUILD" "$SLACK" > /dev/null || exit 1
FIXTURE=$PWD/tests/data/nsys-small.sqlite
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
TEST_NAME=import
. tests/tools/harness.sh

expect help 0 'usage: slack import nsys' -- "$SLACK" import --help
if "$SLACK" --version --build-options | grep -q 'sqlite: no'; then
  expect no-sqlite 1 'built without SQLite support' -- "$SLACK" import nsys "$FIXTURE" -o "$work/x.slk"
  echo "import: this slack is built without SQLite (no sqlite3.h): only that message is tested"
  finish
fi
command -v python3 > /dev/null || { bad "python3 not found"; finish; }

# ---- the fixture ----
out=$("$SLACK" import nsys "$FIXTURE" -o "$work/small.slk" 2> "$work/err")
rc=$?
[ $rc -eq 0 ] && [ -s "$work/small.slk" ] && ok || bad "import of the fixture: exit $rc: $(cat "$work/err")"
[ ! -e "$work/small.slk.tmp" ] && ok || bad "temporary file left behind"
python3 tests/tools/nsys_stats_ref.py "$FIXTURE" --totals > "$work/totals.json" || bad "reference totals"
"$SLACK" info --json "$work/small.slk" > "$work/info.json" 2>&1 || bad "slack info on the import"
for r in cuda_api_sum cuda_gpu_kern_sum cuda_gpu_mem_time_sum cuda_gpu_mem_size_sum; do
  "$SLACK" stats --report $r --format csv "$work/small.slk" 2> /dev/null |
    sed -n '/^[A-Z]/,$p' > "$work/$r.csv"
done
python3 - "$work" "$out" << 'EOF' && ok || bad "counts and sums (above)"
import csv, json, re, sys
work, line = sys.argv[1], sys.argv[2]
t = json.load(open(work + "/totals.json"))
errs = []
def check(what, got, want):
    if got != want:
        errs.append("%s: slack %s, SQLite %s" % (what, got, want))
# the summary line of slack import
for key, word in [("kernels", "kernels"), ("memcpys", "memcpys"), ("memsets", "memsets"),
                  ("syncs", "syncs"), ("api_calls", "API calls")]:
    m = re.search(r"(\d+) " + word, line)
    check("import says " + word, int(m.group(1)) if m else None, t[key]["count"])
def rows(r):
    return list(csv.DictReader(open("%s/%s.csv" % (work, r))))
k = rows("cuda_gpu_kern_sum")
check("kernels", sum(int(x["Instances"]) for x in k), t["kernels"]["count"])
check("kernel ns", sum(int(x["Total Time (ns)"]) for x in k), t["kernels"]["ns"])
a = rows("cuda_api_sum")
check("API calls", sum(int(x["Num Calls"]) for x in a), t["api_calls"]["count"])
check("API ns", sum(int(x["Total Time (ns)"]) for x in a), t["api_calls"]["ns"])
m = rows("cuda_gpu_mem_time_sum")
cp = [x for x in m if x["Operation"].startswith("[CUDA memcpy")]
ms = [x for x in m if x["Operation"] == "[CUDA memset]"]
check("memcpys", sum(int(x["Count"]) for x in cp), t["memcpys"]["count"])
check("memcpy ns", sum(int(x["Total Time (ns)"]) for x in cp), t["memcpys"]["ns"])
check("memsets", sum(int(x["Count"]) for x in ms), t["memsets"]["count"])
check("memset ns", sum(int(x["Total Time (ns)"]) for x in ms), t["memsets"]["ns"])
s = rows("cuda_gpu_mem_size_sum")
for what, sel, key in [("memcpy", lambda o: o.startswith("[CUDA memcpy"), "memcpys"),
                       ("memset", lambda o: o == "[CUDA memset]", "memsets")]:
    mb = sum(float(x["Total (MB)"]) for x in s if sel(x["Operation"]))
    n = sum(1 for x in s if sel(x["Operation"]))
    if abs(mb - t[key]["bytes"] / 1e6) > 0.0005 * max(n, 1):
        errs.append("%s MB: slack %.3f, SQLite %.6f" % (what, mb, t[key]["bytes"] / 1e6))
info = json.load(open(work + "/info.json"))
print("import: fixture: %d kernels, %d memcpys, %d memsets, %d API calls; kernel time %d ns, "
      "copies %d bytes (slack stats totals = SQLite sums)" % (
          t["kernels"]["count"], t["memcpys"]["count"], t["memsets"]["count"],
          t["api_calls"]["count"], t["kernels"]["ns"], t["memcpys"]["bytes"]))
for e in errs:
    print("import: " + e)
sys.exit(1 if errs else 0)
EOF
expect header 0 'nsys-sqlite' -- "$SLACK" info "$work/small.slk"
expect report 0 'GPU 0' -- "$SLACK" report "$work/small.slk"
expect timeline 0 '' -- "$SLACK" timeline "$work/small.slk" -o "$work/small.json"
expect timeline-json 0 'check_timeline' -- python3 tests/tools/check_timeline.py "$work/small.json"

# --pid: the traced process, or nobody
pid=$("$SLACK" info "$work/small.slk" | awk '$1 == "pid" {print $2}')
expect pid-same 0 ' 2000 kernels' -- "$SLACK" import nsys "$FIXTURE" -o "$work/p.slk" --pid "$pid"
expect pid-other 0 ' 0 kernels' -- "$SLACK" import nsys "$FIXTURE" -o "$work/q.slk" --pid 1

# ---- NVTX ranges, as nsys 2025.3 writes them (the sample has none): a copy with some ----
cp "$FIXTURE" "$work/nvtx.sqlite"
python3 - "$work/nvtx.sqlite" << 'EOF' || bad "cannot add NVTX rows"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("""CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER
    NOT NULL, rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
    endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER,
    int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER,
    floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT)""")
gtid, t0 = db.execute("SELECT globalTid, min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
sid = db.execute("SELECT max(id) + 1 FROM StringIds").fetchone()[0]
db.execute("INSERT INTO StringIds VALUES (?, 'forward')", (sid,))
rows = [(t0 + i * 1000000, t0 + i * 1000000 + 500000, 59, "step %d" % i, None) for i in range(5)]
rows += [(t0 + 100, t0 + 200, 60, None, sid),      # start/end range named by a string id
         (t0 + 300, None, 34, "a mark", None)]      # a mark: not a range
for s, e, typ, text, tid in rows:
    db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, textId, globalTid) "
               "VALUES (?, ?, ?, ?, ?, ?)", (s, e, typ, text, tid, gtid))
db.commit()
EOF
expect nvtx 0 ' 6 NVTX ranges' -- "$SLACK" import nsys "$work/nvtx.sqlite" -o "$work/nvtx.slk"
expect nvtx-names 0 'name="forward"' -- "$SLACK" dump --kind marker "$work/nvtx.slk"

# ---- errors ----
expect no-args 2 'usage' -- "$SLACK" import
expect no-output 2 'no output file' -- "$SLACK" import nsys "$FIXTURE"
expect bad-format 2 "unknown format 'perf'" -- "$SLACK" import perf "$FIXTURE" -o "$work/x.slk"
expect bad-option 2 "unknown option '--frobnicate'" -- "$SLACK" import nsys "$FIXTURE" --frobnicate
expect missing 1 'cannot open .*No such file' -- "$SLACK" import nsys "$work/none.sqlite" -o "$work/x.slk"
echo "not a database" > "$work/text.sqlite"
expect not-sqlite 1 'not a database' -- "$SLACK" import nsys "$work/text.sqlite" -o "$work/x.slk"
head -c 20000 "$FIXTURE" > "$work/cut.sqlite"
expect cut-sqlite 1 'slack import: ' -- "$SLACK" import nsys "$work/cut.sqlite" -o "$work/x.slk"
python3 - "$work" "$FIXTURE" << 'EOF' || bad "cannot make the broken exports"
import shutil, sqlite3, sys
w, fx = sys.argv[1], sys.argv[2]
db = sqlite3.connect(w + "/empty.sqlite")
db.execute("CREATE TABLE Unrelated (x INTEGER)")
db.commit()
# the kernel table of another schema: no streamId
shutil.copy(fx, w + "/nostream.sqlite")
db = sqlite3.connect(w + "/nostream.sqlite")
db.execute("ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN streamId")
db.commit()
# kernels only: the other tables missing, as nsys leaves out what it saw none of
shutil.copy(fx, w + "/kernels.sqlite")
db = sqlite3.connect(w + "/kernels.sqlite")
for t in ["CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME",
          "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "StringIds", "TARGET_INFO_GPU", "ThreadNames"]:
    db.execute("DROP TABLE " + t)
db.commit()
# names of another type, NULLs where nsys writes numbers
shutil.copy(fx, w + "/nulls.sqlite")
db = sqlite3.connect(w + "/nulls.sqlite")
db.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = NULL, graphNodeId = NULL "
           "WHERE rowid % 2 = 0")
db.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = 'text' WHERE rowid % 3 = 0")
db.execute("UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET srcKind = NULL, dstKind = 99")
db.execute("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = -5 WHERE rowid % 7 = 0")
db.commit()
EOF
expect no-cuda-tables 1 'no CUDA activity tables' -- "$SLACK" import nsys "$work/empty.sqlite" -o "$work/e.slk"
[ ! -e "$work/e.slk" ] && [ ! -e "$work/e.slk.tmp" ] && ok || bad "a failed import left a file"
expect no-column 1 "CUPTI_ACTIVITY_KIND_KERNEL has no column 'streamId'" -- \
  "$SLACK" import nsys "$work/nostream.sqlite" -o "$work/n.slk"
[ ! -e "$work/n.slk" ] && ok || bad "a failed import left a file"
expect kernels-only 0 ' 2000 kernels, 0 memcpys' -- "$SLACK" import nsys "$work/kernels.sqlite" -o "$work/k.slk"
expect kernels-only-notes 0 'has no CUPTI_ACTIVITY_KIND_MEMCPY table' -- \
  "$SLACK" import nsys "$work/kernels.sqlite" -o "$work/k.slk"
expect kernels-only-stats 0 'nsys string' -- "$SLACK" stats --report cuda_gpu_kern_sum "$work/k.slk"
expect nulls 0 ' 2000 kernels' -- "$SLACK" import nsys "$work/nulls.sqlite" -o "$work/u.slk"
expect nulls-notes 0 'API calls name functions this slack has no CUPTI id for' -- \
  "$SLACK" import nsys "$work/nulls.sqlite" -o "$work/u.slk"
expect unwritable 1 'cannot write' -- "$SLACK" import nsys "$FIXTURE" -o "$work/no/such/dir/x.slk"
finish

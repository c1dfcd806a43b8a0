#!/usr/bin/env bash
# slack stats: the four reports equal, byte for byte as CSV, what nsys's definitions give
# (tests/tools/nsys_stats_ref.py: the reports' SQL, median, sample standard deviation, SQLite's
# round()), on
#   - the nsys fixture tests/data/nsys-small.sqlite, imported (when this slack has SQLite),
#   - slack traces: the H200 traces in tests/data and a synthetic one (tests/tools/gen_trace),
#     turned into nsys-like tables from `slack dump` by tests/tools/dump_to_nsys.py;
# the table layout against the CSV; and the errors. Run from the repository root.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
SLACK=$BUILD/slack
GEN=$BUILD/tools/gen_trace
[ -x "$SLACK" ] && [ -x "$GEN" ] || make -s BUILD="$BUILD" "$SLACK" "$GEN" > /dev/null || exit 1
command -v python3 > /dev/null || { echo "stats: FAIL: python3 not found"; exit 1; }
REPORTS="cuda_api_sum cuda_gpu_kern_sum cuda_gpu_mem_time_sum cuda_gpu_mem_size_sum"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
TEST_NAME=stats
. tests/tools/harness.sh
# same_as_ref NAME TRACE SQLITE [STATS OPTIONS]: every report of TRACE equals the reference's
same_as_ref() {
  local name=$1 trace=$2 db=$3 r rows=0
  shift 3
  for r in $REPORTS; do
    python3 tests/tools/nsys_stats_ref.py "$db" $r > "$work/ref.csv" || { bad "$name: reference $r"; continue; }
    if ! "$SLACK" stats "$@" --report $r --format csv --output "$work/out" "$trace" 2> "$work/err"; then
      bad "$name: slack stats --report $r failed: $(cat "$work/err")"
    elif ! cmp -s "$work/ref.csv" "$work/out_$r.csv"; then
      bad "$name: $r differs from nsys's definition ('<' reference, '>' slack):"
      diff "$work/ref.csv" "$work/out_$r.csv" | head -8
    else
      rows=$((rows + $(wc -l < "$work/ref.csv") - 1))
      ok
    fi
  done
  echo "stats: $name: 4 reports, $rows rows, identical to the reference"
}

# ---- an nsys export, imported ----
if "$SLACK" --version --build-options | grep -q 'sqlite: yes'; then
  "$SLACK" import nsys tests/data/nsys-small.sqlite -o "$work/small.slk" > /dev/null 2>&1 ||
    bad "import of tests/data/nsys-small.sqlite"
  same_as_ref "nsys fixture" "$work/small.slk" tests/data/nsys-small.sqlite
  expect note-api 0 'cuda_api_sum from [0-9]+ CUPTI API records' -- \
    "$SLACK" stats --report cuda_api_sum "$work/small.slk"
else
  echo "stats: this slack has no SQLite: the imported fixture is not tested"
fi

# ---- slack traces ----
"$GEN" "$work/gen.slk" --events 60000 --threads 3 --devices 2 --streams 3 > /dev/null || bad "gen_trace"
for t in "$work/gen.slk" tests/data/probe-h200.slk tests/data/probe-loader-h200.slk; do
  [ -f "$t" ] || continue
  python3 tests/tools/dump_to_nsys.py "$SLACK" "$t" "$work/d.sqlite" || { bad "dump_to_nsys $t"; continue; }
  same_as_ref "$(basename "$t")" "$t" "$work/d.sqlite" --mangled
done
expect note-host 0 'cuda_api_sum from [0-9]+ host calls seen by slack' -- \
  "$SLACK" stats --report cuda_api_sum "$work/gen.slk"
# demangled by default (CUPTI records mangled names), as recorded with --mangled
expect demangled 0 'at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>' -- \
  "$SLACK" stats --report cuda_gpu_kern_sum "$work/gen.slk"
expect mangled 0 '_ZN2at6native29vectorized_elementwise_kernel' -- \
  "$SLACK" stats --report cuda_gpu_kern_sum --mangled "$work/gen.slk"

# ---- the table: nsys's layout, the same numbers as the CSV ----
"$SLACK" stats "$work/gen.slk" > "$work/all.txt" 2> /dev/null || bad "slack stats (all reports)"
order=$(grep -oE '^ \*\* .*\((cuda_[a-z_]+)\):$' "$work/all.txt" | grep -oE 'cuda_[a-z_]+' | tr '\n' ' ')
[ "$order" = "$REPORTS " ] && ok || bad "reports in the order '$order'"
for r in $REPORTS; do
  "$SLACK" stats --report $r "$work/gen.slk" > "$work/$r.txt" 2> /dev/null
  "$SLACK" stats --report $r --format csv "$work/gen.slk" 2> /dev/null | sed -n '/^[A-Z]/,$p' > "$work/$r.csv"
  python3 - "$work/$r.txt" "$work/$r.csv" << 'EOF' && ok || bad "$r: table layout (above)"
import csv, re, sys
lines = [l.rstrip("\n") for l in open(sys.argv[1])]
rows = [r for r in csv.reader(open(sys.argv[2])) if r]
i = next(k for k, l in enumerate(lines) if l.startswith(" --"))
head, sep, body = lines[i - 1], lines[i], [l for l in lines[i + 1:] if l.strip()]
widths = [len(d) for d in sep[1:].split("  ")]
errs = []
if len(widths) != len(rows[0]):
    errs.append("%d columns, CSV has %d" % (len(widths), len(rows[0])))
def cells(line):  # cut at the columns of the separator line
    out, pos = [], 1
    for w in widths:
        out.append(line[pos:pos + w])
        pos += w + 2
    return out
for h, want in zip(cells(head), rows[0]):
    pad = len(h) - len(want)
    if h != " " * (pad // 2) + want + " " * (pad - pad // 2):
        errs.append("header %r is not %r centered" % (h, want))
if len(body) != len(rows) - 1:
    errs.append("%d table rows, %d CSV rows" % (len(body), len(rows) - 1))
for line, row in zip(body, rows[1:]):
    if len(line) != len(sep):
        errs.append("row width %d, separator %d" % (len(line), len(sep)))
    for c, want in zip(cells(line), row):
        if re.fullmatch(r"[0-9.,-]+", want):  # numbers: right-aligned, thousands separated
            if c.lstrip() != re.sub(r"(\d)(?=(\d{3})+(?!\d))", r"\1,", want) or c != c.rjust(len(c)):
                errs.append("number %r for %r" % (c, want))
        elif c.rstrip() != want:  # names: left-aligned
            errs.append("name %r for %r" % (c, want))
for e in errs[:5]:
    print("stats:", sys.argv[1], e)
sys.exit(1 if errs else 0)
EOF
done

# ---- an empty trace (a header and no records), --output, errors ----
body_len=$(od -An -tu4 -j12 -N4 "$work/gen.slk" | tr -d ' ')
head -c $((16 + body_len)) "$work/gen.slk" > "$work/empty.slk"
expect empty 0 'SKIPPED: .*empty.slk does not contain CUDA kernel data' -- "$SLACK" stats "$work/empty.slk"
expect output 0 '' -- "$SLACK" stats --format csv --output "$work/pre" "$work/gen.slk"
for r in $REPORTS; do [ -s "$work/pre_$r.csv" ] && ok || bad "--output did not write pre_$r.csv"; done
expect help 0 'usage: slack stats' -- "$SLACK" stats --help
expect help-cmd 0 'usage: slack stats' -- "$SLACK" help stats
expect no-file 2 'no trace file' -- "$SLACK" stats
expect two-files 2 'one trace file' -- "$SLACK" stats "$work/gen.slk" "$work/gen.slk"
expect bad-report 2 "unknown report 'cuda_gpu_trace'" -- "$SLACK" stats --report cuda_gpu_trace "$work/gen.slk"
expect bad-format 2 "unknown format 'json'" -- "$SLACK" stats --format json "$work/gen.slk"
expect bad-option 2 "unknown option '--bogus'" -- "$SLACK" stats --bogus "$work/gen.slk"
expect missing 1 'cannot open' -- "$SLACK" stats "$work/none.slk"
echo "hello" > "$work/junk.txt"
expect junk 1 'cannot open' -- "$SLACK" stats "$work/junk.txt"
expect unwritable 1 'cannot write' -- "$SLACK" stats --output "$work/no/dir/x" "$work/gen.slk"
head -c $(($(stat -c %s "$work/gen.slk") - 100)) "$work/gen.slk" > "$work/cut.slk"
expect cut 0 'unreadable' -- "$SLACK" stats --report cuda_gpu_kern_sum "$work/cut.slk"

finish

#!/usr/bin/env bash
# Where and how the trace is written, through the stand-in cudart (tests/progs/chain.c):
# SLACK_OUTPUT made like `slack record -o` (missing parents too, 0700), the file private (0600),
# header values that cannot forge header lines (a newline in RANK), a SLACK_OUTPUT that cannot be
# made said once with the program unchanged, and bad values of the newer variables said once.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
SLACK=$BUILD/slack
make -s BUILD="$BUILD" "$BUILD/libslack.so" "$SLACK" "$BUILD/progs/chain" > /dev/null || exit 1
TEST_NAME=output
. tests/tools/harness.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
LIB=$PWD/$BUILD/libslack.so
prog() { env "$@" LD_PRELOAD="$LIB" "$BUILD/progs/chain" 100 > "$work/out" 2> "$work/err"; }

# a missing directory, two levels deep, is made; the trace is 0600, the new directories 0700
prog SLACK_OUTPUT="$work/a/b" RANK=$'7\nhost=forged'
[ "$(cat "$work/out")" = "chain 2 0" ] && ok || bad "stdout changed: $(cat "$work/out")"
f=$(ls "$work"/a/b/*.slk 2> /dev/null | head -1)
if [ -z "$f" ]; then
  bad "no trace in a SLACK_OUTPUT that did not exist: $(cat "$work/err")"
else
  [ "$(stat -c %a "$f")" = 600 ] && ok || bad "trace mode $(stat -c %a "$f"), want 600"
  [ "$(stat -c %a "$work/a")" = 700 ] && [ "$(stat -c %a "$work/a/b")" = 700 ] && ok ||
    bad "made directories $(stat -c %a "$work/a") $(stat -c %a "$work/a/b"), want 700"
  info=$("$SLACK" info "$f")
  grep -qE '^  rank +7\?host=forged$' <<< "$info" && ok || bad "RANK's newline not cleaned: $(grep -i rank <<< "$info")"
  grep -qE '^  host +forged' <<< "$info" && bad "RANK forged a host line" || ok
fi
# a torchrun rank: its rank in the file name, local rank, world size and job id in the header
prog SLACK_OUTPUT="$work/r" RANK=3 LOCAL_RANK=1 WORLD_SIZE=8 TORCHELASTIC_RUN_ID=none \
  MASTER_ADDR=node7 MASTER_PORT=29500
f=$(ls "$work"/r/slack-*-rank3-*.slk 2> /dev/null | head -1)
if [ -z "$f" ]; then
  bad "RANK=3: no slack-HOST-rank3-PID.slk: $(ls "$work/r")"
else
  info=$("$SLACK" info "$f")
  grep -qE '^  local_rank +1$' <<< "$info" && grep -qE '^  world_size +8$' <<< "$info" && ok ||
    bad "local_rank, world_size: $(grep -E 'rank|world' <<< "$info")"
  grep -qE '^  job_id +node7:29500$' <<< "$info" && ok ||
    bad "job_id not MASTER_ADDR:MASTER_PORT (run id none): $(grep job <<< "$info")"
fi
# Slurm: SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS, the job and its step; a rank that is not a
# number stays out of the file name
prog SLACK_OUTPUT="$work/s" SLURM_PROCID=5 SLURM_LOCALID=0 SLURM_NTASKS=16 SLURM_JOB_ID=991 \
  SLURM_STEP_ID=2
f=$(ls "$work"/s/slack-*-rank5-*.slk 2> /dev/null | head -1)
[ -n "$f" ] && grep -qE '^  job_id +991\.2$' <<< "$("$SLACK" info "$f")" &&
  grep -qE '^  world_size +16$' <<< "$("$SLACK" info "$f")" && ok ||
  bad "Slurm identity: $(ls "$work/s"; "$SLACK" info "$work"/s/*.slk | grep -E 'rank|job|world')"
prog SLACK_OUTPUT="$work/n" RANK=a/b
[ "$(ls "$work"/n/*rank* 2> /dev/null)" = "" ] && [ "$(ls "$work"/n/*.slk | wc -l)" = 1 ] && ok ||
  bad "RANK=a/b: $(ls "$work/n")"
# the umask is honoured on top: 0600 stays 0600 under 022, and 077 keeps it private too
(umask 077 && prog SLACK_OUTPUT="$work/u")
[ "$(stat -c %a "$work"/u/*.slk)" = 600 ] && ok || bad "umask 077: mode $(stat -c %a "$work"/u/*.slk)"
# an output that cannot be made: said once, the program runs unchanged
: > "$work/file"
prog SLACK_OUTPUT="$work/file/sub"
[ "$(cat "$work/out")" = "chain 2 0" ] && ok || bad "stdout changed when the output cannot be made"
[ "$(grep -c "cannot create a trace in $work/file/sub" "$work/err")" = 1 ] && ok ||
  bad "unmakeable output not said once: $(cat "$work/err")"
# bad values of SLACK_PY_SAMPLE_MS and SLACK_STACKS: said once each, defaults used
prog SLACK_OUTPUT="$work/v" SLACK_PY_SAMPLE_MS=often SLACK_STACKS=some
[ "$(grep -c 'ignoring SLACK_PY_SAMPLE_MS=often (want an integer in 0..60000); using 10' "$work/err")" = 1 ] &&
  [ "$(grep -c 'ignoring SLACK_STACKS=some (want one of off|sync|all); using all' "$work/err")" = 1 ] && ok ||
  bad "bad values not said once: $(cat "$work/err")"
"$SLACK" info "$work"/v/*.slk | grep -qE 'setting.SLACK_PY_SAMPLE_MS +10$' && ok || bad "SLACK_PY_SAMPLE_MS default not used"
prog SLACK_OUTPUT="$work/w" SLACK_PY_SAMPLE_MS=60001
grep -q 'ignoring SLACK_PY_SAMPLE_MS=60001' "$work/err" && ok || bad "SLACK_PY_SAMPLE_MS out of range not said"
# SLACK_WRITER_SCHED: the writer thread's policy while the program runs (ps: B = SCHED_BATCH,
# TS = normal; NI its nice); a bad value said once, the default (batch) used
make -s BUILD="$BUILD" "$BUILD/progs/killed" > /dev/null || exit 1
writer_cls() { # SCHED PAUSE: "CLS NI" of the slack-writer thread during killed's pause
  env ${1:+SLACK_WRITER_SCHED=$1} SLACK_OUTPUT="$work/ws" KILLED_PAUSE_MS=1500 LD_PRELOAD="$LIB" \
    "$BUILD/progs/killed" > /dev/null 2> "$work/ws.err" &
  local pid=$! i got=""
  for i in $(seq 50); do
    got=$(ps -L -o cls=,ni=,comm= -p "$pid" 2> /dev/null | awk '$3 == "slack-writer" {print $1, $2}')
    [ -n "$got" ] && break
    sleep 0.05
  done
  wait "$pid" 2> /dev/null
  echo "$got"
}
[ "$(writer_cls "")" = "B 0" ] && ok || bad "default writer not SCHED_BATCH: $(writer_cls "")"
[ "$(writer_cls normal)" = "TS 0" ] && ok || bad "SLACK_WRITER_SCHED=normal: $(writer_cls normal)"
[ "$(writer_cls low)" = "B 19" ] && ok || bad "SLACK_WRITER_SCHED=low: $(writer_cls low)"
[ "$(writer_cls fast)" = "B 0" ] &&
  [ "$(grep -c 'ignoring SLACK_WRITER_SCHED=fast (want one of normal|batch|low|batch-all); using batch' "$work/ws.err")" = 1 ] &&
  ok || bad "SLACK_WRITER_SCHED=fast not said once with batch used: $(cat "$work/ws.err")"
# no GPU (the stand-in driver's cuInit answers CUDA_ERROR_NO_DEVICE): said plainly, once; the
# trace's header says it; the program unchanged (it takes its no-device path either way)
LD_LIBRARY_PATH=$PWD/$BUILD/stub prog SLACK_OUTPUT="$work/ng" STUB_NO_GPU=1
bare=$(STUB_NO_GPU=1 "$BUILD/progs/chain" 100 2>&1)
[ "$(cat "$work/out")" = "$bare" ] && ok || bad "no GPU: stdout $(cat "$work/out"), untraced $bare"
[ "$(grep -c '^slack: no CUDA device (cuInit returned 100, CUDA_ERROR_NO_DEVICE, 0 devices): no GPU records; recording host calls only$' "$work/err")" = 1 ] &&
  ok || bad "no GPU not said plainly once: $(cat "$work/err")"
"$SLACK" info "$work"/ng/*.slk | grep -q 'gpu_records *no CUDA device' && ok || bad "no GPU: the header does not say it"
# slack record's --pace-probe sets SLACK_PACE_PROBE for the program (0: none); a bad value is said
# once by libslack and the default kept (the trace's header says the setting it ran with)
LD_LIBRARY_PATH="$BUILD/stub${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$SLACK" record -o "$work/pp" \
  --pace-probe 0 -- "$BUILD/progs/chain" 100 > "$work/out" 2> "$work/err"
"$SLACK" info "$work"/pp/*.slk 2> /dev/null | grep -q "setting.SLACK_PACE_PROBE 0$" && ok ||
  bad "--pace-probe 0 not the program's setting: $(cat "$work/err")"
prog SLACK_OUTPUT="$work/pq" SLACK_PACE_PROBE=5s/1s
[ "$(grep -c 'SLACK_PACE_PROBE' "$work/err")" = 1 ] && ok || bad "a bad SLACK_PACE_PROBE not said once: $(cat "$work/err")"
"$SLACK" info "$work"/pq/*.slk 2> /dev/null | grep -q "setting.SLACK_PACE_PROBE 2000ms/20000ms$" && ok ||
  bad "a bad SLACK_PACE_PROBE: the default not kept"
finish

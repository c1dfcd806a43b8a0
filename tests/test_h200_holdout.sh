#!/usr/bin/env bash
# slack on loops its rules were not tuned on (GPU runs 49 to 82, scripts/gpu-holdout.sh;
# docs/ACCURACY.md "Holdout workloads"): the traces under tests/data/holdout with the truth their
# own processes measured untraced (scripts/holdout_table.py). Checks what these traces show:
# - the verdict is the cause whose fix saves most in every traced process (an eval loop that
#   post-processes each batch on the host: serialization; a GPT step behind a Python tokenizer:
#   data starvation; the same GPT step without it, eager: launch overhead, 5.65 ms of idle per
#   step untraced; a launch-bound LSTM decoder: launch overhead; a tabular model's pageable 64 MB
#   copies: copy stall; its CPU feature engineering: data starvation; a DataLoader in the main
#   thread and one with two workers: data starvation);
# - the what-ifs of the rows whose truth the rounds know (the rounds' median) within 15%;
# - the eager GPT's launch overhead at the untraced tail's pace within 15% of its idle untraced
#   (the tail's round less the GPU's busy time), and its per-thread tail (two threads).
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
make -s BUILD="$BUILD" "$BUILD/slack" > /dev/null || exit 1
TEST_NAME=h200_holdout
. tests/tools/harness.sh
table() { python3 scripts/holdout_table.py "$BUILD/slack" "tests/data/holdout/$1" 2>&1; }
check() { # run, then python over the table's rows (c: the cells of each row)
  out=$(table "$1" | python3 -c "
import sys
rows = [[x.strip() for x in l.strip().strip('|').split('|')] for l in sys.stdin
        if l.startswith('| ') and not l.startswith('| process')]
def row(tag, cause):
    for c in rows:
        if c[0] == tag and c[1].startswith(cause):
            return c
    raise SystemExit(f'no row {tag} {cause}')
def row_at(tag, cause, without):
    # a form with two rows of one cause (against different forms): the one whose step without
    # the cause reads 'without' (ms, as the table prints it)
    for c in rows:
        if c[0] == tag and c[1] == cause and c[5].startswith(without):
            return c
    raise SystemExit(f'no row {tag} {cause} without {without}')
def pct(s):
    return float(s.split('/')[0].strip().rstrip('%'))
bad = []
$2
print('; '.join(bad) if bad else 'ok')")
  [ "$out" = ok ] && ok || bad "$1: $out"
}
# iterations RUN/TAG:N...: each trace's steps.iterations is the loop's N
iterations() {
  local t got
  for t in "$@"; do
    got=$("$BUILD/slack" report --json "tests/data/holdout/${t%:*}.slk" |
      python3 -c 'import json, sys; s = json.load(sys.stdin)["gpus"][0]["steps"]; print(s["iterations"])')
    [ "$got" = "${t#*:}" ] && ok || bad "${t%:*}: iterations $got, the loop ran ${t#*:}"
  done
}
# verdicts: slack's top stall (first part of the 'top stall' cell) in each process
check run49 "
want = {'holdout_eval-post': 'serialization', 'holdout_gpt-t': 'data_starvation',
        'holdout_gpt-tg': 'data_starvation', 'holdout_gpt-g': 'launch_overhead',
        'holdout_gpt-fixed': 'launch_overhead', 'holdout_rnn-eager': 'launch_overhead',
        'holdout_tabular-m': 'copy_stall', 'holdout_tabular-p': 'data_starvation',
        'holdout_tabular-pm': 'data_starvation'}
seen = {}
for c in rows:
    if len(c) == 10 and '/' in c[8]:
        seen[c[0]] = c[8].split('/')[0].strip()
for tag, v in want.items():
    if seen.get(tag) != v:
        bad.append(f'{tag} verdict {seen.get(tag)}, not {v}')"
check run49 "
for tag, cause in [('holdout_eval-post', 'serialization'), ('holdout_gpt-g', 'serialization'),
                   ('holdout_gpt-t', 'data_starvation'), ('holdout_rnn-eager', 'launch_overhead'),
                   ('holdout_tabular-p', 'data_starvation'), ('holdout_tabular-pm', 'data_starvation'),
                   ('holdout_tabular-pm', 'copy')]:
    e = pct(row(tag, cause)[7])
    if abs(e) > 15:
        bad.append(f'{tag} {cause} what-if {e:+.1f}%')
c = row('holdout_gpt-fixed', 'launch overhead')
if abs(float(c[4].rstrip('%'))) > 15:
    bad.append(f'gpt fixed launch overhead at the tail pace {c[4]}')"
check run50 "
c = row('holdout_tabular-m', 'copy')
if c[8].split('/')[0].strip() != 'copy_stall':
    bad.append('tabular m verdict ' + c[8])
e = pct(row('holdout_tabular-m', 'all stalls')[7])
if abs(e) > 15:
    bad.append(f'tabular m all stalls what-if {e:+.1f}%')"
check run52 "
for tag in ('holdout_loader-w0', 'holdout_loader-w2'):
    c = row(tag, 'data_starvation')
    if c[8].split('/')[0].strip() != 'data_starvation':
        bad.append(f'{tag} verdict {c[8]}')
    e = pct(c[7])
    if abs(e) > 15:
        bad.append(f'{tag} what-if {e:+.1f}%')"
# run 53: the seed's small forms in-process (truth and trace from one process, 15 rounds)
check run53 "
for tag, v in [('resnet_seed-c', 'copy_stall'), ('resnet_seed-cs', 'copy_stall'),
               ('resnet_seed-s', 'serialization')]:
    for c in rows:
        if c[0] == tag and len(c) == 10 and '/' in c[8] and c[8].split('/')[0].strip() != v:
            bad.append(f'{tag} verdict {c[8]}, not {v}')
for tag, cause in [('resnet_seed-c', 'copy'), ('resnet_seed-cs', 'copy'),
                   ('resnet_seed-cs', 'serialization'), ('resnet_seed-s', 'serialization')]:
    e = pct(row(tag, cause)[7])
    if abs(e) > 15:
        bad.append(f'{tag} {cause} what-if {e:+.1f}%')"
# run 54: mixed in-process, 11 rounds: both classes within 10%, their what-ifs within 15%
check run54 "
for cause in ('copy', 'serialization'):
    c = row('mixed-broken', cause)
    if abs(pct(c[4])) > 10:
        bad.append(f'mixed {cause} class {c[4]}')
    if abs(pct(c[7])) > 15:
        bad.append(f'mixed {cause} what-if {c[7]}')"
# run 55: hidden syncs. Verdicts: the mask indexing's sync (its fix saves 1.23 ms per step, its
# own gaps 0.11), empty_cache's cudaFree (hooked since run 55), and no stall for a .item()
# every 10th step (0.12 ms per step measured, under 2%); steps are the loop's iterations, not
# 10 of them (the log line) or 4 (the batches' cycle of shapes)
check run55 "
for tag, v in [('holdout_hidden-mask', 'serialization'), ('holdout_hidden-free', 'serialization'),
               ('holdout_hidden-log', 'none')]:
    c = row(tag, 'serialization')
    if c[8].split('/')[0].strip() != v:
        bad.append(f'{tag} verdict {c[8]}, not {v}')
    if c[9] != '148 of 150 traced':
        bad.append(f'{tag} steps {c[9]}')
    if abs(pct(c[7])) > 15:
        bad.append(f'{tag} what-if {c[7]}')"
# run 56: the same loop on a machine that ran it launch-bound traced: the step without the
# tracer within 10% of the measured medians (it read +24% before the slow hand-back from
# backward() was one), the what-ifs within 15%, steps the iterations
check run56 "
for tag in ('holdout_hidden-mask', 'holdout_hidden-free', 'holdout_hidden-log'):
    c = row(tag, 'serialization')
    if abs(pct(c[7])) > 15:
        bad.append(f'{tag} what-if {c[7]}')
    if c[9] != '148 of 150 traced':
        bad.append(f'{tag} steps {c[9]}')
    s = row(tag, 'step without the tracer')
    med = float(s[2].split('median')[1].strip())
    e = (float(s[3]) - med) / med * 100
    if abs(e) > 10:
        bad.append(f'{tag} step without the tracer {e:+.1f}% of the median')"
# run 56's empty_cache() form with cudaMalloc hooked: the re-allocation after each free is the
# free's (serialization 1.98 ms per step against 2.07 measured; 1.10 when it was `other`) and the
# what-if takes the frees and the re-allocations off
check run56 "
c = row('holdout_hidden-free', 'serialization')
if abs(pct(c[4])) > 10:
    bad.append(f'free serialization {c[4]}')
if abs(pct(c[7])) > 5:
    bad.append(f'free what-if {c[7]}')"
# run 57: a loop written after these rules (holdout_amp: MobileNetV3-Small, fp16 autocast) that
# is launch-bound even fixed (21.38 ms of its 24.14 ms step idle untraced): launch overhead is
# every form's verdict, its point at the tail's pace within 10% of that idle, and the hidden
# syncs (GradScaler's .item(), a NaN guard) save under 4% of the step by the replay, as by the
# rounds (their truth inside the rounds' noise: the scaler's 0.76 ms, 3.3% of the step; its
# what-if took off the host work after its .item() as a round trip from session 19 on, 0.77 ms
# where it was 0.02); the hidden-sync loop again on a machine where it
# was not launch-bound: its verdicts, and the what-ifs of `free` and `mask` within 5%
check run57 "
for tag, v in [('holdout_amp-scaler', 'launch_overhead'), ('holdout_amp-nancheck', 'launch_overhead'),
               ('holdout_hidden-free', 'serialization'), ('holdout_hidden-mask', 'serialization'),
               ('holdout_hidden-log', 'none')]:
    c = row(tag, 'serialization')
    if c[8].split('/')[0].strip() != v:
        bad.append(f'{tag} verdict {c[8]}, not {v}')
c = row('holdout_amp-fixed', 'launch overhead')
if abs(float(c[4].rstrip('%'))) > 10:
    bad.append(f'amp fixed launch overhead at the tail pace {c[4]}')
for tag in ('holdout_amp-scaler', 'holdout_amp-nancheck'):
    w = float(row(tag, 'serialization')[6])
    s = float(row(tag, 'step without the tracer')[3])
    if (s - w) / s > 0.04:
        bad.append(f'{tag} the sync saves {s - w:.2f} of {s:.2f} ms')
for tag in ('holdout_hidden-free', 'holdout_hidden-mask'):
    if abs(pct(row(tag, 'serialization')[7])) > 5:
        bad.append(f'{tag} what-if {row(tag, \"serialization\")[7]}')"
# run 62 and the lost lead (docs/CLASSIFICATION.md): the mask indexing's serialization, a sync
# whose cost is the launch gaps after it, within 10% of its truth in run 62 (0.10-0.13 ms
# against 0.78-1.67 before the rule) and within 25% in run 55's trace; the what-ifs within 5%
check run62 "
c = row('holdout_hidden-mask', 'serialization')
if abs(pct(c[4])) > 10:
    bad.append(f'mask serialization {c[3]} ms, {c[4]}')
for tag in ('holdout_hidden-free', 'holdout_hidden-mask', 'holdout_hidden-log'):
    if abs(pct(row(tag, 'serialization')[7])) > 5:
        bad.append(f'{tag} what-if {row(tag, \"serialization\")[7]}')
    # the sync first (docs/CLASSIFICATION.md, the verdict): mask's launch overhead saves 1.72 ms
    # by the replay, 1.02 of it the launch gaps the sync's lost lead exposed; removing the sync
    # saves 1.62 (measured 1.18 to 2.44)
    if row(tag, 'serialization')[8].split('/')[0].strip() != 'serialization':
        bad.append(f'{tag} verdict {row(tag, \"serialization\")[8]}')"
check run55 "
c = row('holdout_hidden-mask', 'serialization')
if abs(pct(c[4])) > 25:
    bad.append(f'run 55 mask serialization {c[3]} ms, {c[4]}')"
# run 63: gradient clipping with the norm read as a float (holdout_clip, written after the
# lost-lead rule): every step, the verdict serialization; every 10th step, under 2% of the step,
# none; both what-ifs within 5% of the fixed form's step
check run63 "
for tag, v in [('holdout_clip-item', 'serialization'), ('holdout_clip-every', 'none')]:
    c = row(tag, 'serialization')
    if c[8].split('/')[0].strip() != v:
        bad.append(f'{tag} verdict {c[8]}, not {v}')
    if abs(pct(c[7])) > 5:
        bad.append(f'{tag} what-if {c[7]}')"
# run 64: the seed's `s` and `cs` forms in-process after the lost-lead rule: verdicts (the
# copies in `cs`; none in `s`, its sync 1.6% of the step) and every what-if within 5%
check run64 "
for tag, cause, v in [('resnet_seed-cs', 'copy', 'copy_stall'), ('resnet_seed-cs', 'serialization', 'copy_stall'),
                      ('resnet_seed-s', 'serialization', 'none')]:
    c = row(tag, cause)
    if c[8].split('/')[0].strip() != v:
        bad.append(f'{tag} verdict {c[8]}, not {v}')
    if abs(pct(c[7])) > 5:
        bad.append(f'{tag} {cause} what-if {c[7]}')"
# run 58: the AMP loop's launch overhead against its usual fix measured, the step captured as a
# CUDA graph (5.7x faster untraced): slack's launch overhead at the tail's pace within 10% of
# what the graph saved, its what-if within 15% of the graph's step, the verdict the truth's top;
# the graph form itself healthy (its device-to-device input copies are not a copy stall)
check run58 "
c = row('holdout_amp-fixed', 'launch_overhead')
if abs(pct(c[4])) > 10:
    bad.append(f'amp launch overhead {c[4]}')
if abs(pct(c[7])) > 15:
    bad.append(f'amp launch overhead what-if {c[7]}')
if c[8] != 'launch_overhead / launch_overhead':
    bad.append(f'amp verdict {c[8]}')"
v=$("$BUILD/slack" report --json tests/data/holdout/run58/holdout_amp-graph.slk |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["gpus"][0]["verdict"]["class"])')
[ "$v" = none ] && ok || bad "run58: graph form verdict $v"
# run 59: a side-stream prefetcher (ResNet-18, bf16) that the H200 runs launch-bound even fixed
# (6.61 ms of its 10.37 ms step idle untraced): launch overhead in every form, its point within
# 15% of that idle; the device-wide sync after each prefetch finds the GPU drained (the host is
# behind it): slack attributes it nothing, as the rounds measure nothing (-0.62 ms, inside their
# noise)
check run59 "
for tag in ('holdout_streams-devsync', 'holdout_streams-pageable'):
    c = [c for c in rows if c[0] == tag and '/' in c[8]][0]
    if not c[8].startswith('launch_overhead /'):
        bad.append(f'{tag} verdict {c[8]}')
c = row('holdout_streams-fixed', 'launch overhead')
if abs(float(c[4].rstrip('%'))) > 15:
    bad.append(f'streams fixed launch overhead at the tail pace {c[4]}')
if float(row('holdout_streams-devsync', 'serialization')[3]) > 0.5:
    bad.append('devsync serialization ' + row('holdout_streams-devsync', 'serialization')[3])"
# the kernel-storm hint of a launch-bound step names a CUDA graph, and its saving lies within
# TOL of what the graph saved by the rounds (the table's launch_overhead truth of TAG)
graph_hint() { # run tag tol
  d=tests/data/holdout/$1
  truth=$(table "$1" | awk -F'|' -v t="$2" '$2 ~ " "t" " && $3 ~ "launch_overhead" {print $4}' |
    awk '{print $1}')
  out=$("$BUILD/slack" report --json $(ls "$d/$2.slk" "$d"/tr/"$2"/*.slk 2> /dev/null) |
    python3 -c '
import json, sys
truth, tol = float(sys.argv[1]), float(sys.argv[2])
h = [x for x in json.load(sys.stdin)["gpus"][0]["compute_hints"] if x["kind"] == "kernel_storm"]
if not h or not h[0]["fix"].startswith("capture the step as a CUDA graph"):
    print("hint " + (h[0]["fix"][:40] if h else "none"))
elif abs(h[0]["gain_ns"] / 1e6 - truth) > tol * truth:
    print("gain %.2f ms against %.2f" % (h[0]["gain_ns"] / 1e6, truth))
else:
    print("ok")' "${truth:-0}" "$3")
  [ "$out" = ok ] && ok || bad "$1 $2 kernel-storm hint: $out"
}
# run 58: the AMP step's hint against its graph (17.05 ms saved); torch.compile's fusion (run 60)
# saved nothing there: the compiled form is launch-bound too
graph_hint run58 holdout_amp-fixed 0.10
# run 61: the compute pair's elementwise-heavy eager step (tests/data/compute) against its CUDA
# graph in one process (torch.compile there: 12.19 -> 5.76 ms, the graph 2.15): launch overhead
# within 10% of what the graph saved, its what-if within 15%, and the kernel-storm hint names the
# graph with a saving within 15% of it
check run61 "
c = row('compute_pairs-eager', 'launch_overhead')
if abs(pct(c[4])) > 10:
    bad.append(f'eager launch overhead {c[4]}')
if abs(pct(c[7])) > 15:
    bad.append(f'eager launch overhead what-if {c[7]}')
if c[8] != 'launch_overhead / launch_overhead':
    bad.append(f'eager verdict {c[8]}')"
graph_hint run61 compute_pairs-eager 0.15
check run60 "
for c in rows:
    if len(c) == 10 and '/' in c[8] and not c[8].startswith('launch_overhead /'):
        bad.append(f'{c[0]} verdict {c[8]}')"
# run 65: a ViT-B/16 training step (scripts/workloads/holdout_vit.py), written after the rules:
# the verdicts; every what-if within 5%; the loss read before a side-stream prefetch, whose cost
# is mostly the next batch's copy exposed after it (the lost lead's copies, docs/CLASSIFICATION.md:
# -84% before the rule), within 15% of its truth
check run65 "
want = {'holdout_vit-a': 'serialization', 'holdout_vit-s': 'serialization',
        'holdout_vit-c': 'copy_stall', 'holdout_vit-cs': 'copy_stall'}
for c in rows:
    if len(c) == 10 and '/' in c[8] and c[0] in want:
        if c[8].split('/')[0].strip() != want[c[0]]:
            bad.append(f'{c[0]} verdict {c[8]}')
        if c[1] != 'step without the tracer' and c[7] not in ('', '–') and abs(pct(c[7])) > 5:
            bad.append(f'{c[0]} {c[1]} what-if {c[7]}')
c = row('holdout_vit-s', 'serialization')
if abs(pct(c[4])) > 15:
    bad.append(f'vit s serialization {c[3]} ms, {c[4]}')
# the accuracy read before the backward pass: the autograd thread's start, handed over to by the
# main thread after the sync, is the sync's (the lost lead's hand-overs; -21.5% before), within
# 15% by the rounds' median and 5% of round 0
c = row('holdout_vit-a', 'serialization')
r0 = float(c[4].split('/')[1].strip().rstrip('%'))
if abs(pct(c[4])) > 15 or abs(r0) > 5:
    bad.append(f'vit a serialization {c[3]} ms, {c[4]}')"
# run 66: gradient accumulation (scripts/workloads/holdout_accum.py): the steps are the loop's
# iterations (4 micro-batches and the optimizer's step: 10 timed of the 12 traced, the pattern
# alone gave 34 micro-batches; since session 38 the loader's forms time 7, their first 3 on the
# batches the workers had ready before the loop left out, classify.c prefetched_steps); with 3
# workers the verdict is the loader (launch overhead before the loader's thread ran at its pace
# in data starvation's what-if), the what-ifs within 15% (wi's within 25%: -14.1% with the 3
# prefetched steps in, -21.4% without them, its step without the tracer -18.3% -> -2.8%)
check run66 "
for tag, want in (('holdout_accum-w', '7 of 12'), ('holdout_accum-wi', '7 of 12'),
                  ('holdout_accum-i', '10 of 12')):
    c = [c for c in rows if c[0] == tag][0]
    if not c[9].startswith(want):
        bad.append(f'{tag} steps {c[9]}')
for tag, most in (('holdout_accum-w', 15), ('holdout_accum-wi', 25)):
    c = row(tag, 'data_starvation')
    if c[8].split('/')[0].strip() != 'data_starvation':
        bad.append(f'{tag} verdict {c[8]}')
    if abs(pct(c[7])) > most:
        bad.append(f'{tag} data starvation what-if {c[7]}')"
# run 67: runs 65 and 66 fresh on a machine whose traced host ran 1.76x slower: the verdicts
# (the ViT's loss read: 2% of the step untraced, the lost lead capped by the replay's queue),
# the accumulation loop's steps and its loader's class inside the truth's rounds (147-337 ms; it
# read -5.8% of their median with the 3 steps on prefetched batches in, +33.9% without them,
# 3 ms of data starvation each against 88-355 after), the ViT's what-ifs within 5%
check run67 "
want = {'holdout_vit-s': 'serialization', 'holdout_vit-a': 'serialization',
        'holdout_accum-w': 'data_starvation'}
for c in rows:
    if len(c) == 10 and '/' in c[8] and c[0] in want:
        if c[8].split('/')[0].strip() != want[c[0]]:
            bad.append(f'{c[0]} verdict {c[8]}')
c = row('holdout_accum-w', 'data_starvation')
lo, hi = [float(x) for x in c[2].split('(')[1].split(')')[0].split('..')]
if not lo <= float(c[3]) <= hi or not c[9].startswith('7 of 12'):
    bad.append(f'accum w {c[3]} ms ({c[2]}), steps {c[9]}')
for tag in ('holdout_vit-s', 'holdout_vit-a'):
    if abs(pct(row(tag, 'serialization')[7])) > 5:
        bad.append(f'{tag} what-if {row(tag, \"serialization\")[7]}')"
# runs 68 and 69: an encoder on text batches of 12 lengths (the kernels change with the shape)
# and accumulation with a per-parameter optimizer: iterations equal the loop's (steps from the
# end of each optimizer step; the cycle of micro-batch counts), the verdicts, the tokenizer's
# class within 10% and the what-ifs within 15%
iterations run68/holdout_bert-tm:36 run68/holdout_accum-wn:12 run69/holdout_bert-t:36 \
  run69/holdout_bert-tm:36 run69/holdout_bert-m:36 run69/holdout_bert-fixed:36 \
  run69/holdout_accum-wn:12 run70/holdout_bert-g:36 run70/holdout_bert-gf:36 \
  run70/holdout_accum-wn:24
check run69 "
for tag in ('holdout_bert-t', 'holdout_bert-tm', 'holdout_accum-wn'):
    c = row(tag, 'data_starvation')
    if c[8].split('/')[0].strip() != 'data_starvation':
        bad.append(f'{tag} verdict {c[8]}')
    if abs(pct(c[7])) > 15:
        bad.append(f'{tag} what-if {c[7]}')
if abs(pct(row('holdout_bert-t', 'data_starvation')[4])) > 10:
    bad.append(f'bert t class {row(\"holdout_bert-t\", \"data_starvation\")[4]}')
if abs(pct(row('holdout_bert-m', 'serialization')[7])) > 15:
    bad.append(f'bert m what-if {row(\"holdout_bert-m\", \"serialization\")[7]}')"
# run 70: the per-parameter accumulation traced past its loader's queue: data starvation within
# 10%, the verdict
check run70 "
c = row('holdout_accum-wn', 'data_starvation')
if abs(pct(c[4])) > 10 or c[8].split('/')[0].strip() != 'data_starvation':
    bad.append(f'accum wn {c[4]} verdict {c[8]}')"
# the verdict's site: a tokenizer in the main thread, sampled at a dozen lines of one function
# whose batch copy's call was the largest single site, is named by that function; a loss read
# (one call site) keeps its line
site() { "$BUILD/slack" report --json "tests/data/holdout/$1.slk" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["gpus"][0]["verdict"]["site"])'; }
got=$(site run69/holdout_bert-t)
case $got in "holdout_bert.py Tokenizer.basic: host work (sampled at "*) ok ;; *) bad "bert t site: $got" ;; esac
got=$(site run63/holdout_clip-item)
case $got in holdout_clip.py:[0-9]*) ok ;; *) bad "clip item site: $got" ;; esac
# runs 71 and 72: training with a validation pass after every 5th iteration: iterations equal the
# loop's (every interval between the optimizer's marks, whole cycles timed); the verdicts; the
# round trip (top-5 counted in Python after .tolist(), tokens sampled on the CPU) is
# serialization, not data starvation; the generation loop's requests, where its syncs are few
# and where a sync per token anchors a period of one token (12 requests, the first a warm-up
# 4.9 times as long: the requests cover 73% of what the tokens do, steps.c mark_in)
iterations run71/holdout_periodic-v:20 run71/holdout_periodic-vs:20 run71/holdout_periodic-s:20 \
  run72/holdout_periodic-v:30 run72/holdout_periodic-vs:30 run72/holdout_periodic-s:30 \
  run71/holdout_decode-k:12 run71/holdout_decode-fixed:12 run72/holdout_decode-h:12
check run72 "
for tag in ('holdout_periodic-v', 'holdout_periodic-vs'):
    if row(tag, 'data_starvation')[8].split('/')[0].strip() != 'data_starvation':
        bad.append(f'{tag} verdict {row(tag, \"data_starvation\")[8]}')
if row('holdout_decode-h', 'serialization')[8].split('/')[0].strip() != 'serialization':
    bad.append(f'decode h verdict {row(\"holdout_decode-h\", \"serialization\")[8]}')
if abs(pct(row('holdout_decode-h', 'serialization')[4])) > 10:
    bad.append(f'decode h class {row(\"holdout_decode-h\", \"serialization\")[4]}')"
check run71 "
if abs(pct(row('holdout_periodic-s', 'serialization')[4])) > 15:
    bad.append(f'periodic s class {row(\"holdout_periodic-s\", \"serialization\")[4]}')"
# run 73: a GAN, two optimizer steps (Adam, foreach: kernels of the same names) per iteration:
# iterations are the loop's, not its optimizer steps; its causes alone and together; the
# generation loop fresh: its requests are the steps
iterations run73/holdout_gan-l:30 run73/holdout_gan-li:30 run73/holdout_gan-i:30 \
  run73/holdout_gan-fixed:30 run73/holdout_decode-h:12
check run73 "
want = {('holdout_gan-l', 'data_starvation'): 'data_starvation',
        ('holdout_gan-li', 'data_starvation'): 'data_starvation',
        ('holdout_gan-i', 'serialization'): 'serialization',
        ('holdout_decode-h', 'serialization'): 'serialization'}
for (tag, cause), top in want.items():
    c = row(tag, cause)
    if c[8].split('/')[0].strip() != top:
        bad.append(f'{tag} verdict {c[8]}')
    if tag.startswith('holdout_gan') and abs(pct(c[7])) > 15:  # decode h's misses (ACCURACY.md)
        bad.append(f'{tag} what-if {c[7]}')
for tag, cause in (('holdout_gan-li', 'data_starvation'), ('holdout_gan-i', 'serialization')):
    if abs(pct(row(tag, cause)[4])) > 10:
        bad.append(f'{tag} class {row(tag, cause)[4]}')
c = row('holdout_gan-fixed', 'largest stall')
if float(c[4].split('%')[0]) > 2:
    bad.append(f'gan fixed largest stall {c[3]} {c[4]}')"
# run 74: a checkpoint saved every 10th iteration (torch.save: each CUDA tensor copied to the
# host, waited for and written): iterations the loop's, the verdict serialization (launch
# overhead before: the what-if kept the writing), the class within 10% of what the checkpoint
# costs (c - fixed), the what-if within 15% of the usual fix's step (the asynchronous save) and
# all stalls within 15% of the step without checkpoints
iterations run74/holdout_ckpt-c:35 run74/holdout_ckpt-a:35 run74/holdout_ckpt-fixed:35
check run74 "
ser = [c for c in rows if c[0] == 'holdout_ckpt-c' and c[1] == 'serialization']
if len(ser) != 2:
    bad.append(f'{len(ser)} serialization rows')
else:
    if ser[0][8].split('/')[0].strip() != 'serialization':
        bad.append(f'ckpt c verdict {ser[0][8]}')
    if abs(pct(ser[1][4])) > 10:
        bad.append(f'ckpt c class against no checkpoint {ser[1][4]}')
    if abs(pct(ser[0][7])) > 15:
        bad.append(f'ckpt c what-if against the asynchronous save {ser[0][7]}')
if abs(pct(row('holdout_ckpt-c', 'all stalls')[7])) > 15:
    bad.append(f'ckpt c all stalls {row(\"holdout_ckpt-c\", \"all stalls\")[7]}')"
# run 75: a trainer's loop (2 micro-batches an iteration, a log line, an evaluation every 5th
# and a checkpoint every 10th iteration): iterations the loop's in its four forms; the
# checkpoint's class within 10% of what it costs there and in the checkpoint loop fresh, whose
# verdict is serialization and what-if within 15% of the step without checkpoints (torch.save's
# lead-in, the file opened before the first read, is the round trip's: cls_gaps.c lead_in)
iterations run75/holdout_trainer-lc:40 run75/holdout_trainer-l:40 run75/holdout_trainer-c:40 \
  run75/holdout_trainer-fixed:40 run75/holdout_ckpt-c:35
check run75 "
ser = [c for c in rows if c[0] == 'holdout_ckpt-c' and c[1] == 'serialization']
if len(ser) != 2:
    bad.append(f'{len(ser)} serialization rows')
else:
    if ser[1][8].split('/')[0].strip() != 'serialization':
        bad.append(f'ckpt c verdict {ser[1][8]}')
    if abs(pct(ser[1][4])) > 10:
        bad.append(f'ckpt c class against no checkpoint {ser[1][4]}')
    if abs(pct(ser[1][7])) > 15:
        bad.append(f'ckpt c what-if against no checkpoint {ser[1][7]}')
if abs(pct(row('holdout_trainer-c', 'serialization')[4])) > 10:
    bad.append(f'trainer c class {row(\"holdout_trainer-c\", \"serialization\")[4]}')"
# runs 78-79: round trips through the host that are no batch (session 20): an optimizer stepped
# on the CPU over the gradients read (holdout_offload o, p) and environments stepped on the host
# on the actions read (holdout_rl h): iterations the loop's, verdict serialization with the
# round trip's fix (most of serialization is the round trip's: cls_gaps.c sync_roundtrip; data
# starvation with the DataLoader's fix before), the healthy form quiet, the pageable copies'
# class within 10% and their what-if within 15%, the CPU optimizer's what-if within 15% (the round
# trip's copies out and back leave the step with its fix: classify.c roundtrip_copies)
iterations run78/holdout_offload-o:20 run78/holdout_offload-p:20 run78/holdout_offload-fixed:20 \
  run79/holdout_offload-o:20 run79/holdout_offload-p:20 run79/holdout_rl-h:20 \
  run79/holdout_rl-fixed:20 run82/holdout_offload-o:20 run82/holdout_offload-p:20 \
  run82/holdout_rl-h:20
for t in run78/holdout_offload-o run78/holdout_offload-p run79/holdout_offload-o \
  run79/holdout_offload-p run79/holdout_rl-h run82/holdout_offload-o run82/holdout_offload-p \
  run82/holdout_rl-h; do
  out=$("$BUILD/slack" report --json "tests/data/holdout/$t.slk" | python3 -c '
import json, sys
g = json.load(sys.stdin)["gpus"][0]
s = g["steps"]
v, rt, ser = g["verdict"]["class"], s["serialization_roundtrip_per_step_ns"], s["per_step_ns"]["serialization"]
print("ok" if v == "serialization" and 2 * rt > ser else f"verdict {v}, round trip {rt} of {ser}")')
  [ "$out" = ok ] && ok || bad "$t: $out"
done
check run78 "
if abs(pct(row('holdout_offload-p', 'serialization')[7])) > 15:
    bad.append(f'offload p what-if {row(\"holdout_offload-p\", \"serialization\")[7]}')
if float(row('holdout_offload-fixed', 'largest stall')[4].split('%')[0]) > 2:
    bad.append(f'offload fixed {row(\"holdout_offload-fixed\", \"largest stall\")[4]}')
if abs(pct(row('holdout_offload-o', 'copy')[7])) > 15:
    bad.append(f'offload o copies what-if {row(\"holdout_offload-o\", \"copy\")[7]}')"
check run82 "
if abs(pct(row('holdout_offload-p', 'serialization')[7])) > 15:
    bad.append(f'offload p what-if {row(\"holdout_offload-p\", \"serialization\")[7]}')"
# run 90: the trainer's checkpoint saved in the loop, cut by its what-if: the pin-memory
# thread, idle in its queue's get through the save (no batch was asked for), waits less by the
# serialization it idled through (classify.c, "The loader keeps up"), and the steps after the
# save no longer wait for it at the traced pace (+25.4% before that); the threaded loader's
# threads, building batches, not idle, keep their work: its verdict stays data starvation (it
# read launch overhead where any loader thread's waits shrank). Since session 44 the pin
# thread's queries between the autograd thread's launches are no hand-over to them
# (cls_world.c helpers_hand): the step without the tracer within 5% of round 0 (+13.6%
# before), and the what-if -19.8% (-4.8% before: the base's +13.6% had hidden the class's
# over-estimate, 23.0 ms against 11.3, the asynchronous saver's pickling still on the
# launch-bound loop's host); within 25%
check run90 "
if abs(pct(row('holdout_trainer-c', 'step without the tracer')[4])) > 5:
    bad.append(f'trainer c step without the tracer {row(\"holdout_trainer-c\", \"step without the tracer\")[4]}')
if abs(pct(row('holdout_trainer-c', 'serialization')[7])) > 25:
    bad.append(f'trainer c what-if {row(\"holdout_trainer-c\", \"serialization\")[7]}')"
check run82 "
if row('holdout_threads-t', 'data_starvation')[8].split('/')[0].strip() != 'data_starvation':
    bad.append(f'threads t verdict {row(\"holdout_threads-t\", \"data_starvation\")[8]}')"
check run79 "
if abs(pct(row('holdout_offload-p', 'serialization')[7])) > 15:
    bad.append(f'offload p what-if {row(\"holdout_offload-p\", \"serialization\")[7]}')
if abs(pct(row('holdout_offload-o', 'copy')[4])) > 10:
    bad.append(f'offload o copies class {row(\"holdout_offload-o\", \"copy\")[4]}')
if abs(pct(row('holdout_offload-o', 'copy')[7])) > 15:
    bad.append(f'offload o copies what-if {row(\"holdout_offload-o\", \"copy\")[7]}')"
# runs 80-81: a DataLoader's epoch start, every 12th iteration (holdout_epochs: workers started
# again, persistent ones that prefetch nothing across the epoch's end, one iterator for the
# whole run) and a CUDA-graphed step behind its loader (holdout_graphs): iterations the loop's
# (the epoch starts timed in whole cycles: steps.c steps_time_cycles), verdict data starvation,
# the epoch start's class within 10% of its truth (e; p +17.0%, its rounds 22.73..28.69), both
# forms' data-starvation and all-stalls what-ifs within 15% (each epoch's loader thread waits
# from the call that started it: +28.5% and +19.8% before), the graphed loop's class within 10%
# and its all-stalls what-if within 15%
iterations run81/holdout_epochs-e:36 run81/holdout_epochs-p:36 run81/holdout_epochs-fixed:36 \
  run81/holdout_graphs-l:24 run80/holdout_graphs-l:24 run80/holdout_graphs-fixed:24
check run81 "
for t in ('holdout_epochs-e', 'holdout_epochs-p', 'holdout_graphs-l'):
    c = row(t, 'data_starvation')
    if c[8].split('/')[0].strip() != 'data_starvation':
        bad.append(f'{t} verdict {c[8]}')
if abs(pct(row('holdout_epochs-e', 'data_starvation')[4])) > 10:
    bad.append(f'epochs e class {row(\"holdout_epochs-e\", \"data_starvation\")[4]}')
for t in ('holdout_epochs-e', 'holdout_epochs-p'):
    for c in ('data_starvation', 'all stalls'):
        if abs(pct(row(t, c)[7])) > 15:
            bad.append(f'{t} {c} what-if {row(t, c)[7]}')
if abs(pct(row('holdout_graphs-l', 'data_starvation')[4])) > 10:
    bad.append(f'graphs l class {row(\"holdout_graphs-l\", \"data_starvation\")[4]}')
if abs(pct(row('holdout_graphs-l', 'all stalls')[7])) > 15:
    bad.append(f'graphs l all stalls {row(\"holdout_graphs-l\", \"all stalls\")[7]}')"
# the step without the tracer fitted to the loop's own iterations in the tail (session 24,
# analyzer/cls_pace.c): the threaded loader's fixed form, launch-bound, within 10% of the round
# its tail timed in runs 83, 84 and 90 (-0.9%, +3.1%, -2.0%; at the threads' pace before:
# +13.6%, +38.5%, +20.4%), and the trainer's checkpoint form in run 75 (+1.8%; +10.1%)
for rt in run83:holdout_threads-fixed run84:holdout_threads-fixed run90:holdout_threads-fixed \
  run75:holdout_trainer-c; do
  check "${rt%%:*}" "
s = row('${rt#*:}', 'step without the tracer')
if abs(pct(s[4])) > 10:
    bad.append(f'${rt#*:} step without the tracer {s[4]} of round 0')"
done
# small tensors made on the device from Python lists mid-step (GPU run 91, holdout_tensors,
# written after session 24's rules): each `torch.tensor(list, device="cuda")` is a pageable copy
# queued behind the forward (or backward) pass and a sync that waits for it; the launch gaps
# after it are its lost lead, the copy stall's: verdict copy stall (launch overhead before, its
# class 0.33 ms a step against 2.34 measured: now 1.97), what-if within 15% (+6.1%); its fixed
# form (pinned, non_blocking, at the step's start) no stall. Run 92, the same loop fresh after
# the rule: the class within 10% (-9.0%; 0.39 ms, -81%, before)
for rb in run91:20 run92:10; do
  check "${rb%%:*}" "
c = row('holdout_tensors-t', 'copy_stall')
if c[8].split('/')[0].strip() != 'copy_stall':
    bad.append(f'tensors t verdict {c[8]}')
if abs(pct(c[4])) > ${rb#*:}:
    bad.append(f'tensors t class {c[4]}')
if abs(pct(c[7])) > 15:
    bad.append(f'tensors t what-if {c[7]}')
if row('holdout_tensors-fixed', 'largest stall')[8].split('/')[0].strip() != 'none':
    bad.append('tensors fixed: a stall')"
done
# a loader in 4 Python threads of the training process (GPU runs 83 and 84, format 2.7: the
# samples' CPU time): the launching thread off the CPU while the loader's threads ran is data
# starvation (run 83: verdict data starvation with the worker processes' fix, 32.6 ms of waits a
# step; the build before read launch overhead, 5.2 ms of data starvation); the DataLoader's own
# forms (run 84: in the main thread, two worker processes; run 83's 12 workers with their
# pin-memory thread) find no such waits
# (run 85, autograd's thread sampled too: the same; its fixed form read 1.7 ms of waits while
# torchvision's model frames counted as loading)
out=$(for f in run83/holdout_threads-t run83/holdout_threads-fixed run84/holdout_loader-w0 \
  run84/holdout_loader-w2 run85/holdout_threads-t run85/holdout_threads-fixed \
  run86/holdout_accum-w run86/holdout_epochs-e; do
  "$BUILD/slack" report --json "tests/data/holdout/$f.slk" | python3 -c '
import json, sys
g = json.load(sys.stdin)["gpus"][0]
w = g["steps"]["data_starvation_loader_wait_per_step_ns"] / 1e6
v = g["verdict"]["class"]
t = sys.argv[1]
if t.endswith("threads-t"):
    ok = v == "data_starvation" and w > 20 and "worker processes" in g["verdict"]["fix"]
elif t.startswith("run86"): # DataLoader loops with worker processes: next to no waits
    ok = w < 0.5 and v == "data_starvation"
else:
    ok = w == 0 and v == ("launch_overhead" if t.endswith("fixed") else "data_starvation")
print("ok" if ok else f"{t}: verdict {v}, loader waits {w:.2f} ms a step")' "$f"
done | grep -v '^ok$')
[ -z "$out" ] && ok || bad "loader threads: $out"
# the loader's pace (classify.c loader_bound): the 4 threads busy in most of their samples bound
# every what-if that keeps them at their pace; runs 84 and 90 read launch overhead before (its
# replay 48-49 ms a step against the loop's 91-92), now data starvation; the DataLoader's own
# forms (worker processes: no loader threads in the process) have no such bound, and those too
# few for the loop (2 and 3 workers) the producer's: the main thread waits on the pin-memory
# thread's queue
out=$(for f in run83/holdout_threads-t run84/holdout_threads-t run85/holdout_threads-t \
  run90/holdout_threads-t run90/holdout_threads-fixed run84/holdout_loader-w2 \
  run86/holdout_accum-w; do
  "$BUILD/slack" report --json "tests/data/holdout/$f.slk" | python3 -c '
import json, sys
g = json.load(sys.stdin)["gpus"][0]
s, v, t = g["steps"], g["verdict"]["class"], sys.argv[1]
lw = g["whatif"]["launch_overhead"]
if t.endswith("threads-t"):
    b = s.get("loader_bound_ns", 0)
    ok = (v == "data_starvation" and s.get("loader_busy_share", 0) > 0.9
          and b > 0.9 * g["replay"]["corrected_step_ns"] and lw["step_ns_if_fixed"] >= b
          and lw.get("loader_bound_ns") == b and "loader_bound_ns" not in g["whatif"]["data_starvation"]
          and g["whatif"]["data_starvation"]["step_ns_if_fixed"] < b)
elif t.endswith("fixed"):
    ok = "loader_bound_ns" not in s and "loader_bound_ns" not in lw
else:
    ok = ("loader_busy_share" not in s and "producer_wait_share" in s
          and lw.get("loader_bound_ns") == s["loader_bound_ns"] and v == "data_starvation")
print("ok" if ok else "%s: verdict %s, bound %s" % (t, v, s.get("loader_bound_ns")))' "$f" 2>&1
done | grep -v '^ok$')
[ -z "$out" ] && ok || bad "the loader's pace: $out"
# the loader's own threads out of the process too (classify.c, the GIL's edit): their time off
# the CPU outside a hand-over wait goes from their waits between calls, and their pace with it:
# the what-if against the measured fixed form +83.6% -> +41.5% (run 85), +101.5% -> +68.6% (run
# 132) where their pinning calls held the main thread's next batch
for rl in run85:50 run132:75; do
  check "${rl%%:*}" "
c = row('holdout_threads-t', 'data_starvation')
if pct(c[7]) > ${rl##*:}:
    bad.append(f'threads t what-if {c[7]}')"
done
# the threads' fix: its prediction said to be at most that (the launching threads' CPU time kept
# as traced, inflated beside the loader's threads: GPU runs 160 and 161); not where the loader's
# fix is more worker processes (run 129's 2 workers)
"$BUILD/slack" report tests/data/holdout/run133/holdout_threads-t.slk |
  grep -A2 "^    predicted step if fixed" | grep -q "^    (at most: the launching threads' own work" &&
  ok || bad "run133 threads t: no at-most line"
"$BUILD/slack" report tests/data/holdout/run129/holdout_loader-w2.slk |
  grep -q "(at most: the launching threads" && bad "run129 loader w2: an at-most line" || ok
"$BUILD/slack" report tests/data/holdout/run90/holdout_threads-t.slk |
  grep -q "loader threads were building batches in 96% of their samples" && ok ||
  bad "run90: the loader's pace not said"
out=$("$BUILD/slack" report --json tests/data/holdout/run49/holdout_gpt-fixed.slk | python3 -c '
import json, sys
t = json.load(sys.stdin)["gpus"][0]["tracer"]["untraced_tail"]["threads"]
f = sorted(round(x["host_slowdown"], 2) for x in t)
print("ok" if len(t) == 2 and f[0] < 1.5 < f[1] else f"threads {f}")')
[ "$out" = ok ] && ok || bad "gpt fixed per-thread tail: $out"
# Read as if recorded without their untraced tail (--no-tail), the traces' host pace is assumed
# (1.45x, the H200 tails' median, analyzer/tail.h): the mid-step syncs of run 62 (boolean-mask
# indexing), run 63 (clipping's norm read every step) and run 67 (a ViT's loss read) keep their
# verdict serialization, where without the assumption (--host-slowdown 1: CUPTI's cost per call
# taken out, nothing more) each read launch overhead, the replay's host as slow as traced; the
# step without the tracer and serialization's what-if within 15% of the report's with the tail
# (which scripts/holdout_table.py sets against the truth)
out=$(for f in run62/holdout_hidden-mask run63/holdout_clip-item run67/holdout_vit-s; do
  for a in "--no-tail" "--no-tail --host-slowdown 1" ""; do
    # shellcheck disable=SC2086 # the options are split on purpose
    "$BUILD/slack" report --json $a "tests/data/holdout/$f.slk" | python3 -c '
import json, sys
g = json.load(sys.stdin)["gpus"][0]
print(g["verdict"]["class"], g["replay"]["corrected_step_ns"],
      g["whatif"]["serialization"]["step_ns_if_fixed"],
      g["tracer"].get("assumed_pace", {}).get("host_slowdown", 0),
      int(g["tracer"].get("assumed_pace", {}).get("tail_ignored", False)))'
  done | tr '\n' ' ' | python3 -c '
import sys
f, v = sys.argv[1], sys.stdin.read().split()
a, one, tail = v[0:5], v[5:10], v[10:15]
ok = (a[0] == "serialization" and a[3] == "1.45" and a[4] == "1" and one[0] == "launch_overhead"
      and one[3] == "0" and tail[0] == "serialization"
      and abs(int(a[2]) - int(tail[2])) <= 0.15 * int(tail[2])
      and abs(int(a[1]) - int(tail[1])) <= 0.15 * int(tail[1]))
print("ok" if ok else f"{f}: assumed {a}, none {one}, the tail {tail}")' "$f"
done | grep -v '^ok$')
[ -z "$out" ] && ok || bad "without the tail: $out"
# GPU run 93 (fresh processes of four holdout workloads, recorded after the assumed pace was
# written, read without their tails): the step without the tracer within 10% of the tail's round
# 0 in all nine, and the ViT's verdicts serialization, where --host-slowdown 1 read launch
# overhead in both and its steps without the tracer 7.7% and 8.9% long
for a in "--no-tail" "--no-tail --host-slowdown 1"; do
  HOLDOUT_REPORT_ARGS="$a" check run93 "
none = '$a'.endswith(' 1')
for c in rows:
    if c[1] == 'step without the tracer' and not none and abs(float(c[4].rstrip('%'))) > 10:
        bad.append(f'{c[0]} step without the tracer {c[4]}')
for tag in ('holdout_vit-s', 'holdout_vit-a'):
    v = row(tag, 'serialization')[8].split('/')[0].strip()
    if v != ('launch_overhead' if none else 'serialization'):
        bad.append(f'$a: {tag} verdict {v}')"
done
# GPU run 94 (holdout_metrics, written after the assumed pace): per-class IoU read class by class
# (32 .item() a step): verdict serialization, its what-if within 5% of the step without the reads,
# with the tail and read without it. Its `t` and `fixed` forms of then counted with torch.bincount,
# which on CUDA reads its input's largest value: slack names that line (holdout_metrics.py:83) as
# their serialization (the workload's `b` form since; its `fixed` now scatter_add_s)
for a in "" "--no-tail"; do
  HOLDOUT_REPORT_ARGS="$a" check run94 "
c = row('holdout_metrics-m', 'serialization')
if c[8].split('/')[0].strip() != 'serialization' or abs(pct(c[7])) > 5:
    bad.append(f'$a: m verdict {c[8]}, what-if {c[7]}')"
done
out=$(for f in t fixed; do
  "$BUILD/slack" report --json --no-tail "tests/data/holdout/run94/holdout_metrics-$f.slk" | python3 -c '
import json, sys
g = json.load(sys.stdin)["gpus"][0]
s = g["callsites"]["serialization"][0]["site"] if g["callsites"]["serialization"] else ""
print("ok" if "holdout_metrics.py:83" in s else f"{sys.argv[1]}: serialization at {s!r}")' "$f"
done | grep -v "^ok$")
[ -z "$out" ] && ok || bad "run 94 bincount's sync: $out"
# GPU run 95 (its fixed form reading nothing): the reads one by one, verdict serialization with
# the tail, at the assumed pace and with neither, what-if within 10%; the fixed form no stall;
# bincount's own sync named at its line where it is the verdict
for a in "" "--no-tail" "--no-tail --host-slowdown 1"; do
  HOLDOUT_REPORT_ARGS="$a" check run95 "
c = row('holdout_metrics-m', 'serialization')
if c[8].split('/')[0].strip() != 'serialization' or abs(pct(c[7])) > 10:
    bad.append(f'$a: m verdict {c[8]}, what-if {c[7]}')
c = row('holdout_metrics-fixed', 'largest stall')
if c[8].split('/')[0].strip() != 'none':
    bad.append(f'$a: fixed verdict {c[8]}')"
done
out=$("$BUILD/slack" report --no-tail tests/data/holdout/run95/holdout_metrics-b.slk | grep -c "verdict: serialization.*holdout_metrics.py:91")
[ "$out" = 1 ] && ok || bad "run 95 b: the bincount's sync not the verdict at its line"
# GPU run 97: recorded the way a user records (slack record on the whole process, no window, no
# tail; the truth from a second, untraced process): the verdicts (amp's loop is launch-bound:
# its scaler's 0.2 ms read is not what costs, run 58's CUDA graph is), the what-ifs within 10%,
# the step without the tracer within 5% of the rounds' median at the assumed pace (the report
# without it, --host-slowdown 1: +4.1% to +30.9%; at the assumed pace -1.6% to +1.7%)
check run97 "
want = {'holdout_vit-s': 'serialization', 'holdout_vit-a': 'serialization',
        'holdout_hidden-mask': 'serialization', 'holdout_metrics-m': 'serialization',
        'holdout_amp-scaler': 'launch_overhead'}
for tag, v in want.items():
    c = row(tag, 'serialization')
    if c[8].split('/')[0].strip() != v:
        bad.append(f'{tag} verdict {c[8]}')
    if tag != 'holdout_amp-scaler' and abs(pct(c[7])) > 10:
        bad.append(f'{tag} what-if {c[7]}')
    c = row(tag, 'step without the tracer')
    med = float(c[2].split('median')[1])
    if abs(float(c[3]) / med - 1) > 0.05:
        bad.append(f'{tag} step without the tracer {c[3]} against {med}')"
iterations run97/holdout_vit-s:60 run97/holdout_hidden-mask:150 run97/holdout_amp-scaler:100
# GPU run 100: the holdout forms GPU run 98 never reached, recorded the same way. The eval
# loop's post-processing stays on the host (JSON records): its fix, one step behind, is bound by
# the host's own work (classify.c host_bound): the serialization what-if 11.40 ms and every stall
# 9.83 against the fixed form's 10.27 (the work cut: 6.77 and 6.72, -34%)
check run100 "
want = {'holdout_eval-post': 'serialization', 'holdout_gpt-t': 'data_starvation',
        'holdout_rnn-eager': 'launch_overhead', 'holdout_tabular-pm': 'data_starvation'}
for tag, v in want.items():
    c = row(tag, v)
    if c[8].split('/')[0].strip() != v:
        bad.append(f'{tag} verdict {c[8]}')
    if abs(pct(c[7])) > 15:
        bad.append(f'{tag} what-if {c[7]}')
c = row('holdout_eval-post', 'all stalls')
if abs(pct(c[7])) > 15:
    bad.append(f'eval all stalls {c[7]}')"
iterations run100/holdout_eval-post:80 run100/holdout_gpt-t:40 run100/holdout_rnn-eager:120 \
  run100/holdout_tabular-pm:30 run100/holdout_trainer-lc:40
# GPU run 104: a serving loop that waits for each batch by asking event.query() until done
# (holdout_poll: `p` with a 0.2 ms sleep between questions, `s` a spin), recorded both ways (slack
# record on the whole process; run104w in a window with an untraced tail): serialization at the
# question's line in every one (the build before read `p` launch overhead, 6%, and `s` no stall,
# 71,802 events dropped: GPU run 105), the what-ifs and every stall within 10% of the form that
# asks one batch behind, which reads no stall
for r in run104 run104w; do
  check $r "
for t in ('p', 's'):
    c = row('holdout_poll-' + t, 'serialization')
    if c[8].split('/')[0].strip() != 'serialization':
        bad.append(f'{t} verdict {c[8]}')
    if abs(pct(c[7])) > 10:
        bad.append(f'{t} what-if {c[7]}')
    c = row('holdout_poll-' + t, 'all stalls')
    if abs(pct(c[7])) > 10:
        bad.append(f'{t} all stalls {c[7]}')"
  for t in p s; do
    out=$("$BUILD/slack" report "tests/data/holdout/$r/holdout_poll-$t.slk" | grep -c "verdict: serialization.*holdout_poll.py:55 wait_by_asking: cudaEventQuery")
    [ "$out" = 1 ] && ok || bad "$r $t: the verdict not serialization at the question's line"
  done
done
check run104 "
c = row('holdout_poll-fixed', 'largest stall')
if c[8].split('/')[0].strip() != 'none':
    bad.append(f'fixed verdict {c[8]}')
c = row('holdout_poll-p', 'serialization')
if abs(pct(c[4])) > 10:
    bad.append(f'p class {c[4]}')"
iterations run104/holdout_poll-p:60 run104/holdout_poll-s:60 run104/holdout_poll-fixed:60 \
  run104w/holdout_poll-p:60 run104w/holdout_poll-s:60
# GPU run 106: the spin again with CUPTI's record of each question folded by the writer (267 SYNC
# records where run 105's trace of the same form held 155,290), and the loop asking its stream
# (torch's stream.query(): cudaStreamQuery): serialization at the question's line in both
check run106 "
for t in ('q', 's'):
    c = row('holdout_poll-' + t, 'serialization')
    if c[8].split('/')[0].strip() != 'serialization':
        bad.append(f'{t} verdict {c[8]}')
    if abs(pct(c[7])) > 10:
        bad.append(f'{t} what-if {c[7]}')"
out=$("$BUILD/slack" report tests/data/holdout/run106/holdout_poll-q.slk | grep -c "verdict: serialization.*holdout_poll.py:58 wait_by_asking: cudaStreamQuery")
[ "$out" = 1 ] && ok || bad "run106 q: the verdict not serialization at the stream question's line"
out=$("$BUILD/slack" info tests/data/holdout/run106/holdout_poll-s.slk | awk '$1 == "syncs" {print $2}')
[ -n "$out" ] && [ "$out" -le 1000 ] && ok || bad "run106 s: $out SYNC records"
iterations run106/holdout_poll-q:60 run106/holdout_poll-s:60
# GPU run 107: a torch.compile'd training step recorded on its whole process (Inductor's compile,
# 56 s, is a long host phase): launch-bound (715 kernels a step, the optimizer and the backward
# eager), the verdict at the user's line that runs the compiled model, not at the generated
# code's file in Inductor's cache (frames.c)
out=$("$BUILD/slack" report tests/data/holdout/run107/holdout_amp-compiled.slk | grep -E "^  verdict:")
grep -q "verdict: launch overhead.* at holdout_amp.py:[0-9]* Run.step" <<< "$out" && ok ||
  bad "run107: $out"
# GPU run 108: Faster R-CNN in strict fp32, where cuDNN ran the convolutions by FFT (68 k kernels an
# iteration, 1.37 M records for the 9 iterations its window held): read in the default windows,
# 594,063 steps of one small GEMM before; the windows' marks (9 optimizer steps) have it read
# again whole, with the whole trace's iterations (report_window.c)
r108err=$(mktemp)
"$BUILD/slack" report --json tests/data/holdout/run108/holdout_detect-l.slk 2> "$r108err" |
  python3 -c 'import json, sys
s = json.load(sys.stdin)["gpus"][0]["steps"]
sys.exit(0 if s["iterations"] == 9 and s["count"] >= 7 else 1)' && grep -q "9 optimizer steps" "$r108err" && ok ||
  bad "run108: the detector's iterations in windows: $(cat "$r108err")"
rm -f "$r108err"
# GPU run 109: the detector with cuDNN's TF32 (torch's default), written after the rules: the
# DataLoader in the main thread is data starvation at the dataset's line, its what-if within 15% of
# the form with workers; the reference script's loss read per step is serialization at its line,
# what-if within 15%; metrics read by a logging thread are no serialization (the main thread never
# waits: under 2% of the step), the same reads in the main thread are; iterations 24 and 60
check run109 "
c = row('holdout_detect-l', 'data_starvation')
if c[8].split('/')[0].strip() != 'data_starvation' or abs(pct(c[7])) > 15:
    bad.append(f'detect l: {c[8]} what-if {c[7]}')
c = row('holdout_detect-s', 'serialization')
if c[8].split('/')[0].strip() != 'serialization' or abs(pct(c[7])) > 15:
    bad.append(f'detect s: {c[8]} what-if {c[7]}')
c = row('holdout_logger-bg', 'serialization')
step = float(row('holdout_logger-bg', 'step without the tracer')[3])
if float(c[3]) > 0.02 * step:
    bad.append(f'logger bg: serialization {c[3]} ms of a {step} ms step')"
out=$("$BUILD/slack" report tests/data/holdout/run109/holdout_detect-l.slk | grep -E "^  verdict:")
grep -q "verdict: data starvation.* at holdout_detect.py:[0-9]* Photos.__getitem__" <<< "$out" && ok ||
  bad "run109 detect l: $out"
out=$("$BUILD/slack" report tests/data/holdout/run109/holdout_detect-s.slk | grep -E "^  verdict:")
grep -q "verdict: serialization.* at holdout_detect.py:111 Run.step" <<< "$out" && ok ||
  bad "run109 detect s: $out"
iterations run109/holdout_detect-l:24 run109/holdout_detect-s:24 run109/holdout_detect-fixed:24 \
  run109/holdout_logger-fg:60 run109/holdout_logger-bg:60 run109/holdout_logger-fixed:60
# GPU run 110: the detector recorded by slack record on its whole process (no tail): its loader in
# the main thread still data starvation at the dataset's line; iterations 24 of 24
out=$("$BUILD/slack" report tests/data/holdout/run110/holdout_detect-l.slk | grep -E "^  verdict:")
grep -q "verdict: data starvation.* at holdout_detect.py:[0-9]* Photos.__getitem__" <<< "$out" && ok ||
  bad "run110 detect l: $out"
iterations run110/holdout_detect-l:24 run110/holdout_detect-s:24
# GPU run 112 (session 31, written after the rules): a diffusion model's EMA kept one tensor at a
# time, the loss read before it, both and neither. The EMA loop alone hides behind the GPU's step
# (its truth 0.72 ms, 1.2% of a 57 ms step: the tiny kernels' own GPU time): no stall of 2%; the
# read is serialization, with and without the loop after it, what-ifs within 15%; the fixed form
# healthy; 40 iterations each
check run112 "
c = row('holdout_diffusion-e', 'launch_overhead')
if c[8].split('/')[0].strip() != 'none':
    bad.append(f'diffusion e: {c[8]}')
for tag in ('holdout_diffusion-i', 'holdout_diffusion-ie'):
    c = row(tag, 'serialization')
    if c[8].split('/')[0].strip() != 'serialization' or abs(pct(c[7])) > 15:
        bad.append(f'{tag}: {c[8]} what-if {c[7]}')
c = row('holdout_diffusion-ie', 'launch_overhead')
if abs(pct(c[7])) > 15:
    bad.append(f'diffusion ie launch overhead what-if {c[7]}')
c = row('holdout_diffusion-fixed', 'largest stall')
if float(c[4].split('%')[0]) > 2:
    bad.append(f'diffusion fixed: {c[3]} {c[4]}')"
iterations run112/holdout_diffusion-e:40 run112/holdout_diffusion-ie:40 run112/holdout_diffusion-i:40 \
  run112/holdout_diffusion-fixed:40
# GPU run 113: the same recorded by slack record on the whole process (no tail): `ie` still
# serialization at the loss read, its what-if within 15%
check run113 "
c = row('holdout_diffusion-ie', 'serialization')
if c[8].split('/')[0].strip() != 'serialization' or abs(pct(c[7])) > 15:
    bad.append(f'diffusion ie: {c[8]} what-if {c[7]}')"
out=$("$BUILD/slack" report tests/data/holdout/run113/holdout_diffusion-ie.slk | grep -E "^  verdict:")
grep -q "verdict: serialization.* at holdout_diffusion.py:[0-9]* Run.step" <<< "$out" && ok ||
  bad "run113 diffusion ie: $out"
# GPU run 114: a GNN fed by a NumPy neighbour sampler (written after the rules): the sampler in the
# main thread with pinned copies is data starvation, pageable copies from the workers' shared
# memory a copy stall, each what-if and every form's all-stalls within 15%; the fixed form's
# pinned copies on the compute stream (0.33 ms a step with nothing beside them) are named at the
# step's copy line with a side stream's fix, not at the model's upload at start-up (report.c
# copy_stall_is_copies; the build before: holdout_gnn.py:120 shared, "pin the host memory")
check run114 "
c = row('holdout_gnn-np', 'data_starvation')
if c[8].split('/')[0].strip() != 'data_starvation' or abs(pct(c[7])) > 15:
    bad.append(f'gnn np: {c[8]} what-if {c[7]}')
c = row('holdout_gnn-p', 'copy')
if c[8].split('/')[0].strip() != 'copy_stall' or abs(pct(c[7])) > 15:
    bad.append(f'gnn p: {c[8]} what-if {c[7]}')
for tag in ('holdout_gnn-n', 'holdout_gnn-np', 'holdout_gnn-p'):
    c = row(tag, 'all stalls')
    if abs(pct(c[7])) > 15:
        bad.append(f'{tag} all stalls what-if {c[7]}')"
out=$("$BUILD/slack" report tests/data/holdout/run114/holdout_gnn-fixed.slk | grep -E -A1 "^  verdict:")
grep -q "verdict: copy stall.* at holdout_gnn.py:[0-9]* Run.step" <<< "$out" &&
  grep -q "fix: the copies are pinned already" <<< "$out" && ok || bad "run114 gnn fixed: $out"
out=$("$BUILD/slack" report tests/data/holdout/run114/holdout_gnn-p.slk | grep -E -A1 "^  verdict:")
grep -q "fix: pin the host memory" <<< "$out" && ok || bad "run114 gnn p: $out"
iterations run114/holdout_gnn-n:40 run114/holdout_gnn-np:40 run114/holdout_gnn-p:40 \
  run114/holdout_gnn-fixed:40
# GPU run 115: recorded whole, the pinned main-thread sampler's data starvation what-if within 15%
check run115 "
c = row('holdout_gnn-np', 'data_starvation')
if c[8].split('/')[0].strip() != 'data_starvation' or abs(pct(c[7])) > 15:
    bad.append(f'gnn np: {c[8]} what-if {c[7]}')"
# GPU run 116: the UNet's fixed form traced, then untraced against itself under torch.compile
# (57.27 -> 30.20 ms a step): its kernel_storm hint (eager elementwise kernels half the kernel
# time, median 22.8 us: the build before gave none) predicts the compiled step within 25%
"$BUILD/slack" report --json tests/data/holdout/run116/tr/holdout_diffusion-fixed/*.slk 2> /dev/null |
  python3 -c 'import json, re, sys
h = [x for x in json.load(sys.stdin)["gpus"][0]["compute_hints"] if x["kind"] == "kernel_storm"]
out = open("tests/data/holdout/run116/holdout_diffusion-fixed.out").read()
m = re.search(r"INPROC_MEDIAN scenario=holdout_diffusion form=compiled step_ms=([0-9.]+)", out)
ok = h and m and abs(h[0]["step_ns_if_taken"] / 1e6 - float(m.group(1))) <= 0.25 * float(m.group(1))
sys.exit(0 if ok else 1)' && ok || bad "run116: no kernel_storm hint within 25% of the compiled step"
iterations run117/holdout_gnn-fixed:40
# GPU run 118 (written after the rules): cuDNN's autotuner on a new input shape every step, 2.0 s
# a step untraced against 71 ms with benchmark off: the host's work outside CUDA in cuDNN's plan
# building, 96% of the step, read "no stall above 2%" before; now the verdict names it, at a
# cuDNN call, with the shapes' fix (report.c report_verdict, report_verdict_fix); the form with
# benchmark off still builds a plan per shape (78%): the same verdict; recorded whole (run 119)
# the same
for t in run118/holdout_autotune-b run118/holdout_autotune-fixed run119/holdout_autotune-b; do
  out=$("$BUILD/slack" report "tests/data/holdout/$t.slk" | grep -E -A2 "^  verdict:")
  grep -q "verdict: host work outside CUDA, .* at .*@ libcudnn" <<< "$out" &&
    grep -q "fix: cuDNN works on the host for each new input shape" <<< "$out" && ok || bad "$t: $out"
done
"$BUILD/slack" report --json tests/data/holdout/run118/holdout_autotune-b.slk 2> /dev/null |
  python3 -c 'import json, sys
v = json.load(sys.stdin)["gpus"][0]["verdict"]
sys.exit(0 if v["class"] == "other" and v.get("reason") == "host_outside_cuda" else 1)' && ok ||
  bad "run118: the JSON verdict not other/host_outside_cuda"
# GPU run 120: the autotuner on shapes bucketed to 4 sizes (the verdict's fix: 9.34 ms a step
# untraced, against 2.90 s and 76 ms): 15 s of tuning in the first 4 iterations, then 26 of 13 ms;
# the pattern found 3 steps of 1.75 s inside the trials, the optimizer's marks now the 26
# iterations (cls_steps.c mark_steps' `few`; the last counted, not timed), their step without the
# tracer within 15%
"$BUILD/slack" report --json tests/data/holdout/run120/holdout_autotune-s.slk 2> /dev/null |
  python3 -c 'import json, sys
g = json.load(sys.stdin)["gpus"][0]
s = g["steps"]
sys.exit(0 if s["iterations"] == 26 and s["count"] >= 24 and abs(g["replay"]["corrected_step_ns"] / 1e6 - 9.34) < 0.15 * 9.34 else 1)' &&
  ok || bad "run120: the bucketed autotuner's steps not its 26 iterations"
# GPU run 121: the pinned copies' fix measured (fs: the next batch one step ahead on a side
# stream): no gain on this loop near its host's pace; the fixed form's verdict, copy stall with
# the side stream's fix, predicts within 15% of fs's step (-6.2%)
check run121 "
c = row('holdout_gnn-fixed', 'copy')
if c[8].split('/')[0].strip() != 'copy_stall' or abs(pct(c[7])) > 15:
    bad.append(f'gnn fixed: {c[8]} what-if {c[7]}')"
# fs's steps came from the optimizer's marks, the last one marked by the harness's closing sync
# and loss read: that iteration is counted, not timed (cls_steps.c mark_steps; the build before
# timed it: 181 us a step of serialization at scenario_common.py's synchronize, the verdict)
"$BUILD/slack" report --json tests/data/holdout/run121/holdout_gnn-fs.slk 2> /dev/null |
  python3 -c 'import json, sys
g = json.load(sys.stdin)["gpus"][0]
s = g["steps"]
sys.exit(0 if s["iterations"] == 40 and s["trailing"] == 1 and g["verdict"]["class"] != "serialization" else 1)' &&
  ok || bad "run121 fs: its last iteration timed with the closing sync"
# GPU run 122: nanoGPT's character-level loop (an evaluation every 5th iteration, 8 batches
# through the model): the first optimizer step in pieces (AdamW making its state) hid the
# periodic work (steps.c steps_periodic's lead), and the steps were the 47 training iterations
# alone, the step without the tracer -32% to -40% of the loop's; now cycles of 5, every
# iteration counted (l: its window held 44 of its 60), the step within 10% of round 0
iterations run122/holdout_nanogpt-e:60 run122/holdout_nanogpt-n:60 run122/holdout_nanogpt-fixed:60 \
  run122/holdout_nanogpt-l:44
check run122 "
for f in ('e', 'n', 'fixed', 'l'):
    c = row('holdout_nanogpt-' + f, 'step without the tracer')
    if abs(pct(c[4])) > 10:
        bad.append(f'nanogpt {f}: step without the tracer {c[4]}')
# the loop is launch-bound (15 of its 22 ms idle): launch overhead at the tail's pace within 10%
c = row('holdout_nanogpt-fixed', 'launch overhead: idle untraced')
if abs(pct(c[4])) > 10:
    bad.append(f'nanogpt fixed: launch overhead {c[4]}')
# the speech model's loader in the main thread, and the threaded loader fresh: data starvation
for t in ('holdout_speech-c', 'holdout_threads-t'):
    c = row(t, 'data_starvation')
    if c[8].split('/')[0].strip() != 'data_starvation':
        bad.append(f'{t}: verdict {c[8]}')
c = row('holdout_speech-c', 'data_starvation')
if abs(pct(c[7])) > 15:
    bad.append(f'speech c: what-if {c[7]}')
# launch overhead is idle time: the speech model's packed LSTM on two pairs of streams, whose
# replay without launch gaps saved 84 ms a step where 54 were idle (+99.7% against 42 idle
# untraced), now the idle time at most
c = row('holdout_speech-fixed', 'launch overhead: idle untraced')
if abs(pct(c[4])) > 35:
    bad.append(f'speech fixed: launch overhead {c[4]}')"
check run123 "
c = row('holdout_speech-fixed', 'launch overhead: idle untraced')
if abs(pct(c[4])) > 35:
    bad.append(f'speech fixed recorded: launch overhead {c[4]}')
for f in ('l', 'e', 'fixed'):
    c = row('holdout_nanogpt-' + f, 'step without the tracer')
    if abs(pct(c[4])) > 25:
        bad.append(f'nanogpt {f} recorded: step without the tracer {c[4]}')"
iterations run123/holdout_nanogpt-l:60 run123/holdout_nanogpt-e:60 run123/holdout_nanogpt-fixed:60
# an RL trainer's 8 updates on the rollout's minibatches (no batch from the host in them) are
# not periodic work (cls_steps.c take_batches): its 20 iterations
iterations run79/holdout_rl-h:20 run79/holdout_rl-fixed:20 run82/holdout_rl-h:20
# the same rules on fresh recorded traces (GPU run 124): iterations, verdicts
iterations run124/holdout_threads-t:24 run124/holdout_rl-h:20 run124/holdout_periodic-v:30
check run124 "
for t, v in (('holdout_threads-t', 'data_starvation'), ('holdout_rl-h', 'serialization'),
             ('holdout_periodic-v', 'data_starvation')):
    c = row(t, v)
    if c[8].split('/')[0].strip() != v:
        bad.append(f'{t}: verdict {c[8]}')
c = row('holdout_rl-h', 'serialization')
if abs(pct(c[7])) > 15:
    bad.append(f'rl h: what-if {c[7]}')"
# GPU runs 125 to 127: a loader waiting on a store's latency (holdout_io) and batch inference
# copying pageable batches with non_blocking=True (holdout_infer). Run 125's pool of 2 threads
# read launch overhead: the launching thread's waits on the pool's Futures (off the CPU, in
# threading's Condition.wait) were host work kept as traced, the step without the tracer -18.7%;
# a launching thread waiting for a producer runs at the producer's pace (classify.c
# loader_bound, "The producer's pace"): data starvation, the step within 1%
check run125 "
c = row('holdout_io-t', 'data_starvation')
if c[8].split('/')[0].strip() != 'data_starvation':
    bad.append(f'io t: verdict {c[8]}')
c = row('holdout_io-t', 'step without the tracer')
if abs(pct(c[4])) > 5:
    bad.append(f'io t: step without the tracer {c[4]}')"
for run in run126 run127; do
  check $run "
for f in ('t', 'w'):
    c = row('holdout_io-' + f, 'data_starvation')
    if c[8].split('/')[0].strip() != 'data_starvation':
        bad.append(f'io {f}: verdict {c[8]}')
    c = row('holdout_io-' + f, 'step without the tracer')
    if abs(pct(c[4])) > 8:
        bad.append(f'io {f}: step without the tracer {c[4]}')
c = row('holdout_io-w', 'data_starvation')
if abs(pct(c[7])) > 15:
    bad.append(f'io w: what-if {c[7]}')
c = row('holdout_infer-n', 'copy + copy_stall')
if c[8].split('/')[0].strip() != 'copy_stall' or abs(pct(c[7])) > 15:
    bad.append(f'infer n: {c[8]} what-if {c[7]}')"
done
# the producer's pace only where the launching thread waited for one: the pool and the two
# workers, not the main thread's own requests (m), the 16 workers that kept up (fixed), nor a
# DataLoader's workers started again each epoch (runs 86 and 89: waits in 2 steps of 24)
for t in run126/holdout_io-t run126/holdout_io-w run127/holdout_io-t run127/holdout_io-w \
  run126/holdout_io-m run126/holdout_io-fixed run86/holdout_epochs-e run89/holdout_epochs-e; do
  want=0
  case $t in *-t | *-w) want=1 ;; esac
  "$BUILD/slack" report --json tests/data/holdout/$t.slk 2> /dev/null |
    python3 -c 'import json, sys
g = json.load(sys.stdin)["gpus"][0]
s = g["steps"]
has = "producer_wait_share" in s
ok = has and s["loader_bound_ns"] >= s["step_ns"] and g["replay"]["corrected_step_ns"] == s["loader_bound_ns"] \
    and g["whatif"]["launch_overhead"]["step_ns_if_fixed"] >= s["loader_bound_ns"] if has else True
sys.exit(0 if has == bool(int(sys.argv[1])) and ok else 1)' "$want" &&
    ok || bad "$t: the producer's pace (want $want)"
done
# GPU runs 128 and 129: 2 DataLoader workers, with the pin-memory thread (w2) and without
# (w2u: the main thread waits on the workers' queue itself). Recorded whole, w2's batches came
# in pairs (iterations of 35 and 590 ms in turn): 13 of 28 iterations read as pauses and the
# loop as launch-bound, the step -87.6%; a bimodal pace (steps.c step_max) times them all. The
# step without the tracer within 10% (-1.8% and -0.4% with w2's first 3 steps, on the batches
# its workers had ready before the loop, in; +8.5% and +9.9% without them: the steps after
# them wait longer while the workers' turns settle)
iterations run129/holdout_loader-w2:30 run129/holdout_loader-w2u:30 run128/holdout_loader-w2:30
for run in run128 run129; do
  check $run "
for f in ('w2', 'w2u'):
    c = row('holdout_loader-' + f, 'data_starvation')
    if c[8].split('/')[0].strip() != 'data_starvation':
        bad.append(f'loader {f}: verdict {c[8]}')
    if abs(pct(c[4])) > 25:
        bad.append(f'loader {f}: data starvation {c[4]}')
    c = row('holdout_loader-' + f, 'step without the tracer')
    if abs(pct(c[4])) > 10:
        bad.append(f'loader {f}: step without the tracer {c[4]}')"
done
# the steps on batches the workers had ready before the loop (classify.c prefetched_steps): 3 of
# w2's in runs 84 and 131 (2 workers, prefetch 2, one batch taken by the warm-up), counted as
# iterations; none in the loop whose loader keeps up (run 84's threads' fixed form: 12 workers)
for t in run84/holdout_loader-w2:3 run131/holdout_loader-w2:3 run84/holdout_threads-fixed:0; do
  got=$("$BUILD/slack" report --json "tests/data/holdout/${t%:*}.slk" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["gpus"][0]["steps"]["prefetched"])')
  [ "$got" = "${t#*:}" ] && ok || bad "${t%:*}: $got steps on prefetched batches, want ${t#*:}"
done
# GPU run 130: the loss read every step on that loop (w2s): data starvation, and the read's
# what-if bounded by the producer's pace (it saves next to nothing: within 10% of the step
# without the read)
check run130 "
c = row('holdout_loader-w2s', 'serialization')
if c[8].split('/')[0].strip() != 'data_starvation' or abs(pct(c[7])) > 10:
    bad.append(f'loader w2s: {c[8]} serialization what-if {c[7]}')
c = row('holdout_loader-w2s', 'all stalls')
if abs(pct(c[7])) > 15:
    bad.append(f'loader w2s: all stalls what-if {c[7]}')"
# GPU run 131: the same recorded whole again: every iteration a step, data starvation
iterations run131/holdout_loader-w2:30 run131/holdout_loader-w2s:30
check run131 "
for f in ('w2', 'w2s'):
    c = row('holdout_loader-' + f, 'data_starvation')
    if c[8].split('/')[0].strip() != 'data_starvation' or abs(pct(c[7])) > 15:
        bad.append(f'loader {f} recorded: {c[8]} what-if {c[7]}')"
# GPU runs 132 and 133 (format 2.9: every Python thread sampled): 4 loader threads that never
# call CUDA (holdout_threads u: the main thread pins), windowed and recorded whole. Their samples
# in torchvision's transforms make them the loader's threads: data starvation with the threads'
# fix (the build's runtime before sampled the main thread only: launch overhead, 9 ms of data
# starvation a step, the what-if 64 ms against the fixed form's 33), the GIL's waits 40 ms a
# step or more, the class within 30% of round 0's truth
for run in run132 run133; do
  out=$("$BUILD/slack" report --json "tests/data/holdout/$run/holdout_threads-u.slk" | python3 -c '
import json, sys
g = json.load(sys.stdin)["gpus"][0]
s, v = g["steps"], g["verdict"]
w = s["data_starvation_loader_wait_per_step_ns"] / 1e6
cls, busy = v["class"], s.get("loader_busy_share", 0)
ok = cls == "data_starvation" and "worker processes" in v["fix"] and w > 40 and busy > 0.5
print("ok" if ok else f"verdict {cls}, loader waits {w:.1f} ms a step, loader busy {busy}")')
  [ "$out" = ok ] && ok || bad "$run threads u: $out"
  check $run "
c = row('holdout_threads-u', 'data_starvation')
if c[8].split('/')[0].strip() != 'data_starvation' or abs(pct(c[4].split('/')[1])) > 30:
    bad.append(f'threads u: {c[8]} class {c[4]}')"
done
# GPU run 134: a loader written in NumPy (no data-loading library's frames), in the main thread
# (m) and in a pool of 2 threads that never call CUDA (p), windowed; p recorded whole too
# (run134r). Data starvation in all three; the pool's class and what-if within 15% of the
# rounds' median, its step without the tracer within 5% windowed and 15% recorded whole
check run134 "
for f in ('m', 'p'):
    c = row('holdout_pool-' + f, 'data_starvation')
    if c[8].split('/')[0].strip() != 'data_starvation':
        bad.append(f'pool {f}: verdict {c[8]}')
c = row('holdout_pool-p', 'data_starvation')
if abs(pct(c[4])) > 15 or abs(pct(c[7])) > 15:
    bad.append(f'pool p: class {c[4]} what-if {c[7]}')
if abs(pct(row('holdout_pool-p', 'step without the tracer')[4])) > 5:
    bad.append('pool p: step without the tracer')"
check run134r "
c = row('holdout_pool-p', 'data_starvation')
if c[8].split('/')[0].strip() != 'data_starvation' or abs(pct(c[4])) > 15:
    bad.append(f'pool p recorded: {c[8]} class {c[4]}')
if abs(pct(row('holdout_pool-p', 'step without the tracer')[4])) > 15:
    bad.append('pool p recorded: step without the tracer')"
# GPU run 136: 2 DataLoader workers with every Python thread sampled (7 more, waiting): still
# data starvation, within 25% of the rounds' median
check run136 "
c = row('holdout_loader-w2', 'data_starvation')
if c[8].split('/')[0].strip() != 'data_starvation' or abs(pct(c[4])) > 25:
    bad.append(f'loader w2: {c[8]} class {c[4]}')"
# Every stall fixed but launch overhead (session 35): fixed forms that keep their launches (no
# graph captured: an AMP loop's scaler read, nanoGPT-sized GPT steps, a generation loop, a store's
# loader) are held against it, within 15%; the LSTM decoder's fixed form captures a graph and is
# held against every stall fixed; the launch-bound trace's report gives both figures, the one
# with the launches kept above the other and the text saying so
for r in run57 run88 run93 run97; do
  check $r "
c = row('holdout_amp-scaler', 'all stalls')
if c[1] != 'all stalls but launch overhead' or abs(pct(c[7])) > 15:
    bad.append(f'amp scaler: {c[1]} {c[7]}')"
done
check run100 "
for t in ('holdout_gpt-g', 'holdout_gpt-t', 'holdout_trainer-lc'):
    c = row(t, 'all stalls')
    if c[1] != 'all stalls but launch overhead' or abs(pct(c[7])) > 15:
        bad.append(f'{t}: {c[1]} {c[7]}')
c = row('holdout_rnn-eager', 'all stalls')
if c[1] != 'all stalls' or abs(pct(c[7])) > 15:
    bad.append(f'rnn eager: {c[1]} {c[7]}')"
check run71 "
c = row('holdout_decode-k', 'all stalls')
if abs(pct(c[7])) > 15:
    bad.append(f'decode k: {c[1]} {c[7]}')"
out=$("$BUILD/slack" report --json tests/data/holdout/run57/holdout_amp-scaler.slk | python3 -c '
import json, sys
g = json.load(sys.stdin)["gpus"][0]
a = g["whatif"]["all_stalls"]["step_ns_if_fixed"]
h = g["whatif"]["all_but_launch_overhead"]["step_ns_if_fixed"]
v = g["verdict"]["all_but_launch_overhead_step_ns_if_fixed"]
step = g["replay"]["corrected_step_ns"]
print("ok" if a * 1.5 < h == v <= step else f"all {a} host {h} verdict {v} step {step}")')
[ "$out" = ok ] && ok || bad "amp scaler run57 what-ifs: $out"
"$BUILD/slack" report tests/data/holdout/run57/holdout_amp-scaler.slk 2>/dev/null |
  grep -q "with every stall fixed: .* with the launches left as they are)" && ok ||
  bad "amp scaler run57: the verdict's every-stall figure without the launches' one"
# A window of start-up with a few iterations at its end (run 68's text model: 4 steps of 0.96 ms
# in 9.15 s) says its steps stand for little of it; run 69's window of the same loop (22 steps)
# does not
"$BUILD/slack" report tests/data/holdout/run68/holdout_bert-t.slk 2>/dev/null |
  grep -q "note: the 4 timed steps add up to 3.85 ms of the 9.154 s window" && ok ||
  bad "run68 bert t: no note on steps that add up to a sliver of the window"
# and says so under its verdict, which would otherwise read as the job's
"$BUILD/slack" report tests/data/holdout/run68/holdout_bert-t.slk 2>/dev/null | sed -n 2,6p |
  grep -q "(of 4 timed steps, 0.0% of the window: the trace holds little" && ok ||
  bad "run68 bert t: the verdict without its sliver caution"
# its fixed form: 14 steps of an inner pattern, 2.10 ms each, in 9.16 s of warm-up iterations
"$BUILD/slack" report tests/data/holdout/run68/holdout_bert-fixed.slk 2>/dev/null |
  grep -q "note: the 14 timed steps add up to 29.34 ms" && ok ||
  bad "run68 bert fixed: no note on 14 steps of 2.10 ms in 9.16 s"
# the HTML page says both as the text does
"$BUILD/slack" report --html "$BUILD/holdout-run68.html" tests/data/holdout/run68/holdout_bert-t.slk \
  > /dev/null 2>&1 && grep -q "Note: the 4 timed steps add up to 3.85 ms" "$BUILD/holdout-run68.html" &&
  ok || bad "run68 bert t: the HTML page without the sliver note"
"$BUILD/slack" report --html "$BUILD/holdout-run57.html" tests/data/holdout/run57/holdout_amp-scaler.slk \
  > /dev/null 2>&1 && grep -q "with the launches left as they are" "$BUILD/holdout-run57.html" &&
  ok || bad "amp scaler run57: the HTML verdict without the launches-kept figure"
for t in run68/holdout_bert-t:True run69/holdout_bert-t:False; do
  got=$("$BUILD/slack" report --json "tests/data/holdout/${t%:*}.slk" 2>/dev/null |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["gpus"][0]["steps"]["window_sliver"])')
  [ "$got" = "${t#*:}" ] && ok || bad "${t%:*}: steps.window_sliver $got"
done
"$BUILD/slack" report tests/data/holdout/run69/holdout_bert-t.slk 2>/dev/null |
  grep -q "timed steps add up" && bad "run69 bert t: the sliver note on a window of the loop" || ok
# scripts/holdout_summary.py's verdicts on runs 122 and 123: nanoGPT's reads that save under 2%
# (run 122: e, l, n) with launch overhead named are not judged; run 123's e and l (5.9% and 3.5%
# of the step) neither: launch overhead named, no form captured a graph, and the fixed form idles
# 9.90 ms untraced against the reads' 1.27 and 0.76; the speech model and the threaded loader
# right: 3 of 3, 5 not judged
for r in run122 run123; do table $r | sed "s/^/$r /"; done > "$BUILD/holdout-summary-in.txt"
got=$(python3 scripts/holdout_summary.py "$BUILD/slack" "$BUILD/holdout-summary-in.txt" |
  grep "^| verdict" | cut -d'|' -f4 | sed 's/^ *//; s/ *$//')
want="3 of 3 (5 not judged, 2 of them launch overhead where no form measured a graph's saving)"
[ "$got" = "$want" ] && ok || bad "holdout_summary verdicts on runs 122, 123: $got"
# a run that traced no fixed form borrows the workload's other runs' fixed idle: run 76's trainer
# `c` (launch overhead named beside a checkpoint saving 13.5 ms) is judged alone (no fixed form
# in run 76: a miss) and not judged beside run 75, whose fixed form idles 45.9 ms untraced
table run76 | sed "s/^/run76 /" > "$BUILD/holdout-summary-76.txt"
table run75 | sed "s/^/run75 /" | cat - "$BUILD/holdout-summary-76.txt" > "$BUILD/holdout-summary-7576.txt"
for t in 76:"1 of 2 (0 not judged" 7576:"2 of 2 (4 not judged, 3 of them"; do
  got=$(python3 scripts/holdout_summary.py "$BUILD/slack" "$BUILD/holdout-summary-${t%%:*}.txt" |
    grep "^| verdict" | cut -d'|' -f4)
  case "$got" in *"${t#*:}"*) ok ;; *) bad "holdout_summary run ${t%%:*}: $got" ;; esac
done
# the AMP loop's scaler form (run 93) is the fixed form with a sync added: fixed's launch overhead
# against the graph-captured form (23 ms a step) is its truth too, the top one beside the sync's
# 1 ms: slack's verdict launch overhead is right there
table run93 | grep "^| holdout_amp-scaler | launch overhead as fixed's" |
  grep -q "| launch_overhead / launch_overhead |" && ok || bad "run93 amp scaler: inherited launch truth"
# the stall after the verdict's (verdict.next, the text's "then:"): run 90's trainer names launch
# overhead, then the checkpoint saved in the loop (serialization, its step fixed alone 61.0 ms
# against 76.0 measured without it: within 25%, as above); the pageable inference loop (run 126) has no second stall
# whose fix saves 2% of its step
got=$("$BUILD/slack" report --json tests/data/holdout/run90/holdout_trainer-c.slk |
  python3 -c 'import json, sys; v = json.load(sys.stdin)["gpus"][0]["verdict"]; n = v.get("next", {})
print(v["class"], n.get("class"), abs(n.get("step_ns_if_fixed", 0) / 76.04e6 - 1) < 0.25)')
[ "$got" = "launch_overhead serialization True" ] && ok || bad "run90 trainer c: verdict.next $got"
"$BUILD/slack" report tests/data/holdout/run90/holdout_trainer-c.slk |
  grep -q "^    then: serialization, .* at holdout_trainer.py:87 Run.save: .*; fixed alone: .*; a CUDA graph captures no step that waits on the host" && ok ||
  bad "run90 trainer c: no then: line"
"$BUILD/slack" report --html - tests/data/holdout/run90/holdout_trainer-c.slk 2>/dev/null |
  grep -q "<br>Then: <i [^>]*></i>serialization, .*Run.save.*fixed alone: " && ok ||
  bad "run90 trainer c: no Then: in the page's verdict"
# (the graph's caveat only where the verdict is launch overhead: run 78's offload p names its round
# trip, then its copies)
"$BUILD/slack" report tests/data/holdout/run78/holdout_offload-p.slk | grep "^    then: " |
  grep -q "captures no step" && bad "run78 offload p: the graph's caveat after serialization" || ok
"$BUILD/slack" report --json tests/data/holdout/run126/holdout_infer-n.slk |
  python3 -c 'import json, sys; sys.exit("next" in json.load(sys.stdin)["gpus"][0]["verdict"])' &&
  ok || bad "run126 infer n: a verdict.next"
# the verdict's truth for a cause a form's rows do not measure (VERDICT_ROWS): the offload loop's
# pageable form `o` (run 78) has its copies measured (o against p) and its round trip to the
# CPU's optimizer, whose fix (the optimizer on the GPU: fixed) saves 63 ms where pinning saves 25:
# slack's serialization is the truth's top there
table run78 | grep "^| holdout_offload-o | serialization: the verdict's truth" |
  grep -q "| serialization / serialization |" && ok || bad "run78 offload o: the verdict's truth"
# cuDNN's autotuner (run 118, `b`: its cause is `other`, no stall's) and the bucketed form (run
# 120, `s`: a fix beyond `fixed`) get no all-stalls row
table run118 | grep -q "^| holdout_autotune-b | all stalls" && bad "run118 autotune b: all-stalls row" || ok
table run120 | grep -q "^| holdout_autotune-s | all stalls" && bad "run120 autotune s: all-stalls row" || ok
# a run without a graph form borrows the graph's saving other runs measured on the same form:
# run 123's nanoGPT e and l (launch overhead named, reads saving 1.27 and 0.76 ms) are not judged
# alone and right beside run 137 (a graph saves 8.45 and 4.91 ms there)
table run123 | sed "s/^/run123 /" > "$BUILD/holdout-summary-123.txt"
table run137 | sed "s/^/run137 /" | cat "$BUILD/holdout-summary-123.txt" - > "$BUILD/holdout-summary-123137.txt"
for t in 123:"1 of 1 (2 not judged" 123137:"6 of 6 (0 not judged"; do
  got=$(python3 scripts/holdout_summary.py "$BUILD/slack" "$BUILD/holdout-summary-${t%%:*}.txt" |
    grep "^| verdict" | cut -d'|' -f4)
  case "$got" in *"${t#*:}"*) ok ;; *) bad "holdout_summary runs ${t%%:*}: $got" ;; esac
done
# GPU run 138: the trainer's step captured as a CUDA graph saves 39.5 ms of its fixed form's 73.8:
# launch overhead is the truth's top beside the checkpoint (c: 18.6 ms) and the log line with
# it (lc: 10.1), slack's verdict in both; its launch overhead within 10% of the graph's saving
check run138 "
for tag in ('holdout_trainer-c', 'holdout_trainer-lc'):
    c = row(tag, 'launch overhead as fixed')
    if c[8] != 'launch_overhead / launch_overhead': bad.append(tag + ': ' + c[8])
    if abs(pct(c[4])) > 10: bad.append(tag + ': launch overhead ' + c[4])"
# GPU run 137: nanoGPT's step captured as a CUDA graph measures its launch overhead (fixed less
# graph 8.08 ms a step, l less lg 4.91) above every read's saving: slack's verdict launch overhead
# is the truth's top in l, e and fixed
check run137 "
for tag in ('holdout_nanogpt-l', 'holdout_nanogpt-e', 'holdout_nanogpt-fixed'):
    c = [r for r in rows if r[0] == tag and '/' in r[8]][0]
    if c[8] != 'launch_overhead / launch_overhead': bad.append(tag + ': ' + c[8])
if not row('holdout_nanogpt-l', 'launch_overhead')[2].startswith('4.91'): bad.append('l truth')"
# the graph form: its periodic evaluation found after the capture's 3 eager warm-up steps (7
# plain iterations before the first evaluation): 50 steps in cycles of 5, not 10 steps of 5
# iterations each (the step without the tracer 53.3 ms against 11.4 untraced before)
got=$("$BUILD/slack" report --json tests/data/holdout/run137/holdout_nanogpt-graph.slk |
  python3 -c 'import json, sys; s = json.load(sys.stdin)["gpus"][0]["steps"]; print(s["count"], s["cycle"], s["step_ns"] < 15e6)')
[ "$got" = "50 5 True" ] && ok || bad "run137 nanogpt graph: steps $got"
# GPU run 139: the AMP loop's nancheck beside its graph form (21.84 ms saved a step, the NaN
# check 0.87): launch overhead the truth's top and slack's; the periodic loop's fixed form idles
# 12.87 ms untraced, above run 71's metric read (7.62): not judged beside it
check run139 "
c = row('holdout_amp-nancheck', 'launch overhead as fixed')
if c[8] != 'launch_overhead / launch_overhead': bad.append('nancheck: ' + c[8])
if not row('holdout_periodic-fixed', 'launch overhead: idle untraced')[2].startswith('12.87'): bad.append('periodic idle')"
# GPU run 140 (H100): gradient accumulation behind a DataLoader in the main thread: data
# starvation within 10% of its truth (910.61 ms a step), its what-if within 15% of the fixed step
check run140 "
c = row('holdout_accum-m', 'data_starvation')
if c[8] != 'data_starvation / data_starvation': bad.append('accum m: ' + c[8])
if abs(pct(c[4])) > 10: bad.append('accum m class ' + c[4])
if abs(pct(c[7])) > 15: bad.append('accum m what-if ' + c[7])"
# GPU run 141 (H100): the fixed steps replayed from CUDA graphs save more than each measured
# cause (periodic 20.92 ms, staging 9.77, streams 6.69): launch overhead the truth's top and
# slack's; the staging loop's launch overhead within 10% of its graph's saving
check run141 "
for tag in ('holdout_periodic-s', 'holdout_staging-f', 'holdout_streams-pageable'):
    c = row(tag, 'launch overhead as fixed')
    if c[8] != 'launch_overhead / launch_overhead': bad.append(tag + ': ' + c[8])
if abs(pct(row('holdout_staging-f', 'launch overhead as fixed')[4])) > 10: bad.append('staging')"
# and by run 141's graphs, run 59's stream loop and run 140's periodic and staging loops are
# judged (before: not judged, no graph form): right
table run59 | sed "s/^/run59 /" > "$BUILD/holdout-summary-141.txt"
table run140 | sed "s/^/run140 /" >> "$BUILD/holdout-summary-141.txt"
table run141 | sed "s/^/run141 /" >> "$BUILD/holdout-summary-141.txt"
SLACK_SUMMARY_MISSES=1 python3 scripts/holdout_summary.py "$BUILD/slack" "$BUILD/holdout-summary-141.txt" > "$BUILD/holdout-summary-141.out"
for t in "run59 holdout_streams-pageable" "run140 holdout_periodic-s" "run140 holdout_staging-f"; do
  grep -q "^  $t: launch_overhead / launch_overhead (a graph saves" "$BUILD/holdout-summary-141.out" &&
    ok || bad "$t: not judged right by run 141's graph"
done
# GPU run 142 (H100), a workload written in session 40: augmentation launched one sample at a
# time (p), with a coin read per sample (pi), batched (fixed), fixed's step from a graph: launch
# overhead the verdict and the truth's top in p and fixed; fixed's launch-overhead what-if within
# 15% of the graph's step; the verdict's site in p and pi the per-sample loop's function
check run142 "
for tag in ('holdout_augment-p', 'holdout_augment-fixed'):
    c = [r for r in rows if r[0] == tag and '/' in r[8]][0]
    if c[8] != 'launch_overhead / launch_overhead': bad.append(tag + ': ' + c[8])
c = row('holdout_augment-fixed', 'launch_overhead')
if abs(pct(c[7])) > 15: bad.append('fixed what-if ' + c[7])"
for f in p pi; do
  "$BUILD/slack" report tests/data/holdout/run142/holdout_augment-$f.slk 2> /dev/null |
    grep -q "verdict: launch overhead, .* at holdout_augment.py Run.per_sample: the launches of" &&
    ok || bad "run142 augment $f: the verdict's site is not the per-sample loop"
done
# GPU run 144 (H100), session 41: the per-sample loop's whole step replayed from a CUDA graph
# (pgraph, 4.19 ms): slack's launch overhead and its what-if, the fix it models, within 10% of
# p less pgraph and of pgraph's step (one round: the rounds after it failed on a freed optimizer)
check run144 "
c = row_at('holdout_augment-p', 'launch_overhead', '4.19')
if c[8] != 'launch_overhead / launch_overhead': bad.append('p: ' + c[8])
if abs(pct(c[4])) > 10: bad.append('p class ' + c[4])
if abs(pct(c[7])) > 10: bad.append('p what-if ' + c[7])"
# GPU run 143 (H100), session 41: gradient accumulation whose losses wait in a list, the loader in
# the main thread (accum mr, the hand-over bound's case): data starvation the verdict and the
# truth's top, within 15% of its truth; pi judged by the batching fix's saving: right
check run143 "
c = row('holdout_accum-mr', 'data_starvation')
if c[8] != 'data_starvation / data_starvation': bad.append('accum mr: ' + c[8])
if abs(pct(c[4])) > 15: bad.append('accum mr class ' + c[4])
c = row('holdout_augment-pi', 'launch_overhead: the verdict')
if c[8] != 'launch_overhead / launch_overhead': bad.append('pi: ' + c[8])"
# GPU run 145 (H100), session 42: the per-sample loop against its own graph in five rounds (p less
# pgraph 16.82 ms, 15.46..18.77): slack's launch overhead and its what-if within 10%; the
# bincount's syncs (metrics t, b) serialization, the verdict right in both, t's class within 10%
check run145 "
c = row_at('holdout_augment-p', 'launch_overhead', '4.20')
if c[8] != 'launch_overhead / launch_overhead': bad.append('p: ' + c[8])
if abs(pct(c[4])) > 10: bad.append('p class ' + c[4])
if abs(pct(c[7])) > 10: bad.append('p what-if ' + c[7])
for f in ('t', 'b'):
    c = row('holdout_metrics-' + f, 'serialization')
    if c[8] != 'serialization / serialization': bad.append(f + ': ' + c[8])
if abs(pct(row('holdout_metrics-t', 'serialization')[4])) > 10:
    bad.append('metrics t class ' + row('holdout_metrics-t', 'serialization')[4])"
# GPU run 146 (H100), session 42: graph forms for the hidden syncs' loop and the foreground
# logger's (fixed's step replayed from a CUDA graph): the truth's top is launch overhead where
# fixed less graph saves more than the sync (mask: 2.47 ms against 1.23; fg: 5.01 against 1.09),
# serialization where it does not (free, log): slack's verdict right in all four; its every-stall
# what-if within 5% of the graph's step
check run146 "
want = {'holdout_hidden-free': 'serialization', 'holdout_hidden-log': 'serialization',
        'holdout_hidden-mask': 'launch_overhead', 'holdout_logger-fg': 'launch_overhead'}
for tag, v in want.items():
    c = row(tag, 'serialization')
    if c[8] != v + ' / ' + v: bad.append(tag + ': ' + c[8])
    c = row(tag, 'all stalls (against graph')
    if abs(pct(c[7])) > 5: bad.append(tag + ' all stalls against the graph ' + c[7])"
# GPU run 147 (H100), session 42: a recommender written after every rule (holdout_recsys): its
# categorical strings hashed in the main thread (h), each table's ids deduplicated by
# torch.unique, a sync per table (u), neither (fixed): the verdicts right in all three (fixed no
# stall above 2%), h's data starvation within 15% of its truth (-11.1%) and its what-if within 5%
# of the fixed form's step (+1.3%); u's what-if keeps unique's other launches, which the fix that
# drops the deduplication also drops: +23%, not checked
check run147 "
for f, v in (('h', 'data_starvation'), ('u', 'serialization')):
    c = row('holdout_recsys-' + f, v)
    if c[8] != v + ' / ' + v: bad.append(f + ': ' + c[8])
c = row('holdout_recsys-h', 'data_starvation')
if abs(pct(c[4])) > 15: bad.append('h class ' + c[4])
if abs(pct(c[7])) > 5: bad.append('h what-if ' + c[7])
if row('holdout_recsys-fixed', 'largest stall')[8].split('/')[0].strip() != 'none':
    bad.append('recsys fixed: a stall')"
# GPU run 148 (H100), session 42: the recommender's deduplication without unique's sync (us): u
# less us is the syncs alone, 2.34 ms: slack's serialization within 15% (+12.8%), its what-if
# within 5% of us's step (-1.9%), serialization the truth's top and the verdict
check run148 "
c = row_at('holdout_recsys-u', 'serialization', '9.80')
if c[8] != 'serialization / serialization': bad.append('u: ' + c[8])
if abs(pct(c[4])) > 15: bad.append('u class against us ' + c[4])
if abs(pct(c[7])) > 5: bad.append('u what-if against us ' + c[7])"
# GPU run 149 (H100), session 42: the encoder's fixed step from a CUDA graph per batch width:
# bert m judged (fixed less graph 0.30 ms against the length read's 1.30): serialization the
# verdict and the truth's top, the class within 10%, its what-ifs within 5%
check run149 "
c = row('holdout_bert-m', 'serialization')
if c[8] != 'serialization / serialization': bad.append('m: ' + c[8])
if abs(pct(c[4])) > 10: bad.append('m class ' + c[4])
if abs(pct(c[7])) > 5: bad.append('m what-if ' + c[7])
c = row('holdout_bert-m', 'all stalls (against graph')
if abs(pct(c[7])) > 5: bad.append('m all stalls against the graph ' + c[7])"
# GPU run 150 (H100), session 42: the encoder's tokenizer in the main thread (t) in a 30 s
# window: data starvation the verdict and the truth's top (above fixed less graph), its what-ifs
# within 10% of fixed's step and 5% of the graph's
check run150 "
c = row('holdout_bert-t', 'data_starvation')
if c[8] != 'data_starvation / data_starvation': bad.append('t: ' + c[8])
if abs(pct(c[7])) > 10: bad.append('t what-if ' + c[7])
c = row('holdout_bert-t', 'all stalls (against graph')
if abs(pct(c[7])) > 5: bad.append('t all stalls against the graph ' + c[7])"
# GPU runs 151 and 152 (H100), session 43: a transformer on batches of 14 lengths drawn at random
# under a device-memory limit (holdout_alloc), the allocator retrying in no steady round: every
# form healthy. Its traces met each length's first time (cuDNN's plan for the attention, 100-270
# ms a step against 30) scattered through the window, which read as host work outside CUDA, 58%
# of the step: those steps are left out (steps on a new shape), no stall above 2%, and the step
# without the tracer within 10% of round 0
for r in run151 run152 run157; do
  check $r "
for c in rows:
    if c[1] == 'step without the tracer' and abs(pct(c[4])) > 10: bad.append(c[0] + ' step ' + c[4])
    if c[1] == 'serialization' and c[8] != 'none / none': bad.append(c[0] + ': ' + c[8])"
done
for f in tests/data/holdout/run151/holdout_alloc-cap.slk tests/data/holdout/run152/holdout_alloc-tight.slk; do
  "$BUILD/slack" report --json "$f" | python3 -c "
import json, sys
st = json.load(sys.stdin)['gpus'][0]['steps']
sys.exit(0 if st['shape_new'] >= 10 and st['shape_new_step_ns'] > 3 * st['step_ns'] else 1)" &&
    ok || bad "$f: no steps on a new shape left out"
done
# GPU run 157 (H100), session 43: holdout_alloc frag's trace held a pass over 14 new lengths,
# a fifth of the optimizer marks' intervals pauses: the marks' steps count them (steps.c
# steps_from_anchors), 56 iterations of the 57 the process ran in the window
iterations run157/holdout_alloc-frag:56
# GPU run 153 (H100), session 43: a GPU-bound transformer step timed each step (holdout_timing):
# torch.cuda.synchronize costs 0.84 ms, under the healthy bar (no stall), end.synchronize 1.32
# (serialization); both what-ifs within 2% of fixed's step, fixed no stall
check run153 "
if row('holdout_timing-sync', 'serialization')[8] != 'none / none': bad.append('sync: a stall')
c = row('holdout_timing-ev', 'serialization')
if c[8] != 'serialization / serialization': bad.append('ev: ' + c[8])
for f in ('sync', 'ev'):
    c = row('holdout_timing-' + f, 'serialization')
    if abs(pct(c[7])) > 2: bad.append(f + ' what-if ' + c[7])
if row('holdout_timing-fixed', 'largest stall')[8].split('/')[0].strip() != 'none':
    bad.append('timing fixed: a stall')"
# GPU run 155 (H100), session 43: a set-prediction loss matched on the host (holdout_matcher cpu,
# a round trip: serialization, its class within 10%, what-if within 5%) and on the GPU with a
# Python float copied in 40 times a step (dsync: copy stall, its class within 5%, what-if within
# 2%, and the small tensors' fix, not pinning)
check run155 "
for f, v in (('cpu', 'serialization'), ('dsync', 'copy_stall')):
    c = row('holdout_matcher-' + f, v)
    if c[8] != v + ' / ' + v: bad.append(f + ': ' + c[8])
c = row('holdout_matcher-cpu', 'serialization')
if abs(pct(c[4])) > 10: bad.append('cpu class ' + c[4])
if abs(pct(c[7])) > 5: bad.append('cpu what-if ' + c[7])
c = row('holdout_matcher-dsync', 'copy_stall')
if abs(pct(c[4])) > 5: bad.append('dsync class ' + c[4])
if abs(pct(c[7])) > 2: bad.append('dsync what-if ' + c[7])
if row('holdout_matcher-fixed', 'largest stall')[8].split('/')[0].strip() != 'none':
    bad.append('matcher fixed: a stall')"
"$BUILD/slack" report tests/data/holdout/run155/holdout_matcher-dsync.slk | grep -A1 '^  verdict: copy stall' |
  grep -q 'fix: small tensors made from Python values' && ok || bad "run155 dsync: not the small tensors' fix"
"$BUILD/slack" report tests/data/holdout/run53/resnet_seed-c.slk | grep -A1 '^  verdict: copy stall' |
  grep -q 'fix: pin the host memory' && ok || bad "run53 seed c: a batch's copy stall without the pinning fix"
# GPU run 156 (H100), session 43: a read of a GPU value in a custom autograd Function's backward,
# on autograd's thread (holdout_backward b): it cost nothing measurable; slack's serialization is
# small and not the verdict, and is charged to the backward's own line on that thread
check run156 "
c = row('holdout_backward-b', 'serialization')
if c[8].split('/')[0].strip() == 'serialization': bad.append('b: serialization the verdict')
if float(c[3]) > 2: bad.append('b: serialization ' + c[3])"
"$BUILD/slack" report tests/data/holdout/run156/holdout_backward-b.slk |
  grep -q 'then: serialization.*at holdout_backward.py:42 ClipRead.backward: cudaStreamSynchronize' &&
  ok || bad "run156 b: the read not charged to ClipRead.backward"
# GPU run 162 (H100), session 45: two workloads written after every rule, pinned batches copied
# without non_blocking (`x.cuda()`). Behind a GPU-bound ResNet-50 (holdout_blocking b) it cost
# 0.26 ms of a 34.7 ms step: no stall above 2%, in b and in fixed, and b's copy stall what-if
# within 2%. Before a launch-bound step (holdout_wide b): the verdict launch overhead (a graph
# saves more than the blocking copies), then the copy stall, whose what-if is within 5% of fixed's
# step (the host launching while the copy runs) and its class within 10% (the launch gaps after
# each wait are the copy's lost lead: cls_gaps.c); fixed's launch overhead what-if within 10% of
# the graph form's step
check run162 "
for f in ('b', 'fixed'):
    c = row('holdout_blocking-' + f, 'copy_stall' if f == 'b' else 'largest stall')
    if c[8].split('/')[0].strip() != 'none': bad.append('blocking ' + f + ': ' + c[8])
if abs(pct(row('holdout_blocking-b', 'copy_stall')[7])) > 2:
    bad.append('blocking b what-if ' + row('holdout_blocking-b', 'copy_stall')[7])
c = row('holdout_wide-b', 'copy_stall')
if c[8] != 'launch_overhead / launch_overhead': bad.append('wide b: ' + c[8])
if abs(pct(c[7])) > 5: bad.append('wide b copy stall what-if ' + c[7])
if abs(pct(c[4])) > 10: bad.append('wide b copy stall class ' + c[4])
if row('holdout_wide-b', 'then:')[3] != 'copy_stall': bad.append('wide b: then not the copy stall')
c = row('holdout_wide-fixed', 'launch_overhead')
if abs(pct(c[7])) > 10: bad.append('wide fixed launch overhead what-if ' + c[7])"
# own_fix RUN/TAG: data starvation's verdict with the fix for the script's own code
own_fix() {
  "$BUILD/slack" report "tests/data/holdout/$1.slk" | grep -A1 '^  verdict: data starvation' |
    grep -q "fix: the launching thread's own code runs before each batch's copy" && ok ||
    bad "$1: not the own code's fix"
}
# gc_collect RUN CLASS_BAR: holdout_gc's gc.collect() after each optimizer step, the host's own
# work before the batch's copy: data starvation, its class within CLASS_BAR %, its what-if within
# 5%, and the fix for the script's own code
gc_collect() {
  check "$1" "
c = row('holdout_gc-gc', 'data_starvation')
if c[8] != 'data_starvation / data_starvation': bad.append('gc: ' + c[8])
if abs(pct(c[4])) > $2: bad.append('gc class ' + c[4])
if abs(pct(c[7])) > 5: bad.append('gc what-if ' + c[7])"
  own_fix "$1/holdout_gc-gc"
}
# run 163 (session 46, H100): holdout_gc, written after every rule: 149.19 ms against 148.62
# measured, its what-if +1.4%
gc_collect run163 5
# run 164: holdout_gc's fixed form copies its 19 MB batch on the compute stream; slack's verdict, a
# copy stall fixed by a side-stream prefetch, against the pf form (that fix: 0.29 ms saved), its
# what-if within 0.4%; pf itself no stall
check run164 "
c = row('holdout_gc-fixed', 'copy + copy_stall')
if c[8] != 'copy_stall / copy + copy_stall': bad.append('gc fixed: ' + c[8])
if abs(pct(c[7])) > 5: bad.append('gc fixed what-if ' + c[7])"
"$BUILD/slack" report tests/data/holdout/run164/holdout_gc-pf.slk | grep -q '^  verdict: no stall above 2%' &&
  ok || bad "run164 gc pf: a stall"
# run 165r: the collection recorded whole (slack record, no tail): the class -4.4%, the what-if
# +1.7%
gc_collect run165r 10
# run 163r: run 162's blocking copies recorded whole (slack record, no untraced tail): behind
# ResNet-50 no stall; before the launch-bound MLP launch overhead, then the copy stall (its class
# -1.1%, its what-if -3.5%); fixed's launch overhead what-if -7.1%
check run163r "
if row('holdout_blocking-b', 'copy_stall')[8] != 'none / none': bad.append('blocking b')
c = row('holdout_wide-b', 'copy_stall')
if c[8] != 'launch_overhead / launch_overhead': bad.append('wide b: ' + c[8])
if abs(pct(c[4])) > 10: bad.append('wide b copy stall class ' + c[4])
if abs(pct(c[7])) > 10: bad.append('wide b copy stall what-if ' + c[7])
if row('holdout_wide-b', 'then:')[3] != 'copy_stall': bad.append('wide b: then not the copy stall')
if abs(pct(row('holdout_wide-fixed', 'launch_overhead')[7])) > 10: bad.append('wide fixed what-if')"
# run 166 (session 47, H100): two workloads written after every rule, whose syncs the library
# makes. Autograd's anomaly detection (NaN checks read on autograd's thread): serialization, its
# what-if within 10% (+6.7%), the fix that names the switch; PPO's update (Categorical's argument
# checks read on the host; the truths per optimizer step, STEPS_PER_ITER): serialization in v and
# sb3, the what-ifs +4.5% and +9.2%, the fix validate_args=False
check run166 "
c = row('holdout_anomaly-anomaly', 'serialization')
if c[8] != 'serialization / serialization': bad.append('anomaly: ' + c[8])
if abs(pct(c[7])) > 10: bad.append('anomaly what-if ' + c[7])
for f in ('v', 'sb3'):
    c = row('holdout_ppo-' + f, 'serialization')
    if c[8] != 'serialization / serialization': bad.append('ppo ' + f + ': ' + c[8])
    if abs(pct(c[7])) > 15: bad.append('ppo ' + f + ' what-if ' + c[7])
    if abs(pct(c[4])) > 20: bad.append('ppo ' + f + ' class ' + c[4])"
# run 167r: recorded whole (no tail): PPO v serialization again, the class within 10%, the what-if
# within 5%; anomaly detection serialization (the truth's top; launch overhead before session 51's
# stack capture rule), launch overhead then
check run167r "
c = row('holdout_ppo-v', 'serialization')
if c[8] != 'serialization / serialization': bad.append('ppo v whole: ' + c[8])
if abs(pct(c[4])) > 10: bad.append('ppo v whole class ' + c[4])
if abs(pct(c[7])) > 5: bad.append('ppo v whole what-if ' + c[7])
c = row('holdout_anomaly-anomaly', 'serialization')
if c[8] != 'serialization / serialization': bad.append('anomaly whole: ' + c[8])
if row('holdout_anomaly-anomaly', 'then:')[3] != 'launch_overhead': bad.append('anomaly whole: then')"
# run 166's anomaly detection without the NaN checks (trace: the stacks alone): the launching
# thread's samples in the traceback module between launches, that share of its launch gaps
# `other` (stack_capture): the class within 10% of the stacks' cost untraced (-9.5%; -93.5%
# before the rule), and the text says so under the class table
check run166 "
c = row('holdout_anomaly-trace', 'other')
if abs(pct(c[4])) > 10: bad.append('anomaly trace other ' + c[4])"
"$BUILD/slack" report tests/data/holdout/run166/holdout_anomaly-trace.slk |
  grep -q '^    (of other, 7.00 ms per step the launching thread spent capturing Python stacks' &&
  ok || bad "run166 anomaly trace: no stack capture line"
library_fix() { # run/tag, the words the verdict's fix must hold
  "$BUILD/slack" report "tests/data/holdout/$1.slk" | grep -A1 '^  verdict: serialization' |
    grep -q "fix: $2" && ok || bad "$1: not the fix '$2'"
}
library_fix run166/holdout_anomaly-anomaly "autograd's anomaly detection is on"
library_fix run166/holdout_ppo-v "torch.distributions checks"
library_fix run166/holdout_ppo-sb3 "torch.distributions checks"
# --steps N over PPO's optimizer steps (16 an update, no kernel once an update): 60 updates
# group every 16; 100, no multiple of them, keeps the steps found and says so
"$BUILD/slack" report --steps 60 tests/data/holdout/run166/holdout_ppo-v.slk |
  grep -q '^  59 steps of 83.72 ms (grouped: --steps 60: every 16 steps.*; 60 iterations' &&
  ok || bad "run166 ppo v --steps 60: not the updates"
"$BUILD/slack" report --steps 100 tests/data/holdout/run166/holdout_ppo-v.slk |
  grep -q '^    note: --steps 100: no step candidate, no kernel and no grouping' &&
  ok || bad "run166 ppo v --steps 100: no note"
# a read in a custom backward (Python on autograd's thread, run 156: its verdict launch overhead,
# serialization's top site that read) is the script's own: the usual fix, not anomaly detection's
"$BUILD/slack" report tests/data/holdout/run156/holdout_backward-b.slk |
  sed -n '/^    serialization /,/^      fix:/p' | grep -q '^      fix: move reads of GPU values' &&
  ok || bad "run156 backward b: serialization's fix not the usual one"
# data starvation's fix where the launching thread's samples before the batch's copy are in no
# data-loading library: the script's own code (run 49's tokenizer in the main thread), not the
# DataLoader's text; a DataLoader in the main thread (run 52's w0) keeps the DataLoader's
own_fix run49/holdout_gpt-t
"$BUILD/slack" report tests/data/holdout/run52/holdout_loader-w0.slk | grep -A1 '^  verdict: data starvation' |
  grep -q 'fix: more DataLoader workers' && ok || bad "run52 w0: not the DataLoader's fix"
# the runs without a graph form borrow fixed's saving against it as the workload's other runs
# measured it, the median of a run's processes (one measure of the same two forms): run 146's
# hidden loop, 0.09, 0.17 and 2.47 ms, lends 0.17 to run 62, whose mask is then serialization's
table run62 | sed "s/^/run62 /" > "$BUILD/holdout-summary-146.txt"
table run146 | sed "s/^/run146 /" >> "$BUILD/holdout-summary-146.txt"
SLACK_SUMMARY_MISSES=1 python3 scripts/holdout_summary.py "$BUILD/slack" "$BUILD/holdout-summary-146.txt" |
  grep -q "run62 holdout_hidden-mask: serialization / serialization (a graph saves 0.17 ms in run146" &&
  ok || bad "run62 hidden mask: not judged by run 146's pooled graph saving"
table run71 | sed "s/^/run71 /" > "$BUILD/holdout-summary-71.txt"
table run139 | sed "s/^/run139 /" >> "$BUILD/holdout-summary-71.txt"
python3 scripts/holdout_summary.py "$BUILD/slack" "$BUILD/holdout-summary-71.txt" |
  grep -q "^| verdict.*(2 not judged, 1 of them" && ok || bad "run71 periodic s beside run139: judged"
# GPU run 169 (H100): recorded whole with SLACK_PACE_PROBE mid-run (runtime/writer.c): the
# stretch's calls time the host untraced (tail.c tail_gap: a WINDOW record, the traced pace from
# the calls either side), the windows either side classified; the loop's kernels after the attach
# joined by order (no correlation join across it: run 168 read 22.97 s of queued work and no
# launch overhead); the launch-bound form's launch overhead at the stretch's pace +10.5% of its
# idle untraced, the step +8.4%
check run169r "
c = row('holdout_wide-fixed', 'launch overhead: idle untraced')
if abs(pct(c[4])) > 15 or 'tail' not in c[3]:
    bad.append(f'wide fixed launch overhead {c[3]} {c[4]}')
c = row('holdout_wide-fixed', 'step without the tracer')
if abs(pct(c[4])) > 10:
    bad.append(f'wide fixed step {c[4]}')
if row('holdout_wide-fixed', 'launch_overhead')[8].split('/')[0].strip() != 'launch_overhead':
    bad.append('wide fixed verdict')
c = row('holdout_gc-gc', 'data_starvation')
if c[8].split('/')[0].strip() != 'data_starvation' or abs(pct(c[7])) > 10:
    bad.append(f'gc {c[8]} what-if {c[7]}')"
out=$("$BUILD/slack" report --json tests/data/holdout/run169r/holdout_wide-fixed.slk | python3 -c '
import json, sys
g = json.load(sys.stdin)["gpus"][0]
t = g["tracer"].get("untraced_tail") or {}
q = g["other_ns"]["queued"] / g["window_ns"]
ok = ("mid-run" in t.get("where", "") and 1.2 < t.get("host_slowdown", 0) < 2 and q < 0.02
      and "assumed_pace" not in g["tracer"])
print("ok" if ok else "stretch %s, queued %.3f of the window" % (t, q))')
[ "$out" = ok ] && ok || bad "run169r wide fixed: $out"
"$BUILD/slack" report tests/data/holdout/run169r/holdout_gc-gc.slk |
  grep -q "^pace probe (SLACK_PACE_PROBE): " && ok || bad "run169r gc: the probe's cut not said"
# GPU run 170 (H100): the seed's three causes recorded whole with the defaults (the probe not
# asked for: SLACK_PACE_PROBE 2s/20s fired after 20 s of its 330 ms steps): data starvation first,
# every stall's what-if -1.2% of the fixed form's step
check run170r "
c = row('resnet_seed-lcs', 'all stalls but launch overhead')
if c[8].split('/')[0].strip() != 'data_starvation' or abs(pct(c[7])) > 5:
    bad.append(f'seed lcs {c[8]} what-if {c[7]}')"
"$BUILD/slack" info tests/data/holdout/run170r/resnet_seed-lcs.slk | grep -q "setting.SLACK_PACE_PROBE 2000ms/20000ms" &&
  "$BUILD/slack" report tests/data/holdout/run170r/resnet_seed-lcs.slk | grep -q "^  untraced stretch (SLACK_PACE_PROBE): " &&
  ok || bad "run170r seed lcs: no stretch under the default"
# run 169's launch-bound trace (1 M records) is read in windows: the probe's cut alone does not
# force a whole read as production windows do (report_window.c); no window holds the stretch, the
# stretch's pace reaches every window (tail_prepass), and the figures stay the whole read's
out=$(for wr in "" "--window-records 5000000"; do
  "$BUILD/slack" report --json $wr tests/data/holdout/run169r/holdout_wide-fixed.slk | python3 -c '
import json, sys
d = json.load(sys.stdin)
g = d["gpus"][0]
t = g["tracer"].get("untraced_tail") or {}
print(d.get("analysis_windows", 0), "mid-run" in t.get("where", ""),
      round(g["steps"]["launch_overhead_untraced_tail_per_step_ns"] / 1e6, 2))'
done | python3 -c '
import sys
(w1, m1, l1), (w2, m2, l2) = [l.split() for l in sys.stdin]
ok = int(w1) > 2 and int(w2) == 0 and m1 == m2 == "True" and abs(float(l1) / float(l2) - 1) < 0.1
print("ok" if ok else "windowed %s %s %s, whole %s %s %s" % (w1, m1, l1, w2, m2, l2))')
[ "$out" = ok ] && ok || bad "run169r wide fixed in windows: $out"
# GPU runs 171-174 (session 49, H100): two loops written after every rule. holdout_offact's
# saved activations offloaded by save_on_cpu: pinned, the copies' class within 5% of what the fix
# saves, the verdict's fix names the offload (run 171); pageable in a 30 s window (run 172) and
# recorded whole (run 173), the copies' what-if within 10% of the pinned form's step.
# holdout_cpuloss's loss on the CPU: a round trip, serialization first, its what-if within 1%
# (run 171 windowed); recorded whole with the writer woken as SCHED_BATCH (run 173) its samples
# missed the host's loss (16 threads) and the verdict read data starvation; with the writer
# woken as a normal thread (run 174) serialization again
check run171 "
c = row('holdout_offact-pinned', 'copy + copy_stall')
if c[8] != 'copy_stall / copy + copy_stall' or abs(pct(c[4])) > 5: bad.append('offact pinned ' + c[8] + ' ' + c[4])
c = row('holdout_cpuloss-cpu', 'serialization')
if c[8] != 'serialization / serialization' or abs(pct(c[7])) > 1: bad.append('cpuloss ' + c[8] + ' ' + c[7])"
check run172 "
c = row('holdout_offact-pageable', 'copy + copy_stall')
if abs(pct(c[7])) > 10: bad.append('offact pageable 30 s window what-if ' + c[7])"
check run173r "
c = row('holdout_offact-pageable', 'copy + copy_stall')
if abs(pct(c[4])) > 5 or abs(pct(c[7])) > 10: bad.append('offact pageable whole ' + c[4] + ' ' + c[7])
c = row('holdout_offact-pinned', 'copy + copy_stall')
if abs(pct(c[4])) > 5: bad.append('offact pinned whole ' + c[4])
# the CPU loss recorded whole: its gradient's copy back made by autograd's backward, a round trip
# whatever the samples (too few of them there: data starvation before session 51)
c = row('holdout_cpuloss-cpu', 'serialization')
if c[8] != 'serialization / serialization' or abs(pct(c[7])) > 1: bad.append('cpuloss 173r ' + c[8] + ' ' + c[7])"
check run174r "
c = row('holdout_cpuloss-cpu', 'serialization')
if c[8] != 'serialization / serialization' or abs(pct(c[7])) > 1: bad.append('cpuloss whole ' + c[8] + ' ' + c[7])"
for t in run171/holdout_offact-pinned run173r/holdout_offact-pinned; do
  "$BUILD/slack" report "tests/data/holdout/$t.slk" | grep -A1 '^  verdict: copy stall' |
    grep -q "fix: autograd's saved tensors are offloaded to the host" && ok || bad "$t: not the offload's fix"
done
"$BUILD/slack" report tests/data/holdout/run173r/holdout_offact-pageable.slk | grep -A1 '^  verdict: copy stall' |
  grep -q "fix: autograd's saved tensors are offloaded to pageable host memory" && ok ||
  bad "run173r offact pageable: not the pageable offload's fix"
# GPU runs 175 and 176 (session 49, H100): holdout_hooks, a per-layer timer's forward hooks left
# on (24 synchronizes a forward pass of ViT-B/16), written after every rule: serialization, its
# what-if within 2% windowed and recorded whole; the fix names the hook; the events form (the
# timer kept, no wait) no stall above 5% of its step
check run175 "
c = row('holdout_hooks-sync', 'serialization')
if c[8] != 'serialization / serialization' or abs(pct(c[7])) > 2 or abs(pct(c[4])) > 15:
    bad.append('hooks sync ' + c[8] + ' ' + c[4] + ' ' + c[7])
c = row('holdout_hooks-events', 'all stalls but launch overhead')
if abs(pct(c[7])) > 5: bad.append('hooks events what-if ' + c[7])"
check run176r "
c = row('holdout_hooks-sync', 'serialization')
if c[8] != 'serialization / serialization' or abs(pct(c[7])) > 2: bad.append('hooks sync whole ' + c[8] + ' ' + c[7])"
library_fix run175/holdout_hooks-sync "the read is in an nn.Module hook"
library_fix run176r/holdout_hooks-sync "the read is in an nn.Module hook"
# GPU runs 177 and 178 (session 49, H200): holdout_asyncalloc, empty_cache() after each step under
# CUDA's stream-ordered allocator (a device synchronize, then the pool trimmed), written after
# every rule: windowed, serialization and its what-if within 2%, the fix the allocator's (it read
# as a round trip's); recorded whole the host ran behind the GPU at the traced pace and the
# verdict read launch overhead (left alone: the trim's and the allocations' host time is in no
# hooked call)
check run177 "
c = row('holdout_asyncalloc-free', 'serialization')
if c[8] != 'serialization / serialization' or abs(pct(c[7])) > 2: bad.append('asyncalloc free ' + c[8] + ' ' + c[7])"
library_fix run177/holdout_asyncalloc-free "keep device memory allocated across steps"
# GPU runs 179 and 180 (session 49, H100): holdout_asyncalloc again with the stream-ordered
# allocator's calls hooked (format 2.11): cudaMallocAsync and cudaMemPoolTrimTo in the traces;
# serialization windowed and recorded whole, the what-ifs within 1%
check run179 "
c = row('holdout_asyncalloc-free', 'serialization')
if c[8] != 'serialization / serialization' or abs(pct(c[7])) > 1: bad.append('asyncalloc free ' + c[8] + ' ' + c[7])"
check run180r "
c = row('holdout_asyncalloc-free', 'serialization')
if c[8] != 'serialization / serialization' or abs(pct(c[7])) > 1: bad.append('asyncalloc free whole ' + c[8] + ' ' + c[7])"
for t in run179/holdout_asyncalloc-free run180r/holdout_asyncalloc-free; do
  [ "$("$BUILD/slack" dump --kind host "tests/data/holdout/$t.slk" | grep -c ' fn=cudaMemPoolTrimTo ')" -ge 150 ] &&
    "$BUILD/slack" dump --kind host "tests/data/holdout/$t.slk" | grep -q ' fn=cudaMallocAsync ' && ok ||
    bad "$t: the pool's trims and allocations not recorded"
done
# GPU run 181 (H100): the same loop recorded whole after a pool's allocation under 20 us lost its
# Python frames (slack.c POOL_HIT_NS): 1,193 of 52,824 keep them; serialization, what-if within 1%
check run181r "
c = row('holdout_asyncalloc-free', 'serialization')
if c[8] != 'serialization / serialization' or abs(pct(c[7])) > 1: bad.append('asyncalloc free whole ' + c[8] + ' ' + c[7])"
got=$("$BUILD/slack" dump --kind host tests/data/holdout/run181r/holdout_asyncalloc-free.slk |
  awk '/ fn=cudaMallocAsync / {n++; if (/pystack=/) p++} END {print n + 0, p + 0}')
[ "$got" = "52824 1193" ] && ok || bad "run181r: allocations, with frames: $got"
# GPU run 182 (session 49, H100): holdout_libread, reads a library makes of the script's
# arguments (ReduceLROnPlateau.step(loss), clip_grad_norm_'s error_if_nonfinite), written after
# every rule: serialization, what-ifs within 1%, each fix naming the call that reads
check run182 "
for f in ('plateau', 'clipnf'):
    c = row('holdout_libread-' + f, 'serialization')
    if c[8] != 'serialization / serialization' or abs(pct(c[7])) > 1: bad.append(f + ' ' + c[8] + ' ' + c[7])"
library_fix run182/holdout_libread-plateau "a learning-rate scheduler reads the metric"
library_fix run182/holdout_libread-clipnf "clip_grad_norm_(..., error_if_nonfinite=True) reads"
# a read inside torch's functional ops (torch.unique's output size; weighted, label-smoothed
# cross_entropy's mask): the fix names the op's frame, not the script's reads (session 49)
library_fix run147/holdout_recsys-u "the read is made inside torch's own torch/functional.py:[0-9]* _unique_impl"
library_fix run171/holdout_cpuloss-fixed "the read is made inside torch's own torch/nn/functional.py:[0-9]* cross_entropy"
# GPU runs 183 and 184 (session 50, H100): holdout_expand, empty_cache() after each step under
# PyTorch's expandable segments (a stream synchronize, then each page unmapped and released; the
# next step maps them again) with the driver's virtual memory calls hooked (format 2.12):
# serialization windowed and recorded whole, what-ifs within 1% (read as launch overhead, +11.8%,
# with those calls as plain ones), the fix the allocator's
check run183 "
c = row('holdout_expand-free', 'serialization')
if c[8] != 'serialization / serialization' or abs(pct(c[7])) > 1: bad.append('expand free ' + c[8] + ' ' + c[7])"
check run184r "
c = row('holdout_expand-free', 'serialization')
if c[8] != 'serialization / serialization' or abs(pct(c[7])) > 1: bad.append('expand free whole ' + c[8] + ' ' + c[7])"
# (its verdict's second line says what fixing it saves: the fix comes after it)
"$BUILD/slack" report tests/data/holdout/run183/holdout_expand-free.slk | grep -A2 '^  verdict: serialization' |
  grep -q "fix: keep device memory allocated across steps: drop torch.cuda.empty_cache()" && ok ||
  bad "run183/holdout_expand-free: not the allocator's fix"
for t in run183/holdout_expand-free run184r/holdout_expand-free; do
  got=$("$BUILD/slack" dump --kind host "tests/data/holdout/$t.slk" |
    awk '/ fn=cuMemUnmap / {u++} / fn=cuMemRelease / {r++} / fn=cuMemMap / {m++} / fn=cuMemCreate / {c++}
         END {print (u >= 6000 && r >= 6000 && m >= 6000 && c >= 6000) ? "ok" : u " " r " " m " " c}')
  [ "$got" = ok ] && ok || bad "$t: the segments' unmapping and mapping not recorded: $got"
done
# GPU runs 185 to 190 (session 50, H100; tests/data/envcheck, scripts/gpu-envcheck.sh): a loop
# traced with a debugging switch of CUDA or PyTorch left set, and without it, each with its
# untraced rounds: a GPU-bound ResNet-18 step (holdout_libread fixed) and a launch-bound recurrent
# loop (holdout_rnn eager) under CUDA_LAUNCH_BLOCKING=1, recorded whole (185, 186: the rounds from
# a second process) and in a window with an untraced tail (187, 188: the rounds in the same
# process); the ResNet-18 step and holdout_hidden's transformer step under
# PYTORCH_NO_CUDA_MEMORY_CACHING=1 in a window (189, 190). With the switch: serialization first,
# the fix names the switch, the step if fixed against the same loop's untraced step without it
# within the bound (15%; 20% for the recurrent loop recorded whole, whose host runs at the assumed
# pace, 1.45x, where this loop's traced step is 2.3x its untraced one); under
# CUDA_LAUNCH_BLOCKING every launch returned after its kernel ended. Without it: no launch taken
# for a wait, no serialization.
envcheck() { # run, tag, mode (blocking, async, nocache, cache), the bound on the what-if's error
  # (%; none: the what-if not held to one, a miss docs/ACCURACY.md gives)
  local d=tests/data/envcheck/$1
  "$BUILD/slack" report --json "$d/$2-$3.slk" | python3 -c "
import json, re, sys
g = json.load(sys.stdin)['gpus'][0]
le, v, mode = g['launch_evidence'], g['verdict'], '$3'
def median(path):
    return float(re.findall(r'INPROC_MEDIAN .*?step_ms=([0-9.]+)', open(path).read())[-1])
bad = []
if mode in ('blocking', 'nocache'):
    switch = 'CUDA_LAUNCH_BLOCKING=1' if mode == 'blocking' else 'PYTORCH_NO_CUDA_MEMORY_CACHING'
    if mode == 'blocking' and (not le['launch_blocking'] or
                               le['launches_returned_after_kernel'] != le['launches_joined']):
        bad.append('launches %d of %d, blocking %s' % (le['launches_returned_after_kernel'],
                   le['launches_joined'], le['launch_blocking']))
    if v['class'] != 'serialization' or switch not in v['fix']:
        bad.append('verdict ' + v['class'] + ': ' + v['fix'][:60])
    want = median('$d/$2-' + ('async' if mode == 'blocking' else 'cache') + '.out')
    err = (v['step_ns_if_fixed'] / 1e6 - want) / want * 100
    if '$4' != 'none' and abs(err) > float('$4'): bad.append('step if fixed %.2f ms against %.2f (%+.1f%%)' % (v['step_ns_if_fixed'] / 1e6, want, err))
else:
    if le['launch_blocking'] or le['launches_returned_after_kernel'] * 100 > le['launches_joined']:
        bad.append('launches %d of %d' % (le['launches_returned_after_kernel'], le['launches_joined']))
    if v['class'] == 'serialization': bad.append(mode + ' verdict serialization')
print('; '.join(bad) if bad else 'ok')" > /tmp/envcheck.$$ 2>&1
  [ "$(cat /tmp/envcheck.$$)" = ok ] && ok || bad "$1 $2 $3: $(cat /tmp/envcheck.$$)"
  rm -f /tmp/envcheck.$$
}
for r in run185 run187; do
  envcheck $r holdout_libread-fixed blocking 15
  envcheck $r holdout_libread-fixed async 0
done
envcheck run186 holdout_rnn-eager blocking 20
envcheck run188 holdout_rnn-eager blocking 15
envcheck run186 holdout_rnn-eager async 0
envcheck run188 holdout_rnn-eager async 0
envcheck run189 holdout_libread-fixed nocache 15
envcheck run189 holdout_libread-fixed cache 0
envcheck run190 holdout_hidden-fixed nocache 15
envcheck run190 holdout_hidden-fixed cache 0
# GPU runs 191 to 194 (session 50, H100, windowed): loops the rules were not made on. Under
# CUDA_LAUNCH_BLOCKING=1 nanoGPT's step (its what-if +16.0%: a miss) and the diffusion loop's
# (-0.2%); with the caching allocator off nanoGPT's step (+78.2%: a miss; run 194's CTC loop
# +2.0%, its traces 7.6 MB each, not kept)
for m in blocking async; do envcheck run192 holdout_diffusion-fixed $m 15; done
envcheck run191 holdout_nanogpt-fixed blocking none
envcheck run191 holdout_nanogpt-fixed async 0
envcheck run193 holdout_nanogpt-fixed nocache none
envcheck run193 holdout_nanogpt-fixed cache 0
# GPU runs 195 and 196 (session 50, H100, windowed): the seed's loop under CUDA_LAUNCH_BLOCKING=1,
# its fixed form (serialization, what-if +1.0%) and the DataLoader in the main thread (`l`): data
# starvation first, the launches' waits then (serialization, the switch's fix in its sites), the
# switch's what-if +6.1% (+26.8% when it took off only the waits next to serialization's gaps:
# GPU run 198 (session 51, H100; scripts/gpu-envcheck.sh AD): autograd's anomaly detection left on
# in two loops the stack capture rule was not made on (untraced 54.93 against 12.37 ms a step,
# 49.34 against 13.58): the stacks' share of the launch gaps named under the class table in both
# (15.47 and 9.38 ms a step); both verdicts serialization with the switch named (the switch
# first: nanoGPT's read launch overhead before, whose CUDA graph the NaN checks forbid)
"$BUILD/slack" report tests/data/envcheck/run198/holdout_nanogpt-fixed-anomaly.slk |
  grep -q '^    (of other, 15.47 ms per step the launching thread spent capturing Python stacks' &&
  ok || bad "run198 nanogpt anomaly: no stack capture line"
for w in nanogpt hidden; do
  "$BUILD/slack" report tests/data/envcheck/run198/holdout_$w-fixed-anomaly.slk |
    grep -A1 '^  verdict: serialization' | grep -q "fix: autograd's anomaly detection is on" &&
    ok || bad "run198 $w anomaly: not serialization with the switch's fix"
done
# GPU run 197 (session 51, H100): the CPU loss traced afresh with 4 MB and 256 KB CUPTI buffers
# (scripts/gpu-spikes.sh): serialization at the logits' read in both, the round trip the
# gradient's copy back by autograd's backward pass ends
for v in default buf256; do
  "$BUILD/slack" report tests/data/envcheck/run197-spikes-$v/holdout_cpuloss-cpu.slk |
    grep -q '^  verdict: serialization, .* at holdout_cpuloss.py:70 Run.step' &&
    ok || bad "run197 cpuloss $v: not serialization at the read"
done
# cuDNN's launches on its side streams wait with the GPU busy)
for m in blocking async; do envcheck run196 resnet_seed-fixed $m 15; done
got=$("$BUILD/slack" report --json tests/data/envcheck/run195/resnet_seed-l-blocking.slk | python3 -c "
import json, re, sys
g = json.load(sys.stdin)['gpus'][0]
v, le = g['verdict'], g['launch_evidence']
want = float(re.findall(r'INPROC_MEDIAN .*?step_ms=([0-9.]+)',
                        open('tests/data/envcheck/run195/resnet_seed-l-async.out').read())[-1])
err = (g['whatif']['serialization']['step_ns_if_fixed'] / 1e6 - want) / want * 100
print(v['class'], v.get('next', {}).get('class'), le['launch_blocking'], abs(err) <= 15)")
[ "$got" = "data_starvation serialization True True" ] &&
  "$BUILD/slack" report tests/data/envcheck/run195/resnet_seed-l-blocking.slk |
  sed -n '/^    serialization  /,/^    [a-z]/p' |
  grep -q '^      fix: every kernel launch returned only after its kernel ended' &&
  ok || bad "run195 seed l blocking: $got, or the launches' fix not in serialization's sites"
envcheck run195 resnet_seed-l async 0
finish

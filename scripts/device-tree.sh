#!/usr/bin/env bash
# The device tool (docs/GPU-RUNS.md) copies the checkout's tracked files to the GPU machine and
# refuses a tree over 64 MiB; the recorded traces under tests/data (~58 MB) are not needed there.
#
#   bash scripts/device-tree.sh slim      before the device call: tests/data's trace folders out
#                                         of the index (the files stay on disk) and ignored
#   bash scripts/device-tree.sh restore   after it: the index and the ignore list as they were
#   bash scripts/device-tree.sh status    the tracked size, and whether the tree is slimmed
#
# Nothing is committed either way; `restore` must run before the next commit (a commit made while
# slimmed would delete the traces: `slim` refuses to start with staged changes, `status` says).
set -u
cd "$(dirname "$0")/.." || exit 2
DIRS="tests/data/holdout tests/data/diagnosis tests/data/accuracy tests/data/envcheck"
EXCLUDE=.git/info/exclude
MARK="# slack device-tree.sh slim"
tracked() { git ls-files -z | xargs -0 du -cb 2> /dev/null | tail -1 | cut -f1; }
case "${1:-status}" in
slim)
  if grep -qF "$MARK" "$EXCLUDE" 2> /dev/null; then
    echo "device-tree: already slimmed" >&2
    exit 1
  fi
  if ! git diff --cached --quiet; then
    echo "device-tree: staged changes: commit or unstage them first" >&2
    exit 1
  fi
  # shellcheck disable=SC2086
  git rm -r --cached -q $DIRS || exit 1
  { echo "$MARK"; for d in $DIRS; do echo "$d/"; done; } >> "$EXCLUDE"
  echo "device-tree: slimmed, $(tracked) bytes tracked; run 'bash scripts/device-tree.sh restore' after the device call"
  ;;
restore)
  if ! grep -qF "$MARK" "$EXCLUDE" 2> /dev/null; then
    echo "device-tree: not slimmed" >&2
    exit 1
  fi
  # shellcheck disable=SC2086
  git reset -q -- $DIRS || exit 1
  awk -v m="$MARK" '$0 == m {skip = 1; next} skip && /^tests\/data\// {next} {skip = 0; print}' \
    "$EXCLUDE" > "$EXCLUDE.tmp" && mv "$EXCLUDE.tmp" "$EXCLUDE"
  echo "device-tree: restored, $(tracked) bytes tracked"
  ;;
status)
  if grep -qF "$MARK" "$EXCLUDE" 2> /dev/null; then s=slimmed; else s="not slimmed"; fi
  echo "device-tree: $s, $(tracked) bytes tracked (the device takes 67108864)"
  ;;
*)
  sed -n '2,12p' "$0" >&2
  exit 2
  ;;
esac

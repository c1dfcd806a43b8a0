#!/usr/bin/env bash
# eu-stack (Debian's elfutils) unpacked into .exittools, git-ignored, for scripts/gpu-exitcheck.sh
# to print a hung process's native stacks on the device, which has no debugger: carry it with the
# device call (carry [".exittools"]). Needs apt-get (run `apt-get update` first on a fresh machine).
#   bash scripts/exittools.sh old REV   the source of commit REV in .exitold (git-ignored), for
#                                       scripts/gpu-exitcheck.sh's EXIT_OLD (carry [".exitold"])
set -eu
cd "$(dirname "$0")/.."
if [ "${1:-}" = old ]; then
  rm -rf .exitold
  mkdir .exitold
  git archive "${2:?a commit}" | tar -x -C .exitold --exclude=tests/data
  du -sh .exitold
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download elfutils libdw1 libelf1 > /dev/null 2>&1)
rm -rf .exittools
for d in "$tmp"/*.deb; do dpkg -x "$d" .exittools; done
LD_LIBRARY_PATH=.exittools/usr/lib/x86_64-linux-gnu .exittools/usr/bin/eu-stack --version | head -1

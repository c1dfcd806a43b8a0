#!/usr/bin/env bash
# The newcomer's check (issue 15): a fresh Debian 12 (debootstrap minbase) with only `make` and the
# CUDA toolkit (bind-mounted from the host), a clean clone of this repository, then the README's
# two commands: `make demo` (installs the Debian packages it needs) and `make test`.
# As root, on a Debian machine with network access to deb.debian.org and /usr/local/cuda:
#   bash scripts/fresh-debian.sh [DIR]      (DIR default /tmp/slack-fresh; logs in DIR.log/)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
C=${1:-/tmp/slack-fresh}
LOG=$C.log
mkdir -p "$LOG"
[ "$(id -u)" = 0 ] || { echo "fresh-debian: run as root (debootstrap, chroot)"; exit 1; }
command -v debootstrap > /dev/null || apt-get install -y -qq debootstrap > /dev/null
[ -x "$C/bin/bash" ] || debootstrap --variant=minbase bookworm "$C" http://deb.debian.org/debian \
  > "$LOG/debootstrap.log" 2>&1
mountpoint -q "$C/proc" || mount -t proc proc "$C/proc"
mountpoint -q "$C/dev" || mount --rbind /dev "$C/dev"
mkdir -p "$C/usr/local/cuda"
mountpoint -q "$C/usr/local/cuda" || mount --bind /usr/local/cuda "$C/usr/local/cuda"
cp /etc/resolv.conf "$C/etc/resolv.conf"
rm -rf "$C/root/slack"
git clone -q "$ROOT" "$C/root/slack"
echo "fresh-debian: $(git -C "$C/root/slack" log --oneline -1)"
chroot "$C" bash -c 'export DEBIAN_FRONTEND=noninteractive; apt-get update -qq &&
  apt-get install -y -qq make > /dev/null' > "$LOG/make.log" 2>&1
set +e
chroot "$C" bash -c 'cd /root/slack && make demo' > "$LOG/demo.log" 2>&1
demo=$?
chroot "$C" bash -c 'cd /root/slack && make test' > "$LOG/test.log" 2>&1
test=$?
set -e
umount -l "$C/usr/local/cuda" "$C/dev" "$C/proc" 2> /dev/null || true
echo "fresh-debian: make demo exit $demo, make test exit $test: $(tail -1 "$LOG/test.log")"
[ $demo = 0 ] && [ $test = 0 ]

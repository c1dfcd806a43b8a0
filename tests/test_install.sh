#!/usr/bin/env bash
# make install PREFIX=DIR: the installed slack finds the installed libslack.so (bin/../lib) and
# records a program; the docs are there; an installed slack without its library says where it
# looked. Run from the repository root.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
make -s BUILD="$BUILD" "$BUILD/progs/chain" > /dev/null || exit 1
TEST_NAME=install
. tests/tools/harness.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! make -s BUILD="$BUILD" install PREFIX="$work/p" > "$work/log" 2>&1; then
  bad "make install failed: $(tail -5 "$work/log")"
  finish
fi
for f in bin/slack lib/libslack.so share/doc/slack/README.md share/doc/slack/slack-report.md; do
  [ -e "$work/p/$f" ] && ok || bad "not installed: $f"
done
cd "$work" || exit 2
out=$(p/bin/slack record -o "$work/tr" -- "$OLDPWD/$BUILD/progs/chain" 100 2> "$work/err")
[ "$out" = "chain 2 0" ] && ok || bad "installed slack record: stdout $out, stderr $(cat "$work/err")"
tr=$(ls "$work"/tr/*.slk 2> /dev/null | head -1)
[ -n "$tr" ] && p/bin/slack info "$tr" | grep -qE 'api_calls +[1-9]' && ok ||
  bad "installed slack record left no trace with calls: $(cat "$work/err")"
mkdir -p "$work/q/bin" && cp p/bin/slack "$work/q/bin/"
expect "no library" 1 "cannot find libslack.so beside .*/q/bin/slack or in .*/q/bin/../lib" -- q/bin/slack record -- true
cd "$OLDPWD" || exit 2
make -s BUILD="$BUILD" uninstall PREFIX="$work/p" > /dev/null 2>&1
[ ! -e "$work/p/bin/slack" ] && [ ! -e "$work/p/lib/libslack.so" ] && ok || bad "uninstall left files"
finish

#!/usr/bin/env bash
# Every C file in the tree is clang-formatted (.clang-format at the root).
set -u
cd "$(dirname "$0")/.."
command -v clang-format > /dev/null || { echo "clang-format not installed" >&2; exit 1; }
files=$(git ls-files '*.c' '*.h' 2> /dev/null)
[ -n "$files" ] || files=$(find interpose runtime analyzer tests scripts -name '*.[ch]')
bad=0
for f in $files; do
  clang-format --dry-run -Werror "$f" > /dev/null 2>&1 || { echo "not formatted: $f"; bad=1; }
done
[ $bad = 0 ] && echo "clang-format: $(echo "$files" | wc -w) files clean"
exit $bad

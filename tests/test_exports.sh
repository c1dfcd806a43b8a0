#!/usr/bin/env bash
# libslack.so must export its hooks and nothing else: the dynamic symbols it defines must be
# exactly the list in interpose/exports.map. And every symbol interpose/ marks for export
# (default visibility in its objects) must be in that list, or the version script would hide a
# hook silently. Run from the repository root after `make`; BUILD overrides the build folder.
set -euo pipefail

build=${BUILD:-build}
lib=$build/libslack.so
map=interpose/exports.map

fail() {
  echo "exports: FAIL: $*" >&2
  exit 1
}

[ -f "$lib" ] || fail "$lib not found (run make first)"
[ -f "$map" ] || fail "$map not found"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The names between "global:" and "local:", comments and semicolons dropped.
sed -e 's:/\*.*\*/::g' "$map" |
  awk '/global:/ {on = 1; next} /local:/ {on = 0} on' |
  tr -d ' \t;' | grep -v '^$' | sort >"$tmp/map"
[ -s "$tmp/map" ] || fail "no global symbols in $map"
dups=$(uniq -d "$tmp/map")
[ -z "$dups" ] || fail "listed twice in $map: $dups"

# Symbols the library defines in its dynamic table (version suffixes, if any, dropped).
nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' | sort -u >"$tmp/lib"

if ! diff -u "$tmp/map" "$tmp/lib" >"$tmp/diff"; then
  echo "exports: $lib differs from $map ('-' listed only, '+' exported only):" >&2
  sed -n '3,$p' "$tmp/diff" | grep '^[-+]' >&2 || true
  exit 1
fi

# Default-visibility definitions in the interpose objects (the hooks as the compiler sees them).
shopt -s nullglob
objs=("$build"/lib/interpose/*.o)
[ ${#objs[@]} -gt 0 ] || fail "no objects in $build/lib/interpose"
for o in "${objs[@]}"; do
  readelf -sW "$o" | awk '($5 == "GLOBAL" || $5 == "WEAK") && $6 == "DEFAULT" && $7 != "UND" {print $8}'
done | sort -u >"$tmp/objs"
missing=$(comm -23 "$tmp/objs" "$tmp/map")
[ -z "$missing" ] || fail "exported by interpose/ but not listed in $map: $(echo $missing)"

echo "exports: $(wc -l <"$tmp/map" | tr -d ' ') symbols, exact"

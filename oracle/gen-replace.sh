#!/usr/bin/env bash
# Prints the replace block that pins every k8s.io staging module to the
# release tag matching k8s.io/kubernetes (v1.X.Y -> v0.X.Y), read from the
# kubernetes module's own go.mod (its replace block points the staging
# modules at ./staging/src/..., which only works inside that repository).
#
# usage: gen-replace.sh [KUBERNETES_VERSION]   (default v1.37.2)
# Writes the block to stdout; `gen-replace.sh > replace.txt` and paste, or
# run with --apply to rewrite the replace block of ./go.mod in place.
set -euo pipefail
version=v1.37.2
apply=false
for arg in "$@"; do
  case "$arg" in
    --apply) apply=true ;;
    v1.*) version=$arg ;;
    *) echo "usage: $0 [v1.X.Y] [--apply]" >&2; exit 2 ;;
  esac
done
staging="v0.${version#v1.}"
go=${GO:-go}
gomod=$("$go" mod download -json "k8s.io/kubernetes@${version}" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
[ -n "$gomod" ] || { echo "cannot locate go.mod of k8s.io/kubernetes@${version}" >&2; exit 1; }
block=$(
  echo "replace ("
  sed -n 's#^[[:space:]]*\(k8s\.io/[^[:space:]]*\) => \./staging/.*#\1#p' "$gomod" | sort -u |
    while read -r mod; do printf '\t%s => %s %s\n' "$mod" "$mod" "$staging"; done
  echo ")"
)
if $apply; then
  # Drop any previous generated block, then append the new one.
  awk '/^\/\/ BEGIN generated replace/{skip=1} !skip{print} /^\/\/ END generated replace/{skip=0}' go.mod > go.mod.tmp
  {
    cat go.mod.tmp
    echo "// BEGIN generated replace (gen-replace.sh ${version})"
    echo "$block"
    echo "// END generated replace"
  } > go.mod
  rm -f go.mod.tmp
else
  echo "$block"
fi

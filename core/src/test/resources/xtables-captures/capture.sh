#!/usr/bin/env bash
# Records what the real iptables-save prints for the host layouts in captures.list, as test data
# for XtablesForwardTest (which needs no privileges). Run as root from anywhere:
#   core/src/test/resources/xtables-captures/capture.sh
# For each entry it makes a throwaway network namespace, runs `TOOL -w LINE` there for every
# line of each LAYOUT.rules named (comments and blank lines skipped), and writes NAME.save: the
# tool's version and the layouts as comments, then what TOOL-save prints. Nothing outside the
# namespace is changed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ns="gatun-capture-$$"
trap 'ip netns del "$ns" 2>/dev/null || true' EXIT
grep -v '^#' "$here/captures.list" | while read -r name tool layouts; do
  [ -n "$name" ] || continue
  ip netns add "$ns"
  for layout in $layouts; do
    grep -v -e '^#' -e '^$' "$here/$layout.rules" | while read -r line; do
      # word splitting of $line is wanted: each line is one iptables command's arguments
      # shellcheck disable=SC2086
      nsenter --net="/run/netns/$ns" "$tool" -w $line
    done
  done
  {
    echo "# captured from $($tool --version) with layouts: ${layouts:-none}"
    nsenter --net="/run/netns/$ns" "$tool-save"
  } > "$here/$name.save"
  ip netns del "$ns"
done

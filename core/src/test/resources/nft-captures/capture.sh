#!/usr/bin/env bash
# Records what the real nft sends over netlink for the commands in captures.list, as test data
# for NftEncodingTest (which needs no privileges). Run as root from anywhere:
#   core/src/test/resources/nft-captures/capture.sh [NAME...]
# With names, only those entries are captured again and the other files stay as they are.
# For each entry it makes a throwaway network namespace, runs the entry's setup commands, then
# runs the captured command under netlink-capture.so and writes NAME.capture: the setup and
# command as comments, then one line of hex per send call.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
ns="gatun-capture-$$"
trap 'ip netns del "$ns" 2>/dev/null || true; rm -rf "$work"' EXIT
gcc -shared -fPIC -o "$work/netlink-capture.so" "$here/netlink-capture.c" -ldl
nft_version=$(nft --version)

wanted=("$@")
name=""; setup=(); command=""
flush_entry() {
  [ -n "$name" ] || return 0
  if [ ${#wanted[@]} -gt 0 ] && ! printf '%s\n' "${wanted[@]}" | grep -qxF -- "$name"; then
    name=""; setup=(); command=""
    return 0
  fi
  ip netns add "$ns"
  for s in "${setup[@]}"; do ip netns exec "$ns" sh -c "$s"; done
  out="$here/$name.capture"
  {
    echo "# captured from $nft_version"
    for s in "${setup[@]}"; do echo "# setup: $s"; done
    echo "# command: $command"
  } > "$out"
  GATUN_CAPTURE="$work/hex" LD_PRELOAD="$work/netlink-capture.so" ip netns exec "$ns" sh -c "$command"
  cat "$work/hex" >> "$out"
  rm -f "$work/hex"
  ip netns del "$ns"
  name=""; setup=(); command=""
}
while IFS= read -r line; do
  case "$line" in
    "name: "*) flush_entry; name=${line#name: } ;;
    "setup: "*) setup+=("${line#setup: }") ;;
    "command: "*) command=${line#command: } ;;
  esac
done < "$here/captures.list"
flush_entry
echo "captures written to $here"

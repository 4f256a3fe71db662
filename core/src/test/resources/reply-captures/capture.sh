#!/bin/bash
# Captures real netlink replies for the reply-fuzzing properties (ReplyFuzz): what `nft`, `ip`
# and `conntrack` received from the kernel, one datagram per hex line, read by strace (not by
# gatun). Run as root; it makes and deletes its own namespace and never touches the host's:
#   core/src/test/resources/reply-captures/capture.sh core/src/test/resources/reply-captures
set -eu
out=$(realpath "$1")
here=$(dirname "$(realpath "$0")")
corpus=$here/../nft-corpus
ns=gatun-capture-$$
ip netns add "$ns"
trap 'ip netns del "$ns"' EXIT
inns() { ip netns exec "$ns" "$@"; }
inns ip link add br0 type bridge
inns ip link set br0 address 02:11:22:33:44:55 up
inns ip link add v0 type veth peer name v1
inns ip link set v0 master br0
inns ip addr add 10.9.0.1/24 dev br0
inns ip addr add fd00::1/64 dev br0
inns ip route add 10.10.0.0/16 via 10.9.0.2
inns nft -f "$corpus/09-verdict-map.nft"
inns nft -f "$corpus/01-design-shape.nft"
inns conntrack -I -p tcp -s 10.9.0.2 -d 10.9.0.1 --sport 1000 --dport 80 --state ESTABLISHED -t 100 \
    -u SEEN_REPLY -r 10.9.0.1 -q 10.9.0.2 --reply-port-src 8080 --reply-port-dst 1000
capture() {
    local name=$1; shift
    inns strace -f -e trace=recvmsg,recvfrom -e read=all -s 0 -o "$out/$name.strace" "$@" >/dev/null 2>&1 || true
    python3 "$here/strace2capture.py" "$*" "$out/$name.strace" > "$out/$name.capture"
    rm "$out/$name.strace"
}
capture nft-list-ruleset nft list ruleset
capture ip-link-show ip link show
capture ip-addr-show ip addr show
capture ip-route-show ip route show
capture conntrack-list conntrack -L
# An error with the kernel's extended-ACK text: a gateway that no route reaches.
capture route-extack ip route add 10.11.0.0/16 via 10.99.0.2

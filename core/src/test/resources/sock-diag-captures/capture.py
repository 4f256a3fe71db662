#!/usr/bin/env python3
# Captures real SOCK_DIAG_BY_FAMILY replies for SockDiagDecodingTest, written by hand from
# linux/inet_diag.h (not by gatun). Run as root; it makes and deletes its own namespace:
#   unshare --net python3 core/src/test/resources/sock-diag-captures/capture.py core/src/test/resources/sock-diag-captures
# In the namespace: TCP 127.0.0.1:8080 (IPv4), TCP [::]:8081 with IPV6_V6ONLY, TCP [::]:8082
# without, UDP [::1]:5353. Each file holds one reply datagram as hex, and ss's view of the same
# sockets as comments.
import os, socket, struct, subprocess, sys

out = sys.argv[1]
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)

t4 = socket.socket(socket.AF_INET, socket.SOCK_STREAM); t4.bind(("127.0.0.1", 8080)); t4.listen()
t6only = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
t6only.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1); t6only.bind(("::", 8081)); t6only.listen()
t6dual = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
t6dual.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0); t6dual.bind(("::", 8082)); t6dual.listen()
u6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); u6.bind(("::1", 5353))

NETLINK_SOCK_DIAG, SOCK_DIAG_BY_FAMILY = 4, 20
NLM_F_REQUEST, NLM_F_DUMP = 1, 0x300

def dump(family, protocol, states):
    nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG)
    # struct inet_diag_req_v2: family, protocol, ext, pad, states, then a zeroed inet_diag_sockid (48 bytes).
    req = struct.pack("=BBBBI", family, protocol, 0, 0, states) + bytes(48)
    nl.send(struct.pack("=IHHII", 16 + len(req), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, 1, 0) + req)
    data = nl.recv(65536)
    nl.close()
    return data

def save(name, data, what):
    ss = subprocess.run(["ss", "-H", "-n", "-e", "-a"] + what, capture_output=True, text=True).stdout
    with open(os.path.join(out, name), "w") as f:
        f.write("# ss -Hnea " + " ".join(what) + " in the same namespace:\n")
        for line in ss.splitlines():
            f.write("# " + " ".join(line.split()) + "\n")
        f.write(data.hex() + "\n")

save("tcp4-listen.capture", dump(socket.AF_INET, socket.IPPROTO_TCP, 1 << 10), ["-t", "-l", "-4"])
save("tcp6-listen.capture", dump(socket.AF_INET6, socket.IPPROTO_TCP, 1 << 10), ["-t", "-l", "-6"])
save("udp6.capture", dump(socket.AF_INET6, socket.IPPROTO_UDP, 0xffffffff), ["-u", "-6"])

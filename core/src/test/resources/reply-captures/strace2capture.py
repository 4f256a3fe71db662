#!/usr/bin/env python3
"""Turns `strace -e read=all` output into a capture: the command as a comment, then one received
datagram per hex line. Used by capture.sh."""
import re, sys
cmd, path = sys.argv[1], sys.argv[2]
datagrams, cur = [], None
for line in open(path):
    if re.match(r'\s*\* \d+ bytes in buffer', line):
        cur = []
        datagrams.append(cur)
    elif line.startswith(' | ') and cur is not None:
        cur.extend(line[10:59].split())
    else:
        cur = None
print('# ' + cmd)
for d in datagrams:
    if d:
        print(''.join(d))

#! /usr/bin/env python3
# Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
# Version 2.0.
"""Prints Ethernet frames carrying TCP segments as hex, for
'ovs-appctl netdev-dummy/receive' in the PAC autotests (tests/pac.at).

    pac-packet.py [options]

Options (defaults in brackets):
  --src MAC/IP:PORT   sender, e.g. 50:54:00:00:00:01/10.0.0.1:80
  --dst MAC/IP:PORT   receiver
  --seq N  --ack N    sequence and acknowledgement numbers [0]
  --flags F           TCP flags, letters of FSRPAUEC (e.g. SA, A, PA) [A]
  --len N             TCP payload bytes [0]
  --mss N             add an MSS option
  --ecn N             IP ECN field 0..3 [0]
  --frag              IPv4: set "more fragments" (a first fragment)
  --truncate N        cut the frame to N bytes
  --proto N           IP protocol [6]; with N != 6 the payload follows
                      the IP header directly
IPv6 addresses (containing ':') must be written in brackets:
  50:54:00:00:00:01/[fd00::1]:80
"""
import argparse
import struct
import socket
import sys


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def endpoint(text):
    mac, rest = text.split("/", 1)
    if rest.startswith("["):
        addr, port = rest[1:].split("]:")
    else:
        addr, port = rest.rsplit(":", 1)
    return bytes.fromhex(mac.replace(":", "")), addr, int(port)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--src", required=True)
    p.add_argument("--dst", required=True)
    p.add_argument("--seq", type=int, default=0)
    p.add_argument("--ack", type=int, default=0)
    p.add_argument("--flags", default="A")
    p.add_argument("--len", type=int, default=0)
    p.add_argument("--mss", type=int)
    p.add_argument("--ecn", type=int, default=0)
    p.add_argument("--frag", action="store_true")
    p.add_argument("--truncate", type=int)
    p.add_argument("--proto", type=int, default=6)
    a = p.parse_args()

    smac, sip, sport = endpoint(a.src)
    dmac, dip, dport = endpoint(a.dst)
    v6 = ":" in sip
    bits = dict(F=0x01, S=0x02, R=0x04, P=0x08, A=0x10, U=0x20, E=0x40,
                C=0x80)
    flags = 0
    for c in a.flags:
        flags |= bits[c]
    opts = struct.pack("!BBH", 2, 4, a.mss) if a.mss else b""
    payload = bytes(i & 0xff for i in range(a.len))
    if a.proto == 6:
        l4 = struct.pack("!HHIIBBHHH", sport, dport, a.seq & 0xffffffff,
                         a.ack & 0xffffffff, (5 + len(opts) // 4) << 4,
                         flags, 65535, 0, 0) + opts + payload
    else:
        l4 = payload
    if v6:
        s, d = (socket.inet_pton(socket.AF_INET6, x) for x in (sip, dip))
        pseudo = s + d + struct.pack("!IxxxB", len(l4), a.proto)
        ip = struct.pack("!IHBB", (6 << 28) | (a.ecn << 20), len(l4),
                         a.proto, 64) + s + d
        ethertype = 0x86dd
    else:
        s, d = (socket.inet_aton(x) for x in (sip, dip))
        pseudo = s + d + struct.pack("!xBH", a.proto, len(l4))
        frag = 0x2000 if a.frag else 0
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, a.ecn, 20 + len(l4), 1,
                         frag, 64, a.proto, 0, s, d)
        ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
        ethertype = 0x0800
    if a.proto == 6:
        c = csum(pseudo + l4)
        l4 = l4[:16] + struct.pack("!H", c) + l4[18:]
    frame = dmac + smac + struct.pack("!H", ethertype) + ip + l4
    if a.truncate is not None:
        frame = frame[:a.truncate]
    sys.stdout.write(frame.hex() + "\n")


if __name__ == "__main__":
    main()

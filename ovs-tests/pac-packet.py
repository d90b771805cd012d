#! /usr/bin/env python3
# Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
# Version 2.0.
"""Prints Ethernet frames carrying TCP segments as hex, for
'ovs-appctl netdev-dummy/receive' in the PAC autotests (tests/pac.at), and
decodes such frames.

    pac-packet.py [options] [+ [options]]...
    pac-packet.py --decode < HEX-LINES
    pac-packet.py --decode-window < HEX-LINES

Options (defaults in brackets):
  --src MAC/IP:PORT   sender, e.g. 50:54:00:00:00:01/10.0.0.1:80
  --dst MAC/IP:PORT   receiver
  --seq N  --ack N    sequence and acknowledgement numbers [0]
  --flags F           TCP flags, letters of FSRPAUEC (e.g. SA, A, PA) [A]
  --len N             TCP payload bytes [0]
  --mss N             add an MSS option
  --wscale N          add a window scale option (NOP padded)
  --window N          TCP window field [65535]
  --ecn N             IP ECN field 0..3 [0]
  --frag              IPv4: set "more fragments" (a first fragment)
  --frag-offset N     IPv4: fragment offset in 8-byte units [0]
  --truncate N        cut the frame to N bytes
  --cut-l4 N          cut the TCP header and payload to N bytes, with IP
                      lengths to match (a short TCP header)
  --proto N           IP protocol [6]; with N != 6 the payload follows
                      the IP header directly
  --data-offset N     TCP data offset field in 32-bit words (default:
                      the real header length; a wrong one is malformed)
  --arp               an ARP request from --src for --dst's IP instead
  --count N           N frames, the sequence number advancing by --len [1]
IPv6 addresses (containing ':') must be written in brackets:
  50:54:00:00:00:01/[fd00::1]:80
Several frame descriptions separated by '+' print all their frames on one
line, separated by spaces (netdev-dummy/receive takes several).

--decode reads hex frames, one per line (as 'ovs-pcap' prints them), and
prints one line per frame: 'SRC:PORT>DST:PORT FLAGS seq=N ack=N len=N' for
TCP, 'ip SRC>DST proto=N' for other IP, 'eth type=0xNNNN' otherwise.
--decode-window adds ' win=N csum=ok|bad' to TCP lines: the window field,
and whether the TCP checksum is right.
"""
import argparse
import socket
import struct
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


def parser():
    p = argparse.ArgumentParser()
    p.add_argument("--src", required=True)
    p.add_argument("--dst", required=True)
    p.add_argument("--seq", type=int, default=0)
    p.add_argument("--ack", type=int, default=0)
    p.add_argument("--flags", default="A")
    p.add_argument("--len", type=int, default=0)
    p.add_argument("--mss", type=int)
    p.add_argument("--wscale", type=int)
    p.add_argument("--window", type=int, default=65535)
    p.add_argument("--ecn", type=int, default=0)
    p.add_argument("--frag", action="store_true")
    p.add_argument("--frag-offset", type=int, default=0)
    p.add_argument("--truncate", type=int)
    p.add_argument("--cut-l4", type=int)
    p.add_argument("--proto", type=int, default=6)
    p.add_argument("--data-offset", type=int)
    p.add_argument("--arp", action="store_true")
    p.add_argument("--count", type=int, default=1)
    return p


def arp_frame(a):
    smac, sip, _ = endpoint(a.src)
    _, dip, _ = endpoint(a.dst)
    arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, smac,
                      socket.inet_aton(sip), b"\0" * 6,
                      socket.inet_aton(dip))
    return b"\xff" * 6 + smac + struct.pack("!H", 0x0806) + arp


def frame(a, seq):
    if a.arp:
        return arp_frame(a)
    smac, sip, sport = endpoint(a.src)
    dmac, dip, dport = endpoint(a.dst)
    v6 = ":" in sip
    bits = dict(F=0x01, S=0x02, R=0x04, P=0x08, A=0x10, U=0x20, E=0x40,
                C=0x80)
    flags = 0
    for c in a.flags:
        flags |= bits[c]
    opts = struct.pack("!BBH", 2, 4, a.mss) if a.mss else b""
    if a.wscale is not None:
        opts += struct.pack("!BBBB", 1, 3, 3, a.wscale)
    payload = bytes(i & 0xff for i in range(a.len))
    if a.proto == 6:
        doff = (a.data_offset if a.data_offset is not None
                else 5 + len(opts) // 4)
        l4 = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xffffffff,
                         a.ack & 0xffffffff, doff << 4,
                         flags, a.window, 0, 0) + opts + payload
    else:
        l4 = payload
    if a.cut_l4 is not None:
        l4 = l4[:a.cut_l4]
    if v6:
        s, d = (socket.inet_pton(socket.AF_INET6, x) for x in (sip, dip))
        pseudo = s + d + struct.pack("!IxxxB", len(l4), a.proto)
        ip = struct.pack("!IHBB", (6 << 28) | (a.ecn << 20), len(l4),
                         a.proto, 64) + s + d
        ethertype = 0x86dd
    else:
        s, d = (socket.inet_aton(x) for x in (sip, dip))
        pseudo = s + d + struct.pack("!xBH", a.proto, len(l4))
        frag = (0x2000 if a.frag else 0) | a.frag_offset
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, a.ecn, 20 + len(l4), 1,
                         frag, 64, a.proto, 0, s, d)
        ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
        ethertype = 0x0800
    if a.proto == 6 and len(l4) >= 18:
        c = csum(pseudo + l4)
        l4 = l4[:16] + struct.pack("!H", c) + l4[18:]
    f = dmac + smac + struct.pack("!H", ethertype) + ip + l4
    if a.truncate is not None:
        f = f[:a.truncate]
    return f


def decode(hexline, window=False):
    b = bytes.fromhex(hexline.strip())
    etype = struct.unpack("!H", b[12:14])[0]
    if etype == 0x0800:
        ihl = (b[14] & 0x0f) * 4
        proto = b[23]
        src = socket.inet_ntoa(b[26:30])
        dst = socket.inet_ntoa(b[30:34])
        total = struct.unpack("!H", b[16:18])[0]
        l4 = b[14 + ihl:14 + total]
        frag = struct.unpack("!H", b[20:22])[0] & 0x3fff
        pseudo = b[26:34] + struct.pack("!xBH", proto, len(l4))
    elif etype == 0x86dd:
        proto = b[20]
        src = "[%s]" % socket.inet_ntop(socket.AF_INET6, b[22:38])
        dst = "[%s]" % socket.inet_ntop(socket.AF_INET6, b[38:54])
        plen = struct.unpack("!H", b[18:20])[0]
        l4 = b[54:54 + plen]
        frag = 0
        pseudo = b[22:54] + struct.pack("!IxxxB", len(l4), proto)
    else:
        return "eth type=0x%04x" % etype
    if proto != 6 or frag or len(l4) < 20:
        return "ip %s>%s proto=%d" % (src, dst, proto)
    sport, dport, seq, ack, off, fl = struct.unpack("!HHIIBB", l4[:14])
    flags = "".join(c for i, c in enumerate("FSRPAUEC") if fl & (1 << i))
    line = "%s:%d>%s:%d %s seq=%d ack=%d len=%d" % (
        src, sport, dst, dport, flags, seq, ack, len(l4) - (off >> 4) * 4)
    if window:
        line += " win=%d csum=%s" % (struct.unpack("!H", l4[14:16])[0],
                                     "ok" if csum(pseudo + l4) == 0
                                     else "bad")
    return line


def main():
    argv = sys.argv[1:]
    if argv in (["--decode"], ["--decode-window"]):
        for line in sys.stdin:
            if line.strip():
                print(decode(line, argv == ["--decode-window"]))
        return

    groups = [[]]
    for arg in argv:
        if arg == "+":
            groups.append([])
        else:
            groups[-1].append(arg)
    frames = []
    for g in groups:
        a = parser().parse_args(g)
        for i in range(a.count):
            frames.append(frame(a, a.seq + i * a.len).hex())
    sys.stdout.write(" ".join(frames) + "\n")


if __name__ == "__main__":
    main()

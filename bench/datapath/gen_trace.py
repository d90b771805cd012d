#!/usr/bin/env python3
"""Writes the two pcap files the datapath benchmark replays (see README.md).

    gen_trace.py --flows N --segs K [--payload P] DIR

DIR/data.pcap  data toward the VM: for each of K rounds, one segment of P
               payload bytes of every flow (peer -> VM, flows round robin).
DIR/ack.pcap   the VM's answers, in the same order: one pure ACK per data
               segment (acknowledging it), then, after the K rounds, one RST
               per flow.  The ACKs carry ECE (--no-ece: not), so that PAC
               counts no window growth for them: each ACK's trigger is the
               P bytes it acknowledges, as much as one data segment brings.
               net_pcap replays both files at the same packet rate with no
               feedback, so with plain slow-start ACKs (trigger 2 P) the
               demand would be twice the supply and PAC would hold nearly
               everything; with ECE, in_flight hovers at the threshold and
               PAC holds and releases ACKs as data arrives, its steady
               state.

One pass of a trace is one "epoch" of each connection.  net_pcap replays
the files forever (infinite_rx=1), so a connection's ACK numbers jump back
by (K - 1) * P at the start of every pass; to PAC such ACKs are old
(duplicates) for the rest of the connection's life.  The RST that ends each
epoch makes PAC forget the connection, so the next pass starts a fresh one:
its first ACK sets the ACK base (a duplicate, passed at once), the other
K - 1 acknowledge P new bytes each, as in a real transfer.

Pure Python (struct), no scapy.  IPv4, TCP with correct checksums (OVS
does not check them, but the files are also readable by tcpdump/tshark).
"""

from __future__ import annotations

import argparse
import struct
import sys
from pathlib import Path

VM_MAC = bytes.fromhex("020000000002")
PEER_MAC = bytes.fromhex("020000000001")
VM_IP = bytes([10, 0, 0, 2])
VM_PORT = 5001
ISN_PEER = 1000000
ISN_VM = 5000000

TCP_ECE, TCP_ACK, TCP_PSH, TCP_RST = 0x40, 0x10, 0x08, 0x04


def csum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def peer_addr(flow: int) -> tuple[bytes, int]:
    """Peer IP and port of flow 'flow' (up to 60000 ports per peer IP)."""
    host, port = divmod(flow, 60000)
    return bytes([10, 1 + host // 250, host % 250 + 1, 1]), 1024 + port


def frame(src_mac: bytes, dst_mac: bytes, src_ip: bytes, dst_ip: bytes,
          sport: int, dport: int, seq: int, ack: int, flags: int,
          payload: bytes, ip_id: int) -> bytes:
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xffffffff,
                      ack & 0xffffffff, 5 << 4, flags, 65535, 0, 0)
    pseudo = src_ip + dst_ip + struct.pack("!BBH", 0, 6,
                                           len(tcp) + len(payload))
    c = csum(pseudo + tcp + payload)
    tcp = tcp[:16] + struct.pack("!H", c) + tcp[18:]
    total = 20 + len(tcp) + len(payload)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, ip_id & 0xffff, 0x4000,
                     64, 6, 0, src_ip, dst_ip)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return dst_mac + src_mac + b"\x08\x00" + ip + tcp + payload


class PcapWriter:
    def __init__(self, path: Path):
        self.f = open(path, "wb")
        self.f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535,
                                 1))
        self.n = 0

    def write(self, pkt: bytes) -> None:
        usec = self.n
        self.f.write(struct.pack("<IIII", usec // 1000000, usec % 1000000,
                                 len(pkt), len(pkt)))
        self.f.write(pkt)
        self.n += 1

    def close(self) -> None:
        self.f.close()


def generate(outdir: Path, flows: int, segs: int, payload: int,
             ece: bool = True, rst: bool = True) -> dict:
    outdir.mkdir(parents=True, exist_ok=True)
    data = PcapWriter(outdir / "data.pcap")
    acks = PcapWriter(outdir / "ack.pcap")
    body = bytes(range(256)) * (payload // 256 + 1)
    body = body[:payload]
    addrs = [peer_addr(f) for f in range(flows)]
    for k in range(segs):
        for f, (pip, pport) in enumerate(addrs):
            seq = ISN_PEER + k * payload
            data.write(frame(PEER_MAC, VM_MAC, pip, VM_IP, pport, VM_PORT,
                             seq, ISN_VM, TCP_ACK | TCP_PSH, body, k))
            acks.write(frame(VM_MAC, PEER_MAC, VM_IP, pip, VM_PORT, pport,
                             ISN_VM, seq + payload,
                             TCP_ACK | (TCP_ECE if ece else 0), b"", k))
    for f, (pip, pport) in enumerate(addrs if rst else []):
        acks.write(frame(VM_MAC, PEER_MAC, VM_IP, pip, VM_PORT, pport,
                         ISN_VM, ISN_PEER + segs * payload,
                         TCP_RST | TCP_ACK, b"", segs))
    data.close()
    acks.close()
    return {"data_packets": data.n, "ack_packets": acks.n}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--flows", type=int, required=True)
    p.add_argument("--segs", type=int, required=True,
                   help="data segments (and ACKs) per flow and pass")
    p.add_argument("--payload", type=int, default=1448)
    p.add_argument("--no-rst", action="store_true",
                   help="no RST at the end of a pass")
    p.add_argument("--no-ece", action="store_true",
                   help="plain ACKs (default: ACKs carry ECE)")
    p.add_argument("outdir", type=Path)
    args = p.parse_args()
    counts = generate(args.outdir, args.flows, args.segs, args.payload,
                      not args.no_ece, not args.no_rst)
    print(f"flows={args.flows} segs={args.segs} payload={args.payload} "
          f"data={counts['data_packets']} acks={counts['ack_packets']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""One TCP transfer of random bytes, checked end to end.

Run inside a network namespace ("ip netns exec NS python3 tcp_xfer.py ...")
by ovs_env.Transfer (this package).

    tcp_xfer.py recv --bind ADDR [--port P] [--idle-timeout S]
        Prints "READY <port>" once listening, accepts one connection, reads
        until EOF, sends back the 32-byte sha256 of what it read, and prints
        one JSON line {"role", "bytes", "sha256", "seconds"}.

    tcp_xfer.py send --host ADDR --port P --bytes N [--rate BYTES_PER_S]
                     [--idle-timeout S]
        Sends N random bytes (optionally paced), half-closes, waits for the
        receiver's digest and prints one JSON line {"role", "bytes",
        "sha256", "peer_sha256", "seconds"}.

Either side exits with status 2 and a JSON line with "error" when nothing
moves for --idle-timeout seconds (a stall) or the connection fails.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import socket
import sys
import time

CHUNK = 64 * 1024


def emit(obj: dict) -> None:
    print(json.dumps(obj), flush=True)


def recv_main(args: argparse.Namespace) -> int:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((args.bind, args.port))
    srv.listen(1)
    srv.settimeout(args.idle_timeout)
    print(f"READY {srv.getsockname()[1]}", flush=True)
    h = hashlib.sha256()
    total = 0
    start = time.monotonic()
    try:
        conn, _ = srv.accept()
        conn.settimeout(args.idle_timeout)
        start = time.monotonic()
        while True:
            data = conn.recv(1 << 20)
            if not data:
                break
            h.update(data)
            total += len(data)
        conn.sendall(h.digest())
        conn.close()
    except OSError as e:  # socket.timeout is an OSError
        emit({"role": "recv", "error": f"{type(e).__name__}: {e}",
              "bytes": total, "sha256": h.hexdigest(),
              "seconds": time.monotonic() - start})
        return 2
    emit({"role": "recv", "bytes": total, "sha256": h.hexdigest(),
          "seconds": time.monotonic() - start})
    return 0


def send_main(args: argparse.Namespace) -> int:
    h = hashlib.sha256()
    sent = 0
    start = time.monotonic()
    try:
        sock = socket.create_connection((args.host, args.port),
                                        timeout=args.idle_timeout)
        sock.settimeout(args.idle_timeout)
        while sent < args.bytes:
            chunk = os.urandom(min(CHUNK, args.bytes - sent))
            sock.sendall(chunk)
            h.update(chunk)
            sent += len(chunk)
            if args.rate:
                ahead = sent / args.rate - (time.monotonic() - start)
                if ahead > 0:
                    time.sleep(ahead)
        sock.shutdown(socket.SHUT_WR)
        digest = b""
        while len(digest) < 32:
            data = sock.recv(32 - len(digest))
            if not data:
                break
            digest += data
        sock.close()
    except OSError as e:
        emit({"role": "send", "error": f"{type(e).__name__}: {e}",
              "bytes": sent, "sha256": h.hexdigest(),
              "seconds": time.monotonic() - start})
        return 2
    emit({"role": "send", "bytes": sent, "sha256": h.hexdigest(),
          "peer_sha256": digest.hex(), "seconds": time.monotonic() - start})
    return 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("recv")
    r.add_argument("--bind", required=True)
    r.add_argument("--port", type=int, default=0)
    r.add_argument("--idle-timeout", type=float, default=20.0)
    s = sub.add_parser("send")
    s.add_argument("--host", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--bytes", type=int, required=True)
    s.add_argument("--rate", type=float, default=0.0,
                   help="pace to this many bytes per second (0: no pacing)")
    s.add_argument("--idle-timeout", type=float, default=20.0)
    args = p.parse_args(argv)
    return recv_main(args) if args.mode == "recv" else send_main(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

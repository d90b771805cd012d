#!/usr/bin/env python3
"""Many short TCP connections, each checked end to end (thousands of flows
for the stress tests).  Run inside a network namespace.

    tcp_many.py serve --bind ADDR [--idle-timeout S]
        Prints "READY <port>", then serves until killed: each connection's
        bytes are read to EOF and answered with their 32-byte sha256.

    tcp_many.py run --host ADDR --port P --connections N --bytes B
                    [--parallel C] [--timeout S]
        Opens N connections, at most C at a time; each sends B random
        bytes, half-closes and checks the digest it gets back.  Prints one
        JSON line {"connections", "ok", "failed", "errors", "bytes",
        "seconds"} and exits 0 if every connection was exact.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor


def serve_one(conn: socket.socket, idle_timeout: float) -> None:
    h = hashlib.sha256()
    try:
        conn.settimeout(idle_timeout)
        while True:
            data = conn.recv(1 << 16)
            if not data:
                break
            h.update(data)
        conn.sendall(h.digest())
    except OSError:
        pass
    finally:
        conn.close()


def serve_main(args: argparse.Namespace) -> int:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((args.bind, args.port))
    srv.listen(1024)
    print(f"READY {srv.getsockname()[1]}", flush=True)
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=serve_one, args=(conn, args.idle_timeout),
                         daemon=True).start()


def one_connection(host: str, port: int, nbytes: int,
                   timeout: float) -> str:
    """Returns "" if the connection was exact, else what went wrong."""
    data = os.urandom(nbytes)
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            s.settimeout(timeout)
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            digest = b""
            while len(digest) < 32:
                chunk = s.recv(32 - len(digest))
                if not chunk:
                    break
                digest += chunk
    except OSError as e:
        return f"{type(e).__name__}: {e}"
    if digest != hashlib.sha256(data).digest():
        return f"digest mismatch ({len(digest)} bytes back)"
    return ""


def run_main(args: argparse.Namespace) -> int:
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=args.parallel) as pool:
        results = list(pool.map(
            lambda _: one_connection(args.host, args.port, args.bytes,
                                     args.timeout),
            range(args.connections)))
    errors = [r for r in results if r]
    print(json.dumps({
        "connections": args.connections,
        "ok": len(results) - len(errors),
        "failed": len(errors),
        "errors": sorted(set(errors))[:10],
        "bytes": args.bytes * (len(results) - len(errors)),
        "seconds": time.monotonic() - start,
    }), flush=True)
    return 0 if not errors else 2


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--bind", required=True)
    s.add_argument("--port", type=int, default=0)
    s.add_argument("--idle-timeout", type=float, default=60)
    r = sub.add_parser("run")
    r.add_argument("--host", required=True)
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--connections", type=int, required=True)
    r.add_argument("--bytes", type=int, required=True)
    r.add_argument("--parallel", type=int, default=32)
    r.add_argument("--timeout", type=float, default=60)
    args = p.parse_args()
    return serve_main(args) if args.cmd == "serve" else run_main(args)


if __name__ == "__main__":
    sys.exit(main())

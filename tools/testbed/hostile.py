"""A hostile sender host on the incast testbed (`tools/incast hostile`,
tests/system/test_hostile.py): a victim's bulk transfer into the VM while
the last sender host attacks the VM's listener, and a legitimate client
connects to that listener meanwhile.

    sender host 1        the victim: `incast server`, 1 connection from the
                         VM's `incast client` (Workload(1, ...))
    sender host 2        a legitimate client: real connections to the VM's
                         listener, ATTACK_PROBE_RPS a second, each closed
                         once open (tcp_attack.py connect: handshake times)
    last sender host     the attacker (tcp_attack.py): spoofed SYNs
                         ("syn"), completed handshakes that stay silent
                         ("silent"), 1-byte segments without MSS options
                         every 500 us on 4 connections ("drip")
    VM                   a listener on SINK_PORT that keeps every connection
                         and discards what it reads (tcp_attack.py sink);
                         tcp_syncookies=2 (a SYN-ACK for every SYN, no
                         state); the attacker's addresses routed to the
                         attacker host, so that its SYN-ACKs leave the VM

Each run: the attack starts, then the victim's workload runs as
Testbed.run() runs it (with the VM's own RPCs beside it, whose connection
times are the VM's outgoing handshakes), then the attack and the client
stop.  HostileResult carries the victim's RunResult, the client's handshake
times and what the attacker sent.
"""

from __future__ import annotations

import csv
import json
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .incast_testbed import VM_IP, Testbed, RunResult, Workload, _last_line
from .ovs_env import TOP

ATTACK_SCRIPT = TOP / "tools" / "testbed" / "tcp_attack.py"
ATTACK_NET = "10.99.0.0/16"     # the attacker's addresses, routed to it
SINK_PORT = 7300
ATTACK_PROBE_RPS = 50
VM_RPC_RPS = 20                 # The VM's own RPCs beside the victim.

# What each attack sends, as tcp_attack.py's arguments after the target:
# the rate is the number in the attack's name where it has one.
ATTACKS = {
    "none": None,
    "syn": lambda rate: ["syn", "--src-net", ATTACK_NET, "--rate", str(rate)],
    "silent": lambda rate: ["silent", "--src-net", ATTACK_NET,
                            "--rate", str(rate)],
    "drip": lambda rate: ["drip", "--src-net", ATTACK_NET, "--ports", "4",
                          "--payload", "1",
                          "--trickle-interval", str(1 / rate)],
}

# `tools/incast hostile`'s attacks by default: issue 57's.
DEFAULT_ATTACKS = ["none", "syn-10000", "syn-50000", "silent-5000", "drip"]


def parse_attack(name: str) -> tuple[str, int]:
    """'syn-10000' -> ("syn", 10000); "drip" -> ("drip", 2000) (a segment
    every 500 us); "none" -> ("none", 0)."""
    kind, _, rate = name.partition("-")
    if kind not in ATTACKS:
        raise ValueError(f"attack: one of {', '.join(ATTACKS)}, "
                         f"optionally -RATE, not {name!r}")
    return kind, int(rate) if rate else (2000 if kind == "drip" else
                                         10000 if kind != "none" else 0)


@dataclass
class HostileResult:
    mode: str
    attack: str
    victim: RunResult
    connects: int = 0               # The legitimate client's handshakes,
    connect_failed: int = 0         # those that failed (3 s),
    connect_p50_ms: float = 0.0
    connect_p99_ms: float = 0.0
    connect_max_ms: float = 0.0
    attack_sent: int = 0            # Frames the attacker sent,
    attack_rate: float = 0.0        # a second.
    attacker: dict = field(default_factory=dict)

    def result_line(self) -> str:
        v = self.victim
        pac = v.pac
        return (f"RESULT hostile attack={self.attack} mode={self.mode} "
                f"victim_mbps={v.goodput_mbps:.1f} "
                f"victim_rtos={v.sender_rtos} "
                f"connects={self.connects} failed={self.connect_failed} "
                f"connect_p99_ms={self.connect_p99_ms:.2f} "
                f"connect_max_ms={self.connect_max_ms:.2f} "
                f"vm_rpc_p99_ms={v.rpc_p99_ms or 0:.2f} "
                f"vm_rpc_max_ms={v.rpc_max_ms or 0:.2f} "
                f"attack_rate={self.attack_rate:.0f} "
                f"held_max={pac.get('pac_max_held_seen', 0)} "
                f"wasted={pac.get('pac_handshakes_wasted', 0)} "
                f"uncharged={pac.get('pac_handshakes_uncharged', 0)}")


class HostileBed:
    """Attacks on a set-up Testbed (at least 3 sender hosts)."""

    def __init__(self, tb: Testbed):
        if len(tb.senders) < 3:
            raise ValueError("the hostile runs need 3 sender hosts or more")
        self.tb = tb
        self.victim_ns, _ = tb.senders[0]
        self.client_ns, _ = tb.senders[1]
        self.attacker_ns, self.attacker_ip = tb.senders[-1]
        self.sink: Optional[subprocess.Popen] = None

    def prepare(self) -> "HostileBed":
        vm = self.tb.vm
        vm.run(["sysctl", "-qw", "net.ipv4.tcp_syncookies=2"])
        vm.run(["ip", "route", "replace", ATTACK_NET, "via",
                self.attacker_ip])
        self.vm_mac = vm.run(["cat",
                              "/sys/class/net/eth0/address"]).stdout.strip()
        return self

    def _start_sink(self) -> None:
        """A fresh listener in the VM: each run starts without the
        connections of the one before."""
        vm = self.tb.vm
        self.sink = subprocess.Popen(
            vm.cmd([sys.executable, str(ATTACK_SCRIPT), "sink",
                    "--port", str(SINK_PORT)]),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, start_new_session=True)
        ready = self.sink.stdout.readline()
        if not ready.startswith("READY"):
            raise RuntimeError(f"the VM's listener did not start: "
                               f"{self.sink.stderr.read()[-2000:]}")

    def close(self) -> None:
        """Stops the listener: it resets its connections and exits."""
        if self.sink:
            self.sink.send_signal(signal.SIGTERM)
            try:
                self.sink.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.sink.kill()
                self.sink.wait()
            self.sink = None

    def _start(self, ns, args: list[str]) -> subprocess.Popen:
        return subprocess.Popen(
            ns.cmd([sys.executable, str(ATTACK_SCRIPT), *args]),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, start_new_session=True)

    @staticmethod
    def _stop(p: subprocess.Popen) -> dict:
        """Stops 'p' (SIGTERM: it prints its JSON line) and returns that
        line."""
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=30)
        line = _last_line(out, "{")
        if not line:
            raise RuntimeError(f"tcp_attack.py printed nothing (exit "
                               f"{p.returncode}): {err.strip()[-2000:]}")
        return json.loads(line)

    def run(self, mode: str, attack: str, wl: Workload) -> HostileResult:
        kind, rate = parse_attack(attack)
        self._start_sink()
        target = ["--iface", "eth0", "--dst-mac", self.vm_mac,
                  "--dst-ip", VM_IP, "--dport", str(SINK_PORT),
                  "--count", str(10 ** 9), "--seconds", "600"]
        attacker = (self._start(self.attacker_ns,
                                ATTACKS[kind](rate) + target)
                    if kind != "none" else None)
        client = self._start(self.client_ns, [
            "connect", "--dst-ip", VM_IP, "--dport", str(SINK_PORT),
            "--rate", str(ATTACK_PROBE_RPS), "--seconds", "600"])
        try:
            time.sleep(0.5)         # The attack under way first.
            victim = self.tb.run(mode, wl)
        finally:
            probe = self._stop(client)
            sent = self._stop(attacker) if attacker else {}
            self.close()
        r = HostileResult(mode=mode, attack=attack, victim=victim,
                          connects=probe["connects"],
                          connect_failed=probe["failed"],
                          connect_p50_ms=probe["p50_ms"],
                          connect_p99_ms=probe["p99_ms"],
                          connect_max_ms=probe["max_ms"], attacker=sent)
        if sent:
            r.attack_sent = sent.get("sent", 0)
            r.attack_rate = r.attack_sent / max(sent.get("seconds", 1), 1e-3)
        return r


CSV_FIELDS = ["attack", "rep", "mode", "rate_mbit", "buffer_bytes", "ports",
              "victim_mbps", "kept", "victim_rtos", "connects", "connect_failed",
              "connect_p50_ms", "connect_p99_ms", "connect_max_ms",
              "vm_rpc_p99_ms", "vm_rpc_max_ms", "attack_rate",
              "pac_max_held_seen", "pac_handshakes_wasted",
              "pac_handshakes_uncharged", "pac_handshake_flood"]


def row(tb: Testbed, rep: int, r: HostileResult,
        calm_mbps: Optional[float]) -> dict:
    """The CSV row of 'r'; 'calm_mbps': the victim's goodput in the same
    mode's last run without an attack ("kept" is the share of it), or
    None."""
    c, v = tb.cfg, r.victim
    kept = (round(v.goodput_mbps / calm_mbps, 3)
            if calm_mbps and r.attack != "none" else "")
    return {"attack": r.attack, "rep": rep, "mode": r.mode,
            "rate_mbit": c.rate_mbit, "buffer_bytes": c.buffer_bytes,
            "ports": "pmd" if c.pmd else "main",
            "victim_mbps": round(v.goodput_mbps, 1), "kept": kept,
            "victim_rtos": v.sender_rtos, "connects": r.connects,
            "connect_failed": r.connect_failed,
            "connect_p50_ms": r.connect_p50_ms,
            "connect_p99_ms": r.connect_p99_ms,
            "connect_max_ms": r.connect_max_ms,
            "vm_rpc_p99_ms": v.rpc_p99_ms if v.rpc_p99_ms is not None else "",
            "vm_rpc_max_ms": v.rpc_max_ms if v.rpc_max_ms is not None else "",
            "attack_rate": round(r.attack_rate),
            **{k: v.pac.get(k, "") for k in CSV_FIELDS if k.startswith("pac_")}}


def run_all(tb: Testbed, attacks: list[str], modes: list[str], wl: Workload,
            repeat: int, csv_path: Path) -> list[HostileResult]:
    """Every attack 'repeat' times in every mode, the modes' order
    alternating; a RESULT line per run as it comes, the CSV rewritten after
    each (a run cut short keeps what it measured)."""
    for a in attacks:
        parse_attack(a)
    hb = HostileBed(tb).prepare()
    results: list[HostileResult] = []
    rows: list[dict] = []
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    turn = 0
    calm: dict[str, float] = {}
    try:
        for rep in range(repeat):
            for attack in attacks:
                order = modes if turn % 2 == 0 else modes[::-1]
                turn += 1
                for mode in order:
                    r = hb.run(mode, attack, wl)
                    results.append(r)
                    print(r.result_line(), flush=True)
                    if attack == "none":
                        calm[mode] = r.victim.goodput_mbps
                    rows.append(row(tb, rep, r, calm.get(mode)))
                    with open(csv_path, "w", newline="") as f:
                        w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
                        w.writeheader()
                        w.writerows(rows)
    finally:
        hb.close()
    return results


def summary(results: list[HostileResult], modes: list[str]) -> list[str]:
    """A SUMMARY line per attack: each mode's median victim goodput, its
    median share of the same mode's goodput without an attack ('kept'),
    the worst p99 and the max of the client's handshakes, failed ones."""
    lines = []
    calm = {m: statistics.median(r.victim.goodput_mbps for r in results
                                 if r.attack == "none" and r.mode == m)
            for m in modes
            if any(r.attack == "none" and r.mode == m for r in results)}
    for attack in dict.fromkeys(r.attack for r in results):
        parts = [f"SUMMARY attack={attack}"]
        for m in modes:
            mine = [r for r in results if r.attack == attack and r.mode == m]
            if not mine:
                continue
            g = statistics.median(r.victim.goodput_mbps for r in mine)
            parts.append(f"{m}:victim_median_mbps={g:.1f}")
            if attack != "none" and calm.get(m):
                parts.append(f"{m}:kept={g / calm[m]:.3f}")
            parts.append(f"{m}:connect_p99_worst_ms="
                         f"{max(r.connect_p99_ms for r in mine):.2f}")
            parts.append(f"{m}:connect_max_ms="
                         f"{max(r.connect_max_ms for r in mine):.2f}")
            parts.append(f"{m}:connect_failed="
                         f"{sum(r.connect_failed for r in mine)}")
        lines.append(" ".join(parts))
    return lines

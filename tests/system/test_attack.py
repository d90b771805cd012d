"""Hostile traffic against PAC on the real datapath (issue 31's system test):
floods and crafted TCP from an attacker namespace and from a second VM, while
a victim transfer runs through a PAC port.

Topology (testbed.ovs_env.Topology plus two hosts on the same br0):

    peer 10.0.0.1 ─ peer-p ┐
    atk  10.0.0.4 ─ atk-p  ├ br0 (netdev, NORMAL) ┬ vm-p  (PAC) ─ vm  10.0.0.2
                           │                      └ vm2-p (PAC) ─ vm2 10.0.0.3

The victim transfer is tcp_xfer.py peer -> vm, paced (VICTIM_RATE), once
without and once during the attack.  The attacker sends only to the
testbed's own namespaces: to vm (10.0.0.2), from source addresses of an
"attacker network" 10.0.1.0/24 that vm and vm2 route via atk (10.0.0.4), so
the replies of the VMs reach atk's namespace and go no further (atk does not
forward), as the replies to a spoofed flood do.  Frames come from
tools/testbed/tcp_attack.py (AF_PACKET, bounded count, rate and time).

Four attack runs, each on a fresh topology, shared by the tests that
assert on it (module-scoped fixtures), each about 10 s:
  syn      random-tuple SYN flood at vm's listener (30 000 SYNs, 10 000/s);
  ack      random-tuple ACK flood at vm (15 000 frames, 5 000/s), every
           4th a blind RST at the victim connection;
  pin      the pinning attack (issue 31, item 1) on 32 source ports;
  vmflood  vm2 (a second PAC port) sends data segments whose ACK numbers
           jump by 2^29 (15 000 frames, 5 000/s), on more connections
           than its max-flows.
For each: the victim is byte-exact and keeps GOODPUT_FLOOR of its goodput
without the attack; ovs-vswitchd's RSS grows by no more than the configured
caps allow (rss_bound()); pac/show's flows and held packets stay within
max-flows and max-held, and the defence counters of the attack move.

vm's TCP answers every SYN with a SYN cookie (net.ipv4.tcp_syncookies=2 in
its namespace): Linux does so by itself once a flood fills its SYN queue;
setting it makes that deterministic, and lets the pinning attacker's second
SYN from a port get a SYN-ACK (with a SYN queue entry, Linux answers a SYN
of another ISN on the same ports with an ACK instead).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import pytest

from testbed.ovs_env import (TOP, Host, Netns, OvsBuild, Topology,
                             TransferResult, wait_until)

MB = 1000 * 1000
MIB = 1024 * 1024
ATTACK_SCRIPT = TOP / "tools" / "testbed" / "tcp_attack.py"
LOG_DIR = TOP / "build" / "test-logs" / "system"

VM2_IP = "10.0.0.3"
ATK_IP = "10.0.0.4"
ATK_NET = "10.0.1.0/24"     # the "attacker network", routed via ATK_IP
SINK_PORT = 7000            # vm's service that the SYN flood and pin aim at

# The victim: paced, so that its goodput without the attack is the pace on
# any machine that can carry 80 Mbit/s through ovs-vswitchd's main thread,
# and the comparison does not depend on how busy the machine is.
VICTIM_RATE = 10 * MB       # bytes/s
VICTIM_BYTES = 30 * MB      # 3 s at the pace
# Goodput under attack >= 70 % of the same run's goodput without it.  The
# pace is a quarter to a third of what one connection gets through
# ovs-vswitchd on a busy 2-core machine (33-39 MB/s), and the two runs
# are seconds apart, so the victim keeps its pace under the contention
# the attack itself adds (the generator, ovs-vswitchd's main thread
# handling the flood): with PAC off under the SYN flood, and under the
# defended attacks, it kept 98-100 % (73 % once, under a vm2 flood at twice
# the rate used here, on a machine at load 5).  The SYN flood costs more
# (SYN_FLOOD_GOODPUT_FLOOR).  The pinning attack costs the victim little
# even where it works (in_flight pinned at 2^30 by libpac before its
# SYN-reuse fix: the victim kept 91 %, dry reclaims giving the pinned
# windows back within the run), so test_pin_in_flight_not_pinned asserts
# on in_flight itself.
GOODPUT_FLOOR = 0.7

# Small caps so that the bounded floods reach them.  max-held-bytes is the
# per-port byte bound of held packets; a build without that knob logs it as
# an unknown key and ignores it (the byte assertion is then skipped).
VM_CAPS = {"max-flows": "256", "max-held": "512"}
VM2_CAPS = {"max-flows": "64", "max-held": "512", "max-held-bytes": "262144"}

# Host memory PAC may take per cap (docs/libpac.md "Bounds and memory",
# docs/operator.md max-flows/max-held): 268 bytes per connection; 72 bytes
# of bookkeeping per held packet plus its buffer, which stays allocated
# while held.  With offloads off a held packet is one MTU frame in a
# dp_packet of about 1.7 KB (MTU + VLAN header + 128 bytes headroom + the
# struct); 4 KB per packet bounds that with the allocator's rounding.
FLOW_BYTES = 268
HELD_BYTES = 72 + 4096
# Growth of ovs-vswitchd that is not PAC's: upcalls, megaflows, the
# allocator's arenas under the floods (under 2 MiB in every run seen).
# An unbounded hold (the 15 000 frames of vmflood, ~2 KB each in their
# dp_packets: 30 MB) or per-flood-packet state would exceed it.
RSS_SLACK = 16 * MIB

# The floods (frames, frames/s, at most seconds).
SYN_FLOOD = (30000, 10000, 4.0)
ACK_FLOOD = (15000, 5000, 4.0)
RST_EVERY = 4               # every 4th ACK-flood frame is a blind RST
PIN_PORTS = 32
PIN_TRICKLE = (20, 0.1)     # segments per connection, seconds apart
VM_FLOOD = (15000, 5000, 4.0)
VM_FLOOD_FLOWS = 128        # twice vm2's max-flows
VM_FLOOD_PAYLOAD = 1000


# ---------------------------------------------------------------------------
# Reading ovs-vswitchd.

def pac_show(topo: Topology, iface: str) -> tuple[dict[str, str],
                                                  dict[str, int]]:
    """pac/show of 'iface', read now: (its config line as key -> value,
    its statistics as pac_KEY -> int)."""
    out = topo.ovs.appctl("pac/show", iface)
    config: dict[str, str] = {}
    stats: dict[str, int] = {}
    for line in out.splitlines()[1:]:
        head, _, rest = line.strip().partition(": ")
        if head == "config":
            config.update(re.findall(r"([a-z0-9_-]+)=(\{[^}]*\}|\S+)", rest))
        else:
            stats.update((f"pac_{k}", int(v)) for k, v in
                         re.findall(r"\b([a-z0-9_]+)=(\d+)\b", rest))
    return config, stats


def dp_tcp_packets(topo: Topology, iface: str) -> int:
    """Packets the datapath flows from 'iface' that carry PAC's tx action
    (TCP from the VM) have taken, summed over the flows installed now."""
    show = topo.ovs.appctl("dpctl/show")
    port = re.search(rf"port (\d+): {re.escape(iface)}\b", show).group(1)
    flows = topo.ovs.appctl("dpctl/dump-flows")
    return sum(int(m.group(1)) for m in re.finditer(
        rf"in_port\({port}\),.*ipv4\(proto=6.*packets:(\d+),.*"
        r"actions:pac\(", flows))


def vswitchd_rss(topo: Topology) -> int:
    """VmRSS of ovs-vswitchd, bytes."""
    pid = int((topo.workdir / "ovs-vswitchd.pid").read_text())
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^VmRSS:\s+(\d+) kB", status, re.M).group(1)) * 1024


def rss_bound(configs: dict[str, dict[str, str]]) -> int:
    """What the PAC ports' caps let ovs-vswitchd's RSS grow by, plus
    RSS_SLACK."""
    return RSS_SLACK + sum(int(c["max-flows"]) * FLOW_BYTES
                           + int(c["max-held"]) * HELD_BYTES
                           for c in configs.values())


class Monitor(threading.Thread):
    """Samples ovs-vswitchd's RSS and pac/show of 'ifaces' every 0.2 s;
    keeps the largest value of each statistic and of the RSS."""

    def __init__(self, topo: Topology, ifaces: list[str]):
        super().__init__(daemon=True)
        self.topo, self.ifaces = topo, ifaces
        self.peak: dict[str, dict[str, int]] = {i: {} for i in ifaces}
        self.rss_peak = 0
        self.samples = 0
        self.stop_event = threading.Event()

    def sample(self) -> None:
        self.rss_peak = max(self.rss_peak, vswitchd_rss(self.topo))
        for iface in self.ifaces:
            _, stats = pac_show(self.topo, iface)
            peak = self.peak[iface]
            for k, v in stats.items():
                peak[k] = max(peak.get(k, v), v)
        self.samples += 1

    def run(self) -> None:
        while not self.stop_event.wait(0.2):
            self.sample()

    def stop(self) -> None:
        self.stop_event.set()
        self.join(15)
        self.sample()


# ---------------------------------------------------------------------------
# The testbed.

def goodput(result: TransferResult) -> float:
    """Bytes per second of a transfer (receiver's view)."""
    return result.nbytes / max(result.seconds, 1e-3)


def mac(host: Host) -> str:
    return host.ns.run(["cat", "/sys/class/net/eth0/address"]).stdout.strip()


@dataclass
class AttackRun:
    """What one attack run saw."""
    baseline: TransferResult
    attacked: TransferResult
    configs: dict[str, dict[str, str]]       # pac/show config per port
    before: dict[str, dict[str, int]]        # pac/show stats before attack
    after: dict[str, dict[str, int]]         # ... after it
    peak: dict[str, dict[str, int]]          # largest sampled values
    rss_before: int
    rss_peak: int
    dp_packets: dict[str, int]               # dp_tcp_packets() during it
    attackers: list[dict] = field(default_factory=list)
    seconds: float = 0.0

    def delta(self, iface: str, key: str) -> int:
        return self.after[iface].get(key, 0) - self.before[iface].get(key, 0)

    def report(self, name: str) -> str:
        lines = [f"{name}: victim {goodput(self.baseline) / MB:.2f} MB/s "
                 f"without, {goodput(self.attacked) / MB:.2f} MB/s during "
                 f"the attack; RSS {self.rss_before / MIB:.1f} MiB before, "
                 f"peak {self.rss_peak / MIB:.1f} MiB (bound +"
                 f"{rss_bound(self.configs) / MIB:.1f} MiB); "
                 f"{self.seconds:.1f} s",
                 f"  attackers: {self.attackers}",
                 f"  datapath TCP packets from the VMs: {self.dp_packets}"]
        for iface in self.after:
            moved = {k: self.delta(iface, k) for k in sorted(self.after[iface])
                     if self.delta(iface, k)}
            lines.append(f"  {iface} peak flows {self.peak[iface].get('pac_flows')}"
                         f" held {self.peak[iface].get('pac_held')}"
                         f" in_flight {self.peak[iface].get('pac_in_flight')}"
                         f"; moved {moved}")
        return "\n".join(lines)


class AttackBed:
    """Topology + vm2 + atk, routes of the attacker network, vm's SYN
    cookies and listener, PAC with small caps on vm-p and vm2-p."""

    def __init__(self, build: OvsBuild):
        self.topo = Topology(build)
        self.procs: list[subprocess.Popen] = []

    def setup(self, tracked: bool = False) -> "AttackBed":
        """'tracked': vm's PAC without the fast path, following every
        connection from its first segment."""
        topo = self.topo
        topo.setup()
        self.vm, self.peer = topo.vm, topo.peer
        self.vm2 = topo.add_host("vm2", VM2_IP, "vm2-p")
        self.atk = topo.add_host("atk", ATK_IP, "atk-p")
        for host in (self.vm, self.vm2):
            host.ns.run(["ip", "route", "add", ATK_NET, "via", ATK_IP])
            topo.ping(host, self.atk, count=1)
        self.vm.ns.run(["sysctl", "-qw", "net.ipv4.tcp_syncookies=2"])
        sink = self.popen(self.vm.ns, ["sink", "--bind", self.vm.ip,
                                       "--port", str(SINK_PORT)])
        line = sink.stdout.readline()
        assert line.startswith("READY"), f"vm's listener: {line!r}"
        ovs = topo.ovs
        ovs.pac_enable("vm-p", other_config={
            **VM_CAPS, **({"fast-path": "false"} if tracked else {})})
        # vm2's ACKs count only what its peers sent (nothing), so PAC
        # holds its flood only behind the windows of its requests: with the
        # smallest threshold and the longest max_hold the database takes,
        # the flood reaches the caps.
        ovs.pac_enable("vm2-p", threshold=3000, max_hold=150000,
                       other_config=VM2_CAPS)
        for iface in ("vm-p", "vm2-p"):
            wait_until(lambda: pac_show(topo, iface)[1], 10,
                       what=f"PAC enabled on {iface}")
        return self

    def popen(self, ns: Netns, args: list[str]) -> subprocess.Popen:
        p = subprocess.Popen(ns.cmd([sys.executable, str(ATTACK_SCRIPT)]
                                    + args),
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        return p

    def victim_tuple(self) -> tuple[str, str]:
        """('peer ip:port', 'vm port') of the running victim connection."""
        def find():
            out = self.peer.ns.run(["ss", "-Htn", "state", "established",
                                    "dst", self.vm.ip]).stdout
            for line in out.splitlines():
                local, remote = line.split()[-2:]
                return local, remote.rsplit(":", 1)[1]
            return None
        return wait_until(find, 10, 0.05, "the victim connection")

    def run(self, attack: str) -> AttackRun:
        """The victim alone, then the victim during 'attack'."""
        topo = self.topo
        baseline = topo.transfer(VICTIM_BYTES, rate=VICTIM_RATE).wait(60)
        baseline.assert_exact()
        ifaces = ["vm-p", "vm2-p"]
        configs = {i: pac_show(topo, i)[0] for i in ifaces}
        before = {i: pac_show(topo, i)[1] for i in ifaces}
        rss_before = vswitchd_rss(topo)
        dp_before = {i: dp_tcp_packets(topo, i) for i in ifaces}
        monitor = Monitor(topo, ifaces)
        start = time.monotonic()
        victim = topo.transfer(VICTIM_BYTES, rate=VICTIM_RATE)
        peer_end, vm_port = self.victim_tuple()
        monitor.start()
        attackers = self.start_attack(attack, peer_end, vm_port)
        attacked = victim.wait(60)
        outputs = []
        for p in attackers:
            out, err = p.communicate(timeout=30)
            lines = [l for l in out.splitlines() if l.startswith("{")]
            assert p.returncode == 0 and lines, (
                f"attacker failed ({p.returncode}): {out} {err}")
            outputs.append(json.loads(lines[-1]))
        time.sleep(0.5)     # held packets of the attack go at max_hold
        monitor.stop()
        return AttackRun(baseline, attacked, configs, before,
                         {i: pac_show(topo, i)[1] for i in ifaces},
                         monitor.peak, rss_before, monitor.rss_peak,
                         {i: dp_tcp_packets(topo, i) - dp_before[i]
                          for i in ifaces},
                         outputs, time.monotonic() - start)

    def start_attack(self, attack: str, peer_end: str,
                     vm_port: str) -> list[subprocess.Popen]:
        to_vm = ["--dst-mac", mac(self.vm), "--dst-ip", self.vm.ip]
        bound = lambda c, r, s: ["--count", str(c), "--rate", str(r),
                                 "--seconds", str(s)]
        if attack == "syn":
            return [self.popen(self.atk.ns, [
                "syn", *to_vm, "--src-net", ATK_NET,
                "--dport", str(SINK_PORT), *bound(*SYN_FLOOD)])]
        if attack == "ack":
            return [self.popen(self.atk.ns, [
                "ack", *to_vm, "--src-net", ATK_NET, "--rst-src", peer_end,
                "--rst-dport", vm_port, "--rst-every", str(RST_EVERY),
                *bound(*ACK_FLOOD)])]
        if attack == "pin":
            return [self.popen(self.atk.ns, [
                "pin", *to_vm, "--src-ip", "10.0.1.1",
                "--dport", str(SINK_PORT), "--ports", str(PIN_PORTS),
                "--trickle", str(PIN_TRICKLE[0]),
                "--trickle-interval", str(PIN_TRICKLE[1]),
                "--seconds", "10"])]
        if attack == "vmflood":
            return [self.popen(self.vm2.ns, [
                "vmflood", "--dst-mac", mac(self.atk), "--dst-ip", "10.0.1.1",
                "--src-ip", VM2_IP, "--dport", "80",
                "--flows", str(VM_FLOOD_FLOWS),
                "--payload", str(VM_FLOOD_PAYLOAD), *bound(*VM_FLOOD)])]
        raise ValueError(attack)

    def teardown(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.communicate()
        self.topo.teardown()


def attack_run(build: OvsBuild, attack: str,
               tracked: bool = False) -> Iterator[AttackRun]:
    if build.pac_table() is None:
        pytest.skip("PAC not built yet")
    bed = AttackBed(build)
    ok = False
    try:
        bed.setup(tracked)
        run = bed.run(attack)
        print(run.report(attack))
        yield run
        bed.topo.check_health()
        ok = True
    finally:
        if not ok:
            bed.topo.save_logs(LOG_DIR / f"test_attack-{attack}")
        bed.teardown()


@pytest.fixture(scope="module")
def syn(build: OvsBuild) -> Iterator[AttackRun]:
    yield from attack_run(build, "syn")


@pytest.fixture(scope="module")
def ack(build: OvsBuild) -> Iterator[AttackRun]:
    # Tracked: with the fast path (the default) a flood of bare ACKs starts
    # no tracking and makes no state at all, and the defences under test
    # are the tracked path's.
    yield from attack_run(build, "ack", tracked=True)


@pytest.fixture(scope="module")
def pin(build: OvsBuild) -> Iterator[AttackRun]:
    yield from attack_run(build, "pin")


@pytest.fixture(scope="module")
def vmflood(build: OvsBuild) -> Iterator[AttackRun]:
    yield from attack_run(build, "vmflood")


# ---------------------------------------------------------------------------
# Assertions shared by the attacks.

def byte_cap_reached(run: AttackRun) -> bool:
    """Whether vm2's held bytes came within two segments of
    max-held-bytes (builds that have that bound)."""
    config, peak = run.configs["vm2-p"], run.peak["vm2-p"]
    return "pac_held_bytes" in peak and "max-held-bytes" in config and \
        peak["pac_held_bytes"] + 2 * (VM_FLOOD_PAYLOAD + 54) > int(
            config["max-held-bytes"])


def assert_victim_unharmed(run: AttackRun,
                           floor: float = GOODPUT_FLOOR) -> None:
    run.attacked.assert_exact()
    base, under = goodput(run.baseline), goodput(run.attacked)
    print(f"victim: {under / MB:.2f} MB/s under attack, {base / MB:.2f} "
          f"MB/s without ({under / base:.0%})")
    assert under >= floor * base, (
        f"victim goodput {under / MB:.2f} MB/s under attack, "
        f"< {floor:.0%} of {base / MB:.2f} MB/s without")


def assert_memory_bounded(run: AttackRun) -> None:
    grown = run.rss_peak - run.rss_before
    assert grown <= rss_bound(run.configs), (
        f"ovs-vswitchd's RSS grew by {grown / MIB:.1f} MiB during the "
        f"attack, more than the caps allow "
        f"({rss_bound(run.configs) / MIB:.1f} MiB)")


def assert_caps_hold(run: AttackRun) -> None:
    for iface, config in run.configs.items():
        peak = run.peak[iface]
        assert peak.get("pac_flows", 0) <= int(config["max-flows"]), (
            iface, peak)
        assert peak.get("pac_held", 0) <= int(config["max-held"]), (
            iface, peak)
        assert run.after[iface]["pac_max_held_seen"] <= int(
            config["max-held"]), (iface, run.after[iface])


# ---------------------------------------------------------------------------
# (a) A random-tuple SYN flood at vm's listener.

# Each SYN-ACK vm sends to the flood counts a window until a dry time
# without the handshake's ACK gives it back, so a flood of 10 000 SYNs/s
# still takes a part of the threshold: the victim keeps 76-83 % of its
# goodput (43-62 % when unanswered SYN-ACKs waited 16 dry times).  The floor
# is lower than the other attacks' by that cost.
SYN_FLOOD_GOODPUT_FLOOR = 0.6


def test_syn_flood_victim_exact_and_goodput(syn: AttackRun) -> None:
    assert_victim_unharmed(syn, SYN_FLOOD_GOODPUT_FLOOR)


def test_syn_flood_memory_and_caps(syn: AttackRun) -> None:
    assert_memory_bounded(syn)
    assert_caps_hold(syn)


def test_syn_flood_defence_counters(syn: AttackRun) -> None:
    """The flood's random tuples (30 000 SYNs) fill vm's table of 256:
    evictions make room, and vm's SYN-ACKs count as handshakes."""
    out = syn.attackers[0]
    assert out["sent"] >= SYN_FLOOD[0] // 2, out
    max_flows = int(syn.configs["vm-p"]["max-flows"])
    assert syn.peak["vm-p"]["pac_flows"] == max_flows, syn.peak["vm-p"]
    assert syn.delta("vm-p", "pac_flows_created") > 10 * max_flows
    assert syn.delta("vm-p", "pac_evictions") > 10 * max_flows
    assert syn.delta("vm-p", "pac_handshake_triggers") > 10 * max_flows


# ---------------------------------------------------------------------------
# (a) A random-tuple ACK flood at vm, with blind RSTs at the victim
# connection (spoofed from the peer's address and port).

def test_ack_flood_victim_exact_and_goodput(ack: AttackRun) -> None:
    """Byte-exact: no blind RST ended the victim connection, in PAC or in
    vm's TCP."""
    assert_victim_unharmed(ack)


def test_ack_flood_memory_and_caps(ack: AttackRun) -> None:
    assert_memory_bounded(ack)
    assert_caps_hold(ack)


def test_ack_flood_defence_counters(ack: AttackRun) -> None:
    """Each ACK of a random tuple makes a flow that vm's RST (it has no
    such connection) closes again, so no state piles up; the blind RSTs
    are ignored: each had a random sequence number, and PAC believes an
    RST only at rcv_nxt or the VM's last ACK."""
    out = ack.attackers[0]
    acks = out["sent"] - out["rsts"]
    assert acks >= ACK_FLOOD[0] // 2 and out["rsts"] > 100, out
    created = ack.delta("vm-p", "pac_flows_created")
    assert created >= acks // 2, ack.after["vm-p"]
    assert created - ack.delta("vm-p", "pac_flows_closed") <= 4, (
        ack.after["vm-p"])
    # A busy machine's ovs-vswitchd may miss a few frames of the flood
    # (its sockets' receive buffers overflow): 80 % of them, not all.
    assert ack.delta("vm-p", "pac_rst_ignored") >= 0.8 * out["rsts"], (
        out, ack.after["vm-p"])


# ---------------------------------------------------------------------------
# (b) The pinning attack.

def test_pin_victim_exact_and_goodput(pin: AttackRun) -> None:
    assert_victim_unharmed(pin)


def test_pin_in_flight_not_pinned(pin: AttackRun) -> None:
    """Each port's second handshake (ISN + 2^30) replaced the abandoned
    one: vm's in_flight never came near 2^30; the estimate stays within a
    few thresholds (a request or max_hold release may pass it).  With
    libpac's SYN-reuse fix (cbf5630) reverted, in_flight was 2^30 here and
    pac_flows_closed 1."""
    out = pin.attackers[0]
    assert out["synacks"] == 2 * PIN_PORTS and out["established"] == \
        PIN_PORTS, f"vm did not answer the pinning handshakes: {out}"
    threshold = pin.after["vm-p"]["pac_threshold"]
    assert pin.peak["vm-p"]["pac_in_flight"] <= 16 * threshold, (
        pin.peak["vm-p"])
    assert pin.delta("vm-p", "pac_flows_closed") >= PIN_PORTS, (
        pin.after["vm-p"])
    assert pin.delta("vm-p", "pac_handshake_triggers") >= PIN_PORTS


def test_pin_memory_and_caps(pin: AttackRun) -> None:
    assert_memory_bounded(pin)
    assert_caps_hold(pin)


# ---------------------------------------------------------------------------
# (c) A flood from a second PAC port.

def test_vmflood_victim_exact_and_goodput(vmflood: AttackRun) -> None:
    assert_victim_unharmed(vmflood)


def test_vmflood_memory_and_caps(vmflood: AttackRun) -> None:
    """vm2 makes PAC hold its own segments up to the cap, and its 128
    connections overflow its table of 64, every entry of which holds
    packets: evictions, and the rest pass untracked."""
    assert_memory_bounded(vmflood)
    assert_caps_hold(vmflood)
    config, peak = vmflood.configs["vm2-p"], vmflood.peak["vm2-p"]
    assert vmflood.attackers[0]["sent"] >= VM_FLOOD[0] // 2
    assert vmflood.after["vm2-p"]["pac_max_held_seen"] == int(
        config["max-held"]) or byte_cap_reached(vmflood), (
        peak, vmflood.after["vm2-p"])
    assert peak["pac_flows"] == int(config["max-flows"]), peak
    assert vmflood.delta("vm2-p", "pac_untracked") > 0, vmflood.after["vm2-p"]
    assert vmflood.delta("vm2-p", "pac_evictions") > 0, vmflood.after["vm2-p"]


def test_vmflood_at_cap_longest_waiting_released(vmflood: AttackRun) -> None:
    """At the cap, PAC releases the longest-waiting held packet
    (pac_released_cap), and every TCP segment from the VM goes through
    PAC's decision (counted in pac_tx_packets: held, passed or
    untracked), none around it."""
    after = vmflood.after["vm2-p"]
    assert vmflood.delta("vm2-p", "pac_released_cap") > 0 or \
        byte_cap_reached(vmflood), after
    seen = vmflood.delta("vm2-p", "pac_tx_packets")
    assert seen >= 0.95 * vmflood.dp_packets["vm2-p"], (
        f"PAC decided on {seen} of the {vmflood.dp_packets['vm2-p']} TCP "
        f"segments the datapath took from vm2")


def test_vmflood_held_bytes_bounded(vmflood: AttackRun) -> None:
    """The per-port byte bound of held packets (other_config
    max-held-bytes, statistic pac_held_bytes).  Skipped while the build
    has no pac_held_bytes: the knob is being added in lib/, and this test
    comes with it."""
    peak = vmflood.peak["vm2-p"]
    if "pac_held_bytes" not in peak:
        pytest.skip("pac/show has no held_bytes: this build has no "
                    "max-held-bytes bound")
    cap = int(vmflood.configs["vm2-p"]["max-held-bytes"])
    assert peak["pac_held_bytes"] <= cap, peak
    assert peak["pac_held_bytes"] > cap // 2, (
        f"the flood did not reach the byte bound: {peak}")


def test_vmflood_own_in_flight_bounded(vmflood: AttackRun) -> None:
    """vm2 received no data, so its ACKs acknowledge nothing: only its
    requests may count, an initial window each (init-window x
    default-mss), on top of at most one threshold of admitted frames."""
    config, after = vmflood.configs["vm2-p"], vmflood.after["vm2-p"]
    assert after["pac_rx_bytes"] == 0, after
    window = int(config["init-window"]) * int(config["default-mss"])
    bound = (vmflood.delta("vm2-p", "pac_request_triggers") + 1) * window \
        + int(config["threshold"])
    assert vmflood.peak["vm2-p"]["pac_in_flight"] <= bound, (
        f"vm2's in_flight reached {vmflood.peak['vm2-p']['pac_in_flight']} "
        f"bytes, more than its requests' windows ({bound})")

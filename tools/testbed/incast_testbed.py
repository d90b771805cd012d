"""The incast testbed: real Linux TCP senders, a drop-tail ToR bottleneck,
and the patched ovs-vswitchd on the receiver's hypervisor.

    sender hosts             ToR (Linux bridge)                hypervisor (ovs-vswitchd)     VM
    ns snd1  eth0 ==veth== s1 ┐
    ns snd2  eth0 ==veth== s2 ├─ br-tor ─ uplink ==veth== up-p ─ br0 (netdev, NORMAL) ─ vm-p ==veth== eth0
    ...                       ┘    tbf on "uplink": rate + byte limit = the switch port's buffer

Every sender host runs one `incast server`; the VM runs `incast client`
(tools/incast-app), which opens N connections spread evenly over the hosts and
runs barrier-synchronised rounds, or overlapping requests (Poisson
arrivals, each to a random subset of the connections; Workload.overlap).
The bottleneck is the ToR port toward
the hypervisor: `tc tbf` with `rate` and a byte `limit` is a drop-tail
queue of that size, the shallow switch buffer of the paper.  PAC runs on
the VM's port (vm-p) of the hypervisor's Open vSwitch: "off" = plain OVS
(no PAC row), "pac" = PAC enabled with the threshold of the testbed,
"pac-tracked" = the same without the fast path
(other_config:fast-path=false: every connection tracked from its first
segment), "rwnd" = the same PAC row with other_config:policy=rwnd (the
receiver-window peer: no holding, each connection's window a share of the
threshold), "rdtcp" = the same PAC row with other_config:policy=rdtcp
(RDTCP's scheduler: those windows, and ACKs held first come first served
while the windows they open exceed the threshold), "ap" = plain OVS with
the senders pacing their answers by Adaptive Pacing (MODES;
tools/incast-app/server.c, ap_pace()).

Used by the system tests (test_incast.py), the demo and the benchmark sweep
(tools/incast, see `tools/incast --help`).  Everything it creates carries
the "ovspac-<pid>-" prefix of ovs_env and is removed by close(), or by
ovs_env.cleanup_stale() if the process was killed.

What the kernel here cannot do: it has no netem, so no delay is added; the
base RTT is what veths and the userspace datapath give (measured with ping
and reported).  `base_rtt_us` only tells PAC what to assume until it has
measured a handshake.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

from .dpdk_env import (HugeMount, Hugepages, add_dpdk_port, dpdk_ovs_config,
                       eal_arguments, reserve_hugepages, start_dpdk_ovs)
from .host_sysctl import RaisedSysctl, softnet_drops
from .ovs_env import (PREFIX, TOP, Netns, Ovs, OvsBuild,
                      disable_offloads, exit_text, run, unique_name,
                      wait_until)

INCAST_DIR = TOP / "tools" / "incast-app"
INCAST = INCAST_DIR / "incast"
SERVER_PORT = 7100
VM_IP = "10.1.0.2"
VM_PORT = "vm-p"
UPLINK_PORT = "up-p"
PREFIXLEN = 16
DPDK_SOCKET_LIMIT_MB = 256      # ovs-vswitchd's DPDK memory with 'pmd'.


def build_incast() -> Path:
    """Builds tools/incast-app/incast if it is missing or out of date."""
    run(["make", "-s", "-C", str(INCAST_DIR)], timeout=300)
    return INCAST


def all_cpus_mask() -> str:
    """Every CPU, as sysfs writes a cpumask: hex, a comma every 32 bits."""
    digits = format((1 << (os.cpu_count() or 1)) - 1, "x")
    groups = []
    while digits:
        groups.insert(0, digits[-8:])
        digits = digits[:-8]
    return ",".join(groups)


class PacConfigError(RuntimeError):
    """PAC did not take the testbed's configuration (Testbed.pac_on())."""


# Modes of a run: plain OVS, PAC on the VM's port, the receiver-window
# policy and RDTCP's scheduler on the VM's port (PAC's row with
# other_config:policy=rwnd or rdtcp), and plain OVS with the senders pacing
# by Adaptive Pacing (a sender-side peer of PAC).
MODES = ("off", "pac", "pac-tracked", "rwnd", "rdtcp", "ap")
# The modes that give the VM's port a PAC row, and the row's policy.
PAC_POLICIES = {"pac": "pac", "pac-tracked": "pac", "rwnd": "rwnd",
                "rdtcp": "rdtcp"}
# Other_config keys a mode adds to the testbed's own.
PAC_MODE_OPTIONS = {"pac-tracked": {"fast-path": "false"}}
# The "rdtcp" mode as the RDTCP paper runs it: queue_maxsize (the
# threshold) half the switch buffer (40 of 80 packets), unless --threshold
# says otherwise; at the whole buffer its budgets, without PAC's loss cap,
# overflowed the buffer here.  And RDTCP bounds no ACK's wait, while PAC's
# max_hold default (20 ms) forced ACKs out in bursts at 2 048 senders in
# ns-3: the mode runs with the most the PAC table allows, under
# the senders' 200 ms RTOmin, unless --max-hold says otherwise.
RDTCP_THRESHOLD_SHARE = 0.5
RDTCP_MAX_HOLD_US = 150000


@dataclass
class TestbedConfig:
    """The testbed's knobs; defaults are the paper's (§V): 1 Gbit/s,
    ~100 KB of switch buffer, RTOmin 200 ms."""
    __test__ = False            # Not a pytest test class.
    rate_mbit: float = 1000.0       # Bottleneck rate (ToR -> hypervisor).
    buffer_bytes: int = 100_000     # Drop-tail buffer (tbf byte limit).
    hosts: int = 8                  # Sender hosts (network namespaces).
    rto_min_ms: int = 200           # Senders' RTOmin, per route.
    # The VM's RTOmin, a route attribute as the senders' (None: the
    # kernel's, 200 ms).  Tenants lower it against incast timeouts.
    vm_rto_min_ms: Optional[int] = None
    cc: str = "cubic"               # Senders' congestion control.
    offloads: bool = False          # TSO/GSO/GRO on the sender links.
    mtu: int = 1500
    base_rtt_us: int = 100          # PAC's RTT until it measured one.
    pac_threshold: Optional[int] = None     # Default: see threshold().
    # PAC's max_hold column, microseconds (None: the schema's 20 000).
    pac_max_hold: Optional[int] = None
    # More PAC:other_config keys ("loss-floor-permille": "1000"), over the
    # testbed's own (base-rtt-us).
    pac_other_config: dict[str, str] = field(default_factory=dict)
    tbf_burst_bytes: int = 0        # Default: 3 MTUs (token bucket depth).
    # Receive buffer of ovs-vswitchd's AF_PACKET sockets on the uplink and
    # the VM's port (0: the kernel's net.core.rmem_default, 208 KB).  See
    # Testbed._add_ports().  16 MB: with 4 MB the uplink's socket dropped
    # 200-2 100 frames in the first round at 1 Gbit/s / 4 096 senders,
    # while the servers, the client and the datapath thread shared the two
    # CPUs, and answers stalled behind those losses.
    port_rcvbuf_bytes: int = 16 << 20
    # Receive packet steering on every veth end.  A veth hands a packet to
    # the backlog of the CPU that sent it, so one connection's segments
    # sent from two CPUs (the application's write, the softirq of an ACK)
    # can overtake each other, which no NIC with RSS does; with RPS the
    # backlog is chosen by the flow's hash.  Without it, at 1 Gbit/s /
    # 1 024 senders, 500-700 segments a run reach the VM out of order
    # with no loss, and PAC's loss cap takes them for drops.  Off by
    # default: at 500 Mbit/s it brought more drops (docs/benchmarks.md,
    # "Segments out of order").
    rps: bool = False
    # net.core.netdev_max_backlog while the testbed runs (0: the machine's
    # own, 1 000 by default).  A veth hands each frame to a CPU's input
    # backlog, and a backlog longer than that drops it: at 1 Gbit/s with
    # 4 096 senders (ports on ovs-vswitchd's main thread) the first round
    # lost 300-1 000 frames so, answers' segments and the VM's ACKs,
    # losses no switch of the experiment makes.  A NIC's ring holds
    # thousands of frames.  The sysctl is global: it is raised while any
    # testbed runs and put back after the last (host_sysctl.RaisedSysctl).
    # Each run counts what is still dropped (RunResult.host_drops).
    netdev_backlog: int = 10_000
    # Serve the uplink and the VM's port from a PMD thread (DPDK
    # net_af_packet ports on the same veths, polled by a thread of their
    # own on CPU 'pmd_cpu') instead of ovs-vswitchd's main thread, whose
    # poll loop adds 0.1-1 ms between a segment leaving the bottleneck and
    # PAC seeing it.  Needs hugepages (reserved and given back).
    pmd: bool = False
    pmd_cpu: int = 1
    # OVN on the hypervisor (testbed.incast_ovn.OvnTestbed, which needs
    # it set): the VM is a logical switch port, PAC is OVN policy.
    ovn: bool = False
    # The VM a libvirt guest (qemu TCG) on a tap port instead of a
    # namespace (testbed.incast_vm.VmTestbed, which needs it set).
    vm: bool = False

    def switch_name(self) -> str:
        """"OVN" or "OVS": the hypervisor's switch, as tables and plots
        name it."""
        return "OVN" if self.ovn else "OVS"

    def pac_option_words(self) -> list[str]:
        """pac_other_config as pac/show writes it: ["KEY=VALUE", ...]."""
        return [f"{k}={v}" for k, v in self.pac_other_config.items()]

    def threshold(self) -> int:
        """PAC's threshold: what may be in flight toward the VM without
        loss, the switch buffer plus the pipe (rate x base RTT), as in the
        paper (§III-B)."""
        if self.pac_threshold:
            return self.pac_threshold
        bdp = int(self.rate_mbit * 1e6 / 8 * self.base_rtt_us / 1e6)
        return max(3000, self.buffer_bytes + bdp)

    def burst(self) -> int:
        # Small: a deep token bucket lets bursts pass above the rate.
        return self.tbf_burst_bytes or 3 * self.mtu


@dataclass
class Workload:
    """Paper §V: 'fixed volume per sender' or 'fixed total volume', in
    barrier-synchronised rounds; or, with 'overlap', requests that arrive
    at Poisson times whether or not earlier answers are still flowing, each
    to 'fanout' connections drawn at random ('rounds' of them; each answer
    'bytes_per_sender', or 'total_bytes' split over the fanout)."""
    senders: int
    rounds: int = 10                # Rounds, or requests with 'overlap'.
    bytes_per_sender: int = 0       # One of these two is set.
    total_bytes: int = 0
    overlap: bool = False
    rate_rps: float = 0.0           # Requests a second; 0: from 'load'.
    fanout: int = 0                 # Answers a request; 0: senders / 4.
    # With rate_rps 0: the offered load, as a share of the bottleneck.
    load: float = 0.5
    seed: int = 1                   # Of the arrival times and the draws.
    # How often the client samples the senders' counters (0: at the start
    # and the end only): tools/incast-app/README.md, "Overlapping requests".
    stats_ms: int = 50
    # Short RPCs of the VM beside the workload (`incast rpc`: a new
    # connection each, a 16-byte request, an answer of 'rpc_bytes'),
    # 'rpc_rps' a second from when the workload starts until it ends; with
    # 'senders' 0, alone for 'rpc_seconds'.
    rpc_rps: float = 0.0
    rpc_bytes: int = 2048
    rpc_seconds: float = 4.0

    def request_fanout(self) -> int:
        """Answers per overlapping request: 'fanout', or a quarter of the
        connections, so that each request is an incast of its own and
        the requests overlapping it bring more."""
        return min(self.senders, self.fanout or max(1, self.senders // 4))

    def request_bytes(self) -> int:
        """Answer bytes per overlapping request."""
        return (self.total_bytes
                or self.bytes_per_sender * self.request_fanout())

    def request_rate(self, rate_mbit: float) -> float:
        """Requests a second: 'rate_rps', or 'load' x the bottleneck's rate
        in requests of request_bytes()."""
        if self.rate_rps:
            return self.rate_rps
        return self.load * rate_mbit * 1e6 / 8 / self.request_bytes()

    def describe(self) -> str:
        rpcs = (f"RPCs of {self.rpc_bytes} B at {self.rpc_rps:g}/s"
                if self.rpc_rps else "")
        if not self.senders:
            return f"{rpcs} alone for {self.rpc_seconds:g} s"
        return self._describe_answers() + (f" with {rpcs}" if rpcs else "")

    def _describe_answers(self) -> str:
        if self.overlap:
            if self.bytes_per_sender:
                return (f"{self.senders} senders, {self.rounds} requests "
                        f"of {self.request_fanout()} x "
                        f"{self.bytes_per_sender} B")
            return (f"{self.senders} senders, {self.rounds} requests of "
                    f"{self.total_bytes} B from {self.request_fanout()}")
        if self.bytes_per_sender:
            return f"{self.senders} x {self.bytes_per_sender} B"
        return f"{self.senders} senders, {self.total_bytes} B in total"


@dataclass
class RunResult:
    """One run.  With overlapping requests (workload "overlap") a "round"
    is a request: 'rounds' counts requests, 'timeout_rounds' the requests
    during which a sender's or the VM's RTO fired or an answer stalled,
    and the round_* lists are per request."""
    mode: str                       # One of MODES.
    senders: int
    rounds: int
    goodput_mbps: float
    timeout_rounds: int
    rct_p50_ms: float
    rct_p99_ms: float
    bytes: int
    errors: int                     # Failed connections (incast client).
    sender_rtos: int
    sender_retrans: int
    bytes_per_sender: int = 0
    total_bytes: int = 0
    # As PAC sees it (pac mode only; None otherwise).
    rtt_p50_us: Optional[float] = None
    rtt_p99_us: Optional[float] = None
    max_held: Optional[int] = None
    pac: dict = field(default_factory=dict)     # pac_* statistics deltas.
    bottleneck_drops: int = 0       # tbf drops during the run.
    client_exit: int = 0
    round_rct_ms: list = field(default_factory=list)
    round_rtos: list = field(default_factory=list)  # Sender RTOs per round.
    # Answers per round that waited about an RTOmin mid-way (the incast
    # client's --stall-ms): a loss a timer repaired, counted by no RTO
    # counter when it was a tail loss probe.
    round_stalls: list = field(default_factory=list)
    stall_rounds: int = 0
    # The VM's own retransmission timeouts (TcpExt TCPTimeouts of its
    # namespace): during the rounds, per round, and while the connections
    # were set up.
    vm_timeouts: int = 0
    round_vm_timeouts: list = field(default_factory=list)
    setup_vm_timeouts: int = 0
    # Overlapping requests: "rounds" or "overlap"; answers per request,
    # requests a second, the most requests outstanding at once and the
    # most answers queued on one connection (0 for rounds).
    workload: str = "rounds"
    fanout: int = 0
    rate_rps: float = 0.0
    max_outstanding: int = 0
    max_queue: int = 0
    # Of vm_timeouts, those on the client's connections for the senders'
    # counters (overlapping requests only): the measurement's own share.
    stats_vm_timeouts: int = 0
    # Of 'errors', answers with wrong bytes (a broken path, never a
    # scheme's collapse), and whether the connections could not all be set
    # up (no round ran).
    corrupt: int = 0
    setup_failed: bool = False
    # Answer writes the senders paced by Adaptive Pacing (mode "ap"; 0
    # otherwise): that the senders did pace.
    sender_paced: int = 0
    # Frames the VM's port could not hand to the VM during the run (its
    # TX drops: a libvirt guest's tap queue full while qemu falls behind;
    # VmTestbed only, 0 otherwise): losses that are no switch's.
    vm_port_drops: int = 0
    # Frames dropped during the run on the way between the namespaces:
    # a CPU's input backlog full (every namespace's, and the rest of the
    # machine's; TestbedConfig.netdev_backlog) or an ovs-vswitchd port
    # socket's receive buffer full (the datapath thread fell behind):
    # losses that are no switch's either (Testbed.host_drops()).
    host_drops: int = 0
    # The VM's short RPCs (Workload.rpc_rps; 0 and None without): how many
    # started, finished and failed, how many retransmitted anything (their
    # SYN included), and the latency of those that finished.
    rpcs: int = 0
    rpc_failed: int = 0
    rpc_retransmitted: int = 0
    rpc_p50_ms: Optional[float] = None
    rpc_p99_ms: Optional[float] = None
    rpc_max_ms: Optional[float] = None

    def round_timed_out(self) -> list:
        """Per round: whether a sender's RTO fired, an answer stalled or
        the VM's own RTO fired (what timeout_rounds counts)."""
        vm = self.round_vm_timeouts or [0] * len(self.round_rtos)
        return [r > 0 or s > 0 or v > 0
                for r, s, v in zip(self.round_rtos, self.round_stalls, vm)]

    def warm_timeout_rounds(self) -> int:
        """Timeout rounds after the first.  The first round after the
        connections are set up meets cold peers (slow start, windows PAC
        has not seen yet), where PAC is weakest; see docs/benchmarks.md."""
        return sum(self.round_timed_out()[1:])

    def warm_rto_rounds(self) -> int:
        """Rounds after the first in which a sender's RTO fired (stalls
        by a delayed tail loss probe not counted)."""
        return sum(1 for n in self.round_rtos[1:] if n > 0)

    def result_line(self) -> str:
        return (f"RESULT mode={self.mode} senders={self.senders} "
                f"goodput_mbps={self.goodput_mbps:.1f} "
                f"timeout_rounds={self.timeout_rounds} rounds={self.rounds} "
                f"rct_p99_ms={self.rct_p99_ms:.1f} "
                f"vm_timeouts={self.vm_timeouts}")

    def as_row(self) -> dict:
        row = asdict(self)
        row.pop("pac")
        row.pop("round_rct_ms")
        row.pop("round_rtos")
        row.pop("round_stalls")
        row.pop("round_vm_timeouts")
        for k in ("tx_held", "released_fit", "released_max_hold",
                  "stale_drops"):
            row[f"pac_{k}"] = self.pac.get(f"pac_{k}", "")
        return row


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (the incast client uses the same)."""
    if not values:
        return float("nan")
    s = sorted(values)
    k = max(1, math.ceil(p / 100 * len(s)))
    return s[k - 1]


class Testbed:
    """The namespaces, links, bottleneck, OVS and incast servers.  Use as a
    context manager, or call setup() and close()."""
    __test__ = False            # Not a pytest test class.

    def __init__(self, build: OvsBuild,
                 config: TestbedConfig = TestbedConfig()):
        self.build = build
        self.cfg = config
        self.workdir = Path(tempfile.mkdtemp(prefix=f"{PREFIX}-{os.getpid()}-"))
        self.namespaces: list[Netns] = []
        self.senders: list[tuple[Netns, str]] = []      # (ns, ip)
        self.servers: list[subprocess.Popen] = []
        self.server_logs: list[Path] = []
        self.server_resets = 0
        # The VM's namespace (_add_vm_link(); VmTestbed has none).
        self.vm: Optional[Netns] = None
        self.ovs: Optional[Ovs] = None
        self.hugepages: Optional[Hugepages] = None
        self.huge: Optional[HugeMount] = None
        self.base_rtt_ms: Optional[float] = None
        # Where the daemons' logs and the runs' JSON go when the testbed is
        # torn down (its work directory is removed); None: nowhere.
        self.keep_logs_to: Optional[Path] = None
        self.backlog: Optional[RaisedSysctl] = None

    def __enter__(self) -> "Testbed":
        try:
            return self.setup()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc) -> None:
        if self.keep_logs_to:
            self.save_logs(self.keep_logs_to)
        self.close()

    # -- set-up --------------------------------------------------------------

    def _netns(self, kind: str) -> Netns:
        ns = Netns(unique_name(kind))
        self.namespaces.append(ns)
        return ns

    def _veth(self, a: Netns, a_dev: str, b: Netns, b_dev: str,
              offloads: bool = False) -> None:
        run(["ip", "link", "add", a_dev, "netns", a.name, "type", "veth",
             "peer", "name", b_dev, "netns", b.name])
        for ns, dev in ((a, a_dev), (b, b_dev)):
            if not offloads:
                disable_offloads(ns, dev)
            if self.cfg.rps:
                ns.run(["sh", "-c", f"echo {all_cpus_mask()} > "
                        f"/sys/class/net/{dev}/queues/rx-0/rps_cpus"])
            ns.run(["ip", "link", "set", dev, "mtu", str(self.cfg.mtu), "up"])

    def setup(self) -> "Testbed":
        cfg = self.cfg
        if cfg.hosts < 1 or cfg.hosts > 250:
            raise ValueError("hosts: 1 to 250 sender hosts")
        build_incast()
        if cfg.netdev_backlog:
            self.backlog = RaisedSysctl("net.core.netdev_max_backlog",
                                        cfg.netdev_backlog)
            self.backlog.acquire()
        self.tor = self._netns("tor")
        self.hv = self._netns("hv")

        # The hypervisor's Open vSwitch, its bridges, the uplink and the
        # VM's port.
        self.ovs = Ovs(self.build, self.workdir, self.hv,
                       self._dpdk_config() if cfg.pmd else None)
        if cfg.pmd:
            start_dpdk_ovs(self.ovs)
        else:
            self.ovs.start()
        self._add_bridges()
        self._veth(self.tor, "uplink", self.hv, UPLINK_PORT)
        self._add_vm_link()
        if cfg.pmd:
            self._add_dpdk_ports()
        else:
            self._add_ports()
        self._ports_added()
        self._vm_up()

        # The ToR: a Linux bridge; its port toward the hypervisor is the
        # bottleneck (drop-tail, 'buffer_bytes' deep).
        self.tor.run(["ip", "link", "add", "br-tor", "type", "bridge",
                      "stp_state", "0", "forward_delay", "0"])
        self.tor.run(["ip", "link", "set", "br-tor", "up"])
        # Bridged frames would also traverse iptables (br_netfilter is
        # built into this kernel): a switch does not do that.
        for proto in ("iptables", "ip6tables", "arptables"):
            self.tor.run(["sysctl", "-qw",
                          f"net.bridge.bridge-nf-call-{proto}=0"],
                         check=False)
        self.tor.run(["ip", "link", "set", "uplink", "master", "br-tor"])
        self.tor.run(["tc", "qdisc", "replace", "dev", "uplink", "root", "tbf",
                      "rate", f"{cfg.rate_mbit}mbit",
                      "burst", str(cfg.burst()),
                      "limit", str(cfg.buffer_bytes)])

        for i in range(cfg.hosts):
            ns = self._netns(f"snd{i + 1}")
            ip = f"10.1.1.{i + 1}"
            self._veth(ns, "eth0", self.tor, f"s{i + 1}", cfg.offloads)
            self.tor.run(["ip", "link", "set", f"s{i + 1}", "master",
                          "br-tor"])
            ns.run(["ip", "addr", "add", f"{ip}/{PREFIXLEN}", "dev", "eth0"])
            # RTOmin is a route attribute: the senders' RTO is what matters
            # in incast (their data is what the bottleneck drops).
            self._route_rto_min(ns, ip, cfg.rto_min_ms)
            self.senders.append((ns, ip))
            self._start_server(ns, ip)
        for ns, ip in self.senders:
            self._ping(ns, VM_IP)
        self.base_rtt_ms = self._measure_rtt()
        return self

    # -- the hypervisor's switch: plain OVS (OvnTestbed: OVN) ----------------

    def switch_description(self) -> str:
        """What the hypervisor's switch is, for the demo's header."""
        return "OVS bridge br0 (NORMAL)"

    def _add_bridges(self) -> None:
        """br0 (netdev), which holds the uplink and the VM's port."""
        self.ovs.vsctl("add-br", "br0", "--", "set", "Bridge", "br0",
                       "datapath_type=netdev")

    def _port_bridge(self, port: str) -> str:
        """The bridge that 'port' (UPLINK_PORT or VM_PORT) is added to."""
        return "br0"

    def _port_columns(self, port: str) -> list[str]:
        """Interface columns set when 'port' is added ("COLUMN=VALUE")."""
        return []

    def _ports_added(self) -> None:
        """Both ports are on their bridges: br0 forwards as a learning
        switch."""
        self.ovs.ofctl("del-flows", "br0")
        self.ovs.ofctl("add-flow", "br0", "actions=NORMAL")

    def _pac_enable(self, columns: dict) -> None:
        """Gives the VM's port a PAC row with 'columns'."""
        self.ovs.pac_enable(VM_PORT, **columns)

    def pac_off(self) -> None:
        """Takes PAC off the VM's port."""
        self.ovs.pac_disable(VM_PORT)

    # -- the VM: a namespace (VmTestbed: a libvirt guest) --------------------

    def _add_vm_link(self) -> None:
        """The VM's namespace and its link to the hypervisor: a veth, whose
        hypervisor end (VM_PORT) _add_ports() adds to the bridge."""
        self.vm = self._netns("vm")
        self._veth(self.hv, VM_PORT, self.vm, "eth0")

    def _switch_ports(self) -> tuple[str, ...]:
        """The ports the testbed adds to the hypervisor's switch itself."""
        return (UPLINK_PORT, VM_PORT)

    def _vm_up(self) -> None:
        """Gives the VM its address, once its port is on the switch."""
        self.vm.run(["ip", "addr", "add", f"{VM_IP}/{PREFIXLEN}",
                     "dev", "eth0"])
        # The VM closes N connections per run: let it reuse ports.
        self.vm.run(["sysctl", "-qw", "net.ipv4.tcp_tw_reuse=1"])
        if self.cfg.vm_rto_min_ms:
            self._route_rto_min(self.vm, VM_IP, self.cfg.vm_rto_min_ms)

    @staticmethod
    def _route_rto_min(ns: Netns, src: str, rto_min_ms: Optional[int]) -> None:
        """The route of 'ns' (address 'src') to the testbed's subnet, with
        RTOmin 'rto_min_ms' (None: the kernel's)."""
        ns.run(["ip", "route", "replace", f"10.1.0.0/{PREFIXLEN}",
                "dev", "eth0", "proto", "kernel", "scope", "link",
                "src", src]
               + (["rto_min", f"{rto_min_ms}ms"] if rto_min_ms else []))

    def set_rto_min(self, senders_ms: int,
                    vm_ms: Optional[int] = None) -> None:
        """Sets the senders' RTOmin and the VM's (None: the kernel's) on
        the live testbed, for the runs that follow (and the client's stall
        limit with them, stall_ms())."""
        self.cfg.rto_min_ms = senders_ms
        self.cfg.vm_rto_min_ms = vm_ms
        for ns, ip in self.senders:
            self._route_rto_min(ns, ip, senders_ms)
        self._route_rto_min(self.vm, VM_IP, vm_ms)

    def _run_client(self, args: list[str], jfile: Path,
                    timeout: float) -> subprocess.CompletedProcess:
        """Runs `incast client ARGS` in the VM, its JSON result into
        'jfile'; returns the finished process (stdout and stderr as
        text)."""
        return self.vm.run([str(INCAST), "client", *args, "--json",
                            str(jfile)], check=False, timeout=timeout)

    def _dpdk_config(self) -> dict[str, str]:
        """Reserves ovs-vswitchd's hugepages and mounts its private
        hugetlbfs (close() gives both back), and returns the
        Open_vSwitch:other_config that starts DPDK on them: no PCI, one
        PMD thread on 'pmd_cpu'."""
        self.hugepages = Hugepages()
        self.huge = reserve_hugepages(self.hugepages, DPDK_SOCKET_LIMIT_MB,
                                      self.workdir / "huge")
        return dpdk_ovs_config(eal_arguments(unique_name("eal"), self.huge),
                               hex(1 << self.cfg.pmd_cpu),
                               DPDK_SOCKET_LIMIT_MB)

    def _add_dpdk_ports(self) -> None:
        """The uplink and the VM's port as DPDK net_af_packet devices on
        the same veths.  Their rings get 4 096 frames (DPDK's default is
        512), room for a burst of 1 024 requests, as 'port_rcvbuf_bytes'
        gives the AF_PACKET sockets of the main thread's ports."""
        for n, port in enumerate(self._switch_ports()):
            add_dpdk_port(self.ovs, port, f"net_af_packet{n},iface={port},"
                          "qpairs=1,framecnt=4096",
                          bridge=self._port_bridge(port),
                          columns=self._port_columns(port))

    def _add_ports(self) -> None:
        """Adds the uplink and the VM's port to their bridges.
        ovs-vswitchd reads them through AF_PACKET sockets (netdev-linux),
        whose receive buffer
        is net.core.rmem_default (208 KB; OVS sets no SO_RCVBUF): a burst of
        a thousand requests from the VM, or a 1 Gbit/s stream while the
        thread is busy, overflows it and loses packets that no switch of the
        experiment drops (then the VM's or the senders' RTOs show up in the
        figures).  A hypervisor's NIC rings hold thousands of frames, so the
        sockets get 'port_rcvbuf_bytes'.  rmem_default is global (read-only
        inside a namespace) and read when a socket is made: it is raised
        only while the ports are added, then put back (RaisedSysctl, as
        netdev_max_backlog: testbeds running side by side do not put back
        each other's raised value)."""
        want = self.cfg.port_rcvbuf_bytes
        with (RaisedSysctl("net.core.rmem_default", want) if want
              else contextlib.nullcontext()):
            for port in self._switch_ports():
                columns = self._port_columns(port)
                self.ovs.vsctl("add-port", self._port_bridge(port), port,
                               *(["--", "set", "Interface", port,
                                  *columns] if columns else []))

    def _start_server(self, ns: Netns, ip: str) -> None:
        path = self.workdir / f"server-{ip}.log"
        log = open(path, "wb")
        p = subprocess.Popen(
            ns.cmd([str(INCAST), "server", "--listen", f"{ip}:{SERVER_PORT}",
                    "--cc", self.cfg.cc]),
            stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            start_new_session=True)
        log.close()
        self.servers.append(p)
        self.server_logs.append(path)

    def reset_servers(self, timeout: float = 10) -> None:
        """Makes every incast server reset the connections it holds (an
        RST each; SIGUSR2) and waits until each one logged it.  A client
        that gave up (a run that collapsed) leaves its connections on the
        servers, retransmitting with backed-off timers; without this, the
        next run would be charged with their RTOs."""
        self.server_resets += 1
        for p in self.servers:
            p.send_signal(signal.SIGUSR2)
        deadline = time.monotonic() + timeout
        for path in self.server_logs:
            while (path.read_text(errors="replace").count(
                    "incast server: reset ") < self.server_resets):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"an incast server did not reset its "
                                       f"connections (log {path})")
                time.sleep(0.02)

    def _ping(self, ns: Netns, ip: str, timeout: float = 15) -> None:
        def ok():
            return ns.run(["ping", "-c", "1", "-W", "1", ip],
                          check=False).returncode == 0
        wait_until(ok, timeout, 0.1, f"ping {ip} from {ns.name}")

    def _measure_rtt(self) -> float:
        """Average ping RTT sender host 1 -> VM, in ms."""
        ns, _ = self.senders[0]
        out = ns.run(["ping", "-c", "20", "-i", "0.01", "-q", VM_IP],
                     check=False, timeout=30).stdout
        m = re.search(r"= [\d.]+/([\d.]+)/", out)
        return float(m.group(1)) if m else float("nan")

    # -- runs ----------------------------------------------------------------

    def tbf_drops(self) -> int:
        out = self.tor.run(["tc", "-s", "qdisc", "show", "dev", "uplink"]).stdout
        m = re.search(r"dropped (\d+)", out)
        return int(m.group(1)) if m else 0

    def port_socket_drops(self) -> int:
        """Frames the packet sockets of the hypervisor's namespace
        (ovs-vswitchd's ports) have dropped so far, their receive buffer
        full: the 'd' of ss's socket memory line."""
        out = self.hv.run(["ss", "-0", "-m", "-n"], check=False).stdout
        return sum(int(n) for n in re.findall(r",d(\d+)\)", out))

    def host_drops(self) -> int:
        """Frames dropped so far on the way between the namespaces, where
        no switch of the experiment drops: the CPUs' input backlogs (the
        whole machine's) and ovs-vswitchd's port sockets."""
        return softnet_drops() + self.port_socket_drops()

    def vm_port_drops(self) -> int:
        """TX drops of the VM's port so far (VmTestbed: the guest's tap);
        not counted for the namespace's veth: 0."""
        return 0

    def pac_on(self, policy: str = "pac", options: dict | None = None,
               **columns) -> None:
        """Gives the VM's port its PAC row with 'policy' (other_config
        policy, default pac), the other_config keys 'options' and
        'columns' over the testbed's own."""
        threshold = self.cfg.threshold()
        if policy == "rdtcp" and not self.cfg.pac_threshold:
            threshold = max(3000, int(threshold * RDTCP_THRESHOLD_SHARE))
        cols = {"threshold": threshold,
                "other_config": {"base-rtt-us": str(self.cfg.base_rtt_us),
                                 **self.cfg.pac_other_config,
                                 **(options or {})}}
        if policy != "pac":
            cols["other_config"]["policy"] = policy
        if self.cfg.pac_max_hold:
            cols["max_hold"] = self.cfg.pac_max_hold
        elif policy == "rdtcp":
            cols["max_hold"] = RDTCP_MAX_HOLD_US
        cols.update(columns)
        self._pac_enable(cols)
        # pac/show's first line ends in the port's status:pac, read live
        # (the Interface:status column may lag behind).
        deadline = time.monotonic() + 10
        while True:
            show = self.ovs.appctl("pac/show", VM_PORT, check=False)
            status = show.partition("\n")[0].partition("): ")[2]
            if status == "enabled" or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        if status != "enabled":
            raise PacConfigError(f"PAC is not enabled on the VM port: {show}")
        # OVS only logs an unknown other_config key: check that each one
        # given took effect, as pac/show's "config:" line shows them.
        config = next((line.split() for line in show.splitlines()
                       if line.strip().startswith("config:")), [])
        for word in self.cfg.pac_option_words():
            if word not in config:
                raise PacConfigError(f"PAC other_config:{word} did not take "
                                     f"effect (config: {' '.join(config)})")

    def _pac_counters(self) -> dict[str, int]:
        """pac_* counters of the VM port, read now from pac/show (the
        Interface:statistics column lags by up to 5 s).  The "config:"
        line holds configuration, not counters."""
        out = self.ovs.appctl("pac/show", VM_PORT)
        stats = "\n".join(line for line in out.splitlines()
                          if not line.strip().startswith("config:"))
        return {f"pac_{k}": int(v)
                for k, v in re.findall(r"\b([a-z0-9_]+)=(\d+)\b", stats)}

    def _pac_rtts(self) -> list[float]:
        out = self.ovs.appctl("pac/dump-flows", VM_PORT, timeout=30)
        return [float(v) for v in re.findall(r"\brtt_us=(\d+)", out)
                if int(v) > 0]

    def run(self, mode: str, wl: Workload,
            timeout_ms: int = 30000) -> RunResult:
        """One run of 'wl' in 'mode' (one of MODES).  PAC is enabled
        fresh for a "pac", "rwnd" or "rdtcp" run (so its high-water marks
        are the run's own) and disabled after it; an "ap" run asks the
        senders to pace."""
        if mode not in MODES:
            raise ValueError(f"mode: one of {', '.join(MODES)}, not "
                             f"{mode!r}")
        if not wl.senders and not wl.rpc_rps:
            raise ValueError("a workload of no senders runs RPCs alone: "
                             "rpc_rps > 0")
        cmd, budget = (self._client_command(mode, wl, timeout_ms)
                       if wl.senders else ([], 0))
        jfile = self.workdir / f"run-{mode}-{wl.senders}.json"

        self.reset_servers()
        policy = PAC_POLICIES.get(mode)
        if policy:
            self.pac_on(policy, PAC_MODE_OPTIONS.get(mode))
        before = self._pac_counters() if policy else {}
        drops0 = self.tbf_drops()
        port_drops0 = self.vm_port_drops()
        host_drops0 = self.host_drops()
        rpc = None
        try:
            if wl.rpc_rps:
                rpc = self._start_rpcs(wl)
            if wl.senders:
                p = self._run_client(cmd, jfile, budget)
            else:
                time.sleep(wl.rpc_seconds)
            rpc_line = self._stop_rpcs(rpc) if rpc else ""
            rpc = None
            drops = self.tbf_drops() - drops0
            port_drops = self.vm_port_drops() - port_drops0
            host_drops = self.host_drops() - host_drops0
            pac, rtts = {}, []
            if policy:
                after = self._pac_counters()
                pac = {k: v - before.get(k, 0) for k, v in after.items()}
                # Gauges, not counters: keep their values.
                for k in ("pac_max_held_seen", "pac_held", "pac_flows",
                          "pac_threshold", "pac_avg_rtt_us", "pac_in_flight",
                          "pac_alpha_permille", "pac_control_interval_us",
                          "pac_copy_delay_us", "pac_tracking"):
                    if k in after:
                        pac[k] = after[k]
                rtts = self._pac_rtts()
        finally:
            if rpc:
                rpc.kill()
                rpc.wait()
            if policy:
                self.pac_off()
        if wl.senders:
            r = self._result(mode, wl, p, jfile, drops, pac, rtts)
        else:
            r = RunResult(mode=mode, senders=0, rounds=0, goodput_mbps=0.0,
                          timeout_rounds=0, rct_p50_ms=0.0, rct_p99_ms=0.0,
                          bytes=0, errors=0, sender_rtos=0,
                          sender_retrans=0, pac=pac, bottleneck_drops=drops)
        r.vm_port_drops = port_drops
        r.host_drops = host_drops
        if rpc_line:
            self._note_rpcs(r, rpc_line)
        if wl.overlap:
            r.workload = "overlap"
            r.fanout = wl.request_fanout()
            r.rate_rps = round(wl.request_rate(self.cfg.rate_mbit), 3)
        return r

    def _client_command(self, mode: str, wl: Workload,
                        timeout_ms: int) -> tuple[list[str], float]:
        """The incast client's arguments for 'wl' in 'mode' (but --json),
        and how long it may take, seconds."""
        hosts = self._hosts_for(wl.senders)
        per_host = wl.senders // hosts
        servers = ",".join(f"{ip}:{SERVER_PORT}"
                           for _, ip in self.senders[:hosts])
        cmd = ["--servers", servers,
               "--conns-per-server", str(per_host),
               "--timeout-ms", str(timeout_ms),
               "--stall-ms", str(self.stall_ms())]
        if wl.overlap:
            rps = wl.request_rate(self.cfg.rate_mbit)
            cmd += ["--poisson-rps", f"{rps:.6g}",
                    "--fanout", str(wl.request_fanout()),
                    "--requests", str(wl.rounds), "--seed", str(wl.seed),
                    "--stats-ms", str(wl.stats_ms)]
            # The requests arrive over about rounds / rps seconds; each
            # may take up to timeout_ms.
            budget = 60 + wl.rounds / rps + 2 * timeout_ms / 1000
        else:
            cmd += ["--rounds", str(wl.rounds)]
            budget = 60 + wl.rounds * (timeout_ms / 1000 + 2)
        if wl.bytes_per_sender:
            cmd += ["--bytes-per-sender", str(wl.bytes_per_sender)]
        else:
            cmd += ["--total-bytes", str(wl.total_bytes)]
        if mode == "ap":
            cmd += ["--ap-buffer", str(self.cfg.buffer_bytes),
                    "--ap-rate-mbps", str(round(self.cfg.rate_mbit))]
        return cmd, budget

    # An RPC that takes longer fails (`incast rpc --timeout-ms`).
    RPC_TIMEOUT_MS = 5000

    def _start_rpcs(self, wl: Workload) -> subprocess.Popen:
        """Starts `incast rpc` in the VM: wl.rpc_rps RPCs a second, one
        sender host after the other, until _stop_rpcs()."""
        servers = ",".join(f"{ip}:{SERVER_PORT}" for _, ip in self.senders)
        return subprocess.Popen(
            self.vm.cmd([str(INCAST), "rpc", "--servers", servers,
                         "--count", "0", "--rate-rps", f"{wl.rpc_rps:g}",
                         "--bytes", str(wl.rpc_bytes),
                         "--timeout-ms", str(self.RPC_TIMEOUT_MS)]),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, start_new_session=True)

    def _stop_rpcs(self, p: subprocess.Popen) -> str:
        """Stops `incast rpc` starting RPCs; returns its RPC line once
        those under way have finished."""
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=self.RPC_TIMEOUT_MS / 1000 + 30)
        line = _last_line(out, "RPC ")
        if p.returncode or not line:
            raise RuntimeError(f"incast rpc failed (exit {p.returncode}): "
                               f"{err.strip()[-2000:]}")
        return line

    @staticmethod
    def _note_rpcs(r: RunResult, line: str) -> None:
        """Copies `incast rpc`'s RPC line into 'r'."""
        f = dict(re.findall(r"\b(\w+)=([\d.]+)", line))
        r.rpcs = int(f["count"])
        r.rpc_failed = int(f["failed"])
        r.rpc_retransmitted = int(f["retransmitted"])
        if int(f["ok"]):
            r.rpc_p50_ms = float(f["p50_ms"])
            r.rpc_p99_ms = float(f["p99_ms"])
            r.rpc_max_ms = float(f["max_ms"])

    def stall_ms(self) -> int:
        """The wait within an answer that the incast client counts as a
        timeout: 0.9 x the senders' RTOmin, as their RTO and their delayed
        tail loss probe both wait at least RTOmin."""
        return max(1, self.cfg.rto_min_ms * 9 // 10)

    def _hosts_for(self, senders: int) -> int:
        """The most sender hosts (up to cfg.hosts) that divide 'senders'
        evenly, so every host carries the same number of connections."""
        if senders < 1:
            raise ValueError("senders: at least 1")
        return max(h for h in range(1, min(self.cfg.hosts, senders) + 1)
                   if senders % h == 0)

    @staticmethod
    def _result(mode: str, wl: Workload, p: subprocess.CompletedProcess,
                jfile: Path, drops: int, pac: dict,
                rtts: list[float]) -> RunResult:
        res = dict(re.findall(r"\b(\w+)=([\d.]+)",
                              _last_line(p.stdout, "RESULT ")))
        rto = dict(re.findall(r"\b(\w+)=(\d+)",
                              _last_line(p.stdout, "RTO ")))
        if "goodput_mbps" not in res:
            raise RuntimeError(f"incast client failed (exit {p.returncode})"
                               f": {p.stderr.strip()[-2000:]}")
        rcts, rtos, stalls, vm = [], [], [], []
        try:
            doc = json.loads(jfile.read_text())
            # Per round, or per overlapping request: the same fields.
            rounds = doc["requests"] if "requests" in doc else doc["rounds"]
            rcts = [r["rct_ms"] for r in rounds if r.get("ok")]
            rtos = [r.get("sender_rtos", -1) for r in rounds]
            stalls = [r.get("stalls", 0) for r in rounds]
            vm = [r.get("vm_timeouts", 0) for r in rounds]
        except (OSError, ValueError, KeyError):
            pass
        return RunResult(
            mode=mode, senders=wl.senders, rounds=int(res["rounds"]),
            goodput_mbps=float(res["goodput_mbps"]),
            timeout_rounds=int(rto.get("timeout_rounds", -1)),
            rct_p50_ms=float(res["rct_p50_ms"]),
            rct_p99_ms=float(res["rct_p99_ms"]),
            bytes=int(res["bytes"]), errors=int(res["errors"]),
            corrupt=int(res.get("corrupt", 0)),
            setup_failed=bool(int(res.get("setup_failed", 0))),
            sender_rtos=int(rto.get("sender_rtos", -1)),
            sender_retrans=int(rto.get("sender_retrans", -1)),
            bytes_per_sender=wl.bytes_per_sender,
            total_bytes=wl.total_bytes,
            rtt_p50_us=percentile(rtts, 50) if rtts else None,
            rtt_p99_us=percentile(rtts, 99) if rtts else None,
            max_held=pac.get("pac_max_held_seen") if pac else None,
            pac=pac, bottleneck_drops=drops, client_exit=p.returncode,
            round_rct_ms=rcts, round_rtos=rtos, round_stalls=stalls,
            stall_rounds=int(rto.get("stall_rounds", 0)),
            vm_timeouts=int(rto.get("vm_timeouts", 0)),
            round_vm_timeouts=vm,
            setup_vm_timeouts=int(rto.get("setup_vm_timeouts", 0)),
            sender_paced=int(rto.get("sender_paced", 0)),
            max_outstanding=int(res.get("max_outstanding", 0)),
            max_queue=int(res.get("max_queue", 0)),
            stats_vm_timeouts=int(rto.get("stats_vm_timeouts", 0)))

    # -- tear-down -----------------------------------------------------------

    def close(self) -> None:
        try:
            for p in self.servers:
                if p.poll() is None:
                    p.terminate()
            for p in self.servers:
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
            if self.ovs:
                for daemon, status in self.ovs.stop().items():
                    if status is not None:
                        # Whatever failed next (an ovs-appctl, an ovs-vsctl)
                        # says only that the daemon did not answer.
                        print(f"incast: {daemon} {exit_text(status)} before "
                              f"the testbed stopped it; the end of its log:\n"
                              f"{self.ovs.tail(daemon, 20)}", file=sys.stderr,
                              flush=True)
            if self.huge:
                self.huge.remove()
            if self.hugepages:
                self.hugepages.restore()
            for ns in reversed(self.namespaces):
                ns.delete()
            self.namespaces.clear()
            shutil.rmtree(self.workdir, ignore_errors=True)
        finally:
            # Whatever failed above, the machine's sysctl goes back.
            if self.backlog:
                self.backlog.release()

    def save_logs(self, dest: Path) -> None:
        dest.mkdir(parents=True, exist_ok=True)
        for pattern in ("*.log", "*.stderr", "*.json"):
            for p in self.workdir.glob(pattern):
                shutil.copy(p, dest / p.name)


def _last_line(text: str, prefix: str) -> str:
    lines = [l for l in text.splitlines() if l.startswith(prefix)]
    return lines[-1] if lines else ""

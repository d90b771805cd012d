"""Per-packet cost of the PAC action in the OVS-DPDK datapath (README.md).

    bench/datapath/run [--flows 1,1000,100000] [--rounds 3] [--seconds 3]
                       [--threshold 96000] [--max-held 16384]
                       [--no-malloc-probe] [--no-fixed] [--no-vhost]
                       [--profile [--profile-out FILE]]

For each flow count: generates a TCP trace (gen_trace.py), starts the
patched ovs-vswitchd with DPDK (one PMD thread, core 1), replays data.pcap
on port "up" and ack.pcap on port "vm" (net_pcap, infinite_rx=1), with
OpenFlow up -> vm and vm -> up, and measures cycles per packet
(dpif-netdev/pmd-perf-show after pmd-stats-clear) with PAC off and on
(PAC on port vm), interleaved over --rounds rounds.  Prints per case:

    RESULT datapath flows=<n> cpp_off=<x> cpp_pac=<y> ratio=<y/x>

(PAC holding: other_config:fast-path=false, so that it tracks these
connections, which bring no burst of requests), then PAC's fixed cost in
two never-holding cases (1 000 flows, threshold 2^30; --no-fixed skips
both): with the defaults, where no burst of requests makes PAC track and
every segment takes the fast path, and with fast-path=false, where PAC
tracks every connection and holds nothing:

    RESULT datapath-fixed flows=1000 cpp_off=<x> cpp_pac=<y> ratio=<y/x>
    RESULT datapath-tracked flows=1000 cpp_off=<x> cpp_pac=<y> ratio=<y/x>

and the VM-shaped pipeline (1 000 flows, threshold 2^30, the defaults):
port "vm" is a dpdkvhostuserclient whose guest is dpdk-testpmd on core 0
(net_virtio_user forwarding to and from a net_pcap port that replays
ack.pcap and drops what it is sent), port "up" replays data.pcap as
above; --no-vhost skips it:

    RESULT datapath-vhost flows=1000 cpp_off=<x> cpp_pac=<y> ratio=<y/x>

each followed by Mpps, what PAC did (held, released, stale drops) and, with PAC
on, libc allocations per packet of the PMD thread (uprobes on malloc,
calloc and realloc, counted by perf stat for that thread only).

Needs root, the built tree (build/ovs), hugepages (it raises nr_hugepages
if needed and gives back what it added), core 1 for the PMD and, for the
VM-shaped case, dpdk-testpmd (Debian package dpdk-dev) on core 0.

Started by the launcher bench/datapath/run, which puts tools/ on PYTHONPATH
for the testbed package (tools/testbed).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# gen_trace.py sits beside this script, whose directory Python puts first
# on the import path; the testbed package comes from tools/ (PYTHONPATH, set
# by bench/datapath/run).
from gen_trace import generate
from testbed.dpdk_env import (TESTPMD, DpdkUnavailable, Hugepages,
                              HugeMount, eal_arguments)
from testbed.ovs_env import PREFIX, Ovs, OvsBuild, unique_name

# Per case: data segments per flow and pass, and whether a pass ends with
# one RST per flow.  net_pcap keeps the whole trace in mbufs of the port's
# mempool, and both ports share one (262144 mbufs in OVS 3.1; net_pcap
# cannot change its MTU, so no second pool): data + ACKs + RSTs + what PAC
# holds must stay below that (README.md).
SEGS = {1: (65536, True), 1000: (100, True), 100000: (1, False)}
PAYLOAD = 1448
LIBC = "/lib/x86_64-linux-gnu/libc.so.6"
ALLOC_FUNCS = ("malloc", "calloc", "realloc")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def parse_perf_show(text: str) -> dict[str, float]:
    """Rx packets, Kpps and cycles/pkt of the one PMD in pmd-perf-show."""
    m = re.search(r"Rx packets:\s+(\d+)\s+\(([\d.]+) Kpps, ([\d.]+) "
                  r"cycles/pkt\)", text)
    if not m:
        raise RuntimeError(f"cannot parse pmd-perf-show:\n{text}")
    return {"packets": int(m.group(1)), "kpps": float(m.group(2)),
            "cpp": float(m.group(3))}


def pac_counts(show: str) -> dict[str, int]:
    return {k: int(v) for k, v in re.findall(r"\b([a-z_0-9]+)=(\d+)\b",
                                               show.split("state:", 1)[-1])}


def pmd_tid(pid: int) -> int:
    for task in Path(f"/proc/{pid}/task").iterdir():
        if (task / "comm").read_text().startswith("pmd-"):
            return int(task.name)
    raise RuntimeError("no PMD thread")


class AllocProbe:
    """uprobes on libc's allocation functions (perf probe), removed again
    if this object added them."""

    def __init__(self) -> None:
        self.added: list[str] = []
        listed = subprocess.run(["perf", "probe", "-l"], capture_output=True,
                                text=True).stdout
        for fn in ALLOC_FUNCS:
            if f"probe_libc:{fn} " in listed + " ":
                continue
            p = subprocess.run(["perf", "probe", "-q", "-x", LIBC, fn],
                               capture_output=True, text=True)
            if p.returncode:
                raise RuntimeError(f"perf probe {fn}: {p.stderr.strip()}")
            self.added.append(f"probe_libc:{fn}")

    def count(self, tid: int, seconds: float) -> dict[str, int]:
        events = ",".join(f"probe_libc:{fn}" for fn in ALLOC_FUNCS)
        p = subprocess.run(["perf", "stat", "-x,", "-e", events, "-t",
                            str(tid), "sleep", str(seconds)],
                           capture_output=True, text=True)
        counts = {}
        for line in p.stderr.splitlines():
            f = line.split(",")
            if len(f) > 2 and f[2].startswith("probe_libc:"):
                counts[f[2].split(":")[1]] = int(f[0]) if f[0].isdigit() \
                    else -1
        return counts

    def remove(self) -> None:
        for ev in self.added:
            subprocess.run(["perf", "probe", "-q", "-d", ev],
                           capture_output=True)


# The never-holding cases (RESULT datapath-fixed, datapath-tracked): 1 000
# flows, libpac's largest threshold (PAC_MAX_THRESHOLD in lib/pac-knobs.c).
FIXED_FLOWS = 1000
FIXED_THRESHOLD = 1 << 30

# The PAC options of the cases that measure the tracked path.
TRACKED = {"fast-path": "false"}

# The VM-shaped pipeline (RESULT datapath-vhost): 1 000 flows; the guest,
# dpdk-testpmd, keeps the whole ACK trace in mbufs of its own pool
# (net_pcap's infinite_rx) and runs its main and forwarding lcores on CPU 0,
# away from the PMD on CPU 1.
VHOST_FLOWS = 1000
GUEST_MBUFS = 131072
GUEST_MEMORY_MB = 640


class Guest:
    """dpdk-testpmd as the VM: net_virtio_user0 (vhost-user server on
    'sock') forwarded in 'io' mode to and from net_pcap1, which replays
    'acks' forever and drops what it is sent (no tx_pcap).  So the guest
    sends the ACKs into OVS's port and sinks the data OVS sends it."""

    def __init__(self, workdir: Path, huge: HugeMount, sock: Path,
                 acks: Path):
        if not os.access(TESTPMD, os.X_OK):
            raise DpdkUnavailable("dpdk-testpmd is not installed "
                                  "(Debian package dpdk-dev)")
        self.prefix = unique_name("guest")
        self.log_path = workdir / "testpmd.log"
        self.sock = sock
        cmd = ["stdbuf", "-oL", TESTPMD, "--lcores", "0@0,1@0", "-n", "1",
               *eal_arguments(self.prefix, huge).split(),
               "-m", str(GUEST_MEMORY_MB), "--single-file-segments",
               f"--vdev=net_virtio_user0,path={sock},server=1,queues=1",
               f"--vdev=net_pcap1,rx_pcap={acks},infinite_rx=1",
               "--", "-i", f"--total-num-mbufs={GUEST_MBUFS}", "--rxq=1",
               "--txq=1", "--no-lsc-interrupt"]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                                     stdout=open(self.log_path, "wb"),
                                     stderr=subprocess.STDOUT,
                                     start_new_session=True)
        # Read once the ports are up, after OVS connects.  'retry': a burst
        # that finds the other port's ring full waits for room (up to 64
        # times 1 us) instead of being dropped, so the ACK replay advances
        # at the rate OVS takes it, in step with the data replay as in
        # the net_pcap cases.
        self.proc.stdin.write(b"set fwd io retry\nstart\n")
        self.proc.stdin.flush()

    def check(self) -> None:
        if self.proc.poll() is not None:
            raise RuntimeError(f"dpdk-testpmd exited with "
                               f"{self.proc.returncode}: {self.log()}")

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    def wait(self, what: str, ready, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            self.check()
            if time.monotonic() > deadline:
                raise RuntimeError(f"dpdk-testpmd: no {what} after "
                                   f"{timeout:.0f} s: {self.log()}")
            time.sleep(0.2)

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(b"stop\nquit\n")
                self.proc.stdin.flush()
                self.proc.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(f"/var/run/dpdk/{self.prefix}", ignore_errors=True)


class Bench:
    def __init__(self, args: argparse.Namespace, build: OvsBuild,
                 hugepages: Hugepages, probe: AllocProbe | None,
                 threshold: int | None = None, vhost: bool = False,
                 options: dict[str, str] | None = None):
        self.args = args
        # PAC other_config keys of this case; --pac-option overrides them.
        self.options = options or {}
        # Port "vm" is a vhost-user port with dpdk-testpmd as its guest.
        self.vhost = vhost
        self.guest: Guest | None = None
        self.build = build
        self.hugepages = hugepages
        self.probe = probe
        # PAC's threshold for this case (default --threshold).
        self.threshold = threshold or args.threshold

    def start_ovs(self, workdir: Path, huge: HugeMount) -> Ovs:
        self.prefix = unique_name("eal")
        ovs = Ovs(self.build, workdir, None, {
            "dpdk-init": "true",
            "dpdk-socket-mem": "1024",
            "dpdk-extra": f'"--no-pci --file-prefix={self.prefix} '
                          f'--huge-dir={huge.path}"',
            "pmd-cpu-mask": "0x2",
            "pmd-perf-metrics": "true",
        })
        ovs.start()
        if ovs.vsctl("get", "Open_vSwitch", ".",
                     "dpdk_initialized") != "true":
            raise DpdkUnavailable("dpdk_initialized is false")
        return ovs

    def add_ports(self, ovs: Ovs, trace: Path, workdir: Path,
                  huge: HugeMount) -> None:
        ovs.vsctl("add-br", "br0", "--", "set", "Bridge", "br0",
                  "datapath_type=netdev")
        ports = [("up", "data.pcap", 0)]
        if not self.vhost:
            ports.append(("vm", "ack.pcap", 1))
        for port, pcap, dev in ports:
            ovs.vsctl("add-port", "br0", port, "--", "set", "Interface",
                      port, "type=dpdk",
                      f"options:dpdk-devargs=net_pcap{dev},"
                      f"rx_pcap={trace / pcap},infinite_rx=1", timeout=120)
        if self.vhost:
            sock = workdir / "vm.sock"
            self.guest = Guest(workdir, huge, sock, trace / "ack.pcap")
            # virtio_user in server mode waits in its probe for the
            # vhost-user client (OVS) to connect; the rest of testpmd's
            # start follows.
            self.guest.wait("vhost-user socket", sock.exists)
            ovs.vsctl("add-port", "br0", "vm", "--", "set", "Interface",
                      "vm", "type=dpdkvhostuserclient",
                      f"options:vhost-server-path={sock}", timeout=60)
            self.guest.wait("forwarding", lambda: "packet forwarding"
                            in self.guest.log(), timeout=120)
        ovs.ofctl("del-flows", "br0")
        ovs.ofctl("add-flow", "br0", "in_port=up,actions=output:vm")
        ovs.ofctl("add-flow", "br0", "in_port=vm,actions=output:up")
        for port in ("up", "vm"):
            err = ovs.vsctl("get", "Interface", port, "error")
            if err not in ("[]", ""):
                raise RuntimeError(f"port {port}: {err}")

    def set_pac(self, ovs: Ovs, on: bool) -> None:
        if on:
            ovs.pac_enable("vm", threshold=self.threshold,
                           other_config={"max-held": str(self.args.max_held),
                                         "max-flows": "131072",
                                         **self.options,
                                         **dict(self.args.pac_option)})
        else:
            ovs.pac_disable("vm")

    def measure(self, ovs: Ovs, on: bool) -> dict:
        self.set_pac(ovs, on)
        time.sleep(self.args.settle)
        ovs.appctl("dpif-netdev/pmd-stats-clear")
        time.sleep(self.args.seconds)
        perf = parse_perf_show(ovs.appctl("dpif-netdev/pmd-perf-show"))
        if on:
            perf["pac"] = pac_counts(ovs.pac_show("vm"))
        return perf

    def allocations(self, ovs: Ovs, on: bool) -> dict:
        """Allocations of the PMD thread per packet, PAC 'on' or off."""
        self.set_pac(ovs, on)
        time.sleep(self.args.settle)
        tid = pmd_tid(ovs.procs["ovs-vswitchd"].pid)
        ovs.appctl("dpif-netdev/pmd-stats-clear")
        counts = self.probe.count(tid, self.args.seconds)
        perf = parse_perf_show(ovs.appctl("dpif-netdev/pmd-perf-show"))
        total = sum(v for v in counts.values() if v > 0)
        return {"counts": counts, "packets": perf["packets"],
                "per_packet": total / max(1, perf["packets"])}

    def profile_one(self, ovs: Ovs, on: bool, out: Path) -> dict:
        """perf record (cpu-clock) of the PMD thread for one period, PAC
        'on' or off: {symbol: cycles per received packet}, from each
        symbol's share of the samples and pmd-perf-show's cycles/pkt."""
        self.set_pac(ovs, on)
        time.sleep(self.args.settle)
        tid = pmd_tid(ovs.procs["ovs-vswitchd"].pid)
        ovs.appctl("dpif-netdev/pmd-stats-clear")
        subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-t",
                        str(tid), "-o", str(out), "sleep",
                        str(self.args.seconds)], capture_output=True)
        cpp = parse_perf_show(ovs.appctl("dpif-netdev/pmd-perf-show"))["cpp"]
        rep = subprocess.run(["perf", "report", "-i", str(out), "--stdio",
                              "--no-children", "--sort", "symbol"],
                             capture_output=True, text=True).stdout
        shares: dict[str, float] = {}
        for line in rep.splitlines():
            m = re.match(r"\s*([\d.]+)%\s+\[.\]\s+(\S+)", line)
            if m:
                sym = m.group(2)
                # net_pcap's library has no symbols: one line for all of it.
                sym = "(unresolved, net_pcap)" if sym.startswith("0x") \
                    else sym
                shares[sym] = shares.get(sym, 0) + float(m.group(1)) / 100
        return {sym: share * cpp for sym, share in shares.items()}

    def profile(self, ovs: Ovs, tmp: Path) -> None:
        """Profiles the PMD thread with PAC off, then on, and prints the
        symbols that cost the most cycles per packet with PAC on, next to
        their cost with PAC off; the perf data of the 'on' period goes to
        --profile-out if given."""
        off = self.profile_one(ovs, False, tmp / "perf-off.data")
        on = self.profile_one(ovs, True, tmp / "perf-on.data")
        log(f"cycles per packet by symbol (perf, cpu-clock): "
            f"off={sum(off.values()):.0f} on={sum(on.values()):.0f}")
        log(f"  {'symbol':40} {'off':>7} {'on':>7} {'on-off':>7}")
        for sym in sorted(set(on) | set(off),
                          key=lambda s: -max(on.get(s, 0), off.get(s, 0)))[:40]:
            a, b = off.get(sym, 0.0), on.get(sym, 0.0)
            log(f"  {sym[:40]:40} {a:7.1f} {b:7.1f} {b - a:+7.1f}")
        if self.args.profile_out:
            shutil.copy(tmp / "perf-on.data", self.args.profile_out)

    def case(self, flows: int, tmp: Path) -> dict:
        segs, rst = SEGS.get(flows) or (max(1, 100000 // flows), True)
        trace = tmp / f"trace-{flows}"
        t0 = time.monotonic()
        counts = generate(trace, flows, segs, PAYLOAD, rst=rst)
        log(f"flows={flows}: trace {counts} in "
            f"{time.monotonic() - t0:.1f} s")
        workdir = Path(tempfile.mkdtemp(prefix=f"{PREFIX}-{os.getpid()}-"))
        huge = HugeMount(workdir / "huge")
        ovs = None
        vm_stats = None
        try:
            ovs = self.start_ovs(workdir, huge)
            self.add_ports(ovs, trace, workdir, huge)
            time.sleep(self.args.settle * 2)       # warm-up: upcalls, EMC
            runs: dict[bool, list[dict]] = {False: [], True: []}
            for r in range(self.args.rounds):
                order = (False, True) if r % 2 == 0 else (True, False)
                for on in order:
                    m = self.measure(ovs, on)
                    runs[on].append(m)
                    log(f"flows={flows} round {r} pac={'on' if on else 'off'}:"
                        f" {m['cpp']:.0f} cycles/pkt, {m['kpps']:.0f} Kpps"
                        + (f", {m['pac']}" if on else ""))
            alloc = ({on: self.allocations(ovs, on) for on in (False, True)}
                     if self.probe else None)
            if self.args.profile:
                self.profile(ovs, workdir)
            problems = ovs.log_problems()
            alive = ovs.alive()
            if self.guest:
                self.guest.check()
                vm_stats = {k: ovs.vsctl("get", "Interface", "vm",
                                      f"statistics:{k}")
                         for k in ("rx_packets", "tx_packets", "tx_dropped")}
        finally:
            if self.guest:
                self.guest.stop()
            if ovs:
                ovs.stop()
            huge.remove()
            shutil.rmtree(workdir, ignore_errors=True)
            shutil.rmtree(f"/var/run/dpdk/{self.prefix}", ignore_errors=True)
            shutil.rmtree(trace, ignore_errors=True)
        return {"flows": flows, "segs": segs, "runs": runs, "alloc": alloc,
                "problems": problems, "alive": alive, "trace": counts,
                "vm_stats": vm_stats}


def report(res: dict, name: str = "datapath") -> None:
    off = statistics.median(m["cpp"] for m in res["runs"][False])
    on = statistics.median(m["cpp"] for m in res["runs"][True])
    mpps_off = statistics.median(m["kpps"] for m in res["runs"][False]) / 1e3
    mpps_on = statistics.median(m["kpps"] for m in res["runs"][True]) / 1e3
    print(f"RESULT {name} flows={res['flows']} cpp_off={off:.0f} "
          f"cpp_pac={on:.0f} ratio={on / off:.3f}")
    # pac/show right after the last 'on' period.  Counters restart when PAC
    # is enabled after an 'off' period; two adjacent 'on' periods (across a
    # round boundary) share one instance.  With an odd number of rounds the
    # last 'on' follows an 'off', so these are one period's figures.
    pac = res["runs"][True][-1]["pac"]
    rel = ("released_fit", "released_max_hold", "released_cap",
           "released_flush")
    print(f"  flows={res['flows']} segs/flow/pass={res['segs']} "
          f"trace={res['trace']['data_packets']}+"
          f"{res['trace']['ack_packets']} pkts  "
          f"Mpps off={mpps_off:.3f} on={mpps_on:.3f}  "
          f"cpp off={[round(m['cpp']) for m in res['runs'][False]]} "
          f"on={[round(m['cpp']) for m in res['runs'][True]]}")
    # Each round's off and on periods are adjacent in time, so a round's
    # ratio is the one least touched by load that comes and goes.
    ratios = [b["cpp"] / a["cpp"]
              for a, b in zip(res["runs"][False], res["runs"][True])]
    print(f"  ratio per round={[round(r, 2) for r in ratios]} "
          f"median={statistics.median(ratios):.3f}")
    print("  PAC (pac/show after the last 'on' period): "
          + " ".join(f"{k}={pac.get(k, 0)}" for k in (
              "tx_packets", "tx_passed", "tx_held") + rel + (
              "stale_drops", "flows", "max_held_seen", "flows_closed",
              "tracking_starts", "fast_rx_packets", "fast_tx_packets")))
    if res["vm_stats"]:
        # Data that the guest's ring had no room for: OVS drops it after
        # the enqueue attempt, inside the measured cycles.
        print("  port vm (vhost-user), whole run: "
              + " ".join(f"{k}={v}" for k, v in res["vm_stats"].items()))
    for on, a in (res["alloc"] or {}).items():
        print(f"  allocations of the PMD thread, PAC {'on' if on else 'off'}:"
              f" {a['counts']} for {a['packets']} packets = "
              f"{a['per_packet']:.2e} per packet")
    if res["problems"] or not res["alive"]:
        print(f"  PROBLEM: alive={res['alive']} log: {res['problems'][:5]}")
    never_holds = name in ("datapath-fixed", "datapath-tracked",
                           "datapath-vhost")
    if never_holds and any(m["pac"].get("tx_held") for m in res["runs"][True]):
        print("  PROBLEM: PAC held packets in a never-holding case")


def main() -> int:
    # prog: the command is the launcher, bench/datapath/run.
    p = argparse.ArgumentParser(prog="run",
                                description=__doc__.split("\n")[0])
    p.add_argument("--flows", default="1,1000,100000",
                   help="flow counts of the net_pcap cases ('' for none)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--settle", type=float, default=1.0)
    p.add_argument("--threshold", type=int, default=96000)
    p.add_argument("--max-held", type=int, default=16384,
                   help="PAC's max-held: bounds the held packets, whose "
                   "mbufs are most of PAC's cache footprint (README.md)")
    p.add_argument("--no-malloc-probe", action="store_true")
    p.add_argument("--no-fixed", action="store_true",
                   help="skip the never-holding cases (RESULT datapath-fixed "
                   "and datapath-tracked)")
    p.add_argument("--no-vhost", action="store_true",
                   help="skip the VM-shaped pipeline (RESULT datapath-vhost)")
    p.add_argument("--profile", action="store_true",
                   help="perf record the PMD thread with PAC off and on")
    p.add_argument("--profile-out", type=Path)
    p.add_argument("--pac-option", action="append", default=[],
                   type=lambda s: tuple(s.split("=", 1)) if "=" in s
                   else p.error(f"--pac-option {s}: not KEY=VALUE"),
                   metavar="KEY=VALUE",
                   help="another PAC other_config key, e.g. fast-path=false "
                   "(repeatable)")
    args = p.parse_args()
    if os.geteuid():
        sys.exit("run as root")
    hugepages = Hugepages()
    probe = None
    tmp = Path(tempfile.mkdtemp(prefix=f"{PREFIX}-{os.getpid()}-trace-"))
    start = time.monotonic()
    try:
        # A private copy of the programs: build/ovs may be rebuilt meanwhile.
        build = OvsBuild().snapshot(tmp / "bin")
        # OVS's socket memory, and the guest's when it runs.
        hugepages.ensure(600 + (0 if args.no_vhost
                                else GUEST_MEMORY_MB // 2 + 20))
        if not args.no_malloc_probe:
            try:
                probe = AllocProbe()
            except (RuntimeError, OSError) as e:
                log(f"no allocation counts: {e}")
        for flows in (int(f) for f in args.flows.split(",") if f):
            # Holding: the trace has no request, so only fast-path=false
            # makes PAC track its connections.
            report(Bench(args, build, hugepages, probe,
                         options=TRACKED).case(flows, tmp))
            sys.stdout.flush()
        if not args.no_fixed:
            # PAC's fixed cost, nothing held: on the fast path (the
            # defaults), then with every connection tracked.  At the largest
            # threshold no flow reaches its fair share of it (threshold /
            # flows with outstanding bytes), which is what makes the replay,
            # having no feedback, hold ACKs at 50 MB.
            for name, options in (("datapath-fixed", None),
                                  ("datapath-tracked", TRACKED)):
                report(Bench(args, build, hugepages, probe,
                             threshold=FIXED_THRESHOLD,
                             options=options).case(FIXED_FLOWS, tmp), name)
                sys.stdout.flush()
        if not args.no_vhost:
            # PAC's fixed cost where the VM's side is what it is on a
            # compute node.  At the largest threshold, as datapath-fixed:
            # the guest's ACK replay runs ahead of the data by the rings
            # between the two (OVS's port, testpmd's bursts), so PAC would
            # see ACKs of data it has not seen yet and hold for reasons a
            # live connection never has (README.md).
            report(Bench(args, build, hugepages, probe,
                         threshold=FIXED_THRESHOLD,
                         vhost=True).case(VHOST_FLOWS, tmp),
                   "datapath-vhost")
            sys.stdout.flush()
    finally:
        if probe:
            probe.remove()
        hugepages.restore()
        shutil.rmtree(tmp, ignore_errors=True)
    log(f"total {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

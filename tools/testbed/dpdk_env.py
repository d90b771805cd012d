"""OVS-DPDK for the testbed: hugepages, a DPDK-enabled ovs-vswitchd and
hosts behind DPDK ports (net_af_packet, net_tap, dpdkvhostuserclient).

  Hugepages     reserves 2 MB pages (/proc/sys/vm/nr_hugepages) for the
                session and gives back what it added, never more.
  HugeMount     a private hugetlbfs mount per topology (DPDK's --huge-dir),
                so hugepage files of different runs never meet; removed
                with everything in it.
  DpdkTopology  namespace "sw" with ovs-vswitchd (dpdk-init=true, --no-pci,
                a unique --file-prefix), bridge br0 (netdev) and hosts:
                  add_af_packet_host()  veth; the switch end is a type=dpdk
                                        port net_af_packet,iface=<veth>
                  add_tap_host()        type=dpdk port net_tap; its tap is
                                        moved into the host's namespace
                  add_vhost_host()      dpdkvhostuserclient port; the
                                        "guest" is dpdk-testpmd in the
                                        host's namespace forwarding
                                        net_virtio_user (server=1) <->
                                        net_tap (the host's eth0)
  DpdkUnavailable  raised when DPDK cannot initialise here (tests skip).

Names follow ovs_env.unique_name() ("ovspac-<pid>-<n>-<kind>"), so
cleanup_stale() also removes what a killed run left behind (namespaces,
daemons, directories); a stale hugetlbfs mount of a killed run is unmounted
by cleanup_stale_mounts().
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional, Sequence

from .ovs_env import (PREFIX, Host, Netns, Ovs, OvsBuild, Transfer,
                      _owner_dead, disable_offloads, run, unique_name,
                      wait_until)

NR_HUGEPAGES = Path("/proc/sys/vm/nr_hugepages")
TESTPMD = shutil.which("dpdk-testpmd") or "/usr/bin/dpdk-testpmd"

_devid = itertools.count(0)


class DpdkUnavailable(RuntimeError):
    """DPDK cannot initialise on this machine (no hugepages, EAL fails)."""


# ---------------------------------------------------------------------------
# Hugepages.

def _meminfo(key: str) -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


class Hugepages:
    """Makes sure 'pages' 2 MB hugepages are free; restore() lowers
    nr_hugepages again by what this object added (the kernel frees only
    pages nobody uses, so another user's pages are never taken away)."""

    def __init__(self) -> None:
        self.added = 0

    def ensure(self, pages: int) -> None:
        if _meminfo("Hugepagesize") != 2048:
            raise DpdkUnavailable("default hugepage size is not 2 MB")
        free = _meminfo("HugePages_Free")
        if free >= pages:
            return
        total = int(NR_HUGEPAGES.read_text())
        want = total + pages - free
        try:
            NR_HUGEPAGES.write_text(f"{want}\n")
        except OSError as e:
            raise DpdkUnavailable(f"cannot reserve hugepages: {e}")
        now = int(NR_HUGEPAGES.read_text())
        self.added += max(0, now - total)
        if _meminfo("HugePages_Free") < pages:
            raise DpdkUnavailable(
                f"only {_meminfo('HugePages_Free')} of {pages} hugepages "
                f"free after asking for {want}")

    def restore(self) -> None:
        if self.added:
            total = int(NR_HUGEPAGES.read_text())
            NR_HUGEPAGES.write_text(f"{max(0, total - self.added)}\n")
            self.added = 0


class HugeMount:
    """A private hugetlbfs (2 MB pages) at 'path'."""

    def __init__(self, path: Path):
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        proc = run(["mount", "-t", "hugetlbfs", "-o", "pagesize=2M",
                    "ovspac-huge", str(path)], check=False)
        if proc.returncode:
            raise DpdkUnavailable(f"cannot mount hugetlbfs: {proc.stderr}")

    def files(self) -> list[str]:
        try:
            return sorted(os.listdir(self.path))
        except OSError:
            return []

    def remove(self) -> None:
        for name in self.files():
            try:
                os.unlink(self.path / name)
            except OSError:
                pass
        run(["umount", str(self.path)], check=False)
        try:
            self.path.rmdir()
        except OSError:
            pass


def cleanup_stale_mounts() -> list[str]:
    """Unmounts hugetlbfs mounts under /tmp/ovspac-<pid>-* of dead runs."""
    removed = []
    tmp = tempfile.gettempdir()
    for line in Path("/proc/mounts").read_text().splitlines():
        fields = line.split()
        if len(fields) < 3 or fields[2] != "hugetlbfs":
            continue
        mnt = fields[1]
        parts = Path(mnt).relative_to(tmp).parts if mnt.startswith(
            tmp + "/") else ()
        if parts and parts[0].startswith(f"{PREFIX}-") \
                and _owner_dead(parts[0]):
            m = HugeMount.__new__(HugeMount)
            m.path = Path(mnt)
            m.remove()
            removed.append(f"hugetlbfs {mnt}")
    return removed


# ---------------------------------------------------------------------------
# Many connections (tcp_many.py).

MANY_SCRIPT = Path(__file__).resolve().parent / "tcp_many.py"


class ManyConnections:
    """tcp_many.py: a server in 'dst' and 'connections' short connections
    from 'src', 'parallel' at a time, each 'nbytes' long and checked."""

    def __init__(self, src: Host, dst: Host, connections: int, nbytes: int,
                 parallel: int = 32, timeout: float = 60):
        self.server = subprocess.Popen(
            dst.ns.cmd([sys.executable, str(MANY_SCRIPT), "serve",
                        "--bind", dst.ip]),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True)
        line = self.server.stdout.readline()
        if not line.startswith("READY "):
            self.kill()
            raise RuntimeError(f"tcp_many server did not start: {line!r}")
        self.client = subprocess.Popen(
            src.ns.cmd([sys.executable, str(MANY_SCRIPT), "run",
                        "--host", dst.ip, "--port", line.split()[1],
                        "--connections", str(connections),
                        "--bytes", str(nbytes), "--parallel", str(parallel),
                        "--timeout", str(timeout)]),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)

    def running(self) -> bool:
        return self.client.poll() is None

    def wait(self, timeout: float) -> dict:
        try:
            out, err = self.client.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return {"failed": -1, "errors": [f"no result after {timeout} s"]}
        finally:
            self.kill()
        for line in reversed(out.splitlines()):
            if line.startswith("{"):
                return json.loads(line)
        return {"failed": -1, "errors": [f"exit {self.client.returncode}",
                                         err[-500:]]}

    def kill(self) -> None:
        for p in (getattr(self, "client", None), self.server):
            if p is not None and p.poll() is None:
                p.kill()
                p.communicate()


# ---------------------------------------------------------------------------
# The topology.

def dpdk_log_fatal(ovs: Ovs) -> Optional[str]:
    try:
        text = ovs.log_path().read_text(errors="replace")
    except OSError:
        text = ""
    text += (ovs.dir / "ovs-vswitchd.stderr").read_text(errors="replace") \
        if (ovs.dir / "ovs-vswitchd.stderr").exists() else ""
    m = re.search(r".*(EAL: .*(?:fail|Cannot|cannot|error).*|"
                  r"Cannot init EAL.*|DPDK Initialization Failed.*)", text)
    return m.group(0) if m else None


def reserve_hugepages(hugepages: Hugepages, socket_limit_mb: int,
                      path: Path) -> HugeMount:
    """Makes sure ovs-vswitchd's DPDK memory of at most 'socket_limit_mb'
    (2 MB pages), and a little for other DPDK processes, is free, and
    mounts a private hugetlbfs for it at 'path'."""
    hugepages.ensure(socket_limit_mb // 2 + 64)
    return HugeMount(path)


def eal_arguments(prefix: str, huge: HugeMount) -> str:
    """EAL arguments of one DPDK process: no PCI, its own file prefix and
    hugetlbfs (so that runs never share hugepage files)."""
    return f"--no-pci --file-prefix={prefix} --huge-dir={huge.path}"


def dpdk_ovs_config(eal: str, pmd_cpu_mask: str,
                    socket_limit_mb: int) -> dict[str, str]:
    """Open_vSwitch:other_config that starts DPDK in ovs-vswitchd (read
    once at start-up): EAL arguments 'eal', 256 MB of socket memory
    growing to 'socket_limit_mb', PMD threads on 'pmd_cpu_mask'."""
    return {"dpdk-init": "true", "dpdk-socket-mem": "256",
            "dpdk-socket-limit": str(socket_limit_mb),
            "dpdk-extra": f'"{eal}"', "pmd-cpu-mask": pmd_cpu_mask}


def start_dpdk_ovs(ovs: Ovs) -> None:
    """Starts 'ovs', whose other_config has dpdk-init; raises
    DpdkUnavailable, with the reason from its log, if DPDK did not
    initialise."""
    try:
        ovs.start()
    except (RuntimeError, TimeoutError) as e:
        fatal = dpdk_log_fatal(ovs)
        if fatal:
            raise DpdkUnavailable(fatal) from e
        raise
    if ovs.vsctl("get", "Open_vSwitch", ".", "dpdk_initialized") != "true":
        raise DpdkUnavailable(dpdk_log_fatal(ovs)
                              or "dpdk_initialized is false")


def add_dpdk_port(ovs: Ovs, port: str, devargs: str, bridge: str = "br0",
                  columns: Sequence[str] = (), **options: str) -> None:
    """Adds type=dpdk port 'port' (DPDK device 'devargs') to 'bridge' and
    waits until it is up.  'columns' are more Interface settings
    ("COLUMN=VALUE"), 'options' its options:KEY=VALUE."""
    args = ["add-port", bridge, port, "--", "set", "Interface", port,
            "type=dpdk", f"options:dpdk-devargs={devargs}", *columns]
    args += [f"{k}={v}" for k, v in options.items()]
    ovs.vsctl(*args, timeout=30)
    wait_dpdk_port(ovs, port)


def wait_dpdk_port(ovs: Ovs, port: str, timeout: float = 30) -> None:
    """Waits until 'port' has an OpenFlow port number; raises RuntimeError
    with the Interface's error if OVS gave up on it."""
    def ok() -> bool:
        cols = ovs.get_columns("Interface", port, "ofport", "error")
        err = cols.get("error")
        if isinstance(err, str) and err:
            raise RuntimeError(f"port {port}: {err}")
        return isinstance(cols["ofport"], int) and cols["ofport"] > 0
    wait_until(ok, timeout, 0.2, f"port {port}")


class DpdkTopology:
    """ovs-vswitchd with DPDK in namespace "sw", bridge br0 (netdev,
    actions=NORMAL), and hosts added by the add_*_host() methods."""

    def __init__(self, build: OvsBuild, hugepages: Hugepages,
                 pmd_cpu_mask: str = "0x1", socket_limit_mb: int = 512,
                 other_config: Optional[dict[str, str]] = None):
        self.build = build
        self.hugepages = hugepages
        self.pmd_cpu_mask = pmd_cpu_mask
        self.socket_limit_mb = socket_limit_mb
        self.extra_config = dict(other_config or {})
        self.workdir = Path(tempfile.mkdtemp(prefix=f"{PREFIX}-{os.getpid()}-"))
        self.namespaces: list[Netns] = []
        self.transfers: list[Transfer] = []
        self.manys: list[ManyConnections] = []
        self.guests: list[subprocess.Popen] = []
        self.hosts: dict[str, Host] = {}
        self.log_ignore: list[str] = []
        self.huge: Optional[HugeMount] = None
        self.ovs: Optional[Ovs] = None
        self.sw: Optional[Netns] = None
        self.prefixes: list[str] = []    # EAL --file-prefix of each process

    def _netns(self, kind: str) -> Netns:
        ns = Netns(unique_name(kind))
        self.namespaces.append(ns)
        return ns

    def eal_args(self, prefix: str) -> str:
        self.prefixes.append(prefix)
        return eal_arguments(prefix, self.huge)

    def setup(self) -> "DpdkTopology":
        self.huge = reserve_hugepages(self.hugepages, self.socket_limit_mb,
                                      self.workdir / "huge")
        self.sw = self._netns("sw")
        config = dpdk_ovs_config(self.eal_args(unique_name("eal")),
                                 self.pmd_cpu_mask, self.socket_limit_mb)
        config["vhost-sock-dir"] = "."
        config.update(self.extra_config)
        self.ovs = Ovs(self.build, self.workdir, self.sw, config)
        start_dpdk_ovs(self.ovs)
        self.ovs.vsctl("add-br", "br0", "--", "set", "Bridge", "br0",
                       "datapath_type=netdev")
        self.ovs.ofctl("del-flows", "br0")
        self.ovs.ofctl("add-flow", "br0", "actions=NORMAL")
        return self

    # -- ports and hosts ---------------------------------------------------

    def add_dpdk_port(self, port: str, devargs: str,
                      **options: str) -> None:
        add_dpdk_port(self.ovs, port, devargs, **options)

    def wait_port(self, port: str, timeout: float = 30) -> None:
        wait_dpdk_port(self.ovs, port, timeout)

    def n_pmds(self) -> int:
        return bin(int(self.pmd_cpu_mask, 16)).count("1")

    def _configure_host(self, ns: Netns, dev: str, ip: str) -> None:
        disable_offloads(ns, dev)
        ns.run(["ip", "link", "set", dev, "up"])
        ns.run(["ip", "addr", "add", f"{ip}/24", "dev", dev])

    def add_af_packet_host(self, kind: str, ip: str, port: str,
                           **options: str) -> Host:
        """Host 'kind' (eth0 = ip) on a veth whose switch end 'port' is
        used by DPDK's net_af_packet as type=dpdk port 'port'."""
        ns = self._netns(kind)
        run(["ip", "link", "add", port, "netns", self.sw.name, "type",
             "veth", "peer", "name", "eth0", "netns", ns.name])
        disable_offloads(self.sw, port)
        self.sw.run(["ip", "link", "set", port, "up"])
        self._configure_host(ns, "eth0", ip)
        self.add_dpdk_port(
            port, f"net_af_packet{next(_devid)},iface={port},qpairs=1",
            **options)
        host = Host(ns, ip, port)
        self.hosts[kind] = host
        return host

    def add_tap_host(self, kind: str, ip: str, port: str,
                     **options: str) -> Host:
        """Host 'kind' whose eth0 is the tap that DPDK's net_tap (type=dpdk
        port 'port', in ovs-vswitchd's namespace) creates, moved into the
        host's namespace."""
        ns = self._netns(kind)
        tap = f"tap{next(_devid)}"
        # This kernel has no multiq qdisc, so net_tap runs without rte_flow
        # support and says so at ERR level on every start; and it tells
        # secondary DPDK processes (there are none) about queue starts:
        # both harmless here.
        self.log_ignore += [r"\|dpdk\|ERR\|(eth_dev_tap_create|"
                            r"qdisc_create_multiq|tap_nl_dump_ext_ack|"
                            r"tap_mp_req_on_rxtx)\(\)"]
        # net_tap needs as many rx as tx queues; OVS uses one txq per PMD
        # thread plus one for the main thread.
        options.setdefault("options:n_rxq", str(self.n_pmds() + 1))
        self.add_dpdk_port(port, f"net_tap{next(_devid)},iface={tap}",
                           **options)
        wait_until(lambda: self.sw.run(["ip", "link", "show", tap],
                                       check=False).returncode == 0,
                   10, 0.1, f"tap {tap}")
        self.sw.run(["ip", "link", "set", tap, "netns", ns.name])
        ns.run(["ip", "link", "set", tap, "name", "eth0"])
        self._configure_host(ns, "eth0", ip)
        host = Host(ns, ip, port)
        self.hosts[kind] = host
        return host

    def add_vhost_host(self, kind: str, ip: str, port: str,
                       testpmd_lcores: str = "0,1", **options: str) -> Host:
        """Host 'kind' behind a dpdkvhostuserclient port 'port'.  The guest
        side is dpdk-testpmd in the host's namespace: net_virtio_user0
        (server=1 on the port's socket) forwarded ('io' mode) to and from
        net_tap1, which is the host's eth0."""
        if not os.access(TESTPMD, os.X_OK):
            raise DpdkUnavailable("dpdk-testpmd is not installed "
                                  "(Debian package dpdk-dev)")
        ns = self._netns(kind)
        sock = self.workdir / f"{port}.sock"
        cmd = ns.cmd([
            "stdbuf", "-oL", TESTPMD, "-l", testpmd_lcores, "-n", "1",
            *self.eal_args(unique_name("testpmd")).split(),
            "-m", "96", "--single-file-segments",
            "--vdev=net_tap1,iface=eth0",
            f"--vdev=net_virtio_user0,path={sock},server=1,queues=1",
            "--", "--forward-mode=io", "--total-num-mbufs=8192",
            "--rxq=1", "--txq=1", "--no-lsc-interrupt"])
        log = open(self.workdir / f"testpmd-{kind}.log", "wb")
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=log,
                                stderr=subprocess.STDOUT,
                                start_new_session=True)
        self.guests.append(proc)

        def guest_running() -> None:
            if proc.poll() is not None:
                raise RuntimeError(f"dpdk-testpmd exited with {proc.returncode}"
                                   f": {self.guest_log(kind)}")

        # virtio_user in server mode waits in its probe for the vhost-user
        # client (OVS) to connect; the rest of testpmd's start follows.
        wait_until(lambda: guest_running() or sock.exists(), 30, 0.2,
                   "dpdk-testpmd's vhost-user socket")
        self.ovs.vsctl("add-port", "br0", port, "--", "set", "Interface",
                       port, "type=dpdkvhostuserclient",
                       f"options:vhost-server-path={sock}",
                       *(f"{k}={v}" for k, v in options.items()),
                       timeout=30)
        self.wait_port(port)
        wait_until(lambda: guest_running() or b"Press enter to exit"
                   in (self.workdir / f"testpmd-{kind}.log").read_bytes(),
                   30, 0.2, "dpdk-testpmd to forward")
        self._configure_host(ns, "eth0", ip)
        host = Host(ns, ip, port)
        self.hosts[kind] = host
        return host

    def guest_log(self, kind: str) -> str:
        try:
            return (self.workdir / f"testpmd-{kind}.log").read_text(
                errors="replace")[-3000:]
        except OSError:
            return ""

    # -- traffic -------------------------------------------------------------

    def ping(self, src: Host, dst: Host, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while True:
            p = src.ns.run(["ping", "-c", "1", "-W", "1", dst.ip],
                           check=False)
            if p.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"{src.ip} cannot ping {dst.ip}: "
                                     f"{p.stdout}{p.stderr}")

    def transfer(self, src: Host, dst: Host, nbytes: int, rate: float = 0,
                 idle_timeout: float = 30) -> Transfer:
        t = Transfer(src, dst, nbytes, rate, idle_timeout)
        self.transfers.append(t)
        return t.start()

    def many(self, src: Host, dst: Host, connections: int, nbytes: int,
             parallel: int = 32) -> ManyConnections:
        m = ManyConnections(src, dst, connections, nbytes, parallel)
        self.manys.append(m)
        return m

    # -- DPDK state ------------------------------------------------------------

    def mempool_in_use(self, port: str) -> int:
        """Mbufs of 'port''s mempool in use (not in the pool or a per-lcore
        cache): 'netdev-dpdk/get-mempool-info PORT', OVS 3.1."""
        out = self.ovs.appctl("netdev-dpdk/get-mempool-info", port)
        m = re.search(r"count: avail \((\d+)\), in use \((\d+)\)", out)
        if not m:
            raise AssertionError(f"no mempool counts for {port}: {out[:500]}")
        return int(m.group(2))

    # -- teardown ------------------------------------------------------------

    def check_health(self) -> None:
        self.ovs.assert_healthy(self.log_ignore)

    def save_logs(self, dest: Path) -> None:
        dest.mkdir(parents=True, exist_ok=True)
        for pat in ("*.log", "*.stderr"):
            for p in self.workdir.glob(pat):
                shutil.copy(p, dest / p.name)

    def teardown(self) -> None:
        for t in self.transfers:
            t.kill()
        for m in self.manys:
            m.kill()
        if self.ovs:
            self.ovs.stop()
        for proc in self.guests:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                    proc.wait(10)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    proc.kill()
                    proc.wait(5)
        for ns in reversed(self.namespaces):
            ns.delete()
        if self.huge:
            self.huge.remove()
        for prefix in self.prefixes:
            shutil.rmtree(f"/var/run/dpdk/{prefix}", ignore_errors=True)
        shutil.rmtree(self.workdir, ignore_errors=True)

"""A private Open vSwitch and network namespaces: the base of the testbed.

Everything here drives the real programs of the patched OVS build
(build/ovs, or $OVS_BUILDDIR) and real Linux TCP:

  OvsBuild     where the binaries and the schema are; whether the schema has
               the PAC table.
  Ovs          ovsdb-server + ovs-vswitchd with a private run/db/log
               directory; ovs-vsctl/appctl/ofctl wrappers, Interface
               statistics and status, PAC helpers, log and liveness checks.
  Netns        one network namespace.
  Topology     three namespaces: "sw" (ovs-vswitchd runs there, bridge br0
               with datapath_type=netdev), "vm" (10.0.0.2) and "peer"
               (10.0.0.1), each linked to br0 by a veth pair whose switch
               end (vm-p, peer-p) is a plain system port.
  Transfer     a TCP transfer peer -> vm (tcp_xfer.py), in the background.

Names of namespaces and temporary directories carry the pid of the calling
process ("ovspac-<pid>-..."), so parallel runs do not clash and
cleanup_stale() can remove what a crashed run left behind.  Because
ovs-vswitchd and the veth switch ends live in a namespace of their own,
nothing is created in the host's network namespace.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional, Sequence

HERE = Path(__file__).resolve().parent
TOP = HERE.parent.parent
PREFIX = "ovspac"
XFER_SCRIPT = HERE / "tcp_xfer.py"

_counter = itertools.count(1)


def unique_name(kind: str) -> str:
    """'ovspac-<pid>-<n>-<kind>', unique within this machine."""
    return f"{PREFIX}-{os.getpid()}-{next(_counter)}-{kind}"


def run(cmd: Sequence[str], *, check: bool = True, timeout: float = 30,
        netns: Optional[str] = None,
        env: Optional[dict] = None) -> subprocess.CompletedProcess:
    """Runs 'cmd' (in 'netns' if given), capturing text output."""
    full = list(cmd)
    if netns:
        full = ["ip", "netns", "exec", netns] + full
    proc = subprocess.run(full, capture_output=True, text=True,
                          timeout=timeout, env=env)
    if check and proc.returncode != 0:
        raise CommandError(full, proc)
    return proc


class CommandError(RuntimeError):
    def __init__(self, cmd: Sequence[str], proc: subprocess.CompletedProcess):
        self.cmd = list(cmd)
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        super().__init__(f"{' '.join(self.cmd)}: exit {proc.returncode}: "
                         f"{proc.stderr.strip() or proc.stdout.strip()}")


def wait_until(pred: Callable[[], object], timeout: float,
               interval: float = 0.1, what: str = "condition") -> object:
    """Polls 'pred' until it returns something true; returns that."""
    deadline = time.monotonic() + timeout
    while True:
        value = pred()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {timeout:g} s waiting for "
                               f"{what}")
        time.sleep(interval)


def exit_text(status: int) -> str:
    """A process's return code in words: "exited with status 1", or, for a
    signal (a negative code), "was killed by SIGSEGV"."""
    if status < 0:
        try:
            return f"was killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"was killed by signal {-status}"
    return f"exited with status {status}"


def proc_stat(pid: int) -> Optional[list[str]]:
    """The fields of /proc/<pid>/stat after the command name (the first is
    the state, field 3 of proc(5)), or None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()


def pid_running(pid: int) -> bool:
    """Whether 'pid' exists and is not a zombie."""
    fields = proc_stat(pid)
    return fields is not None and fields[0] != "Z"


# ---------------------------------------------------------------------------
# The build.

class OvsBuild:
    PROGRAMS = {
        "ovsdb-tool": "ovsdb/ovsdb-tool",
        "ovsdb-server": "ovsdb/ovsdb-server",
        "ovsdb-client": "ovsdb/ovsdb-client",
        "ovs-vswitchd": "vswitchd/ovs-vswitchd",
        "ovs-vsctl": "utilities/ovs-vsctl",
        "ovs-appctl": "utilities/ovs-appctl",
        "ovs-ofctl": "utilities/ovs-ofctl",
    }

    def __init__(self, root: Optional[Path] = None):
        self.root = Path(root or os.environ.get("OVS_BUILDDIR")
                         or TOP / "build" / "ovs").resolve()
        self.schema = self.root / "vswitchd" / "vswitch.ovsschema"
        self.origin = self.root     # the tree a snapshot was copied from

    def bin(self, name: str) -> str:
        return str(self.root / self.PROGRAMS[name])

    def missing(self) -> list[str]:
        paths = [Path(self.bin(n)) for n in self.PROGRAMS] + [self.schema]
        return [str(p) for p in paths if not os.access(p, os.R_OK)]

    def wait_for_binaries(self, timeout: float = 120) -> None:
        """The build tree may be rebuilt under us: wait for it to be whole."""
        try:
            wait_until(lambda: not self.missing(), timeout, 1.0,
                       "the OVS build's binaries")
        except TimeoutError:
            raise RuntimeError(f"not built: {', '.join(self.missing())}")

    def snapshot(self, dest: Path, timeout: float = 180) -> "OvsBuild":
        """Copies the programs and the schema to 'dest' (same layout) and
        returns an OvsBuild for the copy, so that a rebuild of the tree
        during the tests changes nothing under them.  Retries while a
        program is missing or does not run (being relinked)."""
        deadline = time.monotonic() + timeout
        while True:
            self.wait_for_binaries(max(1.0, deadline - time.monotonic()))
            copy = OvsBuild(dest)
            copy.origin = self.root
            problem = None
            try:
                problem = self.rebuilding()
                for rel in [] if problem else list(self.PROGRAMS.values()) + [
                        "vswitchd/vswitch.ovsschema"]:
                    (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(self.root / rel, dest / rel)
                for name in [] if problem else self.PROGRAMS:
                    out = run([copy.bin(name), "--version"], timeout=30).stdout
                    m = re.search(r"^DB Schema (\S+)", out, re.M)
                    version = copy.schema_json()["version"]
                    if m and m.group(1) != version:
                        problem = problem or (
                            f"{name} is built for schema {m.group(1)}, "
                            f"the schema is {version}")
            except (OSError, CommandError, ValueError) as e:
                problem = e
            if problem is None:
                return copy
            if time.monotonic() > deadline:
                raise RuntimeError(f"cannot take a consistent copy of "
                                   f"{self.root}: {problem}")
            time.sleep(2)

    def rebuilding(self, quiet: float = 3.0) -> Optional[str]:
        """Why the tree looks half rebuilt (None if it does not): a program
        that uses the schema is older than it, or a file changed within the
        last 'quiet' seconds."""
        schema_mtime = self.schema.stat().st_mtime
        for name in ("ovs-vswitchd", "ovs-vsctl"):
            if os.stat(self.bin(name)).st_mtime < schema_mtime:
                return f"{name} is older than the schema"
        now = time.time()
        for p in [self.schema] + [Path(self.bin(n)) for n in self.PROGRAMS]:
            if now - p.stat().st_mtime < quiet:
                return f"{p} is being written"
        return None

    def schema_json(self) -> dict:
        return json.loads(self.schema.read_text())

    def pac_table(self) -> Optional[dict]:
        """The PAC table of the built schema, or None if it has none."""
        return self.schema_json()["tables"].get("PAC")


# ---------------------------------------------------------------------------
# OVSDB values.

def ovsdb_value(v):
    """Python value of one OVSDB JSON datum (maps become dicts, sets lists)."""
    if isinstance(v, list) and len(v) == 2 and isinstance(v[0], str):
        kind, data = v
        if kind == "map":
            return {ovsdb_value(k): ovsdb_value(x) for k, x in data}
        if kind == "set":
            return [ovsdb_value(x) for x in data]
        if kind in ("uuid", "named-uuid"):
            return data
    return v


# PAC columns for the tests of one transfer that must see PAC hold ACKs:
# without the fast path, which never tracks a lone transfer, and without
# the window clamp (half the threshold), which keeps a lone connection's
# window below the threshold, so that PAC would only hold now and then.
PAC_HOLD_LONE_TRANSFER = {"other_config": {"clamp-window": "false",
                                           "fast-path": "false"}}


# The per-cause release counters of an Interface's PAC statistics (the
# pac_released_<cause> keys of pac/show's "released" line; not
# pac_released_bytes_cap, which counts a part of pac_released_cap again).
PAC_RELEASE_CAUSES = ("fit", "max_hold", "cap", "flush")


def pac_released(stats: dict[str, int]) -> int:
    """Held packets released, all causes, from 'stats' (pac_stats())."""
    return sum(stats.get(f"pac_released_{c}", 0) for c in PAC_RELEASE_CAUSES)


def format_ovsdb_arg(key: str, value) -> str:
    """'key=value' as ovs-vsctl takes it (bools as true/false)."""
    if isinstance(value, bool):
        value = "true" if value else "false"
    elif isinstance(value, dict):
        q = lambda x: str(x) if isinstance(x, int) else f'"{x}"'
        value = "{" + ", ".join(f"{q(k)}={q(v)}" for k, v in value.items()) \
            + "}"
    return f"{key}={value}"


# ---------------------------------------------------------------------------
# Network namespaces.

class Netns:
    def __init__(self, name: str):
        self.name = name
        run(["ip", "netns", "add", name])
        self.run(["ip", "link", "set", "lo", "up"])

    def run(self, cmd: Sequence[str], **kw) -> subprocess.CompletedProcess:
        return run(cmd, netns=self.name, **kw)

    def cmd(self, cmd: Sequence[str]) -> list[str]:
        return ["ip", "netns", "exec", self.name] + list(cmd)

    def pids(self) -> list[int]:
        out = run(["ip", "netns", "pids", self.name], check=False).stdout
        return [int(p) for p in out.split()]

    def delete(self) -> None:
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        run(["ip", "netns", "del", self.name], check=False)


def disable_offloads(ns: Netns, dev: str) -> None:
    """The userspace datapath without TSO needs MTU-size, checksummed
    frames."""
    ns.run(["ethtool", "-K", dev, "tx", "off", "tso", "off", "gso", "off",
            "gro", "off"])


# ---------------------------------------------------------------------------
# Open vSwitch.

LOG_PROBLEM = re.compile(r"\|(ERR|EMER)\|")


class Ovs:
    """ovsdb-server and ovs-vswitchd with private directories under
    'workdir'; ovs-vswitchd runs in network namespace 'netns'."""

    def __init__(self, build: OvsBuild, workdir: Path,
                 netns: Optional[Netns] = None,
                 other_config: Optional[dict[str, str]] = None):
        self.build = build
        self.dir = workdir
        self.netns = netns
        # Open_vSwitch other_config set before ovs-vswitchd starts (e.g.
        # dpdk-init, which ovs-vswitchd reads once at start-up).
        self.other_config = dict(other_config or {})
        self.db_sock = f"unix:{workdir}/db.sock"
        self.procs: dict[str, subprocess.Popen] = {}
        self.env = dict(os.environ, OVS_RUNDIR=str(workdir),
                        OVS_DBDIR=str(workdir), OVS_LOGDIR=str(workdir),
                        OVS_SYSCONFDIR=str(workdir),
                        OVS_PKGDATADIR=str(build.root / "vswitchd"),
                        OVS_BINDIR=str(build.root))

    # -- process control ---------------------------------------------------

    def ctl(self, daemon: str) -> str:
        return str(self.dir / f"{daemon}.ctl")

    def log_path(self, daemon: str = "ovs-vswitchd") -> Path:
        return self.dir / f"{daemon}.log"

    def _spawn(self, daemon: str, args: list[str],
               netns: Optional[Netns]) -> None:
        cmd = [self.build.bin(daemon)] + args + [
            "-vconsole:off", "-vfile:info", "--no-chdir",
            f"--pidfile={self.dir}/{daemon}.pid",
            f"--unixctl={self.ctl(daemon)}",
            f"--log-file={self.log_path(daemon)}",
        ]
        if netns:
            cmd = netns.cmd(cmd)
        with open(self.dir / f"{daemon}.stderr", "wb") as err:
            self.procs[daemon] = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=err, stderr=err,
                env=self.env, start_new_session=True)

    def start(self) -> None:
        self.build.wait_for_binaries()
        run([self.build.bin("ovsdb-tool"), "create", str(self.dir / "conf.db"),
             str(self.build.schema)])
        self._spawn("ovsdb-server",
                    [str(self.dir / "conf.db"), f"--remote=p{self.db_sock}"],
                    None)
        wait_until(lambda: self._answers("ovsdb-server")
                   and os.path.exists(self.db_sock[5:]), 15,
                   what="ovsdb-server")
        self.vsctl("--no-wait", "init")
        if self.other_config:
            self.vsctl("--no-wait", "set", "Open_vSwitch", ".",
                       *(f"other_config:{k}={v}"
                         for k, v in self.other_config.items()))
        self._spawn("ovs-vswitchd", [self.db_sock], self.netns)
        wait_until(lambda: self._answers("ovs-vswitchd"), 30,
                   what="ovs-vswitchd's control socket")
        # ovs-vsctl without --no-wait returns once ovs-vswitchd has applied
        # the configuration, i.e. it is up and reading the database.
        self.vsctl("set", "Open_vSwitch", ".", "external_ids:test=1")

    def _answers(self, daemon: str) -> bool:
        proc = self.procs[daemon]
        if proc.poll() is not None:
            raise RuntimeError(
                f"{daemon} {exit_text(proc.returncode)}: "
                f"{self.tail(daemon, 20)}")
        return run([self.build.bin("ovs-appctl"), "-T", "2", "-t",
                    self.ctl(daemon), "version"], check=False,
                   env=self.env).returncode == 0

    def alive(self, daemon: str = "ovs-vswitchd") -> bool:
        proc = self.procs.get(daemon)
        return proc is not None and proc.poll() is None

    def stop(self) -> dict[str, Optional[int]]:
        """Stops both daemons (politely, then with SIGKILL).  Returns the
        exit status of each one that had died on its own before, None for
        one that was still running."""
        died: dict[str, Optional[int]] = {}
        for daemon in ("ovs-vswitchd", "ovsdb-server"):
            proc = self.procs.get(daemon)
            if proc is None:
                continue
            died[daemon] = proc.poll()
            if died[daemon] is not None:
                continue
            run([self.build.bin("ovs-appctl"), "-T", "5", "-t",
                 self.ctl(daemon), "exit"], check=False, env=self.env)
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        return died

    # -- logs --------------------------------------------------------------

    def tail(self, daemon: str = "ovs-vswitchd", n: int = 40) -> str:
        return log_tail((self.log_path(daemon),
                         self.dir / f"{daemon}.stderr"), n)

    def log_problems(self, daemon: str = "ovs-vswitchd",
                     ignore: Iterable[str] = ()) -> list[str]:
        """ERR and EMER lines of the daemon's log, except those matching a
        regex of 'ignore'."""
        return log_problems(self.log_path(daemon), ignore)

    def assert_healthy(self, ignore: Iterable[str] = ()) -> None:
        """ovs-vswitchd (and ovsdb-server) run, no ERR/EMER in their logs."""
        for daemon in ("ovs-vswitchd", "ovsdb-server"):
            assert self.alive(daemon), (
                f"{daemon} {exit_text(self.procs[daemon].poll())}\n"
                + self.tail(daemon, 15))
            problems = self.log_problems(daemon, ignore)
            assert not problems, (f"{daemon} logged errors:\n"
                                  + "\n".join(problems[:20]))

    # -- utilities ---------------------------------------------------------

    def vsctl(self, *args: str, timeout: float = 10) -> str:
        """ovs-vsctl ARGS; raises CommandError if it fails."""
        return run([self.build.bin("ovs-vsctl"), f"--db={self.db_sock}",
                    f"--timeout={int(timeout)}", *args],
                   timeout=timeout + 5, env=self.env).stdout.strip()

    def vsctl_try(self, *args: str,
                  timeout: float = 10) -> subprocess.CompletedProcess:
        """ovs-vsctl that may fail: returns the CompletedProcess."""
        return run([self.build.bin("ovs-vsctl"), f"--db={self.db_sock}",
                    f"--timeout={int(timeout)}", *args], check=False,
                   timeout=timeout + 5, env=self.env)

    def appctl(self, *args: str, check: bool = True,
               timeout: float = 10) -> str:
        proc = run([self.build.bin("ovs-appctl"), "-T", str(int(timeout)),
                    "-t", self.ctl("ovs-vswitchd"), *args], check=check,
                   timeout=timeout + 5, env=self.env)
        return proc.stdout.strip() if proc.returncode == 0 else proc.stderr

    def ofctl(self, *args: str) -> str:
        # The bridge's management socket is in the run directory.
        return run([self.build.bin("ovs-ofctl"), *args], env=self.env,
                   timeout=15).stdout.strip()

    def get_columns(self, table: str, record: str,
                    *columns: str) -> dict[str, object]:
        out = self.vsctl("--format=json", "--data=json",
                         f"--columns={','.join(columns)}", "list", table,
                         record)
        doc = json.loads(out)
        row = doc["data"][0]
        return {h: ovsdb_value(v) for h, v in zip(doc["headings"], row)}

    def iface_stats(self, iface: str) -> dict[str, int]:
        return self.get_columns("Interface", iface, "statistics")["statistics"]

    def iface_status(self, iface: str) -> dict[str, str]:
        return self.get_columns("Interface", iface, "status")["status"]

    # -- PAC -----------------------------------------------------------------

    def pac_enable(self, iface: str, **columns) -> str:
        """Creates a PAC row with 'columns' and points iface's pac at it:
          ovs-vsctl set Interface IFACE pac=@p -- --id=@p create PAC ...
        With no columns, all defaults (other_config={}).  Returns the row's
        uuid."""
        args = [format_ovsdb_arg(k, v) for k, v in columns.items()]
        out = self.vsctl("set", "Interface", iface, "pac=@p", "--",
                         "--id=@p", "create", "PAC",
                         *(args or ["other_config={}"]))
        return out.split()[-1] if out else self.pac_uuid(iface)

    def pac_disable(self, iface: str) -> None:
        self.vsctl("clear", "Interface", iface, "pac")

    def pac_set(self, uuid: str, **columns) -> None:
        self.vsctl("set", "PAC", uuid,
                   *(format_ovsdb_arg(k, v) for k, v in columns.items()))

    def pac_uuid(self, iface: str) -> Optional[str]:
        pac = self.get_columns("Interface", iface, "pac")["pac"]
        return pac if isinstance(pac, str) else None

    def pac_stats(self, iface: str) -> dict[str, int]:
        """All Interface:statistics keys that start with 'pac_'."""
        return {k: v for k, v in self.iface_stats(iface).items()
                if k.startswith("pac_")}

    def pac_show(self, iface: str) -> str:
        return self.appctl("pac/show", iface)

    def wait_pac_stats(self, iface: str,
                       pred: Callable[[dict[str, int]], bool],
                       timeout: float = 15) -> dict[str, int]:
        """Polls the pac_* statistics (refreshed every 5 s by ovs-vswitchd)
        until pred(stats) holds; returns them.  On timeout raises
        AssertionError with the last values."""
        last: dict[str, int] = {}

        def check():
            nonlocal last
            last = self.pac_stats(iface)
            return pred(last)
        try:
            wait_until(check, timeout, 0.5, "PAC statistics")
        except TimeoutError:
            raise AssertionError(f"pac_* statistics of {iface} after "
                                 f"{timeout:g} s: {last}") from None
        return last


# ---------------------------------------------------------------------------
# Topology.

@dataclass
class Host:
    ns: Netns
    ip: str
    port: str       # OVS port name (switch end of the veth), in ns "sw".


class Topology:
    """Namespaces sw/vm/peer, OVS in sw with br0 (netdev) and the ports
    vm-p and peer-p, actions=NORMAL."""

    VM_IP = "10.0.0.2"
    PEER_IP = "10.0.0.1"

    def __init__(self, build: OvsBuild, keep_logs_to: Optional[Path] = None):
        self.build = build
        self.namespaces: list[Netns] = []
        self.transfers: list[Transfer] = []
        # Regexes of ERR/EMER log lines a test expects (see check_health).
        self.log_ignore: list[str] = []
        self.workdir = Path(tempfile.mkdtemp(prefix=f"{PREFIX}-{os.getpid()}-"))
        self.ovs: Optional[Ovs] = None
        self.vm: Optional[Host] = None
        self.peer: Optional[Host] = None

    def _netns(self, kind: str) -> Netns:
        ns = Netns(unique_name(kind))
        self.namespaces.append(ns)
        return ns

    def setup(self) -> "Topology":
        sw = self._netns("sw")
        self.sw = sw
        self.ovs = Ovs(self.build, self.workdir, sw)
        self.ovs.start()
        self.ovs.vsctl("add-br", "br0", "--", "set", "Bridge", "br0",
                       "datapath_type=netdev")
        self.vm = self._host("vm", self.VM_IP, "vm-p")
        self.peer = self._host("peer", self.PEER_IP, "peer-p")
        self.ovs.ofctl("del-flows", "br0")
        self.ovs.ofctl("add-flow", "br0", "actions=NORMAL")
        # Learn MACs and make sure the path works before any test.
        self.ping(self.peer, self.vm)
        return self

    def add_host(self, kind: str, ip: str, port: str) -> Host:
        """One more namespace 'kind' (eth0 at 'ip'/24) on br0, its switch
        end named 'port' (e.g. a second VM or an attacker)."""
        return self._host(kind, ip, port)

    def _host(self, kind: str, ip: str, port: str) -> Host:
        ns = self._netns(kind)
        run(["ip", "link", "add", port, "netns", self.sw.name, "type", "veth",
             "peer", "name", "eth0", "netns", ns.name])
        for n, dev in ((self.sw, port), (ns, "eth0")):
            disable_offloads(n, dev)
            n.run(["ip", "link", "set", dev, "up"])
        ns.run(["ip", "addr", "add", f"{ip}/24", "dev", "eth0"])
        # Up before it is added: a port that is down makes the userspace
        # datapath log "error receiving data ... Network is down" (ERR).
        self.ovs.vsctl("add-port", "br0", port)
        return Host(ns, ip, port)

    def ping(self, src: Host, dst: Host, count: int = 3,
             timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        while True:
            p = src.ns.run(["ping", "-c", "1", "-W", "1", dst.ip], check=False)
            if p.returncode == 0:
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"{src.ip} cannot ping {dst.ip}: "
                                     f"{p.stdout}{p.stderr}")
        src.ns.run(["ping", "-c", str(count), "-i", "0.2", "-W", "2", dst.ip])

    def transfer(self, nbytes: int, rate: float = 0,
                 idle_timeout: float = 20) -> "Transfer":
        """Starts a TCP transfer of 'nbytes' random bytes peer -> vm
        (through br0) in the background; .wait() returns the result."""
        t = Transfer(self.peer, self.vm, nbytes, rate, idle_timeout)
        self.transfers.append(t)
        return t.start()

    def check_health(self) -> None:
        """Asserts that both daemons still run and logged no ERR/EMER line
        (other than those matching self.log_ignore)."""
        self.ovs.assert_healthy(self.log_ignore)

    def save_logs(self, dest: Path) -> None:
        dest.mkdir(parents=True, exist_ok=True)
        for p in self.workdir.glob("*.log"):
            shutil.copy(p, dest / p.name)
        for p in self.workdir.glob("*.stderr"):
            shutil.copy(p, dest / p.name)

    def teardown(self) -> None:
        for t in self.transfers:
            t.kill()
        if self.ovs:
            self.ovs.stop()
        for ns in reversed(self.namespaces):
            ns.delete()
        shutil.rmtree(self.workdir, ignore_errors=True)


# ---------------------------------------------------------------------------
# TCP transfers.

@dataclass
class TransferResult:
    nbytes: int
    sender: dict
    receiver: dict

    @property
    def seconds(self) -> float:
        return float(self.receiver.get("seconds", 0.0))

    def assert_exact(self) -> None:
        s, r = self.sender, self.receiver
        assert "error" not in s and "error" not in r, (
            f"transfer failed: sender {s}, receiver {r}")
        assert s["bytes"] == self.nbytes, f"sender sent {s['bytes']}"
        assert r["bytes"] == self.nbytes, (
            f"receiver got {r['bytes']} of {self.nbytes} bytes")
        assert r["sha256"] == s["sha256"], "data corrupted: sha256 differs"
        assert s["peer_sha256"] == s["sha256"], "receiver's digest differs"


class Transfer:
    """tcp_xfer.py recv in 'dst' and send in 'src'."""

    def __init__(self, src: Host, dst: Host, nbytes: int, rate: float = 0,
                 idle_timeout: float = 20):
        self.src, self.dst = src, dst
        self.nbytes = nbytes
        self.rate = rate
        self.idle_timeout = idle_timeout
        self.recv: Optional[subprocess.Popen] = None
        self.send: Optional[subprocess.Popen] = None
        self.started = 0.0

    def _popen(self, ns: Netns, args: list[str]) -> subprocess.Popen:
        return subprocess.Popen(
            ns.cmd([sys.executable, str(XFER_SCRIPT)] + args),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)

    def start(self) -> "Transfer":
        self.recv = self._popen(self.dst.ns, [
            "recv", "--bind", self.dst.ip,
            "--idle-timeout", str(self.idle_timeout)])
        ready, _, _ = select.select([self.recv.stdout], [], [], 15)
        line = self.recv.stdout.readline() if ready else ""
        if not line.startswith("READY "):
            self.kill()
            raise RuntimeError(f"receiver did not start: {line!r} "
                               f"{self.recv.stderr.read()}")
        port = line.split()[1]
        self.started = time.monotonic()
        self.send = self._popen(self.src.ns, [
            "send", "--host", self.dst.ip, "--port", port,
            "--bytes", str(self.nbytes), "--rate", str(self.rate),
            "--idle-timeout", str(self.idle_timeout)])
        return self

    def running(self) -> bool:
        return any(p is not None and p.poll() is None
                   for p in (self.recv, self.send))

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @staticmethod
    def _result(p: subprocess.Popen, timeout: float, role: str) -> dict:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            return {"role": role, "error": f"no result after {timeout:g} s",
                    "bytes": -1, "stderr": err}
        for line in reversed(out.splitlines()):
            if line.startswith("{"):
                return json.loads(line)
        return {"role": role, "error": f"exit {p.returncode}", "bytes": -1,
                "stdout": out, "stderr": err}

    def wait(self, timeout: float = 60) -> TransferResult:
        deadline = time.monotonic() + timeout
        sender = self._result(self.send, timeout, "send")
        receiver = self._result(self.recv,
                                max(1.0, deadline - time.monotonic()), "recv")
        return TransferResult(self.nbytes, sender, receiver)

    def kill(self) -> None:
        for p in (self.send, self.recv):
            if p is not None and p.poll() is None:
                p.kill()
                p.communicate()


# ---------------------------------------------------------------------------
# Leftovers of crashed runs.

def _owner_dead(name: str) -> bool:
    """Whether the pid in 'ovspac-<pid>-...' no longer runs."""
    m = re.match(rf"{PREFIX}-(\d+)-", name)
    return bool(m) and not pid_running(int(m.group(1)))


def cleanup_stale() -> list[str]:
    """Kills OVS daemons, deletes namespaces and removes temporary
    directories left by earlier test processes that no longer run.
    Returns what it removed."""
    removed = []
    tmp = Path(tempfile.gettempdir())
    stale_dirs = [d for d in tmp.glob(f"{PREFIX}-*") if _owner_dead(d.name)]
    for d in stale_dirs:
        for pidfile in d.glob("*.pid"):
            try:
                pid = int(pidfile.read_text().strip())
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except (OSError, ValueError):
                continue
            if str(d).encode() in cmdline:
                os.kill(pid, signal.SIGKILL)
                removed.append(f"process {pid}")
    out = run(["ip", "netns", "list"], check=False).stdout
    for line in out.splitlines():
        name = line.split()[0] if line.split() else ""
        if name.startswith(f"{PREFIX}-") and _owner_dead(name):
            ns = Netns.__new__(Netns)
            ns.name = name
            ns.delete()
            removed.append(f"netns {name}")
    for d in stale_dirs:
        shutil.rmtree(d, ignore_errors=True)
        removed.append(f"dir {d}")
    return removed


def log_tail(paths: Iterable[Path], n: int = 40) -> str:
    """The last 'n' lines of each file of 'paths' that exists, headed by its
    name."""
    text = ""
    for p in paths:
        try:
            lines = p.read_text(errors="replace").splitlines()
        except OSError:
            continue
        text += f"--- {p.name} (last {n} lines)\n" + "\n".join(lines[-n:])
        text += "\n"
    return text


def log_problems(path: Path, ignore: Iterable[str] = ()) -> list[str]:
    """ERR and EMER lines of log file 'path', except those matching a regex
    of 'ignore'."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return []
    pats = [re.compile(p) for p in ignore]
    return [l for l in lines if LOG_PROBLEM.search(l)
            and not any(p.search(l) for p in pats)]


@contextlib.contextmanager
def build_snapshot() -> Iterator[OvsBuild]:
    """A private copy of the build's programs and schema, for a test session
    (others may rebuild build/ovs meanwhile), removed at the end; leftovers
    of killed runs are removed first."""
    for line in cleanup_stale():
        print(f"removed leftover {line}")
    dest = Path(tempfile.mkdtemp(prefix=f"{PREFIX}-{os.getpid()}-bin-"))
    try:
        yield OvsBuild().snapshot(dest)
    finally:
        shutil.rmtree(dest, ignore_errors=True)

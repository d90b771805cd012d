"""Real OVN daemons beside the patched Open vSwitch: the OVN part of the
testbed.

  OvnCentral       the OVN "central" node: NB and SB ovsdb-servers (on unix
                   sockets in a private directory, databases created from
                   /usr/share/ovn/*.ovsschema) and ovn-northd between them;
                   ovn-nbctl/ovn-sbctl wrappers; the NB or SB server can be
                   stopped and restarted on the same file and socket.
  Chassis          one hypervisor: a patched OVS (ovs_env.Ovs, ovs-vswitchd
                   in a network namespace of its own) with br-int
                   (datapath_type=netdev) and Debian's ovn-controller
                   connected to it and to the central's SB; VM ports are
                   veth pairs whose far end is in a namespace of its own.
  VmPort           one VM port of a chassis: the OVS interface, the logical
                   port it is bound to, the VM's namespace.
  wait_port_bound  waits until SB Port_Binding of a logical port names a
                   chassis.
  ovn_missing      which of the OVN programs and schemas are not installed.
  Pki              a private certificate authority (ovs-pki) for ssl:
                   remotes (OvnCentral.add_ssl_remote()).
  Daemon           one daemon run in the foreground with its pidfile,
                   control socket and log in a private directory.

The OVN programs are those of Debian's ovn-central and ovn-host packages
(tools/install-deps); the ovsdb-servers and ovsdb-tool are those of the
OvsBuild passed in (the patched build, or the tests' private copy of it).
Directories and namespaces are named like those of ovs_env
("ovspac-<pid>-..."), so ovs_env.cleanup_stale() also removes what a
crashed run left behind: every daemon's pidfile is at the top of its
directory and its command line names that directory.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Callable, Iterable, Optional, Sequence

from .ovs_env import (PREFIX, TOP, CommandError, Netns, Ovs, OvsBuild,
                      disable_offloads, exit_text, log_problems, log_tail,
                      run, unique_name, wait_until)

OVN_SCHEMA_DIR = Path("/usr/share/ovn")
NB_SCHEMA = OVN_SCHEMA_DIR / "ovn-nb.ovsschema"
SB_SCHEMA = OVN_SCHEMA_DIR / "ovn-sb.ovsschema"

OVN_PROGRAMS = {
    "ovn-northd": "/usr/bin/ovn-northd",
    "ovn-controller": "/usr/bin/ovn-controller",
    "ovn-nbctl": "/usr/bin/ovn-nbctl",
    "ovn-sbctl": "/usr/bin/ovn-sbctl",
}


def ovn_missing() -> list[str]:
    """The OVN programs and schemas that are not installed (empty when all
    are)."""
    paths = [Path(p) for p in OVN_PROGRAMS.values()] + [NB_SCHEMA, SB_SCHEMA]
    return [str(p) for p in paths if not os.access(p, os.R_OK)]


DB_NAMES = {"nb": "OVN_Northbound", "sb": "OVN_Southbound"}
GLOBAL_TABLES = {"nb": "NB_Global", "sb": "SB_Global"}


class Pki:
    """A private certificate authority made with ovs-pki in 'workdir'
    (as an OVN deployment's PKI): sign() gives a key and a certificate
    signed by it, ca_cert is its certificate."""

    def __init__(self, workdir: Path):
        self.dir = workdir / "pki"
        run(["ovs-pki", f"--dir={self.dir}", "--force", "init"], timeout=120)
        self.ca_cert = self.dir / "switchca" / "cacert.pem"

    def sign(self, name: str) -> tuple[Path, Path]:
        """A new private key and its certificate: (key file, cert file)."""
        run(["ovs-pki", f"--dir={self.dir}", "--force", "--unique",
             "req+sign", str(self.dir / name), "switch"], timeout=120)
        return (self.dir / f"{name}-privkey.pem",
                self.dir / f"{name}-cert.pem")


def free_tcp_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _private_env(workdir: Path) -> dict[str, str]:
    """The environment of a daemon or client: every OVS and OVN default
    directory points at 'workdir', no ovn-nbctl daemon is used."""
    env = dict(os.environ)
    env.pop("OVN_NB_DAEMON", None)
    for var in ("OVS_RUNDIR", "OVS_LOGDIR", "OVS_DBDIR", "OVS_SYSCONFDIR",
                "OVN_RUNDIR", "OVN_LOGDIR", "OVN_DBDIR", "OVN_SYSCONFDIR"):
        env[var] = str(workdir)
    return env


# ---------------------------------------------------------------------------
# One daemon.

class Daemon:
    """One OVS-style daemon run in the foreground (not --detach) with its
    pidfile, control socket and log file in 'workdir', named after 'name'
    (e.g. workdir/nb.pid, nb.ctl, nb.log, nb.stderr)."""

    def __init__(self, name: str, workdir: Path, cmd: Sequence[str],
                 env: dict[str, str], appctl: str,
                 netns: Optional[Netns] = None, unixctl_option: bool = True):
        self.name = name
        # Whether the daemon takes --unixctl; one that does not (23.03's
        # ovn-controller) creates <$OVN_RUNDIR>/<program>.<pid>.ctl, so env
        # must point OVN_RUNDIR at workdir.
        self.unixctl_option = unixctl_option
        self.dir = workdir
        self.cmd = list(cmd)
        self.env = env
        self.appctl_bin = appctl
        self.netns = netns
        self.proc: Optional[subprocess.Popen] = None

    @property
    def ctl(self) -> str:
        """The control socket's path."""
        if self.unixctl_option:
            return str(self.dir / f"{self.name}.ctl")
        pid = self.proc.pid if self.proc else 0
        return str(self.dir / f"{self.name}.{pid}.ctl")

    @property
    def pidfile(self) -> Path:
        return self.dir / f"{self.name}.pid"

    @property
    def log_path(self) -> Path:
        return self.dir / f"{self.name}.log"

    def start(self, timeout: float = 15) -> None:
        """Starts the daemon and waits until its control socket answers."""
        cmd = self.cmd + [
            "-vconsole:off", "-vfile:info", "--no-chdir",
            f"--pidfile={self.pidfile}", f"--log-file={self.log_path}",
        ] + ([f"--unixctl={self.ctl}"] if self.unixctl_option else [])
        if self.netns:
            cmd = self.netns.cmd(cmd)
        with open(self.dir / f"{self.name}.stderr", "ab") as err:
            self.proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=err, stderr=err,
                env=self.env, start_new_session=True)
        wait_until(self.answers, timeout, what=f"{self.name}'s control socket")

    def answers(self) -> bool:
        """Whether the control socket answers; raises RuntimeError if the
        daemon has exited."""
        if not self.alive():
            raise RuntimeError(f"{self.name} {self.exit_status()}:\n"
                               f"{self.tail(20)}")
        return self.appctl("version", check=False, timeout=2) is not None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def exit_status(self) -> str:
        """How the daemon ended, in words, or that it was never started."""
        if self.proc is None:
            return "was never started"
        status = self.proc.poll()
        return "is running" if status is None else exit_text(status)

    def appctl(self, *args: str, check: bool = True,
               timeout: float = 10) -> Optional[str]:
        """ovs-appctl -t <control socket> ARGS: its output, or None if it
        failed and 'check' is false."""
        proc = run([self.appctl_bin, "-T", str(int(timeout)), "-t", self.ctl,
                    *args], check=check, timeout=timeout + 5, env=self.env)
        return proc.stdout.strip() if proc.returncode == 0 else None

    def stop(self, polite: bool = True, timeout: float = 5) -> Optional[int]:
        """Stops the daemon: "exit" through its control socket (if
        'polite'), then SIGTERM, then SIGKILL, each given 'timeout' seconds.
        Returns the exit status if it had already died on its own, None
        otherwise."""
        proc = self.proc
        if proc is None:
            return None
        died = proc.poll()
        if died is not None:
            return died
        steps: list[Callable[[], object]] = [
            lambda: proc.send_signal(signal.SIGTERM),
            lambda: proc.send_signal(signal.SIGKILL)]
        if polite:
            steps.insert(0, lambda: self.appctl("exit", check=False,
                                                timeout=timeout))
        for step in steps:
            step()
            try:
                proc.wait(timeout)
                break
            except subprocess.TimeoutExpired:
                continue
        return None

    def tail(self, n: int = 40) -> str:
        """The last 'n' lines of the log file and of stderr."""
        return log_tail((self.log_path, self.dir / f"{self.name}.stderr"), n)

    def log_problems(self, ignore: Iterable[str] = ()) -> list[str]:
        """ERR and EMER lines of the log, except those matching a regex of
        'ignore'."""
        return log_problems(self.log_path, ignore)


def _assert_daemons_healthy(daemons: Iterable[Daemon],
                            ignore: Iterable[str]) -> None:
    """Asserts that every daemon runs and logged no ERR/EMER line other
    than those matching a regex of 'ignore'."""
    ignore = list(ignore)
    for d in daemons:
        assert d.alive(), f"{d.name} {d.exit_status()}\n{d.tail(15)}"
        problems = d.log_problems(ignore)
        assert not problems, (f"{d.name} logged errors:\n"
                              + "\n".join(problems[:20]))


def _save_logs(workdir: Path, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for pattern in ("*.log", "*.stderr"):
        for p in workdir.glob(pattern):
            shutil.copy(p, dest / p.name)


class Started:
    """start() and, always, close(), as a context manager: a subclass
    defines both."""

    def start(self):
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc) -> None:
        self.close()


# ---------------------------------------------------------------------------
# OVN central.

class OvnCentral(Started):
    """NB and SB ovsdb-servers and ovn-northd in a private directory.

    Use as a context manager, or call start() and, always, close():

        with OvnCentral(build) as central:
            central.nbctl("ls-add", "ls1")
    """

    def __init__(self, build: OvsBuild, workdir: Optional[Path] = None):
        missing = ovn_missing()
        if missing:
            raise RuntimeError(f"OVN not installed: {', '.join(missing)} "
                               "(tools/install-deps)")
        self.build = build
        self.dir = Path(workdir or tempfile.mkdtemp(
            prefix=f"{PREFIX}-{os.getpid()}-ovn-central-"))
        self.env = _private_env(self.dir)
        appctl = build.bin("ovs-appctl")
        self.db = {"nb": self.dir / "ovnnb_db.db",
                   "sb": self.dir / "ovnsb_db.db"}
        self.sock = {"nb": self.dir / "ovnnb_db.sock",
                     "sb": self.dir / "ovnsb_db.sock"}
        # As ovn-ctl starts them: remotes and SSL settings also from the
        # database itself (add_ssl_remote()).
        self.servers = {
            kind: Daemon(kind, self.dir,
                         [build.bin("ovsdb-server"), str(self.db[kind]),
                          f"--remote=punix:{self.sock[kind]}",
                          f"--remote=db:{DB_NAMES[kind]},"
                          f"{GLOBAL_TABLES[kind]},connections",
                          f"--private-key=db:{DB_NAMES[kind]},SSL,private_key",
                          f"--certificate=db:{DB_NAMES[kind]},SSL,certificate",
                          f"--ca-cert=db:{DB_NAMES[kind]},SSL,ca_cert"],
                         self.env, appctl)
            for kind in ("nb", "sb")}
        self.northd = Daemon("ovn-northd", self.dir,
                             [OVN_PROGRAMS["ovn-northd"],
                              f"--ovnnb-db={self.nb_remote}",
                              f"--ovnsb-db={self.sb_remote}"],
                             self.env, appctl)
        # Regexes of ERR/EMER log lines a test expects (assert_healthy).
        self.log_ignore: list[str] = []

    @property
    def nb_remote(self) -> str:
        """The NB database's remote, "unix:<socket>"."""
        return f"unix:{self.sock['nb']}"

    @property
    def sb_remote(self) -> str:
        """The SB database's remote, "unix:<socket>"."""
        return f"unix:{self.sock['sb']}"

    def daemons(self) -> list[Daemon]:
        return [self.servers["nb"], self.servers["sb"], self.northd]

    # -- life cycle ---------------------------------------------------------

    def start(self) -> "OvnCentral":
        """Creates both databases, starts their servers and ovn-northd, and
        waits until northd has written the SB (SB_Global exists)."""
        self.build.wait_for_binaries()
        for kind, schema in (("nb", NB_SCHEMA), ("sb", SB_SCHEMA)):
            run([self.build.bin("ovsdb-tool"), "create", str(self.db[kind]),
                 str(schema)])
            self._start_server(kind)
        self.nbctl("init")
        self.northd.start()
        wait_until(lambda: self.sbctl("--bare", "--columns=_uuid", "list",
                                      "SB_Global"),
                   15, what="ovn-northd to create SB_Global")
        return self

    def _start_server(self, kind: str) -> None:
        server = self.servers[kind]
        server.start()
        wait_until(lambda: self.sock[kind].exists(), 15,
                   what=f"{self.sock[kind]}")

    def add_tcp_remote(self, kind: str) -> str:
        """Makes the "nb" or "sb" server listen on TCP too (127.0.0.1, a
        free port); returns the remote, "tcp:127.0.0.1:<port>"."""
        port = free_tcp_port()
        self.servers[kind].appctl("ovsdb-server/add-remote",
                                  f"ptcp:{port}:127.0.0.1")
        return f"tcp:127.0.0.1:{port}"

    def add_ssl_remote(self, kind: str, pki: "Pki") -> str:
        """Makes the "nb" or "sb" server listen on SSL too (127.0.0.1, a
        free port), with a certificate of 'pki', the way an operator does
        (ovn-nbctl/ovn-sbctl set-ssl and set-connection); returns the
        remote, "ssl:127.0.0.1:<port>"."""
        port = free_tcp_port()
        key, cert = pki.sign(f"{kind}-server")
        ctl = self.nbctl if kind == "nb" else self.sbctl
        ctl("set-ssl", str(key), str(cert), str(pki.ca_cert))
        ctl("set-connection", f"pssl:{port}:127.0.0.1")
        return f"ssl:127.0.0.1:{port}"

    def stop_nb(self) -> None:
        """Stops the NB ovsdb-server (its database file stays)."""
        self.servers["nb"].stop()

    def start_nb(self) -> None:
        """Restarts the NB ovsdb-server on the same database and socket."""
        self._start_server("nb")

    def stop_sb(self) -> None:
        """Stops the SB ovsdb-server (its database file stays)."""
        self.servers["sb"].stop()

    def start_sb(self) -> None:
        """Restarts the SB ovsdb-server on the same database and socket."""
        self._start_server("sb")

    def close(self) -> None:
        """Stops ovn-northd and both servers and removes the directory."""
        try:
            for d in (self.northd, self.servers["sb"], self.servers["nb"]):
                d.stop()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    # -- clients -------------------------------------------------------------

    def nbctl(self, *args: str, timeout: float = 10) -> str:
        """ovn-nbctl --db=<NB> ARGS: its output; raises CommandError if it
        fails."""
        return run([OVN_PROGRAMS["ovn-nbctl"], f"--db={self.nb_remote}",
                    f"--timeout={int(timeout)}", *args],
                   timeout=timeout + 5, env=self.env).stdout.strip()

    def sbctl(self, *args: str, timeout: float = 10) -> str:
        """ovn-sbctl --db=<SB> ARGS: its output; raises CommandError if it
        fails."""
        return run([OVN_PROGRAMS["ovn-sbctl"], f"--db={self.sb_remote}",
                    f"--timeout={int(timeout)}", *args],
                   timeout=timeout + 5, env=self.env).stdout.strip()

    def chassis_uuid(self, name: str, timeout: float = 10) -> Optional[str]:
        """The SB Chassis record's uuid of chassis 'name', or None."""
        out = self.sbctl("--bare", "--columns=_uuid", "find", "Chassis",
                         f"name={name}", timeout=timeout)
        return out.split()[0] if out else None

    def port_binding_chassis(self, lsp_name: str) -> Optional[str]:
        """The name of the chassis that SB Port_Binding of logical port
        'lsp_name' names, or None (no binding row, or not bound)."""
        uuid = self.sbctl("--bare", "--columns=chassis", "find",
                          "Port_Binding", f"logical_port={lsp_name}")
        if not uuid:
            return None
        return self.sbctl("get", "Chassis", uuid, "name").strip('"')

    def port_binding_options(self, lsp_name: str) -> dict[str, str]:
        """SB Port_Binding.options of logical port 'lsp_name' ({} if there
        is no such row)."""
        out = self.sbctl("--bare", "--columns=options", "find",
                         "Port_Binding", f"logical_port={lsp_name}")
        return dict(item.split("=", 1) for item in out.split() if "=" in item)

    # -- health and logs ------------------------------------------------------

    def assert_healthy(self) -> None:
        """Both servers and ovn-northd run and logged no ERR/EMER (except
        lines matching self.log_ignore)."""
        _assert_daemons_healthy(self.daemons(), self.log_ignore)

    def save_logs(self, dest: Path) -> None:
        _save_logs(self.dir, dest)


def wait_port_bound(central: OvnCentral, lsp_name: str, chassis_name: str,
                    timeout: float = 15) -> str:
    """Waits until SB Port_Binding of logical port 'lsp_name' has 'chassis'
    = the SB Chassis named 'chassis_name'; returns that Chassis's uuid.
    Raises AssertionError (with what the binding showed last) on timeout."""
    last: Optional[str] = None

    def bound() -> Optional[str]:
        nonlocal last
        want = central.chassis_uuid(chassis_name)
        last = central.sbctl("--bare", "--columns=chassis", "find",
                             "Port_Binding", f"logical_port={lsp_name}")
        return want if want and last == want else None
    try:
        return wait_until(bound, timeout, 0.1,
                          f"{lsp_name} bound to {chassis_name}")
    except TimeoutError:
        raise AssertionError(
            f"Port_Binding {lsp_name} not bound to {chassis_name} after "
            f"{timeout:g} s: chassis column {last!r}, chassis "
            f"{chassis_name} is {central.chassis_uuid(chassis_name)!r}") \
            from None


# ---------------------------------------------------------------------------
# Chassis.

@dataclass
class VmPort:
    """A VM port: 'iface' on br-int (switch end of a veth, in the chassis's
    namespace), bound to logical port 'lsp_name'; the other end is "eth0" in
    namespace 'ns' (the VM)."""
    iface: str
    lsp_name: str
    ns: Netns


class Chassis(Started):
    """A hypervisor: the patched OVS and Debian's ovn-controller.

    ovs-vswitchd runs in a network namespace of its own (so br-int's tap
    device and the VM ports of several chassis cannot collide); ovsdb-server
    and ovn-controller use unix sockets in the chassis's directory, which
    also holds ovs_env.Ovs's files.  Open_vSwitch external_ids:
    system-id=<name>, ovn-remote=<SB>, ovn-encap-type=geneve,
    ovn-encap-ip=<encap_ip>, ovn-bridge-datapath-type=netdev.  Give each
    chassis of one central its own name and encap_ip (127.0.0.1,
    127.0.0.2, ...: every namespace's lo answers the whole of 127/8).

    Use as a context manager, or call start() and, always, close().
    """

    def __init__(self, central: OvnCentral, name: str,
                 encap_ip: str = "127.0.0.1",
                 build: Optional[OvsBuild] = None,
                 ovs: Optional[Ovs] = None):
        missing = ovn_missing()
        if missing:
            raise RuntimeError(f"OVN not installed: {', '.join(missing)} "
                               "(tools/install-deps)")
        self.central = central
        self.name = name
        self.encap_ip = encap_ip
        self.build = build or central.build
        self.dir = Path(tempfile.mkdtemp(
            prefix=f"{PREFIX}-{os.getpid()}-ovn-{name}-"))
        # An Open vSwitch started by the caller, in its namespace (the
        # incast testbed's hypervisor): the chassis uses it and leaves
        # stopping it, and deleting its namespace, to the caller.
        self.own_ovs = ovs is None
        self.netns: Optional[Netns] = ovs.netns if ovs else None
        self.ovs: Optional[Ovs] = ovs
        self.controller: Optional[Daemon] = None
        self.ports: dict[str, VmPort] = {}
        # Regexes of ERR/EMER log lines a test expects (assert_healthy).
        self.log_ignore: list[str] = []

    # -- life cycle ---------------------------------------------------------

    def start(self, timeout: float = 20) -> "Chassis":
        """Starts OVS (unless the caller's was given), creates br-int, sets
        the external_ids, starts ovn-controller, and waits until the
        chassis is registered in the SB (Chassis name=<name>)."""
        if self.own_ovs:
            self.netns = Netns(unique_name(f"ovn-{self.name}"))
            self.ovs = Ovs(self.build, self.dir, self.netns)
            self.ovs.start()
        self.vsctl("--may-exist", "add-br", "br-int", "--",
                   "set", "Bridge", "br-int", "datapath_type=netdev",
                   "fail_mode=secure", "other_config:disable-in-band=true")
        self.vsctl("set", "Open_vSwitch", ".",
                   f"external_ids:system-id={self.name}",
                   f"external_ids:ovn-remote={self.central.sb_remote}",
                   "external_ids:ovn-encap-type=geneve",
                   f"external_ids:ovn-encap-ip={self.encap_ip}",
                   "external_ids:ovn-bridge-datapath-type=netdev")
        env = dict(self.ovs.env, **_private_env(self.dir))
        # ovn-controller reaches br-int's OpenFlow socket in OVS's run
        # directory (the caller's OVS has its own).
        env["OVS_RUNDIR"] = str(self.ovs.dir)
        self.controller = Daemon(
            "ovn-controller", self.dir,
            [OVN_PROGRAMS["ovn-controller"], self.ovs.db_sock], env,
            self.build.bin("ovs-appctl"), self.netns, unixctl_option=False)
        self.controller.start()
        wait_until(lambda: self.controller.answers()
                   and self.central.chassis_uuid(self.name),
                   timeout, what=f"chassis {self.name} in the SB")
        return self

    def close(self) -> None:
        """Removes the VM ports, stops ovn-controller (with "exit", which
        deletes the Chassis record, while the SB runs; with SIGTERM
        otherwise), deletes the Chassis record if it is still there and
        the SB answers, stops OVS and deletes its namespace (unless they
        are the caller's), deletes the VMs' namespaces and the
        directory."""
        try:
            for iface in list(self.ports):
                self.del_vm_port(iface, check=False)
            if self.controller:
                # "exit" waits for the SB to delete the Chassis record:
                # without an SB, SIGTERM (no clean-up) is as good and quick.
                self.controller.stop(
                    polite=self.central.servers["sb"].alive())
            try:
                if self.central.chassis_uuid(self.name, timeout=2):
                    self.central.sbctl("--if-exists", "chassis-del",
                                       self.name, timeout=3)
            except (CommandError, subprocess.TimeoutExpired):
                pass
            if self.ovs and self.own_ovs:
                self.ovs.stop()
        finally:
            for port in self.ports.values():
                port.ns.delete()
            self.ports.clear()
            if self.netns and self.own_ovs:
                self.netns.delete()
            shutil.rmtree(self.dir, ignore_errors=True)

    # -- utilities ------------------------------------------------------------

    def vsctl(self, *args: str, timeout: float = 10) -> str:
        """ovs-vsctl ARGS on this chassis's OVS."""
        return self.ovs.vsctl(*args, timeout=timeout)

    def appctl(self, *args: str, check: bool = True,
               timeout: float = 10) -> str:
        """ovs-appctl ARGS to this chassis's ovs-vswitchd."""
        return self.ovs.appctl(*args, check=check, timeout=timeout)

    def ovn_appctl(self, *args: str, check: bool = True,
                   timeout: float = 10) -> Optional[str]:
        """ovs-appctl ARGS to this chassis's ovn-controller."""
        return self.controller.appctl(*args, check=check, timeout=timeout)

    def add_vm_port(self, iface: str, lsp_name: str,
                    mac: Optional[str] = None,
                    ip: Optional[str] = None) -> VmPort:
        """Adds a VM port bound to logical port 'lsp_name': a veth whose end
        'iface' (in the chassis's namespace) is added to br-int with
        external_ids:iface-id=<lsp_name>, and whose other end is "eth0" in a
        new namespace (the VM), up, with MAC address 'mac' and address 'ip'
        ("10.0.0.2/24") if given.  Offloads are off on both ends (the
        userspace datapath needs checksummed, MTU-size frames)."""
        if iface in self.ports:
            raise ValueError(f"{self.name}: {iface} exists")
        vm = Netns(unique_name(f"vm-{lsp_name}"))
        port = VmPort(iface, lsp_name, vm)
        self.ports[iface] = port
        try:
            run(["ip", "link", "add", iface, "netns", self.netns.name,
                 "type", "veth", "peer", "name", "eth0", "netns", vm.name])
            if mac:
                vm.run(["ip", "link", "set", "eth0", "address", mac])
            for ns, dev in ((self.netns, iface), (vm, "eth0")):
                disable_offloads(ns, dev)
                ns.run(["ip", "link", "set", dev, "up"])
            if ip:
                vm.run(["ip", "addr", "add", ip, "dev", "eth0"])
            self.vsctl("add-port", "br-int", iface, "--",
                       "set", "Interface", iface,
                       f"external_ids:iface-id={lsp_name}")
        except BaseException:
            self.del_vm_port(iface, check=False)
            raise
        return port

    def del_vm_port(self, iface: str, check: bool = True) -> None:
        """Removes VM port 'iface' from br-int and deletes its veth and the
        VM's namespace."""
        port = self.ports.pop(iface, None)
        if port is None:
            if check:
                raise KeyError(f"{self.name}: no VM port {iface}")
            return
        try:
            if self.ovs and self.ovs.alive("ovsdb-server"):
                self.ovs.vsctl_try("--if-exists", "del-port", "br-int", iface)
        finally:
            self.netns.run(["ip", "link", "del", iface], check=False)
            port.ns.delete()

    # -- health and logs ------------------------------------------------------

    def assert_healthy(self) -> None:
        """ovn-controller, ovs-vswitchd and ovsdb-server run and logged no
        ERR/EMER (except lines matching self.log_ignore)."""
        self.ovs.assert_healthy(self.log_ignore)
        _assert_daemons_healthy([self.controller], self.log_ignore)

    def save_logs(self, dest: Path) -> None:
        _save_logs(self.dir, dest)


# ---------------------------------------------------------------------------
# The PAC agent.

AGENT = TOP / "ovn-config" / "ovs-pac-agent"
AGENT_PYTHON = "/usr/bin/python3"   # Debian's, which has python3-openvswitch.


class PacAgent(Started):
    """ovn-config/ovs-pac-agent on chassis 'chassis': its OVS database, the
    central's SB (through the chassis's ovn-remote, as in production, or
    --ovnsb-db='sb_remote') and, with 'nb', the NB for logical switch keys
    (--ovnnb-db='nb_remote', by default the central's); 'ssl' is (private
    key, certificate, CA certificate) for ssl: remotes.  On a host without
    OVN (port profiles only), 'chassis' is anything with the attributes
    ovs, dir and build (agent_host()), and 'nb' false.

    Use as a context manager, or call start() and, always, close()."""

    def __init__(self, chassis: Chassis, nb: bool = True,
                 nb_remote: Optional[str] = None,
                 sb_remote: Optional[str] = None,
                 ssl: Optional[tuple[Path, Path, Path]] = None,
                 name: str = "ovs-pac-agent", extra: Sequence[str] = ()):
        self.chassis = chassis
        # The port profiles file (--profiles): in the chassis's directory,
        # never the host's /etc/ovs-pac/profiles.conf; absent until
        # write_profiles().  A second agent ('name') has its own, and its
        # own pidfile, control socket and log.
        self.profiles = chassis.dir / (
            "profiles.conf" if name == "ovs-pac-agent"
            else f"{name}.profiles.conf")
        args = [AGENT_PYTHON, str(AGENT), f"--ovs-db={chassis.ovs.db_sock}",
                f"--profiles={self.profiles}"]
        if nb:
            args.append(f"--ovnnb-db={nb_remote or chassis.central.nb_remote}")
        if sb_remote:
            args.append(f"--ovnsb-db={sb_remote}")
        if ssl:
            key, cert, ca_cert = ssl
            args += [f"--private-key={key}", f"--certificate={cert}",
                     f"--ca-cert={ca_cert}"]
        args += list(extra)
        self.daemon = Daemon(name, chassis.dir, args,
                             dict(chassis.ovs.env), chassis.build.bin(
                                 "ovs-appctl"))
        self.log_ignore: list[str] = []

    def start(self) -> "PacAgent":
        self.daemon.start()
        return self

    def close(self) -> None:
        self.daemon.stop()

    def restart(self) -> None:
        self.daemon.stop()
        self.daemon.start()

    def write_profiles(self, text: str) -> None:
        """Replaces the profiles file (atomically, as an editor that renames
        would)."""
        tmp = self.profiles.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.rename(self.profiles)

    def show(self) -> str:
        """ovs-appctl pac-agent/show."""
        return self.daemon.appctl("pac-agent/show") or ""

    def log(self) -> str:
        return self.daemon.log_path.read_text(errors="replace")

    def assert_healthy(self) -> None:
        """It runs, logged no ERR/EMER, and no transaction of its failed."""
        _assert_daemons_healthy([self.daemon], self.log_ignore)
        failed = [line for line in self.log().splitlines()
                  if "| WARN | transaction:" in line]
        assert not failed, "ovs-pac-agent: " + "\n".join(failed[:10])


def agent_host(ovs: Ovs, workdir: Path, build: OvsBuild) -> "SimpleNamespace":
    """What PacAgent needs of a host without OVN (no ovn-remote): its OVS,
    a directory for the agent's files, the build."""
    return SimpleNamespace(ovs=ovs, dir=workdir, build=build, name="host")

"""libvirtd and qemu guests beside the test's private Open vSwitch.

  Libvirtd     Debian's libvirtd (9.0), started by the test in the network
               namespace of the test's ovs-vswitchd (so the taps libvirt
               makes are there, as is the netdev bridge's own device) and in
               a private mount namespace where
                 /run                 is a fresh tmpfs, with
                 /run/openvswitch     the test's OVS run directory: the
                                      'ovs-vsctl' libvirtd runs from PATH
                                      (default database
                                      unix:/var/run/openvswitch/db.sock)
                                      reaches the test's ovsdb-server,
                                      never the system's;
                 /etc/libvirt, /var/lib/libvirt, /var/cache/libvirt,
                 /var/log/libvirt     private directories of the test;
                 /etc/passwd, /etc/group
                                      copies with the user and group
                                      libvirt-qemu, which libvirtd looks
                                      up before it reads qemu.conf
                                      (libvirt-daemon-system, not
                                      installed, would add them).
               Its socket is in the test's directory (unix_sock_dir), so
               virsh runs anywhere with Libvirtd.uri.  qemu runs as root,
               without libvirt's security driver, cgroups or /dev namespace
               (there is no systemd here).
  VmGuest      one transient domain (virsh create): the guest of guest.py
               (kernel + initramfs, TCG), its serial console in a file,
               one virtio NIC on a tap port of a netdev bridge
               (<interface type='bridge'> with <virtualport
               type='openvswitch'>); commands run in the guest over its
               command server (TCP port 7000, guest/init) from a host
               namespace.

Nothing here touches the host's network namespace or libvirt's system
directories: everything libvirtd writes is under the test's directory.
"""

from __future__ import annotations

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
from xml.sax.saxutils import quoteattr

from .dpdk_env import DpdkTopology, Hugepages
from .guest import Guest
from .ovs_env import (PREFIX, Netns, Ovs, OvsBuild, Topology, TransferResult,
                      XFER_SCRIPT, _owner_dead, log_tail, run, wait_until)

LIBVIRTD = "/usr/sbin/libvirtd"
VIRSH = "/usr/bin/virsh"
QEMU = "/usr/bin/qemu-system-x86_64"
CONTROL_PORT = 7000

# Mounts of the private mount namespace (see the top comment); $W is the
# test's libvirt directory, $OVS the test's OVS run directory.
START_SCRIPT = """\
set -e
mount -t tmpfs ovspac-run /run
mkdir -p /run/openvswitch /run/lock
mount --bind "$OVS" /run/openvswitch
mount --bind "$W/passwd" /etc/passwd
mount --bind "$W/group" /etc/group
for d in /etc/libvirt /var/lib/libvirt /var/cache/libvirt /var/log/libvirt; do
    mkdir -p "$d" "$W$d"
    mount --bind "$W$d" "$d"
done
exec {libvirtd} --config "$W/etc/libvirt/libvirtd.conf" \\
    --pid-file "$W/libvirtd.pid"
""".format(libvirtd=LIBVIRTD)

LIBVIRTD_CONF = """\
unix_sock_dir = "{sock}"
unix_sock_rw_perms = "0700"
auth_unix_rw = "none"
auth_unix_ro = "none"
log_outputs = "3:file:{log}"
"""

QEMU_CONF = """\
user = "root"
group = "root"
dynamic_ownership = 0
remember_owner = 0
security_driver = "none"
namespaces = [ ]
cgroup_controllers = [ ]
stdio_handler = "file"
"""


def missing_programs() -> list[str]:
    """What tests/vm needs and this machine lacks (tools/install-deps
    installs all of it)."""
    missing = [p for p in (LIBVIRTD, VIRSH, QEMU)
               if not os.access(p, os.X_OK)]
    if not shutil.which("ovs-vsctl"):
        missing.append("ovs-vsctl in PATH (openvswitch-common), which "
                       "libvirtd runs")
    if not shutil.which("unshare"):
        missing.append("unshare (util-linux)")
    return missing


class Libvirtd:
    def __init__(self, workdir: Path, ovs: Ovs, netns: Optional[Netns]):
        self.dir = workdir
        self.ovs = ovs
        self.netns = netns
        self.sock_dir = workdir / "sock"
        self.uri = f"qemu:///system?socket={self.sock_dir}/libvirt-sock"
        self.log = workdir / "libvirtd.log"
        self.proc: Optional[subprocess.Popen] = None

    def start(self, timeout: float = 60) -> "Libvirtd":
        etc = self.dir / "etc" / "libvirt"
        etc.mkdir(parents=True, exist_ok=True)
        self.sock_dir.mkdir(exist_ok=True)
        (etc / "libvirtd.conf").write_text(LIBVIRTD_CONF.format(
            sock=self.sock_dir, log=self.log))
        (etc / "qemu.conf").write_text(QEMU_CONF)
        self._write_accounts()
        script = self.dir / "start-libvirtd.sh"
        script.write_text(START_SCRIPT)
        cmd = ["unshare", "--mount", "--propagation", "private", "sh",
               str(script)]
        if self.netns:
            cmd = self.netns.cmd(cmd)
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
               "W": str(self.dir), "OVS": str(self.ovs.dir),
               "LC_ALL": "C"}
        with open(self.dir / "libvirtd.stderr", "wb") as err:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                         stdout=err, stderr=err, env=env,
                                         start_new_session=True)

        def up() -> bool:
            if self.proc.poll() is not None:
                raise RuntimeError(f"libvirtd exited with status "
                                   f"{self.proc.returncode}:\n"
                                   f"{self.tail()}")
            return self.virsh_try("version").returncode == 0
        wait_until(up, timeout, 0.5, "libvirtd's socket")
        return self

    def _write_accounts(self) -> None:
        """Copies of /etc/passwd and /etc/group with libvirt-qemu added."""
        for name, line in (("passwd", "libvirt-qemu:x:{id}:{id}:Libvirt "
                            "Qemu:/var/lib/libvirt:/usr/sbin/nologin\n"),
                           ("group", "libvirt-qemu:x:{id}:\n")):
            text = Path(f"/etc/{name}").read_text()
            if not any(l.startswith("libvirt-qemu:")
                       for l in text.splitlines()):
                used = {int(l.split(":")[2]) for l in text.splitlines()
                        if l.count(":") >= 3 and l.split(":")[2].isdigit()}
                free = next(i for i in range(64055, 65000) if i not in used)
                text += line.format(id=free)
            (self.dir / name).write_text(text)

    def virsh_try(self, *args: str,
                  timeout: float = 60) -> subprocess.CompletedProcess:
        return run([VIRSH, "-q", "-c", self.uri, *args], check=False,
                   timeout=timeout)

    def virsh(self, *args: str, timeout: float = 60) -> str:
        """virsh ARGS against this libvirtd; raises CommandError."""
        return run([VIRSH, "-q", "-c", self.uri, *args],
                   timeout=timeout).stdout.strip()

    def net_create(self, xml: str, name: str) -> None:
        """A transient network (virsh net-create)."""
        path = self.dir / f"net-{name}.xml"
        path.write_text(xml)
        self.virsh("net-create", str(path))

    def domains(self) -> list[str]:
        out = self.virsh_try("list", "--all", "--name").stdout
        return [d for d in out.split() if d]

    def tail(self, n: int = 30) -> str:
        return log_tail((self.log, self.dir / "libvirtd.stderr"), n)

    def stop(self) -> None:
        """Destroys every domain, then stops libvirtd (SIGTERM, then
        SIGKILL)."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            for dom in self.domains():
                self.virsh_try("destroy", dom, timeout=30)
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None
        # A qemu that outlived libvirtd (it runs detached) goes too: ours
        # name a console file in this directory on their command line.
        for pid in self.qemu_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def qemu_pids(self) -> list[int]:
        """The qemu processes of this libvirtd's guests."""
        pids = []
        for p in Path("/proc").iterdir():
            if not p.name.isdigit():
                continue
            try:
                argv = (p / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv and argv[0].endswith(b"qemu-system-x86_64") and any(
                    str(self.dir).encode() in a for a in argv):
                pids.append(int(p.name))
        return pids


def cleanup_stale_libvirt() -> list[str]:
    """Kills the libvirtd and qemu processes of earlier test runs that no
    longer run (their command lines name a /tmp/ovspac-<pid>-... directory
    whose pid is dead); ovs_env.cleanup_stale() then removes the
    directories."""
    killed = []
    pat = re.compile(rf"{re.escape(tempfile.gettempdir())}/"
                     rf"({PREFIX}-\d+-[^/]*)/")
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            argv = (p / "cmdline").read_bytes().decode(
                errors="replace").split("\0")
        except OSError:
            continue
        if not argv or not argv[0].endswith(("libvirtd",
                                             "qemu-system-x86_64")):
            continue
        for arg in argv:
            m = pat.search(arg)
            if m and _owner_dead(m.group(1)):
                try:
                    os.kill(int(p.name), signal.SIGKILL)
                    killed.append(f"process {p.name} ({argv[0]})")
                except ProcessLookupError:
                    pass
                break
    return killed


# ---------------------------------------------------------------------------
# Guests.

# What every test NIC has: virtio without the offloads the userspace
# datapath does not take (TSO, checksum offload), no option ROM (no iPXE
# here).
NIC_TAIL = """\
      <model type='virtio'/>
      <driver name='qemu'>
        <host csum='off' gso='off' tso4='off' tso6='off' ecn='off' ufo='off'/>
        <guest csum='off' tso4='off' tso6='off' ecn='off' ufo='off'/>
      </driver>
      <rom enabled='no'/>
    </interface>
"""


def _parameters(parameters: Optional[dict[str, str]]) -> str:
    return "".join(f" {k}={quoteattr(v)}" for k, v in
                   (parameters or {}).items())


def interface_xml(bridge: str, mac: str, target: str,
                  parameters: Optional[dict[str, str]] = None) -> str:
    """A NIC on OVS bridge 'bridge', tap port 'target', with the
    <virtualport type='openvswitch'> 'parameters' (interfaceid,
    profileid)."""
    return f"""\
    <interface type='bridge'>
      <mac address='{mac}'/>
      <source bridge={quoteattr(bridge)}/>
      <virtualport type='openvswitch'>
        <parameters{_parameters(parameters)}/>
      </virtualport>
      <target dev={quoteattr(target)}/>
""" + NIC_TAIL


def vhostuser_interface_xml(socket: Path, mac: str) -> str:
    """A virtio NIC whose backend is vhost-user over 'socket', qemu the
    server (the OVS port is a dpdkvhostuserclient with
    options:vhost-server-path='socket'); the guest needs shared memory
    (VmGuest shared_memory).  OVS's vhost-user backend offers no checksum
    or TSO offload unless userspace-tso-enable is set, so none is turned
    off here."""
    return f"""\
    <interface type='vhostuser'>
      <mac address='{mac}'/>
      <source type='unix' path={quoteattr(str(socket))} mode='server'/>
      <model type='virtio'/>
      <rom enabled='no'/>
    </interface>
"""


def network_interface_xml(network: str, portgroup: Optional[str], mac: str,
                          target: str) -> str:
    """A NIC on libvirt network 'network' (network_xml()), in
    'portgroup'."""
    group = f" portgroup={quoteattr(portgroup)}" if portgroup else ""
    return f"""\
    <interface type='network'>
      <mac address='{mac}'/>
      <source network={quoteattr(network)}{group}/>
      <target dev={quoteattr(target)}/>
""" + NIC_TAIL


def network_xml(name: str, bridge: str,
                portgroups: dict[str, dict[str, str]]) -> str:
    """A libvirt network over OVS bridge 'bridge' (forward mode='bridge',
    <virtualport type='openvswitch'>), with portgroups carrying
    virtualport parameters (e.g. {"pac": {"profileid": "incast"}})."""
    groups = "".join(f"""\
  <portgroup name={quoteattr(group)}>
    <virtualport type='openvswitch'>
      <parameters{_parameters(params)}/>
    </virtualport>
  </portgroup>
""" for group, params in portgroups.items())
    return f"""\
<network>
  <name>{name}</name>
  <forward mode='bridge'/>
  <bridge name={quoteattr(bridge)}/>
  <virtualport type='openvswitch'/>
{groups}</network>
"""


class VmGuest:
    """A transient libvirt domain running the guest of guest.py."""

    def __init__(self, libvirtd: Libvirtd, guest: Guest, name: str,
                 ip: str, interfaces: Sequence[str], memory_mib: int = 256,
                 shared_memory: bool = False, cmdline: str = ""):
        self.libvirtd = libvirtd
        self.guest = guest
        self.name = name
        self.ip = ip.split("/")[0]
        self.cidr = ip
        self.interfaces = list(interfaces)
        self.memory_mib = memory_mib
        # Guest memory in a memfd shared with the vhost-user backend.
        self.shared_memory = shared_memory
        self.cmdline = cmdline      # More kernel command line.
        self.console = libvirtd.dir / f"{name}.console"

    def xml(self) -> str:
        return f"""\
<domain type='qemu'>
  <name>{self.name}</name>
  <memory unit='MiB'>{self.memory_mib}</memory>
{self._memory_backing()}  <vcpu>1</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>{self.guest.kernel}</kernel>
    <initrd>{self.guest.initrd}</initrd>
    <cmdline>console=ttyS0 quiet pac.ip={self.cidr} {self.cmdline}</cmdline>
  </os>
  <features><acpi/></features>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>{QEMU}</emulator>
{''.join(self.interfaces)}    <serial type='file'>
      <source path='{self.console}'/>
      <target port='0'/>
    </serial>
    <video><model type='none'/></video>
    <memballoon model='none'/>
  </devices>
</domain>
"""

    def _memory_backing(self) -> str:
        if not self.shared_memory:
            return ""
        return ("  <memoryBacking>\n    <source type='memfd'/>\n"
                "    <access mode='shared'/>\n  </memoryBacking>\n")

    def start(self, timeout: float = 120) -> "VmGuest":
        """virsh create; waits for the guest's "PAC-GUEST-READY" line."""
        path = self.libvirtd.dir / f"{self.name}.xml"
        path.write_text(self.xml())
        self.libvirtd.virsh("create", str(path))
        self.wait_console("PAC-GUEST-READY", timeout)
        return self

    def console_text(self) -> str:
        try:
            return self.console.read_text(errors="replace")
        except OSError:
            return ""

    def wait_console(self, text: str, timeout: float) -> None:
        try:
            wait_until(lambda: text in self.console_text(), timeout, 0.5,
                       f"'{text}' on {self.name}'s console")
        except TimeoutError as e:
            raise AssertionError(
                f"{e}; console:\n{self.console_text()[-3000:]}\n"
                f"{self.libvirtd.tail()}") from None

    def state(self) -> str:
        p = self.libvirtd.virsh_try("domstate", self.name)
        return p.stdout.strip() if p.returncode == 0 else "gone"

    def sh(self, script: str, via: Netns, timeout: float = 60) -> str:
        """Runs 'script' in the guest's shell (its command server), from
        namespace 'via'; returns its output."""
        code = ("import socket,sys\n"
                f"s=socket.create_connection(({self.ip!r},{CONTROL_PORT}),"
                f"timeout={timeout})\n"
                "s.sendall(sys.stdin.buffer.read());s.shutdown(1)\n"
                "b=b''\n"
                "while True:\n"
                " d=s.recv(65536)\n"
                " if not d: break\n"
                " b+=d\n"
                "sys.stdout.buffer.write(b)\n")
        proc = subprocess.run(via.cmd([sys.executable, "-c", code]),
                              input=script.encode(), capture_output=True,
                              timeout=timeout + 5)
        if proc.returncode != 0:
            raise RuntimeError(f"command to guest {self.name} failed: "
                               f"{proc.stderr.decode(errors='replace')}")
        return proc.stdout.decode(errors="replace")

    def netstat(self, via: Netns) -> dict[str, int]:
        """The guest's TcpExt and Tcp counters (/proc/net/netstat and
        /proc/net/snmp), as 'TcpExt.<name>' / 'Tcp.<name>'."""
        out = self.sh("cat /proc/net/netstat /proc/net/snmp\n", via)
        counters: dict[str, int] = {}
        lines = out.splitlines()
        for head, vals in zip(lines[::2], lines[1::2]):
            hk, _, hnames = head.partition(":")
            vk, _, vvalues = vals.partition(":")
            if hk != vk or hk not in ("TcpExt", "Tcp"):
                continue
            for n, v in zip(hnames.split(), vvalues.split()):
                counters[f"{hk}.{n}"] = int(v)
        return counters

    def receive_start(self, src: Netns, nbytes: int, port: int = 5001,
                      idle_timeout: float = 30) -> subprocess.Popen:
        """Starts a TCP transfer of 'nbytes' random bytes from namespace
        'src' (tcp_xfer.py send) into the guest (xfer recv, its output in
        the guest's /tmp/xfer-PORT.out); returns the sender."""
        # A file of its own, created afresh: a receiver left from an
        # earlier transfer (its sender killed while the guest's NIC was
        # detached) finishes when its peer's FIN gets through, and would
        # otherwise write its short result into this transfer's file.
        out = _xfer_out(port)
        self.sh(f"rm -f {out}\n"
                f"xfer recv --bind {self.ip} --port {port} --idle-timeout "
                f"{idle_timeout} > {out} 2>&1 &\n"
                f"n=0; while ! grep -q READY {out} && [ $n -lt 100 ];"
                " do usleep 50000; n=$((n+1)); done\n", src)
        return subprocess.Popen(src.cmd([
            sys.executable, str(XFER_SCRIPT), "send", "--host", self.ip,
            "--port", str(port), "--bytes", str(nbytes),
            "--idle-timeout", str(idle_timeout)]),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)

    def receive(self, src: Netns, nbytes: int, port: int = 5001,
                idle_timeout: float = 30,
                timeout: float = 180) -> TransferResult:
        """A checked TCP transfer of 'nbytes' random bytes from namespace
        'src' (tcp_xfer.py send) into the guest (xfer recv)."""
        send = self.receive_start(src, nbytes, port, idle_timeout)
        try:
            out, err = send.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            send.kill()
            out, err = send.communicate()
        sender = _json_line(out, "send", err)
        out = ""
        for _ in range(50):
            out = self.sh(f"cat {_xfer_out(port)}\n", src)
            if "\"role\"" in out:
                break
            time.sleep(0.2)
        receiver = _json_line(out, "recv", "")
        return TransferResult(nbytes, sender, receiver)

    def destroy(self) -> None:
        self.libvirtd.virsh_try("destroy", self.name)


def _xfer_out(port: int) -> str:
    """The guest file where the receiver on 'port' writes its result."""
    return f"/tmp/xfer-{port}.out"


def _json_line(out: str, role: str, err: str) -> dict:
    for line in reversed(out.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {"role": role, "error": "no result", "bytes": -1,
            "stdout": out, "stderr": err}


# ---------------------------------------------------------------------------
# Topology.

class _LibvirtdTopology:
    """What a topology with a private libvirtd ('self.libvirtd', None until
    set up) adds to its base's logs and teardown."""

    libvirtd: Optional[Libvirtd]

    def save_logs(self, dest: Path) -> None:
        super().save_logs(dest)
        if self.libvirtd:
            _save_libvirt_logs(self.libvirtd, dest)

    def teardown(self) -> None:
        if self.libvirtd:
            self.libvirtd.stop()
        super().teardown()


class VmTopology(_LibvirtdTopology, Topology):
    """Namespaces "sw" (ovs-vswitchd with br0, datapath_type=netdev, and
    libvirtd) and "peer" (10.0.0.1, port peer-p); guests join br0 on tap
    ports that libvirtd makes and plugs (ovs-vsctl)."""

    GUEST_IP = "10.0.0.2"

    def __init__(self, build: OvsBuild, image: Guest):
        super().__init__(build)
        self.image = image
        self.libvirtd: Optional[Libvirtd] = None
        self.guests: list[VmGuest] = []

    def setup(self) -> "VmTopology":
        sw = self._netns("sw")
        self.sw = sw
        self.ovs = Ovs(self.build, self.workdir, sw)
        self.ovs.start()
        self.ovs.vsctl("add-br", "br0", "--", "set", "Bridge", "br0",
                       "datapath_type=netdev")
        self.peer = self._host("peer", self.PEER_IP, "peer-p")
        self.ovs.ofctl("del-flows", "br0")
        self.ovs.ofctl("add-flow", "br0", "actions=NORMAL")
        # libvirt adds a tap to the bridge before it sets it up: the
        # userspace datapath's first read of it fails.
        self.log_ignore.append(r"dpif_netdev\|ERR\|error receiving data "
                               r"from \S+: Network is down")
        libvirt_dir = self.workdir / "libvirt"
        libvirt_dir.mkdir()
        self.libvirtd = Libvirtd(libvirt_dir, self.ovs, sw).start()
        return self

    def guest(self, name: str, interfaces: Sequence[str],
              ip: Optional[str] = None, start: bool = True,
              shared_memory: bool = False) -> VmGuest:
        """A guest on 'interfaces' (interface_xml()), 10.0.0.2/24 by
        default; started (and waited for) unless 'start' is false."""
        g = VmGuest(self.libvirtd, self.image, name,
                    ip or f"{self.GUEST_IP}/24", interfaces,
                    shared_memory=shared_memory)
        self.guests.append(g)
        return g.start() if start else g

    def ping_guest(self, guest: VmGuest, timeout: float = 30) -> None:
        """Waits until the peer reaches the guest (ARP and MAC learning
        done)."""
        def ok() -> bool:
            return self.peer.ns.run(["ping", "-c", "1", "-W", "1",
                                     guest.ip], check=False).returncode == 0
        try:
            wait_until(ok, timeout, 0.2, f"ping {guest.ip}")
        except TimeoutError as e:
            raise AssertionError(
                f"{e}; console of {guest.name}:\n"
                f"{guest.console_text()[-2000:]}") from None


class VhostVmTopology(_LibvirtdTopology, DpdkTopology):
    """DpdkTopology (ovs-vswitchd with DPDK, --no-pci, a private
    hugetlbfs, one PMD thread, in namespace "sw") with the peer
    (10.0.0.1) on a net_af_packet port "up0" and libvirtd beside it, for
    guests on dpdkvhostuserclient ports: add_vhost_port() makes the OVS
    port (as whoever plugs a vhost-user VM does; libvirt only looks it
    up), vhost_guest() the guest."""

    GUEST_IP = VmTopology.GUEST_IP

    def __init__(self, build: OvsBuild, image: Guest, hugepages: Hugepages):
        super().__init__(build, hugepages, pmd_cpu_mask="0x1",
                         socket_limit_mb=256)
        self.image = image
        self.libvirtd: Optional[Libvirtd] = None
        self.guests_vm: list[VmGuest] = []
        self.peer = None

    def setup(self) -> "VhostVmTopology":
        super().setup()
        # A guest destroyed or shut down closes its end of the vhost-user
        # socket, which DPDK logs at ERR.
        self.log_ignore += [
            r"dpdk\|ERR\|VHOST_CONFIG: \(\S+\) recvmsg failed on fd \d+ "
            r"\(Connection reset by peer\)",
            r"dpdk\|ERR\|VHOST_CONFIG: \(\S+\) vhost read message failed",
        ]
        self.peer = self.add_af_packet_host("peer", VmTopology.PEER_IP,
                                            "up0")
        libvirt_dir = self.workdir / "libvirt"
        libvirt_dir.mkdir()
        self.libvirtd = Libvirtd(libvirt_dir, self.ovs, self.sw).start()
        return self

    def add_vhost_port(self, port: str, *columns: str) -> Path:
        """dpdkvhostuserclient port 'port' on br0 (more Interface settings
        in 'columns'); returns the socket path qemu serves."""
        sock = self.workdir / f"{port}.sock"
        self.ovs.vsctl("add-port", "br0", port, "--", "set", "Interface",
                       port, "type=dpdkvhostuserclient",
                       f"options:vhost-server-path={sock}", *columns,
                       timeout=30)
        return sock

    def vhost_guest(self, name: str, sock: Path, mac: str) -> VmGuest:
        """A guest on the vhost-user socket 'sock'.  Its kernel runs with
        pci=nomsi: qemu 7.2 under TCG (no KVM irqfd) crashes in
        msix_set_vector_notifiers() when vhost-user starts on a device
        whose guest enabled MSI-X; with INTx it runs."""
        g = VmGuest(self.libvirtd, self.image, name, f"{self.GUEST_IP}/24",
                    [vhostuser_interface_xml(sock, mac)],
                    shared_memory=True, cmdline="pci=nomsi")
        self.guests_vm.append(g)
        return g.start()

    def ping_guest(self, guest: VmGuest, timeout: float = 30) -> None:
        VmTopology.ping_guest(self, guest, timeout)   # Uses self.peer only.


def _save_libvirt_logs(libvirtd: Libvirtd, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for p in list(libvirtd.dir.glob("*.console")) + [
            libvirtd.log, libvirtd.dir / "libvirtd.stderr"]:
        if p.exists():
            shutil.copy(p, dest / p.name)
    qlogs = libvirtd.dir / "var" / "log" / "libvirt" / "qemu"
    for p in qlogs.glob("*.log") if qlogs.exists() else []:
        shutil.copy(p, dest / f"qemu-{p.name}")

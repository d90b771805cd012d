"""The incast testbed with the receiver a libvirt guest: a real guest
kernel (qemu TCG) behind PAC instead of a network namespace.

    sender hosts       ToR (Linux bridge)                hypervisor (ovs-vswitchd, libvirtd)            guest
    ns snd1 ... ==== br-tor ─ uplink ==veth== up-p ─ br0 (netdev, NORMAL) ─ vm-p ==tap== qemu ─ virtio eth0
                        tbf on "uplink"                  LOCAL: 10.1.0.254 (commands)

Everything of testbed.incast_testbed stays (senders, ToR bottleneck, the
incast servers, RESULT lines, PAC on the VM's port vm-p); what changes is
the VM: a transient libvirt domain (testbed.libvirt_env: libvirtd in the
hypervisor's namespace with a private mount namespace, so the ovs-vsctl it
runs reaches the testbed's OVS) booting the guest of testbed.guest (Debian's
cloud kernel, busybox, a static tools/incast-app), one vCPU, with a virtio NIC
on tap port vm-p of br0: <interface type='bridge'> with <virtualport
type='openvswitch'>, which libvirt adds to the bridge itself.  The incast
client runs inside the guest, so its vm_timeouts are the guest kernel's
own TcpExt TCPTimeouts.

The testbed drives the guest over its command server (TCP port 7000) from
the hypervisor's namespace, through br0's own port (LOCAL, 10.1.0.254):
the commands and the client's output never cross the ToR's bottleneck.

A TCG guest cannot sink 1 Gbit/s: tools/incast --vm scales the bottleneck
down to VM_RATE_MBIT with the buffer/BDP ratio of the other sweeps
(docs/benchmarks.md, "Into a libvirt guest").
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Optional

from .guest import Guest, build as build_guest
from .incast_testbed import PREFIXLEN, VM_IP, VM_PORT, Testbed
from .libvirt_env import Libvirtd, VmGuest, interface_xml
from .ovs_env import wait_until

# The bottleneck of `tools/incast --vm` unless --rate says otherwise, and
# its buffer (rate x 100 bytes per Mbit/s, as 1 Gbit/s / 100 KB and
# 500 Mbit/s / 50 KB): about half of what a TCG guest sank here with a
# deep buffer (docs/benchmarks.md), so that the ToR's port, not the guest,
# is the bottleneck.
VM_RATE_MBIT = 100.0
VM_BUFFER_BYTES_PER_MBIT = 100

GUEST_NAME = "pacvm-incast"
GUEST_MAC = "52:54:00:01:00:02"
# Enough for the client's sockets at a few hundred connections.
GUEST_MEMORY_MIB = 512
HV_IP = "10.1.0.254"        # br0's own port: the testbed's command path.
GUEST_JSON = "/tmp/incast.json"


class VmTestbed(Testbed):
    """testbed.incast_testbed.Testbed whose VM is a libvirt guest (see
    the module's comment).  Use as a context manager, or call setup()
    and close()."""
    __test__ = False            # Not a pytest test class.

    def __init__(self, *args, image: Optional[Guest] = None, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.cfg.vm:
            raise ValueError("VmTestbed: TestbedConfig.vm must be set")
        if self.cfg.ovn or self.cfg.pmd:
            raise ValueError("VmTestbed: not with OVN or a PMD thread")
        if self.cfg.vm_rto_min_ms:
            raise ValueError("VmTestbed: the guest's RTOmin is its own "
                             "(vm_rto_min_ms: a namespace VM only)")
        self.image = image
        self.libvirtd: Optional[Libvirtd] = None
        self.guest: Optional[VmGuest] = None

    def switch_description(self) -> str:
        release = self.image.release if self.image else "?"
        return (f"OVS bridge br0 (NORMAL); the VM a libvirt guest (qemu "
                f"TCG, 1 vCPU, Linux {release}) on tap port {VM_PORT}")

    def _add_vm_link(self) -> None:
        """Nothing yet: libvirt makes the guest's tap and adds it to br0
        when the guest starts (_vm_up())."""

    def _switch_ports(self) -> tuple[str, ...]:
        return tuple(p for p in super()._switch_ports() if p != VM_PORT)

    def _vm_up(self) -> None:
        """Starts libvirtd and the guest on tap VM_PORT of br0, and gives
        br0's own port the address the commands come from."""
        if self.image is None:
            self.image = build_guest()
        self.hv.run(["ip", "addr", "add", f"{HV_IP}/{PREFIXLEN}",
                     "dev", "br0"])
        self.hv.run(["ip", "link", "set", "br0", "up"])
        libvirt_dir = self.workdir / "libvirt"
        libvirt_dir.mkdir()
        self.libvirtd = Libvirtd(libvirt_dir, self.ovs, self.hv).start()
        self.guest = VmGuest(self.libvirtd, self.image, GUEST_NAME,
                             f"{VM_IP}/{PREFIXLEN}",
                             [interface_xml("br0", GUEST_MAC, VM_PORT)],
                             memory_mib=GUEST_MEMORY_MIB)
        self.guest.start()
        wait_until(lambda: VM_PORT in self.ovs.vsctl("list-ports",
                                                     "br0").split(),
                   30, 0.2, f"libvirt adding {VM_PORT} to br0")

        def reachable() -> bool:
            return self.hv.run(["ping", "-c", "1", "-W", "1", VM_IP],
                               check=False).returncode == 0
        wait_until(reachable, 60, 0.2, f"ping {VM_IP} from the hypervisor")
        # The VM closes N connections per run: let it reuse ports.
        self._guest_sh("echo 1 > /proc/sys/net/ipv4/tcp_tw_reuse\n")

    def _guest_sh(self, script: str, timeout: float = 60) -> str:
        return self.guest.sh(script, self.hv, timeout)

    def _run_client(self, args: list[str], jfile: Path,
                    timeout: float) -> subprocess.CompletedProcess:
        """Runs the guest's /bin/incast client over its command server;
        its JSON result is copied into 'jfile'."""
        words = " ".join(["incast", "client", *args, "--json", GUEST_JSON])
        out = self._guest_sh(
            f"rm -f {GUEST_JSON}\n"
            f"{words} > /tmp/incast.out 2> /tmp/incast.err\n"
            "echo \"@@EXIT $?\"\ncat /tmp/incast.out\n"
            "echo @@STDERR\ncat /tmp/incast.err\n"
            f"echo @@JSON\ncat {GUEST_JSON} 2>/dev/null\n", timeout)
        m = re.search(r"^@@EXIT (\d+)\n(.*)^@@STDERR\n(.*)^@@JSON\n(.*)\Z",
                      out, re.S | re.M)
        if not m:
            raise RuntimeError(f"no result from the guest's incast client: "
                               f"{out[-2000:]!r}")
        jfile.write_text(m.group(4))
        return subprocess.CompletedProcess(words, int(m.group(1)),
                                           m.group(2), m.group(3))

    def _start_rpcs(self, wl) -> subprocess.Popen:
        raise ValueError("VmTestbed: RPCs (Workload.rpc_rps) run in a "
                         "namespace VM only")

    def set_rto_min(self, senders_ms: int, vm_ms=None) -> None:
        raise ValueError("VmTestbed: the guest's routes are its own")

    def vm_port_drops(self) -> int:
        out = self.hv.run(["ip", "-s", "link", "show", VM_PORT]).stdout
        # The line after "TX: bytes packets errors dropped ...".
        m = re.search(r"TX:[^\n]*\n\s*\d+\s+\d+\s+\d+\s+(\d+)", out)
        return int(m.group(1)) if m else 0

    def close(self) -> None:
        """Destroys the guest and stops libvirtd, then the testbed."""
        try:
            if self.libvirtd:
                self.libvirtd.stop()
        finally:
            super().close()

    def save_logs(self, dest: Path) -> None:
        super().save_logs(dest)
        if self.libvirtd:
            for p in [self.libvirtd.log, *self.libvirtd.dir.glob(
                    "*.console")]:
                if p.exists():
                    (dest / p.name).write_bytes(p.read_bytes())

"""A libvirt guest (real guest kernel, qemu TCG) on a dpdkvhostuserclient
port of OVS-DPDK (hugepages, --no-pci; the guest's memory a shared memfd):
a checked TCP transfer into the guest through PAC, ACKs held and released,
nothing left held and no mbuf leaked; then the guest is destroyed while
PAC is on, and the port, its PAC instance and its mbufs stay sound."""

from __future__ import annotations

from testbed.libvirt_env import VhostVmTopology
from testbed.ovs_env import (PAC_HOLD_LONE_TRANSFER, pac_released,
                              wait_until)
from vm_checks import live_held, wait_holding

MB = 1000 * 1000
PORT = "vhu0"
MAC = "52:54:00:00:00:22"


def wait_mempool(topo: VhostVmTopology, baseline: int,
                 timeout: float = 15) -> None:
    last = [0]

    def back() -> bool:
        last[0] = topo.mempool_in_use(PORT)
        return last[0] <= baseline
    try:
        wait_until(back, timeout, 0.5, "mempool in-use count")
    except TimeoutError:
        raise AssertionError(f"mbuf leak: {last[0]} mbufs of {PORT}'s "
                             f"mempool in use, {baseline} before") from None


def test_vhostuser_guest_transfer_through_pac(vhost: VhostVmTopology) -> None:
    ovs = vhost.ovs
    sock = vhost.add_vhost_port(PORT)
    guest = vhost.vhost_guest("pacvm-vhost", sock, MAC)
    wait_until(lambda: ovs.iface_status(PORT).get("mode") == "client"
               and ovs.get_columns("Interface", PORT, "link_state")[
                   "link_state"] == "up", 30, 0.3, f"{PORT} connected")
    # libvirt found the port by its socket (ovs-vsctl in its private
    # /run/openvswitch): the domain's interface is named after it.
    assert PORT in vhost.libvirtd.virsh("domiflist", guest.name)
    vhost.ping_guest(guest)

    baseline = vhost.mempool_in_use(PORT)
    ovs.pac_enable(PORT, threshold=20000, **PAC_HOLD_LONE_TRANSFER)
    wait_until(lambda: ovs.iface_status(PORT).get("pac") == "enabled", 15,
               0.3, f"PAC enabled on {PORT}")
    before = guest.netstat(vhost.peer.ns)
    nbytes = 8 * MB
    guest.receive(vhost.peer.ns, nbytes).assert_exact()
    stats = ovs.wait_pac_stats(
        PORT, lambda s: s.get("pac_tx_held", 0) > 0 and pac_released(s) > 0
        and s.get("pac_rx_bytes", 0) >= nbytes and s.get("pac_held") == 0,
        timeout=20)
    assert stats["pac_tx_held"] == pac_released(stats) + stats["pac_stale_drops"]
    after = guest.netstat(vhost.peer.ns)
    assert after["TcpExt.TCPTimeouts"] == before["TcpExt.TCPTimeouts"], (
        before, after)
    print(f"pac/show {PORT}:\n{ovs.pac_show(PORT)}")

    # Destroyed while PAC holds the guest's ACKs: the port stays, nothing
    # stays held (the held ACKs left, or were freed), PAC can be removed
    # and no mbuf is left.  PAC holds an ACK while the data it let go
    # earlier is on its way; from an unshaped peer all of it reaches the
    # port long before the (TCG) guest acknowledges, so an ACK is rarely
    # held.  A tiny threshold, and the peer's data paced
    # at 8 Mbit/s (half the guest's pace) with a deep tbf queue, keep
    # data on its way and most ACKs held.
    vhost.peer.ns.run(["tc", "qdisc", "replace", "dev", "eth0", "root",
                       "tbf", "rate", "8mbit", "burst", "4500",
                       "limit", "1000000"])
    ovs.pac_set(ovs.pac_uuid(PORT), threshold=3000, max_hold=150000)
    sender = guest.receive_start(vhost.peer.ns, 200 * MB)
    try:
        wait_holding(ovs, PORT)
        guest.destroy()
    finally:
        sender.kill()
        sender.communicate()
    wait_until(lambda: ovs.get_columns("Interface", PORT, "link_state")[
        "link_state"] == "down", 30, 0.3, f"{PORT} down")
    assert live_held(ovs, PORT) == 0
    ovs.pac_disable(PORT)
    wait_mempool(vhost, baseline)

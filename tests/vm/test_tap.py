"""A libvirt guest (real guest kernel, qemu TCG) on a tap port of a netdev
bridge: libvirt plugs it through the test's OVS, a checked TCP transfer
into the guest runs through PAC, and PAC holds and releases the guest's
ACKs."""

from __future__ import annotations

import time

from testbed.libvirt_env import VmTopology, interface_xml
from testbed.ovs_env import (PAC_HOLD_LONE_TRANSFER, pac_released,
                              wait_until)

MB = 1000 * 1000
TAP = "pvm0"
MAC = "52:54:00:00:00:02"



def test_tap_guest_transfer_through_pac(topo: VmTopology) -> None:
    guest = topo.guest("pacvm-tap", [interface_xml("br0", MAC, TAP)])
    ovs = topo.ovs

    # libvirt ran ovs-vsctl against the test's database (its private
    # /run/openvswitch) and wrote what it writes for an openvswitch
    # virtualport.
    ids = ovs.get_columns("Interface", TAP, "external_ids")["external_ids"]
    assert ids.get("attached-mac") == MAC, ids
    assert ids.get("iface-status") == "active", ids
    assert ids.get("vm-id") and ids.get("iface-id"), ids
    topo.ping_guest(guest)

    ovs.pac_enable(TAP, threshold=20000, **PAC_HOLD_LONE_TRANSFER)
    wait_until(lambda: ovs.iface_status(TAP).get("pac") == "enabled", 15,
               0.3, f"PAC enabled on {TAP}")
    before = guest.netstat(topo.peer.ns)

    nbytes = 8 * MB
    start = time.monotonic()
    result = guest.receive(topo.peer.ns, nbytes)
    result.assert_exact()
    print(f"{nbytes} bytes into the guest through PAC in "
          f"{time.monotonic() - start:.1f} s")

    stats = ovs.wait_pac_stats(
        TAP, lambda s: s.get("pac_tx_held", 0) > 0 and pac_released(s) > 0
        and s.get("pac_rx_bytes", 0) >= nbytes, timeout=20)
    print(f"pac_* of {TAP}: {stats}")
    after = guest.netstat(topo.peer.ns)
    # The guest's TCP counted the segments (GRO merges up to 64 KB).
    assert after["Tcp.InSegs"] - before["Tcp.InSegs"] >= nbytes // 65536, (
        before, after)
    # The guest's own TCP saw no retransmission timeout.
    assert after["TcpExt.TCPTimeouts"] == before["TcpExt.TCPTimeouts"], (
        before, after)

"""PAC from the domain's XML alone: a libvirt network over the OVS bridge
whose portgroup carries a profileid; libvirt writes it into the
Interface's external_ids:port-profile, and ovs-pac-agent (no OVN on this
host) applies the profile of its profiles file to the guest's port."""

from __future__ import annotations

from testbed.libvirt_env import (VmTopology, network_interface_xml,
                                 network_xml)
from testbed.ovn_env import PacAgent, agent_host
from testbed.ovs_env import pac_released, wait_until

MB = 1000 * 1000
TAP = "pvm1"
MAC = "52:54:00:00:00:12"
PROFILES = """\
[incast]
pac_threshold = 20000
pac_clamp_window = false
"""



def test_profileid_from_portgroup(topo: VmTopology) -> None:
    ovs = topo.ovs
    agent = PacAgent(agent_host(ovs, topo.workdir, topo.build), nb=False)
    try:
        agent.write_profiles(PROFILES)
        agent.start()
        topo.libvirtd.net_create(network_xml(
            "ovs-br0", "br0", {"pac-incast": {"profileid": "incast"}}),
            "ovs-br0")
        guest = topo.guest("pacvm-profile", [network_interface_xml(
            "ovs-br0", "pac-incast", MAC, TAP)])

        ids = ovs.get_columns("Interface", TAP,
                              "external_ids")["external_ids"]
        assert ids.get("port-profile") == "incast", ids
        wait_until(lambda: ovs.iface_status(TAP).get("pac") == "enabled",
                   15, 0.3, f"PAC enabled on {TAP} by the agent")
        uuid = ovs.pac_uuid(TAP)
        row = ovs.get_columns("PAC", uuid, "threshold", "external_ids")
        assert row["threshold"] == 20000, row
        assert row["external_ids"].get("ovs-pac-profile") == "incast", row
        assert ovs.get_columns("Interface", TAP, "external_ids")[
            "external_ids"].get("ovs-pac-status") == "enabled (profile incast)"
        assert f"interface {TAP}: on (pac from profile incast)" in \
            agent.show()

        topo.ping_guest(guest)
        nbytes = 4 * MB
        guest.receive(topo.peer.ns, nbytes).assert_exact()
        ovs.wait_pac_stats(
            TAP, lambda s: s.get("pac_tx_held", 0) > 0 and pac_released(s) > 0
            and s.get("pac_rx_bytes", 0) >= nbytes, timeout=20)

        # The guest goes: libvirt deletes its port, the row goes with it.
        guest.destroy()
        wait_until(lambda: not ovs.vsctl("--columns=_uuid", "list", "PAC"),
                   15, 0.3, "the PAC row gone with the guest's port")
        wait_until(lambda: TAP not in agent.show(), 15, 0.3,
                   f"{TAP} gone from pac-agent/show")
        agent.assert_healthy()
    finally:
        agent.close()

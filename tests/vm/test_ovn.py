"""PAC from OVN for a real guest: the domain's interfaceid names an OVN
logical switch port (libvirt takes only a UUID there, so the logical port
is named by one, as Neutron names them); libvirt plugs the guest into br-int with
external_ids:iface-id, ovn-controller binds it, and ovs-pac-agent applies
the PAC policy set with ovn-nbctl on the logical port (docs/ovn.md)."""

from __future__ import annotations

import uuid

import pytest

from testbed.libvirt_env import VmTopology, interface_xml
from testbed.ovn_env import (Chassis, OvnCentral, PacAgent, ovn_missing,
                             wait_port_bound)
from testbed.ovs_env import pac_released, wait_until

MB = 1000 * 1000
TAP = "pvm3"
MAC = "52:54:00:00:00:42"
PEER_MAC = "52:54:00:00:00:41"


def test_interfaceid_from_ovn(topo: VmTopology) -> None:
    missing = ovn_missing()
    if missing:
        pytest.fail(f"OVN not installed: {', '.join(missing)} "
                    "(tools/install-deps)")
    ovs = topo.ovs
    lport = str(uuid.uuid4())
    with OvnCentral(topo.build) as central, \
            Chassis(central, "hv1", ovs=ovs) as chassis:
        # The ERR lines libvirt's taps cause (VmTopology.log_ignore).
        chassis.log_ignore += topo.log_ignore
        central.nbctl("ls-add", "ls1")
        for lsp, mac, ip in ((lport, MAC, topo.GUEST_IP),
                             ("peer1", PEER_MAC, topo.PEER_IP)):
            central.nbctl("lsp-add", "ls1", lsp)
            central.nbctl("lsp-set-addresses", lsp, f"{mac} {ip}")
        peer = chassis.add_vm_port("peer1-tap", "peer1", mac=PEER_MAC,
                                   ip=f"{topo.PEER_IP}/24")
        guest = topo.guest("pacvm-ovn", [interface_xml(
            "br-int", MAC, TAP, {"interfaceid": lport})])
        ids = ovs.get_columns("Interface", TAP,
                              "external_ids")["external_ids"]
        assert ids.get("iface-id") == lport, ids
        wait_port_bound(central, lport, "hv1")

        with PacAgent(chassis) as agent:
            central.nbctl("set", "Logical_Switch_Port", lport,
                          "options:pac=true", "options:pac_threshold=20000",
                          "options:pac_clamp_window=false")
            wait_until(lambda: ovs.iface_status(TAP).get("pac")
                       == "enabled", 20, 0.3, f"PAC enabled on {TAP}")
            assert ids_status(ovs, TAP) == "enabled (port)"
            assert f"{lport}: on (pac from port)" in agent.show()

            wait_until(lambda: peer.ns.run(["ping", "-c", "1", "-W", "1",
                                            guest.ip], check=False)
                       .returncode == 0, 30, 0.2, f"ping {guest.ip}")
            nbytes = 4 * MB
            guest.receive(peer.ns, nbytes).assert_exact()
            ovs.wait_pac_stats(
                TAP, lambda s: s.get("pac_tx_held", 0) > 0
                and pac_released(s) > 0 and s.get("pac_rx_bytes", 0) >= nbytes,
                timeout=20)

            central.nbctl("remove", "Logical_Switch_Port", lport, "options",
                          "pac")
            wait_until(lambda: ovs.pac_uuid(TAP) is None, 20, 0.3,
                       f"PAC off on {TAP}")
            agent.assert_healthy()
        guest.destroy()
        chassis.assert_healthy()
        central.assert_healthy()


def ids_status(ovs, iface: str) -> str:
    return ovs.get_columns("Interface", iface, "external_ids")[
        "external_ids"].get("ovs-pac-status")

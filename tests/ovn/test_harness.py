"""The OVN harness itself: real NB/SB ovsdb-servers, ovn-northd and
ovn-controller beside the patched OVS bind a logical port, carry
options:pac from the NB to the SB Port_Binding, move a port between two
chassis and survive their databases going down and coming back."""

from __future__ import annotations

import json
import subprocess
from typing import Callable

import pytest

from testbed.ovn_env import (SB_SCHEMA, Chassis, OvnCentral,
                             wait_port_bound)
from testbed.ovs_env import CommandError, run, wait_until

VM1_MAC = "00:00:00:00:01:01"
VM1_IP = "10.0.0.11"

# Reads Port_Binding.options of one logical port from the SB through the
# OVS Python IDL (python3-openvswitch, Debian's python3), as the agent does;
# prints them as JSON.
IDL_SCRIPT = """
import json, sys, time
import ovs.db.idl, ovs.poller
remote, schema, lsp = sys.argv[1:4]
helper = ovs.db.idl.SchemaHelper(location=schema)
helper.register_columns("Port_Binding", ["logical_port", "options"])
idl = ovs.db.idl.Idl(remote, helper)
deadline = time.monotonic() + 10
while time.monotonic() < deadline:
    idl.run()
    if idl.has_ever_connected() and idl.change_seqno > 0:
        rows = [r for r in idl.tables["Port_Binding"].rows.values()
                if r.logical_port == lsp]
        if rows:
            print(json.dumps(dict(rows[0].options)))
            break
    poller = ovs.poller.Poller()
    idl.wait(poller)
    poller.timer_wait(100)
    poller.block()
else:
    sys.exit("no Port_Binding " + lsp)
idl.close()
"""


def make_vm1(ovn: OvnCentral) -> None:
    """NB: logical switch ls1 with port vm1 (VM1_MAC, VM1_IP)."""
    ovn.nbctl("ls-add", "ls1")
    ovn.nbctl("lsp-add", "ls1", "vm1")
    ovn.nbctl("lsp-set-addresses", "vm1", f"{VM1_MAC} {VM1_IP}")


def iface_external_ids(ch: Chassis, iface: str) -> dict[str, str]:
    return ch.ovs.get_columns("Interface", iface,
                              "external_ids")["external_ids"]


def test_port_binds_to_chassis(ovn: OvnCentral, chassis: Chassis) -> None:
    make_vm1(ovn)
    ovn.nbctl("--wait=sb", "sync")
    assert ovn.sbctl("--bare", "--columns=logical_port", "find",
                     "Port_Binding", "logical_port=vm1") == "vm1"
    assert ovn.port_binding_chassis("vm1") is None

    vm = chassis.add_vm_port("vm1-p", "vm1", mac=VM1_MAC,
                             ip=f"{VM1_IP}/24")
    uuid = wait_port_bound(ovn, "vm1", "hv1", timeout=15)
    assert uuid == ovn.chassis_uuid("hv1")
    assert ovn.port_binding_chassis("vm1") == "hv1"

    # ovn-controller has programmed the patched OVS for the port ...
    wait_until(lambda: iface_external_ids(chassis, "vm1-p").get(
        "ovn-installed") == "true", 15, what="ovn-installed on vm1-p")
    assert iface_external_ids(chassis, "vm1-p")["iface-id"] == "vm1"
    # ... and northd reports the port up in the NB.
    wait_until(lambda: ovn.nbctl("lsp-get-up", "vm1") == "up", 15,
               what="vm1 up in the NB")
    # The VM end is in its own namespace with its address.
    addr = vm.ns.run(["ip", "-j", "addr", "show", "eth0"]).stdout
    info = json.loads(addr)[0]
    assert info["address"] == VM1_MAC
    assert any(a["local"] == VM1_IP for a in info["addr_info"])
    # The chassis registered its geneve encap with its own IP.
    encap = ovn.sbctl("--bare", "--columns=type,ip", "find", "Encap",
                      "chassis_name=hv1").split()
    assert encap == ["geneve", "127.0.0.1"]


def test_pac_option_reaches_sb(ovn: OvnCentral, chassis: Chassis) -> None:
    make_vm1(ovn)
    chassis.add_vm_port("vm1-p", "vm1")
    wait_port_bound(ovn, "vm1", "hv1")
    assert "pac" not in ovn.port_binding_options("vm1")

    ovn.nbctl("--wait=sb", "set", "Logical_Switch_Port", "vm1",
              "options:pac=true")
    assert ovn.port_binding_options("vm1").get("pac") == "true"
    # The same fact through the OVS Python IDL, which the agent uses.
    out = run(["/usr/bin/python3", "-c", IDL_SCRIPT, ovn.sb_remote,
               str(SB_SCHEMA), "vm1"], timeout=20).stdout
    assert json.loads(out).get("pac") == "true"

    ovn.nbctl("--wait=sb", "remove", "Logical_Switch_Port", "vm1",
              "options", "pac")
    assert "pac" not in ovn.port_binding_options("vm1")
    # Binding is untouched by the option's changes.
    assert ovn.port_binding_chassis("vm1") == "hv1"


def test_port_moves_between_chassis(
        ovn: OvnCentral, chassis: Chassis,
        chassis_factory: Callable[[str], Chassis]) -> None:
    make_vm1(ovn)
    ovn.nbctl("set", "Logical_Switch_Port", "vm1", "options:pac=true")
    chassis.add_vm_port("vm1-p", "vm1")
    wait_port_bound(ovn, "vm1", "hv1")

    hv2 = chassis_factory("hv2")
    assert hv2.dir != chassis.dir and hv2.netns.name != chassis.netns.name
    names = ovn.sbctl("--bare", "--columns=name", "list", "Chassis").split()
    assert sorted(names) == ["hv1", "hv2"]
    # Each chassis tunnels to the other's encap IP.
    for ch, other_ip in ((chassis, "127.0.0.2"), (hv2, "127.0.0.1")):
        def tunnel() -> bool:
            out = ch.vsctl("--bare", "--columns=options", "find",
                           "Interface", "type=geneve")
            return f"remote_ip={other_ip}" in out
        wait_until(tunnel, 15, what=f"{ch.name}'s geneve port to {other_ip}")

    chassis.del_vm_port("vm1-p")
    hv2.add_vm_port("vm1-p", "vm1")
    wait_port_bound(ovn, "vm1", "hv2")
    assert ovn.port_binding_chassis("vm1") == "hv2"
    assert ovn.port_binding_options("vm1").get("pac") == "true"

    # And back.
    hv2.del_vm_port("vm1-p")
    chassis.add_vm_port("vm1-p", "vm1")
    wait_port_bound(ovn, "vm1", "hv1")


def test_sb_and_nb_down_and_back(ovn: OvnCentral, chassis: Chassis) -> None:
    make_vm1(ovn)
    chassis.add_vm_port("vm1-p", "vm1")
    wait_port_bound(ovn, "vm1", "hv1")
    assert chassis.ovn_appctl("connection-status") == "connected"

    # SB down: the NB still takes changes; they reach the SB once it is
    # back, and ovn-controller reconnects with the port still bound.
    ovn.stop_sb()
    with pytest.raises((CommandError, subprocess.TimeoutExpired)):
        ovn.sbctl("show", timeout=1)
    wait_until(lambda: chassis.ovn_appctl("connection-status")
               == "not connected", 15, what="ovn-controller to notice")
    ovn.nbctl("set", "Logical_Switch_Port", "vm1", "options:pac=true")
    ovn.start_sb()
    wait_until(lambda: ovn.port_binding_options("vm1").get("pac") == "true",
               15, what="options:pac in the SB after its restart")
    wait_until(lambda: chassis.ovn_appctl("connection-status")
               == "connected", 15, what="ovn-controller to reconnect")
    wait_port_bound(ovn, "vm1", "hv1")

    # NB down: the SB keeps serving; the NB comes back with its contents.
    ovn.stop_nb()
    with pytest.raises((CommandError, subprocess.TimeoutExpired)):
        ovn.nbctl("show", timeout=1)
    assert ovn.port_binding_chassis("vm1") == "hv1"
    ovn.start_nb()
    assert ovn.nbctl("get", "Logical_Switch_Port", "vm1",
                     "options:pac") == '"true"'
    ovn.nbctl("--wait=sb", "remove", "Logical_Switch_Port", "vm1",
              "options", "pac")
    assert "pac" not in ovn.port_binding_options("vm1")

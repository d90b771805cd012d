"""The built OVS forwards real TCP through the userspace datapath.

These pass with or without PAC in the build."""

from __future__ import annotations

import re

from testbed.ovs_env import Ovs, Topology, wait_until

MB = 1000 * 1000


def test_vswitchd_runs_netdev_datapath(topo: Topology) -> None:
    ovs = topo.ovs
    assert ovs.vsctl("get", "Bridge", "br0", "datapath_type") == "netdev"
    show = ovs.appctl("dpif/show")
    assert "netdev@ovs-netdev" in show, show
    for port in ("vm-p", "peer-p"):
        assert re.search(rf"\b{port} \d+/\d+: \(system\)", show), show
        assert int(ovs.vsctl("get", "Interface", port, "ofport")) > 0
        assert ovs.iface_status(port).get("driver_name") == "veth"
    flows = ovs.ofctl("dump-flows", "br0")
    assert "actions=NORMAL" in flows, flows
    topo.check_health()


def test_transfer_20mb_peer_to_vm_exact(topo: Topology) -> None:
    ovs = topo.ovs
    before = ovs.iface_stats("vm-p").get("tx_bytes", 0)
    result = topo.transfer(20 * MB).wait(timeout=90)
    result.assert_exact()
    print(f"20 MB in {result.seconds:.2f} s")
    # Interface statistics are refreshed every 5 s.
    ovs_stats = {}

    def delivered() -> bool:
        ovs_stats.update(ovs.iface_stats("vm-p"))
        return ovs_stats.get("tx_bytes", 0) - before >= 20 * MB
    wait_until(delivered, 15, 0.5, "vm-p tx_bytes to count the transfer")
    topo.check_health()


def test_pac_version_answers(ovs: Ovs) -> None:
    reply = ovs.appctl("pac/version")
    assert re.fullmatch(r"ovs-pac \d+\.\d+\.\d+ \(libpac \d+\.\d+\.\d+\)",
                        reply), reply


def test_no_pac_state_when_unconfigured(topo: Topology) -> None:
    """Ports without PAC have no pac_* statistics and no status:pac."""
    topo.ping(topo.peer, topo.vm)
    ovs = topo.ovs
    assert "pac" not in ovs.iface_status("vm-p")
    assert ovs.pac_stats("vm-p") == {}

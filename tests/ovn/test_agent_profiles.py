"""ovs-pac-agent's port profiles (docs/libvirt.md): a profile of the
profiles file becomes the PAC row of any Interface whose
external_ids:port-profile names it (as libvirt writes it from a
profileid), on a host without OVN too; a bad entry is ignored and
reported by profile and key, a missing profile refused; where OVN's
policy sets pac for the port, OVN wins and the status says so."""

from __future__ import annotations

from typing import Iterator

import pytest

from agent_checks import TIMEOUT, make_port, pac_row, status, wait_row
from testbed.ovn_env import Chassis, OvnCentral, PacAgent, agent_host
from testbed.ovs_env import OvsBuild, Topology, wait_until

PROFILES = """\
# PAC profiles of this host: one section a profile, OVN's pac_* keys.
[incast]
pac_threshold = 48000
pac_max_hold = 20000
pac_clamp_window = false

[off]
pac = false
"""


def set_profile(ch, iface: str, profile: str) -> None:
    ch.ovs.vsctl("set", "Interface", iface,
                 f"external_ids:port-profile={profile}")


def wait_status(ch, iface: str, pred, what: str) -> str:
    last = [None]

    def check() -> bool:
        last[0] = status(ch, iface)
        return pred(last[0])
    try:
        wait_until(check, TIMEOUT, 0.2, what)
    except TimeoutError:
        raise AssertionError(f"ovs-pac-status of {iface}: {last[0]!r}") \
            from None
    return last[0]


def test_profile_with_ovn_and_ovn_wins(ovn: OvnCentral, chassis: Chassis,
                                       agent_factory) -> None:
    agent = agent_factory(chassis)
    agent.write_profiles(PROFILES)
    # A port OVN does not know (its iface-id is bound nowhere) and an OVN
    # logical port whose policy does not set pac: the profile applies.
    chassis.add_vm_port("p1", "not-in-ovn")
    set_profile(chassis, "p1", "incast")
    make_port(ovn, chassis)
    set_profile(chassis, "vm1-tap", "incast")
    for iface in ("p1", "vm1-tap"):
        row = wait_row(chassis, lambda r: r is not None, iface)
        assert row["threshold"] == 48000 and row["max_hold"] == 20000, row
        assert row["other_config"] == {"clamp-window": "false"}, row
        assert row["external_ids"] == {"ovs-pac-agent": "owned",
                                       "ovs-pac-profile": "incast",
                                       "ovs-pac-source": "profile incast"}
    assert status(chassis, "p1") == "enabled (profile incast)"
    assert status(chassis, "vm1-tap") == (
        "enabled (profile incast); OVN's policy sets no pac for vm1")
    wait_until(lambda: chassis.ovs.iface_status("p1").get("pac")
               == "enabled", TIMEOUT, 0.2, "PAC running on p1")

    # OVN's policy sets pac for vm1: OVN wins, and says so.
    ovn.nbctl("set", "Logical_Switch_Port", "vm1", "options:pac=true",
              "options:pac_threshold=50000")
    row = wait_row(chassis, lambda r: r is not None
                   and r["threshold"] == 50000, "vm1-tap")
    assert row["max_hold"] == [], row       # Not the profile's.
    assert row["external_ids"] == {"ovs-pac-agent": "owned",
                                   "ovs-pac-lport": "vm1",
                                   "ovs-pac-source": "port"}, row
    assert status(chassis, "vm1-tap") == (
        "enabled (port); port-profile incast not used: OVN's policy "
        "applies")
    show = agent.show()
    assert "vm1: on (pac from port)" in show, show
    assert "port-profile incast not used: OVN's policy applies" in show
    assert "interface p1: on (pac from profile incast)" in show, show
    assert "pac_threshold=48000 (profile incast)" in show, show

    # OVN's pac=false also wins.
    ovn.nbctl("set", "Logical_Switch_Port", "vm1", "options:pac=false")
    wait_row(chassis, lambda r: r is None, "vm1-tap")
    # Without OVN's key, the profile again; "pac = false" in a profile.
    ovn.nbctl("remove", "Logical_Switch_Port", "vm1", "options", "pac")
    wait_row(chassis, lambda r: r is not None
             and r["threshold"] == 48000, "vm1-tap")
    set_profile(chassis, "p1", "off")
    wait_row(chassis, lambda r: r is None, "p1")
    assert "interface p1: off (pac from profile off)" in agent.show()


def test_profile_bad_entries_ignored(ovn: OvnCentral, chassis: Chassis,
                                     agent_factory) -> None:
    agent = agent_factory(chassis)
    chassis.add_vm_port("p1", "not-in-ovn")
    set_profile(chassis, "p1", "incast")
    st = wait_status(chassis, "p1", lambda s: s and s.startswith("error"),
                     "no such profile")
    assert st == (f"error: port-profile incast: no such profile in "
                  f"{agent.profiles}"), st
    assert "no such file" in agent.show()

    # A bad entry is ignored, named with its profile; the profile's other
    # entries apply.
    agent.write_profiles("[incast]\npac_max_hold = 20000\n")
    row = wait_row(chassis, lambda r: r is not None, "p1")
    cases = [
        ("pac_threshold = many", 'pac_threshold: "many" is not an integer'),
        ("pac_threshold = 0", "pac_threshold: 0 is out of range "
         "[3000, 1073741824]"),
        ("pac = yes", 'pac: "yes" is not true or false'),
        ("pac_mlfq_thresholds = 100000,1000",
         "pac_mlfq_thresholds: thresholds must increase with the level "
         "(level 1: 100000 bytes, level 2: 1000 bytes)"),
        ("pac_thresold = 48000", "pac_thresold: unknown key"),
    ]
    for entry, reason in cases:
        key, why = reason.split(": ", 1)
        agent.write_profiles(f"[incast]\npac_max_hold = 20000\n{entry}\n")
        expected = (f"enabled (profile incast); ignored {key} (profile "
                    f"incast): {why}")
        wait_status(chassis, "p1", lambda s: s == expected, expected)
        assert pac_row(chassis, "p1") == row, entry     # Not rewritten.
        text = entry.split(" = ")[1]
        assert (f"  ignored {key}={text} (profile incast): {why}"
                in agent.show())
    assert ("interface p1 (port-profile incast): pac_thresold=48000 "
            "(profile incast): unknown key; key ignored") in agent.log()

    # Fixed: the row comes.  A file that does not parse keeps the
    # profiles read before, and says why.
    agent.write_profiles("[incast]\npac_threshold = 30000\n")
    wait_row(chassis, lambda r: r is not None and r["threshold"] == 30000,
             "p1")
    agent.write_profiles("[incast]\npac_threshold 30000\n")
    wait_until(lambda: "profiles read before kept" in agent.show(),
               TIMEOUT, 0.2, "the parse error in pac-agent/show")
    show = agent.show()
    assert f"profiles {agent.profiles}: 1 (incast); error: " in show, show
    assert "line 2" in show, show
    assert pac_row(chassis, "p1")["threshold"] == 30000


@pytest.fixture
def plain_host(build: OvsBuild) -> Iterator[Topology]:
    """OVS with br0 and two namespaces (tests/system's topology): a host
    without OVN."""
    t = Topology(build)
    try:
        t.setup()
        yield t
        t.check_health()
    finally:
        t.teardown()


def test_profile_without_ovn(plain_host: Topology) -> None:
    """No ovn-remote, no OVN daemon: the agent follows only the
    Open_vSwitch database, applies the profile, and the port's row goes
    with the port."""
    host = agent_host(plain_host.ovs, plain_host.workdir, plain_host.build)
    agent = PacAgent(host, nb=False)
    try:
        agent.write_profiles(PROFILES)
        agent.start()
        set_profile(host, "vm-p", "incast")
        row = wait_row(host, lambda r: r is not None, "vm-p")
        assert row["threshold"] == 48000, row
        wait_until(lambda: plain_host.ovs.iface_status("vm-p").get("pac")
                   == "enabled", TIMEOUT, 0.2, "PAC running on vm-p")
        show = agent.show()
        assert "OVN_Southbound: not followed" in show, show
        assert "interface vm-p: on (pac from profile incast)" in show, show
        plain_host.transfer(2 * 1000 * 1000).wait(60).assert_exact()

        plain_host.ovs.vsctl("del-port", "br0", "vm-p")
        wait_until(lambda: not plain_host.ovs.vsctl(
            "--columns=_uuid", "list", "PAC"), TIMEOUT, 0.2,
            "the PAC row gone with the port")
        wait_until(lambda: "interface vm-p" not in agent.show(), TIMEOUT,
                   0.2, "vm-p gone from pac-agent/show")
        agent.assert_healthy()
    finally:
        agent.close()

"""ovs-pac-agent with real OVN daemons: OVN's pac* keys, set with ovn-nbctl
on a logical port, its logical switch or NB_Global, become the PAC row of
the chassis's Interface (docs/ovn.md), and only what the agent made is
ever touched."""

from __future__ import annotations

import time

from agent_checks import TIMEOUT, make_port, pac_row, status, wait_row
from testbed.ovn_env import Chassis, OvnCentral, PacAgent, wait_port_bound
from testbed.ovs_env import Host, Transfer, wait_until

def test_port_switch_and_global_keys(ovn: OvnCentral, chassis: Chassis,
                                     agent_factory) -> None:
    """Each precedence level, key by key: port over switch over global;
    pac=false on the port overrides the switch; removing a key falls back
    to the next level; the datapath runs the row."""
    make_port(ovn, chassis)
    agent = agent_factory(chassis)
    ovn.nbctl("set", "NB_Global", ".", "options:pac_threshold=200000",
              "options:pac_max_hold=30000")
    ovn.nbctl("set", "Logical_Switch", "ls1", "other_config:pac=true",
              "other_config:pac_max_hold=40000",
              "other_config:pac_mlfq_thresholds=10000,100000")
    ovn.nbctl("set", "Logical_Switch_Port", "vm1",
              "options:pac_threshold=50000", "options:pac_max_flows=1000",
              "options:pac_clamp_window=false", "options:pac_ecn=false",
              "options:pac_policy=rwnd")

    row = wait_row(chassis, lambda r: r is not None
                   and r["threshold"] == 50000)
    assert row["max_hold"] == 40000
    assert row["mlfq_thresholds"] == {1: 10000, 2: 100000}
    assert row["ecn"] is False
    assert row["other_config"] == {"max-flows": "1000",
                                   "clamp-window": "false",
                                   "policy": "rwnd"}
    assert row["external_ids"] == {"ovs-pac-agent": "owned",
                                   "ovs-pac-lport": "vm1",
                                   "ovs-pac-source": "switch"}
    assert status(chassis) == "enabled (switch)"
    show = agent.show()
    assert "vm1: on (pac from switch)" in show
    assert "pac_threshold=50000 (port)" in show
    assert "pac_max_hold=40000 (switch)" in show
    # ovs-vswitchd runs it.
    wait_until(lambda: chassis.ovs.iface_status("vm1-tap").get("pac")
               == "enabled", TIMEOUT, 0.2, "status:pac=enabled")
    assert "max-flows=1000" in chassis.ovs.pac_show("vm1-tap")
    assert " policy=rwnd" in chassis.ovs.pac_show("vm1-tap")

    # Removing the port's threshold falls back to the global one.
    ovn.nbctl("remove", "Logical_Switch_Port", "vm1", "options",
              "pac_threshold")
    wait_row(chassis, lambda r: r is not None and r["threshold"] == 200000)

    # pac=false on the port wins over the switch's pac=true.
    ovn.nbctl("set", "Logical_Switch_Port", "vm1", "options:pac=false")
    wait_row(chassis, lambda r: r is None)
    assert status(chassis) is None
    assert "vm1: off (pac from port)" in agent.show()

    # With pac off everywhere, no PAC; a global pac=true turns it on.
    ovn.nbctl("remove", "Logical_Switch_Port", "vm1", "options", "pac")
    ovn.nbctl("remove", "Logical_Switch", "ls1", "other_config", "pac")
    wait_row(chassis, lambda r: r is None)
    ovn.nbctl("set", "NB_Global", ".", "options:pac=true")
    row = wait_row(chassis, lambda r: r is not None)
    assert row["external_ids"]["ovs-pac-source"] == "global"


def test_bad_keys_ignored(ovn: OvnCentral, chassis: Chassis,
                          agent_factory) -> None:
    """An unknown pac_* key, or a bad value of a known one, at any level
    (port, switch, global) is ignored where it is and reported (status,
    pac-agent/show and the log name the key and its level): PAC stays on,
    the other keys keep their effect, and the next level's value of that
    key applies."""
    make_port(ovn, chassis)
    agent = agent_factory(chassis)
    ovn.nbctl("set", "Logical_Switch", "ls1",
              "other_config:pac_threshold=50000")
    ovn.nbctl("set", "Logical_Switch_Port", "vm1", "options:pac=true",
              "options:pac_threshold=64000", "options:pac_max_hold=30000")
    good = wait_row(chassis, lambda r: r is not None
                    and r["threshold"] == 64000 and r["max_hold"] == 30000)
    assert status(chassis) == "enabled (port)"

    def wait_status(expected: str) -> None:
        wait_until(lambda: status(chassis) == expected, TIMEOUT, 0.2,
                   f"status {expected!r} (is {status(chassis)!r})")

    # A key of a newer release, set for the whole deployment: PAC stays
    # on, the row is not even rewritten.
    ovn.nbctl("set", "NB_Global", ".", "options:pac_some_future_knob=7")
    wait_status("enabled (port); ignored pac_some_future_knob (global): "
                "unknown key")
    assert pac_row(chassis) == good
    assert "vm1: on (pac from port)" in agent.show()
    assert ("  ignored pac_some_future_knob=7 (global): unknown key"
            in agent.show())
    assert ("logical port vm1: pac_some_future_knob=7 (global): unknown "
            "key; key ignored") in agent.log()
    ovn.nbctl("remove", "NB_Global", ".", "options", "pac_some_future_knob")
    ovn.nbctl("set", "Logical_Switch", "ls1", "other_config:pac_bogus=1")
    wait_status("enabled (port); ignored pac_bogus (switch): unknown key")
    assert pac_row(chassis) == good
    ovn.nbctl("remove", "Logical_Switch", "ls1", "other_config", "pac_bogus")

    # A bad value on the port: that key is ignored there, the switch's
    # value of it applies, the port's other keys stay.
    ovn.nbctl("set", "Logical_Switch_Port", "vm1",
              "options:pac_threshold=abc")
    row = wait_row(chassis, lambda r: r is not None
                   and r["threshold"] == 50000)
    assert row["max_hold"] == 30000 and row["_uuid"] == good["_uuid"]
    wait_status('enabled (port); ignored pac_threshold (port): "abc" is '
                'not an integer')
    assert "  pac_threshold=50000 (switch)" in agent.show()
    ovn.nbctl("set", "Logical_Switch_Port", "vm1",
              "options:pac_threshold=64000")
    good = wait_row(chassis, lambda r: r is not None
                    and r["threshold"] == 64000)
    wait_status("enabled (port)")

    # Bad values of keys set nowhere else: ignored, the row as it was.
    cases = [
        ("pac_threshold=100", "port", "pac_threshold: 100 is out of range "
         "[3000, 1073741824]"),
        ("pac_max_flows=0", "switch",
         "pac_max_flows: 0 is out of range [1, 4194304]"),
        ("pac_mlfq_thresholds=5000,4000", "global", "pac_mlfq_thresholds: "
         "thresholds must increase with the level (level 1: 5000 bytes, "
         "level 2: 4000 bytes)"),
        ("pac_ecn=yes", "port", 'pac_ecn: "yes" is not true or false'),
        ("pac_policy=hold", "switch",
         'pac_policy: "hold" is not pac, rwnd or rdtcp'),
    ]
    where = {"port": ("Logical_Switch_Port", "vm1", "options"),
             "switch": ("Logical_Switch", "ls1", "other_config"),
             "global": ("NB_Global", ".", "options")}
    for option, level, reason in cases:
        key, text = option.split("=")
        table, record, column = where[level]
        if level == "port" and key == "pac_threshold":
            # The port's own value is the one replaced: the switch's
            # applies meanwhile.
            expect = dict(good, threshold=50000)
        else:
            expect = good
        ovn.nbctl("set", table, record, f"{column}:{option}")
        name, why = reason.split(": ", 1)
        wait_status(f"enabled (port); ignored {name} ({level}): {why}")
        got = pac_row(chassis)
        assert {k: v for k, v in got.items() if k != "_version"} == \
            {k: v for k, v in expect.items() if k != "_version"}, option
        if expect is good:
            assert got == good, f"{option}: the row was rewritten"
        assert f"  ignored {key}={text} ({level}): {why}" in agent.show()
        assert (f"logical port vm1: {key}={text} ({level}): {why}; key "
                "ignored") in agent.log()
        if level == "port" and key == "pac_threshold":
            ovn.nbctl("set", table, record, f"{column}:pac_threshold=64000")
        else:
            ovn.nbctl("remove", table, record, column, key)
        wait_status("enabled (port)")
        good = wait_row(chassis, lambda r: r is not None
                        and r["threshold"] == 64000)

    # A bad pac value does not turn PAC off either: the next level's pac
    # applies (here the global one), and with none PAC is off, reported.
    ovn.nbctl("set", "NB_Global", ".", "options:pac=true")
    ovn.nbctl("set", "Logical_Switch_Port", "vm1", "options:pac=yes")
    wait_status('enabled (global); ignored pac (port): "yes" is not true '
                'or false')
    assert pac_row(chassis)["threshold"] == 64000
    ovn.nbctl("remove", "NB_Global", ".", "options", "pac")
    wait_row(chassis, lambda r: r is None)
    wait_status('off; ignored pac (port): "yes" is not true or false')
    assert 'vm1: off\n  ignored pac=yes (port): "yes" is not true or ' \
        'false' in agent.show()


def test_no_rewrite_on_restart_or_unrelated_change(
        ovn: OvnCentral, chassis: Chassis, agent_factory) -> None:
    """The agent compares before it writes: restarting it, or changing NB
    columns that are not PAC's, leaves the PAC row as it is (same _version:
    no write at all, so the datapath never restarts PAC)."""
    make_port(ovn, chassis)
    agent = agent_factory(chassis)
    ovn.nbctl("set", "Logical_Switch_Port", "vm1", "options:pac=true",
              "options:pac_threshold=64000")
    row = wait_row(chassis, lambda r: r is not None)

    agent.restart()
    wait_until(lambda: "vm1: on" in agent.show(), TIMEOUT, 0.2,
               "the agent's view after its restart")
    ovn.nbctl("set", "Logical_Switch_Port", "vm1", "options:foo=bar")
    ovn.nbctl("set", "Logical_Switch", "ls1", "other_config:x=y")
    ovn.nbctl("set", "NB_Global", ".", "options:y=z")
    # A barrier: a later change that the agent must apply, so that it has
    # seen the ones above when vm2's row appears.
    make_port(ovn, chassis, "vm2", "vm2-tap")
    ovn.nbctl("set", "Logical_Switch_Port", "vm2", "options:pac=true")
    wait_row(chassis, lambda r: r is not None, "vm2-tap")
    assert pac_row(chassis) == row


def test_operator_row_left_alone(ovn: OvnCentral, chassis: Chassis,
                                 agent_factory) -> None:
    """An operator's own PAC row (no ovs-pac-agent mark) is never touched,
    even when OVN's policy says otherwise; the status says so."""
    make_port(ovn, chassis)
    uuid = chassis.ovs.pac_enable("vm1-tap", threshold=77777)
    agent = agent_factory(chassis)
    ovn.nbctl("set", "Logical_Switch_Port", "vm1", "options:pac=true",
              "options:pac_threshold=50000")
    wait_until(lambda: status(chassis) == "left alone: PAC row not made by "
               "ovs-pac-agent", TIMEOUT, 0.2, "the agent's status")
    row = pac_row(chassis)
    assert row["_uuid"] == uuid and row["threshold"] == 77777
    assert row["external_ids"] == {}
    assert "vm1: left alone" in agent.show()
    ovn.nbctl("set", "Logical_Switch_Port", "vm1", "options:pac=false")
    wait_until(lambda: status(chassis) is None, TIMEOUT, 0.2, "no status")
    assert pac_row(chassis) == row      # Same _version: never written.


def test_ports_plugged_removed_and_moved(ovn: OvnCentral, chassis_factory,
                                         agent_factory) -> None:
    """A port plugged later gets PAC at once; an unplugged one takes its row
    with it; a port moved to a second chassis (live migration) gets PAC
    there from that chassis's agent."""
    hv1, hv2 = chassis_factory("hv1"), chassis_factory("hv2")
    agent_factory(hv1)
    agent_factory(hv2)
    ovn.nbctl("ls-add", "ls1")
    ovn.nbctl("set", "Logical_Switch", "ls1", "other_config:pac=true")
    ovn.nbctl("lsp-add", "ls1", "vm1")

    hv1.add_vm_port("vm1-tap", "vm1")
    wait_port_bound(ovn, "vm1", "hv1", TIMEOUT)
    wait_row(hv1, lambda r: r is not None)

    hv1.del_vm_port("vm1-tap")
    hv2.add_vm_port("vm1-tap", "vm1")
    wait_port_bound(ovn, "vm1", "hv2", TIMEOUT)
    row = wait_row(hv2, lambda r: r is not None)
    assert row["external_ids"]["ovs-pac-lport"] == "vm1"
    assert hv1.vsctl("--bare", "--columns=_uuid", "list", "PAC") == ""

    # Deleting the logical port turns PAC off on the Interface that still
    # names it.
    ovn.nbctl("lsp-del", "vm1")
    wait_row(hv2, lambda r: r is None)
    assert hv2.vsctl("--bare", "--columns=_uuid", "list", "PAC") == ""


def test_databases_down_and_back(ovn: OvnCentral, chassis: Chassis,
                                 agent_factory) -> None:
    """While the SB or the NB is down the local state stays as it was, and
    ports plugged meanwhile wait; changes made meanwhile apply once the
    database is back."""
    make_port(ovn, chassis)
    agent = agent_factory(chassis)
    ovn.nbctl("set", "Logical_Switch", "ls1", "other_config:pac=true",
              "other_config:pac_threshold=60000")
    row = wait_row(chassis, lambda r: r is not None
                   and r["threshold"] == 60000)
    mark = len(agent.log())

    ovn.stop_sb()
    wait_until(lambda: "ovnsb_db.sock: connection" in agent_log_since(
        agent, mark), 30, 0.2, "the agent to lose the SB")
    ovn.nbctl("set", "Logical_Switch", "ls1",
              "other_config:pac_threshold=70000")
    # The switch key is in the NB, which the agent still reads: it must
    # not apply it while the SB is away.  Plugging a port is a local change
    # it would act on at once if it did anything.
    chassis.add_vm_port("vm3-tap", "vm3")
    ovn.nbctl("lsp-add", "ls1", "vm3")
    wait_until(lambda: "vm3" in ovn.nbctl("lsp-list", "ls1"), TIMEOUT, 0.2,
               "vm3 in the NB")
    time.sleep(2)
    assert pac_row(chassis) == row
    assert pac_row(chassis, "vm3-tap") is None
    ovn.start_sb()
    wait_row(chassis, lambda r: r is not None and r["threshold"] == 70000)
    wait_row(chassis, lambda r: r is not None, "vm3-tap")

    # With the NB down (the agent reads switch keys there), a port plugged
    # meanwhile waits for it.
    ovn.nbctl("lsp-add", "ls1", "vm4")
    mark = len(agent.log())
    ovn.stop_nb()
    wait_until(lambda: "ovnnb_db.sock: connection" in agent_log_since(
        agent, mark), 30, 0.2, "the agent to lose the NB")
    chassis.add_vm_port("vm4-tap", "vm4")
    wait_port_bound(ovn, "vm4", chassis.name, TIMEOUT)
    time.sleep(2)
    assert pac_row(chassis, "vm4-tap") is None
    assert pac_row(chassis)["threshold"] == 70000
    ovn.start_nb()
    wait_row(chassis, lambda r: r is not None, "vm4-tap")
    ovn.nbctl("set", "Logical_Switch", "ls1",
              "other_config:pac_threshold=80000")
    wait_row(chassis, lambda r: r is not None and r["threshold"] == 80000)


def agent_log_since(agent: PacAgent, mark: int) -> str:
    return agent.log()[mark:]


def test_end_to_end_tcp(ovn: OvnCentral, chassis: Chassis,
                        agent_factory) -> None:
    """A real TCP transfer between two VMs on logical switch ls1, into vm1
    with PAC switched on by ovn-nbctl: every byte arrives, and PAC saw the
    connection (pac_* statistics move): on the fast path (the default),
    since one connection's initial window is under half the threshold,
    a lone transfer starts no tracking."""
    ovn.nbctl("ls-add", "ls1")
    hosts = {}
    for n, lsp in ((11, "vm1"), (12, "peer")):
        mac, ip = f"00:00:00:00:01:{n:02x}", f"10.0.0.{n}"
        ovn.nbctl("lsp-add", "ls1", lsp)
        ovn.nbctl("lsp-set-addresses", lsp, f"{mac} {ip}")
        port = chassis.add_vm_port(f"{lsp}-tap", lsp, mac=mac, ip=f"{ip}/24")
        wait_port_bound(ovn, lsp, chassis.name, TIMEOUT)
        hosts[lsp] = Host(port.ns, ip, f"{lsp}-tap")
    agent_factory(chassis)
    ovn.nbctl("set", "Logical_Switch_Port", "vm1", "options:pac=true",
              "options:pac_threshold=30000")
    wait_until(lambda: chassis.ovs.iface_status("vm1-tap").get("pac")
               == "enabled", TIMEOUT, 0.2, "status:pac=enabled on vm1-tap")
    wait_until(lambda: chassis.ovs.get_columns(
        "Interface", "vm1-tap", "external_ids")["external_ids"].get(
            "ovn-installed") == "true", TIMEOUT, 0.2, "ovn-installed")

    result = Transfer(hosts["peer"], hosts["vm1"], 4 << 20).start().wait()
    result.assert_exact()
    # At least a segment per 64 KB, whatever the offloads merge.
    stats = chassis.ovs.wait_pac_stats(
        "vm1-tap", lambda s: s.get("pac_fast_rx_packets", 0) >= 64
        and s.get("pac_fast_tx_packets", 0) > 0)
    assert stats["pac_tracking_starts"] == 0, stats
    assert stats["pac_held"] == 0

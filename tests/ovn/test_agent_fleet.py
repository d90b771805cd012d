"""ovs-pac-agent beside others: one writer per Open_vSwitch database (an
OVSDB lock, active and standby as ovn-northd's), and its report to a
central operator in the SB Chassis_Private row of its chassis."""

from __future__ import annotations

import json
import subprocess
import time

from agent_checks import TIMEOUT, make_port, pac_row, wait_row
from testbed.ovn_env import AGENT, AGENT_PYTHON, Chassis, OvnCentral, PacAgent
from testbed.ovs_env import wait_until


def set_profile(ch: Chassis, iface: str, profile: str) -> None:
    ch.ovs.vsctl("set", "Interface", iface,
                 f"external_ids:port-profile={profile}")


def test_one_writer_per_database(ovn: OvnCentral, chassis: Chassis,
                                 agent_factory) -> None:
    """Two agents with different profiles on one database: the one holding
    the lock writes, the other says it is standby and writes nothing (the
    row keeps its version); when the active one exits, the standby takes
    over and applies its own policy."""
    first = PacAgent(chassis, nb=False)
    try:
        first.write_profiles("[incast]\npac_threshold = 48000\n")
        first.start()
        chassis.add_vm_port("p1", "not-in-ovn")
        set_profile(chassis, "p1", "incast")
        row = wait_row(chassis, lambda r: r is not None
                       and r["threshold"] == 48000, "p1")
        second = agent_factory(chassis, nb=False, name="ovs-pac-agent-b")
        second.write_profiles("[incast]\npac_threshold = 64000\n")
        time.sleep(6)
        assert pac_row(chassis, "p1") == row, "the row was written again"
        assert "active: holds lock ovs_pac_agent" in first.show()
        assert ("standby: another ovs-pac-agent holds lock ovs_pac_agent"
                in second.show())
        assert "p1" not in second.show()
        log = second.log()
        assert log.count("standby: another ovs-pac-agent holds lock") == 1
        assert "active:" not in log
        assert "PAC on" not in log
    finally:
        first.close()

    # The standby takes over, once, and applies its profiles.
    wait_row(chassis, lambda r: r is not None and r["threshold"] == 64000,
             "p1")
    assert "active: holds lock ovs_pac_agent" in second.show()
    assert second.log().count("active: this agent holds lock") == 1
    # The first, back, is the standby now.
    first.start()
    try:
        wait_until(lambda: "standby:" in first.show(), TIMEOUT, 0.2,
                   "the first agent standby")
        assert pac_row(chassis, "p1")["threshold"] == 64000
    finally:
        first.close()


def report(ovn: OvnCentral, ch: Chassis) -> dict[str, str]:
    """The ovs-pac-* keys of the chassis's Chassis_Private external_ids, read
    from the SB with ovn-sbctl."""
    out = ovn.sbctl("--format=json", "--columns=external_ids", "find",
                    "Chassis_Private", f"name={ch.name}")
    rows = json.loads(out)["data"]
    if not rows:
        return {}
    return {k: v for k, v in rows[0][0][1] if k.startswith("ovs-pac-")}


def wait_report(ovn: OvnCentral, ch: Chassis, **expected: str) -> dict:
    """Waits until the report has 'expected' (keys with '_' for '-')."""
    want = {"ovs-pac-" + k.replace("_", "-"): v for k, v in expected.items()}
    last: list[dict] = [{}]

    def check() -> bool:
        last[0] = report(ovn, ch)
        return all(last[0].get(k) == v for k, v in want.items())
    try:
        wait_until(check, TIMEOUT, 0.2, "the agent's report")
    except TimeoutError:
        raise AssertionError(f"report {last[0]}, expected {want}") from None
    return last[0]


def test_report_in_chassis_private(ovn: OvnCentral, chassis: Chassis,
                                   agent_factory) -> None:
    """The agent's version, state, ports with PAC, ignored keys and ports
    in error, in its chassis's Chassis_Private external_ids; "stopped" once
    it has exited."""
    version = subprocess.run(
        [AGENT_PYTHON, str(AGENT), "--version"], capture_output=True,
        text=True, check=True).stdout.splitlines()
    agent_version = version[0].split()[-1]
    libpac = version[1].split()[3]
    make_port(ovn, chassis)
    agent = agent_factory(chassis)
    got = wait_report(ovn, chassis, state="active", ports="0", ignored="0",
                      errors="0")
    assert got["ovs-pac-version"] == f"{agent_version} (libpac {libpac})"
    assert "report: Chassis_Private hv1 external_ids ovs-pac-*" in \
        agent.show()

    ovn.nbctl("set", "Logical_Switch_Port", "vm1", "options:pac=true")
    wait_report(ovn, chassis, ports="1")
    ovn.nbctl("set", "NB_Global", ".", "options:pac_some_future_knob=7")
    wait_report(ovn, chassis, ports="1", ignored="1")
    chassis.add_vm_port("p2", "not-in-ovn")
    set_profile(chassis, "p2", "missing")
    wait_report(ovn, chassis, ports="1", ignored="1", errors="1")

    # ovn-controller's own keys are left as they are.
    before = ovn.sbctl("--format=json", "--columns=external_ids", "find",
                       "Chassis_Private", f"name={chassis.name}")
    others = {k: v for k, v in json.loads(before)["data"][0][0][1]
              if not k.startswith("ovs-pac-")}
    agent.close()
    wait_report(ovn, chassis, state="stopped")
    after = ovn.sbctl("--format=json", "--columns=external_ids", "find",
                      "Chassis_Private", f"name={chassis.name}")
    assert {k: v for k, v in json.loads(after)["data"][0][0][1]
            if not k.startswith("ovs-pac-")} == others
    agent.start()
    wait_report(ovn, chassis, state="active", ports="1")

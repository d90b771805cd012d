"""PAC on a real port: configuration through OVSDB, statistics, status,
pac/show, and real TCP transfers that must stay byte-exact.

Skipped (fixture 'pac') while the built schema has no PAC table."""

from __future__ import annotations

import time

import pytest

from testbed.ovs_env import (PAC_HOLD_LONE_TRANSFER, Ovs, OvsBuild,
                             Topology, pac_released, wait_until)

MB = 1000 * 1000
IFACE = "vm-p"



def wait_status(ovs: Ovs, want, timeout: float = 15) -> dict[str, str]:
    """Polls Interface:status of vm-p until want(status) holds."""
    last: dict[str, str] = {}

    def check() -> bool:
        last.clear()
        last.update(ovs.iface_status(IFACE))
        return want(last)
    try:
        wait_until(check, timeout, 0.3, "Interface:status")
    except TimeoutError:
        raise AssertionError(f"status of {IFACE}: {last}") from None
    return last


def test_pac_enable_status_show_disable(pac: Ovs, topo: Topology) -> None:
    uuid = pac.pac_enable(IFACE, threshold=96000)
    assert pac.pac_uuid(IFACE) == uuid
    wait_status(pac, lambda s: s.get("pac") == "enabled")
    stats = pac.wait_pac_stats(IFACE, lambda s: bool(s))
    if "pac_threshold" in stats:
        assert stats["pac_threshold"] == 96000, stats
    show = pac.pac_show(IFACE)
    assert IFACE in show and "held" in show, show

    pac.pac_disable(IFACE)
    assert pac.pac_uuid(IFACE) is None
    wait_status(pac, lambda s: "pac" not in s)
    pac.wait_pac_stats(IFACE, lambda s: not s)
    topo.transfer(2 * MB).wait(60).assert_exact()


def test_pac_reconfigure_threshold(pac: Ovs, topo: Topology) -> None:
    uuid = pac.pac_enable(IFACE, threshold=96000)
    pac.wait_pac_stats(IFACE, lambda s: s.get("pac_threshold") == 96000)
    pac.pac_set(uuid, threshold=50000)
    pac.wait_pac_stats(IFACE, lambda s: s.get("pac_threshold") == 50000)
    assert "50000" in pac.pac_show(IFACE)
    topo.transfer(5 * MB).wait(60).assert_exact()
    wait_status(pac, lambda s: s.get("pac") == "enabled")


def test_pac_transfer_holds_and_releases_acks(pac: Ovs,
                                              topo: Topology) -> None:
    """Test A: a 50 MB transfer into the VM behind a PAC port with a small
    threshold: byte-exact, and PAC saw, held and released ACKs."""
    pac.pac_enable(IFACE, threshold=20000, **PAC_HOLD_LONE_TRANSFER)
    wait_status(pac, lambda s: s.get("pac") == "enabled")
    result = topo.transfer(50 * MB).wait(timeout=120)
    result.assert_exact()
    print(f"50 MB through PAC (threshold 20000) in {result.seconds:.2f} s")

    # The statistics column is refreshed every 5 s, so a snapshot taken
    # right after the transfer may predate its end: wait for one that
    # counts every byte (pac_rx_bytes counts TCP payload toward the VM).
    stats = pac.wait_pac_stats(
        IFACE, lambda s: s.get("pac_tx_held", 0) > 0 and pac_released(s) > 0
        and s.get("pac_tx_packets", 0) > 0 and s.get("pac_rx_packets", 0) > 0
        and s.get("pac_rx_bytes", 50 * MB) >= 50 * MB)
    print(f"PAC statistics: {stats}")
    # Nothing stays held once the connection is over, and every held ACK
    # was released or dropped as a stale duplicate (the only drop PAC does).
    if "pac_held" in stats:
        stats = pac.wait_pac_stats(IFACE, lambda s: s.get("pac_held") == 0,
                                   20)
        assert stats["pac_tx_held"] == (pac_released(stats)
                                        + stats.get("pac_stale_drops", 0)), \
            stats
    show = pac.pac_show(IFACE)
    assert "held" in show, show
    topo.check_health()


def test_pac_toggle_during_transfer(pac: Ovs, topo: Topology) -> None:
    """Test B: PAC switched off and on and its threshold changed many times
    while a paced transfer runs: nothing lost, no stall, no error."""
    nbytes = 40 * MB
    xfer = topo.transfer(nbytes, rate=5 * MB, idle_timeout=20)
    steps = [
        lambda: pac.pac_enable(IFACE, threshold=20000),
        lambda: pac.pac_set(pac.pac_uuid(IFACE), threshold=50000),
        lambda: pac.pac_disable(IFACE),
        lambda: pac.pac_enable(IFACE, threshold=96000),
        lambda: pac.pac_set(pac.pac_uuid(IFACE), threshold=10000),
        lambda: pac.pac_enable(IFACE, threshold=30000),   # replaces the row
        lambda: pac.pac_disable(IFACE),
    ]
    done = 0
    time.sleep(0.5)
    while xfer.running() and xfer.elapsed() < 90:
        steps[done % len(steps)]()
        done += 1
        time.sleep(0.25)
    in_flight_changes = done
    # End with PAC on for the check below.
    if pac.pac_uuid(IFACE) is None:
        pac.pac_enable(IFACE, threshold=20000)
    result = xfer.wait(timeout=120)
    result.assert_exact()
    print(f"{in_flight_changes} changes during {result.seconds:.1f} s")
    assert in_flight_changes >= 8, (
        f"only {in_flight_changes} changes happened during the transfer")
    assert result.seconds < 60, f"transfer took {result.seconds:.1f} s"
    wait_status(pac, lambda s: s.get("pac") == "enabled")
    topo.transfer(5 * MB).wait(60).assert_exact()
    topo.check_health()


def out_of_range_values(build: OvsBuild) -> list[tuple[str, int]]:
    """(column, value) pairs just outside the integer ranges of the PAC
    table's schema, plus threshold=-5."""
    bad = [("threshold", -5)]
    for name, col in build.pac_table()["columns"].items():
        t = col["type"]
        if not isinstance(t, dict) or "value" in t or t.get("max", 1) != 1:
            continue        # only scalar (optional) columns
        key = t.get("key", t)
        if not isinstance(key, dict) or key.get("type") != "integer":
            continue
        if "minInteger" in key:
            bad.append((name, key["minInteger"] - 1))
        if "maxInteger" in key:
            bad.append((name, key["maxInteger"] + 1))
    if "max_hold" in build.pac_table()["columns"]:
        bad.append(("max_hold", 0))
    return list(dict.fromkeys(bad))


def test_pac_bad_config_refused(pac: Ovs, topo: Topology,
                                build: OvsBuild) -> None:
    """Test C: out-of-range values are refused by ovs-vsctl, nothing is
    written, and the port keeps forwarding."""
    for column, value in out_of_range_values(build):
        proc = pac.vsctl_try("set", "Interface", IFACE, "pac=@p", "--",
                             "--id=@p", "create", "PAC", f"{column}={value}")
        assert proc.returncode != 0, (
            f"ovs-vsctl accepted {column}={value}: {proc.stdout}")
        # ovs-vsctl names the column (ovs-patch/0006), then OVSDB's
        # message with the value and the range.
        assert f"PAC column {column}: constraint violation" in proc.stderr \
            and str(value) in proc.stderr, proc.stderr
        assert pac.pac_uuid(IFACE) is None
        assert pac.vsctl("--columns=_uuid", "list", "PAC") == ""
    assert "pac" not in pac.iface_status(IFACE)
    topo.transfer(5 * MB).wait(60).assert_exact()
    topo.check_health()


@pytest.mark.parametrize("columns,named", [
    ({"mlfq_thresholds": {1: 20000, 2: 10000}}, "mlfq_thresholds"),
    ({"mlfq_thresholds": {1: 20000, 3: 50000}}, "mlfq_thresholds"),
    ({"other_config": {"max-flows": "abc"}}, "other_config:max-flows"),
], ids=["mlfq-decreasing", "mlfq-gap", "max-flows-not-int"])
def test_pac_inconsistent_config_named_in_status(pac: Ovs, topo: Topology,
                                                 columns: dict,
                                                 named: str) -> None:
    """Test C, the part OVSDB cannot check: ovs-vswitchd disables PAC on
    the port, names the column in Interface:status:pac, keeps forwarding,
    and enables PAC once the record is fixed."""
    uuid = pac.pac_enable(IFACE, threshold=50000, **columns)
    status = wait_status(pac, lambda s: s.get("pac", "").startswith("error"))
    assert status["pac"].startswith(f"error: {named}: "), status
    assert pac.pac_stats(IFACE) == {}
    topo.transfer(5 * MB).wait(60).assert_exact()
    column = named.split(":")[0]
    pac.vsctl("clear", "PAC", uuid, column)
    wait_status(pac, lambda s: s.get("pac") == "enabled")
    topo.transfer(5 * MB).wait(60).assert_exact()
    topo.check_health()


def test_pac_bad_config_on_live_row_keeps_old(pac: Ovs,
                                              topo: Topology) -> None:
    """An out-of-range change to an active PAC row is refused and the old
    configuration stays in force."""
    uuid = pac.pac_enable(IFACE, threshold=50000)
    proc = pac.vsctl_try("set", "PAC", uuid, "threshold=-5")
    assert proc.returncode != 0
    assert pac.vsctl("get", "PAC", uuid, "threshold") == "50000"
    pac.wait_pac_stats(IFACE, lambda s: s.get("pac_threshold") == 50000)
    wait_status(pac, lambda s: s.get("pac") == "enabled")
    topo.transfer(5 * MB).wait(60).assert_exact()

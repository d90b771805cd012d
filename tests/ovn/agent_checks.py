"""What the agent tests (test_agent*.py) look at: a logical port plugged on
a chassis, its Interface's PAC row and ovs-pac-status."""

from __future__ import annotations

import json
from typing import Callable, Optional

from testbed.ovn_env import Chassis, OvnCentral, wait_port_bound
from testbed.ovs_env import run, wait_until

TIMEOUT = 10


def make_port(ovn: OvnCentral, ch: Chassis, lsp: str = "vm1",
              iface: str = "vm1-tap", switch: str = "ls1") -> None:
    """NB: logical switch 'switch' (created if new) with port 'lsp'; the
    chassis plugs VM port 'iface' for it."""
    ovn.nbctl("--may-exist", "ls-add", switch)
    ovn.nbctl("lsp-add", switch, lsp)
    ch.add_vm_port(iface, lsp)
    wait_port_bound(ovn, lsp, ch.name, TIMEOUT)


def pac_row(ch: Chassis, iface: str = "vm1-tap") -> Optional[dict]:
    """The PAC row of 'iface' (its columns, _uuid and _version: the latter
    changes with every write), or None."""
    uuid = ch.ovs.pac_uuid(iface)
    if uuid is None:
        return None
    row = ch.ovs.get_columns("PAC", uuid, "_uuid", "threshold",
                             "mlfq_thresholds", "ecn", "max_hold",
                             "other_config", "external_ids")
    select = {"op": "select", "table": "PAC",
              "where": [["_uuid", "==", ["uuid", uuid]]],
              "columns": ["_version"]}
    out = run([ch.build.bin("ovsdb-client"), "transact", ch.ovs.db_sock,
               json.dumps(["Open_vSwitch", select])]).stdout
    rows = json.loads(out)[0]["rows"]
    row["_version"] = rows[0]["_version"][1] if rows else None
    return row


def status(ch: Chassis, iface: str = "vm1-tap") -> Optional[str]:
    ids = ch.ovs.get_columns("Interface", iface, "external_ids")
    return ids["external_ids"].get("ovs-pac-status")


def wait_row(ch: Chassis, pred: Callable[[Optional[dict]], bool],
             iface: str = "vm1-tap") -> Optional[dict]:
    """Waits until pred(PAC row of 'iface') holds; returns the row."""
    last: list[Optional[dict]] = [None]

    def check() -> bool:
        last[0] = pac_row(ch, iface)
        return pred(last[0])
    try:
        wait_until(check, TIMEOUT, 0.2, f"PAC row of {iface}")
    except TimeoutError:
        raise AssertionError(f"PAC row of {iface}: {last[0]}, status "
                             f"{status(ch, iface)!r}") from None
    return last[0]

"""What the tests/vm tests look at: PAC's counters and what it holds now."""

from __future__ import annotations

import re

from testbed.ovs_env import Ovs, wait_until



def live_held(ovs: Ovs, iface: str) -> int:
    """Packets PAC holds now on 'iface' (pac/show asks the datapath)."""
    m = re.search(r"^\s*held: held=(\d+)", ovs.pac_show(iface), re.M)
    return int(m.group(1)) if m else 0


def wait_holding(ovs: Ovs, iface: str, timeout: float = 30) -> int:
    """Waits until PAC holds packets of 'iface'; returns how many."""
    return wait_until(lambda: live_held(ovs, iface), timeout, 0.02,
                      f"PAC holding packets of {iface}")


def wait_port_gone(ovs: Ovs, iface: str, timeout: float = 60) -> None:
    """Waits until 'iface' is no port of br0 and no PAC row is left (a PAC
    row is not a root row: it goes with the last Interface naming it)."""
    wait_until(lambda: iface not in ovs.vsctl("list-ports", "br0").split(),
               timeout, 0.3, f"{iface} removed from br0")
    wait_until(lambda: not ovs.vsctl("--columns=_uuid", "list", "PAC"),
               10, 0.2, "no PAC row left")

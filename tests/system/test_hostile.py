"""Hostile traffic toward the VM on the incast testbed, PAC at its defaults
(no caps lowered): a victim's bulk transfer into the VM keeps its goodput,
and a legitimate client's handshakes with the VM stay short, while the last
sender host attacks the VM's listener (testbed.hostile, the same runs as
`tools/incast hostile`; docs/operator.md, "Security"):

- spoofed SYNs at 10 000 and 50 000 a second (tcp_syncookies=2 in the
  VM: a SYN-ACK for each): their SYN-ACKs' windows would fill the
  threshold; the windows of connections that have sent nothing hold half
  of it at most, and once most of them are wasted PAC sends such SYN-ACKs
  uncharged (pac_handshake_flood);
- 5 000 completed, silent connections a second: their windows go back
  after one dry time, not sixteen;
- 1-byte segments without MSS options every 500 us on 4 connections: each
  is shorter than any MSS and ends its answer.

The reduced configuration of test_incast.py (100 Mbit/s, 100 KB buffer),
where the datapath keeps up with the link and attack alike: at 1 Gbit/s on
the main thread, this machine's datapath is the bottleneck under an attack
for plain OVS too (docs/benchmarks.md, "Hostile traffic").  Margins for a
busy 2-core machine: measured, the victim kept 95.6-96.6 % of its goodput
under every attack but 50 000 SYNs a second, 72-78 % there as with plain
OVS (the SYNs take 24 Mbit/s of the 100, and the attacker a core); the
client's handshakes p99 at most 16 ms, 8 ms of which the bottleneck's full
buffer (plain OVS: 12).
"""

from __future__ import annotations

from typing import Iterator

import pytest

from testbed.hostile import HostileBed, HostileResult
from testbed.incast_testbed import Testbed, TestbedConfig, Workload
from testbed.ovs_env import TOP, OvsBuild

LOG_DIR = TOP / "build" / "test-logs" / "system"
VICTIM = Workload(1, 3, bytes_per_sender=8 << 20, rpc_rps=20)
KEPT = 0.85                     # Of the victim's goodput without an attack.
CONNECT_P99_MS = 50.0


@pytest.fixture(scope="module")
def hostile(build: OvsBuild) -> Iterator[HostileBed]:
    if build.pac_table() is None:
        pytest.skip("PAC not built yet")
    tb = Testbed(build, TestbedConfig(rate_mbit=100, buffer_bytes=100_000,
                                      hosts=4))
    hb = None
    try:
        tb.setup()
        hb = HostileBed(tb).prepare()
        yield hb
        tb.ovs.assert_healthy()
    except BaseException:
        tb.save_logs(LOG_DIR / "hostile")
        raise
    finally:
        if hb:
            hb.close()
        tb.close()


@pytest.fixture(scope="module")
def runs(hostile: HostileBed) -> dict[tuple[str, str], HostileResult]:
    """Each attack once with PAC, and with plain OVS where the link
    itself limits the victim (50 000 SYNs a second)."""
    out = {}
    for attack, mode in (("none", "pac"), ("syn-10000", "pac"),
                         ("syn-50000", "pac"), ("syn-50000", "off"),
                         ("silent-5000", "pac"), ("drip", "pac")):
        r = hostile.run(mode, attack, VICTIM)
        print(r.result_line())
        out[attack, mode] = r
    return out


def check_victim_exact(r: HostileResult) -> None:
    v = r.victim
    assert v.errors == 0 and v.client_exit == 0, v
    assert v.bytes == VICTIM.bytes_per_sender * VICTIM.rounds, v


def check_client(r: HostileResult, p99_ms: float = CONNECT_P99_MS) -> None:
    """The legitimate client connected all along, none failed (before the
    pool and the flood mode 8-12 failed a run, the slowest took a second),
    p99 short."""
    assert r.connects > 50, r
    assert r.connect_failed == 0, r
    assert r.connect_p99_ms <= p99_ms, r


@pytest.mark.parametrize("attack", ["syn-10000", "silent-5000", "drip"])
def test_victim_keeps_goodput_and_client_connects(runs, attack) -> None:
    calm = runs["none", "pac"]
    r = runs[attack, "pac"]
    check_victim_exact(r)
    assert r.attack_rate > 0.8 * {"syn-10000": 10000, "silent-5000": 5000,
                                  "drip": 8000}[attack], r.attacker
    assert r.victim.goodput_mbps >= KEPT * calm.victim.goodput_mbps, (
        r.result_line(), calm.result_line())
    check_client(r)


def test_syn_flood_50000_victim_goes_on(runs) -> None:
    """The SYNs take a quarter of the link, and the attacker's Python a
    whole core of the two: the victim's goodput is the CPU's, for plain
    OVS too, and PAC tracks 50 000 new connections a second.  Seen: PAC
    69-74 Mbit/s against plain OVS's 72-74 on an idle machine, 52 against
    72 once in the CI's run.  Asserted: the victim goes on at half plain
    OVS's goodput at least (before the pool and the flood mode it stopped
    dead, 0 Mbit/s), and the client's handshakes complete, p99 within
    150 ms (seen: 12-60 ms; plain OVS 12-16 ms)."""
    r, plain = runs["syn-50000", "pac"], runs["syn-50000", "off"]
    check_victim_exact(r)
    assert r.attack_rate > 40000, r.attacker
    assert r.victim.goodput_mbps >= 0.5 * plain.victim.goodput_mbps, (
        r.result_line(), plain.result_line())
    check_client(r, p99_ms=150.0)


def test_syn_flood_seen_as_one(runs) -> None:
    """Under the floods PAC found most accepted connections' windows wasted
    and sent SYN-ACKs uncharged; what it held stayed small."""
    for attack in ("syn-10000", "syn-50000", "silent-5000"):
        pac = runs[attack, "pac"].victim.pac
        assert pac.get("pac_handshakes_wasted", 0) > 0, (attack, pac)
        assert pac.get("pac_handshakes_uncharged", 0) > 0, (attack, pac)
        assert pac.get("pac_max_held_seen", 0) < 4096, (attack, pac)

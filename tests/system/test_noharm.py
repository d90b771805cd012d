"""Do no harm, asserted on the incast testbed (testbed.incast_testbed) in the
reduced configuration of test_incast.py (100 Mbit/s, 100 KB buffer): what
PAC must not do to the VM's other traffic and to a VM whose TCP is tuned
for incast.  The figures at full rate are tools/incast noharm's
(docs/benchmarks.md, "Do no harm").

- A short RPC of the VM (a new connection, a 2 KB answer) that starts
  during an incast is not held behind the incast's budget: none of 50 a
  second retransmits anything or takes an RTOmin (the new connections'
  reserve, other_config:new-flow-reserve).  Without the reserve, the same
  RPCs wait for the incast's answers in flight.
- A VM whose RTOmin is 10 ms (a route attribute, as tenants set it) does
  not time out while PAC holds its requests for up to a round (1.4 s
  here): they are copied (other_config:request-copy-us, 3 ms, and as soon
  as they are held when PAC foresees a long wait); without copies it
  times out.

Margins: measured on the 2-core machine while nothing else ran and again
beside the other system suites; see each test.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from testbed.incast_testbed import Testbed, TestbedConfig, Workload
from testbed.ovs_env import TOP, OvsBuild

LOG_DIR = TOP / "build" / "test-logs" / "system"
BYTES = 65536


@pytest.fixture(scope="module")
def bed(build: OvsBuild) -> Iterator[Testbed]:
    if build.pac_table() is None:
        pytest.skip("PAC not built yet")
    tb = Testbed(build, TestbedConfig(rate_mbit=100, buffer_bytes=100_000,
                                      hosts=8))
    try:
        tb.setup()
        yield tb
        tb.ovs.assert_healthy()
    except BaseException:
        tb.save_logs(LOG_DIR / "noharm")
        raise
    finally:
        tb.close()


def run_with(bed: Testbed, mode: str, wl: Workload, options: dict):
    """bed.run(mode, wl) with PAC other_config 'options' for that run."""
    try:
        bed.cfg.pac_other_config = dict(options)
        return bed.run(mode, wl)
    finally:
        bed.cfg.pac_other_config = {}


def test_rpcs_during_an_incast_do_not_wait_for_it(bed: Testbed) -> None:
    """64 senders x 64 KB, 4 rounds (about 1.4 s), RPCs at 50 a second
    beside them.  With PAC (the defaults) every RPC completes, none
    retransmits (its SYN or its request), and none takes 100 ms (an RTO
    takes 200 ms, a SYN's 1 s); in runs seen the slowest took a few ms.
    Without the reserve (new-flow-reserve=0) an RPC waits for the room
    the incast's answers hold: the slowest took tens of ms in every run
    seen, so more than the slowest with it."""
    wl = Workload(64, 4, bytes_per_sender=BYTES, rpc_rps=50)
    with_reserve = run_with(bed, "pac", wl, {})
    without = run_with(bed, "pac", wl, {"new-flow-reserve": "0"})
    print(with_reserve.result_line(), with_reserve.rpcs,
          with_reserve.rpc_p99_ms, with_reserve.rpc_max_ms)
    print(without.result_line(), without.rpcs, without.rpc_p99_ms,
          without.rpc_max_ms)
    assert with_reserve.errors == 0 and with_reserve.corrupt == 0
    assert with_reserve.rpcs >= 40, with_reserve
    assert with_reserve.rpc_failed == 0, with_reserve
    assert with_reserve.rpc_retransmitted == 0, with_reserve
    assert with_reserve.rpc_max_ms < 100, with_reserve
    assert without.rpc_failed == 0, without
    assert without.rpc_max_ms > with_reserve.rpc_max_ms, (without,
                                                          with_reserve)


def test_vm_with_rtomin_10ms_does_not_time_out(bed: Testbed) -> None:
    """256 senders x 64 KB, 3 rounds: the last requests of a round wait
    about 1.4 s.  The VM's RTOmin is 10 ms.  With copies (the defaults)
    it does not time out after the first round (the cold round is not
    asserted, as in test_incast.py: 0-1 VM timeouts there in runs seen);
    without copies (request-copy-us=0) it times out in every round (tens
    of times a run in every run seen).  Every byte arrives either way."""
    wl = Workload(256, 3, bytes_per_sender=BYTES)
    try:
        bed.set_rto_min(200, 10)
        default = run_with(bed, "pac", wl, {})
        without = run_with(bed, "pac", wl, {"request-copy-us": "0"})
    finally:
        bed.set_rto_min(200, None)
    print(default.result_line(), default.round_vm_timeouts,
          without.result_line(), without.round_vm_timeouts)
    for r in (default, without):
        assert r.errors == 0 and r.corrupt == 0, r
        assert r.bytes == 256 * BYTES * 3, r
    assert sum(default.round_vm_timeouts[1:]) == 0, default
    assert default.setup_vm_timeouts == 0, default
    assert default.pac["pac_request_copies"] > 0, default.pac
    assert sum(without.round_vm_timeouts[1:]) > 0, without

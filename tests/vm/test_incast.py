"""A short incast into a libvirt guest (testbed.incast_vm.VmTestbed, what
`tools/incast demo --vm` runs): the guest's own incast client asks 16
senders for 64 KB each, 2 rounds with plain OVS and 2 with PAC on its tap
port.  Checks that every round is byte-complete, that plain OVS makes the
senders time out while the guest's own TCP (TcpExt TCPTimeouts in the
guest's /proc/net/netstat, read by its client) does not with PAC, and that
PAC held and released the guest's ACKs.  Margins: the senders timed out
in every plain OVS round of every run seen (16 x 10 initial windows are
23 x the 10 KB buffer); the guest's TCP timed out in no PAC run.  No
goodput is asserted (docs/benchmarks.md has the figures)."""

from __future__ import annotations

from testbed.guest import Guest
from testbed.incast_testbed import TestbedConfig, Workload
from testbed.incast_vm import VM_BUFFER_BYTES_PER_MBIT, VM_RATE_MBIT, VmTestbed
from testbed.ovs_env import OvsBuild, pac_released

from conftest import LOG_DIR

SENDERS = 16
ROUNDS = 2
BYTES = 65536


def test_incast_into_guest_off_and_pac(build: OvsBuild, image: Guest,
                                       request) -> None:
    cfg = TestbedConfig(rate_mbit=VM_RATE_MBIT,
                        buffer_bytes=int(VM_RATE_MBIT
                                         * VM_BUFFER_BYTES_PER_MBIT),
                        hosts=4, vm=True)
    wl = Workload(SENDERS, ROUNDS, bytes_per_sender=BYTES)
    tb = VmTestbed(build, cfg, image=image)
    ok = False
    try:
        tb.setup()
        for mode in ("off", "pac"):
            r = tb.run(mode, wl)
            print(r.result_line() + f" drops={r.bottleneck_drops} "
                  f"tap_drops={r.vm_port_drops} pac={r.pac}")
            assert r.errors == 0 and r.client_exit == 0, r
            assert r.rounds == ROUNDS, r
            assert r.bytes == SENDERS * BYTES * ROUNDS, r
            if mode == "off":
                assert r.sender_rtos > 0, r
            else:
                assert r.vm_timeouts == 0 and r.setup_vm_timeouts == 0, r
                # The PAC row of the guest's tap held the guest's ACKs and
                # let them go again.
                assert r.pac.get("pac_tx_held", 0) > 0, r.pac
                assert pac_released(r.pac) > 0, r.pac
        ok = True
    finally:
        # The testbed is no suite topology (pytest_support): its logs are
        # kept here when the test failed.
        if not ok:
            where = LOG_DIR / request.node.name
            tb.save_logs(where)
            print(f"logs saved in {where}")
        tb.close()

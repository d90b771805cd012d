"""pytest fixtures of the libvirt tests (see README.md in this directory).

  build   (session)  OvsBuild of a private copy of the patched OVS build's
                     programs and schema (as in tests/system).
  image   (session)  the guest's kernel and initramfs (testbed.guest,
                     cached in build/guest/).
  topo    (function) VmTopology set up: namespace sw with ovs-vswitchd (br0,
                     netdev) and libvirtd (private mount namespace, its own
                     configuration and socket), namespace peer (10.0.0.1).
                     At teardown: guests destroyed, daemons checked (alive,
                     no ERR/EMER), logs and consoles copied to
                     build/test-logs/vm/<test>/ if the test failed,
                     everything removed.
  hugepages (session) 2 MB hugepages for DPDK, given back at the end.
  vhost   (function) VhostVmTopology set up: ovs-vswitchd with DPDK
                     (--no-pci, private hugetlbfs, one PMD thread) in
                     namespace sw with libvirtd, the peer (10.0.0.1) on a
                     net_af_packet port; guests on dpdkvhostuserclient
                     ports.  Teardown as for topo.

What the tests need and this machine lacks (libvirtd, virsh, qemu,
busybox-static, the kernel package; tools/install-deps installs them) makes
every test fail with the reason: nothing is skipped silently.  tools/test
runs this suite unless PAC_VM=no.

At the end of the session one line "vm: N passed, N failed, N skipped" is
printed for tools/test's counting (errors count as failures).
"""

from __future__ import annotations

import os
from typing import Iterator

import pytest

from testbed.dpdk_env import DpdkUnavailable, Hugepages, cleanup_stale_mounts
from testbed.guest import Guest, GuestBuildError, build as build_guest
from testbed.libvirt_env import (VhostVmTopology, VmTopology,
                                 cleanup_stale_libvirt, missing_programs)
from testbed.ovs_env import TOP, OvsBuild, build_snapshot
from testbed.pytest_support import (  # noqa: F401 (a pytest hook)
    pytest_runtest_makereport, topology_for_test, write_summary)

LOG_DIR = TOP / "build" / "test-logs" / "vm"


@pytest.fixture(scope="session")
def build() -> Iterator[OvsBuild]:
    if os.geteuid() != 0:
        pytest.fail("tests/vm need root (namespaces, libvirtd, OVS)")
    missing = missing_programs()
    if missing:
        pytest.fail("tests/vm need: " + ", ".join(missing)
                    + " (tools/install-deps)")
    for line in cleanup_stale_libvirt():
        print(f"removed leftover {line}")
    with build_snapshot() as build:
        if build.pac_table() is None:
            pytest.fail(f"the schema of {build.origin} has no PAC table")
        yield build


@pytest.fixture(scope="session")
def image() -> Guest:
    try:
        return build_guest()
    except GuestBuildError as e:
        pytest.fail(f"cannot build the guest: {e}")



@pytest.fixture
def topo(build: OvsBuild, image: Guest, request) -> Iterator[VmTopology]:
    with topology_for_test(VmTopology(build, image), request,
                           LOG_DIR) as t:
        yield t


@pytest.fixture(scope="session")
def hugepages() -> Iterator[Hugepages]:
    """Hugepages for the session's DPDK ovs-vswitchd; nr_hugepages is
    lowered again by what was added, at the end of the session."""
    for line in cleanup_stale_mounts():
        print(f"removed leftover {line}")
    hp = Hugepages()
    try:
        yield hp
    finally:
        hp.restore()


@pytest.fixture
def vhost(build: OvsBuild, image: Guest, hugepages: Hugepages,
          request) -> Iterator[VhostVmTopology]:
    """VhostVmTopology set up (OVS with DPDK, peer on net_af_packet,
    libvirtd); DPDK that cannot initialise fails the test with the
    reason.  Teardown as for 'topo'."""
    try:
        with topology_for_test(VhostVmTopology(build, image, hugepages),
                               request, LOG_DIR) as t:
            yield t
    except DpdkUnavailable as e:
        pytest.fail(f"DPDK cannot initialise here: {e}")


def pytest_terminal_summary(terminalreporter) -> None:
    write_summary(terminalreporter, "vm")

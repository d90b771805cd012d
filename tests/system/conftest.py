"""pytest fixtures of the system tests (see README.md in this directory).

  build   (session)  OvsBuild of a private copy of the patched OVS build's
                     programs and schema (from build/ovs or $OVS_BUILDDIR,
                     waited for if it is being rebuilt).
  topo    (function) Topology set up: OVS in its own namespace, br0
                     (netdev), vm-p -> namespace vm (10.0.0.2), peer-p ->
                     namespace peer (10.0.0.1).  At teardown it checks that
                     the daemons still run and logged no ERR/EMER, copies the
                     logs to build/test-logs/system/<test>/ if the test
                     failed, and removes everything.
  ovs     (function) topo.ovs.
  pac     (function) like ovs, but skips the test when the built schema has
                     no PAC table.

At the end of the session one line "system: N passed, N failed, N skipped"
is printed for tools/test's counting (errors count as failures).
"""

from __future__ import annotations

import os
from typing import Iterator

import pytest

from testbed.ovs_env import TOP, Ovs, OvsBuild, Topology, build_snapshot
from testbed.pytest_support import (  # noqa: F401 (a pytest hook)
    pytest_runtest_makereport, topology_for_test, write_summary)

LOG_DIR = TOP / "build" / "test-logs" / "system"


@pytest.fixture(scope="session")
def build() -> Iterator[OvsBuild]:
    """A private copy of the build's programs and schema (others may
    rebuild build/ovs while the tests run)."""
    if os.geteuid() != 0:
        pytest.skip("system tests need root (namespaces, veth, OVS)")
    with build_snapshot() as build:
        yield build


@pytest.fixture
def topo(build: OvsBuild, request) -> Iterator[Topology]:
    with topology_for_test(Topology(build), request, LOG_DIR) as t:
        yield t


@pytest.fixture
def ovs(topo: Topology) -> Ovs:
    return topo.ovs


@pytest.fixture
def pac(build: OvsBuild, request) -> Ovs:
    if build.pac_table() is None:
        pytest.skip("PAC not built yet: the schema of "
                    f"{build.origin} has no PAC table")
    return request.getfixturevalue("topo").ovs


def pytest_terminal_summary(terminalreporter) -> None:
    write_summary(terminalreporter, "system")

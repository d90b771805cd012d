"""pytest fixtures of the OVN harness tests (see README.md in this
directory).

  build            (session)  OvsBuild of a private copy of the patched OVS
                              build's programs and schema (from build/ovs or
                              $OVS_BUILDDIR, waited for if it is being
                              rebuilt).  Skips every test when the OVN
                              programs or schemas are not installed.
  ovn              (function) OvnCentral started: NB and SB ovsdb-servers,
                              ovn-northd, in a private directory.
  chassis_factory  (function) make(name) -> a started Chassis on `ovn`; the
                              n-th chassis of a test gets encap IP
                              127.0.0.<n>.
  chassis          (function) chassis_factory("hv1").

At teardown each fixture checks that its daemons still run and logged no
ERR/EMER (except the regexes in .log_ignore), copies the logs to
build/test-logs/ovn/<test>/ if the test failed, and stops and removes
everything.  At the end of the session one line
"ovn: N passed, N failed, N skipped" is printed (errors count as
failures).
"""

from __future__ import annotations

import os
from typing import Callable, Iterator

import pytest

from testbed.ovn_env import Chassis, OvnCentral, PacAgent, ovn_missing
from testbed.ovs_env import TOP, OvsBuild, build_snapshot
from testbed.pytest_support import (  # noqa: F401 (a pytest hook)
    pytest_runtest_makereport, request_failed, write_summary)

LOG_DIR = TOP / "build" / "test-logs" / "ovn"


@pytest.fixture(scope="session")
def build() -> Iterator[OvsBuild]:
    """A private copy of the build's programs and schema (others may
    rebuild build/ovs while the tests run)."""
    missing = ovn_missing()
    if missing:
        pytest.skip(f"OVN not installed ({', '.join(missing)}): "
                    "run tools/install-deps")
    if os.geteuid() != 0:
        pytest.fail("tests/ovn need root (namespaces, veth, OVS)")
    with build_snapshot() as build:
        yield build


@pytest.fixture
def ovn(build: OvsBuild, request) -> Iterator[OvnCentral]:
    central = OvnCentral(build)
    ok = False
    try:
        central.start()
        yield central
        central.assert_healthy()
        ok = not request_failed(request)
    finally:
        if not ok:
            central.save_logs(LOG_DIR / request.node.name / "central")
            print(f"logs saved in {LOG_DIR / request.node.name}")
        central.close()


@pytest.fixture
def chassis_factory(ovn: OvnCentral,
                    request) -> Iterator[Callable[[str], Chassis]]:
    made: list[Chassis] = []

    def make(name: str) -> Chassis:
        ch = Chassis(ovn, name, encap_ip=f"127.0.0.{len(made) + 1}")
        made.append(ch)
        return ch.start()

    ok = False
    try:
        yield make
        for ch in made:
            ch.assert_healthy()
        ok = not request_failed(request)
    finally:
        for ch in reversed(made):
            try:
                if not ok:
                    ch.save_logs(LOG_DIR / request.node.name / ch.name)
            finally:
                ch.close()


@pytest.fixture
def chassis(chassis_factory: Callable[[str], Chassis]) -> Chassis:
    return chassis_factory("hv1")


@pytest.fixture
def agent_factory(chassis_factory: Callable[[str], Chassis],
                  request) -> Iterator[Callable[..., PacAgent]]:
    """Starts ovs-pac-agent on a chassis (agent_factory(chassis, nb=True,
    nb_remote=None, sb_remote=None), as PacAgent takes them); at teardown
    each must still run with no ERR/EMER in its log."""
    made: list[PacAgent] = []

    def make(ch: Chassis, nb: bool = True, **remotes) -> PacAgent:
        agent = PacAgent(ch, nb, **remotes)
        made.append(agent)
        return agent.start()

    ok = False
    try:
        yield make
        for agent in made:
            agent.assert_healthy()
        ok = not request_failed(request)
    finally:
        for agent in made:
            if not ok:
                print(f"--- {agent.chassis.name} ovs-pac-agent log:\n"
                      + agent.log()[-4000:])
            agent.close()


def pytest_terminal_summary(terminalreporter) -> None:
    write_summary(terminalreporter, "ovn")

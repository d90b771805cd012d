"""What the pytest suites that start the testbed (tests/system, tests/vm,
tests/ovn) share: a topology set up for one test and torn down after it,
with its logs kept when the test failed, and the one summary line per
suite that tools/test counts.

Each suite's conftest.py also installs pytest_runtest_makereport() from
here, which records a test's report on its item, so that a fixture can
tell after the test whether it failed."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Protocol, TypeVar

import pytest


class SuiteTopology(Protocol):
    """What topology_for_test() needs of a topology."""

    def setup(self) -> None: ...
    def check_health(self) -> None: ...
    def save_logs(self, where: Path) -> None: ...
    def teardown(self) -> None: ...


T = TypeVar("T", bound=SuiteTopology)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keeps each phase's report on the test item (item.rep_call, ...)."""
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)


def request_failed(request) -> bool:
    """Whether the test of fixture request 'request' failed (its call
    phase; a test that did not get to run counts as failed)."""
    rep = getattr(request.node, "rep_call", None)
    return rep is not None and rep.failed


@contextmanager
def topology_for_test(topo: T, request, log_dir: Path) -> Iterator[T]:
    """Sets 'topo' up for the test of 'request' and yields it; afterwards
    checks that its daemons are healthy, keeps its logs in
    log_dir/<test name> if the test (or that check) failed, and tears it
    down whatever happened."""
    ok = False
    try:
        topo.setup()
        yield topo
        topo.check_health()
        ok = not request_failed(request)
    finally:
        if not ok:
            where = log_dir / request.node.name
            topo.save_logs(where)
            print(f"logs saved in {where}")
        topo.teardown()


def write_summary(terminalreporter, suite: str) -> None:
    """Writes "SUITE: N passed, N failed, N skipped", the line tools/test
    counts; errors count as failures."""
    stats = terminalreporter.stats
    bad = {r.nodeid for k in ("failed", "error") for r in stats.get(k, [])}
    good = {r.nodeid for r in stats.get("passed", [])} - bad
    skipped = {r.nodeid for r in stats.get("skipped", [])} - bad - good
    terminalreporter.write_line(
        f"{suite}: {len(good)} passed, {len(bad)} failed, "
        f"{len(skipped)} skipped")

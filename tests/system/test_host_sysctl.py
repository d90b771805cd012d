"""RaisedSysctl (tools/testbed/host_sysctl.py): the global sysctl that
testbeds raise while they run is put back when the last one lets go, and
never over a value someone else set.

The sysctl itself is not written here: other suites' testbeds may hold
the real one while these tests run, so each test gives its RaisedSysctl
objects one stand-in value (read and written through _read() and
_write()) and a private state directory; the locking and the state file's
handling are the real ones.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from testbed import host_sysctl
from testbed.host_sysctl import RaisedSysctl, softnet_drops

KEY = "net.core.netdev_max_backlog"


class Machine:
    """One stand-in sysctl value, shared by the RaisedSysctl objects that
    make() returns."""

    def __init__(self, value: int):
        self.value = value

    def make(self, want: int) -> RaisedSysctl:
        raised = RaisedSysctl(KEY, want)
        raised._read = lambda: self.value
        raised._write = lambda v: setattr(self, "value", v)
        return raised


@pytest.fixture(autouse=True)
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(host_sysctl, "STATE_DIR", tmp_path)
    return tmp_path


def test_raised_while_held_put_back_after_the_last() -> None:
    m = Machine(1000)
    a, b = m.make(10_000), m.make(10_000)
    a.acquire()
    assert m.value == 10_000
    b.acquire()
    a.release()
    assert m.value == 10_000, "b still holds it"
    b.release()
    assert m.value == 1000


def test_a_higher_value_is_left_alone() -> None:
    m = Machine(50_000)
    a = m.make(10_000)
    a.acquire()
    assert m.value == 50_000
    a.release()
    assert m.value == 50_000


def test_a_value_changed_meanwhile_stays() -> None:
    m = Machine(1000)
    a = m.make(10_000)
    a.acquire()
    m.value = 20_000            # The operator, while the testbed runs.
    a.release()
    assert m.value == 20_000


def test_a_dead_holder_is_forgotten(state_dir: Path) -> None:
    m = Machine(1000)
    dead = m.make(10_000)
    dead.acquire()
    # A run that died holding it: its process is gone, its entry stays.
    proc = subprocess.Popen(["true"])
    proc.wait()
    state = dead.state_path.read_text().replace(
        dead.token.split(":")[0] + ":", f"{proc.pid}:")
    dead.state_path.write_text(state)
    assert m.value == 10_000

    b = m.make(10_000)
    b.acquire()
    b.release()
    assert m.value == 1000, "the value from before the dead run"
    assert not dead.state_path.exists()


def test_a_reused_pid_is_not_a_holder() -> None:
    m = Machine(1000)
    a = m.make(10_000)
    a.acquire()
    # The pid is alive (ours) but names a process started at another time.
    pid, start, rest = a.token.split(":")
    a.state_path.write_text(a.state_path.read_text().replace(
        a.token, f"{pid}:{int(start) + 1}:{rest}"))
    b = m.make(10_000)
    b.acquire()
    b.release()
    assert m.value == 1000


def test_a_second_holder_may_raise_further() -> None:
    m = Machine(1000)
    a, b = m.make(10_000), m.make(20_000)
    a.acquire()
    b.acquire()
    assert m.value == 20_000
    b.release()
    a.release()
    assert m.value == 1000


def test_release_without_acquire_changes_nothing() -> None:
    m = Machine(1000)
    a = m.make(10_000)
    a.acquire()
    m.make(10_000).release()
    assert m.value == 10_000
    assert a.token in a.state_path.read_text()
    a.release()
    assert m.value == 1000


def test_a_broken_state_file_is_started_afresh() -> None:
    m = Machine(1000)
    a = m.make(10_000)
    a.state_path.parent.mkdir(parents=True, exist_ok=True)
    a.state_path.write_text('{"holders": [7], "orig": "x"}')
    a.acquire()
    a.release()
    assert m.value == 1000


def test_softnet_drops_sums_the_second_column(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stat = tmp_path / "softnet_stat"
    stat.write_text("0000abcd 0000001a 00000000\n"
                    "00001234 00000100 00000002\n")
    monkeypatch.setattr(host_sysctl, "SOFTNET_STAT", stat)
    assert softnet_drops() == 0x1a + 0x100

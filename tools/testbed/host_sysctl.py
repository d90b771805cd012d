"""A global sysctl that testbeds raise while they run and give back.

Some of the kernel's limits are global, not per network namespace (e.g.
net.core.netdev_max_backlog), and the testbed needs them higher than a
2-core machine's defaults while its links carry traffic.  RaisedSysctl
raises one for as long as at least one testbed on the machine holds it,
and puts back the value it found when the last one lets go, unless someone
else changed it meanwhile (then that value stays).  The holders are listed
in a state file in a directory of root's under /run, each with its pid and
the process's start time, so that a run that died without letting go does
not keep the value raised for ever: the next testbed forgets holders whose
process is gone (or whose pid now names another process).

softnet_drops() reads how many packets the kernel dropped because a CPU's
backlog was full (/proc/net/softnet_stat, all CPUs): losses on the way
between namespaces that no switch of the experiment made.
"""

from __future__ import annotations

import fcntl
import json
import os
import uuid
from pathlib import Path

from .ovs_env import proc_stat, run

# Root's alone: /run/lock is writable by everyone, and root writes back
# the value the state file gives.
STATE_DIR = Path("/run/ovspac")
SOFTNET_STAT = Path("/proc/net/softnet_stat")


def _start_time(pid: int) -> str:
    """The process's start time (clock ticks after boot, field 22 of
    proc(5)), '' if there is no such process or it is a zombie."""
    fields = proc_stat(pid)
    return "" if fields is None or fields[0] == "Z" else fields[19]


def _token() -> str:
    pid = os.getpid()
    return f"{pid}:{_start_time(pid)}:{uuid.uuid4().hex}"


def _holder_alive(token: str) -> bool:
    try:
        pid, start, _ = token.split(":")
        return bool(start) and _start_time(int(pid)) == start
    except ValueError:
        return False


class RaisedSysctl:
    """Holds sysctl 'key' at 'want' or more while acquired (see the module
    docstring).  acquire() and release() may each be called once; as a
    context manager it is held for the block."""

    def __init__(self, key: str, want: int):
        self.key = key
        self.want = want
        self.token = _token()
        stem = key.replace(".", "-")
        self.lock_path = STATE_DIR / f"ovspac-{stem}.lock"
        self.state_path = STATE_DIR / f"ovspac-{stem}.json"
        self.held = False

    def _read(self) -> int:
        return int(run(["sysctl", "-n", self.key]).stdout)

    def _write(self, value: int) -> None:
        run(["sysctl", "-qw", f"{self.key}={value}"])

    def _load(self) -> dict:
        try:
            state = json.loads(self.state_path.read_text())
            state["holders"] = [h for h in state.get("holders", [])
                                if isinstance(h, str) and _holder_alive(h)]
            int(state["orig"]), int(state["raised_to"])
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return {}
        return state

    def _store(self, state: dict) -> None:
        """Writes 'state' whole or not at all (a new file renamed over
        the old), or removes it when nobody holds the value."""
        if state.get("holders"):
            tmp = self.state_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(state))
            os.replace(tmp, self.state_path)
        else:
            self.state_path.unlink(missing_ok=True)

    def _open_lock(self):
        STATE_DIR.mkdir(mode=0o700, exist_ok=True)
        return open(self.lock_path, "a")

    def acquire(self) -> None:
        with self._open_lock() as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            state = self._load()
            now = self._read()
            if not state.get("holders"):
                # Nobody holds it: 'now' is the machine's own value, unless
                # a run that died left it raised.
                orig = (state["orig"] if state.get("raised_to") == now
                        else now)
                state = {"orig": orig, "raised_to": now, "holders": []}
            state["holders"].append(self.token)
            raise_it = now < self.want
            if raise_it:
                state["raised_to"] = self.want
            # Recorded before it is written: a run killed in between leaves
            # a state from which the next one puts back 'orig'.
            self._store(state)
            if raise_it:
                self._write(self.want)
            self.held = True

    def __enter__(self) -> "RaisedSysctl":
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def release(self) -> None:
        if not self.held:
            return
        self.held = False
        with self._open_lock() as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            state = self._load()
            holders = [h for h in state.get("holders", []) if h != self.token]
            if not holders and state:
                if self._read() == state.get("raised_to"):
                    self._write(state["orig"])
            state["holders"] = holders
            self._store(state)


def softnet_drops() -> int:
    """Packets dropped so far because a CPU's input backlog was full (the
    second column of /proc/net/softnet_stat, summed over CPUs)."""
    total = 0
    for line in SOFTNET_STAT.read_text().splitlines():
        total += int(line.split()[1], 16)
    return total

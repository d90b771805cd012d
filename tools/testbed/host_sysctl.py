"""A global sysctl that testbeds raise while they run and give back.

Some of the kernel's limits are global, not per network namespace (e.g.
net.core.netdev_max_backlog), and the testbed needs them higher than a
2-core machine's defaults while its links carry traffic.  RaisedSysctl
raises one for as long as at least one testbed on the machine holds it,
and puts back the value it found when the last one lets go, unless someone
else changed it meanwhile (then that value stays).  The holders are listed
in a state file under /run, with their pids, so that a run that died
without letting go does not keep the value raised for ever: the next
testbed forgets holders whose process is gone.

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

from .ovs_env import run

STATE_DIR = Path("/run/lock")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RaisedSysctl:
    """Holds sysctl 'key' at 'want' or more while acquired (see the module
    docstring).  acquire() and release() may each be called once."""

    def __init__(self, key: str, want: int):
        self.key = key
        self.want = want
        self.token = f"{os.getpid()}:{uuid.uuid4().hex}"
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
        except (OSError, ValueError):
            return {}
        state["holders"] = [h for h in state.get("holders", [])
                            if _pid_alive(int(h.split(":")[0]))]
        return state

    def _store(self, state: dict) -> None:
        if state.get("holders"):
            self.state_path.write_text(json.dumps(state))
        else:
            self.state_path.unlink(missing_ok=True)

    def acquire(self) -> None:
        with open(self.lock_path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            state = self._load()
            now = self._read()
            if not state.get("holders"):
                # Nobody holds it: 'now' is the machine's own value, unless
                # a run that died left it raised.
                orig = (state["orig"] if state.get("raised_to") == now
                        else now)
                state = {"orig": orig, "raised_to": now, "holders": []}
            if now < self.want:
                self._write(self.want)
                state["raised_to"] = self.want
            state["holders"].append(self.token)
            self._store(state)
            self.held = True

    def release(self) -> None:
        if not self.held:
            return
        self.held = False
        with open(self.lock_path, "a") as lock:
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
    with open("/proc/net/softnet_stat") as f:
        for line in f:
            total += int(line.split()[1], 16)
    return total

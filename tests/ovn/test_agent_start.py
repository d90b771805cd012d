"""ovs-pac-agent's start, as an OVS daemon's: what stops it starting ends
the process with one line on stderr and exit status 1, in the foreground
and under --detach (whose parent waits for the child's start-up); it
exits 0 under --detach only once it follows its databases; --version."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Iterator, Optional

import pytest

from testbed.ovn_env import AGENT, AGENT_PYTHON, Chassis, Daemon, OvnCentral
from testbed.ovs_env import OvsBuild, run, wait_until

STOCK_SCHEMA = Path("/usr/share/openvswitch/vswitch.ovsschema")


def agent_cmd(workdir: Path, *args: str) -> list[str]:
    """The agent with its files in 'workdir'."""
    return [AGENT_PYTHON, str(AGENT), f"--profiles={workdir}/profiles.conf",
            f"--unixctl={workdir}/agent.ctl", "--no-chdir", "-vconsole:off",
            *args]


def run_agent(workdir: Path, *args: str, timeout: float = 30,
              env: Optional[dict] = None) -> subprocess.CompletedProcess:
    return subprocess.run(agent_cmd(workdir, *args), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout,
                          env=env)


def assert_fails(proc: subprocess.CompletedProcess, words: str) -> str:
    """The agent exited 1 with one line on stderr, which says 'words'."""
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("ovs-pac-agent: "), lines[0]
    assert words in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def stock_db(build: OvsBuild, tmp_path: Path) -> Iterator[str]:
    """An ovsdb-server on a database of the stock Open vSwitch schema
    (Debian's, no PAC table); yields its remote."""
    if not STOCK_SCHEMA.exists():
        pytest.skip(f"{STOCK_SCHEMA} not installed (openvswitch-common)")
    schema = json.loads(STOCK_SCHEMA.read_text())
    assert "PAC" not in schema["tables"], "the stock schema has PAC"
    run([build.bin("ovsdb-tool"), "create", str(tmp_path / "conf.db"),
         str(STOCK_SCHEMA)])
    server = Daemon("ovsdb-server", tmp_path,
                    [build.bin("ovsdb-server"), str(tmp_path / "conf.db"),
                     f"--remote=punix:{tmp_path}/db.sock"],
                    dict(os.environ), build.bin("ovs-appctl"))
    try:
        server.start()
        yield f"unix:{tmp_path}/db.sock"
    finally:
        server.stop()


def kill_pidfile(pidfile: Path) -> None:
    """Ends the detached agent of 'pidfile', if it runs."""
    try:
        os.kill(int(pidfile.read_text()), signal.SIGTERM)
    except (OSError, ValueError):
        pass


def test_stock_schema_fails_loudly(stock_db: str, tmp_path: Path) -> None:
    """A database without the PAC table: exit 1 and one clear line, under
    --detach too (no exit 0, no traceback); the log says it as well."""
    for detach in ([], ["--detach", f"--pidfile={tmp_path}/agent.pid",
                        f"--log-file={tmp_path}/agent.log"]):
        proc = run_agent(tmp_path, f"--ovs-db={stock_db}", *detach)
        line = assert_fails(proc, f"the Open_vSwitch database at {stock_db} "
                            "has no PAC table")
        assert "its schema is not ovs-pac's" in line
        assert "Traceback" not in proc.stderr
        if detach:
            kill_pidfile(tmp_path / "agent.pid")
            assert "has no PAC table" in (tmp_path / "agent.log").read_text()


def test_unreachable_database_at_start(ovn: OvnCentral, chassis: Chassis,
                                       tmp_path: Path) -> None:
    """A database not reached within --start-timeout: exit 1, naming it and
    its state, under --detach after the timeout (not at once)."""
    t0 = time.monotonic()
    proc = run_agent(tmp_path, f"--ovs-db=unix:{tmp_path}/nothing.sock",
                     "--start-timeout=2", "--detach")
    assert_fails(proc, f"not started within 2 s (--start-timeout): "
                 f"Open_vSwitch at unix:{tmp_path}/nothing.sock: connecting")
    assert time.monotonic() - t0 >= 2

    # The Southbound database, named by --ovnsb-db, is not there.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))        # Bound, not listening: refused.
        port = s.getsockname()[1]
        proc = run_agent(tmp_path, f"--ovs-db={chassis.ovs.db_sock}",
                         f"--ovnsb-db=tcp:127.0.0.1:{port}",
                         "--start-timeout=2", "--detach",
                         f"--pidfile={tmp_path}/agent.pid",
                         env=chassis.ovs.env)
    kill_pidfile(tmp_path / "agent.pid")
    assert_fails(proc, f"OVN_Southbound at tcp:127.0.0.1:{port}: connecting")


def test_bad_options_fail_loudly(build: OvsBuild, tmp_path: Path) -> None:
    """Bad command-line options: exit 1 and one line naming the option,
    before anything starts, with --detach too."""
    cases = [
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["--ovs-db=tcp:1.2"], '--ovs-db: "tcp:1.2" is not an OVSDB remote'),
        (["--ovnsb-db=tcp:127.0.0.1:1,foo:bar"],
         '--ovnsb-db: "foo:bar" is not an OVSDB remote'),
        (["--ovnnb-db=ssl:127.0.0.1:6641"], "--ovnnb-db: "
         "ssl:127.0.0.1:6641 needs --private-key, --certificate and "
         "--ca-cert"),
        (["--start-timeout=-1"], "--start-timeout=-1: not a number of "
         "seconds"),
        (["--start-timeout=soon"], "argument --start-timeout"),
        ([f"--knobs={tmp_path}/none.json"],
         f"{tmp_path}/none.json: No such file or directory"),
        (["-vbogus:info"], 'processing "bogus:info"'),
    ]
    for args, words in cases:
        for detach in ([], ["--detach"]):
            t0 = time.monotonic()
            proc = run_agent(tmp_path, *args, *detach)
            assert_fails(proc, words)
            assert "Traceback" not in proc.stderr
            assert time.monotonic() - t0 < 10, args


def test_detach_returns_once_started(ovn: OvnCentral, chassis: Chassis,
                                     tmp_path: Path) -> None:
    """Under --detach the parent exits 0 once the child follows its
    databases: the control socket answers at once and says so."""
    pidfile = tmp_path / "agent.pid"
    proc = run_agent(tmp_path, f"--ovs-db={chassis.ovs.db_sock}",
                     f"--ovnnb-db={ovn.nb_remote}", "--detach",
                     f"--pidfile={pidfile}", f"--log-file={tmp_path}/a.log",
                     env=chassis.ovs.env)
    try:
        assert proc.returncode == 0, proc.stderr
        show = run([chassis.build.bin("ovs-appctl"), "-t",
                    f"{tmp_path}/agent.ctl", "pac-agent/show"]).stdout
        assert f"Open_vSwitch at {chassis.ovs.db_sock}: connected" in show
        assert ": connected, local port bindings: " in show, show
        assert f"OVN_Northbound at {ovn.nb_remote}: connected" in show
    finally:
        run([chassis.build.bin("ovs-appctl"), "-t", f"{tmp_path}/agent.ctl",
             "exit"], check=False)
        wait_until(lambda: not pidfile.exists(), 10, 0.1, "the agent's exit")


def test_version(build: OvsBuild, tmp_path: Path) -> None:
    """--version: the agent's version, and libpac's of the knob table it
    reads, as OVS programs print theirs."""
    table = Path(os.path.realpath(AGENT)).parent / "pac-knobs.json"
    libpac = json.loads(table.read_text())["libpac"]
    proc = run_agent(tmp_path, "--version")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 2, proc.stdout
    assert lines[0].startswith("ovs-pac-agent (ovs-pac) "), lines
    assert lines[1] == f"knob table: libpac {libpac} ({table})", lines

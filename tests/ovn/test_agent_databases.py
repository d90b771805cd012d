"""How ovs-pac-agent reaches its databases: remotes given on the command
line, TCP, lists with a dead remote, no Northbound database, a server that
never answers, and the Southbound rows it asks for (only the local ports'
bindings, as ovn-controller does)."""

from __future__ import annotations

import socket
import time

from agent_checks import TIMEOUT, make_port, status, wait_row
from testbed.ovn_env import Chassis, OvnCentral, Pki, free_tcp_port
from testbed.ovs_env import wait_until


def test_only_local_bindings_monitored(ovn: OvnCentral, chassis_factory,
                                       agent_factory) -> None:
    """The agent's Southbound view holds the Port_Binding rows of its
    chassis's ports only (pac-agent/show counts them); a port plugged later
    is added to the view and gets PAC."""
    hv1, hv2 = chassis_factory("hv1"), chassis_factory("hv2")
    ovn.nbctl("ls-add", "ls1")
    ovn.nbctl("set", "Logical_Switch", "ls1", "other_config:pac=true")
    for n in range(2, 6):
        make_port(ovn, hv2, f"vm{n}", f"vm{n}-tap")
    make_port(ovn, hv1)
    agent = agent_factory(hv1)
    wait_row(hv1, lambda r: r is not None)
    assert "local port bindings: 1" in agent.show(), agent.show()

    make_port(ovn, hv1, "vm6", "vm6-tap")
    wait_row(hv1, lambda r: r is not None, "vm6-tap")
    assert "local port bindings: 2" in agent.show(), agent.show()
    assert "OVN_Southbound at unix:" in agent.show()

    # Unplugged, the port leaves the view.
    hv1.del_vm_port("vm6-tap")
    wait_until(lambda: "local port bindings: 1" in agent.show(), TIMEOUT,
               0.2, "vm6 to leave the agent's view")


def test_tcp_remotes_from_the_command_line(ovn: OvnCentral, chassis: Chassis,
                                           agent_factory) -> None:
    """--ovnsb-db and --ovnnb-db over TCP, each a list whose other remote
    is dead: the agent reaches the live one (the SB one given on the
    command line wins over the chassis's ovn-remote)."""
    sb = ovn.add_tcp_remote("sb")
    nb = ovn.add_tcp_remote("nb")
    dead = f"tcp:127.0.0.1:{free_tcp_port()}"
    make_port(ovn, chassis)
    agent = agent_factory(chassis, sb_remote=f"{dead},{sb}",
                          nb_remote=f"{dead},{nb}")
    ovn.nbctl("set", "Logical_Switch", "ls1", "other_config:pac=true",
              "other_config:pac_threshold=61000")
    row = wait_row(chassis, lambda r: r is not None)
    assert row["threshold"] == 61000          # A switch key: the NB works.
    assert row["external_ids"]["ovs-pac-source"] == "switch"
    show = agent.show()
    assert f"OVN_Southbound at {dead},{sb}: connected" in show, show
    assert f"OVN_Northbound at {dead},{nb}: connected" in show, show


def test_ssl_remotes(ovn: OvnCentral, chassis: Chassis, agent_factory,
                     tmp_path) -> None:
    """ssl: remotes (as a production chassis reaches the central), with
    --private-key, --certificate and --ca-cert of the deployment's PKI."""
    pki = Pki(tmp_path)
    sb = ovn.add_ssl_remote("sb", pki)
    nb = ovn.add_ssl_remote("nb", pki)
    key, cert = pki.sign("agent")
    make_port(ovn, chassis)
    agent = agent_factory(chassis, sb_remote=sb, nb_remote=nb,
                          ssl=(key, cert, pki.ca_cert))
    ovn.nbctl("set", "Logical_Switch", "ls1", "other_config:pac=true")
    ovn.nbctl("set", "Logical_Switch_Port", "vm1",
              "options:pac_threshold=63000")
    row = wait_row(chassis, lambda r: r is not None)
    assert row["threshold"] == 63000
    show = agent.show()
    assert f"OVN_Southbound at {sb}: connected" in show, show
    assert f"OVN_Northbound at {nb}: connected" in show, show


def test_without_northbound(ovn: OvnCentral, chassis: Chassis,
                            agent_factory) -> None:
    """Without --ovnnb-db, switch keys are ignored with one warning; port
    and global keys apply."""
    make_port(ovn, chassis)
    agent = agent_factory(chassis, nb=False)
    ovn.nbctl("set", "Logical_Switch", "ls1", "other_config:pac=true")
    ovn.nbctl("set", "NB_Global", ".", "options:pac_threshold=62000")
    ovn.nbctl("set", "Logical_Switch_Port", "vm1", "options:foo=bar")
    wait_until(lambda: "no --ovnnb-db" in agent.log(), TIMEOUT, 0.2,
               "the warning")
    time.sleep(1)
    assert status(chassis) is None
    assert wait_row(chassis, lambda r: True) is None
    ovn.nbctl("set", "Logical_Switch_Port", "vm1", "options:pac=true")
    row = wait_row(chassis, lambda r: r is not None)
    assert row["threshold"] == 62000
    assert agent.log().count("no --ovnnb-db") == 1
    assert "OVN_Northbound: not followed" in agent.show()


def test_answers_while_a_server_never_does(ovn: OvnCentral, chassis: Chassis,
                                           agent_factory) -> None:
    """A Southbound remote that accepts connections and never answers (a
    hung server, a firewall that drops) does not block the agent: its
    control socket answers at once, and it says what it waits for."""
    with socket.socket() as hung:
        hung.bind(("127.0.0.1", 0))
        hung.listen(8)                      # Never accepted, never read.
        remote = f"tcp:127.0.0.1:{hung.getsockname()[1]}"
        agent = agent_factory(chassis, sb_remote=remote)
        for _ in range(5):
            t0 = time.monotonic()
            show = agent.show()
            assert time.monotonic() - t0 < 1.5, "pac-agent/show was slow"
            assert f"OVN_Southbound at {remote}: fetching the schema" in show
            time.sleep(0.3)

"""The incast testbed with OVN on the hypervisor: the receiver VM is a
logical switch port, PAC is OVN policy applied by ovs-pac-agent.

    sender hosts       ToR (Linux bridge)                hypervisor (patched OVS + Debian's OVN)                VM
    ns snd1 ... ==== br-tor ─ uplink ==veth== up-p ─ br-phys ═patch═ br-int ─ vm-p ==veth== eth0
                        tbf on "uplink"          (NORMAL)   localnet "ln"   lport "vm1"

Everything of testbed.incast_testbed stays (senders, ToR bottleneck, the VM
namespace, the incast application, RESULT lines); what changes is the
hypervisor's switch: ovn-controller programs br-int from a logical switch
"provider" that holds the VM's logical port "vm1" and a localnet port "ln"
mapped to the provider bridge br-phys, which holds the uplink.  The
senders are hosts of the provider network: the same bottleneck, the same
RTT, so "plain OVN" and "OVN + PAC" compare with the plain OVS figures.
(A second chassis reached over Geneve would put the senders behind a
second userspace datapath on the same two cores: that datapath, not the
ToR's buffer, would become the bottleneck.)

PAC is switched with the NB, as an operator does:
    ovn-nbctl set Logical_Switch_Port vm1 options:pac=true \
        options:pac_threshold=... options:pac_base_rtt_us=...
and off by removing those keys; ovs-pac-agent (ovn-config/) on the
hypervisor turns them into the PAC row of vm-p.  The NB and SB servers and
ovn-northd run beside the testbed (testbed.ovn_env.OvnCentral).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

from .incast_testbed import (UPLINK_PORT, VM_IP, VM_PORT, PacConfigError,
                             Testbed)
from .ovn_env import Chassis, OvnCentral, PacAgent, wait_port_bound

CHASSIS = "hv"
SWITCH = "provider"
VM_LPORT = "vm1"
LOCALNET_LPORT = "ln"
PHYSNET = "physnet"
PROVIDER_BRIDGE = "br-phys"
VM_MAC = "0a:00:00:01:00:02"
APPLY_TIMEOUT = 15      # Seconds for the agent to apply an NB change.


def ovn_options(columns: dict) -> dict[str, str]:
    """PAC row columns (as Testbed.pac_on() passes them to
    Ovs.pac_enable()) as the logical port's options: pac_<column>, and
    pac_<key with '-' as '_'> for each other_config key."""
    options = {"pac": "true"}
    for column, value in columns.items():
        if column == "other_config":
            options.update({f"pac_{key.replace('-', '_')}": str(v)
                            for key, v in value.items()})
        elif column == "mlfq_thresholds":
            options["pac_mlfq_thresholds"] = ",".join(
                str(value[level]) for level in sorted(value))
        elif isinstance(value, bool):
            options[f"pac_{column}"] = "true" if value else "false"
        else:
            options[f"pac_{column}"] = str(value)
    return options


class OvnTestbed(Testbed):
    """testbed.incast_testbed.Testbed with OVN's br-int on the hypervisor
    (see the module's comment).  Use as a context manager, or call setup()
    and close()."""
    __test__ = False            # Not a pytest test class.

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.cfg.ovn:
            raise ValueError("OvnTestbed: TestbedConfig.ovn must be set")
        self.central: Optional[OvnCentral] = None
        self.chassis: Optional[Chassis] = None
        self.agent: Optional[PacAgent] = None
        self.pac_options: list[str] = []    # Keys set by _pac_enable().

    def switch_description(self) -> str:
        return (f"OVN: VM as logical port {VM_LPORT} on br-int, senders on "
                f"the provider network (localnet port {LOCALNET_LPORT}, "
                f"{PROVIDER_BRIDGE}); PAC set with ovn-nbctl, applied by "
                "ovs-pac-agent")

    def _add_bridges(self) -> None:
        """OVN's central, ovn-controller on the hypervisor's OVS (br-int),
        the provider bridge and the logical switch."""
        self.central = OvnCentral(self.build)
        self.central.start()
        self.chassis = Chassis(self.central, CHASSIS, ovs=self.ovs)
        self.chassis.start()
        self.ovs.vsctl("add-br", PROVIDER_BRIDGE, "--", "set", "Bridge",
                       PROVIDER_BRIDGE, "datapath_type=netdev")
        self.ovs.vsctl("set", "Open_vSwitch", ".",
                       f"external_ids:ovn-bridge-mappings="
                       f"{PHYSNET}:{PROVIDER_BRIDGE}")
        nbctl = self.central.nbctl
        nbctl("ls-add", SWITCH)
        nbctl("lsp-add", SWITCH, LOCALNET_LPORT,
              "--", "lsp-set-type", LOCALNET_LPORT, "localnet",
              "--", "lsp-set-addresses", LOCALNET_LPORT, "unknown",
              "--", "lsp-set-options", LOCALNET_LPORT,
              f"network_name={PHYSNET}")
        nbctl("lsp-add", SWITCH, VM_LPORT,
              "--", "lsp-set-addresses", VM_LPORT, f"{VM_MAC} {VM_IP}")

    def _port_bridge(self, port: str) -> str:
        return PROVIDER_BRIDGE if port == UPLINK_PORT else "br-int"

    def _port_columns(self, port: str) -> list[str]:
        if port == VM_PORT:
            return [f"external_ids:iface-id={VM_LPORT}"]
        return []

    def _ports_added(self) -> None:
        """The VM gets the logical port's MAC; waits until the port is
        bound here, then starts the agent."""
        self.vm.run(["ip", "link", "set", "eth0", "address", VM_MAC])
        wait_port_bound(self.central, VM_LPORT, CHASSIS)
        self.agent = PacAgent(self.chassis)
        self.agent.start()

    def _pac_enable(self, columns: dict) -> None:
        """Sets the logical port's pac options in the NB and waits until
        the agent has given vm-p its PAC row, or refused a value (then
        PacConfigError with the agent's status of the port)."""
        options = ovn_options(columns)
        self.pac_options = list(options)
        self.central.nbctl("set", "Logical_Switch_Port", VM_LPORT,
                           *(f'options:{k}="{v}"'
                             for k, v in options.items()))
        deadline = time.monotonic() + APPLY_TIMEOUT
        while True:
            status = self._agent_status()
            if self.ovs.pac_uuid(VM_PORT) or "error" in status:
                break
            if time.monotonic() > deadline:
                raise PacConfigError(f"ovs-pac-agent did not apply the PAC "
                                     f"options of {VM_LPORT} within "
                                     f"{APPLY_TIMEOUT} s (status: {status!r})")
            time.sleep(0.1)
        if "error" in status:
            raise PacConfigError(f"ovs-pac-agent refused the PAC options of "
                                 f"{VM_LPORT}: {status}")

    def _agent_status(self) -> str:
        return self.ovs.get_columns("Interface", VM_PORT, "external_ids")[
            "external_ids"].get("ovs-pac-status", "")

    def pac_off(self) -> None:
        """Removes the logical port's pac options from the NB and waits
        until the agent has removed vm-p's PAC row."""
        if self.pac_options:
            self.central.nbctl("remove", "Logical_Switch_Port", VM_LPORT,
                               "options", *self.pac_options)
        self.pac_options = []
        deadline = time.monotonic() + APPLY_TIMEOUT
        while self.ovs.pac_uuid(VM_PORT):
            if time.monotonic() > deadline:
                raise PacConfigError("ovs-pac-agent did not remove the PAC "
                                     f"row of {VM_PORT} within "
                                     f"{APPLY_TIMEOUT} s")
            time.sleep(0.1)

    def close(self) -> None:
        """Stops the agent and ovn-controller, then the testbed (its OVS),
        then OVN's central."""
        try:
            if self.agent:
                self.agent.close()
            if self.chassis:
                self.chassis.close()
        finally:
            try:
                super().close()
            finally:
                if self.central:
                    self.central.close()

    def save_logs(self, dest: Path) -> None:
        super().save_logs(dest)
        if self.chassis:
            self.chassis.save_logs(dest / "chassis")
        if self.central:
            self.central.save_logs(dest / "central")

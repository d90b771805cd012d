"""The testbed: the patched Open vSwitch build run privately with real
Linux TCP in network namespaces.

Used by the system tests (tests/system, through pytest's `pythonpath`), the
incast command line (tools/incast) and the datapath benchmark
(bench/datapath/run).  It needs root and the built tree (build/ovs, or
$OVS_BUILDDIR).

  ovs_env         OvsBuild, Ovs (ovsdb-server + ovs-vswitchd in a private
                  directory), Netns, Topology, Transfer, cleanup_stale().
  dpdk_env        OVS-DPDK: Hugepages, HugeMount, DpdkTopology,
                  ManyConnections.
  incast_testbed  the incast testbed: senders, a drop-tail ToR bottleneck,
                  the hypervisor's ovs-vswitchd and the VM (Testbed,
                  TestbedConfig, RunResult).
  incast_report   tables, CSV files and plots of incast runs.
  ovn_env         OVN beside the patched OVS: OvnCentral (NB, SB,
                  ovn-northd), Chassis (ovs-vswitchd, ovn-controller, VM
                  ports), PacAgent (ovn-config/ovs-pac-agent).
  guest           the tests/vm guest: Debian's cloud kernel and a busybox
                  initramfs (build/guest/).
  libvirt_env     libvirtd beside the private OVS (private mount
                  namespace), qemu guests on tap and vhost-user ports:
                  Libvirtd, VmGuest, VmTopology, VhostVmTopology.
  tcp_xfer        one checked TCP transfer (a script run in a namespace).
  tcp_many        many short checked TCP connections (a script run in a
                  namespace).
"""

# Benchmarks and models built with the tree (bench/).  bench/incast (its own
# Makefile) and bench/datapath (Python) are not built here.

# Packet-level incast simulator (bench/sim/): the pac-sim tool.  The sources
# without pac-sim-main.c are PAC_SIM_FILES, which tests/test-scenario (a unit
# test in tests/automake.mk) builds too.
PAC_SIM_FILES = \
	bench/sim/sim.c \
	bench/sim/sim.h \
	bench/sim/sim-heap.c \
	bench/sim/sim-heap.h \
	bench/sim/sim-net.c \
	bench/sim/sim-pkt.c \
	bench/sim/sim-private.h \
	bench/sim/sim-receiver.c \
	bench/sim/sim-sender.c
PAC_SIM_CFLAGS = $(AM_CFLAGS) $(PAC_WARNING_CFLAGS) \
	-I$(srcdir)/lib -I$(srcdir)/bench/sim

noinst_PROGRAMS += bench/sim/pac-sim
bench_sim_pac_sim_SOURCES = $(PAC_SIM_FILES) bench/sim/pac-sim-main.c
bench_sim_pac_sim_CFLAGS = $(PAC_SIM_CFLAGS)
bench_sim_pac_sim_LDADD = lib/libpac.la

# The incast in ns-3 (bench/ns3/): pac-ns3 runs the real libpac on the
# receiver's host inside ns-3 3.37's network and TCP.  Built when configure
# finds ns-3 (libns3-dev; BUILD_NS3).  Figures: docs/scale.md.
EXTRA_DIST += bench/ns3/run bench/ns3/smoke-test bench/ns3/leaf-spine-run
if BUILD_NS3
noinst_PROGRAMS += bench/ns3/pac-ns3
bench_ns3_pac_ns3_SOURCES = \
	bench/ns3/background.cc \
	bench/ns3/background.h \
	bench/ns3/incast-app.h \
	bench/ns3/leaf-spine.cc \
	bench/ns3/leaf-spine.h \
	bench/ns3/linux-window-socket.h \
	bench/ns3/pac-device.cc \
	bench/ns3/pac-device.h \
	bench/ns3/pac-ns3.cc \
	bench/ns3/pulser.cc \
	bench/ns3/pulser.h
bench_ns3_pac_ns3_CPPFLAGS = -I$(srcdir)/lib $(NS3_CFLAGS)
bench_ns3_pac_ns3_CXXFLAGS = $(AM_CXXFLAGS) -Wall -Wextra
bench_ns3_pac_ns3_LDADD = lib/libpac.la $(NS3_LIBS)
endif

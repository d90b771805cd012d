# The packet-level incast model (sim/): the simulator around the real
# libpac and pac-sim, its command line.  tests/test-scenario (a unit test in
# tests/automake.mk) builds the same sources.
PAC_SIM_FILES = \
	sim/sim.c \
	sim/sim.h \
	sim/sim-heap.c \
	sim/sim-heap.h \
	sim/sim-net.c \
	sim/sim-pkt.c \
	sim/sim-private.h \
	sim/sim-random.c \
	sim/sim-receiver.c \
	sim/sim-rtt.c \
	sim/sim-sender.c \
	sim/sim-stats.c \
	sim/sim-timer.c \
	sim/sim-trace.c
PAC_SIM_CFLAGS = $(AM_CFLAGS) $(PAC_WARNING_CFLAGS) \
	-I$(srcdir)/lib -I$(srcdir)/sim

noinst_PROGRAMS += sim/pac-sim
sim_pac_sim_SOURCES = $(PAC_SIM_FILES) sim/pac-sim-main.c
sim_pac_sim_CFLAGS = $(PAC_SIM_CFLAGS)
sim_pac_sim_LDADD = lib/libpac.la


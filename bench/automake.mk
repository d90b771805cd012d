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

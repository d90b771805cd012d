# Benchmarks built with the tree (bench/): the per-call cost of libpac's
# scheduler (bench/sched) and the incast in ns-3 (bench/ns3).
# bench/datapath (Python) is not built here.

# Microbenchmark of the per-packet cost with many flows holding ACKs
# (built, not run by "make check"; see its header).
noinst_PROGRAMS += bench/sched/bench-pac-sched
bench_sched_bench_pac_sched_SOURCES = bench/sched/bench-pac-sched.c
bench_sched_bench_pac_sched_LDADD = lib/libpac.la
bench_sched_bench_pac_sched_CFLAGS = $(AM_CFLAGS) $(PAC_WARNING_CFLAGS) \
	-I$(srcdir)/lib

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

# libpac: the PAC algorithm as plain C (no OVS headers).  Built as a libtool
# convenience library so that OVS's libopenvswitch.la can absorb it.
noinst_LTLIBRARIES += lib/libpac.la
lib_libpac_la_CFLAGS = $(AM_CFLAGS) $(PAC_WARNING_CFLAGS)
lib_libpac_la_SOURCES = \
	lib/pac.h \
	lib/pac.c \
	lib/pac-budget.c \
	lib/pac-handshake.c \
	lib/pac-config.c \
	lib/pac-control.c \
	lib/pac-flow.c \
	lib/pac-flow.h \
	lib/pac-knobs.c \
	lib/pac-parse.c \
	lib/pac-parse.h \
	lib/pac-private.h \
	lib/pac-queue.c \
	lib/pac-rr.c \
	lib/pac-sched.c \
	lib/pac-trigger.c \
	lib/pac-watch.c \
	lib/pac-window.c

# Prints libpac's knob table and rules as JSON at build time: "make" writes
# ovn-config/pac-knobs.json with it (ovn-config/automake.mk), which the
# packages ship for ovs-pac-agent and tests/check-pac-knobs.py reads.
noinst_PROGRAMS += tools/pac-knobs-dump
tools_pac_knobs_dump_SOURCES = tools/pac-knobs-dump.c
tools_pac_knobs_dump_LDADD = lib/libpac.la
tools_pac_knobs_dump_CFLAGS = $(AM_CFLAGS) $(PAC_WARNING_CFLAGS) -I$(srcdir)/lib

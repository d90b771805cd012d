# Unit tests of libpac (plain C, no OVS).  Each program prints
# "N passed, N failed" and exits non-zero on failure.
EXTRA_DIST += tests/pac-test.h

# The paper's incast with and without PAC on the packet-level simulator
# (sim/; PAC_SIM_FILES and PAC_SIM_CFLAGS are in sim/automake.mk).
check_PROGRAMS += tests/test-scenario
TESTS += tests/test-scenario
tests_test_scenario_SOURCES = $(PAC_SIM_FILES) tests/test-scenario.c
tests_test_scenario_CFLAGS = $(PAC_SIM_CFLAGS)
tests_test_scenario_LDADD = lib/libpac.la

# TCP/IP segment parser.  Its libFuzzer target, and the one of libpac's
# state (tests/fuzz-state.c), are built and run by tests/run-fuzz.sh (clang
# only), not by "make check".
check_PROGRAMS += tests/test-parse
TESTS += tests/test-parse
tests_test_parse_SOURCES = tests/test-parse.c tests/pac-test.h
tests_test_parse_LDADD = lib/libpac.la
tests_test_parse_CFLAGS = $(AM_CFLAGS) $(PAC_WARNING_CFLAGS) -I$(srcdir)/lib
EXTRA_DIST += \
	tests/fuzz-parse.c \
	tests/fuzz-state.c \
	tests/fuzz-replay.h \
	tests/run-fuzz.sh \
	tests/fuzz-corpus \
	tests/fuzz-corpus-state

# Unit tests of the PAC algorithm (lib/), one program per area.
# tests/pac-test-seg.h builds segments and records the packets libpac
# emits; tests/pac-test-fit.h checks the admission rule from outside.
PAC_UNIT_SOURCES = tests/pac-test.h tests/pac-test-seg.h \
	tests/pac-test-fixture.h tests/pac-test-fit.h
PAC_UNIT_CFLAGS = $(AM_CFLAGS) $(PAC_WARNING_CFLAGS) -I$(srcdir)/lib

check_PROGRAMS += tests/test-pac-config
TESTS += tests/test-pac-config
tests_test_pac_config_SOURCES = tests/test-pac-config.c $(PAC_UNIT_SOURCES)
tests_test_pac_config_LDADD = lib/libpac.la
tests_test_pac_config_CFLAGS = $(PAC_UNIT_CFLAGS)

check_PROGRAMS += tests/test-pac-algo
TESTS += tests/test-pac-algo
tests_test_pac_algo_SOURCES = tests/test-pac-algo.c $(PAC_UNIT_SOURCES)
tests_test_pac_algo_LDADD = lib/libpac.la
tests_test_pac_algo_CFLAGS = $(PAC_UNIT_CFLAGS)

check_PROGRAMS += tests/test-pac-sched
TESTS += tests/test-pac-sched
tests_test_pac_sched_SOURCES = tests/test-pac-sched.c $(PAC_UNIT_SOURCES)
tests_test_pac_sched_LDADD = lib/libpac.la
tests_test_pac_sched_CFLAGS = $(PAC_UNIT_CFLAGS)

check_PROGRAMS += tests/test-pac-control
TESTS += tests/test-pac-control
tests_test_pac_control_SOURCES = tests/test-pac-control.c $(PAC_UNIT_SOURCES)
tests_test_pac_control_LDADD = lib/libpac.la
tests_test_pac_control_CFLAGS = $(PAC_UNIT_CFLAGS)

check_PROGRAMS += tests/test-pac-flow
TESTS += tests/test-pac-flow
tests_test_pac_flow_SOURCES = tests/test-pac-flow.c $(PAC_UNIT_SOURCES)
tests_test_pac_flow_LDADD = lib/libpac.la
tests_test_pac_flow_CFLAGS = $(PAC_UNIT_CFLAGS)

check_PROGRAMS += tests/test-pac-random
TESTS += tests/test-pac-random
tests_test_pac_random_SOURCES = tests/test-pac-random.c $(PAC_UNIT_SOURCES)
tests_test_pac_random_LDADD = lib/libpac.la
tests_test_pac_random_CFLAGS = $(PAC_UNIT_CFLAGS)

# The fast path (lib/pac-watch.c): when tracking starts and stops.
check_PROGRAMS += tests/test-pac-watch
TESTS += tests/test-pac-watch
tests_test_pac_watch_SOURCES = tests/test-pac-watch.c $(PAC_UNIT_SOURCES)
tests_test_pac_watch_LDADD = lib/libpac.la
tests_test_pac_watch_CFLAGS = $(PAC_UNIT_CFLAGS)

# Regression tests of bugs found in lib/ (one test each).
check_PROGRAMS += tests/test-pac-bugs
TESTS += tests/test-pac-bugs
tests_test_pac_bugs_SOURCES = tests/test-pac-bugs.c $(PAC_UNIT_SOURCES)
tests_test_pac_bugs_LDADD = lib/libpac.la
tests_test_pac_bugs_CFLAGS = $(PAC_UNIT_CFLAGS)

# That pac_prefetch() still prefetches the flows, not only their buckets:
# the compiler once deleted that pass, and only a benchmark could tell.
TESTS += tests/check-prefetch.sh
EXTRA_DIST += tests/check-prefetch.sh

# libpac's knob table and rules (lib/pac-knobs.c): test-pac-knobs checks
# them against pac_config_init(), pac_config_check(), pac_config_equal()
# and the parsers; check-pac-knobs.py checks the copies libpac cannot feed,
# the PAC table's schema and vswitch.xml in ovs-patch/0005 and the knob
# tables of docs/operator.md, against tools/pac-knobs-dump's print of them,
# and that ovs-pac-agent, which validates OVN's keys with that print,
# accepts and refuses what libpac does (through pac-knobs-check, which
# parses a value as ovs-vswitchd does).
check_PROGRAMS += tests/test-pac-knobs
TESTS += tests/test-pac-knobs
tests_test_pac_knobs_SOURCES = tests/test-pac-knobs.c tests/pac-test.h
tests_test_pac_knobs_LDADD = lib/libpac.la
tests_test_pac_knobs_CFLAGS = $(PAC_UNIT_CFLAGS)

check_PROGRAMS += tests/pac-knobs-check
tests_pac_knobs_check_SOURCES = tests/pac-knobs-check.c
tests_pac_knobs_check_LDADD = lib/libpac.la
tests_pac_knobs_check_CFLAGS = $(PAC_UNIT_CFLAGS)

TESTS += tests/check-pac-knobs.py
EXTRA_DIST += tests/check-pac-knobs.py

# The man pages (ovs-pac-agent(8), ovs-vswitchd-pac(8)) render with man -l
# and document every option and command.
TESTS += tests/check-man-pages.py
EXTRA_DIST += tests/check-man-pages.py

# Hostile and malformed traffic: what a tenant or a remote peer can craft.
check_PROGRAMS += tests/test-pac-hostile
TESTS += tests/test-pac-hostile
tests_test_pac_hostile_SOURCES = tests/test-pac-hostile.c $(PAC_UNIT_SOURCES)
tests_test_pac_hostile_LDADD = lib/libpac.la
tests_test_pac_hostile_CFLAGS = $(PAC_UNIT_CFLAGS)

# Zero-window copies of held requests (request_copy_us).
check_PROGRAMS += tests/test-pac-copy
TESTS += tests/test-pac-copy
tests_test_pac_copy_SOURCES = tests/test-pac-copy.c $(PAC_UNIT_SOURCES)
tests_test_pac_copy_LDADD = lib/libpac.la
tests_test_pac_copy_CFLAGS = $(PAC_UNIT_CFLAGS)

# The docs' tables of figures match what tools/render-docs renders from
# docs/data/, and the check catches a page out of step with its data.
TESTS += tests/test-render-docs.py
EXTRA_DIST += tests/test-render-docs.py tools/render-docs docs

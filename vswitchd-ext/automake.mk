# ovs-pac extensions compiled into Open vSwitch.
#
# OVS's Makefile.am includes this file as pac-ext/automake.mk
# (ovs-patch/0001-build-link-libpac-and-vswitchd-ext.patch), so every path
# here is relative to the OVS tree (build/ovs).  There, pac-ext/ is a
# directory of symlinks to the files of vswitchd-ext/, kept in sync by
# tools/ovs-tree on every top-level make, plus two generated files:
#   pac-ext/pac-paths.mk       PAC_TOP_SRCDIR, PAC_TOP_BUILDDIR (absolute)
#   pac-ext/pac-ext-version.h  OVS_PAC_VERSION, the ovs-pac version string
#
# To add a source file: create vswitchd-ext/NAME.c and list it below as
# pac-ext/NAME.c.  Include OVS headers as usual ("dpif-netdev.h"), our own
# as "pac-ext/NAME.h", and libpac's as "pac.h" (lib/ comes last in the
# include path, so an OVS header always wins over a libpac header of the
# same name: keep libpac header names pac-*).
#
# The sources are built as the libtool convenience library
# pac-ext/libpacext.la, which libtool absorbs, together with libpac
# ($(PAC_TOP_BUILDDIR)/lib/libpac.la, also a convenience library), into
# lib/libopenvswitch.la: our code sits in libopenvswitch like dpif-netdev,
# and links into ovs-vswitchd and every other OVS program.  A separate
# target keeps our include path and -Werror to our own files.

include $(srcdir)/pac-ext/pac-paths.mk

noinst_LTLIBRARIES += pac-ext/libpacext.la
pac_ext_libpacext_la_SOURCES = \
	pac-ext/pac-bridge.c \
	pac-ext/pac-bridge.h \
	pac-ext/pac-dp.c \
	pac-ext/pac-dp.h \
	pac-ext/pac-ofproto.c \
	pac-ext/pac-ofproto.h \
	pac-ext/pac-unixctl.c \
	pac-ext/pac-unixctl.h \
	pac-ext/pac-xlate.c \
	pac-ext/pac-xlate.h
pac_ext_libpacext_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(PAC_TOP_SRCDIR)/lib
# Our code compiles without warnings; 'make PAC_EXT_WERROR=' to relax.
PAC_EXT_WERROR = -Werror
pac_ext_libpacext_la_CFLAGS = $(AM_CFLAGS) $(PAC_EXT_WERROR)

lib_libopenvswitch_la_LIBADD += \
	pac-ext/libpacext.la \
	$(PAC_TOP_BUILDDIR)/lib/libpac.la

# ovs-pac-agent (ovn-config/): applies OVN's PAC policy on a chassis.  It
# validates OVN keys with libpac's knob table and rules, which "make" prints
# beside it as ovn-config/pac-knobs.json (tools/pac-knobs-dump).
EXTRA_DIST += \
	ovn-config/ovs-pac-agent \
	ovn-config/ovs-pac-agent.8 \
	ovn-config/ovs-pac-agent.service \
	ovn-config/ovs-pac-agent.default

ovn-config/pac-knobs.json: tools/pac-knobs-dump$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) ovn-config && \
	tools/pac-knobs-dump > $@.tmp && mv $@.tmp $@
ALL_LOCAL += ovn-config/pac-knobs.json
CLEANFILES += ovn-config/pac-knobs.json

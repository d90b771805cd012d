#!/bin/bash
# Package test, the part that runs inside a fresh Debian 12 root (started by
# tests/packaging/run.sh in its own network, PID and mount namespaces, with
# the .debs in /pac-test/debs and every package apt needs already in its
# cache: the namespace has no network).  Prints one "ok - ..." or
# "not ok - ..." line per check; run.sh counts them.
#
#   in-root.sh install   install the .debs with their dependencies, start
#                        ovsdb-server (ovs-ctl: database created with the
#                        patched schema) and the patched ovs-vswitchd through
#                        the alternative, netdev bridge, a port with PAC,
#                        pac/show and Interface:status, the agent's unit and
#                        the agent started from its installed path; then
#                        apt-get purge: stock ovs-vswitchd and ovs-vsctl back
#                        and working
#   in-root.sh upgrade   stock openvswitch-switch with a database of bridges
#                        and ports and a running ovs-vswitchd, then the .debs:
#                        the database is converted online, nothing of it is
#                        lost, ovs-vswitchd is not restarted
#
# The network namespace holds the veth pair pac0/pac0-peer (and, for the
# upgrade, pac1/pac1-peer), created by run.sh.

set -uo pipefail

export DEBIAN_FRONTEND=noninteractive
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
PAC_VSWITCHD=/usr/lib/openvswitch-switch-pac/ovs-vswitchd-pac
STOCK_VSWITCHD=/usr/lib/openvswitch-switch/ovs-vswitchd
SCHEMA=/usr/share/openvswitch/vswitch.ovsschema
DB_SOCK=unix:/var/run/openvswitch/db.sock
RUN=/var/run/openvswitch
OVS_CTL=/usr/share/openvswitch/scripts/ovs-ctl

failures=0
ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; failures=$((failures + 1)); }

# check DESCRIPTION COMMAND...: runs COMMAND, quietly unless it fails.
check() {
    local desc=$1 out
    shift
    if out=$("$@" 2>&1); then
        ok "$desc"
    else
        not_ok "$desc"
        printf '%s\n' "$out" | sed 's/^/    /' | tail -n 20
    fi
}

# must DESCRIPTION COMMAND...: check, and the scenario ends if it fails.
must() {
    local before=$failures
    check "$@"
    if [ $failures -ne $before ]; then
        echo "# giving up: the rest depends on it"
        logs
        exit 1
    fi
}

# wait_for SECONDS COMMAND...: polls COMMAND every 0.2 s.
wait_for() {
    local n=$(($1 * 5))
    shift
    while [ $n -gt 0 ]; do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.2
        n=$((n - 1))
    done
    "$@"
}

# apt_install PACKAGE...: apt-get install; the maintainer scripts' messages
# of the ovs-pac packages are kept in /tmp/pac-messages (shown by
# show_messages).
apt_install() {
    apt-get install -y -q --no-install-recommends "$@" > /tmp/apt.log 2>&1
    local rc=$?
    grep -E '^(openvswitch-switch-pac|ovs-pac-agent):' /tmp/apt.log \
        > /tmp/pac-messages
    [ $rc -eq 0 ] || cat /tmp/apt.log
    return $rc
}

show_messages() {
    sed 's/^/    | /' /tmp/pac-messages
}

start_ovsdb() {
    # ovs-ctl, as the openvswitch-switch service does: creates the database
    # or converts it to the schema installed (backup first).
    OVS_CTL_OPTS= "$OVS_CTL" --no-ovs-vswitchd --system-id=random start
}

# start_vswitchd: /usr/sbin/ovs-vswitchd, i.e. whatever the ovs-vswitchd
# alternative points to (ovs-ctl would also load the kernel module, which a
# netdev-only test does not need).
start_vswitchd() {
    /usr/sbin/ovs-vswitchd "$DB_SOCK" --pidfile --detach --no-chdir \
        --log-file=/var/log/openvswitch/ovs-vswitchd.log -vconsole:off \
        && wait_for 20 ovs-appctl -t ovs-vswitchd version
}

restart_ovsdb() {
    "$OVS_CTL" --no-ovs-vswitchd stop && start_ovsdb
}

# opt_in: what the operator does to use PAC (docs/packaging.md): select
# the patched ovs-vswitchd and restart Open vSwitch (systemctl restart
# openvswitch-switch: ovsdb-server and ovs-vswitchd; after an online
# conversion, ovsdb-server 3.1.0 shows new clients the new schema only
# once restarted).
opt_in() {
    update-alternatives --set ovs-vswitchd "$PAC_VSWITCHD" \
        && stop_vswitchd && restart_ovsdb && start_vswitchd
}

stop_vswitchd() {
    local pid
    pid=$(cat "$RUN/ovs-vswitchd.pid" 2>/dev/null) || return 0
    ovs-appctl -T 10 -t ovs-vswitchd exit >/dev/null 2>&1
    wait_for 20 sh -c "! kill -0 $pid 2>/dev/null"
}

# iface_status IFACE KEY: one key of Interface:status.
iface_status() {
    ovs-vsctl --if-exists get Interface "$1" "status:$2" 2>/dev/null | tr -d '"'
}

logs() {
    echo "--- logs"
    tail -n 30 /var/log/openvswitch/*.log 2>/dev/null | sed 's/^/    /'
}

# ---------------------------------------------------------------------------
scenario_install() {
    echo "# install: apt-get install the .debs with their dependencies"
    must "apt-get install openvswitch-switch-pac ovs-pac-agent (+ deps)" \
        apt_install /pac-test/debs/openvswitch-switch-pac_*.deb \
            /pac-test/debs/ovs-pac-agent_*.deb systemd
    show_messages
    local v
    v=$(dpkg-query -W -f='${Version}' openvswitch-switch)
    check "openvswitch-switch is the version built against ($v)" \
        sh -c "dpkg-query -W -f='\${Depends}' openvswitch-switch-pac \
               | grep -qF 'openvswitch-switch (= $v)'"
    check "three diversions by openvswitch-switch-pac" \
        sh -c "[ \$(dpkg-divert --list | grep -c 'by openvswitch-switch-pac') -eq 3 ]"
    check "stock ovs-vsctl kept as ovs-vsctl.stock" \
        test -x /usr/bin/ovs-vsctl.stock
    check "alternative registered, stock ovs-vswitchd still selected (opt-in)" \
        sh -c "update-alternatives --query ovs-vswitchd | grep -qx 'Alternative: $PAC_VSWITCHD' \
               && [ \$(readlink -f /usr/sbin/ovs-vswitchd) = $STOCK_VSWITCHD ]"
    check "ovs-vswitchd.conf.db(5) documents the PAC table" \
        sh -c "zcat /usr/share/man/man5/ovs-vswitchd.conf.db.5.gz | grep -q 'PAC TABLE'"
    check "ovs-vswitchd-pac(8) and ovs-pac-agent(8) installed" \
        sh -c "zcat /usr/share/man/man8/ovs-vswitchd-pac.8.gz | grep -q 'RUNTIME MANAGEMENT COMMANDS' \
               && zcat /usr/share/man/man8/ovs-pac-agent.8.gz | grep -q 'RUNTIME MANAGEMENT COMMANDS'"
    check "ovs-pac-agent --version names the knob table's libpac" \
        sh -c "/usr/bin/ovs-pac-agent --version | grep -q '^knob table: libpac .* (/usr/share/ovs-pac/pac-knobs.json)\$'"

    echo "# start ovsdb-server with the database in the patched schema"
    must "ovs-ctl starts ovsdb-server" start_ovsdb
    check "database schema is the patched one ($(ovsdb-tool schema-version $SCHEMA))" \
        sh -c "[ \$(ovsdb-client get-schema-version $DB_SOCK Open_vSwitch) = \
               \$(ovsdb-tool schema-version $SCHEMA) ] && \
               ovsdb-client list-tables $DB_SOCK Open_vSwitch | grep -qx PAC"

    echo "# the patched ovs-vswitchd through the alternative"
    check "update-alternatives --set ovs-vswitchd $PAC_VSWITCHD" \
        update-alternatives --set ovs-vswitchd "$PAC_VSWITCHD"
    check "/usr/sbin/ovs-vswitchd (patched) starts" start_vswitchd
    check "pac/version answers" ovs-appctl pac/version
    check "netdev bridge br0 with port pac0" \
        ovs-vsctl add-br br0 -- set Bridge br0 datapath_type=netdev \
            -- add-port br0 pac0
    check "pac0 has no error" \
        wait_for 10 sh -c "[ -z \"\$(ovs-vsctl get Interface pac0 error 2>/dev/null | tr -d '[]\"')\" ] \
                           && ovs-vsctl get Interface pac0 ofport | grep -qv -- -1"
    check "create PAC threshold=96000 on pac0" \
        ovs-vsctl set Interface pac0 pac=@p -- --id=@p create PAC threshold=96000
    check "Interface:status:pac of pac0 is enabled" \
        wait_for 10 sh -c "[ \"\$(ovs-vsctl get Interface pac0 status:pac | tr -d '\"')\" = enabled ]"
    check "pac/show lists pac0 with threshold 96000" \
        sh -c "ovs-appctl pac/show | grep -q pac0 && ovs-appctl pac/show | grep -q 96000"
    ovs-appctl pac/show | head -n 5 | sed 's/^/    /'

    echo "# ovs-pac-agent"
    local unit=/lib/systemd/system/ovs-pac-agent.service
    check "agent unit installed and enabled" \
        sh -c "test -f $unit && test -L /etc/systemd/system/multi-user.target.wants/ovs-pac-agent.service"
    # Its documentation is a page the packages install, and it starts no
    # OVN daemon (a libvirt host without OVN runs it for port profiles).
    check "agent unit's Documentation= is man:ovs-pac-agent(8), installed" \
        sh -c "grep -qx 'Documentation=man:ovs-pac-agent(8)' $unit && test -f /usr/share/man/man8/ovs-pac-agent.8.gz"
    check "agent unit pulls in no other service (no Wants= or Requires=)" \
        sh -c "! grep -Eq '^(Wants|Requires|BindsTo)=' $unit"
    if command -v systemd-analyze >/dev/null; then
        # --man=no: the root has no man(1); the check above found the
        # page that Documentation= names.
        check "systemd-analyze verify ovs-pac-agent.service" \
            systemd-analyze verify --man=no "$unit"
    else
        ok "# SKIP systemd-analyze not available"
    fi
    # The unit's ExecStart with the defaults file's options, run by hand
    # (no systemd inside the root).
    local exec
    exec=$(sed -n '/^ExecStart=/,/[^\\]$/p' "$unit" | sed 's/^ExecStart=//; s/\\$//' | tr '\n' ' ')
    check "agent ExecStart runs the installed /usr/bin/ovs-pac-agent" \
        sh -c ". /etc/default/ovs-pac-agent && mkdir -p $RUN && eval \"$exec\""
    check "agent answers pac-agent/show" \
        wait_for 10 ovs-appctl -t ovs-pac-agent pac-agent/show
    check "agent exits" ovs-appctl -t ovs-pac-agent exit

    echo "# apt-get purge"
    check "patched ovs-vswitchd stopped" stop_vswitchd
    check "apt-get purge openvswitch-switch-pac ovs-pac-agent" \
        apt-get purge -y -q openvswitch-switch-pac ovs-pac-agent
    check "no diversions left" \
        sh -c "! dpkg-divert --list | grep -q openvswitch-switch-pac"
    check "ovs-vswitchd alternative is the stock binary only" \
        sh -c "[ \$(readlink -f /usr/sbin/ovs-vswitchd) = $STOCK_VSWITCHD ] && \
               ! update-alternatives --query ovs-vswitchd | grep -q pac"
    check "stock files intact (dpkg --verify openvswitch-switch openvswitch-common)" \
        sh -c "[ -z \"\$(dpkg --verify openvswitch-switch openvswitch-common)\" ]"
    check "nothing of the packages left" \
        sh -c "! test -e /usr/lib/openvswitch-switch-pac && ! test -e /etc/default/ovs-pac-agent \
               && ! test -e /usr/share/ovs-pac && ! test -e /usr/bin/ovs-vsctl.stock \
               && ! test -e /usr/bin/ovs-pac-agent"
    check "stock ovs-vswitchd starts (database still in the patched schema)" \
        start_vswitchd
    check "stock ovs-vswitchd answers, but has no pac/ commands" \
        sh -c "ovs-appctl version && ! ovs-appctl pac/version"
    check "stock ovs-vsctl works: br0 and pac0 still there" \
        sh -c "ovs-vsctl list-ports br0 | grep -qx pac0"
    check "stock ovs-vsctl adds a bridge" ovs-vsctl add-br br1 \
        -- set Bridge br1 datapath_type=netdev
    check "ovs-vswitchd stopped" stop_vswitchd
    check "ovs-ctl restarts ovsdb-server (converts to the stock schema)" \
        restart_ovsdb
    check "database in the stock schema again, bridges kept" \
        sh -c "[ \$(ovsdb-client get-schema-version $DB_SOCK Open_vSwitch) = \
                 \$(ovsdb-tool schema-version $SCHEMA) ] && \
               ! ovsdb-client list-tables $DB_SOCK Open_vSwitch | grep -qx PAC && \
               [ \"\$(ovs-vsctl list-br | tr '\n' ' ')\" = 'br0 br1 ' ]"
    check "ovs-ctl kept a backup of the PAC database" \
        sh -c "ls /etc/openvswitch/conf.db.backup8.4.0-* >/dev/null"
}

# dump_config: the configuration of the database (Open_vSwitch, Bridge, Port,
# Interface: the columns an operator sets, with their UUIDs), sorted.
dump_config() {
    {
        ovsdb-client dump --format=csv "$DB_SOCK" Open_vSwitch Open_vSwitch \
            _uuid bridges external_ids other_config
        ovsdb-client dump --format=csv "$DB_SOCK" Open_vSwitch Bridge \
            _uuid name datapath_type ports other_config external_ids fail_mode
        ovsdb-client dump --format=csv "$DB_SOCK" Open_vSwitch Port \
            _uuid name interfaces tag trunks external_ids other_config
        ovsdb-client dump --format=csv "$DB_SOCK" Open_vSwitch Interface \
            _uuid name type options external_ids other_config
    } | sort
}

scenario_upgrade() {
    echo "# upgrade: stock Debian Open vSwitch with a database"
    must "apt-get install openvswitch-switch (stock)" \
        apt_install openvswitch-switch
    must "ovs-ctl starts ovsdb-server (stock schema)" start_ovsdb
    local stock_ver
    stock_ver=$(ovsdb-client get-schema-version "$DB_SOCK" Open_vSwitch)
    check "stock ovs-vswitchd starts" start_vswitchd
    check "bridges and ports" \
        ovs-vsctl add-br br-int -- set Bridge br-int datapath_type=netdev \
                fail_mode=secure other_config:hwaddr=02:00:00:00:00:01 \
            -- add-port br-int pac0 tag=10 -- set Interface pac0 \
                external_ids:iface-id=lp-vm1 \
            -- add-br br-ex -- set Bridge br-ex datapath_type=netdev \
            -- add-port br-ex pac1 trunks=20,30 \
            -- set Open_vSwitch . external_ids:ovn-remote=tcp:192.0.2.10:6642 \
                external_ids:ovn-encap-type=geneve
    dump_config > /tmp/before.csv
    local pid
    pid=$(cat "$RUN/ovs-vswitchd.pid")

    echo "# install the .debs with ovsdb-server and ovs-vswitchd running"
    must "apt-get install openvswitch-switch-pac ovs-pac-agent" \
        apt_install /pac-test/debs/openvswitch-switch-pac_*.deb \
            /pac-test/debs/ovs-pac-agent_*.deb
    show_messages
    check "database converted online to the patched schema" \
        sh -c "[ \$(ovsdb-client get-schema-version $DB_SOCK Open_vSwitch) = \
               \$(ovsdb-tool schema-version $SCHEMA) ] && \
               ovsdb-client list-tables $DB_SOCK Open_vSwitch | grep -qx PAC"
    check "backup of the stock database saved" \
        test -s "/etc/openvswitch/conf.db.backup$stock_ver-before-pac"
    dump_config > /tmp/after.csv
    check "configuration unchanged (Open_vSwitch, Bridge, Port, Interface)" \
        diff -u /tmp/before.csv /tmp/after.csv
    check "ovs-vswitchd not restarted (same pid $pid, stock binary)" \
        sh -c "kill -0 $pid && [ \$(cat $RUN/ovs-vswitchd.pid) = $pid ] && \
               [ \$(readlink -f /proc/$pid/exe) = $STOCK_VSWITCHD ]"
    check "stock ovs-vswitchd still serves its bridges" \
        sh -c "ovs-appctl -t ovs-vswitchd dpif/show | grep -q pac1"
    echo "# opt in: the patched ovs-vswitchd, Open vSwitch restarted by the operator"
    check "update-alternatives --set, restart ovsdb-server and ovs-vswitchd" \
        opt_in
    check "ovs-vsctl creates a PAC row on pac0" \
        ovs-vsctl set Interface pac0 pac=@p -- --id=@p create PAC threshold=96000
    check "PAC enabled on pac0" \
        wait_for 10 sh -c "[ \"\$(ovs-vsctl get Interface pac0 status:pac | tr -d '\"')\" = enabled ]"
    dump_config > /tmp/after-restart.csv
    check "configuration unchanged after the restart" \
        diff -u /tmp/before.csv /tmp/after-restart.csv
}

# ---------------------------------------------------------------------------
mkdir -p /var/log/openvswitch
case ${1:-} in
    install) scenario_install ;;
    upgrade) scenario_upgrade ;;
    *) echo "usage: in-root.sh install|upgrade" >&2; exit 2 ;;
esac
if [ $failures -gt 0 ]; then
    logs
fi

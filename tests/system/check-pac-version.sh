#!/bin/bash
# Starts the patched OVS build's ovsdb-server and ovs-vswitchd with private
# run/db/log directories, checks that "ovs-appctl pac/version" answers, and
# stops them again (also on failure or interruption).
#
# Usage: tests/system/check-pac-version.sh [OVS_BUILDDIR]
#   OVS_BUILDDIR defaults to $OVS_BUILDDIR, else ./build/ovs (the top build
#   directory, as under 'make check'), else build/ovs next to this script's
#   source tree.  Never touches the system's /var/run/openvswitch.

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ovs=${1:-${OVS_BUILDDIR:-}}
if [ -z "$ovs" ]; then
    if [ -x build/ovs/vswitchd/ovs-vswitchd ]; then
        ovs=build/ovs
    else
        ovs=$here/../../build/ovs
    fi
fi
ovs=$(cd "$ovs" && pwd)

for prog in ovsdb/ovsdb-tool ovsdb/ovsdb-server vswitchd/ovs-vswitchd \
            utilities/ovs-appctl utilities/ovs-vsctl; do
    if [ ! -x "$ovs/$prog" ]; then
        echo "check-pac-version: $ovs/$prog not built" >&2
        exit 1
    fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pac-version.XXXXXX")
export OVS_RUNDIR=$tmp OVS_DBDIR=$tmp OVS_LOGDIR=$tmp
export OVS_SYSCONFDIR=$tmp OVS_PKGDATADIR=$ovs/vswitchd OVS_BINDIR=$ovs
db_sock=unix:$tmp/db.sock

passed=0
failed=0

# Whether process $1 runs (an exited daemon may stay a zombie for a while
# when its parent is slow to reap it; that counts as stopped).
running() {
    local state
    state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$state" ] && [ "$state" != Z ]
}

# Stops the daemon whose pidfile is $tmp/$1.pid: politely through its
# control socket, then by pid.
stop_daemon() {
    local name=$1 pidfile=$tmp/$1.pid pid i
    [ -f "$pidfile" ] || return 0
    pid=$(cat "$pidfile" 2>/dev/null) || return 0
    [ -n "$pid" ] || return 0
    "$ovs/utilities/ovs-appctl" -T 5 -t "$name" exit >/dev/null 2>&1 || true
    for i in $(seq 50); do
        running "$pid" || return 0
        sleep 0.1
    done
    echo "check-pac-version: $name ($pid) did not exit, killing it" >&2
    kill -9 "$pid" 2>/dev/null || true
}

cleanup() {
    local rc=$?
    set +e
    stop_daemon ovs-vswitchd
    stop_daemon ovsdb-server
    if [ $rc -ne 0 ] && [ -d "$tmp" ]; then
        echo "check-pac-version: failed; logs follow" >&2
        tail -n 20 "$tmp"/*.log >&2 2>/dev/null
    fi
    rm -rf "$tmp"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

check() {
    local what=$1
    shift
    if "$@"; then
        echo "ok: $what"
        passed=$((passed + 1))
    else
        echo "FAIL: $what"
        failed=$((failed + 1))
    fi
}

version_output=$("$ovs/vswitchd/ovs-vswitchd" --version)
check "ovs-vswitchd is Open vSwitch 3.1.0" \
    grep -q '(Open vSwitch) 3\.1\.0$' <<<"$version_output"
check "ovs-vswitchd is built with DPDK 22.11" \
    grep -q '^DPDK 22\.11' <<<"$version_output"

"$ovs/ovsdb/ovsdb-tool" create "$tmp/conf.db" \
    "$ovs/vswitchd/vswitch.ovsschema"
"$ovs/ovsdb/ovsdb-server" "$tmp/conf.db" --remote="p$db_sock" \
    -vconsole:off --pidfile --detach --no-chdir --log-file
"$ovs/utilities/ovs-vsctl" --db="$db_sock" --no-wait init
"$ovs/vswitchd/ovs-vswitchd" "$db_sock" \
    -vconsole:off --pidfile --detach --no-chdir --log-file

reply=$("$ovs/utilities/ovs-appctl" -T 10 -t ovs-vswitchd pac/version) || true
echo "pac/version: $reply"
check "ovs-appctl pac/version answers 'ovs-pac X (libpac Y)'" \
    grep -Eqx 'ovs-pac [0-9]+\.[0-9]+\.[0-9]+ \(libpac [0-9]+\.[0-9]+\.[0-9]+\)' \
    <<<"$reply"
check "ovs-vswitchd logged the ovs-pac version" \
    grep -q 'pac_unixctl.*ovs-pac ' "$tmp/ovs-vswitchd.log"

echo "check-pac-version: $passed passed, $failed failed"
[ $failed -eq 0 ]

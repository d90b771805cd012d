#!/bin/bash
# Package test (docs/packaging.md, "Tests"): builds the .debs (tools/package
# deb, with lintian), creates a fresh Debian 12 root with mmdebstrap from the
# configured Debian mirror (the Debian entries of the machine's apt sources),
# with a policy-rc.d that lets no service start, downloads what the tests
# install once, then runs tests/packaging/in-root.sh in a fresh copy of the
# root per scenario ("install": install, PAC, agent, purge; "upgrade": from
# the stock Debian Open vSwitch with a database), each in its own network,
# PID and mount namespaces (veth pairs of its own; every daemon dies with
# the namespace).
#
# Before the roots, and counted as one test each: tools/package deb and,
# unless PAC_PACKAGING_RPM=no, tools/package rpm-rebuild (the source RPM,
# rpmspec -P, rpmlint, rpmbuild --rebuild --nodeps).
#
# Usage: tests/packaging/run.sh [--no-build]
#   --no-build   no package builds: test the .debs already in build/packages/
# Needs root.  Ends with "packaging: N passed, N failed".  The roots are
# skipped (said on that line) only when the configured Debian mirror cannot
# be reached.  Logs and the root tarball: build/packages/test/.
# PAC_KEEP_ROOTS=yes keeps the scenario roots for inspection.

set -uo pipefail
cd "$(dirname "$0")/../.."
top=$(pwd)
out=$top/build/packages
work=$out/test
start=$SECONDS

say() { echo "packaging: $*"; }
finish() {
    say "$1 passed, $2 failed${3:+ ($3)}"
    say "took $((SECONDS - start)) s"
    exit "$4"
}

[ "$(id -u)" -eq 0 ] || finish 0 1 "needs root" 1
for prog in mmdebstrap unshare chroot ip python3; do
    command -v $prog >/dev/null || finish 0 1 "$prog not found; run tools/install-deps" 1
done

# The Debian 12 entries of the apt sources (bookworm, -updates, -security),
# one-line format, for mmdebstrap.
sources=$(python3 - <<'EOF'
import glob, re
suites = {"bookworm", "bookworm-updates", "bookworm-security"}
out = []
for path in glob.glob("/etc/apt/sources.list") + \
        sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
    for line in open(path):
        m = re.match(r"\s*deb\s+(\[[^]]*\]\s+)?(\S+)\s+(\S+)\s+(.+)", line)
        if m and m.group(3) in suites:
            out.append(f"deb {m.group(2)} {m.group(3)} {m.group(4).strip()}")
for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
    for stanza in re.split(r"\n\s*\n", open(path).read()):
        fields = {}
        for line in stanza.splitlines():
            m = re.match(r"([A-Za-z-]+):\s*(.*)", line)
            if m:
                fields[m.group(1).lower()] = m.group(2).split()
        if "deb" not in fields.get("types", []) or \
                fields.get("enabled", ["yes"]) == ["no"]:
            continue
        for uri in fields.get("uris", []):
            for suite in fields.get("suites", []):
                if suite in suites:
                    comps = " ".join(fields.get("components", ["main"]))
                    out.append(f"deb {uri} {suite} {comps}")
print("\n".join(dict.fromkeys(out)))
EOF
)
[ -n "$sources" ] || finish 0 1 "no Debian 12 entries in the apt sources" 1

# Reachability of the mirror: the Release file of its first entry.
first=$(awk 'NR == 1 { print $2 "/dists/" $3 "/InRelease" }' <<<"$sources")
mirror=yes
if ! python3 -c 'import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=20).read(1)' "$first" 2>/dev/null; then
    mirror=no
fi

# The package builds count as one test each.
bpassed=0
bfailed=0
# build NAME COMMAND...: runs COMMAND (a package build) and counts it.
build() {
    local name=$1 t=$SECONDS
    shift
    say "$name"
    if "$@"; then
        echo "ok - $name ($((SECONDS - t)) s)"
        bpassed=$((bpassed + 1))
    else
        echo "not ok - $name ($((SECONDS - t)) s)"
        bfailed=$((bfailed + 1))
        return 1
    fi
}
if [ "${1:-}" != --no-build ]; then
    build "tools/package deb (dpkg-buildpackage -b, lintian)" \
        tools/package deb || finish $bpassed $bfailed "" 1
    if [ "${PAC_PACKAGING_RPM:-yes}" != no ]; then
        build "tools/package rpm-rebuild (source RPM, rpmspec -P, rpmlint, rpmbuild --rebuild --nodeps)" \
            tools/package rpm-rebuild
    fi
fi
if [ $mirror = no ]; then
    finish $bpassed $bfailed "install tests skipped: the configured Debian mirror cannot be reached" \
        $((bfailed > 0))
fi
debs=("$out"/openvswitch-switch-pac_*.deb "$out"/ovs-pac-agent_*.deb)
for d in "${debs[@]}"; do
    [ -f "$d" ] || finish $bpassed $((bfailed + 1)) "$d missing; run tools/package deb" 1
done

# The .debs as seen inside a root.
root_debs=()
for d in "${debs[@]}"; do
    root_debs+=("/pac-test/debs/${d##*/}")
done

rm -rf "$work"
mkdir -p "$work/archives/partial"

say "mmdebstrap: fresh Debian 12 root (minbase) from the configured Debian mirror"
t=$SECONDS
if ! mmdebstrap --variant=minbase --mode=root --skip=cleanup/apt/lists \
        --customize-hook='printf "#!/bin/sh\n# no service starts in the test root\nexit 101\n" > "$1/usr/sbin/policy-rc.d"; chmod 755 "$1/usr/sbin/policy-rc.d"' \
        bookworm "$work/root.tar" - <<<"$sources" > "$work/mmdebstrap.log" 2>&1; then
    tail -n 20 "$work/mmdebstrap.log"
    finish 0 1 "mmdebstrap failed (log: $work/mmdebstrap.log)" 1
fi
say "root created in $((SECONDS - t)) s ($(du -h "$work/root.tar" | cut -f1))"

# make_root NAME: extracts a fresh root into $work/NAME with the .debs and
# in-root.sh in /pac-test.
make_root() {
    local root=$work/$1
    rm -rf "$root"
    mkdir -p "$root"
    tar -xf "$work/root.tar" -C "$root"
    mkdir -p "$root/pac-test/debs"
    cp "${debs[@]}" "$root/pac-test/debs/"
    cp tests/packaging/in-root.sh "$root/pac-test/"
}

# in_root ROOT NET COMMAND...: runs COMMAND chrooted in ROOT, in new PID and
# mount namespaces (the apt cache $work/archives, /dev, /proc, /sys), and,
# if NET is "isolated", a new network namespace with the veth pairs
# pac0/pac0-peer and pac1/pac1-peer.
in_root() {
    local root=$1 net=$2
    shift 2
    local netns=() setup=""
    if [ "$net" = isolated ]; then
        netns=(--net)
        setup='ip link set lo up &&
               ip link add pac0 type veth peer name pac0-peer &&
               ip link add pac1 type veth peer name pac1-peer &&
               for i in pac0 pac0-peer pac1 pac1-peer; do ip link set $i up; done &&
               mount -t sysfs sysfs "$ROOT/sys" &&'
    fi
    ROOT=$root ARCHIVES=$work/archives unshare "${netns[@]}" --pid --fork \
        --mount --propagation private --mount-proc="$root/proc" \
        sh -c "set -e
               mount --bind /dev \"\$ROOT/dev\"
               mount --bind \"\$ARCHIVES\" \"\$ROOT/var/cache/apt/archives\"
               $setup
               exec chroot \"\$ROOT\" \"\$@\"" sh "$@"
}

say "downloading what the tests install (once, into $work/archives)"
t=$SECONDS
make_root download
cp /etc/resolv.conf "$work/download/etc/resolv.conf" 2>/dev/null || true
if ! in_root "$work/download" host \
        apt-get install -y -q --no-install-recommends --download-only \
        "${root_debs[@]}" systemd \
        > "$work/download.log" 2>&1; then
    tail -n 20 "$work/download.log"
    finish 0 1 "apt-get --download-only failed (log: $work/download.log)" 1
fi
rm -rf "$work/download"
say "downloaded in $((SECONDS - t)) s"

status=0
for scenario in install upgrade; do
    say "scenario $scenario (log: $work/$scenario.log)"
    t=$SECONDS
    make_root "$scenario"
    in_root "$work/$scenario" isolated /bin/bash /pac-test/in-root.sh "$scenario" \
        > "$work/$scenario.log" 2>&1
    rc=$?
    grep -E '^(ok|not ok) |^#|^    ' "$work/$scenario.log"
    if [ $rc -ne 0 ]; then
        say "in-root.sh $scenario exited with status $rc"
        status=1
    fi
    if ! grep -q '^ok ' "$work/$scenario.log"; then
        tail -n 20 "$work/$scenario.log"
        status=1
    fi
    say "scenario $scenario took $((SECONDS - t)) s"
    if [ "${PAC_KEEP_ROOTS:-no}" != yes ]; then
        rm -rf "${work:?}/$scenario"
    fi
done

passed=$(cat "$work"/install.log "$work"/upgrade.log | grep -c '^ok ')
failed=$(cat "$work"/install.log "$work"/upgrade.log | grep -c '^not ok ')
if [ "$failed" -eq 0 ] && [ $status -ne 0 ]; then
    failed=1
fi
passed=$((passed + bpassed))
failed=$((failed + bfailed))
finish "$passed" "$failed" "" $((failed > 0))

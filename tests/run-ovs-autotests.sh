#!/bin/bash
# Runs autotests of the patched OVS tree through 'make ovs-autotests' and
# prints "ovs-autotests: N passed, N failed" (tools/test adds it up).
# Arguments: OVS testsuite flags, default "-k pac" (ovs-tests/pac.at).
#
#   tests/run-ovs-autotests.sh                     the ovs-pac autotests
#   tests/run-ovs-autotests.sh -k odp -k dpif-netdev
#
# Skipped tests and expected failures count as neither.

cd "$(dirname "$0")/.."
flags=${*:--k pac}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

make ovs-autotests OVS_TESTSUITEFLAGS="$flags" 2>&1 | tee "$out"
status=${PIPESTATUS[0]}

passed=$(grep -cE '^ *[0-9]+: .* ok$' "$out")
failed=$(grep -cE '^ *[0-9]+: .* (FAILED|UNEXPECTED PASS)' "$out")
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
    failed=1    # The testsuite did not even run.
fi
echo "ovs-autotests: $passed passed, $failed failed"
[ "$status" -eq 0 ]

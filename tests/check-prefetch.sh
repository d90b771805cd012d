#!/bin/bash
# Checks that libpac's pac_prefetch() still prefetches the flows, not only
# their buckets.  GCC 12 once deleted its second pass (a loop whose only
# effect was __builtin_prefetch() of an address it loads); no functional
# test can see that, and at 100 000 flows it cost 150 cycles per packet
# (docs/libpac.md, "Prefetching a burst's flows").  Counts the prefetch
# instructions in the compiled function: the bucket's, then the flow's two
# cache lines and its window state.  x86-64 only; elsewhere, or without
# objdump, skipped (exit 77).
#
# Usage: tests/check-prefetch.sh [OBJECT]   (default lib/libpac_la-pac.o)

set -euo pipefail

obj=${1:-lib/libpac_la-pac.o}
if [ "$(uname -m)" != x86_64 ] || ! command -v objdump >/dev/null; then
    echo "check-prefetch: skipped (needs x86-64 and objdump)"
    exit 77
fi
if [ ! -f "$obj" ]; then
    echo "check-prefetch: $obj not built" >&2
    exit 1
fi

n=$(objdump -d --no-show-raw-insn "$obj" \
    | awk '/<pac_prefetch>:/ { on = 1; next } on && /^$/ { on = 0 }
           on && /:\tprefetch/ { n++ } END { print n + 0 }')
if [ "$n" -lt 4 ]; then
    echo "check-prefetch: pac_prefetch() in $obj has $n prefetch" \
         "instructions, at least 4 expected (bucket, flow, window state)" >&2
    exit 1
fi
echo "check-prefetch: pac_prefetch() has $n prefetch instructions"

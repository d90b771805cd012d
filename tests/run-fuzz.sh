#! /bin/sh
# Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
# Version 2.0 (the "License"); see LICENSE.
#
# Builds libpac's two libFuzzer targets with clang and runs them one after
# the other for a bounded time:
#
#   fuzz-parse   the segment parser (tests/fuzz-parse.c);
#   fuzz-state   pac_rx(), pac_tx(), pac_run() and the calls around them,
#                with invariants checked after every call
#                (tests/fuzz-state.c).
#
# usage: tests/run-fuzz.sh [OUTDIR]
#
# OUTDIR (default: build/fuzz) receives the fuzzer binaries, their working
# corpora (OUTDIR/corpus, seeded from tests/fuzz-corpus, and
# OUTDIR/corpus-state, seeded from tests/fuzz-corpus-state; both kept across
# runs) and any reproducers (OUTDIR/crash-*, OUTDIR/timeout-*, ...).  Replay
# one with OUTDIR/fuzz-state OUTDIR/crash-..., or, printing every
# operation, with OUTDIR/fuzz-state-replay -v OUTDIR/crash-... (the same
# target built without libFuzzer), both with UBSAN_OPTIONS as set below.
# Environment:
#
#   PAC_FUZZ_SECONDS   total fuzzing time, split between the two targets:
#                      a third for the parser, the rest for the state
#                      fuzzer (default 60: 20 + 40 seconds)
#   CLANG              compiler to use (default: clang, else clang-14)
#
# Exits non-zero if a build fails or a fuzzer finds a crash, an invariant
# violation, undefined behaviour or an input that runs 10 seconds.

set -e

srcdir=$(cd "$(dirname "$0")/.." && pwd)
outdir=${1:-build/fuzz}
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
seconds=${PAC_FUZZ_SECONDS:-60}
parse_seconds=$((seconds / 3))
state_seconds=$((seconds - parse_seconds))
if test "$parse_seconds" -lt 1; then
    parse_seconds=1
fi

if test -z "$CLANG"; then
    for cc in clang clang-14; do
        if command -v "$cc" >/dev/null 2>&1; then
            CLANG=$cc
            break
        fi
    done
fi
if test -z "$CLANG"; then
    echo "$0: clang not found (set CLANG)" >&2
    exit 1
fi

flags="-g -O1 -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -I $srcdir/lib -I $srcdir/tests"

echo "building $outdir/fuzz-parse with $CLANG"
"$CLANG" $flags "$srcdir/lib/pac-parse.c" "$srcdir/tests/fuzz-parse.c" \
    -o "$outdir/fuzz-parse"

UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export UBSAN_OPTIONS

echo "building $outdir/fuzz-state with $CLANG"
"$CLANG" $flags "$srcdir"/lib/*.c "$srcdir/tests/fuzz-state.c" \
    -o "$outdir/fuzz-state"

echo "building $outdir/fuzz-state-replay with $CLANG"
"$CLANG" -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined \
    -DPAC_FUZZ_STANDALONE -I "$srcdir/lib" -I "$srcdir/tests" \
    "$srcdir"/lib/*.c "$srcdir/tests/fuzz-state.c" \
    -o "$outdir/fuzz-state-replay"

# Runs fuzzer $1 on corpus directory $2, seeded from $3, for $4 seconds,
# with the extra libFuzzer options that follow.
fuzz() {
    fuzzer=$1 corpus=$2 seeds=$3 secs=$4
    shift 4
    mkdir -p "$corpus"
    cp "$seeds"/* "$corpus"/
    echo "fuzzing $fuzzer for $secs seconds (corpus: $corpus)"
    status=0
    "$outdir/$fuzzer" \
        -max_total_time="$secs" \
        -timeout=10 \
        -print_final_stats=1 \
        -artifact_prefix="$outdir/" \
        "$@" "$corpus" || status=$?
    if test $status -ne 0; then
        echo "$0: $fuzzer failed (exit status $status); reproducers:" >&2
        ls "$outdir"/crash-* "$outdir"/leak-* "$outdir"/timeout-* \
           "$outdir"/oom-* >&2 2>/dev/null || true
        return 1
    fi
}

failed=
fuzz fuzz-parse "$outdir/corpus" "$srcdir/tests/fuzz-corpus" \
    "$parse_seconds" || failed=yes
fuzz fuzz-state "$outdir/corpus-state" "$srcdir/tests/fuzz-corpus-state" \
    "$state_seconds" -max_len=4096 || failed=yes

if test -n "$failed"; then
    exit 1
fi
echo "fuzzing finished without failures"

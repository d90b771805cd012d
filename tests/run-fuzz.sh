#! /bin/sh
# Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
# Version 2.0 (the "License"); see LICENSE.
#
# Builds the libFuzzer target for the segment parser (tests/fuzz-parse.c) with
# clang and runs it for a bounded time.
#
# usage: tests/run-fuzz.sh [OUTDIR]
#
# OUTDIR (default: build/fuzz) receives the fuzzer binary, the working corpus
# (OUTDIR/corpus, seeded from tests/fuzz-corpus and kept across runs) and any
# crash reproducers (OUTDIR/crash-*).  Environment:
#
#   PAC_FUZZ_SECONDS   how long to fuzz (default 60)
#   CLANG              compiler to use (default: clang, else clang-14)
#
# Exits non-zero if the build fails or the fuzzer finds a crash or an
# invariant violation.

set -e

srcdir=$(cd "$(dirname "$0")/.." && pwd)
outdir=${1:-build/fuzz}
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
seconds=${PAC_FUZZ_SECONDS:-60}

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

echo "building $outdir/fuzz-parse with $CLANG"
"$CLANG" -g -O1 -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=undefined \
    -I "$srcdir/lib" \
    "$srcdir/lib/pac-parse.c" "$srcdir/tests/fuzz-parse.c" \
    -o "$outdir/fuzz-parse"

corpus=$outdir/corpus
mkdir -p "$corpus"
cp "$srcdir"/tests/fuzz-corpus/* "$corpus"/

echo "fuzzing for $seconds seconds (corpus: $corpus)"
status=0
"$outdir/fuzz-parse" \
    -max_total_time="$seconds" \
    -print_final_stats=1 \
    -artifact_prefix="$outdir/" \
    "$corpus" || status=$?

if test $status -ne 0; then
    echo "$0: fuzzer failed (exit status $status); reproducers:" >&2
    ls "$outdir"/crash-* "$outdir"/leak-* "$outdir"/timeout-* \
       "$outdir"/oom-* 2>/dev/null >&2 || true
    exit 1
fi
echo "fuzzing finished without failures"

#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for a bounded time (default 60 s each).
# Usage: tools/fuzz.sh [SECONDS]
set -euo pipefail
secs=${1:-60}
here=$(cd "$(dirname "$0")/.." && pwd)
build="$here/build-fuzz"
cmake -S "$here" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DGUARDFS_FUZZ=ON -DGUARDFS_TESTS=OFF -DGUARDFS_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" --target fuzz_pattern fuzz_policy
for t in pattern policy; do
    work=$(mktemp -d)
    cp "$here"/tests/fuzz/corpus/$t/* "$work"/
    echo "== fuzz_$t for ${secs}s"
    (cd "$work" && "$build/tests/fuzz/fuzz_$t" -max_total_time="$secs" -max_len=4096 -timeout=10 \
        -rss_limit_mb=2048 "$work")
    rm -rf "$work"
done
echo "fuzz: no crash"

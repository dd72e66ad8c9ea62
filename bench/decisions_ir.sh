#!/usr/bin/env bash
# Instructions per decision (valgrind --tool=callgrind): repeatable on a busy machine, unlike
# wall time. For each benchmark of bench_decisions: the inclusive instruction count of
# guard::Judge::decide divided by the number of calls to it.
# Usage: bench/decisions_ir.sh [BUILD_DIR]   (default: build)
set -euo pipefail
build=${1:-build}
bin="$build/bench/bench_decisions"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-26s %8s %12s\n' benchmark calls Ir/decision
# The streams (BM_GitAdd, BM_Untar, BM_RmRf: a fixed number of decisions, so no setup is spread
# over a varying count) with the empty policy (/0/) and the recommended one (/1/), warm caches.
for b in 'BM_NoRules$' 'BM_Recommended$' 'BM_RecommendedPlus/10$' 'BM_RecommendedPlus/100$' \
         'BM_RecommendedPlus/1000$' 'BM_GitAdd/0/0/0/' 'BM_GitAdd/1/0/0/' 'BM_Untar/0/0/0/' \
         'BM_Untar/1/0/0/' 'BM_RmRf/0/0/0/' 'BM_RmRf/1/0/0/'; do
    valgrind --tool=callgrind --callgrind-out-file="$out/cg" \
        "$bin" --benchmark_filter="$b" --benchmark_min_time=0.05 >/dev/null 2>&1
    # The caller-side line: "<inclusive Ir> (<pct>)  >   ...Judge::decide(...) (<calls>x)"
    # (callgrind 3.19 ends the line with the object's path in brackets.)
    line=$(callgrind_annotate --tree=calling --inclusive=yes "$out/cg" 2>/dev/null |
           grep -E '>.*Judge::decide\(guardfs::guard::Request const&\) const \([0-9,]+x\)' |
           head -1)
    ir=$(echo "$line" | awk '{gsub(",", "", $1); print $1}')
    calls=$(echo "$line" | grep -oE '\([0-9,]+x\)' | tail -1 | tr -d '(),x')
    name=${b%$}
    printf '%-26s %8s %12s\n' "${name%/}" "$calls" "$((ir / calls))"
done

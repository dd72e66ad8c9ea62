#!/usr/bin/env python3
"""Summarise `perf script` text of the fuse:fuse_request_send/end tracepoints, as written by
bench/fs/fuse-latency.sh: OUT/CONTENDER-RUN.txt for each run.

Usage: fuse-latency.py OUT CONTENDER...
"""
import collections
import glob
import re
import statistics
import sys

EVENT = re.compile(r"\s(\d+\.\d+):\s+fuse:fuse_request_(send|end):.*?\breq (\d+)")
OPCODE = re.compile(r"opcode \d+ \((\w+)\)")


def latencies(path: str) -> dict[str, list[float]]:
    """Microseconds from send to end of each request, by kind."""
    sent: dict[str, tuple[float, str]] = {}
    out: dict[str, list[float]] = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            m = EVENT.search(line)
            if not m:
                continue
            t, kind, req = float(m.group(1)), m.group(2), m.group(3)
            if kind == "send":
                op = OPCODE.search(line)
                sent[req] = (t, op.group(1).removeprefix("FUSE_") if op else "?")
            elif req in sent:
                t0, op = sent.pop(req)
                out[op].append((t - t0) * 1e6)
    return out


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    for who in sys.argv[2:]:
        runs = [latencies(p) for p in sorted(glob.glob(f"{out}/{who}-*.txt"))]
        if not runs:
            print(f"{who}: no runs in {out}")
            continue
        counts = [sum(len(v) for v in r.values()) for r in runs]
        waited = [sum(sum(v) for op, v in r.items() if op != "RELEASE") / 1000 for r in runs]
        release = [sum(r.get("RELEASE", [])) / 1000 for r in runs]
        print(f"{who}: {len(runs)} runs, requests per run {statistics.median(counts):.0f}; "
              f"waited on (all but RELEASE) {statistics.median(waited):.1f} ms a run "
              f"(runs: {', '.join(f'{x:.1f}' for x in waited)}); "
              f"RELEASE {statistics.median(release):.1f} ms a run")
        kinds: dict[str, list[float]] = collections.defaultdict(list)
        for r in runs:
            for op, v in r.items():
                kinds[op] += v
        for op, v in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
            v.sort()
            print(f"  {op:12s} {len(v) / len(runs):6.0f} a run  median {statistics.median(v):6.1f} us"
                  f"  p90 {v[int(len(v) * 0.9)]:7.1f} us  sum {sum(v) / len(runs) / 1000:6.2f} ms a run")
    return 0


if __name__ == "__main__":
    sys.exit(main())

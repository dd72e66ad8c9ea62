#!/usr/bin/env python3
"""How long a build step waits on each FUSE request (issue #6, "where the time goes").

Runs as root. For each contender (fsbench.py's: guardfs-rec, guardfs-empty, bindfs, mergerfs,
fuse-overlayfs, mounted with fsbench's options) the script mounts it once over a fresh sample
directory, then runs a step of fsbench's build of its C project (write_cproj: 50 files) --runs times,
each on a fresh copy, under `perf record -a` of the kernel's
fuse:fuse_request_send and fuse:fuse_request_end tracepoints (Linux 6.13 and later). It prints
per contender: requests per run, the time callers waited on all requests but RELEASE (sent in
the background after close(2), nobody waits on it), and each kind's median latency. Tracing
adds to every request's latency; compare contenders, not absolute times. fuse.enable_uring is
turned on for the run, as fsbench does, and put back afterwards. The step is cmake's configure
step (the default), or make (`--step make`: `cmake --build build -j2` as fsbench times it,
after an untraced configure step).

  python3 bench/fs/fuse-latency.py [--guardfs BIN] [--guardfs-options '-o no_io_uring']
                                   [--base-dir DIR] [--out DIR] [--runs N] [--step make]
                                   [CONTENDER...]
  python3 bench/fs/fuse-latency.py --report --out DIR CONTENDER...   # summarise traces again
"""
import argparse
import atexit
import collections
import glob
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fsbench  # noqa: E402  (contenders, mounts and the C project, shared with fsbench)

EVENT = re.compile(r"\s(\d+\.\d+):\s+fuse:fuse_request_(send|end):.*?\breq (\d+)")
OPCODE = re.compile(r"opcode \d+ \((\w+)\)")
CONFIGURE = ["cmake", "-S", ".", "-B", "build", "-G", "Unix Makefiles"]
MAKE = ["cmake", "--build", "build", "-j2"]


def latencies(path: str) -> dict[str, list[float]]:
    """Microseconds from send to end of each request in `perf script` text, by kind."""
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


def trace(name: str, args, base: str) -> None:
    """Mounts `name` once and traces --runs build steps through it into OUT/NAME-K.txt."""
    sdir = tempfile.mkdtemp(prefix=f"{name}.", dir=base)
    dirs = fsbench.make_dirs(name, sdir)
    mounts = fsbench.Mounts(sdir)
    try:
        if name.startswith("guardfs"):
            policy = {"guardfs-rec": [], "guardfs-empty": ["--policy", fsbench.EMPTY_POLICY]}[name]
            cmd = [args.guardfs, "mount", "-f", *shlex.split(args.guardfs_options), *policy,
                   dirs["work"]]
        else:
            cmd = fsbench.passthrough_command(name, dirs)
        mounts.mount(cmd, dirs["work"], os.path.join(sdir, "daemon.log"))
        proj = os.path.join(dirs["work"], "cproj")
        env = dict(os.environ, HOME=sdir)
        for k in range(1, args.runs + 1):
            shutil.rmtree(proj, ignore_errors=True)
            subprocess.run(["cp", "-a", args.cproj, proj], check=True)
            if args.step == "make":
                subprocess.run(CONFIGURE, cwd=proj, env=env, check=True,
                               stdout=subprocess.DEVNULL)
            os.sync()
            time.sleep(1)
            data = os.path.join(args.out, f"{name}-{k}.data")
            subprocess.run(["perf", "record", "-q", "-e", "fuse:fuse_request_send", "-e",
                            "fuse:fuse_request_end", "-a", "-o", data, "--",
                            *(MAKE if args.step == "make" else CONFIGURE)],
                           cwd=proj, env=env, check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            with open(os.path.join(args.out, f"{name}-{k}.txt"), "w") as f:
                subprocess.run(["perf", "script", "-i", data], stdout=f,
                               stderr=subprocess.DEVNULL, check=True)
    finally:
        mounts.cleanup()
        shutil.rmtree(sdir, ignore_errors=True)


def report(out: str, names: list[str]) -> None:
    for name in names:
        runs = [latencies(p) for p in sorted(glob.glob(os.path.join(out, f"{name}-*.txt")))]
        if not runs:
            print(f"{name}: no runs in {out}")
            continue
        counts = [sum(len(v) for v in r.values()) for r in runs]
        waited = [sum(sum(v) for op, v in r.items() if op != "RELEASE") / 1000 for r in runs]
        release = [sum(r.get("RELEASE", [])) / 1000 for r in runs]
        print(f"{name}: {len(runs)} runs, requests per run {statistics.median(counts):.0f}; "
              f"waited on (all but RELEASE) {statistics.median(waited):.1f} ms a run "
              f"(runs: {', '.join(f'{x:.1f}' for x in waited)}); "
              f"RELEASE {statistics.median(release):.1f} ms a run")
        kinds: dict[str, list[float]] = collections.defaultdict(list)
        for r in runs:
            for op, v in r.items():
                kinds[op] += v
        for op, v in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
            v.sort()
            print(f"  {op:12s} {len(v) / len(runs):6.0f} a run"
                  f"  median {statistics.median(v):6.1f} us  p90 {v[int(len(v) * 0.9)]:7.1f} us"
                  f"  sum {sum(v) / len(runs) / 1000:6.2f} ms a run")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("contenders", nargs="*",
                    default=["guardfs-rec", "guardfs-empty", "fuse-overlayfs"])
    ap.add_argument("--guardfs", default=fsbench.DEFAULT_GUARDFS)
    ap.add_argument("--guardfs-options", default="", help="more guardfs mount options")
    ap.add_argument("--base-dir", default="/var/tmp", help="parent of the temporary tree")
    ap.add_argument("--out", default="/var/tmp/fuse-latency", help="perf data and its text")
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--step", choices=["configure", "make"], default="configure")
    ap.add_argument("--report", action="store_true", help="only summarise the traces in --out")
    args = ap.parse_args()
    for name in args.contenders:
        if name not in ("guardfs-rec", "guardfs-empty", *fsbench.PASSTHROUGHS):
            ap.error(f"unknown contender {name}")
    if not args.report:
        found = fsbench.read_kernel_param(fsbench.URING_PARAM)
        if found is not None and found != "Y":
            fsbench.write_kernel_param(fsbench.URING_PARAM, "Y")
            atexit.register(fsbench.write_kernel_param, fsbench.URING_PARAM, found)
        shutil.rmtree(args.out, ignore_errors=True)
        os.makedirs(args.out)
        base = tempfile.mkdtemp(prefix="fuse-latency.", dir=args.base_dir)
        try:
            args.cproj = os.path.join(base, "cproj")
            fsbench.write_cproj(args.cproj, 50)
            for name in args.contenders:
                trace(name, args, base)
        finally:
            shutil.rmtree(base, ignore_errors=True)
    report(args.out, args.contenders)
    return 0


if __name__ == "__main__":
    sys.exit(main())

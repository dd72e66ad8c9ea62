#!/usr/bin/env python3
"""CPU time and context switches of each thread of one guardfs daemon over fsbench's build
workload (issue #6): which thread the daemon's CPU time goes to, e.g. the ring threads against
the watchdog. One mount (the built-in policy) over a directory under --base-dir; N times a copy
of fsbench's 50-file C project, cmake's configure step and make -j2 in it; then, per thread,
user and system clock ticks (/proc/PID/task/TID/stat) and voluntary and involuntary context
switches (.../status) taken over those builds, and the totals.

    python3 bench/fs/daemon-threads.py [--guardfs BIN] [--builds 5] [--base-dir /var/tmp]

Runs as root (a FUSE mount). The kernel's fuse.enable_uring is left as it is: set it to Y
first to see the ring threads.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fsbench  # noqa: E402  (the C project and the mounts, shared with fsbench)


def snapshot(pid: int) -> dict[int, tuple[int, int, int, int]]:
    """tid -> (user ticks, system ticks, voluntary, involuntary context switches)."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                status = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue  # the thread ended
        out[int(tid)] = (int(fields[11]), int(fields[12]),
                         int(status["voluntary_ctxt_switches"]),
                         int(status["nonvoluntary_ctxt_switches"]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--guardfs", default=fsbench.DEFAULT_GUARDFS)
    ap.add_argument("--builds", type=int, default=5)
    ap.add_argument("--base-dir", default="/var/tmp")
    args = ap.parse_args()
    base = os.path.join(args.base_dir, f"daemon-threads-{os.getpid()}")
    os.makedirs(base)
    cproj = os.path.join(base, "cproj")
    fsbench.write_cproj(cproj, 50)
    ws = os.path.join(base, "ws")
    os.mkdir(ws)
    mounts = fsbench.Mounts(base)
    try:
        daemon = mounts.mount([args.guardfs, "mount", "-f", ws], ws,
                              os.path.join(base, "daemon.log"))
        before = snapshot(daemon.pid)
        for i in range(args.builds):
            proj = os.path.join(ws, f"b{i}")
            subprocess.run(["cp", "-a", cproj, proj], check=True)
            for cmd in (["cmake", "-S", ".", "-B", "build", "-G", "Unix Makefiles"],
                        ["cmake", "--build", "build", "-j2"]):
                subprocess.run(cmd, cwd=proj, check=True, stdout=subprocess.DEVNULL)
        after = snapshot(daemon.pid)
    finally:
        mounts.cleanup()
        shutil.rmtree(base, ignore_errors=True)
    hz = os.sysconf("SC_CLK_TCK")
    total = [0, 0, 0, 0]
    print(f"{args.builds} builds; per thread: CPU seconds (user, system), context switches "
          "(voluntary, involuntary)")
    for tid in sorted(after):
        d = [a - b for a, b in zip(after[tid], before.get(tid, (0, 0, 0, 0)))]
        total = [t + x for t, x in zip(total, d)]
        print(f"  thread {tid}: user {d[0] / hz:.2f} s, system {d[1] / hz:.2f} s, "
              f"{d[2]} voluntary, {d[3]} involuntary")
    print(f"  all: user {total[0] / hz:.2f} s, system {total[1] / hz:.2f} s, {total[2]} "
          f"voluntary, {total[3]} involuntary")
    return 0


if __name__ == "__main__":
    sys.exit(main())

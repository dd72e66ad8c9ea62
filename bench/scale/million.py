#!/usr/bin/env python3
"""million: a tree of N files (default 1,000,000) walked and deleted through guardfs.

Issue #8 ("Scale"). Makes N empty files, 1,000 per directory, on the disk under --base-dir, then
for each of two sides, in one run:

  native   the plain directory
  guardfs  guardfs mounted over it in place with the built-in recommended policy

runs three real programs and times each: `find . -type f | wc -l` (a listing walk),
`find . -printf '%s\\n'` (a stat of each entry) and `rm -rf` of every directory (a delete of each
entry). The tree is made again before each side's delete. While guardfs runs, the daemon's
descriptors and memory (VmRSS, VmHWM from /proc/PID/status) are sampled every 0.2 s. Reports
times, ratios to native, errors, the daemon's peak descriptors against its RLIMIT_NOFILE, and its
peak resident size.

Runs as root (FUSE in place, drop_caches). Standard library only. Only mounts it made are
unmounted (by path) and only the daemon it started is signalled (by pid).

  python3 bench/scale/million.py --json bench/results/million-$(date +%Y%m%d-%H%M).json
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
PER_DIR = 1000


def log(msg: str) -> None:
    print(f"[million {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def make_tree(ws: str, ndirs: int) -> None:
    for d in range(ndirs):
        dp = os.path.join(ws, "d%04d" % d)
        os.mkdir(dp)
        for i in range(PER_DIR):
            os.close(os.open(os.path.join(dp, "f%04d" % i), os.O_WRONLY | os.O_CREAT, 0o644))


def drop_caches() -> None:
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def timed(cmd: str, cwd: str) -> dict:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, shell=True, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    s = time.perf_counter() - t0
    errs = r.stderr.splitlines()
    return {"cmd": cmd, "s": round(s, 2), "rc": r.returncode, "errors": len(errs),
            "first_errors": errs[:3], "out_lines": len(r.stdout.splitlines()),
            "out_head": r.stdout[:40]}


def status_of(pid: int) -> dict:
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "VmHWM"):
                    out[k] = int(v.split()[0])
        out["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
        with open(f"/proc/{pid}/limits") as f:
            for line in f:
                if line.startswith("Max open files"):
                    out["nofile_soft"] = int(line.split()[3])
    except (FileNotFoundError, ProcessLookupError, ValueError):
        pass
    return out


class Sampler(threading.Thread):
    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.stop = threading.Event()
        self.max_fds = 0
        self.max_rss = 0
        self.hwm = 0

    def run(self) -> None:
        while not self.stop.is_set():
            st = status_of(self.pid)
            self.max_fds = max(self.max_fds, st.get("fds", 0))
            self.max_rss = max(self.max_rss, st.get("VmRSS", 0))
            self.hwm = max(self.hwm, st.get("VmHWM", 0))
            time.sleep(0.2)


def fstype_at(path: str) -> str:
    found = ""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            parts = line.split(" ")
            if parts[4] == path and " - " in line:
                found = line.split(" - ", 1)[1].split(" ")[0]
    return found


def run_side(side: str, ws: str, ndirs: int, guardfs: str, log_path: str) -> dict:
    res: dict = {}
    drop_caches()
    proc = None
    sampler = None
    if side == "guardfs":
        proc = subprocess.Popen([guardfs, "mount", "-f", ws], stdout=open(log_path, "ab"),
                                stderr=subprocess.STDOUT)
        for _ in range(200):
            if fstype_at(ws) == "fuse.guardfs":
                break
            time.sleep(0.05)
        else:
            proc.kill()
            raise RuntimeError("guardfs did not mount")
        res["daemon_after_mount"] = status_of(proc.pid)
        sampler = Sampler(proc.pid)
        sampler.start()
    try:
        res["find_list"] = timed("find . -type f | wc -l", ws)
        res["find_stat"] = timed("find . -printf '%s\\n' | wc -l", ws)
        if proc:
            res["daemon_after_walk"] = status_of(proc.pid)
        res["rm"] = timed("rm -rf d*", ws)
        res["left_after_rm"] = len(os.listdir(ws))
    finally:
        if proc:
            sampler.stop.set()
            sampler.join()
            res["daemon_peak"] = {"fds": sampler.max_fds, "VmRSS": sampler.max_rss,
                                  "VmHWM": sampler.hwm}
            res["daemon_at_end"] = status_of(proc.pid)
            if fstype_at(ws) == "fuse.guardfs":
                subprocess.run(["fusermount3", "-u", ws])
            try:
                res["daemon_exit"] = proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                res["daemon_exit"] = "killed"
    return res


def uring_param() -> str | None:
    """The kernel's fuse.enable_uring as found (FUSE over io_uring, docs/decisions/012), or None
    where the kernel has none."""
    try:
        with open("/sys/module/fuse/parameters/enable_uring") as f:
            return f.read().strip()
    except OSError:
        return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=1_000_000)
    ap.add_argument("--guardfs", default=os.path.join(REPO, "build", "guardfs"))
    ap.add_argument("--base-dir", default="/var/tmp")
    ap.add_argument("--json", help="write the results to this file")
    args = ap.parse_args()
    ndirs = (args.files + PER_DIR - 1) // PER_DIR
    base = tempfile.mkdtemp(prefix="million.", dir=args.base_dir)
    ws = os.path.join(base, "ws")
    os.mkdir(ws)
    res: dict = {"files": ndirs * PER_DIR, "dirs": ndirs,
                 "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                 "command": " ".join([sys.executable] + sys.argv),
                 "loadavg_start": [round(x, 2) for x in os.getloadavg()],
                 "kernel": os.uname().release, "fuse.enable_uring": uring_param()}
    try:
        for side in ("native", "guardfs"):
            t0 = time.perf_counter()
            make_tree(ws, ndirs)
            log(f"{side}: made {ndirs * PER_DIR} files in {time.perf_counter() - t0:.1f} s")
            res[side] = run_side(side, ws, ndirs, args.guardfs, os.path.join(base, "daemon.log"))
            log(f"{side}: {json.dumps(res[side])}")
        for k in ("find_list", "find_stat", "rm"):
            n, g = res["native"][k]["s"], res["guardfs"][k]["s"]
            res.setdefault("ratio", {})[k] = round(g / n, 2) if n > 0 else None
    finally:
        if fstype_at(ws) == "fuse.guardfs":
            subprocess.run(["fusermount3", "-u", ws])
        if fstype_at(ws) == "":
            shutil.rmtree(base, ignore_errors=True)
    res["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    text = json.dumps(res, indent=1)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    print(text)
    ok = all(res[s][k]["errors"] == 0 and res[s][k]["rc"] == 0
             for s in ("native", "guardfs") for k in ("find_list", "find_stat", "rm"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

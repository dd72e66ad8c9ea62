#!/usr/bin/env python3
"""Where the recommended policy's daemon CPU on git add/commit goes: user or system time.

fsbench.py records the daemon's user+system seconds per sample. This splits them, for git init +
add -A + commit of /usr/share/cmake-3.25 (fsbench's git add/commit row, its *.pfx test key left
out as there), with the empty and the recommended policy in turn (the order alternating round by
round), each on a fresh mount and a fresh copy of the tree. The daemon's utime, stime and minor
page faults are read from /proc before and after the three git commands. Runs as root.

  python3 bench/fs/git-cpu-split.py --guardfs build/guardfs --rounds 24 \\
      --base-dir /var/tmp/fsb-ext4 --json out.json

Prints, per quantity, both medians, the median of the per-round paired ratios, and the mean
paired difference with its standard error.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fsbench  # noqa: E402  (GIT_ENV, the environment fsbench's git runs in; mountpoints)

EMPTY = os.path.join(HERE, "..", "..", "examples", "policies", "empty.yaml")
TCK = os.sysconf("SC_CLK_TCK")
KEYS = ("wall", "user", "sys", "minflt")


def proc_times(pid: int) -> tuple[float, float, int]:
    """utime, stime (seconds) and minor faults of a live process, all its threads."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / TCK, int(fields[12]) / TCK, int(fields[7])


def sample(args, tarball: str, env: dict, policy: str, rnd: int) -> dict:
    ws = os.path.join(args.base_dir, f"git-cpu-split-{policy}-{rnd}")
    os.makedirs(ws)
    cmd = [args.guardfs, "mount", "-f"] + (["--policy", EMPTY] if policy == "empty" else []) + [ws]
    daemon = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            if ws in fsbench.mountpoints():
                break
            if daemon.poll() is not None:
                raise RuntimeError(f"guardfs exited with {daemon.returncode}")
            time.sleep(0.05)
        else:
            raise RuntimeError(f"{ws} not mounted after 30 s")
        repo = os.path.join(ws, "repo")
        os.mkdir(repo)
        subprocess.run(["tar", "-xf", tarball, "--strip-components=1"], cwd=repo, check=True)
        u0, s0, f0 = proc_times(daemon.pid)
        t0 = time.perf_counter()
        for c in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "i"]):
            subprocess.run(c, cwd=repo, env=env, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        u1, s1, f1 = proc_times(daemon.pid)
    finally:
        if ws in fsbench.mountpoints():
            subprocess.run(["fusermount3", "-u", ws], check=False)
        try:
            daemon.wait(timeout=30)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
    subprocess.run(["rm", "-rf", "--one-file-system", ws], check=True)
    return {"wall": wall, "user": u1 - u0, "sys": s1 - s0, "minflt": f1 - f0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--guardfs", required=True)
    ap.add_argument("--rounds", type=int, default=24)
    ap.add_argument("--base-dir", default="/var/tmp")
    ap.add_argument("--json", help="write the samples here")
    args = ap.parse_args()
    args.guardfs = os.path.abspath(args.guardfs)
    tarball = os.path.join(args.base_dir, "git-cpu-split-tree.tar")
    subprocess.run(["tar", "-C", "/usr/share", "--exclude=*.pfx", "-cf", tarball, "cmake-3.25"],
                   check=True)
    env = dict(os.environ, HOME=args.base_dir, **fsbench.GIT_ENV)
    res: dict[str, list[dict]] = {"empty": [], "rec": []}
    try:
        for rnd in range(args.rounds):
            for policy in (("empty", "rec") if rnd % 2 == 0 else ("rec", "empty")):
                res[policy].append(sample(args, tarball, env, policy, rnd))
            print(rnd, {p: res[p][-1] for p in res}, flush=True)
    finally:
        os.unlink(tarball)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": sys.argv, "samples": res}, f)
    for k in KEYS:
        e = [s[k] for s in res["empty"]]
        r = [s[k] for s in res["rec"]]
        diffs = [b - a for a, b in zip(e, r)]
        ratios = [b / a for a, b in zip(e, r) if a > 0]
        se = statistics.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else float("nan")
        print(f"{k}: empty median {statistics.median(e):.3f}, rec median "
              f"{statistics.median(r):.3f}, paired ratio median "
              f"{statistics.median(ratios) if ratios else float('nan'):.3f}, "
              f"mean paired difference {statistics.mean(diffs):+.4f} (standard error {se:.4f})")


if __name__ == "__main__":
    main()

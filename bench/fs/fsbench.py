#!/usr/bin/env python3
"""fsbench: guardfs against the plain directory and the FUSE passthroughs users pick instead.

Issue #6. Each sample makes a fresh workspace under one temporary base (one disk for every
contender), mounts the contender (guardfs in place; bindfs, mergerfs and fuse-overlayfs at a
mount point over a separate source directory), runs ONE workload whose real programs are timed
with time.perf_counter around their subprocess calls only, unmounts and deletes. Contenders are
interleaved round by round in a Williams design: every contender runs once per round, in
every position equally often, and after every other contender equally often (for an odd number
of contenders over two rounds), so what one sample leaves behind (memory to reclaim, a warm or
cold disk) does not always fall on the same successor. Before 2026-12-02 the order was rotated
(A B C, B C A, ...), under which each contender always followed the same one. Per workload row
and contender the median of the rounds is reported with its ratio to the plain directory
(`native`) measured in the same run.

Runs as root (drop_caches, FUSE mounts). Standard library only.

  python3 bench/fs/fsbench.py --quick                       # smoke test, a few minutes
  python3 bench/fs/fsbench.py --rounds 5 --json out.json --md bench/RESULTS.md
  python3 bench/fs/fsbench.py --memwalk 1000000 --json mem.json  # daemon RSS after a 1M-file walk

Safety: the harness only unmounts mount points it created (by path, all under its temporary
base) and only signals daemons it started (by pid). Between samples it checks that nothing is
left mounted under the base.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import math
import os
import resource
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
DEFAULT_GUARDFS = os.path.join(REPO, "build", "guardfs")
EMPTY_POLICY = os.path.join(REPO, "examples", "policies", "empty.yaml")

# The descriptor limit every daemon gets: the hard limit of this process (raised to
# fs.nr_open when the harness may, i.e. with CAP_SYS_RESOURCE). guardfs and fuse-overlayfs
# hold one descriptor per inode the kernel knows.
def _nofile_target() -> int:
    with open("/proc/sys/fs/nr_open") as f:
        want = int(f.read())
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, want))
    except (ValueError, OSError):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[1]


DAEMON_NOFILE = _nofile_target()

# ----------------------------------------------------------------------------------------
# Contender options (recorded in the JSON and in RESULTS.md)

# mergerfs 2.33.5 (man mergerfs: "PERFORMANCE" and "caching"): every cache the man page
# lists as something to enable for speed, with long timeouts. dropcacheonclose is left at its
# default (false): the man page recommends it to limit double caching (memory), and it costs a
# posix_fadvise per close.
MERGERFS_OPTS = ("cache.files=auto-full,cache.writeback=true,cache.entry=120,cache.attr=120,"
                 "cache.negative_entry=120,cache.statfs=120,cache.open=120,cache.symlinks=true,"
                 "cache.readdir=true,security_capability=false,dropcacheonclose=false,"
                 "fsname=mergerfs")
# bindfs 1.14.7 (man bindfs): its only documented speed option is --multithreaded.
BINDFS_OPTS = ["--no-allow-other", "--multithreaded"]
# fuse-overlayfs 1.10 (man fuse-overlayfs): lowerdir/upperdir/workdir plus noacl (the only
# documented option that removes work).
OVERLAY_EXTRA = "noacl"

ALL_CONTENDERS = ["native", "guardfs-empty", "guardfs-rec", "guardfs-rec+1000",
                  "bindfs", "mergerfs", "fuse-overlayfs"]
# With --alt-guardfs and/or --alt-options: a second guardfs binary, or the same one with other
# mount options (recommended policy), for an A/B comparison in one interleaved run. Not in the
# default list.
ALT = "guardfs-rec-alt"
ALL_WORKLOADS = ["metadata", "untar", "seqio", "git", "smallio", "build"]

# Rows each workload reports, in table order.
ROWS = {
    "metadata": ["meta-create", "meta-stat-walk-1", "meta-stat-walk-warm", "meta-rename",
                 "meta-unlink"],
    "untar": ["untar", "rm-rf"],
    "seqio": ["seq-write+fsync", "seq-read-cold", "seq-read-warm"],
    "git": ["git-add-commit", "git-status-x5", "git-stash-checkout"],
    "smallio": ["fio-randrw-4k", "open-append-close"],
    "build": ["build-cmake", "build-make"],
    "configure": ["cmake-configure"],
}

FULL = dict(meta_files=10_000, seq_mib=1024, fio_size="64m", append_n=20_000, c_files=50,
            tree="/usr/share/cmake-3.25")
QUICK = dict(meta_files=1_000, seq_mib=64, fio_size="8m", append_n=2_000, c_files=10,
             tree="/usr/share/perl5")

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_COUNT": "3",
    "GIT_CONFIG_KEY_0": "gc.auto", "GIT_CONFIG_VALUE_0": "0",
    "GIT_CONFIG_KEY_1": "init.defaultBranch", "GIT_CONFIG_VALUE_1": "main",
    "GIT_CONFIG_KEY_2": "maintenance.auto", "GIT_CONFIG_VALUE_2": "false",
}

# ----------------------------------------------------------------------------------------
# Helper scripts run as separate processes (python3 -I -S: no site, fast start)

CREATE_PY = r"""
import os, sys
n, per = int(sys.argv[1]), 100
data = b"x" * 64
for d in range((n + per - 1) // per):
    os.mkdir("d%03d" % d)
    for i in range(min(per, n - d * per)):
        fd = os.open("d%03d/f%05d" % (d, i), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, data)
        os.close(fd)
"""

RENAME_PY = r"""
import os
for d in sorted(os.listdir(".")):
    for f in os.listdir(d):
        os.rename(d + "/" + f, d + "/" + f + ".r")
"""

UNLINK_PY = r"""
import os
for d in sorted(os.listdir(".")):
    for f in os.listdir(d):
        os.unlink(d + "/" + f)
    os.rmdir(d)
"""

APPEND_PY = r"""
import os, sys
line = b"y" * 99 + b"\n"
for _ in range(int(sys.argv[1])):
    fd = os.open("append.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, line)
    os.close(fd)
"""

EDIT_PY = r"""
import os, sys
files = []
for root, dirs, names in os.walk("."):
    dirs[:] = sorted(d for d in dirs if d != ".git")
    files += [os.path.join(root, n) for n in sorted(names)]
for p in files[::max(1, len(files) // 50)][:50]:
    with open(p, "ab") as f:
        f.write(b"\n# edited by fsbench\n")
"""

MEMTREE_PY = r"""
import os, sys
dirs, per = int(sys.argv[1]), int(sys.argv[2])
for d in range(dirs):
    dn = "d%04d" % d
    os.mkdir(dn)
    for i in range(per):
        os.close(os.open("%s/f%04d" % (dn, i), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
"""


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------------
# Mount bookkeeping

def read_kernel_param(path: str) -> str | None:
    """A module parameter's value, or None where the kernel has no such parameter."""
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def write_kernel_param(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value + "\n")


# The kernel's fuse.enable_uring (Y or N); absent before Linux 6.14 (no FUSE over io_uring).
URING_PARAM = "/sys/module/fuse/parameters/enable_uring"

# Free page reporting (virtio-balloon): the guest hands freed memory back to the host, and the
# next use of it faults it in again from the host. This machine's kernel reports a page as soon
# as it is free (min_free_ms 0). A 1 GiB dd + fsync on the ext4-in-memory disk, 2026-12-05,
# back to back with rm + sync between: 0.43-0.45 s in 12 of 12 tries with min_free_ms 60000 (no
# page reported); with 0, 0.43-1.26 s (3 of 12 above 0.7 s), and in two earlier series of the
# same loop 1.7-3.3 s for 8 of 18. Which sample pays for that is chance, so it is noise.
# The parameter exists only on kernels carrying that patch; elsewhere nothing is changed.
MIN_FREE_PARAM = "/sys/module/page_reporting/parameters/min_free_ms"


def mountpoints() -> list[str]:
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            mp = line.split()[4]
            # mountinfo escapes space, tab, newline and backslash as octal
            mp = mp.encode().decode("unicode_escape")
            out.append(mp)
    return out


class Mounts:
    """Every mount this harness made: path -> daemon Popen. Unmount by path, kill by pid."""

    def __init__(self, base: str):
        self.base = base
        self.live: dict[str, subprocess.Popen] = {}

    def mount(self, cmd: list[str], mnt: str, logpath: str, timeout: float = 20.0) -> subprocess.Popen:
        if mnt in mountpoints():
            raise RuntimeError(f"{mnt} is already mounted")
        logf = open(logpath, "ab")
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=logf, stderr=logf,
                                cwd="/", start_new_session=True)
        logf.close()
        self.live[mnt] = proc
        deadline = time.monotonic() + timeout
        while True:
            if mnt in mountpoints():
                return proc
            if proc.poll() is not None:
                del self.live[mnt]
                raise RuntimeError(f"daemon exited ({proc.returncode}) before mounting {mnt}: "
                                   + open(logpath, errors="replace").read()[-2000:])
            if time.monotonic() > deadline:
                self.unmount(mnt)
                raise RuntimeError(f"{mnt} not mounted after {timeout}s: {shlex.join(cmd)}")
            time.sleep(0.01)

    def unmount(self, mnt: str, timeout: float = 60.0) -> None:
        proc = self.live.get(mnt)
        for attempt in range(50):
            if mnt not in mountpoints():
                break
            r = subprocess.run(["fusermount3", "-u", mnt], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if r.returncode == 0:
                break
            time.sleep(0.1)
        else:
            log(f"fsbench: {mnt} busy; lazy unmount")
            subprocess.run(["fusermount3", "-u", "-z", mnt], stdin=subprocess.DEVNULL)
        if proc is not None:
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                log(f"fsbench: daemon {proc.pid} did not exit after unmount; SIGTERM")
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            self.live.pop(mnt, None)

    def cleanup(self) -> None:
        for mnt in list(self.live)[::-1]:
            try:
                self.unmount(mnt, timeout=15)
            except Exception as e:  # noqa: BLE001 - keep cleaning
                log(f"fsbench: cleanup of {mnt}: {e}")
        for mnt in mountpoints():  # anything under our base (only our paths) still mounted
            if mnt.startswith(self.base + "/"):
                subprocess.run(["fusermount3", "-u", "-z", mnt], stdin=subprocess.DEVNULL)

    def assert_clean(self) -> None:
        left = [m for m in mountpoints() if m.startswith(self.base + "/")]
        if left or self.live:
            raise RuntimeError(f"left mounted: {left} live daemons: {list(self.live)}")


# ----------------------------------------------------------------------------------------
# Contenders

def make_dirs(name: str, sdir: str) -> dict[str, str]:
    """Creates the directories of one contender instance in sdir: "work", where the workloads
    run, and "src", the directory on disk that it shows (the same for native and guardfs, which
    mounts in place); fuse-overlayfs also gets an empty "lower" layer and its "wdir"."""
    if name == "native" or name.startswith("guardfs"):
        d = {"work": os.path.join(sdir, "ws")}
        d["src"] = d["work"]
    elif name in ("bindfs", "mergerfs"):
        d = {"src": os.path.join(sdir, "src"), "work": os.path.join(sdir, "mnt")}
    elif name == "fuse-overlayfs":
        d = {"lower": os.path.join(sdir, "lower"), "src": os.path.join(sdir, "upper"),
             "wdir": os.path.join(sdir, "work"), "work": os.path.join(sdir, "mnt")}
    else:
        raise ValueError(name)
    for path in sorted(set(d.values())):
        os.mkdir(path)
    return d


def passthrough_command(name: str, d: dict[str, str]) -> list[str]:
    """The foreground command that mounts passthrough `name` over make_dirs()'s directories."""
    if name == "bindfs":
        return ["bindfs", "-f", *BINDFS_OPTS, d["src"], d["work"]]
    if name == "mergerfs":
        return ["mergerfs", "-f", "-o", MERGERFS_OPTS, d["src"], d["work"]]
    if name == "fuse-overlayfs":
        return ["fuse-overlayfs", "-f", "-o",
                f"lowerdir={d['lower']},upperdir={d['src']},workdir={d['wdir']},{OVERLAY_EXTRA}",
                d["work"]]
    raise ValueError(name)


class Sample:
    """One contender instance over a fresh sample directory."""

    def __init__(self, name: str, sdir: str, bench: "Bench"):
        self.name, self.sdir, self.b = name, sdir, bench
        self.proc: subprocess.Popen | None = None
        self.daemon_cpu = 0.0  # user+system seconds of every daemon this sample mounted
        os.makedirs(sdir)
        self.dirs = make_dirs(name, sdir)
        self.work = self.dirs["work"]

    def command(self) -> list[str] | None:
        b, n = self.b, self.name
        if n == "native":
            return None
        if n == "guardfs-empty":
            return [b.guardfs, "mount", "-f", "--policy", b.empty_policy, self.work]
        if n == "guardfs-rec":
            return [b.guardfs, "mount", "-f", self.work]
        if n == "guardfs-rec+1000":
            return [b.guardfs, "mount", "-f", "--policy", b.plus1000_policy, self.work]
        if n == ALT:
            return [b.alt_guardfs, "mount", "-f", *b.alt_options, self.work]
        return passthrough_command(n, self.dirs)

    def mount(self) -> None:
        cmd = self.command()
        if cmd is None:
            return
        self.b.mounts.assert_clean()
        self.proc = self.b.mounts.mount(cmd, self.work, os.path.join(self.b.base, "daemons.log"))

    def unmount(self) -> None:
        if self.proc is not None:
            self.daemon_cpu += daemon_cpu_seconds(self.proc.pid)
            self.b.mounts.unmount(self.work)
            self.proc = None

    def remount(self) -> None:
        """Unmount (so the daemon's own state is gone), sync, drop caches, mount again."""
        self.unmount()
        drop_caches()
        self.mount()

    def destroy(self) -> None:
        self.unmount()
        self.b.mounts.assert_clean()
        subprocess.run(["rm", "-rf", "--one-file-system", self.sdir], check=True)


CLK_TCK = os.sysconf("SC_CLK_TCK")


def williams_order(items: list, rnd: int) -> list:
    """Round rnd of a Williams design over items: row k is 0, 1, n-1, 2, n-2, ... shifted by k
    (mod n), and for an odd n the rows n..2n-1 are the first n reversed. Over n rounds (2n for
    an odd n) every item is in every position as often, and every ordered pair (a then b)
    occurs equally often back to back."""
    n = len(items)
    base, lo, hi = [0], 1, n - 1
    while len(base) < n:
        base.append(lo)
        lo += 1
        if len(base) < n:
            base.append(hi)
            hi -= 1
    period = n if n % 2 == 0 else 2 * n
    k = rnd % period
    row = [(x + k) % n for x in base]
    if k >= n:
        row.reverse()
    return [items[i] for i in row]


def daemon_cpu_seconds(pid: int) -> float:
    """utime + stime of a live process (all its threads), in seconds."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except (OSError, IndexError, ValueError):
        return 0.0


def busy_fraction(window: float = 1.0) -> float:
    """Fraction of all CPUs' time not idle (nor waiting for I/O) over `window` seconds."""
    def read():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
        return sum(v), v[3] + v[4]
    t0, i0 = read()
    time.sleep(window)
    t1, i1 = read()
    return 0.0 if t1 == t0 else 1.0 - (i1 - i0) / (t1 - t0)


def cpu_pressure() -> float | None:
    """/proc/pressure/cpu some avg10: % of the last 10 s some task waited for a CPU."""
    try:
        with open("/proc/pressure/cpu") as f:
            return float(f.readline().split()[1].split("=")[1])
    except (OSError, IndexError, ValueError):
        return None


def drop_caches() -> None:
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


# ----------------------------------------------------------------------------------------
# Workloads: each returns {row: seconds}; only the subprocess calls are timed.

def timed(cmd, cwd: str, env: dict | None = None, stdout=subprocess.DEVNULL,
          timeout: float = 1800) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=stdout,
                       stderr=subprocess.PIPE, timeout=timeout)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(f"{cmd} in {cwd} failed ({r.returncode}): "
                           f"{r.stderr.decode(errors='replace')[-2000:]}")
    return dt


def untimed(cmd, cwd: str, env: dict | None = None) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=1800)
    if r.returncode != 0:
        raise RuntimeError(f"{cmd} in {cwd} failed ({r.returncode}): "
                           f"{r.stderr.decode(errors='replace')[-2000:]}")
    return r


PY = [sys.executable, "-I", "-S", "-c"]


def wl_metadata(b: "Bench", s: Sample) -> dict:
    d = os.path.join(s.work, "meta")
    os.mkdir(d)
    n = b.scale["meta_files"]
    out = {"meta-create": timed(PY + [CREATE_PY, str(n)], d)}
    walks = [timed(["find", ".", "-printf", "%s\n"], d) for _ in range(3)]
    out["meta-stat-walk-1"] = walks[0]
    out["meta-stat-walk-warm"] = (walks[1] + walks[2]) / 2
    out["_walks"] = walks
    out["meta-rename"] = timed(PY + [RENAME_PY], d)
    out["meta-unlink"] = timed(PY + [UNLINK_PY], d)
    return out


def wl_untar(b: "Bench", s: Sample) -> dict:
    out = {"untar": timed(["tar", "-xf", b.tarball], s.work)}
    out["rm-rf"] = timed(["rm", "-rf", b.tree_name], s.work)
    return out


def wl_seqio(b: "Bench", s: Sample) -> dict:
    mib = b.scale["seq_mib"]
    out = {"seq-write+fsync": timed(["dd", "if=/dev/zero", "of=big", "bs=1M", f"count={mib}",
                                     "conv=fsync", "status=none"], s.work)}
    # Cold: sync, unmount the contender (its daemon and its kernel caches go), drop the page,
    # dentry and inode caches, mount again. Native: sync + drop caches.
    s.remount()
    out["seq-read-cold"] = timed(["cat", "big"], s.work)
    timed(["cat", "big"], s.work)
    out["seq-read-warm"] = timed(["cat", "big"], s.work)
    size = os.stat(os.path.join(s.work, "big")).st_size
    if size != mib << 20:
        raise RuntimeError(f"big is {size} bytes")
    return out


def wl_git(b: "Bench", s: Sample) -> dict:
    env = b.git_env
    repo = os.path.join(s.work, "repo")
    os.mkdir(repo)
    untimed(["tar", "-xf", b.tarball, "--strip-components=1"], repo)
    t = timed(["git", "init", "-q"], repo, env)
    t += timed(["git", "add", "-A"], repo, env)
    t += timed(["git", "commit", "-q", "-m", "import"], repo, env)
    out = {"git-add-commit": t}
    untimed(PY + [EDIT_PY], repo)
    st = [timed(["git", "status", "--porcelain"], repo, env) for _ in range(5)]
    out["git-status-x5"] = sum(st)
    out["_status"] = st
    t = timed(["git", "stash", "-q"], repo, env)
    t += timed(["git", "checkout", "-q", "-b", "feature"], repo, env)
    t += timed(["git", "stash", "pop", "-q"], repo, env)
    t += timed(["git", "commit", "-q", "-a", "-m", "edit"], repo, env)
    t += timed(["git", "checkout", "-q", "main"], repo, env)
    out["git-stash-checkout"] = t
    return out


def wl_smallio(b: "Bench", s: Sample) -> dict:
    size = b.scale["fio_size"]
    common = ["fio", "--name=rand", "--filename=fio.dat", f"--size={size}", "--bs=4k",
              "--ioengine=psync", "--direct=0", "--numjobs=1", "--randrepeat=1",
              "--randseed=1234"]
    untimed(common + ["--rw=write", "--create_only=1"], s.work)
    t0 = time.perf_counter()
    r = subprocess.run(common + ["--rw=randrw", "--rwmixread=50", "--output-format=json"],
                       cwd=s.work, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=1800)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(f"fio failed: {r.stderr.decode(errors='replace')[-2000:]}")
    out = {"fio-randrw-4k": dt}
    try:
        job = json.loads(r.stdout[r.stdout.index(b"{"):])["jobs"][0]
        out["_fio_iops"] = {"read": job["read"]["iops"], "write": job["write"]["iops"]}
    except (ValueError, KeyError, IndexError):
        pass
    out["open-append-close"] = timed(PY + [APPEND_PY, str(b.scale["append_n"])], s.work)
    return out


def wl_build(b: "Bench", s: Sample) -> dict:
    untimed(["cp", "-a", b.cproj, "cproj"], s.work)
    proj = os.path.join(s.work, "cproj")
    env = dict(os.environ, HOME=b.home)
    out = {"build-cmake": timed(["cmake", "-S", ".", "-B", "build", "-G", "Unix Makefiles"],
                                proj, env)}
    out["build-make"] = timed(["cmake", "--build", "build", "-j2"], proj, env)
    if not os.path.exists(os.path.join(proj, "build", "app")):
        raise RuntimeError("build produced no binary")
    return out


def wl_configure(b: "Bench", s: Sample) -> dict:
    """cmake's configure step alone, as in wl_build: a sample takes a fraction of a second, so
    an A/B comparison of that row gets many rounds. Not in the default list."""
    untimed(["cp", "-a", b.cproj, "cproj"], s.work)
    proj = os.path.join(s.work, "cproj")
    env = dict(os.environ, HOME=b.home)
    return {"cmake-configure": timed(["cmake", "-S", ".", "-B", "build", "-G", "Unix Makefiles"],
                                     proj, env)}


WORKLOADS = {"metadata": wl_metadata, "untar": wl_untar, "seqio": wl_seqio, "git": wl_git,
             "smallio": wl_smallio, "build": wl_build, "configure": wl_configure}

# ----------------------------------------------------------------------------------------
# Assets


def write_cproj(root: str, nfiles: int) -> None:
    os.makedirs(os.path.join(root, "src"))
    with open(os.path.join(root, "src", "lib.h"), "w") as f:
        for i in range(nfiles):
            f.write(f"int unit{i}(int x);\n")
    for i in range(nfiles):
        body = [f'#include "lib.h"\n#include <string.h>\n#include <stdio.h>\n']
        for k in range(8):
            body.append(f"""
static int helper{i}_{k}(const char *s, int x)
{{
    int acc = x;
    for (size_t j = 0; j < strlen(s); ++j) {{
        acc = acc * 31 + (s[j] ^ {k});
        if (acc % 7 == {k % 7}) acc += j;
    }}
    char buf[64];
    snprintf(buf, sizeof buf, "%d-%s", acc, s);
    return acc ^ (int)strlen(buf);
}}
""")
        body.append(f"int unit{i}(int x)\n{{\n    int r = x;\n")
        for k in range(8):
            body.append(f'    r += helper{i}_{k}("unit{i}-{k}", r);\n')
        body.append("    return r;\n}\n")
        with open(os.path.join(root, "src", f"unit{i}.c"), "w") as f:
            f.write("".join(body))
    with open(os.path.join(root, "src", "main.c"), "w") as f:
        f.write('#include "lib.h"\n#include <stdio.h>\nint main(void)\n{\n    int r = 0;\n')
        for i in range(nfiles):
            f.write(f"    r += unit{i}(r);\n")
        f.write('    printf("%d\\n", r);\n    return 0;\n}\n')
    with open(os.path.join(root, "CMakeLists.txt"), "w") as f:
        srcs = " ".join(f"src/unit{i}.c" for i in range(nfiles))
        f.write("cmake_minimum_required(VERSION 3.16)\nproject(fsbench C)\n"
                f"add_executable(app src/main.c {srcs})\n")


def write_plus1000(path: str) -> None:
    """recommended: true plus 1,000 deny rows of realistic shapes; none matches a workload."""
    rows = []
    for i in range(1000):
        k = i % 6
        if k == 0:
            rows.append(f"proj-secret-{i}")
        elif k == 1:
            rows.append(f"tmp{i}-*")
        elif k == 2:
            rows.append(f"*.x{i}")
        elif k == 3:
            rows.append(f"conf{i}/keys")
        elif k == 4:
            rows.append(f"build{i}/*.key")
        else:
            rows.append(f"*zqtok{i}*")
    with open(path, "w") as f:
        f.write("# fsbench: the recommended policy plus 1,000 extra deny rows\n"
                "version: 1\nrecommended: true\ndeny:\n")
        for r in rows:
            f.write(f'  - "{r}"\n')


def cmd_version(cmd: list[str]) -> str:
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10)
        return r.stdout.decode(errors="replace").strip().splitlines()[0]
    except Exception as e:  # noqa: BLE001
        return f"? ({e})"


# ----------------------------------------------------------------------------------------


class Bench:
    def __init__(self, args):
        self.args = args
        self.scale = dict(QUICK if args.quick else FULL)
        parent = args.base_dir
        self.base = tempfile.mkdtemp(prefix="fsbench.", dir=parent)
        self.mounts = Mounts(self.base)
        self.assets = os.path.join(self.base, "assets")
        os.mkdir(self.assets)
        self.home = os.path.join(self.assets, "home")
        os.mkdir(self.home)
        self.git_env = dict(os.environ, HOME=self.home, **GIT_ENV)
        # A private copy of the binary: the tree may be rebuilt while we run.
        self.guardfs = os.path.join(self.assets, "guardfs")
        shutil.copy2(args.guardfs, self.guardfs)
        with open(self.guardfs, "rb") as f:
            self.guardfs_sha = hashlib.sha256(f.read()).hexdigest()[:16]
        self.alt_guardfs = self.alt_sha = None
        self.alt_options = shlex.split(args.alt_options or "")
        if args.alt_options and not args.alt_guardfs:
            self.alt_guardfs, self.alt_sha = self.guardfs, self.guardfs_sha
        elif args.alt_guardfs:
            self.alt_guardfs = os.path.join(self.assets, "guardfs-alt")
            shutil.copy2(args.alt_guardfs, self.alt_guardfs)
            with open(self.alt_guardfs, "rb") as f:
                self.alt_sha = hashlib.sha256(f.read()).hexdigest()[:16]
        self.empty_policy = os.path.join(self.assets, "empty.yaml")
        shutil.copy2(EMPTY_POLICY, self.empty_policy)
        self.plus1000_policy = os.path.join(self.assets, "rec-plus-1000.yaml")
        write_plus1000(self.plus1000_policy)
        for p in (self.empty_policy, self.plus1000_policy):
            untimed([self.guardfs, "policy", "--check", p], "/")
        tree = self.scale["tree"]
        self.tree_name = os.path.basename(tree)
        self.tarball = os.path.join(self.assets, "tree.tar")
        # The cmake tree holds one test key, Templates/Windows/Windows_TemporaryKey.pfx, which
        # the recommended policy guards (`*.pfx`, ask; without an approver, refused): left out.
        untimed(["tar", "-C", os.path.dirname(tree), "--exclude=*.pfx", "-cf", self.tarball,
                 self.tree_name], "/")
        r = untimed(["tar", "-tf", self.tarball], "/")
        entries = [e.rstrip("/") for e in r.stdout.decode().splitlines()]
        self.tree_entries = len(entries)
        self.cproj = os.path.join(self.assets, "cproj")
        write_cproj(self.cproj, self.scale["c_files"])
        self.check_policies(entries)
        self.version_info = self.versions()  # now: the binary was copied just above

    def check_policies(self, entries: list[str]) -> None:
        """Every path the workloads create is allowed by every guardfs policy used."""
        ws = "/ws"
        paths = [f"{ws}/meta/d000/f00000", f"{ws}/meta/d099/f09999.r", f"{ws}/big",
                 f"{ws}/fio.dat", f"{ws}/append.log", f"{ws}/cproj/src/unit0.c",
                 f"{ws}/cproj/build/CMakeCache.txt", f"{ws}/cproj/build/app"]
        paths += [f"{ws}/{e}" for e in entries]
        paths += [f"{ws}/repo/{e.partition('/')[2]}" for e in entries if "/" in e]
        for pol in ([], ["--policy", self.plus1000_policy], ["--policy", self.empty_policy]):
            for op in ("create", "write", "unlink"):
                for i in range(0, len(paths), 2000):
                    r = untimed([self.guardfs, "check", *pol, "--op", op, *paths[i:i + 2000]], "/")
                    bad = [l for l in r.stdout.decode().splitlines() if not l.startswith("allow ")]
                    if bad:
                        raise RuntimeError(f"policy {pol or 'recommended'} refuses workload "
                                           f"paths ({op}): {bad[:5]}")

    def versions(self) -> dict:
        rev = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                             stdout=subprocess.PIPE, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--",
                                "fusefs", "guard", "patterns", "app", "base"],
                               stdout=subprocess.PIPE, text=True).stdout.strip()
        return {
            "guardfs": f"{rev}{' (+uncommitted product changes)' if dirty else ''}",
            "guardfs_binary_sha256_16": self.guardfs_sha,
            "alt_guardfs": (f"{self.args.alt_guardfs} (sha256 {self.alt_sha}…)"
                            if self.alt_guardfs else None),
            "guardfs_binary_built": datetime.datetime.fromtimestamp(
                os.stat(self.guardfs).st_mtime).astimezone().isoformat(timespec="seconds"),
            "bindfs": cmd_version(["bindfs", "--version"]),
            "mergerfs": cmd_version(["mergerfs", "--version"]),
            "fuse-overlayfs": [l for l in subprocess.run(
                ["fuse-overlayfs", "--version"], stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, text=True).stdout.splitlines()
                if l.startswith("fuse-overlayfs")][0],
            "fusermount3": cmd_version(["fusermount3", "--version"]),
            "kernel": os.uname().release,
            "fuse.enable_uring": read_kernel_param(URING_PARAM),
            "page_reporting.min_free_ms": read_kernel_param(MIN_FREE_PARAM),
            "git": cmd_version(["git", "--version"]),
            "fio": cmd_version(["fio", "--version"]),
            "cmake": cmd_version(["cmake", "--version"]),
        }

    def options(self) -> dict:
        """How each contender of this run is mounted, and the limit every daemon runs under."""
        every = {
            "native": "plain directory",
            "guardfs-empty": f"guardfs mount -f --policy examples/policies/empty.yaml WS",
            "guardfs-rec": "guardfs mount -f WS (built-in recommended policy)",
            "guardfs-rec+1000": "guardfs mount -f --policy rec-plus-1000.yaml WS "
                                "(recommended: true + 1,000 deny rows)",
            ALT: f"{self.args.alt_guardfs or 'guardfs'} mount -f "
                 f"{' '.join(self.alt_options) + ' ' if self.alt_options else ''}"
                 f"WS (recommended policy)",
            "bindfs": "bindfs -f " + " ".join(BINDFS_OPTS) + " SRC MNT",
            "mergerfs": f"mergerfs -f -o {MERGERFS_OPTS} SRC MNT",
            "fuse-overlayfs": f"fuse-overlayfs -f -o lowerdir=EMPTY,upperdir=UPPER,"
                              f"workdir=WORK,{OVERLAY_EXTRA} MNT",
            "all daemons": f"RLIMIT_NOFILE {DAEMON_NOFILE} (hard and soft)",
        }
        return {c: opt for c, opt in every.items()
                if c in self.args.contenders or c == "all daemons"}

    def run_sample(self, contender: str, workload: str, rnd: int, idx: int) -> dict:
        sdir = os.path.join(self.base, f"r{rnd}-{idx}-{workload}-{contender}")
        self.mounts.assert_clean()
        s = Sample(contender, sdir, self)
        try:
            s.mount()
            load = os.getloadavg()
            psi = cpu_pressure()
            res = WORKLOADS[workload](self, s)
            s.unmount()
        finally:
            s.destroy()
        subprocess.run(["sync"], check=True)
        return {"round": rnd, "contender": contender, "workload": workload,
                "load": [round(x, 2) for x in load], "cpu_psi_avg10": psi,
                "daemon_cpu_s": round(s.daemon_cpu, 3) if s.command() else None,
                "times": res}

    def wait_quiet(self) -> tuple[float, int]:
        """The machine's CPU use by others (nothing of ours runs between samples), measured
        over --quiet-window seconds; with --wait-quiet, wait until it is at most that fraction."""
        a = self.args
        busy = busy_fraction(a.quiet_window)
        waited = 0
        while a.wait_quiet is not None and busy > a.wait_quiet and waited < a.wait_quiet_max:
            time.sleep(4)
            waited += 5
            busy = busy_fraction(a.quiet_window)
        if waited:
            log(f"fsbench: waited {waited} s for a quiet machine (busy {busy:.2f})")
        return busy, waited

    def run(self) -> dict:
        a = self.args
        contenders = a.contenders
        workloads = a.workloads
        samples = []
        started = datetime.datetime.now().astimezone()
        load_start = os.getloadavg()
        t_start = time.monotonic()
        # Warm-up: each workload once on the plain directory, discarded, so the first sample of
        # round 1 does not pay for cold program and asset caches.
        for w in workloads if a.warmup else []:
            smp = self.run_sample("native", w, -1, 0)
            log(f"warm-up   {w:9s} native (discarded)")
        interrupted = None
        try:
            for rnd in range(a.rounds):
                spent = time.monotonic() - t_start
                if a.max_minutes and rnd and spent / rnd * (rnd + 1) > a.max_minutes * 60:
                    interrupted = (f"stopped after {rnd} of {a.rounds} rounds: another round "
                                   f"would pass --max-minutes {a.max_minutes}")
                    log(f"fsbench: {interrupted}")
                    break
                order = williams_order(contenders, rnd)
                for w in workloads:
                    for idx, c in enumerate(order):
                        busy, waited = self.wait_quiet()
                        smp = self.run_sample(c, w, rnd, idx)
                        smp["others_busy"] = round(busy, 3)
                        smp["waited_s"] = waited
                        samples.append(smp)
                        rows = {r: v for r, v in smp["times"].items() if not r.startswith("_")}
                        log(f"round {rnd + 1}/{a.rounds} {w:9s} {c:17s} load {smp['load'][0]:5.2f} "
                            f"busy {busy:4.2f} " + " ".join(f"{r}={v:.3f}" for r, v in rows.items()))
        except KeyboardInterrupt as e:
            interrupted = str(e) or "interrupted"
            log(f"fsbench: {interrupted}; keeping the {len(samples)} samples taken")
        elapsed = time.monotonic() - t_start
        return {
            "interrupted": interrupted,
            "command": " ".join(shlex.quote(x) for x in [sys.executable] + sys.argv),
            "date": started.isoformat(timespec="seconds"),
            "elapsed_s": round(elapsed, 1),
            "nproc": os.cpu_count(),
            "loadavg_start": [round(x, 2) for x in load_start],
            "loadavg_end": [round(x, 2) for x in os.getloadavg()],
            "mode": "quick" if a.quick else "full",
            "scale": self.scale,
            "tree_entries": self.tree_entries,
            "rounds": a.rounds,
            "warmup": bool(a.warmup),
            "wait_quiet": a.wait_quiet,
            "quiet_window": a.quiet_window,
            "contenders": contenders,
            "workloads": workloads,
            "versions": self.version_info,
            "options": self.options(),
            "base_dir": a.base_dir,
            "samples": samples,
        }

    def close(self) -> None:
        self.mounts.cleanup()
        if not self.args.keep:
            subprocess.run(["rm", "-rf", "--one-file-system", self.base])


# ----------------------------------------------------------------------------------------
# Summary


def median_ci(vals: list[float]) -> tuple[float, float | None, float | None]:
    """The median and a distribution-free confidence interval of at least 95% for it: the k-th
    smallest and k-th largest values, k the largest with P(Binomial(n, 1/2) < k) <= 2.5%
    (needs n >= 6; with fewer samples there is no such interval and lo, hi are None)."""
    x = sorted(vals)
    n = len(x)
    k, cum = 0, 0.0
    for i in range(n + 1):
        cum += math.comb(n, i) / 2 ** n
        if cum > 0.025:
            break
        k = i + 1
    if k == 0:
        return statistics.median(x), None, None
    return statistics.median(x), x[k - 1], x[n - k]


# The issue's targets: (key, numerator, denominator, limit, strict). A target holds when the
# ratio is <= limit (strict: < limit). Denominator "fastest-passthrough" is the passthrough with
# the lowest median on that row.
TARGETS = [
    ("rec/empty", "guardfs-rec", "guardfs-empty", 1.03, False),
    ("+1000/empty", "guardfs-rec+1000", "guardfs-empty", 1.05, False),
    ("rec/fastest-passthrough", "guardfs-rec", "fastest-passthrough", 1.0, True),
    ("rec/native", "guardfs-rec", "native", 1.3, False),
    # Only with an A/B contender: how it compares with guardfs-rec and with the passthroughs.
    ("alt/rec", ALT, "guardfs-rec", 1.0, True),
    ("alt/fastest-passthrough", ALT, "fastest-passthrough", 1.0, True),
]
NATIVE_TARGET_ROWS = ("meta-stat-walk-warm", "git-status-x5")
PASSTHROUGHS = ("bindfs", "mergerfs", "fuse-overlayfs")


def verdict(lo: float | None, hi: float | None, limit: float, strict: bool) -> str:
    """met / NOT met when the whole confidence interval is on one side of the limit."""
    if lo is None or hi is None:
        return "no CI"
    if (hi < limit) if strict else (hi <= limit):
        return "met"
    if (lo >= limit) if strict else (lo > limit):
        return "NOT met"
    return "unresolved"


def summarise(result: dict) -> dict:
    contenders = result["contenders"]
    table = {}
    by_round: dict = {}  # row -> contender -> round -> seconds
    for w in result["workloads"]:
        for row in ROWS[w]:
            meds = {}
            for c in contenders:
                got = {s["round"]: s["times"][row] for s in result["samples"]
                       if s["contender"] == c and s["workload"] == w and row in s["times"]}
                vals = list(got.values())
                if vals:
                    by_round.setdefault(row, {})[c] = got
                    meds[c] = {"median": statistics.median(vals), "n": len(vals),
                               "min": min(vals), "max": max(vals)}
            nat = meds.get("native", {}).get("median")
            for c, m in meds.items():
                m["ratio"] = m["median"] / nat if nat else None
            table[row] = meds
    # Targets, from paired ratios: within a round the contenders of one workload run one after
    # another, so the ratio of two samples of the same round cancels most of the machine's slow
    # drift. Reported: the median of the per-round ratios, a >= 95% confidence interval for it,
    # and the verdict only when the interval lies on one side of the limit.
    targets = {}
    for row, meds in table.items():
        t = {}
        passes = {c: meds[c]["median"] for c in PASSTHROUGHS if c in meds}
        fastest = min(passes, key=passes.get) if passes else None
        for key, num, den, limit, strict in TARGETS:
            if key == "rec/native" and row not in NATIVE_TARGET_ROWS:
                continue
            den_c = fastest if den == "fastest-passthrough" else den
            a, b = by_round.get(row, {}).get(num), by_round.get(row, {}).get(den_c)
            if not a or not b:
                continue
            ratios = [a[r] / b[r] for r in sorted(a) if r in b and b[r] > 0]
            if not ratios:
                continue
            m, lo, hi = median_ci(ratios)
            t[key] = {"against": den_c, "median": m, "lo": lo, "hi": hi, "n": len(ratios),
                      "ratio_of_medians": meds[num]["median"] / meds[den_c]["median"],
                      "limit": limit, "verdict": verdict(lo, hi, limit, strict)}
        targets[row] = t
    cpu = {}
    for w in result["workloads"]:
        cpu[w] = {}
        for c in contenders:
            vals = [s["daemon_cpu_s"] for s in result["samples"] if s["contender"] == c
                    and s["workload"] == w and s.get("daemon_cpu_s") is not None]
            if vals:
                cpu[w][c] = statistics.median(vals)
    return {"table": table, "targets": targets, "daemon_cpu": cpu}


def fmt_cpu(result: dict, summary: dict, markdown: bool) -> str:
    cs = [c for c in result["contenders"] if c != "native"]
    lines = []
    if markdown:
        lines.append("| workload | " + " | ".join(cs) + " | rec/empty | +1000/empty |")
        lines.append("|---|" + "---:|" * (len(cs) + 2))
    else:
        lines.append(f"{'daemon CPU (s)':22s}" + "".join(f"{c:>18s}" for c in cs)
                     + f"{'rec/empty':>11s}{'+1000/empty':>13s}")
    for w, meds in summary["daemon_cpu"].items():
        cells = [f"{meds[c]:.3f}" if c in meds else "-" for c in cs]
        e = meds.get("guardfs-empty")
        r1 = f"{meds['guardfs-rec'] / e:.3f}" if e and "guardfs-rec" in meds else "-"
        r2 = f"{meds['guardfs-rec+1000'] / e:.3f}" if e and "guardfs-rec+1000" in meds else "-"
        if markdown:
            lines.append(f"| {w} | " + " | ".join(cells) + f" | {r1} | {r2} |")
        else:
            lines.append(f"{w:22s}" + "".join(f"{x:>18s}" for x in cells) + f"{r1:>11s}{r2:>13s}")
    return "\n".join(lines)


def fmt_table(result: dict, summary: dict, markdown: bool) -> str:
    contenders = result["contenders"]
    lines = []
    if markdown:
        lines.append("| row | " + " | ".join(contenders) + " |")
        lines.append("|---|" + "---:|" * len(contenders))
    else:
        lines.append(f"{'row':22s}" + "".join(f"{c:>20s}" for c in contenders))
    for row, meds in summary["table"].items():
        cells = []
        for c in contenders:
            m = meds.get(c)
            if not m:
                cells.append("-")
            elif c == "native":
                cells.append(f"{m['median']:.3f}s")
            else:
                cells.append(f"{m['median']:.3f}s {m['ratio']:.2f}x")
        if markdown:
            lines.append(f"| {row} | " + " | ".join(cells) + " |")
        else:
            lines.append(f"{row:22s}" + "".join(f"{x:>20s}" for x in cells))
    return "\n".join(lines)


def fmt_targets(summary: dict, markdown: bool) -> str:
    keys = [k for k, *_ in TARGETS if any(k in t for t in summary["targets"].values())]
    heads = {k: f"{k} ({'<' if strict else '≤'}{limit:g})" for k, _, _, limit, strict in TARGETS}
    lines = []
    if markdown:
        lines.append("| row | " + " | ".join(heads[k] for k in keys) + " |")
        lines.append("|---|" + "---|" * len(keys))
    for row, t in summary["targets"].items():
        cells = []
        for k in keys:
            v = t.get(k)
            if not v:
                cells.append("-")
                continue
            who = f" ({v['against']})" if k.endswith("/fastest-passthrough") else ""
            if v["lo"] is None:
                cells.append(f"{v['median']:.3f} (no CI){who}")
            else:
                cells.append(f"{v['median']:.3f} [{v['lo']:.3f}, {v['hi']:.3f}] "
                             f"{v['verdict']}{who}")
        if markdown:
            lines.append(f"| {row} | " + " | ".join(cells) + " |")
        else:
            lines.append(f"{row:22s} " + "  ".join(f"{k}: {c}" for k, c in zip(keys, cells)))
    return "\n".join(lines)


def write_md(path: str, result: dict, summary: dict, json_path: str | None) -> None:
    v = result["versions"]
    loads = [s["load"][0] for s in result["samples"]]
    o = []
    o.append(f"### Run {result['date']} ({result['mode']}, {result['rounds']} rounds)\n")
    if result.get("interrupted"):
        o.append(f"**Interrupted** ({result['interrupted']}) after {len(result['samples'])} "
                 "samples; medians below are over the samples taken.\n")
    o.append(f"- Command: `{result['command']}`")
    o.append(f"- Machine: nproc {result['nproc']}, kernel {v['kernel']}; load average (1/5/15 min) "
             f"at start {result['loadavg_start']}, at end {result['loadavg_end']}; 1-min load "
             f"sampled before each sample: min {min(loads):.2f}, median "
             f"{statistics.median(loads):.2f}, max {max(loads):.2f}. Wall time "
             f"{result['elapsed_s'] / 60:.1f} min.")
    busy = [s["others_busy"] for s in result["samples"] if "others_busy" in s]
    if busy:
        waited = sum(s.get("waited_s", 0) for s in result["samples"])
        o.append(f"- CPU used by other processes in the {result.get('quiet_window', 1.0)} s before "
                 f"each sample (fraction of "
                 f"both cores): min {min(busy):.2f}, median {statistics.median(busy):.2f}, max "
                 f"{max(busy):.2f}; --wait-quiet {result.get('wait_quiet')}, waited {waited} s "
                 "in all.")
    o.append(f"- Kernel settings for the run: fuse.enable_uring {v.get('fuse.enable_uring')}, "
             f"page_reporting.min_free_ms {v.get('page_reporting.min_free_ms')} (None: the "
             "kernel has no such parameter)")
    o.append(f"- Versions: guardfs HEAD {v['guardfs']} (binary built "
             f"{v.get('guardfs_binary_built', '?')}, sha256 {v['guardfs_binary_sha256_16']}…), "
             f"{v['bindfs']}, {v['mergerfs']}, {v['fuse-overlayfs']}, {v['fusermount3']}, "
             f"{v['git']}, {v['fio']}, {v['cmake']}")
    o.append(f"- Scale: {result['scale']}; tree = {result['tree_entries']} tar entries")
    if json_path:
        o.append(f"- Raw samples: `{os.path.relpath(json_path, REPO)}`")
    o.append("- Contender options:")
    for c, opt in result["options"].items():
        o.append(f"  - {c}: `{opt}`")
    o.append("\nMedians (seconds) and ratio to native of the same run:\n")
    o.append(fmt_table(result, summary, True))
    o.append("\nTargets: median of the per-round paired ratios, [a >= 95% distribution-free "
             "confidence interval for it], and the verdict (met / NOT met only when the whole "
             "interval is on one side of the limit; unresolved otherwise; no CI below 6 "
             "rounds):\n")
    o.append(fmt_targets(summary, True))
    o.append("\nDaemon CPU time (user+system seconds per sample, median; the whole workload "
             "including its untimed setup; less sensitive to the machine's load than wall time):\n")
    o.append(fmt_cpu(result, summary, True))
    psis = [s["cpu_psi_avg10"] for s in result["samples"] if s.get("cpu_psi_avg10") is not None]
    if psis:
        o.append(f"\nCPU pressure (/proc/pressure/cpu some avg10, %) before each sample: min "
                 f"{min(psis):.1f}, median {statistics.median(psis):.1f}, max {max(psis):.1f}.")
    o.append("")
    with open(path, "a") as f:
        f.write("\n".join(o) + "\n")


# ----------------------------------------------------------------------------------------
# Memory walk


def proc_status(pid: int) -> dict:
    out: dict = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmHWM", "VmRSS", "RssAnon", "RssFile", "Threads"):
                out[k] = int(v.split()[0]) if v.strip().endswith("kB") else int(v.split()[0])
    out["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    with open(f"/proc/{pid}/limits") as f:
        for line in f:
            if line.startswith("Max open files"):
                out["nofile_limit"] = int(line.split()[3])
    return out


def fuse_inodes() -> int | None:
    """Active fuse_inode slab objects: the FUSE inodes the kernel holds (all FUSE mounts)."""
    try:
        with open("/proc/slabinfo") as f:
            for line in f:
                if line.startswith("fuse_inode "):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def walk(ws: str, dirs: list[str] | None) -> dict:
    """find -printf over ws (or over the given subdirectories): entries printed, errors."""
    cmd = ["find", *(dirs or ["."]), "-printf", "%s\n"]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t0
    err = r.stderr.decode(errors="replace").splitlines()
    return {"entries": r.stdout.count(b"\n"), "errors": len(err), "first_errors": err[:3],
            "rc": r.returncode, "s": round(dt, 2)}


def memwalk(args) -> dict:
    """Daemon memory after walking a tree of empty files (1000 per directory), three ways:

    small:   a fresh mount walks as many files as the daemon's descriptor limit allows
             (guardfs holds one O_PATH descriptor per inode the kernel knows): bytes per
             cached inode from VmHWM over the base, with the kernel's fuse_inode count.
    full:    a fresh mount walks the whole tree (`find . -type f | wc -l`, then
             `find . -printf %s`): what happens at the descriptor limit, peak RSS.
    chunked: a fresh mount walks the whole tree 10 directories at a time, asking the kernel
             to drop dentries and inodes (drop_caches=2: FUSE forgets) between chunks: the
             daemon's peak and final RSS after 1M inodes have come and gone.
    """
    nfiles = args.memwalk
    per = 1000
    ndirs = (nfiles + per - 1) // per
    base = tempfile.mkdtemp(prefix="fsbench-mem.", dir=args.base_dir)
    mounts = Mounts(base)
    ws = os.path.join(base, "ws")
    os.mkdir(ws)
    gbin = os.path.join(base, "guardfs")
    shutil.copy2(args.guardfs, gbin)
    dnames = ["d%04d" % d for d in range(ndirs)]
    res: dict = {"files": ndirs * per, "dirs": ndirs,
                 "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                 "command": " ".join(shlex.quote(x) for x in [sys.executable] + sys.argv),
                 "loadavg_start": [round(x, 2) for x in os.getloadavg()],
                 "harness_nofile_hard": resource.getrlimit(resource.RLIMIT_NOFILE)[1]}
    with open(gbin, "rb") as f:
        res["guardfs_binary_sha256_16"] = hashlib.sha256(f.read()).hexdigest()[:16]
    res["guardfs_binary_built"] = datetime.datetime.fromtimestamp(
        os.stat(gbin).st_mtime).astimezone().isoformat(timespec="seconds")

    def mount():
        drop_caches()
        slab0 = fuse_inodes()
        proc = mounts.mount([gbin, "mount", "-f", ws], ws, os.path.join(base, "daemon.log"))
        time.sleep(0.5)
        return proc, slab0, proc_status(proc.pid)

    def finish(proc, slab0, st0, phase: dict) -> dict:
        phase["after_mount"] = st0
        phase["after_walk"] = proc_status(proc.pid)
        slab = fuse_inodes()
        phase["fuse_inodes_held"] = None if slab is None or slab0 is None else slab - slab0
        phase["base_rss_kib"] = st0["VmRSS"]
        phase["peak_rss_kib"] = phase["after_walk"]["VmHWM"]
        phase["final_rss_kib"] = phase["after_walk"]["VmRSS"]
        mounts.unmount(ws)
        phase["daemon_exit"] = proc.returncode
        return phase

    try:
        t0 = time.perf_counter()
        untimed(PY + [MEMTREE_PY, str(ndirs), str(per)], ws)
        res["create_s"] = round(time.perf_counter() - t0, 1)

        # small: stay under the descriptor limit (root, dirs and a margin for open files)
        proc, slab0, st0 = mount()
        limit = st0.get("nofile_limit", 1 << 20)
        nsmall = max(1, min(ndirs, (limit - 1000) // (per + 1)))
        ph = {"dirs_walked": nsmall, "walk": walk(ws, dnames[:nsmall])}
        ph["walk_repeat"] = walk(ws, dnames[:nsmall])
        ph = finish(proc, slab0, st0, ph)
        held = ph["fuse_inodes_held"] or ph["walk"]["entries"]
        ph["bytes_per_cached_inode_over_base"] = round(
            (ph["peak_rss_kib"] - ph["base_rss_kib"]) * 1024 / held, 1)
        res["small"] = ph
        log(f"memwalk small: {json.dumps(ph)}")

        # full: the whole tree at once
        proc, slab0, st0 = mount()
        t0 = time.perf_counter()
        r = subprocess.run("find . -type f | wc -l", shell=True, cwd=ws, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        ph = {"find_type_f_count": int(r.stdout.strip() or 0),
              "find_type_f_errors": len(r.stderr.splitlines()),
              "find_type_f_first_errors": r.stderr.splitlines()[:3],
              "find_type_f_s": round(time.perf_counter() - t0, 1)}
        ph["walk_printf"] = walk(ws, None)
        ph = finish(proc, slab0, st0, ph)
        held = ph["fuse_inodes_held"] or ph["walk_printf"]["entries"]
        ph["bytes_per_cached_inode_over_base"] = round(
            (ph["peak_rss_kib"] - ph["base_rss_kib"]) * 1024 / max(1, held), 1)
        res["full"] = ph
        log(f"memwalk full: {json.dumps(ph)}")

        # chunked: 1M inodes come and go
        proc, slab0, st0 = mount()
        entries = errors = 0
        max_fds = 0
        t0 = time.perf_counter()
        for i in range(0, ndirs, 10):
            w = walk(ws, dnames[i:i + 10])
            entries += w["entries"]
            errors += w["errors"]
            max_fds = max(max_fds, len(os.listdir(f"/proc/{proc.pid}/fd")))
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("2\n")
        ph = {"entries": entries, "errors": errors, "max_daemon_fds_seen": max_fds,
              "walk_s": round(time.perf_counter() - t0, 1)}
        res["chunked"] = finish(proc, slab0, st0, ph)
        log(f"memwalk chunked: {json.dumps(res['chunked'])}")
    finally:
        mounts.cleanup()
        subprocess.run(["rm", "-rf", "--one-file-system", base])
    res["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    return res


# ----------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, help="rounds (default 5; 3 with --quick)")
    ap.add_argument("--quick", action="store_true", help="scaled-down sizes (smoke test)")
    ap.add_argument("--no-warmup", dest="warmup", action="store_false",
                    help="skip the discarded native warm-up sample of each workload")
    ap.add_argument("--workloads", default=",".join(ALL_WORKLOADS),
                    help=f"comma list of {','.join(ALL_WORKLOADS)} (default: all of them), "
                         "or configure (cmake's configure step alone, for A/B runs)")
    ap.add_argument("--contenders", default=",".join(ALL_CONTENDERS),
                    help=f"comma list of {','.join(ALL_CONTENDERS)}")
    ap.add_argument("--guardfs", default=DEFAULT_GUARDFS)
    ap.add_argument("--alt-guardfs", metavar="BINARY",
                    help=f"a second guardfs build, added as contender {ALT} (A/B comparison)")
    ap.add_argument("--alt-options", metavar="OPTIONS",
                    help=f"mount options of {ALT} (e.g. '-o writeback_cache'); without "
                         f"--alt-guardfs, {ALT} is the --guardfs binary with these options")
    ap.add_argument("--base-dir", default="/var/tmp", help="parent of the temporary tree")
    ap.add_argument("--json", help="write raw samples and summary to this file")
    ap.add_argument("--md", help="append a section for this run to this Markdown file")
    ap.add_argument("--keep", action="store_true", help="keep the temporary base (debug)")
    ap.add_argument("--max-minutes", type=float, metavar="MIN",
                    help="start no round that would end after MIN minutes (whole rounds only)")
    ap.add_argument("--wait-quiet", type=float, metavar="FRACTION",
                    help="before each sample wait until other processes use at most this "
                         "fraction of the CPUs (measured over --quiet-window; e.g. 0.25)")
    ap.add_argument("--quiet-window", type=float, default=1.0, metavar="SECONDS",
                    help="how long other processes' CPU use is measured before each sample "
                         "(default 1; it is also the pause between samples)")
    ap.add_argument("--wait-quiet-max", type=int, default=900, metavar="SECONDS",
                    help="longest wait for a quiet machine before a sample (default 900)")
    ap.add_argument("--fuse-uring", choices=("on", "off", "keep"), default="on",
                    help="the kernel's fuse.enable_uring for the run (FUSE over io_uring, "
                         "docs/decisions/012): on (default) or off, put back afterwards; keep "
                         "leaves it as it is")
    ap.add_argument("--hold-freed-ms", default="300000", metavar="MS",
                    help="page_reporting's min_free_ms for the run, where the kernel has it: "
                         "memory freed by one sample stays in the guest this long before it is "
                         "handed back to the host, so the next sample does not fault it in "
                         "again (default 300000, longer than a round of the whole design; put "
                         "back afterwards; the 6.18 kernel of 2026-12-06 took 300000 and refused "
                         "599999 with EINVAL); keep leaves it as it is")
    ap.add_argument("--memwalk", type=int, metavar="FILES",
                    help="instead: RSS of guardfs (recommended) after walking FILES empty files")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("fsbench: run as root (drop_caches, FUSE mounts)", file=sys.stderr)
        return 2
    if args.hold_freed_ms != "keep" and not args.hold_freed_ms.isdigit():
        ap.error("--hold-freed-ms: a number of milliseconds, or keep")
    for k in ("json", "md", "guardfs", "alt_guardfs", "base_dir"):
        if getattr(args, k):
            setattr(args, k, os.path.abspath(getattr(args, k)))
    os.chdir("/")

    def on_signal(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, on_signal)

    found = read_kernel_param(URING_PARAM)
    if args.fuse_uring != "keep" and found is not None:
        wanted = "Y" if args.fuse_uring == "on" else "N"
        if found != wanted:
            write_kernel_param(URING_PARAM, wanted)
            print(f"fsbench: the kernel's fuse.enable_uring set to {wanted} for this run "
                  f"(was {found}; put back at the end)", file=sys.stderr)
            import atexit
            atexit.register(write_kernel_param, URING_PARAM, found)

    args.min_free_ms_found = read_kernel_param(MIN_FREE_PARAM)
    if args.hold_freed_ms != "keep" and args.min_free_ms_found is not None:
        if args.min_free_ms_found != args.hold_freed_ms:
            write_kernel_param(MIN_FREE_PARAM, args.hold_freed_ms)
            print(f"fsbench: page_reporting.min_free_ms set to {args.hold_freed_ms} for this "
                  f"run (was {args.min_free_ms_found}; put back at the end)", file=sys.stderr)
            import atexit
            atexit.register(write_kernel_param, MIN_FREE_PARAM, args.min_free_ms_found)

    if args.memwalk:
        res = memwalk(args)
        print(json.dumps(res, indent=2))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(res, f, indent=1)
        return 0

    if args.rounds is None:
        args.rounds = 3 if args.quick else 5
    args.workloads = [w for w in args.workloads.split(",") if w]
    args.contenders = [c for c in args.contenders.split(",") if c]
    for w in args.workloads:
        if w not in WORKLOADS:
            ap.error(f"unknown workload {w}")
    with_alt = bool(args.alt_guardfs or args.alt_options)
    if with_alt and ALT not in args.contenders:
        args.contenders.append(ALT)
    for c in args.contenders:
        if c not in ALL_CONTENDERS and not (c == ALT and with_alt):
            ap.error(f"unknown contender {c}")
    if "native" not in args.contenders:
        ap.error("native is the baseline of every ratio; keep it in --contenders")

    bench = Bench(args)
    try:
        result = bench.run()
    finally:
        bench.close()
    summary = summarise(result)
    print(fmt_table(result, summary, False))
    print()
    print(fmt_targets(summary, False))
    print()
    print(fmt_cpu(result, summary, False))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({**result, "summary": summary}, f, indent=1)
    if args.md:
        write_md(args.md, result, summary, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())

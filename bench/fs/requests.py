#!/usr/bin/env python3
"""Count the FUSE requests and the daemon's system calls per operation, for guardfs and the
passthroughs (issue #6). Counts do not depend on the machine's load, so they compare the
contenders where wall-clock times on a shared machine cannot.

For each contender a fresh mount over an empty directory on the same filesystem; for each phase,
strace follows every thread of the daemon while a Python loop makes N operations through the
mount. A request is one read (or splice) of the daemon's /dev/fuse descriptor; FORGET requests
have no reply, every other request has one. A read's first 8 bytes (the request header's length
and opcode) name the request's kind: `--opcodes` prints requests per operation by kind. The
phase's own untraced warm-up (e.g. the first stat walk) runs before strace attaches. Then a git
repository of the cmake tree: `git status` (per run), and fsbench's stash/checkout sequence
after its edit; and fsbench's 50-file C project: cmake's configure step and make -j2 (one run
each is one operation). guardfs is
mounted with -o no_io_uring: requests that come on FUSE over io_uring (docs/decisions/012) are
not reads of /dev/fuse, and the kernel sends the same requests either way.
Contenders: guardfs-rec (built-in policy; FUSE passthrough where the kernel offers it, the
default, docs/decisions/011), guardfs-empty, guardfs-rec-pc (-o no_passthrough: the page cache),
guardfs-rec-wb (-o writeback_cache, which also turns passthrough off), bindfs, mergerfs,
fuse-overlayfs, with fsbench.py's options.

    python3 bench/fs/requests.py [--n 1000] [--contenders guardfs-rec,bindfs,...] [--json F]

Runs as root (FUSE mounts, strace of the daemons).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fsbench  # noqa: E402  (contender options and the empty policy, shared with fsbench)

# Each phase: (name, setup run untraced, the traced loop). Both run as `python3 -c` in the
# mount with N as argv[1]. Setup leaves what the loop needs.
PHASES = [
    ("create+write", "",
     "for i in range(n):\n"
     "    with open('f%05d' % i, 'w') as f: f.write('x' * 100)\n"),
    ("stat-after-write", "", "for i in range(n): os.stat('f%05d' % i)\n"),
    ("stat-warm", "", "for i in range(n): os.stat('f%05d' % i)\n"),
    ("open-read-close", "",
     "for i in range(n):\n"
     "    with open('f%05d' % i) as f: f.read()\n"),
    ("open-append-close", "",
     "for i in range(n):\n"
     "    fd = os.open('append.log', os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)\n"
     "    os.write(fd, b'line\\n'); os.close(fd)\n"),
    ("pwrite-pread",
     "with open('pages', 'wb') as f: f.write(b'z' * 4096 * n)\n",
     "fd = os.open('pages', os.O_RDWR)\n"
     "for i in range(n):\n"
     "    os.pwrite(fd, b'y' * 4096, 4096 * i); os.pread(fd, 4096, 4096 * i)\n"
     "os.close(fd)\n"),
    ("listdir-warm", "os.mkdir('ls')\nfor i in range(10): open('ls/%d' % i, 'w').close()\n"
     "os.listdir('ls')\n", "for i in range(n): os.listdir('ls')\n"),
    ("rename", "", "for i in range(n): os.rename('f%05d' % i, 'g%05d' % i)\n"),
    ("unlink", "", "for i in range(n): os.unlink('g%05d' % i)\n"),
    ("mkdir", "", "for i in range(n): os.mkdir('d%05d' % i)\n"),
    ("rmdir", "", "for i in range(n): os.rmdir('d%05d' % i)\n"),
    # fsbench's meta-stat-walk-1: the first `find -printf %s` over files just created and
    # written through the mount (10 directories; per operation = per file).
    ("walk-after-create",
     "for d in range(10):\n"
     "    os.makedirs('wk/d%d' % d)\n"
     "    for i in range(n // 10):\n"
     "        with open('wk/d%d/f%05d' % (d, i), 'wb') as f: f.write(b'x' * 64)\n",
     "for root, dirs, names in os.walk('wk'):\n"
     "    for x in dirs + names: os.lstat(os.path.join(root, x))\n"),
]
GIT_PHASE = "git status"
# fsbench's git-stash-checkout row after its edit of 50 files, and its build rows (a 50-file
# C project): one run of each is one operation.
STASH_PHASE = "git stash/checkout"
CMAKE_PHASE = "cmake configure"
MAKE_PHASE = "make -j2"
STASH_CHECKOUT = (["git", "stash", "-q"], ["git", "checkout", "-q", "-b", "feature"],
                  ["git", "stash", "pop", "-q"], ["git", "commit", "-q", "-a", "-m", "edit"],
                  ["git", "checkout", "-q", "main"])


def fuse_fds(pid: int) -> set[str]:
    fds = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == "/dev/fuse":
                fds.add(fd)
        except OSError:
            pass
    return fds


# fuse_in_header.opcode (linux/fuse.h) of the requests a passthrough sees.
OPCODES = {1: "LOOKUP", 2: "FORGET", 3: "GETATTR", 4: "SETATTR", 5: "READLINK", 6: "SYMLINK",
           8: "MKNOD", 9: "MKDIR", 10: "UNLINK", 11: "RMDIR", 12: "RENAME", 13: "LINK",
           14: "OPEN", 15: "READ", 16: "WRITE", 17: "STATFS", 18: "RELEASE", 20: "FSYNC",
           21: "SETXATTR", 22: "GETXATTR", 23: "LISTXATTR", 24: "REMOVEXATTR", 25: "FLUSH",
           26: "INIT", 27: "OPENDIR", 28: "READDIR", 29: "RELEASEDIR", 30: "FSYNCDIR",
           31: "GETLK", 32: "SETLK", 33: "SETLKW", 34: "ACCESS", 35: "CREATE",
           36: "INTERRUPT", 37: "BMAP", 38: "DESTROY", 39: "IOCTL", 40: "POLL",
           41: "NOTIFY_REPLY", 42: "BATCH_FORGET", 43: "FALLOCATE",
           44: "READDIRPLUS", 45: "RENAME2", 46: "LSEEK", 47: "COPY_FILE_RANGE"}
HEADER = re.compile(r'"((?:\\x[0-9a-f]{2}){8})')

START = re.compile(r"^(\d+)\s+([a-z0-9_]+)\((\d+)?")
RESUMED = re.compile(r"^(\d+)\s+<\.\.\. ([a-z0-9_]+) resumed>")
RESULT = re.compile(r"\)\s+= (-?\d+)")


def count(trace: str, fds: set[str]) -> tuple[int, int, dict[str, int]]:
    """(requests, system calls, requests by opcode) in an `strace -f -xx -s 8` output file. A
    request is a read, readv or splice of a /dev/fuse descriptor that returned bytes; a call
    blocked when strace attached or detached is not counted. A splice shows no bytes: its kind
    is counted as "?"."""
    requests = calls = 0
    kinds: dict[str, int] = {}
    pending: dict[str, tuple[str, str | None]] = {}  # thread -> its unfinished call
    with open(trace) as f:
        for line in f:
            if m := START.match(line):
                tid, name, fd = m.groups()
                if line.rstrip().endswith("<unfinished ...>"):
                    pending[tid] = (name, fd)
                    continue
            elif m := RESUMED.match(line):
                tid, name = m.groups()
                if tid not in pending:
                    continue  # began before strace attached
                name, fd = pending.pop(tid)
            else:
                continue
            r = RESULT.search(line)
            if r is None:
                continue  # still blocked when strace detached
            calls += 1
            if name in ("read", "readv", "splice") and fd in fds and int(r.group(1)) > 0:
                requests += 1
                h = HEADER.search(line)
                kind = "?"
                if h:
                    op = int.from_bytes(bytes.fromhex(h.group(1).replace("\\x", ""))[4:8],
                                        "little")
                    kind = OPCODES.get(op, str(op))
                kinds[kind] = kinds.get(kind, 0) + 1
    return requests, calls, kinds


class Mounted:
    def __init__(self, name: str, base: str, args):
        self.name, self.args = name, args
        self.dir = os.path.join(base, name)
        os.makedirs(self.dir)
        dirs = fsbench.make_dirs(name, self.dir)
        self.work = dirs["work"]
        if name.startswith("guardfs"):
            pol = {"guardfs-empty": ["--policy", fsbench.EMPTY_POLICY], "guardfs-rec": [],
                   "guardfs-rec-wb": ["-o", "writeback_cache"],
                   "guardfs-rec-pc": ["-o", "no_passthrough"]}[name]
            cmd = [args.guardfs, "mount", "-f", "-o", "no_io_uring", *pol, self.work]
        else:
            cmd = fsbench.passthrough_command(name, dirs)
        self.log = open(os.path.join(self.dir, "daemon.log"), "w")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        for _ in range(200):
            if os.path.ismount(self.work):
                break
            if self.proc.poll() is not None:
                raise RuntimeError(f"{name} exited: see {self.log.name}")
            time.sleep(0.05)
        else:
            raise RuntimeError(f"{name} did not mount")

    def traced(self, fn) -> tuple[int, int, dict[str, int]]:
        fds = fuse_fds(self.proc.pid)
        out = os.path.join(self.dir, "trace")
        # -xx -s 8: each read's first 8 bytes in hex, the header's length and opcode.
        st = subprocess.Popen(["strace", "-f", "-qq", "-xx", "-s", "8", "-o", out,
                               "-p", str(self.proc.pid)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.0)  # strace attaches to every thread
        try:
            fn()
        finally:
            time.sleep(0.5)  # asynchronous requests (release, forget) of the loop arrive
            st.send_signal(2)
            st.wait()
        return count(out, fds)

    def close(self) -> None:
        subprocess.run(["fusermount3", "-u", self.work], check=False)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def per(kinds: dict[str, int], n: int) -> dict[str, float]:
    """Requests by kind per operation, most frequent first."""
    return {k: round(v / n, 2) for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])}


def py(work: str, body: str, n: int) -> None:
    code = "import os, sys\nn = int(sys.argv[1])\n" + body
    subprocess.run([sys.executable, "-I", "-S", "-c", code, str(n)], cwd=work, check=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1000, help="operations per phase (default 1000)")
    ap.add_argument("--git-n", type=int, default=5, help="git status runs (default 5)")
    ap.add_argument("--contenders",
                    default="guardfs-rec,guardfs-empty,guardfs-rec-pc,guardfs-rec-wb,bindfs,"
                            "mergerfs,fuse-overlayfs")
    ap.add_argument("--guardfs", default=fsbench.DEFAULT_GUARDFS)
    ap.add_argument("--base-dir", default="/var/tmp")
    ap.add_argument("--json")
    ap.add_argument("--opcodes", action="store_true",
                    help="also print the requests per operation by kind (opcode)")
    args = ap.parse_args()
    args.guardfs = os.path.abspath(args.guardfs)
    contenders = args.contenders.split(",")
    base = tempfile.mkdtemp(prefix="fsreq.", dir=args.base_dir)
    tar = os.path.join(base, "tree.tar")
    subprocess.run(["tar", "-C", "/usr/share", "--exclude=*.pfx", "-cf", tar, "cmake-3.25"],
                   check=True)
    env = dict(os.environ, HOME=base, **fsbench.GIT_ENV)
    cproj = os.path.join(base, "cproj")
    fsbench.write_cproj(cproj, 50)
    res: dict = {}
    try:
        for c in contenders:
            m = Mounted(c, base, args)
            try:
                res[c] = {}
                for name, setup, loop in PHASES:
                    if setup:
                        py(m.work, setup, args.n)
                    r, k, kinds = m.traced(lambda: py(m.work, loop, args.n))
                    res[c][name] = (r / args.n, k / args.n, per(kinds, args.n))
                repo = os.path.join(m.work, "repo")
                os.mkdir(repo)
                subprocess.run(["tar", "-xf", tar, "--strip-components=1"], cwd=repo, check=True)
                for cmd in (["git", "init", "-q"], ["git", "add", "-A"],
                            ["git", "commit", "-q", "-m", "import"],
                            ["git", "status", "--porcelain"]):
                    subprocess.run(cmd, cwd=repo, env=env, check=True, stdout=subprocess.DEVNULL)

                def status():
                    for _ in range(args.git_n):
                        subprocess.run(["git", "status", "--porcelain"], cwd=repo, env=env,
                                       check=True, stdout=subprocess.DEVNULL)
                r, k, kinds = m.traced(status)
                res[c][GIT_PHASE] = (r / args.git_n, k / args.git_n, per(kinds, args.git_n))
                subprocess.run(fsbench.PY + [fsbench.EDIT_PY], cwd=repo, check=True)

                def stash_checkout():
                    for cmd in STASH_CHECKOUT:
                        subprocess.run(cmd, cwd=repo, env=env, check=True,
                                       stdout=subprocess.DEVNULL)
                r, k, kinds = m.traced(stash_checkout)
                res[c][STASH_PHASE] = (r, k, per(kinds, 1))
                subprocess.run(["cp", "-a", cproj, "cproj"], cwd=m.work, check=True)
                proj = os.path.join(m.work, "cproj")
                for phase, cmd in ((CMAKE_PHASE, ["cmake", "-S", ".", "-B", "build", "-G",
                                                  "Unix Makefiles"]),
                                   (MAKE_PHASE, ["cmake", "--build", "build", "-j2"])):
                    r, k, kinds = m.traced(lambda cmd=cmd: subprocess.run(
                        cmd, cwd=proj, env=env, check=True, stdout=subprocess.DEVNULL))
                    res[c][phase] = (r, k, per(kinds, 1))
            finally:
                m.close()
            print(f"{c}: " + ", ".join(f"{p} {r:.2f}/{k:.2f}" for p, (r, k, _) in res[c].items()),
                  file=sys.stderr, flush=True)
    finally:
        subprocess.run(["rm", "-rf", "--one-file-system", base], check=False)
    phases = [p for p, _, _ in PHASES] + [GIT_PHASE, STASH_PHASE, CMAKE_PHASE, MAKE_PHASE]
    print("FUSE requests per operation (daemon system calls per operation, requests included)")
    print(f"{'operation':20s}" + "".join(f"{c:>22s}" for c in contenders))
    for p in phases:
        print(f"{p:20s}" + "".join(f"{res[c][p][0]:>12.2f} ({res[c][p][1]:6.2f})"
                                   for c in contenders))
    if args.opcodes:
        print("\nFUSE requests per operation by kind")
        for p in phases:
            for c in contenders:
                kinds = res[c][p][2]
                print(f"{p:20s} {c:16s} " + (", ".join(f"{k} {v:.2f}" for k, v in kinds.items())
                                             or "-"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": args.n, "git_n": args.git_n, "contenders": contenders,
                       "per_op": {c: {p: {"requests": r, "syscalls": k, "by_kind": kinds}
                                      for p, (r, k, kinds) in v.items()}
                                  for c, v in res.items()}},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

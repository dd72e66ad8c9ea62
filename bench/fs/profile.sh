#!/bin/bash
# Profile the guardfs daemon on a short metadata + append workload (issue #6, "where the time
# goes"). Runs as root. Two tools:
#
#   bench/fs/profile.sh callgrind POLICY   instruction counts (repeatable on a noisy machine):
#                                          the daemon runs under valgrind --tool=callgrind,
#                                          counters are zeroed once mounted, so policy loading
#                                          is excluded; prints the top functions (inclusive and
#                                          self) and the total Ir.
#   bench/fs/profile.sh perf POLICY        perf record -e cpu-clock -g on the daemon's pid
#                                          (software clock: this VM exposes no hardware
#                                          counters), kernel and user stacks.
#
# POLICY: "empty", "rec" (built-in recommended), "rec+1000" (fsbench's recommended policy plus
# 1,000 deny rows) or a policy file. perf mode ends with the share of the daemon's samples
# spent in the guard's own code (namespaces guard, patterns, dataroot), the part a policy can
# change. Environment: WORKLOAD ("meta", the default; "untar": untar and rm -rf of
# /usr/share/cmake-3.25, UNTARS times, default 3; "git": that tree untarred through the
# mount before counting starts, then git init, add -A and commit, as fsbench; or "status": the
# tree untarred, committed and 50 files edited before counting starts, then fsbench's five
# `git status --porcelain`), N (files,
# default 2000 for callgrind, 10000 for perf), APPENDS (open/append/close loop, default N),
# OUT (output directory, default /var/tmp/fsprof-<tool>-<policy>), GUARDFS (binary, default
# build/guardfs, copied first so a concurrent rebuild does not change it), CALLGRIND_ARGS (more
# valgrind options, e.g. "--cache-sim=yes" for simulated cache misses).
set -euo pipefail

tool=${1:?usage: profile.sh callgrind|perf POLICY}
policy=${2:-rec}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
if [ "$tool" = callgrind ]; then N=${N:-2000}; else N=${N:-10000}; fi
APPENDS=${APPENDS:-$N}
name=$(basename "$policy" .yaml)
OUT=${OUT:-/var/tmp/fsprof-$tool-$name}
GUARDFS=${GUARDFS:-$repo/build/guardfs}

case "$policy" in
    empty) polargs=(--policy "$repo/examples/policies/empty.yaml") ;;
    rec) polargs=() ;;
    rec+1000) polargs=(--policy "$OUT/rec-plus-1000.yaml") ;;
    *) polargs=(--policy "$(readlink -f "$policy")") ;;
esac

rm -rf "$OUT"
mkdir -p "$OUT/ws"
if [ "$policy" = rec+1000 ]; then
    python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import fsbench; fsbench.write_plus1000(sys.argv[2])' \
        "$here" "$OUT/rec-plus-1000.yaml"
fi
cp "$GUARDFS" "$OUT/guardfs"
ws="$OUT/ws"
daemon=""
perfpid=""

is_mounted() { awk -v m="$ws" '$5 == m { f = 1 } END { exit !f }' /proc/self/mountinfo; }

cleanup() {
    set +e
    cd /
    if is_mounted; then fusermount3 -u "$ws" || fusermount3 -u -z "$ws"; fi
    if [ -n "$perfpid" ] && kill -0 "$perfpid" 2>/dev/null; then kill -INT "$perfpid"; wait "$perfpid"; fi
    if [ -n "$daemon" ] && kill -0 "$daemon" 2>/dev/null; then
        for _ in $(seq 100); do kill -0 "$daemon" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$daemon" 2>/dev/null && kill -TERM "$daemon" && sleep 1
    fi
    is_mounted || rm -rf "$ws"
}
trap cleanup EXIT

wait_mounted() {
    for _ in $(seq 600); do
        is_mounted && return 0
        kill -0 "$daemon" 2>/dev/null || { echo "daemon died" >&2; cat "$OUT/daemon.log" >&2; exit 1; }
        sleep 0.1
    done
    echo "not mounted after 60 s" >&2
    exit 1
}

WORKLOAD=${WORKLOAD:-meta}
UNTARS=${UNTARS:-3}
tarball="$OUT/tree.tar"
case "$WORKLOAD" in
    meta) ;;
    untar | git | status)
        # Without its one test key (`*.pfx`), which the recommended policy guards (as fsbench).
        tar -C /usr/share --exclude="*.pfx" -cf "$tarball" cmake-3.25 ;;
    *) echo "unknown WORKLOAD $WORKLOAD" >&2; exit 2 ;;
esac
export GIT_CONFIG_NOSYSTEM=1 HOME="$OUT" GIT_AUTHOR_NAME=Bench GIT_AUTHOR_EMAIL=bench@example.invalid \
    GIT_COMMITTER_NAME=Bench GIT_COMMITTER_EMAIL=bench@example.invalid GIT_CONFIG_COUNT=3 \
    GIT_CONFIG_KEY_0=gc.auto GIT_CONFIG_VALUE_0=0 GIT_CONFIG_KEY_1=init.defaultBranch \
    GIT_CONFIG_VALUE_1=main GIT_CONFIG_KEY_2=maintenance.auto GIT_CONFIG_VALUE_2=false

# fsbench's git add/commit: the tree in the current directory made a repository, one commit.
commit_tree() { git init -q && git add -A && git commit -q -m import; }

# What the workload needs in the mount before counting starts.
prepare() {
    if [ "$WORKLOAD" = git ] || [ "$WORKLOAD" = status ]; then
        mkdir "$ws/repo"
        tar -C "$ws/repo" --strip-components=1 -xf "$tarball"
    fi
    if [ "$WORKLOAD" = status ]; then
        (cd "$ws/repo" && commit_tree &&
            python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import fsbench; exec(fsbench.EDIT_PY)' "$here")
    fi
}

if [ "$tool" = callgrind ]; then
    # On /dev/fuse always: with FUSE over io_uring switched on, a run under valgrind hung at
    # its first request (stop 20).
    read -ra cg_extra <<<"${CALLGRIND_ARGS:-}"
    valgrind --tool=callgrind "${cg_extra[@]}" --callgrind-out-file="$OUT/callgrind.out.%p" \
        "$OUT/guardfs" mount -f -o no_io_uring "${polargs[@]}" "$ws" >"$OUT/daemon.log" 2>&1 &
    daemon=$!
    wait_mounted
    prepare
    callgrind_control -z "$daemon" >/dev/null
elif [ "$tool" = perf ]; then
    "$OUT/guardfs" mount -f "${polargs[@]}" "$ws" >"$OUT/daemon.log" 2>&1 &
    daemon=$!
    wait_mounted
    prepare
    perf record -q -e cpu-clock -F 2000 -g -p "$daemon" -o "$OUT/perf.data" >/dev/null 2>&1 &
    perfpid=$!
    sleep 1
else
    echo "unknown tool $tool" >&2
    exit 2
fi

cd "$ws"
start=$(date +%s.%N)
if [ "$WORKLOAD" = untar ]; then
    for _ in $(seq "$UNTARS"); do
        tar -xf "$tarball"
        rm -rf cmake-3.25
    done
elif [ "$WORKLOAD" = git ]; then
    (cd repo && commit_tree)
elif [ "$WORKLOAD" = status ]; then
    (cd repo && for _ in 1 2 3 4 5; do git status --porcelain >/dev/null; done)
else
python3 -I -S - "$N" "$APPENDS" <<'EOF'
import os, sys, subprocess
n, appends = int(sys.argv[1]), int(sys.argv[2])
os.mkdir("meta"); os.chdir("meta")
for d in range((n + 99) // 100):
    os.mkdir("d%03d" % d)
    for i in range(min(100, n - d * 100)):
        fd = os.open("d%03d/f%05d" % (d, i), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, b"x" * 64); os.close(fd)
for _ in range(3):
    subprocess.run(["find", ".", "-printf", "%s\n"], stdout=subprocess.DEVNULL, check=True)
for d in sorted(os.listdir(".")):
    for f in os.listdir(d):
        os.rename(d + "/" + f, d + "/" + f + ".r")
for d in sorted(os.listdir(".")):
    for f in os.listdir(d):
        os.unlink(d + "/" + f)
    os.rmdir(d)
os.chdir("..")
for _ in range(appends):
    fd = os.open("append.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, b"y" * 99 + b"\n"); os.close(fd)
EOF
fi
end=$(date +%s.%N)
cd /
if [ "$WORKLOAD" = untar ]; then
    echo "workload: $UNTARS x (untar + rm -rf of /usr/share/cmake-3.25): $(echo "$end - $start" | bc) s (under $tool)"
elif [ "$WORKLOAD" = git ]; then
    echo "workload: git init + add -A + commit of /usr/share/cmake-3.25: $(echo "$end - $start" | bc) s (under $tool)"
elif [ "$WORKLOAD" = status ]; then
    echo "workload: 5 x git status --porcelain of /usr/share/cmake-3.25, 50 files edited: $(echo "$end - $start" | bc) s (under $tool)"
else
    echo "workload: $N files create/stat x3/rename/unlink + $APPENDS open/append/close: $(echo "$end - $start" | bc) s (under $tool)"
fi

if [ "$tool" = perf ]; then
    kill -INT "$perfpid"; wait "$perfpid" || true; perfpid=""
fi
fusermount3 -u "$ws"
for _ in $(seq 600); do kill -0 "$daemon" 2>/dev/null || break; sleep 0.1; done
wait "$daemon" || true
daemon=""

if [ "$tool" = callgrind ]; then
    f=$(ls "$OUT"/callgrind.out.* | head -1)
    echo "== total instructions (after mount) and top functions, inclusive =="
    callgrind_annotate --inclusive=yes "$f" 2>/dev/null | sed -n '1,60p' | cut -c1-200
    echo "== self =="
    # --threshold=100: the default (99%) stops after the thread entry points, whose "self"
    # share callgrind_annotate reports as nearly everything.
    callgrind_annotate --threshold=100 "$f" 2>/dev/null | sed -n '/file:function/,$p' \
        | sed -n '1,45p' | cut -c1-200
else
    echo "== perf report (self, by symbol) =="
    perf report -i "$OUT/perf.data" --no-children --sort dso,sym --stdio 2>/dev/null \
        | grep -v '^#' | grep -v '^$' | grep '%' | head -45 || true  # head closes the pipe early
    echo "== the guard's own code (self time; guardfs::guard, ::patterns, ::dataroot) =="
    perf report -i "$OUT/perf.data" --no-children -g none --sort sym --stdio 2>/dev/null \
        | awk '/^#/ || !/%/ { next }
               { total += $1 + 0 }
               /guardfs::(guard|patterns|dataroot)::/ { guard += $1 + 0 }
               END { printf "guard %.2f%% of %.2f%% of the daemon samples reported\n", guard, total }'
fi

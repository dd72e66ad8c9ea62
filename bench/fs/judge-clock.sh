#!/bin/bash
# Times the gate's decisions inside the daemon on git init + add -A + commit of the cmake tree
# (fsbench's git add/commit row), for an experiment build that prints its clocks when it ends:
#
#   bench/fs/patches/build.sh bench/fs/patches/judge-clock.diff /var/tmp/guardfs-clock
#   BIN=/var/tmp/guardfs-clock ROUNDS=3 bench/fs/judge-clock.sh
#
# (phase-clock.diff adds the time per phase of a walk, and prints decisions slower than 5 us
# after the rows.) Each round mounts the build over a fresh copy of the tree, once with the
# empty policy and once with the recommended one, runs the three git commands through the
# mount, unmounts, and prints the wall time and the daemon's "guardfs-exp" lines. Runs as root.
# BASE: a directory to work in (default /var/tmp/fsb-ext4, the ext4-in-memory setup of
# bench/RESULTS.md); TREE: what to copy (default /usr/share/cmake-3.25); PLUS: a policy file
# to time as a third variant, "plus" (fsbench's recommended + 1,000 rows: write it with
# python3 -c "import sys; sys.path.insert(0, 'bench/fs'); import fsbench;
# fsbench.write_plus1000('/var/tmp/plus1000.yaml')").
set -euo pipefail
BIN=${BIN:?BIN: a guardfs built with bench/fs/patches/judge-clock.diff}
BASE=${BASE:-/var/tmp/fsb-ext4}
TREE=${TREE:-/usr/share/cmake-3.25}
here=$(cd "$(dirname "$0")" && pwd)
empty=$(cd "$here/../.." && pwd)/examples/policies/empty.yaml
work=$BASE/judge-clock
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=B GIT_AUTHOR_EMAIL=b@example.invalid \
    GIT_COMMITTER_NAME=B GIT_COMMITTER_EMAIL=b@example.invalid HOME=$BASE
pid=""
cleanup() {
    if grep -q " $work/ws fuse" /proc/mounts; then fusermount3 -u "$work/ws" || fusermount3 -u -z "$work/ws"; fi
    if [ -n "$pid" ]; then wait "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
for round in $(seq 1 "${ROUNDS:-3}"); do
    for pol in empty rec ${PLUS:+plus}; do
        rm -rf "$work"
        mkdir -p "$work/ws"
        cp -a "$TREE/." "$work/ws/"
        args=()
        if [ "$pol" = empty ]; then args=(--policy "$empty"); fi
        if [ "$pol" = plus ]; then args=(--policy "$PLUS"); fi
        "$BIN" mount -f "${args[@]}" "$work/ws" 2>"$work/daemon.log" &
        pid=$!
        for _ in $(seq 200); do grep -q " $work/ws fuse" /proc/mounts && break; sleep 0.05; done
        start=$(date +%s.%N)
        (cd "$work/ws" && git init -q && git -c gc.auto=0 add -A &&
            git -c gc.auto=0 commit -q -m import)
        end=$(date +%s.%N)
        fusermount3 -u "$work/ws"
        wait "$pid"
        pid=""
        echo "$round $pol wall $(echo "$end - $start" | bc) $(grep -h guardfs-exp "$work/daemon.log" | tr '\n' ' ')"
    done
done

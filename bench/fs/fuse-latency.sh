#!/bin/bash
# How long cmake's configure step waits on each FUSE request (issue #6, "where the time goes").
# Runs as root. For each contender the script mounts it once over a fresh copy of fsbench's C
# project (bench/fs/fsbench.py, write_cproj: 50 files), then runs the configure step RUNS times
# (default 6), each under `perf record -a` of the kernel's fuse:fuse_request_send and
# fuse:fuse_request_end tracepoints (Linux 6.13 and later), and prints per contender: requests
# per run, the time callers waited on all requests but RELEASE (sent in the background after
# close(2), nobody waits on it), and each kind's median latency (bench/fs/fuse-latency.py).
# Tracing adds to every request's latency; compare contenders, not absolute times.
#
#   bench/fs/fuse-latency.sh [CONTENDER...]   guardfs-rec, guardfs-empty, fuse-overlayfs
#                                             (default: all three)
#
# Environment: GUARDFS (binary, default build/guardfs), BASE (parent of the temporary tree,
# default /var/tmp), RUNS, OUT (where the perf data and its text go, default
# /var/tmp/fuse-latency). fuse.enable_uring is turned on for the run, as fsbench does, and put
# back afterwards.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
GUARDFS=${GUARDFS:-$repo/build/guardfs}
BASE=${BASE:-/var/tmp}
RUNS=${RUNS:-6}
OUT=${OUT:-/var/tmp/fuse-latency}
PY=${PY:-python3}
[ $# -gt 0 ] || set -- guardfs-rec guardfs-empty fuse-overlayfs

uring=/sys/module/fuse/parameters/enable_uring
uring_was=$(cat "$uring" 2>/dev/null || true)
W=""
mnt=""
daemon=""

is_mounted() { awk -v m="$1" '$5 == m { f = 1 } END { exit !f }' /proc/self/mountinfo; }

cleanup() {
    set +e
    cd /
    if [ -n "$mnt" ] && is_mounted "$mnt"; then fusermount3 -u "$mnt"; fi
    if [ -n "$daemon" ]; then wait "$daemon" 2>/dev/null; fi
    if [ -n "$W" ]; then rm -rf --one-file-system "$W"; fi
    if [ -n "$uring_was" ]; then echo "$uring_was" > "$uring"; fi
}
trap cleanup EXIT

if [ -n "$uring_was" ]; then echo Y > "$uring"; fi
rm -rf "$OUT"
mkdir -p "$OUT"
for who in "$@"; do
    W=$(mktemp -d "$BASE/fuse-latency.XXXXXX")
    mkdir -p "$W/ws" "$W/lower" "$W/work" "$W/mnt"
    "$PY" -c 'import sys; sys.path.insert(0, sys.argv[1]); import fsbench; fsbench.write_cproj(sys.argv[2], 50)' \
        "$here" "$W/src"
    mnt=$W/ws
    case $who in
        guardfs-rec) "$GUARDFS" mount -f "$W/ws" 2>/dev/null & daemon=$! ;;
        guardfs-empty)
            "$GUARDFS" mount -f --policy "$repo/examples/policies/empty.yaml" "$W/ws" 2>/dev/null &
            daemon=$! ;;
        fuse-overlayfs)
            mnt=$W/mnt
            fuse-overlayfs -f -o "lowerdir=$W/lower,upperdir=$W/ws,workdir=$W/work,noacl" "$mnt" &
            daemon=$! ;;
        *) echo "fuse-latency.sh: unknown contender $who" >&2; exit 2 ;;
    esac
    for _ in $(seq 200); do is_mounted "$mnt" && break; sleep 0.05; done
    is_mounted "$mnt" || { echo "fuse-latency.sh: $who did not mount" >&2; exit 1; }
    for k in $(seq "$RUNS"); do
        rm -rf "$mnt/cproj"
        cp -a "$W/src" "$mnt/cproj"
        sync
        sleep 1
        perf record -q -e fuse:fuse_request_send -e fuse:fuse_request_end -a -o "$OUT/$who-$k.data" -- \
            sh -c "cd '$mnt/cproj' && HOME='$W' cmake -S . -B build -G 'Unix Makefiles' > /dev/null" 2>/dev/null
        perf script -i "$OUT/$who-$k.data" > "$OUT/$who-$k.txt" 2>/dev/null
    done
    fusermount3 -u "$mnt"
    wait "$daemon" || true
    daemon=""
    mnt=""
    rm -rf --one-file-system "$W"
    W=""
done
"$PY" "$here/fuse-latency.py" "$OUT" "$@"

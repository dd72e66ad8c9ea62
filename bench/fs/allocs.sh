#!/bin/bash
# Heap allocations the guardfs daemon makes per READ and WRITE (issue #6: "no allocation on the
# read/write path"), counted by heaptrack (LD_PRELOAD, so it sees the daemon on either request
# loop, unlike valgrind). Runs as root; needs heaptrack and heaptrack_print (Debian: heaptrack).
#
#   bench/fs/allocs.sh [GUARDFS]
#
# For each request loop (/dev/fuse, and FUSE over io_uring where the kernel offers it; the
# kernel's fuse.enable_uring is switched on for the run and put back) and each kind (4 KiB:
# write(2) through the page cache and O_DIRECT read(2), one WRITE or READ request each; 128 KiB:
# O_DIRECT write and read), the daemon is run twice, over N and 4N requests of each direction;
# the difference of its allocation counts over the difference of the requests is the
# allocations per request. Whatever the daemon allocates at start and at unmount cancels out.
# N defaults to 4096 (NBIG, for 128 KiB, to 1024). GUARDFS defaults to build/guardfs.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
GUARDFS=${1:-$repo/build/guardfs}
N=${N:-4096}
NBIG=${NBIG:-1024}
OUT=$(mktemp -d /var/tmp/guardfs-allocs.XXXXXX)
ws=$OUT/ws
uring=/sys/module/fuse/parameters/enable_uring
uring_was=$(cat "$uring" 2>/dev/null || echo "")
daemon=""

is_mounted() { awk -v m="$ws" '$5 == m { f = 1 } END { exit !f }' /proc/self/mountinfo; }

cleanup() {
    set +e
    if is_mounted; then fusermount3 -u "$ws" || fusermount3 -u -z "$ws"; fi
    if [ -n "$daemon" ]; then wait "$daemon" 2>/dev/null; fi
    if [ -n "$uring_was" ]; then echo "$uring_was" >"$uring"; fi
    rm -rf "$OUT"
}
trap cleanup EXIT

# count LOOP KIND COUNT: the daemon's calls to allocation functions over COUNT requests of each
# direction.
count() {
    local loop=$1 kind=$2 n=$3 opts=()
    [ "$loop" = dev-fuse ] && opts=(-o no_io_uring)
    [ "$loop" = io_uring ] && opts=(-o io_uring)
    rm -rf "$ws" "$OUT"/ht.*
    mkdir -p "$ws"
    heaptrack -o "$OUT/ht" "$GUARDFS" mount -f "${opts[@]}" "$ws" >"$OUT/daemon.log" 2>&1 &
    daemon=$!
    for _ in $(seq 600); do is_mounted && break; sleep 0.05; done
    is_mounted || { echo "not mounted" >&2; cat "$OUT/daemon.log" >&2; exit 1; }
    if [ "$kind" = 4k ]; then
        dd if=/dev/zero of="$ws/f" bs=4k count="$n" status=none
        dd if="$ws/f" of=/dev/null bs=4k iflag=direct status=none
    else
        dd if=/dev/zero of="$ws/f" bs=128k count="$n" oflag=direct status=none
        dd if="$ws/f" of=/dev/null bs=128k iflag=direct status=none
    fi
    fusermount3 -u "$ws"
    wait "$daemon"
    daemon=""
    if [ "$loop" = io_uring ] && ! grep -q "io_uring on" "$OUT/daemon.log"; then
        echo "FUSE over io_uring did not start: $(cat "$OUT/daemon.log")" >&2
        exit 1
    fi
    heaptrack_print -f "$OUT"/ht.* 2>/dev/null |
        awk '/^calls to allocation functions:/ { print $5 }'
}

loops=(dev-fuse)
if [ -n "$uring_was" ]; then
    echo 1 >"$uring"
    loops+=(io_uring)
fi
echo "guardfs: $GUARDFS ($(sha256sum "$GUARDFS" | cut -c1-16)), N=$N, NBIG=$NBIG"
printf '%-9s %-5s %12s %12s %14s\n' loop size "allocs (N)" "allocs (4N)" "per request"
for loop in "${loops[@]}"; do
    for kind in 4k 128k; do
        n=$N
        [ "$kind" = 128k ] && n=$NBIG
        a=$(count "$loop" "$kind" "$n")
        b=$(count "$loop" "$kind" $((4 * n)))
        per=$(awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN { printf "%.3f", (b - a) / (2 * 3 * n) }')
        printf '%-9s %-5s %12s %12s %14s\n' "$loop" "$kind" "$a" "$b" "$per"
    done
done

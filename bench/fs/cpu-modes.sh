#!/bin/bash
# Does a sample's time depend on the CPU it runs on? fsbench's create loop (10,000 files of 64
# bytes, the "meta-create" row) through a fresh guardfs mount with the empty policy, the client
# left to the scheduler ("free") or pinned with taskset to each CPU in turn, TRIALS times; prints
# each loop's wall time and the CPU time the daemon used. With FUSE over io_uring each request is
# served on the client's CPU, so a pinned client keeps the daemon's work on that CPU too.
# Runs as root; fsbench sets fuse.enable_uring Y for its runs, and this script prints the value
# it finds rather than changing it.
#   GUARDFS=build/guardfs BASE=/var/tmp/fsb-ext4 TRIALS=4 bash bench/fs/cpu-modes.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
G=$(readlink -f "${GUARDFS:-$repo/build/guardfs}")
B=${BASE:-/var/tmp}/cpu-modes
TRIALS=${TRIALS:-4}
PY=$(python3 -c 'import sys; print(sys.executable)')
mkdir -p "$B"
python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import fsbench; print(fsbench.CREATE_PY)' \
  "$here" > "$B/create.py"
ws="$B/ws"
pid=""
trap 'if mountpoint -q "$ws"; then fusermount3 -u "$ws"; fi; [ -z "$pid" ] || wait "$pid" || true; rm -rf "$B"' EXIT
echo "fuse.enable_uring $(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null || echo absent)"
hz=$(getconf CLK_TCK)
modes=(free)
for c in $(seq 0 $(($(nproc) - 1))); do modes+=("cpu$c"); done
for trial in $(seq "$TRIALS"); do
  for m in "${modes[@]}"; do
    rm -rf "$ws"; mkdir -p "$ws"
    "$G" mount -f --policy "$repo/examples/policies/empty.yaml" "$ws" 2>"$B/log" &
    pid=$!
    for _ in $(seq 600); do mountpoint -q "$ws" && break; sleep 0.05; done
    if ! mountpoint -q "$ws"; then
      echo "cpu-modes: guardfs did not mount $ws in 30 s" >&2
      kill "$pid" 2>/dev/null || true
      exit 1
    fi
    mkdir "$ws/meta"
    pin=()
    [ "$m" = free ] || pin=(taskset -c "${m#cpu}")
    s=$(date +%s.%N)
    (cd "$ws/meta" && "${pin[@]}" "$PY" -I -S "$B/create.py" 10000)
    e=$(date +%s.%N)
    cpu=$(awk -v hz="$hz" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$pid/stat")
    fusermount3 -u "$ws"; wait "$pid"; pid=""
    echo "trial $trial client=$m create=$(echo "$e - $s" | bc) s daemon-cpu=$cpu s"
  done
done

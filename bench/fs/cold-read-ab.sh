#!/bin/bash
# Who makes a cold 1 GiB read slow: the writer or the reader? Three trials of each pair of
# (the file written natively or through guardfs) x (its first read after `drop_caches`, natively
# or through a fresh guardfs mount), each read timed alone. Runs as root.
#   GUARDFS=build/guardfs BASE=/var/tmp/fsb-ext4 bash bench/fs/cold-read-ab.sh
set -eu
G=${GUARDFS:-build/guardfs}
B=${BASE:-/var/tmp}/cold-read-ab
mkdir -p "$B/ws" "$B/mnt"
# mnt: start the daemon and wait until the kernel shows the mount (a read before it would read
# the empty mountpoint directory, not guardfs).
mnt() {
  "$G" mount -f "$B/ws" "$B/mnt" 2>/dev/null &
  for _ in $(seq 600); do mountpoint -q "$B/mnt" && return 0; sleep 0.05; done
  echo "cold-read-ab: guardfs did not mount $B/mnt in 30 s" >&2
  exit 1
}
umnt() { fusermount3 -u "$B/mnt"; wait; }
trap 'mountpoint -q "$B/mnt" && fusermount3 -u "$B/mnt"; rm -rf "$B"' EXIT
for trial in 1 2 3; do
  for w in native guardfs; do
    for r in native guardfs; do
      rm -f "$B/ws/big"
      if [ $w = native ]; then
        dd if=/dev/zero of="$B/ws/big" bs=1M count=1024 conv=fsync status=none
      else
        mnt; dd if=/dev/zero of="$B/mnt/big" bs=1M count=1024 conv=fsync status=none; umnt
      fi
      sync; echo 3 > /proc/sys/vm/drop_caches
      if [ $r = native ]; then
        sleep 1; s=$(date +%s.%N); cat "$B/ws/big" >/dev/null; e=$(date +%s.%N)
      else
        mnt; sleep 1; s=$(date +%s.%N); cat "$B/mnt/big" >/dev/null; e=$(date +%s.%N); umnt
      fi
      echo "trial $trial write=$w first-cold-read=$r $(echo "$e - $s" | bc) s"
    done
  done
done

#!/bin/sh
# The kernel's fuse.enable_uring for a whole ctest run (FUSE over io_uring, decision 012).
#   fuse_ring.sh on STATE       turn it on; remember the value found in STATE
#   fuse_ring.sh restore STATE  put back the value in STATE
# ctest runs "on" before the first test that mounts and "restore" after the last, also under -j
# (fixture fuse_ring, tests/CMakeLists.txt). A test binary run on its own turns the setting on
# and puts it back itself (enable_fuse_ring, mount_fixture.cpp); run by ctest it finds it on
# already and leaves it alone, so parallel test processes never see it change under them.
# Without the setting (a kernel before Linux 6.14) or the right to change it (not root), both
# do nothing and succeed: the tests then run on /dev/fuse, as they say.
set -eu
param=/sys/module/fuse/parameters/enable_uring
state=$2
case $1 in
on)
    [ -r "$param" ] || exit 0
    found=$(cat "$param")
    # A STATE left by a run that ended before "restore" holds the value to put back; keep it.
    if [ "$found" != Y ] && (echo Y > "$param") 2>/dev/null && [ ! -f "$state" ]; then
        echo "$found" > "$state"
    fi
    echo "fuse.enable_uring: found $found, now $(cat "$param")"
    ;;
restore)
    if [ -f "$state" ]; then
        cat "$state" > "$param"
        rm -f "$state"
    fi
    [ -r "$param" ] && echo "fuse.enable_uring: $(cat "$param")"
    exit 0
    ;;
*)
    echo "usage: fuse_ring.sh on|restore STATE" >&2
    exit 2
    ;;
esac

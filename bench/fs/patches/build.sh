#!/bin/bash
# Builds guardfs with one experiment patch applied, for an A/B run with fsbench.py --alt-guardfs:
#
#   bench/fs/patches/build.sh bench/fs/patches/no-access.diff /var/tmp/guardfs-no-access
#
# The patch is applied to a temporary worktree of HEAD (the checkout is not touched); the binary
# is built as in the README (RelWithDebInfo) and copied to OUT.
set -euo pipefail
patch=$(realpath "${1:?usage: build.sh PATCH OUT}")
out=${2:?usage: build.sh PATCH OUT}
repo=$(cd "$(dirname "$0")/../../.." && pwd)
tree=$(mktemp -d /var/tmp/guardfs-patched.XXXXXX)
trap 'git -C "$repo" worktree remove --force "$tree" >/dev/null 2>&1 || rm -rf "$tree"' EXIT
git -C "$repo" worktree add --detach "$tree" HEAD >/dev/null
git -C "$tree" apply "$patch"
cmake -S "$tree" -B "$tree/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGUARDFS_BENCH=OFF >/dev/null
cmake --build "$tree/build" -j"$(nproc)" --target guardfs >/dev/null
cp "$tree/build/guardfs" "$out"
echo "built $out: HEAD $(git -C "$repo" rev-parse --short HEAD) + $(basename "$patch")"

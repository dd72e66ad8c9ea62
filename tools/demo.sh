#!/usr/bin/env bash
# Installs what guardfs needs (Debian 12), builds it, makes a demo workspace and mounts the guard
# over it with the built-in recommended policy. Run as root (sudo). Unmount with:
#   fusermount3 -u /tmp/guardfs-demo
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
demo=${1:-/tmp/guardfs-demo}
"$here/tools/setup-debian.sh" >/dev/null
cmake -S "$here" -B "$here/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$here/build" -j"$(nproc)"
mkdir -p "$demo/src" "$demo/.claude"
[ -e "$demo/.env" ] || echo "API_KEY=demo-secret" > "$demo/.env"
[ -e "$demo/src/main.c" ] || echo 'int main(void) { return 0; }' > "$demo/src/main.c"
[ -d "$demo/.git" ] || git -C "$demo" init -q
"$here/build/guardfs" mount --audit-log /tmp/guardfs-demo-audit.jsonl "$demo"
cat <<MSG

guardfs is guarding $demo with the built-in recommended policy. Try:
  echo x >> $demo/.env                         # ask row, no approver: Permission denied
  echo x > $demo/.git/hooks/pre-commit         # git tier: Permission denied
  echo x > $demo/.claude/settings.json         # agent-config tier: Permission denied
  echo 'int x;' >> $demo/src/main.c            # ordinary work: fine
  $here/build/guardfs audit /tmp/guardfs-demo-audit.jsonl
Unmount: fusermount3 -u $demo
MSG
uring=/sys/module/fuse/parameters/enable_uring
if [ -r "$uring" ] && [ "$(cat "$uring")" != Y ]; then
    cat <<MSG
This kernel has FUSE over io_uring, which makes every request through the guard faster
(docs/decisions/012), but it is off. It is a setting for the whole machine; to turn it on,
then mount again:  echo Y > $uring
MSG
fi

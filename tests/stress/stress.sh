#!/usr/bin/env bash
# Reliability under load (issue #8): stress-ng's filesystem stressors, several at once, through a
# guardfs mount with the built-in recommended policy, alongside a git workload (init, add, commit,
# status, log in a loop); then the same load on the plain directory for comparison. Reports
# stress-ng's exit status and failures for both (a failure that appears only through guardfs is a
# guardfs bug), the git loop's iterations and failures, what the guard refused (its audit log),
# the daemon's open descriptors (idle before, peak during, after) and its memory (VmHWM, VmRSS).
#
# Usage: tests/stress/stress.sh [-t SECONDS] [-g GUARDFS] [-o REPORT] [-k]
#   -t  seconds per run (default 60; two runs: through guardfs, then plain)
#   -g  the guardfs binary (default: build/guardfs of this checkout)
#   -o  also write the report to this file
#   -k  keep the logs directory (printed at the end)
# Needs: stress-ng, git, fusermount3, /dev/fuse. Exit status: 0 when guardfs showed no failure
# the plain directory did not, the git loop never failed and no descriptor leaked; 1 otherwise;
# 2 when the setup failed. On exit (also on a signal) it unmounts and ends only what it started.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
duration=60
guardfs="$repo/build/guardfs"
report_file=""
keep=0
while getopts "t:g:o:kh" opt; do
    case $opt in
    t) duration=$OPTARG ;;
    g) guardfs=$OPTARG ;;
    o) report_file=$OPTARG ;;
    k) keep=1 ;;
    *)
        sed -n '2,16p' "$0"
        exit 2
        ;;
    esac
done

for tool in stress-ng git fusermount3; do
    command -v "$tool" >/dev/null || { echo "stress.sh: $tool is not installed" >&2; exit 2; }
done
[ -x "$guardfs" ] || { echo "stress.sh: no guardfs binary at $guardfs (build first)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/var/tmp}/guardfs-stress.XXXXXX")
logs="$work/logs"
mnt="$work/guarded"
plain="$work/plain"
mkdir -p "$logs" "$mnt" "$plain"

daemon_pid=""
stress_pid=""
git_pid=""
sampler_pid=""

# The topmost filesystem type mounted at $1 ("" when none).
fstype_at() {
    awk -v p="$1" '$5 == p { t = "" ; for (i = 7; i <= NF; i++) if ($i == "-") { t = $(i + 1); break } } END { print t }' /proc/self/mountinfo
}

stop_pid() { # pid, seconds to wait after SIGTERM
    local pid=$1 wait_s=$2
    [ -n "$pid" ] || return 0
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq $((wait_s * 10))); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null
}

cleanup() {
    trap - EXIT INT TERM HUP
    stop_pid "$sampler_pid" 2
    stop_pid "$git_pid" 10
    stop_pid "$stress_pid" 30
    if [ "$(fstype_at "$mnt")" = "fuse.guardfs" ]; then
        fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
    fi
    if [ -n "$daemon_pid" ]; then
        for _ in $(seq 100); do
            kill -0 "$daemon_pid" 2>/dev/null || break
            sleep 0.1
        done
        stop_pid "$daemon_pid" 5
    fi
    if [ "$(fstype_at "$mnt")" = "" ]; then
        if [ "$keep" = 1 ]; then
            find "$work" -mindepth 1 -maxdepth 1 ! -name logs -exec rm -rf {} +
            echo "stress.sh: logs kept in $logs" >&2
        else
            rm -rf "$work"
        fi
    else
        echo "stress.sh: $mnt is still mounted; left $work in place" >&2
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# The stressors: every filesystem stressor of the issue, plus names, xattrs, times, listings
# and copies. Sizes are capped so that two runs fit in a few GiB.
stressors=(--dir 2 --dentry 2 --rename 2 --link 2 --symlink 2 --chmod 2
    --hdd 1 --hdd-bytes 128M --iomix 1 --iomix-bytes 128M
    --fallocate 1 --fallocate-bytes 128M --mmap 1 --mmap-file --mmap-bytes 64M
    --filename 1 --xattr 1 --utime 1 --getdent 1 --copy-file 1 --copy-file-bytes 128M)
available=$(stress-ng --stressors)
for s in dir dentry rename link symlink chmod hdd iomix fallocate mmap filename xattr utime getdent copy-file; do
    case " $available " in
    *" $s "*) ;;
    *) echo "stress.sh: this stress-ng has no '$s' stressor" >&2; exit 2 ;;
    esac
done

# init, add, commit, edit, commit, branch, checkout, status, log: a new repository per iteration
# until $1/git-stop exists; "ok failed" in $2. The repositories are kept (and removed from the
# underlying directory after unmounting), so the stress load stays the same all run long.
git_loop() {
    local dir=$1 counts=$2 ok=0 failed=0 i=0
    export GIT_AUTHOR_NAME=stress GIT_AUTHOR_EMAIL=stress@example.invalid
    export GIT_COMMITTER_NAME=stress GIT_COMMITTER_EMAIL=stress@example.invalid
    mkdir -p "$dir/git"
    while [ ! -e "$dir/git-stop" ]; do
        i=$((i + 1))
        local r="$dir/git/r$i"
        if (
            set -e
            git init -q "$r"
            cd "$r"
            for f in a b c; do echo "$f $i" >"$f.txt"; done
            mkdir -p src && echo "int main() { return $i; }" >src/main.c
            git add -A && git commit -q -m "first $i"
            echo "more" >>a.txt && git mv b.txt b2.txt && git rm -q c.txt
            git commit -q -am "second $i"
            git branch -q side && git checkout -q side && echo side >side.txt
            git add side.txt && git commit -q -m side && git checkout -q -
            [ -z "$(git status --porcelain)" ]
            [ "$(git log --oneline side | wc -l)" = 3 ]
        ) >>"$logs/git-$(basename "$dir").log" 2>&1; then
            ok=$((ok + 1))
        else
            failed=$((failed + 1))
            echo "iteration $i failed" >>"$logs/git-$(basename "$dir").log"
        fi
        echo "$ok $failed" >"$counts"
    done
}

fd_count() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status" 2>/dev/null; }

# Samples the daemon's descriptors and RSS once a second; the peaks go to $1.
sampler() {
    local pid=$1 out=$2 peak_fd=0 peak_rss=0 n r
    while kill -0 "$pid" 2>/dev/null; do
        n=$(fd_count "$pid")
        r=$(status_kb "$pid" VmRSS)
        [ "${n:-0}" -gt "$peak_fd" ] && peak_fd=$n
        [ "${r:-0}" -gt "$peak_rss" ] && peak_rss=$r
        echo "$peak_fd $peak_rss" >"$out"
        sleep 1
    done
}

# One run: stress-ng and the git loop in $1 for $duration seconds; results prefixed $2.
run_load() {
    local dir=$1 tag=$2
    rm -f "$dir/git-stop"
    git_loop "$dir" "$logs/$tag.git" &
    git_pid=$!
    # stress-ng keeps to --timeout; the outer timeout only guards against a hang.
    timeout --kill-after=30 $((duration * 3 + 60)) stress-ng "${stressors[@]}" \
        --temp-path "$dir" --timeout "${duration}s" --metrics-brief --verify \
        >"$logs/$tag.stress" 2>&1 &
    stress_pid=$!
    wait "$stress_pid"
    echo $? >"$logs/$tag.rc"
    stress_pid=""
    touch "$dir/git-stop"
    wait "$git_pid"
    git_pid=""
    rm -f "$dir/git-stop"
}

# Failing stressors, "name name ..." ("" when none), from stress-ng's own summary and fail lines.
failures_of() {
    {
        sed -n 's/.*failed: [0-9]*: \(.*\)/\1/p' "$1" | tr ' ' '\n' | grep -v '^(' | sed 's/[()]//g'
        sed -n 's/.*fail: *\[[0-9]*\] \([a-z-]*\):.*/\1/p' "$1"
    } | grep -v '^$' | sort -u | tr '\n' ' ' | sed 's/ $//'
}

# ---- through guardfs --------------------------------------------------------------------------
"$guardfs" mount -f --audit-log "$logs/audit.jsonl" "$mnt" 2>"$logs/daemon.log" &
daemon_pid=$!
for _ in $(seq 200); do
    [ "$(fstype_at "$mnt")" = "fuse.guardfs" ] && break
    kill -0 "$daemon_pid" 2>/dev/null || break
    sleep 0.1
done
if [ "$(fstype_at "$mnt")" != "fuse.guardfs" ]; then
    echo "stress.sh: guardfs did not mount:" >&2
    cat "$logs/daemon.log" >&2
    exit 2
fi
fd_before=$(fd_count "$daemon_pid")
rss_before=$(status_kb "$daemon_pid" VmRSS)
sampler "$daemon_pid" "$logs/peaks" &
sampler_pid=$!
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
run_load "$mnt" guarded
stop_pid "$sampler_pid" 2
sampler_pid=""
fd_after=$(fd_count "$daemon_pid")
hwm=$(status_kb "$daemon_pid" VmHWM)
rss_after=$(status_kb "$daemon_pid" VmRSS)
# What is left in the tree (the kept repositories): the daemon may hold one descriptor for each.
entries_left=$(find "$mnt" -mindepth 1 | wc -l)
read -r fd_peak rss_peak <"$logs/peaks"
load_during=$(cut -d' ' -f1-3 /proc/loadavg)
alive=yes
kill -0 "$daemon_pid" 2>/dev/null || alive=no
fusermount3 -u "$mnt"
for _ in $(seq 100); do
    kill -0 "$daemon_pid" 2>/dev/null || break
    sleep 0.1
done
wait "$daemon_pid"
daemon_rc=$?
daemon_pid=""

# ---- the plain directory ----------------------------------------------------------------------
run_load "$plain" plain

# ---- report -----------------------------------------------------------------------------------
g_rc=$(cat "$logs/guarded.rc")
p_rc=$(cat "$logs/plain.rc")
g_fail=$(failures_of "$logs/guarded.stress")
p_fail=$(failures_of "$logs/plain.stress")
only_guarded=$(comm -23 <(tr ' ' '\n' <<<"$g_fail" | grep -v '^$' | sort) \
    <(tr ' ' '\n' <<<"$p_fail" | grep -v '^$' | sort) | tr '\n' ' ' | sed 's/ $//')
read -r g_git_ok g_git_failed <"$logs/guarded.git"
read -r p_git_ok p_git_failed <"$logs/plain.git"
denials=$(grep -c '"verdict":"deny"' "$logs/audit.jsonl" 2>/dev/null)
# The refusals by operation and rule, and audit lines that are not one JSON object.
audit_summary=$(python3 -c 'import collections, json, sys
bad = 0
seen = collections.Counter()
for line in open(sys.argv[1], "rb"):
    try:
        j = json.loads(line)
    except Exception:
        bad += 1
        continue
    if "event" not in j:
        seen["%s %s (%s)" % (j.get("verdict"), j.get("op"), j.get("rule"))] += 1
for k, n in sorted(seen.items()):
    print("  %6d %s" % (n, k))
print("  unparsable lines: %d" % bad)' "$logs/audit.jsonl" 2>&1)
emfile_g=$(cat "$logs/guarded.stress" "$logs/git-guarded.log" 2>/dev/null | grep -c 'Too many open files')
emfile_p=$(cat "$logs/plain.stress" "$logs/git-plain.log" 2>/dev/null | grep -c 'Too many open files')

{
    echo "guardfs stress run: $started, ${duration}s per run, $(nproc) cores"
    echo "load average before: $load_before; at the end of the guarded run: $load_during"
    echo "stressors: ${stressors[*]}"
    echo
    echo "                       through guardfs        plain directory"
    printf "stress-ng exit status  %-22s %s\n" "$g_rc" "$p_rc"
    printf "failing stressors      %-22s %s\n" "${g_fail:-none}" "${p_fail:-none}"
    printf "fail lines             %-22s %s\n" "$(grep -c 'fail:' "$logs/guarded.stress")" \
        "$(grep -c 'fail:' "$logs/plain.stress")"
    printf "git loop ok/failed     %-22s %s\n" "$g_git_ok/$g_git_failed" "$p_git_ok/$p_git_failed"
    echo
    echo "failures only through guardfs: ${only_guarded:-none}"
    echo "guard refusals (audit log deny lines): $denials"
    echo "$audit_summary"
    echo "'Too many open files' lines: $emfile_g through guardfs, $emfile_p plain"
    echo "daemon alive after the load: $alive; exit status after unmount: $daemon_rc"
    echo "daemon descriptors: $fd_before idle before, $fd_peak peak sampled, $fd_after after" \
        "($entries_left entries left in the tree); RLIMIT_NOFILE hard limit $(ulimit -Hn)"
    echo "daemon memory: VmRSS ${rss_before} kB before, ${rss_peak} kB peak sampled, ${rss_after} kB after; VmHWM ${hwm} kB"
    echo
    echo "bogo ops (stress-ng --metrics-brief)   through guardfs      plain"
    join <(awk '/metrc:/ && NF == 10 && $4 ~ /^[a-z-]+$/ && $5 ~ /^[0-9]+$/ { print $4, $5 }' "$logs/guarded.stress" | sort) \
        <(awk '/metrc:/ && NF == 10 && $4 ~ /^[a-z-]+$/ && $5 ~ /^[0-9]+$/ { print $4, $5 }' "$logs/plain.stress" | sort) |
        awk '{ printf "  %-36s %-20s %s\n", $1, $2, $3 }'
} | tee "${report_file:-/dev/null}"
if [ -n "$(grep -h 'fail:' "$logs/guarded.stress" | head -20)" ]; then
    echo
    echo "first failure lines through guardfs:"
    grep -h 'fail:' "$logs/guarded.stress" | head -20
fi | tee -a "${report_file:-/dev/null}"

[ -z "$only_guarded" ] && [ "${g_git_failed:-1}" = 0 ] && [ "$alive" = yes ] &&
    [ "$fd_after" -le $((fd_before + entries_left)) ]

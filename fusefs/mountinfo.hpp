// /proc/self/mountinfo, parsed without iostreams: the reclaimer reads it on its own thread near
// the descriptor limit, so the text comes from an already open descriptor and the parse neither
// opens files nor throws.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace guardfs::fusefs {

struct MountEntry {
    std::string id;
    std::string parent;
    std::string mount_point; // unescaped (mountinfo writes space, tab, newline, \ as \ooo)
    std::string fstype;
};

// One entry per well-formed line; malformed lines are skipped.
std::vector<MountEntry> parse_mountinfo(std::string_view text);

// Whether closing a descriptor does nothing on every filesystem that serves `dir` or is mounted
// below it (ext2/3/4, xfs, btrfs, tmpfs, f2fs, zfs: none has a flush operation), so that passing
// FUSE's FLUSH on to the underlying file can report nothing. `dir` is a resolved absolute path;
// false when in doubt (no entry found, another type anywhere below).
bool close_is_noop_below(const std::vector<MountEntry>& mounts, const std::string& dir);

// The whole of the file behind `fd` (read from offset 0), or false if it could not be read.
bool read_all_at_start(int fd, std::string& out);

} // namespace guardfs::fusefs

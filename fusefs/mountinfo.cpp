// Parsing /proc/self/mountinfo; see mountinfo.hpp.
#include "fusefs/mountinfo.hpp"

#include "base/io.hpp"

#include <algorithm>

#include <unistd.h>

namespace guardfs::fusefs {

namespace {

std::string unescape(std::string_view s) {
    const auto oct = [](char c) {
        return c >= '0' && c <= '7';
    };
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 3 < s.size() && oct(s[i + 1]) && oct(s[i + 2]) && oct(s[i + 3])) {
            out += static_cast<char>(((s[i + 1] - '0') << 6) | ((s[i + 2] - '0') << 3) |
                                     (s[i + 3] - '0'));
            i += 3;
            continue;
        }
        out += s[i];
    }
    return out;
}

// The next space-separated field of `rest`, consumed from it; empty at the end.
std::string_view next_field(std::string_view& rest) {
    while (!rest.empty() && rest.front() == ' ') {
        rest.remove_prefix(1);
    }
    const std::size_t end = std::min(rest.find(' '), rest.size());
    const std::string_view field = rest.substr(0, end);
    rest.remove_prefix(end);
    return field;
}

} // namespace

std::vector<MountEntry> parse_mountinfo(std::string_view text) {
    std::vector<MountEntry> out;
    while (!text.empty()) {
        const std::size_t nl = std::min(text.find('\n'), text.size());
        const std::string_view line = text.substr(0, nl);
        text.remove_prefix(std::min(nl + 1, text.size()));

        // id parent major:minor root mount-point options [optional fields...] - fstype source ...
        std::string_view rest = line;
        MountEntry e;
        e.id = next_field(rest);
        e.parent = next_field(rest);
        next_field(rest); // major:minor
        next_field(rest); // root
        const std::string_view mnt = next_field(rest);
        const std::size_t dash = line.find(" - ");
        if (e.id.empty() || e.parent.empty() || mnt.empty() || dash == std::string_view::npos) {
            continue;
        }
        std::string_view after = line.substr(dash + 3);
        e.fstype = next_field(after);
        e.mount_point = unescape(mnt);
        out.push_back(std::move(e));
    }
    return out;
}

bool close_is_noop_below(const std::vector<MountEntry>& mounts, const std::string& dir) {
    static constexpr std::string_view kNoFlush[] = {"ext2",  "ext3",  "ext4", "xfs",
                                                    "btrfs", "tmpfs", "f2fs", "zfs"};
    const auto no_flush = [](const std::string& type) {
        return std::find(std::begin(kNoFlush), std::end(kNoFlush), type) != std::end(kNoFlush);
    };
    const auto below = [](const std::string& path, const std::string& top) { // or at
        if (path == top || top == "/") {
            return path.rfind(top, 0) == 0;
        }
        return path.rfind(top + "/", 0) == 0;
    };
    // The filesystem serving `dir`: the last-listed mount on its longest containing mount point.
    const MountEntry* serving = nullptr;
    for (const MountEntry& m : mounts) {
        if (below(dir, m.mount_point) &&
            (serving == nullptr || m.mount_point.size() >= serving->mount_point.size())) {
            serving = &m;
        }
    }
    if (serving == nullptr || !no_flush(serving->fstype)) {
        return false;
    }
    // Mounts strictly below `dir` (those on `dir` itself are the serving one or covered by it).
    return std::all_of(mounts.begin(), mounts.end(), [&](const MountEntry& m) {
        return m.mount_point == dir || !below(m.mount_point, dir) || no_flush(m.fstype);
    });
}

bool read_all_at_start(int fd, std::string& out) {
    out.clear();
    return fd >= 0 && ::lseek(fd, 0, SEEK_SET) == 0 && base::read_to_end(fd, out) == 0;
}

} // namespace guardfs::fusefs

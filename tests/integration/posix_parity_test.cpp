// POSIX parity with an empty policy (design §3, §9): with nothing guarded, guardfs must behave
// exactly like the filesystem under it. In the style of mergerfs's tests, over pjdfstest's
// categories: every scenario runs once on a native temporary directory and once on the mounted
// workspace and writes a transcript ("rename a b -> 0", "open f O_RDONLY -> ENOENT",
// "lstat f: reg 0644 uid=0 ..."). The transcripts must be equal line for line, and so must the
// trees seen through the mount and left on disk after unmounting. Each step also states what Linux
// answers, so a scenario that went wrong on both roots alike is still reported.
#include "support/mount_fixture.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

using namespace guardfs::test;

namespace {

using Transcript = std::vector<std::string>;

const char* const kEmptyPolicy = "recommended: false\nagent_config: false\ngit: false\n";
constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;

// ---- formatting ---------------------------------------------------------------------------------

std::string err_name(int e) {
    const char* name = ::strerrorname_np(e);
    return name != nullptr ? std::string(name) : "errno " + std::to_string(e);
}

std::string digest(std::string_view bytes) {
    std::uint64_t h = 1469598103934665603ULL; // FNV-1a
    for (const char ch : bytes) {
        h ^= static_cast<unsigned char>(ch);
        h *= 1099511628211ULL;
    }
    std::ostringstream o;
    o << std::hex << std::setw(16) << std::setfill('0') << h;
    return o.str();
}

// Bytes as a transcript shows them: quoted, with escapes, so that a line never holds a newline;
// long runs as their size and digest.
std::string q(std::string_view bytes) {
    if (bytes.size() > 64) {
        return "<" + std::to_string(bytes.size()) + " bytes, fnv " + digest(bytes) + ">";
    }
    std::string out = "'";
    for (const char ch : bytes) {
        const auto u = static_cast<unsigned char>(ch);
        if (u >= 0x20 && u < 0x7f && ch != '\\' && ch != '\'') {
            out += ch;
        } else {
            std::array<char, 8> buf{};
            std::snprintf(buf.data(), buf.size(), "\\x%02x", static_cast<unsigned>(u));
            out += buf.data();
        }
    }
    return out + "'";
}

std::string name_of(const std::string& rel) {
    return rel.size() > 48 ? "<" + std::to_string(rel.size()) + "-byte name>" : rel;
}

std::string octal(mode_t mode) {
    std::ostringstream o;
    o << std::oct << std::setw(4) << std::setfill('0') << (mode & 07777U);
    return o.str();
}

std::string type_name(mode_t mode) {
    switch (mode & S_IFMT) {
    case S_IFREG:
        return "reg";
    case S_IFDIR:
        return "dir";
    case S_IFLNK:
        return "lnk";
    case S_IFIFO:
        return "fifo";
    case S_IFCHR:
        return "chr";
    case S_IFBLK:
        return "blk";
    case S_IFSOCK:
        return "sock";
    default:
        return "unknown";
    }
}

std::string dtype_name(unsigned char type) {
    switch (type) {
    case DT_REG:
        return "reg";
    case DT_DIR:
        return "dir";
    case DT_LNK:
        return "lnk";
    case DT_FIFO:
        return "fifo";
    case DT_CHR:
        return "chr";
    case DT_BLK:
        return "blk";
    case DT_SOCK:
        return "sock";
    default:
        return "unknown";
    }
}

std::string flags_text(int flags) {
    const int acc = flags & O_ACCMODE;
    std::string s = acc == O_RDONLY ? "O_RDONLY" : acc == O_WRONLY ? "O_WRONLY" : "O_RDWR";
    const std::array<std::pair<int, const char*>, 7> named{{{O_CREAT, "O_CREAT"},
                                                            {O_EXCL, "O_EXCL"},
                                                            {O_TRUNC, "O_TRUNC"},
                                                            {O_APPEND, "O_APPEND"},
                                                            {O_DIRECTORY, "O_DIRECTORY"},
                                                            {O_NOFOLLOW, "O_NOFOLLOW"},
                                                            {O_NONBLOCK, "O_NONBLOCK"}}};
    for (const auto& [bit, name] : named) {
        if ((flags & bit) != 0) {
            s += "|";
            s += name;
        }
    }
    return s;
}

std::string id_text(unsigned id) {
    return id == static_cast<unsigned>(-1) ? std::string("-1") : std::to_string(id);
}

// The fields that must match: type, mode, owner, link count, size (and the device numbers).
std::string stat_text(const struct stat& st) {
    std::ostringstream o;
    o << type_name(st.st_mode) << ' ' << octal(st.st_mode) << " uid=" << st.st_uid
      << " gid=" << st.st_gid << " nlink=" << st.st_nlink << " size=" << st.st_size;
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
        o << " rdev=" << major(st.st_rdev) << ':' << minor(st.st_rdev);
    }
    return o.str();
}

// A time set by the test prints exactly; "recent" is anything from the last day (UTIME_NOW).
std::string time_text(const timespec& ts, time_t recent_floor) {
    if (ts.tv_sec >= recent_floor) {
        return "recent";
    }
    std::ostringstream o;
    o << ts.tv_sec << '.' << std::setw(9) << std::setfill('0') << ts.tv_nsec;
    return o.str();
}

std::string ts_arg(const timespec& ts) {
    if (ts.tv_nsec == UTIME_NOW) {
        return "NOW";
    }
    if (ts.tv_nsec == UTIME_OMIT) {
        return "OMIT";
    }
    return time_text(ts, 0);
}

std::string listing_text(std::vector<std::pair<std::string, std::string>> entries,
                         std::size_t duplicates, bool dots) {
    std::sort(entries.begin(), entries.end());
    std::string joined;
    for (const auto& [name, type] : entries) {
        if (!joined.empty()) {
            joined += ' ';
        }
        joined += name + ":" + type;
    }
    std::string text = entries.size() <= 24
                           ? (joined.empty() ? std::string("(empty)") : joined)
                           : std::to_string(entries.size()) + " entries, fnv " + digest(joined);
    if (duplicates != 0) {
        text += " duplicates=" + std::to_string(duplicates);
    }
    if (!dots) {
        text += " without . and ..";
    }
    return text;
}

// What list_dir() answers for these entries, each listed once, with "." and "..".
std::string expected_listing(std::vector<std::pair<std::string, std::string>> entries) {
    return listing_text(std::move(entries), 0, true);
}

std::string list_dir(const std::string& abs) {
    DIR* d = ::opendir(abs.c_str());
    if (d == nullptr) {
        return err_name(errno);
    }
    std::vector<std::pair<std::string, std::string>> entries;
    std::set<std::string> seen;
    std::size_t duplicates = 0;
    int dots = 0;
    std::string error;
    for (;;) {
        errno = 0;
        const dirent* e = ::readdir(d);
        if (e == nullptr) {
            if (errno != 0) {
                error = " readdir " + err_name(errno);
            }
            break;
        }
        const std::string name = e->d_name;
        if (name == "." || name == "..") {
            ++dots;
            continue;
        }
        if (!seen.insert(name).second) {
            ++duplicates;
            continue;
        }
        entries.emplace_back(name, dtype_name(e->d_type));
    }
    ::closedir(d);
    return listing_text(std::move(entries), duplicates, dots == 2) + error;
}

// The whole content of a file, or its errno name (unquoted, so it cannot pass for content).
std::string content_text(const std::string& abs) {
    const int fd = ::open(abs.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return err_name(errno);
    }
    std::string bytes;
    std::array<char, 65536> buf{};
    for (;;) {
        const ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n < 0) {
            const int e = errno;
            ::close(fd);
            return err_name(e);
        }
        if (n == 0) {
            break;
        }
        bytes.append(buf.data(), static_cast<std::size_t>(n));
    }
    ::close(fd);
    return q(bytes);
}

std::string readlink_text(const std::string& abs, std::size_t size = 8192) {
    std::string buf(size, '\0');
    const ssize_t n = ::readlink(abs.c_str(), buf.data(), buf.size());
    if (n < 0) {
        return err_name(errno);
    }
    return q(std::string_view(buf).substr(0, static_cast<std::size_t>(n)));
}

std::string xattr_list_text(const std::string& abs, bool follow) {
    std::array<char, 65536> names{};
    const ssize_t n = follow ? ::listxattr(abs.c_str(), names.data(), names.size())
                             : ::llistxattr(abs.c_str(), names.data(), names.size());
    if (n < 0) {
        return err_name(errno);
    }
    std::vector<std::string> sorted;
    for (ssize_t i = 0; i < n;) {
        sorted.emplace_back(names.data() + i);
        i += static_cast<ssize_t>(sorted.back().size()) + 1;
    }
    std::sort(sorted.begin(), sorted.end());
    std::string text;
    for (const auto& name : sorted) {
        text += text.empty() ? name : " " + name;
    }
    return text.empty() ? std::string("(none)") : text;
}

std::string xattr_value_text(const std::string& abs, const std::string& name, bool follow) {
    std::string buf(65536, '\0');
    const ssize_t n = follow ? ::getxattr(abs.c_str(), name.c_str(), buf.data(), buf.size())
                             : ::lgetxattr(abs.c_str(), name.c_str(), buf.data(), buf.size());
    if (n < 0) {
        return err_name(errno);
    }
    return q(std::string_view(buf).substr(0, static_cast<std::size_t>(n)));
}

// ---- one run of a scenario ----------------------------------------------------------------------

// Runs system calls below one root and records what they answered. A step names its expected
// answer: a difference is a failure of its own (reported even when both roots agree).
class Run {
public:
    explicit Run(std::string base)
        : base_(std::move(base))
        , recent_floor_(::time(nullptr) - 86400) {}

    Run(const Run&) = delete;
    Run& operator=(const Run&) = delete;

    ~Run() {
        for (const int fd : fds_) {
            ::close(fd);
        }
    }

    [[nodiscard]] std::string path(const std::string& rel) const {
        return rel.empty() ? base_ : base_ + "/" + rel;
    }

    [[nodiscard]] const Transcript& lines() const { return lines_; }

    [[nodiscard]] const std::vector<std::string>& failures() const { return failures_; }

    [[nodiscard]] time_t recent_floor() const { return recent_floor_; }

    // A call answering -1 and errno, or a number: "what -> 0", "what -> 5", "what -> ENOENT".
    template <class F>
    long call(const std::string& what, const std::string& want, F&& f) {
        errno = 0;
        const long v = static_cast<long>(f());
        const std::string got = v < 0 ? err_name(errno) : std::to_string(v);
        lines_.push_back(what + " -> " + got);
        if (got != want) {
            failures_.push_back(what + " -> " + got + ", expected " + want);
        }
        return v;
    }

    // A state: "what: got"; `want` (when given) must equal it.
    void note(const std::string& what, const std::string& got, const std::string& want = {}) {
        lines_.push_back(what + ": " + got);
        if (!want.empty() && got != want) {
            failures_.push_back(what + ": got " + got + ", expected " + want);
        }
    }

    // A state whose expectation is a prefix (a directory's size is the filesystem's business).
    void note_prefix(const std::string& what, const std::string& got, const std::string& want) {
        lines_.push_back(what + ": " + got);
        if (got.compare(0, want.size(), want) != 0) {
            failures_.push_back(what + ": got " + got + ", expected " + want + "...");
        }
    }

    // ---- descriptors

    int open(const std::string& rel, int flags, const std::string& want, mode_t mode = 0644) {
        const std::string p = path(rel);
        errno = 0;
        const int fd = ::open(p.c_str(), flags | O_CLOEXEC, mode);
        const std::string got = fd < 0 ? err_name(errno) : std::string("fd");
        std::string what = "open " + name_of(rel) + " " + flags_text(flags);
        if ((flags & O_CREAT) != 0) {
            what += " " + octal(mode);
        }
        lines_.push_back(what + " -> " + got);
        if (got != want) {
            failures_.push_back(what + " -> " + got + ", expected " + want);
        }
        if (fd >= 0) {
            fds_.push_back(fd);
        }
        return fd;
    }

    void open_close(const std::string& rel, int flags, const std::string& want,
                    mode_t mode = 0644) {
        const int fd = open(rel, flags, want, mode);
        if (fd >= 0) {
            forget(fd);
            ::close(fd);
        }
    }

    void close(const std::string& label, int fd) {
        forget(fd);
        call("close " + label, "0", [&] { return ::close(fd); });
    }

    long write(const std::string& label, int fd, std::string_view bytes, const std::string& want) {
        return call("write " + label + " " + q(bytes), want,
                    [&] { return ::write(fd, bytes.data(), bytes.size()); });
    }

    long pwrite(const std::string& label, int fd, std::string_view bytes, off_t off,
                const std::string& want) {
        return call("pwrite " + label + " " + q(bytes) + " at " + std::to_string(off), want,
                    [&] { return ::pwrite(fd, bytes.data(), bytes.size(), off); });
    }

    std::string read(const std::string& label, int fd, std::size_t n, const std::string& want) {
        std::string buf(n, '\0');
        errno = 0;
        const ssize_t got = ::read(fd, buf.data(), n);
        const std::string text =
            got < 0 ? err_name(errno)
                    : q(std::string_view(buf).substr(0, static_cast<std::size_t>(got)));
        note("read " + label + " " + std::to_string(n), text, want);
        return text;
    }

    std::string pread(const std::string& label, int fd, std::size_t n, off_t off,
                      const std::string& want) {
        std::string buf(n, '\0');
        errno = 0;
        const ssize_t got = ::pread(fd, buf.data(), n, off);
        const std::string text =
            got < 0 ? err_name(errno)
                    : q(std::string_view(buf).substr(0, static_cast<std::size_t>(got)));
        note("pread " + label + " " + std::to_string(n) + " at " + std::to_string(off), text, want);
        return text;
    }

    std::string fstat(const std::string& label, int fd, const std::string& want) {
        struct stat st {};

        const std::string got = ::fstat(fd, &st) == 0 ? stat_text(st) : err_name(errno);
        note_prefix("fstat " + label, got, want);
        return got;
    }

    std::string ftimes(const std::string& label, int fd, const std::string& want) {
        struct stat st {};

        const std::string got = ::fstat(fd, &st) == 0 ? times_text(st) : err_name(errno);
        note("fstat-times " + label, got, want);
        return got;
    }

    // ---- names

    // Creates or replaces a file with these bytes (open, write, close as one step).
    void put(const std::string& rel, std::string_view bytes, const std::string& want = "0") {
        call("put " + name_of(rel) + " " + q(bytes), want, [&]() -> long {
            const int fd =
                ::open(path(rel).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (fd < 0) {
                return -1;
            }
            const ssize_t n = ::write(fd, bytes.data(), bytes.size());
            const int e = errno;
            if (::close(fd) != 0) {
                return -1;
            }
            errno = e;
            return n == static_cast<ssize_t>(bytes.size()) ? 0 : -1;
        });
    }

    std::string cat(const std::string& rel, const std::string& want) {
        const std::string got = content_text(path(rel));
        note("cat " + name_of(rel), got, want);
        return got;
    }

    std::string lstat(const std::string& rel, const std::string& want) {
        return stat_of("lstat " + name_of(rel), rel, false, want);
    }

    std::string stat(const std::string& rel, const std::string& want) {
        return stat_of("stat " + name_of(rel), rel, true, want);
    }

    std::string times(const std::string& rel, bool follow, const std::string& want) {
        struct stat st {};

        const int rc = follow ? ::stat(path(rel).c_str(), &st) : ::lstat(path(rel).c_str(), &st);
        const std::string got = rc == 0 ? times_text(st) : err_name(errno);
        note(std::string(follow ? "stat-times " : "lstat-times ") + rel, got, want);
        return got;
    }

    // The modification time alone (reading a file, as the tree walk does, moves its atime).
    std::string mtime(const std::string& rel, const std::string& want) {
        struct stat st {};

        const std::string got = ::lstat(path(rel).c_str(), &st) == 0
                                    ? time_text(st.st_mtim, recent_floor_)
                                    : err_name(errno);
        note("mtime " + rel, got, want);
        return got;
    }

    std::string ls(const std::string& rel, const std::string& want) {
        const std::string got = list_dir(path(rel));
        note("ls " + (rel.empty() ? std::string(".") : rel), got, want);
        return got;
    }

    std::string readlink(const std::string& rel, const std::string& want) {
        const std::string got = readlink_text(path(rel));
        note("readlink " + name_of(rel), got, want);
        return got;
    }

    void same_inode(const std::string& a, const std::string& b, const std::string& want) {
        struct stat sa {};

        struct stat sb {};

        std::string got;
        if (::lstat(path(a).c_str(), &sa) != 0 || ::lstat(path(b).c_str(), &sb) != 0) {
            got = err_name(errno);
        } else {
            got = sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino ? "same" : "different";
        }
        note("inode of " + a + " and " + b, got, want);
    }

    std::string xattrs(const std::string& rel, bool follow, const std::string& want) {
        const std::string got = xattr_list_text(path(rel), follow);
        note(std::string(follow ? "listxattr " : "llistxattr ") + rel, got, want);
        return got;
    }

    std::string xattr(const std::string& rel, const std::string& name, bool follow,
                      const std::string& want) {
        const std::string got = xattr_value_text(path(rel), name, follow);
        note(std::string(follow ? "getxattr " : "lgetxattr ") + rel + " " + name, got, want);
        return got;
    }

    // ---- the calls that change names and metadata

    void mkdir(const std::string& rel, mode_t mode, const std::string& want) {
        call("mkdir " + name_of(rel) + " " + octal(mode), want,
             [&] { return ::mkdir(path(rel).c_str(), mode); });
    }

    void rmdir(const std::string& rel, const std::string& want) {
        call("rmdir " + name_of(rel), want, [&] { return ::rmdir(path(rel).c_str()); });
    }

    void unlink(const std::string& rel, const std::string& want) {
        call("unlink " + name_of(rel), want, [&] { return ::unlink(path(rel).c_str()); });
    }

    void rename(const std::string& from, const std::string& to, const std::string& want) {
        call("rename " + from + " " + to, want,
             [&] { return ::rename(path(from).c_str(), path(to).c_str()); });
    }

    void rename2(const std::string& from, const std::string& to, unsigned flags,
                 const std::string& flags_name, const std::string& want) {
        call("renameat2 " + from + " " + to + " " + flags_name, want, [&] {
            return ::syscall(SYS_renameat2, AT_FDCWD, path(from).c_str(), AT_FDCWD,
                             path(to).c_str(), flags);
        });
    }

    void link(const std::string& from, const std::string& to, const std::string& want) {
        call("link " + from + " " + to, want,
             [&] { return ::link(path(from).c_str(), path(to).c_str()); });
    }

    void symlink(const std::string& target, const std::string& rel, const std::string& want) {
        call("symlink " + name_of(rel) + " to " + q(target), want,
             [&] { return ::symlink(target.c_str(), path(rel).c_str()); });
    }

    void truncate(const std::string& rel, off_t size, const std::string& want) {
        call("truncate " + rel + " " + std::to_string(size), want,
             [&] { return ::truncate(path(rel).c_str(), size); });
    }

    void ftruncate(const std::string& label, int fd, off_t size, const std::string& want) {
        call("ftruncate " + label + " " + std::to_string(size), want,
             [&] { return ::ftruncate(fd, size); });
    }

    void chmod(const std::string& rel, mode_t mode, const std::string& want) {
        call("chmod " + rel + " " + octal(mode), want,
             [&] { return ::chmod(path(rel).c_str(), mode); });
    }

    void chown(const std::string& rel, uid_t uid, gid_t gid, const std::string& want) {
        call("chown " + rel + " " + id_text(uid) + ":" + id_text(gid), want,
             [&] { return ::chown(path(rel).c_str(), uid, gid); });
    }

    void lchown(const std::string& rel, uid_t uid, gid_t gid, const std::string& want) {
        call("lchown " + rel + " " + id_text(uid) + ":" + id_text(gid), want,
             [&] { return ::lchown(path(rel).c_str(), uid, gid); });
    }

    void utimens(const std::string& rel, const std::optional<std::array<timespec, 2>>& ts,
                 int flags, const std::string& want) {
        std::string what = "utimensat " + rel + " " +
                           (ts ? ts_arg((*ts)[0]) + " " + ts_arg((*ts)[1]) : std::string("NULL"));
        if ((flags & AT_SYMLINK_NOFOLLOW) != 0) {
            what += " AT_SYMLINK_NOFOLLOW";
        }
        call(what, want, [&] {
            return ::utimensat(AT_FDCWD, path(rel).c_str(), ts ? ts->data() : nullptr, flags);
        });
    }

    void mknod(const std::string& rel, mode_t mode, dev_t dev, const std::string& want) {
        call("mknod " + rel + " " + type_name(mode) + " " + octal(mode) + " " +
                 std::to_string(major(dev)) + ":" + std::to_string(minor(dev)),
             want, [&] { return ::mknod(path(rel).c_str(), mode, dev); });
    }

    void mkfifo(const std::string& rel, mode_t mode, const std::string& want) {
        call("mkfifo " + rel + " " + octal(mode), want,
             [&] { return ::mkfifo(path(rel).c_str(), mode); });
    }

private:
    std::string stat_of(const std::string& what, const std::string& rel, bool follow,
                        const std::string& want) {
        struct stat st {};

        const int rc = follow ? ::stat(path(rel).c_str(), &st) : ::lstat(path(rel).c_str(), &st);
        const std::string got = rc == 0 ? stat_text(st) : err_name(errno);
        note_prefix(what, got, want);
        return got;
    }

    [[nodiscard]] std::string times_text(const struct stat& st) const {
        return "atime=" + time_text(st.st_atim, recent_floor_) +
               " mtime=" + time_text(st.st_mtim, recent_floor_);
    }

    void forget(int fd) { fds_.erase(std::remove(fds_.begin(), fds_.end(), fd), fds_.end()); }

    std::string base_;
    time_t recent_floor_;
    Transcript lines_;
    std::vector<std::string> failures_;
    std::vector<int> fds_;
};

using Scenario = std::function<void(Run&)>;

struct Outcome {
    Transcript lines;
    std::vector<std::string> failures;
};

// Who runs a scenario: this process (root), or a child that became nobody:nogroup, or a child
// that stays root but gives up CAP_FSETID (its writes clear set-ID bits).
enum class Caller { Root, Nobody, RootWithoutFsetid };

// Gives up CAP_FSETID in this process (effective and permitted). 0 or an errno.
int drop_fsetid() {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    std::array<__user_cap_data_struct, _LINUX_CAPABILITY_U32S_3> data{};
    if (::syscall(SYS_capget, &header, data.data()) != 0) {
        return errno;
    }
    data[CAP_TO_INDEX(CAP_FSETID)].effective &= ~CAP_TO_MASK(CAP_FSETID);
    data[CAP_TO_INDEX(CAP_FSETID)].permitted &= ~CAP_TO_MASK(CAP_FSETID);
    return ::syscall(SYS_capset, &header, data.data()) == 0 ? 0 : errno;
}

Outcome perform(const std::string& base, const Scenario& scenario, Caller caller) {
    if (caller == Caller::Root) {
        Run r(base);
        scenario(r);
        return {r.lines(), r.failures()};
    }
    std::array<int, 2> pipe_fds{};
    REQUIRE(::pipe2(pipe_fds.data(), O_CLOEXEC) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(pipe_fds[0]);
        std::string out;
        {
            Run r(base);
            if (caller == Caller::RootWithoutFsetid) {
                if (const int err = drop_fsetid(); err != 0) {
                    out += "Fcannot drop CAP_FSETID: " + err_name(err) + "\n";
                } else {
                    scenario(r);
                }
            } else if (::setgroups(0, nullptr) != 0 || ::setgid(kNogroup) != 0 ||
                       ::setuid(kNobody) != 0) {
                out += "Fcannot become nobody: " + err_name(errno) + "\n";
            } else {
                scenario(r);
            }
            for (const auto& line : r.lines()) {
                out += "L" + line + "\n";
            }
            for (const auto& failure : r.failures()) {
                out += "F" + failure + "\n";
            }
        }
        std::size_t done = 0;
        while (done < out.size()) {
            const ssize_t n = ::write(pipe_fds[1], out.data() + done, out.size() - done);
            if (n <= 0) {
                ::_exit(1);
            }
            done += static_cast<std::size_t>(n);
        }
        ::_exit(0);
    }
    ::close(pipe_fds[1]);
    std::string in;
    std::array<char, 4096> buf{};
    for (;;) {
        const ssize_t n = ::read(pipe_fds[0], buf.data(), buf.size());
        if (n <= 0) {
            break;
        }
        in.append(buf.data(), static_cast<std::size_t>(n));
    }
    ::close(pipe_fds[0]);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    Outcome o;
    std::istringstream lines(in);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.empty()) {
            continue;
        }
        (line[0] == 'L' ? o.lines : o.failures).push_back(line.substr(1));
    }
    return o;
}

// Every entry below base, sorted, with type, mode, owner, links, size, content or link target,
// and extended attributes: what must be the same after the same scenario.
void walk(const std::string& base, const std::string& rel, Transcript& out) {
    const std::string abs = rel.empty() ? base : base + "/" + rel;
    const std::string shown = rel.empty() ? std::string(".") : rel;

    struct stat st {};

    if (::lstat(abs.c_str(), &st) != 0) {
        out.push_back(shown + ": " + err_name(errno));
        return;
    }
    std::string line = shown + ": " + stat_text(st);
    if (S_ISREG(st.st_mode)) {
        line += " " + content_text(abs);
    } else if (S_ISLNK(st.st_mode)) {
        line += " to " + readlink_text(abs);
    }
    const std::string names = xattr_list_text(abs, false);
    if (names != "(none)") {
        std::istringstream each(names);
        std::string name;
        while (each >> name) {
            line += " " + name + "=" + xattr_value_text(abs, name, false);
        }
    }
    out.push_back(line);
    if (!S_ISDIR(st.st_mode)) {
        return;
    }
    std::vector<std::string> children;
    if (DIR* d = ::opendir(abs.c_str()); d != nullptr) {
        while (const dirent* e = ::readdir(d)) {
            const std::string name = e->d_name;
            if (name != "." && name != "..") {
                children.push_back(name);
            }
        }
        ::closedir(d);
    } else {
        out.push_back(shown + ": opendir " + err_name(errno));
    }
    std::sort(children.begin(), children.end());
    for (const auto& child : children) {
        walk(base, rel.empty() ? child : rel + "/" + child, out);
    }
}

Transcript tree(const std::string& base) {
    Transcript out;
    walk(base, "", out);
    return out;
}

void report_failures(const std::string& where, const std::vector<std::string>& failures) {
    for (const auto& failure : failures) {
        FAIL_CHECK(where << ": " << failure);
    }
}

void compare_lines(const std::string& what, const Transcript& mounted, const Transcript& native) {
    INFO(what);
    CHECK(mounted.size() == native.size());
    const std::string none = "<no line>";
    const std::size_t n = std::max(mounted.size(), native.size());
    for (std::size_t i = 0; i < n; ++i) {
        const std::string& mounted_line = i < mounted.size() ? mounted[i] : none;
        const std::string& native_line = i < native.size() ? native[i] : none;
        INFO(what << ", line " << i + 1);
        CHECK(mounted_line == native_line);
    }
}

class UmaskGuard {
public:
    UmaskGuard() : old_(::umask(022)) {}

    UmaskGuard(const UmaskGuard&) = delete;
    UmaskGuard& operator=(const UmaskGuard&) = delete;

    ~UmaskGuard() { ::umask(old_); }

private:
    mode_t old_;
};

struct Parity {
    std::function<void(const std::string& base)> prepare; // as root, before mounting
    Scenario scenario;
    Scenario verify; // after the scenario: natively, and on the disk after unmounting
    Caller caller = Caller::Root;
    std::vector<std::string> mount_args;
};

// The helper every test uses: the scenario on a native directory and on the mounted workspace
// (both 0755, both prepared alike), then the transcripts and the trees compared.
void check_parity_with(const Parity& p, const std::vector<std::string>& more_args,
                       Transport transport) {
    const UmaskGuard umask_022;
    TempDir native;
    REQUIRE(::chmod(native.path().c_str(), 0755) == 0);
    if (p.prepare) {
        p.prepare(native.path());
    }
    const Outcome native_run = perform(native.path(), p.scenario, p.caller);
    const Transcript native_tree = tree(native.path());
    const Outcome native_verify =
        p.verify ? perform(native.path(), p.verify, Caller::Root) : Outcome{};

    MountSpec spec;
    spec.transport = transport;
    spec.policy_yaml = kEmptyPolicy;
    spec.extra_args = p.mount_args;
    spec.extra_args.insert(spec.extra_args.end(), more_args.begin(), more_args.end());
    spec.setup = [&p](const std::string& ws) {
        // The fixture's directory is 0700; another user must be able to reach the workspace.
        REQUIRE(::chmod(std::filesystem::path(ws).parent_path().c_str(), 0755) == 0);
        REQUIRE(::chmod(ws.c_str(), 0755) == 0);
        if (p.prepare) {
            p.prepare(ws);
        }
    };
    MountedGuard g(spec);
    const Outcome mounted_run = perform(g.ws(), p.scenario, p.caller);
    const Transcript mounted_tree = tree(g.ws());
    CHECK(g.unmount() == 0);
    const Transcript disk_tree = tree(g.ws());
    const Outcome disk_verify = p.verify ? perform(g.ws(), p.verify, Caller::Root) : Outcome{};

    report_failures("native", native_run.failures);
    report_failures("mounted", mounted_run.failures);
    compare_lines("transcript (mounted vs native)", mounted_run.lines, native_run.lines);
    compare_lines("tree through the mount (vs native)", mounted_tree, native_tree);
    compare_lines("tree on disk after unmounting (vs native)", disk_tree, native_tree);
    if (p.verify) {
        report_failures("native verify", native_verify.failures);
        report_failures("disk verify", disk_verify.failures);
        compare_lines("verify on disk after unmounting (vs native)", disk_verify.lines,
                      native_verify.lines);
    }
}

// Every scenario four times: with the page cache (-o no_passthrough) and with FUSE passthrough
// where the kernel offers it (the default, docs/decisions/011), each with requests on /dev/fuse
// and on FUSE over io_uring where the kernel offers it (docs/decisions/012).
void check_parity(const Parity& p) {
    SECTION("page cache, /dev/fuse") {
        check_parity_with(p, {"-o", "no_passthrough"}, Transport::DevFuse);
    }
    SECTION("passthrough, /dev/fuse") {
        check_parity_with(p, {}, Transport::DevFuse);
    }
    SECTION("page cache, io_uring") {
        check_parity_with(p, {"-o", "no_passthrough"}, Transport::Ring);
    }
    SECTION("passthrough, io_uring") {
        check_parity_with(p, {}, Transport::Ring);
    }
}

void check_parity(const Scenario& scenario) {
    Parity p;
    p.scenario = scenario;
    check_parity(p);
}

constexpr timespec at(time_t sec, long nsec = 0) {
    return timespec{sec, nsec};
}

std::array<timespec, 2> pair_of(timespec a, timespec m) {
    return {a, m};
}

std::string pattern(std::size_t n) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i) {
        s[i] = static_cast<char>('a' + static_cast<int>(i % 26));
    }
    return s;
}

} // namespace

// ---- open ---------------------------------------------------------------------------------------

TEST_CASE("open gives the same results and errors as the native filesystem",
          "[integration][posix]") {
    check_parity([](Run& r) {
        const int fd = r.open("f", O_WRONLY | O_CREAT | O_EXCL, "fd", 0666);
        r.write("f", fd, "hello", "5");
        r.close("f", fd);
        r.lstat("f", "reg 0644 uid=0 gid=0 nlink=1 size=5"); // the umask (022) applied
        r.open_close("f", O_RDONLY | O_CREAT | O_EXCL, "EEXIST");
        r.open_close("f", O_WRONLY | O_CREAT, "fd", 0600); // an existing file keeps its mode
        r.lstat("f", "reg 0644 uid=0 gid=0 nlink=1 size=5");
        r.open_close("missing", O_RDONLY, "ENOENT");
        r.open_close("missing/x", O_WRONLY | O_CREAT, "ENOENT");
        r.call("open of an empty path", "ENOENT", [] { return ::open("", O_RDONLY | O_CLOEXEC); });
        r.open_close("f/x", O_RDONLY, "ENOTDIR");
        r.open_close("f/x", O_WRONLY | O_CREAT, "ENOTDIR");
        r.open_close("f/", O_RDONLY, "ENOTDIR");
        r.open_close("f", O_RDONLY | O_DIRECTORY, "ENOTDIR");
        r.mkdir("d", 0755, "0");
        r.open_close("d", O_WRONLY, "EISDIR");
        r.open_close("d", O_RDWR, "EISDIR");
        r.open_close("d", O_WRONLY | O_CREAT, "EISDIR");
        r.open_close("d", O_RDONLY, "fd");
        r.open_close("d", O_RDONLY | O_DIRECTORY, "fd");
        r.open_close("d", O_RDONLY | O_CREAT | O_EXCL, "EEXIST");
        r.symlink("f", "lnk", "0");
        r.open_close("lnk", O_RDONLY | O_NOFOLLOW, "ELOOP");
        r.open_close("lnk", O_WRONLY | O_NOFOLLOW, "ELOOP");
        r.open_close("lnk", O_RDONLY | O_CREAT | O_EXCL, "EEXIST");
        r.cat("lnk", q("hello"));
        r.open_close(std::string(256, 'n'), O_WRONLY | O_CREAT, "ENAMETOOLONG");
        r.open_close(std::string(256, 'n'), O_RDONLY, "ENAMETOOLONG");
        r.open_close(std::string(255, 'm'), O_WRONLY | O_CREAT | O_EXCL, "fd");
        r.lstat(std::string(255, 'm'), "reg 0644 uid=0 gid=0 nlink=1 size=0");
        r.open_close("d/" + std::string(255, 'm'), O_WRONLY | O_CREAT, "fd", 0777);
        r.lstat("d/" + std::string(255, 'm'), "reg 0755 uid=0 gid=0 nlink=1 size=0");
        // O_CREAT through a dangling link creates the target; with O_EXCL it fails
        r.symlink("made-through-a-link", "dangling", "0");
        r.open_close("dangling", O_WRONLY | O_CREAT | O_EXCL, "EEXIST");
        r.lstat("made-through-a-link", "ENOENT");
        r.open_close("dangling", O_WRONLY | O_CREAT, "fd", 0640);
        r.lstat("made-through-a-link", "reg 0640 uid=0 gid=0 nlink=1 size=0");
        r.lstat("dangling", "lnk 0777 uid=0 gid=0 nlink=1 size=19");
        // O_TRUNC
        const int t = r.open("f", O_WRONLY | O_TRUNC, "fd");
        r.fstat("f", t, "reg 0644 uid=0 gid=0 nlink=1 size=0");
        r.write("f", t, "new", "3");
        r.close("f", t);
        r.cat("f", q("new"));
        r.open_close("f", O_RDONLY | O_TRUNC, "fd"); // Linux truncates even for O_RDONLY
        r.lstat("f", "reg 0644 uid=0 gid=0 nlink=1 size=0");
        // read on a write-only descriptor, write on a read-only one
        const int w = r.open("f", O_WRONLY, "fd");
        r.read("write-only f", w, 4, "EBADF");
        r.close("f", w);
        const int ro = r.open("f", O_RDONLY, "fd");
        r.write("read-only f", ro, "x", "EBADF");
        r.close("f", ro);
        r.ls("", expected_listing({{"d", "dir"},
                                   {"dangling", "lnk"},
                                   {"f", "reg"},
                                   {"lnk", "lnk"},
                                   {"made-through-a-link", "reg"},
                                   {std::string(255, 'm'), "reg"}}));
    });
}

// ---- mkdir --------------------------------------------------------------------------------------

TEST_CASE("mkdir gives the same results and errors as the native filesystem",
          "[integration][posix]") {
    check_parity([](Run& r) {
        r.lstat("", "dir 0755 uid=0 gid=0 nlink=2");
        r.mkdir("d", 0777, "0");
        r.lstat("d", "dir 0755 uid=0 gid=0 nlink=2");
        r.lstat("", "dir 0755 uid=0 gid=0 nlink=3");
        r.mkdir("d", 0755, "EEXIST");
        r.put("f", "x");
        r.mkdir("f", 0755, "EEXIST");
        r.symlink("d", "to-dir", "0");
        r.mkdir("to-dir", 0755, "EEXIST");
        r.symlink("nowhere", "dangling", "0");
        r.mkdir("dangling", 0755, "EEXIST");
        r.lstat("nowhere", "ENOENT");
        r.mkdir("missing/x", 0755, "ENOENT");
        r.mkdir("f/x", 0755, "ENOTDIR");
        r.mkdir("d/.", 0755, "EEXIST");
        r.call("mkdir of an empty path", "ENOENT", [] { return ::mkdir("", 0755); });
        r.mkdir(std::string(256, 'n'), 0755, "ENAMETOOLONG");
        r.mkdir("d/s1", 0700, "0");
        r.lstat("d/s1", "dir 0700 uid=0 gid=0 nlink=2");
        r.lstat("d", "dir 0755 uid=0 gid=0 nlink=3");
        r.mkdir("d/sticky", 01777, "0");
        r.lstat("d/sticky", "dir 1755 uid=0 gid=0 nlink=2");
        r.mkdir("d/sgid", 02777, "0"); // mkdir keeps S_ISGID only from a set-group-ID parent
        r.lstat("d/sgid", "dir 0755 uid=0 gid=0 nlink=2");
        r.mkdir("d/s1/../via-dotdot", 0755, "0");
        r.lstat("d/via-dotdot", "dir 0755 uid=0 gid=0 nlink=2");
        r.mkdir("to-dir/through-link", 0755, "0");
        r.lstat("d/through-link", "dir 0755 uid=0 gid=0 nlink=2");
        r.lstat("d", "dir 0755 uid=0 gid=0 nlink=7");
        // a set-group-ID directory hands its group and (to directories) its bit down
        r.mkdir("g", 0755, "0");
        r.chown("g", 0, 100, "0");
        r.chmod("g", 02775, "0");
        r.mkdir("g/sub", 0755, "0");
        r.lstat("g/sub", "dir 2755 uid=0 gid=100 nlink=2");
        r.open_close("g/file", O_WRONLY | O_CREAT, "fd", 0644);
        r.lstat("g/file", "reg 0644 uid=0 gid=100 nlink=1 size=0");
        r.ls("d", expected_listing({{"s1", "dir"},
                                    {"sticky", "dir"},
                                    {"sgid", "dir"},
                                    {"via-dotdot", "dir"},
                                    {"through-link", "dir"}}));
    });
}

// ---- rmdir --------------------------------------------------------------------------------------

TEST_CASE("rmdir gives the same results and errors as the native filesystem",
          "[integration][posix]") {
    check_parity([](Run& r) {
        r.mkdir("d", 0755, "0");
        r.mkdir("d/sub", 0755, "0");
        r.put("d/sub/f", "x");
        r.rmdir("d", "ENOTEMPTY");
        r.rmdir("d/sub", "ENOTEMPTY");
        r.rmdir("d/sub/f", "ENOTDIR");
        r.rmdir("d/sub/f/", "ENOTDIR");
        r.rmdir("missing", "ENOENT");
        r.rmdir("missing/x", "ENOENT");
        r.rmdir("d/.", "EINVAL");
        r.rmdir("d/..", "ENOTEMPTY");
        r.symlink("d", "link-to-dir", "0");
        r.rmdir("link-to-dir", "ENOTDIR");
        r.lstat("d", "dir 0755 uid=0 gid=0 nlink=3");
        r.unlink("d/sub/f", "0");
        r.rmdir("d/sub", "0");
        r.lstat("d/sub", "ENOENT");
        r.lstat("d", "dir 0755 uid=0 gid=0 nlink=2");
        r.rmdir("d/sub", "ENOENT");
        r.mkdir("d/sub", 0755, "0"); // the same name again
        r.lstat("d/sub", "dir 0755 uid=0 gid=0 nlink=2");
        r.rmdir("d/sub/", "0");
        r.rmdir("d", "0");
        r.lstat("", "dir 0755 uid=0 gid=0 nlink=2");
        r.ls("", expected_listing({{"link-to-dir", "lnk"}}));
        r.stat("link-to-dir", "ENOENT");
    });
}

// ---- unlink -------------------------------------------------------------------------------------

TEST_CASE("unlink gives the same results and errors as the native filesystem",
          "[integration][posix]") {
    check_parity([](Run& r) {
        r.mkdir("d", 0755, "0");
        r.unlink("d", "EISDIR");
        r.unlink("d/", "EISDIR");
        r.unlink("missing", "ENOENT");
        r.unlink("missing/x", "ENOENT");
        r.put("f", "data");
        r.unlink("f/x", "ENOTDIR");
        r.unlink("f/", "ENOTDIR");
        r.symlink("f", "l", "0");
        r.unlink("l", "0"); // the link, not its target
        r.lstat("l", "ENOENT");
        r.cat("f", q("data"));
        r.symlink("d", "ld", "0");
        r.unlink("ld", "0");
        r.lstat("d", "dir 0755 uid=0 gid=0 nlink=2");
        r.unlink("f", "0");
        r.lstat("f", "ENOENT");
        r.unlink("f", "ENOENT");
        r.put("f", "again"); // the same name again
        r.cat("f", q("again"));
        r.mkfifo("p", 0644, "0");
        r.unlink("p", "0");
        r.ls("", expected_listing({{"d", "dir"}, {"f", "reg"}}));
    });
}

// ---- rename -------------------------------------------------------------------------------------

TEST_CASE("rename replaces, refuses and exchanges like the native filesystem",
          "[integration][posix]") {
    check_parity([](Run& r) {
        r.put("a", "A");
        r.put("b", "B");
        r.rename("a", "b", "0"); // file over file
        r.lstat("a", "ENOENT");
        r.cat("b", q("A"));
        r.rename("b", "b", "0"); // onto itself
        r.cat("b", q("A"));
        r.link("b", "c", "0");
        r.rename("b", "c", "0"); // two names of one file: nothing happens
        r.lstat("b", "reg 0644 uid=0 gid=0 nlink=2 size=1");
        r.lstat("c", "reg 0644 uid=0 gid=0 nlink=2 size=1");
        r.rename("missing", "x", "ENOENT");
        r.rename("b", "missing/x", "ENOENT");
        r.rename("b/", "x", "ENOTDIR");
        r.rename("b", "c/x", "ENOTDIR");
        // directories
        r.mkdir("d1", 0755, "0");
        r.put("d1/x", "X");
        r.mkdir("d2", 0755, "0");
        r.rename("d1", "d2", "0"); // dir over an empty dir
        r.lstat("d1", "ENOENT");
        r.cat("d2/x", q("X"));
        r.mkdir("d3", 0755, "0");
        r.put("d3/y", "Y");
        r.mkdir("d4", 0755, "0");
        r.put("d4/z", "Z");
        r.rename("d3", "d4", "ENOTEMPTY");
        r.rename("b", "d4", "EISDIR");
        r.rename("d4", "b", "ENOTDIR");
        r.mkdir("d4/sub", 0755, "0");
        r.rename("d4", "d4/sub/inner", "EINVAL");
        r.rename("d4", "d4/sub", "EINVAL");
        r.rename("d4/sub", "d4", "ENOTEMPTY");
        r.rename("d4/.", "elsewhere", "EBUSY");
        r.cat("d4/z", q("Z"));
        // across directories
        r.rename("d2/x", "d4/sub/x2", "0");
        r.ls("d2", "(empty)");
        r.ls("d4/sub", expected_listing({{"x2", "reg"}}));
        r.lstat("d4", "dir 0755 uid=0 gid=0 nlink=3");
        r.rename("d2", "d4/sub/moved", "0");
        r.lstat("d4/sub", "dir 0755 uid=0 gid=0 nlink=3");
        r.lstat("", "dir 0755 uid=0 gid=0 nlink=4");
        r.rename("d4/sub/moved", "back", "0");
        r.lstat("d4/sub", "dir 0755 uid=0 gid=0 nlink=2");
        r.lstat("", "dir 0755 uid=0 gid=0 nlink=5");
        // renameat2 flags
        r.put("p", "P");
        r.put("q", "Q");
        r.rename2("p", "q", RENAME_NOREPLACE, "RENAME_NOREPLACE", "EEXIST");
        r.cat("q", q("Q"));
        r.cat("p", q("P"));
        r.rename2("p", "r", RENAME_NOREPLACE, "RENAME_NOREPLACE", "0");
        r.lstat("p", "ENOENT");
        r.cat("r", q("P"));
        r.rename2("r", "q", RENAME_EXCHANGE, "RENAME_EXCHANGE", "0");
        r.cat("r", q("Q"));
        r.cat("q", q("P"));
        r.rename2("q", "d3", RENAME_EXCHANGE, "RENAME_EXCHANGE", "0"); // a file and a dir
        r.lstat("q", "dir 0755 uid=0 gid=0 nlink=2");
        r.ls("q", expected_listing({{"y", "reg"}}));
        r.cat("d3", q("P"));
        r.rename2("q", "nothing", RENAME_EXCHANGE, "RENAME_EXCHANGE", "ENOENT");
        r.rename2("r", "d3", RENAME_NOREPLACE | RENAME_EXCHANGE, "RENAME_NOREPLACE|RENAME_EXCHANGE",
                  "EINVAL");
        r.rename2("q", "d4/sub", RENAME_EXCHANGE, "RENAME_EXCHANGE", "0"); // two dirs, two parents
        r.ls("q", expected_listing({{"x2", "reg"}}));
        r.ls("d4/sub", expected_listing({{"y", "reg"}}));
        r.ls("", expected_listing({{"b", "reg"},
                                   {"back", "dir"},
                                   {"c", "reg"},
                                   {"d3", "reg"},
                                   {"d4", "dir"},
                                   {"q", "dir"},
                                   {"r", "reg"}}));
    });
}

// ---- link ---------------------------------------------------------------------------------------

TEST_CASE("link counts and link errors match the native filesystem", "[integration][posix]") {
    check_parity([](Run& r) {
        r.put("f", "data");
        r.lstat("f", "reg 0644 uid=0 gid=0 nlink=1 size=4");
        r.link("f", "g", "0");
        r.lstat("f", "reg 0644 uid=0 gid=0 nlink=2 size=4");
        r.lstat("g", "reg 0644 uid=0 gid=0 nlink=2 size=4");
        r.same_inode("f", "g", "same");
        r.link("f", "g", "EEXIST");
        r.link("g", "f", "EEXIST");
        r.mkdir("d", 0755, "0");
        r.link("d", "dlink", "EPERM");
        r.link("f", "d", "EEXIST");
        r.link("missing", "x", "ENOENT");
        r.link("f", "missing/x", "ENOENT");
        r.link("f", "f/x", "ENOTDIR");
        // writing through one name is read through the other
        const int fd = r.open("g", O_WRONLY | O_APPEND, "fd");
        r.write("g", fd, "+", "1");
        r.close("g", fd);
        r.cat("f", q("data+"));
        r.unlink("g", "0");
        r.lstat("f", "reg 0644 uid=0 gid=0 nlink=1 size=5");
        r.link("f", "h", "0");
        r.link("h", "i", "0");
        r.lstat("f", "reg 0644 uid=0 gid=0 nlink=3 size=5");
        r.unlink("f", "0");
        r.lstat("h", "reg 0644 uid=0 gid=0 nlink=2 size=5");
        r.unlink("h", "0");
        r.lstat("i", "reg 0644 uid=0 gid=0 nlink=1 size=5");
        // link(2) does not follow a symbolic link; linkat with AT_SYMLINK_FOLLOW does
        r.symlink("i", "sl", "0");
        r.link("sl", "hl", "0");
        r.lstat("hl", "lnk 0777 uid=0 gid=0 nlink=2 size=1");
        r.readlink("hl", q("i"));
        r.call("linkat sl hf AT_SYMLINK_FOLLOW", "0", [&] {
            return ::linkat(AT_FDCWD, r.path("sl").c_str(), AT_FDCWD, r.path("hf").c_str(),
                            AT_SYMLINK_FOLLOW);
        });
        r.lstat("hf", "reg 0644 uid=0 gid=0 nlink=2 size=5");
        r.same_inode("hf", "i", "same");
        r.lstat("i", "reg 0644 uid=0 gid=0 nlink=2 size=5");
    });
}

TEST_CASE("a hard link across directories behaves like on the native filesystem",
          "[integration][posix]") {
    check_parity([](Run& r) {
        r.mkdir("a", 0755, "0");
        r.mkdir("b", 0755, "0");
        r.put("a/f", "one");
        r.link("a/f", "b/g", "0");
        r.lstat("a/f", "reg 0644 uid=0 gid=0 nlink=2 size=3");
        r.lstat("b/g", "reg 0644 uid=0 gid=0 nlink=2 size=3");
        r.same_inode("a/f", "b/g", "same");
        r.put("b/g", "two!");
        r.cat("a/f", q("two!"));
        r.lstat("a/f", "reg 0644 uid=0 gid=0 nlink=2 size=4");
        r.chmod("b/g", 0600, "0");
        r.lstat("a/f", "reg 0600 uid=0 gid=0 nlink=2 size=4");
        r.rename("b/g", "a/h", "0");
        r.ls("a", expected_listing({{"f", "reg"}, {"h", "reg"}}));
        r.ls("b", "(empty)");
        r.link("a/h", "b/back", "0");
        r.lstat("a/f", "reg 0600 uid=0 gid=0 nlink=3 size=4");
        r.unlink("a/f", "0");
        r.unlink("a/h", "0");
        r.lstat("b/back", "reg 0600 uid=0 gid=0 nlink=1 size=4");
        r.cat("b/back", q("two!"));
        r.rmdir("a", "0");
    });
}

// ---- symlink and readlink -----------------------------------------------------------------------

TEST_CASE("symlink and readlink keep the exact target like the native filesystem",
          "[integration][posix]") {
    check_parity([](Run& r) {
        r.put("f", "content");
        r.symlink("f", "l", "0");
        r.readlink("l", q("f"));
        r.lstat("l", "lnk 0777 uid=0 gid=0 nlink=1 size=1");
        r.stat("l", "reg 0644 uid=0 gid=0 nlink=1 size=7");
        r.cat("l", q("content"));
        r.symlink("../outside/x", "up", "0");
        r.readlink("up", q("../outside/x"));
        r.lstat("up", "lnk 0777 uid=0 gid=0 nlink=1 size=12");
        r.stat("up", "ENOENT"); // dangling
        r.symlink("/nonexistent/absolute/path", "abs", "0");
        r.readlink("abs", q("/nonexistent/absolute/path"));
        r.stat("abs", "ENOENT");
        r.symlink("./f/../f//", "odd", "0"); // kept as written, not normalized
        r.readlink("odd", q("./f/../f//"));
        r.stat("odd", "ENOTDIR");
        const std::string weird = std::string("sp ace\ttab\x01\xff") + "\xc3\xa9";
        r.symlink(weird, "weird", "0");
        r.readlink("weird", q(weird));
        const std::string long_target = std::string(4000, 'x') + "/" + std::string(94, 'y');
        r.symlink(long_target, "long", "0");
        r.readlink("long", q(long_target));
        r.lstat("long", "lnk 0777 uid=0 gid=0 nlink=1 size=4095");
        r.symlink(long_target + "z", "too-long", "ENAMETOOLONG");
        r.symlink("", "empty", "ENOENT");
        r.symlink("x", "l", "EEXIST");
        r.symlink("x", "missing/l", "ENOENT");
        r.readlink("f", "EINVAL");
        r.readlink("missing", "ENOENT");
        r.note("readlink abs into 4 bytes", readlink_text(r.path("abs"), 4), q("/non"));
        r.symlink("loop2", "loop1", "0");
        r.symlink("loop1", "loop2", "0");
        r.stat("loop1", "ELOOP");
        r.open_close("loop1", O_RDONLY, "ELOOP");
        r.lstat("loop1", "lnk 0777 uid=0 gid=0 nlink=1 size=5");
        r.mkdir("d", 0755, "0");
        r.put("d/inner", "in");
        r.symlink("d", "ld", "0");
        r.stat("ld", "dir 0755 uid=0 gid=0 nlink=2");
        r.lstat("ld", "lnk 0777 uid=0 gid=0 nlink=1 size=1");
        r.lstat("ld/", "dir 0755 uid=0 gid=0 nlink=2"); // a trailing slash follows
        r.ls("ld", expected_listing({{"inner", "reg"}}));
        r.cat("ld/inner", q("in"));
        r.symlink("../f", "d/up", "0");
        r.cat("d/up", q("content"));
        r.cat("ld/up", q("content"));
        r.symlink("ld/inner", "chain", "0");
        r.cat("chain", q("in"));
        r.unlink("f", "0");
        r.stat("l", "ENOENT"); // dangling now
        r.readlink("l", q("f"));
        r.put("l", "through"); // writing through a dangling link creates the target
        r.cat("f", q("through"));
        r.lstat("l", "lnk 0777 uid=0 gid=0 nlink=1 size=1");
    });
}

// ---- truncate -----------------------------------------------------------------------------------

TEST_CASE("truncate and ftruncate grow and shrink files like the native filesystem",
          "[integration][posix]") {
    check_parity([](Run& r) {
        r.put("f", "hello world");
        r.truncate("f", 5, "0");
        r.cat("f", q("hello"));
        r.lstat("f", "reg 0644 uid=0 gid=0 nlink=1 size=5");
        r.truncate("f", 8, "0");
        r.cat("f", q(std::string("hello\0\0\0", 8)));
        const int fd = r.open("f", O_RDWR, "fd");
        r.ftruncate("f", fd, 2, "0");
        r.fstat("f", fd, "reg 0644 uid=0 gid=0 nlink=1 size=2");
        r.pread("f", fd, 100, 0, q("he"));
        r.write("f", fd, "HE", "2");
        r.cat("f", q("HE"));
        r.ftruncate("f", fd, 10, "0");
        r.pwrite("f", fd, "Z", 12, "1");
        r.fstat("f", fd, "reg 0644 uid=0 gid=0 nlink=1 size=13");
        r.cat("f", q(std::string("HE") + std::string(10, '\0') + "Z"));
        // a cached write, then a truncate by name, then the descriptor again
        r.pwrite("f", fd, "abcdefghij", 0, "10");
        r.truncate("f", 4, "0");
        r.fstat("f", fd, "reg 0644 uid=0 gid=0 nlink=1 size=4");
        r.pread("f", fd, 100, 0, q("abcd"));
        r.truncate("f", 6, "0");
        r.pread("f", fd, 100, 0, q(std::string("abcd\0\0", 6)));
        r.truncate("f", 0, "0");
        r.fstat("f", fd, "reg 0644 uid=0 gid=0 nlink=1 size=0");
        r.pread("f", fd, 100, 0, q(""));
        r.truncate("f", 1 << 20, "0");
        r.lstat("f", "reg 0644 uid=0 gid=0 nlink=1 size=1048576");
        r.pread("f", fd, 2, (1 << 20) - 1, q(std::string(1, '\0')));
        r.ftruncate("f", fd, -1, "EINVAL");
        r.close("f", fd);
        r.truncate("f", -1, "EINVAL");
        r.mkdir("d", 0755, "0");
        r.truncate("d", 0, "EISDIR");
        r.truncate("missing", 0, "ENOENT");
        r.truncate("f/x", 0, "ENOTDIR");
        const int ro = r.open("f", O_RDONLY, "fd");
        r.ftruncate("read-only f", ro, 0, "EINVAL");
        r.close("f", ro);
        r.symlink("f", "l", "0");
        r.truncate("l", 3, "0"); // follows the link
        r.lstat("f", "reg 0644 uid=0 gid=0 nlink=1 size=3");
        r.lstat("l", "lnk 0777 uid=0 gid=0 nlink=1 size=1");
    });
}

// ---- chmod --------------------------------------------------------------------------------------

TEST_CASE("chmod sets every mode bit like the native filesystem", "[integration][posix]") {
    check_parity([](Run& r) {
        r.put("f", "x");
        for (const mode_t mode : {0600U, 0755U, 04755U, 02755U, 01644U, 07777U, 0U, 0644U}) {
            r.chmod("f", mode, "0");
            r.lstat("f", "reg " + octal(mode) + " uid=0 gid=0 nlink=1 size=1");
        }
        r.mkdir("d", 0755, "0");
        r.chmod("d", 01777, "0");
        r.lstat("d", "dir 1777 uid=0 gid=0 nlink=2");
        r.chmod("d", 02750, "0");
        r.lstat("d", "dir 2750 uid=0 gid=0 nlink=2");
        const int fd = r.open("f", O_RDONLY, "fd");
        r.call("fchmod f 0640", "0", [&] { return ::fchmod(fd, 0640); });
        r.fstat("f", fd, "reg 0640 uid=0 gid=0 nlink=1 size=1");
        r.close("f", fd);
        r.chmod("missing", 0644, "ENOENT");
        r.symlink("f", "l", "0");
        r.chmod("l", 0604, "0"); // follows the link
        r.lstat("f", "reg 0604 uid=0 gid=0 nlink=1 size=1");
        r.lstat("l", "lnk 0777 uid=0 gid=0 nlink=1 size=1");
        r.call("fchmodat l 0600 AT_SYMLINK_NOFOLLOW", "EOPNOTSUPP", [&] {
            return ::fchmodat(AT_FDCWD, r.path("l").c_str(), 0600, AT_SYMLINK_NOFOLLOW);
        });
        r.lstat("f", "reg 0604 uid=0 gid=0 nlink=1 size=1");
        // root writing to a set-user-ID file keeps the bit (CAP_FSETID)
        r.chmod("f", 04755, "0");
        const int w = r.open("f", O_WRONLY | O_APPEND, "fd");
        r.write("f", w, "y", "1");
        r.close("f", w);
        r.lstat("f", "reg 4755 uid=0 gid=0 nlink=1 size=2");
        // root opens a 0000 file for writing
        r.chmod("f", 0, "0");
        r.open_close("f", O_RDWR, "fd");
    });
}

// ---- chown --------------------------------------------------------------------------------------

TEST_CASE("chown as root changes owners and lchown leaves the link target alone",
          "[integration][posix]") {
    check_parity([](Run& r) {
        r.put("f", "x");
        r.chown("f", 1000, 1001, "0");
        r.lstat("f", "reg 0644 uid=1000 gid=1001 nlink=1 size=1");
        r.chown("f", static_cast<uid_t>(-1), 2002, "0");
        r.lstat("f", "reg 0644 uid=1000 gid=2002 nlink=1 size=1");
        r.chown("f", 3003, static_cast<gid_t>(-1), "0");
        r.lstat("f", "reg 0644 uid=3003 gid=2002 nlink=1 size=1");
        r.symlink("f", "l", "0");
        r.lchown("l", 4000, 4001, "0");
        r.lstat("l", "lnk 0777 uid=4000 gid=4001 nlink=1 size=1");
        r.lstat("f", "reg 0644 uid=3003 gid=2002 nlink=1 size=1"); // the target did not change
        r.chown("l", 5000, 5001, "0");                             // follows the link
        r.lstat("f", "reg 0644 uid=5000 gid=5001 nlink=1 size=1");
        r.lstat("l", "lnk 0777 uid=4000 gid=4001 nlink=1 size=1");
        r.call("fchownat l 6000:6001 AT_SYMLINK_NOFOLLOW", "0", [&] {
            return ::fchownat(AT_FDCWD, r.path("l").c_str(), 6000, 6001, AT_SYMLINK_NOFOLLOW);
        });
        r.lstat("l", "lnk 0777 uid=6000 gid=6001 nlink=1 size=1");
        r.lstat("f", "reg 0644 uid=5000 gid=5001 nlink=1 size=1");
        const int fd = r.open("f", O_RDONLY, "fd");
        r.call("fchown f 0:0", "0", [&] { return ::fchown(fd, 0, 0); });
        r.fstat("f", fd, "reg 0644 uid=0 gid=0 nlink=1 size=1");
        r.close("f", fd);
        // a change of owner clears set-user-ID and (group-executable) set-group-ID, even for root
        r.chmod("f", 06755, "0");
        r.chown("f", 7000, 7000, "0");
        r.lstat("f", "reg 0755 uid=7000 gid=7000 nlink=1 size=1");
        r.mkdir("d", 0755, "0");
        r.chmod("d", 02775, "0");
        r.chown("d", 8000, 8000, "0"); // not for a directory
        r.lstat("d", "dir 2775 uid=8000 gid=8000 nlink=2");
        r.chown("missing", 1, 1, "ENOENT");
        r.lchown("missing", 1, 1, "ENOENT");
    });
}

// ---- utimensat ----------------------------------------------------------------------------------

TEST_CASE("utimensat sets explicit, current and omitted times like the native filesystem",
          "[integration][posix]") {
    const timespec now{0, UTIME_NOW};
    const timespec omit{0, UTIME_OMIT};
    Parity p;
    p.scenario = [&](Run& r) {
        r.put("f", "x");
        r.utimens("f", pair_of(at(1000000000, 123456789), at(1100000000, 987654321)), 0, "0");
        r.times("f", false, "atime=1000000000.123456789 mtime=1100000000.987654321");
        r.utimens("f", pair_of(omit, at(1200000000, 5)), 0, "0");
        r.times("f", false, "atime=1000000000.123456789 mtime=1200000000.000000005");
        r.utimens("f", pair_of(at(1300000000), omit), 0, "0");
        r.times("f", false, "atime=1300000000.000000000 mtime=1200000000.000000005");
        r.utimens("f", pair_of(now, omit), 0, "0");
        r.times("f", false, "atime=recent mtime=1200000000.000000005");
        r.utimens("f", pair_of(at(1000000000), now), 0, "0");
        r.times("f", false, "atime=1000000000.000000000 mtime=recent");
        r.utimens("f", std::nullopt, 0, "0");
        r.times("f", false, "atime=recent mtime=recent");
        // on a symbolic link: AT_SYMLINK_NOFOLLOW changes the link, never the target
        r.put("t", "target");
        r.symlink("t", "l", "0");
        r.utimens("t", pair_of(at(1000000000), at(1000000001)), 0, "0");
        r.utimens("l", pair_of(at(1111111111, 1), at(1222222222, 2)), AT_SYMLINK_NOFOLLOW, "0");
        r.times("l", false, "atime=1111111111.000000001 mtime=1222222222.000000002");
        r.times("t", false, "atime=1000000000.000000000 mtime=1000000001.000000000");
        r.utimens("l", pair_of(omit, at(1333333333, 3)), AT_SYMLINK_NOFOLLOW, "0");
        r.times("l", false, "atime=1111111111.000000001 mtime=1333333333.000000003");
        r.times("t", false, "atime=1000000000.000000000 mtime=1000000001.000000000");
        r.utimens("l", pair_of(now, now), AT_SYMLINK_NOFOLLOW, "0");
        r.times("l", false, "atime=recent mtime=recent");
        r.times("t", false, "atime=1000000000.000000000 mtime=1000000001.000000000");
        // without the flag the target changes and the link does not (following the link reads
        // it, which moves its atime under relatime)
        r.utimens("l", pair_of(at(1400000000), at(1400000001)), AT_SYMLINK_NOFOLLOW, "0");
        r.utimens("l", pair_of(at(1050000000), at(1050000001)), 0, "0");
        r.times("t", false, "atime=1050000000.000000000 mtime=1050000001.000000000");
        r.times("l", false, "atime=recent mtime=1400000001.000000000");
        // through a descriptor
        const int fd = r.open("f", O_RDONLY, "fd");
        r.call("futimens f 1060000000 1060000001", "0", [&] {
            const std::array<timespec, 2> ts{at(1060000000), at(1060000001)};
            return ::futimens(fd, ts.data());
        });
        r.ftimes("f", fd, "atime=1060000000.000000000 mtime=1060000001.000000000");
        r.close("f", fd);
        r.mkdir("d", 0755, "0");
        r.utimens("d", pair_of(at(1070000000), at(1070000001)), 0, "0");
        r.times("d", false, "atime=1070000000.000000000 mtime=1070000001.000000000");
        r.utimens("missing", std::nullopt, 0, "ENOENT");
        r.utimens("f", pair_of(at(0, 1000000000), omit), 0, "EINVAL");
    };
    // The kernel caches attributes: the disk itself must hold the same times (modification
    // times: the tree walk through the mount reads every file and link, which moves atimes).
    p.verify = [](Run& r) {
        r.mtime("f", "1060000001.000000000");
        r.mtime("t", "1050000001.000000000");
        r.mtime("l", "1400000001.000000000");
        r.mtime("d", "1070000001.000000000");
    };
    check_parity(p);
}

// ---- mknod and mkfifo ---------------------------------------------------------------------------

TEST_CASE("mkfifo and mknod create the same kinds of node as the native filesystem",
          "[integration][posix]") {
    check_parity([](Run& r) {
        r.mkfifo("p", 0644, "0");
        r.lstat("p", "fifo 0644 uid=0 gid=0 nlink=1 size=0");
        r.mkfifo("p", 0644, "EEXIST");
        r.mkfifo("missing/p", 0644, "ENOENT");
        r.mknod("p2", S_IFIFO | 0600, 0, "0");
        r.lstat("p2", "fifo 0600 uid=0 gid=0 nlink=1 size=0");
        r.mknod("r", S_IFREG | 0640, 0, "0");
        r.lstat("r", "reg 0640 uid=0 gid=0 nlink=1 size=0");
        r.mknod("c", S_IFCHR | 0644, makedev(1, 3), "0");
        r.lstat("c", "chr 0644 uid=0 gid=0 nlink=1 size=0 rdev=1:3");
        r.mknod("b", S_IFBLK | 0600, makedev(7, 200), "0");
        r.lstat("b", "blk 0600 uid=0 gid=0 nlink=1 size=0 rdev=7:200");
        r.mknod("s", S_IFSOCK | 0755, 0, "0");
        r.lstat("s", "sock 0755 uid=0 gid=0 nlink=1 size=0");
        r.mknod("dir", S_IFDIR | 0755, 0, "EPERM");
        r.mknod("wide", S_IFIFO | 0777, 0, "0");
        r.lstat("wide", "fifo 0755 uid=0 gid=0 nlink=1 size=0"); // the umask
        // a FIFO carries data
        const int fd = r.open("p", O_RDWR | O_NONBLOCK, "fd");
        r.write("p", fd, "ping", "4");
        r.read("p", fd, 16, q("ping"));
        r.read("p", fd, 16, "EAGAIN");
        r.close("p", fd);
        r.ls("", expected_listing({{"b", "blk"},
                                   {"c", "chr"},
                                   {"p", "fifo"},
                                   {"p2", "fifo"},
                                   {"r", "reg"},
                                   {"s", "sock"},
                                   {"wide", "fifo"}}));
    });
}

// ---- an open, unlinked file ---------------------------------------------------------------------

TEST_CASE("an unlinked file stays usable through its open descriptor", "[integration][posix]") {
    check_parity([](Run& r) {
        const int fd = r.open("f", O_RDWR | O_CREAT, "fd", 0644);
        r.write("f", fd, "abc", "3");
        r.unlink("f", "0");
        r.lstat("f", "ENOENT");
        r.ls("", "(empty)");
        r.fstat("f", fd, "reg 0644 uid=0 gid=0 nlink=0 size=3");
        r.write("f", fd, "def", "3");
        r.pread("f", fd, 100, 0, q("abcdef"));
        r.fstat("f", fd, "reg 0644 uid=0 gid=0 nlink=0 size=6");
        r.ftruncate("f", fd, 4, "0");
        r.fstat("f", fd, "reg 0644 uid=0 gid=0 nlink=0 size=4");
        r.pread("f", fd, 100, 0, q("abcd"));
        r.call("fchmod f 0600", "0", [&] { return ::fchmod(fd, 0600); });
        r.fstat("f", fd, "reg 0600 uid=0 gid=0 nlink=0 size=4");
        r.call("fchown f 1000:1000", "0", [&] { return ::fchown(fd, 1000, 1000); });
        r.fstat("f", fd, "reg 0600 uid=1000 gid=1000 nlink=0 size=4");
        r.call("futimens f 1000000000 1000000001", "0", [&] {
            const std::array<timespec, 2> ts{at(1000000000), at(1000000001)};
            return ::futimens(fd, ts.data());
        });
        r.ftimes("f", fd, "atime=1000000000.000000000 mtime=1000000001.000000000");
        r.call("fsetxattr f user.k 'v'", "0", [&] { return ::fsetxattr(fd, "user.k", "v", 1, 0); });
        r.call("fgetxattr f user.k", "1", [&] {
            std::array<char, 16> buf{};
            return ::fgetxattr(fd, "user.k", buf.data(), buf.size());
        });
        r.call("fallocate f 0 8192", "0", [&] { return ::fallocate(fd, 0, 0, 8192); });
        r.fstat("f", fd, "reg 0600 uid=1000 gid=1000 nlink=0 size=8192");
        r.call("fsync f", "0", [&] { return ::fsync(fd); });
        r.close("f", fd);
        // the everyday temporary-file pattern: unlink while open, write, close
        const int tmp = r.open("tmp", O_RDWR | O_CREAT | O_EXCL, "fd", 0600);
        r.unlink("tmp", "0");
        r.write("tmp", tmp, "scratch", "7");
        r.pread("tmp", tmp, 16, 0, q("scratch"));
        r.close("tmp", tmp);
        // a file with a second name: the descriptor sees the link count drop
        r.put("g", "gee");
        const int g = r.open("g", O_RDWR, "fd");
        r.link("g", "h", "0");
        r.unlink("g", "0");
        r.fstat("g", g, "reg 0644 uid=0 gid=0 nlink=1 size=3");
        r.pwrite("g", g, "GEE", 0, "3");
        r.close("g", g);
        r.cat("h", q("GEE"));
        r.ls("", expected_listing({{"h", "reg"}}));
    });
}

// ---- directory listings -------------------------------------------------------------------------

TEST_CASE("directory listings hold the same names, each once, as the native filesystem",
          "[integration][posix]") {
    const auto name_in = [](const char* prefix, int i) {
        std::array<char, 96> buf{};
        std::snprintf(buf.data(), buf.size(), "%s-with-a-rather-long-name-%03d", prefix, i);
        return std::string(buf.data());
    };
    Parity p;
    p.prepare = [&](const std::string& base) {
        std::filesystem::create_directory(base + "/pre");
        for (int i = 0; i < 300; ++i) {
            write_file(base + "/pre/" + name_in("before-the-mount", i), "");
        }
    };
    p.scenario = [&](Run& r) {
        std::vector<std::pair<std::string, std::string>> pre;
        for (int i = 0; i < 300; ++i) {
            pre.emplace_back(name_in("before-the-mount", i), "reg");
        }
        r.ls("pre", expected_listing(pre));
        r.mkdir("many", 0755, "0");
        r.call("create 500 files in many (failures)", "0", [&] {
            long failed = 0;
            for (int i = 0; i < 500; ++i) {
                const int fd = ::open(r.path("many/" + name_in("through-the-mount", i)).c_str(),
                                      O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
                failed += fd < 0 ? 1 : 0;
                if (fd >= 0) {
                    ::close(fd);
                }
            }
            return failed;
        });
        std::vector<std::pair<std::string, std::string>> all;
        std::vector<std::pair<std::string, std::string>> odd;
        for (int i = 0; i < 500; ++i) {
            all.emplace_back(name_in("through-the-mount", i), "reg");
            if (i % 2 == 1) {
                odd.emplace_back(all.back());
            }
        }
        r.ls("many", expected_listing(all));
        r.call("unlink the even ones (failures)", "0", [&] {
            long failed = 0;
            for (int i = 0; i < 500; i += 2) {
                failed += ::unlink(r.path("many/" + name_in("through-the-mount", i)).c_str()) != 0
                              ? 1
                              : 0;
            }
            return failed;
        });
        r.ls("many", expected_listing(odd));
        // telldir after 100 entries, read the rest, seekdir back: the same rest again
        std::string replay = "opendir failed";
        if (DIR* d = ::opendir(r.path("many").c_str()); d != nullptr) {
            for (int i = 0; i < 100 && ::readdir(d) != nullptr; ++i) {
            }
            const long pos = ::telldir(d);
            std::vector<std::string> first;
            while (const dirent* e = ::readdir(d)) {
                first.emplace_back(e->d_name);
            }
            ::seekdir(d, pos);
            std::vector<std::string> second;
            while (const dirent* e = ::readdir(d)) {
                second.emplace_back(e->d_name);
            }
            ::rewinddir(d);
            std::size_t again = 0;
            while (::readdir(d) != nullptr) {
                ++again;
            }
            ::closedir(d);
            replay = (first == second ? "same " : "different ") + std::to_string(first.size()) +
                     " after rewind " + std::to_string(again);
        }
        r.note("telldir and seekdir on many", replay, "same 152 after rewind 252");
        // Two descriptors list many in turns, 512 bytes of getdents64 at a time, after a change
        // through the mount emptied the kernel's cached listing: each sees every name once.
        r.put("many/extra", "");
        r.note(
            "two descriptors listing many in turns",
            [&] {
                const int a = ::open(r.path("many").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                const int b = ::open(r.path("many").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (a < 0 || b < 0) {
                    return std::string("open failed");
                }
                std::array<std::map<std::string, int>, 2> seen;
                std::array<bool, 2> done{false, false};
                alignas(8) std::array<char, 512> buf{};
                std::string errors;
                while (!done[0] || !done[1]) {
                    for (std::size_t i = 0; i < 2; ++i) {
                        if (done[i]) {
                            continue;
                        }
                        const ssize_t n = ::getdents64(i == 0 ? a : b, buf.data(), buf.size());
                        if (n <= 0) {
                            done[i] = true;
                            errors += n < 0 ? " error " + err_name(errno) : "";
                            continue;
                        }
                        for (ssize_t at = 0; at < n;) {
                            const auto* e = reinterpret_cast<const dirent64*>(buf.data() + at);
                            ++seen[i][e->d_name];
                            at += e->d_reclen;
                        }
                    }
                }
                ::close(a);
                ::close(b);
                std::string out;
                for (const auto& names : seen) {
                    bool once = true;
                    for (const auto& [name, times] : names) {
                        once = once && times == 1;
                    }
                    out += std::to_string(names.size()) + (once ? " once, " : " REPEATED, ");
                }
                return out + (seen[0] == seen[1] ? "same names" : "DIFFERENT names") + errors;
            }(),
            "253 once, 253 once, same names");
        r.mkdir("mixed", 0755, "0");
        r.put("mixed/f", "");
        r.mkdir("mixed/d", 0755, "0");
        r.symlink("f", "mixed/l", "0");
        r.mkfifo("mixed/p", 0644, "0");
        r.ls("mixed", expected_listing({{"d", "dir"}, {"f", "reg"}, {"l", "lnk"}, {"p", "fifo"}}));
        r.ls("mixed/f", "ENOTDIR");
        r.ls("missing", "ENOENT");
        r.ls("mixed/d", "(empty)");
        // fsync and fdatasync of a directory descriptor (the daemon keeps no directory handle:
        // it opens the directory for the call).
        for (const bool data : {false, true}) {
            r.call(data ? "fdatasync of a directory" : "fsync of a directory", "0", [&] {
                const int fd = ::open(r.path("mixed").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0) {
                    return -1;
                }
                const int rc = data ? ::fdatasync(fd) : ::fsync(fd);
                const int err = errno;
                ::close(fd);
                errno = err;
                return rc;
            });
        }
        // A directory removed between opendir and its first readdir ends the listing at once,
        // as natively.
        r.mkdir("gone", 0755, "0");
        r.put("gone/f", "");
        r.note(
            "readdir of a directory removed after opendir",
            [&] {
                DIR* d = ::opendir(r.path("gone").c_str());
                if (d == nullptr) {
                    return "opendir " + err_name(errno);
                }
                const bool removed =
                    ::unlink(r.path("gone/f").c_str()) == 0 && ::rmdir(r.path("gone").c_str()) == 0;
                errno = 0;
                const dirent* e = ::readdir(d);
                std::string got = e != nullptr ? "entry " + std::string(e->d_name)
                                               : (errno == 0 ? "end" : "end " + err_name(errno));
                ::closedir(d);
                return (removed ? "" : "not removed, ") + got;
            }(),
            "end");
        r.ls("", expected_listing({{"many", "dir"}, {"mixed", "dir"}, {"pre", "dir"}}));
    };
    check_parity(p);
}

// ---- extended attributes ------------------------------------------------------------------------

TEST_CASE("extended attributes behave like on the native filesystem", "[integration][posix]") {
    check_parity([](Run& r) {
        r.put("f", "x");
        const auto set = [&r](const std::string& rel, const std::string& name,
                              const std::string& value, int flags, const std::string& flag_name,
                              const std::string& want) {
            r.call("setxattr " + rel + " " + name + " " + q(value) + " " + flag_name, want, [&] {
                return ::setxattr(r.path(rel).c_str(), name.c_str(), value.data(), value.size(),
                                  flags);
            });
        };
        r.xattrs("f", true, "(none)");
        set("f", "user.a", "1", 0, "0", "0");
        r.xattr("f", "user.a", true, q("1"));
        r.call("getxattr f user.a (size only)", "1",
               [&] { return ::getxattr(r.path("f").c_str(), "user.a", nullptr, 0); });
        r.call("getxattr f user.a into 0 bytes", "1", [&] {
            std::array<char, 1> buf{};
            return ::getxattr(r.path("f").c_str(), "user.a", buf.data(), 0);
        });
        set("f", "user.a", "22", XATTR_CREATE, "XATTR_CREATE", "EEXIST");
        r.xattr("f", "user.a", true, q("1"));
        set("f", "user.b", "2", XATTR_REPLACE, "XATTR_REPLACE", "ENODATA");
        set("f", "user.a", "22", XATTR_REPLACE, "XATTR_REPLACE", "0");
        r.xattr("f", "user.a", true, q("22"));
        r.call("getxattr f user.a into 1 byte", "ERANGE", [&] {
            std::array<char, 1> buf{};
            return ::getxattr(r.path("f").c_str(), "user.a", buf.data(), buf.size());
        });
        r.xattr("f", "user.missing", true, "ENODATA");
        set("f", "user.b", "", XATTR_CREATE, "XATTR_CREATE", "0");
        r.xattr("f", "user.b", true, q(""));
        set("f", "user.bin", std::string("a\0b", 3), 0, "0", "0");
        r.xattr("f", "user.bin", true, q(std::string("a\0b", 3)));
        set("f", "user.big", pattern(4000), 0, "0", "0");
        r.xattr("f", "user.big", true, q(pattern(4000)));
        set("f", "trusted.t", "root only", 0, "0", "0");
        r.xattrs("f", true, "trusted.t user.a user.b user.big user.bin");
        r.call("listxattr f (size only)", "42",
               [&] { return ::listxattr(r.path("f").c_str(), nullptr, 0); });
        r.call("listxattr f into 4 bytes", "ERANGE", [&] {
            std::array<char, 4> buf{};
            return ::listxattr(r.path("f").c_str(), buf.data(), buf.size());
        });
        r.call("removexattr f user.a", "0",
               [&] { return ::removexattr(r.path("f").c_str(), "user.a"); });
        r.call("removexattr f user.a", "ENODATA",
               [&] { return ::removexattr(r.path("f").c_str(), "user.a"); });
        r.xattr("f", "user.a", true, "ENODATA");
        r.xattrs("f", true, "trusted.t user.b user.big user.bin");
        set("f", "nonamespace", "v", 0, "0", "EOPNOTSUPP");
        set("missing", "user.a", "v", 0, "0", "ENOENT");
        // a directory, a link and the file behind it
        r.mkdir("d", 0755, "0");
        set("d", "user.dir", "dv", 0, "0", "0");
        r.xattr("d", "user.dir", true, q("dv"));
        r.symlink("f", "l", "0");
        r.xattr("l", "user.b", true, q(""));      // follows the link
        r.xattr("l", "user.b", false, "ENODATA"); // the link itself has none
        r.xattrs("l", false, "(none)");
        r.call("lsetxattr l user.x", "EPERM", // no user.* attributes on a link
               [&] { return ::lsetxattr(r.path("l").c_str(), "user.x", "1", 1, 0); });
        r.call("lsetxattr l trusted.x", "0",
               [&] { return ::lsetxattr(r.path("l").c_str(), "trusted.x", "1", 1, 0); });
        r.xattr("l", "trusted.x", false, q("1"));
        r.xattr("f", "trusted.x", true, "ENODATA");
        // through a descriptor
        const int fd = r.open("f", O_RDONLY, "fd");
        r.call("fsetxattr f user.fd", "0", [&] { return ::fsetxattr(fd, "user.fd", "F", 1, 0); });
        r.call("fgetxattr f user.fd", "1", [&] {
            std::array<char, 8> buf{};
            return ::fgetxattr(fd, "user.fd", buf.data(), buf.size());
        });
        r.call("fremovexattr f user.fd", "0", [&] { return ::fremovexattr(fd, "user.fd"); });
        r.close("f", fd);
        r.xattrs("f", true, "trusted.t user.b user.big user.bin");
    });
}

// ---- fallocate ----------------------------------------------------------------------------------

TEST_CASE("fallocate changes sizes and contents like the native filesystem",
          "[integration][posix]") {
    check_parity([](Run& r) {
        const int fd = r.open("f", O_RDWR | O_CREAT, "fd");
        r.call("fallocate f 0 0 8192", "0", [&] { return ::fallocate(fd, 0, 0, 8192); });
        r.fstat("f", fd, "reg 0644 uid=0 gid=0 nlink=1 size=8192");
        r.pread("f", fd, 8192, 0, q(std::string(8192, '\0')));
        r.call("fallocate f KEEP_SIZE 8192 8192", "0",
               [&] { return ::fallocate(fd, FALLOC_FL_KEEP_SIZE, 8192, 8192); });
        r.fstat("f", fd, "reg 0644 uid=0 gid=0 nlink=1 size=8192");
        std::string expected = pattern(8192);
        r.pwrite("f", fd, expected, 0, "8192");
        r.call("fallocate f PUNCH_HOLE|KEEP_SIZE 1024 2048", "0", [&] {
            return ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 1024, 2048);
        });
        expected.replace(1024, 2048, std::string(2048, '\0'));
        r.fstat("f", fd, "reg 0644 uid=0 gid=0 nlink=1 size=8192");
        r.pread("f", fd, 8192, 0, q(expected));
        r.call("fallocate f ZERO_RANGE 4096 1024", "0",
               [&] { return ::fallocate(fd, FALLOC_FL_ZERO_RANGE, 4096, 1024); });
        expected.replace(4096, 1024, std::string(1024, '\0'));
        r.pread("f", fd, 8192, 0, q(expected));
        r.call("fallocate f 0 10000 100", "0", [&] { return ::fallocate(fd, 0, 10000, 100); });
        r.fstat("f", fd, "reg 0644 uid=0 gid=0 nlink=1 size=10100");
        r.call("fallocate f 0 0 0", "EINVAL", [&] { return ::fallocate(fd, 0, 0, 0); });
        r.call("fallocate f 0 -1 10", "EINVAL", [&] { return ::fallocate(fd, 0, -1, 10); });
        r.call("fallocate f PUNCH_HOLE without KEEP_SIZE", "EOPNOTSUPP",
               [&] { return ::fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 10); });
        r.close("f", fd);
        r.cat("f", q(expected + std::string(10100 - 8192, '\0')));
        const int ro = r.open("f", O_RDONLY, "fd");
        r.call("fallocate read-only f", "EBADF", [&] { return ::fallocate(ro, 0, 0, 20000); });
        r.close("f", ro);
        r.lstat("f", "reg 0644 uid=0 gid=0 nlink=1 size=10100");
    });
}

// ---- SEEK_DATA and SEEK_HOLE --------------------------------------------------------------------

TEST_CASE("SEEK_DATA and SEEK_HOLE find the same data and holes as the native filesystem",
          "[integration][posix]") {
    check_parity([](Run& r) {
        const auto seeks = [&r](const std::string& label, int fd) {
            const auto seek = [&](const char* name, int whence, off_t off, const char* want) {
                r.call("lseek " + label + " " + name + " " + std::to_string(off), want,
                       [&] { return ::lseek(fd, off, whence); });
            };
            seek("SEEK_DATA", SEEK_DATA, 0, "0");
            seek("SEEK_HOLE", SEEK_HOLE, 0, "4096");
            seek("SEEK_DATA", SEEK_DATA, 4096, "1048576");
            seek("SEEK_HOLE", SEEK_HOLE, 1048576, "1052672");
            seek("SEEK_DATA", SEEK_DATA, 1052672, "ENXIO");
            seek("SEEK_HOLE", SEEK_HOLE, 2000000, "2000000");
            seek("SEEK_DATA", SEEK_DATA, 2097152, "ENXIO");
            seek("SEEK_HOLE", SEEK_HOLE, 2097152, "ENXIO");
            seek("SEEK_END", SEEK_END, 0, "2097152");
            seek("SEEK_SET", SEEK_SET, -1, "EINVAL");
        };
        // the descriptor that wrote the data, before anything was flushed
        const int fd = r.open("sparse", O_RDWR | O_CREAT, "fd");
        r.pwrite("sparse", fd, std::string(4096, 'a'), 0, "4096");
        r.pwrite("sparse", fd, std::string(4096, 'b'), 1048576, "4096");
        r.ftruncate("sparse", fd, 2097152, "0");
        seeks("sparse (writer)", fd);
        r.close("sparse", fd);
        // a new descriptor
        const int rd = r.open("sparse", O_RDONLY, "fd");
        seeks("sparse (reader)", rd);
        r.pread("sparse", rd, 4, 1048574, q(std::string("\0\0bb", 4)));
        r.close("sparse", rd);
        // a file without holes
        r.put("full", "0123456789");
        const int full = r.open("full", O_RDONLY, "fd");
        r.call("lseek full SEEK_DATA 3", "3", [&] { return ::lseek(full, 3, SEEK_DATA); });
        r.call("lseek full SEEK_HOLE 3", "10", [&] { return ::lseek(full, 3, SEEK_HOLE); });
        r.call("lseek full SEEK_DATA 10", "ENXIO", [&] { return ::lseek(full, 10, SEEK_DATA); });
        r.close("full", full);
    });
}

// ---- copy_file_range ----------------------------------------------------------------------------

TEST_CASE("copy_file_range copies the same bytes as the native filesystem",
          "[integration][posix]") {
    check_parity([](Run& r) {
        r.put("src", "0123456789");
        r.put("dst", "abcdefghij");
        const int in = r.open("src", O_RDONLY, "fd");
        const int out = r.open("dst", O_WRONLY, "fd");
        loff_t off_in = 2;
        loff_t off_out = 5;
        r.call("copy_file_range src at 2 to dst at 5, 3 bytes", "3",
               [&] { return ::copy_file_range(in, &off_in, out, &off_out, 3, 0); });
        r.note("offsets after the copy", std::to_string(off_in) + " " + std::to_string(off_out),
               "5 8");
        r.cat("dst", q("abcde234ij"));
        // with the descriptors' own positions
        r.call("lseek src 6", "6", [&] { return ::lseek(in, 6, SEEK_SET); });
        r.call("copy_file_range src to dst at their positions, 4 bytes", "4",
               [&] { return ::copy_file_range(in, nullptr, out, nullptr, 4, 0); });
        r.call("lseek src SEEK_CUR", "10", [&] { return ::lseek(in, 0, SEEK_CUR); });
        r.call("lseek dst SEEK_CUR", "4", [&] { return ::lseek(out, 0, SEEK_CUR); });
        r.cat("dst", q("6789e234ij"));
        // at the end of the source, and past the end of the destination
        off_in = 10;
        off_out = 0;
        r.call("copy_file_range src at 10 (its end)", "0",
               [&] { return ::copy_file_range(in, &off_in, out, &off_out, 5, 0); });
        off_in = 0;
        off_out = 12;
        r.call("copy_file_range src at 0 to dst at 12, 3 bytes", "3",
               [&] { return ::copy_file_range(in, &off_in, out, &off_out, 3, 0); });
        r.cat("dst", q(std::string("6789e234ij") + std::string(2, '\0') + "012"));
        r.lstat("dst", "reg 0644 uid=0 gid=0 nlink=1 size=15");
        r.call("copy_file_range with flags 1", "EINVAL",
               [&] { return ::copy_file_range(in, nullptr, out, nullptr, 1, 1); });
        const int ro = r.open("dst", O_RDONLY, "fd");
        r.call("copy_file_range into a read-only descriptor", "EBADF",
               [&] { return ::copy_file_range(in, nullptr, ro, nullptr, 1, 0); });
        r.close("dst (read-only)", ro);
        const int app = r.open("dst", O_WRONLY | O_APPEND, "fd");
        r.call("copy_file_range into an O_APPEND descriptor", "EBADF",
               [&] { return ::copy_file_range(in, nullptr, app, nullptr, 1, 0); });
        r.close("dst (append)", app);
        const int same = r.open("src", O_RDWR, "fd");
        loff_t a = 0;
        loff_t b = 2;
        r.call("copy_file_range overlapping within one file", "EINVAL",
               [&] { return ::copy_file_range(same, &a, same, &b, 5, 0); });
        a = 0;
        b = 20;
        r.call("copy_file_range within one file, apart", "5",
               [&] { return ::copy_file_range(same, &a, same, &b, 5, 0); });
        r.close("src (rw)", same);
        r.close("src", in);
        r.close("dst", out);
        r.cat("src", q(std::string("0123456789", 10) + std::string(10, '\0') + "01234"));
    });
}

// ---- statfs -------------------------------------------------------------------------------------

TEST_CASE("statfs reports the underlying filesystem", "[integration][posix]") {
    check_parity([](Run& r) {
        const auto text = [](const struct statvfs& s) {
            return "bsize=" + std::to_string(s.f_bsize) + " frsize=" + std::to_string(s.f_frsize) +
                   " blocks=" + std::to_string(s.f_blocks) + " files=" + std::to_string(s.f_files) +
                   " namemax=" + std::to_string(s.f_namemax);
        };
        struct statvfs s {};

        r.call("statvfs .", "0", [&] { return ::statvfs(r.path("").c_str(), &s); });
        const std::string whole = text(s);
        r.note("statvfs .", whole);
        r.note("statvfs . namemax", std::to_string(s.f_namemax), "255");
        r.put("f", "x");
        const int fd = r.open("f", O_RDONLY, "fd");
        struct statvfs fs {};

        r.call("fstatvfs f", "0", [&] { return ::fstatvfs(fd, &fs); });
        r.note("fstatvfs f is statvfs .", text(fs) == whole ? "yes" : text(fs), "yes");
        r.close("f", fd);
        r.call("statvfs missing", "ENOENT",
               [&] { return ::statvfs(r.path("missing").c_str(), &s); });
    });
}

// ---- O_APPEND -----------------------------------------------------------------------------------

TEST_CASE("O_APPEND writes always land at the end like on the native filesystem",
          "[integration][posix]") {
    check_parity([](Run& r) {
        r.put("f", "123");
        const int fa = r.open("f", O_WRONLY | O_APPEND, "fd");
        r.write("append", fa, "45", "2");
        r.call("lseek append SEEK_CUR", "5", [&] { return ::lseek(fa, 0, SEEK_CUR); });
        r.call("lseek append 0", "0", [&] { return ::lseek(fa, 0, SEEK_SET); });
        r.write("append", fa, "6", "1");
        r.cat("f", q("123456"));
        r.pwrite("append", fa, "7", 0, "1"); // Linux: pwrite on O_APPEND appends
        r.cat("f", q("1234567"));
        const int fw = r.open("f", O_WRONLY, "fd");
        r.write("plain", fw, "X", "1");
        r.cat("f", q("X234567"));
        r.write("append", fa, "8", "1");
        r.cat("f", q("X2345678"));
        r.call("lseek append SEEK_CUR", "8", [&] { return ::lseek(fa, 0, SEEK_CUR); });
        r.ftruncate("plain", fw, 2, "0");
        r.write("append", fa, "9", "1");
        r.cat("f", q("X29"));
        const int fb = r.open("f", O_RDWR | O_APPEND, "fd");
        r.write("append", fa, "a", "1");
        r.write("second append", fb, "b", "1");
        r.write("append", fa, "c", "1");
        r.read("second append (at its position)", fb, 16, q("c"));
        r.pread("second append", fb, 16, 0, q("X29abc"));
        r.close("append", fa);
        r.close("plain", fw);
        r.close("second append", fb);
        r.cat("f", q("X29abc"));
        r.lstat("f", "reg 0644 uid=0 gid=0 nlink=1 size=6");
        const int fc = r.open("new", O_WRONLY | O_CREAT | O_APPEND, "fd");
        r.write("new", fc, "first", "5");
        r.write("new", fc, "second", "6");
        r.close("new", fc);
        r.cat("new", q("firstsecond"));
    });
}

// ---- O_DIRECT -----------------------------------------------------------------------------------

namespace {

// Aligned blocks written and read back through descriptors opened O_DIRECT (until 15deb55 the
// daemon opened its own descriptor O_DIRECT too, which took no data read from /dev/fuse:
// docs/decisions/013). Sizes: below two pages, two pages, and more. Offsets and buffers aligned:
// natively anything else fails EINVAL, through the mount it succeeds.
void direct_io(Run& r, const std::string& rel, int open_flags) {
    const int fd = r.open(rel, open_flags | O_DIRECT, "fd");
    for (const std::size_t n : {std::size_t{4096}, std::size_t{8192}, std::size_t{262144}}) {
        std::unique_ptr<char, decltype(&std::free)> out(
            static_cast<char*>(std::aligned_alloc(4096, n)), &std::free);
        std::unique_ptr<char, decltype(&std::free)> in(
            static_cast<char*>(std::aligned_alloc(4096, n)), &std::free);
        REQUIRE(out);
        REQUIRE(in);
        for (std::size_t i = 0; i < n; ++i) {
            out.get()[i] = static_cast<char>('a' + static_cast<int>((i * 7 + n) % 26));
        }
        const auto off = static_cast<off_t>(n);
        const std::string what = " O_DIRECT " + rel + " " + std::to_string(n);
        r.call("pwrite" + what, std::to_string(n), [&] { return ::pwrite(fd, out.get(), n, off); });
        r.call("pread" + what, std::to_string(n), [&] { return ::pread(fd, in.get(), n, off); });
        r.note("read back" + what, std::memcmp(in.get(), out.get(), n) == 0 ? "same" : "differs",
               "same");
    }
    r.close(rel, fd);
}

void prepare_direct_files(const std::string& base) {
    write_file(base + "/plain", "", 0666);
    write_file(base + "/setid", "", 06777);
}

} // namespace

TEST_CASE("O_DIRECT reads and writes of aligned blocks behave as on the native filesystem",
          "[integration][posix]") {
    Parity p;
    p.prepare = prepare_direct_files;
    p.scenario = [](Run& r) {
        direct_io(r, "plain", O_RDWR);
        direct_io(r, "setid", O_RDWR); // root keeps the set-ID bits
        direct_io(r, "new", O_RDWR | O_CREAT);
        r.lstat("setid", "reg 6777 uid=0 gid=0 nlink=1 size=524288");
    };
    check_parity(p);
}

TEST_CASE("an O_DIRECT write by another user clears set-ID bits like the native filesystem",
          "[integration][posix]") {
    Parity p;
    p.mount_args = {"-o", "allow_other"};
    p.caller = Caller::Nobody;
    p.prepare = prepare_direct_files;
    p.scenario = [](Run& r) {
        direct_io(r, "setid", O_RDWR);
        r.lstat("setid", "reg 0777 uid=0 gid=0 nlink=1 size=524288");
        direct_io(r, "plain", O_RDWR);
    };
    check_parity(p);
}

// ---- a tree made before mounting ----------------------------------------------------------------

TEST_CASE("a tree made before mounting reads the same through the mount", "[integration][posix]") {
    Parity p;
    p.prepare = [](const std::string& base) {
        std::filesystem::create_directories(base + "/a/b/c");
        write_file(base + "/a/file", "file", 0640);
        write_file(base + "/a/b/c/deep", std::string("deep\0bytes", 10), 0755);
        write_file(base + "/setuid", "s", 04755);
        REQUIRE(::link((base + "/a/file").c_str(), (base + "/a/b/hard").c_str()) == 0);
        REQUIRE(::symlink("../file", (base + "/a/b/up").c_str()) == 0);
        REQUIRE(::symlink("/nonexistent", (base + "/dangling").c_str()) == 0);
        REQUIRE(::mkfifo((base + "/fifo").c_str(), 0600) == 0);
        REQUIRE(::chown((base + "/a/b").c_str(), 1234, 5678) == 0);
        REQUIRE(::lchown((base + "/dangling").c_str(), 42, 43) == 0);
        REQUIRE(::setxattr((base + "/a/file").c_str(), "user.note", "n", 1, 0) == 0);
        REQUIRE(::chmod((base + "/a/b/c").c_str(), 0700) == 0);
        const std::array<timespec, 2> ts{at(1000000000), at(1000000001)};
        REQUIRE(::utimensat(AT_FDCWD, (base + "/a/file").c_str(), ts.data(), 0) == 0);
    };
    p.scenario = [](Run& r) {
        r.ls("", expected_listing(
                     {{"a", "dir"}, {"dangling", "lnk"}, {"fifo", "fifo"}, {"setuid", "reg"}}));
        r.ls("a", expected_listing({{"b", "dir"}, {"file", "reg"}}));
        r.ls("a/b", expected_listing({{"c", "dir"}, {"hard", "reg"}, {"up", "lnk"}}));
        r.times("a/file", false, "atime=1000000000.000000000 mtime=1000000001.000000000");
        r.lstat("a/file", "reg 0640 uid=0 gid=0 nlink=2 size=4");
        r.lstat("a/b", "dir 0755 uid=1234 gid=5678 nlink=3");
        r.lstat("a/b/c", "dir 0700 uid=0 gid=0 nlink=2");
        r.lstat("a/b/c/deep", "reg 0755 uid=0 gid=0 nlink=1 size=10");
        r.lstat("setuid", "reg 4755 uid=0 gid=0 nlink=1 size=1");
        r.lstat("dangling", "lnk 0777 uid=42 gid=43 nlink=1 size=12");
        r.lstat("fifo", "fifo 0600 uid=0 gid=0 nlink=1 size=0");
        r.same_inode("a/file", "a/b/hard", "same");
        r.cat("a/b/up", q("file"));
        r.cat("a/b/c/deep", q(std::string("deep\0bytes", 10)));
        r.readlink("dangling", q("/nonexistent"));
        r.stat("dangling", "ENOENT");
        r.xattr("a/file", "user.note", true, q("n"));
    };
    check_parity(p);
}

// ---- another user (allow_other) -----------------------------------------------------------------

TEST_CASE("permissions and new owners for another user match the native filesystem",
          "[integration][posix]") {
    const bool protected_hardlinks = read_file("/proc/sys/fs/protected_hardlinks") == "1\n";
    Parity p;
    p.mount_args = {"-o", "allow_other"};
    p.caller = Caller::Nobody;
    p.prepare = [](const std::string& base) {
        write_file(base + "/ro.txt", "data", 0644);
        write_file(base + "/secret.txt", "s", 0600);
        write_file(base + "/shared.txt", "", 0666);
        std::filesystem::create_directory(base + "/open");
        REQUIRE(::chmod((base + "/open").c_str(), 0777) == 0);
        write_file(base + "/open/rootfile", "r", 0644);
        std::filesystem::create_directory(base + "/sticky");
        REQUIRE(::chmod((base + "/sticky").c_str(), 01777) == 0);
        write_file(base + "/sticky/rootfile", "r", 0666);
    };
    p.scenario = [protected_hardlinks](Run& r) {
        // a root-owned 0644 file and a root-owned 0755 directory
        r.open_close("ro.txt", O_WRONLY, "EACCES");
        r.open_close("ro.txt", O_RDWR, "EACCES");
        r.open_close("ro.txt", O_RDONLY | O_TRUNC, "EACCES");
        r.cat("ro.txt", q("data"));
        r.open_close("secret.txt", O_RDONLY, "EACCES");
        r.truncate("ro.txt", 0, "EACCES");
        r.call("access ro.txt W_OK", "EACCES",
               [&] { return ::access(r.path("ro.txt").c_str(), W_OK); });
        r.call("access ro.txt R_OK", "0", [&] { return ::access(r.path("ro.txt").c_str(), R_OK); });
        r.chmod("ro.txt", 0666, "EPERM");
        r.chown("ro.txt", kNobody, kNogroup, "EPERM");
        r.call("setxattr ro.txt user.x", "EACCES",
               [&] { return ::setxattr(r.path("ro.txt").c_str(), "user.x", "1", 1, 0); });
        r.utimens("shared.txt", std::nullopt, 0, "0"); // "now" needs write permission only
        r.utimens("shared.txt", pair_of(at(1000000000), at(1000000000)), 0, "EPERM");
        r.open_close("new.txt", O_WRONLY | O_CREAT, "EACCES");
        r.mkdir("newdir", 0755, "EACCES");
        r.symlink("ro.txt", "newlink", "EACCES");
        r.mkfifo("newfifo", 0644, "EACCES");
        r.unlink("ro.txt", "EACCES");
        r.rename("ro.txt", "open/stolen", "EACCES");
        r.link("ro.txt", "open/hard", protected_hardlinks ? "EPERM" : "0");
        // a 0777 directory: new entries belong to the caller
        const int fd = r.open("open/mine", O_WRONLY | O_CREAT | O_EXCL, "fd", 0644);
        r.fstat("open/mine", fd, "reg 0644 uid=65534 gid=65534 nlink=1 size=0");
        r.write("open/mine", fd, "1", "1");
        r.close("open/mine", fd);
        r.lstat("open/mine", "reg 0644 uid=65534 gid=65534 nlink=1 size=1");
        r.mkdir("open/mydir", 0777, "0");
        r.lstat("open/mydir", "dir 0755 uid=65534 gid=65534 nlink=2");
        r.open_close("open/mydir/nested", O_WRONLY | O_CREAT, "fd", 0600);
        r.lstat("open/mydir/nested", "reg 0600 uid=65534 gid=65534 nlink=1 size=0");
        r.symlink("mine", "open/mylink", "0");
        r.lstat("open/mylink", "lnk 0777 uid=65534 gid=65534 nlink=1 size=4");
        r.mkfifo("open/myfifo", 0640, "0");
        r.lstat("open/myfifo", "fifo 0640 uid=65534 gid=65534 nlink=1 size=0");
        r.mknod("open/myreg", S_IFREG | 0600, 0, "0");
        r.lstat("open/myreg", "reg 0600 uid=65534 gid=65534 nlink=1 size=0");
        r.open_close("open/setid", O_WRONLY | O_CREAT | O_EXCL, "fd", 06755);
        r.lstat("open/setid", "reg 6755 uid=65534 gid=65534 nlink=1 size=0");
        r.link("open/mine", "open/mine2", "0");
        r.lstat("open/mine2", "reg 0644 uid=65534 gid=65534 nlink=2 size=1");
        // what an owner may and may not do
        r.chown("open/mine", 0, 0, "EPERM");
        r.chown("open/mine", kNobody, kNogroup, "0");
        r.chmod("open/mine", 0600, "0");
        r.lstat("open/mine", "reg 0600 uid=65534 gid=65534 nlink=2 size=1");
        r.utimens("open/mine", pair_of(at(1000000000), at(1000000001)), 0, "0");
        r.times("open/mine", false, "atime=1000000000.000000000 mtime=1000000001.000000000");
        r.call("setxattr open/mine user.x", "0",
               [&] { return ::setxattr(r.path("open/mine").c_str(), "user.x", "1", 1, 0); });
        r.rename("open/mine2", "open/renamed", "0");
        r.lstat("open/renamed", "reg 0600 uid=65534 gid=65534 nlink=2 size=1");
        r.unlink("open/rootfile", "0"); // a writable, non-sticky directory
        r.cat("open/renamed", q("1"));
        // a sticky directory protects other users' entries
        r.unlink("sticky/rootfile", "EPERM");
        r.rename("sticky/rootfile", "sticky/moved", "EPERM");
        r.put("sticky/rootfile", "w"); // 0666: writing is allowed
        r.open_close("sticky/mine", O_WRONLY | O_CREAT | O_EXCL, "fd");
        r.lstat("sticky/mine", "reg 0644 uid=65534 gid=65534 nlink=1 size=0");
        r.unlink("sticky/mine", "0");
    };
    check_parity(p);
}

// ---- set-user-ID and set-group-ID after writes ------------------------------------------------

namespace {

// Root-owned, world-writable files with both set-ID bits, for the two tests below.
void prepare_setid_files(const std::string& base) {
    for (const char* name : {"write", "append", "truncate", "ftruncate", "otrunc", "creat-trunc",
                             "fallocate", "copy", "opened", "chown"}) {
        write_file(base + "/" + name, "data", 06777);
    }
    write_file(base + "/suid-only", "data", 04777);
    write_file(base + "/sgid-nox", "data", 02766); // set-group-ID without group execute
    write_file(base + "/src", "copy", 0644);
}

// What each caller does to them; `mode` is what a file with both bits is left with.
void write_setid_files(Run& r, const std::string& mode) {
    const std::string after = "reg " + mode + " uid=0 gid=0 nlink=1 size=";
    int fd = r.open("write", O_WRONLY, "fd");
    r.write("write", fd, "x", "1");
    r.close("write", fd);
    r.lstat("write", after + "4");
    fd = r.open("append", O_WRONLY | O_APPEND, "fd");
    r.write("append", fd, "x", "1");
    r.close("append", fd);
    r.lstat("append", after + "5");
    r.truncate("truncate", 2, "0");
    r.lstat("truncate", after + "2");
    fd = r.open("ftruncate", O_WRONLY, "fd");
    r.ftruncate("ftruncate", fd, 1, "0");
    r.close("ftruncate", fd);
    r.lstat("ftruncate", after + "1");
    r.open_close("otrunc", O_WRONLY | O_TRUNC, "fd");
    r.lstat("otrunc", after + "0");
    r.open_close("creat-trunc", O_WRONLY | O_CREAT | O_TRUNC, "fd");
    r.lstat("creat-trunc", after + "0");
    fd = r.open("fallocate", O_WRONLY, "fd");
    r.call("fallocate fallocate 0 0 8192", "0", [&] { return ::fallocate(fd, 0, 0, 8192); });
    r.close("fallocate", fd);
    r.lstat("fallocate", after + "8192");
    const int in = r.open("src", O_RDONLY, "fd");
    fd = r.open("copy", O_WRONLY, "fd");
    r.call("copy_file_range src to copy", "4",
           [&] { return ::copy_file_range(in, nullptr, fd, nullptr, 4, 0); });
    r.close("copy", fd);
    r.close("src", in);
    r.cat("copy", q("copy"));
    r.lstat("copy", after + "4");
    // opened for writing, nothing written: the bits stay
    r.open_close("opened", O_RDWR, "fd");
    r.lstat("opened", "reg 6777 uid=0 gid=0 nlink=1 size=4");
    fd = r.open("suid-only", O_WRONLY, "fd");
    r.write("suid-only", fd, "x", "1");
    r.close("suid-only", fd);
    r.lstat("suid-only",
            "reg " + std::string(mode == "6777" ? "4777" : "0777") + " uid=0 gid=0 nlink=1 size=4");
    // Without group execute, set-group-ID is kept or cleared by rules that changed across kernel
    // versions (it is cleared for a writer outside the group since 6.x): the same as natively.
    fd = r.open("sgid-nox", O_WRONLY, "fd");
    r.write("sgid-nox", fd, "x", "1");
    r.close("sgid-nox", fd);
    r.lstat("sgid-nox", "");
}

} // namespace

TEST_CASE("a write by another user clears set-user-ID and set-group-ID like the native filesystem",
          "[integration][posix]") {
    Parity p;
    p.mount_args = {"-o", "allow_other"};
    p.caller = Caller::Nobody;
    p.prepare = prepare_setid_files;
    p.scenario = [](Run& r) {
        write_setid_files(r, "0777");
    };
    check_parity(p);
}

TEST_CASE("root without CAP_FSETID clears set-ID bits by writing, keeps them on files it creates",
          "[integration][posix]") {
    Parity p;
    p.caller = Caller::RootWithoutFsetid;
    p.prepare = prepare_setid_files;
    p.scenario = [](Run& r) {
        write_setid_files(r, "0777");
        // A file that O_CREAT|O_TRUNC creates is not truncated: it keeps the bits it asked for
        // (root is in the new file's group).
        r.open_close("new-trunc", O_WRONLY | O_CREAT | O_TRUNC, "fd", 06755);
        r.lstat("new-trunc", "reg 6755 uid=0 gid=0 nlink=1 size=0");
    };
    check_parity(p);
}

TEST_CASE("root's writes keep set-user-ID and set-group-ID, its chown clears them, like natively",
          "[integration][posix]") {
    Parity p;
    p.prepare = prepare_setid_files;
    p.scenario = [](Run& r) {
        write_setid_files(r, "6777");
        r.chown("chown", 0, 0, "0");
        r.lstat("chown", "reg 0777 uid=0 gid=0 nlink=1 size=4");
    };
    check_parity(p);
}

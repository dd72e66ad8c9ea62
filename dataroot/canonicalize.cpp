// Component-wise canonicalization; see canonicalize.hpp.
#include "dataroot/canonicalize.hpp"

#include "base/path.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <deque>

#include <sys/stat.h>
#include <unistd.h>

namespace guardfs::dataroot {

using base::ErrorCode;

int RealFs::lstat_kind(const std::string& abs_path, FileKind& kind) {
    struct stat st {};

    if (::lstat(abs_path.c_str(), &st) != 0) {
        const int err = errno;
        if (err == ENOENT) {
            kind = FileKind::Missing;
            return 0;
        }
        return err;
    }
    if (S_ISDIR(st.st_mode)) {
        kind = FileKind::Directory;
    } else if (S_ISLNK(st.st_mode)) {
        kind = FileKind::Symlink;
    } else {
        kind = FileKind::Other;
    }
    return 0;
}

int RealFs::read_link(const std::string& abs_path, std::string& target) {
    std::string buf(4096, '\0');
    const ssize_t n = ::readlink(abs_path.c_str(), buf.data(), buf.size());
    if (n < 0) {
        return errno;
    }
    if (static_cast<std::size_t>(n) >= buf.size()) {
        return ENAMETOOLONG;
    }
    buf.resize(static_cast<std::size_t>(n));
    target = std::move(buf);
    return 0;
}

int RealFs::identity(const std::string& abs_path, dev_t& dev, ino_t& ino) {
    struct stat st {};

    if (::stat(abs_path.c_str(), &st) != 0) {
        return errno;
    }
    dev = st.st_dev;
    ino = st.st_ino;
    return 0;
}

namespace {

base::Result<std::string> resolve(std::string_view abs_path, FsOps& fs, bool allow_missing,
                                  bool follow_last) {
    if (abs_path.empty() || abs_path.front() != '/') {
        return base::fail(ErrorCode::CanonicalizeFailed,
                          fmt::format("canonicalize '{}': not an absolute path", abs_path));
    }
    std::deque<std::string> todo;
    for (const auto s : base::split_segments(abs_path)) {
        todo.emplace_back(s);
    }
    std::vector<std::string> done; // resolved components so far
    int hops = 0;
    bool missing = false;
    auto current = [&done]() {
        std::string p;
        for (const auto& d : done) {
            p += '/';
            p += d;
        }
        return p.empty() ? std::string("/") : p;
    };
    while (!todo.empty()) {
        std::string comp = std::move(todo.front());
        todo.pop_front();
        if (comp == ".") {
            continue;
        }
        if (comp == "..") {
            if (!done.empty()) {
                done.pop_back();
            }
            continue;
        }
        if (missing) {
            done.push_back(std::move(comp));
            continue;
        }
        done.push_back(comp);
        const bool is_last = todo.empty();
        FileKind kind = FileKind::Missing;
        const std::string here = current();
        if (const int err = fs.lstat_kind(here, kind); err != 0) {
            return base::fail(ErrorCode::CanonicalizeFailed,
                              fmt::format("canonicalize '{}': lstat '{}': {}", abs_path, here,
                                          strerrorname_np(err)),
                              err);
        }
        if (kind == FileKind::Missing) {
            if (!allow_missing) {
                return base::fail(
                    ErrorCode::CanonicalizeFailed,
                    fmt::format("canonicalize '{}': '{}' does not exist", abs_path, here), ENOENT);
            }
            missing = true; // the rest is appended lexically
            continue;
        }
        if (kind == FileKind::Symlink && (!is_last || follow_last)) {
            if (++hops > kMaxSymlinkHops) {
                return base::fail(
                    ErrorCode::CanonicalizeFailed,
                    fmt::format("canonicalize '{}': too many symbolic links", abs_path), ELOOP);
            }
            std::string target;
            if (const int err = fs.read_link(here, target); err != 0) {
                return base::fail(ErrorCode::CanonicalizeFailed,
                                  fmt::format("canonicalize '{}': readlink '{}': {}", abs_path,
                                              here, strerrorname_np(err)),
                                  err);
            }
            done.pop_back();
            if (!target.empty() && target.front() == '/') {
                done.clear();
            }
            const auto segs = base::split_segments(target);
            for (auto it = segs.rbegin(); it != segs.rend(); ++it) {
                todo.emplace_front(*it);
            }
            continue;
        }
        if (kind != FileKind::Directory && !is_last) {
            return base::fail(
                ErrorCode::CanonicalizeFailed,
                fmt::format("canonicalize '{}': '{}' is not a directory", abs_path, here), ENOTDIR);
        }
    }
    return current();
}

} // namespace

base::Result<std::string> canonicalize_existing(std::string_view abs_path, FsOps& fs) {
    return resolve(abs_path, fs, false, true);
}

base::Result<std::string> canonicalize_target(std::string_view abs_path, FsOps& fs,
                                              bool follow_last) {
    return resolve(abs_path, fs, true, follow_last);
}

} // namespace guardfs::dataroot

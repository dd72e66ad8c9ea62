// Reading and writing guardfs's own files; see host_files.hpp.
#include "guard/host_files.hpp"

#include "base/io.hpp"

#include <cerrno>
#include <random>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace guardfs::guard {

int open_append_at(int dirfd, const std::string& rel) {
    const int fd = ::openat(dirfd, rel.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    return fd >= 0 ? fd : -errno;
}

int replace_at(int dirfd, const std::string& rel, std::string_view content) {
    const auto slash = rel.rfind('/');
    const std::string dir =
        slash == std::string::npos ? "." : (slash == 0 ? "/" : rel.substr(0, slash));
    const std::string base = slash == std::string::npos ? rel : rel.substr(slash + 1);
    std::random_device rd;
    const std::string tmp = dir + "/." + base + ".tmp-" + std::to_string(rd());
    const int fd = ::openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        return errno;
    }
    std::string_view rest = content;
    int err = 0;
    while (!rest.empty()) {
        const ssize_t n = ::write(fd, rest.data(), rest.size());
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            err = errno;
            break;
        }
        rest.remove_prefix(static_cast<std::size_t>(n));
    }
    if (err == 0 && ::fsync(fd) != 0) {
        err = errno;
    }
    ::close(fd);
    if (err == 0 && ::renameat(dirfd, tmp.c_str(), dirfd, rel.c_str()) != 0) {
        err = errno;
    }
    if (err != 0) {
        ::unlinkat(dirfd, tmp.c_str(), 0);
    }
    return err;
}

int read_at(int dirfd, const std::string& rel, std::string& out) {
    const int fd = ::openat(dirfd, rel.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return errno;
    }
    const int err = base::read_to_end(fd, out);
    ::close(fd);
    return err;
}

int PlainHostFiles::open_append(const std::string& path) {
    return open_append_at(AT_FDCWD, path);
}

int PlainHostFiles::replace(const std::string& path, std::string_view content) {
    return replace_at(AT_FDCWD, path, content);
}

int PlainHostFiles::read(const std::string& path, std::string& out) {
    return read_at(AT_FDCWD, path, out);
}

} // namespace guardfs::guard

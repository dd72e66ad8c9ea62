// Small I/O helpers; see io.hpp.
#include "base/io.hpp"

#include <array>
#include <cerrno>
#include <climits>
#include <cstring>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

namespace guardfs::base {

int read_to_end(int fd, std::string& out) {
    out.clear();
    std::array<char, 65536> buf{};
    for (;;) {
        const ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return errno;
        }
        if (n == 0) {
            return 0;
        }
        out.append(buf.data(), static_cast<std::size_t>(n));
    }
}

int read_link_at(int dirfd, const char* path, std::string& out) {
    std::array<char, PATH_MAX + 1> buf; // NOLINT(cppcoreguidelines-pro-type-member-init)
    const ssize_t n = ::readlinkat(dirfd, path, buf.data(), buf.size());
    if (n < 0) {
        return errno;
    }
    if (static_cast<std::size_t>(n) >= buf.size()) {
        return ENAMETOOLONG;
    }
    out.assign(buf.data(), static_cast<std::size_t>(n));
    return 0;
}

bool has_entries(int dirfd, const char* dir) {
    const int fd = ::openat(dirfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return true;
    }
    DIR* d = ::fdopendir(fd);
    if (d == nullptr) {
        ::close(fd);
        return true;
    }
    bool any = false;
    errno = 0;
    while (const dirent* e = ::readdir(d)) {
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
            any = true;
            break;
        }
    }
    any = any || errno != 0;
    ::closedir(d);
    return any;
}

} // namespace guardfs::base

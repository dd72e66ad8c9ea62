// Small I/O helpers; see io.hpp.
#include "base/io.hpp"

#include <array>
#include <cerrno>

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

} // namespace guardfs::base

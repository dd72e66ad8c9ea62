// guardfs reload MOUNTPOINT (design §7): ask the daemon serving MOUNTPOINT to re-read its
// policy, and report whether the new policy was taken (exit 0) or refused, keeping the old one
// (exit 2, with the errors). The daemon's pid and the outcome come from two attributes of the
// mount's root that the daemon answers itself.
#include "app/commands.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include <sys/xattr.h>

namespace guardfs::app {

namespace {

bool read_attr(const std::string& path, const char* name, std::string& out) {
    char buf[65536];
    const ssize_t n = ::getxattr(path.c_str(), name, buf, sizeof buf);
    if (n < 0) {
        return false;
    }
    out.assign(buf, static_cast<std::size_t>(n));
    return true;
}

unsigned long generation_of(const std::string& status) {
    return std::stoul(status);
}

} // namespace

int cmd_reload(const std::string& mountpoint) {
    std::string pid_text;
    std::string before;
    if (!read_attr(mountpoint, "user.guardfs.pid", pid_text) ||
        !read_attr(mountpoint, "user.guardfs.reload", before)) {
        std::fprintf(stderr, "guardfs reload: %s is not served by a running guardfs\n",
                     mountpoint.c_str());
        return kExitRuntime;
    }
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (::kill(pid, SIGHUP) != 0) {
        std::fprintf(stderr, "guardfs reload: cannot signal the daemon (pid %d): %s\n", pid,
                     strerrordesc_np(errno));
        return kExitRuntime;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    std::string after;
    while (std::chrono::steady_clock::now() < deadline) {
        if (read_attr(mountpoint, "user.guardfs.reload", after) &&
            generation_of(after) > generation_of(before)) {
            const std::string status = after.substr(after.find(' ') + 1);
            if (status == "ok" || status.rfind("ok: ", 0) == 0) {
                std::printf("guardfs reload: %s: policy reloaded\n", mountpoint.c_str());
                if (status != "ok") {
                    std::fprintf(stderr, "guardfs reload: %s: %s\n", mountpoint.c_str(),
                                 status.substr(4).c_str());
                }
                return kExitOk;
            }
            std::fprintf(stderr,
                         "guardfs reload: %s: the new policy was refused; the previous "
                         "one stays in force:\n%s\n",
                         mountpoint.c_str(), status.c_str());
            return kExitUsage;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::fprintf(stderr, "guardfs reload: no answer from the daemon (pid %d)\n", pid);
    return kExitRuntime;
}

} // namespace guardfs::app

// The mount fixture; see mount_fixture.hpp.
#include "support/mount_fixture.hpp"

#include "support/process.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

namespace guardfs::test {

namespace {

std::string unescape(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 3 < s.size()) {
            out += static_cast<char>(((s[i + 1] - '0') << 6) | ((s[i + 2] - '0') << 3) |
                                     (s[i + 3] - '0'));
            i += 3;
        } else {
            out += s[i];
        }
    }
    return out;
}

} // namespace

bool enable_fuse_ring() {
    static const char* const kParam = "/sys/module/fuse/parameters/enable_uring";
    // The value found first, put back at exit.
    static const std::string first = [] {
        std::string v = read_file(kParam);
        if (!v.empty() && v[0] == 'N') {
            std::atexit([] { std::ofstream(kParam) << "N\n"; });
        }
        return v;
    }();
    if (first.empty()) {
        return false; // no such parameter: no FUSE over io_uring in this kernel
    }
    if (read_file(kParam).rfind('Y', 0) == 0) {
        return true;
    }
    std::ofstream(kParam) << "Y\n";
    return read_file(kParam).rfind('Y', 0) == 0;
}

namespace {

// The topmost mount exactly at `path` in /proc/self/mountinfo (a later line is a mount on top of
// an earlier one): its device ("0:52") and filesystem type; nullopt for none.
struct MountLine {
    std::string dev;
    std::string fstype;
};

std::optional<MountLine> top_mount(const std::string& path) {
    std::ifstream in("/proc/self/mountinfo");
    std::string line;
    std::optional<MountLine> found;
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::string id, parent, dev, root, mnt;
        f >> id >> parent >> dev >> root >> mnt;
        if (unescape(mnt) != path) {
            continue;
        }
        found = MountLine{dev, ""};
        if (const auto dash = line.find(" - "); dash != std::string::npos) {
            std::istringstream rest(line.substr(dash + 3));
            rest >> found->fstype;
        }
    }
    return found;
}

} // namespace

bool is_mount_point(const std::string& path) {
    return top_mount(path).has_value();
}

std::string top_fstype(const std::string& path) {
    const auto m = top_mount(path);
    return m ? m->fstype : "";
}

std::string top_device(const std::string& path) {
    const auto m = top_mount(path);
    return m ? m->dev : "";
}

void require_fuse() {
    const bool ci = std::getenv("CI") != nullptr;
    const bool can = ::access("/dev/fuse", R_OK | W_OK) == 0;
    if (can) {
        return;
    }
    if (!ci && std::getenv("GUARDFS_ALLOW_SKIP") != nullptr) {
        std::fprintf(stderr, "skipping: /dev/fuse is not usable here\n");
        std::exit(77);
    }
    FAIL("/dev/fuse is not readable and writable by this user: integration tests need FUSE "
         "(run as root, or make /dev/fuse 0666)");
}

MountedGuard::MountedGuard(const std::string& policy_yaml)
    : MountedGuard(MountSpec{policy_yaml, true, {}, {}, {}}) {}

MountedGuard::MountedGuard(MountSpec spec) {
    require_fuse();
    std::string tmpl = (std::filesystem::temp_directory_path() / "guardfs-it-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
        throw std::runtime_error("mkdtemp");
    }
    root_ = std::filesystem::canonical(tmpl).string();
    separate_ = spec.separate_mountpoint;
    std::filesystem::create_directory(ws());
    if (spec.setup) {
        spec.setup(ws());
    }
    try {
        start(spec);
    } catch (...) {
        stop();
        throw;
    }
}

std::string MountedGuard::ws(const std::string& rel) const {
    return rel.empty() ? root_ + "/ws" : root_ + "/ws/" + rel;
}

std::string MountedGuard::mnt(const std::string& rel) const {
    if (!separate_) {
        return ws(rel);
    }
    return rel.empty() ? root_ + "/mnt" : root_ + "/mnt/" + rel;
}

void MountedGuard::start(const MountSpec& spec) {
    std::vector<std::string> argv{GUARDFS_BIN, "mount", "-f"};
    if (spec.transport == Transport::Ring) {
        (void)enable_fuse_ring();
    } else {
        argv.insert(argv.end(), {"-o", "no_io_uring"});
    }
    if (spec.use_policy_file) {
        const std::string policy = root_ + "/policy.yaml";
        write_file(policy, spec.policy_yaml);
        argv.push_back("--policy");
        argv.push_back(policy);
    }
    for (std::string a : spec.extra_args) {
        // "{ws}", "{mnt}" and "{root}" stand for the paths the fixture has just made.
        for (const auto& [token, value] : {std::pair<std::string, std::string>{"{ws}", ws()},
                                           {"{mnt}", mnt()},
                                           {"{root}", root_}}) {
            for (auto at = a.find(token); at != std::string::npos; at = a.find(token)) {
                a.replace(at, token.size(), value);
            }
        }
        argv.push_back(a);
    }
    argv.push_back(ws());
    if (separate_) {
        std::filesystem::create_directory(mnt());
        argv.push_back(mnt());
    }
    log_path_ = root_ + "/daemon.log";
    pid_ = spawn(argv, log_path_, log_path_, spec.env);
    // Ready when the topmost mount at ws is guardfs (ws may be a mount point of its own: a test's
    // small tmpfs); give up if the daemon exits or 20 s pass.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (top_fstype(mnt()) != "fuse.guardfs") {
        int status = 0;
        if (wait_for_exit(pid_, std::chrono::milliseconds(20), &status)) {
            pid_ = -1;
            FAIL("guardfs mount exited before mounting (status " << status
                                                                 << "): " << daemon_log());
        }
        if (std::chrono::steady_clock::now() > deadline) {
            FAIL("guardfs mount did not mount within 20 s: " << daemon_log());
        }
    }
}

bool MountedGuard::mounted() const {
    return !unmounted_ && top_fstype(mnt()) == "fuse.guardfs";
}

std::string MountedGuard::daemon_log() const {
    return read_file(log_path_);
}

bool MountedGuard::log_shows(const std::string& line) const {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (daemon_log().find(line) == std::string::npos) {
        if (std::chrono::steady_clock::now() > until) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

int MountedGuard::unmount() {
    if (unmounted_) {
        return -1;
    }
    unmounted_ = true;
    if (top_fstype(mnt()) == "fuse.guardfs") {
        run({"fusermount3", "-u", mnt()});
        if (top_fstype(mnt()) == "fuse.guardfs") {
            ::umount2(mnt().c_str(), MNT_DETACH);
        }
    }
    int status = -1;
    if (pid_ > 0) {
        if (!wait_for_exit(pid_, std::chrono::seconds(10), &status)) {
            ::kill(pid_, SIGKILL);
            wait_for_exit(pid_, std::chrono::seconds(10), &status);
        }
        pid_ = -1;
    }
    // A daemon that died or that a sanitizer complained about shows its log with the test's
    // output: the test itself may only see "Transport endpoint is not connected".
    const std::string log = daemon_log();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        log.find("runtime error") != std::string::npos ||
        log.find("AddressSanitizer") != std::string::npos) {
        std::fprintf(stderr, "guardfs daemon (status %d) log:\n%s\n", status, log.c_str());
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int MountedGuard::terminate(int sig) {
    if (unmounted_ || pid_ <= 0) {
        return -1;
    }
    unmounted_ = true;
    int status = -1;
    ::kill(pid_, sig);
    const bool exited = wait_for_exit(pid_, std::chrono::seconds(10), &status);
    if (!exited) {
        ::kill(pid_, SIGKILL);
        wait_for_exit(pid_, std::chrono::seconds(10), &status);
    }
    pid_ = -1;
    if (top_fstype(mnt()) == "fuse.guardfs") {
        ::umount2(mnt().c_str(), MNT_DETACH);
    }
    return exited && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void MountedGuard::stop() noexcept {
    try {
        if (!unmounted_) {
            unmount();
        }
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            wait_for_exit(pid_, std::chrono::seconds(10));
            pid_ = -1;
        }
        if (!root_.empty() && !is_mount_point(ws()) && !is_mount_point(mnt())) {
            std::error_code ec;
            std::filesystem::remove_all(root_, ec);
        }
    } catch (...) {
        // a destructor must not throw; what could not be cleaned is reported by the suite
    }
}

MountedGuard::~MountedGuard() {
    stop();
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

int errno_of(long rc) {
    return rc < 0 ? errno : 0;
}

int open_errno(const std::string& path, int flags, mode_t mode) {
    const int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
    if (fd < 0) {
        return errno;
    }
    ::close(fd);
    return 0;
}

int write_text(const std::string& path, const std::string& text, int flags) {
    const int fd = ::open(path.c_str(), O_WRONLY | flags | O_CLOEXEC, 0644);
    if (fd < 0) {
        return errno;
    }
    const ssize_t n = ::write(fd, text.data(), text.size());
    const int err = n < 0 ? errno : 0;
    ::close(fd);
    return n == static_cast<ssize_t>(text.size()) ? 0 : (err != 0 ? err : EIO);
}

void write_file(const std::string& path, const std::string& bytes, unsigned mode) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    ::chmod(path.c_str(), static_cast<mode_t>(mode));
}

FileState file_state(const std::string& path) {
    FileState s;

    struct stat st {};

    if (::lstat(path.c_str(), &st) != 0) {
        return s;
    }
    s.exists = true;
    s.mode = st.st_mode;
    s.nlink = st.st_nlink;
    s.mtime_ns = st.st_mtim.tv_sec * 1000000000L + st.st_mtim.tv_nsec;
    if (S_ISREG(st.st_mode)) {
        s.bytes = read_file(path);
    }
    std::array<char, 4096> names{};
    const ssize_t n = ::llistxattr(path.c_str(), names.data(), names.size());
    for (ssize_t i = 0; i < n;) {
        const std::string name(names.data() + i);
        i += static_cast<ssize_t>(name.size()) + 1;
        std::array<char, 4096> value{};
        const ssize_t v = ::lgetxattr(path.c_str(), name.c_str(), value.data(), value.size());
        s.xattrs +=
            name + "=" + std::string(value.data(), v > 0 ? static_cast<std::size_t>(v) : 0) + ";";
    }
    return s;
}

} // namespace guardfs::test

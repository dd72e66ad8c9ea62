// A real guardfs mount for one test (style guide B.9): a fresh temporary directory holding
// `ws/` (the workspace, guarded in place) and the policy file; `guardfs mount -f` started with
// the test's policy; ready once the daemon reports the mount. The destructor always unmounts
// (lazily), ends that daemon (SIGTERM, then SIGKILL), and removes the directory, so a failing
// assertion leaves no mount and no process behind.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/types.h>

namespace guardfs::test {

// How requests reach the daemon (docs/decisions/012).
enum class Transport {
    Ring,    // FUSE over io_uring where the kernel has it (see enable_fuse_ring), else /dev/fuse
    DevFuse, // /dev/fuse only (-o no_io_uring)
};

// Turns the kernel's fuse.enable_uring on, so that a daemon mounted from now on serves requests
// over io_uring; if this process turned it on, the value it found is put back when it exits
// (under ctest the fuse_ring fixture has turned it on before any test runs and puts it back
// after the last: support/fuse_ring.sh). True when it is on; false on a kernel without FUSE over
// io_uring (before Linux 6.14) or for a user who may not change it (not root).
bool enable_fuse_ring();

struct MountSpec {
    std::string policy_yaml;                          // written to <root>/policy.yaml
    bool use_policy_file = true;                      // false: no --policy (the built-in policy)
    std::vector<std::string> extra_args;              // more `guardfs mount` flags
    std::function<void(const std::string& ws)> setup; // fills the workspace before the mount
    std::map<std::string, std::string> env;           // extra environment for the daemon
    Transport transport = Transport::Ring;
    // Mount on <root>/mnt (guardfs mount WORKSPACE MOUNTPOINT) instead of over ws/ itself.
    bool separate_mountpoint = false;
};

class MountedGuard {
public:
    explicit MountedGuard(MountSpec spec);
    explicit MountedGuard(const std::string& policy_yaml);

    MountedGuard(const MountedGuard&) = delete;
    MountedGuard& operator=(const MountedGuard&) = delete;

    ~MountedGuard();

    // The temporary directory that holds everything.
    [[nodiscard]] const std::string& root() const { return root_; }

    // A path in the workspace: "<root>/ws/<rel>" (guarded when the mount is in place).
    [[nodiscard]] std::string ws(const std::string& rel = "") const;

    // A path under the mount point: "<root>/mnt/<rel>" with a separate mount point, else ws(rel).
    [[nodiscard]] std::string mnt(const std::string& rel = "") const;

    [[nodiscard]] pid_t daemon_pid() const { return pid_; }

    // Unmounts and waits for the daemon to exit; returns its exit status (or -1). Afterwards
    // ws() names the underlying files, so a test can check that nothing changed on disk.
    int unmount();

    // Sends `sig` to the daemon and waits for it to exit; returns its exit status, or -1 when
    // a signal ended it (or it did not exit within 10 s). A mount it left is detached.
    int terminate(int sig);

    [[nodiscard]] bool mounted() const;

    // What the daemon printed on stderr so far.
    [[nodiscard]] std::string daemon_log() const;

    // Waits up to 5 s for the daemon's log to hold `line` (it reports after the kernel's INIT or
    // after the first request, which may come after the mount is seen); true when it does.
    [[nodiscard]] bool log_shows(const std::string& line) const;

private:
    void start(const MountSpec& spec);
    void stop() noexcept;

    std::string root_;
    bool separate_ = false;
    pid_t pid_ = -1;
    int log_fd_ = -1;
    std::string log_path_;
    bool unmounted_ = false;
};

// True when /proc/self/mountinfo lists a mount exactly at `path`.
bool is_mount_point(const std::string& path);

// The filesystem type of the topmost mount exactly at `path` ("fuse.guardfs"), "" for none.
std::string top_fstype(const std::string& path);

// The device of the topmost mount exactly at `path` ("0:52", as mountinfo gives it), "" for none.
std::string top_device(const std::string& path);

// A file's bytes and mode, to show a denied operation changed nothing.
struct FileState {
    bool exists = false;
    std::string bytes;
    unsigned mode = 0;
    unsigned long nlink = 0;
    std::string xattrs; // "name=value;" for every user.* attribute
    long mtime_ns = 0;

    friend bool operator==(const FileState&, const FileState&) = default;
};

FileState file_state(const std::string& path);

// Reads a whole file ("" if it cannot be read).
std::string read_file(const std::string& path);

void write_file(const std::string& path, const std::string& bytes, unsigned mode = 0644);

// System calls as the tests attack with them: each returns 0 or the errno of the call.

// 0 when the call succeeded (rc >= 0), else errno, read right after the call.
int errno_of(long rc);

// open(2) with O_CLOEXEC added; the descriptor is closed again.
int open_errno(const std::string& path, int flags, mode_t mode = 0644);

// open(O_WRONLY | flags) and one write(2) of `text`: 0 when all of it was written, else the
// errno of open or write (EIO for a short write).
int write_text(const std::string& path, const std::string& text, int flags = O_CREAT | O_TRUNC);

// Fails the test (CI) or skips (GUARDFS_ALLOW_SKIP=1 locally) when FUSE is unusable here.
void require_fuse();

} // namespace guardfs::test

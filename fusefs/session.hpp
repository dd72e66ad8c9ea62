// Mounting and serving (design §9, §11): the workspace is opened before the mount and served
// over itself, so the agent keeps its paths; SIGINT/SIGTERM/SIGHUP end the loop and unmount.
#pragma once

#include "guard/compiled_policy.hpp"
#include "patterns/answers_yaml.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

struct fuse_session;

namespace guardfs::fusefs {

struct MountOptions {
    std::string workspace;
    std::string mountpoint; // defaults to workspace
    bool foreground = false;
    std::vector<std::string> fuse_options; // the -o values, as given
    unsigned max_threads = 64;
    double timeout_seconds = 86400.0;
    bool writeback = false; // the kernel's writeback cache; -o writeback_cache turns it on
    // guardfs run: called once mounted and made non-dumpable, while the process is still
    // single-threaded (it forks the command). Returns 0, or an exit code to stop with.
    std::function<int(fuse_session* se, const std::string& mountpoint)> after_mount;
    bool quiet = false;       // no "guarding" line on stderr
    bool own_signals = false; // leave signals to the caller (run forwards them)
};

// Everything the guard needs beyond the compiled policy, resolved by the command line.
struct GuardSetup {
    std::shared_ptr<const guard::CompiledPolicy> policy;
    std::string policy_path;                   // "" for the built-in policy (reload re-reads it)
    guard::CompileOptions compile_options;     // for reloads
    std::vector<std::string> approver_command; // argv of a co-process approver
    std::string approver_socket;               // or a socket path
    std::string approver_cwd;                  // the co-process's working directory
    bool approver_own_pid_namespace = false;   // socket peers must share the daemon's (run)
    std::chrono::milliseconds ask_timeout{60000};
    int audit_fd = -1; // opened before the mount (owned from here on)
    bool audit_all = false;
    std::string allow_file;                      // persisted answers ("" for none)
    std::vector<patterns::StoredAnswer> answers; // loaded from it
};

// What is mounted at a path now.
enum class MountState { NotMounted, Guardfs, GuardfsStale, OtherFuseStale, Other };

MountState mount_state(const std::string& path);

// Makes the serving daemon re-read its policy, as SIGHUP does; async-signal-safe, for a caller
// that handles SIGHUP itself (own_signals: guardfs run).
void request_reload() noexcept;

// Ends a session from another thread (guardfs run, when the command has ended): the loop
// returns once the mount is detached.
void stop_session(fuse_session* se, const std::string& mountpoint);

// Mounts the guard and serves requests until unmounted or signalled. Prints problems to stderr.
// Returns the process exit code: 0 after a clean unmount, 1 on a runtime failure (or what
// after_mount returned when it stopped the mount).
int serve(const MountOptions& options, GuardSetup setup);

} // namespace guardfs::fusefs

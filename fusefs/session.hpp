// Mounting and serving (design §9, §11): the workspace is opened before the mount and served
// over itself, so the agent keeps its paths; SIGINT/SIGTERM/SIGHUP end the loop and unmount.
#pragma once

#include "guard/compiled_policy.hpp"

#include <memory>
#include <string>
#include <vector>

namespace guardfs::fusefs {

struct MountOptions {
    std::string workspace;
    std::string mountpoint; // defaults to workspace
    bool foreground = false;
    std::vector<std::string> fuse_options; // the -o values, as given
    unsigned max_threads = 64;
    double timeout_seconds = 86400.0;
    bool writeback = true;
};

// What is mounted at a path now.
enum class MountState { NotMounted, Guardfs, GuardfsStale, OtherFuseStale, Other };

MountState mount_state(const std::string& path);

// Mounts the guard and serves requests until unmounted or signalled. Prints problems to stderr.
// Returns the process exit code: 0 after a clean unmount, 1 on a runtime failure.
int serve(const MountOptions& options, std::shared_ptr<const guard::CompiledPolicy> policy);

} // namespace guardfs::fusefs

// guardfs mount (design §9, §11): load the policy, then mount the guard over the workspace.
#include "app/commands.hpp"
#include "fusefs/session.hpp"

#include <cstdio>

namespace guardfs::app {

int cmd_mount(const MountArgs& args) {
    // Load the policy through the plain filesystem: nothing is mounted yet.
    dataroot::RealFs fs;
    PolicyChoice choice = args.choice;
    if (!args.audit_log.empty()) {
        choice.self_paths.push_back(args.audit_log);
    }
    auto policy = load_policy(choice, fs, true);
    if (!policy) {
        std::fprintf(stderr, "%s\n", policy.error().to_string().c_str());
        return kExitUsage;
    }
    fusefs::MountOptions options;
    options.workspace = args.workspace;
    options.mountpoint = args.mountpoint;
    options.foreground = args.foreground;
    options.fuse_options = args.fuse_options;
    return fusefs::serve(options, policy.value());
}

} // namespace guardfs::app

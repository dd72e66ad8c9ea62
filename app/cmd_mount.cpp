// guardfs mount (design §6, §7, §9, §11): load the policy, the allow file and the audit log,
// choose the approver, then mount the guard over the workspace.
#include "app/commands.hpp"
#include "base/path.hpp"
#include "fusefs/session.hpp"
#include "guard/host_files.hpp"
#include "patterns/answers_yaml.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace guardfs::app {

int prepare_guard(const MountArgs& args, fusefs::GuardSetup& setup) {
    // Everything is read through the plain filesystem: nothing is mounted yet.
    auto source = load_policy_source(args.choice, true);
    if (!source) {
        std::fprintf(stderr, "%s\n", source.error().to_string().c_str());
        return kExitUsage;
    }
    patterns::Policy& policy = source->policy;
    setup.policy_path = args.choice.policy_path.empty() ? std::string() : policy.source;
    guard::PlainHostFiles files;

    // The audit log: --audit-log, else the policy's. Opened now, so that it exists (and is
    // protected by identity too) before the mount.
    const std::string audit = !args.audit_log.empty()      ? expand_path(args.audit_log)
                              : !policy.audit.path.empty() ? expand_path(policy.audit.path)
                                                           : std::string();
    if (!audit.empty()) {
        const int fd = files.open_append(audit);
        if (fd < 0) {
            std::fprintf(stderr, "guardfs: cannot open audit log %s: %s\n", audit.c_str(),
                         strerrordesc_np(-fd));
            return kExitRuntime;
        }
        setup.audit_fd = fd;
        source->options.self_paths.push_back(audit);
    }
    setup.audit_all = policy.audit.all;

    // The allow file: a file that fails to parse is an error, never an empty list.
    if (!policy.allow_file.empty()) {
        setup.allow_file = expand_path(policy.allow_file);
        std::string text;
        const int err = files.read(setup.allow_file, text);
        if (err == 0) {
            auto answers = patterns::load_answers_text(text, setup.allow_file);
            if (!answers) {
                std::fprintf(stderr, "%s\n", answers.error().to_string().c_str());
                return kExitUsage;
            }
            setup.answers = std::move(answers.value());
        } else if (err != ENOENT) {
            std::fprintf(stderr, "guardfs: cannot read allow file %s: %s\n",
                         setup.allow_file.c_str(), strerrordesc_np(err));
            return kExitRuntime;
        }
        source->options.self_paths.push_back(setup.allow_file);
    }

    dataroot::RealFs fs;
    auto compiled = guard::compile_policy(policy, source->options, fs);
    if (!compiled) {
        std::fprintf(stderr, "%s\n", compiled.error().to_string().c_str());
        return kExitUsage;
    }
    setup.policy = compiled.value();
    setup.compile_options = source->options;

    // The approver: the flags, else the policy's.
    if (!args.approver.empty()) {
        setup.approver_command = {"/bin/sh", "-c", args.approver};
    } else if (!args.approver_socket.empty()) {
        setup.approver_socket = expand_path(args.approver_socket);
    } else if (!policy.approver.command.empty()) {
        setup.approver_command = policy.approver.command;
    } else if (!policy.approver.socket.empty()) {
        setup.approver_socket = expand_path(policy.approver.socket);
    }
    setup.approver_cwd = base::current_dir();
    double timeout = 60.0;
    if (args.ask_timeout_given) {
        timeout = args.ask_timeout;
    } else if (policy.approver.timeout_seconds) {
        timeout = *policy.approver.timeout_seconds;
    }
    setup.ask_timeout = std::chrono::milliseconds(static_cast<long>(std::llround(timeout * 1000)));
    return kExitOk;
}

int cmd_mount(const MountArgs& args) {
    fusefs::GuardSetup setup;
    if (const int rc = prepare_guard(args, setup); rc != kExitOk) {
        return rc;
    }
    fusefs::MountOptions options;
    options.workspace = args.workspace;
    options.mountpoint = args.mountpoint;
    options.foreground = args.foreground;
    options.fuse_options = args.fuse_options;
    return fusefs::serve(options, std::move(setup));
}

} // namespace guardfs::app

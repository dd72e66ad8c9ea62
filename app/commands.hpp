// The `guardfs` commands (design §11). Each returns the process exit code.
#pragma once

#include "app/policy_loading.hpp"
#include "fusefs/session.hpp"

#include <string>
#include <vector>

namespace guardfs::app {

struct CheckArgs {
    PolicyChoice choice;
    std::string op = "write";
    bool json = false;
    std::vector<std::string> paths;
};

struct MountArgs {
    PolicyChoice choice;
    std::string approver;        // --approver CMD (a shell command line)
    std::string approver_socket; // --approver-socket PATH
    double ask_timeout = 60.0;   // --ask-timeout SECONDS
    bool ask_timeout_given = false;
    std::string audit_log;                 // --audit-log FILE
    bool foreground = false;               // -f
    std::vector<std::string> fuse_options; // -o
    std::string workspace;
    std::string mountpoint; // defaults to the workspace
};

// Loads everything a mount needs (policy, allow file, audit log, approver choice) into setup.
// Returns kExitOk, or the exit code to stop with (the problem printed on stderr).
int prepare_guard(const MountArgs& args, fusefs::GuardSetup& setup);

struct RunArgs {
    MountArgs mount;                  // the mount options and WORKSPACE
    std::vector<std::string> command; // COMMAND [ARGS...]
    bool allow_unguarded = false;     // run COMMAND even where namespaces are refused
};

// guardfs run: COMMAND in namespaces of its own where the guard is mounted over WORKSPACE and
// cannot be removed or gone around. Returns COMMAND's exit code (128+N when killed by signal N).
int cmd_run(const RunArgs& args);

// guardfs mount: serve the guard over WORKSPACE (at MOUNTPOINT) until unmounted or signalled.
// 0 after a clean unmount, 1 on a runtime failure, 2 for a usage or policy error.
int cmd_mount(const MountArgs& args);

// guardfs check: one line per path (per pair for rename, link and symlink), beginning with the
// verdict word. Exit 0 whatever the verdicts; 2 for a usage or policy error.
int cmd_check(const CheckArgs& args);

// guardfs approve --socket PATH: answer questions at a terminal until q, end of input, or the
// daemon goes away.
int cmd_approve(const std::string& socket_path);

// guardfs reload MOUNTPOINT: 0 when the new policy was taken, 2 when it was refused (the old one
// stays), 1 when no daemon answered.
int cmd_reload(const std::string& mountpoint);

// guardfs audit FILE: the audit log, one readable line per decision.
int cmd_audit(const std::string& file, bool deny_only);

// guardfs policy --recommended: the built-in policy as YAML, one reason comment per row.
int cmd_policy_recommended();

// guardfs policy --check FILE: load and compile, print warnings; exit 0 or 2.
int cmd_policy_check(const PolicyChoice& choice);

} // namespace guardfs::app

// The guardfs command line (design §11). Parsing is CLI11's; each command lives in its own
// cmd_*.cpp. Exit codes: 0 ok, 1 runtime failure, 2 usage or policy error.
#include "app/commands.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

namespace {

// A value that must name something: an empty one (an unset shell variable) is a usage error,
// never a silent fall-back to the default (`--policy ""` would mean the built-in policy).
const CLI::Validator kNonEmpty(
    [](const std::string& v) {
        return v.empty() ? std::string("must not be empty") : std::string();
    },
    "", "non-empty");

int dispatch(int argc, char** argv);

} // namespace

int main(int argc, char** argv) {
    const int code = dispatch(argc, argv);
    // What a command printed must have reached its reader: `guardfs policy --recommended >
    // p.yaml` on a full disk would otherwise leave a truncated policy and report success.
    if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
        std::fprintf(stderr, "guardfs: cannot write standard output\n");
        return code == guardfs::app::kExitOk ? guardfs::app::kExitRuntime : code;
    }
    return code;
}

namespace {

int dispatch(int argc, char** argv) {
    using namespace guardfs::app;
    CLI::App app{"guardfs: a FUSE guard that judges every write an AI agent makes", "guardfs"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "guardfs 0.1.0");

    CheckArgs check;
    auto* check_cmd = app.add_subcommand("check", "print the verdict for paths and the rule "
                                                  "behind it");
    check_cmd
        ->add_option("--policy", check.choice.policy_path,
                     "policy file (default: the built-in recommended policy)")
        ->check(kNonEmpty);
    check_cmd
        ->add_option("--data-root", check.choice.data_roots,
                     "the agent's data directory (repeatable)")
        ->allow_extra_args(false); // one value per flag: the paths that follow are PATHs
    check_cmd->add_option("--op", check.op,
                          "operation: write (default), create, mkdir, unlink, rename FROM TO, "
                          "link EXISTING NEW, symlink TARGET LINK, open_write, truncate, chmod, "
                          "..., or read for the read face");
    check_cmd->add_flag("--json", check.json, "print JSON lines");
    check_cmd->add_option("paths", check.paths, "paths to judge")->required()->check(kNonEmpty);

    MountArgs mount;
    auto* mount_cmd = app.add_subcommand("mount", "guard WORKSPACE: mount the guard over it (or "
                                                  "at MOUNTPOINT)");
    mount_cmd
        ->add_option("--policy", mount.choice.policy_path,
                     "policy file (default: the built-in recommended policy)")
        ->check(kNonEmpty);
    mount_cmd
        ->add_option("--data-root", mount.choice.data_roots,
                     "the agent's data directory (repeatable)")
        ->allow_extra_args(false);
    auto* approver_opt =
        mount_cmd
            ->add_option("--approver", mount.approver,
                         "a long-lived program that answers ask verdicts (JSON lines)")
            ->check(kNonEmpty);
    mount_cmd
        ->add_option("--approver-socket", mount.approver_socket,
                     "a Unix socket that `guardfs approve` connects to")
        ->check(kNonEmpty)
        ->excludes(approver_opt);
    mount_cmd->add_option("--ask-timeout", mount.ask_timeout, "seconds to wait for an answer")
        ->check(CLI::Range(0.001, 86400.0));
    mount_cmd->add_option("--audit-log", mount.audit_log, "append a JSON line per decision")
        ->check(kNonEmpty);
    mount_cmd->add_flag("-f", mount.foreground, "stay in the foreground");
    mount_cmd
        ->add_option(
            "-o", mount.fuse_options,
            "FUSE mount options (e.g. allow_other; writeback_cache: the kernel's "
            "writeback cache, off by default; no_passthrough: not FUSE passthrough, which is "
            "used on Linux 6.9 and later when the daemon has CAP_SYS_ADMIN; no_io_uring: not "
            "FUSE over io_uring, which is used where the kernel offers it)")
        ->allow_extra_args(false);
    mount_cmd->add_option("workspace", mount.workspace, "the directory to guard")
        ->required()
        ->check(kNonEmpty);
    mount_cmd->add_option("mountpoint", mount.mountpoint, "where to mount (default: WORKSPACE)")
        ->check(kNonEmpty);

    RunArgs run;
    auto* run_cmd = app.add_subcommand(
        "run", "run COMMAND in namespaces of its own, with the guard mounted over WORKSPACE");
    run_cmd
        ->add_option("--policy", run.mount.choice.policy_path,
                     "policy file (default: the built-in recommended policy)")
        ->check(kNonEmpty);
    run_cmd
        ->add_option("--data-root", run.mount.choice.data_roots,
                     "the agent's data directory (repeatable)")
        ->allow_extra_args(false);
    auto* run_approver = run_cmd
                             ->add_option("--approver", run.mount.approver,
                                          "a long-lived program that answers ask verdicts")
                             ->check(kNonEmpty);
    run_cmd
        ->add_option("--approver-socket", run.mount.approver_socket,
                     "a Unix socket that `guardfs approve` connects to")
        ->check(kNonEmpty)
        ->excludes(run_approver);
    run_cmd->add_option("--ask-timeout", run.mount.ask_timeout, "seconds to wait for an answer")
        ->check(CLI::Range(0.001, 86400.0));
    run_cmd->add_option("--audit-log", run.mount.audit_log, "append a JSON line per decision")
        ->check(kNonEmpty);
    // Accepted because design §11 gives run the mount options; run always waits for COMMAND.
    run_cmd->add_flag("-f", run.mount.foreground, "stay in the foreground (always so)");
    run_cmd->add_option("-o", run.mount.fuse_options, "FUSE mount options")
        ->allow_extra_args(false);
    run_cmd->add_flag("--allow-unguarded", run.allow_unguarded,
                      "run COMMAND without the guard where the kernel refuses namespaces");
    run_cmd->add_option("workspace", run.mount.workspace, "the directory to guard")
        ->required()
        ->check(kNonEmpty);
    run_cmd->add_option("command", run.command, "COMMAND [ARGS...] (after --)")->required();

    std::string approve_socket;
    auto* approve_cmd = app.add_subcommand("approve", "answer the guard's questions at a "
                                                      "terminal");
    approve_cmd->add_option("--socket", approve_socket, "the mount's --approver-socket PATH")
        ->required()
        ->check(kNonEmpty);

    std::string reload_mountpoint;
    auto* reload_cmd = app.add_subcommand("reload", "make the guard re-read its policy");
    reload_cmd->add_option("mountpoint", reload_mountpoint, "the guarded mount point")
        ->required()
        ->check(kNonEmpty);

    std::string audit_file;
    bool audit_deny_only = false;
    auto* audit_cmd = app.add_subcommand("audit", "show an audit log for people");
    audit_cmd->add_option("file", audit_file, "the audit log (JSON lines)")->required();
    audit_cmd->add_flag("--deny-only", audit_deny_only, "only refusals");

    bool recommended = false;
    std::string policy_to_check;
    auto* policy_cmd = app.add_subcommand("policy", "print or check a policy");
    policy_cmd->add_flag("--recommended", recommended, "print the built-in policy as YAML");
    policy_cmd->add_option("--check", policy_to_check, "load a policy file and report problems")
        ->check(kNonEmpty);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? kExitOk : kExitUsage;
    }

    if (mount_cmd->parsed()) {
        mount.ask_timeout_given = mount_cmd->count("--ask-timeout") > 0;
        return cmd_mount(mount);
    }
    if (run_cmd->parsed()) {
        run.mount.ask_timeout_given = run_cmd->count("--ask-timeout") > 0;
        return cmd_run(run);
    }
    if (approve_cmd->parsed()) {
        return cmd_approve(approve_socket);
    }
    if (reload_cmd->parsed()) {
        return cmd_reload(reload_mountpoint);
    }
    if (audit_cmd->parsed()) {
        return cmd_audit(audit_file, audit_deny_only);
    }
    if (check_cmd->parsed()) {
        return cmd_check(check);
    }
    if (policy_cmd->parsed()) {
        if (recommended == !policy_to_check.empty()) {
            std::fprintf(stderr, "guardfs policy: give --recommended or --check FILE\n");
            return kExitUsage;
        }
        if (recommended) {
            return cmd_policy_recommended();
        }
        PolicyChoice choice;
        choice.policy_path = policy_to_check;
        return cmd_policy_check(choice);
    }
    return kExitUsage;
}

} // namespace

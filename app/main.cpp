// The guardfs command line (design §11). Parsing is CLI11's; each command lives in its own
// cmd_*.cpp. Exit codes: 0 ok, 1 runtime failure, 2 usage or policy error.
#include "app/commands.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>

int main(int argc, char** argv) {
    using namespace guardfs::app;
    CLI::App app{"guardfs: a FUSE guard that judges every write an AI agent makes", "guardfs"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "guardfs 0.1.0");

    CheckArgs check;
    auto* check_cmd = app.add_subcommand("check", "print the verdict for paths and the rule "
                                                  "behind it");
    check_cmd->add_option("--policy", check.choice.policy_path,
                          "policy file (default: the "
                          "built-in recommended policy)");
    check_cmd
        ->add_option("--data-root", check.choice.data_roots,
                     "the agent's data directory (repeatable)")
        ->allow_extra_args(false); // one value per flag: the paths that follow are PATHs
    check_cmd->add_option("--op", check.op,
                          "operation: write (default), create, mkdir, unlink, rename FROM TO, "
                          "link EXISTING NEW, symlink TARGET LINK, open_write, truncate, chmod, "
                          "..., or read for the read face");
    check_cmd->add_flag("--json", check.json, "print JSON lines");
    check_cmd->add_option("paths", check.paths, "paths to judge")->required();

    bool recommended = false;
    std::string policy_to_check;
    auto* policy_cmd = app.add_subcommand("policy", "print or check a policy");
    policy_cmd->add_flag("--recommended", recommended, "print the built-in policy as YAML");
    policy_cmd->add_option("--check", policy_to_check, "load a policy file and report problems");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? kExitOk : kExitUsage;
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

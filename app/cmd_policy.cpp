// guardfs policy (design §10, §11): the built-in policy written out as YAML that loads back to
// the same protection, one comment of reason per row; and --check to validate a policy file.
#include "app/commands.hpp"
#include "dataroot/canonicalize.hpp"
#include "guard/builtin_tables.hpp"
#include "guard/git_tier.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <string>

namespace guardfs::app {

namespace {

std::string yaml_quoted(std::string_view s) {
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
        }
        out += c;
    }
    out += '"';
    return out;
}

void print_rows(std::string& out, std::string_view title, std::span<const guard::BuiltinRow> rows,
                patterns::Verdict v) {
    bool first = true;
    for (const auto& row : rows) {
        if (row.verdict != v) {
            continue;
        }
        if (first) {
            out += fmt::format("  # ---- {} ----\n", title);
            first = false;
        }
        out += fmt::format("  # {}\n  - {}\n", row.reason, yaml_quoted(row.pattern));
    }
}

} // namespace

int cmd_policy_recommended() {
    std::string out;
    out += "# guardfs built-in policy, as printed by `guardfs policy --recommended`.\n"
           "# It is what guardfs applies when no --policy is given. The rows of the two\n"
           "# built-in tables are written out below, so their switches are off here and\n"
           "# loading this file guards the same paths (design.md section 4; the reason for\n"
           "# each tier: docs/policy-rows.md). Patterns are segment globs: '*' stays inside one\n"
           "# segment, a row matches a run of segments at any depth and everything below it.\n"
           "version: 1\n"
           "recommended: false   # its rows are written out below\n"
           "agent_config: false  # its rows are written out below\n"
           "git: true            # the git tier is code, not patterns (docs/git-tier.md):\n";
    out += "#   in every git directory at any depth (.git, .git/modules/<name>,\n"
           "#   .git/worktrees/<name>), deny writes to:\n"
           "#     hooks/<hook> for each hook name git runs (the *.sample files stay writable):\n";
    std::string hooks;
    for (const auto h : guard::git_hook_names()) {
        if (hooks.size() + h.size() > 70) {
            out += fmt::format("#       {}\n", hooks);
            hooks.clear();
        }
        hooks += hooks.empty() ? std::string(h) : " " + std::string(h);
    }
    out += fmt::format("#       {}\n", hooks);
    out += "#     config (a rename from config.lock is judged by content: allowed unless it\n"
           "#       adds or changes a key through which git runs a program or reads a file)\n"
           "#     config.worktree, commondir, info/attributes\n"
           "#   and an existing .git that is a file (a gitdir pointer): not rewritten, removed\n"
           "#   or renamed; a new one only in an empty directory, a new commondir only in\n"
           "#   worktrees/<name>/; renaming .git, hooks/ or info/ away or into place is refused.\n";
    out += "deny:\n";
    print_rows(out, "agent configuration: files and executable bodies", guard::agent_config_rows(),
               patterns::Verdict::Deny);
    print_rows(out, "recommended sensitive paths", guard::recommended_rows(),
               patterns::Verdict::Deny);
    out += "ask:\n";
    print_rows(out, "agent configuration: directories", guard::agent_config_rows(),
               patterns::Verdict::Ask);
    print_rows(out, "recommended sensitive paths", guard::recommended_rows(),
               patterns::Verdict::Ask);
    out += "links_out: allow     # a new symlink leaving the tree (design.md section 3)\n";
    std::fputs(out.c_str(), stdout);
    return kExitOk;
}

int cmd_policy_check(const PolicyChoice& choice) {
    dataroot::RealFs fs;
    auto policy = load_policy(choice, fs, true);
    if (!policy) {
        std::fprintf(stderr, "%s\n", policy.error().to_string().c_str());
        return kExitUsage;
    }
    std::printf("ok %s: %zu write rows, %zu read rows\n", choice.policy_path.c_str(),
                policy.value()->write.size(), policy.value()->read.size());
    return kExitOk;
}

} // namespace guardfs::app

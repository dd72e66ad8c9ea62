// The `guardfs` commands (design §11). Each returns the process exit code.
#pragma once

#include "app/policy_loading.hpp"

#include <string>
#include <vector>

namespace guardfs::app {

struct CheckArgs {
    PolicyChoice choice;
    std::string op = "write";
    bool json = false;
    std::vector<std::string> paths;
};

// guardfs check: one line per path (per pair for rename, link and symlink), beginning with the
// verdict word. Exit 0 whatever the verdicts; 2 for a usage or policy error.
int cmd_check(const CheckArgs& args);

// guardfs policy --recommended: the built-in policy as YAML, one reason comment per row.
int cmd_policy_recommended();

// guardfs policy --check FILE: load and compile, print warnings; exit 0 or 2.
int cmd_policy_check(const PolicyChoice& choice);

} // namespace guardfs::app

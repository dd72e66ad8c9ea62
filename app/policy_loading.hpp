// Loading and compiling the policy for a command (design §10, §11): the file or the built-in
// default, warnings to stderr, every error with file:line:column.
#pragma once

#include "base/result.hpp"
#include "dataroot/fs_ops.hpp"
#include "guard/compiled_policy.hpp"

#include <memory>
#include <string>
#include <vector>

namespace guardfs::app {

struct PolicyChoice {
    std::string policy_path;             // empty: the built-in recommended policy
    std::vector<std::string> data_roots; // --data-root
    std::vector<std::string> self_paths; // guardfs's own files named on the command line
};

// Loads (or takes the built-in) policy, prints its warnings to stderr, and compiles it.
// On failure returns the error; the caller prints it and exits 2.
base::Result<std::shared_ptr<const guard::CompiledPolicy>>
load_policy(const PolicyChoice& choice, dataroot::FsOps& fs, bool print_warnings);

// The process exit codes of design §11.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;
inline constexpr int kExitUsage = 2;

} // namespace guardfs::app

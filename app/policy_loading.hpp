// Loading and compiling the policy for a command (design §10, §11): the file or the built-in
// default, warnings to stderr, every error with file:line:column.
#pragma once

#include "base/result.hpp"
#include "dataroot/fs_ops.hpp"
#include "guard/compiled_policy.hpp"
#include "patterns/policy.hpp"

#include <memory>
#include <string>
#include <vector>

namespace guardfs::app {

struct PolicyChoice {
    std::string policy_path;             // empty: the built-in recommended policy
    std::vector<std::string> data_roots; // --data-root
    std::vector<std::string> self_paths; // guardfs's own files named on the command line
};

struct PolicySource {
    patterns::Policy policy;       // loaded (not yet compiled)
    guard::CompileOptions options; // how to compile it (and recompile it on reload)
};

// Loads (or takes the built-in) policy and prints its warnings to stderr. The policy's source
// becomes an absolute path. Does not compile.
base::Result<PolicySource> load_policy_source(const PolicyChoice& choice, bool print_warnings);

// load_policy_source() and compile.
base::Result<std::shared_ptr<const guard::CompiledPolicy>>
load_policy(const PolicyChoice& choice, dataroot::FsOps& fs, bool print_warnings);

// A path given by a person: a leading "~/" expanded against $HOME, a relative one made absolute
// against the current directory, then normalized lexically.
std::string expand_path(const std::string& path);

// The process exit codes of design §11.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;
inline constexpr int kExitUsage = 2;

} // namespace guardfs::app

// A policy made ready to judge (design §4, §5, §7, §10): the rule tables built from the file's
// rows and the built-in tiers, the data roots chosen by precedence, guardfs's own files.
// Compiling validates what loading could not without the filesystem: agent_config_dirs must name
// existing directories, and a data root that a deny row could straddle is refused.
// Immutable once built; a reload builds a new one and swaps the pointer.
#pragma once

#include "base/result.hpp"
#include "dataroot/data_root.hpp"
#include "dataroot/fs_ops.hpp"
#include "guard/request.hpp"
#include "patterns/policy.hpp"
#include "patterns/rule_table.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace guardfs::guard {

struct CompileOptions {
    std::vector<std::string> cli_data_roots;  // --data-root (repeatable); first source found wins
    std::optional<std::string> env_data_root; // $AGENT_DATA_DIR
    std::string start_dir;                    // where guardfs started (for relative spellings)
    std::string home;                         // for '~'
    std::vector<std::string> self_paths;      // guardfs's own files beyond the policy's
                                              // (e.g. --audit-log); write-denied (design §7)
};

struct CompiledPolicy {
    patterns::Policy policy;
    patterns::RuleTable write; // deny/ask/allow rows of every write-face tier
    patterns::RuleTable read;  // read-face rows (design §8)
    dataroot::DataRoots roots;
    std::string roots_source;            // "--data-root", "policy" or "$AGENT_DATA_DIR"
    std::vector<std::string> self_paths; // lexical and canonical spellings, and folded
    std::vector<FileId> self_ids;        // identities of those that existed when compiled
};

// Builds the tables and checks the filesystem-facing parts. On failure nothing is built and the
// error names the file row (file:line:column) or flag at fault.
base::Result<std::shared_ptr<const CompiledPolicy>>
compile_policy(const patterns::Policy& policy, const CompileOptions& options, dataroot::FsOps& fs);

// The deny row (or git surface) that would lose its first segment(s) if `key` were a data root,
// described for people; nullopt when none would. Used at start and again at each decision.
std::optional<std::string> straddling_row(const CompiledPolicy& p, std::string_view key);

} // namespace guardfs::guard

// The policy file of design §10, as data. Loading is strict: an unknown key, a wrong type, an
// unknown verdict or a bad pattern is an error naming file, line and column, and every error
// in the file is reported, not just the first. Rows written in another tool's syntax load with
// a warning that names the row and says what it will match.
#pragma once

#include "base/result.hpp"
#include "patterns/pattern.hpp"
#include "patterns/rule.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace guardfs::patterns {

struct PolicyRow {
    std::string pattern;
    std::string reason;
    base::Location where;
};

struct ApproverConfig {
    std::vector<std::string> command; // argv; empty when none
    std::string socket;               // Unix socket path; empty when none
    std::optional<double> timeout_seconds;
};

struct AuditConfig {
    std::string path; // empty: no audit log
    bool all = false; // also log every allow
};

struct Policy {
    std::string source = "<built-in>";
    // Built-in tables. With no policy file guardfs uses Policy::builtin_default(): all on.
    // In a file `recommended` defaults to false (the file says what applies) while the
    // agent-configuration and git tiers default to on (design §4, §4a); docs/decisions/002.
    bool recommended = false;
    bool agent_config = true;
    bool git = true;
    std::vector<PolicyRow> deny;
    std::vector<PolicyRow> ask;
    std::vector<PolicyRow> allow;
    std::vector<PolicyRow> read_deny; // design §8
    bool read_agent_config = false;   // the agent-configuration rows on the read face too
    std::vector<std::string> data_root;
    std::optional<base::Location> data_root_where;
    std::vector<std::pair<std::string, std::string>> agent_config_dirs; // segment -> directory
    std::vector<base::Location> agent_config_dirs_where;
    Verdict links_out = Verdict::Allow;
    ApproverConfig approver;
    AuditConfig audit;
    std::string allow_file;

    static Policy builtin_default();
};

struct Warning {
    base::Location where;
    std::string message;

    [[nodiscard]] std::string to_string() const; // "file:line:column: warning: message"
};

struct LoadedPolicy {
    Policy policy;
    std::vector<Warning> warnings;
};

// Largest policy file accepted; a larger one is refused before parsing.
inline constexpr std::size_t kMaxPolicyBytes = 64U << 20U;

// Parses policy text. `name` is used in locations. On failure the Error's message holds every
// problem found, one per line, each "name:line:column: message".
base::Result<LoadedPolicy> load_policy_text(std::string_view text, const std::string& name);

// Reads and parses a policy file. Fails with PolicyIo when the file cannot be read.
base::Result<LoadedPolicy> load_policy_file(const std::string& path);

} // namespace guardfs::patterns

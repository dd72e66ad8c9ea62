// The vocabulary of a rule table: verdicts, tiers, and one rule (design §2, §4, §10).
// Verdict order is strength: Allow < Ask < Deny, and fold() keeps the stronger.
#pragma once

#include "base/error.hpp"

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace guardfs::patterns {

enum class Verdict : std::uint8_t { Allow = 0, Ask = 1, Deny = 2 };

// The stronger of two verdicts: deny > ask > allow.
constexpr Verdict fold(Verdict a, Verdict b) noexcept {
    return a < b ? b : a;
}

const char* to_string(Verdict v) noexcept;

// "allow" / "ask" / "deny"; nullopt for anything else (no case folding: the YAML is strict).
std::optional<Verdict> verdict_from_string(std::string_view s) noexcept;

std::ostream& operator<<(std::ostream& os, Verdict v);

// Which table a rule (or a decision) came from.
enum class Tier : std::uint8_t {
    None,           // no rule matched
    Policy,         // the policy file's deny/ask/allow rows
    Recommended,    // the built-in sensitive-path set (design §4, `recommended: true`)
    AgentConfig,    // the built-in agent-configuration tier (design §4, `agent_config: true`)
    Git,            // git's execution surfaces (design §4a)
    SelfProtection, // guardfs's own policy, allow file and audit log (design §7)
    LinksOut,       // a new symlink leaving the tree (design §3, `links_out`)
    Remembered,     // an approver's remembered answer (design §6)
    Approver,       // an approver's answer to this request (design §6)
    ReadFace,       // the read face (design §8)
    Internal,       // the guard could not decide; fail closed
};

const char* to_string(Tier t) noexcept;

std::ostream& operator<<(std::ostream& os, Tier t);

struct Rule {
    std::string pattern; // as written (for anchored rules: anchor dir + "/" + tail)
    Verdict verdict = Verdict::Deny;
    Tier tier = Tier::Policy;
    std::string reason;
    std::optional<base::Location> origin; // where the row was written, when it came from a file
    // For a rule anchored below an agent_config_dirs directory (design §4): the number of
    // leading segments of the pattern that name that directory. 0 for a floating rule.
    std::size_t anchor_depth = 0;
};

} // namespace guardfs::patterns

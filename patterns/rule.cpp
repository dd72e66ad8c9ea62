// Names of verdicts and tiers; see rule.hpp.
#include "patterns/rule.hpp"

namespace guardfs::patterns {

const char* to_string(Verdict v) noexcept {
    switch (v) {
    case Verdict::Allow:
        return "allow";
    case Verdict::Ask:
        return "ask";
    case Verdict::Deny:
        return "deny";
    }
    return "deny";
}

std::optional<Verdict> verdict_from_string(std::string_view s) noexcept {
    if (s == "allow") {
        return Verdict::Allow;
    }
    if (s == "ask") {
        return Verdict::Ask;
    }
    if (s == "deny") {
        return Verdict::Deny;
    }
    return std::nullopt;
}

std::ostream& operator<<(std::ostream& os, Verdict v) {
    return os << to_string(v);
}

const char* to_string(Tier t) noexcept {
    switch (t) {
    case Tier::None:
        return "none";
    case Tier::Policy:
        return "policy";
    case Tier::Recommended:
        return "recommended";
    case Tier::AgentConfig:
        return "agent-config";
    case Tier::Git:
        return "git";
    case Tier::SelfProtection:
        return "self-protection";
    case Tier::LinksOut:
        return "links-out";
    case Tier::Remembered:
        return "remembered";
    case Tier::Approver:
        return "approver";
    case Tier::ReadFace:
        return "read-face";
    case Tier::Internal:
        return "internal";
    }
    return "internal";
}

std::ostream& operator<<(std::ostream& os, Tier t) {
    return os << to_string(t);
}

} // namespace guardfs::patterns

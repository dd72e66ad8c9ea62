// The built-in rule tables (design §4): the recommended sensitive-path set and the
// agent-configuration tier. Each row has a one-line reason; docs/policy-rows.md says why each row
// has its tier. The git tier (design §4a) is code, in git_tier.hpp, because hooks are guarded by
// name and config by content.
#pragma once

#include "patterns/rule.hpp"

#include <span>
#include <string_view>

namespace guardfs::guard {

struct BuiltinRow {
    std::string_view pattern; // segment-glob syntax of design §2
    patterns::Verdict verdict;
    std::string_view reason; // one line, shown by `guardfs policy --recommended` and in audits
};

// Credentials, cloud CLIs, SSH/GPG, package-registry tokens, shell start-up files, git-adjacent
// files outside .git, editor task files that run commands, ... (`recommended: true`).
std::span<const BuiltinRow> recommended_rows() noexcept;

// Agent configuration: deny for files whose content is a credential or a command line the host
// launches and for executable bodies under configuration directories; ask for the configuration
// directories themselves (`agent_config: true`). Also the rows of the read face when
// `read.agent_config: true`.
std::span<const BuiltinRow> agent_config_rows() noexcept;

} // namespace guardfs::guard

// Judging a proposed git config by its content (design §4a; issue #5). git writes `config`
// through `config.lock` and a rename; that rename is allowed when the new content adds or
// changes no key through which git runs a program or reads another file, and refused otherwise,
// naming the key. The content is parsed by git itself (`git config --no-includes -f - --list
// -z`): a maintained parser, with includes never followed.
#pragma once

#include "guard/request.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace guardfs::guard {

// Larger config files are not judged (refused): git's own limit for a config is far below.
inline constexpr std::size_t kMaxGitConfigBytes = 4U << 20U;

// Every (key, value) of a config text as git reads it: section and variable names lower case,
// subsections as written. nullopt when git cannot parse it (or cannot be run).
std::optional<std::multimap<std::string, std::string>> parse_git_config(std::string_view text);

// Is `key` (as parse_git_config gives it) one through which git runs a program or reads another
// file, with this value? (alias.* and submodule.*.update only when the value begins with '!'.)
bool is_dangerous_git_key(std::string_view key, std::string_view value);

// The first dangerous key that `change.proposed` adds or changes relative to `change.current`;
// "" when there is none; nullopt when a content cannot be parsed. Never throws.
std::optional<std::string> judge_git_config_change(const GitConfigChange& change) noexcept;

// Does a rename onto this path land on a git config surface that is judged by content? The FUSE
// layer reads the source's content only then.
bool is_git_config_path(std::string_view path);

} // namespace guardfs::guard

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
// file, with this value? (submodule.*.update only when the value begins with '!'; alias.* always.)
bool is_dangerous_git_key(std::string_view key, std::string_view value);

// The first dangerous key that `change.proposed` adds or changes relative to `change.current`;
// "" when there is none; nullopt when a content cannot be parsed. Never throws. A proposed text
// in the plainest form (plain_git_config_keys) with no key that could be dangerous, beside a
// current one in that form or none, is answered "" without running git; every other change as
// judge_git_config_change_with_git answers it.
std::optional<std::string> judge_git_config_change(const GitConfigChange& change) noexcept;

// The same judgement with both contents parsed by git (parse_git_config).
std::optional<std::string> judge_git_config_change_with_git(const GitConfigChange& change) noexcept;

// The keys of a config text written in the plainest form, as git would read them (section and
// variable lower case, subsection as written), or nullopt for any other text. The plainest
// form: `[section]` or `[section "subsection"]` headers (section of key characters, no "a.b";
// subsection not empty, of printable ASCII without tab), nothing after them on their line, and
// `name` or `name = value` lines below one; printable ASCII and tabs, with no backslash, '#' or
// ';' anywhere and no double quote outside a header (no escape, quoted value, comment or
// continuation). This is what git init, git clone and `git config` of a plain value write; git
// reads such a text as these keys.
std::optional<std::vector<std::string>> plain_git_config_keys(std::string_view text);

// Does a rename onto this path land on a git config surface that is judged by content? The FUSE
// layer reads the source's content only then.
bool is_git_config_path(std::string_view path);

} // namespace guardfs::guard

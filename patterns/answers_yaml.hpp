// The allow file (design §6, §10 `allow_file`): answers an approver asked to persist, as YAML.
// Loading is strict like the policy's: a file that fails to parse is an error (never an empty
// list), with file:line:column.
#pragma once

#include "base/result.hpp"
#include "patterns/rule.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace guardfs::patterns {

enum class AnswerScope : unsigned char {
    Path, // exactly this path (exact bytes)
    Dir,  // this directory and the entries directly in it
    Rule, // whatever this rule (pattern and tier) asks about
};

const char* to_string(AnswerScope s) noexcept;

struct StoredAnswer {
    Verdict verdict = Verdict::Allow; // allow or deny
    AnswerScope scope = AnswerScope::Path;
    std::string path; // for Path and Dir scopes
    std::string rule; // the rule that asked (for every scope, as a record)
    Tier tier = Tier::None;
    std::string at; // when it was given (ISO 8601), for people

    friend bool operator==(const StoredAnswer&, const StoredAnswer&) = default;
};

// Parses an allow file. An empty text (or only comments) is an empty list.
base::Result<std::vector<StoredAnswer>> load_answers_text(std::string_view text,
                                                          const std::string& name);

// The YAML text for a list of answers (loads back to the same list).
std::string answers_to_yaml(const std::vector<StoredAnswer>& answers);

} // namespace guardfs::patterns

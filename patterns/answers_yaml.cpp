// The allow file's YAML; see answers_yaml.hpp.
#include "patterns/answers_yaml.hpp"

#include "patterns/yaml_cpp.hpp"

#include <fmt/format.h>

#include <set>

namespace guardfs::patterns {

const char* to_string(AnswerScope s) noexcept {
    switch (s) {
    case AnswerScope::Path:
        return "path";
    case AnswerScope::Dir:
        return "dir";
    case AnswerScope::Rule:
        return "rule";
    }
    return "path";
}

namespace {

std::optional<Tier> tier_from_string(std::string_view s) {
    for (const Tier t : {Tier::None, Tier::Policy, Tier::Recommended, Tier::AgentConfig, Tier::Git,
                         Tier::SelfProtection, Tier::LinksOut, Tier::Remembered, Tier::Approver,
                         Tier::ReadFace, Tier::Internal}) {
        if (s == to_string(t)) {
            return t;
        }
    }
    return std::nullopt;
}

std::string quoted(std::string_view s) {
    std::string out = "\"";
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (u < 0x20 || u == 0x7f) {
            out += fmt::format("\\x{:02x}", u);
        } else {
            out += c;
        }
    }
    return out + "\"";
}

} // namespace

base::Result<std::vector<StoredAnswer>> load_answers_text(std::string_view text,
                                                          const std::string& name) {
    std::vector<std::string> errors;
    std::vector<StoredAnswer> out;
    auto error = [&](const YAML::Mark& m, const std::string& msg) {
        errors.push_back(fmt::format("{}:{}:{}: {}", name, m.line + 1, m.column + 1, msg));
    };
    try {
        const YAML::Node root = load_one_document(std::string(text));
        if (root.IsNull()) {
            return out;
        }
        if (!root.IsMap()) {
            error(root.Mark(), "the allow file must be a mapping with 'version' and 'answers'");
        } else {
            for (auto it = root.begin(); it != root.end(); ++it) {
                const YAML::Node key = it->first;
                const YAML::Node value = it->second;
                const std::string k = key.IsScalar() ? key.Scalar() : std::string();
                if (k == "version") {
                    if (!value.IsScalar() || value.Scalar() != "1") {
                        error(value.Mark(), "'version' must be 1");
                    }
                } else if (k == "answers") {
                    if (value.IsNull()) {
                        continue;
                    }
                    if (!value.IsSequence()) {
                        error(value.Mark(), "'answers' must be a list");
                        continue;
                    }
                    for (const auto& row : value) {
                        if (!row.IsMap()) {
                            error(row.Mark(), "an answer must be a mapping");
                            continue;
                        }
                        StoredAnswer a;
                        bool ok = true;
                        std::set<std::string> seen;
                        for (auto f = row.begin(); f != row.end(); ++f) {
                            const YAML::Node fk = f->first;
                            const YAML::Node fv = f->second;
                            const std::string field = fk.IsScalar() ? fk.Scalar() : "";
                            if (!seen.insert(field).second) {
                                error(fk.Mark(), fmt::format("duplicate key '{}'", field));
                                ok = false;
                                continue;
                            }
                            if (!fv.IsScalar()) {
                                error(fv.Mark(), fmt::format("'{}' must be a string", field));
                                ok = false;
                                continue;
                            }
                            const std::string v = fv.Scalar();
                            if (field == "verdict") {
                                auto verdict = verdict_from_string(v);
                                if (!verdict || *verdict == Verdict::Ask) {
                                    error(fv.Mark(), "'verdict' must be allow or deny");
                                    ok = false;
                                } else {
                                    a.verdict = *verdict;
                                }
                            } else if (field == "scope") {
                                if (v == "path") {
                                    a.scope = AnswerScope::Path;
                                } else if (v == "dir") {
                                    a.scope = AnswerScope::Dir;
                                } else if (v == "rule") {
                                    a.scope = AnswerScope::Rule;
                                } else {
                                    error(fv.Mark(), "'scope' must be path, dir or rule");
                                    ok = false;
                                }
                            } else if (field == "path") {
                                a.path = v;
                            } else if (field == "rule") {
                                a.rule = v;
                            } else if (field == "tier") {
                                auto t = tier_from_string(v);
                                if (!t) {
                                    error(fv.Mark(), fmt::format("unknown tier '{}'", v));
                                    ok = false;
                                } else {
                                    a.tier = *t;
                                }
                            } else if (field == "at") {
                                a.at = v;
                            } else {
                                error(fk.Mark(), fmt::format("unknown key '{}' (verdict, scope, "
                                                             "path, rule, tier, at)",
                                                             field));
                                ok = false;
                            }
                        }
                        if (!seen.count("verdict") || !seen.count("scope")) {
                            error(row.Mark(), "an answer needs 'verdict' and 'scope'");
                            ok = false;
                        }
                        if (a.scope != AnswerScope::Rule &&
                            (a.path.empty() || a.path.front() != '/')) {
                            error(row.Mark(), "a path or dir answer needs an absolute 'path'");
                            ok = false;
                        }
                        if (a.scope != AnswerScope::Path && a.rule.empty()) {
                            // a dir answer covers the entries its rule asks about there
                            error(row.Mark(),
                                  fmt::format("a {} answer needs its 'rule'",
                                              a.scope == AnswerScope::Rule ? "rule" : "dir"));
                            ok = false;
                        }
                        if (ok) {
                            out.push_back(std::move(a));
                        }
                    }
                } else {
                    error(key.Mark(), fmt::format("unknown key '{}' (version, answers)", k));
                }
            }
        }
    } catch (const YAML::Exception& e) {
        error(e.mark, e.msg);
    }
    if (!errors.empty()) {
        std::string msg;
        for (const auto& e : errors) {
            msg += msg.empty() ? e : "\n" + e;
        }
        return base::fail(base::ErrorCode::YamlBadValue, msg);
    }
    return out;
}

std::string answers_to_yaml(const std::vector<StoredAnswer>& answers) {
    std::string out = "# guardfs allow file: answers an approver asked to remember (design.md "
                      "section 6).\n# Edit with care; guardfs rewrites it atomically.\n"
                      "version: 1\nanswers:\n";
    if (answers.empty()) {
        out = out.substr(0, out.size() - 1) + " []\n";
    }
    for (const auto& a : answers) {
        out +=
            fmt::format("  - {{verdict: {}, scope: {}", to_string(a.verdict), to_string(a.scope));
        if (!a.path.empty()) {
            out += ", path: " + quoted(a.path);
        }
        if (!a.rule.empty()) {
            out += ", rule: " + quoted(a.rule);
        }
        if (a.tier != Tier::None) {
            out += fmt::format(", tier: {}", to_string(a.tier));
        }
        if (!a.at.empty()) {
            out += ", at: " + quoted(a.at);
        }
        out += "}\n";
    }
    return out;
}

} // namespace guardfs::patterns

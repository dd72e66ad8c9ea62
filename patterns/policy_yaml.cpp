// Strict YAML loading of the policy file (design §10); yaml-cpp is used here and in
// answers_yaml.cpp only.
// yaml-cpp throws; every exception is caught here and becomes an error with file:line:column
// (yaml-cpp marks are 0-based, so 1 is added). Errors are collected, not returned at the first.
#include "base/io.hpp"
#include "base/unique_fd.hpp"
#include "patterns/policy.hpp"
#include "patterns/yaml_cpp.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>

#include <fcntl.h>

namespace guardfs::patterns {

using base::ErrorCode;

Policy Policy::builtin_default() {
    Policy p;
    p.source = "<built-in>";
    p.recommended = true;
    p.agent_config = true;
    p.git = true;
    return p;
}

std::string Warning::to_string() const {
    return fmt::format("{}:{}:{}: warning: {}", where.file, where.line, where.column, message);
}

namespace {

class Loader {
public:
    Loader(std::string name, std::string_view text) : name_(std::move(name)), text_(text) {}

    base::Location at(const YAML::Node& n) const {
        const YAML::Mark m = n.Mark();
        if (m.line < 0) {
            return base::Location{name_, 1, 1};
        }
        if (n.IsNull()) {
            return at_empty(m);
        }
        return base::Location{name_, m.line + 1, m.column + 1};
    }

    base::Location at(const YAML::Mark& m) const {
        if (m.line < 0) {
            return base::Location{name_, 1, 1};
        }
        return base::Location{name_, m.line + 1, m.column + 1};
    }

    // yaml-cpp marks an empty value (`read:` with nothing after it, a bare `-`) at the token
    // that follows it, often lines later; the place to name is the ':' or '-' before it. A
    // written null (`~`, `null`) is marked where it stands.
    base::Location at_empty(const YAML::Mark& m) const {
        // yaml-cpp's positions leave out a UTF-8 byte order mark.
        const std::size_t bom = text_.starts_with("\xEF\xBB\xBF") ? 3 : 0;
        auto pos = static_cast<std::size_t>(m.pos) + bom;
        if (pos > text_.size()) {
            return at(m);
        }
        const std::string_view rest = text_.substr(pos);
        if (rest.starts_with('~') || rest.starts_with("null") || rest.starts_with("Null") ||
            rest.starts_with("NULL")) {
            return at(m);
        }
        while (pos > 0 &&
               std::string_view(" \t\r\n").find(text_[pos - 1]) != std::string_view::npos) {
            --pos;
        }
        if (pos == 0 || (text_[pos - 1] != ':' && text_[pos - 1] != '-')) {
            return at(m);
        }
        const std::string_view before = text_.substr(0, pos - 1);
        const auto line = static_cast<int>(std::count(before.begin(), before.end(), '\n'));
        const std::size_t nl = before.rfind('\n');
        const auto column =
            static_cast<int>(nl == std::string_view::npos ? before.size() : before.size() - nl - 1);
        return base::Location{name_, line + 1, column + 1};
    }

    void error(const base::Location& where, std::string message) {
        errors_.push_back(
            fmt::format("{}:{}:{}: {}", where.file, where.line, where.column, message));
    }

    void warn(const base::Location& where, std::string message) {
        warnings_.push_back(Warning{where, std::move(message)});
    }

    static const char* type_name(const YAML::Node& n) {
        switch (n.Type()) {
        case YAML::NodeType::Null:
            return "null";
        case YAML::NodeType::Scalar:
            return "a scalar";
        case YAML::NodeType::Sequence:
            return "a list";
        case YAML::NodeType::Map:
            return "a mapping";
        case YAML::NodeType::Undefined:
            return "nothing";
        }
        return "nothing";
    }

    // A scalar that is a string (plain or quoted). Null is not a string.
    std::optional<std::string> string(const YAML::Node& n, std::string_view what) {
        if (!n.IsScalar()) {
            error(at(n), fmt::format("{} must be a string, not {}", what, type_name(n)));
            return std::nullopt;
        }
        return n.Scalar();
    }

    std::optional<bool> boolean(const YAML::Node& n, std::string_view what) {
        static const std::set<std::string> kTrue{"true", "True", "TRUE"};
        static const std::set<std::string> kFalse{"false", "False", "FALSE"};
        if (n.IsScalar() && n.Tag() != "!") {
            if (kTrue.count(n.Scalar()) != 0) {
                return true;
            }
            if (kFalse.count(n.Scalar()) != 0) {
                return false;
            }
        }
        error(at(n), fmt::format("{} must be true or false, not {}", what,
                                 n.IsScalar() ? "'" + n.Scalar() + "'" : type_name(n)));
        return std::nullopt;
    }

    std::optional<double> positive_number(const YAML::Node& n, std::string_view what) {
        if (n.IsScalar() && n.Tag() != "!") {
            try {
                std::size_t used = 0;
                const double v = std::stod(n.Scalar(), &used);
                if (used == n.Scalar().size() && v > 0 && v <= 86400) {
                    return v;
                }
            } catch (const std::exception&) {
                // fall through to the error below
            }
        }
        error(at(n), fmt::format("{} must be a number of seconds greater than 0 and at most "
                                 "86400, not {}",
                                 what, n.IsScalar() ? "'" + n.Scalar() + "'" : type_name(n)));
        return std::nullopt;
    }

    // Checks a mapping's keys against the allowed set; reports unknown and duplicate keys.
    bool mapping(const YAML::Node& n, std::string_view what,
                 std::initializer_list<std::string_view> allowed) {
        if (!n.IsMap()) {
            error(at(n), fmt::format("{} must be a mapping, not {}", what, type_name(n)));
            return false;
        }
        std::set<std::string> seen;
        for (auto it = n.begin(); it != n.end(); ++it) {
            const YAML::Node key = it->first; // a copy: `it->` yields a temporary
            if (!key.IsScalar()) {
                error(at(key), fmt::format("{}: keys must be plain names", what));
                continue;
            }
            const std::string k = key.Scalar();
            if (!seen.insert(k).second) {
                error(at(key), fmt::format("{}: duplicate key '{}'", what, k));
            }
            bool known = false;
            for (const auto a : allowed) {
                known = known || a == k;
            }
            if (!known) {
                error(at(key), fmt::format("{}: unknown key '{}' (known keys: {})", what, k,
                                           fmt::join(allowed, ", ")));
            }
        }
        return true;
    }

    void row(const YAML::Node& n, std::string_view list, std::vector<PolicyRow>& out) {
        PolicyRow r;
        r.where = at(n);
        // Note: YAML::Node's operator= writes through to the node it refers to; reset()
        // rebinds. `pat` must only ever be rebound.
        YAML::Node pat;
        pat.reset(n);
        if (n.IsMap()) {
            if (!mapping(n, fmt::format("a row of '{}'", list), {"pattern", "reason"})) {
                return;
            }
            if (!n["pattern"]) {
                error(at(n), fmt::format("a row of '{}' needs a 'pattern'", list));
                return;
            }
            pat.reset(n["pattern"]);
            if (n["reason"]) {
                if (auto reason = string(n["reason"], "'reason'")) {
                    r.reason = *reason;
                }
            }
        }
        if (pat.IsNull()) {
            error(at(pat), fmt::format("a null row in '{}' is not a pattern (write the "
                                       "pattern in quotes; '~' alone means null in YAML)",
                                       list));
            return;
        }
        auto text = string(pat, fmt::format("a row of '{}'", list));
        if (!text) {
            return;
        }
        auto compiled = compile_pattern(*text);
        if (!compiled) {
            error(at(pat), compiled.error().message);
            return;
        }
        for (const std::string& w : compiled->warnings) {
            warn(at(pat), fmt::format("row '{}' in '{}': {}", *text, list, w));
        }
        if (text->find('\\') != std::string::npos) {
            warn(at(pat), fmt::format("row '{}' in '{}': '\\' is literal here, not a separator: "
                                      "it matches a name holding a backslash; write '/' "
                                      "between segments",
                                      *text, list));
        }
        r.pattern = *text;
        out.push_back(std::move(r));
    }

    void rows(const YAML::Node& n, std::string_view list, std::vector<PolicyRow>& out) {
        if (n.IsNull()) {
            return; // "deny:" with nothing after it is an empty list
        }
        if (!n.IsSequence()) {
            error(at(n),
                  fmt::format("'{}' must be a list of patterns, not {}", list, type_name(n)));
            return;
        }
        for (const auto& item : n) {
            row(item, list, out);
        }
    }

    void string_list(const YAML::Node& n, std::string_view what, std::vector<std::string>& out) {
        if (n.IsScalar()) {
            out.push_back(n.Scalar());
            return;
        }
        if (!n.IsSequence()) {
            error(at(n), fmt::format("{} must be a string or a list of strings, not {}", what,
                                     type_name(n)));
            return;
        }
        for (const auto& item : n) {
            if (auto s = string(item, what)) {
                out.push_back(*s);
            }
        }
    }

    void non_empty(const YAML::Node& n, std::string_view what, std::string& out) {
        if (auto s = string(n, what)) {
            if (s->empty()) {
                error(at(n), fmt::format("{} must not be empty", what));
                return;
            }
            out = *s;
        }
    }

    void top(const YAML::Node& root, Policy& p) {
        if (root.IsNull()) {
            return; // an empty file: every key takes its default
        }
        if (!mapping(root, "the policy",
                     {"version", "recommended", "agent_config", "git", "deny", "ask", "allow",
                      "read", "data_root", "agent_config_dirs", "links_out", "approver", "audit",
                      "allow_file"})) {
            return;
        }
        for (auto it = root.begin(); it != root.end(); ++it) {
            if (!it->first.IsScalar()) {
                continue;
            }
            const std::string key = it->first.Scalar();
            const YAML::Node v = it->second; // a copy: `it->` yields a temporary
            if (key == "version") {
                if (!v.IsScalar() || v.Tag() == "!" || v.Scalar() != "1") {
                    error(at(v), "'version' must be 1");
                }
            } else if (key == "recommended") {
                if (auto b = boolean(v, "'recommended'")) {
                    p.recommended = *b;
                }
            } else if (key == "agent_config") {
                if (auto b = boolean(v, "'agent_config'")) {
                    p.agent_config = *b;
                }
            } else if (key == "git") {
                if (auto b = boolean(v, "'git'")) {
                    p.git = *b;
                }
            } else if (key == "deny") {
                rows(v, "deny", p.deny);
            } else if (key == "ask") {
                rows(v, "ask", p.ask);
            } else if (key == "allow") {
                rows(v, "allow", p.allow);
            } else if (key == "read") {
                read(v, p);
            } else if (key == "data_root") {
                p.data_root_where = at(v);
                // An empty value is taken, and exempts nothing (design §5: a root that reduces
                // to nothing); being found, it also keeps $AGENT_DATA_DIR from applying.
                std::vector<std::string> roots;
                string_list(v, "'data_root'", roots);
                p.data_root = std::move(roots);
            } else if (key == "agent_config_dirs") {
                agent_config_dirs(v, p);
            } else if (key == "links_out") {
                if (auto s = string(v, "'links_out'")) {
                    if (auto verdict = verdict_from_string(*s)) {
                        p.links_out = *verdict;
                    } else {
                        error(at(v), fmt::format("'links_out': unknown verdict '{}' (allow, "
                                                 "ask or deny)",
                                                 *s));
                    }
                }
            } else if (key == "approver") {
                approver(v, p.approver);
            } else if (key == "audit") {
                if (mapping(v, "'audit'", {"path", "all"})) {
                    if (v["path"]) {
                        non_empty(v["path"], "'audit.path'", p.audit.path);
                    }
                    if (v["all"]) {
                        if (auto b = boolean(v["all"], "'audit.all'")) {
                            p.audit.all = *b;
                        }
                    }
                }
            } else if (key == "allow_file") {
                non_empty(v, "'allow_file'", p.allow_file);
            }
        }
    }

    void read(const YAML::Node& v, Policy& p) {
        if (!mapping(v, "'read'", {"deny", "agent_config"})) {
            return;
        }
        if (v["deny"]) {
            rows(v["deny"], "read.deny", p.read_deny);
        }
        if (v["agent_config"]) {
            if (auto b = boolean(v["agent_config"], "'read.agent_config'")) {
                p.read_agent_config = *b;
            }
        }
    }

    void agent_config_dirs(const YAML::Node& v, Policy& p) {
        if (v.IsNull()) {
            return;
        }
        if (!v.IsMap()) {
            error(at(v), fmt::format("'agent_config_dirs' must be a mapping of a segment to a "
                                     "directory, not {}",
                                     type_name(v)));
            return;
        }
        std::set<std::string> seen;
        for (auto it = v.begin(); it != v.end(); ++it) {
            auto seg = string(it->first, "an 'agent_config_dirs' key");
            auto dir = string(it->second, "an 'agent_config_dirs' value");
            if (!seg || !dir) {
                continue;
            }
            if (seg->empty() || seg->find('/') != std::string::npos || *seg == "." ||
                *seg == ".." || seg->find('*') != std::string::npos) {
                error(at(it->first), fmt::format("'agent_config_dirs': key '{}' must be one "
                                                 "literal path segment, such as '.claude'",
                                                 *seg));
                continue;
            }
            if (!seen.insert(*seg).second) {
                error(at(it->first), fmt::format("'agent_config_dirs': duplicate key '{}'", *seg));
                continue;
            }
            p.agent_config_dirs.emplace_back(*seg, *dir);
            p.agent_config_dirs_where.push_back(at(it->second));
        }
    }

    void approver(const YAML::Node& v, ApproverConfig& a) {
        if (!mapping(v, "'approver'", {"command", "socket", "timeout"})) {
            return;
        }
        if (v["command"] && v["socket"]) {
            error(at(v), "'approver': give either 'command' or 'socket', not both");
        }
        if (v["command"]) {
            const YAML::Node& c = v["command"];
            if (c.IsScalar()) {
                if (c.Scalar().empty()) {
                    error(at(c), "'approver.command' must not be empty");
                } else {
                    a.command = {"/bin/sh", "-c", c.Scalar()};
                }
            } else if (c.IsSequence() && c.size() > 0) {
                for (const auto& item : c) {
                    if (auto s = string(item, "an 'approver.command' word")) {
                        a.command.push_back(*s);
                    }
                }
            } else {
                error(at(c), "'approver.command' must be a string or a non-empty list of words");
            }
        }
        if (v["socket"]) {
            non_empty(v["socket"], "'approver.socket'", a.socket);
        }
        if (v["timeout"]) {
            a.timeout_seconds = positive_number(v["timeout"], "'approver.timeout'");
        }
    }

    std::string name_;
    std::string_view text_;
    std::vector<std::string> errors_;
    std::vector<Warning> warnings_;
};

} // namespace

base::Result<LoadedPolicy> load_policy_text(std::string_view text, const std::string& name) {
    Loader loader(name, text);
    LoadedPolicy out;
    out.policy.source = name;
    if (text.size() > kMaxPolicyBytes) {
        return base::fail(ErrorCode::PolicyIo,
                          fmt::format("{}: policy is larger than {} bytes", name, kMaxPolicyBytes));
    }
    if (text.find('\0') != std::string_view::npos) {
        return base::fail(
            ErrorCode::YamlSyntax,
            fmt::format("{}:1:1: policy holds a NUL byte: not a YAML text file", name));
    }
    try {
        const YAML::Node root = load_one_document(std::string(text));
        loader.top(root, out.policy);
    } catch (const YAML::Exception& e) {
        loader.error(loader.at(e.mark), e.msg);
    } catch (const std::exception& e) {
        loader.error(base::Location{name, 1, 1}, e.what());
    }
    if (!loader.errors_.empty()) {
        std::string msg;
        for (const std::string& e : loader.errors_) {
            if (!msg.empty()) {
                msg += '\n';
            }
            msg += e;
        }
        return base::fail(ErrorCode::YamlBadValue, msg);
    }
    out.warnings = std::move(loader.warnings_);
    return out;
}

base::Result<LoadedPolicy> load_policy_file(const std::string& path) {
    // read(2) and not a stream: a stream opens a directory and reads nothing from it without
    // an error, which would load as an empty policy. A pipe (`--policy <(...)`) still reads.
    const base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    std::string text;
    const int err = !fd.valid() ? errno : base::read_to_end(fd.get(), text);
    if (err != 0) {
        return base::fail(
            ErrorCode::PolicyIo,
            fmt::format("{}: cannot read policy file: {}", path, strerrordesc_np(err)), err);
    }
    return load_policy_text(text, path);
}

} // namespace guardfs::patterns

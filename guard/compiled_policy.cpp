// Compiling a policy; see compiled_policy.hpp.
#include "guard/compiled_policy.hpp"

#include "base/path.hpp"
#include "dataroot/canonicalize.hpp"
#include "guard/builtin_tables.hpp"
#include "guard/git_tier.hpp"
#include "patterns/fold.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace guardfs::guard {

using base::ErrorCode;
using patterns::Rule;
using patterns::RuleSpec;

namespace {

std::string where(const base::Location& l) {
    return fmt::format("{}:{}:{}", l.file, l.line, l.column);
}

void add_rows(std::vector<RuleSpec>& specs, const std::vector<patterns::PolicyRow>& rows, Verdict v,
              Tier tier) {
    for (const auto& row : rows) {
        auto compiled = patterns::compile_pattern(row.pattern);
        if (!compiled) {
            continue; // the loader already refused it; a Policy built in code is trusted
        }
        Rule r;
        r.pattern = row.pattern;
        r.verdict = v;
        r.tier = tier;
        r.reason = row.reason;
        r.origin = row.where;
        specs.push_back(RuleSpec{std::move(r), std::move(compiled.value())});
    }
}

void add_builtin(std::vector<RuleSpec>& specs, std::span<const BuiltinRow> rows, Tier tier,
                 bool deny_only) {
    for (const BuiltinRow& row : rows) {
        if (deny_only && row.verdict != Verdict::Deny) {
            continue;
        }
        auto compiled = patterns::compile_pattern(row.pattern);
        if (!compiled) {
            continue; // unit tests compile every built-in row
        }
        Rule r;
        r.pattern = std::string(row.pattern);
        r.verdict = deny_only ? Verdict::Deny : row.verdict;
        r.tier = tier;
        r.reason = std::string(row.reason);
        specs.push_back(RuleSpec{std::move(r), std::move(compiled.value())});
    }
}

} // namespace

std::optional<std::string> straddling_row(const CompiledPolicy& p, std::string_view key) {
    patterns::Readings r;
    r.build(key, 0);
    auto describe = [&p](std::uint32_t id) {
        const Rule& rule = p.write.rule(id);
        return fmt::format("{} row '{}' ({})", patterns::to_string(rule.verdict), rule.pattern,
                           patterns::to_string(rule.tier));
    };
    // A root inside what a deny row guards is refused; inside what an ask row guards is the
    // point of a data root (`~/.sema/engine-data` under the ask-tier `.sema`).
    const auto full = p.write.match_guard(r);
    if (full.matched() && full.best.verdict == Verdict::Deny) {
        return describe(full.best.rule);
    }
    // A row the root straddles would lose its first segments inside the root and guard
    // something else there: refused for ask rows as for deny rows (an ask row of the
    // agent-configuration tier, `.github/agents` under a root of `proj/.github`, stays asked).
    const auto partial = p.write.match_guard_partial(r);
    if (partial.matched() && partial.best.verdict != Verdict::Allow) {
        return describe(partial.best.rule);
    }
    if (p.policy.git) {
        for (const auto& v : r.all()) {
            if (has_git_segment(v.segs)) {
                return std::string("the git tier (a root at or inside a '.git' directory)");
            }
        }
    }
    return std::nullopt;
}

base::Result<std::shared_ptr<const CompiledPolicy>>
compile_policy(const patterns::Policy& policy, const CompileOptions& options, dataroot::FsOps& fs) {
    auto out = std::make_shared<CompiledPolicy>();
    out->policy = policy;
    std::vector<std::string> errors;

    // agent_config_dirs: absolute paths of existing directories (design §4).
    std::map<std::string, std::vector<std::string>> anchors;
    for (std::size_t i = 0; i < policy.agent_config_dirs.size(); ++i) {
        const auto& [seg, dir] = policy.agent_config_dirs[i];
        const std::string at = i < policy.agent_config_dirs_where.size()
                                   ? where(policy.agent_config_dirs_where[i])
                                   : std::string("agent_config_dirs");
        if (dir.empty() || dir.front() != '/') {
            errors.push_back(fmt::format("{}: agent_config_dirs['{}']: '{}' is not an absolute "
                                         "path",
                                         at, seg, dir));
            continue;
        }
        const std::string lexical = base::lexical_absolute(dir, "/");
        if (lexical == "/") {
            errors.push_back(fmt::format("{}: agent_config_dirs['{}']: '/' would make every "
                                         "path a configuration directory",
                                         at, seg));
            continue;
        }
        // Resolved as written: a ".." after a symlink climbs out of the link's target, so the
        // text collapsed (`A/lnk/..` to `A`) may be another directory than the one named.
        auto canonical = dataroot::canonicalize_existing(dir, fs);
        dataroot::FileKind kind = dataroot::FileKind::Missing;
        if (!canonical || fs.lstat_kind(canonical.value(), kind) != 0 ||
            kind != dataroot::FileKind::Directory) {
            errors.push_back(fmt::format("{}: agent_config_dirs['{}']: '{}' is not an existing "
                                         "directory",
                                         at, seg, dir));
            continue;
        }
        if (canonical.value() == "/") {
            errors.push_back(fmt::format("{}: agent_config_dirs['{}']: '{}' resolves to '/', "
                                         "which would make every path a configuration directory",
                                         at, seg, dir));
            continue;
        }
        auto& list = anchors[seg];
        if (!base::has_dotdot_segment(dir)) {
            list.push_back(lexical);
        }
        if (std::find(list.begin(), list.end(), canonical.value()) == list.end()) {
            list.push_back(canonical.value());
        }
    }

    // The write face: the file's rows first, so that on a tie the user's own row is named.
    std::vector<RuleSpec> specs;
    add_rows(specs, policy.deny, Verdict::Deny, Tier::Policy);
    add_rows(specs, policy.ask, Verdict::Ask, Tier::Policy);
    add_rows(specs, policy.allow, Verdict::Allow, Tier::Policy);
    if (policy.agent_config) {
        add_builtin(specs, agent_config_rows(), Tier::AgentConfig, false);
    }
    if (policy.recommended) {
        add_builtin(specs, recommended_rows(), Tier::Recommended, false);
    }
    out->write = patterns::RuleTable::build(std::move(specs), anchors);

    // The read face: its own rows, and the agent-configuration files when asked for.
    std::vector<RuleSpec> read_specs;
    add_rows(read_specs, policy.read_deny, Verdict::Deny, Tier::ReadFace);
    if (policy.read_agent_config) {
        add_builtin(read_specs, agent_config_rows(), Tier::ReadFace, true);
    }
    out->read = patterns::RuleTable::build(std::move(read_specs), anchors);

    // Data roots: the first source found wins (design §5).
    std::vector<std::string> values;
    std::string at = "--data-root";
    if (!options.cli_data_roots.empty()) {
        values = options.cli_data_roots;
        out->roots_source = "--data-root";
    } else if (!policy.data_root.empty() || policy.data_root_where) {
        // Found in the file, even empty (`data_root: []`): first found wins (design §5), so
        // $AGENT_DATA_DIR does not apply.
        values = policy.data_root;
        out->roots_source = "policy";
        if (policy.data_root_where) {
            at = where(*policy.data_root_where);
        }
    } else if (options.env_data_root && !options.env_data_root->empty()) {
        values = {*options.env_data_root};
        out->roots_source = "$AGENT_DATA_DIR";
        at = "$AGENT_DATA_DIR";
    }
    std::vector<std::string> spellings;
    for (const auto& v : values) {
        for (auto& s : dataroot::spellings(v, options.home, options.start_dir)) {
            if (std::find(spellings.begin(), spellings.end(), s) == spellings.end()) {
                spellings.push_back(std::move(s));
            }
        }
    }
    out->roots = dataroot::DataRoots(spellings);
    for (const auto& s : spellings) {
        std::vector<std::string> keys{s};
        if (auto c = dataroot::canonicalize_existing(s, fs); c && c.value() != s) {
            keys.push_back(c.value());
        }
        for (const auto& k : keys) {
            if (auto row = straddling_row(*out, k)) {
                errors.push_back(fmt::format(
                    "{}: data root '{}' is refused: as a root it would strip the first "
                    "segment(s) of {} and so unguard it; a data root is a data directory "
                    "(e.g. ~/.sema/engine-data), never a configuration directory or a place "
                    "inside a guarded one",
                    at, k, *row));
            }
        }
    }

    // guardfs's own files (design §7): by name (every spelling, folded too) and by identity.
    std::vector<std::string> self = options.self_paths;
    if (policy.source != "<built-in>") {
        self.push_back(policy.source);
    }
    if (!policy.allow_file.empty()) {
        self.push_back(policy.allow_file);
    }
    if (!policy.audit.path.empty()) {
        self.push_back(policy.audit.path);
    }
    auto add_self = [&out](std::string s) {
        if (s == "/" || s.empty()) {
            return;
        }
        for (std::string x : {s, patterns::fold(s)}) {
            if (std::find(out->self_paths.begin(), out->self_paths.end(), x) ==
                out->self_paths.end()) {
                out->self_paths.push_back(std::move(x));
            }
        }
    };
    for (const auto& raw : self) {
        for (const auto& s : dataroot::spellings(raw, options.home, options.start_dir)) {
            add_self(s);
            if (auto c = dataroot::canonicalize_target(s, fs, true)) {
                add_self(c.value());
            }
            FileId id;
            if (fs.identity(s, id.dev, id.ino) == 0) {
                if (std::find(out->self_ids.begin(), out->self_ids.end(), id) ==
                    out->self_ids.end()) {
                    out->self_ids.push_back(id);
                }
            }
        }
    }

    if (!errors.empty()) {
        std::string msg;
        for (const auto& e : errors) {
            msg += msg.empty() ? "" : "\n";
            msg += e;
        }
        return base::fail(ErrorCode::PolicyInvalid, msg);
    }
    return std::shared_ptr<const CompiledPolicy>(std::move(out));
}

} // namespace guardfs::guard

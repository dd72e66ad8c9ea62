// guardfs check (design §10, §11): the verdict for paths, and the rule, tier and view behind it.
// Each path is judged as the FUSE layer would judge it, with the views that need no mount: the
// path as spelled, its canonical form, a symlink's target, and both ends of a rename or link.
#include "app/commands.hpp"
#include "base/io.hpp"
#include "base/path.hpp"
#include "dataroot/canonicalize.hpp"
#include "guard/json_text.hpp"
#include "guard/judge.hpp"
#include "patterns/fold.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>

#include <fcntl.h>
#include <sys/stat.h>

namespace guardfs::app {

using guard::Decision;
using guard::Op;
using guard::Role;
using guard::Target;

namespace {

// Operations whose effect lands where a final symlink points.
bool follows_last(Op op) {
    switch (op) {
    case Op::Write:
    case Op::OpenWrite:
    case Op::Truncate:
    case Op::Chmod:
    case Op::Chown:
    case Op::Utimes:
    case Op::SetXattr:
    case Op::RemoveXattr:
    case Op::Fallocate:
    case Op::CopyInto:
    case Op::Create:
    case Op::OpenRead:
        return true;
    default:
        return false;
    }
}

struct Built {
    Target target;
    std::string error; // non-empty: where the target lands could not be determined
};

Built make_target(const std::string& arg, Role role, bool follow_last, bool through,
                  dataroot::FsOps& fs, const std::string& cwd) {
    Built b;
    b.target.role = role;
    b.target.through = through;
    const std::string raw = (!arg.empty() && arg.front() == '/') ? arg : cwd + "/" + arg;
    const std::string spelled = base::lexical_absolute(raw, "/");
    b.target.views.push_back(guard::PathView{spelled, guard::View::Spelled});
    auto canonical = dataroot::canonicalize_target(raw, fs, follow_last);
    if (!canonical) {
        b.error = canonical.error().message;
        return b;
    }
    if (canonical.value() != spelled) {
        b.target.views.push_back(guard::PathView{canonical.value(), guard::View::Canonical});
    }

    struct stat st {};

    if (::lstat(spelled.c_str(), &st) == 0) {
        b.target.exists = true;
        b.target.kind = S_ISDIR(st.st_mode)   ? guard::Kind::Directory
                        : S_ISLNK(st.st_mode) ? guard::Kind::Symlink
                        : S_ISREG(st.st_mode) ? guard::Kind::File
                                              : guard::Kind::Other;
    }
    if (::stat(spelled.c_str(), &st) == 0) {
        b.target.identity = guard::FileId{st.st_dev, st.st_ino};
    }
    // As the mount judges a new `.git` that is not a directory: by what its directory holds.
    const std::size_t slash = spelled.rfind('/');
    if (!b.target.exists && patterns::folds_to(spelled.substr(slash + 1), ".git")) {
        const std::string dir = slash == 0 ? "/" : spelled.substr(0, slash);
        b.target.among_others = base::has_entries(AT_FDCWD, dir.c_str());
    }
    return b;
}

// One line per path, whatever the path holds: control bytes (a newline in a file name would
// start a line of its own, perhaps with a verdict word) are written as \xNN.
std::string one_line(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) {
            out += fmt::format("\\x{:02x}", u);
        } else {
            out += c;
        }
    }
    return out;
}

void print(const Decision& d, Op op, const std::vector<std::string>& paths, bool json) {
    if (json) {
        nlohmann::json j;
        j["verdict"] = patterns::to_string(d.verdict);
        j["op"] = guard::to_string(op);
        guard::put_text(j, "path", paths.front());
        guard::put_text_list(j, "paths", paths);
        if (d.rule.empty()) {
            j["rule"] = nullptr;
        } else {
            guard::put_text(j, "rule", d.rule);
        }
        j["tier"] = patterns::to_string(d.tier);
        j["view"] = guard::to_string(d.view);
        j["reading"] = patterns::to_string(d.reading);
        guard::put_text(j, "decided_path", d.path);
        if (d.exempt_root.empty()) {
            j["exempt_root"] = nullptr;
        } else {
            guard::put_text(j, "exempt_root", d.exempt_root);
        }
        j["reason"] = guard::utf8_or_replacement(d.reason);
        std::printf("%s\n",
                    j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
        return;
    }
    std::string line =
        fmt::format("{} {}", patterns::to_string(d.verdict), fmt::join(paths, " -> "));
    if (d.tier == guard::Tier::None) {
        line += " rule=- tier=- view=-";
        if (!d.exempt_root.empty()) {
            line += fmt::format(" exempt={}", d.exempt_root); // it lifted what matched outside
        }
    } else {
        line += fmt::format(" rule={} tier={} view={}", d.rule, patterns::to_string(d.tier),
                            guard::to_string(d.view));
        if (d.reading != patterns::Reading::Raw) {
            line += fmt::format(" reading={}", patterns::to_string(d.reading));
        }
        if (!d.exempt_root.empty()) {
            line += fmt::format(" exempt={}", d.exempt_root);
        }
        if (!d.reason.empty()) {
            line += fmt::format(" reason=\"{}\"", d.reason);
        }
    }
    std::printf("%s\n", one_line(line).c_str());
}

} // namespace

int cmd_check(const CheckArgs& args) {
    const auto op = guard::op_from_string(args.op);
    if (!op || *op == Op::Ioctl) {
        std::fprintf(stderr,
                     "guardfs check: unknown --op '%s' (write, create, mknod, mkdir, symlink, "
                     "link, unlink, rmdir, rename, exchange, open_write, truncate, chmod, chown, "
                     "utimes, setxattr, removexattr, fallocate, copy_file_range, lookup, "
                     "readdir, read)\n",
                     args.op.c_str());
        return kExitUsage;
    }
    const bool pairs =
        *op == Op::Rename || *op == Op::Exchange || *op == Op::Link || *op == Op::Symlink;
    if (args.paths.empty() || (pairs && args.paths.size() % 2 != 0)) {
        std::fprintf(stderr,
                     pairs ? "guardfs check: --op %s takes pairs of paths (%s)\n"
                           : "guardfs check: no PATH given%s%s\n",
                     pairs ? args.op.c_str() : "",
                     *op == Op::Symlink ? "TARGET LINK, as ln -s"
                     : *op == Op::Link  ? "EXISTING NEW, as ln"
                     : pairs            ? "FROM TO, as mv"
                                        : "");
        return kExitUsage;
    }
    dataroot::RealFs fs;
    auto policy = load_policy(args.choice, fs, true);
    if (!policy) {
        std::fprintf(stderr, "%s\n", policy.error().to_string().c_str());
        return kExitUsage;
    }
    guard::Judge judge(policy.value(), fs);
    const std::string cwd = base::current_dir();
    const std::size_t step = pairs ? 2 : 1;
    for (std::size_t i = 0; i < args.paths.size(); i += step) {
        guard::Request req;
        req.op = *op;
        std::vector<std::string> shown;
        std::vector<Built> built;
        if (*op == Op::Rename || *op == Op::Exchange) {
            built.push_back(make_target(args.paths[i], Role::RenameSource, false, true, fs, cwd));
            built.push_back(
                make_target(args.paths[i + 1], Role::RenameDestination, false, true, fs, cwd));
            // Rows pass through a renamed name only when a directory moves; a source that does
            // not exist is judged as one (the wide side).
            const bool dir_moves =
                !built[0].target.exists || built[0].target.kind == guard::Kind::Directory ||
                (*op == Op::Exchange && built[1].target.kind == guard::Kind::Directory);
            for (auto& b : built) {
                b.target.through = dir_moves;
            }
        } else if (*op == Op::Link) {
            built.push_back(make_target(args.paths[i], Role::ExistingNames, false, false, fs, cwd));
            built.push_back(make_target(args.paths[i + 1], Role::NewName, false, false, fs, cwd));
        } else if (*op == Op::Symlink) {
            // ln -s TARGET LINK: the link's name, and the target resolved against its directory.
            const std::string& target = args.paths[i];
            const std::string& link = args.paths[i + 1];
            Built name = make_target(link, Role::NewName, false, true, fs, cwd);
            const std::string link_abs = name.target.views.front().path;
            const std::string dir = link_abs.substr(0, link_abs.rfind('/'));
            const std::string target_raw =
                (!target.empty() && target.front() == '/') ? target : dir + "/" + target;
            Built to = make_target(target_raw, Role::LinkTarget, true, false, fs, cwd);
            for (auto& v : to.target.views) {
                v.view = v.view == guard::View::Spelled ? guard::View::LinkTarget
                                                        : guard::View::LinkTargetCanonical;
            }
            built.push_back(std::move(name));
            built.push_back(std::move(to));
        } else {
            built.push_back(
                make_target(args.paths[i], Role::Only, follows_last(*op), false, fs, cwd));
        }
        for (std::size_t k = 0; k < step; ++k) {
            shown.push_back(args.paths[i + k]);
        }
        std::string error;
        for (auto& b : built) {
            if (!b.error.empty() && error.empty()) {
                error = b.error;
            }
            req.targets.push_back(std::move(b.target));
        }
        Decision d;
        if (!error.empty()) {
            d.verdict = guard::Verdict::Deny;
            d.tier = guard::Tier::Internal;
            d.rule = "(unresolvable)";
            d.view = guard::View::Canonical;
            d.path = req.targets.front().views.front().path;
            d.reason = "where the target lands could not be determined: " + error;
        } else {
            d = judge.decide(req);
        }
        print(d, *op, shown, args.json);
    }
    return kExitOk;
}

} // namespace guardfs::app

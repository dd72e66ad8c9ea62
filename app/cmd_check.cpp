// guardfs check (design §10, §11): the verdict for paths, and the rule, tier and view behind it.
// Each path is judged as the FUSE layer would judge it, with the views that need no mount: the
// path as spelled, its canonical form, a symlink's target, and both ends of a rename or link.
#include "app/commands.hpp"
#include "base/io.hpp"
#include "base/path.hpp"
#include "dataroot/canonicalize.hpp"
#include "guard/git_config.hpp"
#include "guard/json_text.hpp"
#include "guard/judge.hpp"
#include "patterns/fold.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <optional>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

// The target of a symlink whose text is `text` and whose name is the absolute `link`: resolved
// against the link's directory, judged as the path it names (design §3).
Built link_target_of(const std::string& text, const std::string& link, dataroot::FsOps& fs,
                     const std::string& cwd) {
    const std::string dir = link.substr(0, link.rfind('/'));
    const std::string raw = (!text.empty() && text.front() == '/') ? text : dir + "/" + text;
    Built to = make_target(raw, Role::LinkTarget, true, false, fs, cwd);
    for (auto& v : to.target.views) {
        v.view = v.view == guard::View::Spelled ? guard::View::LinkTarget
                                                : guard::View::LinkTargetCanonical;
    }
    return to;
}

// A symlink at `link` that gets another name, `name` (moved or linked): a new symlink there, so
// its target, read from the link, is judged from `name`'s directory. Nothing when it cannot be
// read.
void add_moved_link_target(std::vector<Built>& built, const std::string& link,
                           const std::string& name, dataroot::FsOps& fs, const std::string& cwd) {
    std::string text;
    if (base::read_link_at(AT_FDCWD, link.c_str(), text) == 0) {
        Built to = link_target_of(text, name, fs, cwd);
        built.push_back(std::move(to));
    }
}

// A rename onto a git config is judged by the content that lands, as the mount judges it
// (docs/git-tier.md): the source must be a regular file with one name.
std::optional<guard::GitConfigChange> git_config_change(const Built& from, const Built& to) {
    if (to.target.views.empty() || !guard::is_git_config_path(to.target.views.back().path)) {
        return std::nullopt;
    }
    const std::string& src = from.target.views.back().path;

    struct stat st {};

    if (::lstat(src.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
        static_cast<std::size_t>(st.st_size) > guard::kMaxGitConfigBytes) {
        return std::nullopt;
    }
    auto read = [](const std::string& path, std::string& out) {
        const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
            return errno;
        }
        const int err = base::read_to_end(fd, out);
        ::close(fd);
        return out.size() > guard::kMaxGitConfigBytes ? EFBIG : err;
    };
    guard::GitConfigChange change;
    if (read(src, change.proposed) != 0) {
        return std::nullopt;
    }
    std::string current;
    if (const int err = read(to.target.views.back().path, current); err == 0) {
        change.current = std::move(current);
    } else if (err != ENOENT) {
        return std::nullopt;
    }
    return change;
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
    guard::Judge judge(policy.value(), fs, &guard::judge_git_config_change);
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
            // Rows pass through a renamed name only when a directory moves, or a symlink (it
            // may lead to one), as the mount judges it; a source that does not exist is judged
            // as one (the wide side).
            auto moves_like_dir = [](const Target& t) {
                return t.kind == guard::Kind::Directory || t.kind == guard::Kind::Symlink;
            };
            const bool dir_moves = !built[0].target.exists || moves_like_dir(built[0].target) ||
                                   (*op == Op::Exchange && moves_like_dir(built[1].target));
            for (auto& b : built) {
                b.target.through = dir_moves;
            }
            // A symlink that moves is a new symlink where it lands: its target is judged from
            // there (with RENAME_EXCHANGE either end moves).
            for (std::size_t from = 0; from < 2; ++from) {
                const std::size_t to = 1 - from;
                if (built[from].target.kind != guard::Kind::Symlink ||
                    (from == 1 && *op != Op::Exchange)) {
                    continue;
                }
                add_moved_link_target(built, built[from].target.views.front().path,
                                      built[to].target.views.front().path, fs, cwd);
            }
            if (*op == Op::Rename) {
                req.git_config = git_config_change(built[0], built[1]);
            }
        } else if (*op == Op::Link) {
            built.push_back(make_target(args.paths[i], Role::ExistingNames, false, false, fs, cwd));
            built.push_back(make_target(args.paths[i + 1], Role::NewName, false, false, fs, cwd));
            // A second name of a symlink is a new symlink there (ln -P): rows pass through it,
            // and its target is judged from its new directory.
            if (built[0].target.kind == guard::Kind::Symlink) {
                built[1].target.through = true;
                add_moved_link_target(built, built[0].target.views.front().path,
                                      built[1].target.views.front().path, fs, cwd);
            }
        } else if (*op == Op::Symlink) {
            // ln -s TARGET LINK: the link's name, and the target resolved against its directory.
            Built name = make_target(args.paths[i + 1], Role::NewName, false, true, fs, cwd);
            Built to = link_target_of(args.paths[i], name.target.views.front().path, fs, cwd);
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

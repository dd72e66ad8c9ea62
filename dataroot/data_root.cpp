// Data-root spellings, keys and containment; see data_root.hpp.
#include "dataroot/data_root.hpp"

#include "base/path.hpp"
#include "dataroot/canonicalize.hpp"

#include <algorithm>

namespace guardfs::dataroot {

namespace {

// p made absolute against base. With a ".." segment it is kept as written (joined, not
// collapsed): `ws/.sema/jump/../engine-data` with `jump` a symlink names a directory beside
// jump's target, and collapsing the text would exempt `ws/.sema/engine-data` instead.
std::string absolute_spelling(std::string_view p, std::string_view base) {
    if (!base::has_dotdot_segment(p)) {
        return base::lexical_absolute(p, base);
    }
    std::vector<std::string_view> segs;
    if (p.empty() || p.front() != '/') {
        base::append_segments(base, segs);
    }
    base::append_segments(p, segs);
    std::erase(segs, std::string_view("."));
    return base::join_absolute(segs);
}

} // namespace

std::vector<std::string> spellings(std::string_view value, std::string_view home,
                                   std::string_view start_dir) {
    std::vector<std::string> out;
    auto add = [&out](std::string s) {
        if (s == "/" || s.empty()) {
            return; // reduces to nothing: exempts nothing
        }
        if (std::find(out.begin(), out.end(), s) == out.end()) {
            out.push_back(std::move(s));
        }
    };
    if (value.empty()) {
        return out;
    }
    if (value.front() == '/') {
        add(absolute_spelling(value, "/"));
        return out;
    }
    if (value.front() == '~') {
        const bool plain_tilde = value.size() == 1 || value[1] == '/';
        if (plain_tilde && !home.empty() && home.front() == '/') {
            add(absolute_spelling(std::string(home) + "/" + std::string(value.substr(1)), "/"));
        }
    }
    if (!start_dir.empty() && start_dir.front() == '/') {
        add(absolute_spelling(value, start_dir));
    }
    return out;
}

std::optional<std::size_t> inside_root(std::string_view target, std::string_view root) noexcept {
    if (root.empty() || root == "/" || root.front() != '/' || root.back() == '/') {
        return std::nullopt;
    }
    if (target.size() < root.size() || target.substr(0, root.size()) != root) {
        return std::nullopt;
    }
    if (target.size() > root.size() && target[root.size()] != '/') {
        return std::nullopt; // "<root>x" and "<root>-x" are not inside
    }
    std::size_t segs = 0;
    for (const char c : root) {
        segs += c == '/' ? 1U : 0U;
    }
    return segs;
}

DataRoots::DataRoots(std::vector<std::string> spellings) : spellings_(std::move(spellings)) {}

std::vector<std::string> DataRoots::keys(FsOps& fs) const {
    std::vector<std::string> out;
    auto add = [&out](std::string s) {
        if (s != "/" && !s.empty() && std::find(out.begin(), out.end(), s) == out.end()) {
            out.push_back(std::move(s));
        }
    };
    for (const std::string& s : spellings_) {
        auto canonical = canonicalize_existing(s, fs);
        FileKind kind = FileKind::Missing;
        if (!canonical || fs.lstat_kind(canonical.value(), kind) != 0 ||
            kind != FileKind::Directory) {
            continue; // cannot be resolved, or no directory: exempts nothing
        }
        if (!base::has_dotdot_segment(s)) {
            add(base::lexical_absolute(s, "/"));
        }
        add(std::move(canonical.value()));
    }
    // The same directories as a judged view may spell them (under a mount point and under its
    // workspace): the same files, so no wider.
    const std::size_t own = out.size();
    for (std::size_t i = 0; i < own; ++i) {
        for (std::string& alias : fs.aliases(out[i])) {
            add(std::move(alias));
        }
    }
    return out;
}

} // namespace guardfs::dataroot

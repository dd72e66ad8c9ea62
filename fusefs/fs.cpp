// Paths and views for the guard; see fs.hpp.
#include "fusefs/fs.hpp"

#include "base/io.hpp"
#include "base/path.hpp"
#include "dataroot/canonicalize.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <string_view>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace guardfs::fusefs {

namespace {

constexpr std::string_view kDeleted = " (deleted)";

} // namespace

bool under(std::string_view path, std::string_view root) {
    return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                            (root == "/" || path[root.size()] == '/'));
}

bool UnderlyingFs::relative(const std::string& abs_path, std::string& rel) const {
    for (const std::string* root : {&cfg_.mount_spelled, &cfg_.mount_real, &cfg_.ws_real}) {
        if (!under(abs_path, *root)) {
            continue;
        }
        const std::size_t skip = *root == "/" ? 1 : root->size() + 1;
        rel = abs_path.size() <= skip ? std::string(".") : abs_path.substr(skip);
        return true;
    }
    return false;
}

std::vector<std::string> UnderlyingFs::aliases(const std::string& abs_path) const {
    // The mount point as given, its real path, and the workspace: each is the same tree.
    const std::array<const std::string*, 3> roots{&cfg_.mount_spelled, &cfg_.mount_real,
                                                  &cfg_.ws_real};
    std::vector<std::string> out;
    for (const std::string* from : roots) {
        if (from->empty() || !under(abs_path, *from)) {
            continue;
        }
        const std::string_view rest =
            std::string_view(abs_path).substr(std::min(abs_path.size(), from->size()));
        for (const std::string* to : roots) {
            if (to->empty() || *to == *from) {
                continue;
            }
            std::string other = *to == "/" ? std::string() : *to;
            if (*from == "/") {
                other += abs_path == "/" ? std::string_view() : std::string_view(abs_path);
            } else {
                other += rest;
            }
            if (other.empty()) {
                other = "/";
            }
            if (other != abs_path && std::find(out.begin(), out.end(), other) == out.end()) {
                out.push_back(std::move(other));
            }
        }
    }
    return out;
}

int UnderlyingFs::lstat_kind(const std::string& abs_path, dataroot::FileKind& kind) {
    std::string rel;

    struct stat st {};

    int rc = 0;
    if (relative(abs_path, rel)) {
        rc = ::fstatat(root_fd_, rel.c_str(), &st, AT_SYMLINK_NOFOLLOW);
    } else {
        rc = ::lstat(abs_path.c_str(), &st);
    }
    if (rc != 0) {
        const int err = errno;
        if (err == ENOENT) {
            kind = dataroot::FileKind::Missing;
            return 0;
        }
        return err;
    }
    kind = S_ISDIR(st.st_mode)   ? dataroot::FileKind::Directory
           : S_ISLNK(st.st_mode) ? dataroot::FileKind::Symlink
                                 : dataroot::FileKind::Other;
    return 0;
}

int UnderlyingFs::read_link(const std::string& abs_path, std::string& target) {
    std::string rel;
    if (relative(abs_path, rel)) {
        return base::read_link_at(root_fd_, rel.c_str(), target);
    }
    return base::read_link_at(AT_FDCWD, abs_path.c_str(), target);
}

int UnderlyingFs::identity(const std::string& abs_path, dev_t& dev, ino_t& ino) {
    // Resolve component by component through this object, so a symlink that leads back under
    // the mount point is followed in the underlying tree and never through the mount.
    auto canonical = dataroot::canonicalize_existing(abs_path, *this);
    if (!canonical) {
        return canonical.error().sys_errno != 0 ? canonical.error().sys_errno : ENOENT;
    }
    std::string rel;

    struct stat st {};

    int rc = 0;
    if (relative(canonical.value(), rel)) {
        rc = ::fstatat(root_fd_, rel.c_str(), &st, AT_SYMLINK_NOFOLLOW);
    } else {
        rc = ::lstat(canonical.value().c_str(), &st);
    }
    if (rc != 0) {
        return errno;
    }
    dev = st.st_dev;
    ino = st.st_ino;
    return 0;
}

std::pair<int, std::string> UnderlyingHostFiles::locate(const std::string& path) const {
    for (const std::string* root : {&cfg_.mount_spelled, &cfg_.mount_real, &cfg_.ws_real}) {
        if (under(path, *root) && path != *root) {
            return {root_fd_, path.substr(*root == "/" ? 1 : root->size() + 1)};
        }
    }
    return {AT_FDCWD, path};
}

int UnderlyingHostFiles::open_append(const std::string& path) {
    const auto [dir, rel] = locate(path);
    return guard::open_append_at(dir, rel);
}

int UnderlyingHostFiles::replace(const std::string& path, std::string_view content) {
    const auto [dir, rel] = locate(path);
    const int err = guard::replace_at(dir, rel, content);
    if (err == 0 && dir == root_fd_ && on_replaced) {
        on_replaced(rel);
    }
    return err;
}

int UnderlyingHostFiles::read(const std::string& path, std::string& out) {
    const auto [dir, rel] = locate(path);
    return guard::read_at(dir, rel, out);
}

OpenHandles::~OpenHandles() {
    while (head_.next_ != nullptr) {
        OpenHandle* h = head_.next_;
        remove(*h);
        delete h; // NOLINT: a FileHandle the kernel never released, owned by the list now
    }
}

void OpenHandles::add(OpenHandle& h) noexcept {
    std::lock_guard<std::mutex> lock(m_);
    h.prev_ = &head_;
    h.next_ = head_.next_;
    if (head_.next_ != nullptr) {
        head_.next_->prev_ = &h;
    }
    head_.next_ = &h;
}

void OpenHandles::remove(OpenHandle& h) noexcept {
    std::lock_guard<std::mutex> lock(m_);
    if (h.prev_ == nullptr) {
        return; // not linked
    }
    h.prev_->next_ = h.next_;
    if (h.next_ != nullptr) {
        h.next_->prev_ = h.prev_;
    }
    h.prev_ = nullptr;
    h.next_ = nullptr;
}

ProcAt::ProcAt(int proc_fds, int fd) noexcept : dir_(proc_fds >= 0 ? proc_fds : AT_FDCWD) {
    // to_chars rather than fmt: this runs on nearly every request (fmt's int path cost ~70
    // instructions a call by callgrind, 1% of the daemon's on untar + rm -rf).
    char* out = buf_.data();
    if (proc_fds < 0) {
        constexpr std::string_view kProcFds = "/proc/self/fd/";
        out = std::copy(kProcFds.begin(), kProcFds.end(), out);
    }
    out = std::to_chars(out, buf_.data() + buf_.size() - 1, fd).ptr; // 32 bytes: always fits
    *out = '\0';
}

namespace {

// underlying_path of a detached inode (Inode::fd): the path of the directory it was last looked
// up in and its name there, while that name leads to it. ENOENT otherwise.
int detached_path(Fs& fs, const Inode& inode, std::string& out) {
    std::string name;
    Inode* parent = fs.inodes.pin_parent(inode, name);
    if (parent == nullptr) {
        return ENOENT;
    }
    int err = underlying_path(fs, *parent, out);

    struct stat st {};

    if (err == 0 && (::fstatat(parent->fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
                     st.st_dev != inode.dev || st.st_ino != inode.ino)) {
        err = ENOENT; // renamed or removed where the mount did not see it
    }
    fs.inodes.forget(fs.inodes.id_of(*parent), 1);
    if (err == 0) {
        if (out != "/") {
            out += '/';
        }
        out += name;
    }
    return err;
}

} // namespace

int underlying_path(Fs& fs, const Inode& inode, std::string& out) {
    if (&inode == &fs.inodes.root()) {
        out = fs.cfg.ws_real;
        return 0;
    }
    if (!inode.fd.valid()) {
        return detached_path(fs, inode, out);
    }
    const ProcAt proc(fs, inode.fd.get());
    // Not zeroed (4 KiB on every judged request): only the n bytes readlinkat fills are read.
    std::array<char, 4097> buf; // NOLINT(cppcoreguidelines-pro-type-member-init)
    const ssize_t n = ::readlinkat(proc.dir(), proc.name(), buf.data(), buf.size());
    if (n < 0) {
        return errno;
    }
    if (static_cast<std::size_t>(n) >= buf.size()) {
        return ENAMETOOLONG;
    }
    out.assign(buf.data(), static_cast<std::size_t>(n));
    if (out.size() > kDeleted.size() &&
        std::string_view(out).substr(out.size() - kDeleted.size()) == kDeleted) {
        // The kernel marks an unlinked dentry so; a live file may also be named like that.
        struct stat st {};

        if (::fstatat(inode.fd.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0 ||
            st.st_nlink == 0 || (S_ISDIR(st.st_mode) && st.st_nlink < 2)) {
            return ENOENT;
        }

        // A live file whose name the daemon held it by was removed (underneath, or through the
        // mount while another name keeps it): judged by that former name, one the guard has
        // seen for it (design §3); the names it was looked up by since are its other views.
        struct stat named {};

        const std::size_t rel = fs.cfg.ws_real == "/" ? 1 : fs.cfg.ws_real.size() + 1;
        if (!under(out, fs.cfg.ws_real) || out.size() <= rel ||
            ::fstatat(fs.inodes.root().fd.get(), out.c_str() + rel, &named, AT_SYMLINK_NOFOLLOW) !=
                0 ||
            named.st_dev != st.st_dev || named.st_ino != st.st_ino) {
            out.resize(out.size() - kDeleted.size());
        }
    }
    if (!under(out, fs.cfg.ws_real)) {
        return EXDEV;
    }
    return 0;
}

void add_views(const Fs& fs, std::string_view canonical, guard::Target& target,
               guard::View spelled_view) {
    // The part below the workspace, "" for the workspace itself, else beginning with '/'.
    const std::string_view rel = fs.cfg.ws_real == "/"
                                     ? (canonical == "/" ? std::string_view() : canonical)
                                     : canonical.substr(fs.cfg.ws_real.size());
    std::string spelled = fs.cfg.mount_spelled;
    if (spelled == "/" && !rel.empty()) {
        spelled.clear();
    }
    spelled.append(rel);
    if (spelled.empty()) {
        spelled = "/";
    }
    const bool differ = spelled != canonical;
    target.views.push_back(guard::PathView{std::move(spelled), spelled_view});
    if (differ) {
        // Another name's two spellings are both that other name (an approver's answer is kept
        // for the asking name's spellings alone: guard/arbiter.cpp).
        target.views.push_back(
            guard::PathView{std::string(canonical), spelled_view == guard::View::OtherName
                                                        ? guard::View::OtherName
                                                        : guard::View::Canonical});
    }
}

WriteSeal::WriteSeal(Fs& fs, dev_t dev, ino_t ino) : fs_(fs), dev_(dev), ino_(ino) {
    std::lock_guard<std::mutex> lock(fs_.sealed_m);
    fs_.sealed.emplace_back(dev, ino);
    fs_.sealed_count.fetch_add(1); // seq_cst: before the sealer reads open_writers
}

WriteSeal::~WriteSeal() {
    std::lock_guard<std::mutex> lock(fs_.sealed_m);
    const auto at = std::find(fs_.sealed.begin(), fs_.sealed.end(), std::pair{dev_, ino_});
    if (at != fs_.sealed.end()) {
        fs_.sealed.erase(at);
        fs_.sealed_count.fetch_sub(1);
    }
}

bool write_sealed(Fs& fs, dev_t dev, ino_t ino) noexcept {
    if (fs.sealed_count.load() == 0) { // seq_cst: after the opener counted itself
        return false;
    }
    std::lock_guard<std::mutex> lock(fs.sealed_m);
    return std::find(fs.sealed.begin(), fs.sealed.end(), std::pair{dev, ino}) != fs.sealed.end();
}

patterns::Verdict name_verdict(Fs& fs, const std::string& path) {
    guard::Request r;
    r.op = guard::Op::OpenWrite;
    r.targets.emplace_back();
    r.targets.back().exists = true;
    r.targets.back().kind = guard::Kind::File;
    add_views(fs, path, r.targets.back());
    return fs.arbiter->judge().decide(r).verdict;
}

void remember_name(Fs& fs, Inode& inode, std::string path) {
    {
        std::lock_guard<std::mutex> lock(inode.m);
        if (std::find(inode.names.begin(), inode.names.end(), path) != inode.names.end()) {
            return;
        }
        if (inode.names.size() < Inode::kMaxNames) {
            inode.names.push_back(std::move(path));
            return;
        }
    }
    // Full (a file with more than kMaxNames names seen): until 2026-12-07 the new name was
    // dropped, so 33 links made first kept a guarded name looked up later out of the verdict.
    // The new name takes the place of the weakest kept one when it is stronger (a deny name
    // over an ask name too: the inode carries the strongest verdict of its names).
    const patterns::Verdict strength = name_verdict(fs, path);
    if (strength == patterns::Verdict::Allow) {
        return; // adds nothing to the verdict
    }
    // Another thread may change the names between the look and the swap: look again then.
    for (int attempt = 0; attempt < 4; ++attempt) {
        std::vector<std::string> kept;
        {
            std::lock_guard<std::mutex> lock(inode.m);
            kept = inode.names;
        }
        auto weakest = kept.end();
        patterns::Verdict weakest_verdict = strength;
        for (auto it = kept.begin(); it != kept.end(); ++it) {
            if (const patterns::Verdict v = name_verdict(fs, *it); v < weakest_verdict) {
                weakest = it;
                weakest_verdict = v;
                if (v == patterns::Verdict::Allow) {
                    break;
                }
            }
        }
        if (weakest == kept.end()) {
            return; // every kept name is as strong already
        }
        std::lock_guard<std::mutex> lock(inode.m);
        if (std::find(inode.names.begin(), inode.names.end(), path) != inode.names.end()) {
            return;
        }
        if (const auto at = std::find(inode.names.begin(), inode.names.end(), *weakest);
            at != inode.names.end()) {
            *at = std::move(path);
            return;
        }
    }
}

int target_of_inode(Fs& fs, Inode& inode, guard::Target& target) {
    std::string path;
    if (const int err = underlying_path(fs, inode, path); err != 0) {
        return err;
    }
    add_views(fs, path, target);
    if (path.size() > kDeleted.size() &&
        std::string_view(path).substr(path.size() - kDeleted.size()) == kDeleted) {
        // A live file really named so (underlying_path checked): it may have been renamed onto
        // the kernel's mark of its own former name, which is judged too.
        add_views(fs, path.substr(0, path.size() - kDeleted.size()), target,
                  guard::View::OtherName);
    }
    target.exists = true;
    target.kind = S_ISDIR(inode.type)   ? guard::Kind::Directory
                  : S_ISLNK(inode.type) ? guard::Kind::Symlink
                  : S_ISREG(inode.type) ? guard::Kind::File
                                        : guard::Kind::Other;
    target.identity = guard::FileId{inode.dev, inode.ino};
    std::lock_guard<std::mutex> lock(inode.m);
    bool other_names = false;
    for (const std::string& name : inode.names) {
        if (name != path && under(name, fs.cfg.ws_real)) {
            add_views(fs, name, target, guard::View::OtherName);
            other_names = true;
        }
    }
    target.settled =
        inode.settled != 0 && !other_names && inode.settled_path == path ? inode.settled : 0;
    return 0;
}

int target_of_entry(Fs& fs, const Inode& parent, std::string_view name, guard::Target& target) {
    if (name.starts_with(kGitConfigTmpPrefix)) {
        return EACCES; // the daemon's own name for a judged git config on its way into place
    }
    std::string path;
    if (const int err = underlying_path(fs, parent, path); err != 0) {
        return err;
    }
    if (path != "/") {
        path += '/';
    }
    path.append(name);
    add_views(fs, path, target);
    target.settled = fs.settled_paths.find(path);
    return 0;
}

} // namespace guardfs::fusefs

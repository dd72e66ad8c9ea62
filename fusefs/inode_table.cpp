// The inode table; see inode_table.hpp.
#include "fusefs/inode_table.hpp"

#include <fuse_lowlevel.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>
#include <new>
#include <string>

#include <fcntl.h>
#include <unistd.h>

namespace guardfs::fusefs {

InodeTable::InodeTable(base::UniqueFd root_fd, const struct stat& st) {
    root_.fd = std::move(root_fd);
    root_.dev = st.st_dev;
    root_.ino = st.st_ino;
    root_.type = st.st_mode & S_IFMT;
    root_.nlookup = 1;
}

Inode& InodeTable::get(std::uint64_t ino) noexcept {
    if (ino == FUSE_ROOT_ID) {
        return root_;
    }
    return *reinterpret_cast<Inode*>(ino); // NOLINT: the id is the address (id_of)
}

std::uint64_t InodeTable::id_of(const Inode& inode) const noexcept {
    if (&inode == &root_) {
        return FUSE_ROOT_ID;
    }
    static_assert(sizeof(std::uint64_t) >= sizeof(void*), "an address must fit a fuse_ino_t");
    return reinterpret_cast<std::uint64_t>(&inode); // NOLINT: stable: the map holds unique_ptrs
}

Inode& InodeTable::acquire(base::UniqueFd fd, const struct stat& st) {
    if (st.st_dev == root_.dev && st.st_ino == root_.ino) {
        return root_; // the workspace itself, reached again (e.g. through "..")
    }
    std::lock_guard<std::mutex> lock(mutex_);
    auto [it, inserted] = map_.try_emplace(Key{st.st_dev, st.st_ino});
    if (inserted) {
        it->second = std::make_unique<Inode>();
        Inode& in = *it->second;
        in.fd = std::move(fd);
        in.dev = st.st_dev;
        in.ino = st.st_ino;
        in.type = st.st_mode & S_IFMT;
        count_.fetch_add(1, std::memory_order_relaxed);
        if (!in.fd.valid()) {
            detached_.fetch_add(1, std::memory_order_relaxed);
        }
        if (auto kept = kept_names_.find(it->first); kept != kept_names_.end()) {
            if (st.st_nlink > 1) {
                in.names = std::move(kept->second.names); // not yet shared: no lock needed
            }
            pinned_ -= kept->second.pinned ? 1U : 0U;
            kept_names_.erase(kept); // with one link left, that one is its only name
        }
    }
    Inode& in = *it->second;
    ++in.nlookup;
    return in;
}

Inode* InodeTable::acquire_known(const struct stat& st) {
    if (st.st_dev == root_.dev && st.st_ino == root_.ino) {
        return &root_;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = map_.find(Key{st.st_dev, st.st_ino});
    if (it == map_.end()) {
        return nullptr;
    }
    ++it->second->nlookup;
    return it->second.get();
}

std::optional<std::uint64_t> InodeTable::find(dev_t dev, ino_t ino) {
    if (dev == root_.dev && ino == root_.ino) {
        return FUSE_ROOT_ID;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = map_.find(Key{dev, ino});
    if (it == map_.end()) {
        return std::nullopt;
    }
    return id_of(*it->second);
}

void InodeTable::add_lookup(Inode& inode) {
    if (&inode == &root_) {
        return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    ++inode.nlookup;
}

void InodeTable::forget(std::uint64_t ino, std::uint64_t n) noexcept {
    if (ino == FUSE_ROOT_ID) {
        return;
    }
    Inode& in = get(ino);
    std::unique_ptr<Inode> dying; // destroyed (fd closed) after the lock is dropped
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (n > in.nlookup) {
            std::abort(); // a kernel/bookkeeping disagreement: continuing would corrupt inodes
        }
        in.nlookup -= n;
        if (in.nlookup == 0) {
            auto it = map_.find(Key{in.dev, in.ino});
            if (it != map_.end()) {
                dying = std::move(it->second);
                map_.erase(it);
                count_.fetch_sub(1, std::memory_order_relaxed);
                if (!dying->fd.valid()) {
                    detached_.fetch_sub(1, std::memory_order_relaxed);
                }
                keep_names(*dying);
            }
        }
    }
}

void InodeTable::keep_names(Inode& dying) noexcept {
    std::lock_guard<std::mutex> lock(dying.m);
    if (dying.names.empty()) {
        return;
    }
    try {
        const Key key{dying.dev, dying.ino};
        const std::uint64_t seq = ++kept_seq_;
        kept_order_.emplace_back(key, seq);
        if (const auto old = kept_names_.find(key); old != kept_names_.end()) {
            pinned_ -= old->second.pinned ? 1U : 0U; // an inode number passed to another file
        }
        kept_names_.insert_or_assign(key, Kept{seq, std::move(dying.names)});
        auto current = [this](const std::pair<Key, std::uint64_t>& o) {
            const auto at = kept_names_.find(o.first);
            return at != kept_names_.end() && at->second.seq == o.second;
        };
        while (kept_names_.size() - pinned_ > kKeptNamesMax && !kept_order_.empty()) {
            const auto oldest = kept_order_.front();
            kept_order_.pop_front();
            const auto at = kept_names_.find(oldest.first);
            if (at == kept_names_.end() || at->second.seq != oldest.second) {
                continue; // stale: given back or kept again since
            }
            if (guarded_names_ && guarded_names_(at->second.names)) {
                at->second.pinned = true;
                ++pinned_;
                continue;
            }
            kept_names_.erase(at);
        }
        if (kept_order_.size() > 2 * kKeptNamesMax) {
            std::erase_if(kept_order_, [&](const auto& o) { return !current(o); });
        }
    } catch (const std::bad_alloc&) {
        // out of memory: the names are lost, as they were before they were kept
    }
}

bool InodeTable::touch(Inode& inode, const Inode& parent, std::string_view name) {
    if (&inode == &root_) {
        return false;
    }
    inode.stamp.store(clock_.fetch_add(1, std::memory_order_relaxed) + 1,
                      std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(inode.m);
    const bool elsewhere =
        inode.has_parent && (inode.parent_dev != parent.dev || inode.parent_ino != parent.ino ||
                             inode.entry_name != name);
    inode.has_parent = true;
    inode.parent_dev = parent.dev;
    inode.parent_ino = parent.ino;
    if (inode.entry_name != name) {
        inode.entry_name.assign(name);
    }
    return elsewhere;
}

void InodeTable::touch_known(dev_t dev, ino_t ino, const Inode& parent, std::string_view name) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = map_.find(Key{dev, ino}); it != map_.end()) {
        touch(*it->second, parent, name); // an inode's lock is taken after the table's
    }
}

Inode* InodeTable::pin_parent(const Inode& inode, std::string& name) {
    std::lock_guard<std::mutex> lock(mutex_);
    Key key{};
    {
        std::lock_guard<std::mutex> inode_lock(inode.m);
        if (!inode.has_parent) {
            return nullptr;
        }
        key = Key{inode.parent_dev, inode.parent_ino};
        name = inode.entry_name;
    }
    if (key.dev == root_.dev && key.ino == root_.ino) {
        return &root_;
    }
    const auto it = map_.find(key);
    if (it == map_.end() || !S_ISDIR(it->second->type) || !it->second->fd.valid()) {
        return nullptr;
    }
    ++it->second->nlookup;
    return it->second.get();
}

std::vector<InodeTable::Entry>
InodeTable::reclaim_candidates(std::size_t n, const std::unordered_set<std::string>* in_use) {
    struct Candidate {
        bool dir;
        bool hot; // in the directory of the latest lookup
        std::uint64_t stamp;
        Inode* inode;
        Key parent;
    };

    std::vector<Candidate> all;
    std::vector<Entry> out;
    std::lock_guard<std::mutex> lock(mutex_);
    // The directory of the latest lookup is probably being walked now. Dropping an entry needs
    // the kernel's exclusive lock on its directory, which the walk's lookups keep taking: each
    // such drop waited about 6 ms while the walk looked up some 200 names more, and a walk of
    // 3,000 files under a limit of 1,024 outran the reclaimer. Its entries go last.
    Key hot_dir{};
    std::uint64_t latest = 0;
    all.reserve(map_.size());
    for (auto& [key, ptr] : map_) {
        Inode& in = *ptr;
        const std::uint64_t stamp = in.stamp.load(std::memory_order_relaxed);
        std::lock_guard<std::mutex> inode_lock(in.m);
        const Key parent{in.parent_dev, in.parent_ino};
        if (stamp > latest) {
            latest = stamp;
            hot_dir = parent;
        }
        if (in.nopen == 0 && in.has_parent && in.reclaim_asked != stamp &&
            (in_use != nullptr || !S_ISDIR(in.type))) {
            all.push_back(Candidate{S_ISDIR(in.type), false, stamp, &in, parent});
        }
    }
    for (Candidate& c : all) {
        c.hot = c.parent == hot_dir;
    }
    n = std::min(n, all.size());
    const auto older = [](const Candidate& a, const Candidate& b) {
        if (a.dir != b.dir) {
            return !a.dir;
        }
        return a.hot != b.hot ? !a.hot : a.stamp < b.stamp;
    };
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(), older);
    out.reserve(n);
    std::array<char, PATH_MAX + 1> buf{};
    for (std::size_t i = 0; i < n; ++i) {
        Inode& in = *all[i].inode;
        std::lock_guard<std::mutex> inode_lock(in.m);
        in.reclaim_asked = all[i].stamp;
        const Inode* parent = nullptr;
        if (in.parent_dev == root_.dev && in.parent_ino == root_.ino) {
            parent = &root_;
        } else if (const auto it = map_.find(Key{in.parent_dev, in.parent_ino}); it != map_.end()) {
            parent = it->second.get();
        }
        if (parent == nullptr || !S_ISDIR(parent->type)) {
            continue; // the kernel forgot the parent: no entry of it to drop
        }

        struct stat st {};

        if (::fstatat(parent->fd.get(), in.entry_name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            st.st_dev != in.dev || st.st_ino != in.ino) {
            continue; // renamed or removed since: the name may lead elsewhere now
        }
        if (all[i].dir) {
            // A directory that is some process's working or root directory keeps its entry:
            // dropped, it would be unhashed and getcwd() there would fail with ENOENT.
            const std::string proc = "/proc/self/fd/" + std::to_string(in.fd.get());
            const ssize_t len = ::readlink(proc.c_str(), buf.data(), buf.size() - 1);
            if (len <= 0 ||
                in_use->count(std::string(buf.data(), static_cast<std::size_t>(len))) != 0) {
                continue;
            }
        }
        out.push_back(Entry{id_of(*parent), in.entry_name});
    }
    return out;
}

std::size_t InodeTable::size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return map_.size();
}

} // namespace guardfs::fusefs

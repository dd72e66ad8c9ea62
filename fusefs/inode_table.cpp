// The inode table; see inode_table.hpp.
#include "fusefs/inode_table.hpp"

#include <fuse_lowlevel.h>

#include <cstdlib>

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
    }
    Inode& in = *it->second;
    ++in.nlookup;
    return in;
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
            }
        }
    }
}

std::size_t InodeTable::size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return map_.size();
}

} // namespace guardfs::fusefs

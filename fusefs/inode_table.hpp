// The inode table (design §9, style guide B.7): every inode the kernel knows, keyed by the
// underlying (st_dev, st_ino), each held as an O_PATH descriptor with its lookup count.
//
// Locking: InodeTable::mutex_ guards the map and every Inode::nlookup; it is taken before any
// Inode::m, never after. No lock is held across a system call made on behalf of a request, the
// gate, or a fuse_reply_*. The decision "lookup count reached zero, erase" is made under the
// table lock, so a concurrent lookup cannot revive a dying inode.
#pragma once

#include "base/unique_fd.hpp"

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <sys/stat.h>

namespace guardfs::fusefs {

// A directory listing left where the last READDIR stopped (fusefs/ops_dir.cpp): the kernel fills
// its listing cache in sequence, and the next request continues here without opening the
// directory again or seeking (a seek is O(offset) on overlayfs, and reopening an overlayfs
// directory merges its layers again).
struct Listing {
    base::UniqueFd fd;     // the directory, open for reading
    std::int64_t next = 0; // the offset the kernel asks for to continue
    bool at_end = false;   // fd has no entries left after raw[pos, len)
    // dirent64 records read from fd (8-byte aligned), raw_bytes long; not zeroed, as
    // getdents64 fills what it reports
    std::unique_ptr<std::uint64_t[]> raw;
    std::size_t raw_bytes = 0;
    std::size_t pos = 0, len = 0; // the bytes of raw not yet handed out: [pos, len)
};

struct Inode {
    // O_PATH | O_NOFOLLOW, set when the inode enters the table and never changed or closed while
    // it is there. Invalid for a *detached* inode: a non-directory looked up above the
    // reclaimer's mark or out of descriptors (fusefs/ops_common.cpp: do_lookup), reached again
    // through the directory and name of its last lookup for each use (InodeFd). A directory is
    // never detached.
    base::UniqueFd fd;
    dev_t dev = 0;
    ino_t ino = 0;
    mode_t type = 0;                        // S_IFMT bits
    std::uint64_t nlookup = 0;              // protected by InodeTable::mutex_
    std::atomic<bool> write_granted{false}; // some open of it was granted a write
    std::atomic<int> open_writers{0};       // handles open now with a write grant
    // Judged renames that put this file in place as a git config (do_rename), counted before
    // its WriteSeal goes: an open, truncate or link judged by its names before then is refused
    // (landed_since).
    std::atomic<std::uint32_t> landings{0};

    std::atomic<std::uint64_t> stamp{0}; // when the kernel last looked it up (a sequence number)

    mutable std::mutex m;           // protects the members below; after InodeTable::mutex_
    std::vector<std::string> names; // underlying paths seen for a file with several links
    std::uint64_t nopen = 0;
    // Where the kernel last looked it up: the parent's identity (not its FUSE id, an address
    // that may since belong to another inode) and the name in it (the dentry to invalidate).
    bool has_parent = false;
    dev_t parent_dev = 0;
    ino_t parent_ino = 0;
    std::string entry_name;
    std::uint64_t reclaim_asked = 0; // the stamp at which the kernel was asked to forget it
    // A directory's unfinished listing, taken out while a READDIR uses it (one at a time).
    std::unique_ptr<Listing> listing;
    // The guard's Decision::settled token for the operation that made this file or directory at
    // settled_path (an underlying path), nothing matched there for any operation: a later
    // request about this inode while that is still its only path carries it
    // (target_of_inode), and the judge does not walk the path again while the token holds.
    std::uint64_t settled = 0;
    std::string settled_path;
    // FUSE passthrough (docs/decisions/011). The kernel wants every open handle of an inode on
    // the same backing file, or none: the registration the open handles use (0: none, they use
    // the page cache), kept until the last is released.
    int backing_id = 0;
    std::uint32_t pt_writers = 0;  // handles on the backing file that may write
    uid_t pt_writer_uid = 0;       // who opened them, when that is one user
    bool pt_writers_mixed = false; // ... and when it is several
    bool pages_stale = false;      // data changed behind the page cache since it was filled

    // At most this many names are remembered per inode (design §3: every name seen).
    static constexpr std::size_t kMaxNames = 32;
};

class InodeTable {
public:
    // root_fd is the workspace opened with O_PATH before the mount; st describes it.
    InodeTable(base::UniqueFd root_fd, const struct stat& st);

    InodeTable(const InodeTable&) = delete;
    InodeTable& operator=(const InodeTable&) = delete;

    [[nodiscard]] Inode& root() noexcept { return root_; }

    [[nodiscard]] const Inode& root() const noexcept { return root_; }

    // The inode behind a FUSE inode number. The kernel never names one we have forgotten.
    [[nodiscard]] Inode& get(std::uint64_t ino) noexcept;

    [[nodiscard]] std::uint64_t id_of(const Inode& inode) const noexcept;

    // The inode for (st.st_dev, st.st_ino), inserted with `fd` when new (fd is closed when an
    // inode already exists). Its lookup count is raised by one. Throws std::bad_alloc only.
    Inode& acquire(base::UniqueFd fd, const struct stat& st);

    // The FUSE inode number of (dev, ino) when the kernel knows it, else nullopt.
    [[nodiscard]] std::optional<std::uint64_t> find(dev_t dev, ino_t ino);

    // The inode for (st.st_dev, st.st_ino) when it is in the table, its lookup count raised by
    // one; nullptr when it is not (nothing is inserted). The table's descriptor keeps the
    // inode alive, so its number cannot have passed to another file since `st` was taken.
    [[nodiscard]] Inode* acquire_known(const struct stat& st);

    // Raises the lookup count of a known inode by one (a hard link's new entry).
    void add_lookup(Inode& inode);

    // Lowers the lookup count by n; erases the inode (closing its fd) when it reaches zero.
    void forget(std::uint64_t ino, std::uint64_t n) noexcept;

    // Tells the table which kept names are guarded (some name is not let through by the
    // policy): those are never given up when kKeptNamesMax is passed. Set before the session
    // starts. Called under the table's lock, only when an entry is about to be given up.
    void set_guarded_names(std::function<bool(const std::vector<std::string>&)> guarded) {
        guarded_names_ = std::move(guarded);
    }

    [[nodiscard]] std::size_t size();

    // The number of inodes in the table, without the lock (for the reclaimer's quick checks).
    [[nodiscard]] std::size_t approx_size() const noexcept {
        return count_.load(std::memory_order_relaxed);
    }

    // Whether any inode in the table is detached (Inode::fd): counted under mutex_ as inodes
    // enter and leave it.
    [[nodiscard]] bool has_detached() const noexcept {
        return detached_.load(std::memory_order_relaxed) != 0;
    }

    // Records that the kernel looked `inode` up as `name` in the directory `parent`, now (also
    // after a rename through the mount, which moves the kernel's entry without a lookup). True
    // when it had been recorded under another directory or name before.
    bool touch(Inode& inode, const Inode& parent, std::string_view name);

    // touch() for the inode of this identity, if the table holds one, under the table's lock
    // (no reference is taken or given back).
    void touch_known(dev_t dev, ino_t ino, const Inode& parent, std::string_view name);

    // The directory `inode` was last looked up in, with its lookup count raised by one so that
    // it stays in the table (give it back with forget(id_of(*parent), 1); the root is never
    // forgotten), and the name there; nullptr when that directory is no longer in the table.
    Inode* pin_parent(const Inode& inode, std::string& name);

    // A kernel entry whose invalidation lets the kernel forget an inode.
    struct Entry {
        std::uint64_t parent_id;
        std::string name;
    };

    // Up to n entries for the least recently looked-up inodes that no handle holds open:
    // non-directories before directories, none asked for already since its last lookup, and no
    // directory whose underlying path is in `in_use` (processes' working and root directories,
    // which a dropped entry would unhash); no directory at all when `in_use` is null. Each is
    // marked asked. An entry is given only while its parent is in the table and its name there
    // still leads to the inode on disk: a renamed file's old name may now be another file or a
    // directory.
    std::vector<Entry> reclaim_candidates(std::size_t n,
                                          const std::unordered_set<std::string>* in_use);

private:
    struct Key {
        dev_t dev;
        ino_t ino;
        friend bool operator==(const Key&, const Key&) = default;
    };

    struct KeyHash {
        std::size_t operator()(const Key& k) const noexcept {
            return std::hash<std::uint64_t>{}(k.ino) ^ (std::hash<std::uint64_t>{}(k.dev) << 1U);
        }
    };

    // Moves a forgotten inode's names into kept_names_ (under mutex_).
    void keep_names(Inode& dying) noexcept;

    std::mutex mutex_; // before any Inode::m
    std::atomic<std::size_t> count_{0};
    std::atomic<std::size_t> detached_{0}; // inodes in the table without a descriptor
    std::atomic<std::uint64_t> clock_{0};  // the last stamp handed out
    std::unordered_map<Key, std::unique_ptr<Inode>, KeyHash> map_;
    Inode root_;
    // The names seen for inodes the kernel forgot (a reclaim, or simply no use for a while),
    // given back when the same identity enters the table again with several links: a guarded
    // name seen once keeps guarding the file's other names (design §3). Until 2026-12-07 a walk
    // that made the reclaimer drop `.env`'s inode let its hard link `notes` be written. At most
    // kKeptNamesMax inodes, the oldest given up first (each holds at most Inode::kMaxNames),
    // but never one with a guarded name: those are pinned instead (until a later change the
    // same day, 4,096 forgotten inodes with two names each gave up `.env`'s too). A guarded
    // name is not made through the mount (an asking one only with the approver's yes), so the
    // pinned ones are files made outside it.
    static constexpr std::size_t kKeptNamesMax = 4096;

    struct Kept {
        std::uint64_t seq; // when kept: an entry of kept_order_ with another is stale
        std::vector<std::string> names;
        bool pinned = false; // guarded: out of kept_order_, not counted against the cap
    };

    std::unordered_map<Key, Kept, KeyHash> kept_names_;
    std::deque<std::pair<Key, std::uint64_t>> kept_order_; // oldest first, with Kept::seq
    std::uint64_t kept_seq_ = 0;
    std::size_t pinned_ = 0; // entries of kept_names_ with `pinned`
    std::function<bool(const std::vector<std::string>&)> guarded_names_;
};

} // namespace guardfs::fusefs

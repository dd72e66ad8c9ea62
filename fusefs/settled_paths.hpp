// Underlying paths the gate settled lately (guard::Decision::settled): a file or directory made
// through the mount where nothing matched, nor could for any other operation, kind of file or
// existence. Such a token is a fact about the path and the policy generation alone, so a later
// request that names the same path by its directory and name (a temporary file removed, a lock
// file made again) carries it in its target (Target::settled) and the judge does not walk the
// path again. Inode::settled does the same for requests about an inode; requests that name an
// entry reach no inode, and come here.
//
// Direct-mapped on a hash of the path: kSlots slots, a newer path replaces an older one in its
// slot. Paths are compared whole, never by hash alone (a name is the agent's to choose). One
// mutex; what it guards is a string compare or assign. kSlots is sized for the trees a program
// makes and then removes or renames in one go (an untar and its `rm -rf`, 10,000 files created
// and renamed): of n paths remembered in turn, about (1 - e^(-n/kSlots)) / (n/kSlots) are still
// found, 91% of 3,200 and 75% of 10,000. The slots take 40 bytes each (640 KiB) and their paths
// what they hold, about 1.6 MiB more when all hold one of ~90 bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace guardfs::fusefs {

class SettledPaths {
public:
    static constexpr std::size_t kSlots = 16384;

    // Remembers that the gate gave `token` (nonzero) for a target at `path`.
    void remember(std::string_view path, std::uint64_t token) noexcept;

    // The token remembered for exactly `path`, or 0. Whether it is still the judge's token
    // (the same policy generation) is the judge's to say.
    [[nodiscard]] std::uint64_t find(std::string_view path) const noexcept;

private:
    struct Slot {
        std::uint64_t token = 0;
        std::string path;
    };

    static std::size_t slot_of(std::string_view path) noexcept;

    mutable std::mutex m_;
    std::vector<Slot> slots_ = std::vector<Slot>(kSlots); // on the heap: Fs may be on a stack
};

} // namespace guardfs::fusefs

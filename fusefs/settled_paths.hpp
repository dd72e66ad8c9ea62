// Underlying paths the gate settled lately (guard::Decision::settled): a file or directory made
// through the mount where nothing matched, nor could for any other operation, kind of file or
// existence. Such a token is a fact about the path and the policy generation alone, so a later
// request that names the same path by its directory and name (a temporary file removed, a lock
// file made again) carries it in its target (Target::settled) and the judge does not walk the
// path again. Inode::settled does the same for requests about an inode; requests that name an
// entry reach no inode, and come here.
//
// Set-associative on a hash of the path: kSets sets of kWays slots; a path goes to one set, and a
// newer path takes the set's slots in turn (first in, first out). Paths are compared whole, never
// by hash alone (a name is the agent's to choose); the stored hash only skips most compares.
// One mutex; what it guards is a few compares or one assign.
//
// Sized for the trees a program makes and then removes or renames in one go. fsbench's
// metadata workload creates 10,000 files, renames each and unlinks each: with a direct-mapped
// table of the same 16,384 slots 54% of the renames and 75% of the unlinks found their path
// (each walked the policy again otherwise); with 16 ways 96% and 99.5% do
// (settled_paths_test.cpp; docs/decisions/014). Slots take 48 bytes each (776 KiB with the
// sets' counters), and their paths what they hold, about 1.6 MiB more when all hold one of
// ~90 bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace guardfs::fusefs {

class SettledPaths {
public:
    static constexpr std::size_t kWays = 16;
    static constexpr std::size_t kSets = 1024; // a power of two
    static constexpr std::size_t kSlots = kWays * kSets;
    static_assert((kSets & (kSets - 1)) == 0, "a set is picked by the hash's low bits");

    // Remembers that the gate gave `token` (nonzero) for a target at `path`.
    void remember(std::string_view path, std::uint64_t token) noexcept;

    // The token remembered for exactly `path`, or 0. Whether it is still the judge's token
    // (the same policy generation) is the judge's to say.
    [[nodiscard]] std::uint64_t find(std::string_view path) const noexcept;

private:
    struct Set {
        std::array<std::uint64_t, kWays> hash{};  // of path[i], while token[i] != 0
        std::array<std::uint64_t, kWays> token{}; // 0: the slot is free
        std::array<std::string, kWays> path;
        std::size_t oldest = 0; // the slot a new path takes: unused yet, or the oldest path
    };

    // The slot in `set` holding exactly `path`, or kWays.
    static std::size_t way_of(const Set& set, std::uint64_t hash, std::string_view path) noexcept;

    mutable std::mutex m_;
    std::vector<Set> sets_ = std::vector<Set>(kSets); // on the heap: Fs may be on a stack
};

} // namespace guardfs::fusefs

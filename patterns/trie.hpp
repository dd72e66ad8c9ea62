// A trie over pattern segments: the compiled form of a rule set (design §2; issue #2 asks for a
// matcher whose cost per decision does not grow with the number of patterns).
//
// Each node indexes its children three ways: literal segments in a hash map; globs with a
// literal prefix in hash maps keyed by that prefix, one map per distinct prefix length; globs
// with no prefix but a literal suffix likewise by suffix. Only globs with a `*` at both ends
// ("*", "*key*") are tried one by one. Matching a path of n segments therefore costs about
// n x (1 + distinct prefix/suffix lengths) hash lookups, whatever the number of patterns.
#pragma once

#include "patterns/glob.hpp"
#include "patterns/rule.hpp"

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace guardfs::patterns {

inline constexpr std::uint32_t kNoRule = UINT32_MAX;

// Collects the strongest verdict offered, and the lowest rule id that carried it.
struct MatchBest {
    Verdict verdict = Verdict::Allow;
    std::uint32_t rule = kNoRule;

    [[nodiscard]] bool matched() const noexcept { return rule != kNoRule; }

    void offer(Verdict v, std::uint32_t rule_id) noexcept {
        if (rule == kNoRule || v > verdict || (v == verdict && rule_id < rule)) {
            verdict = v;
            rule = rule_id;
        }
    }
};

struct StringHash {
    using is_transparent = void;

    std::size_t operator()(std::string_view s) const noexcept {
        return std::hash<std::string_view>{}(s);
    }
};

class SegmentTrie {
public:
    // Where the walks of match() stand after a path's leading segments (strip 0): the rules
    // matched within them, and the trie nodes of the runs still going at their end. Paths under
    // one directory share it, so the directory's segments are walked once (see advance()).
    struct Resume {
        MatchBest found;
        std::vector<std::uint32_t> live; // sorted, no duplicates
    };

    // An anchored trie matches only runs that start at the first segment of the path; a
    // floating one matches runs anywhere.
    explicit SegmentTrie(bool anchored);

    // Adds a pattern. anchor_depth is recorded with it (see Rule::anchor_depth).
    void insert(std::span<const SegmentGlob> segs, std::uint32_t rule, Verdict verdict,
                std::size_t anchor_depth);

    // Call once after the last insert; matching before it misses partial matches.
    void finalize();

    // Full matches: a run of the pattern's segments equal to a run of segs. Floating: runs that
    // start at index >= strip. Anchored: runs from index 0 whose anchor lies below the first
    // `strip` segments (anchor_depth > strip).
    void match(std::span<const std::string_view> segs, std::size_t strip, MatchBest& out) const;

    // The state of match() after `lead`, the leading segments of the paths it is for.
    [[nodiscard]] Resume advance(std::span<const std::string_view> lead) const;

    // The same as advance(lead) when `above` is advance() of lead's first `above_size`
    // segments: the walks through them carried on, and new ones started after them.
    [[nodiscard]] Resume advance_from(const Resume& above, std::span<const std::string_view> lead,
                                      std::size_t above_size) const;

    // The same as match(segs, 0, out) when segs[0, from) are the segments `resume` was made
    // from (advance()): the walks through them resumed, and new ones started after them.
    void match_resumed(const Resume& resume, std::span<const std::string_view> segs,
                       std::size_t from, MatchBest& out) const;

    // Partial matches at the end: a proper prefix of a pattern equals a suffix of segs (ending
    // at its last segment), with the same start rule as match(). These are the rules whose
    // guarding run passes through the last segment of segs (design §3, rename).
    void match_partial_at_end(std::span<const std::string_view> segs, std::size_t strip,
                              MatchBest& out) const;

    [[nodiscard]] bool empty() const noexcept { return nodes_.size() == 1; }

private:
    struct Terminal {
        std::uint32_t rule;
        Verdict verdict;
        std::size_t anchor_depth;
    };

    // A byte trie over the literal prefixes (or reversed suffixes) of a node's glob children:
    // walking a name through it visits exactly the globs whose prefix (suffix) the name has.
    struct ByteTrie {
        struct Node {
            std::vector<unsigned char> keys;  // sorted
            std::vector<std::uint32_t> next;  // parallel to keys
            std::vector<std::uint32_t> globs; // indexes into the owner's globs
        };

        std::vector<Node> nodes{Node{}};

        void insert(std::string_view key, bool reversed, std::uint32_t glob);

        template <typename F>
        void visit(std::string_view name, bool reversed, F&& f) const;
    };

    struct GlobChild {
        SegmentGlob glob;
        std::uint32_t child;
    };

    // Literal children: a few are compared directly; many go to a hash map behind a filter on
    // (first byte, last byte), which rejects most names without hashing them.
    static constexpr std::size_t kDirectLiterals = 6;

    // Up to this many distinct first bytes of bigram globs' pairs, names are searched with memchr.
    static constexpr std::size_t kMemchrFirsts = 4;

    struct Node {
        std::vector<std::pair<std::string, std::uint32_t>> few_literals;
        std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> literal;
        std::vector<std::uint64_t> literal_filter; // 65536 bits, set when `literal` is used
        std::vector<GlobChild> globs;
        ByteTrie by_prefix; // globs with a literal prefix
        ByteTrie by_suffix; // globs with none, but a literal suffix
        // Globs with '*' at both ends, indexed by one byte pair (bigram) of their longest
        // literal chunk: a name is tried against them only when it holds that pair. Those with
        // no chunk of two bytes ("*", "*a*") are tried one by one.
        std::vector<std::uint64_t> bigram_filter; // 65536 bits; empty when no bigram globs
        std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> by_bigram;
        // The distinct first bytes of those pairs: a name is searched for each with memchr when
        // they are few, and filtered byte by byte on them otherwise (see for_each_child).
        std::string bigram_firsts;
        std::array<std::uint64_t, 4> bigram_first_filter{}; // 256 bits
        std::vector<std::uint32_t> unanchored_globs;
        std::vector<Terminal> terminals;
        MatchBest below; // strongest rule strictly below this node (floating tries)
    };

    static std::size_t filter_bit(std::string_view s) noexcept {
        return (static_cast<std::size_t>(static_cast<unsigned char>(s.front())) << 8U) |
               static_cast<unsigned char>(s.back());
    }

    std::uint32_t literal_child(std::uint32_t node, const std::string& text);

    template <typename F>
    void for_each_literal_child(const Node& node, F&& f) const;

    template <typename F>
    void for_each_child(const Node& node, std::string_view seg, F&& f) const;

    void walk(std::uint32_t node, std::span<const std::string_view> segs, std::size_t j,
              std::size_t strip, bool partial, MatchBest& out) const;

    void collect_below(std::uint32_t node, std::size_t strip, MatchBest& out) const;

    bool anchored_;
    std::vector<Node> nodes_;
};

} // namespace guardfs::patterns

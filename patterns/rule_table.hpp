// An immutable, compiled rule set (design §2, §4): deny and ask rows in "guard" tries that are
// matched wide (every reading, patterns inserted both as written and folded), allow rows in
// tries matched by exact bytes. Rows that open with a segment named in agent_config_dirs are
// also inserted anchored below that directory (design §4).
// Built once, shared as std::shared_ptr<const RuleTable>, so a reload swaps one pointer.
#pragma once

#include "base/result.hpp"
#include "patterns/pattern.hpp"
#include "patterns/readings.hpp"
#include "patterns/rule.hpp"
#include "patterns/trie.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace guardfs::patterns {

struct RuleSpec {
    Rule rule;
    CompiledPattern compiled;
};

// The strongest match over several readings, with the reading that found it.
struct GuardMatch {
    MatchBest best;
    Reading reading = Reading::Raw;

    [[nodiscard]] bool matched() const noexcept { return best.matched(); }
};

// Where the guard rows' walks stand after a directory's segments, for each reading of a path
// below it: what match_guard() resumes from, so that paths under one directory walk the
// directory once. Made for one directory and one RuleTable; each reading's state is made the
// first time a path needs it.
class GuardPrefix {
public:
    // For the absolute directory `dir` ("/a/b"); forgets the states made for another.
    void reset(std::string_view dir);

    [[nodiscard]] const std::string& dir() const noexcept { return dir_; }

    // The directory's readings, every one of them: what Readings::build_below() takes to read
    // a path below it without scanning the directory again.
    [[nodiscard]] const Readings& readings() const noexcept { return readings_; }

private:
    friend class RuleTable;

    // reset(dir) for a directory below above.dir(), its readings extended from above's.
    void reset_below(const GuardPrefix& above, std::string_view dir);

    static constexpr std::size_t kNoTwin = SIZE_MAX;

    // A reading whose state is made and whose segments are reading k's very own (the views
    // share them: the directory has nothing to fold or split), or kNoTwin.
    [[nodiscard]] std::size_t ready_twin(std::size_t k) const noexcept;

    std::string dir_;
    Readings readings_;           // of dir_, every reading
    std::array<bool, 4> ready_{}; // per Reading: lead_, floating_, anchored_ made
    std::array<std::size_t, 4> lead_{};
    std::array<SegmentTrie::Resume, 4> floating_;
    std::array<SegmentTrie::Resume, 4> anchored_;
};

class RuleTable {
public:
    // anchors maps a first segment (e.g. ".claude") to the absolute directories that stand for
    // it (each spelling of one agent_config_dirs value). Never fails: every spec is compiled.
    static RuleTable build(std::vector<RuleSpec> specs,
                           const std::map<std::string, std::vector<std::string>>& anchors = {});

    RuleTable();

    [[nodiscard]] const Rule& rule(std::uint32_t id) const { return rules_.at(id); }

    [[nodiscard]] std::size_t size() const noexcept { return rules_.size(); }

    // Deny/ask rows whose pattern matches a run of the target (the run starting inside the
    // part of the path that is not stripped; see Readings::build).
    [[nodiscard]] GuardMatch match_guard(const Readings& r) const;

    // The same, for a target below dir.dir() (its readings' first segments are the
    // directory's), resuming from the directory's state where a reading is not stripped. The
    // state is this table's: `dir` must not be used with another table without a reset.
    [[nodiscard]] GuardMatch match_guard(const Readings& r, GuardPrefix& dir) const;

    // Deny/ask rows matched on `views` only, readings of one path (e.g. Readings::covering()),
    // resuming from dir's state when given (as above).
    [[nodiscard]] GuardMatch match_guard_on(std::span<const ReadingView> views,
                                            GuardPrefix* dir) const;

    // Makes `below` the state for `dir`, a directory under above.dir(), as below.reset(dir)
    // would, but with each reading's state that `above` has made carried on through dir's
    // further segments instead of walked again from the first: a few segments' walk rather
    // than the whole path's. A reading whose leading segments are not above's (cannot happen
    // for a directory under it), and every reading when `below` is `above`, is left to be made
    // from the first segment, as after reset().
    void carry_down(const GuardPrefix& above, std::string_view dir, GuardPrefix& below) const;

    // Deny/ask rows with a proper prefix matching a suffix of the target: rows whose guarding
    // run passes through the target's last segment (design §3, rename).
    [[nodiscard]] GuardMatch match_guard_partial(const Readings& r) const;

    // Allow rows, exact bytes on the raw reading.
    [[nodiscard]] MatchBest match_allow(const Readings& r) const;

    [[nodiscard]] bool has_guard_rules() const noexcept { return has_guard_; }

    [[nodiscard]] bool has_allow_rules() const noexcept { return has_allow_; }

private:
    // The deny/ask rows matched on one reading, walked from its start.
    void match_guard_view(const ReadingView& v, MatchBest& b) const;

    std::vector<Rule> rules_;
    SegmentTrie guard_floating_{false};
    SegmentTrie guard_anchored_{true};
    SegmentTrie allow_floating_{false};
    SegmentTrie allow_anchored_{true};
    bool has_guard_ = false;
    bool has_allow_ = false;
};

} // namespace guardfs::patterns

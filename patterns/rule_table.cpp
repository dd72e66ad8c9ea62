// Compiling and querying a rule table; see rule_table.hpp.
#include "patterns/rule_table.hpp"

#include "base/path.hpp"
#include "patterns/fold.hpp"

#include <algorithm>

namespace guardfs::patterns {

namespace {

std::vector<SegmentGlob> folded_segments(const std::vector<SegmentGlob>& segs, bool& differs) {
    std::vector<SegmentGlob> out;
    out.reserve(segs.size());
    differs = false;
    for (const SegmentGlob& g : segs) {
        std::string f = fold(g.text());
        differs = differs || f != g.text();
        out.push_back(g.with_text(f));
    }
    return out;
}

} // namespace

RuleTable::RuleTable() = default;

RuleTable RuleTable::build(std::vector<RuleSpec> specs,
                           const std::map<std::string, std::vector<std::string>>& anchors) {
    RuleTable t;
    auto add = [&t](const Rule& rule, const std::vector<SegmentGlob>& segs) {
        const auto id = static_cast<std::uint32_t>(t.rules_.size());
        t.rules_.push_back(rule);
        const bool anchored = rule.anchor_depth > 0;
        if (rule.verdict == Verdict::Allow) {
            (anchored ? t.allow_anchored_ : t.allow_floating_)
                .insert(segs, id, rule.verdict, rule.anchor_depth);
            t.has_allow_ = true;
            return;
        }
        SegmentTrie& trie = anchored ? t.guard_anchored_ : t.guard_floating_;
        trie.insert(segs, id, rule.verdict, rule.anchor_depth);
        bool differs = false;
        auto folded = folded_segments(segs, differs);
        if (differs) {
            trie.insert(folded, id, rule.verdict, rule.anchor_depth);
        }
        t.has_guard_ = true;
    };
    for (RuleSpec& spec : specs) {
        add(spec.rule, spec.compiled.segments);
        if (anchors.empty()) {
            continue;
        }
        auto it = anchors.find(spec.compiled.segments.front().text());
        if (it == anchors.end()) {
            continue;
        }
        for (const std::string& dir : it->second) {
            const auto dir_segs = base::split_segments(dir);
            if (dir_segs.empty()) {
                continue; // "/" reduces to nothing and anchors nothing
            }
            std::vector<SegmentGlob> segs;
            for (const auto s : dir_segs) {
                segs.push_back(SegmentGlob::literal(s)); // a directory name: '*' is literal
            }
            for (std::size_t k = 1; k < spec.compiled.segments.size(); ++k) {
                segs.push_back(spec.compiled.segments[k]);
            }
            Rule anchored = spec.rule;
            anchored.anchor_depth = dir_segs.size();
            std::string tail;
            for (std::size_t k = 1; k < spec.compiled.segments.size(); ++k) {
                tail += '/';
                tail += spec.compiled.segments[k].text();
            }
            anchored.pattern = base::join_absolute(dir_segs) + tail;
            add(anchored, segs);
        }
    }
    t.guard_floating_.finalize();
    t.guard_anchored_.finalize();
    t.allow_floating_.finalize();
    t.allow_anchored_.finalize();
    return t;
}

namespace {

// The strongest of the matches `match(view, best)` finds on each reading of r, with the reading
// that found it (the first of equal verdicts).
template <typename F>
GuardMatch strongest_reading(std::span<const ReadingView> views, F&& match) {
    GuardMatch out;
    for (const ReadingView& v : views) {
        MatchBest b;
        match(v, b);
        if (b.matched() && (!out.matched() || b.verdict > out.best.verdict)) {
            out.best = b;
            out.reading = v.kind;
        }
    }
    return out;
}

} // namespace

void RuleTable::match_guard_view(const ReadingView& v, MatchBest& b) const {
    guard_floating_.match(v.segs, v.strip, b);
    guard_anchored_.match(v.segs, v.strip, b);
}

GuardMatch RuleTable::match_guard(const Readings& r) const {
    return match_guard_on(r.all(), nullptr);
}

void GuardPrefix::reset(std::string_view dir) {
    dir_.assign(dir);
    readings_.build(dir_, 0, true); // in Reading order, all four
    ready_.fill(false);
}

void GuardPrefix::reset_below(const GuardPrefix& above, std::string_view dir) {
    if (&above == this) {
        reset(dir);
        return;
    }
    dir_.assign(dir);
    readings_.build_dir_below(above.readings_, above.dir_, dir_);
    ready_.fill(false);
}

std::size_t GuardPrefix::ready_twin(std::size_t k) const noexcept {
    const auto segs = readings_.all()[k].segs;
    for (std::size_t j = 0; j < ready_.size(); ++j) {
        const auto other = readings_.all()[j].segs;
        if (j != k && ready_[j] && other.data() == segs.data() && other.size() == segs.size()) {
            return j;
        }
    }
    return kNoTwin;
}

GuardMatch RuleTable::match_guard(const Readings& r, GuardPrefix& dir) const {
    return match_guard_on(r.all(), &dir);
}

GuardMatch RuleTable::match_guard_on(std::span<const ReadingView> views, GuardPrefix* dir) const {
    if (!has_guard_) {
        return GuardMatch{};
    }
    return strongest_reading(views, [this, dir](const ReadingView& v, MatchBest& b) {
        if (dir == nullptr || v.strip != 0) {
            match_guard_view(v, b); // the directory's state is for strip 0
            return;
        }
        const auto k = static_cast<std::size_t>(v.kind);
        if (!dir->ready_[k]) {
            const auto lead = dir->readings_.all()[k].segs;
            dir->lead_[k] = lead.size();
            if (const std::size_t j = dir->ready_twin(k); j != GuardPrefix::kNoTwin) {
                dir->floating_[k] = dir->floating_[j]; // the same segments: the same walks
                dir->anchored_[k] = dir->anchored_[j];
            } else {
                dir->floating_[k] = guard_floating_.advance(lead);
                dir->anchored_[k] = guard_anchored_.advance(lead);
            }
            dir->ready_[k] = true;
        }
        guard_floating_.match_resumed(dir->floating_[k], v.segs, dir->lead_[k], b);
        guard_anchored_.match_resumed(dir->anchored_[k], v.segs, dir->lead_[k], b);
    });
}

void RuleTable::carry_down(const GuardPrefix& above, std::string_view dir,
                           GuardPrefix& below) const {
    below.reset_below(above, dir);
    for (std::size_t k = 0; k < below.ready_.size(); ++k) {
        if (!above.ready_[k]) {
            continue; // made when a path needs it (often as a copy of a twin, ready_twin)
        }
        const auto lead = below.readings_.all()[k].segs;
        const auto above_lead = above.readings_.all()[k].segs;
        if (above_lead.size() != above.lead_[k] || above_lead.size() > lead.size() ||
            !std::equal(above_lead.begin(), above_lead.end(), lead.begin())) {
            continue; // not the start of this reading: made from the first segment when needed
        }
        below.lead_[k] = lead.size();
        below.floating_[k] = guard_floating_.advance_from(above.floating_[k], lead, above.lead_[k]);
        below.anchored_[k] = guard_anchored_.advance_from(above.anchored_[k], lead, above.lead_[k]);
        below.ready_[k] = true;
    }
}

GuardMatch RuleTable::match_guard_partial(const Readings& r) const {
    if (!has_guard_) {
        return GuardMatch{};
    }
    return strongest_reading(r.all(), [this](const ReadingView& v, MatchBest& b) {
        guard_floating_.match_partial_at_end(v.segs, v.strip, b);
        guard_anchored_.match_partial_at_end(v.segs, v.strip, b);
    });
}

MatchBest RuleTable::match_allow(const Readings& r) const {
    MatchBest b;
    if (!has_allow_) {
        return b;
    }
    allow_floating_.match(r.raw(), r.raw_strip(), b);
    allow_anchored_.match(r.raw(), r.raw_strip(), b);
    return b;
}

} // namespace guardfs::patterns

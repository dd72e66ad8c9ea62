// The segment trie; see trie.hpp.
#include "patterns/trie.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace guardfs::patterns {

namespace {

// A stack that lives in place for the usual shallow walk and spills to the heap only for a
// pathological one, so matching allocates nothing on the common path.
template <typename T, std::size_t N>
class SmallStack {
public:
    void push(const T& v) {
        if (size_ < N) {
            inline_[size_] = v;
        } else {
            spill_.push_back(v);
        }
        ++size_;
    }

    T pop() {
        --size_;
        if (size_ < N) {
            return inline_[size_];
        }
        T v = spill_.back();
        spill_.pop_back();
        return v;
    }

    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }

private:
    std::array<T, N> inline_; // written before read; left uninitialized on purpose
    std::vector<T> spill_;
    std::size_t size_ = 0;
};

} // namespace

void SegmentTrie::ByteTrie::insert(std::string_view key, bool reversed, std::uint32_t glob) {
    std::uint32_t cur = 0;
    for (std::size_t i = 0; i < key.size(); ++i) {
        const auto c = static_cast<unsigned char>(reversed ? key[key.size() - 1 - i] : key[i]);
        Node& n = nodes[cur];
        auto it = std::lower_bound(n.keys.begin(), n.keys.end(), c);
        const auto at = static_cast<std::size_t>(it - n.keys.begin());
        if (it != n.keys.end() && *it == c) {
            cur = n.next[at];
            continue;
        }
        const auto fresh = static_cast<std::uint32_t>(nodes.size());
        n.keys.insert(it, c);
        n.next.insert(n.next.begin() + static_cast<std::ptrdiff_t>(at), fresh);
        nodes.emplace_back(); // invalidates `n`
        cur = fresh;
    }
    nodes[cur].globs.push_back(glob);
}

template <typename F>
void SegmentTrie::ByteTrie::visit(std::string_view name, bool reversed, F&& f) const {
    std::uint32_t cur = 0;
    for (std::size_t i = 0;; ++i) {
        const Node& n = nodes[cur];
        for (const std::uint32_t g : n.globs) {
            f(g);
        }
        if (i == name.size() || n.keys.empty()) {
            return;
        }
        const auto c = static_cast<unsigned char>(reversed ? name[name.size() - 1 - i] : name[i]);
        auto it = std::lower_bound(n.keys.begin(), n.keys.end(), c);
        if (it == n.keys.end() || *it != c) {
            return;
        }
        cur = n.next[static_cast<std::size_t>(it - n.keys.begin())];
    }
}

SegmentTrie::SegmentTrie(bool anchored) : anchored_(anchored) {
    nodes_.emplace_back();
}

std::uint32_t SegmentTrie::literal_child(std::uint32_t node, const std::string& text) {
    {
        Node& n = nodes_[node];
        for (const auto& [name, child] : n.few_literals) {
            if (name == text) {
                return child;
            }
        }
        if (auto it = n.literal.find(text); it != n.literal.end()) {
            return it->second;
        }
    }
    const auto next = static_cast<std::uint32_t>(nodes_.size());
    nodes_.emplace_back(); // invalidates references into nodes_
    Node& n = nodes_[node];
    if (n.literal.empty() && n.few_literals.size() < kDirectLiterals) {
        n.few_literals.emplace_back(text, next);
        return next;
    }
    if (n.literal.empty()) {
        n.literal_filter.assign(65536 / 64, 0);
        for (auto& [name, child] : n.few_literals) {
            const std::size_t bit = filter_bit(name);
            n.literal_filter[bit / 64] |= std::uint64_t{1} << (bit % 64);
            n.literal.emplace(std::move(name), child);
        }
        n.few_literals.clear();
    }
    const std::size_t bit = filter_bit(text);
    n.literal_filter[bit / 64] |= std::uint64_t{1} << (bit % 64);
    n.literal.emplace(text, next);
    return next;
}

void SegmentTrie::insert(std::span<const SegmentGlob> segs, std::uint32_t rule, Verdict verdict,
                         std::size_t anchor_depth) {
    std::uint32_t cur = 0;
    for (const SegmentGlob& g : segs) {
        if (g.is_literal()) {
            if (g.text().empty()) {
                return; // cannot happen: compile_pattern drops empty segments
            }
            cur = literal_child(cur, g.text());
            continue;
        }
        Node& node = nodes_[cur];
        auto found = std::find_if(node.globs.begin(), node.globs.end(),
                                  [&](const GlobChild& c) { return c.glob.text() == g.text(); });
        if (found != node.globs.end()) {
            cur = found->child;
            continue;
        }
        const auto next = static_cast<std::uint32_t>(nodes_.size());
        const auto index = static_cast<std::uint32_t>(node.globs.size());
        node.globs.push_back(GlobChild{g, next});
        if (!g.prefix().empty()) {
            node.by_prefix.insert(g.prefix(), false, index);
        } else if (!g.suffix().empty()) {
            node.by_suffix.insert(g.suffix(), true, index);
        } else if (const std::string_view chunk = g.longest_chunk(); chunk.size() >= 2) {
            const std::uint32_t bigram =
                (static_cast<std::uint32_t>(static_cast<unsigned char>(chunk[0])) << 8U) |
                static_cast<unsigned char>(chunk[1]);
            if (node.bigram_filter.empty()) {
                node.bigram_filter.assign(65536 / 64, 0);
            }
            node.bigram_filter[bigram / 64] |= std::uint64_t{1} << (bigram % 64);
            node.by_bigram[bigram].push_back(index);
            const auto first = static_cast<unsigned char>(chunk[0]);
            if (((node.bigram_first_filter[first / 64] >> (first % 64)) & 1U) == 0) {
                node.bigram_first_filter[first / 64] |= std::uint64_t{1} << (first % 64);
                node.bigram_firsts += chunk[0];
            }
        } else {
            node.unanchored_globs.push_back(index);
        }
        nodes_.emplace_back(); // invalidates `node`; not used after this line
        cur = next;
    }
    nodes_[cur].terminals.push_back(Terminal{rule, verdict, anchor_depth});
}

template <typename F>
void SegmentTrie::for_each_literal_child(const Node& node, F&& f) const {
    for (const auto& [name, child] : node.few_literals) {
        f(child);
    }
    for (const auto& [name, child] : node.literal) {
        f(child);
    }
}

void SegmentTrie::finalize() {
    // Children always have larger ids than their parent, so one backward pass folds every
    // subtree into its root without recursion (a policy may nest patterns very deeply).
    std::vector<std::uint32_t> parent(nodes_.size(), 0);
    for (std::uint32_t n = 0; n < nodes_.size(); ++n) {
        nodes_[n].below = MatchBest{};
        for_each_literal_child(nodes_[n], [&](std::uint32_t child) { parent[child] = n; });
        for (const GlobChild& c : nodes_[n].globs) {
            parent[c.child] = n;
        }
    }
    for (auto n = static_cast<std::uint32_t>(nodes_.size()); n-- > 1;) {
        Node& up = nodes_[parent[n]];
        for (const Terminal& t : nodes_[n].terminals) {
            up.below.offer(t.verdict, t.rule);
        }
        if (nodes_[n].below.matched()) {
            up.below.offer(nodes_[n].below.verdict, nodes_[n].below.rule);
        }
    }
}

template <typename F>
void SegmentTrie::for_each_child(const Node& node, std::string_view seg, F&& f) const {
    if (seg.empty()) {
        return; // segments are never empty; a glob could match one, a path never has one
    }
    for (const auto& [name, child] : node.few_literals) {
        if (name == seg) {
            f(child);
            break;
        }
    }
    if (!node.literal.empty()) {
        const std::size_t bit = filter_bit(seg);
        if ((node.literal_filter[bit / 64] >> (bit % 64)) & 1U) {
            if (auto it = node.literal.find(seg); it != node.literal.end()) {
                f(it->second);
            }
        }
    }
    if (node.globs.empty()) {
        return;
    }
    auto try_glob = [&](std::uint32_t gi) {
        if (node.globs[gi].glob.matches(seg)) {
            f(node.globs[gi].child);
        }
    };
    node.by_prefix.visit(seg, false, try_glob);
    node.by_suffix.visit(seg, true, try_glob);
    if (!node.bigram_filter.empty() && seg.size() >= 2) {
        // Each glob is tried at the first pair of the name that indexes it, and only there.
        auto try_pair_at = [&](std::size_t i) {
            const std::uint32_t bigram =
                (static_cast<std::uint32_t>(static_cast<unsigned char>(seg[i])) << 8U) |
                static_cast<unsigned char>(seg[i + 1]);
            if (((node.bigram_filter[bigram / 64] >> (bigram % 64)) & 1U) == 0) {
                return;
            }
            for (std::size_t k = 0; k < i; ++k) {
                if (seg[k] == seg[i] && seg[k + 1] == seg[i + 1]) {
                    return; // tried at k
                }
            }
            for (const std::uint32_t gi : node.by_bigram.find(bigram)->second) {
                try_glob(gi);
            }
        };
        // The positions that can start a pair (all but the last byte). With few first bytes,
        // memchr finds them faster than a test of every byte (callgrind, untar + rm -rf under
        // the benchmark's 1,000 rows, 166 of them "*zqtokN*": ~800 instructions less a decision).
        const char* const begin = seg.data();
        const char* const end = seg.data() + seg.size() - 1;
        if (node.bigram_firsts.size() <= kMemchrFirsts) {
            for (const char b : node.bigram_firsts) {
                for (const char* p = begin; p < end; ++p) {
                    p = static_cast<const char*>(
                        std::memchr(p, b, static_cast<std::size_t>(end - p)));
                    if (p == nullptr) {
                        break;
                    }
                    try_pair_at(static_cast<std::size_t>(p - begin));
                }
            }
        } else {
            for (const char* p = begin; p < end; ++p) {
                const auto c = static_cast<unsigned char>(*p);
                if ((node.bigram_first_filter[c / 64] >> (c % 64)) & 1U) {
                    try_pair_at(static_cast<std::size_t>(p - begin));
                }
            }
        }
    }
    for (const std::uint32_t gi : node.unanchored_globs) {
        try_glob(gi);
    }
}

void SegmentTrie::collect_below(std::uint32_t node, std::size_t strip, MatchBest& out) const {
    if (!anchored_) {
        if (nodes_[node].below.matched()) {
            out.offer(nodes_[node].below.verdict, nodes_[node].below.rule);
        }
        return;
    }
    // Anchored tries are small (agent_config_dirs rows): walk the subtree.
    std::vector<std::uint32_t> stack;
    auto push_children = [&](std::uint32_t n) {
        for_each_literal_child(nodes_[n], [&](std::uint32_t child) { stack.push_back(child); });
        for (const GlobChild& c : nodes_[n].globs) {
            stack.push_back(c.child);
        }
    };
    push_children(node);
    while (!stack.empty()) {
        const std::uint32_t n = stack.back();
        stack.pop_back();
        for (const Terminal& t : nodes_[n].terminals) {
            if (t.anchor_depth > strip) {
                out.offer(t.verdict, t.rule);
            }
        }
        push_children(n);
    }
}

void SegmentTrie::walk(std::uint32_t node, std::span<const std::string_view> segs, std::size_t j,
                       std::size_t strip, bool partial, MatchBest& out) const {
    // Depth-first over the (rarely branching) set of trie paths that match segs[start..j).
    struct Frame {
        std::uint32_t node;
        std::size_t j;
    };

    SmallStack<Frame, 16> stack;
    stack.push(Frame{node, j});
    while (!stack.empty()) {
        const Frame f = stack.pop();
        const Node& n = nodes_[f.node];
        if (f.node != 0) {
            if (!partial) {
                for (const Terminal& t : n.terminals) {
                    if (!anchored_ || t.anchor_depth > strip) {
                        out.offer(t.verdict, t.rule);
                    }
                }
            } else if (f.j == segs.size()) {
                collect_below(f.node, strip, out);
            }
        }
        if (f.j == segs.size()) {
            continue;
        }
        for_each_child(n, segs[f.j], [&](std::uint32_t child) {
            stack.push(Frame{child, f.j + 1});
        });
    }
}

void SegmentTrie::match(std::span<const std::string_view> segs, std::size_t strip,
                        MatchBest& out) const {
    if (empty()) {
        return;
    }
    if (anchored_) {
        walk(0, segs, 0, strip, false, out);
        return;
    }
    for (std::size_t i = strip; i < segs.size(); ++i) {
        walk(0, segs, i, strip, false, out);
    }
}

SegmentTrie::Resume SegmentTrie::advance(std::span<const std::string_view> lead) const {
    return advance_from(Resume{}, lead, 0);
}

SegmentTrie::Resume SegmentTrie::advance_from(const Resume& above,
                                              std::span<const std::string_view> lead,
                                              std::size_t above_size) const {
    Resume r;
    if (empty()) {
        return r;
    }
    above_size = std::min(above_size, lead.size());
    r.found = above.found;

    struct Frame {
        std::uint32_t node;
        std::size_t j;
    };

    SmallStack<Frame, 16> stack;
    auto drain = [&] {
        while (!stack.empty()) {
            const Frame f = stack.pop();
            const Node& n = nodes_[f.node];
            if (f.node != 0) {
                for (const Terminal& t : n.terminals) {
                    r.found.offer(t.verdict, t.rule); // anchor_depth > 0 always holds at strip 0
                }
            }
            if (f.j == lead.size()) {
                if (f.node != 0) {
                    r.live.push_back(f.node);
                }
                continue;
            }
            for_each_child(n, lead[f.j], [&](std::uint32_t child) {
                stack.push(Frame{child, f.j + 1});
            });
        }
    };
    for (const std::uint32_t node : above.live) {
        stack.push(Frame{node, above_size});
    }
    drain();
    // Floating runs start at every segment, anchored ones at the first only (strip 0).
    const std::size_t starts = anchored_ ? std::min<std::size_t>(lead.size(), 1) : lead.size();
    for (std::size_t i = above_size; i < starts; ++i) {
        stack.push(Frame{0, i});
        drain();
    }
    std::sort(r.live.begin(), r.live.end());
    r.live.erase(std::unique(r.live.begin(), r.live.end()), r.live.end());
    return r;
}

void SegmentTrie::match_resumed(const Resume& resume, std::span<const std::string_view> segs,
                                std::size_t from, MatchBest& out) const {
    if (empty()) {
        return;
    }
    if (from == 0 || from > segs.size()) {
        match(segs, 0, out); // nothing to resume (or not made for these segments)
        return;
    }
    if (resume.found.matched()) {
        out.offer(resume.found.verdict, resume.found.rule);
    }
    for (const std::uint32_t node : resume.live) {
        walk(node, segs, from, 0, false, out);
    }
    if (!anchored_) {
        for (std::size_t i = from; i < segs.size(); ++i) {
            walk(0, segs, i, 0, false, out);
        }
    }
}

void SegmentTrie::match_partial_at_end(std::span<const std::string_view> segs, std::size_t strip,
                                       MatchBest& out) const {
    if (empty()) {
        return;
    }
    if (anchored_) {
        walk(0, segs, 0, strip, true, out);
        return;
    }
    for (std::size_t i = strip; i < segs.size(); ++i) {
        walk(0, segs, i, strip, true, out);
    }
}

} // namespace guardfs::patterns

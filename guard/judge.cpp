// The judge; see judge.hpp.
//
// Per view: match the deny/ask rows on every reading (and the git tier, and guardfs's own
// files); only when something matched are the data roots canonicalized (design §5: the common
// path pays nothing), and a view inside one is judged again relative to it. An ask left on a
// view is lifted only by an allow row matching that same view's exact bytes.
#include "guard/judge.hpp"

#include "dataroot/canonicalize.hpp"
#include "guard/git_tier.hpp"
#include "patterns/fold.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <memory>
#include <string_view>

namespace guardfs::guard {

using patterns::Reading;
using patterns::Readings;

bool stronger(const Decision& a, const Decision& b) noexcept {
    return a.verdict > b.verdict;
}

namespace {

struct RootKey {
    std::string key;
    std::size_t segments = 0;
};

// Per-decision state: the data-root keys, computed at most once and only when needed.
struct Context {
    const CompiledPolicy& policy;
    const std::shared_ptr<const CompiledPolicy>& owner; // of `policy`, for DirMemo
    dataroot::FsOps& fs;
    const Request& request;
    GitConfigJudge git_config_judge;
    const AnswerStore* answers;
    std::span<const GrantedAsk> granted;
    bool keys_ready = false;
    std::vector<RootKey> keys; // valid (not straddled) keys, shallowest first
    // Cleared when a view that matched nothing could match for another operation, kind or
    // existence of its target (Decision::settled).
    bool settled = true;

    const std::vector<RootKey>& root_keys() {
        if (keys_ready) {
            return keys;
        }
        keys_ready = true;
        for (auto& k : policy.roots.keys(fs)) {
            if (straddling_row(policy, k)) {
                continue; // a root that a deny row straddles exempts nothing (design §5)
            }
            const std::size_t n = static_cast<std::size_t>(std::count(k.begin(), k.end(), '/'));
            keys.push_back(RootKey{std::move(k), n});
        }
        std::sort(keys.begin(), keys.end(),
                  [](const RootKey& a, const RootKey& b) { return a.segments < b.segments; });
        return keys;
    }
};

Readings& scratch_readings() {
    thread_local Readings r;
    return r;
}

// The guard rows' state after the directories this thread judged paths in lately (a program
// works in a few directories at a time; git writes its objects over 256 directories at once): a
// path below one walks only its own name through the rows (patterns::GuardPrefix). A directory
// under one that has a state gets its own at once, carried down from the nearest such (a walk
// of the segments between them); any other gets one the second time it is seen, so paths
// scattered over many unrelated directories pay a hash, not a state each. States are found by a
// hash of the directory in a set-associative table of kSets sets of kWays, the least recently
// used of a set replaced. Per thread, for one policy; a reload starts it afresh. A state is
// allocated when first needed and kept for the thread's life: at most kSets * kWays (512) states of
// about 800 bytes each (a directory of seven segments, the recommended policy), 400 KiB per
// thread that judges in that many directories.
class DirMemo {
public:
    // The state for the directory of `path`, or null: for a path directly below "/" (nothing to
    // resume), or a directory not seen lately with no state above it.
    patterns::GuardPrefix* find(const Context& ctx, std::string_view path) {
        const std::size_t slash = last_slash(path, path.size());
        if (slash == std::string_view::npos || slash == 0) {
            return nullptr;
        }
        const std::string_view dir = path.substr(0, slash);
        if (policy_ != ctx.owner) {
            policy_ = ctx.owner; // held: a later policy cannot take its address
            hash_.fill(0);
            seen_.fill(0);
        }
        ++clock_;
        // Most decisions are in the directory of the one before.
        if (last_ != kNone && hash_[last_] != 0 && states_[last_]->dir() == dir) {
            used_[last_] = clock_;
            return states_[last_].get();
        }
        const std::size_t h = hash_of(dir);
        if (const std::size_t i = lookup(dir, h); i != kNone) {
            used_[i] = clock_;
            last_ = i;
            return states_[i].get();
        }
        // The nearest directory above with a state.
        std::size_t above = kNone;
        for (std::size_t end = last_slash(dir, dir.size());
             end != 0 && end != std::string_view::npos; end = last_slash(dir, end)) {
            const std::string_view up = dir.substr(0, end);
            above = lookup(up, hash_of(up));
            if (above != kNone) {
                break;
            }
        }
        if (above == kNone) {
            const auto seen = std::find(seen_.begin(), seen_.end(), h);
            if (seen == seen_.end()) {
                seen_[seen_next_] = h;
                seen_next_ = (seen_next_ + 1) % seen_.size();
                return nullptr;
            }
            *seen = 0;
        }
        const std::size_t e = replace(h, above);
        patterns::GuardPrefix& state = *states_[e];
        if (above != kNone) {
            used_[above] = clock_;
            ctx.policy.write.carry_down(*states_[above], dir, state);
        } else {
            state.reset(dir);
        }
        hash_[e] = h;
        used_[e] = clock_;
        last_ = e;
        return &state;
    }

private:
    // The last '/' in s's first n bytes, or npos: memrchr reads a word at a time, where
    // string_view::rfind reads a byte (it ran on every judged path).
    static std::size_t last_slash(std::string_view s, std::size_t n) noexcept {
        const void* p = n == 0 ? nullptr : ::memrchr(s.data(), '/', n);
        return p == nullptr ? std::string_view::npos
                            : static_cast<std::size_t>(static_cast<const char*>(p) - s.data());
    }

    static constexpr std::size_t kSets = 64;
    static constexpr std::size_t kWays = 8;
    static constexpr std::size_t kNone = SIZE_MAX;

    // Never 0 (an empty way).
    static std::size_t hash_of(std::string_view dir) noexcept {
        return std::hash<std::string_view>{}(dir) | 1U;
    }

    // The index of the first way of h's set (bit 0 of h is always set: not used).
    static std::size_t first_way(std::size_t h) noexcept { return (h >> 1U) % kSets * kWays; }

    // The way holding dir's state, or kNone. A set's hashes share one cache line: a directory
    // not in the set costs no state's memory.
    std::size_t lookup(std::string_view dir, std::size_t h) const noexcept {
        const std::size_t set = first_way(h);
        for (std::size_t w = set; w < set + kWays; ++w) {
            if (hash_[w] == h && states_[w]->dir() == dir) {
                return w;
            }
        }
        return kNone;
    }

    // An empty way of h's set, else its least recently used one; never `keep`. Its state is
    // allocated on first use.
    std::size_t replace(std::size_t h, std::size_t keep) {
        const std::size_t set = first_way(h);
        std::size_t best = kNone;
        for (std::size_t w = set; w < set + kWays; ++w) {
            if (hash_[w] == 0) {
                best = w;
                break;
            }
            if (w != keep && (best == kNone || used_[w] < used_[best])) {
                best = w;
            }
        }
        if (!states_[best]) {
            states_[best] = std::make_unique<patterns::GuardPrefix>();
        }
        return best;
    }

    std::shared_ptr<const CompiledPolicy> policy_;              // the states are this policy's
    alignas(64) std::array<std::size_t, kSets * kWays> hash_{}; // per way; 0: empty
    std::array<std::uint64_t, kSets * kWays> used_{};           // per way: clock_ at last use
    std::array<std::unique_ptr<patterns::GuardPrefix>, kSets * kWays> states_;
    std::size_t last_ = kNone; // the way found last
    std::uint64_t clock_ = 0;
    std::array<std::size_t, 16> seen_{}; // hashes of directories seen once lately
    std::size_t seen_next_ = 0;
};

DirMemo& dir_memo() {
    thread_local DirMemo memo;
    return memo;
}

bool is_self(const CompiledPolicy& p, const std::string& path, bool through) {
    if (p.self_paths.empty()) {
        return false;
    }
    if (!through) {
        // Folding keeps an ASCII path's length: only a guardfs file of the same length can
        // be this path, in any spelling.
        bool same_length = false;
        for (const std::string& s : p.self_paths) {
            same_length = same_length || s.size() == path.size();
        }
        if (!same_length && patterns::is_ascii(path)) {
            return false;
        }
    }
    thread_local std::string folded;
    folded.clear();
    if (patterns::needs_fold(path)) {
        patterns::fold_into(path, folded);
    } else {
        folded = path;
    }
    for (const std::string& s : p.self_paths) {
        if (s == path || s == folded) {
            return true;
        }
        if (through) {
            // Renaming (or making a symlink of) a directory above one of guardfs's own files.
            for (const std::string* x : {&path, static_cast<const std::string*>(&folded)}) {
                if (s.size() > x->size() && s.compare(0, x->size(), *x) == 0 &&
                    (*x == "/" || s[x->size()] == '/')) {
                    return true;
                }
            }
        }
    }
    return false;
}

// True when r.covering(), fewer readings than r.all(), shows that no row and no git surface
// matches the target on any reading, nor could for another operation (Context::settled). The
// covering readings find every row all() finds (Readings::covering), and every git surface and
// possible one: for a target not judged `through` the tier compares segments with lowercase
// names alone, which a segment equals only if it equals them lowered.
bool nothing_on_covering(const Context& ctx, const Readings& r, const Target& t,
                         patterns::GuardPrefix* dir) {
    const auto views = r.covering();
    if (t.through || views.size() == r.all().size()) {
        return false;
    }
    if (ctx.policy.write.match_guard_on(views, dir).matched()) {
        return false;
    }
    if (ctx.policy.policy.git) {
        for (const auto& v : views) {
            const GitMatch g = match_git(v.segs, v.strip, t, ctx.request.op);
            if (g.matched() || g.possible) {
                return false;
            }
        }
    }
    return true;
}

// The verdict of one path of one target, with strip = segments inside a data root. `dir`, when
// given, is the guard rows' state after the path's directory (DirMemo).
Decision judge_readings(Context& ctx, const Readings& r, const Target& t, const PathView& pv,
                        patterns::GuardPrefix* dir) {
    const CompiledPolicy& p = ctx.policy;
    Decision d;
    if (nothing_on_covering(ctx, r, t, dir)) {
        return d; // what matches, and on which reading, is left to the walk of every reading
    }
    auto offer_rule = [&](const patterns::GuardMatch& m) {
        if (!m.matched()) {
            return;
        }
        if (d.tier != Tier::None && m.best.verdict <= d.verdict) {
            return;
        }
        const patterns::Rule& rule = p.write.rule(m.best.rule);
        d.verdict = m.best.verdict;
        d.tier = rule.tier;
        d.rule = rule.pattern;
        d.reason = rule.reason;
        d.reading = m.reading;
    };
    offer_rule(p.write.match_guard_on(r.all(), dir)); // resumed from dir's state when given
    if (t.through) {
        offer_rule(p.write.match_guard_partial(r));
    }
    if (p.policy.git && d.verdict != Verdict::Deny) {
        for (const auto& v : r.all()) {
            const GitMatch g = match_git(v.segs, v.strip, t, ctx.request.op);
            // A surface let through here (a config judged by its content) is no settled path:
            // the next change of it must be judged again.
            ctx.settled = ctx.settled && !g.possible && !g.matched();
            if (!g.matched()) {
                continue;
            }
            if ((g.surface == GitSurface::Config || g.surface == GitSurface::ConfigWorktree) &&
                ctx.request.git_config && ctx.request.op == Op::Rename &&
                t.role == Role::RenameDestination && ctx.git_config_judge != nullptr) {
                // config.lock renamed onto config: judged by content (design §4a).
                const auto key = ctx.git_config_judge(*ctx.request.git_config);
                if (key && key->empty()) {
                    continue; // adds or changes no key through which git runs a program
                }
                d.verdict = Verdict::Deny;
                d.tier = Tier::Git;
                d.rule = std::string(g.row);
                d.reading = v.kind;
                d.reason = key ? fmt::format("the new config sets '{}', through which git runs "
                                             "a program or reads another file",
                                             *key)
                               : std::string("the new config could not be parsed");
                break;
            }
            d.verdict = Verdict::Deny;
            d.tier = Tier::Git;
            d.rule = std::string(g.row);
            d.reading = v.kind;
            d.reason = "git runs code from here later (hooks, config, attributes, gitdir "
                       "pointers)";
            break;
        }
    }
    if (d.tier != Tier::None) {
        d.view = pv.view;
        d.path = pv.path;
    }
    return d;
}

// Whether the approver already allowed this ask during the request (Judge::decide's
// `granted`): the same path (d.path, the asking view's), rule and tier.
bool was_granted(const Context& ctx, const Decision& d) {
    return std::any_of(ctx.granted.begin(), ctx.granted.end(),
                       [&](const GrantedAsk& g) { return g.covers(d); });
}

// On equal verdicts, whether `a` says more about why than `b`: a rule matched where none did,
// or, where no rule matched, a data-root exemption that lifted one.
bool more_telling(const Decision& a, const Decision& b) noexcept {
    if (b.tier != Tier::None) {
        return false;
    }
    return a.tier != Tier::None || (b.exempt_root.empty() && !a.exempt_root.empty());
}

Decision judge_path(Context& ctx, const Target& t, const PathView& pv) {
    const CompiledPolicy& p = ctx.policy;
    if (is_self(p, pv.path, t.through)) {
        Decision d;
        d.verdict = Verdict::Deny;
        d.tier = Tier::SelfProtection;
        d.rule = pv.path;
        d.view = pv.view;
        d.path = pv.path;
        d.reason = "guardfs's own policy, allow file or audit log";
        return d;
    }
    if (!p.write.has_guard_rules() && !p.policy.git) {
        return Decision{}; // nothing could match: no readings to build
    }
    patterns::GuardPrefix* dir =
        p.write.has_guard_rules() ? dir_memo().find(ctx, pv.path) : nullptr;
    Readings& r = scratch_readings();
    if (dir != nullptr) {
        // Only the last name is read; the directory's segments come from its memo.
        r.build_below(dir->readings(), std::string_view(pv.path).substr(dir->dir().size() + 1));
    } else {
        r.build(pv.path, 0);
    }
    Decision d = judge_readings(ctx, r, t, pv, dir);
    if (d.tier == Tier::None) {
        return d; // nothing matched: the data root is never consulted
    }
    if (!p.roots.empty()) {
        for (const RootKey& k : ctx.root_keys()) {
            const auto inside = dataroot::inside_root(pv.path, k.key);
            if (!inside) {
                continue;
            }
            r.build(pv.path, *inside);
            d = judge_readings(ctx, r, t, pv, nullptr);
            // Named also when nothing matches inside the root: the exemption decided then, and
            // the audit log says so (design §7).
            d.exempt_root = k.key;
            // Never a settled path: the root is resolved again at each decision (design §5), and
            // a symlinked root retargeted leaves this path guarded again.
            ctx.settled = false;
            break;
        }
    }
    if (d.verdict == Verdict::Ask && p.write.has_allow_rules()) {
        // Allow rows lift an ask, matched by exact bytes on the same view (design §2).
        const patterns::MatchBest allow = p.write.match_allow(r);
        if (allow.matched()) {
            const patterns::Rule& rule = p.write.rule(allow.rule);
            d.verdict = Verdict::Allow;
            d.reason = fmt::format("ask row '{}' lifted by allow row '{}'", d.rule, rule.pattern);
            d.rule = rule.pattern;
            d.tier = rule.tier;
        }
    }
    if (d.verdict == Verdict::Ask && was_granted(ctx, d)) {
        d.verdict = Verdict::Allow;
        d.reason = fmt::format("ask row '{}' ({}) allowed by the approver", d.rule,
                               patterns::to_string(d.tier));
        return d;
    }
    if (d.verdict == Verdict::Ask && ctx.answers != nullptr && !ctx.answers->empty()) {
        // A remembered answer, on this view's exact bytes (design §6).
        if (const auto a = ctx.answers->find(pv.path, d.rule, d.tier)) {
            d.verdict = a->verdict;
            d.reason = fmt::format("ask row '{}' ({}) answered by a remembered {} (scope {})",
                                   d.rule, patterns::to_string(d.tier),
                                   patterns::to_string(a->verdict), patterns::to_string(a->scope));
            d.tier = Tier::Remembered;
        }
    }
    return d;
}

// The read face (design §8): read.deny rows hide a path and everything below it. No data-root
// exemption and no allow rows: hiding is decided by the rows alone, before the disk is touched.
Decision judge_read(const CompiledPolicy& p, const Request& request) {
    Decision best;
    if (!p.read.has_guard_rules()) {
        return best;
    }
    Readings& r = scratch_readings();
    for (const Target& t : request.targets) {
        for (const PathView& pv : t.views) {
            r.build(pv.path, 0);
            const auto m = p.read.match_guard(r);
            if (!m.matched()) {
                continue;
            }
            const patterns::Rule& rule = p.read.rule(m.best.rule);
            best.verdict = Verdict::Deny;
            best.tier = Tier::ReadFace;
            best.rule = rule.pattern;
            best.reason = rule.reason.empty() ? "hidden by the read face" : rule.reason;
            best.view = pv.view;
            best.path = pv.path;
            best.reading = m.reading;
            return best;
        }
    }
    return best;
}

std::optional<Decision> hidden_by_rename(const CompiledPolicy& p, const Target& t) {
    Readings& r = scratch_readings();
    for (const PathView& pv : t.views) {
        r.build(pv.path, 0);
        auto m = p.read.match_guard(r);
        if (!m.matched() && t.through) {
            m = p.read.match_guard_partial(r);
        }
        if (!m.matched()) {
            continue;
        }
        Decision d;
        d.verdict = Verdict::Deny;
        d.tier = Tier::ReadFace;
        d.rule = p.read.rule(m.best.rule).pattern;
        d.view = pv.view;
        d.path = pv.path;
        d.reading = m.reading;
        d.reason = "a rename may not move a path the read face hides out of its hiding place";
        return d;
    }
    return std::nullopt;
}

} // namespace

namespace {

std::atomic<std::uint64_t> g_next_judge_id{1};

struct PolicyCache {
    std::uint64_t judge = 0;
    std::uint64_t generation = 0;
    std::shared_ptr<const CompiledPolicy> policy;
};

thread_local PolicyCache t_policy_cache;

} // namespace

Judge::Judge(std::shared_ptr<const CompiledPolicy> policy, dataroot::FsOps& fs,
             GitConfigJudge git_config_judge)
    : policy_(std::move(policy))
    , id_(g_next_judge_id.fetch_add(1))
    , fs_(fs)
    , git_config_judge_(git_config_judge) {}

const std::shared_ptr<const CompiledPolicy>& Judge::current() const {
    PolicyCache& cache = t_policy_cache;
    const std::uint64_t generation = generation_.load(std::memory_order_acquire);
    if (cache.judge != id_ || cache.generation != generation || !cache.policy) {
        cache.policy = policy_.load();
        cache.judge = id_;
        cache.generation = generation;
    }
    return cache.policy;
}

std::uint64_t Judge::settled_token() const noexcept {
    // Never 0; another judge's tokens differ (its id), as do this one's under another policy.
    return (id_ << 40U) + t_policy_cache.generation + 1;
}

std::shared_ptr<const CompiledPolicy> Judge::policy() const noexcept {
    return policy_.load();
}

void Judge::set_policy(std::shared_ptr<const CompiledPolicy> policy) noexcept {
    policy_.store(std::move(policy));
    generation_.fetch_add(1, std::memory_order_release);
}

Decision Judge::decide(const Request& request) const noexcept {
    return decide(request, {});
}

Decision Judge::decide(const Request& request, std::span<const GrantedAsk> granted) const noexcept {
    try {
        return decide_unsafe(request, granted);
    } catch (...) {
        Decision d;
        d.verdict = Verdict::Deny;
        d.tier = Tier::Internal;
        d.reason = "internal error while judging (fail closed)";
        return d;
    }
}

Decision Judge::decide_unsafe(const Request& request, std::span<const GrantedAsk> granted) const {
    const std::shared_ptr<const CompiledPolicy>& owner = current();
    const CompiledPolicy* policy = owner.get();
    Decision best;
    if (!policy) {
        best.verdict = Verdict::Deny;
        best.tier = Tier::Internal;
        best.reason = "no policy loaded (fail closed)";
        return best;
    }
    if (is_read_op(request.op)) {
        return judge_read(*policy, request);
    }
    Context ctx{*policy,  owner,   fs_,   request, git_config_judge_,
                answers_, granted, false, {},      true};
    if (request.targets.empty()) {
        best.verdict = Verdict::Deny;
        best.tier = Tier::Internal;
        best.reason = "request without a target (fail closed)";
        return best;
    }
    for (const Target& t : request.targets) {
        if (t.views.empty()) {
            best.verdict = Verdict::Deny;
            best.tier = Tier::Internal;
            best.reason = "where the target lands could not be determined (fail closed)";
            return best;
        }
        if (t.identity && std::find(policy->self_ids.begin(), policy->self_ids.end(),
                                    *t.identity) != policy->self_ids.end()) {
            Decision d;
            d.verdict = Verdict::Deny;
            d.tier = Tier::SelfProtection;
            d.rule = "(identity)";
            d.view = View::Identity;
            d.path = t.views.front().path;
            d.reason = "the same file as guardfs's own policy, allow file or audit log";
            return d;
        }
        if ((t.role == Role::RenameSource || t.role == Role::RenameDestination) &&
            policy->read.has_guard_rules()) {
            // The read face (design §8): a rename may not carry a hidden path out of the run
            // that hides it (moving it, or a directory its hiding run passes through). Judged
            // before a settled token is taken: the token speaks for the write rows alone.
            if (auto hidden = hidden_by_rename(*policy, t)) {
                return *hidden;
            }
        }
        if (t.settled != 0 && t.settled == settled_token() && !t.through &&
            t.role != Role::LinkTarget) {
            continue; // these views match nothing under this policy (Decision::settled)
        }
        Decision target_best;
        for (const PathView& pv : t.views) {
            Decision d = judge_path(ctx, t, pv);
            if (stronger(d, target_best) || more_telling(d, target_best)) {
                target_best = std::move(d);
            }
            if (target_best.verdict == Verdict::Deny) {
                break;
            }
        }
        if (t.through || t.role == Role::LinkTarget) {
            ctx.settled = false; // judged on more than its views' rows, or links_out
        }
        if (t.role == Role::LinkTarget && t.leaves_tree && target_best.tier == Tier::None) {
            target_best.verdict = policy->policy.links_out;
            target_best.tier = Tier::LinksOut;
            target_best.rule = "links_out";
            target_best.view = t.views.front().view;
            target_best.path = t.views.front().path;
            target_best.reason = "a new symbolic link whose target leaves the mounted tree";
            if (target_best.verdict == Verdict::Ask && was_granted(ctx, target_best)) {
                target_best.verdict = Verdict::Allow;
            }
        }
        if (stronger(target_best, best) || more_telling(target_best, best)) {
            best = std::move(target_best);
        }
        if (best.verdict == Verdict::Deny) {
            break;
        }
    }
    if (best.tier == Tier::None && ctx.settled) {
        best.settled = settled_token();
    }
    return best;
}

} // namespace guardfs::guard

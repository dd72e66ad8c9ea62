// The judge (design §2–§5, §8): every view of every target against every rule, the data-root
// exemption where a rule matched, allow rows lifting asks, and the deny > ask > allow fold.
// decide() never throws and never blocks on anything but the filesystem questions the data root
// needs; any internal failure is a Deny with tier Internal (fail closed).
#pragma once

#include "dataroot/fs_ops.hpp"
#include "guard/answers.hpp"
#include "guard/compiled_policy.hpp"
#include "guard/request.hpp"

#include <atomic>
#include <memory>
#include <span>
#include <string>

namespace guardfs::guard {

// Judges a proposed git config content against the current one (design §4a). Returns the first
// key through which git would run a program or read another file that the change adds or
// alters, "" when there is none, or nullopt when the content cannot be judged (then: deny).
using GitConfigJudge = std::optional<std::string> (*)(const GitConfigChange& change) noexcept;

// An ask the approver allowed while this request waits: one request (a rename, a link) can meet
// ask rows on several views, and each is put to the approver in turn (design §6: a question
// names the rule that asked). Matched by the asking view's exact bytes, rule and tier.
struct GrantedAsk {
    std::string path;
    std::string rule;
    Tier tier = Tier::None;

    // Whether this allow answers the ask `d`: the same asking path, rule and tier.
    [[nodiscard]] bool covers(const Decision& d) const noexcept {
        return path == d.path && rule == d.rule && tier == d.tier;
    }
};

class Judge {
public:
    // fs answers the data root's and link targets' filesystem questions; it must outlive the
    // judge. The policy may be swapped later with set_policy().
    Judge(std::shared_ptr<const CompiledPolicy> policy, dataroot::FsOps& fs,
          GitConfigJudge git_config_judge = nullptr);

    [[nodiscard]] Decision decide(const Request& request) const noexcept;

    // decide() with the asks already allowed during this request counted as allowed.
    [[nodiscard]] Decision decide(const Request& request,
                                  std::span<const GrantedAsk> granted) const noexcept;

    // The policy the next decision will use.
    [[nodiscard]] std::shared_ptr<const CompiledPolicy> policy() const noexcept;

    // Swaps the policy for every later decision (a reload). Decisions in flight finish with the
    // policy they started with.
    void set_policy(std::shared_ptr<const CompiledPolicy> policy) noexcept;

    // Remembered answers consulted for an ask, per view, after the allow rows (design §6).
    // Not owned; must outlive the judge. Set before the first decision.
    void set_answers(const AnswerStore* answers) noexcept { answers_ = answers; }

private:
    Decision decide_unsafe(const Request& request, std::span<const GrantedAsk> granted) const;

    // The policy for this decision, from a per-thread copy that is refreshed only when the
    // generation moved (a reload): no atomic read-modify-write per decision. The reference
    // stays valid until this thread's next decision.
    [[nodiscard]] const std::shared_ptr<const CompiledPolicy>& current() const;

    // The Decision::settled token for the policy current() returned last on this thread.
    [[nodiscard]] std::uint64_t settled_token() const noexcept;

    std::atomic<std::shared_ptr<const CompiledPolicy>> policy_;
    std::atomic<std::uint64_t> generation_{0};
    std::uint64_t id_; // unique per judge, for the per-thread copy
    dataroot::FsOps& fs_;
    GitConfigJudge git_config_judge_;
    const AnswerStore* answers_ = nullptr;
};

// True when `a` should replace `b` as the decision: a stronger verdict; on equal verdicts the
// first found stands.
bool stronger(const Decision& a, const Decision& b) noexcept;

} // namespace guardfs::guard

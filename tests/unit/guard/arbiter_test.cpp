// The arbiter's wait hook (fusefs/ring_loop.hpp: the ring watchdog sleeps until a request may
// wait): called on the deciding thread before an ask waits for its answer, and for nothing else.
// And which paths a remembered answer is kept for.
#include "guard/arbiter.hpp"
#include "guard_support.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <memory>

using namespace guardfs;
using guard::Verdict;

namespace {

dataroot::RealFs g_fs;

// Calls of the hook, and whether the approver had been asked at the time of the last one.
std::atomic<int> g_hook_calls{0};
std::atomic<bool> g_asked_before_hook{false};
std::atomic<bool> g_asked{false};

void count_hook() noexcept {
    g_hook_calls.fetch_add(1);
    g_asked_before_hook.store(g_asked.load());
}

// Answers every question "allow" (remembered as `remember` says, for `scope`), noting that it
// was asked.
class AllowingApprover final : public guard::Approver {
public:
    explicit AllowingApprover(guard::Remember remember = guard::Remember::Once,
                              patterns::AnswerScope scope = patterns::AnswerScope::Path)
        : remember_(remember)
        , scope_(scope) {}

    void start() override {}

    void stop() override {}

    guard::Answer ask(const guard::Question& /*q*/,
                      std::chrono::milliseconds /*timeout*/) noexcept override {
        g_asked.store(true);
        ++sent_;
        guard::Answer a;
        a.answered = true;
        a.verdict = Verdict::Allow;
        a.remember = remember_;
        a.scope = scope_;
        return a;
    }

    [[nodiscard]] std::uint64_t questions_sent() const noexcept override { return sent_; }

private:
    guard::Remember remember_;
    patterns::AnswerScope scope_;
    std::uint64_t sent_ = 0;
};

} // namespace

TEST_CASE("the wait hook runs before an ask is put to the approver, and only for an ask",
          "[guard][arbiter]") {
    guard::Judge judge(test::policy_of("deny: [.env]\nask: [notes]\n"), g_fs);
    guard::Arbiter arbiter(judge, guard::ArbiterConfig{});
    arbiter.set_approver(std::make_unique<AllowingApprover>());
    arbiter.set_wait_hook(&count_hook);
    arbiter.start();
    g_hook_calls = 0;
    g_asked = false;

    using test::request;
    using test::target;
    CHECK(arbiter.decide(request(guard::Op::Write, {target("/w/src/main.c")})).verdict ==
          Verdict::Allow);
    CHECK(arbiter.decide(request(guard::Op::Write, {target("/w/.env")})).verdict == Verdict::Deny);
    CHECK(g_hook_calls.load() == 0);
    CHECK_FALSE(g_asked.load());

    CHECK(arbiter.decide(request(guard::Op::Write, {target("/w/notes/a.md")})).verdict ==
          Verdict::Allow); // the approver's answer
    CHECK(g_hook_calls.load() == 1);
    CHECK(g_asked.load());
    CHECK_FALSE(g_asked_before_hook.load());
    arbiter.stop();
}

TEST_CASE("an arbiter without a wait hook asks as before", "[guard][arbiter]") {
    guard::Judge judge(test::policy_of("ask: [notes]\n"), g_fs);
    guard::Arbiter arbiter(judge, guard::ArbiterConfig{});
    arbiter.set_approver(std::make_unique<AllowingApprover>());
    arbiter.start();
    CHECK(
        arbiter.decide(test::request(guard::Op::Write, {test::target("/w/notes/a.md")})).verdict ==
        Verdict::Allow);
    CHECK(arbiter.approver()->questions_sent() == 1);
    arbiter.stop();
}

TEST_CASE("a remembered answer covers each spelling of the path asked about, not the file's "
          "other names",
          "[guard][arbiter][remember]") {
    guard::Judge judge(test::policy_of("ask: [notes, drafts]\n"), g_fs);
    guard::AnswerStore answers;
    judge.set_answers(&answers);
    guard::Arbiter arbiter(judge, guard::ArbiterConfig{});
    arbiter.set_answers(&answers, nullptr);
    auto approver =
        std::make_unique<AllowingApprover>(guard::Remember::Mount, patterns::AnswerScope::Dir);
    const guard::Approver& asked = *approver;
    arbiter.set_approver(std::move(approver));
    arbiter.start();

    // Asked about notes/a.md, spelled under a mount point (/m) and under its workspace (/w); the
    // file also has a name in drafts/ that the guard has seen.
    guard::Target t = test::target("/m/notes/a.md");
    t.views.push_back(guard::PathView{"/w/notes/a.md", guard::View::Canonical});
    t.views.push_back(guard::PathView{"/w/drafts/b.md", guard::View::OtherName});
    CHECK(arbiter.decide(test::request(guard::Op::Write, {t})).verdict == Verdict::Allow);
    const auto first = asked.questions_sent();
    CHECK(first >= 1);
    // notes/ is answered under both spellings
    guard::Target again = test::target("/w/notes/c.md");
    again.views.push_back(guard::PathView{"/m/notes/c.md", guard::View::Canonical});
    CHECK(arbiter.decide(test::request(guard::Op::Write, {again})).verdict == Verdict::Allow);
    CHECK(asked.questions_sent() == first);
    // drafts/ was never put to the approver as a directory of its own
    CHECK(
        arbiter.decide(test::request(guard::Op::Write, {test::target("/w/drafts/d.md")})).verdict ==
        Verdict::Allow);
    CHECK(asked.questions_sent() == first + 1);
    arbiter.stop();
}

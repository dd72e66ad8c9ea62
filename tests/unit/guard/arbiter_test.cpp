// The arbiter's wait hook (fusefs/ring_loop.hpp: the ring watchdog sleeps until a request may
// wait): called on the deciding thread before an ask waits for its answer, and for nothing else.
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

// Answers every question "allow", noting that it was asked.
class AllowingApprover final : public guard::Approver {
public:
    void start() override {}

    void stop() override {}

    guard::Answer ask(const guard::Question& /*q*/,
                      std::chrono::milliseconds /*timeout*/) noexcept override {
        g_asked.store(true);
        ++sent_;
        guard::Answer a;
        a.answered = true;
        a.verdict = Verdict::Allow;
        return a;
    }

    [[nodiscard]] std::uint64_t questions_sent() const noexcept override { return sent_; }

private:
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

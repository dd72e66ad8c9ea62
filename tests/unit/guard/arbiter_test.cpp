// The arbiter's wait hook (fusefs/ring_loop.hpp: the ring watchdog sleeps until a request may
// wait): called on the deciding thread before an ask waits for its answer, and for nothing else.
// And which paths a remembered answer is kept for.
#include "guard/arbiter.hpp"
#include "guard_support.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <string>

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

// Answers every question "allow" (remembered as `remember` says, for `scope`), but "deny" to one
// about the path `refused`, noting that it was asked.
class AnsweringApprover final : public guard::Approver {
public:
    explicit AnsweringApprover(guard::Remember remember = guard::Remember::Once,
                               patterns::AnswerScope scope = patterns::AnswerScope::Path,
                               std::string refused = {})
        : remember_(remember)
        , scope_(scope)
        , refused_(std::move(refused)) {}

    void start() override {}

    void stop() override {}

    guard::Answer ask(const guard::Question& q,
                      std::chrono::milliseconds /*timeout*/) noexcept override {
        g_asked.store(true);
        ++sent_;
        guard::Answer a;
        a.answered = true;
        a.verdict = q.path == refused_ ? Verdict::Deny : Verdict::Allow;
        a.remember = remember_;
        a.scope = scope_;
        return a;
    }

    [[nodiscard]] std::uint64_t questions_sent() const noexcept override { return sent_; }

private:
    guard::Remember remember_;
    patterns::AnswerScope scope_;
    std::string refused_;
    std::uint64_t sent_ = 0;
};

// A judge of `yaml` and an arbiter that puts its asks to `approver`, started, and stopped at the
// end of the scope.
struct Asking {
    guard::Judge judge;
    guard::Arbiter arbiter;

    explicit Asking(const std::string& yaml, std::unique_ptr<guard::Approver> approver =
                                                 std::make_unique<AnsweringApprover>())
        : judge(test::policy_of(yaml), g_fs)
        , arbiter(judge, guard::ArbiterConfig{}) {
        arbiter.set_approver(std::move(approver));
        arbiter.start();
    }

    ~Asking() { arbiter.stop(); }

    Asking(const Asking&) = delete;
    Asking& operator=(const Asking&) = delete;

    [[nodiscard]] std::uint64_t questions() { return arbiter.approver()->questions_sent(); }
};

} // namespace

TEST_CASE("the wait hook runs before an ask is put to the approver, and only for an ask",
          "[guard][arbiter]") {
    guard::Judge judge(test::policy_of("deny: [.env]\nask: [notes]\n"), g_fs);
    guard::Arbiter arbiter(judge, guard::ArbiterConfig{});
    arbiter.set_approver(std::make_unique<AnsweringApprover>());
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
    arbiter.set_approver(std::make_unique<AnsweringApprover>());
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
        std::make_unique<AnsweringApprover>(guard::Remember::Mount, patterns::AnswerScope::Dir);
    const guard::Approver& asked = *approver;
    arbiter.set_approver(std::move(approver));
    arbiter.start();

    // Asked about notes/a.md, spelled under a mount point (/m) and under its workspace (/w); the
    // file also has a name in drafts/ that the guard has seen.
    guard::Target t = test::target("/m/notes/a.md");
    t.views.push_back(guard::PathView{"/w/notes/a.md", guard::View::Canonical});
    t.views.push_back(guard::PathView{"/w/drafts/b.md", guard::View::OtherName});
    CHECK(arbiter.decide(test::request(guard::Op::Write, {t})).verdict == Verdict::Allow);
    // Two rows asked (notes, and drafts through the other name): two questions.
    CHECK(asked.questions_sent() == 2);
    // notes/ is answered under both spellings
    guard::Target again = test::target("/w/notes/c.md");
    again.views.push_back(guard::PathView{"/m/notes/c.md", guard::View::Canonical});
    CHECK(arbiter.decide(test::request(guard::Op::Write, {again})).verdict == Verdict::Allow);
    CHECK(asked.questions_sent() == 2);
    // The answer about notes/ was not kept for drafts/, the other name's directory ...
    CHECK_FALSE(answers.find("/w/drafts/d.md", "notes", patterns::Tier::Policy));
    // ... which has an answer of its own, from its own question.
    CHECK(answers.find("/w/drafts/d.md", "drafts", patterns::Tier::Policy));
    CHECK(
        arbiter.decide(test::request(guard::Op::Write, {test::target("/w/drafts/d.md")})).verdict ==
        Verdict::Allow);
    CHECK(asked.questions_sent() == 2);
    arbiter.stop();
}

TEST_CASE("a request that meets two ask rows puts each to the approver, and needs both allowed",
          "[guard][arbiter]") {
    // A rename from one ask row onto another (.claude/skills/e onto CLAUDE.md) named only the
    // first end's row, and the allow for it let the file land unasked on the second.
    Asking asking("ask: [skills, CLAUDE.md]\n");
    const guard::Target from = test::target("/w/.claude/skills/e", guard::Role::RenameSource);
    const guard::Target to = test::target("/w/CLAUDE.md", guard::Role::RenameDestination);
    CHECK(asking.arbiter.decide(test::request(guard::Op::Rename, {from, to})).verdict ==
          Verdict::Allow);
    CHECK(asking.questions() == 2);
    // A rename inside one row is one question: it shows both paths and the row.
    const guard::Target inside =
        test::target("/w/.claude/skills/f", guard::Role::RenameDestination);
    CHECK(asking.arbiter.decide(test::request(guard::Op::Rename, {from, inside})).verdict ==
          Verdict::Allow);
    CHECK(asking.questions() == 3);

    // Refused when the second row's answer is deny.
    Asking refusing("ask: [skills, CLAUDE.md]\n",
                    std::make_unique<AnsweringApprover>(
                        guard::Remember::Once, patterns::AnswerScope::Path, "/w/CLAUDE.md"));
    const auto d = refusing.arbiter.decide(test::request(guard::Op::Rename, {from, to}));
    CHECK(d.verdict == Verdict::Deny);
    CHECK(d.rule == "CLAUDE.md");
    CHECK(refusing.questions() == 2);
}

TEST_CASE("a links_out ask allowed once is not asked again", "[guard][arbiter]") {
    // The per-row loop re-judged the request, and links_out's ask (decided after the views'
    // fold) never counted as allowed: eight identical questions, then a refusal.
    Asking asking("links_out: ask\n");
    const guard::Target link = test::target("/w/lnk", guard::Role::NewName);
    guard::Target to = test::target("/etc/passwd", guard::Role::LinkTarget);
    to.views.front().view = guard::View::LinkTarget;
    to.leaves_tree = true;
    const auto d = asking.arbiter.decide(test::request(guard::Op::Symlink, {link, to}));
    CHECK(d.verdict == Verdict::Allow);
    CHECK(asking.questions() == 1);
}

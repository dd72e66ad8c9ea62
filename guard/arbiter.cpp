// The decision pipeline; see arbiter.hpp.
#include "guard/arbiter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace guardfs::guard {

namespace {

// Questions one request may put to the approver, one per row that asked (a rename's two ends,
// a few views each); past this many the request is refused.
constexpr std::size_t kMaxQuestionsPerRequest = 8;

} // namespace

std::string command_line(pid_t pid) {
    if (pid <= 0) {
        return {};
    }
    const std::string path = fmt::format("/proc/{}/cmdline", pid);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return {};
    }
    std::array<char, 4096> buf{};
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    ::close(fd);
    if (n <= 0) {
        return {};
    }
    std::string out(buf.data(), static_cast<std::size_t>(n));
    while (!out.empty() && out.back() == '\0') {
        out.pop_back();
    }
    for (char& c : out) {
        if (c == '\0') {
            c = ' ';
        }
    }
    return out;
}

Arbiter::Arbiter(Judge& judge, ArbiterConfig config) : judge_(judge), config_(std::move(config)) {}

Arbiter::~Arbiter() {
    stop();
}

void Arbiter::set_approver(std::unique_ptr<Approver> approver) {
    approver_ = std::move(approver);
}

void Arbiter::set_answers(AnswerStore* answers, HostFiles* files) noexcept {
    answers_ = answers;
    files_ = files;
    judge_.set_answers(answers);
}

std::string Arbiter::prepare() {
    return approver_ ? approver_->prepare() : std::string();
}

void Arbiter::start() {
    if (approver_) {
        approver_->start();
    }
}

void Arbiter::stop() {
    if (approver_) {
        approver_->stop();
    }
}

Answer Arbiter::ask_once(const Question& q, const std::string& key) {
    // Identical questions in flight are asked once (design §6): later askers wait for the first.
    std::shared_ptr<InFlight> flight;
    bool first = false;
    {
        std::lock_guard<std::mutex> lock(inflight_mu_);
        auto& slot = inflight_[key];
        if (!slot) {
            slot = std::make_shared<InFlight>();
            first = true;
        }
        flight = slot;
    }
    if (!first) {
        std::unique_lock<std::mutex> lock(flight->m);
        // The first asker waits at most the timeout; wait a little longer for it to report.
        if (!flight->cv.wait_for(lock, config_.timeout + std::chrono::seconds(5),
                                 [&] { return flight->done; })) {
            Answer a;
            a.failure = "no answer within the timeout";
            return a;
        }
        return flight->answer;
    }
    Answer answer = approver_->ask(q, config_.timeout);
    {
        std::lock_guard<std::mutex> lock(inflight_mu_);
        inflight_.erase(key);
    }
    {
        std::lock_guard<std::mutex> lock(flight->m);
        flight->answer = answer;
        flight->done = true;
    }
    flight->cv.notify_all();
    return answer;
}

namespace {

// The spellings of the path that asked (design §6: an answer matches again): the path as the
// request spelled it and its canonical form, or a link target's two, when a mount point apart
// from its workspace spells one file two ways. Never another hard link's name, which the
// approver was not asked about.
std::vector<std::string_view> asked_spellings(const Request& request, const Decision& d) {
    auto family = [](View v) {
        return v == View::Spelled || v == View::Canonical                ? 1
               : v == View::LinkTarget || v == View::LinkTargetCanonical ? 2
                                                                         : 0;
    };
    std::vector<std::string_view> paths{d.path};
    if (family(d.view) == 0) {
        return paths;
    }
    for (const Target& t : request.targets) {
        const bool asked = std::any_of(t.views.begin(), t.views.end(), [&](const PathView& v) {
            return v.path == d.path && v.view == d.view;
        });
        if (!asked) {
            continue;
        }
        for (const PathView& v : t.views) {
            if (family(v.view) == family(d.view) &&
                std::find(paths.begin(), paths.end(), v.path) == paths.end()) {
                paths.push_back(v.path);
            }
        }
    }
    return paths;
}

} // namespace

void Arbiter::remember(const Request& request, const Decision& d, const Answer& a) {
    if (!a.answered || a.remember == Remember::Once || answers_ == nullptr) {
        return;
    }
    // Kept for every spelling of the path that asked: the judge looks answers up view by view.
    const std::vector<std::string_view> paths = a.scope == patterns::AnswerScope::Rule
                                                    ? std::vector<std::string_view>{d.path}
                                                    : asked_spellings(request, d);
    const bool persist =
        a.remember == Remember::Persist && !config_.allow_file.empty() && files_ != nullptr;
    if (a.remember == Remember::Persist && !persist && audit_ != nullptr) {
        audit_->note("allow-file", "an answer to persist was kept for this mount only: no "
                                   "allow_file is configured");
    }
    // Persisting writes the whole list: the list taken and its write, one answer at a time, so
    // that a later write never carries an older list.
    std::unique_lock<std::mutex> persisting(persist_mu_, std::defer_lock);
    if (persist) {
        persisting.lock();
    }
    std::vector<patterns::StoredAnswer> list;
    for (const std::string_view path : paths) {
        patterns::StoredAnswer s;
        s.verdict = a.verdict;
        s.scope = a.scope;
        s.rule = d.rule;
        s.tier = d.tier;
        s.at = iso_time_now();
        if (a.scope == patterns::AnswerScope::Dir) {
            const auto slash = path.rfind('/');
            s.path = slash == 0 ? std::string("/") : std::string(path.substr(0, slash));
        } else if (a.scope == patterns::AnswerScope::Path) {
            s.path = path;
        }
        list = answers_->remember(std::move(s), persist);
    }
    if (persist) {
        const int err = files_->replace(config_.allow_file, patterns::answers_to_yaml(list));
        if (err != 0 && audit_ != nullptr) {
            audit_->note("allow-file", fmt::format("cannot write {}: {}", config_.allow_file,
                                                   strerrordesc_np(err)));
        }
    }
}

Decision Arbiter::resolve_ask(const Request& request, Decision d, std::string& command,
                              std::string& source, Answer& answer) {
    const std::string asked = fmt::format("ask row '{}' ({})", d.rule, patterns::to_string(d.tier));
    d.verdict = Verdict::Deny; // unless an answer says otherwise
    if (!approver_) {
        source = "none";
        d.reason = asked + ": no approver configured (fail closed)";
        return d;
    }
    if (waiting_.fetch_add(1) >= config_.max_waiting) {
        waiting_.fetch_sub(1);
        source = "busy";
        d.reason = asked + ": approver busy, too many questions waiting (fail closed)";
        return d;
    }
    Question q;
    q.id = next_id_.fetch_add(1);
    q.op = request.op;
    for (const auto& t : request.targets) {
        if (!t.views.empty()) {
            q.paths.push_back(t.views.front().path);
        }
    }
    q.path = d.path;
    q.rule = d.rule;
    q.tier = d.tier;
    q.reason = d.reason;
    q.caller = request.caller;
    q.command = command;
    std::string key = std::string(to_string(request.op));
    for (const auto& p : q.paths) {
        key += '\0';
        key += p;
    }
    key += '\0';
    key += q.path; // one request may ask about each of its paths in turn
    key += '\0';
    key += d.rule;
    key += '\0';
    key += patterns::to_string(d.tier);
    answer = ask_once(q, key);
    waiting_.fetch_sub(1);
    if (!answer.answered) {
        source = answer.failure;
        d.reason = asked + ": " + answer.failure + " (fail closed)";
        return d;
    }
    source = "approver";
    d.verdict = answer.verdict;
    d.reason = fmt::format("{}: {} by the approver (remember {}, scope {})", asked,
                           answer.verdict == Verdict::Allow ? "allowed" : "denied",
                           to_string(answer.remember), patterns::to_string(answer.scope));
    remember(request, d, answer);
    return d;
}

Decision Arbiter::decide(const Request& request) noexcept {
    const auto start = std::chrono::steady_clock::now();
    Decision d = judge_.decide(request);
    const Verdict judged =
        d.verdict == Verdict::Allow && d.tier == Tier::Remembered ? Verdict::Ask : d.verdict;
    try {
        std::string command;
        std::string source;
        Answer answer;
        if (d.verdict == Verdict::Ask || d.tier == Tier::Remembered ||
            (audit_ != nullptr && audit_->wants(judged, d.verdict))) {
            command = command_line(request.caller.pid);
        }
        if (d.tier == Tier::Remembered) {
            source = "remembered";
        }
        if (d.verdict == Verdict::Ask) {
            if (wait_hook_ != nullptr) {
                wait_hook_();
            }
            // One question per asking row: a rename from one ask row onto another (or a link,
            // or views of one path under different rows) is allowed only when every row that
            // asked was answered allow, each named in its own question.
            std::vector<GrantedAsk> granted;
            for (std::size_t questions = 1;; ++questions) {
                // The question shows the path that asked, every path of the request (`paths`)
                // and the row: an allow speaks for that row on each of them (a rename inside one
                // ask directory is one question), never for another row, nor for another hard
                // link's name that did not ask, which the question does not show.
                std::vector<GrantedAsk> asked{GrantedAsk{d.path, d.rule, d.tier}};
                for (const Target& t : request.targets) {
                    for (const PathView& v : t.views) {
                        if (v.view != View::OtherName && v.view != View::Identity) {
                            asked.push_back(GrantedAsk{v.path, d.rule, d.tier});
                        }
                    }
                }
                d = resolve_ask(request, std::move(d), command, source, answer);
                if (d.verdict != Verdict::Allow) {
                    break;
                }
                granted.insert(granted.end(), std::make_move_iterator(asked.begin()),
                               std::make_move_iterator(asked.end()));
                Decision next = judge_.decide(request, granted);
                if (next.verdict == Verdict::Allow) {
                    break; // d, the last answer, speaks for the request
                }
                if (next.verdict == Verdict::Ask && questions >= kMaxQuestionsPerRequest) {
                    next.verdict = Verdict::Deny;
                    next.reason = fmt::format("ask row '{}' ({}): more questions than one request "
                                              "may ask (fail closed)",
                                              next.rule, patterns::to_string(next.tier));
                }
                const bool again = std::any_of(granted.begin(), granted.end(),
                                               [&](const auto& g) { return g.covers(next); });
                if (next.verdict == Verdict::Ask && again) {
                    // The judge asks again about what was allowed: never put the same question
                    // twice; refuse (fail closed).
                    next.verdict = Verdict::Deny;
                    next.tier = Tier::Internal;
                    next.reason = fmt::format("ask row '{}' asked again after its allow (fail "
                                              "closed)",
                                              next.rule);
                }
                d = std::move(next);
                if (d.verdict != Verdict::Ask) {
                    break; // a remembered deny on another row
                }
            }
        }
        if (audit_ != nullptr && audit_->wants(judged, d.verdict)) {
            AuditEvent e;
            e.request = &request;
            e.decision = &d;
            e.judged = judged;
            e.command = command;
            e.answer_source = source;
            e.answer = answer.answered ? &answer : nullptr;
            e.latency = std::chrono::duration_cast<std::chrono::microseconds>(
                std::chrono::steady_clock::now() - start);
            audit_->write(e);
        }
    } catch (...) {
        d.verdict = Verdict::Deny;
        d.tier = Tier::Internal;
        d.reason = "internal error while resolving an ask (fail closed)";
    }
    if (d.verdict == Verdict::Ask) {
        d.verdict = Verdict::Deny; // never leaves the arbiter as an ask
    }
    return d;
}

} // namespace guardfs::guard

// Approver transports; see approver.hpp.
//
// Shared by both: a map of waiting questions (id -> slot), filled by a reader thread, each
// entry tagged with the generation of the connection it was sent on, so that a dying
// co-process fails only its own questions and never one sent to its successor.
#include "guard/approver.hpp"

#include "base/unique_fd.hpp"
#include "guard/json_text.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

namespace guardfs::guard {

const char* to_string(Remember r) noexcept {
    switch (r) {
    case Remember::Once:
        return "once";
    case Remember::Mount:
        return "mount";
    case Remember::Persist:
        return "persist";
    }
    return "once";
}

std::string question_json(const Question& q) {
    nlohmann::json j;
    j["id"] = q.id;
    j["op"] = to_string(q.op);
    put_text(j, "path", q.path);
    put_text_list(j, "paths", q.paths);
    put_text(j, "rule", q.rule);
    j["tier"] = patterns::to_string(q.tier);
    j["pid"] = q.caller.pid;
    j["uid"] = q.caller.uid;
    put_text(j, "command", q.command);
    j["reason"] = utf8_or_replacement(q.reason);
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool parse_answer(std::string_view line, std::uint64_t& id, Answer& answer, std::string& why) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        why = "not a JSON object";
        return false;
    }
    if (!j.contains("id") || !j["id"].is_number_unsigned()) {
        why = "no numeric 'id'";
        return false;
    }
    id = j["id"].get<std::uint64_t>();
    if (!j.contains("verdict") || !j["verdict"].is_string()) {
        why = "no 'verdict'";
        return false;
    }
    const std::string verdict = j["verdict"].get<std::string>();
    if (verdict == "allow") {
        answer.verdict = Verdict::Allow;
    } else if (verdict == "deny") {
        answer.verdict = Verdict::Deny;
    } else {
        why = "'verdict' must be allow or deny";
        return false;
    }
    answer.remember = Remember::Once;
    if (j.contains("remember")) {
        const auto& r = j["remember"];
        if (r == "once") {
            answer.remember = Remember::Once;
        } else if (r == "mount") {
            answer.remember = Remember::Mount;
        } else if (r == "persist") {
            answer.remember = Remember::Persist;
        } else {
            why = "'remember' must be once, mount or persist";
            return false;
        }
    }
    answer.scope = patterns::AnswerScope::Path;
    if (j.contains("scope")) {
        const auto& s = j["scope"];
        if (s == "path") {
            answer.scope = patterns::AnswerScope::Path;
        } else if (s == "dir") {
            answer.scope = patterns::AnswerScope::Dir;
        } else if (s == "rule") {
            answer.scope = patterns::AnswerScope::Rule;
        } else {
            why = "'scope' must be path, dir or rule";
            return false;
        }
    }
    answer.answered = true;
    return true;
}

namespace {

constexpr std::size_t kMaxLine = 64 * 1024;

// Writes all of data, waiting for room until `deadline`: an approver that stops reading its
// input must not hold a question (and every later one) forever.
bool write_all(int fd, std::string_view data, bool socket,
               std::chrono::steady_clock::time_point deadline) {
    while (!data.empty()) {
        const ssize_t n = socket ? ::send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT)
                                 : ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                return false;
            }
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            pollfd p{fd, POLLOUT, 0};
            if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
                errno = ETIMEDOUT;
                return false;
            }
            continue;
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

Answer failed(std::string why) {
    Answer a;
    a.failure = std::move(why);
    return a;
}

class LineApprover : public Approver {
public:
    explicit LineApprover(LogFn log) : log_(std::move(log)) {}

    Answer ask(const Question& q, std::chrono::milliseconds timeout) noexcept override {
        try {
            Pending slot;
            std::string why;
            const auto deadline = std::chrono::steady_clock::now() + timeout;
            std::unique_lock<std::mutex> lock(mu_);
            if (stopping_) {
                return failed("approver stopped");
            }
            pending_[q.id] = &slot;
            lock.unlock();
            // The slot learns its connection's generation before the line is written, so an
            // answer (or the connection's death) can never arrive before the slot knows it.
            const bool sent = send(
                question_json(q) + "\n", why,
                [&](std::uint64_t gen) {
                    std::lock_guard<std::mutex> g(mu_);
                    slot.generation = gen;
                },
                deadline);
            lock.lock();
            if (!sent) {
                pending_.erase(q.id);
                return failed(why);
            }
            ++sent_;
            cv_.wait_until(lock, deadline, [&] { return slot.answer.has_value(); });
            pending_.erase(q.id);
            if (!slot.answer) {
                return failed("no answer within " + std::to_string(timeout.count()) + " ms");
            }
            return *slot.answer;
        } catch (...) {
            return failed("internal error while asking");
        }
    }

    [[nodiscard]] std::uint64_t questions_sent() const noexcept override { return sent_.load(); }

protected:
    struct Pending {
        std::optional<Answer> answer;
        std::uint64_t generation = 0; // 0 until sent
    };

    // Writes one line to the current connection (starting one if needed), after telling
    // `tag` the generation of that connection, waiting for room until `deadline` (the
    // question's own): an approver that stops reading cannot hold a question longer than its
    // timeout. False with why when it could not be sent.
    virtual bool send(const std::string& line, std::string& why,
                      const std::function<void(std::uint64_t)>& tag,
                      std::chrono::steady_clock::time_point deadline) = 0;

    // Logs an ignored line; after kMaxIgnoredLogged per connection, only a count is kept, so a
    // flooding approver cannot flood the log.
    void ignored(const std::string& what, std::uint64_t generation) {
        std::lock_guard<std::mutex> lock(ignored_mu_);
        if (ignored_generation_ != generation) {
            ignored_generation_ = generation;
            ignored_count_ = 0;
        }
        ++ignored_count_;
        if (ignored_count_ <= kMaxIgnoredLogged) {
            log_("approver: ignored " + what, true);
        } else if (ignored_count_ == kMaxIgnoredLogged + 1) {
            log_("approver: ignoring further unusable lines from this approver without logging "
                 "each",
                 true);
        }
    }

    void deliver(std::string_view line, std::uint64_t generation) {
        std::uint64_t id = 0;
        Answer a;
        std::string why;
        if (!parse_answer(line, id, a, why)) {
            ignored("a line (" + why + ")", generation);
            return;
        }
        std::lock_guard<std::mutex> lock(mu_);
        auto it = pending_.find(id);
        if (it == pending_.end() || it->second->generation != generation) {
            ignored("an answer for unknown id " + std::to_string(id), generation);
            return;
        }
        it->second->answer = a;
        cv_.notify_all();
    }

    // Fails every question sent on `generation` (0: every question).
    void fail_all(std::uint64_t generation, const std::string& why) {
        std::lock_guard<std::mutex> lock(mu_);
        for (auto& [id, slot] : pending_) {
            if (!slot->answer && (generation == 0 || slot->generation == generation)) {
                slot->answer = failed(why);
            }
        }
        cv_.notify_all();
    }

    // Reads lines from fd until end of file or error; each goes to deliver().
    void read_lines(int fd, std::uint64_t generation) {
        std::string buf;
        std::array<char, 4096> chunk{};
        bool discarding = false;
        for (;;) {
            const ssize_t n = ::read(fd, chunk.data(), chunk.size());
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                return;
            }
            buf.append(chunk.data(), static_cast<std::size_t>(n));
            std::size_t start = 0;
            for (;;) {
                const auto nl = buf.find('\n', start);
                if (nl == std::string::npos) {
                    break;
                }
                if (!discarding) {
                    deliver(std::string_view(buf).substr(start, nl - start), generation);
                }
                discarding = false;
                start = nl + 1;
            }
            buf.erase(0, start);
            if (buf.size() > kMaxLine) {
                log_("approver: ignored a line longer than 64 KiB", true);
                buf.clear();
                discarding = true;
            }
        }
    }

    void stop_waiting() {
        std::lock_guard<std::mutex> lock(mu_);
        stopping_ = true;
    }

    bool stopping() {
        std::lock_guard<std::mutex> lock(mu_);
        return stopping_;
    }

    LogFn log_;

private:
    static constexpr std::uint64_t kMaxIgnoredLogged = 20;
    std::mutex ignored_mu_;
    std::uint64_t ignored_generation_ = 0; // protected by ignored_mu_
    std::uint64_t ignored_count_ = 0;      // protected by ignored_mu_
    std::mutex mu_;
    std::condition_variable cv_;
    std::map<std::uint64_t, Pending*> pending_; // protected by mu_
    bool stopping_ = false;                     // protected by mu_
    std::atomic<std::uint64_t> sent_{0};
};

// ---- the co-process ---------------------------------------------------------------------------

class ProcessApprover final : public LineApprover {
public:
    ProcessApprover(std::vector<std::string> argv, std::string cwd, LogFn log, mode_t umask)
        : LineApprover(std::move(log))
        , argv_(std::move(argv))
        , spawn_argv_(with_umask(argv_, umask))
        , cwd_(std::move(cwd)) {}

    ~ProcessApprover() override { stop(); }

    void start() override { ::signal(SIGPIPE, SIG_IGN); }

    void stop() override {
        stop_waiting();
        std::lock_guard<std::mutex> lock(proc_mu_);
        reap_locked(true);
        fail_all(0, "approver stopped");
    }

protected:
    bool send(const std::string& line, std::string& why,
              const std::function<void(std::uint64_t)>& tag,
              std::chrono::steady_clock::time_point deadline) override {
        std::lock_guard<std::mutex> lock(proc_mu_);
        if (stopping()) { // stopped while this question was on its way: no approver again
            why = "approver stopped";
            return false;
        }
        if (dead_.load() || pid_ <= 0) {
            reap_locked(false);
            if (!spawn_locked(why)) {
                return false;
            }
        }
        tag(generation_);
        if (!write_all(to_child_, line, false, deadline)) {
            // It died, or it stopped reading: either way it is replaced for the next question.
            why = "the approver is not reading its input (it died or is stuck)";
            dead_ = true;
            if (pid_ > 0) {
                ::kill(-pid_, SIGKILL);
            }
            return false;
        }
        return true;
    }

private:
    // The daemon serves with umask 0 (the kernel applied each caller's already), and a spawned
    // program inherits it: the approver's own files (its log) would be world-writable. It runs
    // under `mask` (022 when that is 0 too), set by a shell that then execs it: same pid and
    // process group, and posix_spawn cannot set a umask.
    static std::vector<std::string> with_umask(const std::vector<std::string>& argv, mode_t mask) {
        std::vector<std::string> out{
            "/bin/sh", "-c",
            fmt::format("umask {:03o} && exec \"$@\"", mask == 0 ? 022U : unsigned{mask}),
            "guardfs-approver"};
        out.insert(out.end(), argv.begin(), argv.end());
        return out;
    }

    // Whether the configured program can be run, as execvp would find it: the shell in front
    // (with_umask) always starts, so a missing approver would otherwise show only as a shell's
    // exit. 0 or the errno (ENOENT, EACCES).
    int findable() const {
        const std::string& name = argv_.front();
        auto runnable = [](const std::string& p) {
            struct stat st {};
            return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
                   ::access(p.c_str(), X_OK) == 0;
        };
        if (name.find('/') != std::string::npos) {
            const std::string p = name.front() == '/' || cwd_.empty() ? name : cwd_ + "/" + name;
            return runnable(p) ? 0 : (::access(p.c_str(), F_OK) == 0 ? EACCES : ENOENT);
        }
        // NOLINTNEXTLINE(concurrency-mt-unsafe): the environment is not changed after start
        const char* env = std::getenv("PATH");
        const std::string dirs = env != nullptr ? env : "/usr/local/bin:/usr/bin:/bin";
        int err = ENOENT;
        for (std::size_t start = 0; start <= dirs.size();) {
            const std::size_t colon = std::min(dirs.find(':', start), dirs.size());
            std::string dir = dirs.substr(start, colon - start);
            if (dir.empty()) {
                dir = cwd_.empty() ? "." : cwd_;
            }
            const std::string p = dir + "/" + name;
            if (runnable(p)) {
                return 0;
            }
            if (::access(p.c_str(), F_OK) == 0) {
                err = EACCES;
            }
            start = colon + 1;
        }
        return err;
    }

    bool spawn_locked(std::string& why) {
        if (const int err = findable(); err != 0) {
            why = "cannot start the approver " + argv_.front() + ": " + strerrordesc_np(err);
            return false;
        }
        int in[2];
        int out[2];
        if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
            why = "cannot create pipes for the approver";
            return false;
        }
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, in[0], 0);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        if (!cwd_.empty()) {
            posix_spawn_file_actions_addchdir_np(&fa, cwd_.c_str());
        }
        // A process group of its own: stopping it ends whatever it started too (a shell
        // wrapper's child would otherwise keep the pipe open and outlive the daemon).
        posix_spawnattr_t attr;
        posix_spawnattr_init(&attr);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
        posix_spawnattr_setpgroup(&attr, 0);
        std::vector<char*> args;
        for (auto& a : spawn_argv_) {
            args.push_back(a.data());
        }
        args.push_back(nullptr);
        pid_t pid = -1;
        const int rc = ::posix_spawnp(&pid, args[0], &fa, &attr, args.data(), environ);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&attr);
        ::fcntl(in[1], F_SETFL, ::fcntl(in[1], F_GETFL) | O_NONBLOCK);
        ::close(in[0]);
        ::close(out[1]);
        if (rc != 0) {
            ::close(in[1]);
            ::close(out[0]);
            why = std::string("cannot start the approver: ") + strerrordesc_np(rc);
            return false;
        }
        pid_ = pid;
        to_child_ = in[1];
        from_child_ = out[0];
        dead_ = false;
        const std::uint64_t gen = ++generation_;
        const int fd = from_child_;
        reader_ = std::thread([this, fd, gen] {
            read_lines(fd, gen);
            dead_ = true;
            fail_all(gen, "the approver exited");
            if (!stopping()) { // not trouble when the daemon stops it (the unmount)
                log_("approver: the approver process exited; it will be started again for the "
                     "next question",
                     true);
            }
        });
        log_("approver: started " + argv_.front() + " (pid " + std::to_string(pid) + ")", false);
        return true;
    }

    // Ends the current co-process (if any) and joins its reader. Under proc_mu_.
    void reap_locked(bool kill_it) {
        if (to_child_ >= 0) {
            ::close(to_child_); // end of input: a well-behaved approver exits
            to_child_ = -1;
        }
        if (pid_ > 0 && (kill_it || !dead_.load())) {
            // Its whole process group: the reader below waits for every writer of the pipe.
            ::kill(-pid_, SIGTERM);
        }
        if (reader_.joinable()) {
            // A group that ignores SIGTERM gets SIGKILL after a grace period.
            std::atomic<bool> joined{false};
            std::thread killer([this, &joined] {
                for (int i = 0; i < 100 && !joined.load(); ++i) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(20));
                }
                if (!joined.load() && pid_ > 0) {
                    ::kill(-pid_, SIGKILL);
                }
            });
            reader_.join();
            joined = true;
            killer.join();
        }
        if (from_child_ >= 0) {
            ::close(from_child_);
            from_child_ = -1;
        }
        if (pid_ > 0) {
            int status = 0;
            ::waitpid(pid_, &status, 0);
            pid_ = -1;
        }
    }

    std::vector<std::string> argv_;       // the approver's command, as configured
    std::vector<std::string> spawn_argv_; // run through the shell that sets its umask
    std::string cwd_;
    std::mutex proc_mu_; // protects the members below
    pid_t pid_ = -1;
    int to_child_ = -1;
    int from_child_ = -1;
    std::uint64_t generation_ = 0;
    std::thread reader_;
    std::atomic<bool> dead_{true};
};

// ---- the Unix socket --------------------------------------------------------------------------

class SocketApprover final : public LineApprover {
public:
    SocketApprover(std::string path, LogFn log, bool own_pid_namespace_only)
        : LineApprover(std::move(log))
        , path_(std::move(path))
        , own_pid_namespace_only_(own_pid_namespace_only) {}

    ~SocketApprover() override { stop(); }

    // Listening before `guardfs mount` returns: `guardfs approve` may connect right after it.
    std::string prepare() override {
        if (listen_ >= 0) {
            return {};
        }

        struct stat st {};

        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        if (path_.size() >= sizeof addr.sun_path) {
            return "approver socket path is too long: " + path_;
        }
        std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
        if (::lstat(path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
            // Left by a daemon that is gone, unless something still listens there.
            const base::UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
            if (probe.valid() &&
                ::connect(probe.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
                return "another process listens on " + path_;
            }
            ::unlink(path_.c_str());
        }
        listen_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (listen_ < 0) {
            return std::string("cannot create the approver socket: ") + strerrordesc_np(errno);
        }
        const mode_t old = ::umask(0177); // created 0600: only this user may answer
        const int rc = ::bind(listen_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
        ::umask(old);
        if (rc != 0 || ::listen(listen_, 4) != 0) {
            const int err = errno;
            ::close(listen_);
            listen_ = -1;
            return "cannot listen on " + path_ + ": " + strerrordesc_np(err);
        }
        if (::stat(path_.c_str(), &st) == 0) {
            bound_ = FileId{st.st_dev, st.st_ino};
        }
        return {};
    }

    void start() override {
        ::signal(SIGPIPE, SIG_IGN);
        if (const std::string why = prepare(); !why.empty()) {
            log_("approver: " + why, true); // every question is refused: no one can answer
            return;
        }
        if (::pipe2(wake_, O_CLOEXEC) != 0) {
            wake_[0] = wake_[1] = -1;
        }
        thread_ = std::thread([this] { serve(); });
    }

    void stop() override {
        stop_waiting();
        if (wake_[1] >= 0) {
            const char c = 'x';
            (void)!::write(wake_[1], &c, 1);
        }
        if (thread_.joinable()) {
            thread_.join();
        }
        for (int* fd : {&listen_, &wake_[0], &wake_[1]}) {
            if (*fd >= 0) {
                ::close(*fd);
                *fd = -1;
            }
        }

        // Only the socket this daemon bound, and once: never a file that was at the path
        // already (a mistyped --approver-socket), nor a later daemon's socket.
        struct stat st {};

        if (bound_ && ::lstat(path_.c_str(), &st) == 0 && st.st_dev == bound_->dev &&
            st.st_ino == bound_->ino) {
            ::unlink(path_.c_str());
        }
        bound_.reset();
        fail_all(0, "approver stopped");
    }

protected:
    bool send(const std::string& line, std::string& why,
              const std::function<void(std::uint64_t)>& tag,
              std::chrono::steady_clock::time_point deadline) override {
        std::lock_guard<std::mutex> lock(client_mu_);
        if (client_ < 0) {
            why = "no approver connected to " + path_;
            return false;
        }
        tag(generation_);
        if (!write_all(client_, line, true, deadline)) {
            // A part of the line may have gone out: the connection is unusable. Shutting it
            // down (not closing: the serving thread polls it) makes that thread drop it.
            ::shutdown(client_, SHUT_RDWR);
            why = "the approver is not reading (disconnected)";
            return false;
        }
        return true;
    }

private:
    void serve() {
        std::string buf;
        for (;;) {
            int client = -1;
            {
                std::lock_guard<std::mutex> lock(client_mu_);
                client = client_;
            }
            pollfd fds[3] = {{listen_, POLLIN, 0}, {wake_[0], POLLIN, 0}, {client, POLLIN, 0}};
            if (::poll(fds, client >= 0 ? 3 : 2, -1) < 0) {
                if (errno == EINTR) {
                    continue;
                }
                return;
            }
            if (fds[1].revents != 0) {
                drop_client("approver stopped");
                return;
            }
            if (fds[0].revents != 0) {
                accept_one();
            }
            if (client >= 0 && fds[2].revents != 0) {
                std::array<char, 4096> chunk{};
                const ssize_t n = ::read(client, chunk.data(), chunk.size());
                if (n <= 0) {
                    drop_client("the approver disconnected");
                    buf.clear();
                    continue;
                }
                buf.append(chunk.data(), static_cast<std::size_t>(n));
                std::size_t start = 0;
                for (auto nl = buf.find('\n'); nl != std::string::npos;
                     nl = buf.find('\n', start)) {
                    deliver(std::string_view(buf).substr(start, nl - start), generation_);
                    start = nl + 1;
                }
                buf.erase(0, start);
                if (buf.size() > kMaxLine) {
                    buf.clear();
                }
            }
        }
    }

    void accept_one() {
        const int fd = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) {
            return;
        }
        ucred cred{};
        socklen_t len = sizeof cred;
        if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
            (cred.uid != ::geteuid() && cred.uid != 0)) {
            log_("approver: refused a connection from uid " + std::to_string(cred.uid), true);
            ::close(fd);
            return;
        }
        if (own_pid_namespace_only_ && !in_own_pid_namespace(cred.pid)) {
            log_("approver: refused a connection from a process outside the daemon's PID "
                 "namespace (the guarded command cannot answer its own questions)",
                 true);
            ::close(fd);
            return;
        }
        std::lock_guard<std::mutex> lock(client_mu_);
        if (client_ >= 0) {
            const std::string busy = "{\"error\": \"another approver is connected\"}\n";
            write_all(fd, busy, true,
                      std::chrono::steady_clock::now() + std::chrono::milliseconds(100));
            ::close(fd);
            return;
        }
        client_ = fd;
        ++generation_;
        log_("approver: a terminal approver connected", false);
    }

    // Whether the peer (pid as this process sees it; 0 when it is in a namespace this one
    // cannot see) shares this process's PID namespace. Fails closed.
    static bool in_own_pid_namespace(pid_t peer) {
        if (peer <= 0) {
            return false;
        }

        struct stat own {};

        struct stat theirs {};

        const std::string path = "/proc/" + std::to_string(peer) + "/ns/pid";
        return ::stat("/proc/self/ns/pid", &own) == 0 && ::stat(path.c_str(), &theirs) == 0 &&
               own.st_dev == theirs.st_dev && own.st_ino == theirs.st_ino;
    }

    void drop_client(const std::string& why) {
        std::uint64_t gen = 0;
        {
            std::lock_guard<std::mutex> lock(client_mu_);
            if (client_ >= 0) {
                ::close(client_);
                client_ = -1;
            }
            gen = generation_;
        }
        fail_all(gen, why);
    }

    std::string path_;
    std::optional<FileId> bound_; // the socket this daemon bound at path_
    bool own_pid_namespace_only_ = false;
    int listen_ = -1;
    int wake_[2] = {-1, -1};
    std::thread thread_;
    std::mutex client_mu_; // protects client_ and generation_
    int client_ = -1;
    std::uint64_t generation_ = 0;
};

} // namespace

std::unique_ptr<Approver> make_process_approver(std::vector<std::string> argv, std::string cwd,
                                                LogFn log, mode_t umask) {
    return std::make_unique<ProcessApprover>(std::move(argv), std::move(cwd), std::move(log),
                                             umask);
}

std::unique_ptr<Approver> make_socket_approver(std::string path, LogFn log,
                                               bool own_pid_namespace_only) {
    return std::make_unique<SocketApprover>(std::move(path), std::move(log),
                                            own_pid_namespace_only);
}

} // namespace guardfs::guard

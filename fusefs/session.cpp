// Mounting and serving; see session.hpp.
#include "fusefs/session.hpp"

#include "base/path.hpp"
#include "fusefs/channel.hpp"
#include "fusefs/fs.hpp"
#include "fusefs/handlers.hpp"
#include "fusefs/mountinfo.hpp"
#include "fusefs/ops_table.hpp"
#include "fusefs/reclaimer.hpp"
#include "fusefs/ring_loop.hpp"
#include "fusefs/worker_loop.hpp"
#include "guard/arbiter.hpp"
#include "guard/git_config.hpp"
#include "guard/judge.hpp"
#include "patterns/answers_yaml.hpp"
#include "patterns/policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace guardfs::fusefs {

namespace {

// The filesystem type of the topmost mount at exactly `path`, or "" for none.
std::string fstype_at(const std::string& path) {
    const base::UniqueFd fd(::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC));
    std::string text;
    std::string found;
    if (!read_all_at_start(fd.get(), text)) {
        return found;
    }
    for (const MountEntry& m : parse_mountinfo(text)) {
        if (m.mount_point == path) {
            found = m.fstype;
        }
    }
    return found;
}

// Does the daemon hold capability `cap` in its effective set?
bool holds_capability(unsigned cap) {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    std::array<__user_cap_data_struct, _LINUX_CAPABILITY_U32S_3> data{};
    if (::syscall(SYS_capget, &header, data.data()) != 0) {
        return ::geteuid() == 0;
    }
    return (data[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap)) != 0;
}

// Is the daemon in the initial user namespace? Its uid map is then the identity over all ids.
// The kernel registers backing files only for CAP_SYS_ADMIN there.
bool in_initial_user_namespace() {
    const base::UniqueFd f(::open("/proc/self/uid_map", O_RDONLY | O_CLOEXEC));
    std::string text;
    if (!f.valid() || !read_all_at_start(f.get(), text)) {
        return false;
    }
    std::istringstream in(text);
    std::uint64_t inside = 1;
    std::uint64_t outside = 1;
    std::uint64_t count = 0;
    std::string rest;
    in >> inside >> outside >> count;
    return in && inside == 0 && outside == 0 && count == 4294967295U && !(in >> rest);
}

void raise_fd_limit() {
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
        lim.rlim_cur = lim.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &lim);
    }
}

std::vector<std::string> split_options(const std::vector<std::string>& given) {
    std::vector<std::string> out;
    for (const auto& o : given) {
        std::size_t start = 0;
        while (start <= o.size()) {
            const std::size_t comma = std::min(o.find(',', start), o.size());
            if (comma > start) {
                out.push_back(o.substr(start, comma - start));
            }
            start = comma + 1;
        }
    }
    return out;
}

} // namespace

MountState mount_state(const std::string& path) {
    const std::string type = fstype_at(path);
    if (type.empty()) {
        return MountState::NotMounted;
    }

    struct stat st {};

    const bool stale = ::stat(path.c_str(), &st) != 0 && errno == ENOTCONN;
    if (type == "fuse.guardfs") {
        return stale ? MountState::GuardfsStale : MountState::Guardfs;
    }
    if (type.rfind("fuse", 0) == 0 && stale) {
        return MountState::OtherFuseStale;
    }
    return MountState::Other;
}

namespace {

// SIGHUP: a byte on this pipe wakes the reload thread (write(2) is async-signal-safe).
int g_reload_pipe[2] = {-1, -1};

void on_sighup(int /*sig*/) {
    const int saved = errno;
    const char c = 'r';
    (void)!::write(g_reload_pipe[1], &c, 1);
    errno = saved;
}

// Whether one of guardfs's own files lies under the workspace or the mount point, by any of its
// spellings.
bool self_files_inside(const Fs& fs, const guard::CompiledPolicy& policy) {
    return std::any_of(policy.self_paths.begin(), policy.self_paths.end(), [&fs](const auto& p) {
        return under(p, fs.cfg.ws_real) || under(p, fs.cfg.mount_spelled) ||
               under(p, fs.cfg.mount_real);
    });
}

void set_status(Fs& fs, const std::string& status) {
    std::lock_guard<std::mutex> lock(fs.control.m);
    fs.control.last = status;
    fs.control.generation.fetch_add(1);
}

// Kernel cache notifications, sent from their own thread.
class Invalidator {
public:
    explicit Invalidator(fuse_session* se) : se_(se), thread_([this] { run(); }) {}

    Invalidator(const Invalidator&) = delete;
    Invalidator& operator=(const Invalidator&) = delete;

    ~Invalidator() { stop(); }

    void entry(std::uint64_t parent, std::string name) {
        {
            std::lock_guard<std::mutex> lock(m_);
            queue_.emplace_back(parent, std::move(name));
        }
        cv_.notify_one();
    }

    void stop() {
        {
            std::lock_guard<std::mutex> lock(m_);
            done_ = true;
        }
        cv_.notify_one();
        if (thread_.joinable()) {
            thread_.join();
        }
    }

private:
    void run() {
        std::unique_lock<std::mutex> lock(m_);
        for (;;) {
            cv_.wait(lock, [this] { return done_ || !queue_.empty(); });
            if (queue_.empty()) {
                return;
            }
            auto [parent, name] = std::move(queue_.front());
            queue_.pop_front();
            lock.unlock();
            fuse_lowlevel_notify_inval_entry(se_, parent, name.c_str(), name.size());
            lock.lock();
        }
    }

    fuse_session* se_;
    std::mutex m_;
    std::condition_variable cv_;
    std::deque<std::pair<std::uint64_t, std::string>> queue_; // protected by m_
    bool done_ = false;                                       // protected by m_
    std::thread thread_;
};

// The keys read once, at mount time, whose value in the reloaded policy differs from the
// mount's: named in the reload's note, since the reload does not apply them.
std::string mount_time_changes(const patterns::Policy& now, const patterns::Policy& next) {
    std::vector<std::string> changed;
    if (now.approver.command != next.approver.command ||
        now.approver.socket != next.approver.socket ||
        now.approver.timeout_seconds != next.approver.timeout_seconds) {
        changed.emplace_back("approver");
    }
    if (now.audit.path != next.audit.path) {
        changed.emplace_back("audit.path");
    }
    if (now.allow_file != next.allow_file) {
        changed.emplace_back("allow_file");
    }
    if (changed.empty()) {
        return {};
    }
    return fmt::format("{} changed in the policy: read at mount time only, the change applies "
                       "at the next mount",
                       fmt::join(changed, ", "));
}

// Re-reads the policy and the allow file (through the underlying tree if they lie under the
// mount), compiles the policy and swaps both in. An invalid file keeps the old ones and says
// why, on stderr and in the log.
void reload(Fs& fs, guard::Arbiter& arbiter, UnderlyingHostFiles& files, const GuardSetup& setup,
            guard::AnswerStore& answers) {
    patterns::Policy policy = patterns::Policy::builtin_default();
    std::string error;
    if (!setup.policy_path.empty()) {
        std::string text;
        if (const int err = files.read(setup.policy_path, text); err != 0) {
            error = fmt::format("{}: cannot read policy file: {}", setup.policy_path,
                                strerrordesc_np(err));
        } else if (auto loaded = patterns::load_policy_text(text, setup.policy_path); !loaded) {
            error = loaded.error().to_string();
        } else {
            for (const auto& w : loaded->warnings) {
                std::fprintf(stderr, "%s\n", w.to_string().c_str());
            }
            policy = std::move(loaded->policy);
            policy.source = setup.policy_path;
        }
    }
    // The allow file too (design §7 names it beside the policy): a person may have edited it,
    // and the next persisted answer writes the list in memory back over it.
    std::optional<std::vector<patterns::StoredAnswer>> stored;
    // From reading the file to replacing the answers, no persisted answer may come between: it
    // would be lost from memory, and from the file at the next persist.
    const auto persisting = arbiter.hold_persisting();
    if (error.empty() && !setup.allow_file.empty()) {
        std::string text;
        if (const int err = files.read(setup.allow_file, text); err == ENOENT) {
            stored.emplace();
        } else if (err != 0) {
            error = fmt::format("{}: cannot read allow file: {}", setup.allow_file,
                                strerrordesc_np(err));
        } else if (auto loaded = patterns::load_answers_text(text, setup.allow_file); !loaded) {
            error = loaded.error().to_string();
        } else {
            stored = std::move(loaded.value());
        }
    }
    if (error.empty()) {
        auto compiled = guard::compile_policy(policy, setup.compile_options, fs.underlying);
        if (!compiled) {
            error = compiled.error().to_string();
        } else {
            const std::string note =
                mount_time_changes(setup.policy->policy, compiled.value()->policy);
            if (stored) {
                answers.replace_persisted(std::move(*stored));
            }
            arbiter.judge().set_policy(compiled.value());
            fs.self_files.set(compiled.value()->self_ids, true);
            fs.read_face = compiled.value()->read.has_guard_rules();
            if (arbiter.audit() != nullptr) {
                arbiter.audit()->set_all(compiled.value()->policy.audit.all);
            }
            std::fprintf(stderr, "guardfs: policy reloaded from %s\n", policy.source.c_str());
            if (!note.empty()) {
                std::fprintf(stderr, "guardfs: note: %s\n", note.c_str());
                if (arbiter.audit() != nullptr) {
                    arbiter.audit()->note("reload", note);
                }
            }
            set_status(fs, note.empty() ? std::string("ok") : "ok: note: " + note);
            return;
        }
    }
    std::fprintf(stderr, "guardfs: reload failed, keeping the previous policy:\n%s\n",
                 error.c_str());
    if (arbiter.audit() != nullptr) {
        arbiter.audit()->note("reload-failed", "keeping the previous policy: " + error);
    }
    set_status(fs, "error: " + error);
}

} // namespace

void request_reload() noexcept {
    on_sighup(SIGHUP);
}

void stop_session(fuse_session* se, const std::string& mountpoint) {
    fuse_session_exit(se);
    ::umount2(mountpoint.c_str(), MNT_DETACH); // wakes the workers: their reads end
}

int serve(const MountOptions& options, GuardSetup setup) {
    std::shared_ptr<const guard::CompiledPolicy> policy = setup.policy;
    const std::string cwd = base::current_dir();
    const std::string mountpoint = base::lexical_absolute(
        options.mountpoint.empty() ? options.workspace : options.mountpoint, cwd);

    // The mount point as the mount table names it: a symlink to a guarded directory leads to
    // the same mount (a stale one cannot be resolved, and is found by its own spelling).
    std::string mount_real = mountpoint;
    if (char* real = ::realpath(mountpoint.c_str(), nullptr); real != nullptr) {
        mount_real = real;
        std::free(real); // NOLINT(cppcoreguidelines-no-malloc): realpath's own allocation
    }
    MountState state = mount_state(mount_real);
    if (state == MountState::NotMounted && mount_real != mountpoint) {
        state = mount_state(mountpoint);
    }
    switch (state) {
    case MountState::GuardfsStale:
        // A guardfs daemon died without unmounting (e.g. SIGKILL). Detach the dead mount and
        // guard the directory again.
        if (::umount2(mountpoint.c_str(), MNT_DETACH) != 0) {
            const int err = errno;
            std::fprintf(stderr,
                         "guardfs: %s is a stale guardfs mount (its daemon is gone) and it could "
                         "not be detached (%s). Run: fusermount3 -u -z %s\n",
                         mountpoint.c_str(), strerrordesc_np(err), mountpoint.c_str());
            return 1;
        }
        std::fprintf(stderr,
                     "guardfs: note: %s was a stale guardfs mount (its daemon is gone); "
                     "detached it\n",
                     mountpoint.c_str());
        break;
    case MountState::OtherFuseStale:
        std::fprintf(stderr,
                     "guardfs: %s is a stale FUSE mount of another filesystem (transport "
                     "endpoint is not connected). Unmount it first: fusermount3 -u -z %s\n",
                     mountpoint.c_str(), mountpoint.c_str());
        return 1;
    case MountState::Guardfs:
        std::fprintf(stderr,
                     "guardfs: %s is already guarded by a running guardfs; unmount it first "
                     "(fusermount3 -u %s) to mount it again\n",
                     mountpoint.c_str(), mountpoint.c_str());
        return 1;
    case MountState::NotMounted:
    case MountState::Other:
        break;
    }

    // Open the workspace before mounting: after the mount its path leads to the guard itself.
    base::UniqueFd ws(::open(options.workspace.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!ws.valid()) {
        const int err = errno;
        std::fprintf(stderr, "guardfs: cannot open workspace %s: %s\n", options.workspace.c_str(),
                     strerrordesc_np(err));
        return 1;
    }

    struct stat st {};

    if (::fstat(ws.get(), &st) != 0) {
        std::fprintf(stderr, "guardfs: cannot stat workspace %s\n", options.workspace.c_str());
        return 1;
    }
    std::array<char, 4097> buf{};
    const std::string proc = fmt::format("/proc/self/fd/{}", ws.get());
    const ssize_t n = ::readlink(proc.c_str(), buf.data(), buf.size() - 1);
    if (n <= 0) {
        std::fprintf(stderr, "guardfs: cannot resolve workspace %s\n", options.workspace.c_str());
        return 1;
    }
    FsConfig cfg;
    cfg.mount_spelled = mountpoint;
    cfg.ws_real.assign(buf.data(), static_cast<std::size_t>(n));
    if (char* real = ::realpath(mountpoint.c_str(), nullptr); real != nullptr) {
        cfg.mount_real = real; // again: a stale mount detached above resolves now
        std::free(real);       // NOLINT(cppcoreguidelines-no-malloc): realpath's own allocation
    } else {
        cfg.mount_real = cfg.mount_spelled;
    }
    {
        struct stat mst {};

        if (::stat(cfg.mount_real.c_str(), &mst) != 0) {
            const int err = errno;
            std::fprintf(stderr, "guardfs: mount point %s: %s\n", mountpoint.c_str(),
                         strerrordesc_np(err));
            return 1;
        }
        if (!S_ISDIR(mst.st_mode)) {
            std::fprintf(stderr, "guardfs: mount point %s is not a directory\n",
                         mountpoint.c_str());
            return 1;
        }
    }
    auto below = [](const std::string& path, const std::string& dir) {
        return path != dir && under(path, dir);
    };
    // A mount point inside the workspace would show the workspace again below itself, a loop
    // that cannot be unmounted while the daemon serves it.
    if (below(cfg.mount_real, cfg.ws_real)) {
        std::fprintf(stderr,
                     "guardfs: mount point %s lies inside the workspace %s; mount over the "
                     "workspace itself or somewhere outside it\n",
                     mountpoint.c_str(), cfg.ws_real.c_str());
        return 2;
    }
    // The approver's socket is bound before the mount: under the mount point it would lie
    // below the guard, where no one could connect to it.
    if (!setup.approver_socket.empty()) {
        const std::string sock = base::lexical_absolute(setup.approver_socket, cwd);
        if (below(sock, mountpoint) || below(sock, cfg.mount_real)) {
            std::fprintf(stderr,
                         "guardfs: the approver socket %s lies under the mount point %s; put it "
                         "outside the guarded tree (e.g. in $XDG_RUNTIME_DIR)\n",
                         sock.c_str(), mountpoint.c_str());
            return 2;
        }
    }
    cfg.timeout = options.timeout_seconds;
    cfg.writeback = options.writeback;
    cfg.clears_setid = holds_capability(CAP_FSETID);
    // FUSE passthrough by default where the kernel would register backing files for this
    // daemon (docs/decisions/011); -o passthrough tries anyway and says why it is off.
    cfg.passthrough = holds_capability(CAP_SYS_ADMIN) && in_initial_user_namespace();
    {
        const base::UniqueFd mi(::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC));
        std::string text;
        cfg.pass_flush = !read_all_at_start(mi.get(), text) ||
                         !close_is_noop_below(parse_mountinfo(text), cfg.ws_real);
    }

    // Mount options: ours, then the user's. When other users can reach the mount, the kernel
    // checks permissions and new files are given to their creator (design §9).
    std::vector<std::string> opts{"fsname=guardfs", "subtype=guardfs"};
    bool shared = false;
    for (const auto& o : split_options(options.fuse_options)) {
        if (o.rfind("fsname=", 0) == 0 || o.rfind("subtype=", 0) == 0 || o == "fd" ||
            o.rfind("fd=", 0) == 0) {
            std::fprintf(stderr, "guardfs: mount option '%s' is set by guardfs itself\n",
                         o.c_str());
            return 2;
        }
        // The kernel's writeback cache (docs/decisions/008): guardfs's own choice, named as
        // libfuse's option parser names it, never passed to the kernel.
        if (o == "writeback_cache" || o == "no_writeback_cache") {
            cfg.writeback = o == "writeback_cache";
            continue;
        }
        // FUSE passthrough (docs/decisions/011), likewise guardfs's own.
        if (o == "passthrough" || o == "no_passthrough") {
            cfg.passthrough = o == "passthrough";
            cfg.passthrough_asked = cfg.passthrough;
            continue;
        }
        // FUSE over io_uring (docs/decisions/012): used where the kernel offers it.
        if (o == "io_uring" || o == "no_io_uring") {
            cfg.ring = o == "io_uring";
            cfg.ring_asked = cfg.ring;
            continue;
        }
        shared = shared || o == "allow_other" || o == "allow_root";
        opts.push_back(o);
    }
    if (shared) {
        opts.emplace_back("default_permissions");
        cfg.chown_to_caller = ::geteuid() == 0;
    }
    std::string joined;
    for (const auto& o : opts) {
        joined += joined.empty() ? o : "," + o;
    }

    Fs fs(std::move(cfg), std::move(ws), st);
    guard::Judge judge(std::move(policy), fs.underlying, &guard::judge_git_config_change);
    // Before the arbiter: the approver it owns logs its trouble here until it is destroyed.
    guard::AuditLog audit(setup.audit_fd, setup.audit_all);
    guard::ArbiterConfig acfg;
    acfg.timeout = setup.ask_timeout;
    acfg.allow_file = setup.allow_file;
    guard::Arbiter arbiter(judge, acfg);
    arbiter.set_wait_hook(&note_ring_thread_may_wait);
    UnderlyingHostFiles host_files(fs.cfg, fs.inodes.root().fd.get());
    guard::AnswerStore answers(setup.answers);
    // The approver's messages go to stderr, its trouble to the audit log too (a daemon in the
    // background has no stderr); a decision it affects carries its own reason there as well
    // ("...: approver stopped (fail closed)").
    auto log = [&audit](const std::string& message, bool trouble) {
        std::fprintf(stderr, "guardfs: %s\n", message.c_str());
        if (trouble) {
            audit.note("approver", message);
        }
    };
    // The kernel applied each caller's umask already: the daemon creates with 0. The one it
    // started with is the approver's.
    const mode_t started_umask = ::umask(0);
    if (!setup.approver_command.empty()) {
        arbiter.set_approver(guard::make_process_approver(setup.approver_command,
                                                          setup.approver_cwd, log, started_umask));
    } else if (!setup.approver_socket.empty()) {
        arbiter.set_approver(guard::make_socket_approver(setup.approver_socket, log,
                                                         setup.approver_own_pid_namespace));
    }
    if (const std::string why = arbiter.prepare(); !why.empty()) {
        std::fprintf(stderr, "guardfs: %s\n", why.c_str());
        return 1;
    }
    arbiter.set_audit(&audit);
    arbiter.set_answers(&answers, &host_files);
    fs.arbiter = &arbiter;
    fs.inodes.set_guarded_names([&fs](const std::vector<std::string>& names) {
        try {
            return std::any_of(names.begin(), names.end(), [&fs](const std::string& name) {
                return name_verdict(fs, name) != patterns::Verdict::Allow;
            });
        } catch (...) {
            return true; // unsure: keep them
        }
    });
    fs.self_files.set(judge.policy()->self_ids, self_files_inside(fs, *judge.policy()));
    fs.read_face = judge.policy()->read.has_guard_rules();
    set_status(fs, "ok");

    raise_fd_limit();

    std::vector<std::string> argv_store{"guardfs", "-o", joined};
    std::vector<char*> argv;
    for (auto& a : argv_store) {
        argv.push_back(a.data());
    }
    fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
    const fuse_lowlevel_ops ops = make_ops();
    fuse_session* se = fuse_session_new(&args, &ops, sizeof ops, &fs);
    fuse_opt_free_args(&args); // libfuse may have allocated copies inside it
    if (se == nullptr) {
        // libfuse has said which option it refused; nothing else fails here but memory.
        std::fprintf(stderr, "guardfs: cannot start a FUSE session (bad -o option?)\n");
        return 2;
    }
    int rc = 1;
    if (!options.own_signals && fuse_set_signal_handlers(se) != 0) {
        fuse_session_destroy(se);
        return 1;
    }
    if (fuse_session_mount(se, mountpoint.c_str()) != 0) {
        std::fprintf(stderr, "guardfs: cannot mount on %s\n", mountpoint.c_str());
        if (!options.own_signals) {
            fuse_remove_signal_handlers(se);
        }
        fuse_session_destroy(se);
        return 1;
    }
    want_passthrough(fs.cfg.passthrough && !fs.cfg.writeback,
                     fs.cfg.passthrough_asked || !options.quiet);
    if (const int err = install_channel(se); err != 0) {
        std::fprintf(stderr, "guardfs: cannot install the request channel: %s\n",
                     strerrordesc_np(-err));
        fuse_session_unmount(se);
        if (!options.own_signals) {
            fuse_remove_signal_handlers(se);
        }
        fuse_session_destroy(se);
        return 1;
    }
    // Not dumpable: a process of the same user can neither ptrace the daemon nor reach the
    // underlying tree through /proc/<pid>/fd, cwd or root (design §9).
    ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    if (!options.quiet) {
        std::fprintf(stderr, "guardfs: guarding %s (policy: %s)\n", mountpoint.c_str(),
                     judge.policy()->policy.source.c_str());
        std::fflush(stderr);
    }
    if (options.after_mount) {
        if (const int stop = options.after_mount(se, mountpoint); stop != 0) {
            fuse_session_unmount(se);
            fuse_session_destroy(se);
            return stop;
        }
    }
    if (fuse_daemonize(options.foreground ? 1 : 0) == 0) {
        // Threads start only now: a fork (daemonizing) keeps none.
        fs.proc_fds = base::UniqueFd(::open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC));
        arbiter.start();
        // When the daemon replaces one of its own files under the mount (the allow file), the
        // kernel's cached entry for the name still leads to the old file: drop it. From a
        // thread of its own, never from inside a request (libfuse's rule for notifications).
        Invalidator invalidator(se);
        Reclaimer reclaimer(fs, se);
        fs.reclaimer = &reclaimer;
        host_files.on_replaced = [&](const std::string& rel) {
            const auto slash = rel.rfind('/');
            const std::string dir = slash == std::string::npos ? "." : rel.substr(0, slash);
            struct stat dst {};
            if (::fstatat(fs.inodes.root().fd.get(), dir.c_str(), &dst, 0) != 0) {
                return;
            }
            if (const auto parent = fs.inodes.find(dst.st_dev, dst.st_ino)) {
                invalidator.entry(*parent,
                                  slash == std::string::npos ? rel : rel.substr(slash + 1));
            }
        };
        std::thread reloader;
        if (::pipe2(g_reload_pipe, O_CLOEXEC) == 0) {
            if (!options.own_signals) {
                struct sigaction sa {};

                sa.sa_handler = on_sighup;
                sigemptyset(&sa.sa_mask);
                sa.sa_flags = SA_RESTART;
                ::sigaction(SIGHUP, &sa, nullptr); // libfuse made SIGHUP end the session
            }
            reloader = std::thread([&] {
                char c = 0;
                while (::read(g_reload_pipe[0], &c, 1) == 1 && c == 'r') {
                    reload(fs, arbiter, host_files, setup, answers);
                }
            });
        }
        serve_data_ops(handlers::data(), &fs);
        // Requests on io_uring where the kernel offers it; /dev/fuse serves the rest.
        RingsPtr rings = fs.cfg.ring
                             ? prepare_rings(se, mountpoint, options.max_threads, fs.cfg.ring_asked)
                             : nullptr;
        // A signal (SIGINT, SIGTERM) ends the loop as an unmount does: both unmount cleanly.
        // A question still waiting is refused then (the approver stops), not left to its
        // timeout with the mount hanging.
        rc = run_workers(se, options.max_threads, [&] { arbiter.stop(); }) == 0 ? 0 : 1;
        if (rings) {
            stop_rings(*rings);
        }
        if (reloader.joinable()) {
            if (!options.own_signals) {
                ::signal(SIGHUP, SIG_IGN);
            }
            const char q = 'q';
            (void)!::write(g_reload_pipe[1], &q, 1);
            reloader.join();
        }
        arbiter.stop();
        host_files.on_replaced = nullptr;
        invalidator.stop();
        fs.reclaimer = nullptr; // the loop has ended: no request can reach it
        reclaimer.stop();
    }
    serve_data_ops(nullptr, nullptr); // no request can reach `fs` any more
    fuse_session_unmount(se);
    if (!options.own_signals) {
        fuse_remove_signal_handlers(se);
    }
    fuse_session_destroy(se);
    return rc;
}

} // namespace guardfs::fusefs

// The namespaces, capabilities and seccomp filter of `guardfs run`; see run_sandbox.hpp.
#include "app/run_sandbox.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/kcmp.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace guardfs::app {

namespace {

bool write_proc(const std::string& path, const std::string& text) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    const ssize_t n = ::write(fd, text.data(), text.size());
    ::close(fd);
    return n == static_cast<ssize_t>(text.size());
}

// Writes the maps of the user namespace just entered: `inner` seen inside for `outer` outside.
bool map_ids(uid_t inner_uid, uid_t outer_uid, gid_t inner_gid, gid_t outer_gid) {
    write_proc("/proc/self/setgroups", "deny"); // required before an unprivileged gid_map
    return write_proc("/proc/self/uid_map",
                      std::to_string(inner_uid) + " " + std::to_string(outer_uid) + " 1\n") &&
           write_proc("/proc/self/gid_map",
                      std::to_string(inner_gid) + " " + std::to_string(outer_gid) + " 1\n");
}

[[noreturn]] void die(const char* what) {
    const int err = errno;
    std::fprintf(stderr, "guardfs run: %s: %s\n", what, strerrordesc_np(err));
    ::_exit(125);
}

// All capabilities off except, for a command run by root, the few that act on files it owns
// (they are capabilities of its own user namespace, so they reach only files owned by root).
void drop_capabilities(bool keep_file_caps) {
    int last = CAP_LAST_CAP;
    if (std::ifstream in("/proc/sys/kernel/cap_last_cap"); in) {
        in >> last;
    }
    std::uint64_t keep = 0;
    if (keep_file_caps) {
        for (const int c : {CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_FSETID, CAP_KILL}) {
            keep |= std::uint64_t{1} << static_cast<unsigned>(c);
        }
    }
    for (int c = 0; c <= last; ++c) {
        if ((keep & (std::uint64_t{1} << static_cast<unsigned>(c))) == 0) {
            ::prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
        }
    }
    ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    __user_cap_header_struct header{};
    header.version = _LINUX_CAPABILITY_VERSION_3;
    std::array<__user_cap_data_struct, 2> data{};
    data[0].effective = data[0].permitted = static_cast<std::uint32_t>(keep);
    data[1].effective = data[1].permitted = static_cast<std::uint32_t>(keep >> 32U);
    if (::syscall(SYS_capset, &header, data.data()) != 0) {
        die("cannot drop capabilities");
    }
}

// Refuses new namespaces (no way back to a capability that could unmount or cover the guard)
// and every mount call. Anything else is allowed.
void install_seccomp() {
#if defined(__x86_64__)
    constexpr std::uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
    constexpr std::uint32_t kArch = AUDIT_ARCH_AARCH64;
#else
#error "guardfs run: add this architecture's AUDIT_ARCH"
#endif
    constexpr std::uint32_t kNsFlags = CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET |
                                       CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWCGROUP;
    constexpr std::uint32_t kEperm = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
    constexpr std::uint32_t kEnosys = SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA);
    auto stmt = [](std::uint16_t code, std::uint32_t k) {
        return sock_filter{code, 0, 0, k};
    };
    auto jump = [](std::uint16_t code, std::uint32_t k, std::uint8_t jt, std::uint8_t jf) {
        return sock_filter{code, jt, jf, k};
    };
    std::vector<sock_filter> f;
    f.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
    f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0));
    f.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
    f.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
#if defined(__x86_64__)
    f.push_back(jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, 0, 1)); // the x32 ABI
    f.push_back(stmt(BPF_RET | BPF_K, kEperm));
#endif
    const std::array<long, 13> refused{SYS_unshare,          SYS_setns,      SYS_mount,
                                       SYS_umount2,          SYS_pivot_root, SYS_move_mount,
                                       SYS_open_tree,        SYS_fsopen,     SYS_fsconfig,
                                       SYS_fsmount,          SYS_fspick,     SYS_mount_setattr,
                                       SYS_open_by_handle_at};
    for (const long nr : refused) {
        f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(nr), 0, 1));
        f.push_back(stmt(BPF_RET | BPF_K, kEperm));
    }
    // clone3 passes its flags in memory a filter cannot read: make libc fall back to clone.
    f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1));
    f.push_back(stmt(BPF_RET | BPF_K, kEnosys));
    // clone with any namespace flag (the flags are argument 0 on x86_64 and aarch64).
    f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3));
    f.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])));
    f.push_back(jump(BPF_JMP | BPF_JSET | BPF_K, kNsFlags, 0, 1));
    f.push_back(stmt(BPF_RET | BPF_K, kEperm));
    f.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    sock_fprog prog{static_cast<unsigned short>(f.size()), f.data()};
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        die("cannot set no_new_privs");
    }
    if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) {
        die("cannot install the seccomp filter");
    }
}

// For a command run by root: a /dev with only the harmless nodes, so that no raw disk or
// other device a uid-0 process could open reaches around the guard.
void minimal_dev() {
    const std::array<const char*, 7> nodes{"null",    "zero", "full", "random",
                                           "urandom", "tty",  "ptmx"};
    std::array<int, nodes.size()> fds{};
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        fds[i] = ::open((std::string("/dev/") + nodes[i]).c_str(), O_PATH | O_CLOEXEC);
    }
    const int pts = ::open("/dev/pts", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (::mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k") != 0) {
        return; // keep the old /dev: the capabilities below are still gone
    }
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (fds[i] < 0) {
            continue;
        }
        const std::string target = std::string("/dev/") + nodes[i];
        const int t = ::open(target.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
        if (t >= 0) {
            ::close(t);
        }
        const std::string source = "/proc/self/fd/" + std::to_string(fds[i]);
        ::mount(source.c_str(), target.c_str(), nullptr, MS_BIND, nullptr);
        ::close(fds[i]);
    }
    if (pts >= 0) {
        ::mkdir("/dev/pts", 0755);
        const std::string source = "/proc/self/fd/" + std::to_string(pts);
        ::mount(source.c_str(), "/dev/pts", nullptr, MS_BIND | MS_REC, nullptr);
        ::close(pts);
    }
    ::mkdir("/dev/shm", 01777);
    ::mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
    ::symlink("/proc/self/fd", "/dev/fd");
    ::symlink("/proc/self/fd/0", "/dev/stdin");
    ::symlink("/proc/self/fd/1", "/dev/stdout");
    ::symlink("/proc/self/fd/2", "/dev/stderr");
}

// Waits for `pid` (reaping any other child on the way: the init's duty) and exits with its code.
[[noreturn]] void wait_and_exit(pid_t pid) {
    for (;;) {
        int status = 0;
        const pid_t r = ::waitpid(-1, &status, 0);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0) {
            ::_exit(125);
        }
        if (r == pid) {
            ::_exit(exit_code_of(status));
        }
    }
}

// Whether descriptors a and b (both open) share one open file: kcmp(2), or without it the same
// file opened with the same access mode.
bool same_open_file(int a, int b) {
    const long same = ::syscall(SYS_kcmp, ::getpid(), ::getpid(), KCMP_FILE, a, b);
    if (same >= 0) {
        return same == 0;
    }

    struct stat sa {};

    struct stat sb {};

    return ::fstat(a, &sa) == 0 && ::fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino &&
           (::fcntl(a, F_GETFL) & O_ACCMODE) == (::fcntl(b, F_GETFL) & O_ACCMODE);
}

// Standard input, output or error opened before the mount may lead below the guard: a directory
// (on the workspace or above it) by its /proc/self/fd link (/proc/self/fd/2/.env), as the old
// working directory would; a file in the workspace by opening that link again, for writing too
// (`< WORKSPACE/.env`, then `> /proc/self/fd/0`). Each is opened again by its path, now through
// the guard, with its access mode and offset. A file written to is opened to append, and the
// old open file (which guardfs's own messages still use) is set to append too, so that neither
// overwrites the other; descriptors that shared an open file (`> log 2>&1`) share the new one.
// When the guard refuses one (`>> WORKSPACE/.env`, or a file the read face hides), the command
// is not started (exit 125), as a shell does not start a command whose redirection fails. Files
// elsewhere, and files with no name left (a shell's here-document), stay as they are, as do
// pipes, terminals and sockets. Done in pid 1 of the command's namespace, so that no process
// there holds the old descriptors (defence in depth: the command, with fewer capabilities than
// pid 1, may not look into /proc/1/fd anyway). The caller's open file stays set to append.
void reopen_stdio_through_guard(const std::string& workspace_real) {
    std::array<int, 3> shares{-1, -1, -1};
    for (int k = 1; k <= 2; ++k) {
        for (int j = 0; j < k && shares.at(static_cast<std::size_t>(k)) < 0; ++j) {
            if (same_open_file(j, k)) {
                shares.at(static_cast<std::size_t>(k)) = j;
            }
        }
    }
    std::array<bool, 3> reopened{};
    std::array<bool, 3> refused{};
    std::string why;
    for (int fd = 0; fd <= 2; ++fd) {
        const auto i = static_cast<std::size_t>(fd);
        if (const int first = shares.at(i); first >= 0) {
            const auto f = static_cast<std::size_t>(first);
            refused.at(i) = refused.at(f);
            if (reopened.at(f)) {
                // Without kcmp(2) this may be an open file of its own: it appends too.
                const int mode = ::fcntl(fd, F_GETFL);
                if (mode >= 0 && (mode & O_ACCMODE) != O_RDONLY) {
                    (void)::fcntl(fd, F_SETFL, mode | O_APPEND);
                }
                if (::dup2(first, fd) < 0) {
                    die("cannot open standard input, output or error again through the guard");
                }
            }
            continue;
        }

        struct stat st {};

        if (::fstat(fd, &st) != 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) ||
            (S_ISREG(st.st_mode) && st.st_nlink == 0)) {
            continue;
        }
        std::array<char, 4097> buf{};
        const std::string link = "/proc/self/fd/" + std::to_string(fd);
        const ssize_t n = ::readlink(link.c_str(), buf.data(), buf.size() - 1);
        const std::string path(buf.data(), n > 0 ? static_cast<std::size_t>(n) : 0);
        const bool below = !workspace_real.empty() &&
                           path.compare(0, workspace_real.size(), workspace_real) == 0 &&
                           (path.size() == workspace_real.size() ||
                            path[workspace_real.size()] == '/' || workspace_real == "/");
        if (S_ISREG(st.st_mode) && !below) {
            continue;
        }
        const int mode = ::fcntl(fd, F_GETFL);
        const int access = mode & O_ACCMODE;
        int again = -1;
        int err = ENAMETOOLONG; // the link could not be read whole
        if (!path.empty() && path.front() == '/' && static_cast<std::size_t>(n) < buf.size() - 1) {
            const int flags = S_ISDIR(st.st_mode)  ? O_RDONLY | O_DIRECTORY
                              : access == O_RDONLY ? O_RDONLY | O_NOFOLLOW
                                                   : access | O_APPEND | O_NOFOLLOW;
            again = ::open(path.c_str(), flags | O_CLOEXEC | O_NOCTTY);
            err = errno;
        }
        if (again < 0 && S_ISREG(st.st_mode)) {
            refused.at(i) = true;
            why += "guardfs run: " +
                   std::string(fd == 0   ? "standard input"
                               : fd == 1 ? "standard output"
                                         : "standard error") +
                   " (" + path + ") cannot be opened through the guard: " + strerrordesc_np(err) +
                   "\n";
            continue;
        }
        if (again < 0) {
            again = ::open("/dev/null", O_RDONLY | O_CLOEXEC); // a directory nobody may reach
        }
        if (S_ISREG(st.st_mode) && access != O_RDONLY) {
            (void)::fcntl(fd, F_SETFL, mode | O_APPEND);
        }
        if (again >= 0 && S_ISREG(st.st_mode)) {
            ::lseek(again, ::lseek(fd, 0, SEEK_CUR), SEEK_SET);
        }
        if (again < 0 || ::dup2(again, fd) < 0) {
            die("cannot open standard input, output or error again through the guard");
        }
        ::close(again);
        reopened.at(i) = true;
    }
    if (!why.empty()) {
        // Said where it cannot land in a refused file; the exit code says it in any case.
        if (!refused.at(2)) {
            std::fputs(why.c_str(), stderr);
            std::fputs("guardfs run: the command was not started\n", stderr);
        }
        ::_exit(125);
    }
}

[[noreturn]] void command_main(const CommandSpec& spec) {
    for (int sig = 1; sig < NSIG; ++sig) {
        ::signal(sig, SIG_DFL);
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    // The working directory is resolved again here, through the guard: a directory opened
    // before the mount would lead to the unguarded tree underneath.
    if (::chdir(spec.cwd.c_str()) != 0 && ::chdir("/") != 0) {
        die("cannot enter the working directory");
    }
    ::syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */);
    ::umask(spec.umask);
    drop_capabilities(spec.invoked_as_root);
    install_seccomp();
    std::vector<char*> argv;
    for (const auto& a : spec.argv) {
        argv.push_back(const_cast<char*>(a.c_str()));
    }
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    const int err = errno;
    std::fprintf(stderr, "guardfs run: cannot run %s: %s\n", argv[0], strerrordesc_np(err));
    ::_exit(err == ENOENT ? 127 : 126);
}

} // namespace

int exit_code_of(int status) {
    if (WIFEXITED(status)) {
        return WEXITSTATUS(status);
    }
    if (WIFSIGNALED(status)) {
        return 128 + WTERMSIG(status);
    }
    return 125;
}

namespace {

std::atomic<pid_t> g_forward_to{-1};
void (*g_on_hangup)() noexcept = nullptr;

void forward_signal(int sig, siginfo_t* info, void* /*context*/) {
    const bool from_terminal = info != nullptr && info->si_code == SI_KERNEL;
    // SIGINT and SIGQUIT from the terminal (si_code SI_KERNEL) reach the whole foreground
    // process group, the command too: forwarding them would deliver them twice. Sent by a
    // process (kill, timeout -s INT, a supervisor), they are forwarded like the rest.
    if ((sig == SIGINT || sig == SIGQUIT) && from_terminal) {
        return;
    }
    // SIGHUP a process sends re-reads the policy (design §7), where the guard is served; a
    // terminal's hangup goes on to the command.
    const int saved = errno; // kill(2) may set it under the interrupted code
    if (sig == SIGHUP && !from_terminal && g_on_hangup != nullptr) {
        g_on_hangup();
    } else if (const pid_t pid = g_forward_to.load(); pid > 0) {
        ::kill(pid, sig);
    }
    errno = saved;
}

} // namespace

void forward_signals_to(pid_t pid, void (*on_hangup)() noexcept) {
    g_forward_to = pid;
    g_on_hangup = on_hangup;

    struct sigaction sa {};

    sa.sa_sigaction = forward_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_SIGINFO;
    for (const int sig : {SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT}) {
        ::sigaction(sig, &sa, nullptr);
    }
}

void stop_forwarding_signals() {
    g_forward_to = -1;
}

int enter_guard_namespaces(std::string& why) {
    const uid_t uid = ::geteuid();
    const gid_t gid = ::getegid();
    if (uid == 0) {
        if (::unshare(CLONE_NEWNS) != 0) {
            const int err = errno;
            why = std::string("the kernel refused a new mount namespace: ") + strerrordesc_np(err);
            return err;
        }
    } else {
        if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
            const int err = errno;
            why = std::string("the kernel refused a new user and mount namespace (unprivileged "
                              "user namespaces may be disabled): ") +
                  strerrordesc_np(err);
            return err;
        }
        if (!map_ids(0, uid, 0, gid)) {
            const int err = errno;
            why = std::string("cannot map the user namespace: ") + strerrordesc_np(err);
            return err;
        }
    }
    // Nothing mounted here propagates out, and nothing from outside propagates in.
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
        const int err = errno;
        why = std::string("cannot make the mount namespace private: ") + strerrordesc_np(err);
        return err;
    }
    return 0;
}

pid_t start_command(const CommandSpec& spec) {
    const pid_t parent = ::getpid();
    const pid_t c = ::fork();
    if (c != 0) {
        return c; // the parent, or -1
    }
    // C: dies with guardfs run.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (::getppid() != parent) {
        ::_exit(125);
    }
    // Nothing of the daemon's comes along: not the workspace descriptor opened before the
    // mount (it leads to the unguarded tree), not /dev/fuse. Only then may this process be
    // dumpable again (its /proc files must be its own to write its user namespace's maps).
    ::syscall(SYS_close_range, 3U, ~0U, 0U);
    ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    const uid_t outer_uid = ::geteuid(); // in P's user namespace
    const gid_t outer_gid = ::getegid();
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID) != 0) {
        die("the kernel refused the command's user, mount and PID namespaces");
    }
    if (!map_ids(spec.invoked_as_root ? 0 : spec.outer_uid, outer_uid,
                 spec.invoked_as_root ? 0 : spec.outer_gid, outer_gid)) {
        die("cannot map the command's user namespace");
    }
    ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr);
    const pid_t c_self = ::getpid();
    const pid_t init = ::fork();
    if (init < 0) {
        die("cannot fork");
    }
    if (init > 0) {
        forward_signals_to(init);
        wait_and_exit(init);
    }
    // pid 1 of the command's PID namespace: when it exits, everything in it dies.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (::getppid() != c_self && ::getppid() != 0) {
        ::_exit(125);
    }
    ::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
    if (spec.invoked_as_root) {
        minimal_dev();
    }
    reopen_stdio_through_guard(spec.workspace_real);
    // pid 1 keeps no directory opened before the mount as its working directory either.
    if (::chdir("/") != 0) {
        die("cannot leave the working directory");
    }
    const pid_t cmd = ::fork();
    if (cmd < 0) {
        die("cannot fork");
    }
    if (cmd == 0) {
        command_main(spec);
    }
    forward_signals_to(cmd);
    wait_and_exit(cmd);
}

} // namespace guardfs::app

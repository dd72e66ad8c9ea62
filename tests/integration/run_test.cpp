// guardfs run (issue #7, design §9): COMMAND runs in namespaces of its own with the guard over
// WORKSPACE; every escape hatch a same-user (or root) process could try fails, the guarded file
// is unchanged, output and exit status pass through, nothing outside sees the mount, and no
// mount, daemon or command process is left when it ends, also after SIGKILL.
#include "support/mount_fixture.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

using namespace guardfs::test;

namespace {

struct Workspace {
    TempDir t;
    std::string ws;
    std::string policy;

    Workspace() {
        ws = t.mkdir("ws");
        write_file(ws + "/.env", "SECRET=1\n");
        write_file(ws + "/notes.txt", "notes\n");
        policy = t.write("policy.yaml", "deny: [\".env\"]\n");
    }
};

ProcessResult guardfs_run(const Workspace& w, const std::string& script,
                          std::vector<std::string> extra = {}) {
    std::vector<std::string> argv{GUARDFS_BIN, "run", "--policy", w.policy};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {w.ws, "--", "/bin/sh", "-c", script});
    RunOptions o;
    o.cwd = w.t.path();
    o.timeout = std::chrono::seconds(60);
    return run(argv, o);
}

bool no_guardfs_mount_at(const std::string& path) {
    return !is_mount_point(path);
}

} // namespace

TEST_CASE("guardfs run passes output and exit status through and guards the workspace",
          "[integration][run]") {
    require_fuse();
    Workspace w;
    const auto r = guardfs_run(w, "echo out; echo err >&2; cat ws/notes.txt; echo x > ws/.env; "
                                  "echo written > ws/new.txt; exit 7");
    CHECK(r.exit_code == 7);
    CHECK(r.out == "out\nnotes\n");
    CHECK(r.err.find("err\n") != std::string::npos);
    CHECK(r.err.find("Permission denied") != std::string::npos);
    CHECK(read_file(w.ws + "/.env") == "SECRET=1\n");
    CHECK(read_file(w.ws + "/new.txt") == "written\n");
    CHECK(no_guardfs_mount_at(w.ws));
}

TEST_CASE("guardfs run takes -f, one of the mount options design §11 gives it, and still "
          "waits for COMMAND",
          "[integration][run]") {
    require_fuse();
    Workspace w;
    const auto r = guardfs_run(w, "echo x > ws/.env; echo done > ws/new.txt; exit 3", {"-f"});
    CHECK(r.exit_code == 3);
    CHECK(r.err.find("Permission denied") != std::string::npos);
    CHECK(read_file(w.ws + "/.env") == "SECRET=1\n");
    CHECK(read_file(w.ws + "/new.txt") == "done\n");
    CHECK(no_guardfs_mount_at(w.ws));
}

TEST_CASE("every escape hatch tried from inside guardfs run fails and the guarded file is "
          "unchanged",
          "[integration][run][escape]") {
    require_fuse();
    Workspace w;
    // A symlink made earlier, outside the workspace, pointing at the guarded file.
    std::filesystem::create_symlink(w.ws + "/.env", w.t.path() + "/link-to-env");
    const FileState before = file_state(w.ws + "/.env");
    const std::string self = std::to_string(::getpid());
    // Each line is an attempt; the script prints "ESCAPED <what>" if one succeeds.
    const std::string script =
        "cd " + w.t.path() +
        "\n"
        "try() { what=$1; shift; if \"$@\" >/dev/null 2>&1; then echo ESCAPED $what; fi; }\n"
        "grep -q ' " +
        w.ws +
        " .* - fuse.guardfs ' /proc/self/mountinfo || echo NOT-GUARDED\n"
        "try fusermount fusermount3 -u ws\n"
        "try umount-lazy umount -l ws\n"
        "try umount umount ws\n"
        "try bind-parent mount --bind " +
        w.t.path() +
        " /mnt\n"
        "try bind-ws mount --bind ws /mnt\n"
        "try tmpfs-cover mount -t tmpfs none ws\n"
        "try unshare unshare -U -m -r true\n"
        "try nsenter nsenter -t 1 -m true\n"
        "try proc-daemon-fd ls /proc/" +
        self +
        "/fd\n"
        "for p in /proc/[0-9]*; do for f in $p/fd/* $p/cwd $p/root; do\n"
        "  [ -e \"$f/.env\" ] && (echo x >> \"$f/.env\") 2>/dev/null && echo ESCAPED proc $f\n"
        "done; done\n"
        "try symlink-earlier sh -c 'echo x > link-to-env'\n"
        "try write sh -c 'echo x > ws/.env'\n"
        "try rename sh -c 'mv ws/.env ws/moved'\n"
        "try chroot chroot / true\n"
        "echo done\n";
    const auto r = guardfs_run(w, script);
    CAPTURE(r.out, r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("done") != std::string::npos);
    CHECK(r.out.find("ESCAPED") == std::string::npos);
    CHECK(r.out.find("NOT-GUARDED") == std::string::npos);
    CHECK(file_state(w.ws + "/.env") == before);
}

namespace {

// guardfs run with a script and these redirections of its own standard descriptors (made by a
// shell before guardfs starts, so opened below the mount).
ProcessResult run_redirected(const Workspace& w, const std::string& script,
                             const std::string& redirections, const std::string& before = {}) {
    const std::string file = w.t.write("script.sh", script);
    RunOptions o;
    o.cwd = w.t.path();
    o.timeout = std::chrono::seconds(60);
    return run({"/bin/sh", "-c",
                before + "exec " + GUARDFS_BIN + " run --policy " + w.policy + " " + w.ws +
                    " -- /bin/sh " + file + " " + redirections},
               o);
}

} // namespace

TEST_CASE("a directory handed over as standard input or error does not lead around the guard",
          "[integration][run][escape]") {
    // A descriptor opened before the mount, on the workspace or above it, reaches the tree below
    // the guard by its /proc/self/fd link; guardfs run opens such a directory again through the
    // guard.
    require_fuse();
    Workspace w;
    const FileState before = file_state(w.ws + "/.env");
    const auto r = run_redirected(w,
                                  "for f in /proc/self/fd/0/.env /proc/self/fd/2/ws/.env; do\n"
                                  "  (echo x >> $f) 2>/dev/null && echo ESCAPED $f\n"
                                  "done\n"
                                  "ls /proc/self/fd/0/ | grep -q notes.txt && echo LISTED\n"
                                  "echo done\n",
                                  "0<" + w.ws + " 2<" + w.t.path());
    CAPTURE(r.out, r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("done") != std::string::npos);
    CHECK(r.out.find("LISTED") != std::string::npos); // the same directory, through the guard
    CHECK(r.out.find("ESCAPED") == std::string::npos);
    CHECK(file_state(w.ws + "/.env") == before);
}

TEST_CASE("a file in the workspace handed over as standard input or output is opened again "
          "through the guard",
          "[integration][run][escape]") {
    require_fuse();
    Workspace w;
    const FileState before = file_state(w.ws + "/.env");
    SECTION("read from: its descriptor does not reopen it for writing below the guard") {
        const auto r = run_redirected(w,
                                      "cat\n"
                                      "(echo x > /proc/self/fd/0) 2>/dev/null && echo ESCAPED\n"
                                      "echo done\n",
                                      "<" + w.ws + "/.env");
        CAPTURE(r.out, r.err);
        CHECK(r.out.find("SECRET=1\ndone") != std::string::npos);
        CHECK(r.out.find("ESCAPED") == std::string::npos);
    }
    SECTION("written to: refused, and the command is not started") {
        const auto r =
            run_redirected(w, "echo x; echo y >&2; touch started\n", ">>" + w.ws + "/.env");
        CAPTURE(r.out, r.err);
        CHECK(r.exit_code == 125);
        CHECK(r.err.find("standard output (" + w.ws + "/.env)") != std::string::npos);
        CHECK_FALSE(std::filesystem::exists(w.t.path() + "/started"));
        CHECK(file_state(w.ws + "/.env") == before);
        // With standard error refused too, the exit code alone says it. (guardfs's own messages
        // go where its standard error was sent, here .env: the caller's choice, not the
        // command's.)
        const auto both = run_redirected(w, "echo x; echo y >&2\n", ">>" + w.ws + "/.env 2>&1");
        CHECK(both.exit_code == 125);
        const std::string env = read_file(w.ws + "/.env");
        CHECK(env.rfind("SECRET=1\n", 0) == 0);
        CHECK(env.find("x\n") == std::string::npos);
        CHECK(env.find("y\n") == std::string::npos);
        return; // not the check below: guardfs's own messages may have landed in .env
    }
    SECTION("a file with no name left (a shell's here-document) is read as it is") {
        const auto r = run_redirected(w, "cat\n", "",
                                      "exec <" + w.ws + "/notes.txt; rm " + w.ws + "/notes.txt; ");
        CAPTURE(r.out, r.err);
        CHECK(r.exit_code == 0);
        CHECK(r.out == "notes\n");
    }
    SECTION("an ordinary log, shared by output and error, keeps both in order") {
        const auto r = run_redirected(w, "echo one; echo two >&2; echo three\n",
                                      ">" + w.ws + "/build.log 2>&1");
        CAPTURE(r.out, r.err);
        CHECK(r.exit_code == 0);
        // after whatever guardfs itself said there (FUSE over io_uring, ...), never over it
        const std::string log = read_file(w.ws + "/build.log");
        REQUIRE(log.size() >= 14);
        CHECK(log.substr(log.size() - 14) == "one\ntwo\nthree\n");
    }
    CHECK(file_state(w.ws + "/.env") == before);
}

TEST_CASE("a process outside sees no mount while the command runs, and nothing is left after "
          "it ends",
          "[integration][run]") {
    require_fuse();
    Workspace w;
    const std::string started = w.t.path() + "/started";
    const std::string stop = w.t.path() + "/stop";
    std::vector<std::string> argv{GUARDFS_BIN,
                                  "run",
                                  "--policy",
                                  w.policy,
                                  w.ws,
                                  "--",
                                  "/bin/sh",
                                  "-c",
                                  "sleep 1000.4242 & touch " + started + "; i=0; while [ ! -e " +
                                      stop +
                                      " ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done"};
    const pid_t pid = spawn(argv);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!std::filesystem::exists(started) && std::chrono::steady_clock::now() < until) {
        std::this_thread::yield();
    }
    REQUIRE(std::filesystem::exists(started));
    CHECK(no_guardfs_mount_at(w.ws));       // this process is outside: it sees the plain directory
    write_file(w.ws + "/outside.txt", "x"); // and it can write without the guard
    write_file(stop, "");
    int status = 0;
    REQUIRE(wait_for_exit(pid, std::chrono::seconds(30), &status));
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    // The command's background child died with its PID namespace.
    CHECK(run({"pgrep", "-f", "sleep 1000.4242"}).exit_code == 1);
}

TEST_CASE("killing the command or guardfs run itself with SIGKILL leaves no mount and no process",
          "[integration][run]") {
    require_fuse();
    SECTION("the command kills itself") {
        Workspace w;
        const auto r = guardfs_run(w, "sleep 1000.5151 & kill -9 $$");
        CHECK(r.exit_code == 128 + SIGKILL);
        CHECK(run({"pgrep", "-f", "sleep 1000.5151"}).exit_code == 1);
    }
    SECTION("guardfs run is killed") {
        Workspace w;
        const std::string started = w.t.path() + "/started";
        const pid_t pid = spawn({GUARDFS_BIN, "run", "--policy", w.policy, w.ws, "--", "/bin/sh",
                                 "-c", "touch " + started + "; exec sleep 1000.6161"});
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (!std::filesystem::exists(started) && std::chrono::steady_clock::now() < until) {
            std::this_thread::yield();
        }
        REQUIRE(std::filesystem::exists(started));
        ::kill(pid, SIGKILL);
        REQUIRE(wait_for_exit(pid, std::chrono::seconds(10)));
        // Everything in the chain dies with it (bounded wait: the kernel delivers the deaths).
        const auto gone_by = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (run({"pgrep", "-f", "sleep 1000.6161"}).exit_code == 0 &&
               std::chrono::steady_clock::now() < gone_by) {
            std::this_thread::yield();
        }
        CHECK(run({"pgrep", "-f", "sleep 1000.6161"}).exit_code == 1);
        CHECK(no_guardfs_mount_at(w.ws));
        CHECK(read_file(w.ws + "/.env") == "SECRET=1\n");
    }
}

TEST_CASE("SIGINT or SIGTERM sent to guardfs run ends the command and removes the guard",
          "[integration][run]") {
    // design §11: SIGINT/SIGTERM unmount cleanly. SIGINT sent to guardfs run's own pid (kill,
    // timeout -s INT, a supervisor) was ignored: only the terminal's, which reaches the command
    // anyway, was expected.
    require_fuse();
    const int sig = GENERATE(SIGINT, SIGTERM);
    CAPTURE(sig);
    Workspace w;
    const std::string started = w.t.path() + "/started";
    Child guard(spawn({GUARDFS_BIN, "run", "--policy", w.policy, w.ws, "--", "/bin/sh", "-c",
                       "touch " + started + "; exec sleep 1000.7171"}));
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!std::filesystem::exists(started) && std::chrono::steady_clock::now() < until) {
        std::this_thread::yield();
    }
    REQUIRE(std::filesystem::exists(started));
    ::kill(guard.pid, sig);
    int status = 0;
    REQUIRE(guard.wait(std::chrono::seconds(10), &status));
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 128 + sig); // the command's end, passed through
    CHECK(run({"pgrep", "-f", "sleep 1000.7171"}).exit_code == 1);
    CHECK(no_guardfs_mount_at(w.ws));
}

TEST_CASE("SIGHUP sent to guardfs run re-reads the policy instead of hanging up the command",
          "[integration][run][reload]") {
    // design §7: SIGHUP re-reads the policy. guardfs run forwarded it to the command (which died
    // of it, or trapped it), and the guard it served had no way to reload.
    require_fuse();
    Workspace w;
    const std::string started = w.t.path() + "/started";
    const std::string go = w.t.path() + "/go";
    const std::string out = w.t.path() + "/out";
    const std::string script =
        "trap 'echo got-hup' HUP; touch " + started + "; while [ ! -e " + go +
        " ]; do sleep 0.02; done; i=0; r=two-written; while [ $i -lt 250 ]; do "
        "if ! echo z 2>/dev/null > two; then r=two-refused; break; fi; "
        "rm -f two 2>/dev/null; i=$((i+1)); sleep 0.02; done; echo $r";
    Child guard(spawn({GUARDFS_BIN, "run", "--policy", w.policy, w.ws, "--", "/bin/sh", "-c",
                       "cd " + w.ws + " && " + script},
                      out));
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!std::filesystem::exists(started) && std::chrono::steady_clock::now() < until) {
        std::this_thread::yield();
    }
    REQUIRE(std::filesystem::exists(started));
    write_file(w.policy, "deny: [\".env\", two]\n");
    ::kill(guard.pid, SIGHUP);
    write_file(go, "");
    int status = 0;
    REQUIRE(guard.wait(std::chrono::seconds(30), &status));
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    const std::string said = read_file(out);
    CAPTURE(said);
    CHECK(said.find("two-refused") != std::string::npos);
    CHECK(said.find("got-hup") == std::string::npos);
}

TEST_CASE("guardfs run works for an ordinary user, with the same escapes closed",
          "[integration][run][user]") {
    require_fuse();

    // This machine's /dev/fuse is 0600 (stock Debian: 0666). An ordinary user needs to open it,
    // so the test opens it up for its duration and puts the mode back after.
    struct stat st {};

    REQUIRE(::stat("/dev/fuse", &st) == 0);
    const mode_t saved = st.st_mode & 07777;
    REQUIRE(::chmod("/dev/fuse", 0666) == 0);

    struct Restore {
        mode_t mode;

        ~Restore() { ::chmod("/dev/fuse", mode); }
    } restore{saved};

    Workspace w;
    const std::string plain = w.t.mkdir("plain");
    REQUIRE(run({"chown", "-R", "65534:65534", w.t.path()}).exit_code == 0);
    REQUIRE(::chmod(w.t.path().c_str(), 0755) == 0);
    const std::string script =
        "cd " + w.t.path() +
        " && id -u && echo x > ws/.env; echo hi > ws/mine.txt && stat -c %U ws/mine.txt; "
        "umount -l ws 2>/dev/null && echo ESCAPED umount; fusermount3 -u ws 2>/dev/null && echo "
        "ESCAPED fusermount; unshare -U -m -r true 2>/dev/null && echo ESCAPED unshare; exit 5";
    RunOptions o;
    o.cwd = w.t.path();
    o.env = {{"HOME", w.t.path()}, {"PATH", "/usr/sbin:/usr/bin:/sbin:/bin"}};
    const auto r = run({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", GUARDFS_BIN,
                        "run", "--policy", w.policy, w.ws, "--", "/bin/sh", "-c", script},
                       o);
    CAPTURE(r.out, r.err);
    CHECK(r.exit_code == 5);
    CHECK(r.out.find("65534\n") == 0);
    CHECK(r.out.find("nobody") != std::string::npos);
    CHECK(r.out.find("ESCAPED") == std::string::npos);
    CHECK(r.err.find("Permission denied") != std::string::npos);
    CHECK(read_file(w.ws + "/.env") == "SECRET=1\n");
    CHECK(read_file(w.ws + "/mine.txt") == "hi\n");
    // Root in the command's user namespace holds CAP_SYS_ADMIN there, but the kernel registers
    // backing files only for the initial namespace's: the daemon does not try FUSE passthrough,
    // so it does not report a refusal (docs/decisions/011).
    CHECK(r.err.find("passthrough") == std::string::npos);

    // guardfs mount by the same user (no namespace, no default_permissions): a directory its
    // owner may not read cannot be listed, as natively. The daemon's own open of it fails: at
    // opendir(3), or at the first read when the kernel opens directories without OPENDIR
    // (decision 008); either way no name is listed.
    struct Unmount {
        std::string path;

        ~Unmount() {
            if (is_mount_point(path)) {
                run({"umount", "-l", path});
            }
        }
    } unmount{plain};

    // A directory that may be read but not searched (0400) lists its names, as natively (the
    // entries cannot be looked up, so they are listed without attributes).
    const std::string mounted =
        "mkdir " + plain + "/locked && chmod 300 " + plain + "/locked && mkdir " + plain +
        "/ro && touch " + plain + "/ro/g " + plain + "/ro/h && chmod 400 " + plain + "/ro && " +
        GUARDFS_BIN + " mount --policy " + w.policy + " " + plain +
        " && { python3 -c 'import os, sys; print(os.listdir(sys.argv[1]))' " + plain +
        "/locked 2>/dev/null && echo LISTED locked || echo refused locked; chmod 700 " + plain +
        "/locked && touch " + plain + "/locked/f && ls " + plain + "/locked; ls " + plain +
        "/ro; stat " + plain +
        "/ro/g >/dev/null 2>&1 && echo STAT ro/g || echo no stat ro/g; echo data > " + plain +
        "/w && cat " + plain +
        "/w; "
        "fusermount3 -u " +
        plain + "; }";
    const auto m = run(
        {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sh", "-c", mounted},
        o);
    CAPTURE(m.out, m.err);
    CHECK(m.exit_code == 0);
    CHECK(m.out == "refused locked\nf\ng\nh\nno stat ro/g\ndata\n");
    // Without CAP_SYS_ADMIN no FUSE passthrough is tried, and none is reported: data goes
    // through the daemon and the page cache.
    CHECK(m.err.find("passthrough") == std::string::npos);
    CHECK(!is_mount_point(plain));
}

TEST_CASE("a command that cannot be started reports it with the shell's exit codes",
          "[integration][run]") {
    require_fuse();
    Workspace w;
    const auto r =
        run({GUARDFS_BIN, "run", "--policy", w.policy, w.ws, "--", "/nonexistent/program"});
    CHECK(r.exit_code == 127);
    CHECK(r.err.find("/nonexistent/program") != std::string::npos);
    CHECK(no_guardfs_mount_at(w.ws));
    const auto usage = run({GUARDFS_BIN, "run", w.ws});
    CHECK(usage.exit_code == 2);
}

TEST_CASE("the command under guardfs run cannot answer its own questions on the approver socket",
          "[integration][run][approver]") {
    require_fuse();
    Workspace w;
    write_file(w.policy, "ask: [\".env\"]\n");
    const std::string sock = w.t.path() + "/a.sock";
    // Answers the first question it is sent with allow; SOCK and the writer come from argv.
    const std::string answerer = w.t.write("answer.py", R"PY(
import json, socket, subprocess, sys, time
s = socket.socket(socket.AF_UNIX)
for _ in range(100):
    try:
        s.connect(sys.argv[1])
        break
    except OSError:
        time.sleep(0.1)
writer = subprocess.Popen(["sh", "-c", sys.argv[2]]) if len(sys.argv) > 2 else None
s.settimeout(8)
try:
    data = s.recv(65536)
    if data:
        q = json.loads(data.split(b"\n")[0])
        s.sendall(json.dumps({"id": q["id"], "verdict": "allow"}).encode() + b"\n")
        print("ANSWERED")
    else:
        print("CLOSED")
except OSError as e:
    print("NO QUESTION", e)
if writer:
    print("writer", writer.wait())
)PY");
    const std::vector<std::string> extra = {"--approver-socket", sock, "--ask-timeout", "3"};

    SECTION("the command connects and answers allow: refused, the write fails") {
        const auto r = guardfs_run(
            w, "python3 " + answerer + " " + sock + " 'echo planted > ws/.env'; exit 0", extra);
        CAPTURE(r.out, r.err);
        CHECK(r.out.find("ANSWERED") == std::string::npos);
        CHECK(r.out.find("writer ") != std::string::npos);
        CHECK(r.out.find("writer 0") == std::string::npos); // sh's redirection failed
        CHECK(r.err.find("outside the daemon's PID namespace") != std::string::npos);
        CHECK(read_file(w.ws + "/.env") == "SECRET=1\n");
    }
    SECTION("a process outside the command answers allow: the write passes (the socket works)") {
        Child approver(spawn({"python3", answerer, sock}, w.t.path() + "/approver.out"));
        const auto r = guardfs_run(w,
                                   "for i in $(seq 40); do echo planted > ws/.env 2>/dev/null "
                                   "&& echo WROTE && exit 0; sleep 0.25; done; exit 1",
                                   extra);
        CAPTURE(r.out, r.err);
        CHECK(r.exit_code == 0);
        CHECK(r.out.find("WROTE") != std::string::npos);
        CHECK(read_file(w.ws + "/.env") == "planted\n");
        CHECK(approver.wait(std::chrono::seconds(10)));
        CHECK(read_file(w.t.path() + "/approver.out").find("ANSWERED") != std::string::npos);
    }
    CHECK(no_guardfs_mount_at(w.ws));
}

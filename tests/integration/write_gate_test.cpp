// The write gate against real processes (issue #3): every way to change a guarded `.env` fails
// with EACCES and leaves the underlying file byte-for-byte and mode-for-mode unchanged, checked
// after unmounting.
#include "support/mount_fixture.hpp"
#include "support/process.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace guardfs::test;

namespace {

const char* const kPolicy = "deny: [\".env\", \"*.pem\"]\nagent_config: true\n";

MountSpec with_env_file() {
    MountSpec spec;
    spec.policy_yaml = kPolicy;
    spec.setup = [](const std::string& ws) {
        write_file(ws + "/.env", "SECRET=1\n", 0640);
        write_file(ws + "/notes.txt", "notes\n");
        std::filesystem::create_directory(ws + "/sub");
    };
    return spec;
}

} // namespace

TEST_CASE("shell and coreutils cannot change a guarded .env", "[integration][gate]") {
    const char* attack = GENERATE("echo x > .env",      // overwrite
                                  "echo x >> .env",     // append
                                  ": > .env",           // truncate by redirection
                                  "truncate -s 0 .env", // truncate(2)
                                  "rm -f .env",         // unlink
                                  "mv .env moved",      // rename away
                                  "mv notes.txt .env",  // rename onto
                                  "cp notes.txt .env",  // copy onto
                                  "sed -i s/1/2/ .env", // sed -i: a temporary file renamed onto it
                                  "ln .env sub/hard",   // a hard link to it
                                  "ln -s ../.env sub/soft",       // a symlink aimed at it
                                  "chmod 777 .env",               // mode
                                  "touch .env",                   // times
                                  "setfattr -n user.x -v 1 .env", // xattr
                                  "fallocate -l 1M .env", // fallocate through an open for write
                                  "python3 -c \"open('.env','w').write('x')\"",
                                  "python3 -c \"import os; os.rename('notes.txt', '.env')\"");
    MountedGuard g(with_env_file());
    const FileState before = file_state(g.ws(".env"));
    RunOptions o;
    o.cwd = g.ws();
    const auto r = sh(attack, o);
    CAPTURE(attack, r.err);
    CHECK(r.exit_code != 0);
    CHECK(g.unmount() == 0);
    CHECK(file_state(g.ws(".env")) == before);
}

TEST_CASE("system calls on a guarded name fail with EACCES", "[integration][gate][errno]") {
    MountedGuard g(with_env_file());
    errno = 0;
    CHECK(::open(g.ws(".env").c_str(), O_WRONLY) == -1);
    CHECK(errno == EACCES);
    errno = 0;
    CHECK(::open(g.ws(".env").c_str(), O_RDONLY | O_TRUNC) == -1);
    CHECK(errno == EACCES);
    errno = 0;
    CHECK(::unlink(g.ws(".env").c_str()) == -1);
    CHECK(errno == EACCES);
    errno = 0;
    CHECK(::open(g.ws("sub/.ENV").c_str(), O_WRONLY | O_CREAT, 0644) == -1); // another case
    CHECK(errno == EACCES);
    errno = 0;
    CHECK(::mkdir(g.ws("sub/key.pem").c_str(), 0755) == -1);
    CHECK(errno == EACCES);
    // and reading it still works: this is the write face
    CHECK(read_file(g.ws(".env")) == "SECRET=1\n");
    CHECK(g.unmount() == 0);
    CHECK_FALSE(std::filesystem::exists(g.ws("sub/.ENV")));
    CHECK_FALSE(std::filesystem::exists(g.ws("sub/key.pem")));
}

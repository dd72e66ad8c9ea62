// Judging a git config by content (guard/git_config.hpp): the plainest configs are read without
// git, and every change is judged as git's own reading of both contents judges it.
#include "guard/git_config.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

using guardfs::guard::GitConfigChange;
using guardfs::guard::judge_git_config_change;
using guardfs::guard::judge_git_config_change_with_git;
using guardfs::guard::parse_git_config;
using guardfs::guard::plain_git_config_keys;

namespace {

// PATH without git for the life of the object: git cannot be started, so only what is judged
// without it gets an answer other than nullopt.
class NoGit {
public:
    NoGit() {
        const char* p = std::getenv("PATH");
        saved_ = p != nullptr ? std::optional<std::string>(p) : std::nullopt;
        ::setenv("PATH", "/nonexistent-guardfs-test", 1);
    }

    NoGit(const NoGit&) = delete;
    NoGit& operator=(const NoGit&) = delete;

    ~NoGit() {
        if (saved_) {
            ::setenv("PATH", saved_->c_str(), 1);
        } else {
            ::unsetenv("PATH");
        }
    }

private:
    std::optional<std::string> saved_;
};

const char* const kGitInit = "[core]\n"
                             "\trepositoryformatversion = 0\n"
                             "\tfilemode = true\n"
                             "\tbare = false\n"
                             "\tlogallrefupdates = true\n";

// What git clone writes (git 2.39), with a second branch.
const char* const kGitClone = "[core]\n"
                              "\trepositoryformatversion = 0\n"
                              "\tfilemode = true\n"
                              "\tbare = false\n"
                              "\tlogallrefupdates = true\n"
                              "[remote \"origin\"]\n"
                              "\turl = https://example.invalid/a/b.git\n"
                              "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
                              "[branch \"main\"]\n"
                              "\tremote = origin\n"
                              "\tmerge = refs/heads/main\n"
                              "[branch \"Feature/X y]z\"]\n"
                              "\tremote = origin\n";

} // namespace

TEST_CASE("the plainest config texts give their keys as git reads them", "[guard][git-config]") {
    using Keys = std::vector<std::string>;
    CHECK(plain_git_config_keys("") == Keys{});
    CHECK(plain_git_config_keys(" \n\t\n") == Keys{});
    CHECK(plain_git_config_keys(kGitInit) == Keys{"core.repositoryformatversion", "core.filemode",
                                                  "core.bare", "core.logallrefupdates"});
    CHECK(plain_git_config_keys("[Core]\n  HooksPath=x\n[user]\nname = A B\nflag\n") ==
          Keys{"core.hookspath", "user.name", "user.flag"});
    // Subsections are kept as written; sections and variables are folded.
    CHECK(plain_git_config_keys(kGitClone) ==
          Keys{"core.repositoryformatversion", "core.filemode", "core.bare",
               "core.logallrefupdates", "remote.origin.url", "remote.origin.fetch",
               "branch.main.remote", "branch.main.merge", "branch.Feature/X y]z.remote"});
    CHECK(plain_git_config_keys("[Remote \"Up\"]\n\tURL = x\n") == Keys{"remote.Up.url"});
    for (const char* other : {
             "name = x\n",                      // no section
             "[remote  \"o\"]\nurl = x\n",      // two spaces before the subsection
             "[remote\t\"o\"]\nurl = x\n",      // a tab before the subsection
             "[remote \"\"]\nurl = x\n",        // an empty subsection
             "[remote \"o\tp\"]\nurl = x\n",    // a tab in the subsection
             "[remote \"o]\nurl = x\n",         // an unclosed subsection
             "[remote \"o\"x]\nurl = x\n",      // bytes after the subsection
             "[remote \"o\"] url = x\n",        // a variable after the header
             "[remote \"o\"]\nurl = \"x\"\n",   // a quoted value
             "[remote o]\nurl = x\n",           // an unquoted subsection
             "[a.b]\nc = d\n",                  // the old subsection form
             "[core] bare = true\n",            // a variable after a header
             "[core]\nbare = true # comment\n", // a comment
             "[core]\nbare = true ; comment\n", // a comment
             "[core]\neditor = \"vi\"\n",       // a quoted value
             "[core]\neditor = vi \\\n -x\n",   // a continuation
             "[core]\n1x = y\n",                // a name that git refuses
             "[core]\nna.me = y\n",             // a name that git refuses
             "[core]\nname x = y\n",            // two words
             "[]\nx = y\n",                     // an empty section
             "[core\nx = y\n",                  // an unclosed header
             "[core]\r\nbare = true\r\n",       // carriage returns
             "[core]\nname = caf\xc3\xa9\n",    // a byte above ASCII
             "[core]\nname = a\x01"
             "b\n", // a control byte
         }) {
        CAPTURE(other);
        CHECK_FALSE(plain_git_config_keys(other).has_value());
    }
}

TEST_CASE("a plain config without a dangerous key is judged without starting git",
          "[guard][git-config]") {
    const NoGit no_git;
    CHECK(judge_git_config_change(GitConfigChange{kGitInit, std::nullopt}) == std::string());
    CHECK(judge_git_config_change(GitConfigChange{std::string(kGitInit) + "[user]\nname = A\n",
                                                  std::string(kGitInit)}) == std::string());
    CHECK(judge_git_config_change(GitConfigChange{kGitClone, std::string(kGitInit)}) ==
          std::string());
    // Anything else needs git, which cannot be started here: no answer (the caller refuses).
    for (const GitConfigChange& c : {
             GitConfigChange{"[core]\nhookspath = x\n", std::nullopt},          // a dangerous key
             GitConfigChange{"[alias]\nco = checkout\n", std::nullopt},         // every alias
             GitConfigChange{"[remote \"o\"]\nurl = \"x\"\n", std::nullopt},    // not plain
             GitConfigChange{"[remote \"o\"]\nuploadpack = x\n", std::nullopt}, // dangerous
             GitConfigChange{"[Filter \"lfs\"]\nClean = x\n", std::nullopt},    // any case
             GitConfigChange{kGitInit, std::string("[core]\n# c\n")},           // current not plain
             GitConfigChange{"[Core]\nPager = less\n", std::nullopt},           // any case
         }) {
        CAPTURE(c.proposed, c.current.value_or("(none)"));
        CHECK_FALSE(judge_git_config_change(c).has_value());
    }
}

TEST_CASE("every config change is judged as git's own reading of both contents judges it",
          "[guard][git-config]") {
    // Texts built from lines of many shapes, plain and not, harmless and dangerous.
    const std::vector<std::string> headers = {
        "[core]",           "[Core]",           "  [user]",
        "[alias]",          "[remote \"o\"]",   "[a.b]",
        "[include]",        "[pager]",          "[credential]",
        "[diff]",           "[Remote \"Up\"]",  "[branch \"a/B c\"]",
        "[diff \"x\"]",     "[filter \"lfs\"]", "[remote  \"o\"]",
        "[remote \"\"]",    "[url \"a]b\"]",    "[credential \"https://h\"]",
        "[Submodule \"m\"]"};
    const std::vector<std::string> lines = {"\tbare = false",
                                            "filemode = true",
                                            "\thooksPath = /tmp/h",
                                            "editor = vi",
                                            "\tname = A B",
                                            "co = checkout",
                                            "st = !sh -c x",
                                            "path = ../x",
                                            "log",
                                            "helper = store",
                                            "url = https://x/y",
                                            "fsmonitor = true",
                                            "x = y # note",
                                            "email = a@b ; c",
                                            "pager = \"less -R\"",
                                            "textconv = cat",
                                            "Bare=true",
                                            "  sshCommand = ssh",
                                            "excludesFile = ~/.ig",
                                            "name x = y",
                                            "uploadPack = x",
                                            "clean = git-lfs clean",
                                            "merge = refs/heads/main",
                                            "fetch = +refs/heads/*:refs/remotes/o/*",
                                            "update = !sh x",
                                            "update = rebase"};
    std::mt19937 rng(4242);
    auto text = [&] {
        std::string t;
        const int n = static_cast<int>(rng() % 5);
        for (int s = 0; s < n; ++s) {
            t += headers[rng() % headers.size()] + "\n";
            const int m = static_cast<int>(rng() % 4);
            for (int k = 0; k < m; ++k) {
                t += lines[rng() % lines.size()] + "\n";
            }
        }
        return t;
    };
    int plain_harmless = 0;
    int plain_subsections = 0;
    for (int i = 0; i < 300; ++i) {
        GitConfigChange c;
        c.proposed = text();
        if (rng() % 4 != 0) {
            c.current = text();
        }
        CAPTURE(c.proposed, c.current.value_or("(none)"));
        CHECK(judge_git_config_change(c) == judge_git_config_change_with_git(c));
        const auto keys = plain_git_config_keys(c.proposed);
        plain_harmless += keys && judge_git_config_change_with_git(c) == std::string() ? 1 : 0;
        if (keys) {
            // The keys of a plain text are git's, in any case and subsection.
            const auto by_git = parse_git_config(c.proposed);
            REQUIRE(by_git.has_value());
            std::vector<std::string> git_keys;
            for (const auto& kv : *by_git) {
                git_keys.push_back(kv.first);
            }
            std::vector<std::string> sorted = *keys;
            std::sort(sorted.begin(), sorted.end());
            CHECK(sorted == git_keys);
            plain_subsections += c.proposed.find('"') != std::string::npos ? 1 : 0;
        }
    }
    CHECK(plain_harmless > 10);    // the texts reach the path that does not start git
    CHECK(plain_subsections > 10); // with subsections among them
}

TEST_CASE("keys through which git runs a program are dangerous, aliases whatever their value",
          "[guard][git-config]") {
    using guardfs::guard::is_dangerous_git_key;
    // A review (2026-12-07) ran programs through keys the list missed: `git archive
    // --format=tgz` runs tar.tgz.command, and an alias without `!` runs git with `-c`.
    for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
             {"alias.s2", "-c core.fsmonitor=/tmp/x status"},
             {"alias.co", "checkout"},
             {"alias.f", "fetch --upload-pack=/tmp/x origin"},
             {"alias.x", "!sh -c x"},
             {"tar.tgz.command", "touch /tmp/x; gzip -cn"},
             {"imap.tunnel", "x"},
             {"instaweb.httpd", "x"},
             {"gui.editor", "x"},
             {"sendemail.headercmd", "x"},
             {"sendemail.sendmailcmd", "x"},
             {"sendemail.work.smtpserver", "/tmp/x"},
             {"sendemail.work.tocmd", "x"},
         }) {
        CAPTURE(key, value);
        CHECK(is_dangerous_git_key(key, value));
    }
    for (const char* key : {"user.name", "core.bare", "remote.origin.url", "tar.umask",
                            "submodule.m.url", "branch.main.merge"}) {
        CAPTURE(key);
        CHECK_FALSE(is_dangerous_git_key(key, "x"));
    }
    CHECK(is_dangerous_git_key("submodule.m.update", "!x"));
    CHECK_FALSE(is_dangerous_git_key("submodule.m.update", "rebase"));
    // judged with git, as a config renamed into place is
    CHECK(judge_git_config_change_with_git(GitConfigChange{
              std::string(kGitInit) + "[alias]\n\ts2 = -c core.fsmonitor=/tmp/x status\n",
              std::string(kGitInit)}) == std::string("alias.s2"));
    CHECK(judge_git_config_change_with_git(GitConfigChange{
              std::string(kGitInit) + "[tar \"tgz\"]\n\tcommand = touch /tmp/x; gzip -cn\n",
              std::string(kGitInit)}) == std::string("tar.tgz.command"));
    // an alias already there stays (only what is added or changed is refused)
    const std::string with_alias = std::string(kGitInit) + "[alias]\n\tco = checkout\n";
    CHECK(judge_git_config_change_with_git(
              GitConfigChange{with_alias + "[user]\n\tname = A\n", with_alias}) == std::string());
}

// InodeTable's kept names (fusefs/inode_table.hpp): the names seen for an inode the kernel
// forgot come back when it is looked up again with several links, and a guarded name is never
// given up to make room (design §3: once any name of an inode was guarded, the inode carries
// that verdict).
#include "base/unique_fd.hpp"
#include "fusefs/inode_table.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <sys/stat.h>

using guardfs::base::UniqueFd;
using guardfs::fusefs::Inode;
using guardfs::fusefs::InodeTable;

namespace {

struct stat file_stat(ino_t ino, nlink_t links) {
    struct stat st {};

    st.st_dev = 7;
    st.st_ino = ino;
    st.st_mode = S_IFREG | 0644;
    st.st_nlink = links;
    return st;
}

struct stat root_stat() {
    struct stat st {};

    st.st_dev = 7;
    st.st_ino = 2;
    st.st_mode = S_IFDIR | 0755;
    st.st_nlink = 2;
    return st;
}

// Looks the inode up (as with its names seen), then lets the kernel forget it.
void see_and_forget(InodeTable& table, ino_t ino, std::vector<std::string> names) {
    Inode& in = table.acquire(UniqueFd(), file_stat(ino, 2));
    in.names = std::move(names);
    table.forget(table.id_of(in), 1);
}

// The names the inode comes back with, looked up again with two links; then forgotten again.
std::vector<std::string> names_on_return(InodeTable& table, ino_t ino) {
    Inode& in = table.acquire(UniqueFd(), file_stat(ino, 2));
    std::vector<std::string> names = in.names;
    in.names.clear();
    table.forget(table.id_of(in), 1);
    return names;
}

// More forgotten inodes with two names each than the table keeps.
void flood(InodeTable& table, ino_t first) {
    for (ino_t i = 0; i < 5000; ++i) {
        const std::string n = std::to_string(i);
        see_and_forget(table, first + i, {"/w/a" + n, "/w/b" + n});
    }
}

bool holds_env(const std::vector<std::string>& names) {
    for (const std::string& n : names) {
        if (n.ends_with("/.env")) {
            return true;
        }
    }
    return false;
}

} // namespace

TEST_CASE("a forgotten inode's names come back with it, and with one link left they are dropped",
          "[inode-table]") {
    InodeTable table(UniqueFd(), root_stat());
    see_and_forget(table, 100, {"/w/.env", "/w/nb"});
    CHECK(names_on_return(table, 100) == std::vector<std::string>{"/w/.env", "/w/nb"});
    CHECK(names_on_return(table, 100).empty()); // given back once, not kept twice

    see_and_forget(table, 101, {"/w/x", "/w/y"});
    Inode& in = table.acquire(UniqueFd(), file_stat(101, 1));
    CHECK(in.names.empty());
    table.forget(table.id_of(in), 1);
    CHECK(names_on_return(table, 101).empty());
}

TEST_CASE("past the cap the oldest names are given up, but never guarded ones", "[inode-table]") {
    InodeTable table(UniqueFd(), root_stat());
    table.set_guarded_names(holds_env);
    see_and_forget(table, 100, {"/w/.env", "/w/nb"});
    see_and_forget(table, 101, {"/w/notes", "/w/copy"});
    flood(table, 1000);
    // Until 2026-12-07 the guarded names went the way of the others, and nb was writable.
    CHECK(names_on_return(table, 100) == std::vector<std::string>{"/w/.env", "/w/nb"});
    // The cap still holds for the rest: the oldest unguarded ones are gone, the newest kept.
    CHECK(names_on_return(table, 101).empty());
    CHECK(names_on_return(table, 1000).empty());
    CHECK(names_on_return(table, 1000 + 4999) == std::vector<std::string>{"/w/a4999", "/w/b4999"});

    // A pinned entry given back and forgotten again is kept again, and pinned again.
    see_and_forget(table, 100, {"/w/.env", "/w/nb"});
    flood(table, 10000);
    CHECK(names_on_return(table, 100) == std::vector<std::string>{"/w/.env", "/w/nb"});
}

TEST_CASE("without a guard to ask, the cap gives up the oldest names, guarded or not",
          "[inode-table]") {
    // The control for the case above: the flood does reach the guarded entry.
    InodeTable table(UniqueFd(), root_stat());
    see_and_forget(table, 100, {"/w/.env", "/w/nb"});
    flood(table, 1000);
    CHECK(names_on_return(table, 100).empty());
}

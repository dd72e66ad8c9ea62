// Decoding READ and WRITE for the data path that bypasses libfuse's request object
// (fusefs/data_op.hpp: decode_data_op): only a request whose lengths agree with its header is
// taken; anything else is left to libfuse, which checks it again.
#include "fusefs/data_op.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <linux/fuse.h>

using namespace guardfs::fusefs;

namespace {

template <typename Arg>
std::vector<char> request(std::uint32_t opcode, const Arg& arg, const std::string& data = {}) {
    std::vector<char> msg(sizeof(fuse_in_header) + sizeof arg + data.size());
    fuse_in_header h{};
    h.len = static_cast<std::uint32_t>(msg.size());
    h.opcode = opcode;
    h.unique = 42;
    h.nodeid = 7;
    std::memcpy(msg.data(), &h, sizeof h);
    std::memcpy(msg.data() + sizeof h, &arg, sizeof arg);
    std::memcpy(msg.data() + sizeof h + sizeof arg, data.data(), data.size());
    return msg;
}

void set_len(std::vector<char>& msg, std::uint32_t len) {
    std::memcpy(msg.data() + offsetof(fuse_in_header, len), &len, sizeof len);
}

} // namespace

TEST_CASE("a READ decodes to its handle, offset and size", "[fusefs][data]") {
    fuse_read_in in{};
    in.fh = 0x1234'5678'9abc;
    in.offset = (std::uint64_t{1} << 40) + 4096;
    in.size = 131072;
    const auto msg = request(FUSE_READ, in);
    DataOp op;
    op.write = true;
    REQUIRE(decode_data_op(msg.data(), msg.size(), op));
    CHECK_FALSE(op.write);
    CHECK(op.unique == 42);
    CHECK(op.fh == in.fh);
    CHECK(op.offset == in.offset);
    CHECK(op.size == 131072);
    CHECK(op.data == nullptr);
}

TEST_CASE("a WRITE decodes to its data when the header's length covers exactly its size",
          "[fusefs][data]") {
    fuse_write_in in{};
    in.fh = 99;
    in.offset = 5;
    in.size = 3;
    in.write_flags = FUSE_WRITE_KILL_SUIDGID;
    auto msg = request(FUSE_WRITE, in, "abc");
    DataOp op;
    REQUIRE(decode_data_op(msg.data(), msg.size(), op));
    CHECK(op.write);
    CHECK(op.unique == 42);
    CHECK(op.fh == 99);
    CHECK(op.offset == 5);
    CHECK(op.size == 3);
    REQUIRE(op.data == msg.data() + sizeof(fuse_in_header) + sizeof in);
    CHECK(std::string(op.data, 3) == "abc");

    SECTION("an empty write") {
        in.size = 0;
        msg = request(FUSE_WRITE, in);
        REQUIRE(decode_data_op(msg.data(), msg.size(), op));
        CHECK(op.size == 0);
    }
    SECTION("a size larger than the data that came is left to libfuse") {
        in.size = 4;
        msg = request(FUSE_WRITE, in, "abc");
        CHECK_FALSE(decode_data_op(msg.data(), msg.size(), op));
    }
    SECTION("a size smaller than the data that came is left to libfuse") {
        in.size = 2;
        msg = request(FUSE_WRITE, in, "abc");
        CHECK_FALSE(decode_data_op(msg.data(), msg.size(), op));
    }
    SECTION("a header whose length is not the bytes read is left to libfuse") {
        set_len(msg, static_cast<std::uint32_t>(msg.size() + 1));
        CHECK_FALSE(decode_data_op(msg.data(), msg.size(), op));
        set_len(msg, static_cast<std::uint32_t>(msg.size() - 1));
        CHECK_FALSE(decode_data_op(msg.data(), msg.size() - 1, op));
    }
}

TEST_CASE("truncated requests and other opcodes are not data requests", "[fusefs][data]") {
    DataOp op;
    fuse_read_in rd{};
    rd.size = 10;
    auto msg = request(FUSE_READ, rd);
    SECTION("shorter than a header") {
        CHECK_FALSE(decode_data_op(msg.data(), sizeof(fuse_in_header) - 1, op));
        CHECK_FALSE(decode_data_op(msg.data(), 0, op));
    }
    SECTION("a READ without its whole argument") {
        msg.resize(msg.size() - 1);
        set_len(msg, static_cast<std::uint32_t>(msg.size()));
        CHECK_FALSE(decode_data_op(msg.data(), msg.size(), op));
    }
    SECTION("a WRITE without its whole argument") {
        fuse_write_in wr{};
        msg = request(FUSE_WRITE, wr);
        msg.resize(msg.size() - 1);
        set_len(msg, static_cast<std::uint32_t>(msg.size()));
        CHECK_FALSE(decode_data_op(msg.data(), msg.size(), op));
    }
    SECTION("GETATTR, OPEN, FSYNC, COPY_FILE_RANGE go to libfuse") {
        fuse_getattr_in ga{};
        msg = request(FUSE_GETATTR, ga);
        CHECK_FALSE(decode_data_op(msg.data(), msg.size(), op));
        fuse_open_in oi{};
        msg = request(FUSE_OPEN, oi);
        CHECK_FALSE(decode_data_op(msg.data(), msg.size(), op));
        fuse_fsync_in fs{};
        msg = request(FUSE_FSYNC, fs);
        CHECK_FALSE(decode_data_op(msg.data(), msg.size(), op));
        fuse_copy_file_range_in cf{};
        msg = request(FUSE_COPY_FILE_RANGE, cf);
        CHECK_FALSE(decode_data_op(msg.data(), msg.size(), op));
    }
}

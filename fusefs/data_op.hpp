// The data path without libfuse's request object (issue #6: no allocation on the read/write
// path): a READ or WRITE decoded from the bytes the kernel sent, for a data server to serve
// (fusefs/channel.hpp: serve_data_ops). No libfuse here, so it can be tested alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

namespace guardfs::fusefs {

// libfuse allocates an object for every request it serves (calloc, a mutex, a lock of the
// session's list of requests) and, on /dev/fuse, a buffer for every reply of file data it does
// not splice. READ and WRITE, the requests of the data path, are decoded here instead and served
// by a data server without either (fusefs/channel.hpp: serve_data_ops); their replies go into the
// ring entry, or on /dev/fuse from the buffer the request came in. Nothing libfuse does for them
// is lost: it would pass both to the read and write_buf handlers unchanged (it lets them through
// even its allow_root check), and an INTERRUPT the kernel sends for one is answered EAGAIN by
// libfuse's next request, so the kernel sends it again only while the request is outstanding.
// (libfuse keeps such an INTERRUPT, allocated, until then: only requests that were interrupted.)
struct DataOp {
    std::uint64_t unique = 0; // the request's, for its reply
    bool write = false;
    std::uint64_t fh = 0; // the handle the OPEN or CREATE reply gave
    std::uint64_t offset = 0;
    std::uint32_t size = 0;     // bytes to read, or bytes of `data` to write
    const char* data = nullptr; // WRITE: the bytes
};

// What a data server returns to leave a request to libfuse's handlers after all.
inline constexpr std::int64_t kNotServed = std::numeric_limits<std::int64_t>::min();

// Serves `op`, in the thread that read the request (request_kills_setid() is about it): a READ
// reads at most op.size bytes into `buffer`, a WRITE writes op.data (`buffer` is empty). Returns
// the bytes read or written, a negative errno, or kNotServed.
using DataServer = std::int64_t (*)(void* arg, const DataOp& op, std::span<char> buffer) noexcept;

// Decodes `msg` (`len` bytes: fuse_in_header and its arguments) as a READ or a WRITE whose
// lengths agree with its header; false for any other request, which libfuse then serves.
bool decode_data_op(const char* msg, std::size_t len, DataOp& op) noexcept;

} // namespace guardfs::fusefs

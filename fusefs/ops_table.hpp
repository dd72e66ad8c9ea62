// The one table of FUSE slots and the only way to fill them (style guide B.6).
//
// Every slot of libfuse 3.14's fuse_lowlevel_ops has a class here. A slot classed Gated can only
// be given a GatedHandler, which only gated<Slot, Build, Body>() can make: its trampoline builds
// the guard::Request, asks the gate once, answers EACCES on a refusal, and runs the body only on
// an allow. Wiring a raw function or a PassHandler into a write slot does not compile.
// Handle slots (data writes) run with the grant stored at open: FileHandle::write_fd().
#pragma once

#include "fusefs/fs.hpp"
#include "guard/request.hpp"

#include <fuse_lowlevel.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>

namespace guardfs::fusefs {

enum class SlotClass : unsigned char {
    Lifecycle, // init, destroy
    Pass,      // reads and housekeeping: no gate (the read face filters inside, design §8)
    Gated,     // can change the tree: one gate decision before the disk is touched
    Handle,    // writes data through a handle: the grant made when it was opened
    Unset,     // left null on purpose (libfuse answers ENOSYS)
};

// X(slot, class), in the order of struct fuse_lowlevel_ops (libfuse 3.14, FUSE_USE_VERSION 314).
#define GUARDFS_FUSE_SLOTS(X)                                                                      \
    X(init, Lifecycle)                                                                             \
    X(destroy, Lifecycle)                                                                          \
    X(lookup, Pass)                                                                                \
    X(forget, Pass)                                                                                \
    X(getattr, Pass)                                                                               \
    X(setattr, Gated)                                                                              \
    X(readlink, Pass)                                                                              \
    X(mknod, Gated)                                                                                \
    X(mkdir, Gated)                                                                                \
    X(unlink, Gated)                                                                               \
    X(rmdir, Gated)                                                                                \
    X(symlink, Gated)                                                                              \
    X(rename, Gated)                                                                               \
    X(link, Gated)                                                                                 \
    X(open, Gated)                                                                                 \
    X(read, Pass)                                                                                  \
    X(write, Unset) /* write_buf serves every write */                                             \
    X(flush, Pass)                                                                                 \
    X(release, Pass)                                                                               \
    X(fsync, Pass)                                                                                 \
    X(opendir, Pass)                                                                               \
    X(readdir, Pass)                                                                               \
    X(releasedir, Pass)                                                                            \
    X(fsyncdir, Pass)                                                                              \
    X(statfs, Pass)                                                                                \
    X(setxattr, Gated)                                                                             \
    X(getxattr, Pass)                                                                              \
    X(listxattr, Pass)                                                                             \
    X(removexattr, Gated)                                                                          \
    X(access, Pass)                                                                                \
    X(create, Gated)                                                                               \
    X(getlk, Unset)                                                                                \
    X(setlk, Unset)                                                                                \
    X(bmap, Unset)                                                                                 \
    X(ioctl, Unset) /* never passed: nothing that can change flags goes unjudged */                \
    X(poll, Unset)                                                                                 \
    X(write_buf, Handle)                                                                           \
    X(retrieve_reply, Unset)                                                                       \
    X(forget_multi, Pass)                                                                          \
    X(flock, Unset)                                                                                \
    X(fallocate, Handle)                                                                           \
    X(readdirplus, Pass)                                                                           \
    X(copy_file_range, Handle)                                                                     \
    X(lseek, Pass)

enum class Slot : unsigned char {
#define GUARDFS_SLOT_ENUM(name, cls) name,
    GUARDFS_FUSE_SLOTS(GUARDFS_SLOT_ENUM)
#undef GUARDFS_SLOT_ENUM
};

struct SlotInfo {
    std::string_view name;
    SlotClass cls;
};

inline constexpr std::array<SlotInfo, 44> kSlots{{
#define GUARDFS_SLOT_INFO(name, cls) {#name, SlotClass::cls},
    GUARDFS_FUSE_SLOTS(GUARDFS_SLOT_INFO)
#undef GUARDFS_SLOT_INFO
}};

// A libfuse upgrade that adds a slot breaks the build here until the slot is classified.
static_assert(sizeof(fuse_lowlevel_ops) == kSlots.size() * sizeof(void (*)()),
              "fuse_lowlevel_ops changed: classify every slot in GUARDFS_FUSE_SLOTS");

template <Slot S>
struct SlotTraits;

#define GUARDFS_SLOT_TRAITS(slot, klass)                                                           \
    template <>                                                                                    \
    struct SlotTraits<Slot::slot> {                                                                \
        using Fn = decltype(fuse_lowlevel_ops::slot);                                              \
        static constexpr auto member = &fuse_lowlevel_ops::slot;                                   \
        static constexpr SlotClass cls = SlotClass::klass;                                         \
    };
GUARDFS_FUSE_SLOTS(GUARDFS_SLOT_TRAITS)
#undef GUARDFS_SLOT_TRAITS

// What a gated operation's build step hands its body: the request the gate judges, and scratch
// the two share (so nothing is looked up twice).
struct Prepared {
    guard::Request request;
    bool judge = true; // false: this call changes nothing (e.g. an open for reading)
    int flags = 0;
    std::uint64_t settled = 0; // the gate's Decision::settled (remember_settled)

    struct stat st {};

    // A rename onto a git config judged by the content read from `judged` (attach_git_config):
    // that file, sealed against writers until the request is done, is what lands.
    base::UniqueFd judged;
    std::unique_ptr<WriteSeal> seal;

    // The inode's Inode::landings, read before its names (add_inode_target).
    std::optional<std::uint32_t> landings;
};

Fs& fs_of(fuse_req_t req) noexcept;

// The gate: the only function that asks the guard about a write. Fills in the caller from the
// FUSE request. Never throws; any failure is a refusal.
guard::Decision check(Fs& fs, fuse_req_t req, guard::Request& request) noexcept;

template <Slot S>
class GatedHandler {
public:
    using Fn = typename SlotTraits<S>::Fn;

    [[nodiscard]] constexpr Fn fn() const noexcept { return fn_; }

private:
    template <Slot, auto, auto, typename>
    friend struct Gated;

    constexpr explicit GatedHandler(Fn f) noexcept : fn_(f) {}

    Fn fn_;
};

template <Slot S>
struct PassHandler {
    typename SlotTraits<S>::Fn fn;
};

template <Slot S>
struct HandleHandler {
    typename SlotTraits<S>::Fn fn;
};

// Whether a build failed because a target's path cannot be spelled (deeper than PATH_MAX, or
// no longer under the workspace): the target was added without a view.
inline bool unplaceable(int err, const Prepared& p) noexcept {
    return (err == ENAMETOOLONG || err == EXDEV) && !p.request.targets.empty() &&
           p.request.targets.back().views.empty();
}

// A target whose landing cannot be determined is denied (design §3, fail closed), through the
// gate so that the refusal is audited like any other. Returns EACCES.
int refuse_unplaceable(Fs& fs, fuse_req_t req, Prepared& p) noexcept;

// The gated trampoline: build, one gate decision, body. Build returns 0 or an errno; a
// refusal replies EACCES; the body replies exactly once. Nothing throws into libfuse.
template <Slot S, auto Build, auto Body, typename Fn = typename SlotTraits<S>::Fn>
struct Gated;

template <Slot S, auto Build, auto Body, typename... A>
struct Gated<S, Build, Body, void (*)(fuse_req_t, A...)> {
    static void fn(fuse_req_t req, A... a) noexcept {
        Fs& fs = fs_of(req);
        try {
            Prepared p;
            if (const int err = Build(fs, req, p, a...); err != 0) {
                fuse_reply_err(req, unplaceable(err, p) ? refuse_unplaceable(fs, req, p) : err);
                return;
            }
            if (p.judge) {
                const guard::Decision d = check(fs, req, p.request);
                if (!d.allowed()) {
                    fuse_reply_err(req, EACCES);
                    return;
                }
                p.settled = d.settled;
            }
            Body(fs, req, p, a...);
        } catch (const std::bad_alloc&) {
            fuse_reply_err(req, ENOMEM);
        } catch (...) {
            fuse_reply_err(req, EIO);
        }
    }

    static constexpr GatedHandler<S> handler() noexcept { return GatedHandler<S>(&fn); }
};

template <Slot S, auto Build, auto Body>
constexpr GatedHandler<S> gated() noexcept {
    return Gated<S, Build, Body>::handler();
}

// Pass and Handle trampolines: the body alone, behind the same no-exception wall.
template <Slot S, auto Body, typename Fn = typename SlotTraits<S>::Fn>
struct Guarded;

template <Slot S, auto Body, typename R, typename... A>
struct Guarded<S, Body, R (*)(A...)> {
    static R fn(A... a) noexcept {
        try {
            return Body(a...);
        } catch (...) {
            if constexpr (std::is_same_v<R, void>) {
                if constexpr (sizeof...(A) > 0 &&
                              std::is_same_v<std::tuple_element_t<0, std::tuple<A...>>,
                                             fuse_req_t>) {
                    reply_internal_error(std::get<0>(std::tuple<A...>(a...)));
                }
            }
        }
        if constexpr (!std::is_same_v<R, void>) {
            return R{};
        }
    }

    static void reply_internal_error(fuse_req_t req) noexcept { fuse_reply_err(req, EIO); }
};

template <Slot S, auto Body>
constexpr PassHandler<S> pass() noexcept {
    return PassHandler<S>{&Guarded<S, Body>::fn};
}

template <Slot S, auto Body>
constexpr HandleHandler<S> handle() noexcept {
    return HandleHandler<S>{&Guarded<S, Body>::fn};
}

template <Slot S>
void set_slot(fuse_lowlevel_ops& ops, GatedHandler<S> h) noexcept {
    static_assert(SlotTraits<S>::cls == SlotClass::Gated, "not a gated slot");
    ops.*SlotTraits<S>::member = h.fn();
}

template <Slot S>
void set_slot(fuse_lowlevel_ops& ops, PassHandler<S> h) noexcept {
    static_assert(SlotTraits<S>::cls == SlotClass::Pass ||
                      SlotTraits<S>::cls == SlotClass::Lifecycle,
                  "a write slot cannot take a pass-through handler");
    ops.*SlotTraits<S>::member = h.fn;
}

template <Slot S>
void set_slot(fuse_lowlevel_ops& ops, HandleHandler<S> h) noexcept {
    static_assert(SlotTraits<S>::cls == SlotClass::Handle, "not a handle slot");
    ops.*SlotTraits<S>::member = h.fn;
}

// Every slot, filled as its class says. Defined in ops_table.cpp.
fuse_lowlevel_ops make_ops() noexcept;

} // namespace guardfs::fusefs

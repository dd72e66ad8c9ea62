// base::Result<T> and base::Status: the in-module failure channel (style guide B.4, layer 2).
// std::expected needs C++23 on g++ 12, so this is a small stand-in with the same method names,
// so that a later move is a search-and-replace.
#pragma once

#include "base/error.hpp"

#include <cassert>
#include <optional>
#include <utility>
#include <variant>

namespace guardfs::base {

// Wraps an Error so that Result<T> can be built from it unambiguously.
struct Unexpected {
    Error error;
};

inline Unexpected fail(ErrorCode code, std::string message, int sys_errno = 0) {
    return Unexpected{Error{code, std::move(message), sys_errno, std::nullopt}};
}

template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}

    Result(Unexpected u) : v_(std::in_place_index<1>, std::move(u.error)) {}

    [[nodiscard]] bool has_value() const noexcept { return v_.index() == 0; }

    explicit operator bool() const noexcept { return has_value(); }

    T& value() & {
        assert(has_value());
        return std::get<0>(v_);
    }

    const T& value() const& {
        assert(has_value());
        return std::get<0>(v_);
    }

    T&& value() && {
        assert(has_value());
        return std::get<0>(std::move(v_));
    }

    T* operator->() { return &value(); }

    const T* operator->() const { return &value(); }

    T& operator*() & { return value(); }

    const T& operator*() const& { return value(); }

    [[nodiscard]] const Error& error() const {
        assert(!has_value());
        return std::get<1>(v_);
    }

private:
    std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;

    Result(Unexpected u) : err_(std::move(u.error)) {}

    [[nodiscard]] bool has_value() const noexcept { return !err_.has_value(); }

    explicit operator bool() const noexcept { return has_value(); }

    [[nodiscard]] const Error& error() const {
        assert(err_.has_value());
        return *err_;
    }

private:
    std::optional<Error> err_;
};

using Status = Result<void>;

} // namespace guardfs::base

// The error vocabulary shared by every module (style guide B.4, layer 2).
// An Error says which step failed, on what, and where in a policy file when it came from one.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace guardfs::base {

enum class ErrorCode : std::uint8_t {
    PatternEmpty,
    PatternTildeAnchored,
    PatternDotSegment,
    PatternNul,
    YamlSyntax,
    YamlType,
    YamlUnknownKey,
    YamlDuplicateKey,
    YamlBadValue,
    PolicyIo,
    PolicyInvalid,
    DataRootStraddled,
    DataRootBad,
    AgentConfigDirBad,
    CanonicalizeFailed,
    Io,
    Usage,
    ApproverFailed,
    ApproverTimeout,
    Internal,
};

// Where in a file an error was found; line and column are 1-based.
struct Location {
    std::string file;
    int line = 0;
    int column = 0;
};

struct Error {
    ErrorCode code = ErrorCode::Internal;
    std::string message;
    int sys_errno = 0;
    std::optional<Location> location;

    // "file:line:column: message" when there is a location, else the message.
    [[nodiscard]] std::string to_string() const;
};

const char* to_string(ErrorCode code) noexcept;

std::ostream& operator<<(std::ostream& os, const Error& e);

} // namespace guardfs::base

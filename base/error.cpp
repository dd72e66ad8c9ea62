// Printing of base::Error; see error.hpp.
#include "base/error.hpp"

#include <fmt/format.h>

namespace guardfs::base {

std::string Error::to_string() const {
    if (location) {
        return fmt::format("{}:{}:{}: {}", location->file, location->line, location->column,
                           message);
    }
    return message;
}

const char* to_string(ErrorCode code) noexcept {
    switch (code) {
    case ErrorCode::PatternEmpty:
        return "PatternEmpty";
    case ErrorCode::PatternTildeAnchored:
        return "PatternTildeAnchored";
    case ErrorCode::PatternDotSegment:
        return "PatternDotSegment";
    case ErrorCode::PatternNul:
        return "PatternNul";
    case ErrorCode::YamlSyntax:
        return "YamlSyntax";
    case ErrorCode::YamlType:
        return "YamlType";
    case ErrorCode::YamlUnknownKey:
        return "YamlUnknownKey";
    case ErrorCode::YamlDuplicateKey:
        return "YamlDuplicateKey";
    case ErrorCode::YamlBadValue:
        return "YamlBadValue";
    case ErrorCode::PolicyIo:
        return "PolicyIo";
    case ErrorCode::PolicyInvalid:
        return "PolicyInvalid";
    case ErrorCode::DataRootStraddled:
        return "DataRootStraddled";
    case ErrorCode::DataRootBad:
        return "DataRootBad";
    case ErrorCode::AgentConfigDirBad:
        return "AgentConfigDirBad";
    case ErrorCode::CanonicalizeFailed:
        return "CanonicalizeFailed";
    case ErrorCode::Io:
        return "Io";
    case ErrorCode::Usage:
        return "Usage";
    case ErrorCode::ApproverFailed:
        return "ApproverFailed";
    case ErrorCode::ApproverTimeout:
        return "ApproverTimeout";
    case ErrorCode::Internal:
        return "Internal";
    }
    return "?";
}

std::ostream& operator<<(std::ostream& os, const Error& e) {
    return os << to_string(e.code) << ": " << e.to_string();
}

} // namespace guardfs::base

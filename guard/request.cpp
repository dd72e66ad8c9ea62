// Printing of views and decisions; see request.hpp.
#include "guard/request.hpp"

namespace guardfs::guard {

const char* to_string(View v) noexcept {
    switch (v) {
    case View::None:
        return "none";
    case View::Spelled:
        return "spelled";
    case View::Canonical:
        return "canonical";
    case View::OtherName:
        return "other-name";
    case View::LinkTarget:
        return "link-target";
    case View::LinkTargetCanonical:
        return "link-target-canonical";
    case View::Identity:
        return "identity";
    }
    return "none";
}

const char* to_string(Role r) noexcept {
    switch (r) {
    case Role::Only:
        return "target";
    case Role::RenameSource:
        return "source";
    case Role::RenameDestination:
        return "destination";
    case Role::NewName:
        return "new-name";
    case Role::ExistingNames:
        return "existing";
    case Role::LinkTarget:
        return "link-target";
    }
    return "target";
}

std::ostream& operator<<(std::ostream& os, View v) {
    return os << to_string(v);
}

std::ostream& operator<<(std::ostream& os, const Decision& d) {
    os << to_string(d.verdict) << " rule='" << d.rule << "' tier=" << to_string(d.tier)
       << " view=" << to_string(d.view) << " reading=" << patterns::to_string(d.reading)
       << " path='" << d.path << "'";
    if (!d.exempt_root.empty()) {
        os << " exempt='" << d.exempt_root << "'";
    }
    return os << " reason='" << d.reason << "'";
}

} // namespace guardfs::guard

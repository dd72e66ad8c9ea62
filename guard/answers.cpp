// Remembered answers; see answers.hpp.
#include "guard/answers.hpp"

#include <mutex>

namespace guardfs::guard {

using patterns::AnswerScope;
using patterns::StoredAnswer;

bool covers(const StoredAnswer& a, std::string_view path, std::string_view rule,
            Tier tier) noexcept {
    switch (a.scope) {
    case AnswerScope::Path:
        return a.path == path;
    case AnswerScope::Dir: {
        // The entries of that directory that the same row asks about: not the directory itself
        // (its chmod, or a rename that takes it out from under the row), nor what other rows
        // guard there (an answer given for `mkdir .claude` is not one for `CLAUDE.md`).
        if (a.rule != rule || a.tier != tier) {
            return false;
        }
        const auto slash = path.rfind('/');
        if (slash == std::string_view::npos) {
            return false;
        }
        const std::string_view parent = slash == 0 ? std::string_view("/") : path.substr(0, slash);
        return parent == a.path;
    }
    case AnswerScope::Rule:
        return a.rule == rule && a.tier == tier;
    }
    return false;
}

AnswerStore::AnswerStore(std::vector<StoredAnswer> persisted)
    : persisted_(std::move(persisted))
    , count_(persisted_.size()) {}

std::optional<StoredAnswer> AnswerStore::find(std::string_view path, std::string_view rule,
                                              Tier tier) const {
    if (empty()) {
        return std::nullopt;
    }
    std::shared_lock<std::shared_mutex> lock(mu_);
    std::optional<StoredAnswer> allow;
    for (const auto* list : {&mount_, &persisted_}) {
        for (const auto& a : *list) {
            if (!covers(a, path, rule, tier)) {
                continue;
            }
            if (a.verdict == Verdict::Deny) {
                return a;
            }
            if (!allow) {
                allow = a;
            }
        }
    }
    return allow;
}

void AnswerStore::replace_persisted(std::vector<StoredAnswer> persisted) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    persisted_ = std::move(persisted);
    count_ = mount_.size() + persisted_.size();
}

std::vector<StoredAnswer> AnswerStore::remember(StoredAnswer a, bool persist) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    auto& list = persist ? persisted_ : mount_;
    for (const auto& x : list) {
        if (x.verdict == a.verdict && x.scope == a.scope && x.path == a.path && x.rule == a.rule &&
            x.tier == a.tier) {
            return persist ? persisted_ : std::vector<StoredAnswer>{};
        }
    }
    list.push_back(std::move(a));
    count_ = mount_.size() + persisted_.size();
    return persist ? persisted_ : std::vector<StoredAnswer>{};
}

} // namespace guardfs::guard

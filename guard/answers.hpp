// Remembered answers (design §6): scoped to a path, its directory, or the rule that asked; kept
// for this mount or persisted to the allow file. Consulted only for an ask, on the same view the
// rule asked on, by exact bytes: a remembered allow never lifts a deny, and a folded or other
// spelling is not granted. A remembered deny wins over a remembered allow.
#pragma once

#include "guard/request.hpp"
#include "patterns/answers_yaml.hpp"

#include <atomic>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

namespace guardfs::guard {

class AnswerStore {
public:
    AnswerStore() = default;

    // Answers loaded from the allow file; they are persisted ones.
    explicit AnswerStore(std::vector<patterns::StoredAnswer> persisted);

    // The remembered answer for an ask by (rule, tier) on path, if any. Thread-safe.
    [[nodiscard]] std::optional<patterns::StoredAnswer>
    find(std::string_view path, std::string_view rule, Tier tier) const;

    // Remembers an answer; returns the persisted list to write when `persist` (else empty).
    std::vector<patterns::StoredAnswer> remember(patterns::StoredAnswer a, bool persist);

    // Replaces the persisted answers with the allow file's (a reload): the user may have edited
    // it, and the next persist writes this list back. Answers remembered for the mount stay.
    void replace_persisted(std::vector<patterns::StoredAnswer> persisted);

    [[nodiscard]] bool empty() const noexcept { return count_.load() == 0; }

    [[nodiscard]] std::size_t size() const noexcept { return count_.load(); }

private:
    mutable std::shared_mutex mu_;
    std::vector<patterns::StoredAnswer> mount_;     // protected by mu_
    std::vector<patterns::StoredAnswer> persisted_; // protected by mu_
    std::atomic<std::size_t> count_{0};
};

// True when the answer's scope covers (path, rule, tier): exact bytes throughout.
bool covers(const patterns::StoredAnswer& a, std::string_view path, std::string_view rule,
            Tier tier) noexcept;

} // namespace guardfs::guard

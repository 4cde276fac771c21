#pragma once
// "Did you mean ...?": the candidate nearest to a misspelt key, table or choice.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace lowcomm::config_detail {

// Levenshtein distance (insertions, deletions, substitutions) between byte strings.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate with the smallest edit distance to `wrong`, if it is close enough to be a likely
// typo (a third of the length, at least 2), or if it ends in the same last path segment (a key
// written in the wrong table). Ties go to the earlier candidate.
std::optional<std::string> nearest(std::string_view wrong, std::span<const std::string> candidates);

// When nothing is close: what the deepest table of `wrong` that exists does hold, e.g.
// "[network] has: mode, scenario, ..." (or "the top level has: ..."), from the full key paths.
std::string what_is_there(std::string_view wrong, std::span<const std::string> keys);

}  // namespace lowcomm::config_detail

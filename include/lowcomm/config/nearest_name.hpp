#pragma once
// "Did you mean ...?" for names a user types: the candidate nearest to a misspelt one, as the
// configuration's own messages suggest keys and choices (a subcommand, a compressor name, ...).
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace lowcomm {

// The candidate with the smallest edit distance to `wrong` when it is close enough to be a likely
// typo (a third of the length, at least 2); ties go to the earlier candidate. nullopt otherwise.
std::optional<std::string> nearest_name(std::string_view wrong, std::span<const std::string> candidates);

}  // namespace lowcomm

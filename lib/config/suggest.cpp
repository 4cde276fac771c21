#include "suggest.hpp"

#include "lowcomm/config/nearest_name.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace lowcomm::config_detail {

namespace {

std::string_view last_segment(std::string_view path) {
  const std::size_t dot = path.rfind('.');
  return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // One row of the dynamic-programming table: row[j] is the distance of a[0, i) to b[0, j).
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitution});
    }
  }
  return row[b.size()];
}

std::optional<std::string> nearest(std::string_view wrong,
                                   std::span<const std::string> candidates) {
  const std::size_t typo_limit = std::max<std::size_t>(2, wrong.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const std::string& candidate : candidates) {
    const std::size_t distance = edit_distance(wrong, candidate);
    const bool plausible =
        distance <= typo_limit || last_segment(candidate) == last_segment(wrong);
    if (plausible && (!best || distance < best_distance)) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

std::string what_is_there(std::string_view wrong, std::span<const std::string> keys) {
  std::string_view table = wrong;
  while (true) {
    const std::size_t dot = table.rfind('.');
    table = dot == std::string_view::npos ? std::string_view() : table.substr(0, dot);
    std::vector<std::string> children;
    for (const std::string& key : keys) {
      std::string_view rest = key;
      if (!table.empty()) {
        if (!rest.starts_with(table) || rest.size() <= table.size() || rest[table.size()] != '.') continue;
        rest.remove_prefix(table.size() + 1);
      }
      std::string child(rest.substr(0, rest.find('.')));
      if (std::find(children.begin(), children.end(), child) == children.end()) children.push_back(std::move(child));
    }
    if (!children.empty()) {
      std::sort(children.begin(), children.end());
      return fmt::format("{} has: {}", table.empty() ? std::string("the top level") : fmt::format("[{}]", table),
                         fmt::join(children, ", "));
    }
    if (table.empty()) return {};
  }
}

}  // namespace lowcomm::config_detail

namespace lowcomm {

std::optional<std::string> nearest_name(std::string_view wrong, std::span<const std::string> candidates) {
  return config_detail::nearest(wrong, candidates);
}

}  // namespace lowcomm

#include "path.hpp"

#include <algorithm>

namespace lowcomm::config_detail {

namespace {

bool is_number(std::string_view segment) {
  return !segment.empty() &&
         std::all_of(segment.begin(), segment.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool segment_matches(std::string_view pattern, std::string_view concrete) {
  return pattern == "*" ? is_bare_segment(concrete) : pattern == concrete;
}

bool segments_overlap(std::string_view a, std::string_view b) {
  return a == "*" || b == "*" || a == b;
}

// Numbers compare by value without parsing (they may exceed 64 bits): fewer significant digits
// is smaller; equal values written differently ("3", "03") fall back to the text.
bool segment_less(std::string_view a, std::string_view b) {
  const bool a_number = is_number(a);
  const bool b_number = is_number(b);
  if (a_number != b_number) return a_number;
  if (a_number) {
    const auto a_digits = a.substr(std::min(a.find_first_not_of('0'), a.size()));
    const auto b_digits = b.substr(std::min(b.find_first_not_of('0'), b.size()));
    if (a_digits.size() != b_digits.size()) return a_digits.size() < b_digits.size();
    if (a_digits != b_digits) return a_digits < b_digits;
  }
  return a < b;
}

}  // namespace

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> segments;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    segments.push_back(path.substr(start, dot - start));
    if (dot == std::string_view::npos) return segments;
    start = dot + 1;
  }
}

std::string join_path(const std::vector<std::string_view>& segments) {
  std::string path;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    if (i > 0) path += '.';
    path += segments[i];
  }
  return path;
}

bool is_bare_segment(std::string_view segment) {
  return !segment.empty() && std::all_of(segment.begin(), segment.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-';
  });
}

bool is_concrete_path(std::string_view path) {
  const auto segments = split_path(path);
  return std::all_of(segments.begin(), segments.end(), is_bare_segment);
}

bool has_wildcard(std::string_view pattern) { return wildcard_count(pattern) > 0; }

std::size_t wildcard_count(std::string_view pattern) {
  const auto segments = split_path(pattern);
  return static_cast<std::size_t>(std::count(segments.begin(), segments.end(), "*"));
}

bool matches(std::string_view pattern, std::string_view concrete) {
  const auto p = split_path(pattern);
  const auto c = split_path(concrete);
  return p.size() == c.size() && std::equal(p.begin(), p.end(), c.begin(), segment_matches);
}

bool is_table_of(std::string_view pattern, std::string_view concrete) {
  const auto p = split_path(pattern);
  const auto c = split_path(concrete);
  return c.size() < p.size() && std::equal(c.begin(), c.end(), p.begin(), [](auto cs, auto ps) {
           return segment_matches(ps, cs);
         });
}

bool overlaps(std::string_view a, std::string_view b) {
  const auto as = split_path(a);
  const auto bs = split_path(b);
  const std::size_t common = std::min(as.size(), bs.size());
  return std::equal(as.begin(), as.begin() + common, bs.begin(), segments_overlap);
}

std::string instantiate(std::string_view pattern, std::string_view concrete) {
  auto p = split_path(pattern);
  const auto c = split_path(concrete);
  for (std::size_t i = 0; i < p.size() && i < c.size(); ++i) {
    if (p[i] == "*" && is_bare_segment(c[i])) p[i] = c[i];
  }
  return join_path(p);
}

bool path_less(std::string_view a, std::string_view b) {
  const auto as = split_path(a);
  const auto bs = split_path(b);
  return std::lexicographical_compare(as.begin(), as.end(), bs.begin(), bs.end(), segment_less);
}

}  // namespace lowcomm::config_detail

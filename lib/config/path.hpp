#pragma once
// Dotted configuration paths ("network.rank.3.upload_mbps") and the wildcard patterns of schema
// keys ("network.rank.*.upload_mbps"): splitting, matching, and the order they are listed in.
#include <string>
#include <string_view>
#include <vector>

namespace lowcomm::config_detail {

// Segments between dots; empty segments are kept so that malformed paths can be rejected.
std::vector<std::string_view> split_path(std::string_view path);
std::string join_path(const std::vector<std::string_view>& segments);

// A segment a concrete path may use, and so the only thing a wildcard can match: [A-Za-z0-9_-]+.
// It is also exactly what TOML accepts as a bare key, which keeps to_toml() free of quoting.
bool is_bare_segment(std::string_view segment);
bool is_concrete_path(std::string_view path);
bool has_wildcard(std::string_view pattern);
std::size_t wildcard_count(std::string_view pattern);

// The concrete path is an instance of the pattern (same number of segments).
bool matches(std::string_view pattern, std::string_view concrete);
// The concrete path names a table that holds keys of the pattern (a proper prefix of it).
bool is_table_of(std::string_view pattern, std::string_view concrete);
// The two patterns could name the same concrete path, or one a table that holds the other.
bool overlaps(std::string_view a, std::string_view b);

// The pattern with each wildcard replaced by the segment the concrete path has at that position
// (where it has one), e.g. for suggesting "network.rank.3.upload_mbps" to "network.rank.3.x".
std::string instantiate(std::string_view pattern, std::string_view concrete);

// Segment by segment, numeric segments by value and before names, so that rank 10 follows rank 9.
bool path_less(std::string_view a, std::string_view b);

}  // namespace lowcomm::config_detail

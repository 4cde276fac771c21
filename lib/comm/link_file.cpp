#include "lowcomm/comm/link_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <string_view>

#include "lowcomm/error.hpp"

namespace lowcomm {

namespace {

constexpr std::string_view kHeader = "source,destination,latency_ms,bandwidth_mbps";
constexpr const char* kFields[] = {"source", "destination", "latency_ms", "bandwidth_mbps"};

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> fields;
  for (std::size_t start = 0;;) {
    const std::size_t comma = line.find(',', start);
    fields.push_back(trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

}  // namespace

std::vector<PairLinkEntry> read_link_file(const std::filesystem::path& file, int world_size) {
  std::ifstream in(file);
  if (!in) {
    throw ConfigError(fmt::format("network.links: cannot read {}: give the path of a links file (docs/network-model.md)",
                                  file.string()));
  }
  auto fail = [&](int line, const std::string& what) -> ConfigError {
    return ConfigError(fmt::format("network.links {}:{}: {}", file.string(), line, what));
  };
  std::vector<PairLinkEntry> entries;
  std::map<std::pair<int, int>, int> first_line;
  bool header = false;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    const std::string_view content = trim(text);
    if (content.empty() || content.front() == '#') continue;
    const std::vector<std::string_view> fields = split(content);
    if (!header) {
      const bool named = std::ranges::equal(fields, kFields, [](std::string_view a, std::string_view b) { return a == b; });
      if (!named) throw fail(line, fmt::format("the first line must be the header '{}', not '{}'", kHeader, content));
      header = true;
      continue;
    }
    if (fields.size() != 4) {
      throw fail(line, fmt::format("{} fields where the header has 4 ({})", fields.size(), kHeader));
    }
    int ranks[2] = {-1, -1};
    for (int f = 0; f < 2; ++f) {
      const std::string_view field = fields[static_cast<std::size_t>(f)];
      const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), ranks[f]);
      if (error != std::errc() || end != field.data() + field.size() || ranks[f] < 0 || ranks[f] >= world_size) {
        throw fail(line, fmt::format("{} = '{}' is not a rank of this {}-rank job (0 to {})", kFields[f], field,
                                     world_size, world_size - 1));
      }
    }
    double values[2] = {0, 0};
    for (int f = 2; f < 4; ++f) {
      const std::string_view field = fields[static_cast<std::size_t>(f)];
      const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), values[f - 2]);
      const double v = values[f - 2];
      const bool valid = error == std::errc() && end == field.data() + field.size() && std::isfinite(v) &&
                         (f == 2 ? v >= 0 : v > 0);
      if (!valid) {
        throw fail(line, fmt::format("{} = '{}' must be a {} number", kFields[f], field, f == 2 ? "finite, >= 0," : "positive"));
      }
    }
    if (ranks[0] == ranks[1]) throw fail(line, fmt::format("source and destination are both rank {}", ranks[0]));
    const auto [previous, fresh] = first_line.try_emplace({ranks[0], ranks[1]}, line);
    if (!fresh) {
      throw fail(line, fmt::format("the pair {} -> {} is listed already (line {})", ranks[0], ranks[1], previous->second));
    }
    entries.push_back({ranks[0], ranks[1], PairLink{.latency_s = values[0] / 1e3, .bytes_per_s = mbps(values[1])}});
  }
  if (!header) throw fail(1, fmt::format("no header: the file must start with '{}'", kHeader));
  return entries;
}

}  // namespace lowcomm

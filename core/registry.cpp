#include "lowcomm/core/registry.hpp"

#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <utility>

#include "lowcomm/error.hpp"

namespace lowcomm {

namespace {

constexpr std::string_view kBuiltIn = "built in";

// Plug-ins load on the main thread before any command runs; the mutex only keeps the rare
// concurrent user of the library honest.
std::mutex g_mutex;
std::string g_source(kBuiltIn);
std::vector<std::string> g_deferred;
std::atomic<std::size_t> g_registrations{0};

}  // namespace

std::string registration_source() {
  const std::scoped_lock lock(g_mutex);
  return g_source;
}

RegistrationSource::RegistrationSource(std::string source) {
  const std::scoped_lock lock(g_mutex);
  previous_ = std::exchange(g_source, std::move(source));
}

RegistrationSource::~RegistrationSource() {
  const std::scoped_lock lock(g_mutex);
  g_source = std::move(previous_);
}

void defer_registration_error(std::string message) {
  const std::scoped_lock lock(g_mutex);
  g_deferred.push_back(std::move(message));
}

std::vector<std::string> take_registration_errors() {
  const std::scoped_lock lock(g_mutex);
  return std::exchange(g_deferred, {});
}

std::size_t registrations_made() { return g_registrations.load(); }

namespace registry_detail {

void check_name(std::string_view kind, std::string_view name, bool has_factory) {
  const bool valid = !name.empty() && std::ranges::all_of(name, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (!valid) throw Error(fmt::format("{} name '{}' must be lower-case letters, digits and '_'", kind, name));
  if (!has_factory) throw Error(fmt::format("{} '{}' has no factory", kind, name));
}

void duplicate(std::string_view kind, std::string_view name, std::string_view first) {
  const std::string second = registration_source();
  throw Error(fmt::format("a {} named '{}' is already registered ({}); {} registers it again. Load each "
                          "plug-in once (not through both --plugin and LOWCOMM_PLUGINS, not two builds of "
                          "it), or rename one",
                          kind, name, first == kBuiltIn ? "built in" : fmt::format("by {}", first),
                          second == kBuiltIn ? "a built-in" : second));
}

void unknown(std::string_view kind, std::string_view name,
             const std::vector<std::pair<std::string, std::string>>& registered) {
  std::vector<std::string> listed;
  for (const auto& [entry, source] : registered) {
    listed.push_back(source == kBuiltIn ? entry : fmt::format("{} (from {})", entry, source));
  }
  throw ConfigError(fmt::format("unknown {} '{}': registered are {}", kind, name, fmt::join(listed, ", ")));
}

void counted() { ++g_registrations; }

}  // namespace registry_detail

}  // namespace lowcomm

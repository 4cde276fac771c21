#pragma once
// Components by name: one registry shape for compressors, strategies and optimizers. An Info
// names the component (lower-case letters, digits, '_'), describes it and its configuration keys,
// and holds its factory; `lowcomm info` lists every registry, experiment files and --set choose by
// name. Built-ins register on first use of their registry; a plug-in registers with a static
// object (RegisterCompressor, RegisterStrategy, RegisterOptimizer) when the library is loaded.
//
// Each entry remembers where it came from ("built in", or the plug-in being loaded), so that a
// name registered twice, or one not found, is reported with the libraries involved.
#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace lowcomm {

// ---- where registrations come from -------------------------------------------------------------

// "built in", or the plug-in library being loaded while a RegistrationSource is alive.
std::string registration_source();

// While alive, registrations are attributed to `source` (plugins.cpp: the library's path).
class RegistrationSource {
 public:
  explicit RegistrationSource(std::string source);
  ~RegistrationSource();
  RegistrationSource(const RegistrationSource&) = delete;
  RegistrationSource& operator=(const RegistrationSource&) = delete;

 private:
  std::string previous_;
};

// A static registration object cannot throw (the program would terminate naming nothing), so it
// defers its error here; whoever loaded the library raises them (take_registration_errors).
void defer_registration_error(std::string message);
std::vector<std::string> take_registration_errors();

// Registrations made so far, in every registry: tells whether a loaded plug-in registered any.
std::size_t registrations_made();

namespace registry_detail {
void check_name(std::string_view kind, std::string_view name, bool has_factory);
[[noreturn]] void duplicate(std::string_view kind, std::string_view name, std::string_view first);
[[noreturn]] void unknown(std::string_view kind, std::string_view name,
                          const std::vector<std::pair<std::string, std::string>>& registered);
void counted();
}  // namespace registry_detail

// ---- the registry ------------------------------------------------------------------------------

template <class Info>  // Info has `std::string name` and a `create` factory
class Registry {
 public:
  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  // Throws lowcomm::Error for a malformed name, a missing factory, or a name already registered
  // (naming both sources).
  void add(Info info) {
    registry_detail::check_name(kind_, info.name, static_cast<bool>(info.create));
    for (const Entry& e : entries_) {
      if (e.info.name == info.name) registry_detail::duplicate(kind_, info.name, e.source);
    }
    entries_.push_back({std::move(info), std::string(registration_source())});
    registry_detail::counted();
  }

  // Throws ConfigError naming what is registered (and which plug-in registered what).
  const Info& find(std::string_view name) const {
    for (const Entry& e : entries_) {
      if (e.info.name == name) return e.info;
    }
    std::vector<std::pair<std::string, std::string>> registered;
    for (const Entry* e : sorted()) registered.emplace_back(e->info.name, e->source);
    registry_detail::unknown(kind_, name, registered);
  }

  std::vector<const Info*> all() const {  // sorted by name
    std::vector<const Info*> infos;
    for (const Entry* e : sorted()) infos.push_back(&e->info);
    return infos;
  }
  std::vector<std::string> names() const {  // sorted
    std::vector<std::string> out;
    for (const Entry* e : sorted()) out.push_back(e->info.name);
    return out;
  }
  const std::string& kind() const { return kind_; }

 private:
  struct Entry {
    Info info;
    std::string source;
  };
  std::vector<const Entry*> sorted() const {
    std::vector<const Entry*> out;
    for (const Entry& e : entries_) out.push_back(&e);
    std::ranges::sort(out, {}, [](const Entry* e) -> const std::string& { return e->info.name; });
    return out;
  }

  std::string kind_;
  std::vector<Entry> entries_;
};

// What a static registration object does: add, or defer the error to the loader.
template <class Info>
void register_statically(Registry<Info>& registry, Info info) {
  try {
    registry.add(std::move(info));
  } catch (const std::exception& e) {
    defer_registration_error(e.what());
  }
}

}  // namespace lowcomm

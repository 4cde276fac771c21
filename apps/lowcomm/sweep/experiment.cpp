#include "experiment.hpp"

#include <fmt/format.h>

#include <map>
#include <sstream>
#include <toml++/toml.h>

#include "lowcomm/error.hpp"

namespace lowcomm::cli {

namespace {

std::string toml_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// A TOML value as the text of a `--set key=value` override, and as a short label.
std::pair<std::string, std::string> value_text(const toml::node& node, const std::string& where) {
  if (const auto* s = node.as_string()) return {toml_string(s->get()), s->get()};
  if (const auto* i = node.as_integer()) return {fmt::format("{}", i->get()), fmt::format("{}", i->get())};
  if (const auto* f = node.as_floating_point()) {
    std::string text = fmt::format("{}", f->get());  // shortest round-trip form
    if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
    return {text, fmt::format("{}", f->get())};
  }
  if (const auto* b = node.as_boolean()) return {b->get() ? "true" : "false", b->get() ? "true" : "false"};
  throw ConfigError(fmt::format("{}: a value must be a string, number or boolean", where));
}

// "method.set" tables may nest ({strategy = {name = "demo"}}) or use dotted keys; both flatten.
void flatten(const toml::table& table, const std::string& prefix, const std::string& where,
             std::vector<std::string>& out) {
  for (const auto& [key, node] : table) {
    const std::string path = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
    if (const auto* inner = node.as_table()) {
      flatten(*inner, path, where, out);
    } else {
      out.push_back(path + "=" + value_text(node, fmt::format("{} '{}'", where, path)).first);
    }
  }
}

// Labels become file and folder names: keep them to [A-Za-z0-9._-].
std::string safe_label(std::string text) {
  for (char& c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '-' || c == '_';
    if (!ok) c = '_';
  }
  return text;
}

std::string last_segment(const std::string& key) { return key.substr(key.rfind('.') + 1); }

// An axis's `also = ["section.name", ...]`: further keys that take each of its values, e.g. the
// data order's seed beside the run's seed, so that one axis varies both and the point names stay.
std::vector<std::string> also_keys(const toml::table& axis, const std::string& key, const std::string& where) {
  std::vector<std::string> keys;
  const toml::node_view<const toml::node> node = axis["also"];
  if (!node) return keys;
  if (key == "ranks") {
    throw ConfigError(fmt::format("{}: a ranks axis sets no config keys, so it takes no also", where));
  }
  const toml::array* list = node.as_array();
  if (!list) throw ConfigError(fmt::format("{} (key '{}'): also = [\"section.name\", ...] must be a list", where, key));
  for (const toml::node& item : *list) {
    const auto other = item.value<std::string>();
    if (!other || other->empty() || *other == key || *other == "ranks" || *other == "method") {
      throw ConfigError(fmt::format("{} (key '{}'): also lists config keys other than the axis's own, as strings "
                                    "(e.g. also = [\"data.seed\"])",
                                    where, key));
    }
    keys.push_back(*other);
  }
  return keys;
}

// Every point is validated when the file is loaded, and each becomes a job (a Slurm array task):
// a grid beyond this is a mistake, not a study.
constexpr std::int64_t kMaxPoints = 10000;
constexpr std::int64_t kMaxRanks = 1 << 20;

}  // namespace

Experiment Experiment::load(const std::filesystem::path& file, const ConfigSchema& schema,
                            std::vector<std::string> extra_overrides) {
  const std::string where = file.string();
  toml::table root;
  try {
    root = toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    if (!std::filesystem::exists(file)) throw ConfigError(fmt::format("{}: no such experiment file", where));
    throw ConfigError(fmt::format("{}:{}:{}: malformed TOML: {}", where, e.source().begin.line,
                                  e.source().begin.column, e.description()));
  }
  const toml::table* sweep = root["sweep"].as_table();
  if (!sweep) throw ConfigError(fmt::format("{}: no [sweep] table: an experiment file names its grid there", where));

  Experiment experiment;
  experiment.file_ = file;
  experiment.schema_ = &schema;
  experiment.extra_overrides_ = std::move(extra_overrides);
  experiment.name_ = (*sweep)["name"].value_or(file.stem().string());
  experiment.description_ = (*sweep)["description"].value_or(std::string());
  if (const auto ranks = (*sweep)["ranks"].value<std::int64_t>()) {
    if (*ranks < 1 || *ranks > kMaxRanks) {
      throw ConfigError(fmt::format("{}: sweep.ranks = {} must be from 1 to {}", where, *ranks, kMaxRanks));
    }
    experiment.ranks_ = static_cast<int>(*ranks);
  }
  for (const auto& [key, node] : *sweep) {
    const std::string k(key.str());
    if (k != "name" && k != "description" && k != "ranks" && k != "method" && k != "axis") {
      throw ConfigError(fmt::format("{}: unknown key 'sweep.{}': the [sweep] table holds name, description, ranks, "
                                    "[[sweep.method]] and [[sweep.axis]]",
                                    where, k));
    }
  }

  if (const toml::array* methods = (*sweep)["method"].as_array()) {
    SweepAxis axis;
    axis.key = "method";
    for (std::size_t i = 0; i < methods->size(); ++i) {
      const std::string here = fmt::format("{}: sweep.method[{}]", where, i);
      const toml::table* method = (*methods)[i].as_table();
      const auto name = method ? (*method)["name"].value<std::string>() : std::nullopt;
      if (!name || name->empty()) throw ConfigError(here + ": every method needs a name = \"...\"");
      std::vector<std::string> settings;
      if (const toml::table* set = (*method)["set"].as_table()) flatten(*set, "", here, settings);
      axis.names.push_back(*name);
      axis.labels.push_back(safe_label(*name));
      axis.settings.push_back(std::move(settings));
    }
    if (!axis.labels.empty()) experiment.axes_.push_back(std::move(axis));
  }
  if (const toml::array* axes = (*sweep)["axis"].as_array()) {
    for (std::size_t i = 0; i < axes->size(); ++i) {
      const std::string here = fmt::format("{}: sweep.axis[{}]", where, i);
      const toml::table* table = (*axes)[i].as_table();
      const auto key = table ? (*table)["key"].value<std::string>() : std::nullopt;
      const toml::array* values = table ? (*table)["values"].as_array() : nullptr;
      if (!key || key->empty()) throw ConfigError(here + ": every axis needs key = \"section.name\"");
      if (!values || values->empty()) {
        throw ConfigError(fmt::format("{} (key '{}'): values = [...] must list at least one value", here, *key));
      }
      for (const auto& [field, node] : *table) {
        if (field.str() != "key" && field.str() != "values" && field.str() != "also") {
          throw ConfigError(fmt::format("{} (key '{}'): unknown field '{}': an axis holds key, values and also",
                                        here, *key, field.str()));
        }
      }
      const std::vector<std::string> also = also_keys(*table, *key, here);
      SweepAxis axis;
      axis.key = *key;
      for (const toml::node& node : *values) {
        const auto [text, label] = value_text(node, fmt::format("{} (key '{}')", here, *key));
        if (*key == "ranks") {
          const auto r = node.value<std::int64_t>();
          if (!r || *r < 1 || *r > kMaxRanks) {
            throw ConfigError(fmt::format("{}: ranks values must be integers from 1 to {}", here, kMaxRanks));
          }
          axis.ranks.push_back(static_cast<int>(*r));
          axis.labels.push_back(fmt::format("w{}", *r));
          axis.settings.emplace_back();
        } else {
          const bool numeric = node.is_number() || node.is_boolean();
          axis.labels.push_back(safe_label(numeric ? last_segment(*key) + label : label));
          std::vector<std::string> settings{*key + "=" + text};
          for (const std::string& other : also) settings.push_back(other + "=" + text);
          axis.settings.push_back(std::move(settings));
        }
      }
      experiment.axes_.push_back(std::move(axis));
    }
  }

  std::int64_t points = 1;  // checked axis by axis: the product of many axes overflows
  for (const SweepAxis& axis : experiment.axes_) {
    points *= static_cast<std::int64_t>(axis.labels.size());
    if (points > kMaxPoints) {
      throw ConfigError(fmt::format("{}: the grid has more than {} points (the product of its axes' sizes): split "
                                    "it into several experiment files",
                                    where, kMaxPoints));
    }
  }

  std::map<std::string, std::int64_t> names;  // two points writing to one folder would be lost
  for (std::int64_t i = 0; i < experiment.size(); ++i) {
    const auto [it, added] = names.emplace(experiment.point(i).name, i);
    if (!added) {
      throw ConfigError(fmt::format("{}: grid points {} and {} are both named '{}': give the methods or axis "
                                    "values distinct names",
                                    where, it->second, i, it->first));
    }
  }

  root.erase("sweep");
  std::ostringstream base;
  base << root;
  experiment.base_text_ = base.str();
  // Every point valid before any job starts; every point that is not is named, so that one
  // correction of the file mends them all (a mistake in one method's settings fails every point
  // of that method: the list says which).
  constexpr std::size_t kPointsListed = 20;
  std::vector<std::string> failures;
  std::int64_t failed = 0;
  for (std::int64_t i = 0; i < experiment.size(); ++i) {
    const SweepPoint point = experiment.point(i);
    try {
      experiment.config(point);
    } catch (const ConfigError& e) {
      ++failed;
      if (failures.size() < kPointsListed) failures.push_back(fmt::format("{}: grid point {} ({}): {}", where, i, point.name, e.what()));
    }
  }
  if (failed > 0) {
    std::string message = fmt::format("{}", fmt::join(failures, "\n"));
    if (failed > static_cast<std::int64_t>(failures.size())) {
      message += fmt::format("\n{}: and {} more grid points", where, failed - static_cast<std::int64_t>(failures.size()));
    }
    throw ConfigError(message);
  }
  return experiment;
}

std::int64_t Experiment::size() const {
  std::int64_t n = 1;
  for (const SweepAxis& axis : axes_) n *= static_cast<std::int64_t>(axis.labels.size());
  return n;
}

SweepPoint Experiment::point(std::int64_t index) const {
  if (index < 0 || index >= size()) {
    throw ConfigError(fmt::format("{}: grid point {} does not exist: the experiment has {} (0 to {})", file_.string(),
                                  index, size(), size() - 1));
  }
  SweepPoint point;
  point.index = index;
  point.ranks = ranks_;
  std::vector<std::size_t> digits(axes_.size());
  std::int64_t rest = index;
  for (std::size_t a = axes_.size(); a-- > 0;) {  // the last axis varies fastest
    const auto radix = static_cast<std::int64_t>(axes_[a].labels.size());
    digits[a] = static_cast<std::size_t>(rest % radix);
    rest /= radix;
  }
  std::vector<std::string> labels;
  for (std::size_t a = 0; a < axes_.size(); ++a) {
    const SweepAxis& axis = axes_[a];
    labels.push_back(axis.labels[digits[a]]);
    if (!axis.ranks.empty()) point.ranks = axis.ranks[digits[a]];
    if (!axis.names.empty()) point.method = axis.names[digits[a]];
    point.settings.insert(point.settings.end(), axis.settings[digits[a]].begin(), axis.settings[digits[a]].end());
  }
  point.name = labels.empty() ? name_ : fmt::format("{}", fmt::join(labels, "-"));
  return point;
}

Config Experiment::config(const SweepPoint& point) const {
  // The point's settings come from the file's [sweep] table, the extra ones from the command line
  // (applied after them): each named as such in messages.
  // The method's name goes first, so that the run log records it (experiment.method) unless the
  // file sets that key itself.
  std::vector<std::string> method;
  if (!point.method.empty()) method.push_back("experiment.method=" + toml_string(point.method));
  const std::vector<ConfigOverrides> settings = {{.assignments = method, .source = "its method's name"},
                                                 {.assignments = point.settings, .source = "its [sweep] settings"}};
  return Config::from_string(base_text_, *schema_, extra_overrides_, file_.string(), settings);
}

}  // namespace lowcomm::cli

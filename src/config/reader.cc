// Tested through config_test.cc (every error kind with its line and column).
//
// Design: the TOML library's nodes carry their source position, so the reader never needs a
// second pass over the text to find a line number: every message is made where the value is
// read, from the node itself. Errors are sorted by position when joined, because toml++ keeps
// a table's keys in name order, not file order.
#include "config/reader.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <tuple>

namespace rota::config::internal {

void Errors::Add(const toml::source_region& at, std::string message) {
  errors_.push_back({at.begin.line, at.begin.column, std::move(message)});
}

std::string Errors::Join(std::string_view name) const {
  std::vector<Error> sorted = errors_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Error& a, const Error& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  std::string out;
  for (const Error& e : sorted) {
    if (!out.empty()) out += '\n';
    out += std::string(name) + ':' + std::to_string(e.line) + ':' + std::to_string(e.column) + ": " + e.message;
  }
  return out;
}

std::string Show(const toml::node& node) {
  if (const auto* s = node.as_string()) return '"' + s->get() + '"';
  std::ostringstream out;
  if (const auto* i = node.as_integer()) out << i->get();
  if (const auto* f = node.as_floating_point()) out << f->get();
  if (const auto* b = node.as_boolean()) out << (b->get() ? "true" : "false");
  if (!out.str().empty()) return out.str();
  if (node.is_table()) return "(a table)";
  if (const auto* a = node.as_array(); a && a->size() <= 4) {
    std::string items;
    for (const toml::node& item : *a) {
      if (item.is_table() || item.is_array()) return "(an array)";
      items += (items.empty() ? "" : ", ") + Show(item);
    }
    return '[' + items + ']';
  }
  if (node.is_array()) return "(an array)";
  return "(a date or time)";
}

std::string KeyName(std::string_view key) {
  bool bare = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
  return bare ? std::string(key) : '"' + std::string(key) + '"';
}

const toml::node* Section::Get(std::string_view key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
  return table_.get(key);
}

void Section::Fail(const toml::node& at, std::string_view key, std::string_view text) {
  FailAt(at.source(), std::string(key) + ' ' + Show(at) + ' ' + std::string(text));
}

void Section::FailAt(const toml::source_region& at, std::string_view text) {
  errors_->Add(at, (where_.empty() ? "" : where_ + ' ') + std::string(text));
}

std::optional<std::string> Section::String(std::string_view key) {
  const toml::node* n = Get(key);
  if (!n) return std::nullopt;
  if (const auto* s = n->as_string()) return s->get();
  Fail(*n, key, "is not a string (use quotes)");
  return std::nullopt;
}

std::optional<bool> Section::Bool(std::string_view key) {
  const toml::node* n = Get(key);
  if (!n) return std::nullopt;
  if (const auto* b = n->as_boolean()) return b->get();
  Fail(*n, key, "is not a boolean (use true or false)");
  return std::nullopt;
}

std::optional<double> Section::Number(std::string_view key, double min, std::string_view hint) {
  const toml::node* n = Get(key);
  if (!n) return std::nullopt;
  std::optional<double> v;
  if (const auto* i = n->as_integer()) v = static_cast<double>(i->get());
  if (const auto* f = n->as_floating_point()) v = f->get();
  if (!v || !std::isfinite(*v) || *v < min) {
    std::ostringstream text;
    text << "is not a number >= " << min << " (use " << hint << ")";
    Fail(*n, key, text.str());
    return std::nullopt;
  }
  return v;
}

std::optional<std::int64_t> Section::Integer(std::string_view key, std::int64_t min, std::int64_t max) {
  const toml::node* n = Get(key);
  if (!n) return std::nullopt;
  const auto* i = n->as_integer();
  if (!i || i->get() < min || i->get() > max) {
    Fail(*n, key, "is not a whole number from " + std::to_string(min) + " to " + std::to_string(max));
    return std::nullopt;
  }
  return i->get();
}

std::optional<Duration> Section::DurationOf(std::string_view key, Duration min) {
  const toml::node* n = Get(key);
  if (!n) return std::nullopt;
  std::optional<Duration> d;
  if (const auto* s = n->as_string()) d = ParseDuration(s->get());
  if (!d || *d < min) {
    Fail(*n, key, std::string("is not a duration") + (min > 0 ? " above zero" : "") +
                      " (use a string such as \"7d\", \"12h\", \"90m\", \"1h30m\")");
    return std::nullopt;
  }
  return d;
}

std::optional<MiB> Section::Memory(std::string_view key) {
  const toml::node* n = Get(key);
  if (!n) return std::nullopt;
  std::optional<MiB> m;
  if (const auto* s = n->as_string()) m = ParseMemory(s->get());
  if (!m || *m < 0) {
    Fail(*n, key, "is not a size (use 80G, 81920M)");
    return std::nullopt;
  }
  return m;
}

std::optional<double> Section::Hours(std::string_view key) {
  const toml::node* n = Get(key);
  if (!n) return std::nullopt;
  if (const auto* s = n->as_string(); s && s->get() == "unlimited") return -1.0;
  std::optional<double> v;
  if (const auto* i = n->as_integer()) v = static_cast<double>(i->get());
  if (const auto* f = n->as_floating_point()) v = f->get();
  if (!v || !std::isfinite(*v) || *v < 0) {
    Fail(*n, key, "is not a quota (use weekly GPU-hours >= 0, such as 100, or \"unlimited\")");
    return std::nullopt;
  }
  return v;
}

const toml::table* Section::Table(std::string_view key) {
  const toml::node* n = Get(key);
  if (!n) return nullptr;
  if (const auto* t = n->as_table()) return t;
  Fail(*n, key, "is not a table (use a [header] or { key = value, ... })");
  return nullptr;
}

const toml::array* Section::Array(std::string_view key) {
  const toml::node* n = Get(key);
  if (!n) return nullptr;
  if (const auto* a = n->as_array()) return a;
  Fail(*n, key, "is not an array (use [ ... ])");
  return nullptr;
}

std::optional<std::vector<std::string>> Section::Strings(
    std::string_view key, const std::function<std::string(const std::string&)>& check) {
  const toml::array* a = Array(key);
  if (!a) return std::nullopt;
  std::vector<std::string> out;
  for (const toml::node& n : *a) {
    const auto* v = n.as_string();
    const std::string why = v ? check(v->get()) : "is not a string";
    if (!why.empty()) {
      Fail(n, std::string(key) + " entry", why);
    } else {
      out.push_back(v->get());
    }
  }
  return out;
}

void Section::Finish() {
  std::string list;
  for (const std::string& k : known_) list += (list.empty() ? "" : ", ") + k;
  for (const auto& [key, node] : table_) {
    if (std::find(known_.begin(), known_.end(), key.str()) != known_.end()) continue;
    FailAt(key.source(), "unknown key \"" + std::string(key.str()) + "\"" + " (known: " + list + ")");
  }
}

}  // namespace rota::config::internal

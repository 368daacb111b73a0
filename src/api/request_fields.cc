#include "api/request_fields.h"

#include <cstdint>

namespace rota::api::fields {

namespace {

using nlohmann::json;

// The member, or nullptr when it is missing or null (or `request` is no object).
const json* Member(const json& request, const char* name) {
  if (!request.is_object()) return nullptr;
  auto it = request.find(name);
  return it == request.end() || it->is_null() ? nullptr : &*it;
}

// A whole number that fits in 64 signed bits.
bool IsInt64(const json& m) {
  return m.is_number_integer() && (!m.is_number_unsigned() || m.get<std::uint64_t>() <= INT64_MAX);
}

Status Must(const char* name, std::string_view what) {
  return InvalidArgument("\"" + std::string(name) + "\" must be " + std::string(what));
}

}  // namespace

StatusOr<bool> Bool(const json& request, const char* name, bool absent) {
  const json* m = Member(request, name);
  if (m == nullptr) return absent;
  if (!m->is_boolean()) return Must(name, "true or false");
  return m->get<bool>();
}

StatusOr<std::string> Text(const json& request, const char* name, std::string_view absent) {
  const json* m = Member(request, name);
  if (m == nullptr) return std::string(absent);
  if (!m->is_string()) return Must(name, "text (a JSON string)");
  return m->get<std::string>();
}

StatusOr<std::int64_t> Int(const json& request, const char* name, std::int64_t absent, std::int64_t lo,
                           std::int64_t hi) {
  const json* m = Member(request, name);
  if (m == nullptr) return absent;
  if (!IsInt64(*m) || m->get<std::int64_t>() < lo || m->get<std::int64_t>() > hi) {
    return Must(name, "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
  }
  return m->get<std::int64_t>();
}

StatusOr<std::int64_t> Id(const json& request, const char* name, std::string_view what) {
  const json* m = Member(request, name);
  if (m == nullptr || !IsInt64(*m) || m->get<std::int64_t>() <= 0) {
    return Must(name, std::string(what) + " (a positive whole number)");
  }
  return m->get<std::int64_t>();
}

}  // namespace rota::api::fields

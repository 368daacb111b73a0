// Tested by bounded_test.cc.
#include "json/bounded.h"

#include <string>
#include <utility>
#include <vector>

namespace rota {

namespace {

using nlohmann::json;

// Counts nesting and stops the scan at the first level beyond the bound. Values are not built.
class DepthGuard final : public nlohmann::json_sax<json> {
 public:
  DepthGuard(int max_depth, JsonFloats floats) : max_(max_depth), floats_(floats) {}

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t v, const string_t&) override {
    if (floats_ == JsonFloats::kWithinInt32 && !(v > -2147483649.0 && v < 2147483648.0)) {
      big_float_ = true;
      return false;
    }
    return true;
  }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return Enter(); }
  bool key(string_t&) override { return true; }
  bool end_object() override { return Leave(); }
  bool start_array(std::size_t) override { return Enter(); }
  bool end_array() override { return Leave(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) override {
    error_at_ = position;
    return false;
  }

  bool too_deep() const { return too_deep_; }
  bool big_float() const { return big_float_; }
  std::size_t error_at() const { return error_at_; }

 private:
  bool Enter() {
    if (++depth_ > max_) {
      too_deep_ = true;
      return false;
    }
    return true;
  }
  bool Leave() {
    --depth_;
    return true;
  }

  const int max_;
  const JsonFloats floats_;
  int depth_ = 0;
  bool too_deep_ = false;
  bool big_float_ = false;
  std::size_t error_at_ = 0;
};

}  // namespace

StatusOr<nlohmann::json> ParseBoundedJson(std::string_view text, int max_depth, JsonFloats floats) {
  DepthGuard guard(max_depth, floats);
  if (!json::sax_parse(text.begin(), text.end(), &guard)) {
    if (guard.too_deep()) {
      return InvalidArgument("the JSON text nests deeper than " + std::to_string(max_depth) + " levels");
    }
    if (guard.big_float()) {
      return InvalidArgument("a number with a fraction or an exponent is out of range (whole numbers are "
                             "written without them; others must lie within 2147483647 either side of 0)");
    }
    return InvalidArgument("not valid JSON (at byte " + std::to_string(guard.error_at()) + ")");
  }
  json out = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (out.is_discarded()) return InvalidArgument("not valid JSON");
  return out;
}

int JsonDepth(const nlohmann::json& value) {
  int deepest = 0;
  std::vector<std::pair<const json*, int>> todo{{&value, 0}};
  while (!todo.empty()) {
    auto [v, above] = todo.back();
    todo.pop_back();
    if (!v->is_structured()) continue;
    const int here = above + 1;
    if (here > deepest) deepest = here;
    for (const json& child : *v) todo.emplace_back(&child, here);
  }
  return deepest;
}

}  // namespace rota

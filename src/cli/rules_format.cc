// Tested by rules_format_test.cc.
#include "cli/rules_format.h"

#include <algorithm>

#include "cli/json_fields.h"
#include "cli/text.h"

namespace rota::cli {

namespace {

// A text field safe for a terminal, its newlines kept (the admin's account text has lines).
std::string Field(const nlohmann::json& j, const char* key) {
  auto it = j.is_object() ? j.find(key) : j.end();
  if (!j.is_object() || it == j.end() || !it->is_string()) return "";
  const std::string& raw = it->get_ref<const std::string&>();
  std::string out;
  for (size_t from = 0; from <= raw.size();) {
    const size_t nl = std::min(raw.find('\n', from), raw.size());
    out += TerminalSafe(std::string_view(raw).substr(from, nl - from));
    if (nl < raw.size()) out += '\n';
    from = nl + 1;
  }
  return out;
}

using fields::Arr;

// `text` wrapped to `width` after `first` on its first line, indented like it on the others.
void Indented(std::string& out, const std::string& first, const std::string& text, int width) {
  const std::string indent(DisplayWidth(first), ' ');
  const std::vector<std::string> lines = WrapToWidth(text, width - static_cast<int>(indent.size()));
  for (size_t i = 0; i < lines.size(); ++i) out += (i == 0 ? first : indent) + lines[i] + "\n";
}

}  // namespace

std::string FormatRulesText(const nlohmann::json& reply, int width) {
  width = std::max(width, 30);
  const char* colon = fields::Str(reply, "lang") == "zh" ? "：" : ":";
  std::string out;
  const std::string title = Field(reply, "title");
  out += title + "\n" + std::string(DisplayWidth(title), '=') + "\n";
  for (const nlohmann::json& section : Arr(reply, "sections")) {
    const std::string heading = Field(section, "heading");
    out += "\n" + heading + "\n" + std::string(DisplayWidth(heading), '-') + "\n";
    for (const nlohmann::json& item : Arr(section, "items")) {
      const std::string text = Field(item, "text"), code = Field(item, "code");
      if (code.empty()) {
        Indented(out, "- ", text, width);
      } else {
        Indented(out, "- ", text + colon, width);
        out += "    $ " + code + "\n";  // a command is copied whole: never wrapped
      }
    }
  }
  return out;
}

std::string FormatRulesMarkdown(const nlohmann::json& reply) {
  const std::string colon = fields::Str(reply, "lang") == "zh" ? "：" : ": ";
  std::string out = "# " + Field(reply, "title") + "\n";
  for (const nlohmann::json& section : Arr(reply, "sections")) {
    out += "\n## " + Field(section, "heading") + "\n\n";
    for (const nlohmann::json& item : Arr(section, "items")) {
      std::string text = Field(item, "text");
      // A newline in the admin's text continues the list item (indented), not a new paragraph.
      for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 3)) {
        text.replace(at, 1, "\n  ");
      }
      const std::string code = Field(item, "code");
      out += "- " + text + (code.empty() ? "" : colon + "`" + code + "`") + "\n";
    }
  }
  return out;
}

}  // namespace rota::cli

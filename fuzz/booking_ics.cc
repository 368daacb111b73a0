// Fuzz target: the iCalendar feed (api/booking_io.h FormatBookingIcs) of bookings whose user,
// project, note, state and tier the input writes (any bytes; the API's JSON holds valid UTF-8,
// the calendar must not rely on it). Round trip: every physical line ends in CRLF, has no other
// CR or LF, and is at most 75 octets; a line of valid UTF-8 text is never cut inside a character;
// unfolded and unescaped as RFC 5545 says, SUMMARY and DESCRIPTION are the texts written (line
// breaks as "\n"), so no text can add a property or an event of its own.
#include <nlohmann/json.hpp>

#include "api/booking_io.h"
#include "fuzz/fuzz.h"

namespace {

// Whole UTF-8 sequences only (a lead byte and its continuation bytes; overlong forms are not
// this target's concern).
bool ValidUtf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const int n = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : -1;
    if (n < 0) return false;
    for (int k = 1; k <= n; ++k) {
      if (i + k >= s.size() || (static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += static_cast<std::size_t>(n) + 1;
  }
  return true;
}

std::string Unescape(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      ++i;
      out += s[i] == 'n' || s[i] == 'N' ? '\n' : s[i];
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rota;
  using nlohmann::json;
  // Bookings separated by \x1e; a booking's fields (user, project, note, state, tier) by \x1f.
  json bookings = json::array();
  std::vector<std::vector<std::string>> written;
  bool all_utf8 = true;
  for (std::string_view b : fuzz::Split(fuzz::Text(data, size), '\x1e')) {
    std::vector<std::string> f;
    for (std::string_view part : fuzz::Split(b, '\x1f')) f.emplace_back(part);
    f.resize(5);
    for (const std::string& s : f) all_utf8 = all_utf8 && ValidUtf8(s);
    json booking = {{"id", static_cast<std::int64_t>(written.size()) + 1},
                    {"start", 1796115600}, {"end", 1796119200}, {"gpus", {0, 1}}};
    const char* names[] = {"user", "project", "note", "state", "tier"};
    // Strings that are not valid UTF-8 cannot be in a json value that is dumped, but they can be
    // held: FormatBookingIcs only reads them.
    for (int k = 0; k < 5; ++k) booking[names[k]] = f[k];
    bookings.push_back(std::move(booking));
    written.push_back(std::move(f));
  }
  const std::string ics = api::FormatBookingIcs(bookings, "lab.example", 1796115600);

  // Physical lines.
  std::vector<std::string_view> physical;
  std::string_view rest = ics;
  while (!rest.empty()) {
    const std::size_t end = rest.find("\r\n");
    fuzz::Require(end != std::string_view::npos, "every line ends in CRLF");
    const std::string_view line = rest.substr(0, end);
    fuzz::Require(line.find_first_of("\r\n") == std::string_view::npos, "no CR or LF inside a line");
    fuzz::Require(line.size() <= 75, "a line is at most 75 octets");
    if (all_utf8) fuzz::Require(ValidUtf8(line), "a fold never cuts a character");
    physical.push_back(line);
    rest.remove_prefix(end + 2);
  }
  // Unfolded content lines.
  std::vector<std::string> lines;
  for (std::string_view p : physical) {
    if (!p.empty() && p.front() == ' ') {
      fuzz::Require(!lines.empty(), "the first line is not a continuation");
      lines.back() += p.substr(1);
    } else {
      lines.emplace_back(p);
    }
  }
  std::size_t event = 0;
  int begins = 0;
  for (const std::string& l : lines) {
    if (l == "BEGIN:VEVENT") ++begins;
    if (l.rfind("SUMMARY:", 0) == 0) {
      const std::vector<std::string>& f = written.at(event);
      std::string summary = "GPU 0+1: " + f[0];
      if (!f[1].empty()) summary += " (" + f[1] + ")";
      fuzz::Require(Unescape(l.substr(8)) == fuzz::OneBreakStyle(summary), "SUMMARY reads back as written");
    }
    if (l.rfind("DESCRIPTION:", 0) == 0) {
      const std::vector<std::string>& f = written.at(event);
      // Line breaks are made one style over the whole text: a field that ends in CR meets the
      // LF that follows it.
      std::string description = "State: " + f[3] + "\nTier: " + f[4];
      if (!f[2].empty()) description += "\nNote: " + f[2];
      fuzz::Require(Unescape(l.substr(12)) == fuzz::OneBreakStyle(description), "DESCRIPTION reads back as written");
      ++event;
    }
  }
  fuzz::Require(begins == static_cast<int>(written.size()) && event == written.size(),
                "one event per booking, no more");
  return 0;
}

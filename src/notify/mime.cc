// Tested by mime_test.cc (and end to end by email_test.cc).
//
// Design: hand-written because the needs are small and exact: one text/plain part, encoded
// words for the subject and display names, quoted-printable or base64 for the body. A MIME
// library (vmime, mimetic) would add a dependency larger than the notifier for ~200 lines.
#include "notify/mime.h"

#include <cstdio>
#include <ctime>

#include "notify/codec.h"

namespace rota::notify {

namespace {

bool IsPrintableAscii(std::string_view text) {
  for (unsigned char c : text) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

// The length of the longest prefix of `text` of at most `max` bytes that ends on a UTF-8
// character boundary (never 0 when text is not empty: a malformed sequence is cut anyway).
size_t Utf8Prefix(std::string_view text, size_t max) {
  if (text.size() <= max) return text.size();
  size_t n = max;
  // Back up over continuation bytes (10xxxxxx) so that text[n] starts a character.
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80 && max - n < 3) --n;
  return n == 0 ? max : n;
}

bool IsAtext(unsigned char c) {
  // RFC 5322 atext plus space: a display name made of these needs no quoting.
  if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == ' ') return true;
  return std::string_view("!#$%&'*+-/=?^_`{|}~").find(static_cast<char>(c)) != std::string_view::npos;
}

}  // namespace

std::string OneLine(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '\r' || c == '\n' || c == '\t') c = ' ';
  }
  return out;
}

std::string EncodeHeaderText(std::string_view text) {
  std::string line = OneLine(text);
  // Plain ASCII stays readable; past 900 characters it is folded as encoded words, since a header
  // line may not exceed 998.
  if (IsPrintableAscii(line) && line.find("=?") == std::string::npos && line.size() <= 900) return line;
  std::string out;
  std::string_view rest(line);
  while (!rest.empty()) {
    size_t n = Utf8Prefix(rest, kEncodedWordBytes);
    if (!out.empty()) out += "\r\n ";
    out += "=?UTF-8?B?" + Base64Encode(rest.substr(0, n)) + "?=";
    rest.remove_prefix(n);
  }
  return out;
}

std::string CrlfLines(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\r') {
      out += "\r\n";
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
    } else if (c == '\n') {
      out += "\r\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string QuotedPrintable(std::string_view crlf_text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  size_t start = 0;
  while (start <= crlf_text.size()) {
    size_t end = crlf_text.find("\r\n", start);
    bool last = end == std::string_view::npos;
    std::string_view line = crlf_text.substr(start, last ? std::string_view::npos : end - start);
    size_t column = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      unsigned char c = static_cast<unsigned char>(line[i]);
      bool at_end = i + 1 == line.size();
      std::string token;
      if ((c >= 33 && c <= 126 && c != '=') || ((c == ' ' || c == '\t') && !at_end)) {
        token = static_cast<char>(c);
      } else {
        token = {'=', kHex[c >> 4], kHex[c & 15]};
      }
      // Keep every line at most 76 characters, the soft break's '=' included.
      if (column + token.size() > 75) {
        out += "=\r\n";
        column = 0;
      }
      out += token;
      column += token.size();
    }
    if (last) break;
    out += "\r\n";
    start = end + 2;
  }
  return out;
}

std::string Base64Lines(std::string_view bytes) {
  std::string b64 = Base64Encode(bytes);
  std::string out;
  for (size_t i = 0; i < b64.size(); i += 76) out += b64.substr(i, 76) + "\r\n";
  return out;
}

std::string MailDate(std::int64_t unix_seconds) {
  static const char* const kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static const char* const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s, %02d %s %04d %02d:%02d:%02d +0000", kDays[tm.tm_wday % 7], tm.tm_mday,
                kMonths[tm.tm_mon % 12], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buf;
}

std::string FormatMailAddress(const MailAddress& address) {
  if (address.name.empty()) return "<" + address.addr + ">";
  std::string name;
  bool atext = true;
  for (unsigned char c : address.name) atext = atext && IsAtext(c);
  if (atext) {
    name = address.name;
  } else if (IsPrintableAscii(address.name)) {
    name = "\"";
    for (char c : address.name) {
      if (c == '"' || c == '\\') name += '\\';
      name += c;
    }
    name += "\"";
  } else {
    name = EncodeHeaderText(address.name);
  }
  return name + " <" + address.addr + ">";
}

std::string BuildMail(const MailFields& f) {
  std::string body = CrlfLines(f.text);
  if (body.size() < 2 || body.compare(body.size() - 2, 2, "\r\n") != 0) body += "\r\n";
  std::string qp = QuotedPrintable(body);
  bool base64 = f.encoding == BodyEncoding::kBase64;
  std::string b64;
  if (f.encoding != BodyEncoding::kQuotedPrintable) {
    b64 = Base64Lines(body);
    if (f.encoding == BodyEncoding::kAuto) base64 = b64.size() < qp.size();
  }

  std::string m;
  m += "From: " + FormatMailAddress(f.from) + "\r\n";
  m += "To: ";
  for (size_t i = 0; i < f.to.size(); ++i) m += (i ? ",\r\n " : "") + FormatMailAddress(f.to[i]);
  m += "\r\n";
  m += "Subject: " + EncodeHeaderText(f.subject) + "\r\n";
  m += "Date: " + MailDate(f.date) + "\r\n";
  m += "Message-ID: <" + OneLine(f.message_id) + ">\r\n";
  m += "MIME-Version: 1.0\r\n";
  m += "Content-Type: text/plain; charset=UTF-8\r\n";
  m += std::string("Content-Transfer-Encoding: ") + (base64 ? "base64" : "quoted-printable") + "\r\n";
  m += "Auto-Submitted: auto-generated\r\n";
  if (!f.event.empty()) m += "X-Rota-Event: " + EncodeHeaderText(f.event) + "\r\n";
  m += "\r\n";
  m += base64 ? b64 : qp;
  return m;
}

}  // namespace rota::notify

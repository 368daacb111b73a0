// Building an Internet mail message (RFC 5322 with MIME, RFC 2045-2047) from a notification:
// pure functions, no I/O. email.cc hands the result to libcurl, which adds the SMTP envelope,
// dot-stuffs lines that begin with '.' and ends the DATA section.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rota::notify {

// A header value as RFC 2047 encoded words when it needs them: text that is printable ASCII
// (and contains no "=?", and fits in 900 characters) is returned unchanged; anything else becomes "=?UTF-8?B?...?=" words of
// at most kEncodedWordBytes input bytes each (64 characters per word, below RFC 2047's 75, so a
// "Subject: " line stays under 76), never splitting a UTF-8 character, joined by CRLF SP (folding
// whitespace that decoders drop between encoded words). CR, LF and TAB count as spaces.
inline constexpr size_t kEncodedWordBytes = 39;
std::string EncodeHeaderText(std::string_view text);

// CR, LF and TAB replaced by spaces: a header value can never start a new header.
std::string OneLine(std::string_view text);

// '\n', "\r\n" and lone '\r' line breaks as CRLF.
std::string CrlfLines(std::string_view text);

// Quoted-printable (RFC 2045 6.7) of CRLF-separated text: lines of at most 76 characters with
// soft breaks, '=' and non-ASCII bytes as =XX, spaces before a line break encoded. A line that
// starts with '.' is left alone: the SMTP client (libcurl) dot-stuffs it.
std::string QuotedPrintable(std::string_view crlf_text);

// Base64 in lines of 76 characters, each ended by CRLF.
std::string Base64Lines(std::string_view bytes);

// RFC 5322 date-time in UTC: "Tue, 05 Mar 2024 14:03:00 +0000".
std::string MailDate(std::int64_t unix_seconds);

// "Display Name <local@domain>" or "local@domain".
struct MailAddress {
  std::string name;  // may be empty, may be UTF-8
  std::string addr;  // local@domain, printable ASCII without spaces or <>
};
// nullopt when `text` is not one address of one of those two forms.
std::optional<MailAddress> ParseMailAddress(std::string_view text);
// The address for a header: the name quoted or encoded as needed, then "<addr>".
std::string FormatMailAddress(const MailAddress& address);

enum class BodyEncoding { kAuto, kQuotedPrintable, kBase64 };

struct MailFields {
  MailAddress from;
  std::vector<MailAddress> to;
  std::string subject;
  std::string text;                             // UTF-8 with '\n' line breaks
  std::string event;                            // written as X-Rota-Event when not empty
  std::int64_t date = 0;                        // seconds since the Unix epoch
  std::string message_id;                       // without the angle brackets: "unique@domain"
  BodyEncoding encoding = BodyEncoding::kAuto;  // kAuto: whichever of the two is shorter
};

// The whole message, headers and body, with CRLF line breaks: From, To, Subject, Date,
// Message-ID, MIME-Version, Content-Type text/plain; charset=UTF-8, Content-Transfer-Encoding,
// Auto-Submitted (RFC 3834: no auto-replies to it) and X-Rota-Event.
std::string BuildMail(const MailFields& fields);

}  // namespace rota::notify

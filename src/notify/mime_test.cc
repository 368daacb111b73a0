#include "notify/mime.h"

#include <gtest/gtest.h>

#include "notify/codec.h"
#include "notify/notify_test_util.h"

namespace rota::notify {
namespace mime_test {
namespace {

// A character-boundary check: `bytes` is whole UTF-8 characters.
bool WholeUtf8(const std::string& bytes) {
  size_t i = 0;
  while (i < bytes.size()) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > bytes.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(bytes[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

// Decodes a header value made of encoded words, checking each word on the way.
std::string DecodeWords(const std::string& value) {
  std::vector<std::string> words;
  std::vector<size_t> lengths;
  bool ok = false;
  std::string out = testing::DecodeEncodedWords(value, &words, &lengths, &ok);
  EXPECT_TRUE(ok) << value;
  EXPECT_FALSE(words.empty()) << value;
  for (size_t i = 0; i < words.size(); ++i) {
    EXPECT_LE(lengths[i], 75u) << "word " << i << " of " << value;
    EXPECT_TRUE(WholeUtf8(words[i])) << "word " << i << " splits a character: " << value;
  }
  return out;
}

TEST(NotifyMime, AsciiSubjectIsLeftAlone) { EXPECT_EQ(EncodeHeaderText("Job 17 ended"), "Job 17 ended"); }

TEST(NotifyMime, ChineseSubjectBecomesEncodedWordsThatDecodeBack) {
  std::string subject = "作业 17 已结束：GPU 空闲超过 30 分钟，请运行 rota keep 17 保留（或从检查点恢复）";
  std::string encoded = EncodeHeaderText(subject);
  EXPECT_EQ(encoded.rfind("=?UTF-8?B?", 0), 0u);
  EXPECT_EQ(DecodeWords(encoded), subject);
  // Every line of "Subject: ..." stays within RFC 2047's 76 characters.
  std::string header = "Subject: " + encoded;
  size_t start = 0;
  while (start < header.size()) {
    size_t end = header.find("\r\n", start);
    if (end == std::string::npos) end = header.size();
    EXPECT_LE(end - start, 76u) << header.substr(start, end - start);
    start = end + 2;
  }
}

TEST(NotifyMime, EncodedWordsNeverSplitACharacterWhateverTheOffset) {
  // 4-byte (emoji), 3-byte (CJK) and 2-byte (é) characters at every offset of a word boundary.
  for (int pad = 0; pad < 8; ++pad) {
    std::string subject = std::string(pad, 'a') + "é😀作业😀é作业😀é作业😀é作业😀é作业😀é作业";
    EXPECT_EQ(DecodeWords(EncodeHeaderText(subject)), subject) << pad;
  }
}

TEST(NotifyMime, HeaderValuesCannotStartANewHeader) {
  std::string encoded = EncodeHeaderText("hi\r\nBcc: victim@example.com");
  EXPECT_EQ(encoded.find('\n'), std::string::npos);
  EXPECT_EQ(encoded, "hi  Bcc: victim@example.com");
  // "=?" in plain text would be read as an encoded word: it is encoded.
  EXPECT_EQ(DecodeWords(EncodeHeaderText("a =?x?= b")), "a =?x?= b");
}

TEST(NotifyMime, QuotedPrintableEscapesAndBreaksLines) {
  EXPECT_EQ(QuotedPrintable("a=b"), "a=3Db");
  EXPECT_EQ(QuotedPrintable("trailing \r\nnext"), "trailing=20\r\nnext");
  EXPECT_EQ(QuotedPrintable("\xe4\xbd\xa0"), "=E4=BD=A0");
  EXPECT_EQ(QuotedPrintable(".starts with a dot"), ".starts with a dot");  // curl dot-stuffs
  std::string long_line(200, 'x');
  long_line += "=";
  std::string qp = QuotedPrintable(long_line);
  size_t start = 0;
  while (start < qp.size()) {
    size_t end = qp.find("\r\n", start);
    if (end == std::string::npos) end = qp.size();
    EXPECT_LE(end - start, 76u);
    start = end + 2;
  }
  EXPECT_NE(qp.find("=\r\n"), std::string::npos);
  EXPECT_EQ(qp.substr(qp.size() - 3), "=3D");
}

TEST(NotifyMime, LineBreaksBecomeCrlf) { EXPECT_EQ(CrlfLines("a\nb\r\nc\rd"), "a\r\nb\r\nc\r\nd"); }

TEST(NotifyMime, DateIsRfc5322InUtc) {
  EXPECT_EQ(MailDate(0), "Thu, 01 Jan 1970 00:00:00 +0000");
  EXPECT_EQ(MailDate(1709647380), "Tue, 05 Mar 2024 14:03:00 +0000");
}

TEST(NotifyMime, AddressesParseAndFormat) {
  auto a = ParseMailAddress("Rota <rota@lab.example.edu>");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->name, "Rota");
  EXPECT_EQ(a->addr, "rota@lab.example.edu");
  EXPECT_EQ(FormatMailAddress(*a), "Rota <rota@lab.example.edu>");
  EXPECT_EQ(FormatMailAddress(*ParseMailAddress("alice@lab.example.edu")), "<alice@lab.example.edu>");
  EXPECT_EQ(FormatMailAddress({"Lab, GPU", "a@b.c"}), "\"Lab, GPU\" <a@b.c>");
  std::string utf8 = FormatMailAddress({"张三", "zhangsan@lab.example.edu"});
  EXPECT_EQ(DecodeWords(utf8.substr(0, utf8.find(" <"))), "张三");
  for (const char* bad : {"", "no-at", "a@", "@b", "a b@c", "a@b@c", "x <a@b", "a@b\r\nBcc: c@d"}) {
    EXPECT_FALSE(ParseMailAddress(bad).has_value()) << bad;
  }
}

MailFields Fields(std::string text) {
  MailFields f;
  f.from = {"Rota", "rota@lab.example.edu"};
  f.to = {{"", "alice@lab.example.edu"}, {"Bob", "bob@lab.example.edu"}};
  f.subject = "作业 17 已结束";
  f.text = std::move(text);
  f.event = "job_ended";
  f.date = 1709647380;
  f.message_id = "rota.1.abc@lab.example.edu";
  return f;
}

TEST(NotifyMime, MailHasTheHeadersAndOnlyCrlfLineBreaks) {
  std::string m = BuildMail(Fields("Your job ended.\nExit code 0."));
  size_t split = m.find("\r\n\r\n");
  ASSERT_NE(split, std::string::npos);
  std::string headers = m.substr(0, split + 2);
  for (const char* h :
       {"From: Rota <rota@lab.example.edu>\r\n",
        "To: <alice@lab.example.edu>,\r\n Bob <bob@lab.example.edu>\r\n",
        "Date: Tue, 05 Mar 2024 14:03:00 +0000\r\n", "Message-ID: <rota.1.abc@lab.example.edu>\r\n",
        "MIME-Version: 1.0\r\n", "Content-Type: text/plain; charset=UTF-8\r\n",
        "Content-Transfer-Encoding: quoted-printable\r\n", "Auto-Submitted: auto-generated\r\n",
        "X-Rota-Event: job_ended\r\n"}) {
    EXPECT_NE(headers.find(h), std::string::npos) << h;
  }
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i] == '\n') {
      EXPECT_TRUE(i > 0 && m[i - 1] == '\r') << "bare LF at " << i;
    }
  }
  EXPECT_EQ(m.substr(split + 4), "Your job ended.\r\nExit code 0.\r\n");
}

TEST(NotifyMime, ChineseBodyIsBase64AndEnglishQuotedPrintable) {
  std::string zh = "你的作业已结束。\n退出码 0，用时 3 小时 12 分钟。";
  std::string m = BuildMail(Fields(zh));
  EXPECT_NE(m.find("Content-Transfer-Encoding: base64\r\n"), std::string::npos);
  std::string body = m.substr(m.find("\r\n\r\n") + 4);
  std::string joined;
  for (char c : body) {
    if (c != '\r' && c != '\n') joined += c;
  }
  EXPECT_EQ(*Base64Decode(joined), CrlfLines(zh) + "\r\n");

  MailFields forced = Fields("plain English");
  forced.encoding = BodyEncoding::kBase64;
  EXPECT_NE(BuildMail(forced).find("Content-Transfer-Encoding: base64"), std::string::npos);
}

}  // namespace
}  // namespace mime_test
}  // namespace rota::notify

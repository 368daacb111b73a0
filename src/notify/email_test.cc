// The email channel against a real SMTP server on 127.0.0.1 (notify_test_util.h): what arrives
// is parsed back (headers, encoded subject, body) the way a mail reader would.
#include "notify/email.h"

#include <gtest/gtest.h>

#include "notify/codec.h"
#include "notify/notify_test_util.h"

namespace rota::notify {
namespace email_test {
namespace {

using testing::SmtpServer;
using testing::SmtpSession;
using testing::TempDir;
using testing::TestCert;
using testing::TestServer;

constexpr std::int64_t kNowMs = 1709647380123;

EmailOptions Options(const std::string& url) {
  EmailOptions o;
  o.url = url;
  o.from = "Rota GPU <rota@lab.example.edu>";
  o.to = {"admin@lab.example.edu"};
  o.timeout = std::chrono::milliseconds(10'000);
  o.clock = [] { return kNowMs; };
  return o;
}

std::string Url(const char* scheme, int port) {
  return std::string(scheme) + "://127.0.0.1:" + std::to_string(port);
}

std::unique_ptr<Channel> Make(EmailOptions o) {
  auto c = MakeEmailChannel(std::move(o));
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c).value() : nullptr;
}

// A received message split into unfolded headers and the body.
struct Parsed {
  std::map<std::string, std::string> headers;
  std::string body;
};

Parsed Parse(const std::string& message) {
  Parsed p;
  size_t split = message.find("\r\n\r\n");
  EXPECT_NE(split, std::string::npos);
  std::string head = message.substr(0, split);
  p.body = message.substr(split + 4);
  std::string name;
  size_t start = 0;
  while (start <= head.size()) {
    size_t end = head.find("\r\n", start);
    if (end == std::string::npos) end = head.size();
    std::string line = head.substr(start, end - start);
    if (!line.empty() && (line[0] == ' ' || line[0] == '\t')) {
      p.headers[name] += line;  // a folded continuation
    } else {
      name = line.substr(0, line.find(':'));
      p.headers[name] = line.substr(line.find(':') + 2);
    }
    start = end + 2;
  }
  return p;
}

std::string DecodeWords(const std::string& value) { return testing::DecodeEncodedWords(value); }

std::string DecodeQuotedPrintable(const std::string& qp) {
  std::string out;
  for (size_t i = 0; i < qp.size(); ++i) {
    if (qp[i] != '=') {
      out += qp[i];
    } else if (qp.compare(i + 1, 2, "\r\n") == 0) {
      i += 2;  // a soft break
    } else {
      out += static_cast<char>(std::stoi(qp.substr(i + 1, 2), nullptr, 16));
      i += 2;
    }
  }
  return out;
}

std::string DecodeBase64Body(const std::string& body) {
  std::string joined;
  for (char c : body) {
    if (c != '\r' && c != '\n') joined += c;
  }
  return *Base64Decode(joined);
}

SmtpSession OnlySession(SmtpServer& server) {
  auto sessions = server.sessions();
  EXPECT_EQ(sessions.size(), 1u);
  return sessions.empty() ? SmtpSession{} : sessions[0];
}

TEST(NotifyEmail, DeliversAChineseMessageOverPlainSmtp) {
  SmtpServer server({});
  auto channel = Make(Options(Url("smtp", server.port())));
  ASSERT_TRUE(channel);
  Message m{"作业 17 已结束：用时 3 小时 12 分钟，GPU 0 和 1 已释放，可以提交下一个作业了",
            "你好，张三：\n作业 17（train.py）已正常结束，退出码 0。\n日志：rota logs 17",
            "job_ended",
            {"zhangsan@lab.example.edu"}};
  Status s = channel->Send(m);
  ASSERT_TRUE(s.ok()) << s.ToString();

  SmtpSession got = OnlySession(server);
  EXPECT_TRUE(got.complete);
  EXPECT_FALSE(got.tls);
  EXPECT_EQ(got.mail_from, "<rota@lab.example.edu>");
  EXPECT_EQ(got.rcpt, (std::vector<std::string>{"<admin@lab.example.edu>", "<zhangsan@lab.example.edu>"}));
  Parsed p = Parse(got.message);
  EXPECT_EQ(DecodeWords(p.headers["Subject"]), m.subject);
  EXPECT_EQ(p.headers["From"], "Rota GPU <rota@lab.example.edu>");
  EXPECT_EQ(p.headers["To"], "<admin@lab.example.edu>, <zhangsan@lab.example.edu>");
  EXPECT_EQ(p.headers["Date"], "Tue, 05 Mar 2024 14:03:00 +0000");
  std::string id = p.headers["Message-ID"];  // <rota.MS.RANDOM@domain-of-from>
  const std::string prefix = "<rota.1709647380123.", suffix = "@lab.example.edu>";
  ASSERT_EQ(id.size(), prefix.size() + 16 + suffix.size()) << id;
  EXPECT_EQ(id.substr(0, prefix.size()), prefix);
  EXPECT_EQ(id.substr(prefix.size() + 16), suffix);
  EXPECT_EQ(id.substr(prefix.size(), 16).find_first_not_of("0123456789abcdef"), std::string::npos) << id;
  EXPECT_EQ(p.headers["Content-Type"], "text/plain; charset=UTF-8");
  EXPECT_EQ(p.headers["Content-Transfer-Encoding"], "base64");
  EXPECT_EQ(p.headers["X-Rota-Event"], "job_ended");
  EXPECT_EQ(DecodeBase64Body(p.body),
            "你好，张三：\r\n作业 17（train.py）已正常结束，退出码 0。\r\n日志：rota logs 17\r\n");
}

TEST(NotifyEmail, LinesStartingWithADotAreStuffedOnTheWireAndArriveIntact) {
  SmtpServer server({});
  auto channel = Make(Options(Url("smtp", server.port())));
  ASSERT_TRUE(channel);
  std::string text = "Your job printed:\n.hidden line\n.\n..two dots\nend";
  ASSERT_TRUE(channel->Send({"Job 3 output", text, "job_ended", {}}).ok());
  SmtpSession got = OnlySession(server);
  // libcurl doubled each leading dot; a lone "." never ended the DATA early.
  auto has = [&](const std::string& l) {
    return std::find(got.raw.begin(), got.raw.end(), l) != got.raw.end();
  };
  EXPECT_TRUE(has("..hidden line"));
  EXPECT_TRUE(has(".."));
  EXPECT_TRUE(has("...two dots"));
  Parsed p = Parse(got.message);
  EXPECT_EQ(p.headers["Content-Transfer-Encoding"], "quoted-printable");
  EXPECT_EQ(DecodeQuotedPrintable(p.body), "Your job printed:\r\n.hidden line\r\n.\r\n..two dots\r\nend\r\n");
}

TEST(NotifyEmail, LogsInWithAuthPlain) {
  SmtpServer::Options so;
  so.user = "rota";
  so.password = "s3cret";
  SmtpServer server(so);
  EmailOptions o = Options(Url("smtp", server.port()));
  o.username = "rota";
  o.password = "s3cret";
  auto channel = Make(o);
  ASSERT_TRUE(channel);
  ASSERT_TRUE(channel->Send({"hello", "body", "test", {}}).ok());
  EXPECT_EQ(OnlySession(server).auth_user, "rota");
  EXPECT_NE(channel->Describe().find("login rota"), std::string::npos);
  EXPECT_EQ(channel->Describe().find("s3cret"), std::string::npos);
}

TEST(NotifyEmail, AWrongPasswordIsPermissionDenied) {
  SmtpServer::Options so;
  so.user = "rota";
  so.password = "right";
  SmtpServer server(so);
  EmailOptions o = Options(Url("smtp", server.port()));
  o.username = "rota";
  o.password = "wrong";
  Status s = Make(o)->Send({"hello", "body", "test", {}});
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
  EXPECT_NE(s.message().find("login denied"), std::string::npos) << s.message();
  EXPECT_FALSE(IsRetryable(s));
}

TEST(NotifyEmail, StartTlsUpgradesBeforeLoggingIn) {
  TestCert cert;
  ASSERT_TRUE(cert.ok());
  SmtpServer::Options so;
  so.tls = cert.ctx();
  so.offer_starttls = true;
  so.user = "rota";
  so.password = "pw";
  SmtpServer server(so);
  EmailOptions o = Options(Url("smtp", server.port()));
  o.starttls = true;
  o.ca_file = cert.pem_path();
  o.username = "rota";
  o.password = "pw";
  Status s = Make(o)->Send({"加密", "通过 STARTTLS 发送", "test", {}});
  ASSERT_TRUE(s.ok()) << s.ToString();
  SmtpSession got = OnlySession(server);
  EXPECT_TRUE(got.starttls);
  EXPECT_TRUE(got.tls);
  EXPECT_EQ(got.auth_user, "rota");
  EXPECT_EQ(DecodeWords(Parse(got.message).headers["Subject"]), "加密");
}

TEST(NotifyEmail, RequiredStartTlsThatTheServerLacksIsRefusedNotDowngraded) {
  SmtpServer server({});
  EmailOptions o = Options(Url("smtp", server.port()));
  o.starttls = true;
  Status s = Make(o)->Send({"hello", "body", "test", {}});
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("does not offer STARTTLS"), std::string::npos) << s.message();
  for (const SmtpSession& got : server.sessions()) EXPECT_FALSE(got.complete);
}

TEST(NotifyEmail, ImplicitTlsOverSmtps) {
  TestCert cert;
  ASSERT_TRUE(cert.ok());
  SmtpServer::Options so;
  so.tls = cert.ctx();
  so.implicit_tls = true;
  SmtpServer server(so);
  EmailOptions o = Options(Url("smtps", server.port()));
  o.ca_file = cert.pem_path();
  auto channel = Make(o);
  Status s = channel->Send({"hello", "over TLS", "test", {}});
  ASSERT_TRUE(s.ok()) << s.ToString();
  SmtpSession got = OnlySession(server);
  EXPECT_TRUE(got.tls);
  EXPECT_FALSE(got.starttls);
  EXPECT_TRUE(got.complete);
  EXPECT_NE(channel->Describe().find("implicit TLS"), std::string::npos);
}

TEST(NotifyEmail, AnUntrustedCertificateIsRefused) {
  TestCert cert;
  ASSERT_TRUE(cert.ok());
  SmtpServer::Options so;
  so.tls = cert.ctx();
  so.implicit_tls = true;
  SmtpServer server(so);
  Status s = Make(Options(Url("smtps", server.port())))->Send({"hello", "body", "test", {}});  // no ca_file
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("not trusted"), std::string::npos) << s.message();
}

TEST(NotifyEmail, ARefusedRecipientIsAPermanentFailure) {
  SmtpServer::Options so;
  so.refuse = {"ghost@lab.example.edu"};
  SmtpServer server(so);
  Status s =
      Make(Options(Url("smtp", server.port())))->Send({"hello", "body", "test", {"ghost@lab.example.edu"}});
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("550"), std::string::npos) << s.message();
}

TEST(NotifyEmail, AServerThatNeverAnswersTimesOut) {
  SmtpServer::Options so;
  so.silent = true;
  SmtpServer server(so);
  EmailOptions o = Options(Url("smtp", server.port()));
  o.timeout = std::chrono::milliseconds(300);
  Status s = Make(o)->Send({"hello", "body", "test", {}});
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("timed out after 300 ms"), std::string::npos) << s.message();
  EXPECT_TRUE(IsRetryable(s));
}

TEST(NotifyEmail, ConnectionRefusedIsUnavailable) {
  Status s = Make(Options(Url("smtp", TestServer::ClosedPort())))->Send({"hello", "body", "test", {}});
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("could not connect"), std::string::npos) << s.message();
}

TEST(NotifyEmail, RecipientsComeFromTheOptionsAndTheMentions) {
  EmailOptions o = Options("smtp://127.0.0.1:1");
  o.to.clear();
  auto channel = Make(o);
  Status none = channel->Send({"hello", "body", "test", {}});
  EXPECT_EQ(none.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(none.message().find("no recipient"), std::string::npos);
  Status bad = channel->Send({"hello", "body", "test", {"not an address"}});
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
}

TEST(NotifyEmail, OptionsAreCheckedUpFront) {
  auto bad = [](EmailOptions o) { return MakeEmailChannel(std::move(o)).status(); };
  EXPECT_EQ(bad(Options("http://mail.example.edu")).code(), StatusCode::kInvalidArgument);
  EmailOptions starttls_on_smtps = Options("smtps://mail.example.edu");
  starttls_on_smtps.starttls = true;
  EXPECT_EQ(bad(starttls_on_smtps).code(), StatusCode::kInvalidArgument);
  EmailOptions clear = Options("smtp://mail.example.edu:25");
  clear.username = "rota";
  clear.password = "pw";
  Status s = bad(clear);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("clear text"), std::string::npos) << s.message();
  EmailOptions from = Options("smtp://mail.example.edu");
  from.from = "rota";
  EXPECT_EQ(bad(from).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace email_test
}  // namespace rota::notify

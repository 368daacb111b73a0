// Tests of the client connection's framing against a socketpair playing the daemon: partial
// lines, several lines in one read, error replies, a daemon closing mid-reply, oversized lines.
#include "client/connection.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "api/protocol.h"

namespace rota::client {
namespace connection_test {
namespace {

using nlohmann::json;

class ConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    conn_ = Connection::FromFd(fds[0]);
    daemon_ = fds[1];
  }
  void TearDown() override {
    if (daemon_ >= 0) ::close(daemon_);
  }
  void DaemonWrites(const std::string& bytes) {
    ASSERT_EQ(::write(daemon_, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
  // Reads what the client sent, up to and including the first newline.
  std::string DaemonReadsLine() {
    std::string line;
    char c;
    while (::read(daemon_, &c, 1) == 1) {
      line += c;
      if (c == '\n') break;
    }
    return line;
  }

  Connection conn_;
  int daemon_ = -1;
};

TEST_F(ConnectionTest, CallAddsVersionAndReturnsTheReply) {
  std::thread daemon([this] {
    std::string line = DaemonReadsLine();
    json request = json::parse(line);
    EXPECT_EQ(request["v"], api::kVersion);
    EXPECT_EQ(request["op"], "hello");
    // The reply arrives in pieces.
    DaemonWrites("{\"v\":1,\"ok\":tr");
    DaemonWrites("ue,\"user\":\"alice\"}\n");
  });
  auto reply = conn_.Call({{"op", "hello"}});
  daemon.join();
  ASSERT_TRUE(reply.ok()) << reply.status().message();
  EXPECT_EQ((*reply)["user"], "alice");
}

TEST_F(ConnectionTest, ErrorReplyBecomesItsStatus) {
  DaemonWrites("{\"v\":1,\"ok\":false,\"error\":{\"code\":\"not_found\",\"message\":\"no job 42\"}}\n");
  auto reply = conn_.Call({{"op", "show"}, {"job_id", 42}});
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(reply.status().message(), "no job 42");
}

TEST_F(ConnectionTest, SeveralLinesInOneReadAreKeptInOrder) {
  DaemonWrites(
      "{\"ok\":true,\"event\":\"queued\"}\n{\"event\":\"waiting\",\"position\":3}\n{\"event\":\"allo");
  auto a = conn_.Receive(1000);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ((*a)["event"], "queued");
  EXPECT_TRUE(conn_.HasBufferedLine());
  auto b = conn_.Receive(1000);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)["position"], 3);
  EXPECT_FALSE(conn_.HasBufferedLine());
  auto c = conn_.Receive(50);  // the rest has not come yet
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(conn_.TimedOut());
  DaemonWrites("cated\"}\n");
  auto d = conn_.Receive(1000);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)["event"], "allocated");
}

TEST_F(ConnectionTest, DaemonClosingMidReplyIsUnavailable) {
  DaemonWrites("{\"ok\":tr");
  ::close(daemon_);
  daemon_ = -1;
  auto reply = conn_.Receive(1000);
  ASSERT_FALSE(reply.ok());
  EXPECT_FALSE(conn_.TimedOut());
  EXPECT_EQ(reply.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(reply.status().message(), "rotad closed the connection");
  EXPECT_FALSE(conn_.connected());
  EXPECT_EQ(api::ExitCodeForError(api::ErrorCode(reply.status().code())), api::kExitUnreachable);
}

TEST_F(ConnectionTest, SendingToAClosedDaemonIsUnavailableNotSigpipe) {
  ::close(daemon_);
  daemon_ = -1;
  Status st = conn_.Send({{"op", "hello"}});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
}

TEST_F(ConnectionTest, NotJsonIsInternal) {
  DaemonWrites("hello\n");
  auto reply = conn_.Receive(1000);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kInternal);
}

TEST_F(ConnectionTest, OversizedReplyLineIsRefused) {
  std::thread daemon([this] {
    std::string chunk(64 * 1024, 'x');
    for (size_t sent = 0; sent <= api::kMaxReplyBytes; sent += chunk.size()) {
      if (::send(daemon_, chunk.data(), chunk.size(), MSG_NOSIGNAL) < 0) break;
    }
  });
  auto reply = conn_.Receive(5000);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kInternal);
  EXPECT_NE(reply.status().message().find("longer than"), std::string::npos);
  EXPECT_FALSE(conn_.connected());
  daemon.join();
}

TEST_F(ConnectionTest, OversizedRequestIsRefusedLocally) {
  json request = {{"op", "submit"}, {"job", {{"env", {{"BIG", std::string(api::kMaxLineBytes, 'y')}}}}}};
  Status st = conn_.Send(request);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(conn_.connected());
}

TEST(ConnectionOpenTest, MissingSocketSaysWhereAndWhatToDo) {
  auto conn = Connection::Open("/nonexistent/rota.sock");
  ASSERT_FALSE(conn.ok());
  EXPECT_EQ(conn.status().code(), StatusCode::kUnavailable);
  const std::string m = conn.status().message();
  EXPECT_NE(m.find("cannot reach rotad at /nonexistent/rota.sock"), std::string::npos) << m;
  EXPECT_NE(m.find("No such file or directory"), std::string::npos) << m;
  EXPECT_NE(m.find("is rotad running?"), std::string::npos) << m;
}

TEST(ExitCodeTest, WireCodesMapToDocumentedExitCodes) {
  EXPECT_EQ(api::ExitCodeForError("invalid_argument"), 2);
  EXPECT_EQ(api::ExitCodeForError("unsupported_version"), 2);
  EXPECT_EQ(api::ExitCodeForError("not_found"), 1);
  EXPECT_EQ(api::ExitCodeForError("permission_denied"), 1);
  EXPECT_EQ(api::ExitCodeForError("failed_precondition"), 1);
  EXPECT_EQ(api::ExitCodeForError("resource_exhausted"), 1);
  EXPECT_EQ(api::ExitCodeForError("internal"), 1);
  EXPECT_EQ(api::ExitCodeForError("unavailable"), 3);
  EXPECT_EQ(api::ExitCodeForError("something_new"), 1);
}

}  // namespace
}  // namespace connection_test
}  // namespace rota::client

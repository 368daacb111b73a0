// The terminal channel: which terminals are chosen (a pure function over utmp records and lstat
// results), what is written, and the write itself on a pseudo-terminal the test opens (never a
// real user's terminal), read back from its master side.
#include "notify/tty.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>
#include <utmpx.h>

#include <cstdio>
#include <cstring>

#include "notify/notify_test_util.h"

namespace rota::notify {
namespace tty_test {
namespace {

constexpr uid_t kAlice = 1001, kBob = 1002;

TtyStat Tty(uid_t uid, mode_t mode) { return TtyStat{false, true, uid, static_cast<mode_t>(S_IFCHR | mode)}; }

TEST(NotifyTty, SelectsTheUsersOwnWritableTerminalsOnly) {
  std::vector<UtmpEntry> utmp = {
      {USER_PROCESS, "alice", "pts/1"},          // chosen
      {USER_PROCESS, "alice", "pts/1"},          // the same terminal twice: once
      {USER_PROCESS, "alice", "tty2"},           // chosen
      {USER_PROCESS, "alice", "pts/2"},          // mesg n
      {USER_PROCESS, "alice", "pts/3"},          // stale: bob logged in there since
      {USER_PROCESS, "alice", "pts/4"},          // a symbolic link
      {USER_PROCESS, "alice", "pts/5"},          // not a character device
      {USER_PROCESS, "alice", "pts/9"},          // gone
      {USER_PROCESS, "alice", "../etc/passwd"},  // refused by name
      {USER_PROCESS, "alice", ":0"},             // an X display, not under /dev
      {DEAD_PROCESS, "alice", "pts/6"},          // logged out
      {LOGIN_PROCESS, "LOGIN", "tty1"},
      {USER_PROCESS, "bob", "pts/3"},
  };
  std::map<std::string, TtyStat> stats = {
      {"/dev/pts/1", Tty(kAlice, 0620)},
      {"/dev/tty2", Tty(kAlice, 0620)},
      {"/dev/pts/2", Tty(kAlice, 0600)},
      {"/dev/pts/3", Tty(kBob, 0620)},
      {"/dev/pts/4", TtyStat{true, false, kAlice, S_IFLNK | 0777}},
      {"/dev/pts/5", TtyStat{false, false, kAlice, S_IFREG | 0620}},
      {"/dev/pts/6", Tty(kAlice, 0620)},
      {"/dev/tty1", Tty(0, 0620)},
  };
  TtySelection sel = SelectTtys(utmp, "alice", kAlice, stats);
  EXPECT_EQ(sel.ttys, (std::vector<std::string>{"/dev/pts/1", "/dev/tty2"}));
  EXPECT_EQ(sel.skipped, (std::vector<std::string>{
                             "\"../etc/passwd\": not a terminal name",
                             "\":0\": not a terminal name",
                             "/dev/pts/2: messages off (mesg n)",
                             "/dev/pts/3: owned by someone else (a stale login)",
                             "/dev/pts/4: a symbolic link",
                             "/dev/pts/5: not a terminal device",
                             "/dev/pts/9: does not exist",
                         }));
  EXPECT_EQ(SelectTtys(utmp, "bob", kBob, stats).ttys, (std::vector<std::string>{"/dev/pts/3"}));
  // The uid decides, not the name: a user whose uid does not own the device gets nothing.
  EXPECT_TRUE(SelectTtys(utmp, "bob", kAlice, stats).ttys.empty());
  EXPECT_TRUE(SelectTtys(utmp, "carol", 1003, stats).ttys.empty());
}

TEST(NotifyTty, TerminalTextHasNoControlCharacters) {
  Message m{"Job 17 \x1b[2J ended",
            "line one\nline\ttwo\r\n\x07\x7f \xc2\x9b"
            "31m 中文",
            "job_ended",
            {}};
  EXPECT_EQ(TerminalText(m), "\r\n[rota] Job 17 ?[2J ended\r\nline one\r\nline?two\r\n?? ?31m 中文\r\n");
}

// A pseudo-terminal pair opened by the test: the slave is a terminal owned by this process's uid.
class Pty {
 public:
  Pty() {
    master_ = posix_openpt(O_RDWR | O_NOCTTY | O_NONBLOCK);
    if (master_ < 0 || grantpt(master_) != 0 || unlockpt(master_) != 0) return;
    const char* name = ptsname(master_);
    if (!name) return;
    path_ = name;
    // Keep the slave open so that the terminal exists while the test writes to it by path; raw
    // mode so that what is written arrives unchanged.
    slave_ = ::open(path_.c_str(), O_RDWR | O_NOCTTY);
    termios t{};
    if (slave_ >= 0 && tcgetattr(slave_, &t) == 0) {
      cfmakeraw(&t);
      tcsetattr(slave_, TCSANOW, &t);
    }
  }
  ~Pty() {
    if (slave_ >= 0) ::close(slave_);
    if (master_ >= 0) ::close(master_);
  }
  bool ok() const { return slave_ >= 0 && path_.rfind("/dev/", 0) == 0; }
  const std::string& path() const { return path_; }
  std::string Read() {
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(master_, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    return out;
  }

 private:
  int master_ = -1;
  int slave_ = -1;
  std::string path_;
};

TEST(NotifyTty, WritesToATerminalThatAcceptsMessages) {
  Pty pty;
  if (!pty.ok()) GTEST_SKIP() << "no pseudo-terminals here (posix_openpt failed)";
  ASSERT_EQ(::chmod(pty.path().c_str(), 0620), 0);
  Status s = WriteToTty(pty.path(), ::getuid(), "\r\n[rota] hello\r\n", std::chrono::milliseconds(1000));
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(pty.Read(), "\r\n[rota] hello\r\n");
}

TEST(NotifyTty, RefusesMesgNOtherOwnersSymlinksAndNonTerminals) {
  Pty pty;
  if (!pty.ok()) GTEST_SKIP() << "no pseudo-terminals here (posix_openpt failed)";
  auto write = [](const std::string& path, uid_t uid) {
    return WriteToTty(path, uid, "x", std::chrono::milliseconds(500));
  };
  ASSERT_EQ(::chmod(pty.path().c_str(), 0600), 0);
  Status off = write(pty.path(), ::getuid());
  EXPECT_EQ(off.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(off.message().find("mesg n"), std::string::npos) << off.message();
  ASSERT_EQ(::chmod(pty.path().c_str(), 0620), 0);
  EXPECT_NE(write(pty.path(), ::getuid() + 1).message().find("owned by someone else"), std::string::npos);
  // /dev/stdout is a symbolic link, /dev/fd a linked directory: neither is followed.
  EXPECT_NE(write("/dev/stdout", ::getuid()).message().find("symbolic link"), std::string::npos);
  EXPECT_NE(write("/dev/fd/1", ::getuid()).message().find("symbolic link"), std::string::npos);
  EXPECT_EQ(write("/dev/null", 0).code(), StatusCode::kFailedPrecondition);  // not a terminal
  EXPECT_EQ(write("/etc/passwd", 0).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(pty.Read().empty());
}

TEST(NotifyTty, ATerminalThatDoesNotReadTimesOut) {
  Pty pty;
  if (!pty.ok()) GTEST_SKIP() << "no pseudo-terminals here (posix_openpt failed)";
  ASSERT_EQ(::chmod(pty.path().c_str(), 0620), 0);
  std::string big(4 << 20, 'x');  // more than any terminal buffer; the master never reads
  Status s = WriteToTty(pty.path(), ::getuid(), big, std::chrono::milliseconds(200));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("timed out after 200 ms"), std::string::npos) << s.message();
}

// Writes a utmp file with one login of this process's user on `line`.
void WriteUtmp(const std::string& file, const std::string& user, const std::string& line) {
  struct utmpx u {};
  u.ut_type = USER_PROCESS;
  u.ut_pid = ::getpid();
  std::strncpy(u.ut_user, user.c_str(), sizeof u.ut_user - 1);
  std::strncpy(u.ut_line, line.c_str(), sizeof u.ut_line - 1);
  FILE* f = std::fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fwrite(&u, sizeof u, 1, f);
  std::fclose(f);
}

TEST(NotifyTty, ChannelWritesToTheMentionedUsersTerminalsFromUtmp) {
  Pty pty;
  if (!pty.ok()) GTEST_SKIP() << "no pseudo-terminals here (posix_openpt failed)";
  ASSERT_EQ(::chmod(pty.path().c_str(), 0620), 0);
  struct passwd* pw = ::getpwuid(::getuid());
  if (!pw) GTEST_SKIP() << "this uid has no passwd entry";
  std::string me = pw->pw_name;
  testing::TempDir dir;
  std::string utmp = dir.path() + "/utmp";
  WriteUtmp(utmp, me, pty.path().substr(5));  // "pts/N"

  TtyOptions o;
  o.utmp_file = utmp;
  auto channel = MakeTtyChannel(o);
  ASSERT_TRUE(channel.ok());
  Status s = (*channel)->Send({"GPU 2 idle", "rota keep 17", "idle_warning", {me, "no-such-user-rota"}});
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(pty.Read(), "\r\n[rota] GPU 2 idle\r\nrota keep 17\r\n");

  Status nobody = (*channel)->Send({"x", "y", "idle_warning", {"no-such-user-rota"}});
  EXPECT_EQ(nobody.code(), StatusCode::kNotFound);
  EXPECT_NE(nobody.message().find("no-such-user-rota: no such user"), std::string::npos) << nobody.message();
  Status none = (*channel)->Send({"x", "y", "idle_warning", {}});
  EXPECT_EQ(none.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tty_test
}  // namespace rota::notify

// Tested by tty_test.cc: the selection and the text as pure functions, the write on a
// pseudo-terminal the test opens, the channel with a utmp file the test writes.
//
// Design: written by hand rather than running write(1) or wall(1): those take the target from
// the caller's own session and refuse or prompt in ways a daemon cannot answer, and they would
// need the user's name on a command line. The rules are write(1)'s (owner, mesg y), plus: no
// symbolic link anywhere on the path (a user cannot point Rota at another file), the checks
// repeated on the opened descriptor (no race between lstat and open), and no control characters.
#include "notify/tty.h"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utmpx.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>

#include "notify/channel_check.h"

namespace rota::notify {

namespace {

bool ValidLine(const std::string& line) {
  if (line.empty() || line[0] == '/' || line.find("..") != std::string::npos) return false;
  for (char c : line) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' ||
              c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

std::string Errno(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// Opens `path` (absolute) for writing without following a symbolic link at any component.
int OpenNoFollow(const std::string& path) {
  int dir = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return -1;
  size_t start = 1;
  while (true) {
    size_t slash = path.find('/', start);
    std::string part = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (slash == std::string::npos) {
      int fd = ::openat(dir, part.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
      int saved = errno;
      ::close(dir);
      errno = saved;
      return fd;
    }
    int next = ::openat(dir, part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int saved = errno;
    ::close(dir);
    errno = saved;
    if (next < 0) return -1;
    dir = next;
    start = slash + 1;
  }
}

std::vector<UtmpEntry> ReadUtmp(const std::string& file) {
  // The utmpx functions keep their position and file name in process-wide state.
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  utmpxname(file.empty() ? _PATH_UTMPX : file.c_str());
  setutxent();
  std::vector<UtmpEntry> out;
  while (struct utmpx* u = getutxent()) {
    UtmpEntry e;
    e.type = u->ut_type;
    e.user.assign(u->ut_user, strnlen(u->ut_user, sizeof u->ut_user));
    e.line.assign(u->ut_line, strnlen(u->ut_line, sizeof u->ut_line));
    out.push_back(std::move(e));
  }
  endutxent();
  if (!file.empty()) utmpxname(_PATH_UTMPX);
  return out;
}

std::optional<uid_t> UserId(const std::string& user) {
  struct passwd pw {};
  struct passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || !found) return std::nullopt;
  return found->pw_uid;
}

class TtyChannel final : public Channel {
 public:
  explicit TtyChannel(TtyOptions options) : options_(std::move(options)) {}

  std::string Describe() const override {
    return "terminals (utmp " + (options_.utmp_file.empty() ? std::string(_PATH_UTMPX) : options_.utmp_file) +
           ")";
  }

  Status Send(const Message& message) override {
    if (message.mentions.empty()) return InvalidArgument(Describe() + ": no user to write to");
    std::vector<UtmpEntry> entries = ReadUtmp(options_.utmp_file);
    std::string text = TerminalText(message);
    int written = 0;
    std::vector<std::string> problems;
    for (const std::string& user : message.mentions) {
      auto uid = UserId(user);
      if (!uid) {
        problems.push_back(user + ": no such user");
        continue;
      }
      std::map<std::string, TtyStat> stats;
      for (const UtmpEntry& e : entries) {
        if (e.user != user || !ValidLine(e.line)) continue;
        std::string path = "/dev/" + e.line;
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0) continue;
        stats[path] = TtyStat{S_ISLNK(st.st_mode), S_ISCHR(st.st_mode), st.st_uid, st.st_mode};
      }
      TtySelection sel = SelectTtys(entries, user, *uid, stats);
      for (const std::string& s : sel.skipped) problems.push_back(user + " " + s);
      for (const std::string& path : sel.ttys) {
        Status s = WriteToTty(path, *uid, text, options_.timeout);
        if (s.ok()) {
          ++written;
        } else {
          problems.push_back(user + " " + s.message());
        }
      }
      if (sel.ttys.empty() && sel.skipped.empty()) problems.push_back(user + ": not logged in");
    }
    if (written > 0) return Status::Ok();
    std::string m = Describe() + ": no terminal took the message";
    for (size_t i = 0; i < problems.size(); ++i) m += (i ? "; " : " (") + problems[i];
    return NotFound(problems.empty() ? m : m + ")");
  }

 private:
  TtyOptions options_;
};

}  // namespace

TtySelection SelectTtys(const std::vector<UtmpEntry>& entries, const std::string& user, uid_t uid,
                        const std::map<std::string, TtyStat>& stats) {
  std::set<std::string> ttys, skipped;
  for (const UtmpEntry& e : entries) {
    if (e.type != USER_PROCESS || e.user != user) continue;
    if (!ValidLine(e.line)) {
      skipped.insert("\"" + e.line + "\": not a terminal name");
      continue;
    }
    std::string path = "/dev/" + e.line;
    auto it = stats.find(path);
    if (it == stats.end()) {
      skipped.insert(path + ": does not exist");
    } else if (it->second.is_symlink) {
      skipped.insert(path + ": a symbolic link");
    } else if (!it->second.is_char_device) {
      skipped.insert(path + ": not a terminal device");
    } else if (it->second.uid != uid) {
      skipped.insert(path + ": owned by someone else (a stale login)");
    } else if (!(it->second.mode & S_IWGRP)) {
      skipped.insert(path + ": messages off (mesg n)");
    } else {
      ttys.insert(path);
    }
  }
  TtySelection sel;
  sel.ttys.assign(ttys.begin(), ttys.end());
  sel.skipped.assign(skipped.begin(), skipped.end());
  return sel;
}

std::string TerminalText(const Message& message) {
  std::string raw = "[rota] " + message.subject;
  if (!message.text.empty()) raw += "\n" + message.text;
  std::string out = "\r\n";
  for (size_t i = 0; i < raw.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(raw[i]);
    if (c == '\n') {
      out += "\r\n";
    } else if (c == '\r') {
      if (i + 1 < raw.size() && raw[i + 1] == '\n') continue;
      out += "\r\n";
    } else if (c < 0x20 || c == 0x7f) {
      out += '?';
    } else if (c == 0xC2 && i + 1 < raw.size() && static_cast<unsigned char>(raw[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(raw[i + 1]) <= 0x9F) {
      out += '?';  // a C1 control character (U+0080..U+009F), e.g. CSI
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\r\n";
}

Status WriteToTty(const std::string& path, uid_t uid, const std::string& text,
                  std::chrono::milliseconds timeout) {
  if (path.rfind("/dev/", 0) != 0 || path.find("..") != std::string::npos) {
    return InvalidArgument(path + ": not a device under /dev");
  }
  int fd = OpenNoFollow(path);
  if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
    return FailedPrecondition(path + ": a symbolic link on the path (never followed)");
  }
  if (fd < 0) return Unavailable(Errno(path.c_str()));
  struct stat st {};
  Status result;
  if (::fstat(fd, &st) != 0) {
    result = Unavailable(Errno(path.c_str()));
  } else if (!S_ISCHR(st.st_mode) || !::isatty(fd)) {
    result = FailedPrecondition(path + ": not a terminal");
  } else if (st.st_uid != uid) {
    result = FailedPrecondition(path + ": owned by someone else");
  } else if (!(st.st_mode & S_IWGRP)) {
    result = FailedPrecondition(path + ": messages off (mesg n)");
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  size_t done = 0;
  while (result.ok() && done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) {
      result = Unavailable(Errno(path.c_str()));
      break;
    }
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result = Unavailable(path + ": timed out after " + std::to_string(timeout.count()) +
                           " ms (the terminal is not reading: suspended with ^S?)");
      break;
    }
    struct pollfd p {
      fd, POLLOUT, 0
    };
    ::poll(&p, 1, static_cast<int>(left.count()));
  }
  ::close(fd);
  return result;
}

StatusOr<std::unique_ptr<Channel>> MakeTtyChannel(TtyOptions options) {
  if (Status s = CheckTtyOptions(options); !s.ok()) return s;
  return std::unique_ptr<Channel>(new TtyChannel(std::move(options)));
}

}  // namespace rota::notify

// The terminal channel: a few lines written to each terminal of the users concerned, like
// write(1). Message::mentions are user names.
//
// A terminal gets the message only when utmp lists the user as logged in on it and the device
// node (under /dev, reached without following any symbolic link) is a character device owned by
// that user with the group write bit set (`mesg y`), checked again on the opened descriptor,
// which must be a terminal. Writes are non-blocking with a deadline, O_NOCTTY, and the text is
// cleaned of control characters (no escape sequences reach a terminal).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "notify/channel.h"

namespace rota::notify {

// One utmp record, as getutxent gives it.
struct UtmpEntry {
  short type = 0;    // ut_type: only USER_PROCESS counts
  std::string user;  // ut_user
  std::string line;  // ut_line, the device under /dev: "pts/3", "tty2"
};

// What lstat says about a device node.
struct TtyStat {
  bool is_symlink = false;
  bool is_char_device = false;
  uid_t uid = 0;
  mode_t mode = 0;
};

struct TtySelection {
  std::vector<std::string> ttys;  // "/dev/pts/3", sorted, each once
  // Why the user's other sessions were left out: "/dev/pts/4: messages off (mesg n)".
  std::vector<std::string> skipped;
};

// Pure: the terminals of `user` (uid `uid`) that may be written to, given the utmp records and
// lstat results by path ("/dev/pts/3"; a path missing from `stats` does not exist). Lines that
// are empty, absolute or contain ".." are refused.
TtySelection SelectTtys(const std::vector<UtmpEntry>& entries, const std::string& user, uid_t uid,
                        const std::map<std::string, TtyStat>& stats);

// Pure: the text written to a terminal: "\r\n[rota] SUBJECT\r\nTEXT\r\n" with control characters
// (C0 but '\n', DEL, C1, ESC) replaced by '?' and every line break as CRLF.
std::string TerminalText(const Message& message);

struct TtyOptions {
  std::chrono::milliseconds timeout{1000};  // per terminal
  std::string utmp_file;                    // empty: the system's (_PATH_UTMPX)
};

StatusOr<std::unique_ptr<Channel>> MakeTtyChannel(TtyOptions options);

// Writes `text` to the terminal at `path` (an absolute path under /dev) if it is a terminal
// owned by `uid` that accepts messages, within `timeout`. Exposed for tests (a pseudo-terminal
// the test opened).
Status WriteToTty(const std::string& path, uid_t uid, const std::string& text,
                  std::chrono::milliseconds timeout);

}  // namespace rota::notify

// Every refused request is logged, with who asked, what and why: an admin reading the journal
// sees an attack (another user's job, a forged field, a flood) as it happens. A flood must not
// flood the log in turn, so each caller gets a few lines a minute; what is held back is counted
// and said in one line when the minute is over.
//
// Contract: Note() decides, and returns the lines to log (none when it is held back); the
// caller writes them (Write). Time comes in as `now`; no clock is read. Not thread-safe: the event loop's.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/types.h"

namespace rota::daemon {

class RefusalLog {
 public:
  // Lines per caller per window, and the window.
  static constexpr int kLinesPerWindow = 10;
  static constexpr Time kWindow = 60;

  // A refusal of `op` for `who` (a user name, "uid N", an address) with `status`, counted against
  // the caller `key` (a uid, an address: what one attacker cannot multiply). The returned lines are
  // what to log now, in order: a summary of the last window's held-back refusals when one has
  // just ended, then this refusal's line unless it is held back.
  std::vector<std::string> Note(const std::string& key, std::string_view who, std::string_view op, const Status& status,
                                Time now);

  // Whether a refusal with this code is logged at warning (an attempt on what is not the
  // caller's, a limit reached) rather than at info (a malformed request).
  static bool Warns(StatusCode code);
  // Writes Note's lines to the log at the level of `code`, each after `prefix` ("HTTP: ").
  static void Write(const std::vector<std::string>& lines, StatusCode code, std::string_view prefix = "");

  // How many callers' windows are kept (bounded: those of callers gone quiet are dropped).
  std::size_t callers() const { return windows_.size(); }

 private:
  struct Window {
    Time start = 0;
    int lines = 0;
    std::int64_t held = 0;
  };
  std::map<std::string, Window> windows_;
};

}  // namespace rota::daemon

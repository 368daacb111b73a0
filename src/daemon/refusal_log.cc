// Tested by refusal_log_test.cc.
#include "daemon/refusal_log.h"

#include <iterator>

#include <spdlog/spdlog.h>

#include "api/protocol.h"

namespace rota::daemon {

bool RefusalLog::Warns(StatusCode code) {
  return code == StatusCode::kPermissionDenied || code == StatusCode::kResourceExhausted;
}

void RefusalLog::Write(const std::vector<std::string>& lines, StatusCode code, std::string_view prefix) {
  const spdlog::level::level_enum level = Warns(code) ? spdlog::level::warn : spdlog::level::info;
  for (const std::string& line : lines) spdlog::log(level, "{}{}", prefix, line);
}

std::vector<std::string> RefusalLog::Note(const std::string& key, std::string_view who, std::string_view op,
                                          const Status& status, Time now) {
  std::vector<std::string> out;
  // Windows of callers who went quiet are dropped as they end, so the map holds only the active.
  if (windows_.size() > 4096) {
    for (auto it = windows_.begin(); it != windows_.end();) {
      it = now - it->second.start >= kWindow && it->second.held == 0 ? windows_.erase(it) : std::next(it);
    }
  }
  Window& w = windows_[key];
  if (now - w.start >= kWindow) {
    if (w.held > 0) {
      out.push_back("refused " + std::to_string(w.held) + " more request(s) from " + std::string(who) +
                    " in the minute before (not logged one by one)");
    }
    w = Window{now, 0, 0};
  }
  if (w.lines >= kLinesPerWindow) {
    ++w.held;
    return out;
  }
  ++w.lines;
  out.push_back("refused " + std::string(op.empty() ? "a request" : op) + " from " + std::string(who) + ": " +
                api::ErrorCode(status.code()) + ": " + status.message() +
                (w.lines == kLinesPerWindow ? " (more refusals from " + std::string(who) +
                                                  " this minute are counted, not logged one by one)"
                                            : ""));
  return out;
}

}  // namespace rota::daemon

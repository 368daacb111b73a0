// What the two request targets share (request_line.cc, http_request.cc): a daemon in the process
// that serves 64 inputs in a row before a new one starts (starting one costs 60 ms: its store,
// threads and first passes; one per input fuzzed at 15 inputs a second), and a quiet log.
#pragma once

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "fuzz/fuzz.h"
#include "testing/daemon/in_process.h"

namespace rota::fuzz {

class ReusedDaemon {
 public:
  explicit ReusedDaemon(std::string config) : config_(std::move(config)) {}

  // Counts an input: every 64th ends the daemon (the next Get starts a new one).
  void NextInput() {
    if (daemon_ && ++served_ % 64 == 0) daemon_.reset();
  }
  // The daemon, started when first needed.
  testing::InProcessDaemon& Get() {
    if (!daemon_) {
      daemon_ = std::make_unique<testing::InProcessDaemon>(config_, testing::kTuesdayMorning);
      Require(daemon_->ok(), "the daemon starts");
    }
    return *daemon_;
  }

 private:
  std::string config_;
  std::unique_ptr<testing::InProcessDaemon> daemon_;
  int served_ = 0;
};

// The daemon's log (a line per refused request) only where a finding needs it: ROTA_FUZZ_LOG=1.
inline void QuietLog() {
  if (std::getenv("ROTA_FUZZ_LOG") == nullptr) spdlog::set_level(spdlog::level::warn);
}

}  // namespace rota::fuzz

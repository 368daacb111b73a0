// Tested by priority_test.cc (time-of-day defaults) and scheduler_test.cc.
#include "core/policy.h"

namespace rota {

const char* AlgorithmName(Algorithm a) {
  switch (a) {
    case Algorithm::kFifo: return "fifo";
    case Algorithm::kBackfill: return "backfill";
    case Algorithm::kRota: return "rota";
  }
  return "rota";
}

const char* AccountModeName(AccountMode m) {
  switch (m) {
    case AccountMode::kUser: return "user";
    case AccountMode::kProject: return "project";
    case AccountMode::kHybrid: return "hybrid";
  }
  return "user";
}

std::optional<Algorithm> ParseAlgorithm(std::string_view name) {
  for (Algorithm a : kAlgorithms) {
    if (name == AlgorithmName(a)) return a;
  }
  return std::nullopt;
}

std::optional<AccountMode> ParseAccountMode(std::string_view name) {
  for (AccountMode m : kAccountModes) {
    if (name == AccountModeName(m)) return m;
  }
  return std::nullopt;
}

std::vector<TimeOfDayRule> Policy::DefaultTimeOfDay() {
  constexpr std::uint8_t kWeekdays = 0x1f;  // Monday to Friday
  return {
      {kWeekdays, 14 * 60, 18 * 60, 0.5},  // the afternoon rush: heavy jobs count half
      {0x7f, 22 * 60, 8 * 60, 1.5},        // nights: heavy jobs gain
  };
}

}  // namespace rota

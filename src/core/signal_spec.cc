// Tested by signal_spec_test.cc.
#include "core/signal_spec.h"

#include <csignal>
#include <cctype>
#include <optional>

namespace rota {

namespace {

struct NamedSignal {
  const char* name;
  int number;
};

constexpr NamedSignal kSignals[] = {
    {"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"ABRT", SIGABRT},
    {"KILL", SIGKILL}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"PIPE", SIGPIPE},
    {"ALRM", SIGALRM}, {"TERM", SIGTERM}, {"CONT", SIGCONT}, {"STOP", SIGSTOP},
    {"TSTP", SIGTSTP}, {"XCPU", SIGXCPU}, {"URG", SIGURG},   {"WINCH", SIGWINCH},
};

constexpr const char* kSignalHelp = "expected SIGNAL[@SECONDS] such as USR1@120, SIGUSR2@60, 10@30 or TERM";

}  // namespace

StatusOr<SignalSpec> ParseSignalSpec(std::string_view text) {
  const std::string quoted = "\"" + std::string(text) + "\": ";
  SignalSpec spec;
  std::string_view sig = text, grace;
  if (auto at = text.find('@'); at != std::string_view::npos) {
    sig = text.substr(0, at);
    grace = text.substr(at + 1);
    if (grace.empty()) return InvalidArgument(quoted + kSignalHelp);
  }
  if (sig.substr(0, 2) == "B:") sig.remove_prefix(2);
  if (std::optional<long long> number = ParseWholeNumber(sig, 1, 64)) {
    spec.signal = static_cast<int>(*number);
  } else {
    std::string name;
    for (char c : sig) name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (name.rfind("SIG", 0) == 0) name.erase(0, 3);
    for (const NamedSignal& s : kSignals) {
      if (name == s.name) spec.signal = s.number;
    }
    if (spec.signal == 0) return InvalidArgument(quoted + kSignalHelp);
  }
  if (!grace.empty()) {
    if (std::optional<long long> secs = ParseWholeNumber(grace, 0, 86400)) {
      spec.grace = *secs;
    } else {
      std::optional<Duration> d = ParseDuration(grace);
      if (!d) return InvalidArgument(quoted + "the part after @ is seconds before the kill (e.g. USR1@120 or USR1@2m)");
      spec.grace = *d;
    }
    if (spec.grace > 86400) return InvalidArgument(quoted + "at most one day (86400 s) before the kill");
  }
  return spec;
}

std::string SignalName(int signal) {
  for (const NamedSignal& s : kSignals) {
    if (s.number == signal) return std::string("SIG") + s.name;
  }
  return "signal " + std::to_string(signal);
}

}  // namespace rota

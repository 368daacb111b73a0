// `rota gpus [--json] [--watch [SECONDS]] [--color auto|always|never]`: each card now, in
// gpustat's spirit. The screen is FormatGpus's (gpus_format.cc, tested by gpus_format_test.cc);
// this file asks the daemon, decides on colour and runs the watch loop. Tested end to end by
// tests/daemon/test_cli.py.
//
// Design of --watch: SIGINT and SIGTERM are blocked and read from a signalfd, so one poll()
// waits for the next refresh, the daemon's reply and a signal alike: no busy loop, and no race
// between checking a flag and going to sleep. Each refresh opens a new connection, so a daemon
// that restarted is picked up by the next frame; a refresh waits at most kReplyTimeoutMs, so a
// hung daemon shows as an error in the frame instead of a frozen screen.
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>

#include "api/protocol.h"
#include "cli/daemon_client.h"
#include "cli/gpus_format.h"

namespace rota::cli {

namespace {

constexpr int kDefaultWatchSeconds = 2;
constexpr int kReplyTimeoutMs = 10000;

struct GpusArgs {
  bool json = false;
  std::string watch;                  // the --watch value; "" when given without one
  CLI::Option* watch_flag = nullptr;  // tells whether --watch was given at all
  std::string color = "auto";
};

// `auto`: colour when stdout is a terminal that can show it and the user did not opt out
// (https://no-color.org: $NO_COLOR set and not empty).
bool UseColor(const std::string& mode) {
  if (mode == "never") return false;
  if (mode == "always") return true;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && *no_color != '\0') return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) return false;
  return ::isatty(STDOUT_FILENO) == 1;
}

void Write(const std::string& text) {
  PrintText(text);
  std::fflush(stdout);
}

int RunOnce(const ClientOptions& options, const GpusArgs& args) {
  auto reply = CallDaemon(options, {{"op", "gpus"}});
  if (!reply.ok()) return Fail(reply.status());
  if (args.json) {
    PrintJson(*reply);  // the whole reply: scripts need time, sampled_at and sample_error too
  } else {
    Write(FormatGpus(*reply, {UseColor(args.color)}));
  }
  return 0;
}

// Blocks SIGINT and SIGTERM and reads them from a signalfd; restores the mask on destruction.
class StopSignals {
 public:
  StopSignals() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    sigprocmask(SIG_BLOCK, &set_, &old_);
    fd_ = ::signalfd(-1, &set_, SFD_CLOEXEC | SFD_NONBLOCK);
  }
  ~StopSignals() {
    if (fd_ >= 0) ::close(fd_);
    sigprocmask(SIG_SETMASK, &old_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  int fd() const { return fd_; }
  // Waits up to `timeout_ms` for a stop signal; true when one came (and was taken).
  bool Wait(int timeout_ms) {
    pollfd p{fd_, POLLIN, 0};
    int rc;
    do {
      rc = ::poll(&p, 1, timeout_ms);
    } while (rc < 0 && errno == EINTR);
    return rc > 0 && Take();
  }
  // Takes a pending stop signal off the signalfd, so that restoring the mask does not deliver it
  // and kill the process after all. True when there was one.
  bool Take() const {
    signalfd_siginfo info{};
    return ::read(fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info);
  }

 private:
  sigset_t set_{};
  sigset_t old_{};
  int fd_ = -1;
};

// One refresh: the daemon's `gpus` reply. Returns early with *stopped set when a stop signal
// comes while waiting.
StatusOr<nlohmann::json> Fetch(const ClientOptions& options, const StopSignals& signals, bool* stopped) {
  auto conn = Connect(options);
  if (!conn.ok()) return conn.status();
  if (Status sent = conn->Send({{"op", "gpus"}}); !sent.ok()) return sent;
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(kReplyTimeoutMs);
  while (true) {
    if (!conn->HasBufferedLine()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return Unavailable("rotad did not answer within " + std::to_string(kReplyTimeoutMs / 1000) + "s");
      pollfd fds[2] = {{conn->fd(), POLLIN, 0}, {signals.fd(), POLLIN, 0}};
      int rc = ::poll(fds, 2, static_cast<int>(left));
      if (rc < 0 && errno != EINTR) return Unavailable(std::string("cannot wait for rotad: ") + std::strerror(errno));
      if (rc > 0 && fds[1].revents != 0 && signals.Take()) {
        *stopped = true;
        return Unavailable("stopped");
      }
      if (rc <= 0) continue;
    }
    auto reply = conn->Receive(0);  // reads what is there; a partial line stays buffered
    if (!reply.ok()) {
      if (conn->TimedOut()) continue;
      return reply.status();
    }
    if (Status st = api::StatusOfReply(*reply); !st.ok()) return st;
    return reply;
  }
}

std::string ErrorFrame(const Status& status, int seconds) {
  std::time_t now = static_cast<std::time_t>(Now());
  std::tm tm{};
  char clock[16] = "?";
  if (localtime_r(&now, &tm)) std::strftime(clock, sizeof clock, "%H:%M:%S", &tm);
  return std::string(clock) + "  rota: " + status.message() + " (trying again every " + std::to_string(seconds) +
         "s)\n";
}

// Redraws until SIGINT or SIGTERM. On a terminal each frame replaces the last (the cursor goes
// home and every line is cleared to its end, which does not flicker as a full clear does);
// elsewhere frames follow each other, separated by a blank line. With --json: one reply per line.
int RunWatch(const ClientOptions& options, const GpusArgs& args, int seconds) {
  const bool terminal = !args.json && ::isatty(STDOUT_FILENO) == 1;
  const bool color = !args.json && UseColor(args.color);
  StopSignals signals;
  if (terminal) Write("\x1b[?25l\x1b[H\x1b[2J");  // hide the cursor, start on a clean screen
  for (bool first = true;; first = false) {
    bool stopped = false;
    auto reply = Fetch(options, signals, &stopped);
    if (stopped) break;
    std::string frame;
    if (args.json) {
      const nlohmann::json& object = reply.ok() ? *reply : api::ErrorReply(reply.status());
      frame = object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    } else {
      std::string body = reply.ok() ? FormatGpus(*reply, {color}) : ErrorFrame(reply.status(), seconds);
      if (terminal) {
        frame = "\x1b[H";
        for (char c : body) frame += c == '\n' ? std::string("\x1b[K\n") : std::string(1, c);
        frame += "\x1b[J";
      } else {
        frame = (first ? "" : "\n") + body;
      }
    }
    Write(frame);
    if (signals.Wait(seconds * 1000)) break;
  }
  if (terminal) Write("\x1b[?25h");  // the cursor back
  return 0;
}

int RunGpus(const ClientOptions& options, const GpusArgs& args) {
  if (args.watch_flag == nullptr || args.watch_flag->count() == 0) return RunOnce(options, args);
  int seconds = kDefaultWatchSeconds;
  if (!args.watch.empty()) {
    char* end = nullptr;
    errno = 0;
    long v = std::strtol(args.watch.c_str(), &end, 10);
    if (errno != 0 || end == args.watch.c_str() || *end != '\0' || v < 1 || v > 86400) {
      return Fail(InvalidArgument("--watch takes whole seconds from 1 to 86400, not \"" + args.watch + "\""));
    }
    seconds = static_cast<int>(v);
  }
  return RunWatch(options, args, seconds);
}

}  // namespace

void AddGpusCommand(CLI::App& app, ClientOptions* options, int* exit_code) {
  auto args = std::make_shared<GpusArgs>();
  CLI::App* c = app.add_subcommand("gpus", "Show each GPU now: temperature, load, memory and who is on it");
  c->footer(
      "Columns: GPU NAME TEMP UTIL MEMORY (used/total GiB) HOLDERS. HOLDERS lists:\n"
      "  user/JOB:name(MEM tier [session] H:MM left)  a Rota job or session; MEM is what its processes use\n"
      "      on this card (GiB), \"used/share\" for a memory share, ? when unknown\n"
      "  bob/outside(3.2G)        processes no Rota job covers (\"pid 4242\" when the user is unknown)\n"
      "  carol/18!(2.0G not allocated here)  a job's processes on a card the job does not hold\n"
      "  DRAINED by alice: why, or DRAINED (health): error  no new work goes to the card; \"; on it:\" lists\n"
      "      what still runs there\n"
      "  SUSPECT: error           the card's last sample failed; no new work goes to it\n"
      "MIG slices are the \"\u2514 PROFILE\" lines under their card. A warning line comes first when the last\n"
      "GPU sample failed (the values are then from the time it names).\n"
      "Colours (--color auto: on a terminal, unless $NO_COLOR is set): temperature red from 80C, utilisation\n"
      "green (yellow from 90%), users cyan, outside and not-allocated processes and DRAINED red, SUSPECT yellow.\n"
      "--json prints the daemon's whole reply (docs/api.md, op gpus); with --watch one reply per line.");
  AddSocketFlag(c, options);
  c->add_flag("--json", args->json, "print the daemon's reply as JSON");
  args->watch_flag = c->add_option("--watch,-w", args->watch, "redraw every SECONDS (default 2) until Ctrl-C")
                         ->expected(0, 1)
                         ->type_name("[SECONDS]");
  c->add_option("--color", args->color, "colour the output: auto (default), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->type_name("WHEN");
  c->callback([options, args, exit_code] { *exit_code = RunGpus(*options, *args); });
}

}  // namespace rota::cli

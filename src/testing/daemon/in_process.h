// A whole rotad in the test's own process, for tests of the daemon's rules: its real store
// (SQLite in a temporary directory), scheduling, bookings, watches and notifications, on a
// FakeClock, a FakeEngine and FakeCards, with made-up users (uid 20001 alice, 20002 bob, 20003
// carol, 0 root as the admin, and a lab of 20 more: LabUser). Requests take the daemon's own
// pipeline (Daemon::Call), as from its socket.
// Virtual time moves only when the test says (Advance), jumping from one deadline of the daemon
// to the next, so that a rule that takes 30 minutes takes milliseconds.
//
// What needs real processes stays in tests/daemon: permissions with real users, cgroups,
// restarts and re-adoption, the protocol on the socket, the browser.
#pragma once

#include <signal.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>

#include "daemon/daemon.h"
#include "testing/daemon/fake_cards.h"
#include "testing/daemon/fake_channel.h"
#include "testing/daemon/fake_engine.h"
#include "testing/fake_clock.h"
#include "testing/temp_dir.h"

namespace rota::testing {

// Where the in-process tests' clocks start: Tuesday 2026-12-01 09:00 UTC.
inline constexpr Time kTuesdayMorning = 1796115600;
// The made-up lab of the soak test (src/daemon/lab_soak_test.cc): LabUser(1..kLabUsers) is
// "lab01".."lab20", uid 20101..20120, no admin.
inline constexpr int kLabUsers = 20;
std::string LabUser(int i);
// A [gpus] table of `count` simulated A100 80 GB cards, for a test's configuration to start with.
std::string SimulatedCards(int count);

class InProcessDaemon {
 public:
  // A daemon on `config_text` (TOML, appended to a base that turns the HTTP front end off and
  // allows the made-up users), its clock at `start`. Fails the test (ADD_FAILURE) and leaves
  // ok() false when the daemon does not start.
  InProcessDaemon(const std::string& config_text, Time start);
  ~InProcessDaemon();
  InProcessDaemon(const InProcessDaemon&) = delete;
  InProcessDaemon& operator=(const InProcessDaemon&) = delete;

  bool ok() const { return daemon_ != nullptr; }
  FakeClock& clock() { return clock_; }
  FakeEngine& engine() { return *engine_; }
  // The GPU source (the configuration's simulated cards under what the test makes happen); a
  // reload makes a new one, without what was set on the old.
  FakeCards& cards() { return *cards_; }
  daemon::Daemon& daemon() { return *daemon_; }
  const std::string& dir() const { return dir_.path(); }

  // `request` (with "op"; "v" is added) from user `user` ("alice", "bob", "carol", "root"),
  // answered after the daemon's batch of events and the passes that follow it.
  nlohmann::json Call(const std::string& user, nlohmann::json request);
  // A request line as it came (any bytes, "v" not added) from `user`, and a request as the HTTP
  // front end hands it over (RequestPipeline::CallLine, CallHttp). Their reply, as soon as it
  // comes: the passes that follow are not waited for (the fuzz targets make thousands of calls).
  nlohmann::json CallLine(const std::string& user, std::string line);
  nlohmann::json CallHttp(const std::string& user, nlohmann::json request);
  // Submits `command` (a shell-free argv) for `user` with the job fields `job` (time_limit,
  // request, signal, ...); the job's id, or 0 (the test fails) when refused.
  JobId Submit(const std::string& user, nlohmann::json job);
  // The job as `rota show --json` gives it (to root).
  nlohmann::json Show(JobId id);
  std::string State(JobId id) { return Show(id).value("state", ""); }

  // Runs the daemon's loop until nothing more is ready.
  void Settle();
  // Moves virtual time to `t`, stopping at each deadline the daemon asks for on the way (its
  // passes run at the virtual time they were due).
  void AdvanceTo(Time t);
  void Advance(Duration d) { AdvanceTo(clock_.Now() + d); }
  // Takes a sample of the (simulated) cards now, as the sampler does every sample_interval, and
  // applies it: the base configuration sets a sample_interval of a day, so that samples come
  // only when the test takes them.
  void Sample();
  // Advances by `d`, taking a sample every `every`.
  void AdvanceSampling(Duration d, Duration every);
  // The channel [notify.channels.NAME] was made as (every channel is a FakeChannel); nullptr
  // for none. The notifier runs on its own thread: WaitFor what it does.
  FakeChannel* channel(const std::string& name);
  // Waits up to 10 s of real time for `done`, running the daemon's loop meanwhile; false if it
  // never came.
  bool WaitFor(const std::function<bool()>& done);

 private:
  // The made-up user's caller (the test fails for a name not made up).
  std::optional<daemon::Caller> CallerOf(const std::string& user) const;
  // Runs the loop until `reply` comes (the test fails when it does not), without settling.
  nlohmann::json AwaitReply(std::optional<nlohmann::json>& reply);

  sigset_t old_mask_;  // the daemon blocks the signals it reads from a signalfd; put back after
  TempDir dir_{"rota-inproc"};
  FakeClock clock_;
  FakeEngine* engine_ = nullptr;  // owned by the daemon
  FakeCards* cards_ = nullptr;    // owned by the daemon and its sampler
  std::mutex channels_mu_;
  std::map<std::string, FakeChannel*> channels_;  // owned by the notifier; the latest of each name
  std::unique_ptr<daemon::Daemon> daemon_;
};

}  // namespace rota::testing

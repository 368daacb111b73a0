#include "testing/daemon/in_process.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <optional>

#include "api/protocol.h"
#include "config/config.h"

namespace rota::testing {

namespace {

using nlohmann::json;

struct User {
  uid_t uid;
  bool admin;
};
const std::map<std::string, User>& Users() {
  static const std::map<std::string, User> users = [] {
    std::map<std::string, User> u = {
        {"alice", {20001, false}}, {"bob", {20002, false}}, {"carol", {20003, false}}, {"root", {0, true}}};
    for (int i = 1; i <= kLabUsers; ++i) u[LabUser(i)] = {static_cast<uid_t>(20100 + i), false};
    return u;
  }();
  return users;
}

StatusOr<daemon::UnixAccount> Account(uid_t uid) {
  for (const auto& [name, u] : Users()) {
    if (u.uid == uid) return daemon::UnixAccount{uid, uid, {uid}, name, "/tmp", "/bin/sh"};
  }
  return NotFound("no user " + std::to_string(uid));
}

// The base of every in-process daemon's configuration: no HTTP (no port to share between
// tests), jobs of the made-up users (root's too, for tests that want one).
constexpr char kBase[] = R"(
[web]
listen = ""
)";

}  // namespace

std::string LabUser(int i) {
  char name[8];
  std::snprintf(name, sizeof name, "lab%02d", i);
  return name;
}

std::string SimulatedCards(int count) {
  return "[gpus]\nsource = \"simulated\"\n[[gpus.card]]\nmodel = \"NVIDIA A100-SXM4-80GB\"\nmemory = \"80G\"\ncount = " +
         std::to_string(count) + "\n";
}

InProcessDaemon::InProcessDaemon(const std::string& config_text, Time start) : clock_(start) {
  pthread_sigmask(SIG_SETMASK, nullptr, &old_mask_);
  StatusOr<config::Config> config = config::ParseConfig(std::string(kBase) + config_text, "in-process.toml");
  if (!config.ok()) {
    ADD_FAILURE() << config.status().message();
    return;
  }
  // Samples only when the test takes them (Sample): the sampler's first, at the start, and then
  // one a day, which no test waits for.
  config->sample_interval = kDay;
  daemon::DaemonOptions options;
  options.state_dir = dir_.path() + "/state";
  options.socket_path = dir_.path() + "/rota.sock";
  options.kill_wait = 10;
  daemon::DaemonDeps deps;
  deps.clock = &clock_;
  deps.accounts = Account;
  deps.channels = [this](const notify::ChannelSpec& spec) -> StatusOr<std::unique_ptr<notify::Channel>> {
    auto c = std::make_unique<FakeChannel>(clock_);
    std::lock_guard<std::mutex> lock(channels_mu_);
    channels_[spec.name] = c.get();
    return std::unique_ptr<notify::Channel>(std::move(c));
  };
  deps.engine = [this](const daemon::EngineHost& host) -> StatusOr<std::unique_ptr<daemon::Engine>> {
    auto engine = std::make_unique<FakeEngine>(host.loop, host.events);
    engine_ = engine.get();
    return std::unique_ptr<daemon::Engine>(std::move(engine));
  };
  deps.devices = [this](const config::Config& c, daemon::SimulatedLoadsFn loads) -> std::shared_ptr<device::Devices> {
    auto cards = std::make_shared<FakeCards>(daemon::MakeConfiguredDevices(c, std::move(loads)));
    cards_ = cards.get();
    return cards;
  };
  StatusOr<std::unique_ptr<daemon::Daemon>> d = daemon::Daemon::Create(options, std::move(*config), deps);
  if (!d.ok()) {
    ADD_FAILURE() << "rotad did not start: " << d.status().message();
    return;
  }
  daemon_ = std::move(*d);
  Settle();
}

InProcessDaemon::~InProcessDaemon() {
  daemon_.reset();
  // Later tests in this process (the sanitized build runs many in one) start children that must
  // die of SIGTERM.
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

void InProcessDaemon::Settle() {
  // Turns until two in a row find nothing to do: a report of the engine comes at the next turn,
  // and a submission's pass after the daemon's 5 ms batch window (a real timer), which is waited
  // for only while submissions wait for it.
  for (int quiet = 0; quiet < 2;) {
    quiet = daemon_->loop().RunOnce(daemon_->SubmissionsBatching() ? 8 : 0) > 0 ? 0 : quiet + 1;
  }
}

std::optional<daemon::Caller> InProcessDaemon::CallerOf(const std::string& user) const {
  auto it = Users().find(user);
  if (it == Users().end()) {
    ADD_FAILURE() << "no made-up user " << user;
    return std::nullopt;
  }
  daemon::Caller caller;
  caller.uid = it->second.uid;
  caller.gid = it->second.uid;
  caller.name = user;
  caller.admin = it->second.admin;
  return caller;
}

json InProcessDaemon::Call(const std::string& user, json request) {
  const std::optional<daemon::Caller> caller = CallerOf(user);
  if (!caller) return json();
  request["v"] = api::kVersion;
  std::optional<json> reply;
  daemon_->Call(*caller, request, [&reply](json r) { reply = std::move(r); });
  for (int turns = 0; !reply && turns < 1000; ++turns) daemon_->loop().RunOnce(10);
  if (!reply) {
    ADD_FAILURE() << "no reply to " << request.dump();
    return json();
  }
  Settle();
  return *reply;
}

json InProcessDaemon::CallLine(const std::string& user, std::string line) {
  const std::optional<daemon::Caller> caller = CallerOf(user);
  if (!caller) return json();
  std::optional<json> reply;
  daemon_->CallLine(*caller, std::move(line), [&reply](json r) { reply = std::move(r); });
  return AwaitReply(reply);
}

json InProcessDaemon::CallHttp(const std::string& user, json request) {
  const std::optional<daemon::Caller> caller = CallerOf(user);
  if (!caller) return json();
  std::optional<json> reply;
  daemon_->CallHttp(*caller, std::move(request), [&reply](json r) { reply = std::move(r); });
  return AwaitReply(reply);
}

json InProcessDaemon::AwaitReply(std::optional<json>& reply) {
  // The reply comes from the loop's idle hook: at once, unless it waits for the engine.
  for (int turns = 0; !reply && turns < 1000; ++turns) daemon_->loop().RunOnce(turns < 2 ? 0 : 10);
  if (!reply) {
    ADD_FAILURE() << "no reply to a request";
    return json();
  }
  return *reply;
}

JobId InProcessDaemon::Submit(const std::string& user, json job) {
  if (!job.contains("command")) job["command"] = {"train"};
  if (!job.contains("cwd")) job["cwd"] = "/tmp";
  json reply = Call(user, {{"op", "submit"}, {"job", job}});
  if (!reply.value("ok", false)) {
    ADD_FAILURE() << "submit refused: " << reply.dump();
    return 0;
  }
  return reply.value("job_id", JobId{0});
}

json InProcessDaemon::Show(JobId id) {
  json reply = Call("root", {{"op", "show"}, {"job_id", id}});
  if (!reply.value("ok", false)) {
    ADD_FAILURE() << "show " << id << ": " << reply.dump();
    return json::object();
  }
  return reply.value("job", json::object());
}

void InProcessDaemon::Sample() {
  const std::uint64_t before = daemon_->samples_applied();
  daemon_->SampleSoon();
  for (int turns = 0; daemon_->samples_applied() == before && turns < 1000; ++turns) daemon_->loop().RunOnce(10);
  if (daemon_->samples_applied() == before) ADD_FAILURE() << "no sample came";
  Settle();
}

void InProcessDaemon::AdvanceSampling(Duration d, Duration every) {
  const Time end = clock_.Now() + d;
  while (clock_.Now() < end) {
    AdvanceTo(std::min(end, clock_.Now() + every));
    Sample();
  }
}

FakeChannel* InProcessDaemon::channel(const std::string& name) {
  std::lock_guard<std::mutex> lock(channels_mu_);
  auto it = channels_.find(name);
  return it == channels_.end() ? nullptr : it->second;
}

bool InProcessDaemon::WaitFor(const std::function<bool()>& done) {
  for (int turns = 0; turns < 1000; ++turns) {
    if (done()) return true;
    daemon_->loop().RunOnce(10);
  }
  return done();
}

void InProcessDaemon::AdvanceTo(Time t) {
  while (clock_.Now() < t) {
    const Time wake = clock_.wake();
    // The daemon's next deadline when it comes before `t` (it may be past already: then only
    // one second on, so that time always moves), else `t`.
    const Time next = wake != kNever && wake < t ? std::max(wake, clock_.Now() + 1) : t;
    clock_.Set(next);
    daemon_->WakeNotifier();  // it waits to be told that the time moved
    Settle();
  }
}

}  // namespace rota::testing

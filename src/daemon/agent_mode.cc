#include "daemon/agent_mode.h"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <optional>
#include <string_view>

#include "daemon/agent_board.h"
#include "daemon/deps.h"
#include "device/node_readings.h"
#include "exec/procfs.h"
#include "json/bounded.h"
#include "notify/curl_util.h"

namespace rota::daemon {

namespace {

std::string ShortHostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "";
  std::string name(buf);
  return name.substr(0, name.find('.'));
}

// SLURM_JOB_ID from the start of a process's environment (/proc/PID/environ, as the process was
// started), "" when absent; ReadingsOf drops a value that is not a job id. Only where Slurm's
// cgroup does not say (proctrack/linuxproc): a variable is the process's own word, a cgroup is
// not (docs/security.md, node agents).
std::string SlurmJobOfEnviron(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/environ";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  // One buffer for every process of every sample (the agent's loop is its only thread).
  static std::string text(256 * 1024, '\0');
  size_t have = 0;
  while (have < text.size()) {
    const ssize_t n = ::read(fd, text.data() + have, text.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    have += static_cast<size_t>(n);
  }
  ::close(fd);
  constexpr std::string_view kKey = "SLURM_JOB_ID=";
  std::string_view env(text.data(), have);
  for (size_t at = 0; at < env.size();) {
    size_t end = env.find('\0', at);
    if (end == std::string_view::npos) end = env.size();
    const std::string_view var = env.substr(at, end - at);
    if (var.substr(0, kKey.size()) == kKey) return std::string(var.substr(kKey.size()));
    at = end + 1;
  }
  return "";
}

// Who a GPU process of this node is, for the head (device::NodeProcess); nullopt when it is gone.
std::optional<device::NodeProcess> ReadNodeProcess(const device::ProcessInfo& p) {
  StatusOr<exec::ProcessIdentity> who = exec::ReadProcess(p.pid);
  StatusOr<unsigned long long> started = exec::ProcessStartTime(p.pid);
  if (!who.ok() || !started.ok()) return std::nullopt;
  device::NodeProcess np;
  np.pid = p.pid;
  np.start_time = *started;
  np.uid = who->uid;
  np.used_memory = p.used_memory;
  passwd pw{}, *found = nullptr;
  char buf[4096];
  if (::getpwuid_r(who->uid, &pw, buf, sizeof buf, &found) == 0 && found != nullptr) np.user = pw.pw_name;
  np.slurm_job = device::SlurmJobOfCgroup(who->cgroup);
  if (np.slurm_job.empty()) np.slurm_job = SlurmJobOfEnviron(p.pid);
  return np;
}

// The head's stop orders that pass device::OrdersToCarryOut against the readings just sent, each
// checked once more against the process as it is now (its start time: the pid not reused).
void CarryOut(const std::string& reply_body, const device::NodeReadings& sent) {
  StatusOr<nlohmann::json> reply = ParseBoundedJson(reply_body, 4);
  if (!reply.ok()) return;
  for (const device::StopOrder& o : device::OrdersToCarryOut(*reply, sent)) {
    StatusOr<unsigned long long> started = exec::ProcessStartTime(o.pid);
    if (!started.ok() || *started != o.start_time) continue;  // gone already
    if (::kill(o.pid, o.signal) != 0) {
      spdlog::warn("agent: cannot stop outside process {}: {}", o.pid, std::strerror(errno));
    } else {
      spdlog::info("agent: outside process {} sent signal {} (the head's outside_action)", o.pid, o.signal);
    }
  }
}

// Where to post (the head's URL with `path`, "/agent/readings") and as whom (the node's token).
struct HeadTarget {
  std::string url;
  std::string token;
};

// Nullopt (said) when the token file is refused or the head's URL is not http(s).
std::optional<HeadTarget> TargetOf(const AgentOptions& options, const char* path) {
  StatusOr<std::string> token = AgentBoard::ReadTokenFile(options.token_file);
  if (!token.ok()) {
    spdlog::error("agent: {}", token.status().message());
    return std::nullopt;
  }
  const std::string& head = options.head;
  if (head.rfind("http://", 0) != 0 && head.rfind("https://", 0) != 0) {
    spdlog::error("agent: the head's URL must start with http:// or https:// (got \"{}\")", head);
    return std::nullopt;
  }
  std::string url = head;
  while (!url.empty() && url.back() == '/') url.pop_back();
  return HeadTarget{url + path, std::move(*token)};
}

}  // namespace

int PokeHead(const AgentOptions& options) {
  const std::optional<HeadTarget> head = TargetOf(options, "/agent/poke");
  if (!head) return 1;
  notify::internal::PostOptions post;
  post.timeout = std::chrono::milliseconds(kPokeTimeoutMs);
  post.proxy = "none";
  StatusOr<notify::internal::HttpResponse> r =
      notify::internal::PostJson(head->url, "{}", {"Authorization: Bearer " + head->token}, post, "the head rotad");
  Status sent = !r.ok() ? r.status() : r->status != 200 ? notify::internal::HttpFailure(*r, "the head rotad") : Status();
  if (!sent.ok()) {
    spdlog::error("agent: poke: {}", sent.message());
    return 1;
  }
  return 0;
}

int RunAgent(const AgentOptions& options, const config::Config& config) {
  const std::string node = options.node.empty() ? ShortHostName() : options.node;
  const std::optional<HeadTarget> head = TargetOf(options, "/agent/readings");
  if (!head) return 1;
  const std::string& url = head->url;
  if (config.gpu_source == config::GpuSource::kSlurm) {
    spdlog::error(
        "agent: it reads this node's own GPUs: [gpus] source must be \"nvml\" (or \"simulated\"), "
        "not \"slurm\" (is this the head's rota.toml? give the agent its own with -c)");
    return 1;
  }
  std::shared_ptr<device::Devices> devices =
      MakeConfiguredDevices(config, [] { return std::vector<device::SimulatedLoad>(); });
  spdlog::info("agent: node {}, GPUs from {}, readings to {} every {} s", node, devices->Describe(), url,
               options.interval);

  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  sigprocmask(SIG_BLOCK, &stop, nullptr);
  const auto interval = std::chrono::duration<double>(options.interval);
  notify::internal::PostOptions post;
  post.timeout = std::chrono::milliseconds(static_cast<long long>(std::max(1.0, options.interval) * 1000));
  post.proxy = "none";  // the head is on the cluster's own network
  std::string last_error = "(none yet)";
  while (true) {
    const auto began = std::chrono::steady_clock::now();
    StatusOr<device::Snapshot> snap = devices->Sample();
    Status sent;
    if (!snap.ok()) {
      sent = snap.status();
    } else {
      const device::NodeReadings readings =
          device::ReadingsOf(node, *snap, static_cast<Time>(std::time(nullptr)), ReadNodeProcess);
      const std::string body = device::ReadingsToJson(readings).dump();
      StatusOr<notify::internal::HttpResponse> r =
          notify::internal::PostJson(url, body, {"Authorization: Bearer " + head->token}, post, "the head rotad");
      if (!r.ok()) {
        sent = r.status();
      } else if (r->status != 200) {
        sent = notify::internal::HttpFailure(*r, "the head rotad");
      } else {
        CarryOut(r->body, readings);
      }
    }
    // Said when it changes: a head that is away for an hour is one line, and its return another.
    const std::string now_error = sent.ok() ? "" : sent.message();
    if (now_error != last_error) {
      if (sent.ok()) {
        spdlog::info("agent: readings of {} GPU(s) accepted by the head", snap->gpus.size());
      } else {
        spdlog::warn("agent: {}; trying again every {} s", now_error, options.interval);
      }
      last_error = now_error;
    }
    const std::chrono::duration<double> left = interval - (std::chrono::steady_clock::now() - began);
    const double secs = std::max(0.0, left.count());  // seconds
    timespec wait{static_cast<time_t>(secs),
                  static_cast<long>((secs - static_cast<double>(static_cast<time_t>(secs))) * 1e9)};
    const int sig = ::sigtimedwait(&stop, nullptr, &wait);
    if (sig == SIGTERM || sig == SIGINT) {
      spdlog::info("agent: stopping");
      return 0;
    }
  }
}

}  // namespace rota::daemon

// The daemon's configuration (`/etc/rota/rota.toml`): the scheduling policy, where the GPUs come
// from, who the users and projects are, and a few paths. ParseConfig reads it into a plain value
// and reports every mistake in the file at once, each with file:line:column and what would be
// accepted; an empty file is a valid configuration equal to the defaults (Policy{}).
// The documented example of every key is packaging/rota.toml.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/booking.h"
#include "core/cluster.h"
#include "core/watch.h"
#include "core/policy.h"
#include "core/signal_spec.h"
#include "core/status.h"
#include "core/types.h"
#include "exec/container.h"
#include "notify/channels.h"
#include "notify/delivery.h"

namespace rota::config {

enum class GpuSource : std::uint8_t {
  kNvml,       // the real cards, through libnvidia-ml loaded at run time
  kSimulated,  // the cards described under [[gpus.card]]
  kSlurm,      // the GPUs (gres) of the Slurm partition's nodes ([engine] kind = "slurm")
};
const char* GpuSourceName(GpuSource s);

// [users.NAME]: who a user is and how to reach them. Their quota override is also written into
// Config::policy.quota.user_hours, their role into policy.quota.user_role.
struct UserConfig {
  std::string role;                  // a key of [quota.roles], or empty
  std::optional<double> quota_hours; // weekly GPU-hours overriding the role's; nullopt = the role's
  std::string email;
  // Chat mention ids for the notifier, one per platform; empty = none.
  std::string feishu;
  std::string dingtalk;
  std::string wecom;
  std::string slack;
  // Notifications ([notify]): the user's language ("" = [notify] language), the channels they are
  // told through and the events they want (nullopt = [notify] user_channels / user_events).
  std::string language;
  std::optional<std::vector<std::string>> channels;  // key "notify"
  std::optional<std::vector<std::string>> events;
};

// [notify] and [notify.channels.NAME]: where notifications go (docs/notify.md).
struct NotifyConfig {
  std::string language = "zh";                           // "zh" or "en"
  std::map<std::string, notify::ChannelSpec> channels;  // by name; secrets already read from their files
  std::map<std::string, int> per_minute;                 // by channel: its rate limit (0 = none)
  std::vector<std::string> admin_channels;               // where the admins' events go
  std::vector<std::string> admin_events;                 // default: notify::IsAdminEvent ones
  std::vector<std::string> user_channels;                // a user's channels unless they choose; default: all
  std::vector<std::string> user_events;                  // a user's events unless they choose; default: theirs
  notify::RetryRules retry;
  int fail_after = 3;             // failed attempts in a row before a channel is reported failing
  Duration time_limit_warning = 600;  // time_limit_soon this long before a job's limit (0 = never)
  Duration keep_messages = 30 * kDay;  // sent and failed notifications kept this long (0 = forever)
};

// [projects.NAME]: weekly GPU-hours of the project (mode "project") or its elastic pool on top of
// its users' quotas (mode "hybrid"). Also written into Config::policy.quota.project_hours.
struct ProjectConfig {
  double hours = -1;  // negative = unlimited
};

// [web]: the HTTP front end (docs/http.md): the JSON API, the page and /metrics.
struct WebConfig {
  std::string listen = "127.0.0.1:8080";  // "host:port"; "" = no HTTP at all
  std::string static_dir;                  // the page's files; "" = the build's ROTA_WEB_DIR
  bool public_read = false;                // read-only operations without sign-in (a wall display)
  bool metrics_public = false;             // /metrics without sign-in from other than loopback
  bool password_login = true;              // POST /auth/password through PAM (root daemons only)
  std::vector<std::string> allowed_hosts;  // Host names besides localhost, 127.0.0.1, [::1], listen's
  Duration login_ttl = 300;                // a `rota web` link is valid this long, once
  Duration session_ttl = 7 * 24 * 3600;    // a browser session lasts this long
  std::int64_t max_body = 1 << 20;         // bytes of one request body
  double rate = 50;                        // requests per second per client address (0 = no limit)
  double burst = 200;                      // ... in bursts of up to this many
  int threads = 64;                        // HTTP worker threads
  // Connections of one client address at once: a browser opens up to 6 per server, and a lab
  // behind one NAT address, or one person with two tabs, opens several browsers' worth.
  int connections_per_address = 24;
  Duration request_timeout = 10;           // a request must arrive whole this long after its first byte
  std::string tls_cert;                    // PEM certificate chain: serve HTTPS ("" = plain HTTP)
  std::string tls_key;                     // ... and its private key
  // Off loopback without TLS, the page would carry sessions and passwords in the clear: cookies are
  // Secure (a browser then keeps no session over http://) and password sign-in is refused, unless
  // the admin says the network is trusted (or a TLS proxy in front takes https://).
  bool insecure_http = false;
  std::string pam_service = "rota";        // the PAM service of password sign-in (/etc/pam.d/rota)
  std::string pam_dir;                     // where its file is ("" = the system's, /etc/pam.d)
};

// [limits]: how much of rotad one user may take (docs/security.md, "Limits"). Admins (root and
// the admin group) are exempt from the per-user limits and keep a reserve of the connections.
struct LimitsConfig {
  int connections_per_user = 64;   // open socket connections of one uid
  int connections = 4096;          // socket connections in all (also bounded by rotad's open-file limit)
  Duration idle_timeout = 300;     // a connection that sends nothing this long is closed (not a session's)
  Duration request_timeout = 10;   // a request line must arrive whole this long after its first byte
  int pending_per_user = 5000;     // pending jobs of one user (0 = no limit)
  double submit_rate = 20;         // submissions per second one user may keep up (0 = no limit)
  double submit_burst = 1000;      // ... in bursts of up to this many
  int ids_per_request = 1000;      // job ids in one cancel
  int history_limit = 1000;        // jobs in one history reply (more: ask for the next page)
  // What each job may take of the server besides its GPUs and memory: processes (pids.max, or
  // RLIMIT_NPROC of its user where the cgroup has no pids controller), open files per process
  // (RLIMIT_NOFILE), and a CPU weight per GPU (cpu.weight, where the cgroup has the controller;
  // the default is 100 for every job). 0 = not set.
  std::int64_t job_processes = 4096;
  std::int64_t job_open_files = 65536;
  int cpu_weight_per_gpu = 0;
};

// [engine]: what runs the jobs (docs/design.md, "Engines"; "The Slurm engine").
enum class EngineKind { kLocal, kSlurm };
struct EngineConfig {
  EngineKind kind = EngineKind::kLocal;
  // kind = "slurm": where Slurm's client commands are (sbatch, squeue, scancel, sinfo), the
  // SLURM_CONF they are run with ("" = Slurm's own default), the partition and account every job
  // is submitted to ("" = Slurm's defaults), the node jobs are pinned to ("" = any node of the
  // partition: the one-node set-up until the nodes' inventory comes from Slurm), how long one
  // command may take, and how often Slurm's queue is read.
  std::string bin_dir = "/usr/bin";
  std::string slurm_conf;
  std::string partition;
  std::string account;
  std::string node;
  Duration command_timeout = 10;
  double poll_interval = 1.0;  // seconds
  // [gpus] source = "slurm": what Slurm's gres do not tell of each GPU (untyped gres are shown
  // with this model; memory shares need the memory).
  std::string gpu_model = "GPU";
  MiB gpu_memory = 0;
  // How this installation names its jobs (<tag>-<id>) and reservations (<tag>-b<id>) in Slurm:
  // two Rotas in front of one Slurm need two tags, or each would take the other's for its own.
  // A letter, then letters, digits or '_' (no '-': "<tag>-<id>" reads back one way only).
  std::string tag = "rota";
  // Node agents (`rotad --agent` on each compute node, posting GPU readings over HTTP): the
  // directory of their tokens (`<node>.token`; "" = no agents), and how old readings may be
  // before a node's load reads unknown.
  std::string agent_tokens;
  Duration agent_stale_after = 30;
};

// [rules]: what `rota rules` says besides what the configuration decides (daemon/rules_text.h).
struct RulesConfig {
  std::string account;             // how a newcomer gets an account, in the admin's words ("" = ask an admin)
  std::vector<std::string> notes;  // the lab's own rules, one sentence each, in the admin's words
};

// [advice]: rent or wait (core/advice.h, `rota advise`).
struct AdviceConfig {
  std::string prices;              // the price table (CSV); "" = the one the build ships (ROTA_PRICES)
  Duration wait_threshold = kDay;  // advise renting when a job's expected wait passes this
};

// [containers]: jobs with --image (docs/design.md, "Containers"). runtime kNone: refused.
struct ContainersConfig {
  exec::ContainerRuntime runtime = exec::ContainerRuntime::kNone;
  std::string program;                     // the runtime's executable; "" = /usr/bin/<runtime>
  std::vector<std::string> runtime_args;   // global options before "run" (podman --runtime runc)
  std::vector<std::string> images = {"*"};  // the images a job may name (shell patterns); with
                                            // --pull never, only what the admin installed runs
  std::vector<exec::ContainerMount> mounts;  // every job's ("{user}" for the job's user)
  std::string data_dir;                    // the user's data directory ("/data/{user}"), when it exists
  bool network = false;                    // false: no network in the container
  bool allow_root = false;                 // true: the image's own user (root) instead of the job's
  std::vector<std::string> env;            // submit-environment names passed in besides the usual
  exec::ContainerGpus gpus = exec::ContainerGpus::kAuto;
  // The runtime's executable as used.
  std::string Program() const;
};

struct Config {
  // Not a setting: every job of a rotad runs on one node (core/policy.h, Policy::span_nodes).
  Policy policy = [] {
    Policy p;
    p.span_nodes = false;
    return p;
  }();
  EngineConfig engine;  // [engine]; read at start only (a reload keeps the engine it has)
  std::string timezone = "UTC";  // as written: a tz database name, an offset, "UTC", or a label given with utc_offset

  GpuSource gpu_source = GpuSource::kNvml;
  std::string nvml_library;  // empty: libnvidia-ml.so.1 from the loader's search path
  // source = "simulated": the cards, ordered by index; Gpu::nvlink holds positions in this vector.
  std::vector<Gpu> simulated_gpus;
  Duration sample_interval = 1;   // how often rotad samples the cards (seconds)
  Duration nvml_timeout = 2;      // how long one NVML sample may take before it is abandoned
  int drain_after = 3;            // failed samples of a card in a row before it is drained
  BookingRules bookings;          // [bookings]: the calendar's rules
  WatchRules watch;               // [watch]: idle, stuck and over-memory allocations
  WebConfig web;                  // [web]: HTTP API, page, metrics
  LimitsConfig limits;            // [limits]: what one user may take of rotad
  NotifyConfig notify;            // [notify]: channels, routing, retries
  RulesConfig rules;              // [rules]: the account text and the lab's own rules
  AdviceConfig advice;            // [advice]: the price table and when to advise renting
  ContainersConfig containers;    // [containers]: jobs in container images
  // [inventory] storage: paths whose free space (and per-user quota) `rota inventory` reports.
  std::vector<std::string> storage_paths;

  std::map<std::string, UserConfig> users;        // by user name (UTF-8)
  std::map<std::string, ProjectConfig> projects;  // by project name

  std::string admin_group;        // Unix group whose members are admins (root always is); empty = root only
  bool allow_root_jobs = false;   // may uid 0 submit jobs (which then run as root)? Off: jobs never run as root
  MiB default_mem_per_gpu = 0;    // host memory per GPU for jobs that ask for none; 0 = no limit
  // [policy] default_signal: the warning signal of jobs that ask for none ("USR1@120"); nullopt =
  // none, and such a job gets SIGTERM at its limit (or preemption), then SIGKILL.
  std::optional<SignalSpec> default_signal;
  std::string log = "stderr";     // "stderr" (journald picks it up) or an absolute file path
  std::string state_dir;          // empty: decided by the daemon (system or user mode)
  std::string socket;             // empty: decided by the daemon
};

// Parses configuration text. `name` is used in messages ("rota.toml:12:9: ..."). On error the
// Status (InvalidArgument) holds every problem found, one per line, in file order.
StatusOr<Config> ParseConfig(std::string_view text, std::string_view name);

// Reads and parses a file; a file that cannot be read is NotFound or PermissionDenied.
StatusOr<Config> LoadConfig(const std::string& path);

// One line for `rota config check`: GPUs, users, roles, projects and the policy.
std::string Summary(const Config& config);

// What is accepted but most likely a slip on a server with `server_memory` MiB (0: unknown),
// one message each: rotad logs them at start and reload, `rota config check` prints them.
std::vector<std::string> Warnings(const Config& config, MiB server_memory);

// This machine's memory in MiB (sysinfo); 0 when unknown.
MiB ServerMemory();

}  // namespace rota::config

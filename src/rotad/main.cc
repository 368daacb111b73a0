// rotad: the Rota daemon. Runs in the foreground (systemd's Type=notify, or a terminal).
// As root it serves the whole server (socket /run/rota/rota.sock, state /var/lib/rota); run by
// an ordinary user it serves that user alone (socket and state under the user's runtime and
// state directories). Exit codes: 0 stopped on SIGTERM/SIGINT; 1 could not start; 2 bad usage
// or an invalid configuration.
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <memory>

#include "api/protocol.h"
#include "cli/manual.h"
#include "config/config.h"
#include "daemon/agent_mode.h"
#include "daemon/daemon.h"
#include "daemon/deps.h"
#include "daemon/shipped.h"

namespace {

bool Exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string UserConfigPath() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  if (xdg && *xdg) return std::string(xdg) + "/rota/rota.toml";
  return std::string(home ? home : "") + "/.config/rota/rota.toml";
}

// "<3>" for an error, "<4>" a warning, "<6>" information, "<7>" debug: syslog's priorities.
// Every client connection is a descriptor: the soft limit (1024 under systemd) goes up to the
// hard one, at most 65536 ([limits] connections is kept within it). rotad's own libraries poll,
// never select, so descriptors above 1024 are safe. Jobs get theirs from [limits] (the shepherd
// sets them), not rotad's.
void RaiseOpenFileLimit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return;
  const rlim_t want = r.rlim_max == RLIM_INFINITY ? 65536 : std::min<rlim_t>(r.rlim_max, 65536);
  if (r.rlim_cur >= want) return;
  r.rlim_cur = want;
  (void)::setrlimit(RLIMIT_NOFILE, &r);
}

class SyslogPriority : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    // By spdlog's level: trace, debug, info, warn, err, critical, off.
    static constexpr char kPriority[] = "7764326";
    const char prefix[] = {'<', kPriority[static_cast<int>(msg.level) % 7], '>'};
    dest.append(prefix, prefix + 3);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<SyslogPriority>(); }
};

void SetUpLogging(const std::string& destination) {
  std::shared_ptr<spdlog::logger> logger;
  if (destination != "stderr") {
    try {
      logger = spdlog::basic_logger_mt("rotad", destination);
    } catch (const spdlog::spdlog_ex& e) {
      std::fprintf(stderr, "rotad: cannot log to %s: %s; logging to stderr\n", destination.c_str(), e.what());
    }
  }
  if (!logger) logger = spdlog::stderr_logger_mt("rotad-stderr");
  // Under journald the journal stamps each line itself, and takes a line's priority from a
  // "<N>" prefix (sd-daemon(3); SyslogLevelPrefix= is on by default), so `journalctl -p warning`
  // finds rotad's warnings and errors.
  const bool journal = std::getenv("JOURNAL_STREAM") != nullptr && destination == "stderr";
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<SyslogPriority>('*').set_pattern(journal ? "%*%l: %v" : "%Y-%m-%d %H:%M:%S.%e %l: %v");
  logger->set_formatter(std::move(formatter));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rotad: the Rota GPU scheduling daemon"};
  std::string config_path;
  std::string state_dir;
  std::string socket_path;
  std::string shepherd;
  int kill_wait = 10;
  bool verbose = false;
  app.add_option("-c,--config", config_path,
                 std::string("configuration file (default: ") + rota::api::kSystemConfig +
                     " as root, ~/.config/rota/rota.toml otherwise; built-in defaults when absent)");
  app.add_option("--state-dir", state_dir, "where the database and run files live (overrides the config)");
  app.add_option("--socket", socket_path, "the Unix socket to serve (overrides the config)");
  app.add_option("--shepherd", shepherd,
                 "the rota-shepherd program (default: next to rotad, else ../libexec/rota/ from rotad's directory)");
  app.add_option("--kill-wait", kill_wait, "seconds between SIGTERM and SIGKILL when stopping a job")
      ->check(CLI::Range(1, 3600));
  app.add_flag("-v,--verbose", verbose, "log debug messages");
  // The node agent's mode (daemon/agent_mode.h): on a compute node of a Slurm cluster.
  rota::daemon::AgentOptions agent;
  app.add_option("--agent", agent.head,
                 "run as a compute node's agent: post this node's GPU readings to the head rotad at this URL "
                 "(its [web] address)");
  app.add_option("--node", agent.node, "--agent: this node's name in Slurm (default: the short host name)");
  app.add_option("--token-file", agent.token_file, "--agent: this node's token (mode 0600)")
      ->default_val("/etc/rota/agent.token");
  app.add_option("--interval", agent.interval, "--agent: seconds between readings")
      ->default_val(5)
      ->check(CLI::Range(0.2, 3600.0));
  app.add_flag("--poke", agent.poke,
               "--agent: tell the head a job ended on this node and wait until it has submitted what the end "
               "let start (at most 5 s), then exit: for slurmd's Epilog on a node that cannot reach rotad's socket");
  app.set_version_flag("--version", std::string("rotad ") + rota::api::kDaemonVersion);
  bool manpage = false;
  app.add_flag("--manpage", manpage, "print rotad's man page (roff) and exit")->group("");  // for the package
  CLI11_PARSE(app, argc, argv);
  if (manpage) {
    rota::cli::ManInfo info{"rotad", rota::api::kDaemonVersion, "", "the Rota GPU scheduling daemon",
                            ".SH FILES\n.TP\n.I /etc/rota/rota.toml\nthe configuration (documented example: "
                            "/usr/share/doc/rota/rota.toml)\n.TP\n.I /var/lib/rota\nthe job store and run files\n"
                            ".TP\n.I /run/rota/rota.sock\nthe socket rota talks to\n"
                            ".SH SIGNALS\nSIGHUP reloads the configuration; SIGTERM stops rotad (running jobs keep "
                            "running and are adopted at the next start).\n.SH SEE ALSO\n.BR rota (1)\n"};
    const std::string page = rota::cli::ManPage(app, info, 8);
    std::fwrite(page.data(), 1, page.size(), stdout);
    return 0;
  }

  // The Epilog's poke reads no configuration: it names the head and the token, nothing more.
  if (agent.poke) {
    if (agent.head.empty()) {
      std::fprintf(stderr, "rotad: --poke needs --agent URL (the head rotad's [web] address)\n");
      return 2;
    }
    SetUpLogging("stderr");  // the Epilog's own output, whatever the configuration says
    return rota::daemon::PokeHead(agent);
  }
  const bool user_mode = ::geteuid() != 0;
  const bool explicit_config = !config_path.empty();
  if (!explicit_config) config_path = user_mode ? UserConfigPath() : rota::api::kSystemConfig;
  rota::config::Config config;
  if (explicit_config || Exists(config_path)) {
    rota::StatusOr<rota::config::Config> loaded = rota::config::LoadConfig(config_path);
    if (!loaded.ok()) {
      std::fprintf(stderr, "rotad: %s\n", loaded.status().message().c_str());
      return 2;
    }
    config = std::move(*loaded);
  } else {
    config_path.clear();
  }
  SetUpLogging(config.log);
  if (verbose) spdlog::set_level(spdlog::level::debug);
  if (!agent.head.empty()) return rota::daemon::RunAgent(agent, config);

  rota::daemon::DaemonOptions options;
  options.config_path = config_path;
  options.user_mode = user_mode;
  options.state_dir = !state_dir.empty() ? state_dir
                      : !config.state_dir.empty() ? config.state_dir
                      : user_mode ? rota::api::UserStateDir()
                                  : rota::api::kSystemStateDir;
  options.socket_path = !socket_path.empty() ? socket_path
                        : !config.socket.empty() ? config.socket
                        : user_mode ? rota::api::UserSocketPath()
                                    : rota::api::kSystemSocket;
  // Next to rotad (a build, a copy in /usr/local/bin), else where the package puts programs only
  // rotad starts (/usr/sbin/rotad -> /usr/libexec/rota/rota-shepherd).
  options.shepherd_path = shepherd;
  if (options.shepherd_path.empty()) {
    const std::string self = rota::daemon::ProgramDir();
    options.shepherd_path = self + "/rota-shepherd";
    const std::string libexec = self.substr(0, self.rfind('/')) + "/libexec/rota/rota-shepherd";
    if (!Exists(options.shepherd_path) && Exists(libexec)) options.shepherd_path = libexec;
  }
  options.kill_wait = kill_wait;
  if (!Exists(options.shepherd_path)) {
    spdlog::error("cannot find rota-shepherd at {} (use --shepherd)", options.shepherd_path);
    return 1;
  }
  RaiseOpenFileLimit();
  spdlog::info("configuration: {}", config_path.empty() ? std::string("built-in defaults") : config_path);
  rota::daemon::DaemonDeps deps;
  if (config.engine.kind == rota::config::EngineKind::kSlurm) {
    deps.engine = [engine = config.engine](const rota::daemon::EngineHost& host) {
      return rota::daemon::MakeSlurmEngine(engine, host);
    };
  }
  rota::StatusOr<std::unique_ptr<rota::daemon::Daemon>> daemon =
      rota::daemon::Daemon::Create(options, std::move(config), std::move(deps));
  if (!daemon.ok()) {
    spdlog::error("cannot start: {}", daemon.status().message());
    return 1;
  }
  return (*daemon)->Run();
}

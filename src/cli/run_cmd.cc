// `rota run [OPTIONS] -- COMMAND [ARGS...]` and `rota shell [OPTIONS]`: an interactive allocation
// (docs/api.md, op "run"). Waits for GPUs, then runs the command here, in the foreground, with
// the allocation's environment, and exits with its exit code (128 + signal when killed).
// Tested against a daemon by tests/daemon/test_sessions.py.
//
// Design: one poll() loop over the daemon's socket and a signalfd. The signals rota handles are
// blocked for the whole session and read from the signalfd; the child gets the old mask back
// before exec. The child stays in rota's process group, so the terminal's Ctrl-C reaches it
// directly while rota ignores SIGINT/SIGQUIT (as system() does). Closing the connection is how
// the daemon learns that a waiting request was given up or that a session ended.
//
// In a container (`--image`), the command is not this process's child: rotad's shepherd starts
// the lab's runtime as root, attached to the descriptors passed with the request (this
// process's standard input, output and error). rota then only waits: it passes on the signals
// it gets (the terminal's Ctrl-C when stdin is not one, SIGWINCH for the size) with
// `session_signal`, attaches again after a lost connection (`session_attach`), and exits with
// the code of the "ended" event, its terminal's settings put back as they were.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#include "api/protocol.h"
#include "cli/daemon_client.h"
#include "cli/job_format.h"
#include "cli/json_fields.h"
#include "cli/text.h"
#include "client/conda.h"

extern char** environ;

namespace rota::cli {

namespace {

struct RunArgs {
  client::RequestFlags flags;
  std::vector<std::string> command;
};

// Blocks the signals the session handles and opens a signalfd for them; restores on destruction.
class SignalGuard {
 public:
  SignalGuard() {
    sigemptyset(&set_);
    for (int s : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD, SIGWINCH}) sigaddset(&set_, s);
    sigprocmask(SIG_BLOCK, &set_, &old_);
    fd_ = ::signalfd(-1, &set_, SFD_CLOEXEC | SFD_NONBLOCK);
  }
  ~SignalGuard() {
    if (fd_ >= 0) ::close(fd_);
    sigprocmask(SIG_SETMASK, &old_, nullptr);
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

  int fd() const { return fd_; }
  const sigset_t& old_mask() const { return old_; }
  // The next pending signal, or 0.
  int Next() {
    signalfd_siginfo info{};
    ssize_t n = ::read(fd_, &info, sizeof info);
    return n == static_cast<ssize_t>(sizeof info) ? static_cast<int>(info.ssi_signo) : 0;
  }

 private:
  sigset_t set_{};
  sigset_t old_{};
  int fd_ = -1;
};

std::string WaitingLine(long long id, const nlohmann::json& m, long long now) {
  std::string line = "rota: job " + std::to_string(id) + " waiting";
  std::string reason = m.value("reason", "");
  if (!reason.empty()) line += " (" + ReasonLabel(reason) + ")";
  if (m.contains("position") && m["position"].is_number())
    line += ", position " + std::to_string(m["position"].get<long long>());
  long long expected = m.value("expected_start", 0LL);
  if (expected > 0) line += ", expected start " + FormatShortTime(expected, now);
  return line;
}

std::vector<std::string> StringsOf(const nlohmann::json& m, const char* key) {
  std::vector<std::string> out;
  auto it = m.find(key);
  if (it == m.end() || !it->is_array()) return out;
  for (const auto& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

// The command line the allocation runs: the command itself, or under the engine's command when the
// event names one ("wrap": Slurm's srun, with "wrap_tty" when stdin is a terminal).
std::vector<std::string> SessionArgv(const std::vector<std::string>& command, const nlohmann::json& m) {
  std::vector<std::string> argv = StringsOf(m, "wrap");
  if (argv.empty()) return command;
  if (::isatty(STDIN_FILENO)) {
    for (std::string& a : StringsOf(m, "wrap_tty")) argv.push_back(std::move(a));
  }
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

// Removes the variables whose names start with one of `prefixes` (before exec, in the child).
void UnsetPrefixed(const std::vector<std::string>& prefixes) {
  if (prefixes.empty()) return;
  std::vector<std::string> names;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string var(*e);
    const std::string name = var.substr(0, var.find('='));
    for (const std::string& p : prefixes) {
      if (!p.empty() && name.rfind(p, 0) == 0) names.push_back(name);
    }
  }
  for (const std::string& n : names) ::unsetenv(n.c_str());
}

// Starts the command (as SessionArgv says) with the allocation's environment added. In the child:
// the old signal mask, default dispositions, exec; 127 (126 for permission) with a message when
// exec fails.
pid_t StartChild(const std::vector<std::string>& command, const nlohmann::json& m, long long id,
                 const sigset_t& old_mask) {
  const nlohmann::json env = m.value("env", nlohmann::json::object());
  const std::vector<std::string> unset = StringsOf(m, "unset_prefixes");
  const std::vector<std::string> words = SessionArgv(command, m);
  std::vector<std::pair<std::string, std::string>> vars;
  if (env.is_object()) {
    for (auto it = env.begin(); it != env.end(); ++it) {
      if (it.value().is_string())
        vars.emplace_back(it.key(), it.value().get<std::string>());
      else if (it.value().is_number())
        vars.emplace_back(it.key(), it.value().dump());
    }
  }
  if (!env.is_object() || !env.contains("ROTA_JOB_ID")) vars.emplace_back("ROTA_JOB_ID", std::to_string(id));
  std::vector<char*> argv;
  for (const std::string& w : words) argv.push_back(const_cast<char*>(w.c_str()));
  argv.push_back(nullptr);
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  for (int s : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE, SIGWINCH}) ::signal(s, SIG_DFL);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  UnsetPrefixed(unset);
  for (const auto& [k, v] : vars) ::setenv(k.c_str(), v.c_str(), 1);
  ::execvp(argv[0], argv.data());
  int err = errno;
  std::fprintf(stderr, "rota: cannot run %s: %s\n", argv[0], std::strerror(err));
  ::_exit(err == ENOENT ? 127 : 126);
}

std::string AllocatedLine(long long id, const nlohmann::json& m) {
  // Where, as `rota queue` shows it (gpu0,1, gpu3:20G, gpu2/mig1): the event has the job's fields.
  nlohmann::json job = m;
  job["state"] = "running";
  const std::string where = WhereCell(job);
  std::string line = "rota: job " + std::to_string(id) + " running";
  if (where != "-") line += " on " + where;
  long long limit = m.value("time_limit", 0LL);
  if (limit > 0) line += ", time limit " + FormatElapsed(limit);
  return line;
}

// Tells the daemon how the command ended and waits briefly for the acknowledgement. Best effort:
// a closed connection ends the session too.
void EndSession(client::Connection& conn, int code) {
  if (!conn.Send({{"op", "session_end"}, {"exit_code", code}}).ok()) return;
  for (int i = 0; i < 16; ++i) {
    auto reply = conn.Receive(5000);
    if (!reply.ok() || !reply->contains("event")) return;  // late events are skipped
  }
}

// How an attached session's job ended, from its "ended" event (or a `session_attach` reply that
// says it ended): its exit code, and a line on stderr when it did not simply exit.
int EndedCode(long long id, const nlohmann::json& m) {
  const long long code = fields::Int(m, "exit_code", 1);
  const std::string state = fields::Str(m, "state");
  if (state != "completed" && !(state == "failed" && fields::Bool(m, "exited"))) {
    std::fprintf(stderr, "rota: job %lld %s: %s\n", id, state.empty() ? "ended" : TerminalSafe(state).c_str(),
                 TerminalSafe(fields::Str(m, "reason", "no reason given")).c_str());
  }
  return code >= 0 && code <= 255 ? static_cast<int>(code) : 1;
}

// The terminal's settings, put back when an attached session ends: the runtime sets its own raw
// mode and restores it, unless it was killed.
class TerminalSettings {
 public:
  void Save() { saved_ = ::isatty(STDIN_FILENO) && ::tcgetattr(STDIN_FILENO, &mode_) == 0; }
  ~TerminalSettings() {
    if (saved_) (void)::tcsetattr(STDIN_FILENO, TCSADRAIN, &mode_);
  }

 private:
  termios mode_{};
  bool saved_ = false;
};

int ExitCodeOf(int wstatus) {
  if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
  return 1;
}

int RunSession(const ClientOptions& options, client::RequestFlags flags, std::vector<std::string> command) {
  if (command.empty())
    return Fail(InvalidArgument("no command given (rota run [OPTIONS] -- COMMAND [ARGS...])"));
  char* cwd = ::getcwd(nullptr, 0);
  if (!cwd) return Fail(Internal(std::string("cannot read the working directory: ") + std::strerror(errno)));
  client::JobContext context{command, cwd, client::EnvironmentMap(environ), true};
  std::free(cwd);
  if (!flags.conda.empty()) {
    // The command runs here, as this process's child: it gets the activated environment from it.
    if (Status s = client::UseConda(flags, context); !s.ok()) return Fail(s);
    for (const auto& [key, value] : context.env) ::setenv(key.c_str(), value.c_str(), 1);
    command = context.command;
  }
  auto job = client::BuildJob(flags, context);
  if (!job.ok()) return Fail(job.status());
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
    if (!flags.image.empty() && ::fcntl(fd, F_GETFD) < 0) {  // what the container would run on
      return Fail(InvalidArgument("rota run --image runs the container on this terminal: its standard input, "
                                  "output and error must be open (descriptor " + std::to_string(fd) + " is closed)"));
    }
  }

  SignalGuard signals;
  if (signals.fd() < 0) return Fail(Internal(std::string("cannot open a signalfd: ") + std::strerror(errno)));
  auto conn = Connect(options);
  if (!conn.ok()) return Fail(conn.status());
  // A handle on this process goes with the request: rotad moves this process (and so the command,
  // its child) into the job's cgroup, and takes no bare pid for that (docs/security.md, "Sessions").
  // Where pidfds are missing (Linux before 5.3) none is sent, and rotad says why it cannot serve.
  // In a container, this process's standard input, output and error follow: the runtime's.
  const int self = static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0));
  std::vector<int> passed;
  if (self >= 0) passed.push_back(self);
  if (self >= 0 && !flags.image.empty()) passed.insert(passed.end(), {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO});
  auto first = conn->Call({{"op", "run"}, {"job", *job}}, passed);
  if (self >= 0) ::close(self);
  if (!first.ok()) return Fail(first.status());
  long long id = first->value("job_id", 0LL);
  std::fprintf(stderr, "rota: job %lld queued\n", id);

  pid_t child = -1;
  bool attached = false;  // in a container: the command runs under rotad, on this terminal
  TerminalSettings terminal;
  bool connected = true;
  std::string last_waiting;
  // Handles one message from the daemon; returns an exit code when the session must end.
  auto handle = [&](const nlohmann::json& m) -> std::optional<int> {
    if (m.contains("ok")) {
      Status st = api::StatusOfReply(m);
      if (!st.ok()) {
        if (child < 0 && !attached) return Fail(st);
        std::fprintf(stderr, "rota: job %lld: %s\n", id, st.message().c_str());
        return std::nullopt;
      }
    }
    std::string event = m.value("event", "");
    const bool started = child > 0 || attached;
    if (event == "waiting" && !started) {
      std::string line = WaitingLine(id, m, Now());
      if (line != last_waiting) std::fprintf(stderr, "%s\n", line.c_str());
      last_waiting = line;
    } else if (event == "allocated" && !started) {
      std::fprintf(stderr, "%s\n", AllocatedLine(id, m).c_str());
      if (m.value("attached", false)) {
        attached = true;
        terminal.Save();
        return std::nullopt;
      }
      child = StartChild(command, m, id, signals.old_mask());
      if (child < 0) return Fail(Internal(std::string("cannot start the command: ") + std::strerror(errno)));
    } else if (event == "ended" && attached) {
      return EndedCode(id, m);
    } else if (event == "signal" && child > 0) {
      int sig = m.value("signal", 0);
      if (sig > 0 && sig < 65) ::kill(child, sig);
    } else if (event == "kill" && child > 0) {
      ::kill(child, SIGKILL);
    }
    return std::nullopt;
  };
  // An attached session whose connection was lost (rotad restarted): its job runs on under its
  // shepherd. Attaches again once rotad answers; returns an exit code when the job has ended
  // meanwhile, or when rotad refuses.
  auto reattach = [&]() -> std::optional<int> {
    for (;;) {
      if (auto again = Connect(options); again.ok()) {
        auto reply = again->Call({{"op", "session_attach"}, {"job_id", id}});
        if (reply.ok() && reply->value("event", "") == "ended") return EndedCode(id, *reply);
        if (reply.ok()) {
          *conn = std::move(*again);
          connected = true;
          std::fprintf(stderr, "rota: job %lld: attached to rotad again\n", id);
          return std::nullopt;
        }
        if (reply.status().code() != StatusCode::kUnavailable) return Fail(reply.status());
      }
      // Signals that come meanwhile have no one to go to; rota waits for rotad, as the job does.
      while (signals.Next() != 0) {
      }
      ::usleep(500 * 1000);
    }
  };
  // The connection failed: fatal while waiting; while the command runs, a warning.
  auto lost = [&](const Status& st) -> std::optional<int> {
    connected = false;
    if (child < 0 && !attached) return Fail(st);
    std::fprintf(stderr, "rota: warning: lost the connection to rotad (%s); the command keeps running\n",
                 st.message().c_str());
    return attached ? reattach() : std::nullopt;
  };

  while (true) {
    // Messages already buffered first: poll() would not show them.
    while (connected && conn->HasBufferedLine()) {
      auto m = conn->Receive(0);
      std::optional<int> done = m.ok() ? handle(*m) : lost(m.status());
      if (done) return *done;
    }
    pollfd fds[2] = {{signals.fd(), POLLIN, 0}, {connected ? conn->fd() : -1, POLLIN, 0}};
    int rc = ::poll(fds, 2, -1);
    if (rc < 0 && errno != EINTR) return Fail(Internal(std::string("poll: ") + std::strerror(errno)));
    if (rc <= 0) continue;
    if (fds[0].revents & POLLIN) {
      while (int sig = signals.Next()) {
        if (sig == SIGCHLD) {
          if (child < 0) continue;
          int wstatus = 0;
          if (::waitpid(child, &wstatus, WNOHANG) != child) continue;
          int code = ExitCodeOf(wstatus);
          if (connected) EndSession(*conn, code);
          return code;
        }
        if (attached) {  // the command is not this process's child: rotad passes the signal on
          if (connected) (void)conn->Send({{"op", "session_signal"}, {"signal", sig}});
          continue;
        }
        if (sig == SIGWINCH) continue;  // the command is in the terminal's foreground group: it gets its own
        if (child < 0) {  // still waiting for the allocation: give up (closing the connection cancels)
          std::fprintf(stderr, "\nrota: job %lld: gave up waiting\n", id);
          return 128 + sig;
        }
        if (sig == SIGTERM || sig == SIGHUP) ::kill(child, sig);  // SIGINT/SIGQUIT reach it from the terminal
      }
    }
    if (connected && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      auto m = conn->Receive(0);
      std::optional<int> done;
      if (m.ok())
        done = handle(*m);
      else if (!conn->TimedOut())
        done = lost(m.status());
      if (done) return *done;
    }
  }
}

// $SHELL, else the login shell of the password database as rotad looked it up (`hello`): rota is
// a static program and does no NSS lookups of its own (CMakeLists.txt, the rota target).
StatusOr<std::string> LoginShell(const ClientOptions& options) {
  if (const char* s = std::getenv("SHELL"); s && *s) return std::string(s);
  auto conn = Connect(options);
  if (!conn.ok()) return conn.status();
  auto hello = conn->Call({{"op", "hello"}});
  if (!hello.ok()) return hello.status();
  std::string shell = hello->value("shell", "");
  return shell.empty() ? std::string("/bin/sh") : shell;
}

}  // namespace

void AddRunCommands(CLI::App& app, ClientOptions* options, int* exit_code) {
  auto run = std::make_shared<RunArgs>();
  CLI::App* c =
      app.add_subcommand("run", "Wait for GPUs, then run a command here: rota run [OPTIONS] -- COMMAND");
  c->footer(
      "Waits for the allocation (progress on stderr), then runs COMMAND in the foreground with the\n"
      "allocation's environment (CUDA_VISIBLE_DEVICES, ROTA_JOB_ID, ...) and exits with its exit code\n"
      "(128 + signal when killed). Ctrl-C while waiting gives up (exit 130). When the time limit\n"
      "nears, rotad's signal (--signal) is forwarded to the command, then it is killed.");
  c->positionals_at_end();
  AddSocketFlag(c, options);
  AddRequestFlags(c, &run->flags, /*batch=*/false);
  c->add_option("COMMAND", run->command, "the command and its arguments (after --)")->required();
  c->callback([options, run, exit_code] { *exit_code = RunSession(*options, run->flags, run->command); });

  auto shell = std::make_shared<RunArgs>();
  CLI::App* s = app.add_subcommand("shell", "Wait for GPUs, then start your shell with them");
  s->footer(
      "Like rota run -- $SHELL -l (your login shell from the password database when SHELL is unset);\n"
      "with --image, the image's bash, else its sh. Exit the shell to end the session.");
  AddSocketFlag(s, options);
  AddRequestFlags(s, &shell->flags, /*batch=*/false);
  s->callback([options, shell, exit_code] {
    if (!shell->flags.image.empty()) {  // the host's shell is not in the image
      *exit_code = RunSession(*options, shell->flags,
                              {"/bin/sh", "-c", "if command -v bash >/dev/null 2>&1; then exec bash -l; fi; exec sh -l"});
      return;
    }
    StatusOr<std::string> login = LoginShell(*options);
    *exit_code = login.ok() ? RunSession(*options, shell->flags, {*login, "-l"}) : Fail(login.status());
  });
}

}  // namespace rota::cli

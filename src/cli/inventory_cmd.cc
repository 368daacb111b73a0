// `rota inventory [--markdown] [--json]`: the server's GPUs (from rotad), its configured storage
// and per-user usage, for the lab wiki. Formatting is inventory_format.cc's (tested by
// inventory_format_test.cc); this file asks the daemon and measures. Tested end to end by
// tests/daemon/.
//
// Design: rotad only names the storage paths; the command line measures them (statvfs) and runs
// repquota itself. The daemon never runs admin tools on a request anyone may send, and repquota
// answers with what the caller may see: everyone's usage for root, an explanation otherwise.
// repquota runs with a deadline and LC_ALL=C (its CSV header is translated in other locales).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>

#include "cli/daemon_client.h"
#include "cli/inventory_format.h"

extern char** environ;

namespace rota::cli {

namespace {

constexpr int kRepquotaTimeoutMs = 10000;
constexpr size_t kMaxOutputBytes = 16 << 20;

struct InventoryArgs {
  bool markdown = false;
  bool json = false;
};

struct Measured {
  StorageInfo info;
  dev_t device = 0;
};

// The mount point of the file system holding the resolved path `real`: its highest ancestor on
// the same device.
std::string MountPoint(const std::string& real, dev_t device) {
  std::string current = real;
  while (current != "/") {
    const size_t slash = current.rfind('/');
    std::string parent = slash == 0 ? "/" : current.substr(0, slash);
    struct stat st {};
    if (::stat(parent.c_str(), &st) != 0 || st.st_dev != device) break;
    current = parent;
  }
  return current;
}

Measured Measure(const std::string& path) {
  Measured m;
  m.info.path = path;
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) {
    m.info.error = std::strerror(errno);
    return m;
  }
  const std::string resolved(real);
  std::free(real);
  struct statvfs vfs {};
  struct stat st {};
  if (::statvfs(resolved.c_str(), &vfs) != 0 || ::stat(resolved.c_str(), &st) != 0) {
    m.info.error = std::strerror(errno);
    return m;
  }
  const unsigned long long unit = vfs.f_frsize != 0 ? vfs.f_frsize : vfs.f_bsize;
  m.info.size = vfs.f_blocks * unit;
  m.info.used = (vfs.f_blocks - vfs.f_bfree) * unit;
  m.info.free = vfs.f_bavail * unit;
  m.info.mount = MountPoint(resolved, st.st_dev);
  m.device = st.st_dev;
  return m;
}

// `name` on $PATH, then in /usr/sbin and /sbin: Debian installs repquota there, and an ordinary
// user's PATH often lacks them. "" when not found.
std::string FindProgram(const std::string& name) {
  const char* env = std::getenv("PATH");
  std::string dirs = std::string(env != nullptr ? env : "") + ":/usr/sbin:/sbin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t colon = dirs.find(':', start);
    if (colon == std::string::npos) colon = dirs.size();
    std::string dir = dirs.substr(start, colon - start);
    start = colon + 1;
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return "";
}

struct ProgramResult {
  std::string error;  // non-empty: it could not be started, or it ran past its deadline
  int status = 0;     // waitpid()'s status
  std::string out;
  std::string err;
};

ProgramResult NotRun(std::string error) {
  ProgramResult r;
  r.error = std::move(error);
  return r;
}

// Runs `argv` (argv[0] a full path) with LC_ALL=C and stdin from /dev/null, collecting stdout and
// stderr, and kills it at the deadline.
ProgramResult RunProgram(const std::vector<std::string>& argv, int timeout_ms) {
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return NotRun(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return NotRun(std::string("pipe: ") + std::strerror(errno));
  }
  std::vector<std::string> env_strings = {"LC_ALL=C"};
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "LC_ALL=", 7) != 0 && std::strncmp(*e, "LANGUAGE=", 9) != 0) env_strings.push_back(*e);
  }
  std::vector<char*> envp, args;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (std::string& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (rc != 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return NotRun("cannot run " + argv[0] + ": " + std::strerror(rc));
  }

  ProgramResult result;
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      ::kill(pid, SIGKILL);
      result.error = argv[0] + " did not finish within " + std::to_string(timeout_ms / 1000) + "s";
      break;
    }
    int n = ::poll(fds, 2, static_cast<int>(left));
    if (n < 0 && errno != EINTR) {
      result.error = std::string("cannot wait for ") + argv[0] + ": " + std::strerror(errno);
      ::kill(pid, SIGKILL);  // waitpid() below must not wait past the deadline
      break;
    }
    for (int i = 0; i < 2 && n > 0; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char chunk[65536];
      ssize_t got = ::read(fds[i].fd, chunk, sizeof chunk);
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;  // poll() skips negative descriptors
        --open_fds;
      } else if (sinks[i]->size() < kMaxOutputBytes) {
        sinks[i]->append(chunk, static_cast<size_t>(got));
      }
    }
  }
  for (const pollfd& p : fds) {
    if (p.fd >= 0) ::close(p.fd);
  }
  while (::waitpid(pid, &result.status, 0) < 0 && errno == EINTR) {
  }
  return result;
}

// The first non-empty line of a tool's error output, without the "repquota: " prefix.
std::string FirstLine(const std::string& text, const std::string& prefix) {
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    start = nl == std::string::npos ? text.size() : nl + 1;
    if (line.rfind(prefix, 0) == 0) line.erase(0, prefix.size());
    if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
  }
  return "";
}

void ReportFilesystem(const std::string& repquota, QuotaFilesystem* fs) {
  ProgramResult run = RunProgram({repquota, "-u", "-O", "csv", fs->mount}, kRepquotaTimeoutMs);
  if (!run.error.empty()) {
    fs->error = run.error;
    return;
  }
  auto users = ParseRepquotaCsv(run.out);
  const bool exited_ok = WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0;
  if (exited_ok && users.ok()) {
    fs->users = std::move(*users);
    return;
  }
  // What repquota said is the useful reason (not root, quotas off, an NFS mount).
  fs->error = FirstLine(run.err, "repquota: ");
  if (fs->error.empty() && exited_ok) fs->error = users.status().message();
  if (fs->error.empty()) {
    const int code = WIFEXITED(run.status) ? WEXITSTATUS(run.status) : 128 + WTERMSIG(run.status);
    fs->error = "repquota exited with status " + std::to_string(code);
  }
}

QuotaReport CollectQuota(const std::vector<Measured>& measured) {
  QuotaReport report;
  std::map<dev_t, size_t> by_device;  // one repquota run per file system
  for (const Measured& m : measured) {
    if (!m.info.error.empty()) continue;
    auto [it, added] = by_device.emplace(m.device, report.filesystems.size());
    if (added) report.filesystems.push_back({m.info.mount, {}, "", {}});
    report.filesystems[it->second].paths.push_back(m.info.path);
  }
  if (report.filesystems.empty()) {
    report.unavailable = measured.empty() ? "no storage paths configured" : "no storage path could be measured";
    return report;
  }
  const std::string repquota = FindProgram("repquota");
  if (repquota.empty()) {
    report.unavailable = "repquota not installed";
    return report;
  }
  for (QuotaFilesystem& fs : report.filesystems) ReportFilesystem(repquota, &fs);
  return report;
}

int RunInventory(const ClientOptions& options, const InventoryArgs& args) {
  auto reply = CallDaemon(options, {{"op", "inventory"}});
  if (!reply.ok()) return Fail(reply.status());
  std::vector<Measured> measured;
  auto paths = reply->find("storage");
  if (paths != reply->end() && paths->is_array()) {
    for (const nlohmann::json& p : *paths) {
      if (p.is_string()) measured.push_back(Measure(p.get<std::string>()));
    }
  }
  std::vector<StorageInfo> storage;
  for (const Measured& m : measured) storage.push_back(m.info);
  const QuotaReport quota = CollectQuota(measured);
  if (args.json) {
    nlohmann::json out = *reply;
    out["storage_usage"] = StorageUsageJson(storage);
    out["quota"] = QuotaJson(quota);
    PrintJson(out);
    return 0;
  }
  std::string text = FormatInventory(*reply, storage, quota, args.markdown);
  PrintText(text);
  return 0;
}

}  // namespace

void AddInventoryCommand(CLI::App& app, ClientOptions* options, int* exit_code) {
  auto args = std::make_shared<InventoryArgs>();
  CLI::App* c =
      app.add_subcommand("inventory", "Describe this server: GPUs, storage and per-user usage (for the wiki)");
  c->footer(
      "GPUs: index, model, memory, the cards each has NVLink to, MIG capability and mode with its\n"
      "slices, and status (healthy, suspect, drained: why). Storage: the [inventory] storage paths of\n"
      "rotad's configuration as this machine sees them (sizes in powers of 1024; Use% as df, of what\n"
      "ordinary users can use). Per-user usage comes from repquota (Debian package quota) on each\n"
      "path's file system; it needs root and quotas turned on, and says why when it is not available.\n"
      "--markdown writes the page for the lab wiki (GPU_INFO.md): rota inventory --markdown > GPU_INFO.md\n"
      "--json prints the daemon's reply with storage_usage and quota added (bytes).");
  AddSocketFlag(c, options);
  c->add_flag("--markdown,--md", args->markdown, "write markdown (GitHub tables)");
  c->add_flag("--json", args->json, "print JSON (wins over --markdown)");
  c->callback([options, args, exit_code] { *exit_code = RunInventory(*options, *args); });
}

}  // namespace rota::cli

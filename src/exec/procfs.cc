// Tested by procfs_test.cc.
#include "exec/procfs.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace rota::exec {

StatusOr<ProcessIdentity> ReadProcess(pid_t pid, const std::string& proc) {
  const std::string dir = proc + "/" + std::to_string(pid);
  std::ifstream status(dir + "/status");
  if (!status) {
    if (errno == ENOENT || errno == ESRCH) return NotFound("process " + std::to_string(pid) + " is gone");
    return Internal("cannot read " + dir + "/status: " + std::strerror(errno));
  }
  ProcessIdentity id;
  id.pid = pid;
  bool have_uid = false;
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("PPid:", 0) == 0) id.ppid = static_cast<pid_t>(std::strtol(line.c_str() + 5, nullptr, 10));
    if (line.rfind("Uid:", 0) == 0) {
      // "Uid:\treal\teffective\tsaved\tfilesystem"
      char* end = nullptr;
      id.uid = static_cast<uid_t>(std::strtoul(line.c_str() + 4, &end, 10));
      id.euid = static_cast<uid_t>(std::strtoul(end, nullptr, 10));
      have_uid = true;
    }
  }
  if (!have_uid) return NotFound("process " + std::to_string(pid) + " is gone");
  // The unified hierarchy's line is "0::/path" (also on hybrid systems that mount v2).
  std::ifstream cgroup(dir + "/cgroup");
  while (std::getline(cgroup, line)) {
    if (line.rfind("0::", 0) == 0) id.cgroup = line.substr(3);
  }
  return id;
}

StatusOr<unsigned long long> ProcessStartTime(pid_t pid, const std::string& proc) {
  std::ifstream in(proc + "/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!in || !std::getline(in, line)) return NotFound("process " + std::to_string(pid) + " is gone");
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so count from the last ')'.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return Internal("malformed /proc/" + std::to_string(pid) + "/stat");
  std::istringstream fields(line.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) return std::strtoull(field.c_str(), nullptr, 10);
  }
  return Internal("malformed /proc/" + std::to_string(pid) + "/stat");
}

StatusOr<Time> ProcessStartedAt(pid_t pid, const std::string& proc) {
  StatusOr<unsigned long long> ticks = ProcessStartTime(pid, proc);
  if (!ticks.ok()) return ticks.status();
  std::ifstream stat(proc + "/stat");
  std::string line;
  while (std::getline(stat, line)) {
    if (line.rfind("btime ", 0) == 0) {
      const long hz = ::sysconf(_SC_CLK_TCK);
      return static_cast<Time>(std::strtoll(line.c_str() + 6, nullptr, 10)) +
             static_cast<Time>(*ticks / static_cast<unsigned long long>(hz > 0 ? hz : 100));
    }
  }
  return Internal("no btime in " + proc + "/stat");
}

bool InCgroup(const std::string& cgroup, const std::string& job_cgroup) {
  if (cgroup.empty() || cgroup == "/" || job_cgroup.empty()) return false;
  // The job's path is <mount>/<relative>; the process's is /<relative>[/more].
  for (std::string path = cgroup; !path.empty() && path != "/";) {
    if (job_cgroup.size() >= path.size() && job_cgroup.compare(job_cgroup.size() - path.size(), path.size(), path) == 0) {
      return true;
    }
    path.resize(path.rfind('/'));
  }
  return false;
}

}  // namespace rota::exec

// Helpers for the executor's tests (header-only: every .cc in src/exec goes into rota_exec).
#pragma once

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "core/types.h"
#include "exec/executor.h"
#include "testing/temp_dir.h"

namespace rota::exec::testing {

// Generous: the tests must pass on a loaded 2-core machine under ASan.
inline constexpr int kTimeoutMs = 60'000;

using rota::testing::TempDir;

// The tests' cgroup base name: never the system daemon's ("rota"), whose start removes the empty
// job cgroups it finds in its base (Executor::RemoveLeftoverCgroups).
inline constexpr const char* kTestCgroupName = "rota-test";

// Job ids unique to this test process, so that concurrent test runs never share a job cgroup.
inline JobId NextJobId() {
  static int counter = 0;
  return static_cast<JobId>(getpid()) * 1000 + (++counter % 1000);
}

inline bool WaitReadable(int fd, int timeout_ms = kTimeoutMs) {
  pollfd p{fd, POLLIN, 0};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() < 0) return false;
    int n = poll(&p, 1, static_cast<int>(left.count()));
    if (n > 0) return true;
    if (n == 0) return false;
  }
}

// Polls (10 ms steps) until pred() holds or the timeout passes.
template <typename Pred>
bool WaitFor(Pred pred, int timeout_ms = kTimeoutMs) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline bool FileHasLine(const std::string& path) {
  std::string text = ReadText(path);
  return !text.empty() && text.back() == '\n';
}

// True when the process is gone or a zombie.
inline bool ProcessDead(pid_t pid) {
  std::string stat = ReadText("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) return true;
  std::size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && (stat[paren + 2] == 'Z' || stat[paren + 2] == 'X');
}

// What a test knows of a launch whose job did not do what was awaited: the shepherd's state and
// children, the job's cgroup, its result and log. For failure messages.
inline std::string DescribeLaunch(const Launched& launched, const std::string& result_path, const std::string& log) {
  const std::string proc = "/proc/" + std::to_string(launched.pid);
  std::string stat = ReadText(proc + "/stat");
  std::size_t paren = stat.rfind(')');
  std::string out = "shepherd " + std::to_string(launched.pid) + ": ";
  out += paren != std::string::npos && paren + 2 < stat.size() ? std::string("state ") + stat[paren + 2] : "gone";
  out += ", wchan " + ReadText(proc + "/wchan");
  out += ", children [" + ReadText(proc + "/task/" + std::to_string(launched.pid) + "/children") + "]";
  if (!launched.cgroup.empty()) {
    out += "; cgroup " + launched.cgroup + (std::filesystem::exists(launched.cgroup) ? "" : " (gone)") +
           " procs [" + ReadText(launched.cgroup + "/cgroup.procs") + "]";
  }
  out += "; result [" + ReadText(result_path) + "]; log [" + ReadText(log) + "]";
  return out;
}

// Waits until `path` holds a line, written by the job of `launched`. Fails at once, saying what
// is known, when the shepherd ends first (the job did not start, or ended) or at the timeout.
inline ::testing::AssertionResult JobWroteLine(const std::string& path, const Launched& launched,
                                               const std::string& result_path, const std::string& log) {
  auto ended = [&] {
    pollfd p{launched.pidfd, POLLIN, 0};
    return poll(&p, 1, 0) > 0;
  };
  const bool timely = WaitFor([&] { return FileHasLine(path) || ended(); });
  if (FileHasLine(path)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "no line in " << path << (timely ? " before the shepherd ended" : " in time")
                                       << ": " << DescribeLaunch(launched, result_path, log);
}

}  // namespace rota::exec::testing

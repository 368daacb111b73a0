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

#include "core/types.h"
#include "exec/executor.h"

namespace rota::exec::testing {

// Generous: the tests must pass on a loaded 2-core machine under ASan.
inline constexpr int kTimeoutMs = 60'000;

// A fresh directory under /tmp (mode 0755 so that other users can reach subdirectories),
// removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/rota-exec-test-XXXXXX";
    const char* made = mkdtemp(tmpl);
    path_ = made ? made : "";
    if (made) chmod(made, 0755);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

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

}  // namespace rota::exec::testing

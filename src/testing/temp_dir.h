// Test helper: a fresh directory under /tmp, removed with everything in it when destroyed. Mode
// 0755, so that other users (the tests' real users) can reach what is made inside it.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

namespace rota::testing {

class TempDir {
 public:
  // Under `base`: /tmp, or a memory file system (/dev/shm) for tests that write much and need no disk.
  explicit TempDir(const std::string& prefix = "rota-test", const std::string& base = "/tmp") {
    std::string pattern = base + "/" + prefix + "-XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) {
      path_ = pattern;
      chmod(path_.c_str(), 0755);
    }
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  std::string operator/(const std::string& name) const { return File(name); }

 private:
  std::string path_;
};

}  // namespace rota::testing

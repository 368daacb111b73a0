// Tested by shipped_test.cc and tests/daemon/test_package.py (the packaged rotad finds its page).
#include "daemon/shipped.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rota::daemon {

std::string ProgramDir() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string path(buf, static_cast<size_t>(n));
  return path.substr(0, path.rfind('/'));
}

std::string ShippedPath(const std::string& built_in, const std::string& name) {
  struct stat st {};
  if (::stat(built_in.c_str(), &st) == 0) return built_in;
  const std::string dir = ProgramDir();
  const std::string beside = dir.substr(0, dir.rfind('/')) + "/share/rota/" + name;
  return ::stat(beside.c_str(), &st) == 0 ? beside : built_in;
}

}  // namespace rota::daemon

// Tested by output_path_test.cc; the permission refusals with real users by
// tests/daemon/test_permissions.py.
//
// Design: access(2) checks with the real uid, which is the caller's (rota is not set-uid), so
// this is the check the shepherd's open will make later, made while the user can still fix it.
// sbatch accepts such a job and it fails at its start; here it is refused at submit.
#include "client/output_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rota::client {

Status CheckOutputPath(const std::string& output, const std::string& cwd) {
  std::string path = output.empty() ? "rota-%j.out" : output;
  if (path[0] != '/') path = cwd + "/" + path;
  const std::string given = output.empty() ? "the default output " + path : "--output " + output;
  const std::string elsewhere = output.empty() ? "submit from a directory you can write to, or give --output"
                                               : "choose another --output";
  std::size_t slash = path.rfind('/');
  std::string dir = slash == 0 ? "/" : path.substr(0, slash);
  std::string name = path.substr(slash + 1);
  if (name.empty()) return InvalidArgument(given + ": names a directory; give a file name");
  if (dir.find("%j") != std::string::npos) return Status::Ok();
  if (name.find("%j") == std::string::npos) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
      if (S_ISLNK(st.st_mode))
        return InvalidArgument(given + " is a symbolic link, which a job's output never follows; give the file it points to");
      if (S_ISDIR(st.st_mode)) return InvalidArgument(given + " is a directory; give a file name in it");
      // Whoever reads a pipe or socket would get the job's output (the shepherd refuses it too).
      if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
        return InvalidArgument(given + " is a " + (S_ISFIFO(st.st_mode) ? "named pipe" : "socket") +
                               "; a job's output is a file, or a device such as /dev/null");
      if (::access(path.c_str(), W_OK) != 0)
        return InvalidArgument(given + ": you cannot write to it (" + std::strerror(errno) + ")");
      return Status::Ok();
    }
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT)
      return InvalidArgument(given + ": directory " + dir + " does not exist; create it first (mkdir -p " + dir + ")");
    return InvalidArgument(given + ": cannot look at directory " + dir + " (" + std::strerror(errno) + ")");
  }
  if (!S_ISDIR(st.st_mode)) return InvalidArgument(given + ": " + dir + " is not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return InvalidArgument(given + ": you cannot create files in " + dir + " (" + std::strerror(errno) + "); " +
                           elsewhere);
  return Status::Ok();
}

}  // namespace rota::client

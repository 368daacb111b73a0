// Tested through executor_test.cc and spec_test.cc.
#include "exec/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rota::exec {
namespace {


Status WriteAll(int fd, const std::string& content, const std::string& path) {
  std::size_t done = 0;
  while (done < content.size()) {
    ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Internal(ErrnoMessage("cannot write " + path, errno));
    }
    done += static_cast<std::size_t>(n);
  }
  return Status::Ok();
}

// From the current offset (read(2) rather than pread: kernel control files read sequentially).
StatusOr<std::string> ReadToEnd(int fd, const std::string& path) {
  std::string content;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Internal(ErrnoMessage("cannot read " + path, errno));
    }
    if (n == 0) break;
    content.append(buf, static_cast<std::size_t>(n));
  }
  return content;
}

}  // namespace

std::string ErrnoMessage(const std::string& what, int err) { return what + ": " + std::strerror(err); }

StatusOr<std::string> ReadFile(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    int err = errno;
    std::string message = ErrnoMessage("cannot open " + path, err);
    return err == ENOENT ? NotFound(message) : Internal(message);
  }
  return ReadToEnd(fd.get(), path);
}

StatusOr<std::string> ReadFd(int fd, const std::string& path) {
  if (lseek(fd, 0, SEEK_SET) < 0) return Internal(ErrnoMessage("cannot read " + path, errno));
  return ReadToEnd(fd, path);
}

Status WriteFileAtomic(const std::string& path, const std::string& content, mode_t mode) {
  std::string tmp = path + ".tmp";
  {
    UniqueFd fd(open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode));
    if (fd.get() < 0) return Internal(ErrnoMessage("cannot create " + tmp, errno));
    if (fchmod(fd.get(), mode) != 0) return Internal(ErrnoMessage("cannot chmod " + tmp, errno));
    if (Status s = WriteAll(fd.get(), content, tmp); !s.ok()) {
      unlink(tmp.c_str());
      return s;
    }
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return Internal(ErrnoMessage("cannot rename " + tmp + " to " + path, err));
  }
  return Status::Ok();
}

Status WriteControlFile(const std::string& path, const std::string& content) {
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    int err = errno;
    std::string message = ErrnoMessage("cannot open " + path, err);
    return err == ENOENT ? NotFound(message) : Internal(message);
  }
  ssize_t n;
  do {
    n = write(fd.get(), content.data(), content.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0) return Internal(ErrnoMessage("cannot write '" + content + "' to " + path, errno));
  return Status::Ok();
}

Status RemoveFile(const std::string& path) {
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Internal(ErrnoMessage("cannot remove " + path, errno));
  }
  return Status::Ok();
}

}  // namespace rota::exec

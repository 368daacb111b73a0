// Tested by container_test.cc.
#include "exec/container.h"

#include <fnmatch.h>

#include <cerrno>

#include "exec/files.h"

namespace rota::exec {

const char* ContainerRuntimeName(ContainerRuntime runtime) {
  switch (runtime) {
    case ContainerRuntime::kPodman:
      return "podman";
    case ContainerRuntime::kDocker:
      return "docker";
    case ContainerRuntime::kApptainer:
      return "apptainer";
    case ContainerRuntime::kNone:
      break;
  }
  return "";
}

std::optional<ContainerRuntime> ParseContainerRuntime(std::string_view name) {
  for (ContainerRuntime r : {ContainerRuntime::kPodman, ContainerRuntime::kDocker, ContainerRuntime::kApptainer}) {
    if (name == ContainerRuntimeName(r)) return r;
  }
  return std::nullopt;
}

bool StartedByRoot(ContainerRuntime runtime) {
  return runtime == ContainerRuntime::kPodman || runtime == ContainerRuntime::kDocker;
}

bool IsShellName(const std::string& name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

bool ImageAllowed(std::string_view image, const std::vector<std::string>& patterns) {
  const std::string name(image);
  for (const std::string& p : patterns) {
    if (fnmatch(p.c_str(), name.c_str(), 0) == 0) return true;
  }
  return false;
}

StatusOr<ContainerMount> ParseContainerMount(std::string_view text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    std::size_t colon = text.find(':', start);
    parts.emplace_back(text.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  ContainerMount m;
  if (!parts.empty() && (parts.back() == "ro" || parts.back() == "rw")) {
    m.read_only = parts.back() == "ro";
    parts.pop_back();
  }
  if (parts.empty() || parts.size() > 2) {
    return InvalidArgument("is not SOURCE, SOURCE:TARGET, or either with :ro or :rw");
  }
  m.source = parts[0];
  m.target = parts.size() == 2 ? parts[1] : parts[0];
  for (const std::string* p : {&m.source, &m.target}) {
    if (p->empty() || (*p)[0] != '/') return InvalidArgument("has a path that is not absolute");
    if (p->find("/../") != std::string::npos || p->ends_with("/..")) return InvalidArgument("has \"..\" in a path");
  }
  if (m.target == "/") return InvalidArgument("would cover the container's root");
  m.users = m.source.find("{user}") != std::string::npos || m.target.find("{user}") != std::string::npos;
  return m;
}

namespace {

void ReplaceAll(std::string& s, std::string_view from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

// May anyone but root rename or replace `name` in `dir`?
bool OthersMayChange(const struct stat& dir, const struct stat& entry) {
  if (dir.st_uid != 0) return true;
  if ((dir.st_mode & (S_IWGRP | S_IWOTH)) == 0) return false;
  // A sticky directory lets only the entry's owner (and the directory's, root here) move it.
  return (dir.st_mode & S_ISVTX) == 0 || entry.st_uid != 0;
}

}  // namespace

ContainerMount ForUser(ContainerMount mount, const std::string& user) {
  ReplaceAll(mount.source, "{user}", user);
  ReplaceAll(mount.target, "{user}", user);
  return mount;
}

StatusOr<std::string> MountRoot(const std::string& path, const Lstat& lstat) {
  if (path.empty() || path[0] != '/') return InvalidArgument("'" + path + "' is not an absolute path");
  if (path == "/") return FailedPrecondition("the root directory is not mounted into a container: work in a directory");
  struct stat dir {};
  if (lstat("/", &dir) != 0) return Internal(ErrnoMessage("cannot stat /", errno));
  std::string root;  // "" stands for "/"
  std::size_t at = 1;
  while (at < path.size()) {
    std::size_t slash = path.find('/', at);
    const std::string next = path.substr(0, slash);
    struct stat entry {};
    if (lstat(next, &entry) != 0) return Internal(ErrnoMessage("cannot stat " + next, errno));
    if (OthersMayChange(dir, entry) || S_ISLNK(entry.st_mode) || !S_ISDIR(entry.st_mode)) break;
    root = next;
    dir = entry;
    if (slash == std::string::npos) break;
    at = slash + 1;
  }
  if (root.empty()) {
    return FailedPrecondition("no directory above " + path + " is safe to mount: its first part can be "
                              "changed by others than root");
  }
  return root;
}

}  // namespace rota::exec

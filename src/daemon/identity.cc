// Tested by identity_test.cc and the permission integration tests (as root).
#include "daemon/identity.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

namespace rota::daemon {

namespace {

// A passwd lookup (getpwuid_r, getpwnam_r) with a growing buffer; nullopt when there is no entry.
template <typename Lookup>
std::optional<passwd> GetPwWith(std::vector<char>& buf, Lookup lookup) {
  buf.resize(4096);
  passwd pw{};
  passwd* result = nullptr;
  while (true) {
    int rc = lookup(&pw, buf.data(), buf.size(), &result);
    if (rc == ERANGE && buf.size() < (1u << 20)) {
      buf.resize(buf.size() * 2);
      continue;
    }
    if (rc != 0 || result == nullptr) return std::nullopt;
    return pw;
  }
}

std::optional<passwd> GetPw(uid_t uid, std::vector<char>& buf) {
  return GetPwWith(buf, [uid](passwd* pw, char* b, size_t n, passwd** out) { return getpwuid_r(uid, pw, b, n, out); });
}

std::optional<passwd> GetPwNamed(const std::string& name, std::vector<char>& buf) {
  return GetPwWith(buf, [&name](passwd* pw, char* b, size_t n, passwd** out) {
    return getpwnam_r(name.c_str(), pw, b, n, out);
  });
}

std::vector<gid_t> GroupList(const char* name, gid_t gid) {
  int n = 64;
  std::vector<gid_t> groups(static_cast<size_t>(n));
  while (getgrouplist(name, gid, groups.data(), &n) < 0) {
    if (n > 65536) break;
    groups.resize(static_cast<size_t>(n) + 16);
    n = static_cast<int>(groups.size());
  }
  groups.resize(static_cast<size_t>(std::max(n, 0)));
  return groups;
}

std::optional<gid_t> GroupId(const std::string& group) {
  std::vector<char> buf(4096);
  struct group gr {};
  struct group* result = nullptr;
  while (true) {
    int rc = getgrnam_r(group.c_str(), &gr, buf.data(), buf.size(), &result);
    if (rc == ERANGE && buf.size() < (1u << 22)) {
      buf.resize(buf.size() * 2);
      continue;
    }
    if (rc != 0 || result == nullptr) return std::nullopt;
    return gr.gr_gid;
  }
}

}  // namespace

std::optional<std::string> UserName(uid_t uid) {
  std::vector<char> buf;
  std::optional<passwd> pw = GetPw(uid, buf);
  if (!pw) return std::nullopt;
  return std::string(pw->pw_name);
}

Caller Identify(uid_t uid, gid_t gid, pid_t pid, const std::string& admin_group) {
  Caller c;
  c.uid = uid;
  c.gid = gid;
  c.pid = pid;
  std::vector<char> buf;
  std::optional<passwd> pw = GetPw(uid, buf);
  if (pw) c.name = pw->pw_name;
  c.admin = uid == 0;
  if (!c.admin && !admin_group.empty() && pw) {
    if (std::optional<gid_t> admin_gid = GroupId(admin_group)) {
      std::vector<gid_t> groups = GroupList(pw->pw_name, pw->pw_gid);
      c.admin = gid == *admin_gid || std::find(groups.begin(), groups.end(), *admin_gid) != groups.end();
    }
  }
  return c;
}

Caller CallerCache::Get(uid_t uid, gid_t gid, pid_t pid, Clock::time_point now) {
  Caller c = cache_.Get({uid, gid}, now, [&] { return lookup_(uid, gid); });
  c.pid = pid;
  return c;
}

StatusOr<UnixAccount> LookUpAccount(uid_t uid) {
  std::vector<char> buf;
  std::optional<passwd> pw = GetPw(uid, buf);
  if (!pw) return NotFound("uid " + std::to_string(uid) + " has no entry in the user database");
  UnixAccount a;
  a.uid = pw->pw_uid;
  a.gid = pw->pw_gid;
  a.name = pw->pw_name;
  a.home = pw->pw_dir ? pw->pw_dir : "";
  a.shell = pw->pw_shell ? pw->pw_shell : "";
  a.groups = GroupList(pw->pw_name, pw->pw_gid);
  return a;
}

std::optional<uid_t> UserId(const std::string& name) {
  std::vector<char> buf;
  std::optional<passwd> pw = GetPwNamed(name, buf);
  if (!pw) return std::nullopt;
  return pw->pw_uid;
}

std::string HostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

}  // namespace rota::daemon

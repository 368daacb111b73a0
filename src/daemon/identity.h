// Who is calling: the peer's uid and gid (from SO_PEERCRED) resolved through the system's user
// and group databases. Admins are uid 0 and the members of the configured admin group.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace rota::daemon {

struct Caller {
  uid_t uid = 0;
  gid_t gid = 0;
  pid_t pid = 0;
  std::string name;  // empty when the uid has no passwd entry
  bool admin = false;
};

// Resolves the name and admin flag. `admin_group` empty: only root is an admin.
Caller Identify(uid_t uid, gid_t gid, pid_t pid, const std::string& admin_group);

// Recent callers' identities, so that a burst of requests (a script submitting jobs one `rota`
// at a time) does not read the user and group databases for every one; with LDAP behind NSS
// each lookup can take milliseconds. Entries live `ttl` (nscd and sssd keep theirs for minutes
// to hours); Clear() on a reload. The pid is the connection's, never cached.
class CallerCache {
 public:
  using Clock = std::chrono::steady_clock;
  using Lookup = std::function<Caller(uid_t uid, gid_t gid)>;
  CallerCache(Clock::duration ttl, Lookup lookup) : ttl_(ttl), lookup_(std::move(lookup)) {}
  Caller Get(uid_t uid, gid_t gid, pid_t pid, Clock::time_point now);
  void Clear() { entries_.clear(); }

 private:
  struct Entry {
    Caller caller;
    Clock::time_point expires;
  };
  Clock::duration ttl_;
  Lookup lookup_;
  std::map<std::pair<uid_t, gid_t>, Entry> entries_;
};

// The passwd name of `uid`, or nullopt.
std::optional<std::string> UserName(uid_t uid);
// The uid of the account `name`, or nullopt when there is none.
std::optional<uid_t> UserId(const std::string& name);
// This server's host name ("" when it cannot be read).
std::string HostName();

// A user's primary gid and supplementary groups (getgrouplist), for running a job as them.
struct UnixAccount {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  std::string name;
  std::string home;
  std::string shell;
};
StatusOr<UnixAccount> LookUpAccount(uid_t uid);

}  // namespace rota::daemon

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
  // Who, in an audit trail or a log: the name, or the uid when there is none.
  std::string Who() const { return name.empty() ? std::to_string(uid) : name; }
};

// Resolves the name and admin flag. `admin_group` empty: only root is an admin.
Caller Identify(uid_t uid, gid_t gid, pid_t pid, const std::string& admin_group);

// Lookups in the user and group databases, each kept `ttl` after it was made, so that a burst
// of requests or job launches does not read the databases for every one: with LDAP behind NSS
// each lookup can take milliseconds (nscd and sssd keep theirs for minutes to hours). Clear() on
// a reload. Bounded: a cache that reaches kMaxEntries starts over.
template <typename Key, typename Value>
class ExpiringCache {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::size_t kMaxEntries = 4096;
  explicit ExpiringCache(Clock::duration ttl) : ttl_(ttl) {}
  // The value for `key`: cached, or `lookup()` when there is none or it has expired.
  template <typename Lookup>
  const Value& Get(const Key& key, Clock::time_point now, Lookup&& lookup) {
    auto it = entries_.find(key);
    if (it == entries_.end() || now >= it->second.expires) {
      if (it == entries_.end() && entries_.size() >= kMaxEntries) entries_.clear();
      it = entries_.insert_or_assign(key, Entry{lookup(), now + ttl_}).first;
    }
    return it->second.value;
  }
  void Clear() { entries_.clear(); }

 private:
  struct Entry {
    Value value;
    Clock::time_point expires;
  };
  Clock::duration ttl_;
  std::map<Key, Entry> entries_;
};

// Recent socket callers' identities (a script submitting jobs one `rota` at a time). The pid is
// the connection's, never cached.
class CallerCache {
 public:
  using Clock = std::chrono::steady_clock;
  using Lookup = std::function<Caller(uid_t uid, gid_t gid)>;
  CallerCache(Clock::duration ttl, Lookup lookup) : cache_(ttl), lookup_(std::move(lookup)) {}
  Caller Get(uid_t uid, gid_t gid, pid_t pid, Clock::time_point now);
  void Clear() { cache_.Clear(); }

 private:
  ExpiringCache<std::pair<uid_t, gid_t>, Caller> cache_;
  Lookup lookup_;
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

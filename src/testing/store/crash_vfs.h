// Test helper: power loss below SQLite, in the spirit of SQLite's own crash-test VFS (src/test6.c
// in SQLite's sources). CrashVfs wraps the default "unix" VFS and becomes the default while it
// lives: every call goes through to the real file, and CrashVfs remembers, per file, what each
// write or truncation since that file's last sync replaced. CutAt(n) makes the n-th write, sync,
// truncation or deletion the moment the power fails: it and every later one fail with SQLITE_IOERR and touch
// nothing. After the connections are closed, PowerReturns() puts each file back as a disk could
// have it after the failure: what was synced stays; of what was not, nothing, a random part, or
// all of it but the last write torn by sector.
//
// Syncs are not passed to the disk: the test decides what survives, and 1,000 cut points run in
// seconds. Deletions count as durable at once (SQLite deletes only the WAL, at the last close).
// The -shm file (the WAL's index, shared memory) is removed by PowerReturns: after a real power
// loss its contents are stale, and SQLite rebuilds it from the WAL, as it does here.
//
// One CrashVfs at a time; not thread-safe (the store is used from one thread).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace rota::testing {

class CrashVfs {
 public:
  // What a disk keeps of the writes that were not synced when the power failed.
  enum class Loss {
    kAllUnsynced,   // none of them
    kSomeUnsynced,  // each kept or lost at random (a disk reorders its writes)
    kTornLast,      // none, except a random choice of the 512-byte sectors of the last one
  };

  CrashVfs();
  ~CrashVfs();
  CrashVfs(const CrashVfs&) = delete;
  CrashVfs& operator=(const CrashVfs&) = delete;

  // The power fails at the n-th write, sync, truncation or deletion counted from now (1: the next
  // one); 0: never.
  void CutAt(std::int64_t n);
  // Writes, syncs, truncations and deletions so far (what CutAt counts), and whether the power
  // has failed.
  std::int64_t operations() const { return operations_; }
  bool cut() const { return cut_; }
  // When set, a sync makes nothing durable (as `synchronous=OFF`, or a disk that lies about its
  // cache): the negative control that shows a test can see lost commits.
  void IgnoreSyncs(bool ignore) { ignore_syncs_ = ignore; }

  // The power comes back: call with no connection open. Rewrites each file the way `loss` says,
  // removes the -shm files, and forgets every file's history (the next cut starts from here).
  // Returns "" or what went wrong with the real files.
  std::string PowerReturns(Loss loss, std::mt19937_64& rng);

  // SQLite's callbacks (crash_vfs.cc); not for tests.
  struct Change {
    std::int64_t sequence = 0;  // order among every file's changes
    bool truncate = false;
    std::int64_t offset = 0;    // a write's offset, or the size truncated to
    std::string before;         // the bytes the change replaced (within the old size)
    std::string data;           // what a write wrote
    std::int64_t old_size = 0;  // the file's size before the change
  };
  struct File;
  sqlite3_vfs* real() const { return real_; }
  // Counts one operation; false when the power is (now) off and it must fail.
  bool Operation();
  void Record(const std::string& path, Change change) {
    change.sequence = ++sequence_;
    unsynced_[path].push_back(std::move(change));
  }
  void Synced(const std::string& path) {
    if (!ignore_syncs_) unsynced_.erase(path);
  }
  void Deleted(const std::string& path) { unsynced_.erase(path); }
  void OpenedDatabase(const std::string& path) { databases_.insert(path); }

 private:
  sqlite3_vfs vfs_{};
  sqlite3_vfs* real_ = nullptr;
  std::int64_t operations_ = 0;
  std::int64_t cut_at_ = 0;
  bool cut_ = false;
  bool ignore_syncs_ = false;
  std::int64_t sequence_ = 0;
  std::map<std::string, std::vector<Change>> unsynced_;  // by path
  std::set<std::string> databases_;                      // opened through this VFS: their -shm go
};

}  // namespace rota::testing

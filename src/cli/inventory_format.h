// What `rota inventory` prints: the daemon's `inventory` reply (docs/api.md, op "inventory")
// with the storage and per-user usage that the command line measured itself. The markdown form
// is the lab wiki's GPU_INFO.md; the text form is the same information as aligned tables.
// Pure: measurements come in as values; local times use the process's time zone.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace rota::cli {

// One configured storage path as statvfs(3) saw it. Bytes.
struct StorageInfo {
  std::string path;
  std::string error;  // non-empty: the path could not be measured (its row says why)
  std::string mount;  // the mount point of the file system holding `path`
  unsigned long long size = 0;
  unsigned long long used = 0;
  unsigned long long free = 0;  // available to ordinary users (df's "Avail")
};

// One user's usage on one file system, from repquota. KiB; a limit of 0 means none.
struct QuotaUsage {
  std::string user;  // "#1234" when the uid has no name
  long long used_kib = 0;
  long long soft_kib = 0;
  long long hard_kib = 0;
  std::string status;  // "ok", "soft" (over the soft limit), "hard" (over the hard limit)
};

struct QuotaFilesystem {
  std::string mount;
  std::vector<std::string> paths;  // the configured paths on it
  std::string error;               // non-empty: no usage for this file system, and why
  std::vector<QuotaUsage> users;
};

struct QuotaReport {
  std::string unavailable;  // non-empty: no per-user usage at all ("repquota not installed")
  std::vector<QuotaFilesystem> filesystems;
};

// The whole report: title (hostname, date), GPUs (index, model, memory, NVLink peers, MIG
// capable, MIG mode with its slices, status), driver and source, storage (path, size, used,
// free, use%; an error cell for a path that could not be measured), then per-user usage (a
// table sorted by usage, or "per-user usage: not available (why)"). `markdown`: GitHub tables
// with '|' in cells escaped; else aligned text tables.
std::string FormatInventory(const nlohmann::json& inventory, const std::vector<StorageInfo>& storage,
                            const QuotaReport& quota, bool markdown);

// Bytes as df -h prints them (powers of 1024): "0B", "512K", "9.5G", "512G", "1.8T".
std::string HumanBytes(unsigned long long bytes);

// The users of one `repquota -u -O csv MOUNT` report (quota 4.x, run under LC_ALL=C: a header
// line "User,BlockStatus,FileStatus,BlockUsed,BlockSoftLimit,BlockHardLimit,BlockGrace,FileUsed,
// ..." then one line per user, block counts in KiB). InvalidArgument when the text is not such
// a report (no header, a line with too few fields or a number that is not one).
StatusOr<std::vector<QuotaUsage>> ParseRepquotaCsv(std::string_view text);

// The measurements as `rota inventory --json` adds them to the reply: "storage_usage" (bytes)
// and "quota" ({"available", "reason", "filesystems": [{"mount", "paths", "error", "users"}]}).
nlohmann::json StorageUsageJson(const std::vector<StorageInfo>& storage);
nlohmann::json QuotaJson(const QuotaReport& quota);

}  // namespace rota::cli

#include "slurm/accounting.h"

#include <array>

#include "slurm/nodes.h"
#include "slurm/parsable.h"

namespace rota::slurm {

namespace {

// JobID last: never empty, so a line's final delimiter cannot be mistaken for an empty value.
constexpr std::array<const char*, 9> kFields = {"JobName",  "UID",   "State", "Reason", "ExitCode",
                                                "NodeList", "Start", "End",   "JobID"};

// "3:0" -> exit 3 as a wait status; "0:9" -> killed by signal 9.
bool WaitStatusOf(std::string_view exit_code, int& status) {
  const size_t colon = exit_code.find(':');
  int code = 0, signo = 0;
  if (colon == std::string_view::npos || !WholeNumber(exit_code.substr(0, colon), code) ||
      !WholeNumber(exit_code.substr(colon + 1), signo) || code < 0 || code > 255 || signo < 0 || signo > 127) {
    return false;
  }
  status = signo != 0 ? signo : code << 8;
  return true;
}

// Every user's allocations (no steps), parsable with our delimiter, no header: `fields`.
std::vector<std::string> AllocationArgs(std::span<const char* const> fields) {
  std::string joined;
  for (const char* f : fields) {
    if (!joined.empty()) joined += ',';
    joined += f;
  }
  return {"-P", "-n", "-X", "-a", std::string("--delimiter=") + kAccountingDelimiter, "-o", joined};
}

}  // namespace

std::vector<std::string> AccountingArgs(std::string_view tag, std::span<const JobId> ids, Time since) {
  std::string names = "--name=";
  for (size_t i = 0; i < ids.size() && i < kAccountingBatch; ++i) {
    if (i > 0) names += ',';
    names += TagOf(tag, ids[i]);
  }
  std::vector<std::string> args = AllocationArgs(kFields);
  for (std::string a : {names, std::string("-S"), SlurmTime(since)}) args.push_back(std::move(a));
  return args;
}

StatusOr<std::vector<QueuedJob>> ParseAccounting(std::string_view text) {
  StatusOr<std::vector<std::vector<std::string>>> records =
      SplitRecords(text, kAccountingDelimiter, kFields.size());
  if (!records.ok()) return records.status();
  std::vector<QueuedJob> out;
  out.reserve(records->size());
  for (std::vector<std::string>& r : *records) {
    QueuedJob j;
    j.name = std::move(r[0]);
    j.id = std::move(r[8]);
    std::string_view state = r[2];
    if (const size_t by = state.find(" by "); by != std::string_view::npos) {
      j.reason = "by uid " + std::string(state.substr(by + 4));
      state = state.substr(0, by);
    } else {
      j.reason = r[3];
    }
    j.state = std::string(state);
    unsigned long uid = 0;
    if (j.id.empty() || j.state.empty() || !WholeNumber(r[1], uid) || !WaitStatusOf(r[4], j.wait_status)) {
      return InvalidArgument("Slurm's accounting has a job line that cannot be read: job \"" + j.id +
                             "\", user \"" + r[1] + "\", state \"" + r[2] + "\", exit code \"" + r[4] + "\"");
    }
    j.uid = static_cast<uid_t>(uid);
    j.nodes = r[5] == "None assigned" || r[5] == "(null)" ? "" : std::move(r[5]);
    if (Status s = ReadTimes(r[6], r[7], j); !s.ok()) return s;
    out.push_back(std::move(j));
  }
  return out;
}

namespace {

constexpr std::array<const char*, 7> kWindowFields = {"UID", "State", "NodeList", "Start", "End", "AllocTRES",
                                                      "JobID"};

// Takes the first item off a comma-separated list (AllocTRES, AccountingStorageTRES).
std::string_view NextItem(std::string_view& list) {
  const size_t comma = list.find(',');
  const std::string_view item = list.substr(0, comma);
  list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  return item;
}

// AllocTRES's GPUs and shards (see AccountedUse). An item "gres/gpu=2" is the untyped total,
// "gres/gpu:card0=1" one type's part of it.
bool ReadTres(std::string_view tres, AccountedUse& use) {
  int untyped_gpus = 0, typed_gpus = 0, untyped_shards = 0;
  bool typed = false;
  while (!tres.empty()) {
    const std::string_view item = NextItem(tres);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = item.substr(0, eq);
    int count = 0;
    if (!key.starts_with("gres/")) continue;
    if (!WholeNumber(item.substr(eq + 1), count) || count < 0) return false;
    key.remove_prefix(5);
    const size_t colon = key.find(':');
    const std::string_view name = key.substr(0, colon);
    const std::string type = colon == std::string_view::npos ? "" : std::string(key.substr(colon + 1));
    if (name == "gpu") {
      if (type.empty()) {
        untyped_gpus = count;
      } else if (MigProfile(type).empty()) {
        typed_gpus += count;
        typed = true;
      } else {
        typed = true;  // a slice: not a whole GPU
        if (count > 0) use.slices.emplace_back(type, count);
      }
    } else if (name == "shard") {
      if (type.empty()) {
        untyped_shards = count;
      } else if (count > 0) {
        use.shards.emplace_back(type, count);
      }
    }
  }
  use.gpus = typed ? typed_gpus : untyped_gpus;
  if (use.shards.empty() && untyped_shards > 0) use.shards.emplace_back("", untyped_shards);
  return true;
}

}  // namespace

std::vector<std::string> WindowArgs(Time since, Time until) {
  std::vector<std::string> args = AllocationArgs(kWindowFields);
  // Every run the window lists of a job that Slurm requeued (REQUEUED, each its own start and
  // end), not only its latest; 22.05's later runs need RunsArgs.
  for (std::string a : {std::string("--duplicates"), std::string("-S"), SlurmTime(since), std::string("-E"),
                        SlurmTime(until)})
    args.push_back(std::move(a));
  return args;
}

std::vector<std::string> RunsArgs(std::span<const std::string> ids) {
  std::vector<std::string> args = AllocationArgs(kWindowFields);
  std::string list;
  for (size_t i = 0; i < ids.size() && i < kAccountingBatch; ++i) {
    if (i > 0) list += ',';
    list += ids[i];
  }
  for (std::string a : {std::string("--duplicates"), std::string("-j"), list}) args.push_back(std::move(a));
  return args;
}

StatusOr<std::vector<AccountedUse>> ParseWindow(std::string_view text) {
  StatusOr<std::vector<std::vector<std::string>>> records =
      SplitRecords(text, kAccountingDelimiter, kWindowFields.size());
  if (!records.ok()) return records.status();
  std::vector<AccountedUse> out;
  out.reserve(records->size());
  for (std::vector<std::string>& r : *records) {
    AccountedUse use;
    use.id = std::move(r[6]);
    std::string_view state = r[1];
    if (const size_t by = state.find(" by "); by != std::string_view::npos) state = state.substr(0, by);
    use.state = std::string(state);
    unsigned long uid = 0;
    QueuedJob times;
    if (use.id.empty() || use.state.empty() || !WholeNumber(r[0], uid) || !ReadTimes(r[3], r[4], times).ok() ||
        !ReadTres(r[5], use)) {
      return InvalidArgument("Slurm's accounting has a job line that cannot be read: job \"" + use.id +
                             "\", user \"" + r[0] + "\", state \"" + r[1] + "\", TRES \"" + r[5] + "\"");
    }
    use.uid = static_cast<uid_t>(uid);
    use.nodes = r[2] == "None assigned" || r[2] == "(null)" ? "" : std::move(r[2]);
    use.start = times.start;
    use.end = times.end;
    out.push_back(std::move(use));
  }
  return out;
}

std::string AccountingGap(std::string_view show_config) {
  const std::string type = ConfigValue(show_config, "AccountingStorageType");
  if (type.empty()) return "";
  if (type == "accounting_storage/none") {
    return "Slurm keeps no accounting (AccountingStorageType is accounting_storage/none): how a job ended "
           "that Slurm has forgotten is not known, and jobs outside Rota that end while rotad is away are "
           "not charged";
  }
  const std::string tres = ConfigValue(show_config, "AccountingStorageTRES");
  for (std::string_view rest = tres; !rest.empty();) {
    const std::string_view item = NextItem(rest);
    if (item == "gres/gpu" || item.starts_with("gres/gpu:")) return "";
  }
  return "Slurm's accounting keeps no GPUs (AccountingStorageTRES has no gres/gpu): jobs outside Rota "
         "that end while rotad is away are not charged";
}

bool AccountingDisabled(std::string_view sacct_output) {
  return sacct_output.find("accounting storage is disabled") != std::string_view::npos;
}

}  // namespace rota::slurm

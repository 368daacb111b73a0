#include "slurm/queue.h"

#include <sys/wait.h>

#include <array>
#include <map>
#include <csignal>
#include <ctime>

namespace rota::slurm {

namespace {

// No free text that a user sets (a job's name or comment may hold the delimiter, even a newline:
// one such job would make the whole queue unreadable, or forge a line). Names: OursFormat.
constexpr std::array<const char*, 9> kQueueFields = {"JobID",     "UserID",   "State",     "Reason",       "exit_code",
                                                     "NodeList",  "StartTime", "EndTime", "tres-per-node"};
// Rota's own jobs, asked by exact name (NamesFilter): the queue's fields and then this one.
constexpr std::array<const char*, 1> kNameField = {"Name"};

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

}  // namespace

std::string QueueFormat() { return FieldsFormat(kQueueFields, kQueueDelimiter); }
std::string OursFormat() { return QueueFormat() + "," + FieldsFormat(kNameField, kQueueDelimiter); }

std::string ActiveStates() {
  // Every state of a job not over yet, as squeue names them from 22.05 to 24.x.
  return "PENDING,RUNNING,SUSPENDED,COMPLETING,CONFIGURING,RESIZING,REQUEUED,REQUEUE_HOLD,REQUEUE_FED,"
         "RESV_DEL_HOLD,SIGNALING,SPECIAL_EXIT,STAGE_OUT,STOPPED";
}

void MergeOurs(std::vector<QueuedJob>& queue, std::vector<QueuedJob> ours) {
  std::map<std::string, size_t> at;
  for (size_t i = 0; i < queue.size(); ++i) at[queue[i].id] = i;
  std::vector<QueuedJob> over;  // appended after the lookups: `queue` may move as it grows
  for (QueuedJob& o : ours) {
    if (auto it = at.find(o.id); it != at.end()) {
      queue[it->second].name = std::move(o.name);
    } else {
      over.push_back(std::move(o));
    }
  }
  for (QueuedJob& o : over) queue.push_back(std::move(o));
}

std::string NamesFilter(std::string_view tag, const std::vector<JobId>& ids) {
  std::string out = "--name=";
  for (size_t i = 0; i < ids.size(); ++i) out += (i > 0 ? "," : "") + TagOf(tag, ids[i]);
  return out;
}

StatusOr<Time> ParseSlurmTime(std::string_view text) {
  if (text.empty() || text == "N/A" || text == "Unknown" || text == "None") return Time{0};
  std::tm tm{};
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  const bool shape = text.size() == 19 && text[4] == '-' && text[7] == '-' && text[10] == 'T' &&
                     text[13] == ':' && text[16] == ':';
  if (!shape || !WholeNumber(text.substr(0, 4), y) || !WholeNumber(text.substr(5, 2), mo) ||
      !WholeNumber(text.substr(8, 2), d) || !WholeNumber(text.substr(11, 2), h) || !WholeNumber(text.substr(14, 2), mi) ||
      !WholeNumber(text.substr(17, 2), s)) {
    return InvalidArgument("Slurm time " + Quoted(text) + " is not YYYY-MM-DDTHH:MM:SS");
  }
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  tm.tm_isdst = -1;  // the zone's own rule for that date
  const std::time_t t = std::mktime(&tm);
  if (t == static_cast<std::time_t>(-1))
    return InvalidArgument("Slurm time " + Quoted(text) + " is out of range");
  return static_cast<Time>(t);
}

std::string SlurmTime(Time t) {
  const std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

Status ReadTimes(std::string_view start, std::string_view end, QueuedJob& j) {
  StatusOr<Time> s = ParseSlurmTime(start), e = ParseSlurmTime(end);
  if (!s.ok()) return Status(s.status().code(), "job " + j.id + ": " + s.status().message());
  if (!e.ok()) return Status(e.status().code(), "job " + j.id + ": " + e.status().message());
  j.start = *s;
  j.end = *e;
  return Status();
}

namespace {

// ParseQueue's and ParseOurs' lines: the queue's fields, then the name where `named`.
StatusOr<std::vector<QueuedJob>> ParseJobLines(std::string_view text, bool named) {
  StatusOr<std::vector<std::vector<std::string>>> records =
      SplitRecords(text, kQueueDelimiter, kQueueFields.size() + (named ? kNameField.size() : 0));
  if (!records.ok()) return records.status();
  std::vector<QueuedJob> out;
  out.reserve(records->size());
  for (std::vector<std::string>& r : *records) {
    QueuedJob j;
    j.id = std::move(r[0]);
    j.state = std::move(r[2]);
    j.reason = std::move(r[3]);
    j.nodes = r[5] == "(null)" ? "" : std::move(r[5]);
    unsigned long uid = 0;
    if (j.id.empty() || !WholeNumber(r[1], uid) || !WholeNumber(r[4], j.wait_status) || j.state.empty()) {
      return InvalidArgument("Slurm's queue has a job line that cannot be read: job " + Quoted(j.id) +
                             ", user " + Quoted(r[1]) + ", state " + Quoted(j.state) + ", exit code " +
                             Quoted(r[4]));
    }
    j.uid = static_cast<uid_t>(uid);
    if (Status s = ReadTimes(r[6], r[7], j); !s.ok()) return s;
    StatusOr<std::vector<Gres>> gres = ParseGresList(r[8]);
    if (!gres.ok()) return Status(gres.status().code(), "job " + j.id + ": " + gres.status().message());
    j.per_node = std::move(*gres);
    if (named) {
      // Only names asked for (Rota's tags) come back: never empty.
      std::string& name = r[kQueueFields.size()];
      if (name.empty()) return InvalidArgument("Slurm's queue has a line of Rota's jobs without a name: job " + j.id);
      j.name = std::move(name);
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace

StatusOr<std::vector<QueuedJob>> ParseQueue(std::string_view text) { return ParseJobLines(text, false); }
StatusOr<std::vector<QueuedJob>> ParseOurs(std::string_view text) { return ParseJobLines(text, true); }

std::string TagOf(std::string_view tag, JobId id) { return std::string(tag) + "-" + std::to_string(id); }

JobId RotaJobOf(std::string_view tag, std::string_view name) {
  if (name.size() <= tag.size() || name.substr(0, tag.size()) != tag || name[tag.size()] != '-') return 0;
  JobId id = 0;
  std::string_view digits = name.substr(tag.size() + 1);
  if (digits.empty() || digits.front() == '0' || !WholeNumber(digits, id) || id <= 0) return 0;
  return id;
}

bool Active(std::string_view state) {
  static constexpr std::array<std::string_view, 14> kActive = {
      "PENDING",   "CONFIGURING", "RUNNING",       "COMPLETING",   "SUSPENDED",
      "REQUEUED",  "REQUEUE_FED", "REQUEUE_HOLD",  "RESIZING",     "SIGNALING",
      "STAGE_OUT", "STOPPED",     "RESV_DEL_HOLD", "POWER_UP_NODE"};
  for (std::string_view s : kActive) {
    if (state == s) return true;
  }
  return false;
}

std::optional<JobExit> ExitOf(const QueuedJob& job) {
  if (Active(job.state)) return std::nullopt;
  using K = JobExit::Kind;
  JobExit e;
  e.end_time = job.end;
  const int status = job.wait_status;
  const bool signalled = WIFSIGNALED(status);
  auto killed = [&](int default_signal, std::string why) {
    e.kind = K::kSignalled;
    e.signal = signalled ? WTERMSIG(status) : default_signal;
    e.reason = std::move(why);
  };
  const std::string on = job.nodes.empty() ? "" : " on " + job.nodes;
  if (job.state == "COMPLETED" || (job.state == "FAILED" && status != 0)) {
    if (signalled) {
      e.kind = K::kSignalled;
      e.signal = WTERMSIG(status);
    } else {
      e.kind = K::kExited;
      e.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : status;
    }
  } else if (job.state == "FAILED") {
    e.kind = K::kStartFailed;
    e.reason = "Slurm could not start it" + on + " (" + job.reason + ")";
  } else if (job.state == "CANCELLED") {
    // sacct says who ("CANCELLED by 1000": reason "by uid 1000"); squeue does not.
    const bool by = job.reason.rfind("by uid ", 0) == 0;
    killed(SIGTERM, "cancelled in Slurm" + (by ? " " + job.reason : std::string()) + ", not through Rota");
  } else if (job.state == "TIMEOUT") {
    killed(SIGKILL, "killed by Slurm at its time limit (TIMEOUT)");
  } else if (job.state == "PREEMPTED") {
    killed(SIGTERM, "preempted by Slurm (PREEMPTED)");
  } else if (job.state == "OUT_OF_MEMORY") {
    killed(SIGKILL, "out of memory (Slurm OUT_OF_MEMORY)");
  } else if (job.state == "DEADLINE") {
    killed(SIGKILL, "killed by Slurm at its deadline (DEADLINE)");
  } else if (job.state == "NODE_FAIL" || job.state == "BOOT_FAIL") {
    e.kind = K::kVanished;
    e.reason = "its node failed in Slurm" + on + " (" + job.state + ")";
  } else {
    e.kind = K::kVanished;
    e.reason = "Slurm ended it as " + job.state + on + " (" + job.reason + ")";
  }
  return e;
}

}  // namespace rota::slurm

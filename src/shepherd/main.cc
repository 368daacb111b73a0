// rota-shepherd: runs one job for rotad and records how it ended.
//   rota-shepherd --job <id> --spec <run_dir>/<id>.spec --run-dir <run_dir> --token <token>
//   rota-shepherd --standby --run-dir <run_dir>
// Started by the executor (src/exec/executor.cc) in its own session with /dev/null as stdio; it
// outlives the daemon if need be. Writes <run_dir>/<id>.result atomically and exits 0; exits 2
// on bad arguments, 1 when the result cannot be written.
//
// A standby shepherd is started ahead of need and waits for its job on descriptor 3: one line
// "<id> <token>\n" (its spec is then <run_dir>/<id>.spec). At end of file or on anything else it
// exits 0 having started nothing. Once the job's result is written it sends "ended\n"
// (exec::kEndedNote) back on the same descriptor and exits: the daemon collects the end without
// waiting for the shepherd's exit. Where it may (CAP_SYS_NICE), a standby waits 5 nice levels
// above the daemon's priority and returns to it once its job is started (design.md, "Standbys
// start their job ahead of others' clean-up"); the job runs at the daemon's nice value.
//
// It leaves the job's cgroup, emptied, to the daemon (exec::Executor::RemoveEndedCgroups), which
// removes it once the launches of the moment are done: a cgroup's removal holds the kernel lock
// that the next job's cgroup and clone need. When the daemon that started it is gone (its parent
// changed), it removes the cgroup itself.
//
// Before it starts the job it takes the launch lock on the spec (exec/spec_lock.h) and keeps it
// until it exits. It exits 3 without starting the job or writing a result when this launch is
// not (or no longer) its to run: the spec is gone or unlinked (a restarted daemon withdrew a
// launch that no shepherd had taken), carries another token (a later launch of the same job),
// or another process holds its lock. It also exits 3, without a result, when its spec was removed
// while the job ran: the daemon withdrew the launch (exec::Executor::Withdraw) and killed the job.
// Tested by src/exec/shepherd_test.cc and executor_test.cc.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>

#include "exec/cgroup.h"
#include "exec/container_argv.h"
#include "exec/files.h"
#include "exec/spec.h"
#include "exec/spec_lock.h"
#include "shepherd/supervisor.h"

namespace {

constexpr int kNotOurs = 3;

constexpr int kStandbyFd = 3;

constexpr int kStartBoost = 5;

int Usage() {
  std::fprintf(stderr,
               "usage: rota-shepherd --job <id> --spec <file> --run-dir <dir> --token <token>\n"
               "       rota-shepherd --standby --run-dir <dir>\n");
  return 2;
}

// A standby's job: "<id> <token>\n" from kStandbyFd, which stays open (close-on-exec) for the
// note at the end. False at end of file, on a read error or on a malformed line.
bool ReadStandbyJob(std::string* job_text, std::string* token) {
  std::string line;
  char buf[128];
  while (line.find('\n') == std::string::npos && line.size() < 256) {
    ssize_t n = read(kStandbyFd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    line.append(buf, static_cast<std::size_t>(n));
  }
  fcntl(kStandbyFd, F_SETFD, FD_CLOEXEC);  // not the job's
  std::size_t end = line.find('\n');
  std::size_t space = line.find(' ');
  if (end == std::string::npos || space == std::string::npos || space > end) return false;
  *job_text = line.substr(0, space);
  *token = line.substr(space + 1, end - space - 1);
  return !token->empty() && token->find(' ') == std::string::npos;
}

}  // namespace

int main(int argc, char** argv) {
  using rota::exec::ExitInfo;
  const bool standby = argc == 4 && std::string(argv[1]) == "--standby";
  const pid_t daemon = getppid();  // rotad starts every shepherd itself
  // A standby starts its job ahead of the clean-up of the jobs that just ended (their shepherds
  // run at the daemon's priority): kStartBoost nice levels higher where it may (CAP_SYS_NICE),
  // until the job is started. The job, and then the shepherd, go back to the daemon's nice value.
  std::optional<int> job_nice;
  if (standby) {
    errno = 0;
    const int nice = getpriority(PRIO_PROCESS, 0);
    if (errno == 0 && setpriority(PRIO_PROCESS, 0, nice - kStartBoost) == 0) job_nice = nice;
  }
  close_range(standby ? kStandbyFd + 1 : 3, ~0U, 0);  // nothing of the daemon's must stay open in the job
  if (argc != 9 && !standby) return Usage();
  std::string job_text, spec_path, run_dir, token;
  if (standby) {
    if (std::string(argv[2]) != "--run-dir") return Usage();
    run_dir = argv[3];
    if (!ReadStandbyJob(&job_text, &token)) return 0;  // not needed after all
  }
  for (int i = 1; !standby && i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--job") {
      job_text = argv[i + 1];
    } else if (flag == "--spec") {
      spec_path = argv[i + 1];
    } else if (flag == "--run-dir") {
      run_dir = argv[i + 1];
    } else if (flag == "--token") {
      token = argv[i + 1];
    } else {
      return Usage();
    }
  }
  char* end = nullptr;
  long long job = std::strtoll(job_text.c_str(), &end, 10);
  const bool job_ok = !job_text.empty() && *end == '\0' && job > 0;
  if (standby && job_ok) spec_path = rota::exec::SpecPath(run_dir, job);
  if (!job_ok || spec_path.empty() || run_dir.empty() || token.empty()) return standby ? 0 : Usage();

  // The descriptor stays open (and the lock held) until exit: closing any descriptor of the
  // spec would drop the lock, so the spec is read through this one.
  rota::exec::UniqueFd fd(open(spec_path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
  const int open_errno = errno;
  if (fd.get() < 0 && open_errno == ENOENT) return kNotOurs;
  rota::StatusOr<std::string> text =
      fd.get() >= 0 ? rota::exec::ReadFd(fd.get(), spec_path)
                    : rota::StatusOr<std::string>(rota::Internal(rota::exec::ErrnoMessage("cannot open " + spec_path, open_errno)));
  rota::StatusOr<rota::exec::JobSpec> spec =
      text.ok() ? rota::exec::SpecFromJson(*text) : rota::StatusOr<rota::exec::JobSpec>(text.status());
  if (spec.ok() && spec->token != token) return kNotOurs;  // one spec file, one content: a later launch's
  if (fd.get() >= 0) {
    rota::StatusOr<bool> locked = rota::exec::TryLockSpec(fd.get(), spec_path);
    if (locked.ok() && !*locked) return kNotOurs;
    struct stat st;
    if (locked.ok() && fstat(fd.get(), &st) == 0 && st.st_nlink == 0) return kNotOurs;  // withdrawn
    if (!locked.ok() && spec.ok()) spec = locked.status();
  }
  if (spec.ok() && spec->launch.job_id != job) {
    spec = rota::InvalidArgument("spec " + spec_path + " is for job " + std::to_string(spec->launch.job_id));
  }

  // A container is named for this launch: a later launch of the job (requeued) gets another.
  if (spec.ok() && spec->launch.container.runtime != rota::exec::ContainerRuntime::kNone) {
    spec->launch.container.name = rota::exec::ContainerName(job, token);
  }
  ExitInfo info;
  if (!spec.ok()) {
    info.kind = ExitInfo::Kind::kStartFailed;
    info.reason = "shepherd: " + spec.status().message();
    info.end_time = static_cast<std::int64_t>(time(nullptr));
  } else {
    info = rota::shepherd::SuperviseJob(*spec, job_nice);
    // Withdrawn while it ran (the daemon could not record its start and removed the spec,
    // exec::Executor::Withdraw): the job never started as far as the daemon's store goes, so no
    // result may say it ended.
    struct stat st;
    if (fstat(fd.get(), &st) == 0 && st.st_nlink == 0) {
      if (!spec->cgroup.empty()) (void)rota::exec::RemoveCgroup(spec->cgroup);
      return kNotOurs;
    }
  }
  rota::Status written = rota::exec::WriteFileAtomic(rota::exec::ResultPath(run_dir, job),
                                                     rota::exec::ResultToJson(info), 0600);
  if (!written.ok()) {
    std::fprintf(stderr, "rota-shepherd: %s\n", written.message().c_str());
    return 1;
  }
  // The daemon may collect now; a daemon that is gone (EPIPE) learns of the end from the result.
  if (standby) (void)send(kStandbyFd, rota::exec::kEndedNote, sizeof rota::exec::kEndedNote - 1, MSG_NOSIGNAL);
  // Handed to another parent: the daemon that started this shepherd is gone, and would remove
  // the emptied cgroup only at its next start, if ever. (A restarted daemon, not our parent
  // either, finds it gone.)
  if (getppid() != daemon && spec.ok() && !spec->cgroup.empty()) (void)rota::exec::RemoveCgroup(spec->cgroup);
  return 0;
}

#include "daemon/child_command.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "exec/files.h"
#include "exec/output_rule.h"
#include "exec/process.h"

namespace rota::daemon {

// A started child: its pid, pidfd and the read ends of its stdout and stderr (non-blocking).
// Named (not in the anonymous namespace) because ChildCommands::Child holds one.
struct Spawned {
  pid_t pid = -1;
  int pidfd = -1;
  int out = -1;
  int err = -1;
};

namespace {

[[noreturn]] void ChildFail(const char* what, int err) {
  // Only system calls here: the message is put together by hand.
  (void)!::write(2, what, std::strlen(what));
  (void)!::write(2, ": ", 2);
  const char* text = ::strerrordesc_np(err);
  if (text != nullptr) (void)!::write(2, text, std::strlen(text));
  (void)!::write(2, "\n", 1);
  ::_exit(127);
}

// Refuses `path` as a job's output where something another user could have laid is there
// (exec/output_rule.h; nothing there yet: the job's own open makes it). As the user, in the forked
// child: system calls only.
void CheckOutput(const char* path) {
  struct stat st {};
  if (::lstat(path, &st) != 0) return;
  const exec::OutputFault fault = exec::JudgeOutput(st, ::getuid());
  if (fault == exec::OutputFault::kNone) return;
  for (const char* part :
       {"the output ", path, " ", exec::OutputFaultWords(fault), "; ", exec::kOutputKinds, "\n"})
    (void)!::write(2, part, std::strlen(part));
  ::_exit(ChildCommand::kOutputRefused);
}

StatusOr<Spawned> Spawn(const ChildCommand& cmd) {
  if (cmd.argv.empty() || cmd.argv[0].empty() || cmd.argv[0][0] != '/') {
    return InvalidArgument("a command to run needs an absolute path");
  }
  std::vector<char*> argv, envp;
  for (const std::string& a : cmd.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : cmd.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const bool drop = cmd.as_user && ::geteuid() == 0 && cmd.uid != 0;
  if (cmd.as_user && !drop && cmd.uid != ::geteuid()) {
    return PermissionDenied("cannot run " + cmd.argv[0] + " as uid " + std::to_string(cmd.uid) +
                            ": rotad is not root");
  }
  if (cmd.as_user && cmd.uid == 0 && ::geteuid() == 0) {
    return PermissionDenied("will not run " + cmd.argv[0] + " for a user as root");
  }
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return Unavailable(exec::ErrnoMessage("pipe", errno));
  if (::pipe2(err, O_CLOEXEC) != 0) {
    const int e = errno;
    ::close(out[0]);
    ::close(out[1]);
    return Unavailable(exec::ErrnoMessage("pipe", e));
  }
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  auto close_all = [&] {
    for (int fd : {out[0], out[1], err[0], err[1], null_fd}) {
      if (fd >= 0) ::close(fd);
    }
  };
  if (null_fd < 0) {
    const int e = errno;
    close_all();
    return Unavailable(exec::ErrnoMessage("open /dev/null", e));
  }
  const char* cwd = cmd.cwd.c_str();
  const char* output = cmd.refuse_output.empty() ? nullptr : cmd.refuse_output.c_str();
  const gid_t* groups = cmd.groups.data();
  const size_t ngroups = cmd.groups.size();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    close_all();
    return Unavailable(exec::ErrnoMessage("cannot fork", e));
  }
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGPIPE, &dfl, nullptr);
    ::sigaction(SIGCHLD, &dfl, nullptr);
    if (::dup2(null_fd, 0) < 0 || ::dup2(out[1], 1) < 0 || ::dup2(err[1], 2) < 0) ::_exit(127);
    ::syscall(SYS_close_range, 3U, ~0U, 0U);
    if (drop && (::setgroups(ngroups, groups) != 0 || ::setresgid(cmd.gid, cmd.gid, cmd.gid) != 0 ||
                 ::setresuid(cmd.uid, cmd.uid, cmd.uid) != 0 || ::setuid(0) == 0)) {
      ChildFail("cannot take the user's identity", errno);
    }
    if (::chdir(cwd) != 0) ChildFail(cwd, errno);
    if (output != nullptr) CheckOutput(output);
    ::execve(argv[0], argv.data(), envp.data());
    ChildFail(argv[0], errno);
  }
  ::close(out[1]);
  ::close(err[1]);
  ::close(null_fd);
  Spawned s;
  s.pid = pid;
  s.out = out[0];
  s.err = err[0];
  ::fcntl(s.out, F_SETFL, O_NONBLOCK);
  ::fcntl(s.err, F_SETFL, O_NONBLOCK);
  StatusOr<int> pidfd = exec::OpenPidfd(pid);
  if (!pidfd.ok()) {  // only when out of descriptors: the child is stopped and reaped
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    ::close(s.out);
    ::close(s.err);
    return Unavailable("cannot watch " + cmd.argv[0] + ": " + pidfd.status().message());
  }
  s.pidfd = *pidfd;
  return s;
}

// Reads what `fd` has now into `into` (up to kMaxOutput kept). False at end of file or error.
bool Drain(int fd, std::string& into) {
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      const size_t room = ChildCommands::kMaxOutput - std::min(into.size(), ChildCommands::kMaxOutput);
      into.append(buf, std::min(static_cast<size_t>(n), room));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && errno == EAGAIN;
  }
}

// Reaps the exited child and fills `r` with how it ended.
void Reap(pid_t pid, bool timed_out, ChildResult& r) {
  int status = 0;
  pid_t got;
  while ((got = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    r.how = ChildResult::How::kTimedOut;
  } else if (got == pid && WIFEXITED(status)) {
    r.how = ChildResult::How::kExited;
    r.code = WEXITSTATUS(status);
  } else if (got == pid && WIFSIGNALED(status)) {
    r.how = ChildResult::How::kSignalled;
    r.code = WTERMSIG(status);
  } else {
    r.how = ChildResult::How::kNotStarted;
    r.why = exec::ErrnoMessage("cannot wait for it", errno);
  }
}

}  // namespace

std::string ChildResult::Describe() const {
  std::string last;
  size_t end = err.size();
  while (last.empty() && end > 0) {
    size_t start = err.rfind('\n', end - 1);
    start = start == std::string::npos ? 0 : start + 1;
    last = err.substr(start, end - start);
    while (!last.empty() && (last.back() == '\n' || last.back() == '\r' || last.back() == ' '))
      last.pop_back();
    end = start > 0 ? start - 1 : 0;
    if (start == 0) break;
  }
  switch (how) {
    case How::kNotStarted:
      return why;
    case How::kTimedOut:
      return "did not answer within its deadline" + (last.empty() ? "" : " (" + last + ")");
    case How::kSignalled:
      return last.empty() ? "killed by signal " + std::to_string(code) : last;
    case How::kExited:
      if (!last.empty() && code != 0) return last;
      return "exited with " + std::to_string(code);
  }
  return "";
}

struct ChildCommands::Child {
  Spawned s;
  std::unique_ptr<OneShotTimer> deadline;
  ChildResult result;
  Done done;
  bool timed_out = false;
};

StatusOr<std::unique_ptr<ChildCommands>> ChildCommands::Create(EventLoop& loop) {
  std::unique_ptr<ChildCommands> c(new ChildCommands(loop));
  StatusOr<std::unique_ptr<OneShotTimer>> t = OneShotTimer::Create(loop, [p = c.get()] { p->RunDeferred(); });
  if (!t.ok()) return t.status();
  c->deferred_timer_ = std::move(*t);
  return c;
}

ChildCommands::ChildCommands(EventLoop& loop) : loop_(loop) {}

ChildCommands::~ChildCommands() {
  for (auto& [key, c] : children_) {
    for (int fd : {c->s.pidfd, c->s.out, c->s.err}) {
      if (fd >= 0) {
        loop_.Remove(fd);
        ::close(fd);
      }
    }
    ::kill(c->s.pid, SIGKILL);
    while (::waitpid(c->s.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

void ChildCommands::Start(const ChildCommand& cmd, Done done) {
  StatusOr<Spawned> s = Spawn(cmd);
  Status watched = s.ok() ? Status() : s.status();
  const std::uint64_t key = next_key_++;
  if (s.ok()) {
    auto c = std::make_unique<Child>();
    c->s = *s;
    c->done = std::move(done);
    Child& child = *c;
    children_.emplace(key, std::move(c));
    StatusOr<std::unique_ptr<OneShotTimer>> t = OneShotTimer::Create(loop_, [this, key] { OnDeadline(key); });
    if (t.ok()) child.deadline = std::move(*t);
    if (!t.ok()) watched = t.status();
    if (watched.ok())
      watched = loop_.Add(child.s.out, EPOLLIN, [this, key](std::uint32_t) { OnPipe(key, false); });
    if (watched.ok())
      watched = loop_.Add(child.s.err, EPOLLIN, [this, key](std::uint32_t) { OnPipe(key, true); });
    if (watched.ok())
      watched = loop_.Add(child.s.pidfd, EPOLLIN, [this, key](std::uint32_t) { OnExit(key); });
    if (watched.ok()) {
      child.deadline->Arm(std::chrono::duration_cast<std::chrono::nanoseconds>(cmd.deadline).count());
      return;
    }
    // Cannot be watched: stopped now, its callback told at the next turn.
    done = std::move(child.done);
    for (int fd : {child.s.pidfd, child.s.out, child.s.err}) {
      loop_.Remove(fd);
      ::close(fd);
    }
    ::kill(child.s.pid, SIGKILL);
    while (::waitpid(child.s.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    children_.erase(key);
  }
  ChildResult r;
  r.how = ChildResult::How::kNotStarted;
  r.why = watched.message();
  deferred_.emplace_back(std::move(done), std::move(r));
  deferred_timer_->Arm(1);
}

void ChildCommands::RunDeferred() {
  std::vector<std::pair<Done, ChildResult>> now;
  now.swap(deferred_);
  for (auto& [done, r] : now) done(std::move(r));
}

void ChildCommands::OnPipe(std::uint64_t key, bool err_pipe) {
  auto it = children_.find(key);
  if (it == children_.end()) return;
  Child& c = *it->second;
  int& fd = err_pipe ? c.s.err : c.s.out;
  if (!Drain(fd, err_pipe ? c.result.err : c.result.out)) {  // end of file: nothing more comes
    loop_.Remove(fd);
    ::close(fd);
    fd = -1;
  }
}

void ChildCommands::OnDeadline(std::uint64_t key) {
  auto it = children_.find(key);
  if (it == children_.end()) return;
  it->second->timed_out = true;
  (void)exec::PidfdQueueSignal(it->second->s.pidfd, SIGKILL, 0);  // its exit comes through the pidfd
}

void ChildCommands::OnExit(std::uint64_t key) {
  auto it = children_.find(key);
  if (it == children_.end()) return;
  std::unique_ptr<Child> c = std::move(it->second);
  children_.erase(it);
  // What it wrote before it exited is in the pipes: read it all (a grandchild that keeps them
  // open is not waited for).
  for (int* fd : {&c->s.out, &c->s.err}) {
    if (*fd < 0) continue;
    (void)Drain(*fd, fd == &c->s.out ? c->result.out : c->result.err);
    loop_.Remove(*fd);
    ::close(*fd);
  }
  loop_.Remove(c->s.pidfd);
  ::close(c->s.pidfd);
  Reap(c->s.pid, c->timed_out, c->result);
  Done done = std::move(c->done);
  ChildResult r = std::move(c->result);
  c.reset();  // its deadline timer off the loop before the callback may start others
  done(std::move(r));
}

ChildResult ChildCommands::RunNow(const ChildCommand& cmd) {
  ChildResult r;
  StatusOr<Spawned> s = Spawn(cmd);
  if (!s.ok()) {
    r.why = s.status().message();
    return r;
  }
  const auto until = std::chrono::steady_clock::now() + cmd.deadline;
  bool timed_out = false;
  while (true) {
    pollfd fds[3] = {{s->pidfd, POLLIN, 0}, {s->out, POLLIN, 0}, {s->err, POLLIN, 0}};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    const int n = ::poll(fds, 3, static_cast<int>(std::max<long>(0, left.count())));
    if (n < 0 && errno == EINTR) continue;
    for (int i : {1, 2}) {
      int& fd = i == 1 ? s->out : s->err;
      if (fd >= 0 && fds[i].revents != 0 && !Drain(fd, i == 1 ? r.out : r.err)) {
        ::close(fd);
        fd = -1;
        fds[i].fd = -1;
      }
    }
    if (fds[0].revents != 0) break;
    if (n == 0 && !timed_out) {
      timed_out = true;
      (void)exec::PidfdQueueSignal(s->pidfd, SIGKILL, 0);
    }
  }
  for (int* fd : {&s->out, &s->err}) {
    if (*fd < 0) continue;
    (void)Drain(*fd, fd == &s->out ? r.out : r.err);
    ::close(*fd);
  }
  ::close(s->pidfd);
  Reap(s->pid, timed_out, r);
  return r;
}

}  // namespace rota::daemon

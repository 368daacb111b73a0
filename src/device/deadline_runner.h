// DeadlineRunner: runs one task at a time on its own thread and waits for it at most a deadline.
//
// Used to call into drivers that may hang (NVML): a task that overruns is abandoned (its thread is
// detached and left to finish on its own) and, until it does, Run() refuses new tasks instead of
// piling up threads behind a stuck driver. At most one abandoned thread exists per runner.
//
// Thread-safety: Run() and Idle() from one thread at a time. A task must own (or share through
// shared_ptr) everything it touches, since it may outlive the call and the runner.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

namespace rota::device {

class DeadlineRunner {
 public:
  enum class Outcome {
    kDone,      // the task ran to completion within the deadline
    kTimedOut,  // the task is still running; it was abandoned
    kBusy,      // a previously abandoned task is still running; this one was not started
  };

  explicit DeadlineRunner(std::chrono::milliseconds deadline) : deadline_(deadline) {}
  ~DeadlineRunner() = default;  // never waits for an abandoned task
  DeadlineRunner(const DeadlineRunner&) = delete;
  DeadlineRunner& operator=(const DeadlineRunner&) = delete;

  Outcome Run(std::function<void()> task);
  // True when no abandoned task is still running.
  bool Idle();
  std::chrono::milliseconds deadline() const { return deadline_; }

 private:
  struct Flag;
  std::chrono::milliseconds deadline_;
  std::shared_ptr<Flag> abandoned_;  // set while an abandoned task may still run
};

}  // namespace rota::device

// Tested by nvml_devices_test.cc (a fake NVML that hangs beyond the deadline).
//
// Design: a fresh thread per task rather than a long-lived worker: a thread stuck in the driver
// cannot be reused or cancelled anyway, and at one sample a second the cost of starting a thread
// (tens of microseconds) is negligible. The "done" flag lives in a shared_ptr so the abandoned
// thread can still set it after Run() returned, and the next Run() can see that it finished.
// std::thread's constructor can throw (no more threads); that is reported as kBusy.
#include "device/deadline_runner.h"

#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

namespace rota::device {

struct DeadlineRunner::Flag {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
};

bool DeadlineRunner::Idle() {
  if (!abandoned_) return true;
  std::lock_guard<std::mutex> lock(abandoned_->mu);
  if (!abandoned_->done) return false;
  abandoned_.reset();
  return true;
}

DeadlineRunner::Outcome DeadlineRunner::Run(std::function<void()> task) {
  if (!Idle()) return Outcome::kBusy;
  auto flag = std::make_shared<Flag>();
  std::thread thread;
  try {
    thread = std::thread([flag, task = std::move(task)]() mutable {
      task();
      task = nullptr;  // release what the task holds before reporting done
      std::lock_guard<std::mutex> lock(flag->mu);
      flag->done = true;
      flag->cv.notify_all();
    });
  } catch (const std::system_error&) {
    return Outcome::kBusy;
  }
  std::unique_lock<std::mutex> lock(flag->mu);
  if (flag->cv.wait_for(lock, deadline_, [&] { return flag->done; })) {
    lock.unlock();
    thread.join();
    return Outcome::kDone;
  }
  lock.unlock();
  thread.detach();
  abandoned_ = std::move(flag);
  return Outcome::kTimedOut;
}

}  // namespace rota::device

// Tested by nvml_devices_test.cc, against the fake libraries in src/testing/fake_nvml.
//
// Design: everything that enters the driver (dlopen, nvmlInit, the sampling pass, nvmlShutdown)
// runs on a DeadlineRunner worker, because a wedged GPU can block any NVML call for minutes and
// the daemon must keep scheduling. The loaded library and its "initialised" flag live in a
// Session shared with the workers: an abandoned worker that wakes up later still finds them
// alive, and the next pass reuses them (NVML's init is reference-counted, so it is done once).
// Workers never run concurrently (the runner refuses new work while one is stuck), so Session's
// fields are written by one thread at a time; the mutex is for Describe() reading them.
#include "device/nvml_devices.h"

#include <cstdlib>
#include <atomic>
#include <mutex>
#include <optional>
#include <utility>

#include "device/deadline_runner.h"
#include "device/nvml_library.h"
#include "device/nvml_reader.h"

namespace rota::device {
namespace {

std::string FormatDeadline(std::chrono::milliseconds d) {
  if (d.count() % 1000 == 0) return std::to_string(d.count() / 1000) + " s";
  return std::to_string(d.count()) + " ms";
}

struct Session {
  std::string path;
  std::mutex mu;  // guards the fields below against Describe()
  std::shared_ptr<nvml::Library> lib;
  bool initialised = false;
  std::string driver_version;
  nvml::PassState pass;  // across passes; `pass.reading` is the card a current (or stuck) pass reads
  std::atomic<bool> stuck{false};  // the last Sample() found the driver hung
};

class NvmlDevices final : public Devices {
 public:
  explicit NvmlDevices(const NvmlOptions& options)
      : session_(std::make_shared<Session>()), runner_(options.deadline) {
    session_->path = ResolveNvmlLibraryPath(options);
  }

  ~NvmlDevices() override {
    std::shared_ptr<Session> session = session_;
    {
      std::lock_guard<std::mutex> lock(session->mu);
      if (!session->initialised) return;
    }
    if (!runner_.Idle()) return;  // the driver is stuck; do not add a second thread to it
    (void)runner_.Run([session] {
      if (session->pass.xid_set != nullptr) session->lib->fn().event_set_free(session->pass.xid_set);
      session->lib->fn().shutdown();
      std::lock_guard<std::mutex> lock(session->mu);
      session->initialised = false;
    });
  }

  StatusOr<Snapshot> Sample() override {
    auto result = std::make_shared<std::optional<StatusOr<Snapshot>>>();
    std::shared_ptr<Session> session = session_;
    DeadlineRunner::Outcome outcome = runner_.Run([session, result] { *result = Pass(*session); });
    session_->stuck = outcome != DeadlineRunner::Outcome::kDone;
    switch (outcome) {
      case DeadlineRunner::Outcome::kDone:
        return std::move(**result);
      case DeadlineRunner::Outcome::kTimedOut:
        return Unavailable("NVML did not answer within " + FormatDeadline(runner_.deadline()) + " (" +
                           session_->path + "); the call was abandoned");
      case DeadlineRunner::Outcome::kBusy:
        break;
    }
    return Unavailable("NVML is still stuck in an earlier call that overran " +
                       FormatDeadline(runner_.deadline()) + " (" + session_->path + ")");
  }

  int StuckCard() const override { return session_->stuck ? session_->pass.reading.load() : -1; }

  std::string Describe() const override {
    std::lock_guard<std::mutex> lock(session_->mu);
    std::string text = "nvml (" + session_->path;
    if (!session_->driver_version.empty()) text += "; driver " + session_->driver_version;
    if (session_->lib) {
      const auto& missing = session_->lib->missing();
      if (!missing.empty()) {
        text += "; without";
        for (const std::string& name : missing) text += " " + name;
      }
    } else {
      text += "; not loaded yet";
    }
    return text + ")";
  }

 private:
  // One sampling pass, on the worker: load and initialise if needed, then read every card.
  static StatusOr<Snapshot> Pass(Session& s) {
    std::shared_ptr<nvml::Library> lib;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      lib = s.lib;
    }
    if (!lib) {
      auto loaded = nvml::Library::Load(s.path);
      if (!loaded.ok()) return loaded.status();
      lib = std::move(loaded).value();
      std::lock_guard<std::mutex> lock(s.mu);
      s.lib = lib;
    }
    if (!s.initialised) {  // only workers write it, one at a time
      nvml::nvmlReturn_t r = lib->fn().init();
      if (r != nvml::NVML_SUCCESS) {
        return Unavailable("NVML (" + s.path + ") failed to initialise: " + lib->Error("nvmlInit", r));
      }
      std::lock_guard<std::mutex> lock(s.mu);
      s.initialised = true;
    }
    StatusOr<Snapshot> snap = nvml::ReadSnapshot(*lib, &s.pass);
    if (snap.ok()) {
      std::lock_guard<std::mutex> lock(s.mu);
      s.driver_version = snap->driver_version;
    }
    return snap;
  }

  std::shared_ptr<Session> session_;
  DeadlineRunner runner_;
};

}  // namespace

std::string ResolveNvmlLibraryPath(const NvmlOptions& options) {
  if (!options.library_path.empty()) return options.library_path;
  const char* env = std::getenv("ROTA_NVML_LIBRARY");
  if (env != nullptr && *env != '\0') return env;
  return "libnvidia-ml.so.1";
}

std::unique_ptr<Devices> MakeNvmlDevices(const NvmlOptions& options) {
  return std::make_unique<NvmlDevices>(options);
}

}  // namespace rota::device

// NvmlLibrary: libnvidia-ml opened with dlopen and its functions resolved, newest version first.
//
// Thread-safety: immutable after Load(); the function pointers may be called from any thread, but
// NVML itself is only called from one worker at a time (nvml_devices.cc guarantees it).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "device/nvml_api.h"

namespace rota::device::nvml {

// Resolved entry points. Required ones are never null after Load(); optional ones are null when
// the library does not export them (older drivers, the minimal fake).
struct Functions {
  // Required.
  nvmlInit_fn init = nullptr;
  nvmlShutdown_fn shutdown = nullptr;
  nvmlErrorString_fn error_string = nullptr;
  nvmlDeviceGetCount_fn get_count = nullptr;
  nvmlDeviceGetHandleByIndex_fn get_handle = nullptr;
  nvmlDeviceGetString_fn get_uuid = nullptr;
  nvmlDeviceGetString_fn get_name = nullptr;
  nvmlDeviceGetMemoryInfo_fn get_memory = nullptr;
  // Optional.
  nvmlDeviceGetPciInfo_fn get_pci = nullptr;
  int pci_version = 0;  // 3 (fills busId), 2 or 1 (busIdLegacy and numbers only)
  // At most one of these: the plain function (nvmlProcessInfo_v1_t), or _v3 or _v2
  // (nvmlProcessInfo_v2_t); processes_version says which (1, 2 or 3; 0: neither).
  nvmlDeviceGetComputeRunningProcesses_v1_fn get_processes_v1 = nullptr;
  nvmlDeviceGetComputeRunningProcesses_v2_fn get_processes_v2 = nullptr;
  int processes_version = 0;
  nvmlSystemGetDriverVersion_fn get_driver_version = nullptr;
  nvmlDeviceGetUtilizationRates_fn get_utilization = nullptr;
  nvmlDeviceGetTemperature_fn get_temperature = nullptr;
  nvmlDeviceGetPowerUsage_fn get_power = nullptr;
  nvmlDeviceGetMinorNumber_fn get_minor = nullptr;
  nvmlDeviceGetMigMode_fn get_mig_mode = nullptr;
  nvmlDeviceGetMaxMigDeviceCount_fn get_max_mig_count = nullptr;
  nvmlDeviceGetMigDeviceHandleByIndex_fn get_mig_handle = nullptr;
  nvmlDeviceGetProcessUtilization_fn get_process_utilization = nullptr;
  nvmlDeviceGetNvLinkState_fn get_nvlink_state = nullptr;
  nvmlDeviceGetNvLinkRemotePciInfo_fn get_nvlink_remote_pci = nullptr;
  nvmlDeviceGetTotalEccErrors_fn get_ecc_errors = nullptr;
  // Xid events: all four or none (Load() clears the others when one is missing).
  nvmlEventSetCreate_fn event_set_create = nullptr;
  nvmlDeviceRegisterEvents_fn register_events = nullptr;
  nvmlEventSetWait_fn event_set_wait = nullptr;  // _v2 (the v1 struct is shorter)
  nvmlEventSetFree_fn event_set_free = nullptr;
};

class Library {
 public:
  // Opens `path` (a file name searched by the dynamic loader, or a path) and resolves the symbols.
  // Unavailable when the file cannot be loaded or a required symbol is missing; the message names
  // the path and the symbol.
  static StatusOr<std::unique_ptr<Library>> Load(const std::string& path);
  ~Library();  // dlclose
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  const Functions& fn() const { return fn_; }
  const std::string& path() const { return path_; }
  // Symbols actually bound, e.g. "nvmlInit_v2", in resolution order (for Describe and tests).
  const std::vector<std::string>& resolved() const { return resolved_; }
  // Optional features the library lacks, by their function's base name.
  const std::vector<std::string>& missing() const { return missing_; }

  // "nvmlDeviceGetMemoryInfo: GPU_IS_LOST (GPU is lost)".
  std::string Error(const char* call, nvmlReturn_t code) const;

 private:
  Library(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  // Binds the first of `names` the library exports; returns its position in `names`, or -1.
  int Bind(std::initializer_list<const char*> names, void** out);

  void* handle_;
  std::string path_;
  Functions fn_;
  std::vector<std::string> resolved_;
  std::vector<std::string> missing_;
};

}  // namespace rota::device::nvml

// Tested by nvml_devices_test.cc (through the fake libraries in src/testing/fake_nvml).
//
// Design: symbols are looked up newest version first (nvmlInit_v2 before nvmlInit) because the
// unversioned names are kept by NVIDIA only for old callers and some take older struct layouts;
// which version was bound is recorded, since the process and PCI calls fill different layouts
// per version. A missing optional symbol is not an error: the reader skips that field and the
// feature is listed in missing() so that `rota inventory` and the log can say why a value is
// absent. RTLD_LOCAL keeps NVML's symbols out of the global namespace, so a test can load two
// different fakes in one process. RTLD_NODELETE keeps the library mapped after its last dlclose:
// nvmlInit starts threads of the driver's own that run its code, and nothing promises they are
// gone when the last Library is released (not at all when the driver hung and nvmlShutdown was
// never called); unmapping their code under them would kill rotad. A library once loaded stays
// for the life of the process, which costs nothing while it is the one in use.
#include "device/nvml_library.h"

#include <dlfcn.h>

#include <initializer_list>
#include <string>
#include <utility>

namespace rota::device::nvml {

StatusOr<std::unique_ptr<Library>> Library::Load(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Unavailable("cannot load NVML from '" + path + "': " + (why ? why : "unknown error") +
                       " (is the NVIDIA driver installed? set ROTA_NVML_LIBRARY to its path)");
  }
  std::unique_ptr<Library> lib(new Library(handle, path));
  Functions& f = lib->fn_;
  struct Required {
    std::initializer_list<const char*> names;
    void** out;
  };
  const Required required[] = {
      {{"nvmlInit_v2", "nvmlInit"}, reinterpret_cast<void**>(&f.init)},
      {{"nvmlShutdown"}, reinterpret_cast<void**>(&f.shutdown)},
      {{"nvmlErrorString"}, reinterpret_cast<void**>(&f.error_string)},
      {{"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}, reinterpret_cast<void**>(&f.get_count)},
      {{"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"},
       reinterpret_cast<void**>(&f.get_handle)},
      {{"nvmlDeviceGetUUID"}, reinterpret_cast<void**>(&f.get_uuid)},
      {{"nvmlDeviceGetName"}, reinterpret_cast<void**>(&f.get_name)},
      {{"nvmlDeviceGetMemoryInfo"}, reinterpret_cast<void**>(&f.get_memory)},
  };
  for (const Required& r : required) {
    if (lib->Bind(r.names, r.out) < 0) {
      return Unavailable("NVML library '" + path + "' lacks " + *r.names.begin() +
                         " (driver too old or not NVML)");
    }
  }

  // Optional: {names newest first, out, feature name}. The version of the bound symbol is
  // (count - position) for the versioned chains.
  int pos = lib->Bind({"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo"},
                      reinterpret_cast<void**>(&f.get_pci));
  f.pci_version = pos < 0 ? 0 : 3 - pos;
  if (pos < 0) lib->missing_.push_back("nvmlDeviceGetPciInfo");
  void* processes = nullptr;
  pos = lib->Bind({"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
                   "nvmlDeviceGetComputeRunningProcesses"},
                  &processes);
  f.processes_version = pos < 0 ? 0 : 3 - pos;
  if (f.processes_version == 1) {
    f.get_processes_v1 = reinterpret_cast<nvmlDeviceGetComputeRunningProcesses_v1_fn>(processes);
  } else if (f.processes_version > 1) {
    f.get_processes_v2 = reinterpret_cast<nvmlDeviceGetComputeRunningProcesses_v2_fn>(processes);
  }
  if (pos < 0) lib->missing_.push_back("nvmlDeviceGetComputeRunningProcesses");

  struct Optional {
    const char* name;
    void** out;
  };
  const Optional optional[] = {
      {"nvmlSystemGetDriverVersion", reinterpret_cast<void**>(&f.get_driver_version)},
      {"nvmlDeviceGetUtilizationRates", reinterpret_cast<void**>(&f.get_utilization)},
      {"nvmlDeviceGetTemperature", reinterpret_cast<void**>(&f.get_temperature)},
      {"nvmlDeviceGetPowerUsage", reinterpret_cast<void**>(&f.get_power)},
      {"nvmlDeviceGetMinorNumber", reinterpret_cast<void**>(&f.get_minor)},
      {"nvmlDeviceGetMigMode", reinterpret_cast<void**>(&f.get_mig_mode)},
      {"nvmlDeviceGetMaxMigDeviceCount", reinterpret_cast<void**>(&f.get_max_mig_count)},
      {"nvmlDeviceGetMigDeviceHandleByIndex", reinterpret_cast<void**>(&f.get_mig_handle)},
      {"nvmlDeviceGetProcessUtilization", reinterpret_cast<void**>(&f.get_process_utilization)},
      {"nvmlDeviceGetNvLinkState", reinterpret_cast<void**>(&f.get_nvlink_state)},
      {"nvmlDeviceGetTotalEccErrors", reinterpret_cast<void**>(&f.get_ecc_errors)},
  };
  for (const Optional& o : optional) {
    if (lib->Bind({o.name}, o.out) < 0) lib->missing_.push_back(o.name);
  }
  // Only _v2 fills busId; the unversioned one is not worth a second code path.
  if (lib->Bind({"nvmlDeviceGetNvLinkRemotePciInfo_v2"}, reinterpret_cast<void**>(&f.get_nvlink_remote_pci)) <
      0) {
    lib->missing_.push_back("nvmlDeviceGetNvLinkRemotePciInfo_v2");
  }
  const Optional events[] = {
      {"nvmlEventSetCreate", reinterpret_cast<void**>(&f.event_set_create)},
      {"nvmlDeviceRegisterEvents", reinterpret_cast<void**>(&f.register_events)},
      {"nvmlEventSetWait_v2", reinterpret_cast<void**>(&f.event_set_wait)},
      {"nvmlEventSetFree", reinterpret_cast<void**>(&f.event_set_free)},
  };
  bool all_events = true;
  for (const Optional& o : events) all_events = lib->Bind({o.name}, o.out) >= 0 && all_events;
  if (!all_events) {
    f.event_set_create = nullptr;
    f.register_events = nullptr;
    f.event_set_wait = nullptr;
    f.event_set_free = nullptr;
    lib->missing_.push_back("Xid events (nvmlEventSetWait_v2)");
  }
  return lib;
}

Library::~Library() { dlclose(handle_); }

int Library::Bind(std::initializer_list<const char*> names, void** out) {
  int pos = 0;
  for (const char* name : names) {
    if (void* sym = dlsym(handle_, name)) {
      *out = sym;
      resolved_.emplace_back(name);
      return pos;
    }
    ++pos;
  }
  *out = nullptr;
  return -1;
}

std::string Library::Error(const char* call, nvmlReturn_t code) const {
  std::string text = std::string(call) + ": " + ErrorName(code);
  const char* detail = fn_.error_string ? fn_.error_string(code) : nullptr;
  if (detail != nullptr && *detail != '\0') text += std::string(" (") + detail + ")";
  return text;
}

}  // namespace rota::device::nvml

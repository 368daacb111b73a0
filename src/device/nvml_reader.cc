// Tested by nvml_devices_test.cc (through the fake libraries in src/testing/fake_nvml).
//
// Design: the reader is a plain function of the loaded library, with no threads or deadlines of
// its own (nvml_devices.cc adds those), so each concern is small. Errors are sorted in two: an
// optional value NVML "cannot say" (not supported, no permission, no data) stays -1 or empty and
// is not a health problem, while anything else (GPU lost, reset required, timeout, unknown) marks
// the card; the first such error is kept, because later ones are usually its consequences.
// Memory comes in bytes and is reported in MiB, rounded down.
#include "device/nvml_reader.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace rota::device::nvml {
namespace {

constexpr MiB ToMiB(unsigned long long bytes) { return static_cast<MiB>(bytes / (1024ULL * 1024ULL)); }

// Errors that only mean "this value is not available here".
bool CannotSay(nvmlReturn_t r) {
  return r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_NO_PERMISSION || r == NVML_ERROR_NOT_FOUND ||
         r == NVML_ERROR_FUNCTION_NOT_FOUND || r == NVML_ERROR_NO_DATA || r == NVML_ERROR_INVALID_ARGUMENT;
}

class CardReader {
 public:
  CardReader(const Library& lib, GpuInfo& gpu) : lib_(lib), f_(lib.fn()), gpu_(gpu) {}

  // Records a failed call in the card's health (first error wins). Returns r == NVML_SUCCESS.
  bool Check(const char* call, nvmlReturn_t r, bool required) {
    if (r == NVML_SUCCESS) return true;
    if (!required && CannotSay(r)) return false;
    if (gpu_.health.ok()) gpu_.health = Unavailable(lib_.Error(call, r));
    return false;
  }

  void Read(nvmlDevice_t dev) {
    gpu_.uuid = String(f_.get_uuid, dev, "nvmlDeviceGetUUID");
    gpu_.name = String(f_.get_name, dev, "nvmlDeviceGetName");
    ReadMemory(dev, gpu_.memory_total, gpu_.memory_used, &gpu_.memory_free);
    gpu_.pci_bus_id = PciBusId(dev);
    // A card that cannot say what it is or how full it is (lost, needs a reset) is not asked more.
    if (!gpu_.health.ok()) return;
    if (f_.get_utilization) {
      nvmlUtilization_t u{};
      if (Check("nvmlDeviceGetUtilizationRates", f_.get_utilization(dev, &u), false)) {
        gpu_.util_gpu = static_cast<int>(u.gpu);
        gpu_.util_memory = static_cast<int>(u.memory);
      }
    }
    unsigned int value = 0;
    if (f_.get_temperature &&
        Check("nvmlDeviceGetTemperature", f_.get_temperature(dev, NVML_TEMPERATURE_GPU, &value), false)) {
      gpu_.temperature = static_cast<int>(value);
    }
    if (f_.get_power && Check("nvmlDeviceGetPowerUsage", f_.get_power(dev, &value), false)) {
      gpu_.power_mw = static_cast<int>(value);
    }
    if (f_.get_minor && Check("nvmlDeviceGetMinorNumber", f_.get_minor(dev, &value), false)) {
      gpu_.minor = static_cast<int>(value);
    }
    gpu_.processes = Processes(dev);
    ReadMig(dev);
    ReadNvLink(dev);
    ReadEcc(dev);
  }

  // Marks the card after its values were read: they are still shown, but it is not trusted.
  void Distrust(const std::string& why) {
    if (gpu_.health.ok()) gpu_.health = Unavailable(why);
  }

 private:
  std::string String(nvmlDeviceGetString_fn fn, nvmlDevice_t dev, const char* call) {
    char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    if (!Check(call, fn(dev, buf, sizeof buf), true)) return "";
    buf[sizeof buf - 1] = '\0';
    return buf;
  }

  void ReadMemory(nvmlDevice_t dev, MiB& total, MiB& used, MiB* free) {
    nvmlMemory_t m{};
    if (!Check("nvmlDeviceGetMemoryInfo", f_.get_memory(dev, &m), true)) return;
    total = ToMiB(m.total);
    used = ToMiB(m.used);
    if (free) *free = ToMiB(m.free);
  }

  std::string PciBusId(nvmlDevice_t dev) {
    if (!f_.get_pci) return "";
    nvmlPciInfo_t pci{};
    if (!Check("nvmlDeviceGetPciInfo", f_.get_pci(dev, &pci), false)) return "";
    if (f_.pci_version >= 3) {
      pci.busId[sizeof pci.busId - 1] = '\0';
      return pci.busId;
    }
    // The legacy string has a four-digit domain; build the current eight-digit form instead.
    char buf[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
    std::snprintf(buf, sizeof buf, "%08X:%02X:%02X.0", pci.domain, pci.bus, pci.device);
    return buf;
  }

  std::vector<ProcessInfo> Processes(nvmlDevice_t dev) {
    std::vector<ProcessInfo> out;
    if (!f_.get_processes_v1 && !f_.get_processes_v2) return out;
    const bool v1 = f_.processes_version == 1;
    const size_t size = v1 ? sizeof(nvmlProcessInfo_v1_t) : sizeof(nvmlProcessInfo_v2_t);
    // Ask for the count, then fetch with some slack; processes may start between the calls.
    unsigned int count = 0;
    std::vector<unsigned char> buf;
    nvmlReturn_t r = NVML_ERROR_INSUFFICIENT_SIZE;
    for (int attempt = 0; attempt < 3 && r == NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
      if (attempt > 0) count += 8;
      buf.assign(static_cast<size_t>(count) * size, 0);
      // The buffer holds `count` elements of the function's own type (operator new's alignment).
      unsigned char* data = count == 0 ? nullptr : buf.data();
      r = v1 ? f_.get_processes_v1(dev, &count, reinterpret_cast<nvmlProcessInfo_v1_t*>(data))
             : f_.get_processes_v2(dev, &count, reinterpret_cast<nvmlProcessInfo_v2_t*>(data));
    }
    if (!Check("nvmlDeviceGetComputeRunningProcesses", r, false)) return out;
    count = std::min<unsigned int>(count, static_cast<unsigned int>(buf.size() / size));
    for (unsigned int i = 0; i < count; ++i) {
      unsigned int pid;
      unsigned long long used;
      if (v1) {
        nvmlProcessInfo_v1_t p;
        std::memcpy(&p, buf.data() + i * size, size);
        pid = p.pid;
        used = p.usedGpuMemory;
      } else {
        nvmlProcessInfo_v2_t p;
        std::memcpy(&p, buf.data() + i * size, size);
        pid = p.pid;
        used = p.usedGpuMemory;
      }
      ProcessInfo info;
      info.pid = static_cast<int>(pid);
      info.used_memory = used == NVML_VALUE_NOT_AVAILABLE_ULL ? -1 : ToMiB(used);
      out.push_back(info);
    }
    AddProcessUtilization(dev, out);
    return out;
  }

  // Per-process SM utilisation from the newest sample of each PID, where NVML keeps samples.
  void AddProcessUtilization(nvmlDevice_t dev, std::vector<ProcessInfo>& processes) {
    if (!f_.get_process_utilization || processes.empty()) return;
    unsigned int count = 0;
    nvmlReturn_t r = f_.get_process_utilization(dev, nullptr, &count, 0);
    if (r != NVML_ERROR_INSUFFICIENT_SIZE && !Check("nvmlDeviceGetProcessUtilization", r, false)) return;
    if (count == 0) return;
    std::vector<nvmlProcessUtilizationSample_t> samples(count);
    r = f_.get_process_utilization(dev, samples.data(), &count, 0);
    if (!Check("nvmlDeviceGetProcessUtilization", r, false)) return;
    std::map<unsigned int, const nvmlProcessUtilizationSample_t*> newest;
    for (unsigned int i = 0; i < count && i < samples.size(); ++i) {
      auto& slot = newest[samples[i].pid];
      if (slot == nullptr || samples[i].timeStamp >= slot->timeStamp) slot = &samples[i];
    }
    for (ProcessInfo& p : processes) {
      auto it = newest.find(static_cast<unsigned int>(p.pid));
      if (it != newest.end()) p.sm_util = static_cast<int>(it->second->smUtil);
    }
  }

  void ReadMig(nvmlDevice_t dev) {
    if (!f_.get_mig_mode) return;
    unsigned int current = 0, pending = 0;
    if (!Check("nvmlDeviceGetMigMode", f_.get_mig_mode(dev, &current, &pending), false)) return;
    gpu_.mig_capable = true;
    gpu_.mig_enabled = current == NVML_DEVICE_MIG_ENABLE;
    if (!gpu_.mig_enabled || !f_.get_max_mig_count || !f_.get_mig_handle) return;
    unsigned int max = 0;
    if (!Check("nvmlDeviceGetMaxMigDeviceCount", f_.get_max_mig_count(dev, &max), false)) return;
    for (unsigned int i = 0; i < max; ++i) {
      nvmlDevice_t mig_dev = nullptr;
      // NOT_FOUND: no instance in this slot.
      if (!Check("nvmlDeviceGetMigDeviceHandleByIndex", f_.get_mig_handle(dev, i, &mig_dev), false)) continue;
      MigInstance mig;
      mig.uuid = String(f_.get_uuid, mig_dev, "nvmlDeviceGetUUID");
      // "NVIDIA A100-SXM4-80GB MIG 3g.40gb": the profile is what follows "MIG ".
      std::string name = String(f_.get_name, mig_dev, "nvmlDeviceGetName");
      size_t at = name.rfind("MIG ");
      mig.profile = at == std::string::npos ? name : name.substr(at + 4);
      ReadMemory(mig_dev, mig.memory_total, mig.memory_used, nullptr);
      mig.processes = Processes(mig_dev);
      gpu_.mig.push_back(std::move(mig));
    }
  }

  void ReadEcc(nvmlDevice_t dev) {
    if (!f_.get_ecc_errors) return;
    unsigned long long count = 0;
    nvmlReturn_t r = f_.get_ecc_errors(dev, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &count);
    if (!Check("nvmlDeviceGetTotalEccErrors", r, false)) return;  // ECC off or not supported
    gpu_.ecc_uncorrected = static_cast<long long>(count);
    if (count > 0) Distrust(std::to_string(count) + " uncorrected ECC errors (the card needs a reset)");
  }

  void ReadNvLink(nvmlDevice_t dev) {
    if (!f_.get_nvlink_state || !f_.get_nvlink_remote_pci) return;
    for (unsigned int link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
      unsigned int active = 0;
      if (!Check("nvmlDeviceGetNvLinkState", f_.get_nvlink_state(dev, link, &active), false)) continue;
      if (active != NVML_FEATURE_ENABLED) continue;
      nvmlPciInfo_t pci{};
      if (!Check("nvmlDeviceGetNvLinkRemotePciInfo_v2", f_.get_nvlink_remote_pci(dev, link, &pci), false)) {
        continue;
      }
      pci.busId[sizeof pci.busId - 1] = '\0';
      std::string peer = pci.busId;
      // Several links usually go to the same peer.
      bool seen = false;
      for (const std::string& p : gpu_.nvlink_peers) seen = seen || p == peer;
      if (!seen && !peer.empty()) gpu_.nvlink_peers.push_back(peer);
    }
  }

  const Library& lib_;
  const Functions& f_;
  GpuInfo& gpu_;
};

}  // namespace

namespace {

// Registers `dev` for Xid events once (a card that cannot report them is simply not registered).
void RegisterXids(const Functions& f, PassState& st, nvmlDevice_t dev) {
  if (!f.event_set_create) return;
  if (!st.xid_tried) {
    st.xid_tried = true;
    if (f.event_set_create(&st.xid_set) != NVML_SUCCESS) st.xid_set = nullptr;
  }
  if (st.xid_set == nullptr) return;
  if (std::find(st.xid_registered.begin(), st.xid_registered.end(), dev) != st.xid_registered.end()) return;
  st.xid_registered.push_back(dev);  // tried once, whatever the answer
  (void)f.register_events(dev, nvmlEventTypeXidCriticalError, st.xid_set);
}

// Takes the Xid events waiting in the set (never waits) and files them under their cards.
void CollectXids(const Functions& f, PassState& st, const std::vector<nvmlDevice_t>& handles, Snapshot& snap) {
  if (st.xid_set == nullptr) return;
  for (int guard = 0; guard < 1000; ++guard) {
    nvmlEventData_t data{};
    if (f.event_set_wait(st.xid_set, &data, 0) != NVML_SUCCESS) return;  // TIMEOUT: none left
    if (data.eventType != nvmlEventTypeXidCriticalError) continue;
    for (size_t i = 0; i < handles.size() && i < snap.gpus.size(); ++i) {
      if (handles[i] != data.device) continue;
      GpuInfo& gpu = snap.gpus[i];
      const int xid = static_cast<int>(data.eventData);
      gpu.xids.push_back(xid);
      if (HardwareXid(xid) && gpu.health.ok()) gpu.health = Unavailable("Xid " + std::to_string(xid) + " reported");
    }
  }
}

}  // namespace

bool HardwareXid(int xid) {
  // NVIDIA's Xid catalogue: ECC (48, 63, 64, 92, 94, 95), internal micro-controller and GSP
  // (61, 62, 119, 120), NVLink (74), fallen off the bus (79), unrecovered ECC (140).
  switch (xid) {
    case 48: case 61: case 62: case 63: case 64: case 74: case 79:
    case 92: case 94: case 95: case 119: case 120: case 140:
      return true;
    default:
      return false;
  }
}

StatusOr<Snapshot> ReadSnapshot(const Library& lib, PassState* state) {
  std::atomic<int>* reading = state ? &state->reading : nullptr;
  const Functions& f = lib.fn();
  Snapshot snap;
  if (f.get_driver_version) {
    char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
    if (f.get_driver_version(buf, sizeof buf) == NVML_SUCCESS) {
      buf[sizeof buf - 1] = '\0';
      snap.driver_version = buf;
    }
  }
  unsigned int count = 0;
  nvmlReturn_t r = f.get_count(&count);
  if (r != NVML_SUCCESS) return Unavailable(lib.Error("nvmlDeviceGetCount", r));
  std::vector<nvmlDevice_t> handles;
  for (unsigned int i = 0; i < count; ++i) {
    if (reading != nullptr) reading->store(static_cast<int>(i));
    GpuInfo gpu;
    gpu.index = static_cast<int>(i);
    CardReader reader(lib, gpu);
    nvmlDevice_t dev = nullptr;
    if (reader.Check("nvmlDeviceGetHandleByIndex", f.get_handle(i, &dev), true)) {
      reader.Read(dev);
      if (state != nullptr) RegisterXids(f, *state, dev);
    }
    handles.push_back(dev);
    snap.gpus.push_back(std::move(gpu));
  }
  if (state != nullptr) CollectXids(f, *state, handles, snap);
  if (reading != nullptr) reading->store(-1);
  return snap;
}

}  // namespace rota::device::nvml

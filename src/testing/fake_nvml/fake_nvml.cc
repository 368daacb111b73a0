// A fake libnvidia-ml for tests; built as libnvidia-ml-fake.so and, with FAKE_NVML_MINIMAL, as
// libnvidia-ml-minimal.so. Tested by (and exists for) src/device/nvml_devices_test.cc.
//
// Design: the fake exports the NVML functions Rota uses with their real C signatures and struct
// layouts (src/device/nvml_api.h), so Rota's real loading and parsing code runs in CI without a
// GPU. What the "driver" reports comes from a JSON file named by $FAKE_NVML_STATE, re-read on
// every call so a test can change it between samples:
//
//   {"driver_version": "550.54.15", "init_error": "DRIVER_NOT_LOADED",
//    "cards": [{"uuid": "GPU-..", "name": "NVIDIA A100-SXM4-80GB", "pci": "00000000:3B:00.0",
//               "memory_total_mib": 81920, "memory_used_mib": 1024, "util_gpu": 50,
//               "util_memory": 20, "temperature": 40, "power_mw": 250000, "minor": 0,
//               "mig_mode": 1,  // absent: not MIG capable
//               "mig": [{"uuid": "MIG-..", "profile": "3g.40gb", "memory_total_mib": 40192,
//                        "memory_used_mib": 0, "processes": [...]}],
//               "processes": [{"pid": 1234, "used_mib": 2048, "sm_util": 70}],
//               "nvlink": ["00000000:3C:00.0"],  // one active link per entry; absent: none
//               "error": "GPU_IS_LOST", "error_at": "memory",  // or "handle"
//               "hang_ms": 1500,  // nvmlDeviceGetMemoryInfo sleeps (at most 10 s)
//               "ecc_uncorrected": 2,  // volatile uncorrected ECC count; absent: ECC not supported
//               "xid": [13, 79]}]}  // Xid events, each delivered once to a registered event set
//
// Like the real library, the first successful nvmlInit starts a thread (that only sleeps).
//
// A shared object cannot hide its symbols at run time, so "missing symbols" are a second build:
// FAKE_NVML_MINIMAL leaves out every versioned (_v2, _v3) and optional function. Malformed state
// makes calls return NVML_ERROR_UNKNOWN; no exception leaves the library.
#include <sys/stat.h>
#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "device/nvml_api.h"

using namespace rota::device::nvml;  // NOLINT: test double mirroring a C header
using nlohmann::json;

namespace {

constexpr int kMaxCards = 64;
constexpr int kMaxMig = 7;
constexpr unsigned long long kMiB = 1024ULL * 1024ULL;

struct Handle {
  int card;
  int mig;  // -1: the card itself
};
Handle g_handles[kMaxCards][kMaxMig + 1];
int g_init_count = 0;  // calls into the fake come from one thread at a time (Rota's contract)
[[maybe_unused]] bool g_event_set_live = false;
[[maybe_unused]] bool g_xid_registered[kMaxCards] = {};
[[maybe_unused]] size_t g_xid_delivered[kMaxCards] = {};  // "xid" entries of each card delivered so far

nvmlReturn_t ErrorCode(const std::string& name) {
  for (int code = NVML_SUCCESS; code <= NVML_ERROR_NO_DATA; ++code) {
    if (name == ErrorName(code)) return code;
  }
  return NVML_ERROR_UNKNOWN;
}

// Loads the state file; false when it is missing or malformed. The parsed state is reused while
// the file is unchanged (same inode, size and modification time): a real driver answers from
// memory, and re-parsing the JSON on each of a sample's hundreds of calls would make the fake,
// not Rota, dominate what bench/gpu_sampling.sh measures. Tests replace the file (write, then
// rename), which always changes the inode.
bool LoadState(const json*& state) {
  static std::string cached_path;
  static struct stat cached_stat = {};
  static json cached;
  static bool cached_ok = false;
  const char* path = std::getenv("FAKE_NVML_STATE");
  if (path == nullptr) return false;
  struct stat st = {};
  if (::stat(path, &st) != 0) return false;
  if (cached_path == path && st.st_ino == cached_stat.st_ino && st.st_size == cached_stat.st_size &&
      st.st_mtim.tv_sec == cached_stat.st_mtim.tv_sec && st.st_mtim.tv_nsec == cached_stat.st_mtim.tv_nsec) {
    state = &cached;
    return cached_ok;
  }
  std::ifstream in(path);
  if (!in) return false;
  try {
    cached = json::parse(in);
    cached_ok = cached.is_object();
  } catch (const std::exception&) {
    cached = json();
    cached_ok = false;
  }
  cached_path = path;
  cached_stat = st;
  state = &cached;
  return cached_ok;
}

const json* Cards(const json& state) {
  auto it = state.find("cards");
  return it != state.end() && it->is_array() ? &*it : nullptr;
}

// Resolves a handle to its card (and MIG instance, when mig >= 0) in `state`.
nvmlReturn_t Resolve(nvmlDevice_t device, const json*& state, const json** card, const json** mig) {
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (!LoadState(state)) return NVML_ERROR_UNKNOWN;
  const Handle* h = reinterpret_cast<const Handle*>(device);
  const json* cards = Cards(*state);
  if (cards == nullptr || h->card >= static_cast<int>(cards->size())) return NVML_ERROR_GPU_IS_LOST;
  *card = &(*cards)[static_cast<size_t>(h->card)];
  *mig = nullptr;
  if (h->mig >= 0) {
    const json& migs = (*card)->value("mig", json::array());
    if (h->mig >= static_cast<int>(migs.size())) return NVML_ERROR_NOT_FOUND;
    *mig = &(*card)->at("mig")[static_cast<size_t>(h->mig)];
  }
  return NVML_SUCCESS;
}

// The card's injected error if it is injected at `where` ("memory" by default).
nvmlReturn_t Injected(const json& card, const char* where) {
  if (!card.contains("error")) return NVML_SUCCESS;
  if (card.value("error_at", std::string("memory")) != where) return NVML_SUCCESS;
  return ErrorCode(card.value("error", std::string("UNKNOWN")));
}

nvmlReturn_t CopyString(const std::string& value, char* out, unsigned int length) {
  if (out == nullptr || length <= value.size()) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, value.c_str(), value.size() + 1);
  return NVML_SUCCESS;
}

nvmlReturn_t FillPci(const std::string& bus_id, nvmlPciInfo_t* pci, bool current_layout) {
  if (pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned int domain = 0, bus = 0, device = 0, function = 0;
  if (std::sscanf(bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus, &device, &function) != 4) {
    return NVML_ERROR_UNKNOWN;
  }
  pci->domain = domain;
  pci->bus = bus;
  pci->device = device;
  pci->pciDeviceId = 0x20B210DE;
  pci->pciSubSystemId = 0x147F10DE;
  std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.%X", domain & 0xFFFFu, bus, device,
                function);
  // The older layouts end before busId: writing it would overrun a caller built on them.
  if (current_layout) std::snprintf(pci->busId, sizeof pci->busId, "%s", bus_id.c_str());
  return NVML_SUCCESS;
}

template <typename Info>
nvmlReturn_t FillProcesses(nvmlDevice_t device, unsigned int* count, Info* infos) {
  const json* state = nullptr;
  const json *card, *mig;
  if (nvmlReturn_t r = Resolve(device, state, &card, &mig); r != NVML_SUCCESS) return r;
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const json& list = (mig ? *mig : *card).value("processes", json::array());
  const unsigned int n = static_cast<unsigned int>(list.size());
  if (*count < n || (n > 0 && infos == nullptr)) {
    *count = n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  try {
    for (unsigned int i = 0; i < n; ++i) {
      Info info{};
      info.pid = list[i].at("pid").get<unsigned int>();
      long long used = list[i].value("used_mib", -1LL);
      info.usedGpuMemory =
          used < 0 ? NVML_VALUE_NOT_AVAILABLE_ULL : static_cast<unsigned long long>(used) * kMiB;
      infos[i] = info;
    }
  } catch (const std::exception&) {
    return NVML_ERROR_UNKNOWN;
  }
  *count = n;
  return NVML_SUCCESS;
}

nvmlReturn_t Pci(nvmlDevice_t device, nvmlPciInfo_t* pci, bool current_layout) {
  const json* state = nullptr;
  const json *card, *mig;
  if (nvmlReturn_t r = Resolve(device, state, &card, &mig); r != NVML_SUCCESS) return r;
  if (mig) return NVML_ERROR_NOT_SUPPORTED;
  return FillPci(card->value("pci", std::string("00000000:00:00.0")), pci, current_layout);
}

// The real library starts threads of its own in nvmlInit, with the signal mask of the thread
// that called it. So does the fake: a program that blocks signals only after initialising NVML
// (and reads them from a signalfd) would have them delivered to this thread and die of them, as
// rotad did on a real H200. The thread runs the library's code every 20 ms, as a driver's
// polling thread does, so a program that unmapped the library under it (a dlclose without
// RTLD_NODELETE) crashes at once rather than by chance.
void StartDriverThread() {
  static bool started = false;
  if (started) return;
  started = true;
  std::thread([] {
    for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }).detach();
}

nvmlReturn_t Init() {
  const json* state = nullptr;
  if (LoadState(state) && state->contains("init_error")) {
    return ErrorCode(state->value("init_error", std::string("UNKNOWN")));
  }
  StartDriverThread();
  ++g_init_count;
  return NVML_SUCCESS;
}

nvmlReturn_t Count(unsigned int* count) {
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
  const json* state = nullptr;
  if (count == nullptr || !LoadState(state)) return NVML_ERROR_UNKNOWN;
  const json* cards = Cards(*state);
  *count = cards ? std::min<unsigned int>(static_cast<unsigned int>(cards->size()), kMaxCards) : 0;
  return NVML_SUCCESS;
}

nvmlReturn_t HandleByIndex(unsigned int index, nvmlDevice_t* device) {
  unsigned int count = 0;
  if (nvmlReturn_t r = Count(&count); r != NVML_SUCCESS) return r;
  if (index >= count || device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const json* state = nullptr;
  if (!LoadState(state)) return NVML_ERROR_UNKNOWN;
  if (nvmlReturn_t r = Injected((*Cards(*state))[index], "handle"); r != NVML_SUCCESS) return r;
  g_handles[index][0] = Handle{static_cast<int>(index), -1};
  *device = reinterpret_cast<nvmlDevice_t>(&g_handles[index][0]);
  return NVML_SUCCESS;
}

// Reads an unsigned number from the card; NOT_SUPPORTED when the state does not give it.
[[maybe_unused]] nvmlReturn_t CardNumber(nvmlDevice_t device, const char* key, unsigned int* out) {
  const json* state = nullptr;
  const json *card, *mig;
  if (nvmlReturn_t r = Resolve(device, state, &card, &mig); r != NVML_SUCCESS) return r;
  if (mig || !card->contains(key) || out == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  try {
    *out = card->at(key).get<unsigned int>();
  } catch (const std::exception&) {
    return NVML_ERROR_UNKNOWN;
  }
  return NVML_SUCCESS;
}

// Every exported function's body: a state file of the wrong shape (a string where a number
// belongs) makes nlohmann::json throw, and no exception may leave a C library
// (fuzz/fake_nvml_state found one that did).
template <typename F>
nvmlReturn_t Guarded(F&& body) noexcept {
  try {
    return body();
  } catch (const std::exception&) {
    return NVML_ERROR_UNKNOWN;
  }
}

}  // namespace

extern "C" {

// ---- Required, unversioned: present in both builds. ----

nvmlReturn_t nvmlInit() { return Guarded([&] { return Init(); }); }

nvmlReturn_t nvmlShutdown() {
  return Guarded([&] {
    if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
    --g_init_count;
    return NVML_SUCCESS;
  });
}

const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    case NVML_ERROR_RESET_REQUIRED:
      return "GPU requires reset";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    default:
      return "Fake NVML error";
  }
}

nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) { return Guarded([&] { return Count(count); }); }

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return Guarded([&] {
    return HandleByIndex(index, device);
  });
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  return Guarded([&] {
    const json* state = nullptr;
    const json *card, *mig;
    if (nvmlReturn_t r = Resolve(device, state, &card, &mig); r != NVML_SUCCESS) return r;
    return CopyString((mig ? *mig : *card).value("uuid", std::string()), uuid, length);
  });
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  return Guarded([&] {
    const json* state = nullptr;
    const json *card, *mig;
    if (nvmlReturn_t r = Resolve(device, state, &card, &mig); r != NVML_SUCCESS) return r;
    std::string value = card->value("name", std::string("NVIDIA Fake GPU"));
    if (mig) value += " MIG " + mig->value("profile", std::string("?"));
    return CopyString(value, name, length);
  });
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  return Guarded([&] {
    const json* state = nullptr;
    const json *card, *mig;
    if (nvmlReturn_t r = Resolve(device, state, &card, &mig); r != NVML_SUCCESS) return r;
    if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (!mig) {
      long long hang_ms = std::clamp(card->value("hang_ms", 0LL), 0LL, 10000LL);
      if (hang_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(hang_ms));
      if (nvmlReturn_t r = Injected(*card, "memory"); r != NVML_SUCCESS) return r;
    }
    const json& src = mig ? *mig : *card;
    unsigned long long total = src.value("memory_total_mib", 0ULL) * kMiB;
    unsigned long long used = std::min(src.value("memory_used_mib", 0ULL) * kMiB, total);
    *memory = nvmlMemory_t{total, total - used, used};
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_t* pci) { return Guarded([&] { return Pci(device, pci, false); }); }

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int* count,
                                                  nvmlProcessInfo_v1_t* infos) {
  return Guarded([&] {
    return FillProcesses(device, count, infos);
  });
}

#ifndef FAKE_NVML_MINIMAL

// ---- Versioned. ----

nvmlReturn_t nvmlInit_v2() { return Guarded([&] { return Init(); }); }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) { return Guarded([&] { return Count(count); }); }
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  return Guarded([&] {
    return HandleByIndex(index, device);
  });
}
nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return Guarded([&] {
    return Pci(device, pci, false);
  });
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return Guarded([&] {
    return Pci(device, pci, true);
  });
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int* count,
                                                     nvmlProcessInfo_v2_t* infos) {
  return Guarded([&] {
    return FillProcesses(device, count, infos);
  });
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* count,
                                                     nvmlProcessInfo_v2_t* infos) {
  return Guarded([&] {
    return FillProcesses(device, count, infos);
  });
}

// ---- Optional. ----

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  return Guarded([&] {
    const json* state = nullptr;
    if (!LoadState(state)) return NVML_ERROR_UNKNOWN;
    return CopyString(state->value("driver_version", std::string("0.0")), version, length);
  });
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* util) {
  return Guarded([&] {
    if (util == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (nvmlReturn_t r = CardNumber(device, "util_gpu", &util->gpu); r != NVML_SUCCESS) return r;
    return CardNumber(device, "util_memory", &util->memory);
  });
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, unsigned int sensor, unsigned int* celsius) {
  return Guarded([&] {
    if (sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
    return CardNumber(device, "temperature", celsius);
  });
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* milliwatts) {
  return Guarded([&] {
    return CardNumber(device, "power_mw", milliwatts);
  });
}

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int* minor) {
  return Guarded([&] {
    return CardNumber(device, "minor", minor);
  });
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* current, unsigned int* pending) {
  return Guarded([&] {
    if (nvmlReturn_t r = CardNumber(device, "mig_mode", current); r != NVML_SUCCESS) return r;
    if (pending) *pending = *current;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int* count) {
  return Guarded([&] {
    unsigned int mode = 0;
    if (nvmlReturn_t r = CardNumber(device, "mig_mode", &mode); r != NVML_SUCCESS) return r;
    if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *count = kMaxMig;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                 nvmlDevice_t* mig_device) {
  return Guarded([&] {
    const json* state = nullptr;
    const json *card, *mig;
    if (nvmlReturn_t r = Resolve(device, state, &card, &mig); r != NVML_SUCCESS) return r;
    if (mig || mig_device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (index >= kMaxMig || index >= card->value("mig", json::array()).size()) return NVML_ERROR_NOT_FOUND;
    const Handle* parent = reinterpret_cast<const Handle*>(device);
    Handle& h = g_handles[parent->card][index + 1];
    h = Handle{parent->card, static_cast<int>(index)};
    *mig_device = reinterpret_cast<nvmlDevice_t>(&h);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t* samples,
                                             unsigned int* count, unsigned long long /*last_seen_us*/) {
  return Guarded([&] {
    const json* state = nullptr;
    const json *card, *mig;
    if (nvmlReturn_t r = Resolve(device, state, &card, &mig); r != NVML_SUCCESS) return r;
    if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    json with_util = json::array();
    for (const json& p : card->value("processes", json::array())) {
      if (p.contains("sm_util")) with_util.push_back(p);
    }
    const unsigned int n = static_cast<unsigned int>(with_util.size());
    if (n == 0) return NVML_ERROR_NOT_FOUND;  // what NVML says when it has no samples
    if (samples == nullptr || *count < n) {
      *count = n;
      return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    try {
      for (unsigned int i = 0; i < n; ++i) {
        samples[i] = nvmlProcessUtilizationSample_t{with_util[i].at("pid").get<unsigned int>(),
                                                    1000000ULL + i,
                                                    with_util[i].at("sm_util").get<unsigned int>(),
                                                    0,
                                                    0,
                                                    0};
      }
    } catch (const std::exception&) {
      return NVML_ERROR_UNKNOWN;
    }
    *count = n;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, unsigned int* is_active) {
  return Guarded([&] {
    const json* state = nullptr;
    const json *card, *mig;
    if (nvmlReturn_t r = Resolve(device, state, &card, &mig); r != NVML_SUCCESS) return r;
    if (mig || !card->contains("nvlink")) return NVML_ERROR_NOT_SUPPORTED;
    if (link >= NVML_NVLINK_MAX_LINKS || is_active == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *is_active = link < card->at("nvlink").size() ? NVML_FEATURE_ENABLED : 0;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link, nvmlPciInfo_t* pci) {
  return Guarded([&] {
    const json* state = nullptr;
    const json *card, *mig;
    if (nvmlReturn_t r = Resolve(device, state, &card, &mig); r != NVML_SUCCESS) return r;
    if (mig || !card->contains("nvlink")) return NVML_ERROR_NOT_SUPPORTED;
    const json& peers = card->at("nvlink");
    if (link >= peers.size() || !peers[link].is_string()) return NVML_ERROR_INVALID_ARGUMENT;
    return FillPci(peers[link].get<std::string>(), pci, true);
  });
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, unsigned int error_type, unsigned int counter_type,
                                         unsigned long long* count) {
  return Guarded([&] {
    const json* state = nullptr;
    const json *card, *mig;
    if (nvmlReturn_t r = Resolve(device, state, &card, &mig); r != NVML_SUCCESS) return r;
    if (mig || !card->contains("ecc_uncorrected")) return NVML_ERROR_NOT_SUPPORTED;
    if (error_type != NVML_MEMORY_ERROR_TYPE_UNCORRECTED || counter_type != NVML_VOLATILE_ECC || count == nullptr) {
      return NVML_ERROR_INVALID_ARGUMENT;
    }
    *count = card->value("ecc_uncorrected", 0ULL);
    return NVML_SUCCESS;
  });
}

// One event set is enough for Rota (it creates one per session).
nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  return Guarded([&] {
    if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
    if (set == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    g_event_set_live = true;
    // A fresh set (a new Rota session) starts with nothing registered or delivered.
    std::fill(std::begin(g_xid_registered), std::end(g_xid_registered), false);
    std::fill(std::begin(g_xid_delivered), std::end(g_xid_delivered), 0);
    *set = reinterpret_cast<nvmlEventSet_t>(&g_event_set_live);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long types, nvmlEventSet_t set) {
  return Guarded([&] {
    const json* state = nullptr;
    const json *card, *mig;
    if (nvmlReturn_t r = Resolve(device, state, &card, &mig); r != NVML_SUCCESS) return r;
    if (set == nullptr || mig || types != nvmlEventTypeXidCriticalError) return NVML_ERROR_INVALID_ARGUMENT;
    g_xid_registered[reinterpret_cast<const Handle*>(device)->card] = true;
    return NVML_SUCCESS;
  });
}

// Delivers each registered card's "xid" list, one event per call, each entry once.
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data, unsigned int /*timeout_ms*/) {
  return Guarded([&] {
    if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
    const json* state = nullptr;
    if (set == nullptr || data == nullptr || !LoadState(state)) return NVML_ERROR_INVALID_ARGUMENT;
    const json* cards = Cards(*state);
    for (int i = 0; cards != nullptr && i < static_cast<int>(cards->size()) && i < kMaxCards; ++i) {
      const json& xids = (*cards)[static_cast<size_t>(i)].value("xid", json::array());
      if (!g_xid_registered[i] || g_xid_delivered[i] >= xids.size()) continue;
      g_handles[i][0] = Handle{i, -1};
      *data = nvmlEventData_t{reinterpret_cast<nvmlDevice_t>(&g_handles[i][0]), nvmlEventTypeXidCriticalError,
                              xids[g_xid_delivered[i]++].get<unsigned long long>(), 0xFFFFFFFFu, 0xFFFFFFFFu};
      return NVML_SUCCESS;
    }
    return NVML_ERROR_TIMEOUT;
  });
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  return Guarded([&] {
    if (set == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    g_event_set_live = false;
    return NVML_SUCCESS;
  });
}

#endif  // FAKE_NVML_MINIMAL

}  // extern "C"

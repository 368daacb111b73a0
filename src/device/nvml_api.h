// The few NVML declarations Rota needs, written in the project so that Rota builds on machines
// without CUDA or the driver (the way nvtop's extract_gpuinfo_nvidia.c does it). The library is
// opened with dlopen at run time (nvml_library.h); nothing here is linked.
//
// Source of the values and layouts: NVIDIA's nvml.h (CUDA 12.x, NVML API version 12), checked
// against copies vendored in public repositories (e.g. NVIDIA holoscan-sdk's nvml wrapper, DCGM's
// error strings). Struct layouts must match nvml.h field for field: NVML writes into them.
#pragma once

namespace rota::device::nvml {

extern "C" {

using nvmlReturn_t = int;                    // an enum in nvml.h; its values are ints
using nvmlDevice_t = struct nvmlDevice_st*;  // opaque handle owned by the library

inline constexpr nvmlReturn_t NVML_SUCCESS = 0;
inline constexpr nvmlReturn_t NVML_ERROR_UNINITIALIZED = 1;
inline constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
inline constexpr nvmlReturn_t NVML_ERROR_NO_PERMISSION = 4;
inline constexpr nvmlReturn_t NVML_ERROR_ALREADY_INITIALIZED = 5;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_POWER = 8;
inline constexpr nvmlReturn_t NVML_ERROR_DRIVER_NOT_LOADED = 9;
inline constexpr nvmlReturn_t NVML_ERROR_TIMEOUT = 10;
inline constexpr nvmlReturn_t NVML_ERROR_IRQ_ISSUE = 11;
inline constexpr nvmlReturn_t NVML_ERROR_LIBRARY_NOT_FOUND = 12;
inline constexpr nvmlReturn_t NVML_ERROR_FUNCTION_NOT_FOUND = 13;
inline constexpr nvmlReturn_t NVML_ERROR_CORRUPTED_INFOROM = 14;
inline constexpr nvmlReturn_t NVML_ERROR_GPU_IS_LOST = 15;
inline constexpr nvmlReturn_t NVML_ERROR_RESET_REQUIRED = 16;
inline constexpr nvmlReturn_t NVML_ERROR_OPERATING_SYSTEM = 17;
inline constexpr nvmlReturn_t NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18;
inline constexpr nvmlReturn_t NVML_ERROR_IN_USE = 19;
inline constexpr nvmlReturn_t NVML_ERROR_MEMORY = 20;
inline constexpr nvmlReturn_t NVML_ERROR_NO_DATA = 21;
inline constexpr nvmlReturn_t NVML_ERROR_UNKNOWN = 999;

inline constexpr unsigned int NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
inline constexpr unsigned int NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
inline constexpr unsigned int NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;
inline constexpr unsigned int NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE = 32;
inline constexpr unsigned int NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE = 16;
inline constexpr unsigned int NVML_NVLINK_MAX_LINKS = 18;
inline constexpr unsigned int NVML_TEMPERATURE_GPU = 0;  // nvmlTemperatureSensors_t
inline constexpr unsigned int NVML_FEATURE_ENABLED = 1;  // nvmlEnableState_t
inline constexpr unsigned int NVML_DEVICE_MIG_ENABLE = 1;
inline constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE_ULL = ~0ULL;
inline constexpr unsigned int NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1;  // nvmlMemoryErrorType_t
inline constexpr unsigned int NVML_VOLATILE_ECC = 0;                   // nvmlEccCounterType_t
inline constexpr unsigned long long nvmlEventTypeXidCriticalError = 0x8ULL;

struct nvmlEventSet_st;
using nvmlEventSet_t = nvmlEventSet_st*;

// Filled by nvmlEventSetWait_v2.
struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  // the Xid
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

struct nvmlMemory_t {  // bytes
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct nvmlUtilization_t {  // percent over the last sample period
  unsigned int gpu;
  unsigned int memory;
};

// The current layout (filled completely by nvmlDeviceGetPciInfo_v3). The plain and _v2 functions
// predate busId[32]: they fill busIdLegacy and the numeric fields only, and never write past
// pciSubSystemId, so passing this larger struct to them is safe.
struct nvmlPciInfo_t {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];  // "0000:3B:00.0"
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];  // "00000000:3B:00.0"
};

// Filled by nvmlDeviceGetComputeRunningProcesses (v1).
struct nvmlProcessInfo_v1_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes, or NVML_VALUE_NOT_AVAILABLE_ULL
};

// Filled by nvmlDeviceGetComputeRunningProcesses_v2 and _v3 (nvml.h 12.x: nvmlProcessInfo_t).
struct nvmlProcessInfo_v2_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;  // 0xFFFFFFFF when not on a MIG instance
  unsigned int computeInstanceId;
};

struct nvmlProcessUtilizationSample_t {
  unsigned int pid;
  unsigned long long timeStamp;  // CPU timestamp, microseconds
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
};

using nvmlInit_fn = nvmlReturn_t (*)();
using nvmlShutdown_fn = nvmlReturn_t (*)();
using nvmlErrorString_fn = const char* (*)(nvmlReturn_t);
using nvmlSystemGetDriverVersion_fn = nvmlReturn_t (*)(char* version, unsigned int length);
using nvmlDeviceGetCount_fn = nvmlReturn_t (*)(unsigned int* count);
using nvmlDeviceGetHandleByIndex_fn = nvmlReturn_t (*)(unsigned int index, nvmlDevice_t* device);
using nvmlDeviceGetString_fn = nvmlReturn_t (*)(nvmlDevice_t device, char* out, unsigned int length);
using nvmlDeviceGetMemoryInfo_fn = nvmlReturn_t (*)(nvmlDevice_t device, nvmlMemory_t* memory);
using nvmlDeviceGetPciInfo_fn = nvmlReturn_t (*)(nvmlDevice_t device, nvmlPciInfo_t* pci);
using nvmlDeviceGetUtilizationRates_fn = nvmlReturn_t (*)(nvmlDevice_t device, nvmlUtilization_t* util);
using nvmlDeviceGetTemperature_fn = nvmlReturn_t (*)(nvmlDevice_t device, unsigned int sensor,
                                                     unsigned int* celsius);
using nvmlDeviceGetPowerUsage_fn = nvmlReturn_t (*)(nvmlDevice_t device, unsigned int* milliwatts);
using nvmlDeviceGetMinorNumber_fn = nvmlReturn_t (*)(nvmlDevice_t device, unsigned int* minor);
using nvmlDeviceGetMigMode_fn = nvmlReturn_t (*)(nvmlDevice_t device, unsigned int* current,
                                                 unsigned int* pending);
using nvmlDeviceGetMaxMigDeviceCount_fn = nvmlReturn_t (*)(nvmlDevice_t device, unsigned int* count);
using nvmlDeviceGetMigDeviceHandleByIndex_fn = nvmlReturn_t (*)(nvmlDevice_t device, unsigned int index,
                                                                nvmlDevice_t* mig_device);
// The plain function fills nvmlProcessInfo_v1_t elements, _v2 and _v3 nvmlProcessInfo_v2_t: each is
// called through a pointer of its own type (a call through another type is undefined behaviour,
// which clang's UBSan reports: fuzz/fake_nvml_state.cc found it).
using nvmlDeviceGetComputeRunningProcesses_v1_fn = nvmlReturn_t (*)(nvmlDevice_t device, unsigned int* count,
                                                                    nvmlProcessInfo_v1_t* infos);
using nvmlDeviceGetComputeRunningProcesses_v2_fn = nvmlReturn_t (*)(nvmlDevice_t device, unsigned int* count,
                                                                    nvmlProcessInfo_v2_t* infos);
using nvmlDeviceGetProcessUtilization_fn = nvmlReturn_t (*)(nvmlDevice_t device,
                                                            nvmlProcessUtilizationSample_t* samples,
                                                            unsigned int* count,
                                                            unsigned long long last_seen_us);
using nvmlDeviceGetNvLinkState_fn = nvmlReturn_t (*)(nvmlDevice_t device, unsigned int link,
                                                     unsigned int* is_active);
using nvmlDeviceGetNvLinkRemotePciInfo_fn = nvmlReturn_t (*)(nvmlDevice_t device, unsigned int link,
                                                             nvmlPciInfo_t* pci);
using nvmlDeviceGetTotalEccErrors_fn = nvmlReturn_t (*)(nvmlDevice_t device, unsigned int error_type,
                                                        unsigned int counter_type, unsigned long long* count);
using nvmlEventSetCreate_fn = nvmlReturn_t (*)(nvmlEventSet_t* set);
using nvmlDeviceRegisterEvents_fn = nvmlReturn_t (*)(nvmlDevice_t device, unsigned long long types,
                                                     nvmlEventSet_t set);
using nvmlEventSetWait_fn = nvmlReturn_t (*)(nvmlEventSet_t set, nvmlEventData_t* data, unsigned int timeout_ms);
using nvmlEventSetFree_fn = nvmlReturn_t (*)(nvmlEventSet_t set);

}  // extern "C"

static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t must match nvml.h");
static_assert(sizeof(nvmlProcessInfo_v1_t) == 16, "nvmlProcessInfo_v1_t must match nvml.h");
static_assert(sizeof(nvmlProcessInfo_v2_t) == 24, "nvmlProcessInfo_v2_t must match nvml.h");
static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32, "must match nvml.h");
static_assert(sizeof(nvmlEventData_t) == 32, "nvmlEventData_t must match nvml.h");

// "GPU_IS_LOST" for NVML_ERROR_GPU_IS_LOST, "SUCCESS"; "UNKNOWN" for codes not listed above.
// Inline so that the fake library (src/testing/fake_nvml) shares the table without linking Rota.
inline const char* ErrorName(nvmlReturn_t code) {
  switch (code) {
    case NVML_SUCCESS:
      return "SUCCESS";
    case NVML_ERROR_UNINITIALIZED:
      return "UNINITIALIZED";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case NVML_ERROR_NOT_SUPPORTED:
      return "NOT_SUPPORTED";
    case NVML_ERROR_NO_PERMISSION:
      return "NO_PERMISSION";
    case NVML_ERROR_ALREADY_INITIALIZED:
      return "ALREADY_INITIALIZED";
    case NVML_ERROR_NOT_FOUND:
      return "NOT_FOUND";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "INSUFFICIENT_SIZE";
    case NVML_ERROR_INSUFFICIENT_POWER:
      return "INSUFFICIENT_POWER";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "DRIVER_NOT_LOADED";
    case NVML_ERROR_TIMEOUT:
      return "TIMEOUT";
    case NVML_ERROR_IRQ_ISSUE:
      return "IRQ_ISSUE";
    case NVML_ERROR_LIBRARY_NOT_FOUND:
      return "LIBRARY_NOT_FOUND";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return "FUNCTION_NOT_FOUND";
    case NVML_ERROR_CORRUPTED_INFOROM:
      return "CORRUPTED_INFOROM";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU_IS_LOST";
    case NVML_ERROR_RESET_REQUIRED:
      return "RESET_REQUIRED";
    case NVML_ERROR_OPERATING_SYSTEM:
      return "OPERATING_SYSTEM";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "LIB_RM_VERSION_MISMATCH";
    case NVML_ERROR_IN_USE:
      return "IN_USE";
    case NVML_ERROR_MEMORY:
      return "MEMORY";
    case NVML_ERROR_NO_DATA:
      return "NO_DATA";
    default:
      return "UNKNOWN";
  }
}

}  // namespace rota::device::nvml

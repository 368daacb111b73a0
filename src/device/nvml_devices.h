// The NVML backend: GPU information from libnvidia-ml, loaded at run time.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "device/devices.h"

namespace rota::device {

struct NvmlOptions {
  // The library to dlopen. Empty: $ROTA_NVML_LIBRARY if set, else "libnvidia-ml.so.1".
  std::string library_path;
  // How long one Sample() may wait for NVML (loading, init and every call of the pass together).
  std::chrono::milliseconds deadline{2000};
};

// The path MakeNvmlDevices(options) will load (see NvmlOptions::library_path).
std::string ResolveNvmlLibraryPath(const NvmlOptions& options);

// Never fails: the library is loaded and initialised lazily by the first Sample() (and retried by
// later ones until it works), so a daemon can start before the driver is ready. Sample() returns
// Unavailable, naming the path, while the library cannot be loaded or initialised; Unavailable
// "NVML did not answer within ..." when the pass overran the deadline (the worker is abandoned);
// and Unavailable at once while such an abandoned pass is still stuck. Describe() names the path,
// the driver version and the optional NVML functions the library lacks once it has been loaded.
// The destructor calls nvmlShutdown (bounded by the deadline) unless a pass is still stuck.
std::unique_ptr<Devices> MakeNvmlDevices(const NvmlOptions& options);

}  // namespace rota::device

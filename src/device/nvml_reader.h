// ReadSnapshot: one pass over every card through a loaded NVML library.
#pragma once

#include <atomic>

#include "core/status.h"
#include "device/devices.h"
#include "device/nvml_library.h"

namespace rota::device::nvml {

// Reads the driver version and every card. REQUIRES: lib.fn().init succeeded on this library.
// Fails as a whole only when the card count cannot be read; a card whose handle, UUID, name or
// memory cannot be read, or whose optional calls fail with anything other than "not supported /
// no permission / not found", is listed with that error in GpuInfo::health (Unavailable, the
// message naming the call and the NVML error, e.g. "nvmlDeviceGetMemoryInfo: GPU_IS_LOST (...)").
// Blocks as long as NVML does: call it from a worker with a deadline (nvml_devices.h). `reading`,
// when given, holds the index of the card being read (-1 before the first and after the last), so
// a pass abandoned in a hung call tells which card hung.
StatusOr<Snapshot> ReadSnapshot(const Library& lib, std::atomic<int>* reading = nullptr);

}  // namespace rota::device::nvml

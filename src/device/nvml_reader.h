// ReadSnapshot: one pass over every card through a loaded NVML library.
#pragma once

#include <atomic>
#include <vector>

#include "core/status.h"
#include "device/devices.h"
#include "device/nvml_library.h"

namespace rota::device::nvml {

// What lives across passes of one NVML session. Only the worker thread touches it, except
// `reading`, which anyone may load.
struct PassState {
  // The index of the card being read (-1 before the first and after the last), so a pass
  // abandoned in a hung call tells which card hung.
  std::atomic<int> reading{-1};
  // Xid events: the set the cards are registered to (created on the first pass).
  nvmlEventSet_t xid_set = nullptr;
  bool xid_tried = false;
  std::vector<nvmlDevice_t> xid_registered;
};

// Reads the driver version and every card. REQUIRES: lib.fn().init succeeded on this library.
// Fails as a whole only when the card count cannot be read; a card whose handle, UUID, name or
// memory cannot be read, or whose optional calls fail with anything other than "not supported /
// no permission / not found", is listed with that error in GpuInfo::health (Unavailable, the
// message naming the call and the NVML error, e.g. "nvmlDeviceGetMemoryInfo: GPU_IS_LOST (...)").
// Blocks as long as NVML does: call it from a worker with a deadline (nvml_devices.h).
//
// Also per card: the volatile uncorrected ECC count (non-zero marks the card: the driver wants a
// reset) and the Xid errors since the previous pass (those that mean hardware trouble, such as 48,
// 79 or 94, mark the card; application faults such as 13 or 31 are only listed).
StatusOr<Snapshot> ReadSnapshot(const Library& lib, PassState* state = nullptr);

// True for the Xids that mean the card (not the program on it) is in trouble.
bool HardwareXid(int xid);

}  // namespace rota::device::nvml

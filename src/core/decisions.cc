// Tested by scheduler_test.cc.
#include "core/decisions.h"

namespace rota {

const char* WaitReasonName(WaitReason r) {
  switch (r) {
    case WaitReason::kResources: return "Resources";
    case WaitReason::kPriority: return "Priority";
    case WaitReason::kQuotaExhausted: return "QuotaExhausted";
    case WaitReason::kDependency: return "Dependency";
    case WaitReason::kBooking: return "Booking";
    case WaitReason::kPeakHours: return "PeakHours";
    case WaitReason::kImpossible: return "Impossible";
    case WaitReason::kStartRetry: return "StartRetry";
  }
  return "Unknown";
}

}  // namespace rota

// A booking as the store keeps it: the core's BookingEntry (what was asked, where it is held,
// its state) plus what only the daemon needs. Cards are kept by UUID (indices change with the
// inventory); the daemon maps them to indices when it loads or reloads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/booking.h"
#include "core/types.h"

namespace rota::store {

struct BookingRecord {
  BookingEntry entry;                  // entry.alloc.gpus / .mig are indices the daemon fills in
  std::int64_t uid = -1;               // the owner's uid (-1: imported for a user without one)
  std::vector<std::string> asked_cards;  // the UUIDs of the cards asked for by name; empty = any
  std::vector<std::string> gpu_uuids;  // the held cards, one per alloc.gpus entry
  std::string mig_uuid;                // the held slice
  Time created = 0;
  std::string decided_by;              // "rotad" (the rules) or the admin who confirmed or rejected it
  std::string reason;                  // why it is in its state (needs an admin: why; rejected: why)
};

struct BookingEvent {
  std::int64_t booking_id = 0;
  Time time = 0;
  std::optional<BookingState> from;  // empty for the creation
  BookingState to = BookingState::kRequested;
  std::string reason;
  std::string actor;
  bool operator==(const BookingEvent&) const = default;
};

}  // namespace rota::store

// The booking calendar's capacity model, for CheckBooking (booking.cc): what the open bookings
// hold on each card over time, where a new booking fits, and which bookings are in its way.
// Internal to the core; the interface is booking.h.
//
// Only bookings count here, not jobs: a booking is a promise about the future, and jobs running
// now are the scheduler's to move out of the way when it starts. A whole-GPU booking holds its
// cards entirely, a share holds its memory on its card (shares fit on one card up to its memory,
// never beside a whole-card booking), a MIG booking holds one slice.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/booking.h"
#include "core/cluster.h"
#include "core/types.h"

namespace rota {

class BookingCalendar {
 public:
  // Open bookings of `existing` except `ignore`. Borrows `gpus`, which must outlive the calendar.
  BookingCalendar(const std::vector<BookingEntry>& existing, const std::vector<Gpu>& gpus, std::int64_t ignore);

  // Where spec.request (on spec.cards when named) fits over [s, e), or nullopt. REQUIRES: the
  // request and the named cards passed CheckBooking's validation.
  //  - any N whole GPUs: free usable cards on one node (the one with the fewest free cards that
  //    suffice; across nodes only when no node is that large), chosen greedily: most NVLink links
  //    into the cards chosen so far; then, while more cards are to come, most links to other free
  //    cards (its partner can follow), and for the last card the fewest (an orphan whose partner
  //    is taken, not half of a free pair); then a card whose bookings end at s or begin at e
  //    (packing next to other bookings); then the lowest index;
  //  - a share: best fit, the card left with the least memory once it is placed, lowest index
  //    on ties;
  //  - a MIG profile: the first free slice of the profile, by card then slice;
  //  - named cards: those cards, if they are free.
  std::optional<Allocation> Place(const BookingSpec& spec, Time s, Time e) const;

  // Ids (ascending, unique) of the open bookings overlapping [s, e) on the capacity the request
  // could use: the named cards (only slices of the profile for MIG), else every usable card of
  // the request's kind (non-MIG cards for whole GPUs and shares, slices of the profile for MIG).
  std::vector<std::int64_t> Conflicts(const BookingSpec& spec, Time s, Time e) const;

 private:
  // One booking's hold on one card.
  struct Claim {
    Time start = 0;
    Time end = 0;
    std::int64_t id = 0;
    int mig = -1;    // slice index, or -1 for the card itself
    MiB memory = 0;  // a share's memory; 0: the whole card (or the slice)
  };

  bool Usable(int gi) const;
  bool CardFree(int gi, Time s, Time e) const;
  // Memory left on card `gi` over all of [s, e) for shares; -1 when a whole-card booking holds it.
  MiB ShareRoom(int gi, Time s, Time e) const;
  bool SliceFree(int gi, int slice, Time s, Time e) const;
  // Whether a booking on the card ends at s or begins at e.
  bool Touches(int gi, Time s, Time e) const;
  std::optional<Allocation> PlaceWhole(int n, Time s, Time e) const;
  std::vector<int> PickLinked(std::vector<int> cands, int n, Time s, Time e) const;
  std::optional<Allocation> PlaceShare(const std::vector<int>& cards, MiB memory, Time s, Time e) const;
  std::optional<Allocation> PlaceMig(const std::vector<int>& cards, const std::string& profile, Time s, Time e) const;

  const std::vector<Gpu>& gpus_;
  std::vector<std::vector<Claim>> claims_;  // per card
};

}  // namespace rota

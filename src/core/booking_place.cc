// Tested by booking_test.cc (through CheckBooking).
//
// Each card keeps the claims of the open bookings on it, unsorted: a lab has dozens of bookings
// in a fortnight, so a linear scan per question is cheaper than any index and obviously right.
// CheckBooking's search for alternatives asks a few thousand questions at most.
#include "core/booking_place.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

namespace rota {

namespace {

bool Overlaps(Time a_start, Time a_end, Time s, Time e) { return a_start < e && s < a_end; }

}  // namespace

BookingCalendar::BookingCalendar(const std::vector<BookingEntry>& existing, const std::vector<Gpu>& gpus,
                                 std::int64_t ignore)
    : gpus_(gpus), claims_(gpus.size()) {
  for (const BookingEntry& b : existing) {
    if (!IsOpen(b.state) || b.id == ignore || b.spec.end <= b.spec.start) continue;
    Allocation a = b.alloc;
    if (a.gpus.empty()) {
      // A request that was never placed (a thesis booking over others, say) claims the cards it
      // names; its slice is unknown, so a MIG request without a placement claims nothing.
      if (b.spec.request.kind == RequestKind::kMig) continue;
      a.gpus = b.spec.cards;
      if (b.spec.request.kind == RequestKind::kMemShare) a.memory = b.spec.request.memory;
    }
    for (int gi : a.gpus) {
      if (gi < 0 || static_cast<size_t>(gi) >= gpus.size()) continue;
      claims_[gi].push_back({b.spec.start, b.spec.end, b.id, a.mig, a.mig >= 0 ? 0 : a.memory});
    }
  }
}

bool BookingCalendar::Usable(int gi) const {
  return gi >= 0 && static_cast<size_t>(gi) < gpus_.size() && !gpus_[gi].drained;
}

bool BookingCalendar::CardFree(int gi, Time s, Time e) const {
  for (const Claim& c : claims_[gi]) {
    if (c.mig < 0 && Overlaps(c.start, c.end, s, e)) return false;
  }
  return true;
}

MiB BookingCalendar::ShareRoom(int gi, Time s, Time e) const {
  // Shares come and go within [s, e): the room is what is left at the busiest instant.
  std::vector<std::pair<Time, MiB>> events;
  for (const Claim& c : claims_[gi]) {
    if (c.mig >= 0 || !Overlaps(c.start, c.end, s, e)) continue;
    if (c.memory == 0) return -1;  // a whole-card booking: no share beside it
    events.emplace_back(std::max(c.start, s), c.memory);
    events.emplace_back(std::min(c.end, e), -c.memory);
  }
  std::sort(events.begin(), events.end());  // at equal times releases (negative) come first
  MiB held = 0, peak = 0;
  for (const auto& [t, delta] : events) peak = std::max(peak, held += delta);
  return gpus_[gi].memory - peak;
}

bool BookingCalendar::SliceFree(int gi, int slice, Time s, Time e) const {
  for (const Claim& c : claims_[gi]) {
    if (c.mig == slice && Overlaps(c.start, c.end, s, e)) return false;
  }
  return true;
}

bool BookingCalendar::Touches(int gi, Time s, Time e) const {
  for (const Claim& c : claims_[gi]) {
    if (c.end == s || c.start == e) return true;
  }
  return false;
}

std::optional<Allocation> BookingCalendar::Place(const BookingSpec& spec, Time s, Time e) const {
  const Request& r = spec.request;
  std::vector<int> cards = spec.cards;
  if (cards.empty()) {
    for (size_t gi = 0; gi < gpus_.size(); ++gi) cards.push_back(static_cast<int>(gi));
  }
  switch (r.kind) {
    case RequestKind::kWholeGpus: {
      if (spec.cards.empty()) return PlaceWhole(r.gpus, s, e);
      for (int gi : cards) {
        if (!Usable(gi) || !gpus_[gi].mig.empty() || !CardFree(gi, s, e)) return std::nullopt;
      }
      Allocation a;
      a.gpus = cards;
      std::sort(a.gpus.begin(), a.gpus.end());
      return a;
    }
    case RequestKind::kMemShare: return PlaceShare(cards, r.memory, s, e);
    case RequestKind::kMig: return PlaceMig(cards, r.mig_profile, s, e);
  }
  return std::nullopt;
}

std::optional<Allocation> BookingCalendar::PlaceWhole(int n, Time s, Time e) const {
  if (n < 1) return std::nullopt;
  // Per node: usable whole cards, and those free over [s, e).
  std::map<int, std::pair<int, std::vector<int>>> nodes;
  int largest = 0;
  for (size_t i = 0; i < gpus_.size(); ++i) {
    int gi = static_cast<int>(i);
    if (!Usable(gi) || !gpus_[gi].mig.empty()) continue;
    auto& [size, free] = nodes[gpus_[gi].node];
    largest = std::max(largest, ++size);
    if (CardFree(gi, s, e)) free.push_back(gi);
  }
  std::vector<int> cands;
  if (n <= largest) {
    // A booking that fits on one node stays on one node: the fullest node that still has room.
    const std::vector<int>* best = nullptr;
    for (const auto& [node, entry] : nodes) {
      const std::vector<int>& free = entry.second;
      if (static_cast<int>(free.size()) >= n && (!best || free.size() < best->size())) best = &free;
    }
    if (!best) return std::nullopt;
    cands = *best;
  } else {
    for (const auto& [node, entry] : nodes) cands.insert(cands.end(), entry.second.begin(), entry.second.end());
    if (static_cast<int>(cands.size()) < n) return std::nullopt;
  }
  Allocation a;
  a.gpus = PickLinked(std::move(cands), n, s, e);
  return a;
}

std::vector<int> BookingCalendar::PickLinked(std::vector<int> cands, int n, Time s, Time e) const {
  std::sort(cands.begin(), cands.end());
  auto linked = [&](int a, int b) {
    const std::vector<int>& peers = gpus_[a].nvlink;
    return std::find(peers.begin(), peers.end(), b) != peers.end();
  };
  std::vector<int> chosen;
  std::vector<char> taken(cands.size(), 0);
  while (static_cast<int>(chosen.size()) < n) {
    // Score: links into the chosen set; then links to other free cards, many while more cards are
    // to be chosen (its partner comes next) and few for the last one (it breaks no pair); then
    // touching. The first best wins, which is the lowest index since candidates are sorted.
    const bool last = static_cast<int>(chosen.size()) + 1 == n;
    size_t best = cands.size();
    std::tuple<int, int, bool> best_score{-1, -1, false};
    for (size_t i = 0; i < cands.size(); ++i) {
      if (taken[i]) continue;
      int links = 0, degree = 0;
      for (int c : chosen) links += linked(cands[i], c);
      for (size_t o = 0; o < cands.size(); ++o) degree += !taken[o] && o != i && linked(cands[i], cands[o]);
      std::tuple<int, int, bool> score{links, last ? -degree : degree, Touches(cands[i], s, e)};
      if (best == cands.size() || score > best_score) {
        best = i;
        best_score = score;
      }
    }
    taken[best] = 1;
    chosen.push_back(cands[best]);
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

std::optional<Allocation> BookingCalendar::PlaceShare(const std::vector<int>& cards, MiB memory, Time s, Time e) const {
  int best = -1;
  MiB best_left = 0;
  for (int gi : cards) {
    if (!Usable(gi) || !gpus_[gi].mig.empty()) continue;
    MiB left = ShareRoom(gi, s, e) - memory;
    if (left >= 0 && (best < 0 || left < best_left)) {
      best = gi;
      best_left = left;
    }
  }
  if (best < 0) return std::nullopt;
  Allocation a;
  a.gpus = {best};
  a.memory = memory;
  return a;
}

std::optional<Allocation> BookingCalendar::PlaceMig(const std::vector<int>& cards, const std::string& profile, Time s,
                                                    Time e) const {
  for (int gi : cards) {
    if (!Usable(gi)) continue;
    const std::vector<MigSlice>& slices = gpus_[gi].mig;
    for (size_t si = 0; si < slices.size(); ++si) {
      if (slices[si].profile != profile || !SliceFree(gi, static_cast<int>(si), s, e)) continue;
      Allocation a;
      a.gpus = {gi};
      a.mig = static_cast<int>(si);
      return a;
    }
  }
  return std::nullopt;
}

std::vector<std::int64_t> BookingCalendar::Conflicts(const BookingSpec& spec, Time s, Time e) const {
  const Request& r = spec.request;
  const bool mig = r.kind == RequestKind::kMig;
  std::vector<int> cards;
  if (!spec.cards.empty()) {
    for (int gi : spec.cards) {
      if (gi >= 0 && static_cast<size_t>(gi) < gpus_.size()) cards.push_back(gi);
    }
  } else {
    for (size_t gi = 0; gi < gpus_.size(); ++gi) {
      if (Usable(static_cast<int>(gi)) && gpus_[gi].mig.empty() != mig) cards.push_back(static_cast<int>(gi));
    }
  }
  std::vector<std::int64_t> ids;
  for (int gi : cards) {
    const std::vector<MigSlice>& slices = gpus_[gi].mig;
    for (const Claim& c : claims_[gi]) {
      if (!Overlaps(c.start, c.end, s, e)) continue;
      if (mig) {
        // Only slices of the profile are in the way of a slice.
        bool same = c.mig >= 0 && static_cast<size_t>(c.mig) < slices.size() && slices[c.mig].profile == r.mig_profile;
        if (!same) continue;
      }
      ids.push_back(c.id);
    }
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace rota

#include "daemon/booking_book.h"

#include <algorithm>
#include <utility>

namespace rota::daemon {

Status BookingBook::Load(Time now, const std::vector<Gpu>& cards) {
  StatusOr<std::vector<store::BookingRecord>> rows = store_.LoadBookings(now - kMemory);
  if (!rows.ok()) return rows.status();
  bookings_.clear();
  for (store::BookingRecord& r : *rows) {
    Remap(r, cards);
    bookings_[r.entry.id] = std::move(r);
  }
  return Status();
}

void BookingBook::Remap(const std::vector<Gpu>& cards) {
  for (auto& [id, b] : bookings_) Remap(b, cards);
}

void BookingBook::Remap(store::BookingRecord& rec, const std::vector<Gpu>& cards) {
  auto index_of = [&cards](const std::string& uuid) {
    for (size_t i = 0; i < cards.size(); ++i) {
      if (cards[i].uuid == uuid) return static_cast<int>(i);
    }
    return -1;
  };
  rec.entry.spec.cards.clear();
  for (const std::string& uuid : rec.asked_cards) {
    if (int i = index_of(uuid); i >= 0) rec.entry.spec.cards.push_back(i);
  }
  rec.entry.alloc.gpus.clear();
  rec.entry.alloc.mig = -1;
  for (const std::string& uuid : rec.gpu_uuids) {
    if (int i = index_of(uuid); i >= 0) rec.entry.alloc.gpus.push_back(i);
  }
  if (!rec.mig_uuid.empty() && !rec.entry.alloc.gpus.empty()) {
    const Gpu& g = cards[static_cast<size_t>(rec.entry.alloc.gpus[0])];
    for (size_t k = 0; k < g.mig.size(); ++k) {
      if (g.mig[k].uuid == rec.mig_uuid) rec.entry.alloc.mig = static_cast<int>(k);
    }
  }
}

void BookingBook::Place(store::BookingRecord& rec, const Allocation& alloc, const std::vector<Gpu>& cards) {
  rec.entry.alloc = alloc;
  rec.gpu_uuids.clear();
  rec.mig_uuid.clear();
  for (int g : alloc.gpus) rec.gpu_uuids.push_back(cards[static_cast<size_t>(g)].uuid);
  if (alloc.mig >= 0 && !alloc.gpus.empty()) {
    rec.mig_uuid = cards[static_cast<size_t>(alloc.gpus[0])].mig[static_cast<size_t>(alloc.mig)].uuid;
  }
}

StatusOr<std::int64_t> BookingBook::Add(store::BookingRecord rec, const std::string& actor, Time now) {
  StatusOr<std::int64_t> id = store_.AddBooking(rec, actor, now);
  if (!id.ok()) return id.status();
  rec.entry.id = *id;
  bookings_[*id] = std::move(rec);
  return *id;
}

Status BookingBook::Save(const store::BookingRecord& rec, BookingState from, const std::string& reason,
                         const std::string& actor, Time now, bool durable,
                         const std::function<void()>& with) {
  auto update = [&] { return store_.UpdateBooking(rec, from, reason, actor, now, durable); };
  if (Status s = store_.ChangeWith(update, with, durable); !s.ok()) return s;
  bookings_[rec.entry.id] = rec;
  return Status();
}

void BookingBook::Forget(Time now) {
  std::erase_if(bookings_, [now](const auto& kv) {
    const BookingEntry& e = kv.second.entry;
    return !IsOpen(e.state) && std::max(e.actual_end, e.spec.end) < now - kMemory;
  });
}

const store::BookingRecord* BookingBook::Find(std::int64_t id) const {
  auto it = bookings_.find(id);
  return it == bookings_.end() ? nullptr : &it->second;
}

std::vector<BookingEntry> BookingBook::Entries() const {
  std::vector<BookingEntry> out;
  out.reserve(bookings_.size());
  for (const auto& [id, r] : bookings_) out.push_back(r.entry);
  return out;
}

}  // namespace rota::daemon

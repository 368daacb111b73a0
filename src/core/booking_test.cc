#include "core/booking.h"

#include <gtest/gtest.h>

#include "testing/builders.h"
#include "testing/requests.h"
#include "testing/zones.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rota {
namespace booking_test {
namespace {

using testing::Mig;
using testing::Share;
using testing::Whole;

constexpr int kOffset = 8 * 3600;  // the lab's zone, UTC+08:00
constexpr MiB k80G = 81920;
constexpr MiB k40G = 40960;
constexpr MiB k20G = 20480;

// The instant of a local (UTC+08:00) wall-clock time (Howard Hinnant's days_from_civil).
Time At(int y, int m, int d, int hh, int mm, int offset = kOffset) {
  y -= m <= 2;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const Time days = static_cast<Time>(era) * 146097 + doe - 719468;
  return days * kDay + hh * kHour + mm * kMinute - offset;
}

// Tuesday 2026-12-01 10:00 local; the quota week starts on Monday 2026-11-30.
const Time kNow = At(2026, 12, 1, 10, 0);
// Wednesday 2026-12-02: "tomorrow", so no same-day rule applies.
Time Tomorrow(int hh, int mm = 0) { return At(2026, 12, 2, hh, mm); }

using testing::Card;
using testing::Cards;

// Four cards with NVLink pairs (0,1) and (2,3).
std::vector<Gpu> Pairs() {
  std::vector<Gpu> gpus = Cards(4);
  for (int i = 0; i < 4; ++i) gpus[i].nvlink = {i ^ 1};
  return gpus;
}

// Card 0 whole; card 1 in MIG mode with slices 3g.40gb, 3g.40gb, 1g.10gb.
std::vector<Gpu> WithMig() {
  std::vector<Gpu> gpus = Cards(2);
  gpus[1].mig = {{"s0", "3g.40gb", k40G}, {"s1", "3g.40gb", k40G}, {"s2", "1g.10gb", 10240}};
  return gpus;
}

BookingSpec Spec(Request r, Time start, Time end, std::string user = "alice", std::vector<int> cards = {}) {
  BookingSpec s;
  s.user = std::move(user);
  s.project = "vision";
  s.request = std::move(r);
  s.cards = std::move(cards);
  s.start = start;
  s.end = end;
  return s;
}

Allocation OnCards(std::vector<int> cards, MiB memory = 0, int mig = -1) {
  Allocation a;
  a.gpus = std::move(cards);
  a.memory = memory;
  a.mig = mig;
  return a;
}

BookingEntry Entry(std::int64_t id, BookingSpec spec, Allocation alloc, BookingState state = BookingState::kConfirmed) {
  BookingEntry b;
  b.id = id;
  b.spec = std::move(spec);
  b.alloc = std::move(alloc);
  b.state = state;
  return b;
}

// bob's whole-card booking of `cards` over [start, end).
BookingEntry Bob(std::int64_t id, std::vector<int> cards, Time start, Time end,
                 BookingState state = BookingState::kConfirmed) {
  int n = static_cast<int>(cards.size());
  return Entry(id, Spec(Whole(n), start, end, "bob"), OnCards(std::move(cards)), state);
}

Policy Lab() {
  Policy p;
  p.zone = kOffset;
  return p;
}

BookingCheck Check(const BookingSpec& spec, const std::vector<BookingEntry>& existing, const std::vector<Gpu>& gpus,
                   const BookingRules& rules = {}, const Policy& policy = Lab(), Time now = kNow, bool by_admin = false,
                   std::int64_t ignore = 0) {
  return CheckBooking(spec, existing, gpus, rules, policy, now, by_admin, ignore);
}

// The single error of a check, or a note that there was not exactly one.
std::string OnlyError(const BookingCheck& c) {
  if (c.errors.size() != 1) return "expected one error, got " + std::to_string(c.errors.size());
  return c.errors[0];
}

TEST(BookingStateTest, NamesRoundTripAndOpenStates) {
  for (int i = 0; i <= static_cast<int>(BookingState::kCancelled); ++i) {
    BookingState s = static_cast<BookingState>(i);
    EXPECT_EQ(ParseBookingState(BookingStateName(s)), s) << BookingStateName(s);
  }
  EXPECT_STREQ(BookingStateName(BookingState::kNoShow), "no_show");
  EXPECT_EQ(ParseBookingState("noshow"), std::nullopt);
  EXPECT_TRUE(IsOpen(BookingState::kRequested));
  EXPECT_TRUE(IsOpen(BookingState::kConfirmed));
  EXPECT_TRUE(IsOpen(BookingState::kActive));
  for (BookingState s : {BookingState::kEnded, BookingState::kReleased, BookingState::kNoShow, BookingState::kOverrun,
                         BookingState::kRejected, BookingState::kCancelled}) {
    EXPECT_FALSE(IsOpen(s)) << BookingStateName(s);
  }
}

// ---- Refusals -------------------------------------------------------------------------------

TEST(BookingCheckTest, AcceptsAPlainBookingForTomorrow) {
  BookingCheck c = Check(Spec(Whole(1), Tomorrow(14), Tomorrow(16)), {}, Cards(2));
  EXPECT_TRUE(c.errors.empty());
  EXPECT_TRUE(c.needs_admin.empty());
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(c.alloc->gpus, std::vector<int>{0});
  EXPECT_DOUBLE_EQ(c.gpu_hours, 2.0);
}

TEST(BookingCheckTest, StartInTheCurrentSlotIsInThePast) {
  const Time now = At(2026, 12, 1, 10, 10);
  BookingCheck c = Check(Spec(Whole(1), At(2026, 12, 1, 10, 0), At(2026, 12, 1, 11, 0)), {}, Cards(1), {}, Lab(), now,
                         /*by_admin=*/true);
  EXPECT_EQ(OnlyError(c),
            "the start 2026-12-01 10:00 is in the past (it is 2026-12-01 10:10): book from 2026-12-01 10:30 on");
  EXPECT_FALSE(c.alloc.has_value());
  EXPECT_DOUBLE_EQ(c.gpu_hours, 1.0);  // filled even when refused
  // The next slot is fine (an admin, so that the same-day rule does not matter here).
  EXPECT_TRUE(Check(Spec(Whole(1), At(2026, 12, 1, 10, 30), At(2026, 12, 1, 11, 0)), {}, Cards(1), {}, Lab(), now, true)
                  .errors.empty());
}

TEST(BookingCheckTest, EndNotAfterStart) {
  BookingCheck c = Check(Spec(Whole(1), Tomorrow(14), Tomorrow(14)), {}, Cards(1));
  EXPECT_EQ(OnlyError(c),
            "the end 2026-12-02 14:00 is not after the start 2026-12-02 14:00: a booking lasts at least "
            "one 30m slot");
  EXPECT_DOUBLE_EQ(c.gpu_hours, 0.0);
  EXPECT_EQ(Check(Spec(Whole(1), Tomorrow(14), Tomorrow(13)), {}, Cards(1)).errors.size(), 1u);
}

TEST(BookingCheckTest, TimesOffTheSlotGrid) {
  BookingCheck c = Check(Spec(Whole(1), Tomorrow(14, 10), Tomorrow(15)), {}, Cards(1));
  EXPECT_EQ(OnlyError(c), "the start 2026-12-02 14:10 is not on the 30m slot grid (use :00 or :30)");
  c = Check(Spec(Whole(1), Tomorrow(14), Tomorrow(15, 45)), {}, Cards(1));
  EXPECT_EQ(OnlyError(c), "the end 2026-12-02 15:45 is not on the 30m slot grid (use :00 or :30)");
  BookingRules quarter;
  quarter.slot = 15 * kMinute;
  EXPECT_TRUE(Check(Spec(Whole(1), Tomorrow(14, 15), Tomorrow(15, 45)), {}, Cards(1), quarter).errors.empty());
  c = Check(Spec(Whole(1), Tomorrow(14, 5), Tomorrow(15)), {}, Cards(1), quarter);
  EXPECT_EQ(OnlyError(c), "the start 2026-12-02 14:05 is not on the 15m slot grid (use :00, :15, :30 or :45)");
  BookingRules two_hours;
  two_hours.slot = 2 * kHour;
  c = Check(Spec(Whole(1), Tomorrow(15), Tomorrow(16)), {}, Cards(1), two_hours);
  EXPECT_EQ(OnlyError(c),
            "the start 2026-12-02 15:00 is not on the 2h slot grid (use local midnight plus a multiple "
            "of 2h)");
}

TEST(BookingCheckTest, SlotGridIsInLocalTime) {
  // India (UTC+05:30) with hour slots: local 10:00 is on the grid although it is 04:30 UTC.
  Policy india = Lab();
  india.zone = 5 * kHour + 30 * kMinute;
  BookingRules hourly;
  hourly.slot = kHour;
  const Time ten = At(2026, 12, 2, 10, 0, india.zone.OffsetAt(0));
  EXPECT_TRUE(Check(Spec(Whole(1), ten, ten + kHour), {}, Cards(1), hourly, india).errors.empty());
  BookingCheck c = Check(Spec(Whole(1), ten + 30 * kMinute, ten + 90 * kMinute), {}, Cards(1), hourly, india);
  ASSERT_EQ(c.errors.size(), 2u);
  EXPECT_EQ(c.errors[0], "the start 2026-12-02 10:30 is not on the 1h slot grid (use :00)");
  EXPECT_EQ(c.errors[1], "the end 2026-12-02 11:30 is not on the 1h slot grid (use :00)");
}

// ---- Daylight saving (Europe/Berlin and America/New_York in 2026) ----------------------------

Policy InZone(Zone zone) {
  Policy p;
  p.zone = std::move(zone);
  return p;
}

TEST(BookingDaylightSavingTest, ANightAcrossTheChangeHoldsItsRealHours) {
  using testing::Utc;
  // Berlin, 22:00 to 06:00 local: 7 hours the night clocks go forward (28-29 March), 9 the night
  // they go back (24-25 October). Both ends are on the grid in the offset in force at each.
  const Policy berlin = InZone(testing::Berlin());
  BookingCheck c = Check(Spec(Whole(1), Utc(2026, 3, 28, 21), Utc(2026, 3, 29, 4)), {}, Cards(1), {}, berlin,
                         Utc(2026, 3, 27, 12));
  EXPECT_TRUE(c.errors.empty()) << c.errors.front();
  EXPECT_DOUBLE_EQ(c.gpu_hours, 7.0);
  c = Check(Spec(Whole(1), Utc(2026, 10, 24, 20), Utc(2026, 10, 25, 5)), {}, Cards(1), {}, berlin,
            Utc(2026, 10, 23, 12));
  EXPECT_TRUE(c.errors.empty()) << c.errors.front();
  EXPECT_DOUBLE_EQ(c.gpu_hours, 9.0);
  // New York, 22:00 to 06:00 local on 31 October - 1 November: 9 hours too.
  c = Check(Spec(Whole(1), Utc(2026, 11, 1, 2), Utc(2026, 11, 1, 11)), {}, Cards(1), {}, InZone(testing::NewYork()),
            Utc(2026, 10, 30, 12));
  EXPECT_TRUE(c.errors.empty()) << c.errors.front();
  EXPECT_DOUBLE_EQ(c.gpu_hours, 9.0);
}

TEST(BookingDaylightSavingTest, TheSlotGridIsWallTimeInEitherOffset) {
  using testing::Utc;
  // Two-hour slots start at even local hours: 14:00 local is 12:00 UTC in summer, 13:00 in winter.
  const Policy berlin = InZone(testing::Berlin());
  BookingRules two;
  two.slot = 2 * kHour;
  EXPECT_TRUE(Check(Spec(Whole(1), Utc(2026, 7, 3, 12), Utc(2026, 7, 3, 14)), {}, Cards(1), two, berlin,
                    Utc(2026, 7, 1, 12)).errors.empty());
  BookingCheck c = Check(Spec(Whole(1), Utc(2026, 7, 3, 13), Utc(2026, 7, 3, 15)), {}, Cards(1), two, berlin,
                         Utc(2026, 7, 1, 12));
  ASSERT_EQ(c.errors.size(), 2u);
  EXPECT_EQ(c.errors[0],
            "the start 2026-07-03 15:00 is not on the 2h slot grid (use local midnight plus a multiple of 2h)");
  EXPECT_TRUE(Check(Spec(Whole(1), Utc(2026, 12, 3, 13), Utc(2026, 12, 3, 15)), {}, Cards(1), two, berlin,
                    Utc(2026, 12, 1, 12)).errors.empty());
  // From a summer evening to a winter morning: 22:00 CEST to 04:00 CET, both on the grid.
  EXPECT_TRUE(Check(Spec(Whole(1), Utc(2026, 10, 24, 20), Utc(2026, 10, 25, 3)), {}, Cards(1), two, berlin,
                    Utc(2026, 10, 23, 12)).errors.empty());
}

TEST(BookingDaylightSavingTest, GridPointsNeitherInTheSkippedHourNorMissingTheRepeatedOne) {
  using testing::Utc;
  const Zone z = testing::Berlin();
  const Duration half = 30 * kMinute;
  // 29 March: after 01:45 CET the next half hour on the wall clock is 03:00 CEST.
  EXPECT_EQ(GridCeil(Utc(2026, 3, 29, 0, 45), half, z), Utc(2026, 3, 29, 1));
  EXPECT_EQ(GridFloor(Utc(2026, 3, 29, 1, 10), half, z), Utc(2026, 3, 29, 1));
  EXPECT_EQ(GridFloor(Utc(2026, 3, 29, 1) - 1, half, z), Utc(2026, 3, 29, 0, 30));  // 01:30 CET
  // 25 October: 02:00 to 03:00 happens twice, and both 02:30s are grid points.
  EXPECT_TRUE(OnGrid(Utc(2026, 10, 25, 0, 30), half, z));
  EXPECT_TRUE(OnGrid(Utc(2026, 10, 25, 1, 30), half, z));
  EXPECT_EQ(GridCeil(Utc(2026, 10, 25, 0, 40), half, z), Utc(2026, 10, 25, 1));  // 02:40 CEST: 02:00 CET
  EXPECT_EQ(GridFloor(Utc(2026, 10, 25, 1, 10), half, z), Utc(2026, 10, 25, 1));  // 02:10 CET: 02:00 CET
  EXPECT_EQ(GridFloor(Utc(2026, 10, 25, 1) - 1, half, z), Utc(2026, 10, 25, 0, 30));  // 02:59 CEST
  // Every point GridCeil and GridFloor give over the two weeks around each change is on the grid,
  // and none lies between a time and its answer.
  for (Time day : {Utc(2026, 3, 22, 0), Utc(2026, 10, 18, 0)}) {
    for (Time t = day; t < day + 2 * kWeek; t += 7 * kMinute) {
      const Time up = GridCeil(t, half, z), down = GridFloor(t, half, z);
      ASSERT_TRUE(OnGrid(up, half, z) && OnGrid(down, half, z)) << t;
      ASSERT_TRUE(down <= t && t <= up) << t;
      for (Time u = down + kMinute; u < up; u += kMinute) ASSERT_FALSE(OnGrid(u, half, z)) << t << " " << u;
    }
  }
}

TEST(BookingDaylightSavingTest, SameDayIsTheLocalDayInSummer) {
  using testing::Utc;
  // Berlin in summer: 22:30 UTC on 3 July is 00:30 on the 4th. A booking for 4 July 09:00 made
  // then starts today; at 21:30 UTC (23:30 local on the 3rd) it starts tomorrow.
  const std::string kToday = "starts today: same-day bookings need an admin (book the day before)";
  const Policy berlin = InZone(testing::Berlin());
  const BookingSpec morning = Spec(Whole(1), Utc(2026, 7, 4, 7), Utc(2026, 7, 4, 9));
  EXPECT_EQ(Check(morning, {}, Cards(1), {}, berlin, Utc(2026, 7, 3, 22, 30)).needs_admin,
            std::vector<std::string>{kToday});
  EXPECT_TRUE(Check(morning, {}, Cards(1), {}, berlin, Utc(2026, 7, 3, 21, 30)).needs_admin.empty());
}

TEST(BookingCheckTest, TooFarAhead) {
  BookingRules rules;  // 14 days ahead at most
  const Time start = kNow + 14 * kDay + 30 * kMinute;
  BookingCheck c = Check(Spec(Whole(1), start, start + kHour), {}, Cards(1), rules);
  EXPECT_EQ(OnlyError(c),
            "the start 2026-12-15 10:30 is more than 14d ahead: bookings may start until 2026-12-15 10:00");
  EXPECT_TRUE(Check(Spec(Whole(1), kNow + 14 * kDay, kNow + 14 * kDay + kHour), {}, Cards(1), rules).errors.empty());
}

TEST(BookingCheckTest, TooLong) {
  BookingCheck c = Check(Spec(Whole(1), Tomorrow(8), Tomorrow(21)), {}, Cards(1));
  EXPECT_EQ(OnlyError(c), "the booking lasts 13h: at most 12h can be booked at once");
  EXPECT_TRUE(Check(Spec(Whole(1), Tomorrow(8), Tomorrow(20)), {}, Cards(1)).errors.empty());
  BookingRules short_ones;
  short_ones.max_length = 90 * kMinute;
  EXPECT_EQ(OnlyError(Check(Spec(Whole(1), Tomorrow(8), Tomorrow(10)), {}, Cards(1), short_ones)),
            "the booking lasts 2h: at most 1h30m can be booked at once");
}

TEST(BookingCheckTest, UnknownDuplicateAndDrainedCards) {
  std::vector<Gpu> gpus = Cards(4);
  gpus[2].drained = true;
  EXPECT_EQ(OnlyError(Check(Spec(Whole(1), Tomorrow(14), Tomorrow(15), "alice", {4}), {}, gpus)),
            "card 4 does not exist (cards are 0-3)");
  EXPECT_EQ(OnlyError(Check(Spec(Whole(1), Tomorrow(14), Tomorrow(15), "alice", {-1}), {}, gpus)),
            "card -1 does not exist (cards are 0-3)");
  EXPECT_EQ(OnlyError(Check(Spec(Whole(2), Tomorrow(14), Tomorrow(15), "alice", {1, 1}), {}, gpus)),
            "card 1 is named twice: name each card once");
  EXPECT_EQ(OnlyError(Check(Spec(Whole(1), Tomorrow(14), Tomorrow(15), "alice", {2}), {}, gpus)),
            "card 2 is drained (out of service): it cannot be booked until an admin resumes it");
  EXPECT_EQ(OnlyError(Check(Spec(Whole(1), Tomorrow(14), Tomorrow(15), "alice", {0}), {}, std::vector<Gpu>{})),
            "card 0 does not exist (there are no cards)");
}

TEST(BookingCheckTest, RequestsNoCardCanHold) {
  std::vector<Gpu> gpus = WithMig();  // one whole card (80G), one MIG card
  EXPECT_EQ(OnlyError(Check(Spec(Whole(2), Tomorrow(14), Tomorrow(15)), {}, gpus)),
            "2 whole GPUs is more than this server has: 1 card can be booked whole");
  EXPECT_EQ(OnlyError(Check(Spec(Whole(0), Tomorrow(14), Tomorrow(15)), {}, gpus)),
            "a booking of whole GPUs takes at least 1");
  EXPECT_EQ(OnlyError(Check(Spec(Share(100 * 1024), Tomorrow(14), Tomorrow(15)), {}, gpus)),
            "a 100G share fits no card: the largest card in service has 80G");
  EXPECT_EQ(OnlyError(Check(Spec(Share(0), Tomorrow(14), Tomorrow(15)), {}, gpus)),
            "a memory share needs a size, such as 20G");
  EXPECT_EQ(OnlyError(Check(Spec(Mig("7g.80gb"), Tomorrow(14), Tomorrow(15)), {}, gpus)),
            "no card in service offers MIG profile 7g.80gb (profiles on offer: 3g.40gb, 1g.10gb)");
  std::vector<Gpu> mig_only = {gpus[1]};
  EXPECT_EQ(OnlyError(Check(Spec(Whole(1), Tomorrow(14), Tomorrow(15)), {}, mig_only)),
            "1 whole GPU is more than this server has: every card is in MIG mode; book a slice with --mig");
  EXPECT_EQ(OnlyError(Check(Spec(Mig("3g.40gb"), Tomorrow(14), Tomorrow(15)), {}, Cards(2))),
            "no card in service offers MIG profile 3g.40gb (no card in service is in MIG mode)");
  // Draining takes cards out of what can be booked, and says so.
  std::vector<Gpu> four = Cards(4);
  four[1].drained = four[3].drained = true;
  EXPECT_EQ(OnlyError(Check(Spec(Whole(3), Tomorrow(14), Tomorrow(15)), {}, four)),
            "3 whole GPUs: only 2 of the 4 cards are in service (drained: 1, 3)");
  EXPECT_TRUE(Check(Spec(Whole(2), Tomorrow(14), Tomorrow(15)), {}, four).errors.empty());
}

TEST(BookingCheckTest, NamedCardsMustMatchTheRequest) {
  std::vector<Gpu> gpus = WithMig();
  gpus.push_back(Card(2, k40G));
  EXPECT_EQ(OnlyError(Check(Spec(Whole(2), Tomorrow(14), Tomorrow(15), "alice", {0}), {}, gpus)),
            "1 cards named for 2 whole GPUs: name exactly 2, or none to let Rota choose");
  EXPECT_EQ(OnlyError(Check(Spec(Share(k20G), Tomorrow(14), Tomorrow(15), "alice", {0, 2}), {}, gpus)),
            "a memory share is on one card: name one card, or none to let Rota choose");
  EXPECT_EQ(OnlyError(Check(Spec(Whole(1), Tomorrow(14), Tomorrow(15), "alice", {1}), {}, gpus)),
            "card 1 is in MIG mode: book one of its slices (a MIG profile), not the card or a share of it");
  EXPECT_EQ(OnlyError(Check(Spec(Share(k20G), Tomorrow(14), Tomorrow(15), "alice", {1}), {}, gpus)),
            "card 1 is in MIG mode: book one of its slices (a MIG profile), not the card or a share of it");
  EXPECT_EQ(OnlyError(Check(Spec(Mig("3g.40gb"), Tomorrow(14), Tomorrow(15), "alice", {0}), {}, gpus)),
            "card 0 has no 3g.40gb slice (cards with it: 1)");
  EXPECT_EQ(OnlyError(Check(Spec(Share(60 * 1024), Tomorrow(14), Tomorrow(15), "alice", {2}), {}, gpus)),
            "a 60G share does not fit card 2 (40G)");
  EXPECT_EQ(Check(Spec(Mig("3g.40gb"), Tomorrow(14), Tomorrow(15), "alice", {1, 1}), {}, gpus).errors.size(), 2u);
}

TEST(BookingCheckTest, ErrorsAccumulateAndStopThePlacement) {
  BookingCheck c =
      Check(Spec(Whole(1), kNow - kDay + 10 * kMinute, kNow - kDay + 13 * kHour + 5 * kMinute, "alice", {7}),
            {Bob(1, {0}, kNow - kDay, kNow)}, Cards(2));
  EXPECT_EQ(c.errors.size(), 5u);  // past, two off the grid, too long, unknown card
  EXPECT_FALSE(c.alloc.has_value());
  EXPECT_TRUE(c.conflicts.empty());
  EXPECT_TRUE(c.alternatives.empty());
  EXPECT_TRUE(c.needs_admin.empty());
}

// ---- Placement --------------------------------------------------------------------------------

TEST(BookingPlaceTest, AnyWholeGpusPreferNvlinkPairs) {
  std::vector<Gpu> gpus = Pairs();
  BookingCheck c = Check(Spec(Whole(2), Tomorrow(14), Tomorrow(16)), {}, gpus);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(c.alloc->gpus, (std::vector<int>{0, 1}));
  EXPECT_DOUBLE_EQ(c.gpu_hours, 4.0);
  // Card 0 is taken: the whole pair (2,3), not the lowest free set {1, 2}.
  std::vector<BookingEntry> existing = {Bob(1, {0}, Tomorrow(13), Tomorrow(15))};
  c = Check(Spec(Whole(2), Tomorrow(14), Tomorrow(16)), existing, gpus);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(c.alloc->gpus, (std::vector<int>{2, 3}));
  // One card: the orphan 1 (its partner taken), keeping the pair (2,3) whole.
  c = Check(Spec(Whole(1), Tomorrow(14), Tomorrow(16)), existing, gpus);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(c.alloc->gpus, std::vector<int>{1});
  // Three cards: the pair and the orphan.
  c = Check(Spec(Whole(3), Tomorrow(14), Tomorrow(16)), existing, gpus);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(c.alloc->gpus, (std::vector<int>{1, 2, 3}));
  // After bob's booking, card 0 is free again: the first pair.
  c = Check(Spec(Whole(2), Tomorrow(15), Tomorrow(16)), existing, gpus);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(c.alloc->gpus, (std::vector<int>{0, 1}));
}

TEST(BookingPlaceTest, AnyWholeGpusWithoutLinksTakeLowestFreeAndPackNextToBookings) {
  std::vector<Gpu> gpus = Cards(4);
  BookingCheck c = Check(Spec(Whole(2), Tomorrow(14), Tomorrow(16)), {Bob(1, {1}, Tomorrow(12), Tomorrow(15))}, gpus);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(c.alloc->gpus, (std::vector<int>{0, 2}));
  // Card 3's booking ends when this one starts: packing puts it right after, on card 3.
  c = Check(Spec(Whole(1), Tomorrow(14), Tomorrow(16)), {Bob(1, {3}, Tomorrow(12), Tomorrow(14))}, gpus);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(c.alloc->gpus, std::vector<int>{3});
  // ... and so when a booking begins as this one ends.
  c = Check(Spec(Whole(1), Tomorrow(14), Tomorrow(16)), {Bob(1, {2}, Tomorrow(16), Tomorrow(18))}, gpus);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(c.alloc->gpus, std::vector<int>{2});
}

TEST(BookingPlaceTest, AnyWholeGpusSkipDrainedAndMigCardsAndStayOnOneNode) {
  std::vector<Gpu> gpus = WithMig();  // 0 whole, 1 MIG
  gpus.push_back(Card(2));
  gpus[0].drained = true;
  BookingCheck c = Check(Spec(Whole(1), Tomorrow(14), Tomorrow(16)), {}, gpus);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(c.alloc->gpus, std::vector<int>{2});
  // Node 0: cards 0, 1; node 1: cards 2..5. Two cards go to the fuller node that still has room.
  std::vector<Gpu> nodes = {Card(0, k80G, 0), Card(1, k80G, 0), Card(0, k80G, 1),
                            Card(1, k80G, 1), Card(2, k80G, 1), Card(3, k80G, 1)};
  c = Check(Spec(Whole(2), Tomorrow(14), Tomorrow(16)), {Bob(1, {2}, Tomorrow(14), Tomorrow(16))}, nodes);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(c.alloc->gpus, (std::vector<int>{0, 1}));
  c = Check(Spec(Whole(2), Tomorrow(14), Tomorrow(16)), {Bob(1, {0}, Tomorrow(14), Tomorrow(16))}, nodes);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(c.alloc->gpus, (std::vector<int>{2, 3}));
  // Three free cards, but one on node 0 and two on node 1: no node has room, nothing is split.
  c = Check(Spec(Whole(3), Tomorrow(14), Tomorrow(16)),
            {Bob(1, {0}, Tomorrow(14), Tomorrow(16)), Bob(2, {2, 3}, Tomorrow(14), Tomorrow(16))}, nodes);
  EXPECT_FALSE(c.alloc.has_value());
  EXPECT_EQ(c.conflicts, (std::vector<std::int64_t>{1, 2}));
  // More cards than any node has: spread over the nodes.
  c = Check(Spec(Whole(5), Tomorrow(14), Tomorrow(16)), {Bob(1, {0}, Tomorrow(14), Tomorrow(16))}, nodes);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(c.alloc->gpus, (std::vector<int>{1, 2, 3, 4, 5}));
}

TEST(BookingPlaceTest, SharesPackBestFit) {
  std::vector<Gpu> gpus = Cards(2);
  BookingEntry big = Entry(1, Spec(Share(60 * 1024), Tomorrow(14), Tomorrow(16), "bob"), OnCards({0}, 60 * 1024));
  BookingCheck c = Check(Spec(Share(k20G), Tomorrow(14), Tomorrow(16)), {big}, gpus);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(*c.alloc, OnCards({0}, k20G));  // the tighter card: 20G left there, 80G on card 1
  EXPECT_DOUBLE_EQ(c.gpu_hours, 0.5);       // a quarter of the largest card for 2h
  c = Check(Spec(Share(30 * 1024), Tomorrow(14), Tomorrow(16)), {big}, gpus);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(*c.alloc, OnCards({1}, 30 * 1024));
  // Best fit, not first fit: the fuller card 1 although card 0 comes first.
  BookingEntry big_on_1 = big;
  big_on_1.alloc = OnCards({1}, 60 * 1024);
  c = Check(Spec(Share(k20G), Tomorrow(15), Tomorrow(17)), {big_on_1}, gpus);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(c.alloc->gpus, std::vector<int>{1});
  // Two 40G shares one after the other on card 0 leave 40G over the whole span.
  std::vector<BookingEntry> relay = {
      Entry(1, Spec(Share(k40G), Tomorrow(14), Tomorrow(15), "bob"), OnCards({0}, k40G)),
      Entry(2, Spec(Share(k40G), Tomorrow(15), Tomorrow(16), "carol"), OnCards({0}, k40G)),
      Entry(3, Spec(Share(k20G), Tomorrow(14), Tomorrow(16), "dave"), OnCards({1}, k20G))};
  c = Check(Spec(Share(k40G), Tomorrow(14), Tomorrow(16)), relay, gpus);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(c.alloc->gpus, std::vector<int>{0});
  // Overlapping at one instant they would not leave room: 50G does not fit card 0 (40G left).
  c = Check(Spec(Share(50 * 1024), Tomorrow(14), Tomorrow(16)), relay, gpus);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(c.alloc->gpus, std::vector<int>{1});
}

TEST(BookingPlaceTest, ShareAndWholeCardBookingConflict) {
  std::vector<Gpu> gpus = Cards(2);
  std::vector<BookingEntry> existing = {
      Bob(1, {1}, Tomorrow(14), Tomorrow(16)),
      Entry(2, Spec(Share(60 * 1024), Tomorrow(15), Tomorrow(17), "carol"), OnCards({0}, 60 * 1024))};
  // No share beside a whole-card booking; card 0 has 20G left.
  BookingCheck c = Check(Spec(Share(k40G), Tomorrow(14), Tomorrow(16)), existing, gpus);
  EXPECT_FALSE(c.alloc.has_value());
  EXPECT_EQ(c.conflicts, (std::vector<std::int64_t>{1, 2}));
  // A whole card on card 0 conflicts with the share there.
  c = Check(Spec(Whole(1), Tomorrow(14), Tomorrow(16), "alice", {0}), existing, gpus);
  EXPECT_FALSE(c.alloc.has_value());
  EXPECT_EQ(c.conflicts, std::vector<std::int64_t>{2});
  // Any whole card: both are taken over [14:00, 16:00).
  c = Check(Spec(Whole(1), Tomorrow(14), Tomorrow(16)), existing, gpus);
  EXPECT_FALSE(c.alloc.has_value());
  EXPECT_EQ(c.conflicts, (std::vector<std::int64_t>{1, 2}));
  // From 16:00 card 1 is free again.
  c = Check(Spec(Whole(1), Tomorrow(16), Tomorrow(18)), existing, gpus);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(c.alloc->gpus, std::vector<int>{1});
}

TEST(BookingPlaceTest, MigSlices) {
  std::vector<Gpu> gpus = WithMig();
  BookingCheck c = Check(Spec(Mig("3g.40gb"), Tomorrow(14), Tomorrow(16)), {}, gpus);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(*c.alloc, OnCards({1}, 0, 0));
  EXPECT_DOUBLE_EQ(c.gpu_hours, 1.0);  // half of an 80G card for 2h
  BookingEntry first = Entry(1, Spec(Mig("3g.40gb"), Tomorrow(13), Tomorrow(15), "bob"), OnCards({1}, 0, 0));
  BookingEntry small = Entry(2, Spec(Mig("1g.10gb"), Tomorrow(13), Tomorrow(15), "bob"), OnCards({1}, 0, 2));
  BookingEntry whole = Bob(3, {0}, Tomorrow(13), Tomorrow(15));
  c = Check(Spec(Mig("3g.40gb"), Tomorrow(14), Tomorrow(16)), {first, small, whole}, gpus);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(*c.alloc, OnCards({1}, 0, 1));
  // Both slices of the profile taken: only bookings on slices of that profile are in the way.
  BookingEntry second = Entry(4, Spec(Mig("3g.40gb"), Tomorrow(15), Tomorrow(16), "carol"), OnCards({1}, 0, 1));
  c = Check(Spec(Mig("3g.40gb"), Tomorrow(14), Tomorrow(16)), {first, small, whole, second}, gpus);
  EXPECT_FALSE(c.alloc.has_value());
  EXPECT_EQ(c.conflicts, (std::vector<std::int64_t>{1, 4}));
  EXPECT_DOUBLE_EQ(c.gpu_hours, 1.0);  // from the request when not placed
  // The 1g.10gb slice is its own unit.
  c = Check(Spec(Mig("1g.10gb"), Tomorrow(15), Tomorrow(16)), {first, small, whole, second}, gpus);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(*c.alloc, OnCards({1}, 0, 2));
}

TEST(BookingPlaceTest, NamedCardsAreCheckedNotChosen) {
  std::vector<Gpu> gpus = Pairs();
  std::vector<BookingEntry> existing = {Bob(1, {1}, Tomorrow(14), Tomorrow(15)),
                                        Bob(2, {2}, Tomorrow(15), Tomorrow(16)),
                                        Bob(3, {0}, Tomorrow(10), Tomorrow(12))};
  BookingCheck c = Check(Spec(Whole(2), Tomorrow(14), Tomorrow(16), "alice", {3, 0}), existing, gpus);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(c.alloc->gpus, (std::vector<int>{0, 3}));  // no NVLink between them, but asked for
  c = Check(Spec(Whole(2), Tomorrow(14), Tomorrow(16), "alice", {1, 2}), existing, gpus);
  EXPECT_FALSE(c.alloc.has_value());
  EXPECT_EQ(c.conflicts, (std::vector<std::int64_t>{1, 2}));
  c = Check(Spec(Whole(1), Tomorrow(11), Tomorrow(12), "alice", {0}), existing, gpus);
  EXPECT_FALSE(c.alloc.has_value());
  EXPECT_EQ(c.conflicts, std::vector<std::int64_t>{3});  // only the named card's bookings
  // A named share goes on its card even when another card would fit better.
  existing = {Entry(4, Spec(Share(60 * 1024), Tomorrow(14), Tomorrow(16), "bob"), OnCards({0}, 60 * 1024))};
  c = Check(Spec(Share(k20G), Tomorrow(14), Tomorrow(16), "alice", {2}), existing, gpus);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(*c.alloc, OnCards({2}, k20G));
  // A named MIG card: the first free slice of the profile there.
  c = Check(Spec(Mig("3g.40gb"), Tomorrow(14), Tomorrow(16), "alice", {1}),
            {Entry(5, Spec(Mig("3g.40gb"), Tomorrow(14), Tomorrow(16), "bob"), OnCards({1}, 0, 0))}, WithMig());
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(*c.alloc, OnCards({1}, 0, 1));
}

TEST(BookingConflictTest, OnlyOpenOverlappingBookingsAscending) {
  std::vector<Gpu> gpus = Cards(1);
  std::vector<BookingEntry> existing = {
      Bob(9, {0}, Tomorrow(15), Tomorrow(16), BookingState::kRequested),  // two requests for one slot conflict
      Bob(4, {0}, Tomorrow(14), Tomorrow(15), BookingState::kActive),
      Bob(5, {0}, Tomorrow(12), Tomorrow(14)),  // ends as this one starts
      Bob(6, {0}, Tomorrow(16), Tomorrow(18)),  // starts as this one ends
      Bob(7, {0}, Tomorrow(14), Tomorrow(16), BookingState::kCancelled),
      Bob(8, {0}, Tomorrow(14), Tomorrow(16), BookingState::kRejected),
      Bob(2, {0}, Tomorrow(13), Tomorrow(17), BookingState::kEnded),
  };
  BookingCheck c = Check(Spec(Whole(1), Tomorrow(14), Tomorrow(16)), existing, gpus);
  EXPECT_FALSE(c.alloc.has_value());
  EXPECT_EQ(c.conflicts, (std::vector<std::int64_t>{4, 9}));
  // Without the two open ones in the way it fits exactly between 5 and 6.
  existing.erase(existing.begin(), existing.begin() + 2);
  c = Check(Spec(Whole(1), Tomorrow(14), Tomorrow(16)), existing, gpus);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_TRUE(c.conflicts.empty());
  EXPECT_TRUE(c.alternatives.empty());
}

TEST(BookingConflictTest, BookingOnTwoCardsIsListedOnce) {
  BookingCheck c =
      Check(Spec(Whole(1), Tomorrow(14), Tomorrow(16)), {Bob(3, {0, 1}, Tomorrow(14), Tomorrow(16))}, Cards(2));
  EXPECT_EQ(c.conflicts, std::vector<std::int64_t>{3});
}

TEST(BookingConflictTest, UnplacedRequestClaimsItsNamedCards) {
  // A thesis request that could not be placed has no allocation; it still claims what it names.
  BookingEntry thesis = Entry(3, Spec(Whole(1), Tomorrow(14), Tomorrow(16), "bob", {1}), {}, BookingState::kRequested);
  BookingCheck c = Check(Spec(Whole(1), Tomorrow(15), Tomorrow(16), "alice", {1}), {thesis}, Cards(2));
  EXPECT_EQ(c.conflicts, std::vector<std::int64_t>{3});
  c = Check(Spec(Whole(1), Tomorrow(15), Tomorrow(16)), {thesis}, Cards(2));
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_EQ(c.alloc->gpus, std::vector<int>{0});
}

// ---- Alternatives -----------------------------------------------------------------------------

TEST(BookingAlternativesTest, NearestFirst) {
  BookingCheck c =
      Check(Spec(Whole(1), Tomorrow(14), Tomorrow(15)), {Bob(1, {0}, Tomorrow(14), Tomorrow(16))}, Cards(1));
  EXPECT_FALSE(c.alloc.has_value());
  EXPECT_EQ(c.conflicts, std::vector<std::int64_t>{1});
  // 13:00 is two slots away, 12:30 three, 16:00 four (14:30, 15:00, 15:30 and 13:30 overlap).
  EXPECT_EQ(c.alternatives, (std::vector<Time>{Tomorrow(13), Tomorrow(12, 30), Tomorrow(16)}));
}

TEST(BookingAlternativesTest, LaterBeforeEarlierAtEqualDistance) {
  BookingCheck c =
      Check(Spec(Whole(1), Tomorrow(14), Tomorrow(14, 30)), {Bob(1, {0}, Tomorrow(14), Tomorrow(14, 30))}, Cards(1));
  EXPECT_EQ(c.alternatives, (std::vector<Time>{Tomorrow(14, 30), Tomorrow(13, 30), Tomorrow(15)}));
}

TEST(BookingAlternativesTest, NeverInThePast) {
  const Time now = At(2026, 12, 1, 10, 10);
  BookingCheck c = Check(Spec(Whole(1), At(2026, 12, 1, 10, 30), At(2026, 12, 1, 11, 30)),
                         {Bob(1, {0}, At(2026, 12, 1, 10, 30), At(2026, 12, 1, 11, 30))}, Cards(1), {}, Lab(), now,
                         /*by_admin=*/true);
  EXPECT_TRUE(c.errors.empty());
  // 10:00 would be nearest but has passed; 11:00 overlaps.
  EXPECT_EQ(c.alternatives,
            (std::vector<Time>{At(2026, 12, 1, 11, 30), At(2026, 12, 1, 12, 0), At(2026, 12, 1, 12, 30)}));
}

TEST(BookingAlternativesTest, NeverBeyondMaxAhead) {
  BookingRules rules;
  rules.max_ahead = kDay;
  const Time last = kNow + kDay;  // Wednesday 10:00, the latest start
  BookingCheck c =
      Check(Spec(Whole(1), last, last + kHour), {Bob(1, {0}, last - kHour, last + 2 * kHour)}, Cards(1), rules);
  EXPECT_TRUE(c.errors.empty());
  EXPECT_EQ(c.alternatives, (std::vector<Time>{last - 2 * kHour, last - 2 * kHour - 30 * kMinute, last - 3 * kHour}));
}

TEST(BookingAlternativesTest, NoneWhenEverythingIsTaken) {
  BookingRules rules;
  rules.max_ahead = 2 * kDay;
  BookingCheck c =
      Check(Spec(Whole(1), Tomorrow(14), Tomorrow(15)), {Bob(1, {0}, kNow, kNow + 4 * kDay)}, Cards(1), rules);
  EXPECT_FALSE(c.alloc.has_value());
  EXPECT_EQ(c.conflicts, std::vector<std::int64_t>{1});
  EXPECT_TRUE(c.alternatives.empty());
}

TEST(BookingAlternativesTest, KeepTheRequestAndItsCards) {
  // Card 1 is free at 14:00, but the booking names card 0: the alternative is a time, not a card.
  std::vector<BookingEntry> existing = {Bob(1, {0}, Tomorrow(13), Tomorrow(16))};
  BookingCheck c = Check(Spec(Whole(1), Tomorrow(14), Tomorrow(15), "alice", {0}), existing, Cards(2));
  EXPECT_EQ(c.alternatives, (std::vector<Time>{Tomorrow(16), Tomorrow(12), Tomorrow(16, 30)}));
}

TEST(BookingAlternativesTest, FortnightOfSlotsWithManyBookings) {
  // Every card booked around the clock except one hour at the far end of the fortnight: the search
  // walks the whole window, thousands of checks, and finds the one free hour.
  std::vector<Gpu> gpus = Cards(8);
  std::vector<BookingEntry> existing;
  std::int64_t id = 1;
  const Time first = kNow + 30 * kMinute, last = kNow + 14 * kDay;
  const Time hole = last - 2 * kHour;
  for (int g = 0; g < 8; ++g) {
    for (Time t = first - kHour; t < last + kDay; t += 6 * kHour) {
      Time end = t + 6 * kHour;
      if (t < hole + kHour && hole < end && g == 5) {
        if (t < hole) existing.push_back(Bob(id++, {g}, t, hole));
        if (hole + kHour < end) existing.push_back(Bob(id++, {g}, hole + kHour, end));
        continue;
      }
      existing.push_back(Bob(id++, {g}, t, end));
    }
  }
  BookingCheck c = Check(Spec(Whole(1), Tomorrow(14), Tomorrow(15)), existing, gpus);
  EXPECT_FALSE(c.alloc.has_value());
  EXPECT_EQ(c.conflicts.size(), 8u);
  EXPECT_EQ(c.alternatives, std::vector<Time>{hole});
}

// ---- What needs an admin ----------------------------------------------------------------------

bool Mentions(const std::vector<std::string>& reasons, const std::string& what) {
  return std::any_of(reasons.begin(), reasons.end(), [&](const std::string& r) { return r.find(what) != r.npos; });
}

TEST(BookingAdminTest, SameDayInLocalTime) {
  const std::string kToday = "starts today: same-day bookings need an admin (book the day before)";
  // 23:00 local on Tuesday is 15:00 UTC Tuesday; 00:30 local Wednesday is still Tuesday in UTC,
  // but it is tomorrow for the lab.
  Time now = At(2026, 12, 1, 23, 0);
  BookingCheck c = Check(Spec(Whole(1), At(2026, 12, 2, 0, 30), At(2026, 12, 2, 1, 30)), {}, Cards(1), {}, Lab(), now);
  EXPECT_TRUE(c.needs_admin.empty());
  c = Check(Spec(Whole(1), At(2026, 12, 1, 23, 30), At(2026, 12, 2, 0, 30)), {}, Cards(1), {}, Lab(), now);
  EXPECT_EQ(c.needs_admin, std::vector<std::string>{kToday});
  // 07:00 local Wednesday is 23:00 UTC Tuesday; 09:00 local is Wednesday in UTC too: a new UTC day,
  // the same local day.
  now = At(2026, 12, 2, 7, 0);
  c = Check(Spec(Whole(1), At(2026, 12, 2, 9, 0), At(2026, 12, 2, 10, 0)), {}, Cards(1), {}, Lab(), now);
  EXPECT_EQ(c.needs_admin, std::vector<std::string>{kToday});
  BookingRules relaxed;
  relaxed.same_day_needs_admin = false;
  c = Check(Spec(Whole(1), At(2026, 12, 2, 9, 0), At(2026, 12, 2, 10, 0)), {}, Cards(1), relaxed, Lab(), now);
  EXPECT_TRUE(c.needs_admin.empty());
  // An admin books same-day freely.
  c = Check(Spec(Whole(1), At(2026, 12, 2, 9, 0), At(2026, 12, 2, 10, 0)), {}, Cards(1), {}, Lab(), now, true);
  EXPECT_TRUE(c.needs_admin.empty());
  EXPECT_TRUE(c.alloc.has_value());
}

TEST(BookingAdminTest, WeeklyCountInTheQuotaWeekOfTheStart) {
  BookingRules rules;
  rules.max_per_week = 2;
  std::vector<Gpu> gpus = Cards(4);
  auto mine = [](std::int64_t id, Time start, BookingState state) {
    return Entry(id, Spec(Whole(1), start, start + kHour), OnCards({1}), state);
  };
  std::vector<BookingEntry> existing = {
      mine(1, At(2026, 11, 30, 9, 0), BookingState::kEnded),       // Monday 09:00: this week
      mine(2, At(2026, 12, 3, 9, 0), BookingState::kCancelled),    // does not count
      mine(3, At(2026, 12, 7, 0, 0), BookingState::kConfirmed),    // next Monday 00:00: next week
      mine(4, At(2026, 11, 29, 23, 0), BookingState::kNoShow),     // Sunday 23:00: last week
      Bob(5, {2}, At(2026, 12, 3, 9, 0), At(2026, 12, 3, 10, 0)),  // someone else's
  };
  BookingCheck c = Check(Spec(Whole(1), Tomorrow(14), Tomorrow(15)), existing, gpus, rules);
  EXPECT_TRUE(c.needs_admin.empty());  // the second of this week
  existing.push_back(mine(6, At(2026, 12, 4, 9, 0), BookingState::kRequested));
  c = Check(Spec(Whole(1), Tomorrow(14), Tomorrow(15)), existing, gpus, rules);
  EXPECT_EQ(c.needs_admin, std::vector<std::string>{"over the weekly count: this would be alice's booking number 3 in "
                                                    "the week from 2026-11-30 (2 a week without an admin)"});
  // The same booking next Monday is the second of next week.
  c = Check(Spec(Whole(1), At(2026, 12, 7, 14, 0), At(2026, 12, 7, 15, 0)), existing, gpus, rules);
  EXPECT_TRUE(c.needs_admin.empty());
  // A week that starts on Sunday puts booking 4 (Sunday 23:00) in this week, and next Monday too.
  Policy sunday = Lab();
  sunday.quota.week_start_day = 6;
  c = Check(Spec(Whole(1), At(2026, 12, 5, 14, 0), At(2026, 12, 5, 15, 0)), existing, gpus, rules, sunday);
  EXPECT_TRUE(Mentions(c.needs_admin, "booking number 4 in the week from 2026-11-29"));
}

TEST(BookingAdminTest, WeeklyGpuHours) {
  BookingRules rules;
  rules.max_gpu_hours_per_week = 10;
  std::vector<Gpu> gpus = Cards(4);
  std::vector<BookingEntry> existing = {
      Entry(1, Spec(Whole(2), At(2026, 11, 30, 9, 0), At(2026, 11, 30, 12, 0)), OnCards({0, 1}),
            BookingState::kEnded),  // 6 GPU-hours
      Entry(2, Spec(Whole(1), At(2026, 12, 3, 9, 0), At(2026, 12, 3, 13, 0)), OnCards({0}),
            BookingState::kRejected),  // nothing
  };
  BookingEntry released = Entry(3, Spec(Whole(2), At(2026, 12, 1, 12, 0), At(2026, 12, 1, 16, 0)), OnCards({2, 3}),
                                BookingState::kReleased);
  released.actual_end = At(2026, 12, 1, 13, 0);  // 2 GPU-hours held, not 8
  existing.push_back(released);
  BookingCheck c = Check(Spec(Whole(1), Tomorrow(14), Tomorrow(16)), existing, gpus, rules);
  EXPECT_DOUBLE_EQ(c.gpu_hours, 2.0);
  EXPECT_TRUE(c.needs_admin.empty());  // exactly 10
  c = Check(Spec(Whole(1), Tomorrow(14), Tomorrow(16, 30)), existing, gpus, rules);
  EXPECT_EQ(c.needs_admin, std::vector<std::string>{"over the weekly hours: 10.5 GPU-hours booked in the week from "
                                                    "2026-11-30 with this one (10.0 without an admin)"});
}

TEST(BookingAdminTest, WeeklyHoursFallBackToTheUsersQuota) {
  Policy policy = Lab();
  policy.quota.role_hours = {{"master", 4}, {"phd", 40}};
  policy.quota.user_role = {{"alice", "master"}, {"bob", "phd"}};
  policy.quota.user_hours = {{"carol", 2.5}};
  std::vector<Gpu> gpus = Cards(4);
  BookingCheck c = Check(Spec(Whole(2), Tomorrow(14), Tomorrow(17)), {}, gpus, {}, policy);
  EXPECT_TRUE(Mentions(c.needs_admin, "over the weekly hours: 6.0 GPU-hours")) << c.needs_admin.size();
  EXPECT_TRUE(Mentions(c.needs_admin, "(4.0 without an admin)"));
  c = Check(Spec(Whole(2), Tomorrow(14), Tomorrow(17), "bob"), {}, gpus, {}, policy);
  EXPECT_TRUE(c.needs_admin.empty());
  c = Check(Spec(Whole(1), Tomorrow(14), Tomorrow(17), "carol"), {}, gpus, {}, policy);
  EXPECT_TRUE(Mentions(c.needs_admin, "(2.5 without an admin)"));
  // Users without role or override: the default, unlimited when negative.
  c = Check(Spec(Whole(4), Tomorrow(8), Tomorrow(20), "dave"), {}, gpus, {}, policy);
  EXPECT_TRUE(c.needs_admin.empty());
  policy.quota.default_hours = 1;
  c = Check(Spec(Whole(1), Tomorrow(14), Tomorrow(15), "dave"), {}, gpus, {}, policy);
  EXPECT_TRUE(c.needs_admin.empty());
  c = Check(Spec(Whole(1), Tomorrow(14), Tomorrow(15, 30), "dave"), {}, gpus, {}, policy);
  EXPECT_FALSE(c.needs_admin.empty());
  // An explicit allowance wins over the quota.
  BookingRules generous;
  generous.max_gpu_hours_per_week = 100;
  c = Check(Spec(Whole(2), Tomorrow(14), Tomorrow(17)), {}, gpus, generous, policy);
  EXPECT_TRUE(c.needs_admin.empty());
}

TEST(BookingAdminTest, ThesisOverAConflictNeedsAnAdmin) {
  std::vector<BookingEntry> existing = {Bob(7, {0}, Tomorrow(13), Tomorrow(15)),
                                        Bob(8, {0}, Tomorrow(15), Tomorrow(16))};
  BookingSpec spec = Spec(Whole(1), Tomorrow(14), Tomorrow(16));
  BookingCheck c = Check(spec, existing, Cards(1));
  EXPECT_FALSE(c.alloc.has_value());
  EXPECT_EQ(c.conflicts, (std::vector<std::int64_t>{7, 8}));
  EXPECT_TRUE(c.needs_admin.empty());  // not placeable, simply: take an alternative
  spec.tier = Tier::kThesis;
  c = Check(spec, existing, Cards(1));
  EXPECT_EQ(c.needs_admin,
            std::vector<std::string>{"a thesis booking over existing bookings (7, 8): an admin decides"});
  EXPECT_FALSE(c.alternatives.empty());
  // Without a conflict a thesis booking is confirmed like any other.
  c = Check(spec, {}, Cards(1));
  EXPECT_TRUE(c.needs_admin.empty());
}

TEST(BookingAdminTest, AutoConfirmOff) {
  BookingRules rules;
  rules.auto_confirm = false;
  BookingCheck c = Check(Spec(Whole(1), Tomorrow(14), Tomorrow(16)), {}, Cards(1), rules);
  EXPECT_EQ(c.needs_admin,
            std::vector<std::string>{"bookings are confirmed by an admin (automatic confirmation is off)"});
  EXPECT_TRUE(c.alloc.has_value());
}

TEST(BookingAdminTest, AdminBypassesEveryReasonButNotErrorsOrConflicts) {
  BookingRules rules;
  rules.auto_confirm = false;
  rules.max_per_week = 1;
  rules.max_gpu_hours_per_week = 1;
  BookingSpec spec = Spec(Whole(1), At(2026, 12, 1, 14, 0), At(2026, 12, 1, 16, 0));
  spec.tier = Tier::kThesis;
  std::vector<BookingEntry> existing = {
      Bob(1, {0}, At(2026, 12, 1, 15, 0), At(2026, 12, 1, 16, 0)),
      Entry(2, Spec(Whole(1), kNow - kDay, kNow - kDay + kHour), OnCards({0}), BookingState::kEnded)};
  BookingCheck c = Check(spec, existing, Cards(1), rules);
  EXPECT_EQ(c.needs_admin.size(), 5u);  // today, count, hours, thesis, auto_confirm
  c = Check(spec, existing, Cards(1), rules, Lab(), kNow, /*by_admin=*/true);
  EXPECT_TRUE(c.needs_admin.empty());
  EXPECT_EQ(c.conflicts, std::vector<std::int64_t>{1});
  spec.start = kNow - kHour;
  EXPECT_EQ(Check(spec, existing, Cards(1), rules, Lab(), kNow, true).errors.size(), 1u);
}

TEST(BookingAdminTest, IgnoreMovesOrExtendsOnesOwnBooking) {
  BookingRules rules;
  rules.max_per_week = 1;
  std::vector<BookingEntry> existing = {Entry(4, Spec(Whole(1), Tomorrow(14), Tomorrow(16)), OnCards({0}))};
  // Extending 14:00-16:00 to 18:00 overlaps only the booking itself.
  BookingSpec longer = Spec(Whole(1), Tomorrow(14), Tomorrow(18));
  BookingCheck c = Check(longer, existing, Cards(1), rules);
  EXPECT_EQ(c.conflicts, std::vector<std::int64_t>{4});
  EXPECT_TRUE(Mentions(c.needs_admin, "booking number 2"));
  c = Check(longer, existing, Cards(1), rules, Lab(), kNow, false, /*ignore=*/4);
  ASSERT_TRUE(c.alloc.has_value());
  EXPECT_TRUE(c.conflicts.empty());
  EXPECT_TRUE(c.needs_admin.empty());  // still one booking this week
  EXPECT_EQ(c.alloc->gpus, std::vector<int>{0});
}

// ---- Placement against a brute-force reference ------------------------------------------------

TEST(BookingPlaceTest, RandomCalendarsAgreeWithBruteForce) {
  std::mt19937 rng(20261201);
  const std::vector<Gpu> gpus = Cards(3);
  const Time day = Tomorrow(0);
  for (int round = 0; round < 300; ++round) {
    std::vector<BookingEntry> existing;
    int n = std::uniform_int_distribution<int>(0, 8)(rng);
    for (int i = 0; i < n; ++i) {
      Time s = day + std::uniform_int_distribution<int>(0, 16)(rng) * 30 * kMinute;
      Time e = s + std::uniform_int_distribution<int>(1, 6)(rng) * 30 * kMinute;
      int card = std::uniform_int_distribution<int>(0, 2)(rng);
      if (rng() % 2) {
        existing.push_back(Bob(i + 1, {card}, s, e));
      } else {
        MiB m = std::uniform_int_distribution<int>(1, 4)(rng) * k20G;
        existing.push_back(Entry(i + 1, Spec(Share(m), s, e, "bob"), OnCards({card}, m)));
      }
    }
    Time s = day + std::uniform_int_distribution<int>(0, 16)(rng) * 30 * kMinute;
    Time e = s + std::uniform_int_distribution<int>(1, 6)(rng) * 30 * kMinute;
    bool share = rng() % 2;
    MiB m = std::uniform_int_distribution<int>(1, 4)(rng) * k20G;
    // Brute force: memory held on each card at each minute of [s, e).
    auto fits = [&](int card) {
      for (Time t = s; t < e; t += kMinute) {
        MiB held = 0;
        for (const BookingEntry& b : existing) {
          if (b.alloc.gpus[0] != card || t < b.spec.start || t >= b.spec.end) continue;
          held += b.alloc.memory > 0 ? b.alloc.memory : k80G;
          if (!share || b.alloc.memory == 0) held = k80G + 1;  // nothing beside a whole card
        }
        if (held + (share ? m : k80G) > k80G) return false;
      }
      return true;
    };
    BookingCheck c = Check(Spec(share ? Share(m) : Whole(1), s, e), existing, gpus);
    bool any = fits(0) || fits(1) || fits(2);
    ASSERT_EQ(c.alloc.has_value(), any) << "round " << round;
    if (c.alloc) {
      ASSERT_TRUE(fits(c.alloc->gpus[0])) << "round " << round;
    } else {
      ASSERT_FALSE(c.conflicts.empty()) << "round " << round;
    }
  }
}

// ---- Life of a booking ------------------------------------------------------------------------

BookingEntry Mine(BookingState state = BookingState::kConfirmed) {
  BookingEntry b = Entry(1, Spec(Whole(1), Tomorrow(14), Tomorrow(16)), OnCards({0}), state);
  return b;
}

using Seen = std::unordered_map<std::int64_t, BookingObservation>;

Seen Running(bool others_waiting = false) { return {{1, {true, others_waiting}}}; }

TEST(BookingStepTest, WholeLife) {
  BookingRules rules;
  BookingEntry b = Mine();
  BookingStep st = StepBookings({b}, {}, rules, Tomorrow(13));
  EXPECT_TRUE(st.transitions.empty());
  EXPECT_EQ(st.next_wakeup, Tomorrow(14));

  st = StepBookings({b}, {}, rules, Tomorrow(14));
  ASSERT_EQ(st.transitions.size(), 1u);
  EXPECT_EQ(st.transitions[0].id, 1);
  EXPECT_EQ(st.transitions[0].from, BookingState::kConfirmed);
  EXPECT_EQ(st.transitions[0].to, BookingState::kActive);
  EXPECT_EQ(st.transitions[0].reason, "Started");
  EXPECT_EQ(st.next_wakeup, Tomorrow(14, 15));  // the no-show grace
  b.state = BookingState::kActive;

  st = StepBookings({b}, Running(), rules, Tomorrow(14, 5));
  EXPECT_TRUE(st.transitions.empty());
  EXPECT_EQ(st.mark_used, std::vector<std::int64_t>{1});
  EXPECT_EQ(st.next_wakeup, Tomorrow(15, 50));  // grace no longer matters: the reminder
  b.used = true;

  st = StepBookings({b}, Running(), rules, Tomorrow(14, 30));
  EXPECT_TRUE(st.mark_used.empty());  // already marked
  EXPECT_TRUE(st.transitions.empty());

  // Used, not running now, past the grace: not a no-show.
  st = StepBookings({b}, {}, rules, Tomorrow(15));
  EXPECT_TRUE(st.transitions.empty());
  EXPECT_EQ(st.next_wakeup, Tomorrow(15, 50));

  st = StepBookings({b}, Running(), rules, Tomorrow(15, 50));
  EXPECT_EQ(st.reminders, std::vector<std::int64_t>{1});
  EXPECT_TRUE(st.transitions.empty());
  EXPECT_EQ(st.next_wakeup, Tomorrow(16));
  b.reminded = true;

  st = StepBookings({b}, Running(), rules, Tomorrow(15, 55));
  EXPECT_TRUE(st.reminders.empty());
  EXPECT_EQ(st.next_wakeup, Tomorrow(16));

  st = StepBookings({b}, {}, rules, Tomorrow(16));
  ASSERT_EQ(st.transitions.size(), 1u);
  EXPECT_EQ(st.transitions[0].to, BookingState::kEnded);
  EXPECT_EQ(st.transitions[0].reason, "Ended");
  EXPECT_EQ(st.next_wakeup, kNever);
}

TEST(BookingStepTest, NoShow) {
  BookingRules rules;
  BookingEntry b = Mine(BookingState::kActive);
  BookingStep st = StepBookings({b}, {}, rules, Tomorrow(14, 14));
  EXPECT_TRUE(st.transitions.empty());
  EXPECT_EQ(st.next_wakeup, Tomorrow(14, 15));
  st = StepBookings({b}, {}, rules, Tomorrow(14, 15));
  ASSERT_EQ(st.transitions.size(), 1u);
  EXPECT_EQ(st.transitions[0].from, BookingState::kActive);
  EXPECT_EQ(st.transitions[0].to, BookingState::kNoShow);
  EXPECT_EQ(st.transitions[0].reason, "No-show: nothing of alice's ran within 15m");
  EXPECT_EQ(st.next_wakeup, kNever);
  // Work that starts just in time saves it.
  st = StepBookings({b}, Running(), rules, Tomorrow(14, 15));
  EXPECT_TRUE(st.transitions.empty());
  EXPECT_EQ(st.mark_used, std::vector<std::int64_t>{1});
}

TEST(BookingStepTest, LateStepStartsAndJudgesAtOnce) {
  // The daemon was down over the start and the grace: started, then a no-show, in that order.
  BookingStep st = StepBookings({Mine()}, {}, BookingRules{}, Tomorrow(14, 40));
  ASSERT_EQ(st.transitions.size(), 2u);
  EXPECT_EQ(st.transitions[0].to, BookingState::kActive);
  EXPECT_EQ(st.transitions[1].from, BookingState::kActive);
  EXPECT_EQ(st.transitions[1].to, BookingState::kNoShow);
  // Down until after the end while the owner's work ran: started and ended with a reminder owed
  // to nobody.
  BookingEntry b = Mine();
  b.used = true;
  st = StepBookings({b}, {}, BookingRules{}, Tomorrow(17));
  ASSERT_EQ(st.transitions.size(), 2u);
  EXPECT_EQ(st.transitions[1].to, BookingState::kEnded);
  EXPECT_TRUE(st.reminders.empty());
}

TEST(BookingStepTest, OverrunWhileOthersWait) {
  BookingEntry b = Mine(BookingState::kActive);
  b.used = b.reminded = true;
  BookingStep st = StepBookings({b}, Running(/*others_waiting=*/true), BookingRules{}, Tomorrow(16));
  ASSERT_EQ(st.transitions.size(), 1u);
  EXPECT_EQ(st.transitions[0].to, BookingState::kOverrun);
  EXPECT_EQ(st.transitions[0].reason, "Overrun: alice's work outlived the booking and others wait");
  EXPECT_EQ(st.stop_owner_jobs, std::vector<std::int64_t>{1});
  EXPECT_EQ(st.next_wakeup, kNever);
}

TEST(BookingStepTest, ExtendedWhileNobodyWaits) {
  BookingRules rules;
  BookingEntry b = Mine(BookingState::kActive);
  b.used = b.reminded = true;
  BookingStep st = StepBookings({b}, Running(), rules, Tomorrow(16));
  EXPECT_TRUE(st.transitions.empty());
  EXPECT_TRUE(st.stop_owner_jobs.empty());
  EXPECT_EQ(st.next_wakeup, Tomorrow(16, 30));  // looked at again after one slot
  st = StepBookings({b}, Running(), rules, Tomorrow(16, 40));
  EXPECT_TRUE(st.transitions.empty());
  EXPECT_EQ(st.next_wakeup, Tomorrow(17, 10));
  // Then someone waits: overrun.
  st = StepBookings({b}, Running(true), rules, Tomorrow(16, 50));
  ASSERT_EQ(st.transitions.size(), 1u);
  EXPECT_EQ(st.transitions[0].to, BookingState::kOverrun);
  // Or the work ends: ended.
  st = StepBookings({b}, {}, rules, Tomorrow(16, 50));
  ASSERT_EQ(st.transitions.size(), 1u);
  EXPECT_EQ(st.transitions[0].to, BookingState::kEnded);
  // Never reminded (the step came late): reminded now, as it goes on past its end.
  b.reminded = false;
  st = StepBookings({b}, Running(), rules, Tomorrow(16, 10));
  EXPECT_EQ(st.reminders, std::vector<std::int64_t>{1});
  EXPECT_EQ(st.next_wakeup, Tomorrow(16, 40));
}

TEST(BookingStepTest, RequestedLapsesAtItsStart) {
  BookingEntry b = Mine(BookingState::kRequested);
  BookingStep st = StepBookings({b}, {}, BookingRules{}, Tomorrow(13, 59));
  EXPECT_TRUE(st.transitions.empty());
  EXPECT_EQ(st.next_wakeup, Tomorrow(14));
  st = StepBookings({b}, Running(), BookingRules{}, Tomorrow(14));
  ASSERT_EQ(st.transitions.size(), 1u);
  EXPECT_EQ(st.transitions[0].from, BookingState::kRequested);
  EXPECT_EQ(st.transitions[0].to, BookingState::kRejected);
  EXPECT_EQ(st.transitions[0].reason, "Not approved before its start");
  EXPECT_TRUE(st.mark_used.empty());
}

TEST(BookingStepTest, NextWakeupIsTheEarliestAndAlwaysAhead) {
  BookingRules rules;
  BookingEntry a = Mine();  // 14:00-16:00
  BookingEntry b = Entry(2, Spec(Whole(1), Tomorrow(12), Tomorrow(13)), OnCards({1}), BookingState::kActive);
  b.used = true;
  BookingEntry closed = Entry(3, Spec(Whole(1), Tomorrow(10), Tomorrow(11)), OnCards({1}), BookingState::kEnded);
  BookingStep st = StepBookings({a, b, closed}, {}, rules, Tomorrow(12, 30));
  EXPECT_TRUE(st.transitions.empty());
  EXPECT_EQ(st.next_wakeup, Tomorrow(12, 50));  // b's reminder
  // Walk a day minute by minute applying every step: each wakeup lies ahead, and nothing due is
  // ever skipped (each transition happens at the first step at or after its time).
  std::vector<BookingEntry> books = {a, b};
  Seen seen = {{1, {true, false}}};
  Time t = Tomorrow(11);
  int steps = 0;
  while (t < Tomorrow(20) && steps < 100) {
    BookingStep s = StepBookings(books, seen, rules, t);
    for (const BookingTransition& tr : s.transitions) {
      for (BookingEntry& e : books) {
        if (e.id == tr.id) e.state = tr.to;
      }
    }
    for (std::int64_t id : s.reminders) books[id - 1].reminded = true;
    for (std::int64_t id : s.mark_used) books[id - 1].used = true;
    ASSERT_GT(s.next_wakeup, t);
    if (s.next_wakeup == kNever) break;
    t = s.next_wakeup;
    ++steps;
  }
  EXPECT_EQ(books[0].state, BookingState::kActive);  // alice's work runs on, nobody waits
  EXPECT_TRUE(books[0].reminded);
  EXPECT_EQ(books[1].state, BookingState::kEnded);
  EXPECT_TRUE(books[1].reminded);
}

// ---- Accounting -------------------------------------------------------------------------------

TEST(BookingHoursTest, HeldGpuHoursByState) {
  std::vector<Gpu> gpus = Cards(2);
  BookingEntry b = Entry(1, Spec(Whole(2), Tomorrow(14), Tomorrow(16)), OnCards({0, 1}));
  for (BookingState s : {BookingState::kRequested, BookingState::kConfirmed, BookingState::kActive,
                         BookingState::kEnded, BookingState::kOverrun}) {
    b.state = s;
    EXPECT_DOUBLE_EQ(HeldGpuHours(b, gpus), 4.0) << BookingStateName(s);
  }
  b.state = BookingState::kReleased;
  b.actual_end = Tomorrow(15);
  EXPECT_DOUBLE_EQ(HeldGpuHours(b, gpus), 2.0);
  b.actual_end = Tomorrow(17);  // released after an extension: the span at most
  EXPECT_DOUBLE_EQ(HeldGpuHours(b, gpus), 4.0);
  b.state = BookingState::kNoShow;
  b.actual_end = Tomorrow(14, 15);
  EXPECT_DOUBLE_EQ(HeldGpuHours(b, gpus), 0.5);
  b.state = BookingState::kRejected;
  EXPECT_DOUBLE_EQ(HeldGpuHours(b, gpus), 0.0);
  b.state = BookingState::kCancelled;
  EXPECT_DOUBLE_EQ(HeldGpuHours(b, gpus), 0.0);
}

TEST(BookingHoursTest, SharesAndSlicesCountTheirFraction) {
  std::vector<Gpu> gpus = WithMig();
  gpus.push_back(Card(2, k40G));
  // A 20G share counts a quarter of the largest card (80G), on the 40G card too.
  BookingEntry share = Entry(1, Spec(Share(k20G), Tomorrow(14), Tomorrow(18)), OnCards({2}, k20G));
  EXPECT_DOUBLE_EQ(HeldGpuHours(share, gpus), 1.0);
  BookingEntry slice = Entry(2, Spec(Mig("1g.10gb"), Tomorrow(14), Tomorrow(18)), OnCards({1}, 0, 2));
  EXPECT_DOUBLE_EQ(HeldGpuHours(slice, gpus), 0.5);  // 10G of an 80G card for 4h
}

BookingEntry Strike(std::int64_t id, BookingState state, Time actual_end, std::string user = "alice") {
  BookingEntry b = Entry(id, Spec(Whole(1), actual_end - kHour, actual_end, std::move(user)), OnCards({0}), state);
  b.actual_end = actual_end;
  return b;
}

TEST(BookingPenaltyTest, DecaysWithTheHalfLife) {
  BookingRules rules;  // 0.25 a strike, halved every 7 days
  std::vector<BookingEntry> books = {Strike(1, BookingState::kNoShow, kNow)};
  EXPECT_DOUBLE_EQ(BookingPenalty(books, "alice", rules, kNow), 0.25);
  EXPECT_DOUBLE_EQ(BookingPenalty(books, "alice", rules, kNow + 7 * kDay), 0.125);
  EXPECT_DOUBLE_EQ(BookingPenalty(books, "alice", rules, kNow + 14 * kDay), 0.0625);
  EXPECT_NEAR(BookingPenalty(books, "alice", rules, kNow + 3 * kDay + 12 * kHour), 0.25 / std::sqrt(2.0), 1e-12);
  // An overrun counts the same; ended, released and other users' bookings do not; nor a strike
  // that (by the caller's clock) has not happened yet.
  books.push_back(Strike(2, BookingState::kOverrun, kNow));
  books.push_back(Strike(3, BookingState::kEnded, kNow));
  books.push_back(Strike(4, BookingState::kReleased, kNow));
  books.push_back(Strike(5, BookingState::kNoShow, kNow, "bob"));
  books.push_back(Strike(6, BookingState::kNoShow, kNow + kHour));
  EXPECT_DOUBLE_EQ(BookingPenalty(books, "alice", rules, kNow), 0.5);
  EXPECT_DOUBLE_EQ(BookingPenalty(books, "bob", rules, kNow), 0.25);
  EXPECT_DOUBLE_EQ(BookingPenalty(books, "carol", rules, kNow), 0.0);
}

TEST(BookingPenaltyTest, ClampedToOne) {
  std::vector<BookingEntry> books;
  for (int i = 1; i <= 6; ++i) books.push_back(Strike(i, BookingState::kNoShow, kNow - i * kHour));
  EXPECT_DOUBLE_EQ(BookingPenalty(books, "alice", BookingRules{}, kNow), 1.0);
  BookingRules steep;
  steep.penalty_step = -1;  // a misconfiguration does not make the penalty a bonus
  EXPECT_DOUBLE_EQ(BookingPenalty(books, "alice", steep, kNow), 0.0);
}

TEST(BookingStrikesTest, CountsWithinTheWindow) {
  BookingRules rules;  // 30 days
  std::vector<BookingEntry> books = {
      Strike(1, BookingState::kNoShow, kNow - 30 * kDay),       // just outside
      Strike(2, BookingState::kOverrun, kNow - 30 * kDay + 1),  // just inside
      Strike(3, BookingState::kNoShow, kNow),                   // now counts
      Strike(4, BookingState::kNoShow, kNow + 1),               // not yet
      Strike(5, BookingState::kEnded, kNow - kDay),
      Strike(6, BookingState::kNoShow, kNow - kDay, "bob"),
  };
  EXPECT_EQ(BookingStrikes(books, "alice", rules, kNow), 2);
  EXPECT_EQ(BookingStrikes(books, "bob", rules, kNow), 1);
  EXPECT_EQ(BookingStrikes(books, "alice", rules, kNow + 1), 2);  // 2 leaves as 4 comes
  rules.penalty_window = kDay;
  EXPECT_EQ(BookingStrikes(books, "alice", rules, kNow), 1);
}

TEST(BookingHoldsTest, ConfirmedAndActiveHoldTheirSpan) {
  BookingRules rules;
  std::vector<BookingEntry> books = {
      Entry(1, Spec(Whole(2), Tomorrow(14), Tomorrow(16)), OnCards({0, 1}), BookingState::kConfirmed),
      Entry(2, Spec(Share(k20G), Tomorrow(10), Tomorrow(12), "bob"), OnCards({2}, k20G), BookingState::kActive),
      Entry(3, Spec(Whole(1), Tomorrow(14), Tomorrow(16)), OnCards({3}), BookingState::kRequested),
      Entry(4, Spec(Whole(1), Tomorrow(8), Tomorrow(9)), OnCards({3}), BookingState::kEnded),
      Entry(5, Spec(Whole(1), Tomorrow(9), Tomorrow(10)), OnCards({3}), BookingState::kCancelled),
  };
  std::vector<Booking> holds = BookingHolds(books, rules, Tomorrow(11));
  ASSERT_EQ(holds.size(), 2u);
  EXPECT_EQ(holds[0].id, 1);
  EXPECT_EQ(holds[0].user, "alice");
  EXPECT_EQ(holds[0].alloc, OnCards({0, 1}));
  EXPECT_EQ(holds[0].start, Tomorrow(14));
  EXPECT_EQ(holds[0].end, Tomorrow(16));
  EXPECT_EQ(holds[1].id, 2);
  EXPECT_EQ(holds[1].alloc, OnCards({2}, k20G));
  EXPECT_EQ(holds[1].end, Tomorrow(12));
}

TEST(BookingHoldsTest, ExtendedBookingHoldsOneSlotAhead) {
  BookingRules rules;
  std::vector<BookingEntry> books = {
      Entry(2, Spec(Share(k20G), Tomorrow(10), Tomorrow(12), "bob"), OnCards({2}, k20G), BookingState::kActive)};
  std::vector<Booking> holds = BookingHolds(books, rules, Tomorrow(12));
  ASSERT_EQ(holds.size(), 1u);
  EXPECT_EQ(holds[0].start, Tomorrow(10));
  EXPECT_EQ(holds[0].end, Tomorrow(12, 30));
  rules.slot = kHour;
  holds = BookingHolds(books, rules, Tomorrow(13, 10));
  EXPECT_EQ(holds[0].end, Tomorrow(14, 10));
}

TEST(AddBookingsToStateTest, HoldsAndPenaltiesForTheNextPass) {
  BookingRules rules;  // 0.25 a strike, halved every 7 days
  std::vector<BookingEntry> books = {
      Entry(1, Spec(Whole(2), Tomorrow(14), Tomorrow(16)), OnCards({0, 1}), BookingState::kConfirmed),
      Strike(2, BookingState::kNoShow, kNow),
      Strike(3, BookingState::kOverrun, kNow),
      Strike(4, BookingState::kNoShow, kNow, "bob"),
      Strike(5, BookingState::kEnded, kNow, "carol"),
      Strike(6, BookingState::kNoShow, kNow - 7 * kDay, "dave"),
  };
  ClusterState st;
  st.penalty["erin"] = 0.5;  // a user with no strike keeps what the state had
  st.penalty["dave"] = 0.9;  // a struck one gets the penalty as it is now
  AddBookingsToState(st, books, rules, kNow);
  ASSERT_EQ(st.bookings.size(), 1u);
  EXPECT_EQ(st.bookings[0].id, 1);
  EXPECT_DOUBLE_EQ(st.penalty.at("alice"), 0.5);  // a no-show and an overrun
  EXPECT_DOUBLE_EQ(st.penalty.at("bob"), 0.25);
  EXPECT_EQ(st.penalty.count("carol"), 0u);       // an ended booking is no strike
  EXPECT_DOUBLE_EQ(st.penalty.at("dave"), 0.125);  // halved after a week
  EXPECT_DOUBLE_EQ(st.penalty.at("erin"), 0.5);
  // Clamped to one, as the scheduler expects.
  for (int i = 7; i < 13; ++i) books.push_back(Strike(i, BookingState::kNoShow, kNow));
  AddBookingsToState(st, books, rules, kNow);
  EXPECT_DOUBLE_EQ(st.penalty.at("alice"), 1.0);
}

}  // namespace
}  // namespace booking_test
}  // namespace rota

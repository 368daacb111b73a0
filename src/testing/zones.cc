#include "testing/zones.h"

#include "core/civil_date.h"

namespace rota::testing {

Time Utc(std::int64_t year, int month, int day, int hour, int minute) {
  return DaysFromCivil(year, month, day) * kDay + hour * kHour + minute * kMinute;
}

Zone Berlin() {
  constexpr int kCet = kHour, kCest = 2 * kHour;
  return Zone("Europe/Berlin", kCet,
              {{Utc(2025, 3, 30, 1), kCest}, {Utc(2025, 10, 26, 1), kCet},
               {Utc(2026, 3, 29, 1), kCest}, {Utc(2026, 10, 25, 1), kCet},
               {Utc(2027, 3, 28, 1), kCest}, {Utc(2027, 10, 31, 1), kCet},
               {Utc(2028, 3, 26, 1), kCest}, {Utc(2028, 10, 29, 1), kCet}});
}

Zone NewYork() {
  constexpr int kEst = -5 * kHour, kEdt = -4 * kHour;
  return Zone("America/New_York", kEst,
              {{Utc(2025, 3, 9, 7), kEdt}, {Utc(2025, 11, 2, 6), kEst},
               {Utc(2026, 3, 8, 7), kEdt}, {Utc(2026, 11, 1, 6), kEst},
               {Utc(2027, 3, 14, 7), kEdt}, {Utc(2027, 11, 7, 6), kEst},
               {Utc(2028, 3, 12, 7), kEdt}, {Utc(2028, 11, 5, 6), kEst}});
}

}  // namespace rota::testing

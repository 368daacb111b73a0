// Tested by civil_date_test.cc.
#include "core/civil_date.h"

#include <array>
#include <cstddef>
#include <cstdio>

namespace rota {

std::int64_t DaysFromCivil(std::int64_t year, int month, int day) {
  const std::int64_t y = year - (month <= 2 ? 1 : 0);
  const std::int64_t era = FloorDiv(y, 400);
  const std::int64_t yoe = y - era * 400;                                             // [0, 399]
  const std::int64_t doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;  // [0, 365]
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;                     // [0, 146096]
  return era * 146097 + doe - 719468;
}

CivilDate CivilFromDays(std::int64_t days) {
  const std::int64_t z = days + 719468;
  const std::int64_t era = FloorDiv(z, 146097);
  const std::int64_t doe = z - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  CivilDate c;
  c.day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  c.month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  c.year = yoe + era * 400 + (c.month <= 2 ? 1 : 0);
  return c;
}

int DaysInMonth(std::int64_t year, int month) {
  static constexpr std::array<int, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
  if (month == 2 && leap) return 29;
  return kDays[static_cast<std::size_t>(month - 1)];
}

std::string FormatLocal(Time t, const Zone& zone) {
  const std::int64_t local = zone.ToLocal(t);
  const std::int64_t day = FloorDiv(local, kDay);
  const std::int64_t secs = local - day * kDay;
  const CivilDate c = CivilFromDays(day);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04lld-%02d-%02d %02lld:%02lld", static_cast<long long>(c.year), c.month,
                c.day, static_cast<long long>(secs / kHour), static_cast<long long>(secs % kHour / kMinute));
  return buf;
}

std::string FormatLocalDate(Time t, const Zone& zone) { return FormatLocal(t, zone).substr(0, 10); }

}  // namespace rota

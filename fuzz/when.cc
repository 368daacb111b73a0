// Fuzz target: times as people type them (api/when.h: ParseWhen, ParseSince, ParseWeek), in a
// zone with daylight saving and without, at a `now` the input picks. Properties: no crash; a
// refusal says why; --since is never after now; a week starts on a Monday at 00:00 local time
// and is read as the same week again from its own start.
#include "api/when.h"
#include "core/civil_date.h"
#include "fuzz/fuzz.h"
#include "testing/zones.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rota;
  std::string_view text = fuzz::Text(data, size);
  const unsigned char pick = fuzz::TakeByte(text);
  const Zone zones[] = {Zone(), testing::Berlin(), testing::NewYork(), Zone(8 * kHour), Zone(-(9 * kHour + 30 * kMinute))};
  const Zone& zone = zones[pick % 5];
  // 2025-01-01 plus up to about four years, by the hour and the odd second.
  Time now = testing::Utc(2025, 1, 1, 0);
  for (int i = 0; i < 2; ++i) now += static_cast<Time>(fuzz::TakeByte(text)) * (i == 0 ? 6 * kDay : 37 * kMinute + 1);

  const StatusOr<Time> when = api::ParseWhen(text, now, zone, pick & 0x80 ? now : 0);
  fuzz::Require(when.ok() || !when.status().message().empty(), "a refused time says why");

  const StatusOr<Time> since = api::ParseSince(text, now, zone);
  fuzz::Require(since.ok() || !since.status().message().empty(), "a refused --since says why");
  if (since.ok()) fuzz::Require(*since <= now, "--since read as after now");

  const StatusOr<Time> week = api::ParseWeek(text, now, zone);
  fuzz::Require(week.ok() || !week.status().message().empty(), "a refused week says why");
  if (week.ok()) {
    const std::int64_t local = zone.ToLocal(*week);
    const std::int64_t day = local >= 0 ? local / kDay : (local - kDay + 1) / kDay;  // floor
    fuzz::Require(local == day * kDay, "a week starts at 00:00 local: " + FormatLocal(*week, zone));
    // 1970-01-01 was a Thursday: Monday is day 4 modulo 7.
    fuzz::Require((day % 7 + 7) % 7 == 4, "a week starts on a Monday: " + FormatLocal(*week, zone));
    const StatusOr<Time> again = api::ParseWeek(FormatLocalDate(*week, zone), now, zone);
    fuzz::Require(again.ok() && *again == *week, "a week's first day names the same week");
  }
  return 0;
}

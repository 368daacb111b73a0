// Zones with daylight saving for the core's tests, written out by hand from the tz database's
// rules (config/tzdb_test.cc checks that the adapter reads the same transitions from the real
// files), so that core tests read no file. Instants are built with Utc().
#pragma once

#include "core/types.h"
#include "core/zone.h"

namespace rota::testing {

// The instant of a UTC date and time.
Time Utc(std::int64_t year, int month, int day, int hour, int minute = 0);

// Europe/Berlin, 2025 to 2028: CET (+01:00), CEST (+02:00) from the last Sunday of March 01:00
// UTC to the last Sunday of October 01:00 UTC. In 2026: 29 March and 25 October.
Zone Berlin();
// America/New_York, 2025 to 2028: EST (-05:00), EDT (-04:00) from the second Sunday of March
// 02:00 local to the first Sunday of November 02:00 local. In 2026: 8 March and 1 November.
Zone NewYork();

}  // namespace rota::testing

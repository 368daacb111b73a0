// Tests of the tz database adapter: the machine's real database (tzdata, which make deps
// installs) read into Zones that agree with the C library's own reading of the same files, and
// TZif bytes and rules that are broken or hostile.
#include "config/tzdb.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "core/civil_date.h"
#include "testing/scoped_tz.h"
#include "testing/zones.h"

namespace rota::config {
namespace tzdb_test {
namespace {

constexpr int kHourS = 3600;

Time Utc(std::int64_t y, int mo, int d, int h, int mi = 0) {
  return DaysFromCivil(y, mo, d) * kDay + h * kHourS + mi * 60;
}

using ::rota::testing::ScopedTz;

// The C library's offset at `t` under the $TZ in force.
int LibcOffset(Time t) {
  const std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  return static_cast<int>(tm.tm_gmtoff);
}

// Every instant where either reading changes, and a day apart in between, from 1970 to 2099:
// the Zone and the C library agree on the offset at each.
void ExpectAgreesWithLibc(const std::string& name) {
  SCOPED_TRACE(name);
  StatusOr<Zone> zone = LoadZone(name);
  ASSERT_TRUE(zone.ok()) << zone.status().message();
  EXPECT_EQ(zone->name(), name);
  ScopedTz tz((":" + name).c_str());
  std::vector<Time> probes;
  for (Time t = 0; t < Utc(2099, 12, 31, 0); t += kDay + 17) probes.push_back(t);
  for (const Zone::Transition& x : zone->TransitionsIn(0, Utc(2100, 1, 1, 0))) {
    for (Time d : {-kHourS, -1, 0, 1, kHourS}) probes.push_back(x.at + d);
  }
  int disagreements = 0;
  for (Time t : probes) {
    if (zone->OffsetAt(t) != LibcOffset(t) && ++disagreements <= 5) {
      ADD_FAILURE() << "at " << t << " (" << FormatLocal(t, Zone()) << " UTC): zone " << zone->OffsetAt(t)
                    << ", C library " << LibcOffset(t);
    }
  }
  EXPECT_EQ(disagreements, 0);
}

TEST(TzdbTest, ZonesAgreeWithTheCLibraryFrom1970To2099) {
  // Both hemispheres, half hours, a zone whose daylight saving is negative in the data (Dublin),
  // one that gave it up (Shanghai, since 1991), and one with many irregular changes (Casablanca).
  for (const char* name : {"Europe/Berlin", "America/New_York", "Asia/Shanghai", "Australia/Sydney",
                           "Asia/Kolkata", "America/Sao_Paulo", "Pacific/Chatham", "Europe/Dublin",
                           "Africa/Casablanca", "Asia/Tehran", "UTC"}) {
    ExpectAgreesWithLibc(name);
  }
}

TEST(TzdbTest, BerlinAndNewYorkIn2026) {
  StatusOr<Zone> berlin = LoadZone("Europe/Berlin");
  ASSERT_TRUE(berlin.ok()) << berlin.status().message();
  std::vector<Zone::Transition> t = berlin->TransitionsIn(Utc(2026, 1, 1, 0), Utc(2027, 1, 1, 0));
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0], (Zone::Transition{Utc(2026, 3, 29, 1), 2 * kHourS}));
  EXPECT_EQ(t[1], (Zone::Transition{Utc(2026, 10, 25, 1), kHourS}));

  StatusOr<Zone> ny = LoadZone("America/New_York");
  ASSERT_TRUE(ny.ok()) << ny.status().message();
  t = ny->TransitionsIn(Utc(2026, 1, 1, 0), Utc(2027, 1, 1, 0));
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0], (Zone::Transition{Utc(2026, 3, 8, 7), -4 * kHourS}));  // 02:00 EST
  EXPECT_EQ(t[1], (Zone::Transition{Utc(2026, 11, 1, 6), -5 * kHourS}));  // 02:00 EDT

  // The zones the core's tests write out by hand (testing/zones.h) are the database's.
  EXPECT_EQ(berlin->TransitionsIn(Utc(2025, 1, 1, 0), Utc(2029, 1, 1, 0)),
            rota::testing::Berlin().TransitionsIn(Utc(2025, 1, 1, 0), Utc(2029, 1, 1, 0)));
  EXPECT_EQ(ny->TransitionsIn(Utc(2025, 1, 1, 0), Utc(2029, 1, 1, 0)),
            rota::testing::NewYork().TransitionsIn(Utc(2025, 1, 1, 0), Utc(2029, 1, 1, 0)));

  StatusOr<Zone> shanghai = LoadZone("Asia/Shanghai");
  ASSERT_TRUE(shanghai.ok());
  EXPECT_TRUE(shanghai->TransitionsIn(Utc(1992, 1, 1, 0), Utc(2100, 1, 1, 0)).empty());
  EXPECT_EQ(shanghai->OffsetAt(Utc(2026, 7, 1, 0)), 8 * kHourS);
}

TEST(TzdbTest, NamesThatAreNotZones) {
  StatusOr<Zone> z = LoadZone("Mars/Olympus");
  ASSERT_FALSE(z.ok());
  EXPECT_EQ(z.status().code(), StatusCode::kNotFound);
  // Paths out of the database, and text that is not a name, are refused before any file is read.
  for (const char* bad : {"../../etc/passwd", "/etc/localtime", "", "Europe/../../etc/shadow", "Europe/Berlin\n",
                          "Asia/Shanghai;rm", "时区"}) {
    z = LoadZone(bad);
    ASSERT_FALSE(z.ok()) << bad;
    EXPECT_EQ(z.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(z.status().message().find("is not a zone name"), std::string::npos) << z.status().message();
  }
  // A folder of the database, and a file in a database that is not TZif.
  z = LoadZone("Europe");
  EXPECT_FALSE(z.ok());
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "rota-tzdb-text";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "Text") << "Europe/Berlin\n";
  z = LoadZone("Text", dir.string());
  ASSERT_FALSE(z.ok());
  EXPECT_NE(z.status().message().find("not a TZif file"), std::string::npos) << z.status().message();
  std::filesystem::remove_all(dir);
}

// A version 1 TZif file (32-bit table, no footer) with two transitions, by hand.
std::string SmallTzif() {
  std::string b = "TZif";
  b += '\0';                   // version 1
  b += std::string(15, '\0');  // reserved
  auto be32 = [&b](std::uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) b += static_cast<char>((v >> s) & 0xff);
  };
  be32(0);  // isutcnt
  be32(0);  // isstdcnt
  be32(0);  // leapcnt
  be32(2);  // timecnt
  be32(2);  // typecnt
  be32(4);  // charcnt
  be32(1000);
  be32(2000);
  b += '\1';
  b += '\0';
  be32(3600);  // type 0: +01:00
  b += '\0';
  b += '\0';
  be32(7200);  // type 1: +02:00
  b += '\1';
  b += '\0';
  b += std::string("ABC", 4);
  return b;
}

TEST(TzdbTest, AHandMadeFile) {
  StatusOr<Zone> z = ZoneFromTzif("Test/Small", SmallTzif());
  ASSERT_TRUE(z.ok()) << z.status().message();
  EXPECT_EQ(z->OffsetAt(999), 3600);
  EXPECT_EQ(z->OffsetAt(1000), 7200);
  EXPECT_EQ(z->OffsetAt(2000), 3600);
  EXPECT_EQ(z->TransitionsIn(0, 3000).size(), 2u);

  // The same file in a database folder of the test's own ($TZDIR's role).
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "rota-tzdb-test";
  std::filesystem::create_directories(dir / "Test");
  std::ofstream(dir / "Test" / "Small", std::ios::binary) << SmallTzif();
  z = LoadZone("Test/Small", dir.string());
  ASSERT_TRUE(z.ok()) << z.status().message();
  EXPECT_EQ(z->OffsetAt(1500), 7200);
  std::filesystem::remove_all(dir);
}

TEST(TzdbTest, BrokenFilesAreRefusedNotRead) {
  const std::string good = SmallTzif();
  // Every truncation of a good file, and every byte of it flipped: an error or a zone, never a
  // read past the end (the sanitized build checks that).
  for (std::size_t n = 0; n < good.size(); ++n) {
    StatusOr<Zone> z = ZoneFromTzif("Cut", good.substr(0, n));
    EXPECT_FALSE(z.ok()) << n;
  }
  for (std::size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0xff);
    (void)ZoneFromTzif("Flipped", bad);
  }
  // Counts near the limits of 32 bits.
  std::string huge = good;
  huge[32] = huge[33] = huge[34] = huge[35] = '\x7f';  // timecnt
  EXPECT_FALSE(ZoneFromTzif("Huge", huge).ok());
  EXPECT_FALSE(ZoneFromTzif("Empty", "").ok());
  EXPECT_FALSE(ZoneFromTzif("Text", "Europe/Berlin").ok());
}

TEST(TzdbTest, PosixRules) {
  StatusOr<Zone> z = ZoneFromPosixRule("CET-1CEST,M3.5.0,M10.5.0/3");
  ASSERT_TRUE(z.ok()) << z.status().message();
  StatusOr<Zone> berlin = LoadZone("Europe/Berlin");
  ASSERT_TRUE(berlin.ok());
  EXPECT_EQ(z->TransitionsIn(Utc(2026, 1, 1, 0), Utc(2031, 1, 1, 0)),
            berlin->TransitionsIn(Utc(2026, 1, 1, 0), Utc(2031, 1, 1, 0)));
  z = ZoneFromPosixRule("JST-9");
  ASSERT_TRUE(z.ok());
  EXPECT_TRUE(z->fixed());
  EXPECT_EQ(z->OffsetAt(0), 9 * kHourS);
  z = ZoneFromPosixRule("<+0530>-5:30");
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(z->OffsetAt(0), 5 * kHourS + 30 * 60);
  for (const char* bad : {"", "X", "CET", "CET-1CEST", "CET-1CEST,M13.5.0,M10.5.0", "CET-1CEST,J60,J300",
                          "CET-1CEST,M3.5.0,M10.5.0/3 extra", "<+08"}) {
    EXPECT_FALSE(ZoneFromPosixRule(bad).ok()) << bad;
  }
}

TEST(TzdbTest, LocalZoneFollowsTz) {
  {
    ScopedTz tz("Europe/Berlin");
    EXPECT_EQ(LocalZone().name(), "Europe/Berlin");
    EXPECT_EQ(LocalZone().OffsetAt(Utc(2026, 7, 1, 0)), 2 * kHourS);
  }
  {
    ScopedTz tz(":America/New_York");
    EXPECT_EQ(LocalZone().OffsetAt(Utc(2026, 7, 1, 0)), -4 * kHourS);
  }
  {
    ScopedTz tz("PST8PDT,M3.2.0,M11.1.0");
    EXPECT_EQ(LocalZone().OffsetAt(Utc(2026, 1, 1, 0)), -8 * kHourS);
    EXPECT_EQ(LocalZone().OffsetAt(Utc(2026, 7, 1, 0)), -7 * kHourS);
    EXPECT_EQ(LocalZone().OffsetAt(Utc(2026, 7, 1, 0)), LibcOffset(Utc(2026, 7, 1, 0)));
  }
  {
    ScopedTz tz("PST8");
    EXPECT_EQ(LocalZone().OffsetAt(Utc(2026, 7, 1, 0)), -8 * kHourS);
  }
  {
    ScopedTz tz("Not a zone at all");  // the C library reads it as UTC
    EXPECT_EQ(LocalZone().OffsetAt(Utc(2026, 7, 1, 0)), 0);
  }
}

}  // namespace
}  // namespace tzdb_test
}  // namespace rota::config

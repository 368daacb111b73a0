#include "core/types.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace rota {
namespace types_test {
namespace {

TEST(TierTest, NamesRoundTrip) {
  for (Tier t : {Tier::kExplore, Tier::kRegular, Tier::kThesis}) {
    auto parsed = ParseTier(TierName(t));
    ASSERT_TRUE(parsed.has_value()) << TierName(t);
    EXPECT_EQ(*parsed, t);
  }
  EXPECT_STREQ(TierName(Tier::kExplore), "explore");
  EXPECT_STREQ(TierName(Tier::kRegular), "regular");
  EXPECT_STREQ(TierName(Tier::kThesis), "thesis");
  EXPECT_FALSE(ParseTier("Thesis").has_value());  // case-sensitive
  EXPECT_FALSE(ParseTier("").has_value());
  EXPECT_FALSE(ParseTier("urgent").has_value());
}

TEST(FloorDivTest, RoundsDownOnBothSidesOfZero) {
  EXPECT_EQ(FloorDiv(-1, kDay), -1);
  EXPECT_EQ(FloorDiv(-kDay, kDay), -1);
  EXPECT_EQ(FloorDiv(-kDay - 1, kDay), -2);
  EXPECT_EQ(FloorDiv(0, kDay), 0);
  EXPECT_EQ(FloorDiv(kDay - 1, kDay), 0);
  EXPECT_EQ(FloorDiv(kDay, kDay), 1);
  EXPECT_EQ(FloorDiv(7, -2), -4);
  static_assert(FloorDiv(-3, 2) == -2);
}

TEST(TierTest, OrderedLowestFirst) {
  EXPECT_LT(Tier::kExplore, Tier::kRegular);
  EXPECT_LT(Tier::kRegular, Tier::kThesis);
}

TEST(ParseMemoryTest, Units) {
  EXPECT_EQ(ParseMemory("20G"), 20 * 1024);
  EXPECT_EQ(ParseMemory("20GB"), 20 * 1024);
  EXPECT_EQ(ParseMemory("20GiB"), 20 * 1024);
  EXPECT_EQ(ParseMemory("20g"), 20 * 1024);  // units are case-insensitive
  EXPECT_EQ(ParseMemory("512M"), 512);
  EXPECT_EQ(ParseMemory("512MB"), 512);
  EXPECT_EQ(ParseMemory("512mib"), 512);
  EXPECT_EQ(ParseMemory("40960"), 40960);  // bare number: MiB
  EXPECT_EQ(ParseMemory("0"), 0);
  EXPECT_EQ(ParseMemory("1T"), 1024 * 1024);
  EXPECT_EQ(ParseMemory("2TB"), 2 * 1024 * 1024);
}

TEST(ParseMemoryTest, Fractions) {
  EXPECT_EQ(ParseMemory("1.5T"), 1572864);  // 1.5 * 1048576
  EXPECT_EQ(ParseMemory("1.5G"), 1536);
  EXPECT_EQ(ParseMemory("0.5G"), 512);
  EXPECT_EQ(ParseMemory(".5G"), 512);
  EXPECT_EQ(ParseMemory("20.5G"), 20992);  // 20.5 * 1024
}

TEST(ParseMemoryTest, BadInput) {
  for (const char* bad : {"", "G", "abc", "20X", "20 G", " 20G", "-5G", "-1", "1.2.3G", ".", "1e3",
                          "20GG", "G20", "2000000T"}) {
    EXPECT_EQ(ParseMemory(bad), std::nullopt) << '"' << bad << '"';
  }
}

TEST(CountOfTest, OneAndMany) {
  EXPECT_EQ(CountOf(1, "GPU", "GPUs"), "1 GPU");
  EXPECT_EQ(CountOf(0, "GPU", "GPUs"), "0 GPUs");
  EXPECT_EQ(CountOf(2, "card", "cards"), "2 cards");
}

TEST(JoinTest, SeparatorOnlyBetweenParts) {
  EXPECT_EQ(Join({}, ", "), "");
  EXPECT_EQ(Join({"1g.10gb"}, ", "), "1g.10gb");
  EXPECT_EQ(Join({"1g.10gb", "3g.40gb", "7g.80gb"}, ", "), "1g.10gb, 3g.40gb, 7g.80gb");
  EXPECT_EQ(Join({"", "b"}, "-"), "-b");
}

TEST(FormatMemoryTest, Forms) {
  EXPECT_EQ(FormatMemory(20 * 1024), "20G");
  EXPECT_EQ(FormatMemory(1024), "1G");
  EXPECT_EQ(FormatMemory(20992), "20.5G");  // 20.5 GiB
  EXPECT_EQ(FormatMemory(1536), "1.5G");
  EXPECT_EQ(FormatMemory(512), "512M");
  EXPECT_EQ(FormatMemory(1023), "1023M");
  EXPECT_EQ(FormatMemory(0), "0M");
  EXPECT_EQ(FormatMemory(81920), "80G");
}

TEST(FormatMemoryTest, RoundTripsThroughParse) {
  for (MiB m : {MiB{0}, MiB{1}, MiB{512}, MiB{1023}, MiB{1024}, MiB{1536}, MiB{40960}, MiB{81920}}) {
    EXPECT_EQ(ParseMemory(FormatMemory(m)), m) << FormatMemory(m);
  }
}

TEST(ParseDurationTest, UnitForms) {
  EXPECT_EQ(ParseDuration("90s"), 90);
  EXPECT_EQ(ParseDuration("30m"), 30 * 60);
  EXPECT_EQ(ParseDuration("4h"), 4 * 3600);
  EXPECT_EQ(ParseDuration("2d"), 2 * 86400);
  EXPECT_EQ(ParseDuration("1w"), 7 * 86400);
  EXPECT_EQ(ParseDuration("1h30m"), 5400);
  EXPECT_EQ(ParseDuration("1d2h3m4s"), 86400 + 7200 + 180 + 4);  // 93784
  EXPECT_EQ(ParseDuration("1.5h"), 5400);
  EXPECT_EQ(ParseDuration("4H"), 4 * 3600);  // case-insensitive
  EXPECT_EQ(ParseDuration("0s"), 0);
}

TEST(ParseDurationTest, BareNumberIsMinutesLikeSlurm) {
  EXPECT_EQ(ParseDuration("90"), 90 * 60);
  EXPECT_EQ(ParseDuration("0"), 0);
  EXPECT_EQ(ParseDuration("1.5"), 90);
}

TEST(ParseDurationTest, SlurmColonForms) {
  EXPECT_EQ(ParseDuration("1:30:00"), 5400);           // hours:minutes:seconds
  EXPECT_EQ(ParseDuration("0:00:45"), 45);
  EXPECT_EQ(ParseDuration("30:00"), 1800);             // minutes:seconds
  EXPECT_EQ(ParseDuration("5:30"), 330);               // minutes:seconds
  EXPECT_EQ(ParseDuration("90:30"), 90 * 60 + 30);     // minutes may exceed 59
  EXPECT_EQ(ParseDuration("2-00:00:00"), 2 * 86400);   // days-hours:minutes:seconds
  EXPECT_EQ(ParseDuration("1-12"), 86400 + 12 * 3600);  // days-hours
  EXPECT_EQ(ParseDuration("1-2:30"), 86400 + 2 * 3600 + 30 * 60);  // days-hours:minutes
  EXPECT_EQ(ParseDuration("0-1:00:01"), 3601);
}

TEST(ParseWholeNumberTest, DigitsWithinTheRangeOnly) {
  EXPECT_EQ(ParseWholeNumber("120", 0, 86400), 120);
  EXPECT_EQ(ParseWholeNumber("0", 0, 1), 0);
  for (const char* bad : {"", "-1", "+3", " 3", "3s", "1e3", "1234567890123456789"}) {
    EXPECT_FALSE(ParseWholeNumber(bad, 0, 1LL << 62).has_value()) << bad;
  }
  EXPECT_FALSE(ParseWholeNumber("65", 1, 64).has_value());
  EXPECT_FALSE(ParseWholeNumber("0", 1, 64).has_value());
}

TEST(ParseDurationTest, BadInput) {
  for (const char* bad : {"", "abc", "h", "1h30",  // ambiguous: trailing bare number after a unit
                          "10x", "1h 30m", " 5m", "-5", "-5m", "-1:00", "1:2:3:4", "1.5:00", "1:",
                          ":30", "1-", "a-1:00", "1.5-00:00", "1-2-3", "1::2", "99999999999999d"}) {
    EXPECT_EQ(ParseDuration(bad), std::nullopt) << '"' << bad << '"';
  }
}

TEST(ParseDurationTest, HugeValuesRejectedInBothForms) {
  // 2,000,000 days = 1.728e11 s. The unit form rejects it (> 1e11 s); the Slurm form of the same
  // duration must not be accepted either (and much larger Slurm values would overflow int64).
  EXPECT_EQ(ParseDuration("2000000d"), std::nullopt);
  EXPECT_EQ(ParseDuration("2000000-00:00:00"), std::nullopt);
  EXPECT_EQ(ParseDuration("48000000:00:00"), std::nullopt);  // 48e6 h = 1.728e11 s
  // Still fine: a year.
  EXPECT_EQ(ParseDuration("365-00:00:00"), 365 * 86400);
}

TEST(FormatDurationTest, Forms) {
  EXPECT_EQ(FormatDuration(0), "0s");
  EXPECT_EQ(FormatDuration(45), "45s");
  EXPECT_EQ(FormatDuration(59), "59s");
  EXPECT_EQ(FormatDuration(60), "1m");
  EXPECT_EQ(FormatDuration(12 * 60 + 59), "12m");  // seconds dropped
  EXPECT_EQ(FormatDuration(3599), "59m");
  EXPECT_EQ(FormatDuration(3600), "1h00m");
  EXPECT_EQ(FormatDuration(3 * 3600 + 5 * 60), "3h05m");
  EXPECT_EQ(FormatDuration(23 * 3600 + 59 * 60 + 59), "23h59m");
  EXPECT_EQ(FormatDuration(86400), "1d00h");
  EXPECT_EQ(FormatDuration(2 * 86400 + 4 * 3600), "2d04h");
  EXPECT_EQ(FormatDuration(100 * 86400), "100d00h");
  EXPECT_EQ(FormatDuration(-5), "0s");  // negative durations are clamped
}

TEST(FormatDurationTest, SpansDropAZeroSecondUnit) {
  EXPECT_EQ(FormatSpan(30 * 86400), "30d");
  EXPECT_EQ(FormatSpan(100 * 86400), "100d");
  EXPECT_EQ(FormatSpan(2 * 3600), "2h");
  EXPECT_EQ(FormatSpan(2 * 86400 + 4 * 3600), "2d04h");
  EXPECT_EQ(FormatSpan(3 * 3600 + 5 * 60), "3h05m");
  EXPECT_EQ(FormatSpan(10 * 60), "10m");
  EXPECT_EQ(FormatSpan(0), "0s");
  EXPECT_EQ(ParseDuration(FormatSpan(30 * 86400)), 30 * 86400);
}

TEST(FormatDurationTest, OutputParsesBackToTheTruncatedValue) {
  // "3h05m" -> 3*3600 + 5*60; "2d04h" -> 2*86400 + 4*3600.
  EXPECT_EQ(ParseDuration(FormatDuration(3 * 3600 + 5 * 60 + 17)), 3 * 3600 + 5 * 60);
  EXPECT_EQ(ParseDuration(FormatDuration(2 * 86400 + 4 * 3600 + 59)), 2 * 86400 + 4 * 3600);
  EXPECT_EQ(ParseDuration(FormatDuration(45)), 45);
}

}  // namespace
}  // namespace types_test
}  // namespace rota

#include "device/sampler.h"

#include <poll.h>

#include <atomic>
#include <chrono>

#include <gtest/gtest.h>

#include "testing/readable.h"

namespace rota::device {
namespace sampler_test {
namespace {

using namespace std::chrono_literals;

// A source that counts its samples and reports the count as the driver version.
class CountingDevices : public Devices {
 public:
  StatusOr<Snapshot> Sample() override {
    const int n = ++calls;
    if (fail) return Unavailable("driver gone");
    Snapshot s;
    s.driver_version = std::to_string(n);
    return s;
  }
  std::string Describe() const override { return "counting"; }
  std::atomic<int> calls{0};
  std::atomic<bool> fail{false};
};

using testing::Readable;

TEST(Sampler, SamplesAtOnceThenHandsOverTheLatest) {
  auto devices = std::make_shared<CountingDevices>();
  Sampler sampler(devices, 1h);  // nothing but the first sample and SampleSoon()
  ASSERT_TRUE(sampler.Start().ok());
  ASSERT_TRUE(Readable(sampler.fd(), 5000));
  auto first = sampler.Take();
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(first->ok());
  EXPECT_EQ((*first)->driver_version, "1");
  EXPECT_FALSE(Readable(sampler.fd(), 0));  // Take() cleared the eventfd
  EXPECT_FALSE(sampler.Take().has_value());

  devices->fail = true;
  sampler.SampleSoon();
  ASSERT_TRUE(Readable(sampler.fd(), 5000));
  auto second = sampler.Take();
  ASSERT_TRUE(second.has_value());
  EXPECT_FALSE(second->ok());
  EXPECT_EQ(second->status().message(), "driver gone");
  EXPECT_EQ(sampler.samples(), 2);
}

TEST(Sampler, SamplesEveryInterval) {
  auto devices = std::make_shared<CountingDevices>();
  Sampler sampler(devices, 20ms);
  ASSERT_TRUE(sampler.Start().ok());
  const auto until = std::chrono::steady_clock::now() + 10s;
  // samples() counts samples handed over (calls counts them as they begin).
  while (sampler.samples() < 4 && std::chrono::steady_clock::now() < until) Readable(sampler.fd(), 100);
  EXPECT_GE(sampler.samples(), 4);
  // Only the latest sample is kept: earlier ones were replaced, never queued.
  auto latest = sampler.Take();
  ASSERT_TRUE(latest.has_value() && latest->ok());
  EXPECT_GE(std::stoi((*latest)->driver_version), 4);
}

TEST(Sampler, DestructorStopsAWaitingThreadPromptly) {
  auto devices = std::make_shared<CountingDevices>();
  const auto start = std::chrono::steady_clock::now();
  {
    Sampler sampler(devices, 1h);
    ASSERT_TRUE(sampler.Start().ok());
    ASSERT_TRUE(Readable(sampler.fd(), 5000));
  }
  // Not a timing target: a destructor that waited for the hour-long interval would hang the test.
  EXPECT_LT(std::chrono::steady_clock::now() - start, 30s);
  EXPECT_EQ(devices->calls.load(), 1);
}

}  // namespace
}  // namespace sampler_test
}  // namespace rota::device

// Test fixture for the formatters that print local times: the process runs in UTC (TZ) with a
// UTF-8 locale for the test, and gets its previous TZ back afterwards.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <string>

#include "cli/text.h"

namespace rota::cli {

class UtcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    UseUtf8Locale();
    const char* tz = std::getenv("TZ");
    had_tz_ = tz != nullptr;
    saved_tz_ = tz ? tz : "";
    ::setenv("TZ", "UTC", 1);
    ::tzset();
  }
  void TearDown() override {
    if (had_tz_) {
      ::setenv("TZ", saved_tz_.c_str(), 1);
    } else {
      ::unsetenv("TZ");
    }
    ::tzset();
  }

 private:
  std::string saved_tz_;
  bool had_tz_ = false;
};

}  // namespace rota::cli

// Sets $TZ for the life of the object (the C library's reading of it is then the zone of
// mktime and localtime), then puts back what was there: the sanitized run keeps many tests in
// one process.
#pragma once

#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>

namespace rota::testing {

class ScopedTz {
 public:
  explicit ScopedTz(const char* value) {
    if (const char* old = std::getenv("TZ")) old_ = old;
    if (value != nullptr) {
      ::setenv("TZ", value, 1);
    } else {
      ::unsetenv("TZ");
    }
    ::tzset();
  }
  ~ScopedTz() {
    if (old_) {
      ::setenv("TZ", old_->c_str(), 1);
    } else {
      ::unsetenv("TZ");
    }
    ::tzset();
  }
  ScopedTz(const ScopedTz&) = delete;
  ScopedTz& operator=(const ScopedTz&) = delete;

 private:
  std::optional<std::string> old_;
};

}  // namespace rota::testing

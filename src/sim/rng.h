// The simulator's random numbers: splitmix64, small, seeded and the same on every platform, so a
// replay with a given --seed is reproducible anywhere.
#pragma once

#include <cstdint>

namespace rota::sim {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t Next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n); 0 when n <= 0.
  std::int64_t Below(std::int64_t n) {
    if (n <= 0) return 0;
    return static_cast<std::int64_t>(Uniform() * static_cast<double>(n));
  }

 private:
  std::uint64_t s_;
};

}  // namespace rota::sim

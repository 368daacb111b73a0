// Runtime prediction from the lab's own history (issue 29). Users overstate their time limits, so
// a plan on limits starts everything late; the lab's finished jobs say by how much. Pure: the
// history comes in as samples, in the order the jobs ended. Tested by runtime_model_test.cc.
//
// A prediction is the job's limit times a typical ratio of run time to limit, from the most
// specific history that has enough samples: the user's jobs of the same name, the user's jobs,
// the lab's. The ratio (not a run time) carries over when a user changes their limits, and is
// exactly a median run time when a user always asks for the same limit. The median, not the
// mean: one job that crashed at once or ran to its limit moves a mean far. Bounded by the limit
// (the job is stopped there) and by a minute below.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/types.h"

namespace rota {

struct RuntimeSample {
  std::string user;
  std::string key;  // the job's name (or command); "" when none
  Duration limit = 0;
  Duration runtime = 0;
};

enum class RuntimeBasis : std::uint8_t {
  kLimit,    // no history: the time limit itself
  kLab,      // the lab's recent jobs
  kUser,     // the user's recent jobs
  kUserKey,  // the user's recent jobs of the same name
};
const char* RuntimeBasisName(RuntimeBasis b);

// Whether a prediction on this basis can order jobs differently from their limits: the lab's
// ratio is one number for every job, so limit times it ranks exactly as the limit does (only
// squeezed: the size factor's logarithm would weigh size less). Policy::size_by_prediction uses
// the user's and the user's-name bases only.
inline bool TellsTheJobApart(RuntimeBasis b) { return b == RuntimeBasis::kUser || b == RuntimeBasis::kUserKey; }

struct RuntimePrediction {
  Duration runtime = 0;
  RuntimeBasis basis = RuntimeBasis::kLimit;
  int samples = 0;  // how many jobs it is based on
};

class RuntimeModel {
 public:
  // `window`: the recent jobs kept per user, per user and name, and (8 times as many) for the lab.
  // `min_samples`: fewer than this and the next, wider history is asked instead.
  explicit RuntimeModel(int window = 10, int min_samples = 3);

  // A finished job (a limit or run time below one second is read as one second). A job of no
  // user (a trace that names none) teaches the lab's history only.
  void Add(const RuntimeSample& s);

  RuntimePrediction Predict(std::string_view user, std::string_view key, Duration limit) const;

  std::int64_t size() const { return added_; }

 private:
  struct Ratios {
    std::deque<double> recent;  // run time / limit, in (0, 1] (over 1 when a limit was not enforced)
  };
  void Push(Ratios& r, double ratio, size_t cap);
  static double Median(const Ratios& r);

  int window_;
  int min_samples_;
  std::int64_t added_ = 0;
  Ratios lab_;
  std::unordered_map<std::string, Ratios> users_;
  std::unordered_map<std::string, Ratios> keys_;  // user + '\0' + key
};

}  // namespace rota

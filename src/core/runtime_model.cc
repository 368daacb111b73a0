// Tested by runtime_model_test.cc.
#include "core/runtime_model.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace rota {

namespace {

std::string KeyOf(std::string_view user, std::string_view key) {
  std::string k(user);
  k += '\0';
  k += key;
  return k;
}

}  // namespace

const char* RuntimeBasisName(RuntimeBasis b) {
  switch (b) {
    case RuntimeBasis::kLimit:
      return "time limit";
    case RuntimeBasis::kLab:
      return "lab";
    case RuntimeBasis::kUser:
      return "user";
    case RuntimeBasis::kUserKey:
      return "user and name";
  }
  return "time limit";
}

RuntimeModel::RuntimeModel(int window, int min_samples)
    : window_(std::max(1, window)), min_samples_(std::max(1, min_samples)) {}

void RuntimeModel::Push(Ratios& r, double ratio, size_t cap) {
  r.recent.push_back(ratio);
  while (r.recent.size() > cap) r.recent.pop_front();
}

double RuntimeModel::Median(const Ratios& r) {
  std::vector<double> v(r.recent.begin(), r.recent.end());
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  if (v.size() % 2 == 1) return v[mid];
  const double upper = v[mid];
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

void RuntimeModel::Add(const RuntimeSample& s) {
  const double limit = static_cast<double>(std::max<Duration>(1, s.limit));
  const double ratio = static_cast<double>(std::max<Duration>(1, s.runtime)) / limit;
  const size_t cap = static_cast<size_t>(window_);
  Push(lab_, ratio, cap * 8);
  if (s.user.empty()) {  // a trace that names nobody: the lab's history only
    ++added_;
    return;
  }
  Push(users_[s.user], ratio, cap);
  if (!s.key.empty()) Push(keys_[KeyOf(s.user, s.key)], ratio, cap);
  ++added_;
}

RuntimePrediction RuntimeModel::Predict(std::string_view user, std::string_view key, Duration limit) const {
  RuntimePrediction p;
  p.runtime = std::max<Duration>(1, limit);
  const size_t enough = static_cast<size_t>(min_samples_);
  const Ratios* from = nullptr;
  if (!key.empty() && !user.empty()) {
    auto it = keys_.find(KeyOf(user, key));
    if (it != keys_.end() && it->second.recent.size() >= enough) {
      from = &it->second;
      p.basis = RuntimeBasis::kUserKey;
    }
  }
  if (from == nullptr && !user.empty()) {
    auto it = users_.find(std::string(user));
    if (it != users_.end() && it->second.recent.size() >= enough) {
      from = &it->second;
      p.basis = RuntimeBasis::kUser;
    }
  }
  if (from == nullptr && lab_.recent.size() >= enough) {
    from = &lab_;
    p.basis = RuntimeBasis::kLab;
  }
  if (from == nullptr) return p;
  p.samples = static_cast<int>(from->recent.size());
  const double predicted = std::round(Median(*from) * static_cast<double>(p.runtime));
  p.runtime = std::clamp<Duration>(static_cast<Duration>(predicted), std::min<Duration>(kMinute, p.runtime),
                                   p.runtime);
  return p;
}

}  // namespace rota

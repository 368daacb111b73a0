#include "daemon/after_ok.h"

namespace rota::daemon {

void AfterOk::StartPass(const IsActive& active) {
  held_.clear();
  std::erase_if(refused_, [&active](JobId id) { return !active(id); });
}

std::string AfterOk::NeverSatisfied(const Job& j, const IsActive& active, const EndOf& end_of) {
  for (JobId dep : j.after_ok) {
    if (dep == j.id || active(dep) || met_.count(dep)) continue;
    StatusOr<JobEndSeen> end = end_of(dep);
    if (!end.ok() || !end->final) {
      // Not known how it ended: a store that cannot be read, or an end it could not record
      // (collected again at the next start). Held out of the pass until that is known.
      held_.insert(j.id);
      continue;
    }
    if (end->completed) {
      if (met_.size() >= kMetKept) met_.clear();
      met_.insert(dep);
      continue;
    }
    // A job cancelled for its own --after-ok is named, not quoted: no chain of reasons.
    const bool chained = end->reason.rfind(kCancelled, 0) == 0;
    return std::string(kCancelled) + std::to_string(dep) + ", which it waited for (--after-ok), ended" +
           (chained ? " cancelled" : end->user == j.user ? ": " + end->reason : " " + end->ReasonFor(j.user));
  }
  return "";
}

}  // namespace rota::daemon

// Fuzz target: the files rotad and rota-shepherd hand each other (exec/spec.h): a job's spec,
// which the shepherd reads as root before it drops to the job's owner, and its result, which
// rotad reads after a restart. Properties: no crash; a refusal says why; what is accepted is
// written back to text that reads as the same value (a fixed point after one round).
#include "exec/spec.h"
#include "fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rota;
  std::string_view text = fuzz::Text(data, size);
  const bool spec = fuzz::TakeByte(text) % 2 == 0;
  const std::string input(text);
  if (spec) {
    const StatusOr<exec::JobSpec> s = exec::SpecFromJson(input);
    if (!s.ok()) {
      fuzz::Require(!s.status().message().empty(), "a refused spec says why");
      return 0;
    }
    const std::string once = exec::SpecToJson(*s);
    const StatusOr<exec::JobSpec> again = exec::SpecFromJson(once);
    fuzz::Require(again.ok(), "a spec written reads back: " + (again.ok() ? "" : again.status().message()));
    fuzz::Require(exec::SpecToJson(*again) == once, "a spec reads back as written");
  } else {
    const StatusOr<exec::ExitInfo> r = exec::ResultFromJson(input);
    if (!r.ok()) {
      fuzz::Require(!r.status().message().empty(), "a refused result says why");
      return 0;
    }
    const std::string once = exec::ResultToJson(*r);
    const StatusOr<exec::ExitInfo> again = exec::ResultFromJson(once);
    fuzz::Require(again.ok(), "a result written reads back: " + (again.ok() ? "" : again.status().message()));
    fuzz::Require(exec::ResultToJson(*again) == once, "a result reads back as written");
  }
  return 0;
}

// Fuzz target: the simulator's trace reader (sim/trace.h ParseTrace), with the Philly and Alibaba
// presets and a mapping by column name. Properties: no crash; a refusal names the trace and a
// line; every job read has a run time of at least a second, GPUs or a share of one GPU, never
// both, and the jobs are in order of submission.
#include "fuzz/fuzz.h"
#include "sim/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rota;
  std::string_view text = fuzz::Text(data, size);
  sim::TraceOptions options;
  switch (fuzz::TakeByte(text) % 4) {
    case 0:
      options.format = "philly";
      break;
    case 1:
      options.format = "alibaba";
      break;
    case 2:
      options.columns = {{"submit", "submit"}, {"duration", "duration"}, {"gpus", "gpus"}, {"user", "user"},
                         {"tier", "tier"}, {"project", "project"}};
      break;
    default:
      options.columns = {{"submit", "s"}, {"start", "b"}, {"end", "e"}, {"gpu_milli", "g"}};
      options.filters = {{"k", "x"}};
  }
  const StatusOr<sim::Trace> trace = sim::ParseTrace(text, options);
  if (!trace.ok()) {
    fuzz::Require(trace.status().message().rfind("<trace>", 0) == 0,
                  "a refusal names the trace: " + trace.status().message());
    return 0;
  }
  Time last = 0;
  bool first = true;
  for (const sim::TraceJob& job : trace->jobs) {
    fuzz::Require(job.duration >= 1, "a job runs for at least a second");
    fuzz::Require(job.gpus >= 0 && job.gpu_fraction >= 0 && job.gpu_fraction < 1, "GPUs are counted sanely");
    fuzz::Require((job.gpus > 0) != (job.gpu_fraction > 0), "a job has whole GPUs or a share of one");
    fuzz::Require(first || job.submit >= last, "jobs are in order of submission");
    fuzz::Require(job.line >= 2, "a job comes from a line after the header");
    last = job.submit;
    first = false;
  }
  return 0;
}

// rota-shepherd: runs one job for rotad and records how it ended.
//   rota-shepherd --job <id> --spec <run_dir>/<id>.spec --run-dir <run_dir>
// Started by the executor (src/exec/executor.cc) in its own session with /dev/null as stdio; it
// outlives the daemon if need be. Writes <run_dir>/<id>.result atomically and exits 0; exits 2
// on bad arguments, 1 when the result cannot be written. Tested by src/exec/shepherd_test.cc
// and executor_test.cc.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "exec/files.h"
#include "exec/spec.h"
#include "shepherd/supervisor.h"

namespace {

int Usage() {
  std::fprintf(stderr, "usage: rota-shepherd --job <id> --spec <file> --run-dir <dir>\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using rota::exec::ExitInfo;
  close_range(3, ~0U, 0);  // nothing of the daemon's must stay open in the job
  if (argc != 7) return Usage();
  std::string job_text, spec_path, run_dir;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--job") {
      job_text = argv[i + 1];
    } else if (flag == "--spec") {
      spec_path = argv[i + 1];
    } else if (flag == "--run-dir") {
      run_dir = argv[i + 1];
    } else {
      return Usage();
    }
  }
  char* end = nullptr;
  long long job = std::strtoll(job_text.c_str(), &end, 10);
  if (job_text.empty() || *end != '\0' || job <= 0 || spec_path.empty() || run_dir.empty()) return Usage();

  ExitInfo info;
  rota::StatusOr<std::string> text = rota::exec::ReadFile(spec_path);
  rota::StatusOr<rota::exec::JobSpec> spec =
      text.ok() ? rota::exec::SpecFromJson(*text) : rota::StatusOr<rota::exec::JobSpec>(text.status());
  if (spec.ok() && spec->launch.job_id != job) {
    spec = rota::InvalidArgument("spec " + spec_path + " is for job " + std::to_string(spec->launch.job_id));
  }
  if (!spec.ok()) {
    info.kind = ExitInfo::Kind::kStartFailed;
    info.reason = "shepherd: " + spec.status().message();
    info.end_time = static_cast<std::int64_t>(time(nullptr));
  } else {
    info = rota::shepherd::SuperviseJob(*spec);
  }
  rota::Status written = rota::exec::WriteFileAtomic(rota::exec::ResultPath(run_dir, job),
                                                     rota::exec::ResultToJson(info), 0600);
  if (!written.ok()) {
    std::fprintf(stderr, "rota-shepherd: %s\n", written.message().c_str());
    return 1;
  }
  return 0;
}

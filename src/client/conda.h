// `--conda ENV`: a job's command run in the user's conda (mamba, micromamba) environment. The
// command line runs as the user, so it finds the environment the way the user's own conda would:
// a path, or a name looked up in $CONDA_ENVS_PATH, ~/.condarc's envs_dirs, the envs of the
// installation $CONDA_EXE / $MAMBA_ROOT_PREFIX names, ~/.conda/environments.txt, ~/.conda/envs and
// the usual installation directories. A name found nowhere is refused at submit, naming where it
// looked and which environments exist. Activation is what `conda activate` does to the
// environment (PATH, CONDA_PREFIX, ..., the environment's own `conda env config vars`), captured
// with the rest of the job's environment, plus the environment's activate.d scripts, which the
// job sources when it starts (InCondaEnv). Tested by conda_test.cc and tests/daemon/test_conda.py.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "client/job_request.h"
#include "core/status.h"

namespace rota::client {

struct CondaEnv {
  std::string name;    // as given ("exp1", or the path)
  std::string prefix;  // the environment's directory, absolute
  std::map<std::string, std::string> vars;  // `conda env config vars` (conda-meta/state)
};

// Finds `name` for the user whose environment is `env` (HOME, CONDA_EXE, ...). NotFound names the
// places looked in and the environments found there; InvalidArgument for an empty or odd name.
StatusOr<CondaEnv> FindCondaEnv(std::string_view name, const std::map<std::string, std::string>& env);

// `env` as `conda activate` leaves it: the prefix's bin first on PATH (an active environment's
// bin taken off), CONDA_PREFIX, CONDA_DEFAULT_ENV, CONDA_SHLVL, CONDA_PROMPT_MODIFIER and the
// environment's own variables.
void ActivateConda(const CondaEnv& conda, std::map<std::string, std::string>& env);

// `command` run through /bin/sh in the environment: it fails with a clear message when the
// environment is gone by the time the job starts, sources etc/conda/activate.d/*.sh, then execs
// the command. rota show recognises the form (CondaCommand).
std::vector<std::string> InCondaEnv(const CondaEnv& conda, const std::vector<std::string>& command);

// `flags.conda` applied to a job about to be built: `context`'s environment activated, its command
// run through InCondaEnv, and the job named after the user's command unless --name names it.
// Nothing when no --conda was given; FindCondaEnv's error when the environment is not found.
Status UseConda(RequestFlags& flags, JobContext& context);

// The name InCondaEnv gives the shell ($0), which marks its commands.
inline constexpr std::string_view kCondaMarker = "rota-conda";

// The environment's prefix and the user's command of an InCondaEnv command; false for any other.
// Inline: rota show's formatting uses it without the client library.
inline bool CondaCommand(const std::vector<std::string>& wrapped, std::string* prefix,
                         std::vector<std::string>* command) {
  if (wrapped.size() < 6 || wrapped[0] != "/bin/sh" || wrapped[1] != "-c" || wrapped[3] != kCondaMarker) return false;
  *prefix = wrapped[4];
  command->assign(wrapped.begin() + 5, wrapped.end());
  return true;
}

}  // namespace rota::client

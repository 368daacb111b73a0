// What `rota submit` and `rota run` send: the job object of docs/api.md built from command-line
// flags and #ROTA lines in a batch script. Pure: no I/O beyond what the caller passes in.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/signal_spec.h"
#include "core/status.h"

namespace rota::client {

// The request flags as given (text, unparsed); empty / false means "not given".
struct RequestFlags {
  std::string gpus;         // --gpus N
  std::string gpu_mem;      // --gpu-mem 20G
  std::string mig;          // --mig 3g.40gb
  std::string time;         // --time 4h
  std::string tier;         // --tier thesis|regular|explore
  std::string project;      // --project P
  std::string name;         // --name NAME
  std::string mem_per_gpu;  // --mem-per-gpu 40G
  std::string signal;       // --signal USR1@120
  std::string after;        // --after 12,13
  std::string after_ok;     // --after-ok 12,13
  std::string output;       // --output FILE (submit only)
  std::string conda;        // --conda ENV (client/conda.h: applied to the context before BuildJob)
  std::string image;        // --image IMAGE (a container the lab's runtime starts)
  std::string deadline;     // --deadline WHEN (submit only: when the results are needed; read by rotad)
  bool requeue = false;     // --requeue (submit only)
};

// `overrides` on top of `base`: every flag given in `overrides` wins. Giving any of
// --gpus/--gpu-mem/--mig in `overrides` replaces all three of `base` (the request kind).
RequestFlags MergeFlags(const RequestFlags& base, const RequestFlags& overrides);

// The #ROTA options of a batch script: `text` must start with "#!"; only the comment and blank
// lines before the first command count (as #SBATCH). Returns the words after "#ROTA", split like
// a shell does for plain words and '…' / "…" quotes. Empty for a text that is not a script.
std::vector<std::string> ScriptDirectives(std::string_view text);

// Parses directive words ("--gpus", "2", "--time=4h", "--requeue") into flags. Unknown options,
// missing values and positional words are InvalidArgument naming `where` (e.g. "train.sh").
StatusOr<RequestFlags> ParseDirectiveWords(const std::vector<std::string>& words, const std::string& where);

// --signal's text (core/signal_spec.h), its errors naming the flag.
StatusOr<SignalSpec> ParseSignal(std::string_view text);

// What the flags do not say: the command, where it runs and its environment. `interactive`
// leaves out output and requeue (op "run", whose command is only for display).
struct JobContext {
  std::vector<std::string> command;
  std::string cwd;  // absolute
  std::map<std::string, std::string> env;
  bool interactive = false;
};
// The job object of a submit or run request. A bad value is InvalidArgument with one line that
// names the flag and says what is accepted (rota exits 2).
StatusOr<nlohmann::json> BuildJob(const RequestFlags& flags, const JobContext& context);

// The environment as a map ("NAME=value" entries; the first of duplicate names wins).
std::map<std::string, std::string> EnvironmentMap(char** envp);

}  // namespace rota::client

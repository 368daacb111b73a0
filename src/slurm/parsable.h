// Reading what Slurm's command-line tools print (issue 26, Slurm as the engine): the version
// (`sinfo -V`), delimiter-separated records (`sinfo -h -N -O "Field:0|,..."`, `squeue -h -O
// ...`), generic resources as the tools write them (`gpu:4`, `gpu:a100:2(IDX:0-1)`,
// `gres:gpu:2`, `(null)`), index ranges, and the GPUs each node gave a job (`scontrol show job
// -d`: `Nodes=vm CPU_IDs=0 Mem=1024 GRES=gpu:2(IDX:0-1)`). Pure functions over text: no process
// is run here. Only the parsable forms that 22.05 (Debian 12) through 24.x print alike are read,
// never `--json`, whose shape changes between releases.
//
// Tested by parsable_test.cc, on lines captured from Slurm 22.05.8 (Debian 12's).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace rota::slurm {

struct Version {
  int major = 0;
  int minor = 0;
  int micro = 0;
  bool AtLeast(int maj, int min) const { return major > maj || (major == maj && minor >= min); }
  std::string ToString() const;
};
// `sinfo -V`: "slurm 22.05.8" (upstream's builds) or "slurm-wlm 22.05.8" (Debian's).
StatusOr<Version> ParseVersion(std::string_view text);

// Records of `fields` values each, one a line, the values separated by `delim` as the `-O
// "Field:0|,..."` form writes them (each value followed by the delimiter, so a line ends with
// one; a line without the final one is read the same). Empty lines are skipped. A line with
// another count of values is refused, naming it: a value that contains the delimiter cannot be
// told from two values.
StatusOr<std::vector<std::vector<std::string>>> SplitRecords(std::string_view text, char delim,
                                                             size_t fields);
// The -O argument that asks for `fields` in that form: "JobID:0<delim>,Name:0<delim>,...".
std::string FieldsFormat(std::span<const char* const> fields, char delim);

// "0-1,3,5-6" -> {0, 1, 3, 5, 6}, ascending as written; "" -> {}. Refuses what is not a list of
// non-negative numbers and ascending ranges.
StatusOr<std::vector<int>> ParseIndexRanges(std::string_view text);

// One generic resource as Slurm writes it: "gpu:4", "gpu:a100:4", "gpu:a100:2(IDX:0-1)",
// "gpu:4(S:0-1)" (socket binding: not indices), "shard:a100:8(0/8,0/8)".
struct Gres {
  std::string name;  // "gpu", "shard", "mps", ...
  std::string type;  // "a100", "1g.10gb"; "" when untyped
  int count = 0;
  std::vector<int> indices;  // from "(IDX:...)" only
  bool operator==(const Gres&) const = default;
};
// A comma-separated list of them (`sinfo` Gres and GresUsed, `squeue` tres-per-node with or
// without its "gres:" prefix). "", "(null)" and "N/A" are none.
StatusOr<std::vector<Gres>> ParseGresList(std::string_view text);

// What `scontrol show job -d ID` says each node gave the job: for every "Nodes=NAMES ...
// GRES=LIST" line, the node names as written (a hostlist such as "vm[1-2]" is not expanded here)
// and the GPU indices (gres "gpu"), and apart the indices of the GPUs whose shards it holds
// ("GRES=shard:card1:3(IDX:1)"). Jobs without GPUs have no GRES part: empty indices.
struct NodeGres {
  std::string nodes;
  std::vector<int> gpu_indices;
  std::vector<int> shard_indices;
  bool operator==(const NodeGres&) const = default;
};
StatusOr<std::vector<NodeGres>> ParseJobNodeGres(std::string_view detail);

// One setting of `scontrol show config` ("MinJobAge               = 300 sec" -> "300 sec"); ""
// when it is not there.
std::string ConfigValue(std::string_view show_config, std::string_view key);
// A duration setting's seconds ("300 sec" -> 300); InvalidArgument for anything else.
StatusOr<long> ConfigSeconds(std::string_view value);

}  // namespace rota::slurm

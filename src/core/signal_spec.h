// A job's warning signal as people write it (Slurm's --signal): "USR1@120", "SIGUSR2@60",
// "10@30", "TERM", "B:USR1@90" (Slurm's prefix for the batch shell, which is what Rota signals
// anyway). The part after @ is how long before the job's limit (or its preemption) the signal
// comes, in seconds or with a unit ("2m"); without it, 120 s. Used by `--signal`, `#ROTA --signal`
// and the lab's `[policy] default_signal`. Pure: tested by signal_spec_test.cc.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "core/types.h"

namespace rota {

struct SignalSpec {
  int signal = 0;  // 1..64
  Duration grace = 120;
};

// InvalidArgument names the text: "\"USR1@\": expected SIGNAL[@SECONDS] such as USR1@120, ...".
StatusOr<SignalSpec> ParseSignalSpec(std::string_view text);

// "SIGUSR1" for 10, "signal 42" for a number without a name here.
std::string SignalName(int signal);

}  // namespace rota

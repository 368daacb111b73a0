// How `rota gpus` prints the daemon's `gpus` reply (docs/api.md, op "gpus"): one line per card in
// gpustat's spirit, MIG slices on lines of their own under their card, and who is on each.
// Pure: no clock reads (the reply's "time" is now), no terminal queries (colour comes in as an
// option); local times use the process's time zone (localtime_r).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "cli/text.h"
#include "core/types.h"

namespace rota::cli {

struct GpusFormat {
  bool color = false;  // ANSI colours (the command decides: --color, a terminal, $NO_COLOR)
};

// The whole screen for one `gpus` reply:
//   - "GPU sample failed: ...; values from HH:MM:SS" first when sample_error is set;
//   - a title line: the reply's time, the driver version and the GPU source;
//   - a header, then per card: GPU NAME TEMP UTIL MEMORY HOLDERS, where HOLDERS is the card's
//     state ("DRAINED by alice: why", "DRAINED (health): error", "SUSPECT: error"; then
//     "; on it: " when something is), then each Rota holder
//     "user/ID:name(MEM tier [session] H:MM left)", then processes outside Rota
//     "bob/outside(3.2G)" and job processes on a card their job does not hold
//     "carol/18!(2.0G not allocated here)"; "free" when nothing is on the card;
//   - per MIG slice a line "└ PROFILE" under its card with the slice's memory and holders.
// MEM is the job's memory_used on that card; for a memory share "used/share" ("9.5/20.0G");
// "?" where the source cannot say. Columns are aligned by display width (CJK text takes two
// columns); every line ends in "\n". Every field tolerates absence or a wrong type.
std::string FormatGpus(const nlohmann::json& reply, const GpusFormat& options);

// Time left as H:MM, rounded up to the minute so a running job never shows 0:00 early:
// "0:59", "12:00", "2d03:04"; "0:00" for d <= 0.
std::string FormatTimeLeft(Duration d);


}  // namespace rota::cli

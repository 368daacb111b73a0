// The cards and jobs the core's tests build their states from, one way everywhere: a card is
// "GPU-<index>" (an A100 of 80 GB unless said), a job asks for whole cards in project "p".
#pragma once

#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/types.h"

namespace rota::testing {

inline constexpr MiB k80GiB = 81920;

// Card `index` with `memory` MiB on `node`.
Gpu Card(int index, MiB memory = k80GiB, int node = 0);
// Cards 0 to n-1.
std::vector<Gpu> Cards(int n, MiB memory = k80GiB);
// A pending job of `user` asking for `gpus` whole cards for `limit`, submitted at `submit`.
Job MakeJob(JobId id, std::string user, int gpus, Duration limit, Time submit, Tier tier = Tier::kRegular);
// A job of `user` running on `cards` since `start` (submitted then), not preemptible.
RunningJob Running(JobId id, std::string user, std::vector<int> cards, Time start, Duration limit,
                   Tier tier = Tier::kRegular);

}  // namespace rota::testing

// Fuzz target: what Slurm's command-line tools print, as the Slurm engine reads it (src/slurm):
// squeue (the queue, job names), sacct, sinfo's nodes, scontrol's reservations, job details and
// configuration, sinfo -V, host lists, index ranges, gres lists and times. Slurm's output carries
// text users choose (job names, comments, reservation names), so it is outside input. The first
// byte picks the reader. Properties: no crash, no growth past libFuzzer's memory limit (a host list or index
// range expands), a refusal says why.
#include "fuzz/fuzz.h"
#include "slurm/accounting.h"
#include "slurm/nodes.h"
#include "slurm/parsable.h"
#include "slurm/queue.h"
#include "slurm/reservations.h"

namespace {

template <typename T>
void Said(const rota::StatusOr<T>& r, const char* what) {
  rota::fuzz::Require(r.ok() || !r.status().message().empty(), std::string("a refused ") + what + " says why");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rota;
  std::string_view text = fuzz::Text(data, size);
  switch (fuzz::TakeByte(text) % 12) {
    case 0:
      Said(slurm::ParseQueue(text), "queue");
      break;
    case 1:
      Said(slurm::ParseAccounting(text), "sacct output");
      (void)slurm::AccountingDisabled(text);
      break;
    case 2:
      Said(slurm::ParseNodes(text), "node list");
      break;
    case 3:
      Said(slurm::ParseReservations(text), "reservation list");
      break;
    case 4:
      Said(slurm::ParseOurs(text), "list of Rota's jobs");
      break;
    case 5: {
      const auto gres = slurm::ParseJobNodeGres(text);
      Said(gres, "job detail");
      break;
    }
    case 6: {
      const auto gres = slurm::ParseGresList(text);
      Said(gres, "gres list");
      if (gres.ok()) {
        for (const slurm::Gres& g : *gres) fuzz::Require(g.count >= 0, "a gres count is not negative");
      }
      break;
    }
    case 7: {
      const auto ranges = slurm::ParseIndexRanges(text);
      Said(ranges, "index range");
      break;
    }
    case 8:
      Said(slurm::ParseVersion(text), "version");
      break;
    case 9: {
      const auto hosts = slurm::ExpandHostlist(text);
      Said(hosts, "host list");
      break;
    }
    case 10: {
      const std::string value = slurm::ConfigValue(text, "MinJobAge");
      Said(slurm::ConfigSeconds(value), "configuration value");
      Said(slurm::ConfigSeconds(text), "configuration value");
      break;
    }
    default:
      Said(slurm::ParseSlurmTime(text), "time");
  }
  return 0;
}

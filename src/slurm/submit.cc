#include "slurm/submit.h"

#include <algorithm>
#include <csignal>
#include <cstring>

#include "slurm/queue.h"

namespace rota::slurm {

namespace {

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// "USR1" for SIGUSR1, as --signal wants a name or a number; the number when it has no name here.
std::string SignalArg(int signo) {
  switch (signo) {
    case SIGUSR1:
      return "USR1";
    case SIGUSR2:
      return "USR2";
    case SIGTERM:
      return "TERM";
    case SIGINT:
      return "INT";
    case SIGHUP:
      return "HUP";
    case SIGQUIT:
      return "QUIT";
    default:
      return std::to_string(signo);
  }
}

// What a batch job and a session ask of Slurm alike: the tag, where, what and for how long.
template <typename J>
void AddResources(std::vector<std::string>& a, const J& job, const SubmitConfig& config) {
  a.push_back("--job-name=" + TagOf(config.tag, job.id));
  if (!config.partition.empty()) a.push_back("--partition=" + config.partition);
  if (!config.account.empty()) a.push_back("--account=" + config.account);
  if (!job.reservation.empty()) a.push_back("--reservation=" + job.reservation);
  if (!job.node.empty()) a.push_back("--nodelist=" + job.node);
  a.push_back("--nodes=1");
  a.push_back("--ntasks=1");
  if (job.shares > 0 && job.cards.size() == 1) {
    a.push_back("--gres=shard:" + job.cards[0] + ":" + std::to_string(job.shares));
  } else if (!job.cards.empty()) {
    // By type, in the order first named: "gpu:card2:1,gpu:card0:1", "gpu:a100:2".
    std::vector<std::pair<std::string, int>> types;
    for (const std::string& card : job.cards) {
      auto it = std::find_if(types.begin(), types.end(), [&](const auto& t) { return t.first == card; });
      if (it == types.end()) {
        types.emplace_back(card, 1);
      } else {
        ++it->second;
      }
    }
    std::string gres;
    for (const auto& [type, n] : types) gres += (gres.empty() ? "gpu:" : ",gpu:") + type + ":" + std::to_string(n);
    a.push_back("--gres=" + gres);
  } else if (job.gpus > 0) {
    a.push_back("--gres=gpu:" + (job.gpu_type.empty() ? "" : job.gpu_type + ":") + std::to_string(job.gpus));
  }
  if (job.memory_bytes > 0) {
    const std::int64_t mib = (job.memory_bytes + (1 << 20) - 1) >> 20;
    a.push_back("--mem=" + std::to_string(mib) + "M");
  }
  if (job.time_limit > 0 || job.limit_cap > 0)
    a.push_back("--time=" + std::to_string(SlurmMinutes(job.time_limit, job.limit_cap)));
}

}  // namespace

long SlurmMinutes(Duration limit, Duration cap) {
  const long wanted = limit > 0 ? static_cast<long>((limit + kBackstopSlack + 59) / 60) : 0;
  if (cap <= 0) return wanted;
  // Ending exactly where the reservation begins counts as reaching into it, and Slurm starts the
  // job a moment after rotad asked: kCapMargin earlier.
  const long most = std::max<long>(1, static_cast<long>((cap - kCapMargin) / 60));
  return wanted > 0 ? std::min(wanted, most) : most;
}

std::string ShellQuote(const std::string& arg) {
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

bool DroppedFromSubmission(const std::string& name) {
  for (const char* prefix : {"SLURM_", "SBATCH_", "SALLOC_", "SRUN_"}) {
    if (StartsWith(name, prefix)) return true;
  }
  // Rota's GPU choice on the local engine: Slurm gives its own (CUDA_VISIBLE_DEVICES from gres).
  return name == "CUDA_VISIBLE_DEVICES" || name == "ROTA_GPUS" || name == "NVIDIA_VISIBLE_DEVICES";
}

std::string SlurmCannotName(const std::string& path) {
  if (path.find('\\') == std::string::npos) return "";
  return "Slurm cannot write the output to " + path +
         ": it drops every backslash in the name; choose another --output";
}

Submission BuildSubmission(const BatchJob& job, const SubmitConfig& config) {
  Submission s;
  std::vector<std::string>& a = s.argv;
  a.push_back(config.sbatch);
  a.push_back("--parsable");
  AddResources(a, job, config);
  if (job.time_limit > 0 && job.signal > 0 && job.grace > 0) {
    // Slurm takes at most 65535 s; a longer grace is warned that long before instead.
    a.push_back("--signal=B:" + SignalArg(job.signal) + "@" + std::to_string(std::min<Duration>(job.grace, 65535)));
  }
  a.push_back("--no-requeue");
  std::string output;
  for (char c : job.output) output += c == '%' ? std::string("%%") : std::string(1, c);
  a.push_back("--output=" + output);
  a.push_back("--open-mode=append");
  a.push_back("--chdir=" + job.cwd);
  a.push_back("--export=ALL");
  std::string command = "exec";
  for (const std::string& arg : job.argv) command += " " + ShellQuote(arg);
  a.push_back("--wrap=" + command);

  for (const auto& [k, v] : job.env) {
    if (!DroppedFromSubmission(k)) s.env.push_back(k + "=" + v);
  }
  if (!config.slurm_conf.empty()) s.env.push_back("SLURM_CONF=" + config.slurm_conf);
  return s;
}

SessionCommand BuildSessionCommand(const SessionJob& job, const std::string& srun, const SubmitConfig& config) {
  SessionCommand c;
  c.argv.push_back(srun);
  AddResources(c.argv, job, config);
  // Output as it comes (a progress bar, a prompt without a newline), not line by line.
  c.argv.push_back("--unbuffered");
  c.argv.push_back("--quiet");  // Slurm's own progress lines would mix with rota's
  c.tty_argv.push_back("--pty");
  return c;
}

}  // namespace rota::slurm

#include "daemon/slurm_engine.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <tuple>

#include "daemon/slurm_cards.h"
#include "exec/files.h"
#include "json/bounded.h"
#include "slurm/accounting.h"
#include "slurm/job_gpus.h"
#include "slurm/parsable.h"

namespace rota::daemon {

namespace {

std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

// sbatch's words that say the controller was not reached (or did not answer), rather than that it
// refused the job: the submission's outcome is then unknown.
bool NotReached(const std::string& err) {
  for (const char* words :
       {"Unable to contact slurm controller", "Socket timed out", "Zero Bytes were transmitted",
        "Connection refused", "Slurm backup controller in standby mode", "Slurm controller not responding"}) {
    if (err.find(words) != std::string::npos) return true;
  }
  return false;
}

// "123", or an array element "123_4".
bool ValidSlurmId(const std::string& id) {
  if (id.empty() || id.size() > 32 || id.front() == '_' || id.back() == '_') return false;
  for (char c : id) {
    if ((c < '0' || c > '9') && c != '_') return false;
  }
  return true;
}

}  // namespace

std::vector<std::string> RotadSlurmEnv(const std::string& slurm_conf) {
  std::vector<std::string> env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
  // Slurm prints local times in the reader's zone: the same zone as rotad's, so that mktime reads
  // them back right (slurm/queue.h, ParseSlurmTime).
  if (const char* tz = std::getenv("TZ")) env.push_back(std::string("TZ=") + tz);
  if (!slurm_conf.empty()) env.push_back("SLURM_CONF=" + slurm_conf);
  return env;
}

Status FindSlurmCommands(const std::string& bin_dir, SlurmEngineOptions& options) {
  std::string missing;
  auto find = [&](const char* name, std::string& into) {
    const std::string path = bin_dir + "/" + name;
    if (::access(path.c_str(), X_OK) != 0) missing += (missing.empty() ? "" : ", ") + path;
    into = path;
  };
  find("sbatch", options.submit.sbatch);
  find("squeue", options.squeue);
  find("scancel", options.scancel);
  find("sinfo", options.sinfo);
  find("scontrol", options.scontrol);
  find("srun", options.srun);
  const std::string sacct = bin_dir + "/sacct";
  options.sacct = ::access(sacct.c_str(), X_OK) == 0 ? sacct : "";
  if (!missing.empty()) {
    return FailedPrecondition("[engine] kind = \"slurm\", but Slurm's commands are not there: " + missing +
                              " (install Slurm's client commands, or set [engine] bin_dir)");
  }
  return Status();
}

std::string SlurmEngine::LaunchFileText(const LaunchFile& f) {
  nlohmann::json j{{"uid", f.uid}, {"note", f.note}, {"written", f.written}};
  if (f.submitted) j["submitted"] = true;
  if (!f.slurm_id.empty()) j["slurm_id"] = f.slurm_id;
  return j.dump() + "\n";
}

StatusOr<SlurmEngine::LaunchFile> SlurmEngine::ParseLaunchFile(const std::string& text) {
  StatusOr<nlohmann::json> parsed = ParseBoundedJson(text);
  if (!parsed.ok()) return InvalidArgument("not a launch file of rotad's: " + parsed.status().message());
  const nlohmann::json& j = *parsed;
  if (!j.is_object() || !j.contains("uid") || !j["uid"].is_number_unsigned() || !j.contains("note") ||
      !j["note"].is_string() || !j.contains("written") || !j["written"].is_number_integer() ||
      j["uid"].get<std::uint64_t>() > std::numeric_limits<uid_t>::max()) {
    return InvalidArgument("not a launch file of rotad's");
  }
  LaunchFile f;
  f.uid = j["uid"].get<uid_t>();
  f.note = j["note"].get<std::string>();
  f.written = j["written"].get<Time>();
  // Both optional (files written before they were kept read as not yet known).
  if (j.contains("submitted")) {
    if (!j["submitted"].is_boolean()) return InvalidArgument("not a launch file of rotad's");
    f.submitted = j["submitted"].get<bool>();
  }
  if (j.contains("slurm_id")) {
    if (!j["slurm_id"].is_string() || !ValidSlurmId(j["slurm_id"].get<std::string>()))
      return InvalidArgument("not a launch file of rotad's: slurm_id is not a Slurm job id");
    f.slurm_id = j["slurm_id"].get<std::string>();
    f.submitted = true;
  }
  return f;
}

StatusOr<std::unique_ptr<SlurmEngine>> SlurmEngine::Create(const SlurmEngineOptions& options, EventLoop& loop,
                                                           EngineEvents& events, const Clock& clock) {
  if (::mkdir(options.run_dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Internal(exec::ErrnoMessage("cannot create " + options.run_dir, errno));
  }
  ChildCommand version;
  version.argv = {options.sinfo, "-V"};
  version.env = RotadSlurmEnv(options.submit.slurm_conf);
  version.deadline = options.deadline;
  ChildResult v = ChildCommands::RunNow(version);
  StatusOr<slurm::Version> parsed =
      v.ok() ? slurm::ParseVersion(v.out) : StatusOr<slurm::Version>(Internal(v.Describe()));
  if (!parsed.ok()) {
    return FailedPrecondition("Slurm's " + options.sinfo +
                              " -V does not tell its version: " + parsed.status().message());
  }
  StatusOr<std::unique_ptr<ChildCommands>> commands = ChildCommands::Create(loop);
  if (!commands.ok()) return commands.status();
  std::unique_ptr<SlurmEngine> e(new SlurmEngine(options, events, clock, std::move(*commands)));
  e->version_ = parsed->ToString();
  StatusOr<std::unique_ptr<OneShotTimer>> t = OneShotTimer::Create(loop, [p = e.get()] { p->ReadQueue(); });
  if (!t.ok()) return t.status();
  e->poll_timer_ = std::move(*t);
  StatusOr<std::unique_ptr<OneShotTimer>> p = OneShotTimer::Create(loop, [e = e.get()] { e->Poke(); });
  if (!p.ok()) return p.status();
  e->poke_timer_ = std::move(*p);
  // Its firing is an event: the batch's AfterEvents answers the pokes out of time.
  StatusOr<std::unique_ptr<OneShotTimer>> w = OneShotTimer::Create(loop, [] {});
  if (!w.ok()) return w.status();
  e->poke_wait_timer_ = std::move(*w);
  return e;
}

SlurmEngine::SlurmEngine(const SlurmEngineOptions& options, EngineEvents& events, const Clock& clock,
                         std::unique_ptr<ChildCommands> commands)
    : options_(options),
      events_(events),
      clock_(clock),
      commands_(std::move(commands)),
      accounting_off_(options.sacct.empty()),
      listed_after_end_(options.listed_after_end) {}

SlurmEngine::~SlurmEngine() = default;

std::string SlurmEngine::Describe() const {
  std::string d = "Slurm " + version_ + " (" + options_.submit.sbatch;
  if (!options_.submit.partition.empty()) d += ", partition " + options_.submit.partition;
  if (!options_.node.empty()) d += ", node " + options_.node;
  d += ")";
  if (!reachable_) d += "; Slurm does not answer (" + unreachable_why_ + "): jobs wait until it does";
  if (!accounting_gap_.empty()) d += "; " + accounting_gap_;
  return d;
}

std::string SlurmEngine::LaunchPath(JobId id) const {
  return options_.run_dir + "/" + std::to_string(id) + ".launch";
}

ChildCommand SlurmEngine::AsRotad(std::vector<std::string> argv) const {
  ChildCommand c;
  c.argv = std::move(argv);
  c.env = RotadSlurmEnv(options_.submit.slurm_conf);
  c.deadline = options_.deadline;
  return c;
}

ChildCommand SlurmEngine::QueueCommand() const {
  return AsRotad({options_.squeue, "-h", "-a", "-t", slurm::ActiveStates(), "-O", slurm::QueueFormat()});
}

std::string SlurmEngine::SlurmIdOf(JobId id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? "" : it->second.slurm_id;
}

StatusOr<Started> SlurmEngine::Launch(const exec::LaunchSpec& spec) {
  if (spec.job_id <= 0 || spec.argv.empty() || spec.cwd.empty() || spec.cwd[0] != '/' ||
      spec.output.empty() || spec.output[0] != '/') {
    return InvalidArgument(
        "a job needs a command, an absolute working directory and an absolute output path");
  }
  if (jobs_.count(spec.job_id) > 0)
    return FailedPrecondition("job " + std::to_string(spec.job_id) + " is in Slurm already");
  // Not sent to a Slurm that does not answer: the job waits (the daemon tries it again later)
  // rather than becoming a submission whose outcome is unknown.
  if (!reachable_) return Unavailable("Slurm does not answer: " + unreachable_why_);
  // A share is a card's shards in Slurm; without them (cards that are not Slurm's, or that it
  // cannot share) it would take a whole GPU there.
  if (spec.cluster.share && spec.cluster.shares <= 0)
    return InvalidArgument("Slurm cannot give this memory share: its GPU has no shards of its own type");
  if (spec.cluster.slice && spec.cluster.cards.empty())
    return InvalidArgument("Slurm cannot give this MIG slice: its card is not Slurm's MIG gres type");
  if (std::string why = slurm::SlurmCannotName(spec.output); !why.empty()) return InvalidArgument(why);
  const Time now = clock_.Now();
  // Written first: a restart between here and sbatch's reply finds that a launch was under way.
  if (Status s =
          exec::WriteFileAtomic(LaunchPath(spec.job_id), LaunchFileText({spec.uid, spec.note, now, false, ""}), 0600);
      !s.ok()) {
    return Unavailable("cannot write the launch file: " + s.message());
  }
  slurm::BatchJob b;
  b.id = spec.job_id;
  b.argv = spec.argv;
  b.cwd = spec.cwd;
  b.env = spec.env;
  b.output = spec.output;
  b.node = spec.cluster.node.empty() ? options_.node : spec.cluster.node;
  b.gpus = spec.cluster.gpus;
  b.cards = spec.cluster.cards;
  b.shares = spec.cluster.shares;
  b.memory_bytes = spec.memory_limit_bytes;
  b.time_limit = spec.cluster.time_limit;
  b.signal = spec.cluster.signal;
  b.grace = spec.cluster.grace;
  std::tie(b.reservation, b.limit_cap) = ReservationFor(spec.user, b.node, now);
  slurm::Submission sub = slurm::BuildSubmission(b, options_.submit);
  ChildCommand c;
  c.argv = std::move(sub.argv);
  c.env = std::move(sub.env);
  c.as_user = true;
  c.uid = spec.uid;
  c.gid = spec.gid;
  c.groups = spec.groups;
  c.deadline = options_.deadline;
  // slurmstepd opens the output on the node, where Rota checks nothing: what is there already (a
  // pipe or file that another user made at the predictable path) is refused here, before sbatch.
  // (The output is absolute: api::JobFromRequest made it so at submit.)
  c.refuse_output = spec.output;
  Job& j = jobs_[spec.job_id];
  j.uid = spec.uid;
  j.since = now;
  j.note = spec.note;
  const JobId id = spec.job_id;
  commands_->Start(c, [this, id](ChildResult r) { OnSubmitted(id, r); });
  return Started{};
}

void SlurmEngine::OnSubmitted(JobId id, const ChildResult& r) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  Job& j = it->second;
  if (r.ok()) {
    j.phase = Phase::kSubmitted;
    // "123" or "123;cluster": a hint for the queue (an earlier job of the same tag may be
    // listed), never trusted alone: it comes from a process the user owns.
    const std::string line = FirstLine(r.out);
    j.claimed_id = line.substr(0, line.find(';'));
    spdlog::info("job {}: submitted to Slurm as job {}", id, FirstLine(r.out));
    RecordLaunch(id, j);
    Poke();  // its Slurm id, checked against the queue
    return;
  }
  const std::string words = r.Describe();
  if (r.how == ChildResult::How::kExited && r.code == ChildCommand::kOutputRefused &&
      r.err.starts_with("the output ")) {
    spdlog::warn("job {}: not submitted: {}", id, words);
    JobExit e;
    e.kind = JobExit::Kind::kStartFailed;
    e.reason = words;
    Ended(id, j, e);
    return;
  }
  const bool refused = r.how == ChildResult::How::kExited && !NotReached(r.err);
  const bool never_ran = r.how == ChildResult::How::kNotStarted;
  if (refused || never_ran) {
    // Slurm said no (an unknown partition or account, over a limit), or sbatch never ran: nothing
    // was submitted.
    spdlog::warn("job {}: sbatch {}: {}", id, refused ? "refused it" : "did not run", words);
    JobExit e;
    e.kind = JobExit::Kind::kStartFailed;
    e.reason = (refused ? "Slurm refused it: " : "sbatch could not run: ") + words;
    e.machine_fault = never_ran;
    Ended(id, j, e);
    return;
  }
  j.phase = Phase::kUncertain;
  j.missing = 0;
  spdlog::warn("job {}: sbatch's outcome is not known ({}): looked for in Slurm's queue", id, words);
  Poke();
}

void SlurmEngine::Ended(JobId id, Job& j, const JobExit& exit) {
  if (j.withdrawn) {
    jobs_.erase(id);
    (void)exec::RemoveFile(LaunchPath(id));
    events_.WithdrawnGone(id);
    return;
  }
  if (j.ended) return;
  j.ended = true;
  events_.JobEnded(id, exit);
}

void SlurmEngine::Withdraw(JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  Job& j = it->second;
  j.withdrawn = true;
  if (!j.slurm_id.empty() && !j.cancel_sent) {
    j.cancel_sent = true;
    Cancel(id, j.slurm_id, 0);
  }
  Poke();  // WithdrawnGone comes from the queue's next reading, never from inside this call
}

void SlurmEngine::Cancel(JobId id, const std::string& slurm_id, int signo) {
  std::vector<std::string> argv = {options_.scancel};
  if (signo != 0) {
    // The job's processes: the batch script and every step (--full), as the local engine signals
    // the job's process group. SIGKILL too: the job then ends at once (CANCELLED) instead of
    // after Slurm's own KillWait.
    argv.push_back("--full");
    argv.push_back("--signal=" + std::to_string(signo));
  }
  argv.push_back(slurm_id);
  commands_->Start(AsRotad(std::move(argv)), [id, slurm_id, signo](ChildResult r) {
    if (!r.ok()) spdlog::warn("job {}: scancel {} of Slurm job {}: {}", id, signo, slurm_id, r.Describe());
  });
}

void SlurmEngine::AskGpus(JobId id, const slurm::QueuedJob& q) {
  // A share got the card it named (its shards), and a MIG slice one of its type, which Slurm
  // numbers among the node's GPUs (no card of Rota's): their records stay as Rota placed them.
  // Read from the queue's entry, so that a job re-adopted after a restart is judged alike.
  if (ShardCardsPerNode(q) > 0 || SlicesPerNode(q) > 0) return;
  const std::string slurm_id = q.id;
  commands_->Start(AsRotad({options_.scontrol, "-d", "show", "job", slurm_id}),
                   [this, id, slurm_id, node = q.nodes, count = GpusPerNode(q)](ChildResult r) {
                     auto it = jobs_.find(id);
                     if (it == jobs_.end() || it->second.slurm_id != slurm_id || it->second.ended) return;
                     StatusOr<std::vector<std::string>> cards = GivenCards(r, node, count);
                     if (!cards.ok()) {
                       spdlog::warn("job {}: which GPUs Slurm job {} has is not known: {}", id, slurm_id,
                                    cards.status().message());
                       return;
                     }
                     if (!cards->empty()) events_.JobPlaced(id, *cards);
                   });
}

int SlurmEngine::GpusPerNode(const slurm::QueuedJob& q) {
  int n = 0;
  for (const slurm::Gres& g : q.per_node) {
    if (slurm::IsWholeGpu(g)) n += g.count;
  }
  return n;
}

int SlurmEngine::SlicesPerNode(const slurm::QueuedJob& q) {
  int n = 0;
  for (const slurm::Gres& g : q.per_node) {
    if (slurm::IsGpuSlice(g)) n += g.count;
  }
  return n;
}

int SlurmEngine::ShardCardsPerNode(const slurm::QueuedJob& q) {
  return static_cast<int>(std::count_if(q.per_node.begin(), q.per_node.end(),
                                        [](const slurm::Gres& g) { return g.name == "shard" && g.count > 0; }));
}

StatusOr<std::vector<std::string>> SlurmEngine::GivenCards(const ChildResult& r, const std::string& nodes,
                                                           int count, int shard_cards) {
  if (!r.ok()) return Unavailable(r.Describe());
  // Checked against the queue (slurm::GpusGiven): scontrol also prints the job's name, command
  // and paths, which the user chose, so a made-up "Nodes=... GRES=gpu(IDX:...)" line among them
  // (Slurm's own is always there too) is told by its nodes or counts, and nothing is taken.
  StatusOr<std::vector<slurm::NodeGpus>> given = slurm::GpusGiven(r.out, nodes, count, shard_cards);
  if (!given.ok()) return given.status();
  std::vector<std::string> cards;
  for (const slurm::NodeGpus& n : *given) {
    for (int index : n.gpus) cards.push_back(SlurmCardUuid(n.node, index));
  }
  for (const slurm::NodeGpus& n : *given) {
    for (int index : n.shard_cards) cards.push_back(SlurmCardUuid(n.node, index));
  }
  return cards;
}

void SlurmEngine::FollowOutside(const std::vector<slurm::QueuedJob>& queue, const std::set<std::string>& ours) {
  std::set<std::string> running;
  for (const slurm::QueuedJob& q : queue) {
    if (q.state != "RUNNING" || ours.count(q.id) > 0) continue;
    // (Its MIG slices are not asked: Slurm's indices of them name no card of Rota's; TellHolders
    // names a holder for each from the queue's counts, ChargeOutside's runs.)
    if (GpusPerNode(q) == 0 && ShardCardsPerNode(q) == 0) continue;
    running.insert(q.id);
    // At most kOutsideAsks at a time: a user's thousand small sbatch jobs are named a few per
    // read, not a thousand scontrol at once (until then, counted).
    if (outside_.count(q.id) > 0 || outside_asking_ >= kOutsideAsks) continue;
    outside_[q.id].uid = q.uid;
    const std::string slurm_id = q.id;
    ++outside_asking_;
    commands_->Start(AsRotad({options_.scontrol, "-d", "show", "job", slurm_id}),
                     [this, slurm_id, node = q.nodes, count = GpusPerNode(q),
                      shard_cards = ShardCardsPerNode(q)](ChildResult r) {
      --outside_asking_;
      auto it = outside_.find(slurm_id);
      if (it == outside_.end()) return;  // ended meanwhile
      StatusOr<std::vector<std::string>> cards = GivenCards(r, node, count, shard_cards);
      if (!cards.ok()) {
        spdlog::debug("Slurm job {} (outside Rota): its GPUs are not known: {}", slurm_id, cards.status().message());
        return;
      }
      it->second.cards = std::move(*cards);
      TellHolders();
    });
  }
  bool gone = false;
  for (auto it = outside_.begin(); it != outside_.end();) {
    if (running.count(it->first) == 0) {
      it = outside_.erase(it);
      gone = true;
    } else {
      ++it;
    }
  }
  if (gone) TellHolders();
}

void SlurmEngine::ChargeOutside(const std::vector<slurm::QueuedJob>& queue, const std::set<std::string>& ours) {
  const Time now = clock_.Now();
  std::set<std::string> running;
  for (const slurm::QueuedJob& q : queue) {
    if (q.state != "RUNNING" || ours.count(q.id) > 0 ||
        (GpusPerNode(q) == 0 && ShardCardsPerNode(q) == 0 && SlicesPerNode(q) == 0))
      continue;
    running.insert(q.id);
    auto [it, added] = outside_runs_.try_emplace(q.id);
    OutsideRun& run = it->second;
    run.end = now;
    if (!added) continue;
    StatusOr<std::vector<std::string>> nodes = slurm::ExpandHostlist(q.nodes);
    const int node_count = nodes.ok() && !nodes->empty() ? static_cast<int>(nodes->size()) : 1;
    run.job = q.id;
    run.uid = q.uid;
    run.gpus = GpusPerNode(q) * node_count;
    run.start = q.start > 0 && q.start <= now ? q.start : now;
    if (nodes.ok()) run.nodes = *nodes;
    for (const slurm::Gres& g : q.per_node) {
      if (g.name == "shard" && g.count > 0) run.shards.emplace_back(g.type, g.count);
      if (g.count > 0 && slurm::IsGpuSlice(g)) run.slices.emplace_back(g.type, g.count);
    }
  }
  for (auto it = outside_runs_.begin(); it != outside_runs_.end();) {
    if (running.count(it->first) > 0) {
      ++it;
      continue;
    }
    OutsideRun& r = it->second;
    if (now - r.end <= kOutsideEndSlack) r.end = now;  // else the last read that listed it
    events_.OutsideRunEnded(r);
    it = outside_runs_.erase(it);
  }
}

std::vector<OutsideRun> SlurmEngine::OutsideRunning() const {
  std::vector<OutsideRun> out;
  out.reserve(outside_runs_.size());
  for (const auto& [id, r] : outside_runs_) out.push_back(r);
  return out;
}

void SlurmEngine::CatchUpOutside(Time since, std::set<std::string> ours) {
  catch_up_ = CatchUp{since, std::move(ours)};  // after the next read of the queue
}

void SlurmEngine::StartCatchUp(Time since, std::set<std::string> ours) {
  const Time until = clock_.Now();
  // Rota's jobs as this engine knows them now too: a launch found by its tag at the restart has
  // its Slurm id only since.
  for (const auto& [id, j] : jobs_) {
    if (!j.slurm_id.empty()) ours.insert(j.slurm_id);
  }
  if (options_.sacct.empty() || accounting_off_) {  // no accounting: nothing to learn, from now on
    events_.OutsideCaughtUp(until);
    return;
  }
  std::vector<std::string> argv = {options_.sacct};
  for (std::string& a : slurm::WindowArgs(since - kClockSlack, until)) argv.push_back(std::move(a));
  commands_->Start(AsRotad(std::move(argv)), [this, since, until, ours = std::move(ours)](ChildResult r) mutable {
    if (!r.ok()) {
      if (slurm::AccountingDisabled(r.out + r.err)) {  // no slurmdbd: nothing to learn
        events_.OutsideCaughtUp(until);
        return;
      }
      // The time kept stays: the next start asks again.
      spdlog::warn("jobs outside Rota that ended while rotad was away: Slurm's accounting does not "
                   "answer ({}); not charged", r.Describe());
      return;
    }
    StatusOr<std::vector<slurm::AccountedUse>> uses = slurm::ParseWindow(r.out);
    if (!uses.ok()) {
      spdlog::warn("jobs outside Rota that ended while rotad was away: {}; not charged", uses.status().message());
      return;
    }
    // Jobs Slurm requeued: the window lists their first run alone (slurm::RunsArgs), so every run
    // of theirs is asked by id.
    std::map<std::string, uid_t> requeued;
    for (const slurm::AccountedUse& u : *uses) {
      if (u.state == "REQUEUED" && ours.count(u.id) == 0 && requeued.size() < slurm::kAccountingBatch)
        requeued.emplace(u.id, u.uid);
    }
    if (requeued.empty()) {
      ChargeCaughtUp(since, until, ours, *uses);
    } else {
      ChargeWithLaterRuns(since, until, std::move(ours), std::move(*uses), std::move(requeued));
    }
  });
}

void SlurmEngine::ChargeWithLaterRuns(Time since, Time until, std::set<std::string> ours,
                                      std::vector<slurm::AccountedUse> uses, std::map<std::string, uid_t> requeued) {
  std::vector<std::string> ids;
  for (const auto& [id, uid] : requeued) ids.push_back(id);
  std::vector<std::string> argv = {options_.sacct};
  for (std::string& a : slurm::RunsArgs(ids)) argv.push_back(std::move(a));
  commands_->Start(AsRotad(std::move(argv)), [this, since, until, ours = std::move(ours), uses = std::move(uses),
                                              requeued = std::move(requeued)](ChildResult r) mutable {
    StatusOr<std::vector<slurm::AccountedUse>> more =
        r.ok() ? slurm::ParseWindow(r.out) : StatusOr<std::vector<slurm::AccountedUse>>(Unavailable(r.Describe()));
    if (!more.ok()) {
      spdlog::warn("the later runs of {} requeued job(s) outside Rota that ran while rotad was away: {}; "
                   "not charged", requeued.size(), more.status().message());
      ChargeCaughtUp(since, until, ours, uses);
      return;
    }
    for (slurm::AccountedUse& u : *more) {
      auto owner = requeued.find(u.id);
      const bool known = std::any_of(uses.begin(), uses.end(), [&](const slurm::AccountedUse& k) {
        return k.id == u.id && k.start == u.start;
      });
      if (owner == requeued.end() || known) continue;
      u.uid = owner->second;  // recorded as 0 (slurm::RunsArgs)
      uses.push_back(std::move(u));
    }
    ChargeCaughtUp(since, until, ours, uses);
  });
}

void SlurmEngine::ChargeCaughtUp(Time since, Time until, const std::set<std::string>& ours,
                                 const std::vector<slurm::AccountedUse>& uses) {
  int told = 0;
  for (const slurm::AccountedUse& u : uses) {
    // Ended in the window, held GPUs, not Rota's, not the run the queue reads follow (still
    // running; an earlier run of a job Slurm requeued is charged).
    if (u.end <= 0 || u.end < since || u.start <= 0 || u.end < u.start || u.state == "RUNNING") continue;
    const auto followed = outside_runs_.find(u.id);
    if ((u.gpus == 0 && u.shards.empty() && u.slices.empty()) || ours.count(u.id) > 0 ||
        (followed != outside_runs_.end() && followed->second.start == u.start))
      continue;
    // AllocTRES counts over all the job's nodes: its shards and slices are found on its first
    // node's cards.
    StatusOr<std::vector<std::string>> nodes = slurm::ExpandHostlist(u.nodes);
    std::vector<std::string> first;
    if (nodes.ok() && !nodes->empty()) first.push_back(nodes->front());
    events_.OutsideRunEnded({u.id, u.uid, u.gpus, u.start, u.end, first, u.shards, u.slices});
    ++told;
  }
  if (told > 0) spdlog::info("{} run(s) of jobs outside Rota ended while rotad was away: charged to their owners", told);
  events_.OutsideCaughtUp(until);
}

void SlurmEngine::CheckAccounting() {
  accounting_checked_ = true;  // once, after the first read that answered: slurmctld is there
  commands_->Start(AsRotad({options_.scontrol, "show", "config"}), [this](ChildResult r) {
    if (!r.ok()) {
      accounting_checked_ = false;  // asked again after a later read
      return;
    }
    TakeAccountingGap(r.out);
  });
}

void SlurmEngine::TakeAccountingGap(const std::string& show_config) {
  accounting_checked_ = true;
  accounting_gap_ = slurm::AccountingGap(show_config);
  if (!accounting_gap_.empty()) spdlog::warn("{}", accounting_gap_);
}

void SlurmEngine::TellHolders() {
  std::vector<ClusterHolder> holders;
  for (const auto& [slurm_id, job] : outside_) {
    for (const std::string& card : job.cards) holders.push_back({card, job.uid, slurm_id});
  }
  // MIG slices, from the queue's counts of each node's (which slice Slurm gave is not said).
  for (const auto& [slurm_id, run] : outside_runs_) {
    for (const std::string& node : run.nodes) {
      for (const auto& [type, count] : run.slices) {
        for (int k = 0; k < count; ++k) holders.push_back({SlicesUuid(node, type), run.uid, slurm_id});
      }
    }
  }
  if (holders == told_holders_) return;
  told_holders_ = holders;
  events_.ClusterHolders(holders);
}

Status SlurmEngine::Signal(JobId id, int signo) {
  if (signo <= 0 || signo >= 65) return InvalidArgument("bad signal number " + std::to_string(signo));
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.ended) return Status();  // already gone
  Job& j = it->second;
  if (j.slurm_id.empty()) {
    j.held_signals.push_back(signo);  // sent once the queue lists it
    return Status();
  }
  Cancel(id, j.slurm_id, signo);
  return Status();
}

StatusOr<Engine::SessionWrap> SlurmEngine::WrapSession(const SessionStart& start,
                                                       std::map<std::string, std::string> env) {
  if (jobs_.count(start.id) > 0)
    return FailedPrecondition("job " + std::to_string(start.id) + " is in Slurm already");
  // As for a batch job: not started on a Slurm that does not answer (the session waits).
  if (!reachable_) return Unavailable("Slurm does not answer: " + unreachable_why_);
  slurm::SessionJob s;
  s.id = start.id;
  s.node = start.node.empty() ? options_.node : start.node;
  s.gpus = start.gpus;
  s.cards = start.cards;
  s.shares = start.shares;
  s.memory_bytes = start.memory_bytes;
  s.time_limit = start.time_limit;
  std::tie(s.reservation, s.limit_cap) = ReservationFor(start.user, s.node, clock_.Now());
  slurm::SessionCommand c = slurm::BuildSessionCommand(s, options_.srun, options_.submit);
  SessionWrap w;
  w.argv = std::move(c.argv);
  w.tty_argv = std::move(c.tty_argv);
  // A session started from inside a Slurm job would otherwise become a step of that job.
  w.unset_prefixes = {"SLURM_", "SBATCH_", "SALLOC_", "SRUN_"};
  for (auto& [k, v] : env) {
    if (!slurm::DroppedFromSubmission(k)) w.env.emplace(k, std::move(v));
  }
  if (!options_.submit.slurm_conf.empty()) w.env["SLURM_CONF"] = options_.submit.slurm_conf;
  Job& j = jobs_[start.id];
  j.session = true;
  j.phase = Phase::kSubmitted;
  j.uid = start.uid;
  j.since = clock_.Now();
  return w;
}

void SlurmEngine::EndSession(JobId id, uid_t uid) {
  auto it = jobs_.find(id);
  std::string slurm_id;
  if (it != jobs_.end()) {
    if (!it->second.session) return;
    slurm_id = it->second.slurm_id;
    jobs_.erase(it);
  }
  // Its srun may have been killed, or its client lost, with the allocation still held: cancelled
  // (by its tag and owner when its Slurm id was never read; a session re-adopted after a restart).
  std::vector<std::string> argv = {options_.scancel};
  if (slurm_id.empty()) {
    argv.push_back("--name=" + slurm::TagOf(options_.submit.tag, id));
    argv.push_back("--user=" + std::to_string(uid));
  } else {
    argv.push_back(slurm_id);
  }
  commands_->Start(AsRotad(std::move(argv)), [id](ChildResult r) {
    if (!r.ok()) spdlog::debug("job {}: scancel of the session's allocation: {}", id, r.Describe());
  });
}

void SlurmEngine::Booked(const std::vector<BookedNodes>& bookings) {
  std::vector<slurm::Reservation> wanted;
  for (const BookedNodes& b : bookings) {
    slurm::Reservation r;
    r.name = slurm::ReservationName(options_.submit.tag, b.booking);
    r.users = {b.user};
    r.nodes = b.nodes;
    std::sort(r.nodes.begin(), r.nodes.end());
    r.start = b.start;
    r.end = b.end;
    wanted.push_back(std::move(r));
  }
  if (wanted == wanted_reservations_) return;
  wanted_reservations_ = std::move(wanted);
  SyncReservations();
}

std::pair<std::string, Duration> SlurmEngine::ReservationFor(const std::string& user, const std::string& node,
                                                             Time now) const {
  std::string into;
  Duration cap = 0;
  if (node.empty()) return {into, cap};
  for (const slurm::Reservation& r : wanted_reservations_) {
    if (present_reservations_.count(r.name) == 0 ||
        std::find(r.nodes.begin(), r.nodes.end(), node) == r.nodes.end()) {
      continue;
    }
    const bool own = std::find(r.users.begin(), r.users.end(), user) != r.users.end();
    if (own && r.start <= now && now < r.end) {
      into = r.name;
    } else if (r.start > now) {
      cap = cap == 0 ? r.start - now : std::min(cap, r.start - now);
    }
  }
  return {into, cap};
}

void SlurmEngine::SyncReservations() {
  if (reservations_syncing_) {
    reservations_again_ = true;
    return;
  }
  reservations_syncing_ = true;
  reservations_again_ = false;
  next_reservation_check_ = clock_.Now() + kReservationCheckS;
  commands_->Start(AsRotad({options_.scontrol, "show", "reservation", "-o"}), [this](ChildResult r) {
    StatusOr<std::vector<slurm::Reservation>> existing =
        r.ok() ? slurm::ParseReservations(r.out)
               : StatusOr<std::vector<slurm::Reservation>>(Unavailable(r.Describe()));
    if (!existing.ok()) {
      if (reservations_error_ != existing.status().message()) {
        reservations_error_ = existing.status().message();
        spdlog::warn("Slurm's reservations cannot be read ({}): bookings are not reserved in Slurm for now",
                     reservations_error_);
      }
      ApplyReservations({}, 0);
      return;
    }
    present_reservations_.clear();
    for (const slurm::Reservation& e : *existing) {
      if (slurm::BookingOfReservation(options_.submit.tag, e.name) > 0) present_reservations_.insert(e.name);
    }
    ApplyReservations(slurm::PlanReservations(options_.submit.tag, wanted_reservations_, *existing, clock_.Now()), 0);
  });
}

void SlurmEngine::ApplyReservations(std::vector<slurm::ReservationChange> plan, size_t next) {
  if (next >= plan.size()) {
    reservations_syncing_ = false;
    if (reservations_again_) SyncReservations();
    return;
  }
  const slurm::ReservationChange change = plan[next];
  commands_->Start(
      AsRotad(slurm::ReservationArgv(options_.scontrol, change, clock_.Now())),
      [this, change, plan = std::move(plan), next](ChildResult r) mutable {
        using Kind = slurm::ReservationChange::Kind;
        const char* what = change.kind == Kind::kCreate ? "made" : change.kind == Kind::kUpdate ? "changed" : "deleted";
        if (r.ok()) {
          reservations_error_.clear();
          reservation_failures_.erase(change.r.name);
          if (change.kind == Kind::kDelete) {
            present_reservations_.erase(change.r.name);
          } else {
            present_reservations_.insert(change.r.name);
          }
          spdlog::info("Slurm reservation {} {} (nodes {}, for {})", change.r.name, what,
                       fmt::join(change.r.nodes, ","), fmt::join(change.r.users, ","));
        } else {
          // Tried again at every check: said once for as long as it fails the same way.
          std::string& last = reservation_failures_[change.r.name];
          if (last != r.Describe()) {
            last = r.Describe();
            spdlog::warn("Slurm reservation {} could not be {}: {}", change.r.name, what, last);
          }
        }
        ApplyReservations(std::move(plan), next + 1);
      });
}

void SlurmEngine::Poke() {
  if (reading_) {
    read_again_ = true;
    return;
  }
  const auto since = std::chrono::steady_clock::now() - last_read_;
  if (since < std::chrono::milliseconds(kPokeGapMs)) {
    poke_timer_->Arm(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::milliseconds(kPokeGapMs) - since)
            .count());
    return;
  }
  ReadQueue();
}

bool SlurmEngine::PokeAndWait(std::function<void()> settled) {
  if (poke_waiters_.size() >= kPokeWaiters) {
    Poke();
    return false;
  }
  poke_waiters_.push_back(
      {reads_begun_ + 1, std::chrono::steady_clock::now() + std::chrono::milliseconds(kPokeWaitMs), std::move(settled)});
  if (!poke_wait_timer_->armed()) poke_wait_timer_->Arm(kPokeWaitMs * 1'000'000);
  Poke();  // begins that read now, or makes it the next one
  return true;
}

void SlurmEngine::SettlePokes() {
  if (poke_waiters_.empty()) return;
  const auto now = std::chrono::steady_clock::now();
  const bool submitting = std::any_of(jobs_.begin(), jobs_.end(),
                                      [](const auto& j) { return j.second.phase == Phase::kSubmitting; });
  std::vector<std::function<void()>> due;
  std::erase_if(poke_waiters_, [&](PokeWaiter& w) {
    if (now < w.deadline && (reads_applied_ < w.read || submitting)) return false;
    due.push_back(std::move(w.settled));
    return true;
  });
  if (!poke_waiters_.empty() && !poke_wait_timer_->armed()) {
    poke_wait_timer_->Arm(std::max<long long>(
        1, std::chrono::duration_cast<std::chrono::nanoseconds>(poke_waiters_.front().deadline - now).count()));
  }
  for (std::function<void()>& f : due) f();
}

void SlurmEngine::ArmPoll() {
  // Also with no job of Rota's in Slurm: whether Slurm answers decides whether jobs are sent.
  poll_timer_->Arm(std::chrono::duration_cast<std::chrono::nanoseconds>(options_.poll).count());
}

void SlurmEngine::ReadQueue() {
  if (reading_) return;
  reading_ = true;
  read_again_ = false;
  ++reads_begun_;
  last_read_ = std::chrono::steady_clock::now();
  commands_->Start(QueueCommand(), [this](ChildResult queue) {
    // Then the names of the jobs followed (none: no second call).
    std::vector<JobId> ids;
    for (const auto& [id, j] : jobs_) ids.push_back(id);
    if (ids.empty() || !queue.ok()) {
      OnQueue(ReadQueueWithNames(queue, nullptr));
      return;
    }
    commands_->Start(NamesCommand(ids), [this, queue = std::move(queue)](ChildResult names) {
      OnQueue(ReadQueueWithNames(queue, &names));
    });
  });
}

StatusOr<std::vector<slurm::QueuedJob>> SlurmEngine::ReadQueueWithNames(const ChildResult& queue,
                                                                         const ChildResult* names) {
  if (!queue.ok()) return Unavailable(queue.Describe());
  StatusOr<std::vector<slurm::QueuedJob>> q = slurm::ParseQueue(queue.out);
  if (!q.ok() || names == nullptr) return q;
  if (!names->ok()) return Unavailable(names->Describe());
  StatusOr<std::vector<slurm::QueuedJob>> ours = slurm::ParseOurs(names->out);
  if (!ours.ok()) return ours.status();
  slurm::MergeOurs(*q, std::move(*ours));
  return q;
}

ChildCommand SlurmEngine::NamesCommand(const std::vector<JobId>& ids) const {
  return AsRotad({options_.squeue, "-h", "-a", "-t", "all", slurm::NamesFilter(options_.submit.tag, ids), "-O",
                  slurm::OursFormat()});
}

void SlurmEngine::OnQueue(StatusOr<std::vector<slurm::QueuedJob>> queue) {
  reading_ = false;
  reads_applied_ = reads_begun_;  // a failed read too: there is nothing more to wait for
  if (!queue.ok()) {
    if (reachable_) spdlog::error("Slurm's queue cannot be read: {}", queue.status().message());
    reachable_ = false;
    unreachable_why_ = queue.status().message();
  } else {
    const bool back = !reachable_;
    if (back) spdlog::info("Slurm's queue can be read again");
    reachable_ = true;
    unreachable_why_.clear();
    if (back) events_.EngineAvailable();
    // A job completing (its epilogs run: an EpilogSlurmctld's poke comes before COMPLETED) is
    // looked at again soon, not at the next poll.
    if (Apply(*queue) > 0) poke_timer_->Arm(kCompletingRecheckMs * 1'000'000);
    if (clock_.Now() >= next_reservation_check_) SyncReservations();
    if (!accounting_checked_) CheckAccounting();
  }
  if (read_again_) {
    ReadQueue();
  } else {
    ArmPoll();
  }
}

const slurm::QueuedJob* SlurmEngine::Find(const std::vector<slurm::QueuedJob>& queue, JobId id,
                                          const Job& j) const {
  const std::string tag = slurm::TagOf(options_.submit.tag, id);
  const slurm::QueuedJob* best = nullptr;
  for (const slurm::QueuedJob& q : queue) {
    if (q.name != tag || (j.uid_known && q.uid != j.uid)) continue;
    if (!j.slurm_id.empty()) {
      if (q.id == j.slurm_id) return &q;
      continue;
    }
    if (!j.claimed_id.empty() && q.id == j.claimed_id) return &q;
    // An earlier run of the same job (requeued since) that ended before this launch began.
    if (!slurm::Active(q.state) && q.end > 0 && j.since > 0 && q.end + kClockSlack < j.since) continue;
    // Its Slurm id not known yet: the one that runs, else the latest (an earlier launch of the
    // same job, requeued since, may still be listed as ended).
    if (best == nullptr) {
      best = &q;
      continue;
    }
    const bool active = slurm::Active(q.state), best_active = slurm::Active(best->state);
    const bool later = q.id.size() != best->id.size() ? q.id.size() > best->id.size() : q.id > best->id;
    if ((active && !best_active) || (active == best_active && later)) best = &q;
  }
  return best;
}

int SlurmEngine::Apply(const std::vector<slurm::QueuedJob>& queue) {
  int completing = 0;
  std::vector<JobId> ids;
  std::set<std::string> ours;
  for (const auto& [id, j] : jobs_) ids.push_back(id);
  // A job being submitted is Rota's before Find can tell: its tag and owner.
  for (const slurm::QueuedJob& q : queue) {
    auto it = jobs_.find(slurm::RotaJobOf(options_.submit.tag, q.name));
    if (it != jobs_.end() && (!it->second.uid_known || it->second.uid == q.uid)) ours.insert(q.id);
  }
  const Time now = clock_.Now();
  for (JobId id : ids) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) continue;  // gone through a report's consequences
    Job& j = it->second;
    if (j.ended || j.phase == Phase::kSubmitting) continue;
    const slurm::QueuedJob* q = Find(queue, id, j);
    if (q != nullptr) {
      ours.insert(q->id);
      j.missing = 0;
      if (j.slurm_id.empty()) {
        j.slurm_id = q->id;
        j.phase = Phase::kSubmitted;
        RecordLaunch(id, j);
        if (!j.withdrawn) events_.JobNamed(id, "Slurm job " + j.slurm_id);
        for (int signo : j.held_signals) Cancel(id, j.slurm_id, signo);
        j.held_signals.clear();
      }
      if (j.session) {
        // Its client says when it ends (srun returns with the command); Slurm's record only names
        // it and tells its GPUs.
        if (q->state == "RUNNING" && !j.gpus_asked) {
          j.gpus_asked = true;
          AskGpus(id, *q);
        }
        continue;
      }
      if (std::optional<JobExit> exit = slurm::ExitOf(*q)) {
        Ended(id, j, *exit);
        continue;
      }
      if (q->state == "COMPLETING") {
        // Its processes are done; Slurm still runs its epilogs. Its GPUs may go to the next job
        // now (Slurm starts that one once they are free); how it ended comes with COMPLETED.
        if (!j.released && !j.withdrawn) {
          j.released = true;
          events_.JobReleased(id, q->end > 0 ? q->end : now);
        }
        ++completing;
      }
      if (q->state == "RUNNING" && !j.gpus_asked && !j.withdrawn) {
        j.gpus_asked = true;
        AskGpus(id, *q);
      }
      if (j.withdrawn && !j.cancel_sent) {
        j.cancel_sent = true;
        Cancel(id, j.slurm_id, 0);
      }
      continue;
    }
    if (j.session) continue;  // its client may not have run srun yet
    ++j.missing;
    const bool waited =
        now - j.since >= std::chrono::duration_cast<std::chrono::seconds>(options_.deadline).count();
    if (j.asking_accounting || j.missing < kUncertainPolls) continue;
    if (j.phase == Phase::kUncertain && waited) {
      // Slurm may have run and forgotten it (rotad away longer than MinJobAge): its accounting,
      // where there is one, says whether it was submitted before it is sent again.
      if (!j.withdrawn && !accounting_off_) {
        AskAccounting(id, j);
        continue;
      }
      Ended(id, j, NotSubmitted(""));
    } else if (j.phase == Phase::kSubmitted) {
      if (!j.withdrawn && !accounting_off_) {
        AskAccounting(id, j);
        continue;
      }
      Ended(id, j, UnknownEnd(j.slurm_id, ""));
    }
  }
  FollowOutside(queue, ours);
  ChargeOutside(queue, ours);
  TellHolders();  // the slices held, as ChargeOutside follows them (told when they changed)
  if (catch_up_) {
    // After a read: what still ran then is followed from here on (outside_runs_), what ended
    // before it is in Slurm's accounting.
    std::optional<CatchUp> asked = std::move(catch_up_);
    catch_up_.reset();
    StartCatchUp(asked->since, std::move(asked->ours));
  }
  return completing;
}

const std::optional<std::vector<slurm::QueuedJob>>& SlurmEngine::StartupQueue() {
  if (!startup_read_) {
    startup_read_ = true;
    // The names of the jobs launched before (their launch files): a job whose file was lost is
    // not found by its tag, and ends as one Slurm no longer lists (its accounting may say how).
    ChildResult r = ChildCommands::RunNow(QueueCommand());
    const std::vector<JobId> ids = LaunchIds();
    std::optional<ChildResult> names;
    if (r.ok() && !ids.empty()) names = ChildCommands::RunNow(NamesCommand(ids));
    StatusOr<std::vector<slurm::QueuedJob>> q = ReadQueueWithNames(r, names ? &*names : nullptr);
    if (q.ok()) {
      startup_queue_ = std::move(*q);
      ReadMinJobAge();
    } else {
      reachable_ = false;
      unreachable_why_ = q.status().message();
      spdlog::error(
          "Slurm's queue cannot be read at start ({}): jobs launched before are followed once it can",
          unreachable_why_);
    }
  }
  return startup_queue_;
}

void SlurmEngine::ReadMinJobAge() {
  ChildResult r = ChildCommands::RunNow(AsRotad({options_.scontrol, "show", "config"}));
  if (r.ok()) TakeAccountingGap(r.out);  // the same answer: not asked again after the first read
  const std::string value = r.ok() ? slurm::ConfigValue(r.out, "MinJobAge") : "";
  StatusOr<long> seconds = slurm::ConfigSeconds(value);
  if (!seconds.ok()) {
    spdlog::warn("Slurm's MinJobAge is not known ({}): taken as {} s",
                 r.ok() ? seconds.status().message() : r.Describe(), listed_after_end_);
    return;
  }
  // 0: Slurm never forgets an ended job, so one it does not list never reached it.
  listed_after_end_ = *seconds == 0 ? std::numeric_limits<Duration>::max() / 2 : *seconds;
}

StatusOr<exec::FoundLaunch> SlurmEngine::FindLaunch(JobId id) {
  exec::FoundLaunch found;
  std::optional<LaunchFile> file;
  const Job probe = Probe(id, file);
  const std::optional<std::vector<slurm::QueuedJob>>& queue = StartupQueue();
  const slurm::QueuedJob* q = queue ? Find(*queue, id, probe) : nullptr;
  // Without a launch file (none was begun, or it was lost), only a job that runs counts: an ended
  // entry of its tag is an earlier run's (the file of a run is removed once its end is recorded).
  if (!file && q != nullptr && !slurm::Active(q->state)) q = nullptr;
  if (file) found.note = file->note;
  if (q != nullptr) {
    found.state =
        slurm::Active(q->state) ? exec::FoundLaunch::State::kRunning : exec::FoundLaunch::State::kEnded;
    return found;
  }
  if (!file) return found;  // no launch was begun (or none that Slurm knows of)
  // A launch was begun but Slurm does not list it (or cannot be asked): followed as running, so
  // that it is never submitted twice; the queue's next readings tell what became of it.
  found.state = exec::FoundLaunch::State::kRunning;
  return found;
}

SlurmEngine::Job SlurmEngine::Probe(JobId id, std::optional<LaunchFile>& file) const {
  Job j;
  StatusOr<std::string> text = exec::ReadFile(LaunchPath(id));
  StatusOr<LaunchFile> f = text.ok() ? ParseLaunchFile(*text) : StatusOr<LaunchFile>(text.status());
  if (f.ok()) {
    file = *f;
    j.uid = f->uid;
    j.since = f->written;
    j.note = f->note;
    j.slurm_id = f->slurm_id;
  } else {
    j.uid_known = false;  // found by its tag alone
  }
  return j;
}

StatusOr<Started> SlurmEngine::Adopt(JobId id, pid_t, Time started) {
  std::optional<LaunchFile> file;
  Job j = Probe(id, file);
  j.phase = Phase::kSubmitted;
  // Read first: it also reads MinJobAge, which the launch file's age is held against.
  const std::optional<std::vector<slurm::QueuedJob>>& queue = StartupQueue();
  if (!file) {
    j.since = started;
    spdlog::warn("job {}: its launch file cannot be read: matched in Slurm by its name alone", id);
    // It was not among those asked with the startup queue (the launch files'): asked now.
    if (startup_queue_) {
      ChildResult r = ChildCommands::RunNow(NamesCommand({id}));
      StatusOr<std::vector<slurm::QueuedJob>> ours =
          r.ok() ? slurm::ParseOurs(r.out) : StatusOr<std::vector<slurm::QueuedJob>>(Unavailable(r.Describe()));
      if (ours.ok()) slurm::MergeOurs(*startup_queue_, std::move(*ours));
    }
  } else if (!file->submitted && clock_.Now() - file->written < listed_after_end_) {
    // Perhaps never submitted (rotad died while sbatch ran): looked for a while before it counts
    // as lost. Older than Slurm keeps ended jobs, it reached Slurm or it would have been listed.
    j.phase = Phase::kUncertain;
  }
  if (queue) {
    const slurm::QueuedJob* q = Find(*queue, id, j);
    if (q == nullptr && j.phase == Phase::kSubmitted)
      return NotFound("Slurm no longer lists it: it has exited");
    if (q != nullptr && !slurm::Active(q->state)) return NotFound("Slurm job " + q->id + " has exited");
    if (q != nullptr) {
      j.slurm_id = q->id;
      j.phase = Phase::kSubmitted;
    }
  }
  jobs_[id] = j;
  return Started{};
}

JobExit SlurmEngine::Collect(JobId id, pid_t) {
  std::optional<LaunchFile> file;
  const Job probe = Probe(id, file);
  const std::optional<std::vector<slurm::QueuedJob>>& queue = StartupQueue();
  if (const slurm::QueuedJob* q = queue ? Find(*queue, id, probe) : nullptr) {
    if (std::optional<JobExit> exit = slurm::ExitOf(*q)) return *exit;
  }
  std::string why;
  if (!accounting_off_ && !startup_accounting_failed_) {
    // Before the loop runs, as the startup queue is read: the runs of every launch file's job in
    // one sacct (a batch of them), read once; a job without a file on its own. A sacct that does
    // not answer is not asked again during the restart (each call would wait its deadline).
    const bool batched = file.has_value() && StartupAccounting().count(id) > 0;
    const ChildResult r =
        batched ? *startup_accounting_[id] : ChildCommands::RunNow(AccountingCommand(std::span(&id, 1), probe.since));
    if (std::optional<slurm::QueuedJob> run = AccountedRun(id, probe, r, why)) {
      if (std::optional<JobExit> exit = slurm::ExitOf(*run)) return *exit;
    }
    if (!r.ok() && !accounting_off_) startup_accounting_failed_ = true;
  }
  JobExit e = UnknownEnd("", why);
  e.reason = "it ended in Slurm while rotad was away, and Slurm no longer lists it" +
             (why.empty() ? std::string() : " (" + why + ")");
  return e;
}

ChildCommand SlurmEngine::AccountingCommand(std::span<const JobId> ids, Time since) const {
  // From just before its launch began; a run of the same Rota job before that (requeued since)
  // ended earlier and is passed over by Find. Without a launch file: every run of its tag.
  std::vector<std::string> argv = {options_.sacct};
  for (std::string& a : slurm::AccountingArgs(options_.submit.tag, ids, since > 0 ? since - kClockSlack : 0))
    argv.push_back(std::move(a));
  return AsRotad(std::move(argv));
}

const std::map<JobId, std::shared_ptr<const ChildResult>>& SlurmEngine::StartupAccounting() {
  if (startup_accounting_read_) return startup_accounting_;
  startup_accounting_read_ = true;
  std::vector<std::pair<JobId, Time>> launches;
  for (JobId id : LaunchIds()) {
    std::optional<LaunchFile> file;
    const Job probe = Probe(id, file);
    if (file) launches.emplace_back(id, probe.since);
  }
  for (size_t at = 0; at < launches.size(); at += slurm::kAccountingBatch) {
    const size_t end = std::min(launches.size(), at + slurm::kAccountingBatch);
    std::vector<JobId> ids;
    Time since = launches[at].second;
    for (size_t i = at; i < end; ++i) {
      ids.push_back(launches[i].first);
      since = std::min(since, launches[i].second);
    }
    // Each job's own entry is picked out of the batch's by Find (its tag, owner, launch time).
    auto r = std::make_shared<const ChildResult>(ChildCommands::RunNow(AccountingCommand(ids, since)));
    spdlog::info("Slurm's accounting asked at once for the {} jobs launched before the restart{}", ids.size(),
                 r->ok() ? "" : ": " + r->Describe());
    for (JobId id : ids) startup_accounting_[id] = r;
    if (!r->ok()) break;  // the rest are not in the map: asked one by one, or not at all once it fails
  }
  return startup_accounting_;
}

std::vector<JobId> SlurmEngine::LaunchIds() const {
  std::vector<JobId> ids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(options_.run_dir, ec)) {
    const std::string name = entry.path().filename().string();
    const size_t dot = name.find(".launch");
    if (dot == std::string::npos || dot + 7 != name.size()) continue;
    JobId id = 0;
    if (slurm::WholeNumber(std::string_view(name).substr(0, dot), id) && id > 0) ids.push_back(id);
  }
  return ids;
}

std::optional<slurm::QueuedJob> SlurmEngine::AccountedRun(JobId id, const Job& j, const ChildResult& r,
                                                          std::string& why) {
  if (!r.ok()) {
    if (slurm::AccountingDisabled(r.out + r.err)) {
      accounting_off_ = true;
      spdlog::info("Slurm keeps no accounting (no slurmdbd): how a job ended that Slurm no longer "
                   "lists is not known");
      why = "";
    } else {
      why = "Slurm's accounting does not answer: " + r.Describe();
    }
    return std::nullopt;
  }
  StatusOr<std::vector<slurm::QueuedJob>> runs = slurm::ParseAccounting(r.out);
  if (!runs.ok()) {
    why = "Slurm's accounting cannot be read: " + runs.status().message();
    return std::nullopt;
  }
  const slurm::QueuedJob* q = Find(*runs, id, j);
  if (q == nullptr) {
    why = "Slurm's accounting has no record of it";
    return std::nullopt;
  }
  if (slurm::Active(q->state)) {
    why = "Slurm's accounting says Slurm job " + q->id + " is " + q->state + ", but slurmctld does not list it";
  } else {
    spdlog::info("job {}: Slurm job {} ended as {} (from Slurm's accounting)", id, q->id, q->state);
  }
  return *q;
}

void SlurmEngine::AskAccounting(JobId id, Job& j) {
  j.asking_accounting = true;
  commands_->Start(AccountingCommand(std::span(&id, 1), j.since), [this, id](ChildResult r) {
    auto it = jobs_.find(id);
    if (it == jobs_.end() || it->second.ended) return;
    Job& job = it->second;
    job.asking_accounting = false;
    std::string why;
    const std::optional<slurm::QueuedJob> run = AccountedRun(id, job, r, why);
    const std::optional<JobExit> exit = run ? slurm::ExitOf(*run) : std::nullopt;
    if (exit) {
      Ended(id, job, *exit);
      return;
    }
    // Not answering (slurmdbd restarting), or a record that says it runs where slurmctld does not
    // list it (slurmdbd not told yet): asked again after as many reads of the queue, a few times.
    if ((!r.ok() || run) && !accounting_off_ && ++job.accounting_failures < kAccountingTries) {
      job.missing = 0;
      spdlog::warn("job {}: {}; asked again", id, why);
      return;
    }
    if (job.phase == Phase::kUncertain && !run) {
      Ended(id, job, NotSubmitted(r.ok() ? " nor its accounting" : " (" + why + ")"));
      return;
    }
    Ended(id, job, UnknownEnd(job.slurm_id.empty() && run ? run->id : job.slurm_id, why));
  });
}

JobExit SlurmEngine::NotSubmitted(const std::string& more) {
  JobExit e;
  e.kind = JobExit::Kind::kStartFailed;
  e.machine_fault = true;
  e.reason = "its submission to Slurm did not go through (Slurm does not list it" + more + ")";
  return e;
}

void SlurmEngine::RecordLaunch(JobId id, const Job& j) {
  if (j.withdrawn || j.ended) return;  // its file goes with it
  LaunchFile f{j.uid, j.note, j.since, true, j.slurm_id};
  if (Status s = exec::WriteFileAtomic(LaunchPath(id), LaunchFileText(f), 0600); !s.ok()) {
    // The file says only that a launch began: a restart looks for it as a submission of unknown outcome.
    spdlog::warn("job {}: cannot note its submission in its launch file: {}", id, s.message());
  }
}

JobExit SlurmEngine::UnknownEnd(const std::string& slurm_id, const std::string& why) {
  JobExit e;
  e.kind = JobExit::Kind::kVanished;
  e.reason = slurm_id.empty() ? "Slurm does not list it" : "Slurm no longer lists job " + slurm_id;
  e.reason += "; how it ended is not known";
  if (!why.empty()) e.reason += " (" + why + ")";
  return e;
}

int SlurmEngine::RemoveLeftovers(const std::function<bool(JobId)>& in_use) {
  int removed = 0;
  for (JobId id : LaunchIds()) {
    if (!in_use(id) && jobs_.count(id) == 0 && exec::RemoveFile(LaunchPath(id)).ok()) ++removed;
  }
  return removed;
}

void SlurmEngine::Forget(JobId id) {
  auto it = jobs_.find(id);
  if (it != jobs_.end() && !it->second.ended && !it->second.withdrawn) return;  // still running: kept
  jobs_.erase(id);
  (void)exec::RemoveFile(LaunchPath(id));
}

void SlurmEngine::AfterEvents() {
  // The restart's reading is for the recovery only: later questions read the queue afresh.
  if (startup_read_) {
    startup_read_ = false;
    startup_queue_.reset();
  }
  if (!reading_ && !poll_timer_->armed()) ArmPoll();
  SettlePokes();
}

}  // namespace rota::daemon

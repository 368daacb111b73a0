// Tested by job_json_test.cc.
#include "api/job_json.h"

#include <string>

namespace rota::api {

using nlohmann::json;

const char* WaitReasonWire(WaitReason reason) {
  switch (reason) {
    case WaitReason::kResources: return "resources";
    case WaitReason::kPriority: return "priority";
    case WaitReason::kQuotaExhausted: return "quota";
    case WaitReason::kDependency: return "dependency";
    case WaitReason::kBooking: return "booking";
    case WaitReason::kPeakHours: return "peak_hours";
    case WaitReason::kImpossible: return "impossible";
    case WaitReason::kStartRetry: return "start_retry";
  }
  return "resources";
}

json RequestToJson(const Request& r) {
  switch (r.kind) {
    case RequestKind::kWholeGpus: return {{"kind", "gpus"}, {"gpus", r.gpus}};
    case RequestKind::kMemShare: return {{"kind", "gpu_mem"}, {"memory", r.memory}};
    case RequestKind::kMig: return {{"kind", "mig"}, {"profile", r.mig_profile}};
  }
  return json::object();
}

namespace {

Time OrZero(Time t) { return t == kNever ? 0 : t; }

// An image reference a user may ask for (`--image`): 1 to 255 characters of A-Z a-z 0-9 and
// ._/:@+=-, not starting with '-' and without "..": a registry name (ghcr.io/lab/img:tag,
// img@sha256:...) or, for Apptainer, an image file's path. Says what is wrong.
Status CheckImageName(std::string_view image) {
  if (image.size() > 255) return InvalidArgument("is longer than 255 characters");
  if (image[0] == '-') return InvalidArgument("starts with '-'");
  if (image.find("..") != std::string_view::npos) return InvalidArgument("contains \"..\"");
  for (char c : image) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string_view("._/:@+=-").find(c) != std::string_view::npos;
    if (!ok) return InvalidArgument("may hold only letters, digits and . _ / : @ + = -");
  }
  return Status::Ok();
}

Status Bad(std::string_view field, std::string_view what) {
  return InvalidArgument("\"" + std::string(field) + "\" " + std::string(what));
}

// Reads an optional integer member into `out`, checking [lo, hi].
Status ReadInt(const json& j, const char* field, std::int64_t lo, std::int64_t hi, std::int64_t& out) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return Status();
  if (!it->is_number_integer()) return Bad(field, "must be a whole number");
  std::int64_t v = it->get<std::int64_t>();
  if (v < lo || v > hi) {
    return Bad(field, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", not " +
                          std::to_string(v));
  }
  out = v;
  return Status();
}

Status ReadString(const json& j, const char* field, std::string& out) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return Status();
  if (!it->is_string()) return Bad(field, "must be a string");
  out = it->get<std::string>();
  return Status();
}

StatusOr<Request> ParseRequest(const json& j) {
  Request r;
  auto it = j.find("request");
  if (it == j.end() || it->is_null()) return r;
  if (!it->is_object()) return Bad("request", "must be an object");
  std::string kind = "gpus";
  if (Status s = ReadString(*it, "kind", kind); !s.ok()) return s;
  if (kind == "gpus") {
    std::int64_t n = 1;
    if (Status s = ReadInt(*it, "gpus", 1, 1024, n); !s.ok()) return s;
    r.kind = RequestKind::kWholeGpus;
    r.gpus = static_cast<int>(n);
  } else if (kind == "gpu_mem") {
    std::int64_t m = 0;
    if (Status s = ReadInt(*it, "memory", 1, std::int64_t{1} << 40, m); !s.ok()) return s;
    if (m == 0) return Bad("memory", "is required for a gpu_mem request (MiB)");
    r.kind = RequestKind::kMemShare;
    r.memory = m;
  } else if (kind == "mig") {
    if (Status s = ReadString(*it, "profile", r.mig_profile); !s.ok()) return s;
    if (r.mig_profile.empty()) return Bad("profile", "is required for a mig request (e.g. \"3g.40gb\")");
    r.kind = RequestKind::kMig;
  } else {
    return Bad("kind", "must be \"gpus\", \"gpu_mem\" or \"mig\", not \"" + kind + "\"");
  }
  return r;
}

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string ExpandOutput(const std::string& output, JobId id) {
  std::string out;
  for (size_t i = 0; i < output.size(); ++i) {
    if (output[i] == '%' && i + 1 < output.size() && output[i + 1] == 'j') {
      out += std::to_string(id);
      ++i;
    } else {
      out += output[i];
    }
  }
  return out;
}

json JobToJson(const store::JobRecord& r, const PendingInfo* pending, bool with_private) {
  const Job& j = r.job;
  json out = {{"id", j.id},
              {"user", j.user},
              {"uid", r.uid},
              {"project", j.project},
              {"name", j.name},
              {"tier", TierName(j.tier)},
              {"request", RequestToJson(j.request)},
              {"time_limit", j.time_limit},
              {"submit_time", j.submit_time},
              {"after", j.after},
              {"after_ok", j.after_ok},
              {"signal", j.signal},
              {"grace", j.grace},
              {"requeue", j.requeue},
              {"mem_per_gpu", j.host_mem_per_gpu},
              {"interactive", r.interactive},
              {"state", store::JobStateName(r.state)},
              {"start_time", r.start_time},
              {"end_time", r.end_time},

              {"gpus", r.placement.alloc.gpus},
              {"gpu_uuids", r.placement.gpu_uuids},
              {"mig_uuid", r.placement.mig_uuid},
              {"mig_index", r.placement.alloc.mig},
              {"gpu_mem", r.placement.alloc.memory},
              {"preemptible", r.preemptible},
              {"kill_at", r.state == store::JobState::kRunning ? OrZero(r.kill_at) : 0}};
  // How it ended, in words and code, is its owner's (and the admins'): an end reason can name
  // paths and the failures of someone's work. Others see its state.
  out["exit_code"] = with_private && r.exit_code ? json(*r.exit_code) : json(nullptr);
  out["end_reason"] = with_private ? r.end_reason : std::string();
  if (with_private) {
    out["command"] = r.command;
    out["cwd"] = r.cwd;
    if (!r.image.empty()) out["image"] = r.image;
    if (r.deadline > 0) out["deadline"] = r.deadline;
    out["output"] = r.interactive ? std::string() : ExpandOutput(r.output, j.id);
  }
  if (!r.engine_job.empty()) out["engine_job"] = r.engine_job;
  if (pending != nullptr && r.state == store::JobState::kPending) {
    const PriorityFactors& f = pending->factors;
    out["pending"] = {{"reason", WaitReasonWire(pending->reason)},
                      {"expected_start", OrZero(pending->expected_start)},
                      {"estimated", pending->estimated},
                      {"priority", f.priority},
                      {"factors",
                       {{"tier", f.tier},
                        {"fairshare", f.fairshare},
                        {"age", f.age},
                        {"size", f.size},
                        {"penalty", f.penalty},
                        {"time_of_day", f.time_of_day}}},
                      {"size_on", f.sized_on_prediction ? "prediction" : "limit"},
                      {"protected", f.is_protected}};
    if (j.promise != kNever) out["pending"]["promise"] = j.promise;
  }
  return out;
}

json EventToJson(const store::JobEvent& e) {
  return {{"time", e.time},
          {"from", e.from ? json(store::JobStateName(*e.from)) : json(nullptr)},
          {"to", store::JobStateName(e.to)},
          {"reason", e.reason},
          {"actor", e.actor}};
}

StatusOr<store::JobRecord> JobFromRequest(const json& j, bool interactive) {
  if (!j.is_object()) return InvalidArgument("\"job\" must be an object");
  store::JobRecord r;
  r.interactive = interactive;
  Job& job = r.job;

  auto cmd = j.find("command");
  if (cmd == j.end() || !cmd->is_array() || cmd->empty()) {
    if (!interactive) return Bad("command", "must be a non-empty list of strings (the program and its arguments)");
  } else {
    for (const json& a : *cmd) {
      if (!a.is_string()) return Bad("command", "must be a list of strings");
      r.command.push_back(a.get<std::string>());
    }
    if (r.command[0].empty()) return Bad("command", "names no program");
  }
  if (Status s = ReadString(j, "cwd", r.cwd); !s.ok()) return s;
  if (r.cwd.empty() || r.cwd[0] != '/') return Bad("cwd", "must be an absolute directory path");
  if (auto env = j.find("env"); env != j.end() && !env->is_null()) {
    if (!env->is_object()) return Bad("env", "must be an object of strings");
    for (auto it = env->begin(); it != env->end(); ++it) {
      if (!it.value().is_string()) return Bad("env", "must be an object of strings (\"" + it.key() + "\" is not)");
      if (it.key().empty() || it.key().find('=') != std::string::npos) {
        return Bad("env", "has a variable name that is empty or contains '='");
      }
      r.env[it.key()] = it.value().get<std::string>();
    }
  }

  StatusOr<Request> request = ParseRequest(j);
  if (!request.ok()) return request.status();
  job.request = *request;

  std::int64_t v = kHour;
  if (Status s = ReadInt(j, "time_limit", 1, kMaxTimeLimit, v); !s.ok()) return s;
  job.time_limit = v;
  std::string tier = "regular";
  if (Status s = ReadString(j, "tier", tier); !s.ok()) return s;
  std::optional<Tier> t = ParseTier(tier);
  if (!t) return Bad("tier", "must be \"thesis\", \"regular\" or \"explore\", not \"" + tier + "\"");
  job.tier = *t;
  if (Status s = ReadString(j, "project", job.project); !s.ok()) return s;
  if (Status s = ReadString(j, "name", job.name); !s.ok()) return s;
  if (job.name.empty()) job.name = r.command.empty() ? "shell" : BaseName(r.command[0]);
  v = 0;
  if (Status s = ReadInt(j, "mem_per_gpu", 0, std::int64_t{1} << 40, v); !s.ok()) return s;
  job.host_mem_per_gpu = v;
  // No warning signal unless the job asks for one (--signal, #ROTA --signal) or the lab sets a
  // default ([policy] default_signal, applied by the daemon): a program that never asked is not
  // killed by a SIGUSR1 it does not handle. Without a signal there is no grace either: at the
  // limit, or when preempted, the job gets SIGTERM and, after the kill wait, SIGKILL.
  const bool asked = j.contains("signal") && !j["signal"].is_null();
  v = 0;
  if (Status s = ReadInt(j, "signal", 1, 64, v); !s.ok()) return s;
  job.signal = static_cast<int>(v);
  v = asked ? 120 : 0;
  if (Status s = ReadInt(j, "grace", 0, kDay, v); !s.ok()) return s;
  job.grace = asked ? v : 0;
  if (auto rq = j.find("requeue"); rq != j.end() && !rq->is_null()) {
    if (!rq->is_boolean()) return Bad("requeue", "must be true or false");
    job.requeue = rq->get<bool>();
  }
  for (auto [field, list] : {std::pair{"after", &job.after}, std::pair{"after_ok", &job.after_ok}}) {
    auto after = j.find(field);
    if (after == j.end() || after->is_null()) continue;
    if (!after->is_array()) return Bad(field, "must be a list of job ids");
    for (const json& a : *after) {
      if (!a.is_number_integer() || a.get<std::int64_t>() <= 0) return Bad(field, "must be a list of job ids");
      list->push_back(a.get<JobId>());
    }
  }
  // Unix seconds: admission reads what people type ("2026-12-10", "fri 18:00") in the lab's zone.
  std::int64_t deadline = 0;
  if (Status s = ReadInt(j, "deadline", 0, std::int64_t{1} << 40, deadline); !s.ok()) return s;
  r.deadline = deadline;
  if (Status s = ReadString(j, "image", r.image); !s.ok()) return s;
  if (!r.image.empty()) {
    if (Status s = CheckImageName(r.image); !s.ok()) return Bad("image", s.message());
  }
  if (!interactive) {
    r.output = "rota-%j.out";
    if (Status s = ReadString(j, "output", r.output); !s.ok()) return s;
    if (r.output.empty()) return Bad("output", "must not be empty");
    if (r.output[0] != '/') r.output = r.cwd + "/" + r.output;
  }
  return r;
}

}  // namespace rota::api

// Tested by job_request_test.cc.
//
// Design: flags stay text until BuildJob, so a script's value and a command-line value are
// merged before either is judged, and every refusal names the flag and what it accepts.
#include "client/job_request.h"

#include <cctype>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <tuple>

#include "core/types.h"

namespace rota::client {

namespace {

bool ValidMigProfile(std::string_view p) {
  // <slices>g.<memory>gb, optionally with a suffix such as "+me": "3g.40gb", "1g.10gb+me".
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < p.size() && p[i] >= '0' && p[i] <= '9') ++i;
    return i > start;
  };
  if (!digits() || p.substr(i, 2) != "g.") return false;
  i += 2;
  if (!digits() || p.substr(i, 2) != "gb") return false;
  i += 2;
  if (i == p.size()) return true;
  if (p[i] != '+') return false;
  for (++i; i < p.size(); ++i) {
    char c = p[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.')) return false;
  }
  return true;
}


}  // namespace

RequestFlags MergeFlags(const RequestFlags& base, const RequestFlags& o) {
  RequestFlags r = base;
  if (!o.gpus.empty() || !o.gpu_mem.empty() || !o.mig.empty()) {
    r.gpus = o.gpus;
    r.gpu_mem = o.gpu_mem;
    r.mig = o.mig;
  }
  auto take = [](std::string& into, const std::string& from) {
    if (!from.empty()) into = from;
  };
  take(r.time, o.time);
  take(r.tier, o.tier);
  take(r.project, o.project);
  take(r.name, o.name);
  take(r.mem_per_gpu, o.mem_per_gpu);
  take(r.signal, o.signal);
  take(r.after, o.after);
  take(r.after_ok, o.after_ok);
  take(r.output, o.output);
  take(r.conda, o.conda);
  take(r.image, o.image);
  take(r.deadline, o.deadline);
  r.requeue = base.requeue || o.requeue;
  return r;
}

std::vector<std::string> ScriptDirectives(std::string_view text) {
  std::vector<std::string> words;
  if (text.substr(0, 2) != "#!") return words;
  size_t pos = 0;
  bool first = true;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (first) {  // the #! line
      first = false;
      continue;
    }
    size_t b = line.find_first_not_of(" \t\r");
    if (b == std::string_view::npos) continue;  // blank
    line.remove_prefix(b);
    if (line[0] != '#') break;  // the first command: no directives after it
    if (line.substr(0, 5) != "#ROTA") continue;
    std::string_view rest = line.substr(5);
    if (!rest.empty() && rest[0] != ' ' && rest[0] != '\t') continue;  // "#ROTAX"
    // Split like a shell: whitespace separates, quotes group, an unquoted '#' starts a comment.
    std::string word;
    bool have = false;
    char quote = 0;
    for (size_t i = 0; i < rest.size(); ++i) {
      char c = rest[i];
      if (quote) {
        if (c == quote)
          quote = 0;
        else
          word += c;
      } else if (c == '\'' || c == '"') {
        quote = c;
        have = true;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        if (have) words.push_back(word);
        word.clear();
        have = false;
      } else if (c == '#' && !have) {
        break;
      } else {
        word += c;
        have = true;
      }
    }
    if (have) words.push_back(word);
  }
  return words;
}

StatusOr<RequestFlags> ParseDirectiveWords(const std::vector<std::string>& words, const std::string& where) {
  RequestFlags f;
  const std::pair<const char*, std::string RequestFlags::*> kValued[] = {
      {"--gpus", &RequestFlags::gpus},     {"--gpu-mem", &RequestFlags::gpu_mem},
      {"--mig", &RequestFlags::mig},       {"--time", &RequestFlags::time},
      {"--tier", &RequestFlags::tier},     {"--project", &RequestFlags::project},
      {"--name", &RequestFlags::name},     {"--mem-per-gpu", &RequestFlags::mem_per_gpu},
      {"--signal", &RequestFlags::signal}, {"--after", &RequestFlags::after},
      {"--after-ok", &RequestFlags::after_ok}, {"--output", &RequestFlags::output},
      {"--conda", &RequestFlags::conda},       {"--image", &RequestFlags::image},
      {"--deadline", &RequestFlags::deadline},
  };
  for (size_t i = 0; i < words.size(); ++i) {
    std::string word = words[i];
    std::optional<std::string> inline_value;
    if (auto eq = word.find('='); eq != std::string::npos && word.rfind("--", 0) == 0) {
      inline_value = word.substr(eq + 1);
      word.resize(eq);
    }
    if (word == "--requeue") {
      if (inline_value) return InvalidArgument(where + ": #ROTA --requeue takes no value");
      f.requeue = true;
      continue;
    }
    bool known = false;
    for (const auto& [name, field] : kValued) {
      if (word != name) continue;
      known = true;
      if (inline_value) {
        f.*field = *inline_value;
      } else if (i + 1 < words.size()) {
        f.*field = words[++i];
      } else {
        return InvalidArgument(where + ": #ROTA " + word + " needs a value");
      }
      if ((f.*field).empty()) return InvalidArgument(where + ": #ROTA " + word + " needs a value");
    }
    if (!known) {
      return InvalidArgument(where + ": unknown #ROTA option \"" + words[i] +
                             "\" (known: --gpus, --gpu-mem, --mig, --time, --tier, --project, --name, "
                             "--mem-per-gpu, --signal, --after, --after-ok, --output, --conda, --image, --deadline, "
                             "--requeue)");
    }
  }
  return f;
}

StatusOr<SignalSpec> ParseSignal(std::string_view text) {
  StatusOr<SignalSpec> spec = ParseSignalSpec(text);
  if (!spec.ok()) return InvalidArgument("--signal " + spec.status().message());
  return spec;
}

StatusOr<nlohmann::json> BuildJob(const RequestFlags& f, const JobContext& context) {
  if (context.command.empty())
    return InvalidArgument("no command given (rota submit [OPTIONS] -- COMMAND [ARGS...])");
  if (context.cwd.empty() || context.cwd[0] != '/')
    return InvalidArgument("the working directory must be absolute");
  nlohmann::json job;
  job["command"] = context.command;
  job["cwd"] = context.cwd;
  job["env"] = context.env;

  int kinds = !f.gpus.empty() + !f.gpu_mem.empty() + !f.mig.empty();
  if (kinds > 1) return InvalidArgument("give only one of --gpus, --gpu-mem and --mig");
  if (!f.gpus.empty()) {
    auto n = ParseWholeNumber(f.gpus, 1, 1024);
    if (!n) return InvalidArgument("--gpus \"" + f.gpus + "\": expected a whole number of GPUs, 1 or more");
    job["request"] = {{"kind", "gpus"}, {"gpus", *n}};
  } else if (!f.gpu_mem.empty()) {
    auto m = ParseMemory(f.gpu_mem);
    if (!m || *m <= 0) {
      return InvalidArgument("--gpu-mem \"" + f.gpu_mem +
                             "\": expected a memory size above zero such as 20G or 512M");
    }
    job["request"] = {{"kind", "gpu_mem"}, {"memory", *m}};
  } else if (!f.mig.empty()) {
    if (!ValidMigProfile(f.mig)) {
      return InvalidArgument("--mig \"" + f.mig + "\": expected a MIG profile such as 1g.10gb or 3g.40gb");
    }
    job["request"] = {{"kind", "mig"}, {"profile", f.mig}};
  }
  if (!f.time.empty()) {
    auto d = ParseDuration(f.time);
    if (!d || *d <= 0) {
      return InvalidArgument(
          "--time \"" + f.time +
          "\": expected a time limit above zero such as 90 (minutes), 30m, 4h, 2d, 1:30:00 "
          "or 2-00:00:00");
    }
    if (*d > kMaxTimeLimit) {
      return InvalidArgument("--time \"" + f.time + "\": at most " + std::to_string(kMaxTimeLimit / kDay) + " days");
    }
    job["time_limit"] = *d;
  }
  if (!f.tier.empty()) {
    if (!ParseTier(f.tier))
      return InvalidArgument("--tier \"" + f.tier + "\": expected thesis, regular or explore");
    job["tier"] = f.tier;
  }
  if (!f.project.empty()) job["project"] = f.project;
  if (!f.name.empty()) job["name"] = f.name;
  if (!f.mem_per_gpu.empty()) {
    auto m = ParseMemory(f.mem_per_gpu);
    if (!m || *m <= 0) {
      return InvalidArgument("--mem-per-gpu \"" + f.mem_per_gpu +
                             "\": expected a memory size above zero such as 40G or 512M");
    }
    job["mem_per_gpu"] = *m;
  }
  if (!f.signal.empty()) {
    auto s = ParseSignal(f.signal);
    if (!s.ok()) return s.status();
    job["signal"] = s->signal;
    job["grace"] = s->grace;
  }
  for (auto [flag, field, text] :
       {std::tuple{"--after", "after", &f.after}, std::tuple{"--after-ok", "after_ok", &f.after_ok}}) {
    if (text->empty()) continue;
    std::vector<long long> ids;
    std::string_view rest = *text;
    while (true) {
      size_t comma = rest.find(',');
      std::string_view part = rest.substr(0, comma);
      auto id = ParseWholeNumber(part, 1, (1LL << 53));
      if (!id) {
        return InvalidArgument(std::string(flag) + " \"" + *text +
                               "\": expected job ids separated by commas, e.g. 12,13");
      }
      ids.push_back(*id);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    job[field] = ids;
  }
  if (!f.image.empty()) job["image"] = f.image;
  if (!context.interactive) {
    if (!f.deadline.empty()) job["deadline"] = f.deadline;
    if (!f.output.empty()) job["output"] = f.output;
    if (f.requeue) job["requeue"] = true;
  }
  return job;
}

std::map<std::string, std::string> EnvironmentMap(char** envp) {
  std::map<std::string, std::string> env;
  for (char** e = envp; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (!eq || eq == *e) continue;
    env.emplace(std::string(*e, static_cast<size_t>(eq - *e)), std::string(eq + 1));
  }
  return env;
}

}  // namespace rota::client

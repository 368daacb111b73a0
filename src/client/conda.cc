// Tested by conda_test.cc.
#include "client/conda.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "json/bounded.h"

namespace rota::client {

namespace {

// The activation script the job's shell runs: $1 is the prefix, the rest the command.
constexpr char kScript[] =
    "p=$1; shift; "
    "if [ ! -d \"$p\" ]; then echo \"rota: the conda environment $p is gone (it was there when the job was "
    "submitted)\" >&2; exit 127; fi; "
    "for f in \"$p\"/etc/conda/activate.d/*.sh; do if [ -r \"$f\" ]; then . \"$f\"; fi; done; "
    "exec \"$@\"";

bool IsDir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsEnv(const std::string& prefix) { return IsDir(prefix + "/conda-meta") || IsDir(prefix + "/bin"); }

std::string Get(const std::map<std::string, std::string>& env, const std::string& key) {
  auto it = env.find(key);
  return it == env.end() ? "" : it->second;
}

std::string Parent(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

std::string Expand(std::string path, const std::string& home) {
  if (path.rfind("~/", 0) == 0 || path == "~") path = home + path.substr(1);
  if (path.rfind("$HOME", 0) == 0) path = home + path.substr(5);
  if (path.rfind("${HOME}", 0) == 0) path = home + path.substr(7);
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

std::string Trim(std::string s) {
  const size_t a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r");
  if (a == std::string::npos) return "";
  s = s.substr(a, b - a + 1);
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) s = s.substr(1, s.size() - 2);
  return s;
}

// The envs_dirs of a .condarc (YAML: "envs_dirs:" with "- path" lines below, or "[a, b]").
std::vector<std::string> CondarcEnvsDirs(const std::string& path, const std::string& home) {
  std::vector<std::string> dirs;
  std::ifstream in(path);
  bool in_list = false;
  for (std::string line; std::getline(in, line);) {
    if (const size_t hash = line.find(" #"); hash != std::string::npos) line.resize(hash);
    if (line.rfind("envs_dirs:", 0) == 0) {
      const std::string rest = Trim(line.substr(10));
      in_list = rest.empty();
      if (rest.size() >= 2 && rest.front() == '[' && rest.back() == ']') {
        std::stringstream items(rest.substr(1, rest.size() - 2));
        for (std::string item; std::getline(items, item, ',');) {
          if (!Trim(item).empty()) dirs.push_back(Expand(Trim(item), home));
        }
      }
      continue;
    }
    if (!in_list) continue;
    const std::string t = Trim(line);
    if (t.rfind("- ", 0) == 0) {
      dirs.push_back(Expand(Trim(t.substr(2)), home));
    } else if (!t.empty() && !line.empty() && line[0] != ' ' && line[0] != '\t') {
      in_list = false;  // the next key
    }
  }
  return dirs;
}

// `conda env config vars` of an environment: {"env_vars": {...}} in conda-meta/state.
std::map<std::string, std::string> EnvVars(const std::string& prefix) {
  std::map<std::string, std::string> vars;
  std::ifstream in(prefix + "/conda-meta/state");
  if (!in) return vars;
  std::stringstream text;
  text << in.rdbuf();
  StatusOr<nlohmann::json> state = ParseBoundedJson(text.str());
  if (!state.ok() || !state->is_object()) return vars;
  auto env_vars = state->find("env_vars");
  if (env_vars == state->end() || !env_vars->is_object()) return vars;
  for (auto it = env_vars->begin(); it != env_vars->end(); ++it) {
    if (it.value().is_string() && !it.key().empty() && it.key().find('=') == std::string::npos)
      vars[it.key()] = it.value().get<std::string>();
  }
  return vars;
}

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, sep);) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace

StatusOr<CondaEnv> FindCondaEnv(std::string_view name_view, const std::map<std::string, std::string>& env) {
  const std::string name(name_view);
  if (name.empty()) return InvalidArgument("--conda needs an environment's name or path");
  const std::string home = Get(env, "HOME");
  if (name.find('/') != std::string::npos) {
    char real[PATH_MAX];
    if (::realpath(Expand(name, home).c_str(), real) == nullptr || !IsEnv(real)) {
      return NotFound("--conda " + name + ": not a conda environment (no such directory, or one without conda-meta/ "
                      "or bin/)");
    }
    return CondaEnv{name, real, EnvVars(real)};
  }
  if (name.find_first_of(" \t\n:#") != std::string::npos)
    return InvalidArgument("--conda \"" + name + "\": an environment's name has no spaces, ':' or '#'");

  // The installations the user's conda would know: the one running now, micromamba's root,
  // the active environment's root, then the usual places.
  std::vector<std::string> roots;
  if (const std::string exe = Get(env, "CONDA_EXE"); !exe.empty()) roots.push_back(Parent(Parent(exe)));
  if (const std::string root = Get(env, "MAMBA_ROOT_PREFIX"); !root.empty()) roots.push_back(root);
  if (const std::string active = Get(env, "CONDA_PREFIX"); !active.empty() && IsDir(active + "/envs"))
    roots.push_back(active);
  if (!home.empty()) {
    for (const char* dir : {"miniconda3", "anaconda3", "miniforge3", "mambaforge", "micromamba", ".local/share/mamba"})
      roots.push_back(home + "/" + dir);
  }
  for (const char* dir : {"/opt/conda", "/opt/miniconda3", "/opt/anaconda3", "/opt/miniforge3"}) roots.push_back(dir);

  if (name == "base") {
    for (const std::string& root : roots) {
      if (IsDir(root + "/conda-meta")) return CondaEnv{name, root, EnvVars(root)};
    }
    return NotFound("--conda base: no conda installation found (set CONDA_EXE, or activate conda in this shell)");
  }

  std::vector<std::string> dirs;
  for (const char* var : {"CONDA_ENVS_PATH", "CONDA_ENVS_DIRS"}) {
    for (const std::string& d : Split(Get(env, var), ':')) dirs.push_back(Expand(d, home));
  }
  if (const std::string condarc = Get(env, "CONDARC"); !condarc.empty()) {
    for (const std::string& d : CondarcEnvsDirs(condarc, home)) dirs.push_back(d);
  }
  if (!home.empty()) {
    for (const char* rc : {"/.condarc", "/.config/conda/.condarc", "/.mambarc"}) {
      for (const std::string& d : CondarcEnvsDirs(home + rc, home)) dirs.push_back(d);
    }
  }
  for (const std::string& root : roots) dirs.push_back(root + "/envs");
  if (!home.empty()) dirs.push_back(home + "/.conda/envs");

  std::vector<std::string> looked;
  std::set<std::string> seen, known;
  for (const std::string& dir : dirs) {
    if (!seen.insert(dir).second || !IsDir(dir)) continue;
    looked.push_back(dir);
    const std::string prefix = dir + "/" + name;
    if (IsEnv(prefix)) return CondaEnv{name, prefix, EnvVars(prefix)};
  }
  // Environments made elsewhere, as conda lists them (~/.conda/environments.txt).
  std::ifstream listed(home + "/.conda/environments.txt");
  for (std::string line; !home.empty() && std::getline(listed, line);) {
    const std::string prefix = Trim(line);
    if (prefix.empty() || !IsEnv(prefix)) continue;
    if (prefix.substr(prefix.find_last_of('/') + 1) == name) return CondaEnv{name, prefix, EnvVars(prefix)};
    known.insert(prefix.substr(prefix.find_last_of('/') + 1));
  }
  for (const std::string& dir : looked) {
    // What is there, to name in the refusal.
    if (DIR* d = ::opendir(dir.c_str())) {
      while (const dirent* e = ::readdir(d)) {
        if (e->d_name[0] != '.' && IsEnv(dir + "/" + e->d_name)) known.insert(e->d_name);
      }
      ::closedir(d);
    }
  }
  std::string message = "conda environment \"" + name + "\" not found";
  if (looked.empty() && known.empty()) {
    message += " (no conda installation found: set CONDA_EXE or activate conda in this shell, or give the "
               "environment's path)";
  } else {
    std::string where, there;
    for (const std::string& dir : looked) where += (where.empty() ? "" : ", ") + dir;
    for (const std::string& k : known) there += (there.empty() ? "" : ", ") + k;
    message += " (looked in " + (where.empty() ? std::string("~/.conda/environments.txt") : where) +
               (there.empty() ? "; no environments there)" : "; environments there: " + there + ")");
  }
  return NotFound(message);
}

void ActivateConda(const CondaEnv& conda, std::map<std::string, std::string>& env) {
  std::vector<std::string> path = Split(Get(env, "PATH"), ':');
  if (const std::string active = Get(env, "CONDA_PREFIX"); !active.empty()) {
    std::erase(path, active + "/bin");  // conda activate replaces the active environment's bin
  }
  std::erase(path, conda.prefix + "/bin");
  path.insert(path.begin(), conda.prefix + "/bin");
  std::string joined;
  for (const std::string& p : path) joined += (joined.empty() ? "" : ":") + p;
  env["PATH"] = joined;
  env["CONDA_PREFIX"] = conda.prefix;
  env["CONDA_DEFAULT_ENV"] = conda.name;
  env["CONDA_SHLVL"] = "1";
  env["CONDA_PROMPT_MODIFIER"] = "(" + conda.name + ") ";
  for (const auto& [key, value] : conda.vars) env[key] = value;
}

std::vector<std::string> InCondaEnv(const CondaEnv& conda, const std::vector<std::string>& command) {
  std::vector<std::string> out = {"/bin/sh", "-c", kScript, std::string(kCondaMarker), conda.prefix};
  out.insert(out.end(), command.begin(), command.end());
  return out;
}

}  // namespace rota::client

namespace rota::client {

Status UseConda(RequestFlags& flags, JobContext& context) {
  if (flags.conda.empty()) return Status();
  if (!flags.image.empty()) {
    return InvalidArgument("--conda and --image: choose one (a conda environment on this machine, or the "
                           "environment the image brings)");
  }
  StatusOr<CondaEnv> conda = FindCondaEnv(flags.conda, context.env);
  if (!conda.ok()) return conda.status();
  if (flags.name.empty() && !context.command.empty()) {
    const std::string& program = context.command[0];
    flags.name = program.substr(program.find_last_of('/') + 1);
  }
  ActivateConda(*conda, context.env);
  context.command = InCondaEnv(*conda, context.command);
  return Status();
}

}  // namespace rota::client

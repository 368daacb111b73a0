// Tested by manual_test.cc.
#include "cli/manual.h"

#include <cctype>
#include <cstdio>
#include <map>
#include <vector>

namespace rota::cli {

namespace {

std::vector<const CLI::App*> Commands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* sub) { return !sub->get_name().empty() && !sub->get_group().empty(); });
}

std::vector<const CLI::Option*> Options(const CLI::App& app) {
  return app.get_options([](const CLI::Option* o) { return o->nonpositional() && !o->get_group().empty(); });
}

std::vector<const CLI::Option*> Positionals(const CLI::App& app) {
  return app.get_options([](const CLI::Option* o) { return o->get_positional(); });
}

bool TakesValue(const CLI::Option& o) { return o.get_expected_max() != 0; }

bool TakesFile(const CLI::Option& o) {
  const std::string type = o.get_type_name();
  if (type.find("FILE") != std::string::npos || type.find("PATH") != std::string::npos ||
      type.find("DIR") != std::string::npos) {
    return true;
  }
  for (const std::string& name : o.get_lnames()) {
    if (name == "output" || name == "config" || name == "socket" || name == "state-dir" || name == "shepherd" ||
        name == "token-file")
      return true;
  }
  return false;
}

std::string Names(const CLI::Option& o) {
  std::string out;
  for (const std::string& s : o.get_snames()) out += (out.empty() ? "-" : " -") + s;
  for (const std::string& l : o.get_lnames()) out += (out.empty() ? "--" : " --") + l;
  return out;
}

// Text safe in roff: a backslash doubled, a leading dot or quote escaped, dashes as minus signs,
// other than ASCII as \[uXXXX] (groff reads its input as Latin-1 unless told), and a break point
// after a comma inside a word (a CSV header would otherwise be one word wider than the line).
std::string Roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (c >= 0x80) {
      // One UTF-8 character: its code point.
      const int extra = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
      unsigned cp = extra == 3 ? c & 0x07u : extra == 2 ? c & 0x0fu : extra == 1 ? c & 0x1fu : '?';
      for (int k = 0; k < extra && i + 1 < text.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[++i]) & 0x3fu);
      char buf[16];
      std::snprintf(buf, sizeof buf, "\\[u%04X]", cp);
      out += buf;
    } else {
      out += static_cast<char>(c);
      if (c == ',' && i + 1 < text.size() && text[i + 1] != ' ' && text[i + 1] != '\n') out += "\\:";
    }
    line_start = c == '\n';
  }
  return out;
}

void Walk(const CLI::App& app, const std::string& path, std::map<std::string, const CLI::App*>& out) {
  out[path] = &app;
  for (const CLI::App* sub : Commands(app)) {
    Walk(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), out);
  }
}

void OptionsRoff(const CLI::App& app, std::string& out) {
  for (const CLI::Option* o : Options(app)) {
    std::string type = o->get_type_name();
    out += ".TP\n.B " + Roff(Names(*o)) + (TakesValue(*o) && !type.empty() ? " \\fI" + Roff(type) + "\\fR" : "") +
           "\n" + Roff(o->get_description()) + "\n";
  }
}

}  // namespace

std::string BashCompletion(const CLI::App& app, std::string_view program) {
  std::map<std::string, const CLI::App*> paths;
  Walk(app, std::string(program), paths);  // bash has no empty key: the root is the program's name
  const std::string fn = "_" + std::string(program);
  std::string subs, opts, valued, files;
  for (const auto& [path, at] : paths) {
    std::string s, o, v, f;
    for (const CLI::App* sub : Commands(*at)) s += (s.empty() ? "" : " ") + sub->get_name();
    for (const CLI::Option* opt : Options(*at)) {
      for (const std::string& l : opt->get_lnames()) {
        const std::string name = "--" + l;
        o += (o.empty() ? "" : " ") + name;
        if (TakesValue(*opt)) v += (v.empty() ? "" : " ") + name;
        if (TakesValue(*opt) && TakesFile(*opt)) f += (f.empty() ? "" : " ") + name;
      }
      for (const std::string& sn : opt->get_snames()) {
        if (TakesValue(*opt)) v += std::string(v.empty() ? "" : " ") + "-" + sn;
        if (TakesValue(*opt) && TakesFile(*opt)) f += std::string(f.empty() ? "" : " ") + "-" + sn;
      }
    }
    subs += "  [\"" + path + "\"]=\"" + s + "\"\n";
    opts += "  [\"" + path + "\"]=\"" + o + "\"\n";
    valued += "  [\"" + path + "\"]=\"" + v + "\"\n";
    files += "  [\"" + path + "\"]=\"" + f + "\"\n";
  }
  std::string out = "# bash completion for " + std::string(program) + ", generated from its own options by `" +
                    std::string(program) + " completion bash`: do not edit.\n";
  out += "declare -gA " + fn + "_subs=(\n" + subs + ")\n";
  out += "declare -gA " + fn + "_opts=(\n" + opts + ")\n";
  out += "declare -gA " + fn + "_valued=(\n" + valued + ")\n";
  out += "declare -gA " + fn + "_files=(\n" + files + ")\n";
  out += fn + R"(() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} path=PROGRAM i w skip=0
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    if ((skip)); then skip=0; continue; fi
    if [[ $w == -- ]]; then compopt -o default 2>/dev/null; return 0; fi  # the job's own command
    if [[ $w == -* ]]; then
      [[ $w != *=* && " ${FN_valued[$path]} " == *" $w "* ]] && skip=1
      continue
    fi
    if [[ " ${FN_subs[$path]} " == *" $w "* ]]; then path="$path $w"; fi
  done
  if [[ $prev == -* && " ${FN_valued[$path]} " == *" $prev "* ]]; then
    [[ " ${FN_files[$path]} " == *" $prev "* ]] && compopt -o default 2>/dev/null
    return 0
  fi
  COMPREPLY=($(compgen -W "${FN_subs[$path]} ${FN_opts[$path]}" -- "$cur"))
}
complete -F FN PROGRAM
)";
  for (size_t at = out.find("FN"); at != std::string::npos; at = out.find("FN", at)) out.replace(at, 2, fn);
  for (size_t at = out.find("PROGRAM"); at != std::string::npos; at = out.find("PROGRAM", at))
    out.replace(at, 7, program);
  return out;
}

std::string ManPage(const CLI::App& app, const ManInfo& info, int section) {
  const std::string upper = [&] {
    std::string u = info.program;
    for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return u;
  }();
  std::string out = ".\\\" Generated from " + info.program + "'s own options: do not edit.\n";
  out += ".TH " + upper + " " + std::to_string(section) + " \"" + info.date + "\" \"" + Roff(info.program) + " " +
         Roff(info.version) + "\" \"Rota\"\n";
  out += ".SH NAME\n" + Roff(info.program) + " \\- " + Roff(info.summary) + "\n";
  const std::vector<const CLI::App*> commands = Commands(app);
  out += ".SH SYNOPSIS\n.B " + Roff(info.program) + "\n" + (commands.empty() ? "[\\fIOPTIONS\\fR]\n" : "[\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]\n");
  out += ".SH DESCRIPTION\n" + Roff(app.get_description()) + "\n";
  if (!app.get_footer().empty()) out += ".PP\n" + Roff(app.get_footer()) + "\n";
  out += ".SH OPTIONS\n";
  OptionsRoff(app, out);
  if (!commands.empty()) {
    out += ".SH COMMANDS\n";
    std::map<std::string, const CLI::App*> paths;
    Walk(app, "", paths);
    for (const auto& [path, at] : paths) {
      if (path.empty()) continue;
      std::string usage = info.program + " " + path;
      if (!Options(*at).empty()) usage += " [OPTIONS]";
      if (!Commands(*at).empty()) usage += " COMMAND";
      for (const CLI::Option* p : Positionals(*at)) usage += " " + p->get_name(true);
      out += ".SS \"" + Roff(usage) + "\"\n" + Roff(at->get_description()) + "\n";
      if (!at->get_footer().empty()) out += ".PP\n" + Roff(at->get_footer()) + "\n";
      OptionsRoff(*at, out);
    }
  }
  out += info.more;
  return out;
}

}  // namespace rota::cli

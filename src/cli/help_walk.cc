// Tested by help_walk_test.cc.
#include "cli/help_walk.h"

#include <string_view>
#include <vector>

namespace rota::cli {

HelpAnswer FindHelp(const CLI::App& app, int argc, const char* const* argv) {
  const CLI::App* at = &app;
  std::string prev;  // the names above `at`, as App::help builds its usage line
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == "-h" || arg == "--help") {
      if (at->get_help_ptr() == nullptr) return {};
      return {HelpAnswer::kHelp, at, prev};
    }
    if (arg == "--version" && at == &app) {
      const CLI::Option* version = app.get_version_ptr();
      if (version != nullptr && version->check_lname("version")) return {HelpAnswer::kVersion, nullptr, ""};
      return {};
    }
    if (arg.size() > 1 && arg[0] == '-') {
      // A known option; the next argument is its value when it takes one and has none attached.
      const bool long_form = arg.rfind("--", 0) == 0;
      if (!long_form && arg.size() != 2) return {};  // -abc: grouped flags or a value attached
      const std::size_t eq = arg.find('=');
      const std::string name(arg.substr(0, long_form ? eq : std::string_view::npos));
      const CLI::Option* option = at->get_option_no_throw(name);
      if (option == nullptr) return {};
      // A flag expects no value; a plain option exactly one.
      const bool flag = option->get_expected_max() == 0;
      const bool one_value = option->get_type_size_min() == 1 && option->get_type_size_max() == 1 &&
                             option->get_expected_min() == 1 && option->get_expected_max() == 1;
      if (!flag && !one_value) return {};  // optional or several values: how many follow is the parse's call
      if (flag && long_form && eq != std::string_view::npos) return {};
      if (one_value && (!long_form || eq == std::string_view::npos)) ++i;
      continue;
    }
    std::vector<const CLI::App*> subs =
        at->get_subcommands([&](const CLI::App* sub) { return sub->check_name(std::string(arg)); });
    if (subs.size() != 1) return {};  // a positional argument: the parse decides
    prev += (prev.empty() ? "" : " ") + at->get_name();
    at = subs[0];
  }
  return {};
}

}  // namespace rota::cli

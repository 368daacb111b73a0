// Tests of the generated completion and man page: every command (nested ones too) and option is
// in them, options that take a value are known as such, and text reaches roff escaped.
#include "cli/manual.h"

#include <gtest/gtest.h>

namespace rota::cli {
namespace manual_test {
namespace {

std::string sink_;
bool flag_ = false;

std::unique_ptr<CLI::App> MakeApp() {
  auto app = std::make_unique<CLI::App>("tool: does things");
  app->add_option("--socket", sink_, "its socket");
  CLI::App* submit = app->add_subcommand("submit", "queue a job");
  submit->add_option("--output", sink_, "the output file")->type_name("FILE");
  submit->add_option("-t,--time", sink_, "the limit")->type_name("TIME");
  submit->add_flag("--requeue", flag_, ".start of a line, a back\\slash, 中文 and -dashes");
  submit->footer("CSV columns: id,task_name,user");
  CLI::App* bookings = app->add_subcommand("bookings", "the calendar");
  bookings->add_subcommand("export", "write it out")->add_flag("--csv", flag_, "as CSV");
  app->add_subcommand("secret", "not shown")->group("");
  return app;
}

TEST(Manual, TheCompletionKnowsEveryCommandAndWhichOptionsTakeValues) {
  const auto app = MakeApp();
  const std::string bash = BashCompletion(*app, "tool");
  EXPECT_NE(bash.find("[\"tool\"]=\"submit bookings\""), std::string::npos) << bash;  // not the hidden one
  EXPECT_NE(bash.find("[\"tool bookings\"]=\"export\""), std::string::npos) << bash;
  EXPECT_NE(bash.find("[\"tool bookings export\"]=\"--help --csv\""), std::string::npos) << bash;
  EXPECT_NE(bash.find("_tool_valued=(\n  [\"tool\"]=\"--socket\""), std::string::npos) << bash;
  EXPECT_NE(bash.find("[\"tool submit\"]=\"--output --time -t\""), std::string::npos) << bash;  // valued
  EXPECT_NE(bash.find("_tool_files=(\n  [\"tool\"]=\"--socket\""), std::string::npos) << bash;
  EXPECT_NE(bash.find("complete -F _tool tool\n"), std::string::npos) << bash;
}

TEST(Manual, TheManPageHasEveryCommandWithItsOptionsEscapedForRoff) {
  const auto app = MakeApp();
  const std::string page = ManPage(*app, {"tool", "1.2", "2026-12-04", "a tool", ".SH SEE ALSO\nnothing\n"}, 1);
  EXPECT_EQ(page.find(".TH TOOL 1 \"2026-12-04\" \"tool 1.2\" \"Rota\"\n"), page.find(".TH")) << page;
  EXPECT_NE(page.find(".SH NAME\ntool \\- a tool\n"), std::string::npos) << page;
  EXPECT_NE(page.find(".SS \"tool submit [OPTIONS]\"\nqueue a job\n"), std::string::npos) << page;
  EXPECT_NE(page.find(".SS \"tool bookings export [OPTIONS]\"\nwrite it out\n"), std::string::npos) << page;
  EXPECT_EQ(page.find("secret"), std::string::npos) << page;
  EXPECT_NE(page.find(".B \\-t \\-\\-time \\fITIME\\fR\nthe limit\n"), std::string::npos) << page;
  // A leading dot, a backslash, non-ASCII and dashes, each as roff wants them.
  EXPECT_NE(page.find("\\&.start of a line, a back\\eslash, \\[u4E2D]\\[u6587] and \\-dashes\n"), std::string::npos)
      << page;
  EXPECT_NE(page.find("id,\\:task_name,\\:user"), std::string::npos) << page;  // a CSV header may break
  EXPECT_EQ(page.substr(page.size() - 21), ".SH SEE ALSO\nnothing\n");
}

}  // namespace
}  // namespace manual_test
}  // namespace rota::cli

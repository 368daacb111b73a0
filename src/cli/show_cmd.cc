// `rota show ID [--json]`: everything about one job and its audit trail.
// Tested against a daemon by tests/daemon/test_cli.py; the layout by job_format_test.cc.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/advise_format.h"
#include "cli/daemon_client.h"
#include "cli/job_format.h"
#include "cli/json_fields.h"

namespace rota::cli {

namespace {

// `text` with `by` before each of its lines.
std::string Indent(const std::string& text, const std::string& by) {
  std::string out;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t nl = text.find('\n', start);
    const std::size_t end = nl == std::string::npos ? text.size() : nl + 1;
    out += by + text.substr(start, end - start);
    start = end;
  }
  return out;
}

struct ShowArgs {
  long long id = 0;
  bool json = false;
};

int RunShow(const ClientOptions& options, const ShowArgs& args) {
  if (args.id <= 0) return Fail(InvalidArgument("job ids are whole numbers from 1"));
  auto reply = CallDaemon(options, {{"op", "show"}, {"job_id", args.id}});
  if (!reply.ok()) return Fail(reply.status());
  nlohmann::json job = reply->value("job", nlohmann::json::object());
  nlohmann::json events = reply->value("events", nlohmann::json::array());
  if (args.json) {
    PrintJson({{"job", job}, {"events", events}});
    return 0;
  }
  std::string text = RenderShow(job, events, Now());
  // A waiting job worth renting for, or whose deadline is at risk: rota advise's words follow
  // (a server without the operation, or a reply that says nothing to advise, adds nothing).
  if (fields::Str(job, "state") == "pending") {
    auto advice = CallDaemon(options, {{"op", "advise"}, {"job_id", args.id}});
    const nlohmann::json* first = nullptr;
    if (advice.ok() && !fields::Arr(*advice, "jobs").empty()) first = &fields::Arr(*advice, "jobs")[0];
    if (first != nullptr && fields::Bool(*first, "advise")) {
      nlohmann::json one = *advice;
      one.erase("prices_problems");  // rota advise names them; here they would only distract
      // Before the history, beside the expected start it explains.
      const std::string block = "Advice:\n" + Indent(FormatAdvice(one), "  ");
      const std::size_t history = text.find("\nHistory:");
      text.insert(history == std::string::npos ? text.size() : history + 1, block);
    }
  }
  PrintText(text);
  return 0;
}

}  // namespace

void AddShowCommand(CLI::App& app, ClientOptions* options, int* exit_code) {
  auto args = std::make_shared<ShowArgs>();
  CLI::App* c = app.add_subcommand("show", "Show everything about one job, with its history");
  c->footer(
      "Prints \"Key: value\" lines (request, times, GPUs, command; for a pending job why it waits,\n"
      "when it should start and its priority factors), then \"History:\" with every state change.\n"
      "--json prints {\"job\": Job, \"events\": [Event...]} as the daemon sent them.");
  AddSocketFlag(c, options);
  AddJobIdOption(c, &args->id, "the job id");
  c->add_flag("--json", args->json, "print the job and its events as JSON");
  c->callback([options, args, exit_code] { *exit_code = RunShow(*options, *args); });
}

}  // namespace rota::cli

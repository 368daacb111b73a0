// What the commands that talk to rotad share: the --socket flag, connecting, one-line errors
// with the documented exit codes, request flags for submit and run, and JSON output.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "client/connection.h"
#include "client/job_request.h"
#include "core/status.h"

namespace rota::cli {

// Adds `--socket PATH` to a subcommand, writing the same place as the global flag.
void AddSocketFlag(CLI::App* command, ClientOptions* options);

// Adds the request flags of submit and run (--gpus, --gpu-mem, --mig, --time, --tier, --project,
// --name, --mem-per-gpu, --signal, --after, --after-ok; with `batch` also --output, --requeue).
void AddRequestFlags(CLI::App* command, client::RequestFlags* flags, bool batch);

// Adds the positional job id(s) of show, logs, keep and cancel: "abc" or "12,13" is refused with
// what a job id looks like, not CLI11's "Could not convert".
CLI::Validator JobIdCheck();
template <typename T>
CLI::Option* AddJobIdOption(CLI::App* command, T* ids, const std::string& description) {
  return command->add_option("ID", *ids, description)->required()->check(JobIdCheck());
}

// The exit code for an error: 2 invalid argument, 3 unreachable/unavailable, else 1.
int ExitCodeFor(const Status& status);
// Prints "rota: <message>" on stderr; returns ExitCodeFor(status).
int Fail(const Status& status);
// Prints "rota: <prefix>: <message>" on stderr; returns ExitCodeFor(status).
int Fail(const std::string& prefix, const Status& status);

// Connects to the daemon's socket (api::ClientSocketPath of the flag).
StatusOr<client::Connection> Connect(const ClientOptions& options);
// Connects, sends one request and reads its reply (an error reply is a non-OK status).
// Every reply's "zone" (rotad's, docs/api.md) becomes the zone the command shows times in
// (UseServerZone), so that they read as rotad reads times, whatever the client's $TZ.
StatusOr<nlohmann::json> CallDaemon(const ClientOptions& options, const nlohmann::json& request);
// The zone a reply carries, if any, becomes the display zone (cli/text.h).
void UseServerZone(const nlohmann::json& reply);

// Prints `value` as indented JSON and a newline on stdout.
void PrintJson(const nlohmann::json& value);
// Prints `text` on stdout as it is.
void PrintText(const std::string& text);
// A WHEN argument as the API takes it: Unix seconds when all digits, else the text for rotad to
// parse ("tomorrow 9:00", docs/api.md).
nlohmann::json WhenArg(const std::string& text);

// Prints the "jobs" of a listing reply: as JSON with `json`, else as the table `render` makes.
// Returns the exit code (0).
int PrintJobs(const nlohmann::json& reply, bool json,
              const std::function<std::string(const std::vector<nlohmann::json>&)>& render);
// The current time (the client, unlike the core, may read the clock).
long long Now();
// `--since` given as how long ago ("1d", "12h", "30m"): that many seconds before Now().
StatusOr<long long> SinceAgo(const std::string& text);

}  // namespace rota::cli

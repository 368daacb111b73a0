// `rota bookings [--all] [--pending] [--week [DATE]] [--from WHEN] [--to WHEN] [--json]`, and
// `rota bookings export` / `rota bookings import` (docs/api.md, ops "bookings",
// "bookings_export", "bookings_import"). The list and the week calendar come from
// bookings_format.cc (tested by bookings_format_test.cc); this file asks rotad and writes files.
//
// The week view asks for everyone's bookings of the week holding a day (rotad reads --week's text
// in the server's zone, as it reads booking times) and the card list from op status; it is drawn
// in the zone the reply carries, daylight saving included.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "api/protocol.h"
#include "cli/bookings_format.h"
#include "cli/daemon_client.h"
#include "cli/gpus_format.h"

namespace rota::cli {

namespace {

using nlohmann::json;

// Requests are at most 1 MiB on the wire (docs/api.md); leave room for the JSON around the text.
constexpr size_t kMaxImportBytes = 1000 * 1024;

// ---- rota bookings ----

struct BookingsArgs {
  bool all = false;
  bool pending = false;
  std::string week;                  // the --week value; "" when given without one
  CLI::Option* week_flag = nullptr;  // tells whether --week was given at all
  std::string from;
  std::string to;
  bool json = false;
};

int RunWeek(const ClientOptions& options, const BookingsArgs& args) {
  // rotad reads the week in its zone and answers with the zone's offsets over it.
  // With the time ahead: the jobs on the cards that week (running, and expected to start).
  json request = {{"op", "bookings"}, {"all", true}, {"week", args.week}, {"ahead", true}};
  auto reply = CallDaemon(options, request);
  if (!reply.ok()) return Fail(reply.status());
  if (args.json) {
    PrintJson(*reply);
    return 0;
  }
  auto status = CallDaemon(options, {{"op", "status"}});
  if (!status.ok()) return Fail("cannot list the GPUs", status.status());
  BookingsFormat format;
  format.now = Now();
  format.zone = ZoneOfReply(*reply, DisplayZone());
  PrintText(FormatBookingsWeek(*reply, status->value("gpus", json::array()), reply->value("from", Time{0}), format));
  return 0;
}

int RunBookings(const ClientOptions& options, const BookingsArgs& args) {
  if (args.week_flag != nullptr && args.week_flag->count() > 0) return RunWeek(options, args);
  json request = {{"op", "bookings"}, {"all", args.all}, {"pending", args.pending}};
  if (!args.from.empty()) request["from"] = WhenArg(args.from);
  if (!args.to.empty()) request["to"] = WhenArg(args.to);
  auto reply = CallDaemon(options, request);
  if (!reply.ok()) return Fail(reply.status());
  if (args.json) {
    PrintJson(*reply);
    return 0;
  }
  BookingsFormat format;
  format.now = Now();
  format.zone = ZoneOfReply(*reply, DisplayZone());
  format.pending = args.pending;
  PrintText(FormatBookingsList(*reply, format));
  return 0;
}

// ---- rota bookings export ----

struct ExportArgs {
  bool csv = false;
  bool ics = false;
  bool all = false;
  std::string output;  // "" or "-": stdout
};

int RunExport(const ClientOptions& options, const ExportArgs& args) {
  if (args.csv == args.ics) return Fail(InvalidArgument("say which format: --csv or --ics"));
  auto reply = CallDaemon(
      options, {{"op", "bookings_export"}, {"format", args.csv ? "csv" : "ics"}, {"all", args.all}});
  if (!reply.ok()) return Fail(reply.status());
  const std::string text = reply->value("text", "");
  if (args.output.empty() || args.output == "-") {
    PrintText(text);
    return std::fflush(stdout) == 0 ? 0 : 1;
  }
  std::FILE* f = std::fopen(args.output.c_str(), "wb");
  if (f == nullptr) {
    std::fprintf(stderr, "rota: cannot write %s: %s\n", args.output.c_str(), std::strerror(errno));
    return 1;
  }
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int saved_errno = errno;
  if (std::fclose(f) != 0 || !written) {
    std::fprintf(stderr, "rota: cannot write %s: %s\n", args.output.c_str(),
                 std::strerror(written ? errno : saved_errno));
    return 1;
  }
  return 0;
}

// ---- rota bookings import ----

struct ImportArgs {
  std::string file;  // "-": stdin
  bool skip_bad = false;
  bool json = false;
};

StatusOr<std::string> ReadAll(const std::string& path) {
  const bool stdin_ = path == "-";
  std::FILE* f = stdin_ ? stdin : std::fopen(path.c_str(), "rb");
  if (f == nullptr) return InvalidArgument("cannot read " + path + ": " + std::strerror(errno));
  std::string text;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    text.append(buf, n);
    if (text.size() > kMaxImportBytes) break;
  }
  const bool failed = std::ferror(f) != 0;
  if (!stdin_) std::fclose(f);
  if (failed) return InvalidArgument("cannot read " + path);
  if (text.size() > kMaxImportBytes) {
    return InvalidArgument(path + " is over " + std::to_string(kMaxImportBytes / 1024) +
                           " KiB, more than one request may carry: split it into smaller files");
  }
  return text;
}

int RunImport(const ClientOptions& options, const ImportArgs& args) {
  auto text = ReadAll(args.file);
  if (!text.ok()) return Fail(text.status());
  auto conn = Connect(options);
  if (!conn.ok()) return Fail(conn.status());
  if (Status sent = conn->Send({{"op", "bookings_import"}, {"csv", *text}, {"skip_bad", args.skip_bad}});
      !sent.ok()) {
    return Fail(sent);
  }
  auto reply = conn->Receive(-1);
  if (!reply.ok()) return Fail(reply.status());
  if (args.json) PrintJson(*reply);
  const Status status = api::StatusOfReply(*reply);
  // Bad rows: in the reply, or in the details of a refusal.
  json errors = reply->value("errors", json::array());
  if (!status.ok()) {
    const json& error = (*reply)["error"];
    if (error.is_object() && error.contains("details") && error["details"].is_object()) {
      errors = error["details"].value("errors", json::array());
    }
  }
  const std::string name = args.file == "-" ? "<stdin>" : args.file;
  if (!args.json) {
    for (const json& e : errors) {
      if (!e.is_object()) continue;
      const long long line = e.value("line", 0LL);
      std::fprintf(stderr, "%s:%lld: %s\n", TerminalSafe(name).c_str(), line,
                   TerminalSafe(e.value("message", std::string("bad row"))).c_str());
    }
  }
  if (!status.ok()) {
    if (!args.json) std::fprintf(stderr, "rota: %s\n", status.message().c_str());
    return errors.empty() ? ExitCodeFor(status) : 1;
  }
  json imported = reply->value("imported", json::array());
  if (!args.json) {
    std::string line;
    if (imported.empty()) {
      line = "Imported no bookings";
      if (!errors.empty()) {
        line +=
            std::string(": ") + std::to_string(errors.size()) +
            (errors.size() == 1 ? " bad row" : " bad rows") +
            (args.skip_bad ? ""
                           : " (nothing is imported while a row is bad; --skip-bad imports the good ones)");
      }
    } else {
      line = "Imported " + std::to_string(imported.size()) +
             (imported.size() == 1 ? " booking: " : " bookings: ");
      for (size_t k = 0; k < imported.size(); ++k) {
        if (imported[k].is_number())
          line += (k == 0 ? "" : ", ") + std::to_string(imported[k].get<long long>());
      }
    }
    PrintText(line + "\n");
  }
  return !errors.empty() && imported.empty() ? 1 : 0;
}

}  // namespace

void AddBookingsCommand(CLI::App& app, ClientOptions* options, int* exit_code) {
  auto args = std::make_shared<BookingsArgs>();
  CLI::App* c = app.add_subcommand("bookings", "List bookings, or show the week's calendar (--week)");
  c->footer(
      "Lists your open bookings and those of this week (--all: everyone's; the calendar is public).\n"
      "Columns: ID USER PROJECT GPUS START END HOURS STATE NOTE. GPUS: 0,1 (cards), 3:20G (a share of\n"
      "card 3), 2:3g.40gb (a slice on card 2), \"any 2\" while not placed. HOURS: GPU-hours.\n"
      "--pending: the requested bookings an admin decides on, with why each needs an admin (WHY).\n"
      "--week [DATE]: the calendar of this week (or the week holding DATE: 2026-12-01, 12-01, next, last),\n"
      "everyone's bookings, one row per GPU and per booked MIG slice, 12 two-hour cells a day; each\n"
      "booking's letter marks the cells it holds, \"+\" several bookings in one cell; the legend\n"
      "below lists them. Jobs too: \"=\" a running job on its cards until its time limit, \"~\" a\n"
      "waiting job at the scheduler's expected start (row \"expected\": any card). Today's date is\n"
      "in brackets.\n"
      "--from/--to WHEN: also list bookings that ended in that range (rotad reads WHEN).\n"
      "Subcommands: export (--csv | --ics) [--all] [-o FILE]; import FILE.csv [--skip-bad].");
  AddSocketFlag(c, options);
  c->add_flag("--all,-a", args->all, "everyone's bookings");
  CLI::Option* pending =
      c->add_flag("--pending", args->pending, "the requested bookings that wait for an admin");
  args->week_flag =
      c->add_option("--week,-w", args->week, "the week's calendar (this week, or the week of DATE)")
          ->expected(0, 1)
          ->type_name("[DATE]");
  CLI::Option* from =
      c->add_option("--from", args->from, "list those that ended from WHEN on")->type_name("WHEN");
  CLI::Option* to = c->add_option("--to", args->to, "... until WHEN")->type_name("WHEN");
  args->week_flag->excludes(pending)->excludes(from)->excludes(to);
  c->add_flag("--json", args->json, "print the daemon's reply as JSON");

  auto export_args = std::make_shared<ExportArgs>();
  CLI::App* e = c->add_subcommand("export", "Write bookings as CSV (the lab's spreadsheet) or iCalendar");
  e->footer(
      "CSV columns: id,task_name,user,project,gpu_id,start_time,end_time,est_hours,status,note (times in\n"
      "the server's zone; gpu_id the cards joined by +). ICS: one event per booking, in UTC.");
  AddSocketFlag(e, options);
  CLI::Option* csv = e->add_flag("--csv", export_args->csv, "comma-separated values");
  CLI::Option* ics = e->add_flag("--ics", export_args->ics, "iCalendar, for calendar programs");
  csv->excludes(ics);
  e->add_flag("--all,-a", export_args->all, "everyone's bookings (default: yours)");
  e->add_option("--output,-o", export_args->output, "write to FILE instead of standard output")
      ->type_name("FILE");
  e->callback([options, export_args, exit_code] { *exit_code = RunExport(*options, *export_args); });

  auto import_args = std::make_shared<ImportArgs>();
  CLI::App* i = c->add_subcommand("import", "Add bookings from a CSV file (the lab's spreadsheet)");
  i->footer(
      "Columns (a header row names them): at least task_name,user,gpu_id,start_time,end_time,est_hours,\n"
      "status; end_time may be empty when est_hours is given. Non-admins may import only their own rows.\n"
      "Each bad row is reported as FILE:LINE: message. Nothing is imported when a row is bad, unless\n"
      "--skip-bad (then the good rows are). Exit 1 when rows were bad and nothing was imported.");
  AddSocketFlag(i, options);
  i->add_option("FILE", import_args->file, "the CSV file; - for standard input")->required();
  i->add_flag("--skip-bad", import_args->skip_bad, "import the good rows even when some are bad");
  i->add_flag("--json", import_args->json, "print the daemon's reply as JSON");
  i->callback([options, import_args, exit_code] { *exit_code = RunImport(*options, *import_args); });

  c->callback([options, args, exit_code, e, i] {
    if (e->parsed() || i->parsed()) return;  // the subcommand did the work
    *exit_code = RunBookings(*options, *args);
  });
}

}  // namespace rota::cli

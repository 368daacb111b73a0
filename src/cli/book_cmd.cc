// `rota book`, `rota unbook`, `rota release`, `rota extend`, `rota approve`, `rota reject`
// (docs/api.md, ops "book", "unbook", "release", "extend", "approve", "reject"). The lines they
// print come from bookings_format.cc (tested by bookings_format_test.cc); this file builds the
// requests and maps replies to exit codes.
//
// Times: WHEN strings go to rotad as text (it parses them in the server's zone; all digits are
// sent as Unix seconds); durations are parsed here (ParseDuration) and sent as seconds. Replies
// carry Unix times, printed in the process's zone: rota runs on the server, so that is rotad's.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "api/protocol.h"
#include "cli/bookings_format.h"
#include "cli/daemon_client.h"
#include "cli/gpus_format.h"
#include "cli/text.h"

namespace rota::cli {

namespace {

using nlohmann::json;

// The reply as it came, error replies included (their "details" say more than the message).
StatusOr<json> CallForReply(const ClientOptions& options, const json& request) {
  auto conn = Connect(options);
  if (!conn.ok()) return conn.status();
  if (Status sent = conn->Send(request); !sent.ok()) return sent;
  return conn->Receive(-1);
}

// The Check of a refused `book` (docs/api.md: `details`), inside the error or beside it.
const json* Details(const json& reply) {
  auto error = reply.find("error");
  if (error != reply.end() && error->is_object()) {
    auto d = error->find("details");
    if (d != error->end() && d->is_object()) return &*d;
  }
  auto d = reply.find("details");
  return d != reply.end() && d->is_object() ? &*d : nullptr;
}

// Times as the server reads them: in the zone its reply carries, else the machine's.
BookingsFormat FormatFor(const json& reply) {
  BookingsFormat f;
  f.now = Now();
  f.zone = ZoneOfReply(reply, DisplayZone());
  return f;
}

// ---- rota book ----

struct BookArgs {
  int gpus = 0;
  std::string gpu;      // --gpu 0,1 or UUIDs
  std::string gpu_mem;  // --gpu-mem 40G
  std::string mig;      // --mig 3g.40gb
  std::string from;
  std::string length;  // --for
  std::string until;
  std::string project;
  std::string tier;
  std::string note;
  bool dry_run = false;
  bool json = false;
};

StatusOr<json> BookRequest(const BookArgs& a) {
  json booking = json::object();
  const int kinds = (a.gpus > 0) + !a.gpu.empty() + !a.gpu_mem.empty() + !a.mig.empty();
  if (kinds != 1) {
    return InvalidArgument("say what to book: one of --gpus N, --gpu 0,1, --gpu-mem 40G or --mig 3g.40gb");
  }
  if (a.gpus > 0) booking["gpus"] = a.gpus;
  if (!a.gpu.empty()) {
    json ids = json::array();
    size_t begin = 0;
    while (begin <= a.gpu.size()) {
      size_t comma = a.gpu.find(',', begin);
      if (comma == std::string::npos) comma = a.gpu.size();
      std::string id = a.gpu.substr(begin, comma - begin);
      if (IsBlank(id))
        return InvalidArgument("--gpu takes card indices or UUIDs separated by commas, not \"" + a.gpu +
                               "\"");
      ids.push_back(id);
      begin = comma + 1;
    }
    booking["gpu_ids"] = ids;
  }
  if (!a.gpu_mem.empty()) {
    auto mib = ParseMemory(a.gpu_mem);
    if (!mib || *mib <= 0)
      return InvalidArgument("--gpu-mem takes a size such as 20G or 40960 (MiB), not \"" + a.gpu_mem + "\"");
    booking["gpu_mem"] = *mib;
  }
  if (!a.mig.empty()) booking["mig"] = a.mig;
  if (IsBlank(a.from))
    return InvalidArgument("--from says when the booking starts (\"tomorrow 14:00\", \"12-01 09:00\")");
  booking["start"] = WhenArg(a.from);
  if (a.length.empty() == a.until.empty())
    return InvalidArgument("give the booking's length: --for 4h or --until 18:00");
  if (!a.length.empty()) {
    auto d = ParseDuration(a.length);
    if (!d || *d <= 0)
      return InvalidArgument("--for takes a length such as 4h, 90m or 1h30m, not \"" + a.length + "\"");
    booking["for"] = *d;
  } else {
    booking["end"] = WhenArg(a.until);
  }
  if (!a.project.empty()) booking["project"] = a.project;
  if (!a.tier.empty()) {
    if (!ParseTier(a.tier))
      return InvalidArgument("--tier is regular, thesis or explore, not \"" + a.tier + "\"");
    booking["tier"] = a.tier;
  }
  if (!a.note.empty()) booking["note"] = a.note;
  return json{{"op", "book"}, {"booking", booking}, {"dry_run", a.dry_run}};
}

int RunBook(const ClientOptions& options, const BookArgs& args) {
  auto request = BookRequest(args);
  if (!request.ok()) return Fail(request.status());
  auto reply = CallForReply(options, *request);
  if (!reply.ok()) return Fail(reply.status());
  const Status status = api::StatusOfReply(*reply);
  if (args.json) PrintJson(*reply);  // error replies too: scripts want the Check in "details"
  if (!status.ok()) {
    const json* details = Details(*reply);
    if (args.dry_run && details != nullptr && !args.json) {
      bool refused = false;
      PrintText(FormatBookCheck(*details, FormatFor(*reply), &refused));
    }
    // failed_precondition: the message names the bookings in the way and the nearest free starts.
    return Fail(status);
  }
  if (args.json) return 0;
  const BookingsFormat format = FormatFor(*reply);
  if (args.dry_run) {
    bool refused = false;
    PrintText(FormatBookCheck(*reply, format, &refused));
    return refused ? 1 : 0;
  }
  PrintText(FormatBooked(*reply, format));
  return 0;
}

// ---- unbook, release, extend, approve, reject ----

enum class Action { kUnbook, kRelease, kExtend, kApprove, kReject };

struct ActionArgs {
  long long id = 0;  // 0: none given (release: the caller's active bookings)
  std::string length;
  std::string until;
  std::string reason;
  bool json = false;
};

const char* OpName(Action a) {
  switch (a) {
    case Action::kUnbook:
      return "unbook";
    case Action::kRelease:
      return "release";
    case Action::kExtend:
      return "extend";
    case Action::kApprove:
      return "approve";
    case Action::kReject:
      return "reject";
  }
  return "";
}

StatusOr<json> ActionRequest(Action action, const ActionArgs& a) {
  json request = {{"op", OpName(action)}};
  if (a.id > 0) request["booking_id"] = a.id;
  if (action == Action::kExtend) {
    if (a.length.empty() == a.until.empty())
      return InvalidArgument("say how far: --for 1h (more) or --until 19:00");
    if (!a.length.empty()) {
      auto d = ParseDuration(a.length);
      if (!d || *d <= 0)
        return InvalidArgument("--for takes a length such as 1h, 30m or 1h30m, not \"" + a.length + "\"");
      request["for"] = *d;
    } else {
      request["end"] = WhenArg(a.until);
    }
  }
  if (action == Action::kReject && IsBlank(a.reason)) {
    return InvalidArgument("--reason must say why: the owner reads it");
  }
  if ((action == Action::kApprove || action == Action::kReject) && !IsBlank(a.reason))
    request["reason"] = a.reason;
  return request;
}

// The booking objects of a reply: "booking", or "bookings" (release without an id).
std::vector<json> RepliedBookings(const json& reply) {
  std::vector<json> out;
  auto one = reply.find("booking");
  if (one != reply.end() && one->is_object()) out.push_back(*one);
  auto many = reply.find("bookings");
  if (many != reply.end() && many->is_array()) {
    for (const json& b : *many) {
      if (b.is_object()) out.push_back(b);
    }
  }
  return out;
}

std::string ActionLine(Action action, const ActionArgs& args, const json& reply) {
  const std::string id = std::to_string(args.id);
  const std::vector<json> bookings = RepliedBookings(reply);
  switch (action) {
    case Action::kUnbook:
      return "Cancelled booking " + id + "\n";
    case Action::kRelease: {
      if (bookings.empty()) {
        if (reply.contains("bookings")) return "No active booking to release\n";
        return args.id > 0 ? "Released booking " + id + "\n" : "Released your active bookings\n";
      }
      std::string out;
      for (const json& b : bookings) out += FormatReleased(b);
      return out;
    }
    case Action::kExtend:
      return bookings.empty() ? "Extended booking " + id + "\n"
                              : FormatExtended(bookings.front(), FormatFor(reply));
    case Action::kApprove:
      return "Approved booking " + id + "\n";
    case Action::kReject:
      return "Rejected booking " + id + ": " + TerminalSafe(args.reason) + "\n";
  }
  return "";
}

int RunAction(const ClientOptions& options, Action action, const ActionArgs& args) {
  auto request = ActionRequest(action, args);
  if (!request.ok()) return Fail(request.status());
  auto reply = CallDaemon(options, *request);
  if (!reply.ok()) return Fail(reply.status());  // failed_precondition names what is in the way
  if (args.json) {
    PrintJson(*reply);
  } else {
    PrintText(ActionLine(action, args, *reply));
  }
  return 0;
}

CLI::App* AddAction(CLI::App& app, ClientOptions* options, int* exit_code, Action action, const char* help,
                    bool id_required) {
  auto args = std::make_shared<ActionArgs>();
  CLI::App* c = app.add_subcommand(OpName(action), help);
  AddSocketFlag(c, options);
  CLI::Option* id =
      c->add_option("ID", args->id, "the booking's id (rota bookings)")->check(CLI::PositiveNumber);
  if (id_required) id->required();
  if (action == Action::kExtend) {
    CLI::Option* length =
        c->add_option("--for", args->length, "this much longer: 1h, 30m, 1h30m")->type_name("TIME");
    CLI::Option* until =
        c->add_option("--until", args->until, "the new end: 19:00, \"tomorrow 02:00\"")->type_name("WHEN");
    length->excludes(until);
  }
  if (action == Action::kApprove) {
    c->add_option("--reason,-r", args->reason,
                  "why (recorded; required when it displaces someone else's booking)")
        ->type_name("TEXT");
  }
  if (action == Action::kReject) {
    c->add_option("--reason,-r", args->reason, "why, for the owner (required)")
        ->required()
        ->type_name("TEXT");
  }
  c->add_flag("--json", args->json, "print the daemon's reply as JSON");
  c->callback([options, args, exit_code, action] { *exit_code = RunAction(*options, action, *args); });
  return c;
}

}  // namespace

void AddBookCommands(CLI::App& app, ClientOptions* options, int* exit_code) {
  auto args = std::make_shared<BookArgs>();
  CLI::App* c = app.add_subcommand("book", "Book GPUs for a time slot on the lab's calendar");
  c->footer(
      "What: --gpus N (any N whole cards), --gpu 0,1 (these cards; indices or UUIDs), --gpu-mem 40G\n"
      "(a share of one card) or --mig 3g.40gb (a slice). When: --from WHEN and --for 4h or --until WHEN.\n"
      "WHEN is read by rotad in the server's time zone: \"2026-12-01 14:00\", \"12-01 14:00\",\n"
      "\"tomorrow 14:00\", \"14:00\" (today), \"mon 09:00\" (next Monday); --until may give only a time\n"
      "(the start's day). A booking within the rules is confirmed at once; otherwise it is requested and\n"
      "an admin decides (rota bookings --pending). --dry-run says what would happen, what is in the way\n"
      "and the nearest free starts, and stores nothing (exit 1 when it would be refused).\n"
      "Refused for a conflict: the message names the bookings in the way and the nearest free starts\n"
      "(exit 1). --json prints the daemon's reply, error replies included.");
  AddSocketFlag(c, options);
  CLI::Option* gpus =
      c->add_option("--gpus", args->gpus, "any N whole GPUs")->type_name("N")->check(CLI::PositiveNumber);
  CLI::Option* gpu = c->add_option("--gpu", args->gpu, "these cards: 0,1 or GPU-UUIDs")->type_name("ID[,ID]");
  CLI::Option* mem =
      c->add_option("--gpu-mem", args->gpu_mem, "a share of one GPU's memory, e.g. 40G")->type_name("SIZE");
  CLI::Option* mig =
      c->add_option("--mig", args->mig, "a MIG slice by profile, e.g. 3g.40gb")->type_name("PROFILE");
  gpus->excludes(gpu)->excludes(mem)->excludes(mig);
  gpu->excludes(mem)->excludes(mig);
  mem->excludes(mig);
  c->add_option("--from", args->from, "when it starts")->required()->type_name("WHEN");
  CLI::Option* length = c->add_option("--for", args->length, "how long: 4h, 90m, 1h30m")->type_name("TIME");
  CLI::Option* until = c->add_option("--until", args->until, "when it ends")->type_name("WHEN");
  length->excludes(until);
  c->add_option("--project", args->project, "the project it is for")->type_name("PROJECT");
  c->add_option("--tier", args->tier, "regular (default), thesis or explore")->type_name("TIER");
  c->add_option("--note", args->note, "what it is for, shown on the calendar")->type_name("TEXT");
  c->add_flag("--dry-run,-n", args->dry_run, "say what would happen; book nothing");
  c->add_flag("--json", args->json, "print the daemon's reply as JSON");
  c->callback([options, args, exit_code] { *exit_code = RunBook(*options, *args); });

  AddAction(app, options, exit_code, Action::kUnbook, "Cancel a requested or confirmed booking", true);
  AddAction(app, options, exit_code, Action::kRelease,
            "End an active booking now, so the rest of it is free (no ID: all your active ones)", false)
      ->footer("The hours not used stop counting against your weekly booking allowance.");
  AddAction(app, options, exit_code, Action::kExtend,
            "Make a booking longer (when the time after it is free)", true)
      ->footer(
          "Refused (exit 1) when capacity is taken or the rules do not allow the new length; the message "
          "says\n"
          "what is in the way.");
  AddAction(app, options, exit_code, Action::kApprove, "Confirm a requested booking (admins)", true)
      ->footer(
          "A reason is required when the booking displaces someone else's, which is then rejected with it.");
  AddAction(app, options, exit_code, Action::kReject, "Refuse a requested booking (admins)", true);
}

}  // namespace rota::cli

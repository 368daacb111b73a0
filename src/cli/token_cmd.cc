// `rota token create|list|revoke`: API tokens for scripts using the HTTP API as
// `Authorization: Bearer <token>` (docs/http.md). Tested by tests/daemon/test_http.py.
#include <cstdio>
#include <memory>

#include "cli/daemon_client.h"
#include "cli/job_format.h"
#include "cli/text.h"

namespace rota::cli {

namespace {

struct TokenFlags {
  std::string name;
  std::string expires;
  std::string scope;
  bool all = false;
  bool json = false;
  long long id = 0;
};

int RunCreate(const ClientOptions& options, const TokenFlags& f) {
  nlohmann::json request = {{"op", "token_create"}, {"name", f.name}};
  if (!f.expires.empty()) request["expires"] = f.expires;
  if (!f.scope.empty()) request["scope"] = f.scope;
  auto reply = CallDaemon(options, request);
  if (!reply.ok()) return Fail(reply.status());
  if (f.json) {
    PrintJson({{"id", reply->value("id", 0LL)},
               {"token", reply->value("token", "")},
               {"expires", reply->value("expires", 0LL)},
               {"scope", reply->value("scope", "full")}});
    return 0;
  }
  std::printf("Token %lld%s (shown only now; keep it secret):\n%s\n", reply->value("id", 0LL),
              f.name.empty() ? "" : (" \"" + f.name + "\"").c_str(), reply->value("token", "").c_str());
  const long long expires = reply->value("expires", 0LL);
  if (expires) std::printf("Expires %s.\n", FormatLocalTime(expires).c_str());
  const std::string scope = reply->value("scope", "full");
  if (scope == "calendar") {
    std::printf("It reads the calendar feed only: /calendar.ics?token=<token> (add &lab=1 for the whole lab's)\n");
  } else {
    std::printf("It may %s; use it as the header  Authorization: Bearer <token>\n",
                scope == "read" ? "read (queue, GPUs, bookings, usage), not change anything" : "do what you may");
  }
  return 0;
}

int RunList(const ClientOptions& options, const TokenFlags& f) {
  auto reply = CallDaemon(options, {{"op", "token_list"}, {"all", f.all}});
  if (!reply.ok()) return Fail(reply.status());
  const nlohmann::json tokens = reply->value("tokens", nlohmann::json::array());
  if (f.json) {
    PrintJson(tokens);
    return 0;
  }
  Table table({"ID", "USER", "NAME", "SCOPE", "CREATED", "EXPIRES", "STATE"});
  for (const nlohmann::json& t : tokens) {
    const long long expires = t.value("expires", 0LL);
    const long long revoked = t.value("revoked_at", 0LL);
    table.AddRow({std::to_string(t.value("id", 0LL)), t.value("user", ""), t.value("name", ""), t.value("scope", "full"),
                  FormatLocalTime(t.value("created", 0LL)), expires ? FormatLocalTime(expires) : "never",
                  revoked ? "revoked by " + t.value("revoked_by", std::string("?")) : "in force"});
  }
  std::string text = table.Render();
  PrintText(text);
  return 0;
}

int RunRevoke(const ClientOptions& options, const TokenFlags& f) {
  auto reply = CallDaemon(options, {{"op", "token_revoke"}, {"id", f.id}});
  if (!reply.ok()) return Fail(reply.status());
  std::printf("Revoked token %lld\n", f.id);
  return 0;
}

}  // namespace

void AddTokenCommands(CLI::App& app, ClientOptions* options, int* exit_code) {
  auto f = std::make_shared<TokenFlags>();
  CLI::App* token = app.add_subcommand("token", "API tokens for scripts using the HTTP API");
  token->require_subcommand(1);
  CLI::App* create = token->add_subcommand("create", "Make a token (printed once)");
  AddSocketFlag(create, options);
  create->add_option("--name", f->name, "what it is for, e.g. grafana");
  create->add_option("--expires", f->expires, "valid for this long, e.g. 30d (default: until revoked)");
  create->add_option("--scope", f->scope,
                     "what it may do: calendar (the calendar feed only; the default with --name calendar), read, "
                     "full (the default)")
      ->check(CLI::IsMember({"calendar", "read", "full"}));
  create->add_flag("--json", f->json, "print {\"id\", \"token\", \"expires\"} as JSON");
  create->callback([options, f, exit_code] { *exit_code = RunCreate(*options, *f); });
  CLI::App* list = token->add_subcommand("list", "List your tokens (admins: --all)");
  AddSocketFlag(list, options);
  list->add_flag("--all", f->all, "everyone's tokens (admins)");
  list->add_flag("--json", f->json, "print the tokens as JSON");
  list->callback([options, f, exit_code] { *exit_code = RunList(*options, *f); });
  CLI::App* revoke = token->add_subcommand("revoke", "Revoke a token at once");
  AddSocketFlag(revoke, options);
  revoke->add_option("id", f->id, "the token's id (rota token list)")->required();
  revoke->callback([options, f, exit_code] { *exit_code = RunRevoke(*options, *f); });
}

}  // namespace rota::cli

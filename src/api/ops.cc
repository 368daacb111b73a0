#include "api/ops.h"

#include <array>

namespace rota::api {

namespace {

constexpr std::string_view kLiveConnection = "needs a live connection to rotad; use `rota run` on the server";
constexpr std::string_view kMintsCredential =
    "mints a credential and is only answered on the Unix socket (`rota web`, `rota token create`)";

constexpr OpAccess kAnyone = OpAccess::kAnyone;
constexpr OpAccess kOwner = OpAccess::kOwner;
constexpr OpAccess kAdmin = OpAccess::kAdmin;

// name, access, admin_action, read_only, public_read, socket_only
constexpr std::array<OpInfo, 40> kOps = {{
    {"hello", kAnyone, "", true, true, ""},
    {"submit", kAnyone, "", false, false, ""},
    {"run", kAnyone, "", false, false, kLiveConnection},
    {"session_end", kOwner, "", false, false, kLiveConnection},
    {"session_signal", kOwner, "", false, false, kLiveConnection},
    {"session_attach", kOwner, "", false, false, kLiveConnection},
    {"queue", kAnyone, "", true, true, ""},
    {"show", kOwner, "", true, false, ""},
    {"cancel", kOwner, "", false, false, ""},
    {"history", kOwner, "", true, false, ""},
    {"logs", kOwner, "", true, false, ""},
    {"status", kAnyone, "", true, true, ""},
    {"gpus", kAnyone, "", true, true, ""},
    {"inventory", kAnyone, "", true, true, ""},
    {"drain", kAdmin, "drain GPUs", false, false, ""},
    {"resume", kAdmin, "resume GPUs", false, false, ""},
    {"reload", kAdmin, "reload the configuration", false, false, ""},
    {"poke", kAnyone, "", false, false, ""},
    {"book", kAnyone, "", false, false, ""},
    {"bookings", kAnyone, "", true, true, ""},
    {"unbook", kOwner, "", false, false, ""},
    {"release", kOwner, "", false, false, ""},
    {"extend", kOwner, "", false, false, ""},
    {"approve", kAdmin, "approve or reject bookings", false, false, ""},
    {"reject", kAdmin, "approve or reject bookings", false, false, ""},
    {"bookings_export", kAnyone, "", false, false, ""},
    {"bookings_import", kOwner, "", false, false, ""},
    {"keep", kOwner, "", false, false, ""},
    {"events", kOwner, "", true, false, ""},
    {"usage", kAnyone, "", true, true, ""},
    {"rules", kAnyone, "", true, true, ""},
    {"advise", kAnyone, "", true, false, ""},
    {"replay", kAnyone, "", true, false, ""},
    {"tune", kAdmin, "tune the lab's policy", true, false, ""},
    {"web_login", kAnyone, "", false, false, kMintsCredential},
    {"token_create", kAnyone, "", false, false, kMintsCredential},
    {"token_list", kOwner, "", true, false, ""},
    {"token_revoke", kOwner, "", false, false, ""},
    {"notify_test", kAdmin, "test the notification channels", false, false, ""},
    {"notify_log", kAdmin, "read the notifications' log", false, false, ""},
}};

}  // namespace

std::span<const OpInfo> Ops() { return kOps; }

const OpInfo* FindOp(std::string_view name) {
  for (const OpInfo& op : kOps) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

std::string OpNames() {
  std::string out;
  for (const OpInfo& op : kOps) {
    if (!out.empty()) out += ", ";
    out += op.name;
  }
  return out;
}

}  // namespace rota::api

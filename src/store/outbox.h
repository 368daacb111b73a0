// The notifications' outbox: one row per message and channel, written by the daemon's event loop
// (Enqueue: one insert, no network) and delivered by the notifier thread through its own
// connection to the same database (Due, then MarkSent / Retry / Defer / MarkFailed).
//
// A row's states (docs/design.md, "Notifications: outbox and delivery"):
//   pending --sent--> sent        (delivered time recorded)
//   pending --retry/defer--> pending (next_attempt moves; Retry counts an attempt, Defer does not)
//   pending --give up--> failed   (last_error says why)
// Settled rows (sent, failed) are deleted by Prune once old enough; pending rows never are: a row
// that was pending when rotad stopped is pending when it starts.
//
// Not thread-safe: an Outbox belongs to the thread that owns its Db.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/types.h"
#include "store/db.h"

namespace rota::store {

enum class OutboxState : std::uint8_t { kPending, kSent, kFailed };
const char* OutboxStateName(OutboxState s);
// The state named "pending", "sent" or "failed"; nullopt for any other name.
std::optional<OutboxState> OutboxStateFromName(std::string_view name);

struct OutboxRow {
  std::int64_t id = 0;
  std::string channel;                // a [notify.channels.NAME]
  std::string recipient;              // the user concerned; "" for the admins / the lab
  std::vector<std::string> mentions;  // in the channel's id space (notify::Message::mentions)
  std::string event;                  // "job_ended", ...
  std::string language;               // "zh" or "en"
  std::string subject;
  std::string body;
  Time created = 0;
  int attempts = 0;
  Time next_attempt = 0;
  std::string last_error;
  OutboxState state = OutboxState::kPending;
  std::optional<Time> delivered;
};

class Outbox {
 public:
  // `db` must be migrated (schema version 5 or later) and must outlive the Outbox.
  explicit Outbox(Db& db) : db_(db) {}

  // Inserts every row as pending (state, attempts, last_error and delivered are ignored), in one
  // transaction; returns their ids in order.
  StatusOr<std::vector<std::int64_t>> Enqueue(const std::vector<OutboxRow>& rows);
  // Pending rows with next_attempt <= now, oldest attempt first, at most `limit`.
  StatusOr<std::vector<OutboxRow>> Due(Time now, int limit);
  // The earliest next_attempt of a pending row, or nullopt when none is pending.
  StatusOr<std::optional<Time>> NextDue();

  // Each applies to a pending row only (a row no longer pending is left alone, NotFound).
  Status MarkSent(std::int64_t id, int attempts, Time now);
  Status Retry(std::int64_t id, int attempts, Time next_attempt, const std::string& error);
  Status Defer(std::int64_t id, Time next_attempt);  // a rate limit: not an attempt
  Status MarkFailed(std::int64_t id, int attempts, const std::string& error);

  StatusOr<OutboxRow> Get(std::int64_t id);
  // Every row, oldest first (tests); `state` filters when given.
  StatusOr<std::vector<OutboxRow>> List(std::optional<OutboxState> state);
  // The rows created at `since` or later, newest first, at most `limit` (`rota notify log`).
  StatusOr<std::vector<OutboxRow>> Recent(Time since, std::optional<OutboxState> state, int limit);
  // How many rows are in each state ("pending", "sent", "failed"; absent: none).
  StatusOr<std::map<std::string, std::int64_t>> CountByState();
  // Deletes the sent and failed rows created before `before`, in one transaction that also adds
  // them to the pruned totals. Returns how many went.
  StatusOr<std::int64_t> Prune(Time before);
  // Rows ever settled, kept or pruned ("sent", "failed"; absent: none), for /metrics' counters.
  StatusOr<std::map<std::string, std::int64_t>> SettledTotals();

 private:
  // (text, count) rows summed by text.
  StatusOr<std::map<std::string, std::int64_t>> Counts(std::string_view sql);
  Status UpdatePending(std::string_view sql, std::int64_t id, std::string_view what,
                       const std::function<void(Statement&)>& bind);
  StatusOr<std::vector<OutboxRow>> Select(std::string_view where,
                                          const std::function<void(Statement&)>& bind);
  Db& db_;
};

}  // namespace rota::store

// What the tests of the daemon's parts build them on, one way everywhere: callers with the
// made-up users' uids, a real store in a temporary directory, and a Notifications part that
// queues into that store's outbox and notes nothing (for parts that tell people as they go).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>

#include "config/config.h"
#include "core/cluster.h"
#include "daemon/event_loop.h"
#include "daemon/identity.h"
#include "daemon/notifications.h"
#include "daemon/server.h"
#include "daemon/usage_ledger.h"
#include "device/devices.h"
#include "store/job_store.h"
#include "testing/fake_clock.h"
#include "testing/temp_dir.h"

namespace rota::testing {

// Caller `name` with uid and gid `uid` (alice 20001, bob 20002, root 0 and an admin, as in the
// in-process daemon's made-up users).
daemon::Caller Person(const std::string& name, uid_t uid, bool admin = false);
// The configuration `toml` says (after the defaults); the defaults, the test failed, when it
// does not parse.
config::Config ParsedConfig(const std::string& toml);
// A store in `dir` (created and migrated); null, the test failed, when it cannot be opened.
std::unique_ptr<store::JobStore> OpenStore(const TempDir& dir);
// Notifications over `store` on `clock` with `config` (all must outlive it): messages are queued
// in the outbox, no audit lines are written, a job's cards read "0".
std::unique_ptr<daemon::Notifications> QuietNotifications(store::JobStore& store, const FakeClock& clock,
                                                          const config::Config& config);

// A sample of `count` idle 80 GB cards, GPU-0 to GPU-(count-1), for Inventory::Load.
device::Snapshot IdleCards(int count);

// A new event loop; null, the test failed, when it cannot be made.
std::unique_ptr<daemon::EventLoop> NewLoop();

// A UsageLedger over `store`, `config`, the inventory's `cards` and `notes` (all must outlive
// it), loaded; null, the test failed, when it cannot load.
std::unique_ptr<daemon::UsageLedger> LoadedLedger(store::JobStore& store, const config::Config& config,
                                                  const ClusterState& cards, daemon::Notifications& notes);

// What a socket server made for a part's test is handed: it has no connections (replies to
// unknown connections are dropped), so nothing reaches it.
class NoConnections final : public daemon::Server::Handler {
 public:
  void OnLine(daemon::ConnId, std::string_view) override {}
  void OnClose(daemon::ConnId) override {}
};

}  // namespace rota::testing

// What the tests of the daemon's parts build them on, one way everywhere: callers with the
// made-up users' uids, a real store in a temporary directory, and a Notifications part that
// queues into that store's outbox and notes nothing (for parts that tell people as they go).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "config/config.h"
#include "daemon/identity.h"
#include "daemon/notifications.h"
#include "store/job_store.h"
#include "testing/fake_clock.h"
#include "testing/temp_dir.h"

namespace rota::testing {

// Caller `name` with uid and gid `uid` (alice 20001, bob 20002, root 0 and an admin, as in the
// in-process daemon's made-up users).
daemon::Caller Person(const std::string& name, uid_t uid, bool admin = false);
// A store in `dir` (created and migrated); null, the test failed, when it cannot be opened.
std::unique_ptr<store::JobStore> OpenStore(const TempDir& dir);
// Notifications over `store` on `clock` with `config` (all must outlive it): messages are queued
// in the outbox, no audit lines are written, a job's cards read "0".
std::unique_ptr<daemon::Notifications> QuietNotifications(store::JobStore& store, const FakeClock& clock,
                                                          const config::Config& config);

}  // namespace rota::testing

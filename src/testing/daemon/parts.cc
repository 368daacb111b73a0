#include "testing/daemon/parts.h"

#include <gtest/gtest.h>

namespace rota::testing {

daemon::Caller Person(const std::string& name, uid_t uid, bool admin) {
  daemon::Caller c;
  c.uid = uid;
  c.gid = uid;
  c.name = name;
  c.admin = admin;
  return c;
}

std::unique_ptr<store::JobStore> OpenStore(const TempDir& dir) {
  StatusOr<std::unique_ptr<store::JobStore>> store = store::JobStore::Open(dir.path() + "/rota.db");
  if (!store.ok()) {
    ADD_FAILURE() << "the store: " << store.status().message();
    return nullptr;
  }
  return std::move(*store);
}

std::unique_ptr<daemon::Notifications> QuietNotifications(store::JobStore& store, const FakeClock& clock,
                                                          const config::Config& config) {
  daemon::Notifications::Setup n;
  n.store = &store;
  n.clock = &clock;
  n.note_job = [](JobId, const std::string&, Time) {};
  n.gpus_of = [](const store::JobRecord&) { return std::string("0"); };
  return std::make_unique<daemon::Notifications>(std::move(n), config);
}

}  // namespace rota::testing

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

config::Config ParsedConfig(const std::string& toml) {
  StatusOr<config::Config> config = config::ParseConfig(toml, "rota.toml");
  if (!config.ok()) {
    ADD_FAILURE() << "the configuration: " << config.status().message();
    return config::Config{};
  }
  return std::move(*config);
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

device::Snapshot IdleCards(int count) {
  device::Snapshot snap;
  snap.driver_version = "550";
  for (int i = 0; i < count; ++i) {
    device::GpuInfo card;
    card.index = i;
    card.uuid = "GPU-" + std::to_string(i);
    card.memory_total = 81920;
    snap.gpus.push_back(card);
  }
  return snap;
}

std::unique_ptr<daemon::EventLoop> NewLoop() {
  StatusOr<std::unique_ptr<daemon::EventLoop>> loop = daemon::EventLoop::Create();
  if (!loop.ok()) {
    ADD_FAILURE() << "the event loop: " << loop.status().message();
    return nullptr;
  }
  return std::move(*loop);
}

std::unique_ptr<daemon::UsageLedger> LoadedLedger(store::JobStore& store, const config::Config& config,
                                                  const ClusterState& cards, daemon::Notifications& notes) {
  daemon::UsageLedger::Setup s;
  s.store = &store;
  s.config = &config;
  s.cards = &cards;
  s.notes = &notes;
  auto ledger = std::make_unique<daemon::UsageLedger>(s);
  if (Status st = ledger->Load(); !st.ok()) {
    ADD_FAILURE() << "the ledger: " << st.message();
    return nullptr;
  }
  return ledger;
}

}  // namespace rota::testing

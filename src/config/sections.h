// Internal to rota_config: one reader per part of the file, each filling its part of Config from
// the top-level section and recording its errors there.
#pragma once

#include "config/config.h"
#include "config/reader.h"

namespace rota::config::internal {

void ReadPolicy(Section& root, Config& config);      // [policy], [policy.weights], [[policy.time_of_day]]
void ReadQuota(Section& root, Config& config);       // [quota], [quota.roles], [preemption]
void ReadGpus(Section& root, Config& config);        // [gpus], [[gpus.card]]
void ReadInventory(Section& root, Config& config);   // [inventory]
void ReadRules(Section& root, Config& config);       // [rules]
void ReadAdvice(Section& root, Config& config);      // [advice]
void ReadContainers(Section& root, Config& config);  // [containers]
void ReadBookings(Section& root, Config& config);    // [bookings]
void ReadWatch(Section& root, Config& config);       // [watch]
void ReadWeb(Section& root, Config& config);         // [web]
void ReadLimits(Section& root, Config& config);      // [limits]
void ReadEngine(Section& root, Config& config);      // [engine]
void ReadNotify(Section& root, Config& config);      // [notify], [notify.channels.NAME]; before ReadPeople
void ReadUserNotify(Section& s, const Config& config, UserConfig& user);  // [users.NAME] language, notify, events
void ReadPeople(Section& root, Config& config);      // [users.NAME], [projects.NAME]; after ReadQuota

}  // namespace rota::config::internal

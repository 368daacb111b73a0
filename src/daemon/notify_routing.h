// Who hears of an event, through which channels, with which mention and in which language
// (docs/notify.md): the rows the daemon queues in the outbox for it. Pure: the configuration and
// the time come in, rows come out; no store, no network. Tested by notify_routing_test.cc.
//
// Design: a user's events go to their channels ([users.NAME] notify, else [notify] user_channels)
// when they want the event ([users.NAME] events, else [notify] user_events), with their mention
// id for each platform (their email address for email, their name for terminals), in their
// language; warnings also reach their terminals whatever they chose; the admins' events go to the
// admin channels in the lab's language, except a channel that already carries the user's copy
// and terminals.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "config/config.h"
#include "notify/templates.h"
#include "store/outbox.h"

namespace rota::daemon {

// Warnings that ask the user to act now: they also go to the user's terminals.
bool IsWarning(const std::string& event);

// The rows for `e` (user `e.user`, "" for an admins' event alone), rendered and due at `now`.
std::vector<store::OutboxRow> RouteEvent(const notify::Event& e, const config::NotifyConfig& notify,
                                         const std::map<std::string, config::UserConfig>& users, Time now);

// "alice (mail, lab) and the admins (admin-mail)": whom `rows` tell, for a job's audit trail.
std::string WhoIsTold(const std::vector<store::OutboxRow>& rows, const std::string& user);

}  // namespace rota::daemon

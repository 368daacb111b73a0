// What the notifications say, in Chinese and English: pure functions from an Event (what
// happened, to whose work) and a language to a Message (subject and text). Each message says
// what happened, why, and what to do (the command to run). All wording lives in templates.cc.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "notify/channel.h"

namespace rota::notify {

// The events a user or the admins may subscribe to (docs/notify.md), in a fixed order.
std::span<const std::string_view> EventNames();
bool IsEventName(std::string_view name);
// The events that concern the admins rather than one user's work (the default admin_events).
bool IsAdminEvent(std::string_view name);

struct Event {
  std::string name;      // one of EventNames()
  std::string user;      // whose work it concerns; "" = the lab's (a drained GPU, a channel)
  std::int64_t job = 0;  // the job, when there is one
  std::string job_name;
  std::int64_t booking = 0;  // the booking, when there is one
  std::string state;         // job_ended / job_failed: completed, failed, timeout, cancelled, node_fail,
                             // stopped (by rotad: reclaimed as idle, its booking ended)
  std::string reason;        // why: the end reason, the rejection reason, the drain reason, an error
  std::string actor;         // who did it: the admin who cancelled, rejected, ...
  std::string gpus;          // "0,1": the cards' indices
  std::string when;          // an already formatted local time or interval ("12-01 14:00-18:00")
  std::int64_t minutes = 0;  // minutes left (time_limit_soon, booking_ending_soon) or idle
  int percent = 0;           // quota_80 / quota_100: the share of the weekly quota used
  std::int64_t pid = 0;      // outside_process
  std::string host;          // the server's name
  std::string channel;       // channel_failing: the channel's name
};

// "zh" or "en"; anything else is English.
Message Render(const Event& event, std::string_view language);

}  // namespace rota::notify

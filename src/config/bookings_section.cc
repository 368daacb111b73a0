// [bookings]: the calendar's rules (core/booking.h, BookingRules). Tested by config_test.cc.
#include <algorithm>
#include <limits>

#include "config/sections.h"

namespace rota::config::internal {

void ReadBookings(Section& root, Config& config) {
  const toml::table* t = root.Table("bookings");
  if (!t) return;
  Section s(*t, "[bookings]", root.errors());
  BookingRules& r = config.bookings;
  if (auto d = s.DurationOf("slot", 1)) {
    if (kDay % *d == 0) {
      r.slot = *d;
    } else {
      s.Fail(*s.Get("slot"), "slot", "does not divide a day (use \"15m\", \"30m\", \"1h\")");
    }
  }
  if (auto d = s.DurationOf("max_ahead", 1)) r.max_ahead = *d;
  if (auto b = s.Bool("same_day_needs_admin")) r.same_day_needs_admin = *b;
  if (auto d = s.DurationOf("max_length", 1)) r.max_length = *d;
  if (auto n = s.Integer("max_per_week", 0, 1000)) r.max_per_week = static_cast<int>(*n);
  // "quota" (the default): the user's weekly quota; "unlimited"; or GPU-hours.
  if (const toml::node* n = s.Get("max_gpu_hours_per_week"); n && n->as_string() && n->as_string()->get() == "quota") {
    r.max_gpu_hours_per_week = -1;
  } else if (auto h = s.Hours("max_gpu_hours_per_week")) {
    r.max_gpu_hours_per_week = *h < 0 ? std::numeric_limits<double>::infinity() : *h;
  }
  if (auto b = s.Bool("auto_confirm")) r.auto_confirm = *b;
  if (auto d = s.DurationOf("no_show_grace", 1)) r.no_show_grace = *d;
  if (auto d = s.DurationOf("reminder", 0)) r.reminder = *d;
  if (auto v = s.Number("penalty_step", 0, "a number from 0 to 1 such as 0.25")) r.penalty_step = std::min(1.0, *v);
  if (auto d = s.DurationOf("penalty_half_life", 1)) r.penalty_half_life = *d;
  if (auto n = s.Integer("penalty_alert", 0, 1000)) r.penalty_alert = static_cast<int>(*n);
  if (auto d = s.DurationOf("penalty_window", 1)) r.penalty_window = *d;
  s.Finish();
}

}  // namespace rota::config::internal

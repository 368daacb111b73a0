// The scheduler's and the cards' part of GET /metrics (docs/http.md, "Metrics"), written by hand
// in the Prometheus text format (web/metrics_text.h); the HTTP front end appends its own request
// counters. Per-GPU labels are dcgm-exporter's (gpu, UUID, modelName) so dashboards can join the
// two. Tested by tests/daemon/test_http.py and test_prometheus.py.
#include <spdlog/spdlog.h>

#include "api/protocol.h"
#include "core/quota.h"
#include "core/usage.h"
#include "daemon/card_desk.h"
#include "daemon/daemon.h"

namespace rota::daemon {

namespace {

constexpr store::JobState kLiveStates[] = {store::JobState::kPending, store::JobState::kRunning};
constexpr BookingState kBookingStates[] = {
    BookingState::kRequested, BookingState::kConfirmed, BookingState::kActive,   BookingState::kEnded,
    BookingState::kReleased,  BookingState::kNoShow,    BookingState::kOverrun,  BookingState::kRejected,
    BookingState::kCancelled};

}  // namespace

std::string Daemon::MetricsText() {
  web::MetricsWriter w;
  card_desk_->WriteMetrics(w);  // the cards first, as dcgm-exporter
  // The scheduler.
  w.Family("rota_jobs", "gauge", "Jobs pending and running, by tier.");
  for (store::JobState state : kLiveStates) {
    for (int t = 0; t < kTierCount; ++t) {
      const Tier tier = static_cast<Tier>(t);
      double n = 0;
      for (const auto& [id, a] : jobs_) n += a.rec.state == state && a.rec.job.tier == tier ? 1 : 0;
      w.Sample("rota_jobs", {{"state", store::JobStateName(state)}, {"tier", TierName(tier)}}, n);
    }
  }
  counters_.WriteRuns(w);
  w.Family("rota_bookings", "gauge", "Bookings in memory (open ones and those closed recently), by state.");
  for (BookingState state : kBookingStates) {
    double n = 0;
    for (const auto& [id, b] : desk_->book().all()) n += b.entry.state == state ? 1 : 0;
    w.Sample("rota_bookings", {{"state", BookingStateName(state)}}, n);
  }
  counters_.WriteIdle(w);
  // From the outbox: totals over the store's life (rows kept, plus those pruned), not only this
  // rotad's.
  std::map<std::string, std::int64_t> settled, now_in;
  if (store::Outbox* outbox = notes_->outbox()) {
    auto totals = outbox->SettledTotals();
    auto counts = outbox->CountByState();
    if (totals.ok() && counts.ok()) {
      settled = std::move(*totals);
      now_in = std::move(*counts);
    } else {
      spdlog::error("metrics: counting the outbox: {}", (totals.ok() ? counts.status() : totals.status()).message());
    }
  }
  auto count = [](const std::map<std::string, std::int64_t>& m, const char* state) {
    auto it = m.find(state);
    return it == m.end() ? 0.0 : static_cast<double>(it->second);
  };
  w.Family("rota_notifications_total", "counter", "Notifications delivered (sent) and given up on (failed), from the outbox.");
  for (const char* result : {"sent", "failed"}) {
    w.Sample("rota_notifications_total", {{"result", result}}, count(settled, result));
  }
  w.Family("rota_notifications_pending", "gauge", "Notifications waiting in the outbox (due or retrying).");
  w.Sample("rota_notifications_pending", {}, count(now_in, "pending"));
  w.Family("rota_build_info", "gauge", "rotad's version (always 1).");
  w.Sample("rota_build_info", {{"version", api::kDaemonVersion}}, 1);
  return w.text();
}

void CardDesk::WriteMetrics(web::MetricsWriter& w) const {
  // Per card, from the last good sample.
  struct Gauge {
    const char* name;
    const char* help;
    double (*value)(const device::GpuInfo&);
  };
  static const Gauge kGauges[] = {
      {"rota_gpu_utilization_percent", "GPU utilisation in percent (NVML utilization.gpu).",
       [](const device::GpuInfo& g) { return static_cast<double>(g.util_gpu); }},
      {"rota_gpu_memory_used_bytes", "GPU memory in use, bytes.",
       [](const device::GpuInfo& g) { return g.memory_used < 0 ? -1.0 : static_cast<double>(g.memory_used) * 1048576; }},
      {"rota_gpu_memory_total_bytes", "GPU memory in total, bytes.",
       [](const device::GpuInfo& g) { return static_cast<double>(g.memory_total) * 1048576; }},
      {"rota_gpu_temperature_celsius", "GPU temperature, degrees Celsius.",
       [](const device::GpuInfo& g) { return static_cast<double>(g.temperature); }},
      {"rota_gpu_power_watts", "GPU power draw, watts.",
       [](const device::GpuInfo& g) { return g.power_mw < 0 ? -1.0 : g.power_mw / 1000.0; }},
  };
  auto card_labels = [](const std::string& index, const std::string& uuid, const std::string& model) {
    return web::Labels{{"gpu", index}, {"UUID", uuid}, {"modelName", model}};
  };
  for (const Gauge& g : kGauges) {
    w.Family(g.name, "gauge", g.help);
    for (const device::GpuInfo& info : watch_->last_sample().gpus) {
      const double v = g.value(info);
      if (v < 0) continue;  // unknown: no sample rather than a made-up value
      w.Sample(g.name, card_labels(std::to_string(info.index), info.uuid, info.name), v);
    }
  }
  w.Family("rota_gpu_allocated", "gauge", "1 for each card a running job holds, with the job and its user.");
  for (const auto& [id, a] : jobs_) {
    if (a.rec.state != store::JobState::kRunning) continue;
    for (const std::string& uuid : a.rec.placement.gpu_uuids) {
      std::string index = "-1", model;
      for (const Gpu& g : cards_.gpus()) {
        if (g.uuid == uuid) {
          index = std::to_string(g.index);
          model = g.model;
        }
      }
      web::Labels l = card_labels(index, uuid, model);
      l.emplace_back("job_id", std::to_string(id));
      l.emplace_back("user", a.rec.job.user);
      w.Sample("rota_gpu_allocated", l, 1);
    }
  }
}

}  // namespace rota::daemon

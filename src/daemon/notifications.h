// The daemon's notifications: what happens becomes messages in the outbox, and the notifier
// thread (notifier.h) delivers them. This part owns the loop's handle on the outbox, the notifier,
// the `rota notify test` requests waiting for their attempts, and the reminders it decides itself:
// a running job's time limit drawing near ([notify] time_limit_warning, once per run, not again
// after a restart) and a user's weekly quota reaching 80 % and 100 % (once per week and level,
// kept in the store's quota_notices). Who hears of an event, through which channels, is
// notify_routing.h's.
//
// Everything here runs on the daemon's loop thread; Notify is one outbox insert, never the
// network. Tested by notifications_test.cc (this part alone, on a fake clock and fake channels),
// notify_retry_test.cc (in-process) and tests/daemon/test_notify.py (real SMTP and HTTP).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "core/status.h"
#include "core/types.h"
#include "daemon/active_job.h"
#include "daemon/clock.h"
#include "daemon/event_loop.h"
#include "daemon/notifier.h"
#include "daemon/server.h"
#include "notify/channels.h"
#include "notify/templates.h"
#include "store/job_store.h"
#include "store/outbox.h"

namespace rota::daemon {

class Notifications {
 public:
  using ChannelFactory =
      std::function<StatusOr<std::unique_ptr<notify::Channel>>(const notify::ChannelSpec&)>;
  struct Setup {
    store::JobStore* store = nullptr;  // the outbox is in its database; must outlive this part
    const Clock* clock = nullptr;      // must outlive this part
    ChannelFactory channels;           // makes each [notify.channels.NAME]
    std::string host;                  // this server's name, for the messages
    // Adds a line to a job's audit trail (who was told of a warning; the time-limit reminder,
    // which a restarted daemon finds there and does not send again).
    std::function<void(JobId, const std::string& line, Time now)> note_job;
    // "0,1": the device indices of the cards of a job's placement, for its messages.
    std::function<std::string(const store::JobRecord&)> gpus_of;
  };
  // A `rota notify test` answered: the reply for the connection that asked.
  struct TestReply {
    ConnId conn = 0;
    nlohmann::json reply;
  };

  // `config` is the configuration in force: the daemon's, replaced in place on reload; it must
  // outlive this part. Events are queued from here on; the notifier sends them once configured.
  Notifications(Setup setup, const config::Config& config);
  ~Notifications();  // stops the notifier: see Stop
  Notifications(const Notifications&) = delete;
  Notifications& operator=(const Notifications&) = delete;

  // Reads which quota notices were told before a restart.
  Status Load();
  // Starts the notifier with the configuration's channels and rules, watching its results on
  // `loop` (`on_results` is called there when attempts of `rota notify test` are done), or hands
  // a running one the configuration now in force (a reload).
  Status Configure(EventLoop& loop, std::function<void()> on_results);
  // Stops the notifier: a send in progress finishes, unsent messages stay in the outbox. Returns
  // the replies owed to the tests still waiting (refused: rotad is stopping).
  std::vector<TestReply> Stop();
  // Tells the notifier to look at the outbox now (on a virtual clock it waits to be told).
  void Wake();

  // Queues `event`'s messages (notify_routing.h decides who hears of it); for a job's warning or
  // action, says in its audit trail who was told. Nothing when no channel is configured.
  void Notify(notify::Event event);
  // The event `name` about job `rec` (its user, id, name, cards, this host).
  notify::Event JobEvent(const std::string& name, const store::JobRecord& rec) const;
  // The end of a job, as its owner hears of it: nothing for a cancel of their own; a stop for
  // the daemon's own reasons (reclaimed, booking ended) is a failure, not a preemption; a
  // requeue is said besides.
  void NotifyJobEnd(const store::JobRecord& rec, store::JobState state, const std::string& reason,
                    const std::string& actor, bool requeued);
  // Tells the owners of the running jobs of `jobs` whose time limit is within
  // time_limit_warning, once per run; returns when the next is due (kNever: none).
  Time RemindTimeLimits(const std::map<JobId, ActiveJob>& jobs, Time now);
  // Tells `user` once per quota week when their usage `usage` crosses 80 % and 100 % of their
  // weekly quota.
  void CheckQuota(const std::string& user, const store::UsageMaps& usage, Time now);

  // `rota notify log` (admins): the outbox's recent messages.
  nlohmann::json Log(const nlohmann::json& request, Time now);
  // `rota notify test`: one attempt through each channel (or the one named), answered later
  // through TakeTestReplies; an error reply at once when there is nothing to test. The daemon
  // holds the connection meanwhile.
  nlohmann::json Test(ConnId conn, const std::string& caller, const nlohmann::json& request);
  // The tests whose attempts are all done, after `on_results`.
  std::vector<TestReply> TakeTestReplies();

  // The outbox, for the totals of /metrics.
  store::Outbox* outbox() { return outbox_.get(); }

 private:
  // Whether job `id`'s audit trail holds its time-limit reminder.
  bool Reminded(JobId id);
  StatusOr<NotifierOptions> OptionsFrom(const config::Config& config) const;

  Setup setup_;
  const config::Config& config_;
  EventLoop* loop_ = nullptr;
  Time started_ = 0;  // jobs started before this were running before a restart
  std::unique_ptr<store::Outbox> outbox_;
  std::unique_ptr<Notifier> notifier_;
  struct PendingTest {
    ConnId conn = 0;
    nlohmann::json tag;
    size_t waiting = 0;
    nlohmann::json results;
  };
  std::map<std::uint64_t, PendingTest> tests_;  // by token
  std::uint64_t next_test_ = 1;
  std::set<JobId> time_reminded_;  // running jobs told their time limit is near
  // Per user: the quota week and the highest quota level (80, 100) told in it.
  std::map<std::string, std::pair<Time, int>> quota_told_;
};

}  // namespace rota::daemon

// Tested by templates_test.cc.
//
// Design: one function, one switch over the event name, each case writing both languages side by
// side so that a translator sees them together. Nothing is truncated here (a chat channel cuts
// by its platform's rules, wecom at a character boundary); the texts are short by construction.
#include "notify/templates.h"

#include <algorithm>
#include <array>

namespace rota::notify {

namespace {

constexpr std::array<std::string_view, 25> kEvents = {"job_started",
                                                      "job_ended",
                                                      "job_failed",
                                                      "job_preempted",
                                                      "job_requeued",
                                                      "booking_confirmed",
                                                      "booking_rejected",
                                                      "booking_starting",
                                                      "booking_ending_soon",
                                                      "booking_no_show",
                                                      "booking_overrun",
                                                      "booking_strikes",
                                                      "idle_warning",
                                                      "idle_action",
                                                      "stuck_warning",
                                                      "stuck_action",
                                                      "outside_process",
                                                      "over_memory",
                                                      "over_memory_action",
                                                      "time_limit_soon",
                                                      "gpu_drained",
                                                      "quota_80",
                                                      "quota_100",
                                                      "channel_failing",
                                                      "test"};

struct Text {
  std::string subject, body;
};

std::string JobRef(const Event& e, bool zh) {
  std::string s = (zh ? "作业 " : "job ") + std::to_string(e.job);
  if (!e.job_name.empty()) s += " (" + e.job_name + ")";
  return s;
}

std::string Gpus(const Event& e, bool zh) {
  if (e.gpus.empty()) return "";
  return zh ? "，GPU " + e.gpus : " on GPU " + e.gpus;
}

std::string Why(const Event& e, bool zh) {
  if (e.reason.empty()) return "";
  return zh ? "\n原因：" + e.reason : "\nReason: " + e.reason;
}

Text JobText(const Event& e, bool zh) {
  const std::string job = JobRef(e, zh);
  const std::string id = std::to_string(e.job);
  const std::string n = e.name;
  if (n == "job_started") {
    return zh ? Text{job + " 已开始",
                     job + " 已在 " + e.host + " 上开始运行" + Gpus(e, zh) + "。\n查看：rota show " + id}
              : Text{"Job " + id + " started",
                     "Your " + job + " started on " + e.host + Gpus(e, zh) + ".\nSee: rota show " + id};
  }
  if (n == "job_ended" || n == "job_failed") {
    if (e.state == "cancelled" && e.actor == "rotad") {  // it could never start (--after-ok)
      return zh ? Text{job + " 已被取消",
                       job + " 已被 Rota 取消，未曾运行。" + Why(e, zh) + "\n查看：rota show " + id}
                : Text{"Job " + id + " was cancelled",
                       "Rota cancelled your " + job + "; it never ran." + Why(e, zh) + "\nSee: rota show " + id};
    }
    if (e.state == "cancelled") {
      return zh ? Text{job + " 已被取消",
                       job + " 已被 " + e.actor + " 取消。" + Why(e, zh) + "\n日志：rota logs " + id}
                : Text{"Job " + id + " was cancelled", "Your " + job + " was cancelled by " + e.actor + "." +
                                                           Why(e, zh) + "\nLogs: rota logs " + id};
    }
    if (e.state == "stopped") {
      return zh ? Text{job + " 已被停止", job + " 已被 Rota 停止（先收到了保存检查点的信号）。" + Why(e, zh) +
                                              "\n若设置了 --requeue，它会重新排队；查看：rota show " + id}
                : Text{"Job " + id + " was stopped",
                       "Rota stopped your " + job + " (after its checkpoint signal)." + Why(e, zh) +
                           "\nWith --requeue it is queued again. See: rota show " + id};
    }
    if (e.state == "completed") {
      return zh ? Text{job + " 已完成", job + " 已顺利完成。\n日志：rota logs " + id}
                : Text{"Job " + id + " completed", "Your " + job + " completed.\nLogs: rota logs " + id};
    }
    if (e.state == "timeout") {
      return zh ? Text{job + " 超时被终止", job + " 达到时间上限，已被终止。" + Why(e, zh) +
                                                "\n下次请用 --time 设一个更长的上限；日志：rota logs " + id}
                : Text{"Job " + id + " hit its time limit",
                       "Your " + job + " reached its time limit and was stopped." + Why(e, zh) +
                           "\nAsk for more with --time next time. Logs: rota logs " + id};
    }
    if (e.state == "node_fail") {
      // node_fail is any failure under the job: a card, a Slurm node, processes gone (a killed
      // shepherd, a restart that found them vanished). The reason says which.
      return zh ? Text{job + " 因故障终止", job + " 所用的 GPU 或节点出现故障，或其进程意外消失，作业已停止。" +
                                                Why(e, zh) + "\n请重新提交（rota submit ...）；日志：rota logs " + id}
                : Text{"Job " + id + " stopped: what it ran on failed",
                       "Your " + job + " was stopped: its GPU or node failed, or its processes vanished." +
                           Why(e, zh) + "\nSubmit it again (rota submit ...). Logs: rota logs " + id};
    }
    return zh ? Text{job + " 运行失败", job + " 以失败结束。" + Why(e, zh) + "\n日志：rota logs " + id}
              : Text{"Job " + id + " failed",
                     "Your " + job + " failed." + Why(e, zh) + "\nLogs: rota logs " + id};
  }
  if (n == "job_preempted") {
    return zh ? Text{job + " 被抢占",
                     job + " 被更高优先级的作业抢占：已收到保存检查点的信号。" + Why(e, zh) +
                         "\n作业会重新排队；请让程序在重新开始时从最近的检查点恢复。查看：rota show " + id}
              : Text{"Job " + id + " was preempted",
                     "Your " + job +
                         " was preempted by a higher-priority job; it got its checkpoint signal first." +
                         Why(e, zh) +
                         "\nIt is requeued: make it resume from its latest checkpoint when it restarts. See: "
                         "rota show " +
                         id};
  }
  if (n == "job_requeued") {
    return zh ? Text{job + " 已重新排队", job + " 已重新排队，将从头再次启动（请从检查点恢复）。" +
                                              Why(e, zh) + "\n查看：rota queue"}
              : Text{"Job " + id + " requeued",
                     "Your " + job + " was requeued and will start again (resume from your checkpoint)." +
                         Why(e, zh) + "\nSee: rota queue"};
  }
  if (n == "time_limit_soon") {
    const std::string m = std::to_string(e.minutes);
    return zh ? Text{job + " 还有 " + m + " 分钟到时间上限",
                     job + " 还有 " + m +
                         " 分钟达到时间上限，届时会被终止。\n请保存检查点；查看：rota show " + id}
              : Text{"Job " + id + ": " + m + " minutes left",
                     "Your " + job + " reaches its time limit in " + m +
                         " minutes and will then be stopped.\nSave a checkpoint now. See: rota show " + id};
  }
  if (n == "idle_warning" || n == "stuck_warning") {
    const bool stuck = n == "stuck_warning";
    return zh ? Text{job + (stuck ? " 显存占满但几乎不计算" : " 的 GPU 处于空闲"),
                     job + Gpus(e, zh) + (stuck ? " 占着显存却几乎没有计算" : " 的 GPU 利用率很低") +
                         "，已持续 " + std::to_string(e.minutes) + " 分钟。" + Why(e, zh) +
                         "\n如果仍在使用，请运行：rota keep " + id + "；否则请结束它：rota cancel " + id}
              : Text{"Job " + id + (stuck ? " holds memory but computes nothing" : " is idle"),
                     "Your " + job + Gpus(e, zh) +
                         (stuck ? " holds GPU memory with almost no compute" : " has left its GPU idle") +
                         " for " + std::to_string(e.minutes) + " minutes." + Why(e, zh) +
                         "\nIf you still need it, run: rota keep " + id + "; otherwise end it: rota cancel " +
                         id};
  }
  if (n == "idle_action" || n == "stuck_action") {
    return zh ? Text{job + " 因空闲被处理", job + Gpus(e, zh) + " 在警告后仍然空闲，已处理：" + e.reason +
                                                "\n查看：rota events --job " + id}
              : Text{"Job " + id + ": idle action taken",
                     "Your " + job + Gpus(e, zh) + " stayed idle after the warning; action taken: " +
                         e.reason + "\nSee: rota events --job " + id};
  }
  if (n == "over_memory") {
    return zh ? Text{job + " 显存超出申请", job + Gpus(e, zh) +
                                                " 使用的显存超过了申请的数量，可能影响同卡的其他作业。" +
                                                Why(e, zh) + "\n下次请用 --gpu-mem 申请足够的显存。"}
              : Text{"Job " + id + " uses more memory than it asked",
                     "Your " + job + Gpus(e, zh) +
                         " uses more GPU memory than it declared, which can hurt the jobs sharing its card." +
                         Why(e, zh) + "\nAsk for enough with --gpu-mem next time."};
  }
  if (n == "over_memory_action") {
    const bool stopped = e.reason == "stopped";
    return zh ? Text{job + " 显存一直超出申请",
                     job + Gpus(e, zh) + " 在警告后仍使用超过申请的显存，" +
                         (stopped ? "已被停止（先发信号，宽限后结束）。" : "已通知管理员。") +
                         "\n请用 --gpu-mem 申请足够的显存后重新提交；查看：rota events --job " + id}
              : Text{"Job " + id + ": over its memory, action taken",
                     "Your " + job + Gpus(e, zh) + " kept using more GPU memory than it declared after the warning; " +
                         (stopped ? "it is being stopped (its signal, grace, then the stop)."
                                  : "the admins were told.") +
                         "\nResubmit with enough --gpu-mem. See: rota events --job " + id};
  }
  return {};
}

Text BookingText(const Event& e, bool zh) {
  const std::string id = std::to_string(e.booking);
  const std::string b = (zh ? "预约 " : "booking ") + id;
  const std::string when = e.when.empty() ? "" : (zh ? "（" + e.when + "）" : " (" + e.when + ")");
  const std::string n = e.name;
  if (n == "booking_confirmed") {
    return zh ? Text{b + " 已确认", b + when + Gpus(e, zh) + " 已确认。\n查看：rota bookings"}
              : Text{"Booking " + id + " confirmed",
                     "Your " + b + when + Gpus(e, zh) + " is confirmed.\nSee: rota bookings"};
  }
  if (n == "booking_rejected") {
    return zh ? Text{b + " 未获批准", b + when + " 未获批准" +
                                          (e.actor.empty() ? "" : "（" + e.actor + "）") + "。" + Why(e, zh) +
                                          "\n请用 rota bookings 查看空闲时段后重新预约。"}
              : Text{"Booking " + id + " rejected",
                     "Your " + b + when + " was rejected" + (e.actor.empty() ? "" : " by " + e.actor) + "." +
                         Why(e, zh) + "\nSee the free slots with rota bookings and book again."};
  }
  if (n == "booking_starting") {
    return zh ? Text{b + " 开始了",
                     b + when + Gpus(e, zh) +
                         " 现在开始。请在开始后尽快使用，否则会作为未到场释放。\n提交：rota submit ..."}
              : Text{"Booking " + id + " starts now",
                     "Your " + b + when + Gpus(e, zh) +
                         " starts now. Use it soon or it is released as a no-show.\nSubmit: rota submit ..."};
  }
  if (n == "booking_ending_soon") {
    const std::string m = std::to_string(e.minutes);
    return zh ? Text{b + " 还有 " + m + " 分钟结束", b + when + " 还有 " + m +
                                                         " 分钟结束。请保存结果并释放 GPU：rota release " +
                                                         id + "；需要更久请：rota extend " + id}
              : Text{"Booking " + id + " ends in " + m + " minutes",
                     "Your " + b + when + " ends in " + m +
                         " minutes. Save your work and release the GPUs: rota release " + id +
                         "; need longer: rota extend " + id};
  }
  if (n == "booking_no_show") {
    return zh ? Text{b + " 已作为未到场释放", b + when + " 开始后一直未被使用，已释放给其他人。" +
                                                  Why(e, zh) + "\n查看：rota bookings"}
              : Text{"Booking " + id + " released (no-show)",
                     "Your " + b + when + " was not used after it started and was released to others." +
                         Why(e, zh) + "\nSee: rota bookings"};
  }
  if (n == "booking_strikes") {
    // user: whose; minutes: how many no-shows and overruns; when: the window ("30d").
    const std::string count = std::to_string(e.minutes);
    return zh ? Text{e.user + " 的预约多次未使用或超时",
                     e.user + " 在最近 " + e.when + " 内有 " + count + " 次预约未使用或超时。" +
                         "\n查看：rota bookings --all；rota events --all"}
              : Text{e.user + ": " + count + " no-shows and overruns",
                     e.user + " has " + count +
                         (e.minutes == 1 ? " booking that was a no-show or overran" : " bookings that were no-shows or overran") +
                         " in the last " + e.when +
                         ".\nSee: rota bookings --all; rota events --all"};
  }
  if (n == "booking_overrun") {
    return zh ? Text{b + " 已超时",
                     b + when + " 已结束，但仍在占用 GPU。" + Why(e, zh) +
                         "\n请尽快结束你的作业（rota queue 查看）；超时会降低你之后预约的权重。"}
              : Text{"Booking " + id + " overran",
                     "Your " + b + when + " has ended but its GPUs are still in use." + Why(e, zh) +
                         "\nEnd your jobs now (see rota queue); overruns lower the weight of your next "
                         "bookings."};
  }
  return {};
}

Text LabText(const Event& e, bool zh) {
  const std::string n = e.name;
  const std::string who = e.user.empty() ? "" : e.user;
  if (n == "gpu_drained") {
    return zh ? Text{"GPU " + e.gpus + " 已停用（" + e.host + "）", e.host + " 上的 GPU " + e.gpus +
                                                                        " 已停止调度。" + Why(e, zh) +
                                                                        "\n检查后恢复：rota resume " + e.gpus}
              : Text{"GPU " + e.gpus + " drained on " + e.host,
                     "GPU " + e.gpus + " on " + e.host + " no longer takes jobs." + Why(e, zh) +
                         "\nAfter checking it: rota resume " + e.gpus};
  }
  if (n == "quota_80" || n == "quota_100") {
    const std::string p = std::to_string(e.percent);
    return zh ? Text{"本周 GPU 配额已用 " + p + "%",
                     who + " 本周的 GPU 配额已用 " + p + "%。" +
                         (n == "quota_100" ? "新作业的优先级会降低，直到下周。" : "") + "\n查看：rota status"}
              : Text{"GPU quota " + p + "% used this week",
                     who + " has used " + p + "% of this week's GPU quota." +
                         (n == "quota_100" ? " New jobs rank lower until next week." : "") +
                         "\nSee: rota status"};
  }
  if (n == "outside_process") {
    // reason: the process's owner (root too); job: a job's process on a card its job was not
    // given; actor: whose allocation the card is; minutes: stopped after this long (0: not).
    const std::string pid = std::to_string(e.pid);
    const std::string owner = e.reason.empty() ? who : e.reason;
    const std::string job = std::to_string(e.job);
    if (zh) {
      std::string body = "进程 " + pid + "（" + owner + "）在 GPU " + e.gpus + " 上运行，" +
                         (e.job != 0 ? "但作业 " + job + " 没有分到这张卡。" : "但不属于任何 Rota 作业。");
      if (!e.actor.empty()) body += "这张卡分给了 " + e.actor + "。";
      body += "\n它退出之前，这张卡不接受新的任务。";
      if (e.minutes > 0) body += "若 " + std::to_string(e.minutes) + " 分钟内未退出，它将被停止。";
      body += "\n请通过 rota submit 或 rota run 使用 GPU。";
      return Text{"GPU " + e.gpus + " 上有 Rota 之外的进程", body};
    }
    std::string body = "Process " + pid + " (" + owner + ") runs on GPU " + e.gpus +
                       (e.job != 0 ? ", which its job " + job + " was not given." : " without a Rota allocation.");
    if (!e.actor.empty()) body += " The card is " + e.actor + "'s.";
    body += "\nThe card takes no new work while it is there.";
    if (e.minutes > 0) body += " It is stopped in " + std::to_string(e.minutes) + " min unless it ends.";
    body += "\nUse the GPUs through rota submit or rota run.";
    return Text{"A process outside Rota on GPU " + e.gpus, body};
  }
  if (n == "channel_failing") {
    return zh ? Text{"通知渠道 " + e.channel + " 发送失败",
                     "通知渠道 " + e.channel + " 连续发送失败，消息会重试。" + Why(e, zh) +
                         "\n检查配置后测试：rota notify test --channel " + e.channel}
              : Text{"Notification channel " + e.channel + " is failing",
                     "Notification channel " + e.channel + " keeps failing; messages are retried." +
                         Why(e, zh) + "\nCheck its settings, then: rota notify test --channel " + e.channel};
  }
  if (n == "test") {
    return zh ? Text{"Rota 测试消息", "这是来自 " + e.host + " 的测试消息" +
                                          (e.actor.empty() ? "" : "（由 " + e.actor + " 发送）") +
                                          "。收到即表示通知渠道 " + e.channel + " 工作正常。"}
              : Text{"Rota test message", "A test message from " + e.host +
                                              (e.actor.empty() ? "" : ", sent by " + e.actor) +
                                              ". If you read this, channel " + e.channel + " works."};
  }
  return {};
}

}  // namespace

std::span<const std::string_view> EventNames() { return kEvents; }

bool IsEventName(std::string_view name) {
  return std::find(kEvents.begin(), kEvents.end(), name) != kEvents.end();
}

bool IsAdminEvent(std::string_view name) {
  return name == "gpu_drained" || name == "outside_process" || name == "idle_action" ||
         name == "stuck_action" || name == "over_memory_action" || name == "booking_overrun" ||
         name == "booking_strikes" ||
         name == "channel_failing";
}

Message Render(const Event& event, std::string_view language) {
  const bool zh = language == "zh";
  Text t = JobText(event, zh);
  if (t.subject.empty()) t = BookingText(event, zh);
  if (t.subject.empty()) t = LabText(event, zh);
  if (t.subject.empty()) t = {"Rota: " + event.name, event.reason};
  Message m;
  m.subject = "[Rota] " + t.subject;
  m.text = t.body;
  if (!event.user.empty() && event.name != "test" && event.name != "channel_failing" &&
      event.name != "gpu_drained") {
    m.text = (zh ? "@" + event.user + "：" : "@" + event.user + ": ") + m.text;
  }
  m.event = event.name;
  return m;
}

}  // namespace rota::notify

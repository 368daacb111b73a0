// The lab's rules in plain words (rules_text.h). Every figure comes from the configuration in
// force; every sentence exists in Chinese and English (the `zh ? ... : ...` pairs), the way the
// notifications' texts are written (notify/templates.cc).
#include "daemon/rules_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/promise.h"
#include "core/quota.h"
#include "core/types.h"

namespace rota::daemon {

namespace {

using config::Config;
using config::ProjectConfig;

// "12.5", "40", "0.3": GPU-hours without a trailing ".0".
std::string Num(double v) {
  const double r = std::round(v * 10) / 10;
  return r == std::floor(r) ? fmt::format("{:.0f}", r) : fmt::format("{:.1f}", r);
}

// A configured span in words: "15 minutes", "2 hours", "1 h 30 min", "14 days" (zh: "15 分钟").
std::string Span(Duration d, bool zh) {
  if (d <= 0) return zh ? "0 分钟" : "0 minutes";
  const long long days = d / kDay, hours = (d % kDay) / kHour, minutes = (d % kHour) / kMinute,
                  seconds = d % kMinute;
  auto one = [&](long long n, const char* zh_unit, const char* en_one, const char* en_many) {
    return zh ? fmt::format("{} {}", n, zh_unit) : fmt::format("{} {}", n, n == 1 ? en_one : en_many);
  };
  std::vector<std::string> parts;
  if (days) parts.push_back(one(days, "天", "day", "days"));
  if (hours) parts.push_back(one(hours, "小时", "hour", "hours"));
  if (minutes) parts.push_back(one(minutes, "分钟", "minute", "minutes"));
  if (seconds || parts.empty()) parts.push_back(one(seconds, "秒", "second", "seconds"));
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : " ") + p;
  return out;
}

// A weekly quota: "每周 40 GPU 小时" / "40 GPU-hours a week", "不限" / "unlimited".
std::string PerWeek(double hours, bool zh) {
  if (hours < 0) return zh ? "不限" : "unlimited";
  return zh ? "每周 " + Num(hours) + " GPU 小时" : Num(hours) + " GPU-hours a week";
}

std::string Hours(double hours, bool zh) {
  if (hours < 0) return zh ? "不限" : "unlimited";
  return zh ? Num(hours) + " GPU 小时" : Num(hours) + " GPU-hours";
}

const char* kWeekdaysEn[] = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};
const char* kWeekdaysZh[] = {"周一", "周二", "周三", "周四", "周五", "周六", "周日"};
const char* kShortEn[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};

// The days of a time-of-day window: "every day", "Mon–Fri", "Sat, Sun".
std::string Days(std::uint8_t mask, bool zh) {
  mask &= 0x7f;
  if (mask == 0x7f) return zh ? "每天" : "every day";
  // One run of consecutive days reads as a range; anything else as a list.
  int first = -1, last = -1;
  bool one_run = true;
  for (int d = 0; d < 7; ++d) {
    if (!(mask >> d & 1)) continue;
    if (first < 0) first = d;
    else if (last != d - 1) one_run = false;
    last = d;
  }
  if (first < 0) return zh ? "从不" : "never";
  const char** names = zh ? kWeekdaysZh : kShortEn;
  if (one_run && last > first + 1) return std::string(names[first]) + (zh ? "至" : "–") + names[last];
  std::string out;
  for (int d = 0; d < 7; ++d) {
    if (mask >> d & 1) out += (out.empty() ? "" : zh ? "、" : ", ") + std::string(names[d]);
  }
  return out;
}

std::string WallClock(int minute) { return fmt::format("{:02d}:{:02d}", minute / 60 % 24, minute % 60); }

std::string Role(const std::string& role, bool zh) {
  return role.empty() ? (zh ? "无角色" : "no role") : role;
}

const char* TierWord(Tier t, bool zh) {
  switch (t) {
    case Tier::kThesis: return zh ? "thesis（论文/截稿）" : "thesis (a thesis or paper deadline)";
    case Tier::kRegular: return zh ? "regular（常规实验）" : "regular (ordinary experiments)";
    case Tier::kExplore: return zh ? "explore（学习与探索）" : "explore (learning and exploring)";
  }
  return "";
}

std::string Admins(const Config& c, bool zh) {
  if (c.admin_group.empty()) return zh ? "管理员（root）" : "an admin (root)";
  return zh ? "管理员（" + c.admin_group + " 组的成员）" : "an admin (a member of the group " + c.admin_group + ")";
}

RulesSection Quota(const Config& c, const RulesReader& reader, const std::vector<Standing>& standing, bool zh) {
  const QuotaPolicy& q = c.policy.quota;
  RulesSection s{"quota", zh ? "配额" : "Quotas", {}};
  auto say = [&](std::string text) { s.items.push_back({std::move(text), ""}); };
  const std::string week_day = zh ? kWeekdaysZh[q.week_start_day] : kWeekdaysEn[q.week_start_day];
  switch (c.policy.mode) {
    case AccountMode::kUser:
      say(zh ? "配额按人计算：每人每周可用的 GPU 小时数。"
             : "Quotas are per person: the GPU-hours each person may use in a week.");
      break;
    case AccountMode::kProject:
      say(zh ? "配额按项目计算：每个项目每周可用的 GPU 小时数，提交时用 --project 指明项目。"
             : "Quotas are per project: the GPU-hours each project may use in a week; name the "
               "project with --project.");
      break;
    case AccountMode::kHybrid:
      say(zh ? "配额为混合模式：每人有保底的每周 GPU 小时数，用完后可用所在项目的弹性额度（--project）。"
             : "Quotas are mixed: each person has a guaranteed weekly number of GPU-hours, and past "
               "it may draw on their project's elastic pool (--project).");
      break;
  }
  say(zh ? fmt::format("配额周从{} 0 点开始（时区 {}）。一块 GPU 用一小时记 1 GPU 小时；显存份额和 MIG 切片按比例折算。",
                       week_day, c.timezone)
         : fmt::format("The quota week starts on {} at midnight ({}). One GPU for one hour counts one "
                       "GPU-hour; memory shares and MIG slices count their fraction of a card.",
                       week_day, c.timezone));
  if (c.policy.mode != AccountMode::kProject) {
    std::map<std::string, double> roles(q.role_hours.begin(), q.role_hours.end());
    for (const auto& [role, hours] : roles) {
      say(zh ? fmt::format("角色 {}：{}。", role, PerWeek(hours, zh))
             : fmt::format("Role {}: {}.", role, PerWeek(hours, zh)));
    }
    say(zh ? fmt::format("没有角色的人：{}。", PerWeek(q.default_hours, zh))
           : fmt::format("People without a role: {}.", PerWeek(q.default_hours, zh)));
  }
  std::map<std::string, ProjectConfig> projects(c.projects.begin(), c.projects.end());
  for (const auto& [name, p] : projects) {
    if (c.policy.mode == AccountMode::kUser) break;
    const bool pool = c.policy.mode == AccountMode::kHybrid;
    say(zh ? fmt::format("项目 {}：{}{}。", name, pool ? "弹性额度" : "", PerWeek(p.hours, zh))
           : fmt::format("Project {}: {}{}.", name, pool ? "an elastic pool of " : "", PerWeek(p.hours, zh)));
  }
  say(q.overflow_as_explore
          ? (zh ? "用完配额后作业仍可运行，但降为 explore 级别、可被抢占；下一周配额恢复。"
                : "Past the quota, jobs still run, but in the explore tier, where they may be preempted; "
                  "the quota renews the next week.")
          : (zh ? "用完配额后作业排队等待下一周。" : "Past the quota, jobs wait for the next week."));
  // Where people stand: the reader's own line first, then (admins) everyone's.
  for (const Standing& st : standing) {
    std::string line = zh ? fmt::format("{}（{}）：本周已用 {}", st.user, Role(st.role, zh), Hours(st.week_hours, zh))
                          : fmt::format("{} ({}): {} used this week", st.user, Role(st.role, zh), Hours(st.week_hours, zh));
    if (st.quota_hours >= 0) {
      const double left = std::max(0.0, st.quota_hours - st.week_hours);
      line += zh ? fmt::format("，配额 {}，剩余 {}。", Hours(st.quota_hours, zh), Hours(left, zh))
                 : fmt::format(" of {}, {} left.", Hours(st.quota_hours, zh), Hours(left, zh));
    } else {
      line += zh ? "，不限配额。" : ", no quota.";
    }
    say(st.user == reader.name ? (zh ? "你：" : "You: ") + line : line);
  }
  s.items.push_back({zh ? "查看自己和实验室的用量" : "your usage and the lab's", "rota usage"});
  return s;
}

RulesSection Tiers(const Config& c, bool zh) {
  const Policy& p = c.policy;
  RulesSection s{"tiers", zh ? "优先级" : "Priorities", {}};
  auto say = [&](std::string text) { s.items.push_back({std::move(text), ""}); };
  say(zh ? fmt::format("作业分三级，高级别总是先于低级别：{} > {} > {}。用 --tier 选择，默认 regular。",
                       TierWord(Tier::kThesis, zh), TierWord(Tier::kRegular, zh), TierWord(Tier::kExplore, zh))
         : fmt::format("Jobs come in three tiers, a higher one always first: {} > {} > {}. Choose with "
                       "--tier; the default is regular.",
                       TierWord(Tier::kThesis, zh), TierWord(Tier::kRegular, zh), TierWord(Tier::kExplore, zh)));
  say(zh ? fmt::format("用 thesis 级别预约已被别人预约的时间，需要{}批准并写明理由。", Admins(c, zh))
         : fmt::format("A thesis booking over other people's bookings needs {} to approve it, with a reason "
                       "on record.",
                       Admins(c, zh)));
  if (p.algorithm == Algorithm::kRota) {
    say(zh ? fmt::format("同一级别内：最近用得多的人排后（用量每 {}减半），等得久的排前，小作业排前。",
                         Span(p.fairshare_half_life, zh))
           : fmt::format("Within a tier: heavy recent users rank lower (usage halves every {}), waiting "
                         "raises a job, and small jobs rank higher.",
                         Span(p.fairshare_half_life, zh)));
    if (p.size_by_prediction && p.weights.size > 0) {
      say(zh ? "作业大小按你以往作业（优先同名作业）的实际运行时间估计，不按申请的时限：时限写得宽也不吃亏；"
               "预留和回填仍按时限计算。"
             : "A job's size counts the run time your past jobs (those of the same name first) actually took, "
               "not the limit you ask for: a generous limit does not push it back. Reservations and backfill "
               "still go by limits.");
    }
    if (p.protect_after >= 0 && p.protect_max > 0) {
      say(zh ? fmt::format("等待超过 {}的作业会被保护：同级别中排在最前，后来的作业不能再推迟它。",
                           Span(p.protect_after, zh))
             : fmt::format("A job that has waited {} is protected: it goes first in its tier, and nothing "
                           "submitted later may delay it.",
                           Span(p.protect_after, zh)));
    }
    if (KeepsPromises(p)) {
      const bool now = p.promise_slack == 0;
      say(zh ? fmt::format("每个作业提交时都会得到一个承诺：先来先服务时它最晚何时开始。{}仍未开始的作业同样受到保护。",
                           now ? "过了承诺时间" : "超过承诺 " + Span(p.promise_slack, zh))
             : fmt::format("Each job is promised, when it comes, the start first come first served would give it; "
                           "a job still waiting {} is protected too.",
                           now ? "past its promise" : Span(p.promise_slack, zh) + " past its promise"));
    }
    if (p.protect_foreseen && Protecting(p)) {
      say(zh ? "若排队计划显示某作业要到该受保护的时候仍开始不了，它会立即受到保护，不必等到那时。"
             : "A job the plan shows still waiting when it is due for protection is protected at once, "
               "not only then.");
    }
  } else {
    say(zh ? fmt::format("同一级别内按提交顺序（{}）。", AlgorithmName(p.algorithm))
           : fmt::format("Within a tier, jobs run in the order they were submitted ({}).", AlgorithmName(p.algorithm)));
  }
  std::vector<std::string> preemptible;
  for (Tier t : {Tier::kExplore, Tier::kRegular, Tier::kThesis}) {
    if (p.IsPreemptible(t)) preemptible.push_back(TierName(t));
  }
  if (p.preemption && !preemptible.empty()) {
    std::string tiers;
    for (const std::string& t : preemptible) tiers += (tiers.empty() ? "" : zh ? "、" : ", ") + t;
    std::string warn;
    if (c.default_signal) {
      warn = zh ? fmt::format("先收到信号 {}，{}后停止", SignalName(c.default_signal->signal),
                              Span(c.default_signal->grace, zh))
                : fmt::format("they get {} first and are stopped {} later",
                              SignalName(c.default_signal->signal), Span(c.default_signal->grace, zh));
    } else {
      warn = zh ? "先收到 SIGTERM，再被停止" : "they get SIGTERM first, then are stopped";
    }
    say(zh ? fmt::format("{} 级别的作业可被更高级别的作业抢占：{}（用 --signal 自定信号以便保存检查点，--requeue 让它重新排队）。",
                         tiers, warn)
           : fmt::format("Jobs of the {} tier may be preempted by higher tiers: {} (choose your own signal "
                         "with --signal to save a checkpoint, and --requeue to queue again).",
                         tiers, warn));
  } else {
    say(zh ? "不抢占：已开始的作业会运行到结束或时限。"
           : "No preemption: a job that has started runs to its end or its time limit.");
  }
  return s;
}

RulesSection Peak(const Config& c, bool zh) {
  const Policy& p = c.policy;
  RulesSection s{"peak", zh ? "高峰与闲时" : "Peak and off-peak hours", {}};
  auto say = [&](std::string text) { s.items.push_back({std::move(text), ""}); };
  if (p.algorithm != Algorithm::kRota || p.time_of_day.empty()) {
    say(zh ? "优先级不随时段变化。" : "Priorities do not change with the time of day.");
    return s;
  }
  say(zh ? fmt::format("大作业（{} 块及以上 GPU，或时限 {}及以上）的优先级随时段变化（{}）：", p.heavy_gpus,
                       Span(p.heavy_time, zh), c.timezone)
         : fmt::format("Heavy jobs ({} GPUs or more, or a limit of {} or more) rank by the time of day ({}):",
                       p.heavy_gpus, Span(p.heavy_time, zh), c.timezone));
  for (const TimeOfDayRule& r : p.time_of_day) {
    const std::string when = Days(r.weekdays, zh) + " " + WallClock(r.start_minute) + "–" + WallClock(r.end_minute);
    std::string effect;
    if (r.factor < 1) effect = zh ? "高峰，优先级降低" : "peak, lower priority";
    else if (r.factor > 1) effect = zh ? "闲时，优先级提高" : "off-peak, higher priority";
    else effect = zh ? "不变" : "unchanged";
    say(zh ? fmt::format("{}：×{}（{}）", when, Num(r.factor), effect)
           : fmt::format("{}: ×{} ({})", when, Num(r.factor), effect));
  }
  say(zh ? "建议：长作业和多卡作业放在早上或夜里，短作业和交互调试放在下午。"
         : "So: long and multi-GPU jobs in the morning or at night, short jobs and interactive work in "
           "the afternoon.");
  return s;
}

RulesSection Bookings(const Config& c, bool zh) {
  const BookingRules& b = c.bookings;
  RulesSection s{"bookings", zh ? "预约" : "Bookings", {}};
  auto say = [&](std::string text) { s.items.push_back({std::move(text), ""}); };
  say(zh ? fmt::format("预约按 {}的整格开始和结束，最多提前 {}，每次最长 {}。", Span(b.slot, zh),
                       Span(b.max_ahead, zh), Span(b.max_length, zh))
         : fmt::format("Bookings start and end on a grid of {}, at most {} ahead, and last at most {}.",
                       Span(b.slot, zh), Span(b.max_ahead, zh), Span(b.max_length, zh)));
  if (b.same_day_needs_admin) {
    say(zh ? fmt::format("请提前一天预约：当天开始的预约需要{}确认。", Admins(c, zh))
           : fmt::format("Book the day before: a booking that starts the same day needs {} to confirm it.",
                         Admins(c, zh)));
  }
  if (b.max_per_week > 0) {
    say(zh ? fmt::format("每人每周最多 {} 个预约，超出需管理员确认。", b.max_per_week)
           : fmt::format("At most {} bookings per person a week without an admin.", b.max_per_week));
  }
  say(b.max_gpu_hours_per_week >= 0
          ? (zh ? fmt::format("每人每周预约最多 {}，超出需管理员确认。", Hours(b.max_gpu_hours_per_week, zh))
                : fmt::format("At most {} booked per person a week without an admin.",
                              Hours(b.max_gpu_hours_per_week, zh)))
          : (zh ? "每周预约的 GPU 小时数不超过本人的配额，超出需管理员确认。"
                : "Booked GPU-hours in a week stay within your quota without an admin."));
  say(b.auto_confirm ? (zh ? "符合规则、没有冲突的预约自动确认；其他的等管理员决定。"
                           : "A booking within the rules and without conflicts is confirmed at once; the others "
                             "wait for an admin.")
                     : (zh ? "所有预约都由管理员确认。" : "Every booking is confirmed by an admin."));
  say(zh ? fmt::format("预约开始后 {}内没有使用算作爽约，预约被释放给别人。结束前 {}会提醒你。",
                       Span(b.no_show_grace, zh), Span(b.reminder, zh))
         : fmt::format("A booking not used within {} of its start is a no-show and is released to others. "
                       "You are reminded {} before it ends.",
                       Span(b.no_show_grace, zh), Span(b.reminder, zh)));
  say(zh ? fmt::format("爽约和超时会降低你之后作业和预约的优先级（每次一点，{}减半）；{} 天内 {} 次会通知管理员。",
                       Span(b.penalty_half_life, zh), b.penalty_window / kDay, b.penalty_alert)
         : fmt::format("No-shows and overruns lower the priority of your next jobs and bookings (a step each, "
                       "halving every {}); {} of them within {} days are reported to the admins.",
                       Span(b.penalty_half_life, zh), b.penalty_alert, b.penalty_window / kDay));
  s.items.push_back({zh ? "预约 2 块 GPU，明天 14 点起 4 小时" : "book 2 GPUs tomorrow from 14:00 for 4 hours",
                     "rota book --gpus 2 --from \"tomorrow 14:00\" --for 4h"});
  return s;
}

RulesSection Idle(const Config& c, bool zh) {
  const WatchRules& w = c.watch;
  RulesSection s{"idle", zh ? "空闲的 GPU" : "Idle GPUs", {}};
  auto say = [&](std::string text) { s.items.push_back({std::move(text), ""}); };
  if (!w.enabled) {
    say(zh ? "不检查空闲的 GPU。" : "Idle GPUs are not watched.");
  } else {
    say(zh ? fmt::format("作业或会话占着 GPU 却在 {}内平均利用率低于 {}%：提醒你（可用 rota keep 保留，每天 {} 次）。",
                         Span(w.idle_after, zh), w.idle_util, w.keeps_per_day)
           : fmt::format("A job or session holding GPUs under {}% busy on average for {}: you are warned "
                         "(keep it with rota keep, {} times a day).",
                         w.idle_util, Span(w.idle_after, zh), w.keeps_per_day));
    say(w.reclaim ? (zh ? fmt::format("空闲满 {}仍无回应：作业被停止（先收到它的信号，可保存），原因记录在案。",
                                      Span(w.act_after, zh))
                        : fmt::format("Still idle after {} without a keep: the job is stopped (its signal first, so "
                                      "it can save), and the reason is recorded.",
                                      Span(w.act_after, zh)))
                  : (zh ? fmt::format("空闲满 {}仍无回应：通知管理员。", Span(w.act_after, zh))
                        : fmt::format("Still idle after {} without a keep: the admins are told.",
                                      Span(w.act_after, zh))));
    say(zh ? fmt::format("空闲且显存占用超过 {}% 的作业可能卡住了（例如通信死锁），会单独提醒。",
                         Num(w.stuck_memory * 100))
           : fmt::format("Idle with more than {}% of its memory in use, a job may be stuck (a hung "
                         "collective): you are told so.",
                         Num(w.stuck_memory * 100)));
  }
  say(w.outside_stop
          ? (zh ? fmt::format("不经 Rota 直接在 GPU 上运行的进程会被报告，{}后被停止。", Span(w.outside_grace, zh))
                : fmt::format("Processes run on the GPUs outside Rota are reported and stopped after {}.",
                              Span(w.outside_grace, zh)))
          : (zh ? "不经 Rota 直接在 GPU 上运行的进程会被报告给你和管理员，该卡不再分配新作业。"
                : "Processes run on the GPUs outside Rota are reported to you and the admins, and the card "
                  "takes no new work while they run."));
  s.items.push_back({zh ? "保留一个暂时空闲的作业" : "keep a job that is idle for a reason", "rota keep JOB"});
  return s;
}

RulesSection Limits(const Config& c, bool zh) {
  RulesSection s{"limits", zh ? "时限与资源" : "Time limits and resources", {}};
  auto say = [&](std::string text) { s.items.push_back({std::move(text), ""}); };
  say(zh ? "每个作业以提交者本人的身份运行，只能看到分给它的 GPU；到时限（--time）会被停止。"
         : "Every job runs as the person who submitted it and sees only the GPUs it was given; at its "
           "limit (--time) it is stopped.");
  if (c.default_signal) {
    say(zh ? fmt::format("停止前 {}先收到信号 {}（可用 --signal 另选），以便保存检查点。", Span(c.default_signal->grace, zh),
                         SignalName(c.default_signal->signal))
           : fmt::format("{} before that it gets {} (choose another with --signal), to save a checkpoint.",
                         Span(c.default_signal->grace, zh), SignalName(c.default_signal->signal)));
  } else {
    say(zh ? "停止时先收到 SIGTERM；想提前收到信号以保存检查点，用 --signal USR1@120（时限前 120 秒）。"
           : "At the limit it gets SIGTERM, then is killed; to be warned in time to save a checkpoint, submit "
             "with --signal USR1@120 (120 seconds before the limit).");
  }
  if (c.default_mem_per_gpu > 0) {
    say(zh ? fmt::format("没有指定 --mem-per-gpu 的作业每块 GPU 可用 {} 内存。", FormatMemory(c.default_mem_per_gpu))
           : fmt::format("Jobs that do not say --mem-per-gpu get {} of host memory per GPU.",
                         FormatMemory(c.default_mem_per_gpu)));
  }
  if (c.limits.pending_per_user > 0) {
    say(zh ? fmt::format("每人最多 {} 个排队中的作业。", c.limits.pending_per_user)
           : fmt::format("At most {} pending jobs per person.", c.limits.pending_per_user));
  }
  return s;
}

// Only where the lab runs containers ([containers] runtime).
RulesSection Containers(const Config& c, bool zh) {
  const config::ContainersConfig& k = c.containers;
  RulesSection s{"containers", zh ? "容器" : "Containers", {}};
  auto say = [&](std::string text) { s.items.push_back({std::move(text), ""}); };
  const std::string runtime = exec::ContainerRuntimeName(k.runtime);
  const std::string images = Join(k.images, ", ");
  const bool any = k.images.size() == 1 && k.images[0] == "*";
  say(zh ? fmt::format("作业可以在容器镜像里运行（--image，由 {} 启动）。可用的镜像：{}；只能用服务器上已有的镜像，"
                       "需要别的请找{}。",
                       runtime, any ? "服务器上已有的任何镜像" : images, Admins(c, zh))
         : fmt::format("Jobs may run in a container image (--image, started by {}). Images allowed: {}; only "
                       "images already on the server run: ask {} to load another.",
                       runtime, any ? "any image on the server" : images, Admins(c, zh)));
  say(k.allow_root ? (zh ? "容器里以镜像自己的用户运行（可能是 root）；仍然只能看到分给它的 GPU。"
                         : "In the container the job runs as the image's own user (which may be root), still "
                           "with only its own GPUs.")
                   : (zh ? "容器里你还是你自己（同样的用户和组，不是 root），只能看到分给作业的 GPU。"
                         : "In the container you are still yourself (your user and groups, never root), with only "
                           "the job's GPUs."));
  std::string mounts = zh ? "工作目录所在的文件夹" : "the folder of your working directory";
  if (!k.data_dir.empty()) mounts += (zh ? "、你的数据目录 " : ", your data directory ") + k.data_dir;
  for (const exec::ContainerMount& m : k.mounts) {
    mounts += (zh ? "、" : ", ") + m.source + (m.target != m.source ? " → " + m.target : "") +
              (m.read_only ? (zh ? "（只读）" : " (read-only)") : "");
  }
  say(zh ? fmt::format("容器里能看到：{}。{}", mounts, k.network ? "可以上网。" : "不能上网。")
         : fmt::format("The container sees {}. {}", mounts,
                       k.network ? "It has the network." : "It has no network."));
  const std::string example = k.images.empty() || k.images[0].find_first_of("*?[") != std::string::npos
                                  ? std::string("IMAGE")
                                  : k.images[0];
  s.items.push_back({zh ? "在容器里运行作业" : "run a job in a container",
                     "rota submit --image " + example + " --gpus 1 -- python train.py"});
  s.items.push_back({zh ? "在容器里开一个交互式 shell" : "an interactive shell in a container",
                     "rota shell --image " + example + " --gpus 1"});
  return s;
}

RulesSection Account(const Config& c, bool zh) {
  RulesSection s{"account", zh ? "如何获得账号" : "Getting an account", {}};
  if (!c.rules.account.empty()) {
    s.items.push_back({c.rules.account, ""});
  } else {
    s.items.push_back({zh ? fmt::format("请联系{}：在服务器上开一个 Unix 账号，并在配置里给你设好角色。", Admins(c, zh))
                          : fmt::format("Ask {} for a Unix account on the server and a role in the configuration.",
                                        Admins(c, zh)),
                       ""});
  }
  return s;
}

RulesSection Commands(bool zh) {
  RulesSection s{"commands", zh ? "新同学需要的五条命令" : "Five commands to start with", {}};
  s.items = {
      {zh ? "排队一个作业：1 块 GPU，最多 4 小时" : "queue a job: 1 GPU for up to 4 hours",
       "rota submit --gpus 1 --time 4h -- python train.py"},
      {zh ? "看队列和你的作业何时开始" : "the queue, and when your jobs start", "rota queue"},
      {zh ? "每块 GPU 现在谁在用" : "who is on each GPU now", "rota gpus"},
      {zh ? "在日历上预约 GPU 时间" : "book GPU time on the calendar",
       "rota book --gpus 1 --from \"tomorrow 09:00\" --for 4h"},
      {zh ? "取消你的作业" : "cancel your job", "rota cancel JOB"},
  };
  return s;
}

}  // namespace

std::vector<Standing> Standings(const config::Config& c, const RulesReader& reader) {
  const QuotaPolicy& q = c.policy.quota;
  auto of = [&](const std::string& user) {
    Standing st{user, "", c.policy.mode == AccountMode::kProject ? -1 : UserQuotaHours(q, user), 0};
    if (auto role = q.user_role.find(user); role != q.user_role.end()) st.role = role->second;
    if (auto used = reader.week_hours.find(user); used != reader.week_hours.end()) st.week_hours = used->second;
    return st;
  };
  std::vector<Standing> out;
  if (!reader.name.empty()) out.push_back(of(reader.name));
  if (reader.admin) {
    std::set<std::string> people;
    for (const auto& [name, u] : c.users) people.insert(name);
    for (const auto& [name, h] : reader.week_hours) people.insert(name);
    people.erase(reader.name);
    for (const std::string& p : people) out.push_back(of(p));
  }
  return out;
}

RulesDoc DescribeRules(const config::Config& config, const RulesReader& reader, std::string_view language) {
  const bool zh = language == "zh";
  RulesDoc doc;
  doc.title = zh ? "实验室 GPU 使用规则" : "The lab's GPU rules";
  doc.standing = Standings(config, reader);
  doc.sections.push_back(Quota(config, reader, doc.standing, zh));
  doc.sections.push_back(Tiers(config, zh));
  doc.sections.push_back(Peak(config, zh));
  doc.sections.push_back(Bookings(config, zh));
  doc.sections.push_back(Idle(config, zh));
  doc.sections.push_back(Limits(config, zh));
  if (config.containers.runtime != exec::ContainerRuntime::kNone) doc.sections.push_back(Containers(config, zh));
  if (!config.rules.notes.empty()) {
    RulesSection lab{"lab", zh ? "本实验室的其他规定" : "The lab's own rules", {}};
    for (const std::string& n : config.rules.notes) lab.items.push_back({n, ""});
    doc.sections.push_back(std::move(lab));
  }
  doc.sections.push_back(Account(config, zh));
  doc.sections.push_back(Commands(zh));
  return doc;
}

}  // namespace rota::daemon

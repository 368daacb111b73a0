// Tests of the notification texts in both languages: each says what happened and what to do.
#include "notify/templates.h"

#include <gtest/gtest.h>

namespace rota::notify {
namespace templates_test {
namespace {

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

Event Job(std::string name) {
  Event e;
  e.name = std::move(name);
  e.user = "alice";
  e.job = 17;
  e.job_name = "bert";
  e.gpus = "0,1";
  e.host = "gpu1";
  return e;
}

TEST(Templates, EveryEventHasBothLanguages) {
  for (std::string_view name : EventNames()) {
    Event e = Job(std::string(name));
    e.state = "failed";
    Message zh = Render(e, "zh"), en = Render(e, "en");
    EXPECT_EQ(zh.event, name);
    EXPECT_NE(zh.subject, "[Rota] Rota: " + std::string(name)) << name << " has no template";
    EXPECT_NE(zh.subject, en.subject) << name;
    EXPECT_FALSE(zh.text.empty()) << name;
    EXPECT_EQ(zh.subject.find('\n'), std::string::npos) << name;
  }
  EXPECT_TRUE(IsEventName("time_limit_soon"));
  EXPECT_FALSE(IsEventName("job_finished"));
}

TEST(Templates, OutsideProcessSaysWhoseCardAndWhatHappensNext) {
  Event e;
  e.name = "outside_process";
  e.user = "bob";
  e.reason = "bob";
  e.pid = 4242;
  e.gpus = "1";
  Message plain = Render(e, "en");
  EXPECT_TRUE(Has(plain.text, "Process 4242 (bob) runs on GPU 1 without a Rota allocation.")) << plain.text;
  EXPECT_TRUE(Has(plain.text, "takes no new work")) << plain.text;
  EXPECT_FALSE(Has(plain.text, "stopped")) << plain.text;
  e.actor = "alice's job 17";
  e.minutes = 10;
  Message en = Render(e, "en"), zh = Render(e, "zh");
  EXPECT_TRUE(Has(en.text, "The card is alice's job 17's.")) << en.text;
  EXPECT_TRUE(Has(en.text, "stopped in 10 min")) << en.text;
  EXPECT_TRUE(Has(zh.text, "这张卡分给了 alice's job 17")) << zh.text;
  EXPECT_TRUE(Has(zh.text, "10 分钟")) << zh.text;
  e.job = 23;  // a job's process on a card its job was not given
  EXPECT_TRUE(Has(Render(e, "en").text, "which its job 23 was not given")) << Render(e, "en").text;
}

TEST(Templates, OverMemoryActionSaysWhatWasDone) {
  Event e = Job("over_memory_action");
  e.reason = "stopped";
  EXPECT_TRUE(Has(Render(e, "en").text, "it is being stopped")) << Render(e, "en").text;
  EXPECT_TRUE(Has(Render(e, "zh").text, "已被停止")) << Render(e, "zh").text;
  EXPECT_TRUE(Has(Render(e, "en").text, "--gpu-mem")) << Render(e, "en").text;
  e.reason = "the admins were told";
  EXPECT_TRUE(Has(Render(e, "en").text, "the admins were told")) << Render(e, "en").text;
  EXPECT_TRUE(IsAdminEvent("over_memory_action"));
}

TEST(Templates, BookingStrikesNameTheUserAndTheWindow) {
  Event e;
  e.name = "booking_strikes";
  e.user = "bob";
  e.minutes = 3;
  e.when = "30d";
  EXPECT_EQ(Render(e, "en").subject, "[Rota] bob: 3 no-shows and overruns");
  EXPECT_TRUE(Has(Render(e, "zh").text, "最近 30d 内有 3 次")) << Render(e, "zh").text;
  EXPECT_TRUE(Has(Render(e, "en").text, "bob has 3 bookings that were no-shows or overran in the last 30d."))
      << Render(e, "en").text;
  e.minutes = 1;
  EXPECT_TRUE(Has(Render(e, "en").text, "bob has 1 booking that was a no-show or overran in the last 30d."))
      << Render(e, "en").text;
  EXPECT_TRUE(IsAdminEvent("booking_strikes"));
}

TEST(Templates, IdleSaysHowToKeep) {
  Event e = Job("idle_warning");
  e.minutes = 15;
  Message en = Render(e, "en");
  EXPECT_EQ(en.subject, "[Rota] Job 17 is idle");
  EXPECT_TRUE(Has(en.text, "rota keep 17")) << en.text;
  EXPECT_TRUE(Has(en.text, "15 minutes"));
  EXPECT_TRUE(Has(en.text, "GPU 0,1"));
  Message zh = Render(e, "zh");
  EXPECT_EQ(zh.subject, "[Rota] 作业 17 (bert) 的 GPU 处于空闲");
  EXPECT_TRUE(Has(zh.text, "rota keep 17"));
  EXPECT_TRUE(Has(zh.text, "15 分钟"));
}

TEST(Templates, EndsSayWhyAndWhere) {
  Event e = Job("job_ended");
  e.state = "completed";
  EXPECT_EQ(Render(e, "zh").subject, "[Rota] 作业 17 (bert) 已完成");
  EXPECT_EQ(Render(e, "en").subject, "[Rota] Job 17 completed");
  e.state = "cancelled";
  e.actor = "root";
  e.reason = "card needed for maintenance";
  Message en = Render(e, "en");
  EXPECT_TRUE(Has(en.text, "cancelled by root")) << en.text;
  EXPECT_TRUE(Has(en.text, "Reason: card needed for maintenance"));
  e.actor = "rotad";  // an --after-ok job of it failed
  e.reason = "Cancelled: job 16, which it waited for (--after-ok), ended: Failed(exit 3)";
  en = Render(e, "en");
  EXPECT_TRUE(Has(en.text, "Rota cancelled your job 17 (bert); it never ran.")) << en.text;
  EXPECT_TRUE(Has(en.text, "Reason: Cancelled: job 16")) << en.text;
  EXPECT_TRUE(Has(Render(e, "zh").text, "已被 Rota 取消，未曾运行")) << Render(e, "zh").text;
  e.state = "stopped";
  e.reason = "Reclaimed: idle for 30m";
  EXPECT_EQ(Render(e, "en").subject, "[Rota] Job 17 was stopped");
  EXPECT_TRUE(Has(Render(e, "zh").text, "Reclaimed: idle for 30m"));
  // node_fail: whatever failed under the job, which the reason names (a killed shepherd is no
  // GPU failure).
  e.state = "node_fail";
  e.reason = "NodeFail: its processes vanished (requeued)";
  en = Render(e, "en");
  EXPECT_EQ(en.subject, "[Rota] Job 17 stopped: what it ran on failed");
  EXPECT_TRUE(Has(en.text, "Reason: NodeFail: its processes vanished")) << en.text;
  EXPECT_TRUE(Has(Render(e, "zh").subject, "因故障终止")) << Render(e, "zh").subject;
  e = Job("job_preempted");
  EXPECT_TRUE(Has(Render(e, "en").text, "checkpoint"));
  EXPECT_TRUE(Has(Render(e, "zh").text, "检查点"));
  e = Job("time_limit_soon");
  e.minutes = 10;
  EXPECT_EQ(Render(e, "en").subject, "[Rota] Job 17: 10 minutes left");
  EXPECT_EQ(Render(e, "zh").subject, "[Rota] 作业 17 (bert) 还有 10 分钟到时间上限");
}

TEST(Templates, BookingRejectionPointsToTheCalendar) {
  Event e;
  e.name = "booking_rejected";
  e.user = "bob";
  e.booking = 4;
  e.when = "12-01 14:00-18:00";
  e.actor = "root";
  e.reason = "group meeting";
  Message en = Render(e, "en");
  EXPECT_TRUE(Has(en.text, "rota bookings")) << en.text;
  EXPECT_TRUE(Has(en.text, "rejected by root"));
  EXPECT_TRUE(Has(en.text, "group meeting"));
  EXPECT_TRUE(Has(en.text, "@bob")) << "a lab group sees whom it concerns";
  Message zh = Render(e, "zh");
  EXPECT_EQ(zh.subject, "[Rota] 预约 4 未获批准");
  EXPECT_TRUE(Has(zh.text, "rota bookings"));
}

TEST(Templates, UnknownLanguageIsEnglish) {
  Event e;
  e.name = "test";
  e.channel = "mail";
  e.host = "gpu1";
  EXPECT_EQ(Render(e, "fr").subject, "[Rota] Rota test message");
  EXPECT_TRUE(Has(Render(e, "zh").text, "mail"));
}

}  // namespace
}  // namespace templates_test
}  // namespace rota::notify

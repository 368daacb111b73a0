// The request pipeline alone (request_pipeline.h), with handlers the test registers and a real
// Admission and store: each check a request meets before its handler (JSON, depth, version,
// operation, admins' operations, socket-only ones over HTTP), a handler's wrong-type exception
// answered as the caller's mistake, tags echoed, the zone on read-only replies, a reply given
// later, and submissions answered in request order after one group commit, with the pass they
// need run before any other operation. Through a whole daemon: dispatch_test.cc; through real
// processes: tests/daemon/test_protocol.py.
#include "daemon/request_pipeline.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/ops.h"
#include "api/protocol.h"
#include "daemon/http_bridge.h"
#include "testing/daemon/parts.h"
#include "testing/fake_clock.h"
#include "testing/temp_dir.h"

namespace rota::daemon {
namespace request_pipeline_test {
namespace {

using nlohmann::json;

constexpr Time kStart = 1796115600;

class RequestPipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::OpenStore(dir_);
    ASSERT_NE(store_, nullptr);
    loop_ = testing::NewLoop();
    ASSERT_NE(loop_, nullptr);
    server_ = std::make_unique<Server>(*loop_, handler_);
    const device::Snapshot snap = testing::IdleCards(1);
    cards_.Load(&snap);
    Admission::Setup a;
    a.store = store_.get();
    a.clock = &clock_;
    a.config = &config_;
    a.jobs = &jobs_;
    a.cards = &cards_;
    a.end_of = [](JobId id) -> StatusOr<JobEndSeen> { return NotFound("no job " + std::to_string(id)); };
    admission_ = std::make_unique<Admission>(std::move(a));
    RequestPipeline::Setup p;
    p.clock = &clock_;
    p.config = &config_;
    p.server = server_.get();
    p.admission = admission_.get();
    p.callers = &callers_;
    p.account = [](uid_t) -> StatusOr<UnixAccount> { return NotFound("no accounts here"); };
    p.catch_up = [this] { log_.push_back("catch up"); };
    p.submitted = [this] { log_.push_back("submitted"); };
    p.metrics = [] { return std::string("rota_up 1\n"); };
    pipeline_ = std::make_unique<RequestPipeline>(std::move(p));
    for (const api::OpInfo& op : api::Ops()) {
      if (op.name == "submit") continue;
      pipeline_->Register(op.name,
                          [this, name = std::string(op.name)](ConnId, const Caller& c, const json& r) {
                            log_.push_back(name + " by " + c.name);
                            if (name == "queue") return api::OkReply({{"jobs", json::array()}});
                            if (name == "show")
                              return api::OkReply({{"id", r.value("job_id", 0)}});  // throws on a wrong type
                            if (name == "notify_test") return json();               // answered later
                            return api::OkReply();
                          });
    }
  }

  // `request` from `caller` in-process, handled by the next Process: its reply (null: none yet).
  json Ask(const Caller& caller, const json& request, bool process = true) {
    auto reply = std::make_shared<json>();
    pipeline_->Call(caller, request, [reply](json r) { *reply = std::move(r); });
    if (process) pipeline_->Process();
    return *reply;
  }
  json Ask(const json& request) { return Ask(alice_, request); }

  testing::TempDir dir_;
  testing::FakeClock clock_{kStart};
  config::Config config_;
  std::unique_ptr<store::JobStore> store_;
  std::unique_ptr<EventLoop> loop_;
  testing::NoConnections handler_;
  std::unique_ptr<Server> server_;
  Inventory cards_;
  JobTable jobs_;
  std::unique_ptr<Admission> admission_;
  CallerCache callers_{std::chrono::seconds(5),
                       [](uid_t uid, gid_t gid) { return Identify(uid, gid, 0, ""); }};
  std::unique_ptr<RequestPipeline> pipeline_;
  std::vector<std::string> log_;
  const Caller alice_ = testing::Person("alice", 20001);
};

std::string Code(const json& reply) {
  return reply.value("ok", true) ? "" : reply["error"].value("code", "");
}
std::string Message(const json& reply) {
  return reply.value("ok", true) ? "" : reply["error"].value("message", "");
}

TEST_F(RequestPipelineTest, EveryOperationNeedsAHandler) {
  EXPECT_TRUE(pipeline_->CheckComplete().ok());
  RequestPipeline::Setup bare;
  bare.clock = &clock_;
  bare.config = &config_;
  RequestPipeline empty(bare);
  empty.Register("hello", [](ConnId, const Caller&, const json&) { return api::OkReply(); });
  const Status missing = empty.CheckComplete();
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("no handler for the operation"), std::string::npos) << missing.message();
}

TEST_F(RequestPipelineTest, ARequestIsCheckedBeforeItsHandler) {
  EXPECT_EQ(Code(Ask({{"v", 1}, {"op", "frobnicate"}})), "invalid_argument");
  EXPECT_NE(Message(Ask({{"v", 1}, {"op", "frobnicate"}})).find("hello"), std::string::npos);  // names them
  EXPECT_EQ(Code(Ask({{"op", "hello"}})), "invalid_argument");
  EXPECT_EQ(Code(Ask({{"v", 2}, {"op", "hello"}})), "unsupported_version");
  EXPECT_EQ(Code(Ask({{"v", 1}})), "invalid_argument");
  EXPECT_EQ(Code(Ask(json::array({1, 2}))), "invalid_argument");
  EXPECT_EQ(Code(Ask({{"v", 1}, {"op", "hello"}, {"tag", {{"deep", 1}}}})), "invalid_argument");
  json deep = 1;
  for (int i = 0; i < 500; ++i) deep = json::array({deep});
  EXPECT_EQ(Code(Ask({{"v", 1}, {"op", "hello"}, {"x", deep}})), "invalid_argument");
  const json drain = Ask({{"v", 1}, {"op", "drain"}});
  EXPECT_EQ(Code(drain), "permission_denied");
  EXPECT_NE(Message(drain).find("only admins may drain GPUs"), std::string::npos) << drain.dump();
  EXPECT_TRUE(log_.empty()) << log_[0];  // no handler saw any of these

  EXPECT_TRUE(Ask(testing::Person("root", 0, true), {{"v", 1}, {"op", "drain"}}).value("ok", false));
  EXPECT_EQ(log_.back(), "drain by root");
}

TEST_F(RequestPipelineTest, AHandlersWrongTypeIsTheCallersMistakeAndTagsAndZonesComeBack) {
  const json wrong = Ask({{"v", 1}, {"op", "show"}, {"job_id", "seven"}});
  EXPECT_EQ(Code(wrong), "invalid_argument");
  EXPECT_NE(Message(wrong).find("wrong type"), std::string::npos) << wrong.dump();
  const json queue = Ask({{"v", 1}, {"op", "queue"}, {"tag", 42}});
  EXPECT_EQ(queue["tag"], 42);
  EXPECT_TRUE(queue.contains("zone")) << queue.dump();  // read-only: the server's zone
  EXPECT_FALSE(Ask({{"v", 1}, {"op", "cancel"}, {"job_ids", {1}}}).contains("zone"));
}

TEST_F(RequestPipelineTest, AReplyGivenLaterReachesItsCaller) {
  auto reply = std::make_shared<json>();
  pipeline_->Call(testing::Person("root", 0, true), {{"v", 1}, {"op", "notify_test"}},
                  [reply](json r) { *reply = std::move(r); });
  pipeline_->Process();
  EXPECT_TRUE(reply->is_null());
  // The in-process caller's id is the first one handed out.
  const ConnId first = ConnId{1} << 61;
  ASSERT_TRUE(RequestPipeline::IsLocal(first));
  ASSERT_TRUE(pipeline_->Waiting(first));
  pipeline_->Reply(first, api::OkReply({{"sent", 1}}));
  EXPECT_FALSE(pipeline_->Waiting(first));
  EXPECT_EQ((*reply)["sent"], 1);
}

TEST_F(RequestPipelineTest, SubmissionsAreAnsweredInOrderAfterOneCommitAndBeforeTheNextOperation) {
  auto job = [](const std::string& name) {
    return json{
        {"v", 1},
        {"op", "submit"},
        {"tag", name},
        {"job", {{"command", {"true"}}, {"cwd", "/tmp"}, {"name", name}, {"request", {{"gpus", 1}}}}}};
  };
  auto a = std::make_shared<json>(), b = std::make_shared<json>(), q = std::make_shared<json>();
  pipeline_->Call(alice_, job("a"), [a](json r) { *a = std::move(r); });
  pipeline_->Call(alice_, job("b"), [b](json r) { *b = std::move(r); });
  pipeline_->Call(alice_, {{"v", 1}, {"op", "queue"}}, [a, b, q](json r) {
    EXPECT_FALSE(a->is_null());  // the submissions were answered first
    EXPECT_FALSE(b->is_null());
    *q = std::move(r);
  });
  EXPECT_EQ(pipeline_->Process(), 3u);
  ASSERT_TRUE(a->value("ok", false)) << a->dump();
  ASSERT_TRUE(b->value("ok", false)) << b->dump();
  EXPECT_EQ((*a)["tag"], "a");
  EXPECT_EQ((*b)["job_id"].get<JobId>(), (*a)["job_id"].get<JobId>() + 1);
  EXPECT_EQ(jobs_.size(), 2u);
  EXPECT_EQ(log_, (std::vector<std::string>{"submitted", "submitted", "catch up", "queue by alice"}));
  EXPECT_TRUE(q->value("ok", false));

  // A bad one is refused at once; the good ones of the batch are still stored.
  json bad = job("c");
  bad["job"].erase("cwd");
  EXPECT_EQ(Code(Ask(bad)), "invalid_argument");
}

TEST_F(RequestPipelineTest, AnHttpCallTakesTheSameWayAndSocketOnlyOperationsAreRefusedThere) {
  auto call = std::make_shared<HttpCall>();
  call->who = web::Principal{};
  call->who->uid = 20001;
  call->request = {{"v", 1}, {"op", "run"}};
  std::future<json> reply = call->reply.get_future();
  pipeline_->TakeHttp(7, call);
  pipeline_->Process();
  const json refused = reply.get();
  EXPECT_EQ(Code(refused), "invalid_argument");
  EXPECT_TRUE(log_.empty());

  auto metrics = std::make_shared<HttpCall>();
  metrics->metrics = true;
  std::future<json> text = metrics->reply.get_future();
  pipeline_->TakeHttp(8, metrics);
  pipeline_->Process();
  EXPECT_EQ(text.get()["text"], "rota_up 1\n");
}

TEST_F(RequestPipelineTest, InProcessLinesAndHttpRequestsTakeTheSameWay) {
  // CallLine: the bytes as a socket would read them (the fuzz targets' way in).
  auto reply = std::make_shared<json>();
  pipeline_->CallLine(alice_, "{\"v\": 1, \"op\": \"queue\", \"tag\": 3}", [reply](json r) { *reply = std::move(r); });
  pipeline_->CallLine(alice_, std::string("{\"v\"\0\xff", 7), [](json r) {
    EXPECT_EQ(Code(r), "invalid_argument");
    EXPECT_EQ(Message(r).rfind("the request is not a JSON object", 0), 0u) << r.dump();
  });
  pipeline_->Process();
  EXPECT_TRUE(reply->value("ok", false)) << reply->dump();
  EXPECT_EQ((*reply)["tag"], 3);
  EXPECT_EQ(log_, (std::vector<std::string>{"catch up", "queue by alice"}));  // nothing of the bad line

  // CallHttp: the object as the HTTP front end hands it over, socket-only operations refused.
  auto refused = std::make_shared<json>(), queued = std::make_shared<json>();
  pipeline_->CallHttp(alice_, {{"v", 1}, {"op", "run"}}, [refused](json r) { *refused = std::move(r); });
  pipeline_->CallHttp(alice_, {{"v", 1}, {"op", "queue"}}, [queued](json r) { *queued = std::move(r); });
  pipeline_->Process();
  EXPECT_EQ(Code(*refused), "invalid_argument");
  EXPECT_NE(Message(*refused).find("\"run\""), std::string::npos) << refused->dump();
  EXPECT_TRUE(queued->value("ok", false)) << queued->dump();
  EXPECT_EQ(log_, (std::vector<std::string>{"catch up", "queue by alice", "catch up", "queue by alice"}));
}

}  // namespace
}  // namespace request_pipeline_test
}  // namespace rota::daemon

// The HTTP door's credentials alone (http_door.h), over a real store in a temporary directory and
// a fake clock, with the front end off ([web] listen = ""): API tokens made, listed and revoked
// by their owners and admins, and what a sign-in link needs. Real HTTP, sessions and the browser:
// tests/daemon/test_http.py.
#include "daemon/http_door.h"

#include <gtest/gtest.h>

#include <string>

#include "testing/daemon/parts.h"
#include "testing/fake_clock.h"
#include "testing/temp_dir.h"

namespace rota::daemon {
namespace http_door_test {
namespace {

using nlohmann::json;
using testing::Person;

constexpr Time kNow = 1796115600;

class HttpDoorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::OpenStore(dir_);
    ASSERT_NE(store_, nullptr);
    config_.web.listen = "";
    StatusOr<std::unique_ptr<EventLoop>> loop = EventLoop::Create();
    ASSERT_TRUE(loop.ok());
    loop_ = std::move(*loop);
    HttpDoor::Setup s;
    s.store = store_.get();
    s.clock = &clock_;
    s.config = &config_;
    s.take = [](ConnId, std::shared_ptr<HttpCall>) {};
    door_ = std::make_unique<HttpDoor>(std::move(s));
    ASSERT_TRUE(door_->Start(*loop_).ok());
  }

  testing::TempDir dir_{"rota-http-door"};
  testing::FakeClock clock_{kNow};
  config::Config config_;
  std::unique_ptr<store::JobStore> store_;
  std::unique_ptr<EventLoop> loop_;
  std::unique_ptr<HttpDoor> door_;
  const Caller alice_ = Person("alice", 20001);
  const Caller bob_ = Person("bob", 20002);
  const Caller root_ = Person("root", 0, true);
};

TEST_F(HttpDoorTest, WithTheFrontEndOffASignInLinkSaysWhy) {
  EXPECT_EQ(door_->error(), "the HTTP front end is off ([web] listen = \"\")");
  const json reply = door_->WebLogin(alice_);
  EXPECT_EQ(reply["error"]["code"], "failed_precondition") << reply.dump();
  EXPECT_EQ(reply["error"]["message"], door_->error());
}

TEST_F(HttpDoorTest, TokensAreMadeListedAndRevokedByTheirOwnersAndAdmins) {
  const json calendar = door_->TokenCreate(alice_, {{"name", "calendar"}});
  ASSERT_TRUE(calendar.value("ok", false)) << calendar.dump();
  EXPECT_EQ(calendar["scope"], "calendar");  // named "calendar": the feed only, unless told
  EXPECT_EQ(calendar["token"].get<std::string>().rfind("rota_", 0), 0u);
  EXPECT_EQ(calendar["expires"], 0);
  const json script = door_->TokenCreate(alice_, {{"name", "script"}, {"expires", "30d"}});
  ASSERT_TRUE(script.value("ok", false)) << script.dump();
  EXPECT_EQ(script["scope"], "full");
  EXPECT_EQ(script["expires"], kNow + 30 * kDay);
  ASSERT_TRUE(door_->TokenCreate(bob_, {{"name", "bob's"}, {"scope", "read"}}).value("ok", false));

  EXPECT_EQ(door_->TokenCreate(alice_, {{"name", std::string(201, 'x')}})["error"]["code"],
            "invalid_argument");
  EXPECT_EQ(door_->TokenCreate(alice_, {{"name", "x"}, {"scope", "root"}})["error"]["code"],
            "invalid_argument");
  EXPECT_EQ(door_->TokenCreate(alice_, {{"name", "x"}, {"expires", "-1d"}})["error"]["code"],
            "invalid_argument");

  // Each sees their own; only admins see others'.
  EXPECT_EQ(door_->TokenList(alice_, json::object())["tokens"].size(), 2u);
  EXPECT_EQ(door_->TokenList(alice_, {{"user", "bob"}})["error"]["code"], "permission_denied");
  EXPECT_EQ(door_->TokenList(root_, {{"all", true}})["tokens"].size(), 3u);
  // The secret is shown once, never listed.
  EXPECT_FALSE(door_->TokenList(alice_, json::object())["tokens"][0].contains("token"));

  // Another user's token is "not found" to her; her own goes, with who and when.
  const std::int64_t bobs = door_->TokenList(bob_, json::object())["tokens"][0]["id"];
  EXPECT_EQ(door_->TokenRevoke(alice_, {{"id", bobs}})["error"]["code"], "not_found");
  clock_.Advance(60);
  ASSERT_TRUE(door_->TokenRevoke(alice_, {{"id", script["id"]}}).value("ok", false));
  const json listed = door_->TokenList(alice_, json::object());  // kept: the loop reads into it
  for (const json& t : listed["tokens"]) {
    if (t["id"] == script["id"]) {
      EXPECT_EQ(t["revoked_at"], kNow + 60);
      EXPECT_EQ(t["revoked_by"], "alice");
    }
  }
  ASSERT_TRUE(door_->TokenRevoke(root_, {{"id", bobs}}).value("ok", false));  // an admin may
  EXPECT_EQ(door_->TokenRevoke(alice_, {{"id", 0}})["error"]["code"], "invalid_argument");
}

TEST_F(HttpDoorTest, AWaitingCallIsAnsweredOnceAndUnavailableWhenTheDoorStops) {
  auto first = std::make_shared<HttpCall>();
  auto second = std::make_shared<HttpCall>();
  std::future<json> first_reply = first->reply.get_future();
  std::future<json> second_reply = second->reply.get_future();
  door_->Wait(HttpDoor::kConnBase + 1, first);
  door_->Wait(HttpDoor::kConnBase + 2, second);
  door_->Answer(HttpDoor::kConnBase + 1, {{"ok", true}});
  door_->Answer(HttpDoor::kConnBase + 1, {{"ok", false}});  // answered already: nothing
  EXPECT_EQ(first_reply.get()["ok"], true);
  door_->Stop();
  EXPECT_EQ(second_reply.get()["error"]["code"], "unavailable");
}

}  // namespace
}  // namespace http_door_test
}  // namespace rota::daemon

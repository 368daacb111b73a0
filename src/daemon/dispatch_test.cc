// The request pipeline (request_pipeline.h) of a whole daemon against the table of operations,
// in-process: every operation has its handler, unknown ones are refused naming them all, the
// admins' are refused to others with what they may not do.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/ops.h"
#include "testing/daemon/in_process.h"

namespace rota::daemon {
namespace dispatch_test {
namespace {

using nlohmann::json;

constexpr Time kStart = testing::kTuesdayMorning;
const std::string kOneCard = testing::SimulatedCards(1);

TEST(DispatchTest, EveryOperationOfTheTableIsHandled) {
  testing::InProcessDaemon d(kOneCard, kStart);
  ASSERT_TRUE(d.ok());
  for (const api::OpInfo& op : api::Ops()) {
    if (op.name == "reload") continue;  // an in-process daemon has no file to read again
    const json reply = d.Call("root", {{"op", op.name}});
    ASSERT_TRUE(reply.is_object()) << op.name;
    const std::string message = reply.value("ok", false) ? "" : reply["error"].value("message", "");
    EXPECT_EQ(message.find("no handler"), std::string::npos) << op.name << ": " << reply.dump();
    EXPECT_EQ(message.find("unknown operation"), std::string::npos) << op.name << ": " << reply.dump();
  }
}

TEST(DispatchTest, UnknownOperationsAreRefusedNamingEveryOne) {
  testing::InProcessDaemon d(kOneCard, kStart);
  ASSERT_TRUE(d.ok());
  const json reply = d.Call("alice", {{"op", "sbatch"}});
  EXPECT_EQ(reply["error"]["code"], "invalid_argument");
  EXPECT_EQ(reply["error"]["message"], "unknown operation \"sbatch\" (" + api::OpNames() + ")");
}

TEST(DispatchTest, AdminsOperationsAreRefusedToOthers) {
  testing::InProcessDaemon d(kOneCard, kStart);
  ASSERT_TRUE(d.ok());
  for (const api::OpInfo& op : api::Ops()) {
    if (op.access != api::OpAccess::kAdmin) continue;
    const json reply = d.Call("alice", {{"op", op.name}, {"gpu", "0"}, {"booking_id", 1}});
    EXPECT_EQ(reply["error"]["code"], "permission_denied") << op.name;
    EXPECT_EQ(reply["error"]["message"], "only admins may " + std::string(op.admin_action)) << op.name;
  }
  // And done for an admin: a drained card is drained.
  const json drained = d.Call("root", {{"op", "drain"}, {"gpu", "0"}, {"reason", "fan"}});
  EXPECT_TRUE(drained.value("ok", false)) << drained.dump();
}

// A member of the wrong type is refused by name (api/request_fields.h), not taken as its default
// nor answered with a JSON library's message.
TEST(DispatchTest, FieldsOfTheWrongTypeAreRefusedByName) {
  testing::InProcessDaemon d(kOneCard, kStart);
  ASSERT_TRUE(d.ok());
  struct Case {
    json request;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{{"op", "queue"}, {"all", "yes"}}, "\"all\" must be true or false"},
           {{{"op", "history"}, {"all", 1}}, "\"all\" must be true or false"},
           {{{"op", "show"}, {"job_id", "7"}}, "\"job_id\" must be a job id (a positive whole number)"},
           {{{"op", "bookings"}, {"pending", json::array()}}, "\"pending\" must be true or false"},
           {{{"op", "drain"}, {"gpu", 0}, {"reason", "fan"}}, "\"gpu\" must be text (a JSON string)"},
           {{{"op", "bookings_export"}, {"format", 1}}, "\"format\" must be text (a JSON string)"},
           {{{"op", "token_list"}, {"all", "true"}}, "\"all\" must be true or false"},
       }) {
    const json reply = d.Call("root", c.request);
    EXPECT_EQ(reply["error"]["code"], "invalid_argument") << c.request.dump();
    EXPECT_EQ(reply["error"]["message"], c.message) << c.request.dump();
  }
}

}  // namespace
}  // namespace dispatch_test
}  // namespace rota::daemon

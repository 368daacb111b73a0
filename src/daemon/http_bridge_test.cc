#include "daemon/http_bridge.h"

#include <gtest/gtest.h>

#include "testing/readable.h"

#include <thread>

namespace rota::daemon {
namespace http_bridge_test {
namespace {

using testing::Readable;

TEST(HttpBridge, HandsCallsToTheLoopAndRepliesBack) {
  auto bridge = HttpBridge::Create();
  ASSERT_TRUE(bridge.ok());
  HttpBridge& b = **bridge;
  EXPECT_FALSE(Readable(b.fd(), 0));
  nlohmann::json got;
  std::thread handler([&] {
    auto call = std::make_shared<HttpCall>();
    call->request = {{"op", "status"}};
    got = b.Call(call, std::chrono::seconds(10));
  });
  ASSERT_TRUE(Readable(b.fd(), 5000));
  auto calls = b.Take();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0]->request["op"], "status");
  EXPECT_FALSE(Readable(b.fd(), 0));  // Take cleared the eventfd
  calls[0]->reply.set_value({{"ok", true}, {"answer", 42}});
  handler.join();
  EXPECT_EQ(got["answer"], 42);
}

TEST(HttpBridge, DeadlineAndClose) {
  auto bridge = HttpBridge::Create();
  ASSERT_TRUE(bridge.ok());
  HttpBridge& b = **bridge;
  nlohmann::json late = b.Call(std::make_shared<HttpCall>(), std::chrono::milliseconds(20));
  EXPECT_EQ(late["error"]["code"], "unavailable");
  // The loop may still answer the abandoned call: nobody reads it, nothing breaks.
  auto calls = b.Take();
  ASSERT_EQ(calls.size(), 1u);
  calls[0]->reply.set_value({{"ok", true}});
  b.Close();
  nlohmann::json closed = b.Call(std::make_shared<HttpCall>(), std::chrono::seconds(10));
  EXPECT_EQ(closed["error"]["code"], "unavailable");
}

}  // namespace
}  // namespace http_bridge_test
}  // namespace rota::daemon

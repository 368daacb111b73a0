#include "daemon/agent_board.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <fstream>

#include "testing/fake_clock.h"
#include "testing/temp_dir.h"

namespace rota::daemon {
namespace {

std::string Body(const std::string& node, int util) {
  device::NodeReadings r;
  r.node = node;
  device::CardReading c;
  c.util_gpu = util;
  c.memory_total = 100;
  c.memory_used = 10;
  c.procs = {{4242, 77, 1001, "alice", "12", 5}};  // the deepest part of a reading
  r.cards = {c};
  return device::ReadingsToJson(r).dump();
}

std::vector<device::GpuInfo> Cards() {
  std::vector<device::GpuInfo> cards(2);
  cards[0].node = "n1";
  cards[1].node = "n2";
  return cards;
}

constexpr char kOne[] = "token-of-node-one-0123456789";
constexpr char kTwo[] = "token-of-node-two-0123456789";

TEST(AgentBoardTest, AnAgentSpeaksOnlyForItsOwnNodeWithItsOwnToken) {
  testing::FakeClock clock(1000);
  AgentBoard board({{"n1", kOne}, {"n2", kTwo}}, clock, 30);
  EXPECT_EQ(board.Post("", Body("n1", 50)).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(board.Post("token-of-node-one-012345678", Body("n1", 50)).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(board.Post(std::string(kOne) + "x", Body("n1", 50)).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(board.Post(kOne, Body("n2", 50)).code(), StatusCode::kPermissionDenied);  // n2's readings
  EXPECT_EQ(board.Post(kOne, "{\"node\": \"n1\"").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(board.Post(kOne, "[[[[[[[[[[1]]]]]]]]]]").code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(board.Nodes().empty());
  ASSERT_TRUE(board.Post(kOne, Body("n1", 50)).ok());
  std::vector<device::GpuInfo> cards = Cards();
  board.LayOnto(cards);
  EXPECT_EQ(cards[0].util_gpu, 50);
  EXPECT_EQ(cards[1].util_gpu, -1);
  ASSERT_EQ(cards[0].node_processes.size(), 1u);
  EXPECT_EQ(cards[0].node_processes[0].slurm_job, "12");
  EXPECT_TRUE(cards[1].node_processes.empty());
}

// Stop orders go to their node's agent, once, in the reply to its next post; orders it did not
// fetch in time are dropped.
TEST(AgentBoardTest, StopOrdersGoToTheirNodesNextPostOnce) {
  testing::FakeClock clock(1000);
  AgentBoard board({{"n1", kOne}, {"n2", kTwo}}, clock, 30);
  board.Order("n1", {4242, 77, SIGTERM});
  std::vector<device::StopOrder> got;
  ASSERT_TRUE(board.Post(kTwo, Body("n2", 50), &got).ok());
  EXPECT_TRUE(got.empty());  // n1's, not n2's
  EXPECT_EQ(board.Post(kTwo, Body("n1", 50), &got).code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(got.empty());
  ASSERT_TRUE(board.Post(kOne, Body("n1", 50), &got).ok());
  EXPECT_EQ(got, (std::vector<device::StopOrder>{{4242, 77, SIGTERM}}));
  got.clear();
  ASSERT_TRUE(board.Post(kOne, Body("n1", 50), &got).ok());
  EXPECT_TRUE(got.empty());  // once
  board.Order("n1", {4242, 77, SIGKILL});
  clock.Advance(31);
  ASSERT_TRUE(board.Post(kOne, Body("n1", 50), &got).ok());
  EXPECT_TRUE(got.empty());  // too old: the process is read, and ordered, again
}

TEST(AgentBoardTest, ReadingsNobodyRenewedAreNotLaidOn) {
  testing::FakeClock clock(1000);
  AgentBoard board({{"n1", kOne}}, clock, 30);
  ASSERT_TRUE(board.Post(kOne, Body("n1", 0)).ok());
  clock.Advance(30);
  std::vector<device::GpuInfo> cards = Cards();
  board.LayOnto(cards);
  EXPECT_EQ(cards[0].util_gpu, 0);
  EXPECT_TRUE(board.Nodes().at("n1").fresh);
  clock.Advance(1);
  cards = Cards();
  board.LayOnto(cards);
  EXPECT_EQ(cards[0].util_gpu, -1);  // unknown: an idle rule cannot act on it
  EXPECT_FALSE(board.Nodes().at("n1").fresh);
  ASSERT_TRUE(board.Post(kOne, Body("n1", 7)).ok());
  board.LayOnto(cards);
  EXPECT_EQ(cards[0].util_gpu, 7);
}

TEST(AgentBoardTest, TokenFilesMustBePrivateAndLongEnough) {
  testing::TempDir dir;
  auto write = [&](const std::string& name, const std::string& text, mode_t mode) {
    const std::string path = dir.path() + "/" + name;
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
  };
  write("n1.token", std::string(kOne) + "\n", 0600);
  write("README", "not a token", 0644);
  StatusOr<std::map<std::string, std::string>> tokens = AgentBoard::LoadTokens(dir.path());
  ASSERT_TRUE(tokens.ok()) << tokens.status().message();
  EXPECT_EQ(*tokens, (std::map<std::string, std::string>{{"n1", kOne}}));
  write("n2.token", kTwo, 0644);
  EXPECT_FALSE(AgentBoard::LoadTokens(dir.path()).ok());  // others may read it
  write("n2.token", "short", 0600);
  EXPECT_FALSE(AgentBoard::LoadTokens(dir.path()).ok());
  write("n2.token", "two words-0123456789", 0600);
  EXPECT_FALSE(AgentBoard::LoadTokens(dir.path()).ok());
  EXPECT_FALSE(AgentBoard::LoadTokens(dir.path() + "/none").ok());
  EXPECT_FALSE(AgentBoard::ReadTokenFile(dir.path() + "/none").ok());
}

}  // namespace
}  // namespace rota::daemon

// The head rotad's board of node agents' GPU readings (issue 26, GPUs on every node): each
// compute node's `rotad --agent` posts its cards' readings over HTTP (POST /agent/readings, with
// its node's token); the card desk lays the fresh ones onto the cluster's cards at every sample,
// so `rota gpus`, the web page, /metrics and the idle rules see every node's load.
//
// Trust: an agent proves which node it is by a token of that node's own (a file
// `<agent_tokens>/<node>.token` on the head, the same secret on the node); it may speak only for
// that node. Tokens are compared in constant time. Token files readable by others than their
// owner are refused (a token any user can read is no proof).
//
// Staleness: readings older than `stale_after` (by the head's clock, when they arrived) are not
// laid on: the cards' load reads unknown, and nothing is reclaimed as idle on readings nobody
// renewed. A node going stale and coming back is logged once each way.
//
// Thread-safe: Post runs on HTTP workers, LayOnto on the daemon's loop.
// Tested by agent_board_test.cc and through rotad by tests/daemon/test_slurm_nodes.py (AgentTest).
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "daemon/clock.h"
#include "device/devices.h"
#include "device/node_readings.h"

namespace rota::daemon {

class AgentBoard {
 public:
  // Reads every `<dir>/<node>.token` (at least kMinTokenLength characters, trimmed; mode 0600 or
  // stricter, owned by rotad's user). A file that breaks a rule is refused, naming it.
  static StatusOr<std::map<std::string, std::string>> LoadTokens(const std::string& dir);
  // One token file (the head's of a node, or the agent's own), by the same rules.
  static StatusOr<std::string> ReadTokenFile(const std::string& path);
  static constexpr size_t kMinTokenLength = 16;

  // `clock` must outlive the board.
  AgentBoard(std::map<std::string, std::string> tokens, const Clock& clock, Duration stale_after);

  // An agent's post: `token` (the Authorization header's) must be a node's, and the readings
  // must be that node's. PermissionDenied (unknown token, another node's readings) or
  // InvalidArgument (the body); kept otherwise, and `orders` (when given) gets the node's stop
  // orders given since its last post, for the reply (the agent checks each against what it
  // sent: device::OrdersToCarryOut).
  Status Post(std::string_view token, std::string_view body, std::vector<device::StopOrder>* orders = nullptr);

  // The outside-process policy's word for a node's process (the card desk, on the loop): sent to
  // the node's agent in the reply to its next post. Orders not fetched within `stale_after` are
  // dropped (the process is read again, and ordered again, once the agent is back).
  void Order(const std::string& node, const device::StopOrder& order);

  // Lays the fresh readings onto `cards` (the card desk's sample).
  void LayOnto(std::vector<device::GpuInfo>& cards);

  // For `rota status` and tests: each node with readings, and whether they are fresh.
  struct NodeState {
    Time received = 0;
    bool fresh = false;
  };
  std::map<std::string, NodeState> Nodes() const;

  // The node whose token `token` is ("" none), comparing every token in full (any thread).
  std::string NodeOfToken(std::string_view token) const;

 private:
  const std::map<std::string, std::string> tokens_;  // node -> token
  const Clock& clock_;
  const Duration stale_after_;
  mutable std::mutex mu_;
  struct Held {
    device::NodeReadings readings;
    Time received = 0;
    bool said_stale = false;
  };
  struct Pending {
    device::StopOrder order;
    Time given = 0;
  };
  std::map<std::string, std::vector<Pending>> orders_;  // by node
  std::map<std::string, Held> nodes_;
};

}  // namespace rota::daemon

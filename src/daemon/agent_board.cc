#include "daemon/agent_board.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "exec/files.h"
#include "json/bounded.h"

namespace rota::daemon {

StatusOr<std::map<std::string, std::string>> AgentBoard::LoadTokens(const std::string& dir) {
  std::map<std::string, std::string> tokens;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) return FailedPrecondition("cannot read the agents' tokens in " + dir + ": " + ec.message());
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    const size_t dot = name.rfind(".token");
    if (dot == std::string::npos || dot == 0 || dot + 6 != name.size()) continue;
    StatusOr<std::string> token = ReadTokenFile(entry.path().string());
    if (!token.ok()) return token.status();
    tokens[name.substr(0, dot)] = *token;
  }
  return tokens;
}

StatusOr<std::string> AgentBoard::ReadTokenFile(const std::string& path) {
  struct stat st {};
  // lstat: a link could name a file anyone can write.
  if (::lstat(path.c_str(), &st) != 0)
    return FailedPrecondition("cannot read " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return FailedPrecondition(path + " is not a plain file");
  if ((st.st_mode & 077) != 0 || st.st_uid != ::geteuid())
    return FailedPrecondition(path +
                              " may be read by others: it must be owned by rotad's user with mode 0600");
  StatusOr<std::string> text = exec::ReadFile(path);
  if (!text.ok()) return text.status();
  std::string token = *text;
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.front()))) token.erase(0, 1);
  if (token.size() < kMinTokenLength || token.find_first_of(" \t\r\n") != std::string::npos) {
    return FailedPrecondition(path + ": a token is one word of at least " + std::to_string(kMinTokenLength) +
                              " characters (e.g. `openssl rand -hex 32`)");
  }
  return token;
}

AgentBoard::AgentBoard(std::map<std::string, std::string> tokens, const Clock& clock, Duration stale_after)
    : tokens_(std::move(tokens)), clock_(clock), stale_after_(stale_after) {}

std::string AgentBoard::NodeOfToken(std::string_view token) const {
  std::string found;
  for (const auto& [node, t] : tokens_) {
    // Every byte of every token compared, whatever matches: the time says nothing of the tokens.
    unsigned char diff = t.size() == token.size() ? 0 : 1;
    for (size_t i = 0; i < t.size(); ++i)
      diff |= static_cast<unsigned char>(t[i] ^ (i < token.size() ? token[i] : 0));
    if (diff == 0) found = node;
  }
  return found;
}

void AgentBoard::Order(const std::string& node, const device::StopOrder& order) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Pending>& list = orders_[node];
  if (list.size() < device::kMaxCardProcesses * device::kMaxNodeCards) list.push_back({order, clock_.Now()});
}

Status AgentBoard::Post(std::string_view token, std::string_view body, std::vector<device::StopOrder>* orders) {
  const std::string node = token.empty() ? "" : NodeOfToken(token);
  if (node.empty()) return PermissionDenied("not a node agent's token");
  // {"cards": [{"procs": [{...}]}]}: five levels, and no reading needs more.
  StatusOr<nlohmann::json> j = ParseBoundedJson(body, 5, JsonFloats::kWithinInt32);
  if (!j.ok()) return j.status();
  StatusOr<device::NodeReadings> r = device::ReadingsFromJson(*j);
  if (!r.ok()) return r.status();
  if (r->node != node) {
    spdlog::warn("agent of node {} posted readings for node {}: refused", node, r->node);
    return PermissionDenied("this token is node " + node + "'s: it may post only that node's readings");
  }
  std::lock_guard<std::mutex> lock(mu_);
  Held& h = nodes_[node];
  if (h.received == 0 || h.said_stale)
    spdlog::info("agent of node {}: readings of {} GPUs", node, r->cards.size());
  h.readings = std::move(*r);
  h.received = clock_.Now();
  h.said_stale = false;
  auto it = orders_.find(node);
  if (it != orders_.end()) {
    for (const Pending& p : it->second) {
      if (orders != nullptr && h.received - p.given <= stale_after_) orders->push_back(p.order);
    }
    orders_.erase(it);
  }
  return Status();
}

void AgentBoard::LayOnto(std::vector<device::GpuInfo>& cards) {
  const Time now = clock_.Now();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [node, h] : nodes_) {
    if (now - h.received > stale_after_) {
      if (!h.said_stale) {
        h.said_stale = true;
        spdlog::warn(
            "agent of node {}: no readings for {} s; its GPUs' load reads unknown (nothing is reclaimed "
            "as idle there)",
            node, now - h.received);
      }
      continue;
    }
    device::ApplyReadings(h.readings, cards);
  }
}

std::map<std::string, AgentBoard::NodeState> AgentBoard::Nodes() const {
  const Time now = clock_.Now();
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, NodeState> out;
  for (const auto& [node, h] : nodes_) out[node] = {h.received, now - h.received <= stale_after_};
  return out;
}

}  // namespace rota::daemon

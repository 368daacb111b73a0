// Fuzz target: a request line on rotad's socket, the whole way to the store: a daemon in this
// process (testing/daemon/in_process.h: its real request pipeline, handlers, SQLite store in a
// temporary folder, scheduling passes; a fake engine and a virtual clock) takes the input's lines
// one by one as its socket would. A line's first byte is the fuzzer's choice: who sends it
// (alice, bob, carol or root: the peer credentials) and what happens first (virtual time moves
// on, the oldest running job ends, the cards are sampled). The rest of the line is the request,
// any bytes. A daemon serves 64 inputs in a row (daemon_target.h): a finding that needed what
// earlier inputs left replays with the corpus it came from (docs/reliability.md).
//
// Properties: no crash, no sanitizer report; every line gets exactly one reply, a JSON object with
// "ok"; a refusal has an error with a code and a message.
#include <nlohmann/json.hpp>

#include "fuzz/daemon_target.h"
#include "fuzz/fuzz.h"

namespace {

constexpr char kConfig[] = R"(
[policy]
algorithm = "rota"
[quota]
default = 100
[quota.roles]
student = 10
[users.bob]
role = "student"
[preemption]
enabled = true
tiers = ["explore"]
[bookings]
same_day_needs_admin = false
)";

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  rota::fuzz::QuietLog();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rota;
  using nlohmann::json;
  if (size > 64 * 1024) return 0;  // the socket reads lines of at most 1 MiB; keep inputs quick
  static fuzz::ReusedDaemon daemon(testing::SimulatedCards(4) + kConfig);
  daemon.NextInput();
  testing::InProcessDaemon& d = daemon.Get();
  static const char* const kUsers[] = {"alice", "bob", "carol", "root"};
  for (std::string_view line : fuzz::Split(fuzz::Text(data, size), '\n')) {
    const unsigned char choice = fuzz::TakeByte(line);
    switch ((choice >> 3) & 3) {
      case 1:
        d.Advance(static_cast<Duration>(choice >> 5) * 17 * kMinute + kMinute);
        break;
      case 2:
        if (!d.engine().jobs().empty()) d.engine().Exit(d.engine().jobs().begin()->first, choice >> 5);
        break;
      case 3:
        d.Sample();
        break;
      default:
        break;
    }
    const json reply = d.CallLine(kUsers[choice & 3], std::string(line));
    fuzz::Require(reply.is_object(), "a reply is an object");
    auto ok = reply.find("ok");
    fuzz::Require(ok != reply.end() && ok->is_boolean(), "a reply says ok");
    if (!ok->get<bool>()) {
      auto error = reply.find("error");
      fuzz::Require(error != reply.end() && error->is_object() && error->contains("code") &&
                        (*error)["code"].is_string() && error->contains("message") &&
                        (*error)["message"].is_string() && !(*error)["message"].get<std::string>().empty(),
                    "a refusal has a code and a message: " + reply.dump(-1, ' ', false, json::error_handler_t::replace));
    }
  }
  return 0;
}

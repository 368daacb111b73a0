// Tested by http_bridge_test.cc and tests/daemon/test_http.py.
#include "daemon/http_bridge.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "api/protocol.h"

namespace rota::daemon {

StatusOr<std::unique_ptr<HttpBridge>> HttpBridge::Create() {
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) return Internal(std::string("eventfd: ") + std::strerror(errno));
  return std::unique_ptr<HttpBridge>(new HttpBridge(fd));
}

HttpBridge::~HttpBridge() {
  Close();
  ::close(event_fd_);
}

nlohmann::json HttpBridge::Call(std::shared_ptr<HttpCall> call, std::chrono::milliseconds deadline) {
  std::future<nlohmann::json> reply = call->reply.get_future();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return api::ErrorReply("unavailable", "rotad is shutting down");
    queue_.push_back(std::move(call));
  }
  const std::uint64_t one = 1;
  (void)!::write(event_fd_, &one, sizeof one);
  if (reply.wait_for(deadline) != std::future_status::ready) {
    return api::ErrorReply("unavailable", "rotad did not answer in time; try again");
  }
  return reply.get();
}

std::vector<std::shared_ptr<HttpCall>> HttpBridge::Take() {
  std::uint64_t count;
  (void)!::read(event_fd_, &count, sizeof count);
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<HttpCall>> out(queue_.begin(), queue_.end());
  queue_.clear();
  return out;
}

void HttpBridge::Close() {
  std::deque<std::shared_ptr<HttpCall>> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    left.swap(queue_);
  }
  for (auto& call : left) call->reply.set_value(api::ErrorReply("unavailable", "rotad is shutting down"));
}

}  // namespace rota::daemon

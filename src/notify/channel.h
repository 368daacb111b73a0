// The notifier's interface: one Channel per way of reaching people (an SMTP server, a chat bot's
// webhook, the users' terminals). The daemon's outbox (issue 6) decides who hears what and when;
// a Channel only delivers one Message now, within a deadline, and says what went wrong.
//
// Contract shared by every channel (docs/notify.md):
// - Send() blocks for at most the channel's deadline (libcurl's CURLOPT_TIMEOUT_MS for the network
//   channels), so call it from a worker thread, never from the daemon's event loop.
// - Send() never throws. Failures are a Status whose message names the channel (without secrets:
//   webhook tokens and passwords are never in a message or Describe()) and says what to do.
// - The code says whether retrying can help (IsRetryable):
//     kUnavailable        could not connect, timed out, HTTP 5xx, SMTP 4xx: retry with backoff;
//     kResourceExhausted  the platform's rate limit: retry later, slower;
//     kPermissionDenied   wrong secret/signature, login denied, IP not allowed: tell the admin;
//     kFailedPrecondition the platform or server refused the message (bad URL, keyword missing,
//                         certificate not trusted, recipient refused): tell the admin;
//     kInvalidArgument    the message or the configuration cannot work (no recipient);
//     kNotFound           nobody to deliver to right now (a user with no open terminal).
// - Thread-safety: channels hold only their configuration; Send() may be called from several
//   threads at once (each call uses its own connection).
// - SIGPIPE must be ignored in the process (rotad does): a TLS write to a connection the server
//   closed would otherwise kill it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"

namespace rota::notify {

struct Message {
  std::string subject;  // one line; the email subject, the first line of a chat message
  std::string text;     // the body, UTF-8, lines separated by '\n'
  std::string event;    // what happened: "job_ended", "booking_reminder", "idle_warning", ...
  // Who is concerned, in this channel's own id space: chat mention ids for Feishu (open_id),
  // DingTalk (userId or mobile number), WeCom (userid) and Slack (member id); email addresses
  // for the email channel (added to its fixed recipients); user names for the terminal channel.
  std::vector<std::string> mentions;
};

class Channel {
 public:
  Channel() = default;
  virtual ~Channel() = default;
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // Delivers `message` now, waiting at most the channel's deadline. OK once the server or
  // platform accepted it (the mail server queued it, the bot answered code 0, a terminal took it).
  virtual Status Send(const Message& message) = 0;
  // One line for logs and `rota notify test`: the kind and where it goes, without secrets, e.g.
  // "feishu bot https://open.feishu.cn/... (signed)".
  virtual std::string Describe() const = 0;
};

// True for failures that a later attempt may not repeat (kUnavailable, kResourceExhausted).
bool IsRetryable(const Status& status);

// Milliseconds since the Unix epoch. Channels that sign requests or date mail read the time
// through one of these so that tests can fix it; RealWallClockMs reads the system clock.
using WallClockMs = std::function<std::int64_t()>;
std::int64_t RealWallClockMs();

// The deadline of one Send() unless a channel's options say otherwise.
inline constexpr std::chrono::milliseconds kDefaultSendTimeout{10'000};

}  // namespace rota::notify

// The email channel: one message per Send() to an SMTP server through libcurl.
//
// Transport by URL and flag:
//   smtp://host:25                     plain (a relay on the machine or the lab network)
//   smtp://host:587 + starttls = true  STARTTLS required (CURLUSESSL_ALL): no fallback to plain
//   smtps://host:465                   implicit TLS
// A path on the URL is the EHLO name (smtp://mail.example.edu/gpu1.lab.example.edu); libcurl
// says "localhost" otherwise.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "notify/channel.h"
#include "notify/mime.h"

namespace rota::notify {

struct EmailOptions {
  std::string url;        // smtp://HOST[:PORT][/EHLO-NAME] or smtps://...
  bool starttls = false;  // smtp:// only: upgrade with STARTTLS and refuse to send without it
  std::string username;   // empty: no SMTP AUTH
  std::string password;
  std::string from;             // "Rota <rota@lab.example.edu>" or "rota@lab.example.edu"
  std::vector<std::string> to;  // always-addressed recipients (admins); Message::mentions add to them
  std::string ca_file;          // a PEM file of CAs to trust instead of the system's; empty = system
  BodyEncoding encoding = BodyEncoding::kAuto;
  std::chrono::milliseconds timeout = kDefaultSendTimeout;
  WallClockMs clock = RealWallClockMs;  // for the Date header and Message-ID
};

// Checks the options (URL scheme, addresses, starttls only with smtp://, a password never sent
// in clear text to a host other than this machine) and returns the channel, or
// InvalidArgument naming the option to fix.
StatusOr<std::unique_ptr<Channel>> MakeEmailChannel(EmailOptions options);

}  // namespace rota::notify

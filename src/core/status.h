// Status and StatusOr: errors as values, never exceptions across modules.
//
// A Status is either OK or carries a code and a one-line message that says what went wrong and,
// where possible, what to do. Codes map one-to-one onto HTTP statuses (HttpStatus) so that the
// daemon, the command line and the web page report the same error the same way.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace rota {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // malformed or impossible input (400)
  kNotFound,           // unknown job, GPU, user (404)
  kPermissionDenied,   // caller may not do this (403)
  kAlreadyExists,      // duplicate id (409)
  kFailedPrecondition, // conflicts with current state, e.g. overlapping booking (409)
  kResourceExhausted,  // quota used up, disk full, rate limit (429/507)
  kUnavailable,        // daemon or device not reachable, try again (503)
  kInternal,           // a bug or an unexpected library failure (500)
};

const char* StatusCodeName(StatusCode code);
int HttpStatus(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidArgument: message", or "OK".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status PermissionDenied(std::string m) { return {StatusCode::kPermissionDenied, std::move(m)}; }
inline Status FailedPrecondition(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
inline Status ResourceExhausted(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

// Either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : v_(std::move(value)) {}             // NOLINT: implicit by design
  StatusOr(Status status) : v_(std::move(status)) {}      // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }
  // REQUIRES: ok().
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace rota

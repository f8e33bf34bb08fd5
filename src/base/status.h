// Status and Result<T>: how recoverable errors cross module boundaries.
//
// A Status carries a code and a message written for the person who must act on
// it ("spec.tasks[0].resources.gpus: 9 GPUs per task, but the largest node has 8").
// Exceptions never cross a module boundary; third-party adapters (yaml-cpp,
// nlohmann-json) catch theirs and return a Status.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace tessera {

enum class StatusCode {
  kOk,
  kInvalidArgument,  // the input is malformed or names an unknown field
  kNotFound,         // a referenced object does not exist
  kInfeasible,       // well-formed, but can never be satisfied by this cluster
  kFailedPrecondition,  // the object is not in a state that allows it (a job that already ended)
  kUnauthenticated,     // no usable credential: unknown, malformed, revoked or expired
  kPermissionDenied,    // the caller is known but may not do this
  kResourceExhausted,   // over a limit for now (a rate, a quota); retry_after_s says when to try again
  kExpired,             // asks for what is no longer kept (a revision older than the event window)
  kInternal,
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  Status(StatusCode code, std::string message, std::int64_t retry_after_s)
      : code_(code), message_(std::move(message)), retry_after_s_(retry_after_s) {}

  static Status Ok() { return {}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // Seconds after which trying again may succeed (kResourceExhausted); 0: unsaid.
  std::int64_t retry_after_s() const { return retry_after_s_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::int64_t retry_after_s_ = 0;
};

inline Status InvalidArgument(std::string message) {
  return {StatusCode::kInvalidArgument, std::move(message)};
}
inline Status NotFound(std::string message) { return {StatusCode::kNotFound, std::move(message)}; }
inline Status Infeasible(std::string message) {
  return {StatusCode::kInfeasible, std::move(message)};
}
inline Status Internal(std::string message) { return {StatusCode::kInternal, std::move(message)}; }
inline Status FailedPrecondition(std::string message) { return {StatusCode::kFailedPrecondition, std::move(message)}; }
inline Status Unauthenticated(std::string message) { return {StatusCode::kUnauthenticated, std::move(message)}; }
inline Status PermissionDenied(std::string message) { return {StatusCode::kPermissionDenied, std::move(message)}; }
inline Status ResourceExhausted(std::string message, std::int64_t retry_after_s) {
  return {StatusCode::kResourceExhausted, std::move(message), retry_after_s};
}

// Either a value or a non-ok Status (std::expected arrives with C++23; g++ 12 lacks it).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : state_(std::move(status)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(state_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(state_);
  }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T value_or(T fallback) const& { return ok() ? value() : std::move(fallback); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace tessera

// Propagates a non-ok Status from an expression returning Status.
#define TESSERA_RETURN_IF_ERROR(expr)      \
  do {                                     \
    ::tessera::Status status_ = (expr);    \
    if (!status_.ok()) return status_;     \
  } while (false)

// How the routes turn the services' answers into HTTP, so that every route
// maps errors to the same codes:
//   InvalidArgument 400, Unauthenticated 401 (with WWW-Authenticate),
//   PermissionDenied 403, NotFound 404, FailedPrecondition 409, Expired 410,
//   Infeasible 422, ResourceExhausted 429 (with Retry-After), Internal 500.
// (A failed store write stops the server: ControlPlane::Commit.)
#pragma once

#include <nlohmann/json.hpp>

#include "api/json_reader.h"
#include "base/status.h"
#include "controlplane/service_types.h"
#include "net/http_types.h"
#include "net/router.h"

namespace tessera::server {

inline net::HttpResponse JsonResponse(int status, const nlohmann::json& body) {
  net::HttpResponse response;
  response.status = status;
  response.body = api::Dump(body) + "\n";
  return response;
}

inline int HttpStatusOf(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return 200;
    case StatusCode::kInvalidArgument: return 400;
    case StatusCode::kUnauthenticated: return 401;
    case StatusCode::kPermissionDenied: return 403;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kFailedPrecondition: return 409;
    case StatusCode::kExpired: return 410;
    case StatusCode::kInfeasible: return 422;
    case StatusCode::kResourceExhausted: return 429;
    case StatusCode::kInternal: return 500;
  }
  return 500;
}

inline net::HttpResponse StatusResponse(const Status& status) {
  net::HttpResponse response = net::ErrorResponse(HttpStatusOf(status.code()), status.message());
  if (status.code() == StatusCode::kUnauthenticated) response.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"tessera\"");
  if (status.code() == StatusCode::kResourceExhausted) {
    response.headers.emplace_back("Retry-After", std::to_string(std::max<std::int64_t>(1, status.retry_after_s())));
  }
  return response;
}

// The answer to a JSON result: `ok_status` with its body, or the error.
inline net::HttpResponse JsonAnswer(const Result<nlohmann::json>& result, int ok_status = 200) {
  return result.ok() ? JsonResponse(ok_status, *result) : StatusResponse(result.status());
}

// A completion for a service that answers later: its result, written by
// `write`, or its error, is the exchange's reply.
template <typename T, typename Write>
controlplane::Done<T> ReplyWith(const net::ExchangePtr& exchange, Write write) {
  return [exchange, write = std::move(write)](Result<T> result) {
    exchange->Reply(result.ok() ? write(std::move(*result)) : StatusResponse(result.status()));
  };
}
inline controlplane::Done<nlohmann::json> ReplyJson(const net::ExchangePtr& exchange, int ok_status = 200) {
  return ReplyWith<nlohmann::json>(exchange, [ok_status](nlohmann::json body) { return JsonResponse(ok_status, body); });
}

}  // namespace tessera::server

// How the control plane turns values and Statuses into HTTP answers, so that
// every route maps errors to the same codes:
//   InvalidArgument 400, NotFound 404, Infeasible 422, FailedPrecondition 409,
//   Internal 500. (A failed store write stops the server: ControlPlane::Commit.)
#pragma once

#include <nlohmann/json.hpp>

#include "api/json_reader.h"
#include "base/status.h"
#include "net/http_types.h"
#include "net/router.h"

namespace tessera::controlplane {

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
    case StatusCode::kNotFound: return 404;
    case StatusCode::kInfeasible: return 422;
    case StatusCode::kFailedPrecondition: return 409;
    case StatusCode::kInternal: return 500;
  }
  return 500;
}

inline net::HttpResponse StatusResponse(const Status& status) {
  return net::ErrorResponse(HttpStatusOf(status.code()), status.message());
}

}  // namespace tessera::controlplane

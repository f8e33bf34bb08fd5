// Reading the query and path parameters every route shares, with one error
// wording: "limit: 'x' is not a non-negative integer".
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/json_reader.h"
#include "base/status.h"
#include "controlplane/service_types.h"
#include "net/http_types.h"

namespace tessera::server {

// A non-negative integer (ids, offsets, revisions, limits).
Result<std::int64_t> ParseCount(std::string_view field, const std::string& text);
// A job as a path names it: "12", or an array element "12[3]".
Result<controlplane::JobRef> ParseJobRef(const std::string& text);
// The query parameter `name` as a count; `fallback` when it is absent.
Result<std::int64_t> QueryCount(const net::HttpRequest& request, std::string_view name, std::int64_t fallback);
// The query parameter `name`, one of `choices` (the first when absent).
Result<std::string> QueryChoice(const net::HttpRequest& request, std::string_view name, const std::vector<std::string>& choices);
// The body as a JSON object whose keys are all in `allowed` (an empty body is
// {}); it reads from `storage`, which holds the parsed body.
Result<api::JsonObject> ReadObjectBody(const net::HttpRequest& request, nlohmann::json& storage,
                                       std::initializer_list<std::string_view> allowed);
// A long poll's wait in seconds ("2.5"), between 0 and 60; empty is 0.
Result<std::chrono::milliseconds> ParseWait(const std::string& text);

}  // namespace tessera::server

#include "server/request_params.h"

#include <charconv>
#include <cmath>

namespace tessera::server {

Result<std::int64_t> ParseCount(std::string_view field, const std::string& text) {
  std::int64_t value = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 0) {
    return InvalidArgument(std::string(field) + ": '" + text + "' is not a non-negative integer");
  }
  return value;
}

Result<controlplane::JobRef> ParseJobRef(const std::string& text) {
  controlplane::JobRef ref;
  const std::size_t open = text.find('[');
  const Result<std::int64_t> id = ParseCount("job", text.substr(0, open));
  const bool element = open != std::string::npos && text.size() > open + 2 && text.back() == ']';
  const Result<std::int64_t> index =
      element ? ParseCount("job", text.substr(open + 1, text.size() - open - 2)) : Result<std::int64_t>(std::int64_t{0});
  if (!id.ok() || (open != std::string::npos && (!element || !index.ok() || *index > model::kMaxArrayIndex))) {
    return InvalidArgument("job: '" + text + "' is not a job id (12) or an array element (12[3])");
  }
  ref.id = *id;
  if (element) ref.index = static_cast<std::int32_t>(*index);
  return ref;
}

Result<std::int64_t> QueryCount(const net::HttpRequest& request, std::string_view name, std::int64_t fallback) {
  const std::string text = request.Query(name);
  return text.empty() ? Result<std::int64_t>(fallback) : ParseCount(name, text);
}

Result<std::string> QueryChoice(const net::HttpRequest& request, std::string_view name, const std::vector<std::string>& choices) {
  const std::string value = request.Query(name, choices.front());
  for (const std::string& choice : choices) {
    if (value == choice) return value;
  }
  std::string listed;
  for (const std::string& choice : choices) listed += (listed.empty() ? "" : ", ") + choice;
  return InvalidArgument(std::string(name) + ": '" + value + "' is not one of: " + listed);
}

Result<api::JsonObject> ReadObjectBody(const net::HttpRequest& request, nlohmann::json& storage,
                                       std::initializer_list<std::string_view> allowed) {
  Result<nlohmann::json> body = api::ParseJsonBody(request.body.empty() ? "{}" : request.body);
  if (!body.ok()) return body.status();
  storage = std::move(*body);
  return api::JsonObject::Read(storage, "", allowed);
}

Result<std::chrono::milliseconds> ParseWait(const std::string& text) {
  if (text.empty()) return std::chrono::milliseconds(0);
  double seconds = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(seconds) || seconds < 0 || seconds > 60) {
    return InvalidArgument("wait: '" + text + "' is not a number of seconds between 0 and 60");
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
}

}  // namespace tessera::server

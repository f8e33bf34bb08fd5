#include "api/json_reader.h"

namespace tessera::api {
namespace {

std::string Show(const nlohmann::json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

}  // namespace

std::string Dump(const nlohmann::json& value) { return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

Result<nlohmann::json> ParseJsonBody(std::string_view text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // A syntax error, or a number too large for a double (out_of_range.406,
    // which the fuzzer found crashing the server); what() reads
    // "[json.exception.parse_error.101] parse error at line 1, column 5: ...".
    const std::string what = e.what();
    const std::size_t start = what.find("] ");
    return InvalidArgument("malformed JSON: " + (start == std::string::npos ? what : what.substr(start + 2)));
  }
}

Result<JsonObject> JsonObject::Read(const nlohmann::json& value, std::string path,
                                    std::initializer_list<std::string_view> allowed,
                                    std::initializer_list<std::string_view> required) {
  const std::string where = path.empty() ? "body" : path;
  if (!value.is_object()) return InvalidArgument(where + ": expected an object, got " + Show(value));
  std::string allowed_list;
  for (std::string_view key : allowed) allowed_list += (allowed_list.empty() ? "" : ", ") + std::string(key);
  for (const auto& [key, item] : value.items()) {
    bool known = false;
    for (std::string_view k : allowed) known = known || k == key;
    if (!known) {
      return InvalidArgument((path.empty() ? "" : path + ".") + key + ": unknown field; allowed: " + allowed_list);
    }
  }
  for (std::string_view key : required) {
    if (!value.contains(key)) {
      return InvalidArgument((path.empty() ? "" : path + ".") + std::string(key) + ": required field is missing");
    }
  }
  return JsonObject(&value, std::move(path));
}

Status JsonObject::Error(std::string_view key, std::string_view reason) const {
  return InvalidArgument(Path(key) + ": " + std::string(reason));
}

Status JsonObject::ReadString(std::string_view key, std::string* out) const {
  if (!Has(key)) return Status::Ok();
  const nlohmann::json& v = Raw(key);
  if (!v.is_string()) return Error(key, "expected a string, got " + Show(v));
  *out = v.get<std::string>();
  return Status::Ok();
}

Status JsonObject::ReadInt(std::string_view key, std::int64_t* out, std::int64_t min, std::int64_t max) const {
  if (!Has(key)) return Status::Ok();
  const nlohmann::json& v = Raw(key);
  if (!v.is_number_integer()) return Error(key, "expected an integer, got " + Show(v));
  const bool huge = v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max);
  const std::int64_t n = huge ? max : v.get<std::int64_t>();
  if (huge || n < min || n > max) {
    return Error(key, "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " + Show(v));
  }
  *out = n;
  return Status::Ok();
}

Status JsonObject::ReadInt32(std::string_view key, std::int32_t* out, std::int64_t min, std::int64_t max) const {
  std::int64_t n = *out;
  TESSERA_RETURN_IF_ERROR(ReadInt(key, &n, min, max));
  *out = static_cast<std::int32_t>(n);  // within [min, max], which the caller sized for int32
  return Status::Ok();
}

Status JsonObject::ReadNumber(std::string_view key, double* out) const {
  if (!Has(key)) return Status::Ok();
  const nlohmann::json& v = Raw(key);
  if (!v.is_number()) return Error(key, "expected a number, got " + Show(v));
  *out = v.get<double>();
  return Status::Ok();
}

Status JsonObject::ReadBool(std::string_view key, bool* out) const {
  if (!Has(key)) return Status::Ok();
  const nlohmann::json& v = Raw(key);
  if (!v.is_boolean()) return Error(key, "expected true or false, got " + Show(v));
  *out = v.get<bool>();
  return Status::Ok();
}

Status JsonObject::ReadStringList(std::string_view key, std::vector<std::string>* out) const {
  if (!Has(key)) return Status::Ok();
  const nlohmann::json& v = Raw(key);
  if (!v.is_array()) return Error(key, "expected a list of strings, got " + Show(v));
  out->clear();
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) return InvalidArgument(Path(key) + "[" + std::to_string(i) + "]: expected a string, got " + Show(v[i]));
    out->push_back(v[i].get<std::string>());
  }
  return Status::Ok();
}

Result<std::vector<std::pair<std::string, const nlohmann::json*>>> JsonObject::Items(std::string_view key) const {
  std::vector<std::pair<std::string, const nlohmann::json*>> items;
  if (!Has(key)) return items;
  const nlohmann::json& v = Raw(key);
  if (!v.is_array()) return Error(key, "expected a list, got " + Show(v));
  for (std::size_t i = 0; i < v.size(); ++i) items.emplace_back(Path(key) + "[" + std::to_string(i) + "]", &v[i]);
  return items;
}

}  // namespace tessera::api

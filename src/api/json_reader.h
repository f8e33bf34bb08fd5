// Strict reading of JSON request bodies: an object's keys are checked against
// the ones its type allows, and every error names the field path and what was
// wrong ("tasks[2].exitCode: expected an integer, got \"x\""), as the YAML
// readers of src/spec do for specs.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace tessera::api {

// Parses a body; a syntax error says where (byte offset) and why.
Result<nlohmann::json> ParseJsonBody(std::string_view text);
// Compact JSON text. Strings from users (names, headers, paths) may hold
// bytes that are not UTF-8: they are replaced (U+FFFD), never thrown.
std::string Dump(const nlohmann::json& value);

class JsonObject {
 public:
  // Fails unless `value` is an object whose keys are all in `allowed` and
  // include all of `required`.
  static Result<JsonObject> Read(const nlohmann::json& value, std::string path,
                                 std::initializer_list<std::string_view> allowed,
                                 std::initializer_list<std::string_view> required = {});

  bool Has(std::string_view key) const { return value_->contains(key); }
  const nlohmann::json& Raw(std::string_view key) const { return (*value_)[std::string(key)]; }
  std::string Path(std::string_view key) const { return path_.empty() ? std::string(key) : path_ + "." + std::string(key); }

  // Optional fields: absent leaves *out unchanged.
  Status ReadString(std::string_view key, std::string* out) const;
  Status ReadInt(std::string_view key, std::int64_t* out, std::int64_t min, std::int64_t max) const;
  Status ReadInt32(std::string_view key, std::int32_t* out, std::int64_t min, std::int64_t max) const;
  Status ReadNumber(std::string_view key, double* out) const;
  Status ReadBool(std::string_view key, bool* out) const;
  Status ReadStringList(std::string_view key, std::vector<std::string>* out) const;
  // The items of an array field (absent: none), each with its path "key[i]".
  Result<std::vector<std::pair<std::string, const nlohmann::json*>>> Items(std::string_view key) const;

  Status Error(std::string_view key, std::string_view reason) const;

 private:
  JsonObject(const nlohmann::json* value, std::string path) : value_(value), path_(std::move(path)) {}
  const nlohmann::json* value_;
  std::string path_;
};

}  // namespace tessera::api

// Strict YAML reading, shared by the Cluster, QueueTree and Job parsers.
//
// yaml-cpp is lenient: it converts what it can and throws when it cannot. The
// spec layer wants the opposite: every value has one type, every mapping a fixed
// set of keys, and every error says where it is and what to do about it:
//   jobs.yaml:9:20: spec.tasks[0].resources.gpus: expected a quantity ...
//   jobs.yaml:8:9: spec.tasks[0].resources.gpu: unknown field 'gpu'; allowed: gpus, ...
// That is "SOURCE:LINE:COL: FIELD.PATH: reason", with 1-based line and column.
//
// A YamlValue is one node plus its source name and field path; YamlMap checks a
// mapping's keys (unknown, duplicate, missing) and reads its fields with the
// typed readers. All yaml-cpp exceptions stop here: LoadYamlDocuments turns
// syntax errors into InvalidArgument, and CatchYaml guards whole parsers.
//
// Used by the spec parsers and by the scenario format (src/simkit); the spec
// layer's public headers do not expose yaml-cpp.
#pragma once

#include <yaml-cpp/yaml.h>

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace tessera::spec {

inline constexpr std::string_view kApiVersion = "tessera/v1";

// "SOURCE:LINE:COL" (1-based), or just "SOURCE" when the mark is unknown.
std::string FormatWhere(std::string_view source, const YAML::Mark& mark);

// A DNS label as Kubernetes names objects: lowercase letters, digits, '-' and
// '.', at most 63 characters, starting and ending with a letter or digit.
bool IsDnsLabel(std::string_view name);

// One node of a document, where it came from, and the path that leads to it.
// Copies are cheap: YAML::Node is a handle and `source` is not owned.
class YamlValue {
 public:
  YamlValue(YAML::Node node, std::string_view source, std::string path, YAML::Mark mark);
  YamlValue(const YamlValue&) = default;
  YamlValue(YamlValue&&) = default;
  // Assignment rebinds the handle. YAML::Node's own operator= would instead
  // overwrite the node it refers to, corrupting the document being read.
  YamlValue& operator=(const YamlValue& other);
  YamlValue& operator=(YamlValue&& other) { return *this = static_cast<const YamlValue&>(other); }
  ~YamlValue() = default;

  const YAML::Node& node() const { return node_; }
  std::string_view source() const { return source_; }
  const std::string& path() const { return path_; }  // "" for a document root
  const YAML::Mark& mark() const { return mark_; }

  // "SOURCE:LINE:COL: PATH: reason" (the path is left out for a document root).
  Status Error(std::string_view reason) const;
  Status Error(StatusCode code, std::string_view reason) const;

  // The path of a field / list item below this value: "spec" + "tasks" ->
  // "spec.tasks", then "spec.tasks[0]".
  std::string FieldPath(std::string_view key) const;
  std::string ItemPath(std::size_t index) const;

  // Typed readers. Each fails with Error(...) naming what was expected and what
  // was found ("expected an integer, got 'abc'").
  Result<std::string> String() const;           // any non-empty scalar
  Result<std::string> DnsLabel() const;         // String() that is a DNS label
  Result<std::int64_t> Int(std::int64_t min, std::int64_t max) const;
  Result<double> Number() const;                // finite
  Result<bool> Bool() const;                    // true / false
  Result<std::int64_t> Bytes() const;           // ParseBytes: 80Gi, 512Mi, 40G
  Result<std::int64_t> Milli() const;           // ParseMilli: 8, 0.25, "250m"
  Result<Seconds> Duration() const;             // ParseDuration: 6h, 90m, 1h30m
  Result<std::vector<YamlValue>> Items() const;  // the items of a list
  Result<std::vector<std::string>> StringList() const;

  // What the value is, for messages: "'abc'", "a list", "a mapping", "nothing".
  std::string Describe() const;

 private:
  Result<std::string> Scalar(std::string_view expected) const;  // plain or quoted text

  YAML::Node node_;
  std::string_view source_;
  std::string path_;
  YAML::Mark mark_;
};

// A mapping whose keys are known: Read fails on anything else than a mapping and
// on a key written twice; Allow on keys outside a list; Need on missing keys.
class YamlMap {
 public:
  static Result<YamlMap> Read(const YamlValue& value);
  // Read, then Allow(allowed), then Need(required): the usual strict mapping.
  static Result<YamlMap> Read(const YamlValue& value, std::initializer_list<std::string_view> allowed,
                              std::initializer_list<std::string_view> required = {});

  // "unknown field 'gpu'; allowed: gpus, gpuMemory, cpus, memory, gpuModel"
  Status Allow(std::initializer_list<std::string_view> allowed) const;
  // "required field is missing", at the mapping's position.
  Status Need(std::initializer_list<std::string_view> required) const;

  const YamlValue& value() const { return value_; }
  std::vector<std::string> Keys() const;  // in the order written
  bool Has(std::string_view key) const { return Find(key).has_value(); }
  std::optional<YamlValue> Find(std::string_view key) const;
  Result<YamlValue> Get(std::string_view key) const;  // Find, or the missing-field error

  // Optional fields: when `key` is present, read it into *out; when absent,
  // leave *out as it is (its default).
  Status ReadString(std::string_view key, std::string* out) const;
  Status ReadDnsLabel(std::string_view key, std::string* out) const;
  Status ReadNumber(std::string_view key, double* out) const;
  Status ReadBool(std::string_view key, bool* out) const;
  Status ReadBytes(std::string_view key, std::int64_t* out) const;
  Status ReadMilli(std::string_view key, std::int64_t* out) const;
  Status ReadDuration(std::string_view key, Seconds* out) const;
  Status ReadStringList(std::string_view key, std::vector<std::string>* out) const;
  template <std::integral T>
  Status ReadInt(std::string_view key, T* out, std::int64_t min, std::int64_t max) const {
    const std::optional<YamlValue> field = Find(key);
    if (!field) return Status::Ok();
    Result<std::int64_t> number = field->Int(min, max);
    if (!number.ok()) return number.status();
    *out = static_cast<T>(*number);  // in [min, max], which the caller sized for T
    return Status::Ok();
  }

 private:
  struct Entry {
    std::string key;
    YAML::Mark key_mark;
    YamlValue value;
  };
  explicit YamlMap(YamlValue value) : value_(std::move(value)) {}

  YamlValue value_;
  std::vector<Entry> entries_;  // in document order
};

// Parses every document of a YAML stream; empty documents are skipped. Syntax
// errors become InvalidArgument "SOURCE:LINE:COL: malformed YAML: <reason>".
Result<std::vector<YamlValue>> LoadYamlDocuments(std::string_view text, std::string_view source);

// The one document of a single-document file (Cluster, QueueTree).
Result<YamlValue> LoadSingleDocument(std::string_view text, std::string_view source, std::string_view kind);

// Loads the one document of `kind` (Cluster, QueueTree), checks its metadata
// (only `name`), and reads its spec mapping with the given keys.
Result<YamlMap> LoadSingleDocumentSpec(std::string_view text, std::string_view source, std::string_view kind,
                                       std::initializer_list<std::string_view> allowed,
                                       std::initializer_list<std::string_view> required = {});

// Checks a document's apiVersion (tessera/v1) and kind, then its top-level keys
// (apiVersion, kind, metadata, spec; spec required), and returns the mapping.
Result<YamlMap> ReadDocument(const YamlValue& document, std::string_view kind);

// The deepest value along a field path ("spec.tasks[0].resources.gpus") below
// `root`: the field itself when written, else its nearest written ancestor.
// Used to give a position to messages that name a path, such as feasibility's.
YamlValue ResolvePath(const YamlValue& root, std::string_view path);

// Turns a yaml-cpp exception into a Status naming the source and position.
Status YamlExceptionStatus(std::string_view source, const YAML::Exception& e);

// Runs `parse` (returning Result<T> or Status) and converts any yaml-cpp
// exception escaping it, so that none crosses the spec layer's boundary.
template <typename F>
auto CatchYaml(std::string_view source, F&& parse) -> decltype(parse()) {
  try {
    return std::forward<F>(parse)();
  } catch (const YAML::Exception& e) {
    return YamlExceptionStatus(source, e);
  }
}

}  // namespace tessera::spec

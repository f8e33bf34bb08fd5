#include "spec/yaml_util.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "spec/yaml_syntax.h"

#include "base/quantity.h"

namespace tessera::spec {
namespace {

// A scalar written in quotes is a string to YAML: "5" is not the number 5.
bool Quoted(const YAML::Node& node) { return node.Tag() == "!"; }

std::string JoinKeys(std::initializer_list<std::string_view> keys) {
  std::string text;
  for (std::string_view key : keys) {
    if (!text.empty()) text += ", ";
    text += key;
  }
  return text;
}

// Adapts a quantity parser's Result to the value's position and path.
template <typename T>
Result<T> AtValue(const YamlValue& value, Result<T> parsed) {
  if (!parsed.ok()) return value.Error(parsed.status().message());
  return parsed;
}

template <typename T>
Status Assign(Result<T> result, T* out) {
  if (!result.ok()) return result.status();
  *out = std::move(*result);
  return Status::Ok();
}

YamlValue ChildValue(const YamlValue& parent, const YAML::Node& node, std::string path,
                     const YAML::Mark& fallback) {
  // A field written without a value ("walltime:") is null; yaml-cpp marks it
  // where the next token starts, so point at its key instead.
  const YAML::Mark mark = node.IsNull() || node.Mark().is_null() ? fallback : node.Mark();
  return YamlValue(node, parent.source(), std::move(path), mark);
}

}  // namespace

std::string FormatWhere(std::string_view source, const YAML::Mark& mark) {
  std::string where(source);
  if (!mark.is_null()) where += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  return where;
}

bool IsDnsLabel(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  for (char c : name) {
    if (!alnum(c) && c != '-' && c != '.') return false;
  }
  return alnum(name.front()) && alnum(name.back());
}

// --- YamlValue ---------------------------------------------------------------

YamlValue::YamlValue(YAML::Node node, std::string_view source, std::string path, YAML::Mark mark)
    : node_(std::move(node)), source_(source), path_(std::move(path)), mark_(mark) {}

YamlValue& YamlValue::operator=(const YamlValue& other) {
  node_.reset(other.node_);
  source_ = other.source_;
  path_ = other.path_;
  mark_ = other.mark_;
  return *this;
}

Status YamlValue::Error(std::string_view reason) const { return Error(StatusCode::kInvalidArgument, reason); }

Status YamlValue::Error(StatusCode code, std::string_view reason) const {
  std::string message = FormatWhere(source_, mark_) + ": ";
  if (!path_.empty()) message += path_ + ": ";
  message += reason;
  return Status(code, std::move(message));
}

std::string YamlValue::FieldPath(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

std::string YamlValue::ItemPath(std::size_t index) const { return path_ + "[" + std::to_string(index) + "]"; }

std::string YamlValue::Describe() const {
  switch (node_.Type()) {
    case YAML::NodeType::Scalar:
      if (node_.Scalar().empty()) return "an empty string";
      return (Quoted(node_) ? "the string '" : "'") + node_.Scalar() + "'";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: break;
  }
  return "nothing";
}

Result<std::string> YamlValue::Scalar(std::string_view expected) const {
  if (!node_.IsScalar() || node_.Scalar().empty()) {
    return Error("expected " + std::string(expected) + ", got " + Describe());
  }
  return node_.Scalar();
}

Result<std::string> YamlValue::String() const { return Scalar("a string"); }

Result<std::string> YamlValue::DnsLabel() const {
  Result<std::string> name = String();
  if (name.ok() && !IsDnsLabel(*name)) {
    return Error("'" + *name +
                 "' is not a valid name: use lowercase letters, digits, '-' and '.', at most 63 characters, "
                 "starting and ending with a letter or digit");
  }
  return name;
}

Result<std::int64_t> YamlValue::Int(std::int64_t min, std::int64_t max) const {
  Result<std::string> text = Scalar("an integer");
  if (!text.ok()) return text.status();
  std::int64_t number = 0;
  const char* end = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), end, number);
  if (Quoted(node_) || ec != std::errc() || ptr != end) return Error("expected an integer, got " + Describe());
  if (number < min || number > max) {
    std::string range;
    if (min == std::numeric_limits<std::int64_t>::min() || max == std::numeric_limits<std::int64_t>::max()) {
      range = max == std::numeric_limits<std::int64_t>::max() ? "at least " + std::to_string(min)
                                                               : "at most " + std::to_string(max);
    } else {
      range = "between " + std::to_string(min) + " and " + std::to_string(max);
    }
    return Error("must be " + range + ", got " + std::to_string(number));
  }
  return number;
}

Result<double> YamlValue::Number() const {
  Result<std::string> text = Scalar("a number");
  if (!text.ok()) return text.status();
  double number = 0;
  const char* end = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), end, number);
  if (Quoted(node_) || ec != std::errc() || ptr != end || !std::isfinite(number)) {
    return Error("expected a number, got " + Describe());
  }
  return number;
}

Result<bool> YamlValue::Bool() const {
  Result<std::string> text = Scalar("true or false");
  if (!text.ok()) return text.status();
  if (!Quoted(node_)) {
    if (*text == "true" || *text == "True" || *text == "TRUE") return true;
    if (*text == "false" || *text == "False" || *text == "FALSE") return false;
  }
  return Error("expected true or false, got " + Describe());
}

Result<std::int64_t> YamlValue::Bytes() const {
  Result<std::string> text = Scalar("a memory size (e.g. 80Gi)");
  if (!text.ok()) return text.status();
  return AtValue(*this, ParseBytes(*text));
}

Result<std::int64_t> YamlValue::Milli() const {
  Result<std::string> text = Scalar("a quantity (e.g. 2, 0.25 or 250m)");
  if (!text.ok()) return text.status();
  return AtValue(*this, ParseMilli(*text));
}

Result<Seconds> YamlValue::Duration() const {
  Result<std::string> text = Scalar("a duration (e.g. 6h, 90m or 1h30m)");
  if (!text.ok()) return text.status();
  return AtValue(*this, ParseDuration(*text));
}

Result<std::vector<YamlValue>> YamlValue::Items() const {
  if (!node_.IsSequence()) return Error("expected a list, got " + Describe());
  std::vector<YamlValue> items;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const YAML::Node item = *it;
    items.push_back(ChildValue(*this, item, ItemPath(items.size()), mark_));
  }
  return items;
}

Result<std::vector<std::string>> YamlValue::StringList() const {
  if (!node_.IsSequence()) return Error("expected a list of strings, got " + Describe());
  Result<std::vector<YamlValue>> items = Items();
  if (!items.ok()) return items.status();
  std::vector<std::string> strings;
  for (const YamlValue& item : *items) {
    Result<std::string> text = item.String();
    if (!text.ok()) return text.status();
    strings.push_back(std::move(*text));
  }
  return strings;
}

// --- YamlMap -----------------------------------------------------------------

std::vector<std::string> YamlMap::Keys() const {
  std::vector<std::string> keys;
  for (const Entry& entry : entries_) keys.push_back(entry.key);
  return keys;
}

Result<YamlMap> YamlMap::Read(const YamlValue& value) {
  if (!value.node().IsMap()) return value.Error("expected a mapping, got " + value.Describe());
  YamlMap map(value);
  for (auto it = value.node().begin(); it != value.node().end(); ++it) {
    // Copies: it->first lives in a proxy that dies with the expression.
    const YAML::Node key = it->first;
    const YAML::Node field = it->second;
    if (!key.IsScalar()) {
      return YamlValue(key, value.source(), value.path(), key.Mark()).Error("field names must be plain words");
    }
    const std::string& name = key.Scalar();
    for (const Entry& earlier : map.entries_) {
      if (earlier.key == name) {
        return YamlValue(key, value.source(), value.FieldPath(name), key.Mark())
            .Error("field '" + name + "' is written twice (first at " + FormatWhere(value.source(), earlier.key_mark) +
                   ")");
      }
    }
    map.entries_.push_back(Entry{name, key.Mark(), ChildValue(value, field, value.FieldPath(name), key.Mark())});
  }
  return map;
}

Result<YamlMap> YamlMap::Read(const YamlValue& value, std::initializer_list<std::string_view> allowed,
                              std::initializer_list<std::string_view> required) {
  Result<YamlMap> map = Read(value);
  if (!map.ok()) return map;
  TESSERA_RETURN_IF_ERROR(map->Allow(allowed));
  TESSERA_RETURN_IF_ERROR(map->Need(required));
  return map;
}

Status YamlMap::Allow(std::initializer_list<std::string_view> allowed) const {
  for (const Entry& entry : entries_) {
    bool known = false;
    for (std::string_view key : allowed) known = known || key == entry.key;
    if (!known) {
      // Point at the key: its value may be far below it.
      return YamlValue(entry.value.node(), value_.source(), entry.value.path(), entry.key_mark)
          .Error("unknown field '" + entry.key + "'; allowed: " + JoinKeys(allowed));
    }
  }
  return Status::Ok();
}

Status YamlMap::Need(std::initializer_list<std::string_view> required) const {
  for (std::string_view key : required) {
    if (!Has(key)) {
      return YamlValue(value_.node(), value_.source(), value_.FieldPath(key), value_.mark())
          .Error("required field is missing");
    }
  }
  return Status::Ok();
}

std::optional<YamlValue> YamlMap::Find(std::string_view key) const {
  for (const Entry& entry : entries_) {
    if (entry.key == key) return entry.value;
  }
  return std::nullopt;
}

Result<YamlValue> YamlMap::Get(std::string_view key) const {
  if (std::optional<YamlValue> field = Find(key)) return *field;
  return YamlValue(value_.node(), value_.source(), value_.FieldPath(key), value_.mark())
      .Error("required field is missing");
}

Status YamlMap::ReadString(std::string_view key, std::string* out) const {
  const std::optional<YamlValue> field = Find(key);
  return field ? Assign(field->String(), out) : Status::Ok();
}

Status YamlMap::ReadDnsLabel(std::string_view key, std::string* out) const {
  const std::optional<YamlValue> field = Find(key);
  return field ? Assign(field->DnsLabel(), out) : Status::Ok();
}

Status YamlMap::ReadNumber(std::string_view key, double* out) const {
  const std::optional<YamlValue> field = Find(key);
  return field ? Assign(field->Number(), out) : Status::Ok();
}

Status YamlMap::ReadBool(std::string_view key, bool* out) const {
  const std::optional<YamlValue> field = Find(key);
  return field ? Assign(field->Bool(), out) : Status::Ok();
}

Status YamlMap::ReadBytes(std::string_view key, std::int64_t* out) const {
  const std::optional<YamlValue> field = Find(key);
  return field ? Assign(field->Bytes(), out) : Status::Ok();
}

Status YamlMap::ReadMilli(std::string_view key, std::int64_t* out) const {
  const std::optional<YamlValue> field = Find(key);
  return field ? Assign(field->Milli(), out) : Status::Ok();
}

Status YamlMap::ReadDuration(std::string_view key, Seconds* out) const {
  const std::optional<YamlValue> field = Find(key);
  return field ? Assign(field->Duration(), out) : Status::Ok();
}

Status YamlMap::ReadStringList(std::string_view key, std::vector<std::string>* out) const {
  const std::optional<YamlValue> field = Find(key);
  return field ? Assign(field->StringList(), out) : Status::Ok();
}

// --- documents -----------------------------------------------------------------

Status YamlExceptionStatus(std::string_view source, const YAML::Exception& e) {
  const bool syntax = dynamic_cast<const YAML::ParserException*>(&e) != nullptr;
  return InvalidArgument(FormatWhere(source, e.mark) + ": " + (syntax ? "malformed YAML: " : "") + e.msg);
}

Result<std::vector<YamlValue>> LoadYamlDocuments(std::string_view text, std::string_view source) {
  Result<std::string> checked = PrepareYaml(text, source);  // nothing malformed reaches yaml-cpp (yaml_syntax.h)
  if (!checked.ok()) return checked.status();
  std::vector<YAML::Node> nodes;
  try {
    nodes = YAML::LoadAll(*checked);
  } catch (const YAML::Exception& e) {
    return YamlExceptionStatus(source, e);
  }
  std::vector<YamlValue> documents;
  for (YAML::Node& node : nodes) {
    if (node.IsNull()) continue;  // "---" with nothing (or only comments) after it
    const YAML::Mark mark = node.Mark();
    documents.emplace_back(std::move(node), source, "", mark);
  }
  return documents;
}

Result<YamlValue> LoadSingleDocument(std::string_view text, std::string_view source, std::string_view kind) {
  Result<std::vector<YamlValue>> documents = LoadYamlDocuments(text, source);
  if (!documents.ok()) return documents.status();
  if (documents->empty()) return InvalidArgument(std::string(source) + ": no " + std::string(kind) + " document found");
  if (documents->size() > 1) {
    return (*documents)[1].Error("expected one " + std::string(kind) + " document, found " +
                                 std::to_string(documents->size()));
  }
  return std::move((*documents)[0]);
}

Result<YamlMap> ReadDocument(const YamlValue& document, std::string_view kind) {
  Result<YamlMap> map = YamlMap::Read(document);
  if (!map.ok()) return map;
  // The header first: a document of another kind has other fields, and saying
  // so is more useful than listing them as unknown.
  TESSERA_RETURN_IF_ERROR(map->Need({"apiVersion", "kind"}));
  Result<std::string> api_version = map->Get("apiVersion")->String();
  if (!api_version.ok()) return api_version.status();
  if (*api_version != kApiVersion) {
    return map->Get("apiVersion")
        ->Error("expected '" + std::string(kApiVersion) + "', got '" + *api_version + "'");
  }
  Result<std::string> got_kind = map->Get("kind")->String();
  if (!got_kind.ok()) return got_kind.status();
  if (*got_kind != kind) {
    return map->Get("kind")->Error("expected a " + std::string(kind) + " document, got kind '" + *got_kind + "'");
  }
  TESSERA_RETURN_IF_ERROR(map->Allow({"apiVersion", "kind", "metadata", "spec"}));
  TESSERA_RETURN_IF_ERROR(map->Need({"spec"}));
  return map;
}

YamlValue ResolvePath(const YamlValue& root, std::string_view path) {
  YamlValue current = root;
  std::size_t pos = 0;
  while (pos < path.size()) {
    std::optional<YamlValue> next;
    if (path[pos] == '[') {
      const std::size_t close = path.find(']', pos);
      if (close == std::string_view::npos) break;
      std::size_t index = 0;
      const auto [ptr, ec] = std::from_chars(path.data() + pos + 1, path.data() + close, index);
      if (ec != std::errc() || ptr != path.data() + close) break;
      Result<std::vector<YamlValue>> items = current.Items();
      if (items.ok() && index < items->size()) next = (*items)[index];
      pos = close + 1;
    } else {
      if (path[pos] == '.') ++pos;
      const std::size_t end = std::min(path.find_first_of(".[", pos), path.size());
      Result<YamlMap> map = YamlMap::Read(current);
      if (map.ok()) next = map->Find(path.substr(pos, end - pos));
      pos = end;
    }
    if (!next) break;
    current = std::move(*next);
  }
  return current;
}

Result<YamlMap> LoadSingleDocumentSpec(std::string_view text, std::string_view source, std::string_view kind,
                                       std::initializer_list<std::string_view> allowed,
                                       std::initializer_list<std::string_view> required) {
  Result<YamlValue> document = LoadSingleDocument(text, source, kind);
  if (!document.ok()) return document.status();
  Result<YamlMap> top = ReadDocument(*document, kind);
  if (!top.ok()) return top.status();
  if (const std::optional<YamlValue> metadata = top->Find("metadata")) {
    Result<YamlMap> meta = YamlMap::Read(*metadata, {"name"});
    if (!meta.ok()) return meta.status();
    std::string name;
    TESSERA_RETURN_IF_ERROR(meta->ReadString("name", &name));
  }
  Result<YamlValue> spec = top->Get("spec");
  if (!spec.ok()) return spec.status();
  return YamlMap::Read(*spec, allowed, required);
}

}  // namespace tessera::spec

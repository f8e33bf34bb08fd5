#include "spec/json_document.h"

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::spec {
namespace {

// Builds the tree bottom-up: a container is attached to its parent when it
// closes (yaml-cpp's Node assignment rebinds handles, so attaching an open
// container and filling it later is not safe).
class YamlBuilder : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::optional<YAML::Node> root;

  bool null() override { return Add(YAML::Node(YAML::NodeType::Null)); }
  bool boolean(bool value) override { return Add(YAML::Node(value ? "true" : "false")); }
  bool number_integer(number_integer_t value) override { return Add(YAML::Node(std::to_string(value))); }
  bool number_unsigned(number_unsigned_t value) override { return Add(YAML::Node(std::to_string(value))); }
  // The number as written: "0.50" stays "0.50", as YAML would read it.
  bool number_float(number_float_t, const string_t& text) override { return Add(YAML::Node(text)); }
  bool string(string_t& value) override {
    YAML::Node node(value);
    node.SetTag("!");  // quoted: "5" is a string, not the number 5 (yaml_util.cc)
    return Add(std::move(node));
  }
  bool binary(binary_t&) override { return false; }
  bool start_object(std::size_t) override {
    open_.push_back({YAML::Node(YAML::NodeType::Map), {}, {}});
    return true;
  }
  bool key(string_t& name) override {
    Open& map = open_.back();
    map.key = name;
    return map.keys.insert(name).second;  // a key written twice: the YAML path names it
  }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override {
    open_.push_back({YAML::Node(YAML::NodeType::Sequence), {}, {}});
    return true;
  }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  struct Open {
    YAML::Node node;
    std::string key;             // the key the next value belongs to (mappings)
    std::set<std::string> keys;  // the keys seen so far (mappings)
  };

  bool Add(YAML::Node value) {
    if (open_.empty()) return false;  // a scalar alone is not a document
    Open& parent = open_.back();
    if (parent.node.IsMap()) {
      parent.node.force_insert(parent.key, value);
    } else {
      parent.node.push_back(value);
    }
    return true;
  }

  bool Close() {
    YAML::Node done = open_.back().node;
    open_.pop_back();
    if (!open_.empty()) return Add(std::move(done));
    root = std::move(done);
    return true;
  }

  std::vector<Open> open_;
};

}  // namespace

std::optional<YamlValue> ReadJsonObject(std::string_view text, std::string_view source) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || text[first] != '{') return std::nullopt;
  YamlBuilder builder;
  if (!nlohmann::json::sax_parse(text, &builder) || !builder.root) return std::nullopt;
  return YamlValue(*builder.root, source, "", YAML::Mark::null_mark());
}

}  // namespace tessera::spec

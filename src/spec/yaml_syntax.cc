#include "spec/yaml_syntax.h"

#include <yaml.h>

#include <string>

namespace tessera::spec {

Status CheckYamlSyntax(std::string_view text, std::string_view source) {
  yaml_parser_t parser;
  if (yaml_parser_initialize(&parser) == 0) return Internal("libyaml: out of memory");
  yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()), text.size());
  Status status = Status::Ok();
  bool at_document_start = false;
  for (;;) {
    yaml_event_t event;
    if (yaml_parser_parse(&parser, &event) == 0) {
      const std::string reason = parser.problem != nullptr ? parser.problem : "malformed";
      const std::string context = parser.context != nullptr ? std::string(" (") + parser.context + ")" : std::string();
      status = InvalidArgument(std::string(source) + ":" + std::to_string(parser.problem_mark.line + 1) + ":" +
                               std::to_string(parser.problem_mark.column + 1) + ": malformed YAML: " + reason + context);
      break;
    }
    // The node that opens a document must be a collection (every Tessera
    // document is a mapping; a fault file holds lists), or nothing at all
    // ("---" alone): yaml-cpp hangs on some documents whose top is a scalar.
    if (at_document_start && event.type != YAML_MAPPING_START_EVENT && event.type != YAML_SEQUENCE_START_EVENT &&
        !(event.type == YAML_SCALAR_EVENT && event.data.scalar.length == 0)) {
      status = InvalidArgument(std::string(source) + ":" + std::to_string(event.start_mark.line + 1) + ":" +
                               std::to_string(event.start_mark.column + 1) +
                               ": expected a mapping (apiVersion, kind, ...) at the top of the document, got " +
                               (event.type == YAML_SCALAR_EVENT ? "a scalar" : "an alias"));
      yaml_event_delete(&event);
      break;
    }
    at_document_start = event.type == YAML_DOCUMENT_START_EVENT;
    const bool end = event.type == YAML_STREAM_END_EVENT;
    yaml_event_delete(&event);
    if (end) break;
  }
  yaml_parser_delete(&parser);
  return status;
}

Result<std::string> PrepareYaml(std::string_view text, std::string_view source) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\r') {
      out += '\n';
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;  // CRLF
    } else if (c == '\xc2' && i + 1 < text.size() && text[i + 1] == '\x85') {  // NEL
      out += '\n';
      ++i;
    } else if (c == '\xe2' && i + 2 < text.size() && text[i + 1] == '\x80' && (text[i + 2] == '\xa8' || text[i + 2] == '\xa9')) {  // LS, PS
      out += '\n';
      i += 2;
    } else {
      out += c;
    }
  }
  TESSERA_RETURN_IF_ERROR(CheckYamlSyntax(out, source));
  return out;
}

}  // namespace tessera::spec

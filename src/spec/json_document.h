// A JSON object read straight into the YAML node tree the spec parsers walk.
//
// JSON is YAML, and LoadYamlDocuments reads it correctly, but at YAML's pace:
// a libyaml pass to check the syntax, then yaml-cpp's scanner. API clients
// (the CLI's -o json round trips, scripts, the control-plane benchmark) send
// JSON, and on a busy server that parse was the largest cost of a submission.
// nlohmann's SAX parser builds the same tree 2.6 times faster for the
// benchmark's one-task job (spec_job_parse_benchmark).
//
// The values carry no line and column (Mark() is null), so errors found in
// them name the field path only; a caller that wants the position reparses
// with LoadYamlDocuments. Anything but one well-formed JSON object without a
// key written twice gives nullopt: the YAML path reads it, or explains
// precisely what is wrong with it.
#pragma once

#include <optional>
#include <string_view>

#include "spec/yaml_util.h"

namespace tessera::spec {

std::optional<YamlValue> ReadJsonObject(std::string_view text, std::string_view source);

}  // namespace tessera::spec

// A strict syntax check of YAML text with libyaml, before yaml-cpp builds
// the nodes. yaml-cpp 0.7 (Debian 12's) loops forever, taking memory, on a
// ',' in a document whose top is not a block collection: `,`, `"q",`,
// `[1],2`, or a tagged multi-line scalar with a line that starts with ','.
// The fuzzer found them (tests/fuzz). libyaml refuses the malformed ones
// with a line and column, and a document whose top is a scalar is refused
// here (every Tessera document is a mapping; a fault file holds lists), so
// yaml-cpp only sees text on which it answers.
//
// The two libraries must also see the same lines: yaml-cpp takes a lone CR
// (and NEL, U+2028, U+2029) for part of a line where libyaml breaks it, so
// `#\rj: o\n ,` is a mapping to libyaml and, to yaml-cpp, a comment and then
// a ',' at the top. Line breaks are made LF first.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace tessera::spec {

// "source:line:col: malformed YAML: <libyaml's reason>" when the text is
// not well-formed YAML; "source:line:col: expected a mapping ..." when a
// document's top node is a scalar (an empty document is allowed).
Status CheckYamlSyntax(std::string_view text, std::string_view source);

// The text with every line break made LF, checked as above: what yaml-cpp may parse.
Result<std::string> PrepareYaml(std::string_view text, std::string_view source);

}  // namespace tessera::spec

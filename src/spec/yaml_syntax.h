// A strict syntax check of YAML text with libyaml, before yaml-cpp builds
// the nodes. yaml-cpp 0.7 (Debian 12's) loops forever, taking memory, on a
// ',' in a document whose top is not a mapping: `,`, `"q",`, `[1],2`, or a
// tagged multi-line scalar with a line that starts with ','. The fuzzer
// found them (tests/fuzz). libyaml refuses malformed text with a line and
// column, and every Tessera document is a mapping, so a document whose top
// is anything else is refused here; yaml-cpp then only sees text on which
// it answers (within a mapping it reports the ',' as an error).
#pragma once

#include <string_view>

#include "base/status.h"

namespace tessera::spec {

// "source:line:col: malformed YAML: <libyaml's reason>" when the text is
// not well-formed YAML; "source:line:col: expected a mapping ..." when a
// document's top node is not a mapping (an empty document is allowed).
Status CheckYamlSyntax(std::string_view text, std::string_view source);

}  // namespace tessera::spec

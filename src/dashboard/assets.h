// The dashboard's files (src/dashboard/ui/), compiled into the binary by
// cmake/embed_assets.cmake, and what HTTP needs to serve them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tessera::dashboard {

struct EmbeddedFile {
  std::string_view path;  // relative to ui/: "index.html", "views/jobs.js"
  std::string_view content;
};

// Every file of ui/, as the build found them (generated code).
const std::vector<EmbeddedFile>& EmbeddedFiles();

// The file at `path` ("" is index.html), or nullptr.
const EmbeddedFile* FindAsset(std::string_view path);

// "text/javascript; charset=utf-8" for "app.js", ...; application/octet-stream when unknown.
std::string_view ContentType(std::string_view path);

}  // namespace tessera::dashboard

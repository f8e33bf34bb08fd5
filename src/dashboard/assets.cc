#include "dashboard/assets.h"

#include <array>
#include <utility>

namespace tessera::dashboard {

const EmbeddedFile* FindAsset(std::string_view path) {
  if (path.empty()) path = "index.html";
  for (const EmbeddedFile& file : EmbeddedFiles()) {
    if (file.path == path) return &file;
  }
  return nullptr;
}

std::string_view ContentType(std::string_view path) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kTypes = {{
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".json", "application/json"},
  }};
  for (const auto& [extension, type] : kTypes) {
    if (path.ends_with(extension)) return type;
  }
  return "application/octet-stream";
}

}  // namespace tessera::dashboard

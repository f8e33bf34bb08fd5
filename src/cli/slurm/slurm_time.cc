#include "cli/slurm/slurm_time.h"

#include <charconv>
#include <string>
#include <vector>

namespace tessera::cli::slurm {
namespace {

bool ReadNumber(std::string_view text, std::int64_t* out) {
  if (text.empty() || text.size() > 9) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && end == text.data() + text.size();
}

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

}  // namespace

Result<std::int64_t> ParseSlurmTime(std::string_view text) {
  const auto bad = [&] {
    return InvalidArgument("'" + std::string(text) +
                           "' is not a Slurm time (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS)");
  };
  if (text == "UNLIMITED" || text == "INFINITE" || text == "unlimited" || text == "infinite") return std::int64_t{0};
  std::int64_t days = 0;
  std::string_view clock = text;
  const bool has_days = text.find('-') != std::string_view::npos;
  if (has_days) {
    const std::size_t dash = text.find('-');
    if (!ReadNumber(text.substr(0, dash), &days)) return bad();
    clock = text.substr(dash + 1);
  }
  const std::vector<std::string_view> parts = Split(clock, ':');
  if (parts.size() > 3) return bad();
  std::int64_t values[3] = {0, 0, 0};
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (!ReadNumber(parts[i], &values[i])) return bad();
  }
  std::int64_t seconds = 0;
  if (has_days) {
    // D-HH, D-HH:MM, D-HH:MM:SS
    seconds = values[0] * 3600 + values[1] * 60 + values[2];
  } else if (parts.size() == 1) {
    seconds = values[0] * 60;  // MM
  } else if (parts.size() == 2) {
    seconds = values[0] * 60 + values[1];  // MM:SS
  } else {
    seconds = values[0] * 3600 + values[1] * 60 + values[2];  // HH:MM:SS
  }
  seconds += days * 86400;
  if (seconds <= 0) return InvalidArgument("a time limit of '" + std::string(text) + "' is zero; give a time above zero");
  return seconds;
}

}  // namespace tessera::cli::slurm

#include "base/quantity.h"

#include <array>
#include <charconv>
#include <cmath>
#include <utility>

namespace tessera {
namespace {

// Splits "1.5Gi" into 1.5 and "Gi". Rejects empty numbers, signs and junk.
bool SplitNumber(std::string_view text, double& number, std::string_view& suffix) {
  std::size_t end = 0;
  while (end < text.size() && ((text[end] >= '0' && text[end] <= '9') || text[end] == '.')) ++end;
  if (end == 0) return false;
  const std::string_view digits = text.substr(0, end);
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return false;
  suffix = text.substr(end);
  return std::isfinite(number);
}

Result<std::int64_t> Scaled(double number, double scale, std::string_view text,
                            std::string_view what) {
  const double value = std::round(number * scale);
  if (value > 9.0e18) return InvalidArgument("'" + std::string(text) + "' is too large a " + std::string(what));
  return static_cast<std::int64_t>(value);
}

}  // namespace

Result<std::int64_t> ParseBytes(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, double>, 10> kUnits = {{
      {"", 1.0}, {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0},
      {"Ti", 1099511627776.0}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"B", 1.0},
  }};
  double number = 0;
  std::string_view suffix;
  if (SplitNumber(text, number, suffix)) {
    for (const auto& [unit, scale] : kUnits) {
      if (suffix == unit) return Scaled(number, scale, text, "memory size");
    }
  }
  return InvalidArgument("'" + std::string(text) +
                         "' is not a memory size (write e.g. 80Gi, 512Mi, 40G or a byte count)");
}

Result<std::int64_t> ParseMilli(std::string_view text) {
  double number = 0;
  std::string_view suffix;
  if (SplitNumber(text, number, suffix)) {
    if (suffix.empty()) return Scaled(number, 1000.0, text, "quantity");
    if (suffix == "m") {
      if (number != std::floor(number)) {
        return InvalidArgument("'" + std::string(text) + "': milli-units must be whole");
      }
      return Scaled(number, 1.0, text, "quantity");
    }
  }
  return InvalidArgument("'" + std::string(text) + "' is not a quantity (write e.g. 2, 0.25 or 250m)");
}

Result<Seconds> ParseDuration(std::string_view text) {
  const auto bad = [&] {
    return InvalidArgument("'" + std::string(text) +
                           "' is not a duration (write e.g. 6h, 90m, 120s, 1h30m, 2d or seconds)");
  };
  if (text.empty()) return bad();
  double total = 0;
  std::string_view rest = text;
  while (!rest.empty()) {
    double number = 0;
    std::string_view suffix;
    if (!SplitNumber(rest, number, suffix)) return bad();
    const std::size_t consumed = rest.size() - suffix.size();
    double scale = 0;
    if (suffix.empty()) {
      if (consumed != text.size()) return bad();  // a bare number only on its own
      scale = 1;
    } else {
      switch (suffix.front()) {
        case 'd': scale = 86400; break;
        case 'h': scale = 3600; break;
        case 'm': scale = 60; break;
        case 's': scale = 1; break;
        default: return bad();
      }
      suffix.remove_prefix(1);
    }
    total += number * scale;
    rest = suffix;
  }
  if (total > 1e15) return bad();
  return static_cast<Seconds>(std::llround(total));
}

std::string FormatBytes(std::int64_t bytes) {
  static constexpr std::array<std::pair<const char*, std::int64_t>, 4> kUnits = {{
      {"Ti", std::int64_t{1} << 40}, {"Gi", kGiB}, {"Mi", kMiB}, {"Ki", 1024},
  }};
  for (const auto& [unit, scale] : kUnits) {
    if (bytes >= scale) {
      if (bytes % scale == 0) return std::to_string(bytes / scale) + unit;
      const double value = static_cast<double>(bytes) / static_cast<double>(scale);
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.1f%s", value, unit);
      return buffer;
    }
  }
  return std::to_string(bytes);
}

std::string FormatMilli(std::int64_t milli) {
  if (milli % kMilli == 0) return std::to_string(milli / kMilli);
  std::string text = std::to_string(milli / kMilli) + ".";
  std::string fraction = std::to_string(1000 + milli % kMilli).substr(1);
  while (fraction.back() == '0') fraction.pop_back();
  return text + fraction;
}

std::string FormatDuration(Seconds seconds) {
  if (seconds == 0) return "0s";
  std::string text;
  const std::array<std::pair<char, Seconds>, 4> kUnits = {{{'d', 86400}, {'h', 3600}, {'m', 60}, {'s', 1}}};
  for (const auto& [unit, scale] : kUnits) {
    if (seconds >= scale) {
      text += std::to_string(seconds / scale) + unit;
      seconds %= scale;
    }
  }
  return text;
}

}  // namespace tessera

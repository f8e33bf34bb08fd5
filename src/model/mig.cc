#include "model/mig.h"

#include <algorithm>
#include <charconv>

namespace tessera::model {
namespace {

constexpr std::int32_t kSlicesPerGpu = 7;

// Reads the number in front of `unit` ("10" of "10gb") and moves past both.
bool ReadCount(std::string_view& text, std::string_view unit, std::int64_t* value) {
  const char* end = text.data() + text.size();
  const auto [rest, error] = std::from_chars(text.data(), end, *value);
  if (error != std::errc() || rest == text.data() || *value <= 0) return false;
  text.remove_prefix(static_cast<std::size_t>(rest - text.data()));
  if (!text.starts_with(unit)) return false;
  text.remove_prefix(unit.size());
  return true;
}

}  // namespace

std::int32_t MigProfile::milli() const { return std::min(999, compute_slices * 1000 / kSlicesPerGpu); }

Result<MigProfile> ParseMigProfile(std::string_view name) {
  const auto invalid = [&] {
    return InvalidArgument("'" + std::string(name) + "' is not a MIG profile (like 1g.10gb, 1c.2g.20gb or 1g.10gb+me)");
  };
  std::string_view text = name.substr(0, name.find('+'));
  if (const std::size_t plus = name.find('+'); plus != std::string_view::npos && plus + 1 == name.size()) return invalid();
  MigProfile profile;
  profile.name = std::string(name);
  std::int64_t compute = 0, gpu = 0, gigabytes = 0;
  // An optional compute-instance part "Nc." before the GPU instance "Ng.".
  std::string_view probe = text;
  if (ReadCount(probe, "c.", &compute)) text = probe;
  if (!ReadCount(text, "g.", &gpu) || !ReadCount(text, "gb", &gigabytes) || !text.empty()) return invalid();
  if (compute == 0) compute = gpu;
  if (gpu > 8 || compute > gpu) return invalid();
  if (gigabytes > 1024 * 1024) return invalid();
  profile.compute_slices = static_cast<std::int32_t>(compute);
  profile.gpu_slices = static_cast<std::int32_t>(gpu);
  profile.memory = gigabytes << 30;
  return profile;
}

}  // namespace tessera::model

// Strong integer ids: JobId, NodeId and GpuId are distinct types, so a GpuId can
// never be passed where a NodeId is expected. Ids are dense indexes into the
// owning table, which keeps every hot-path lookup a vector index.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <limits>

namespace tessera {

template <typename Tag, typename Rep = std::int32_t>
class StrongId {
 public:
  using rep_type = Rep;
  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep value) : value_(value) {}

  constexpr Rep value() const { return value_; }
  constexpr bool valid() const { return value_ != kInvalid; }
  constexpr std::size_t index() const { return static_cast<std::size_t>(value_); }

  constexpr auto operator<=>(const StrongId&) const = default;

 private:
  static constexpr Rep kInvalid = std::numeric_limits<Rep>::max();
  Rep value_ = kInvalid;
};

}  // namespace tessera

template <typename Tag, typename Rep>
struct std::hash<tessera::StrongId<Tag, Rep>> {
  std::size_t operator()(const tessera::StrongId<Tag, Rep>& id) const noexcept {
    return std::hash<Rep>{}(id.value());
  }
};

// Job arrays: one job that stands for many elements, each a run of the same
// spec with its own index (spec.array, spec.sweep, sbatch --array).
//
// The array job is the parent. It holds the element indices and the throttle
// (at most N elements active at a time), stays in the scheduler's pending set
// while it has elements not yet started, and makes each element a real job of
// its own only when that element is placed (JobTable::Spawn): an array of
// 10,000 elements costs a scheduling cycle what one pending job costs, plus
// its running elements. Elements take the ids the parent reserved when it was
// submitted (parent id + 1 + the index's position), so that every copy of the
// scheduler's state that spawns the same element names it alike.
//
// A sweep is an array whose indices number the combinations of its
// parameters (the cartesian product, the first parameter varying slowest);
// each element reads its combination from TESSERA_SWEEP_<NAME>.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace tessera::model {

// At most this many elements per array or sweep, and indices at most this
// large (Slurm's MaxArraySize is configurable; these bound what a
// submission can reserve).
inline constexpr std::int32_t kMaxArrayElements = 100'000;
inline constexpr std::int32_t kMaxArrayIndex = 9'999'999;

struct SweepParameter {
  std::string name;                 // as written in spec.sweep: lr, batch_size
  std::vector<std::string> values;  // in the order written (a range: ascending)
};

// What spec.array (and a sweep) ask for; immutable once submitted, shared by
// the parent, its elements and every copy of them.
struct JobArray {
  std::vector<std::int32_t> indices;  // ascending, distinct, not empty
  std::int32_t max_running = 0;       // "%N": elements pending or running at once; 0: no limit
  std::vector<SweepParameter> sweep;  // empty unless a sweep; indices are then 0..combinations-1

  std::int32_t size() const { return static_cast<std::int32_t>(indices.size()); }
  // Where `index` is among the indices, if it is one.
  std::optional<std::int32_t> PositionOf(std::int32_t index) const;
  // The sweep's value of each parameter for the combination `index`.
  std::vector<std::pair<std::string, std::string>> SweepValues(std::int32_t index) const;
  // The distance between consecutive indices when it is the same throughout
  // ("0-15:4": 4), else 1, as Slurm's SLURM_ARRAY_TASK_STEP.
  std::int32_t Step() const;
  // The indices as Slurm writes them: "0-99", "1,3,5-9" (the limit apart).
  std::string Describe() const;
};

// Slurm's --array syntax: comma-separated indices and ranges, a range with
// an optional step ("0-15:4"), and an optional "%N" limit: "0-99%10",
// "1,3,5-9", "0-15:4". Overlapping ranges are one set, as in Slurm. With
// `limit_only`, the text is just "%N" (a sweep's limit: its indices come from
// the sweep). Errors say what is wrong without naming the field; callers
// prefix it ("spec.array: ...").
Result<JobArray> ParseArrayRange(std::string_view text, bool limit_only = false);

// The sweep's combinations, or why there are too many: "3 x 1000 x 100 = 300000
// combinations; a sweep holds at most 100000".
Result<std::int32_t> SweepCombinations(const std::vector<SweepParameter>& sweep);

// The environment variable a sweep parameter is given in: TESSERA_SWEEP_LR.
std::string SweepVariable(std::string_view parameter);

}  // namespace tessera::model

// The GPU-memory ledger of one physical GPU: how much memory each vGPU task
// on the GPU may hold, how much each of its processes holds now, and whether
// a task is bursting past its share. Every process of every task on the GPU
// maps the same file, so a task's cap binds all its processes together, and
// the agent reads the same file to enforce the burst rules.
//
// The rules a reservation follows (docs/gpu-sharing.md):
//   * within its cap a task is guaranteed its memory: the reservation succeeds
//     if the GPU has it, and otherwise, when tasks are bursting, asks for
//     memory to be reclaimed from them (kReclaim: the caller waits and tries
//     again);
//   * past its cap, up to cap + burst, a task may borrow memory nobody holds
//     (kBurst), unless a reclaim is pending; the burst is timed from its start;
//   * anything else is refused, and the caller answers CUDA_ERROR_OUT_OF_MEMORY.
//
// The file holds fixed-size arrays guarded by a process-shared robust mutex:
// a process killed while holding it leaves no lock behind. Usage is kept per
// process and summed when needed, so the memory of a process that died (its
// driver context freed it) is dropped by CollectDead without trusting any
// counter it may have left half-updated.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::vgpu {

inline constexpr int kMaxTasks = 64;
inline constexpr int kMaxProcesses = 256;
inline constexpr std::size_t kMaxTaskIdLength = 63;

// What a task is promised on the GPU, in bytes.
struct TaskTerms {
  std::string_view id;
  std::int64_t cap = 0;    // guaranteed memory
  std::int64_t burst = 0;  // how far past the cap it may borrow
};

enum class Grant {
  kGranted,  // within the cap
  kBurst,    // past the cap, from memory nobody holds
  kReclaim,  // within the cap, but bursting tasks hold the memory: wait and retry
  kRefused,
};

struct TaskUsage {
  std::string id;
  std::int64_t cap = 0;
  std::int64_t burst = 0;
  std::int64_t used = 0;
  std::int64_t burst_since_ns = 0;  // 0: not bursting
  std::vector<int> pids;            // processes that hold memory or have asked for it
  bool bursting() const { return used > cap; }
};

struct LedgerSnapshot {
  std::int64_t physical = 0;
  std::int64_t reclaim_wanted = 0;    // bytes a guaranteed task is waiting for; 0: none
  std::int64_t reclaim_since_ns = 0;
  std::vector<TaskUsage> tasks;
  std::int64_t used() const;
};

class MemoryLedger {
 public:
  // Maps the ledger at `path`, creating it for a GPU of `physical` bytes when
  // it does not exist yet. nullptr with `error` set when it cannot.
  static std::unique_ptr<MemoryLedger> Open(const std::string& path, std::int64_t physical, std::string* error);
  ~MemoryLedger();
  MemoryLedger(const MemoryLedger&) = delete;
  MemoryLedger& operator=(const MemoryLedger&) = delete;

  // Reserves `bytes` for process `pid` of `task` (registering either on first use).
  Grant Reserve(const TaskTerms& task, int pid, std::int64_t bytes, std::int64_t now_ns);
  // Returns memory a process freed.
  void Release(std::string_view task, int pid, std::int64_t bytes);
  LedgerSnapshot Read() const;
  std::int64_t TaskUsed(std::string_view task) const;
  // Drops the processes that have exited; returns how many.
  int CollectDead();
  // Removes a task and its processes once it has ended (the agent does this).
  void Forget(std::string_view task);
  // Ends a pending reclaim (the agent, once nothing is left to reclaim).
  void ClearReclaim();

 private:
  struct Layout;
  class Locked;
  MemoryLedger(Layout* layout, std::size_t size) : layout_(layout), size_(size) {}

  Layout* layout_;
  std::size_t size_;
};

// Monotonic nanoseconds, the clock ledger timestamps use (shared by processes).
std::int64_t MonotonicNanos();

}  // namespace tessera::vgpu

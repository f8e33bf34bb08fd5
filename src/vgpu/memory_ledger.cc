#include "vgpu/memory_ledger.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <limits>

namespace tessera::vgpu {

namespace {
constexpr std::uint64_t kMagic = 0x5445535356475055;  // "TESSVGPU"
constexpr std::uint32_t kVersion = 1;

struct ProcessEntry {
  std::int32_t pid;   // 0: free
  std::int32_t task;  // index into tasks
  std::int64_t used;
};

struct TaskEntry {
  char id[kMaxTaskIdLength + 1];  // empty: free
  std::int64_t cap;
  std::int64_t burst;
  std::int64_t burst_since_ns;
};

bool Alive(int pid) { return kill(pid, 0) == 0 || errno != ESRCH; }
}  // namespace

struct MemoryLedger::Layout {
  std::uint64_t magic;  // written last, once the rest is initialised
  std::uint32_t version;
  std::uint32_t reserved;
  pthread_mutex_t mutex;
  std::int64_t physical;
  std::int64_t reclaim_wanted;
  std::int64_t reclaim_since_ns;
  TaskEntry tasks[kMaxTasks];
  ProcessEntry processes[kMaxProcesses];

  std::int64_t TaskUsed(int task) const {
    std::int64_t sum = 0;
    for (const ProcessEntry& p : processes) {
      if (p.pid != 0 && p.task == task) sum += p.used;
    }
    return sum;
  }
  std::int64_t Used() const {
    std::int64_t sum = 0;
    for (const ProcessEntry& p : processes) sum += p.pid != 0 ? p.used : 0;
    return sum;
  }
  int FindTask(std::string_view id) const {
    id = id.substr(0, kMaxTaskIdLength);  // stored truncated, compared the same way
    for (int i = 0; i < kMaxTasks; ++i) {
      if (tasks[i].id[0] != '\0' && id == tasks[i].id) return i;
    }
    return -1;
  }
  bool HasProcesses(int task) const {
    for (const ProcessEntry& p : processes) {
      if (p.pid != 0 && p.task == task) return true;
    }
    return false;
  }
  bool AnyBursting() const {
    for (int i = 0; i < kMaxTasks; ++i) {
      if (tasks[i].id[0] != '\0' && TaskUsed(i) > tasks[i].cap) return true;
    }
    return false;
  }
  int FindProcess(int pid) const {
    for (int i = 0; i < kMaxProcesses; ++i) {
      if (processes[i].pid == pid) return i;
    }
    return -1;
  }
  // The task's slot, registered with `terms` when new; -1 when the table is full.
  int TaskSlot(const TaskTerms& terms) {
    int slot = FindTask(terms.id);
    if (slot >= 0) return slot;
    for (int i = 0; i < kMaxTasks && slot < 0; ++i) {
      if (tasks[i].id[0] == '\0') slot = i;
    }
    // A full table: reuse the slot of a task none of whose processes is left
    // (it holds nothing; it registers again if it comes back).
    for (int i = 0; i < kMaxTasks && slot < 0; ++i) {
      if (!HasProcesses(i)) slot = i;
    }
    if (slot < 0 || terms.id.empty()) return -1;
    TaskEntry& t = tasks[slot];
    const std::size_t n = std::min(terms.id.size(), kMaxTaskIdLength);
    std::memcpy(t.id, terms.id.data(), n);
    t.id[n] = '\0';
    t.cap = terms.cap;
    t.burst = terms.burst;
    t.burst_since_ns = 0;
    return slot;
  }
  int ProcessSlot(int pid, int task) {
    int slot = FindProcess(pid);
    if (slot >= 0) return slot;
    slot = FindProcess(0);
    if (slot < 0) return -1;
    processes[slot] = {pid, task, 0};
    return slot;
  }
  int CollectDead() {
    int dropped = 0;
    for (ProcessEntry& p : processes) {
      if (p.pid != 0 && !Alive(p.pid)) {
        p = {};
        ++dropped;
      }
    }
    for (int i = 0; i < kMaxTasks; ++i) {
      if (tasks[i].id[0] != '\0' && TaskUsed(i) <= tasks[i].cap) tasks[i].burst_since_ns = 0;
    }
    return dropped;
  }
};

// Holds the ledger's mutex. A holder that died mid-update leaves only its own
// process entry possibly stale, which CollectDead drops. A holder that is
// stopped (SIGSTOP, a debugger) must not hang everyone else: after a bounded
// wait the lock is not taken and the operation does nothing (a reservation is
// refused, a read is empty).
class MemoryLedger::Locked {
 public:
  explicit Locked(Layout* layout) : layout_(layout) {
    timespec deadline{};
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 2;
    int rc = pthread_mutex_timedlock(&layout_->mutex, &deadline);
    if (rc == EOWNERDEAD) {
      pthread_mutex_consistent(&layout_->mutex);
      layout_->CollectDead();
      rc = 0;
    }
    held_ = rc == 0;
  }
  ~Locked() {
    if (held_) pthread_mutex_unlock(&layout_->mutex);
  }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;
  explicit operator bool() const { return held_; }
  Layout* operator->() const { return layout_; }

 private:
  Layout* layout_;
  bool held_ = false;
};

std::int64_t LedgerSnapshot::used() const {
  std::int64_t sum = 0;
  for (const TaskUsage& t : tasks) sum += t.used;
  return sum;
}

std::int64_t MonotonicNanos() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::unique_ptr<MemoryLedger> MemoryLedger::Open(const std::string& path, std::int64_t physical, std::string* error) {
  const auto fail = [&](const std::string& what) {
    *error = path + ": " + what + ": " + std::strerror(errno);
    return nullptr;
  };
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return fail("cannot open the vGPU memory ledger");
  // The first opener initialises the file; the others wait for it under flock.
  if (flock(fd, LOCK_EX) != 0) {
    ::close(fd);
    return fail("cannot lock the vGPU memory ledger");
  }
  struct stat st {};
  fstat(fd, &st);
  const std::size_t size = sizeof(Layout);
  const bool fresh = static_cast<std::size_t>(st.st_size) < size;
  // Every task on the GPU maps it, whatever user its container runs as.
  if (fresh) (void)fchmod(fd, 0666);
  if (fresh && ftruncate(fd, static_cast<off_t>(size)) != 0) {
    ::close(fd);
    return fail("cannot size the vGPU memory ledger");
  }
  void* mapped = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mapped == MAP_FAILED) {
    ::close(fd);
    return fail("cannot map the vGPU memory ledger");
  }
  auto* layout = static_cast<Layout*>(mapped);
  if (layout->magic != kMagic) {
    std::memset(static_cast<void*>(layout), 0, size);
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&layout->mutex, &attr);
    pthread_mutexattr_destroy(&attr);
    layout->physical = physical;
    layout->version = kVersion;
    __atomic_store_n(&layout->magic, kMagic, __ATOMIC_RELEASE);
  } else if (layout->version != kVersion) {
    munmap(mapped, size);
    ::close(fd);
    errno = EPROTO;
    return fail("written by another version of Tessera");
  }
  flock(fd, LOCK_UN);
  ::close(fd);  // the mapping stays
  return std::unique_ptr<MemoryLedger>(new MemoryLedger(layout, size));
}

MemoryLedger::~MemoryLedger() { munmap(layout_, size_); }

Grant MemoryLedger::Reserve(const TaskTerms& terms, int pid, std::int64_t bytes, std::int64_t now_ns) {
  Locked l(layout_);
  if (!l || bytes < 0 || bytes > (std::int64_t{1} << 56)) return Grant::kRefused;
  int task = l->TaskSlot(terms);
  int process = task < 0 ? -1 : l->ProcessSlot(pid, task);
  if (process < 0 && l->CollectDead() > 0) {  // the dead may have left room
    task = l->TaskSlot(terms);
    process = task < 0 ? -1 : l->ProcessSlot(pid, task);
  }
  if (process < 0) return Grant::kRefused;  // tables full: refuse rather than run uncounted
  TaskEntry& t = l->tasks[task];
  const auto decide = [&] {
    const std::int64_t used = l->TaskUsed(task);
    // A GPU of unknown size (0) is not checked: the driver has the last word.
    const bool fits_gpu = l->physical <= 0 || l->Used() + bytes <= l->physical;
    if (used + bytes <= t.cap) {
      if (fits_gpu) return Grant::kGranted;
      // Only bursts can be given back; without one, waiting would not help.
      return l->AnyBursting() ? Grant::kReclaim : Grant::kRefused;
    }
    const std::int64_t allowed = t.burst > std::numeric_limits<std::int64_t>::max() - t.cap ? std::numeric_limits<std::int64_t>::max()
                                                                                           : t.cap + t.burst;
    if (used + bytes > allowed || l->reclaim_wanted > 0 || !fits_gpu) return Grant::kRefused;
    return Grant::kBurst;
  };
  Grant grant = decide();
  if (grant == Grant::kRefused || grant == Grant::kReclaim) {
    if (l->CollectDead() > 0) grant = decide();
  }
  switch (grant) {
    case Grant::kGranted:
      l->reclaim_wanted = 0;  // a waiter that got its memory ends the reclaim
      l->reclaim_since_ns = 0;
      [[fallthrough]];
    case Grant::kBurst:
      l->processes[process].used += bytes;
      if (grant == Grant::kBurst && t.burst_since_ns == 0) t.burst_since_ns = now_ns;
      break;
    case Grant::kReclaim:
      if (l->reclaim_wanted == 0) l->reclaim_since_ns = now_ns;
      l->reclaim_wanted = std::max(l->reclaim_wanted, l->Used() + bytes - l->physical);
      break;
    case Grant::kRefused:
      break;
  }
  return grant;
}

void MemoryLedger::Release(std::string_view task_id, int pid, std::int64_t bytes) {
  Locked l(layout_);
  if (!l) return;
  const int process = l->FindProcess(pid);
  const int task = l->FindTask(task_id);
  if (process < 0 || task < 0) return;
  ProcessEntry& p = l->processes[process];
  p.used = std::max<std::int64_t>(0, p.used - bytes);
  if (l->TaskUsed(task) <= l->tasks[task].cap) l->tasks[task].burst_since_ns = 0;
}

LedgerSnapshot MemoryLedger::Read() const {
  Locked l(layout_);
  LedgerSnapshot s;
  if (!l) return s;
  s.physical = l->physical;
  s.reclaim_wanted = l->reclaim_wanted;
  s.reclaim_since_ns = l->reclaim_since_ns;
  for (int i = 0; i < kMaxTasks; ++i) {
    const TaskEntry& t = l->tasks[i];
    if (t.id[0] == '\0') continue;
    TaskUsage u{t.id, t.cap, t.burst, l->TaskUsed(i), t.burst_since_ns, {}};
    for (const ProcessEntry& p : l->processes) {
      if (p.pid != 0 && p.task == i) u.pids.push_back(p.pid);
    }
    s.tasks.push_back(std::move(u));
  }
  return s;
}

std::int64_t MemoryLedger::TaskUsed(std::string_view task) const {
  Locked l(layout_);
  if (!l) return 0;
  const int slot = l->FindTask(task);
  return slot < 0 ? 0 : l->TaskUsed(slot);
}

int MemoryLedger::CollectDead() {
  Locked l(layout_);
  return l ? l->CollectDead() : 0;
}

void MemoryLedger::Forget(std::string_view task_id) {
  Locked l(layout_);
  if (!l) return;
  const int task = l->FindTask(task_id);
  if (task < 0) return;
  for (ProcessEntry& p : l->processes) {
    if (p.pid != 0 && p.task == task) p = {};
  }
  l->tasks[task] = {};
}

void MemoryLedger::ClearReclaim() {
  Locked l(layout_);
  if (!l) return;
  l->reclaim_wanted = 0;
  l->reclaim_since_ns = 0;
}

}  // namespace tessera::vgpu

// The agent's journal of task starts and ends, one line per event in a file
// under its data directory, written before a process is launched. It is what
// makes starts exactly-once across agent restarts: a (job, attempt, task)
// found in the journal is never started again.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "api/agent_protocol.h"
#include "base/status.h"

namespace tessera::node {

class TaskJournal {
 public:
  struct Entry {
    pid_t pid = 0;  // 0 when the launch never happened
    bool ended = false;
    std::int32_t exit_code = 0;
  };
  // Reads the journal (a missing file is an empty journal) and keeps it open for appends.
  static Result<TaskJournal> Open(const std::string& path);

  const Entry* Find(const api::TaskKey& key) const;
  // Written and flushed before the launch; then its process, once launched.
  void RecordStart(const api::TaskKey& key);
  void RecordPid(const api::TaskKey& key, pid_t pid);
  void RecordEnd(const api::TaskKey& key, std::int32_t exit_code);
  // Tasks a previous agent started and never saw end.
  std::vector<std::pair<api::TaskKey, Entry>> Unfinished() const;

 private:
  std::string path_;
  std::map<api::TaskKey, Entry> entries_;
  std::ofstream out_;
};

}  // namespace tessera::node

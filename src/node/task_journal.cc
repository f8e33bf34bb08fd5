#include "node/task_journal.h"

#include <filesystem>
#include <sstream>

namespace tessera::node {

Result<TaskJournal> TaskJournal::Open(const std::string& path) {
  TaskJournal journal;
  journal.path_ = path;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string verb;
      api::TaskKey key;
      std::int64_t value = 0;
      // A torn last line (the agent died mid-write) is skipped.
      if (!(fields >> verb >> key.job >> key.attempt >> key.task >> value)) continue;
      Entry& entry = journal.entries_[key];
      if (verb == "pid") entry.pid = static_cast<pid_t>(value);
      if (verb == "end") {
        entry.ended = true;
        entry.exit_code = static_cast<std::int32_t>(value);
      }
    }
  }
  journal.out_.open(path, std::ios::app);
  if (!journal.out_) return Status(StatusCode::kFailedPrecondition, "cannot write the task journal " + path);
  return journal;
}

const TaskJournal::Entry* TaskJournal::Find(const api::TaskKey& key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

void TaskJournal::RecordStart(const api::TaskKey& key) {
  entries_[key];
  out_ << "start " << key.job << ' ' << key.attempt << ' ' << key.task << " 0\n" << std::flush;
}

void TaskJournal::RecordPid(const api::TaskKey& key, pid_t pid) {
  entries_[key].pid = pid;
  out_ << "pid " << key.job << ' ' << key.attempt << ' ' << key.task << ' ' << pid << '\n' << std::flush;
}

void TaskJournal::RecordEnd(const api::TaskKey& key, std::int32_t exit_code) {
  Entry& entry = entries_[key];
  entry.ended = true;
  entry.exit_code = exit_code;
  out_ << "end " << key.job << ' ' << key.attempt << ' ' << key.task << ' ' << exit_code << '\n' << std::flush;
}

std::vector<std::pair<api::TaskKey, TaskJournal::Entry>> TaskJournal::Unfinished() const {
  std::vector<std::pair<api::TaskKey, Entry>> out;
  for (const auto& [key, entry] : entries_) {
    if (!entry.ended) out.emplace_back(key, entry);
  }
  return out;
}

}  // namespace tessera::node

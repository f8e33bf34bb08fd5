// The embedded default store: one SQLite file in WAL mode with
// synchronous=FULL, so an applied batch survives a crash of the process and
// of the machine. One table holds every collection (collection, key, value).
#pragma once

#include <memory>
#include <string>

#include "store/state_store.h"

struct sqlite3;

namespace tessera::store {

class SqliteStore final : public StateStore {
 public:
  // Creates the file (and its directory) when missing.
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path);
  ~SqliteStore() override;

  std::string Describe() const override;
  Status Apply(const std::vector<Mutation>& batch) override;
  Result<std::vector<Entry>> List(Collection collection) override;

 private:
  SqliteStore(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  Status Exec(const char* sql);
  std::string path_;
  sqlite3* db_;
};

}  // namespace tessera::store

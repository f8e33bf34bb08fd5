// The embedded default store: one SQLite file in WAL mode with
// synchronous=FULL, so an applied batch survives a crash of the process and
// of the machine. One table holds every collection (collection, key, value).
#pragma once

#include <memory>
#include <string>

#include "store/state_store.h"

struct sqlite3;
struct sqlite3_stmt;

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
  Status Step(sqlite3_stmt* stmt);  // runs a statement that returns no rows
  Status Prepare(const char* sql, sqlite3_stmt** stmt);
  std::string path_;
  sqlite3* db_;
  // Apply's statements, prepared once: compiling them for every transaction
  // was a tenth of the store's CPU under load. Apply runs on one thread at a
  // time (the commit queue's), so they are never stepped concurrently.
  sqlite3_stmt* begin_ = nullptr;
  sqlite3_stmt* commit_ = nullptr;
  sqlite3_stmt* rollback_ = nullptr;
  sqlite3_stmt* put_ = nullptr;
  sqlite3_stmt* erase_ = nullptr;
};

}  // namespace tessera::store

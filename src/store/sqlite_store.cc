#include "store/sqlite_store.h"

#include <sqlite3.h>

#include <cstdio>
#include <filesystem>

namespace tessera::store {
namespace {

// A prepared statement that finalizes itself.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) { sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  sqlite3_stmt* get() const { return stmt_; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

void BindText(sqlite3_stmt* stmt, int index, std::string_view text) {
  sqlite3_bind_text(stmt, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
}

}  // namespace

std::string_view ToString(Collection collection) {
  switch (collection) {
    case Collection::kJobs: return "jobs";
    case Collection::kJobSpecs: return "job-specs";
    case Collection::kNodes: return "nodes";
    case Collection::kQueues: return "queues";
    case Collection::kEvents: return "events";
    case Collection::kMeta: return "meta";
    case Collection::kTokens: return "tokens";
    case Collection::kAudit: return "audit";
    case Collection::kUsage: return "usage";
    case Collection::kQuarantine: return "quarantine";
    case Collection::kRegistryCredentials: return "registry-credentials";
  }
  return "?";
}

std::string NumericKey(std::int64_t id) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "%020lld", static_cast<long long>(id));
  return buffer;
}

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr) != SQLITE_OK) {
    const std::string why = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return Status(StatusCode::kFailedPrecondition, "cannot open the state database " + path + ": " + why);
  }
  std::unique_ptr<SqliteStore> store(new SqliteStore(path, db));
  sqlite3_busy_timeout(db, 5000);
  for (const char* sql : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL",
                          "CREATE TABLE IF NOT EXISTS objects (collection TEXT NOT NULL, key TEXT NOT NULL, "
                          "value TEXT NOT NULL, PRIMARY KEY (collection, key)) WITHOUT ROWID"}) {
    TESSERA_RETURN_IF_ERROR(store->Exec(sql));
  }
  TESSERA_RETURN_IF_ERROR(store->Prepare("BEGIN IMMEDIATE", &store->begin_));
  TESSERA_RETURN_IF_ERROR(store->Prepare("COMMIT", &store->commit_));
  TESSERA_RETURN_IF_ERROR(store->Prepare("ROLLBACK", &store->rollback_));
  TESSERA_RETURN_IF_ERROR(store->Prepare("INSERT INTO objects (collection, key, value) VALUES (?1, ?2, ?3) "
                                         "ON CONFLICT (collection, key) DO UPDATE SET value = excluded.value",
                                         &store->put_));
  TESSERA_RETURN_IF_ERROR(store->Prepare("DELETE FROM objects WHERE collection = ?1 AND key = ?2", &store->erase_));
  return store;
}

SqliteStore::~SqliteStore() {
  for (sqlite3_stmt* stmt : {begin_, commit_, rollback_, put_, erase_}) sqlite3_finalize(stmt);
  sqlite3_close(db_);
}

Status SqliteStore::Prepare(const char* sql, sqlite3_stmt** stmt) {
  if (sqlite3_prepare_v2(db_, sql, -1, stmt, nullptr) != SQLITE_OK) {
    return Internal("state database " + path_ + ": " + sqlite3_errmsg(db_));
  }
  return Status::Ok();
}

Status SqliteStore::Step(sqlite3_stmt* stmt) {
  const int rc = sqlite3_step(stmt);
  const Status status = rc == SQLITE_DONE ? Status::Ok() : Internal("state database " + path_ + ": " + sqlite3_errmsg(db_));
  sqlite3_reset(stmt);
  return status;
}

std::string SqliteStore::Describe() const { return "sqlite " + path_ + " (WAL, synchronous=FULL)"; }

Status SqliteStore::Exec(const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string why = error != nullptr ? error : "unknown error";
    sqlite3_free(error);
    return Internal("state database " + path_ + ": " + why);
  }
  return Status::Ok();
}

Status SqliteStore::Apply(const std::vector<Mutation>& batch) {
  TESSERA_RETURN_IF_ERROR(Step(begin_));
  for (const Mutation& m : batch) {
    sqlite3_stmt* stmt = m.erase ? erase_ : put_;
    BindText(stmt, 1, ToString(m.collection));
    BindText(stmt, 2, m.key);
    if (!m.erase) BindText(stmt, 3, m.value);
    if (Status status = Step(stmt); !status.ok()) {
      (void)Step(rollback_);
      return status;
    }
  }
  if (Status status = Step(commit_); !status.ok()) {
    (void)Step(rollback_);  // a failed COMMIT (disk full, I/O error) leaves the transaction open
    return status;
  }
  return Status::Ok();
}

Result<std::vector<Entry>> SqliteStore::List(Collection collection) {
  Statement select(db_, "SELECT key, value FROM objects WHERE collection = ?1 ORDER BY key");
  BindText(select.get(), 1, ToString(collection));
  std::vector<Entry> entries;
  int rc;
  while ((rc = sqlite3_step(select.get())) == SQLITE_ROW) {
    entries.push_back({reinterpret_cast<const char*>(sqlite3_column_text(select.get(), 0)),
                       reinterpret_cast<const char*>(sqlite3_column_text(select.get(), 1))});
  }
  if (rc != SQLITE_DONE) return Internal("state database " + path_ + ": " + sqlite3_errmsg(db_));
  return entries;
}

}  // namespace tessera::store

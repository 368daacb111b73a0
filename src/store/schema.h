// The versioned schema of the store and its migrations.
//
// The schema version lives in table `meta` (key 'schema_version'). Migration N (1-based) takes
// the database from version N-1 to N; each runs in its own transaction together with the version
// bump, so a crash leaves the database at a whole version. Migrations are append-only: a released
// step is never edited, a change is a new step (docs/store.md).
#pragma once

#include <span>
#include <string_view>

#include "core/status.h"
#include "store/db.h"

namespace rota::store {

// The migrations this build knows, oldest first. kMigrations()[i] produces version i + 1.
std::span<const std::string_view> Migrations();

// The version this build writes: Migrations().size().
int LatestSchemaVersion();

// The version recorded in `db`; 0 for an empty database (no `meta` table).
StatusOr<int> SchemaVersion(Db& db);

// Brings `db` up to steps.size(), applying the missing steps in order. A database whose version
// is newer than steps.size() is refused with FailedPrecondition (a newer rotad wrote it; running
// an older one could corrupt it) and left untouched.
Status Migrate(Db& db, std::span<const std::string_view> steps);
inline Status Migrate(Db& db) { return Migrate(db, Migrations()); }

}  // namespace rota::store

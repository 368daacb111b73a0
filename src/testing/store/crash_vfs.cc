#include "testing/store/crash_vfs.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <set>

namespace rota::testing {

// A file as SQLite holds it: this header, then the real VFS's file.
struct CrashVfs::File {
  sqlite3_file base;  // first: SQLite sees a sqlite3_file
  CrashVfs* owner = nullptr;
  std::string path;  // "" for SQLite's temporary files (never tracked: they do not survive)
  sqlite3_file* real = nullptr;
};

namespace {

constexpr std::size_t kRealOffset = (sizeof(CrashVfs::File) + 15) & ~std::size_t{15};
constexpr std::int64_t kSector = 512;

CrashVfs* Owner(sqlite3_vfs* vfs) { return static_cast<CrashVfs*>(vfs->pAppData); }
CrashVfs::File* Of(sqlite3_file* f) { return reinterpret_cast<CrashVfs::File*>(f); }
sqlite3_file* Real(sqlite3_file* f) { return Of(f)->real; }

// --- the file's methods: through to the real file, writes remembered ---

int Close(sqlite3_file* f) {
  CrashVfs::File* file = Of(f);
  const int rc = file->real->pMethods ? file->real->pMethods->xClose(file->real) : SQLITE_OK;
  file->~File();
  return rc;
}

int Read(sqlite3_file* f, void* buf, int amount, sqlite3_int64 offset) {
  return Real(f)->pMethods->xRead(Real(f), buf, amount, offset);
}

int FileSize(sqlite3_file* f, sqlite3_int64* size) { return Real(f)->pMethods->xFileSize(Real(f), size); }

// The bytes [offset, offset + n) that are within the file now.
std::string Before(sqlite3_file* real, sqlite3_int64 offset, sqlite3_int64 n, sqlite3_int64 size) {
  if (offset >= size) return {};
  std::string bytes(static_cast<std::size_t>(std::min(n, size - offset)), '\0');
  real->pMethods->xRead(real, bytes.data(), static_cast<int>(bytes.size()), offset);
  return bytes;
}

int Write(sqlite3_file* f, const void* buf, int amount, sqlite3_int64 offset) {
  CrashVfs::File* file = Of(f);
  if (!file->owner->Operation()) return SQLITE_IOERR_WRITE;
  if (!file->path.empty()) {
    sqlite3_int64 size = 0;
    if (int rc = FileSize(f, &size); rc != SQLITE_OK) return rc;
    CrashVfs::Change c;
    c.offset = offset;
    c.old_size = size;
    c.before = Before(file->real, offset, amount, size);
    c.data.assign(static_cast<const char*>(buf), static_cast<std::size_t>(amount));
    file->owner->Record(file->path, std::move(c));
  }
  return file->real->pMethods->xWrite(file->real, buf, amount, offset);
}

int Truncate(sqlite3_file* f, sqlite3_int64 size) {
  CrashVfs::File* file = Of(f);
  if (!file->owner->Operation()) return SQLITE_IOERR_TRUNCATE;
  if (!file->path.empty()) {
    sqlite3_int64 old_size = 0;
    if (int rc = FileSize(f, &old_size); rc != SQLITE_OK) return rc;
    CrashVfs::Change c;
    c.truncate = true;
    c.offset = size;
    c.old_size = old_size;
    c.before = Before(file->real, size, old_size - size, old_size);
    file->owner->Record(file->path, std::move(c));
  }
  return file->real->pMethods->xTruncate(file->real, size);
}

// Not passed to the disk: what a sync makes durable is what CrashVfs keeps at the cut.
int Sync(sqlite3_file* f, int /*flags*/) {
  CrashVfs::File* file = Of(f);
  if (!file->owner->Operation()) return SQLITE_IOERR_FSYNC;
  if (!file->path.empty()) file->owner->Synced(file->path);
  return SQLITE_OK;
}

int Lock(sqlite3_file* f, int level) { return Real(f)->pMethods->xLock(Real(f), level); }
int Unlock(sqlite3_file* f, int level) { return Real(f)->pMethods->xUnlock(Real(f), level); }
int CheckReservedLock(sqlite3_file* f, int* out) {
  return Real(f)->pMethods->xCheckReservedLock(Real(f), out);
}

int FileControl(sqlite3_file* f, int op, void* arg) {
  // A size hint may make the unix VFS grow the file itself, past Write: hints are optional.
  if (op == SQLITE_FCNTL_SIZE_HINT) return SQLITE_OK;
  return Real(f)->pMethods->xFileControl(Real(f), op, arg);
}

int SectorSize(sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); }
int DeviceCharacteristics(sqlite3_file* f) { return Real(f)->pMethods->xDeviceCharacteristics(Real(f)); }

int ShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
  return Real(f)->pMethods->xShmMap(Real(f), region, size, extend, out);
}
int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return Real(f)->pMethods->xShmLock(Real(f), offset, n, flags);
}
void ShmBarrier(sqlite3_file* f) { Real(f)->pMethods->xShmBarrier(Real(f)); }
int ShmUnmap(sqlite3_file* f, int delete_flag) { return Real(f)->pMethods->xShmUnmap(Real(f), delete_flag); }
int Fetch(sqlite3_file* f, sqlite3_int64 offset, int amount, void** out) {
  return Real(f)->pMethods->xFetch(Real(f), offset, amount, out);
}
int Unfetch(sqlite3_file* f, sqlite3_int64 offset, void* p) {
  return Real(f)->pMethods->xUnfetch(Real(f), offset, p);
}

const sqlite3_io_methods kMethods = {3,
                                     Close,
                                     Read,
                                     Write,
                                     Truncate,
                                     Sync,
                                     FileSize,
                                     Lock,
                                     Unlock,
                                     CheckReservedLock,
                                     FileControl,
                                     SectorSize,
                                     DeviceCharacteristics,
                                     ShmMap,
                                     ShmLock,
                                     ShmBarrier,
                                     ShmUnmap,
                                     Fetch,
                                     Unfetch};

// --- the VFS's methods ---

int Open(sqlite3_vfs* vfs, sqlite3_filename name, sqlite3_file* f, int flags, int* out_flags) {
  CrashVfs* owner = Owner(vfs);
  auto* file = new (f) CrashVfs::File();
  file->owner = owner;
  file->real = reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(f) + kRealOffset);
  std::memset(file->real, 0, static_cast<std::size_t>(owner->real()->szOsFile));
  const int rc = owner->real()->xOpen(owner->real(), name, file->real, flags, out_flags);
  if (rc != SQLITE_OK || file->real->pMethods == nullptr) {
    file->~File();
    f->pMethods = nullptr;
    return rc == SQLITE_OK ? SQLITE_CANTOPEN : rc;
  }
  if (name != nullptr && (flags & SQLITE_OPEN_DELETEONCLOSE) == 0) file->path = name;
  if (!file->path.empty() && (flags & SQLITE_OPEN_MAIN_DB) != 0) owner->OpenedDatabase(file->path);
  f->pMethods = &kMethods;
  return SQLITE_OK;
}

int Delete(sqlite3_vfs* vfs, const char* name, int sync_dir) {
  CrashVfs* owner = Owner(vfs);
  if (!owner->Operation()) return SQLITE_IOERR_DELETE;
  owner->Deleted(name);
  return owner->real()->xDelete(owner->real(), name, sync_dir);
}

int Access(sqlite3_vfs* vfs, const char* name, int flags, int* out) {
  return Owner(vfs)->real()->xAccess(Owner(vfs)->real(), name, flags, out);
}
int FullPathname(sqlite3_vfs* vfs, const char* name, int n, char* out) {
  return Owner(vfs)->real()->xFullPathname(Owner(vfs)->real(), name, n, out);
}
void* DlOpen(sqlite3_vfs* vfs, const char* name) {
  return Owner(vfs)->real()->xDlOpen(Owner(vfs)->real(), name);
}
void DlError(sqlite3_vfs* vfs, int n, char* out) { Owner(vfs)->real()->xDlError(Owner(vfs)->real(), n, out); }
void (*DlSym(sqlite3_vfs* vfs, void* handle, const char* symbol))(void) {
  return Owner(vfs)->real()->xDlSym(Owner(vfs)->real(), handle, symbol);
}
void DlClose(sqlite3_vfs* vfs, void* handle) { Owner(vfs)->real()->xDlClose(Owner(vfs)->real(), handle); }
int Randomness(sqlite3_vfs* vfs, int n, char* out) {
  return Owner(vfs)->real()->xRandomness(Owner(vfs)->real(), n, out);
}
int Sleep(sqlite3_vfs* vfs, int micros) { return Owner(vfs)->real()->xSleep(Owner(vfs)->real(), micros); }
int CurrentTime(sqlite3_vfs* vfs, double* out) {
  return Owner(vfs)->real()->xCurrentTime(Owner(vfs)->real(), out);
}
int GetLastError(sqlite3_vfs* vfs, int n, char* out) {
  return Owner(vfs)->real()->xGetLastError(Owner(vfs)->real(), n, out);
}
int CurrentTimeInt64(sqlite3_vfs* vfs, sqlite3_int64* out) {
  return Owner(vfs)->real()->xCurrentTimeInt64(Owner(vfs)->real(), out);
}

// --- putting a file back after the power failure ---

bool WriteAt(int fd, const std::string& bytes, std::int64_t offset) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n =
        ::pwrite(fd, bytes.data() + done, bytes.size() - done, offset + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// Undoes `changes` (newest first), leaving the file as it was at its last sync.
bool Undo(int fd, const std::vector<CrashVfs::Change>& changes) {
  for (auto c = changes.rbegin(); c != changes.rend(); ++c) {
    if (c->truncate) {
      if (::ftruncate(fd, c->old_size) != 0 || !WriteAt(fd, c->before, c->offset)) return false;
    } else {
      if (!WriteAt(fd, c->before, c->offset) || ::ftruncate(fd, c->old_size) != 0) return false;
    }
  }
  return true;
}

bool Redo(int fd, const CrashVfs::Change& c) {
  return c.truncate ? ::ftruncate(fd, c.offset) == 0 : WriteAt(fd, c.data, c.offset);
}

// Some of a write's 512-byte sectors (by their place in the file), each kept at random.
bool RedoTorn(int fd, const CrashVfs::Change& c, std::mt19937_64& rng) {
  const std::int64_t end = c.offset + static_cast<std::int64_t>(c.data.size());
  for (std::int64_t at = c.offset; at < end;) {
    const std::int64_t next = std::min(end, (at / kSector + 1) * kSector);
    if (rng() % 2 == 0 &&
        !WriteAt(fd,
                 c.data.substr(static_cast<std::size_t>(at - c.offset), static_cast<std::size_t>(next - at)),
                 at)) {
      return false;
    }
    at = next;
  }
  return true;
}

}  // namespace

CrashVfs::CrashVfs() {
  real_ = sqlite3_vfs_find(nullptr);
  vfs_.iVersion = 3;
  vfs_.szOsFile = static_cast<int>(kRealOffset) + real_->szOsFile;
  vfs_.mxPathname = real_->mxPathname;
  vfs_.zName = "rota-crash";
  vfs_.pAppData = this;
  vfs_.xOpen = Open;
  vfs_.xDelete = Delete;
  vfs_.xAccess = Access;
  vfs_.xFullPathname = FullPathname;
  vfs_.xDlOpen = DlOpen;
  vfs_.xDlError = DlError;
  vfs_.xDlSym = DlSym;
  vfs_.xDlClose = DlClose;
  vfs_.xRandomness = Randomness;
  vfs_.xSleep = Sleep;
  vfs_.xCurrentTime = CurrentTime;
  vfs_.xGetLastError = GetLastError;
  vfs_.xCurrentTimeInt64 = CurrentTimeInt64;
  sqlite3_vfs_register(&vfs_, 1);
}

CrashVfs::~CrashVfs() {
  sqlite3_vfs_unregister(&vfs_);
  sqlite3_vfs_register(real_, 1);
}

void CrashVfs::CutAt(std::int64_t n) { cut_at_ = n > 0 ? operations_ + n : 0; }

bool CrashVfs::Operation() {
  if (cut_) return false;
  ++operations_;
  if (cut_at_ > 0 && operations_ >= cut_at_) cut_ = true;
  return !cut_;
}

std::string CrashVfs::PowerReturns(Loss loss, std::mt19937_64& rng) {
  std::int64_t last = 0;
  for (const auto& [path, changes] : unsynced_) last = std::max(last, changes.back().sequence);
  std::string error;
  for (const auto& [path, changes] : unsynced_) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) continue;  // deleted by hand since: nothing to put back
      error = path + ": " + std::strerror(errno);
      break;
    }
    bool ok = Undo(fd, changes);
    for (const Change& c : changes) {
      if (!ok) break;
      if (loss == Loss::kSomeUnsynced && rng() % 2 == 0) ok = Redo(fd, c);
      if (loss == Loss::kTornLast && c.sequence == last && !c.truncate) ok = RedoTorn(fd, c, rng);
    }
    if (!ok) error = path + ": " + std::strerror(errno);
    ::close(fd);
    if (!error.empty()) break;
  }
  for (const std::string& main : databases_) {
    if (::unlink((main + "-shm").c_str()) != 0 && errno != ENOENT && error.empty()) {
      error = main + "-shm: " + std::strerror(errno);
    }
  }
  unsynced_.clear();
  operations_ = 0;
  cut_at_ = 0;
  cut_ = false;
  return error;
}

}  // namespace rota::testing

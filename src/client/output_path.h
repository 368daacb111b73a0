// Whether a batch job's output file can be opened when the job starts, judged by `rota submit`
// as the submitting user (the shepherd opens it as that user, O_APPEND | O_CREAT | O_NOFOLLOW).
#pragma once

#include <string>

#include "core/status.h"

namespace rota::client {

// `output` as given to --output ("" for the default rota-%j.out), relative to `cwd` (absolute).
// InvalidArgument, one line saying what to do, when the job could not open it: its directory is
// missing or not writable by the caller, or the file is a directory, a symbolic link or not
// writable by the caller. A directory part with %j in it is not judged (it names no directory yet).
Status CheckOutputPath(const std::string& output, const std::string& cwd);

}  // namespace rota::client

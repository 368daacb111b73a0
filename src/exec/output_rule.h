// What may be a job's output (docs/security.md, Outputs): a regular file of the job's owner that
// others may not write, or a character device such as /dev/null (users cannot make devices). Job
// ids are predictable, so another user may lay something at rota-<id>.out first in a directory
// both can write: their file, a file everyone may write, a named pipe or socket (whose reader
// would get the output), or a link. The one rule for the shepherd (after its open, the local
// engine's jobs) and for the child that runs sbatch (before it, the Slurm engine's).
//
// Pure, with no allocation: it runs in a child forked from rotad's threads. Tested by
// output_rule_test.cc, and with real users by tests/daemon/test_attacks_jobs.py.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

namespace rota::exec {

enum class OutputFault { kNone, kLink, kPipe, kNeither, kOthersFile, kWorldWritable };

// Of what stat says of the path (lstat: a link is a fault; fstat of an O_NOFOLLOW open never
// sees one) for a job of `owner`.
OutputFault JudgeOutput(const struct stat& st, uid_t owner);
// "is a named pipe", "belongs to another user: someone else made it", ...; "" for kNone.
const char* OutputFaultWords(OutputFault f);
// What an output may be, for the end of a refusal.
inline constexpr const char* kOutputKinds =
    "a job's output is a file of its owner's, or a device such as /dev/null";

}  // namespace rota::exec

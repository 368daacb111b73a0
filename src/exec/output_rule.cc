#include "exec/output_rule.h"

namespace rota::exec {

OutputFault JudgeOutput(const struct stat& st, uid_t owner) {
  if (S_ISLNK(st.st_mode)) return OutputFault::kLink;
  if (S_ISFIFO(st.st_mode)) return OutputFault::kPipe;
  if (S_ISCHR(st.st_mode)) return OutputFault::kNone;
  if (!S_ISREG(st.st_mode)) return OutputFault::kNeither;
  if (st.st_uid != owner) return OutputFault::kOthersFile;
  if ((st.st_mode & S_IWOTH) != 0) return OutputFault::kWorldWritable;
  return OutputFault::kNone;
}

const char* OutputFaultWords(OutputFault f) {
  switch (f) {
    case OutputFault::kNone:
      return "";
    case OutputFault::kLink:
      return "is a symbolic link";
    case OutputFault::kPipe:
      return "is a named pipe";
    case OutputFault::kNeither:
      return "is neither a file nor a device";
    case OutputFault::kOthersFile:
      return "belongs to another user: someone else made it";
    case OutputFault::kWorldWritable:
      return "is writable by everyone";
  }
  return "";
}

}  // namespace rota::exec

// Files the build ships beside the programs (the web page, the price table): where a rotad finds
// them when the configuration names none. The build's own path (the source tree, compiled in)
// where it exists, else <rotad's directory>/../share/rota/<name>: /usr/share/rota for a package's
// /usr/sbin/rotad, /usr/local/share/rota for a copy in /usr/local/sbin. A package built from an
// existing build therefore needs no rebuild with other paths.
#pragma once

#include <string>

namespace rota::daemon {

// The directory of this program's executable (/proc/self/exe); "." when it cannot be read.
std::string ProgramDir();

// `built_in`: the compiled-in path; `name`: the file's or directory's name under share/rota.
std::string ShippedPath(const std::string& built_in, const std::string& name);

}  // namespace rota::daemon

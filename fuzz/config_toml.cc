// Fuzz target: rotad's configuration file (TOML, config/config.h ParseConfig), as an admin or a
// package might write it. Properties: no crash; a refused file says why; an accepted one can be
// summarised and checked for warnings as `rota config check` does.
#include "config/config.h"
#include "fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rota;
  const rota::StatusOr<config::Config> config = config::ParseConfig(fuzz::Text(data, size), "fuzz.toml");
  if (!config.ok()) {
    fuzz::Require(!config.status().message().empty(), "a refused configuration says why");
    return 0;
  }
  fuzz::Require(!config::Summary(*config).empty(), "an accepted configuration has a summary");
  (void)config::Warnings(*config, 64 * 1024);
  return 0;
}

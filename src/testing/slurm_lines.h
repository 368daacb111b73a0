// One line of a Slurm tool's delimited output (`-O "Field:0<delim>,..."`) for the adapter's tests:
// each value followed by the delimiter, as Slurm writes it.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace rota::testing {

inline std::string SlurmLine(std::initializer_list<std::string_view> values, char delim) {
  std::string out;
  for (std::string_view v : values) {
    out += v;
    out += delim;
  }
  return out + "\n";
}

}  // namespace rota::testing

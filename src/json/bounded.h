// JSON read with a bound on nesting: every JSON text that rotad, the shepherd or the command
// line reads from outside itself (a request line, an HTTP body or query value, a state file, a
// webhook's answer, a stored column) is parsed here, never with a bare json::parse.
//
// Why: nlohmann::json parses and destroys iteratively, but copying a value and dump() recurse.
// A 200 KB line of nested arrays parses fine and then overflows the stack of whoever copies or
// echoes it (docs/security.md, "Deep JSON"). Refusing deep texts right after reading them makes
// every later copy and dump safe: nothing the daemon builds itself nests deeper than a few levels.
//
// Contract: ParseJson succeeds only for a complete JSON text whose arrays and objects nest at
// most `max_depth` levels (the outermost array or object is level 1; scalars are level 0). The
// text is scanned once by a counting SAX pass that stops at the first level too deep (so a deep
// text costs no more than its prefix), then parsed. Errors are InvalidArgument with a one-line
// message; nothing throws.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "core/status.h"

namespace rota {

// Deep enough for every document of the API and the state files (the deepest, a job's record
// in a reply, nests five levels); shallow enough that copying and dumping never come near the
// stack's end, on the event loop or on an HTTP worker.
inline constexpr int kMaxJsonDepth = 32;

// Which numbers written with a fraction or an exponent (floats) a reader accepts. A float read
// into a C++ integer (a member read with value("x", 0) or get<int>()) that the integer cannot
// hold is undefined behaviour, not an exception: requests and the shepherd's files, whose
// members are all read as integers, take kWithinInt32 (fuzz/shepherd_files found 4.9e56 read
// as a long). Whole numbers without a fraction or exponent are integers to nlohmann and are
// never refused here.
enum class JsonFloats { kAny, kWithinInt32 };

StatusOr<nlohmann::json> ParseBoundedJson(std::string_view text, int max_depth = kMaxJsonDepth,
                                          JsonFloats floats = JsonFloats::kAny);

// How deep `value` nests (0 for a scalar), without recursion: for values not built by ParseJson.
int JsonDepth(const nlohmann::json& value);

}  // namespace rota

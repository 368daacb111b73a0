// Job traces: loading a CSV of past jobs into the simulator's input.
//
// A trace is a CSV file with a header. The caller says which of its columns hold our fields, either
// through a preset for a known public trace (--format philly, --format alibaba) or column by column
// (--columns submit=timestamp,duration=runtime,gpus=num_gpus), or both (the columns override the
// preset's). Time columns hold either seconds or UTC dates; which one is decided by the first
// value read and then required of every other row. Errors name the file, line and column.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/types.h"

namespace rota::sim {

// One job of a trace.
struct TraceJob {
  std::int64_t line = 0;        // 1-based line number in the file (the header is line 1)
  rota::Time submit = 0;        // Unix epoch seconds (UTC) when the column held dates, else the
                                // raw number of seconds (fractions rounded down)
  rota::Duration duration = 0;  // actual run time in seconds, >= 1 (fractions rounded up, 0 -> 1)
  int gpus = 0;                 // whole GPUs; 0 when the job is a share of one GPU
  double gpu_fraction = 0;      // in (0,1) for a share of one GPU, else 0
  rota::MiB memory = 0;         // a share of this much memory instead of the fraction (a store replay)
  std::string mig_profile;      // a MIG slice of this profile instead (a store replay); "": none
  std::string user;             // may be empty
  std::string project;          // may be empty
  std::string tier;             // "thesis", "regular", "explore" or empty
  std::string name;             // the job's name or command, where recorded: runtime prediction's key
  rota::Duration limit = 0;     // the time limit it asked for, where recorded (a store replay, a
                                // trace's limit column); 0: none
  std::int64_t id = 0;              // the job's id where recorded (a store replay); 0: none
  std::vector<std::int64_t> after;  // ids of jobs it started only after (--after, --after-ok)
};

struct TraceOptions {
  // "" (use `columns` only), "philly" or "alibaba".
  std::string format;
  // Our field -> the file's column name. Keys: submit, duration, gpus, gpu_milli, user, project,
  // tier, end, start, name, limit (seconds). Overrides the preset's mapping; an empty column name unmaps the field.
  std::map<std::string, std::string> columns;
  // Keep only rows whose COLUMN holds exactly VALUE (raw text, before parsing); all must match.
  std::vector<std::pair<std::string, std::string>> filters;
};

struct Trace {
  std::vector<TraceJob> jobs;   // sorted by submit; ties keep file order
  bool absolute_times = false;  // submit values are epoch seconds (the file held dates)
  std::int64_t skipped = 0;     // rows dropped: without GPUs, or (alibaba only) never scheduled
                                // or ending before they start. Filtered-out rows are not counted.
  std::vector<std::string>
      notes;  // one line per kind of skip, e.g. "1088 rows without GPUs skipped"
};

// The field names accepted as keys of TraceOptions::columns, in a fixed order.
const std::vector<std::string>& TraceFieldNames();

// Parses "--columns" text "field=column,field=column" into a copy of `base` whose mapping gains
// (or overrides) those entries. Unknown field names are an error listing the known ones.
rota::StatusOr<TraceOptions> ParseColumnsFlag(std::string_view text, TraceOptions base);

// Parses "--filter" text "COLUMN=VALUE" (split at the first '='; VALUE may be empty).
rota::StatusOr<std::pair<std::string, std::string>> ParseFilterFlag(std::string_view text);

// Reads and parses the trace file at `path`; error messages start with "path:line:".
rota::StatusOr<Trace> LoadTrace(const std::string& path, const TraceOptions& options);

// Parses trace text already in memory; error messages start with "<trace>:line:".
rota::StatusOr<Trace> ParseTrace(std::string_view csv_text, const TraceOptions& options);

// Parses "YYYY-MM-DD HH:MM:SS", "YYYY-MM-DDTHH:MM:SS" or "YYYY-MM-DD HH:MM" as a UTC time and
// returns epoch seconds. Rejects impossible dates (month 13, February 30) and times (24:00).
std::optional<rota::Time> ParseDateTimeUtc(std::string_view text);

}  // namespace rota::sim

// The adapter between the system's tz database and the core's Zone: reads a zone such as
// "Europe/Berlin" from its TZif file (RFC 8536; /usr/share/zoneinfo, or $TZDIR) into the
// offsets and transitions the core computes with. The core never reads a file or a clock; this
// is read once per configuration load.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "core/zone.h"

namespace rota::config {

// $TZDIR when set, else /usr/share/zoneinfo.
std::string ZoneDir();

// The zone `name` of the tz database in `dir`: its transitions from 1970 to 2100 (those of the
// file's table, then of the rule its footer gives for the years after it). NotFound for a name
// the database does not hold; InvalidArgument for a name that is not one ("../etc/passwd",
// "/etc/localtime") or a file that is not TZif.
StatusOr<Zone> LoadZone(std::string_view name, const std::string& dir = ZoneDir());

// The zone from its TZif bytes (what LoadZone reads), named `name`.
StatusOr<Zone> ZoneFromTzif(std::string_view name, std::string_view bytes);

// The zone of a POSIX TZ rule ("CET-1CEST,M3.5.0,M10.5.0/3", "PST8PDT,M3.2.0,M11.1.0", "JST-9"),
// as the C library reads $TZ when it names no file. InvalidArgument for text that is not one.
StatusOr<Zone> ZoneFromPosixRule(std::string_view rule);

// The zone this process's C library shows local time in: $TZ (a zone name, ":name", or a POSIX
// rule), else /etc/localtime; UTC when neither can be read (as the C library falls back).
// For front ends that show times in the machine's zone when the server names none.
Zone LocalZone(const std::string& dir = ZoneDir());

}  // namespace rota::config

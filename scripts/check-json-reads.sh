#!/usr/bin/env bash
# Every JSON text a Rota program reads from outside itself goes through ParseBoundedJson
# (src/json/bounded.h), which refuses deep nesting before anything copies or dumps the value
# recursively (docs/security.md, "Deep JSON"). This check keeps bare json::parse out of the
# product's sources; tests and the fake NVML (src/testing) may parse what they wrote themselves.
set -euo pipefail
cd "$(dirname "$0")/.."
if grep -rnE '(json::parse|json::sax_parse|json::from_(cbor|msgpack|bson|ubjson|bjdata))\(' src \
    --include=*.cc --include=*.h | grep -vE '_test\.cc:|^src/testing/|^src/json/bounded\.cc:'; then
  echo "error: JSON read without the depth bound; use ParseBoundedJson (src/json/bounded.h)" >&2
  exit 1
fi
echo "check-json-reads: every JSON text is read through ParseBoundedJson"

#!/bin/sh
# make-fixture.sh QUENCH OUT: writes a little history with QUENCH (a `quench` built at an older
# commit, see MANIFEST) into the new database OUT, through that version's own commands only.
# The file is first made empty with 512-byte pages (sqlite3), so the fixture stays a few KB;
# everything in it is then written by the old quench.
set -eu
q=$1 out=$2
trace=${TRACE:-../shared/traces/real/coffee-pot/pot-lift-replace-pour-49s.csv}
rm -f "$out" "$out-wal" "$out-shm"
sqlite3 "$out" "PRAGMA page_size = 512; VACUUM;"
chmod 600 "$out"
export TZ=UTC
"$q" goal set 2000ml --db "$out" >/dev/null
"$q" add 250ml --at '2026-11-20 08:00' --note tea --db "$out" >/dev/null
"$q" add 330ml --at '2026-11-20 12:30' --db "$out" >/dev/null
"$q" add 0.5l --at '2026-11-21 09:15' --note 'café ☕' --db "$out" >/dev/null
"$q" add 200ml --at '2026-11-21 18:00' --db "$out" >/dev/null
"$q" delete 4 --db "$out" >/dev/null
"$q" settings --units oz --day-start 5 --db "$out" >/dev/null
# A reminder policy (schema v4 on), where this version has one.
if "$q" --help | grep -q "^  remind "; then
  "$q" remind set --mode hourly --window 07:30-21:00 --every 90min --db "$out" >/dev/null
fi
# A second person with a drink of their own (schema v7 on).
if "$q" --help | grep -q "^  person "; then
  "$q" person add ann --db "$out" >/dev/null
  "$q" add 150ml --at '2026-11-21 10:00' --person ann --db "$out" >/dev/null
fi
# A sensor's events, where this version can store a replay.
if "$q" replay --help 2>/dev/null | grep -q -- '--store'; then
  "$q" replay "$trace" --store --device C4:7C:8D:6A:12:34 --db "$out" >/dev/null 2>&1 \
    || "$q" replay "$trace" --store --db "$out" >/dev/null
fi
test ! -e "$out-wal" || { echo "make-fixture: $out-wal left behind" >&2; exit 1; }
sqlite3 "$out" "SELECT 'events', count(*) FROM intake_event; PRAGMA user_version;" | tr '\n' ' '
echo

#!/usr/bin/env bash
# CLI test of damaged sessions (docs/schema.md, "Damaged sessions"), one or more cases per class of
# damage, each with its exact outcome: rows that break the schema are left out by every reader,
# counted by `warplens info` and listed by `warplens info --check`, and a verb notes them in one
# line; a damaged structure or file fails every verb with one line that says what to do. Every
# read verb ends on every damaged session, with status 0 or 1 and, when it fails, one line. The
# `timeout` only keeps a hang from stalling CI (a hang check, not a speed check: verbs take
# milliseconds here).
set -u
BIN=${WARPLENS_BIN:?WARPLENS_BIN not set}
SRC=${WARPLENS_SOURCE_DIR:?WARPLENS_SOURCE_DIR not set}
DATA=${WARPLENS_TEST_DATA:-$SRC/tests/data}
. "$(dirname "$0")/checks.sh"

# run_verbs SESSION WHAT: every read verb ends (no hang), exit status 0 or 1, and a failure says
# why in one line.
run_verbs() {
    local s=$1 what=$2 v rc lines
    local verbs=("stats" "stats --csv" "info" "info --check" "kernels" "kernels --json" "kernels --calls"
        "kernels --stalls" "kernel 1" "ranges" "ranges --instances --json" "samples" "samples --pm" "concurrency"
        "concurrency --series" "throughput" "occupancy-check" "export -o $tmp/t.pftrace"
        "export --format json -o $tmp/t.json" "report -o $tmp/t.html")
    for v in "${verbs[@]}"; do
        read -r -a args <<<"$v"
        timeout 120 "$BIN" "${args[0]}" "$s" "${args[@]:1}" >/dev/null 2>"$tmp/err"
        rc=$?
        check '[ $rc -ne 124 ]' "$what: warplens $v did not end"
        # (2: `kernel 1` when the damage left no kernel 1, as for any id the session lacks)
        check '[ $rc -eq 0 ] || [ $rc -eq 1 ] || { [ $rc -eq 2 ] && [ "$v" = "kernel 1" ]; }' \
            "$what: warplens $v exit status $rc: $(head -3 "$tmp/err")"
        lines=$(wc -l <"$tmp/err")
        # (info --check and occupancy-check: status 1 with the problems on stdout is their verdict)
        case $v in "info --check" | occupancy-check) [ "$lines" = 0 ] && lines=1 ;; esac
        check '[ $rc -eq 0 ] || [ "$lines" -eq 1 ]' "$what: warplens $v failed with $lines lines: $(head -3 "$tmp/err")"
    done
}

# damaged NAME SQL: a copy of the demo session with SQL applied
damaged() {
    cp "$DATA/demo-h100.wlsession" "$1.wlsession"
    sqlite3 "$1.wlsession" "$2"
}

# rows_left_out NAME NOTE COUNT: stats succeeds with exactly the note, info counts the rows,
# info --check lists them and fails
rows_left_out() {
    local s=$1.wlsession first=$2 count=$3 out err
    out=$("$BIN" stats "$s" 2>"$tmp/err")
    rc=$?
    check '[ $rc -eq 0 ] && [ -n "$out" ]' "$1: stats status"
    err=$(cat "$tmp/err")
    local want="warplens: note: $s is damaged: every reader left out $count ($first), as breaking the session's"
    want+=" schema; \`warplens info --check $s\` lists them"
    check '[ "$err" = "$want" ]' "$1: stats note: $err (want: $want)"
    "$BIN" info "$s" >"$tmp/info" 2>/dev/null
    check 'grep -q "^damaged   ${count%% (*} left out by every reader" "$tmp/info"' "$1: info: $(grep damaged "$tmp/info")"
    "$BIN" info --check "$s" >"$tmp/check"
    rc=$?
    check '[ $rc -eq 1 ]' "$1: info --check status"
    check 'grep -qF "  ${first#*: }" "$tmp/check" || grep -qF "${first#* row }" "$tmp/check"' \
        "$1: info --check does not list '$first': $(cat "$tmp/check")"
}

# ---- the hang of issue 18: one text value where api_call.pid's integer belongs --------------
# (every verb walking API calls per thread sought the same row forever)
damaged textpid "UPDATE api_call SET pid = '' WHERE rowid = (SELECT min(rowid) FROM api_call)"
rows_left_out textpid "api_call 1; first: api_call row 1: pid is text '', not an integer" "1 row"
check '[ "$(q textpid.wlsession "SELECT count(*) FROM api_call") " = "$("$BIN" stats textpid.wlsession --csv --only api 2>/dev/null |
    awk -F, "NR > 1 { n += \$3 } END { print n + 1, \"\" }")" ]' "textpid: API calls counted without the damaged row"
run_verbs textpid.wlsession "text pid"

# ---- ids damaged into one thread per row --------------------------------------------------------
# Sound rows, but 423 threads: past the reader's per-thread statements (256) the API calls come
# from one sorted statement, and the exporters find tracks by key; every call is still exported
# once, with its flows (readers whose work grew with the square of the threads never ended here
# on large sessions: bench/results/export.txt has the times).
cp "$DATA/demo-h100.wlsession" threads.wlsession
sqlite3 threads.wlsession "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
    INSERT INTO api_call SELECT 100000 + i, a.pid, 100000 + i, a.domain, a.cbid, a.name, a.category, a.correlation_id,
    a.start_ns, a.end_ns, a.duration_ns, a.return_value, a.scope_id FROM n,
    (SELECT * FROM api_call WHERE category NOT IN ('launch', 'graph_launch') LIMIT 1) a;
    UPDATE api_call SET tid = id WHERE id < 100000"
"$BIN" export "$DATA/demo-h100.wlsession" -o "$tmp/sound.json" >"$tmp/sound.out"
"$BIN" export threads.wlsession -o "$tmp/threads.json" >"$tmp/threads.out"
rc=$?
sound_slices=$(sed -n 's/.*: \([0-9]*\) slices, \([0-9]*\) flows.*/\1 \2/p' "$tmp/sound.out")
threads_slices=$(sed -n 's/.*: \([0-9]*\) slices, \([0-9]*\) flows.*/\1 \2/p' "$tmp/threads.out")
check '[ $rc -eq 0 ] && [ "$threads_slices" = "$((${sound_slices% *} + 300)) ${sound_slices#* }" ]' \
    "threads: export: $threads_slices slices and flows (sound: $sound_slices, want 300 more slices, the same flows)"
check '[ "$(python3 -c "import json,sys; e=json.load(open(sys.argv[1]))[\"traceEvents\"]; print(len({x[\"tid\"] for x in e if x.get(\"ph\") == \"X\" and x.get(\"cat\") == \"cuda_api\"}))" "$tmp/threads.json")" = 423 ]' \
    "threads: the API calls on 423 thread tracks"
check '[ "$("$BIN" stats threads.wlsession --csv --only api 2>/dev/null | awk -F, "NR > 1 { n += \$3 } END { print n }")" = 423 ]' \
    "threads: stats counts the 423 API calls"
run_verbs threads.wlsession "one thread per API call"

# ---- a value of the wrong type ----------------------------------------------------------------
damaged realtid "UPDATE api_call SET tid = 1.5 WHERE id = 7"
rows_left_out realtid "api_call 1; first: api_call row 7: tid is the real 1.5, not an integer" "1 row"
damaged blobdim "UPDATE kernel SET grid_x = x'00ff' WHERE id = 2"
rows_left_out blobdim "kernel 1; first: kernel row 2: grid_x is a blob of 2 bytes, not an integer" "1 row"

# ---- NULL where the schema says NOT NULL (a table re-made without its constraints) -----------
damaged nulls "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = replace(sql, 'duration_ns INTEGER NOT NULL,',
    'duration_ns INTEGER,') WHERE name = 'api_call'"
sqlite3 nulls.wlsession "UPDATE api_call SET duration_ns = NULL WHERE id = 5"
rows_left_out nulls "api_call 1; first: api_call row 5: duration_ns is NULL (the schema says NOT NULL)" "1 row"

# ---- out of range: a negative duration, a time before the session, a count near 2^63 ---------
damaged negdur "UPDATE kernel SET duration_ns = -5 WHERE id = 3"
rows_left_out negdur "kernel 1; first: kernel row 3: duration_ns is -5, below 0" "1 row"
# the total GPU time is that of the other kernels, not one 5 ns short
want=$(q negdur.wlsession "SELECT sum(duration_ns) FROM kernel WHERE id != 3 AND has_timestamps")
got=$("$BIN" stats negdur.wlsession --csv --only kernels 2>/dev/null | python3 -c '
import csv, sys
rows = list(csv.DictReader(sys.stdin))
print(sum(int(r["total_ns"]) for r in rows))')
check '[ "$got" = "$want" ]' "negdur: stats total GPU time $got, want $want"
# asked for by id, the kernel left out says why
"$BIN" kernel negdur.wlsession 3 >/dev/null 2>"$tmp/err"
rc=$?
check '[ $rc -eq 1 ] && [ "$(cat "$tmp/err")" = "warplens: kernel 3 of negdur.wlsession is damaged and left out by every reader (duration_ns is -5, below 0); \`warplens info --check negdur.wlsession\` lists what is wrong" ]' \
    "negdur: kernel 3: $(cat "$tmp/err")"
damaged early "UPDATE kernel SET start_ns = 5, duration_ns = end_ns - 5 WHERE id = 4"
start=$(q early.wlsession "SELECT min(start_ns) - 86400000000000 FROM process")
rows_left_out early "kernel 1; first: kernel row 4: start_ns is 5, before the session (from $start)" "1 row"
damaged hugecount "INSERT INTO lost (pid, source, count, detail) VALUES (462, 'cupti_dropped', 9223372036854775807, 'x'),
    (462, 'cupti_dropped', 9223372036854775807, 'y')"
rows_left_out hugecount "lost 2; first: lost row 1: count is 9223372036854775807, above 281474976710656" "2 rows"
check '"$BIN" stats hugecount.wlsession 2>/dev/null | grep -q "^lost      0 records"' \
    "hugecount: the lost total is the sound rows' (0), not an overflow"
run_verbs hugecount.wlsession "count near 2^63"

# ---- launch dimensions that overflow ------------------------------------------------------------
damaged gridy "UPDATE kernel SET grid_y = 70000 WHERE id = 6"
rows_left_out gridy "kernel 1; first: kernel row 6: grid_y is 70000, above 65535" "1 row"
damaged threads "UPDATE kernel SET grid_x = 2147483647, grid_y = 65535, grid_z = 65535, block_x = 1024, block_y = 1,
    block_z = 1, blocks = 2147483647 * 65535 * 65535 WHERE id = 7"
rows_left_out threads "kernel 1; first: kernel row 7: threads is 262144, not blocks * block_x * block_y * block_z" "1 row"
run_verbs threads.wlsession "dimensions overflowing"

# ---- ids that point nowhere: required (left out) and optional (read as no link) ----------------
damaged noname "UPDATE kernel SET name_id = 999 WHERE id = 5"
rows_left_out noname "kernel 1; first: kernel row 5: name_id is 999, which names no kernel_name row" "1 row"
damaged deletedname "DELETE FROM kernel_name WHERE id = (SELECT name_id FROM kernel WHERE id = 1)"
n=$(q deletedname.wlsession "SELECT count(*) FROM kernel WHERE name_id NOT IN (SELECT id FROM kernel_name)")
check '"$BIN" info deletedname.wlsession 2>/dev/null | grep -q "^damaged   $n rows left out by every reader (they break the session.s schema): kernel $n;"' \
    "deleted kernel name: $n kernels left out"
run_verbs deletedname.wlsession "deleted kernel name"
damaged noapi "UPDATE kernel SET api_id = 999999 WHERE id = 8"
"$BIN" stats noapi.wlsession >/dev/null 2>"$tmp/err"
rc=$?
check '[ $rc -eq 0 ] && [ ! -s "$tmp/err" ]' "noapi: stats on a dangling link: $(cat "$tmp/err")"
"$BIN" info --check noapi.wlsession >"$tmp/check"
rc=$?
check '[ $rc -eq 1 ] && grep -qx "  kernel: 1 row whose api_id names no API call (shown without a launch call)" "$tmp/check"' \
    "noapi: info --check: $(cat "$tmp/check")"

# ---- duplicated and deleted rows ------------------------------------------------------------------
damaged dup "CREATE TEMP TABLE c AS SELECT * FROM kernel WHERE id = 9; UPDATE c SET id = NULL;
    INSERT INTO kernel SELECT * FROM c"
"$BIN" info --check dup.wlsession >"$tmp/check"
rc=$?
check '[ $rc -eq 1 ] && grep -qx "  kernel: 1 row repeating another (same process, device, stream, correlation id and start; counted twice)" "$tmp/check"' \
    "dup: info --check: $(cat "$tmp/check")"
damaged deleted "DELETE FROM api_call WHERE id % 3 = 0; DELETE FROM kernel_name"
run_verbs deleted.wlsession "deleted rows"

# ---- strings with any bytes -----------------------------------------------------------------------
damaged bytes "UPDATE kernel_name SET demangled = 'a\"b<script>' || char(1, 10, 13, 92, 0x7f) || x'ff00fe', short_name = x'c3'
    WHERE id = 1; UPDATE nvtx_range SET name = x'00' || '\"</script>' WHERE id = 1"
run_verbs bytes.wlsession "strings with any bytes"
"$BIN" export bytes.wlsession --format json -o bytes.json >/dev/null 2>&1
check 'python3 -c "import json, sys; json.load(open(sys.argv[1], encoding=\"utf-8\"))" bytes.json' \
    "strings with any bytes: the JSON export parses"
# protobuf strings are UTF-8: the bytes that are not become U+FFFD
"$BIN" export bytes.wlsession -o bytes.pftrace >/dev/null 2>&1
protoc --decode=warplens_trace.Trace -I "$SRC/tests/proto" "$SRC/tests/proto/warplens_trace.proto" <bytes.pftrace \
    >bytes.txt 2>"$tmp/err"
rc=$?
check '[ $rc -eq 0 ] && [ ! -s "$tmp/err" ] && grep -qF "\\357\\277\\275" bytes.txt' \
    "strings with any bytes: the Perfetto export decodes as UTF-8: $(head -2 "$tmp/err")"

# ---- a damaged structure: a dropped index, table or column ----------------------------------------
damaged noindex "DROP INDEX api_by_thread"
"$BIN" stats noindex.wlsession >/dev/null 2>"$tmp/err"
rc=$?
check '[ $rc -eq 1 ] && [ "$(cat "$tmp/err")" = "warplens: noindex.wlsession is damaged: index api_by_thread is missing (reading would slow down with the square of the rows; add it with sqlite3 SESSION '"'"'CREATE INDEX api_by_thread ON api_call(pid, tid, start_ns)'"'"') (\`warplens info --check noindex.wlsession\` lists what is wrong)" ]' \
    "noindex: $(cat "$tmp/err")"
"$BIN" info --check noindex.wlsession >"$tmp/check"
rc=$?
check '[ $rc -eq 1 ] && grep -q "^  index api_by_thread is missing" "$tmp/check"' "noindex: info --check: $(cat "$tmp/check")"
run_verbs noindex.wlsession "dropped index"
damaged notable "DROP TABLE nvtx_mark"
"$BIN" kernels notable.wlsession >/dev/null 2>"$tmp/err"
rc=$?
check '[ $rc -eq 1 ] && grep -qx "warplens: notable.wlsession is damaged: table nvtx_mark is missing (.warplens info --check notable.wlsession. lists what is wrong)" "$tmp/err"' \
    "notable: $(cat "$tmp/err")"
damaged nocolumn "ALTER TABLE kernel DROP COLUMN grid_z"
"$BIN" export nocolumn.wlsession -o nc.pftrace >/dev/null 2>"$tmp/err"
rc=$?
check '[ $rc -eq 1 ] && grep -qx "warplens: nocolumn.wlsession is damaged: table kernel has no column grid_z (.warplens info --check nocolumn.wlsession. lists what is wrong)" "$tmp/err"' \
    "nocolumn: $(cat "$tmp/err")"
check '[ ! -e nc.pftrace ]' "nocolumn: no trace written"

# ---- damaged files: one line with the remedy ------------------------------------------------------
fails_with() { # FILE LINE: stats and export fail with exactly LINE
    local v want=$2
    for v in stats export; do
        if [ $v = export ]; then "$BIN" export "$1" -o f.pftrace >/dev/null 2>"$tmp/err"; else "$BIN" stats "$1" >/dev/null 2>"$tmp/err"; fi
        rc=$?
        check '[ $rc -eq 1 ] && [ "$(cat "$tmp/err")" = "$want" ]' "$1: $v: $(cat "$tmp/err") (want: $want)"
    done
}
: >empty.wlsession
fails_with empty.wlsession "warplens: empty.wlsession is empty (0 bytes), not a session: the run or copy that made it did not finish"
echo "a text file" >text.wlsession
fails_with text.wlsession "warplens: text.wlsession is not a warplens session (not an SQLite database)"
cp "$DATA/demo-h100.wlcap" cap.wlsession
fails_with cap.wlsession "warplens: cap.wlsession is a capture file, not a session: make one with \`warplens import -o OUT.wlsession cap.wlsession\`"
cp "$DATA/demo-h100.wlsession" cut.wlsession
truncate -s 65536 cut.wlsession
fails_with cut.wlsession "warplens: cut.wlsession is truncated (65536 bytes of 172032): copy it again, or recover its readable rows with \`sqlite3 cut.wlsession .recover | sqlite3 recovered.wlsession\`"
# the kernel table's root page scribbled over
cp "$DATA/demo-h100.wlsession" bad.wlsession
root=$(q bad.wlsession "SELECT rootpage FROM sqlite_master WHERE name = 'kernel'")
printf '\015\377\377\377\377\377\377\377' | dd of=bad.wlsession bs=1 seek=$(((root - 1) * 4096)) conv=notrunc 2>/dev/null
fails_with bad.wlsession "warplens: bad.wlsession is damaged (database disk image is malformed): recover its readable rows with \`sqlite3 bad.wlsession .recover | sqlite3 recovered.wlsession\`"
"$BIN" info --check bad.wlsession >"$tmp/check"
rc=$?
check '[ $rc -eq 1 ] && grep -qx "  table kernel cannot be read whole: database disk image is malformed" "$tmp/check"' \
    "bad: info --check: $(cat "$tmp/check")"
# an index page scribbled over: the tables read whole at open, the damage is found mid-read
cp "$DATA/demo-h100.wlsession" badindex.wlsession
root=$(q badindex.wlsession "SELECT rootpage FROM sqlite_master WHERE name = 'api_by_thread'")
printf '\012\377\377\377\377\377\377\377' | dd of=badindex.wlsession bs=1 seek=$(((root - 1) * 4096)) conv=notrunc 2>/dev/null
"$BIN" export badindex.wlsession -o bi.pftrace >/dev/null 2>"$tmp/err"
rc=$?
check '[ $rc -eq 1 ] && [ "$(cat "$tmp/err")" = "warplens: badindex.wlsession is damaged (database disk image is malformed, found while reading it): the output is incomplete; \`warplens info --check badindex.wlsession\` lists what is wrong, \`sqlite3 badindex.wlsession .recover | sqlite3 recovered.wlsession\` keeps what is readable" ]' \
    "badindex: export: $(cat "$tmp/err")"
check '[ ! -e bi.pftrace ]' "badindex: no trace written"
run_verbs badindex.wlsession "damaged index page"
damaged future "UPDATE meta SET value = '2' WHERE key = 'schema_version'"
fails_with future.wlsession "warplens: future.wlsession: session schema version 2 is newer than this warplens reads (1); upgrade warplens"
damaged badversion "UPDATE meta SET value = 'one' WHERE key = 'schema_version'"
fails_with badversion.wlsession "warplens: badversion.wlsession: invalid session schema version 'one' (meta.schema_version is damaged: it is 1 for every session this warplens writes)"
# locked by a writer: a process holds the write lock for the whole check
cp "$DATA/demo-h100.wlsession" locked.wlsession
python3 - locked.wlsession locked.ready <<'PY' &
import sqlite3, sys, time, os
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
db.execute("DELETE FROM lost")
open(sys.argv[2], "w").close()
while os.path.exists(sys.argv[2]):
    time.sleep(0.05)
db.execute("ROLLBACK")
PY
holder=$!
for _ in $(seq 200); do [ -e locked.ready ] && break; sleep 0.05; done
fails_with locked.wlsession "warplens: locked.wlsession is locked by a process writing to it (an import or sqlite3 still running?): read it when that is done, or read a copy"
rm -f locked.ready
wait $holder
check '"$BIN" stats locked.wlsession >/dev/null' "locked: readable once the writer is done"

# the sessions in tests/data are sound
for s in "$DATA"/*.wlsession; do
    "$BIN" info --check "$s" >"$tmp/check"
    rc=$?
    check '[ $rc -eq 0 ] && grep -q "no problem found" "$tmp/check"' "$(basename "$s"): info --check: $(cat "$tmp/check")"
done

summary damaged_cli

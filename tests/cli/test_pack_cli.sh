#!/usr/bin/env bash
# CLI test of the export pack (src/store/row_pack.h) on real H100 and H200 sessions: a session
# imported from the real demo capture has one, `info` says the exports read it, and every export
# and the report give the same bytes as the same session with the pack dropped; so do a tests/data
# session given one by `import --upgrade` and the real two-rank job merged (two processes: the
# pack holds their kernels in start order across them). Rows edited after the pack was written:
# `info` and every verb say the pack is not read, the exports read the rows (the same bytes as
# without it), and `import --upgrade` writes it again. Every comparison also runs the outputs on
# one CPU (WARPLENS_CPUS=1), which must give the same bytes.
set -u
BIN=${WARPLENS_BIN:?WARPLENS_BIN not set}
SRC=${WARPLENS_SOURCE_DIR:?WARPLENS_SOURCE_DIR not set}
DATA=${WARPLENS_TEST_DATA:-$SRC/tests/data}
. "$(dirname "$0")/checks.sh"
export WARPLENS_CACHE_DIR=off # every open censuses: the edited copies are told apart by content alone

# outputs DIR: the exports and the report of DIR/s.wlsession, run from DIR (the path is in some)
outputs() {
    (cd "$1" && "$BIN" export s.wlsession -q -o t.pftrace && "$BIN" export s.wlsession -q -o t.json &&
        "$BIN" export s.wlsession -q -o t.jfr && "$BIN" report s.wlsession -q -o r.html)
}
# same_without NAME SESSION: SESSION's outputs against a copy's without the pack, and against its
# own on one CPU (WARPLENS_CPUS=1: the exports' readers have no threads)
same_without() {
    d=$1 # (check evaluates its command inside itself: no positional parameters there)
    rm -rf "$d" "$d.bare" "$d.one" && mkdir "$d" "$d.bare" "$d.one"
    cp "$2" "$d/s.wlsession" && cp "$2" "$d.bare/s.wlsession" && cp "$2" "$d.one/s.wlsession"
    q "$d.bare/s.wlsession" "DROP TABLE IF EXISTS pack_block"
    outputs "$d" 2>"$d/err"
    check '[ $? = 0 ]' "$d: every export ran: $(cat "$d/err")"
    outputs "$d.bare"
    WARPLENS_CPUS=1 outputs "$d.one"
    for f in t.pftrace t.json t.jfr r.html; do
        check 'cmp -s "$d/$f" "$d.bare/$f"' "$d: $f differs with the pack"
        check 'cmp -s "$d/$f" "$d.one/$f"' "$d: $f differs on one CPU"
    done
}

"$BIN" import -q -o demo.wlsession "$DATA/demo-h100.wlcap"
kernels=$(q demo.wlsession "SELECT count(*) FROM kernel WHERE has_timestamps")
calls=$(q demo.wlsession "SELECT count(*) FROM api_call")
"$BIN" info demo.wlsession >info.txt
check 'grep -q "^pack      $kernels kernels, $calls API calls, [0-9]* NVTX ranges, [0-9]* scopes in .*, matching the rows: the exports read it" info.txt' \
    "import: info tells the pack: $(grep pack info.txt)"
check '[ "$(q demo.wlsession "SELECT sum(n) FROM pack_block WHERE kind = 2")" = "$kernels" ]' "import: every timed kernel packed"
same_without imported demo.wlsession

# a session written before the pack: none until `import --upgrade`
cp "$DATA/torch-ops-h100.wlsession" ops.wlsession
"$BIN" info ops.wlsession >info.txt
check 'grep -q "^pack      none: the exports read the rows" info.txt' "old session: no pack: $(grep pack info.txt)"
"$BIN" import --upgrade ops.wlsession >/dev/null
"$BIN" info ops.wlsession >info.txt
check 'grep -q "^pack      .* API calls, .* NVTX ranges, .*matching the rows" info.txt' "upgrade: a pack: $(grep pack info.txt)"
same_without upgraded ops.wlsession

# the real two-rank job, merged: two processes, their kernels in one start order
gunzip -c "$DATA/ranks/ddp-nccl-h200-rank0.wlsession.gz" >r0.wlsession
gunzip -c "$DATA/ranks/ddp-nccl-h200-rank1.wlsession.gz" >r1.wlsession
"$BIN" merge -q -o merged.wlsession r0.wlsession r1.wlsession
check '[ $? = 0 ] && [ "$(q merged.wlsession "SELECT count(DISTINCT pid) FROM kernel")" = 2 ]' "merge: two processes"
"$BIN" info merged.wlsession >info.txt
check 'grep -q "^pack      .*matching the rows" info.txt' "merge: a pack: $(grep pack info.txt)"
same_without merged merged.wlsession

# rows edited after the pack: not read, said so, the rows' bytes; the upgrade writes it again
cp demo.wlsession edited.wlsession
q edited.wlsession "UPDATE api_call SET name = 'cudaEdited' WHERE id = (SELECT min(id) FROM api_call)"
"$BIN" export edited.wlsession -q -o e.pftrace 2>err
check 'grep -q "edited.wlsession: the export pack does not match the API calls (changed since it was written); the exports read the rows instead" err' \
    "edited: the note: $(cat err)"
"$BIN" info edited.wlsession >info.txt 2>/dev/null
check 'grep -q "^pack      not read: it does not match the rows" info.txt' "edited: info: $(grep pack info.txt)"
same_without edited edited.wlsession
check 'grep -q cudaEdited edited/t.json' "edited: the export shows the edit"
"$BIN" info --check edited.wlsession >check.txt
check '[ $? = 0 ] && grep -q "edited.wlsession: note: the export pack does not match the API calls" check.txt' \
    "edited: info --check notes the pack, and no problem: $(cat check.txt)"
"$BIN" import --upgrade edited.wlsession >/dev/null
"$BIN" export edited.wlsession -q -o e.pftrace 2>err
check '[ ! -s err ]' "upgraded after the edit: no note: $(cat err)"
"$BIN" info edited.wlsession >info.txt
check 'grep -q "^pack      .*matching the rows" info.txt' "upgraded after the edit: read again: $(grep pack info.txt)"

summary "pack"

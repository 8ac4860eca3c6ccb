#!/usr/bin/env bash
# CLI test of the cache of sessions found sound (src/store/check_cache.h): an open of a sound,
# settled session keeps one line in the cache; the next open of the unchanged file trusts it
# (shown by a planted line for a damaged file: the damage goes unreported until the file changes
# or `info --check` checks every row anyway); any write to the file, a file changed too recently,
# and WARPLENS_CACHE_DIR=off keep nothing or trust nothing.
set -u
BIN=${WARPLENS_BIN:?WARPLENS_BIN not set}
SRC=${WARPLENS_SOURCE_DIR:?WARPLENS_SOURCE_DIR not set}
DATA=${WARPLENS_TEST_DATA:-$SRC/tests/data}
. "$(dirname "$0")/checks.sh"

export WARPLENS_CACHE_DIR=$tmp/cache
slots() { ls "$tmp/cache/checked" 2>/dev/null | grep -v tmp | wc -l; }
# slot FILE: the cache file that holds FILE's line (FNV-1a of its device and inode, mod 1024)
slot() {
    python3 - "$1" <<'EOF'
import os, struct, sys
st = os.stat(sys.argv[1])
h = 0xcbf29ce484222325
for b in struct.pack('<QQ', st.st_dev, st.st_ino):
    h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
print('%03x' % (h % 1024))
EOF
}
# line FILE FINGERPRINT: the line the cache keeps for FILE as it is now
line() {
    python3 - "$1" "$2" <<'EOF'
import os, sys
st = os.stat(sys.argv[1])
print('warplens-checked 1 %s %d %d %d %d %d' % (sys.argv[2], st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns,
                                                 st.st_ctime_ns))
EOF
}

# a sound session, settled (its times more than the cache's 100 ms margin in the past)
cp "$DATA/demo-h100.wlsession" sound.wlsession
sleep 0.3
"$BIN" stats sound.wlsession >stats1.txt 2>err1.txt
check '[ "$(slots)" = 1 ]' "one slot after the first open of a sound session (found $(slots))"
s=$(slot sound.wlsession)
check '[ -f "$tmp/cache/checked/$s" ]' "the slot is the one named by the file's device and inode ($s)"
fp=$(cut -d' ' -f3 "$tmp/cache/checked/$s" 2>/dev/null)
check '[ "$(cat "$tmp/cache/checked/$s")" = "$(line sound.wlsession "$fp")" ]' \
    "the slot holds the file's identity: $(cat "$tmp/cache/checked/$s")"
check '[[ $fp =~ ^[0-9a-f]{16}$ ]]' "a 16-digit contract fingerprint ($fp)"
"$BIN" stats sound.wlsession >stats2.txt 2>err2.txt
check 'cmp -s stats1.txt stats2.txt && cmp -s err1.txt err2.txt' "the second open (cache hit) prints the same"

# a damaged session: reported, and nothing kept for it
cp "$DATA/demo-h100.wlsession" damaged.wlsession
sqlite3 damaged.wlsession "UPDATE kernel SET grid_x = 'abc' WHERE id = (SELECT min(id) FROM kernel)"
sleep 0.3
"$BIN" info damaged.wlsession >info.txt 2>&1
check 'grep -q "^damaged   1 row left out" info.txt' "damage reported: $(grep damaged info.txt)"
check '[ "$(slots)" = 1 ]' "nothing kept for a damaged session ($(slots) slots)"

# a planted line for the damaged file is trusted: the cache is the user's own, keyed by what no
# program can set back (the change time)
d=$(slot damaged.wlsession)
if [ "$d" != "$s" ]; then
    line damaged.wlsession "$fp" >"$tmp/cache/checked/$d"
    "$BIN" info damaged.wlsession >info2.txt 2>&1
    check '! grep -q "^damaged" info2.txt' "a hit skips the row check (planted line trusted)"
    "$BIN" info --check damaged.wlsession >check.txt 2>&1
    check 'grep -q "grid_x is text" check.txt' "info --check checks every row despite the cache: $(head -3 check.txt)"
    # any write moves the change time: the line no longer matches and the damage shows again
    sqlite3 damaged.wlsession "UPDATE kernel SET grid_x = 'abd' WHERE grid_x = 'abc'"
    "$BIN" info damaged.wlsession >info3.txt 2>&1
    check 'grep -q "^damaged   1 row left out" info3.txt' "a written file is checked again: $(grep damaged info3.txt)"
    # so does a contract this build does not check (another fingerprint)
    line damaged.wlsession 0123456789abcdef >"$tmp/cache/checked/$d"
    "$BIN" info damaged.wlsession >info4.txt 2>&1
    check 'grep -q "^damaged   1 row left out" info4.txt' "another contract's line is not trusted"
else
    echo "(the two files share a slot: planted-line checks skipped)"
fi

# a file changed too recently for its times to tell a later write apart: nothing kept
cp "$DATA/demo-h100.wlsession" fresh.wlsession
touch -d '+1 hour' fresh.wlsession
"$BIN" info fresh.wlsession >/dev/null 2>&1
f=$(slot fresh.wlsession)
check '[ "$f" = "$s" ] || [ ! -f "$tmp/cache/checked/$f" ]' "nothing kept for a file whose times are not settled"

# a write-ahead log beside the file may change what is read: nothing kept, nothing trusted
cp "$DATA/demo-h100.wlsession" wal.wlsession
sleep 0.3
printf 'x' >wal.wlsession-wal
"$BIN" info wal.wlsession >/dev/null 2>&1
w=$(slot wal.wlsession)
check '[ "$w" = "$s" ] || [ ! -f "$tmp/cache/checked/$w" ]' "nothing kept beside a write-ahead log"
rm -f wal.wlsession-wal

# off: nothing written anywhere
WARPLENS_CACHE_DIR=off "$BIN" info sound.wlsession >/dev/null 2>&1
check '[ ! -e off ]' "WARPLENS_CACHE_DIR=off writes no folder"
rm -rf "$tmp/cache"
WARPLENS_CACHE_DIR=off "$BIN" info sound.wlsession >/dev/null 2>&1
check '[ ! -e "$tmp/cache" ]' "WARPLENS_CACHE_DIR=off keeps nothing"

# an unwritable cache folder: the verb works as before, silently
mkdir -p ro && chmod 500 ro
WARPLENS_CACHE_DIR=$tmp/ro/c "$BIN" stats sound.wlsession >stats3.txt 2>err3.txt
check 'cmp -s stats1.txt stats3.txt && [ ! -s err3.txt ] || [ "$(id -u)" = 0 ]' "an unwritable cache changes nothing"
chmod 700 ro

summary test_check_cache

#!/usr/bin/env bash
# CLI test of `warplens decode`: summary, Chrome JSON (checked with jq) and Perfetto (checked with
# protoc --decode against tests/proto/warplens_trace.proto, the one subset of Perfetto's protos) on hand-built buffers, plus the error
# paths (one line, exit 2, no output file left behind).
set -u
BIN=${WARPLENS_BIN:?WARPLENS_BIN not set}
SRC=${WARPLENS_SOURCE_DIR:?WARPLENS_SOURCE_DIR not set}
. "$(dirname "$0")/checks.sh"
TMP=$tmp

# words FILE HEX... : writes little-endian 64-bit words
words() { local f=$1; shift; perl -e 'print pack("Q<*", map { hex } @ARGV)' "$@" >"$f"; }

# The two-group vector of the wire-format notes.
words "$TMP/v1.bin" 0x200000001 0x3e800000004 0x44c00001004 0x5dc00000005 0x76c00001005 \
    0x64000000003 0x7d000001003 0 0

# --- summary -----------------------------------------------------------------------------------
out=$("$BIN" decode "$TMP/v1.bin" --events idle,mainloop --groups producer,consumer)
check '[ $? -eq 0 ]' "summary exit status"
check 'grep -Eq "^mainloop +producer +1 +0\.500" <<<"$out"' "summary row producer: $out"
check 'grep -Eq "^mainloop +consumer +1 +0\.800" <<<"$out"' "summary row consumer"
check 'grep -q "2 seen / 2 finalized" <<<"$out"' "summary lane counts"

# --- Chrome JSON -------------------------------------------------------------------------------
if command -v jq >/dev/null; then
    "$BIN" decode "$TMP/v1.bin" --events idle,mainloop --groups producer,consumer --format json \
        -o "$TMP/v1.json"
    check '[ $? -eq 0 ] && [ -s "$TMP/v1.json" ]' "json written"
    J="$TMP/v1.json"
    check 'jq -e . "$J" >/dev/null' "json parses"
    check '[ "$(jq "[.traceEvents[] | select(.ph==\"X\")] | length" "$J")" = 2 ]' "two X events"
    check '[ "$(jq -c "[.traceEvents[] | select(.ph==\"X\") | [.pid,.tid,.name,.ts,.dur]] | sort" "$J")" = "[[0,0,\"mainloop\",0,0.5],[0,1,\"mainloop\",0.1,0.8]]" ]' \
        "X events pid/tid/name/ts/dur: $(jq -c '[.traceEvents[] | select(.ph=="X")]' "$J")"
    check 'jq -e "all(.traceEvents[]; has(\"ph\"))" "$J" >/dev/null' "every event has ph"
    check 'jq -e "all(.traceEvents[] | select(.ph!=\"M\"); (.ts|type)==\"number\")" "$J" >/dev/null' \
        "numeric ts"
    check 'jq -e "[.traceEvents[] | select(.ph==\"M\" and .name==\"thread_name\") | .args.name] | sort == [\"consumer\",\"producer\"]" "$J" >/dev/null' \
        "thread names"
    check 'jq -e "[.traceEvents[] | select(.ph==\"M\" and .name==\"process_name\")] | length == 1" "$J" >/dev/null' \
        "one process name"
    check 'jq -e ".otherData.lanes_finalized == 2 and .otherData.unmatched_begins == 0" "$J" >/dev/null' \
        "json counts"

    # unmatched records and instants stay visible; generated names
    words "$TMP/u.bin" 0x100000001 0x0000000a00000008 0x0000001400000005 0x0000001e00000016 \
        0xfffffff000000ffc 0x0000001000000ffd
    "$BIN" decode "$TMP/u.bin" --format json -o "$TMP/u.json"
    check '[ $? -eq 0 ]' "json with unmatched"
    check 'jq -e "[.traceEvents[] | select(.cat==\"inkernel.unmatched\") | .name] | sort == [\"event_1 (unmatched end)\",\"event_2 (unmatched begin)\"]" "$TMP/u.json" >/dev/null' \
        "unmatched shown: $(jq -c '[.traceEvents[] | .name]' "$TMP/u.json")"
    check 'jq -e "[.traceEvents[] | select(.ph==\"i\" and .cat==\"inkernel\") | .name] == [\"event_5\"]" "$TMP/u.json" >/dev/null' \
        "instant event_5"
    check 'jq -e "[.traceEvents[] | select(.ph==\"X\") | .name] == [\"event_1023\"]" "$TMP/u.json" >/dev/null' \
        "slice event_1023 (wrapped)"
else
    echo "decode_cli: jq not found: skipping the JSON checks" >&2
fi

# --- Perfetto ----------------------------------------------------------------------------------
"$BIN" decode "$TMP/v1.bin" --events idle,mainloop --groups producer,consumer --format perfetto \
    -o "$TMP/v1.pftrace"
check '[ $? -eq 0 ] && [ -s "$TMP/v1.pftrace" ]' "perfetto written"
check '[ "$(head -c1 "$TMP/v1.pftrace" | od -An -tx1 | tr -d " ")" = 0a ]' "pftrace starts with 0x0A"
if command -v protoc >/dev/null; then
    P="$TMP/v1.txt"
    protoc --decode=warplens_trace.Trace -I "$SRC/tests/proto" "$SRC/tests/proto/warplens_trace.proto" \
        <"$TMP/v1.pftrace" >"$P" 2>"$TMP/protoc.err"
    check '[ $? -eq 0 ]' "protoc decodes: $(cat "$TMP/protoc.err")"
    check '! grep -Eq "^ *[0-9]+:" "$P"' "no unknown fields"
    check '[ "$(grep -c "type: TYPE_SLICE_BEGIN" "$P")" = 2 ] && [ "$(grep -c "type: TYPE_SLICE_END" "$P")" = 2 ]' \
        "two begins, two ends"
    check 'grep -q "name: \"mainloop\"" "$P" && grep -q "name: \"producer\"" "$P" && grep -q "name: \"consumer\"" "$P"' \
        "interned event name and lane names"
    check '[ "$(grep -c "sequence_flags: 3" "$P")" = 1 ] && ! grep -q "trusted_packet_sequence_id: 0$" "$P"' \
        "sequence flags and id"
    # every track_uuid used by an event names a descriptor; uuids unique
    uuids=$(grep -A1 "track_descriptor {" "$P" | grep -o "uuid: [0-9]*" | sort)
    check '[ "$(uniq -d <<<"$uuids" | wc -l)" = 0 ]' "unique uuids"
    used=$(grep -o "track_uuid: [0-9]*" "$P" | sed "s/track_//" | sort -u)
    check '[ -z "$(comm -23 <(echo "$used") <(echo "$uuids"))" ]' "events reference descriptors"
    check '[ "$(grep -c "name: \"mainloop\"" "$P")" = 1 ]' "name interned once"
else
    echo "decode_cli: protoc not found (apt-get install protobuf-compiler): skipping protobuf checks" >&2
fi

# --- a larger random buffer: all three formats agree on the slice count -------------------------
if command -v python3 >/dev/null; then
    python3 - "$TMP/big.bin" <<'EOF'
import random, struct, sys
random.seed(7)
nb, ng, per = 40, 4, 30
lanes = nb * ng
slots = [[] for _ in range(lanes)]
for bg in range(lanes):
    t = random.randrange(0, 1 << 32)
    for k in range(per // 2 - 1):
        ev = random.randrange(0, 1024)
        slots[bg].append((t << 32) | (bg << 12) | (ev << 2) | 0); t = (t + random.randrange(32, 5000)) & 0xffffffff
        slots[bg].append((t << 32) | (bg << 12) | (ev << 2) | 1); t = (t + random.randrange(32, 5000)) & 0xffffffff
    slots[bg].append((t << 32) | (bg << 12) | 3)
w = [0] * (1 + lanes * per)
w[0] = (ng << 32) | nb
for bg in range(lanes):
    for k, v in enumerate(slots[bg]):
        w[1 + bg + k * lanes] = v
open(sys.argv[1], "wb").write(struct.pack("<%dQ" % len(w), *w))
EOF
    want=$((40 * 4 * 14))
    s=$("$BIN" decode "$TMP/big.bin" --stride 160 --max-records 30)
    check 'grep -q "^slices $want, instants 0, lanes 160 seen / 160 finalized, unmatched begins 0" <<<"$s"' \
        "big summary: $(tail -1 <<<"$s")"
    if command -v jq >/dev/null; then
        "$BIN" decode "$TMP/big.bin" --format json -o "$TMP/big.json"
        check '[ "$(jq "[.traceEvents[] | select(.ph==\"X\")] | length" "$TMP/big.json")" = $want ]' \
            "big json slice count"
        check 'jq -e "all(.traceEvents[] | select(.ph==\"X\"); .dur >= 0.032)" "$TMP/big.json" >/dev/null' \
            "big json durations (wraps included) positive"
    fi
    "$BIN" decode "$TMP/big.bin" --format perfetto --max-lanes 10 -o "$TMP/big.pftrace" 2>"$TMP/note"
    check 'grep -q "150 lanes over --max-lanes" "$TMP/note"' "max-lanes note: $(cat "$TMP/note")"
    if command -v protoc >/dev/null; then
        protoc --decode=warplens_trace.Trace -I "$SRC/tests/proto" "$SRC/tests/proto/warplens_trace.proto" \
            <"$TMP/big.pftrace" >"$TMP/big.txt"
        check '[ $? -eq 0 ] && [ "$(grep -c TYPE_SLICE_BEGIN "$TMP/big.txt")" = $((10 * 14)) ]' "big perfetto capped slices"
    fi
else
    echo "decode_cli: python3 not found: skipping the random buffer" >&2
fi

# --- errors: one line, exit 2, nothing written ---------------------------------------------------
expect_error() { # expect_error NEEDLE ARGS...
    local needle=$1; shift
    "$BIN" decode "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    if [ $rc -eq 2 ] && [ "$(wc -l <"$TMP/err")" = 1 ] && grep -q -- "$needle" "$TMP/err"; then
        ok
    else
        bad "decode $* -> rc $rc, stderr: $(cat "$TMP/err")"
    fi
}
expect_error "cannot open" "$TMP/missing.bin"
printf 'abc' >"$TMP/odd.bin"
expect_error "not a whole number of 64-bit words" "$TMP/odd.bin"
words "$TMP/hdr.bin" 0x000000000004 0
expect_error "word 0" "$TMP/hdr.bin" --format json -o "$TMP/never.json"
check '[ ! -e "$TMP/never.json" ] && [ -z "$(ls "$TMP" | grep tmp)" ]' "no output on error"
words "$TMP/tag.bin" 0x100000001 0x0000000a00001004
expect_error "word 1" "$TMP/tag.bin"
words "$TMP/trunc.bin" 0x400000002 0 0
expect_error "truncated" "$TMP/trunc.bin"
expect_error "unknown format" "$TMP/v1.bin" --format xml -o -
expect_error "needs -o" "$TMP/v1.bin" --format json
expect_error "misplaced" "$TMP/v1.bin" --stride 3
expect_error "not a non-negative integer" "$TMP/v1.bin" --stride -1
expect_error "unknown option" "$TMP/v1.bin" --bogus
expect_error "cannot create" "$TMP/v1.bin" --format json -o "$TMP/no/such/dir/x.json"
check '"$BIN" decode --help | grep -q "usage: warplens decode"' "help"

summary decode_cli

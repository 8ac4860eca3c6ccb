#!/usr/bin/env bash
# Old vs new in-kernel decoder, side by side: builds bench/bench_decode.c twice with the same
# compiler and flags (-O3 -DNDEBUG), once against the decoder of BASE (a commit: its
# src/analysis/inkernel_decode.c, and inkernel_walk.c where it has one) and once against the
# working tree's, then runs them interleaved (old, new, old, new, ...) on the
# same 64 Mi-word synthetic buffer, ROUNDS rounds of 5 runs each, and prints each round's medians
# and the median over rounds (wall and CPU time, fresh and reused output). On a shared machine
# compare the CPU-time columns: they are what one core spent, whatever else ran.
# usage: bench/decode_ab.sh [BASE, default ac6ce56] [ROUNDS, default 5] [WORDS, default 67108865]
set -eu
BASE=${1:-ac6ce56}
ROUNDS=${2:-5}
WORDS=${3:-67108865}
SRC=$(cd "$(dirname "$0")/.." && pwd)
CC=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The decoder is inkernel_decode.c, and inkernel_walk.c (+ .h) since it was split in two: BASE's
# files are built against BASE's own private header, the tree's against the tree's.
mkdir -p "$tmp/old/analysis"
old_src="$tmp/old/analysis/inkernel_decode.c"
git -C "$SRC" show "$BASE:src/analysis/inkernel_decode.c" >"$old_src"
for f in inkernel_walk.c inkernel_walk.h; do
    if git -C "$SRC" cat-file -e "$BASE:src/analysis/$f" 2>/dev/null; then
        git -C "$SRC" show "$BASE:src/analysis/$f" >"$tmp/old/analysis/$f"
        case $f in *.c) old_src="$old_src $tmp/old/analysis/$f" ;; esac
    fi
done
new_src="$SRC/src/analysis/inkernel_decode.c"
[ -e "$SRC/src/analysis/inkernel_walk.c" ] && new_src="$new_src $SRC/src/analysis/inkernel_walk.c"
for v in old new; do
    if [ "$v" = old ]; then inc="-I$tmp/old -I$SRC/src"; files=$old_src; else inc="-I$SRC/src"; files=$new_src; fi
    # shellcheck disable=SC2086
    "$CC" -O3 -DNDEBUG -std=gnu11 $inc -o "$tmp/bench_$v" "$SRC/bench/bench_decode.c" $files
done
echo "decode_ab: base $BASE vs working tree ($(git -C "$SRC" rev-parse --short HEAD)), $WORDS words, $ROUNDS rounds x 5 runs, $("$CC" --version | head -1)"
for r in $(seq 1 "$ROUNDS"); do
    for v in old new; do
        "$tmp/bench_$v" "$WORDS" 5 | sed -nE "s/^bench_decode: (fresh|reused) +output: .*: ([0-9.]+) M records\/s median.*CPU time median [0-9.]+ s: ([0-9.]+) M records\/s/round $r $v \1 wall \2 cpu \3/p"
    done
done | tee "$tmp/rounds.txt"
echo "median over rounds (M records/s):"
for v in old new; do
    for k in fresh reused; do
        w=$(awk -v v="$v" -v k="$k" '$3 == v && $4 == k { print $6 }' "$tmp/rounds.txt" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
        c=$(awk -v v="$v" -v k="$k" '$3 == v && $4 == k { print $8 }' "$tmp/rounds.txt" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
        printf "  %-3s %-6s wall %8s   cpu %8s\n" "$v" "$k" "$w" "$c"
    done
done

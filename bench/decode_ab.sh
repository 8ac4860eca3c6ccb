#!/usr/bin/env bash
# Old vs new in-kernel decoder, side by side: builds bench/bench_decode.c twice with the same
# compiler and flags (-O3 -DNDEBUG), once against src/analysis/inkernel_decode.c of BASE (a commit)
# and once against the working tree's, then runs them interleaved (old, new, old, new, ...) on the
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
git -C "$SRC" show "$BASE:src/analysis/inkernel_decode.c" >"$tmp/old_decode.c"
for v in old new; do
    dec="$tmp/old_decode.c"
    [ "$v" = new ] && dec="$SRC/src/analysis/inkernel_decode.c"
    "$CC" -O3 -DNDEBUG -std=gnu11 -I"$SRC/src" -o "$tmp/bench_$v" "$SRC/bench/bench_decode.c" "$dec"
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

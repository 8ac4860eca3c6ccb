#!/usr/bin/env bash
# GPU suite: a torch.distributed job under `warplens run -- torchrun` (NCCL on a machine with
# several GPUs, gloo on one): one session per rank through -o '%r', `warplens ranks` naming the
# planted slow rank (with NCCL; over gloo it must say that no collective kernels were recorded),
# and a two-host merge made from two rank sessions (one given another host name and a known clock
# offset) whose estimated offset must be within 5 us.
# Each rank's session holds exactly the kernels a minimal CUPTI consumer (bench/floor_injection.c)
# counted for that rank when the same job ran under it, and lost none.
# Usage: tests/gpu/test_multirank.sh OUTDIR BUILD   (warplens on PATH, torch installed; BUILD: the
# build folder holding lib/libwl_floor_injection.so)
set -u
# NVLink multicast off (shared multi-GPU hosts: see scripts/gpu-suite.sh), also when run alone
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${1:-/tmp/wl_multirank}
mkdir -p "$OUT"
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l)
NPROC=$(( NGPU >= 2 ? NGPU : 2 ))
fails=0
check() { if eval "$2"; then echo "[multirank] $1: ok"; else echo "[multirank] $1: FAILED"; fails=$((fails+1)); fi; }
rm -f "$OUT"/ddp_*.wlsession
env SLOW_RANK=1 warplens run -o "$OUT/ddp_%r.wlsession" -- \
    torchrun --standalone --nproc-per-node "$NPROC" tests/gpu/torch_ddp.py 20
check "one session per rank" '[ "$(ls "$OUT"/ddp_*.wlsession | wc -l)" = "$NPROC" ]'
for f in "$OUT"/ddp_*.wlsession; do warplens info "$f" | sed -n '5p;/rank /p'; done
# the same job under the minimal CUPTI consumer: its count per rank (RANK in its line) against
# each rank's session (a rank's processes summed, were there several)
FLOOR=${2:-}/lib/libwl_floor_injection.so
if [ -n "${2:-}" ] && [ -f "$FLOOR" ]; then
    rm -f "$OUT/floor.txt"
    env SLOW_RANK=1 CUDA_INJECTION64_PATH="$FLOOR" WL_FLOOR_OUT="$OUT/floor.txt" \
        torchrun --standalone --nproc-per-node "$NPROC" tests/gpu/torch_ddp.py 20 >"$OUT/floor.log" 2>&1
    cat "$OUT/floor.txt"
    for f in "$OUT"/ddp_*.wlsession; do
        r=${f##*/ddp_}
        r=${r%.wlsession}
        read -r got lost < <(python3 -c "
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(c.execute('SELECT count(*) FROM kernel').fetchone()[0], c.execute('SELECT coalesce(sum(count), 0) FROM lost').fetchone()[0])" "$f")
        want=$(awk -v r="rank=$r" '$1 == r {split($3, k, "="); n += k[2]; seen = 1} END {if (seen) print n}' "$OUT/floor.txt")
        check "rank $r: $got kernels recorded, the CUPTI consumer counted ${want:-none}, $lost lost" \
            '[ -n "$want" ] && [ "$got" = "$want" ] && [ "$lost" = 0 ]'
    done
else
    check "per-rank kernel counts: the minimal CUPTI consumer at ${FLOOR} (pass BUILD)" false
fi
warplens ranks "$OUT"/ddp_*.wlsession | tee "$OUT/ranks.txt"
if [ "$NGPU" -ge 2 ]; then
    check "ranks names rank 1 the straggler" 'awk '\''$1 == "1" {print $NF}'\'' "$OUT/ranks.txt" | grep -qE "^(1[0-9]|20)/20"'
else
    # gloo's all-reduce runs on the host and both ranks share the GPU: no rank is seen waiting, the
    # steps take the same time on both, and which is longest is noise (9/20 and 12/20 on two runs)
    check "one GPU: ranks says no collective kernels were recorded (the straggler is not judged)" \
        'grep -q "no collective kernels were recorded" "$OUT/ranks.txt"'
fi
# two hosts from two ranks: rank 1's session moved to host "hostB" with its clock 1.5 ms ahead
if [ "$NGPU" -ge 2 ]; then
    cp "$OUT/ddp_1.wlsession" "$OUT/ddp_1_hostB.wlsession"
    python3 "$(dirname "$0")/../cli/move_host.py" "$OUT/ddp_1_hostB.wlsession" hostB 1500000
    warplens merge -o "$OUT/ddp_merged.wlsession" "$OUT/ddp_0.wlsession" "$OUT/ddp_1_hostB.wlsession" | tee "$OUT/merge.txt"
    check "merge recovers the 1.5 ms offset within 5 us" \
        'awk '\''$1 == "hostB" {d = $2 + 1500000; exit !(d <= 5000 && d >= -5000)}'\'' "$OUT/merge.txt"'
    rm -f "$OUT/ddp_1_hostB.wlsession"
else
    echo "[multirank] one GPU: ranks share it over gloo (no NCCL kernels); the two-host merge needs NCCL collectives"
fi
echo "[multirank] failures: $fails"
exit $((fails > 0))

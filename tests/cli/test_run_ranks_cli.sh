#!/usr/bin/env bash
# `warplens run` under launchers, without a GPU: -o name templates checked before the program
# starts (one clear line for a bad escape, or a name every rank would share), --ranks (a rank
# not asked for runs unprofiled), and `warplens run -- <launcher>` whose children carry the
# ranks: one session per rank when the template asks for %r. The children are
# fake_rank_capture (writes the capture file a recorder would) under the fake driver.
set -u
W=${WARPLENS_BIN:?}
B=${WARPLENS_BUILD_DIR:?}
FAKE=$B/fakecuda
RANKER=$B/bin/fake_rank_capture
pass=0 fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
run() { env LD_LIBRARY_PATH="$FAKE" "$W" run "$@" >out.txt 2>err.txt; }
one_line() { [ "$(wc -l <err.txt)" = 1 ] && grep -q "$1" err.txt; }

# templates refused before anything runs: the program would have made a marker file
run -o 'x_%z.wlsession' -- touch ran; [ $? = 2 ] && one_line "unknown escape %z at byte 2" && [ ! -e ran ] && ok || bad "unknown escape: $(cat err.txt)"
run -o 'x_%q{NOT_SET_ANYWHERE}' -- touch ran; [ $? = 2 ] && one_line "NOT_SET_ANYWHERE is not set" && [ ! -e ran ] && ok || bad "unset %q"
run -o 'x%' -- touch ran; [ $? = 2 ] && one_line "lone %" && ok || bad "lone %"
# under a launcher, a name every rank would share
for v in "RANK=3 WORLD_SIZE=8" "OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2" "PMI_RANK=1 PMI_SIZE=4" "SLURM_PROCID=2 SLURM_NTASKS=4"; do
    env $v LD_LIBRARY_PATH="$FAKE" "$W" run -o job.wlsession -- touch ran >out.txt 2>err.txt
    [ $? = 2 ] && one_line "would be the same file for every rank (${v%% *} of ${v##* } is set)" && [ ! -e ran ] && ok \
        || bad "collision not refused under $v: $(cat err.txt)"
    env $v LD_LIBRARY_PATH="$FAKE" "$W" run -o job_%h.wlsession -- true 2>err.txt; [ $? = 2 ] && ok || bad "%h alone under $v"
done
# a world of one is not a collision
env RANK=0 WORLD_SIZE=1 LD_LIBRARY_PATH="$FAKE" "$W" run -q -o solo.wlsession -- "$RANKER" 2 2>err.txt
[ -s solo.wlsession ] && ok || bad "a world of one: $(cat err.txt)"

# srun/mpirun style: each rank runs its own `warplens run`
for r in 0 1 2 3; do
    env SLURM_PROCID=$r SLURM_NTASKS=4 SLURM_LOCALID=$((r % 2)) LD_LIBRARY_PATH="$FAKE" \
        "$W" run -q --ranks 0,2-3 -o 'job_%h_%r_%l.wlsession' -- "$RANKER" $((r + 1)) 2>err.txt &
done
wait
h=$(hostname)
[ -s "job_${h}_0_0.wlsession" ] && [ -s "job_${h}_2_0.wlsession" ] && [ -s "job_${h}_3_1.wlsession" ] && ok || bad "per-rank sessions: $(ls)"
[ ! -e "job_${h}_1_1.wlsession" ] && ok || bad "rank 1 was recorded despite --ranks"
"$W" info "job_${h}_3_1.wlsession" >info.txt && grep -q "4 kernels" info.txt && grep -q "rank 3, local rank 1, world size 4" info.txt \
    && ok || bad "rank 3's session: $(cat info.txt)"
# an unprofiled rank still runs, with its own exit status
env RANK=1 WORLD_SIZE=2 LD_LIBRARY_PATH="$FAKE" "$W" run --ranks 0 -o 'u_%r' -- sh -c 'echo ran; exit 5' >out.txt 2>err.txt
[ $? = 5 ] && grep -q ran out.txt && [ ! -s err.txt ] && ok || bad "unprofiled rank: $(cat err.txt)"
run --ranks 2-1 -- true; [ $? = 2 ] && one_line "'2-1': a range must go up" && ok || bad "bad --ranks"
# default name under a launcher: one per rank
env RANK=1 WORLD_SIZE=2 LD_LIBRARY_PATH="$FAKE" "$W" run -q -- "$RANKER" 1 2>err.txt
[ -s fake_rank_capture_rank1.wlsession ] && ok || bad "default name under a launcher: $(ls) $(cat err.txt)"

# torchrun style: `warplens run` starts the launcher, the children carry RANK
launch="for r in 0 1 2; do RANK=\$r LOCAL_RANK=\$r WORLD_SIZE=3 $RANKER \$((r + 2)) & done; wait"
run -o 'tr_%r.wlsession' -- sh -c "$launch"
[ $? = 0 ] && [ -s tr_0.wlsession ] && [ -s tr_1.wlsession ] && [ -s tr_2.wlsession ] && ok || bad "torchrun split: $(ls) $(cat err.txt)"
grep -q "tr_2.wlsession: 1 process, 4 kernels" err.txt && ok || bad "split summary: $(cat err.txt)"
ls -d tr_*.capture.* >/dev/null 2>&1 && bad "capture folder left behind" || ok
run -q --ranks 1 -o 'trs_%r.wlsession' -- sh -c "$launch"
[ -s trs_1.wlsession ] && [ ! -e trs_0.wlsession ] && [ ! -e trs_2.wlsession ] && ok || bad "torchrun --ranks: $(ls)"
# the launcher itself (no rank) recorded nothing: no session of its own; one that did work keeps one
run -o 'tl_%r.wlsession' -- sh -c "$RANKER 0; $launch"
[ -s tl_0.wlsession ] && [ -s tl_2.wlsession ] && [ ! -e tl_norank.wlsession ] && ok || bad "idle launcher left out: $(ls tl_*)"
grep -q "has no rank and recorded no GPU work" err.txt && ok || bad "idle launcher said: $(cat err.txt)"
run -q -o 'tw_%r.wlsession' -- sh -c "$RANKER 2; $launch"
[ -s tw_norank.wlsession ] && [ -s tw_1.wlsession ] && ok || bad "a rank-less process with GPU work keeps its session: $(ls tw_*)"
# without %r the children go to one session
run -q -o 'all.wlsession' -- sh -c "$launch"
"$W" info all.wlsession >info.txt && grep -q "9 kernels" info.txt && grep -q "3 processes" info.txt && ok || bad "one session: $(cat info.txt)"
echo "run_ranks_cli: $pass passed, $fail failed"
[ "$fail" = 0 ]

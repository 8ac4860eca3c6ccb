#!/usr/bin/env bash
# Discovery run on the GPU machine: range profiler behaviour (rp_probe) and ncu's view.
# Usage (from the folder holding bin/, lib/, probe/): bash probe/discover.sh OUTDIR
set -u
O=$1; mkdir -p $O/logs
CUDA_BIN=$(dirname "$(command -v nvcc)")
CR=$(dirname "$CUDA_BIN")
export LD_LIBRARY_PATH=$CR/lib64:$CR/targets/x86_64-linux/lib:$CR/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || echo $CUDA_BIN/ncu)
P=$PWD/probe
W=${W:-$P/../tests/gpu/torch_metrics_workload.py}   # the PyTorch work (modes elementwise, graph, ...)
# build the probe and its C workload here if they did not travel
[ -x $P/librp_probe.so ] || gcc -std=gnu11 -O1 -shared -fPIC -I$CR/include -I$P/../src/capture/cupti_c_shim \
    $P/rp_probe.c -o $P/librp_probe.so -L$CR/lib64 -lcupti -lcuda -lpthread
[ -x $P/graph_probe ] || nvcc -arch=sm_90 -O2 -o $P/graph_probe $P/graph_probe.cu -lpthread
echo "cuda root $CR ncu $NCU"; $NCU --version | tail -1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
probe() { # name replay graph batch cmd...
  local n=$1 r=$2 g=$3 b=$4; shift 4
  local t0=$(date +%s%N)
  RP_LOG=$O/logs/$n.log RP_REPLAY=$r RP_GRAPH=$g RP_BATCH=$b CUDA_INJECTION64_PATH=$P/librp_probe.so timeout 120 "$@" > $O/logs/$n.out 2>&1
  local rc=$?
  echo "$n rc=$rc wall_ms=$(( ($(date +%s%N) - t0) / 1000000 )) $(grep -c '^RANGE' $O/logs/$n.log) ranges printed; $(grep '^DECODE' $O/logs/$n.log | awk '{s+=substr($4,8)} END {print s}') ranges; $(grep -c '^ACT kernel' $O/logs/$n.log) kernels $(grep -c '^ACT memcpy' $O/logs/$n.log) copies $(grep -c '^ACT memset' $O/logs/$n.log) sets; $(grep -c 'PROBE FAIL' $O/logs/$n.log) fails"
}
probe gp_kernel_through kernel through 1000 $P/graph_probe
probe gp_user_through user through 1000 $P/graph_probe
probe gp_kernel_stop kernel stop 1000 $P/graph_probe
probe gp_user_user user user 1000 $P/graph_probe
probe gp_kernel_batch1 kernel stop 1 $P/graph_probe
probe issue_kernel kernel through 1000 python3 $W elementwise
probe issue_user user through 1000 python3 $W elementwise
probe tg_kernel_through kernel through 1000 python3 $W graph
probe tg_user_through user through 1000 python3 $W graph
probe train_user user through 5000 python3 $W transformer
probe train_kernel kernel through 5000 python3 $W transformer
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum
t0=$(date +%s%N); $NCU --csv --page raw --metrics $M python3 $W elementwise > $O/logs/ncu_issue.csv 2>$O/logs/ncu_issue.err; echo "ncu issue rc=$? wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))"
t0=$(date +%s%N); $NCU --csv --page raw --cache-control none --metrics $M python3 $W elementwise > $O/logs/ncu_issue_none.csv 2>&1; echo "ncu issue none rc=$? wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))"
$NCU --csv --page raw --graph-profiling node --metrics gpu__time_duration.sum,smsp__inst_executed.sum $P/graph_probe > $O/logs/ncu_gp_node.csv 2>&1; echo "ncu gp node rc=$?"
$NCU --csv --page raw --graph-profiling graph --metrics gpu__time_duration.sum,smsp__inst_executed.sum $P/graph_probe > $O/logs/ncu_gp_graph.csv 2>&1; echo "ncu gp graph rc=$?"
t0=$(date +%s%N); $NCU --csv --page raw -c 100 --metrics $M python3 $W transformer > $O/logs/ncu_train.csv 2>&1; echo "ncu train rc=$? wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))"
t0=$(date +%s%N); python3 $W transformer > /dev/null; echo "train plain wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))"
# interruption with the current recorder: SIGTERM to warplens after 25 s of a replay run
timeout -s TERM 25 bin/warplens run --metrics default -o /tmp/term.wlsession -- python3 $W loop 600 > $O/logs/term.out 2>&1; echo "term rc=$?"
python3 - <<'PY'
import sqlite3
try:
    c = sqlite3.connect("/tmp/term.wlsession")
    print("term session: kernels", c.execute("select count(*) from kernel").fetchone(), "ranges",
          c.execute("select count(distinct range_index) from kernel_metric").fetchone(),
          "lost", c.execute("select source, count from lost").fetchall())
except Exception as e:
    print("term session:", e)
PY
ls -la /tmp/term.wlsession* 2>&1 | head

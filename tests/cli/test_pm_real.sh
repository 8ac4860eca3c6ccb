#!/usr/bin/env bash
# PM sampling on real records: tests/data/pm-sampling-h100.wlsession is gpu_test_pm_sampling's session
# from the H100 (2026-11-22), cut to the windows around its copy kernel (64 x 1 GiB read and written,
# followed by 5 ms of idle GPU) and its two concurrent kernels on two streams: 828 windows of 100 us,
# 8 metrics each. Checks the analysis and the exports on what the hardware produced: the copy's DRAM
# bytes attributed exactly (64 GiB each way, the analytical count), SM activity high inside it and
# zero in the idle windows, the concurrent pair's windows shared as upper bounds, both exports
# carrying one counter value per window; a window made 600 ms long is named in the summary.
set -u
W=${WARPLENS_BIN:?}
S=$(cd "$(dirname "$0")/../data" && pwd)/pm-sampling-h100.wlsession
. "$(dirname "$0")/checks.sh"

"$W" samples "$S" --pm --csv >k.csv 2>k.err && ok || bad "samples --pm --csv: $(cat k.err)"
"$W" samples "$S" --pm --windows --csv >w.csv 2>w.err && ok || bad "samples --pm --windows --csv: $(cat w.err)"
# per-kernel rows: id,"name",pid,device,start_ms,dur_ms,windows,exact,shared,attribution,metric,unit,value
val() { awk -F, -v k="$1" -v m="$2" '$2 == "\"" k "\"" && $11 == m { print $10 " " $13; exit }' k.csv; }
read -r how bytes <<<"$(val wl_pm_copy_kernel dram__bytes_read.sum)"
gib=68719476736
[ "$how" = exact ] && awk -v b="$bytes" -v g="$gib" 'BEGIN { d = (b - g) / g; exit !(d > -0.03 && d < 0.03) }' && ok \
    || bad "copy: DRAM read $bytes ($how), want 64 GiB within 3 % and exact"
read -r how bytes <<<"$(val wl_pm_copy_kernel dram__bytes_write.sum)"
[ "$how" = exact ] && awk -v b="$bytes" -v g="$gib" 'BEGIN { d = (b - g) / g; exit !(d > -0.05 && d < 0.03) }' && ok \
    || bad "copy: DRAM written $bytes ($how), want 64 GiB within -5..+3 %"
read -r how sm <<<"$(val wl_pm_copy_kernel sm__cycles_active.avg.pct_of_peak_sustained_elapsed)"
awk -v v="$sm" 'BEGIN { exit !(v >= 80) }' && ok || bad "copy: SM active $sm %, want >= 80"
[ "$(awk -F, '$2 == "\"wl_pm_pair_kernel\"" { print $10 }' k.csv | sort -u)" = shared_upper_bound ] && ok \
    || bad "the concurrent pair's attribution: $(awk -F, '$2 == "\"wl_pm_pair_kernel\"" { print $10 }' k.csv | sort -u)"
# windows: the idle ones (no kernel) show no SM activity
idle_max=$(grep -E ',idle,' w.csv | grep 'sm__cycles_active' | awk -F, '{ v = $NF + 0; if (v > m) m = v } END { print m + 0 }')
n_idle=$(grep -E ',idle,' w.csv | grep -c 'sm__cycles_active')
[ "$n_idle" -ge 40 ] && awk -v v="$idle_max" 'BEGIN { exit !(v <= 5) }' && ok \
    || bad "idle windows: $n_idle, highest SM active $idle_max % (want >= 40 windows, <= 5 %)"
# exports: one counter value per window
"$W" export "$S" -o t.json --quiet 2>e.err && ok || bad "json export: $(cat e.err)"
n=$(python3 -c "import json,sys; d=json.load(open('t.json')); e=d['traceEvents'] if isinstance(d,dict) else d; print(sum(1 for x in e if x.get('ph')=='C' and x.get('name')=='PM SM active'))")
[ "$n" = 828 ] && ok || bad "json export: $n 'PM SM active' counter values, want 828"
"$W" export "$S" -o t.perfetto-trace --quiet 2>p.err && [ -s t.perfetto-trace ] && grep -qa "PM DRAM read" t.perfetto-trace && ok \
    || bad "perfetto export: no PM DRAM read track ($(cat p.err))"
# a window the trigger closed late (seen on the H100 for the first one while the GPU idled) is named
cp "$S" late.wlsession && chmod u+w late.wlsession
sqlite3 late.wlsession "UPDATE pm_sample SET start_ns = start_ns - 600000000 WHERE sample_index = (SELECT min(sample_index) FROM pm_sample)"
"$W" samples late.wlsession --pm --limit 1 >late.txt 2>&1 && grep -q "note: 1 window longer than 1.5 intervals (the longest 600.100 ms" late.txt \
    && ok || bad "late window note: $(grep -i note late.txt)"
summary pm_real

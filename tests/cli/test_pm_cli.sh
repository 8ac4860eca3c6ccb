#!/usr/bin/env bash
# PM sampling without a GPU: the recorder's sampler (src/capture/pm_sampler.c, pm_device.c) runs for
# real in tests/pm/pm_sampler_driver against a fake CUPTI (tests/pm/fake_cupti_pm.c), then capture ->
# import -> pm_* tables -> warplens samples / export. Also every failure path: one clear line each
# and the capture still written (unknown metric with close names, a list that needs several passes,
# a preset metric left out to fit one pass, no permission, unsupported GPU, decode failure, the
# combination with --metrics), losses counted (gaps in the hardware sequence, a full ring), a
# context destroyed and created again, a clock that is not the session's, and `warplens run`'s
# options.
set -u
W=${WARPLENS_BIN:?}
B=${WARPLENS_BUILD_DIR:?}
DRV=$B/bin/pm_sampler_driver
. "$(dirname "$0")/checks.sh"
export WARPLENS_PM_INTERVAL_US=1000 # 1 ms windows keep the counts small; the GPU suite checks 100 us

# --- the sampler for real: default preset, 300 ms ------------------------------------------------
FAKE_PM_DISABLED_FILE=$tmp/disabled FAKE_PM_STOPPED_FILE=$tmp/stopped WARPLENS_PM_SAMPLING=default "$DRV" a.wlcap 300 \
    2>a.err && ok || bad "driver failed: $(cat a.err)"
[ -e stopped ] && ok || bad "cuptiPmSamplingStop was not called (the sampler did not stop cleanly)"
# never Disable: on the H100 it led to a double free inside CUPTI at exit (docs/recorder.md)
[ ! -e disabled ] && ok || bad "cuptiPmSamplingDisable was called"
[ "$(wc -l <a.err)" = 2 ] && grep -q "PM sampling on GPU 0 (GH100): 8 metrics every 1000 us, hardware buffer 128 MiB, decoded every 100 ms" a.err \
    && grep -q "windows of 8 metrics every 1000 us; 0 missing (gaps), 0 lost (sample ring full)" a.err && ok \
    || bad "status lines: $(cat a.err)"
# the rest decodes every 10 ms, as at 100 us windows (the default at 1 ms is 100 ms, checked above):
# the decode-error and clock checks count on several decodes in short runs
export WARPLENS_PM_DECODE_MS=10
"$W" import -o a.wlsession a.wlcap >/dev/null 2>&1 && ok || bad "import failed"
n=$(q a.wlsession "SELECT count(DISTINCT sample_index) FROM pm_sample")
# 300 ms of 1 ms windows, less the set-up (slower on a loaded CI machine); all decoded at the end
[ "$n" -ge 200 ] && [ "$n" -le 340 ] && ok || bad "window count $n"
[ "$(q a.wlsession "SELECT count(*) FROM pm_metric")" = 8 ] && ok || bad "metric definitions"
[ "$(q a.wlsession "SELECT count(*) FROM pm_sample")" = $((n * 8)) ] && ok || bad "values per window"
[ "$(q a.wlsession "SELECT status, interval_ns FROM pm_config")" = "on|1000000" ] && ok || bad "pm_config"
# windows follow each other without holes, and indices count up from 0
got=$(q a.wlsession "WITH s AS (SELECT DISTINCT sample_index i, start_ns, end_ns FROM pm_sample)
  SELECT count(*) FROM s a JOIN s b ON b.i = a.i + 1 WHERE b.start_ns != a.end_ns OR a.end_ns - a.start_ns != 1000000")
[ "$got" = 0 ] && ok || bad "$got windows not contiguous or not 1 ms"
[ "$(q a.wlsession "SELECT min(sample_index), max(sample_index) FROM pm_sample")" = "0|$((n - 1))" ] && ok \
    || bad "sample indices"
# the fake evaluates metric i to i + 1.25 in every window
[ "$(q a.wlsession "SELECT count(*) FROM pm_sample WHERE value != metric_index + 1.25")" = 0 ] && ok || bad "values"
[ "$(q a.wlsession "SELECT count(*) FROM lost")" = 0 ] && ok || bad "losses without cause"

# --- warplens samples and the exports ----------------------------------------------------------------
"$W" samples a.wlsession >s.txt 2>&1 && grep -q "PM sampling on, every 1000 us" s.txt \
    && grep -q "^0 .* DRAM read *byte *$n " s.txt && ok || bad "samples summary: $(head -20 s.txt)"
grep -q "^ *1 busy_kernel .* exact " s.txt && ok || bad "samples: the kernel's row: $(tail -5 s.txt)"
"$W" samples a.wlsession --pm --csv >k.csv 2>&1 && ok || bad "samples --csv failed"
# the kernel covers the middle third of the run: its windows are all exact; bytes summed: 3.25 per window
kw=$(grep -m1 '^1,"busy_kernel",.*,dram__bytes_read.sum,byte,' k.csv | cut -d, -f7)
ex=$(grep -m1 '^1,"busy_kernel",.*,dram__bytes_read.sum,byte,' k.csv | cut -d, -f8)
sum=$(grep -m1 '^1,"busy_kernel",.*,dram__bytes_read.sum,byte,' k.csv | cut -d, -f13)
kd=$(q a.wlsession "SELECT duration_ns / 1000000 FROM kernel") # whole 1 ms windows inside the kernel
[ -n "$kw" ] && [ "$kw" -ge "$kd" ] && [ "$kw" -le $((kd + 2)) ] && [ "$kw" = "$ex" ] && ok \
    || bad "kernel windows $kw (exact $ex) for a kernel of $kd ms"
[ -n "$sum" ] && awk -v s="$sum" -v w="$kw" 'BEGIN { exit !(s == w * 3.25) }' && ok || bad "kernel DRAM read sum $sum"
grep -q '^1,"busy_kernel",.*,sm__cycles_active.avg.pct_of_peak_sustained_elapsed,percent,1.25$' k.csv && ok \
    || bad "kernel SM active (a level: averaged)"
"$W" samples a.wlsession --pm --windows --csv >w.csv 2>&1 && ok || bad "samples --windows failed"
e=$(grep -c ',exact,1,1,"busy_kernel",.*,dram__bytes_read.sum,' w.csv); i=$(grep -c ',idle,0,,,0.0,dram__bytes_read.sum,' w.csv)
[ "$e" = "$kw" ] && [ $((e + i)) = "$n" ] && ok || bad "window attribution: $e exact, $i idle of $n"
"$W" samples a.wlsession --kernel 1 --limit 3 >kk.txt 2>&1 && [ "$(grep -c ' exact ' kk.txt)" = 4 ] && ok \
    || bad "samples --kernel 1: $(cat kk.txt)"
"$W" samples a.wlsession --nvml >/dev/null 2>n.err; [ $? = 1 ] && grep -q "no device samples (NVML)" n.err && ok \
    || bad "samples --nvml without NVML samples"
"$W" export a.wlsession -o t.json --quiet && [ "$(grep -o '"name":"PM DRAM read"' t.json | wc -l)" = "$n" ] \
    && grep -q '"args":{"GB/s":3.25e-06}' t.json && ok || bad "json export: PM DRAM read counters"
"$W" export a.wlsession -o t.pftrace --quiet && grep -q "PM SM active" t.pftrace && ok || bad "perfetto export: PM tracks"

# --- failure paths: one clear line each, the capture is still written -------------------------------
WARPLENS_PM_SAMPLING=dram__bytes_red.sum,dram__bytes_write.sum "$DRV" u.wlcap 50 2>u.err && ok || bad "driver (unknown)"
grep -q "unknown metric 'dram__bytes_red.sum'; close names: dram__bytes_read.sum" u.err && grep -q "1 metric every" u.err \
    && ok || bad "unknown metric: $(cat u.err)"
"$W" import -o u.wlsession u.wlcap >/dev/null 2>&1
[ "$(q u.wlsession "SELECT name FROM pm_metric")" = dram__bytes_write.sum ] && ok || bad "unknown metric left out"

WARPLENS_PM_SAMPLING=sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum "$DRV" m.wlcap 50 2>m.err \
    && ok || bad "driver (multi-pass)"
[ "$(wc -l <m.err)" = 1 ] && grep -q "PM sampling is off on GPU 0 (GH100): the metrics need 19 passes, PM sampling collects one; these do not fit with the ones before them: sm__throughput.avg.pct_of_peak_sustained_elapsed (19 passes alone)" m.err \
    && ok || bad "multi-pass message: $(cat m.err)"
"$W" import -o m.wlsession m.wlcap >/dev/null 2>&1
[ "$(q m.wlsession "SELECT status, count(*) FROM pm_config")" = "off|1" ] && [ "$(q m.wlsession "SELECT count(*) FROM pm_sample")" = 0 ] \
    && [ "$(q m.wlsession "SELECT count(*) FROM device")" = 1 ] && ok || bad "multi-pass: status off, capture written"
"$W" samples m.wlsession >/dev/null 2>m2.err; [ $? = 1 ] && grep -q "no device samples" m2.err && ok \
    || bad "samples without samples"

WARPLENS_PM_SAMPLING=compute "$DRV" c.wlcap 50 2>c.err && ok || bad "driver (compute preset)"
grep -q "preset metrics left out to fit one pass: gr__cycles_active.avg (1 pass alone)" c.err && grep -q "3 metrics every" c.err \
    && ok || bad "preset fitted to one pass: $(cat c.err)"

FAKE_PM_ENABLE_ERROR=35 WARPLENS_PM_SAMPLING=default "$DRV" p.wlcap 50 2>p.err && ok || bad "driver (permission)"
[ "$(wc -l <p.err)" = 1 ] && grep -q "PM sampling is off on GPU 0: enabling PM sampling failed (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES); no permission to read GPU performance counters: run as root, or set the nvidia driver option NVreg_RestrictProfilingToAdminUsers=0" p.err \
    && grep -q "Tracing continues" p.err && ok || bad "permission message: $(cat p.err)"
"$W" import -o p.wlsession p.wlcap >/dev/null 2>&1 && [ "$(q p.wlsession "SELECT status FROM pm_config")" = off ] && ok \
    || bad "permission: status off"
"$W" samples p.wlsession --pm >/dev/null 2>p2.err; [ $? = 1 ] && [ "$(wc -l <p2.err)" = 1 ] \
    && grep -q "no PM samples in this session; PM sampling was asked for: GPU 0 off: " p2.err \
    && grep -q "NVreg_RestrictProfilingToAdminUsers=0" p2.err && ok || bad "samples --pm where PM was off: $(cat p2.err)"

FAKE_PM_UNSUPPORTED=1 WARPLENS_PM_SAMPLING=default "$DRV" x.wlcap 50 2>x.err && ok || bad "driver (unsupported)"
[ "$(wc -l <x.err)" = 1 ] && grep -q "unsupported: GPU architecture" x.err && grep -q "needs an Ampere GA10x, Ada, Hopper or newer GPU" x.err \
    && ok || bad "unsupported message: $(cat x.err)"

FAKE_PM_DECODE_ERROR_AFTER=3 WARPLENS_PM_SAMPLING=default "$DRV" e.wlcap 100 2>e.err && ok || bad "driver (decode error)"
grep -q "PM sampling is off on GPU 0: decoding samples failed (CUPTI_ERROR_UNKNOWN)" e.err && ok || bad "decode error: $(cat e.err)"
"$W" import -o e.wlsession e.wlcap >/dev/null 2>&1 && [ "$(q e.wlsession "SELECT status FROM pm_config")" = off ] && ok \
    || bad "decode error: status off"

WARPLENS_METRICS=default WARPLENS_PM_SAMPLING=default "$DRV" r.wlcap 30 2>r.err && ok || bad "driver (with metrics)"
grep -q "PM sampling is off: it cannot run together with hardware metrics" r.err && ok || bad "metrics conflict: $(cat r.err)"
WARPLENS_PC_SAMPLING=1 WARPLENS_PM_SAMPLING=default "$DRV" r.wlcap 30 2>r.err && ok || bad "driver (with stalls)"
grep -q "PM sampling is off: it cannot run together with warp stall sampling" r.err && ok || bad "stalls conflict: $(cat r.err)"

WARPLENS_PM_SAMPLING=memroy "$DRV" r.wlcap 30 2>r.err && ok || bad "driver (bad preset)"
grep -q "unknown PM sampling preset 'memroy' (did you mean memory?)" r.err && ok || bad "bad preset: $(cat r.err)"

# --- losses: gaps in the hardware sequence, a full ring; overflow reported once ------------------------
FAKE_PM_GAP_EVERY=10 WARPLENS_PM_SAMPLING=default "$DRV" g.wlcap 200 2>g.err && ok || bad "driver (gaps)"
"$W" import -o g.wlsession g.wlcap >/dev/null 2>&1
ng=$(q g.wlsession "SELECT count(DISTINCT sample_index) FROM pm_sample")
lg=$(q g.wlsession "SELECT sum(count) FROM lost WHERE source = 'pm_samples' AND detail LIKE 'GPU 0: PM samples missing%'")
# every 10th window is missing: lost = (windows + lost) / 10, give or take the last one
[ -n "$lg" ] && [ $(((ng + lg) / 10 - lg)) -ge -1 ] && [ $(((ng + lg) / 10 - lg)) -le 1 ] && ok || bad "gaps: $lg lost, $ng kept"
grep -q "$lg missing (gaps)" g.err && ok || bad "gap count in the status line: $(cat g.err)"

# a writer held up for 600 ms: the ring (~160 ms of 10 us windows) fills and the rest spills; nothing lost
WARPLENS_PM_INTERVAL_US=10 WARPLENS_PM_SAMPLING=default "$DRV" f.wlcap 800 stall 2>f.err && ok || bad "driver (stall)"
"$W" import -o f.wlsession f.wlcap >/dev/null 2>&1
lf=$(q f.wlsession "SELECT coalesce(sum(count), 0) FROM lost WHERE source = 'pm_samples'")
nf=$(q f.wlsession "SELECT count(DISTINCT sample_index) FROM pm_sample")
total=$(sed -n 's/.*: \([0-9]*\) windows of 8 metrics.*/\1/p' f.err)
[ "$lf" = 0 ] && [ -n "$total" ] && [ "$nf" = "$total" ] && [ "$total" -gt 20000 ] && ok \
    || bad "stalled writer: $lf lost, $nf kept of $total decoded ($(cat f.err))"
# held up for 2.5 s: past the spill's budget, the windows beyond it are lost and counted
WARPLENS_PM_INTERVAL_US=10 WARPLENS_PM_SAMPLING=default "$DRV" f2.wlcap 2700 stall-long 2>f2.err && ok \
    || bad "driver (stall-long)"
"$W" import -o f2.wlsession f2.wlcap >/dev/null 2>&1
lf=$(q f2.wlsession "SELECT sum(count) FROM lost WHERE source = 'pm_samples' AND detail LIKE '%ring was full'")
nf=$(q f2.wlsession "SELECT count(DISTINCT sample_index) FROM pm_sample")
total=$(sed -n 's/.*: \([0-9]*\) windows of 8 metrics.*/\1/p' f2.err)
[ -n "$lf" ] && [ "$lf" -gt 0 ] && [ $((lf + nf)) = "$total" ] && grep -q "$lf lost (sample ring full)" f2.err && ok \
    || bad "past the spill: $lf lost + $nf kept != $total decoded ($(cat f2.err))"

FAKE_PM_OVERFLOW_AT=5 WARPLENS_PM_SAMPLING=default "$DRV" o.wlcap 100 2>o.err && ok || bad "driver (overflow)"
[ "$(grep -c 'the hardware buffer overflowed' o.err)" = 1 ] && grep -q "1 hardware buffer overflow;" o.err && ok \
    || bad "overflow: $(cat o.err)"

# --- the device's last context destroyed and created again ----------------------------------------------
WARPLENS_PM_SAMPLING=default "$DRV" z.wlcap 300 reset 2>z.err && ok || bad "driver (reset)"
"$W" import -o z.wlsession z.wlcap >/dev/null 2>&1
got=$(q z.wlsession "WITH s AS (SELECT DISTINCT sample_index i, start_ns, end_ns FROM pm_sample)
  SELECT count(*), sum(b.start_ns - a.end_ns > 30000000) FROM s a JOIN s b ON b.i = a.i + 1 WHERE b.start_ns != a.end_ns")
[ "$got" = "1|1" ] && [ "$(q z.wlsession "SELECT count(*) FROM lost")" = 0 ] && ok \
    || bad "reset: one pause of ~50 ms, not counted as lost ($got)"
[ "$(q z.wlsession "SELECT count(DISTINCT sample_index) = max(sample_index) + 1 FROM pm_sample")" = 1 ] && ok \
    || bad "reset: indices continue"

# --- samples on another clock are said once -------------------------------------------------------------
FAKE_PM_CLOCK_OFFSET_MS=-120000 WARPLENS_PM_SAMPLING=default "$DRV" k.wlcap 50 2>k.err && ok || bad "driver (clock)"
[ "$(grep -c 'sample times are -120000.* ms from CLOCK_REALTIME' k.err)" = 1 ] && ok || bad "clock check: $(cat k.err)"

# --- warplens run's options -------------------------------------------------------------------------------
"$W" run --pm-sampling defalt -- true >/dev/null 2>r.err; [ $? = 2 ] && grep -q "unknown PM sampling preset 'defalt' (did you mean default?)" r.err \
    && ok || bad "run --pm-sampling defalt: $(cat r.err)"
"$W" run --pm-sampling=dram__bytes_read.sum,x -- true >/dev/null 2>r.err; [ $? = 2 ] && grep -q "preset 'x'" r.err && ok \
    || bad "run --pm-sampling=LIST with a bad word"
"$W" run --pm-sampling --metrics default -- true >/dev/null 2>r.err; [ $? = 2 ] \
    && grep -q -- "--pm-sampling and --metrics cannot be used together" r.err && ok || bad "run: --pm-sampling with --metrics"
"$W" run --stalls --pm-sampling -- true >/dev/null 2>r.err; [ $? = 2 ] \
    && grep -q -- "--pm-sampling and --stalls cannot be used together" r.err && ok || bad "run: --pm-sampling with --stalls"
"$W" run --pm-sampling default --pm-interval 5 -- true >/dev/null 2>r.err; [ $? = 2 ] \
    && grep -q -- "--pm-interval must be 10..1000000 microseconds" r.err && ok || bad "run: --pm-interval 5"
"$W" run --pm-interval 100 -- true >/dev/null 2>r.err; [ $? = 2 ] && grep -q -- "--pm-interval needs --pm-sampling" r.err \
    && ok || bad "run: --pm-interval alone"
# after --pm-sampling, a program name is the program (default preset), a metric list is the list
"$W" run -q --pm-sampling true >/dev/null 2>&1; [ $? = 0 ] && ok || bad "run --pm-sampling PROGRAM"
"$W" run -q --pm-sampling memory,compute true >/dev/null 2>&1; [ $? = 0 ] && ok || bad "run --pm-sampling LIST PROGRAM"
"$W" run --help | grep -q -- "--pm-sampling \[LIST\]" && "$W" run --help | grep -q -- "--pm-interval US" && ok \
    || bad "run --help lacks the PM options"
"$W" samples --help | grep -q -- "--windows" && ok || bad "samples --help lacks --windows"

summary pm_cli

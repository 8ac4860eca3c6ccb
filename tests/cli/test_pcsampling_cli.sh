#!/usr/bin/env bash
# Warp stall sampling without a GPU: the recorder's PC-sampling module (src/capture/pc_sampling.c)
# runs for real in tests/pcsampling/pc_sampling_driver against a fake CUPTI PC-sampling API, then
# capture -> import -> kernel_stall -> warplens kernels --stalls / kernel. Checks the configuration
# the recorder asks for, collection across several GetData calls, records left at Disable, a
# context destroyed mid-run, a full hardware buffer, dropped and unnamed samples, both ways CUPTI
# may hand out function names (the ASan build catches a double free or a leak), and the failure
# paths: no permission, metrics on, a bad period.
set -u
W=${WARPLENS_BIN:?}
B=${WARPLENS_BUILD_DIR:?}
DRV=$B/bin/pc_sampling_driver
. "$(dirname "$0")/checks.sh"
export WARPLENS_PC_SAMPLING=1 WARPLENS_PC_PERIOD=13

# --- one run per way CUPTI may hand out function names ------------------------------------------
for names in fresh shared; do
    FAKE_PCS_NAMES=$names "$DRV" $names.wlcap >$names.out 2>$names.err && ok || bad "$names: driver failed: $(cat $names.err)"
    grep -q "on=1 mode=2 period=13 reasons=4 enables=2 disables=2 getdata=6 misuse=0" $names.out && ok \
        || bad "$names: recorder's use of the API: $(cat $names.out)"
    "$W" import -o $names.wlsession $names.wlcap >/dev/null 2>&1 && ok || bad "$names: import failed"
    s=$names.wlsession
    # launch 11: 3000 PCs over two GetData calls; 12: sums plus the record left at Disable; 13: after
    # a full hardware buffer, collected at exit, plus its record left at Disable
    [ "$(q $s "SELECT group_concat(correlation_id || ':' || r.name || '=' || samples, ' ') FROM (SELECT * FROM
        kernel_stall ORDER BY correlation_id, reason_id) ks JOIN stall_reason r ON r.id = ks.reason_id")" = \
      "11:smsp__pcsamp_warps_issue_stalled_long_scoreboard=9000 11:smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued=6000 11:smsp__pcsamp_warps_issue_stalled_selected=3000 12:smsp__pcsamp_warps_issue_stalled_selected=101 12:smsp__pcsamp_warps_issue_stalled_wait=500 13:smsp__pcsamp_warps_issue_stalled_selected=200 13:smsp__pcsamp_warps_issue_stalled_wait=407" ] \
        && ok || bad "$names: samples: $(q $s 'SELECT correlation_id, reason_id, samples FROM kernel_stall')"
    [ "$(q $s "SELECT count(*) FROM kernel_stall ks JOIN kernel k ON k.id = ks.kernel_id AND
        k.correlation_id = ks.correlation_id AND k.device_id = ks.device_id")" = 7 ] && ok || bad "$names: links"
    [ "$(q $s "SELECT group_concat(device_id || '/' || period_log2 || '/' || coalesce(status, '-'), ' ') FROM stall_config")" \
        = "0/13/- 1/13/-" ] && ok || bad "$names: stall_config: $(q $s 'SELECT * FROM stall_config')"
    [ "$(q $s "SELECT group_concat(source || '=' || count, ' ') FROM lost")" = "pc_samples_dropped=8 pc_buffer_overflows=1" ] \
        && ok || bad "$names: lost: $(q $s 'SELECT source, count FROM lost')"
done
# the recorder's lines: set-up per device, each problem once
[ "$(grep -c 'warp stall sampling on GPU .: one warp sample per SM every 2^13 cycles, 4 stall reasons' fresh.err)" = 2 ] \
    && ok || bad "set-up lines: $(cat fresh.err)"
[ "$(grep -c 'reported a stall reason it did not name' fresh.err)" = 1 ] && ok || bad "unnamed-reason line"
[ "$(grep -c "hardware buffer filled up on GPU 1" fresh.err)" = 1 ] && ok || bad "overflow line"
[ "$(wc -l <fresh.err)" = 4 ] && ok || bad "more recorder lines than expected: $(cat fresh.err)"

# --- WARPLENS_PC_DEBUG: the end-of-run line about what CUPTI did (for checking it on a real GPU) ------
for names in fresh shared; do
    WARPLENS_PC_DEBUG=1 FAKE_PCS_NAMES=$names "$DRV" dbg.wlcap >/dev/null 2>dbg.err
    want="PC sampling debug: 6 GetData calls (at most 2 in one flush), 3021 PC records (+2 left in the configuration"
    want="$want buffer at Disable), 19208 samples over all reasons (CUPTI's totalSamples: 0), records found at 2 of 3"
    want="$want launch exits, function names: 2 kept, "
    [ $names = fresh ] && want="${want}CUPTI hands out a fresh copy per call" || want="${want}CUPTI hands out each one once"
    grep -qF "$want" dbg.err && ok || bad "debug line ($names): $(grep debug dbg.err)"
done

# --- the views on that session --------------------------------------------------------------------
"$W" kernels fresh.wlsession --stalls >k.txt 2>&1 && ok || bad "kernels --stalls: $(cat k.txt)"
grep -q "^     1       1      12000  fake_chase" k.txt && ok || bad "chase row: $(cat k.txt)"
grep -q "long_scoreboard 75.0%, selected 25.0%" k.txt && ok || bad "chase reasons: $(cat k.txt)"
# fake_fma: wait 907, selected 301 of 1208 samples over its two launches
grep -q "^     2       2       1208  fake_fma" k.txt && ok || bad "fma row: $(cat k.txt)"
grep -q "wait 75.1%, selected 24.9%" k.txt && ok || bad "fma reasons: $(cat k.txt)"
"$W" kernel fresh.wlsession fake_chase >c.txt 2>&1 && ok || bad "kernel: $(cat c.txt)"
grep -q "long_scoreboard .* 75.0 %  (not issued: 50.0 %)" c.txt && ok || bad "chase panel: $(cat c.txt)"

# --- no permission: one line per device with the remedy, the status in the session, no samples -------
FAKE_PCS_DENY=1 "$DRV" deny.wlcap >deny.out 2>deny.err && ok || bad "deny: driver failed"
[ "$(grep -c 'warp stall sampling is off on GPU .: enabling PC sampling: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES; no permission to read GPU performance counters.*NVreg_RestrictProfilingToAdminUsers=0.*Tracing continues without stall samples.' deny.err)" = 2 ] \
    && ok || bad "deny lines: $(cat deny.err)"
"$W" import -o deny.wlsession deny.wlcap >/dev/null 2>&1 && ok || bad "deny: import failed"
[ "$(q deny.wlsession "SELECT count(*) FROM stall_config WHERE status LIKE 'enabling PC sampling failed (%PRIVILEGES%'")" = 2 ] \
    && [ "$(q deny.wlsession 'SELECT count(*) FROM kernel_stall')" = 0 ] && [ "$(q deny.wlsession 'SELECT count(*) FROM kernel')" = 3 ] \
    && ok || bad "deny session: $(q deny.wlsession 'SELECT * FROM stall_config')"
"$W" kernels deny.wlsession --stalls 2>&1 | grep -q "warp stall sampling was off: enabling PC sampling failed" && ok \
    || bad "deny: kernels --stalls does not say why"

# --- metrics on: refused in one line, nothing configured -------------------------------------------
FAKE_METRICS=1 "$DRV" m.wlcap >m.out 2>m.err && ok || bad "metrics: driver failed"
grep -q "on=0 .*enables=0" m.out && [ "$(wc -l <m.err)" = 1 ] && grep -q "hardware metrics are on" m.err && ok \
    || bad "metrics refusal: $(cat m.out m.err)"

# --- a period out of range: said once, the default used ------------------------------------------
WARPLENS_PC_PERIOD=99 "$DRV" p.wlcap >p.out 2>p.err && ok || bad "period: driver failed"
grep -q "period=14 " p.out && grep -q "WARPLENS_PC_PERIOD=99 is not valid (5..31); using 14" p.err && ok \
    || bad "bad period: $(cat p.out p.err)"

summary pcsampling_cli

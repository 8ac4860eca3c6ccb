#!/usr/bin/env bash
# NVML device sampling without a GPU: the recorder's sampler (src/capture/nvml_sampler.c) runs for
# real in tests/nvml/nvml_sampler_driver against a fake libnvidia-ml (tests/nvml/fake_nvml.c,
# chosen through WARPLENS_NVML_LIBRARY as `warplens run` users can), then capture -> import ->
# device_sample table -> warplens samples / stats / export. Also the failure paths: a missing
# library, a missing symbol, nvmlInit failing, a value without permission, an unknown PCI bus id.
set -u
W=${WARPLENS_BIN:?}
B=${WARPLENS_BUILD_DIR:?}
DRV=$B/bin/nvml_sampler_driver
FAKE=$B/lib/libfake_nvml.so
. "$(dirname "$0")/checks.sh"

# --- the sampler for real: 2 matched devices, one unknown bus id ------------------------------
FAKE_NVML_SHUTDOWN_FILE=$tmp/shutdown WARPLENS_NVML_LIBRARY=$FAKE "$DRV" a.wlcap 400 20 2>a.err \
    && ok || bad "driver failed: $(cat a.err)"
[ -e shutdown ] && ok || bad "nvmlShutdown was not called (sampler did not stop cleanly)"
[ "$(wc -l <a.err)" = 1 ] && grep -q "NVML has no device with PCI bus id 0000:99:00.0 (CUDA device 2" a.err && ok \
    || bad "unknown bus id: want one line, got: $(cat a.err)"
"$W" import -o a.wlsession a.wlcap >/dev/null 2>&1 && ok || bad "import failed"
n0=$(q a.wlsession "SELECT count(*) FROM device_sample WHERE device_id = 0")
n1=$(q a.wlsession "SELECT count(*) FROM device_sample WHERE device_id = 1")
# 400 ms at 20 ms: ~20 ticks plus the last sample at stop; a loaded CI machine may lose some. The
# two devices may be matched one round apart.
[ "$n0" -ge 5 ] && [ "$n0" -le 24 ] && [ $((n0 - n1)) -ge -1 ] && [ $((n0 - n1)) -le 1 ] && ok \
    || bad "sample counts $n0 / $n1"
[ "$(q a.wlsession "SELECT count(*) FROM device_sample WHERE device_id = 2")" = 0 ] && ok || bad "unmatched device sampled"
# matched by bus id: CUDA 0 is the fake's handle 1 (bus 18), CUDA 1 handle 2 (bus 2A, other domain spelling)
got=$(q a.wlsession "SELECT DISTINCT gpu_util_pct, mem_util_pct, sm_clock_mhz, mem_clock_mhz, power_mw, temperature_c,
  memory_used_bytes FROM device_sample WHERE device_id = 0")
[ "$got" = "50|21|1756|2619|150000|41|1073741824" ] && ok || bad "device 0 values: $got"
got=$(q a.wlsession "SELECT DISTINCT gpu_util_pct, sm_clock_mhz, power_mw, memory_used_bytes FROM device_sample WHERE device_id = 1")
[ "$got" = "60|1757|250000|2147483648" ] && ok || bad "device 1 values: $got"
# energy is read on every sample: 1000 mJ more each time
got=$(q a.wlsession "SELECT max(energy_mj) - min(energy_mj) = 1000 * (count(*) - 1) FROM device_sample WHERE device_id = 0")
[ "$got" = 1 ] && ok || bad "energy series"
# windows chain: each starts where the previous sample of the device was taken, and lasts ~ the interval
got=$(q a.wlsession "SELECT count(*) FROM device_sample s JOIN device_sample p ON p.device_id = s.device_id
  AND p.ts_ns = (SELECT max(ts_ns) FROM device_sample x WHERE x.device_id = s.device_id AND x.ts_ns < s.ts_ns)
  WHERE s.window_start_ns != p.ts_ns")
[ "$got" = 0 ] && ok || bad "$got windows do not start at the previous sample"
got=$(q a.wlsession "SELECT count(*) FROM device_sample WHERE ts_ns <= window_start_ns")
[ "$got" = 0 ] && ok || bad "$got empty windows"

# --- analysis and CLI ------------------------------------------------------------------------------
"$W" samples a.wlsession --csv >s.csv 2>&1 && ok || bad "warplens samples failed: $(head -3 s.csv)"
[ "$(grep -c '^[0-9]*,0,.*,exact,1,1,"busy_kernel"' s.csv)" = "$n0" ] && ok || bad "device 0 not all exact: $(head -3 s.csv)"
[ "$(grep -c '^[0-9]*,1,.*,idle,0,' s.csv)" = "$n1" ] && ok || bad "device 1 not all idle"
"$W" samples a.wlsession --kernel 1 --limit 2 >k.txt 2>&1 && [ "$(grep -c 'exact' k.txt)" = 2 ] && ok \
    || bad "samples --kernel: $(cat k.txt)"
"$W" kernel a.wlsession 1 >kp.txt 2>&1 && grep -q "device samples (NVML)" kp.txt && ok || bad "kernel panel has no samples"
"$W" stats a.wlsession --only samples >st.txt 2>&1 && grep -q "^0 .* $n0 *$n0 *0 *0 *50.0" st.txt && ok \
    || bad "stats samples table: $(cat st.txt)"
"$W" stats a.wlsession >all.txt 2>&1 && grep -q "Device samples" all.txt && ok || bad "stats does not show samples"
"$W" export a.wlsession -o t.json --quiet && [ "$(grep -o '"name":"NVML SM clock"' t.json | wc -l)" = $((n0 + n1)) ] \
    && ok || bad "json export: NVML SM clock counters"
"$W" export a.wlsession -o t.pftrace --quiet && grep -q "NVML power" t.pftrace && ok || bad "perfetto export: NVML tracks"

# --- failure paths: one clear line each, the capture is still written --------------------------
WARPLENS_NVML_LIBRARY=$tmp/no/libnvidia-ml.so.1 "$DRV" m.wlcap 100 20 2>m.err && ok || bad "driver failed without NVML"
[ "$(grep -c 'NVML' m.err)" = 1 ] && grep -q "NVML sampling is off: cannot load $tmp/no/libnvidia-ml.so.1" m.err \
    && grep -q "tracing continues" m.err && ok || bad "missing library message: $(cat m.err)"
"$W" import -o m.wlsession m.wlcap >/dev/null 2>&1 && [ "$(q m.wlsession 'SELECT count(*) FROM device_sample')" = 0 ] \
    && [ "$(q m.wlsession 'SELECT count(*) FROM kernel')" = 1 ] && ok || bad "capture without NVML"
"$W" samples m.wlsession >/dev/null 2>m2.err; [ $? = 1 ] && grep -q "no device samples" m2.err && ok || bad "samples without samples"

FAKE_NVML_INIT_ERROR=3 WARPLENS_NVML_LIBRARY=$FAKE "$DRV" i.wlcap 100 20 2>i.err && ok || bad "driver failed on init error"
[ "$(wc -l <i.err)" = 1 ] && grep -q "NVML sampling is off: nvmlInit failed (Unknown Error)" i.err && ok \
    || bad "init failure message: $(cat i.err)"

FAKE_NVML_POWER_DENIED=1 WARPLENS_NVML_LIBRARY=$FAKE "$DRV" p.wlcap 150 20 2>p.err && ok || bad "driver failed on power denied"
[ "$(grep -c 'NVML cannot read power of CUDA device [01] (Insufficient Permissions); that series is missing' p.err)" = 2 ] \
    && ok || bad "permission message once per device: $(cat p.err)"
"$W" import -o p.wlsession p.wlcap >/dev/null 2>&1
got=$(q p.wlsession "SELECT count(*) > 0, count(power_mw), count(sm_clock_mhz) = count(*) FROM device_sample")
[ "$got" = "1|0|1" ] && ok || bad "power denied: power must be NULL, the rest present ($got)"

WARPLENS_NVML_LIBRARY=$B/lib/libfake_nvml_noenergy.so "$DRV" e.wlcap 100 20 2>e.err && ok || bad "driver failed on no-energy lib"
grep -q "has no nvmlDeviceGetTotalEnergyConsumption; that series is not sampled" e.err && ok || bad "missing symbol: $(cat e.err)"
"$W" import -o e.wlsession e.wlcap >/dev/null 2>&1
[ "$(q e.wlsession "SELECT count(*) > 0, count(energy_mj) FROM device_sample")" = "1|0" ] && ok || bad "no-energy samples"

# --- warplens run's option -----------------------------------------------------------------------
"$W" run --nvml-interval 5 -- true >/dev/null 2>r.err; [ $? = 2 ] && grep -q "nvml-interval must be 0 (off) or 10..60000" r.err \
    && ok || bad "--nvml-interval 5 accepted"
"$W" run --nvml-interval -- true >/dev/null 2>&1; [ $? = 2 ] && ok || bad "--nvml-interval without a number accepted"
"$W" run --help | grep -q -- "--nvml-interval MS" && ok || bad "run --help lacks --nvml-interval"

summary nvml_cli

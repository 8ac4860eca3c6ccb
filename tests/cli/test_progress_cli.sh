#!/usr/bin/env bash
# The progress line of long work, on a pseudo-terminal (python3's pty module): export (Perfetto,
# JSON, JFR), report and import show one line rewritten in place (\r, erase) with done/total,
# percent and rate, cleared at the end; nothing when stderr is not a terminal, nothing with -q,
# and nothing for work shorter than the threshold (WARPLENS_PROGRESS_AFTER_MS, lowered to 0 here
# so that the small real sessions of tests/data show it without a long run).
set -u
. "$(dirname "$0")/checks.sh"
W=$WARPLENS_BIN
S=$WARPLENS_TEST_DATA/demo-h100.wlsession
CAP=$WARPLENS_TEST_DATA/demo-h100.wlcap

# on_tty OUT CMD...: runs CMD with stdin, stdout and stderr on a pseudo-terminal; all it wrote into OUT
on_tty() {
    python3 - "$@" <<'PY'
import os, pty, sys
out = sys.argv[1]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
data = b""
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    data += chunk
_, status = os.waitpid(pid, 0)
open(out, "wb").write(data)
sys.exit(os.waitstatus_to_exitcode(status))
PY
}
export WARPLENS_PROGRESS_AFTER_MS=0
unset WARPLENS_PROGRESS

for fmt in perfetto json jfr; do
    on_tty tty.txt "$W" export "$S" --format $fmt -o out.$fmt && [ -s out.$fmt ] && ok || bad "export $fmt on a terminal"
    grep -aqE $'\r\e\\[Kexporting: 100% [0-9,]+ of [0-9,]+ records' tty.txt && ok \
        || bad "export $fmt: no progress line: $(tr '\r\033' '^~' <tty.txt | head -c 300)"
    # the line is erased before the summary: the summary starts a line of its own
    grep -aq $'\r\e\\[Kwrote out' tty.txt && ok || bad "export $fmt: progress line not cleared before the summary"
    on_tty tty.txt "$W" export "$S" --format $fmt -q -o out.$fmt && ok || bad "export -q $fmt"
    [ ! -s tty.txt ] && ok || bad "export -q $fmt printed: $(head -c 200 tty.txt)"
    "$W" export "$S" --format $fmt -o out.$fmt >out.txt 2>err.txt && ok || bad "export $fmt without a terminal"
    ! grep -aq "exporting" err.txt out.txt && [ ! -s err.txt ] && ok || bad "export $fmt: progress without a terminal"
done
on_tty tty.txt "$W" report "$S" -o r.html && grep -aqE $'\r\e\\[Kreport: 100% ' tty.txt && ok \
    || bad "report: no progress line: $(tr '\r\033' '^~' <tty.txt | head -c 300)"
on_tty tty.txt "$W" report "$S" -q -o r.html && [ ! -s tty.txt ] && [ -s r.html ] && ok || bad "report -q printed"
on_tty tty.txt "$W" import -o i.wlsession "$CAP" && grep -aqE $'\r\e\\[Kimporting: 100% [0-9,]+ of [0-9,]+ bytes' tty.txt \
    && ok || bad "import: no progress line: $(tr '\r\033' '^~' <tty.txt | head -c 300)"
on_tty tty.txt "$W" import -q -o i.wlsession "$CAP" && [ ! -s tty.txt ] && ok || bad "import -q printed"
# merge: inputs surveyed, then copied (2 steps an input)
M2=$WARPLENS_TEST_DATA/torch-h100.wlsession
on_tty tty.txt "$W" merge -o m.wlsession "$S" "$M2" && grep -aqE $'\r\e\\[Kmerging: 100% 4 of 4 steps' tty.txt && ok \
    || bad "merge: no progress line: $(tr '\r\033' '^~' <tty.txt | head -c 300)"
grep -aq $'\r\e\\[Kmerged 2 sessions' tty.txt && ok || bad "merge: progress line not cleared before its summary"
on_tty tty.txt "$W" merge -q -o m.wlsession "$S" "$M2" && [ ! -s tty.txt ] && [ -s m.wlsession ] && ok || bad "merge -q printed"
# decode: writing a large in-kernel buffer's JSON or Perfetto trace
"$WARPLENS_BUILD_DIR/bin/bench_decode" $((1 << 20)) 1 --write ik.bin >/dev/null 2>&1
for fmt in json perfetto; do
    on_tty tty.txt "$W" decode ik.bin --format $fmt -o ik.$fmt && [ -s ik.$fmt ] && ok || bad "decode $fmt on a terminal"
    grep -aqE $'\r\e\\[Kwriting: 100% [0-9,]+ of [0-9,]+ events' tty.txt && ok \
        || bad "decode $fmt: no progress line: $(tr '\r\033' '^~' <tty.txt | head -c 300)"
    on_tty tty.txt "$W" decode -q ik.bin --format $fmt -o ik.$fmt && [ ! -s tty.txt ] && ok || bad "decode -q $fmt printed"
done
# the threshold: work shorter than it shows nothing, even on a terminal
WARPLENS_PROGRESS_AFTER_MS=60000 on_tty tty.txt "$W" export "$S" -o out.json && ! grep -aq exporting tty.txt && ok \
    || bad "progress before the threshold"
# WARPLENS_PROGRESS=0 turns it off on a terminal; =1 shows it without one
WARPLENS_PROGRESS=0 on_tty tty.txt "$W" export "$S" -o out.json && ! grep -aq exporting tty.txt && ok \
    || bad "WARPLENS_PROGRESS=0"
WARPLENS_PROGRESS=1 "$W" export "$S" -o out.json >/dev/null 2>err.txt && grep -aq "exporting: 100%" err.txt && ok \
    || bad "WARPLENS_PROGRESS=1 without a terminal"

summary progress_cli

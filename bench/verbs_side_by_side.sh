#!/usr/bin/env bash
# Times the reading verbs and the exports of two builds on one session, alternating (base new new
# base) so that a shared machine's load falls on both alike: stats, kernels, advise and the HTML
# report through each build's CLI (/usr/bin/time: wall, CPU, peak RSS), then Perfetto and JFR through
# each build's bench_export (a fresh child process per export). The report's HTML of the two builds
# is compared byte for byte.
# Usage: bench/verbs_side_by_side.sh BASE_BUILD_DIR NEW_BUILD_DIR SESSION
#   (a build dir holds bin/warplens and bin/bench_export; make a 10 M-kernel session with
#    NEW_BUILD_DIR/bin/bench_export --make-session FILE --kernels 10000000)
set -euo pipefail
if [ $# -ne 3 ]; then
    sed -n '2,9p' "$0" >&2
    exit 2
fi
base=$1 new=$2 s=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
order="base new new base"
dir_of() { [ "$1" = base ] && echo "$base" || echo "$new"; }
for verb in stats kernels advise; do
    for who in $order; do
        /usr/bin/time -f "  $who $verb %e s wall %U+%S s CPU %M KB" "$(dir_of $who)/bin/warplens" "$verb" "$s" \
            >/dev/null 2>"$tmp/err" || true
        tail -1 "$tmp/err"
    done
done
for who in $order; do
    /usr/bin/time -f "  $who report %e s wall %U+%S s CPU %M KB" "$(dir_of $who)/bin/warplens" report "$s" \
        -o "$tmp/$who.html" -q 2>"$tmp/err" || true
    tail -1 "$tmp/err"
done
cmp -s "$tmp/base.html" "$tmp/new.html" && echo "  report HTML: identical" || echo "  report HTML: differs"
for who in $order; do
    "$(dir_of $who)/bin/bench_export" --session "$s" --formats jfr,perfetto --dir "$tmp" 2>&1 |
        grep -E '^(jfr|perfetto)' | sed "s/^/  $who /"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/usr/bin/env bash
# CLI test of kernel.config_id (src/store/kernel_config.h) on the real H100 capture: import fills
# it for every kernel, one id per distinct launch configuration; every reader that takes the
# configuration from it (exports, stats, advise, report, kernels) gives the same bytes as on the
# same session without the column and with NULL ids; an id that does not match its row is damage,
# left out and named; merge and `import --upgrade` compute the ids rather than copy them. The real
# two-rank job merged covers the readers' other path (through the start index, several processes).
set -u
BIN=${WARPLENS_BIN:?WARPLENS_BIN not set}
SRC=${WARPLENS_SOURCE_DIR:?WARPLENS_SOURCE_DIR not set}
DATA=${WARPLENS_TEST_DATA:-$SRC/tests/data}
. "$(dirname "$0")/checks.sh"
export WARPLENS_CACHE_DIR=off # every open censuses: the damaged copies are told apart by content alone

CFG="grid_x, grid_y, grid_z, block_x, block_y, block_z, cluster_x, cluster_y, cluster_z, registers_per_thread,"
CFG+=" static_smem, dynamic_smem, smem_limit_config, local_mem_per_thread, cache_config_requested, carveout_requested"

mkdir id wide nulls
"$BIN" import -q -o id/s.wlsession "$DATA/demo-h100.wlcap"
check '[ "$(q id/s.wlsession "SELECT count(*) FROM kernel WHERE config_id IS NULL")" = 0 ]' "import: every kernel has an id"
n_ids=$(q id/s.wlsession "SELECT count(DISTINCT config_id) FROM kernel")
n_cfg=$(q id/s.wlsession "SELECT count(*) FROM (SELECT DISTINCT $CFG FROM kernel)")
check '[ "$n_ids" = "$n_cfg" ] && [ "$n_ids" -gt 1 ]' "import: $n_ids ids for $n_cfg configurations"
check '[ "$(q id/s.wlsession "SELECT count(*) FROM (SELECT config_id FROM kernel GROUP BY config_id
    HAVING count(DISTINCT grid_x || block_x || registers_per_thread || dynamic_smem) > 1)")" = 0 ]' \
    "import: an id never stands for two configurations"

cp id/s.wlsession wide/s.wlsession
q wide/s.wlsession "ALTER TABLE kernel DROP COLUMN config_id"
cp id/s.wlsession nulls/s.wlsession
q nulls/s.wlsession "UPDATE kernel SET config_id = NULL WHERE id % 2 = 0"

# outputs DIR: every reader's output on DIR/s.wlsession, run from DIR (the path is in some outputs)
outputs() {
    (cd "$1" && "$BIN" export s.wlsession -q -o t.pftrace && "$BIN" export s.wlsession -q -o t.json &&
        "$BIN" export s.wlsession -q -o t.jfr && "$BIN" stats s.wlsession >stats.txt &&
        "$BIN" stats s.wlsession --csv >stats.csv && "$BIN" advise s.wlsession --json >advise.json &&
        "$BIN" report s.wlsession -q -o r.html && "$BIN" kernels s.wlsession --json >kernels.json)
}
for d in id wide nulls; do
    outputs $d
    check '[ $? = 0 ]' "$d: every reader ran"
done
for f in t.pftrace t.json t.jfr stats.txt stats.csv advise.json r.html kernels.json; do
    check 'cmp -s id/$f wide/$f' "$f: differs between the ids and the columns"
    check 'cmp -s id/$f nulls/$f' "$f: differs between the ids and NULL ids"
done

# an id that is not its row's: the row is left out, named with both ids
cp id/s.wlsession bad.wlsession
q bad.wlsession "UPDATE kernel SET config_id = config_id + 1 WHERE id = 3"
want=$(q bad.wlsession "SELECT config_id FROM kernel WHERE id = 3")
right=$((want - 1))
"$BIN" stats bad.wlsession >/dev/null 2>err
check 'grep -qF "kernel row 3: config_id is $want, not the id of the row'"'"'s launch configuration ($right)" err' \
    "a wrong id: $(cat err)"
"$BIN" info --check bad.wlsession >check.txt
check '[ $? = 1 ]' "a wrong id: info --check fails"
# an edited configuration without its id: the same
cp id/s.wlsession edited.wlsession
q edited.wlsession "UPDATE kernel SET registers_per_thread = registers_per_thread + 1 WHERE id = 4"
"$BIN" stats edited.wlsession >/dev/null 2>err
check 'grep -qF "kernel row 4: config_id is" err' "an edited configuration: $(cat err)"

# merge computes the ids, for inputs without the column too; `import --upgrade` adds and fills it
# (two ranks of a real job: one upgraded, so with ids, one without the column)
gunzip -c "$DATA/ranks/ddp-nccl-h200-rank0.wlsession.gz" >r0.wlsession
gunzip -c "$DATA/ranks/ddp-nccl-h200-rank1.wlsession.gz" >r1.wlsession
"$BIN" import --upgrade r0.wlsession >/dev/null
"$BIN" merge -q -o merged.wlsession r0.wlsession r1.wlsession
check '[ $? = 0 ] && [ "$(q merged.wlsession "SELECT count(*) FROM kernel WHERE config_id IS NULL")" = 0 ]' \
    "merge: every kernel has an id"
"$BIN" info --check merged.wlsession >check.txt
check '[ $? = 0 ]' "merge: the ids are the rows' own: $(cat check.txt)"
# two processes: the readers take the kernels through kernel_by_start, not in table order; the same bytes
mkdir mid mwide
cp merged.wlsession mid/s.wlsession
cp merged.wlsession mwide/s.wlsession
q mwide/s.wlsession "ALTER TABLE kernel DROP COLUMN config_id"
for d in mid mwide; do
    outputs $d
    check '[ $? = 0 ]' "merged $d: every reader ran"
done
for f in t.pftrace t.json t.jfr stats.txt advise.json r.html kernels.json; do
    check 'cmp -s mid/$f mwide/$f' "merged $f: differs between the ids and the columns"
done
cp "$DATA/demo-h100.wlsession" old.wlsession
"$BIN" import --upgrade old.wlsession >/dev/null
check '[ $? = 0 ] && [ "$(q old.wlsession "SELECT count(*) FROM kernel WHERE config_id IS NULL")" = 0 ]' \
    "upgrade: every kernel has an id"
"$BIN" info --check old.wlsession >check.txt
check '[ $? = 0 ]' "upgrade: the ids are the rows' own: $(cat check.txt)"
ids() { q "$1" "SELECT group_concat(config_id) FROM (SELECT DISTINCT config_id FROM kernel ORDER BY 1)"; }
check '[ "$(ids old.wlsession)" = "$(ids id/s.wlsession)" ]' "upgrade: the ids import gives the same capture"

summary "kernel config"

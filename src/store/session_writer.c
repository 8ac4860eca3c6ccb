/* Building a session database (see session_writer.h): create it under a temporary name with the
 * schema and prepared statements, and, once every capture is imported (session_import.c), derive
 * the links between records with set-based SQL, commit and rename into place. */
#include "store/session_writer.h"

#include <inttypes.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/atomic_file.h"
#include "store/kernel_config.h"
#include "store/row_pack.h"
#include "store/schema.h"
#include "store/session.h"
#include "store/session_identity.h"
#include "store/session_writer_internal.h"

int wl_store_exec(wl_session_writer *w, const char *sql, char *err, size_t n)
{
    char *msg = NULL;
    if (sqlite3_exec(w->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        wl_store_set_err(err, n, "SQLite: %s", msg ? msg : sqlite3_errmsg(w->db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

void wl_session_writer_set_progress(wl_session_writer *w, const wl_progress *p)
{
    w->progress = p ? *p : (wl_progress){NULL, NULL};
}

wl_session_writer *wl_session_writer_create(const char *path, char *err, size_t err_size)
{
    wl_session_writer *w = calloc(1, sizeof *w);
    if (!w) {
        wl_store_set_err(err, err_size, "out of memory");
        return NULL;
    }
    if (strlen(path) >= sizeof w->final_path || wl_tmp_path_for(path, w->tmp_path, sizeof w->tmp_path)) {
        wl_store_set_err(err, err_size, "output path too long: %s", path);
        free(w);
        return NULL;
    }
    strcpy(w->final_path, path);
    unlink(w->tmp_path);
    wl_store_init(); /* before this process's first use of SQLite (`warplens run` reads the session next) */
    if (sqlite3_open_v2(w->tmp_path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        wl_store_set_err(err, err_size, "cannot create %s: %s", w->tmp_path, w->db ? sqlite3_errmsg(w->db) : "?");
        wl_session_writer_abort(w);
        return NULL;
    }
    /* The file is private until renamed, so no journal is needed: a failure discards it. Pages of
     * 16 KiB, set before the first table (schema.h): the verbs read whole tables in their order,
     * and a quarter of the page reads (a system call each) took `kernels` on 10 M kernels from
     * 3.7-4.1 to 2.7-2.8 s; 64 KiB pages slowed the exports' seeks (bench/results/export.txt). */
    if (wl_kcfg_register(w->db)) {
        wl_store_set_err(err, err_size, "cannot register a function: %s", sqlite3_errmsg(w->db));
        wl_session_writer_abort(w);
        return NULL;
    }
    if (wl_store_exec(w, "PRAGMA page_size=" WL_SESSION_PAGE_SIZE "; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                " PRAGMA temp_store=MEMORY;"
                " PRAGMA cache_size=-65536; BEGIN;", err, err_size) ||
        wl_store_exec(w, WL_SCHEMA_SQL, err, err_size) || wl_identity_ensure_schema(w->db, err, err_size) ||
        wl_store_exec(w, "CREATE TEMP TABLE extcorr (pid INTEGER, correlation_id INTEGER, external_id INTEGER,"
                " kind INTEGER);", err, err_size)) {
        wl_session_writer_abort(w);
        return NULL;
    }
    for (int i = 0; i < S_COUNT; i++) {
        if (sqlite3_prepare_v3(w->db, WL_IMPORT_SQL[i], -1, SQLITE_PREPARE_PERSISTENT, &w->st[i], NULL) != SQLITE_OK) {
            wl_store_set_err(err, err_size, "SQLite prepare failed: %s", sqlite3_errmsg(w->db));
            wl_session_writer_abort(w);
            return NULL;
        }
    }
    char v[16];
    snprintf(v, sizeof v, "%d", WL_SCHEMA_VERSION);
    if (wl_session_writer_meta(w, "format", WL_SESSION_FORMAT) || wl_session_writer_meta(w, "schema_version", v) ||
        wl_session_writer_meta(w, "clock", "CLOCK_REALTIME ns") ||
        wl_session_writer_meta(w, "created_by", "warplens 0.1.0")) {
        wl_store_set_err(err, err_size, "cannot write session metadata: %s", sqlite3_errmsg(w->db));
        wl_session_writer_abort(w);
        return NULL;
    }
    return w;
}

int wl_session_writer_meta(wl_session_writer *w, const char *key, const char *value)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(w->db, "INSERT OR REPLACE INTO meta (key, value) VALUES (?,?)", -1, &s, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(s, 1, key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 2, value ? value : "", -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(s) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(s);
    return rc;
}

void wl_session_writer_abort(wl_session_writer *w)
{
    if (!w)
        return;
    for (int i = 0; i < S_COUNT; i++)
        sqlite3_finalize(w->st[i]);
    if (w->db)
        sqlite3_close(w->db);
    if (w->tmp_path[0])
        unlink(w->tmp_path);
    free(w);
}

/* (kind 3 = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, the kind warplens scopes push.)
 * Links computed once all captures are in: each GPU record gets the API call that caused it (same
 * process and correlation id), that call's thread, and the user scope that was open (CUPTI
 * external correlation first; time containment on the launching thread otherwise). */
static const char *const LINK_SQL =
    /* Under kernel replay CUPTI gives each kernel of a graph launch one record per pass (on the
     * H100: two records per node with two passes, only the first pass's timed). A launch runs each
     * node once, so one record per node is kept, the timed one first, and how many were merged is
     * kept as a figure of the process. Only where metrics ran with kernel replay: elsewhere a
     * conditional node may run a node several times in one launch. */
    "INSERT OR REPLACE INTO recorder_stat (pid, name, value) SELECT pid, 'graph_kernel_replay_records_merged',\n"
    "  count(*) - count(DISTINCT correlation_id || ':' || graph_node_id) FROM kernel WHERE graph_id != 0\n"
    "  AND graph_node_id IS NOT NULL AND pid IN (SELECT pid FROM metric_config WHERE replay = 'kernel') GROUP BY pid\n"
    "  HAVING count(*) > count(DISTINCT correlation_id || ':' || graph_node_id);\n"
    "DELETE FROM kernel WHERE graph_id != 0 AND graph_node_id IS NOT NULL\n"
    "  AND pid IN (SELECT pid FROM metric_config WHERE replay = 'kernel') AND id NOT IN (SELECT\n"
    "  coalesce(min(CASE WHEN has_timestamps THEN id END), min(id)) FROM kernel WHERE graph_id != 0\n"
    "  AND graph_node_id IS NOT NULL GROUP BY pid, correlation_id, graph_node_id);\n"
    "CREATE INDEX temp.extcorr_by_corr ON extcorr(pid, correlation_id);\n"
    "CREATE INDEX scope_by_thread ON scope(pid, tid, start_ns);\n"
    "UPDATE api_call SET scope_id = e.external_id FROM temp.extcorr e\n"
    "  WHERE e.pid = api_call.pid AND e.correlation_id = api_call.correlation_id AND e.kind = 3;\n"
    "UPDATE api_call SET scope_id = (SELECT s.scope_id FROM scope s WHERE s.pid = api_call.pid\n"
    "  AND s.tid = api_call.tid AND s.start_ns <= api_call.start_ns\n"
    "  AND (s.end_ns IS NULL OR s.end_ns >= api_call.end_ns) ORDER BY s.start_ns DESC LIMIT 1)\n"
    "  WHERE scope_id IS NULL AND EXISTS (SELECT 1 FROM scope s2 WHERE s2.pid = api_call.pid);\n"
    "UPDATE kernel SET api_id = a.id, tid = a.tid, scope_id = a.scope_id FROM api_call a\n"
    "  WHERE a.pid = kernel.pid AND a.correlation_id = kernel.correlation_id;\n"
    "UPDATE kernel SET scope_id = e.external_id FROM temp.extcorr e\n"
    "  WHERE kernel.scope_id IS NULL AND e.pid = kernel.pid AND e.correlation_id = kernel.correlation_id AND e.kind = 3;\n"
    "UPDATE memcpy SET api_id = a.id, tid = a.tid, scope_id = a.scope_id FROM api_call a\n"
    "  WHERE a.pid = memcpy.pid AND a.correlation_id = memcpy.correlation_id;\n"
    "UPDATE memset SET api_id = a.id, tid = a.tid, scope_id = a.scope_id FROM api_call a\n"
    "  WHERE a.pid = memset.pid AND a.correlation_id = memset.correlation_id;\n"
    "UPDATE annotation SET kernel_id = k.id FROM kernel k WHERE annotation.target = 'kernel'\n"
    "  AND k.pid = annotation.pid AND k.correlation_id = annotation.correlation_id;\n"
    "UPDATE occupancy_check SET kernel_id = k.id FROM kernel k\n"
    "  WHERE k.pid = occupancy_check.pid AND k.correlation_id = occupancy_check.correlation_id;\n"
    /* what each metric range measured (docs/schema.md, metric_range): captures without owner
     * records (older recorders) name their kernel by correlation id alone */
    "INSERT OR IGNORE INTO metric_range (pid, device_id, range_index, correlation_id, kind, matched, part, parts)\n"
    "  SELECT pid, device_id, range_index, max(correlation_id), CASE WHEN max(correlation_id) != 0 THEN 'kernel' END,\n"
    "    CASE WHEN max(correlation_id) != 0 THEN 'order' END, 0, 1 FROM kernel_metric\n"
    "  GROUP BY pid, device_id, range_index;\n"
    "CREATE INDEX metric_range_by_corr ON metric_range(pid, correlation_id);\n"
    /* a kernel's range: the one kernel of its launch. Each statement here is driven by the
     * ranges' rows, so its cost is linear in them: driven by the kernels' (a join with a count per
     * kernel), a 10,000-node graph replayed 25 times took minutes to import */
    "UPDATE metric_range SET kernel_id = (SELECT k.id FROM kernel k WHERE k.pid = metric_range.pid\n"
    "  AND k.correlation_id = metric_range.correlation_id AND k.device_id = metric_range.device_id)\n"
    "  WHERE metric_range.kind = 'kernel' AND (SELECT count(*) FROM kernel k2\n"
    "  WHERE k2.pid = metric_range.pid AND k2.correlation_id = metric_range.correlation_id) = 1;\n"
    /* a graph launch's node ranges: the launch's nodes (kernels, copies, sets) in node-id order,
     * which is the order a captured stream ran them in. Tied only when they are exactly as many as
     * the launch's ranges and every kernel's block count equals its range's launched CTAs (the
     * recorder collects sm__ctas_launched.sum for this), else the launch's ranges stay untied. */
    "CREATE TEMP TABLE graph_work AS SELECT pid, device_id, correlation_id, src, id, blocks,\n"
    "  row_number() OVER (PARTITION BY pid, device_id, correlation_id ORDER BY node, src, id) - 1 AS rn,\n"
    "  count(*) OVER (PARTITION BY pid, device_id, correlation_id) AS cnt FROM (\n"
    "  SELECT pid, device_id, correlation_id, 0 AS src, min(id) AS id, graph_node_id AS node, max(blocks) AS blocks\n"
    "    FROM kernel WHERE graph_id != 0 GROUP BY pid, device_id, correlation_id, graph_node_id\n"
    "  UNION ALL SELECT pid, device_id, correlation_id, 1, min(id), graph_node_id, NULL FROM memcpy\n"
    "    WHERE graph_id != 0 GROUP BY pid, device_id, correlation_id, graph_node_id\n"
    "  UNION ALL SELECT pid, device_id, correlation_id, 2, min(id), graph_node_id, NULL FROM memset\n"
    "    WHERE graph_id != 0 GROUP BY pid, device_id, correlation_id, graph_node_id)\n"
    "  WHERE correlation_id IN (SELECT correlation_id FROM metric_range WHERE kind = 'graph_node');\n"
    "CREATE INDEX temp.graph_work_by_node ON graph_work(pid, correlation_id, rn);\n"
    "CREATE TEMP TABLE graph_pair AS SELECT r.rowid AS rid, r.pid, r.device_id, r.correlation_id, g.src, g.id,\n"
    "  (g.src != 0 OR c.value IS NULL OR c.value = g.blocks) AS ok FROM metric_range r JOIN temp.graph_work g\n"
    "  ON g.pid = r.pid AND g.device_id = r.device_id AND g.correlation_id = r.correlation_id AND g.rn = r.part\n"
    "  AND g.cnt = r.parts LEFT JOIN (SELECT km.pid, km.device_id, km.range_index, km.value FROM kernel_metric km\n"
    "  JOIN metric mm ON mm.id = km.metric_id WHERE mm.name = 'sm__ctas_launched.sum') c ON c.pid = r.pid\n"
    "  AND c.device_id = r.device_id AND c.range_index = r.range_index WHERE r.kind = 'graph_node';\n"
    "CREATE INDEX temp.graph_pair_by_launch ON graph_pair(pid, device_id, correlation_id, ok);\n"
    "UPDATE metric_range SET kernel_id = CASE p.src WHEN 0 THEN p.id END, memcpy_id = CASE p.src WHEN 1 THEN p.id END,\n"
    "  memset_id = CASE p.src WHEN 2 THEN p.id END FROM temp.graph_pair p WHERE metric_range.rowid = p.rid\n"
    "  AND NOT EXISTS (SELECT 1 FROM temp.graph_pair q WHERE q.pid = p.pid AND q.device_id = p.device_id\n"
    "  AND q.correlation_id = p.correlation_id AND q.ok = 0);\n"
    "DROP TABLE temp.graph_pair;\n"
    "DROP TABLE temp.graph_work;\n"
    /* a copy's or set's ranges: the one record of its call (a call split into several records
     * keeps its ranges on the call, api_id) */
    "UPDATE metric_range SET memcpy_id = (SELECT m.id FROM memcpy m WHERE m.pid = metric_range.pid\n"
    "  AND m.correlation_id = metric_range.correlation_id) WHERE metric_range.kind = 'memcpy'\n"
    "  AND (SELECT count(*) FROM memcpy m2 WHERE m2.pid = metric_range.pid AND m2.correlation_id = metric_range.correlation_id) = 1;\n"
    "UPDATE metric_range SET memset_id = (SELECT m.id FROM memset m WHERE m.pid = metric_range.pid\n"
    "  AND m.correlation_id = metric_range.correlation_id) WHERE metric_range.kind = 'memset'\n"
    "  AND (SELECT count(*) FROM memset m2 WHERE m2.pid = metric_range.pid AND m2.correlation_id = metric_range.correlation_id) = 1;\n"
    "UPDATE metric_range SET api_id = a.id FROM api_call a\n"
    "  WHERE metric_range.correlation_id != 0 AND a.pid = metric_range.pid AND a.correlation_id = metric_range.correlation_id;\n"
    "UPDATE kernel_metric SET kernel_id = r.kernel_id FROM metric_range r WHERE r.kernel_id IS NOT NULL\n"
    "  AND r.pid = kernel_metric.pid AND r.device_id = kernel_metric.device_id AND r.range_index = kernel_metric.range_index;\n"
    "CREATE INDEX kernel_metric_by_kernel ON kernel_metric(kernel_id);\n"
    "CREATE INDEX kernel_metric_by_range ON kernel_metric(pid, device_id, range_index);\n"
    /* warp stall samples likewise (a graph launch's kernels share one correlation id) */
    "UPDATE kernel_stall SET kernel_id = (SELECT k.id FROM kernel k WHERE k.pid = kernel_stall.pid\n"
    "  AND k.correlation_id = kernel_stall.correlation_id AND k.device_id = kernel_stall.device_id)\n"
    "  WHERE kernel_stall.correlation_id != 0 AND (SELECT count(*) FROM kernel k2\n"
    "  WHERE k2.pid = kernel_stall.pid AND k2.correlation_id = kernel_stall.correlation_id) = 1;\n"
    "CREATE INDEX kernel_stall_by_kernel ON kernel_stall(kernel_id);\n"
    "UPDATE sync SET api_id = a.id, tid = a.tid FROM api_call a\n"
    "  WHERE a.pid = sync.pid AND a.correlation_id = sync.correlation_id;\n"
    /* synchronisation waits from the sync API calls (captures before CUPTI sync records were
     * dropped carry their own: those processes are left as they are) */
    "INSERT INTO sync (pid, type, correlation_id, start_ns, end_ns, duration_ns, api_id, tid)\n"
    "  SELECT a.pid, CASE WHEN a.name LIKE 'cuCtxSynchronize%' THEN 'context'\n"
    "    WHEN a.name LIKE 'cuStreamSynchronize%' THEN 'stream' WHEN a.name LIKE 'cuEventSynchronize%' THEN 'event'\n"
    "    WHEN a.name LIKE 'cuStreamWaitEvent%' THEN 'stream_wait_event' ELSE 'unknown' END,\n"
    "    a.correlation_id, a.start_ns, a.end_ns, a.duration_ns, a.id, a.tid FROM api_call a\n"
    "  WHERE a.category = 'sync' AND NOT EXISTS (SELECT 1 FROM sync s WHERE s.pid = a.pid);\n"
    "INSERT INTO lost (pid, source, count, detail) SELECT pid, 'kernel_no_timestamp', count(*),\n"
    "  'kernel records without start/end (CUPTI device buffers ran out)' FROM kernel\n"
    "  WHERE has_timestamps = 0 AND pid NOT IN (SELECT pid FROM metric_config WHERE replay = 'kernel')\n"
    "  GROUP BY pid;\n" /* kernel replay: CUPTI never times replayed kernels; nothing was lost */
    /* a capture range still open when the process ended ends with it */
    "UPDATE capture_range SET end_ns = p.end_ns, duration_ns = p.end_ns - capture_range.start_ns,\n"
    "  ended_by = 'exit' FROM process p WHERE capture_range.end_ns IS NULL AND p.pid = capture_range.pid\n"
    "  AND p.end_ns IS NOT NULL;\n"
    "INSERT OR IGNORE INTO thread (pid, tid, name, name_source)\n"
    "  SELECT DISTINCT pid, tid, NULL, 'none' FROM api_call;\n";

int wl_session_writer_finish(wl_session_writer *w, char *err, size_t err_size)
{
    char complete[8];
    sqlite3_stmt *s;
    int all_complete = 0;
    if (sqlite3_prepare_v2(w->db, "SELECT count(*) > 0 AND min(complete) = 1 FROM process", -1, &s, NULL) == SQLITE_OK) {
        if (sqlite3_step(s) == SQLITE_ROW)
            all_complete = sqlite3_column_int(s, 0);
        sqlite3_finalize(s);
    }
    sqlite3_stmt *m;
    int meta_complete = 1;
    if (sqlite3_prepare_v2(w->db, "SELECT value FROM meta WHERE key = 'complete'", -1, &m, NULL) == SQLITE_OK) {
        if (sqlite3_step(m) == SQLITE_ROW && strcmp((const char *)sqlite3_column_text(m, 0), "0") == 0)
            meta_complete = 0;
        sqlite3_finalize(m);
    }
    snprintf(complete, sizeof complete, "%d", all_complete && meta_complete);
    for (int i = 0; i < S_COUNT; i++) {
        sqlite3_finalize(w->st[i]);
        w->st[i] = NULL;
    }
    if (wl_store_exec(w, LINK_SQL, err, err_size) || wl_store_exec(w, WL_FLOW_LINK_SQL, err, err_size) ||
        wl_identity_derive(w->db, err, err_size) || wl_pack_build(w->db, err, err_size) ||
        wl_session_writer_meta(w, "complete", complete) ||
        wl_store_exec(w, "DROP TABLE temp.extcorr; COMMIT; PRAGMA optimize;", err, err_size)) {
        wl_session_writer_abort(w);
        return -1;
    }
    if (sqlite3_close(w->db) != SQLITE_OK) {
        wl_store_set_err(err, err_size, "closing the session failed: %s", sqlite3_errmsg(w->db));
        w->db = NULL;
        wl_session_writer_abort(w);
        return -1;
    }
    w->db = NULL;
    if (wl_commit_tmp_path(w->tmp_path, w->final_path) != 0) {
        wl_store_set_err(err, err_size, "cannot move the session into place at %s", w->final_path);
        w->tmp_path[0] = 0;
        wl_session_writer_abort(w);
        return -1;
    }
    free(w);
    return 0;
}

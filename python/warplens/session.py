"""Sessions as tables: `warplens.open(path)` -> Session, whose tables are pandas DataFrames when pandas
is importable, else lists of dicts (one per row, the columns as keys).

    import warplens
    with warplens.open("train.wlsession") as s:
        k = s.kernels()                      # one row per launch, the CLI's derived columns included
        k.groupby("short_name").duration_ns.describe()
        s.api_calls(); s.memcpys(); s.nvtx_ranges(); s.metrics(); s.pm_samples()

How it reads: the rows come from the documented schema (docs/schema.md) through Python's sqlite3,
opened read-only; what only warplens' C side knows comes from libwarplens through ctypes
(include/warplens/reader.h): the open check (a file that is not a session, of a newer schema, or
damaged raises SessionError with the reason the CLI gives), the rows a damaged session's contract
leaves out of every reader (left out here too, so the rows are the CLI's), and per kernel launch
the columns the CLI derives on read: theoretical occupancy, its limiter, active blocks and warps per
SM, waves, tail, active SMs, warp fill, SM share, the launch call's CPU time and the backend."""
import ctypes
import math
import os
import sqlite3
import urllib.parse
import warnings

from ._find import load_library

READER_ABI = 1


class SessionError(Exception):
    """A file that cannot be read as a warplens session; the message says why (and what to do)."""


class SessionWarning(UserWarning):
    """Rows of a damaged session this package could not leave out as the CLI does."""


class _KernelDerived(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int64), ("launch_ns", ctypes.c_int64), ("app_thread_id", ctypes.c_int64),
                ("occupancy_pct", ctypes.c_double), ("waves", ctypes.c_double), ("tail_pct", ctypes.c_double),
                ("warp_fill_pct", ctypes.c_double), ("sm_share_pct", ctypes.c_double),
                ("active_blocks", ctypes.c_int32), ("active_warps", ctypes.c_int32),
                ("active_sms", ctypes.c_int32), ("smem_optin_assumed", ctypes.c_int32),
                ("limiter", ctypes.c_char * 64), ("backend", ctypes.c_char * 32)]


# the derived columns, in the order they follow the kernels view's columns
DERIVED_COLUMNS = ("operation", "shape", "op_source", "launch_ns", "app_thread_id", "backend", "occupancy_pct",
                   "limiter", "active_blocks", "active_warps", "waves", "tail_pct", "active_sms",
                   "warp_fill_pct", "sm_share_pct", "smem_optin_assumed")

_lib = None


def _reader_lib():
    global _lib
    if _lib is not None:
        return _lib
    lib = load_library()
    try:
        lib.warplens_reader_abi.restype = ctypes.c_int
    except AttributeError:
        raise SessionError("this libwarplens (%s) has no session reader: install a warplens with "
                           "include/warplens/reader.h" % lib._name) from None
    if lib.warplens_reader_abi() != READER_ABI:
        raise SessionError("libwarplens' session reader is ABI %d, this package reads ABI %d: install matching "
                           "versions of warplens and its Python package" % (lib.warplens_reader_abi(), READER_ABI))
    lib.warplens_reader_kernel_size.restype = ctypes.c_size_t
    if lib.warplens_reader_kernel_size() != ctypes.sizeof(_KernelDerived):
        raise SessionError("libwarplens' kernel row is %d bytes, this package expects %d: mismatched versions"
                           % (lib.warplens_reader_kernel_size(), ctypes.sizeof(_KernelDerived)))
    vp, cp, sz, i64 = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int64
    for name, res, args in [
            ("warplens_reader_open", vp, [cp, cp, sz]), ("warplens_reader_close", None, [vp]),
            ("warplens_reader_schema_version", ctypes.c_int, [vp]),
            ("warplens_reader_rows_left_out", i64, [vp, cp]),
            ("warplens_reader_row_fault", ctypes.c_int, [vp, cp, i64, cp, sz]),
            ("warplens_reader_kernels", ctypes.c_int, [vp, ctypes.POINTER(_KernelDerived), ctypes.c_int]),
            ("warplens_reader_error", cp, [vp])]:
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    _lib = lib
    return lib


def _pandas():
    try:
        import pandas
        return pandas
    except ImportError:
        return None


def _nan_to_none(v):
    return None if isinstance(v, float) and math.isnan(v) else v


class Session:
    """An open session (read-only). Tables: kernels, api_calls, memcpys, nvtx_ranges, metrics,
    pm_samples; each takes as_frame: None (a DataFrame when pandas is importable, else a list of
    dicts), True (DataFrame; ImportError without pandas) or False (list of dicts)."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self._lib = _reader_lib()
        self._reader = None
        self._db = None
        if not os.path.exists(self.path):
            raise SessionError("%s: no such file" % self.path)
        err = ctypes.create_string_buffer(1024)
        r = self._lib.warplens_reader_open(os.fsencode(self.path), err, len(err))
        if not r:
            raise SessionError(err.value.decode("utf-8", "replace") or "%s: cannot open" % self.path)
        self._reader = r
        try:
            uri = "file:%s?mode=ro" % urllib.parse.quote(os.path.abspath(self.path))
            self._db = sqlite3.connect(uri, uri=True)
            self._tables = {row[0] for row in self._db.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
        except sqlite3.Error as e:
            self.close()
            raise SessionError("%s: %s" % (self.path, e)) from None
        self.schema_version = self._lib.warplens_reader_schema_version(r)

    # ---- life ------------------------------------------------------------------------------------
    def close(self):
        if self._db is not None:
            self._db.close()
            self._db = None
        if self._reader:
            self._lib.warplens_reader_close(self._reader)
            self._reader = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        return "<warplens.Session %r schema %s>" % (self.path, self.schema_version)

    def _check_open(self):
        if self._db is None:
            raise SessionError("%s: the session is closed" % self.path)

    # ---- reading ---------------------------------------------------------------------------------
    def meta(self):
        """The meta table as a dict (format, schema_version, command, complete, ...)."""
        self._check_open()
        return dict(self._db.execute("SELECT key, value FROM meta"))

    def has(self, table):
        """Whether the session has this table or view (older sessions lack the newer tables)."""
        return table in self._tables

    def _left_out(self, table):
        n = self._lib.warplens_reader_rows_left_out(self._reader, table.encode())
        if n < 0:
            raise SessionError("%s: %s" % (self.path, self._lib.warplens_reader_error(self._reader).decode()))
        return n

    def _query(self, sql, checked):
        """Columns and rows of sql; `checked` names (table, rowid column alias) pairs whose rows the
        session's contract may leave out: such rows are dropped, as every C reader drops them."""
        self._check_open()
        try:
            cur = self._db.execute(sql)
            cols = [d[0] for d in cur.description]
            rows = cur.fetchall()
        except sqlite3.Error as e:
            raise SessionError("%s: %s" % (self.path, e)) from None
        damaged = [(t, cols.index(alias)) for t, alias in checked if self._left_out(t) > 0]
        if damaged:
            why = ctypes.create_string_buffer(256)
            rows = [r for r in rows if not any(
                self._lib.warplens_reader_row_fault(self._reader, t.encode(), r[i], why, len(why))
                for t, i in damaged if r[i] is not None)]
        keep = [i for i, c in enumerate(cols) if not c.startswith("__rowid_")]
        if len(keep) != len(cols):
            cols = [cols[i] for i in keep]
            rows = [tuple(r[i] for i in keep) for r in rows]
        return cols, rows

    def _table(self, cols, rows, as_frame):
        pd = _pandas() if as_frame is not False else None
        if as_frame and pd is None:
            raise ImportError("pandas is not installed: use as_frame=False for lists of dicts")
        if pd is not None:
            return pd.DataFrame.from_records(rows, columns=cols)
        return [dict(zip(cols, (_nan_to_none(v) for v in r))) for r in rows]

    def _has_rowid(self, table):
        row = self._db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
        return bool(row) and "WITHOUT ROWID" not in (row[0] or "").upper()

    def _simple(self, table, as_frame, joins="", extra="", order="id", checked_joins=()):
        if not self.has(table):
            return self._table([], [], as_frame)
        checked = [(t, a) for t, a in [(table, "t")] + list(checked_joins) if self._has_rowid(t)]
        for t in {table} | {t for t, _ in checked_joins}:
            if t not in (c for c, _ in checked) and self._left_out(t) > 0:
                warnings.warn("%s: %d rows of %s break the session's contract; the CLI leaves them out, they are "
                              "included here (a table without rowids: `warplens info --check %s` lists them)"
                              % (self.path, self._left_out(t), t, self.path), SessionWarning, stacklevel=3)
        sql = "SELECT t.*%s%s FROM %s t %s ORDER BY %s" % (
            extra, "".join(", %s.rowid AS __rowid_%s" % (a, a) for _, a in checked), table, joins, order)
        return self._table(*self._query(sql, [(t, "__rowid_" + a) for t, a in checked]), as_frame)

    def kernels(self, as_frame=None):
        """One row per kernel launch: the `kernels` view (kernel + kernel_name; `tier` empty for
        sessions made before kernel identity) with the launch's operation, shape and op_source (its
        `op`), then the columns the CLI derives on read
        (`warplens kernels --calls --json`): launch_ns, app_thread_id, backend, occupancy_pct
        (theoretical), limiter, active_blocks, active_warps, waves, tail_pct, active_sms,
        warp_fill_pct, sm_share_pct, smem_optin_assumed. NaN/None where not computable."""
        self._check_open()
        op = self.has("op")
        # sessions made before kernel identity lack kernel.tier: the column is there, empty
        tier = any(r[1] == "tier" for r in self._db.execute("PRAGMA table_info(kernels)"))
        sql = ("SELECT k.*, %s%s, k.rowid AS __rowid_k FROM kernels k %s ORDER BY k.id" %
               ("" if tier else "NULL AS tier, ", "o.name AS operation, o.shape AS shape, o.source AS op_source" if op
                else "NULL AS operation, NULL AS shape, NULL AS op_source",
                "LEFT JOIN op o ON o.id = k.op_id" if op else ""))
        cols, rows = self._query(sql, [])  # the C cursor below decides which launches are sound
        derived = {}
        batch = (_KernelDerived * 4096)()
        while True:
            n = self._lib.warplens_reader_kernels(self._reader, batch, len(batch))
            if n < 0:
                raise SessionError("%s: %s" % (self.path, self._lib.warplens_reader_error(self._reader).decode()))
            if n == 0:
                break
            for d in batch[:n]:
                derived[d.id] = (
                    None if d.launch_ns < 0 else d.launch_ns, d.app_thread_id or None,
                    d.backend.decode(), d.occupancy_pct, d.limiter.decode() or None,
                    None if d.active_blocks < 0 else d.active_blocks,
                    None if d.active_warps < 0 else d.active_warps, d.waves, d.tail_pct,
                    None if d.active_sms < 0 else d.active_sms, d.warp_fill_pct, d.sm_share_pct,
                    d.smem_optin_assumed)
        idx = cols.index("id")
        keep = [i for i, c in enumerate(cols) if c != "__rowid_k"]
        out_cols = [cols[i] for i in keep] + list(DERIVED_COLUMNS[3:])
        out = [tuple(r[i] for i in keep) + derived[r[idx]] for r in rows if r[idx] in derived]
        return self._table(out_cols, out, as_frame)

    def api_calls(self, as_frame=None):
        """CUDA driver API calls at the boundary (`api_call`: name, category, CPU time, ...)."""
        return self._simple("api_call", as_frame)

    def memcpys(self, as_frame=None):
        """Copies (`memcpy`: kind, bytes, bandwidth_gbps, stream, times, ...)."""
        return self._simple("memcpy", as_frame)

    def nvtx_ranges(self, as_frame=None):
        """NVTX push/pop and start/end ranges (`nvtx_range`)."""
        return self._simple("nvtx_range", as_frame)

    def metrics(self, as_frame=None):
        """Hardware metrics per profiled range (`run --metrics`), long form: `kernel_metric` with the
        metric's name as `metric`, its unit and metric_type, and the range's kind (kernel, memcpy,
        graph_node, ...) when the session records it. Empty without metrics."""
        if not self.has("kernel_metric") or not self.has("metric"):
            return self._table([], [], as_frame)
        rng = self.has("metric_range")
        return self._simple(
            "kernel_metric", as_frame,
            joins="JOIN metric m ON m.id = t.metric_id" + (
                " LEFT JOIN metric_range r ON r.pid = t.pid AND r.device_id = t.device_id"
                " AND r.range_index = t.range_index" if rng else ""),
            extra=", m.name AS metric, m.unit AS unit, m.metric_type AS metric_type" + (
                ", r.kind AS range_kind" if rng else ""),
            order="t.pid, t.device_id, t.range_index, t.metric_id", checked_joins=[("metric", "m")])

    def pm_samples(self, as_frame=None):
        """PM sampling windows (`run --pm-sampling`), long form: `pm_sample` with the metric's name as
        `metric`, its unit and metric_type. Empty without PM sampling."""
        if not self.has("pm_sample") or not self.has("pm_metric"):
            return self._table([], [], as_frame)
        return self._simple(
            "pm_sample", as_frame,
            joins="JOIN pm_metric m ON m.pid = t.pid AND m.device_id = t.device_id AND m.metric_index = t.metric_index",
            extra=", m.name AS metric, m.unit AS unit, m.metric_type AS metric_type",
            order="t.pid, t.device_id, t.sample_index, t.metric_index", checked_joins=[("pm_metric", "m")])


def open_session(path):
    """Opens a session read-only; SessionError when it is not one this warplens reads."""
    return Session(path)

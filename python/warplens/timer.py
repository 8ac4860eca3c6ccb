"""warplens explicit timers from Python (ctypes on libwarplens.so; include/warplens/timer.h).

    from warplens import timer
    s = torch.cuda.current_stream()            # or a cupy stream, an int handle, or None
    with timer.span("gpu_workload", stream=s):
        for c in range(8):
            with timer.gpu("kernel_chunk_%d" % c, stream=s):
                run_chunk(c)
    torch.cuda.synchronize()
    timer.print_summary()                      # to stderr

Streams: torch.cuda.Stream (its .cuda_stream), cupy streams (.ptr), plain ints or None (the default
stream). The library is found as warplens._find says: $WARPLENS_LIB, $WARPLENS_BUILD_DIR/lib, beside
the warplens CLI, or the linker path.
Without a CUDA driver/device GPU intervals are host-timed, exactly as in C.
"""
import contextlib
import ctypes
import sys

from ._find import load_library

NONE, DEFAULT, VERBOSE, DEBUG = 0, 1, 2, 3
CODEGEN, COMPILE, RUNTIME = 0, 1, 2
KINDS = ("gpu", "span", "host")
STATUSES = ("open", "pending", "done", "failed")
NAME_MAX = 96


class Interval(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * NAME_MAX), ("category", ctypes.c_int32), ("kind", ctypes.c_int32),
                ("status", ctypes.c_int32), ("host_timed", ctypes.c_int32), ("stream", ctypes.c_void_p),
                ("start_ns", ctypes.c_uint64), ("duration_ns", ctypes.c_uint64), ("tid", ctypes.c_uint64)]


class Stats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("intervals", "open", "pending", "done", "failed", "overflow",
                                               "errors", "events_created", "events_pooled", "capacity")] + \
               [("backend", ctypes.c_int32), ("verbosity", ctypes.c_int32)]


class TimerError(RuntimeError):
    pass


_lib = None


def _load():
    global _lib
    if _lib is not None:
        return _lib
    lib = load_library()
    i64, i32, vp, cp = ctypes.c_int64, ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p
    for name, res, args in [
            ("wl_timer_gpu_begin", i64, [i32, vp, cp]), ("wl_timer_gpu_end", i32, [i32, vp, cp]),
            ("wl_timer_span_begin", i64, [i32, vp, cp]), ("wl_timer_span_end", i32, [i32, vp, cp]),
            ("wl_timer_host_begin", i64, [i32, cp]), ("wl_timer_host_end", i32, [i32, cp]),
            ("wl_timer_end_id", i32, [i64]), ("wl_timer_collect", i32, []),
            ("wl_timer_set_verbosity", None, [i32]), ("wl_timer_get_verbosity", i32, []),
            ("wl_timer_category_register", i32, [cp]), ("wl_timer_category_name", cp, [i32]),
            ("wl_timer_reset", None, []), ("wl_timer_set_capacity", i32, [ctypes.c_uint64]),
            ("wl_timer_count", ctypes.c_uint64, []),
            ("wl_timer_get", i32, [ctypes.c_uint64, ctypes.POINTER(Interval)]),
            ("wl_timer_get_stats", None, [ctypes.POINTER(Stats)]), ("wl_timer_strerror", cp, [i32]),
            ("wl_timer_write_session_file", i32, [])]:
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    _lib = lib
    return lib


def stream_handle(stream):
    """The raw cudaStream_t of None, an int, a torch.cuda.Stream or a cupy stream."""
    if stream is None:
        return None
    if isinstance(stream, int):
        return stream or None
    for attr in ("cuda_stream", "ptr", "handle"):
        h = getattr(stream, attr, None)
        if isinstance(h, int):
            return h or None
    raise TypeError("not a stream: %r (expected torch/cupy stream, int or None)" % (stream,))


def _name(name):
    # names go through the C library's printf formatting: escape '%'
    return name.replace("%", "%%").encode()


def _check(rc):
    if rc < 0:
        raise TimerError(_load().wl_timer_strerror(rc).decode())
    return rc


def set_verbosity(level):
    _load().wl_timer_set_verbosity(level)


def get_verbosity():
    return _load().wl_timer_get_verbosity()


def category(name):
    """Registers (or finds) a category; returns its id."""
    return _check(_load().wl_timer_category_register(name.encode()))


def gpu_begin(name, stream=None, cat=RUNTIME):
    return _check(_load().wl_timer_gpu_begin(cat, stream_handle(stream), _name(name)))


def gpu_end(name, stream=None, cat=RUNTIME):
    return _check(_load().wl_timer_gpu_end(cat, stream_handle(stream), _name(name)))


def span_begin(name, stream=None, cat=RUNTIME):
    return _check(_load().wl_timer_span_begin(cat, stream_handle(stream), _name(name)))


def span_end(name, stream=None, cat=RUNTIME):
    return _check(_load().wl_timer_span_end(cat, stream_handle(stream), _name(name)))


def host_begin(name, cat=RUNTIME):
    return _check(_load().wl_timer_host_begin(cat, _name(name)))


def host_end(name, cat=RUNTIME):
    return _check(_load().wl_timer_host_end(cat, _name(name)))


@contextlib.contextmanager
def gpu(name, stream=None, cat=RUNTIME):
    i = gpu_begin(name, stream, cat)
    try:
        yield i
    finally:
        _check(_load().wl_timer_end_id(i))


@contextlib.contextmanager
def span(name, stream=None, cat=RUNTIME):
    i = span_begin(name, stream, cat)
    try:
        yield i
    finally:
        _check(_load().wl_timer_end_id(i))


@contextlib.contextmanager
def host(name, cat=RUNTIME):
    i = host_begin(name, cat)
    try:
        yield i
    finally:
        _check(_load().wl_timer_end_id(i))


def collect():
    """Non-blocking; returns how many ended intervals are still pending."""
    return _load().wl_timer_collect()


def intervals():
    """Every interval as a dict (collect first for fresh statuses)."""
    lib = _load()
    out = []
    iv = Interval()
    for i in range(lib.wl_timer_count()):
        if lib.wl_timer_get(i, ctypes.byref(iv)) == 0:
            out.append({"name": iv.name.decode(errors="replace"), "category": iv.category,
                        "kind": KINDS[iv.kind], "status": STATUSES[iv.status], "host_timed": bool(iv.host_timed),
                        "stream": iv.stream or 0, "start_ns": iv.start_ns, "duration_ns": iv.duration_ns,
                        "tid": iv.tid})
    return out


def stats():
    s = Stats()
    _load().wl_timer_get_stats(ctypes.byref(s))
    return {n: getattr(s, n) for n, _ in Stats._fields_}


def summary(cat=-1):
    """The summary text wl_timer_print would print (via a temporary file)."""
    import tempfile
    libc = ctypes.CDLL(None)
    libc.fopen.restype, libc.fopen.argtypes = ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_char_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    lib = _load()
    lib.wl_timer_print.restype, lib.wl_timer_print.argtypes = None, [ctypes.c_void_p, ctypes.c_int]
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as t:
        fp = libc.fopen(t.name.encode(), b"w")
        if not fp:
            raise OSError("cannot open " + t.name)
        lib.wl_timer_print(fp, cat)
        libc.fclose(fp)
        return open(t.name).read()


def print_summary(file=None, cat=-1):
    (file or sys.stderr).write(summary(cat))


def reset():
    _load().wl_timer_reset()

"""warplens from Python; pure Python, nothing to compile (libwarplens through ctypes).

- `warplens.open(path)`: a session read-only, its tables as pandas DataFrames (lists of dicts
  without pandas): kernels() with the CLI's derived columns and theoretical occupancy, api_calls(),
  memcpys(), nvtx_ranges(), metrics(), pm_samples() (`warplens.session`).
- `warplens.timer`: explicit GPU/host timers (include/warplens/timer.h).
- `warplens.inkernel`: in-kernel warp-group tracing (buffer, decode, traces).
- `python -m warplens ...`: the warplens CLI."""
from .session import DERIVED_COLUMNS, Session, SessionError, SessionWarning, open_session

__version__ = "0.1.0"
__all__ = ["open", "Session", "SessionError", "SessionWarning", "DERIVED_COLUMNS", "__version__"]


def open(path):  # noqa: A001 (warplens.open, as tarfile.open)
    """Opens a session read-only: a Session; SessionError when it is not one this warplens reads
    (not a session, a newer schema, damaged structure), with the reason."""
    return open_session(path)

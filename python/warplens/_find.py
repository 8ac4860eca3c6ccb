"""Where the warplens installation is, for the modules of this package: the CLI (`python -m warplens`,
`inkernel.Profiler.write_trace`) and libwarplens (timers, the session reader, through ctypes).

The CLI: $WARPLENS_BIN, else `warplens` on PATH, else the build tree of the checkout this package
sits in (python/warplens/ beside build/bin/warplens). libwarplens: $WARPLENS_LIB,
$WARPLENS_BUILD_DIR/lib, the library directory beside the CLI found above (<prefix>/bin/warplens
and <prefix>/lib*/libwarplens.so), then the dynamic linker's search path."""
import ctypes
import ctypes.util
import os
import shutil
import sysconfig

LIBRARY = "libwarplens.so"


def _checkout_root():
    """The source checkout this package is imported from (python/warplens/ in it), or None."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    if os.path.basename(os.path.dirname(here)) == "python" and os.path.isfile(os.path.join(root, "CMakeLists.txt")):
        return root
    return None


def find_cli():
    """Path of the warplens CLI, or None."""
    env = os.environ.get("WARPLENS_BIN")
    if env and os.access(env, os.X_OK):
        return env
    found = shutil.which("warplens")
    if found:
        return found
    root = _checkout_root()
    if root:
        cand = os.path.join(root, "build", "bin", "warplens")
        if os.access(cand, os.X_OK):
            return cand
    return None


def library_candidates():
    """Paths (or bare names for the dynamic linker) to try for libwarplens, in order."""
    cands = []
    if os.environ.get("WARPLENS_LIB"):
        cands.append(os.environ["WARPLENS_LIB"])
    if os.environ.get("WARPLENS_BUILD_DIR"):
        cands.append(os.path.join(os.environ["WARPLENS_BUILD_DIR"], "lib", LIBRARY))
    cli = find_cli()
    if cli:
        prefix = os.path.dirname(os.path.dirname(os.path.realpath(cli)))
        multiarch = sysconfig.get_config_var("MULTIARCH") or ""
        for libdir in ("lib", "lib64", os.path.join("lib", multiarch) if multiarch else None):
            if libdir:
                cands.append(os.path.join(prefix, libdir, LIBRARY))
    cands.append(ctypes.util.find_library("warplens") or "")
    cands.append(LIBRARY)
    return [c for c in cands if c]


def load_library():
    """libwarplens as a ctypes.CDLL; OSError naming what was tried when none loads."""
    errors = []
    for cand in library_candidates():
        if os.path.sep in cand and not os.path.exists(cand):
            continue
        try:
            return ctypes.CDLL(cand)
        except OSError as e:
            errors.append("%s: %s" % (cand, e))
    raise OSError("libwarplens.so not found (install warplens with `cmake --install`, put its bin/ on PATH "
                  "or set WARPLENS_LIB)%s" % ((": " + "; ".join(errors)) if errors else ""))

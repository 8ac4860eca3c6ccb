"""`warplens run --torch-ops`: PyTorch's own operator ranges for an unchanged script.

`warplens run --torch-ops` puts this file's folder first on PYTHONPATH and sets
WARPLENS_TORCH_OPS=1, so Python runs it at start-up (the `site` module imports the first
`sitecustomize` it finds). It then waits for the program to import torch, and as soon as torch is
imported turns on torch.autograd.profiler.emit_nvtx(record_shapes=True) for the rest of the
process: every operator call pushes an NVTX range "aten::addmm, seq = N, op_id = N, sizes = [...]"
on its thread (autograd's backward thread gets the backward operators), which the recorder
records and `warplens` turns into each kernel's operation and input shapes.

It never imports torch itself, never initialises CUDA (emit_nvtx's entry synchronises the GPU
for nvprof's sake; that call is skipped), runs the `sitecustomize` it shadows, and if anything
fails it says so in one line and the program runs as it would have.
"""
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_kept = []  # the entered emit_nvtx, alive for the process's life


def _say(msg):
    try:
        sys.stderr.write("warplens: --torch-ops: %s\n" % msg)
    except Exception:
        pass


def _enable(torch):
    try:
        prof = torch.autograd.profiler.emit_nvtx(record_shapes=True)
        sync = torch.cuda.synchronize
        torch.cuda.synchronize = lambda *args, **kwargs: None
        try:
            prof.__enter__()
        finally:
            torch.cuda.synchronize = sync
        _kept.append(prof)
    except Exception as e:  # an old or unusual torch: the run goes on without operator ranges
        _say("cannot turn on PyTorch's NVTX operator ranges (%s: %s); kernels keep the NVTX ranges and "
             "scopes the program opens as their operation" % (type(e).__name__, e))


class _AfterTorchImport(importlib.abc.MetaPathFinder):
    """Finds torch with the other finders and wraps its loader: _enable runs once torch's own
    __init__ has run."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        try:
            sys.meta_path.remove(self)  # once: torch is imported once
        except ValueError:
            pass
        spec = None
        for finder in list(sys.meta_path):  # the finders Python would have asked, in order
            find = getattr(finder, "find_spec", None)
            if find is not None:
                spec = find(name, path, target)
                if spec is not None:
                    break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _enable(module)

        spec.loader.exec_module = exec_module
        return spec


def _chain():
    """Runs the sitecustomize this one shadows (a distribution's or a virtual environment's)."""
    for entry in sys.path:
        try:
            if not entry or os.path.abspath(entry) == _HERE:
                continue
            spec = importlib.machinery.PathFinder.find_spec("sitecustomize", [entry])
            if spec is None or spec.origin is None or os.path.dirname(os.path.abspath(spec.origin)) == _HERE:
                continue
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return
        except Exception as e:
            _say("the program's own sitecustomize failed: %s: %s" % (type(e).__name__, e))
            return


_chain()
if os.environ.get("WARPLENS_TORCH_OPS") == "1":
    if "torch" in sys.modules:
        _enable(sys.modules["torch"])
    else:
        sys.meta_path.insert(0, _AfterTorchImport())

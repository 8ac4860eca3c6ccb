"""A stand-in for the torch package (tests/cli/test_torch_ops_cli.sh): just what
`warplens run --torch-ops`' start-up hook touches - torch.autograd.profiler.emit_nvtx, whose entry
calls torch.cuda.synchronize() as PyTorch's does, and torch.cuda.synchronize - each logging its
calls to $STUB_TORCH_LOG."""
import os
import sys


def _log(line):
    with open(os.environ["STUB_TORCH_LOG"], "a") as f:
        f.write(line + "\n")


class _Cuda:
    @staticmethod
    def synchronize(*args, **kwargs):
        _log("cuda.synchronize")


class _EmitNvtx:
    def __init__(self, enabled=True, record_shapes=False):
        if os.environ.get("STUB_TORCH_BROKEN"):
            raise RuntimeError("this torch has no NVTX")
        self.record_shapes = record_shapes

    def __enter__(self):
        sys.modules["torch"].cuda.synchronize()  # what emit_nvtx.__enter__ does first
        _log("emit_nvtx enter record_shapes=%s thread=%s" % (self.record_shapes, __import__("threading").current_thread().name))
        return self

    def __exit__(self, *exc):
        _log("emit_nvtx exit")
        return False


class _Profiler:
    emit_nvtx = _EmitNvtx


class _Autograd:
    profiler = _Profiler


cuda = _Cuda()
autograd = _Autograd()
_log("torch imported")

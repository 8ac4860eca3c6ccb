#!/usr/bin/env bash
# `warplens run --torch-ops` without a GPU or PyTorch: the start-up hook it installs
# (python/torch_ops/sitecustomize.py) on a stand-in torch package (tests/torch_ops/stub) and an
# unchanged script (tests/torch_ops/prog.py):
#  - when the script imports torch, emit_nvtx(record_shapes=True) is entered once, on the
#    importing thread, without the GPU synchronisation its entry makes (that would initialise
#    CUDA inside `import torch`); nothing happens before, and a script that never imports torch
#    never gets torch imported;
#  - without WARPLENS_TORCH_OPS=1 the hook does nothing; the sitecustomize it shadows still runs;
#  - a torch whose emit_nvtx fails: one line, the script runs on with its own exit status;
#  - through `warplens run --torch-ops` itself (with a stand-in libcuda.so.1 so that the run takes
#    the recording path): PYTHONPATH gets the hook first, the environment's own entries after,
#    the program's output and status are its own; option errors.
# How kernels are tied to the operator ranges is tests/test_kernel_identity.c; the real thing is
# the GPU suite's torch-ops step.
set -u
W=${WARPLENS_BIN:?}
SRC=${WARPLENS_SOURCE_DIR:?}
BUILD=${WARPLENS_BUILD_DIR:?}
. "$SRC/tests/cli/checks.sh"
HOOK=$BUILD/lib/warplens-python
STUB=$SRC/tests/torch_ops/stub
PROG=$SRC/tests/torch_ops/prog.py
PREV=$SRC/tests/torch_ops/previous
[ -f "$HOOK/sitecustomize.py" ] || { echo "FAIL: $HOOK/sitecustomize.py was not built"; exit 1; }
export STUB_TORCH_LOG=$PWD/torch.log

py() { # ENV... -- runs the script with the hook first on the path
    rm -f torch.log
    env -u WARPLENS_TORCH_OPS -u STUB_TORCH_BROKEN "$@" python3 "$PROG" >out.txt 2>err.txt
}

py WARPLENS_TORCH_OPS=1 PYTHONPATH="$HOOK:$STUB:$PREV"
check "[ $? = 0 ]" "script with the hook failed: $(cat err.txt)"
check "[ \"\$(cat torch.log)\" = \"torch imported
emit_nvtx enter record_shapes=True thread=MainThread\" ]" "emit_nvtx not entered once after the import: $(cat torch.log)"
check "grep -qx 'torch before import: False' out.txt && grep -qx 'torch imported: torch' out.txt" \
    "the script saw something else: $(cat out.txt)"
check "grep -qx 'previous sitecustomize ran' err.txt && [ \"\$(wc -l <err.txt)\" = 1 ]" \
    "the shadowed sitecustomize did not run, or the hook spoke: $(cat err.txt)"

py WARPLENS_TORCH_OPS=1 PYTHONPATH="$HOOK:$STUB"
check "[ $? = 0 ] && [ ! -s err.txt ]" "hook alone: $(cat err.txt)"

py PYTHONPATH="$HOOK:$STUB:$PREV"
check "[ $? = 0 ] && [ \"\$(cat torch.log)\" = 'torch imported' ] && grep -q 'previous sitecustomize' err.txt" \
    "without WARPLENS_TORCH_OPS the hook must only chain: $(cat torch.log)"

rm -f torch.log
env WARPLENS_TORCH_OPS=1 PYTHONPATH="$HOOK:$STUB" python3 "$PROG" no-torch 5 >out.txt 2>err.txt
rc=$?
check "[ $rc = 5 ] && [ ! -e torch.log ] && grep -qx 'torch at exit: False' out.txt" \
    "a script without torch got torch imported (or lost its status $rc): $(cat out.txt)"

py WARPLENS_TORCH_OPS=1 STUB_TORCH_BROKEN=1 PYTHONPATH="$HOOK:$STUB"
check "[ $? = 0 ] && [ \"\$(grep -c 'warplens: --torch-ops: cannot turn on' err.txt)\" = 1 ] && grep -qx 'torch imported: torch' out.txt" \
    "a torch without emit_nvtx: $(cat err.txt)"

# torch already imported when the hook runs (a sitecustomize earlier on the path imported it)
mkdir -p early && printf 'import torch\n' >early/sitecustomize.py
rm -f torch.log
env WARPLENS_TORCH_OPS=1 PYTHONPATH="$HOOK:early:$STUB" python3 "$PROG" >out.txt 2>err.txt
check "[ $? = 0 ] && [ \"\$(grep -c 'emit_nvtx enter record_shapes=True' torch.log)\" = 1 ]" \
    "torch imported before the hook: $(cat torch.log; cat err.txt)"

# through warplens run, on a machine with "a driver" (a stand-in libcuda.so.1)
FAKE=$BUILD/fakecuda
[ -e "$FAKE/libcuda.so.1" ] || { echo "FAIL: $FAKE/libcuda.so.1 was not built"; exit 1; }
rm -f torch.log
env -u WARPLENS_TORCH_OPS LD_LIBRARY_PATH="$FAKE" PYTHONPATH="$STUB:$PREV" \
    "$W" run --torch-ops -- python3 "$PROG" torch 7 >out.txt 2>err.txt
rc=$?
check "[ $rc = 7 ]" "warplens run --torch-ops: the program's status 7 became $rc: $(cat err.txt)"
check "[ \"\$(grep -c 'emit_nvtx enter record_shapes=True' torch.log)\" = 1 ] && ! grep -q synchronize torch.log" \
    "warplens run --torch-ops did not turn the ranges on: $(cat torch.log; cat err.txt)"
check "grep -q 'previous sitecustomize ran' err.txt && grep -qx 'torch imported: torch' out.txt" \
    "warplens run --torch-ops changed the program's environment: $(cat err.txt; cat out.txt)"
# without --torch-ops the same run leaves PyTorch alone (an outer WARPLENS_TORCH_OPS does not leak in)
rm -f torch.log
env WARPLENS_TORCH_OPS=1 LD_LIBRARY_PATH="$FAKE" PYTHONPATH="$HOOK:$STUB" "$W" run -- python3 "$PROG" >out.txt 2>err.txt
check "[ $? = 0 ] && [ \"\$(cat torch.log)\" = 'torch imported' ]" "a run without --torch-ops entered emit_nvtx: $(cat torch.log)"
"$W" run --torch-ops --record kernels,api -- true >out.txt 2>err.txt
check "[ $? = 2 ] && grep -q 'needs nvtx and api' err.txt" "--torch-ops without nvtx: $(cat err.txt)"
"$W" run --help >out.txt
check "grep -q -- '--torch-ops' out.txt" "--torch-ops is not in run --help"

summary torch_ops_cli

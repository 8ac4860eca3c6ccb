#!/usr/bin/env bash
# Checks that include/warplens/device.cuh compiles out completely: a probe kernel built with
# -DWARPLENS_INKERNEL=0 must have no %globaltimer read and no fence, and the very same PTX and
# machine code bytes as the kernel without any instrumentation; built with it on, the timer reads
# must be there. With cuobjdump installed, the SASS is also grepped for GLOBALTIMER reads
# (S2UR/CS2R/S2R). Also compiles the header with NVRTC (no host includes allowed).
# Needs nvcc (and readelf), no GPU. Prints "device_header_sass: N passed, M failed".
# usage: check_sass_disabled.sh [arch, default sm_90]
set -u
ARCH=${1:-sm_90}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
CUDA_HOME=${CUDA_HOME:-$(cd "$(dirname "$NVCC")/.." && pwd)}
CUOBJDUMP=${CUOBJDUMP:-$CUDA_HOME/bin/cuobjdump}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "PASS: $*"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

cat >"$tmp/probe.cu" <<'CU'
#include "warplens/device.cuh"
__global__ void probe(float *x, int n, warplens_ik_args ik)
{
#ifndef REFERENCE
    warplens_ik_lane lane;
    WARPLENS_IK_INIT(lane, ik, threadIdx.x / 128, threadIdx.x % 128 == 0);
    warplens_ik_begin(&lane, 1);
#endif
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        x[i] *= 2.0f;
#ifndef REFERENCE
    {
        WARPLENS_IK_SCOPE(lane, 3);
        x[threadIdx.x] += 1.0f;
    }
    WARPLENS_IK_INSTANT(lane, 2);
    WARPLENS_IK_BEGIN(lane, 2000); /* bad id: counted on the device */
    warplens_ik_end(&lane, 1);
    WARPLENS_IK_FINALIZE(lane);
#else
    x[threadIdx.x] += 1.0f;
#endif
}
CU

build() { # build NAME FLAGS...: NAME.cubin and NAME.ptx
    local name=$1; shift
    "$NVCC" -arch="$ARCH" -cubin -I"$src/include" "$@" -o "$tmp/$name.cubin" "$tmp/probe.cu" 2>"$tmp/nvcc.err" &&
        "$NVCC" -arch="$ARCH" -ptx -I"$src/include" "$@" -o "$tmp/$name.ptx" "$tmp/probe.cu" 2>>"$tmp/nvcc.err" ||
        { cat "$tmp/nvcc.err"; return 1; }
}
# text NAME: the bytes of the cubin's .text.* sections (the kernels' machine code), via readelf
text() {
    : >"$tmp/$1.text"
    readelf -S -W "$tmp/$1.cubin" 2>/dev/null | sed -n 's/.*\] \(\.text\.[^ ]*\) *[A-Z]* *[0-9a-f]* \([0-9a-f]*\) \([0-9a-f]*\).*/\2 \3/p' |
        while read -r off size; do
            dd if="$tmp/$1.cubin" bs=1 skip=$((16#$off)) count=$((16#$size)) status=none >>"$tmp/$1.text"
        done
}
# ptx NAME: instructions only (no comments, no version/target header)
ptx_body() { grep -v -E '^\s*//|^\s*\.(version|target|address_size)' "$tmp/$1.ptx"; }

if build on -DWARPLENS_INKERNEL=1; then ok "compiles with WARPLENS_INKERNEL=1"; else bad "compile on"; fi
if build off -DWARPLENS_INKERNEL=0; then ok "compiles with WARPLENS_INKERNEL=0"; else bad "compile off"; fi
if build ref -DREFERENCE; then ok "reference (uninstrumented) kernel compiles"; else bad "compile reference"; fi

# PTX: timer reads and fences present only when enabled; disabled == uninstrumented.
n_on=$(grep -c 'globaltimer_lo' "$tmp/on.ptx")
if [ "$n_on" -ge 4 ] && grep -q 'membar.cta' "$tmp/on.ptx"; then
    ok "enabled PTX: $n_on %globaltimer_lo reads and membar.cta"
else
    bad "enabled PTX: $n_on timer reads"
fi
if ! grep -Eq 'globaltimer|membar|%clock' "$tmp/off.ptx"; then
    ok "disabled PTX: no timer read, no fence"
else
    bad "disabled PTX has: $(grep -E 'globaltimer|membar' "$tmp/off.ptx" | head -3)"
fi
if diff -q <(ptx_body off) <(ptx_body ref) >/dev/null; then
    ok "disabled PTX identical to the uninstrumented kernel"
else
    bad "disabled PTX differs from the uninstrumented kernel"
    diff <(ptx_body off) <(ptx_body ref) | head -10
fi

# Machine code: identical bytes prove there is nothing left, with or without a disassembler.
text on
text off
text ref
if [ -s "$tmp/off.text" ] && cmp -s "$tmp/off.text" "$tmp/ref.text"; then
    ok "disabled machine code byte-identical to the uninstrumented kernel ($(wc -c <"$tmp/off.text") bytes)"
else
    bad "disabled machine code differs from the uninstrumented kernel (or no .text found)"
fi
if ! cmp -s "$tmp/on.text" "$tmp/off.text"; then ok "enabled machine code differs"; else bad "enabled == disabled"; fi

# SASS, where a disassembler is installed (the CPU machines' CUDA has none; the GPU machine may).
if [ -x "$CUOBJDUMP" ] || command -v cuobjdump >/dev/null; then
    [ -x "$CUOBJDUMP" ] || CUOBJDUMP=$(command -v cuobjdump)
    for v in on off; do
        "$CUOBJDUMP" -sass "$tmp/$v.cubin" >"$tmp/$v.sass" 2>/dev/null
    done
    if grep -Eq '(S2UR|CS2R|S2R).*GLOBALTIMER' "$tmp/on.sass"; then
        ok "enabled SASS reads GLOBALTIMER"
    else
        bad "enabled SASS: no GLOBALTIMER read"
    fi
    if ! grep -Eq 'GLOBALTIMER|SR_CLOCK' "$tmp/off.sass"; then
        ok "disabled SASS: no GLOBALTIMER / clock read (S2UR/CS2R/S2R)"
    else
        bad "disabled SASS reads a timer: $(grep -E 'GLOBALTIMER|SR_CLOCK' "$tmp/off.sass" | head -2)"
    fi
else
    echo "NOTE: cuobjdump not installed: SASS text not inspected (byte comparison above covers it)"
fi

# NVRTC: the header must compile with no host headers available.
if [ -f "$CUDA_HOME/include/nvrtc.h" ] && command -v gcc >/dev/null; then
    cat >"$tmp/rtc.c" <<'C'
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static char *slurp(const char *p)
{
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = calloc(1, (size_t)n + 1);
    if (fread(b, 1, (size_t)n, f) != (size_t)n) { fclose(f); free(b); return NULL; }
    fclose(f);
    return b;
}
int main(int argc, char **argv)
{
    char *hdr = slurp(argv[1]), *src = slurp(argv[2]);
    if (!hdr || !src) return 2;
    const char *names[] = {"warplens/device.cuh"};
    const char *heads[] = {hdr};
    nvrtcProgram p;
    if (nvrtcCreateProgram(&p, src, "probe.cu", 1, heads, names) != NVRTC_SUCCESS) return 2;
    const char *opts[] = {"--gpu-architecture=compute_90", argv[3]};
    nvrtcResult r = nvrtcCompileProgram(p, 2, opts);
    size_t n;
    nvrtcGetProgramLogSize(p, &n);
    char *log = malloc(n + 1);
    nvrtcGetProgramLog(p, log);
    if (r != NVRTC_SUCCESS) { fprintf(stderr, "%s\n", log); return 1; }
    nvrtcGetPTXSize(p, &n);
    char *ptx = malloc(n + 1);
    nvrtcGetPTX(p, ptx);
    fputs(ptx, stdout);
    return 0;
}
C
    if gcc -I"$CUDA_HOME/include" "$tmp/rtc.c" -L"$CUDA_HOME/lib64" -lnvrtc -Wl,-rpath,"$CUDA_HOME/lib64" \
        -o "$tmp/rtc" 2>"$tmp/gcc.err"; then
        if "$tmp/rtc" "$src/include/warplens/device.cuh" "$tmp/probe.cu" -DWARPLENS_INKERNEL=1 >"$tmp/on.ptx" 2>"$tmp/rtc.err" &&
            grep -q globaltimer_lo "$tmp/on.ptx"; then
            ok "NVRTC compiles the header (timer in PTX)"
        else
            bad "NVRTC on: $(head -5 "$tmp/rtc.err")"
        fi
        if "$tmp/rtc" "$src/include/warplens/device.cuh" "$tmp/probe.cu" -DWARPLENS_INKERNEL=0 >"$tmp/off.ptx" 2>"$tmp/rtc.err" &&
            ! grep -q globaltimer "$tmp/off.ptx"; then
            ok "NVRTC with WARPLENS_INKERNEL=0: no timer in PTX"
        else
            bad "NVRTC off: $(head -5 "$tmp/rtc.err")"
        fi
    else
        echo "SKIP: cannot build the NVRTC probe: $(head -1 "$tmp/gcc.err")"
    fi
else
    echo "SKIP: nvrtc.h not found: NVRTC check skipped"
fi

echo "device_header_sass: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

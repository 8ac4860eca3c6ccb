/* Kernel backend rules (see kernel_backend.h). */
#include "analysis/kernel_backend.h"

#include <ctype.h>
#include <stddef.h>
#include <string.h>

static int has_ci(const char *s, const char *needle)
{
    if (!s)
        return 0;
    size_t n = strlen(needle);
    for (; *s; s++) {
        size_t i = 0;
        while (i < n && s[i] && tolower((unsigned char)s[i]) == needle[i])
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

static int starts(const char *s, const char *prefix) { return s && !strncmp(s, prefix, strlen(prefix)); }

/* "sm80_", "sm_90a_", ...: an architecture-tagged kernel family; returns what follows, or NULL. */
static const char *after_sm(const char *s)
{
    if (!starts(s, "sm"))
        return NULL;
    s += 2;
    if (*s == '_')
        s++;
    if (!isdigit((unsigned char)*s))
        return NULL;
    while (isalnum((unsigned char)*s))
        s++;
    return *s == '_' ? s + 1 : NULL;
}

/* The function's namespace-qualified name (a full name may still start with its return type). */
static const char *function(const char *name)
{
    const char *s = name ? name : "";
    return starts(s, "void ") ? s + 5 : s;
}

static int in_namespace(const char *f, const char *ns)
{
    size_t n = strlen(ns);
    for (const char *p = f; (p = strstr(p, ns)); p += n)
        if (p == f || p[-1] == ':' || p[-1] == ' ')
            return 1;
    return 0;
}

const char *wl_kernel_backend(const char *short_name, const char *demangled, const char *mangled)
{
    const char *names[3] = {short_name, demangled, mangled};
    const char *f = function(short_name && short_name[0] ? short_name : demangled && demangled[0] ? demangled : mangled);
    int any_cudnn = 0, any_cublaslt = 0, any_cublas = 0, any_cutlass = 0, any_nccl = 0;
    for (int i = 0; i < 3; i++) {
        any_cudnn |= has_ci(names[i], "cudnn");
        any_cublaslt |= has_ci(names[i], "cublaslt");
        any_cublas |= has_ci(names[i], "cublas");
        any_cutlass |= has_ci(names[i], "cutlass");
        any_nccl |= has_ci(names[i], "nccl");
    }
    const char *fam = after_sm(f);
    if (any_cudnn || (fam && starts(fam, "xmma_") &&
                      (starts(fam + 5, "fprop") || starts(fam + 5, "dgrad") || starts(fam + 5, "wgrad"))))
        return "cuDNN";
    if (any_cublaslt || starts(f, "nvjet_"))
        return "cuBLASLt";
    int gemm_family = (fam || starts(f, "ampere_") || starts(f, "volta_") || starts(f, "turing_") ||
                       starts(f, "maxwell_") || starts(f, "hopper_")) && strstr(f, "gemm");
    if (any_cublas || gemm_family || starts(f, "gemv") || starts(f, "gemmk1_") || starts(f, "gemmSN_") ||
        starts(f, "splitKreduce_"))
        return "cuBLAS";
    if (any_cutlass)
        return "CUTLASS";
    if (any_nccl)
        return "NCCL";
    if (starts(f, "triton_"))
        return "Triton";
    if (in_namespace(f, "thrust::") || in_namespace(f, "cub::"))
        return "Thrust/CUB";
    if (starts(f, "at::") || starts(f, "c10::") || starts(f, "pytorch_flash::") || starts(f, "caffe2::") ||
        starts(f, "torch::") || starts(f, "at_cuda_detail::"))
        return "PyTorch native";
    return "user code";
}
